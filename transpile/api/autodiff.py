"""Public transforms: grad, value_and_grad, jvp, vjp, show, generated_path, and `Transform`,
the base class of every transform object (jacfwd/jacrev/jacobian, built on jvp/vjp, are in
api/jacobian.py; hessian in api/jacobian_composed.py; how arguments are read, in
api/arguments.py).

A transformed function specializes on the pytree structure of its arguments (and on the values
of Python bool/int/str arguments, which act as static values, as in JAX's static_argnums).
For each specialization it builds core Python, transforms it, writes the generated source to a
file and loads it. Before every call it checks that the globals and functions the code was
generated from are still the same objects, so it never runs stale code.
"""
import functools
import inspect
import threading

import numpy as np

from transpile.core.tracebacks import api_boundary
from transpile.core import codegen, ir as _ir
from transpile.frontend import transform_registry
from transpile.frontend.transform_registry import example_avals
from transpile.frontend.callables import build_core_bound, callable_name, unwrap_callable
from transpile.optimize.inplace import for_printing
from transpile.errors import ShapesNeeded, TranspileError
from transpile.core.ir import CoreFn, Eqn, Var
from transpile.primitives import lookup
from transpile.primitives.internal.control import write_back
from transpile.primitives.registry import REQUIRED
from transpile.frontend.normalize.normalizer import SPECIALIZE, build_core
from transpile.frontend.parse import read_binding
from transpile.pytree import LEAF, TreeDef, tree_flatten, tree_unflatten
from transpile.api.shape_folding import shape_folder
from transpile.compile.dynamic_ints import is_dynamic_int
from transpile.compile.specialization import refuse_overlap
from transpile.api.arguments import (  # noqa: F401  (spec_flatten: re-exported for api/jit.py)
    STATIC_TYPES, bind_call, check_complex, check_float, copy_arrays, leaf_ranges, norm_argnums,
    spec_flatten, tangent_like, tree_map_zeros, walk_tree, float0_tangents, float0_outputs)
from transpile.ad.modes import forward_core, reverse_core
from transpile.ad.reverse import make_core
from transpile.core.avals import aval_of


class Specialization:
    """Generated code for one argument structure."""

    def __init__(self, core, fn, path, text):
        self.core, self.fn, self.path, self.text = core, fn, path, text
        self.deps = list(getattr(core, "deps", []))
        self.writes_args = any(e.prim is write_back for e in _ir.walk_eqns(core.body))

    def fresh(self):
        for where, obj in self.deps:
            try:
                now = read_binding(where)
            except Exception:
                return False
            if now is not obj and not (type(now) is type(obj) and _literal_equal(now, obj)):
                return False
        return True

    def free_values(self):
        return [read_binding(where) for _, where, _ in self.core.free]


def _literal_equal(a, b):
    try:
        return bool(a == b)
    except Exception:
        return False


