"""Reductions over an axis (None, int or tuple) with keepdims. Reverse rules broadcast the
cotangent back over the reduced axes with rt.sum_grad."""
import numpy as np

from transpile.primitives.batching import rules as BR
from transpile.primitives import numba_forms as NF
from transpile.primitives.registry import defmethod, defprim

R = BR.reduction
SIG = "x, axis=None, dtype=None, out=None, keepdims=False"

sum_ = defprim("sum", np.sum, "np.sum", SIG, batch=R, linear=("x",),
               vjp={"x": "rt.sum_grad(g, x, axis, keepdims)"}, reduction=True, reduce="sum")
mean = defprim("mean", np.mean, "np.mean", SIG, batch=R, linear=("x",),
               vjp={"x": "rt.sum_grad(g, x, axis, keepdims) / rt.reduced_count(x, axis)"},
               reduction=True, reduce="mean")
# d prod / d x_i: the product of the other elements, exact where x has zeros (ans / x is 0 / 0
# there). With P the product of the nonzero elements of the reduced slice and zs the sum of its
# zero elements (0, but with the derivative of those elements): no zero, P / x_i; one zero, P at
# the zero and zs P / x_i elsewhere; two, (zs - x_i) P at a zero and 0 elsewhere; more, 0. Each
# branch is the other elements' product as a function of x (the zeros written as zs), so its
# own derivative (second derivatives of prod) is exact too.
_ZEROS = "np.sum(x == 0, axis=axis, keepdims=True)"
_NONZERO = "np.where(x == 0, 1, x)"
_ZERO_ENTRIES = "np.where(x == 0, x, 0)"
_P = f"np.prod({_NONZERO}, axis=axis, keepdims=True)"
_ZS = f"np.sum({_ZERO_ENTRIES}, axis=axis, keepdims=True)"
_OTHERS = (f"np.where({_ZEROS} == 0, {_P} / {_NONZERO}, "
           f"np.where({_ZEROS} == 1, np.where(x == 0, {_P}, {_ZS} * {_P} / {_NONZERO}), "
           f"np.where(({_ZEROS} == 2) & (x == 0), ({_ZS} - {_ZERO_ENTRIES}) * {_P}, 0)))")
prod = defprim("prod", np.prod, "np.prod", SIG, batch=R,
               vjp={"x": f"rt.sum_grad(g, x, axis, keepdims) * {_OTHERS}"},
               jvp={"x": f"np.sum(x_dot * {_OTHERS}, axis=axis, keepdims=keepdims)"},
               reduction=True, reduce="prod")
_EXT_VJP = {"x": "rt.sum_grad(g, x, axis, keepdims) * rt.extremum_mask(x, ans, axis, keepdims)"}
_EXT_JVP = {"x": "np.sum(x_dot * rt.extremum_mask(x, ans, axis, keepdims), axis=axis, keepdims=keepdims)"}
max_ = defprim("max", [np.max, np.amax], "np.max", "x, axis=None, out=None, keepdims=False",
               batch=R, vjp=_EXT_VJP, jvp=_EXT_JVP, reduction=True, reduce="max")
min_ = defprim("min", [np.min, np.amin], "np.min", "x, axis=None, out=None, keepdims=False",
               batch=R, vjp=_EXT_VJP, jvp=_EXT_JVP, reduction=True, reduce="min")
_CENTERED = "(x - np.mean(x, axis=axis, keepdims=True))"
var = defprim("var", np.var, "np.var", "x, axis=None, dtype=None, out=None, ddof=0, keepdims=False",
              batch=R,
              vjp={"x": f"rt.sum_grad(g, x, axis, keepdims) * 2 * np.conj({_CENTERED}) / (rt.reduced_count(x, axis) - ddof)"},
              jvp={"x": f"np.sum(2 * np.real(x_dot * np.conj({_CENTERED})), axis=axis, keepdims=keepdims) / (rt.reduced_count(x, axis) - ddof)"},
              reduction=True)
std = defprim("std", np.std, "np.std", "x, axis=None, dtype=None, out=None, ddof=0, keepdims=False",
              batch=R,
              vjp={"x": f"rt.sum_grad(g / ans, x, axis, keepdims) * np.conj({_CENTERED}) / (rt.reduced_count(x, axis) - ddof)"},
              jvp={"x": f"np.sum(np.real(x_dot * np.conj({_CENTERED})), axis=axis, keepdims=keepdims) / ((rt.reduced_count(x, axis) - ddof) * ans)"},
              reduction=True)
cumsum = defprim("cumsum", np.cumsum, "np.cumsum", "x, axis=None, dtype=None, out=None",
                 batch=BR.cumulative, linear=("x",),
                 vjp={"x": "rt.cumsum_vjp(g, x, axis)"}, numba=NF.cumsum, array_result=True)


def _plain_norm(eqn):
    o = eqn.args.get("ord")
    return o is None or (hasattr(o, "value") and o.value in (None, "fro"))


def _norm_vjp(eqn, k):
    """ord None / 'fro': a template (second derivatives follow); other ords: rt.norm_vjp.
    Complex x as in JAX: the cotangent of x is g * conj(d norm), the tangent Re(sum(conj(x) t))."""
    if _plain_norm(eqn):
        return "rt.sum_grad(g / ans, x, axis, keepdims) * np.conj(x)"
    return "rt.norm_vjp(g, x, ans, ord, axis, keepdims)"


def _norm_jvp(eqn, k):
    if _plain_norm(eqn):
        return "np.real(np.sum(x_dot * np.conj(x), axis=axis, keepdims=keepdims)) / ans"
    return "rt.norm_jvp(x_dot, x, ans, ord, axis, keepdims)"


norm = defprim("norm", np.linalg.norm, "np.linalg.norm", "x, ord=None, axis=None, keepdims=False",
               batch=R, vjp={"x": _norm_vjp}, jvp={"x": _norm_jvp}, numba=NF.norm)

for _name, _prim in [("sum", sum_), ("mean", mean), ("prod", prod), ("max", max_), ("min", min_),
                     ("var", var), ("std", std), ("cumsum", cumsum)]:
    defmethod(_name, _prim)

nansum = defprim("nansum", np.nansum, "np.nansum",
                 "x, axis=None, dtype=None, out=None, keepdims=False", batch=BR.reduction,
                 vjp={"x": "np.where(np.isnan(x), 0.0, rt.sum_grad(g, x, axis, keepdims))"},
                 jvp={"x": "np.sum(np.where(np.isnan(x), 0.0, x_dot), axis=axis, "
                           "keepdims=keepdims)"}, numba=NF.nan_whole("nansum"))
