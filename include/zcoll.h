/*
 * zcoll: error-bounded lossy compression for MPI collectives.
 *
 * The one public header. Usable from C (C99) and C++. Every function returns
 * ZCOLL_SUCCESS (0) or a ZCOLL_ERR_* code; zcoll_strerror() explains a code.
 * Library code never aborts, never prints, and never reads or writes outside
 * the buffers it is given, even when handed a corrupt stream.
 *
 * The codec part of this header needs no MPI. The collectives need <mpi.h>; define
 * ZCOLL_CODEC_ONLY before including this header (the zcoll::codec CMake target and the
 * zcoll_codec pkg-config file do) to use the codec without MPI.
 */
#ifndef ZCOLL_H
#define ZCOLL_H

#include <stddef.h>
#include <stdint.h>
#ifndef ZCOLL_CODEC_ONLY
/* zcoll uses MPI's C API only; keep C++ users from needing the MPI C++ bindings. */
#if defined(__cplusplus) && !defined(MPI_VERSION)
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#endif
#include <mpi.h>
#endif

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
  ZCOLL_ERR_MISMATCH = 7,        /* stream is valid but its dtype or count differs from the call;
                                    or ranks disagree on a setting or argument that must match */
  ZCOLL_ERR_NO_MEMORY = 8,       /* allocation failed */
  ZCOLL_ERR_MPI = 9,             /* an MPI call failed */
  ZCOLL_ERR_INTERNAL = 10,       /* a bug in zcoll: please report it */
  ZCOLL_ERR_TRUNCATE = 11,       /* point-to-point: message longer than the receive buffer
                                    (status MPI_ERROR = MPI_ERR_TRUNCATE) */
  ZCOLL_ERR_IO = 12              /* a file could not be created, written, read or synced
                                    (zcoll_h5io.h; the detail names the file and errno) */
};

/* A static, human-readable message for an error code (never NULL). */
const char *zcoll_strerror(int err);

/* More about the last error a zcoll call returned on this thread, for example which
 * setting differs across ranks and its values there; "" when there is nothing beyond
 * zcoll_strerror(code). Never NULL; valid until the thread's next zcoll call. */
const char *zcoll_error_detail(void);

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
  ZCOLL_CODEC_FZL = 1,    /* rounding quantizer + Lorenzo + 32-value fixed-length blocks */
  ZCOLL_CODEC_LPBYTE = 2, /* best of 4 linear predictors, one code byte per value (Hu & Koibuchi) */
  ZCOLL_CODEC_LPBIT = 3,  /* best of 4 linear predictors, 3-bit hits, cut residuals (Hu & Koibuchi) */
  ZCOLL_CODEC_SZX = 4     /* SZx class: constant blocks, truncated residuals, XOR leading bytes
                             (the codec of the C-Coll baseline) */
} zcoll_codec_id;
/* The codec's short name ("fzl", "lpbyte", "lpbit", "szx"), or NULL for an unknown id.
 * Ids are contiguous from 1, so `for (id = 1; zcoll_codec_name(id); ++id)` lists them. */
const char *zcoll_codec_name(int codec);
/* Sets *codec to the id of the codec called `name` (ASCII case ignored). ZCOLL_ERR_ARG
 * for a NULL argument, ZCOLL_ERR_CODEC for an unknown name (*codec is then left alone). */
int zcoll_codec_from_name(const char *name, int *codec);

/* Every codec keeps the same guarantee, stream container, chunk and thread rules and
 * error handling. lpbyte, lpbit and szx work in array order: a shape hint (ndims/dims) is
 * recorded in the stream but not used. Only fzl streams can be combined (zcoll_combine). */

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

/* Predicts the size zcoll_compress would give for the same arguments, without compressing
 * everything: it encodes about fraction (0 < fraction <= 1) of the stream's chunks, spread
 * evenly over the array, exactly as zcoll_compress encodes them (same bound, position and
 * shape hint), and scales their bytes to all chunks. A chunk's bytes depend only on its
 * own values, so the estimate is unbiased; it is exact when every chunk is sampled. With
 * ZCOLL_EB_REL the range pass over all values is made as in zcoll_compress. The result is
 * the same for any thread count. *sampled_count (if not NULL) receives the number of values
 * encoded. Errors as zcoll_compress, and ZCOLL_ERR_ARG for a fraction outside (0, 1]. */
int zcoll_estimate_size(const zcoll_codec_params *params, zcoll_dtype dtype,
                        const void *in, size_t count, double fraction,
                        size_t *predicted_size, size_t *sampled_count);

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

/* ------------------------------------------------- homomorphic combination
 *
 * Two streams written with the same dtype, count, absolute bound, chunk length and
 * shape hold integers q on the same grid (x' = 2 eb_abs q rounded to the element type;
 * for float32 the step is 2 x the largest float <= eb_abs, which keeps the float32
 * arithmetic in single precision), so they can be combined
 * without decompressing to floating point: zcoll_combine decodes each block's
 * integers, combines them, and encodes the result as a new stream of the same kind
 * (same eb_abs), which can be combined again or decompressed.
 *
 * What the result decompresses to, element by element, with a' and b' what a and b
 * decompress to:
 *  - ZCOLL_OP_MIN / ZCOLL_OP_MAX: exactly min(a', b') / max(a', b') (a NaN on either
 *    side gives NaN). Rounding quantization is monotonic, so this is the min/max of the
 *    integers where both sides are quantized. Combining never adds error: the result is
 *    within eb_abs of the min/max of the original inputs, however many streams are folded.
 *  - ZCOLL_OP_SUM: a' + b' computed without intermediate rounding (the integers add
 *    exactly) and rounded once to the element type. Where a value cannot stay an
 *    integer (stored exactly on either side, or |q_a + q_b| would leave the integer
 *    range, which is checked before adding), the sum a' + b' is stored exactly,
 *    rounded to the element type as any floating-point sum is; NaN + NaN is a's NaN,
 *    quieted, whatever compiler built zcoll (one may swap an add's operands, and with
 *    them the payload that survives). So a sum of n
 *    streams, each within eb_abs of its input, is within n x eb_abs of the sum of the
 *    inputs, plus the element type's rounding of the sum.
 * out must not overlap a or b; zcoll_codec_bound(count, dtype) bytes always suffice.
 * ZCOLL_ERR_MISMATCH if the streams differ in dtype, count, eb_abs, chunk length or
 * shape; ZCOLL_ERR_CORRUPT if either fails validation; ZCOLL_ERR_ARG for an unknown op;
 * ZCOLL_ERR_CODEC if either is not an fzl stream (lpbyte and lpbit do not combine).
 * threads: 0 = the OpenMP default. The result is the same for any thread count.
 */
