// Reporting shared by the MPI test programs. EXPECT records a failure, with the file,
// the line and the stack of Ctx descriptions of what is being tested, and carries on,
// so that every rank reaches MPI_Finalize; main() sums g_failures over the ranks. Each
// program is one translation unit, so everything here joins its anonymous namespace.
#pragma once
#include <unistd.h>
#include <zcoll.h>

#include <algorithm>
#include <cstdarg>
#include <cstdint>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
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

struct Section {
  const char* name;
  void (*run)();
};

// main()'s common part: runs the sections named in argv (all of them when none is named)
// in table order, until one fails on this rank. after(), when given, runs on every rank
// after each section (to settle checks deferred to the section's end); *calls, when
// given, counts the calls made, reported per section with its time. Returns the exit
// status: 1 if any rank failed or a name is unknown, else 0.
template <size_t N>
int run_sections(int argc, char** argv, const Section (&sections)[N], void (*after)() = nullptr,
                 const uint64_t* calls = nullptr) {
  const std::vector<std::string> want(argv + 1, argv + argc);
  long unknown = 0;
  for (const std::string& w : want)
    if (std::none_of(std::begin(sections), std::end(sections), [&](const Section& s) { return w == s.name; })) {
      ++unknown;
      if (g_rank == 0) std::fprintf(stderr, "unknown section '%s'\n", w.c_str());
    }
  const double t0 = MPI_Wtime();
  for (const Section& s : sections) {
    if (unknown || g_failures || (!want.empty() && std::find(want.begin(), want.end(), s.name) == want.end()))
      continue;
    Ctx c("section %s", s.name);
    const double ts = MPI_Wtime();
    const uint64_t calls0 = calls ? *calls : 0;
    s.run();
    if (after) after();
    MPI_Barrier(MPI_COMM_WORLD);
    if (g_rank == 0) {
      std::printf("section %-15s %7.2f s", s.name, MPI_Wtime() - ts);
      if (calls) std::printf(", %4llu calls", static_cast<unsigned long long>(*calls - calls0));
      std::printf("\n");
    }
    std::fflush(stdout);
  }
  long totals[2] = {g_failures + unknown, g_checks};
  MPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (g_rank == 0)
    std::printf("%s: %ld checks on %d ranks, %ld failed (%.2f s)\n", totals[0] ? "FAILED" : "PASSED", totals[1], g_size,
                totals[0], MPI_Wtime() - t0);
  return totals[0] ? 1 : 0;
}

// The main() of a program of sections: MPI_Init, setup() (loading data, say) on every
// rank, the sections named in argv, MPI_Finalize; returns run_sections' status.
template <size_t N>
int sections_main(int argc, char** argv, const Section (&sections)[N], void (*setup)() = nullptr) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  if (setup) setup();
  const int status = run_sections(argc, argv, sections);
  MPI_Finalize();
  return status;
}

// A call that does not return within `seconds` (ranks that took different paths wait
// for each other) ends the program with a message naming it, rather than leaving it to
// ctest's TIMEOUT, which kills it without one.
const char* g_watch = "";
extern "C" void watchdog_fired(int) {
  const char* a = "\nFAIL: watchdog: no return in time (deadlock?) in ";
  ssize_t ignored = write(2, a, std::strlen(a));
  ignored = write(2, g_watch, std::strlen(g_watch));
  ignored = write(2, "\n", 1);
  (void)ignored;
  _exit(3);
}
// Whether MPI gives MPI_THREAD_MULTIPLE; where it does not, rank 0 says that `section`
// is skipped, and why.
[[maybe_unused]] bool thread_multiple(const char* section) {
  int provided = 0;
  MPI_Query_thread(&provided);
  if (provided >= MPI_THREAD_MULTIPLE) return true;
  if (g_rank == 0)
    std::printf("SKIP %s: the MPI library gives thread level %d, not MPI_THREAD_MULTIPLE\n", section, provided);
  return false;
}

struct Watchdog {
  explicit Watchdog(const char* what, unsigned seconds = 10) {
    g_watch = what;
    std::signal(SIGALRM, watchdog_fired);
    alarm(seconds);
  }
  ~Watchdog() { alarm(0); }
};

// Runs job(j) for j = 0 .. n-1 on n threads at once, and joins them, under a watchdog.
template <class Job>
void in_threads(int n, const char* what, unsigned seconds, Job&& job) {
  Watchdog w(what, seconds);
  std::vector<std::thread> threads;
  for (int j = 0; j < n; ++j) threads.emplace_back(job, j);
  for (std::thread& t : threads) t.join();
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
