#include "codec/stream.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <memory>
#include <new>

namespace zcoll::codec {

// ---------------------------------------------------------- scratch memory

namespace {

// Per-thread working memory, kept between calls (OpenMP threads persist) so that a
// codec called in a loop allocates only when a larger chunk length first appears.
struct ThreadScratch {
  static constexpr size_t kQPad = 8;  // zeros before q[0]: the 1-D encoder reads q[-1], q[-2]
  std::unique_ptr<int32_t[]> q, r;
  std::unique_ptr<uint32_t[]> exact;
  std::unique_ptr<const uint8_t*[]> exact_src;
  std::unique_ptr<uint8_t[]> staging;  // an encoded chunk that may not fit in place
  std::unique_ptr<int32_t[]> qb;
  std::unique_ptr<uint32_t[]> exact_b;
  std::unique_ptr<uint8_t[]> vals;  // both operands' exact values (combination)
  std::unique_ptr<uint64_t[]> words;  // the chunk codec's own scratch (ChunkCodec::scratch_words)
  size_t values = 0, staging_bytes = 0, combine_values = 0, word_count = 0;
  ChunkScratch view;

  ChunkScratch& get_combine(size_t chunk_len, size_t esize) {
    ChunkScratch& v = get(chunk_len, esize);
    if (combine_values < chunk_len) {
      qb.reset(new int32_t[chunk_len]);
      exact_b.reset(new uint32_t[(chunk_len + fzl::kBlock - 1) / fzl::kBlock]);
      vals.reset(new uint8_t[2 * chunk_len * sizeof(double)]);
      combine_values = chunk_len;
    }
    v.qb = qb.get();
    v.exact_b = exact_b.get();
    v.vals_a = vals.get();
    v.vals_b = vals.get() + chunk_len * sizeof(double);
    return v;
  }

