// The stream engine: plans, the chunk writer and reader, and whole-buffer
// compress/decompress with OpenMP over chunks, for every chunk codec (chunk_codec.h), in
// the container of container.h; and the homomorphic combination of fzl streams. The C
// API in stream_api.cc and the collectives (src/coll) use it.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "codec/chunk_codec.h"
#include "codec/container.h"
#include "codec/fzl_kernels.h"
#include "zcoll.h"

namespace zcoll::codec {

struct Plan {
  const RegisteredCodec* codec = nullptr;  // how chunks are encoded (the header's codec byte)
  zcoll_dtype dtype = ZCOLL_FLOAT32;
  size_t esize = 4;
  size_t count = 0;
  size_t chunk_len = 0;
  size_t nchunks = 0;
  int ndims = 1;
  size_t dims[3] = {0, 0, 0};
  ChunkGeometry geom;

  size_t entry_offset(size_t k) const { return kHeaderBytes + k * kIndexEntryBytes; }
  size_t data_offset() const { return kHeaderBytes + nchunks * kIndexEntryBytes; }
  size_t chunk_begin(size_t k) const { return k * chunk_len; }
  size_t chunk_values(size_t k) const { return std::min(count - chunk_begin(k), chunk_len); }
};

// Entry points that take a dtype from a caller take it as an int (a zcoll_dtype value, or
// anything else a C caller passed: C++ may assume an enum holds one of its values, so
// nothing here converts to zcoll_dtype before checking).
size_t element_size(int dtype);  // 0 when unknown
// min and max over the finite values (lo > hi when there are none), OpenMP over threads.
void value_range(zcoll_dtype dtype, const void* in, size_t n, int threads, double* lo, double* hi);
// The absolute bound for a relative one, given the finite value range (see zcoll.h).
double rel_to_abs(double rel, double lo, double hi);
// Validates params and builds a plan; resolves a REL bound with a pass over `in`.
int make_plan(const zcoll_codec_params* params, int dtype, const void* in, size_t count, Plan* plan);
// Threads to use for `threads` (0 = the OpenMP default), never more than `work` items.
int thread_count(int threads, size_t work);

// Compresses chunks in order into one output buffer.
class Writer {
 public:
  int begin(const Plan& plan, const void* in, void* out, size_t out_cap);
  int next(bool* done);
  int finish(size_t* out_size);
  size_t nchunks() const { return plan_.nchunks; }

 private:
  Plan plan_;
  const uint8_t* in_ = nullptr;
  uint8_t* out_ = nullptr;
  size_t cap_ = 0, pos_ = 0, next_ = 0;
};

// Validates a stream once and then decodes any chunk on demand.
class Reader {
 public:
  int open(const void* in, size_t in_size);
  int chunk(size_t k, void* out) const;  // out: the whole array
  // Chunk k's stored bytes after checking them against the index checksum.
  int chunk_ref(size_t k, ChunkRef* ref) const;
  const Plan& plan() const { return plan_; }
  size_t stream_bytes() const { return size_; }

 private:
  Plan plan_;
  const uint8_t* in_ = nullptr;
  size_t size_ = 0;
  std::vector<size_t> offset_;  // nchunks + 1 byte offsets into in_
};

int compress(const zcoll_codec_params* params, int dtype, const void* in, size_t count,
             void* out, size_t out_cap, size_t* out_size, double* eb_abs_out);
int decompress(const void* in, size_t in_size, int dtype, void* out, size_t count, int threads);
size_t compress_bound(size_t count, int dtype);
// zcoll_estimate_size: the stream size compress() would give, from a sample of chunks.
int estimate_size(const zcoll_codec_params* params, int dtype, const void* in, size_t count,
                  double fraction, size_t* predicted, size_t* sampled_values);
// Homomorphic combination of two streams (zcoll_combine); op is a CombineOp.
int combine(int op, const void* a, size_t a_size, const void* b, size_t b_size, void* out, size_t out_cap,
            size_t* out_size, int threads);
// op(values, b) without compressing values first (zcoll_combine_values).
int combine_values(int op, const void* values, size_t count, int dtype, const void* b, size_t b_size,
                   void* out, size_t out_cap, size_t* out_size, int threads);

}  // namespace zcoll::codec
