// The front end every collective shares (call.h).
#include "coll/call.h"

#include <cfloat>
#include <cstring>

#include "codec/stream.h"
#include "coll/hierarchical.h"
#include "common/fnv.h"

namespace zcoll::coll {
namespace {
constexpr int kSelfTag = 7302;  // the transport uses 7301
}  // namespace

void Agreement::add_values(zcoll_dtype dt, const void* values, size_t n, int nthreads) {
  data = values;
  data_count = n;
  dtype = dt;
  threads = nthreads;
  if (want_range) take_range();
}

void Agreement::take_range() {
  if (!data || data_count == 0) return;
  double l = INFINITY, h = -INFINITY;
  codec::value_range(dtype, data, data_count, codec::thread_count(threads, data_count / 65536 + 1), &l, &h);
  lo = std::min(lo, l);
  hi = std::max(hi, h);
}

void Agreement::set_counts(const int* counts, int n) {
  Fnv1a h;
  h.bytes(counts, static_cast<size_t>(n) * sizeof *counts);
  count = static_cast<double>(h.h >> 12);  // 52 bits: exact in a double
  count_is_hash = true;
}

int local_copy(const void* src, int scount, MPI_Datatype stype, void* dst, int rcount, MPI_Datatype rtype,
               MPI_Comm comm) {
  if (stype == rtype && scount == rcount) {
    if (rcount > 0) std::memcpy(dst, src, type_bytes(rtype, static_cast<size_t>(rcount)));
    return ZCOLL_SUCCESS;
  }
  int me = 0;
  MPI_Comm_rank(comm, &me);
  return mpi_rc(MPI_Sendrecv(src, scount, stype, me, kSelfTag, dst, rcount, rtype, me, kSelfTag, comm,
                             MPI_STATUS_IGNORE));
}

bool wants_compression(const zcoll_comm_s& c, int collective, size_t bytes) {
  const bool reduction = collective == ZCOLL_COLL_REDUCE_SCATTER || collective == ZCOLL_COLL_ALLREDUCE ||
                         collective == ZCOLL_COLL_REDUCE;
  if (reduction && c.size < 2) return false;
  return configured_algorithm(c.cfg, collective) != ZCOLL_ALGO_MPI && bytes >= c.cfg.min_bytes;
}

namespace {
// Slots of the agreement vector; each quantity q is sent as q and -q under MAX, so every
// rank learns its minimum and maximum.
enum Slot {
  kKind, kCount, kRoot, kOp, kInPlace, kRange, kDeferred, kRho, kCompress, kDecompress, kTime, kOverhead, kFastPlain,
  kFailed, kPairs
};
}  // namespace

int agree(zcoll_comm_s& c, int collective, Agreement& a, bool* compress) {
  *compress = false;
  const bool floats = a.kind != 0;
  double v[2 * kPairs + 1];
  auto put = [&](Slot s, double lo, double hi) {  // this rank's minimum and maximum
    v[2 * s] = -lo;
    v[2 * s + 1] = hi;
  };
  put(kKind, a.kind, a.kind);
  // A rank whose type is not compressed knows no element count: it takes no part in that check.
  put(kCount, floats ? a.count : INFINITY, floats ? a.count : -INFINITY);
  put(kRoot, a.root, a.root);
  put(kOp, a.op, a.op);
  put(kInPlace, a.in_place, a.in_place);
  put(kRange, a.lo, a.hi);
  put(kDeferred, 0, a.range_deferred);
  // The cost model's estimates: only their maximum (the worst) is used.
  put(kRho, 0, a.rho);
  put(kCompress, 0, a.compress_cost);
  put(kDecompress, 0, a.decompress_cost);
  put(kTime, 0, a.prev_time);
  put(kOverhead, 0, a.prev_overhead);
  put(kFastPlain, 0, a.fast_plain);
  put(kFailed, a.rc ? c.rank : INFINITY, a.rc ? c.rank : -INFINITY);  // which ranks failed before it
  v[2 * kPairs] = a.rc;
  if (c.size > 1 &&
      MPI_Allreduce(MPI_IN_PLACE, v, 2 * kPairs + 1, MPI_DOUBLE, MPI_MAX, c.comm) != MPI_SUCCESS)
    return ZCOLL_ERR_MPI;
  auto lo = [&](Slot s) { return -v[2 * s]; };
  auto hi = [&](Slot s) { return v[2 * s + 1]; };
  const char* name = zcoll_collective_name(collective);
  if (v[2 * kPairs] != 0) {
    c.arena_agreed = 0;  // the failure may have been a rank's arena (sample)
    const int worst = static_cast<int>(v[2 * kPairs]);
    if (a.rc) return a.rc;  // this rank's own detail stands
    if (lo(kFailed) == hi(kFailed))
      set_error_detail("%s: rank %.0f failed: %s", name, lo(kFailed), zcoll_strerror(worst));
    else
      set_error_detail("%s: ranks %.0f and %.0f (and perhaps some between) failed, one with: %s", name, lo(kFailed),
                       hi(kFailed), zcoll_strerror(worst));
    return worst;
  }
  if (lo(kRoot) != hi(kRoot)) {
    set_error_detail("%s: ranks disagree on the root (from %.0f to %.0f)", name, lo(kRoot), hi(kRoot));
    return ZCOLL_ERR_MISMATCH;
  }
  if (lo(kOp) != hi(kOp)) {
    set_error_detail("%s: ranks disagree on the reduction op", name);
    return ZCOLL_ERR_MISMATCH;
  }
  if (lo(kKind) == 0) return ZCOLL_SUCCESS;  // some rank's type is not float or double: plain MPI everywhere
  if (lo(kKind) != hi(kKind)) {
    set_error_detail("%s: ranks disagree on the datatype (MPI_FLOAT on some, MPI_DOUBLE on others)", name);
    return ZCOLL_ERR_MISMATCH;
  }
  if (lo(kInPlace) != hi(kInPlace)) {  // MPI erroneous; the ranks' buffers would differ in size
    set_error_detail("%s: MPI_IN_PLACE on some ranks only (MPI requires it on every rank or none)", name);
    return ZCOLL_ERR_MISMATCH;
  }
  if (lo(kCount) != hi(kCount)) {
    if (a.count_is_hash) set_error_detail("%s: ranks pass different counts arrays", name);
    else set_error_detail("%s: ranks disagree on the count (from %.0f to %.0f elements)", name, lo(kCount), hi(kCount));
    return ZCOLL_ERR_MISMATCH;
  }
  a.lo = lo(kRange);  // with a rank deferred, the range of the others' shares so far
  a.hi = hi(kRange);
  a.range_deferred = hi(kDeferred) > 0;
  a.rho = hi(kRho);
  a.compress_cost = hi(kCompress);
  a.decompress_cost = hi(kDecompress);
  a.prev_time = hi(kTime);
  a.prev_overhead = hi(kOverhead);
  a.fast_plain = hi(kFastPlain);
  const zcoll_codec_params& p = c.cfg.codec;
  if (p.eb_mode == ZCOLL_EB_ABS) a.eb = std::min(p.eb, DBL_MAX / 4);
  else if (!a.range_deferred) a.eb = codec::rel_to_abs(p.eb, a.lo, a.hi);
  *compress = true;
  return ZCOLL_SUCCESS;
}

int complete_range(zcoll_comm_s& c, Agreement& a) {
  // The others' shares are in lo, hi already: a rank that took its own adds nothing new.
  if (!a.want_range) a.take_range();
  double v[2] = {-a.lo, a.hi};
  if (c.size > 1 && MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_DOUBLE, MPI_MAX, c.comm) != MPI_SUCCESS)
    return ZCOLL_ERR_MPI;
  a.lo = -v[0];
  a.hi = v[1];
  a.range_deferred = false;
  a.eb = codec::rel_to_abs(c.cfg.codec.eb, a.lo, a.hi);
  return ZCOLL_SUCCESS;
}

