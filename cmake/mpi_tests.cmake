# How every MPI test of the build is launched (tests/mpi, tests/hdf5, tests/pmpi, apps,
# apps/plain): one launcher detection and one environment, set here for all of them.
#
# ZCOLL_TEST_OPENMPI      ON when MPIEXEC_EXECUTABLE is Open MPI's.
# ZCOLL_MPIEXEC_PREFLAGS  MPIEXEC_PREFLAGS, plus --oversubscribe under Open MPI (it refuses
#                         more ranks than cores without it; MPICH oversubscribes by default).
# ZCOLL_MPI_TEST_ENV      the tests' environment:
#   - one OpenMP thread per rank, passive waits: the ranks share few cores;
#   - ZCOLL_DECIDE=compress: the tests check the compressed paths, which the cost model
#     would (rightly) skip on shared memory; the tests of AUTO remove it;
#   - Open MPI may run as root (CI containers) and oversubscribe when launched from a script;
#   - Open MPI's shared-memory transport only (pml ob1, btl self,vader). Every test runs its
#     ranks on one host, where Open MPI picks exactly these anyway; naming them skips the TCP
#     and UCX start-up, which took 1.1-1.4 s of each launch's 1.5 s on the 2-core CI machine
#     (0.15 s with them named), over 250 launches per run. MPICH ignores OMPI_* variables.
set(ZCOLL_TEST_OPENMPI OFF)
execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version
                OUTPUT_VARIABLE _zcoll_mpiexec_version ERROR_VARIABLE _zcoll_mpiexec_version
                RESULT_VARIABLE _zcoll_mpiexec_rc TIMEOUT 30)
set(ZCOLL_MPIEXEC_PREFLAGS ${MPIEXEC_PREFLAGS})
if(_zcoll_mpiexec_version MATCHES "Open MPI|OpenRTE|open-mpi\\.org")
  set(ZCOLL_TEST_OPENMPI ON)
  if(NOT "--oversubscribe" IN_LIST ZCOLL_MPIEXEC_PREFLAGS)
    list(APPEND ZCOLL_MPIEXEC_PREFLAGS --oversubscribe)
  endif()
  message(STATUS "zcoll MPI tests: Open MPI launcher (${MPIEXEC_EXECUTABLE}), with --oversubscribe")
else()
  message(STATUS "zcoll MPI tests: launcher ${MPIEXEC_EXECUTABLE}")
endif()
set(ZCOLL_MPI_TEST_ENV
    "OMP_NUM_THREADS=1" "OMP_WAIT_POLICY=passive" "ZCOLL_DECIDE=compress"
    "OMPI_ALLOW_RUN_AS_ROOT=1" "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1" "OMPI_MCA_rmaps_base_oversubscribe=1"
    "OMPI_MCA_pml=ob1" "OMPI_MCA_btl=self,vader")
