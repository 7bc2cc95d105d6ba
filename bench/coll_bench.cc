// zcoll-bench coll: one collective, compressed (zcoll) against plain MPI on the same data.
//
//   mpiexec -n N zcoll-bench coll --op OP --input FILE
//       [--dtype f32|f64] [--eb-mode abs|rel] [--eb X] [--algo ALGO] [--bytes PER_RANK]
//       [--reduce-op sum|min|max] [--iters K] [--warmup W] [--threads T] [--chunk N] [--root R] [--json]
//   OP: allgather|bcast|scatter|gather|alltoall, or a reduction: reduce_scatter|allreduce|reduce
//
// Data: rank r holds the field from FILE (raw little-endian) rotated by r*n/N elements and
// tiled to the size asked for, so every rank holds different real data. --bytes is the
// message of the MPI call, i.e. sendcount (recvcount for gather, count for bcast) times the
// element size: per rank for allgather/gather, the whole buffer for bcast, each rank's block
// for scatter (the root holds N x bytes) and each destination's block for alltoall (every
// rank holds N x bytes). Bcast and scatter use the root's rotated field. For the reductions
// it is each rank's input vector (count x element size): allreduce and reduce (on the root)
// return count elements; reduce_scatter gives rank r block r, count / N elements
// (MPI_Reduce_scatter_block), or, where N does not divide count, MPI_Reduce_scatter with the
// first count % N ranks holding one element more.
//
// --algo plainring (allreduce only): a second uncompressed baseline, Open MPI's ring
// allreduce (reduce-scatter then allgather, the next block's receive overlapping this one's
// reduction) written here with MPI point-to-point, its reduction loop run by the bench on
// one thread. Under SimGrid SMPI that loop is charged like any compute, while SMPI's own
// MPI_Allreduce applies its MPI_Op untimed (bench/smpi/README.md). Its result is checked
// like plain MPI's (bound: the rounding allowance only). --check-stride S checks only every
// S-th element of a reduction's output (the reference costs p^2 x count in all).
//
// Timing: W warm-up calls, then K timed ones; each is MPI_Barrier, t0 = MPI_Wtime(), the
// call, t = MPI_Wtime() - t0, MPI_Allreduce(MAX of t). time_s is the median over the K
// calls of the slowest rank's time. Plain MPI (MPI_Allgather, ... on the same buffers, same
// discipline) is measured first in the same run (time_mpi_s), then the requested algorithm.
// --interleave times plain MPI and every requested path of one op and size call by call
// instead (call i of each, in an order drawn anew for every i, then call i + 1), after one
// untimed plain MPI call: a slow spell of the host then falls on all of them, not on the one
// path whose block it hit. Every path keeps its own communicator, so AUTO's learning is its
// own; time_mpi_s is the one plain MPI column's.
//
// Errors: every element of every rank's output buffer (the root's for gather and reduce; the
// non-roots' for bcast, whose root only sends; each rank's block for reduce_scatter) from the
// last zcoll call is compared in double with a reference: for the data-movement ops what plain
// MPI delivered there (MPI moves the bits unchanged); for the reductions the reduction of the
// original inputs computed in double, each rank regenerating every rank's input from FILE (it
// is a rotation of the same field), not MPI's float result. mpi_max_abs_err is plain MPI's
// own result against that reference (its rounding; 0 for the data-movement ops).
// max_abs_err is the largest difference on any rank; max_err_over_eb divides it by eb_abs
// from zcoll_last_stats (the root's, which for bcast/scatter is the rank that resolved the
// bound; for the reductions the per-input bound; where zcoll did not compress, eb_abs is 0 and
// the bound resolved here, eb_abs_expected, is the unit). mean_err is the mean signed error
// (result - reference). err_p95_over_eb is the 95th percentile of |error| / eb_abs over all
// those elements on all ranks, from per-rank histograms merged with MPI_Reduce (128 bins per
// power of two; the upper edge of the bin holding it, so at most 0.8% above the exact
// percentile). psnr_db = 20 log10(range / rmse) and nrmse = rmse / range, with the
// reference's value range and the rmse over all those elements on all ranks.
//
// Bound: max_abs_err may not exceed bound_over_eb x eb_abs. Where zcoll did not compress (and
// for --algo mpi) the units are 0: the output must be plain MPI's. Otherwise, data-movement
// ops: 1; reductions on p ranks: zcoll.h's worst case for the path asked for, in units of the
// per-input bound: SUM on the homomorphic path (zcoll, zcoll-homomorphic, ring,
// recursive-doubling, and the algorithms the reductions do not have): p (p - 1 for
// reduce_scatter), MIN/MAX there: 1; where the result checked (the last call's) came from
// the node-aware schedule, the same with the nodes zcoll_comm_get_info reports for p;
// zcoll-doc and cprp2p: p - 1 for reduce_scatter, p for allreduce and reduce, except cprp2p
// allreduce: 2p - 2 (its allgather recompresses at every hop). The reductions add an
// allowance for the element type's rounding (u = 2^-24 for f32, 2^-53 for f64), the largest
// over the compared elements of: SUM p x u x (sum over ranks of |x|); MIN/MAX u x max |x|.
// The reductions' JSON line also has reduce_op and reduction: how the path asked for combines
// (homomorphic; doc for zcoll-doc and cprp2p; none for mpi).
// Exit status: 0, 1 if an error exceeds the bound (or the reported eb_abs is looser than the
// bound asked for), a zcoll call fails, or the data is unusable; 2 for a usage error.
#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cctype>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "coll_errors.h"
#include "tool_support.h"
#include "zcoll.h"  // with <mpi.h>: zcoll-bench links zcoll::zcoll_static, not the codec-only target

