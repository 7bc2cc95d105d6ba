#include "pmpi/settings.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>

#include "common/fnv.h"

namespace zcoll_pmpi {
namespace {

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

bool parse_size(const std::string& v, size_t* out) {
  if (v.empty() || v[0] == '-') return false;
  char* end = nullptr;
  errno = 0;
  const unsigned long long x = std::strtoull(v.c_str(), &end, 10);
  if (errno || end == v.c_str()) return false;
  unsigned long long scale = 1;
  const std::string unit = lower(end);
  if (unit == "k" || unit == "kib") scale = 1ull << 10;
  else if (unit == "m" || unit == "mib") scale = 1ull << 20;
  else if (unit == "g" || unit == "gib") scale = 1ull << 30;
  else if (!unit.empty()) return false;
  *out = static_cast<size_t>(x * scale);
  return true;
}

bool parse_int(const std::string& v, int lo, int hi, int* out) {
  char* end = nullptr;
  errno = 0;
  const long x = std::strtol(v.c_str(), &end, 10);
  if (errno || v.empty() || *end || x < lo || x > hi) return false;
  *out = static_cast<int>(x);
  return true;
}

// ZCOLL_<KEY>: the environment variable of a setting's key.
std::string env_name(const std::string& key) {
  std::string var = "ZCOLL_" + key;
  for (char& ch : var) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return var;
}

// A comma-separated list of collectives (MPI's names of the variants count as theirs) as a
// mask of bits 1 << ZCOLL_COLL_*.
bool parse_ops(const std::string& v, unsigned* out) {
  unsigned ops = 0;
  for (size_t at = 0; at <= v.size();) {
    const size_t comma = std::min(v.find(',', at), v.size());
    const std::string name = lower(trim(v.substr(at, comma - at)));
    if (name == "all") ops |= (1u << ZCOLL_NUM_COLLECTIVES) - 1;
    else if (name == "allgatherv") ops |= 1u << ZCOLL_COLL_ALLGATHER;
    else if (name == "reduce_scatter_block") ops |= 1u << ZCOLL_COLL_REDUCE_SCATTER;
    else if (collective_from_name(name) >= 0) ops |= 1u << collective_from_name(name);
    else return false;
    at = comma + 1;
  }
  *out = ops;
  return true;
}

bool parse_comms(const std::string& v, CommScope* out) {
  const std::string c = lower(v);
  if (c == "world") *out = CommScope::kWorld;
  else if (c == "all") *out = CommScope::kAll;
  else if (c == "hinted") *out = CommScope::kHinted;
  else return false;
  return true;
}

// A setting's key (its environment variable's name without ZCOLL_, lower case), its parser
// (false: the value is wrong) and what the message says it expects.
struct Key {
  const char* name;
  bool (*parse)(const std::string& v, Settings* s);
  const char* expected;
};

const Key kKeys[] = {
    {"eb",
     [](const std::string& v, Settings* s) {
       if (!parse_eb(v, &s->cfg.codec.eb)) return false;
       s->compress = true;  // a bound given: the layer compresses
       return true;
     },
     "a positive number such as 1e-4"},
    {"eb_mode", [](const std::string& v, Settings* s) { return parse_eb_mode(v, &s->cfg.codec.eb_mode); },
     "abs or rel"},
    {"ops", [](const std::string& v, Settings* s) { return parse_ops(v, &s->ops); },
     "a comma-separated list of allreduce, reduce, reduce_scatter, allgather, bcast, scatter, gather, alltoall (or "
     "all)"},
    {"min_bytes", [](const std::string& v, Settings* s) { return parse_size(v, &s->cfg.min_bytes); },
     "a byte count such as 65536, 64k or 1m"},
    {"codec",
     [](const std::string& v, Settings* s) {
       return zcoll_codec_from_name(v.c_str(), &s->cfg.codec.codec) == ZCOLL_SUCCESS;
     },
     "a codec name such as fzl"},
    {"threads", [](const std::string& v, Settings* s) { return parse_int(v, 0, 4096, &s->cfg.codec.threads); },
     "a thread count (0 = automatic)"},
    {"comms", [](const std::string& v, Settings* s) { return parse_comms(v, &s->comms); }, "world, all or hinted"},
    {"report",
     [](const std::string& v, Settings* s) {
       const std::string r = lower(v);
       s->report = r == "0" || r.empty() ? "" : r == "1" || r == "stdout" ? "stdout" : v;
       return true;
     },
     ""},
};

// One key's value into s; "" or what is wrong with it.
std::string apply(const std::string& key, const std::string& value, Settings* s) {
  const std::string v = trim(value);
  for (const Key& k : kKeys) {
    if (key != k.name) continue;
    if (!k.parse(v, s)) return env_name(key) + "=" + v + ": expected " + k.expected;
    s->configured = true;
    return "";
  }
  return "unknown setting " + key;
}

std::string read_file(const std::string& path, std::map<std::string, std::string>* kv) {
  std::ifstream in(path);
  if (!in) return "ZCOLL_CONFIG=" + path + ": cannot open the file";
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    const std::string t = trim(line.substr(0, line.find('#')));
    if (t.empty()) continue;
    const size_t eq = t.find('=');
    std::string key = eq == std::string::npos ? "" : lower(trim(t.substr(0, eq)));
    if (key.rfind("zcoll_", 0) == 0) key = key.substr(6);
    bool known = false;
    std::string names;  // the keys, for the message
    for (const Key& k : kKeys) {
      known = known || key == k.name;
      names += names.empty() ? k.name : std::string(", ") + k.name;
    }
    if (!known) return path + ":" + std::to_string(n) + ": expected KEY = VALUE with KEY one of " + names;
    (*kv)[key] = t.substr(eq + 1);
  }
  return "";
}

}  // namespace