  // For the chunk codec c (fzl's staging when null): its staging room and scratch words.
  ChunkScratch& get(size_t chunk_len, size_t esize, const ChunkCodec* c = nullptr) {
    if (values < chunk_len) {
      const size_t blocks = (chunk_len + fzl::kBlock - 1) / fzl::kBlock;
      q.reset(new int32_t[chunk_len + kQPad]());
      r.reset(new int32_t[chunk_len]);
      exact.reset(new uint32_t[blocks]);
      exact_src.reset(new const uint8_t*[blocks]);
      values = chunk_len;
      view = ChunkScratch{q.get() + kQPad, r.get(), exact.get(), exact_src.get()};
    }
    const size_t need = c ? c->worst(chunk_len, esize) : fzl::encoded_chunk_worst(chunk_len, esize);
    if (staging_bytes < need) {
      staging.reset(new uint8_t[need]);
      staging_bytes = need;
    }
    const size_t nwords = c ? c->scratch_words * chunk_len : 0;
    if (word_count < nwords) {
      words.reset(new uint64_t[nwords]);
      word_count = nwords;
    }
    view.words = words.get();
    return view;
  }
};

ThreadScratch& thread_scratch() {
  static thread_local ThreadScratch s;
  return s;
}

bool valid_eb(double eb) { return std::isfinite(eb) && eb > 0; }
// Streams carry the bound after clamping, so a reader accepts only that range.
bool valid_stream_eb(double eb) { return eb > 0 && eb <= DBL_MAX / 4; }

// The grid of fzl_format.h: step 2 eb, or 2 eb32 for float32 (eb32 > 0: eb is above
// the smallest subnormal float; below it no float value can be quantized anyway).
ChunkGeometry geometry(zcoll_dtype dtype, double eb, int ndims, const size_t* dims) {
  ChunkGeometry g;
  g.eb = eb;
  g.eb_f32 = eb >= static_cast<double>(FLT_MAX) ? FLT_MAX : static_cast<float>(eb);
  if (static_cast<double>(g.eb_f32) > eb) g.eb_f32 = std::nextafter(g.eb_f32, 0.0f);
  const bool f32_grid = dtype == ZCOLL_FLOAT32 && g.eb_f32 > 0;
  g.twoeb = 2 * (f32_grid ? static_cast<double>(g.eb_f32) : eb);
  g.inv = 1.0 / g.twoeb;
  if (f32_grid && g.twoeb <= static_cast<double>(FLT_MAX)) {
    g.twoeb_f32 = static_cast<float>(g.twoeb);  // exact
    g.inv_f32 = static_cast<float>(g.inv);
  }
  g.ndims = ndims;
  for (int d = 0; d < 3; ++d) g.extent[d] = dims[d];
  g.kernels = &fzl::select_kernels();
  return g;
}

// Finishes a chunk: `bytes` produced at target (dst itself, or staging when dst had less
// room than the worst case) are moved into dst, and idx receives the chunk's index entry.
int place_chunk(const Plan& plan, uint8_t* dst, size_t cap, const uint8_t* target, size_t bytes, bool raw,
                uint8_t* idx) {
  if (bytes > cap) return ZCOLL_ERR_BUFFER_TOO_SMALL;
  if (target != dst) std::memcpy(dst, target, bytes);
  store_u32(idx, static_cast<uint32_t>(bytes) | (raw ? kRawChunkFlag : 0u));
  store_u32(idx + 4, plan.geom.kernels->checksum(dst, bytes, 0));
  return ZCOLL_SUCCESS;
}

// Encodes chunk k of plan at dst (cap bytes free) with the plan's chunk codec; the result
// is either the encoded chunk or, when that is not smaller, the raw values, indexed at idx.
int put_chunk(const Plan& plan, size_t k, const uint8_t* in, uint8_t* dst, size_t cap, uint8_t* idx) {
  const ChunkCodec& codec = *plan.codec->chunk;
  const size_t n = plan.chunk_values(k), begin = plan.chunk_begin(k);
  const size_t raw = n * plan.esize;
  const uint8_t* src = in + begin * plan.esize;
  ThreadScratch& ts = thread_scratch();
  ChunkScratch& s = ts.get(plan.chunk_len, plan.esize, &codec);
  const bool in_place = cap >= codec.worst(n, plan.esize);
  uint8_t* target = in_place ? dst : ts.staging.get();
  const size_t len = plan.dtype == ZCOLL_FLOAT32
      ? codec.encode_f32(reinterpret_cast<const float*>(src), n, begin, plan.geom, s, target)
      : codec.encode_f64(reinterpret_cast<const double*>(src), n, begin, plan.geom, s, target);
  if (len < raw) return place_chunk(plan, dst, cap, target, len, false, idx);
  return place_chunk(plan, dst, cap, src, raw, true, idx);
}

void write_header(const Plan& plan, uint8_t* out) {
  std::memset(out, 0, kHeaderBytes);
  namespace at = header_offset;
  std::memcpy(out + at::kMagic, kMagic, 4);
  out[at::kVersion] = kFormatVersion;
  out[at::kCodec] = plan.codec->id;
  out[at::kDtype] = static_cast<uint8_t>(plan.dtype);
  out[at::kNdims] = static_cast<uint8_t>(plan.ndims);
  store_u64(out + at::kCount, plan.count);
  store(out + at::kEb, plan.geom.eb);
  store_u32(out + at::kChunkLen, static_cast<uint32_t>(plan.chunk_len));
  store_u32(out + at::kNchunks, static_cast<uint32_t>(plan.nchunks));
  for (int d = 0; d < 3; ++d) store_u64(out + at::kDims + 8 * d, plan.dims[d]);
}

void seal_header(const Plan& plan, uint8_t* out) {
  store_u32(out + header_offset::kChecksum, header_checksum(out, plan.nchunks));
}

size_t ceil_div(size_t a, size_t b) { return a / b + (a % b != 0); }

// The shape rule of params and headers alike: dims[0, ndims) multiply to count without
// overflow (each nonzero when ndims > 1) and the dims after them are 0.
bool dims_valid(int ndims, const size_t dims[3], size_t count) {
  size_t prod = 1;
  for (int d = 0; d < ndims; ++d) {
    if (ndims > 1 && (dims[d] == 0 || prod > SIZE_MAX / dims[d])) return false;
    prod *= dims[d];
  }
  for (int d = ndims; d < 3; ++d)
    if (dims[d]) return false;
  return prod == count;
}

// Writes a whole stream of plan's chunks; put(k, dst, cap, idx) produces chunk k (at
// most its raw size) at dst and fills its index entry at idx. With several threads each
// range of chunks (a contiguous share of the raw layout, dealt round-robin over the threads
// the team actually has) is written into its own share; then the shares slide down into
// place, in order. The bytes do not depend on the thread count.
//
// The slide runs on every thread of the team: at high thread counts it moves most of the
// compressed bytes, which one thread alone would move at a fraction of the team's speed
// (at ratio 4, a quarter of the input: by a 16-core node's copy and codec speeds, as long as
// 16 threads take to compress it all). Share t moves down by shift[t] = begin[t] - dest[t],
// which never decreases with t (no share outgrows its slot). So the bytes bound for
// [x, x + shift at x) all come from at or above x + shift at x: the slide goes up the output
// in steps of that length, each step's bytes split over the team and a barrier between
// steps, and no copy reads what its step writes.
// Shares whose shift is below a sixteenth of the bytes to move, or below 16 KiB (the ranges
// before them barely compressed), move one after another on one thread, which bounds the
// steps at 17; where one step covers all (the ratio above about the thread count), the
// team's only barrier is the one every slide needs.

// The shortest step of a slide in several steps: a barrier costs more than a shorter copy.
constexpr size_t kMinSlideStep = size_t{16} << 10;

// What one assemble() shares across its team: the threads' shares of the chunks, where each
// was written and where it goes, and the slide's steps.
class Assembly {
 public:
  Assembly(const Plan& plan, int threads, uint8_t* out, size_t out_cap)
      : plan_(plan), threads_(threads), o_(out), cap_(out_cap), first_(threads + 1), used_(threads, 0),
        begin_(threads), dest_(threads + 1) {
    for (int t = 0; t <= threads; ++t) first_[t] = plan.nchunks * t / threads;
    for (int t = 0; t < threads; ++t) begin_[t] = plan.data_offset() + plan.chunk_begin(first_[t]) * plan.esize;
  }

