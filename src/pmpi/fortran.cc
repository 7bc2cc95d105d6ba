// Fortran entry points, where the MPI needs them. MPICH's Fortran bindings (mpif.h and
// `use mpi`) call the C MPI_* functions, so the C wrappers already see Fortran calls.
// Open MPI's call PMPI_* directly, so for Open MPI the layer also defines the Fortran
// symbols of the reductions and bcast (MPI_ALLREDUCE, MPI_REDUCE, MPI_BCAST) and of
// MPI_INIT(_THREAD), MPI_FINALIZE and MPI_COMM_DUP/SPLIT/FREE, under the four spellings
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
ZCOLL_FORTRAN_NAMES(mpi_init, MPI_INIT, zcoll_f_init)
ZCOLL_FORTRAN_NAMES(mpi_init_thread, MPI_INIT_THREAD, zcoll_f_init_thread)
ZCOLL_FORTRAN_NAMES(mpi_finalize, MPI_FINALIZE, zcoll_f_finalize)
ZCOLL_FORTRAN_NAMES(mpi_comm_dup, MPI_COMM_DUP, zcoll_f_comm_dup)
ZCOLL_FORTRAN_NAMES(mpi_comm_split, MPI_COMM_SPLIT, zcoll_f_comm_split)
ZCOLL_FORTRAN_NAMES(mpi_comm_free, MPI_COMM_FREE, zcoll_f_comm_free)

#endif
