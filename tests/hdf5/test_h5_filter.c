/* The zcoll HDF5 filter, from C: write float32 and float64 datasets (slices of the real
 * fields in data/) with the filter, 1-D to 4-D, chunk shapes that do not divide the
 * dataset, ABS and REL bounds and every codec; read them back and check every element
 * against the bound. Then corrupt the file (flipped bytes inside a stored chunk, a chunk
 * rewritten truncated, the file cut short) and check that reading fails with an HDF5 error
 * raised by the filter, never a crash or wrong values.
 *
 *   test_h5_filter DATA_DIR WORK_DIR
 *
 * REL is per chunk: the bound of an element is eb x (max - min) over its chunk as HDF5
 * hands it to the filter, i.e. the chunk's values plus the fill value (0 here) when the
 * chunk is a partial edge chunk. The check recomputes exactly that.
 */
#include "zcoll_h5.h"

#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures = 0;
#define CHECK(cond, ...)                                              \
  do {                                                                \
    if (!(cond)) {                                                    \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);            \
      fprintf(stderr, __VA_ARGS__);                                   \
      fprintf(stderr, "\n");                                          \
      ++failures;                                                     \
    }                                                                 \
  } while (0)

static const char *data_dir, *work_dir;
static int quiet_check = 0; /* 1: check_bound prints nothing (the injected-violation check) */

static float *load_f32(const char *name, size_t n) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", data_dir, name);
  FILE *f = fopen(path, "rb");
  if (!f) { fprintf(stderr, "cannot open %s\n", path); exit(2); }
  float *x = malloc(n * sizeof *x);
  if (!x || fread(x, sizeof *x, n, f) != n) { fprintf(stderr, "cannot read %zu floats from %s\n", n, path); exit(2); }
  fclose(f);
  return x;
}

typedef struct {
  const char *name;
  int f64;            /* 0 float32, 1 float64 */
  int rank;
  hsize_t dims[4];
  hsize_t chunk[4];
  int codec, eb_mode;
  double eb;
} h5case;

static size_t prod(const hsize_t *d, int r) {
  size_t n = 1;
  for (int i = 0; i < r; ++i) n *= (size_t)d[i];
  return n;
}

/* Chunk id of element i (row-major), and whether that chunk is a partial edge chunk. */
static size_t chunk_of(const h5case *c, size_t i, int *partial) {
  hsize_t idx[4];
  for (int d = c->rank - 1; d >= 0; --d) { idx[d] = i % c->dims[d]; i /= c->dims[d]; }
  size_t id = 0;
  *partial = 0;
  for (int d = 0; d < c->rank; ++d) {
    hsize_t nc = (c->dims[d] + c->chunk[d] - 1) / c->chunk[d];
    hsize_t ci = idx[d] / c->chunk[d];
    id = id * nc + ci;
    if ((ci + 1) * c->chunk[d] > c->dims[d]) *partial = 1;
  }
  return id;
}

static double val(const void *p, int f64, size_t i) {
  return f64 ? ((const double *)p)[i] : (double)((const float *)p)[i];
}

/* Checks every element of y against x. Returns the number of violations; *worst gets the
 * largest error / bound. */
