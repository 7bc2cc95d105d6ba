// Compressed point-to-point messages (the "point-to-point" section of include/zcoll.h).
//
// A float message is one MPI message of bytes: a 16-byte envelope (raw or compressed,
// element count, element type) followed by the payload. The receiver posts one
// MPI_Irecv into a staging buffer sized for the worst case of its own count, so it
// needs neither the compressed size nor a handshake, and unpacks when the request
// completes. Every other datatype is sent as MPI's own message. Either way one zcoll
// message is one MPI message on the comm's p2p duplicate with the user's tag, so MPI's
// matching and non-overtaking order carry over unchanged.
#include <array>
#include <climits>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

#include "common/comm.h"
#include "common/error_detail.h"
#include "common/mpi_util.h"

namespace {

using zcoll::float_type;
using zcoll::guarded;
using zcoll::mpi_rc;
using zcoll::p2p::StagingBuffer;

constexpr uint32_t kMagic = 0x3150435au;  // "ZCP1"
constexpr size_t kEnvelopeBytes = 16;     // keeps the payload 16-byte aligned in staging
// kFailed: the sender's own failure, its zcoll error code in count and no payload.
enum Kind : uint8_t { kRaw = 1, kCompressed = 2, kFailed = 3 };
constexpr int kLastCode = ZCOLL_ERR_IO;

struct Envelope {
  uint32_t magic;
  uint8_t kind;
  uint8_t dtype;  // zcoll_dtype: a message sent as MPI_DOUBLE is not taken for MPI_FLOAT
  uint16_t reserved;
  uint64_t count;  // elements
};
static_assert(sizeof(Envelope) == kEnvelopeBytes, "envelope layout");

size_t element_bytes(zcoll_dtype dt) { return dt == ZCOLL_FLOAT64 ? sizeof(double) : sizeof(float); }

// MPI-3 counts are ints, so past INT_MAX bytes a message needs a derived type of 1 MiB
// blocks; its signature is still a run of MPI_BYTE, so each side may split it its own
// way. A send is one element spanning exactly its bytes (blocks and a tail); a receive
// is a count of whole blocks, its staging rounded up to them. (One struct element for
// the receive too fails: Open MPI 4.1's MPI_Get_elements_x gives MPI_UNDEFINED for a
// partly filled element of more than 2 GiB.)
constexpr size_t kWireBlock = size_t{1} << 20;

size_t wire_capacity(size_t bytes) {
  return bytes <= static_cast<size_t>(INT_MAX) ? bytes : (bytes + kWireBlock - 1) / kWireBlock * kWireBlock;
}

int wire_type(size_t bytes, bool send, MPI_Datatype* type, int* count) {
  *type = MPI_BYTE;
  *count = static_cast<int>(bytes);
  if (bytes <= static_cast<size_t>(INT_MAX)) return ZCOLL_SUCCESS;
  const size_t q = bytes / kWireBlock, r = bytes % kWireBlock;
  MPI_Datatype block = MPI_DATATYPE_NULL, blocks = MPI_DATATYPE_NULL, t = MPI_DATATYPE_NULL;
  bool ok = MPI_Type_contiguous(static_cast<int>(kWireBlock), MPI_BYTE, &block) == MPI_SUCCESS;
  if (send) {
    int lens[2] = {1, static_cast<int>(r)};
    MPI_Aint disps[2] = {0, static_cast<MPI_Aint>(q * kWireBlock)};
    ok = ok && MPI_Type_contiguous(static_cast<int>(q), block, &blocks) == MPI_SUCCESS;
    MPI_Datatype types[2] = {blocks, MPI_BYTE};
    ok = ok && MPI_Type_create_struct(r ? 2 : 1, lens, disps, types, &t) == MPI_SUCCESS;
    if (blocks != MPI_DATATYPE_NULL) MPI_Type_free(&blocks);
    if (block != MPI_DATATYPE_NULL) MPI_Type_free(&block);
  } else {
    t = block;
  }
  ok = ok && MPI_Type_commit(&t) == MPI_SUCCESS;
  if (!ok) {
    if (t != MPI_DATATYPE_NULL) MPI_Type_free(&t);
    return ZCOLL_ERR_MPI;
  }
  *type = t;
  *count = send ? 1 : static_cast<int>(q);
  return ZCOLL_SUCCESS;
}

// A float send that fails once its arguments are checked (no memory for its request or
// staging buffer, the codec failing, MPI failing to post it) has sent nothing, and the
// receive posted for it would wait forever. It sends this 16-byte notice instead, so that
// the receive completes with the sender's code. The notice allocates nothing: it comes from
// a static table, and MPI_Request_free leaves its completion to MPI (the buffer is never
// written, and a 16-byte message goes eagerly in MPICH and Open MPI).
void send_failure_notice(MPI_Comm p2p, zcoll_dtype dt, int code, int dest, int tag) {
  static const auto notices = [] {
    std::array<std::array<Envelope, kLastCode + 1>, 2> t{};
    for (int f64 = 0; f64 < 2; ++f64)
      for (int k = 0; k <= kLastCode; ++k)
        t[f64][k] = Envelope{kMagic, kFailed, static_cast<uint8_t>(f64 ? ZCOLL_FLOAT64 : ZCOLL_FLOAT32), 0,
                             static_cast<uint64_t>(k)};
    return t;
  }();
  if (code < 1 || code > kLastCode) code = ZCOLL_ERR_INTERNAL;
  MPI_Request req = MPI_REQUEST_NULL;
  if (MPI_Isend(&notices[dt == ZCOLL_FLOAT64][code], kEnvelopeBytes, MPI_BYTE, dest, tag, p2p, &req) == MPI_SUCCESS)
    MPI_Request_free(&req);
}

}  // namespace

