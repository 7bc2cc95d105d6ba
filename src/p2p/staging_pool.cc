#include "p2p/staging_pool.h"

#include <new>

#include "zcoll.h"

namespace zcoll::p2p {

int StagingPool::acquire(size_t need, StagingBuffer* out) {
  {
    std::lock_guard<std::mutex> lock(m_);
    pool_.reserve(kMax + 1);  // so that release() never allocates
    size_t best = pool_.size();
    for (size_t i = 0; i < pool_.size(); ++i)
      if (pool_[i].cap >= need && (best == pool_.size() || pool_[i].cap < pool_[best].cap)) best = i;
    if (best < pool_.size()) {
      *out = std::move(pool_[best]);
      pool_[best] = std::move(pool_.back());
      pool_.pop_back();
      return ZCOLL_SUCCESS;
    }
  }
  out->data.reset(new (std::nothrow) uint8_t[need]);
  out->cap = out->data ? need : 0;
  return out->data ? ZCOLL_SUCCESS : ZCOLL_ERR_NO_MEMORY;
}

void StagingPool::release(StagingBuffer&& b) {
  if (!b.data) return;
  std::lock_guard<std::mutex> lock(m_);
  pool_.push_back(std::move(b));
  if (pool_.size() <= kMax) return;
  size_t smallest = 0;
  for (size_t i = 1; i < pool_.size(); ++i)
    if (pool_[i].cap < pool_[smallest].cap) smallest = i;
  pool_[smallest] = std::move(pool_.back());
  pool_.pop_back();
}

}  // namespace zcoll::p2p
