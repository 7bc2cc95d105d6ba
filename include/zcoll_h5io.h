/*
 * zcoll_h5io.h: compressed parallel HDF5 files (libzcoll_h5, the optional HDF5 component).
 * Needs <mpi.h>, <hdf5.h> and zcoll.h. See docs/hdf5.md for the file layout.
 *
 * Writing (collective over the writer's communicator):
 *
 *   zcoll_h5_options o; zcoll_h5_options_init(&o);          // predictive, fzl, extra space 1.25
 *   zcoll_h5_writer w;
 *   zcoll_h5_writer_create(MPI_COMM_WORLD, "snap.h5", &o, &w);
 *   zcoll_h5_write_field(w, "density", ZCOLL_FLOAT64, 3, dims, start, count, rho, ZCOLL_EB_REL, 1e-4);
 *   zcoll_h5_write_field(w, "temperature", ...);             // one call per field, every rank
 *   zcoll_h5_writer_close(&w, &report);                      // compresses and writes them all
 *
 * zcoll_h5_write_field only queues the field: its buffer must stay unchanged until the next
 * zcoll_h5_writer_flush or zcoll_h5_writer_close, which compress and write every queued field
 * (so the fields can be predicted together and reordered, and each field's write overlaps
 * the compression of the next). Every rank queues the same fields (names, types, global
 * dims, bounds) in the same order; the hyperslabs (start, count) of the ranks must not
 * overlap and must cover the field (a rank may hold an empty one: count with a 0).
 *
 * Modes:
 *   ZCOLL_H5_PREDICTIVE  (seed 004) each rank predicts its compressed size from a sample of
 *       its data; one allgather of the predictions gives every rank the same file offsets;
 *       each region is the prediction x extra_space; ranks write independently, overlapped
 *       with the compression of their next field; what overflows a region is appended at
 *       the end of the file after one more allgather of the overflow sizes at the end of
 *       the flush.
 *   ZCOLL_H5_PIPELINED   no prediction: after each field is compressed, an allgather of the
 *       exact sizes gives the offsets; that field is written while the next is compressed.
 *       No extra space, no overflow, one synchronisation per field.
 *
 * Reading is independent (not collective): any number of processes open the file and
 * read any hyperslab of any field, whatever the writer's rank count.
 *
 * Guarantee: every element read back is within the field's absolute bound eb_abs of the
 * value written: eb for ZCOLL_EB_ABS; eb x (max - min) over the whole field's finite values
 * (all ranks) for ZCOLL_EB_REL. NaN and +-Inf come back bit for bit.
 *
 * Errors: ZCOLL_* codes (zcoll.h; zcoll_strerror) with zcoll_h5_error_detail() telling what
 * failed (this library carries its own copy of the codec, so zcoll_error_detail() of
 * libzcoll does not see its messages). Collective
 * calls return the same code on every rank: a rank that fails (a write error such as a full
 * disk, bad arguments on one rank) makes the call fail everywhere, and a file whose close
 * failed is marked incomplete, so readers refuse it (ZCOLL_ERR_CORRUPT). Readers validate
 * everything they read (format version: ZCOLL_ERR_VERSION; a truncated file, a partition
 * table that disagrees with the data or a damaged stream: ZCOLL_ERR_CORRUPT) and never
 * read or write past a buffer.
 *
 * Threads: the writer compresses on the calling thread (with OpenMP threads) and writes on
 * one helper thread with POSIX pwrite; only the calling thread calls MPI
 * (MPI_THREAD_FUNNELED is enough, MPI_THREAD_SINGLE works in practice with MPICH and
 * Open MPI since the helper never calls MPI).
 */
#ifndef ZCOLL_H5IO_H
#define ZCOLL_H5IO_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include "zcoll.h"

