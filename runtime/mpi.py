"""pmap across processes launched by `mpirun -n P python script.py` (one process per host).

Each process maps its own local batch over its local devices; the outermost pmap axis spans
all processes, so `psum(x, 'i')` sums over P * local_device_count shards, `axis_index('i')`
is the global shard number (process rank major), and `device_count()` counts every device.

mpi4py is imported only when MPI is switched on, by `initialize()` or by running with
`TRANSPILE_MPI=1` in the environment (`pip install transpile[mpi]` brings mpi4py and mpich).

The slots of a collective are swapped with `comm.allgather` (by the one thread that runs the
barrier action in each process), and every shard then reduces the global list in global shard
order, so the result is bit-identical on every shard of every process and equals the
single-process result with the same shard count. MPI calls are serialized by a lock.
"""
import os
import sys
import threading
import traceback

_comm = None
_lock = threading.Lock()


def initialize(comm=None):
    """Use MPI (default: MPI.COMM_WORLD) for the outermost pmap axis. Returns the communicator."""
    global _comm
    if comm is None:
        try:
            from mpi4py import MPI
        except ImportError as exc:
            raise ImportError(
                "transpile_runtime.mpi needs mpi4py: pip install 'transpile[mpi]' (mpi4py and mpich), "
                "then launch with `mpirun -n P python script.py`") from exc
        comm = MPI.COMM_WORLD
    _comm = comm
    return comm


def _auto_initialize():
    if _comm is None and os.environ.get("TRANSPILE_MPI", "") not in ("", "0"):
        initialize()


def communicator():
    _auto_initialize()
    return _comm


def process_count():
    comm = communicator()
    return 1 if comm is None else comm.Get_size()


def process_index():
    comm = communicator()
    return 0 if comm is None else comm.Get_rank()


def active():
    """True when pmap axes should span several processes."""
    return process_count() > 1


def allgather(obj):
    with _lock:
        return _comm.allgather(obj)


def make_group(name, local_size):
    """An AxisGroup for an outermost pmap axis that spans every process."""
    from .collectives import AxisGroup, CollectiveError
    sizes = allgather((name, local_size))
    names = {n for n, _ in sizes}
    if len(names) != 1:
        raise CollectiveError(f"processes disagree on the pmap axis name: {sorted(map(repr, names))}")
    rank = process_index()
    counts = [n for _, n in sizes]
    offset = sum(counts[:rank])

    def exchange(local_items):
        return [item for items in allgather(local_items) for item in items]

    return AxisGroup(name, local_size, offset=offset, size=sum(counts), exchange=exchange)


def abort_all(exc):
    """A shard failed: print it and stop every process (the others would wait forever)."""
    rank = process_index()
    sys.stderr.write(f"transpile pmap: process {rank} failed; aborting all MPI processes\n")
    traceback.print_exception(exc, file=sys.stderr)
    sys.stderr.flush()
    _comm.Abort(1)
