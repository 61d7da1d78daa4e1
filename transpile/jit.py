"""jit: compile a function's generated code for its argument signature (Numba on the CPU).

    @jit                                  # or jit(f, static_argnames=("normal",))
    def f(x, normal=True): ...

A call looks up the *abstract signature* of its arguments (pytree structure, shapes, dtypes,
values of static arguments). A new signature builds the function's core Python (through any
inner transforms: jit(grad(f)) compiles the gradient), specializes it to those shapes
(`x.ndim` is a constant; runtime helpers such as unbroadcast disappear), fuses elementwise
chains and reductions into loops, lowers that to a Numba module and compiles it. The module
is a real file (see `show(jit(f), *args)`), and Numba's cache of it is kept on disk, checked
against a manifest (runtime/diskcache.py), so another process loads it instead of compiling.

If Numba refuses the lowered code, the call runs the generated NumPy code instead and warns
once (TranspileWarning) naming the construct: the numbers are the same.

jit is a Transform: grad(jit(f)) differentiates f's code, jit(grad(f)) compiles the gradient.

Here: `jit` / `Jit` (the compile cache by abstract signature, building and planning a
specialization) and pmap's per-shard compiler. A specialization's `Plan` and `Compiled` are
in jit_specialization.py, the backends' compile functions (Numba, GPU), the guards around
Numba's disk cache and `initialize_runtime` in jit_backends.py (Plan, Compiled and
initialize_runtime are importable from here too).
"""
import inspect
import threading

import numpy as np

from transpile.tracebacks import api_boundary
from transpile import codegen
from transpile.api import (JVP, VJP, Grad, Plain, Transform, _origin, core_of, spec_flatten)
from transpile.callables import as_index, param_list
from transpile.transform_registry import example_avals
from transpile.dynamic_ints import StaticIntsNeeded, int_params, ints_stay_dynamic
from transpile.errors import ShapeMismatch, ShapesNeeded, TranspileError, TranspileWarning
from transpile.jit_backends import initialize_runtime
from transpile.jit_specialization import FREE_CHANGED, Compiled, Plan
from transpile.normalize import SPECIALIZE
from transpile.parse import read_binding
from transpile.pytree import TreeDef
from transpile.shape_folding import shape_folder
from transpile.transforms.accumulate import reads_before_writes, scatter_adds
from transpile.transforms.dead_code import drop_dead_values
from transpile.transforms.fusion import fuse
from transpile.transforms.inplace import in_place_writes
from transpile.transforms.tape_split import drop_dead_tapes, split_tapes
from transpile.transforms.specialize import AVal, aval_of, specialize

__all__ = ["jit", "Jit", "initialize_runtime"]

_SHAPE_PRESERVING = (Grad, JVP, VJP, Plain)


def _innermost(fun):
    while isinstance(fun, Transform):
        fun = fun.fun
    return fun


def _fast_aval(v):
    """aval_of, with NumPy arrays (the common case) interned by (shape, dtype)."""
    if type(v) is np.ndarray:
        k = (v.shape, v.dtype)
        av = _AVALS.get(k)
        if av is None:
            av = _AVALS[k] = aval_of(v)
        return av
    return aval_of(v)


_AVALS = {}