struct zcoll_request_s {
  zcoll_comm_s* comm = nullptr;
  MPI_Request mpi = MPI_REQUEST_NULL;
  bool unpack = false;     // a float receive: the message is in staging, not yet in buf
  bool proc_null = false;  // peer MPI_PROC_NULL: complete at once, nothing posted
  void* buf = nullptr;
  int count = 0;
  MPI_Datatype datatype = MPI_DATATYPE_NULL;
  zcoll_dtype dtype = ZCOLL_FLOAT32;
  StagingBuffer staging;
  MPI_Datatype wire = MPI_BYTE;

  zcoll_request_s() = default;
  zcoll_request_s(const zcoll_request_s&) = delete;
  zcoll_request_s& operator=(const zcoll_request_s&) = delete;
  // Only ever destroyed before its MPI request was posted or after it completed, so
  // the staging buffer is free for the next request.
  ~zcoll_request_s() {
    if (comm) comm->p2p_pool.release(std::move(staging));
    if (wire != MPI_BYTE) MPI_Type_free(&wire);
  }

  // Posts an MPI_Isend or MPI_Irecv of the staging buffer's first `bytes` bytes.
  int post_staging(size_t bytes, int peer, int tag, bool send) {
    int n = 0;
    const int rc = wire_type(bytes, send, &wire, &n);
    if (rc) return rc;
    uint8_t* p = staging.data.get();
    return mpi_rc(send ? MPI_Isend(p, n, wire, peer, tag, comm->p2p, &mpi)
                       : MPI_Irecv(p, n, wire, peer, tag, comm->p2p, &mpi));
  }
};

