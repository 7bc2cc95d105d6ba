// The test program's operator new, replaced for the whole process, so that a test can make
// one allocation inside a zcoll call fail: with g_in_call set around the call (FailingCall)
// and g_fail_at = k > 0, the k-th allocation after g_allocs was zeroed throws
// std::bad_alloc (the nothrow forms return NULL), and g_thrown says that it did.
// Include it in one translation unit of a program only.
#pragma once
#include <atomic>
#include <cstdlib>
#include <new>

static std::atomic<long> g_allocs{0}, g_fail_at{0};
static std::atomic<bool> g_thrown{false}, g_in_call{false};

static void* counted_new(size_t n) {
  if (g_in_call && ++g_allocs == g_fail_at.load()) {
    g_thrown = true;
    throw std::bad_alloc();
  }
  if (void* q = std::malloc(n ? n : 1)) return q;
  throw std::bad_alloc();
}
void* operator new(size_t n) { return counted_new(n); }
void* operator new[](size_t n) { return counted_new(n); }
static void* counted_new(size_t n, const std::nothrow_t&) noexcept {
  try {
    return counted_new(n);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new(size_t n, const std::nothrow_t& t) noexcept { return counted_new(n, t); }
void* operator new[](size_t n, const std::nothrow_t& t) noexcept { return counted_new(n, t); }
void operator delete(void* q, const std::nothrow_t&) noexcept { std::free(q); }
void operator delete[](void* q, const std::nothrow_t&) noexcept { std::free(q); }
void operator delete(void* q) noexcept { std::free(q); }
void operator delete[](void* q) noexcept { std::free(q); }
void operator delete(void* q, size_t) noexcept { std::free(q); }
void operator delete[](void* q, size_t) noexcept { std::free(q); }

// Counts (and, when armed with k > 0, fails) the allocations of one zcoll call.
struct FailingCall {
  explicit FailingCall(long k = 0) {
    g_thrown = false;
    g_fail_at = k;
    g_allocs = 0;
    g_in_call = true;
  }
  ~FailingCall() {
    g_in_call = false;
    g_fail_at = 0;
  }
  FailingCall(const FailingCall&) = delete;
  FailingCall& operator=(const FailingCall&) = delete;
};
