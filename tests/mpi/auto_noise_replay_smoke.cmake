# zcoll_auto_noise_replay and bench/netem/host_noise.py kept working together: the script
# turns a committed study into cells and noise rows, and the replay plays each cell twice.
# It must read all 20 cells of the study and print its summary line; what it prints is a
# benchmark's figure and is not asserted.
# -DLAUNCH=<mpiexec;-n;1;flags> -DREPLAY=<zcoll_auto_noise_replay> -DPYTHON=<python3>
# -DSOURCE=<source dir> -DWORK=<a scratch directory>
set(file "${WORK}/auto_noise_replay.txt")
execute_process(COMMAND "${PYTHON}" "${SOURCE}/bench/netem/host_noise.py" "${file}"
                        "${SOURCE}/docs/netem/auto_2x2/c8efc36-100calls-nyx"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "host_noise.py exited with ${rc}\n${out}${err}")
endif()
execute_process(COMMAND ${LAUNCH} "${REPLAY}" "${file}" --plays 2
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "zcoll_auto_noise_replay exited with ${rc}\n${out}${err}")
endif()
if(NOT out MATCHES "^20 cells, 84 noise rows" OR NOT out MATCHES "\nall cells +[0-9]+/40 ")
  message(FATAL_ERROR "zcoll_auto_noise_replay did not play the study's 20 cells twice:\n${out}${err}")
endif()