namespace {

using namespace coll_errors;

const char* const kUsage =
    "usage: mpiexec -n N zcoll-bench coll --op OP --input FILE\n"
    "           [--dtype f32|f64] [--eb-mode abs|rel] [--eb X]\n"
    "           [--algo mpi|plainring|zcoll-mpi|zcoll|auto|zcoll-homomorphic|zcoll-doc|cprp2p|c-coll|ring|\n"
    "                   recursive-doubling|bruck|binomial|scatter-allgather|pairwise|hierarchical|\n"
    "                   plain-hierarchical]\n"
    "           [--bytes PER_RANK] [--reduce-op sum|min|max] [--iters K] [--warmup W] [--threads T]\n"
    "           [--chunk N] [--root R] [--ranks N] [--check-stride S] [--interleave] [--json]\n"
    "  --op OP        allgather|bcast|scatter|gather|alltoall, or a reduction:\n"
    "                 reduce_scatter|allreduce|reduce\n"
    "  --input FILE   raw little-endian field; dtype from --dtype or the .f32/.f64 suffix\n"
    "  --eb-mode/--eb error bound (default rel 1e-4); for the reductions, of each rank's input\n"
    "  --algo         mpi = plain MPI only; auto = the cost model's choice (plain MPI or a zcoll\n"
    "                 algorithm: ZCOLL_DECIDE_MODEL); zcoll = always compressed, the algorithm\n"
    "                 from the fixed table (ZCOLL_DECIDE_COMPRESS); cprp2p = compress\n"
    "                 before every send (baseline); c-coll = zcoll's algorithms with the szx\n"
    "                 codec and DOC reductions (the C-Coll baseline); zcoll-homomorphic / zcoll-doc = automatic\n"
    "                 algorithm, reductions combining compressed integers / decompress-operate-\n"
    "                 compress at every step; the others force that zcoll algorithm\n"
    "                 (recursive-doubling: allreduce; hierarchical: allreduce, reduce, bcast,\n"
    "                 allgather, reduce_scatter,\n"
    "                 node-aware, nodes from ZCOLL_NODE_KEY or shared memory) (default zcoll);\n"
    "                 plainring (allreduce only) = a second uncompressed baseline: Open MPI's ring\n"
    "                 allreduce (reduce-scatter, then allgather) written with MPI point-to-point, its\n"
    "                 reduction loop run here on one thread, so that a simulator charges it\n"
    "                 (SMPI's built-in collectives do not); plain-hierarchical (allreduce, bcast,\n"
    "                 allgather, reduce_scatter, reduce) = a node-aware uncompressed baseline: hierarchical's node stages\n"
    "                 with plain MPI between the nodes too; zcoll-mpi = zcoll configured to plain MPI\n"
    "                 (ZCOLL_ALGO_MPI: zcoll's front end around the MPI call, what it costs)\n"
    "  --bytes        message size of the MPI call (sendcount x element size), with K/M/G\n"
    "                 suffixes (powers of 1024); rounded to whole elements. Default 64M.\n"
    "                 scatter: each rank's block (the root holds N x bytes); alltoall: each\n"
    "                 destination's block (every rank holds N x bytes); reductions: each rank's\n"
    "                 input (reduce_scatter: N blocks of bytes / N)\n"
    "  --reduce-op    MPI_SUM, MPI_MIN or MPI_MAX for the reductions (default sum)\n"
    "  --iters K      timed calls (default 5), median of the slowest rank's time\n"
    "  --warmup W     untimed calls first (default 2)\n"
    "  --threads T    codec threads per rank (default 1; 0 = zcoll's automatic count, zcoll.h \"Threads\")\n"
    "  --chunk N      codec chunk length in values (default 0: the library's, 16384); a piece\n"
    "                 of 65536 values has 65536 / N chunks, the threads that can share it\n"
    "  --root R       root of bcast/scatter/gather/reduce (default 0)\n"
    "  --ranks N      run on the launch's first N ranks only (a communicator split from\n"
    "                 MPI_COMM_WORLD; the others wait): nodes of different sizes out of a\n"
    "                 launch whose nodes are alike (default: every rank)\n"
    "  --check-stride S  reductions: check every S-th output element only (default 1: all;\n"
    "                 the exact reference costs p^2 x count element visits in all)\n"
    "  --interleave   time the --algo and --threads lists' paths and plain MPI call by call\n"
    "                 (call i of each, in a shuffled order, then call i + 1), each zcoll path\n"
    "                 on its own communicator, so that host drift meets all of them alike\n"
    "                 (default: each path's calls in a block, after a block of plain MPI's)\n"
    "  --json         one JSON line per run (from rank 0)\n"
    "--op, --algo, --bytes and --threads take comma-separated lists; every combination runs in\n"
    "this one launch (op, then size, algorithm, threads), one result line each.\n"
    "Reductions are checked against the inputs reduced in double; exit status 1 where an error\n"
    "exceeds zcoll.h's bound for the path (bound_over_eb), 2 for a usage error.\n";

// One run's settings. --op, --algo, --bytes and --threads may list several values
// (comma-separated): the lists hold them, and coll_main runs every combination in one
// launch, which matters where a launch is expensive (an emulated network to set up).
struct Opts {
  std::string op, input, dtype, eb_mode = "rel", algo = "zcoll", reduce_op = "sum";
  double eb = 1e-4;
  size_t bytes = size_t{64} << 20;
  int iters = 5, warmup = 2, threads = 1, root = 0, ranks = 0;
  size_t check_stride = 1, chunk = 0;
  bool json = false, help = false, interleave = false;
  std::vector<std::string> ops, algos;
  std::vector<size_t> bytes_list;
  std::vector<int> threads_list;
};

// An empty item stays, and is then rejected as an unknown --op or --algo.
std::vector<std::string> split_list(const std::string& s) { return zsupport::split_list(s, true); }

enum class Op { Allgather, Bcast, Scatter, Gather, Alltoall, ReduceScatter, Allreduce, Reduce };

bool is_reduction(Op op) { return op == Op::ReduceScatter || op == Op::Allreduce || op == Op::Reduce; }

// --algo plainring: not a zcoll algorithm (see Call::plainring).
constexpr int kPlainRing = -1;
// --algo zcoll-mpi: a zcoll communicator configured to ZCOLL_ALGO_MPI (the front end alone).
constexpr int kZcollMpi = -2;

// --algo: the zcoll algorithm and, for the reductions, how they combine.
struct Algo {
  int algorithm = ZCOLL_ALGO_AUTO;
  int reduction = ZCOLL_REDUCTION_AUTO;
  int codec = ZCOLL_CODEC_FZL;
  int decision = ZCOLL_DECIDE_MODEL;
};

int g_rank = 0, g_size = 1;
// The ranks that take part: MPI_COMM_WORLD, or its first --ranks N.
MPI_Comm g_comm = MPI_COMM_WORLD;

// Usage errors: printed once, by rank 0; every rank parses the same arguments.
using zsupport::UsageError;
using zsupport::json_number;

bool parse_size(const std::string& s, size_t* out) {
  if (s.empty() || !(s[0] >= '0' && s[0] <= '9')) return false;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (errno || end == s.c_str()) return false;
  std::string suf(end);
  for (auto& ch : suf) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  double mul = 1;
  if (suf == "" || suf == "B") mul = 1;
  else if (suf == "K" || suf == "KB" || suf == "KIB") mul = 1024.0;
  else if (suf == "M" || suf == "MB" || suf == "MIB") mul = 1024.0 * 1024;
  else if (suf == "G" || suf == "GB" || suf == "GIB") mul = 1024.0 * 1024 * 1024;
  else return false;
  const double b = v * mul;
  if (!(b >= 1) || b > 1e15) return false;
  *out = static_cast<size_t>(std::llround(b));
  return true;
}

int parse_int(const std::string& a, const std::string& v, int lo) {
  return static_cast<int>(zsupport::parse_long(a, v, lo, INT_MAX));
}

Opts parse(int argc, char** argv) {
  Opts o;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) throw UsageError{"missing value for " + a};
      return argv[++i];
    };
    if (a == "--op") o.ops = split_list(val());
    else if (a == "--input") o.input = val();
    else if (a == "--dtype") o.dtype = val();
    else if (a == "--eb-mode") o.eb_mode = val();
    else if (a == "--eb") {
      const std::string v = val();
      char* end = nullptr;
      o.eb = std::strtod(v.c_str(), &end);
      if (end == v.c_str() || *end || !std::isfinite(o.eb) || !(o.eb > 0)) throw UsageError{"bad --eb " + v};
    } else if (a == "--algo") o.algos = split_list(val());
    else if (a == "--reduce-op") o.reduce_op = val();
    else if (a == "--bytes") {
      o.bytes_list.clear();
      for (const std::string& v : split_list(val())) {
        if (!parse_size(v, &o.bytes)) throw UsageError{"bad --bytes " + v};
        o.bytes_list.push_back(o.bytes);
      }
    } else if (a == "--iters") o.iters = parse_int(a, val(), 1);
    else if (a == "--warmup") o.warmup = parse_int(a, val(), 0);
    else if (a == "--threads") {
      o.threads_list.clear();
      for (const std::string& v : split_list(val())) o.threads_list.push_back(parse_int(a, v, 0));
    }
    else if (a == "--root") o.root = parse_int(a, val(), 0);
    else if (a == "--ranks") o.ranks = parse_int(a, val(), 1);
    else if (a == "--chunk") o.chunk = static_cast<size_t>(parse_int(a, val(), 0));
    else if (a == "--check-stride") o.check_stride = static_cast<size_t>(parse_int(a, val(), 1));
    else if (a == "--json") o.json = true;
    else if (a == "--interleave") o.interleave = true;
    else if (a == "--help" || a == "-h") o.help = true;
    else throw UsageError{"unknown option " + a};
  }
  if (o.help) return o;
  if (o.ops.empty()) throw UsageError{"--op is required"};
  if (o.algos.empty()) o.algos = {o.algo};
  if (o.bytes_list.empty()) o.bytes_list = {o.bytes};
  if (o.threads_list.empty()) o.threads_list = {o.threads};
  if (o.input.empty()) throw UsageError{"--input is required"};
  if (o.eb_mode != "abs" && o.eb_mode != "rel") throw UsageError{"--eb-mode must be abs or rel"};
  if (o.dtype.empty()) o.dtype = zsupport::dtype_from_name(o.input);
  if (o.dtype.empty()) throw UsageError{"--dtype not given and the input has no .f32/.f64 suffix"};
  if (o.dtype != "f32" && o.dtype != "f64") throw UsageError{"--dtype must be f32 or f64"};
  if (o.reduce_op != "sum" && o.reduce_op != "min" && o.reduce_op != "max")
    throw UsageError{"--reduce-op must be sum, min or max"};
  return o;
}

