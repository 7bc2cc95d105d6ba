#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "tool_support.h"

namespace zsupport {

long parse_long(const std::string& name, const std::string& v, long lo, long hi) {
  char* end = nullptr;
  errno = 0;
  const long x = std::strtol(v.c_str(), &end, 10);
  if (errno || end == v.c_str() || *end || x < lo || x > hi) throw UsageError{"bad value for " + name + ": " + v};
  return x;
}

std::vector<std::string> split_list(const std::string& s, bool keep_empty) {
  std::vector<std::string> out;
  for (size_t pos = 0;;) {
    const size_t comma = std::min(s.find(',', pos), s.size());
    if (keep_empty || comma > pos) out.push_back(s.substr(pos, comma - pos));
    if (comma == s.size()) return out;
    pos = comma + 1;
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string format(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

std::string json_escape(const std::string& s) {
  std::string o;
  for (unsigned char ch : s) {
    if (ch == '"' || ch == '\\') o += '\\';
    if (ch < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", ch);
      o += buf;
    } else {
      o += static_cast<char>(ch);
    }
  }
  return o;
}

std::string json_string(const std::string& s) { return "\"" + json_escape(s) + "\""; }

std::string json_number(double v, const char* fmt) { return std::isfinite(v) ? format(fmt, v) : "null"; }

int codec_id(const std::string& name) {
  int id = 0;
  return zcoll_codec_from_name(name.c_str(), &id) == ZCOLL_SUCCESS ? id : 0;
}

std::string codec_names(const char* sep, const char* last_sep) {
  std::string out;
  for (int id = 1; const char* name = zcoll_codec_name(id); ++id) {
    if (id > 1) out += zcoll_codec_name(id + 1) ? sep : last_sep;
    out += name;
  }
  return out;
}

}  // namespace zsupport
