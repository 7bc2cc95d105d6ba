"""zcoll: error-bounded lossy compression for numpy arrays and MPI collectives.

    import zcoll
    buf = zcoll.compress(a, eb=1e-4, mode="rel")     # float32/float64, any shape
    b = zcoll.decompress(buf)                        # |a - b| <= eb x (max - min)
    zcoll.inspect(buf)                               # dict: codec, dtype, shape, eb_abs, ratio...

    from mpi4py import MPI
    zc = zcoll.Comm(MPI.COMM_WORLD, eb=1e-4, mode="rel")
    zc.Allreduce(MPI.IN_PLACE, g, op=MPI.SUM)

See docs/python.md.
"""
from . import _build_config
from ._lib import ZcollError, codec_names
from .codec import compress, decompress, inspect

__version__ = _build_config.VERSION
HAVE_MPI = _build_config.HAVE_MPI


def __getattr__(name):
    # Comm is imported on first use so that a codec-only install and codec users never
    # load MPI or need mpi4py.
    if name == "Comm":
        from ._lib import mpi_lib
        mpi_lib()  # a codec-only build raises ImportError here, saying how to get MPI
        from .mpi import Comm
        return Comm
    raise AttributeError(f"module 'zcoll' has no attribute {name!r}")


__all__ = ["compress", "decompress", "inspect", "Comm", "ZcollError", "codec_names", "HAVE_MPI"]
