"""compress / decompress / inspect on numpy arrays.

A buffer from zcoll.compress is a short envelope that records the array's shape (the C
stream keeps at most three extents, and only when they are a Lorenzo hint), followed by
the C library's stream, unchanged:

    offset 0  b"ZCPY"
           4  uint8 envelope version (1)
           5  uint8 ndim
           6  uint16 0
           8  ndim x uint64 little-endian extents
    8 + 8 ndim  the zcoll stream (zcoll_decompress / zcoll_stream_inspect read it as is)

decompress and inspect also take a bare C stream (a 1-D array, or the stream's shape hint).
"""
import ctypes
import struct
import threading

import numpy as np

from . import _lib

MAGIC = b"ZCPY"
ENVELOPE_VERSION = 1
_HEAD = struct.Struct("<4sBBH")

_DTYPES = {np.dtype(np.float32): _lib.FLOAT32, np.dtype(np.float64): _lib.FLOAT64}
_NUMPY = {v: k for k, v in _DTYPES.items()}


def _float_array(a, what="compress"):
    """a as a C-contiguous native float32/float64 ndarray (no copy), or a clear error."""
    if not isinstance(a, np.ndarray):
        a = np.asarray(a)
    dt = a.dtype
    if dt.kind == "f" and not dt.isnative and dt.newbyteorder("=") in _DTYPES:
        raise TypeError(f"zcoll.{what}: array is byte-swapped ({dt.str}); convert it with "
                        f"a.astype(a.dtype.newbyteorder('='))")
    if dt not in _DTYPES:
        raise TypeError(f"zcoll.{what}: dtype {dt} is not supported; zcoll compresses float32 and "
                        f"float64 (use a.astype(np.float32) or np.float64, or a lossless compressor "
                        f"for other types)")
    if not a.flags.c_contiguous:
        raise ValueError(f"zcoll.{what}: array is not C-contiguous; pass np.ascontiguousarray(a)")
    return a


def lorenzo_dims(shape):
    """The shape hint for Lorenzo prediction: the last three extents, leading ones merged.
    None for 0-d and 1-d arrays (and empty ones), which are 1-D to the codec anyway."""
    if len(shape) < 2 or 0 in shape:
        return None
    if len(shape) == 2:
        return tuple(shape)
    lead = 1
    for d in shape[:-2]:
        lead *= d
    return (lead, shape[-2], shape[-1])


def _params(eb, mode, codec, threads, chunk_len=0):
    if isinstance(eb, bool) or not isinstance(eb, (int, float, np.floating, np.integer)):
        raise TypeError(f"eb must be a number, not {type(eb).__name__}")
    eb = float(eb)
    if not (eb > 0 and np.isfinite(eb)):
        raise ValueError(f"eb must be a positive finite number, not {eb}")
    if int(threads) < 0:
        raise ValueError(f"threads must be >= 0 (0 = OpenMP default), not {threads}")
    p = _lib.CodecParams()
    _lib.codec.zcoll_codec_params_init(ctypes.byref(p))
    p.codec = _lib.codec_id(codec)
    p.eb_mode = _lib.eb_mode(mode)
    p.eb = eb
    p.threads = int(threads)
    p.chunk_len = int(chunk_len)
    return p


def compress(a, eb, mode="rel", codec="fzl", threads=0, *, shape_hint=False, chunk_len=0):
    """Compresses a C-contiguous float32/float64 array so that every finite value comes back
    within eb (mode="abs") or eb x (max - min) (mode="rel"); NaN and Inf come back bit for bit.

    shape_hint: give the codec the array's last two or three extents for Lorenzo prediction
    over them. Off by default: on the shipped fields it raised the ratio by 1-20% but
    compressed 3-5x slower (docs/python.md has the table). threads: OpenMP threads, 0 = default;
    the bytes do not depend on it. The GIL is released while the C library works.
    Returns bytes that zcoll.decompress turns back into an array of the same dtype and shape.
    """
    a = _float_array(a)
    p = _params(eb, mode, codec, threads, chunk_len)
    dims = lorenzo_dims(a.shape) if shape_hint else None
    if dims is not None:
        p.ndims = len(dims)
        for i, d in enumerate(dims):
            p.dims[i] = d
    dtype = _DTYPES[a.dtype]
    head = _HEAD.pack(MAGIC, ENVELOPE_VERSION, a.ndim, 0) + struct.pack(f"<{a.ndim}Q", *a.shape)
    cap = _lib.codec.zcoll_codec_bound(a.size, dtype)
    if cap == 0:
        raise ValueError(f"zcoll.compress: {a.size} elements are too many for one stream")
    scratch = _scratch(len(head) + cap)
    scratch[:len(head)] = np.frombuffer(head, dtype=np.uint8)
    size = ctypes.c_size_t()
    rc = _lib.codec.zcoll_compress(ctypes.byref(p), dtype, a.ctypes.data, a.size,
                                   scratch.ctypes.data + len(head), cap, ctypes.byref(size), None)
    _lib.check(rc, "zcoll.compress")
    return scratch[:len(head) + size.value].tobytes()


