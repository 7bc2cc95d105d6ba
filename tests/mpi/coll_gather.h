// zcoll_gather: the runner, which checks every element it receives (coll_harness.h; included by test_coll.cc).
#pragma once
#include "coll_harness.h"

namespace {

template <class T>
void run_gather(const Group& g, zcoll_comm zc, const Cfg& c, const Call& k) {
  Ctx cx("gather %s count=%zu root=%d in_place=%d%s", Ty<T>::name(), k.count, k.root, k.in_place,
         k.null_bufs ? " NULL bufs" : "");
  const int p = g.size, r = g.rank;
  const bool is_root = r == k.root, in_place = is_root && k.in_place;
  const size_t n = k.count;
  const uint64_t salt = next_salt();
  Send<T> send(n, g, k, salt);
  Buf<T> recv(is_root ? n * static_cast<size_t>(p) : 0);
  if (in_place)
    std::memcpy(static_cast<void*>(recv.data() + static_cast<size_t>(r) * n), send.v.data(), n * sizeof(T));
  // recvbuf is not significant on non-roots: pass NULL there.
  const int rc = zcoll_gather(in_place ? MPI_IN_PLACE : ptr_or_null(send.v, k), static_cast<int>(n), Ty<T>::mpi(),
                              is_root ? ptr_or_null(recv, k) : nullptr, static_cast<int>(n), Ty<T>::mpi(), k.root, zc);
  EXPECT_RC(rc, ZCOLL_SUCCESS);
  double lo, hi;
  local_range(send.v.data(), n, lo, hi);
  const bool comp = expect_compressed<T>(c, n * sizeof(T));
  auto e = std::make_shared<Expect<T>>(recv.size());
  if (is_root) expect_blocks(*e, g, k, salt, n, 0, comp);
  defer_verify(g, zc, c, kGather, comp, lo, hi, k.root, static_cast<double>(p - 1) * n * sizeof(T), std::move(recv),
               e, "recvbuf");
  if (!in_place) send.check("sendbuf");
}

}  // namespace
