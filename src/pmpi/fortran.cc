// Fortran entry points, where the MPI needs them. MPICH's Fortran bindings (mpif.h and
// `use mpi`) call the C MPI_* functions, so the C wrappers already see Fortran calls.
// Open MPI's call PMPI_* directly, so for Open MPI the layer also defines the Fortran
// symbols of every collective it intercepts and of MPI_INIT(_THREAD), MPI_FINALIZE,
// MPI_COMM_DUP/SPLIT/SPLIT_TYPE/FREE and MPI_COMM_SET_INFO, under the four spellings
// Fortran compilers use. Each converts its handles and Open MPI's Fortran
// MPI_IN_PLACE / MPI_BOTTOM and calls the C wrapper, which routes as for C. mpi_f08 has
// its own symbols and is not intercepted (docs/pmpi.md).
#include <mpi.h>

#if defined(OPEN_MPI)

extern "C" {
// Open MPI's Fortran sentinels (ompi/mpi/fortran/base/constants.h).
extern int mpi_fortran_in_place_;
extern int mpi_fortran_bottom_;
}

namespace {

const void* c_buffer(const void* fortran_buf) {
  if (fortran_buf == &mpi_fortran_in_place_) return MPI_IN_PLACE;
  if (fortran_buf == &mpi_fortran_bottom_) return MPI_BOTTOM;
  return fortran_buf;
}
void* c_buffer(void* fortran_buf) { return const_cast<void*>(c_buffer(static_cast<const void*>(fortran_buf))); }

}  // namespace

// Fortran INTEGER arrays (counts, displacements) are passed on as C int arrays.
static_assert(sizeof(MPI_Fint) == sizeof(int), "Open MPI built with default-size Fortran INTEGERs");