  // Writes share t's chunks into its slot (the raw layout's range of them; all of out for one
  // thread); a failure is kept in error() and stops the other shares at their next chunk.
  template <class Put>
  void write_share(int t, Put& put) {
    try {
      const size_t raw_layout = plan_.data_offset() + plan_.count * plan_.esize;
      const size_t slot_end = threads_ == 1 ? cap_ : t + 1 < threads_ ? begin_[t + 1] : raw_layout;
      size_t pos = begin_[t];
      for (size_t k = first_[t]; k < first_[t + 1] && error_.load(std::memory_order_relaxed) == 0; ++k) {
        uint8_t* idx = o_ + plan_.entry_offset(k);
        if (const int r = put(k, o_ + pos, slot_end - pos, idx)) {
          error_.store(r);
          break;
        }
        pos += load_u32(idx) & ~kRawChunkFlag;
      }
      used_[t] = pos - begin_[t];
    } catch (const std::bad_alloc&) {
      error_.store(ZCOLL_ERR_NO_MEMORY);
    }
  }

  // On one thread, once every share is written: where each share goes, the small shifts
  // moved right here, and the steps of the rest (see above).
  void plan_slide(int team) {
    dest_[0] = plan_.data_offset();
    for (int t = 0; t < threads_; ++t) dest_[t + 1] = dest_[t] + used_[t];
    if (error_.load()) return;
    const size_t total = dest_[threads_] - dest_[1];
    const size_t min_step = team > 1 ? std::max(total / (kMaxSteps - 1), std::min(kMinSlideStep, total)) : SIZE_MAX;
    int t = 1;
    for (; t < threads_ && begin_[t] - dest_[t] < min_step; ++t)
      if (dest_[t] != begin_[t]) std::memmove(o_ + dest_[t], o_ + begin_[t], used_[t]);
    size_t x = dest_[t];
    while (t < threads_ && x < dest_[threads_]) {
      while (dest_[t + 1] <= x) ++t;
      step_[steps_++] = x;
      x = std::min(x + (begin_[t] - dest_[t]), dest_[threads_]);
    }
    step_[steps_] = x;
  }

  int steps() const { return steps_; }

  // Thread id's part of step i: the bytes of [step i, step i + 1) it copies into place.
  void slide_step(int i, int id, int team) const {
    const size_t lo = step_[i], len = step_[i + 1] - lo;
    const size_t a = lo + len * id / team, b = lo + len * (id + 1) / team;
    for (int t = 1; t < threads_; ++t) {
      const size_t x = std::max(a, dest_[t]), y = std::min(b, dest_[t + 1]);
      if (x < y) std::memcpy(o_ + x, o_ + begin_[t] + (x - dest_[t]), y - x);
    }
  }

  int error() const { return error_.load(); }
  size_t size() const { return threads_ > 1 ? dest_[threads_] : plan_.data_offset() + used_[0]; }

