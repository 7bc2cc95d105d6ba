import os
import struct
import threading
import time

import numpy as np
import pytest

import zcoll
from conftest import fields, load_field

FIELDS = fields()


def bound_ok(a, b, eb_abs):
    """The codec's guarantee, checked in numpy: finite values within eb_abs (computed in
    double), NaN and Inf bit for bit."""
    assert a.dtype == b.dtype and a.shape == b.shape
    fin = np.isfinite(a)
    err = np.abs(a[fin].astype(np.float64) - b[fin].astype(np.float64))
    assert err.size == 0 or err.max() <= eb_abs, f"max err {err.max()} > eb_abs {eb_abs}"
    u = f"u{a.dtype.itemsize}"
    assert np.array_equal(a[~fin].view(u), b[~fin].view(u))
    return err


def test_fields_are_there():
    assert len(FIELDS) >= 3, "data/ should hold the three shipped fields"


@pytest.mark.parametrize("path", FIELDS, ids=os.path.basename)
@pytest.mark.parametrize("eb", [1e-2, 1e-4])
@pytest.mark.parametrize("hint", [False, True])
def test_field_round_trip(path, eb, hint):
    a = load_field(path)
    buf = zcoll.compress(a, eb, "rel", shape_hint=hint)
    assert isinstance(buf, bytes)
    info = zcoll.inspect(buf)
    rng = float(a.max()) - float(a.min())
    assert info["eb_abs"] == pytest.approx(eb * rng, rel=1e-6)
    assert info["shape"] == a.shape and info["dtype"] == str(a.dtype)
    assert info["ratio"] > 1.5, "a real field at these bounds compresses"
    assert (info["lorenzo_dims"] is not None) == hint
    b = zcoll.decompress(buf)
    err = bound_ok(a, b, info["eb_abs"])
    assert err.max() > 0, "lossy at these bounds: an exact copy would mean the bound was ignored"


def test_abs_mode_and_dtypes(cesm):
    for a in (cesm, cesm.astype(np.float64)):
        buf = zcoll.compress(a, 0.05, mode="abs")
        assert zcoll.inspect(buf)["eb_abs"] == 0.05
        bound_ok(a, zcoll.decompress(buf), 0.05)


def test_threads_do_not_change_the_stream(cesm):
    assert zcoll.compress(cesm, 1e-4, threads=1) == zcoll.compress(cesm, 1e-4, threads=2)


@pytest.mark.parametrize("codec", ["fzl", "lpbyte", "lpbit", "szx"])
def test_codecs(cesm, codec):
    buf = zcoll.compress(cesm, 1e-3, codec=codec)
    assert zcoll.inspect(buf)["codec"] == codec
    bound_ok(cesm, zcoll.decompress(buf), zcoll.inspect(buf)["eb_abs"])


def test_nan_inf_and_signed_zero():
    rng = np.random.default_rng(1)
    a = rng.normal(size=100_000).astype(np.float32)
    a[::97] = np.nan
    a[5::101] = np.inf
    a[7::103] = -np.inf
    a[9] = -0.0
    buf = zcoll.compress(a, 1e-3)
    bound_ok(a, zcoll.decompress(buf), zcoll.inspect(buf)["eb_abs"])


def test_all_nan_and_constant():
    for a in (np.full(5000, np.nan), np.full((30, 40), 7.25, dtype=np.float32)):
        buf = zcoll.compress(a, 1e-4)
        b = zcoll.decompress(buf)
        assert b.shape == a.shape
        np.testing.assert_array_equal(b, a)


@pytest.mark.parametrize("shape", [(0,), (0, 5), (1,), (1, 1, 1), (), (2, 3, 4, 5)])
def test_edge_shapes(shape):
    a = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) * 0.37
    for hint in (False, True):
        b = zcoll.decompress(zcoll.compress(a, 1e-3, "abs", shape_hint=hint))
        assert b.shape == a.shape and b.dtype == a.dtype
        bound_ok(a, b, 1e-3)


