"""symmem for PyTorch: symmetric tensors, collectives on tensors, one-sided operations.

    import symmem, torch
    g = symmem.init()                                   # under torchrun, or after dist.init_process_group
    x = symmem.empty(4096, dtype=torch.bfloat16)        # on the symmetric heap of every rank
    symmem.all_reduce(x)                                # on the current stream; graph-capturable
    tp = symmem.new_group([0, 1])                       # a sub-team (every rank calls it)
    symmem.synchronize()                                # waits; an expired wait raises symmem.Timeout

`import symmem` needs neither a GPU nor torch; calls that need them raise symmem.Unsupported
with what is missing. Errors of the C++ library arrive as symmem.Error subclasses: Timeout,
InvalidArgument, PeerLost, Unsupported, CudaError.
"""
import os as _os

try:
    from . import _C
    _import_error = None
except ImportError as e:  # the extension was not built for this interpreter
    _C = None
    _import_error = e

if _C is not None:
    Error = _C.Error
    Timeout = _C.Timeout
    InvalidArgument = _C.InvalidArgument
    PeerLost = _C.PeerLost
    Unsupported = _C.Unsupported
    CudaError = _C.CudaError
else:
    class Error(RuntimeError):
        pass

    class Timeout(Error):
        pass

    class InvalidArgument(Error):
        pass

    class PeerLost(Error):
        pass

    class Unsupported(Error):
        pass

    class CudaError(Error):
        pass

__version__ = "0.1.0"

_world = None
_groups = {}  # name -> Group


def _lib():
    if _C is None:
        raise Unsupported(f"symmem's compiled extension is missing ({_import_error}); build it with "
                          "cmake -DSYMMEM_BUILD_PYTHON=ON, or pip install .")
    return _C


def _torch():
    try:
        import torch
    except ImportError as e:
        raise Unsupported("this symmem call needs PyTorch, which is not installed") from e
    return torch


_raw_stream = None


def _current_stream():
    """The current CUDA stream's handle, through torch's raw accessor where it has one (no Stream
    object: a few microseconds less a call)."""
    global _raw_stream
    if _raw_stream is None:
        torch = _torch()
        C = torch._C
        if hasattr(C, "_cuda_getCurrentRawStream") and hasattr(C, "_cuda_getDevice"):
            _raw_stream = lambda: C._cuda_getCurrentRawStream(C._cuda_getDevice())  # noqa: E731
        else:
            _raw_stream = lambda: torch.cuda.current_stream().cuda_stream  # noqa: E731
    return _raw_stream()


class Group:
    """A communicator over some ranks of one host: collectives and a symmetric heap of its own.

    Calls on a group are collective: every member makes them in the same order with the same
    arguments (SYMMEM_DEBUG_CHECKS=1 verifies it)."""

    def __init__(self, comm, name, parent=None):
        self._comm = comm
        self.name = name
        self._parent = parent  # keeps the world communicator alive under a sub-team
        _groups[name] = self

    @property
    def rank(self):
        return self._comm.rank

    @property
    def size(self):
        return self._comm.size

    @property
    def global_ranks(self):
        return list(self._comm.global_ranks)

    @property
    def has_nccl(self):
        return self._comm.has_nccl

    def set_timeout_ms(self, ms):
        """Bound of every device wait of this process (and of NCCL calls, through a watchdog)."""
        self._comm.set_timeout_ms(ms)

    @property
    def timeout_ms(self):
        """The bound of every device wait of this process, in ms (set_timeout_ms, SYMMEM_TIMEOUT_MS)."""
        return world()._ctx.timeout_ms

    @property
    def failure(self):
        """"" while the group is usable; else why it failed (the Timeout its call raised, or abort()):
        a failed group refuses every call, and each member must abort it."""
        return self._comm.failure()

    def abort(self):
        """Marks the group failed and releases it without waiting for peers (never hangs)."""
        self._comm.abort()

    def mapped_bytes(self):
        """Bytes of GPU memory this group's heap has mapped per rank."""
        return self._comm.mapped_bytes()

    def __repr__(self):
        return f"symmem.Group({self.name!r}, rank {self.rank} of {self.size})"


class _TorchStore:
    """torch.distributed's Store as the C++ bootstrap sees it: set, get with a bound, and remove."""

    def __init__(self, store):
        self._store = store

    def set(self, key, value):
        self._store.set(key, value)

    def get(self, key, timeout_ms):
        import datetime
        try:
            self._store.wait([key], datetime.timedelta(milliseconds=timeout_ms))
        except Exception:  # DistStoreError / RuntimeError on timeout
            return None
        return self._store.get(key)

    def remove(self, key):
        """A key every rank has read (the bootstrap says when): deleted where the store can."""
        try:
            self._store.delete_key(key)
        except Exception:  # a store without deletion keeps it
            pass


