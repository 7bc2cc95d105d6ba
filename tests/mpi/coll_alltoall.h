// zcoll_alltoall: the runner, which checks every element it receives (coll_harness.h; included by test_coll.cc).
#pragma once
#include "coll_harness.h"

namespace {

template <class T>
void run_alltoall(const Group& g, zcoll_comm zc, const Cfg& c, const Call& k) {
  Ctx cx("alltoall %s count=%zu in_place=%d%s", Ty<T>::name(), k.count, k.in_place, k.null_bufs ? " NULL bufs" : "");
  const int p = g.size, r = g.rank;
  const size_t n = k.count, all = n * static_cast<size_t>(p);
  const uint64_t salt = next_salt();
  Send<T> send(all, g, k, salt);
  Buf<T> recv(all);
  if (k.in_place) std::memcpy(static_cast<void*>(recv.data()), send.v.data(), all * sizeof(T));
  const int rc = zcoll_alltoall(k.in_place ? MPI_IN_PLACE : ptr_or_null(send.v, k), static_cast<int>(n), Ty<T>::mpi(),
                                ptr_or_null(recv, k), static_cast<int>(n), Ty<T>::mpi(), zc);
  EXPECT_RC(rc, ZCOLL_SUCCESS);
  double lo, hi;
  local_range(send.v.data(), all, lo, hi);
  const bool comp = expect_compressed<T>(c, n * sizeof(T));
  auto e = std::make_shared<Expect<T>>(all);
  expect_blocks(*e, g, k, salt, n, static_cast<size_t>(r) * n, comp);
  defer_verify(g, zc, c, kAlltoall, comp, lo, hi, -1, static_cast<double>(p) * (p - 1) * n * sizeof(T),
               std::move(recv), e, "recvbuf");
  if (!k.in_place) send.check("sendbuf");
}

}  // namespace
