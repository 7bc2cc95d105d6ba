// The sentence zcoll_error_detail() returns: set where an error code alone would leave
// the user guessing (which setting differs across ranks, and its values there).
#pragma once

namespace zcoll {

// printf-style; truncated to the buffer (a few hundred characters).
void set_error_detail(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void clear_error_detail();

}  // namespace zcoll
