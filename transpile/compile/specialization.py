"""One specialization of a jitted function: `Plan` (the specialized, fused core and what a
backend needs to print and load it) and `Compiled` (a backend's callable for it: converts the
arguments, makes the first call under a lock, falls back to the generated NumPy code when
Numba refuses the lowered code, and rebuilds the output pytree). Built by api/jit.py's Jit.
"""
import os
import time
import threading

import numpy as np

from transpile.core import codegen, ir
from transpile.core.ir import Var
from transpile.compile.backends import (DeferredModule, _call_guarding_cache, _compile_failed,
                                        _is_numba_error, _refused_construct)
from transpile.frontend.parse import read_binding
from transpile.errors import TranspileError
from transpile.primitives.internal.control import write_back
from transpile.primitives.numpy.nondiff import attr_c_contiguous
from transpile.pytree import tree_unflatten
from transpile.core.runtime_errors import located
from transpile.optimize.specialize import aval_of
from transpile.optimize.specialize_windows import MARK as WINDOW_MARK
from transpile_runtime import compile_worker, diskcache
from transpile_runtime.argument_overlap import overlapping
from transpile_runtime.backends.messages import ALIASED
from transpile.optimize.inplace import for_printing


class ArgumentsOverlap(TranspileError):
    """A call the generated code does not give NumPy's meaning to (jit of a plain function
    runs the function itself): two arguments share memory and the function writes into its
    arguments, or an argument it writes through a reshape of is not C-contiguous."""


class ArgumentNotContiguous(ArgumentsOverlap):
    """An argument the function writes through a reshape/ravel of is not C-contiguous."""


def contiguous_params(core):
    """Positions of the arguments whose reshape/ravel the code takes as a view and writes
    through (frontend/normalize/aliasing.py checks their layout: rt.attr_c_contiguous)."""
    found = getattr(core, "_contiguous_params", None)
    if found is None:
        index = {p: k for k, p in enumerate(core.params)}
        found = sorted({index[e.args["x"].name] for e in ir.walk_eqns(core.body)
                        if e.prim is attr_c_contiguous and isinstance(e.args["x"], Var)
                        and e.args["x"].name in index})
        core._contiguous_params = found
    return found


def refuse_overlap(name, core, leaves):
    """A function that writes into its arguments, called with two arguments that share memory
    (f(a, a)) or with an argument it writes through a reshape of that is not C-contiguous
    (NumPy's reshape copies then): an error, not other numbers than NumPy's (jit of a plain
    function catches it and runs the function itself)."""
    for k in contiguous_params(core):
        x = leaves[k] if k < len(leaves) else None
        if isinstance(x, np.ndarray) and not x.flags.c_contiguous:
            raise ArgumentNotContiguous(
                f"{name}: argument {core.params[k]!r} is not C-contiguous and the function "
                "writes into it or through a reshape/ravel of it; the generated code takes "
                "that reshape as a view (NumPy copies an array of this layout)",
                hint=f"pass np.ascontiguousarray(...) for {core.params[k]!r}")
    pair = overlapping(leaves)
    if pair is None:
        return
    params = list(core.params)
    which = [params[i] if i < len(params) else f"argument {i}" for i in pair]
    raise ArgumentsOverlap(
        f"{name}: arguments {which[0]!r} and {which[1]!r} share memory and the function writes "
        "into its arguments; transformed code treats each argument as its own array (NumPy "
        "would see a write through one name in the other)",
        hint="pass a copy of one of them (f(a, a.copy()))")


def deps_fresh(deps):
    """Is every (where, object) the code was generated from still bound to that object (or an
    equal value of the same type)?"""
    for where, obj in deps:
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