namespace {

int check_args(zcoll_comm c, const void* buf, int count, MPI_Datatype t, int peer, int tag, bool recv) {
  if (!c || count < 0 || t == MPI_DATATYPE_NULL) return ZCOLL_ERR_ARG;
  zcoll_dtype dt;
  // Other datatypes may address their data from MPI_BOTTOM, which can be NULL.
  if (count > 0 && !buf && float_type(t, &dt)) return ZCOLL_ERR_ARG;
  const bool peer_ok = (peer >= 0 && peer < c->size) || peer == MPI_PROC_NULL || (recv && peer == MPI_ANY_SOURCE);
  void* ub = nullptr;
  int flag = 0;
  MPI_Comm_get_attr(c->p2p, MPI_TAG_UB, &ub, &flag);
  const int tag_ub = flag && ub ? *static_cast<int*>(ub) : 32767;  // 32767: MPI's guaranteed minimum
  const bool tag_ok = (tag >= 0 && tag <= tag_ub) || (recv && tag == MPI_ANY_TAG);
  return peer_ok && tag_ok ? ZCOLL_SUCCESS : ZCOLL_ERR_ARG;
}

int start_send(zcoll_request_s& r, zcoll_comm_s& c, const void* buf, int count, MPI_Datatype t, int dest, int tag) {
  r.comm = &c;
  zcoll_dtype dt;
  r.proc_null = dest == MPI_PROC_NULL;
  if (r.proc_null || !float_type(t, &dt)) {
    c.publish(zcoll_comm_s::plain_stats());
    return r.proc_null ? ZCOLL_SUCCESS : mpi_rc(MPI_Isend(buf, count, t, dest, tag, c.p2p, &r.mpi));
  }
  const size_t raw = static_cast<size_t>(count) * element_bytes(dt);
  const bool compress = count > 0 && raw >= c.cfg.min_bytes;
  const size_t cap = compress ? zcoll_codec_bound(static_cast<size_t>(count), dt) : raw;
  int rc = c.p2p_pool.acquire(kEnvelopeBytes + cap, &r.staging);
  if (rc) return rc;
  uint8_t* payload = r.staging.data.get() + kEnvelopeBytes;
  size_t size = raw;
  double eb = 0;
  const double t0 = zcoll::now();
  if (compress)
    rc = zcoll_compress(&c.cfg.codec, dt, buf, static_cast<size_t>(count), payload, cap, &size, &eb);
  else if (raw)
    std::memcpy(payload, buf, raw);
  if (rc) return rc;
  const Envelope e{kMagic, static_cast<uint8_t>(compress ? kCompressed : kRaw), static_cast<uint8_t>(dt), 0,
                   static_cast<uint64_t>(count)};
  std::memcpy(r.staging.data.get(), &e, sizeof e);
  zcoll_stats st{};
  st.compressed = compress;
  st.algorithm = compress ? ZCOLL_ALGO_AUTO : ZCOLL_ALGO_MPI;
  st.eb_abs = eb;
  st.raw_bytes = raw;
  st.wire_bytes = kEnvelopeBytes + size;
  st.t_compress = compress ? zcoll::now() - t0 : 0;
  c.publish(st);
  return r.post_staging(kEnvelopeBytes + size, dest, tag, true);
}

int start_recv(zcoll_request_s& r, zcoll_comm_s& c, void* buf, int count, MPI_Datatype t, int source, int tag) {
  r.comm = &c;
  // MPICH 4.0 reports source 0 and tag 0 for a receive from MPI_PROC_NULL.
  r.proc_null = source == MPI_PROC_NULL;
  if (r.proc_null) return ZCOLL_SUCCESS;
  if (!float_type(t, &r.dtype)) return mpi_rc(MPI_Irecv(buf, count, t, source, tag, c.p2p, &r.mpi));
  r.unpack = true;
  r.buf = buf;
  r.count = count;
  r.datatype = t;
  // The bound is at least the raw size and grows with count, so every message of at
  // most `count` elements fits, compressed or not.
  const size_t cap = wire_capacity(kEnvelopeBytes + zcoll_codec_bound(static_cast<size_t>(count), r.dtype));
  const int rc = c.p2p_pool.acquire(cap, &r.staging);
  return rc ? rc : r.post_staging(cap, source, tag, false);
}

// Checks the envelope against the receive and moves the values into the user's buffer.
int unpack(zcoll_request_s& r, const MPI_Status& st, int* received) {
  MPI_Count got = 0;
  // const_cast: MPI-3 takes const MPI_Status*, SimGrid SMPI 3.32 declares it non-const.
  if (MPI_Get_elements_x(const_cast<MPI_Status*>(&st), r.wire, &got) != MPI_SUCCESS || got == MPI_UNDEFINED ||
      got < 0)
    return ZCOLL_ERR_MPI;
  if (static_cast<size_t>(got) < kEnvelopeBytes) return ZCOLL_ERR_CORRUPT;
  Envelope e;
  std::memcpy(&e, r.staging.data.get(), sizeof e);
  if (e.magic != kMagic || e.kind < kRaw || e.kind > kFailed) return ZCOLL_ERR_CORRUPT;
  if (e.dtype != r.dtype) return ZCOLL_ERR_MISMATCH;
  if (e.kind == kFailed) {
    if (got != kEnvelopeBytes || e.count < 1 || e.count > kLastCode) return ZCOLL_ERR_CORRUPT;
    const int code = static_cast<int>(e.count);
    zcoll::set_error_detail("rank %d failed to send this message (%s): no values were sent", st.MPI_SOURCE,
                            zcoll_strerror(code));
    return code;
  }
  if (e.count > static_cast<uint64_t>(r.count)) return ZCOLL_ERR_TRUNCATE;
  const uint8_t* payload = r.staging.data.get() + kEnvelopeBytes;
  const size_t size = static_cast<size_t>(got) - kEnvelopeBytes, n = static_cast<size_t>(e.count);
  if (e.kind == kRaw) {
    if (size != n * element_bytes(r.dtype)) return ZCOLL_ERR_CORRUPT;
    if (size) std::memcpy(r.buf, payload, size);
  } else {
    const int rc = zcoll_decompress(payload, size, r.dtype, r.buf, n, r.comm->cfg.codec.threads);
    if (rc) return rc;
  }
  *received = static_cast<int>(n);
  return ZCOLL_SUCCESS;
}

// Everything after MPI completed the request: unpacking, the error and the status.
int finish(zcoll_request_s& r, int mpi_err, const MPI_Status& st, MPI_Status* out) {
  int rc = ZCOLL_SUCCESS, err = MPI_SUCCESS, received = 0;
  if (mpi_err != MPI_SUCCESS) {
    int cls = MPI_ERR_OTHER;
    MPI_Error_class(mpi_err, &cls);
    rc = cls == MPI_ERR_TRUNCATE ? ZCOLL_ERR_TRUNCATE : ZCOLL_ERR_MPI;
    err = cls == MPI_ERR_TRUNCATE ? MPI_ERR_TRUNCATE : mpi_err;
  } else if (r.unpack) {
    rc = unpack(r, st, &received);
    err = rc == ZCOLL_SUCCESS ? MPI_SUCCESS : rc == ZCOLL_ERR_TRUNCATE ? MPI_ERR_TRUNCATE : MPI_ERR_OTHER;
  }
  if (out) {
    *out = st;
    if (r.unpack) MPI_Status_set_elements(out, r.datatype, received);
    out->MPI_ERROR = err;
  }
  return rc;
}

// MPICH 4.0 raises the errors of MPI_Wait and MPI_Test (a truncated receive) on
// MPI_COMM_WORLD's error handler, fatal by default, instead of our communicator's, and
// MPI-4 sends errors without a communicator to MPI_COMM_SELF; Open MPI 4.1 uses the
// request's communicator. For the length of one such call, both return errors too, so
// that a truncation becomes ZCOLL_ERR_TRUNCATE. Threads may wait at once
// (MPI_THREAD_MULTIPLE), and the handlers are the process's: the first wait in saves and
// replaces them, the last one out restores them. (Each wait saving and restoring its own
// left MPI_ERRORS_RETURN on MPI_COMM_WORLD for good when two overlapped: the second saved
// the first's replacement.)
class ErrorsReturnDuringWait {
 public:
  ErrorsReturnDuringWait() {
    std::lock_guard<std::mutex> lock(m_);
    if (waits_++ > 0) return;
    for (int i = 0; i < 2; ++i) {
      if (MPI_Comm_get_errhandler(comm(i), &saved_[i]) != MPI_SUCCESS) saved_[i] = MPI_ERRHANDLER_NULL;
      else MPI_Comm_set_errhandler(comm(i), MPI_ERRORS_RETURN);
    }
  }
  ~ErrorsReturnDuringWait() {
    std::lock_guard<std::mutex> lock(m_);
    if (--waits_ > 0) return;
    for (int i = 0; i < 2; ++i) {
      if (saved_[i] == MPI_ERRHANDLER_NULL) continue;
      MPI_Comm_set_errhandler(comm(i), saved_[i]);
      MPI_Errhandler_free(&saved_[i]);
    }
  }
  ErrorsReturnDuringWait(const ErrorsReturnDuringWait&) = delete;
  ErrorsReturnDuringWait& operator=(const ErrorsReturnDuringWait&) = delete;

