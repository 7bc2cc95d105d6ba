/* The Python package's bridge from mpi4py to zcoll's MPI layer, loaded with ctypes.
 *
 * mpi4py hands out the address of each object's MPI handle (MPI._addressof). An MPI
 * handle is an int in MPICH and a pointer in Open MPI, so only C compiled against that
 * MPI's <mpi.h> knows how to read it: every function here takes the handles by address
 * and passes them on by value. MPI_IN_PLACE is likewise MPI-specific, so Python asks for
 * it (zcollpy_in_place) instead of spelling it.
 */
#include <stddef.h>
#include <string.h>

#include <zcoll.h>

#define ZPY_EXPORT __attribute__((visibility("default")))

#define COMM(p) (*(const MPI_Comm *)(p))
#define DTYPE(p) (*(const MPI_Datatype *)(p))
#define OP(p) (*(const MPI_Op *)(p))

ZPY_EXPORT void *zcollpy_in_place(void) { return MPI_IN_PLACE; }

/* sizeof of the structs Python mirrors with ctypes, to refuse a layout mismatch. */
ZPY_EXPORT void zcollpy_struct_sizes(size_t out[4]) {
  out[0] = sizeof(zcoll_codec_params);
  out[1] = sizeof(zcoll_config);
  out[2] = sizeof(zcoll_stats);
  out[3] = sizeof(zcoll_comm_info);
}

/* MPI_Get_library_version of the MPI this library is linked with; Python compares it
 * with mpi4py's so that a wheel built for one MPI is never used with the other. */
ZPY_EXPORT int zcollpy_mpi_library_version(char *buf, size_t cap) {
  char v[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  if (MPI_Get_library_version(v, &len) != MPI_SUCCESS || cap == 0) return -1;
  size_t n = (size_t)len < cap - 1 ? (size_t)len : cap - 1;
  memcpy(buf, v, n);
  buf[n] = '\0';
  return 0;
}

ZPY_EXPORT int zcollpy_comm_create(const void *comm, const zcoll_config *cfg, zcoll_comm *zc) {
  return zcoll_comm_create(COMM(comm), cfg, zc);
}

ZPY_EXPORT int zcollpy_allreduce(const void *sb, void *rb, int n, const void *dt, const void *op,
                                 zcoll_comm zc) {
  return zcoll_allreduce(sb, rb, n, DTYPE(dt), OP(op), zc);
}

ZPY_EXPORT int zcollpy_reduce(const void *sb, void *rb, int n, const void *dt, const void *op, int root,
                              zcoll_comm zc) {
  return zcoll_reduce(sb, rb, n, DTYPE(dt), OP(op), root, zc);
}

ZPY_EXPORT int zcollpy_reduce_scatter_block(const void *sb, void *rb, int n, const void *dt,
                                            const void *op, zcoll_comm zc) {
  return zcoll_reduce_scatter_block(sb, rb, n, DTYPE(dt), OP(op), zc);
}

ZPY_EXPORT int zcollpy_bcast(void *buf, int n, const void *dt, int root, zcoll_comm zc) {
  return zcoll_bcast(buf, n, DTYPE(dt), root, zc);
}

ZPY_EXPORT int zcollpy_allgather(const void *sb, int sn, const void *sdt, void *rb, int rn,
                                 const void *rdt, zcoll_comm zc) {
  return zcoll_allgather(sb, sn, DTYPE(sdt), rb, rn, DTYPE(rdt), zc);
}

ZPY_EXPORT int zcollpy_alltoall(const void *sb, int sn, const void *sdt, void *rb, int rn,
                                const void *rdt, zcoll_comm zc) {
  return zcoll_alltoall(sb, sn, DTYPE(sdt), rb, rn, DTYPE(rdt), zc);
}

ZPY_EXPORT int zcollpy_send(const void *buf, int n, const void *dt, int dest, int tag, zcoll_comm zc) {
  return zcoll_send(buf, n, DTYPE(dt), dest, tag, zc);
}

/* The status as MPI_SOURCE, MPI_TAG and the element count (MPI_Get_count with dt). */
ZPY_EXPORT int zcollpy_recv(void *buf, int n, const void *dt, int source, int tag, zcoll_comm zc,
                            int status_out[3]) {
  MPI_Status st;
  int rc = zcoll_recv(buf, n, DTYPE(dt), source, tag, zc, &st);
  int count = 0;
  if (MPI_Get_count(&st, DTYPE(dt), &count) != MPI_SUCCESS) count = -1;
  status_out[0] = st.MPI_SOURCE;
  status_out[1] = st.MPI_TAG;
  status_out[2] = count;
  return rc;
}
