// zcoll_bcast: the runner, which checks every element it receives (coll_harness.h; included by test_coll.cc).
#pragma once
#include "coll_harness.h"

namespace {

template <class T>
void run_bcast(const Group& g, zcoll_comm zc, const Cfg& c, const Call& k) {
  Ctx cx("bcast %s count=%zu root=%d%s", Ty<T>::name(), k.count, k.root, k.null_bufs ? " NULL buf" : "");
  const int r = g.rank;
  const size_t n = k.count;
  const uint64_t salt = next_salt();
  Buf<T> buf(n);
  if (r == k.root)
    gen(buf.data(), k.fid, owner_id(g, k.root), salt, n, 0, k.spec);
  else
    gen(buf.data(), k.fid + 1, owner_id(g, r) + 77, salt, n);  // stale data to be overwritten
  const int rc = zcoll_bcast(ptr_or_null(buf, k), static_cast<int>(n), Ty<T>::mpi(), k.root, zc);
  EXPECT_RC(rc, ZCOLL_SUCCESS);
  auto e = std::make_shared<Expect<T>>(n);
  gen(e->at(0), k.fid, owner_id(g, k.root), salt, n, 0, k.spec);
  double lo = INFINITY, hi = -INFINITY;
  if (r == k.root) local_range(e->at(0), n, lo, hi);
  const bool comp = expect_compressed<T>(c, n * sizeof(T));
  e->mark(0, n, r == k.root || !comp);
  defer_verify(g, zc, c, kBcast, comp, lo, hi, k.root, static_cast<double>(n * sizeof(T)), std::move(buf), e,
               r == k.root ? "root's buffer" : "buffer");
}

}  // namespace
