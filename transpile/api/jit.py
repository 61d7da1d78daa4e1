"""jit: compile a function's generated code for its argument signature (Numba on the CPU).

    @jit                                  # or jit(f, static_argnames=("normal",))
    def f(x, normal=True): ...

A call looks up the *abstract signature* of its arguments (pytree structure, shapes, dtypes,
values of static arguments). A new signature builds the function's core Python (through any
inner transforms: jit(grad(f)) compiles the gradient), specializes it to those shapes
(`x.ndim` is a constant; runtime helpers such as unbroadcast disappear), fuses elementwise
chains and reductions into loops, lowers that to a Numba module and compiles it. The lowered
text reads sizes from the arguments at run time (lowering/cpu/text.py), so a new batch size
regenerates (a few ms) the same text, whose module is loaded already: its Numba dispatcher
serves the call without compiling (`compile_count` counts new code, `build_count` every
specialization). A dimension of 1, a dtype or rank change gives another text and compiles. The module
is a real file (see `show(jit(f), *args)`), and Numba's cache of it is kept on disk, checked
against a manifest (runtime/diskcache.py), so another process loads it instead of compiling.

If Numba refuses the lowered code, the call runs the generated NumPy code instead and warns
once (TranspileWarning) naming the construct: the numbers are the same.

Tiers: by default a call never waits for the compiler. A new signature's first calls run the
generated NumPy code (`Pending`) while a background thread specializes and lowers it, and a
worker process (compile/worker.py; TRANSPILE_COMPILE_WORKER=0: the thread itself) compiles it
into Numba's disk cache by argument types, without running it; the thread then loads it
(`Compiled.precompile`: a cache hit) and the next call runs the compiled code. jit(f, wait=True), TRANSPILE_TIERS=0 (the test suite) or
jit(f).compile(*args) compile first. Per call, a generated entry for the latest signature
(compile/dispatch.py) checks the arguments and the globals the code was generated from and calls
the compiled dispatcher directly; everything else takes the full path below it.

jit is a Transform: grad(jit(f)) differentiates f's code, jit(grad(f)) compiles the gradient.

Here: `jit` / `Jit` (the compile cache by abstract signature, building and planning a
specialization) and pmap's per-shard compiler. A specialization's `Plan` and `Compiled` are
in compile/specialization.py, the backends' compile functions (Numba, GPU), the guards around
Numba's disk cache and `initialize_runtime` in compile/backends.py (Plan, Compiled and
initialize_runtime are importable from here too).
"""
import atexit
import inspect
import os
import sys
import threading
import types

import numpy as np

from transpile.core.tracebacks import api_boundary
from transpile.core import codegen, ir
from transpile.frontend.transform_registry import Ranked, example_avals
from transpile.api.autodiff import (JVP, VJP, Grad, Plain, Transform, _origin, core_of, spec_flatten)
from transpile.frontend.callables import as_index, param_list
from transpile.compile.dynamic_ints import (StaticIntsNeeded, int_params, ints_stay_dynamic,
                                    is_dynamic_int)
from transpile.errors import ShapeMismatch, ShapesNeeded, TranspileError, TranspileWarning
from transpile.compile.backends import initialize_runtime
from transpile.compile.dispatch import MISS, generated_entry
from transpile.compile.specialization import (FREE_CHANGED, ArgumentsOverlap, Compiled, Plan,
                                              deps_fresh, refuse_overlap)
from transpile.compile import worker as compile_worker
from transpile.compile.worker import WorkerCompile, WorkerError
from transpile.frontend.normalize.normalizer import SPECIALIZE
from transpile.frontend.parse import read_binding
from transpile.primitives.internal.control import write_back
from transpile.pytree import TreeDef, static_key, static_leaf, tree_unflatten
from transpile.api.shape_folding import shape_folder
from transpile.compile.pipeline import optimized_body
from transpile.optimize.inplace import for_printing
from transpile.optimize.specialize import aval_of
from transpile.api.pmap import set_shard_compiler
from transpile.lowering import backends
from transpile.api.vmap import Vmap
from transpile.lowering.cpu.module import Unlowerable
from transpile_runtime.diagnostics import warn

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

_ND = np.ndarray
_PLAIN = frozenset([float, complex, np.float64, np.float32, np.float16, np.complex64,
                    np.complex128, np.int64, np.int32, np.int16, np.int8, np.uint64, np.uint32,
                    np.uint16, np.uint8, np.bool_])