static size_t check_bound(const h5case *c, const void *x, const void *y, double *worst) {
  size_t n = prod(c->dims, c->rank), nchunks = 1, bad = 0;
  for (int d = 0; d < c->rank; ++d) nchunks *= (c->dims[d] + c->chunk[d] - 1) / c->chunk[d];
  double *lo = malloc(nchunks * sizeof *lo), *hi = malloc(nchunks * sizeof *hi);
  for (size_t k = 0; k < nchunks; ++k) { lo[k] = INFINITY; hi[k] = -INFINITY; }
  for (size_t i = 0; i < n; ++i) {
    int partial;
    size_t k = chunk_of(c, i, &partial);
    double v = val(x, c->f64, i);
    if (partial) { if (0.0 < lo[k]) lo[k] = 0.0; if (0.0 > hi[k]) hi[k] = 0.0; }
    if (v < lo[k]) lo[k] = v;
    if (v > hi[k]) hi[k] = v;
  }
  *worst = 0;
  for (size_t i = 0; i < n; ++i) {
    int partial;
    size_t k = chunk_of(c, i, &partial);
    /* REL: the codec resolves eb x (max - min) in double, as here; 1e-12 relative slack only
     * for a different order of the same double operations. */
    double bound = c->eb_mode == 0 ? c->eb : c->eb * (hi[k] - lo[k]) * (1 + 1e-12);
    double e = fabs(val(x, c->f64, i) - val(y, c->f64, i));
    if (!(e <= bound)) {
      if (bad < 5 && !quiet_check) fprintf(stderr, "  %s: element %zu: |%.9g - %.9g| = %g > bound %g\n", c->name, i,
                           val(x, c->f64, i), val(y, c->f64, i), e, bound);
      ++bad;
    }
    if (bound > 0 && e / bound > *worst) *worst = e / bound;
  }
  free(lo);
  free(hi);
  return bad;
}

static hid_t create_with_filter(hid_t file, const h5case *c) {
  hid_t space = H5Screate_simple(c->rank, c->dims, NULL);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, c->rank, c->chunk);
  double zero = 0;
  H5Pset_fill_value(dcpl, c->f64 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT,
                    c->f64 ? (const void *)&zero : (const void *)&(float){0});
  CHECK(zcoll_h5_set_filter(dcpl, c->codec, c->eb_mode, c->eb) >= 0, "%s: zcoll_h5_set_filter", c->name);
  hid_t ds = H5Dcreate2(file, c->name, c->f64 ? H5T_IEEE_F64LE : H5T_IEEE_F32LE, space, H5P_DEFAULT,
                        dcpl, H5P_DEFAULT);
  H5Pclose(dcpl);
  H5Sclose(space);
  return ds;
}

/* The source values of a case: consecutive values of a field, as float or double. */
static void *case_values(const h5case *c, const float *field, size_t field_n) {
  size_t n = prod(c->dims, c->rank);
  if (n > field_n) { fprintf(stderr, "%s: field too small\n", c->name); exit(2); }
  if (!c->f64) {
    float *x = malloc(n * sizeof *x);
    memcpy(x, field, n * sizeof *x);
    return x;
  }
  double *x = malloc(n * sizeof *x);
  for (size_t i = 0; i < n; ++i) x[i] = field[i];
  return x;
}