 private:
  static MPI_Comm comm(int i) { return i ? MPI_COMM_SELF : MPI_COMM_WORLD; }
  static inline std::mutex m_;
  static inline int waits_ = 0;
  static inline MPI_Errhandler saved_[2] = {MPI_ERRHANDLER_NULL, MPI_ERRHANDLER_NULL};
};

// MPI's empty status; a receive from MPI_PROC_NULL has that source.
void empty_status(MPI_Status* s, bool proc_null) {
  MPI_Request none = MPI_REQUEST_NULL;
  MPI_Wait(&none, s);
  s->MPI_ERROR = MPI_SUCCESS;
  if (proc_null) s->MPI_SOURCE = MPI_PROC_NULL;
}

// Completes requests in index order: each one (block), or those MPI has finished. One
// MPI request at a time, so that each error belongs to one request (MPI_Waitsome's
// MPI_ERR_IN_STATUS leaves it open which requests completed when the call itself fails).
// All requests are posted already, so waiting on them in turn is MPI_Waitall. Returns the error of
// the first failed request; *all_done says whether none is left. Each completed request
// is freed and its handle set to ZCOLL_REQUEST_NULL.
int drive(int n, zcoll_request* reqs, MPI_Status* statuses, bool block, int* all_done) {
  int first_err = ZCOLL_SUCCESS, pending = 0;
  for (int i = 0; i < n; ++i) {
    zcoll_request_s* r = reqs[i];
    MPI_Status st, *out = statuses ? statuses + i : nullptr;
    empty_status(&st, r && r->proc_null);
    int flag = 1, mpi_err = MPI_SUCCESS;
    if (r && r->mpi != MPI_REQUEST_NULL) {
      ErrorsReturnDuringWait errors_return;
      mpi_err = block ? MPI_Wait(&r->mpi, &st) : MPI_Test(&r->mpi, &flag, &st);
    }
    if (!flag && mpi_err == MPI_SUCCESS) {
      ++pending;
      continue;
    }
    const int rc = r ? finish(*r, mpi_err, st, out) : ZCOLL_SUCCESS;
    if (!r && out) *out = st;
    if (rc && !first_err) first_err = rc;
    delete r;
    reqs[i] = ZCOLL_REQUEST_NULL;
  }
  if (all_done) *all_done = pending == 0;
  return first_err;
}

// Allocates and posts a request; *request stays ZCOLL_REQUEST_NULL on any error.
template <class Start>
int post(int arg_rc, zcoll_request* request, Start&& start) {
  if (!request) return ZCOLL_ERR_ARG;
  *request = ZCOLL_REQUEST_NULL;
  if (arg_rc) return arg_rc;
  return guarded([&] {
    std::unique_ptr<zcoll_request_s> r(new zcoll_request_s);
    const int rc = start(*r);
    if (rc == ZCOLL_SUCCESS) *request = r.release();
    return rc;
  });
}

MPI_Status* status_or_null(MPI_Status* s) { return s == MPI_STATUS_IGNORE ? nullptr : s; }

}  // namespace

