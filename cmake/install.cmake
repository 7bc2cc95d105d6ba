# Installation, CMake package config and pkg-config files for zcoll.
# Included at the end of the top-level CMakeLists.txt (after src/ defined the targets).
#
# Installed layout (relative to the prefix):
#   include/zcoll.h
#   ${CMAKE_INSTALL_LIBDIR}/libzcoll.so*, libzcoll.a, libzcoll_codec.so*, libzcoll_codec.a
#   ${CMAKE_INSTALL_LIBDIR}/cmake/zcoll/zcollConfig.cmake (+ Version, targets files)
#   ${CMAKE_INSTALL_LIBDIR}/pkgconfig/zcoll.pc, zcoll_codec.pc
#
# Two export sets so that a codec-only user (find_package(zcoll COMPONENTS codec))
# never needs MPI:
#   zcollCodecTargets: zcoll::codec, zcoll::codec_static   (needs OpenMP only)
#   zcollTargets:      zcoll::zcoll, zcoll::zcoll_static   (needs OpenMP and MPI C)
# zcoll_codec_objects is an OBJECT library whose objects are compiled into the four
# libraries through $<TARGET_OBJECTS:...>; nothing links it, so it is not exported.

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(ZCOLL_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/zcoll" CACHE STRING
    "Where zcollConfig.cmake is installed (relative to the prefix)")
mark_as_advanced(ZCOLL_INSTALL_CMAKEDIR)

# Imported names: zcoll::zcoll, zcoll::zcoll_static, zcoll::codec, zcoll::codec_static
# (the same names as the ALIAS targets of the build tree).
set_target_properties(zcoll              PROPERTIES EXPORT_NAME zcoll)
set_target_properties(zcoll_static       PROPERTIES EXPORT_NAME zcoll_static)
set_target_properties(zcoll_codec        PROPERTIES EXPORT_NAME codec)
set_target_properties(zcoll_codec_static PROPERTIES EXPORT_NAME codec_static)

install(TARGETS zcoll_codec zcoll_codec_static
  EXPORT zcollCodecTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT dev
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS zcoll zcoll_static
  EXPORT zcollTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT dev
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES "${PROJECT_SOURCE_DIR}/include/zcoll.h"
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)

install(EXPORT zcollCodecTargets NAMESPACE zcoll:: FILE zcollCodecTargets.cmake
  DESTINATION ${ZCOLL_INSTALL_CMAKEDIR} COMPONENT dev)
install(EXPORT zcollTargets NAMESPACE zcoll:: FILE zcollTargets.cmake
  DESTINATION ${ZCOLL_INSTALL_CMAKEDIR} COMPONENT dev)

# ---------------------------------------------------------------- which MPI
# Users must compile and link against the same MPI as zcoll (MPICH and Open MPI are
# not ABI compatible). Record the vendor and wrapper for zcollConfig.cmake and zcoll.pc.
set(ZCOLL_MPI_VENDOR "unknown")
set(_zcoll_mpi_hdr_dirs ${MPI_C_INCLUDE_DIRS} ${MPI_C_HEADER_DIR})
foreach(_d IN LISTS _zcoll_mpi_hdr_dirs)
  if(EXISTS "${_d}/mpi.h")
    file(STRINGS "${_d}/mpi.h" _zcoll_mpi_h REGEX "^#define[ \t]+(OPEN_MPI|MPICH_VERSION)[ \t]")
    if(_zcoll_mpi_h MATCHES "OPEN_MPI")
      set(ZCOLL_MPI_VENDOR "Open MPI")
    elseif(_zcoll_mpi_h MATCHES "MPICH_VERSION")
      set(ZCOLL_MPI_VENDOR "MPICH")
    endif()
    break()
  endif()
endforeach()
set(ZCOLL_MPI_C_COMPILER "${MPI_C_COMPILER}")
if(ZCOLL_MPI_C_COMPILER AND NOT IS_ABSOLUTE "${ZCOLL_MPI_C_COMPILER}")
  find_program(_zcoll_mpicc_path NAMES "${ZCOLL_MPI_C_COMPILER}" NO_CACHE)
  if(_zcoll_mpicc_path)
    set(ZCOLL_MPI_C_COMPILER "${_zcoll_mpicc_path}")
  endif()
endif()

set(ZCOLL_MPIEXEC_EXECUTABLE "${MPIEXEC_EXECUTABLE}")

# ---------------------------------------------------------------- CMake package
configure_package_config_file(
  "${CMAKE_CURRENT_LIST_DIR}/zcollConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/pkg/zcollConfig.cmake"
  INSTALL_DESTINATION ${ZCOLL_INSTALL_CMAKEDIR}
  NO_SET_AND_CHECK_MACRO)
