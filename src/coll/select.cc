// Every choice between algorithms. The thresholds follow the published crossovers (MPICH's
// defaults for Bruck vs ring, scatter-allgather vs binomial bcast, recursive doubling vs
// ring allreduce), and were checked over the emulated 1 Gbit/s link (docs/results.md).
#include "coll/select.h"

#include <cctype>
#include <cstring>

namespace zcoll::coll {
namespace {

constexpr size_t KiB = 1024;

const char* const kAlgorithmNames[] = {"auto",     "mpi",      "cprp2p",  "ring", "bruck", "binomial",
                                       "scatter_allgather", "pairwise", "recursive_doubling", "hierarchical",
                                       "plain_hierarchical"};
const char* const kCollectiveNames[] = {"allgather",      "bcast",     "scatter", "gather", "alltoall",
                                        "reduce_scatter", "allreduce", "reduce"};
constexpr int kNumAlgorithms = sizeof kAlgorithmNames / sizeof *kAlgorithmNames;
static_assert(sizeof kCollectiveNames / sizeof *kCollectiveNames == ZCOLL_NUM_COLLECTIVES, "a name per collective");

// The schedules each collective has, besides AUTO, MPI and CPRP2P.
unsigned schedules_of(int collective) {
  auto bit = [](int a) { return 1u << a; };
  const unsigned node_aware = bit(ZCOLL_ALGO_HIERARCHICAL) | bit(ZCOLL_ALGO_PLAIN_HIERARCHICAL);
  switch (collective) {
    case ZCOLL_COLL_ALLGATHER: return bit(ZCOLL_ALGO_RING) | bit(ZCOLL_ALGO_BRUCK) | node_aware;
    case ZCOLL_COLL_BCAST: return bit(ZCOLL_ALGO_BINOMIAL) | bit(ZCOLL_ALGO_SCATTER_ALLGATHER) | node_aware;
    case ZCOLL_COLL_SCATTER:
    case ZCOLL_COLL_GATHER: return bit(ZCOLL_ALGO_BINOMIAL);
    case ZCOLL_COLL_ALLTOALL: return bit(ZCOLL_ALGO_PAIRWISE);
    case ZCOLL_COLL_REDUCE_SCATTER:
    case ZCOLL_COLL_REDUCE: return bit(ZCOLL_ALGO_RING) | node_aware;
    case ZCOLL_COLL_ALLREDUCE:
      return bit(ZCOLL_ALGO_RING) | bit(ZCOLL_ALGO_RECURSIVE_DOUBLING) | node_aware;
    default: return 0;
  }
}

// The table: what AUTO runs.
int table(int collective, int p, size_t bytes, bool homomorphic) {
  switch (collective) {
    // Bruck's log2(p) rounds beat the ring's p - 1 when latency dominates; the ring moves
    // the same bytes in balanced steps.
    case ZCOLL_COLL_ALLGATHER: return p >= 8 && bytes < 256 * KiB ? ZCOLL_ALGO_BRUCK : ZCOLL_ALGO_RING;
    // Scatter + allgather sends each byte about twice from any rank, where the tree sends
    // it log2(p) times from the root: better once the buffer is large and the tree deep.
    case ZCOLL_COLL_BCAST: return p > 3 && bytes >= 512 * KiB ? ZCOLL_ALGO_SCATTER_ALLGATHER : ZCOLL_ALGO_BINOMIAL;
    case ZCOLL_COLL_SCATTER:
    case ZCOLL_COLL_GATHER: return ZCOLL_ALGO_BINOMIAL;
    case ZCOLL_COLL_ALLTOALL: return ZCOLL_ALGO_PAIRWISE;
    // Recursive doubling moves the whole vector log2(p) times: only for short vectors.
    case ZCOLL_COLL_ALLREDUCE:
      return homomorphic && p >= 4 && bytes < 512 * KiB ? ZCOLL_ALGO_RECURSIVE_DOUBLING : ZCOLL_ALGO_RING;
    default: return ZCOLL_ALGO_RING;
  }
}

bool same_name(const char* a, const char* b) {
  for (; *a && *b; ++a, ++b)
    if (std::tolower(static_cast<unsigned char>(*a)) != *b) return false;
  return !*a && !*b;
}

}  // namespace

bool algorithm_applies(int collective, int algorithm) {
  if (algorithm == ZCOLL_ALGO_AUTO || algorithm == ZCOLL_ALGO_MPI || algorithm == ZCOLL_ALGO_CPRP2P) return true;
  return algorithm > 0 && algorithm < kNumAlgorithms && (schedules_of(collective) >> algorithm & 1u);
}

int configured_algorithm(const zcoll_config& cfg, int collective) {
  const int own = cfg.algorithms[collective];
  if (own != ZCOLL_ALGO_AUTO) return own;
  return algorithm_applies(collective, cfg.algorithm) ? cfg.algorithm : ZCOLL_ALGO_AUTO;
}

bool homomorphic_path(const zcoll_config& cfg, int collective) {
  const bool reduction = collective == ZCOLL_COLL_REDUCE_SCATTER || collective == ZCOLL_COLL_ALLREDUCE ||
                         collective == ZCOLL_COLL_REDUCE;
  // AUTO is DOC with a codec that does not combine (zcoll_comm_create refuses HOMOMORPHIC).
  return reduction && configured_algorithm(cfg, collective) != ZCOLL_ALGO_CPRP2P &&
         cfg.reduction != ZCOLL_REDUCTION_DOC && cfg.codec.codec == ZCOLL_CODEC_FZL;
}

Choice select_algorithm(const zcoll_config& cfg, int collective, int ranks, size_t bytes, bool homomorphic) {
  int configured = configured_algorithm(cfg, collective);
  // Hierarchical runs a flat schedule on each rail (coll/hierarchical.h), or instead of
  // itself where the topology is flat: the one AUTO picks.
  if (configured == ZCOLL_ALGO_HIERARCHICAL) configured = ZCOLL_ALGO_AUTO;
  const int automatic = table(collective, ranks, bytes, homomorphic);
  Choice ch;
  ch.cprp2p = configured == ZCOLL_ALGO_CPRP2P;
  ch.schedule = configured == ZCOLL_ALGO_AUTO || ch.cprp2p ? automatic : configured;
  // Recursive doubling combines whole streams: with decompress-operate-compress the ring runs.
  if (ch.schedule == ZCOLL_ALGO_RECURSIVE_DOUBLING && (!homomorphic || ch.cprp2p)) ch.schedule = ZCOLL_ALGO_RING;
  return ch;
}

}  // namespace zcoll::coll

extern "C" {

const char* zcoll_algorithm_name(int algorithm) {
  return algorithm >= 0 && algorithm < zcoll::coll::kNumAlgorithms ? zcoll::coll::kAlgorithmNames[algorithm] : nullptr;
}

int zcoll_algorithm_from_name(const char* name, int* algorithm) {
  if (!name || !algorithm) return ZCOLL_ERR_ARG;
  for (int a = 0; a < zcoll::coll::kNumAlgorithms; ++a)
    if (zcoll::coll::same_name(name, zcoll::coll::kAlgorithmNames[a])) {
      *algorithm = a;
      return ZCOLL_SUCCESS;
    }
  return ZCOLL_ERR_ARG;
}

const char* zcoll_collective_name(int collective) {
  return collective >= 0 && collective < ZCOLL_NUM_COLLECTIVES ? zcoll::coll::kCollectiveNames[collective] : nullptr;
}

}  // extern "C"