bool parse_op(const std::string& s, Op* op) {
  static const struct {
    const char* name;
    Op op;
  } table[] = {{"allgather", Op::Allgather}, {"bcast", Op::Bcast},
               {"scatter", Op::Scatter},     {"gather", Op::Gather},
               {"alltoall", Op::Alltoall},   {"reduce_scatter", Op::ReduceScatter},
               {"allreduce", Op::Allreduce}, {"reduce", Op::Reduce}};
  for (const auto& t : table)
    if (s == t.name) {
      *op = t.op;
      return true;
    }
  return false;
}

RedOp parse_reduce_op(const std::string& s) { return s == "min" ? RedOp::Min : s == "max" ? RedOp::Max : RedOp::Sum; }

MPI_Op mpi_op(RedOp op) { return op == RedOp::Min ? MPI_MIN : op == RedOp::Max ? MPI_MAX : MPI_SUM; }

// --algo -> zcoll_algorithm and zcoll_reduction; "mpi" = plain MPI only (no zcoll run).
// c-coll: the C-Coll design, zcoll's frameworks with an SZx-class codec, reductions
// decompress-operate-compress as C-Coll's. The first entry of an algorithm names it in
// algo_ran (so "auto" precedes "zcoll"); the names predate zcoll_algorithm_name's and are
// what the result files hold.
const struct {
  const char* name;
  int algo, reduction, codec = ZCOLL_CODEC_FZL, decision = ZCOLL_DECIDE_COMPRESS;
} kAlgos[] = {{"mpi", ZCOLL_ALGO_MPI, ZCOLL_REDUCTION_AUTO},
              {"plainring", kPlainRing, ZCOLL_REDUCTION_AUTO},
              {"zcoll-mpi", kZcollMpi, ZCOLL_REDUCTION_AUTO},
              {"auto", ZCOLL_ALGO_AUTO, ZCOLL_REDUCTION_AUTO, ZCOLL_CODEC_FZL, ZCOLL_DECIDE_MODEL},
              {"zcoll", ZCOLL_ALGO_AUTO, ZCOLL_REDUCTION_AUTO},
              {"c-coll", ZCOLL_ALGO_AUTO, ZCOLL_REDUCTION_DOC, ZCOLL_CODEC_SZX},
              {"zcoll-homomorphic", ZCOLL_ALGO_AUTO, ZCOLL_REDUCTION_HOMOMORPHIC},
              {"zcoll-doc", ZCOLL_ALGO_AUTO, ZCOLL_REDUCTION_DOC},
              {"cprp2p", ZCOLL_ALGO_CPRP2P, ZCOLL_REDUCTION_AUTO},
              {"ring", ZCOLL_ALGO_RING, ZCOLL_REDUCTION_AUTO},
              {"recursive-doubling", ZCOLL_ALGO_RECURSIVE_DOUBLING, ZCOLL_REDUCTION_AUTO},
              {"bruck", ZCOLL_ALGO_BRUCK, ZCOLL_REDUCTION_AUTO},
              {"binomial", ZCOLL_ALGO_BINOMIAL, ZCOLL_REDUCTION_AUTO},
              {"scatter-allgather", ZCOLL_ALGO_SCATTER_ALLGATHER, ZCOLL_REDUCTION_AUTO},
              {"pairwise", ZCOLL_ALGO_PAIRWISE, ZCOLL_REDUCTION_AUTO},
              {"hierarchical", ZCOLL_ALGO_HIERARCHICAL, ZCOLL_REDUCTION_AUTO},
              {"plain-hierarchical", ZCOLL_ALGO_PLAIN_HIERARCHICAL, ZCOLL_REDUCTION_AUTO}};

bool parse_algo(const std::string& s, Algo* algo) {
  for (const auto& t : kAlgos)
    if (s == t.name) {
      algo->algorithm = t.algo;
      algo->reduction = t.reduction;
      algo->codec = t.codec;
      algo->decision = t.decision;
      return true;
    }
  return false;
}

const char* algo_name(int a) {
  for (const auto& t : kAlgos)
    if (t.algo == a) return t.name;
  return "unknown";
}

// How the reductions of --algo combine: none (plain MPI), homomorphic (ZCOLL_REDUCTION_AUTO is
// homomorphic) or doc (decompress-operate-compress; cprp2p is that without pipelining).
const char* reduction_name(const Algo& a) {
  if (a.algorithm == ZCOLL_ALGO_MPI || a.algorithm == kPlainRing || a.algorithm == kZcollMpi ||
      a.algorithm == ZCOLL_ALGO_PLAIN_HIERARCHICAL)
    return "none";
  if (a.algorithm == ZCOLL_ALGO_CPRP2P || a.reduction == ZCOLL_REDUCTION_DOC) return "doc";
  return "homomorphic";
}

// zcoll.h's worst-case error of a reduction on p ranks, in units of the per-input bound, for
// the path asked for (see the top comment). compressed: whether zcoll's compressed path ran.
double reduction_bound_units(Op op, RedOp rop, const Algo& a, int p, bool compressed) {
  if (a.algorithm == ZCOLL_ALGO_MPI || a.algorithm == kPlainRing || !compressed) return 0;
  if (a.algorithm == ZCOLL_ALGO_CPRP2P && op == Op::Allreduce) return 2.0 * p - 2;
  const bool homomorphic = a.algorithm != ZCOLL_ALGO_CPRP2P && a.reduction != ZCOLL_REDUCTION_DOC;
  if (homomorphic && rop != RedOp::Sum) return 1;
  return op == Op::ReduceScatter ? p - 1 : p;
}

// dst[0..m) = field rotated left by shift, repeated as often as needed.
template <class T>
void fill_rotated(T* dst, size_t m, const std::vector<T>& field, size_t shift) {
  const size_t n = field.size();
  size_t pos = shift % n, done = 0;
  while (done < m) {
    const size_t k = std::min(m - done, n - pos);
    std::memcpy(dst + done, field.data() + pos, k * sizeof(T));
    done += k;
    pos = 0;
  }
}

