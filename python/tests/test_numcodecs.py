import subprocess
import sys
import warnings

import numpy as np
import pytest


numcodecs = pytest.importorskip("numcodecs")
from zcoll.numcodecs import Fzl, FzlZarr3  # noqa: E402


def within(a, b, eb_rel_chunks):
    """Each chunk is compressed on its own, so REL is relative to the chunk's range; the
    largest chunk range is at most the whole range."""
    rng = float(a.max()) - float(a.min())
    assert np.abs(a.astype(np.float64) - b).max() <= eb_rel_chunks * rng


def test_codec_round_trip_and_registry(cesm):
    c = Fzl(eb=1e-4, mode="rel")
    enc = c.encode(cesm)
    dec = c.decode(enc)
    assert dec.shape == cesm.shape
    within(cesm, dec, 1e-4)
    again = numcodecs.get_codec(c.get_config())
    assert isinstance(again, Fzl) and again.get_config() == c.get_config()
    out = np.empty_like(cesm)
    c.decode(enc, out=out)
    np.testing.assert_array_equal(out, dec)


def test_bad_settings_fail_at_construction():
    with pytest.raises(ValueError):
        Fzl(eb=-1)
    with pytest.raises(ValueError):
        Fzl(mode="absolute")
    with pytest.raises(TypeError, match="float32"):
        Fzl().encode(np.arange(10))


def test_zarr_format2_round_trip(tmp_path, cesm):
    zarr = pytest.importorskip("zarr")
    path = str(tmp_path / "v2.zarr")
    z = zarr.create_array(store=path, shape=cesm.shape, chunks=(2, 96, 144), dtype="f4",
                          zarr_format=2, compressors=Fzl(eb=1e-4), overwrite=True)
    z[:] = cesm
    # A fresh process finds the codec through the numcodecs entry point.
    code = ("import zarr, numpy as np; z = zarr.open_array(%r, mode='r'); "
            "np.save(%r, z[:]); print(z.metadata.to_dict()['compressor']['id'])") % (path, str(tmp_path / "out.npy"))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "zcoll_fzl"
    b = np.load(tmp_path / "out.npy")
    within(cesm, b, 1e-4)
    assert not np.array_equal(cesm, b), "lossy: stored values differ from the input"


@pytest.mark.skipif(FzlZarr3 is None, reason="needs zarr >= 3.1.3")
def test_zarr_format3_round_trip(tmp_path, cesm):
    zarr = pytest.importorskip("zarr")
    path = str(tmp_path / "v3.zarr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zarr: "numcodecs codecs are not in the v3 spec"
        z = zarr.create_array(store=path, shape=cesm.shape, chunks=(5, 192, 288), dtype="f4",
                              zarr_format=3, serializer=FzlZarr3(eb=1e-4, mode="rel"),
                              compressors=None, overwrite=True)
        z[:] = cesm
    code = ("import warnings; warnings.simplefilter('ignore'); import zarr, numpy as np; "
            "z = zarr.open_array(%r, mode='r'); np.save(%r, z[:])") % (path, str(tmp_path / "out.npy"))
    subprocess.run([sys.executable, "-c", code], check=True)
    within(cesm, np.load(tmp_path / "out.npy"), 1e-4)
    stored = sum(f.stat().st_size for f in (tmp_path / "v3.zarr").rglob("*")
                 if f.is_file() and f.name != "zarr.json")
    assert stored < cesm.nbytes / 2, "chunks are stored compressed"