def _signature(fun):
    if isinstance(fun, Transform):
        if hasattr(fun, "_defaults_seen"):     # (set up: not while its __init__ reads it)
            fun.fresh_defaults()
        return fun.signature
    prim = lookup(fun)
    if prim is not None:
        return inspect.Signature([inspect.Parameter(p.name, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                                  for p in prim.params if p.kind == "pos" and p.default is REQUIRED])
    try:
        return inspect.signature(fun)
    except (TypeError, ValueError):
        raise TranspileError(f"cannot transform {fun!r}: no Python signature") from None


def _defaults_source(fun):
    """The Python function whose __defaults__/__kwdefaults__ give fun's parameter defaults
    (through bound methods, functools.partial and transforms), or None."""
    seen = 0
    while seen < 32:
        seen += 1
        if isinstance(fun, Transform):
            fun = fun.fun
        elif isinstance(fun, functools.partial):
            fun = fun.func
        elif inspect.ismethod(fun):
            fun = fun.__func__
        else:
            break
    return fun if hasattr(fun, "__defaults__") and hasattr(fun, "__code__") else None


def _defaults_state(src):
    if src is None:
        return None
    kw = getattr(src, "__kwdefaults__", None)       # (a Numba dispatcher has none)
    return getattr(src, "__defaults__", None), kw, tuple(kw.items()) if kw else ()


def _same_defaults(src, seen):
    """The same default objects as when `seen` was taken (compared by identity: a default
    replaced by an equal value of another type counts as replaced)."""
    d, kw, items = seen
    if getattr(src, "__defaults__", None) is not d or \
            getattr(src, "__kwdefaults__", None) is not kw:
        return False
    now = tuple(kw.items()) if kw else ()
    return len(now) == len(items) and all(
        a is c and b is e for (a, b), (c, e) in zip(now, items))


def _transformed_partial(fun):
    """functools.partial of a transformed function (partial(jit(f), n=2)), maybe nested."""
    while isinstance(fun, functools.partial):
        fun = fun.func
    return isinstance(fun, Transform) or hasattr(fun, "__transpile_core__")


def partial_core(fun, in_trees):
    """The core of functools.partial(T, *args, **kw) of a transformed T: T's core for the
    bound values' structures, the bound arrays read from the partial at each call (as free
    variables), the keyword-bound ones passed as arguments (its signature keeps them)."""
    inner = fun.func
    names = list(_signature(inner).parameters)
    k = len(fun.args)
    if k > len(names):
        raise TypeError(f"{_fname(fun)}: too many positional arguments bound")
    trees, bound = [], []
    for i, v in enumerate(fun.args):
        dyn, tree = spec_flatten(v)
        if dyn and tree != LEAF:
            raise TranspileError(f"cannot transform {fun!r}: a bound positional argument that "
                                 "is a pytree of arrays (bind it by keyword instead)")
        trees.append(tree)
        if dyn:
            bound.append((i, names[i]))
    core = core_of(inner, tuple(trees) + tuple(in_trees))
    n_user = len(core.params) - len(core.free)
    n_bound = len(bound)
    leaf_params = core.params[:n_user]
    bound_params = leaf_params[:n_bound]
    free = [(p, ("item", ("attr", fun, "args"), i), f"argument {name!r} bound by partial")
            for p, (i, name) in zip(bound_params, bound)] + list(core.free)
    params = leaf_params[n_bound:] + bound_params + [p for p, _, _ in core.free]
    new = make_core(core, "", list(core.body), params, list(core.outs), core.out_tree)
    new.free = free
    new.deps = getattr(core, "deps", [])
    return new


def core_of(fun, in_trees, static_args=None):
    if isinstance(fun, Transform) or hasattr(fun, "__transpile_core__"):
        return fun.__transpile_core__(in_trees)
    if isinstance(fun, functools.partial) and _transformed_partial(fun):
        return partial_core(fun, in_trees)
    if not callable(fun):
        raise TypeError(f"expected a function, got {type(fun).__name__}")
    prim = lookup(fun)
    if prim is not None:
        return primitive_core(prim, in_trees)
    if unwrap_callable(fun) is not None:      # functools.partial, bound method, classmethod
        return build_core_bound(fun, in_trees, build_core)
    return build_core(fun, in_trees, static_args)


def primitive_core(prim, in_trees):
    """A NumPy function with a rule (np.exp, np.linalg.det, ...) as a one-statement function."""
    names = [p.name for p in prim.params if p.kind == "pos" and p.default is REQUIRED]
    for t in in_trees:
        if t.kind != "leaf":
            raise TranspileError(f"{prim.path} takes array arguments, got the structure {t}")
    eqn = Eqn("out", prim, {n: Var(n) for n in names})
    return CoreFn(name=prim.name, params=names, body=[eqn], outs=[Var("out")], out_tree=LEAF,
                  filename="<numpy>")


def _origin(fun):
    f = fun
    while isinstance(f, Transform):
        f = f.fun
    if unwrap_callable(f) is not None:
        f = unwrap_callable(f)[0]
    if lookup(f) is not None:
        return lookup(f).path
    code = getattr(f, "__code__", None)
    if code is None:
        return repr(f)
    return f"{code.co_filename}:{code.co_firstlineno} ({f.__qualname__})"


class Transform:
    """Base class: a callable wrapping `fun`, generating code per argument structure."""

    suffix = ""
    keeps_shapes = False    # the function sees the arguments' shapes (grad, jvp, vjp, jit)
    ints_as_values = False  # Python int arguments are run-time values, not code constants

    def __init__(self, fun):
        if not callable(fun):
            raise TypeError(f"{type(self).__name__.lower()} expects a function, got {fun!r}")
        self.fun = fun
        self.signature = _signature(fun)
        self._params = list(self.signature.parameters.values())
        self._defaults_src = _defaults_source(fun)
        self._defaults_seen = _defaults_state(self._defaults_src)
        # f(*args) / f(**kwargs): bind() gives one value per positional argument of the call
        # (argnums count them, as in JAX), then the keyword-only ones, then one dict of the
        # extra keywords
        self._star = any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in self._params)
        self._cache = {}
        self._needs_shapes = set()      # argument structures whose code needs their shapes
        self._static_ints = False       # an int's value was needed when generating code
        self._lock = threading.Lock()
        functools.update_wrapper(self, fun, updated=())
        if not hasattr(self, "__name__"):       # functools.partial has no __name__
            self.__name__ = callable_name(fun)

    # -- arguments ---------------------------------------------------------------------------

    def fresh_defaults(self):
        """Re-read the signature where the function's defaults were replaced since
        (f.__defaults__ = (3.0,)): a call that leaves an argument out takes the new default.
        True when they were."""
        inner = self.fun.fresh_defaults() if isinstance(self.fun, Transform) else False
        src = self._defaults_src
        if src is None or (not inner and _same_defaults(src, self._defaults_seen)):
            return inner
        self._defaults_seen = _defaults_state(src)
        self.signature = _signature(self.fun)
        self._params = list(self.signature.parameters.values())
        self.defaults_replaced()
        return True

    def defaults_replaced(self):
        """What a subclass keeps that was made from the old defaults (jit's fast paths)."""

    def bind(self, args, kwargs):
        """Arguments -> one value per parameter (defaults applied)."""
        if not kwargs and len(args) == len(self._params) and not self._star:
            return list(args)
        self.fresh_defaults()
        try:
            ba = self.signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{self.__name__}(): {e}") from None
        ba.apply_defaults()
        if not self._star:
            return [ba.arguments[p.name] for p in self._params]
        return bind_call(self.signature, args, kwargs)

    def flatten_args(self, values):
        ints = self.ints_as_values and not self._static_ints
        leaves, trees = [], []
        for v in values:
            dyn, tree = spec_flatten(v, dynamic_ints=ints)
            leaves += dyn
            trees.append(tree)
        return leaves, tuple(trees)

    def ints_were_needed(self, leaves):
        """The code for dynamic Python ints could not be generated (an int used where its
        value must be known: a list index, a static shape): from now on they are static
        values (the cache keys on them). False when there was nothing to change."""
        if self.ints_as_values and not self._static_ints and any(
                is_dynamic_int(l) for l in leaves):
            self._static_ints = True
            return True
        return False

    # -- code ----------------------------------------------------------------------------------

    def __transpile_core__(self, in_trees):
        raise NotImplementedError

    def specialize(self, in_trees):
        spec = self._cache.get(in_trees)
        if spec is not None and spec.fresh():
            return spec
        with self._lock:
            spec = self._cache.get(in_trees)
            if spec is None or not spec.fresh():
                core = self.__transpile_core__(in_trees)
                fn, path, text = codegen.load(for_printing(core), _origin(self))
                spec = Specialization(core, fn, path, text)
                self._cache[in_trees] = spec
        return spec

    def specialize_for(self, trees, leaves):
        """specialize(trees); when the code needs the arguments' shapes (a comprehension over
        an array), generated for these shapes instead (cached per shape and dtype)."""
        if trees not in self._needs_shapes:
            try:
                return self.specialize(trees)
            except ShapesNeeded:
                if example_avals(self, trees, [aval_of(leaf) for leaf in leaves]) is None:
                    raise
                self._needs_shapes.add(trees)
        avals = [aval_of(leaf) for leaf in leaves]
        key = (trees, tuple((a.shape, a.dtype.str, a.weak) for a in avals))
        spec = self._cache.get(key)
        if spec is not None and spec.fresh():
            return spec
        with self._lock:
            token = SPECIALIZE.set(shape_folder(example_avals(self, trees, avals)))
            try:
                core = self.__transpile_core__(trees)
            finally:
                SPECIALIZE.reset(token)
            fn, path, text = codegen.load(for_printing(core), _origin(self))
            spec = Specialization(core, fn, path, text)
            self._cache[key] = spec
        return spec

    @api_boundary     # tracebacks without transpile\'s frames (core/tracebacks.py)
    def __call__(self, *args, **kwargs):
        values = self.bind(args, kwargs)
        leaves, trees = self.flatten_args(values)
        self.check_args(values, trees)
        try:
            spec = self.specialize_for(trees, leaves)
        except TranspileError:
            if not self.ints_were_needed(leaves):
                raise
            leaves, trees = self.flatten_args(values)
            spec = self.specialize_for(trees, leaves)
        if spec.writes_args:       # f(a, a) where f writes into its arguments: refused
            refuse_overlap(f"{type(self).__name__.lower()}({self.__name__})", spec.core, leaves)
        out = spec.fn(*leaves, *spec.free_values())
        flat = list(out) if len(spec.core.outs) != 1 else [out]
        return self.finish(tree_unflatten(spec.core.out_tree, flat), values)

    def check_args(self, values, trees):
        pass

    def inner_avals(self, trees, avals):
        """The avals of the transformed function's parameters (see example_avals)."""
        return avals if self.keeps_shapes else None

    def finish(self, result, values):
        return result

    # -- inspection ----------------------------------------------------------------------------

    def default_trees(self):
        return tuple(LEAF for _ in self._params)

    @api_boundary
    def source_for(self, *args, **kwargs):
        if args or kwargs:
            leaves, trees = self.flatten_args(self.bind(args, kwargs))
            return self.specialize_for(trees, leaves).text    # (their shapes if needed)
        return self.specialize(self.default_trees()).text

    @property
    def source(self):
        """The generated source for array arguments (use show(f, *args) for other structures)."""
        return self.source_for()

    def source_path(self, *example_args, **example_kwargs):
        """Path of the generated file that runs for arguments like these (their pytree
        structure); with no arguments, for array arguments. Open it, or set a pdb breakpoint
        in it (`b PATH:LINE`); see also `transpile.debug_call`."""
        if example_args or example_kwargs:
            _, trees = self.flatten_args(self.bind(example_args, example_kwargs))
        else:
            trees = self.default_trees()
        return self.specialize(trees).path

    def __repr__(self):
        return f"<{type(self).__name__.lower()} of {getattr(self.fun, '__qualname__', self.fun)}>"

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)