template <class T>
MPI_Datatype mpi_type() {
  return sizeof(T) == 4 ? MPI_FLOAT : MPI_DOUBLE;
}

// One op's buffers on this rank: input (send / bcast root) and output for plain MPI (ref)
// and for zcoll (got).
template <class T>
struct Buffers {
  std::vector<T> send, ref, got;
  size_t cmp_off = 0, cmp_len = 0;  // elements of the output buffer compared
  size_t global_off = 0;            // reductions: index of the first compared element in the reduced vector
  std::vector<int> recvcounts;      // reduce_scatter where N does not divide count; else empty
};

struct Result {
  std::string op, algo, algo_ran = "mpi", dtype, eb_mode, input, reduce_op, reduction;
  bool is_reduction = false, interleaved = false;
  int ranks = 0, iters = 0, warmup = 0, threads = 0, root = 0, compressed = 0;
  size_t bytes_per_rank = 0, check_stride = 1, chunk_len = 0;
  double eb = 0, eb_abs = 0, eb_abs_expected = 0, time_s = 0, time_mpi_s = 0, speedup = 1, ratio = 1;
  double t_predicted = 0, t_predicted_mpi = 0, ratio_predicted = 0, t_model = 0;  // AUTO's cost model
  double t_setup = 0;  // before the data moved: range pass, sample, agreement (zcoll_stats.t_setup)
  double raw_bytes = 0, wire_bytes = 0, max_abs_err = 0, max_err_over_eb = 0, psnr_db = INFINITY, nrmse = 0;
  double err_p95_over_eb = 0, mean_err = 0, mpi_max_abs_err = 0, bound_abs = 0, bound_over_eb = 0;
  int quantizing_ranks = 0;  // the bound's p: the ranks, or the nodes where the last call was node-aware
  double t_compress = 0, t_comm = 0, t_decompress = 0, t_reduce = 0, bad_specials = 0;
  std::vector<double> times, times_mpi;
  std::vector<int> paths;  // the zcoll_algorithm each call ran (warm-up calls first): AUTO's learning shows
  // AUTO's prediction for each call's path and for plain MPI (rank 0's; the ranks agree)
  std::vector<double> predicted, predicted_mpi;
  // 1 where the call went through the agreement (its sample predicted a ratio), 0 where the
  // cost model's fast path sent it to MPI directly
  std::vector<int> agreed;
  // rank 0's zcoll_stats parts of each call: t_setup, t_compress, t_comm, t_decompress, t_reduce
  std::vector<std::array<double, 5>> parts;
};

// rank r's buffers for op: the rotated field where this rank has input, the NaN sentinel
// (output not written shows as an error) in both outputs, and which output elements are
// compared (see the top comment).
template <class T>
Buffers<T> make_buffers(Op op, size_t count, int root, const std::vector<T>& field) {
  const int p = g_size, r = g_rank;
  const size_t total = count * p, n0 = field.size();
  const T sentinel = std::numeric_limits<T>::quiet_NaN();
  Buffers<T> b;
  auto input = [&](size_t m, int owner) {
    b.send.resize(m);
    fill_rotated(b.send.data(), m, field, owner * n0 / p);
  };
  auto output = [&](size_t m) {
    b.ref.assign(m, sentinel);
    b.got.assign(m, sentinel);
    b.cmp_len = m;
  };
  switch (op) {
    case Op::Allgather:
    case Op::Gather:
      input(count, r);
      if (op == Op::Allgather || r == root) output(total);
      break;
    case Op::Bcast:
      // One buffer per path; the root's holds its field and is not compared.
      if (r == root) {
        b.ref.resize(count);
        fill_rotated(b.ref.data(), count, field, root * n0 / p);
        b.got = b.ref;
      } else {
        output(count);
      }
      break;
    case Op::Scatter:
      if (r == root) input(total, root);
      output(count);
      break;
    case Op::Alltoall:
      input(total, r);
      output(total);
      break;
    case Op::Allreduce:
    case Op::Reduce:
      input(count, r);
      if (op == Op::Allreduce || r == root) output(count);
      break;
    case Op::ReduceScatter: {
      input(count, r);
      const size_t base = count / p, extra = count % p, mine = base + (static_cast<size_t>(r) < extra);
      if (extra)
        for (int q = 0; q < p; ++q) b.recvcounts.push_back(static_cast<int>(base + (static_cast<size_t>(q) < extra)));
      b.global_off = r * base + std::min<size_t>(r, extra);
      output(mine);
      break;
    }
  }
  return b;
}

// The bound the caller asked for, resolved here independently of zcoll: ABS as given, REL
// from the global range (allgather, gather, alltoall, reductions) or the root's (bcast,
// scatter); 0 where there is no range, and zcoll's own rule applies.
template <class T>
double expected_eb_abs(const Opts& o, Op op, const Buffers<T>& b, size_t count) {
  if (o.eb_mode != "rel") return o.eb;
  zsupport::ValueRange range;
  if (op == Op::Bcast) {
    if (g_rank == o.root) range.add(b.ref.data(), count);
  } else if (op != Op::Scatter || g_rank == o.root) {
    range.add(b.send.data(), b.send.size());
  }
  double ext[2] = {-range.lo, range.hi};
  MPI_Allreduce(MPI_IN_PLACE, ext, 2, MPI_DOUBLE, MPI_MAX, g_comm);
  return ext[1] > -ext[0] ? o.eb * (ext[1] + ext[0]) : 0;
}

// One collective on this rank's buffers, as plain MPI or zcoll calls it.
template <class T>
struct Call {
  Op op;
  int count, root;
  MPI_Op mop;
  const Buffers<T>& b;
  MPI_Datatype mt = mpi_type<T>();
  int rs_block = count / g_size;  // reduce_scatter where b.recvcounts is empty
  mutable std::vector<T> scratch;  // plainring's two receive blocks

  int mpi(T* out) const {
    const void* in = b.send.data();
    switch (op) {
      case Op::Allgather: return MPI_Allgather(in, count, mt, out, count, mt, g_comm);
      case Op::Bcast: return MPI_Bcast(out, count, mt, root, g_comm);
      case Op::Scatter: return MPI_Scatter(in, count, mt, out, count, mt, root, g_comm);
      case Op::Gather: return MPI_Gather(in, count, mt, out, count, mt, root, g_comm);
      case Op::Alltoall: return MPI_Alltoall(in, count, mt, out, count, mt, g_comm);
      case Op::ReduceScatter:
        return b.recvcounts.empty() ? MPI_Reduce_scatter_block(in, out, rs_block, mt, mop, g_comm)
                                    : MPI_Reduce_scatter(in, out, b.recvcounts.data(), mt, mop, g_comm);
      case Op::Allreduce: return MPI_Allreduce(in, out, count, mt, mop, g_comm);
      case Op::Reduce: return MPI_Reduce(in, out, count, mt, mop, root, g_comm);
    }
    return MPI_ERR_OTHER;
  }