#ifdef __cplusplus
extern "C" {
#endif
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/* File format version this library writes; readers refuse a newer one. */
#define ZCOLL_H5_FORMAT_VERSION 1u
/* Most dimensions of a field. */
#define ZCOLL_H5_MAX_DIMS 8

typedef enum zcoll_h5_mode {
  ZCOLL_H5_PREDICTIVE = 0,
  ZCOLL_H5_PIPELINED = 1
} zcoll_h5_mode;

typedef struct zcoll_h5_options {
  int mode;             /* zcoll_h5_mode; default ZCOLL_H5_PREDICTIVE */
  int codec;            /* zcoll_codec_id; default ZCOLL_CODEC_FZL */
  int threads;          /* OpenMP threads for compression; 0 = OMP_NUM_THREADS where that is
                           set, else this rank's share of its host's cores (as codec.threads
                           0 of a zcoll communicator: zcoll.h, "Threads") */
  double extra_space;   /* predictive: region = predicted size x extra_space; >= 1; default 1.25 */
  int reorder;          /* predictive: 1 (default) orders each rank's fields to overlap
                           compression and writes best (Johnson's rule); 0 keeps the call order */
  int overlap;          /* 1 (default): write on a helper thread while the next field
                           compresses; 0: write, then compress the next (for measurements) */
  double sample_fraction;   /* predictive: share of each rank's values compressed to predict
                               the ratio; default 0.01; in (0, 1] */
  double write_bandwidth;   /* bytes/s one rank can expect to write, for reordering; 0 (default):
                               learnt from this writer's earlier flushes, else assumed equal to
                               its compression speed x ratio (compression and writes balanced) */
} zcoll_h5_options;

void zcoll_h5_options_init(zcoll_h5_options *options);

typedef struct zcoll_h5_writer_s *zcoll_h5_writer;

/* What a flush or close did, summed over the fields written; times are this rank's,
 * except where said. */
typedef struct zcoll_h5_report {
  int fields;                /* fields written */
  uint64_t raw_bytes;        /* all ranks: bytes of the values */
  uint64_t file_bytes;       /* the file's size after close (0 before) */
  uint64_t stream_bytes;     /* all ranks: compressed bytes (the ideal compressed size) */
  uint64_t reserved_bytes;   /* all ranks: bytes of the regions (predictive: predictions x extra space) */
  uint64_t overflow_bytes;   /* all ranks: bytes appended after the regions */
  int overflow_ranks;        /* ranks with an overflow in at least one field */
  double predicted_ratio_err;/* median over ranks and fields of |predicted - actual| / actual
                                compressed size (predictive; 0 otherwise) */
  double t_predict;          /* seconds sampling and predicting */
  double t_compress;         /* seconds compressing */
  double t_compress_predicted; /* predictive: what the model predicted for t_compress */
  double t_write;            /* seconds spent writing (the helper thread's pwrites, the
                                fsyncs, the overflow) */
  double t_write_exposed;    /* seconds the calling thread waited for writes: the part of
                                t_write that compression did not hide */
  double t_sync;             /* seconds in the agreements, allgathers and metadata steps */
  double t_total;            /* seconds of the whole flush (max over ranks) */
  double overlap;            /* 1 - t_write_exposed / t_write: the share of the writing hidden
                                behind compression (0 when nothing was written) */
} zcoll_h5_report;

/* Collective. Creates (truncates) the file at path. */
int zcoll_h5_writer_create(MPI_Comm comm, const char *path, const zcoll_h5_options *options,
                           zcoll_h5_writer *writer);

/* Queues one field (see above). dims, start, count: ndims values each, slowest first;
 * 1 <= ndims <= ZCOLL_H5_MAX_DIMS. name: 1-255 characters, no '/', not starting with '_'.
 * Arguments are checked here on this rank (ZCOLL_ERR_ARG) and across ranks at the flush. */
int zcoll_h5_write_field(zcoll_h5_writer writer, const char *name, zcoll_dtype dtype,
                         int ndims, const uint64_t *dims, const uint64_t *start,
                         const uint64_t *count, const void *buf, zcoll_eb_mode eb_mode,
                         double eb);

/* Collective. Compresses and writes every queued field. report may be NULL. */
int zcoll_h5_writer_flush(zcoll_h5_writer writer, zcoll_h5_report *report);

/* Collective. Flushes, writes the tables, marks the file complete, frees the writer and
 * sets *writer to NULL (also on failure). report may be NULL. */
int zcoll_h5_writer_close(zcoll_h5_writer *writer, zcoll_h5_report *report);

/* The sentence explaining this thread's last failed zcoll_h5_* call ("" if none). */
const char *zcoll_h5_error_detail(void);

/* ------------------------------------------------------------------ reading */

typedef struct zcoll_h5_reader_s *zcoll_h5_reader;

typedef struct zcoll_h5_field_info {
  char name[256];
  zcoll_dtype dtype;
  int codec;
  int ndims;
  uint64_t dims[ZCOLL_H5_MAX_DIMS];
  int eb_mode;               /* as the writer gave it */
  double eb;                 /* as the writer gave it */
  double eb_abs;             /* the absolute bound every element is within */
  int writer_ranks;
  uint64_t raw_bytes;
  uint64_t stream_bytes;     /* compressed bytes (sum over the writer's ranks) */
  uint64_t reserved_bytes;
  uint64_t overflow_bytes;
} zcoll_h5_field_info;

/* Not collective. Opens a file written by zcoll_h5_writer for reading and validates its
 * tables. */
int zcoll_h5_reader_open(const char *path, zcoll_h5_reader *reader);
int zcoll_h5_reader_close(zcoll_h5_reader *reader);
int zcoll_h5_reader_nfields(zcoll_h5_reader reader, int *nfields);
/* Fields in the order the writer queued them. */
int zcoll_h5_reader_field_info(zcoll_h5_reader reader, int index, zcoll_h5_field_info *info);
/* Reads the hyperslab (start, count; ndims values each) of field name into buf, in C order
 * of the hyperslab, converted to dtype (float32 or float64). threads: 0 = OpenMP default. */
int zcoll_h5_read_field(zcoll_h5_reader reader, const char *name, zcoll_dtype dtype,
                        const uint64_t *start, const uint64_t *count, void *buf, int threads);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif
#endif /* ZCOLL_H5IO_H */
