import json
import os
import subprocess
import sys

import numpy as np

import zcoll
from conftest import ROOT

CESM = os.path.join(ROOT, "data", "cesm_TS_10x192x288.f32")


def run(*args, ok=True):
    r = subprocess.run([sys.executable, "-m", "zcoll", *map(str, args)], capture_output=True, text=True)
    if ok:
        assert r.returncode == 0, r.stderr
    return r


def one_line_error(r, code=1):
    assert r.returncode == code
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("zcoll: "), repr(r.stderr)
    return r.stderr


def test_console_script_is_installed():
    exe = os.path.join(os.path.dirname(sys.executable), "zcoll")
    r = subprocess.run([exe, "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "compress" in r.stdout


def test_raw_round_trip(tmp_path, cesm):
    out = tmp_path / "ts.zc"
    r = run("compress", CESM, out, "--dtype", "f32", "--shape", "10x192x288", "--eb", "1e-4", "--mode", "rel")
    assert "ratio" in r.stdout
    info = json.loads(run("info", out, "--json").stdout)
    assert info["shape"] == [10, 192, 288] and info["dtype"] == "float32"
    run("decompress", out, tmp_path / "ts.f32")
    b = np.fromfile(tmp_path / "ts.f32", dtype=np.float32).reshape(cesm.shape)
    assert np.abs(b.astype(np.float64) - cesm).max() <= info["eb_abs"]
    run("decompress", out, tmp_path / "ts.npy")
    np.testing.assert_array_equal(np.load(tmp_path / "ts.npy"), b)


def test_layout_from_the_file_name(tmp_path):
    out = tmp_path / "a.zc"
    run("compress", CESM, out, "--eb", "1e-3")
    assert zcoll.inspect(out.read_bytes())["shape"] == (10, 192, 288)


def test_npy_round_trip(tmp_path, cesm):
    np.save(tmp_path / "in.npy", cesm.astype(np.float64))
    run("compress", tmp_path / "in.npy", tmp_path / "in.zc", "--eb", "0.01", "--mode", "abs")
    run("decompress", tmp_path / "in.zc", tmp_path / "back.npy")
    b = np.load(tmp_path / "back.npy")
    assert b.dtype == np.float64 and b.shape == cesm.shape
    assert np.abs(b - cesm).max() <= 0.01


def test_errors_are_one_line(tmp_path):
    assert "No such file" in one_line_error(run("info", tmp_path / "missing", ok=False))
    (tmp_path / "junk").write_bytes(b"not a stream at all")
    one_line_error(run("info", tmp_path / "junk", ok=False))
    one_line_error(run("decompress", tmp_path / "junk", tmp_path / "x.npy", ok=False))
    assert "--dtype" in one_line_error(run("compress", tmp_path / "junk", tmp_path / "o", "--eb", "1e-3", ok=False))
    assert "holds" in one_line_error(run("compress", CESM, tmp_path / "o", "--shape", "7x7", "--eb", "1e-3", ok=False))
    one_line_error(run("compress", CESM, tmp_path / "o", "--eb", "-1", ok=False))
    one_line_error(run("compress", CESM, tmp_path / "o", ok=False), code=2)  # --eb missing
    one_line_error(run("frobnicate", ok=False), code=2)
    np.save(tmp_path / "i.npy", np.arange(10))
    assert "float32" in one_line_error(run("compress", tmp_path / "i.npy", tmp_path / "o", "--eb", "1e-3", ok=False))


def test_bench_table(tmp_path):
    r = run("bench", CESM, "--eb", "1e-3", "1e-4", "--repeat", "1", "--json")
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert [row["eb"] for row in rows] == [1e-3, 1e-4]
    for row in rows:
        assert row["ratio"] > 1.5 and row["comp_gbps"] > 0 and 0 < row["max_err_over_eb"] <= 1.0
    text = run("bench", CESM, "--eb", "1e-3", "--repeat", "1").stdout
    assert "cesm_TS_10x192x288.f32" in text and "ratio" in text
