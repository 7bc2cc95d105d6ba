// Reporting shared by the MPI test programs. EXPECT records a failure, with the file,
// the line and the stack of Ctx descriptions of what is being tested, and carries on,
// so that every rank reaches MPI_Finalize; main() sums g_failures over the ranks. Each
// program is one translation unit, so everything here joins its anonymous namespace.
#pragma once
#include <zcoll.h>

#include <cstdarg>
#include <cstdio>
#include <string>
#include <vector>

namespace {

int g_rank = 0, g_size = 1;
long g_failures = 0, g_checks = 0;
std::vector<std::string> g_ctx;  // what is being tested (printed with failures)

std::string ctx() {
  std::string s;
  for (const std::string& c : g_ctx) s += (s.empty() ? "" : " | ") + c;
  return s;
}

struct Ctx {
  explicit Ctx(const char* fmt, ...) __attribute__((format(printf, 2, 3))) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    g_ctx.emplace_back(buf);
  }
  ~Ctx() { g_ctx.pop_back(); }
  Ctx(const Ctx&) = delete;
  Ctx& operator=(const Ctx&) = delete;
};

void fail_at(const char* file, int line, const char* cond, const char* fmt, ...) __attribute__((format(printf, 4, 5)));
void fail_at(const char* file, int line, const char* cond, const char* fmt, ...) {
  ++g_failures;
  if (g_failures > 60) return;  // enough to diagnose; the count is still reported
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  std::fprintf(stderr, "[rank %d/%d] FAIL %s:%d [%s] (%s) %s\n", g_rank, g_size, file, line, ctx().c_str(), cond, msg);
  std::fflush(stderr);
}

}  // namespace

#define EXPECT(cond, ...)                                         \
  do {                                                            \
    ++g_checks;                                                   \
    if (!(cond)) fail_at(__FILE__, __LINE__, #cond, __VA_ARGS__); \
  } while (0)

#define EXPECT_RC(rc, want)                                                                     \
  do {                                                                                          \
    const int rc_ = (rc), want_ = (want);                                                       \
    EXPECT(rc_ == want_, "returned %d (%s), expected %d (%s)", rc_, zcoll_strerror(rc_), want_, \
           zcoll_strerror(want_));                                                              \
  } while (0)
