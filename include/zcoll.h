/*
 * zcoll: error-bounded lossy compression for MPI collectives.
 *
 * The one public header. Usable from C (C99) and C++. Every function returns
 * ZCOLL_SUCCESS (0) or a ZCOLL_ERR_* code; zcoll_strerror() explains a code.
 * Library code never aborts, never prints, and never reads or writes outside
 * the buffers it is given, even when handed a corrupt stream.
 *
 * The codec part of this header (everything below) needs no MPI.
 */
#ifndef ZCOLL_H
#define ZCOLL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#define ZCOLL_VERSION_MAJOR 0
#define ZCOLL_VERSION_MINOR 1
#define ZCOLL_VERSION_PATCH 0

/* ---------------------------------------------------------------- errors */

enum zcoll_error {
  ZCOLL_SUCCESS = 0,
  ZCOLL_ERR_ARG = 1,             /* invalid argument (null pointer, eb <= 0 or NaN, ...) */
  ZCOLL_ERR_DTYPE = 2,           /* unknown or unsupported element type */
  ZCOLL_ERR_CODEC = 3,           /* unknown codec id */
  ZCOLL_ERR_BUFFER_TOO_SMALL = 4,/* output capacity too small */
  ZCOLL_ERR_CORRUPT = 5,         /* stream fails validation (truncated, bit flips, bad index) */
  ZCOLL_ERR_VERSION = 6,         /* stream written by an unknown format version */
  ZCOLL_ERR_MISMATCH = 7,        /* stream is valid but its dtype or count differs from the call */
  ZCOLL_ERR_NO_MEMORY = 8,       /* allocation failed */
  ZCOLL_ERR_MPI = 9,             /* an MPI call failed */
  ZCOLL_ERR_INTERNAL = 10        /* a bug in zcoll: please report it */
};

/* A static, human-readable message for an error code (never NULL). */
const char *zcoll_strerror(int err);

/* "0.1.0" */
const char *zcoll_version_string(void);

/* ------------------------------------------------------------- the codec */

typedef enum zcoll_dtype {
  ZCOLL_FLOAT32 = 1,
  ZCOLL_FLOAT64 = 2
} zcoll_dtype;

typedef enum zcoll_eb_mode {
  ZCOLL_EB_ABS = 0, /* eb is the absolute bound */
  ZCOLL_EB_REL = 1  /* eb_abs = eb x (max - min) over the finite input values */
} zcoll_eb_mode;

/*
 * Resolving the bound (eb must be a positive finite number, else ZCOLL_ERR_ARG):
 *  - ABS: eb_abs = eb.
 *  - REL: eb_abs = eb x (max - min) over the finite values. A field without a range
 *    (constant, or no finite value) has no scale to be relative to; there
 *    eb_abs = eb x max|x| over its finite values, or eb itself when that is 0 too.
 *  - Either way an eb_abs above DBL_MAX / 4 is lowered to DBL_MAX / 4, so that 2 x eb_abs
 *    stays finite. Tightening a huge bound only makes the result more accurate; the
 *    bound actually used is reported through eb_abs_out and stored in the stream. A
 *    bound is never loosened: with a tiny eb_abs the values are simply stored exactly.
 */

typedef enum zcoll_codec_id {
  ZCOLL_CODEC_FZL = 1 /* rounding quantizer + Lorenzo + 32-value fixed-length blocks */
} zcoll_codec_id;

/*
 * Compression parameters. Initialise with zcoll_codec_params_init() and then
 * set what you need; unknown future fields keep safe defaults that way.
 */
typedef struct zcoll_codec_params {
  int codec;        /* zcoll_codec_id; default ZCOLL_CODEC_FZL */
  int eb_mode;      /* zcoll_eb_mode; default ZCOLL_EB_ABS */
  double eb;        /* error bound (absolute, or relative to the value range); must be > 0 */
  int threads;      /* OpenMP threads for this call; 0 = the OpenMP default */
  size_t chunk_len; /* values per independent chunk; 0 = default (ZCOLL_DEFAULT_CHUNK_LEN);
                       otherwise a multiple of 32 in [32, ZCOLL_MAX_CHUNK_LEN] */
  int ndims;        /* optional shape hint: 0 or 1 = 1-D (default); 2 or 3 = Lorenzo over
                       that many dimensions. dims[] lists the extents slowest first and
                       their product must equal the element count. */
  size_t dims[3];
} zcoll_codec_params;

