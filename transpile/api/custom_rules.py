"""User-defined rules: custom_vjp, custom_jvp, defrule; and check_grads / linearize.

A custom rule becomes a primitive in the same table as the built-in ones (see
transpile/primitives/registry.py), so the generated code calls it by name and its rule reads
like the built-in rules:

    @custom_vjp
    def clip_grad(x):
        return x

    def clip_fwd(x):
        return x, None                       # (output, residuals)

    def clip_bwd(res, g):
        return (np.clip(g, -1.0, 1.0),)      # one cotangent per argument

    clip_grad.defvjp(clip_fwd, clip_bwd)

    defrule(scipy.special.expit, "x", deriv={"x": "ans * (1 - ans)"})
"""
import functools
import inspect
import itertools

import numpy as np

from transpile.core.tracebacks import api_boundary
from transpile_runtime import custom_rules
from transpile.frontend import transform_registry
from transpile.errors import TranspileError
from transpile.core.ir import CoreFn, Eqn, Var
from transpile.primitives.registry import lookup, defprim as _defprim
from transpile.pytree import LEAF, TreeDef, tree_flatten, tree_map, tree_unflatten
from transpile.api.autodiff import jvp, vjp, Grad

_counter = itertools.count()


def _slot(base):
    name = "".join(ch if ch.isalnum() else "_" for ch in base) + f"_{next(_counter)}"
    return name


def _publish(name, fn):
    setattr(custom_rules, name, fn)
    return f"rt.custom_rules.{name}"


# ---- defrule ----------------------------------------------------------------------------------


def defrule(fn, sig=None, *, vjp=None, jvp=None, deriv=None, linear=(), nondiff=False,
            name=None):
    """Register a derivative rule for a NumPy/SciPy (or any) function that has none.

    sig: its parameters as a string ("x", "x, axis=None"); defaults to the function's own
    signature. Rules are template strings over the parameter names and
        g (cotangent of the result), ans (the result), <param>_dot (a tangent):
    deriv={"x": "ans * (1 - ans)"}    elementwise partial derivative (gives vjp and jvp)
    vjp={"x": "g * ..."}              reverse rule,   jvp={"x": "x_dot * ..."}  forward rule
    linear=("x",)                     the function is linear in these arguments.
    Returns the new primitive."""
    if lookup(fn) is not None:
        raise ValueError(f"{getattr(fn, '__name__', fn)!r} already has rules")
    if sig is None:
        try:
            sig = ", ".join(str(p) for p in inspect.signature(fn).parameters.values())
        except (TypeError, ValueError):
            msg = f"defrule: give the signature of {fn!r} as a string, e.g. 'x'"
            raise TypeError(msg) from None
    base = name or getattr(fn, "__name__", "rule")
    slot = _slot(base)
    path = _publish(slot, fn)
    kind = "elementwise" if deriv else "helper"
    return defprim(slot, fn, path, sig, deriv=deriv, vjp=vjp, jvp=jvp, linear=linear,
                   nondiff=nondiff, batch=kind)


def defprim(*args, **kwargs):
    """Registry entry for a rule the user supplied (left out of the built-in docs tables)."""
    return _defprim(*args, user_rule=True, **kwargs)


_SECOND_ORDER_HINT = (
    "a derivative of a custom_vjp/custom_jvp rule itself (second order through it: hessian, "
    "jacrev(grad), grad of grad) is not supported: the rule runs as opaque Python. Register "
    "the derivative with transpile.defrule(fn, vjp=..., jvp=... or deriv=...) instead: its "
    "template rules are differentiated to any order")


def rule_helper(name, fn, path, sig, what):
    """A run-time helper that runs the user's rule (fwd/bwd, or the jvp rule): no derivative
    flows through it, so differentiating it again must fail loudly, never give zeros."""
    return defprim(name, fn, path, sig, batch="helper", nondiff=True, opaque=True,
                   opaque_hint=_SECOND_ORDER_HINT, user_path=what)


# ---- custom_vjp / custom_jvp ------------------------------------------------------------------


def _one_output(fun):
    """The primal as generated code calls it: a custom rule's function gives one array (its
    rules, fwd/bwd or the jvp rule, speak about one output)."""
    @functools.wraps(fun)
    def primal(*args):
        out = fun(*args)
        if isinstance(out, (tuple, list, dict)):
            raise TypeError(f"{fun.__name__}: a custom_vjp/custom_jvp function returns one "
                            f"array inside a transform, not a {type(out).__name__} (several "
                            "outputs are not supported: give each output its own custom "
                            "function, or stack them into one array)")
        return out
    return primal


