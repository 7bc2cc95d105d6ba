// Fortran entry points, where the MPI needs them. MPICH's Fortran bindings (mpif.h and
// `use mpi`) call the C MPI_* functions, so the C wrappers already see Fortran calls.
// Open MPI's call PMPI_* directly, so for Open MPI the layer also defines the Fortran
// symbols of every collective it intercepts and of MPI_INIT(_THREAD), MPI_FINALIZE,
// MPI_COMM_DUP/SPLIT/SPLIT_TYPE/FREE and MPI_COMM_SET_INFO, under the four spellings
// Fortran compilers use, and as the ompi_<name>_f functions that Open MPI's mpi_f08
// bindings call. Each converts its handles and Open MPI's Fortran MPI_IN_PLACE /
// MPI_BOTTOM and calls the C wrapper, which routes as for C. MPICH's mpi_f08 bindings
// call the C MPI_* collectives but PMPI_* for init, finalize and the communicator
// routines: the layer defines those (docs/pmpi.md, "Languages").
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

// `use mpi_f08` (libmpi_usempif08) calls the mpif.h implementations ompi_<name>_f of
// libmpi_mpifh, which call PMPI_*. They take the same arguments as the mpif.h symbols, so
// the layer defines them too, as the same functions.
#define ZCOLL_OMPI_F(name, impl) \
  extern "C" __attribute__((visibility("default"), alias(#impl))) decltype(impl) ompi_##name##_f;
ZCOLL_OMPI_F(allreduce, zcoll_f_allreduce)
ZCOLL_OMPI_F(reduce, zcoll_f_reduce)
ZCOLL_OMPI_F(bcast, zcoll_f_bcast)
ZCOLL_OMPI_F(reduce_scatter, zcoll_f_reduce_scatter)
ZCOLL_OMPI_F(reduce_scatter_block, zcoll_f_reduce_scatter_block)
ZCOLL_OMPI_F(allgather, zcoll_f_allgather)
ZCOLL_OMPI_F(allgatherv, zcoll_f_allgatherv)
ZCOLL_OMPI_F(alltoall, zcoll_f_alltoall)
ZCOLL_OMPI_F(scatter, zcoll_f_scatter)
ZCOLL_OMPI_F(gather, zcoll_f_gather)
ZCOLL_OMPI_F(init, zcoll_f_init)
ZCOLL_OMPI_F(init_thread, zcoll_f_init_thread)
ZCOLL_OMPI_F(finalize, zcoll_f_finalize)
ZCOLL_OMPI_F(comm_dup, zcoll_f_comm_dup)
ZCOLL_OMPI_F(comm_split, zcoll_f_comm_split)
ZCOLL_OMPI_F(comm_split_type, zcoll_f_comm_split_type)
ZCOLL_OMPI_F(comm_set_info, zcoll_f_comm_set_info)
ZCOLL_OMPI_F(comm_free, zcoll_f_comm_free)

#else  // MPICH

// `use mpi_f08` (libmpichfort): the routines with buffers (mpi_allreduce_f08ts_ and the
// others) call the C MPI_* functions, which the layer defines; but MPI_Init(_thread),
// MPI_Finalize and the communicator routines call PMPI_* directly, so without these the
// layer would never start. Each is the external procedure the mpi_f08 module binds
// (MPI_Init_f08 ...): handles are TYPE(MPI_Comm/MPI_Info) of one INTEGER, by reference;
// ierror is OPTIONAL (NULL when absent).
namespace {
void set_ierr(MPI_Fint* ierr, int rc) {
  if (ierr) *ierr = rc;
}
}  // namespace

extern "C" {
#pragma GCC visibility push(default)

void mpi_init_f08_(MPI_Fint* ierr) { set_ierr(ierr, MPI_Init(nullptr, nullptr)); }

void mpi_init_thread_f08_(const MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierr) {
  int got = 0;
  set_ierr(ierr, MPI_Init_thread(nullptr, nullptr, *required, &got));
  *provided = got;
}

void mpi_finalize_f08_(MPI_Fint* ierr) { set_ierr(ierr, MPI_Finalize()); }

void mpi_comm_dup_f08_(const MPI_Fint* comm, MPI_Fint* newcomm, MPI_Fint* ierr) {
  MPI_Comm c = MPI_COMM_NULL;
  const int rc = MPI_Comm_dup(PMPI_Comm_f2c(*comm), &c);
  if (rc == MPI_SUCCESS) *newcomm = PMPI_Comm_c2f(c);
  set_ierr(ierr, rc);
}

void mpi_comm_split_f08_(const MPI_Fint* comm, const MPI_Fint* color, const MPI_Fint* key, MPI_Fint* newcomm,
                         MPI_Fint* ierr) {
  MPI_Comm c = MPI_COMM_NULL;
  const int rc = MPI_Comm_split(PMPI_Comm_f2c(*comm), *color, *key, &c);
  if (rc == MPI_SUCCESS) *newcomm = PMPI_Comm_c2f(c);
  set_ierr(ierr, rc);
}

void mpi_comm_split_type_f08_(const MPI_Fint* comm, const MPI_Fint* split_type, const MPI_Fint* key,
                              const MPI_Fint* info, MPI_Fint* newcomm, MPI_Fint* ierr) {
  MPI_Comm c = MPI_COMM_NULL;
  const int rc = MPI_Comm_split_type(PMPI_Comm_f2c(*comm), *split_type, *key, PMPI_Info_f2c(*info), &c);
  if (rc == MPI_SUCCESS) *newcomm = PMPI_Comm_c2f(c);
  set_ierr(ierr, rc);
}

void mpi_comm_set_info_f08_(const MPI_Fint* comm, const MPI_Fint* info, MPI_Fint* ierr) {
  set_ierr(ierr, MPI_Comm_set_info(PMPI_Comm_f2c(*comm), PMPI_Info_f2c(*info)));
}

void mpi_comm_free_f08_(MPI_Fint* comm, MPI_Fint* ierr) {
  MPI_Comm c = PMPI_Comm_f2c(*comm);
  const int rc = MPI_Comm_free(&c);
  if (rc == MPI_SUCCESS) *comm = PMPI_Comm_c2f(c);
  set_ierr(ierr, rc);
}

#pragma GCC visibility pop
}  // extern "C"

#endif