write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/pkg/zcollConfigVersion.cmake"
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES
  "${PROJECT_BINARY_DIR}/pkg/zcollConfig.cmake"
  "${PROJECT_BINARY_DIR}/pkg/zcollConfigVersion.cmake"
  DESTINATION ${ZCOLL_INSTALL_CMAKEDIR} COMPONENT dev)

# ---------------------------------------------------------------- pkg-config
# The .pc files compute their prefix from their own location (${pcfiledir}), so the
# install tree stays relocatable and `cmake --install --prefix P` gives correct paths.
set(ZCOLL_PC_DIR "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(ZCOLL_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(ZCOLL_PC_DIR "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
else()
  file(RELATIVE_PATH _zcoll_up "/zcoll-root/${ZCOLL_PC_DIR}" "/zcoll-root")
  string(REGEX REPLACE "/$" "" _zcoll_up "${_zcoll_up}")
  set(ZCOLL_PC_PREFIX "\${pcfiledir}/${_zcoll_up}")
endif()
foreach(_v LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${_v}}")
    set(ZCOLL_PC_${_v} "${CMAKE_INSTALL_${_v}}")
  else()
    set(ZCOLL_PC_${_v} "\${prefix}/${CMAKE_INSTALL_${_v}}")
  endif()
endforeach()

# Static linking needs the C++ runtime and OpenMP (the header itself needs neither).
string(REPLACE ";" " " ZCOLL_PC_OPENMP_FLAGS "${OpenMP_CXX_FLAGS}")
set(ZCOLL_PC_CODEC_LIBS_PRIVATE "${ZCOLL_PC_OPENMP_FLAGS} -lstdc++ -lm")

# zcoll.pc: MPI through Requires.private when the MPI ships a .pc file (Debian: mpich.pc,
# ompi-c.pc); otherwise the include directories and libraries FindMPI found.
set(ZCOLL_PC_MPI_REQUIRES "")
set(ZCOLL_PC_MPI_CFLAGS "")
set(ZCOLL_PC_MPI_LIBS "")
find_package(PkgConfig QUIET)
if(ZCOLL_MPI_VENDOR STREQUAL "MPICH")
  set(_zcoll_mpi_pc mpich)
elseif(ZCOLL_MPI_VENDOR STREQUAL "Open MPI")
  set(_zcoll_mpi_pc ompi-c)
else()
  set(_zcoll_mpi_pc "")
endif()
set(_zcoll_mpi_pc_ok FALSE)
if(_zcoll_mpi_pc AND PKG_CONFIG_EXECUTABLE)
  execute_process(COMMAND "${PKG_CONFIG_EXECUTABLE}" --exists ${_zcoll_mpi_pc}
                  RESULT_VARIABLE _zcoll_rc OUTPUT_QUIET ERROR_QUIET)
  if(_zcoll_rc EQUAL 0)
    set(_zcoll_mpi_pc_ok TRUE)
  endif()
endif()
if(_zcoll_mpi_pc)
  set(ZCOLL_PC_MPI_MODULE "${_zcoll_mpi_pc}")
else()
  set(ZCOLL_PC_MPI_MODULE "")
endif()
if(_zcoll_mpi_pc_ok)
  set(ZCOLL_PC_MPI_REQUIRES "Requires.private: ${_zcoll_mpi_pc}")
else()
  foreach(_d IN LISTS MPI_C_INCLUDE_DIRS)
    string(APPEND ZCOLL_PC_MPI_CFLAGS " -I${_d}")
  endforeach()
  foreach(_l IN LISTS MPI_C_LIBRARIES)
    string(APPEND ZCOLL_PC_MPI_LIBS " ${_l}")
  endforeach()
endif()

configure_file("${CMAKE_CURRENT_LIST_DIR}/zcoll_codec.pc.in"
               "${PROJECT_BINARY_DIR}/pkg/zcoll_codec.pc" @ONLY)
configure_file("${CMAKE_CURRENT_LIST_DIR}/zcoll.pc.in"
               "${PROJECT_BINARY_DIR}/pkg/zcoll.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/pkg/zcoll.pc" "${PROJECT_BINARY_DIR}/pkg/zcoll_codec.pc"
  DESTINATION ${ZCOLL_PC_DIR} COMPONENT dev)

message(STATUS "zcoll: install prefix ${CMAKE_INSTALL_PREFIX}; MPI for users: ${ZCOLL_MPI_VENDOR} (${ZCOLL_MPI_C_COMPILER})")
