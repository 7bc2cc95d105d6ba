"""A pure-Python writer of the zcoll_h5_writer file layout, format version 1 (docs/hdf5.md),
for tests: h5py for the file, zcoll.codec.compress (ABS, the field's eb_abs) for the
streams. It writes what P writer ranks would, from one process, so that the Python reader
(and the C reader) can be tested without the C writer or MPI.

    write(path, [Field("rho", x, [((0, 0), (5, 8)), ((5, 0), (3, 8))], eb_abs=1e-3)])

A rank's region defaults to its exact stream size (as in pipelined mode); region_sizes
smaller than the stream force the rest of it into `overflow`, as a predictive writer does
when its prediction was too small.
"""
import math
from dataclasses import dataclass

import numpy as np

import zcoll

DTYPE_CODES = {np.dtype(np.float32): 1, np.dtype(np.float64): 2}
CODEC_IDS = {"fzl": 1, "lpbyte": 2, "lpbit": 3, "szx": 4}


@dataclass
class Field:
    name: str
    data: np.ndarray                 # the global array (C order)
    partition: list                  # per rank: (start, count), ndims values each
    eb_abs: float                    # the ABS bound every stream is compressed with
    codec: str = "fzl"
    eb_mode: int = 0                 # 0 ABS, 1 REL: stored as given
    eb: float = None                 # stored as given; defaults to eb_abs
    region_sizes: list = None        # per rank; None: the exact stream sizes


def shape_hint(count):
    """The stream's shape: count with extents of 1 dropped ((1,) if none is left); above 3
    dimensions zcoll.codec.lorenzo_dims merges the slowest ones (as the filter does for
    chunks)."""
    return tuple(c for c in count if c != 1) or (1,)


def bare_stream(block, eb_abs, codec):
    """The C codec stream of block (zcoll.compress's buffer without its Python envelope)."""
    if block.size == 0:
        return b""
    a = np.ascontiguousarray(block).reshape(shape_hint(block.shape))
    buf = zcoll.compress(a, eb_abs, mode="abs", codec=codec, shape_hint=True)
    head = 8 + 8 * a.ndim  # b"ZCPY", version, ndim, 0, then ndim uint64 extents
    assert buf[:4] == b"ZCPY"
    return buf[head:]


def field_streams(f):
    """Per rank: the bare stream of its hyperslab."""
    out = []
    for start, count in f.partition:
        sl = tuple(slice(s, s + c) for s, c in zip(start, count))
        out.append(bare_stream(f.data[sl], f.eb_abs, f.codec))
    return out


def write(path, fields, *, mode="predictive", format_version=1, complete=1, writer_ranks=None,
          vlen_mode=False):
    """Writes fields (a list of Field, in queue order) as P writer ranks would. Returns, per
    field name, the list of per-rank streams (bytes), for tests that tamper with them.
    vlen_mode: store @zcoll_h5_mode as a variable-length string (in HDF5's global heap)."""
    import h5py
    P = writer_ranks if writer_ranks is not None else len(fields[0].partition)
    written = {}
    layouts = []
    for f in fields:
        assert len(f.partition) == P
        streams = field_streams(f)
        written[f.name] = streams
        ss = [len(s) for s in streams]
        rs = list(f.region_sizes) if f.region_sizes is not None else list(ss)
        ro = np.cumsum([0] + rs[:-1]).tolist()
        osz = [max(0, a - b) for a, b in zip(ss, rs)]
        oo = np.cumsum([0] + osz[:-1]).tolist()
        region_bytes = bytearray(sum(rs))
        overflow_bytes = bytearray()
        for r, s in enumerate(streams):
            head = s[:min(len(s), rs[r])]
            region_bytes[ro[r]:ro[r] + len(head)] = head  # the rest of a region stays 0
            overflow_bytes += s[len(head):]
        assert len(overflow_bytes) == sum(osz)
        layouts.append((f, ss, rs, ro, osz, oo, region_bytes, overflow_bytes))

    u32 = np.dtype("<u4")
    with h5py.File(path, "w") as h:
        h.attrs.create("zcoll_h5_format_version", format_version, dtype=u32)
        h.attrs.create("zcoll_h5_complete", complete, dtype=u32)
        if vlen_mode:
            h.attrs["zcoll_h5_mode"] = mode  # h5py's default: a variable-length UTF-8 string
        else:  # a fixed-length ASCII string, as the C writer stores it
            h.attrs.create("zcoll_h5_mode", np.bytes_(mode.encode()))
        h.attrs.create("zcoll_h5_writer_ranks", P, dtype=u32)
        h.attrs.create("zcoll_h5_fields", len(fields), dtype=u32)
        groups = []
        for index, (f, ss, rs, ro, osz, oo, region_bytes, _) in enumerate(layouts):
            g = h.create_group(f.name)
            g.attrs.create("zcoll_field_index", index, dtype=u32)
            g.attrs.create("zcoll_dtype", DTYPE_CODES[f.data.dtype], dtype=u32)
            g.attrs.create("zcoll_codec", CODEC_IDS[f.codec], dtype=u32)
            g.attrs.create("zcoll_eb_mode", f.eb_mode, dtype=u32)
            g.attrs.create("zcoll_eb", f.eb if f.eb is not None else f.eb_abs, dtype="<f8")
            g.attrs.create("zcoll_eb_abs", f.eb_abs, dtype="<f8")
            g.attrs.create("zcoll_dims", np.array(f.data.shape, dtype="<u8"))
            part = np.array([[list(s), list(c)] for s, c in f.partition], dtype="<u8")
            g.create_dataset("partition", data=part.reshape(P, 2, f.data.ndim))
            pred = rs if mode == "predictive" else [0] * P
            for name, vals in (("region_offset", ro), ("region_size", rs),
                               ("predicted_size", pred), ("stream_size", ss),
                               ("overflow_offset", oo), ("overflow_size", osz)):
                g.create_dataset(name, data=np.array(vals, dtype="<u8").reshape(P))
            g.create_dataset("streams", data=np.frombuffer(bytes(region_bytes), dtype=np.uint8))
            groups.append(g)
        # `overflow` after every `streams` of the flush, as the C writer allocates them.
        for g, lay in zip(groups, layouts):
            g.create_dataset("overflow", data=np.frombuffer(bytes(lay[7]), dtype=np.uint8))
    return written


def split(n, parts):
    """n split into `parts` uneven, contiguous pieces (the first ones larger): (start, count)."""
    sizes = [n // parts + (1 if i < n % parts else 0) for i in range(parts)]
    starts = np.cumsum([0] + sizes[:-1]).tolist()
    return list(zip(starts, sizes))


def grid_partition(shape, cuts):
    """The hyperslabs of a grid: cuts[d] is a list of (start, count) along dimension d;
    ranks in C order of the grid."""
    out = []
    for idx in np.ndindex(*[len(c) for c in cuts]):
        start = tuple(cuts[d][i][0] for d, i in enumerate(idx))
        count = tuple(cuts[d][i][1] for d, i in enumerate(idx))
        out.append((start, count))
    return out


def volume(count):
    return math.prod(count)
