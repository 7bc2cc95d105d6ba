# Runs zcoll_stream_digest and requires its digests of every stream and output to equal
# a reference:
#   -DDIGEST=<zcoll_stream_digest>                 the dispatched (AVX2) kernels against
#                                                  ZCOLL_ISA=generic
#   -DDIGEST=... -DGOLDEN=<file>                   `zcoll_stream_digest --golden` against
#                                                  the digests recorded in <file>
#   -DDIGEST=... -DGOLDEN=<file> -DUPDATE=ON       records them: only for a deliberate
#                                                  change of the stream format
cmake_minimum_required(VERSION 3.17)  # ZIP_LISTS
if(NOT DIGEST)
  message(FATAL_ERROR "pass -DDIGEST=<path to zcoll_stream_digest>")
endif()

function(run_digest out_var)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "zcoll_stream_digest failed (${rc}):\n${err}\n${out}")
  endif()
  string(LENGTH "${out}" len)
  if(len LESS 100)
    message(FATAL_ERROR "zcoll_stream_digest printed too little:\n${out}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

# Fails with the first differing lines of a (named name_a) and b (named name_b).
function(require_equal name_a a name_b b what)
  if("${a}" STREQUAL "${b}")
    return()
  endif()
  string(REPLACE "\n" ";" la "${a}")
  string(REPLACE "\n" ";" lb "${b}")
  list(LENGTH la na)
  list(LENGTH lb nb)
  set(diff "")
  set(shown 0)
  # (ZIP_LISTS walks both lists once; list(GET) per line would be quadratic.)
  foreach(x y IN ZIP_LISTS la lb)
    if(NOT "${x}" STREQUAL "${y}")
      string(APPEND diff "  ${name_a}: ${x}\n  ${name_b}: ${y}\n")
      math(EXPR shown "${shown} + 1")
      if(shown EQUAL 20)
        string(APPEND diff "  (the first 20 differences)\n")
        break()
      endif()
    endif()
  endforeach()
  message(FATAL_ERROR "${what} (${na} against ${nb} lines):\n${diff}")
endfunction()

if(GOLDEN)
  run_digest(out "${DIGEST}" --golden)
  if(UPDATE)
    file(WRITE "${GOLDEN}" "${out}")
    message(STATUS "recorded the digests in ${GOLDEN}")
    return()
  endif()
  file(READ "${GOLDEN}" expected)
  require_equal("recorded" "${expected}" "now     " "${out}"
                "streams or outputs differ from those recorded in ${GOLDEN}")
  string(LENGTH "${out}" len)
  message(STATUS "streams and outputs equal the ${len} bytes of recorded digests")
else()
  run_digest(out1 "${DIGEST}")
  run_digest(out2 "${CMAKE_COMMAND}" -E env ZCOLL_ISA=generic "${DIGEST}")
  require_equal("dispatched" "${out1}" "generic   " "${out2}"
                "streams or outputs differ between the dispatched and the generic kernels")
  string(LENGTH "${out1}" len)
  message(STATUS "dispatched and generic kernels agree on ${len} bytes of digests")
endif()
