/* A plain MPI program (no zcoll call) for the drop-in layer's tests (run_pmpi_check.sh).
 * It makes every intercepted call with many argument variants and prints, per rank:
 *   exact <digest>    FNV-1a over every result that must be bit-exact whatever the layer
 *                     does: integer, derived and user-op results, MAXLOC, PROD, small float
 *                     messages, the opted-out communicator, and the error classes of
 *                     erroneous calls under MPI_ERRORS_RETURN;
 *   float <digest>    over the large float/double results the layer may compress;
 *   lossy <n> worst <x>  how many of those differ from the exact result, and the worst
 *                     error over its allowance (must be <= 1).
 * The allowance of a float result is k x eb (argv[1], the layer's ABS bound) plus the float rounding of a
 * p-term sum, with k = p for SUM, 1 for data movement and MIN/MAX. Without compression
 * every float result is exact: the driver compares digests across runs. */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 20000 }; /* elements of each large message: 80-160 KB */

static uint64_t exact_digest = 1469598103934665603ull, float_digest = 1469598103934665603ull;
static long lossy = 0;
static double worst = 0, eb = 0;
static int rank, size;

static void mix(uint64_t *h, const void *p, size_t n) {
  const unsigned char *b = (const unsigned char *)p;
  for (size_t i = 0; i < n; ++i) *h = (*h ^ b[i]) * 1099511628211ull;
}
/* PMPI_CHECK_TRACE=1: rank 0 prints the exact digest after each item, to find the first
 * that differs between two runs. */
static void exact(const void *p, size_t n) {
  static int item = 0;
  mix(&exact_digest, p, n);
  if (rank == 0 && getenv("PMPI_CHECK_TRACE")) printf("trace %d %016llx\n", item++, (unsigned long long)exact_digest);
}

/* Deterministic values of rank r at index i: smooth, so that they compress. */
static double value(int r, long i) { return 100.0 * sin(0.001 * (double)i + r) + 0.5 * r; }

/* got[i] against want[i] with allowance k x eb + sum rounding (mag: sum of |inputs|). */
static void check(const double *got, const double *want, const double *mag, long n, double k, int is_float) {
  const double u = is_float ? ldexp(1.0, -23) : ldexp(1.0, -52);
  mix(&float_digest, got, sizeof(double) * (size_t)n);
  for (long i = 0; i < n; ++i) {
    const double e = fabs(got[i] - want[i]);
    if (e == 0) continue;
    ++lossy;
    const double allow = k * eb + size * u * (mag ? mag[i] : fabs(want[i]));
    const double over = allow > 0 ? e / allow : INFINITY;
    if (over > worst) worst = over;
  }
}

/* Reductions of float or double over comm: SUM/MIN/MAX, in place and not. */
static void reductions(MPI_Comm comm, MPI_Datatype t, int is_float) {
  int p, r;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &r);
  const size_t es = is_float ? 4 : 8;
  char *in = malloc(N * es), *out = malloc(N * es);
  double *got = malloc(N * sizeof(double)), *want = malloc(N * sizeof(double)), *mag = malloc(N * sizeof(double));
  const MPI_Op ops[3] = {MPI_SUM, MPI_MIN, MPI_MAX};
