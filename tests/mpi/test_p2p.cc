// MPI tests of zcoll's compressed point-to-point calls (the contract is the
// "point-to-point" section of include/zcoll.h).
//
//   zcoll_mpi_p2p_tests [section ...]      (no section: all of them)
//
// Sections: bound passthrough match order truncate corrupt zero many errors nomem (each
// described where it is defined). Messages carry slices of the shipped cesm_TS field
// (float, and converted to double), chosen by sender and a per-message salt that every
// rank counts alike, so a receiver regenerates what was sent and checks every element:
// within the sender's eb_abs when compressed (|got - want| <= eb_abs in double, no
// tolerance; REL: eb x (max - min) of the sender's message), bit for bit otherwise.
// Counts differ by sender and message, so a wrongly matched message shows. Receive
// buffers carry guard bytes on both sides that must come back untouched; statuses are
// checked (source, tag, MPI_Get_count = elements sent, MPI_ERROR).
// A failing check prints "[rank r/p] FAIL file:line [case] ..."; every rank reaches
// MPI_Finalize and the exit code is non-zero if any rank failed.
#include <zcoll.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "failing_new.h"
#include "mpi_check.h"

#ifndef ZCOLL_TEST_DATA_DIR
#error "ZCOLL_TEST_DATA_DIR must be defined"
#endif

namespace {

std::vector<float> g_field;
int g_salt = 0;

int next_salt() { return ++g_salt; }
int right() { return (g_rank + 1) % g_size; }
int left() { return (g_rank + g_size - 1) % g_size; }

void load_field() {
  const std::string path = std::string(ZCOLL_TEST_DATA_DIR) + "/cesm_TS_10x192x288.f32";
  if (FILE* f = std::fopen(path.c_str(), "rb")) {
    std::vector<float> part(1 << 16);
    for (size_t got; (got = std::fread(part.data(), sizeof(float), part.size(), f)) > 0;)
      g_field.insert(g_field.end(), part.begin(), part.begin() + static_cast<long>(got));
    std::fclose(f);
  }
  EXPECT(g_field.size() > 100000, "cannot read %s", path.c_str());
  if (g_field.size() < 1000) g_field.assign(100000, 273.0f);
}

template <class T>  // float, double, int32_t
MPI_Datatype mpi_type() {
  return std::is_same_v<T, float> ? MPI_FLOAT : std::is_same_v<T, double> ? MPI_DOUBLE : MPI_INT;
}

template <class T>
const char* type_name() {
  return std::is_same_v<T, float> ? "f32" : std::is_same_v<T, double> ? "f64" : "MPI_INT";
}

// What `sender` sends with `salt`: n values from a place in the field set by both. Doubles
// get a fraction below any bound used here, so they are not just widened floats; ints are
// the field in millikelvin. `special` puts NaN and +-Inf in three places.
template <class T>
std::vector<T> message(int sender, int salt, size_t n, bool special = false) {
  std::vector<T> v(n);
  const size_t len = g_field.size();
  const size_t start = (static_cast<size_t>(sender) * 50021u + static_cast<size_t>(salt) * 7919u) % len;
  for (size_t i = 0; i < n; ++i) {
    const float x = g_field[(start + i) % len];
    if constexpr (std::is_same_v<T, int32_t>)
      v[i] = static_cast<int32_t>(x * 1000.0f);
    else
      v[i] = static_cast<T>(x) + static_cast<T>(std::is_same_v<T, double> ? 1e-7 * std::sin(double(i)) : 0.0);
  }
  if constexpr (std::is_floating_point_v<T>)
    if (special && n > 8) {
      v[3] = std::numeric_limits<T>::quiet_NaN();
      v[n / 2] = std::numeric_limits<T>::infinity();
      v[n - 1] = -std::numeric_limits<T>::infinity();
    }
  return v;
}

// REL's absolute bound for x, as "Resolving the bound" in zcoll.h defines it.
template <class T>
double rel_bound(double eb, const std::vector<T>& x) {
  double lo = INFINITY, hi = -INFINITY;
  for (T v : x)
    if (std::isfinite(static_cast<double>(v))) {
      lo = std::min(lo, static_cast<double>(v));
      hi = std::max(hi, static_cast<double>(v));
    }
  return eb * (hi - lo);
}

// Room for `bytes` of received data between two guards; every byte starts as 0xA5 (as
// float or double a NaN that no path produces), so "unchanged" can be checked anywhere.
class RecvBuf {
 public:
  static constexpr size_t kGuard = 64;
  explicit RecvBuf(size_t bytes) : mem_((2 * kGuard + bytes + 7) / 8) {
    std::memset(mem_.data(), 0xA5, mem_.size() * 8);
  }
  template <class T>
  T* data() {
    return reinterpret_cast<T*>(reinterpret_cast<unsigned char*>(mem_.data()) + kGuard);
  }
  // Both guards and the data bytes from `from` on still hold their initial bytes.
  bool untouched(size_t from) const {
    const unsigned char* p = reinterpret_cast<const unsigned char*>(mem_.data());
    for (size_t i = 0; i < mem_.size() * 8; ++i)
      if ((i < kGuard || i >= kGuard + from) && p[i] != 0xA5) return false;
    return true;
  }

 private:
  std::vector<uint64_t> mem_;
};

// The first want.size() received elements: within eb of what was sent (eb < 0, or a
// value that is not finite: bit for bit); the rest of the buffer and the guards untouched.
template <class T>
void expect_received(RecvBuf& got, const std::vector<T>& want, double eb) {
  const T* g = got.data<T>();
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const bool exact = eb < 0 || !std::isfinite(static_cast<double>(want[i]));
    const bool ok = exact ? std::memcmp(&g[i], &want[i], sizeof(T)) == 0
                          : std::fabs(static_cast<double>(g[i]) - static_cast<double>(want[i])) <= eb;
    if (!ok && bad++ == 0) first = i;
  }
  EXPECT(bad == 0, "%zu of %zu %s elements wrong (eb %.17g), first at %zu: got %.17g, want %.17g", bad, want.size(),
         type_name<T>(), eb, first, bad ? static_cast<double>(g[first]) : 0.0,
         bad ? static_cast<double>(want[first]) : 0.0);
  EXPECT(got.untouched(want.size() * sizeof(T)), "bytes after the %zu received %s elements changed", want.size(),
         type_name<T>());
}