def _size_free(av):
    """An abstract value without its sizes: what compiled code generic in sizes depends on
    (dtype, weak type, rank, which dimensions are 1)."""
    return (av.dtype, av.weak, tuple(n == 1 for n in av.shape))


def _type_text(av):
    """An argument's type as the lowered code's comments show it: dtype and rank, sizes
    generic (`float32[:,:]`) except those of 1, which broadcasting depends on."""
    if not av.shape:
        return repr(av)
    return f"{av.dtype.name}[{','.join('1' if n == 1 else ':' for n in av.shape)}]"


def _leaf_key(a, dynamic_ints):
    """One flat argument's part of the fast key (None: no fast path for it). Arrays key on
    (shape, dtype), floats and NumPy scalars on their type, dynamic ints on int, static
    values (bools, ints when they are static) on their value."""
    t = type(a)
    if t is _ND:
        return (a.shape, a.dtype)
    if t in _PLAIN:
        return t
    if t is int:
        if dynamic_ints and is_dynamic_int(a):
            return int
        return ("static", int, a)
    if t is bool:
        return ("static", bool, a)
    return None


_NO_TIER = object()
_INTS_STATIC = object()
_TLS = threading.local()
_PIPELINE_LOCK = threading.RLock()   # transpile's own passes run one thread at a time
_BACKGROUND = set()                  # background compile threads still running


def tiers_enabled():
    """Tiered execution by default: a call never waits for the compiler (the NumPy version
    runs until the compiled code is ready). TRANSPILE_TIERS=0 makes every call wait (the
    test suite sets it; jit(f, wait=True|False) decides per function)."""
    return os.environ.get("TRANSPILE_TIERS", "1").strip().lower() not in ("0", "false", "no",
                                                                           "off")


class Pending:
    """A signature whose compiled code is being built in the background: its calls run the
    generated NumPy code (the same numbers and argument writes as the compiled code)."""

    def __init__(self, jit, core, origin):
        fn, _, _ = codegen.load(for_printing(core), origin)
        self.core = core
        self.fn = fn
        self.n = len(core.outs)
        self.free = [where for _, where, _ in core.free]
        self.deps = list(getattr(core, "deps", []))
        self.thread = None
        self.started = False
        self.done = False
        self.failed = False
        self.name = f"jit({jit.__name__})"
        self.writes_args = any(e.prim is write_back for e in ir.walk_eqns(core.body))

    def fresh(self):
        return deps_fresh(self.deps)

    def run(self, leaves):
        if self.writes_args:
            refuse_overlap(self.name, self.core, leaves)
        args = [*leaves, *[read_binding(w) for w in self.free]]
        out = self.fn(*args[:len(self.core.params)])
        flat = (out,) if self.n == 1 else tuple(out)
        return tree_unflatten(self.core.out_tree, list(flat))


_SWITCH = {"threads": 0, "saved": None}
_SWITCH_LOCK = threading.Lock()
SWITCH_INTERVAL = 1e-4


def _start_compile_thread(t):
    """Start a background compile. While one runs, the interpreter switches threads every
    0.1 ms instead of 5 ms: Numba's compiler holds the GIL most of the time, and the caller's
    NumPy code gives the GIL up in every large operation (BLAS, ufunc loops), then waits a
    whole switch interval to get it back (measured: 100 NumPy-tier calls of an MLP step took
    14.3 s with 5 ms, 2.2 s with 0.1 ms, 2.7 s with no compile running)."""
    with _SWITCH_LOCK:
        if _SWITCH["threads"] == 0:
            _SWITCH["saved"] = sys.getswitchinterval()
            sys.setswitchinterval(min(_SWITCH["saved"], SWITCH_INTERVAL))
        _SWITCH["threads"] += 1
    _BACKGROUND.add(t)
    try:
        t.start()
    except BaseException:
        _BACKGROUND.discard(t)
        _switch_back()
        raise


def _switch_back():
    with _SWITCH_LOCK:
        _SWITCH["threads"] -= 1
        if _SWITCH["threads"] == 0 and _SWITCH["saved"] is not None:
            sys.setswitchinterval(_SWITCH["saved"])


def _wait_for_background():
    """Before a fork, let running background compiles finish."""
    for t in list(_BACKGROUND):
        t.join(120)


