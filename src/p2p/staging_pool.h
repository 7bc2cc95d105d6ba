// Staging buffers of the point-to-point calls (envelope and payload of one float
// message), kept per communicator so that a loop of sends and receives allocates only in
// its first iteration. Threads may post and complete requests on one communicator at once
// (MPI_THREAD_MULTIPLE), so the pool is locked; buffers are allocated outside the lock.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace zcoll::p2p {

struct StagingBuffer {
  std::unique_ptr<uint8_t[]> data;
  size_t cap = 0;
};

class StagingPool {
 public:
  // Best fit from the pool; a new buffer only when none is large enough.
  int acquire(size_t need, StagingBuffer* out);
  // Never allocates (it runs in request destructors); past kMax buffers the smallest
  // is given back, so an odd burst does not pin its memory until comm_free.
  void release(StagingBuffer&& b);

 private:
  // Enough buffers for a halo exchange or a batch of outstanding requests.
  static constexpr size_t kMax = 64;
  std::mutex m_;
  std::vector<StagingBuffer> pool_;
};

}  // namespace zcoll::p2p