#define LOAD(buf, rr, i) (is_float ? (double)((float *)(buf))[i] : ((double *)(buf))[i])
#define STORE(buf, i, v) (is_float ? (void)(((float *)(buf))[i] = (float)(v)) : (void)(((double *)(buf))[i] = (v)))
  for (int o = 0; o < 3; ++o) {
    for (int in_place = 0; in_place < 2; ++in_place) {
      for (long i = 0; i < N; ++i) STORE(in, i, value(r, i));
      if (in_place) memcpy(out, in, N * es);
      MPI_Allreduce(in_place ? MPI_IN_PLACE : in, out, N, t, ops[o], comm);
      for (long i = 0; i < N; ++i) {
        double s = o == 1 ? INFINITY : o == 2 ? -INFINITY : 0, m = 0;
        for (int q = 0; q < p; ++q) {
          double x = is_float ? (double)(float)value(q, i) : value(q, i);
          s = o == 0 ? s + x : o == 1 ? fmin(s, x) : fmax(s, x);
          m += fabs(x);
        }
        want[i] = s;
        mag[i] = m;
        got[i] = LOAD(out, r, i);
      }
      check(got, want, mag, N, o == 0 ? p : 1, is_float);
    }
    /* Reduce to the last rank, and to rank 0 in place. (MPICH 4.0 crashes in MPI_Reduce
     * with MPI_IN_PLACE at a root other than 0, layer or not.) */
    for (int in_place = 0; in_place < 2; ++in_place) {
      const int root = in_place ? 0 : p - 1;
      for (long i = 0; i < N; ++i) STORE(in, i, value(r, i));
      if (r == root) memcpy(out, in, N * es);
      MPI_Reduce(in_place && r == root ? MPI_IN_PLACE : in, r == root ? out : NULL, N, t, ops[o], root, comm);
      if (r == root) {
        for (long i = 0; i < N; ++i) got[i] = LOAD(out, r, i);
        check(got, want, mag, N, o == 0 ? p : 1, is_float);
      }
    }
  }
  /* Reduce_scatter_block and Reduce_scatter (with a zero count), SUM. */
  int *counts = malloc(p * sizeof(int));
  for (int q = 0; q < p; ++q) counts[q] = q == 1 ? 0 : N / p;
  char *big = malloc(N * es); /* the counts add up to at most p x (N / p) <= N */
  for (long i = 0; i < N; ++i) STORE(big, i, value(r, i));
  for (int v = 0; v < 2; ++v) {
    if (v) MPI_Reduce_scatter(big, out, counts, t, MPI_SUM, comm);
    else MPI_Reduce_scatter_block(big, out, N / p, t, MPI_SUM, comm);
    long first = 0, mine = v ? counts[r] : N / p;
    for (int q = 0; q < r; ++q) first += v ? counts[q] : N / p;
    for (long i = 0; i < mine; ++i) {
      double s = 0, m = 0;
      for (int q = 0; q < p; ++q) {
        double x = is_float ? (double)(float)value(q, first + i) : value(q, first + i);
        s += x;
        m += fabs(x);
      }
      want[i] = s;
      mag[i] = m;
      got[i] = LOAD(out, r, i);
    }
    check(got, want, mag, mine, p, is_float);
  }
  free(big);
  free(counts);
  free(in);
  free(out);
  free(got);
  free(want);
  free(mag);
}

/* Data movement of doubles: allgather(v), bcast, scatter, gather, alltoall. */
static void movement(MPI_Comm comm) {
  int p, r;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &r);
  const long n = N / p;
  double *mine = malloc(n * sizeof(double)), *all = malloc((size_t)(n * p + p) * sizeof(double) * 2);
  double *want = malloc((size_t)(n * p + p) * sizeof(double) * 2);
  for (long i = 0; i < n; ++i) mine[i] = value(r, i);
  /* Allgather, and in place. */
  for (int in_place = 0; in_place < 2; ++in_place) {
    if (in_place) memcpy(all + r * n, mine, n * sizeof(double));
    MPI_Allgather(in_place ? MPI_IN_PLACE : mine, (int)n, MPI_DOUBLE, all, (int)n, MPI_DOUBLE, comm);
    for (int q = 0; q < p; ++q)
      for (long i = 0; i < n; ++i) want[q * n + i] = value(q, i);
    check(all, want, NULL, n * p, 1, 0);
  }
  /* Allgatherv with gaps and a zero count. */
  int *counts = malloc(p * sizeof(int)), *displs = malloc(p * sizeof(int));
  long at = 0;
  for (int q = 0; q < p; ++q) {
    counts[q] = q == 0 && p > 1 ? 0 : (int)n;
    displs[q] = (int)at;
    at += counts[q] + 7;
  }
  for (long i = 0; i < at; ++i) all[i] = want[i] = -1;
  MPI_Allgatherv(mine, counts[r], MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, comm);
  for (int q = 0; q < p; ++q)
    for (long i = 0; i < counts[q]; ++i) want[displs[q] + i] = value(q, i);
  check(all, want, NULL, at, 1, 0);
  /* Bcast from the last rank. */
  for (long i = 0; i < n * p; ++i) all[i] = r == p - 1 ? value(p - 1, i) : 0, want[i] = value(p - 1, i);
  MPI_Bcast(all, (int)(n * p), MPI_DOUBLE, p - 1, comm);
  check(all, want, NULL, n * p, 1, 0);
  /* Scatter and gather with root p/2, the root in place. */
  const int root = p / 2;
  for (long i = 0; i < n * p; ++i) all[i] = value(root, i);
  double *part = malloc(n * sizeof(double));
  MPI_Scatter(all, (int)n, MPI_DOUBLE, r == root ? MPI_IN_PLACE : part, (int)n, MPI_DOUBLE, root, comm);
  if (r != root) {
    for (long i = 0; i < n; ++i) want[i] = value(root, r * n + i);
    check(part, want, NULL, n, 1, 0);
  }
  if (r == root) memcpy(all + r * n, mine, n * sizeof(double));
  MPI_Gather(r == root ? MPI_IN_PLACE : mine, (int)n, MPI_DOUBLE, all, (int)n, MPI_DOUBLE, root, comm);
  if (r == root) {
    for (int q = 0; q < p; ++q)
      for (long i = 0; i < n; ++i) want[q * n + i] = value(q, i);
    check(all, want, NULL, n * p, 1, 0);
  }
  /* Alltoall: block q of rank r is value(r, q*n + i). */
  double *send = malloc(n * p * sizeof(double));
  for (long i = 0; i < n * p; ++i) send[i] = value(r, i);
  MPI_Alltoall(send, (int)n, MPI_DOUBLE, all, (int)n, MPI_DOUBLE, comm);
  for (int q = 0; q < p; ++q)
    for (long i = 0; i < n; ++i) want[q * n + i] = value(q, r * n + i);
  check(all, want, NULL, n * p, 1, 0);
  free(send);
  free(part);
  free(counts);
  free(displs);
  free(mine);
  free(all);
  free(want);
}

