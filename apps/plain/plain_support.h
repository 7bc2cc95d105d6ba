// What the plain-MPI programs of this directory share besides tools/support: their main(),
// their options and their --out file.
#ifndef ZCOLL_APPS_PLAIN_PLAIN_SUPPORT_H
#define ZCOLL_APPS_PLAIN_PLAIN_SUPPORT_H

#include <mpi.h>

#include <climits>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <string>

#include "tool_support.h"

// --name value pairs in order, each handed to take(name, value); take throws
// zsupport::UsageError for a name it does not know.
inline void for_each_option(int argc, char** argv,
                            const std::function<void(const std::string&, const std::string&)>& take) {
  for (int i = 1; i < argc; i += 2) {
    if (i + 1 >= argc) throw zsupport::UsageError{std::string(argv[i]) + " needs a value"};
    take(argv[i], argv[i + 1]);
  }
}

// MPI_Init, run(argc, argv, rank, ranks) with the arguments MPI_Init leaves, MPI_Finalize. A zsupport::UsageError (the same on every rank: it
// comes from the options or the input) prints on rank 0 with the usage text and exits 2;
// otherwise the status is run's.
inline int plain_main(int argc, char** argv, const char* name, const char* usage,
                      const std::function<int(int argc, char** argv, int rank, int ranks)>& run) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  int status = 0;
  try {
    status = run(argc, argv, rank, ranks);
  } catch (const zsupport::UsageError& e) {
    if (rank == 0) std::fprintf(stderr, "%s: %s\n%s", name, e.msg.c_str(), usage);
    status = 2;
  }
  MPI_Finalize();
  return status;
}

// --out: every rank's part of the result, in rank order, in one raw file. Written with
// MPI-IO in bytes (MPI_BYTE), not gathered with an MPI_FLOAT/MPI_DOUBLE collective, which the
// drop-in layer would compress: the file must hold what the program computed, so that two
// runs can be compared.

// Collective over MPI_COMM_WORLD. Replaces the file. False (on every rank) if a part is 2 GiB
// or more, or the file cannot be opened or written, with the reason in *err.
inline bool write_in_rank_order(const std::string& path, const void* data, size_t bytes, std::string* err) {
  const int fits = bytes <= static_cast<size_t>(INT_MAX);
  int all_fit = 0;
  MPI_Allreduce(&fits, &all_fit, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all_fit) {
    *err = path + ": a rank's part is 2 GiB or more";
    return false;
  }
  long long mine = static_cast<long long>(bytes), offset = 0;
  MPI_Exscan(&mine, &offset, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) offset = 0;  // MPI_Exscan leaves rank 0's result undefined
  MPI_File fh;
  int rc = MPI_File_open(MPI_COMM_WORLD, path.c_str(), MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
  if (rc != MPI_SUCCESS) {
    *err = "cannot open " + path + " for writing";
    return false;
  }
  rc = MPI_File_set_size(fh, 0);
  if (rc == MPI_SUCCESS)
    rc = MPI_File_write_at_all(fh, offset, data, static_cast<int>(bytes), MPI_BYTE, MPI_STATUS_IGNORE);
  const int closed = MPI_File_close(&fh);
  int failed = rc != MPI_SUCCESS || closed != MPI_SUCCESS, any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (any_failed) *err = "cannot write " + path;
  return !any_failed;
}

#endif
