# The Python wheel's build (pip install . through scikit-build-core, which sets
# ZCOLL_PYTHON=ON): only the shared libraries the zcoll package loads, installed next to
# its modules. Included by the top-level CMakeLists.txt, which returns right after.
#
# MPI is optional here, unlike in the C build: without it the wheel still has the codec
# (libzcoll_codec) and zcoll.Comm says why it is missing. The MPI is taken, in this order,
# from ZCOLL_PYTHON_MPICC (CMake), the MPICC environment variable, the mpicc of an
# importable mpi4py (mpi4py.get_config(); needs pip's --no-build-isolation), then
# whatever FindMPI finds. The wheel must use the same MPI as the user's mpi4py: MPICH
# and Open MPI have different ABIs, and zcoll.Comm checks the two agree at run time.

set(ZCOLL_PYTHON_MPICC "" CACHE STRING "MPI compiler wrapper for the Python package's MPI layer")
option(ZCOLL_PYTHON_REQUIRE_MPI "Fail instead of building a codec-only wheel when no MPI is found" OFF)

set(_zpy_mpicc "${ZCOLL_PYTHON_MPICC}")
if(NOT _zpy_mpicc AND DEFINED ENV{MPICC})
  set(_zpy_mpicc "$ENV{MPICC}")
endif()
if(NOT _zpy_mpicc)
  find_package(Python COMPONENTS Interpreter QUIET)
  if(Python_EXECUTABLE)
    execute_process(
      COMMAND "${Python_EXECUTABLE}" -c "import mpi4py; print(mpi4py.get_config().get('mpicc', ''))"
      OUTPUT_VARIABLE _zpy_mpicc OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _zpy_rc ERROR_QUIET)
    if(NOT _zpy_rc EQUAL 0)
      set(_zpy_mpicc "")
    endif()
  endif()
endif()
if(_zpy_mpicc)
  # FindMPI takes the wrapper's own flags; a name (not a path) is looked up on PATH.
  set(MPI_C_COMPILER "${_zpy_mpicc}" CACHE FILEPATH "" FORCE)
endif()
if(ZCOLL_PYTHON_REQUIRE_MPI)
  find_package(MPI REQUIRED COMPONENTS C)
else()
  find_package(MPI COMPONENTS C)
endif()

if(NOT TARGET MPI::MPI_C)
  # src/CMakeLists.txt always declares the MPI layer and links it to MPI::MPI_C; with
  # EXCLUDE_FROM_ALL below those targets are never built, but the name must exist for
  # the project to configure.
  add_library(MPI::MPI_C INTERFACE IMPORTED)
  set(ZCOLL_PYTHON_HAVE_MPI OFF)
  message(STATUS "zcoll (Python): no MPI found; building the codec only (set MPICC to add the collectives)")
else()
  set(ZCOLL_PYTHON_HAVE_MPI ON)
endif()

# Only the targets installed below get built.
add_subdirectory(src EXCLUDE_FROM_ALL)

# Wheels cannot hold symbolic links, so the libraries carry no version suffix; the
# package loads them by path and nothing else links them.
set(_zpy_libs zcoll_codec)
if(ZCOLL_PYTHON_HAVE_MPI)
  # The handles of mpi4py (MPI_Comm, MPI_Datatype, MPI_Op) are ints in MPICH and pointers
  # in Open MPI: this shim takes their addresses and dereferences them with the right type.
  add_library(zcoll_mpi4py SHARED "${CMAKE_CURRENT_LIST_DIR}/src/zcoll_mpi4py.c")
  target_link_libraries(zcoll_mpi4py PRIVATE zcoll MPI::MPI_C)
  list(APPEND _zpy_libs zcoll zcoll_mpi4py)
endif()
foreach(_t IN LISTS _zpy_libs)
  set_property(TARGET ${_t} PROPERTY VERSION)
  set_property(TARGET ${_t} PROPERTY SOVERSION)
  set_property(TARGET ${_t} PROPERTY INSTALL_RPATH "$ORIGIN")
endforeach()
# EXCLUDE_FROM_ALL targets are not built by install(); this makes the default build do it.
add_custom_target(zcoll_python_libs ALL DEPENDS ${_zpy_libs})
install(TARGETS ${_zpy_libs} LIBRARY DESTINATION . RUNTIME DESTINATION .)

# What the package was built with, for zcoll.build_info() and the MPI check.
if(ZCOLL_PYTHON_HAVE_MPI)
  set(_zpy_have_mpi True)
  set(_zpy_mpi_c_compiler "${MPI_C_COMPILER}")
else()
  set(_zpy_have_mpi False)
  set(_zpy_mpi_c_compiler "")
endif()
file(WRITE "${PROJECT_BINARY_DIR}/_build_config.py"
  "# Written by python/wheel.cmake at build time.\n"
  "VERSION = \"${PROJECT_VERSION}\"\n"
  "HAVE_MPI = ${_zpy_have_mpi}\n"
  "MPI_C_COMPILER = \"${_zpy_mpi_c_compiler}\"\n")
install(FILES "${PROJECT_BINARY_DIR}/_build_config.py" DESTINATION .)