typedef enum zcoll_op {
  ZCOLL_OP_SUM = 1,
  ZCOLL_OP_MIN = 2,
  ZCOLL_OP_MAX = 3
} zcoll_op;

int zcoll_combine(zcoll_op op, const void *a, size_t a_size, const void *b, size_t b_size,
                  void *out, size_t out_cap, size_t *out_size, int threads);

/* op(values, b) in one pass, for accumulating uncompressed data into a stream: the
 * count values of dtype are quantized exactly as zcoll_compress quantizes them with b's
 * absolute bound, chunk length and shape, and combined with b's integers. The result
 * decompresses to exactly what zcoll_combine(op, a, b) gives for a = the values
 * compressed that way (ZCOLL_EB_ABS, eb = b's eb_abs), element for element, with the
 * same guarantees; only the bytes may differ. It saves encoding a and parsing it back
 * (the reductions use it at every ring step). out must not overlap values or b.
 * ZCOLL_ERR_MISMATCH if b's dtype or count differ; otherwise the errors of zcoll_combine.
 */
int zcoll_combine_values(zcoll_op op, const void *values, size_t count, zcoll_dtype dtype,
                         const void *b, size_t b_size, void *out, size_t out_cap,
                         size_t *out_size, int threads);

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

/* ===================================================== compressed collectives */
#ifndef ZCOLL_CODEC_ONLY

typedef enum zcoll_algorithm {
  ZCOLL_ALGO_AUTO = 0,          /* the cost model's choice, plain MPI included (zcoll_decision) */
  ZCOLL_ALGO_MPI = 1,           /* plain MPI, no compression */
  ZCOLL_ALGO_CPRP2P = 2,        /* baseline: compress before every send, decompress after every receive */
  ZCOLL_ALGO_RING = 3,          /* allgather(v) */
  ZCOLL_ALGO_BRUCK = 4,         /* allgather(v): log2(p) steps, for small messages or many ranks */
  ZCOLL_ALGO_BINOMIAL = 5,      /* bcast, scatter, gather */
  ZCOLL_ALGO_SCATTER_ALLGATHER = 6, /* bcast of large messages */
  ZCOLL_ALGO_PAIRWISE = 7,      /* alltoall */
  ZCOLL_ALGO_RECURSIVE_DOUBLING = 8, /* allreduce: log2(p) exchanges of whole streams */
  ZCOLL_ALGO_HIERARCHICAL = 9,  /* allreduce, reduce, bcast, allgather(v), reduce_scatter(_block):
                                   node-aware, see "Node-aware
                                   collectives" below; the flat default where the
                                   communicator has no such nodes */
  ZCOLL_ALGO_PLAIN_HIERARCHICAL = 10 /* the same collectives: a baseline, never
                                   compressed: the node-aware schedule with plain MPI on the
                                   network too; plain MPI where the communicator has no such
                                   nodes. AUTO weighs it too. */
} zcoll_algorithm;

/* How the reductions (reduce_scatter, allreduce, reduce) combine compressed data. */
typedef enum zcoll_reduction {
  ZCOLL_REDUCTION_AUTO = 0,        /* homomorphic with the fzl codec, DOC with the others */
  ZCOLL_REDUCTION_HOMOMORPHIC = 1, /* each input compressed once; partial results combined
                                      as integers (zcoll_combine); decompressed once.
                                      fzl only: zcoll_comm_create gives ZCOLL_ERR_CODEC
                                      with another codec */
  ZCOLL_REDUCTION_DOC = 2          /* decompress-operate-compress at every ring step,
                                      pipelined in pieces with the transfers */
} zcoll_reduction;

/* What eb (after REL resolution) bounds in the reductions. */
typedef enum zcoll_bound_target {
  ZCOLL_BOUND_INPUT = 0,  /* each rank's input is compressed within eb (the published systems' meaning) */
  ZCOLL_BOUND_RESULT = 1  /* the worst-case error of the result is within eb: zcoll derives the
                             per-input bound from the path's guarantee (see below) */
} zcoll_bound_target;

