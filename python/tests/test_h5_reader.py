"""zcoll.h5, the Python reader of zcoll_h5_writer files (docs/hdf5.md, format version 1).

The files are written by a pure-Python writer of the layout (zh5_pywriter.py, h5py +
zcoll.codec.compress), so these tests do not depend on the C writer: real fields from
data/ (and ../shared/datasets when present), float32 and float64, 1-D to 3-D, uneven
partitions along different axes, empty hyperslabs and overflowing regions; every element is
checked against eb_abs. Damaged files (each item of "What a reader checks") must raise
zcoll.h5.FormatError with the right code. With ZCOLL_H5IO_FILES set to a folder, the
*.zh5 files there (from the C writer, each with a NAME.json sidecar naming the raw data)
are read and checked too.

Needs h5py and numpy (Debian: the system python3 with python3-h5py) and an importable
zcoll with its libzcoll_codec.so (PYTHONPATH). Runs under pytest, or as a plain script
(``python3 test_h5_reader.py``) that runs every test function.
"""
import glob
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

try:
    import pytest
except ImportError:  # plain-script mode
    pytest = None

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # zh5_pywriter

try:
    import zcoll
    import zcoll.h5 as zh5
    from zcoll._lib import ZcollError
except ImportError as e:  # say how to fix it rather than only "No module named zcoll"
    raise ImportError(f"{e}: put the folder holding the zcoll package and its "
                      f"libzcoll_codec.so on PYTHONPATH (docs/python.md)") from e

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DATA = os.environ.get("ZCOLL_H5_DATA_DIR", os.path.join(ROOT, "data"))
SHARED = os.path.join(ROOT, "..", "shared", "datasets")
CORRUPT, VERSION = 5, 6

from plain_runner import skip as _skip  # noqa: E402  (pytest.skip, or a plain-script skip)


def _h5py():
    try:
        import h5py
    except ImportError:
        _skip("no h5py (Debian: python3-h5py)")
    return h5py


def _w():
    _h5py()
    import zh5_pywriter
    return zh5_pywriter


def load(name, shape, dtype="<f4"):
    for d in (DATA, SHARED):
        p = os.path.join(d, name)
        if os.path.exists(p):
            return np.fromfile(p, dtype=dtype).reshape(shape)
    return None


def cesm():
    return load("cesm_TS_10x192x288.f32", (10, 192, 288))


def f64_3d():
    """A real float64 3-D field: Isabel from ../shared/datasets when there, else echam5_T
    (data/) widened to float64."""
    x = load("isabel_velmag_t48_25x125x125.f64", (25, 125, 125), "<f8")
    if x is None:
        x = load("echam5_T_17x96x192.f32", (17, 96, 192)).astype(np.float64)
    return np.ascontiguousarray(x)


def violations(x, y, eb_abs):
    """Elements of y not within eb_abs of x (in float64); non-finite x must come back bit
    for bit."""
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    fin = np.isfinite(x64)
    bad = int(np.count_nonzero(~(np.abs(x64[fin] - y64[fin]) <= eb_abs)))
    if not fin.all():
        u = np.uint32 if x.dtype == np.float32 else np.uint64
        bad += int(np.count_nonzero(x[~fin].view(u) != y[~fin].view(u)))
    return bad


def expect_format_error(path, code, *, read=None, match=()):
    """Opens path (and reads field `read`); asserts a FormatError with code and every
    string of match in its message. Returns the error."""
    try:
        with zh5.open(path) as f:
            if read is not None:
                f.read(read)
    except zh5.FormatError as e:
        assert e.code == code, f"code {e.code}, expected {code}: {e}"
        for m in match:
            assert m in str(e), f"{m!r} not in the message: {e}"
        assert isinstance(e, ZcollError)
        return e
    raise AssertionError(f"{path}: accepted; expected a FormatError with code {code}")


# ------------------------------------------------------------------ the real-data file

P = 6