class Plain(Transform):
    """No transform: the user's function in core form (what `show` prints for a plain function)."""

    keeps_shapes = True
    ints_as_values = True

    def __transpile_core__(self, in_trees):
        return core_of(self.fun, in_trees)


def _fname(fun):
    f = fun
    while isinstance(f, Transform):
        f = f.fun
    return getattr(f, "__name__", None) or callable_name(f)


class Grad(Transform):
    """grad / value_and_grad."""

    keeps_shapes = True
    ints_as_values = True

    def __init__(self, fun, argnums=0, has_aux=False, with_value=False, holomorphic=False):
        super().__init__(fun)
        self.single, self.argnums = norm_argnums(
            argnums, None if self._star else len(self._params), _fname(fun))
        self.has_aux = has_aux
        self.with_value = with_value
        self.holomorphic = bool(holomorphic)
        self.suffix = ("__value_and_grad" if with_value else "__grad") + \
            ("_holomorphic" if holomorphic else "")

    def check_args(self, values, trees):
        for a in self.argnums:
            if a >= len(trees):
                raise ValueError(f"argnums={a} is out of range: {_fname(self.fun)} was called "
                                 f"with {len(trees)} argument{'s' if len(trees) != 1 else ''}")
            if any(t.kind == "static" for t in walk_tree(trees[a])):
                check_float(values, (a,), "grad")
        check_float(values, self.argnums, "grad")
        if self.holomorphic:
            check_complex(values, self.argnums)

    def __transpile_core__(self, in_trees):
        inner = core_of(self.fun, in_trees)
        ranges = leaf_ranges(in_trees)
        wrt = [i for a in self.argnums for i in ranges[a]]
        fname = _fname(self.fun)
        if self.has_aux:
            t = inner.out_tree
            if t.kind not in ("tuple", "list") or len(t.children) != 2 or t.children[0].kind != "leaf":
                raise TranspileError(f"has_aux=True requires {fname} to return a pair "
                                     f"(scalar output, auxiliary data), got structure {t}")
        elif inner.out_tree.kind != "leaf":
            raise TranspileError(f"grad requires {fname} to return a scalar, but it returns the "
                                 f"structure {inner.out_tree}",
                                 hint="use has_aux=True to return (loss, extra)")
        body, _, grads, outs = reverse_core(inner, wrt, seed="scalar", fname=fname,
                                            holomorphic=self.holomorphic)
        gtrees = [in_trees[a] for a in self.argnums]
        gtree = gtrees[0] if self.single else TreeDef("tuple", tuple(gtrees))
        if self.has_aux:
            aux_tree = inner.out_tree.children[1]
            n_aux = aux_tree.num_leaves
            value, aux = outs[:1], outs[1:1 + n_aux]
        else:
            value, aux = outs[:1], []
        parts, trees = [], []
        if self.with_value:
            if self.has_aux:
                parts += value + aux
                trees.append(TreeDef("tuple", (LEAF, aux_tree)))
            else:
                parts += value
                trees.append(LEAF)
            parts += grads
            trees.append(gtree)
            out_tree = TreeDef("tuple", tuple(trees))
        elif self.has_aux:
            parts = grads + aux
            out_tree = TreeDef("tuple", (gtree, aux_tree))
        else:
            parts = grads
            out_tree = gtree
        core = make_core(inner, self.suffix, body, inner.params, parts, out_tree)
        core.deps = getattr(inner, "deps", [])
        return core