static void roundtrip_cases(void) {
  const size_t cesm_n = 10 * 192 * 288, turb_n = 91 * 91 * 91, echam_n = 17 * 96 * 192;
  float *cesm = load_f32("cesm_TS_10x192x288.f32", cesm_n);
  float *turb = load_f32("turb_wmag_91x91x91.f32", turb_n);
  float *echam = load_f32("echam5_T_17x96x192.f32", echam_n);
  const h5case cases[] = {
      /* name            f64 rank dims                  chunk               codec mode eb */
      {"/f32_1d_abs",      0, 1, {100000},            {16384},            1, 0, 1e-2},
      {"/f32_2d_rel",      0, 2, {192, 288},          {50, 70},           1, 1, 1e-3},
      {"/f32_3d_rel",      0, 3, {91, 91, 91},        {32, 32, 40},       1, 1, 1e-4},
      {"/f64_3d_abs",      1, 3, {17, 96, 192},       {8, 40, 64},        1, 0, 5e-2},
      {"/f64_2d_rel_lpbit",1, 2, {192, 288},          {64, 64},           3, 1, 1e-4},
      {"/f32_1d_lpbyte",   0, 1, {50000},             {7000},             2, 0, 1e-2},
      {"/f64_1d_szx_rel",  1, 1, {60000},             {8192},             4, 1, 1e-3},
      {"/f32_4d_abs",      0, 4, {2, 5, 192, 288},    {2, 3, 64, 100},    1, 0, 5e-3},
      {"/f32_3d_ones",     0, 3, {10, 192, 288},      {1, 192, 288},      1, 1, 1e-3},
  };
  const float *src[] = {cesm, cesm, turb, echam, cesm, turb, echam, cesm, cesm};
  const size_t src_n[] = {cesm_n, cesm_n, turb_n, echam_n, cesm_n, turb_n, echam_n, cesm_n, cesm_n};
  const int ncases = (int)(sizeof cases / sizeof cases[0]);

  char path[4096];
  snprintf(path, sizeof path, "%s/h5_filter_roundtrip.h5", work_dir);
  hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  CHECK(file >= 0, "H5Fcreate %s", path);
  void *xs[16];
  for (int k = 0; k < ncases; ++k) {
    const h5case *c = &cases[k];
    xs[k] = case_values(c, src[k], src_n[k]);
    hid_t ds = create_with_filter(file, c);
    CHECK(ds >= 0, "%s: H5Dcreate2", c->name);
    CHECK(H5Dwrite(ds, c->f64 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, xs[k]) >= 0,
          "%s: H5Dwrite", c->name);
    H5Dclose(ds);
  }
  H5Fclose(file);

  /* Read back from a freshly opened file. */
  file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  CHECK(file >= 0, "H5Fopen %s", path);
  for (int k = 0; k < ncases; ++k) {
    const h5case *c = &cases[k];
    size_t n = prod(c->dims, c->rank), esize = c->f64 ? 8 : 4;
    hid_t ds = H5Dopen2(file, c->name, H5P_DEFAULT);
    /* The filter is in the dataset's pipeline with the cd_values set_local completed. */
    hid_t dcpl = H5Dget_create_plist(ds);
    unsigned flags, cd[ZCOLL_H5_CD_MAX];
    size_t ncd = ZCOLL_H5_CD_MAX;
    herr_t got = H5Pget_filter_by_id2(dcpl, H5Z_FILTER_ZCOLL, &flags, &ncd, cd, 0, NULL, NULL);
    CHECK(got >= 0 && ncd >= 8 && cd[ZCOLL_H5_CD_VERSION] == 1 && (int)cd[ZCOLL_H5_CD_CODEC] == c->codec &&
              (int)cd[ZCOLL_H5_CD_EB_MODE] == c->eb_mode && cd[ZCOLL_H5_CD_DTYPE] == (c->f64 ? 2u : 1u),
          "%s: cd_values", c->name);
    H5Pclose(dcpl);
    void *y = malloc(n * esize);
    memset(y, 0xff, n * esize);
    CHECK(H5Dread(ds, c->f64 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, y) >= 0,
          "%s: H5Dread", c->name);
    double worst;
    size_t bad = check_bound(c, xs[k], y, &worst);
    hsize_t stored = H5Dget_storage_size(ds);
    printf("%-18s %s rank %d, %zu values, shape hint", c->name, c->f64 ? "f64" : "f32", c->rank, n);
    for (size_t i = 0; i < cd[ZCOLL_H5_CD_NDIMS]; ++i) printf(" %u", cd[ZCOLL_H5_CD_DIMS + i]);
    printf(": ratio %.2f, max err/bound %.4f, %zu violations\n", (double)(n * esize) / (double)stored, worst, bad);
    CHECK(bad == 0, "%s: %zu elements outside the bound", c->name, bad);
    CHECK(stored > 0 && stored < n * esize, "%s: stored %llu bytes for %zu raw: not compressed", c->name,
          (unsigned long long)stored, n * esize);
    /* The check can fail: an error of 1.5 x the bound on one element is caught. */
    if (k == 0) {
      float *yf = y;
      yf[777] = (float)(((float *)xs[k])[777] + 1.5 * c->eb);
      quiet_check = 1;
      CHECK(check_bound(c, xs[k], y, &worst) == 1, "the bound check missed an injected violation");
      quiet_check = 0;
    }
    /* A hyperslab that crosses chunk borders reads the same values. */
    if (c->rank == 2) {
      hsize_t start[2] = {c->dims[0] / 3, c->dims[1] / 3}, cnt[2] = {c->dims[0] / 2, c->dims[1] / 2};
      hid_t fs = H5Dget_space(ds), ms = H5Screate_simple(2, cnt, NULL);
      H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, cnt, NULL);
      void *z = malloc(cnt[0] * cnt[1] * esize);
      CHECK(H5Dread(ds, c->f64 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT, ms, fs, H5P_DEFAULT, z) >= 0,
            "%s: hyperslab read", c->name);
      size_t diff = 0;
      for (hsize_t i = 0; i < cnt[0]; ++i)
        for (hsize_t j = 0; j < cnt[1]; ++j)
          if (memcmp((char *)z + (i * cnt[1] + j) * esize,
                     (char *)y + ((start[0] + i) * c->dims[1] + start[1] + j) * esize, esize) != 0)
            ++diff;
      CHECK(diff == 0, "%s: hyperslab differs from the full read in %zu values", c->name, diff);
      free(z);
      H5Sclose(ms);
      H5Sclose(fs);
    }
    free(y);
    H5Dclose(ds);
  }
  H5Fclose(file);
  for (int k = 0; k < ncases; ++k) free(xs[k]);
  free(cesm);
  free(turb);
  free(echam);
}

