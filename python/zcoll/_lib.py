"""ctypes view of the C library: struct mirrors, the loaded libraries, error mapping.

ctypes releases the GIL around every foreign call, so compression and the collectives
run while other Python threads continue.
"""
import ctypes
import os
from ctypes import POINTER, c_char_p, c_double, c_int, c_size_t, c_void_p

from . import _build_config

_HERE = os.path.dirname(os.path.abspath(__file__))

FLOAT32, FLOAT64 = 1, 2
EB_ABS, EB_REL = 0, 1
NUM_COLLECTIVES = 8
ERR_ARG = 1


class CodecParams(ctypes.Structure):
    _fields_ = [("codec", c_int), ("eb_mode", c_int), ("eb", c_double), ("threads", c_int),
                ("chunk_len", c_size_t), ("ndims", c_int), ("dims", c_size_t * 3)]


class StreamInfo(ctypes.Structure):
    _fields_ = [("codec", c_int), ("format_version", c_int), ("dtype", c_int), ("count", c_size_t),
                ("eb_abs", c_double), ("chunk_len", c_size_t), ("nchunks", c_size_t),
                ("ndims", c_int), ("dims", c_size_t * 3), ("stream_bytes", c_size_t)]


class Config(ctypes.Structure):
    _fields_ = [("codec", CodecParams), ("min_bytes", c_size_t), ("algorithm", c_int),
                ("reduction", c_int), ("bound_target", c_int),
                ("algorithms", c_int * NUM_COLLECTIVES), ("decision", c_int),
                ("link_gbps", c_double), ("link_latency_us", c_double)]


class Stats(ctypes.Structure):
    _fields_ = [("compressed", c_int), ("algorithm", c_int), ("eb_abs", c_double),
                ("raw_bytes", c_size_t), ("wire_bytes", c_size_t), ("t_compress", c_double),
                ("t_comm", c_double), ("t_decompress", c_double), ("t_reduce", c_double),
                ("t_total", c_double), ("t_predicted", c_double), ("t_predicted_plain", c_double),
                ("ratio_predicted", c_double), ("t_model", c_double), ("t_setup", c_double)]


class CommInfo(ctypes.Structure):
    _fields_ = [("nodes", c_int), ("node", c_int), ("node_rank", c_int), ("node_size", c_int),
                ("max_node_size", c_int), ("rails", c_int), ("codec_threads", c_int),
                ("model_threads", c_int), ("intra_latency_s", c_double),
                ("intra_bytes_per_s", c_double), ("inter_latency_s", c_double),
                ("inter_bytes_per_s", c_double)]


class ZcollError(RuntimeError):
    """A zcoll C call failed; .code is the ZCOLL_ERR_* value."""

    def __init__(self, code, what, message, detail=""):
        self.code = code
        self.detail = detail
        text = f"{what}: {message}"
        if detail:
            text += f" ({detail})"
        super().__init__(text)


def _declare(lib, name, restype, *argtypes):
    fn = getattr(lib, name)
    fn.restype = restype
    fn.argtypes = list(argtypes)


def _load(name):
    path = os.path.join(_HERE, f"lib{name}.so")
    return ctypes.CDLL(path)


codec = _load("zcoll_codec")
for _n, _r, _a in [
    ("zcoll_strerror", c_char_p, [c_int]),
    ("zcoll_error_detail", c_char_p, []),
    ("zcoll_version_string", c_char_p, []),
    ("zcoll_codec_name", c_char_p, [c_int]),
    ("zcoll_codec_from_name", c_int, [c_char_p, POINTER(c_int)]),
    ("zcoll_codec_params_init", None, [POINTER(CodecParams)]),
    ("zcoll_codec_bound", c_size_t, [c_size_t, c_int]),
    ("zcoll_compress", c_int, [POINTER(CodecParams), c_int, c_void_p, c_size_t, c_void_p, c_size_t,
                               POINTER(c_size_t), POINTER(c_double)]),
    ("zcoll_stream_inspect", c_int, [c_void_p, c_size_t, POINTER(StreamInfo)]),
    ("zcoll_decompress", c_int, [c_void_p, c_size_t, c_int, c_void_p, c_size_t, c_int]),
]:
    _declare(codec, _n, _r, *_a)


def check(rc, what, lib=codec):
    """Raises ZcollError for a non-zero zcoll return code, with the C library's detail."""
    if rc != 0:
        message = lib.zcoll_strerror(rc).decode()
        detail = lib.zcoll_error_detail().decode()
        raise ZcollError(rc, what, message, detail)