/* What AUTO decides from.
 * MODEL: a cost model predicts, for each call, the time of plain MPI and of each
 *   compressed schedule, and runs the fastest, so turning zcoll on never costs time where
 *   the wire is not the bottleneck (shared memory, fast networks). Its inputs: the links'
 *   latency and bandwidth (intra-node and inter-node pairs; measured by a ping-pong of
 *   under 50 ms once per process at the first zcoll_comm_create, or given by
 *   zcoll_config.link_gbps / link_latency_us or the environment's ZCOLL_LINK_GBPS,
 *   ZCOLL_LINK_LATENCY_US for the network and ZCOLL_NODE_LINK_GBPS,
 *   ZCOLL_NODE_LINK_LATENCY_US inside a node); the compression ratio and per-thread
 *   codec speed of the call's own data, from a sample of about 0.4% of each rank's values
 *   (below 4 MiB, the collective's last agreed ratio once there is one; the speed is the
 *   fastest of the collective's last 8 samples, as one taken cold runs slower); and the measured
 *   time of earlier calls, per collective, size (factors of 4) and path; a compressed path's
 *   time counts the agreement, range pass and sample that its every call pays and plain
 *   MPI's fast-path calls skip (where the model expects plain MPI, the REL range pass waits
 *   for the decision; a call that then compresses agrees on the range with one more small
 *   allreduce, and its eb_abs is the same). Where compression
 *   is predicted (or modelled, before any factor is learned) to win by less than 2x and
 *   plain MPI has not been measured at that size, the first call runs plain MPI to measure
 *   it; a path run only once and predicted close to the one chosen (plain MPI within 2x, a
 *   schedule within 1.25x, or by its bare model or at the chosen schedule's factor below 1
 *   faster) runs a second time, as its first run may have been cold; a schedule not yet run at that size and predicted within 3x of the
 *   path chosen (by its own model and the errors the model showed on other paths) runs once;
 *   every 8th call runs, of the other paths measured and predicted within 1.25x, the one run
 *   least recently, every 16th within 1.5x, every 32nd within 2x, every 64th within 3x, and
 *   one of those two that ran faster than the chosen path was predicted to runs once more at
 *   the next call (a slow spell must not lock a path out; each band costs at most about 3%).
 *   On nodes of several ranks the
 *   node-aware schedules, compressed and plain (ZCOLL_ALGO_HIERARCHICAL and
 *   ZCOLL_ALGO_PLAIN_HIERARCHICAL), are among the paths. Every rank takes the
 *   same decision: what differs between ranks travels in the call's agreement allreduce
 *   (see "Agreement per call"), each rank uses the worst value, and the decision is a
 *   function of agreed values only. Once the model has agreed codec figures and has
 *   measured plain MPI on the collective at that size, a call that plain MPI wins even if
 *   its data compressed to nothing goes to MPI directly, without the agreement; so does
 *   one that plain MPI wins at the collective's last agreed ratio, by what was learned. The
 *   4th, 8th and 16th such call, then every 16th (every 32nd ... 256th where a call through
 *   the agreement costs more than 1/16 ... 1/128 of a plain call, so that they add at most
 *   1%), and the 4th after a compressed call, still make the agreement: it sees the data
 *   again, and carries plain MPI's times on the fast path, from which the model learns. Nodes: MPI_Comm_split_type(MPI_COMM_TYPE_SHARED), or, where the
 *   environment sets ZCOLL_NODE_KEY, the ranks with the same key (for test set-ups whose
 *   "nodes" share a host).
 *   Warm start: where rank 0's environment sets ZCOLL_TUNING_FILE=<path> at zcoll_comm_create,
 *   zcoll_comm_free writes what the model learned on the communicator into that file (rank 0,
 *   one record per key and network, about 118 KB each, at most 64, the least recently
 *   written dropped first; through a temporary file renamed into place), and a later
 *   communicator with the same key (the next run of the job, or the next communicator of
 *   this one) starts from it on every rank instead of trying each path again. The key: the
 *   rank count and which ranks share a node, every setting that must agree (above), rank 0's
 *   codec.threads and the MPI library's version string; a record is taken only where the
 *   links measured now are within 2x of its own (the same network) and its checksum holds.
 *   A missing, foreign, damaged or unwritable file leaves the model cold and is not an
 *   error. The model keeps re-checking the paths it did not choose, as above, so a record
 *   that no longer fits (a busier network) is learned over, as a slow spell is.
 * COMPRESS: always compress at or above min_bytes; AUTO picks the schedule from a fixed
 *   table of {collective, ranks, bytes} (the behaviour of zcoll before the cost model).
 * The environment's ZCOLL_DECIDE=model|compress overrides the configuration. */
typedef enum zcoll_decision {
  ZCOLL_DECIDE_MODEL = 0,
  ZCOLL_DECIDE_COMPRESS = 1
} zcoll_decision;

/* The collectives, for per-collective settings (zcoll_config.algorithms). */
typedef enum zcoll_collective {
  ZCOLL_COLL_ALLGATHER = 0,      /* and allgatherv */
  ZCOLL_COLL_BCAST = 1,
  ZCOLL_COLL_SCATTER = 2,
  ZCOLL_COLL_GATHER = 3,
  ZCOLL_COLL_ALLTOALL = 4,
  ZCOLL_COLL_REDUCE_SCATTER = 5, /* and reduce_scatter_block */
  ZCOLL_COLL_ALLREDUCE = 6,
  ZCOLL_COLL_REDUCE = 7,
  ZCOLL_NUM_COLLECTIVES = 8
} zcoll_collective;

typedef struct zcoll_config {
  zcoll_codec_params codec; /* codec, eb_mode, eb, threads (0: automatic, see "Threads"
                               below), chunk_len (ndims/dims are ignored) */
  size_t min_bytes;         /* messages smaller than this (bytes per rank) use plain MPI;
                               default ZCOLL_DEFAULT_MIN_BYTES */
  int algorithm;            /* zcoll_algorithm, default AUTO. MPI and CPRP2P apply to every
                               collective; a specific algorithm applies to the collectives
                               that have it and the others choose automatically. */
  int reduction;            /* zcoll_reduction, default AUTO */
  int bound_target;         /* zcoll_bound_target, default ZCOLL_BOUND_INPUT */
  int algorithms[ZCOLL_NUM_COLLECTIVES]; /* per collective (zcoll_collective): an algorithm
                               that overrides `algorithm` for that collective; AUTO (the
                               default) follows `algorithm`. The environment variable
                               ZCOLL_<COLLECTIVE>_ALGORITHM (e.g. ZCOLL_ALLREDUCE_ALGORITHM=ring,
                               names as zcoll_algorithm_name gives them) overrides both. */
  int decision;             /* zcoll_decision, default MODEL (what AUTO decides from) */
  double link_gbps;         /* the network's bandwidth for the cost model, Gbit/s; 0 (default):
                               measured (ZCOLL_LINK_GBPS overrides) */
  double link_latency_us;   /* its latency, microseconds; 0: measured, or 2 with link_gbps
                               (ZCOLL_LINK_LATENCY_US overrides) */
} zcoll_config;

/* The algorithm's short name ("auto", "mpi", "cprp2p", "ring", "bruck", "binomial",
 * "scatter_allgather", "pairwise", "recursive_doubling", "hierarchical"), or NULL for an
 * unknown id. */
const char *zcoll_algorithm_name(int algorithm);
/* Sets *algorithm from its name (ASCII case ignored); ZCOLL_ERR_ARG for NULL or an
 * unknown name. */
