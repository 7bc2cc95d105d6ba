// The zcoll HDF5 filter (libH5Zzcoll.so): H5Z_class2_t with can_apply, set_local and the
// filter function, the plugin entry points, and zcoll_h5_set_filter. The cd_values layout
// is documented in include/zcoll_h5.h and docs/hdf5.md.
//
// Buffers: HDF5 hands the filter a buffer it allocated and takes back whatever *buf points
// to on return, freeing it later. A plugin may be linked against another C runtime than
// the library (Windows), so the filter allocates and frees those buffers only with
// H5allocate_memory / H5free_memory (HDF5 >= 1.8.15), never malloc/free.
#define ZCOLL_CODEC_ONLY 1
#include "zcoll.h"
#include "zcoll_h5.h"
#include "shape_hint.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace {

const char kName[] = "zcoll: error-bounded lossy compression (fzl, lpbyte, lpbit, szx)";

#define ZH5_ERR(maj, min, ...) \
  H5Epush2(H5E_DEFAULT, __FILE__, __func__, __LINE__, H5E_ERR_CLS, maj, min, __VA_ARGS__)

double eb_from_cd(const unsigned* cd) {
  uint64_t bits = (uint64_t)cd[ZCOLL_H5_CD_EB_LO] | ((uint64_t)cd[ZCOLL_H5_CD_EB_HI] << 32);
  double eb;
  std::memcpy(&eb, &bits, sizeof eb);
  return eb;
}

// 1 for little-endian IEEE float32 / float64 (H5T_NATIVE_FLOAT/DOUBLE on x86-64 and
// aarch64), 0 for any other type, -1 on an HDF5 error. *dtype gets the zcoll dtype.
int float_type(hid_t type, zcoll_dtype* dtype) {
  htri_t f32 = H5Tequal(type, H5T_IEEE_F32LE);
  htri_t f64 = H5Tequal(type, H5T_IEEE_F64LE);
  if (f32 < 0 || f64 < 0) return -1;
  if (f32 > 0) { *dtype = ZCOLL_FLOAT32; return 1; }
  if (f64 > 0) { *dtype = ZCOLL_FLOAT64; return 1; }
  return 0;
}

// The user's part of the cd_values: version, codec, eb mode, eb. Returns "" when they are
// valid, else what is wrong.
const char* check_user_cd(size_t n, const unsigned* cd) {
  if (n < ZCOLL_H5_CD_NUSER)
    return "needs at least 5 cd_values: version (1), codec, eb mode, eb low and high 32 bits "
           "(zcoll_h5_cd_values)";
  if (cd[ZCOLL_H5_CD_VERSION] != ZCOLL_H5_CD_FORMAT_VERSION)
    return "unknown cd_values format version (this plugin reads version 1; a newer zcoll wrote it?)";
  if (!zcoll_codec_name((int)cd[ZCOLL_H5_CD_CODEC])) return "unknown codec id in cd_values[1]";
  if (cd[ZCOLL_H5_CD_EB_MODE] != ZCOLL_EB_ABS && cd[ZCOLL_H5_CD_EB_MODE] != ZCOLL_EB_REL)
    return "eb mode in cd_values[2] must be 0 (ABS) or 1 (REL)";
  double eb = eb_from_cd(cd);
  if (!(eb > 0) || !std::isfinite(eb)) return "eb in cd_values[3..4] must be a positive finite double";
  return "";
}

htri_t can_apply(hid_t dcpl, hid_t type, hid_t /*space*/) {
  zcoll_dtype dt;
  int f = float_type(type, &dt);
  if (f < 0) return -1;
  if (f == 0) {
    ZH5_ERR(H5E_PLINE, H5E_CANTINIT,
            "zcoll filter: the datatype must be little-endian IEEE float32 or float64 "
            "(H5T_NATIVE_FLOAT / H5T_NATIVE_DOUBLE)");
    return 0;
  }
  H5D_layout_t layout = H5Pget_layout(dcpl);
  if (layout < 0) return -1;
  if (layout != H5D_CHUNKED) {
    ZH5_ERR(H5E_PLINE, H5E_CANTINIT, "zcoll filter: the dataset must have a chunked layout");
    return 0;
  }
  return 1;
}

