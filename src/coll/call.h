// What every collective's entry point shares (call.cc): whether the call is large enough
// to compress, the one agreement every rank of such a call makes (one MPI_Allreduce of
// each rank's element type, counts, root, op, share of the value range and local
// failure, so all ranks take the same decision, or all get ZCOLL_ERR_MISMATCH: zcoll.h),
// and the bound all ranks then use.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "coll/cost_model.h"
#include "coll/select.h"
#include "common/comm.h"
#include "common/mpi_util.h"

namespace zcoll::coll {

inline constexpr int kUnsupportedOp = 99;  // every op zcoll does not compress

struct Agreement {
  int kind = 0;             // zcoll_dtype, or 0: not a float type zcoll compresses (any rank: plain MPI)
  double count = -1;        // what must match: a count, or a 52-bit hash of a counts array
  bool count_is_hash = false;
  int root = -1, op = -1;   // -1: the collective has none
  int in_place = -1;        // 1/0: MPI_IN_PLACE given or not, where the schedule depends on it (alltoall)
  double lo = INFINITY, hi = -INFINITY;  // this rank's share of the value range
  int rc = ZCOLL_SUCCESS;   // a failure on this rank before the agreement

  // The cost model's estimates from this rank's sample (0: none); after agree(), the
  // worst over the ranks. prev_time: this rank's time of the last call the model decided,
  // less prev_overhead, what its agreement, range pass and sample cost. fast_plain: the
  // 0.3 quantile of plain MPI's time over its model in this collective's and size's fast-path
  // calls since its last agreement (0: none).
  double rho = 0, compress_cost = 0, decompress_cost = 0, prev_time = 0, prev_overhead = 0, fast_plain = 0;
  const void* data = nullptr;  // this rank's values, for the sample
  int collective = 0;
  size_t data_count = 0;

