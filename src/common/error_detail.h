// The sentence zcoll_error_detail() returns (set where an error code alone would leave
// the user guessing: which setting differs across ranks, and its values there), and the
// exception barrier of the C API.
#pragma once
#include <new>

#include "zcoll.h"

namespace zcoll {

// printf-style; truncated to the buffer (a few hundred characters).
void set_error_detail(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void clear_error_detail();

// Every C entry point runs its body through this: no C++ exception may cross the C
// boundary, and a call that fails without saying more leaves no stale detail behind.
template <class F>
int guarded(F&& f) noexcept {
  clear_error_detail();
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return ZCOLL_ERR_NO_MEMORY;
  } catch (...) {
    return ZCOLL_ERR_INTERNAL;
  }
}

}  // namespace zcoll