def init(*, timeout_ms=0):
    """Joins the job once per process and returns the world group.

    After torch.distributed.init_process_group: through its store and ranks (no second rendezvous
    port), on torch's current device. Otherwise from the environment torchrun, mpirun or symmem-run
    set (under torchrun through its agent's store), on GPU LOCAL_RANK / SYMMEM_RANKS_PER_GPU (or
    SYMMEM_DEVICE), made torch's current device. timeout_ms: the bound of every device wait
    (default SYMMEM_TIMEOUT_MS's; Group.set_timeout_ms changes it later); host rendezvous are bounded
    by SYMMEM_BOOTSTRAP_TIMEOUT_MS."""
    global _world
    if _world is not None:
        return _world
    C = _lib()
    try:
        import torch
        import torch.distributed as dist
    except ImportError:
        torch = dist = None

    def join(store, rank, world, local_rank, local_world, device):
        # A fresh key space for each join of this job: every rank adds 1 once.
        generation = (store.add("symmem/joins", 1) - 1) // world
        return C.Context.from_store(_TorchStore(store), rank, world, local_rank, local_world, device, 0,
                                    f"symmem/{generation}/")

    if torch is not None and dist.is_available() and dist.is_initialized():
        rank, world = dist.get_rank(), dist.get_world_size()
        ctx = join(dist.distributed_c10d._get_default_store(), rank, world, int(_os.environ.get("LOCAL_RANK", rank)),
                   int(_os.environ.get("LOCAL_WORLD_SIZE", world)), torch.cuda.current_device() if torch.cuda.is_available() else -1)
    else:
        env = C.bootstrap_from_env()
        if env["agent_port"] and torch is not None and dist.is_available():
            # Under torchrun the agent serves torch's store on MASTER_PORT: join it as torch's
            # workers do (symmem's own rendezvous would need a port of its own).
            import datetime
            store = dist.TCPStore(env["master_addr"], env["agent_port"], env["world_size"], False,
                                  datetime.timedelta(milliseconds=env["timeout_ms"]))
            ctx = join(store, env["rank"], env["world_size"], env["local_rank"], env["local_world_size"], env["device"])
        else:
            ctx = C.Context.from_env()
        if torch is not None and torch.cuda.is_available():
            torch.cuda.set_device(ctx.device)
    if timeout_ms:
        ctx.set_device_timeout_ms(timeout_ms)
    _world = Group(C.Communicator(ctx), "symmem_world")
    _world._ctx = ctx
    return _world


def world():
    """The world group (init() first)."""
    if _world is None:
        raise InvalidArgument("symmem.init() has not been called in this process")
    return _world


def _group(group):
    if group is None:
        return world()
    if isinstance(group, str):
        if group not in _groups:
            raise InvalidArgument(f"no symmem group named {group!r}")
        return _groups[group]
    if isinstance(group, Group):
        return group
    raise InvalidArgument(f"group={group!r}: pass a symmem.Group (from init or new_group), its name, or None")


_NOT_PASSED = object()


