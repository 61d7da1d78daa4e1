"""Products: np.matmul (`@`), np.dot, np.outer, np.inner, np.einsum, np.vdot and np.cross (np.linalg's
rows, np.linalg.multi_dot among them, are in linalg.py)."""
import operator

import numpy as np

from transpile.core.ir import Const
from transpile.primitives.batching import rules as BR
from transpile.primitives.batching.axis_rules import axis_rule, per_example
from transpile.primitives.batching.rules import NoRule, Rule, _const, elementwise_batch
from transpile.primitives.numpy.stats import is_none
from transpile.primitives import numba_forms as NF
from transpile.primitives.registry import defmethod, defprim
from transpile_runtime import array_adjoints as AA, stats_adjoints as SA

L = BR.linalg

matmul = defprim("matmul", [np.matmul, operator.matmul], "np.matmul", "x, y", op="@", batch=L,
                 linear=("x", "y"),
                 vjp={"x": "rt.matmul_vjp_left(g, x, y)", "y": "rt.matmul_vjp_right(g, x, y)"},
                 fresh=True, product=True)
dot = defprim("dot", np.dot, "np.dot", "x, y", batch=L, linear=("x", "y"),
              vjp={"x": "rt.dot_vjp_left(g, x, y)", "y": "rt.dot_vjp_right(g, x, y)"},
              fresh=True, product=True)
# (out: np.linalg.outer's NumPy source passes out=None)
outer = defprim("outer", np.outer, "np.outer", "x, y, out=None", batch=L, linear=("x", "y"),
                vjp={"x": "np.reshape(np.dot(g, np.ravel(y)), np.shape(x))",
                     "y": "np.reshape(np.dot(np.ravel(x), g), np.shape(y))"},
                     array_result=True, fresh=True)
inner = defprim("inner", np.inner, "np.inner", "x, y", batch=L, linear=("x", "y"),
                vjp={"x": "rt.dot_vjp_left(g, x, rt.mT(y))",
                     "y": "rt.mT(rt.dot_vjp_right(g, x, rt.mT(y)))"}, product=True,
                numba=NF.inner)


def _einsum_parts(eqn):
    subs = eqn.args["subscripts"].value.replace(" ", "")
    if "->" in subs:
        ins, out = subs.split("->")
    else:
        ins = subs
        letters = [c for c in subs if c.isalpha()]
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    return ins.split(","), out


def _einsum_vjp(eqn, k):
    """Cotangent of operand k: contract g with the other operands back to operand k's indices."""
    ins, out = _einsum_parts(eqn)
    mine = ins[k].replace("...", "")
    others = [ins[i] for i in range(len(ins)) if i != k]
    summed_only = [i for i, c in enumerate(mine) if c not in out + "".join(others)]
    repeated = len(set(mine)) != len(mine)
    if (repeated or summed_only) and "..." in ins[k]:
        raise NotImplementedError(
            f"grad of np.einsum({eqn.args['subscripts'].value!r}): operand {k} has '...' and "
            "a repeated index or an index summed inside it alone; write that part with "
            "np.diagonal/np.sum instead")
    names = ", ".join(f"operands_{i}" for i in range(len(ins)) if i != k)
    if repeated:      # 'ii', 'iij': contract to its distinct letters, then onto the diagonal
        kept = "".join(c for c in dict.fromkeys(mine) if c in out + "".join(others))
        spec = ",".join([out] + others) + "->" + kept
        text = f"np.einsum({spec!r}, g, {names})" if names else f"np.einsum({spec!r}, g)"
        return f"rt.einsum_scatter({text}, operands_{k}, {kept + '->' + mine!r})"
    kept = "".join(c for c in ins[k] if c not in [mine[i] for i in summed_only])
    if "..." in subs_all(ins, out) and "..." not in kept:
        kept = "..." + kept     # ('...ij,jk->...ik', operand 1): the batch axes, summed below
    spec = ",".join([out] + others) + "->" + kept
    text = f"np.einsum({spec!r}, g, {names})" if names else f"np.einsum({spec!r}, g)"
    if summed_only:   # indices summed inside this operand alone: broadcast back over them
        text = f"rt.sum_grad({text}, operands_{k}, {tuple(summed_only)!r})"
    if "..." in subs_all(ins, out):   # '...' broadcast this operand: sum back to its shape
        text = f"rt.unbroadcast({text}, operands_{k})"
    return text


def subs_all(ins, out):
    return ",".join(ins) + "->" + out


def _einsum_jvp(eqn, k):
    """Multilinear: operand k replaced by its tangent."""
    n = len(eqn.args["operands"].items)
    names = ", ".join(f"operands_{i}_dot" if i == k else f"operands_{i}" for i in range(n))
    return f"np.einsum({eqn.args['subscripts'].value!r}, {names})"


einsum = defprim("einsum", np.einsum, "np.einsum", "subscripts, *operands", batch=L,
                 vjp={"operands": _einsum_vjp}, jvp={"operands": _einsum_jvp}, numba=NF.einsum)


