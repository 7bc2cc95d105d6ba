"""Collectives on mpi4py communicators, compared with mpi4py's own results.

Run under MPI with python/tests/mpirun_pytest.py (scripts/test.sh, stage python):
    mpiexec -n 3 python python/tests/mpirun_pytest.py python/tests/test_mpi.py
Every rank runs the same tests in the same order; with one rank they still run (the
collectives then go through MPI unchanged or on one rank).
"""
import numpy as np
import pytest

import zcoll

MPI = pytest.importorskip("mpi4py.MPI")
if not zcoll.HAVE_MPI:
    pytest.skip("this zcoll was built without MPI", allow_module_level=True)

WORLD = MPI.COMM_WORLD
P = WORLD.Get_size()
R = WORLD.Get_rank()


def rank_field(cesm, dtype=np.float32, n=None, rank=R):
    """A rank's share of real data: a different map of cesm_TS per rank (10 maps)."""
    m = cesm[rank % cesm.shape[0]].ravel().astype(dtype)
    return np.ascontiguousarray(m if n is None else np.resize(m, n))


@pytest.fixture(scope="module")
def zc():
    with zcoll.Comm(WORLD, eb=1e-4, mode="rel") as c:
        yield c


def fp_slack(x, k):
    """k ulps of the exact result: the element type's rounding of a sum, which MPI's own
    float sum has too."""
    return k * np.spacing(np.abs(x).astype(x.dtype)).astype(np.float64)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op", ["SUM", "MIN", "MAX"])
def test_allreduce_within_bound(zc, cesm, dtype, op):
    x = rank_field(cesm, dtype)
    mop = getattr(MPI, op)
    got = np.empty_like(x)
    zc.Allreduce(x, got, op=mop)
    st = zc.last_stats
    ref = np.empty_like(x)
    WORLD.Allreduce(x, ref, op=mop)
    if P == 1:
        np.testing.assert_array_equal(got, ref)
        return
    assert st["compressed"] and st["ratio"] > 1.5 and st["algorithm"] in ("ring", "recursive_doubling")
    # The struct's layout matches the library's: the last field, t_setup, holds the time
    # before the data moved (it includes the agreement, so it is above 0), within the whole.
    assert 0 < st["t_setup"] <= st["t_total"] and st["t_model"] <= st["t_setup"]
    eps = st["eb_abs"]
    factor = P if op == "SUM" else 1
    err = np.abs(got.astype(np.float64) - ref)
    assert err.max() <= factor * eps + fp_slack(ref, 2 * P).max()
    assert err.max() > 0, "compressed, so not bit-exact"
    # Every rank holds the same bits.
    allgot = np.empty((P, got.size), dtype=dtype)
    WORLD.Allgather(got, allgot)
    assert all(np.array_equal(allgot[0], allgot[i]) for i in range(P))


def test_allreduce_in_place_matches_out_of_place(zc, cesm):
    x = rank_field(cesm)
    out = np.empty_like(x)
    zc.Allreduce(x, out, op=MPI.SUM)
    y = x.copy()
    zc.Allreduce(MPI.IN_PLACE, y, op=MPI.SUM)
    np.testing.assert_array_equal(y, out)
    # mpi4py's [buf, datatype] spec works too.
    z = np.empty_like(x)
    zc.Allreduce([x, MPI.FLOAT], [z, MPI.FLOAT], op=MPI.SUM)
    np.testing.assert_array_equal(z, out)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8])
def test_integers_pass_through_exactly(zc, dtype):
    rng = np.random.default_rng(R)
    x = rng.integers(0, 100, size=50_000).astype(dtype)
    got, ref = np.empty_like(x), np.empty_like(x)
    zc.Allreduce(x, got, op=MPI.SUM)
    assert not zc.last_stats["compressed"]
    WORLD.Allreduce(x, ref, op=MPI.SUM)
    np.testing.assert_array_equal(got, ref)
    b = x.copy()
    zc.Bcast(b, root=P - 1)
    rb = x.copy()
    WORLD.Bcast(rb, root=P - 1)
    np.testing.assert_array_equal(b, rb)
    g, rg = np.empty(P * x.size, dtype), np.empty(P * x.size, dtype)
    zc.Allgather(x, g)
    WORLD.Allgather(x, rg)
    np.testing.assert_array_equal(g, rg)


