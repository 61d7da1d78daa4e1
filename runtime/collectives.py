"""Collectives over named pmap axes: psum, pmean, pmax, pmin, all_gather, axis_index, axis_size.

How a collective meets its partners
-----------------------------------
Each pmap call makes one `AxisGroup` (shared by its shards). Every shard thread carries a
thread-local stack of `AxisFrame`s, one per enclosing pmap: (group, this shard's index). A
collective over axis 'i' finds the innermost frame named 'i'; its partners are the shards of
that group that share this thread's indices on every axis nested *inside* 'i' (so, in
`pmap(pmap(f, 'j'), 'i')`, `psum(x, 'i')` sums over i separately for each j).

The partners meet at a `Rendezvous`: each writes (signature, leaves) into its own slot of a
buffer, waits at a `threading.Barrier`, then reads every slot and reduces them itself, in shard
order. So results are identical on all shards and do not depend on arrival order; the only
shared mutable state is the slot buffers (two of them, alternating, so a fast shard can write
the next collective's slot while a slow one still reads this one). The barrier's action (run
by one thread while all wait) checks that every shard called the same collective on the same
shapes, and, for an axis spanning MPI processes, exchanges the slots with the other processes
(runtime/mpi.py).

A shard that raises aborts its group: every barrier of the group breaks, the waiting shards
raise `CollectiveAborted`, and pmap re-raises the first real error in the caller.
"""
import os
import threading
from contextlib import contextmanager

import numpy as np

from .pytree import tree_flatten, tree_unflatten


class CollectiveError(RuntimeError):
    """A collective was misused: outside pmap, unknown axis, or shards that disagree."""


class CollectiveAborted(CollectiveError):
    """Raised in a shard waiting at a collective when another shard of its pmap failed."""


def _barrier_timeout():
    text = os.environ.get("TRANSPILE_COLLECTIVE_TIMEOUT")
    return float(text) if text else None


# ---------------------------------------------------------------- axis contexts

class AxisFrame:
    """One shard's place on one mapped axis."""

    __slots__ = ("group", "index", "device")

    def __init__(self, group, index, device=None):
        self.group = group
        self.index = index
        self.device = device

    @property
    def name(self):
        return self.group.name

    @property
    def size(self):
        return self.group.size

    @property
    def global_index(self):
        return self.group.offset + self.index

    def __repr__(self):
        return f"AxisFrame({self.name!r}, {self.global_index}/{self.size})"


_local = threading.local()


def axis_frames():
    """This thread's enclosing pmap axes, outermost first."""
    return getattr(_local, "frames", ())


@contextmanager
def bound_axes(frames):
    """Run a block with `frames` as this thread's axis stack (pmap uses it in each shard)."""
    saved = axis_frames()
    _local.frames = tuple(frames)
    try:
        yield
    finally:
        _local.frames = saved


def _find_axis(axis_name, what):
    frames = axis_frames()
    for depth in range(len(frames) - 1, -1, -1):
        if frames[depth].name == axis_name:
            inner = tuple(f.index for f in frames[depth + 1:])
            return frames[depth], inner
    if not frames:
        raise CollectiveError(
            f"{what}: axis name {axis_name!r} is not bound: {what} was called outside pmap. "
            f"Call it inside a function mapped by pmap(..., axis_name={axis_name!r}).")
    known = ", ".join(repr(f.name) for f in frames)
    raise CollectiveError(
        f"{what}: unbound axis name {axis_name!r}; the enclosing pmap axes are {known}. "
        f"Pass axis_name={axis_name!r} to the pmap that maps this axis.")


# ---------------------------------------------------------------- groups and rendezvous

class AxisGroup:
    """What the shards of one pmap call share: the axis name and size, and the rendezvous.

    `offset`/`size` are global: under MPI the axis spans processes, this process holds shards
    offset .. offset + local_size - 1, and `exchange` (runtime/mpi.py) swaps the slot lists.
    """

    def __init__(self, name, local_size, offset=0, size=None, exchange=None):
        self.name = name
        self.local_size = local_size
        self.offset = offset
        self.size = local_size if size is None else size
        self.exchange = exchange
        self.devices = None             # the shards' devices, set by pmap (GPU: NCCL or not)
        self._lock = threading.Lock()
        self._rendezvous = {}
        self._aborted = False

    def rendezvous(self, inner):
        with self._lock:
            r = self._rendezvous.get(inner)
            if r is None:
                if self.exchange is not None and inner:
                    raise CollectiveError(
                        f"a collective over the multi-process axis {self.name!r} from inside a "
                        "nested pmap is not supported; reduce over the inner axis first")
                r = Rendezvous(self.local_size, self.exchange)
                self._rendezvous[inner] = r
                if self._aborted:
                    r.abort()
            return r

    def abort(self):
        with self._lock:
            self._aborted = True
            pending = list(self._rendezvous.values())
        for r in pending:
            r.abort()

    def failure(self):
        """The first mismatch found by any rendezvous of this group, or None."""
        with self._lock:
            for r in self._rendezvous.values():
                if r.failure is not None:
                    return r.failure
        return None