static void user_add(void *in, void *inout, int *len, MPI_Datatype *t) {
  const int n = *t == MPI_DOUBLE ? *len : 2 * *len; /* MPI_DOUBLE or the pair type */
  for (int i = 0; i < n; ++i) ((double *)inout)[i] += ((double *)in)[i];
}

/* Everything that must stay bit-exact, whatever the configuration. */
static void exact_cases(MPI_Comm comm) {
  int p, r;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &r);
  /* Integers. */
  int *ia = malloc(N * sizeof(int)), *ib = malloc(N * sizeof(int));
  for (long i = 0; i < N; ++i) ia[i] = (int)(i * 7 + r);
  MPI_Allreduce(ia, ib, N, MPI_INT, MPI_SUM, comm);
  exact(ib, N * sizeof(int));
  MPI_Bcast(ia, N, MPI_INT, 0, comm);
  exact(ia, N * sizeof(int));
  /* MAXLOC on double-int pairs. */
  struct { double v; int i; } *pa = malloc(N * sizeof *pa), *pb = malloc(N * sizeof *pb);
  for (long i = 0; i < N; ++i) pa[i].v = value(r, i), pa[i].i = r;
  MPI_Allreduce(pa, pb, N, MPI_DOUBLE_INT, MPI_MAXLOC, comm);
  for (long i = 0; i < N; ++i) exact(&pb[i].v, sizeof(double)), exact(&pb[i].i, sizeof(int));
  /* A derived type (2 doubles) with a user op, and PROD on double. */
  MPI_Datatype pair;
  MPI_Type_contiguous(2, MPI_DOUBLE, &pair);
  MPI_Type_commit(&pair);
  MPI_Op op;
  MPI_Op_create(user_add, 1, &op);
  double *da = malloc(N * sizeof(double)), *db = malloc(N * sizeof(double));
  for (long i = 0; i < N; ++i) da[i] = value(r, i);
  MPI_Allreduce(da, db, N / 2, pair, op, comm);
  exact(db, (N / 2) * 2 * sizeof(double));
  MPI_Allreduce(da, db, N, MPI_DOUBLE, MPI_PROD, comm);
  exact(db, N * sizeof(double));
  MPI_Allreduce(da, db, N, MPI_DOUBLE, op, comm); /* a user op on MPI_DOUBLE */
  exact(db, N * sizeof(double));
  /* A derived type in the data movement collectives. */
  MPI_Bcast(da, N / 2, pair, 0, comm);
  exact(da, N * sizeof(double));
  /* Small float messages (below min_bytes) are exact. */
  double small[4] = {value(r, 1), value(r, 2), value(r, 3), value(r, 4)}, small_out[4];
  MPI_Allreduce(small, small_out, 4, MPI_DOUBLE, MPI_SUM, comm);
  exact(small_out, sizeof small_out);
  MPI_Op_free(&op);
  MPI_Type_free(&pair);
  free(ia);
  free(ib);
  free(pa);
  free(pb);
  free(da);
  free(db);
}

/* Error classes of erroneous calls under MPI_ERRORS_RETURN, into the exact digest. Only
 * errors that both MPIs detect: MPICH 4.0 (Debian) does not check a negative count of
 * MPI_Allreduce or MPI_Reduce and crashes in its pack code, with or without the layer. */