  // --algo plainring: an uncompressed ring allreduce as Open MPI's
  // ompi_coll_base_allreduce_intra_ring does it: a reduce-scatter of p - 1 steps (each
  // step posts the next block's receive before it reduces the block just received, so
  // the transfer overlaps the reduction loop, then sends the reduced block on), then a
  // ring allgather of p - 1 sendrecvs. The reduction loop runs here, single-threaded, as
  // real MPI libraries reduce; under SMPI it is therefore charged, which SMPI's built-in
  // MPI_Allreduce does not do (its MPI_Op runs inside the simulator, untimed).
  int plainring(T* out) const {
    const int p = g_size, r = g_rank, tag = 7411;
    const size_t n = static_cast<size_t>(count);
    std::memcpy(out, b.send.data(), n * sizeof(T));
    if (p == 1) return MPI_SUCCESS;
    auto beg = [&](int k) { return n * static_cast<size_t>(k) / static_cast<size_t>(p); };
    auto len = [&](int k) { return static_cast<int>(beg(k + 1) - beg(k)); };
    const size_t maxb = (n + p - 1) / p;
    if (scratch.size() < 2 * maxb) scratch.resize(2 * maxb);
    T* in[2] = {scratch.data(), scratch.data() + maxb};
    const int right = (r + 1) % p, left = (r + p - 1) % p;
    auto reduce = [&](T* acc, const T* x, int m) {
      if (mop == MPI_SUM) for (int i = 0; i < m; ++i) acc[i] += x[i];
      else if (mop == MPI_MAX) for (int i = 0; i < m; ++i) acc[i] = x[i] > acc[i] ? x[i] : acc[i];
      else for (int i = 0; i < m; ++i) acc[i] = x[i] < acc[i] ? x[i] : acc[i];
    };
    MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    int rc = MPI_SUCCESS, inbi = 0;
    const int first = (r + p - 1) % p;
    rc |= MPI_Irecv(in[inbi], len(first), mt, left, tag, g_comm, &req[inbi]);
    rc |= MPI_Send(out + beg(r), len(r), mt, right, tag, g_comm);
    for (int k = 2; k < p; ++k) {
      const int prev = (r - k + 1 + p) % p, next = (r - k + p) % p;
      inbi ^= 1;
      rc |= MPI_Irecv(in[inbi], len(next), mt, left, tag, g_comm, &req[inbi]);
      rc |= MPI_Wait(&req[inbi ^ 1], MPI_STATUS_IGNORE);
      reduce(out + beg(prev), in[inbi ^ 1], len(prev));
      rc |= MPI_Send(out + beg(prev), len(prev), mt, right, tag, g_comm);
    }
    rc |= MPI_Wait(&req[inbi], MPI_STATUS_IGNORE);
    const int done = (r + 1) % p;  // this rank's block of the result
    reduce(out + beg(done), in[inbi], len(done));
    for (int k = 0; k < p - 1; ++k) {
      const int sb = (r + 1 - k + p) % p, rb = (r - k + p) % p;
      rc |= MPI_Sendrecv(out + beg(sb), len(sb), mt, right, tag, out + beg(rb), len(rb), mt, left, tag,
                         g_comm, MPI_STATUS_IGNORE);
    }
    return rc;
  }

  int zcoll(T* out, zcoll_comm zc) const {
    const void* in = b.send.data();
    switch (op) {
      case Op::Allgather: return zcoll_allgather(in, count, mt, out, count, mt, zc);
      case Op::Bcast: return zcoll_bcast(out, count, mt, root, zc);
      case Op::Scatter: return zcoll_scatter(in, count, mt, out, count, mt, root, zc);
      case Op::Gather: return zcoll_gather(in, count, mt, out, count, mt, root, zc);
      case Op::Alltoall: return zcoll_alltoall(in, count, mt, out, count, mt, zc);
      case Op::ReduceScatter:
        return b.recvcounts.empty() ? zcoll_reduce_scatter_block(in, out, rs_block, mt, mop, zc)
                                    : zcoll_reduce_scatter(in, out, b.recvcounts.data(), mt, mop, zc);
      case Op::Allreduce: return zcoll_allreduce(in, out, count, mt, mop, zc);
      case Op::Reduce: return zcoll_reduce(in, out, count, mt, mop, root, zc);
    }
    return ZCOLL_ERR_INTERNAL;
  }
};

// The stats of zcoll's last call, over all ranks. eb_abs and the algorithm are the root's
// (for bcast/scatter only the root resolves a REL bound; for the global ops every rank has
// the same); bytes are summed, the times of the parts maxed.
void record_stats(const zcoll_stats& st, int root, Result* res) {
  double head[3] = {st.eb_abs, static_cast<double>(st.algorithm), static_cast<double>(st.compressed)};
  MPI_Bcast(head, 3, MPI_DOUBLE, root, g_comm);
  res->eb_abs = head[0];
  res->algo_ran = algo_name(static_cast<int>(head[1]));
  res->compressed = static_cast<int>(head[2]);
  double sums[2] = {st.compressed ? static_cast<double>(st.raw_bytes) : 0.0, static_cast<double>(st.wire_bytes)};
  MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, g_comm);
  res->raw_bytes = sums[0];
  res->wire_bytes = sums[1];
  res->ratio = res->compressed && sums[1] > 0 ? sums[0] / sums[1] : 1.0;
  double tm[4] = {st.t_compress, st.t_comm, st.t_decompress, st.t_reduce};
  MPI_Allreduce(MPI_IN_PLACE, tm, 4, MPI_DOUBLE, MPI_MAX, g_comm);
  res->t_compress = tm[0];
  res->t_comm = tm[1];
  res->t_decompress = tm[2];
  res->t_reduce = tm[3];
  // The cost model's predictions (AUTO): the same on every rank.
  res->t_predicted = st.t_predicted;
  res->t_predicted_mpi = st.t_predicted_plain;
  res->ratio_predicted = st.ratio_predicted;
  double front[2] = {st.t_model, st.t_setup};
  MPI_Allreduce(MPI_IN_PLACE, front, 2, MPI_DOUBLE, MPI_MAX, g_comm);
  res->t_model = front[0];
  res->t_setup = front[1];
}

// A zcoll communicator for one configuration, or null on every rank where its creation
// failed on any (reported).
zcoll_comm open_comm(const Opts& o, const Algo& algo) {
  zcoll_config cfg;
  zcoll_config_init(&cfg);  // min_bytes stays at its default
  cfg.codec.eb_mode = o.eb_mode == "abs" ? ZCOLL_EB_ABS : ZCOLL_EB_REL;
  cfg.codec.eb = o.eb;
  cfg.codec.threads = o.threads;
  cfg.codec.chunk_len = o.chunk;
  cfg.codec.codec = algo.codec;
  cfg.algorithm = algo.algorithm == kZcollMpi ? ZCOLL_ALGO_MPI : algo.algorithm;
  cfg.reduction = algo.reduction;
  cfg.decision = algo.decision;
  zcoll_comm zc = nullptr;
  const int rc = zcoll_comm_create(g_comm, &cfg, &zc);
  int worst = rc;
  MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_INT, MPI_MAX, g_comm);
  if (worst) {
    if (rc) std::fprintf(stderr, "zcoll-bench coll: rank %d: zcoll_comm_create: %s\n", g_rank, zcoll_strerror(rc));
    if (zc) zcoll_comm_free(&zc);
  }
  return zc;
}

// One path a group of configurations times: plain MPI, plainring, or a zcoll configuration
// on a communicator of its own. lines: the results it fills (plain MPI's column: those of
// --algo mpi, if any; every other column: one).
struct Column {
  Algo algo;
  zcoll_comm zc = nullptr;
  std::vector<size_t> lines;
  int mine = 0;  // this rank's code of the last call
  bool failed = false;
  std::vector<double> times;
};

