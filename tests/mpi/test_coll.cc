// MPI tests of zcoll's compressed collectives (the contract is the "compressed
// collectives" section of include/zcoll.h).
//
//   zcoll_mpi_coll_tests [section ...]      (no section: all of them)
//
// Sections: accuracy edge special incompressible passthrough errors loop subcomm
// mixedtypes codecs (each described where it is defined below). The harness (data,
// buffers, the checks) is coll_harness.h; each collective's runner and its own
// checks are in coll_<collective>.h.
// A failing check prints "[rank r/p] FAIL file:line [case] ..." on the rank that saw it;
// every rank reaches MPI_Finalize and the exit code is non-zero if any rank failed.
#include <limits>
#include <set>

#include "coll_allgather.h"
#include "coll_alltoall.h"
#include "coll_bcast.h"
#include "coll_gather.h"
#include "coll_harness.h"
#include "coll_scatter.h"

namespace {

std::vector<int> roots_of(int p) {
  std::set<int> s = {0, p / 2, p - 1};
  return {s.begin(), s.end()};
}

unsigned bit(Coll c) { return 1u << c; }
constexpr unsigned kEvery = (1u << kNumColl) - 1;
// The collectives an algorithm is specific to; every collective for AUTO, MPI and CPRP2P.
unsigned mask_of(int algo) {
  unsigned m = 0;
  for (int c = 0; c < kNumColl; ++c)
    if (applies(static_cast<Coll>(c), algo)) m |= bit(static_cast<Coll>(c));
  return m ? m : kEvery;
}
bool specific(int algo) { return mask_of(algo) != kEvery; }

// Elements per block: allgather(v) base, bcast buffer, scatter/gather block, alltoall block.
struct Sizes {
  size_t ag, bc, sg, a2a;
};
constexpr Sizes kStd{6007, 10007, 5003, 2501};  // none divisible by any rank count used
Sizes same(size_t n) { return Sizes{n, n, n, n}; }

// The collectives in `mask`: allgather, allgatherv (uneven counts with zeros and gaps;
// reversed block order in place) and alltoall, also with MPI_IN_PLACE if `in_place`;
// bcast, scatter and gather at each of `roots`, scatter and gather also with
// MPI_IN_PLACE at each of `ip_roots` (if `in_place`).
template <class T>
void run_all(const Group& g, zcoll_comm zc, const Cfg& c, const Sizes& z, unsigned mask, Spec spec, bool in_place,
             const std::vector<int>& roots, const std::vector<int>& ip_roots, int fid0) {
  std::vector<bool> places = in_place ? std::vector<bool>{false, true} : std::vector<bool>{false};
  for (bool ip : places) {
    Call k;
    k.spec = spec;
    k.in_place = ip;
    if (mask & bit(kAllgather)) {
      k.fid = fid0;
      k.count = z.ag;
      run_allgather<T>(g, zc, c, k);
    }
    if (mask & bit(kAllgatherv)) {
      k.fid = fid0 + 1;
      k.count = z.ag;
      run_allgatherv<T>(g, zc, c, k, ip ? 2 : 1, ip);
    }
    if (mask & bit(kAlltoall)) {
      k.fid = fid0 + 2;
      k.count = z.a2a;
      run_alltoall<T>(g, zc, c, k);
    }
  }
  for (bool ip : places)
    for (int root : ip ? ip_roots : roots) {
      Call k;
      k.spec = spec;
      k.root = root;
      k.in_place = ip;
      if ((mask & bit(kBcast)) && !ip) {
        k.fid = fid0 + 2;
        k.count = z.bc;
        run_bcast<T>(g, zc, c, k);
      }
      k.count = z.sg;
      if (mask & bit(kScatter)) {
        k.fid = fid0;
        run_scatter<T>(g, zc, c, k);
      }
      if (mask & bit(kGather)) {
        k.fid = fid0 + 1;
        run_gather<T>(g, zc, c, k);
      }
    }
}

const int kAlgos[] = {ZCOLL_ALGO_AUTO,    ZCOLL_ALGO_CPRP2P,   ZCOLL_ALGO_RING,
                      ZCOLL_ALGO_BRUCK,   ZCOLL_ALGO_BINOMIAL, ZCOLL_ALGO_SCATTER_ALLGATHER,
                      ZCOLL_ALGO_PAIRWISE};

template <class T>
Cfg accuracy_cfg(int algo, int mode) {
  Cfg c;
  c.algo = algo;
  c.mode = mode;
  c.min_bytes = 1024;
  if (std::is_same_v<T, float>) {
    c.eb = mode == ZCOLL_EB_ABS ? 1e-2 : 1e-3;
  } else {  // several chunks per block and two threads, to exercise the parallel codec paths
    c.eb = mode == ZCOLL_EB_ABS ? 1e-4 : 1e-5;
    c.chunk = 2048;
    c.threads = 2;
  }
  return c;
}

// ------------------------------------------------------------------ sections

// A bcast of 512 KiB and a little more: where AUTO switches to scatter-allgather (p > 3)
// and CPRP2P sends the buffer in pieces.
template <class T>
void large_bcast(const Cfg& c, int fid, zcoll_comm zc = nullptr) {
  const bool own = zc == nullptr;
  if (own) zc = make_comm(g_world, c);
  if (!zc) return;
  Call k;
  k.fid = fid;
  k.count = (size_t{512} << 10) / sizeof(T) + 3;
  k.root = g_world.size - 1;
  run_bcast<T>(g_world, zc, c, k);
  if (own) free_comm(zc);
}

// Every collective x every algorithm that applies x float/double x ABS/REL, roots 0,
// p/2 and p-1, MPI_IN_PLACE, counts not divisible by p. A specific algorithm is also
// configured once for the collectives it does not apply to: they must choose their own.
template <class T>
void accuracy_type() {
  const int p = g_world.size;
  const bool f32 = std::is_same_v<T, float>;
  for (int algo : kAlgos)
    for (int mode : {ZCOLL_EB_ABS, ZCOLL_EB_REL}) {
      const Cfg c = accuracy_cfg<T>(algo, mode);
      Ctx cx("accuracy %s", cfg_str(c).c_str());
      zcoll_comm zc = make_comm(g_world, c);
      if (!zc) continue;
      const std::vector<int> roots = roots_of(p);
      const std::vector<int> ip_roots = algo == ZCOLL_ALGO_AUTO ? roots : std::vector<int>{p - 1};
      run_all<T>(g_world, zc, c, kStd, mask_of(algo), Spec::kNone, true, roots, ip_roots, algo);
      if (mask_of(algo) & bit(kBcast)) large_bcast<T>(c, algo);
      if (specific(algo) && mode == ZCOLL_EB_ABS && f32)
        run_all<T>(g_world, zc, c, kStd, kEvery & ~mask_of(algo), Spec::kNone, false, {p / 2}, {}, algo);
      free_comm(zc);
    }
}

void section_accuracy() {
  accuracy_type<float>();
  accuracy_type<double>();
}

// Counts 0 and 1 (2, 3 and p+1 too) with min_bytes 0, so that the compressed path runs
// on them; count 0 with NULL buffers; allgatherv where one rank has all the data; bcast
// lengths around multiples of p (the scatter-allgather bcast splits the buffer in p).
void section_edge() {
  const int p = g_world.size;
  for (int algo : kAlgos)
    for (int mode : {ZCOLL_EB_ABS, ZCOLL_EB_REL}) {
      if (mode == ZCOLL_EB_REL && specific(algo)) continue;
      Cfg c = accuracy_cfg<float>(algo, mode);
      c.min_bytes = 0;
      Ctx cx("edge %s", cfg_str(c).c_str());
      zcoll_comm zc = make_comm(g_world, c);
      if (!zc) continue;
      const unsigned mask = mask_of(algo);
      run_all<float>(g_world, zc, c, same(0), mask, Spec::kNone, true, {p - 1}, {p - 1}, algo);
      run_all<float>(g_world, zc, c, same(1), mask, Spec::kNone, true,
                     algo == ZCOLL_ALGO_AUTO ? roots_of(p) : std::vector<int>{p / 2}, {p - 1}, algo);
      if (mode == ZCOLL_EB_ABS) {
        run_all<double>(g_world, zc, c, same(1), mask, Spec::kNone, false, {p - 1}, {}, algo);
        if (algo == ZCOLL_ALGO_AUTO)
          for (size_t n : {size_t{2}, size_t{3}, static_cast<size_t>(p) + 1})
            run_all<float>(g_world, zc, c, same(n), mask, Spec::kNone, false, {p / 2}, {}, algo);
        if (!specific(algo)) {  // count 0, NULL buffers everywhere
          Call k;
          k.null_bufs = true;
          k.root = p - 1;
          run_allgather<float>(g_world, zc, c, k);
          run_allgatherv<float>(g_world, zc, c, k, 0, false);
          run_bcast<float>(g_world, zc, c, k);
          run_scatter<float>(g_world, zc, c, k);
          run_gather<float>(g_world, zc, c, k);
          run_alltoall<double>(g_world, zc, c, k);
        }
        if (mask & bit(kAllgatherv)) {  // one rank has every element, the others none
          Call k;
          k.count = 3001;
          k.fid = algo;
          run_allgatherv<float>(g_world, zc, c, k, 3, false);
          k.in_place = true;
          run_allgatherv<double>(g_world, zc, c, k, 3, true);
        }
      }
      free_comm(zc);
    }
  for (int algo : {ZCOLL_ALGO_SCATTER_ALLGATHER, ZCOLL_ALGO_BINOMIAL, ZCOLL_ALGO_CPRP2P}) {
    Cfg c = accuracy_cfg<float>(algo, ZCOLL_EB_ABS);
    c.min_bytes = 0;
    Ctx cx("edge bcast lengths %s", cfg_str(c).c_str());
    zcoll_comm zc = make_comm(g_world, c);
    if (!zc) continue;
    for (size_t n : {static_cast<size_t>(p) - 1, static_cast<size_t>(p), static_cast<size_t>(3 * p + 1),
                     size_t{4096} * static_cast<size_t>(p) + 1}) {
      Call k;
      k.count = n;
      k.root = p / 2;
      k.fid = static_cast<int>(n);
      run_bcast<float>(g_world, zc, c, k);
      run_bcast<double>(g_world, zc, c, k);
    }
    free_comm(zc);
  }
  // Blocks of several pieces (a piece is 4 chunks; chunk_len 64 makes it 256 values), the
  // last one short, on the piece engine's ring allgather(v) and pairwise alltoall: each
  // step interleaves sends, receives and decompression.
  for (int algo : {ZCOLL_ALGO_RING, ZCOLL_ALGO_PAIRWISE})
    for (int mode : {ZCOLL_EB_ABS, ZCOLL_EB_REL}) {
      Cfg c = accuracy_cfg<float>(algo, mode);
      c.chunk = 64;
      Ctx cx("edge pieces %s", cfg_str(c).c_str());
      zcoll_comm zc = make_comm(g_world, c);
      if (!zc) continue;
      const unsigned mask = mask_of(algo);
      for (size_t n : {size_t{1001}, size_t{2048}}) {
        if (mode == ZCOLL_EB_ABS) run_all<float>(g_world, zc, c, same(n), mask, Spec::kNone, true, {}, {}, algo);
        else run_all<double>(g_world, zc, c, same(n), mask, Spec::kNone, true, {}, {}, algo + 10);
      }
      free_comm(zc);
    }
}

// NaN (several payloads, signalling, negative), +Inf, -Inf and -0.0 inside the data, on
// the compressed path: NaN and Inf come back bit for bit; -0.0 comes back as a zero
// within eb (include/zcoll.h promises its sign only when the value is stored exactly).
// Also the REL bound of fields without a range (constant, no finite value at all).
void section_special() {
  const int p = g_world.size;
  const Sizes z{3001, 7001, 2003, 1201};
  for (int algo : kAlgos)
    for (int mode : {ZCOLL_EB_ABS, ZCOLL_EB_REL}) {
      const Cfg c = accuracy_cfg<float>(algo, mode);
      Ctx cx("special %s", cfg_str(c).c_str());
      zcoll_comm zc = make_comm(g_world, c);
      if (!zc) continue;
      const bool gen_algo = !specific(algo);
      run_all<float>(g_world, zc, c, z, mask_of(algo), Spec::kSpecial, algo == ZCOLL_ALGO_AUTO, {p - 1}, {p - 1}, algo);
      if (gen_algo)
        run_all<double>(g_world, zc, c, z, kEvery, Spec::kSpecial, false, {p / 2}, {}, algo);
      if (mode == ZCOLL_EB_REL && (algo == ZCOLL_ALGO_AUTO || gen_algo)) {
        run_all<float>(g_world, zc, c, same(1001), kEvery, Spec::kConst, false, {p - 1}, {}, algo);
        run_all<double>(g_world, zc, c, same(1001), kEvery, Spec::kAllNan, false, {p - 1}, {}, algo);
      }
      free_comm(zc);
    }
}

// The real fields with a bound so tight that every value is stored exactly: the codec's
// worst case, where compressed blocks are as large as raw ones.
void section_incompressible() {
  const int p = g_world.size;
  for (int algo : kAlgos)
    for (int t = 0; t < 2; ++t) {
      Cfg c;
      c.algo = algo;
      c.mode = ZCOLL_EB_ABS;
      c.eb = 1e-30;
      c.min_bytes = 1024;
      c.chunk = t ? 1024 : 0;
      Ctx cx("incompressible %s", cfg_str(c).c_str());
      zcoll_comm zc = make_comm(g_world, c);
      if (!zc) continue;
      if (t == 0)
        run_all<float>(g_world, zc, c, kStd, mask_of(algo), Spec::kNone, false, {p - 1}, {}, algo);
      else
        run_all<double>(g_world, zc, c, kStd, mask_of(algo), Spec::kNone, false, {p / 2}, {}, algo);
      if (mask_of(algo) & bit(kBcast)) {
        if (t == 0)
          large_bcast<float>(c, algo, zc);
        else
          large_bcast<double>(c, algo, zc);
      }
      free_comm(zc);
    }
}

// Types other than MPI_FLOAT/MPI_DOUBLE, float messages below min_bytes, and
// ZCOLL_ALGO_MPI: plain MPI, bit-exact, stats.compressed == 0.
void section_passthrough() {
  const int p = g_world.size;
  for (int algo : {ZCOLL_ALGO_AUTO, ZCOLL_ALGO_MPI, ZCOLL_ALGO_CPRP2P, ZCOLL_ALGO_RING, ZCOLL_ALGO_BRUCK,
                   ZCOLL_ALGO_BINOMIAL, ZCOLL_ALGO_SCATTER_ALLGATHER, ZCOLL_ALGO_PAIRWISE}) {
    Cfg c;
    c.algo = algo;
    c.eb = 1e-2;
    c.min_bytes = 0;  // would compress anything compressible
    Ctx cx("passthrough types %s", cfg_str(c).c_str());
    zcoll_comm zc = make_comm(g_world, c);
    if (!zc) continue;
    const bool a = algo == ZCOLL_ALGO_AUTO;
    const unsigned mask = mask_of(algo);
    const std::vector<int> roots = a ? roots_of(p) : std::vector<int>{p - 1};
    run_all<int32_t>(g_world, zc, c, Sizes{3001, 5003, 2001, 1001}, mask, Spec::kNone, a, roots, {p / 2}, algo);
    run_all<char>(g_world, zc, c, Sizes{3001, 5003, 2001, 1001}, mask, Spec::kNone, a, roots, {p / 2}, algo);
    run_all<F3>(g_world, zc, c, Sizes{1001, 3001, 701, 301}, mask, Spec::kNone, a, roots, {p / 2}, algo);
    if (algo == ZCOLL_ALGO_MPI) {  // floats, large, NaN/Inf/-0.0 included: all plain and exact
      run_all<float>(g_world, zc, c, kStd, kEvery, Spec::kSpecial, true, roots_of(p), {p - 1}, algo);
      run_all<double>(g_world, zc, c, kStd, kEvery, Spec::kNone, false, {p / 2}, {}, algo);
      run_all<float>(g_world, zc, c, same(0), kEvery, Spec::kNone, false, {p - 1}, {}, algo);
      run_all<double>(g_world, zc, c, same(1), kEvery, Spec::kNone, false, {p - 1}, {}, algo);
    }
    free_comm(zc);
  }
  // Below the default min_bytes (65536 bytes per rank): plain MPI, bit-exact.
  for (int algo : kAlgos) {
    Cfg c;
    c.algo = algo;
    c.min_bytes = ZCOLL_DEFAULT_MIN_BYTES;
    c.eb = 1.0;  // coarse: any compression would show
    Ctx cx("passthrough small %s", cfg_str(c).c_str());
    zcoll_config cfg;
    zcoll_config_init(&cfg);  // min_bytes left at its default
    cfg.codec.eb = c.eb;
    cfg.algorithm = c.algo;
    zcoll_comm zc = nullptr;
    EXPECT_RC(zcoll_comm_create(MPI_COMM_WORLD, &cfg, &zc), ZCOLL_SUCCESS);
    if (!zc) continue;
    const size_t f = 65536 / 4 - 1, d = 65536 / 8 - 1;  // one element short of min_bytes
    const bool a = algo == ZCOLL_ALGO_AUTO;
    run_all<float>(g_world, zc, c, Sizes{f, f, f, 1000}, mask_of(algo), Spec::kSpecial, a, {p - 1}, {p / 2}, algo);
    if (!specific(algo))
      run_all<double>(g_world, zc, c, Sizes{d, d, 1000, 1000}, kEvery, Spec::kNone, false, {0}, {}, algo);
    free_comm(zc);
  }
  // The threshold itself: min_bytes = 4000 bytes per rank compresses 1000 floats, not 999.
  for (int algo : {ZCOLL_ALGO_AUTO, ZCOLL_ALGO_CPRP2P}) {
    Cfg c;
    c.algo = algo;
    c.min_bytes = 4000;
    c.eb = 1e-2;
    Ctx cx("passthrough threshold %s", cfg_str(c).c_str());
    zcoll_comm zc = make_comm(g_world, c);
    if (!zc) continue;
    run_all<float>(g_world, zc, c, same(1000), kEvery, Spec::kNone, false, {p - 1}, {}, algo);
    run_all<float>(g_world, zc, c, same(999), kEvery, Spec::kNone, false, {p - 1}, {}, algo);
    run_all<double>(g_world, zc, c, same(500), kEvery, Spec::kNone, false, {p / 2}, {}, algo);
    run_all<double>(g_world, zc, c, same(499), kEvery, Spec::kNone, false, {p / 2}, {}, algo);
    free_comm(zc);
  }
}

// An error must come back on every rank (each rank checks its own code; a rank that
// went on to communicate would leave the others waiting, which the test's timeout catches).
void expect_everywhere(int rc, int want, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
void expect_everywhere(int rc, int want, const char* fmt, ...) {
  char what[256];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  Ctx cx("%s", what);
  EXPECT_RC(rc, want);
}

template <class T>
void bad_args(zcoll_comm zc) {
  Ctx cx("bad arguments %s", Ty<T>::name());
  const int p = g_world.size;
  const MPI_Datatype t = Ty<T>::mpi();
  const size_t n = 4096;
  std::vector<T> send(n * static_cast<size_t>(p)), recv(n * static_cast<size_t>(p));
  gen(send.data(), 0, g_world.rank, next_salt(), send.size());
  std::vector<int> counts(static_cast<size_t>(p), static_cast<int>(n)), displs(static_cast<size_t>(p));
  for (int i = 0; i < p; ++i) displs[static_cast<size_t>(i)] = i * static_cast<int>(n);
  const int N = static_cast<int>(n);
  // A NULL zcoll_comm.
  expect_everywhere(zcoll_allgather(send.data(), N, t, recv.data(), N, t, nullptr), ZCOLL_ERR_ARG,
                    "allgather NULL comm");
  expect_everywhere(zcoll_allgatherv(send.data(), N, t, recv.data(), counts.data(), displs.data(), t, nullptr),
                    ZCOLL_ERR_ARG, "allgatherv NULL comm");
  expect_everywhere(zcoll_bcast(send.data(), N, t, 0, nullptr), ZCOLL_ERR_ARG, "bcast NULL comm");
  expect_everywhere(zcoll_scatter(send.data(), N, t, recv.data(), N, t, 0, nullptr), ZCOLL_ERR_ARG,
                    "scatter NULL comm");
  expect_everywhere(zcoll_gather(send.data(), N, t, recv.data(), N, t, 0, nullptr), ZCOLL_ERR_ARG, "gather NULL comm");
  expect_everywhere(zcoll_alltoall(send.data(), N, t, recv.data(), N, t, nullptr), ZCOLL_ERR_ARG, "alltoall NULL comm");
  // Negative counts on every rank.
  expect_everywhere(zcoll_allgather(send.data(), -1, t, recv.data(), -1, t, zc), ZCOLL_ERR_ARG, "allgather count -1");
  expect_everywhere(zcoll_allgather(send.data(), N, t, recv.data(), -5, t, zc), ZCOLL_ERR_ARG,
                    "allgather recvcount -5");
  expect_everywhere(zcoll_allgather(MPI_IN_PLACE, 0, t, recv.data(), -1, t, zc), ZCOLL_ERR_ARG,
                    "allgather in place recvcount -1");
  {
    std::vector<int> neg = counts;
    neg[static_cast<size_t>(p - 1)] = -1;
    expect_everywhere(
        zcoll_allgatherv(send.data(), g_world.rank == p - 1 ? -1 : N, t, recv.data(), neg.data(), displs.data(), t, zc),
        ZCOLL_ERR_ARG, "allgatherv a recvcount -1");
    expect_everywhere(zcoll_allgatherv(send.data(), -1, t, recv.data(), counts.data(), displs.data(), t, zc),
                      ZCOLL_ERR_ARG, "allgatherv sendcount -1");
  }
  expect_everywhere(zcoll_bcast(send.data(), -1, t, 0, zc), ZCOLL_ERR_ARG, "bcast count -1");
  expect_everywhere(zcoll_scatter(send.data(), -1, t, recv.data(), -1, t, 0, zc), ZCOLL_ERR_ARG, "scatter count -1");
  expect_everywhere(zcoll_scatter(send.data(), -1, t, MPI_IN_PLACE, -1, t, p - 1, zc), ZCOLL_ERR_ARG,
                    "scatter count -1, in place at the root");
  expect_everywhere(zcoll_gather(send.data(), -1, t, recv.data(), -1, t, p - 1, zc), ZCOLL_ERR_ARG, "gather count -1");
  expect_everywhere(zcoll_alltoall(send.data(), -1, t, recv.data(), -1, t, zc), ZCOLL_ERR_ARG, "alltoall count -1");
  expect_everywhere(zcoll_alltoall(MPI_IN_PLACE, 0, t, recv.data(), -1, t, zc), ZCOLL_ERR_ARG,
                    "alltoall in place count -1");
  // Root out of range.
  for (int root : {p, -1, p + 7}) {
    expect_everywhere(zcoll_bcast(send.data(), N, t, root, zc), ZCOLL_ERR_ARG, "bcast root %d", root);
    expect_everywhere(zcoll_scatter(send.data(), N, t, recv.data(), N, t, root, zc), ZCOLL_ERR_ARG, "scatter root %d",
                      root);
    expect_everywhere(zcoll_gather(send.data(), N, t, recv.data(), N, t, root, zc), ZCOLL_ERR_ARG, "gather root %d",
                      root);
  }
  // NULL buffers with data, on every rank.
  expect_everywhere(zcoll_bcast(nullptr, N, t, 0, zc), ZCOLL_ERR_ARG, "bcast NULL buffer");
  expect_everywhere(zcoll_allgather(send.data(), N, t, nullptr, N, t, zc), ZCOLL_ERR_ARG, "allgather NULL recvbuf");
  expect_everywhere(zcoll_allgather(nullptr, N, t, recv.data(), N, t, zc), ZCOLL_ERR_ARG, "allgather NULL sendbuf");
  expect_everywhere(zcoll_allgatherv(send.data(), N, t, nullptr, counts.data(), displs.data(), t, zc), ZCOLL_ERR_ARG,
                    "allgatherv NULL recvbuf");
  expect_everywhere(zcoll_allgatherv(send.data(), N, t, recv.data(), nullptr, displs.data(), t, zc), ZCOLL_ERR_ARG,
                    "allgatherv NULL recvcounts");
  expect_everywhere(zcoll_allgatherv(send.data(), N, t, recv.data(), counts.data(), nullptr, t, zc), ZCOLL_ERR_ARG,
                    "allgatherv NULL displs");
  expect_everywhere(zcoll_scatter(send.data(), N, t, nullptr, N, t, 0, zc), ZCOLL_ERR_ARG, "scatter NULL recvbuf");
  expect_everywhere(zcoll_gather(nullptr, N, t, recv.data(), N, t, 0, zc), ZCOLL_ERR_ARG, "gather NULL sendbuf");
  expect_everywhere(zcoll_alltoall(nullptr, N, t, recv.data(), N, t, zc), ZCOLL_ERR_ARG, "alltoall NULL sendbuf");
  expect_everywhere(zcoll_alltoall(send.data(), N, t, nullptr, N, t, zc), ZCOLL_ERR_ARG, "alltoall NULL recvbuf");
}

void section_errors() {
  const int p = g_world.size;
  {
    Ctx cx("zcoll_comm_create");
    zcoll_config cfg;
    zcoll_config_init(&cfg);
    cfg.codec.eb = 1e-3;
    zcoll_comm zc = nullptr;
    expect_everywhere(zcoll_comm_create(MPI_COMM_NULL, &cfg, &zc), ZCOLL_ERR_ARG, "MPI_COMM_NULL");
    const double bad_eb[] = {0.0,
                             -0.0,
                             -1e-3,
                             -INFINITY,
                             INFINITY,
                             std::numeric_limits<double>::quiet_NaN(),
                             -std::numeric_limits<double>::quiet_NaN()};
    for (int mode : {ZCOLL_EB_ABS, ZCOLL_EB_REL})
      for (double eb : bad_eb) {
        zcoll_config b = cfg;
        b.codec.eb_mode = mode;
        b.codec.eb = eb;
        char what[96];
        std::snprintf(what, sizeof what, "%s eb=%g", mode == ZCOLL_EB_REL ? "REL" : "ABS", eb);
        expect_everywhere(zcoll_comm_create(MPI_COMM_WORLD, &b, &zc), ZCOLL_ERR_ARG, "%s", what);
      }
    zcoll_config b = cfg;
    b.algorithm = 99;
    expect_everywhere(zcoll_comm_create(MPI_COMM_WORLD, &b, &zc), ZCOLL_ERR_ARG, "algorithm 99");
    b.algorithm = -1;
    expect_everywhere(zcoll_comm_create(MPI_COMM_WORLD, &b, &zc), ZCOLL_ERR_ARG, "algorithm -1");
    b = cfg;
    b.codec.chunk_len = 33;
    expect_everywhere(zcoll_comm_create(MPI_COMM_WORLD, &b, &zc), ZCOLL_ERR_ARG, "chunk_len 33");
    b = cfg;
    b.codec.eb_mode = 7;
    expect_everywhere(zcoll_comm_create(MPI_COMM_WORLD, &b, &zc), ZCOLL_ERR_ARG, "eb_mode 7");
    expect_everywhere(zcoll_comm_create(MPI_COMM_WORLD, nullptr, &zc), ZCOLL_ERR_ARG, "NULL config");
    expect_everywhere(zcoll_comm_create(MPI_COMM_WORLD, &cfg, nullptr), ZCOLL_ERR_ARG, "NULL handle");
    zcoll_stats st;
    expect_everywhere(zcoll_last_stats(nullptr, &st), ZCOLL_ERR_ARG, "zcoll_last_stats(NULL comm)");
  }
  for (int algo : {ZCOLL_ALGO_AUTO, ZCOLL_ALGO_CPRP2P, ZCOLL_ALGO_MPI}) {
    Cfg c;
    c.algo = algo;
    c.mode = ZCOLL_EB_REL;
    c.eb = 1e-3;
    c.min_bytes = 1024;
    Ctx cx("errors %s", cfg_str(c).c_str());
    zcoll_comm zc = make_comm(g_world, c);
    if (!zc) continue;
    // A valid call first, so that there is state the errors must not disturb.
    run_all<float>(g_world, zc, c, same(3001), kEvery, Spec::kNone, false, {p - 1}, {}, algo);
    bad_args<float>(zc);
    bad_args<double>(zc);
    bad_args<int32_t>(zc);
    expect_everywhere(zcoll_last_stats(zc, nullptr), ZCOLL_ERR_ARG, "zcoll_last_stats(NULL stats)");
    // The communicator still works: every collective, roots, in place.
    run_all<float>(g_world, zc, c, kStd, kEvery, Spec::kNone, true, roots_of(p), {p - 1}, algo);
    run_all<double>(g_world, zc, c, same(3001), kEvery, Spec::kNone, false, {0}, {}, algo);
    free_comm(zc);
  }
}

// The comm reuses its buffers: the same collective 20 times with new data each time,
// sizes growing and shrinking, float and double interleaved, roots moving.
void loop_calls(zcoll_comm zc, const Cfg& c, Coll coll, int iters) {
  const int p = g_world.size;
  Ctx cx("loop of %d %s", iters, coll_name(coll));
  for (int it = 0; it < iters; ++it) {
    Ctx ci("iteration %d", it);
    Call k;
    k.fid = it;
    k.count = 1500 + static_cast<size_t>((it * 2311) % 5000);
    k.root = it % p;
    k.in_place = it % 3 == 2;
    if (coll == kBcast) k.count *= 2;
    if (coll == kAlltoall) k.count /= 2;
    auto run = [&](auto type) {
      using T = decltype(type);
      if (coll == kAllgather) run_allgather<T>(g_world, zc, c, k);
      if (coll == kAllgatherv) run_allgatherv<T>(g_world, zc, c, k, 1 + it % 2, it % 5 == 0);
      if (coll == kBcast) run_bcast<T>(g_world, zc, c, k);
      if (coll == kScatter) run_scatter<T>(g_world, zc, c, k);
      if (coll == kGather) run_gather<T>(g_world, zc, c, k);
      if (coll == kAlltoall) run_alltoall<T>(g_world, zc, c, k);
    };
    it % 4 == 3 ? run(double{}) : run(float{});
  }
}

void section_loop() {
  const int p = g_world.size;
  {
    const Cfg c = accuracy_cfg<float>(ZCOLL_ALGO_AUTO, ZCOLL_EB_ABS);
    Ctx cx("loop %s", cfg_str(c).c_str());
    zcoll_comm zc = make_comm(g_world, c);
    if (zc) {
      for (int coll = 0; coll < kNumColl; ++coll) loop_calls(zc, c, static_cast<Coll>(coll), 20);
      free_comm(zc);
    }
  }
  for (int algo : {ZCOLL_ALGO_AUTO, ZCOLL_ALGO_CPRP2P}) {
    const Cfg c = accuracy_cfg<float>(algo, algo == ZCOLL_ALGO_AUTO ? ZCOLL_EB_REL : ZCOLL_EB_ABS);
    Ctx cx("loop %s", cfg_str(c).c_str());
    zcoll_comm zc = make_comm(g_world, c);
    if (!zc) continue;
    const int iters = 20;
    if (algo == ZCOLL_ALGO_AUTO) {
      loop_calls(zc, c, kAllgatherv, iters);
      loop_calls(zc, c, kBcast, iters);
      loop_calls(zc, c, kScatter, iters);
    } else {
      loop_calls(zc, c, kAllgather, iters);
      loop_calls(zc, c, kGather, iters);
      loop_calls(zc, c, kAlltoall, iters);
    }
    free_comm(zc);
  }
  // Several communicators alive at once, used in turns (each has its own buffers).
  {
    Ctx cx("loop: three communicators interleaved");
    const Cfg a = accuracy_cfg<float>(ZCOLL_ALGO_AUTO, ZCOLL_EB_ABS),
              b = accuracy_cfg<double>(ZCOLL_ALGO_AUTO, ZCOLL_EB_REL),
              d = accuracy_cfg<float>(ZCOLL_ALGO_CPRP2P, ZCOLL_EB_REL);
    zcoll_comm za = make_comm(g_world, a), zb = make_comm(g_world, b), zd = make_comm(g_world, d);
    if (za && zb && zd)
      for (int it = 0; it < 5; ++it) {
        Call k;
        k.fid = it;
        k.count = 2000 + static_cast<size_t>(it) * 1000;
        k.root = (it * 3) % p;
        run_allgather<float>(g_world, za, a, k);
        run_bcast<double>(g_world, zb, b, k);
        run_alltoall<float>(g_world, zd, d, k);
        run_gather<float>(g_world, za, a, k);
      }
    if (za) free_comm(za);
    if (zb) free_comm(zb);
    if (zd) free_comm(zd);
  }
}

// A communicator other than MPI_COMM_WORLD: two halves, ranks in reverse order. And
// zcoll works on its own duplicate: a receive the application has posted on the same
// communicator (any source, any tag) must not catch zcoll's messages.
void section_subcomm() {
  const int r = g_world.rank, p = g_world.size;
  {
    Ctx cx("isolation: MPI_Irecv(MPI_ANY_SOURCE, MPI_ANY_TAG) pending on MPI_COMM_WORLD during collectives");
    int token = -1;
    MPI_Request req;
    MPI_Irecv(&token, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &req);
    for (int algo : {ZCOLL_ALGO_AUTO, ZCOLL_ALGO_CPRP2P}) {
      const Cfg c = accuracy_cfg<float>(algo, ZCOLL_EB_REL);
      zcoll_comm zc = make_comm(g_world, c);
      if (!zc) continue;
      run_all<float>(g_world, zc, c, Sizes{2001, 4001, 1001, 501}, kEvery, Spec::kNone, false, {p - 1}, {}, algo);
      free_comm(zc);
    }
    int flag = 0;
    MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
    EXPECT(!flag, "the application's pending receive matched a message (token %d)", token);
    MPI_Barrier(MPI_COMM_WORLD);  // everyone has looked before anyone sends
    const int mine = 1000 + r;
    MPI_Send(&mine, 1, MPI_INT, (r + 1) % p, 77, MPI_COMM_WORLD);
    MPI_Status st;
    if (!flag) MPI_Wait(&req, &st);
    EXPECT(token == 1000 + (r - 1 + p) % p && (flag || st.MPI_TAG == 77),
           "the application's receive got %d (expected %d from rank %d)", token, 1000 + (r - 1 + p) % p,
           (r - 1 + p) % p);
  }
  {
    Ctx cx("zcoll_comm_free of a NULL handle");
    zcoll_comm none = nullptr;
    const int rc = zcoll_comm_free(&none);
    EXPECT(rc == ZCOLL_SUCCESS || rc == ZCOLL_ERR_ARG, "returned %d", rc);
    EXPECT(none == nullptr, "the handle is no longer NULL");
    EXPECT_RC(zcoll_comm_free(nullptr), ZCOLL_ERR_ARG);
  }
  MPI_Comm sub;
  MPI_Comm_split(MPI_COMM_WORLD, r % 2, -r, &sub);
  Group g{sub, 0, 1, 1 + r % 2};
  MPI_Comm_rank(sub, &g.rank);
  MPI_Comm_size(sub, &g.size);
  for (int algo : kAlgos)
    for (int mode : {ZCOLL_EB_ABS, ZCOLL_EB_REL}) {
      if (mode == ZCOLL_EB_REL && algo != ZCOLL_ALGO_AUTO) continue;
      const Cfg c = accuracy_cfg<float>(algo, mode);
      Ctx cx("subcomm (color %d, size %d, rank %d) %s", r % 2, g.size, g.rank, cfg_str(c).c_str());
      zcoll_comm zc = make_comm(g, c);
      if (!zc) continue;
      const bool a = algo == ZCOLL_ALGO_AUTO;
      run_all<float>(g, zc, c, Sizes{4001, 9001, 3001, 1501}, mask_of(algo), Spec::kNone, a,
                     a ? roots_of(g.size) : std::vector<int>{g.size - 1}, {g.size / 2}, algo);
      if (a && mode == ZCOLL_EB_ABS)
        run_all<double>(g, zc, c, Sizes{4001, 9001, 3001, 1501}, kEvery, Spec::kNone, false, {0}, {}, algo);
      free_comm(zc);
    }
  MPI_Comm_free(&sub);
  // Halves of different sizes (an odd rank count) made different numbers of calls, so the
  // ranks' salts differ now; the sections after this one need them equal again.
  MPI_Allreduce(MPI_IN_PLACE, &g_salt, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
}

// Blocks s = 0..p-1 of e (n each): every other one of the 2n floats rank s generated
// from its element `offset` on (what a strided sendtype picks); bit-exact for this rank.
void expect_strided(Expect<float>& e, int fid, uint64_t salt, size_t n, size_t offset) {
  std::vector<float> tmp(2 * n);
  for (int s = 0; s < g_world.size; ++s) {
    gen(tmp.data(), fid, s, salt, 2 * n, offset);
    for (size_t i = 0; i < n; ++i) *e.at(static_cast<size_t>(s) * n + i) = tmp[2 * i];
    e.mark(static_cast<size_t>(s) * n, n, s == g_world.rank);
  }
}

// f() under a Watchdog named `what`.
int watched(const char* what, const std::function<int()>& f) {
  Watchdog w(what);
  return f();
}

// Send and receive datatypes that differ while their type signatures match (legal MPI:
// a strided vector of floats sent, plain MPI_FLOATs received; MPI_FLOAT at the root and
// contiguous(n, MPI_FLOAT) elsewhere). MPI's semantics must hold whether or not zcoll
// compresses.
void section_mixedtypes() {
  const int p = g_world.size, r = g_world.rank;
  const size_t n = 3001;
  const int N = static_cast<int>(n);
  MPI_Datatype strided, strided_block, block;
  MPI_Type_vector(N, 1, 2, MPI_FLOAT, &strided);  // n floats, every other one of 2n
  MPI_Type_create_resized(strided, 0, static_cast<MPI_Aint>(2 * n * sizeof(float)), &strided_block);
  MPI_Type_commit(&strided);
  MPI_Type_commit(&strided_block);
  MPI_Type_contiguous(N, MPI_FLOAT, &block);
  MPI_Type_commit(&block);
  // ZCOLL_ALGO_MPI first: plain MPI calls, which validates the expectations themselves.
  for (int algo : {ZCOLL_ALGO_MPI, ZCOLL_ALGO_AUTO, ZCOLL_ALGO_CPRP2P}) {
    Cfg c = accuracy_cfg<float>(algo, ZCOLL_EB_ABS);
    Ctx cx("mixed types %s", cfg_str(c).c_str());
    zcoll_comm zc = make_comm(g_world, c);
    if (!zc) continue;
    const double eb = c.eb;  // ABS: the bound whether or not zcoll compresses
    {
      Ctx c1("allgather: sendtype vector(n,1,2,MPI_FLOAT) x 1, recvtype MPI_FLOAT x n (n=%zu)", n);
      const uint64_t salt = next_salt();
      std::vector<float> send(2 * n);
      gen(send.data(), 0, r, salt, 2 * n);
      Buf<float> recv(n * static_cast<size_t>(p));
      EXPECT_RC(watched("mixed types: allgather",
                        [&] { return zcoll_allgather(send.data(), 1, strided, recv.data(), N, MPI_FLOAT, zc); }),
                ZCOLL_SUCCESS);
      Expect<float> e(n * static_cast<size_t>(p));
      expect_strided(e, 0, salt, n, 0);
      verify(recv, e, eb, "recvbuf");
    }
    {
      Ctx c1("alltoall: sendtype resized vector(n,1,2,MPI_FLOAT) x 1, recvtype MPI_FLOAT x n (n=%zu)", n);
      const uint64_t salt = next_salt();
      std::vector<float> send(2 * n * static_cast<size_t>(p));
      gen(send.data(), 1, r, salt, send.size());
      Buf<float> recv(n * static_cast<size_t>(p));
      EXPECT_RC(watched("mixed types: alltoall",
                        [&] { return zcoll_alltoall(send.data(), 1, strided_block, recv.data(), N, MPI_FLOAT, zc); }),
                ZCOLL_SUCCESS);
      Expect<float> e(n * static_cast<size_t>(p));
      expect_strided(e, 1, salt, n, 2 * n * static_cast<size_t>(r));
      verify(recv, e, eb, "recvbuf");
    }
    {
      const int root = p - 1;
      Ctx c1("bcast: MPI_FLOAT x n at the root, contiguous(n, MPI_FLOAT) x 1 elsewhere (n=%zu, root %d)", n, root);
      const uint64_t salt = next_salt();
      Buf<float> buf(n);
      gen(buf.data(), 2, r == root ? root : r + 50, salt, n);
      EXPECT_RC(watched("mixed types: bcast",
                        [&] {
                          return zcoll_bcast(buf.data(), r == root ? N : 1, r == root ? MPI_FLOAT : block, root, zc);
                        }),
                ZCOLL_SUCCESS);
      Expect<float> e(n);
      gen(e.at(0), 2, root, salt, n);
      e.mark(0, n, r == root);
      verify(buf, e, eb, "buffer");
    }
    {
      const int root = p / 2;
      Ctx c1("scatter: MPI_FLOAT x n at the root, recvtype contiguous(n, MPI_FLOAT) x 1 elsewhere (n=%zu, root %d)", n,
             root);
      const uint64_t salt = next_salt();
      std::vector<float> send(r == root ? n * static_cast<size_t>(p) : 1);
      if (r == root) gen(send.data(), 0, root, salt, send.size());
      Buf<float> recv(n);
      EXPECT_RC(watched("mixed types: scatter",
                        [&] {
                          return zcoll_scatter(send.data(), N, MPI_FLOAT, recv.data(), r == root ? N : 1,
                                               r == root ? MPI_FLOAT : block, root, zc);
                        }),
                ZCOLL_SUCCESS);
      Expect<float> e(n);
      gen(e.at(0), 0, root, salt, n, n * static_cast<size_t>(r));
      e.mark(0, n, r == root);
      verify(recv, e, eb, "recvbuf");
    }
    {
      const int root = p - 1;
      Ctx c1("gather: sendtype contiguous(n, MPI_FLOAT) x 1 off the root, MPI_FLOAT x n at the root (n=%zu, root %d)",
             n, root);
      const uint64_t salt = next_salt();
      std::vector<float> send(n);
      gen(send.data(), 1, r, salt, n);
      Buf<float> recv(r == root ? n * static_cast<size_t>(p) : 0);
      EXPECT_RC(watched("mixed types: gather",
                        [&] {
                          return zcoll_gather(send.data(), r == root ? N : 1, r == root ? MPI_FLOAT : block,
                                              recv.data(), N, MPI_FLOAT, root, zc);
                        }),
                ZCOLL_SUCCESS);
      Expect<float> e(recv.size());
      if (r == root)
        for (int s = 0; s < p; ++s) {
          gen(e.at(static_cast<size_t>(s) * n), 1, s, salt, n);
          e.mark(static_cast<size_t>(s) * n, n, s == r);
        }
      verify(recv, e, eb, "recvbuf");
    }
    free_comm(zc);
  }
  MPI_Type_free(&strided);
  MPI_Type_free(&strided_block);
  MPI_Type_free(&block);
}

// codecs: the linear-predictor codecs (ZCOLL_CODEC_LPBYTE, ZCOLL_CODEC_LPBIT) and szx through the
// collectives, on real-field slices, float and double: bcast and alltoall (checked as in
// every other section), and allreduce MPI_SUM, which with these codecs runs
// decompress-operate-compress (ZCOLL_REDUCTION_AUTO): every element within p x eps of the
// exact sum (+ the element type's rounding, p u sum|x_i| + u |sum|), eps = the REL bound
// over every rank's input, and the same result on every rank. ZCOLL_REDUCTION_HOMOMORPHIC
// with them, and an unknown codec, are refused by zcoll_comm_create (ZCOLL_ERR_CODEC).
template <class T>
void codec_allreduce(zcoll_comm zc, const Cfg& c, int fid, size_t n) {
  Ctx cx("allreduce MPI_SUM %s count=%zu", Ty<T>::name(), n);
  const int p = g_world.size, r = g_world.rank;
  const uint64_t salt = next_salt();
  std::vector<std::vector<T>> in(static_cast<size_t>(p), std::vector<T>(n));
  for (int s = 0; s < p; ++s) gen(in[static_cast<size_t>(s)].data(), fid, owner_id(g_world, s), salt, n);
  Buf<T> out(n);
  EXPECT_RC(zcoll_allreduce(in[static_cast<size_t>(r)].data(), out.data(), static_cast<int>(n), Ty<T>::mpi(), MPI_SUM, zc),
            ZCOLL_SUCCESS);
  zcoll_stats st;
  EXPECT_RC(zcoll_last_stats(zc, &st), ZCOLL_SUCCESS);
  EXPECT(st.compressed == 1, "stats.compressed = %d", st.compressed);
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& v : in) {
    double l, h;
    local_range(v.data(), n, l, h);
    lo = std::min(lo, l);
    hi = std::max(hi, h);
  }
  const double eps = st.eb_abs;
  const double want = c.mode == ZCOLL_EB_REL ? rel_to_abs_expected(c.eb, lo, hi) : c.eb;
  EXPECT(std::fabs(eps - want) <= 1e-12 * want, "eb_abs %.17g, expected %.17g", eps, want);
  const long double u = sizeof(T) == 4 ? 0x1p-24L : 0x1p-53L;
  size_t bad = 0;
  uint64_t hash = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) {
    long double ref = 0, asum = 0;
    for (int s = 0; s < p; ++s) {
      const long double x = in[static_cast<size_t>(s)][i];
      ref += x;
      asum += std::fabs(x);
    }
    const T g = out.data()[i];
    const long double lim = static_cast<long double>(p) * eps + p * u * asum + u * std::fabs(ref);
    if (!(std::isfinite(g) && std::fabs(static_cast<long double>(g) - ref) <= lim)) {
      if (bad < 4)
        std::fprintf(stderr, "[rank %d/%d]   %s: element %zu: got %.17g, exact sum %.21Lg, allowed %.6Lg (eps %.6g)\n",
                     r, p, ctx().c_str(), i, static_cast<double>(g), ref, lim, eps);
      ++bad;
    }
    typename Ty<T>::Bits b;
    std::memcpy(&b, &g, sizeof b);
    hash = (hash ^ static_cast<uint64_t>(b)) * 1099511628211ull;
  }
  EXPECT(bad == 0, "%zu of %zu elements outside p x eps (+ rounding)", bad, n);
  for (size_t i = 0; i < kGuard; ++i)
    EXPECT(same_bits(out.v[i], out.v[0]) && same_bits(out.v[kGuard + n + i], out.v[0]), "guard element %zu written", i);
  std::vector<uint64_t> hashes(static_cast<size_t>(p));
  MPI_Allgather(&hash, 1, MPI_UINT64_T, hashes.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD);
  for (int s = 0; s < p; ++s)
    EXPECT(hashes[static_cast<size_t>(s)] == hashes[0], "rank %d's result differs from rank 0's", s);
}

template <class T>
void codecs_type() {
  const int p = g_world.size;
  Cfg c;
  c.min_bytes = 1024;
  if (std::is_same_v<T, float>) {
    c.mode = ZCOLL_EB_REL;
    c.eb = 1e-3;
  } else {  // several chunks, lanes and not, and two threads
    c.mode = ZCOLL_EB_ABS;
    c.eb = 1e-4;
    c.chunk = 2048;
    c.threads = 2;
  }
  for (int codec : {ZCOLL_CODEC_LPBYTE, ZCOLL_CODEC_LPBIT, ZCOLL_CODEC_SZX}) {
    c.codec = codec;
    Ctx cx("codecs %s %s",
           codec == ZCOLL_CODEC_LPBYTE ? "lpbyte" : codec == ZCOLL_CODEC_LPBIT ? "lpbit" : "szx",
           cfg_str(c).c_str());
    Cfg homomorphic = c;
    homomorphic.reduction = ZCOLL_REDUCTION_HOMOMORPHIC;
    zcoll_comm bad = make_comm(g_world, homomorphic, ZCOLL_ERR_CODEC);
    if (bad) zcoll_comm_free(&bad);
    zcoll_comm zc = make_comm(g_world, c);
    if (!zc) continue;
    Call k;
    k.fid = 0;
    k.count = 10007;
    k.root = p - 1;
    run_bcast<T>(g_world, zc, c, k);
    k.fid = 1;
    k.count = 2501;
    run_alltoall<T>(g_world, zc, c, k);
    flush();
    codec_allreduce<T>(zc, c, 2, 30011);
    free_comm(zc);
  }
}

void section_codecs() {
  Cfg unknown;
  unknown.codec = 99;
  zcoll_comm zc = make_comm(g_world, unknown, ZCOLL_ERR_CODEC);
  if (zc) zcoll_comm_free(&zc);
  codecs_type<float>();
  codecs_type<double>();
}

const Section kSections[] = {
    {"accuracy", section_accuracy},
    {"edge", section_edge},
    {"special", section_special},
    {"incompressible", section_incompressible},
    {"passthrough", section_passthrough},
    {"errors", section_errors},
    {"loop", section_loop},
    {"subcomm", section_subcomm},
    {"mixedtypes", section_mixedtypes},
    {"codecs", section_codecs},
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  g_world = Group{MPI_COMM_WORLD, g_rank, g_size, 0};
  MPI_Type_contiguous(3, MPI_FLOAT, &g_f3_type);
  MPI_Type_commit(&g_f3_type);
  load_fields();
  {
    int one = 42, out[4] = {-1, -1, -1, -1}, cnt = 1, disp = 2;
    MPI_Allgatherv(&one, 1, MPI_INT, out, &cnt, &disp, MPI_INT, MPI_COMM_SELF);
    g_mpi_allgatherv_self_bug = out[2] != 42;
    if (g_mpi_allgatherv_self_bug && g_rank == 0)
      std::printf(
          "NOTE: this MPI's MPI_Allgatherv ignores displs on a one-rank communicator (MPICH < 4.1, "
          "pmodels/mpich#6374); on one rank zcoll's plain allgatherv is compared with that MPI call\n");
  }

  if (g_rank == 0) {
    std::printf("float fields:");
    for (const std::string& n : g_f32_names) std::printf(" %s", n.c_str());
    std::printf("\ndouble fields:");
    for (const std::string& n : g_f64_names) std::printf(" %s", n.c_str());
    std::printf("\n");
  }
  const int status = run_sections(argc, argv, kSections, flush, &g_salt);
  MPI_Type_free(&g_f3_type);
  MPI_Finalize();
  return status;
}
