// The transport (transport.h): layout of blocks and pieces, the operations on one piece,
// the messages that carry them, and the block-level exchange of the trees and Bruck.
#include "coll/transport.h"

#include <algorithm>
#include <cstring>

namespace zcoll::coll {

// ------------------------------------------------------------------ layout

bool Transport::plan(double eb, const size_t* counts, size_t nb, Layout layout, size_t min_pieces) {
  params = c.cfg.codec;
  params.eb_mode = ZCOLL_EB_ABS;
  params.eb = eb;
  params.ndims = 0;
  const size_t chunk = params.chunk_len ? params.chunk_len : ZCOLL_DEFAULT_CHUNK_LEN;
  // The baseline sends whole blocks (capped so that a message's byte count fits MPI's
  // int); the pipelined paths, pieces of a few chunks.
  const size_t whole_cap = size_t{1} << 28;
  // f(block, offset in the block, values) for each piece, block by block.
  auto each_piece = [&](auto&& f) {
    for (size_t b = 0; b < nb; ++b) {
      const size_t len = cprp2p ? std::min(std::max<size_t>(counts[b], 1), whole_cap)
                                : schedule::piece_values(counts[b], chunk, min_pieces);
      for (size_t e = 0; e < counts[b]; e += len) f(b, e, std::min(len, counts[b] - e));
    }
  };
  // The regions' sizes first, then the tables, which fill the room shared_arena() agreed.
  size_t npieces = 0, block_bytes = 0, last_block = 0;
  region_bytes = max_block_bytes = 0;
  each_piece([&](size_t b, size_t, size_t n) {
    if (b != last_block) block_bytes = 0;
    last_block = b;
    const size_t cap = zcoll_codec_bound(n, dtype);
    region_bytes += cap;
    block_bytes += cap;
    max_block_bytes = std::max(max_block_bytes, block_bytes);
    ++npieces;
  });
  // The baseline recompresses forwarded pieces into the send sets (ring allgather).
  if (cprp2p) layout.send_sets = std::max(layout.send_sets, 2);
  // The ring folds this rank's input straight into the partials it receives, so only
  // recursive doubling keeps a compressed copy of it (own).
  const size_t set_bytes = layout.whole_sets ? region_bytes : max_block_bytes;
  const size_t own_bytes = layout.own ? region_bytes : 0;
  const size_t stored_bytes = layout.stored ? region_bytes : 0;
  const size_t sets = static_cast<size_t>(layout.recv_sets + layout.send_sets);
  // The same sizes on every rank (the blocks and the layout are agreed).
  int rc = ZCOLL_SUCCESS;
  uint8_t* a = c.shared_arena(own_bytes + stored_bytes + sets * set_bytes, &rc, std::max<size_t>(npieces, 1));
  if (rc) {
    fail(rc);
    return false;
  }
  block_begin.assign(nb + 1, 0);
  first_piece.assign(nb + 1, 0);
  block_src.assign(nb, nullptr);
  block_dst.assign(nb, nullptr);
  piece_begin.clear();
  piece_count.clear();
  piece_block.clear();
  slot.clear();
  for (size_t b = 0; b < nb; ++b) block_begin[b + 1] = block_begin[b] + counts[b];
  size_t off = 0, next_block = 0;
  each_piece([&](size_t b, size_t e, size_t n) {
    while (next_block <= b) first_piece[next_block++] = piece_begin.size();  // empty blocks: no pieces
    piece_begin.push_back(block_begin[b] + e);
    piece_count.push_back(n);
    piece_block.push_back(static_cast<int>(b));
    slot.push_back(off);
    off += piece_cap(piece_count.size() - 1);
  });
  while (next_block <= nb) first_piece[next_block++] = npieces;
  stored_len.assign(npieces, 0);
  unpacked.assign(npieces, 0);
  place_regions(a, layout, own_bytes, stored_bytes, set_bytes);
  return true;
}

void Transport::place_regions(uint8_t* a, const Layout& layout, size_t own_bytes, size_t stored_bytes,
                              size_t set_bytes) {
  own = layout.own ? a : nullptr;
  stored = layout.stored ? a + own_bytes : nullptr;
  uint8_t* next = a + own_bytes + stored_bytes;
  for (int k = 0; k < 2; ++k) {
    recv[k] = k < layout.recv_sets ? next + k * set_bytes : nullptr;
    send[k] = k < layout.send_sets ? next + (layout.recv_sets + k) * set_bytes : nullptr;
  }
}

int Transport::finish() {
  int worst = err;
  if (MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_INT, MPI_MAX, c.comm) != MPI_SUCCESS) worst = ZCOLL_ERR_MPI;
  c.last = zcoll_stats{};
  c.last.compressed = 1;
  c.last.algorithm = algorithm_;
  c.last.eb_abs = params.eb;
  c.last.raw_bytes = raw;
  c.last.wire_bytes = wire;
  c.last.t_compress = t_codec;
  c.last.t_decompress = t_decomp;
  c.last.t_reduce = t_reduce;
  c.last.t_comm = now() - c.call_start - t_codec - t_decomp - t_reduce;
  return worst;
}

