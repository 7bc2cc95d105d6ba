/* The compressed collectives from C (C99, -pedantic -Werror): the header and the API work
 * without C++. Each rank allgathers and broadcasts slices of a real field through the
 * compressed path, sends one to its neighbour with zcoll_isend/zcoll_recv, and checks the
 * bound; error codes and zcoll_comm_free's NULL handle. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zcoll.h>

#include "c_test.h"

#define N 4099 /* floats per rank */

int main(int argc, char **argv) {
  int p = 1, s, rc, total = 0;
  size_t len = 0, k;
  float *field, *send, *recv;
  double *dbuf, lo = INFINITY, hi = -INFINITY, ext[2], eb_want;
  zcoll_config cfg;
  zcoll_comm zc = NULL;
  zcoll_stats st;

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  field = load_field(&len);
  CHECK(field != NULL && len > (size_t)N);
  send = (float *)malloc(N * sizeof(float));
  recv = (float *)malloc((size_t)p * N * sizeof(float));
  dbuf = (double *)malloc(2 * N * sizeof(double));
  if (!field || len <= (size_t)N || !send || !recv || !dbuf) MPI_Abort(MPI_COMM_WORLD, 2);

  for (k = 0; k < N; ++k) {
    send[k] = field[((size_t)g_rank * 50021u + k) % len];
    if (send[k] < lo) lo = send[k];
    if (send[k] > hi) hi = send[k];
  }
  ext[0] = -lo;
  ext[1] = hi;
  MPI_Allreduce(MPI_IN_PLACE, ext, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  lo = -ext[0];
  hi = ext[1];

  /* the names of algorithms and collectives, both ways, from C */
  {
    int a = -1, k;
    CHECK(zcoll_algorithm_from_name("Scatter_Allgather", &a) == ZCOLL_SUCCESS && a == ZCOLL_ALGO_SCATTER_ALLGATHER);
    CHECK(zcoll_algorithm_from_name("rings", &a) == ZCOLL_ERR_ARG && a == ZCOLL_ALGO_SCATTER_ALLGATHER);
    CHECK(zcoll_algorithm_from_name(NULL, &a) == ZCOLL_ERR_ARG);
    for (k = ZCOLL_ALGO_AUTO; k <= ZCOLL_ALGO_HIERARCHICAL; ++k)
      CHECK(zcoll_algorithm_name(k) != NULL && zcoll_algorithm_from_name(zcoll_algorithm_name(k), &a) == 0 && a == k);
    CHECK(zcoll_algorithm_name(-1) == NULL && zcoll_algorithm_name(ZCOLL_ALGO_PLAIN_HIERARCHICAL + 1) == NULL);
    CHECK(strcmp(zcoll_collective_name(ZCOLL_COLL_REDUCE_SCATTER), "reduce_scatter") == 0);
    CHECK(zcoll_collective_name(ZCOLL_NUM_COLLECTIVES) == NULL);
    CHECK(zcoll_error_detail() != NULL);
  }

  zcoll_config_init(&cfg);
  cfg.codec.eb_mode = ZCOLL_EB_REL;
  cfg.codec.eb = 1e-3;
  cfg.min_bytes = 1024;
  CHECK(zcoll_comm_create(MPI_COMM_WORLD, &cfg, &zc) == ZCOLL_SUCCESS && zc != NULL);

  /* allgather: every block within eb_abs = 1e-3 x global range, own block exact */
  rc = zcoll_allgather(send, N, MPI_FLOAT, recv, N, MPI_FLOAT, zc);
  CHECK(rc == ZCOLL_SUCCESS);
  CHECK(zcoll_last_stats(zc, &st) == ZCOLL_SUCCESS);
  CHECK(st.compressed == 1);
  eb_want = 1e-3 * (hi - lo);
  CHECK(fabs(st.eb_abs - eb_want) <= 1e-12 * eb_want);
  for (s = 0; s < p; ++s)
    for (k = 0; k < N; ++k) {
      const float want = field[((size_t)s * 50021u + k) % len], got = recv[(size_t)s * N + k];
      if (s == g_rank ? memcmp(&got, &want, sizeof got) != 0 : !(fabs((double)got - (double)want) <= st.eb_abs)) {
        CHECK(!"allgather element out of bound");
        s = p;
        break;
      }
    }

  /* bcast of doubles from the last rank */
  for (k = 0; k < 2 * N; ++k) dbuf[k] = g_rank == p - 1 ? (double)field[(k * 7u) % len] : -1.0;
  rc = zcoll_bcast(dbuf, 2 * N, MPI_DOUBLE, p - 1, zc);
  CHECK(rc == ZCOLL_SUCCESS);
  CHECK(zcoll_last_stats(zc, &st) == ZCOLL_SUCCESS);
  CHECK(st.compressed == 1);
  if (g_rank == p - 1) CHECK(st.eb_abs > 0);
  MPI_Bcast(&st.eb_abs, 1, MPI_DOUBLE, p - 1, MPI_COMM_WORLD);
  for (k = 0; k < 2 * N; ++k)
    if (!(fabs(dbuf[k] - (double)field[(k * 7u) % len]) <= st.eb_abs)) {
      CHECK(!"bcast element out of bound");
      break;
    }

  /* point-to-point around the ring (to itself on one rank): compressed, REL from the
   * sender's own slice, so the receiver checks against its left neighbour's range */
  {
    const int right = (g_rank + 1) % p, left = (g_rank + p - 1) % p;
    float llo = INFINITY, lhi = -INFINITY;
    int got = -1;
    zcoll_request req = ZCOLL_REQUEST_NULL;
    MPI_Status pst;
    for (k = 0; k < N; ++k) {
      const float v = field[((size_t)left * 50021u + k) % len];
      if (v < llo) llo = v;
      if (v > lhi) lhi = v;
    }
    CHECK(zcoll_isend(send, N, MPI_FLOAT, right, 7, zc, &req) == ZCOLL_SUCCESS);
    CHECK(zcoll_recv(recv, N, MPI_FLOAT, left, 7, zc, &pst) == ZCOLL_SUCCESS);
    CHECK(zcoll_wait(&req, MPI_STATUS_IGNORE) == ZCOLL_SUCCESS && req == ZCOLL_REQUEST_NULL);
    CHECK(MPI_Get_count(&pst, MPI_FLOAT, &got) == MPI_SUCCESS && got == N);
    CHECK(pst.MPI_SOURCE == left && pst.MPI_TAG == 7 && pst.MPI_ERROR == MPI_SUCCESS);
    CHECK(zcoll_last_stats(zc, &st) == ZCOLL_SUCCESS && st.compressed == 1);
    eb_want = 1e-3 * ((double)lhi - (double)llo);
    for (k = 0; k < N; ++k)
      if (!(fabs((double)recv[k] - (double)field[((size_t)left * 50021u + k) % len]) <= eb_want)) {
        CHECK(!"zcoll_recv element out of bound");
        break;
      }
  }

  /* errors */
  CHECK(zcoll_send(send, N, MPI_FLOAT, p, 0, zc) == ZCOLL_ERR_ARG);
  CHECK(zcoll_bcast(dbuf, 10, MPI_DOUBLE, 0, NULL) == ZCOLL_ERR_ARG);
  CHECK(zcoll_bcast(dbuf, -1, MPI_DOUBLE, 0, zc) == ZCOLL_ERR_ARG);
  CHECK(zcoll_bcast(dbuf, 10, MPI_DOUBLE, p, zc) == ZCOLL_ERR_ARG);
  CHECK(zcoll_strerror(ZCOLL_ERR_ARG) != NULL);

  CHECK(zcoll_comm_free(&zc) == ZCOLL_SUCCESS);
  CHECK(zc == NULL);
  {
    zcoll_comm bad = NULL;
    cfg.codec.eb = 0.0;
    CHECK(zcoll_comm_create(MPI_COMM_WORLD, &cfg, &bad) == ZCOLL_ERR_ARG);
    cfg.codec.eb = 1e-3;
    CHECK(zcoll_comm_create(MPI_COMM_NULL, &cfg, &bad) == ZCOLL_ERR_ARG);
  }

  MPI_Allreduce(&g_fail, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (g_rank == 0) printf("%s: c_coll_smoke on %d ranks, %d failed checks\n", total ? "FAILED" : "PASSED", p, total);
  free(field);
  free(send);
  free(recv);
  free(dbuf);
  MPI_Finalize();
  return total ? 1 : 0;
}