bool parse_eb_mode(const std::string& v, int* mode) {
  const std::string m = lower(trim(v));
  if (m == "abs") *mode = ZCOLL_EB_ABS;
  else if (m == "rel") *mode = ZCOLL_EB_REL;
  else return false;
  return true;
}

bool parse_eb(const std::string& v, double* eb) {
  const std::string t = trim(v);
  char* end = nullptr;
  errno = 0;
  const double x = std::strtod(t.c_str(), &end);
  if (errno || t.empty() || *end || !std::isfinite(x) || !(x > 0)) return false;
  *eb = x;
  return true;
}

int collective_from_name(const std::string& name) {
  for (int c = 0; c < ZCOLL_NUM_COLLECTIVES; ++c)
    if (name == zcoll_collective_name(c)) return c;
  return -1;
}

std::string read_settings(Settings* s) {
  *s = Settings{};
  zcoll_config_init(&s->cfg);
  s->cfg.codec.eb_mode = ZCOLL_EB_REL;  // an absolute bound needs the data's scale; REL does not
  s->ops = (1u << ZCOLL_NUM_COLLECTIVES) - 1;
  std::map<std::string, std::string> kv;
  if (const char* path = std::getenv("ZCOLL_CONFIG"); path && *path) {
    const std::string err = read_file(path, &kv);
    if (!err.empty()) return err;
    s->configured = true;
  }
  for (const Key& k : kKeys) {
    if (const char* env = std::getenv(env_name(k.name).c_str())) kv[k.name] = env;
  }
  for (const auto& [key, value] : kv) {
    const std::string err = apply(key, value, s);
    if (!err.empty()) return err;
  }
  return "";
}

uint64_t settings_digest(const Settings& s) {
  // The agreement only needs equal inputs to give equal digests.
  zcoll::Fnv1a h;
  auto mix = [&](const void* p, size_t n) { h.bytes(p, n); };
  // configured too: hints and the barrier before PMPI_Finalize depend on it, collectively.
  const int flags[] = {s.compress, s.cfg.codec.codec, s.cfg.codec.eb_mode, static_cast<int>(s.ops),
                       static_cast<int>(s.comms), !s.report.empty(), s.configured};
  mix(flags, sizeof flags);
  mix(&s.cfg.codec.eb, sizeof s.cfg.codec.eb);
  mix(&s.cfg.min_bytes, sizeof s.cfg.min_bytes);
  return h.h;
}

}  // namespace zcoll_pmpi
