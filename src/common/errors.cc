#include <cstdarg>
#include <cstdio>

#include "common/error_detail.h"
#include "zcoll.h"

namespace {
thread_local char g_detail[512];
}

namespace zcoll {

void set_error_detail(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(g_detail, sizeof g_detail, fmt, ap);
  va_end(ap);
}

void clear_error_detail() { g_detail[0] = '\0'; }

}  // namespace zcoll

extern "C" {

const char* zcoll_strerror(int err) {
  switch (err) {
    case ZCOLL_SUCCESS: return "success";
    case ZCOLL_ERR_ARG: return "invalid argument (null pointer, bad count, or eb not a positive finite number)";
    case ZCOLL_ERR_DTYPE: return "unsupported element type (only float32 and float64 are compressed)";
    case ZCOLL_ERR_CODEC: return "unknown codec";
    case ZCOLL_ERR_BUFFER_TOO_SMALL: return "output buffer too small (zcoll_codec_bound gives a size that always fits)";
    case ZCOLL_ERR_CORRUPT: return "compressed stream is truncated or corrupt";
    case ZCOLL_ERR_VERSION: return "compressed stream has an unknown format version";
    case ZCOLL_ERR_MISMATCH: return "mismatch: a stream holds another element type or count than requested, or ranks disagree on a setting or argument (see zcoll_error_detail)";
    case ZCOLL_ERR_NO_MEMORY: return "out of memory";
    case ZCOLL_ERR_MPI: return "an MPI call failed";
    case ZCOLL_ERR_INTERNAL: return "internal error in zcoll";
    case ZCOLL_ERR_TRUNCATE: return "message truncated: it holds more elements than the receive count";
    case ZCOLL_ERR_IO: return "file input/output failed (see zcoll_error_detail)";
    default: return "unknown zcoll error code";
  }
}

const char* zcoll_version_string(void) { return "0.1.0"; }

const char* zcoll_error_detail(void) { return g_detail; }

}  // extern "C"
