// How segments travel. A message is the fzl streams of its segments back to back (each
// stream says its own length), sent in pieces of at most kPiece bytes so that counts fit
// MPI's int; a piece shorter than kPiece ends the message. A first piece of exactly 4
// bytes is an error notice (an int32 zcoll error code): no stream is that short.
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <deque>

#include "codec/stream.h"
#include "coll/coll.h"

namespace zcoll::coll {
namespace {

constexpr size_t kPiece = size_t{1} << 30;

class MessageLink : public Link {
 public:
  explicit MessageLink(const LinkSetup& s) : s_(s) {}
  void wait_sends() override {
    if (!reqs_.empty()) {
      if (MPI_Waitall(static_cast<int>(reqs_.size()), reqs_.data(), MPI_STATUSES_IGNORE) != MPI_SUCCESS)
        fail(ZCOLL_ERR_MPI);
      reqs_.clear();
    }
    outgoing_.clear();
  }
  int status() const override { return error_; }
  size_t wire() const { return wire_; }
  size_t raw() const { return raw_; }
  double hop_compress_seconds() const { return t_hop_comp_; }
  double hop_decompress_seconds() const { return t_hop_decomp_; }

 protected:
  void fail(int code) {
    if (!error_) error_ = code;
  }
  MPI_Comm comm() const { return s_.comm->comm; }

  void post(const uint8_t* data, size_t bytes, int peer) {
    wire_ += bytes;
    size_t sent = 0;
    do {
      const size_t piece = std::min(kPiece, bytes - sent);
      MPI_Request r;
      if (MPI_Isend(data + sent, static_cast<int>(piece), MPI_BYTE, peer, kTag, comm(), &r) != MPI_SUCCESS) {
        fail(ZCOLL_ERR_MPI);
        return;
      }
      reqs_.push_back(r);
      sent += piece;
      if (piece < kPiece) break;
    } while (true);
  }

  void post_error(int peer) {
    outgoing_.emplace_back(sizeof(int32_t));
    const int32_t code = error_;
    std::memcpy(outgoing_.back().data(), &code, sizeof code);
    MPI_Request r;
    if (MPI_Isend(outgoing_.back().data(), sizeof code, MPI_BYTE, peer, kTag, comm(), &r) == MPI_SUCCESS)
      reqs_.push_back(r);
  }

  // Receives one message from peer; `place(bytes)` returns where its next `bytes` go.
  // Returns the total length, or -1 after an error notice or an MPI failure.
  template <class Place>
  long long receive(int peer, Place&& place) {
    size_t total = 0;
    for (bool first = true;; first = false) {
      MPI_Status st;
      int count = 0;
      if (MPI_Probe(peer, kTag, comm(), &st) != MPI_SUCCESS || MPI_Get_count(&st, MPI_BYTE, &count) != MPI_SUCCESS ||
          count < 0) {
        fail(ZCOLL_ERR_MPI);
        return -1;
      }
      if (first && count == sizeof(int32_t)) {
        int32_t code = ZCOLL_ERR_INTERNAL;
        MPI_Recv(&code, sizeof code, MPI_BYTE, peer, kTag, comm(), MPI_STATUS_IGNORE);
        fail(code ? code : ZCOLL_ERR_INTERNAL);
        return -1;
      }
      uint8_t* dst = place(static_cast<size_t>(count));
      if (MPI_Recv(dst, count, MPI_BYTE, peer, kTag, comm(), MPI_STATUS_IGNORE) != MPI_SUCCESS) {
        fail(ZCOLL_ERR_MPI);
        return -1;
      }
      total += static_cast<size_t>(count);
      if (static_cast<size_t>(count) < kPiece) return static_cast<long long>(total);
    }
  }

  // Splits bytes [p, p + len) into the streams of segments ids[0..n); calls
  // take(id, offset_in_p, size) for each.
  template <class Take>
  void split(const uint8_t* p, size_t len, const int* ids, int n, Take&& take) {
    size_t pos = 0;
    for (int i = 0; i < n; ++i) {
      size_t sl = 0;
      if (codec::stream_length(p + pos, len - pos, &sl) != ZCOLL_SUCCESS) {
        fail(ZCOLL_ERR_CORRUPT);
        return;
      }
      take(ids[i], pos, sl);
      pos += sl;
    }
    if (pos != len) fail(ZCOLL_ERR_CORRUPT);
  }

  // Counts the raw bytes of the segments in a message about to be sent.
  void count_raw(const int* ids, int n) {
    for (int i = 0; i < n; ++i) raw_ += (*s_.segs)[ids[i]].count * codec::element_size(s_.dtype);
  }

