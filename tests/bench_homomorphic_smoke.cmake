# Runs `zcoll-bench homomorphic --json` on two shipped fields: it must exit 0 (it exits 1
# when an error exceeds its bound or a call fails) and print every key it documents.
# Timings are not asserted. -DBENCH=<zcoll-bench> -DDATA=<data dir>
execute_process(
  COMMAND "${BENCH}" homomorphic --input "${DATA}/cesm_TS_10x192x288.f32" --input "${DATA}/echam5_T_17x96x192.f32"
          --eb-mode rel --eb 1e-4 --iters 1 --json
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "zcoll-bench homomorphic exited with ${rc}\n${out}${err}")
endif()
foreach(key homo_gbps doc_gbps speedup_vs_doc max_err_over_eb bound_over_eb doc_max_err_over_eb fold_gbps
            fold_doc_gbps fold_speedup_vs_doc fold_max_err_over_eb fold_doc_max_err_over_eb)
  if(NOT out MATCHES "\"${key}\":")
    message(FATAL_ERROR "key ${key} missing from:\n${out}")
  endif()
endforeach()
message(STATUS "${out}")