def test_small_float_messages_are_exact(zc):
    x = np.linspace(0, 1, 100, dtype=np.float32) + R
    got, ref = np.empty_like(x), np.empty_like(x)
    zc.Allreduce(x, got, op=MPI.SUM)
    WORLD.Allreduce(x, ref, op=MPI.SUM)
    np.testing.assert_array_equal(got, ref)
    assert not zc.last_stats["compressed"]


def test_non_float_op_passes_through(zc, cesm):
    x = rank_field(cesm, np.float64) / 300.0
    got, ref = np.empty_like(x), np.empty_like(x)
    zc.Allreduce(x, got, op=MPI.PROD)
    WORLD.Allreduce(x, ref, op=MPI.PROD)
    np.testing.assert_array_equal(got, ref)


def test_bcast_within_bound(zc, cesm):
    root = P - 1
    x = rank_field(cesm)
    ref = x.copy()
    WORLD.Bcast(ref, root=root)
    zc.Bcast(x, root=root)
    st = zc.last_stats
    if R == root:
        np.testing.assert_array_equal(x, ref)  # the root's own data is not touched
    elif P > 1:
        assert st["compressed"]
        assert np.abs(x.astype(np.float64) - ref).max() <= st["eb_abs"]


@pytest.mark.parametrize("in_place", [False, True])
def test_allgather_within_bound(zc, cesm, in_place):
    x = rank_field(cesm)
    ref = np.empty(P * x.size, np.float32)
    WORLD.Allgather(x, ref)
    got = np.empty_like(ref)
    if in_place:
        got[R * x.size:(R + 1) * x.size] = x
        zc.Allgather(MPI.IN_PLACE, got)
    else:
        zc.Allgather(x, got)
    eb = zc.last_stats["eb_abs"]
    own = slice(R * x.size, (R + 1) * x.size)
    np.testing.assert_array_equal(got[own], x)  # a rank's own block is copied exactly
    assert np.abs(got.astype(np.float64) - ref).max() <= eb
    if P > 1:
        assert zc.last_stats["compressed"] and eb > 0


def test_reduce_scatter_block_within_bound(zc, cesm):
    x = rank_field(cesm, np.float64, n=P * 30_000)
    got = np.empty(30_000)
    zc.Reduce_scatter_block(x, got, op=MPI.SUM)
    eps = zc.last_stats["eb_abs"]
    ref = np.empty(30_000)
    WORLD.Reduce_scatter_block(x, ref, op=MPI.SUM)
    assert np.abs(got - ref).max() <= max(P - 1, 1) * eps + fp_slack(ref, 2 * P).max()


def test_alltoall_within_bound(zc, cesm):
    x = rank_field(cesm, np.float32, n=P * 20_000)
    got, ref = np.empty_like(x), np.empty_like(x)
    zc.Alltoall(x, got)
    WORLD.Alltoall(x, ref)
    assert np.abs(got.astype(np.float64) - ref).max() <= zc.last_stats["eb_abs"]


def test_reduce_to_root(zc, cesm):
    x = rank_field(cesm, np.float64)
    got = np.empty_like(x) if R == 0 else None
    zc.Reduce(x, got, op=MPI.MAX, root=0)
    eps = zc.last_stats["eb_abs"]
    ref = np.empty_like(x) if R == 0 else None
    WORLD.Reduce(x, ref, op=MPI.MAX, root=0)
    if R == 0:
        assert np.abs(got - ref).max() <= eps