def real_fields(w):
    """Five fields over P = 6 writer ranks, in a queue order that is not alphabetical."""
    x = cesm()
    ts = np.ascontiguousarray(x)                                     # f32 10x192x288
    echam = np.ascontiguousarray(load("echam5_T_17x96x192.f32", (17 * 96, 192))[:1000, :190])
    isa = f64_3d()                                                   # f64 3-D
    line = np.ascontiguousarray(x.ravel()[:100003].astype(np.float64))  # f64 1-D
    turb = np.ascontiguousarray(load("turb_wmag_91x91x91.f32", (91, 91, 91)))

    def along(shape, axis, parts):
        out = []
        for s, c in w.split(shape[axis], parts):
            st, ct = [0] * len(shape), list(shape)
            st[axis], ct[axis] = s, c
            out.append((tuple(st), tuple(ct)))
        return out

    def empty(shape, axis, at):
        st, ct = [0] * len(shape), list(shape)
        st[axis], ct[axis] = at, 0
        return (tuple(st), tuple(ct))

    # TS: 5 uneven slabs along the latitude (axis 1) and an empty rank 5; rank 1's region
    # holds half its stream, rank 3 has no region at all (all of it overflows); the others
    # get 1.25 x their stream, as a predictive writer would.
    ts_part = along(ts.shape, 1, 5) + [empty(ts.shape, 1, 192)]
    # echam: 6 uneven column blocks along the fastest axis.
    echam_part = along(echam.shape, 1, 6)
    # f64 3-D: a 2 x 3 grid over axes 0 and 1, uneven both ways.
    g_part = w.grid_partition(isa.shape, [w.split(isa.shape[0], 2), w.split(isa.shape[1], 3),
                                          [(0, isa.shape[2])]])
    # 1-D: rank 0 empty, then 5 uneven pieces.
    line_part = [((0,), (0,))] + [((s,), (c,)) for s, c in w.split(line.size, 5)]
    # turb: slabs along axis 0, one of a single plane (shape hint 91x91), three ranks empty.
    turb_part = [((0, 0, 0), (45, 91, 91)), ((45, 0, 0), (1, 91, 91)), ((46, 0, 0), (45, 91, 91)),
                 empty(turb.shape, 0, 91), empty(turb.shape, 0, 0), empty(turb.shape, 2, 50)]

    fields = [
        w.Field("turb", turb, turb_part, eb_abs=0.05, codec="lpbyte"),
        w.Field("TS", ts, ts_part, eb_abs=0.01, codec="fzl", eb_mode=1, eb=1e-4),
        w.Field("isabel", isa, g_part, eb_abs=0.005, codec="fzl"),
        w.Field("a_line", line, line_part, eb_abs=0.02, codec="lpbit"),
        w.Field("echam_T", echam, echam_part, eb_abs=0.05, codec="szx"),
    ]
    # Region sizes need the stream sizes: compress once to size them.
    ts_streams = w.field_streams(fields[1])
    fields[1].region_sizes = [len(s) * 5 // 4 for s in ts_streams]
    fields[1].region_sizes[1] = len(ts_streams[1]) // 2
    fields[1].region_sizes[3] = 0
    g_streams = w.field_streams(fields[2])
    fields[2].region_sizes = [len(s) for s in g_streams]
    fields[2].region_sizes[4] -= 7
    return fields


def write_real(path):
    w = _w()
    fields = real_fields(w)
    streams = w.write(path, fields)
    return fields, streams


def test_real_fields_roundtrip():
    with tempfile.TemporaryDirectory() as tmp:
        _test_real_fields_roundtrip(tmp)


def _test_real_fields_roundtrip(tmp):
    path = os.path.join(tmp, "real.zh5")
    fields, streams = write_real(path)
    rng = np.random.default_rng(18)
    with zh5.open(path) as f:
        assert f.fields == [fl.name for fl in fields], f.fields  # queue order, not h5py's
        assert f.mode == "predictive" and f.writer_ranks == P and len(f) == 5
        for fl in fields:
            x = fl.data
            info = f.info(fl.name)
            ss = [len(s) for s in streams[fl.name]]
            rs = fl.region_sizes if fl.region_sizes is not None else ss
            assert info.name == fl.name and info.index == f.fields.index(fl.name)
            assert info.dtype == x.dtype and info.dims == x.shape and info.ndims == x.ndim
            assert info.codec == fl.codec and info.writer_ranks == P
            assert info.eb_abs == fl.eb_abs
            assert info.eb_mode == ("rel" if fl.eb_mode else "abs")
            assert info.eb == (fl.eb if fl.eb is not None else fl.eb_abs)
            assert info.raw_bytes == x.nbytes and info.stream_bytes == sum(ss)
            assert info.reserved_bytes == sum(rs)
            assert info.overflow_bytes == sum(max(0, a - b) for a, b in zip(ss, rs))
            assert info.ratio == x.nbytes / sum(ss) and info.ratio > 1.5, info
            y = f[fl.name]
            assert y.dtype == x.dtype and y.shape == x.shape
            bad = violations(x, y, info.eb_abs)
            err = float(np.max(np.abs(x.astype(np.float64) - y)))
            print(f"{fl.name}: {x.dtype} {x.shape}, {fl.codec}, ratio {info.ratio:.2f}, "
                  f"overflow {info.overflow_bytes} B, max err / eb_abs {err / info.eb_abs:.3f}")
            assert bad == 0, f"{fl.name}: {bad} elements beyond eb_abs"
            assert err > 0, f"{fl.name}: lossless? the bound check would not mean much"
            # Hyperslabs across rank borders: the same values as the whole read.
            for _ in range(6):
                st = [int(rng.integers(0, n)) for n in x.shape]
                ct = [int(rng.integers(1, n - s + 1)) for s, n in zip(st, x.shape)]
                box = f.read(fl.name, start=st, count=ct)
                sl = tuple(slice(s, s + c) for s, c in zip(st, ct))
                assert box.shape == tuple(ct) and np.array_equal(box, y[sl]), (fl.name, st, ct)
            # One element, and the default count (to the end) from a start.
            last = tuple(n - 1 for n in x.shape)
            assert f.read(fl.name, last, (1,) * x.ndim).reshape(()) == y[last]
            mid = tuple(n // 2 for n in x.shape)
            assert np.array_equal(f.read(fl.name, start=mid), y[tuple(slice(m, None) for m in mid)])
        # Boxes chosen to cross specific borders: TS ranks 0|1 (with 1 in overflow) and
        # 2|3 (all in overflow); the 2 x 3 grid's corner where four ranks meet.
        ts, isa = fields[1].data, fields[2].data
        for st, ct in (((0, 30, 5), (10, 20, 280)), ((3, 70, 0), (4, 20, 288))):
            box = f.read("TS", st, ct)
            assert violations(ts[tuple(slice(s, s + c) for s, c in zip(st, ct))], box, 0.01) == 0
        st, ct = (10, 38, 3), (6, 9, 100)
        box = f.read("isabel", st, ct)
        assert violations(isa[tuple(slice(s, s + c) for s, c in zip(st, ct))], box, 0.005) == 0
        # An empty request reads nothing.
        assert f.read("TS", (0, 0, 0), (0, 5, 5)).shape == (0, 5, 5)


def test_bound_check_can_fail():
    with tempfile.TemporaryDirectory() as tmp:
        _test_bound_check_can_fail(tmp)


def _test_bound_check_can_fail(tmp):
    w = _w()
    h5py = _h5py()
    x = np.ascontiguousarray(cesm()[:3])
    path = os.path.join(tmp, "b.zh5")
    w.write(path, [w.Field("TS", x, [((0, 0, 0), (2, 192, 288)), ((2, 0, 0), (1, 192, 288))],
                           eb_abs=0.01)])
    with zh5.open(path) as f:
        y = f["TS"]
    assert violations(x, y, 0.01) == 0
    # The same comparison with a bound 1000x tighter finds the compression error.
    assert violations(x, y, 0.01 / 1000) > x.size // 2
    # A file whose eb_abs was tampered tighter than its streams' bound is refused.
    with h5py.File(path, "r+") as h:
        h["TS"].attrs.modify("zcoll_eb_abs", np.float64(1e-5))
    expect_format_error(path, CORRUPT, read="TS", match=("'TS'", "rank 0", "bound"))


def test_vlen_string_and_pipelined():
    with tempfile.TemporaryDirectory() as tmp:
        w = _w()
        x = np.ascontiguousarray(cesm()[0])
        path = os.path.join(tmp, "p.zh5")
        w.write(path, [w.Field("T", x, [((0, 0), (192, 100)), ((0, 100), (192, 188))], eb_abs=0.1)],
                mode="pipelined", vlen_mode=True)
        with zh5.open(path) as f:
            assert f.mode == "pipelined" and f.info("T").overflow_bytes == 0
            assert violations(x, f["T"], 0.1) == 0


# ------------------------------------------------------------------ requests

def test_bad_requests():
    with tempfile.TemporaryDirectory() as tmp:
        _test_bad_requests(tmp)


def _raises(exc, fn, *args, **kw):
    try:
        fn(*args, **kw)
    except exc as e:
        return e
    raise AssertionError(f"{fn.__name__}{args}{kw} did not raise {exc.__name__}")


def _test_bad_requests(tmp):
    w = _w()
    x = np.ascontiguousarray(cesm()[:2, :50, :60])
    path = os.path.join(tmp, "r.zh5")
    part = [((0, 0, 0), (2, 20, 60)), ((0, 20, 0), (2, 30, 60))]
    w.write(path, [w.Field("T", x, part, eb_abs=0.1)])
    f = zh5.open(path)
    _raises(KeyError, f.read, "nope")
    _raises(KeyError, f.info, "nope")
    _raises(KeyError, f.__getitem__, "nope")
    _raises(ValueError, f.read, "T", (0, 0, 61))                 # start past the end
    _raises(ValueError, f.read, "T", (0, 0, 0), (2, 51, 60))     # count too large
    _raises(ValueError, f.read, "T", (1, 0, 0), (2, 50, 60))     # start + count past the end
    _raises(ValueError, f.read, "T", (0, 0), (2, 50))            # wrong number of dimensions
    _raises(ValueError, f.read, "T", (0, 0, 0), (1, 1, 1, 1))
    _raises(ValueError, f.read, "T", (0, -1, 0), (1, 1, 1))      # negative
    _raises(ValueError, f.read, "T", (0, 0, 0), (1, 1.5, 1))     # not an integer
    _raises(ValueError, f.read, "T", (2 ** 64, 0, 0), (1, 1, 1))  # huge, no wrap-around
    assert f.read("T", (0, 0, 60), (2, 50, 0)).shape == (2, 50, 0)  # empty at the very end
    assert f.read("T", np.array([1, 10, 5]), [np.uint64(1), 30, 50]).shape == (1, 30, 50)
    assert "T" in f and list(f) == ["T"]
    f.close()
    _raises(ValueError, f.read, "T")
    f.close()  # twice is fine


def test_reads_only_intersecting_ranks():
    with tempfile.TemporaryDirectory() as tmp:
        w = _w()
        h5py = _h5py()
        x = np.ascontiguousarray(cesm()[:4])
        part = [((0, s, 0), (4, c, 288)) for s, c in w.split(192, 4)]  # rows 0-47, 48-95, ...
        path = os.path.join(tmp, "lazy.zh5")
        w.write(path, [w.Field("T", x, part, eb_abs=0.01)])
        with h5py.File(path, "r+") as h:  # damage rank 2's stream (rows 96-143) in the middle
            g = h["T"]
            off, size = int(g["region_offset"][2]), int(g["stream_size"][2])
            g["streams"][off + size // 2] ^= 0x5A
        with zh5.open(path) as f:
            box = f.read("T", (0, 0, 0), (4, 96, 288))    # ranks 0 and 1 only
            assert violations(x[:, :96], box, 0.01) == 0
            box = f.read("T", (0, 144, 0), (4, 48, 288))  # rank 3 only
            assert violations(x[:, 144:], box, 0.01) == 0
            for st, ct in (((0, 95, 0), (1, 2, 1)), ((0, 0, 0), (4, 192, 288))):
                e = _raises(zh5.FormatError, f.read, "T", st, ct)
                assert e.code == CORRUPT and "'T', rank 2" in str(e), str(e)


# ------------------------------------------------------------------ corruption

_BASE = {}


def base_file():
    """A small valid file (made once): field "T" f32 (4, 150, 288) over 5 ranks (rank 2
    empty, rank 1 and rank 4 overflowing) and field "U" f64 (300, 200) over the same 5."""
    if "path" in _BASE:
        return _BASE["path"]
    w = _w()
    tmp = tempfile.mkdtemp(prefix="zh5_base_")
    import atexit
    atexit.register(shutil.rmtree, tmp, True)
    t = np.ascontiguousarray(cesm()[:4, :150])
    tp = [((0, s, 0), (4, c, 288)) for s, c in w.split(150, 4)]
    tp.insert(2, ((0, 76, 0), (4, 0, 288)))
    u = np.ascontiguousarray(f64_3d()[:4].reshape(-1)[:60000].reshape(300, 200))
    up = [((s, 0), (c, 200)) for s, c in w.split(300, 5)]
    ft = w.Field("T", t, tp, eb_abs=0.01)
    sizes = [len(s) for s in w.field_streams(ft)]
    ft.region_sizes = [n * 5 // 4 for n in sizes]
    ft.region_sizes[1] = sizes[1] // 3
    ft.region_sizes[4] = sizes[4] - 1
    path = os.path.join(tmp, "base.zh5")
    w.write(path, [ft, w.Field("U", u, up, eb_abs=1e-3, codec="szx")])
    with zh5.open(path) as f:  # the base itself must be valid
        assert violations(t, f["T"], 0.01) == 0 and violations(u, f["U"], 1e-3) == 0
        assert f.info("T").overflow_bytes > 0
    _BASE["path"] = path
    _BASE["tmp"] = tmp
    return path


def tampered(tmp, fn):
    """A copy of the base file changed by fn(h5py root group, opened r+)."""
    h5py = _h5py()
    path = os.path.join(tmp, f"t{len(os.listdir(tmp))}.zh5")
    shutil.copyfile(base_file(), path)
    with h5py.File(path, "r+") as h:
        fn(h)
    return path


def _set_attr(obj, key, value, dtype=None):
    del obj.attrs[key]
    if dtype is None:
        obj.attrs[key] = value
    else:
        obj.attrs.create(key, value, dtype=dtype)


def _set_table(g, name, values, dtype="<u8"):
    del g[name]
    g.create_dataset(name, data=np.asarray(values, dtype=dtype))


def _tables(g):
    return {k: g[k][()].copy() for k in ("partition", "region_offset", "region_size",
                                         "stream_size", "overflow_offset", "overflow_size")}


def test_corrupt_root_attributes():
    with tempfile.TemporaryDirectory() as tmp:
        u32 = "<u4"
        p = tampered(tmp, lambda h: _set_attr(h, "zcoll_h5_format_version", 2, u32))
        expect_format_error(p, VERSION, match=("format version 2",))
        p = tampered(tmp, lambda h: _set_attr(h, "zcoll_h5_format_version", 0, u32))
        expect_format_error(p, CORRUPT)
        p = tampered(tmp, lambda h: _set_attr(h, "zcoll_h5_complete", 0, u32))
        expect_format_error(p, CORRUPT, match=("zcoll_h5_complete",))
        p = tampered(tmp, lambda h: _set_attr(h, "zcoll_h5_mode", "streaming"))
        expect_format_error(p, CORRUPT, match=("streaming",))
        p = tampered(tmp, lambda h: _set_attr(h, "zcoll_h5_writer_ranks", 4, u32))
        expect_format_error(p, CORRUPT, match=("'T'", "partition"))
        p = tampered(tmp, lambda h: _set_attr(h, "zcoll_h5_writer_ranks", 0, u32))
        expect_format_error(p, CORRUPT)
        p = tampered(tmp, lambda h: _set_attr(h, "zcoll_h5_fields", 3, u32))
        expect_format_error(p, CORRUPT, match=("zcoll_h5_fields",))
        # Types: a uint32 stored as int64 or float64 is not the layout.
        p = tampered(tmp, lambda h: _set_attr(h, "zcoll_h5_complete", 1, "<i8"))
        expect_format_error(p, CORRUPT, match=("zcoll_h5_complete",))
        p = tampered(tmp, lambda h: _set_attr(h, "zcoll_h5_writer_ranks", 5.0, "<f8"))
        expect_format_error(p, CORRUPT)
        p = tampered(tmp, lambda h: _set_attr(h, "zcoll_h5_mode", 1, u32))
        expect_format_error(p, CORRUPT, match=("zcoll_h5_mode",))
        for key in ("zcoll_h5_format_version", "zcoll_h5_complete", "zcoll_h5_mode",
                    "zcoll_h5_writer_ranks", "zcoll_h5_fields"):
            p = tampered(tmp, lambda h, key=key: h.attrs.__delitem__(key))
            expect_format_error(p, CORRUPT, match=(key, "missing"))


def test_corrupt_field_attributes():
    with tempfile.TemporaryDirectory() as tmp:
        u32 = "<u4"
        for key, value, dtype in (("zcoll_dtype", 3, u32), ("zcoll_dtype", 0, u32),
                                  ("zcoll_codec", 9, u32), ("zcoll_codec", 0, u32),
                                  ("zcoll_eb_mode", 2, u32), ("zcoll_eb_abs", 0.0, "<f8"),
                                  ("zcoll_eb_abs", -0.01, "<f8"), ("zcoll_eb_abs", np.nan, "<f8"),
                                  ("zcoll_eb_abs", np.inf, "<f8"), ("zcoll_eb_abs", 0.01, "<f4"),
                                  ("zcoll_eb", 1, u32), ("zcoll_field_index", 1, u32),
                                  ("zcoll_field_index", 7, u32), ("zcoll_dtype", 1, "<u8"),
                                  ("zcoll_dims", np.array([4, 150, 288], "<u4"), None),
                                  ("zcoll_dims", np.array([4, 150, 288], ">u8"), None),
                                  ("zcoll_dims", np.ones(9, "<u8"), None),
                                  ("zcoll_dims", np.array([4, 150, 288, 1], "<u8"), None),
                                  ("zcoll_dims", np.array([4, 151, 288], "<u8"), None),
                                  ("zcoll_dims", np.array([4, 150, 287], "<u8"), None)):
            p = tampered(tmp, lambda h, k=key, v=value, d=dtype: _set_attr(h["T"], k, v, d))
            e = expect_format_error(p, CORRUPT)
            assert "'T'" in str(e) or "zcoll_field_index" in str(e), (key, value, str(e))
        for key in ("zcoll_field_index", "zcoll_dtype", "zcoll_codec", "zcoll_eb_mode", "zcoll_eb",
                    "zcoll_eb_abs", "zcoll_dims"):
            p = tampered(tmp, lambda h, key=key: h["U"].attrs.__delitem__(key))
            expect_format_error(p, CORRUPT, match=("'U'", key, "missing"))
        # The stream's dtype disagrees with the tables' (found when the stream is read).
        p = tampered(tmp, lambda h: _set_attr(h["T"], "zcoll_dtype", 2, u32))
        expect_format_error(p, CORRUPT, read="T", match=("'T', rank 0", "dtype"))
        p = tampered(tmp, lambda h: _set_attr(h["U"], "zcoll_codec", 1, u32))
        expect_format_error(p, CORRUPT, read="U", match=("'U', rank 0", "codec"))


def test_corrupt_structure():
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("partition", "region_offset", "region_size", "predicted_size", "stream_size",
                     "overflow_offset", "overflow_size", "streams", "overflow"):
            p = tampered(tmp, lambda h, n=name: h["U"].__delitem__(n))
            expect_format_error(p, CORRUPT, match=("'U'", name))
            # uint32 instead of uint64 (uint8 for the byte datasets: int8).
            bad = "<i1" if name in ("streams", "overflow") else "<u4"
            p = tampered(tmp, lambda h, n=name, d=bad: _set_table(h["U"], n, h["U"][n][()], d))
            expect_format_error(p, CORRUPT, match=("'U'", name))
            if name not in ("streams", "overflow"):  # a row short
                p = tampered(tmp, lambda h, n=name: _set_table(h["U"], n, h["U"][n][()][:-1]))
                expect_format_error(p, CORRUPT, match=("'U'", name, "shape"))
        # A table stored as a group; a field as a dataset; a reserved '_' member is ignored.
        def table_as_group(h):
            del h["T"]["stream_size"]
            h["T"].create_group("stream_size")
        p = tampered(tmp, table_as_group)
        expect_format_error(p, CORRUPT, match=("stream_size",))
        p = tampered(tmp, lambda h: h.create_dataset("V", data=np.zeros(3)))
        expect_format_error(p, CORRUPT, match=("/V",))
        p = tampered(tmp, lambda h: h.create_group("_provenance"))
        with zh5.open(p) as f:
            assert f.fields == ["T", "U"]
        # Two fields with the same index.
        p = tampered(tmp, lambda h: _set_attr(h["U"], "zcoll_field_index", 0, "<u4"))
        expect_format_error(p, CORRUPT, match=("zcoll_field_index",))


def test_corrupt_partition():
    with tempfile.TemporaryDirectory() as tmp:
        def edit(fn):
            def apply(h):
                part = h["T"]["partition"][()]
                fn(part)
                h["T"]["partition"][...] = part
            return tampered(tmp, apply)
        # Rank 1 moved up by 2 rows: overlaps rank 0, same total volume.
        p = edit(lambda a: a.__setitem__((1, 0, 1), a[1, 0, 1] - 2))
        expect_format_error(p, CORRUPT, match=("'T'", "ranks 0 and 1 overlap"))
        # Rank 3 one row shorter: a gap (the volumes do not add up).
        p = edit(lambda a: a.__setitem__((3, 1, 1), a[3, 1, 1] - 1))
        expect_format_error(p, CORRUPT, match=("'T'", "cover"))
        # Rank 4 past the end of dims.
        p = edit(lambda a: a.__setitem__((4, 0, 1), a[4, 0, 1] + 1))
        expect_format_error(p, CORRUPT, match=("'T', rank 4", "outside"))
        # A start near 2^64 that would wrap around in uint64 arithmetic.
        p = edit(lambda a: a.__setitem__((4, 0, 2), np.uint64(2 ** 64 - 100)))
        expect_format_error(p, CORRUPT, match=("rank 4", "outside"))
        # A gap and an overlap of the same size: the volumes add up, the overlap is found.
        def gap_and_overlap(a):
            a[0, 1, 1] -= 1       # rank 0 loses its last row...
            a[4, 0, 1] -= 1       # ...rank 4 starts one row earlier, over rank 3,
            a[4, 1, 1] += 1       # and keeps its end (row 150)
        p = edit(gap_and_overlap)
        expect_format_error(p, CORRUPT, match=("ranks 3 and 4 overlap",))
        # The empty rank 2 made non-empty (stream_size 0 for a non-empty hyperslab), with
        # rank 3 shrunk to keep the volume.
        def fill_empty(a):
            a[2, 0, 1], a[2, 1, 1] = 76, 1
            a[3, 0, 1] += 1
            a[3, 1, 1] -= 1
        p = edit(fill_empty)
        expect_format_error(p, CORRUPT, match=("'T', rank 2", "stream_size 0"))
        # Two ranks' hyperslabs swapped (same total, no overlap): rank 0's stream would
        # fill rank 3's box; the element counts disagree when the stream is read.
        def swap(a):
            a[[0, 3]] = a[[3, 0]]
        p = edit(swap)
        e = expect_format_error(p, CORRUPT, read="T", match=("'T', rank",))
        assert "values" in str(e), str(e)


def test_corrupt_offsets_and_sizes():
    with tempfile.TemporaryDirectory() as tmp:
        def edit(name, r, fn, field="T"):
            def apply(h):
                g = h[field]
                v = g[name][()]
                v[r] = fn(int(v[r]), _tables(g), len(g["streams"]), len(g["overflow"]))
                g[name][...] = v
            return tampered(tmp, apply)
        # region_offset + region_size past the end of streams (the last region, and a huge
        # offset that must not wrap around).
        p = edit("region_offset", 4, lambda v, t, ns, no: v + 1)
        expect_format_error(p, CORRUPT, match=("'T', rank 4", "past the end of streams"))
        p = edit("region_offset", 0, lambda v, t, ns, no: 2 ** 64 - 1)
        expect_format_error(p, CORRUPT, match=("'T', rank 0", "streams"))
        p = edit("region_size", 4, lambda v, t, ns, no: v + 1)
        expect_format_error(p, CORRUPT, match=("'T', rank 4",))
        # overflow_offset + overflow_size past the end of overflow.
        p = edit("overflow_offset", 4, lambda v, t, ns, no: no)
        expect_format_error(p, CORRUPT, match=("'T', rank 4", "past the end of overflow"))
        # overflow_size != max(0, stream_size - region_size).
        p = edit("overflow_size", 1, lambda v, t, ns, no: v - 1)
        expect_format_error(p, CORRUPT, match=("'T', rank 1", "overflow_size"))
        p = edit("overflow_size", 0, lambda v, t, ns, no: 1)
        expect_format_error(p, CORRUPT, match=("'T', rank 0", "overflow_size"))
        # stream_size one short inside a region with room to spare: the tables agree with
        # each other, the stream's own length does not.
        p = edit("stream_size", 3, lambda v, t, ns, no: v - 1)
        expect_format_error(p, CORRUPT, read="T", match=("'T', rank 3",))
        # A stream for the empty rank 2.
        p = edit("stream_size", 2, lambda v, t, ns, no: 1)
        expect_format_error(p, CORRUPT, match=("'T', rank 2",))
        # stream_size and region_size both one byte short, consistent with each other:
        # the stream is cut by a byte, and the codec finds it.
        def shorter(h):
            g = h["U"]
            ss, rs = g["stream_size"][()], g["region_size"][()]
            ss[1] -= 1
            rs[1] = ss[1]
            g["stream_size"][...] = ss
            g["region_size"][...] = rs
        p = tampered(tmp, shorter)
        expect_format_error(p, CORRUPT, read="U", match=("'U', rank 1",))


def test_corrupt_stream_bytes():
    with tempfile.TemporaryDirectory() as tmp:
        def flip(field, r, where, frac):
            def apply(h):
                g = h[field]
                t = _tables(g)
                if where == "streams":
                    n = min(int(t["stream_size"][r]), int(t["region_size"][r]))
                    i = int(t["region_offset"][r]) + int(n * frac)
                else:
                    i = int(t["overflow_offset"][r]) + int(int(t["overflow_size"][r]) * frac)
                ds = g[where]
                ds[i] = ds[i] ^ 0x10
            return tampered(tmp, apply)
        cases = [("T", 0, "streams", 0.0), ("T", 0, "streams", 0.01), ("T", 0, "streams", 0.5),
                 ("T", 3, "streams", 0.99), ("T", 1, "overflow", 0.5), ("T", 4, "overflow", 0.0),
                 ("U", 2, "streams", 0.6)]
        for field, r, where, frac in cases:
            p = flip(field, r, where, frac)
            with zh5.open(p) as f:  # the tables are intact: the file opens
                other = "U" if field == "T" else "T"
                f.read(other)
                e = _raises(zh5.FormatError, f.read, field)
                assert e.code == CORRUPT, (field, r, where, str(e))
                assert f"'{field}', rank {r}" in str(e), (field, r, where, str(e))
        # A stream that still carries zcoll.compress's Python envelope is not a C stream.
        def envelope(h):
            g = h["U"]
            off = int(g["region_offset"][0])
            g["streams"][off:off + 4] = np.frombuffer(b"ZCPY", np.uint8)
        p = tampered(tmp, envelope)
        expect_format_error(p, CORRUPT, read="U", match=("'U', rank 0",))


def test_truncated_and_garbage_files():
    with tempfile.TemporaryDirectory() as tmp:
        full = open(base_file(), "rb").read()
        pkg = os.path.dirname(os.path.dirname(os.path.abspath(zcoll.__file__)))
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [pkg] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
        # Run in a child so that a crash (a signal) is told apart from an exception.
        code = ("import sys, zcoll.h5 as zh5\n"
                "try:\n"
                "    with zh5.open(sys.argv[1]) as f:\n"
                "        [f.read(n) for n in f.fields]\n"
                "except (zh5.FormatError, OSError) as e:\n"
                "    print('refused:', type(e).__name__, e); sys.exit(0)\n"
                "sys.exit(3)\n")
        cuts = {"half": full[:len(full) // 2], "last_byte": full[:-1], "header": full[:100],
                "garbage": bytes(np.random.default_rng(1).integers(0, 256, 4096, dtype=np.uint8)),
                "empty": b""}
        for what, data in cuts.items():
            p = os.path.join(tmp, f"{what}.zh5")
            with open(p, "wb") as fh:
                fh.write(data)
            r = subprocess.run([sys.executable, "-c", code, p], env=env, capture_output=True,
                               text=True, timeout=120)
            print(f"{what}: rc {r.returncode}: {r.stdout.strip()[:150]}")
            assert r.returncode == 0, (f"{what}: rc {r.returncode} (3: read without error; "
                                       f"<0: a signal)\n{r.stdout}{r.stderr}")
        _raises(FileNotFoundError, zh5.open, os.path.join(tmp, "missing.zh5"))


# ------------------------------------------------------------------ C-written files

def check_zh5_dir(d):
    """Reads every *.zh5 in d and checks each field its NAME.json sidecar lists against the
    raw data: every element within the file's eb_abs, and eb_abs no looser than the mode
    promises (ABS: eb; REL: eb x (max - min) of the finite values). Returns the count."""
    files = sorted(glob.glob(os.path.join(d, "*.zh5")))
    assert files, f"{d}: no *.zh5 files"
    checked = 0
    for path in files:
        side = path[:-len(".zh5")] + ".json"
        assert os.path.exists(side), f"{path}: no sidecar {os.path.basename(side)}"
        with open(side) as fh:
            meta = json.load(fh)
        with zh5.open(path) as f:
            for m in meta["fields"]:
                name = m["name"]
                raw = os.path.join(os.path.dirname(side), m["raw"])  # an absolute raw stays
                dt = np.dtype(m["dtype"]).newbyteorder("<")
                shape = tuple(int(n) for n in m["shape"])
                x = np.fromfile(raw, dtype=dt, count=math.prod(shape))
                assert x.size == math.prod(shape), f"{raw}: {x.size} values, shape {shape}"
                x = x.reshape(shape)
                info = f.info(name)
                assert info.dims == shape and info.dtype == dt, (path, name, info)
                fin = x[np.isfinite(x)].astype(np.float64)
                if info.eb_mode == "abs":
                    assert info.eb_abs <= info.eb, (path, name, info)
                elif fin.size and fin.max() > fin.min():
                    promised = info.eb * (fin.max() - fin.min())
                    assert info.eb_abs <= promised * (1 + 1e-6), (path, name, info.eb_abs, promised)
                if "eb_abs" in m:
                    assert info.eb_abs <= float(m["eb_abs"]) * (1 + 1e-12), (path, name, info)
                y = f.read(name)
                bad = violations(x, y, info.eb_abs)
                assert bad == 0, f"{path}: {name}: {bad} elements beyond eb_abs {info.eb_abs}"
                # A box around the middle, across the writer's rank borders.
                st = tuple(n // 4 for n in shape)
                ct = tuple(max(1, n // 2) if n else 0 for n in shape)
                box = f.read(name, st, ct)
                assert np.array_equal(box, y[tuple(slice(s, s + c) for s, c in zip(st, ct))])
                print(f"{os.path.basename(path)}: {name} {info.dtype} {shape} "
                      f"P={info.writer_ranks} {info.codec} ratio {info.ratio:.2f} "
                      f"overflow {info.overflow_bytes} B: ok")
                checked += 1
    return checked


def test_c_writer_files():
    d = os.environ.get("ZCOLL_H5IO_FILES")
    if not d:
        _skip("ZCOLL_H5IO_FILES is not set (a folder of *.zh5 files from the C writer, each "
              "with a NAME.json sidecar)")
    assert check_zh5_dir(d) > 0


def test_sidecar_checker():
    """check_zh5_dir on Python-written files, so that its own logic is tested where no
    C-written files are given: it passes on a good file and fails on the wrong raw data."""
    with tempfile.TemporaryDirectory() as tmp:
        w = _w()
        x = np.ascontiguousarray(cesm()[:2])
        x.tofile(os.path.join(tmp, "ts.f32"))
        part = [((0, 0, 0), (1, 192, 288)), ((1, 0, 0), (1, 192, 288))]
        rel = 0.02 / float(x.max() - x.min())  # REL as given, eb_abs as a REL writer resolves it
        w.write(os.path.join(tmp, "a.zh5"),
                [w.Field("TS", x, part, eb_abs=0.02, eb_mode=1, eb=rel)])
        side = {"fields": [{"name": "TS", "raw": "ts.f32", "dtype": "float32",
                            "shape": [2, 192, 288]}]}
        with open(os.path.join(tmp, "a.json"), "w") as fh:
            json.dump(side, fh)
        assert check_zh5_dir(tmp) == 1
        (x + 0.05).astype(np.float32).tofile(os.path.join(tmp, "ts.f32"))  # not what was written
        _raises(AssertionError, check_zh5_dir, tmp)


if __name__ == "__main__":
    import plain_runner

    sys.exit(plain_runner.run(globals()))
