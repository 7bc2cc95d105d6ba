# zcoll_auto_study_replay and bench/netem/replay_cells.py kept working together: the script
# turns a committed study into its cells' columns, and the replay plays each cell from each
# of its 95 starting calls. It must read all 20 cells of the study and print its summary
# line; what it prints is a benchmark's figure and is not asserted.
# -DLAUNCH=<mpiexec;-n;1;flags> -DREPLAY=<zcoll_auto_study_replay> -DPYTHON=<python3>
# -DSOURCE=<source dir> -DWORK=<a scratch directory>
set(file "${WORK}/auto_study_replay.txt")
execute_process(COMMAND "${PYTHON}" "${SOURCE}/bench/netem/replay_cells.py" "${file}"
                        "${SOURCE}/docs/netem/auto_2x2/c8efc36-100calls-nyx"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "replay_cells.py exited with ${rc}\n${out}${err}")
endif()
execute_process(COMMAND ${LAUNCH} "${REPLAY}" "${file}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "zcoll_auto_study_replay exited with ${rc}\n${out}${err}")
endif()
if(NOT out MATCHES "^20 cells," OR NOT out MATCHES "\nall cells +[0-9]+/1900 ")
  message(FATAL_ERROR "zcoll_auto_study_replay did not play the study's 20 cells 95 times each:\n${out}${err}")
endif()
# Two studies in folders of one name (one build's two-rank studies of each field) keep their
# 60 cells each: named by the folder alone, the second field's columns took the first's cells.
execute_process(COMMAND "${PYTHON}" "${SOURCE}/bench/netem/replay_cells.py" "${WORK}/auto_study_replay_pair.txt"
                        "${SOURCE}/docs/netem/auto_2rank/97923ec-100calls"
                        "${SOURCE}/docs/netem/auto_2rank_cesm/97923ec-100calls"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "^replay_cells.py: 120 cells")
  message(FATAL_ERROR "replay_cells.py did not keep both studies' 60 cells (${rc}):\n${out}${err}")
endif()