class _Layout:
    """How the flat leaves the generated code passes map to the user's arguments, for one
    structure of the arguments (pytrees, static values, nondiff_argnums)."""

    def __init__(self, custom, in_trees):
        self.in_trees = tuple(in_trees)
        self.nondiff = tuple(a for a in custom.nondiff_argnums if a < len(in_trees))
        self.diff = [a for a in range(len(in_trees)) if a not in self.nondiff]
        self.names, self.where = [], []    # per dynamic leaf: its name, (argument, position)
        taken = set(custom.names)
        for a, tree in enumerate(in_trees):
            arg = custom.names[a] if a < len(custom.names) else f"arg{a}"
            full = _full_leaves(tree)
            dyn = [j for j, t in enumerate(full) if t == LEAF]
            for j in dyn:
                name = arg if tree == LEAF else f"{arg}_{j}"
                while name in self.names or (name != arg and name in taken):
                    name += "_"
                self.names.append(name)
                self.where.append((a, j))

    def args(self, leaves, tangents=False):
        """The user's arguments around these dynamic leaves (static values put back; for
        tangents, zeros in their place)."""
        it = iter(leaves)
        out = []
        for tree in self.in_trees:
            full = [next(it) if t == LEAF else 0.0 if tangents else t.keys[0]
                    for t in _full_leaves(tree)]
            out.append(tree_unflatten(_all_leaves(tree), full))
        return out

    def sig(self):
        return ", ".join(self.names)


def _full_leaves(tree):
    """The leaf TreeDefs of a structure, static ones included, in order."""
    if tree.kind in ("leaf", "static"):
        return [tree]
    out = []
    for c in tree.children:
        out += _full_leaves(c)
    return out


def _all_leaves(tree):
    """The structure with its static leaves made leaves (to unflatten static values in)."""
    if tree.kind in ("leaf", "static"):
        return LEAF
    return TreeDef(tree.kind, tuple(_all_leaves(c) for c in tree.children), tree.keys)


class _Custom:
    """A function with a user-supplied derivative, usable inside any transform.
    nondiff_argnums: arguments with no derivative (a function, a setting), passed to the
    rules first, as in JAX."""

    takes_static_args = True     # a function passed in is a static argument (normalize/calls.py)

    def __init__(self, fun, nondiff_argnums=()):
        self.fun = fun
        functools.update_wrapper(self, fun, updated=())
        self.signature = inspect.signature(fun)
        self.names = list(self.signature.parameters)
        nums = (nondiff_argnums,) if isinstance(nondiff_argnums, int) else nondiff_argnums
        self.nondiff_argnums = tuple(sorted(a % len(self.names) if a < 0 and self.names else a
                                            for a in nums))
        for a in self.nondiff_argnums:
            if not 0 <= a < len(self.names):
                raise ValueError(f"{type(self).__name__}({fun.__name__}): nondiff_argnums "
                                 f"{nondiff_argnums!r} out of range ({len(self.names)} "
                                 "parameters)")
        self._defined = False
        self._prims = {}

    @api_boundary     # tracebacks without transpile\'s frames (core/tracebacks.py)
    def __call__(self, *args, **kwargs):
        return self.fun(*args, **kwargs)

    def _with_diff_primal(self, slot, primal, layout, **rules):
        """The row of f, and the row that stands for it where a derivative flows through the
        call (JAX: the primal output is fwd's / the jvp rule's, not f's): same rules, its
        result computed by `primal`."""
        functools.update_wrapper(primal, self.fun)
        dname = f"{slot}_diff_primal"
        dpath = _publish(dname, _one_output(primal))
        diff = defprim(dname, primal, dpath, layout.sig(), batch="helper", **rules)
        diff.diff_primal = diff       # marks generated code that runs it (api/autodiff.py vjp)
        fun = self.fun

        def plain(*leaves):
            return fun(*layout.args(leaves))
        functools.update_wrapper(plain, fun)
        impl = fun if layout.in_trees == tuple(LEAF for _ in layout.in_trees) else plain
        path = _publish(slot, _one_output(plain))
        return defprim(slot, impl, path, layout.sig(), batch="helper", diff_primal=diff,
                       **rules)

    def _prim_for(self, in_trees):
        key = tuple(in_trees)
        prim = self._prims.get(key)
        if prim is None:
            prim = self._prims[key] = self._make_prim(_Layout(self, key))
        return prim

    def __transpile_core__(self, in_trees):
        if not self._defined:
            raise TranspileError(f"{self.fun.__name__}: define its rule first "
                                 f"(.defvjp(fwd, bwd) or .defjvp(rule))")
        if len(in_trees) != len(self.names):
            raise TranspileError(f"{self.fun.__name__} takes {len(self.names)} arguments, "
                                 f"got {len(in_trees)}")
        try:
            hash(tuple(in_trees))
        except TypeError:
            raise TranspileError(f"{self.fun.__name__}: a static argument of a custom rule "
                                 "must be hashable") from None
        prim = self._prim_for(in_trees)
        params = [p.name for p in prim.params]
        body = [Eqn("out", prim, {p: Var(p) for p in params})]
        code = getattr(self.fun, "__code__", None)
        core = CoreFn(name=self.fun.__name__, params=params, body=body, outs=[Var("out")],
                      out_tree=LEAF, filename=code.co_filename if code else "<custom>")
        core.deps = []
        return core