// ------------------------------------------------------------ piece operations

size_t Transport::compress_values(const void* values, size_t i, uint8_t* dst) {
  size_t len = 0;
  if (err || timed(t_codec, [&] {
        return codec::compress(&params, dtype, values, piece_count[i], dst, piece_cap(i), &len, nullptr);
      }))
    return 0;
  return len;
}

size_t Transport::combine(const uint8_t* a, size_t alen, const uint8_t* b, size_t blen, size_t i, uint8_t* out) {
  size_t len = 0;
  if (err || timed(t_reduce, [&] { return codec::combine(op, a, alen, b, blen, out, piece_cap(i), &len, params.threads); }))
    return 0;
  return len;
}

size_t Transport::fold(const uint8_t* partial, size_t len, size_t i, uint8_t* out) {
  size_t olen = 0;
  if (err || timed(t_reduce, [&] {
        return codec::combine_values(op, piece_src(i), piece_count[i], dtype, partial, len, out, piece_cap(i), &olen,
                                     params.threads);
      }))
    return 0;
  return olen;
}

namespace {
template <class T>
void apply(int op, T* acc, const void* values, size_t n) {
  const auto* x = static_cast<const uint8_t*>(values);
  for (size_t k = 0; k < n; ++k) {
    T v;
    std::memcpy(&v, x + k * sizeof(T), sizeof(T));
    T& a = acc[k];
    if (op == codec::kCombineSum) a = codec::exact_sum(a, v);
    else if (a != a || v != v) a = a != a ? a : v;  // NaN wins, as on the homomorphic path
    else if (op == codec::kCombineMax) a = v > a ? v : a;
    else a = v < a ? v : a;
  }
}
}  // namespace

size_t Transport::doc_step(const uint8_t* partial, size_t len, size_t i, uint8_t* out) {
  if (err) return 0;
  const double t = now();
  const size_t n = piece_count[i];
  // Always through the scratch: with MPI_IN_PLACE, the dst can be this very input piece.
  if (!grow(w.values, n * es)) return 0;
  void* acc = w.values.data();
  int rc = no_throw([&] { return codec::decompress(partial, len, dtype, acc, n, params.threads); });
  const double t_op = now();
  t_decomp += t_op - t;
  if (!rc) {
    if (dtype == ZCOLL_FLOAT32) apply(op, static_cast<float*>(acc), piece_src(i), n);
    else apply(op, static_cast<double*>(acc), piece_src(i), n);
  }
  const double t_applied = now();
  t_reduce += t_applied - t_op;
  size_t olen = 0;
  if (!rc && out) rc = no_throw([&] { return codec::compress(&params, dtype, acc, n, out, piece_cap(i), &olen, nullptr); });
  if (!rc && !out && n) std::memcpy(piece_dst(i), acc, n * es);
  t_codec += now() - t_applied;
  if (rc) fail(rc);
  return rc ? 0 : (out ? olen : 1);
}

