// zcoll-bench calls: what zcoll adds to a call that it does not compress. Latency-bound
// codes (a solver's dot products, a training step's scalars) make many small collectives,
// and a user who turns zcoll on, or preloads its drop-in layer, must not pay for them. Each
// column makes the same collective on the same buffers, in batches of K calls, columns
// alternated batch by batch; a batch's time is the slowest rank's, divided by K:
//   pmpi        PMPI_<Op>: the MPI library itself (nothing can intercept that entry);
//   mpi         MPI_<Op>: the same, unless a drop-in layer intercepts it (zcoll-run);
//   zcoll-mpi   zcoll_<op> on a communicator configured to plain MPI (ZCOLL_ALGO_MPI):
//               its argument checks, clock reads and statistics around the MPI call;
//   zcoll-auto  zcoll_<op> with the default configuration (AUTO): below min_bytes plain MPI
//               at once; from min_bytes on, the cost model's fast path, which still agrees
//               with the other ranks every 4th, 8th and 16th call of a plain stretch, and
//               learns a schedule once per size class (its first calls compress).
// W untimed rounds come first (default 1): the first calls set up connections and touch
// pages, and AUTO learns there. Per column: the best and the median batch over R rounds, in microseconds per call, and the
// median's difference from pmpi's in nanoseconds. The values are the first elements of a
// real field (--input; default data/cesm_TS), repeated where the count exceeds it.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tool_support.h"
#include "zcoll.h"

namespace {

const char* const kCallsUsage =
    "usage: mpiexec -n N zcoll-bench calls [--op allreduce|bcast|allgather] [--counts N,N,...]\n"
    "                         [--input FILE] [--calls K] [--rounds R] [--warmup W] [--json]\n"
    "  per-call time of small collectives: PMPI_, MPI_, zcoll configured to plain MPI and\n"
    "  zcoll's AUTO, in batches of K calls (default 2000), columns alternated, R timed rounds\n"
    "  (default 7) after W untimed ones (default 1: connections, first-touch pages, AUTO's probes);\n"
    "  counts in elements (default 1,16,128,1024,8192,65536), the element type from --input's\n"
    "  suffix (default data/cesm_TS_10x192x288.f32).\n";

enum class Column { kPmpi, kMpi, kZcollMpi, kZcollAuto };
const char* const kColumnNames[] = {"pmpi", "mpi", "zcoll-mpi", "zcoll-auto"};
constexpr int kColumns = 4;

struct Opts {
  std::string op = "allreduce", input;
  std::vector<int> counts = {1, 16, 128, 1024, 8192, 65536};
  int calls = 2000, rounds = 7, warmup = 1;
  bool json = false;
};

Opts parse(int argc, char** argv) {
  Opts o;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) throw zsupport::UsageError{"missing value for " + a};
      return argv[++i];
    };
    if (a == "--op") o.op = val();
    else if (a == "--input") o.input = val();
    else if (a == "--counts") {
      o.counts.clear();
      for (const std::string& v : zsupport::split_list(val(), false))
        o.counts.push_back(static_cast<int>(zsupport::parse_long(a, v, 1, 1 << 26)));
    } else if (a == "--calls") o.calls = static_cast<int>(zsupport::parse_long(a, val(), 1, 1 << 24));
    else if (a == "--rounds") o.rounds = static_cast<int>(zsupport::parse_long(a, val(), 1, 1000));
    else if (a == "--warmup") o.warmup = static_cast<int>(zsupport::parse_long(a, val(), 0, 1000));
    else if (a == "--json") o.json = true;
    else throw zsupport::UsageError{"unknown option " + a};
  }
  if (o.op != "allreduce" && o.op != "bcast" && o.op != "allgather")
    throw zsupport::UsageError{"--op must be allreduce, bcast or allgather"};
  if (o.counts.empty()) throw zsupport::UsageError{"--counts is empty"};
  return o;
}

enum class Coll { kAllreduce, kBcast, kAllgather };

// One call of the column's collective; an MPI or zcoll code.
int one_call(Column col, Coll op, zcoll_comm zc, const void* in, void* out, int n, MPI_Datatype t) {
  const bool pmpi = col == Column::kPmpi, zcoll = col == Column::kZcollMpi || col == Column::kZcollAuto;
  if (op == Coll::kAllreduce) {
    if (zcoll) return zcoll_allreduce(in, out, n, t, MPI_SUM, zc);
    return pmpi ? PMPI_Allreduce(in, out, n, t, MPI_SUM, MPI_COMM_WORLD)
                : MPI_Allreduce(in, out, n, t, MPI_SUM, MPI_COMM_WORLD);
  }
  if (op == Coll::kBcast) {
    if (zcoll) return zcoll_bcast(out, n, t, 0, zc);
    return pmpi ? PMPI_Bcast(out, n, t, 0, MPI_COMM_WORLD) : MPI_Bcast(out, n, t, 0, MPI_COMM_WORLD);
  }
  if (zcoll) return zcoll_allgather(in, n, t, out, n, t, zc);
  return pmpi ? PMPI_Allgather(in, n, t, out, n, t, MPI_COMM_WORLD)
              : MPI_Allgather(in, n, t, out, n, t, MPI_COMM_WORLD);
}

