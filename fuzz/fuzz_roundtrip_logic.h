// The compressor fuzz logic, shared by fuzz_roundtrip.cc (libFuzzer) and the
// replay test. The first 6 bytes choose the parameters, the rest is the data:
//   byte 0: bit 0 dtype (0 f32, 1 f64), bit 1 REL, bits 2-3 ndims (0..3), bits 4-5 threads (1..4),
//           bits 6-7 codec: codec_ids()[bits % their number] (0 fzl, 1 lpbyte, 2 lpbit, 3 szx)
//   byte 1: chunk_len: 0 = default, else 32 * (1 + b % 8)
//   byte 2-3: eb = (1 + b3 / 64) * 10^((b2 % 61) - 30)
//   byte 4-5: the fast dimensions of a 2-D/3-D shape (1 + b % 16); the shape is
//             used only when it divides the element count
// Checks: compression into exactly zcoll_codec_bound bytes succeeds and stays
// inside; the guarantee for every element; NaN/Inf bit for bit; the stream is
// the same with 1 thread and with the writer API.
#pragma once
#include <cmath>

#include "codec_ids.h"
#include "fuzz_decompress_logic.h"

namespace zcoll_fuzz {

template <class T>
inline const char* check_roundtrip_typed(const uint8_t* raw, size_t n, zcoll_codec_params p) {
  const zcoll_dtype dt = sizeof(T) == 4 ? ZCOLL_FLOAT32 : ZCOLL_FLOAT64;
  std::unique_ptr<T[]> in(new T[n ? n : 1]);
  if (n) std::memcpy(in.get(), raw, n * sizeof(T));
  const size_t bound = zcoll_codec_bound(n, dt);
  if (bound == 0) return "zcoll_codec_bound returned 0";
  OutBuf s(bound);
  size_t size = 0;
  double eb_abs = -1;
  int rc = zcoll_compress(&p, dt, in.get(), n, s.data(), bound, &size, &eb_abs);
  if (!s.intact()) return "zcoll_compress wrote outside the output buffer";
  if (rc != ZCOLL_SUCCESS) return "zcoll_compress failed on a buffer of zcoll_codec_bound bytes";
  if (size == 0 || size > bound) return "zcoll_compress: size outside (0, bound]";
  if (p.eb_mode == ZCOLL_EB_ABS && eb_abs != p.eb) return "zcoll_compress: eb_abs_out != eb in ABS mode";

  OutBuf o(n * sizeof(T));
  rc = zcoll_decompress(s.data(), size, dt, o.data(), n, p.threads);
  if (!o.intact()) return "zcoll_decompress wrote outside the output buffer";
  if (rc != ZCOLL_SUCCESS) return "zcoll_decompress failed on a fresh stream";
  for (size_t i = 0; i < n; ++i) {
    T x = in[i], y;
    std::memcpy(&y, o.data() + i * sizeof(T), sizeof(T));
    if (std::isfinite(x)) {
      if (!(std::fabs(static_cast<double>(x) - static_cast<double>(y)) <= eb_abs)) return "error bound violated";
    } else if (std::memcmp(&x, &y, sizeof(T)) != 0) {
      return "NaN/Inf not reproduced bit for bit";
    }
  }

  // one thread, and the writer, make the same stream
  zcoll_codec_params p1 = p;
  p1.threads = 1;
  OutBuf s1(bound);
  size_t size1 = 0;
  rc = zcoll_compress(&p1, dt, in.get(), n, s1.data(), bound, &size1, nullptr);
  if (rc != ZCOLL_SUCCESS || size1 != size || std::memcmp(s1.data(), s.data(), size) != 0)
    return "the stream depends on the thread count";
  OutBuf sw(bound);
  zcoll_writer* w = nullptr;
  rc = zcoll_writer_begin(&p, dt, in.get(), n, sw.data(), bound, &w);
  if (rc != ZCOLL_SUCCESS) return "zcoll_writer_begin failed where zcoll_compress succeeds";
  const size_t nch = zcoll_writer_nchunks(w);
  for (size_t k = 0; k < nch; ++k) {
    int done = -1;
    rc = zcoll_writer_next(w, &done);
    if (rc != ZCOLL_SUCCESS || done != (k + 1 == nch)) {
      zcoll_writer_abort(&w);
      return "zcoll_writer_next failed or set done wrongly";
    }
  }
  size_t wsize = 0;
  rc = zcoll_writer_finish(&w, &wsize);
  if (rc != ZCOLL_SUCCESS || wsize != size || std::memcmp(sw.data(), s.data(), size) != 0)
    return "the writer's stream differs from zcoll_compress";
  if (!sw.intact()) return "the writer wrote outside the output buffer";
  // and the fresh stream passes the decompressor checks
  return check_decompress(s.data(), size);
}

inline const char* check_roundtrip(const uint8_t* data, size_t size) {
  if (size < 6) return nullptr;
  zcoll_codec_params p;
  zcoll_codec_params_init(&p);
  const bool f64 = data[0] & 1;
  p.eb_mode = (data[0] & 2) ? ZCOLL_EB_REL : ZCOLL_EB_ABS;
  int ndims = (data[0] >> 2) & 3;
  p.threads = 1 + ((data[0] >> 4) & 3);
  p.codec = codec_ids()[(data[0] >> 6) % codec_ids().size()];
  p.chunk_len = data[1] == 0 ? 0 : 32u * (1u + data[1] % 8u);
  p.eb = (1.0 + data[3] / 64.0) * std::pow(10.0, static_cast<int>(data[2] % 61) - 30);
  const size_t es = f64 ? 8 : 4;
  size_t n = (size - 6) / es;
  if (n > 100000) n = 100000;
  const size_t a = 1 + data[4] % 16, b = 1 + data[5] % 16;
  if (ndims == 2 && n % a == 0 && n > 0) {
    p.ndims = 2;
    p.dims[0] = n / a;
    p.dims[1] = a;
  } else if (ndims == 3 && n % (a * b) == 0 && n > 0) {
    p.ndims = 3;
    p.dims[0] = n / (a * b);
    p.dims[1] = a;
    p.dims[2] = b;
  }
  return f64 ? check_roundtrip_typed<double>(data + 6, n, p) : check_roundtrip_typed<float>(data + 6, n, p);
}

}  // namespace zcoll_fuzz
