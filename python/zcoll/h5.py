"""Reading files written by zcoll_h5_writer (docs/hdf5.md, "The file layout of
zcoll_h5_writer", format version 1) with h5py and numpy.

    import zcoll.h5
    with zcoll.h5.open("snap.h5") as f:
        f.fields                                # names, in the order they were queued
        f.info("density").eb_abs                # every element is within this bound
        rho = f["density"]                      # the whole field
        box = f.read("density", start=(0, 10, 20), count=(4, 32, 32))

Every table is validated when the file is opened, and every stream before it is
decompressed (the list under "What a reader checks" in docs/hdf5.md); a file that fails
raises FormatError (code 6 for a newer format version, else 5). A read decompresses only
the streams of the writer ranks whose hyperslabs intersect the request. Needs h5py.
"""
import ctypes
import math
import os
from dataclasses import dataclass

import numpy as np

from . import _lib

FORMAT_VERSION = 1
MAX_DIMS = 8
ERR_CORRUPT = 5
ERR_VERSION = 6

_DTYPES = {1: np.dtype(np.float32), 2: np.dtype(np.float64)}
_EB_MODES = {0: "abs", 1: "rel"}
_MODES = ("predictive", "pipelined")
_U32, _U64, _F64, _U8 = np.dtype("<u4"), np.dtype("<u8"), np.dtype("<f8"), np.dtype("u1")
_TABLES = ("region_offset", "region_size", "predicted_size", "stream_size",
           "overflow_offset", "overflow_size")
# What h5py raises on damaged HDF5 metadata or storage (a TypeError for a mangled datatype).
_H5_ERRORS = (OSError, RuntimeError, ValueError, TypeError, KeyError)
# Pairs of hyperslabs compared per numpy step in the overlap check (bounds its memory).
_OVERLAP_PAIRS = 1 << 18


class FormatError(_lib.ZcollError):
    """The file is not a valid zcoll_h5_writer file: .code is 5 (ZCOLL_ERR_CORRUPT) or
    6 (ZCOLL_ERR_VERSION, written by a newer format version)."""

    def __init__(self, path, message, code=ERR_CORRUPT):
        self.path = path
        super().__init__(code, f"zcoll.h5: {path}", message)


@dataclass(frozen=True)
class FieldInfo:
    """What the file says about one field (sizes in bytes, summed over the writer's ranks)."""
    name: str
    index: int               # 0-based queue order
    dtype: np.dtype
    codec: str
    ndims: int
    dims: tuple
    eb_mode: str             # "abs" or "rel", as the writer was given
    eb: float                # as the writer was given
    eb_abs: float            # every element read back is within this of the value written
    writer_ranks: int
    raw_bytes: int
    stream_bytes: int        # compressed bytes: the sum of the streams
    reserved_bytes: int      # bytes of the regions in `streams`
    overflow_bytes: int      # bytes appended in `overflow`
    ratio: float             # raw_bytes / stream_bytes (nan for an empty field)


class _Field:
    """A field's validated tables and its two byte datasets (read lazily)."""

    def __init__(self, info, start, count, volume, tables, streams, overflow):
        self.info = info
        self.start = start        # (P, ndims) uint64
        self.count = count        # (P, ndims) uint64
        self.volume = volume      # list of P Python ints
        self.t = tables           # name -> list of P Python ints
        self.streams = streams
        self.overflow = overflow


def open(path):  # noqa: A001 (zcoll.h5.open, like h5py.File / builtins.open)
    """Opens a zcoll_h5_writer file for reading and validates its tables. Returns a File."""
    return File(path)


