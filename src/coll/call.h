// What every collective's entry point shares (call.cc): whether the call is large enough
// to compress, the one agreement every rank of such a call makes (one MPI_Allreduce of
// each rank's element type, counts, root, op, share of the value range and local
// failure, so all ranks take the same decision, or all get ZCOLL_ERR_MISMATCH: zcoll.h),
// and the bound all ranks then use.
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

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
  double lo = INFINITY, hi = -INFINITY;  // this rank's share of the value range
  int rc = ZCOLL_SUCCESS;   // a failure on this rank before the agreement

  // After agree(): the range of every rank's share, and the bound for this call.
  double eb = 0;
  bool want_range = false;  // a REL bound: only then is the range worth a pass over the data
  void add_range(zcoll_dtype dt, const void* values, size_t n, int threads);
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

// count elements in p blocks whose sizes differ by at most one.
inline std::vector<size_t> even_blocks(size_t count, size_t p) {
  std::vector<size_t> counts(p);
  for (size_t b = 0; b < p; ++b) counts[b] = count * (b + 1) / p - count * b / p;
  return counts;
}

// Copies a rank's own data from a send layout to a receive layout. The same datatype
// (a float type here) is a memcpy; otherwise MPI converts it through a message to self,
// which handles any derived send type whose signature matches, as MPI requires.
int local_copy(const void* src, int scount, MPI_Datatype stype, void* dst, int rcount, MPI_Datatype rtype,
               MPI_Comm comm);

// The whole front end of a collective, after its argument checks:
//   describe(dt, agreement)  fills counts, range, root, op (only when `type` is a float type)
//   engine(dt, eb)           the compressed collective
//   plain()                  the MPI call, returning an MPI code
template <class Describe, class Engine, class Plain>
int run_collective(zcoll_comm_s& c, int collective, MPI_Datatype type, size_t bytes, int root, int op,
                   Describe&& describe, Engine&& engine, Plain&& plain) {
  return guarded([&]() -> int {
    c.call_start = now();
    bool compress = false;
    zcoll_dtype dt = ZCOLL_FLOAT32;
    if (wants_compression(c, collective, bytes)) {
      Agreement a;
      a.want_range = c.cfg.codec.eb_mode == ZCOLL_EB_REL;
      a.root = root;
      a.op = op;
      if (float_type(type, &dt) && op != kUnsupportedOp) {
        a.kind = dt;
        describe(dt, a);
      }
      const int rc = agree(c, collective, a, &compress);
      if (rc) return rc;
      if (compress) return engine(dt, a.eb);
    }
    c.record_plain();
    return mpi_rc(plain());
  });
}

}  // namespace zcoll::coll
