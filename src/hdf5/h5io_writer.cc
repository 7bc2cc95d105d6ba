// zcoll_h5_writer: predictive (seed 004) and pipelined compressed parallel writes to one
// HDF5 file (zcoll_h5io.h; layout in docs/hdf5.md).
//
// Who does what: rank 0 alone holds the file open in HDF5 and writes all metadata
// (groups, attributes, tables) and allocates each field's `streams` and `overflow`
// datasets early, contiguous and never filled; H5Fflush then makes their addresses final.
// Every rank writes its compressed bytes into those datasets' regions through its own
// POSIX descriptor, on a helper thread, while the calling thread compresses the next
// field. HDF5 never touches raw data it did not write, and nothing is written outside an
// allocated dataset, so the two never collide; the file is marked complete only after
// every rank's data is synced. This needs no parallel HDF5 and works with any MPI.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <numeric>
#include <set>
#include <thread>

#include "codec/stream.h"
#include "common/error_detail.h"
#include "common/fnv.h"
#include "common/host_cores.h"
#include "h5io_common.h"

using namespace zcoll::h5;

namespace {

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A compressed stream's buffer. Not value-initialised: the codec writes only the stream's
// bytes, so only those pages are ever touched, not the worst-case capacity.
struct Buffer {
  std::unique_ptr<uint8_t[]> data;
  size_t capacity = 0;
  void reserve(size_t n) {
    if (capacity >= n) return;
    data.reset(new uint8_t[n]);
    capacity = n;
  }
};

// Writes runs of bytes at file offsets on one helper thread, in order. Buffers come back
// for reuse, and at most `depth` wait or are written at once, which bounds the memory a
// flush holds to depth + 1 compressed fields.
class WriteQueue {
 public:
  // Buffers come from and go back to `pool`, which outlives the queue (the writer keeps it
  // across flushes).
  WriteQueue(int fd, int depth, std::vector<Buffer>* pool)
      : fd_(fd), depth_(depth), free_(*pool), thread_([this] { run(); }) {}
  ~WriteQueue() {
    {
      std::lock_guard<std::mutex> l(m_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  // A buffer of at least `size` bytes, once fewer than depth writes are pending.
  Buffer acquire(size_t size) {
    std::unique_lock<std::mutex> l(m_);
    const double t0 = seconds_now();
    done_cv_.wait(l, [&] { return static_cast<int>(jobs_.size()) < depth_; });
    wait_seconds_ += seconds_now() - t0;
    Buffer b;
    if (!free_.empty()) {
      b = std::move(free_.back());
      free_.pop_back();
    }
    l.unlock();
    b.reserve(size);
    return b;
  }

  void push(Buffer&& buf, size_t len, uint64_t offset) {
    {
      std::lock_guard<std::mutex> l(m_);
      jobs_.push_back(Job{std::move(buf), len, offset});
    }
    cv_.notify_all();
  }

  // Waits for every pending write; returns the first errno seen (0: all written).
  int drain() {
    std::unique_lock<std::mutex> l(m_);
    const double t0 = seconds_now();
    done_cv_.wait(l, [&] { return jobs_.empty() && !busy_; });
    wait_seconds_ += seconds_now() - t0;
    return error_;
  }
  // Seconds the calling thread waited for writes: the writing compression did not hide.
  double wait_seconds() {
    std::lock_guard<std::mutex> l(m_);
    return wait_seconds_;
  }
  double busy_seconds() {
    std::lock_guard<std::mutex> l(m_);
    return busy_seconds_;
  }

 private:
  struct Job {
    Buffer buf;
    size_t len;
    uint64_t offset;
  };

  void run() {
    std::unique_lock<std::mutex> l(m_);
    for (;;) {
      cv_.wait(l, [&] { return stop_ || !jobs_.empty(); });
      if (jobs_.empty()) return;
      Job j = std::move(jobs_.front());
      jobs_.pop_front();
      busy_ = true;
      const bool skip = error_ != 0;
      l.unlock();
      const double t0 = seconds_now();
      const int err = skip ? 0 : write_all(j);
      const double dt = seconds_now() - t0;
      l.lock();
      busy_ = false;
      busy_seconds_ += dt;
      if (err && !error_) error_ = err;
      free_.push_back(std::move(j.buf));
      done_cv_.notify_all();
    }
  }

  int write_all(const Job& j) const {
    size_t done = 0;
    while (done < j.len) {
      const ssize_t n = pwrite(fd_, j.buf.data.get() + done, j.len - done, static_cast<off_t>(j.offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return n < 0 ? errno : EIO;
      done += static_cast<size_t>(n);
    }
    return 0;
  }

  int fd_, depth_;
  std::mutex m_;
  std::condition_variable cv_, done_cv_;
  std::deque<Job> jobs_;
  std::vector<Buffer>& free_;
  bool stop_ = false, busy_ = false;
  int error_ = 0;
  double busy_seconds_ = 0, wait_seconds_ = 0;
  std::thread thread_;
};

struct Field {
  std::string name;
  zcoll_dtype dtype = ZCOLL_FLOAT32;
  int ndims = 0;
  uint64_t dims[ZCOLL_H5_MAX_DIMS] = {}, start[ZCOLL_H5_MAX_DIMS] = {}, count[ZCOLL_H5_MAX_DIMS] = {};
  const void* buf = nullptr;
  int eb_mode = ZCOLL_EB_ABS;
  double eb = 0;
  int index = 0;  // position in the file's field order

  double eb_abs = 0;
  uint64_t values = 0;          // this rank's
  uint64_t predicted = 0;       // this rank's predicted stream bytes
  double t_compress_pred = 0;   // this rank's predicted seconds
  double t_write_pred = 0;
  std::vector<uint64_t> boxes;  // P x (start, count)
  std::vector<uint64_t> table[kTables];
  haddr_t streams_addr = HADDR_UNDEF, overflow_addr = HADDR_UNDEF;
  std::vector<uint8_t> overflow;  // this rank's bytes past its region
};

// What must be equal on every rank for a field.
uint64_t field_hash(const Field& f) {
  zcoll::Fnv1a h;
  h.bytes(f.name.data(), f.name.size());
  const int32_t ints[3] = {f.dtype, f.ndims, f.eb_mode};
  h.add(ints);
  h.bytes(f.dims, sizeof(uint64_t) * f.ndims);
  h.add(f.eb);
  return h.h;
}

// Johnson's rule for a two-stage flow shop (compress, then write, one of each at a time):
// fields that write longer than they compress go first, shortest compression first, so
// the writer starts early; the rest follow, longest write first, so little is left to
// write after the last compression. It minimises the flush's span for the predicted times.
std::vector<int> johnson_order(const std::vector<Field>& q) {
  std::vector<int> a, b;
  for (int i = 0; i < static_cast<int>(q.size()); ++i)
    (q[i].t_compress_pred < q[i].t_write_pred ? a : b).push_back(i);
  std::stable_sort(a.begin(), a.end(), [&](int x, int y) { return q[x].t_compress_pred < q[y].t_compress_pred; });
  std::stable_sort(b.begin(), b.end(), [&](int x, int y) { return q[x].t_write_pred > q[y].t_write_pred; });
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

namespace {

// Accumulates what zcoll_h5_report says over the flushes of a writer.
struct Totals {
  zcoll_h5_report r{};
  std::vector<double> ratio_errors;
  void add(const zcoll_h5_report& f, const std::vector<double>& errs) {
    r.fields += f.fields;
    r.raw_bytes += f.raw_bytes;
    r.stream_bytes += f.stream_bytes;
    r.reserved_bytes += f.reserved_bytes;
    r.overflow_bytes += f.overflow_bytes;
    r.overflow_ranks = std::max(r.overflow_ranks, f.overflow_ranks);
    r.t_predict += f.t_predict;
    r.t_compress += f.t_compress;
    r.t_compress_predicted += f.t_compress_predicted;
    r.t_write += f.t_write;
    r.t_write_exposed += f.t_write_exposed;
    r.t_sync += f.t_sync;
    r.t_total += f.t_total;
    ratio_errors.insert(ratio_errors.end(), errs.begin(), errs.end());
    r.predicted_ratio_err = median(ratio_errors);
    r.overlap = overlap_of(r.t_write, r.t_write_exposed);
  }
  static double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  }
  // The share of the writing hidden behind compression.
  static double overlap_of(double write, double exposed) {
    return write > 0 ? std::clamp(1 - exposed / write, 0.0, 1.0) : 0;
  }
};

}  // namespace

struct zcoll_h5_writer_s {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0, size = 1;
  std::string path;
  zcoll_h5_options opt{};
  Handle file;   // rank 0 only
  int fd = -1;   // every rank
  std::vector<Field> queue;
  std::set<std::string> names;
  int fields_written = 0;
  int failed = 0;                // the agreed error that ended this writer's usefulness
  double write_bandwidth = 0;    // bytes/s per rank learnt from earlier flushes
  double compress_factor = 1;    // measured / predicted compression seconds, learnt
  Totals totals;                 // over the flushes so far
  std::vector<Buffer> buffers;   // the compressed streams' buffers, reused across flushes

  // The agreed outcome of a step: the worst code of any rank, with that rank's detail
  // sentence on every rank.
  int agree(int rc);
  int create_streams(Field& f);
  int create_overflow(Field& f);
  int write_tables(const Field& f);
  // zcoll_h5_writer_create's steps after its checks: on every rank, the agreed outcome.
  int open_file();
  int flush(zcoll_h5_report* report);
  int finish(zcoll_h5_report* report);

 private:
  int create_file_at_root();
  // A flush's clock: what zcoll_h5_report says of it.
  struct FlushClock {
    double begin = 0, predict = 0, compress = 0, sync = 0, write = 0, exposed = 0;
    // An agreement step (a collective), timed as synchronisation.
    template <class Step>
    int timed(Step&& step) {
      const double t0 = MPI_Wtime();
      const int rc = step();
      sync += MPI_Wtime() - t0;
      return rc;
    }
  };
  bool predictive() const { return opt.mode == ZCOLL_H5_PREDICTIVE; }
  int agree_timed(FlushClock& t, int rc);
  // Rank 0's value of `addr` for every queued field, on every rank.
  int share_addresses(FlushClock& t, haddr_t Field::*addr);
  // flush()'s steps, in order (numbered there).
  int agree_fields();
  int predict_streams(FlushClock& t);
  int share_layout(FlushClock& t);
  int allocate_streams(FlushClock& t);
  int compress_and_write(FlushClock& t);
  int compress_field(FlushClock& t, Field& f, WriteQueue& writer, Buffer* buf, size_t* bytes);
  int place_exact(FlushClock& t, Field& f, int crc, size_t bytes);
  int gather_stream_sizes(FlushClock& t);
  int write_overflows(FlushClock& t);
  int write_overflow(const Field& f);
  int write_root_metadata(FlushClock& t);
  int learn_and_report(const FlushClock& t, zcoll_h5_report* report);
};

int zcoll_h5_writer_s::agree(int rc) {
  int in[2] = {rc, rank}, out[2] = {0, 0};
  if (MPI_Allreduce(in, out, 1, MPI_2INT, MPI_MAXLOC, comm) != MPI_SUCCESS) return ZCOLL_ERR_MPI;
  if (out[0] == ZCOLL_SUCCESS) return ZCOLL_SUCCESS;
  char detail[400] = {0};
  if (rank == out[1]) std::snprintf(detail, sizeof detail, "%s", zcoll_error_detail());
  if (MPI_Bcast(detail, sizeof detail, MPI_CHAR, out[1], comm) != MPI_SUCCESS) return ZCOLL_ERR_MPI;
  detail[sizeof detail - 1] = '\0';
  if (rank != out[1]) zcoll::set_error_detail("rank %d: %s", out[1], detail);
  return out[0];
}


namespace {

int h5_fail(const char* what, const std::string& name) {
  zcoll::set_error_detail("HDF5 failed to %s for field '%s'", what, name.c_str());
  return ZCOLL_ERR_IO;
}

// A contiguous uint8 dataset of n bytes, allocated now and never filled, and its address.
int create_byte_dataset(hid_t group, const char* name, uint64_t n, haddr_t* addr) {
  const hsize_t dim = n;
  Handle space(H5Screate_simple(1, &dim, nullptr));
  Handle dcpl(H5Pcreate(H5P_DATASET_CREATE));
  if (!space.ok() || !dcpl.ok() || H5Pset_layout(dcpl.get(), H5D_CONTIGUOUS) < 0 ||
      H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY) < 0 || H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER) < 0 ||
      H5Pset_obj_track_times(dcpl.get(), false) < 0)
    return ZCOLL_ERR_IO;
  Handle d(H5Dcreate2(group, name, H5T_STD_U8LE, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT));
  if (!d.ok()) return ZCOLL_ERR_IO;
  *addr = n ? H5Dget_offset(d.get()) : HADDR_UNDEF;
  if (n && *addr == HADDR_UNDEF) return ZCOLL_ERR_IO;
  return d.close() ? ZCOLL_SUCCESS : ZCOLL_ERR_IO;
}

uint64_t sum(const std::vector<uint64_t>& v) { return std::accumulate(v.begin(), v.end(), uint64_t{0}); }

std::vector<uint64_t> prefix_offsets(const std::vector<uint64_t>& sizes) {
  std::vector<uint64_t> off(sizes.size(), 0);
  for (size_t r = 1; r < sizes.size(); ++r) off[r] = off[r - 1] + sizes[r - 1];
  return off;
}

}  // namespace

// Rank 0: the field's group, attributes and `streams` dataset (its regions are final).
int zcoll_h5_writer_s::create_streams(Field& f) {
  QuietHdf5 quiet;
  Handle gcpl = untimed(H5P_GROUP_CREATE);
  Handle g(H5Gcreate2(file.get(), f.name.c_str(), H5P_DEFAULT, gcpl.get(), H5P_DEFAULT));
  if (!g.ok()) return h5_fail("create the group", f.name);
  const bool attrs = write_attr_u32(g.get(), name::kFieldIndex, static_cast<uint32_t>(f.index)) &&
                     write_attr_u32(g.get(), name::kDtype, f.dtype) &&
                     write_attr_u32(g.get(), name::kCodec, static_cast<uint32_t>(opt.codec)) &&
                     write_attr_u32(g.get(), name::kEbMode, static_cast<uint32_t>(f.eb_mode)) &&
                     write_attr_f64(g.get(), name::kEb, f.eb) && write_attr_f64(g.get(), name::kEbAbs, f.eb_abs) &&
                     write_attr_u64s(g.get(), name::kDims, f.dims, f.ndims);
  if (!attrs) return h5_fail("write the attributes", f.name);
  if (create_byte_dataset(g.get(), name::kStreams, sum(f.table[kRegionSize]), &f.streams_addr))
    return h5_fail("allocate the streams dataset", f.name);
  return H5Fflush(file.get(), H5F_SCOPE_LOCAL) < 0 ? h5_fail("flush the metadata", f.name) : ZCOLL_SUCCESS;
}

// Rank 0: the `overflow` dataset, allocated after every `streams` of this flush.
int zcoll_h5_writer_s::create_overflow(Field& f) {
  QuietHdf5 quiet;
  Handle g(H5Gopen2(file.get(), f.name.c_str(), H5P_DEFAULT));
  if (!g.ok() || create_byte_dataset(g.get(), name::kOverflow, sum(f.table[kOverflowSize]), &f.overflow_addr))
    return h5_fail("allocate the overflow dataset", f.name);
  return ZCOLL_SUCCESS;
}

// Rank 0: the partition and the per-rank tables.
int zcoll_h5_writer_s::write_tables(const Field& f) {
  QuietHdf5 quiet;
  Handle g(H5Gopen2(file.get(), f.name.c_str(), H5P_DEFAULT));
  const hsize_t P = static_cast<hsize_t>(size);
  bool ok = g.ok() && write_table(g.get(), name::kPartition, f.boxes, {P, 2, static_cast<hsize_t>(f.ndims)});
  for (int t = 0; ok && t < kTables; ++t) ok = write_table(g.get(), kTableNames[t], f.table[t], {P});
  return ok ? ZCOLL_SUCCESS : h5_fail("write the tables", f.name);
}


// Each step returns this rank's code; the steps that end in an agreement return the agreed
// one, so a failure leaves flush() on every rank at the same step.
int zcoll_h5_writer_s::flush(zcoll_h5_report* report) {
  if (failed) return failed;
  FlushClock t;
  t.begin = MPI_Wtime();
  int rc = agree_fields();
  if (!rc) rc = predict_streams(t);
  if (!rc) rc = share_layout(t);
  if (!rc && predictive()) rc = allocate_streams(t);
  if (!rc) rc = compress_and_write(t);
  if (!rc) rc = gather_stream_sizes(t);
  if (!rc) rc = write_overflows(t);
  if (!rc) rc = write_root_metadata(t);
  if (!rc) rc = learn_and_report(t, report);
  if (rc) {
    failed = rc;
    queue.clear();
  }
  return rc;
}

int zcoll_h5_writer_s::agree_timed(FlushClock& t, int rc) {
  return t.timed([&] { return agree(rc); });
}

int zcoll_h5_writer_s::share_addresses(FlushClock& t, haddr_t Field::*addr) {
  const size_t nf = queue.size();
  if (!nf) return ZCOLL_SUCCESS;
  std::vector<uint64_t> addrs(nf);
  for (size_t i = 0; i < nf; ++i) addrs[i] = queue[i].*addr;
  if (t.timed([&] { return MPI_Bcast(addrs.data(), static_cast<int>(nf), MPI_UINT64_T, 0, comm); }) != MPI_SUCCESS)
    return ZCOLL_ERR_MPI;
  for (size_t i = 0; i < nf; ++i) queue[i].*addr = addrs[i];
  return ZCOLL_SUCCESS;
}

// 1. Every rank queued the same fields; the REL fields' ranges over all ranks.
int zcoll_h5_writer_s::agree_fields() {
  std::vector<Field>& q = queue;
  uint64_t counts[2] = {q.size(), ~uint64_t{q.size()}}, agreed[2];
  if (MPI_Allreduce(counts, agreed, 2, MPI_UINT64_T, MPI_MIN, comm) != MPI_SUCCESS) return ZCOLL_ERR_MPI;
  if (agreed[0] != ~agreed[1]) {
    zcoll::set_error_detail("the ranks queued between %llu and %llu fields", static_cast<unsigned long long>(agreed[0]),
                            static_cast<unsigned long long>(~agreed[1]));
    return ZCOLL_ERR_MISMATCH;
  }
  const size_t nf = q.size();
  std::vector<uint64_t> hashes(2 * nf), hashes_min(2 * nf);
  std::vector<double> ranges(2 * nf), ranges_min(2 * nf);
  for (size_t i = 0; i < nf; ++i) {
    hashes[2 * i] = field_hash(q[i]);
    hashes[2 * i + 1] = ~hashes[2 * i];
    double lo = INFINITY, hi = -INFINITY;
    if (q[i].eb_mode == ZCOLL_EB_REL && q[i].values)
      zcoll::codec::value_range(q[i].dtype, q[i].buf, q[i].values,
                                zcoll::codec::thread_count(opt.threads, q[i].values / 65536 + 1), &lo, &hi);
    ranges[2 * i] = lo;
    ranges[2 * i + 1] = -hi;
  }
  if (nf && (MPI_Allreduce(hashes.data(), hashes_min.data(), static_cast<int>(2 * nf), MPI_UINT64_T, MPI_MIN, comm) ||
             MPI_Allreduce(ranges.data(), ranges_min.data(), static_cast<int>(2 * nf), MPI_DOUBLE, MPI_MIN, comm)))
    return ZCOLL_ERR_MPI;
  for (size_t i = 0; i < nf; ++i) {
    if (hashes_min[2 * i] != ~hashes_min[2 * i + 1]) {
      zcoll::set_error_detail("field %zu ('%s' here) differs across ranks in name, type, dims or bound", i,
                              q[i].name.c_str());
      return ZCOLL_ERR_MISMATCH;
    }
    Field& f = q[i];
    // zcoll.h's REL rule, on the whole field's range.
    f.eb_abs = f.eb_mode == ZCOLL_EB_REL ? zcoll::codec::rel_to_abs(f.eb, ranges_min[2 * i], -ranges_min[2 * i + 1])
                                         : std::min(f.eb, DBL_MAX / 4);
  }
  return ZCOLL_SUCCESS;
}

// 2. Predictions of this rank's stream sizes and compression times (predictive).
int zcoll_h5_writer_s::predict_streams(FlushClock& t) {
  int rc = ZCOLL_SUCCESS;
  if (predictive()) {
    const double t0 = MPI_Wtime();
    for (Field& f : queue) {
      if (!f.values || rc) continue;
      const zcoll_codec_params p = stream_params(opt.codec, f.eb_abs, f.count, f.ndims, opt.threads);
      size_t predicted = 0, sampled = 0;
      const double s0 = MPI_Wtime();
      rc = zcoll_estimate_size(&p, f.dtype, f.buf, f.values, opt.sample_fraction, &predicted, &sampled);
      const double dt = MPI_Wtime() - s0;
      f.predicted = predicted;
      f.t_compress_pred = sampled ? dt * static_cast<double>(f.values) / static_cast<double>(sampled) * compress_factor : 0;
    }
    t.predict = MPI_Wtime() - t0;
    if (rc) zcoll::set_error_detail("predicting the compressed size failed: %s", zcoll_strerror(rc));
  }
  return agree_timed(t, rc);
}

// 3. One allgather: every rank's hyperslabs and predictions, so that every rank computes the
//    same regions.
int zcoll_h5_writer_s::share_layout(FlushClock& t) {
  const int P = size;
  size_t per_rank = 0;
  for (const Field& f : queue) per_rank += 2 * f.ndims + 1;
  std::vector<uint64_t> mine, all(per_rank * P);
  for (const Field& f : queue) {
    mine.insert(mine.end(), f.start, f.start + f.ndims);
    mine.insert(mine.end(), f.count, f.count + f.ndims);
    mine.push_back(f.predicted);
  }
  if (per_rank && t.timed([&] {
        return MPI_Allgather(mine.data(), static_cast<int>(per_rank), MPI_UINT64_T, all.data(),
                             static_cast<int>(per_rank), MPI_UINT64_T, comm);
      }) != MPI_SUCCESS)
    return ZCOLL_ERR_MPI;
  size_t at = 0;
  double my_write_bytes = 0, my_compress_s = 0;
  for (Field& f : queue) {
    const size_t w = 2 * f.ndims;
    f.boxes.assign(w * P, 0);
    for (auto& table : f.table) table.assign(P, 0);
    for (int r = 0; r < P; ++r) {
      const uint64_t* src = &all[r * per_rank + at];
      std::copy(src, src + w, &f.boxes[r * w]);
      const bool empty = volume(src + f.ndims, f.ndims) == 0;
      f.table[kPredictedSize][r] = empty ? 0 : src[w];
      f.table[kRegionSize][r] =
          empty ? 0 : static_cast<uint64_t>(std::ceil(static_cast<double>(src[w]) * opt.extra_space));
    }
    at += w + 1;
    std::string why;
    if (!partition_valid(f.boxes, P, f.dims, f.ndims, &why)) {
      zcoll::set_error_detail("field '%s': %s", f.name.c_str(), why.c_str());
      return ZCOLL_ERR_ARG;
    }
    f.table[kRegionOffset] = prefix_offsets(f.table[kRegionSize]);
    my_write_bytes += static_cast<double>(f.table[kRegionSize][rank]);
    my_compress_s += f.t_compress_pred;
  }
  // Write-time predictions only order the fields; without a measured bandwidth, compression
  // and writing are assumed to take equally long in all.
  const double bw = opt.write_bandwidth > 0 ? opt.write_bandwidth
                    : write_bandwidth > 0  ? write_bandwidth
                    : my_compress_s > 0    ? my_write_bytes / my_compress_s
                                           : 1e9;
  for (Field& f : queue) f.t_write_pred = static_cast<double>(f.table[kRegionSize][rank]) / bw;
  return ZCOLL_SUCCESS;
}

// 4. Rank 0 allocates the regions of every field (predictive); all learn the addresses.
int zcoll_h5_writer_s::allocate_streams(FlushClock& t) {
  int rc = ZCOLL_SUCCESS;
  if (rank == 0)
    for (size_t i = 0; i < queue.size() && !rc; ++i) rc = create_streams(queue[i]);
  if ((rc = agree_timed(t, rc))) return rc;
  return share_addresses(t, &Field::streams_addr);
}

// Pipelined mode, after compressing f: the exact sizes become the regions (one allgather),
// rank 0 allocates them, and every rank learns the address. crc: this rank's compression.
int zcoll_h5_writer_s::place_exact(FlushClock& t, Field& f, int crc, size_t bytes) {
  const int P = size;
  uint64_t pair[2] = {static_cast<uint64_t>(crc), bytes};
  std::vector<uint64_t> pairs(2 * P);
  if (t.timed([&] { return MPI_Allgather(pair, 2, MPI_UINT64_T, pairs.data(), 2, MPI_UINT64_T, comm); }))
    return ZCOLL_ERR_MPI;
  int rc = agree_timed(t, crc);
  if (rc) return rc;
  for (int r = 0; r < P; ++r) f.table[kRegionSize][r] = pairs[2 * r + 1];
  f.table[kRegionOffset] = prefix_offsets(f.table[kRegionSize]);
  rc = rank == 0 ? create_streams(f) : ZCOLL_SUCCESS;
  if ((rc = agree_timed(t, rc))) return rc;
  uint64_t addr = f.streams_addr;
  if (t.timed([&] { return MPI_Bcast(&addr, 1, MPI_UINT64_T, 0, comm); })) return ZCOLL_ERR_MPI;
  f.streams_addr = addr;
  return ZCOLL_SUCCESS;
}

// This rank's stream of f into a buffer of the writer's; its size in *bytes.
int zcoll_h5_writer_s::compress_field(FlushClock& t, Field& f, WriteQueue& writer, Buffer* buf, size_t* bytes) {
  *bytes = 0;
  if (!f.values) return ZCOLL_SUCCESS;
  const zcoll_codec_params p = stream_params(opt.codec, f.eb_abs, f.count, f.ndims, opt.threads);
  const size_t cap = zcoll_codec_bound(f.values, f.dtype);
  int rc = ZCOLL_SUCCESS;
  try {
    *buf = writer.acquire(cap);
  } catch (const std::bad_alloc&) {
    rc = ZCOLL_ERR_NO_MEMORY;
  }
  const double c0 = MPI_Wtime();
  if (!rc) rc = zcoll_compress(&p, f.dtype, f.buf, f.values, buf->data.get(), cap, bytes, nullptr);
  t.compress += MPI_Wtime() - c0;
  if (rc) zcoll::set_error_detail("compressing field '%s' failed: %s", f.name.c_str(), zcoll_strerror(rc));
  return rc;
}

// 5. Compress each field and hand its bytes to the writer thread; pipelined mode agrees on
//    each field's offsets (and rank 0 allocates them) right after compressing it.
int zcoll_h5_writer_s::compress_and_write(FlushClock& t) {
  std::vector<int> order(queue.size());
  std::iota(order.begin(), order.end(), 0);
  if (predictive() && opt.reorder) order = johnson_order(queue);
  int rc = ZCOLL_SUCCESS, write_error = 0;
  {
    WriteQueue writer(fd, opt.overlap ? 2 : 1, &buffers);
    for (int idx : order) {
      Field& f = queue[idx];
      Buffer buf;
      size_t bytes = 0;
      const int crc = compress_field(t, f, writer, &buf, &bytes);
      if (!predictive()) {
        const int prc = place_exact(t, f, crc, bytes);
        if (prc) return prc;
      }
      if (crc) {
        rc = crc;  // agreed after the pipeline (predictive) so that no rank waits on another
        continue;
      }
      f.table[kStreamSize][rank] = bytes;
      const uint64_t region = f.table[kRegionSize][rank];
      const size_t in_region = static_cast<size_t>(std::min<uint64_t>(bytes, region));
      f.overflow.assign(buf.data.get() + in_region, buf.data.get() + bytes);
      if (in_region) writer.push(std::move(buf), in_region, f.streams_addr + f.table[kRegionOffset][rank]);
      if (!opt.overlap) writer.drain();  // its first error stays: the drain below returns it
    }
    write_error = writer.drain();
    t.write = writer.busy_seconds();
    t.exposed = writer.wait_seconds();
  }
  const double s0 = MPI_Wtime();
  if (!write_error && fsync(fd) != 0) write_error = errno;
  t.write += MPI_Wtime() - s0;
  t.exposed += MPI_Wtime() - s0;
  if (write_error && !rc) {
    zcoll::set_error_detail("writing %s failed: %s", path.c_str(), std::strerror(write_error));
    rc = ZCOLL_ERR_IO;
  }
  return agree_timed(t, rc);
}

// 6. The actual sizes: overflow tables (predictive).
int zcoll_h5_writer_s::gather_stream_sizes(FlushClock& t) {
  const int P = size;
  const size_t nf = queue.size();
  if (predictive() && nf) {
    std::vector<uint64_t> sizes(nf), all_sizes(nf * P);
    for (size_t i = 0; i < nf; ++i) sizes[i] = queue[i].table[kStreamSize][rank];
    if (t.timed([&] {
          return MPI_Allgather(sizes.data(), static_cast<int>(nf), MPI_UINT64_T, all_sizes.data(),
                               static_cast<int>(nf), MPI_UINT64_T, comm);
        }))
      return ZCOLL_ERR_MPI;
    for (size_t i = 0; i < nf; ++i)
      for (int r = 0; r < P; ++r) queue[i].table[kStreamSize][r] = all_sizes[r * nf + i];
  } else {
    for (Field& f : queue) f.table[kStreamSize] = f.table[kRegionSize];
  }
  for (Field& f : queue) {
    for (int r = 0; r < P; ++r) {
      const uint64_t s = f.table[kStreamSize][r], reg = f.table[kRegionSize][r];
      f.table[kOverflowSize][r] = s > reg ? s - reg : 0;
    }
    f.table[kOverflowOffset] = prefix_offsets(f.table[kOverflowSize]);
  }
  return ZCOLL_SUCCESS;
}

// This rank's overflow of f, at its offset in f's `overflow` dataset.
int zcoll_h5_writer_s::write_overflow(const Field& f) {
  size_t done = 0;
  const uint64_t base = f.overflow_addr + f.table[kOverflowOffset][rank];
  while (done < f.overflow.size()) {
    const ssize_t n = pwrite(fd, f.overflow.data() + done, f.overflow.size() - done, static_cast<off_t>(base + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      zcoll::set_error_detail("writing the overflow of '%s' to %s failed: %s", f.name.c_str(), path.c_str(),
                              std::strerror(n < 0 ? errno : EIO));
      return ZCOLL_ERR_IO;
    }
    done += static_cast<size_t>(n);
  }
  return ZCOLL_SUCCESS;
}

// 7. Rank 0 appends the overflow datasets; ranks with an overflow write it there.
int zcoll_h5_writer_s::write_overflows(FlushClock& t) {
  int rc = ZCOLL_SUCCESS;
  if (rank == 0)
    for (size_t i = 0; i < queue.size() && !rc; ++i) rc = create_overflow(queue[i]);
  if ((rc = agree_timed(t, rc)) || (rc = share_addresses(t, &Field::overflow_addr))) return rc;
  bool wrote_overflow = false;
  for (size_t i = 0; i < queue.size() && !rc; ++i) {
    if (queue[i].overflow.empty()) continue;
    const double s0 = MPI_Wtime();
    rc = write_overflow(queue[i]);
    wrote_overflow = true;
    t.write += MPI_Wtime() - s0;
    t.exposed += MPI_Wtime() - s0;
  }
  if (wrote_overflow && !rc && fsync(fd) != 0) {
    zcoll::set_error_detail("syncing %s failed: %s", path.c_str(), std::strerror(errno));
    rc = ZCOLL_ERR_IO;
  }
  return agree_timed(t, rc);
}

// 8. Rank 0 writes the tables and the root's field count.
int zcoll_h5_writer_s::write_root_metadata(FlushClock& t) {
  int rc = ZCOLL_SUCCESS;
  if (rank == 0) {
    for (size_t i = 0; i < queue.size() && !rc; ++i) rc = write_tables(queue[i]);
    if (!rc) {
      QuietHdf5 quiet;
      if (!write_attr_u32(file.get(), name::kFields, static_cast<uint32_t>(fields_written + queue.size())) ||
          H5Fflush(file.get(), H5F_SCOPE_LOCAL) < 0) {
        zcoll::set_error_detail("HDF5 failed to update the root attributes of %s", path.c_str());
        rc = ZCOLL_ERR_IO;
      }
    }
  }
  return agree_timed(t, rc);
}

// 9. Learn for the next flush, and report.
int zcoll_h5_writer_s::learn_and_report(const FlushClock& t, zcoll_h5_report* report) {
  const int P = size;
  const std::vector<Field>& q = queue;
  uint64_t my_bytes = 0;
  for (const Field& f : q) my_bytes += f.table[kStreamSize][rank];
  if (t.write > 0 && my_bytes) write_bandwidth = static_cast<double>(my_bytes) / t.write;
  double predicted_s = 0;
  for (const Field& f : q) predicted_s += f.t_compress_pred;
  if (predictive() && predicted_s > 0 && t.compress > 0)
    compress_factor = std::clamp(compress_factor * t.compress / predicted_s, 0.1, 10.0);

  zcoll_h5_report r{};
  std::vector<double> errs;
  std::vector<bool> overflowed(P, false);
  for (const Field& f : q) {
    r.raw_bytes += volume(f.dims, f.ndims) * zcoll::codec::element_size(f.dtype);
    r.stream_bytes += sum(f.table[kStreamSize]);
    r.reserved_bytes += sum(f.table[kRegionSize]);
    r.overflow_bytes += sum(f.table[kOverflowSize]);
    for (int p = 0; p < P; ++p) {
      if (f.table[kOverflowSize][p]) overflowed[p] = true;
      const double actual = static_cast<double>(f.table[kStreamSize][p]);
      if (predictive() && actual > 0)
        errs.push_back(std::fabs(static_cast<double>(f.table[kPredictedSize][p]) - actual) / actual);
    }
  }
  r.fields = static_cast<int>(q.size());
  r.overflow_ranks = static_cast<int>(std::count(overflowed.begin(), overflowed.end(), true));
  r.t_predict = t.predict;
  r.t_compress = t.compress;
  r.t_compress_predicted = predictive() ? predicted_s : 0;
  r.t_write = t.write;
  r.t_write_exposed = t.exposed;
  r.t_sync = t.sync;
  double mine_total = MPI_Wtime() - t.begin;
  if (MPI_Allreduce(&mine_total, &r.t_total, 1, MPI_DOUBLE, MPI_MAX, comm) != MPI_SUCCESS) return ZCOLL_ERR_MPI;
  r.predicted_ratio_err = Totals::median(errs);
  r.overlap = Totals::overlap_of(t.write, t.exposed);
  totals.add(r, errs);
  fields_written += static_cast<int>(q.size());
  queue.clear();
  if (report) *report = r;
  return ZCOLL_SUCCESS;
}

// Rank 0 creates the file and writes the attributes that say it is not complete yet.
int zcoll_h5_writer_s::create_file_at_root() {
  QuietHdf5 quiet;
  Handle fapl = file_access();
  file = Handle(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()));
  const bool ok = file.ok() && write_attr_u32(file.get(), name::kFormatVersion, ZCOLL_H5_FORMAT_VERSION) &&
                  write_attr_u32(file.get(), name::kComplete, 0) &&
                  write_attr_string(file.get(), name::kMode, predictive() ? "predictive" : "pipelined") &&
                  write_attr_u32(file.get(), name::kWriterRanks, static_cast<uint32_t>(size)) &&
                  write_attr_u32(file.get(), name::kFields, 0) && H5Fflush(file.get(), H5F_SCOPE_LOCAL) >= 0;
  if (ok) return ZCOLL_SUCCESS;
  zcoll::set_error_detail("HDF5 could not create %s", path.c_str());
  return ZCOLL_ERR_IO;
}

// Collective over comm: rank 0 creates the file, then every rank opens it for its writes.
// On failure nothing is left open.
int zcoll_h5_writer_s::open_file() {
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  // threads 0: OMP_NUM_THREADS where set, else this rank's share of its host's cores
  // (host_cores.h), as for a zcoll communicator. Collective: before any rank can leave.
  int share = 1;
  int rc = zcoll::host_core_share_of(comm, &share);
  opt.threads = zcoll::automatic_threads(opt.threads, share);
  if (rank == 0 && !rc) rc = create_file_at_root();
  // The others open the file once rank 0 has created it.
  if (MPI_Bcast(&rc, 1, MPI_INT, 0, comm) != MPI_SUCCESS) rc = ZCOLL_ERR_MPI;
  if (!rc) {
    fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
      zcoll::set_error_detail("cannot open %s for writing: %s", path.c_str(), std::strerror(errno));
      rc = ZCOLL_ERR_IO;
    }
  } else if (rank != 0) {
    zcoll::set_error_detail("rank 0 could not create %s with HDF5", path.c_str());
  }
  rc = agree(rc);
  if (rc) {
    if (fd >= 0) close(fd);
    fd = -1;
    file.reset();
  }
  return rc;
}

// Flushes what is queued, marks the file complete (rank 0) and syncs it. The file is
// complete only if every rank's flush succeeded.
int zcoll_h5_writer_s::finish(zcoll_h5_report* report) {
  // Every rank flushes, even with nothing queued, so that a rank that queued fewer fields
  // is caught instead of waited for.
  int rc = failed ? failed : flush(nullptr);
  if (rank == 0 && file.ok()) {
    QuietHdf5 quiet;
    const bool ok = !rc && write_attr_u32(file.get(), name::kComplete, 1) && file.close();
    file.reset();
    if (!rc && !ok) {
      zcoll::set_error_detail("HDF5 failed to close %s", path.c_str());
      rc = ZCOLL_ERR_IO;
    }
  }
  // Rank 0's metadata went through HDF5's own descriptor: sync it through ours.
  if (!rc && fd >= 0 && fsync(fd) != 0) {
    zcoll::set_error_detail("syncing %s failed: %s", path.c_str(), std::strerror(errno));
    rc = ZCOLL_ERR_IO;
  }
  if (fd >= 0) close(fd);
  fd = -1;
  if (!failed) rc = agree(rc);
  else rc = failed;
  uint64_t file_bytes = 0;
  struct stat st;
  if (rank == 0 && stat(path.c_str(), &st) == 0) file_bytes = static_cast<uint64_t>(st.st_size);
  MPI_Bcast(&file_bytes, 1, MPI_UINT64_T, 0, comm);
  if (report) {
    *report = totals.r;
    report->file_bytes = file_bytes;
  }
  return rc;
}

namespace {

bool valid_name(const char* name) {
  if (!name) return false;
  const size_t n = std::strlen(name);
  return n >= 1 && n <= 255 && name[0] != '_' && !std::strchr(name, '/') && std::strcmp(name, ".") != 0;
}

int arg_error(const char* what) {
  zcoll::set_error_detail("%s", what);
  return ZCOLL_ERR_ARG;
}

// The field's extents, this rank's hyperslab in them and its values there, checked.
int set_hyperslab(Field* f, const uint64_t* dims, const uint64_t* start, const uint64_t* count, const void* buf) {
  for (int d = 0; d < f->ndims; ++d) {
    if (dims[d] == 0 || count[d] > dims[d] || start[d] > dims[d] - count[d]) {
      zcoll::set_error_detail("field '%s': dimension %d: start %llu + count %llu exceeds the extent %llu",
                              f->name.c_str(), d, static_cast<unsigned long long>(start[d]),
                              static_cast<unsigned long long>(count[d]), static_cast<unsigned long long>(dims[d]));
      return ZCOLL_ERR_ARG;
    }
    f->dims[d] = dims[d];
    f->start[d] = start[d];
    f->count[d] = count[d];
  }
  f->values = volume(f->count, f->ndims);
  if (f->values > SIZE_MAX / 8) return arg_error("the hyperslab is too large");
  if (f->values && !buf) return arg_error("buf is NULL");
  f->buf = buf;
  return ZCOLL_SUCCESS;
}

int check_options(const zcoll_h5_options& o) {
  if (o.mode != ZCOLL_H5_PREDICTIVE && o.mode != ZCOLL_H5_PIPELINED) return arg_error("unknown mode");
  if (o.codec < ZCOLL_CODEC_FZL || o.codec > ZCOLL_CODEC_SZX) {
    zcoll::set_error_detail("unknown codec %d", o.codec);
    return ZCOLL_ERR_CODEC;
  }
  if (!(o.extra_space >= 1 && o.extra_space <= 100)) return arg_error("extra_space must be in [1, 100]");
  if (!(o.sample_fraction > 0 && o.sample_fraction <= 1)) return arg_error("sample_fraction must be in (0, 1]");
  if (o.threads < 0 || !(o.write_bandwidth >= 0)) return arg_error("threads and write_bandwidth must be >= 0");
  return ZCOLL_SUCCESS;
}

}  // namespace

extern "C" {

void zcoll_h5_options_init(zcoll_h5_options* o) {
  if (!o) return;
  *o = zcoll_h5_options{};
  o->mode = ZCOLL_H5_PREDICTIVE;
  o->codec = ZCOLL_CODEC_FZL;
  o->threads = 0;
  o->extra_space = 1.25;
  o->reorder = 1;
  o->overlap = 1;
  o->sample_fraction = 0.01;
  o->write_bandwidth = 0;
}

const char* zcoll_h5_error_detail(void) { return zcoll_error_detail(); }

int zcoll_h5_writer_create(MPI_Comm comm, const char* path, const zcoll_h5_options* options, zcoll_h5_writer* writer) {
  return zcoll::guarded([&]() -> int {
    if (!writer) return arg_error("writer is NULL");
    *writer = nullptr;
    if (comm == MPI_COMM_NULL || !path || !*path) return arg_error("comm or path is NULL");
    zcoll_h5_options o;
    zcoll_h5_options_init(&o);
    if (options) o = *options;
    if (const int rc = check_options(o)) return rc;
    auto w = std::make_unique<zcoll_h5_writer_s>();
    w->opt = o;
    w->path = path;
    if (MPI_Comm_dup(comm, &w->comm) != MPI_SUCCESS) return ZCOLL_ERR_MPI;
    if (const int rc = w->open_file()) {
      MPI_Comm_free(&w->comm);
      return rc;
    }
    *writer = w.release();
    return ZCOLL_SUCCESS;
  });
}

int zcoll_h5_write_field(zcoll_h5_writer w, const char* name, zcoll_dtype dtype, int ndims, const uint64_t* dims,
                         const uint64_t* start, const uint64_t* count, const void* buf, zcoll_eb_mode eb_mode,
                         double eb) {
  return zcoll::guarded([&]() -> int {
    if (!w) return arg_error("writer is NULL");
    if (w->failed) return w->failed;
    if (!valid_name(name)) return arg_error("a field name has 1-255 characters, no '/', and does not start with '_'");
    if (dtype != ZCOLL_FLOAT32 && dtype != ZCOLL_FLOAT64) return ZCOLL_ERR_DTYPE;
    if (ndims < 1 || ndims > ZCOLL_H5_MAX_DIMS || !dims || !start || !count)
      return arg_error("ndims must be 1-8 and dims, start, count given");
    if (eb_mode != ZCOLL_EB_ABS && eb_mode != ZCOLL_EB_REL) return arg_error("unknown eb_mode");
    if (!(eb > 0) || !std::isfinite(eb)) return arg_error("eb must be a positive finite number");
    if (w->names.count(name)) {
      zcoll::set_error_detail("field '%s' was already written or queued", name);
      return ZCOLL_ERR_ARG;
    }
    Field f;
    f.name = name;
    f.dtype = dtype;
    f.ndims = ndims;
    if (const int rc = set_hyperslab(&f, dims, start, count, buf)) return rc;
    f.eb_mode = eb_mode;
    f.eb = eb;
    f.index = w->fields_written + static_cast<int>(w->queue.size());
    w->queue.push_back(std::move(f));
    w->names.insert(name);
    return ZCOLL_SUCCESS;
  });
}

int zcoll_h5_writer_flush(zcoll_h5_writer w, zcoll_h5_report* report) {
  return zcoll::guarded([&]() -> int {
    if (!w) return arg_error("writer is NULL");
    return w->flush(report);
  });
}

int zcoll_h5_writer_close(zcoll_h5_writer* writer, zcoll_h5_report* report) {
  return zcoll::guarded([&]() -> int {
    if (!writer || !*writer) return arg_error("writer is NULL");
    std::unique_ptr<zcoll_h5_writer_s> w(*writer);
    *writer = nullptr;
    const int rc = w->finish(report);
    MPI_Comm_free(&w->comm);
    return rc;
  });
}

}  // extern "C"
