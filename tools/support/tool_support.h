// Shared by zcoll-bench (bench/) and the applications (apps/): the raw field files of data/
// and ../shared/datasets, codec names from zcoll's registry, JSON text, the MPI library's
// name, medians and value ranges. Each existed in several copies that had begun to differ.
#ifndef ZCOLL_TOOL_SUPPORT_H
#define ZCOLL_TOOL_SUPPORT_H

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "zcoll.h"

namespace zsupport {

// A command-line mistake: the tools print it with their usage text and exit with status 2.
struct UsageError {
  std::string msg;
};

// v as a whole number in [lo, hi]; otherwise UsageError "bad value for NAME: V".
long parse_long(const std::string& name, const std::string& v, long lo, long hi);
// "a,b,,c" -> {a, b, "", c}, or without the empty items where keep_empty is false.
std::vector<std::string> split_list(const std::string& s, bool keep_empty);

// ------------------------------------------------------------------------ field files

// The whole file; false with "cannot open PATH" in *err.
bool read_file(const std::string& path, std::vector<unsigned char>* bytes, std::string* err);
// A raw little-endian array of float or double (the hosts are x86-64 and arm64); false with
// the reason in *err if the file cannot be read or is not a positive number of elements.
template <class T>
bool read_values(const std::string& path, std::vector<T>* values, std::string* err);
// "f32" or "f64" from the .f32/.f64 suffix; "" for any other name.
std::string dtype_from_name(const std::string& path);
// A .f32 or .f64 file's values as double (float32 widened); false with the reason in *err,
// also for a name with neither suffix.
bool read_as_double(const std::string& path, std::vector<double>* values, std::string* err);
// "10x192x288" -> {10, 192, 288}; {} unless every extent is a positive decimal number.
std::vector<size_t> parse_extents(const std::string& s);
// The extents after the last '_' of the file name: "cesm_TS_10x192x288.f32" -> {10, 192, 288},
// slowest axis first; {} where the name has none.
std::vector<size_t> shape_from_name(const std::string& path);
// data/NAME in the source tree (the fields shipped with zcoll; see data/MANIFEST.md).
std::string data_file(const std::string& name);
// ../shared/datasets/NAME (the project's full set) where that exists, else data/NAME.
std::string dataset_file(const std::string& name);
// Every .f32/.f64 field of the directories in $ZCOLL_DATA_DIRS (colon-separated), or else of
// data/ and ../shared/datasets; sorted within a directory, a file name listed once (data/
// holds copies of some shared fields, and the first directory wins).
std::vector<std::string> field_files();

// ---------------------------------------------------------------------------- numbers

double median(std::vector<double> v);

// The finite values' extremes and largest magnitude, for zcoll.h's REL rule.
struct ValueRange {
  double lo = INFINITY, hi = -INFINITY, mag = 0;
  template <class T>
  void add(const T* x, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      const double v = x[i];
      if (!std::isfinite(v)) continue;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
      mag = std::max(mag, std::fabs(v));
    }
  }
  // The absolute bound zcoll resolves for REL eb: eb x (max - min); without a range,
  // eb x max |x|; without a finite nonzero value, eb itself.
  double rel_bound(double eb) const { return hi > lo ? eb * (hi - lo) : mag > 0 ? eb * mag : eb; }
};

// 20 log10(range / rmse); infinite for an exact result or a constant reference.
inline double psnr_db(double range, double rmse) {
  return rmse > 0 && range > 0 ? 20 * std::log10(range / rmse) : INFINITY;
}
inline double nrmse(double range, double rmse) { return range > 0 ? rmse / range : 0; }

// ------------------------------------------------------------------------------- text

std::string format(const char* fmt, double v);
std::string json_escape(const std::string& s);  // without the quotes
std::string json_string(const std::string& s);  // with them
// JSON has no infinity or NaN: a non-finite value prints as null.
std::string json_number(double v, const char* fmt = "%.9g");

// ------------------------------------------------------------------ zcoll's registries

// The zcoll_codec_id called name (ASCII case ignored), or 0 for none.
int codec_id(const std::string& name);
// Every codec's name, in id order, joined by sep, the last two by last_sep:
// codec_names("|", "|") = "fzl|lpbyte|lpbit|szx", codec_names(", ", " or ") = "fzl, ..., lpbit or szx".
std::string codec_names(const char* sep, const char* last_sep);

// ------------------------------------------------------------------------------- MPI

// The first line of MPI_Get_library_version, tabs as spaces: which MPI produced a result.
std::string mpi_library();

// Times one call of a collective after an MPI_Barrier: the slowest rank's time. *code: 0
// where it succeeded on every rank, else this rank's code, or the largest over the ranks.
double time_call(const std::function<int()>& call, int* code, MPI_Comm comm = MPI_COMM_WORLD);

// Times warmup + iters calls of a collective (call returns an MPI or zcoll code, 0 for
// success), each after an MPI_Barrier, and keeps the slowest rank's time of the last iters
// in *times; returns their median. Where a call fails on any rank, stops there on every
// rank with this rank's code, or else the largest over the ranks, in *code (else 0).
double time_collective(int warmup, int iters, const std::function<int()>& call, int* code,
                       std::vector<double>* times);

}  // namespace zsupport

#endif
