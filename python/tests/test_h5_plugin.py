"""The zcoll HDF5 filter plugin (libH5Zzcoll.so) from h5py: Debian's python3-h5py on the
system python3, with HDF5_PLUGIN_PATH pointing at the plugin's folder (ctest sets it:
tests/hdf5/CMakeLists.txt, test h5_filter_h5py).

h5py writes with ``compression=401, compression_opts=(1, codec, eb_mode, eb_lo, eb_hi)``
and reads back; every element is checked against the bound with numpy. It also reads a file
written from C (tests/hdf5/h5_sample_writer.c, when ZCOLL_H5_SAMPLE_WRITER is set).

Runs under pytest, or as a plain script (``python3 test_h5_plugin.py``) where the system
python3 has no pytest.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

try:
    import pytest
except ImportError:  # plain-script mode
    pytest = None

H5Z_FILTER_ZCOLL = 401
FZL, LPBYTE, LPBIT, SZX = 1, 2, 3, 4
ABS, REL = 0, 1
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DATA = os.environ.get("ZCOLL_H5_DATA_DIR", os.path.join(ROOT, "data"))


from plain_runner import skip as _skip  # noqa: E402  (pytest.skip, or a plain-script skip)


def _h5py():
    if not os.environ.get("HDF5_PLUGIN_PATH"):
        _skip("HDF5_PLUGIN_PATH is not set (ctest sets it to the build's hdf5-plugin folder)")
    try:
        import h5py
    except ImportError:
        _skip("no h5py (Debian: python3-h5py)")
    return h5py


def cd_values(codec, eb_mode, eb):
    """compression_opts for the zcoll filter: version 1, codec, eb mode, eb as two 32-bit halves."""
    lo, hi = np.array([eb], dtype="<f8").view("<u4")
    return (1, codec, eb_mode, int(lo), int(hi))


def field(name, shape):
    return np.fromfile(os.path.join(DATA, name), dtype="<f4").reshape(shape)


def chunk_bounds(x, chunks, eb_mode, eb):
    """The bound of every element: eb (ABS), or eb x (max - min) of its chunk as HDF5 hands
    it to the filter (REL), i.e. with the fill value 0 in a partial edge chunk."""
    if eb_mode == ABS:
        return np.full(x.shape, eb)
    b = np.empty(x.shape)
    ranges = [range(0, n, c) for n, c in zip(x.shape, chunks)]
    for start in np.ndindex(*[len(r) for r in ranges]):
        sl = tuple(slice(r[i], r[i] + c) for r, i, c in zip(ranges, start, chunks))
        block = x[sl].astype(np.float64)
        lo, hi = block.min(), block.max()
        if any(s.stop > n for s, n in zip(sl, x.shape)):  # partial edge chunk: fill 0
            lo, hi = min(lo, 0.0), max(hi, 0.0)
        b[sl] = eb * (hi - lo) * (1 + 1e-12)
    return b


def violations(x, y, bound):
    err = np.abs(x.astype(np.float64) - y.astype(np.float64))
    return int(np.count_nonzero(~(err <= bound))), float(np.max(err / bound))


CASES = [
    # name, dtype, source field, shape, chunks, codec, eb mode, eb
    ("f32_3d_fzl_abs", "<f4", "cesm_TS_10x192x288.f32", (10, 192, 288), (3, 50, 70), FZL, ABS, 1e-2),
    ("f64_3d_fzl_rel", "<f8", "turb_wmag_91x91x91.f32", (91, 91, 91), (30, 32, 40), FZL, REL, 1e-3),
    ("f32_2d_szx_rel", "<f4", "echam5_T_17x96x192.f32", (17 * 96, 192), (100, 64), SZX, REL, 1e-3),
    ("f64_1d_lpbit_abs", "<f8", "cesm_TS_10x192x288.f32", (10 * 192 * 288,), (20000,), LPBIT, ABS, 5e-3),
]


def test_h5py_write_read():
    with tempfile.TemporaryDirectory() as tmp:
        _test_h5py_write_read(tmp)


def _test_h5py_write_read(tmp):
    h5py = _h5py()
    path = os.path.join(tmp, "h5py_zcoll.h5")
    src = {}
    with h5py.File(path, "w") as f:
        for name, dt, fname, shape, chunks, codec, mode, eb in CASES:
            x = field(fname, shape).astype(dt)
            src[name] = x
            f.create_dataset(name, data=x, chunks=chunks, compression=H5Z_FILTER_ZCOLL,
                             compression_opts=cd_values(codec, mode, eb), fillvalue=0)
    with h5py.File(path, "r") as f:
        for name, dt, fname, shape, chunks, codec, mode, eb in CASES:
            ds = f[name]
            y = ds[...]
            x = src[name]
            assert y.dtype == np.dtype(dt) and y.shape == x.shape
            # set_local appended dtype, rank and the chunk shape (extents of 1 dropped).
            flags, opts, fname_ = ds.id.get_create_plist().get_filter_by_id(H5Z_FILTER_ZCOLL)
            opts = tuple(int(v) for v in opts)
            hint = tuple(c for c in chunks if c != 1)
            assert opts[:5] == cd_values(codec, mode, eb), opts
            assert opts[5] == (1 if dt == "<f4" else 2) and opts[6] == len(hint) and opts[7:] == hint, opts
            bad, worst = violations(x, y, chunk_bounds(x, chunks, mode, eb))
            ratio = x.nbytes / ds.id.get_storage_size()
            print(f"{name}: ratio {ratio:.2f}, max err/bound {worst:.4f}, {bad} violations")
            assert bad == 0, f"{name}: {bad} elements beyond the bound"
            assert ratio > 1.2, f"{name}: ratio {ratio}: the filter did not compress"
            # A hyperslab across chunk borders reads the same values.
            sl = tuple(slice(n // 3, n // 3 + max(1, n // 2)) for n in shape)
            assert np.array_equal(ds[sl], y[sl])


def test_bound_check_can_fail():
    x = np.linspace(0, 1, 1000)
    y = x.copy()
    y[123] += 1.5e-3
    assert violations(x, y, chunk_bounds(x, (100,), ABS, 1e-3))[0] == 1
    y = x.copy()
    y[5] += 0.0011  # chunk 0 spans [0, 0.099...]: REL 1e-2 allows ~1e-3
    assert violations(x, y, chunk_bounds(x, (100,), REL, 1e-2))[0] == 1


def test_read_c_written_file():
    with tempfile.TemporaryDirectory() as tmp:
        _test_read_c_written_file(tmp)


def _test_read_c_written_file(tmp):
    h5py = _h5py()
    writer = os.environ.get("ZCOLL_H5_SAMPLE_WRITER")
    if not writer:
        _skip("ZCOLL_H5_SAMPLE_WRITER is not set (ctest sets it)")
    path = os.path.join(tmp, "c_sample.h5")
    subprocess.run([writer, DATA, path], check=True, stdout=subprocess.DEVNULL)
    with h5py.File(path, "r") as f:
        for name in ("f32_2d", "f64_3d"):
            ds = f[name]
            eb = float(ds.attrs["eb_abs"])
            y, x = ds[...], f[name + "_ref"][...]
            bad, worst = violations(x, y, np.full(x.shape, eb))
            print(f"C-written {name}: max err/bound {worst:.4f}")
            assert bad == 0 and y.dtype == x.dtype


def test_without_plugin_read_fails():
    with tempfile.TemporaryDirectory() as tmp:
        _test_without_plugin_read_fails(tmp)


def _test_without_plugin_read_fails(tmp):
    h5py = _h5py()
    path = os.path.join(tmp, "needs_plugin.h5")
    x = field("cesm_TS_10x192x288.f32", (10, 192, 288))[0]
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=x, chunks=(64, 64), compression=H5Z_FILTER_ZCOLL,
                         compression_opts=cd_values(FZL, ABS, 1e-2))
    empty = os.path.join(tmp, "empty_plugin_dir")
    os.makedirs(empty, exist_ok=True)
    code = ("import h5py, sys\n"
            "try:\n"
            "    h5py.File(sys.argv[1], 'r')['x'][...]\n"
            "except Exception as e:\n"
            "    print('read failed as expected:', type(e).__name__); sys.exit(0)\n"
            "sys.exit('read succeeded without the plugin')\n")
    env = dict(os.environ, HDF5_PLUGIN_PATH=empty)
    r = subprocess.run([sys.executable, "-c", code, path], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_bad_options_refused():
    with tempfile.TemporaryDirectory() as tmp:
        _test_bad_options_refused(tmp)


def _test_bad_options_refused(tmp):
    h5py = _h5py()
    x = np.zeros((100,), dtype="<f4")
    bad_opts = [(1, 1), (2, 1, 0) + cd_values(FZL, ABS, 1e-3)[3:], (1, 99, 0) + cd_values(FZL, ABS, 1e-3)[3:],
                cd_values(FZL, ABS, -1.0)]
    with h5py.File(os.path.join(tmp, "bad.h5"), "w") as f:
        for i, opts in enumerate(bad_opts):
            try:
                f.create_dataset(f"b{i}", data=x, chunks=(10,), compression=H5Z_FILTER_ZCOLL,
                                 compression_opts=opts)
            except ValueError as e:  # h5py's message carries the filter's HDF5 error
                assert "zcoll filter" in str(e), str(e)
            else:
                raise AssertionError(f"cd_values {opts} accepted")
        # An integer dataset: the filter refuses the type.
        try:
            f.create_dataset("ints", data=np.arange(100, dtype="<i4"), chunks=(10,),
                             compression=H5Z_FILTER_ZCOLL, compression_opts=cd_values(FZL, ABS, 1e-3))
        except ValueError as e:
            assert "zcoll filter" in str(e), str(e)
        else:
            raise AssertionError("an int32 dataset was created with the zcoll filter")


if __name__ == "__main__":
    import plain_runner

    sys.exit(plain_runner.run(globals()))