/* Argument and datatype checks. */
static void rejects(void) {
  char path[4096];
  snprintf(path, sizeof path, "%s/h5_filter_rejects.h5", work_dir);
  H5E_auto2_t fn;
  void *data;
  H5Eget_auto2(H5E_DEFAULT, &fn, &data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  hsize_t dims[1] = {1000}, chunk[1] = {100};
  H5Pset_chunk(dcpl, 1, chunk);
  CHECK(zcoll_h5_set_filter(dcpl, 1, 0, -1.0) < 0, "negative eb accepted");
  CHECK(zcoll_h5_set_filter(dcpl, 1, 0, NAN) < 0, "NaN eb accepted");
  CHECK(zcoll_h5_set_filter(dcpl, 99, 0, 1e-3) < 0, "unknown codec accepted");
  CHECK(zcoll_h5_set_filter(dcpl, 1, 7, 1e-3) < 0, "unknown eb mode accepted");
  CHECK(zcoll_h5_set_filter(dcpl, 1, 0, 1e-3) >= 0, "valid filter rejected");
  hid_t space = H5Screate_simple(1, dims, NULL);
  hid_t ds = H5Dcreate2(file, "int", H5T_NATIVE_INT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  CHECK(ds < 0, "an int dataset was created with the zcoll filter");
  if (ds >= 0) H5Dclose(ds);
  ds = H5Dcreate2(file, "f32be", H5T_IEEE_F32BE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  CHECK(ds < 0, "a big-endian float dataset was created with the zcoll filter");
  if (ds >= 0) H5Dclose(ds);
  /* Too few cd_values (as a careless h5py user might give). */
  hid_t dcpl2 = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl2, 1, chunk);
  unsigned cd[2] = {1, 1};
  H5Pset_filter(dcpl2, H5Z_FILTER_ZCOLL, H5Z_FLAG_MANDATORY, 2, cd);
  ds = H5Dcreate2(file, "short_cd", H5T_NATIVE_FLOAT, space, H5P_DEFAULT, dcpl2, H5P_DEFAULT);
  CHECK(ds < 0, "a dataset with 2 cd_values was created");
  if (ds >= 0) H5Dclose(ds);
  H5Pclose(dcpl2);
  ds = H5Dcreate2(file, "ok", H5T_NATIVE_FLOAT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  CHECK(ds >= 0, "a float dataset with a valid filter was refused");
  if (ds >= 0) H5Dclose(ds);
  H5Sclose(space);
  H5Pclose(dcpl);
  H5Fclose(file);
  H5Eset_auto2(H5E_DEFAULT, fn, data);
}

/* ---- corruption */
static int saw_zcoll;
static herr_t walk_cb(unsigned n, const H5E_error2_t *e, void *data) {
  (void)n;
  (void)data;
  if (e->desc && strstr(e->desc, "zcoll filter")) saw_zcoll = 1;
  return 0;
}

/* Reads the whole dataset; returns the H5Dread status with errors silenced, and sets
 * saw_zcoll when the zcoll filter put an error on the stack. */
static herr_t quiet_read(hid_t ds, float *y, int print) {
  H5E_auto2_t fn;
  void *data;
  H5Eget_auto2(H5E_DEFAULT, &fn, &data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  herr_t rc = H5Dread(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, y);
  saw_zcoll = 0;
  if (rc < 0) {
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, walk_cb, NULL);
    if (print) H5Eprint2(H5E_DEFAULT, stdout);
  }
  H5Eclear2(H5E_DEFAULT);
  H5Eset_auto2(H5E_DEFAULT, fn, data);
  return rc;
}

static void write_victim(const char *path, const float *x, hsize_t rows, hsize_t cols) {
  hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  h5case c = {"/v", 0, 2, {rows, cols}, {64, 64}, 1, 0, 1e-2};
  hid_t ds = create_with_filter(file, &c);
  CHECK(H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, x) >= 0, "victim write");
  H5Dclose(ds);
  H5Fclose(file);
}

static void chunk_info(const char *path, hsize_t idx, haddr_t *addr, hsize_t *size) {
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t ds = H5Dopen2(file, "/v", H5P_DEFAULT);
  hid_t fs = H5Dget_space(ds); /* 1.10 takes no H5S_ALL here */
  hsize_t off[2];
  unsigned mask;
  CHECK(H5Dget_chunk_info(ds, fs, idx, off, &mask, addr, size) >= 0, "H5Dget_chunk_info");
  H5Sclose(fs);
  H5Dclose(ds);
  H5Fclose(file);
}

static void flip(const char *path, haddr_t at, size_t n) {
  int fd = open(path, O_RDWR);
  unsigned char b[64];
  CHECK(fd >= 0 && n <= sizeof b && pread(fd, b, n, (off_t)at) == (ssize_t)n, "pread");
  for (size_t i = 0; i < n; ++i) b[i] ^= 0x5a;
  CHECK(pwrite(fd, b, n, (off_t)at) == (ssize_t)n, "pwrite");
  close(fd);
}

static void corruption(void) {
  const hsize_t rows = 192, cols = 288; /* 3 x 5 chunks of 64 x 64, the last column partial */
  float *field = load_f32("cesm_TS_10x192x288.f32", rows * cols);
  float *y = malloc(rows * cols * sizeof *y);
  char path[4096];
  snprintf(path, sizeof path, "%s/h5_filter_corrupt.h5", work_dir);
  haddr_t addr;
  hsize_t size;

  /* Intact: reads. */
  write_victim(path, field, rows, cols);
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t ds = H5Dopen2(file, "/v", H5P_DEFAULT);
  CHECK(quiet_read(ds, y, 0) >= 0, "intact file does not read");
  H5Dclose(ds);
  H5Fclose(file);

  /* Bytes flipped in the middle of a chunk's payload, then in its header. */
  const char *where[] = {"payload", "header", "end"};
  for (int w = 0; w < 3; ++w) {
    write_victim(path, field, rows, cols);
    chunk_info(path, 4, &addr, &size);
    haddr_t at = w == 0 ? addr + size / 2 : w == 1 ? addr + 4 : addr + size - 4;
    flip(path, at, 4);
    file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    ds = H5Dopen2(file, "/v", H5P_DEFAULT);
    herr_t rc = quiet_read(ds, y, w == 0);
    printf("corrupt chunk (%s, 4 bytes flipped at +%llu of %llu): H5Dread %s%s\n", where[w],
           (unsigned long long)(at - addr), (unsigned long long)size, rc < 0 ? "failed" : "SUCCEEDED",
           saw_zcoll ? ", error from the zcoll filter" : "");
    CHECK(rc < 0 && saw_zcoll, "a corrupt chunk (%s) was read without a zcoll filter error", where[w]);
    /* The other chunks still read: a hyperslab of chunk 0 only. */
    hsize_t start[2] = {0, 0}, cnt[2] = {64, 64};
    hid_t fs = H5Dget_space(ds), ms = H5Screate_simple(2, cnt, NULL);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, cnt, NULL);
    CHECK(H5Dread(ds, H5T_NATIVE_FLOAT, ms, fs, H5P_DEFAULT, y) >= 0, "chunk 0 unreadable beside a corrupt chunk");
    H5Sclose(ms);
    H5Sclose(fs);
    H5Dclose(ds);
    H5Fclose(file);
  }

  /* A chunk rewritten truncated (raw chunk write of half the stream; the file is otherwise
   * consistent, so only the filter can notice). */
  write_victim(path, field, rows, cols);
  file = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  ds = H5Dopen2(file, "/v", H5P_DEFAULT);
  hsize_t off[2] = {64, 64};
  hsize_t csize;
  CHECK(H5Dget_chunk_storage_size(ds, off, &csize) >= 0, "chunk storage size");
  unsigned char *raw = malloc(csize);
  uint32_t mask = 0;
  CHECK(H5Dread_chunk(ds, H5P_DEFAULT, off, &mask, raw) >= 0, "H5Dread_chunk");
  CHECK(H5Dwrite_chunk(ds, H5P_DEFAULT, 0, off, csize / 2, raw) >= 0, "H5Dwrite_chunk");
  herr_t rc = quiet_read(ds, y, 0);
  printf("truncated chunk (%llu of %llu bytes): H5Dread %s%s\n", (unsigned long long)(csize / 2),
         (unsigned long long)csize, rc < 0 ? "failed" : "SUCCEEDED", saw_zcoll ? ", error from the zcoll filter" : "");
  CHECK(rc < 0 && saw_zcoll, "a truncated chunk was read without a zcoll filter error");
  /* An empty chunk and a chunk of garbage. */
  memset(raw, 0x11, csize);
  CHECK(H5Dwrite_chunk(ds, H5P_DEFAULT, 0, off, csize, raw) >= 0, "H5Dwrite_chunk");
  rc = quiet_read(ds, y, 0);
  CHECK(rc < 0 && saw_zcoll, "a chunk of garbage was read without a zcoll filter error");
  free(raw);
  H5Dclose(ds);
  H5Fclose(file);

  /* The file cut in the middle of its last chunk: HDF5 refuses the file or the read. */
  write_victim(path, field, rows, cols);
  haddr_t last = 0;
  hsize_t last_size = 0;
  for (hsize_t k = 0; k < 15; ++k) {
    chunk_info(path, k, &addr, &size);
    if (addr > last) { last = addr; last_size = size; }
  }
  CHECK(truncate(path, (off_t)(last + last_size / 2)) == 0, "truncate");
  H5E_auto2_t fn;
  void *data;
  H5Eget_auto2(H5E_DEFAULT, &fn, &data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  H5Eset_auto2(H5E_DEFAULT, fn, data);
  if (file < 0) {
    printf("file cut at %llu bytes: H5Fopen failed (HDF5 saw the truncation)\n", (unsigned long long)(last + last_size / 2));
  } else {
    ds = H5Dopen2(file, "/v", H5P_DEFAULT);
    rc = quiet_read(ds, y, 0);
    printf("file cut at %llu bytes: H5Dread %s\n", (unsigned long long)(last + last_size / 2),
           rc < 0 ? "failed" : "SUCCEEDED");
    CHECK(rc < 0, "a truncated file was read");
    H5Dclose(ds);
    H5Fclose(file);
  }
  free(field);
  free(y);
}

int main(int argc, char **argv) {
  if (argc != 3) { fprintf(stderr, "usage: %s DATA_DIR WORK_DIR\n", argv[0]); return 2; }
  data_dir = argv[1];
  work_dir = argv[2];
  roundtrip_cases();
  rejects();
  corruption();
  if (failures) { printf("test_h5_filter: %d failures\n", failures); return 1; }
  printf("test_h5_filter: all checks passed\n");
  return 0;
}
