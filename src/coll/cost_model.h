// The cost model behind ZCOLL_ALGO_AUTO: it predicts the time of plain MPI and of each
// compressed schedule of a call, and the call runs the fastest. Its inputs:
//   links   latency and bandwidth of intra-node and inter-node pairs, measured once per
//           process by a ping-pong (or given: ZCOLL_LINK_GBPS, ZCOLL_LINK_LATENCY_US,
//           ZCOLL_NODE_LINK_GBPS, ZCOLL_NODE_LINK_LATENCY_US, zcoll_config.link_*);
//   codec   compression ratio and per-thread compression and decompression speed of this
//           call's data, from a sample of about 0.4% of each rank's values (one slice
//           of it decompressed; below 4 MiB a collective's first 3 agreed calls only,
//           about 1.5%); the speed is the fastest of the collective's last 8;
//   learned measured/predicted time of earlier calls, per collective, size class and path
//           (plain MPI or one schedule), the second lowest of the last seven runs, each
//           predicted anew with the codec speed of now (for plain
//           MPI also the same statistic of its fast-path calls between two agreements, of
//           3 or 4 with its factor before them as one more, unless they follow a schedule
//           that had slowed), and what
//           a call through the agreement pays before its path runs (a compressed path pays
//           it at every call, plain MPI's fast path does not); plain MPI
//           is measured first where compression is predicted to win by less than 2x, a
//           path run once and predicted close to the chosen one runs a second time, a
//           schedule predicted within 3x of plain MPI is tried once, so is every schedule
//           predicted within 3x of the path chosen (one not run yet predicted with the
//           worst factor of its group, at most plain MPI's), and every 8th call through the
//           agreement runs the path run least recently of those predicted within 1.25x,
//           every 16th within 1.5x,
//           every 32nd within 2x, every 64th within 3x (those two once more at once where
//           they ran faster than the chosen path was predicted to).
// Every rank takes the same decision: the inputs that differ per rank travel in the
// agreement allreduce every compressed call already makes (call.h), each rank keeps the
// worst (MAX) of each, and the decision is a pure function of agreed values. Nothing
// that one rank alone measured decides anything.
#pragma once
#include <cstddef>

#include "coll/select.h"
#include "zcoll.h"

struct zcoll_comm_s;