 private:
  static constexpr int kMaxSteps = 17;
  const Plan& plan_;
  const int threads_;
  uint8_t* const o_;
  const size_t cap_;
  std::vector<size_t> first_, used_, begin_, dest_;
  size_t step_[kMaxSteps + 1] = {};  // the slide's steps: [step_[i], step_[i + 1]) of the output
  int steps_ = 0;
  std::atomic<int> error_{ZCOLL_SUCCESS};
};

template <class Put>
int assemble(const Plan& plan, int threads, void* out, size_t out_cap, size_t* out_size, Put&& put) {
  uint8_t* o = static_cast<uint8_t*>(out);
  if (out_cap < plan.data_offset()) return ZCOLL_ERR_BUFFER_TOO_SMALL;
  write_header(plan, o);
  // One pass in order for one thread, and for outputs smaller than the raw layout.
  if (threads <= 1 || out_cap < plan.data_offset() + plan.count * plan.esize) threads = 1;
  Assembly a(plan, threads, o, out_cap);
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    const int id = omp_get_thread_num(), team = omp_get_num_threads();
    for (int t = id; t < threads; t += team) a.write_share(t, put);
    if (threads > 1) {
#pragma omp barrier
#pragma omp single
      a.plan_slide(team);
      // (single's barrier)
      for (int i = 0; i < a.steps(); ++i) {
        a.slide_step(i, id, team);
        if (i + 1 < a.steps()) {
#pragma omp barrier
        }
      }
    }
  }
  if (const int rc = a.error()) return rc;
  seal_header(plan, o);
  *out_size = a.size();
  return ZCOLL_SUCCESS;
}

bool overlaps(const void* a, size_t an, const void* b, size_t bn) {
  const uintptr_t x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return an && bn && x < y + bn && y < x + an;
}

// Chunk k of a combination: combine(s, target, &raw) writes the result at target (dst
// when it has room for the worst case, else the staging buffer), which is then placed.
template <class Combine>
int combine_into(const Plan& plan, size_t k, uint8_t* dst, size_t cap, uint8_t* idx, Combine&& combine) {
  ThreadScratch& ts = thread_scratch();
  ChunkScratch& s = ts.get_combine(plan.chunk_len, plan.esize);
  uint8_t* target = cap >= fzl::encoded_chunk_worst(plan.chunk_values(k), plan.esize) ? dst : ts.staging.get();
  bool raw = false;
  const size_t bytes = combine(s, target, &raw);
  if (!bytes) return ZCOLL_ERR_CORRUPT;
  return place_chunk(plan, dst, cap, target, bytes, raw, idx);
}
}  // namespace

// REL bounds need the finite value range; threads split the array and merge.
void value_range(zcoll_dtype dtype, const void* in, size_t n, int threads, double* lo, double* hi) {
  const fzl::Kernels& kern = fzl::select_kernels();
  double mn = INFINITY, mx = -INFINITY;
#pragma omp parallel num_threads(threads) reduction(min : mn) reduction(max : mx)
  {
    const size_t t = static_cast<size_t>(omp_get_thread_num()), nt = static_cast<size_t>(omp_get_num_threads());
    const size_t b = n * t / nt, e = n * (t + 1) / nt;
    double l = INFINITY, h = -INFINITY;
    if (dtype == ZCOLL_FLOAT32) kern.range_f32(static_cast<const float*>(in) + b, e - b, &l, &h);
    else kern.range_f64(static_cast<const double*>(in) + b, e - b, &l, &h);
    mn = l < mn ? l : mn;
    mx = h > mx ? h : mx;
  }
  *lo = mn;
  *hi = mx;
}

double rel_to_abs(double rel, double lo, double hi) {
  double range = hi - lo;
  // A constant field (or no finite value) has no range: bound relative to its magnitude.
  if (!(range > 0)) range = lo <= hi ? std::max(std::fabs(lo), std::fabs(hi)) : 0.0;
  if (!(range > 0)) range = 1.0;
  // max - min can overflow (+-1e308) while rel x (max - min) does not.
  double eb = std::isfinite(range) ? rel * range : rel * hi - rel * lo;
  if (!(eb > 0)) eb = DBL_TRUE_MIN;  // rel x range underflowed: the tightest bound there is
  return std::min(eb, DBL_MAX / 4);
}

size_t element_size(int dtype) {
  return dtype == ZCOLL_FLOAT32 ? 4 : dtype == ZCOLL_FLOAT64 ? 8 : 0;
}