int zcoll_algorithm_from_name(const char *name, int *algorithm);
/* The collective's name ("allgather", "bcast", "scatter", "gather", "alltoall",
 * "reduce_scatter", "allreduce", "reduce"), or NULL. */
const char *zcoll_collective_name(int collective);

#define ZCOLL_DEFAULT_MIN_BYTES 65536u

typedef struct zcoll_comm_s *zcoll_comm;

void zcoll_config_init(zcoll_config *config);

/* Collective over comm (duplicates it). The environment's ZCOLL_<COLLECTIVE>_ALGORITHM
 * variables are applied first (see zcoll_config.algorithms).
 *
 * Every rank's settings are compared in one small allreduce: codec, eb_mode, eb,
 * chunk_len (0 and the default count as the same), min_bytes, algorithm, algorithms[],
 * reduction and bound_target must be identical on every rank (codec.threads may differ:
 * streams do not depend on it, and AUTO's cost model counts the fewest threads of any
 * rank, so that every rank decides alike; ndims/dims are ignored). If one differs, every rank
 * returns ZCOLL_ERR_MISMATCH and zcoll_error_detail() names the setting, two ranks that
 * disagree, and the range of its values. A rank with an invalid configuration returns
 * ZCOLL_ERR_ARG (or ZCOLL_ERR_CODEC: an unknown codec, or ZCOLL_REDUCTION_HOMOMORPHIC
 * with a codec other than fzl; ZCOLL_ERR_ARG also for a malformed environment variable
 * or an algorithm the collective does not have), and every other rank returns that code
 * too, naming the rank in zcoll_error_detail(), instead of waiting for it. So does a rank
 * out of memory: what the communicator needs (its model, per-rank tables, and, on the two
 * or four ranks that may measure the links, the probe's 8 MiB, untouched unless they do and
 * freed before zcoll_comm_create returns) is allocated before the agreements that carry a
 * failure, and every rank returns ZCOLL_ERR_NO_MEMORY. Only MPI_COMM_NULL is refused before any
 * communication. *zcomm is NULL after a failure.
 *
 * Test hooks: ZCOLL_DEBUG_FAIL=<rank>:<code> in the environment of zcoll_comm_create
 * makes every compressed collective on that rank of the new communicator fail its first
 * codec operation with <code>, to check that the failure reaches every rank.
 * ZCOLL_DEBUG_FAIL=<rank>:arena makes that rank's work buffer unable to grow, as when its
 * node is out of memory: the compressed collectives then return ZCOLL_ERR_NO_MEMORY on
 * every rank. */
int zcoll_comm_create(MPI_Comm comm, const zcoll_config *config, zcoll_comm *zcomm);
/* Collective. Frees the duplicate and the buffers; *zcomm becomes NULL. With
 * ZCOLL_TUNING_FILE set at creation, rank 0 first writes what AUTO's cost model learned
 * (see zcoll_decision, "Warm start"). */
int zcoll_comm_free(zcoll_comm *zcomm);
/* *warm = 1 where this communicator's cost model began from a record of ZCOLL_TUNING_FILE
 * (AUTO's warm start), else 0; the same on every rank. */
int zcoll_comm_warm_start(zcoll_comm comm, int *warm);

/* What zcoll_comm_create found for this communicator, as this rank sees it: the nodes
 * (MPI_COMM_TYPE_SHARED, or ZCOLL_NODE_KEY; see "Node-aware collectives" below), the codec
 * threads, and the link figures AUTO's cost model starts from (measured once per process
 * by a ping-pong, or configured: link_gbps, ZCOLL_LINK_GBPS). For checking a cluster's
 * set-up: whether the nodes are the ones the job was placed on, what the model was given.
 * Local: no communication. Fields marked "agreed" are the same on every rank. */
typedef struct zcoll_comm_info {
  int nodes;            /* nodes of the communicator (agreed) */
  int node;             /* this rank's node, nodes numbered by their lowest rank */
  int node_rank;        /* this rank's rank inside its node (ordered by rank) */
  int node_size;        /* ranks of this rank's node */
  int max_node_size;    /* ranks of the largest node (agreed) */
  int rails;            /* the node-aware collectives' rails: the smallest node's ranks where
                           there are several nodes, some of several ranks; else 0 (agreed) */
  int codec_threads;    /* this rank's codec threads (config.codec.threads; 0 and the
                           automatic count resolved: OpenMP's default, or the rank's share
                           of its host's cores) */
  int model_threads;    /* the fewest codec threads a piece gets on any rank: what AUTO's
                           model divides the one-thread codec cost by (agreed) */
  double intra_latency_s, intra_bytes_per_s; /* between ranks of one node (agreed: the
                                                worst of every rank's figures) */
  double inter_latency_s, inter_bytes_per_s; /* between nodes (agreed; on one node, what
                                                this process measured or was given before,
                                                else 0) */
} zcoll_comm_info;
int zcoll_comm_get_info(zcoll_comm comm, zcoll_comm_info *info);