class File:
    """A zcoll_h5_writer file opened for reading; use as a context manager or call close()."""

    def __init__(self, path):
        import h5py  # here, so that `import zcoll` never needs h5py
        self.path = os.fspath(path)
        try:
            self._h5 = h5py.File(self.path, "r")
        except (FileNotFoundError, PermissionError, IsADirectoryError):
            raise
        except OSError as e:
            # h5py's OSError for a truncated or non-HDF5 file: the file is what is wrong.
            raise FormatError(self.path, f"not a readable HDF5 file ({e})") from e
        try:
            self._fields = self._validate(h5py)
        except BaseException:
            self._h5.close()
            raise

    # ------------------------------------------------------------------ public
    @property
    def fields(self):
        """Field names, in the order the writer queued them."""
        return list(self._fields)

    def info(self, name):
        """The FieldInfo of a field (KeyError for an unknown name)."""
        return self._field(name).info

    def read(self, name, start=None, count=None, threads=0):
        """The hyperslab (start, count; slowest first) of a field as a new numpy array of
        shape count and the field's dtype; the whole field by default."""
        fld = self._field(name)
        dims = fld.info.dims
        nd = len(dims)
        start = (0,) * nd if start is None else _index_tuple(start, nd, "start")
        if count is None:
            count = tuple(d - s if s <= d else 0 for d, s in zip(dims, start))
        else:
            count = _index_tuple(count, nd, "count")
        for d, (s, c, n) in enumerate(zip(start, count, dims)):
            if s > n or c > n - s:
                raise ValueError(f"zcoll.h5: field {name!r}: start {start} + count {count} is "
                                 f"outside the field's dims {dims} (dimension {d})")
        out = np.empty(count, dtype=fld.info.dtype)
        if out.size == 0:
            return out
        req_lo = np.array(start, dtype=np.uint64)
        req_hi = req_lo + np.array(count, dtype=np.uint64)
        lo = np.maximum(fld.start, req_lo)
        hi = np.minimum(fld.start + fld.count, req_hi)
        # Only the ranks whose hyperslab intersects the request are read (empty ones never do).
        for r in np.flatnonzero(np.all(lo < hi, axis=1)):
            r = int(r)
            block = self._decompress(fld, r, threads)
            rs = fld.start[r]
            src = tuple(slice(int(a - b), int(c - b)) for a, b, c in zip(lo[r], rs, hi[r]))
            dst = tuple(slice(int(a - b), int(c - b)) for a, b, c in zip(lo[r], req_lo, hi[r]))
            out[dst] = block[src]
        return out

    def __getitem__(self, name):
        return self.read(name)

    def __contains__(self, name):
        return name in self._fields

    def __iter__(self):
        return iter(self.fields)

    def __len__(self):
        return len(self._fields)

    def close(self):
        if self._h5 is not None:
            self._h5.close()
            self._h5 = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        state = "closed" if self._h5 is None else f"{len(self._fields)} fields"
        return f"<zcoll.h5.File {self.path!r} ({state})>"

    # ------------------------------------------------------------------ internals
    def _field(self, name):
        if self._h5 is None:
            raise ValueError(f"zcoll.h5: {self.path} is closed")
        try:
            return self._fields[name]
        except (KeyError, TypeError):
            raise KeyError(f"zcoll.h5: {self.path} has no field {name!r}; fields: "
                           f"{', '.join(self._fields) or '(none)'}") from None

    def _fail(self, message, code=ERR_CORRUPT):
        raise FormatError(self.path, message, code)

    def _validate(self, h5py):
        root = self._h5
        where = "root group"
        version = self._uint(root, "zcoll_h5_format_version", _U32, where)
        if version > FORMAT_VERSION:
            self._fail(f"format version {version}: this zcoll reads up to {FORMAT_VERSION}",
                       ERR_VERSION)
        if version < 1:
            self._fail(f"format version {version} does not exist")
        complete = self._uint(root, "zcoll_h5_complete", _U32, where)
        if complete != 1:
            self._fail(f"@zcoll_h5_complete is {complete}: the writer did not close the file "
                       f"successfully (still being written, or its close failed)")
        self.mode = self._string(root, "zcoll_h5_mode", where)
        if self.mode not in _MODES:
            self._fail(f"@zcoll_h5_mode is {self.mode!r}, not one of {_MODES}")
        self.writer_ranks = self._uint(root, "zcoll_h5_writer_ranks", _U32, where)
        if self.writer_ranks < 1:
            self._fail("@zcoll_h5_writer_ranks is 0")
        nfields = self._uint(root, "zcoll_h5_fields", _U32, where)

        found = {}
        try:
            names = list(root.keys())
        except _H5_ERRORS as e:
            self._fail(f"cannot list the root group ({e})")
        for name in names:
            if name.startswith("_"):
                continue  # reserved for other metadata; never a field
            obj = self._get(root, name, "root group")
            if not isinstance(obj, h5py.Group):
                self._fail(f"/{name} is not a group (every root member not starting with '_' "
                           f"is a field)")
            fld = self._validate_field(h5py, name, obj)
            if fld.info.index in found:
                self._fail(f"fields {found[fld.info.index].info.name!r} and {name!r} have the "
                           f"same @zcoll_field_index {fld.info.index}")
            found[fld.info.index] = fld
        if len(found) != nfields:
            self._fail(f"@zcoll_h5_fields is {nfields} but the file has {len(found)} field groups")
        if sorted(found) != list(range(nfields)):
            self._fail(f"@zcoll_field_index values {sorted(found)} are not 0..{nfields - 1}")
        return {found[i].info.name: found[i] for i in range(nfields)}

    def _validate_field(self, h5py, name, g):
        P = self.writer_ranks
        where = f"field {name!r}"
        index = self._uint(g, "zcoll_field_index", _U32, where)
        dt = self._uint(g, "zcoll_dtype", _U32, where)
        if dt not in _DTYPES:
            self._fail(f"{where}: @zcoll_dtype {dt} is not 1 (float32) or 2 (float64)")
        codec = self._uint(g, "zcoll_codec", _U32, where)
        cname = _lib.codec.zcoll_codec_name(codec) if 0 < codec < 256 else None
        if cname is None:
            self._fail(f"{where}: @zcoll_codec {codec} is not a codec this zcoll knows")
        eb_mode = self._uint(g, "zcoll_eb_mode", _U32, where)
        if eb_mode not in _EB_MODES:
            self._fail(f"{where}: @zcoll_eb_mode {eb_mode} is not 0 (abs) or 1 (rel)")
        eb = self._float(g, "zcoll_eb", where)
        eb_abs = self._float(g, "zcoll_eb_abs", where)
        if not (math.isfinite(eb_abs) and eb_abs > 0):
            self._fail(f"{where}: @zcoll_eb_abs {eb_abs} is not a positive finite number")
        dims_a = self._attr(g, "zcoll_dims", where)
        if dims_a.dtype != _U64 or dims_a.ndim != 1 or not 1 <= dims_a.size <= MAX_DIMS:
            self._fail(f"{where}: @zcoll_dims must be 1 to {MAX_DIMS} uint64 (little-endian), "
                       f"not {dims_a.dtype} of shape {dims_a.shape}")
        dims = tuple(int(d) for d in dims_a)
        nd = len(dims)

        part = self._values(self._table(h5py, g, "partition", (P, 2, nd), _U64, where), where)
        tables = {}
        for t in _TABLES:
            tables[t] = [int(v) for v in self._values(self._table(h5py, g, t, (P,), _U64, where),
                                                      where)]
        streams = self._table(h5py, g, "streams", None, _U8, where)
        overflow = self._table(h5py, g, "overflow", None, _U8, where)
        n_streams, n_overflow = streams.shape[0], overflow.shape[0]

        start = np.ascontiguousarray(part[:, 0, :])
        count = np.ascontiguousarray(part[:, 1, :])
        volume = []
        for r in range(P):
            s = [int(v) for v in start[r]]
            c = [int(v) for v in count[r]]
            if any(ci > d or si > d - ci for si, ci, d in zip(s, c, dims)):
                self._fail(f"{where}, rank {r}: hyperslab start {s} count {c} is outside dims "
                           f"{list(dims)}")
            volume.append(math.prod(c))
        total = math.prod(dims)
        if sum(volume) != total:
            self._fail(f"{where}: the hyperslabs hold {sum(volume)} elements, the field "
                       f"{total}: they do not cover it exactly")
        self._check_overlap(where, start, count, volume)

        ro, rsz, ss = tables["region_offset"], tables["region_size"], tables["stream_size"]
        oo, osz = tables["overflow_offset"], tables["overflow_size"]
        for r in range(P):
            at = f"{where}, rank {r}"
            if ro[r] + rsz[r] > n_streams:
                self._fail(f"{at}: region_offset {ro[r]} + region_size {rsz[r]} is past the end "
                           f"of streams ({n_streams} bytes)")
            if oo[r] + osz[r] > n_overflow:
                self._fail(f"{at}: overflow_offset {oo[r]} + overflow_size {osz[r]} is past the "
                           f"end of overflow ({n_overflow} bytes)")
            if osz[r] != max(0, ss[r] - rsz[r]):
                self._fail(f"{at}: overflow_size {osz[r]} is not stream_size {ss[r]} - "
                           f"region_size {rsz[r]} (or 0)")
            if (ss[r] == 0) != (volume[r] == 0):
                self._fail(f"{at}: stream_size {ss[r]} for a hyperslab of {volume[r]} elements "
                           f"(0 exactly when the hyperslab is empty)")

        dtype = _DTYPES[dt]
        raw = total * dtype.itemsize
        stream_bytes = sum(ss)
        info = FieldInfo(name=name, index=index, dtype=dtype, codec=cname.decode(), ndims=nd,
                         dims=dims, eb_mode=_EB_MODES[eb_mode], eb=eb, eb_abs=eb_abs,
                         writer_ranks=P, raw_bytes=raw, stream_bytes=stream_bytes,
                         reserved_bytes=sum(rsz), overflow_bytes=sum(osz),
                         ratio=raw / stream_bytes if stream_bytes else float("nan"))
        return _Field(info, start, count, volume, tables, streams, overflow)

    def _check_overlap(self, where, start, count, volume):
        """Fails if two non-empty hyperslabs intersect. Pairs are compared in blocks, with
        numpy, so that thousands of ranks stay fast and memory stays bounded."""
        live = np.array([r for r, v in enumerate(volume) if v > 0], dtype=np.int64)
        if live.size < 2:
            return
        lo, hi = start[live], start[live] + count[live]  # no overflow: inside dims (checked)
        n = live.size
        step = max(1, _OVERLAP_PAIRS // n)
        for i0 in range(0, n, step):
            i1 = min(n, i0 + step)
            inter = np.all((np.maximum(lo[i0:i1, None, :], lo[None, :, :]) <
                            np.minimum(hi[i0:i1, None, :], hi[None, :, :])), axis=2)
            rows = np.arange(i0, i1)
            inter[rows - i0, rows] = False  # a hyperslab with itself
            hit = np.argwhere(inter)
            if hit.size:
                a, b = int(live[i0 + hit[0, 0]]), int(live[hit[0, 1]])
                a, b = min(a, b), max(a, b)
                self._fail(f"{where}: the hyperslabs of ranks {a} and {b} overlap "
                           f"(start {start[a].tolist()} count {count[a].tolist()}, start "
                           f"{start[b].tolist()} count {count[b].tolist()})")

    def _decompress(self, fld, r, threads):
        """Rank r's hyperslab, decompressed, after the stream's own validation and the
        check that its dtype, element count, codec and bound agree with the tables."""
        info, t = fld.info, fld.t
        at = f"field {info.name!r}, rank {r}"
        size = t["stream_size"][r]
        head = min(size, t["region_size"][r])
        off, ooff, tail = t["region_offset"][r], t["overflow_offset"][r], t["overflow_size"][r]
        try:
            parts = []
            if head:
                parts.append(fld.streams[off:off + head])
            if tail:
                parts.append(fld.overflow[ooff:ooff + tail])
        except _H5_ERRORS as e:
            self._fail(f"{at}: cannot read the stream's bytes ({e})")
        mem = np.ascontiguousarray(np.concatenate(parts)) if parts else np.empty(0, np.uint8)
        # The offsets were checked against the datasets' lengths; h5py slicing clips
        # silently, so the length is checked again here.
        if mem.dtype != np.uint8 or mem.size != size:
            self._fail(f"{at}: read {mem.size} stream bytes, expected {size}")
        sinfo = _lib.StreamInfo()
        rc = _lib.codec.zcoll_stream_inspect(mem.ctypes.data, mem.size, ctypes.byref(sinfo))
        if rc != 0:
            self._stream_error(at, rc)
        n = fld.volume[r]
        want_dt = 1 if info.dtype == np.float32 else 2
        if sinfo.dtype != want_dt or sinfo.count != n:
            self._fail(f"{at}: the stream holds {sinfo.count} values of dtype {sinfo.dtype}, the "
                       f"tables say {n} of dtype {want_dt}")
        cname = _lib.codec.zcoll_codec_name(sinfo.codec)
        if cname is None or cname.decode() != info.codec:
            self._fail(f"{at}: stream codec {sinfo.codec}, the field's is {info.codec}")
        if not sinfo.eb_abs <= info.eb_abs:
            self._fail(f"{at}: stream bound {sinfo.eb_abs!r} is looser than the field's eb_abs "
                       f"{info.eb_abs!r}")
        if sinfo.stream_bytes != size:
            self._fail(f"{at}: the stream describes {sinfo.stream_bytes} bytes, stream_size is "
                       f"{size}")
        block = np.empty(tuple(int(c) for c in fld.count[r]), dtype=info.dtype)
        rc = _lib.codec.zcoll_decompress(mem.ctypes.data, mem.size, want_dt, block.ctypes.data,
                                         n, int(threads))
        if rc != 0:
            self._stream_error(at, rc)
        return block

    def _stream_error(self, at, rc):
        message = _lib.codec.zcoll_strerror(rc).decode()
        detail = _lib.codec.zcoll_error_detail().decode()
        # A stream of a newer codec format is a version problem; anything else that the
        # codec refuses inside a file is damage.
        self._fail(f"{at}: damaged stream: {message}" + (f" ({detail})" if detail else ""),
                   ERR_VERSION if rc == ERR_VERSION else ERR_CORRUPT)

    # Attribute and dataset access: a missing or mistyped one is CORRUPT, never a KeyError.
    def _get(self, group, name, where):
        try:
            return group[name]
        except _H5_ERRORS as e:
            self._fail(f"{where}: cannot open {name!r} ({e})")

    def _attr(self, obj, key, where):
        try:
            if key not in obj.attrs:
                self._fail(f"{where}: attribute @{key} is missing")
            return np.asarray(obj.attrs[key])
        except FormatError:
            raise
        except _H5_ERRORS as e:
            self._fail(f"{where}: cannot read attribute @{key} ({e})")

    def _scalar(self, obj, key, dtype, where):
        a = self._attr(obj, key, where)
        if a.dtype != dtype or a.size != 1 or a.ndim > 1:
            self._fail(f"{where}: attribute @{key} must be one {dtype.name} (little-endian), "
                       f"not {a.dtype} of shape {a.shape}")
        return a.reshape(()).item()

    def _uint(self, obj, key, dtype, where):
        return int(self._scalar(obj, key, dtype, where))

    def _float(self, obj, key, where):
        return float(self._scalar(obj, key, _F64, where))

    def _string(self, obj, key, where):
        a = self._attr(obj, key, where)
        if a.size != 1 or a.ndim > 1:
            self._fail(f"{where}: attribute @{key} must be one string, not shape {a.shape}")
        v = a.reshape(()).item()
        if isinstance(v, bytes):  # a fixed-length string: h5py gives bytes, maybe NUL-padded
            try:
                v = v.rstrip(b"\0").decode("ascii")
            except UnicodeDecodeError:
                self._fail(f"{where}: attribute @{key} is not an ASCII string")
        if not isinstance(v, str):
            self._fail(f"{where}: attribute @{key} must be a string, not {a.dtype}")
        return v

    def _table(self, h5py, g, name, shape, dtype, where):
        ds = self._get(g, name, where)
        if not isinstance(ds, h5py.Dataset):
            self._fail(f"{where}: {name} is not a dataset")
        try:
            ds_dtype, ds_shape = ds.dtype, ds.shape
        except _H5_ERRORS as e:  # a damaged datatype or dataspace message
            self._fail(f"{where}: cannot read the type or shape of {name} ({e})")
        if ds_dtype != dtype:
            self._fail(f"{where}: {name} is {ds_dtype}, must be {dtype.name} (little-endian)")
        ok = ds_shape == shape if shape is not None else len(ds_shape) == 1
        if not ok:
            want = shape if shape is not None else "(n,)"
            self._fail(f"{where}: {name} has shape {ds_shape}, must be {want}")
        return ds

    def _values(self, ds, where):
        try:
            return ds[()]
        except _H5_ERRORS as e:  # damaged HDF5 metadata or storage
            self._fail(f"{where}: cannot read {ds.name.rsplit('/', 1)[-1]} ({e})")


def _index_tuple(v, nd, what):
    """v as a tuple of nd non-negative Python ints (ValueError otherwise)."""
    import operator
    try:
        t = tuple(operator.index(x) for x in v)
    except TypeError:
        raise ValueError(f"zcoll.h5: {what} must be a sequence of {nd} integers, "
                         f"not {v!r}") from None
    if len(t) != nd:
        raise ValueError(f"zcoll.h5: {what} has {len(t)} values, the field has {nd} dimensions")
    if any(x < 0 for x in t):
        raise ValueError(f"zcoll.h5: {what} {t} has a negative value")
    return t