def codec_id(name):
    if isinstance(name, int):
        if codec.zcoll_codec_name(name) is None:
            raise ValueError(f"unknown codec id {name}; valid: {', '.join(codec_names())}")
        return name
    out = c_int()
    if codec.zcoll_codec_from_name(str(name).encode(), ctypes.byref(out)) != 0:
        raise ValueError(f"unknown codec {name!r}; valid: {', '.join(codec_names())}")
    return out.value


def codec_names():
    names, i = [], 1
    while (n := codec.zcoll_codec_name(i)) is not None:
        names.append(n.decode())
        i += 1
    return names


def eb_mode(mode):
    modes = {"abs": EB_ABS, "rel": EB_REL}
    try:
        return modes[str(mode).lower()]
    except KeyError:
        raise ValueError(f"mode must be 'rel' or 'abs', not {mode!r}") from None


_mpi = None


def mpi_lib():
    """The MPI layer (libzcoll + the mpi4py shim), loaded on first use."""
    global _mpi
    if _mpi is not None:
        return _mpi
    if not _build_config.HAVE_MPI:
        raise ImportError(
            "this zcoll was built without MPI, so it has the codec only; reinstall it from "
            "its source with MPICC set to the mpicc of the MPI your mpi4py uses "
            "(mpi4py.get_config()['mpicc']), e.g. MPICC=mpicc.mpich pip install .")
    lib = _load("zcoll_mpi4py")
    zl = _load("zcoll")
    for name in ("zcoll_strerror", "zcoll_error_detail"):
        _declare(zl, name, c_char_p)
    zl.zcoll_strerror.argtypes = [c_int]
    for _n, _r, _a in [
        ("zcoll_config_init", None, [POINTER(Config)]),
        ("zcoll_algorithm_name", c_char_p, [c_int]),
        ("zcoll_algorithm_from_name", c_int, [c_char_p, POINTER(c_int)]),
        ("zcoll_collective_name", c_char_p, [c_int]),
        ("zcoll_comm_free", c_int, [POINTER(c_void_p)]),
        ("zcoll_last_stats", c_int, [c_void_p, POINTER(Stats)]),
        ("zcoll_comm_warm_start", c_int, [c_void_p, POINTER(c_int)]),
        ("zcoll_comm_get_info", c_int, [c_void_p, POINTER(CommInfo)]),
    ]:
        _declare(zl, _n, _r, *_a)
    for _n, _a in [
        ("zcollpy_comm_create", [c_void_p, POINTER(Config), POINTER(c_void_p)]),
        ("zcollpy_allreduce", [c_void_p, c_void_p, c_int, c_void_p, c_void_p, c_void_p]),
        ("zcollpy_reduce", [c_void_p, c_void_p, c_int, c_void_p, c_void_p, c_int, c_void_p]),
        ("zcollpy_reduce_scatter_block", [c_void_p, c_void_p, c_int, c_void_p, c_void_p, c_void_p]),
        ("zcollpy_bcast", [c_void_p, c_int, c_void_p, c_int, c_void_p]),
        ("zcollpy_allgather", [c_void_p, c_int, c_void_p, c_void_p, c_int, c_void_p, c_void_p]),
        ("zcollpy_alltoall", [c_void_p, c_int, c_void_p, c_void_p, c_int, c_void_p, c_void_p]),
        ("zcollpy_send", [c_void_p, c_int, c_void_p, c_int, c_int, c_void_p]),
        ("zcollpy_recv", [c_void_p, c_int, c_void_p, c_int, c_int, c_void_p, POINTER(c_int * 3)]),
        ("zcollpy_mpi_library_version", [c_char_p, c_size_t]),
    ]:
        _declare(lib, _n, c_int, *_a)
    _declare(lib, "zcollpy_in_place", c_void_p)
    _declare(lib, "zcollpy_struct_sizes", None, POINTER(c_size_t * 4))
    sizes = (c_size_t * 4)()
    lib.zcollpy_struct_sizes(ctypes.byref(sizes))
    mine = (ctypes.sizeof(CodecParams), ctypes.sizeof(Config), ctypes.sizeof(Stats), ctypes.sizeof(CommInfo))
    if tuple(sizes) != mine:
        raise ImportError(f"zcoll's C structs ({tuple(sizes)} bytes) do not match the Python "
                          f"mirrors ({mine}): the package and its libraries are out of step; reinstall it")
    _mpi = (lib, zl)
    return _mpi