// The errors of result over all ranks and the bound they must keep: against plain MPI's
// output, or for the reductions against the double-precision reduction of the inputs, for
// which plain MPI's own error is measured too (unless MPI's output is the result checked).
// Collective: every rank calls it.
template <class T>
void record_errors(Op op, RedOp rop, const Algo& algo, const std::vector<T>& field, const Buffers<T>& b,
                   const T* result, Result* res, size_t stride) {
  const double eb_unit = res->eb_abs > 0 ? res->eb_abs : res->eb_abs_expected;
  auto over_eb = [&](double x) { return eb_unit > 0 ? x / eb_unit : (x > 0 ? INFINITY : 0); };
  ErrHist hist;
  ErrorSummary s, s_mpi;
  const bool red = is_reduction(op);
  if (red) {
    ReduceRef<T> ref{&field, {}, b.global_off, rop};
    for (int q = 0; q < g_size; ++q) ref.shift.push_back(q * field.size() / g_size);
    s = summarize(compare(ref, result + b.cmp_off, b.cmp_len, eb_unit, &hist, stride), &hist, g_comm);
    s_mpi = algo.algorithm == ZCOLL_ALGO_MPI
                ? s
                : summarize(compare(ref, b.ref.data() + b.cmp_off, b.cmp_len, eb_unit, nullptr, stride), nullptr, g_comm);
  } else {
    const CopyRef<T> ref{b.ref.data() + b.cmp_off};
    s = summarize(compare(ref, result + b.cmp_off, b.cmp_len, eb_unit, &hist), &hist, g_comm);
  }
  res->max_abs_err = s.max_abs;
  res->mean_err = s.mean;
  res->bad_specials = s.bad_specials;
  res->max_err_over_eb = over_eb(s.max_abs);
  res->err_p95_over_eb = s.p95_over_eb;
  res->mpi_max_abs_err = s_mpi.max_abs;
  res->nrmse = zsupport::nrmse(s.range, s.rmse);
  res->psnr_db = zsupport::psnr_db(s.range, s.rmse);
  const double units =
      red ? reduction_bound_units(op, rop, algo, res->quantizing_ranks, res->compressed) : (res->compressed ? 1 : 0);
  res->bound_abs = units * eb_unit + s.max_allow;
  res->bound_over_eb = over_eb(res->bound_abs);
}

