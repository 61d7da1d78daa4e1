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
"""
import inspect
import os
import threading

import numpy as np

from transpile import codegen
from transpile.api import (JVP, VJP, Grad, Plain, Transform, _origin, core_of, spec_flatten)
from transpile.dynamic_ints import StaticIntsNeeded, int_params, ints_stay_dynamic
from transpile.errors import TranspileError, TranspileWarning
from transpile.normalize import SPECIALIZE
from transpile.parse import read_binding
from transpile.pytree import TreeDef, tree_unflatten
from transpile.transforms.accumulate import reads_before_writes, scatter_adds
from transpile.transforms.fusion import fuse
from transpile.transforms.inplace import in_place_writes
from transpile.transforms.tape_split import drop_dead_tapes, split_tapes
from transpile.transforms.specialize import AVal, Specializer, aval_of, specialize
from transpile.transforms.specialize_windows import MARK as WINDOW_MARK

__all__ = ["jit", "Jit", "initialize_runtime"]

_SHAPE_PRESERVING = (Grad, JVP, VJP, Plain)


def _versions():
    import numpy
    try:
        import numba
        nb = numba.__version__
    except ImportError:
        nb = "none"
    from transpile.version import __version__
    return f"transpile {__version__}, numba {nb}, numpy {numpy.__version__}"


class Plan:
    """One specialization, ready for a backend: specialized + fused body and how to load it."""

    def __init__(self, jit, core, body, outs, avals, params, in_avals, signature, origin):
        self.jit = jit
        self.core = core
        self.body = body
        self.outs = outs
        self.avals = avals
        self.params = params              # flat parameter names of the lowered function
        self.in_avals = in_avals
        self.signature = signature
        self.origin = origin
        self.text = None
        self.path = None
        self._eager = None
        self.in_place = set()      # id() of setitem equations that may store in place

    def eager_callable(self):
        if self._eager is None:
            from transpile.transforms.inplace import for_printing   # O(1) writes, del
            fn, _, _ = codegen.load(for_printing(self.core), self.origin)
            n = len(self.core.outs)

            def run(*args):
                out = fn(*args[:len(self.core.params)])
                return (out,) if n == 1 else tuple(out)
            self._eager = run
        return self._eager


def _numba_compile(plan):
    from transpile_runtime import diskcache
    from transpile.lowering import numba_cpu
    try:
        import numba
        threads = numba.config.NUMBA_NUM_THREADS
    except ImportError as e:
        raise numba_cpu.Unlowerable(None, f"numba is not installed ({e})")
    name, text = numba_cpu.lower(plan.core, plan.body, plan.outs, plan.avals, plan.params,
                                 plan.origin, plan.signature, _versions(), threads=threads,
                                 in_place=plan.in_place)
    plan.text = text
    for attempt in range(10):
        path = diskcache.source_path(codegen.cache_dir(), plan.core.name, text)
        plan.path = path
        diskcache.verify(path)
        try:
            return numba_cpu.compile_module(text, path, name)
        except Exception as e:
            if _is_numba_error(e):      # a part split at collectives did not compile
                raise numba_cpu.Unlowerable(None, _refused_construct(e, text),
                                            construct="a function with collectives") from e
            if not isinstance(e, (OSError, RuntimeError)):
                raise
            if attempt == 9 or not _cache_vanished(e, path):
                raise                 # the cache was deleted under Numba: write it again


def _cache_vanished(e, path):
    """Numba failed because the cache folder (or the module file in it) disappeared."""
    if isinstance(e, RuntimeError):
        return "no locator available" in str(e)
    where = str(getattr(e, "filename", "") or "")
    if where:
        return where.startswith(os.path.dirname(path))
    return isinstance(e, FileNotFoundError) and not os.path.exists(path)


def _gpu_compile(backend):
    """jit(f, backend="cupy"|"cuda"): kernel source is generated here without a device (so
    `show` works anywhere); the program is built on first call, which is where a missing CuPy
    or GPU is reported."""
    def compile_fn(plan):
        from transpile.lowering.gpu import gpu_program, kernel_source
        # weak avals are Python scalars (NumPy 2 promotion: float32 * 1.67 stays float32)
        example = [a.dtype.type(0).item() if a.weak else np.zeros(a.shape, a.dtype)
                   for a in plan.in_avals]
        plan.text = kernel_source(plan.core, example, backend)
        state = {}

        def run(*args):
            prog = state.get("prog")
            if prog is None:
                prog = state["prog"] = gpu_program(plan.core, example, backend)
            return prog(*args)
        return run
    return compile_fn


def _register_builtin():
    from transpile.lowering import backends
    backends.register("cpu", _numba_compile)
    backends.register("numba", _numba_compile)
    backends.register("numpy", lambda plan: plan.eager_callable())
    backends.register("cupy", _gpu_compile("cupy"))
    backends.register("cuda", _gpu_compile("cuda"))


_register_builtin()


def _is_numba_error(e):
    try:
        from numba.core import errors
    except ImportError:
        return False
    return isinstance(e, (errors.NumbaError, errors.LoweringError)) or \
        type(e).__module__.startswith("numba")


def _refused_construct(e, text):
    """The line of lowered source Numba refused (from its error message), for the warning."""
    msg = str(e)
    import re
    m = re.findall(r'File "[^"]*", line (\d+):', msg)
    lines = text.splitlines() if text else []
    for ln in reversed(m):
        k = int(ln) - 1
        if 0 <= k < len(lines):
            return lines[k].strip()
    first = msg.strip().splitlines()[0] if msg.strip() else type(e).__name__
    return first


class Compiled:
    """A compiled specialization: converts arguments, calls, rebuilds the output pytree."""

    def __init__(self, jit, core, plan, fn, backend_name):
        self.jit = jit
        self.core = core
        self.plan = plan
        self.fn = fn
        self.backend_name = backend_name
        self.spec_deps = list(getattr(core, "deps", []))
        # the first call runs under a lock (Numba compiles lazily and may fall back); GPU
        # programs skip it: pmap shards calling a collective must all get in at once
        self.checked = fn is None or getattr(fn, "precompiled", False) or \
            backend_name in ("cupy", "cuda")
        self.eager = fn is None
        if fn is None:
            self.fn = plan.eager_callable()
        self.out_avals = [plan.avals.get(o.name) if hasattr(o, "name") else None
                          for o in plan.outs]
        self.free = [where for _, where, _ in core.free]
        self.free_avals = tuple(plan.in_avals[len(plan.in_avals) - len(self.free):]) \
            if self.free else ()
        self.statics = [core.statics[n] for n in plan.params[len(core.params):]]
        self.lock = threading.Lock()
        self.delegate = None      # the per-example loop that replaced code Numba refused

    def fresh(self):
        for where, obj in self.spec_deps:
            try:
                now = read_binding(where)
            except Exception:
                return False
            if now is not obj:
                try:
                    if not (type(now) is type(obj) and bool(now == obj)):
                        return False
                except Exception:
                    return False
        return True

    def run(self, leaves):
        if self.delegate is not None:
            return self.delegate.run(leaves)
        free = [read_binding(w) for w in self.free]
        if self.free and tuple(aval_of(v) for v in free) != self.free_avals:
            return None
        if self.eager:
            out = self.fn(*leaves, *free)
            return self.finish(out, convert=False)
        args = [_arg(v) for v in leaves] + [_arg(v) for v in free] + self.statics
        if not self.checked:
            with self.lock:
                if not self.checked:
                    try:
                        out = _call_guarding_cache(self.fn, args, self.plan.path)
                    except IndexError as e:
                        if not str(e).startswith(WINDOW_MARK):
                            raise
                        self.checked = True
                        return self.window_miss(e, leaves, free)
                    except Exception as e:
                        if not _is_numba_error(e):
                            raise
                        alt = self.jit._per_example(self.plan)
                        if alt is not None:       # vmap: one compiled loop over the batch
                            self.delegate = alt
                            self.checked = True
                            return alt.run(leaves)
                        self.fall_back(e)
                        return self.finish(self.fn(*leaves, *free), convert=False)
                    self.checked = True
                    if self.plan.path:
                        from transpile_runtime import diskcache
                        diskcache.record(self.plan.path)
                    return self.finish(out)
        try:
            return self.finish(self.fn(*args))
        except IndexError as e:
            if not str(e).startswith(WINDOW_MARK):
                raise
            return self.window_miss(e, leaves, free)

    def window_miss(self, e, leaves, free):
        """A fixed-length window x[i:i + 3] reached past an end of the array in this call:
        NumPy gives a shorter slice there, which the compiled code cannot, so this call runs
        the NumPy version (the compiled code stops before it writes any argument)."""
        where = str(e)[len(WINDOW_MARK):].strip()
        self.jit._warn(f"jit({self.jit.__name__}): {where}: a slice with run-time bounds "
                       "reached past an end of the array (NumPy gives a shorter slice there); "
                       "such calls run the NumPy version.")
        return self.finish(self.plan.eager_callable()(*leaves, *free), convert=False)

    def fall_back(self, e):
        construct = _refused_construct(e, self.plan.text) if not isinstance(e, str) else e
        self.jit._warn(f"jit({self.jit.__name__}): Numba could not compile the lowered code "
                       f"({self.plan.path or 'lowering'}); running the NumPy version instead. "
                       f"Construct refused: {construct}")
        self.eager = True
        self.fn = self.plan.eager_callable()
        self.checked = True

    def finish(self, out, convert=True):
        flat = []
        for o, av in zip(out, self.out_avals):
            if convert and av is not None and not av.shape and not isinstance(o, np.ndarray) \
                    and not hasattr(o, "__cuda_array_interface__"):   # GPU scalars stay there
                o = av.dtype.type(o) if not av.weak else o
            flat.append(o)
        return tree_unflatten(self.core.out_tree, flat)


def _innermost(fun):
    while isinstance(fun, Transform):
        fun = fun.fun
    return fun


def _call_guarding_cache(fn, args, path):
    """The first call of a Numba dispatcher compiles and saves to the disk cache: if the cache
    was deleted meanwhile, saving fails although the code compiled. Recreate the folders and
    call again (the compiled code is already in the dispatcher)."""
    for attempt in range(3):
        try:
            return fn(*args)
        except OSError as e:
            if attempt == 2 or not path or not _cache_vanished(e, path):
                raise
            codegen.cache_dir()
            from transpile_runtime.diskcache import makedirs_private
            makedirs_private(os.path.dirname(path))


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


def _arg(v):
    if isinstance(v, np.ndarray) and v.ndim == 0:
        return v[()]
    return v


class Jit(Transform):
    """The callable jit returns; a Transform, so it composes with grad/vmap/..."""

    suffix = "__jit"

    def __init__(self, fun, static_argnums=(), static_argnames=(), backend="cpu"):
        super().__init__(fun)
        from transpile.lowering import backends
        names = [p.name for p in self._params]
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

    def __call__(self, *args, **kwargs):
        values = self.bind(args, kwargs)
        leaves, trees = self.flatten_args(values)
        key = (trees, tuple([_fast_aval(v) for v in leaves]))
        c = self._specs.get(key)
        if c is not None and c.fresh():
            out = c.run(leaves)
            if out is not None:
                return out
        c, leaves = self.compiled_for_values(values)
        out = c.run(leaves)
        if out is None:   # free variables changed shape while we compiled: run eagerly
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
        except StaticIntsNeeded:
            raise
        except Exception as e:         # an int argument's value is needed: specialize on it
            raise StaticIntsNeeded(str(e)) from e

    def _build_core(self, trees, in_avals, dynamic_int_params, per_example=False):
        from transpile.vmap import Vmap
        token = None
        if self._chain_preserves_shapes():
            token = SPECIALIZE.set(_BuildFolder(in_avals).hook)
        ranked = getattr(self.fun, "accepts_ranks", False) or isinstance(self.fun, Vmap) and all(
            p.default is inspect.Parameter.empty for p in self.fun._params)
        try:
            from transpile.vmap import Ranked
            if ranked:
                # jit knows every leaf's rank: vmap can then pick its batching rules instead of
                # falling back to a loop over the batch (every parameter is passed explicitly
                # when none has a default, so all of them follow in_axes)
                passed = tuple(True for _ in trees)
                key = Ranked((trees, tuple(len(a.shape) for a in in_avals), passed))
                if per_example:
                    core = self.fun.batched_core(*key, per_example=True)
                else:
                    core = self.fun.__transpile_core__(key)
            else:
                core = self.__transpile_core__(trees)
        finally:
            if token is not None:
                SPECIALIZE.reset(token)
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
            why = f" ({e.why})" if getattr(e, "why", "") else ""
            self._warn(f"jit({self.__name__}): {getattr(e, 'where', '?')}: Numba cannot compile "
                       f"{e.construct}{why}; running the NumPy version instead.")
        except ImportError as e:
            self._warn(f"jit({self.__name__}): backend {self.backend!r} unavailable ({e}); "
                       "running the NumPy version instead.")
        return Compiled(self, core, plan, fn, self.backend)

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
        body = drop_dead_tapes(reads_before_writes(scatter_adds(body, outs, av)), outs)
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
            raise TypeError(f"show(jit({self.__name__}), *example_args): jit specializes on "
                            "argument shapes, so show needs example arguments")
        c, _ = self.compiled_for_values(self.bind(args, kwargs))
        c = c.delegate or c
        if c.plan.text is None:
            return f"# (no lowered code: this specialization runs the NumPy version)\n" + \
                codegen.module_text(c.core, c.plan.origin)
        return c.plan.text

    def source_for(self, *args, **kwargs):
        return self.show_source(*args, **kwargs)

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


class _BuildFolder:
    """While the user's function is normalized, fold shape queries on its parameters."""

    def __init__(self, in_avals):
        self.in_avals = in_avals

    def hook(self, in_trees, params, builder):
        if len(params) != len(self.in_avals):
            return

        class _Core:
            pass
        core = _Core()
        core.params, core.statics, core.body = list(params), {}, []
        sp = Specializer(core, self.in_avals)
        sp.rewrite = False

        def on_emit(eqn):
            out = []
            sp.eqn(eqn, out)
            if eqn.out in sp.subst and isinstance(sp.subst[eqn.out], _Const):
                return sp.subst[eqn.out]
            if eqn.out not in sp.avals:
                sp.infer(eqn)
            return None
        builder.on_emit = on_emit


from transpile.ir import Const as _Const  # noqa: E402


def initialize_runtime():
    """Do Numba's one-time per-process setup now (its NumPy lowering registries, SciPy's BLAS:
    about 0.3 s) instead of in the first jitted call, e.g. at program start or in a thread."""
    from numba.core.registry import cpu_target
    cpu_target.target_context.refresh()
    try:
        import scipy.linalg.cython_blas  # noqa: F401  (Numba's np.dot needs it)
    except ImportError:
        pass


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