  // After agree(): the range of every rank's share, and the bound for this call.
  double eb = 0;
  bool want_range = false;  // a REL bound: only then is the range worth a pass over the data
                            // (true: this rank's share is in lo, hi once add_values() ran)
  // A REL bound whose range pass waits for the decision: the model expects plain MPI, which
  // needs no range (expects_plain()). After agree(), whether any rank waited: then a call
  // that compresses takes it in complete_range(), and eb is set there.
  bool range_deferred = false;
  zcoll_dtype dtype = ZCOLL_FLOAT32;
  int threads = 0;
  // This rank's values: their range (REL bounds, unless deferred), and what the cost model samples.
  void add_values(zcoll_dtype dt, const void* values, size_t n, int threads);
  void take_range();  // this rank's share of the range, into lo and hi
  void set_counts(const int* counts, int n);  // hashes the array
};

// Whether a call of `bytes` (per rank) goes to the agreement: compression is configured
// for this collective and the message is large enough.
bool wants_compression(const zcoll_comm_s& c, int collective, size_t bytes);
// The agreement (see above). ZCOLL_SUCCESS with *compress telling whether to compress,
// or an error code for every rank (ZCOLL_ERR_MISMATCH with the detail set, or the worst
// local failure).
int agree(zcoll_comm_s& c, int collective, Agreement& a, bool* compress);

// MPI's argument rules for a send/receive pair of buffers (MPI_IN_PLACE allowed).
inline bool bad_buffers(const void* sendbuf, int sendcount, const void* recvbuf, long long recvcount) {
  const bool in_place = sendbuf == MPI_IN_PLACE;
  return recvcount < 0 || (!in_place && sendcount < 0) || (recvcount > 0 && !recvbuf) ||
         (!in_place && sendcount > 0 && !sendbuf);
}

// The same rules for scatter and gather: the root's side (the p blocks: scatter's send,
// gather's receive) counts at the root only; the other side everywhere, except at a root
// that passes MPI_IN_PLACE for it.
inline bool bad_rooted_buffers(bool is_root, const void* root_buf, int root_count, const void* other_buf,
                               int other_count) {
  const bool in_place = is_root && other_buf == MPI_IN_PLACE;
  return (is_root && (root_count < 0 || (root_count > 0 && !root_buf))) ||
         (!in_place && (other_count < 0 || (other_count > 0 && !other_buf)));
}

// count elements in p blocks whose sizes differ by at most one, in *out (returned).
inline const std::vector<size_t>& even_blocks(size_t count, size_t p, std::vector<size_t>* out) {
  out->resize(p);
  for (size_t b = 0; b < p; ++b) (*out)[b] = count * (b + 1) / p - count * b / p;
  return *out;
}

// Copies a rank's own data from a send layout to a receive layout. The same datatype
// (a float type here) is a memcpy; otherwise MPI converts it through a message to self,
// which handles any derived send type whose signature matches, as MPI requires.
int local_copy(const void* src, int scount, MPI_Datatype stype, void* dst, int rcount, MPI_Datatype rtype,
               MPI_Comm comm);

// After a decision to compress, where agree() found a rank that deferred its range pass
// (Agreement::range_deferred): every rank's share, with one more MPI_Allreduce of two
// doubles, and the bound from it. Every rank calls it or none (the decision is agreed).
int complete_range(zcoll_comm_s& c, Agreement& a);

// The decision after the agreement: the cost model's (AUTO) or the configuration's and
// the table's. Sets the statistics' predictions when the model decided.
Decision decide_call(zcoll_comm_s& c, int collective, size_t bytes, zcoll_dtype dt, const Agreement& a);
// After the call: this rank's time and the model's predictions in the statistics.
void finish_stats(zcoll_comm_s& c, const Decision& d, bool decided_by_model);

// The whole front end of a collective, after its argument checks:
//   describe(dt, agreement)  fills counts, values, root, op (only when `type` is a float type)
//   engine(dt, eb, choice)   the compressed collective, running choice's schedule
//   plain()                  the MPI call, returning an MPI code
template <class Describe, class Engine, class Plain>
int run_collective(zcoll_comm_s& c, int collective, MPI_Datatype type, size_t bytes, int root, int op,
                   Describe&& describe, Engine&& engine, Plain&& plain) {
  return guarded([&]() -> int {
    c.call_start = now();
    Decision d;
    bool modelled = false;
    if (wants_compression(c, collective, bytes) && !(modelled = surely_plain(c, collective, bytes, &d))) {
      Agreement a;
      a.collective = collective;
      // PLAIN_HIERARCHICAL agrees only on what every rank passes (types, counts, root, op):
      // it has no bound to resolve.
      modelled = uses_model(c, collective);
      const bool rel = c.cfg.codec.eb_mode == ZCOLL_EB_REL &&
                       configured_algorithm(c.cfg, collective) != ZCOLL_ALGO_PLAIN_HIERARCHICAL;
      a.range_deferred = rel && modelled && expects_plain(c, collective, bytes);
      a.want_range = rel && !a.range_deferred;
      a.root = root;
      a.op = op;
      zcoll_dtype dt = ZCOLL_FLOAT32;
      // Whatever this rank allocates before the agreement, the agreement reports a failure
      // of: past it, a rank that stopped would leave the others waiting (workspace.h).
      try {
        c.workspace.reserve_ranks(static_cast<size_t>(c.size), c.topo.hierarchical());
        if (float_type(type, &dt) && op != kUnsupportedOp) {
          a.kind = dt;
          describe(dt, a);
          if (modelled) {
            d.t_sample = now();
            sample(c, dt, a);
            d.t_sample = now() - d.t_sample;
          }
        }
        if (modelled) carry_measurements(c, collective, bytes, a);
      } catch (const std::bad_alloc&) {
        a.rc = ZCOLL_ERR_NO_MEMORY;
      }
      bool compress = false;
      const int rc = agree(c, collective, a, &compress);
      if (rc) return rc;
      if (compress) {
        const double t_sample = d.t_sample;
        d = decide_call(c, collective, bytes, dt, a);
        d.t_sample = t_sample;
        if (!d.plain && a.range_deferred) {
          const int crc = complete_range(c, a);
          if (crc) return crc;
        }
        d.t_overhead = now() - c.call_start;
        d.range_deferred = d.plain && a.range_deferred;
        if (!d.plain) {
          const int erc = engine(dt, a.eb, d.choice);
          // The engines time the call from its start: what came before the decision is not
          // communication (a 64 MiB REL call's range pass alone takes 6-13 ms).
          c.last.t_setup = d.t_overhead;
          c.last.t_comm = std::max(c.last.t_comm - d.t_overhead, 0.0);
          finish_stats(c, d, modelled);
          return erc;
        }
      } else {
        modelled = false;  // a type or op zcoll does not compress: the model had no say
        d.t_overhead = now() - c.call_start;
      }
    }
    const int rc = mpi_rc(plain());
    c.record_plain();
    c.last.t_setup = d.t_overhead;
    finish_stats(c, d, modelled);
    return rc;
  });
}

}  // namespace zcoll::coll
