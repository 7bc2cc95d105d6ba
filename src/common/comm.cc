// zcoll communicators: creation checks each rank's settings, applies the environment's
// per-collective algorithms, and makes every rank agree on them (issue: ranks that
// disagree must get one clear error, never a silent wrong result or a hang).
#include "common/comm.h"
#include "common/host_cores.h"

#include <algorithm>
#include <array>
#include <cinttypes>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include "codec/stream.h"
#include "coll/cost_model.h"
#include "coll/tuning_file.h"
#include "coll/select.h"
#include "common/mpi_util.h"

zcoll_comm_s::zcoll_comm_s() = default;
zcoll_comm_s::~zcoll_comm_s() = default;

uint8_t* zcoll_comm_s::shared_arena(size_t bytes, int* rc, size_t pieces) {
  *rc = ZCOLL_SUCCESS;
  if (bytes <= arena_agreed && pieces <= pieces_agreed) return arena.get();
  uint8_t* w = nullptr;
  bool ok = true;
  try {
    w = reserve_arena(bytes);  // nullptr for 0 bytes on a fresh communicator
    if (pieces > pieces_agreed) {
      // A block exchange sends a piece to each child of a binomial tree's root at once.
      size_t fanout = 1;
      while ((size_t{1} << fanout) < static_cast<size_t>(size)) ++fanout;
      workspace.reserve(static_cast<size_t>(size), pieces, fanout);
    }
  } catch (const std::bad_alloc&) {
    ok = false;
  }
  int v[2] = {ok ? ZCOLL_SUCCESS : ZCOLL_ERR_NO_MEMORY, ok ? -1 : rank};  // the code, a rank that failed
  if (MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS) v[0] = ZCOLL_ERR_MPI;
  else if (v[0])
    zcoll::set_error_detail("rank %d could not allocate %zu bytes for a collective's buffers (out of memory)", v[1],
                            bytes);
  *rc = v[0];
  arena_agreed = v[0] ? 0 : std::max(bytes, arena_agreed);
  pieces_agreed = v[0] ? 0 : std::max(pieces, pieces_agreed);
  return v[0] ? nullptr : w;
}

