// What the MPI layers (collectives, point-to-point) share: the float types zcoll
// compresses, MPI return codes as zcoll codes, byte sizes; and (error_detail.h) the
// exception barrier at the C boundary.
#pragma once
#include "zcoll.h"  // brings <mpi.h> without the MPI C++ bindings

#include <cstddef>

#include "common/error_detail.h"

namespace zcoll {

inline bool float_type(MPI_Datatype t, zcoll_dtype* dt) {
  if (t == MPI_FLOAT) *dt = ZCOLL_FLOAT32;
  else if (t == MPI_DOUBLE) *dt = ZCOLL_FLOAT64;
  else return false;
  return true;
}

inline MPI_Datatype mpi_type(zcoll_dtype dt) { return dt == ZCOLL_FLOAT64 ? MPI_DOUBLE : MPI_FLOAT; }

inline int mpi_rc(int rc) { return rc == MPI_SUCCESS ? ZCOLL_SUCCESS : ZCOLL_ERR_MPI; }

inline double now() { return MPI_Wtime(); }

// The float types need no MPI call: a call that passes plain MPI straight through should
// add nothing but the MPI call itself (under SimGrid's SMPI every MPI call also ends a
// compute stretch that is timed and charged).
inline size_t type_bytes(MPI_Datatype t, size_t count) {
  zcoll_dtype dt;
  if (float_type(t, &dt)) return count * (dt == ZCOLL_FLOAT64 ? sizeof(double) : sizeof(float));
  int size = 0;
  if (MPI_Type_size(t, &size) != MPI_SUCCESS || size < 0) return 0;
  return count * static_cast<size_t>(size);
}

inline char* at(void* base, size_t elems, size_t esize) { return static_cast<char*>(base) + elems * esize; }
inline const char* at(const void* base, size_t elems, size_t esize) {
  return static_cast<const char*>(base) + elems * esize;
}

}  // namespace zcoll