def grad(fun=None, argnums=0, has_aux=False, holomorphic=False):
    """Gradient of a scalar function, as generated reverse-mode source.

    grad(f)(x) is df/dx; argnums picks the argument(s), has_aux=True lets f return
    (loss, aux) and gives (grads, aux). Usable as @grad, @grad(argnums=1) or grad(f).
    Complex arguments follow JAX: for a real f, df/dx - i df/dy; holomorphic=True takes the
    complex derivative f'(z) of a complex-valued holomorphic f (complex inputs required).
    """
    if fun is None:
        return lambda f: Grad(f, argnums, has_aux, holomorphic=holomorphic)
    return Grad(fun, argnums, has_aux, holomorphic=holomorphic)


def value_and_grad(fun=None, argnums=0, has_aux=False, holomorphic=False):
    """(f(x), grad(f)(x)) from one generated function; with has_aux: ((f, aux), grads)."""
    if fun is None:
        return lambda f: Grad(f, argnums, has_aux, with_value=True, holomorphic=holomorphic)
    return Grad(fun, argnums, has_aux, with_value=True, holomorphic=holomorphic)


# ---- forward mode -------------------------------------------------------------------------


class JVP(Transform):
    """f(primals..., tangents...) -> (outputs, output tangents) for all array arguments."""

    keeps_shapes = True

    suffix = "__jvp"

    def __init__(self, fun, argnums=None):
        super().__init__(fun)
        self._every = argnums is None
        self.argnums = tuple(range(len(self._params))) if argnums is None else tuple(argnums)

    def nums(self, n_values):
        """The differentiated arguments (f(*args): every positional argument of this call;
        keyword-only parameters, bound after them, have no tangent)."""
        kw_only = sum(p.kind is p.KEYWORD_ONLY for p in self._params)
        return tuple(range(n_values - kw_only)) if self._star and self._every else self.argnums

    def __transpile_core__(self, in_trees):
        inner = core_of(self.fun, in_trees)
        ranges = leaf_ranges(in_trees)
        wrt = [i for a in self.nums(len(in_trees)) for i in ranges[a]]
        body, tparams, outs, touts = forward_core(inner, wrt)
        n_user = len(inner.params) - len(inner.free)
        params = inner.params[:n_user] + tparams + inner.params[n_user:]
        out_tree = TreeDef("tuple", (inner.out_tree, inner.out_tree))
        core = make_core(inner, self.suffix, body, params, outs + touts, out_tree)
        core.deps = getattr(inner, "deps", [])
        return core

    def call_with(self, primals, tangents):
        values = self.bind(primals, {})
        leaves, trees = self.flatten_args(values)
        tleaves = []
        for a in self.nums(len(values)):
            tl, tt = tree_flatten(tangents[a])
            pl, pt = tree_flatten(values[a])
            if [np.shape(x) for x in tl] != [np.shape(x) for x in pl] or len(tl) != len(pl):
                raise ValueError(f"jvp: tangent {a} must have the structure and shapes of primal "
                                 f"{a}: {[np.shape(x) for x in pl]} vs {[np.shape(x) for x in tl]}")
            tleaves += [tangent_like(t, p) for t, p in zip(tl, pl)
                        if not (isinstance(p, STATIC_TYPES) and not isinstance(p, np.generic))]
        spec = self.specialize_for(trees, leaves)
        if spec.writes_args:       # f(a, a) where f writes into its arguments: refused
            refuse_overlap(f"jvp({self.__name__})", spec.core, leaves)
        out = spec.fn(*leaves, *tleaves, *spec.free_values())
        flat = list(out) if len(spec.core.outs) != 1 else [out]
        half = len(flat) // 2      # (primal outputs, then their tangents)
        flat[half:] = [_tangent_dtype(t, p) for t, p in zip(flat[half:], flat[:half])]
        return tree_unflatten(spec.core.out_tree, flat)