namespace {

// ZCOLL_DECIDE, where set, over cfg.decision.
int apply_decide_env(zcoll_config& cfg) {
  const char* env = std::getenv("ZCOLL_DECIDE");
  if (!env || !*env) return ZCOLL_SUCCESS;
  if (!std::strcmp(env, "model")) cfg.decision = ZCOLL_DECIDE_MODEL;
  else if (!std::strcmp(env, "compress")) cfg.decision = ZCOLL_DECIDE_COMPRESS;
  else {
    zcoll::set_error_detail("ZCOLL_DECIDE=%s: expected model or compress", env);
    return ZCOLL_ERR_ARG;
  }
  return ZCOLL_SUCCESS;
}

// The first field of cfg out of its range, named for the message; nullptr where none is.
const char* invalid_field(const zcoll_config& cfg) {
  const zcoll_codec_params& p = cfg.codec;
  if (p.eb_mode != ZCOLL_EB_ABS && p.eb_mode != ZCOLL_EB_REL) return "codec.eb_mode";
  if (!std::isfinite(p.eb) || !(p.eb > 0)) return "codec.eb (a positive finite number)";
  if (p.threads < 0) return "codec.threads";
  if (p.chunk_len && (p.chunk_len % zcoll::codec::kChunkLenStep || p.chunk_len > ZCOLL_MAX_CHUNK_LEN))
    return "codec.chunk_len";
  if (cfg.algorithm < ZCOLL_ALGO_AUTO || !zcoll_algorithm_name(cfg.algorithm)) return "algorithm";
  if (cfg.reduction < ZCOLL_REDUCTION_AUTO || cfg.reduction > ZCOLL_REDUCTION_DOC) return "reduction";
  if (cfg.bound_target != ZCOLL_BOUND_INPUT && cfg.bound_target != ZCOLL_BOUND_RESULT) return "bound_target";
  if (cfg.decision != ZCOLL_DECIDE_MODEL && cfg.decision != ZCOLL_DECIDE_COMPRESS) return "decision";
  if (!(cfg.link_gbps >= 0) || !(cfg.link_latency_us >= 0) || !std::isfinite(cfg.link_gbps) ||
      !std::isfinite(cfg.link_latency_us))
    return "link_gbps / link_latency_us (finite, >= 0)";
  return nullptr;
}

// ZCOLL_<COLLECTIVE>_ALGORITHM, where set, over cfg.algorithms; then whether each
// collective has the algorithm it is given.
int apply_collective_algorithms(zcoll_config& cfg) {
  for (int k = 0; k < ZCOLL_NUM_COLLECTIVES; ++k) {
    char var[64];
    std::snprintf(var, sizeof var, "ZCOLL_%s_ALGORITHM", zcoll_collective_name(k));
    for (char* ch = var; *ch; ++ch) *ch = static_cast<char>(*ch >= 'a' && *ch <= 'z' ? *ch - 'a' + 'A' : *ch);
    const char* env = std::getenv(var);
    if (env && *env && zcoll_algorithm_from_name(env, &cfg.algorithms[k]) != ZCOLL_SUCCESS) {
      zcoll::set_error_detail("%s=%s is not an algorithm name", var, env);
      return ZCOLL_ERR_ARG;
    }
    if (!zcoll::coll::algorithm_applies(k, cfg.algorithms[k])) {
      const char* name = zcoll_algorithm_name(cfg.algorithms[k]);
      zcoll::set_error_detail("algorithms[%s] = %s: %s has no such algorithm", zcoll_collective_name(k),
                              name ? name : "(unknown)", zcoll_collective_name(k));
      return ZCOLL_ERR_ARG;
    }
  }
  return ZCOLL_SUCCESS;
}

// Local validation of a configuration, environment applied. Returns a zcoll code and
// says what is wrong through the error detail.
int validate(zcoll_config& cfg) {
  const zcoll::codec::ChunkCodec* codec = zcoll::codec::chunk_codec(cfg.codec.codec);
  if (!codec) {
    zcoll::set_error_detail("unknown codec id %d", cfg.codec.codec);
    return ZCOLL_ERR_CODEC;
  }
  // Homomorphic reductions combine the codec's integers: fzl only.
  if (cfg.reduction == ZCOLL_REDUCTION_HOMOMORPHIC && !codec->homomorphic) {
    zcoll::set_error_detail("reduction HOMOMORPHIC needs a codec that combines (fzl), not %s",
                            zcoll_codec_name(cfg.codec.codec));
    return ZCOLL_ERR_CODEC;
  }
  if (const int rc = apply_decide_env(cfg)) return rc;
  if (const char* bad = invalid_field(cfg)) {
    zcoll::set_error_detail("invalid setting %s", bad);
    return ZCOLL_ERR_ARG;
  }
  return apply_collective_algorithms(cfg);
}

// The settings that decide code paths and streams, as numbers every rank must share.
// Threads are left out: streams are the same for any thread count. A fixed array (names
// static): the agreement below allocates nothing, so no rank can fail before entering it.
struct Setting {
  const char* name;  // algorithms[<collective>] where collective >= 0
  int collective;
  uint64_t value;
  enum Kind { kInt, kDouble, kAlgorithm } kind;
};
constexpr size_t kSettings = 9 + ZCOLL_NUM_COLLECTIVES;
using Settings = std::array<Setting, kSettings>;

Settings settings_of(const zcoll_config& cfg) {
  uint64_t eb_bits;
  std::memcpy(&eb_bits, &cfg.codec.eb, sizeof eb_bits);
  const auto u = [](long long v) { return static_cast<uint64_t>(v); };
  Settings s = {{{"codec", -1, u(cfg.codec.codec), Setting::kInt},
                 {"eb_mode", -1, u(cfg.codec.eb_mode), Setting::kInt},
                 {"eb", -1, eb_bits, Setting::kDouble},
                 {"chunk_len", -1, cfg.codec.chunk_len ? cfg.codec.chunk_len : ZCOLL_DEFAULT_CHUNK_LEN, Setting::kInt},
                 {"min_bytes", -1, cfg.min_bytes, Setting::kInt},
                 {"algorithm", -1, u(cfg.algorithm), Setting::kAlgorithm},
                 {"reduction", -1, u(cfg.reduction), Setting::kInt},
                 {"bound_target", -1, u(cfg.bound_target), Setting::kInt},
                 {"decision", -1, u(cfg.decision), Setting::kInt}}};
  for (int k = 0; k < ZCOLL_NUM_COLLECTIVES; ++k)
    s[9 + static_cast<size_t>(k)] = {"algorithms", k, u(cfg.algorithms[k]), Setting::kAlgorithm};
  return s;
}

using Text = char[64];

const char* show(const Setting& s, uint64_t v, Text& buf) {
  if (s.kind == Setting::kDouble) {
    double d;
    std::memcpy(&d, &v, sizeof d);
    std::snprintf(buf, sizeof buf, "%.17g", d);
  } else if (s.kind == Setting::kAlgorithm && zcoll_algorithm_name(static_cast<int>(v))) {
    std::snprintf(buf, sizeof buf, "%s", zcoll_algorithm_name(static_cast<int>(v)));
  } else {
    std::snprintf(buf, sizeof buf, "%" PRIu64, v);
  }
  return buf;
}

const char* name_of(const Setting& s, Text& buf) {
  if (s.collective < 0) return s.name;
  std::snprintf(buf, sizeof buf, "%s[%s]", s.name, zcoll_collective_name(s.collective));
  return buf;
}

// One allreduce of [local code, settings, ~settings] under MAX gives every rank the
// worst code and each setting's minimum and maximum. Only on failure does a second
// allreduce find which ranks hold which value, for the message.
int agree(MPI_Comm comm, int rank, int local_rc, const zcoll_config* cfg) {
  zcoll_config fallback;
  zcoll_config_init(&fallback);
  const Settings s = settings_of(local_rc == ZCOLL_SUCCESS ? *cfg : fallback);
  constexpr size_t n = kSettings;
  std::array<uint64_t, 1 + 2 * n> v;
  v[0] = static_cast<uint64_t>(local_rc);
  for (size_t i = 0; i < n; ++i) {
    v[1 + i] = s[i].value;
    v[1 + n + i] = ~s[i].value;
  }
  if (MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_UINT64_T, MPI_MAX, comm) != MPI_SUCCESS)
    return ZCOLL_ERR_MPI;
  const bool failed = v[0] != ZCOLL_SUCCESS;
  size_t differs = n;
  for (size_t i = 0; i < n && !failed; ++i)
    if (v[1 + i] != ~v[1 + n + i]) differs = i;
  if (!failed && differs == n) return ZCOLL_SUCCESS;
  // Who: the lowest rank that failed, or the lowest ranks holding the setting's
  // minimum and some other value.
  int who[2] = {INT_MAX, INT_MAX};
  if (failed) {
    if (local_rc) who[0] = rank;
  } else {
    const bool at_min = s[differs].value == ~v[1 + n + differs];
    who[at_min ? 0 : 1] = rank;
  }
  if (MPI_Allreduce(MPI_IN_PLACE, who, 2, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) return ZCOLL_ERR_MPI;
  if (failed) {
    if (!local_rc)
      zcoll::set_error_detail("zcoll_comm_create failed on rank %d (error %d: %s); every rank returns an error",
                              who[0], static_cast<int>(v[0]), zcoll_strerror(static_cast<int>(v[0])));
    return local_rc ? local_rc : static_cast<int>(v[0]);
  }
  const Setting& d = s[differs];
  const uint64_t lo = ~v[1 + n + differs], hi = v[1 + differs];
  Text name, at_lo, at_hi;
  zcoll::set_error_detail(
      "setting %s differs across ranks: rank %d has %s, rank %d another value (they range from %s to %s); it must be "
      "the same on every rank",
      name_of(d, name), who[0], show(d, lo, at_lo), who[1], at_lo, show(d, hi, at_hi));
  return ZCOLL_ERR_MISMATCH;
}

// ZCOLL_DEBUG_FAIL=<rank>:<code> or <rank>:arena (comm.h).
void set_debug_hooks(zcoll_comm_s* c) {
  const char* env = std::getenv("ZCOLL_DEBUG_FAIL");
  int who = -1, code = 0, end = 0;
  if (!env || std::sscanf(env, "%d:%n", &who, &end) != 1 || end == 0 || who != c->rank) return;
  if (std::strcmp(env + end, "arena") == 0) c->debug_no_arena = true;
  else if (std::sscanf(env + end, "%d", &code) == 1) c->debug_fail = code;
}

// Everything zcoll_comm_create allocates, taken before its agreement: a rank that cannot
// have it says so there, and every rank returns ZCOLL_ERR_NO_MEMORY, where the others would
// otherwise wait for it in MPI_Comm_dup or in the topology's collectives. After the
// agreement only the link probe allocates, and measure_links agrees on that too.
int reserve_comm(MPI_Comm comm, std::unique_ptr<zcoll_comm_s>* c, std::vector<int>* scratch) {
  int size = 1;
  if (MPI_Comm_size(comm, &size) != MPI_SUCCESS) return ZCOLL_ERR_MPI;
  try {
    c->reset(new zcoll_comm_s);
    (*c)->topo.node_of.resize(static_cast<size_t>(size));
    (*c)->model = std::make_unique<zcoll::coll::ModelState>();
    scratch->resize(4 * static_cast<size_t>(size));  // build_topology's, then measure_links'
    return ZCOLL_SUCCESS;
  } catch (const std::bad_alloc&) {
    zcoll::set_error_detail("out of memory for a communicator of %d ranks", size);
    return ZCOLL_ERR_NO_MEMORY;
  }
}

int create(MPI_Comm comm, const zcoll_config* cfg, zcoll_comm* out) {
  if (out) *out = nullptr;
  if (comm == MPI_COMM_NULL) return ZCOLL_ERR_ARG;
  int rank = 0;
  if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS) return ZCOLL_ERR_MPI;
  // A rank with a bad argument still takes part in the agreement, so that the others
  // return an error too instead of waiting in MPI_Comm_dup.
  zcoll_config mine;
  int rc = ZCOLL_SUCCESS;
  if (!out || !cfg) {
    zcoll::set_error_detail("NULL %s", out ? "config" : "zcomm");
    rc = ZCOLL_ERR_ARG;
  } else {
    mine = *cfg;
    mine.codec.ndims = 0;
    rc = validate(mine);
  }
  std::unique_ptr<zcoll_comm_s> c;
  std::vector<int> scratch;
  if (!rc) rc = reserve_comm(comm, &c, &scratch);
  rc = agree(comm, rank, rc, &mine);
  if (rc) return rc;
  c->cfg = mine;
  if (MPI_Comm_dup(comm, &c->comm) != MPI_SUCCESS || MPI_Comm_dup(c->comm, &c->p2p) != MPI_SUCCESS) {
    if (c->comm != MPI_COMM_NULL) MPI_Comm_free(&c->comm);
    return ZCOLL_ERR_MPI;
  }
  MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(c->p2p, MPI_ERRORS_RETURN);
  MPI_Comm_rank(c->comm, &c->rank);
  MPI_Comm_size(c->comm, &c->size);
  set_debug_hooks(c.get());
  // Collective on every rank whatever happens, so a failure cannot leave a rank waiting.
  rc = zcoll::build_topology(c->comm, &c->topo, scratch.data());
  c->cfg.codec.threads = zcoll::automatic_threads(c->cfg.codec.threads, c->topo.core_share);
  if (!rc) rc = zcoll::coll::measure_links(*c, scratch.data());
  if (!rc) rc = zcoll::coll::load_tuning(*c);
  if (rc) {
    zcoll::free_topology(&c->topo);
    MPI_Comm_free(&c->p2p);
    MPI_Comm_free(&c->comm);
    return rc;
  }
  *out = c.release();
  return ZCOLL_SUCCESS;
}

}  // namespace