int run(const Opts& o) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::string path = o.input.empty() ? zsupport::data_file("cesm_TS_10x192x288.f32") : o.input;
  const std::string dt = zsupport::dtype_from_name(path);
  if (dt.empty()) throw zsupport::UsageError{"--input needs a .f32 or .f64 file: " + path};
  const bool f64 = dt == "f64";
  const size_t es = f64 ? 8 : 4;
  const MPI_Datatype type = f64 ? MPI_DOUBLE : MPI_FLOAT;
  std::vector<unsigned char> field;
  std::string err;
  if (!zsupport::read_file(path, &field, &err) || field.size() < es) {
    if (rank == 0) std::fprintf(stderr, "zcoll-bench calls: %s\n", err.empty() ? "empty input" : err.c_str());
    return 1;
  }
  // Resolved once: the timed loop compares no strings.
  const Coll coll = o.op == "allreduce" ? Coll::kAllreduce : o.op == "bcast" ? Coll::kBcast : Coll::kAllgather;
  const int max_count = *std::max_element(o.counts.begin(), o.counts.end());
  const size_t in_bytes = static_cast<size_t>(max_count) * es;
  std::vector<unsigned char> in(in_bytes), out(in_bytes * static_cast<size_t>(size));
  for (size_t b = 0; b < in_bytes; b += field.size()) std::memcpy(&in[b], field.data(), std::min(field.size(), in_bytes - b));
  // bcast sends `out` from rank 0: the field there too (the other ranks' copies are overwritten).
  std::memcpy(out.data(), in.data(), in_bytes);

  zcoll_comm comms[2] = {nullptr, nullptr};  // zcoll-mpi, zcoll-auto
  for (int k = 0; k < 2; ++k) {
    zcoll_config cfg;
    zcoll_config_init(&cfg);
    cfg.codec.eb_mode = ZCOLL_EB_REL;
    cfg.codec.eb = 1e-4;
    if (k == 0) cfg.algorithm = ZCOLL_ALGO_MPI;
    const int rc = zcoll_comm_create(MPI_COMM_WORLD, &cfg, &comms[k]);
    if (rc) {
      if (rank == 0) std::fprintf(stderr, "zcoll-bench calls: zcoll_comm_create: %s\n", zcoll_strerror(rc));
      return 1;
    }
  }
  if (rank == 0 && !o.json)
    std::printf("%s, %d ranks, %s, %s elements of %s; us per call (best / median of %d batches of %d calls), "
                "median minus pmpi's in ns\n",
                o.op.c_str(), size, zsupport::mpi_library().c_str(), dt.c_str(), path.c_str(), o.rounds, o.calls);
  int status = 0;
  for (int n : o.counts) {
    std::vector<double> per_call[kColumns];
    for (int round = 0; round < o.warmup + o.rounds && !status; ++round)
      for (int c = 0; c < kColumns && !status; ++c) {
        const Column col = static_cast<Column>(c);
        zcoll_comm zc = col == Column::kZcollAuto ? comms[1] : comms[0];
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        int rc = 0;
        for (int i = 0; i < o.calls && !rc; ++i) rc = one_call(col, coll, zc, in.data(), out.data(), n, type);
        double v[2] = {(MPI_Wtime() - t0) / o.calls, static_cast<double>(rc != 0)}, m[2];
        MPI_Allreduce(v, m, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (m[1] != 0) {
          if (rank == 0) std::fprintf(stderr, "zcoll-bench calls: %s failed at count %d\n", kColumnNames[c], n);
          status = 1;
        }
        if (round >= o.warmup) per_call[c].push_back(m[0]);
      }
    if (status || rank != 0) continue;
    const double base = zsupport::median(per_call[0]);
    if (o.json) {
      std::printf("{\"bench\":\"calls\",\"op\":\"%s\",\"ranks\":%d,\"dtype\":\"%s\",\"count\":%d,\"bytes\":%zu,"
                  "\"calls\":%d,\"rounds\":%d,\"mpi_library\":%s",
                  o.op.c_str(), size, dt.c_str(), n, static_cast<size_t>(n) * es, o.calls, o.rounds,
                  zsupport::json_string(zsupport::mpi_library()).c_str());
      for (int c = 0; c < kColumns; ++c)
        std::printf(",\"%s_best_s\":%.9g,\"%s_median_s\":%.9g", kColumnNames[c],
                    *std::min_element(per_call[c].begin(), per_call[c].end()), kColumnNames[c],
                    zsupport::median(per_call[c]));
      std::printf("}\n");
    } else {
      std::printf("count %8d (%9zu B):", n, static_cast<size_t>(n) * es);
      for (int c = 0; c < kColumns; ++c) {
        const double med = zsupport::median(per_call[c]);
        std::printf("  %s %.3f / %.3f", kColumnNames[c], *std::min_element(per_call[c].begin(), per_call[c].end()) * 1e6,
                    med * 1e6);
        if (c) std::printf(" (%+.0f ns, %.3fx)", (med - base) * 1e9, med / base);
      }
      std::printf("\n");
    }
    std::fflush(stdout);
  }
  for (zcoll_comm& zc : comms) zcoll_comm_free(&zc);
  return status;
}

}  // namespace

int calls_main(int argc, char** argv) {
  for (int i = 0; i < argc; ++i)
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
      std::fputs(kCallsUsage, stdout);
      return 0;
    }
  MPI_Init(&argc, &argv);
  int rank = 0, status = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  try {
    status = run(parse(argc, argv));
  } catch (const zsupport::UsageError& e) {
    if (rank == 0) std::fprintf(stderr, "zcoll-bench calls: %s\n%s", e.msg.c_str(), kCallsUsage);
    status = 2;
  }
  MPI_Finalize();
  return status;
}
