// The collectives' schedules (src/coll/schedule.h) without MPI: every rank of each
// schedule is simulated step by step, checking that each send meets the matching
// receive, that a rank only sends what it holds, and that every rank ends with what the
// collective promises. Rank counts 1..40 cover powers of two and the odd shapes between.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "coll/schedule.h"

namespace s = zcoll::coll::schedule;

namespace {

constexpr int kMaxRanks = 40;

// The blocks of a range, in order, modulo m; a range must never wrap onto itself.
std::vector<int> blocks_of(const s::BlockRange& r, int m) {
  EXPECT_LE(r.count, m);
  std::vector<int> ids;
  for (int i = 0; i < r.count; ++i) {
    ids.push_back(r.at(i, m));
    EXPECT_TRUE(r.has(ids.back(), m));
  }
  int inside = 0;  // has() holds for these blocks only (the block exchange picks its peers by it)
  for (int b = 0; b < m; ++b) inside += r.has(b, m);
  EXPECT_EQ(inside, r.count);
  return ids;
}
std::vector<int> children(int v, int p) {
  std::vector<int> kids;
  s::for_each_binomial_child(v, p, [&](int kid) { kids.push_back(kid); });
  return kids;
}

// Pieces are whole chunks (but a block's last) and at most kPieceValues values (or one chunk
// where a chunk is longer); asked for min_pieces, a block of that many chunks or more has
// that many pieces at least (but not many more), and one of fewer has one piece per chunk.
TEST(Schedule, PiecesAreWholeChunksAndAsManyAsAsked) {
  const size_t chunks[] = {1, 3, 1024, 2048, 16384, 65536, 100000};
  for (const size_t min_pieces : {size_t{0}, size_t{1}, size_t{2}, size_t{3}}) {
    const size_t k = std::max<size_t>(min_pieces, 1);
    for (const size_t chunk : chunks) {
      const size_t cap = std::max(s::kPieceValues / chunk, size_t{1}) * chunk;
      const std::vector<size_t> blocks = {1, chunk, chunk + 1, 2 * chunk, 3 * chunk, 2 * chunk + 7, cap, cap + 1,
                                          2 * cap, 2 * cap + 1, 9 * cap + chunk / 2 + 1, 16 * s::kPieceValues};
      for (const size_t block : blocks) {
        const size_t len = s::piece_values(block, chunk, min_pieces);
        ASSERT_EQ(len % chunk, 0u) << "block " << block << " chunk " << chunk;
        EXPECT_LE(len, cap) << "block " << block << " chunk " << chunk;
        const size_t pieces = (block + len - 1) / len, block_chunks = (block + chunk - 1) / chunk;
        const std::string at = "block " + std::to_string(block) + " chunk " + std::to_string(chunk) +
                               " min_pieces " + std::to_string(min_pieces);
        // As many as asked where the block has the chunks; one piece's worth otherwise.
        EXPECT_GE(pieces, std::min(k, block_chunks)) << at;
        EXPECT_GE(pieces, (block + cap - 1) / cap) << at;
        // Not many more: whole chunks cost at most k - 1 extra pieces; with none asked, the
        // fewest pieces of the cap.
        EXPECT_LE(pieces, std::max((block + cap - 1) / cap, 2 * k - 1)) << at;
        if (k == 1) {
          EXPECT_EQ(pieces, (block + cap - 1) / cap) << at;
        }
      }
    }
  }
  // The cases the transport meets: a 64-node ring step of a 32 MiB f64 allreduce (one
  // piece's length) goes in two; the same block of a bcast stays whole; 2 ranks' 64 MiB f64
  // blocks stay at 4-chunk pieces either way.
  EXPECT_EQ(s::piece_values(65536, 16384, 2), 32768u);
  EXPECT_EQ(s::piece_values(65536, 1024, 2), 32768u);
  EXPECT_EQ(s::piece_values(65536, 16384), 65536u);
  EXPECT_EQ(s::piece_values(size_t{4} << 20, 16384, 2), 65536u);
  EXPECT_EQ(s::piece_values(16384, 16384, 2), 16384u);
}

TEST(Schedule, RingAllgatherDeliversEveryBlockOnce) {
  for (int p = 1; p <= kMaxRanks; ++p) {
    std::vector<std::set<int>> held(p);
    for (int r = 0; r < p; ++r) held[r].insert(r);
    for (int k = 0; k < p - 1; ++k) {
      std::vector<std::set<int>> next = held;
      for (int r = 0; r < p; ++r) {
        const int right = s::ring_right(r, p), sent = s::ring_allgather_sent(r, p, k);
        ASSERT_TRUE(held[r].count(sent)) << "p " << p << " step " << k << ": rank " << r << " sends a block it lacks";
        EXPECT_EQ(s::ring_left(right, p), r);
        EXPECT_EQ(s::ring_allgather_received(right, p, k), sent) << "p " << p << " step " << k;
        EXPECT_FALSE(held[right].count(sent)) << "p " << p << ": block " << sent << " reaches rank " << right << " twice";
        next[right].insert(sent);
      }
      held.swap(next);
    }
    for (int r = 0; r < p; ++r) EXPECT_EQ(static_cast<int>(held[r].size()), p) << "p " << p << " rank " << r;
  }
}

TEST(Schedule, RingReduceScatterSumsEveryInputOnce) {
  for (int p = 2; p <= kMaxRanks; ++p) {
    // partial[r][b]: the ranks whose input is in rank r's partial of block b.
    std::vector<std::vector<std::set<int>>> partial(p, std::vector<std::set<int>>(p));
    std::vector<std::vector<std::set<int>>> inbox(p, std::vector<std::set<int>>(p));
    for (int k = 0; k < p; ++k) {
      for (int r = 0; r < p; ++r) {  // each rank adds its input to the block it works on
        const int b = s::ring_reduce_sent(r, p, k);
        std::set<int> acc = k ? inbox[r][b] : std::set<int>{};
        EXPECT_FALSE(acc.count(r)) << "p " << p << ": rank " << r << " adds its input to block " << b << " twice";
        acc.insert(r);
        partial[r][b] = acc;
      }
      if (k == p - 1) break;
      for (int r = 0; r < p; ++r) {
        const int right = s::ring_right(r, p), b = s::ring_reduce_sent(r, p, k);
        EXPECT_EQ(s::ring_reduce_received(right, p, k), b);
        inbox[right][b] = partial[r][b];
      }
    }
    for (int r = 0; r < p; ++r) EXPECT_EQ(static_cast<int>(partial[r][r].size()), p) << "p " << p << " rank " << r;
  }
}

TEST(Schedule, PairwiseStepsArePermutationsCoveringEveryPair) {
  for (int p = 1; p <= kMaxRanks; ++p) {
    std::set<std::pair<int, int>> pairs;
    for (int k = 1; k < p; ++k) {
      std::set<int> targets;
      for (int r = 0; r < p; ++r) {
        const int to = s::pairwise_to(r, p, k);
        EXPECT_EQ(s::pairwise_from(to, p, k), r);
        EXPECT_TRUE(targets.insert(to).second) << "p " << p << " step " << k << ": rank " << to << " gets two messages";
        EXPECT_TRUE(pairs.insert({r, to}).second);
      }
    }
    EXPECT_EQ(static_cast<int>(pairs.size()), p * (p - 1));
  }
}

TEST(Schedule, BruckDeliversEveryBlock) {
  for (int p = 1; p <= kMaxRanks; ++p) {
    std::vector<std::set<int>> held(p);
    for (int r = 0; r < p; ++r) held[r].insert(r);
    for (int d = 1; d < p; d *= 2) {
      std::vector<std::set<int>> next = held;
      for (int r = 0; r < p; ++r) {
        const s::BruckStep st = s::bruck_step(r, p, d);
        const s::BruckStep peer = s::bruck_step(st.to, p, d);
        EXPECT_EQ(peer.from, r);
        EXPECT_TRUE(peer.received == st.sent) << "p " << p << " d " << d;
        for (int b : blocks_of(st.sent, p)) {
          ASSERT_TRUE(held[r].count(b)) << "p " << p << " d " << d << ": rank " << r << " sends block " << b;
          next[st.to].insert(b);
        }
      }
      held.swap(next);
    }
    for (int r = 0; r < p; ++r) EXPECT_EQ(static_cast<int>(held[r].size()), p) << "p " << p << " rank " << r;
  }
}

// Binomial tree: every non-root has one parent that lists it as a child, subtrees
// partition the ranks, and a bcast in rounds reaches everybody in ceil(log2 p) rounds.
TEST(Schedule, BinomialTreeIsATreeOfSubtrees) {
  for (int p = 1; p <= kMaxRanks; ++p) {
    std::vector<int> parent_count(p, 0);
    for (int v = 0; v < p; ++v) {
      std::vector<int> covered{v};
      for (int kid : children(v, p)) {
        EXPECT_EQ(s::binomial_parent(kid), v);
        ++parent_count[kid];
        const std::vector<int> ids = blocks_of(s::binomial_subtree_ids(kid, p), p);
        covered.insert(covered.end(), ids.begin(), ids.end());
      }
      std::sort(covered.begin(), covered.end());
      EXPECT_EQ(covered, blocks_of(s::binomial_subtree_ids(v, p), p)) << "p " << p << ": subtree of " << v;
    }
    for (int v = 1; v < p; ++v) EXPECT_EQ(parent_count[v], 1) << "p " << p << " v " << v;
    EXPECT_EQ(static_cast<int>(blocks_of(s::binomial_subtree_ids(0, p), p).size()), p);
    // Rounds: a child is served after its parent has the data.
    std::vector<int> round(p, -1);
    round[0] = 0;
    int depth = 0;
    for (int v = 0; v < p; ++v) {  // parents have smaller relative ranks than their children
      ASSERT_GE(round[v], 0) << "p " << p << ": v " << v << " not reached";
      int t = round[v];
      for (int kid : children(v, p)) round[kid] = ++t;
      depth = std::max(depth, t);
    }
    int log2p = 0;
    while ((1 << log2p) < p) ++log2p;
    EXPECT_EQ(depth, log2p) << "p " << p;
  }
}

TEST(Schedule, RecursiveDoublingCombinesEveryRankOnce) {
  for (int p = 1; p <= kMaxRanks; ++p) {
    std::vector<std::multiset<int>> have(p);
    for (int r = 0; r < p; ++r) have[r].insert(r);
    std::vector<s::Doubling> d(p);
    for (int r = 0; r < p; ++r) d[r] = s::doubling(r, p);
    for (int r = 0; r < 2 * d[0].rem; r += 2) have[r + 1].insert(have[r].begin(), have[r].end());
    for (int mask = 1; mask < d[0].pof2; mask <<= 1) {
      std::vector<std::multiset<int>> next = have;
      for (int r = 0; r < p; ++r) {
        if (d[r].newrank < 0) continue;
        const int peer = s::doubling_peer(d[r], mask);
        ASSERT_GE(d[peer].newrank, 0);
        EXPECT_EQ(s::doubling_peer(d[peer], mask), r) << "p " << p << " mask " << mask;
        next[r].insert(have[peer].begin(), have[peer].end());
      }
      have.swap(next);
    }
    for (int r = 0; r < 2 * d[0].rem; r += 2) have[r] = have[r + 1];
    for (int r = 0; r < p; ++r) {
      EXPECT_EQ(static_cast<int>(have[r].size()), p) << "p " << p << " rank " << r;
      for (int x = 0; x < p; ++x) EXPECT_EQ(have[r].count(x), 1u) << "p " << p << " rank " << r << " input " << x;
    }
  }
}

}  // namespace
