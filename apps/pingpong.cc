// zcoll-pingpong: seed 002's ping-pong. Ranks 0 and 1 bounce one float32 message back and
// forth with blocking send/receive, each resending what it received (zcoll_send/zcoll_recv in
// zcoll mode), --iters round trips per configuration; other ranks wait. Seed 002 used 8,192
// floats of a Blast2 simulation; here the message is a contiguous slice of a real field
// (centred in it unless --offset is given; a message longer than the field repeats it; a
// float64 field is rounded to float32).
//
// Reported: the round-trip time (total / iters), and against the original slice the error of
// what rank 1 received on the first hop (max, over eb_abs, PSNR) and of what rank 0 holds after
// the last round trip (the compound error of seed 002's Table 2: every hop recompresses the
// previous hop's output). Check (exit status 1): first hop within eb_abs of the slice (REL: eb x
// its range); last within the sum of the bounds of the 2 x iters hops, at most 2 x iters x the
// largest eb_abs zcoll reported for a send.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "app_common.h"

namespace {

const char* const kUsage =
    "usage: mpiexec -n 2 zcoll-pingpong [--sizes LIST] [--offset I] [common flags]\n"
    "  --sizes LIST   message sizes in floats, each a separate set of runs (default 8192)\n"
    "  --offset I     first element of the slice (default: centred in the field)\n"
    "  --iters K      round trips per configuration (default 1000)\n"
    "  default input: turb_wmag_91x91x91.f32\n";

int run(zapp::Args& a) {
  const std::vector<long> sizes = a.integers("--sizes", "8192", 1, 1 << 28);
  const long offset = a.integer("--offset", -1, -1, 1L << 40);
  const zapp::Common c = zapp::parse_common(a, 1000, zapp::dataset_file("turb_wmag_91x91x91.f32"));
  a.finish();
  if (zapp::g_size < 2) throw zapp::UsageError{"needs at least 2 ranks"};
  const zapp::Field fld = zapp::load_field(c.input);
  const int r = zapp::g_rank, tag = 7;
  int status = 0;
  for (long size : sizes) {
    const size_t n = static_cast<size_t>(size), len = fld.v.size();
    const size_t start = offset >= 0 ? static_cast<size_t>(offset) % len : (len > n ? (len - n) / 2 : 0);
    std::vector<float> x(n);
    for (size_t i = 0; i < n; ++i) x[i] = static_cast<float>(fld.v[(start + i) % len]);
    if (!c.json && r == 0)
      std::printf("# ping-pong of %zu floats (%zu bytes), %d round trips, %s from element %zu\n", n, 4 * n, c.iters,
                  c.input.c_str(), start);
    zapp::RunFn body = [&](const zapp::Config& cfg, zapp::Net& net, zapp::Record& rec) {
      std::vector<float> buf = x, first;
      const int cnt = static_cast<int>(n);
      net.start();
      for (int it = 0; it < c.iters; ++it) {
        if (r == 0) {
          net.send(buf.data(), cnt, MPI_FLOAT, 1, tag);
          net.recv(buf.data(), cnt, MPI_FLOAT, 1, tag);
        } else if (r == 1) {
          net.recv(buf.data(), cnt, MPI_FLOAT, 0, tag);
          if (it == 0) first = buf;
          net.send(buf.data(), cnt, MPI_FLOAT, 0, tag);
        }
      }
      net.stop();
      const zapp::ErrStats e1 = zapp::compare(x.data(), first.data(), r == 1 ? n : 0);
      const zapp::ErrStats ek = zapp::compare(x.data(), buf.data(), r == 0 ? n : 0);
      const double eb_abs = cfg.mode == "mpi" ? 0 : zapp::eb_abs_for(x.data(), n, cfg.eb_mode, cfg.eb);
      const double bound_final = 2.0 * c.iters * net.eb_abs_max();
      rec.num("floats", static_cast<double>(n), "%.0f", true);
      rec.num("offset", static_cast<double>(start), "%.0f");
      rec.num("rtt_us", 1e6 * net.total_s() / c.iters, "%.2f", true);
      rec.num("psnr_db", e1.psnr_db, "%.2f", true);
      rec.num("nrmse", e1.nrmse, "%.3g");
      rec.within("max_err", e1.max_abs, eb_abs);
      rec.num("psnr_final_db", ek.psnr_db, "%.2f");
      rec.within("max_err_final", ek.max_abs, bound_final);
    };
    status |= zapp::run_configs("pingpong", c, body);
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) { return zapp::app_main(argc, argv, "zcoll-pingpong", kUsage, run); }
