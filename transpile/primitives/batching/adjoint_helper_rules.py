"""Batching rules for the runtime helpers that derivative code calls (unbroadcast, sum_grad,
getitem_vjp, the product vjps, ...), and the rule of the rt.batch_* helpers' own rows (no rule
inside a nested vmap)."""
from transpile.core.ir import Const
from transpile.primitives.batching.array_rules import elementwise_batch, structure_batch
from transpile.primitives.batching.base import (NoRule, Rule, _const, _max_rank, _only_batched,
                                                _shift, args_with)


# ---- rules for the runtime helpers that derivative code calls -------------------------------
# Each helper computes something per example; the batched form calls the matching
# rt.batch_* helper (runtime/batching.py), which knows which arguments carry the batch axis.


def _flag(s, atom):
    return Const(bool(s.b(atom)))


def helper_rank(s, eqn):
    name, a = eqn.prim.name, eqn.args
    like = {"unbroadcast": "x", "broadcast_like": "like", "sum_grad": "x", "cast_like": "t", "grad_like": "t",
            "mT": "x", "check_scalar_output": "out", "extremum_mask": "x",
            "matmul_vjp_left": "x", "matmul_vjp_right": "y", "dot_vjp_left": "x",
            "dot_vjp_right": "y", "getitem_vjp": "x", "concat_vjp": "ct", "concat_pad": None,
            "put_axis": "like", "transpose_back": "x", "cumsum_vjp": "x", "check_norm_ord": "x",
            "tile_vjp": "x", "diagonal_vjp": "x", "batch_align": None, "batch_squeeze": None,
            "adjoint_like": "x"}
    if name in ("reduced_count", "transpose_inverse", "batch_reduced_count"):
        return 0 if name != "transpose_inverse" else None
    if name == "select_weight":
        return _max_rank([s.r(a["x"]), s.r(a["y"])])
    if name == "clip_mask":        # x and the bounds broadcast together
        return _max_rank([s.r(a[k]) for k in ("x", "lo", "hi") if k in a])
    if name == "expand_last":
        r = s.r(a["x"])
        return None if r is None else r + 1
    if name == "take_axis":
        r = s.r(a["x"])
        return None if r is None else r - 1
    key = like.get(name)
    return s.r(a[key]) if key else None


