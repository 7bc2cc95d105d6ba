// zcoll_scatter: the runner, which checks every element it receives (coll_harness.h; included by test_coll.cc).
#pragma once
#include "coll_harness.h"

namespace {

template <class T>
void run_scatter(const Group& g, zcoll_comm zc, const Cfg& c, const Call& k) {
  Ctx cx("scatter %s count=%zu root=%d in_place=%d%s", Ty<T>::name(), k.count, k.root, k.in_place,
         k.null_bufs ? " NULL bufs" : "");
  const int p = g.size, r = g.rank;
  const bool is_root = r == k.root;
  const size_t n = k.count, all = n * static_cast<size_t>(p);
  const uint64_t salt = next_salt();
  Send<T> send(is_root ? all : 0, g, k, salt);
  Buf<T> recv(n);
  const bool in_place = is_root && k.in_place;
  // sendbuf is not significant on non-roots: pass NULL there.
  const int rc =
      zcoll_scatter(is_root ? ptr_or_null(send.v, k) : nullptr, static_cast<int>(n), Ty<T>::mpi(),
                    in_place ? MPI_IN_PLACE : ptr_or_null(recv, k), static_cast<int>(n), Ty<T>::mpi(), k.root, zc);
  EXPECT_RC(rc, ZCOLL_SUCCESS);
  double lo = INFINITY, hi = -INFINITY;
  if (is_root) local_range(send.v.data(), all, lo, hi);
  const bool comp = expect_compressed<T>(c, n * sizeof(T));
  auto e = std::make_shared<Expect<T>>(n);
  if (!in_place) {
    gen(e->at(0), k.fid, owner_id(g, k.root), salt, n, static_cast<size_t>(r) * n, k.spec);
    e->mark(0, n, is_root || !comp);
  }  // in place: the root's receive buffer is not touched at all
  defer_verify(g, zc, c, kScatter, comp, lo, hi, k.root, static_cast<double>(p - 1) * n * sizeof(T), std::move(recv),
               e, "recvbuf");
  if (is_root) send.check("root's sendbuf");
}

}  // namespace
