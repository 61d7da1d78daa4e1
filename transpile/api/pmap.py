"""pmap: run one function on shards of the mapped axis, one shard per device, in parallel.

    @pmap                                   # or pmap(f, axis_name='i', in_axes=(0, None))
    def step(x): ...

The call splits every mapped input along its in_axis, runs shard k on device k (its worker
thread; see runtime/devices.py), and stacks the shard results along out_axes. Inside the
shards, collectives (psum, pmean, pmax, pmin, all_gather, axis_index) over `axis_name` meet
at a barrier (runtime/collectives.py). Inputs and outputs are pytrees; in_axes/out_axes are
pytree prefixes of them (an int or None applies to a whole subtree).

What a shard runs: `shard_compiler(fun, static_argnums=..., backend=...)`, called once per
pmapped function (default: `fun` itself, plain Python/NumPy). `set_shard_compiler(jit_like)`
plugs a jit in for every pmap; `pmap(f, _compile=jit_like)` for one.
"""
import functools
import operator
import threading
from concurrent.futures import Future

import numpy as np

from transpile.core.tracebacks import api_boundary
from transpile_runtime import devices as _devices
from transpile_runtime import mpi as _mpi
from transpile_runtime.collectives import (AxisFrame, AxisGroup, CollectiveAborted, axis_frames,
                                 bound_axes, finish_shard)
from transpile_runtime.collectives import (psum, pmean, pmax, pmin, all_gather, axis_index,  # noqa: F401
                                 axis_size)
from transpile_runtime.devices import device_count, devices, local_device_count  # noqa: F401
from transpile.pytree import tree_flatten, tree_unflatten

__all__ = ["pmap", "set_shard_compiler", "psum", "pmean", "pmax", "pmin", "all_gather",
           "axis_index", "axis_size", "device_count", "devices", "local_device_count"]


def _run_python(fun, static_argnums=(), backend=None):
    return fun


_shard_compiler = _run_python


def set_shard_compiler(compiler):
    """Make every pmap run `compiler(fun, static_argnums=tuple, backend=str_or_None)` per shard.

    The callable it returns is called on each shard with the full positional arguments (the
    static ones in place) and must be thread-safe: all shards call it at once, so a per-
    signature compile cache needs a lock. Pass None to go back to plain Python.
    """
    global _shard_compiler
    _shard_compiler = compiler or _run_python


def pmap(fun=None, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(),
         devices=None, backend=None, _compile=None):
    """Map `fun` over the leading (in_axes) axis of its inputs, one shard per device."""
    options = dict(axis_name=axis_name, in_axes=in_axes, out_axes=out_axes,
                   static_broadcasted_argnums=static_broadcasted_argnums, devices=devices,
                   backend=backend, _compile=_compile)
    if fun is None:
        return lambda f: pmap(f, **options)
    if not callable(fun):
        raise TypeError(f"pmap: expected a function, got {type(fun).__name__}; "
                        "use @pmap or pmap(f, axis_name='i')")
    return Pmapped(fun, **options)


