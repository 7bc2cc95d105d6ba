# `zcoll-bench coll --interleave` times several paths call by call on shared buffers: each
# path's output must still be its own. Runs an allreduce through six paths whose errors
# differ (plain MPI, zcoll's homomorphic ring, decompress-operate-compress, the C-Coll
# baseline and plainring) or must not (zcoll-mpi: zcoll configured to plain MPI, whose
# error must be plain MPI's to the bit) in turn and interleaved; both launches must exit 0
# (1 where an error exceeds its bound), and every line's max_abs_err and mean_err must be the
# same in both. Timings are not asserted.
# -DLAUNCH=<mpiexec;-n;3;flags> -DBENCH=<zcoll-bench> -DDATA=<data dir>
function(run_bench mode out_var)
  execute_process(
    COMMAND ${LAUNCH} "${BENCH}" coll --op allreduce --input "${DATA}/cesm_TS_10x192x288.f32"
            --bytes 256K --algo mpi,zcoll,zcoll-doc,c-coll,plainring,zcoll-mpi --iters 2 --warmup 1 --json ${mode}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "zcoll-bench coll ${mode} exited with ${rc}\n${out}${err}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

run_bench("" blocks)
run_bench("--interleave" interleaved)
foreach(algo mpi zcoll zcoll-doc c-coll plainring zcoll-mpi)
  set(pattern "\"algo\":\"${algo}\",[^\n]*\"max_abs_err\":([^,]*),[^\n]*\"mean_err\":([^,]*),[^\n]*\"interleaved\":")
  foreach(mode blocks interleaved)
    if(NOT ${mode} MATCHES "${pattern}(true|false)")
      message(FATAL_ERROR "no ${algo} line in the ${mode} run:\n${${mode}}")
    endif()
    set(err_${mode} "${CMAKE_MATCH_1} ${CMAKE_MATCH_2}")
    set(flag_${mode} "${CMAKE_MATCH_3}")
  endforeach()
  if(NOT flag_blocks STREQUAL "false" OR NOT flag_interleaved STREQUAL "true")
    message(FATAL_ERROR "${algo}: interleaved flags ${flag_blocks} / ${flag_interleaved}")
  endif()
  if(NOT err_blocks STREQUAL err_interleaved)
    message(FATAL_ERROR "${algo}: max_abs_err, mean_err ${err_blocks} in turn, ${err_interleaved} interleaved")
  endif()
  message(STATUS "${algo}: max_abs_err, mean_err ${err_blocks} in both")
  set(err_of_${algo} "${err_blocks}")
endforeach()
if(NOT err_of_zcoll-mpi STREQUAL err_of_mpi)
  message(FATAL_ERROR "zcoll-mpi: max_abs_err, mean_err ${err_of_zcoll-mpi}, plain MPI's ${err_of_mpi}")
endif()