herr_t set_local(hid_t dcpl, hid_t type, hid_t /*space*/) {
  unsigned flags = 0;
  size_t n = ZCOLL_H5_CD_MAX;
  unsigned cd[ZCOLL_H5_CD_MAX] = {0};
  if (H5Pget_filter_by_id2(dcpl, H5Z_FILTER_ZCOLL, &flags, &n, cd, 0, nullptr, nullptr) < 0)
    return -1;
  const char* bad = check_user_cd(n, cd);
  if (*bad) {
    ZH5_ERR(H5E_PLINE, H5E_BADVALUE, "zcoll filter: %s", bad);
    return -1;
  }
  zcoll_dtype dt;
  if (float_type(type, &dt) != 1) {
    ZH5_ERR(H5E_PLINE, H5E_BADTYPE, "zcoll filter: not a little-endian IEEE float32/float64 type");
    return -1;
  }
  hsize_t chunk[H5S_MAX_RANK];
  int rank = H5Pget_chunk(dcpl, H5S_MAX_RANK, chunk);
  if (rank <= 0) {
    ZH5_ERR(H5E_PLINE, H5E_BADVALUE, "zcoll filter: the dataset must have a chunked layout");
    return -1;
  }
  uint64_t ext[3];
  const int r = zcoll::h5::fold_shape(chunk, rank, ext);
  for (int i = 0; i < r; ++i) {
    if (ext[i] > 0xffffffffull) {
      ZH5_ERR(H5E_PLINE, H5E_BADVALUE, "zcoll filter: chunk extent too large for the shape hint");
      return -1;
    }
  }
  cd[ZCOLL_H5_CD_DTYPE] = (unsigned)dt;
  cd[ZCOLL_H5_CD_NDIMS] = (unsigned)r;
  for (int i = 0; i < r; ++i) cd[ZCOLL_H5_CD_DIMS + i] = (unsigned)ext[i];
  return H5Pmodify_filter(dcpl, H5Z_FILTER_ZCOLL, flags, (size_t)(ZCOLL_H5_CD_DIMS + r), cd);
}

// OpenMP threads per chunk: ZCOLL_H5_THREADS (0 = the OpenMP default), else 1. HDF5 calls
// filters one chunk at a time, chunks are usually small, and a parallel HDF5 program
// already runs one process per core. The stream does not depend on the count.
int filter_threads() {
  const char* s = std::getenv("ZCOLL_H5_THREADS");
  if (s && *s) {
    char* end = nullptr;
    long v = std::strtol(s, &end, 10);
    if (end && *end == '\0' && v >= 0 && v <= 1024) return (int)v;
  }
  return 1;
}

size_t filter(unsigned flags, size_t cd_nelmts, const unsigned cd_values[], size_t nbytes,
              size_t* buf_size, void** buf) {
  const char* bad = check_user_cd(cd_nelmts, cd_values);
  if (*bad) {
    ZH5_ERR(H5E_PLINE, H5E_BADVALUE, "zcoll filter: %s", bad);
    return 0;
  }
  if (cd_nelmts < ZCOLL_H5_CD_DIMS + 1) {
    ZH5_ERR(H5E_PLINE, H5E_BADVALUE, "zcoll filter: cd_values lack the dtype and shape (set_local did not run?)");
    return 0;
  }
  const unsigned dtv = cd_values[ZCOLL_H5_CD_DTYPE], nd = cd_values[ZCOLL_H5_CD_NDIMS];
  if ((dtv != ZCOLL_FLOAT32 && dtv != ZCOLL_FLOAT64) || nd < 1 || nd > 3 ||
      cd_nelmts < (size_t)ZCOLL_H5_CD_DIMS + nd) {
    ZH5_ERR(H5E_PLINE, H5E_BADVALUE, "zcoll filter: bad dtype or shape in cd_values");
    return 0;
  }
  const zcoll_dtype dt = (zcoll_dtype)dtv;
  const size_t esize = dt == ZCOLL_FLOAT32 ? 4 : 8;
  size_t count = 1;
  for (unsigned i = 0; i < nd; ++i) count *= cd_values[ZCOLL_H5_CD_DIMS + i];
  const int threads = filter_threads();

  if (flags & H5Z_FLAG_REVERSE) {
    // Decompress: validate the stream (header, index, checksums) before anything else.
    zcoll_stream_info info;
    int rc = zcoll_stream_inspect(*buf, nbytes, &info);
    if (rc != ZCOLL_SUCCESS) {
      ZH5_ERR(H5E_PLINE, H5E_READERROR, "zcoll filter: chunk of %zu bytes: %s", nbytes, zcoll_strerror(rc));
      return 0;
    }
    if (info.dtype != dt || info.count != count) {
      ZH5_ERR(H5E_PLINE, H5E_READERROR,
              "zcoll filter: chunk stream holds %zu values of dtype %d, the dataset's chunk %zu of dtype %d",
              info.count, (int)info.dtype, count, (int)dt);
      return 0;
    }
    const size_t out_bytes = count * esize;
    void* out = H5allocate_memory(out_bytes, false);
    if (!out) {
      ZH5_ERR(H5E_PLINE, H5E_CANTALLOC, "zcoll filter: cannot allocate %zu bytes", out_bytes);
      return 0;
    }
    rc = zcoll_decompress(*buf, nbytes, dt, out, count, threads);
    if (rc != ZCOLL_SUCCESS) {
      H5free_memory(out);
      ZH5_ERR(H5E_PLINE, H5E_READERROR, "zcoll filter: %s", zcoll_strerror(rc));
      return 0;
    }
    H5free_memory(*buf);
    *buf = out;
    *buf_size = out_bytes;
    return out_bytes;
  }

  // Compress. HDF5 always passes whole chunks (edge chunks padded with fill values).
  if (nbytes != count * esize) {
    ZH5_ERR(H5E_PLINE, H5E_WRITEERROR, "zcoll filter: chunk of %zu bytes, expected %zu values of %zu bytes",
            nbytes, count, esize);
    return 0;
  }
  zcoll_codec_params p;
  zcoll_codec_params_init(&p);
  p.codec = (int)cd_values[ZCOLL_H5_CD_CODEC];
  p.eb_mode = (int)cd_values[ZCOLL_H5_CD_EB_MODE];
  p.eb = eb_from_cd(cd_values);
  p.threads = threads;
  p.ndims = (int)nd;
  for (unsigned i = 0; i < nd; ++i) p.dims[i] = cd_values[ZCOLL_H5_CD_DIMS + i];
  const size_t cap = zcoll_codec_bound(count, dt);
  if (cap == 0) {
    ZH5_ERR(H5E_PLINE, H5E_WRITEERROR, "zcoll filter: chunk too large");
    return 0;
  }
  void* out = H5allocate_memory(cap, false);
  if (!out) {
    ZH5_ERR(H5E_PLINE, H5E_CANTALLOC, "zcoll filter: cannot allocate %zu bytes", cap);
    return 0;
  }
  size_t size = 0;
  int rc = zcoll_compress(&p, dt, *buf, count, out, cap, &size, nullptr);
  if (rc != ZCOLL_SUCCESS) {
    H5free_memory(out);
    ZH5_ERR(H5E_PLINE, H5E_WRITEERROR, "zcoll filter: %s %s", zcoll_strerror(rc), zcoll_error_detail());
    return 0;
  }
  H5free_memory(*buf);
  *buf = out;
  *buf_size = cap;
  return size;
}