def _wait_at_exit():
    """At exit, let background compiles running in this process finish (a thread killed
    inside LLVM at interpreter shutdown may crash it); one waiting on a worker process is not
    waited for: the worker finishes filling the disk cache on its own (compile/worker.py)."""
    waiting = compile_worker.begin_exit()
    for t in list(_BACKGROUND):
        if t not in waiting:
            t.join(120)


atexit.register(_wait_at_exit)
if hasattr(os, "register_at_fork"):
    # a child forked while Numba compiles would inherit its compiler lock held by a thread
    # that does not exist there (its first compile would hang): finish compiling first
    os.register_at_fork(before=_wait_for_background)


class Jit(Transform):
    """The callable jit returns; a Transform, so it composes with grad/vmap/..."""

    keeps_shapes = True

    suffix = "__jit"

    def __init__(self, fun, static_argnums=(), static_argnames=(), backend="cpu", wait=None):
        super().__init__(fun)
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
        self._static_order = tuple(sorted(static))
        if backend not in backends.BACKENDS and backend not in backends._BUILTIN:
            backends.get(backend)      # raises the clear error
        self.backend = backend
        self._specs = {}
        self._compile_lock = threading.RLock()
        self._warned = set()
        self.compile_count = 0          # specializations whose lowered code was new: a new
        #                                 batch size whose code reads its sizes at run time
        #                                 reuses the compiled code and does not count
        self.build_count = 0            # specializations built (generated, maybe not compiled)
        self.wait_mode = wait           # None: the TRANSPILE_TIERS default; True: calls wait
        #                                 for the compiler; False: tiered (see tiers_enabled)
        self._entry = self._entry_default   # a generated entry for the latest signature
        # parameter name -> position, for calls with keywords (None: *args or keyword-only)
        self._keyword_index = None if self._star or any(
            p.kind is not p.POSITIONAL_OR_KEYWORD for p in self._params) else \
            {p.name: i for i, p in enumerate(self._params)}
        self._entries = {}              # signature -> its generated entry
        self._fast = {}                 # fast key (types of flat args) -> runner (see __call__)
        self._pending = {}              # signature -> Pending (NumPy tier while compiling)
        self._deferred = []             # warnings from background compiles, for the next call
        self.last_tier = None           # "numpy" or "compiled": what the last call ran
        self.dynamic_ints = True        # Python int arguments as dynamic scalars, until one
        #                                 call shows the code needs their values (compile/dynamic_ints.py)
        if self._tiered():
            compile_worker.prestart()   # a worker imports Numba while the program sets up

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
                trees.append(static_leaf(v))
                continue
            if isinstance(v, np.random.RandomState):
                raise TranspileError(
                    f"jit({self.__name__}): argument {self._params[i].name!r} is a "
                    "np.random.RandomState, which compiled code cannot take",
                    construct="a np.random.RandomState argument",
                    hint="pass a np.random.Generator (np.random.default_rng(seed)): jit draws "
                         "from it with NumPy's numbers, or make RandomState(seed) inside")
            dyn, tree = spec_flatten(v, dynamic_ints=self.dynamic_ints)
            leaves += dyn
            trees.append(tree)
        return leaves, tuple(trees)

    # -- calling ---------------------------------------------------------------------------------

    @api_boundary     # tracebacks without transpile\'s frames (core/tracebacks.py)
    def __call__(self, *args, **kwargs):
        if not kwargs:
            return self._entry(*args)      # the generated fast path (compile/dispatch.py)
        full = self._as_positional(args, kwargs)
        if full is not None:               # f(x, lr=0.1): the same fast path, by position
            return self._entry(*full)
        return self._call(args, kwargs)

    def _as_positional(self, args, kwargs):
        """A call with keywords as the positional call it means (skipped parameters take their
        defaults), or None where that is not plain (*args, keyword-only parameters, an unknown
        or repeated name: the full path binds it and raises Python's error)."""
        self.fresh_defaults()
        index = self._keyword_index
        if index is None:
            return None
        top = len(args) - 1
        for name in kwargs:
            i = index.get(name, -1)
            if i < len(args):
                return None
            top = max(top, i)
        full = list(args)
        for p in self._params[len(args):top + 1]:
            if p.name in kwargs:
                full.append(kwargs[p.name])
            elif p.default is not inspect.Parameter.empty:
                full.append(p.default)
            else:
                return None
        return full

    def _entry_default(self, *args):
        return self._dict_call(args)

    def _dict_call(self, args):
        """The fast path's second level: flat arrays and scalars keyed on their types."""
        try:
            key = tuple([(a.shape, a.dtype) if type(a) is _ND else
                         (type(a) if type(a) in _PLAIN else _leaf_key(a, self.dynamic_ints))
                         for a in args])
            if self.static:
                key += tuple([static_key(args[i]) for i in self._static_order])
            run = self._fast.get(key)
        except (TypeError, IndexError):
            run = None
        if run is not None:
            out = run.run(args)
            if out is not MISS:
                return out
        return self._call(args, {})

    def defaults_replaced(self):
        self._forget_fast()       # its entries hold the old defaults

    def _forget_fast(self):
        self._fast.clear()
        self._entries.clear()
        self._entry = self._entry_default

    def _call(self, args, kwargs):
        """The full path (see _call_checked); arguments that share memory, passed to a plain
        function that writes into its arguments, run that function itself: transformed code
        treats each argument as its own array, NumPy sees a write through one in the other."""
        try:
            return self._call_checked(args, kwargs)
        except ArgumentsOverlap as e:
            if not isinstance(self.fun, types.FunctionType):
                raise
            self._warn(f"{str(e).splitlines()[0].split(';')[0]}: this call runs "
                       f"{self.__name__} as plain Python (NumPy's meaning), not compiled")
            return self.fun(*args, **kwargs)

    def _call_checked(self, args, kwargs):
        """The full path: bind, flatten pytrees, look up the abstract signature, build."""
        if self._deferred:
            self._flush_warnings()
        values = self.bind(args, kwargs)
        leaves, trees = self.flatten_args(values)
        key = (trees, tuple([_fast_aval(v) for v in leaves]))
        c = self._specs.get(key)
        if c is not None and c.fresh():
            out = c.run(leaves)
            if out is not FREE_CHANGED:
                self.last_tier = c.tier
                if not kwargs and (len(args) == len(self._params) and not self._star or
                                   self._defaults_only(args)):
                    self._install_fast(c, values, key, trees, given=len(args))
                return out
        if self._tiered():
            out = self._call_tiered(key, trees, leaves)
            if out is _INTS_STATIC:     # an int argument's value is needed: key on it
                self.dynamic_ints = False
                self._forget_fast()
                leaves, trees = self.flatten_args(values)
                key = (trees, tuple([_fast_aval(v) for v in leaves]))
                c = self._specs.get(key)
                out = _NO_TIER if c is not None else self._call_tiered(key, trees, leaves)
            if out is not _NO_TIER and out is not _INTS_STATIC:
                return out
        c, leaves = self.compiled_for_values(values)
        out = c.run(leaves)
        if out is FREE_CHANGED:   # free variables changed shape while we compiled: run eagerly
            out = c.finish(c.plan.eager_callable()(*leaves, *[read_binding(w) for w in c.free]),
                           convert=False)
        self.last_tier = c.tier
        return out

    def _defaults_only(self, args):
        """Do the parameters after the positional `args` all take their defaults (a call that
        leaves out trailing arguments with defaults, no *args/**kwargs)?"""
        return not self._star and len(args) < len(self._params) and all(
            p.kind is p.POSITIONAL_OR_KEYWORD and p.default is not inspect.Parameter.empty
            for p in self._params[len(args):])

    def _install_fast(self, c, args, key, trees, given=None):
        """Make calls with arguments like these take the fast path to `c`: the generated entry
        (compile/dispatch.py; flat arguments and pytrees of them) and, for flat arguments, the
        dictionary keyed on their types. `args`: every parameter's value; `given`: how many
        of them the call passed (the rest are their defaults, constants of the entry)."""
        given = len(args) if given is None else given
        entry = self._entries.get((key, given))
        if entry is None or entry.compiled is not c:
            src = self._defaults_src
            entry = generated_entry(c, args, trees, self.dynamic_ints, self._dict_call,
                                    given=given,
                                    defaults=None if src is None else (src, src.__defaults__))
            if entry is None:
                return
            if len(self._entries) > 64:
                self._entries.clear()
            self._entries[(key, given)] = entry
        self._entry = entry
        if given < len(args):
            return       # (the dictionary keys on the arguments passed: all of them only)
        try:
            fkey = tuple(_leaf_key(a, self.dynamic_ints) for a in args)
            if self.static:
                fkey += tuple([static_key(args[i]) for i in self._static_order])
            hash(fkey)
        except (TypeError, IndexError):
            return
        if any((k is None and i not in self.static) or type(k) is tuple and k[0] == ()
               for i, k in enumerate(fkey[:len(args)])):
            return       # a pytree, an unknown type, a 0-d array (passed as a scalar)
        if len(self._fast) > 64:
            self._fast.clear()
        self._fast[fkey] = entry

    # -- tiers -----------------------------------------------------------------------------------

    def _tiered(self):
        if self.backend not in ("cpu", "numba"):
            return False
        if self.wait_mode is not None:
            return not self.wait_mode
        return tiers_enabled()

    def _call_tiered(self, key, trees, leaves):
        """Run the NumPy tier for a signature whose compiled code is being built in the
        background (starting that build on the first call). _NO_TIER where this signature
        must be built here (its core needs int values, a build failed in a way the blocking
        path reports better)."""
        with self._compile_lock:
            p = self._pending.get(key)
            if p is not None and not p.fresh():
                del self._pending[key]
                p = None
            built = None
            if p is None and self._sibling(key):
                # another batch size of a compiled signature: generating is cheap, and when
                # the text is the same its compiled code serves this call too
                try:
                    built = self._build(trees, list(key[1]))
                except StaticIntsNeeded:
                    return _INTS_STATIC
                except Exception:        # noqa: BLE001 (the blocking path raises it clearly)
                    return _NO_TIER
                if built.ready(leaves):
                    self._specs[key] = built
                    self._count(built, leaves)
                    out = built.run(leaves)
                    if out is FREE_CHANGED:
                        return _NO_TIER
                    self.last_tier = built.tier
                    return out
            if p is None:
                try:
                    p = self._start_background(key, trees, leaves, built)
                except StaticIntsNeeded:
                    return _INTS_STATIC
                except Exception:        # noqa: BLE001 (the blocking path raises it clearly)
                    return _NO_TIER
                if p is None:
                    return _NO_TIER
            start = None
            if not p.started:
                p.started = True
                start = p.thread
        self.last_tier = "numpy"
        try:
            return p.run(leaves)
        finally:     # the compile starts once the first call is done (it needs the GIL)
            if start is not None:
                _start_compile_thread(start)

    def _sibling(self, key):
        """Is there a specialization whose arguments differ from `key`'s in sizes only (the
        same pytrees, dtypes, ranks, and dimensions of 1)?"""
        trees, avals = key
        want = [_size_free(a) for a in avals]
        return any(k[0] == trees and [_size_free(a) for a in k[1]] == want
                   for k in list(self._specs))

    def _start_background(self, key, trees, leaves, built=None):
        """Start building `key`'s specialization off the caller's thread (`built`: already
        generated, only Numba's compilation is left)."""
        in_avals = list(key[1])
        dyn = self.dynamic_ints and any(a.weak and a.dtype.kind in "iu" for a in in_avals)
        if built is not None:
            core, ranked = built.core, False
        else:
            try:
                core, ranked, folded = self._core_for(trees, in_avals, False)
            except Exception as e:
                if dyn:
                    raise StaticIntsNeeded(str(e)) from e
                raise
            if dyn and not ints_stay_dynamic(core, int_params(core, in_avals)):
                raise StaticIntsNeeded("an int argument's value is needed when generating code")
        p = Pending(self, core, _origin(self))
        self._pending[key] = p
        self.build_count += 1          # (compile_count: when it is built, _background)
        t = threading.Thread(target=self._background, name=f"transpile-jit-{self.__name__}",
                             args=(key, trees, in_avals, list(leaves), core, ranked, dyn, p,
                                   built),
                             daemon=True)
        p.thread = t
        return p

    def _background(self, key, trees, in_avals, leaves, core, ranked, dyn, p, built=None):
        """Build and compile one specialization off the caller's thread; on success the next
        call of that signature runs the compiled code. Warnings wait for the next call.
        Numba compiles in a worker process (compile/worker.py) unless TRANSPILE_COMPILE_WORKER=0
        or no worker can: then here."""
        _TLS.defer = self._deferred
        # started first: the worker imports Numba while this thread generates the module
        w = WorkerCompile() if built is None and compile_worker.enabled() else None
        try:
            try:
                c = built if built is not None else self._finish_build(
                    trees, in_avals, core, ranked, int_params if dyn else None, False,
                    defer_load=w is not None)
                with self._compile_lock:
                    new = self._new_code(c, leaves)
                outcome, w = self._compile_in_worker(c, leaves, w)
                if outcome == "exiting":
                    return         # the program ends; the worker fills the cache alone
                if outcome == "crashed":
                    p.failed = True
                    self._warn(f"jit({self.__name__}): compiling in a worker process failed "
                               f"({w.detail}; module {c.plan.path}); this signature keeps "
                               "running the NumPy version.")
                    return
                c.precompile(leaves)       # (after a worker: a load from the disk cache)
                if outcome == "compiled":
                    w.record(c)
            except StaticIntsNeeded:
                self.dynamic_ints = False     # the next call keys on int values, builds again
                self._forget_fast()
                p.failed = True
                return
            except Exception as e:        # noqa: BLE001 (reported once; NumPy keeps running)
                p.failed = True
                self._warn(f"jit({self.__name__}): compiling in the background failed "
                           f"({type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}); "
                           "this signature keeps running the NumPy version.")
                return
            with self._compile_lock:
                if new:
                    self.compile_count += 1
                if self._pending.get(key) is p:
                    if c.fresh():
                        self._specs[key] = c
                    del self._pending[key]
            p.done = True
        finally:
            if w is not None:
                w.discard()
            _TLS.defer = None
            _BACKGROUND.discard(threading.current_thread())
            _switch_back()

    def _compile_in_worker(self, c, leaves, w):
        """Have a worker process compile `c`'s module for these arguments' types into the disk
        cache, waiting for it without the GIL. (outcome, worker): "compiled" (precompile then
        loads it), "refused" (handled: the NumPy version or vmap's loop, one warning),
        "crashed", "exiting" or "none" (compile here: no worker, nothing to compile from a
        file, or a worker that could not run)."""
        sig = c.numba_signature(leaves)
        if sig is None:
            return "none", w
        if w is None:
            if not compile_worker.enabled():
                return "none", w
            w = WorkerCompile()
        outcome, detail = w.run(c.plan.path, c.plan.entry, [sig],
                                prepare=lambda: (c.load(), initialize_runtime()))
        w.detail = detail
        if outcome == "refused":
            c.load()
            c.refused(WorkerError(detail), leaves)
        elif outcome == "unavailable":
            outcome = "none"
        return outcome, w

    def _flush_warnings(self):
        while self._deferred:
            self._warn(self._deferred.pop(0))

    def compile(self, *args, **kwargs):
        """Compile for these example arguments now (blocking) without running the function:
        ahead-of-time warm-up, as JAX's jit(f).lower(*args).compile(). Returns self."""
        values = self.bind(args, kwargs)
        c, leaves = self.compiled_for_values(values)
        if not c.checked:
            with c.lock:
                if not c.checked:
                    c.precompile(leaves)
        self._flush_warnings()
        return self

    def wait(self, timeout=None):
        """Block until every background compile of this function has finished."""
        for p in list(self._pending.values()):
            if p.thread is not None and p.started and p.thread.ident is not None:
                p.thread.join(timeout)
        self._flush_warnings()
        return self

    def compiled_for_values(self, values):
        """(compiled specialization, flat leaves) for bound argument values."""
        leaves, trees = self.flatten_args(values)
        key = (trees, tuple([_fast_aval(v) for v in leaves]))
        try:
            return self.compiled_for(key, trees, leaves), leaves
        except StaticIntsNeeded:
            self.dynamic_ints = False         # specialize on int values from now on
            self._forget_fast()
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
            self._count(c, leaves)
            return c

    def _count(self, c, leaves):
        """Count a specialization built: compiled, unless its lowered code is that of one of
        this function's specializations (another batch size: the same dispatcher)."""
        self.build_count += 1
        if self._new_code(c, leaves):
            self.compile_count += 1

    def _new_code(self, c, leaves):
        """Does running `c` on `leaves` need Numba to compile: code other than that of this
        function's other specializations, or the same code for argument types (a layout)
        it was not compiled for?"""
        path = c.plan.path
        if path is None or not any(s is not c and s.plan.path == path
                                   for s in list(self._specs.values())):
            return True
        return not c.ready(leaves)

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
        core, ranked, _ = self._core_for(trees, in_avals, per_example)
        return self._finish_build(trees, in_avals, core, ranked, dynamic_int_params, per_example)

    def _core_for(self, trees, in_avals, per_example):
        """(core, ranked, folded): the core Python to specialize for these avals."""
        passed = self._vmap_passed(trees, in_avals) if isinstance(self.fun, Vmap) else None
        ranked = getattr(self.fun, "accepts_ranks", False) or passed is not None
        folded = in_avals if self._chain_preserves_shapes() else None
        with _PIPELINE_LOCK:
            try:
                core = self._core_with(trees, in_avals, ranked, per_example, folded, passed)
            except ShapesNeeded:
                # a comprehension over an array under vmap: one example's shapes, then
                inner = example_avals(self.fun, trees, in_avals) if folded is None else None
                if inner is None:
                    raise
                core = self._core_with(trees, in_avals, ranked, per_example, inner, passed)
        return core, ranked, folded

    def _vmap_passed(self, trees, in_avals):
        """jit(vmap(f)): which parameters follow in_axes, or None where the avals do not tell.
        A parameter without a default does. One with a default whose leaves are all scalars
        is taken as left to its default, not mapped (a scalar has no axis to map: vmap of
        f(x, p=3.0) maps x only). Then vmap picks its batching rules by the ranks."""
        params = self.fun._params
        if self.fun._star or len(params) != len(trees):
            return None
        passed, k = [], 0
        for p, tree in zip(params, trees):
            n = tree.num_leaves
            leaves, k = in_avals[k:k + n], k + n
            if p.default is inspect.Parameter.empty:
                passed.append(True)
            elif all(len(a.shape) == 0 for a in leaves):
                passed.append(False)
            else:
                return None
        return tuple(passed)

    def _finish_build(self, trees, in_avals, core, ranked, dynamic_int_params, per_example,
                      defer_load=False):
        """Specialize, fuse, lower and load `core` (Numba compiles on the first call or in
        Compiled.precompile). `defer_load`: write the lowered module but load it (import
        Numba) only when Compiled.precompile needs it (a worker process compiles it)."""
        if dynamic_int_params is not None and not ints_stay_dynamic(
                core, dynamic_int_params(core, in_avals)):
            raise StaticIntsNeeded("an int argument's value is needed when generating code")
        with _PIPELINE_LOCK:
            plan = self._plan(core, in_avals)
        plan.retry = None
        plan.defer_load = defer_load
        if ranked and isinstance(self.fun, Vmap) and not per_example:
            # the batched code may have a step Numba cannot lower: then one compiled loop over
            # the batch around the function (each example runs the code jit(f) would)
            plan.retry = lambda: self._build_core(trees, in_avals, dynamic_int_params, True)
        fn = None
        try:
            compile_fn = backends.get(self.backend)
            with _PIPELINE_LOCK:
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

    def _core_with(self, trees, in_avals, ranked, per_example, folded, passed=None):
        """The core to compile; `folded`: the avals the user function's parameters have, when
        its shape queries are folded while it is normalized (transpile/api/shape_folding.py)."""
        token = SPECIALIZE.set(shape_folder(folded)) if folded is not None else None
        try:
            if ranked:
                # jit knows every leaf's rank: vmap can then pick its batching rules instead of
                # falling back to a loop over the batch (`passed`: the parameters that follow
                # in_axes, _vmap_passed)
                if passed is None:
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
        if self.backend not in ("cpu", "numba"):
            return None
        plan.allow_breaks = True
        plan.defer_load = False
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
        try:
            return plan.retry()
        except (Unlowerable, TranspileError):
            return None

    def _plan(self, core, in_avals):
        free_vals = [read_binding(where) for _, where, _ in core.free]
        avals = list(in_avals) + [aval_of(v) for v in free_vals]
        static_arrays = [n for n, o in core.statics.items() if isinstance(o, np.ndarray)]
        body, outs, av, in_place, owned = optimized_body(core, avals,
                                                         list(core.params) + static_arrays)
        sig = "signature: " + ", ".join(f"{p}: {_type_text(a)}" for p, a in zip(core.params, avals))
        origin = _origin(self)
        plan = Plan(self, core, body, outs, av, list(core.params) + static_arrays, avals, sig,
                    origin)
        plan.in_place = in_place
        plan.owned = owned
        return plan

    def _chain_preserves_shapes(self):
        f = self.fun
        while isinstance(f, Transform):
            if not isinstance(f, _SHAPE_PRESERVING + (Jit,)):
                return False
            f = f.fun
        return True

    def _warn(self, message):
        deferred = getattr(_TLS, "defer", None)
        if deferred is not None:        # a background compile: the next call warns
            if message not in self._warned and message not in deferred:
                deferred.append(message)
            return
        key = message
        if key in self._warned:
            return
        code = getattr(_innermost(self), "__code__", None)
        where = (code.co_filename, code.co_firstlineno) if code is not None else None
        warn(message, TranspileWarning, where)   # at the user's call (or function), not here
        self._warned.add(key)      # (once shown: a warning raised as an error is raised again)

    # -- inspection ------------------------------------------------------------------------------

    def show_source(self, *args, **kwargs):
        """The lowered source Numba compiles for these example arguments, after a comment
        saying which tier this signature runs and which one the last call ran."""
        text = self._lowered_text(args, kwargs)
        key = self._key_of(args, kwargs)
        c = self._specs.get(key) if key is not None else None
        tier = (c.delegate or c).tier if c is not None else "not built"
        pending = c is None and key is not None and key in self._pending
        mark = "//" if self.backend == "cupy" else "#"      # (CUDA C source for cupy)
        head = (f"{mark} jit tier of this signature: {tier}"
                + (" (a background compile is running; calls run NumPy meanwhile)"
                   if pending else "")
                + f"; the last call ran: {self.last_tier or 'none yet'}\n")
        return head + text

    def _key_of(self, args, kwargs):
        try:
            leaves, trees = self.flatten_args(self.bind(args, kwargs))
            return (trees, tuple([_fast_aval(v) for v in leaves]))
        except Exception:      # noqa: BLE001 (only for the comment)
            return None

    def _lowered_text(self, args, kwargs):
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
        """The lowered module's text for these example arguments (as in its file)."""
        return self._lowered_text(args, kwargs)

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