// count < 0: MPI_Get_count is not checked.
void expect_status(const MPI_Status& st, MPI_Datatype type, int source, int tag, int count, int error) {
  int n = -1;
  MPI_Get_count(&st, type, &n);
  EXPECT(st.MPI_SOURCE == source && st.MPI_TAG == tag && (count < 0 || n == count) && st.MPI_ERROR == error,
         "status source %d tag %d count %d error %d, expected %d %d %d %d", st.MPI_SOURCE, st.MPI_TAG, n,
         st.MPI_ERROR, source, tag, count, error);
}

zcoll_comm make_comm(int eb_mode, double eb, size_t min_bytes = ZCOLL_DEFAULT_MIN_BYTES,
                     int algorithm = ZCOLL_ALGO_AUTO) {
  zcoll_config cfg;
  zcoll_config_init(&cfg);
  cfg.codec.eb_mode = eb_mode;
  cfg.codec.eb = eb;
  cfg.min_bytes = min_bytes;
  cfg.algorithm = algorithm;
  zcoll_comm zc = nullptr;
  EXPECT_RC(zcoll_comm_create(MPI_COMM_WORLD, &cfg, &zc), ZCOLL_SUCCESS);
  return zc;
}

void free_comm(zcoll_comm& zc) { EXPECT_RC(zcoll_comm_free(&zc), ZCOLL_SUCCESS); }

// One message around the ring: every rank sends count(base, rank) elements of `type`
// (`unit` values of T each) to its right and receives its left neighbour's into room
// for two more elements. Checks the status, every value, and this rank's send stats.
template <class T>
struct Ring {
  zcoll_comm zc;
  int base;
  double eb = -1;  // < 0: bit for bit; else the ABS bound, or the REL one when rel
  bool rel = false;
  int compressed = 0;  // expected zcoll_last_stats().compressed
  bool nonblocking = false;
  bool special = false;
  MPI_Datatype type = mpi_type<T>();
  int unit = 1;
  int tag = 5;

  static int count(int base, int rank) { return base + 3 * rank; }

  void run() {
    Ctx c("%s x %d, eb %g %s, %s%s", type_name<T>(), base, eb, rel ? "REL" : "ABS",
          nonblocking ? "isend/irecv/waitall" : "send/recv", special ? ", NaN/Inf" : "");
    const int salt = next_salt(), n_out = count(base, g_rank), n_in = count(base, left()), room = n_in + 2;
    std::vector<T> out = message<T>(g_rank, salt, static_cast<size_t>(n_out) * unit, special);
    const std::vector<T> want = message<T>(left(), salt, static_cast<size_t>(n_in) * unit, special);
    const double eb_out = rel ? rel_bound(eb, out) : eb, eb_in = rel ? rel_bound(eb, want) : eb;
    RecvBuf in(static_cast<size_t>(room) * unit * sizeof(T));
    MPI_Status st;
    if (nonblocking) {
      zcoll_request rq[2];
      MPI_Status sts[2];
      EXPECT_RC(zcoll_irecv(in.data<T>(), room, type, left(), tag, zc, &rq[0]), ZCOLL_SUCCESS);
      EXPECT_RC(zcoll_isend(out.data(), n_out, type, right(), tag, zc, &rq[1]), ZCOLL_SUCCESS);
      // A float message is compressed or copied before zcoll_isend returns.
      if (type == MPI_FLOAT || type == MPI_DOUBLE) std::fill(out.begin(), out.end(), T(-1));
      EXPECT_RC(zcoll_waitall(2, rq, sts), ZCOLL_SUCCESS);
      EXPECT(rq[0] == ZCOLL_REQUEST_NULL && rq[1] == ZCOLL_REQUEST_NULL, "waitall left a request");
      st = sts[0];
    } else {
      auto send = [&] { EXPECT_RC(zcoll_send(out.data(), n_out, type, right(), tag, zc), ZCOLL_SUCCESS); };
      auto recv = [&] { EXPECT_RC(zcoll_recv(in.data<T>(), room, type, left(), tag, zc, &st), ZCOLL_SUCCESS); };
      if (g_rank == 0) {  // rank 0 sends first, the others receive first: no cycle of waits
        send();
        recv();
      } else {
        recv();
        send();
      }
    }
    expect_status(st, type, left(), tag, n_in, MPI_SUCCESS);
    expect_received(in, want, eb < 0 ? -1.0 : eb_in);
    zcoll_stats s{};
    EXPECT_RC(zcoll_last_stats(zc, &s), ZCOLL_SUCCESS);
    EXPECT(s.compressed == compressed, "stats.compressed %d, expected %d", s.compressed, compressed);
    if (compressed)
      EXPECT(s.eb_abs == eb_out && s.raw_bytes == out.size() * sizeof(T) && s.wire_bytes < s.raw_bytes,
             "stats eb_abs %.17g (want %.17g), raw %zu (want %zu), wire %zu", s.eb_abs, eb_out, s.raw_bytes,
             out.size() * sizeof(T), s.wire_bytes);
  }
};

// bound: compressed float and double messages around the ring with ABS and REL bounds,
// blocking and nonblocking (the send buffer overwritten as soon as zcoll_isend returns),
// and with NaN/Inf inside (bit for bit).
void section_bound() {
  for (int rel = 0; rel < 2; ++rel) {
    const double eb = rel ? 1e-4 : 1e-2;
    zcoll_comm zc = make_comm(rel ? ZCOLL_EB_REL : ZCOLL_EB_ABS, eb);
    for (int nb = 0; nb < 2; ++nb) {
      Ring<float> f{zc, 40000, eb, rel != 0, /*compressed=*/1, /*nonblocking=*/nb != 0};
      f.run();
      Ring<double> d{zc, 20000, eb, rel != 0, /*compressed=*/1, /*nonblocking=*/nb != 0};
      d.run();
    }
    Ring<float> s{zc, 30000, eb, rel != 0, /*compressed=*/1};
    s.special = true;
    s.run();
    free_comm(zc);
  }
}