/*
 * The collectives take MPI's arguments and keep MPI's semantics, MPI_IN_PLACE included.
 * float (MPI_FLOAT) and double (MPI_DOUBLE) messages of at least min_bytes per rank are
 * compressed; every other datatype, and smaller messages, go through the same MPI call
 * unchanged (bit-exact). Data is compressed exactly once, by its owner, and forwarded as
 * compressed bytes, so every element every rank receives is within eb_abs of the sender's
 * value however many hops it took; a rank's own block is copied, not compressed.
 * A REL bound resolves to one eb_abs that all ranks use: from the global value range
 * (allgather, allgatherv, gather, alltoall) or the root's range (bcast, scatter).
 * Argument errors (negative count, root out of range, NULL buffers with data) are found
 * before any communication and returned on every rank that sees them; MPI requires these
 * arguments to agree across ranks, so that is every rank.
 *
 * Agreement per call. Every rank of a call of at least min_bytes (per rank) takes part
 * in one small MPI_Allreduce before any data moves; it carries the element type, the
 * counts (recvcounts arrays as a hash), the root, the op, the value range for a REL
 * bound, and any failure on this rank so far. So every rank takes the same decision:
 * plain MPI if any rank's datatype is not MPI_FLOAT/MPI_DOUBLE (a derived type of floats
 * on one rank is legal MPI), else compression with one eb_abs for all; and an erroneous
 * program whose ranks pass different counts, roots, ops, or MPI_FLOAT on some ranks and
 * MPI_DOUBLE on others, or MPI_IN_PLACE to the alltoall on some ranks only, gets
 * ZCOLL_ERR_MISMATCH on every rank (zcoll_error_detail() says which argument), with
 * nothing hanging and the communicator still usable.
 * Erroneous and not detected (as in MPI, the outcome is undefined, possibly a hang):
 * counts that put some ranks below min_bytes and others at or above it (the former run
 * plain MPI without the agreement); mismatched displacements of allgatherv (they are
 * local to each rank).
 *
 * Errors during a collective: a rank that fails (out of memory, a corrupt stream, an MPI
 * error) keeps the schedule going with error notices that carry its code, and every
 * rank returns that same code. A rank that cannot have the work buffer a compressed call
 * needs (out of memory) says so before any data moves: every rank returns
 * ZCOLL_ERR_NO_MEMORY, and zcoll_error_detail() names that rank (one small MPI_Allreduce,
 * made in a communicator's first call of a size and when the buffer must grow; never when
 * the buffer it has is large enough). A failure before the call's agreement (in AUTO's
 * sample) is named the same way. An allocation that fails on one rank anywhere in a
 * compressed or node-aware call is ZCOLL_ERR_NO_MEMORY on every rank, never a hang: the
 * schedules' piece tables and request lists are reserved with the work buffer, and their
 * per-rank and per-node arrays before the call's agreement, all kept with the
 * communicator; what is allocated while a schedule runs (the codec's tables, DOC's piece
 * of values, CPRP2P's copies) fails into the error notices above.
 *
 * Observations, documented rather than changed: -0.0 becomes +0.0 when it is quantized
 * (its sign survives only where the codec stores the value exactly); NaN in MIN/MAX
 * follows "NaN wins" on the compressed path (homomorphic and DOC alike), but whatever
 * the MPI library does below min_bytes or on the plain path.
 *
 * Threads. The codec work of every collective (compression, decompression, homomorphic
 * combination and folding, decompress-operate-compress, and the value-range pass of a REL
 * bound) runs on config.codec.threads OpenMP threads, as a
 * fork-join inside the calling thread's call: each piece (65536 values in whole codec
 * chunks: 4 chunks of the default length) is split over at most its chunk count of
 * threads, the range pass of n values over at most n / 65536 + 1 (DOC's element-wise
 * operation itself runs on the calling thread). To keep more than 4 threads busy, set a
 * shorter codec.chunk_len: 65536 / chunk_len threads can share a piece (2048: 32). A
 * block smaller than a piece (a ring step of a large communicator) has fewer chunks still,
 * and the reductions' ring on 8 ranks or more cuts a block of up to two pieces' length in
 * two, so that each step's folding overlaps its transfers: each piece has half the block's
 * chunks.
 * Results, streams and zcoll_last_stats' byte counts are bit-identical for every thread
 * count (chunk_len, which must match on every rank, sets the layout).
 * codec.threads 0 resolves at zcoll_comm_create: to OpenMP's default where OMP_NUM_THREADS
 * is set in the rank's environment, else to the rank's share of its host's cores: each
 * CPU its affinity mask allows counts 1/k, where k ranks of the communicator on that host
 * (MPI_COMM_TYPE_SHARED) may run on it, rounded down, at least 1. So two unbound ranks on
 * two cores get one thread each, four on sixteen get four, a rank bound to one core one.
 * OpenMP's own default (every core in every rank) makes a fork-join wait for a core that
 * another rank holds: with two ranks on two cores, each call through the agreement took
 * 4-7 ms, where it takes 20-50 us (a 256 KiB bcast; zcoll-bench calls).
 * zcoll requires no more than MPI_THREAD_FUNNELED: the thread that calls zcoll makes every
 * MPI call (OpenMP worker threads never call MPI; no MPI call is made inside a parallel
 * region), so MPI_Init_thread(..., MPI_THREAD_FUNNELED, ...) or MPI_Init suffices when
 * that thread is the main thread (MPI_THREAD_SERIALIZED if another thread calls zcoll,
 * one call at a time, as MPI requires for any MPI call from such a thread).
 * Under MPI_THREAD_MULTIPLE, threads may use different zcoll communicators at the same time
 * (each made from a communicator of its own, zcoll_comm_create included), each call with
 * its own codec team. One communicator's collectives must come one at a time, in the same
 * order on every rank (as MPI requires); its point-to-point calls may come from several
 * threads at once, beside a collective, as in MPI. zcoll_last_stats then gives the last
 * record made on that communicator, whichever thread made it. What zcoll shares (the link
 * figures measured once per process, a communicator's staging buffers and statistics, the
 * error handlers of MPI_COMM_WORLD and MPI_COMM_SELF that a wait switches to
 * MPI_ERRORS_RETURN for MPICH's sake) is locked, and its scratch is per thread. Tested with
 * three threads per rank on both MPIs, their outputs bit-identical to the same calls made by
 * one thread alone, and under ThreadSanitizer; the collectives likewise through the drop-in
 * layer.
 *
 * Alltoall and the ring allgather(v) run piece by piece: each step
 * compresses and sends its outgoing block one piece at a time, and passes on or
 * decompresses the incoming pieces as they arrive.
 *
 * Extra memory per call, reused across calls on the same zcoll_comm:
 *   compressed bytes of every block the rank sends or receives, reserved at the codec's
 *   worst case (about the raw size of those blocks; only written pages are touched),
 *   plus the codec's per-thread scratch; alltoall holds 3 blocks' worst case instead
 *   (two steps' outgoing pieces and one step's incoming), or, with MPI_IN_PLACE, every
 *   outgoing block and one incoming. CPRP2P additionally holds one compressed copy per
 *   outstanding send (two blocks' worst case in the ring allgather). Kept with the
 *   communicator as well: the schedule's tables and request lists, about 100 bytes per
 *   piece of 65,536 values (16 more per tree child of the root in bcast, scatter and
 *   gather), and three arrays of one word per rank (eleven on a communicator with nodes,
 *   for the node-aware collectives).
 */