extern "C" {

int zcoll_isend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, zcoll_comm comm,
                zcoll_request* request) {
  const int arg_rc = check_args(comm, buf, count, datatype, dest, tag, false);
  const int rc = post(arg_rc, request,
                      [&](zcoll_request_s& r) { return start_send(r, *comm, buf, count, datatype, dest, tag); });
  zcoll_dtype dt;
  if (rc && !arg_rc && request && dest != MPI_PROC_NULL && float_type(datatype, &dt))
    send_failure_notice(comm->p2p, dt, rc, dest, tag);
  return rc;
}

int zcoll_irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag, zcoll_comm comm,
                zcoll_request* request) {
  return post(check_args(comm, buf, count, datatype, source, tag, true), request,
              [&](zcoll_request_s& r) { return start_recv(r, *comm, buf, count, datatype, source, tag); });
}

int zcoll_send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, zcoll_comm comm) {
  zcoll_request r = ZCOLL_REQUEST_NULL;
  const int rc = zcoll_isend(buf, count, datatype, dest, tag, comm, &r);
  return rc ? rc : zcoll_wait(&r, MPI_STATUS_IGNORE);
}

int zcoll_recv(void* buf, int count, MPI_Datatype datatype, int source, int tag, zcoll_comm comm,
               MPI_Status* status) {
  zcoll_request r = ZCOLL_REQUEST_NULL;
  const int rc = zcoll_irecv(buf, count, datatype, source, tag, comm, &r);
  if (rc && status != MPI_STATUS_IGNORE) {  // posted nothing: the empty status says so
    empty_status(status, false);
    status->MPI_ERROR = MPI_ERR_OTHER;
  }
  return rc ? rc : zcoll_wait(&r, status);
}

int zcoll_wait(zcoll_request* request, MPI_Status* status) {
  if (!request) return ZCOLL_ERR_ARG;
  return guarded([&] { return drive(1, request, status_or_null(status), true, nullptr); });
}

int zcoll_test(zcoll_request* request, int* flag, MPI_Status* status) {
  if (!request || !flag) return ZCOLL_ERR_ARG;
  *flag = 0;
  return guarded([&] { return drive(1, request, status_or_null(status), false, flag); });
}

int zcoll_waitall(int count, zcoll_request requests[], MPI_Status statuses[]) {
  if (count < 0 || (count > 0 && !requests)) return ZCOLL_ERR_ARG;
  MPI_Status* s = statuses == MPI_STATUSES_IGNORE ? nullptr : statuses;
  return guarded([&] { return drive(count, requests, s, true, nullptr); });
}

}  // extern "C"
