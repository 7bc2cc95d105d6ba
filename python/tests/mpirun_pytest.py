"""pytest under mpiexec: every rank runs the tests; rank 0 reports, the others write to a
file that is printed only when that rank fails.
    mpiexec -n 3 python python/tests/mpirun_pytest.py [pytest args]
"""
import os
import sys
import tempfile

from mpi4py import MPI

import pytest

rank = MPI.COMM_WORLD.Get_rank()
args = sys.argv[1:] + ["-p", "no:cacheprovider", "--color=no"]
if rank == 0:
    rc = pytest.main(args)
else:
    log = tempfile.TemporaryFile(mode="w+")
    saved = os.dup(1), os.dup(2)
    sys.stdout.flush(), sys.stderr.flush()
    os.dup2(log.fileno(), 1), os.dup2(log.fileno(), 2)
    rc = pytest.main(args + ["-q"])
    sys.stdout.flush(), sys.stderr.flush()
    os.dup2(saved[0], 1), os.dup2(saved[1], 2)
    if rc != 0:
        log.seek(0)
        sys.stderr.write(f"---- rank {rank} failed (pytest exit {rc}):\n{log.read()}")
# Exit only after every rank is done, so that no rank's MPI_Finalize races a straggler.
MPI.COMM_WORLD.Barrier()
sys.exit(int(rc))