/*
 * Node-aware collectives (ZCOLL_ALGO_HIERARCHICAL; allreduce, reduce, bcast, allgather,
 * allgatherv, reduce_scatter and reduce_scatter_block). Nodes are the ranks that share memory (MPI_Comm_split_type), or, where
 * ZCOLL_NODE_KEY is set in the environment of zcoll_comm_create, the ranks with the same
 * key (network namespaces on one host, for example). When the communicator has several
 * nodes, some with several ranks, in any rank order, data moves inside a node with plain
 * MPI, exact, and only what crosses between nodes is compressed, on the "rails" (the ranks
 * with the same rank inside their node, one per node); each rank on a rail compresses its
 * share of the node's data. There are as many rails as the smallest node has ranks: where
 * nodes differ in size, a larger node's other ranks take part in the node stages only
 * (their zcoll_last_stats count no bytes): allreduce, reduce and bcast cut the vector into
 * one slice per rail, allgather(v) hands those ranks' blocks to a rank on a rail in their
 * node, whose rail carries them in further rounds (one per rails node ranks of the largest
 * node), and reduce_scatter(_block) carries their blocks on the rail of their node rank
 * mod rails, whose rank in their node hands each on. Otherwise (one node, one rank per
 * node) the algorithm AUTO picks runs, and zcoll_last_stats names it.
 *   allreduce: a node reduce-scatter (MPI's floating-point op), the compressed allreduce
 *              of each slice over its rail, a node allgather. Each node's partial result is
 *              quantized once: SUM within nodes x eps (+ rounding) <= p x eps, the flat
 *              bound; MIN/MAX within eps (homomorphic) or nodes x eps (DOC);
 *              ZCOLL_BOUND_RESULT divides by these factors. Bit-identical on all ranks.
 *   reduce:    as allreduce, but each slice is reduced over its rail to the root's node
 *              and gathered at the root (plain): the same bounds as allreduce.
 *   bcast:     the root's node scatters the buffer in slices, each slice is broadcast
 *              compressed over its rail, then a node allgather: within eps of the root's
 *              values (the root's node: exact).
 *   allgather(v): the compressed allgather of the rail's blocks, then a node exchange of
 *              what each rank collected: within eps, a rank's own block exact (and its
 *              node's blocks).
 *   reduce_scatter(_block): a node reduce-scatter (MPI's floating-point op) leaves each
 *              rank with its node's partial of the blocks that end on its node rank, one
 *              per node; the compressed reduce-scatter of those over its rail. SUM within
 *              (nodes - 1) x eps (+ rounding) <= (p - 1) x eps, the flat bound; MIN/MAX
 *              within eps (homomorphic) or (nodes - 1) x eps (DOC); ZCOLL_BOUND_RESULT
 *              divides by these factors. Where a node rank's blocks together pass INT_MAX
 *              elements (MPI's counts are ints) the flat algorithm runs instead.
 * zcoll_last_stats: raw_bytes and wire_bytes count the rail stage (the traffic between
 * nodes; the node stages' plain traffic is not counted), eb_abs is the rail's per-input
 * bound, t_comm includes the node stages. Memory: the rail's compressed buffers (those of
 * the flat algorithm for this rank's slice: about 1/rails of the vector for allreduce
 * and bcast) in an arena of the rail's own, on the rail communicator that
 * zcoll_comm_create makes, set up by the first node-aware call and kept until
 * zcoll_comm_free; allgather also builds node_size MPI hindexed datatypes per call;
 * reduce_scatter holds a packed copy of the whole input and room for the largest node partial (about 1/rails of it) in the
 * communicator's arena, reused across calls (on nodes of different sizes also room for the
 * blocks one rank on a rail carries for its node), and reduce the node partial (twice that with
 * PLAIN_HIERARCHICAL). An allgather whose receive buffer
 * passes INT_MAX elements (p x count: 64 ranks of 32 Mi floats) works on every path: the
 * displacements are kept as size_t and byte offsets, and PLAIN_HIERARCHICAL's rail stage then
 * runs one MPI_Bcast per block instead of MPI_Allgatherv, whose displacements are ints.
 * ZCOLL_ALGO_PLAIN_HIERARCHICAL is the same schedule with plain MPI on the rails too: an
 * uncompressed node-aware baseline (MPI libraries differ in how node-aware their own
 * collectives are). Nothing is compressed; the call still makes its agreement (types,
 * counts, root and op, but no value range), so that ranks passing different but matching
 * datatypes fall back to plain MPI together. Bcast and allgather(v) are exact,
 * allreduce is MPI's arithmetic in another order; stats.compressed is 0 and
 * stats.algorithm names it. Where the topology has no such nodes (see above) it is
 * plain MPI. AUTO weighs it with the compressed schedules where the topology has such
 * nodes, and may run it (after its agreement, which it still makes).
 */
int zcoll_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                    MPI_Datatype recvtype, zcoll_comm comm);
int zcoll_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype, zcoll_comm comm);
int zcoll_bcast(void *buffer, int count, MPI_Datatype datatype, int root, zcoll_comm comm);
int zcoll_scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                  MPI_Datatype recvtype, int root, zcoll_comm comm);
int zcoll_gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, zcoll_comm comm);
int zcoll_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                   MPI_Datatype recvtype, zcoll_comm comm);