  LinkSetup s_;
  std::vector<MPI_Request> reqs_;
  std::deque<std::vector<uint8_t>> outgoing_;  // buffers of sends in flight
  int error_ = ZCOLL_SUCCESS;
  size_t wire_ = 0, raw_ = 0;
  double t_hop_comp_ = 0, t_hop_decomp_ = 0;  // codec time inside send/recv
};

// Compress once, forward bytes, decompress once at the end.
class CompressedLink final : public MessageLink {
 public:
  CompressedLink(const LinkSetup& s, size_t arena_bytes) : MessageLink(s) {
    zcoll_comm_s& c = *s.comm;
    if (c.arena_cap < arena_bytes) {
      c.arena.reset(new uint8_t[arena_bytes]);
      c.arena_cap = arena_bytes;
    }
    arena_ = c.arena.get();
    cap_ = arena_bytes;
  }

  void send(const int* ids, int n, int peer) override {
    if (error_) return post_error(peer);
    std::vector<Segment>& segs = *s_.segs;
    // Deferred segments are compressed now, just before their first send (a scatter's
    // root: each child's blocks while the previous child's are on the wire, instead of
    // all of them before the first send).
    std::vector<int> fresh;
    for (int i = 0; i < n; ++i)
      if (!segs[ids[i]].have && deferred_[ids[i]]) fresh.push_back(ids[i]);
    if (!fresh.empty()) {
      const double t0 = MPI_Wtime();
      compress(fresh);
      t_hop_comp_ += MPI_Wtime() - t0;
      if (error_) return post_error(peer);
    }
    size_t total = 0;
    bool contiguous = true;
    for (int i = 0; i < n; ++i) {
      const Segment& sg = segs[ids[i]];
      if (!sg.have) {
        fail(ZCOLL_ERR_INTERNAL);
        return post_error(peer);
      }
      if (i && sg.off != segs[ids[i - 1]].off + segs[ids[i - 1]].size) contiguous = false;
      total += sg.size;
    }
    count_raw(ids, n);
    if (contiguous) return post(arena_ + segs[ids[0]].off, total, peer);
    outgoing_.emplace_back(total);
    uint8_t* q = outgoing_.back().data();
    for (int i = 0; i < n; ++i) {
      std::memcpy(q, arena_ + segs[ids[i]].off, segs[ids[i]].size);
      q += segs[ids[i]].size;
    }
    post(outgoing_.back().data(), total, peer);
  }

  void recv(const int* ids, int n, int peer) override {
    const size_t start = used_;
    std::vector<uint8_t> overflow;  // only for a message larger than any valid one
    const long long len = receive(peer, [&](size_t bytes) -> uint8_t* {
      if (overflow.empty() && cap_ - used_ >= bytes) {
        uint8_t* d = arena_ + used_;
        used_ += bytes;
        return d;
      }
      fail(ZCOLL_ERR_CORRUPT);
      overflow.resize(bytes);
      return overflow.data();
    });
    if (len < 0 || error_) return;
    std::vector<Segment>& segs = *s_.segs;
    split(arena_ + start, static_cast<size_t>(len), ids, n, [&](int id, size_t off, size_t size) {
      segs[id].off = start + off;
      segs[id].size = size;
      segs[id].have = true;
    });
  }

  void defer(const std::vector<int>& ids) {
    for (int id : ids) deferred_[id] = true;
  }

  int compress(const std::vector<int>& ids) {
    std::vector<Segment>& segs = *s_.segs;
    for (int id : ids) {
      if (error_) break;
      Segment& sg = segs[id];
      size_t size = 0;
      const int rc = codec::compress(&s_.params, s_.dtype, sg.src, sg.count, arena_ + used_, cap_ - used_, &size, nullptr);
      if (rc) {
        fail(rc);
        break;
      }
      sg.off = used_;
      sg.size = size;
      sg.have = true;
      used_ += size;
    }
    return error_;
  }

  double stream_eb() const {
    for (const Segment& sg : *s_.segs)
      if (sg.have && sg.size >= codec::kHeaderBytes) {
        double eb;
        if (codec::stream_eb(arena_ + sg.off, sg.size, &eb) == ZCOLL_SUCCESS) return eb;  // header checked by stream_length
      }
    return 0;
  }

  int decompress() {
    if (error_) return error_;
    std::vector<Segment>& segs = *s_.segs;
    std::vector<int> todo;
    for (size_t i = 0; i < segs.size(); ++i)
      if (segs[i].dst && !segs[i].src && segs[i].count) {
        if (!segs[i].have) return ZCOLL_ERR_INTERNAL;
        todo.push_back(static_cast<int>(i));
      }
    const int threads = codec::thread_count(s_.params.threads, 1 << 30);
    int err = ZCOLL_SUCCESS;
    // Many segments: one thread each. Few: each one spread over the threads by chunk.
    const bool per_segment = static_cast<int>(todo.size()) >= threads;
#pragma omp parallel for schedule(dynamic, 1) num_threads(per_segment ? threads : 1) reduction(max : err)
    for (size_t k = 0; k < todo.size(); ++k) {
      const Segment& sg = segs[todo[k]];
      const int rc = codec::decompress(arena_ + sg.off, sg.size, s_.dtype, sg.dst, sg.count, per_segment ? 1 : threads);
      if (rc) err = std::max(err, rc);
    }
    if (err) fail(err);
    return error_;
  }