// The implementations, with C linkage so that the Fortran spellings can alias them.
extern "C" {

void zcoll_f_allreduce(const void* sendbuf, void* recvbuf, const MPI_Fint* count, const MPI_Fint* datatype,
                       const MPI_Fint* op, const MPI_Fint* comm, MPI_Fint* ierr) {
  *ierr = MPI_Allreduce(c_buffer(sendbuf), c_buffer(recvbuf), *count, PMPI_Type_f2c(*datatype), PMPI_Op_f2c(*op),
                        PMPI_Comm_f2c(*comm));
}

void zcoll_f_reduce(const void* sendbuf, void* recvbuf, const MPI_Fint* count, const MPI_Fint* datatype,
                    const MPI_Fint* op, const MPI_Fint* root, const MPI_Fint* comm, MPI_Fint* ierr) {
  *ierr = MPI_Reduce(c_buffer(sendbuf), c_buffer(recvbuf), *count, PMPI_Type_f2c(*datatype), PMPI_Op_f2c(*op), *root,
                     PMPI_Comm_f2c(*comm));
}

void zcoll_f_bcast(void* buffer, const MPI_Fint* count, const MPI_Fint* datatype, const MPI_Fint* root,
                   const MPI_Fint* comm, MPI_Fint* ierr) {
  *ierr = MPI_Bcast(c_buffer(buffer), *count, PMPI_Type_f2c(*datatype), *root, PMPI_Comm_f2c(*comm));
}

void zcoll_f_reduce_scatter(const void* sendbuf, void* recvbuf, const MPI_Fint* recvcounts, const MPI_Fint* datatype,
                            const MPI_Fint* op, const MPI_Fint* comm, MPI_Fint* ierr) {
  // MPI_Fint is int in Open MPI, so the counts array is the C one.
  *ierr = MPI_Reduce_scatter(c_buffer(sendbuf), c_buffer(recvbuf), recvcounts, PMPI_Type_f2c(*datatype),
                             PMPI_Op_f2c(*op), PMPI_Comm_f2c(*comm));
}

void zcoll_f_reduce_scatter_block(const void* sendbuf, void* recvbuf, const MPI_Fint* recvcount,
                                  const MPI_Fint* datatype, const MPI_Fint* op, const MPI_Fint* comm, MPI_Fint* ierr) {
  *ierr = MPI_Reduce_scatter_block(c_buffer(sendbuf), c_buffer(recvbuf), *recvcount, PMPI_Type_f2c(*datatype),
                                   PMPI_Op_f2c(*op), PMPI_Comm_f2c(*comm));
}

void zcoll_f_allgather(const void* sendbuf, const MPI_Fint* sendcount, const MPI_Fint* sendtype, void* recvbuf,
                       const MPI_Fint* recvcount, const MPI_Fint* recvtype, const MPI_Fint* comm, MPI_Fint* ierr) {
  *ierr = MPI_Allgather(c_buffer(sendbuf), *sendcount, PMPI_Type_f2c(*sendtype), c_buffer(recvbuf), *recvcount,
                        PMPI_Type_f2c(*recvtype), PMPI_Comm_f2c(*comm));
}

void zcoll_f_allgatherv(const void* sendbuf, const MPI_Fint* sendcount, const MPI_Fint* sendtype, void* recvbuf,
                        const MPI_Fint* recvcounts, const MPI_Fint* displs, const MPI_Fint* recvtype,
                        const MPI_Fint* comm, MPI_Fint* ierr) {
  *ierr = MPI_Allgatherv(c_buffer(sendbuf), *sendcount, PMPI_Type_f2c(*sendtype), c_buffer(recvbuf), recvcounts,
                         displs, PMPI_Type_f2c(*recvtype), PMPI_Comm_f2c(*comm));
}

void zcoll_f_alltoall(const void* sendbuf, const MPI_Fint* sendcount, const MPI_Fint* sendtype, void* recvbuf,
                      const MPI_Fint* recvcount, const MPI_Fint* recvtype, const MPI_Fint* comm, MPI_Fint* ierr) {
  *ierr = MPI_Alltoall(c_buffer(sendbuf), *sendcount, PMPI_Type_f2c(*sendtype), c_buffer(recvbuf), *recvcount,
                       PMPI_Type_f2c(*recvtype), PMPI_Comm_f2c(*comm));
}

void zcoll_f_scatter(const void* sendbuf, const MPI_Fint* sendcount, const MPI_Fint* sendtype, void* recvbuf,
                     const MPI_Fint* recvcount, const MPI_Fint* recvtype, const MPI_Fint* root, const MPI_Fint* comm,
                     MPI_Fint* ierr) {
  *ierr = MPI_Scatter(c_buffer(sendbuf), *sendcount, PMPI_Type_f2c(*sendtype), c_buffer(recvbuf), *recvcount,
                      PMPI_Type_f2c(*recvtype), *root, PMPI_Comm_f2c(*comm));
}

void zcoll_f_gather(const void* sendbuf, const MPI_Fint* sendcount, const MPI_Fint* sendtype, void* recvbuf,
                    const MPI_Fint* recvcount, const MPI_Fint* recvtype, const MPI_Fint* root, const MPI_Fint* comm,
                    MPI_Fint* ierr) {
  *ierr = MPI_Gather(c_buffer(sendbuf), *sendcount, PMPI_Type_f2c(*sendtype), c_buffer(recvbuf), *recvcount,
                     PMPI_Type_f2c(*recvtype), *root, PMPI_Comm_f2c(*comm));
}

// Start, stop and the communicators, so that the layer's bookkeeping sees Fortran programs.
void zcoll_f_init(MPI_Fint* ierr) { *ierr = MPI_Init(nullptr, nullptr); }

void zcoll_f_init_thread(const MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierr) {
  int got = 0;
  *ierr = MPI_Init_thread(nullptr, nullptr, *required, &got);
  *provided = got;
}

void zcoll_f_finalize(MPI_Fint* ierr) { *ierr = MPI_Finalize(); }

void zcoll_f_comm_dup(const MPI_Fint* comm, MPI_Fint* newcomm, MPI_Fint* ierr) {
  MPI_Comm c = MPI_COMM_NULL;
  *ierr = MPI_Comm_dup(PMPI_Comm_f2c(*comm), &c);
  if (*ierr == MPI_SUCCESS) *newcomm = PMPI_Comm_c2f(c);
}

void zcoll_f_comm_split(const MPI_Fint* comm, const MPI_Fint* color, const MPI_Fint* key, MPI_Fint* newcomm,
                        MPI_Fint* ierr) {
  MPI_Comm c = MPI_COMM_NULL;
  *ierr = MPI_Comm_split(PMPI_Comm_f2c(*comm), *color, *key, &c);
  if (*ierr == MPI_SUCCESS) *newcomm = PMPI_Comm_c2f(c);
}

void zcoll_f_comm_split_type(const MPI_Fint* comm, const MPI_Fint* split_type, const MPI_Fint* key,
                             const MPI_Fint* info, MPI_Fint* newcomm, MPI_Fint* ierr) {
  MPI_Comm c = MPI_COMM_NULL;
  *ierr = MPI_Comm_split_type(PMPI_Comm_f2c(*comm), *split_type, *key, PMPI_Info_f2c(*info), &c);
  if (*ierr == MPI_SUCCESS) *newcomm = PMPI_Comm_c2f(c);
}

void zcoll_f_comm_set_info(const MPI_Fint* comm, const MPI_Fint* info, MPI_Fint* ierr) {
  *ierr = MPI_Comm_set_info(PMPI_Comm_f2c(*comm), PMPI_Info_f2c(*info));
}

void zcoll_f_comm_free(MPI_Fint* comm, MPI_Fint* ierr) {
  MPI_Comm c = PMPI_Comm_f2c(*comm);
  *ierr = MPI_Comm_free(&c);
  if (*ierr == MPI_SUCCESS) *comm = PMPI_Comm_c2f(c);
}

}  // extern "C"