/*
 * Reductions: MPI_SUM, MPI_MIN and MPI_MAX on float and double messages of at least
 * min_bytes per rank are compressed. Every other op (MPI_PROD, logical, user-defined),
 * every other datatype, one rank, and smaller messages go through the same MPI call
 * unchanged (bit-exact). MPI_IN_PLACE as MPI allows it.
 *
 * eb_abs: ABS as given; REL = eb x (max - min) over the finite inputs of all ranks.
 * With ZCOLL_BOUND_RESULT the per-input bound eps is eb_abs divided by the path's
 * worst-case factor below (p for a homomorphic SUM, 1 for a homomorphic MIN/MAX, ...),
 * so that the worst case is eb_abs; zcoll_last_stats reports eps.
 *
 * Guarantees (p ranks, eps = per-input bound; "+ rounding": the element type's
 * rounding of the partial sums, which MPI's own floating-point sum also has; it only
 * arises where a value is stored exactly (NaN/Inf/huge, or a chunk that does not
 * compress) and in the final rounding of each result):
 *   homomorphic, SUM:  |result - sum of inputs| <= p x eps (+ rounding), every element,
 *                      for allreduce and reduce: each input is quantized once and the
 *                      integers add exactly; reduce_scatter <= (p - 1) x eps: its last
 *                      step adds this rank's own values to the decompressed partial
 *                      without quantizing them.
 *   homomorphic, MIN/MAX: |result - min/max of inputs| <= eps; it does not grow with p.
 *   DOC, SUM/MIN/MAX:  reduce_scatter <= (p - 1) x eps (each of the p - 1 ring steps
 *                      recompresses the partial result); allreduce and reduce <= p x eps
 *                      (the reduced blocks are compressed once more to be gathered).
 *   CPRP2P (baseline): DOC without pipelining, and the allgather recompresses at every hop:
 *                      allreduce <= (2p - 2) x eps.
 * All ranks of an allreduce receive bit-identical results (every rank decompresses the
 * same streams). Node-aware allreduce (ZCOLL_ALGO_HIERARCHICAL, see above the collectives):
 * SUM within nodes x eps (+ rounding), nodes <= p, so within the homomorphic bound above,
 * and so is node-aware reduce; node-aware reduce_scatter within (nodes - 1) x eps.
 *
 * Algorithms: reduce_scatter and reduce run a ring reduce-scatter (p - 1 steps, each
 * moving 1/p of the data, pipelined in pieces of a few codec chunks); reduce then
 * gathers the reduced blocks, still compressed, to the root. allreduce runs the ring
 * reduce-scatter followed by a ring allgather of the compressed reduced blocks
 * (ZCOLL_ALGO_RING), or recursive doubling on whole streams (ZCOLL_ALGO_RECURSIVE_DOUBLING,
 * homomorphic only; non-power-of-two counts fold the extra ranks in first and send them
 * the result last). AUTO picks recursive doubling for messages under 512 KiB per rank
 * on 4 or more ranks, the ring otherwise.
 *
 * Extra memory per call, reused across calls: the compressed form of the result
 * (reserved at the codec's worst case, about the raw size) and four piece buffers of one
 * block for the ring's double-buffered receives and sends (recursive doubling: the
 * compressed form of this rank's input and two more whole-stream buffers instead), and,
 * on the DOC path and in a reduce-scatter's last step, one piece of decompressed values. The homomorphic ring quantizes this
 * rank's input straight into each partial it receives (zcoll_combine_values), so it keeps
 * no compressed copy of the input.
 */
int zcoll_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                    zcoll_comm comm);
int zcoll_reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                 zcoll_comm comm);
int zcoll_reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype,
                               MPI_Op op, zcoll_comm comm);
int zcoll_reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
                         MPI_Op op, zcoll_comm comm);

/* What the last collective (or zcoll_send/zcoll_isend, see point-to-point) on this
 * communicator did, as seen by this rank (with several threads, the last one recorded). */
typedef struct zcoll_stats {
  int compressed;       /* 1 if the compressed path ran, 0 if plain MPI */
  int algorithm;        /* zcoll_algorithm that ran */
  double eb_abs;        /* absolute bound used (0 when not compressed) */
  size_t raw_bytes;     /* uncompressed bytes of the blocks this rank sent */
  size_t wire_bytes;    /* bytes this rank sent (compressed) */
  double t_compress, t_comm, t_decompress; /* seconds on this rank (CPRP2P: summed over
                                              the compressions and decompressions of every hop) */
  double t_reduce;      /* reductions: seconds combining partial results (homomorphic on the
                           compressed integers, DOC on decompressed values); 0 otherwise.
                           t_comm is the call's time less the other three and t_setup. */
  double t_total;       /* seconds of the whole call on this rank */
  double t_predicted;   /* the cost model's prediction for the path that ran (0: no model:
                           a fixed algorithm, ZCOLL_DECIDE_COMPRESS, or below min_bytes) */
  double t_predicted_plain; /* its prediction for plain MPI (0: no model) */
  double ratio_predicted;   /* predicted raw/compressed from the sample (0: not predicted) */
  double t_model;           /* seconds this rank spent on the model's sample (about 0.4% of the
                               values compressed, one slice of them decompressed, one thread) */
  double t_setup;           /* collectives: seconds from the call's start to its decision, before
                               any of its data moved: the REL range pass (a read of every value),
                               the sample (t_model), the ranks' agreement (one small
                               MPI_Allreduce, which also waits for the slowest rank to arrive).
                               0 where the call went straight to MPI (below min_bytes, a fixed
                               ZCOLL_ALGO_MPI, AUTO's fast path); send records: 0. */
} zcoll_stats;
int zcoll_last_stats(zcoll_comm comm, zcoll_stats *stats);