void Transport::decompress(const uint8_t* s, size_t len, size_t i, void* to) {
  if (!err)
    timed(t_decomp, [&] { return codec::decompress(s, len, dtype, to ? to : piece_dst(i), piece_count[i], params.threads); });
}

void Transport::unpack(size_t i) {
  if (unpacked[i] || !kept(i)) return;
  decompress(stored_slot(i), stored_len[i], i);
  unpacked[i] = true;
}

// ------------------------------------------------------------------ messages

void Transport::isend(const uint8_t* p, size_t len, int peer, Requests& reqs) {
  MPI_Request r;
  int rc;
  if (err || len == 0) {
    if (!err) fail(ZCOLL_ERR_INTERNAL);  // a piece without bytes: never valid
    rc = MPI_Isend(&notice, sizeof notice, MPI_BYTE, peer, kTag, c.comm, &r);
  } else {
    wire += len;
    rc = MPI_Isend(p, static_cast<int>(len), MPI_BYTE, peer, kTag, c.comm, &r);
  }
  if (rc != MPI_SUCCESS) {
    fail(ZCOLL_ERR_MPI);
    return;
  }
  reqs.req.push_back(r);
  reqs.buf.push_back(nullptr);
}

void Transport::irecv(uint8_t* p, size_t cap, int peer, Requests& reqs) {
  MPI_Request r = MPI_REQUEST_NULL;
  if (MPI_Irecv(p, static_cast<int>(cap), MPI_BYTE, peer, kTag, c.comm, &r) != MPI_SUCCESS) fail(ZCOLL_ERR_MPI);
  reqs.req.push_back(r);
  reqs.buf.push_back(p);
}

// The length of a completed receive; 0 after an error notice, whose code becomes ours.
size_t Transport::received(const MPI_Status& st, const uint8_t* buf) {
  int count = 0;
  if (MPI_Get_count(&st, MPI_BYTE, &count) != MPI_SUCCESS || count < 0) {
    fail(ZCOLL_ERR_MPI);
    return 0;
  }
  if (count == sizeof(int32_t)) {
    int32_t code = ZCOLL_ERR_INTERNAL;
    std::memcpy(&code, buf, sizeof code);
    fail(code > 0 ? code : ZCOLL_ERR_INTERNAL);
    return 0;
  }
  return static_cast<size_t>(count);
}

size_t Transport::wait_recv(Requests& reqs, size_t j) { return wait_one(reqs.req[j], reqs.buf[j]); }

size_t Transport::wait_one(MPI_Request& r, const uint8_t* buf) {
  MPI_Status st;
  if (r == MPI_REQUEST_NULL) return 0;  // its post failed (recorded)
  if (MPI_Wait(&r, &st) != MPI_SUCCESS) {
    fail(ZCOLL_ERR_MPI);
    return 0;
  }
  return received(st, buf);
}

bool Transport::test_recv(Requests& reqs, size_t j, size_t* len) {
  MPI_Status st;
  int done = 0;
  *len = 0;
  if (reqs.req[j] == MPI_REQUEST_NULL) return true;  // its post failed, or it completed
  if (MPI_Test(&reqs.req[j], &done, &st) != MPI_SUCCESS) {
    fail(ZCOLL_ERR_MPI);
    return true;
  }
  if (done) *len = received(st, reqs.buf[j]);
  return done != 0;
}

void Transport::wait_all(Requests& reqs) {
  if (!reqs.req.empty() && MPI_Waitall(static_cast<int>(reqs.req.size()), reqs.req.data(), MPI_STATUSES_IGNORE) != MPI_SUCCESS)
    fail(ZCOLL_ERR_MPI);
  reqs.clear();
}

void Transport::poll(Requests& sends) {
  int done = 0;
  if (!sends.req.empty()) MPI_Testall(static_cast<int>(sends.req.size()), sends.req.data(), &done, MPI_STATUSES_IGNORE);
}

// ---------------------------------------------------- block-level exchange