def jit(fun=None, static_argnums=(), static_argnames=(), backend="cpu", wait=None, *,
        donate_argnums=(), donate_argnames=(), inline=False, keep_unused=False):
    """Compile `fun` per abstract signature (shapes, dtypes, static values) with Numba.

    Usable bare (@jit), with arguments (@jit(static_argnames="normal")) or as jit(f, ...).
    backend: "cpu" (Numba, default), "numpy" (no compilation), or one registered in
    transpile.lowering.backends.BACKENDS (the GPU backends register "cupy"/"cuda").

    Tiers: by default a call never waits for the compiler. The first call of a new signature
    runs the generated NumPy code while Numba compiles in the background (in a worker process
    that fills the disk cache; TRANSPILE_COMPILE_WORKER=0: in a thread); later calls run the
    compiled code once it is ready (`jit(f).last_tier` says which ran). wait=True
    makes calls compile first (the old behaviour; also TRANSPILE_TIERS=0 for every function);
    `jit(f).compile(*example_args)` compiles ahead of time, `jit(f).wait()` waits for the
    background compiles.

    donate_argnums/donate_argnames, inline and keep_unused are accepted for code written for
    jax.jit and change nothing: the arguments' buffers are never reused for the outputs (a
    donated argument keeps its value), and a jit function called inside another transform is
    always inlined there.
    """
    del donate_argnums, donate_argnames, inline, keep_unused
    if fun is None:
        return lambda f: Jit(f, static_argnums, static_argnames, backend, wait)
    return Jit(fun, static_argnums, static_argnames, backend, wait)


def _shard_compiler(fun, static_argnums=(), backend=None):
    """pmap's per-shard compiler: each shard calls the jitted function (Numba code is nogil)."""
    gpu = (backend or "").lower() in ("gpu", "cuda")
    try:                                # GPU shards: generated CUDA kernels on the shard's stream
        # (shards wait for the compiler: every shard of a step runs the same tier)
        j = Jit(fun, static_argnums=static_argnums, backend="cupy" if gpu else "cpu",
                wait=True)
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
    set_shard_compiler(_shard_compiler)


_install_pmap_hook()
