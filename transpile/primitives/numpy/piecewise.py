"""Rows for NumPy's piecewise functions and gathers: np.interp, np.heaviside, np.nan_to_num,
np.take, np.append and np.meshgrid.

np.interp(x, xp, fp) on the segment i = rt.interp_index(x, xp) is
    fp[i] + t (fp[i + 1] - fp[i]),   t = (x - xp[i]) / (xp[i + 1] - xp[i]),
so its derivative in x is the segment's slope (0 outside [xp[0], xp[-1]], where the result
is constant), in fp the weights 1 - t and t at i and i + 1 (np.take gathers them, rt.take_vjp
scatters them back), in xp minus the slope times those weights, in left/right 1 where they
are the result. Integer indices (np.take's, np.interp's segments) carry no derivative.
np.append(arr, values) is a concatenation (of the flattened arrays when axis is None);
np.meshgrid returns one row per output, each a broadcast of one input.
"""
import numpy as np

from transpile.core.ir import Const
from transpile.primitives import numba_forms as NF
from transpile.primitives.batching import rules as BR
from transpile.primitives.batching.axis_rules import per_example, pointwise
from transpile.primitives.batching.rules import NoRule, Rule, _const, _shift
from transpile.primitives.numpy.stats import is_none, refuse
from transpile.primitives.registry import defmethod, defprim
from transpile_runtime import stats_adjoints as SA, array_adjoints as AA
from transpile_runtime.array_adjoints import select_part as SA_select_part

# ---- interp -------------------------------------------------------------------------------------


def _segment(body):
    """body over the segment of each x: i, its ends x0 <= x < x1 and the values f0, f1 there
    (bound once each by the lambdas)."""
    return (f"(lambda i: (lambda x0, x1, f0, f1: {body})(np.take(xp, i), np.take(xp, i + 1), "
            f"np.take(fp, i), np.take(fp, i + 1)))(rt.interp_index(x, xp))")


_SLOPE = "((x >= xp[0]) * (x <= xp[-1]) * (f1 - f0) / (x1 - x0))"   # 0 outside the knots
_T = "((x - x0) / (x1 - x0))"
_TC = f"np.clip({_T}, 0.0, 1.0)"               # 0 left of xp[0], 1 right of xp[-1]


def _from_fp(eqn):
    """'mask * ' where left/right replace fp's end values outside [xp[0], xp[-1]]."""
    parts = ([] if is_none(eqn, "left") else ["(x >= xp[0])"]) + \
            ([] if is_none(eqn, "right") else ["(x <= xp[-1])"])
    return "".join(f"{p} * " for p in parts)


def _interp(rule, segment=True):
    def checked(eqn, k):
        if not is_none(eqn, "period"):
            refuse(eqn, "derivatives of np.interp(..., period=...) are not supported",
                   "np.interp(x, xp, fp, period=...)",
                   "wrap x into one period (np.mod) and extend xp, fp by one point each side")
        return _segment(rule(eqn)) if segment else rule(eqn)
    return checked


interp = defprim(
    "interp", np.interp, "np.interp", "x, xp, fp, left=None, right=None, period=None",
    batch=pointwise("x"), numba=NF.interp,
    vjp={"x": _interp(lambda eqn: f"g * {_SLOPE}"),
         "fp": _interp(lambda eqn: f"rt.take_vjp(g * {_from_fp(eqn)}(1 - {_TC}), fp, i) + "
                                   f"rt.take_vjp(g * {_from_fp(eqn)}{_TC}, fp, i + 1)"),
         "xp": _interp(lambda eqn: f"rt.take_vjp(-g * {_SLOPE} * (1 - {_T}), xp, i) + "
                                   f"rt.take_vjp(-g * {_SLOPE} * {_T}, xp, i + 1)"),
         "left": _interp(lambda eqn: "np.sum(g * (x < xp[0]))", segment=False),
         "right": _interp(lambda eqn: "np.sum(g * (x > xp[-1]))", segment=False)},
    jvp={"x": _interp(lambda eqn: f"x_dot * {_SLOPE}"),
         "fp": _interp(lambda eqn: f"{_from_fp(eqn)}((1 - {_TC}) * np.take(fp_dot, i) + "
                                   f"{_TC} * np.take(fp_dot, i + 1))"),
         "xp": _interp(lambda eqn: f"-{_SLOPE} * ((1 - {_T}) * np.take(xp_dot, i) + "
                                   f"{_T} * np.take(xp_dot, i + 1))"),
         "left": _interp(lambda eqn: "left_dot * (x < xp[0])", segment=False),
         "right": _interp(lambda eqn: "right_dot * (x > xp[-1])", segment=False)})