def _leaf_of(tree_value, pos, what):
    """Leaf `pos` of a cotangent/tangent pytree given for an argument (None: zero)."""
    if tree_value is None:
        return None
    leaves = tree_flatten(tree_value)[0]
    if pos >= len(leaves):
        raise TypeError(f"{what}: the structure {tree_flatten(tree_value)[1]} does not match "
                        "its argument's")
    return leaves[pos]


class custom_vjp(_Custom):
    """JAX's custom_vjp: f.defvjp(fwd, bwd) with fwd(*args) -> (out, residuals) and
    bwd(*nondiff_args, residuals, g) -> tuple of cotangents (one per differentiated argument,
    a pytree like it). Where a derivative flows through a call, fwd runs in f's place (its
    output is the call's) and bwd in the backward sweep. Forward mode (jvp, jacfwd)
    transposes bwd, one call per output element (JAX refuses jvp of a custom_vjp).
    Derivatives of the rule itself (second order) are refused."""

    def defvjp(self, fwd, bwd):
        self.fwd, self.bwd = fwd, bwd
        self._defined = True
        self._prims = {}
        return self

    def _make_prim(self, layout):
        fwd, bwd, fname = self.fwd, self.bwd, self.fun.__name__
        names = layout.names
        slot = _slot(fname)
        rules, tangents = {}, {}
        for k, p in enumerate(names):
            a, pos = layout.where[k]
            if a in layout.nondiff:
                continue

            def back(*args, _k=k, _a=a, _pos=pos):
                *xs, g = args
                full = layout.args(xs)
                _, res = fwd(*full)
                cts = bwd(*[full[i] for i in layout.nondiff], res, g)
                n = len(layout.diff)
                if not isinstance(cts, tuple) or len(cts) != n:
                    raise TypeError(f"{fname}: bwd must return a tuple of {n} cotangents, got "
                                    f"{type(cts).__name__}"
                                    + (f" of length {len(cts)}" if isinstance(cts, tuple)
                                       else ""))
                ct = cts[layout.diff.index(_a)]
                if layout.in_trees[_a] != LEAF:
                    ct = _leaf_of(ct, _pos, f"{fname}: bwd's cotangent for "
                                            f"{self.names[_a]!r}")
                if ct is None:
                    return np.zeros_like(xs[_k])
                if np.shape(ct) != np.shape(xs[_k]):
                    raise ValueError(f"{fname}: bwd returned a cotangent of shape "
                                     f"{np.shape(ct)} for {names[_k]!r}, whose shape is "
                                     f"{np.shape(xs[_k])}: a cotangent has its argument's shape "
                                     "(sum over the axes the primal broadcast)")
                return ct

            def tangent(*args, _k=k, _back=back):
                # forward mode from the reverse rule: bwd is linear in g, so the tangent's
                # element i is <bwd(res, e_i)[k], t> (one bwd call per output element)
                *xs, t = args
                out = np.asarray(fwd(*layout.args(xs))[0])
                dtype = np.result_type(out, np.asarray(t))
                flat = np.zeros(out.size, dtype=dtype)
                for i in range(out.size):
                    e = np.zeros(out.size, dtype=dtype)
                    e[i] = 1
                    flat[i] = np.sum(np.asarray(_back(*xs, e.reshape(out.shape))) *
                                     np.asarray(t))
                return flat.reshape(out.shape) if out.ndim else dtype.type(flat[0])
            bname, tname = f"{slot}_bwd_{p}", f"{slot}_tangent_{p}"
            bpath, tpath = _publish(bname, back), _publish(tname, tangent)
            what = f"custom_vjp rule of {fname}"
            rule_helper(bname, back, bpath, layout.sig() + ", g", what)
            rule_helper(tname, tangent, tpath, layout.sig() + ", t", what)
            rules[p] = f"{bpath}({', '.join(names)}, g)"
            tangents[p] = f"{tpath}({', '.join(names)}, {p}_dot)"

        def fwd_out(*xs):
            return fwd(*layout.args(xs))[0]
        return self._with_diff_primal(slot, fwd_out, layout, vjp=rules, jvp=tangents)


