"""zcoll.Comm: compressed collectives and point-to-point on an mpi4py communicator.

Buffers follow mpi4py's upper-case conventions: a buffer (numpy array or anything with
the buffer protocol), [buf, datatype] or [buf, count, datatype], and MPI.IN_PLACE where
MPI allows it. MPI_FLOAT / MPI_DOUBLE messages of at least min_bytes per rank are
compressed; everything else goes through the same MPI call unchanged.
"""
import ctypes

import numpy as np

from . import _lib

try:
    from mpi4py import MPI
except ImportError as e:  # pragma: no cover - depends on the install
    raise ImportError("zcoll.Comm needs mpi4py built against the MPI zcoll was built with: "
                      "MPICC=<that mpicc> pip install --no-binary mpi4py mpi4py") from e

_COLLECTIVES = ("allgather", "bcast", "scatter", "gather", "alltoall", "reduce_scatter",
                "allreduce", "reduce")
_REDUCTIONS = {"auto": 0, "homomorphic": 1, "doc": 2}
_BOUND_TARGETS = {"input": 0, "result": 1}


def _check_same_mpi(lib):
    mine = ctypes.create_string_buffer(8192)
    if lib.zcollpy_mpi_library_version(mine, len(mine)) != 0:
        raise RuntimeError("zcoll: MPI_Get_library_version failed in zcoll's MPI")
    theirs = MPI.Get_library_version().rstrip("\x00").strip()
    if mine.value.decode(errors="replace").strip() != theirs:
        raise RuntimeError(
            "zcoll was built against a different MPI than mpi4py uses; reinstall zcoll with "
            "MPICC set to the mpicc of mpi4py's MPI "
            f"(mpi4py.get_config()['mpicc']). mpi4py: {theirs.splitlines()[0]!r}; "
            f"zcoll: {mine.value.decode(errors='replace').splitlines()[0]!r}")


def _name_to_id(lib, name, kind):
    if isinstance(name, int):
        return name
    out = ctypes.c_int()
    if lib.zcoll_algorithm_from_name(str(name).encode(), ctypes.byref(out)) != 0:
        raise ValueError(f"unknown {kind} {name!r}")
    return out.value


def _pick(table, value, what):
    try:
        return table[str(value).lower()]
    except KeyError:
        raise ValueError(f"{what} must be one of {', '.join(table)}, not {value!r}") from None


class _Buf:
    """One buffer argument resolved to (address, element count, MPI datatype)."""
    __slots__ = ("addr", "count", "datatype", "keep")

    def __init__(self, spec, writable, what):
        datatype = count = None
        obj = spec
        if isinstance(spec, (list, tuple)):
            if len(spec) == 2:
                obj, datatype = spec
            elif len(spec) == 3:
                obj, count, datatype = spec
            else:
                raise ValueError(f"{what}: expected buf, [buf, datatype] or [buf, count, datatype]")
            if isinstance(count, tuple):
                raise ValueError(f"{what}: (count, displacement) pairs are not supported; "
                                 f"pass a slice of the array instead")
        if isinstance(obj, np.ndarray):
            arr = obj
        else:
            try:
                arr = np.frombuffer(obj, dtype=np.uint8)
            except (TypeError, ValueError):
                raise TypeError(f"{what}: expected a numpy array or a buffer, not "
                                f"{type(obj).__name__}") from None
        if not arr.flags.c_contiguous:
            raise ValueError(f"{what}: array is not C-contiguous; pass np.ascontiguousarray(a) "
                             f"(and copy the result back)")
        if writable and not arr.flags.writeable:
            raise ValueError(f"{what}: array is read-only")
        if datatype is None:
            if not isinstance(obj, np.ndarray):
                datatype = MPI.BYTE
            else:
                # The predefined type (MPI_FLOAT for float32...): zcoll compresses only those,
                # and reductions need them (mpi4py.util.dtlib makes derived duplicates).
                datatype = MPI._typedict.get(arr.dtype.char) if arr.dtype.isnative else None
                if datatype is None:
                    raise TypeError(f"{what}: no predefined MPI datatype for numpy dtype "
                                    f"{arr.dtype}; pass [buf, datatype]")
        if count is None:
            extent = datatype.Get_extent()[1]
            if extent <= 0 or arr.nbytes % extent:
                raise ValueError(f"{what}: {arr.nbytes} bytes are not a whole number of "
                                 f"{datatype.Get_name() or 'datatype'} elements")
            count = arr.nbytes // extent
        self.addr = arr.ctypes.data if arr.size else None
        self.count = int(count)
        self.datatype = datatype
        self.keep = arr