def test_non_contiguous_is_refused_with_the_fix(cesm):
    with pytest.raises(ValueError, match="ascontiguousarray"):
        zcoll.compress(cesm[:, ::2], 1e-4)
    with pytest.raises(ValueError, match="ascontiguousarray"):
        zcoll.compress(np.asfortranarray(cesm[0]), 1e-4)


def test_big_endian_is_refused_with_the_fix(cesm):
    be = cesm.astype(">f4")
    with pytest.raises(TypeError, match="newbyteorder"):
        zcoll.compress(be, 1e-4)
    fixed = be.astype(be.dtype.newbyteorder("="))
    bound_ok(cesm, zcoll.decompress(zcoll.compress(fixed, 1e-4)), zcoll.inspect(zcoll.compress(fixed, 1e-4))["eb_abs"])


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float16, np.complex64, np.uint8, bool])
def test_other_dtypes_are_refused(dtype):
    with pytest.raises(TypeError, match="float32"):
        zcoll.compress(np.zeros(10, dtype=dtype), 1e-4)


@pytest.mark.parametrize("eb", [0, -1, float("nan"), float("inf")])
def test_bad_bounds(eb):
    with pytest.raises(ValueError, match="eb must be"):
        zcoll.compress(np.zeros(10, np.float32), eb)


def test_bad_mode_and_codec():
    with pytest.raises(ValueError, match="'rel' or 'abs'"):
        zcoll.compress(np.zeros(10, np.float32), 1e-3, mode="relative")
    with pytest.raises(ValueError, match="unknown codec"):
        zcoll.compress(np.zeros(10, np.float32), 1e-3, codec="zfp")


def test_corrupt_and_truncated_streams_are_rejected(cesm):
    buf = bytearray(zcoll.compress(cesm, 1e-4))
    with pytest.raises(zcoll.ZcollError) as e:
        zcoll.decompress(bytes(buf[:len(buf) // 2]))
    assert e.value.code in (5, 6, 7)
    buf[len(buf) // 2] ^= 0x40
    with pytest.raises(zcoll.ZcollError):
        zcoll.decompress(bytes(buf))
    with pytest.raises(zcoll.ZcollError):
        zcoll.decompress(b"ZCPY\x01\x03\x00\x00")  # envelope cut inside the shape
    with pytest.raises(TypeError):
        zcoll.decompress(12345)


def test_bare_c_stream_and_buffer_types(cesm):
    buf = zcoll.compress(cesm, 1e-4, shape_hint=True)
    ndim = struct.unpack_from("<B", buf, 5)[0]
    bare = buf[8 + 8 * ndim:]
    # The C stream alone gives the shape hint's shape.
    assert zcoll.decompress(bare).shape == cesm.shape
    flat = zcoll.compress(cesm, 1e-4)
    assert zcoll.decompress(flat[8 + 8 * 3:]).shape == (cesm.size,)
    for view in (bytearray(buf), memoryview(buf), np.frombuffer(buf, np.uint8)):
        np.testing.assert_array_equal(zcoll.decompress(view), zcoll.decompress(buf))


def test_decompress_into_out(cesm):
    buf = zcoll.compress(cesm, 1e-4)
    out = np.empty_like(cesm)
    assert zcoll.decompress(buf, out=out) is out
    np.testing.assert_array_equal(out, zcoll.decompress(buf))
    with pytest.raises(ValueError, match="out is"):
        zcoll.decompress(buf, out=np.empty(10, np.float32))


def test_gil_is_released():
    """Another Python thread keeps running while compression works."""
    a = np.random.default_rng(0).normal(size=16 << 20).astype(np.float32)
    ticks = []
    done = threading.Event()

    def count():
        while not done.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    t = threading.Thread(target=count)
    t.start()
    time.sleep(0.01)
    t0 = time.perf_counter()
    zcoll.compress(a, 1e-4, threads=1)
    t1 = time.perf_counter()
    done.set()
    t.join()
    inside = [x for x in ticks if t0 < x < t1]
    # With the GIL held the counter could not tick during the call.
    assert t1 - t0 > 0.02 and len(inside) >= 3, (t1 - t0, len(inside))