int thread_count(int threads, size_t work) {
  int t = threads > 0 ? threads : omp_get_max_threads();
  if (static_cast<size_t>(t) > work) t = static_cast<int>(work ? work : 1);
  return t < 1 ? 1 : t;
}

size_t compress_bound(size_t count, int dtype) {
  const size_t es = element_size(dtype);
  if (!es) return 0;
  // The shortest chunks give the most index entries; each chunk is at most raw.
  const size_t max_chunks = ceil_div(count, kChunkLenStep);
  if (count > (SIZE_MAX - kHeaderBytes) / (es + kIndexEntryBytes)) return 0;
  return kHeaderBytes + max_chunks * kIndexEntryBytes + count * es;
}

int make_plan(const zcoll_codec_params* p, int dtype, const void* in, size_t count, Plan* plan) {
  if (!p) return ZCOLL_ERR_ARG;
  const RegisteredCodec* codec = find_codec(p->codec);
  if (!codec) return ZCOLL_ERR_CODEC;
  const size_t es = element_size(dtype);
  if (!es) return ZCOLL_ERR_DTYPE;
  if (count > 0 && !in) return ZCOLL_ERR_ARG;
  if (p->eb_mode != ZCOLL_EB_ABS && p->eb_mode != ZCOLL_EB_REL) return ZCOLL_ERR_ARG;
  if (!valid_eb(p->eb) || p->threads < 0) return ZCOLL_ERR_ARG;
  const size_t chunk = p->chunk_len ? p->chunk_len : ZCOLL_DEFAULT_CHUNK_LEN;
  if (chunk % kChunkLenStep || chunk < kChunkLenStep || chunk > ZCOLL_MAX_CHUNK_LEN) return ZCOLL_ERR_ARG;
  if (ceil_div(count, chunk) > UINT32_MAX) return ZCOLL_ERR_ARG;
  Plan pl;
  pl.codec = codec;
  pl.dtype = static_cast<zcoll_dtype>(dtype);  // element_size checked it
  pl.esize = es;
  pl.count = count;
  pl.chunk_len = chunk;
  pl.nchunks = ceil_div(count, chunk);
  if (p->ndims < 0 || p->ndims > 3) return ZCOLL_ERR_ARG;
  pl.ndims = p->ndims <= 1 ? 1 : p->ndims;
  if (pl.ndims == 1) pl.dims[0] = count;
  else std::copy(p->dims, p->dims + pl.ndims, pl.dims);
  if (!dims_valid(pl.ndims, pl.dims, count)) return ZCOLL_ERR_ARG;
  double eb = std::min(p->eb, DBL_MAX / 4);
  if (p->eb_mode == ZCOLL_EB_REL) {
    double lo = 0, hi = 0;
    value_range(pl.dtype, in, count, thread_count(p->threads, count / 65536 + 1), &lo, &hi);
    eb = rel_to_abs(p->eb, lo, hi);
  }
  pl.geom = geometry(pl.dtype, eb, pl.ndims, pl.dims);
  *plan = pl;
  return ZCOLL_SUCCESS;
}

// ------------------------------------------------------------------ writer

int Writer::begin(const Plan& plan, const void* in, void* out, size_t out_cap) {
  if (!out) return ZCOLL_ERR_ARG;
  if (out_cap < plan.data_offset()) return ZCOLL_ERR_BUFFER_TOO_SMALL;
  plan_ = plan;
  in_ = static_cast<const uint8_t*>(in);
  out_ = static_cast<uint8_t*>(out);
  cap_ = out_cap;
  pos_ = plan.data_offset();
  next_ = 0;
  write_header(plan_, out_);
  return ZCOLL_SUCCESS;
}

int Writer::next(bool* done) {
  if (next_ < plan_.nchunks) {
    uint8_t* idx = out_ + plan_.entry_offset(next_);
    if (const int rc = put_chunk(plan_, next_, in_, out_ + pos_, cap_ - pos_, idx)) return rc;
    pos_ += load_u32(idx) & ~kRawChunkFlag;
    ++next_;
  }
  if (done) *done = next_ == plan_.nchunks;
  return ZCOLL_SUCCESS;
}

int Writer::finish(size_t* out_size) {
  while (next_ < plan_.nchunks)
    if (const int rc = next(nullptr)) return rc;
  seal_header(plan_, out_);
  *out_size = pos_;
  return ZCOLL_SUCCESS;
}

// ------------------------------------------------------------------ reader