def new_group(ranks=None, *, torch_group=_NOT_PASSED, mesh=None, mesh_dim=None):
    """A sub-team, collective over the world (every rank calls it, as torch.distributed.new_group).

    ranks: global ranks of one group, in the order of its ranks (others get None back);
    torch_group: each rank's torch.distributed group (ranks in different groups form different
    teams, in the order torch gives their ranks; a rank in none passes None, as
    new_subgroups_by_enumeration returns it, or GroupMember.NON_GROUP_MEMBER, and gets None back);
    mesh, mesh_dim: a DeviceMesh dimension (by name or index; of a 1-D mesh, mesh_dim may be left
    out). Pass one of the three. Each team gets its own heap, workspace and NCCL communicator."""
    w = world()
    me = w.global_ranks[w.rank]
    given = [k for k, v in (("ranks", ranks is not None), ("torch_group", torch_group is not _NOT_PASSED),
                            ("mesh", mesh is not None)) if v]
    if len(given) > 1:
        raise InvalidArgument(f"new_group: {' and '.join(given)} were both passed; pass one of ranks, torch_group or mesh")
    if mesh_dim is not None and mesh is None:
        raise InvalidArgument("new_group(mesh_dim=...) needs mesh (the DeviceMesh whose dimension it names)")
    if mesh is not None:
        if mesh_dim is None and getattr(mesh, "ndim", None) == 1:
            mesh_dim = 0
        if mesh_dim is None:
            raise InvalidArgument(f"new_group(mesh=...) of a mesh of {getattr(mesh, 'ndim', '?')} dimensions needs mesh_dim "
                                  "(a dimension's name or index)")
        torch_group = mesh.get_group(mesh_dim)
    members = None  # (from torch: the group's ranks, in its order)
    if torch_group is not _NOT_PASSED:
        import torch.distributed as dist
        if torch_group is None or torch_group == dist.GroupMember.NON_GROUP_MEMBER:
            color, key = -1, 0
        else:
            members = dist.get_process_group_ranks(torch_group)
            color, key = min(members), members.index(me)
    else:
        if ranks is None:
            raise InvalidArgument("new_group needs ranks, torch_group or mesh")
        ranks = [int(r) for r in ranks]
        if len(set(ranks)) != len(ranks) or any(r < 0 or r >= w.size for r in ranks):
            raise InvalidArgument(f"new_group(ranks={ranks}): ranks must be distinct, in [0, {w.size})")
        # Every rank must pass the same list (else ranks would form groups they do not expect).
        w._comm.require_same("ranks=" + ",".join(map(str, ranks)), "symmem.new_group",
                             "; pass the same ranks on every rank (the group's members, in rank order of the new group)")
        color, key = (0, ranks.index(me)) if me in ranks else (-1, 0)
    comm = w._comm.split(color, key)
    names = sorted(_groups)
    name = f"symmem_g{len(names)}_c{color}"
    if comm is None:
        return None
    if members is not None:
        # Members that passed different torch groups with the same first rank met in one team: an
        # error on each of them, not a team that is none of their groups.
        comm.require_same("members=" + ",".join(map(str, members)), "symmem.new_group(torch_group=...)",
                          "; every member of a torch group passes that group (the groups disjoint)")
    return Group(comm, name, parent=w)


def finalize():
    """Leaves symmem (collective over the world): waits for this device's work and for every
    rank, then releases every group's memory and NCCL communicator. Symmetric tensors must not be
    used afterwards. Called at exit without the wait for peers (they may be gone)."""
    global _world
    if _world is None:
        return
    try:
        import torch
        torch.cuda.synchronize()
    except Exception:
        pass
    _world._comm.barrier_host("symmem.finalize")
    _release_all()


def _release_all():
    global _world
    try:
        from . import overlap
        overlap._tp.clear()  # (their buffers go with the heaps below)
        overlap._retired.clear()
    except Exception:
        pass
    for g in reversed(list(_groups.values())):
        try:
            g._comm.abort()  # local: NCCL aborted, heap released without talking to peers
        except Exception:
            pass
    _groups.clear()
    _world = None


def _at_exit():
    # Before the interpreter tears modules down (destructors must not call into Python then).
    if _world is not None:
        _release_all()


import atexit as _atexit  # noqa: E402
_atexit.register(_at_exit)


def synchronize(stream=None):
    """Waits for `stream`'s work (default: torch's current stream), then raises what symmem's device
    code reported since the last clear_error(): symmem.Timeout for a wait that expired (naming rank,
    peer and what it waited for: a peer that skipped a call, hung or exited) or for an abort,
    symmem.InvalidArgument for a bad argument found on the GPU. torch.cuda.synchronize() waits
    the same but raises nothing, and an expired wait leaves its outputs wrong: call this where you
    read results (or symmem.check() after torch's wait). Otherwise the next symmem call raises."""
    from .tensors import _stream
    ctx = world()._ctx
    if _torch().cuda.is_current_stream_capturing():  # (a wait there would end the capture)
        raise InvalidArgument("symmem.synchronize: called while a CUDA graph is being captured, where nothing may "
                              "wait for the GPU; call it after the graph's replay (symmem.check() reads what was "
                              "reported so far without waiting)")
    ctx.synchronize(_stream(stream), "symmem.synchronize")


def check():
    """Raises what symmem's device code has reported so far, as synchronize() does, without waiting."""
    world()._ctx.check("symmem.check")


def clear_error():
    """After a symmem.Timeout: clears this process's error record, so that groups whose calls did
    not time out may go on (until then every call of any group raises it again). Abort the group
    whose call timed out first (Group.abort(), which also ends this process's symmem waits still
    running): its state is undefined, and every member must abort it."""
    world()._ctx.reset_error()


def env_vars():
    """Every environment variable symmem reads: (name, default, meaning)."""
    return list(_lib().env_vars())


from .tensors import empty, peer_tensor, signal_pad, pointer_tables, put, get, put_signal, signal, wait, barrier, free  # noqa: E402,F401
from .ops import all_reduce, reduce_scatter, all_gather, broadcast, all_to_all, all_to_all_v, reduce, gather, scatter  # noqa: E402,F401
from . import moe  # noqa: E402,F401
from .overlap import all_gather_matmul, matmul_reduce_scatter  # noqa: E402,F401