// passthrough: what is not compressed arrives bit for bit: MPI_INT, float messages below
// min_bytes (the largest double one just below), a derived type of floats, and any float
// message on a comm whose min_bytes is larger. config.algorithm = ZCOLL_ALGO_MPI has no
// say in point-to-point: a large float message is still compressed.
void section_passthrough() {
  zcoll_comm zc = make_comm(ZCOLL_EB_ABS, 1e-2);
  Ring<int32_t>{zc, 40000}.run();
  Ring<float>{zc, 100}.run();
  Ring<float>{zc, 100, -1, false, /*compressed=*/0, /*nonblocking=*/true}.run();
  const int below = static_cast<int>(ZCOLL_DEFAULT_MIN_BYTES / sizeof(double)) - 1 - 3 * (g_size - 1);
  Ring<double>{zc, below}.run();
  Ring<double>{zc, static_cast<int>(ZCOLL_DEFAULT_MIN_BYTES / sizeof(double)), 1e-2, false, /*compressed=*/1}.run();
  MPI_Datatype f3;
  MPI_Type_contiguous(3, MPI_FLOAT, &f3);
  MPI_Type_commit(&f3);
  Ring<float> d{zc, 20000};
  d.type = f3;
  d.unit = 3;
  d.run();
  d.nonblocking = true;
  d.run();
  MPI_Type_free(&f3);
  free_comm(zc);

  zcoll_comm never = make_comm(ZCOLL_EB_ABS, 1e-2, SIZE_MAX);
  Ring<float>{never, 40000}.run();
  free_comm(never);
  zcoll_comm algo_mpi = make_comm(ZCOLL_EB_ABS, 1e-2, ZCOLL_DEFAULT_MIN_BYTES, ZCOLL_ALGO_MPI);
  Ring<float>{algo_mpi, 40000, 1e-2, false, /*compressed=*/1}.run();
  free_comm(algo_mpi);
}

