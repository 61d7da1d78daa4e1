"""Products and linear algebra."""
import operator

import numpy as np

from transpile.primitives.batching import rules as BR
from transpile.primitives.registry import defmethod, defprim
from transpile.core.ir import Const

L = BR.linalg

matmul = defprim("matmul", [np.matmul, operator.matmul], "np.matmul", "x, y", op="@", batch=L,
                 linear=("x", "y"),
                 vjp={"x": "rt.matmul_vjp_left(g, x, y)", "y": "rt.matmul_vjp_right(g, x, y)"},
                 fresh=True, product=True)
dot = defprim("dot", np.dot, "np.dot", "x, y", batch=L, linear=("x", "y"),
              vjp={"x": "rt.dot_vjp_left(g, x, y)", "y": "rt.dot_vjp_right(g, x, y)"},
              fresh=True, product=True)
outer = defprim("outer", np.outer, "np.outer", "x, y", batch=L, linear=("x", "y"),
                vjp={"x": "np.reshape(np.dot(g, np.ravel(y)), np.shape(x))",
                     "y": "np.reshape(np.dot(np.ravel(x), g), np.shape(y))"},
                     array_result=True, fresh=True)
inner = defprim("inner", np.inner, "np.inner", "x, y", batch=L, linear=("x", "y"),
                vjp={"x": "rt.dot_vjp_left(g, x, rt.mT(y))",
                     "y": "rt.mT(rt.dot_vjp_right(g, x, rt.mT(y)))"}, product=True)


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
    if len(set(mine)) != len(mine) or (summed_only and "..." in ins[k]):
        raise NotImplementedError(
            f"grad of np.einsum({eqn.args['subscripts'].value!r}): operand {k} has a repeated "
            "index; write it with np.diagonal/np.trace instead")
    kept = "".join(c for c in ins[k] if c not in [mine[i] for i in summed_only])
    spec = ",".join([out] + others) + "->" + kept
    names = ", ".join(f"operands_{i}" for i in range(len(ins)) if i != k)
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
                 vjp={"operands": _einsum_vjp}, jvp={"operands": _einsum_jvp})


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
det = defprim("det", np.linalg.det, "np.linalg.det", "x", batch=L,
              vjp={"x": "rt.mT(np.linalg.inv(x)) * rt.expand_last(rt.expand_last(g * ans))"},
              jvp={"x": "ans * np.sum(rt.mT(np.linalg.inv(x)) * x_dot, axis=(-2, -1))"})
inv = defprim("inv", np.linalg.inv, "np.linalg.inv", "x", batch=L,
              vjp={"x": "-(rt.mT(ans) @ g @ rt.mT(ans))"},
              jvp={"x": "-(ans @ x_dot @ ans)"})
solve = defprim("solve", np.linalg.solve, "np.linalg.solve", "a, b", batch=L,
                vjp={"b": "np.linalg.solve(rt.mT(a), g)",
                     "a": "-rt.matmul_vjp_left(np.linalg.solve(rt.mT(a), g), a, ans)"},
                jvp={"b": "np.linalg.solve(a, b_dot)", "a": "-np.linalg.solve(a, a_dot @ ans)"})

defmethod("dot", dot)