def _tangent_dtype(t, p):
    """A tangent has its primal's dtype, as in JAX (a float32 primal's tangent is float32, where
    a rule's mask or count made it float64)."""
    pd, td = np.result_type(p), np.result_type(t)
    if pd == td or pd.kind != td.kind or pd.kind not in "fc":
        return t
    return tangent_like(t, p)


_JVP_CACHE = {}


def _cached(kind, fun, make):
    key = (kind, id(fun))
    hit = _JVP_CACHE.get(key)
    if hit is None or hit[0] is not fun:
        hit = (fun, make())
        _JVP_CACHE[key] = hit
    return hit[1]


def jvp(fun, primals, tangents, has_aux=False):
    """(fun(*primals), J @ tangents) by generated forward-mode source. has_aux=True: fun
    returns (output, aux), and jvp (output, its tangent, aux), as in JAX."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp(fun, primals, tangents): primals and tangents must be tuples")
    if len(primals) != len(tangents):
        raise ValueError(f"jvp: {len(primals)} primals but {len(tangents)} tangents")
    n = len(primals)
    t = _cached(("jvp", n), fun, lambda: JVP(fun, _given(fun, n)))
    out, tout = t.call_with(tuple(primals), float0_tangents(primals, tangents))
    if has_aux:
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise TypeError(f"jvp(..., has_aux=True): {_fname(fun)} must return a pair "
                            f"(output, aux), got {type(out).__name__}"
                            + (f" of length {len(out)}" if isinstance(out, (tuple, list)) else ""))
        return out[0], float0_outputs(out[0], tout[0]), out[1]
    return out, float0_outputs(out, tout)


def _given(fun, n):
    """argnums of the first n parameters when the others have defaults (None: all)."""
    return None if n >= len(_signature(fun).parameters) else tuple(range(n))


class VJP(Transform):
    """f(primals..., cotangents...) -> (outputs, input cotangents)."""

    keeps_shapes = True

    suffix = "__vjp"

    def __init__(self, fun, argnums=None):
        super().__init__(fun)
        self.argnums = argnums        # None: every argument (jacrev picks some)

    def __transpile_core__(self, in_trees):
        inner = core_of(self.fun, in_trees)
        n_user = len(inner.params) - len(inner.free)
        if self.argnums is None:
            wrt, wrt_trees = list(range(n_user)), tuple(in_trees)
        else:
            ranges = leaf_ranges(in_trees)
            wrt = [i for a in self.argnums for i in ranges[a]]
            wrt_trees = tuple(in_trees[a] for a in self.argnums)
        body, ctparams, grads, outs = reverse_core(inner, wrt, seed="cotangent")
        params = inner.params[:n_user] + ctparams + inner.params[n_user:]
        out_tree = TreeDef("tuple", (inner.out_tree, TreeDef("tuple", wrt_trees)))
        core = make_core(inner, self.suffix, body, params, outs + grads, out_tree)
        core.deps = getattr(inner, "deps", [])
        return core


def vjp(fun, *primals, has_aux=False, _argnums=None):
    """(fun(*primals), vjp_fn) where vjp_fn(cotangent) -> tuple of input cotangents.
    (_argnums, for jacrev: only those arguments are differentiated; the others' cotangents are
    None.)"""
    t = _cached("vjp" if _argnums is None else ("vjp", tuple(_argnums)), fun,
                lambda: VJP(fun, None if _argnums is None else tuple(_argnums)))
    values = t.bind(primals, {})
    leaves, trees = t.flatten_args(values)
    spec = t.specialize_for(trees, leaves)
    core = spec.core
    out_tree = core.out_tree.children[0]
    n_out = out_tree.num_leaves
    writes = any(e.prim is write_back for e in _ir.walk_eqns(core.body))
    snapshot = copy_arrays(leaves) if writes else leaves   # fun writes into its arguments:

    def inputs():                      # every vjp_fn call starts from the inputs as given
        return copy_arrays(snapshot) if writes else leaves
    # the primal output, from the same generated function with zero cotangents
    plain = _cached("plain", fun, lambda: Plain(fun))
    out = plain(*primals)
    if any(e.prim.diff_primal is not None for e in _ir.walk_eqns(core.body)):
        # a custom_vjp/custom_jvp call: its output under differentiation is fwd's / the
        # rule's (as in JAX), so the primal output comes from the generated code
        zeros = [np.zeros_like(leaf) for leaf in tree_flatten(out)[0]]
        out = tree_unflatten(core.out_tree,
                             list(spec.fn(*inputs(), *zeros, *spec.free_values())))[0]
    if has_aux:
        out, aux = out
    out_shapes = [np.shape(leaf) for leaf in tree_flatten(out)[0]]

    def vjp_fn(ct):
        if has_aux:
            ct = (ct, tree_map_zeros(aux))
        ct_leaves, ct_tree = tree_flatten(ct)
        if ct_tree != out_tree or len(ct_leaves) != n_out:
            raise ValueError(f"vjp_fn: cotangent structure {ct_tree} does not match the output "
                             f"structure {out_tree}")
        for i, (c, want) in enumerate(zip(ct_leaves, out_shapes)):
            if np.shape(c) != want:      # as in JAX: no broadcasting of a cotangent
                raise ValueError(f"vjp_fn: the cotangent of output {i} has shape "
                                 f"{np.shape(c)}, the output has shape {want}; a cotangent "
                                 "must have its output's shape (for a tensor-Jacobian product "
                                 "of a smaller V, differentiate np.tensordot(V, fun(x), "
                                 "axes=np.ndim(V)))")
        res = spec.fn(*inputs(), *ct_leaves, *spec.free_values())
        flat = list(res)
        grads = tree_unflatten(core.out_tree, flat)[1]
        if _argnums is not None:
            full = [None] * len(values)
            for a, g in zip(_argnums, grads):
                full[a] = g
            grads = full
        return tuple(grads)[:len(primals)]     # parameters left to their defaults: none
    pullback = Pullback(vjp_fn, spec.core, len(leaves), len(primals), has_aux or writes,
                        leaves, _fname(fun))
    return (out, pullback, aux) if has_aux else (out, pullback)


class Pullback:
    """vjp's function of the cotangent. Called, it runs the generated code; transformed again
    (vmap(pullback)(np.eye(n)): a Jacobian row by row, jit, grad through it) its core is the
    vjp's, the primal values bound to it as values read at each call."""

    def __init__(self, call, core, n_leaves, n_primals, refuse, leaves, fname):
        self._call, self._core, self._n = call, core, n_leaves
        self._n_primals, self._refuse, self._fname = n_primals, refuse, fname
        for i, leaf in enumerate(leaves):
            setattr(self, f"_primal{i}", leaf)
        self.__name__ = self.__qualname__ = f"vjp_fn of {fname}"

    @api_boundary     # tracebacks without transpile\'s frames (core/tracebacks.py)
    def __call__(self, ct):
        return self._call(ct)

    def __transpile_core__(self, in_trees):
        core = self._core
        if self._refuse:
            raise TranspileError(f"the vjp function of {self._fname} (has_aux=True, or a "
                                 "function that writes into its arguments) cannot be "
                                 "transformed again: call it as it is")
        out_tree, grad_tree = core.out_tree.children
        if tuple(in_trees) != (out_tree,):
            raise TranspileError(f"vjp_fn of {self._fname}: the cotangent has the structure "
                                 f"{in_trees[0] if len(in_trees) == 1 else in_trees}, the "
                                 f"output {out_tree}")
        n_user = len(core.params) - len(core.free)
        primal_params = core.params[:self._n]
        ct_params = core.params[self._n:n_user]
        kept = TreeDef("tuple", grad_tree.children[:self._n_primals])
        n_out = out_tree.num_leaves
        outs = core.outs[n_out:n_out + kept.num_leaves]
        free = [(p, ("attr", self, f"_primal{i}"), f"primal {i} of the vjp")
                for i, p in enumerate(primal_params)] + list(core.free)
        params = ct_params + primal_params + [p for p, _, _ in core.free]
        new = make_core(core, "__pullback", list(core.body), params, outs, kept)
        new.free = free
        new.deps = getattr(core, "deps", [])
        return new


