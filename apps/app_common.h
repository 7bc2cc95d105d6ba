// Shared by the four seed-002 applications (zcoll-pingpong, zcoll-himeno, zcoll-kmeans,
// zcoll-fft2d): flags, configurations, the communication layer that runs either plain MPI or
// zcoll and counts bytes and time, field loading, error metrics and the output (a table, or
// one JSON line per configuration).
#ifndef ZCOLL_APPS_APP_COMMON_H
#define ZCOLL_APPS_APP_COMMON_H

#include <cstddef>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tool_support.h"
#include "zcoll.h"

namespace zapp {

extern int g_rank, g_size;

using zsupport::UsageError;

// --name value, --name=value, or a bare --name (a switch). Every lookup marks the flag as
// known; finish() rejects the rest, so a typo is an error rather than a silent default.
class Args {
 public:
  Args(int argc, char** argv);
  bool flag(const std::string& name);
  std::string str(const std::string& name, const std::string& def);
  long integer(const std::string& name, long def, long lo, long hi);
  std::vector<std::string> list(const std::string& name, const std::string& def);  // comma-separated
  std::vector<double> reals(const std::string& name, const std::string& def, bool positive);
  std::vector<long> integers(const std::string& name, const std::string& def, long lo, long hi);
  void finish() const;

 private:
  const std::string* find(const std::string& name);
  std::map<std::string, std::string> kv_;
  std::set<std::string> switches_, known_;
};

// The flags every application takes (see common_usage()).
struct Common {
  std::vector<std::string> modes, codecs, eb_modes;
  std::vector<double> ebs;
  int iters = 0, threads = 1;
  size_t min_bytes = 0;
  bool json = false;
  std::string input;
};
std::string common_usage();
Common parse_common(Args& a, int default_iters, const std::string& default_input);

// One run of an application: plain MPI, or zcoll with a codec and a bound.
struct Config {
  std::string mode, codec, eb_mode;  // codec and eb_mode "-" for mpi
  double eb = 0;
};

// Rank 0's output for one configuration: fields in insertion order; those marked for the
// table also form its columns.
class Record {
 public:
  void num(const std::string& key, double v, const char* fmt = "%.6g", bool table = false);
  void str(const std::string& key, const std::string& v, bool table = false);
  // A quality metric must stay within what the error bound implies: value <= bound, else the
  // failure is printed and the exit status is 1 (also for a NaN).
  void check(const std::string& what, double value, double bound);
  // check() on an error reported as key, with key_bound and key_over_bound (in the table).
  void within(const std::string& key, double value, double bound);
  void append(const Record& other);
  std::string json() const;
  std::string table_header() const;
  std::string table_row() const;
  std::vector<std::string> failures;

 private:
  struct Field {
    std::string key, json, text;
    bool table;
  };
  std::vector<Field> fields_;
};

// Plain MPI or zcoll behind one interface, with the counts the output needs: time spent
// communicating (compression included), and bytes before/after compression as zcoll_last_stats
// reports them after each collective and each send (the wire bytes include zcoll's envelope
// and stream headers; messages zcoll did not compress are not counted in either). Collective
// constructor and destructor (zcoll_comm_create/free). A failed call prints its error and
// aborts the job: these are benchmarks, and a silent wrong number is worse than no number.
class Net {
 public:
  Net(const Config& cfg, const Common& c);
  ~Net();
  Net(const Net&) = delete;
  Net& operator=(const Net&) = delete;
  bool zcoll() const { return zc_ != nullptr; }

  void send(const void* buf, int n, MPI_Datatype t, int dest, int tag);
  void recv(void* buf, int n, MPI_Datatype t, int src, int tag);
  void isend(const void* buf, int n, MPI_Datatype t, int dest, int tag);  // MPI_PROC_NULL: nothing
  void irecv(void* buf, int n, MPI_Datatype t, int src, int tag);
  void waitall();
  void bcast(void* buf, int n, MPI_Datatype t, int root);
  void scatter(const void* sbuf, void* rbuf, int n, MPI_Datatype t, int root);
  void alltoall(const void* sbuf, void* rbuf, int n, MPI_Datatype t);
  // Small control data (sums, counts): plain MPI in either mode, counted as communication.
  void allreduce(void* buf, int n, MPI_Datatype t, MPI_Op op);
  void reduce(void* buf, int n, MPI_Datatype t, MPI_Op op, int root);

  // The application's timed region.
  void start();
  void stop();
  double total_s() const { return total_s_; }
  double comm_s() const { return comm_s_; }
  // Largest absolute bound zcoll used for any message so far, over all ranks. Collective.
  double eb_abs_max() const;

  // Over all ranks: bytes summed, times and bounds maxed. Collective.
  struct Totals {
    double raw_bytes = 0, wire_bytes = 0, total_s = 0, comm_s = 0, eb_abs_max = 0;
    double calls = 0, compressed = 0;  // sending calls (a collective counts on each rank)
  };
  Totals totals() const;

 private:
  void timed(const char* name, bool zcoll_code, const std::function<int()>& call);
  // zcoll's call or MPI's, timed.
  void either(const char* zname, const char* mname, const std::function<int()>& z, const std::function<int()>& m);
  // A call that sends (a collective, send, isend): either(), then count_message().
  void sending(const char* zname, const char* mname, const std::function<int()>& z, const std::function<int()>& m);
  void count_message();
  bool new_request(int peer);

  zcoll_comm zc_ = nullptr;
  std::vector<MPI_Request> mreq_;
  std::vector<zcoll_request> zreq_;
  double comm_s_ = 0, total_s_ = 0, t_start_ = 0, eb_abs_max_ = 0;
  double raw_ = 0, wire_ = 0, calls_ = 0, compressed_ = 0;
};

// Runs the plain-MPI reference first (twice: the first run is an unreported warm-up), then
// every zcoll configuration of c (bound modes x codecs x bounds), each right after another
// unreported plain-MPI run, all through run(cfg, net, rec). run fills the application's
// fields and failures; this adds the common ones (mode, codec, bound, bytes and ratio,
// times, speedup against the plain-MPI run just before) and prints. The reference is printed only where c.modes lists mpi. Returns 1 if any
// configuration failed its check, else 0.
using RunFn = std::function<void(const Config&, Net&, Record&)>;
int run_configs(const std::string& app, const Common& c, const RunFn& run);

// A raw little-endian float32/float64 field (dtype from the .f32/.f64 suffix, shape from the
// _AxBxC before it, slowest axis first), every value widened to double.
struct Field {
  std::string path;
  std::vector<size_t> shape;
  std::vector<double> v;
};
Field load_field(const std::string& path);
using zsupport::dataset_file;

// got against ref over all ranks (collective): max |got - ref|, rmse, the reference's range,
// PSNR = 20 log10(range / rmse), NRMSE = rmse / range and ||got - ref|| / ||ref||.
struct ErrStats {
  double max_abs = 0, rmse = 0, range = 0, psnr_db = 0, nrmse = 0, l2_rel = 0;
};
template <class T>
ErrStats compare(const T* ref, const T* got, size_t n);

// The absolute bound zcoll resolves for a message: ABS as given, REL = eb x (max - min).
template <class T>
double eb_abs_for(const T* x, size_t n, const std::string& eb_mode, double eb);

// Parses argv, runs body, reports usage errors (exit 2), finalizes MPI.
int app_main(int argc, char** argv, const char* name, const char* usage, const std::function<int(Args&)>& body);

}  // namespace zapp

#endif