 private:
  uint8_t* arena_ = nullptr;
  size_t cap_ = 0, used_ = 0;
  std::vector<bool> deferred_ = std::vector<bool>(s_.segs->size(), false);  // by segment; see defer()
};

// The baseline: every hop compresses what it sends and decompresses what it receives,
// so values picked up along a path are compressed again at every hop.
class CprP2pLink final : public MessageLink {
 public:
  explicit CprP2pLink(const LinkSetup& s) : MessageLink(s), relay_(s.segs->size()), received_(s.segs->size(), false) {}

  void send(const int* ids, int n, int peer) override {
    if (error_) return post_error(peer);
    std::vector<Segment>& segs = *s_.segs;
    size_t cap = 0;
    for (int i = 0; i < n; ++i) cap += zcoll_codec_bound(segs[ids[i]].count, s_.dtype);
    outgoing_.emplace_back(cap);
    std::vector<uint8_t>& buf = outgoing_.back();
    size_t used = 0;
    const double t0 = MPI_Wtime();
    for (int i = 0; i < n; ++i) {
      const Segment& sg = segs[ids[i]];
      size_t size = 0;
      const int rc = codec::compress(&s_.params, s_.dtype, values(ids[i]), sg.count, buf.data() + used, cap - used, &size,
                                   nullptr);
      if (rc) {
        fail(rc);
        outgoing_.pop_back();
        return post_error(peer);
      }
      used += size;
    }
    t_hop_comp_ += MPI_Wtime() - t0;
    count_raw(ids, n);
    post(buf.data(), used, peer);
  }

  void recv(const int* ids, int n, int peer) override {
    const long long len = receive(peer, [&](size_t bytes) -> uint8_t* {
      const size_t at = inbox_.size();
      inbox_.resize(at + bytes);
      return inbox_.data() + at;
    });
    if (len >= 0 && !error_) {
      const double t0 = MPI_Wtime();
      std::vector<Segment>& segs = *s_.segs;
      split(inbox_.data(), inbox_.size(), ids, n, [&](int id, size_t off, size_t size) {
        Segment& sg = segs[id];
        void* out = sg.dst;
        if (!out) {
          relay_[id].resize(sg.count * codec::element_size(s_.dtype));
          out = relay_[id].data();
        }
        const int rc = codec::decompress(inbox_.data() + off, size, s_.dtype, out, sg.count, s_.params.threads);
        if (rc) fail(rc);
        received_[id] = true;
      });
      t_hop_decomp_ += MPI_Wtime() - t0;
    }
    inbox_.clear();
  }

 private:
  // Where segment id's values are on this rank now.
  const void* values(int id) const {
    const Segment& sg = (*s_.segs)[id];
    if (sg.src) return sg.src;
    if (received_[id]) return sg.dst ? sg.dst : static_cast<const void*>(relay_[id].data());
    return nullptr;
  }
  std::vector<std::vector<uint8_t>> relay_;  // values of segments only passed through
  std::vector<bool> received_;
  std::vector<uint8_t> inbox_;
};

}  // namespace

std::unique_ptr<Link> make_compressed_link(const LinkSetup& s, size_t arena_bytes) {
  return std::make_unique<CompressedLink>(s, arena_bytes);
}
std::unique_ptr<Link> make_cprp2p_link(const LinkSetup& s) { return std::make_unique<CprP2pLink>(s); }

int compress_owned(Link& link, const std::vector<int>& ids) {
  if (auto* c = dynamic_cast<CompressedLink*>(&link)) return c->compress(ids);
  return link.status();
}
int compress_at_first_send(Link& link, const std::vector<int>& ids) {
  if (auto* c = dynamic_cast<CompressedLink*>(&link)) c->defer(ids);
  return link.status();
}
int decompress_received(Link& link) {
  if (auto* c = dynamic_cast<CompressedLink*>(&link)) return c->decompress();
  return link.status();
}
size_t wire_bytes(const Link& link) { return static_cast<const MessageLink&>(link).wire(); }
double received_eb(const Link& link) {
  if (auto* c = dynamic_cast<const CompressedLink*>(&link)) return c->stream_eb();
  return 0;
}
size_t raw_bytes(const Link& link) { return static_cast<const MessageLink&>(link).raw(); }
double hop_compress_seconds(const Link& link) { return static_cast<const MessageLink&>(link).hop_compress_seconds(); }
double hop_decompress_seconds(const Link& link) {
  return static_cast<const MessageLink&>(link).hop_decompress_seconds();
}

}  // namespace zcoll::coll