def helper_batch(s, eqn):
    name, a = eqn.prim.name, eqn.args
    if name == "unbroadcast":
        _only_batched(s, eqn, ["ct", "x"])
        return s.final("batch_unbroadcast", {"ct": a["ct"], "x": a["x"],
                                             "ct_batched": _flag(s, a["ct"]),
                                             "x_batched": _flag(s, a["x"])},
                       batched=s.b(a["ct"]))
    if name == "broadcast_like":
        return s.final("batch_broadcast_like", {"t": a["t"], "like": a["like"],
                                                "t_batched": _flag(s, a["t"]),
                                                "like_batched": _flag(s, a["like"])})
    if name == "adjoint_like":     # an adjoint (0.0, or of x's shape) as x's shape: per example
        return s.final("batch_broadcast_like", {"t": a["d"], "like": a["x"],
                                                "t_batched": _flag(s, a["d"]),
                                                "like_batched": _flag(s, a["x"])})
    if name == "sum_grad":
        _only_batched(s, eqn, ["ct", "x"])
        return s.final("batch_sum_grad", {
            "ct": a["ct"], "x": a["x"], "axis": a.get("axis", Const(None)),
            "keepdims": a.get("keepdims", Const(False)),
            "ct_batched": _flag(s, a["ct"]), "x_batched": _flag(s, a["x"])})
    if name in ("cast_like", "grad_like"):
        _only_batched(s, eqn, ["t", "x"])
        return s.final(eqn.prim, dict(a), batched=s.b(a["t"]))
    if name == "mT" and s.b(a["x"]):
        r = s.r(a["x"])
        if r is None:
            raise NoRule("rank unknown")
        if r < 2:   # examples are vectors or scalars: left as they are
            return s.final("identity", {"x": a["x"]})
    if name in ("mT", "expand_last", "check_norm_ord") and not (
            name == "check_norm_ord" and _const(a, "ord", None) == 2):
        _only_batched(s, eqn, ["x"])
        return s.final(eqn.prim, dict(a))
    if name == "check_scalar_output":
        _only_batched(s, eqn, ["out"])
        return s.final("batch_check_scalar_output", dict(a))
    if name == "reduced_count":
        _only_batched(s, eqn, ["x"])
        return s.final("batch_reduced_count", dict(a), batched=False)
    if name == "extremum_mask":
        _only_batched(s, eqn, ["x", "ans"])
        return s.final("batch_extremum_mask", {
            "x": a["x"], "ans": a["ans"], "axis": a.get("axis", Const(None)),
            "keepdims": a.get("keepdims", Const(False)),
            "x_batched": _flag(s, a["x"]), "ans_batched": _flag(s, a["ans"])})
    if name in ("select_weight", "clip_mask"):
        return elementwise_batch(s, eqn)
    if name == "getitem_vjp":
        _only_batched(s, eqn, ["ct", "x"])
        return s.final("batch_getitem_vjp", {"ct": a["ct"], "x": a["x"], "index": a["index"],
                                             "ct_batched": _flag(s, a["ct"]),
                                             "x_batched": _flag(s, a["x"])})
    if name == "transpose_back":
        axes = _const(a, "axes", None)
        inverse = None if axes is None else tuple(sorted(range(len(axes)), key=lambda i: axes[i]))
        return structure_batch(s, _with_prim(eqn, s.P("transpose"),
                                             {"x": a["x"], "axes": Const(inverse)}))
    if name == "take_axis":
        _only_batched(s, eqn, ["x"])
        return s.final(eqn.prim, args_with(eqn, axis=Const(_shift(_const(a, "axis", 0)))))
    if name in ("dot_vjp_left", "dot_vjp_right", "matmul_vjp_left", "matmul_vjp_right"):
        return s.expand(eqn, _product_vjp_text(s, eqn))
    raise NoRule(name)


def _with_prim(eqn, prim, args):
    return type(eqn)(eqn.out, prim, args, eqn.loc)


def _product_vjp_text(s, eqn):
    """The cotangent of one factor of a product, for known small ranks, written with plain
    products so that their batching rules apply (ct: cotangent of the product)."""
    name, a = eqn.prim.name, eqn.args
    rx, ry = s.r(a["x"]), s.r(a["y"])
    if rx is None or ry is None or rx == 0 or ry == 0 or rx > 2 or ry > 2:
        raise NoRule("ranks")
    left = name.endswith("left")
    if rx == 1 and ry == 1:
        return "ct * y" if left else "ct * x"
    if left:
        if ry == 1:                              # x (m, n), y (n,), ct (m,)
            return "np.multiply(np.expand_dims(ct, -1), y)"
        if rx == 1:                              # x (n,), y (n, k), ct (k,)
            return "np.dot(y, ct)"
        return "np.matmul(ct, np.transpose(y))"  # x (m, n), y (n, k), ct (m, k)
    if rx == 1:                                  # x (n,), y (n, k), ct (k,)
        return "np.multiply(np.expand_dims(x, -1), ct)"
    if ry == 1:                                  # x (m, n), y (n,), ct (m,)
        return "np.dot(ct, x)"
    return "np.matmul(np.transpose(x), ct)"      # x (m, n), y (n, k), ct (m, k)


helper = Rule("helper", helper_batch, helper_rank)


# ---- the batching helpers' own rows -----------------------------------------------------------


def batch_helper_rank(s, eqn):
    return None


def batch_helper_batch(s, eqn):
    raise NoRule(f"{eqn.prim.path} inside a nested vmap")


batch_helper = Rule("helper", batch_helper_batch, batch_helper_rank)
