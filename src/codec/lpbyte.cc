// lpbyte: the byte-wise linear-predictive codec of Hu & Koibuchi, as a chunk codec of the
// zcoll stream (chunk_codec.h).
//
// Chunk layout (n values of T = float or double; eb the stream's absolute bound):
//   codes:  n bytes, one per value, in array order
//   values: the values whose code is 0xFF, verbatim (T, little-endian), in the order the
//           predictors visit them (lp::Lanes in kernels/lp.h: in array order for
//           chunks under 2048 values, else four segments in lockstep)
// The code byte itself says "miss, the value follows in the values section", so there is
// no separate index of miss positions (the paper sends one 4-byte index per predicted
// value); a miss costs 1 + sizeof(T) bytes, a hit 1 byte. The decoder checks that the
// chunk is exactly n + misses x sizeof(T) bytes.
//
// Codes, with p0..p3 the 0th- to 3rd-order predictions from the previous reconstructed
// values (kernels/lp.h) and y the value the decoder writes:
//   0x00..0x03  y = T(p_c)                                 the paper's four codes
//   0x04..0xFD  y = T(p1 + k x 2 eb), k in [-125, -1] u [1, 125]:  code 4 + (k + 125) for
//               k < 0, code 128 + k for k > 0
//   0xFE        invalid (rejected)
//   0xFF        miss: y is the next value of the values section
// The encoder takes, among the codes whose y is within eb of x (|x - y| <= eb in double,
// y rounded to T), the one with the smallest error (ties: the lower code); a miss when
// there is none, and for NaN and +-Inf, which are therefore reproduced bit for bit.
//
// Why the corrections: the paper uses 4 of the 256 code values. With only them a value is
// a hit when some prediction is within eb of it, which on the real fields of data/ and
// ../shared/datasets is rare enough at REL 1e-4 that the stream is about as large as the
// input (0.8-1.2x; it would be stored raw). The spare codes extend the linear predictor p1
// by up to +-125 bins of width 2 eb, so a value is a hit when it is within about 251 eb of
// p1: at REL 1e-4 the ratio is 2.4-8.0x on the same fields (and at most 4x for float, 8x
// for double, one byte per value). Other splits of the code space measured (four
// predictors x +-31 bins, p0 and p1 x +-63, p1 and p2 x +-63, p1 alone x +-127) were lower
// or, for p1 alone, within 1% of this and without the paper's codes.
#include "codec/chunk_codec.h"
#include "codec/container.h"
// The scalar decoder shares the encoder stage's format, from its generic (no ISA flags) copy.
#define ZCOLL_KERNELS_ISA generic_isa
#include "codec/kernels/lpbyte.h"

namespace zcoll::codec {
namespace {

namespace lp = fzl::generic_isa::lp;
using namespace fzl::generic_isa::lpbyte;

template <class T>
bool decode(const uint8_t* in, size_t bytes, const uint8_t* /*buffer_end*/, size_t n, size_t /*begin*/,
            const ChunkGeometry& g, ChunkScratch& /*s*/, T* out) {
  if (bytes < n || (bytes - n) % sizeof(T)) return false;
  const double twoeb = g.twoeb;
  const uint8_t* vals = in + n;
  const uint8_t* const vals_end = in + bytes;
  const T zero = T(0);
  bool bad = false;
  lp::History h[lp::Lanes::kLanes];
  lp::Lanes(n).run([&](int l, size_t i) {
    const unsigned c = in[i];
    double p[4];
    h[l].predict(p);
    // Branch-free: the prediction the code names, and the next stored value if there is one.
    const double pred = p[c < kFirstCorrection ? c : 1];
    const double k = c < kFirstCorrection || c >= kInvalid ? 0.0 : code_correction(c);
    const T yc = k == 0 ? static_cast<T>(pred) : corrected<T>(pred, k, twoeb);
    const bool miss = c == kMiss, avail = vals < vals_end;
    const T yv = load<T>(avail ? static_cast<const void*>(vals) : static_cast<const void*>(&zero));
    bad |= c == kInvalid || (miss && !avail);
    vals += miss && avail ? sizeof(T) : 0;
    const T y = miss ? yv : yc;
    store(out + i, y);
    h[l].push(y);
  });
  return !bad && vals == vals_end;
}

size_t worst(size_t n, size_t esize) { return n * (1 + esize); }

}  // namespace

const ChunkCodec kLpbyteChunkCodec{false, 0, worst, fzl::Selected<&fzl::Kernels::lpbyte_encode_f32>::call,
                                   fzl::Selected<&fzl::Kernels::lpbyte_encode_f64>::call, decode<float>, decode<double>};

}  // namespace zcoll::codec