/* Default chunk: 16384 values. Measured on the shipped fields at REL 1e-4 (zcoll-bench
 * codec --chunk N): ratio within 0.2% of 65536-value chunks, while 4096 loses ~0.7% and
 * 1024 loses 1-3% to predictor restarts and index entries; throughput was flat from 1024
 * up. 64 KiB (float) per chunk keeps a thread's working set in L2 and still lets a caller
 * poll MPI every few tens of microseconds. */
#define ZCOLL_DEFAULT_CHUNK_LEN 16384u
#define ZCOLL_MAX_CHUNK_LEN (1u << 24)

/*
 * The guarantee: for every finite input x, the reconstruction x' satisfies
 * |x - x'| <= eb_abs, evaluated in double precision after x' has been rounded
 * to the element type. Values for which the quantizer cannot guarantee this
 * (float rounding, |x| / eb beyond the integer range) are stored exactly.
 * NaN, +Inf and -Inf (and the sign of -0.0 when stored exactly) are
 * reproduced bit for bit. The stream is the same whatever the thread count.
 */

void zcoll_codec_params_init(zcoll_codec_params *params);

/* Worst-case compressed size of count elements of dtype, for any valid
 * parameters: an output buffer this large never gives ZCOLL_ERR_BUFFER_TOO_SMALL.
 * Returns 0 for an unknown dtype or when the size overflows size_t. */
size_t zcoll_codec_bound(size_t count, zcoll_dtype dtype);

/* Compress count elements of dtype from in into out (capacity out_cap bytes).
 * On success *out_size holds the stream length. On ZCOLL_ERR_BUFFER_TOO_SMALL
 * nothing past out_cap was written. If eb_abs_out is not NULL it receives the
 * absolute bound used (useful with ZCOLL_EB_REL). */
int zcoll_compress(const zcoll_codec_params *params, zcoll_dtype dtype,
                   const void *in, size_t count,
                   void *out, size_t out_cap, size_t *out_size,
                   double *eb_abs_out);

/* What a stream's header says, after validating the header and chunk index. */
typedef struct zcoll_stream_info {
  int codec;          /* zcoll_codec_id */
  int format_version;
  zcoll_dtype dtype;
  size_t count;       /* elements */
  double eb_abs;      /* absolute bound the stream was written with */
  size_t chunk_len;
  size_t nchunks;
  int ndims;
  size_t dims[3];
  size_t stream_bytes; /* total length the header and index describe */
} zcoll_stream_info;

int zcoll_stream_inspect(const void *in, size_t in_size, zcoll_stream_info *info);

/* Decompress a whole stream into out, which holds count elements of dtype.
 * dtype and count must match the stream (else ZCOLL_ERR_MISMATCH).
 * threads: 0 = the OpenMP default. */
int zcoll_decompress(const void *in, size_t in_size, zcoll_dtype dtype,
                     void *out, size_t count, int threads);

/* ------------------------------------------ chunk-at-a-time (pipelined) use
 *
 * For callers that want to do other work (for example poll MPI requests)
 * between chunks. A writer compresses chunks in order, each into the output
 * right after the previous one; a reader decompresses any chunk on its own.
 * Both keep only small state; the stream they make or read is byte-identical
 * to the one zcoll_compress makes.
 */
typedef struct zcoll_writer zcoll_writer;
typedef struct zcoll_reader zcoll_reader;

/* Starts a stream in out. Resolves a REL bound (one pass over in). The input
 * and output buffers must stay valid until zcoll_writer_finish. */
int zcoll_writer_begin(const zcoll_codec_params *params, zcoll_dtype dtype,
                       const void *in, size_t count, void *out, size_t out_cap,
                       zcoll_writer **writer);
size_t zcoll_writer_nchunks(const zcoll_writer *writer);
/* Compresses the next chunk. *done is set to 1 after the last one. */
int zcoll_writer_next(zcoll_writer *writer, int *done);
/* Completes the index and checksums; returns the stream length. Frees the writer
 * whatever the outcome; *writer is set to NULL. */
int zcoll_writer_finish(zcoll_writer **writer, size_t *out_size);
/* Frees a writer without completing the stream (safe with NULL). */
void zcoll_writer_abort(zcoll_writer **writer);

/* Validates the header and index; keeps a pointer to in. */
int zcoll_reader_open(const void *in, size_t in_size, zcoll_reader **reader);
const zcoll_stream_info *zcoll_reader_info(const zcoll_reader *reader);
/* Decompresses chunk k into out + k * chunk_len elements (out holds the whole array). */
int zcoll_reader_chunk(zcoll_reader *reader, size_t k, void *out);
void zcoll_reader_close(zcoll_reader **reader);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif

#endif /* ZCOLL_H */