int Reader::open(const void* in_v, size_t in_size) {
  const uint8_t* in = static_cast<const uint8_t*>(in_v);
  if (!in) return ZCOLL_ERR_ARG;
  namespace at = header_offset;
  if (in_size < kHeaderBytes || std::memcmp(in + at::kMagic, kMagic, 4) != 0) return ZCOLL_ERR_CORRUPT;
  if (in[at::kVersion] != kFormatVersion) return ZCOLL_ERR_VERSION;
  const double eb = load<double>(in + at::kEb);
  Plan pl;
  const uint8_t codec = in[at::kCodec], dtype = in[at::kDtype], ndims = in[at::kNdims];
  pl.count = load_u64(in + at::kCount);
  pl.chunk_len = load_u32(in + at::kChunkLen);
  pl.nchunks = load_u32(in + at::kNchunks);
  for (int d = 0; d < 3; ++d) pl.dims[d] = load_u64(in + at::kDims + 8 * d);
  pl.codec = find_codec(codec);
  if (!pl.codec || (dtype != ZCOLL_FLOAT32 && dtype != ZCOLL_FLOAT64) || ndims < 1 || ndims > 3 ||
      !valid_stream_eb(eb) || pl.chunk_len < kChunkLenStep || pl.chunk_len > ZCOLL_MAX_CHUNK_LEN ||
      pl.chunk_len % kChunkLenStep || pl.nchunks != ceil_div(pl.count, pl.chunk_len) ||
      load_u32(in + at::kReserved) != 0)
    return ZCOLL_ERR_CORRUPT;
  pl.dtype = static_cast<zcoll_dtype>(dtype);
  pl.esize = element_size(pl.dtype);
  pl.ndims = ndims;
  if (!dims_valid(ndims, pl.dims, pl.count)) return ZCOLL_ERR_CORRUPT;
  if (pl.nchunks > (in_size - kHeaderBytes) / kIndexEntryBytes) return ZCOLL_ERR_CORRUPT;
  if (header_checksum(in, pl.nchunks) != load_u32(in + at::kChecksum)) return ZCOLL_ERR_CORRUPT;
  pl.geom = geometry(pl.dtype, eb, pl.ndims, pl.dims);
  std::vector<size_t> off(pl.nchunks + 1);
  size_t pos = pl.data_offset();
  for (size_t k = 0; k < pl.nchunks; ++k) {
    off[k] = pos;
    const uint32_t field = load_u32(in + pl.entry_offset(k));
    const size_t n = pl.chunk_values(k), len = field & ~kRawChunkFlag;
    if (field & kRawChunkFlag) {
      if (len != n * pl.esize) return ZCOLL_ERR_CORRUPT;
    } else if (len == 0 || len >= n * pl.esize) {
      return ZCOLL_ERR_CORRUPT;
    }
    if (len > in_size - pos) return ZCOLL_ERR_CORRUPT;
    pos += len;
  }
  if (pos != in_size) return ZCOLL_ERR_CORRUPT;
  off[pl.nchunks] = pos;
  plan_ = pl;
  in_ = in;
  size_ = in_size;
  offset_ = std::move(off);
  return ZCOLL_SUCCESS;
}

int Reader::chunk_ref(size_t k, ChunkRef* ref) const {
  if (k >= plan_.nchunks) return ZCOLL_ERR_ARG;
  const uint8_t* src = in_ + offset_[k];
  const size_t len = offset_[k + 1] - offset_[k];
  const uint8_t* entry = in_ + plan_.entry_offset(k);
  if (plan_.geom.kernels->checksum(src, len, 0) != load_u32(entry + 4)) return ZCOLL_ERR_CORRUPT;
  *ref = ChunkRef{src, len, (load_u32(entry) & kRawChunkFlag) != 0, in_ + size_};
  return ZCOLL_SUCCESS;
}

int Reader::chunk(size_t k, void* out) const {
  if (!out) return ZCOLL_ERR_ARG;
  ChunkRef c;
  if (const int rc = chunk_ref(k, &c)) return rc;
  const size_t n = plan_.chunk_values(k), begin = plan_.chunk_begin(k);
  uint8_t* dst = static_cast<uint8_t*>(out) + begin * plan_.esize;
  if (c.raw) {
    std::memcpy(dst, c.p, c.bytes);
    return ZCOLL_SUCCESS;
  }
  const ChunkCodec& codec = *plan_.codec->chunk;
  ChunkScratch& s = thread_scratch().get(plan_.chunk_len, plan_.esize, &codec);
  const bool ok = plan_.dtype == ZCOLL_FLOAT32
      ? codec.decode_f32(c.p, c.bytes, c.end, n, begin, plan_.geom, s, reinterpret_cast<float*>(dst))
      : codec.decode_f64(c.p, c.bytes, c.end, n, begin, plan_.geom, s, reinterpret_cast<double*>(dst));
  return ok ? ZCOLL_SUCCESS : ZCOLL_ERR_CORRUPT;
}