# jacfwd/jacrev are marked in api/jacobian.py, hessian in api/jacobian_composed.py
for _f in (grad, value_and_grad):
    _f.__transpile_static__ = True
transform_registry.register_transform_function(grad)
transform_registry.register_transform_function(value_and_grad)
transform_registry.register_transform_class(Transform)
transform_registry.register_value_function("jvp", jvp)
transform_registry.register_value_function("vjp", vjp)
transform_registry.register_jvp_class(JVP)

# ---- inspection -----------------------------------------------------------------------------


@api_boundary
def show(fun, *example_args, **example_kwargs):
    """The generated source of a transformed function (for these example arguments' structure).

    A plain Python function shows its core-Python (normalized) form.
    """
    if hasattr(fun, "show_source"):
        return fun.show_source(*example_args, **example_kwargs)
    if not isinstance(fun, Transform):
        fun = Plain(fun)
    return fun.source_for(*example_args, **example_kwargs)


def generated_path(fun, *example_args, **example_kwargs):
    """Path of the generated file that `fun(*example_args)` runs, e.g.
    `generated_path(grad(loss), w, x)`; for jit, the lowered module Numba compiles.

    Equivalent to `fun.source_path(*example_args)`; a plain function gives the file of its
    core-Python (normalized) form."""
    if not hasattr(fun, "source_path"):
        fun = Plain(fun)
    return fun.source_path(*example_args, **example_kwargs)


def flat_example_args(transform, *args, **kwargs):
    """(core, flat args) of a Transform (grad(f), Plain(f), ...) for these example arguments."""
    if not isinstance(transform, Transform):
        transform = Plain(transform)
    values = transform.bind(args, kwargs)
    leaves, trees = transform.flatten_args(values)
    core = transform.__transpile_core__(trees)
    free = [read_binding(where) for _, where, _ in core.free]
    return core, list(leaves) + free