/* ========================================================== point-to-point
 *
 * MPI_Send, MPI_Recv, MPI_Isend, MPI_Irecv, MPI_Wait, MPI_Test and MPI_Waitall with MPI's
 * arguments and semantics, on a zcoll_comm. Messages carry the caller's tag on a
 * duplicate of its communicator that nothing else uses, so they never match the
 * application's own MPI traffic or zcoll's collectives. Every zcoll message is exactly
 * one MPI message, so matching by source and tag (MPI_ANY_SOURCE, MPI_ANY_TAG,
 * MPI_PROC_NULL) and MPI's non-overtaking order hold as in MPI.
 *
 * Compression: an MPI_FLOAT or MPI_DOUBLE message of at least config.min_bytes is
 * compressed by the sender with config.codec (codec, eb_mode, eb, threads; a REL bound
 * resolves from the sender's own message). Every element received is within that eb_abs
 * of the sender's value (the codec's guarantee; NaN and Inf bit for bit). Smaller float
 * messages and every other datatype, derived types included, arrive bit-exact;
 * config.algorithm does not apply. A float message travels as MPI_BYTE behind a 16-byte
 * envelope (raw or compressed, element type, element count). So a message sent as
 * MPI_FLOAT (MPI_DOUBLE) must be received as MPI_FLOAT (MPI_DOUBLE), and a message sent
 * with any other datatype by a receive with neither of these; unlike plain MPI, a
 * derived type made of floats does not match an MPI_FLOAT message.
 * The receiver needs no handshake: a float receive posts one MPI_Irecv into a staging
 * buffer that any message of at most count elements fits, and the values are unpacked
 * into buf by the zcoll_wait/zcoll_test/zcoll_waitall that completes the request.
 *
 * Status: MPI_SOURCE, MPI_TAG and MPI_ERROR are set, and MPI_Get_count(status, datatype,
 * &n) gives the number of (uncompressed) elements received. MPI_STATUS_IGNORE and
 * MPI_STATUSES_IGNORE are accepted.
 *
 * Errors: ZCOLL_ERR_ARG, before any communication, for a NULL comm or request pointer,
 * count < 0, MPI_DATATYPE_NULL, a NULL float buffer with count > 0, a rank outside the
 * communicator (other than MPI_PROC_NULL, and MPI_ANY_SOURCE to receive), or a tag outside
 * [0, MPI_TAG_UB] (other than MPI_ANY_TAG to receive). A message with more elements than
 * the receive count gives ZCOLL_ERR_TRUNCATE and MPI_ERROR = MPI_ERR_TRUNCATE; nothing is
 * written past the receive buffer, and a float receive leaves it unchanged. A float
 * message that fails validation gives ZCOLL_ERR_CORRUPT (or ZCOLL_ERR_VERSION, or
 * ZCOLL_ERR_MISMATCH for a message sent as the other float type) and MPI_ERROR =
 * MPI_ERR_OTHER; buf then holds undefined values, within its count. An MPI failure gives
 * ZCOLL_ERR_MPI and MPI's error code in MPI_ERROR. Either way the request is complete.
 * A float send that fails once its arguments are checked (no memory for its request or
 * staging buffer, the codec failing, MPI failing to post it) returns that code and sends,
 * in place of the message, a 16-byte failure notice (from static memory, so it needs no
 * allocation): the receive that matches it completes with the same code, MPI_ERROR =
 * MPI_ERR_OTHER, count 0 and buf unchanged, and zcoll_error_detail() names the sender,
 * instead of waiting forever. A receive that fails before it is posted (an error from
 * zcoll_irecv, or from zcoll_recv with MPI's empty status: MPI_SOURCE = MPI_ANY_SOURCE,
 * MPI_ERROR = MPI_ERR_OTHER) has matched nothing, and the message is left for the next
 * receive; one that fails when the message has arrived (unpacking it) has consumed it.
 * MPICH 4.0 raises the errors of MPI_Wait and MPI_Test (a truncated receive) on
 * MPI_COMM_WORLD's error handler, fatal by default, so during each MPI_Wait or MPI_Test
 * that zcoll makes, the handlers of MPI_COMM_WORLD and MPI_COMM_SELF are
 * MPI_ERRORS_RETURN; they are restored after.
 *
 * Nonblocking: zcoll_isend compresses (small float messages: copies) into a staging
 * buffer before it returns, so the buffer of a float message may be reused as soon as
 * zcoll_isend returns (stronger than MPI). For other datatypes MPI's rule applies: the
 * buffer is MPI's until the request completes. zcoll_irecv posts the receive at once.
 * zcoll_test makes progress. Completed requests are freed and set to ZCOLL_REQUEST_NULL;
 * zcoll_wait and zcoll_test on ZCOLL_REQUEST_NULL succeed at once with an empty status
 * (MPI_ANY_SOURCE, MPI_ANY_TAG, count 0), as in MPI. zcoll_waitall completes every request
 * even when some fail and returns the error of the first failed one by index (each
 * status's MPI_ERROR says which). Complete every request before zcoll_comm_free. A
 * zcoll_comm and its requests are used by one thread at a time, and no other thread
 * sets the error handler of MPI_COMM_WORLD or MPI_COMM_SELF meanwhile.
 *
 * zcoll_send and zcoll_isend set zcoll_last_stats to that send: compressed, eb_abs,
 * raw_bytes, wire_bytes (envelope included), t_compress; algorithm is ZCOLL_ALGO_AUTO when
 * compressed and ZCOLL_ALGO_MPI otherwise. Receives leave the stats alone.
 *
 * Extra memory: each outstanding float request holds one staging buffer. A receive's is
 * zcoll_codec_bound(count, dtype) + 16 bytes (about the raw size of count elements; only
 * the pages the message fills are touched); a compressed send's is the same for its
 * count; a small float send's is its raw size + 16. A completed request's buffer goes to
 * a pool in the zcoll_comm and the next request that fits reuses it, so a loop of
 * sends and receives allocates only in its first iteration. The pool keeps at most the
 * 64 largest buffers, until zcoll_comm_free. Past 2 GiB a receive's buffer is rounded up
 * to whole MiB (MPI-3 counts are ints). Plus the codec's per-thread scratch.
 */
typedef struct zcoll_request_s *zcoll_request;
#define ZCOLL_REQUEST_NULL ((zcoll_request)0)

int zcoll_send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, zcoll_comm comm);
int zcoll_recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, zcoll_comm comm,
               MPI_Status *status);
int zcoll_isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, zcoll_comm comm,
                zcoll_request *request);
int zcoll_irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, zcoll_comm comm,
                zcoll_request *request);
int zcoll_wait(zcoll_request *request, MPI_Status *status);
int zcoll_test(zcoll_request *request, int *flag, MPI_Status *status);
int zcoll_waitall(int count, zcoll_request requests[], MPI_Status statuses[]);

#endif /* ZCOLL_CODEC_ONLY */

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif

#endif /* ZCOLL_H */
