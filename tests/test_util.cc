#include "test_util.h"

#include <sys/stat.h>

#include <fstream>
#include <map>
#include <mutex>

#ifndef ZCOLL_TEST_DATA_DIR
#define ZCOLL_TEST_DATA_DIR "data"
#endif
#ifndef ZCOLL_TEST_SHARED_DIR
#define ZCOLL_TEST_SHARED_DIR ""
#endif

namespace zt {

static bool is_dir(const std::string& p) {
  struct stat st;
  return !p.empty() && stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}
static bool is_file(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string data_dir() {
  const char* e = std::getenv("ZCOLL_TEST_DATA_DIR");
  return e && *e ? e : ZCOLL_TEST_DATA_DIR;
}

std::string shared_dir() {
  const char* e = std::getenv("ZCOLL_TEST_SHARED_DIR");
  std::string d = e ? e : ZCOLL_TEST_SHARED_DIR;
  return is_dir(d) ? d : std::string();
}

static std::string path_of(const FieldSpec& s) {
  return (s.shared ? shared_dir() : data_dir()) + "/" + s.file;
}

const std::vector<FieldSpec>& available_fields() {
  static const std::vector<FieldSpec> fields = [] {
    const std::vector<FieldSpec> all = {
        {"cesm_TS", "cesm_TS_10x192x288.f32", false, ZCOLL_FLOAT32, ZCOLL_FLOAT32, 3, {10, 192, 288}},
        {"echam5_T", "echam5_T_17x96x192.f32", false, ZCOLL_FLOAT32, ZCOLL_FLOAT32, 3, {17, 96, 192}},
        {"turb_wmag", "turb_wmag_91x91x91.f32", false, ZCOLL_FLOAT32, ZCOLL_FLOAT32, 3, {91, 91, 91}},
        // float32 fields converted to double: f64 coverage that never depends on ../shared
        {"cesm_TS_as_f64", "cesm_TS_10x192x288.f32", false, ZCOLL_FLOAT32, ZCOLL_FLOAT64, 3, {10, 192, 288}},
        {"echam5_T_as_f64", "echam5_T_17x96x192.f32", false, ZCOLL_FLOAT32, ZCOLL_FLOAT64, 3, {17, 96, 192}},
        {"turb_wmag_as_f64", "turb_wmag_91x91x91.f32", false, ZCOLL_FLOAT32, ZCOLL_FLOAT64, 3, {91, 91, 91}},
        {"seismic_mobilavo", "seismic_mobilavo_crg_60x1000.f32", true, ZCOLL_FLOAT32, ZCOLL_FLOAT32, 2, {60, 1000, 0}},
        {"nyx_phigrav", "nyx_phigrav_128x128x128.f64", true, ZCOLL_FLOAT64, ZCOLL_FLOAT64, 3, {128, 128, 128}},
        {"isabel_velmag", "isabel_velmag_t48_25x125x125.f64", true, ZCOLL_FLOAT64, ZCOLL_FLOAT64, 3, {25, 125, 125}},
    };
    std::vector<FieldSpec> v;
    bool missing_shared = false, missing_data = false;
    for (const auto& s : all) {
      if (s.shared && shared_dir().empty()) {
        missing_shared = true;
        continue;
      }
      if (!is_file(path_of(s))) {
        if (s.shared) missing_shared = true; else missing_data = true;
        continue;
      }
      v.push_back(s);
    }
    if (missing_shared)
      std::fprintf(stderr,
                   "zcoll tests: ../shared/datasets (or a file in it) is missing: the seismic f32 field and the "
                   "native f64 fields (nyx, isabel) are not covered; f64 coverage comes from the data/ "
                   "fields converted to double.\n");
    if (missing_data)
      std::fprintf(stderr, "zcoll tests: WARNING: fields missing from %s\n", data_dir().c_str());
    return v;
  }();
  return fields;
}

const Field& load_field(const FieldSpec& s, size_t max_values) {
  static std::mutex mu;
  static std::map<std::pair<std::string, size_t>, Field> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto key = std::make_pair(s.name, max_values);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;

  Field f;
  f.spec = s;
  size_t plane = 1;
  for (int d = 1; d < s.ndims; ++d) plane *= s.dims[d];
  size_t planes = std::min(s.dims[0], std::max<size_t>(1, max_values / plane));
  f.count = planes * plane;
  f.dims[0] = planes;
  for (int d = 1; d < s.ndims; ++d) f.dims[d] = s.dims[d];

  const size_t fes = esize(s.file_dtype);
  std::vector<unsigned char> raw(f.count * fes);
  std::ifstream in(path_of(s), std::ios::binary);
  in.read(reinterpret_cast<char*>(raw.data()), static_cast<std::streamsize>(raw.size()));
  if (!in || static_cast<size_t>(in.gcount()) != raw.size()) {
    std::fprintf(stderr, "zcoll tests: cannot read %s\n", path_of(s).c_str());
    std::abort();
  }
  // The files are little-endian; so is every host zcoll supports.
  if (s.file_dtype == ZCOLL_FLOAT32) {
    std::vector<float> v(f.count);
    std::memcpy(v.data(), raw.data(), raw.size());
    if (s.dtype == ZCOLL_FLOAT32) f.f32 = std::move(v);
    else f.f64.assign(v.begin(), v.end());
  } else {
    f.f64.resize(f.count);
    std::memcpy(f.f64.data(), raw.data(), raw.size());
  }
  return cache.emplace(key, std::move(f)).first->second;
}

}  // namespace zt
