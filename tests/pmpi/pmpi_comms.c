/* The communicators ZCOLL_COMMS=all covers beyond MPI_Comm_split (run_check.sh comms):
 * a plain MPI program that makes one communicator with each constructor, runs a large
 * MPI_Allreduce (SUM of doubles) on each, and prints per communicator and rank
 *   comm NAME rank R digest D lossy L worst W
 * D: FNV-1a of the result; L: how many elements differ from the exact sum; W: the worst
 * error over its allowance, p x eb (argv[1], the layer's ABS bound) plus the rounding of a
 * p-term sum (must be <= 1). Compressed, a communicator shows L > 0; passed through, its
 * digest equals the plain run's. */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { N = 20000 };
static int rank, size;
static double eb;
static double worst_all = 0;

static double value(int r, long i) { return 100.0 * sin(0.001 * (double)i + r) + 0.5 * r; }

static void run(const char *name, MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return;
  int p, r;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &r);
  double *a = malloc(N * sizeof(double)), *b = malloc(N * sizeof(double));
  for (long i = 0; i < N; ++i) a[i] = value(r, i);
  MPI_Allreduce(a, b, N, MPI_DOUBLE, MPI_SUM, comm);
  uint64_t h = 1469598103934665603ull;
  long lossy = 0;
  double worst = 0;
  for (long i = 0; i < N; ++i) {
    const unsigned char *c = (const unsigned char *)&b[i];
    for (size_t k = 0; k < sizeof(double); ++k) h = (h ^ c[k]) * 1099511628211ull;
    double s = 0, m = 0;
    for (int q = 0; q < p; ++q) s += value(q, i), m += fabs(value(q, i));
    const double e = fabs(b[i] - s);
    if (e == 0) continue;
    ++lossy;
    const double allow = p * eb + p * ldexp(1.0, -52) * m;
    const double over = allow > 0 ? e / allow : INFINITY;
    if (over > worst) worst = over;
  }
  if (worst > worst_all) worst_all = worst;
  printf("comm %s rank %d digest %016llx lossy %ld worst %.4f\n", name, rank, (unsigned long long)h, lossy, worst);
  free(a);
  free(b);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  eb = argc > 1 ? atof(argv[1]) : 0;
  MPI_Group world_group, first;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  const int zero = 0;
  MPI_Group_excl(world_group, 1, &zero, &first); /* every rank but 0 */

  run("world", MPI_COMM_WORLD);
  /* MPI_Comm_idup: its first collective is the large allreduce. */
  MPI_Comm idup, create, create_group, create_part, with_info, with_info_off, cart, cart2, cart_sub, graph, dist,
      dist_adj, merged, half, inter, reversed, split_idup;
  MPI_Request req;
  MPI_Comm_idup(MPI_COMM_WORLD, &idup, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  run("idup", idup);
  MPI_Info info, off;
  MPI_Info_create(&info);
  MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
  MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &with_info);
  run("dup_with_info", with_info);
  MPI_Info_create(&off);
  MPI_Info_set(off, "zcoll_enable", "false");
  MPI_Comm_dup_with_info(MPI_COMM_WORLD, off, &with_info_off);
  run("dup_with_info_off", with_info_off); /* opted out by its hint: exact */
  MPI_Comm_create(MPI_COMM_WORLD, world_group, &create);
  run("create", create);
  MPI_Comm_create(MPI_COMM_WORLD, first, &create_part); /* rank 0 gets MPI_COMM_NULL */
  run("create_part", create_part);
  create_group = MPI_COMM_NULL;
  if (rank != 0) MPI_Comm_create_group(MPI_COMM_WORLD, first, 5, &create_group); /* members only */
  run("create_group", create_group);
  int dims[2] = {size, 1}, periods[2] = {1, 0}, remain[2] = {1, 0};
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
  run("cart", cart);
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart2);
  MPI_Cart_sub(cart2, remain, &cart_sub);
  run("cart_sub", cart_sub);
  int *index = malloc(size * sizeof(int)), *edges = malloc(size * sizeof(int));
  for (int q = 0; q < size; ++q) index[q] = q + 1, edges[q] = (q + 1) % size;
  MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &graph);
  run("graph", graph);
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size, one = 1;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &prev, MPI_UNWEIGHTED, 1, &next, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                 &dist_adj);
  run("dist_graph_adjacent", dist_adj);
  MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &rank, &one, &next, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dist);
  run("dist_graph", dist);
  /* The intra-communicator merged from an intercommunicator between two halves. */
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 9, &inter);
  MPI_Intercomm_merge(inter, rank % 2, &merged);
  run("intercomm_merge", merged);
  /* MPI_Comm_idup of a split (every rank, reversed): opted in when the split is
   * (ZCOLL_COMMS=all). */
  MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &reversed);
  MPI_Comm_idup(reversed, &split_idup, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  run("split_idup", split_idup);

  MPI_Comm all[] = {idup, with_info, with_info_off, create, create_part, create_group, cart, cart2, cart_sub, graph,
                    dist_adj, dist, merged, inter, half, reversed, split_idup};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i)
    if (all[i] != MPI_COMM_NULL) MPI_Comm_free(&all[i]);
  MPI_Info_free(&info);
  MPI_Info_free(&off);
  MPI_Group_free(&first);
  MPI_Group_free(&world_group);
  free(index);
  free(edges);
  MPI_Finalize();
  return worst_all <= 1 ? 0 : 1;
}