void Transport::ready(size_t i) {
  if (w.pending[i] != MPI_REQUEST_NULL) {  // completed even after an error: no receive is left posted
    stored_len[i] = wait_one(w.pending[i], stored_slot(i));
    w.pending[i] = MPI_REQUEST_NULL;
    if (cprp2p && !err) {  // the baseline decompresses every piece on arrival
      void* to = piece_dst(i);
      if (!to && grow(relay_[i], piece_count[i] * es)) to = relay_[i].data();
      if (to) decompress(stored_slot(i), stored_len[i], i, to);
      unpacked[i] = true;
    }
    return;
  }
  if (stored_len[i] || err || (cprp2p && piece_src(i))) return;  // CPRP2P compresses at each send
  if (piece_src(i)) stored_len[i] = compress_src(i, stored_slot(i));
  else fail(ZCOLL_ERR_INTERNAL);  // neither received nor owned: a schedule bug
}

void Transport::send_piece(size_t i, int peer, Requests& sends) {
  if (!cprp2p || err) return send_stream(stored_slot(i), stored_len[i], i, peer, sends);
  uint8_t* s = nullptr;
  try {
    s = outgoing_.emplace_back(piece_cap(i)).data();
  } catch (const std::bad_alloc&) {
    fail(ZCOLL_ERR_NO_MEMORY);
  }
  send_stream(s, s ? compress_values(values_of(i), i, s) : 0, i, peer, sends);
}

bool Transport::grow(std::vector<uint8_t>& v, size_t n) {
  try {
    if (v.size() < n) v.resize(n);
    return true;
  } catch (const std::bad_alloc&) {
    fail(ZCOLL_ERR_NO_MEMORY);
    return false;
  }
}

void Transport::post_block_receives(const Transfers& recvs) {
  const int m = static_cast<int>(nblocks());
  std::vector<MPI_Request>& pending = w.pending;
  for (const Transfer& t : recvs)
    for (int k = 0; k < t.blocks.count; ++k) {
      const int b = t.blocks.at(k, m);
      for (size_t i = first_piece[b]; i < first_piece[b + 1]; ++i) {
        if (MPI_Irecv(stored_slot(i), static_cast<int>(piece_cap(i)), MPI_BYTE, t.peer, kTag, c.comm, &pending[i]) !=
            MPI_SUCCESS) {
          pending[i] = MPI_REQUEST_NULL;
          fail(ZCOLL_ERR_MPI);
        }
        stored_len[i] = 0;
      }
    }
}

// Each piece goes to every peer that wants it as soon as it is ready, before this rank
// spends time unpacking it.
void Transport::send_blocks(const Transfers& sends, Requests& out) {
  const int m = static_cast<int>(nblocks());
  std::vector<uint8_t>& sent = w.sent;
  sent.assign(piece_begin.size(), 0);
  for (const Transfer& t : sends)
    for (int k = 0; k < t.blocks.count; ++k) {
      const int b = t.blocks.at(k, m);
      for (size_t i = first_piece[b]; i < first_piece[b + 1]; ++i) {
        if (sent[i]) continue;
        sent[i] = 1;
        ready(i);
        for (const Transfer& u : sends)
          if (u.blocks.has(b, m)) send_piece(i, u.peer, out);
        poll(out);
        unpack(i);
      }
    }
}

void Transport::exchange(const Transfers& recvs, const Transfers& sends) {
  const size_t n = piece_begin.size();
  std::vector<MPI_Request>& pending = w.pending;
  pending.assign(n, MPI_REQUEST_NULL);
  if (cprp2p) {
    try {
      relay_.resize(n);
    } catch (const std::bad_alloc&) {
      fail(ZCOLL_ERR_NO_MEMORY);  // ready() then decompresses nothing; notices go out
    }
  }
  post_block_receives(recvs);
  Requests& out = w.sets[Workspace::kSets - 1];
  out.clear();
  send_blocks(sends, out);
  for (size_t i = 0; i < n; ++i)
    if (pending[i] != MPI_REQUEST_NULL) {
      ready(i);
      unpack(i);
    }
  wait_all(out);
  outgoing_.clear();
}

}  // namespace zcoll::coll