Decision decide_call(zcoll_comm_s& c, int collective, size_t bytes, zcoll_dtype dt, const Agreement& a) {
  const bool homomorphic = homomorphic_path(c.cfg, collective);
  if (uses_model(c, collective)) return decide(c, collective, bytes, dt, homomorphic, a);
  Decision d;
  d.choice = select_algorithm(c.cfg, collective, c.size, bytes, homomorphic);
  // Configured node-aware: where the topology has nodes to be aware of (else the table's,
  // or plain MPI for the uncompressed baseline).
  if (runs_hierarchical(c, collective)) d.choice.schedule = ZCOLL_ALGO_HIERARCHICAL;
  if (configured_algorithm(c.cfg, collective) == ZCOLL_ALGO_PLAIN_HIERARCHICAL) {
    d.choice.schedule = ZCOLL_ALGO_PLAIN_HIERARCHICAL;
    d.plain = !runs_plain_hierarchical(c, collective);
  }
  return d;
}

void finish_stats(zcoll_comm_s& c, const Decision& d, bool decided_by_model) {
  c.last.t_total = now() - c.call_start;
  if (decided_by_model) {
    c.last.t_predicted = d.t_predicted;
    c.last.t_predicted_plain = d.t_predicted_plain;
    c.last.ratio_predicted = d.rho > 0 ? 1 / d.rho : 0;
    c.last.t_model = d.t_sample;
  }
  c.publish(c.last);
  if (!decided_by_model) return;
  // The model learns from the calls it decided: a probe at once, the others (fast-path plain
  // calls included) from the next agreement.
  const double own = std::max(c.last.t_total - d.t_overhead, 0.0);
  if (d.probe) learn_probe(c, own, d.t_overhead, d.range_deferred);
  else record_time(c, d, own, d.t_overhead);
}

}  // namespace zcoll::coll