defprim("interp_index", SA.interp_index, "rt.interp_index", "x, xp", nondiff=True,
        batch=pointwise("x"), numba=NF.interp_index)

# ---- heaviside and nan_to_num: elementwise, piecewise constant or the identity ------------------
heaviside = defprim("heaviside", np.heaviside, "np.heaviside", "x, y", batch=BR.elementwise,
                    deriv={"x": "0", "y": "x == 0"},
                    lower="({y} if {x} == 0 else (T(1) if {x} > 0 else "
                          "(T(0) if {x} < 0 else {x})))")


def _nan_to_num_scalar(eqn):
    """Scalar form for jit's loops: the dtype's largest/smallest value by default."""
    big = "float_max_of({x})" if is_none(eqn, "posinf") else "{posinf}"
    small = "float_min_of({x})" if is_none(eqn, "neginf") else "{neginf}"
    nan = "{nan}" if "nan" in eqn.args else "0.0"
    return f"nan_to_num_scalar({{x}}, {nan}, {big}, {small})"    # (an integer: x itself)


nan_to_num = defprim(
    "nan_to_num", np.nan_to_num, "np.nan_to_num",
    "x, copy=True, nan=0.0, posinf=None, neginf=None", batch=BR.elementwise,
    deriv={"x": "np.isfinite(x)", "nan": "np.isnan(x)", "posinf": "np.isinf(x) * (x > 0)",
           "neginf": "np.isinf(x) * (x < 0)"}, lower=_nan_to_num_scalar)

# ---- take: a gather along axis (of the flattened array when axis is None) ----------------------


def _take_batch(s, eqn):
    """A batched x with a known axis: the axis moves past the batch axis. Batched indices into
    an unbatched x along axis None or 0: the result has the batch axis first as it is."""
    x, idx = eqn.args["x"], eqn.args["indices"]
    axis = _const(eqn.args, "axis", None)
    args = dict(eqn.args)
    if s.b(x) and not s.b(idx) and axis is not None:
        args["axis"] = Const(_shift(axis))
    elif not (s.b(idx) and not s.b(x) and axis in (None, 0)):
        raise NoRule("np.take of this batching")
    s.final(eqn.prim, args)


def _take_rank(s, eqn):
    rx, ri = s.r(eqn.args["x"]), s.r(eqn.args["indices"])
    axis = eqn.args.get("axis", Const(None))
    if not isinstance(axis, Const) or ri is None:
        return None
    return ri if axis.value is None else (None if rx is None else rx - 1 + ri)


take = defprim("take", np.take, "np.take", "x, indices, axis=None, out=None, mode='raise'",
               linear=("x",), batch=Rule("index", _take_batch, _take_rank),
               vjp={"x": "rt.take_vjp(g, x, indices, axis, mode)"}, numba=NF.take)
take_vjp = defprim("take_vjp", SA.take_vjp, "rt.take_vjp",
                   "ct, x, indices, axis=None, mode='raise'", shape_args=("x",), linear=("ct",),
                   batch=per_example,
                   vjp={"ct": "np.take(g, indices, axis, mode=mode)"}, numba=NF.take_vjp)
defmethod("take", take)

# ---- append: concatenate((arr, values), axis), of ravel(arr) and ravel(values) for axis None ----


def _append_vjp(which):
    def rule(eqn, k):
        if is_none(eqn, "axis"):
            arg = "arr" if which == 0 else "values"
            return (f"np.reshape(rt.concat_vjp(g, [np.ravel(arr), np.ravel(values)], {which}), "
                    f"np.shape({arg}))")
        return f"rt.concat_vjp(g, [arr, values], {which}, axis)"
    return rule