namespace zcoll::coll {

struct Agreement;

struct Link {
  double alpha = 0;  // seconds per message
  double beta = 0;   // seconds per byte
};

// What the model knows on one communicator. Every field is set from agreed values only,
// so it is identical on every rank.
struct ModelState {
  Link intra, inter;                       // intra: ranks of one node; inter: the network
  double reduce_cost = 0;                  // s per byte of MPI's own reduction (local)
  // The fewest codec threads a piece gets on any rank (codec.threads may differ per rank,
  // and so may the automatic count, a host's cores over its ranks): the slowest rank's.
  int codec_threads = 1;
  double best_compress[2] = {0, 0};        // cheapest agreed s per byte seen, per dtype
  double best_decompress[2] = {0, 0};      // (one thread): the fast path's lower bound
  double rho[ZCOLL_NUM_COLLECTIVES][2] = {};  // last agreed compressed/raw, per dtype
  // The last kRecent agreed codec figures (s per byte) of each collective and dtype.
  static constexpr int kRecent = 8;
  double recent_compress[ZCOLL_NUM_COLLECTIVES][2][kRecent] = {};
  double recent_decompress[ZCOLL_NUM_COLLECTIVES][2][kRecent] = {};
  int recent_n[ZCOLL_NUM_COLLECTIVES][2] = {};
  // Measured / predicted, per collective, size class (a factor of 4 in bytes each, from
  // 64 KiB) and path: [0] plain MPI, [schedule] a zcoll schedule (zcoll_algorithm id).
  static constexpr int kSizeClasses = 8, kPaths = ZCOLL_ALGO_PLAIN_HIERARCHICAL + 1;
  double learned[ZCOLL_NUM_COLLECTIVES][kSizeClasses][kPaths];
  int runs[ZCOLL_NUM_COLLECTIVES][kSizeClasses][kPaths] = {};
  // The last kSeen runs of each path: its time and what its model was given (the ratio and
  // the bytes of that call). `learned` is the second lowest of their measured/predicted
  // ratios, predicted with the codec speed the model has now (decide()).
  static constexpr int kSeen = 7;
  struct Run {
    double seconds = 0, rho = 0, bytes = 0;
  };
  Run seen[ZCOLL_NUM_COLLECTIVES][kSizeClasses][kPaths][kSeen] = {};
  // Each path's run with the lowest measured/predicted ratio ever here (against its model
  // then), and that ratio: what the path can do when a spell of the host has filled its last
  // kSeen runs (the spell re-checks, recheck()).
  Run best_run[ZCOLL_NUM_COLLECTIVES][kSizeClasses][kPaths] = {};
  double best_ratio[ZCOLL_NUM_COLLECTIVES][kSizeClasses][kPaths] = {};
  // The clock of the re-check bands: calls here, those through the agreement and (added at
  // the next one) plain MPI's fast-path calls since, `skipped`.
  int decided[ZCOLL_NUM_COLLECTIVES][kSizeClasses] = {};
  int skipped[ZCOLL_NUM_COLLECTIVES][kSizeClasses] = {};
  // A periodic re-check (recheck() says which) that ran faster than the path chosen was
  // predicted to run is run once more at the next call, which the fast path leaves to decide()
  // (path + 1; 0: none): one fast run alone does not move the second lowest of seven.
  // recheck_bar: that prediction, while the re-check is being learned. A schedule re-checked
  // while plain MPI holds the choice runs cold; one that missed the bar by little runs once
  // more at the next call, judged by the bar again (judge_again; cost_model.cc, learn()).
  int confirm[ZCOLL_NUM_COLLECTIVES][kSizeClasses] = {};
  bool judge_again[ZCOLL_NUM_COLLECTIVES][kSizeClasses] = {};
  double recheck_bar = 0;
  bool recheck_cold = false;  // the re-check being learned followed plain calls
  int last_ran[ZCOLL_NUM_COLLECTIVES][kSizeClasses][kPaths] = {};  // `decided` at its last run
  // Periodic re-checks of each path since it was last the path chosen (chosen: that path +
  // 1, at the last decided call); after k of them a path is re-checked at one in 2^k of its
  // turns, k at most kMaxRecheckBackoff; a path past the widest band waits 2^k times as long
  // (k at most 16).
  static constexpr int kMaxRecheckBackoff = 3;
  int rechecks[ZCOLL_NUM_COLLECTIVES][kSizeClasses][kPaths] = {};
  int chosen[ZCOLL_NUM_COLLECTIVES][kSizeClasses] = {};
  // calls the fast path took or sent on, since the last compressed call
  int fast_calls[ZCOLL_NUM_COLLECTIVES][kSizeClasses] = {};
  // The last decided call, whose measured time (each rank's) the next agreement carries.
  int last_collective = -1, last_size = 0, last_path = 0;
  double last_model = 0;   // its predicted time before learning
  double last_rho = 0, last_bytes = 0;  // the ratio and size it was predicted for,
  double last_comp = 0, last_decomp = 0;  // with this codec speed (s per byte)
  bool last_homomorphic = false;
  double last_time = 0;    // this rank's measured time of its path
  double last_overhead = 0;  // this rank's seconds of its agreement, range pass and sample
  bool last_deferred = false;  // it ran plain MPI and deferred its range pass (agreed)
  // This rank's own (not agreed): plain MPI's time over its model in the fast-path calls of
  // each collective and size class since its last agreement, whose low order statistic
  // (carry_measurements()) the next one carries. Plain MPI's factor would otherwise come from its first two runs alone, which
  // can be 2x faster than its later ones (a 1 MiB bcast at 10 Gbit/s: 0.44 ms, then 0.85, over
  // the emulated link's old 1.25 MB bucket, which let the first calls cross above the line rate).
  static constexpr int kFastSeen = 16;
  // The path of the last call here through the agreement, and every path's fastest run (s;
  // 0: none): whether a plain stretch followed a schedule that had slowed (cost_model.cc).
  int stretch_after[ZCOLL_NUM_COLLECTIVES][kSizeClasses] = {};
  double fastest_run[ZCOLL_NUM_COLLECTIVES][kSizeClasses][kPaths] = {};
  // Every path's fastest run right after a run of its own here (s; 0: none), and whether the
  // last decided call was one.
  double fastest_warm[ZCOLL_NUM_COLLECTIVES][kSizeClasses][kPaths] = {};
  bool last_warm = false;
  double fast_seen[ZCOLL_NUM_COLLECTIVES][kSizeClasses][kFastSeen] = {};
  int fast_seen_n[ZCOLL_NUM_COLLECTIVES][kSizeClasses] = {};
  int fast_collective = -1, fast_size = 0;  // the fast-path call under way, and its model
  double fast_model = 0;
  // What a call through the agreement pays before its path runs (the slowest rank's), per
  // collective and size class: a fast-path plain call saves it. [0]: a call that compresses
  // (range pass and all); [1]: a call that deferred its range pass and ran plain MPI, as the
  // fast path's periodic agreements do (REL bounds; none with ABS: [0] stands for both).
  double overhead[ZCOLL_NUM_COLLECTIVES][kSizeClasses][2] = {};
  int overhead_runs[ZCOLL_NUM_COLLECTIVES][kSizeClasses][2] = {};
  // This rank's own (not agreed): its share of the value range at its last range pass here
  // (lo, hi; empty: none), the sample's bound where a call defers that pass (sample()).
  double own_range[ZCOLL_NUM_COLLECTIVES][kSizeClasses][2] = {};
  // surely_plain()'s verdict for the last byte count of each collective, kept while the
  // agreed state it was worked out from holds (epoch: bumped by every change of it, in
  // measure_links(), learn() and decide()). A stretch of fast-path calls then costs a
  // lookup, not the model's sums over every schedule at every call.
  unsigned epoch = 1;
  struct Verdict {
    unsigned epoch = 0;  // 0: none
    size_t bytes = 0;
    bool plain = false;     // plain MPI wins (surely, or likely: surely_plain())
    double t_plain = 0;     // plain MPI's predicted time, its factor applied
    double t_model = 0;     // and its bare model
  };
  Verdict verdict[ZCOLL_NUM_COLLECTIVES];
  ModelState();
};

// Collective, at zcoll_comm_create: the link figures (process cache, configuration or a
// ping-pong, < 50 ms) and MPI's reduction speed, agreed across ranks. rank_scratch: one
// int per rank. A rank out of memory for the probe or the reduction timing says so in
// the agreements here: ZCOLL_ERR_NO_MEMORY on every rank.
int measure_links(zcoll_comm_s& c, int* rank_scratch);

// The decision for one call.
struct Decision {
  bool plain = false;
  Choice choice;
  double t_predicted = 0;        // of the path that runs
  double t_predicted_plain = 0;  // of plain MPI
  double rho = 0;                // predicted compressed/raw (0: not predicted)
  bool fast = false;             // surely_plain: decided without the agreement
  double t_sample = 0;           // seconds of this rank's sample
  bool probe = false;            // a path run to learn it (its first run here, or a re-check
                                 // of a close runner-up): learned right after it
  double t_overhead = 0;         // seconds from the call's start to this decision (agreement,
                                 // range pass, sample): what a fast-path call saves
  bool range_deferred = false;   // plain MPI ran, its range pass deferred (agreed): its
                                 // overhead is less than a compressed call's
};

// Whether this call consults the model (AUTO under ZCOLL_DECIDE_MODEL).
bool uses_model(const zcoll_comm_s& c, int collective);
// Before the agreement, from agreed state only: true when plain MPI wins even if the data
// compressed to nothing (codec time alone exceeds plain MPI's), so the call can skip the
// agreement and the sample. It depends on the byte count and agreed state only, not on
// the datatype, so it is the same on every rank for arguments MPI requires to match.
bool surely_plain(zcoll_comm_s& c, int collective, size_t bytes, Decision* d);
// For a call that goes to the agreement all the same: whether the model expects plain MPI
// (the fast path's verdict, or the last call here through the agreement ran it). Such a call
// defers its REL range pass to a decision to compress (call.h, complete_range()).
bool expects_plain(const zcoll_comm_s& c, int collective, size_t bytes);
// Whether a call of `bytes` (this rank's values) samples its codec's speed and ratio: every
// call from 4 MiB, below it a collective's first agreed calls only (cost_model.cc).
bool samples_codec(const ModelState& s, int collective, int dtype, size_t bytes);
// Before the agreement: samples this rank's values (Agreement::data) into its estimates,
// in the communicator's arena, where samples_codec() says so.
void sample(zcoll_comm_s& c, int dtype, Agreement& a);
// After the agreement: the decision, from agreed values; updates what the model learned.
Decision decide(zcoll_comm_s& c, int collective, size_t bytes, int dtype, bool homomorphic, const Agreement& a);
// Before the agreement: what this rank measured since the last one, for it to carry (the
// last decided call's time and overhead; plain MPI's fast-path calls of this collective and
// size).
void carry_measurements(zcoll_comm_s& c, int collective, size_t bytes, Agreement& a);
// After a call the model decided (`d`): this rank's time of its path (the call less
// `overhead`, its agreement, range pass and sample), for the next agreement to carry.
void record_time(zcoll_comm_s& c, const Decision& d, double seconds, double overhead);
// After a probe (the first run of a path at a size): learns its time and overhead, the
// slowest rank's, at once with one small allreduce, so that the very next call can use it.
void learn_probe(zcoll_comm_s& c, double seconds, double overhead, bool range_deferred);

}  // namespace zcoll::coll