class Pmapped:
    """The function pmap returns. `__wrapped__` is the user's function."""

    def __init__(self, fun, axis_name, in_axes, out_axes, static_broadcasted_argnums,
                 devices, backend, _compile):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.axis_name = axis_name
        self.in_axes = in_axes
        self.out_axes = out_axes
        if isinstance(static_broadcasted_argnums, int):
            static_broadcasted_argnums = (static_broadcasted_argnums,)
        self.static_argnums = tuple(static_broadcasted_argnums)
        self.devices = list(devices) if devices is not None else None
        self.backend = backend
        self._compile = _compile
        self._compiled = None  # (compiler, shard callable)
        self._lock = threading.Lock()

    def __repr__(self):
        return f"<pmap of {getattr(self.fun, '__qualname__', self.fun)} axis_name={self.axis_name!r}>"

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)

    def shard_function(self):
        """What each shard calls (the user's function, or what the shard compiler made)."""
        compiler = self._compile or _shard_compiler
        with self._lock:
            if self._compiled is None or self._compiled[0] is not compiler:
                made = compiler(self.fun, static_argnums=self.static_argnums,
                                backend=self.backend)
                self._compiled = (compiler, made)
            return self._compiled[1]

    @api_boundary     # tracebacks without transpile\'s frames (core/tracebacks.py)
    def __call__(self, *args, **kwargs):
        static = _normalize_argnums(self.static_argnums, len(args))
        split = _split_inputs(args, kwargs, static, self.in_axes)
        n = split.size
        outer = axis_frames()
        targets = self._pick_devices(n, outer)
        group = self._make_group(n, outer)
        group.devices = targets         # GPU collectives pick NCCL from these
        shard_fn = self.shard_function()

        def run_shard(k):
            device = targets[k]
            frame = AxisFrame(group, k, device)
            with bound_axes(outer + (frame,)):
                try:
                    shard_args, shard_kwargs = split.shard(k, device)
                    out = shard_fn(*shard_args, **shard_kwargs)
                    finish_shard(frame)
                    return out
                except BaseException:
                    group.abort()
                    raise

        nested = bool(outer) or _devices.current_device() is not None
        futures = _run_nested(run_shard, n) if nested else _dispatch(run_shard, targets)
        try:
            results = _collect(futures, targets, group.offset)
        except BaseException as exc:
            # A mismatch found while combining is seen by every process alike; any other
            # error is local, and the other processes would wait for us forever.
            if group.exchange is not None and exc is not group.failure():
                _mpi.abort_all(exc)
            raise
        return _stack_outputs(results, self.out_axes, targets)

    def _pick_devices(self, n, outer):
        available = self.devices if self.devices is not None else _devices.devices(self.backend)
        enclosing = 1
        for frame in outer:
            enclosing *= frame.group.local_size
        if n * enclosing > len(available):
            where = f"{len(available)} {self.backend or _devices.default_backend()} devices"
            if outer:
                raise ValueError(
                    f"pmap: nested pmap needs {enclosing} x {n} = {enclosing * n} devices but "
                    f"only {where} are available. Shrink the mapped axes, or vmap the inner "
                    "one instead.")
            raise ValueError(
                f"pmap: the mapped axis has size {n} but only {where} are available in this "
                f"process. Use at most {len(available)} shards (reshape to ({len(available)}, "
                f"{-(-n // len(available))}, ...) and vmap or loop inside), or raise "
                "TRANSPILE_CPU_DEVICES.")
        if outer:  # inner shards get their own device slice of the enclosing shard's
            first = 0
            for frame in outer:
                first = first * frame.group.local_size + frame.index
            return available[first * n:(first + 1) * n]
        return available[:n]

    def _make_group(self, n, outer):
        if not outer and _mpi.active():
            return _mpi.make_group(self.axis_name, n)
        return AxisGroup(self.axis_name, n)


# ---------------------------------------------------------------- splitting the inputs

def _normalize_argnums(argnums, nargs):
    out = set()
    for a in argnums:
        k = operator.index(a)
        if not -nargs <= k < nargs:
            raise ValueError(f"pmap: static_broadcasted_argnums={tuple(argnums)} names argument "
                             f"{k}, but the call has {nargs} positional arguments")
        out.add(k % nargs)
    return out


class _SplitInputs:
    """Positional and keyword inputs, flattened, with each leaf's mapped axis (or None)."""

    def __init__(self, args, static, kwargs):
        self.args = args
        self.static = static
        self.kwargs = kwargs
        self.pieces = []  # (leaves, axes, treedef) per dynamic arg, then one for kwargs
        self.size = None

    def add(self, leaves, axes, treedef, where):
        for leaf, axis in zip(leaves, axes):
            if axis is None:
                continue
            shape = np.shape(leaf)
            if not -len(shape) <= axis < len(shape):
                raise ValueError(f"pmap: in_axes={axis} for {where}, but it has shape {shape}")
            length = shape[axis]
            if self.size is None:
                self.size = length
            elif length != self.size:
                raise ValueError(f"pmap: mapped axes differ in size: {self.size} elsewhere, "
                                 f"{length} for {where} (shape {shape}, in_axes={axis})")
        self.pieces.append((leaves, axes, treedef))

    def shard(self, k, device):
        built = [tree_unflatten(treedef, [_take(leaf, axis, k, device)
                                          for leaf, axis in zip(leaves, axes)])
                 for leaves, axes, treedef in self.pieces]
        kwargs = built.pop() if self.kwargs is not None else {}
        dynamic = iter(built)
        args = [self.args[i] if i in self.static else next(dynamic) for i in range(len(self.args))]
        return args, kwargs


def _take(leaf, axis, k, device):
    if axis is None:
        return leaf
    index = (slice(None),) * (axis % np.ndim(leaf)) + (k,)
    return device.put(leaf[index])