// The configurations of group share op, size and input. Plain MPI's column comes first, then
// one per configuration (--algo mpi is plain MPI's own). In turn, a column's calls all run
// before the next column's. Interleaved, call i of every column runs before call i + 1 of
// any, in an order shuffled anew for each i, so that every path meets the same drift of the
// host (a slower spell shared by all of them, not charged to one) and the same predecessors.
// After a column's last call, its output is checked against the bound. res[k]: configuration k's result, whose header the caller fills; failed[k]: 1
// where its calls failed, or plain MPI's.
template <class T>
void run(const std::vector<Opts>& group, bool interleave, Op op, const std::vector<T>& field,
         std::vector<Result>& res, std::vector<int>& failed) {
  const Opts& o = group.front();
  const size_t count = std::max<size_t>(1, (o.bytes + sizeof(T) / 2) / sizeof(T));
  if (count > static_cast<size_t>(INT_MAX)) {
    if (g_rank == 0)
      std::fprintf(stderr, "zcoll-bench coll: --bytes gives %zu elements, more than an int count\n", count);
    failed.assign(group.size(), 1);
    return;
  }
  const RedOp rop = parse_reduce_op(o.reduce_op);
  Buffers<T> b = make_buffers(op, count, o.root, field);
  const Call<T> call{op, static_cast<int>(count), o.root, mpi_op(rop), b};
  const double eb_expected = expected_eb_abs(o, op, b, count);

  std::vector<Column> cols(1);
  cols[0].algo.algorithm = ZCOLL_ALGO_MPI;
  for (size_t k = 0; k < group.size(); ++k) {
    res[k].ranks = g_size;
    res[k].bytes_per_rank = count * sizeof(T);
    res[k].eb_abs_expected = eb_expected;
    Column c;
    parse_algo(group[k].algo, &c.algo);
    if (c.algo.algorithm == ZCOLL_ALGO_MPI) {
      cols[0].lines.push_back(k);
      continue;
    }
    c.lines = {k};
    if (c.algo.algorithm != kPlainRing && !(c.zc = open_comm(group[k], c.algo))) {
      failed[k] = 1;
      continue;
    }
    res[k].paths.reserve(static_cast<size_t>(o.warmup + o.iters));
    res[k].predicted.reserve(res[k].paths.capacity());
    res[k].predicted_mpi.reserve(res[k].paths.capacity());
    res[k].agreed.reserve(res[k].paths.capacity());
    res[k].parts.reserve(res[k].paths.capacity());
    cols.push_back(c);
  }

  // Interleaved, plain MPI's timed calls write where every other path writes (b.got), and
  // its untimed first call the reference (b.ref): the same call into two buffers of the same
  // size can differ by 20-30%, which would be charged to the path (a 64 MiB MPI_Bcast on
  // shared memory, 2 ranks, calls alternating between two buffers: medians 10.5-11.6 ms
  // into one, 8.3-8.8 ms into the other, in 4 of 5 launches).
  T* const mpi_out = interleave ? b.got.data() : b.ref.data();
  auto call_of = [&](Column& c) -> int {
    if (c.algo.algorithm == ZCOLL_ALGO_MPI) return call.mpi(mpi_out);
    if (c.algo.algorithm == kPlainRing) return call.plainring(b.got.data());
    return c.mine = call.zcoll(b.got.data(), c.zc);
  };
  // What each zcoll call ran, read after its time is taken: plain MPI's column has no such
  // bookkeeping, and under SMPI the bench's own code between two MPI calls is charged to the
  // call it sits in (bench/smpi/README.md, "The fast path under SMPI, burst by burst").
  auto record_call = [&](Column& c) {
    if (!c.zc) return;
    Result& r = res[c.lines[0]];
    zcoll_stats each{};
    zcoll_last_stats(c.zc, &each);
    r.paths.push_back(each.algorithm);
    r.predicted.push_back(each.t_predicted);
    r.predicted_mpi.push_back(each.t_predicted_plain);
    r.agreed.push_back(each.ratio_predicted > 0);
    r.parts.push_back({each.t_setup, each.t_compress, each.t_comm, each.t_decompress, each.t_reduce});
  };
  // After a column's last call, while its output is in its buffer (plain MPI's in mpi_out,
  // the others' in b.got).
  auto finish_column = [&](Column& c) {
    const T* result = c.algo.algorithm == ZCOLL_ALGO_MPI ? mpi_out : b.got.data();
    for (size_t k : c.lines) {
      Result& r = res[k];
      r.time_s = zsupport::median(c.times);
      r.times = c.times;
      if (c.zc) {
        zcoll_stats st{};
        zcoll_last_stats(c.zc, &st);
        record_stats(st, o.root, &r);
        zcoll_comm_info info{};
        zcoll_comm_get_info(c.zc, &info);
        r.quantizing_ranks = st.algorithm == ZCOLL_ALGO_HIERARCHICAL ? info.nodes : g_size;
      } else {
        r.eb_abs = eb_expected;
        if (c.algo.algorithm == kPlainRing) r.algo_ran = "plainring";
      }
      record_errors(op, rop, c.algo, field, b, result, &r, is_reduction(op) ? o.check_stride : 1);
    }
    if (c.zc) zcoll_comm_free(&c.zc);
  };
  auto report = [&](const Column& c, int code) {
    if (c.zc) {
      if (c.mine)
        std::fprintf(stderr, "zcoll-bench coll: rank %d: zcoll_%s: %s\n", g_rank, o.op.c_str(), zcoll_strerror(c.mine));
      else if (g_rank == 0)
        std::fprintf(stderr, "zcoll-bench coll: zcoll_%s failed on another rank\n", o.op.c_str());
    } else if (g_rank == 0) {
      std::fprintf(stderr, "zcoll-bench coll: %s %s failed (code %d)\n",
                   c.algo.algorithm == ZCOLL_ALGO_MPI ? "MPI" : "plainring", o.op.c_str(), code);
    }
  };
  const int calls = o.warmup + o.iters;
  auto step = [&](Column& c, int i) {
    if (c.failed || cols[0].failed) return;
    int code = 0;
    const double t = zsupport::time_call([&] { return call_of(c); }, &code, g_comm);
    record_call(c);
    if (code) {
      c.failed = true;
      report(c, code);
      for (size_t k : c.lines) failed[k] = 1;
      if (c.zc) zcoll_comm_free(&c.zc);
      return;
    }
    if (i >= o.warmup) c.times.push_back(t);
    if (i == calls - 1) finish_column(c);
  };
  if (interleave) {
    // Each round in its own order, the same on every rank: a call's predecessor shapes it
    // (an emulated link's token bucket, which a large plain call leaves empty and a small
    // compressed one full; caches), and a fixed order would hand one path the same
    // predecessor every time (at 1 Gbit/s, a 1 MiB call right after plain MPI's took 1.3-2x
    // the time of the same path later in the round).
    std::vector<size_t> order(cols.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::mt19937 rng(12345);  // fully specified: every rank draws the same numbers
    // Plain MPI's output first, untimed, in the reference (see mpi_out).
    int code = 0;
    zsupport::time_call([&] { return call.mpi(b.ref.data()); }, &code, g_comm);
    if (code) {
      cols[0].failed = true;
      report(cols[0], code);
    }
    for (int i = 0; i < calls; ++i) {
      for (size_t k = order.size() - 1; k > 0; --k) std::swap(order[k], order[rng() % (k + 1)]);
      for (size_t k : order) step(cols[k], i);
    }
  } else {
    for (Column& c : cols)
      for (int i = 0; i < calls; ++i) step(c, i);
  }
  for (Column& c : cols)
    if (c.zc) zcoll_comm_free(&c.zc);  // a column skipped after plain MPI's failure
  const double t_mpi = cols[0].failed ? 0 : zsupport::median(cols[0].times);
  for (size_t k = 0; k < group.size(); ++k) {
    if (cols[0].failed) failed[k] = 1;
    res[k].time_mpi_s = t_mpi;
    res[k].times_mpi = cols[0].times;
    res[k].speedup = res[k].time_s > 0 ? t_mpi / res[k].time_s : 0;
  }
}

// The items of v, each formatted by f, separated by commas.
template <class V, class F>
std::string join(const V& v, F&& f) {
  std::string out;
  for (const auto& x : v) out += (out.empty() ? "" : ",") + f(x);
  return out;
}

void print(const Result& r, bool json, const std::string& lib) {
  if (json) {
    const std::string red =
        r.is_reduction ? "\"reduce_op\":\"" + r.reduce_op + "\",\"reduction\":\"" + r.reduction + "\"," : "";
    std::printf(
        "{\"op\":\"%s\",%s\"ranks\":%d,\"algo\":\"%s\",\"algo_ran\":\"%s\",\"compressed\":%d,\"dtype\":\"%s\","
        "\"bytes_per_rank\":%zu,\"eb_mode\":\"%s\",\"eb\":%s,\"eb_abs\":%s,\"eb_abs_expected\":%s,"
        "\"time_s\":%s,\"time_mpi_s\":%s,\"speedup_vs_mpi\":%s,\"ratio\":%s,\"raw_bytes\":%.0f,"
        "\"wire_bytes\":%.0f,\"max_abs_err\":%s,\"max_err_over_eb\":%s,\"err_p95_over_eb\":%s,\"mean_err\":%s,"
        "\"mpi_max_abs_err\":%s,\"bound_over_eb\":%s,\"psnr_db\":%s,\"nrmse\":%s,"
        "\"t_compress_s\":%s,\"t_comm_s\":%s,\"t_decompress_s\":%s,\"t_reduce_s\":%s,\"t_setup_s\":%s,\"iters\":%d,\"warmup\":%d,\"threads\":%d,"
        "\"chunk_len\":%zu,\"root\":%d,\"check_stride\":%zu,\"input\":\"%s\",\"mpi_library\":\"%s\",\"t_predicted_s\":%s,"
        "\"t_predicted_mpi_s\":%s,\"ratio_predicted\":%s,\"t_model_s\":%s,\"call_times_s\":[%s],"
        "\"call_paths\":[%s],\"call_predicted_s\":[%s],\"call_predicted_mpi_s\":[%s],\"call_agreed\":[%s],"
        "\"call_parts_s\":[%s],\"interleaved\":%s}\n",
        r.op.c_str(), red.c_str(), r.ranks, r.algo.c_str(), r.algo_ran.c_str(), r.compressed, r.dtype.c_str(),
        r.bytes_per_rank, r.eb_mode.c_str(), json_number(r.eb, "%.6g").c_str(), json_number(r.eb_abs).c_str(),
        json_number(r.eb_abs_expected).c_str(), json_number(r.time_s, "%.6f").c_str(), json_number(r.time_mpi_s, "%.6f").c_str(),
        json_number(r.speedup, "%.4f").c_str(), json_number(r.ratio, "%.4f").c_str(), r.raw_bytes, r.wire_bytes,
        json_number(r.max_abs_err).c_str(), json_number(r.max_err_over_eb, "%.6f").c_str(),
        json_number(r.err_p95_over_eb, "%.6f").c_str(), json_number(r.mean_err, "%.6g").c_str(), json_number(r.mpi_max_abs_err).c_str(),
        json_number(r.bound_over_eb, "%.6f").c_str(), json_number(r.psnr_db, "%.3f").c_str(), json_number(r.nrmse, "%.6g").c_str(),
        json_number(r.t_compress, "%.6f").c_str(), json_number(r.t_comm, "%.6f").c_str(), json_number(r.t_decompress, "%.6f").c_str(),
        json_number(r.t_reduce, "%.6f").c_str(), json_number(r.t_setup, "%.6f").c_str(), r.iters, r.warmup, r.threads, r.chunk_len, r.root, r.check_stride, zsupport::json_escape(r.input).c_str(), zsupport::json_escape(lib).c_str(),
        json_number(r.t_predicted, "%.6f").c_str(), json_number(r.t_predicted_mpi, "%.6f").c_str(),
        json_number(r.ratio_predicted, "%.3f").c_str(), json_number(r.t_model, "%.6f").c_str(),
        join(r.times, [](double t) { return json_number(t, "%.6f"); }).c_str(),
        join(r.paths, [](int a) { return std::string("\"") + algo_name(a) + "\""; }).c_str(),
        join(r.predicted, [](double t) { return json_number(t, "%.6g"); }).c_str(),
        join(r.predicted_mpi, [](double t) { return json_number(t, "%.6g"); }).c_str(),
        join(r.agreed, [](int a) { return std::to_string(a); }).c_str(),
        join(r.parts, [](const std::array<double, 5>& t) {
          return "[" + join(t, [](double x) { return json_number(x, "%.6f"); }) + "]";
        }).c_str(),
        r.interleaved ? "true" : "false");
  } else {
    const std::string op = r.is_reduction ? r.op + "(" + r.reduce_op + ")" : r.op;
    std::printf("%s %s(%s) %d ranks %s %.4g MiB/rank: %.4f s vs MPI %.4f s (%.2fx), ratio %.2f, "
                "max_err/eb %.4f (p95 %.4f, bound %.4f), PSNR %.2f dB, NRMSE %.3g "
                "[setup %.4f compress %.4f comm %.4f decompress %.4f reduce %.4f s]\n",
                op.c_str(), r.algo.c_str(), r.algo_ran.c_str(), r.ranks, r.dtype.c_str(),
                r.bytes_per_rank / 1048576.0, r.time_s, r.time_mpi_s, r.speedup, r.ratio, r.max_err_over_eb,
                r.err_p95_over_eb, r.bound_over_eb, r.psnr_db, r.nrmse, r.t_setup, r.t_compress, r.t_comm,
                r.t_decompress, r.t_reduce);
    if (r.is_reduction)
      std::printf("  mean_err %.3g, plain MPI's own max error %.3g (vs the inputs reduced in double)\n", r.mean_err,
                  r.mpi_max_abs_err);
  }
}

template <class T>
void run_typed(const std::vector<Opts>& group, bool interleave, Op op, std::vector<Result>& res,
               std::vector<int>& failed) {
  const Opts& o = group.front();
  // Read once per launch: every configuration of a list uses the same --input.
  static std::vector<T> field;
  static std::string loaded;
  std::string err;
  int ok = 1, all = 0;
  if (loaded != o.input) {
    field.clear();
    ok = zsupport::read_values(o.input, &field, &err) ? 1 : 0;
    loaded = ok ? o.input : std::string();
  }
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, g_comm);
  if (!all) {
    if (!ok) std::fprintf(stderr, "zcoll-bench coll: rank %d: %s\n", g_rank, err.c_str());
    failed.assign(group.size(), 1);
    return;
  }
  run<T>(group, interleave, op, field, res, failed);
}

