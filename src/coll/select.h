// The choice between algorithms, in one place (select.cc): a table of {collective, ranks,
// bytes} -> algorithm, overridden per collective by the configuration or the
// environment (ZCOLL_<COLLECTIVE>_ALGORITHM), or for every collective by
// zcoll_config.algorithm.
#pragma once
#include "zcoll.h"

#include <cstddef>

namespace zcoll::coll {

// What a compressed call runs: the schedule, and whether it runs it as the CPRP2P
// baseline (recompressing at every hop). `reported` is what zcoll_stats.algorithm says.
struct Choice {
  int schedule = ZCOLL_ALGO_RING;
  bool cprp2p = false;
  int reported() const { return cprp2p ? ZCOLL_ALGO_CPRP2P : schedule; }
};

// Whether the collective has this algorithm (AUTO, MPI and CPRP2P: every collective).
bool algorithm_applies(int collective, int algorithm);
// The configured algorithm for a collective before the table: its own setting, else
// zcoll_config.algorithm where it applies, else AUTO.
int configured_algorithm(const zcoll_config& cfg, int collective);
// Whether a reduction combines compressed streams (fzl, not DOC, not the CPRP2P baseline).
bool homomorphic_path(const zcoll_config& cfg, int collective);
// bytes: per rank (the block a rank contributes or receives), or the whole vector for
// bcast and the reductions. homomorphic: the reductions combine compressed streams
// (recursive doubling needs that).
Choice select_algorithm(const zcoll_config& cfg, int collective, int ranks, size_t bytes, bool homomorphic);

}  // namespace zcoll::coll