// gfortran calls name_; other compilers use the other spellings.
#define ZCOLL_FORTRAN_NAMES(lower, upper, impl)                                                 \
  extern "C" {                                                                                 \
  __attribute__((visibility("default"), alias(#impl))) decltype(impl) lower##_, lower##__, lower, upper; \
  }

ZCOLL_FORTRAN_NAMES(mpi_allreduce, MPI_ALLREDUCE, zcoll_f_allreduce)
ZCOLL_FORTRAN_NAMES(mpi_reduce, MPI_REDUCE, zcoll_f_reduce)
ZCOLL_FORTRAN_NAMES(mpi_bcast, MPI_BCAST, zcoll_f_bcast)
ZCOLL_FORTRAN_NAMES(mpi_reduce_scatter, MPI_REDUCE_SCATTER, zcoll_f_reduce_scatter)
ZCOLL_FORTRAN_NAMES(mpi_reduce_scatter_block, MPI_REDUCE_SCATTER_BLOCK, zcoll_f_reduce_scatter_block)
ZCOLL_FORTRAN_NAMES(mpi_allgather, MPI_ALLGATHER, zcoll_f_allgather)
ZCOLL_FORTRAN_NAMES(mpi_allgatherv, MPI_ALLGATHERV, zcoll_f_allgatherv)
ZCOLL_FORTRAN_NAMES(mpi_alltoall, MPI_ALLTOALL, zcoll_f_alltoall)
ZCOLL_FORTRAN_NAMES(mpi_scatter, MPI_SCATTER, zcoll_f_scatter)
ZCOLL_FORTRAN_NAMES(mpi_gather, MPI_GATHER, zcoll_f_gather)
ZCOLL_FORTRAN_NAMES(mpi_init, MPI_INIT, zcoll_f_init)
ZCOLL_FORTRAN_NAMES(mpi_init_thread, MPI_INIT_THREAD, zcoll_f_init_thread)
ZCOLL_FORTRAN_NAMES(mpi_finalize, MPI_FINALIZE, zcoll_f_finalize)
ZCOLL_FORTRAN_NAMES(mpi_comm_dup, MPI_COMM_DUP, zcoll_f_comm_dup)
ZCOLL_FORTRAN_NAMES(mpi_comm_split, MPI_COMM_SPLIT, zcoll_f_comm_split)
ZCOLL_FORTRAN_NAMES(mpi_comm_split_type, MPI_COMM_SPLIT_TYPE, zcoll_f_comm_split_type)
ZCOLL_FORTRAN_NAMES(mpi_comm_set_info, MPI_COMM_SET_INFO, zcoll_f_comm_set_info)
ZCOLL_FORTRAN_NAMES(mpi_comm_free, MPI_COMM_FREE, zcoll_f_comm_free)

#endif
