#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "tool_support.h"

namespace fs = std::filesystem;

namespace zsupport {

bool read_file(const std::string& path, std::vector<unsigned char>* bytes, std::string* err) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    *err = "cannot open " + path;
    return false;
  }
  bytes->assign(std::istreambuf_iterator<char>(f), {});
  return true;
}

template <class T>
bool read_values(const std::string& path, std::vector<T>* values, std::string* err) {
  std::vector<unsigned char> raw;
  if (!read_file(path, &raw, err)) return false;
  if (raw.size() < sizeof(T) || raw.size() % sizeof(T)) {
    *err = path + ": size " + std::to_string(raw.size()) + " is not a positive multiple of " +
           std::to_string(sizeof(T)) + " bytes";
    return false;
  }
  values->resize(raw.size() / sizeof(T));
  std::memcpy(values->data(), raw.data(), raw.size());
  return true;
}
template bool read_values<float>(const std::string&, std::vector<float>*, std::string*);
template bool read_values<double>(const std::string&, std::vector<double>*, std::string*);

std::string dtype_from_name(const std::string& path) {
  const std::string ext = fs::path(path).extension().string();
  return ext == ".f32" ? "f32" : ext == ".f64" ? "f64" : "";
}

bool read_as_double(const std::string& path, std::vector<double>* values, std::string* err) {
  const std::string dtype = dtype_from_name(path);
  if (dtype == "f64") return read_values(path, values, err);
  std::vector<float> narrow;
  if (dtype.empty()) *err = path + ": the name must end in .f32 or .f64";
  if (dtype.empty() || !read_values(path, &narrow, err)) return false;
  values->assign(narrow.begin(), narrow.end());
  return true;
}

std::vector<size_t> parse_extents(const std::string& s) {
  std::vector<size_t> extents;
  for (size_t pos = 0;;) {
    const size_t x = s.find('x', pos);
    const std::string part = s.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos) return {};
    const unsigned long long e = std::strtoull(part.c_str(), nullptr, 10);
    if (e == 0) return {};
    extents.push_back(static_cast<size_t>(e));
    if (x == std::string::npos) return extents;
    pos = x + 1;
  }
}

std::vector<size_t> shape_from_name(const std::string& path) {
  const std::string stem = fs::path(path).stem().string();
  const size_t us = stem.rfind('_');
  return us == std::string::npos ? std::vector<size_t>{} : parse_extents(stem.substr(us + 1));
}

std::string data_file(const std::string& name) { return std::string(ZCOLL_SOURCE_DIR) + "/data/" + name; }

std::string dataset_file(const std::string& name) {
  const std::string shared = std::string(ZCOLL_SOURCE_DIR) + "/../shared/datasets/" + name;
  return std::ifstream(shared).good() ? shared : data_file(name);
}

std::vector<std::string> field_files() {
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("ZCOLL_DATA_DIRS")) {
    const std::string s = env;
    for (size_t pos = 0; pos <= s.size();) {
      const size_t c = s.find(':', pos);
      dirs.emplace_back(s.substr(pos, c - pos));
      if (c == std::string::npos) break;
      pos = c + 1;
    }
  } else {
    const fs::path src = ZCOLL_SOURCE_DIR;
    dirs = {src / "data", src / ".." / "shared" / "datasets"};
  }
  std::vector<std::string> files;
  std::set<std::string> seen;
  for (const auto& d : dirs) {
    std::error_code ec;
    if (!fs::is_directory(d, ec)) continue;
    std::vector<fs::path> here;
    for (const auto& e : fs::directory_iterator(d, ec))
      if (!dtype_from_name(e.path().string()).empty()) here.push_back(e.path());
    std::sort(here.begin(), here.end());
    for (const auto& f : here)
      if (seen.insert(f.filename().string()).second) files.push_back(f.string());
  }
  return files;
}

}  // namespace zsupport