FREE_CHANGED = object()    # Compiled.run's answer when a free variable changed shape (not run)


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
        self.entry = None          # the lowered module's entry function (Numba backends)
        self._eager = None
        self.in_place = set()      # id() of setitem equations that may store in place
        self.owned = set()         # arguments written in place (optimize/no_raise.py)
        self.allow_breaks = False  # lower what Numba cannot compile as NumPy between parts
        self.reused = False        # the lowered text is one this process compiled already
        self.defer_load = False    # write the module, load it later (compile/backends.py)

    def eager_callable(self):
        if self._eager is None:
            fn, _, _ = codegen.load(for_printing(self.core), self.origin)
            n = len(self.core.outs)

            def run(*args):
                out = fn(*args[:len(self.core.params)])
                return (out,) if n == 1 else tuple(out)
            self._eager = run
        return self._eager


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
        # (backend="numpy" runs the NumPy version too: its results are NumPy's own, not
        # converted to the types compiled code would hold)
        self.eager = fn is None or backend_name == "numpy"
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
        # the function writes into an argument: arguments sharing memory are refused
        self.writes_args = any(e.prim is write_back for e in ir.walk_eqns(core.body))
        # the positions of the arguments it writes into (a 0-d array among them: compiled
        # code holds it as a number, so such a call runs the NumPy version, which writes it)
        dests = {e.args["dest"].name for e in ir.walk_eqns(core.body)
                 if e.prim is write_back and isinstance(e.args["dest"], Var)}
        self.written = [k for k, p in enumerate(core.params) if p in dests]
        self.worker = None        # what a worker process's compile did (api/jit.py)

    def fresh(self):
        return deps_fresh(self.spec_deps)

    def run(self, leaves):
        self.jit._last_run = self         # what jit(f).source shows
        if self.writes_args:
            refuse_overlap(f"jit({self.jit.__name__})", self.core, leaves)
        if self.delegate is not None:
            return self.delegate.run(leaves)
        free = [read_binding(w) for w in self.free]
        if self.free and tuple(aval_of(v) for v in free) != self.free_avals:
            return FREE_CHANGED
        if any(isinstance(leaves[k], np.ndarray) and leaves[k].ndim == 0
               for k in self.written if k < len(leaves)):
            return self.finish(self.plan.eager_callable()(*leaves, *free), convert=False)
        if not self.checked:
            with self.lock:
                if not self.checked:
                    self.precompile(leaves, free)
            if self.delegate is not None:       # vmap: one compiled loop over the batch
                return self.delegate.run(leaves)
        if self.eager:
            try:
                out = self.fn(*leaves, *free)
            except Exception as e:
                raise located(self, e, leaves, free)    # at the user's line
            return self.finish(out, convert=False)
        args = [_arg(v) for v in leaves] + [_arg(v) for v in free] + self.statics
        try:
            return self.finish(self.fn(*args))
        except Exception as e:
            return self.raised(e, leaves, free)

    def ready(self, leaves):
        """Is the compiled code for these arguments' types there already (a text another
        batch size compiled), so a call runs it without waiting for the compiler?"""
        if self.checked:
            return not self.eager
        if not self.plan.reused or not _is_numba_dispatcher(self.fn):
            return False
        free = [read_binding(w) for w in self.free]
        args = [_arg(v) for v in leaves] + [_arg(v) for v in free] + self.statics
        try:
            import numba   # (lazy: import transpile does not load Numba)
            return tuple(numba.typeof(a) for a in args) in self.fn.overloads
        except Exception:      # noqa: BLE001 (a type Numba does not know: not ready)
            return False

    @property
    def tier(self):
        """Which code a call of this specialization runs: 'compiled' or 'numpy'."""
        if self.delegate is not None:
            return self.delegate.tier
        return "numpy" if self.eager else "compiled"

    def precompile(self, leaves, free=None):
        """Compile the Numba code for these arguments' types without running it (the first
        call, a background compile, or jit(f).compile()). Numba refusing the code makes this
        specialization the per-example loop (vmap) or the NumPy version, with one warning.
        Serialized across processes by a lock on the cache entry (runtime/diskcache.py), so a
        second process loads what the first compiled."""
        if self.checked:
            return
        self.load()
        if not _is_numba_dispatcher(self.fn):    # another backend's callable: nothing to do
            self.checked = True
            return
        if free is None:
            free = [read_binding(w) for w in self.free]
        args = [_arg(v) for v in leaves] + [_arg(v) for v in free] + self.statics
        try:
            import numba   # (lazy: import transpile does not load Numba)
            sig = tuple(numba.typeof(a) for a in args)
            # (another batch size may have compiled this text for these types already)
            if not (self.plan.reused and sig in self.fn.overloads):
                with diskcache.entry_lock(self.plan.path):
                    if self.plan.path:
                        diskcache.verify(self.plan.path)
                    _call_guarding_cache(self.fn.compile, [sig], self.plan.path)
                    if self.plan.path:
                        diskcache.record(self.plan.path)
            if self.plan.text and "parallel=True" in self.plan.text:
                self.fn = AdaptiveThreads.wrap(self.fn)
        except Exception as e:
            if not _compile_failed(e):
                raise
            self.refused(e, leaves, free)
            return
        self.checked = True

    def numba_signature(self, leaves):
        """The Numba types `precompile` would compile the lowered module's entry for (what a
        worker process compiles into the disk cache, api/jit.py; described without Numba while
        the module's loading is deferred), or None when there is
        nothing to compile from a file: checked already, not a Numba dispatcher, no module
        file, types Numba does not know (precompile reports those), or compiled already for
        them (another batch size)."""
        if self.checked or not self.plan.path or not self.plan.entry:
            return None
        free = [read_binding(w) for w in self.free]
        args = [_arg(v) for v in leaves] + [_arg(v) for v in free] + self.statics
        if isinstance(self.fn, DeferredModule):
            try:     # typed as Numba types them, without importing Numba here yet
                return compile_worker.describe(args)
            except TypeError:
                self.load()
        if not _is_numba_dispatcher(self.fn):
            return None
        try:
            import numba   # (lazy: import transpile does not load Numba)
            sig = tuple(numba.typeof(a) for a in args)
        except Exception:      # noqa: BLE001 (precompile raises it where it is reported)
            return None
        if self.plan.reused and sig in self.fn.overloads:
            return None
        return sig

    def load(self):
        """Load a module whose loading was deferred (compile/backends.py DeferredModule)."""
        if isinstance(self.fn, DeferredModule):
            self.fn = self.fn.load()

    def refused(self, e, leaves, free=None):
        """Numba refused the lowered code (`e`: its error, here or in a worker process): this
        specialization becomes the per-example loop (vmap) or the NumPy version, warning once."""
        if free is None:
            free = [read_binding(w) for w in self.free]
        alt = self.jit._per_example(self.plan)
        if alt is not None:       # vmap: one compiled loop over the batch
            alt.precompile(leaves, free)
            self.delegate = alt
            self.checked = True
            return
        self.fall_back(e)

    def raised(self, e, leaves, free):
        """A call of the compiled code raised `e` (the arguments were `leaves`)."""
        if isinstance(e, IndexError) and str(e).startswith(WINDOW_MARK):
            return self.window_miss(e, leaves, free)
        if isinstance(e, ValueError) and str(e) == ALIASED:
            # arguments written in place share memory: nothing was written yet; this call
            # runs the NumPy version (its writes go through copies)
            return self.finish(self.plan.eager_callable()(*leaves, *free), convert=False)
        if _is_numba_error(e) and not self.eager:
            # a part of a function compiled in parts, compiled when first called, refused:
            # nothing was written into the arguments yet (writes come last), so this call
            # and the next ones run the NumPy version
            self.fall_back(e)
            self.jit._forget_fast()
            return self.finish(self.fn(*leaves, *free), convert=False)
        raise located(self, e, leaves, free)    # at the user's line (core/runtime_errors.py)

    def fast_finish(self):
        """out tuple -> the caller's result, as finish() does, specialized to this output."""
        if getattr(self.core.out_tree, "kind", None) == "leaf" and len(self.out_avals) == 1:
            av = self.out_avals[0]
            if av is not None and av.shape:
                return lambda out: out[0]
            if av is not None and not av.weak:
                ctor = av.dtype.type

                def one(out):
                    o = out[0]
                    return o if isinstance(o, np.ndarray) else ctor(o)
                return one
        return self.finish

    def window_miss(self, e, leaves, free):
        """A fixed-length window x[i:i + 3] reached past an end of the array in this call:
        NumPy gives a shorter slice there, which the compiled code cannot, so this call runs
        the NumPy version (the compiled code stops before it writes any argument)."""
        where, _, why = str(e)[len(WINDOW_MARK):].strip().partition(" | ")
        why = why or ("a slice with run-time bounds reached past an end of the array (NumPy "
                      "gives a shorter slice there)")
        self.jit._warn(f"jit({self.jit.__name__}): {where}: {why}; such calls run the NumPy "
                       "version.")
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