extern "C" {

void zcoll_config_init(zcoll_config* cfg) {
  if (!cfg) return;
  *cfg = zcoll_config{};
  zcoll_codec_params_init(&cfg->codec);
  cfg->min_bytes = ZCOLL_DEFAULT_MIN_BYTES;
  cfg->algorithm = ZCOLL_ALGO_AUTO;
  for (int& a : cfg->algorithms) a = ZCOLL_ALGO_AUTO;
}

int zcoll_comm_create(MPI_Comm comm, const zcoll_config* cfg, zcoll_comm* out) {
  return zcoll::guarded([&] { return create(comm, cfg, out); });
}

int zcoll_comm_free(zcoll_comm* zc) {
  if (!zc || !*zc) return ZCOLL_ERR_ARG;
  zcoll::coll::save_tuning(**zc);
  zcoll::free_topology(&(*zc)->topo);  // the rail's communicator too
  const bool ok = MPI_Comm_free(&(*zc)->p2p) == MPI_SUCCESS;
  const int rc = MPI_Comm_free(&(*zc)->comm) == MPI_SUCCESS && ok ? ZCOLL_SUCCESS : ZCOLL_ERR_MPI;
  delete *zc;
  *zc = nullptr;
  return rc;
}

int zcoll_comm_warm_start(zcoll_comm c, int* warm) {
  if (!c || !warm) return ZCOLL_ERR_ARG;
  *warm = c->tuning_loaded ? 1 : 0;
  return ZCOLL_SUCCESS;
}

int zcoll_comm_get_info(zcoll_comm c, zcoll_comm_info* info) {
  if (!c || !info) return ZCOLL_ERR_ARG;
  const zcoll::Topology& t = c->topo;
  const zcoll::coll::ModelState& s = *c->model;
  *info = zcoll_comm_info{};
  info->nodes = t.nodes;
  info->node = t.node;
  info->node_rank = t.node_rank;
  info->node_size = t.node_size;
  info->max_node_size = t.max_node_size;
  info->rails = t.rails;
  info->codec_threads = zcoll::codec::thread_count(c->cfg.codec.threads, SIZE_MAX);  // 0: OpenMP's
  info->model_threads = s.codec_threads;
  info->intra_latency_s = s.intra.alpha;
  info->intra_bytes_per_s = s.intra.beta > 0 ? 1 / s.intra.beta : 0;
  info->inter_latency_s = s.inter.alpha;
  info->inter_bytes_per_s = s.inter.beta > 0 ? 1 / s.inter.beta : 0;
  return ZCOLL_SUCCESS;
}

int zcoll_last_stats(zcoll_comm c, zcoll_stats* stats) {
  if (!c || !stats) return ZCOLL_ERR_ARG;
  *stats = c->published();
  return ZCOLL_SUCCESS;
}

}  // extern "C"