static void error_cases(void) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  double x[4] = {0}, y[4];
  int codes[7], classes[7];
  codes[0] = MPI_Bcast(x, 4, MPI_DOUBLE, size, MPI_COMM_WORLD);
  codes[1] = MPI_Allreduce(x, y, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_NULL);
  codes[2] = MPI_Allgather(x, -1, MPI_DOUBLE, y, 1, MPI_DOUBLE, MPI_COMM_WORLD);
  codes[3] = MPI_Bcast(x, -1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  codes[4] = MPI_Allreduce(x, y, 4, MPI_DATATYPE_NULL, MPI_SUM, MPI_COMM_WORLD);
  codes[5] = MPI_Reduce(x, y, 4, MPI_DOUBLE, MPI_SUM, -3, MPI_COMM_WORLD);
  codes[6] = MPI_Bcast(x, 4, MPI_DOUBLE, 0, MPI_COMM_NULL);
  for (int i = 0; i < 7; ++i) MPI_Error_class(codes[i], &classes[i]);
  exact(classes, sizeof classes);
  if (rank == 0)
    printf("error classes: %d %d %d %d %d %d %d\n", classes[0], classes[1], classes[2], classes[3], classes[4],
           classes[5], classes[6]);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  eb = argc > 1 ? atof(argv[1]) : 0; /* the ABS bound the layer was given, if any */

  /* MPI_COMM_WORLD, a duplicate, and a split into two halves (reversed order). */
  MPI_Comm dup, half, hinted, off;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
  const MPI_Comm comms[3] = {MPI_COMM_WORLD, dup, half};
  for (int c = 0; c < 3; ++c) {
    reductions(comms[c], MPI_FLOAT, 1);
    reductions(comms[c], MPI_DOUBLE, 0);
    movement(comms[c]);
    exact_cases(comms[c]);
  }
  /* Fortran's types from C: the layer may treat them as float and double. */
  reductions(MPI_COMM_WORLD, MPI_REAL, 1);
  reductions(MPI_COMM_WORLD, MPI_DOUBLE_PRECISION, 0);

  /* Hints: a duplicate opted in with its own bound (2 x the driver's), and one opted out. */
  MPI_Info info;
  char ebs[32];
  snprintf(ebs, sizeof ebs, "%g", 2 * (eb > 0 ? eb : 1e-3));
  MPI_Info_create(&info);
  MPI_Info_set(info, "zcoll_enable", "true");
  MPI_Info_set(info, "zcoll_eb", ebs);
  MPI_Info_set(info, "zcoll_eb_mode", "abs");
  MPI_Comm_dup(MPI_COMM_WORLD, &hinted);
  MPI_Comm_set_info(hinted, info);
  MPI_Info_free(&info);
  const double saved = eb;
  eb = 2 * (eb > 0 ? eb : 1e-3);
  reductions(hinted, MPI_DOUBLE, 0);
  eb = saved;
  MPI_Info_create(&info);
  MPI_Info_set(info, "zcoll_enable", "false");
  MPI_Comm_dup(MPI_COMM_WORLD, &off);
  MPI_Comm_set_info(off, info);
  MPI_Info_free(&info);
  {
    const uint64_t keep = float_digest;
    const long keep_lossy = lossy;
    const double keep_worst = worst;
    float_digest = 1469598103934665603ull;
    worst = 0;
    reductions(off, MPI_DOUBLE, 0);
    movement(off);
    exact(&float_digest, sizeof float_digest); /* off must be exact: its digest joins the exact one */
    /* Uncompressed, its results differ from the double reference by rounding only. */
    if (worst > 0.5 && lossy != keep_lossy) printf("rank %d: the opted-out communicator is not exact\n", rank);
    worst = keep_worst;
    float_digest = keep;
  }

  /* An intercommunicator between the two halves: passed through. */
  if (size >= 2) {
    MPI_Comm inter;
    /* Each half's leader is its highest world rank (split with key -rank). */
    const int other_leader = (size - 1) % 2 != rank % 2 ? size - 1 : size - 2;
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, other_leader, 7, &inter);
    double *a = malloc(N * sizeof(double)), *b = malloc(N * sizeof(double));
    for (long i = 0; i < N; ++i) a[i] = value(rank, i);
    MPI_Allreduce(a, b, N, MPI_DOUBLE, MPI_SUM, inter);
    exact(b, N * sizeof(double));
    MPI_Comm_free(&inter);
    free(a);
    free(b);
  }
  /* Non-blocking collectives are not intercepted. */
  {
    double *a = malloc(N * sizeof(double)), *b = malloc(N * sizeof(double));
    MPI_Request req;
    for (long i = 0; i < N; ++i) a[i] = value(rank, i);
    MPI_Iallreduce(a, b, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    exact(b, N * sizeof(double));
    free(a);
    free(b);
  }
  error_cases();

  MPI_Comm_free(&off);
  MPI_Comm_free(&hinted);
  MPI_Comm_free(&half);
  MPI_Comm_free(&dup);
  printf("rank %d exact %016llx\n", rank, (unsigned long long)exact_digest);
  printf("rank %d float %016llx\n", rank, (unsigned long long)float_digest);
  printf("rank %d lossy %ld worst %.4f\n", rank, lossy, worst);
  MPI_Finalize();
  return worst <= 1 ? 0 : 1;
}