// Every rank of the launch calls it, those --ranks left out too: they leave with the worst
// status and enter MPI_Finalize together, since MPICH's finalize over TCP can hang when one
// rank arrives late (docs/pmpi.md). The last line tells bench/netem/run.sh (--exit-line
// "zcoll-bench coll: exit status") that the work is done, should that hang happen anyway.
int finish(int rc) {
  MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  std::fflush(stdout);  // results reach mpiexec before MPI_Finalize (which can hang across netns)
  if (g_rank == 0) std::fprintf(stderr, "zcoll-bench coll: exit status %d\n", rc);
  std::fflush(stderr);
  MPI_Finalize();
  return rc;
}

// Configurations of one op and size (see run()): run, print, check. 0, or 1 where one
// failed or broke a bound.
int run_group(const std::vector<Opts>& group, bool interleave) {
  Op op{};
  parse_op(group.front().op, &op);
  std::vector<Result> res(group.size());
  std::vector<int> failed(group.size(), 0);
  for (size_t k = 0; k < group.size(); ++k) {
    const Opts& o = group[k];
    Algo algo;
    parse_algo(o.algo, &algo);
    Result& r = res[k];
    r.op = o.op;
    r.algo = o.algo;
    r.dtype = o.dtype;
    r.eb_mode = o.eb_mode;
    r.eb = o.eb;
    r.input = o.input;
    r.iters = o.iters;
    r.warmup = o.warmup;
    r.threads = o.threads;
    r.chunk_len = o.chunk;
    r.root = o.root;
    r.check_stride = is_reduction(op) ? o.check_stride : 1;
    r.is_reduction = is_reduction(op);
    r.reduce_op = o.reduce_op;
    r.reduction = reduction_name(algo);
    r.interleaved = interleave;
  }
  if (group.front().dtype == "f32") run_typed<float>(group, interleave, op, res, failed);
  else run_typed<double>(group, interleave, op, res, failed);
  const std::string lib = zsupport::mpi_library();
  int worst = 0;
  for (size_t k = 0; k < group.size(); ++k) {
    if (failed[k]) {
      worst = 1;
      continue;
    }
    const Result& r = res[k];
    if (g_rank == 0) print(r, group[k].json, lib);
    bool fail = false;
    if (g_rank == 0) {
      if (!(r.max_abs_err <= r.bound_abs)) {
        std::fprintf(stderr, "zcoll-bench coll: error beyond the bound: max_err_over_eb = %g > bound_over_eb = %g\n",
                     r.max_err_over_eb, r.bound_over_eb);
        fail = true;
      }
      if (r.bad_specials > 0) {
        std::fprintf(stderr, "zcoll-bench coll: %.0f non-finite values not reproduced\n", r.bad_specials);
        fail = true;
      }
      // zcoll may tighten the bound, never loosen it.
      if (r.compressed && r.eb_abs_expected > 0 && r.eb_abs > r.eb_abs_expected * (1 + 1e-9)) {
        std::fprintf(stderr, "zcoll-bench coll: reported eb_abs %.9g is looser than the requested %.9g\n", r.eb_abs,
                     r.eb_abs_expected);
        fail = true;
      }
    }
    std::fflush(stdout);  // each result reaches mpiexec as soon as it is known
    worst = std::max(worst, fail ? 1 : 0);
  }
  return worst;
}

}  // namespace

int coll_main(int argc, char** argv) {
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    std::fprintf(stderr, "zcoll-bench coll: MPI_Init failed\n");
    return 1;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  Opts o;
  try {
    o = parse(argc, argv);
    if (o.help) {
      if (g_rank == 0) std::fputs(kUsage, stdout);
      return finish(0);
    }
    Op op{};
    Algo algo;
    for (const std::string& s : o.ops)
      if (!parse_op(s, &op)) throw UsageError{"unknown --op " + s};
    for (const std::string& s : o.algos)
      if (!parse_algo(s, &algo)) throw UsageError{"unknown --algo " + s};
    for (const std::string& s : o.algos)
      for (const std::string& op_name : o.ops)
        if (s == "plainring" && op_name != "allreduce") throw UsageError{"--algo plainring is for --op allreduce only"};
    if (o.ranks > g_size) throw UsageError{"--ranks is more than the launch's ranks"};
    if (o.root >= (o.ranks ? o.ranks : g_size)) throw UsageError{"--root must be below the number of ranks"};
  } catch (const UsageError& e) {
    if (g_rank == 0) std::fprintf(stderr, "zcoll-bench coll: %s\n%s", e.msg.c_str(), kUsage);
    return finish(2);
  }
  if (o.ranks > 0 && o.ranks < g_size) {
    // The others take no part: they wait in MPI_Finalize.
    if (MPI_Comm_split(MPI_COMM_WORLD, g_rank < o.ranks ? 0 : MPI_UNDEFINED, g_rank, &g_comm) != MPI_SUCCESS) {
      std::fprintf(stderr, "zcoll-bench coll: MPI_Comm_split failed\n");
      return finish(1);
    }
    if (g_comm == MPI_COMM_NULL) return finish(0);
    g_size = o.ranks;
  }
  // Every combination, in order op, size, algorithm, threads; a failure is reported and
  // the rest still run (failures are agreed on by all ranks, so none is left waiting).
  int worst = 0;
  for (const std::string& op : o.ops)
    for (size_t bytes : o.bytes_list) {
      std::vector<Opts> group;
      for (const std::string& algo : o.algos)
        for (int threads : o.threads_list) {
          Opts one = o;
          one.op = op;
          one.bytes = bytes;
          one.algo = algo;
          one.threads = threads;
          group.push_back(one);
        }
      if (o.interleave) {
        worst = std::max(worst, run_group(group, true));
      } else {
        for (const Opts& one : group) worst = std::max(worst, run_group({one}, false));
      }
    }
  return finish(worst);
}
