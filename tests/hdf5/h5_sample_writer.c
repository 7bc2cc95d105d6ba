/* Writes a small HDF5 file for the readers' tests (h5dump, h5py): each dataset written
 * with the zcoll filter next to an uncompressed copy of the same values ("<name>_ref"),
 * and the absolute bound as the attribute "eb_abs" of the filtered dataset.
 *
 *   h5_sample_writer DATA_DIR OUT.h5
 *
 *   /f32_2d  60 x 70 float32 (a slice of cesm_TS), chunks 16 x 32, fzl, ABS 0.01
 *   /f64_3d  10 x 20 x 30 float64 (from turb_wmag), chunks 4 x 8 x 16, szx, ABS 1e-4
 * Both chunk shapes leave partial edge chunks.
 */
#include "zcoll_h5.h"

#include <stdio.h>
#include <stdlib.h>

static void put(hid_t file, const char *name, int rank, const hsize_t *dims, const hsize_t *chunk,
                int f64, const void *x, int codec, double eb) {
  hid_t space = H5Screate_simple(rank, dims, NULL);
  hid_t mt = f64 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT;
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, rank, chunk);
  if (zcoll_h5_set_filter(dcpl, codec, 0, eb) < 0) exit(1);
  hid_t ds = H5Dcreate2(file, name, f64 ? H5T_IEEE_F64LE : H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  if (ds < 0 || H5Dwrite(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, x) < 0) exit(1);
  hid_t as = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(ds, "eb_abs", H5T_IEEE_F64LE, as, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, H5T_NATIVE_DOUBLE, &eb);
  H5Aclose(a);
  H5Sclose(as);
  H5Dclose(ds);
  char ref[256];
  snprintf(ref, sizeof ref, "%s_ref", name);
  ds = H5Dcreate2(file, ref, f64 ? H5T_IEEE_F64LE : H5T_IEEE_F32LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (ds < 0 || H5Dwrite(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, x) < 0) exit(1);
  H5Dclose(ds);
  H5Pclose(dcpl);
  H5Sclose(space);
}

static float *load(const char *dir, const char *name, size_t n) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "rb");
  float *x = malloc(n * sizeof *x);
  if (!f || fread(x, sizeof *x, n, f) != n) { fprintf(stderr, "cannot read %s\n", path); exit(2); }
  fclose(f);
  return x;
}

int main(int argc, char **argv) {
  if (argc != 3) { fprintf(stderr, "usage: %s DATA_DIR OUT.h5\n", argv[0]); return 2; }
  float *cesm = load(argv[1], "cesm_TS_10x192x288.f32", 192 * 288);
  float *turb = load(argv[1], "turb_wmag_91x91x91.f32", 91 * 91 * 91);
  hid_t file = H5Fcreate(argv[2], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (file < 0) return 1;
  float a[60 * 70];
  for (int i = 0; i < 60; ++i)
    for (int j = 0; j < 70; ++j) a[i * 70 + j] = cesm[(size_t)(i + 50) * 288 + j + 100];
  hsize_t d2[2] = {60, 70}, c2[2] = {16, 32};
  put(file, "/f32_2d", 2, d2, c2, 0, a, 1, 0.01);
  static double b[10 * 20 * 30];
  for (int i = 0; i < 10; ++i)
    for (int j = 0; j < 20; ++j)
      for (int k = 0; k < 30; ++k) b[(i * 20 + j) * 30 + k] = turb[((size_t)(i + 40) * 91 + j + 30) * 91 + k + 20];
  hsize_t d3[3] = {10, 20, 30}, c3[3] = {4, 8, 16};
  put(file, "/f64_3d", 3, d3, c3, 1, b, 4, 1e-4);
  H5Fclose(file);
  free(cesm);
  free(turb);
  printf("wrote %s\n", argv[2]);
  return 0;
}
