/*
 * zcoll_h5.h: the zcoll HDF5 filter (libH5Zzcoll.so). Separate from zcoll.h, which stays
 * free of HDF5; this header needs <hdf5.h> (serial or parallel HDF5 1.10+).
 *
 * The filter applies any zcoll codec (fzl, lpbyte, lpbit, szx) to each chunk of a chunked
 * float32 or float64 dataset, with zcoll's error bound. Applications that only read need
 * nothing but HDF5_PLUGIN_PATH pointing at the directory of libH5Zzcoll.so (h5dump, h5py,
 * any HDF5 program). See docs/hdf5.md.
 *
 * Filter id: H5Z_FILTER_ZCOLL = 401, in HDF5's range for unregistered / testing filters
 * (256-511). It is not registered with The HDF Group; a file written with it is readable by
 * anyone with this plugin, and another unregistered filter may use the same number.
 *
 * cd_values (unsigned int each), format version 1:
 *   [0] ZCOLL_H5_CD_VERSION   format version of the cd_values, 1
 *   [1] ZCOLL_H5_CD_CODEC     zcoll_codec_id (1 fzl, 2 lpbyte, 3 lpbit, 4 szx)
 *   [2] ZCOLL_H5_CD_EB_MODE   zcoll_eb_mode (0 ABS, 1 REL)
 *   [3] ZCOLL_H5_CD_EB_LO     eb (a double): low 32 bits of its IEEE-754 representation
 *   [4] ZCOLL_H5_CD_EB_HI     eb: high 32 bits
 *   -- the user sets [0..4] (5 values); the filter's set_local appends the rest:
 *   [5] ZCOLL_H5_CD_DTYPE     zcoll_dtype of the dataset (1 float32, 2 float64)
 *   [6] ZCOLL_H5_CD_NDIMS     rank of the shape hint, 1..3
 *   [7..7+ndims) the chunk's extents as the shape hint, slowest first (see docs/hdf5.md
 *                for ranks above 3 and extents of 1)
 *
 * Bound: ABS gives |x - x'| <= eb for every element of the dataset. REL is resolved per
 * chunk: |x - x'| <= eb x (max - min of that chunk as HDF5 hands it to the filter,
 * including the fill values of a partial edge chunk). For a dataset-wide bound use ABS
 * (with eb = eb_rel x the dataset's range if you want a relative one).
 */
#ifndef ZCOLL_H5_H
#define ZCOLL_H5_H

#include <hdf5.h>

#ifdef __cplusplus
extern "C" {
#endif
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#define H5Z_FILTER_ZCOLL 401
#define ZCOLL_H5_CD_FORMAT_VERSION 1u

enum zcoll_h5_cd_index {
  ZCOLL_H5_CD_VERSION = 0,
  ZCOLL_H5_CD_CODEC = 1,
  ZCOLL_H5_CD_EB_MODE = 2,
  ZCOLL_H5_CD_EB_LO = 3,
  ZCOLL_H5_CD_EB_HI = 4,
  ZCOLL_H5_CD_NUSER = 5,   /* values the user gives (H5Pset_filter, h5py compression_opts) */
  ZCOLL_H5_CD_DTYPE = 5,
  ZCOLL_H5_CD_NDIMS = 6,
  ZCOLL_H5_CD_DIMS = 7,
  ZCOLL_H5_CD_MAX = 10     /* 7 + at most 3 extents */
};

/* Registers the filter with the HDF5 library this process uses (H5Zregister; idempotent).
 * Returns a non-negative value on success, negative on failure. Not needed for reading
 * through HDF5_PLUGIN_PATH. */
herr_t zcoll_h5_register(void);

/* Fills cd_values[0..4] (ZCOLL_H5_CD_NUSER values) for codec, eb_mode and eb. For
 * H5Pset_filter or h5py's compression_opts. Returns ZCOLL_H5_CD_NUSER. */
size_t zcoll_h5_cd_values(int codec, int eb_mode, double eb, unsigned int cd_values[5]);

/* Registers the filter and adds it to dcpl (a dataset creation property list, which must
 * have a chunked layout by the time the dataset is created) as a mandatory filter:
 * H5Pset_filter(dcpl, H5Z_FILTER_ZCOLL, H5Z_FLAG_MANDATORY, 5, cd_values).
 * codec: a zcoll_codec_id (zcoll.h; 1 = fzl); eb_mode: 0 ABS, 1 REL; eb > 0 and finite.
 * Returns a non-negative value on success, negative (with an HDF5 error pushed) for
 * invalid arguments or when HDF5 fails. Dataset creation (H5Dcreate) fails later if the
 * datatype is not little-endian IEEE float32/float64. */
herr_t zcoll_h5_set_filter(hid_t dcpl, int codec, int eb_mode, double eb);

/* The plugin entry points HDF5 looks up in a plugin library (H5PLextern.h). */
H5PL_type_t H5PLget_plugin_type(void);
const void *H5PLget_plugin_info(void);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif
#endif /* ZCOLL_H5_H */
