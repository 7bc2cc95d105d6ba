// Fortran entry points, where the MPI needs them. MPICH's Fortran bindings (mpif.h and
// `use mpi`) call the C MPI_* functions, so the C wrappers already see Fortran calls.
// Open MPI's call PMPI_* directly, so for Open MPI the layer also defines the Fortran
// symbols of the reductions and bcast (MPI_ALLREDUCE, MPI_REDUCE, MPI_BCAST under
// gfortran's four spellings). Each converts its handles and Open MPI's Fortran
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

void f_allreduce(const void* sendbuf, void* recvbuf, const MPI_Fint* count, const MPI_Fint* datatype,
                 const MPI_Fint* op, const MPI_Fint* comm, MPI_Fint* ierr) {
  *ierr = MPI_Allreduce(c_buffer(sendbuf), c_buffer(recvbuf), *count, PMPI_Type_f2c(*datatype), PMPI_Op_f2c(*op),
                        PMPI_Comm_f2c(*comm));
}

void f_reduce(const void* sendbuf, void* recvbuf, const MPI_Fint* count, const MPI_Fint* datatype,
              const MPI_Fint* op, const MPI_Fint* root, const MPI_Fint* comm, MPI_Fint* ierr) {
  *ierr = MPI_Reduce(c_buffer(sendbuf), c_buffer(recvbuf), *count, PMPI_Type_f2c(*datatype), PMPI_Op_f2c(*op), *root,
                     PMPI_Comm_f2c(*comm));
}

void f_bcast(void* buffer, const MPI_Fint* count, const MPI_Fint* datatype, const MPI_Fint* root,
             const MPI_Fint* comm, MPI_Fint* ierr) {
  *ierr = MPI_Bcast(c_buffer(buffer), *count, PMPI_Type_f2c(*datatype), *root, PMPI_Comm_f2c(*comm));
}

}  // namespace

// gfortran calls name_; other compilers use the other spellings.
#define ZCOLL_FORTRAN_NAMES(lower, upper, impl)                                                      \
  extern "C" __attribute__((visibility("default"), alias(#impl))) void lower##_();                  \
  extern "C" __attribute__((visibility("default"), alias(#impl))) void lower##__();                 \
  extern "C" __attribute__((visibility("default"), alias(#impl))) void lower();                     \
  extern "C" __attribute__((visibility("default"), alias(#impl))) void upper();

extern "C" {
// Unmangled targets for the aliases.
__attribute__((used)) void zcoll_f_allreduce(const void* s, void* r, const MPI_Fint* n, const MPI_Fint* t,
                                             const MPI_Fint* op, const MPI_Fint* c, MPI_Fint* e) {
  f_allreduce(s, r, n, t, op, c, e);
}
__attribute__((used)) void zcoll_f_reduce(const void* s, void* r, const MPI_Fint* n, const MPI_Fint* t,
                                          const MPI_Fint* op, const MPI_Fint* root, const MPI_Fint* c, MPI_Fint* e) {
  f_reduce(s, r, n, t, op, root, c, e);
}
__attribute__((used)) void zcoll_f_bcast(void* b, const MPI_Fint* n, const MPI_Fint* t, const MPI_Fint* root,
                                         const MPI_Fint* c, MPI_Fint* e) {
  f_bcast(b, n, t, root, c, e);
}
}

ZCOLL_FORTRAN_NAMES(mpi_allreduce, MPI_ALLREDUCE, zcoll_f_allreduce)
ZCOLL_FORTRAN_NAMES(mpi_reduce, MPI_REDUCE, zcoll_f_reduce)
ZCOLL_FORTRAN_NAMES(mpi_bcast, MPI_BCAST, zcoll_f_bcast)

#endif