// match: MPI_ANY_SOURCE and MPI_ANY_TAG (the status says who sent what), a tag picked
// past an earlier message, MPI_PROC_NULL, and isolation: neither the application's own
// messages on MPI_COMM_WORLD nor a zcoll collective's match a pending zcoll receive.
void section_match() {
  constexpr double kEb = 1e-4;
  constexpr int kN = 30000;
  zcoll_comm zc = make_comm(ZCOLL_EB_REL, kEb);
  const int p = g_size, salt = next_salt(), n_mine = kN + 3 * g_rank;
  const std::vector<float> mine = message<float>(g_rank, salt, static_cast<size_t>(n_mine));
  auto check_float = [&](RecvBuf& in, const MPI_Status& st, int tag_of_source) {
    const int s = st.MPI_SOURCE;
    EXPECT(s >= 0 && s < p, "source %d", s);
    if (s < 0 || s >= p) return;
    expect_status(st, MPI_FLOAT, s, tag_of_source + s, kN + 3 * s, MPI_SUCCESS);
    const std::vector<float> want = message<float>(s, salt, static_cast<size_t>(kN + 3 * s));
    expect_received(in, want, rel_bound(kEb, want));
  };
  {
    Ctx c("rank 0 receives from MPI_ANY_SOURCE with MPI_ANY_TAG");
    if (g_rank == 0) {
      std::vector<int> seen(static_cast<size_t>(p), 0);
      for (int k = 1; k < p; ++k) {
        RecvBuf in((kN + 3 * p) * sizeof(float));
        MPI_Status st;
        EXPECT_RC(zcoll_recv(in.data<float>(), kN + 3 * p, MPI_FLOAT, MPI_ANY_SOURCE, MPI_ANY_TAG, zc, &st),
                  ZCOLL_SUCCESS);
        check_float(in, st, 100);
        if (st.MPI_SOURCE > 0 && st.MPI_SOURCE < p) EXPECT(!seen[st.MPI_SOURCE]++, "source %d twice", st.MPI_SOURCE);
      }
    } else {
      EXPECT_RC(zcoll_send(mine.data(), n_mine, MPI_FLOAT, 0, 100 + g_rank, zc), ZCOLL_SUCCESS);
    }
    MPI_Barrier(MPI_COMM_WORLD);  // else MPI_ANY_TAG may rightly match the next block's messages
  }
  {
    Ctx c("tag 2 from MPI_ANY_SOURCE first, then tag 1 (sent earlier) from that source");
    const std::vector<int32_t> ints = message<int32_t>(g_rank, salt, 10);
    if (g_rank == 0) {
      for (int k = 1; k < p; ++k) {
        RecvBuf in((kN + 3 * p) * sizeof(float)), in_int(12 * sizeof(int32_t));
        MPI_Status st, st_int;
        EXPECT_RC(zcoll_recv(in.data<float>(), kN + 3 * p, MPI_FLOAT, MPI_ANY_SOURCE, 2, zc, &st), ZCOLL_SUCCESS);
        check_float(in, st, 2 - st.MPI_SOURCE);
        const int s = st.MPI_SOURCE;
        if (s <= 0 || s >= p) continue;
        EXPECT_RC(zcoll_recv(in_int.data<int32_t>(), 12, MPI_INT, s, 1, zc, &st_int), ZCOLL_SUCCESS);
        expect_status(st_int, MPI_INT, s, 1, 10, MPI_SUCCESS);
        expect_received(in_int, message<int32_t>(s, salt, 10), -1);
      }
    } else {
      zcoll_request rq[2];
      EXPECT_RC(zcoll_isend(ints.data(), 10, MPI_INT, 0, 1, zc, &rq[0]), ZCOLL_SUCCESS);
      EXPECT_RC(zcoll_isend(mine.data(), n_mine, MPI_FLOAT, 0, 2, zc, &rq[1]), ZCOLL_SUCCESS);
      EXPECT_RC(zcoll_waitall(2, rq, MPI_STATUSES_IGNORE), ZCOLL_SUCCESS);
    }
  }
  {
    Ctx c("a zcoll_irecv(MPI_ANY_SOURCE, MPI_ANY_TAG) pending across MPI traffic and a zcoll collective");
    RecvBuf in((kN + 3 * p) * sizeof(float));
    zcoll_request rq;
    EXPECT_RC(zcoll_irecv(in.data<float>(), kN + 3 * p, MPI_FLOAT, MPI_ANY_SOURCE, MPI_ANY_TAG, zc, &rq),
              ZCOLL_SUCCESS);
    float world_in[4] = {0, 0, 0, 0}, world_out[4] = {1, 2, 3, 4};
    MPI_Sendrecv(world_out, 4, MPI_FLOAT, right(), 0, world_in, 4, MPI_FLOAT, left(), 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    EXPECT(world_in[3] == 4.0f, "MPI_COMM_WORLD message lost");
    std::vector<float> all(static_cast<size_t>(n_mine + 3) * static_cast<size_t>(p));
    EXPECT_RC(zcoll_allgather(mine.data(), kN, MPI_FLOAT, all.data(), kN, MPI_FLOAT, zc), ZCOLL_SUCCESS);
    zcoll_stats s{};
    zcoll_last_stats(zc, &s);
    EXPECT(s.compressed == 1, "the allgather was not compressed");
    EXPECT_RC(zcoll_send(mine.data(), n_mine, MPI_FLOAT, right(), 100 + g_rank, zc), ZCOLL_SUCCESS);
    MPI_Status st;
    EXPECT_RC(zcoll_wait(&rq, &st), ZCOLL_SUCCESS);
    EXPECT(st.MPI_SOURCE == left(), "matched a message from %d", st.MPI_SOURCE);
    check_float(in, st, 100);
  }
  {
    Ctx c("MPI_PROC_NULL");
    RecvBuf in(10 * sizeof(float));
    MPI_Status st;
    EXPECT_RC(zcoll_send(mine.data(), n_mine, MPI_FLOAT, MPI_PROC_NULL, 3, zc), ZCOLL_SUCCESS);
    EXPECT_RC(zcoll_recv(in.data<float>(), 10, MPI_FLOAT, MPI_PROC_NULL, 3, zc, &st), ZCOLL_SUCCESS);
    expect_status(st, MPI_FLOAT, MPI_PROC_NULL, MPI_ANY_TAG, 0, MPI_SUCCESS);
    EXPECT(in.untouched(0), "receive from MPI_PROC_NULL wrote to the buffer");
  }
  free_comm(zc);
}

// Message k of a mixed sequence: compressed float, raw float, MPI_INT, compressed double
// in turn, counts growing with k. f(T{}, count) does the work for that type.
template <class F>
void mixed(int k, F&& f) {
  switch (k % 4) {
    case 0:
      return f(float{}, 20000 + k);
    case 1:
      return f(float{}, 50 + k);
    case 2:
      return f(int32_t{}, 30 + k);
    default:
      return f(double{}, 10000 + k);
  }
}

// Posts message k's receive (from left, `tag`) into in[k] and its send (to right, tag
// + k when tags differ) from out[k]; what was sent is kept for the check.
struct Mixed {
  zcoll_comm zc;
  int salt;
  std::vector<RecvBuf> in;
  std::vector<std::vector<unsigned char>> out;

  Mixed(zcoll_comm c, int n) : zc(c), salt(next_salt()) {
    for (int k = 0; k < n; ++k)
      mixed(k, [&](auto t, int count) { in.emplace_back(static_cast<size_t>(count + 1) * sizeof(t)); });
    out.resize(static_cast<size_t>(n));
  }
  void irecv(int k, int source, int tag, zcoll_request* rq) {
    mixed(k, [&](auto t, int count) {
      using T = decltype(t);
      EXPECT_RC(zcoll_irecv(in[k].data<T>(), count + 1, mpi_type<T>(), source, tag, zc, rq), ZCOLL_SUCCESS);
    });
  }
  void isend(int k, int tag, zcoll_request* rq) {
    mixed(k, [&](auto t, int count) {
      using T = decltype(t);
      const std::vector<T> v = message<T>(g_rank, salt + k, static_cast<size_t>(count));
      out[k].resize(v.size() * sizeof(T));
      std::memcpy(out[k].data(), v.data(), out[k].size());  // MPI_INT's buffer must outlive the send
      EXPECT_RC(zcoll_isend(out[k].data(), count, mpi_type<T>(), right(), tag, zc, rq), ZCOLL_SUCCESS);
    });
  }
  // Message k as received from left with `tag`; eb: the comm's ABS bound.
  void check(int k, const MPI_Status* st, int tag, double eb) {
    mixed(k, [&](auto t, int count) {
      using T = decltype(t);
      Ctx c("message %d (%s x %d)", k, type_name<T>(), count);
      if (st) expect_status(*st, mpi_type<T>(), left(), tag, count, MPI_SUCCESS);
      const bool lossy = std::is_floating_point_v<T> && count * sizeof(T) >= ZCOLL_DEFAULT_MIN_BYTES;
      expect_received(in[k], message<T>(left(), salt + k, static_cast<size_t>(count)), lossy ? eb : -1.0);
    });
  }
};

// order: eight messages from one sender with one tag arrive in the order sent (MPI's
// non-overtaking rule), mixing compressed, raw-float and MPI_INT messages, with the
// receives posted before the sends, and with the messages sent first and received one
// by one with MPI_ANY_SOURCE and MPI_ANY_TAG.
void section_order() {
  constexpr int kMessages = 8, kTag = 9;
  constexpr double kEb = 1e-2;
  zcoll_comm zc = make_comm(ZCOLL_EB_ABS, kEb);
  for (int receives_first = 1; receives_first >= 0; --receives_first) {
    Ctx c("%s", receives_first ? "receives posted first" : "messages sent first, MPI_ANY_SOURCE/MPI_ANY_TAG");
    Mixed m(zc, kMessages);
    std::vector<zcoll_request> rq(2 * kMessages, ZCOLL_REQUEST_NULL);
    std::vector<MPI_Status> st(2 * kMessages);
    if (receives_first)
      for (int k = 0; k < kMessages; ++k) m.irecv(k, left(), kTag, &rq[k]);
    for (int k = 0; k < kMessages; ++k) m.isend(k, kTag, &rq[kMessages + k]);
    if (receives_first) {
      EXPECT_RC(zcoll_waitall(2 * kMessages, rq.data(), st.data()), ZCOLL_SUCCESS);
    } else {
      MPI_Barrier(MPI_COMM_WORLD);
      for (int k = 0; k < kMessages; ++k) {
        m.irecv(k, MPI_ANY_SOURCE, MPI_ANY_TAG, &rq[k]);
        EXPECT_RC(zcoll_wait(&rq[k], &st[k]), ZCOLL_SUCCESS);
      }
      EXPECT_RC(zcoll_waitall(kMessages, rq.data() + kMessages, MPI_STATUSES_IGNORE), ZCOLL_SUCCESS);
    }
    for (int k = 0; k < kMessages; ++k) m.check(k, &st[k], kTag, kEb);
  }
  free_comm(zc);
}

// How a receive is completed in the truncation section.
enum class Completion { recv, wait, test, waitall };

// truncate: a message with more elements than the receive count gives
// ZCOLL_ERR_TRUNCATE and MPI_ERR_TRUNCATE in the status and leaves a float receive
// buffer and the guards after an MPI_INT one unchanged: compressed floats that fit the
// staging buffer (caught from the envelope), raw floats just over the count (envelope),
// raw floats and noise far over it (caught by MPI), MPI_INT (MPI's own), completed by
// zcoll_recv, zcoll_wait, zcoll_test and zcoll_waitall. The sends succeed, and the next
// message on the same pair arrives intact.
void section_truncate() {
  zcoll_comm zc = make_comm(ZCOLL_EB_ABS, 1e-2);
  struct Case {
    const char* what;
    int sent, room;
    bool noise, ints;
  };
  const Case cases[] = {{"compressed floats, one over", 40000, 39999, false, false},
                        {"raw floats, two over", 12, 10, false, false},
                        {"raw floats, ten times over", 100, 10, false, false},
                        {"noise floats, four times over", 40000, 10000, true, false},
                        {"MPI_INT, one over", 1000, 999, false, true}};
  const Completion modes[] = {Completion::recv, Completion::wait, Completion::test, Completion::waitall};
  int round = 0;
  for (const Case& k : cases)
    for (Completion how : modes) {
      Ctx c("%s, completion %d", k.what, static_cast<int>(how));
      const int tag = 20 + round++;
      std::vector<float> out = message<float>(g_rank, next_salt(), static_cast<size_t>(k.sent));
      if (k.noise) {
        uint32_t x = 12345u + static_cast<uint32_t>(g_rank);
        for (float& v : out) v = static_cast<float>((x = x * 1664525u + 1013904223u) >> 8);
      }
      const MPI_Datatype type = k.ints ? MPI_INT : MPI_FLOAT;  // same size: `out` serves for both
      zcoll_request send_rq, rq;
      EXPECT_RC(zcoll_isend(out.data(), k.sent, type, right(), tag, zc, &send_rq), ZCOLL_SUCCESS);
      RecvBuf in(static_cast<size_t>(k.room) * sizeof(float));
      MPI_Status st;
      int rc = ZCOLL_SUCCESS, flag = 0;
      if (how == Completion::recv) {
        rc = zcoll_recv(in.data<float>(), k.room, type, left(), tag, zc, &st);
      } else {
        EXPECT_RC(zcoll_irecv(in.data<float>(), k.room, type, left(), tag, zc, &rq), ZCOLL_SUCCESS);
        if (how == Completion::wait) rc = zcoll_wait(&rq, &st);
        while (how == Completion::test && !flag) rc = zcoll_test(&rq, &flag, &st);
        if (how == Completion::waitall) rc = zcoll_waitall(1, &rq, &st);
        EXPECT(rq == ZCOLL_REQUEST_NULL, "the request was not freed");
      }
      EXPECT_RC(rc, ZCOLL_ERR_TRUNCATE);
      expect_status(st, type, left(), tag, -1, MPI_ERR_TRUNCATE);
      EXPECT(in.untouched(k.ints ? static_cast<size_t>(k.room) * sizeof(float) : 0), "the receive buffer changed");
      EXPECT_RC(zcoll_wait(&send_rq, MPI_STATUS_IGNORE), ZCOLL_SUCCESS);
    }
  Ring<float>{zc, 40000, 1e-2, false, /*compressed=*/1}.run();
  free_comm(zc);
}

// corrupt: damaged float messages give ZCOLL_ERR_CORRUPT with MPI_ERR_OTHER in the
// status (a message sent as MPI_FLOAT and received as MPI_DOUBLE: ZCOLL_ERR_MISMATCH)
// and never write past the receive count. Rank 1 sends a compressed and a raw float
// message; rank 0 receives what travelled as MPI_BYTE and sends it back, intact (it must
// decode as the original) and damaged: a flipped payload byte, cut short, a broken
// envelope, 3 bytes.
void section_corrupt() {
  zcoll_comm zc = make_comm(ZCOLL_EB_ABS, 1e-2);
  const int salt = next_salt();
  enum Damage { kIntact, kFlip, kCut, kEnvelope, kThreeBytes, kAsDouble };
  struct Variant {
    const char* what;
    Damage damage;
    int want;
  };
  const Variant variants[] = {{"intact", kIntact, ZCOLL_SUCCESS},
                              {"payload byte flipped", kFlip, ZCOLL_ERR_CORRUPT},
                              {"last byte cut", kCut, ZCOLL_ERR_CORRUPT},
                              {"envelope broken", kEnvelope, ZCOLL_ERR_CORRUPT},
                              {"3 bytes", kThreeBytes, ZCOLL_ERR_CORRUPT},
                              {"received as MPI_DOUBLE", kAsDouble, ZCOLL_ERR_MISMATCH}};
  for (int n : {40000, 100}) {
    const bool compressed = n * sizeof(float) >= ZCOLL_DEFAULT_MIN_BYTES;
    Ctx c("%d floats (%s)", n, compressed ? "compressed" : "raw");
    const std::vector<float> sent = message<float>(1, salt + n, static_cast<size_t>(n));
    auto skip = [&](const Variant& v) { return v.damage == kFlip && !compressed; };  // raw values carry no checksum
    if (g_rank == 1) {
      EXPECT_RC(zcoll_send(sent.data(), n, MPI_FLOAT, 0, 1, zc), ZCOLL_SUCCESS);
      for (const Variant& v : variants) {
        if (skip(v)) continue;
        Ctx cv("%s", v.what);
        RecvBuf in(static_cast<size_t>(n + 2) * sizeof(double));
        MPI_Status st;
        const int rc = v.damage == kAsDouble ? zcoll_recv(in.data<double>(), n + 2, MPI_DOUBLE, 0, 2, zc, &st)
                                             : zcoll_recv(in.data<float>(), n + 2, MPI_FLOAT, 0, 2, zc, &st);
        EXPECT_RC(rc, v.want);
        if (v.want == ZCOLL_SUCCESS) {
          expect_status(st, MPI_FLOAT, 0, 2, n, MPI_SUCCESS);
          expect_received(in, sent, compressed ? 1e-2 : -1.0);
        } else {
          expect_status(st, MPI_FLOAT, 0, 2, 0, MPI_ERR_OTHER);
          EXPECT(in.untouched(static_cast<size_t>(n) * sizeof(float)), "bytes past the count changed");
        }
      }
    } else if (g_rank == 0) {
      std::vector<unsigned char> wire(static_cast<size_t>(n) * sizeof(float) + 4096);
      MPI_Status st;
      EXPECT_RC(zcoll_recv(wire.data(), static_cast<int>(wire.size()), MPI_BYTE, 1, 1, zc, &st), ZCOLL_SUCCESS);
      int len = 0;
      MPI_Get_count(&st, MPI_BYTE, &len);
      EXPECT(len > 16 && len <= static_cast<int>(wire.size()), "%d bytes travelled", len);
      wire.resize(static_cast<size_t>(std::max(len, 17)));
      for (const Variant& v : variants) {
        if (skip(v)) continue;
        std::vector<unsigned char> w = wire;
        if (v.damage == kFlip) w[w.size() / 2 + 8] ^= 0x40;
        if (v.damage == kCut) w.pop_back();
        if (v.damage == kEnvelope) w[0] ^= 0xFF;
        if (v.damage == kThreeBytes) w.resize(3);
        EXPECT_RC(zcoll_send(w.data(), static_cast<int>(w.size()), MPI_BYTE, 1, 2, zc), ZCOLL_SUCCESS);
      }
    }
  }
  free_comm(zc);
}

// zero: zero-element messages of float, double and MPI_INT, with NULL buffers, into
// receives with room (MPI_Get_count 0, buffer untouched) and without, blocking and
// nonblocking, also on a comm with min_bytes 0.
void section_zero() {
  for (size_t min_bytes : {size_t{0}, size_t{ZCOLL_DEFAULT_MIN_BYTES}}) {
    Ctx c("min_bytes %zu", min_bytes);
    zcoll_comm zc = make_comm(ZCOLL_EB_REL, 1e-3, min_bytes);
    const MPI_Datatype types[] = {MPI_FLOAT, MPI_DOUBLE, MPI_INT};
    for (MPI_Datatype t : types) {
      RecvBuf in(5 * sizeof(double));
      zcoll_request rq[4];
      MPI_Status st[4];
      EXPECT_RC(zcoll_irecv(in.data<double>(), 5, t, left(), 1, zc, &rq[0]), ZCOLL_SUCCESS);
      EXPECT_RC(zcoll_irecv(nullptr, 0, t, left(), 2, zc, &rq[1]), ZCOLL_SUCCESS);
      EXPECT_RC(zcoll_isend(nullptr, 0, t, right(), 1, zc, &rq[2]), ZCOLL_SUCCESS);
      EXPECT_RC(zcoll_isend(nullptr, 0, t, right(), 2, zc, &rq[3]), ZCOLL_SUCCESS);
      EXPECT_RC(zcoll_waitall(4, rq, st), ZCOLL_SUCCESS);
      expect_status(st[0], t, left(), 1, 0, MPI_SUCCESS);
      expect_status(st[1], t, left(), 2, 0, MPI_SUCCESS);
      EXPECT(in.untouched(0), "a zero-element message wrote to the buffer");
      MPI_Status s;
      auto send = [&] { EXPECT_RC(zcoll_send(nullptr, 0, t, right(), 3, zc), ZCOLL_SUCCESS); };
      auto recv = [&] { EXPECT_RC(zcoll_recv(nullptr, 0, t, MPI_ANY_SOURCE, 3, zc, &s), ZCOLL_SUCCESS); };
      if (g_rank == 0) {
        send();
        recv();
      } else {
        recv();
        send();
      }
      expect_status(s, t, left(), 3, 0, MPI_SUCCESS);
    }
    free_comm(zc);
  }
}

// many: 64 sends and 64 receives in flight on every rank at once (compressed floats and
// doubles, raw floats, MPI_INT; one tag per message, receives posted in reverse order),
// completed by one zcoll_waitall over all 128, by a zcoll_test loop, and by zcoll_waitall
// with MPI_STATUSES_IGNORE and null handles mixed in.
void section_many() {
  constexpr int kMessages = 64;
  constexpr double kEb = 1e-2;
  zcoll_comm zc = make_comm(ZCOLL_EB_ABS, kEb);
  for (int how = 0; how < 3; ++how) {
    Ctx c("%s", how == 0 ? "waitall" : how == 1 ? "test loop" : "waitall, MPI_STATUSES_IGNORE, null handles");
    Mixed m(zc, kMessages);
    const int slots = how == 2 ? 3 * kMessages : 2 * kMessages, stride = how == 2 ? 3 : 2;
    std::vector<zcoll_request> rq(static_cast<size_t>(slots), ZCOLL_REQUEST_NULL);
    std::vector<MPI_Status> st(static_cast<size_t>(slots));
    for (int k = kMessages - 1; k >= 0; --k) m.irecv(k, left(), k, &rq[static_cast<size_t>(stride * k)]);
    for (int k = 0; k < kMessages; ++k) m.isend(k, k, &rq[static_cast<size_t>(stride * k + 1)]);
    if (how == 1) {
      for (int open = slots; open > 0;) {
        open = 0;
        for (int i = 0; i < slots; ++i) {
          if (rq[i] == ZCOLL_REQUEST_NULL) continue;
          int flag = 0;
          EXPECT_RC(zcoll_test(&rq[i], &flag, &st[i]), ZCOLL_SUCCESS);
          EXPECT(flag == (rq[i] == ZCOLL_REQUEST_NULL), "flag %d but request %s", flag, rq[i] ? "kept" : "freed");
          open += !flag;
        }
      }
    } else {
      EXPECT_RC(zcoll_waitall(slots, rq.data(), how == 0 ? st.data() : MPI_STATUSES_IGNORE), ZCOLL_SUCCESS);
    }
    for (int i = 0; i < slots; ++i) EXPECT(rq[i] == ZCOLL_REQUEST_NULL, "request %d left", i);
    for (int k = 0; k < kMessages; ++k) {
      m.check(k, how == 2 ? nullptr : &st[static_cast<size_t>(stride * k)], k, kEb);
      if (how != 2) EXPECT(st[static_cast<size_t>(stride * k + 1)].MPI_ERROR == MPI_SUCCESS, "send %d status", k);
    }
  }
  free_comm(zc);
}

// errors: argument errors return ZCOLL_ERR_ARG before any communication (the messages
// that follow still match), leave *request at ZCOLL_REQUEST_NULL, and waiting on or
// testing ZCOLL_REQUEST_NULL succeeds at once with an empty status.
void section_errors() {
  zcoll_comm zc = make_comm(ZCOLL_EB_ABS, 1e-2);
  float x[4] = {1, 2, 3, 4};
  int* ub = nullptr;
  int flag = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
  const int tag_ub = flag ? *ub : 32767, p = g_size;
  struct Bad {
    const char* what;
    const float* buf;
    int count;
    MPI_Datatype type;
    int peer, tag;
    zcoll_comm comm;
  };
  const Bad sends[] = {{"NULL comm", x, 4, MPI_FLOAT, 0, 0, nullptr},
                       {"count -1", x, -1, MPI_FLOAT, 0, 0, zc},
                       {"dest = size", x, 4, MPI_FLOAT, p, 0, zc},
                       {"dest -5", x, 4, MPI_FLOAT, -5, 0, zc},
                       {"dest MPI_ANY_SOURCE", x, 4, MPI_FLOAT, MPI_ANY_SOURCE, 0, zc},
                       {"tag -7", x, 4, MPI_FLOAT, 0, -7, zc},
                       {"tag MPI_ANY_TAG", x, 4, MPI_FLOAT, 0, MPI_ANY_TAG, zc},
                       {"tag MPI_TAG_UB + 1", x, 4, MPI_FLOAT, 0, tag_ub == 2147483647 ? -7 : tag_ub + 1, zc},
                       {"MPI_DATATYPE_NULL", x, 4, MPI_DATATYPE_NULL, 0, 0, zc},
                       {"NULL float buffer", nullptr, 4, MPI_FLOAT, 0, 0, zc}};
  for (const Bad& b : sends) {
    Ctx c("%s", b.what);
    zcoll_request rq = reinterpret_cast<zcoll_request>(&flag);
    EXPECT_RC(zcoll_send(b.buf, b.count, b.type, b.peer, b.tag, b.comm), ZCOLL_ERR_ARG);
    EXPECT_RC(zcoll_isend(b.buf, b.count, b.type, b.peer, b.tag, b.comm, &rq), ZCOLL_ERR_ARG);
    EXPECT(rq == ZCOLL_REQUEST_NULL, "zcoll_isend left *request set");
    rq = reinterpret_cast<zcoll_request>(&flag);
    if (b.peer != MPI_ANY_SOURCE && b.tag != MPI_ANY_TAG) {
      EXPECT_RC(zcoll_recv(const_cast<float*>(b.buf), b.count, b.type, b.peer, b.tag, b.comm, MPI_STATUS_IGNORE),
                ZCOLL_ERR_ARG);
      EXPECT_RC(zcoll_irecv(const_cast<float*>(b.buf), b.count, b.type, b.peer, b.tag, b.comm, &rq), ZCOLL_ERR_ARG);
      EXPECT(rq == ZCOLL_REQUEST_NULL, "zcoll_irecv left *request set");
    }
  }
  EXPECT_RC(zcoll_isend(x, 4, MPI_FLOAT, 0, 0, zc, nullptr), ZCOLL_ERR_ARG);
  EXPECT_RC(zcoll_irecv(x, 4, MPI_FLOAT, 0, 0, zc, nullptr), ZCOLL_ERR_ARG);
  EXPECT_RC(zcoll_wait(nullptr, MPI_STATUS_IGNORE), ZCOLL_ERR_ARG);
  zcoll_request none = ZCOLL_REQUEST_NULL, nones[3] = {ZCOLL_REQUEST_NULL, ZCOLL_REQUEST_NULL, ZCOLL_REQUEST_NULL};
  EXPECT_RC(zcoll_test(&none, nullptr, MPI_STATUS_IGNORE), ZCOLL_ERR_ARG);
  EXPECT_RC(zcoll_test(nullptr, &flag, MPI_STATUS_IGNORE), ZCOLL_ERR_ARG);
  EXPECT_RC(zcoll_waitall(-1, nones, MPI_STATUSES_IGNORE), ZCOLL_ERR_ARG);
  EXPECT_RC(zcoll_waitall(2, nullptr, MPI_STATUSES_IGNORE), ZCOLL_ERR_ARG);
  EXPECT_RC(zcoll_waitall(0, nullptr, MPI_STATUSES_IGNORE), ZCOLL_SUCCESS);
  MPI_Status st[3];
  std::memset(st, 0x5a, sizeof st);
  EXPECT_RC(zcoll_wait(&none, &st[0]), ZCOLL_SUCCESS);
  flag = 0;
  EXPECT_RC(zcoll_test(&none, &flag, &st[1]), ZCOLL_SUCCESS);
  EXPECT(flag == 1, "test on ZCOLL_REQUEST_NULL: flag %d", flag);
  for (int i = 0; i < 2; ++i) expect_status(st[i], MPI_FLOAT, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, MPI_SUCCESS);
  std::memset(st, 0x5a, sizeof st);
  EXPECT_RC(zcoll_waitall(3, nones, st), ZCOLL_SUCCESS);
  for (const MPI_Status& s : st) expect_status(s, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, MPI_SUCCESS);
  // Nothing was sent by the calls above: the next messages (the largest tag allowed) match.
  Ring<float> r{zc, 40000, 1e-2, false, /*compressed=*/1};
  r.tag = tag_ub;
  r.run();
  free_comm(zc);
}

// nomem: one rank's k-th allocation inside one float send or receive fails, for every k
// the call makes, on a fresh communicator each time (its staging pool empty) and with the
// failing rank taking turns; compressed f32 and f64 messages and a raw one, nonblocking
// and blocking. A failed send returns ZCOLL_ERR_NO_MEMORY, and the receive posted for it
// completes with that code (MPI_ERROR = MPI_ERR_OTHER, count 0, buffer untouched, the
// detail naming the sender) instead of waiting forever; a failed receive returns
// ZCOLL_ERR_NO_MEMORY having posted nothing, so the receive posted after it gets the
// message whole. Every other message arrives within the bound. A watchdog ends a hang.
// Returns how many calls failed (the allocations the failing rank's call makes).
template <class T>
long nomem_ring(size_t min_bytes, bool receiving, bool blocking, int failing) {
  constexpr int kN = 20000, kTag = 9;
  constexpr double kEb = 1e-2;
  const MPI_Datatype type = mpi_type<T>();
  long calls = 0;
  for (long k = 1;; ++k) {
    Ctx c("%s, min_bytes %zu, %s %s on rank %d fails at allocation %ld", type_name<T>(), min_bytes,
          blocking ? "blocking" : "nonblocking", receiving ? "receive" : "send", failing, k);
    Watchdog w("a failed point-to-point allocation", 20);
    const int salt = next_salt();
    const bool armed = g_rank == failing;
    zcoll_comm zc = make_comm(ZCOLL_EB_ABS, kEb, min_bytes);
    std::vector<T> out = message<T>(g_rank, salt, kN);
    const std::vector<T> want = message<T>(left(), salt, kN);
    RecvBuf in(kN * sizeof(T));
    bool thrown = false;
    // This rank's send or receive, with its k-th allocation failing where armed.
    auto armed_call = [&](bool mine, auto&& f) {
      if (!armed || !mine) return f();
      FailingCall fail(k);
      const int rc = f();
      thrown = g_thrown;
      return rc;
    };
    zcoll_request rq[2] = {ZCOLL_REQUEST_NULL, ZCOLL_REQUEST_NULL};
    MPI_Status st[2];
    std::memset(st, 0x5a, sizeof st);
    auto recv = [&] {
      return blocking ? zcoll_recv(in.data<T>(), kN, type, left(), kTag, zc, &st[0])
                      : zcoll_irecv(in.data<T>(), kN, type, left(), kTag, zc, &rq[0]);
    };
    auto send = [&] {
      return blocking ? zcoll_send(out.data(), kN, type, right(), kTag, zc)
                      : zcoll_isend(out.data(), kN, type, right(), kTag, zc, &rq[1]);
    };
    int recv_rc = ZCOLL_SUCCESS, send_rc = ZCOLL_SUCCESS;
    std::string detail;  // of the call that completed the receive
    bool consumed = false;  // a blocking receive failed after its message arrived
    auto do_recv = [&] {
      recv_rc = armed_call(receiving, recv);
      // zcoll_recv fails before its receive is posted (the empty status) or after the
      // message arrived (unpacking it); zcoll_irecv only before.
      consumed = armed && receiving && thrown && st[0].MPI_SOURCE == left();
      if (armed && receiving && thrown && !consumed) {
        EXPECT_RC(recv_rc, ZCOLL_ERR_NO_MEMORY);
        EXPECT(rq[0] == ZCOLL_REQUEST_NULL && in.untouched(0), "a failed receive posted or wrote");
        if (blocking) expect_status(st[0], type, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, MPI_ERR_OTHER);
        recv_rc = recv();  // the message is still there for it
      }
      detail = zcoll_error_detail();
    };
    auto do_send = [&] { send_rc = armed_call(!receiving, send); };
    if (blocking && g_rank == 0) {  // as in Ring: no cycle of blocking calls
      do_send();
      do_recv();
    } else {
      do_recv();
      do_send();
    }
    int wait_rc = ZCOLL_SUCCESS;
    if (!blocking) {
      wait_rc = zcoll_waitall(2, rq, st);
      detail = zcoll_error_detail();
    }
    const int done_rc = blocking ? recv_rc : wait_rc;
    int any = thrown;
    MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    const bool send_failed = any && !receiving;
    EXPECT_RC(send_rc, send_failed && armed ? ZCOLL_ERR_NO_MEMORY : ZCOLL_SUCCESS);
    if (send_failed && left() == failing) {
      EXPECT(detail.find("failed to send") != std::string::npos, "detail \"%s\"", detail.c_str());
      EXPECT_RC(done_rc, ZCOLL_ERR_NO_MEMORY);
      expect_status(st[0], type, left(), kTag, 0, MPI_ERR_OTHER);
      EXPECT(in.untouched(0), "the receive of a failed send wrote to the buffer");
    } else if (consumed) {
      EXPECT_RC(done_rc, ZCOLL_ERR_NO_MEMORY);
      expect_status(st[0], type, left(), kTag, 0, MPI_ERR_OTHER);
    } else {
      EXPECT_RC(done_rc, ZCOLL_SUCCESS);
      expect_status(st[0], type, left(), kTag, kN, MPI_SUCCESS);
      expect_received(in, want, kEb);
    }
    free_comm(zc);
    if (!any) return calls;
    ++calls;
  }
}

// The failing rank: 0 and the last (in the blocking ring rank 0 sends first, the others
// receive first, so their staging pools, and the allocations, differ).
void section_nomem() {
  for (bool blocking : {false, true})
    for (bool receiving : {false, true})
      for (int failing : {0, g_size - 1}) {
        const long calls = nomem_ring<float>(ZCOLL_DEFAULT_MIN_BYTES, receiving, blocking, failing) +
                           nomem_ring<double>(ZCOLL_DEFAULT_MIN_BYTES, receiving, blocking, failing) +
                           nomem_ring<float>(SIZE_MAX, receiving, blocking, failing);  // raw
        EXPECT(calls >= 3, "%ld calls failed on rank %d: the allocations were not reached", calls, failing);
      }
}

const Section kSections[] = {{"bound", section_bound},       {"passthrough", section_passthrough},
                             {"match", section_match},       {"order", section_order},
                             {"truncate", section_truncate}, {"corrupt", section_corrupt},
                             {"zero", section_zero},         {"many", section_many},
                             {"errors", section_errors},     {"nomem", section_nomem}};

}  // namespace

int main(int argc, char** argv) { return sections_main(argc, argv, kSections, load_field); }