append = defprim("append", np.append, "np.append", "arr, values, axis=None", batch=per_example,
                 vjp={"arr": _append_vjp(0), "values": _append_vjp(1)},
                 jvp={"arr": "np.append(arr_dot, np.zeros_like(values), axis)",
                      "values": "np.append(np.zeros_like(arr), values_dot, axis)"})

# ---- meshgrid: output k broadcasts xi[k] along its own axis (axes 0 and 1 swap for 'xy') -------
meshgrid = defprim("meshgrid", np.meshgrid, "np.meshgrid",
                   "*xi, copy=True, sparse=False, indexing='xy'", batch=per_example,
                   array_result=True)
meshgrid.multi = lambda bound, const: [("meshgrid_part", {"k": k})
                                       for k in range(len(bound["xi"]))]


def _meshgrid_vjp(eqn, i):
    """The cotangent of xi[k] in output k: g summed over the other outputs' axes."""
    k, n = eqn.args["k"].value if "k" in eqn.args else 0, len(eqn.args["xi"].items)
    if i != k:
        return "0"
    xy = eqn.args.get("indexing", Const("xy")).value == "xy"
    axis = 1 - k if xy and n > 1 and k < 2 else k
    others = tuple(a for a in range(n) if a != axis)
    summed = f"np.sum(g, axis={others})" if others else "g"
    return f"np.reshape({summed}, np.shape(xi_{k}))"


meshgrid_part = defprim("meshgrid_part", SA.meshgrid_part, "rt.meshgrid_part",
                        "*xi, k=0, sparse=False, indexing='xy'", linear=("xi",),
                        batch=per_example, vjp={"xi": _meshgrid_vjp}, numba=NF.meshgrid_part)


# ---- select: the first choice whose condition holds, else the default ---------------------------


def _select_choice_vjp(eqn, k):
    return f"rt.unbroadcast(rt.select_part(g, condlist, k), choicelist_{k})"


select = defprim("select", np.select, "np.select", "condlist, choicelist, default=0",
                 diff=("choicelist", "default"), batch=per_example,
                 vjp={"choicelist": _select_choice_vjp,
                      "default": "rt.unbroadcast(rt.select_part(g, condlist), default)"},
                 jvp={"choicelist": "rt.select_part(choicelist_dot, condlist, k)",
                      "default": "rt.select_part(default_dot, condlist)"})
select_part = defprim("select_part", SA_select_part, "rt.select_part", "t, condlist, k=None",
                      linear=("t",), batch=per_example,
                      vjp={"t": "rt.select_part(g, condlist, k)"})


# ---- gradient: linear in f (differences along one axis); the transpose applies the dense
# difference matrix of the axis transposed (rt.gradient_vjp) -----------------------------------
_GRAD_ARGS = "varargs, axis, edge_order"
gradient = defprim("gradient", [np.gradient, AA.gradient_array], "rt.gradient_array",
                   "f, *varargs, axis=None, edge_order=1", linear=("f",), diff=("f",),
                   batch=per_example,
                   vjp={"f": f"rt.gradient_vjp(g, f, {_GRAD_ARGS})"},
                   jvp={"f": f"rt.gradient_apply(f_dot, f, {_GRAD_ARGS})"},
                   numba=NF.gradient_lines("f"))
defprim("gradient_apply", AA.gradient_apply, "rt.gradient_apply",
        "t, f, varargs, axis=None, edge_order=1", linear=("t",), shape_args=("f",),
        batch=per_example, vjp={"t": f"rt.gradient_vjp(g, f, {_GRAD_ARGS})"},
        numba=NF.gradient_lines("t"))
defprim("gradient_vjp", AA.gradient_vjp, "rt.gradient_vjp",
        "ct, f, varargs, axis=None, edge_order=1", linear=("ct",), shape_args=("f",),
        batch=per_example, vjp={"ct": f"rt.gradient_apply(g, f, {_GRAD_ARGS})"},
        numba=NF.gradient_lines("ct", transpose=True))
