"""How the transforms read their arguments: which leaves are static (Python bool/int/str/None,
fixed when the code is generated) and which are dynamic, argnums and the leaf ranges they pick,
the dtype checks of grad (float, or complex with holomorphic=True), tangents cast to their
primal's dtype, and copies of array arguments (for functions that write into them)."""
import types

import numpy as np

from transpile.frontend.callables import as_index
from transpile.compile.dynamic_ints import is_dynamic_int
from transpile.pytree import LEAF, TreeDef, static_leaf, tree_flatten, tree_map, tree_unflatten

STATIC_TYPES = (bool, int, str, type(None))
# functions passed as arguments (`lambda v, f=f: ...`, `apply(fn, x)`): static, known to the
# generated code as the function itself, as a static argument is in JAX
FUNCTION_TYPES = (types.FunctionType, types.BuiltinFunctionType, np.ufunc)


def spec_flatten(value, dynamic_ints=False):
    """Flatten an argument for specialization: (dynamic leaves, TreeDef with static leaves).
    With dynamic_ints, Python ints are dynamic leaves too (jit; see transpile/compile/dynamic_ints.py)."""
    if type(value) is np.ndarray:      # the common case, without the pytree walk
        return [value], LEAF
    if dynamic_ints and is_dynamic_int(value):
        return [value], LEAF
    leaves, tree = tree_flatten(value)
    dyn = []
    statics = iter(leaves)

    def mark(t):
        if t.kind == "leaf":
            v = next(statics)
            if isinstance(v, STATIC_TYPES) and not isinstance(v, np.generic) and not (
                    dynamic_ints and is_dynamic_int(v)) or isinstance(v, FUNCTION_TYPES):
                return static_leaf(v)
            dyn.append(v)
            return LEAF
        return TreeDef(t.kind, tuple(mark(c) for c in t.children), t.keys)
    return dyn, mark(tree)


def norm_argnums(argnums, nparams, fname):
    argnums = as_index(argnums)         # np.int64(1) is an int argnum
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    if not nums:
        raise ValueError(f"argnums must name at least one argument of {fname}")
    for a in nums:
        if not isinstance(a, int):
            raise TypeError(f"argnums must be an int or a tuple of ints, got {argnums!r}")
        if nparams is None:         # f(*args): checked against each call's arguments
            if a < 0:
                raise ValueError(f"argnums={argnums!r}: {fname} takes *args, so argnums "
                                 "must be non-negative")
            continue
        if not -nparams <= a < nparams:
            raise ValueError(f"argnums={argnums!r} is out of range: {fname} takes {nparams} "
                             f"argument{'s' if nparams != 1 else ''}")
    return single, tuple(a if nparams is None else a % nparams for a in nums)


def leaf_ranges(in_trees):
    ranges, start = [], 0
    for t in in_trees:
        n = t.num_leaves
        ranges.append(range(start, start + n))
        start += n
    return ranges


def check_float(values, argnums, what):
    for a in argnums:
        for leaf in tree_flatten(values[a])[0]:
            # (np.result_type reads a string as a dtype name: np.asarray's dtype instead)
            dtype = np.asarray(leaf).dtype if isinstance(leaf, (str, bytes)) or leaf is None \
                else np.result_type(leaf)
            if isinstance(leaf, (bool, int)) or not np.issubdtype(dtype, np.inexact):
                raise TypeError(
                    f"{what} requires float inputs for the differentiated arguments, but argument "
                    f"{a} has a leaf of type {type(leaf).__name__} (dtype {dtype}). "
                    "Pass floats, e.g. 2.0 instead of 2, or x.astype(float).")


def check_complex(values, argnums, what="grad"):
    """grad(..., holomorphic=True) differentiates complex arguments only (as JAX); `what`:
    the transform the user called."""
    for a in argnums:
        for leaf in tree_flatten(values[a])[0]:
            dtype = np.result_type(leaf)
            if not np.issubdtype(dtype, np.complexfloating):
                raise TypeError(
                    f"{what}(..., holomorphic=True) requires complex inputs, but argument {a} has "
                    f"dtype {dtype}; pass e.g. x.astype(complex)")


def check_real(values, what, kind="inputs"):
    """jacfwd/jacrev/hessian without holomorphic=True take and give real values (as JAX: the
    Jacobian of a complex function is not one array of numbers unless it is holomorphic)."""
    for leaf in tree_flatten(values)[0]:
        dtype = np.result_type(leaf)
        if np.issubdtype(dtype, np.complexfloating):
            raise TypeError(f"{what} requires real-valued {kind}, but got {dtype}; for the "
                            f"derivative of a holomorphic function pass holomorphic=True (or "
                            "differentiate the real and imaginary parts separately)")


