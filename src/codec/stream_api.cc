// The codec's C API: argument checks, exception barrier, and handle lifetimes.
#include <cstring>
#include <memory>
#include <type_traits>

#include "codec/stream.h"
#include "common/error_detail.h"
#include "zcoll.h"

using zcoll::guarded, zcoll::codec::Plan, zcoll::codec::Reader, zcoll::codec::Writer;

struct zcoll_writer {
  Writer w;
};
struct zcoll_reader {
  Reader r;
  zcoll_stream_info info;
};

namespace {
// The value of an enum parameter as a C caller passed it, which may be any int (dtype 9,
// op 4, -1): C++ may assume an enum object holds one of its enumerators, so it is read
// as bytes, never loaded as the enum, and the engine checks it as an integer.
template <class E>
int passed_value(const E& e) {
  std::underlying_type_t<E> v;
  std::memcpy(&v, &e, sizeof v);
  return static_cast<int>(v);
}

// Deletes a handle and clears the caller's pointer to it (handle may be null).
template <class H>
void destroy(H** handle) {
  if (!handle) return;
  delete *handle;
  *handle = nullptr;
}

void fill_info(const Reader& r, zcoll_stream_info* info) {
  const Plan& p = r.plan();
  info->codec = p.codec->id;
  info->format_version = zcoll::codec::kFormatVersion;
  info->dtype = p.dtype;
  info->count = p.count;
  info->eb_abs = p.geom.eb;
  info->chunk_len = p.chunk_len;
  info->nchunks = p.nchunks;
  info->ndims = p.ndims;
  for (int d = 0; d < 3; ++d) info->dims[d] = p.dims[d];
  info->stream_bytes = r.stream_bytes();
}
}  // namespace

extern "C" {

void zcoll_codec_params_init(zcoll_codec_params* p) {
  if (!p) return;
  *p = zcoll_codec_params{};  // eb, threads, chunk_len, ndims and dims 0
  p->codec = ZCOLL_CODEC_FZL;
  p->eb_mode = ZCOLL_EB_ABS;
}

const char* zcoll_codec_name(int codec) {
  const zcoll::codec::RegisteredCodec* c = zcoll::codec::find_codec(codec);
  return c ? c->name : nullptr;
}

int zcoll_codec_from_name(const char* name, int* codec) {
  if (!name || !codec) return ZCOLL_ERR_ARG;
  auto lower = [](char ch) { return ch >= 'A' && ch <= 'Z' ? static_cast<char>(ch - 'A' + 'a') : ch; };
  for (const zcoll::codec::RegisteredCodec& c : zcoll::codec::kCodecs) {
    size_t i = 0;
    while (c.name[i] && lower(name[i]) == c.name[i]) ++i;
    if (!c.name[i] && !name[i]) {
      *codec = c.id;
      return ZCOLL_SUCCESS;
    }
  }
  return ZCOLL_ERR_CODEC;
}

size_t zcoll_codec_bound(size_t count, zcoll_dtype dtype) {
  return zcoll::codec::compress_bound(count, passed_value(dtype));
}

int zcoll_combine(zcoll_op op, const void* a, size_t a_size, const void* b, size_t b_size, void* out,
                  size_t out_cap, size_t* out_size, int threads) {
  return guarded([&] {
    return zcoll::codec::combine(passed_value(op), a, a_size, b, b_size, out, out_cap, out_size, threads);
  });
}

int zcoll_combine_values(zcoll_op op, const void* values, size_t count, zcoll_dtype dtype, const void* b,
                         size_t b_size, void* out, size_t out_cap, size_t* out_size, int threads) {
  return guarded([&] {
    return zcoll::codec::combine_values(passed_value(op), values, count, passed_value(dtype), b, b_size, out, out_cap,
                                        out_size, threads);
  });
}

int zcoll_compress(const zcoll_codec_params* params, zcoll_dtype dtype, const void* in, size_t count, void* out,
                   size_t out_cap, size_t* out_size, double* eb_abs_out) {
  return guarded([&]() -> int {
    return zcoll::codec::compress(params, passed_value(dtype), in, count, out, out_cap, out_size, eb_abs_out);
  });
}

int zcoll_estimate_size(const zcoll_codec_params* params, zcoll_dtype dtype, const void* in, size_t count,
                        double fraction, size_t* predicted_size, size_t* sampled_count) {
  return guarded([&]() -> int {
    return zcoll::codec::estimate_size(params, passed_value(dtype), in, count, fraction, predicted_size,
                                       sampled_count);
  });
}

int zcoll_stream_inspect(const void* in, size_t in_size, zcoll_stream_info* info) {
  if (!info) return ZCOLL_ERR_ARG;
  return guarded([&]() -> int {
    Reader r;
    const int rc = r.open(in, in_size);
    if (rc == ZCOLL_SUCCESS) fill_info(r, info);
    return rc;
  });
}

int zcoll_decompress(const void* in, size_t in_size, zcoll_dtype dtype, void* out, size_t count, int threads) {
  return guarded([&]() -> int { return zcoll::codec::decompress(in, in_size, passed_value(dtype), out, count, threads); });
}

int zcoll_writer_begin(const zcoll_codec_params* params, zcoll_dtype dtype, const void* in, size_t count,
                       void* out, size_t out_cap, zcoll_writer** writer) {
  if (!writer) return ZCOLL_ERR_ARG;
  *writer = nullptr;
  return guarded([&]() -> int {
    Plan plan;
    if (const int rc = zcoll::codec::make_plan(params, passed_value(dtype), in, count, &plan)) return rc;
    std::unique_ptr<zcoll_writer> w(new zcoll_writer);
    if (const int rc = w->w.begin(plan, in, out, out_cap)) return rc;
    *writer = w.release();
    return ZCOLL_SUCCESS;
  });
}

size_t zcoll_writer_nchunks(const zcoll_writer* writer) { return writer ? writer->w.nchunks() : 0; }

int zcoll_writer_next(zcoll_writer* writer, int* done) {
  if (!writer) return ZCOLL_ERR_ARG;
  return guarded([&]() -> int {
    bool d = false;
    const int rc = writer->w.next(&d);
    if (done) *done = d ? 1 : 0;
    return rc;
  });
}

int zcoll_writer_finish(zcoll_writer** writer, size_t* out_size) {
  int rc = ZCOLL_ERR_ARG;
  if (writer && *writer && out_size) rc = guarded([&] { return (*writer)->w.finish(out_size); });
  zcoll_writer_abort(writer);  // whatever the outcome (zcoll.h); writer may be null
  return rc;
}

void zcoll_writer_abort(zcoll_writer** writer) { destroy(writer); }

int zcoll_reader_open(const void* in, size_t in_size, zcoll_reader** reader) {
  if (!reader) return ZCOLL_ERR_ARG;
  *reader = nullptr;
  return guarded([&]() -> int {
    std::unique_ptr<zcoll_reader> r(new zcoll_reader);
    if (const int rc = r->r.open(in, in_size)) return rc;
    fill_info(r->r, &r->info);
    *reader = r.release();
    return ZCOLL_SUCCESS;
  });
}

const zcoll_stream_info* zcoll_reader_info(const zcoll_reader* reader) { return reader ? &reader->info : nullptr; }

int zcoll_reader_chunk(zcoll_reader* reader, size_t k, void* out) {
  if (!reader) return ZCOLL_ERR_ARG;
  return guarded([&]() -> int { return reader->r.chunk(k, out); });
}

void zcoll_reader_close(zcoll_reader** reader) { destroy(reader); }

}  // extern "C"