# Compression writes into a per-thread buffer that is kept between calls, and the result
# is copied out. Fresh memory costs a page fault per page touched, and the codec touches
# up to the whole bound: on a 64 MiB array that made a fresh output buffer 1.5-2x slower
# than the C call, while the copy of the compressed bytes costs a few percent
# (python/bench/bench_compress.py). Buffers above _SCRATCH_KEEP are not kept.
_SCRATCH_KEEP = 256 << 20
_tls = threading.local()


def _scratch(nbytes):
    buf = getattr(_tls, "buf", None)
    if buf is not None and buf.size >= nbytes:
        return buf
    buf = np.empty(nbytes, dtype=np.uint8)
    _tls.buf = buf if nbytes <= _SCRATCH_KEEP else None
    return buf


def _split(buf):
    """(shape or None, stream memory as a uint8 ndarray) of an enveloped or bare stream."""
    try:
        mem = np.frombuffer(buf, dtype=np.uint8)
    except (TypeError, ValueError) as e:
        raise TypeError(f"expected a bytes-like object holding a zcoll stream, not "
                        f"{type(buf).__name__} ({e})") from None
    if mem.size >= _HEAD.size and bytes(mem[:4]) == MAGIC:
        magic, version, ndim, _ = _HEAD.unpack(bytes(mem[:_HEAD.size]))
        if version != ENVELOPE_VERSION:
            raise _lib.ZcollError(6, "zcoll.decompress",
                                  f"envelope version {version} is not known to this zcoll "
                                  f"(it reads {ENVELOPE_VERSION})")
        end = _HEAD.size + 8 * ndim
        if mem.size < end:
            raise _lib.ZcollError(5, "zcoll.decompress", "buffer ends inside the shape envelope")
        shape = struct.unpack(f"<{ndim}Q", bytes(mem[_HEAD.size:end]))
        return shape, mem[end:]
    return None, mem


def _info(mem, what):
    info = _lib.StreamInfo()
    _lib.check(_lib.codec.zcoll_stream_inspect(mem.ctypes.data, mem.size, ctypes.byref(info)), what)
    return info


def _shape(shape, info, what):
    if shape is None:
        return tuple(info.dims[:info.ndims]) if info.ndims >= 2 else (info.count,)
    n = 1
    for d in shape:
        n *= d
    if n != info.count:
        raise _lib.ZcollError(5, what, f"envelope shape {shape} holds {n} values but the stream "
                              f"{info.count}")
    return shape


def decompress(buf, threads=0, out=None):
    """The array a zcoll.compress buffer holds (a new array, or `out`: a C-contiguous array
    of the stream's dtype and size, which is filled and returned)."""
    shape, mem = _split(buf)
    info = _info(mem, "zcoll.decompress")
    shape = _shape(shape, info, "zcoll.decompress")
    dtype = _NUMPY.get(info.dtype)
    if dtype is None:
        raise _lib.ZcollError(2, "zcoll.decompress", f"stream element type {info.dtype} is unknown")
    if out is None:
        out = np.empty(shape, dtype=dtype)
    else:
        out = _float_array(out, "decompress")
        if out.dtype != dtype or out.size != info.count:
            raise ValueError(f"zcoll.decompress: out is {out.dtype} x {out.size}, the stream holds "
                             f"{dtype} x {info.count}")
    rc = _lib.codec.zcoll_decompress(mem.ctypes.data, mem.size, info.dtype, out.ctypes.data,
                                     info.count, int(threads))
    _lib.check(rc, "zcoll.decompress")
    return out


def inspect(buf):
    """What a stream says about itself, after validating its header and chunk index."""
    shape, mem = _split(buf)
    total = int(np.frombuffer(buf, dtype=np.uint8).size)
    info = _info(mem, "zcoll.inspect")
    name = _lib.codec.zcoll_codec_name(info.codec)
    return {
        "codec": name.decode() if name else info.codec,
        "format_version": info.format_version,
        "dtype": str(_NUMPY[info.dtype]) if info.dtype in _NUMPY else info.dtype,
        "shape": _shape(shape, info, "zcoll.inspect"),
        "count": info.count,
        "eb_abs": info.eb_abs,
        "chunk_len": info.chunk_len,
        "nchunks": info.nchunks,
        "lorenzo_dims": tuple(info.dims[:info.ndims]) if info.ndims >= 2 else None,
        "stream_bytes": info.stream_bytes,
        "bytes": total,
        "ratio": info.count * _NUMPY[info.dtype].itemsize / total if info.dtype in _NUMPY else None,
    }
