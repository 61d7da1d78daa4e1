"""The nan-reductions (np.nanmean, nanvar, nanstd, nanprod, nanmax, nanmin, nanargmax,
nanargmin, nancumsum): NaN elements left out, and their cotangents 0 there."""
import numpy as np

from transpile.primitives.batching import rules as BR
from transpile.primitives.batching.axis_rules import axis_rule
from transpile.primitives.numpy.reductions import _EXT_JVP, _EXT_VJP
from transpile.primitives import numba_forms as NF
from transpile.primitives.registry import defprim

R = BR.reduction
_AXIS = axis_rule(["axis"])


# ---- nan-reductions ---------------------------------------------------------------------------------

_NAN = "np.isnan(x)"
_COUNT = "np.sum(~np.isnan(x), axis=axis, keepdims=keepdims)"
_MASKED_DOT = f"np.where({_NAN}, 0.0, x_dot)"
_CENTER = f"np.where({_NAN}, 0.0, x - np.nanmean(x, axis=axis, keepdims=True))"


_NSIG = "x, axis=None, dtype=None, out=None, keepdims=False"
defprim("nanmean", np.nanmean, "np.nanmean", _NSIG, batch=R, reduction=True,
        vjp={"x": f"np.where({_NAN}, 0.0, rt.sum_grad(g / {_COUNT}, x, axis, keepdims))"},
        jvp={"x": f"np.sum({_MASKED_DOT}, axis=axis, keepdims=keepdims) / {_COUNT}"},
        numba=NF.nan_whole("nanmean"))
_VSIG = "x, axis=None, dtype=None, out=None, ddof=0, keepdims=False"
defprim("nanvar", np.nanvar, "np.nanvar", _VSIG, batch=R, reduction=True,
        vjp={"x": f"rt.sum_grad(g / ({_COUNT} - ddof), x, axis, keepdims) * 2 * {_CENTER}"},
        jvp={"x": f"np.sum(2 * {_CENTER} * {_MASKED_DOT}, axis=axis, keepdims=keepdims) / "
                  f"({_COUNT} - ddof)"},
        numba=NF.nan_whole("nanvar", ddof=True))
defprim("nanstd", np.nanstd, "np.nanstd", _VSIG, batch=R, reduction=True,
        vjp={"x": f"rt.sum_grad(g / (ans * ({_COUNT} - ddof)), x, axis, keepdims) * {_CENTER}"},
        jvp={"x": f"np.sum({_CENTER} * {_MASKED_DOT}, axis=axis, keepdims=keepdims) / "
                  f"(({_COUNT} - ddof) * ans)"},
        numba=NF.nan_whole("nanstd", ddof=True))
defprim("nanprod", np.nanprod, "np.nanprod", _NSIG, batch=R, reduction=True,
        vjp={"x": f"np.where({_NAN}, 0.0, rt.sum_grad(g * ans, x, axis, keepdims) / "
                  "np.where(np.isnan(x), 1.0, x))"},
        jvp={"x": f"np.sum({_MASKED_DOT} * rt.sum_grad(ans, x, axis, keepdims) / "
                  "np.where(np.isnan(x), 1.0, x), axis=axis, keepdims=keepdims)"},
        numba=NF.nan_whole("nanprod"))
_MSIG = "x, axis=None, out=None, keepdims=False"
for _name in ("nanmax", "nanmin"):
    defprim(_name, getattr(np, _name), f"np.{_name}", _MSIG, batch=R, reduction=True,
            vjp=_EXT_VJP, jvp=_EXT_JVP, numba=NF.nan_whole(_name))
for _name in ("nanargmax", "nanargmin"):
    defprim(_name, getattr(np, _name), f"np.{_name}", "x, axis=None", nondiff=True,
            batch=R, int_result=True, numba=NF.nan_whole(_name))
defprim("nancumsum", np.nancumsum, "np.nancumsum", "x, axis=None, dtype=None, out=None",
        batch=BR.cumulative, linear=("x",),
        vjp={"x": f"np.where({_NAN}, 0.0, rt.cumsum_vjp(g, x, axis))"},
        jvp={"x": f"np.cumsum({_MASKED_DOT}, axis=axis)"}, numba=NF.nan_whole("nancumsum"),
        array_result=True)
