/* bench/storage/phdf5_rate.c: the rate parallel HDF5 gets through a throttled file system.
 *
 * Every rank writes its own MIB MiB hyperslab of one float64 dataset (contiguous layout,
 * the MPI-IO driver), with independent or collective transfer, then the file is flushed
 * and closed; the rate is the bytes of all ranks over the slowest rank's time from the
 * first H5Dwrite to the end of H5Fclose. Each rank then reads its slab back and compares
 * it with what it wrote. check_phdf5.sh builds and runs it (h5pcc.mpich).
 *
 *   mpiexec -n 4 phdf5_rate FILE MIB independent|collective
 *
 * Prints one line, "phdf5_rate: <mode> <ranks> ranks x <MIB> MiB: <s> s, <MB/s> MB/s,
 * read back ok", and exits 1 on any HDF5 error or a mismatch. */
#include <hdf5.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double value_at(uint64_t i) { return (double)(i % 1000003u) * 0.5 - 7.0; }

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1, ok = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 4 || atoi(argv[2]) <= 0 ||
      (strcmp(argv[3], "independent") != 0 && strcmp(argv[3], "collective") != 0)) {
    if (rank == 0) fprintf(stderr, "usage: %s FILE MIB independent|collective\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  const char* path = argv[1];
  const int collective = strcmp(argv[3], "collective") == 0;
  const hsize_t n = (hsize_t)atoi(argv[2]) * 1024 * 1024 / sizeof(double);
  const hsize_t start = n * (hsize_t)rank, total = n * (hsize_t)size;
  double* buf = malloc(n * sizeof(double));
  double* back = malloc(n * sizeof(double));
  if (!buf || !back) {
    fprintf(stderr, "phdf5_rate: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (hsize_t i = 0; i < n; ++i) buf[i] = value_at(start + i);

  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
  hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  hid_t fspace = H5Screate_simple(1, &total, NULL);
  hid_t dset = file < 0 ? -1 : H5Dcreate2(file, "data", H5T_NATIVE_DOUBLE, fspace, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  hid_t mspace = H5Screate_simple(1, &n, NULL);
  H5Sselect_hyperslab(fspace, H5S_SELECT_SET, &start, NULL, &n, NULL);
  hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
  H5Pset_dxpl_mpio(dxpl, collective ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT);
  if (dset < 0) ok = 0;

  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  if (ok && H5Dwrite(dset, H5T_NATIVE_DOUBLE, mspace, fspace, dxpl, buf) < 0) ok = 0;
  if (ok && H5Fflush(file, H5F_SCOPE_GLOBAL) < 0) ok = 0;
  H5Dclose(dset);
  if (H5Fclose(file) < 0) ok = 0;
  double dt = MPI_Wtime() - t0, slowest = 0;
  MPI_Reduce(&dt, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

  /* Read back, each rank its own slab. */
  file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
  dset = file < 0 ? -1 : H5Dopen2(file, "data", H5P_DEFAULT);
  if (dset < 0 || H5Dread(dset, H5T_NATIVE_DOUBLE, mspace, fspace, dxpl, back) < 0) ok = 0;
  if (ok && memcmp(buf, back, n * sizeof(double)) != 0) ok = 0;
  if (dset >= 0) H5Dclose(dset);
  if (file >= 0) H5Fclose(file);
  H5Pclose(dxpl);
  H5Sclose(mspace);
  H5Sclose(fspace);
  H5Pclose(fapl);

  int all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0) {
    const double bytes = (double)total * sizeof(double);
    printf("phdf5_rate: %s %d ranks x %s MiB: %.3f s, %.1f MB/s, %s\n", argv[3], size, argv[2], slowest,
           bytes / slowest / 1e6, all_ok ? "read back ok" : "FAILED (HDF5 error or data differs)");
  }
  free(buf);
  free(back);
  MPI_Finalize();
  return all_ok ? 0 : 1;
}