def _known(v):
    """The value of a normalizer value known while generating code (a constant, a list of
    constants), else None."""
    if hasattr(v, "items") and getattr(v, "kind", None) in ("list", "tuple"):
        items = [_known(i) for i in v.items]
        return None if any(i is None for i in items) else items
    if hasattr(v, "obj"):
        return v.obj
    if hasattr(v, "value") and not hasattr(v, "name"):
        return v.value
    return None


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _einsum_sublists(args, kwargs):
    """np.einsum(A, [0, 1], B, [1, 2], [0, 2]) -> np.einsum('ab,bc->ac', A, B)."""
    if not args or isinstance(_known(args[0]), str) or len(args) < 2:
        return args, kwargs
    subs = [_known(a) for a in args[1::2]]
    if not all(isinstance(s, (list, tuple)) for s in subs):
        return args, kwargs
    out = _known(args[-1]) if len(args) % 2 == 1 else None

    def letters(sub):
        return "".join("..." if i is Ellipsis else _LETTERS[int(i)] for i in sub)
    spec = ",".join(letters(sub) for sub in subs[:len(args) // 2])
    if out is not None:
        spec += "->" + letters(out)
    return [Const(spec)] + list(args[0:2 * (len(args) // 2):2]), kwargs


einsum.canonical_args = _einsum_sublists


def _scatter_vjp(eqn, k):
    """rt.einsum_scatter is linear in t: its transpose reads the diagonal back (and sums the
    letters t lacks)."""
    src, dst = eqn.args["spec"].value.split("->")
    return f"np.einsum({dst + '->' + src!r}, g)"


defprim("einsum_scatter", AA.einsum_scatter, "rt.einsum_scatter", "t, x, spec", linear=("t",),
        shape_args=("x",), batch=per_example, vjp={"t": _scatter_vjp}, numba=NF.einsum_scatter,
        array_result=True, fresh=True)
defmethod("dot", dot)

# ---- cross: <g, x × y> = <x, y × g> = <y, g × x> ------------------------------------------------


def _cross_batch(s, eqn):
    """Vectors along negative axes: np.cross broadcasts the other axes like an elementwise op."""
    for p in ("axisa", "axisb", "axisc", "axis"):
        ax = _const(eqn.args, p, eqn.prim.param(p).default)
        if ax is not None and ax >= 0:
            raise NoRule(f"{p}={ax}")
    elementwise_batch(s, eqn)


def _cross_vjp(first, second, arg):
    """The cotangent of `arg`: first × second (g stands for the result's vectors),
    un-broadcast with the vectors last, then moved back to arg's vector axis. The vectors of
    x and y are checked to have 3 entries (NumPy 2 deprecates 2-entry vectors in np.cross)."""
    def rule(eqn, k):
        axes = {a: "axis" if not is_none(eqn, "axis") else ax for a, ax in _AXIS_OF.items()}
        vec = {a: a if a == "g" else f"rt.three_vectors({a}, {axes[a]})" for a in _AXIS_OF}
        cross = f"np.cross({vec[first]}, {vec[second]}, {axes[first]}, {axes[second]})"
        if all(eqn.args.get(a, Const(-1)).value in (-1, None) for a in _AXIS_OF.values()) \
                and is_none(eqn, "axis"):
            return f"rt.unbroadcast({cross}, {vec[arg]})"    # vectors last: as NumPy broadcasts
        return (f"np.moveaxis(rt.unbroadcast({cross}, np.moveaxis({vec[arg]}, {axes[arg]}, -1)), "
                f"-1, {axes[arg]})")
    return rule


_AXIS_OF = {"x": "axisa", "y": "axisb", "g": "axisc"}
cross = defprim("cross", np.cross, "np.cross", "x, y, axisa=-1, axisb=-1, axisc=-1, axis=None",
                linear=("x", "y"), batch=Rule("linalg", _cross_batch, lambda s, eqn: None),
                vjp={"x": _cross_vjp("y", "g", "x"), "y": _cross_vjp("g", "x", "y")},
                numba=NF.cross)


def _three_vectors_form(lw, eqn):
    """rt.three_vectors of vectors known to have 3 entries: the array itself (a copy: the
    check has nothing left to do)."""
    x, axis = eqn.args["x"], NF._const(eqn, "axis", -1)
    xs = lw.av(x)
    if xs is None or not xs.ndim or not isinstance(axis, int) or not -xs.ndim <= axis < xs.ndim \
            or xs.shape[axis] != 3:
        return None
    return f"{lw.fmt(x)}.copy()"


three_vectors = defprim("three_vectors", SA.three_vectors, "rt.three_vectors", "x, axis=-1",
                        linear=("x",), batch=axis_rule(["axis"]),
                        vjp={"x": "rt.three_vectors(g, axis)"}, numba=_three_vectors_form)

# vdot(x, y) = sum(conj(x) * y) over the flattened arrays (anti-linear in x)
vdot = defprim("vdot", np.vdot, "np.vdot", "x, y", batch=per_example, linear=("x", "y"),
               vjp={"x": "np.reshape(np.conj(g * np.ravel(y)), np.shape(x))",
                    "y": "np.reshape(g * np.conj(np.ravel(x)), np.shape(y))"}, product=True,
               numba=NF.vdot)