// ------------------------------------------------------- whole buffers

int compress(const zcoll_codec_params* params, int dtype, const void* in, size_t count, void* out,
             size_t out_cap, size_t* out_size, double* eb_abs_out) {
  if (!out_size || !out) return ZCOLL_ERR_ARG;
  Plan plan;
  if (const int rc = make_plan(params, dtype, in, count, &plan)) return rc;
  if (eb_abs_out) *eb_abs_out = plan.geom.eb;
  return assemble(plan, thread_count(params->threads, plan.nchunks), out, out_cap, out_size,
                  [&](size_t k, uint8_t* dst, size_t cap, uint8_t* idx) {
                    return put_chunk(plan, k, static_cast<const uint8_t*>(in), dst, cap, idx);
                  });
}

int estimate_size(const zcoll_codec_params* params, int dtype, const void* in, size_t count,
                  double fraction, size_t* predicted, size_t* sampled_values) {
  if (!predicted || !(fraction > 0 && fraction <= 1)) return ZCOLL_ERR_ARG;
  Plan plan;
  if (const int rc = make_plan(params, dtype, in, count, &plan)) return rc;
  if (plan.nchunks == 0) {
    *predicted = plan.data_offset();
    if (sampled_values) *sampled_values = 0;
    return ZCOLL_SUCCESS;
  }
  // Chunks are encoded independently and each one's bytes depend only on its own values
  // and position, so the sampled chunks cost exactly what they will cost in the stream;
  // spreading them evenly over the array makes the scaled sum an unbiased estimate.
  const size_t m = std::clamp<size_t>(static_cast<size_t>(std::ceil(fraction * static_cast<double>(plan.nchunks))),
                                      1, plan.nchunks);
  const ChunkCodec& codec = *plan.codec->chunk;
  uint64_t bytes = 0, values = 0;
  std::atomic<int> error{ZCOLL_SUCCESS};
#pragma omp parallel num_threads(thread_count(params->threads, m)) reduction(+ : bytes, values)
  {
    std::vector<uint8_t> dst;
#pragma omp for schedule(static)
    for (size_t i = 0; i < m; ++i) {
      const size_t k = (2 * i + 1) * plan.nchunks / (2 * m);
      const size_t n = plan.chunk_values(k);
      uint8_t idx[kIndexEntryBytes];
      int rc;
      try {
        dst.resize(codec.worst(n, plan.esize));
        rc = put_chunk(plan, k, static_cast<const uint8_t*>(in), dst.data(), dst.size(), idx);
      } catch (const std::bad_alloc&) {
        rc = ZCOLL_ERR_NO_MEMORY;
      }
      if (rc) error.store(rc);
      else {
        bytes += load_u32(idx) & ~kRawChunkFlag;
        values += n;
      }
    }
  }
  if (const int rc = error.load()) return rc;
  const double scaled = static_cast<double>(bytes) * static_cast<double>(plan.count) / static_cast<double>(values);
  *predicted = plan.data_offset() + static_cast<size_t>(std::llround(scaled));
  if (sampled_values) *sampled_values = values;
  return ZCOLL_SUCCESS;
}

int decompress(const void* in, size_t in_size, int dtype, void* out, size_t count, int threads) {
  if (!in || threads < 0) return ZCOLL_ERR_ARG;
  if (!element_size(dtype)) return ZCOLL_ERR_DTYPE;
  Reader reader;
  if (const int rc = reader.open(in, in_size)) return rc;
  const Plan& plan = reader.plan();
  if (plan.dtype != dtype || plan.count != count) return ZCOLL_ERR_MISMATCH;
  if (count > 0 && !out) return ZCOLL_ERR_ARG;
  const int t = thread_count(threads, plan.nchunks);
  std::atomic<int> error{ZCOLL_SUCCESS};
#pragma omp parallel for schedule(static) num_threads(t)
  for (size_t k = 0; k < plan.nchunks; ++k) {
    if (error.load(std::memory_order_relaxed)) continue;
    int r;
    try {
      r = reader.chunk(k, out);
    } catch (const std::bad_alloc&) {
      r = ZCOLL_ERR_NO_MEMORY;
    }
    if (r) error.store(r);
  }
  return error.load();
}

