// The layer's configuration: ZCOLL_* environment variables over an optional config file
// (ZCOLL_CONFIG=path, lines "key = value" with the same keys, lower case, without the
// ZCOLL_ prefix). Parsing never prints; the first problem is returned as text and the
// caller (layer.cc) says it once on rank 0 and keeps the layer off.
#pragma once
#include <cstdint>
#include <string>

#include "zcoll.h"

namespace zcoll_pmpi {

// Which communicators compress without being asked through MPI_Comm_set_info.
enum class CommScope { kWorld, kAll, kHinted };

struct Settings {
  bool configured = false;   // some ZCOLL_ setting of the layer was given (env or file)
  bool compress = false;     // ZCOLL_EB given: MPI_COMM_WORLD (or every communicator) opts in
  zcoll_config cfg{};        // codec, eb, eb_mode, min_bytes, threads
  unsigned ops = 0;          // bit per zcoll_collective
  CommScope comms = CommScope::kWorld;
  std::string report;        // "" off, "stdout", or a file path
};

// Fills *s from the environment (and the file it names). Returns "" or the first problem,
// e.g. "ZCOLL_EB_MODE=relative: expected abs or rel".
std::string read_settings(Settings* s);

// Parses a bound mode "abs"/"rel" or a bound (positive finite number); false if malformed.
bool parse_eb_mode(const std::string& v, int* mode);
bool parse_eb(const std::string& v, double* eb);

// The collective named like zcoll_collective_name(), or -1.
int collective_from_name(const std::string& name);

// A digest of the settings that must be the same on every rank (all of them).
uint64_t settings_digest(const Settings& s);

}  // namespace zcoll_pmpi