class custom_jvp(_Custom):
    """JAX's custom_jvp: f.defjvp(rule) with rule(*nondiff_args, primals, tangents) ->
    (out, tangent_out), primals and tangents the differentiated arguments (pytrees). Reverse
    mode transposes the rule (it is linear in the tangents) numerically, one basis tangent
    per input element. Derivatives of the rule itself (second order) are refused."""

    def defjvp(self, rule):
        self.rule = rule
        self._defined = True
        self._prims = {}
        return self

    def _make_prim(self, layout):
        rule, fname = self.rule, self.fun.__name__
        names = layout.names
        slot = _slot(fname)

        def call_rule(xs, k=None, t=None):
            full = layout.args(xs)
            zeros = [np.zeros_like(np.asarray(x, dtype=float)) for x in xs]
            if k is not None:
                zeros[k] = t
            tans = layout.args(zeros, tangents=True)
            diff = layout.diff
            return rule(*[full[i] for i in layout.nondiff], tuple(full[i] for i in diff),
                        tuple(tans[i] for i in diff))
        jvps, vjps = {}, {}
        for k, p in enumerate(names):
            if layout.where[k][0] in layout.nondiff:
                continue

            def tangent(*args, _k=k):
                xs, t = args[:-1], args[-1]
                return call_rule(xs, _k, t)[1]

            def cotangent(*args, _k=k, _tangent=tangent):
                xs, g = args[:-1], args[-1]
                x = np.asarray(xs[_k])
                out = np.zeros(x.shape, dtype=np.result_type(x, g))
                flat = out.reshape(-1)
                for j in range(x.size):
                    e = np.zeros(x.size, dtype=out.dtype)
                    e[j] = 1
                    flat[j] = np.sum(np.asarray(g) * _tangent(*xs, e.reshape(x.shape)))
                return out if np.ndim(xs[_k]) else out.dtype.type(out)
            jname, vname = f"{slot}_jvp_{p}", f"{slot}_vjp_{p}"
            jpath, vpath = _publish(jname, tangent), _publish(vname, cotangent)
            what = f"custom_jvp rule of {fname}"
            rule_helper(jname, tangent, jpath, layout.sig() + ", t", what)
            rule_helper(vname, cotangent, vpath, layout.sig() + ", g", what)
            jvps[p] = f"{jpath}({', '.join(names)}, {p}_dot)"
            vjps[p] = f"{vpath}({', '.join(names)}, g)"

        def rule_out(*xs):
            return call_rule(xs)[0]
        return self._with_diff_primal(slot, rule_out, layout, jvp=jvps, vjp=vjps)


# ---- linearize --------------------------------------------------------------------------------


def linearize(fun, *primals):
    """(fun(*primals), f_jvp) with f_jvp(*tangents) = the JVP at primals (generated forward-mode
    code; the primal part is re-evaluated on each call)."""
    out = fun(*primals)

    def f_jvp(*tangents):
        if len(tangents) != len(primals):
            raise TypeError(f"f_jvp takes {len(primals)} tangents, got {len(tangents)}")
        return jvp(fun, primals, tangents)[1]
    return out, f_jvp


# ---- check_grads ------------------------------------------------------------------------------


def _axpy(a, x, y):
    return tree_map(lambda u, v: np.asarray(u) * a + np.asarray(v), x, y)