class AdaptiveThreads:
    """Calls a compiled function that has parallel loops with the number of threads that
    measures faster now: all of Numba's threads, or one. On a quiet machine the parallel
    loops win; with another process keeping a core busy, a parallel loop waits for its
    slowest thread (measured on 2 cores at load 6: selu of 1M float32 took 2.85 ms with 2
    threads, 0.62 ms with one). Every `period` seconds it times `probes` calls of each and
    keeps the one whose calls took less in all (probing less often while the answer stays).
    TRANSPILE_NUM_THREADS fixes the count instead (no probing); these loops are only
    generated for work of 2**18 elements or more, so the check costs nothing that shows."""

    period = 1.0
    probes = 3

    def __init__(self, fn, most):
        self.fn = fn
        self.most = most
        self.best = most
        self.next_probe = 0.0
        self.wait = self.period
        self.plan = []          # thread counts still to time in this probe
        self.times = {}

    @classmethod
    def wrap(cls, fn):
        import numba   # (lazy: import transpile does not load Numba)
        most = numba.config.NUMBA_NUM_THREADS
        if os.environ.get("TRANSPILE_NUM_THREADS") or most < 2:
            return fn
        return cls(fn, most)

    def __call__(self, *args):
        import numba   # (lazy: import transpile does not load Numba)
        now = time.monotonic()
        if not self.plan and now >= self.next_probe:
            self.plan = [self.most, 1] * self.probes
            self.times = {}
        try:
            k = self.plan.pop() if self.plan else None
        except IndexError:        # another thread (pmap shards) took the last probe
            k = None
        if k is not None:
            numba.set_num_threads(k)
            t0 = time.perf_counter()
            try:
                return self.fn(*args)
            finally:
                dt = time.perf_counter() - t0
                # the total, not the best, of each count's calls: on a busy machine a
                # parallel loop is now and then as fast as on a quiet one and often far slower
                self.times[k] = self.times.get(k, 0.0) + dt
                if not self.plan and self.times:
                    best = min(self.times, key=self.times.get)
                    # the same answer again: probe less often (up to every 16 s)
                    self.wait = min(self.wait * 2, 16.0) if best == self.best else self.period
                    self.best = best
                    self.next_probe = time.monotonic() + self.wait
        if numba.get_num_threads() != self.best:
            numba.set_num_threads(self.best)
        return self.fn(*args)


def _is_numba_dispatcher(fn):
    try:
        from numba.core.dispatcher import Dispatcher   # (lazy: import transpile does not load Numba)
    except ImportError:
        return False
    return isinstance(fn, Dispatcher)


def _arg(v):
    if isinstance(v, np.ndarray) and v.ndim == 0:
        return v[()]
    return v
