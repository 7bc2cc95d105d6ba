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

# MPICH over UCX (Debian's ch4:ucx) waits by spinning without yielding the core; with more ranks
# than cores every message then costs a scheduler time slice (mpi_accuracy_np5: 28.8 s, against
# 0.6 s yielding). Its tests preload tools/support/ucx_yield_when_idle.c, which yields after 64
# idle polls as Open MPI does when oversubscribed; where UCX is absent it is never called.
# Not instrumented: mpiexec loads it too. bench/netem/sweep.py preloads the same library.
# ASan checks that its runtime is the first library loaded, which a preloaded one is not:
# verify_asan_link_order=0 (detect_leaks=0: the MPI libraries leak by design at MPI_Finalize).
if(NOT ZCOLL_TEST_OPENMPI)
  add_library(zcoll_ucx_yield MODULE "${PROJECT_SOURCE_DIR}/tools/support/ucx_yield_when_idle.c")
  target_link_libraries(zcoll_ucx_yield PRIVATE ${CMAKE_DL_LIBS})
  set_target_properties(zcoll_ucx_yield PROPERTIES COMPILE_OPTIONS "" LINK_OPTIONS "")
  list(APPEND ZCOLL_MPI_TEST_ENV "LD_PRELOAD=$<TARGET_FILE:zcoll_ucx_yield>")
  if(ZCOLL_SANITIZE)
    list(APPEND ZCOLL_MPI_TEST_ENV "ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0")
  endif()
endif()

# Open MPI 4.1's launchers race to create their session directory (<tmp>/ompi.<host>.<uid>)
# when ctest starts two at once, and the loser fails before MPI_Init returns: "A call to mkdir
# was unable to create the desired directory ... File exists" (open-mpi/ompi#8510; once in a
# fresh-clone CI run here). zcoll_separate_ompi_sessions(), at the end of each directory that
# adds MPI tests, gives each of its tests a session directory base of its own, made now.
string(MD5 _zcoll_build_hash "${CMAKE_BINARY_DIR}")
string(SUBSTRING "${_zcoll_build_hash}" 0 8 _zcoll_build_hash)
set(ZCOLL_OMPI_SESSION_ROOT "/tmp/zcoll-ompi-${_zcoll_build_hash}")  # short: PMIx puts sockets under it
function(zcoll_separate_ompi_sessions)
  if(NOT ZCOLL_TEST_OPENMPI)
    return()
  endif()
  get_property(tests DIRECTORY PROPERTY TESTS)
  get_property(n GLOBAL PROPERTY ZCOLL_OMPI_SESSIONS)
  if(NOT n)
    set(n 0)
  endif()
  foreach(t IN LISTS tests)
    math(EXPR n "${n} + 1")
    file(MAKE_DIRECTORY "${ZCOLL_OMPI_SESSION_ROOT}/${n}")
    set_property(TEST "${t}" APPEND PROPERTY ENVIRONMENT "OMPI_MCA_orte_tmpdir_base=${ZCOLL_OMPI_SESSION_ROOT}/${n}")
  endforeach()
  set_property(GLOBAL PROPERTY ZCOLL_OMPI_SESSIONS ${n})
endfunction()