def _vdot(a, b):
    la, _ = tree_flatten(a)
    lb, _ = tree_flatten(b)
    return float(sum(np.sum(np.asarray(x, dtype=np.float64) * np.asarray(y, dtype=np.float64))
                     for x, y in zip(la, lb)))


def _random_like(tree, rng):
    return tree_map(lambda x: rng.standard_normal(np.shape(x)), tree)


def _close(what, got, want, atol, rtol):
    if not np.allclose(got, want, atol=atol, rtol=rtol):
        raise AssertionError(
            f"check_grads: {what} does not match central finite differences\n"
            f"    derivative: {got!r}\n    finite diff: {want!r}\n"
            f"    (atol={atol}, rtol={rtol}; abs error {np.max(np.abs(np.subtract(got, want)))})")


def _check_once(packed, p, modes, eps, atol, rtol, level, rng):
    out = packed(p)
    v = _random_like(p, rng)
    u = _random_like(out, rng)
    fd = tree_map(lambda a, b: (np.asarray(a) - np.asarray(b)) / (2 * eps),
                  packed(_axpy(eps, v, p)), packed(_axpy(-eps, v, p)))
    tag = "" if level == 1 else f" (derivative order {level})"
    if "fwd" in modes:
        _, t = jvp(packed, (p,), (v,))
        _close(f"forward mode (jvp){tag}", np.concatenate(
            [np.ravel(x) for x in tree_flatten(t)[0]] or [np.zeros(0)]),
            np.concatenate([np.ravel(x) for x in tree_flatten(fd)[0]] or [np.zeros(0)]),
            atol, rtol)
    if "rev" in modes:
        _, pull = vjp(packed, p)
        ct = pull(u)[0]
        _close(f"reverse mode (vjp){tag}", _vdot(ct, v), _vdot(u, fd), atol, rtol)
    return u


def check_grads(f, args, order=2, modes=("fwd", "rev"), eps=None, atol=None, rtol=None,
                seed=0):
    """Check f's derivatives up to `order` against central finite differences (float64).

    Each order checks forward mode (jvp along a random tangent) and reverse mode (vjp with a
    random cotangent, compared through <vjp(u), v> = <u, J v>). Order 2 checks the derivatives
    of the generated gradient (forward-over-reverse and reverse-over-reverse), and so on.
    Raises AssertionError with the two numbers when they disagree."""
    modes = tuple(modes)
    bad = set(modes) - {"fwd", "rev"}
    if bad:
        raise ValueError(f"check_grads: unknown modes {sorted(bad)} (use 'fwd' and/or 'rev')")
    args = tuple(tree_map(lambda x: np.asarray(x, dtype=np.float64)
                          if np.ndim(x) else np.float64(x), a) for a in args)
    rng = np.random.default_rng(seed)
    eps = 1e-6 if eps is None else eps
    atol = 1e-5 if atol is None else atol
    rtol = 1e-4 if rtol is None else rtol

    def packed(p):
        return f(*p)
    fun = packed
    for level in range(1, order + 1):
        lev_eps = eps if level == 1 else max(eps, 1e-5)
        u = _check_once(fun, args, modes, lev_eps, atol * 10 ** (level - 1),
                        rtol * 10 ** (level - 1), level, rng)
        if level == order:
            break
        fun = Grad(_scalarize(fun, u))
    return True


def _scalarize(fun, u):
    def scalar(p):
        return _contract(fun(p), u)
    return scalar


def _contract(out, u):
    return np.sum(out * u)


def primitive_core(fun, prim, in_trees):
    """A core function that applies one primitive: lets grad/jacobian/... take np.exp itself."""
    n = 0
    while n < len(in_trees) and in_trees[n] == LEAF:
        n += 1
    params = [p.name for p in prim.params if p.kind == "pos"][:n]
    if len(params) != n or any(t.kind not in ("static", "none") for t in in_trees[n:]):
        raise TranspileError(f"cannot transform {prim.path} with arguments of structure "
                             f"{in_trees}: wrap it in a def")
    body = [Eqn("out", prim, {p: Var(p) for p in params})]
    core = CoreFn(name=prim.name, params=params, body=body, outs=[Var("out")], out_tree=LEAF,
                  filename="<numpy>")
    core.deps = []
    return core


transform_registry.register_value_function("linearize", linearize)
transform_registry.register_value_function("check_grads", check_grads)