const H5Z_class2_t kClass = {
    H5Z_CLASS_T_VERS,
    (H5Z_filter_t)H5Z_FILTER_ZCOLL,
    1,  // encoder present
    1,  // decoder present
    kName,
    can_apply,
    set_local,
    filter,
};

}  // namespace

extern "C" {

H5PL_type_t H5PLget_plugin_type(void) { return H5PL_TYPE_FILTER; }
const void* H5PLget_plugin_info(void) { return &kClass; }

// H5Zregister replaces an earlier registration of the same id, so calling it again is
// harmless; asking H5Zfilter_avail first would search HDF5_PLUGIN_PATH and could load a
// second copy of the plugin.
herr_t zcoll_h5_register(void) { return H5Zregister(&kClass); }

size_t zcoll_h5_cd_values(int codec, int eb_mode, double eb, unsigned int cd_values[5]) {
  uint64_t bits;
  std::memcpy(&bits, &eb, sizeof bits);
  cd_values[ZCOLL_H5_CD_VERSION] = ZCOLL_H5_CD_FORMAT_VERSION;
  cd_values[ZCOLL_H5_CD_CODEC] = (unsigned)codec;
  cd_values[ZCOLL_H5_CD_EB_MODE] = (unsigned)eb_mode;
  cd_values[ZCOLL_H5_CD_EB_LO] = (unsigned)(bits & 0xffffffffu);
  cd_values[ZCOLL_H5_CD_EB_HI] = (unsigned)(bits >> 32);
  return ZCOLL_H5_CD_NUSER;
}

herr_t zcoll_h5_set_filter(hid_t dcpl, int codec, int eb_mode, double eb) {
  unsigned cd[ZCOLL_H5_CD_NUSER];
  zcoll_h5_cd_values(codec, eb_mode, eb, cd);
  const char* bad = check_user_cd(ZCOLL_H5_CD_NUSER, cd);
  if (*bad) {
    ZH5_ERR(H5E_ARGS, H5E_BADVALUE, "zcoll_h5_set_filter: %s", bad);
    return -1;
  }
  if (zcoll_h5_register() < 0) return -1;
  return H5Pset_filter(dcpl, H5Z_FILTER_ZCOLL, H5Z_FLAG_MANDATORY, ZCOLL_H5_CD_NUSER, cd);
}

}  // extern "C"