FLOAT0 = np.dtype([("float0", np.void, 0)])   # JAX's float0: the tangent of an int or a bool


def _is_integral(leaf):
    if isinstance(leaf, (bool, int, np.integer, np.bool_)):
        return True
    return isinstance(leaf, np.ndarray) and leaf.dtype.kind in "iub"


def float0_tangents(primals, tangents):
    """jvp's tangents checked as JAX does: an integer or boolean primal takes a float0 tangent
    (it has no derivative); such a tangent becomes zeros for the generated code."""
    out = []
    for a, (p, t) in enumerate(zip(primals, tangents)):
        pl, pt = tree_flatten(p)
        tl, tt = tree_flatten(t)
        if len(pl) != len(tl):
            out.append(t)          # the structure check of jvp itself reports it
            continue
        fixed = []
        for p_leaf, t_leaf in zip(pl, tl):
            t_dtype = np.asarray(t_leaf).dtype
            if _is_integral(p_leaf):
                if t_dtype != FLOAT0:
                    p_dtype = np.asarray(p_leaf).dtype
                    raise TypeError(
                        f"jvp: primal {a} has dtype {p_dtype} and a tangent of dtype {t_dtype}: "
                        "an integer or boolean primal has no derivative, its tangent must have "
                        "dtype float0 (transpile.float0 or jax.dtypes.float0, e.g. "
                        "np.zeros(np.shape(x), dtype=transpile.float0)), as in JAX; to "
                        "differentiate along it pass a float primal (x.astype(float))")
                t_leaf = np.zeros(np.shape(p_leaf)) if np.ndim(p_leaf) else 0.0
            elif t_dtype == FLOAT0:
                raise TypeError(f"jvp: primal {a} has dtype {np.asarray(p_leaf).dtype}: only an "
                                "integer or boolean primal takes a float0 tangent")
            fixed.append(t_leaf)
        out.append(tree_unflatten(tt, fixed))
    return tuple(out)


def float0_outputs(outs, touts):
    """The tangent of an integer or boolean output is float0 zeros (JAX)."""
    ol, _ = tree_flatten(outs)
    tl, tt = tree_flatten(touts)
    if len(ol) != len(tl):
        return touts
    return tree_unflatten(tt, [np.zeros(np.shape(o), dtype=FLOAT0) if _is_integral(o) else t
                               for o, t in zip(ol, tl)])


def walk_tree(tree):
    yield tree
    for c in tree.children:
        yield from walk_tree(c)


def tangent_like(t, p):
    dtype = np.result_type(p)
    if np.issubdtype(dtype, np.inexact):
        return np.asarray(t, dtype=dtype) if np.ndim(p) or isinstance(p, np.ndarray) else \
            dtype.type(t)
    return t


def tree_map_zeros(tree):
    leaves, t = tree_flatten(tree)
    return tree_unflatten(t, [np.zeros_like(l) for l in leaves])


def copy_arrays(args):
    """args with every array leaf copied (pytrees kept)."""
    return [tree_map(lambda v: np.array(v, copy=True) if isinstance(v, np.ndarray) else v, a)
            for a in args]


def write_back_arrays(args, after):
    """Copy into the caller's writable arrays what a call left in their copies `after`."""
    for a, b in zip(args, after):
        for x, y in zip(tree_flatten(a)[0], tree_flatten(b)[0]):
            if type(x) is np.ndarray and x.flags.writeable and x.shape == np.shape(y) \
                    and not np.array_equal(x, y, equal_nan=True):
                x[...] = y


def has_star(sig):
    """f(*args) or f(**kwargs)."""
    return any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in sig.parameters.values())


def bind_call(sig, args, kwargs):
    """One value per parameter (defaults applied); for f(*args, **kwargs), one value per
    positional argument of the call (argnums count them, as in JAX), then the keyword-only
    ones, then one dict of the extra keywords."""
    ba = sig.bind(*args, **kwargs)
    ba.apply_defaults()
    values = []
    for p in sig.parameters.values():
        if p.kind == p.VAR_POSITIONAL:
            values += list(ba.arguments[p.name])
        elif p.kind == p.VAR_KEYWORD:
            values.append(dict(ba.arguments[p.name]))
        else:
            values.append(ba.arguments[p.name])
    return values
