/* Checks for the C99 MPI test programs: CHECK(cond) counts and reports a failure on this
 * rank and goes on; main sums g_fail over the ranks at the end. */
#ifndef ZCOLL_TESTS_C_CHECK_H
#define ZCOLL_TESTS_C_CHECK_H
#include <stdio.h>

static int g_rank = 0, g_fail = 0;

static void check(int ok, const char *file, int line, const char *what) {
  if (!ok) {
    ++g_fail;
    fprintf(stderr, "[rank %d] FAIL %s:%d %s\n", g_rank, file, line, what);
    fflush(stderr);
  }
}
#define CHECK(cond) check((cond) != 0, __FILE__, __LINE__, #cond)

#endif