class Jit(Transform):
    """The callable jit returns; a Transform, so it composes with grad/vmap/..."""

    keeps_shapes = True

    suffix = "__jit"

    def __init__(self, fun, static_argnums=(), static_argnames=(), backend="cpu"):
        super().__init__(fun)
        from transpile.lowering import backends
        names = [p.name for p in self._params]
        static_argnums = as_index(static_argnums)      # np.int64(1) too
        if isinstance(static_argnums, int):
            static_argnums = (static_argnums,)
        if isinstance(static_argnames, str):
            static_argnames = (static_argnames,)
        static = set()
        for i in static_argnums:
            if not -len(names) <= i < len(names):
                raise ValueError(f"jit: static_argnums={static_argnums!r} out of range for "
                                 f"{self.__name__} with {len(names)} parameters")
            static.add(i % len(names))
        for n in static_argnames:
            if n not in names:
                raise ValueError(f"jit: static_argnames names {n!r}, which is not a parameter "
                                 f"of {self.__name__} ({', '.join(names)})")
            static.add(names.index(n))
        self.static = frozenset(static)
        if backend not in backends.BACKENDS and backend not in backends._BUILTIN:
            backends.get(backend)      # raises the clear error
        self.backend = backend
        self._specs = {}
        self._compile_lock = threading.RLock()
        self._warned = set()
        self.compile_count = 0          # specializations built (for tests and curiosity)
        self.dynamic_ints = True        # Python int arguments as dynamic scalars, until one
        #                                 call shows the code needs their values (dynamic_ints.py)

    # -- Transform interface ---------------------------------------------------------------------

    def __transpile_core__(self, in_trees):
        return core_of(self.fun, in_trees)

    def flatten_args(self, values):
        leaves, trees = [], []
        for i, v in enumerate(values):
            if i in self.static:
                try:
                    hash(v)
                except TypeError:
                    raise TypeError(
                        f"jit({self.__name__}): static argument {self._params[i].name!r} must be "
                        f"hashable (it keys the compile cache), got {type(v).__name__}; pass a "
                        "tuple instead of a list, or make it a regular argument") from None
                trees.append(TreeDef("static", (), (v,)))
                continue
            dyn, tree = spec_flatten(v, dynamic_ints=self.dynamic_ints)
            leaves += dyn
            trees.append(tree)
        return leaves, tuple(trees)

    # -- calling ---------------------------------------------------------------------------------

    @api_boundary     # tracebacks without transpile\'s frames (tracebacks.py)
    def __call__(self, *args, **kwargs):
        values = self.bind(args, kwargs)
        leaves, trees = self.flatten_args(values)
        key = (trees, tuple([_fast_aval(v) for v in leaves]))
        c = self._specs.get(key)
        if c is not None and c.fresh():
            out = c.run(leaves)
            if out is not FREE_CHANGED:
                return out
        c, leaves = self.compiled_for_values(values)
        out = c.run(leaves)
        if out is FREE_CHANGED:   # free variables changed shape while we compiled: run eagerly
            out = c.finish(c.plan.eager_callable()(*leaves, *[read_binding(w) for w in c.free]),
                           convert=False)
        return out

    def compiled_for_values(self, values):
        """(compiled specialization, flat leaves) for bound argument values."""
        leaves, trees = self.flatten_args(values)
        key = (trees, tuple([_fast_aval(v) for v in leaves]))
        try:
            return self.compiled_for(key, trees, leaves), leaves
        except StaticIntsNeeded:
            self.dynamic_ints = False         # specialize on int values from now on
            return self.compiled_for_values(values)

    def compiled_for(self, key, trees, leaves):
        with self._compile_lock:
            c = self._specs.get(key)
            if c is not None and c.fresh():
                free = [read_binding(w) for w in c.free]
                if not c.free or tuple(aval_of(v) for v in free) == c.free_avals:
                    return c
            c = self._build(trees, list(key[1]))
            self._specs[key] = c
            self.compile_count += 1
            return c

    def _build(self, trees, in_avals):
        if not self.dynamic_ints or not any(a.weak and a.dtype.kind in "iu" for a in in_avals):
            return self._build_core(trees, in_avals, None)
        try:
            return self._build_core(trees, in_avals, int_params)
        except (StaticIntsNeeded, ShapeMismatch):
            raise
        except Exception as e:         # an int argument's value is needed: specialize on it
            raise StaticIntsNeeded(str(e)) from e

    def _build_core(self, trees, in_avals, dynamic_int_params, per_example=False):
        from transpile.vmap import Vmap
        ranked = getattr(self.fun, "accepts_ranks", False) or isinstance(self.fun, Vmap) and all(
            p.default is inspect.Parameter.empty for p in self.fun._params)
        folded = in_avals if self._chain_preserves_shapes() else None
        try:
            core = self._core_with(trees, in_avals, ranked, per_example, folded)
        except ShapesNeeded:
            # a comprehension over an array under vmap: one example's shapes, then
            inner = example_avals(self.fun, trees, in_avals) if folded is None else None
            if inner is None:
                raise
            core = self._core_with(trees, in_avals, ranked, per_example, inner)
        if dynamic_int_params is not None and not ints_stay_dynamic(
                core, dynamic_int_params(core, in_avals)):
            raise StaticIntsNeeded("an int argument's value is needed when generating code")
        plan = self._plan(core, in_avals)
        plan.retry = None
        if ranked and isinstance(self.fun, Vmap) and not per_example:
            # the batched code may have a step Numba cannot lower: then one compiled loop over
            # the batch around the function (each example runs the code jit(f) would)
            plan.retry = lambda: self._build_core(trees, in_avals, dynamic_int_params, True)
        from transpile.lowering import backends
        from transpile.lowering.numba_cpu import Unlowerable
        fn = None
        try:
            compile_fn = backends.get(self.backend)
            fn = compile_fn(plan)
        except Unlowerable as e:
            if dynamic_int_params is not None:
                raise StaticIntsNeeded(str(e)) from e
            if per_example:
                raise
            alt = self._per_example(plan)
            if alt is not None:
                return alt
            fn = self._compile_in_parts(compile_fn, plan)
            if fn is None:
                why = f" ({e.why})" if getattr(e, "why", "") else ""
                self._warn(f"jit({self.__name__}): {getattr(e, 'where', '?')}: Numba cannot "
                           f"compile {e.construct}{why}; running the NumPy version instead.")
        except ImportError as e:
            self._warn(f"jit({self.__name__}): backend {self.backend!r} unavailable ({e}); "
                       "running the NumPy version instead.")
        return Compiled(self, core, plan, fn, self.backend)

    def _core_with(self, trees, in_avals, ranked, per_example, folded):
        """The core to compile; `folded`: the avals the user function's parameters have, when
        its shape queries are folded while it is normalized (transpile/shape_folding.py)."""
        token = SPECIALIZE.set(shape_folder(folded)) if folded is not None else None
        try:
            from transpile.vmap import Ranked
            if ranked:
                # jit knows every leaf's rank: vmap can then pick its batching rules instead of
                # falling back to a loop over the batch (every parameter is passed explicitly
                # when none has a default, so all of them follow in_axes)
                passed = tuple(True for _ in trees)
                key = Ranked((trees, tuple(len(a.shape) for a in in_avals), passed))
                if per_example:
                    return self.fun.batched_core(*key, per_example=True)
                return self.fun.__transpile_core__(key)
            return self.__transpile_core__(trees)
        finally:
            if token is not None:
                SPECIALIZE.reset(token)

    def _compile_in_parts(self, compile_fn, plan):
        """The function compiled in parts, with the statements Numba cannot compile run in
        NumPy between them (None when no part compiles)."""
        from transpile.lowering.numba_cpu import Unlowerable
        if self.backend not in ("cpu", "numba"):
            return None
        plan.allow_breaks = True
        try:
            return compile_fn(plan)
        except Unlowerable:
            plan.text = plan.path = None
            return None

    def _per_example(self, plan):
        """The compiled loop over the batch for a vmap whose batched code did not lower (None
        when there is none, or it did not lower either)."""
        if plan.retry is None or self.backend not in ("cpu", "numba"):
            return None
        from transpile.lowering.numba_cpu import Unlowerable
        try:
            return plan.retry()
        except (Unlowerable, TranspileError):
            return None

    def _plan(self, core, in_avals):
        free_vals = [read_binding(where) for _, where, _ in core.free]
        avals = list(in_avals) + [aval_of(v) for v in free_vals]
        static_arrays = [n for n, o in core.statics.items() if isinstance(o, np.ndarray)]
        body, outs, av = specialize(split_tapes(core), avals)
        body = drop_dead_values(body, outs)     # (dead copies hide single reads from scatter_adds)
        body = drop_dead_tapes(reads_before_writes(scatter_adds(body, outs, av)), outs)
        body = drop_dead_values(body, outs)
        in_place = in_place_writes(body, list(core.params) + static_arrays, outs,
                                   scalars={n for n, a in av.items() if a is not None and not a.shape})
        body = fuse(body, av, outs, in_place)
        sig = "signature: " + ", ".join(f"{p}: {a!r}" for p, a in zip(core.params, avals))
        origin = _origin(self)
        plan = Plan(self, core, body, outs, av, list(core.params) + static_arrays, avals, sig,
                    origin)
        plan.in_place = in_place
        return plan

    def _chain_preserves_shapes(self):
        f = self.fun
        while isinstance(f, Transform):
            if not isinstance(f, _SHAPE_PRESERVING + (Jit,)):
                return False
            f = f.fun
        return True

    def _warn(self, message):
        key = message
        if key in self._warned:
            return
        self._warned.add(key)
        from transpile_runtime.diagnostics import warn
        code = getattr(_innermost(self), "__code__", None)
        where = (code.co_filename, code.co_firstlineno) if code is not None else None
        warn(message, TranspileWarning, where)   # at the user's call (or function), not here

    # -- inspection ------------------------------------------------------------------------------

    def show_source(self, *args, **kwargs):
        """The lowered source Numba compiles for these example arguments."""
        if not args and not kwargs:
            c = self._latest()
            if c is None:
                raise TypeError(f"jit({self.__name__}).source: jit specializes on argument "
                                "shapes and dtypes, so it shows the code of a call: call it "
                                f"first, or ask for example arguments: jit({self.__name__})"
                                f".source_for({param_list(self)})")
        else:
            c, _ = self.compiled_for_values(self.bind(args, kwargs))
        c = c.delegate or c
        if c.plan.text is None:
            return f"# (no lowered code: this specialization runs the NumPy version)\n" + \
                codegen.module_text(c.core, c.plan.origin)
        return c.plan.text

    @api_boundary
    def source_for(self, *args, **kwargs):
        return self.show_source(*args, **kwargs)

    def _latest(self):
        """The specialization of the last call (what `.source` shows), or None."""
        last = getattr(self, "_last_run", None)
        if last is not None:
            return last
        with self._compile_lock:
            specs = list(self._specs.values())
        return specs[-1] if specs else None

    def source_path(self, *args, **kwargs):
        """Path of the lowered module Numba compiles for these example arguments (or of the
        NumPy module, when this specialization runs the NumPy version)."""
        if not args and not kwargs:
            raise TypeError(f"jit({self.__name__}).source_path(*example_args): jit specializes "
                            "on argument shapes, so it needs example arguments")
        c, _ = self.compiled_for_values(self.bind(args, kwargs))
        c = c.delegate or c
        if c.plan.path:
            return c.plan.path
        return codegen.write_source(codegen.module_text(c.core, c.plan.origin), c.core.name)


