// zcoll_allgather and zcoll_allgatherv: the runners, which check every element they receive
// (coll_harness.h; included by test_coll.cc).
#pragma once
#include "coll_harness.h"

namespace {

template <class T>
void run_allgather(const Group& g, zcoll_comm zc, const Cfg& c, const Call& k) {
  Ctx cx("allgather %s count=%zu in_place=%d%s", Ty<T>::name(), k.count, k.in_place, k.null_bufs ? " NULL bufs" : "");
  const int p = g.size, r = g.rank;
  const size_t n = k.count;
  const uint64_t salt = next_salt();
  Send<T> send(n, g, k, salt);
  Buf<T> recv(static_cast<size_t>(p) * n);
  if (k.in_place)
    std::memcpy(static_cast<void*>(recv.data() + static_cast<size_t>(r) * n), send.v.data(), n * sizeof(T));
  const int rc = zcoll_allgather(k.in_place ? MPI_IN_PLACE : ptr_or_null(send.v, k), static_cast<int>(n), Ty<T>::mpi(),
                                 ptr_or_null(recv, k), static_cast<int>(n), Ty<T>::mpi(), zc);
  EXPECT_RC(rc, ZCOLL_SUCCESS);
  double lo, hi;
  local_range(send.v.data(), n, lo, hi);
  const bool comp = expect_compressed<T>(c, n * sizeof(T));
  auto e = std::make_shared<Expect<T>>(static_cast<size_t>(p) * n);
  expect_blocks(*e, g, k, salt, n, 0, comp);
  defer_verify(g, zc, c, kAllgather, comp, lo, hi, -1, static_cast<double>(p) * n * sizeof(T), std::move(recv), e,
               "recvbuf");
  if (!k.in_place) send.check("sendbuf");
}

// Counts per rank: uneven, zero for some ranks (pattern 0..2), one rank with all of them
// (pattern 3); blocks placed with gaps between them, in reverse rank order for `reversed`.
template <class T>
void run_allgatherv(const Group& g, zcoll_comm zc, const Cfg& c, const Call& k, int pattern, bool reversed) {
  Ctx cx("allgatherv %s base=%zu pattern=%d reversed=%d in_place=%d%s", Ty<T>::name(), k.count, pattern, reversed,
         k.in_place, k.null_bufs ? " NULL bufs" : "");
  const int p = g.size, r = g.rank;
  std::vector<int> counts(static_cast<size_t>(p)), displs(static_cast<size_t>(p));
  for (int i = 0; i < p; ++i) {
    size_t n = k.count;
    if (pattern == 1) n = (i % 3 == 1) ? 0 : k.count + static_cast<size_t>(i) * 1733 % 2900;
    if (pattern == 2) n = (i == 0 && p > 1) ? 0 : k.count / static_cast<size_t>(1 + (i % 4));
    if (pattern == 3) n = (i == p - 1) ? k.count : 0;  // one rank has everything
    counts[static_cast<size_t>(i)] = static_cast<int>(n);
  }
  const size_t gap = 5;
  size_t pos = gap;
  for (int j = 0; j < p; ++j) {
    const int i = reversed ? p - 1 - j : j;
    displs[static_cast<size_t>(i)] = static_cast<int>(pos);
    pos += static_cast<size_t>(counts[static_cast<size_t>(i)]) + gap + static_cast<size_t>(j % 3);
  }
  const size_t total_len = pos;
  size_t total = 0;
  for (int i = 0; i < p; ++i) total += static_cast<size_t>(counts[static_cast<size_t>(i)]);
  const uint64_t salt = next_salt();
  const size_t n = static_cast<size_t>(counts[static_cast<size_t>(r)]);
  Send<T> send(n, g, k, salt);
  Buf<T> recv(k.null_bufs ? 0 : total_len);
  if (k.in_place)
    std::memcpy(static_cast<void*>(recv.data() + displs[static_cast<size_t>(r)]), send.v.data(), n * sizeof(T));
  const int rc = zcoll_allgatherv(k.in_place ? MPI_IN_PLACE : ptr_or_null(send.v, k), static_cast<int>(n),
                                  Ty<T>::mpi(), ptr_or_null(recv, k), counts.data(), displs.data(), Ty<T>::mpi(), zc);
  EXPECT_RC(rc, ZCOLL_SUCCESS);
  double lo, hi;
  local_range(send.v.data(), n, lo, hi);
  // The per-rank size of an allgatherv is taken as the average block (total / p).
  const bool comp = expect_compressed<T>(c, total * sizeof(T) / static_cast<size_t>(p));
  auto ep = std::make_shared<Expect<T>>(recv.size());
  Expect<T>& e = *ep;
  if (!comp && p == 1 && g_mpi_allgatherv_self_bug && !k.null_bufs) {
    // This MPI's own MPI_Allgatherv misplaces the block on one rank (see main); zcoll's
    // plain path must still give exactly what that MPI call gives.
    Buf<T> ref(total_len);
    if (k.in_place) std::memcpy(static_cast<void*>(ref.data() + displs[0]), send.v.data(), n * sizeof(T));
    MPI_Allgatherv(k.in_place ? MPI_IN_PLACE : send.v.data(), static_cast<int>(n), Ty<T>::mpi(), ref.data(),
                   counts.data(), displs.data(), Ty<T>::mpi(), g.comm);
    std::copy(ref.v.begin(), ref.v.end(), e.want.begin());
  } else if (!k.null_bufs)
    for (int s = 0; s < p; ++s) {
      const size_t cs = static_cast<size_t>(counts[static_cast<size_t>(s)]),
                   d = static_cast<size_t>(displs[static_cast<size_t>(s)]);
      gen(e.at(d), k.fid, owner_id(g, s), salt, cs, 0, k.spec);
      e.mark(d, cs, s == r || !comp);
    }
  defer_verify(g, zc, c, kAllgatherv, comp, lo, hi, -1, static_cast<double>(total * sizeof(T)), std::move(recv), ep,
               "recvbuf (blocks, gaps and guards)");
  if (!k.in_place) send.check("sendbuf");
}

}  // namespace
