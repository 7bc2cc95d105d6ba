// AUTO's warm start from a file (tuning_file.h).
#include "coll/tuning_file.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>
#include <unistd.h>

#include "coll/cost_model.h"
#include "common/comm.h"
#include "common/fnv.h"

namespace zcoll::coll {
namespace {

// Bump with any change to what a record means; sizeof(ModelState) is in the key as well.
constexpr uint64_t kFormat = 7;
constexpr char kMagic[8] = {'z', 'c', 'o', 'l', 'l', 'T', 'U', 'N'};
// A file larger than this is not a tuning file zcoll wrote (a record is about 180 KB).
constexpr long kMaxFileBytes = 64l << 20;
// The most records a file keeps (about 11.6 MB): a job that frees communicators of many shapes
// drops the least recently written, rather than growing the file past kMaxFileBytes, where
// every record would be lost at once.
constexpr size_t kMaxRecords = 64;
static_assert(kMaxRecords * (sizeof(ModelState) + 4096) < kMaxFileBytes, "a full file must still be read");
static_assert(std::is_trivially_copyable_v<ModelState>, "records are the state's bytes");

uint64_t checksum(const std::vector<uint8_t>& state, uint64_t key) {
  Fnv1a h;
  h.add(key);
  h.bytes(state.data(), state.size());
  return h.h;
}

void put64(std::vector<uint8_t>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
uint64_t get64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | p[i];
  return v;
}

std::vector<uint8_t> read_file(const char* path) {
  std::vector<uint8_t> bytes;
  FILE* f = std::fopen(path, "rb");
  if (!f) return bytes;
  if (std::fseek(f, 0, SEEK_END) == 0) {
    const long n = std::ftell(f);
    if (n > 0 && n <= kMaxFileBytes && std::fseek(f, 0, SEEK_SET) == 0) {
      bytes.resize(static_cast<size_t>(n));
      if (std::fread(bytes.data(), 1, bytes.size(), f) != bytes.size()) bytes.clear();
    }
  }
  std::fclose(f);
  return bytes;
}

// How far apart two link figures are: the ratio of their bandwidths (latency is left out:
// a ping-pong's few microseconds vary more than that between runs). Infinite where one
// link is known and the other not.
double link_distance(const Link& now, const Link& then) {
  if (!(now.beta > 0) || !(then.beta > 0)) return now.beta == then.beta ? 1 : INFINITY;
  return std::max(now.beta, then.beta) / std::min(now.beta, then.beta);
}

// How far a record is from this key and the network the model measured now: its links'
// distance, infinite for another key. Within 2x it is the same network. A key may have a
// record per network (a job run on partitions of different links).
double distance(const TuningRecord& r, uint64_t key, const ModelState& now) {
  if (r.key != key || r.state.size() != sizeof(ModelState)) return INFINITY;
  Link then[2];
  std::memcpy(then, r.state.data() + offsetof(ModelState, intra), sizeof(Link));
  std::memcpy(then + 1, r.state.data() + offsetof(ModelState, inter), sizeof(Link));
  return std::max(link_distance(now.intra, then[0]), link_distance(now.inter, then[1]));
}
constexpr double kSameNetwork = 2;

}  // namespace

uint64_t tuning_key(const zcoll_comm_s& c) {
  Fnv1a h;
  h.add(kFormat);
  h.add(sizeof(ModelState));
  h.add(c.size);
  h.add(c.topo.nodes);
  h.add(c.topo.node_size);
  h.add(c.topo.regular);
  for (int n : c.topo.node_of) h.add(n);
  const zcoll_config& g = c.cfg;
  h.add(g.codec.codec);
  h.add(g.codec.eb_mode);
  h.add(g.codec.eb);
  h.add(g.codec.chunk_len ? g.codec.chunk_len : size_t{ZCOLL_DEFAULT_CHUNK_LEN});
  h.add(g.codec.threads);  // this rank's: rank 0's is the one that counts
  h.add(g.min_bytes);
  h.add(g.algorithm);
  h.add(g.algorithms);
  h.add(g.reduction);
  h.add(g.bound_target);
  h.add(g.decision);
  h.add(g.link_gbps);
  h.add(g.link_latency_us);
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  if (MPI_Get_library_version(version, &len) == MPI_SUCCESS)
    h.bytes(version, static_cast<size_t>(std::clamp(len, 0, MPI_MAX_LIBRARY_VERSION_STRING)));
  return h.h;
}

// A record: magic, key, state bytes, checksum (of key and state), then the state.
std::vector<uint8_t> format_tuning(const std::vector<TuningRecord>& records) {
  std::vector<uint8_t> out;
  for (const TuningRecord& r : records) {
    out.insert(out.end(), kMagic, kMagic + sizeof kMagic);
    put64(out, r.key);
    put64(out, r.state.size());
    put64(out, checksum(r.state, r.key));
    out.insert(out.end(), r.state.begin(), r.state.end());
  }
  return out;
}

std::vector<TuningRecord> parse_tuning(const std::vector<uint8_t>& bytes) {
  std::vector<TuningRecord> records;
  constexpr size_t kHeader = sizeof kMagic + 3 * 8;
  size_t at = 0;
  while (bytes.size() - at >= kHeader) {
    const uint8_t* p = bytes.data() + at;
    if (std::memcmp(p, kMagic, sizeof kMagic) != 0) break;
    TuningRecord r;
    r.key = get64(p + 8);
    const uint64_t n = get64(p + 16), sum = get64(p + 24);
    if (n > bytes.size() - at - kHeader) break;
    r.state.assign(p + kHeader, p + kHeader + n);
    if (checksum(r.state, r.key) != sum) break;
    records.push_back(std::move(r));
    at += kHeader + n;
  }
  return records;
}

void forget_calls_in_flight(ModelState& s) {
  s.last_collective = -1;
  s.last_time = s.last_overhead = 0;
  s.last_deferred = false;
  s.recheck_bar = 0;
  s.recheck_cold = s.last_warm = false;
  for (auto& per_collective : s.confirm)
    for (int& k : per_collective) k = 0;
  for (auto& per_collective : s.judge_again)
    for (bool& k : per_collective) k = false;
  // A plain stretch starts anew: its periodic agreements (the 4th, 8th, 16th call) check
  // plain MPI's figures in this run's conditions.
  for (auto& per_collective : s.fast_calls)
    for (int& k : per_collective) k = 0;
  for (auto& per_collective : s.fast_seen_n)
    for (int& k : per_collective) k = 0;
  for (auto& per_collective : s.stretch_after)
    for (int& k : per_collective) k = 0;
  s.fast_collective = -1;
  s.fast_model = 0;
  // Rank 0's share of the range: another rank's values are not its.
  for (auto& per_collective : s.own_range)
    for (auto& r : per_collective) {
      r[0] = INFINITY;
      r[1] = -INFINITY;
    }
  for (ModelState::Verdict& v : s.verdict) v = ModelState::Verdict{};
  ++s.epoch;
}

int load_tuning(zcoll_comm_s& c) {
  if (!c.model) return ZCOLL_SUCCESS;
  ModelState& s = *c.model;
  // This run's agreed thread count, not the one of the run that wrote the record (the key
  // holds rank 0's setting only).
  const int threads = s.codec_threads;
  int found = 0;
  if (c.rank == 0) {
    const char* path = std::getenv("ZCOLL_TUNING_FILE");
    try {
      if (path && *path) {
        c.tuning_file = path;
        const uint64_t key = tuning_key(c);
        const std::vector<TuningRecord> records = parse_tuning(read_file(path));
        const TuningRecord* best = nullptr;
        double nearest = kSameNetwork;
        for (const TuningRecord& r : records)
          if (const double d = distance(r, key, s); d <= nearest) {
            best = &r;
            nearest = d;
          }
        if (best) {
          std::memcpy(static_cast<void*>(&s), best->state.data(), sizeof(ModelState));
          found = 1;
        }
      }
    } catch (...) {  // out of memory reading the file: the others are waiting below, start cold
      found = 0;
    }
  }
  // Every rank's model becomes rank 0's, received straight into it.
  if (c.size > 1 && MPI_Bcast(&found, 1, MPI_INT, 0, c.comm) != MPI_SUCCESS) return ZCOLL_ERR_MPI;
  if (!found) return ZCOLL_SUCCESS;
  if (c.size > 1 &&
      MPI_Bcast(static_cast<void*>(&s), static_cast<int>(sizeof(ModelState)), MPI_BYTE, 0, c.comm) != MPI_SUCCESS)
    return ZCOLL_ERR_MPI;
  s.codec_threads = threads;
  forget_calls_in_flight(s);
  c.tuning_loaded = true;
  return ZCOLL_SUCCESS;
}

namespace {
void write_record(const zcoll_comm_s& c) {
  const ModelState& s = *c.model;
  // Only a model that learned a path's time has something to carry over.
  bool learned = false;
  for (const auto& per_collective : s.runs)
    for (const auto& per_size : per_collective)
      for (int n : per_size) learned = learned || n > 0;
  if (!learned) return;
  const char* path = c.tuning_file.c_str();
  const uint64_t key = tuning_key(c);
  std::vector<TuningRecord> records = parse_tuning(read_file(path));
  records.erase(std::remove_if(records.begin(), records.end(), [&](const TuningRecord& r) { return distance(r, key, s) <= kSameNetwork; }),
                records.end());
  TuningRecord mine;
  mine.key = key;
  mine.state.resize(sizeof(ModelState));
  std::memcpy(mine.state.data(), static_cast<const void*>(&s), sizeof(ModelState));
  records.push_back(std::move(mine));  // the file's order is the order of writing
  if (records.size() > kMaxRecords)
    records.erase(records.begin(), records.begin() + static_cast<long>(records.size() - kMaxRecords));
  const std::vector<uint8_t> bytes = format_tuning(records);
  // Renamed into place, so that a reader never sees half a file; named by host and process,
  // as jobs on several hosts may share the file system.
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  const std::string tmp = c.tuning_file + ".tmp." + host + "." + std::to_string(static_cast<long>(getpid()));
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return;
  const bool written = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  if (std::fclose(f) != 0 || !written || std::rename(tmp.c_str(), path) != 0) std::remove(tmp.c_str());
}
}  // namespace

void save_tuning(const zcoll_comm_s& c) {
  if (c.rank != 0 || c.tuning_file.empty() || !c.model) return;
  try {
    write_record(c);
  } catch (...) {
    // best effort (out of memory): the next run starts cold; zcoll_comm_free must not throw
  }
}

}  // namespace zcoll::coll
