// Shared by the collective front ends: the choice between plain MPI and compression,
// the error bound every rank agrees on, and one compressed run from compression of what
// a rank owns to decompression of what it received.
#pragma once
#include "zcoll.h"  // brings <mpi.h> without the MPI C++ bindings

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <new>

#include "codec/stream.h"
#include "coll/coll.h"

namespace zcoll::coll {

inline bool float_type(MPI_Datatype t, zcoll_dtype* dt) {
  if (t == MPI_FLOAT) {
    *dt = ZCOLL_FLOAT32;
    return true;
  }
  if (t == MPI_DOUBLE) {
    *dt = ZCOLL_FLOAT64;
    return true;
  }
  return false;
}

inline int mpi_rc(int rc) { return rc == MPI_SUCCESS ? ZCOLL_SUCCESS : ZCOLL_ERR_MPI; }

inline double now() { return MPI_Wtime(); }

// The algorithm a collective runs: the configured one if it applies here, else `fallback`.
inline int choose(const zcoll_comm_s& c, std::initializer_list<int> applicable, int fallback) {
  const int a = c.cfg.algorithm;
  if (a == ZCOLL_ALGO_MPI || a == ZCOLL_ALGO_CPRP2P) return a;
  for (int x : applicable)
    if (a == x) return a;
  return fallback;
}

// Runs a compressed collective: resolves the bound, builds the link, compresses what
// this rank owns, runs the schedule, decompresses what it received, and keeps stats.
struct Run {
  zcoll_comm_s& c;
  zcoll_dtype dtype;
  std::vector<Segment> segs;
  int algorithm;
  double t0 = now(), t_comp = 0, t_decomp = 0;
  std::unique_ptr<Link> link;

  Run(zcoll_comm_s& comm, zcoll_dtype dt, int algo) : c(comm), dtype(dt), algorithm(algo) {}

  size_t esize() const { return codec::element_size(dtype); }

  // Absolute bound: ABS as given; REL from the range of `values` on every rank (global)
  // or from `values` on the root alone (others get it only when they must compress).
  int resolve_eb(const void* values, size_t n, bool global, int root, double* eb) {
    const zcoll_codec_params& p = c.cfg.codec;
    if (p.eb_mode == ZCOLL_EB_ABS) {
      *eb = std::min(p.eb, DBL_MAX / 4);
      return ZCOLL_SUCCESS;
    }
    double lo = INFINITY, hi = -INFINITY;
    if (global || c.rank == root) codec::value_range(dtype, values, n, codec::thread_count(p.threads, n / 65536 + 1), &lo, &hi);
    if (global) {
      double ext[2] = {-lo, hi};
      if (MPI_Allreduce(MPI_IN_PLACE, ext, 2, MPI_DOUBLE, MPI_MAX, c.comm) != MPI_SUCCESS) return ZCOLL_ERR_MPI;
      lo = -ext[0];
      hi = ext[1];
    }
    // Ranks other than the root only forward and decompress: the streams carry the bound.
    *eb = global || c.rank == root ? codec::rel_to_abs(p.eb, lo, hi) : 0.0;
    if (!global && algorithm == ZCOLL_ALGO_CPRP2P &&  // every hop recompresses: all need it
        MPI_Bcast(eb, 1, MPI_DOUBLE, root, c.comm) != MPI_SUCCESS)
      return ZCOLL_ERR_MPI;
    return ZCOLL_SUCCESS;
  }

  void make_link(double eb, size_t arena_bytes) {
    LinkSetup s{&c, &segs, dtype, c.cfg.codec};
    s.params.eb_mode = ZCOLL_EB_ABS;
    s.params.eb = eb;
    s.params.ndims = 0;
    c.last = zcoll_stats{};
    c.last.compressed = 1;
    c.last.algorithm = algorithm;
    c.last.eb_abs = eb;
    link = algorithm == ZCOLL_ALGO_CPRP2P ? make_cprp2p_link(s) : make_compressed_link(s, arena_bytes);
  }

  // Worst-case compressed bytes of the listed segments.
  size_t bound(const std::vector<int>& ids) const {
    size_t b = 0;
    for (int i : ids) b += zcoll_codec_bound(segs[i].count, dtype);
    return b;
  }