int combine(int op, const void* a, size_t a_size, const void* b, size_t b_size, void* out, size_t out_cap,
            size_t* out_size, int threads) {
  if (op != kCombineSum && op != kCombineMin && op != kCombineMax) return ZCOLL_ERR_ARG;
  if (!a || !b || !out || !out_size || threads < 0) return ZCOLL_ERR_ARG;
  if (overlaps(out, out_cap, a, a_size) || overlaps(out, out_cap, b, b_size)) return ZCOLL_ERR_ARG;
  Reader ra, rb;
  int rc = ra.open(a, a_size);
  if (rc || (rc = rb.open(b, b_size))) return rc;
  const Plan& pa = ra.plan();
  const Plan& pb = rb.plan();
  if (!pa.codec->chunk->homomorphic || !pb.codec->chunk->homomorphic) return ZCOLL_ERR_CODEC;
  if (pa.dtype != pb.dtype || pa.count != pb.count || std::memcmp(&pa.geom.eb, &pb.geom.eb, sizeof(double)) != 0 ||
      pa.chunk_len != pb.chunk_len || pa.ndims != pb.ndims || !std::equal(pa.dims, pa.dims + 3, pb.dims))
    return ZCOLL_ERR_MISMATCH;
  const fzl::Kernels& kern = *pa.geom.kernels;
  return assemble(pa, thread_count(threads, pa.nchunks), out, out_cap, out_size,
                  [&](size_t k, uint8_t* dst, size_t cap, uint8_t* idx) {
                    ChunkRef ca, cb;
                    int r = ra.chunk_ref(k, &ca);
                    if (r || (r = rb.chunk_ref(k, &cb))) return r;
                    const size_t n = pa.chunk_values(k), begin = pa.chunk_begin(k);
                    return combine_into(pa, k, dst, cap, idx, [&](ChunkScratch& s, uint8_t* target, bool* raw) {
                      return pa.dtype == ZCOLL_FLOAT32 ? kern.combine_f32(op, ca, cb, n, begin, pa.geom, s, target, raw)
                                                       : kern.combine_f64(op, ca, cb, n, begin, pa.geom, s, target, raw);
                    });
                  });
}

int combine_values(int op, const void* values, size_t count, int dtype, const void* b, size_t b_size,
                   void* out, size_t out_cap, size_t* out_size, int threads) {
  if (op != kCombineSum && op != kCombineMin && op != kCombineMax) return ZCOLL_ERR_ARG;
  if (!b || !out || !out_size || threads < 0 || (count > 0 && !values)) return ZCOLL_ERR_ARG;
  const size_t es = element_size(dtype);
  if (!es) return ZCOLL_ERR_DTYPE;
  if (overlaps(out, out_cap, values, count * es) || overlaps(out, out_cap, b, b_size)) return ZCOLL_ERR_ARG;
  Reader rb;
  if (const int rc = rb.open(b, b_size)) return rc;
  const Plan& pb = rb.plan();
  if (!pb.codec->chunk->homomorphic) return ZCOLL_ERR_CODEC;
  if (pb.dtype != dtype || pb.count != count) return ZCOLL_ERR_MISMATCH;
  const fzl::Kernels& kern = *pb.geom.kernels;
  const uint8_t* x = static_cast<const uint8_t*>(values);
  return assemble(pb, thread_count(threads, pb.nchunks), out, out_cap, out_size,
                  [&](size_t k, uint8_t* dst, size_t cap, uint8_t* idx) {
                    ChunkRef cb;
                    if (const int r = rb.chunk_ref(k, &cb)) return r;
                    const size_t n = pb.chunk_values(k), begin = pb.chunk_begin(k);
                    const void* xk = x + begin * es;
                    return combine_into(pb, k, dst, cap, idx, [&](ChunkScratch& s, uint8_t* target, bool* raw) {
                      return dtype == ZCOLL_FLOAT32
                          ? kern.fold_f32(op, static_cast<const float*>(xk), cb, n, begin, pb.geom, s, target, raw)
                          : kern.fold_f64(op, static_cast<const double*>(xk), cb, n, begin, pb.geom, s, target, raw);
                    });
                  });
}

}  // namespace zcoll::codec