def jit(fun=None, static_argnums=(), static_argnames=(), backend="cpu"):
    """Compile `fun` per abstract signature (shapes, dtypes, static values) with Numba.

    Usable bare (@jit), with arguments (@jit(static_argnames="normal")) or as jit(f, ...).
    backend: "cpu" (Numba, default), "numpy" (no compilation), or one registered in
    transpile.lowering.backends.BACKENDS (the GPU backends register "cupy"/"cuda").
    """
    if fun is None:
        return lambda f: Jit(f, static_argnums, static_argnames, backend)
    return Jit(fun, static_argnums, static_argnames, backend)


def _shard_compiler(fun, static_argnums=(), backend=None):
    """pmap's per-shard compiler: each shard calls the jitted function (Numba code is nogil)."""
    gpu = (backend or "").lower() in ("gpu", "cuda")
    try:                                # GPU shards: generated CUDA kernels on the shard's stream
        j = Jit(fun, static_argnums=static_argnums, backend="cupy" if gpu else "cpu")
    except (TranspileError, TypeError, ValueError):
        return fun
    state = {"ok": True}

    def run(*args, **kwargs):
        if state["ok"]:
            try:
                return j(*args, **kwargs)
            except TranspileError:
                state["ok"] = False      # not transformable (e.g. collectives): plain Python
        return fun(*args, **kwargs)
    return run


def _install_pmap_hook():
    from transpile.pmap import set_shard_compiler
    set_shard_compiler(_shard_compiler)


_install_pmap_hook()
