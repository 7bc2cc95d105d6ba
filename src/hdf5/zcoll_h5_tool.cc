// zcoll-h5: looks into files written by zcoll_h5_writer (docs/hdf5.md).
//   zcoll-h5 ls FILE                          fields, types, dims, bounds, sizes, ratios
//   zcoll-h5 cat FILE FIELD [OUT]             the field's values, raw little-endian, to OUT or stdout
//   zcoll-h5 export FILE FIELD OUT.h5 [NAME]  the field as a plain (uncompressed) HDF5 dataset
//   zcoll-h5 verify FILE FIELD REFERENCE      compares with a raw file of the original values
// Exit status: 0 success, 1 a check failed or the file is damaged, 2 usage.
// Reading needs no MPI launcher: the reader calls no MPI.
#include <hdf5.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "zcoll_h5io.h"

namespace {

int usage() {
  std::fprintf(stderr,
               "usage: zcoll-h5 ls FILE\n"
               "       zcoll-h5 cat FILE FIELD [OUT]\n"
               "       zcoll-h5 export FILE FIELD OUT.h5 [DATASET]\n"
               "       zcoll-h5 verify FILE FIELD REFERENCE.raw\n");
  return 2;
}

int fail(const char* what, int rc) {
  std::fprintf(stderr, "zcoll-h5: %s: %s", what, zcoll_strerror(rc));
  if (*zcoll_h5_error_detail()) std::fprintf(stderr, " (%s)", zcoll_h5_error_detail());
  std::fprintf(stderr, "\n");
  return 1;
}

const char* codec_name(int c) {
  static const char* names[] = {"?", "fzl", "lpbyte", "lpbit", "szx"};
  return c >= 1 && c <= 4 ? names[c] : "?";
}

std::string dims_text(const zcoll_h5_field_info& in) {
  std::string s;
  for (int d = 0; d < in.ndims; ++d) s += (d ? "x" : "") + std::to_string(in.dims[d]);
  return s;
}

uint64_t count_of(const zcoll_h5_field_info& in) {
  uint64_t n = 1;
  for (int d = 0; d < in.ndims; ++d) n *= in.dims[d];
  return n;
}

// The whole field, in its own type.
int read_whole(zcoll_h5_reader rd, const zcoll_h5_field_info& in, std::vector<uint8_t>* out) {
  const size_t es = in.dtype == ZCOLL_FLOAT32 ? 4 : 8;
  out->resize(count_of(in) * es);
  std::vector<uint64_t> start(in.ndims, 0), count(in.dims, in.dims + in.ndims);
  return zcoll_h5_read_field(rd, in.name, in.dtype, start.data(), count.data(), out->data(), 0);
}

int find_field(zcoll_h5_reader rd, const char* name, zcoll_h5_field_info* in) {
  int n = 0;
  zcoll_h5_reader_nfields(rd, &n);
  for (int i = 0; i < n; ++i)
    if (zcoll_h5_reader_field_info(rd, i, in) == ZCOLL_SUCCESS && std::strcmp(in->name, name) == 0) return 0;
  std::fprintf(stderr, "zcoll-h5: no field '%s'\n", name);
  return 1;
}

int cmd_ls(zcoll_h5_reader rd) {
  int n = 0;
  zcoll_h5_reader_nfields(rd, &n);
  std::printf("%-24s %-7s %-18s %-6s %-10s %-12s %12s %12s %8s %10s %5s\n", "field", "dtype", "dims", "codec",
              "eb", "eb_abs", "raw_bytes", "stored", "ratio", "overflow", "ranks");
  for (int i = 0; i < n; ++i) {
    zcoll_h5_field_info in;
    zcoll_h5_reader_field_info(rd, i, &in);
    const double stored = static_cast<double>(in.reserved_bytes + in.overflow_bytes);
    std::printf("%-24s %-7s %-18s %-6s %3s %-6.3g %-12.6g %12llu %12.0f %8.2f %10llu %5d\n", in.name,
                in.dtype == ZCOLL_FLOAT32 ? "float32" : "float64", dims_text(in).c_str(), codec_name(in.codec),
                in.eb_mode ? "rel" : "abs", in.eb, in.eb_abs, static_cast<unsigned long long>(in.raw_bytes), stored,
                stored > 0 ? static_cast<double>(in.raw_bytes) / stored : 0.0,
                static_cast<unsigned long long>(in.overflow_bytes), in.writer_ranks);
  }
  return 0;
}

int cmd_cat(zcoll_h5_reader rd, const char* field, const char* out) {
  zcoll_h5_field_info in;
  if (find_field(rd, field, &in)) return 1;
  std::vector<uint8_t> v;
  if (const int rc = read_whole(rd, in, &v)) return fail("reading the field", rc);
  FILE* f = out ? std::fopen(out, "wb") : stdout;
  if (!f || std::fwrite(v.data(), 1, v.size(), f) != v.size() || (out && std::fclose(f) != 0)) {
    std::fprintf(stderr, "zcoll-h5: cannot write %s\n", out ? out : "stdout");
    return 1;
  }
  return 0;
}

int cmd_export(zcoll_h5_reader rd, const char* field, const char* out, const char* dataset) {
  zcoll_h5_field_info in;
  if (find_field(rd, field, &in)) return 1;
  std::vector<uint8_t> v;
  if (const int rc = read_whole(rd, in, &v)) return fail("reading the field", rc);
  std::vector<hsize_t> dims(in.dims, in.dims + in.ndims);
  const hid_t type = in.dtype == ZCOLL_FLOAT32 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE;
  const hid_t mem = in.dtype == ZCOLL_FLOAT32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
  hid_t f = H5Fcreate(out, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hid_t s = H5Screate_simple(in.ndims, dims.data(), nullptr);
  hid_t d = f < 0 ? -1 : H5Dcreate2(f, dataset ? dataset : field, type, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  bool ok = d >= 0 && H5Dwrite(d, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) >= 0;
  // The bound the values are within, for whoever reads the plain copy.
  hid_t as = H5Screate(H5S_SCALAR);
  hid_t a = d < 0 ? -1 : H5Acreate2(d, "zcoll_eb_abs", H5T_IEEE_F64LE, as, H5P_DEFAULT, H5P_DEFAULT);
  ok = ok && a >= 0 && H5Awrite(a, H5T_NATIVE_DOUBLE, &in.eb_abs) >= 0;
  if (a >= 0) H5Aclose(a);
  H5Sclose(as);
  if (d >= 0) H5Dclose(d);
  H5Sclose(s);
  if (f >= 0) ok = H5Fclose(f) >= 0 && ok;
  if (!ok) {
    std::fprintf(stderr, "zcoll-h5: HDF5 could not write %s\n", out);
    return 1;
  }
  return 0;
}

int cmd_verify(zcoll_h5_reader rd, const char* field, const char* reference) {
  zcoll_h5_field_info in;
  if (find_field(rd, field, &in)) return 1;
  std::vector<uint8_t> v;
  if (const int rc = read_whole(rd, in, &v)) return fail("reading the field", rc);
  std::ifstream ref(reference, std::ios::binary | std::ios::ate);
  if (!ref || static_cast<uint64_t>(ref.tellg()) != v.size()) {
    std::fprintf(stderr, "zcoll-h5: %s is not %zu bytes (%s, %s)\n", reference, v.size(),
                 in.dtype == ZCOLL_FLOAT32 ? "float32" : "float64", dims_text(in).c_str());
    return 1;
  }
  std::vector<uint8_t> r(v.size());
  ref.seekg(0);
  ref.read(reinterpret_cast<char*>(r.data()), static_cast<std::streamsize>(r.size()));
  const uint64_t n = count_of(in);
  double max_err = 0;
  uint64_t outside = 0, nan_mismatch = 0;
  for (uint64_t i = 0; i < n; ++i) {
    double x, y;
    if (in.dtype == ZCOLL_FLOAT32) {
      float a, b;
      std::memcpy(&a, &r[i * 4], 4);
      std::memcpy(&b, &v[i * 4], 4);
      x = a;
      y = b;
    } else {
      std::memcpy(&x, &r[i * 8], 8);
      std::memcpy(&y, &v[i * 8], 8);
    }
    if (!std::isfinite(x)) {
      if (std::memcmp(&x, &y, 8) != 0 && !(std::isnan(x) && std::isnan(y))) ++nan_mismatch;
      continue;
    }
    const double e = std::fabs(x - y);
    if (!(e <= in.eb_abs)) ++outside;
    if (e > max_err || std::isnan(e)) max_err = e;
  }
  std::printf("%s: %llu values, max_err %.6g, eb_abs %.6g, max_err/eb %.6f, outside the bound %llu, non-finite mismatches %llu: %s\n",
              in.name, static_cast<unsigned long long>(n), max_err, in.eb_abs, max_err / in.eb_abs,
              static_cast<unsigned long long>(outside), static_cast<unsigned long long>(nan_mismatch),
              outside || nan_mismatch ? "FAILED" : "ok");
  return outside || nan_mismatch ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return usage();
  const std::string cmd = argv[1];
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  zcoll_h5_reader rd = nullptr;
  if (const int rc = zcoll_h5_reader_open(argv[2], &rd)) return fail(argv[2], rc);
  int status;
  if (cmd == "ls" && argc == 3) status = cmd_ls(rd);
  else if (cmd == "cat" && (argc == 4 || argc == 5)) status = cmd_cat(rd, argv[3], argc == 5 ? argv[4] : nullptr);
  else if (cmd == "export" && (argc == 5 || argc == 6)) status = cmd_export(rd, argv[3], argv[4], argc == 6 ? argv[5] : nullptr);
  else if (cmd == "verify" && argc == 5) status = cmd_verify(rd, argv[3], argv[4]);
  else status = usage();
  zcoll_h5_reader_close(&rd);
  return status;
}