class Comm:
    """A zcoll communicator over an mpi4py communicator (collective: every rank of comm calls it
    with the same settings; zcoll checks that they agree).

    eb, mode ("rel" | "abs"), codec ("fzl", "lpbyte", "lpbit", "szx"), threads (codec threads
    per rank; None or 0 = OMP_NUM_THREADS where that is set, else this rank's share of its
    node's cores, as zcoll_comm_create resolves codec.threads 0), chunk_len, min_bytes (smaller messages per rank go through plain MPI),
    algorithm ("auto", "mpi", "cprp2p", ...), algorithms ({"allreduce": "ring", ...}),
    reduction ("auto", "homomorphic", "doc"), bound_target ("input" | "result"),
    decide ("model": AUTO may run plain MPI where the cost model predicts compression does not
    pay; "compress": always compress at or above min_bytes), link_gbps (the network's
    bandwidth for the model; 0 = measured).
    Free() it (collective) when done, or use it as a context manager.
    """

    def __init__(self, comm, eb=1e-4, mode="rel", codec="fzl", *, threads=None, chunk_len=0,
                 min_bytes=None, algorithm="auto", algorithms=None, reduction="auto",
                 bound_target="input", decide="model", link_gbps=0.0):
        if not isinstance(comm, MPI.Comm):
            raise TypeError(f"zcoll.Comm needs an mpi4py communicator, not {type(comm).__name__}")
        if comm == MPI.COMM_NULL:
            raise ValueError("zcoll.Comm: comm is MPI.COMM_NULL")
        self._lib, self._zl = _lib.mpi_lib()
        _check_same_mpi(self._lib)
        from .codec import _params
        if threads is None:
            threads = 0
        cfg = _lib.Config()
        self._zl.zcoll_config_init(ctypes.byref(cfg))
        cfg.codec = _params(eb, mode, codec, threads, chunk_len)
        if min_bytes is not None:
            if int(min_bytes) < 0:
                raise ValueError(f"min_bytes must be >= 0, not {min_bytes}")
            cfg.min_bytes = int(min_bytes)
        cfg.algorithm = _name_to_id(self._zl, algorithm, "algorithm")
        for coll, alg in (algorithms or {}).items():
            if coll not in _COLLECTIVES:
                raise ValueError(f"algorithms: unknown collective {coll!r}; valid: {', '.join(_COLLECTIVES)}")
            cfg.algorithms[_COLLECTIVES.index(coll)] = _name_to_id(self._zl, alg, "algorithm")
        cfg.reduction = _pick(_REDUCTIONS, reduction, "reduction")
        cfg.bound_target = _pick(_BOUND_TARGETS, bound_target, "bound_target")
        cfg.decision = _pick({"model": 0, "compress": 1}, decide, "decide")
        cfg.link_gbps = float(link_gbps)
        self._zc = ctypes.c_void_p()
        self.comm = comm
        self._call("zcoll.Comm", self._lib.zcollpy_comm_create, MPI._addressof(comm),
                   ctypes.byref(cfg), ctypes.byref(self._zc))
        self._in_place = self._lib.zcollpy_in_place()

    # -- plumbing
    def _call(self, what, fn, *args):
        _lib.check(fn(*args), what, self._zl)

    def _handle(self):
        if not self._zc:
            raise ValueError("zcoll.Comm has been freed")
        return self._zc

    def _send(self, sendbuf, what):
        """sendbuf as (address, count, datatype), MPI.IN_PLACE as (MPI_IN_PLACE, None, None)."""
        if sendbuf is MPI.IN_PLACE:
            return self._in_place, None, None
        b = _Buf(sendbuf, False, what)
        return b.addr, b, b.datatype

    # -- lifetime
    def Free(self):
        """Collective: frees zcoll's duplicates of the communicator and its buffers."""
        if self._zc:
            self._call("zcoll.Comm.Free", self._zl.zcoll_comm_free, ctypes.byref(self._zc))
            self._zc = ctypes.c_void_p()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.Free()

    @property
    def rank(self):
        return self.comm.Get_rank()

    @property
    def size(self):
        return self.comm.Get_size()

    @property
    def warm_start(self):
        """Whether AUTO's cost model began from a record of ZCOLL_TUNING_FILE (zcoll.h,
        "Warm start"); the same on every rank."""
        warm = ctypes.c_int(0)
        self._call("zcoll.Comm.warm_start", self._zl.zcoll_comm_warm_start, self._handle(), ctypes.byref(warm))
        return bool(warm.value)

    @property
    def info(self):
        """What zcoll found for this communicator, as this rank sees it (zcoll_comm_get_info):
        nodes, node, node_rank, node_size, max_node_size, rails, codec_threads,
        model_threads, and the links AUTO's model starts from (latency in s, bandwidth in
        bytes/s, inside a node and between nodes)."""
        st = _lib.CommInfo()
        self._call("zcoll.Comm.info", self._zl.zcoll_comm_get_info, self._handle(), ctypes.byref(st))
        return {name: getattr(st, name) for name, _ in _lib.CommInfo._fields_}

    @property
    def last_stats(self):
        """What the last collective (or Send) did on this rank: compressed, algorithm,
        eb_abs, raw_bytes, wire_bytes, ratio, and the seconds spent."""
        st = _lib.Stats()
        self._call("zcoll.Comm.last_stats", self._zl.zcoll_last_stats, self._handle(), ctypes.byref(st))
        name = self._zl.zcoll_algorithm_name(st.algorithm)
        return {
            "compressed": bool(st.compressed),
            "algorithm": name.decode() if name else st.algorithm,
            "eb_abs": st.eb_abs,
            "raw_bytes": st.raw_bytes,
            "wire_bytes": st.wire_bytes,
            "ratio": st.raw_bytes / st.wire_bytes if st.wire_bytes else None,
            "t_compress": st.t_compress,
            "t_comm": st.t_comm,
            "t_decompress": st.t_decompress,
            "t_reduce": st.t_reduce,
            "t_total": st.t_total,
            "t_predicted": st.t_predicted,
            "t_predicted_plain": st.t_predicted_plain,
            "ratio_predicted": st.ratio_predicted,
            "t_model": st.t_model,
            "t_setup": st.t_setup,
        }

    # -- reductions
    def Allreduce(self, sendbuf, recvbuf, op=MPI.SUM):
        r = _Buf(recvbuf, True, "Allreduce recvbuf")
        s, _, _ = self._send(sendbuf, "Allreduce sendbuf")
        self._call("zcoll.Comm.Allreduce", self._lib.zcollpy_allreduce, s, r.addr, r.count,
                   MPI._addressof(r.datatype), MPI._addressof(op), self._handle())

    def Reduce(self, sendbuf, recvbuf, op=MPI.SUM, root=0):
        # As in MPI, recvbuf matters only at the root; elsewhere the count comes from sendbuf.
        is_root = self.comm.Get_rank() == root
        r = _Buf(recvbuf, True, "Reduce recvbuf") if (is_root or recvbuf is not None) else None
        s, sb, _ = self._send(sendbuf, "Reduce sendbuf")
        ref = r if (is_root or sb is None) else sb
        if ref is None:
            raise ValueError("Reduce: recvbuf is required at the root")
        self._call("zcoll.Comm.Reduce", self._lib.zcollpy_reduce, s, r.addr if r else None,
                   ref.count, MPI._addressof(ref.datatype), MPI._addressof(op), int(root),
                   self._handle())

    def Reduce_scatter_block(self, sendbuf, recvbuf, op=MPI.SUM):
        r = _Buf(recvbuf, True, "Reduce_scatter_block recvbuf")
        s, _, _ = self._send(sendbuf, "Reduce_scatter_block sendbuf")
        if sendbuf is MPI.IN_PLACE:
            # MPI: with IN_PLACE the input is recvbuf, size x count elements of it.
            if r.count % self.size:
                raise ValueError("Reduce_scatter_block: with IN_PLACE, recvbuf must hold size x count elements")
            count = r.count // self.size
        else:
            count = r.count
        self._call("zcoll.Comm.Reduce_scatter_block", self._lib.zcollpy_reduce_scatter_block, s,
                   r.addr, count, MPI._addressof(r.datatype), MPI._addressof(op), self._handle())

    # -- data movement
    def Bcast(self, buf, root=0):
        b = _Buf(buf, True, "Bcast buf")
        self._call("zcoll.Comm.Bcast", self._lib.zcollpy_bcast, b.addr, b.count,
                   MPI._addressof(b.datatype), int(root), self._handle())

    def _all(self, name, fn, sendbuf, recvbuf):
        r = _Buf(recvbuf, True, f"{name} recvbuf")
        if r.count % self.size:
            raise ValueError(f"{name}: recvbuf holds {r.count} elements, not a multiple of the "
                             f"{self.size} ranks")
        rcount = r.count // self.size
        s, sb, sdt = self._send(sendbuf, f"{name} sendbuf")
        scount = sb.count if sb is not None else 0
        sdt_addr = MPI._addressof(sdt if sdt is not None else r.datatype)
        self._call(f"zcoll.Comm.{name}", fn, s, scount, sdt_addr, r.addr, rcount,
                   MPI._addressof(r.datatype), self._handle())

    def Allgather(self, sendbuf, recvbuf):
        self._all("Allgather", self._lib.zcollpy_allgather, sendbuf, recvbuf)

    def Alltoall(self, sendbuf, recvbuf):
        # MPI's alltoall sends count elements to each rank: sendbuf's count is per rank too.
        if sendbuf is not MPI.IN_PLACE:
            sb = _Buf(sendbuf, False, "Alltoall sendbuf")
            if sb.count % self.size:
                raise ValueError(f"Alltoall: sendbuf holds {sb.count} elements, not a multiple "
                                 f"of the {self.size} ranks")
            sendbuf = [sb.keep, sb.count // self.size, sb.datatype]
        self._all("Alltoall", self._lib.zcollpy_alltoall, sendbuf, recvbuf)

    # -- point-to-point
    def Send(self, buf, dest, tag=0):
        b = _Buf(buf, False, "Send buf")
        self._call("zcoll.Comm.Send", self._lib.zcollpy_send, b.addr, b.count,
                   MPI._addressof(b.datatype), int(dest), int(tag), self._handle())

    def Recv(self, buf, source=MPI.ANY_SOURCE, tag=MPI.ANY_TAG, status=None):
        b = _Buf(buf, True, "Recv buf")
        out = (ctypes.c_int * 3)()
        self._call("zcoll.Comm.Recv", self._lib.zcollpy_recv, b.addr, b.count,
                   MPI._addressof(b.datatype), int(source), int(tag), self._handle(),
                   ctypes.byref(out))
        if status is not None:
            status.Set_source(out[0])
            status.Set_tag(out[1])
            status.Set_elements(b.datatype, out[2])