def _split_inputs(args, kwargs, static, in_axes):
    dynamic = [i for i in range(len(args)) if i not in static]
    if isinstance(in_axes, (tuple, list)):
        if len(in_axes) == len(args):
            axes_per_arg = [in_axes[i] for i in dynamic]
        elif len(in_axes) == len(dynamic):
            axes_per_arg = list(in_axes)
        else:
            raise ValueError(f"pmap: in_axes has {len(in_axes)} entries but the call has "
                             f"{len(args)} positional arguments ({len(dynamic)} not static)")
    else:
        axes_per_arg = [in_axes] * len(dynamic)
    split = _SplitInputs(args, static, kwargs if kwargs else None)
    for i, prefix in zip(dynamic, axes_per_arg):
        leaves, treedef = tree_flatten(args[i])
        axes = _prefix_axes(prefix, args[i], f"in_axes of argument {i}")
        split.add(leaves, axes, treedef, f"argument {i}")
    if kwargs:
        leaves, treedef = tree_flatten(kwargs)
        split.add(leaves, [0] * len(leaves), treedef, "keyword arguments")
    if split.size is None:
        raise ValueError("pmap: no input is mapped (every in_axes is None); pmap needs at least "
                         "one array with a mapped axis to know how many shards to run")
    return split


def _prefix_axes(prefix, tree, what):
    """One axis (int or None) per leaf of `tree`, from a pytree prefix of it."""
    if prefix is None or _is_int(prefix):
        return [None if prefix is None else operator.index(prefix)] * len(tree_flatten(tree)[0])
    if isinstance(prefix, (tuple, list)) and isinstance(tree, (tuple, list)) \
            and len(prefix) == len(tree):
        return [a for p, t in zip(prefix, tree) for a in _prefix_axes(p, t, what)]
    if isinstance(prefix, dict) and isinstance(tree, dict) and set(prefix) == set(tree):
        return [a for k in sorted(tree) for a in _prefix_axes(prefix[k], tree[k], what)]
    raise ValueError(f"pmap: {what} is {prefix!r}, which does not match the structure "
                     f"{tree_flatten(tree)[1]}; use an int/None or a matching tuple/list/dict")


def _is_int(x):
    return not isinstance(x, bool) and isinstance(x, (int, np.integer))


# ---------------------------------------------------------------- running the shards

_dispatch_lock = threading.Lock()


def _dispatch(run_shard, targets):
    # Enqueue all shards of one call atomically, so two threads calling pmap at once queue
    # their shards in the same order on every device (no cross-call barrier deadlock).
    with _dispatch_lock:
        return [device.submit(run_shard, k) for k, device in enumerate(targets)]


def _run_nested(run_shard, n):
    """A pmap inside a shard: the device workers are busy, so each shard gets a fresh thread
    (which inherits nothing thread-local; run_shard binds the axis stack itself)."""
    futures = [Future() for _ in range(n)]

    def body(k):
        try:
            futures[k].set_result(run_shard(k))
        except BaseException as exc:
            futures[k].set_exception(exc)

    threads = [threading.Thread(target=body, args=(k,), name=f"transpile-pmap-shard-{k}")
               for k in range(n)]
    for t in threads:
        t.start()
    return futures


def _collect(futures, targets, offset=0):
    """Every shard's result, in shard order; or raise the first real error (not an abort)."""
    errors = []
    results = []
    for k, future in enumerate(futures):
        exc = future.exception()  # waits; aborted partners finish quickly
        if exc is not None:
            errors.append((k, exc))
        else:
            results.append(future.result())
    if errors:
        primary = [(k, e) for k, e in errors if not isinstance(e, CollectiveAborted)]
        k, exc = (primary or errors)[0]
        if hasattr(exc, "add_note"):
            exc.add_note(f"(raised in pmap shard {offset + k} on device {targets[k]})")
        raise exc
    return results


# ---------------------------------------------------------------- stacking the outputs

def _stack_outputs(results, out_axes, targets):
    flat = [tree_flatten(r) for r in results]
    treedef = flat[0][1]
    for k, (_, other) in enumerate(flat):
        if other != treedef:
            raise ValueError(f"pmap: shards returned different structures: shard 0 {treedef}, "
                             f"shard {k} {other}")
    axes = _prefix_axes(out_axes, results[0], "out_axes")
    leaves = []
    for position, axis in enumerate(axes):
        parts = [leaves_k[position] for leaves_k, _ in flat]
        leaves.append(parts[0] if axis is None else _stack(parts, axis, targets))
    return tree_unflatten(treedef, leaves)


def _stack(parts, axis, targets):
    if targets and getattr(targets[0], "platform", "cpu") == "gpu":
        import cupy   # (lazy: the [cuda] extra, GPU backends only)
        with cupy.cuda.Device(targets[0].gpu):
            return cupy.stack([targets[0].put(p) for p in parts], axis=axis)
    return np.stack(parts, axis=axis)