def test_send_recv_ring(zc, cesm):
    if P == 1:
        pytest.skip("needs two ranks")
    x = rank_field(cesm, np.float64)
    right, left = (R + 1) % P, (R - 1) % P
    got = np.empty_like(x)
    st = MPI.Status()
    if R % 2 == 0:
        zc.Send(x, right, tag=7)
        sent = zc.last_stats
        zc.Recv(got, source=left, tag=7, status=st)
    else:
        zc.Recv(got, source=left, tag=7, status=st)
        zc.Send(x, right, tag=7)
        sent = zc.last_stats
    assert sent["compressed"] and sent["wire_bytes"] < sent["raw_bytes"]
    assert st.Get_source() == left and st.Get_tag() == 7 and st.Get_count(MPI.DOUBLE) == x.size
    ref = rank_field(cesm, np.float64, rank=left)
    rel = 1e-4 * (float(ref.max()) - float(ref.min()))  # REL bound from the sender's message
    assert np.abs(got - ref).max() <= rel * (1 + 1e-12)


def test_info_is_the_topology_and_agreed(zc):
    info = zc.info
    # MPI_COMM_TYPE_SHARED: these ranks share one host here, or run one per host.
    host = WORLD.Split_type(MPI.COMM_TYPE_SHARED)
    assert info["node_size"] == host.Get_size() and info["node_rank"] == host.Get_rank()
    host.Free()
    assert 1 <= info["nodes"] <= P and info["codec_threads"] >= 1 and info["model_threads"] >= 1
    assert info["intra_bytes_per_s"] > 0 or info["nodes"] == P
    agreed = ("nodes", "max_node_size", "rails", "model_threads", "intra_latency_s", "intra_bytes_per_s",
              "inter_latency_s", "inter_bytes_per_s")
    everyone = WORLD.allgather(tuple(info[k] for k in agreed))
    assert all(e == everyone[0] for e in everyone)


def test_argument_errors(zc):
    with pytest.raises(TypeError, match="mpi4py communicator"):
        zcoll.Comm(object())
    with pytest.raises(ValueError, match="C-contiguous"):
        zc.Allreduce(np.zeros((4, 4), np.float32)[:, ::2], np.zeros(8, np.float32))
    with pytest.raises(ValueError, match="read-only"):
        zc.Bcast(np.frombuffer(b"\0" * 64, np.float32))


def test_settings_that_differ_across_ranks_are_reported_everywhere():
    if P == 1:
        pytest.skip("needs two ranks")
    with pytest.raises(zcoll.ZcollError) as e:
        zcoll.Comm(WORLD, eb=1e-4 if R == 0 else 1e-3)
    assert e.value.code == 7 and "eb" in str(e.value)


def test_free_is_final(cesm):
    c = zcoll.Comm(WORLD, eb=1e-3, mode="abs", algorithms={"allreduce": "ring"}, min_bytes=0)
    x = rank_field(cesm)
    c.Allreduce(MPI.IN_PLACE, x)
    if P > 1:
        assert c.last_stats["algorithm"] == "ring" and c.last_stats["eb_abs"] == 1e-3
    c.Free()
    with pytest.raises(ValueError, match="freed"):
        c.Allreduce(MPI.IN_PLACE, x)


def test_warm_start_from_a_tuning_file(cesm, monkeypatch, tmp_path):
    """ZCOLL_TUNING_FILE (zcoll.h, "Warm start"): a communicator whose cost model learned
    writes its record when freed; the next one of the same settings starts from it on every
    rank."""
    if P == 1:
        pytest.skip("a reduction on one rank is not compressed: the model learns nothing")
    path = WORLD.bcast(str(tmp_path / "tuning.bin"))
    monkeypatch.delenv("ZCOLL_DECIDE", raising=False)  # the model must decide here
    monkeypatch.setenv("ZCOLL_TUNING_FILE", path)
    monkeypatch.setenv("ZCOLL_LINK_GBPS", "1")  # the same network figures for both
    x = rank_field(cesm, np.float32, n=1 << 18)
    warm = []
    for _ in range(2):
        with zcoll.Comm(WORLD, eb=1e-3, mode="abs") as c:
            warm.append(c.warm_start)
            for _ in range(4):
                c.Allreduce(MPI.IN_PLACE, x.copy())
    assert warm == [False, True]
    assert all(WORLD.allgather(warm[1]))