class Rendezvous:
    """A reusable meeting point for `size` threads that swap one item each."""

    def __init__(self, size, exchange=None):
        self._slots = ([None] * size, [None] * size)
        self._gathered = [None, None]
        self._round = 0  # changed only by the barrier action, while every thread waits
        self._exchange = exchange
        self._barrier = threading.Barrier(size, action=self._combine, timeout=_barrier_timeout())
        self.failure = None

    def swap(self, index, item):
        """Give this shard's item; get every shard's item, in shard order."""
        parity = self._round % 2
        self._slots[parity][index] = item
        try:
            self._barrier.wait()
        except threading.BrokenBarrierError:
            if self.failure is not None:
                raise self.failure from None
            raise CollectiveAborted(
                "collective aborted: another shard of this pmap raised an error "
                "(or TRANSPILE_COLLECTIVE_TIMEOUT expired)") from None
        return self._gathered[parity]

    def abort(self):
        self._barrier.abort()

    def _combine(self):
        parity = self._round % 2
        try:
            items = list(self._slots[parity])
            if self._exchange is not None:
                items = self._exchange(items)
            _check_same_call(items)
        except BaseException as exc:
            self.failure = exc if isinstance(exc, CollectiveError) else CollectiveError(
                f"collective failed while combining shards: {exc!r}")
            raise
        self._gathered[parity] = items
        self._slots[parity][:] = [None] * len(self._slots[parity])
        self._round += 1


def _check_same_call(items):
    first = items[0][0]
    for shard, (signature, _) in enumerate(items):
        if signature != first:
            raise CollectiveError(
                f"shards disagree at a collective: shard 0 called {_show(first)} but shard "
                f"{shard} called {_show(signature)}. Every shard must call the same "
                "collectives, in the same order, on values of the same shapes and dtypes.")


def _show(signature):
    op, axis_name, treedef, leaves = signature
    if op == "<return>":
        return "nothing more (it returned)"
    kinds = ", ".join(f"{dtype}{list(shape)}" for shape, dtype in leaves)
    return f"{op}(<{kinds}> with structure {treedef}, {axis_name!r})"


def _signature(op, axis_name, treedef, leaves):
    described = tuple((tuple(np.shape(x)), str(getattr(x, "dtype", type(x).__name__)))
                      for x in leaves)
    return (op, axis_name, treedef, described)


def _gather_leaves(op, tree, axis_name):
    """Meet the partners on `axis_name`; return (per-shard leaf lists, treedef, frame)."""
    frame, inner = _find_axis(axis_name, op)
    leaves, treedef = tree_flatten(tree)
    rendezvous = frame.group.rendezvous(inner)
    sync = getattr(frame.device, "sync", None)
    if sync is not None:
        sync()  # GPU shard: our operands are complete before a partner's stream reads them
    items = rendezvous.swap(frame.index, (_signature(op, axis_name, treedef, leaves), leaves))
    per_shard = [shard_leaves for _, shard_leaves in items]
    if frame.device is not None:
        per_shard = [[frame.device.put(x) for x in ls] for ls in per_shard]
    return per_shard, treedef, frame


def _release(op, frame, axis_name):
    """GPU shards: wait until our stream has read the partners' operands, then meet them once
    more, so no shard frees (and its stream reuses) an operand another stream still reads."""
    sync = getattr(frame.device, "sync", None)
    if sync is None:
        return
    sync()
    _, inner = _find_axis(axis_name, op)
    frame.group.rendezvous(inner).swap(frame.index, ((op + "<done>", axis_name, None, ()), ()))


def _nccl_reduce(op, x, name):
    """psum/pmax/pmin/pmean over GPUs through NCCL, or None where it does not apply."""
    frame, inner = _find_axis(name, op)
    devices = getattr(frame.group, "devices", None)
    if inner or frame.group.exchange is not None or not devices:
        return None
    from .gpu_collectives import nccl_clique
    clique = nccl_clique(devices)
    if clique is None:
        return None
    leaves, treedef = tree_flatten(x)
    _gather_leaves(op, x, name)      # same call on every shard (signature check), no data use
    return tree_unflatten(treedef, [_like(clique.all_reduce(frame.index, v, op), v)
                                    for v in leaves])


def finish_shard(frame):
    """Called by pmap when a shard returns: meets the partners once more, so a shard that is
    still waiting in a collective no other shard will call gets a clear error, not a hang."""
    rendezvous = frame.group.rendezvous(())
    rendezvous.swap(frame.index, (("<return>", frame.name, None, ()), ()))


# ---------------------------------------------------------------- the collectives

