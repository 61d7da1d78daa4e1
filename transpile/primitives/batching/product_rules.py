"""Batching rules for products and linear algebra: dot, matmul, inner, outer and einsum
(written as one einsum with a batch letter where needed), solve, det and inv."""
import string

from transpile.core.ir import Const, IndexArg, TupleArg
from transpile.primitives.batching.array_rules import elementwise_batch
from transpile.primitives.batching.base import NoRule, Rule, _const, _only_batched


# ---- products and linear algebra -------------------------------------------------------------

_LETTERS = string.ascii_lowercase


def _einsum_dot(rx, ry, kind):
    """Per-example einsum subscripts (x, y, out) for dot / matmul / inner."""
    xs = _LETTERS[:rx]
    rest = _LETTERS[rx:]
    if kind == "inner":
        ys = rest[:ry - 1] + xs[-1]
        return xs, ys, xs[:-1] + ys[:-1]
    if ry == 1:
        ys = xs[-1]
        return xs, ys, xs[:-1]
    if kind == "matmul" and rx == 1:
        ys = rest[:ry - 2] + xs[-1] + rest[ry - 2]
        return xs, ys, rest[:ry - 2] + rest[ry - 2]
    ys = rest[:ry - 2] + xs[-1] + rest[ry - 2]
    return xs, ys, xs[:-1] + rest[:ry - 2] + rest[ry - 2]


def product_rank(s, eqn):
    name, a = eqn.prim.name, eqn.args
    if name == "einsum":
        sub = a["subscripts"].value if isinstance(a["subscripts"], Const) else None
        if not isinstance(sub, str) or "..." in sub:
            return None
        return len(_einsum_output(sub))
    if name == "outer":
        return 2
    if name == "det":
        r = s.r(a["x"])
        return None if r is None else r - 2
    if name == "inv":
        return s.r(a["x"])
    if name == "solve":
        ra, rb = s.r(a["a"]), s.r(a["b"])
        if rb is None or rb >= 2 and ra is None:
            return None
        return max(ra, rb) if rb >= 2 else None if ra is None else ra - 1
    rx, ry = s.r(a["x"]), s.r(a["y"])
    if rx is None or ry is None:
        return None
    if rx == 0 or ry == 0:
        return max(rx, ry)
    if name == "matmul" and rx >= 2 and ry >= 2:
        return max(rx, ry)
    return len(_einsum_dot(rx, ry, name if name != "dot" else "dot")[2])


def _einsum_output(sub):
    sub = sub.replace(" ", "")
    if "->" in sub:
        return sub.split("->")[1]
    ins = sub.replace(",", "")
    return "".join(sorted(c for c in set(ins) if ins.count(c) == 1))


def product_batch(s, eqn):
    name, a = eqn.prim.name, eqn.args
    if name in ("det", "inv"):
        return s.final(eqn.prim, dict(a))         # NumPy's linalg works on stacks
    if name == "einsum":
        return _batch_einsum(s, eqn)
    if name == "solve":
        return _batch_solve(s, eqn)
    x, y = a["x"], a["y"]
    rx, ry = s.r(x), s.r(y)
    if name == "outer":
        xf = s.flatten(x)
        yf = s.flatten(y)
        return _final_einsum(s, [(xf, "i"), (yf, "j")], "ij")
    if rx == 0 or ry == 0:
        return elementwise_batch(s, eqn, prim=s.P("multiply"))
    bx, by = s.b(x), s.b(y)
    if name == "dot" and bx and not by and rx is not None:
        return s.final(eqn.prim, dict(a))          # np.dot(x_b, y): contracts x's last axis
    if rx is None or ry is None:
        raise NoRule("ranks unknown")
    if name in ("dot", "matmul") and not bx and by and ry == 1 and rx <= 2:
        # x @ y_b[i] for every i  ==  y_b @ x.T
        xt = x if rx == 1 else s.emit("transpose", {"x": x}, base=x.name + "_T",
                                      batched=False, rank=2)
        return s.final(eqn.prim, {"x": y, "y": xt})
    if name == "matmul" and ((rx >= 2 and ry >= 2) or (bx and not by and ry <= 2)
                             or (by and not bx and rx == 1 and ry >= 2)):
        args = dict(a)
        if rx >= 2 and ry >= 2:
            if bx:
                args["x"] = s.align(x, max(rx, ry))
            if by:
                args["y"] = s.align(y, max(rx, ry))
        return s.final(eqn.prim, args)
    xs, ys, out = _einsum_dot(rx, ry, name)
    return _final_einsum(s, [(x, xs), (y, ys)], out)


def _final_einsum(s, operands, out):
    """einsum with the batch letter added to every batched operand and to the output."""
    used = set("".join(sub for _, sub in operands) + out)
    z = next(c for c in "zyxwvutsrqponmlkjihgfedcba" if c not in used)
    subs = [(z + sub if s.b(v) else sub) for v, sub in operands]
    text = ",".join(subs) + "->" + z + out
    s.final("einsum", {"subscripts": Const(text),
                       "operands": TupleArg(tuple(v for v, _ in operands))})


def _batch_einsum(s, eqn):
    sub = _const(eqn.args, "subscripts")
    ops = eqn.args["operands"]
    if not isinstance(sub, str) or "..." in sub or not isinstance(ops, TupleArg):
        raise NoRule("einsum form")
    _only_batched(s, eqn, ["operands"])
    sub = sub.replace(" ", "")
    ins = sub.split("->")[0].split(",")
    _final_einsum(s, list(zip(ops.items, ins)), _einsum_output(sub))


def _batch_solve(s, eqn):
    """NumPy 2's solve(a, b): b is a vector when 1-D, else a matrix or a stack of matrices
    (a nested vmap, a Jacobian's basis axis); the stack axes of a and b broadcast, so both get
    the same rank after the batch axis."""
    a, b = eqn.args["a"], eqn.args["b"]
    ra, rb = s.r(a), s.r(b)
    if ra is None or rb is None:
        raise NoRule("rank unknown")
    a = a if s.b(a) else s.broadcast(a)
    b = b if s.b(b) else s.broadcast(b)
    if rb >= 2:
        r = max(ra, rb)
        return s.final(eqn.prim, {"a": s.align(a, r), "b": s.align(b, r)})
    r = max(ra, 2)
    col = s.emit("expand_dims", {"x": b, "axis": Const(-1)}, base=b.name + "_col", rank=2)
    sol = s.emit(eqn.prim, {"a": s.align(a, r), "b": s.align(col, r)}, base=eqn.out + "_col",
                 rank=r)
    s.final("getitem", {"x": sol, "index": IndexArg((Ellipsis, Const(0)))})


linalg = Rule("linalg", product_batch, product_rank)