  int compress(const std::vector<int>& ids) {
    const double t = now();
    const int rc = compress_owned(*link, ids);
    t_comp += now() - t;
    return rc;
  }

  int finish() {
    const double t = now();
    int rc = decompress_received(*link);
    t_decomp = now() - t;
    const double hc = hop_compress_seconds(*link), hd = hop_decompress_seconds(*link);
    c.last.t_compress = t_comp + hc;
    c.last.t_decompress = t_decomp + hd;
    c.last.t_comm = now() - t0 - c.last.t_compress - c.last.t_decompress;
    c.last.wire_bytes = wire_bytes(*link);
    c.last.raw_bytes = raw_bytes(*link);
    if (c.last.eb_abs == 0) c.last.eb_abs = received_eb(*link);
    return rc;
  }
};

// Whether to compress. Every rank computes the same byte size (MPI makes the type
// signatures match), so "large enough" agrees everywhere at no cost. Whether the type
// is float or double may not: one rank can pass MPI_FLOAT x n where another passes a
// derived type of n floats. For large messages only, the ranks agree on that with one
// small allreduce; if any rank's type is not a plain float type, all use plain MPI.
inline bool use_compression(zcoll_comm_s& c, MPI_Datatype type, size_t bytes, zcoll_dtype* dt) {
  *dt = ZCOLL_FLOAT32;
  if (c.cfg.algorithm == ZCOLL_ALGO_MPI || bytes < c.cfg.min_bytes) return false;
  int mine = float_type(type, dt) ? static_cast<int>(*dt) : 0, lo = mine, hi = mine;
  if (c.size > 1) {
    int ext[2] = {-mine, mine};
    if (MPI_Allreduce(MPI_IN_PLACE, ext, 2, MPI_INT, MPI_MAX, c.comm) != MPI_SUCCESS) return false;
    lo = -ext[0];
    hi = ext[1];
  }
  return lo == hi && lo != 0;
}

inline size_t type_bytes(MPI_Datatype t, size_t count) {
  int size = 0;
  if (MPI_Type_size(t, &size) != MPI_SUCCESS || size < 0) return 0;
  return count * static_cast<size_t>(size);
}

// MPI's argument rules for a send/receive pair of buffers (MPI_IN_PLACE allowed).
inline bool bad_buffers(const void* sendbuf, int sendcount, const void* recvbuf, long long recvcount) {
  const bool in_place = sendbuf == MPI_IN_PLACE;
  return recvcount < 0 || (!in_place && sendcount < 0) || (recvcount > 0 && !recvbuf) ||
         (!in_place && sendcount > 0 && !sendbuf);
}

// No C++ exception leaves the library.
template <class F>
int guarded(F&& f) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return ZCOLL_ERR_NO_MEMORY;
  }
}

inline void plain(zcoll_comm_s& c) {
  c.last = zcoll_stats{};
  c.last.algorithm = ZCOLL_ALGO_MPI;
}

// Copies a rank's own data from a send layout to a receive layout. The same datatype
// (a float type here) is a memcpy; otherwise MPI converts it through a message to self,
// which handles any derived send type whose signature matches, as MPI requires.
inline int local_copy(const void* src, int scount, MPI_Datatype stype, void* dst, int rcount, MPI_Datatype rtype,
                      MPI_Comm comm) {
  if (stype == rtype && scount == rcount) {
    int size = 0;
    MPI_Type_size(rtype, &size);
    std::memcpy(dst, src, static_cast<size_t>(rcount) * static_cast<size_t>(size));
    return ZCOLL_SUCCESS;
  }
  int me = 0;
  MPI_Comm_rank(comm, &me);
  return mpi_rc(MPI_Sendrecv(src, scount, stype, me, kTag + 1, dst, rcount, rtype, me, kTag + 1, comm,
                             MPI_STATUS_IGNORE));
}

inline char* at(void* base, size_t elems, size_t esize) { return static_cast<char*>(base) + elems * esize; }
inline const char* at(const void* base, size_t elems, size_t esize) { return static_cast<const char*>(base) + elems * esize; }

}  // namespace zcoll::coll