def _names(axis_name):
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _reduce(op, combine, x, axis_name):
    for name in _names(axis_name):
        over_nccl = _nccl_reduce(op, x, name)
        if over_nccl is not None:
            x = over_nccl
            continue
        per_shard, treedef, frame = _gather_leaves(op, x, name)
        reduced = []
        for position in range(treedef.num_leaves):
            acc = per_shard[0][position]
            for shard_leaves in per_shard[1:]:
                acc = combine(acc, shard_leaves[position])
            reduced.append(_like(acc, per_shard[0][position]))
        _release(op, frame, name)
        x = tree_unflatten(treedef, reduced)
    return x


def _like(result, example):
    """Keep 0-d results as NumPy scalars/arrays of the input's dtype (float32 stays float32)."""
    dtype = getattr(example, "dtype", None)
    if dtype is not None and getattr(result, "dtype", dtype) != dtype:
        return _array_module(result).asarray(result).astype(dtype)
    return result


def psum(x, axis_name):
    """Sum of x (a pytree) over the shards of `axis_name` (a name or a tuple of names)."""
    return _reduce("psum", np.add, x, axis_name)


def pmax(x, axis_name):
    return _reduce("pmax", np.maximum, x, axis_name)


def pmin(x, axis_name):
    return _reduce("pmin", np.minimum, x, axis_name)


def pmean(x, axis_name):
    n = axis_size(axis_name)
    total = _reduce("pmean", np.add, x, axis_name)
    leaves, treedef = tree_flatten(total)
    return tree_unflatten(treedef, [_mean_leaf(t, n) for t in leaves])


def _mean_leaf(total, n):
    dtype = getattr(total, "dtype", None)
    if dtype is not None and np.issubdtype(dtype, np.inexact):
        return (total / n).astype(dtype)
    return total / n


def all_gather(x, axis_name, *, axis=0, tiled=False):
    """Every shard's x stacked along a new axis `axis` (concatenated along it if tiled)."""
    names = _names(axis_name)
    for name in reversed(names):
        per_shard, treedef, frame = _gather_leaves("all_gather", x, name)
        joined = []
        for position in range(treedef.num_leaves):
            parts = [np.asarray(ls[position]) if np.isscalar(ls[position]) else ls[position]
                     for ls in per_shard]
            joined.append(_join(parts, axis, stack=True))
        _release("all_gather", frame, name)
        x = tree_unflatten(treedef, joined)
    if len(names) > 1:  # (n_i, n_j, ...) -> (n_i * n_j, ...), as with one combined axis
        x = _map(lambda v: _merge_axes(v, axis, len(names)), x)
    if tiled:
        x = _map(lambda v: _merge_axes(v, axis, 2), x)
    return x


def _join(parts, axis, stack):
    module = _array_module(parts[0])
    return module.stack(parts, axis=axis) if stack else module.concatenate(parts, axis=axis)


def _merge_axes(v, axis, count):
    axis = axis % (v.ndim - count + 1)
    shape = v.shape[:axis] + (-1,) + v.shape[axis + count:]
    return v.reshape(shape)


def _map(fn, tree):
    leaves, treedef = tree_flatten(tree)
    return tree_unflatten(treedef, [fn(v) for v in leaves])


def _array_module(x):
    if type(x).__module__.startswith("cupy"):
        import cupy
        return cupy
    return np


def axis_index(axis_name):
    """This shard's position along `axis_name` (row-major over a tuple of names)."""
    index = 0
    for name in _names(axis_name):
        frame, _ = _find_axis(name, "axis_index")
        index = index * frame.size + frame.global_index
    return np.int32(index)


def axis_size(axis_name):
    """The number of shards along `axis_name` (product over a tuple of names)."""
    size = 1
    for name in _names(axis_name):
        frame, _ = _find_axis(name, "axis_size")
        size *= frame.size
    return size


COLLECTIVES = {
    "psum": psum, "pmean": pmean, "pmax": pmax, "pmin": pmin,
    "all_gather": all_gather, "axis_index": axis_index, "axis_size": axis_size,
}


# ---------------------------------------------------------------- adjoint helpers

def extremum_share(x, ans, axis_name):
    """d pmax(x)/dx on this shard: 1/k where this shard holds one of k tied extrema, else 0."""
    hit = (np.asarray(x) == np.asarray(ans)).astype(np.result_type(x, ans))
    return hit / psum(hit, axis_name)


def all_gather_vjp(ct, axis_name, axis=0, tiled=False):
    """Cotangent of x in all_gather(x, axis_name): every shard's cotangent for this shard's
    slot, summed over shards."""
    total = psum(ct, axis_name)
    index = axis_index(axis_name)
    if tiled:
        n = axis_size(axis_name)
        size = total.shape[axis] // n
        sl = [slice(None)] * total.ndim
        sl[axis] = slice(index * size, (index + 1) * size)
        return total[tuple(sl)]
    return np.take(total, index, axis=axis)
