"""scipy.special: one row per function. Generated code calls the rt.* wrappers
(runtime/special.py, SciPy imported on first use); `defalias` makes scipy.special.erf & co.
mean the same rows once SciPy is imported. Elementwise rows give `deriv` (the partial
derivative per argument) and, where Numba has the function, `lower` (its scalar form in a
fused loop; runtime/backends/numba_special.py holds the scalar kernels)."""
import numpy as np

import transpile_runtime as rt
from transpile.errors import TranspileError
from transpile.core.ir import Const
from transpile.primitives.batching import rules as BR
from transpile.primitives import numba_forms as NF
from transpile.primitives.registry import defalias, defprim

E = BR.elementwise
TWO_OVER_SQRT_PI = "1.1283791670955126"


def _special(name, sig, deriv, lower=None, extra=(), np_alias=None, scipy_name=None):
    impls = [getattr(rt, name)] + ([np_alias] if np_alias is not None else [])
    prim = defprim(f"special_{name}", impls, f"rt.{name}", sig, batch=E, deriv=deriv,
                   lower=lower)
    for alias in (scipy_name or name,) + tuple(extra):
        defalias(prim, "scipy.special", alias)
    return prim


# ---- error function, gamma family ----------------------------------------------------------
erf = _special("erf", "x", {"x": f"{TWO_OVER_SQRT_PI} * np.exp(-(x * x))"},
               lower="math.erf({x})")
erfc = _special("erfc", "x", {"x": f"-{TWO_OVER_SQRT_PI} * np.exp(-(x * x))"},
                lower="math.erfc({x})")
erfinv = _special("erfinv", "x", {"x": "0.886226925452758 * np.exp(ans * ans)"},
                  lower="erfinv_scalar({x})")
gamma = _special("gamma", "x", {"x": "ans * rt.digamma(x)"}, lower="math.gamma({x})")
gammaln = _special("gammaln", "x", {"x": "rt.digamma(x)"}, lower="math.lgamma({x})")
digamma = _special("digamma", "x", {"x": "rt.polygamma(1, x)"}, extra=("psi",),
                   lower="digamma_scalar({x})")


def _polygamma_scalar(eqn):
    """Scalar kernels for n = 0 and n = 1 (a constant order); other orders are not lowered."""
    n = eqn.args.get("n")
    if isinstance(n, Const) and n.value in (0, 1):
        return ("digamma_scalar({x})", "trigamma_scalar({x})")[n.value]
    return None


polygamma = _special("polygamma", "n, x", {"x": "rt.polygamma(n + 1, x)"},
                     lower=_polygamma_scalar)
betaln = _special("betaln", "a, b", {"a": "rt.digamma(a) - rt.digamma(a + b)",
                                     "b": "rt.digamma(b) - rt.digamma(a + b)"},
                  lower="(math.lgamma({a}) + math.lgamma({b}) - math.lgamma({a} + {b}))")

beta = _special("beta", "a, b", {"a": "ans * (rt.digamma(a) - rt.digamma(a + b))",
                                 "b": "ans * (rt.digamma(b) - rt.digamma(a + b))"})
# regularized incomplete beta/gamma: derivatives in x only (in a, b: no rule, refused by name)
_DBETAINC = "np.exp((a - 1) * np.log(x) + (b - 1) * np.log1p(-x) - rt.betaln(a, b))"
betainc = _special("betainc", "a, b, x", {"x": _DBETAINC})
_DGAMMAINC = "np.exp((a - 1) * np.log(x) - x - rt.gammaln(a))"
gammainc = _special("gammainc", "a, x", {"x": _DGAMMAINC})
gammaincc = _special("gammaincc", "a, x", {"x": f"-{_DGAMMAINC}"})

# ---- logistic, logs ----------------------------------------------------------------------------
expit = _special("expit", "x", {"x": "ans * (1 - ans)"},
                 lower="(T(1) / (T(1) + np.exp(-{x})))")
logit = _special("logit", "x", {"x": "1 / (x * (1 - x))"},
                 lower="np.log({x} / (T(1) - {x}))")
# JAX's rules: d/dx = log(y) also at x == 0 (xlogy itself is 0 there)
xlogy = _special("xlogy", "x, y", {"x": "np.log(y)", "y": "x / y"},
                 lower="(T(0) if {x} == 0 else {x} * np.log({y}))")
xlog1py = _special("xlog1py", "x, y", {"x": "np.log1p(y)", "y": "x / (1 + y)"},
                   lower="(T(0) if {x} == 0 else {x} * np.log1p({y}))")

# ---- modified Bessel functions -------------------------------------------------------------
i0 = _special("i0", "x", {"x": "rt.i1(x)"}, np_alias=np.i0)
i1 = _special("i1", "x", {"x": "rt.i0(x) - rt.i1_over_x(x)"})
i0e = _special("i0e", "x", {"x": "rt.i1e(x) - np.sign(x) * ans"})
i1e = _special("i1e", "x", {"x": "rt.i0e(x) - np.sign(x) * ans - rt.i1e_over_x(x)"})
i1_over_x = defprim("i1_over_x", rt.i1_over_x, "rt.i1_over_x", "x", batch=E,
                    deriv={"x": "(rt.i0(x) - 2 * rt.i1_over_x(x)) / np.where(x == 0, 1, x)"})
i1e_over_x = defprim("i1e_over_x", rt.i1e_over_x, "rt.i1e_over_x", "x", batch=E,
                     deriv={"x": "(rt.i0e(x) - np.sign(x) * rt.i1e(x) - 2 * rt.i1e_over_x(x))"
                                 " / np.where(x == 0, 1, x)"})

# ---- normal distribution helpers (scipy.stats.norm's cdf) --------------------------------------
ndtr = _special("ndtr", "x", {"x": "0.3989422804014327 * np.exp(-0.5 * x * x)"},
                lower="(T(0.5) * math.erfc(-{x} * T(0.7071067811865476)))")
log_ndtr = _special("log_ndtr", "x", {"x": "0.3989422804014327 * np.exp(-0.5 * x * x - ans)"},
                    lower="log_ndtr_scalar({x})")


# ---- reductions over an axis: logsumexp, softmax, log_softmax -----------------------------------


def _axis_rank(s, eqn):
    arr = eqn.args.get("a", eqn.args.get("x"))
    r = s.r(arr)
    if eqn.prim.name != "special_logsumexp":
        return r
    axis = eqn.args.get("axis", Const(None))
    keep = eqn.args.get("keepdims", Const(False))
    if not isinstance(axis, Const) or not isinstance(keep, Const):
        return None
    if keep.value:
        return r
    if axis.value is None:
        return 0
    n = len(axis.value) if isinstance(axis.value, (tuple, list)) else 1
    return None if r is None else r - n


def _axis_batch(s, eqn):
    """Only the array argument batched: move `axis` past the batch axis (None: every
    per-example axis)."""
    key = "a" if "a" in eqn.args else "x"
    BR._only_batched(s, eqn, [key])
    args = dict(eqn.args)
    axis = BR._const(args, "axis", None)
    if axis is None:
        r = s.r(args[key])
        if r is None:
            raise BR.NoRule("rank unknown")
        args["axis"] = Const(tuple(range(1, r + 1)))
    else:
        args["axis"] = Const(BR._shift(axis))
    s.final(eqn.prim, args)


AXIS = BR.Rule("axis", _axis_batch, _axis_rank)


def _refuse_sign(eqn):
    sign = eqn.args.get("return_sign", Const(False))
    if not (isinstance(sign, Const) and sign.value is False):
        file, line = (eqn.loc[0], eqn.loc[1]) if eqn.loc else (None, None)
        raise TranspileError("scipy.special.logsumexp(..., return_sign=True) has no derivative "
                             "rule", file, line, construct="logsumexp(..., return_sign=True)",
                             hint="call it with return_sign=False (the default), with b >= 0")


_LSE_W = "np.exp(a - rt.sum_grad(ans, a, axis, keepdims))"


def _has_b(eqn):
    b = eqn.args.get("b", Const(None))
    return not (isinstance(b, Const) and b.value is None)


def _lse_vjp_a(eqn, k):
    _refuse_sign(eqn)
    w = _LSE_W + (" * b" if _has_b(eqn) else "")
    return f"rt.sum_grad(g, a, axis, keepdims) * {w}"


def _lse_jvp_a(eqn, k):
    _refuse_sign(eqn)
    w = _LSE_W + (" * b" if _has_b(eqn) else "")
    return f"np.sum(a_dot * {w}, axis=axis, keepdims=keepdims)"


def _lse_vjp_b(eqn, k):
    _refuse_sign(eqn)
    return f"rt.unbroadcast(rt.sum_grad(g, a, axis, keepdims) * {_LSE_W}, b)"


def _lse_jvp_b(eqn, k):
    _refuse_sign(eqn)
    return f"np.sum(b_dot * {_LSE_W}, axis=axis, keepdims=keepdims)"


logsumexp = defprim("special_logsumexp", rt.logsumexp, "rt.logsumexp",
                    "a, axis=None, b=None, keepdims=False, return_sign=False", batch=AXIS,
                    vjp={"a": _lse_vjp_a, "b": _lse_vjp_b}, jvp={"a": _lse_jvp_a, "b": _lse_jvp_b},
                    numba=NF.logsumexp)
softmax = defprim("special_softmax", rt.softmax, "rt.softmax", "x, axis=None", batch=AXIS,
                  vjp={"x": "ans * (g - np.sum(g * ans, axis=axis, keepdims=True))"},
                  jvp={"x": "ans * (x_dot - np.sum(x_dot * ans, axis=axis, keepdims=True))"})
log_softmax = defprim("special_log_softmax", rt.log_softmax, "rt.log_softmax", "x, axis=None",
                      batch=AXIS,
                      vjp={"x": "g - np.exp(ans) * np.sum(g, axis=axis, keepdims=True)"},
                      jvp={"x": "x_dot - np.sum(np.exp(ans) * x_dot, axis=axis, keepdims=True)"})
for _prim, _name in [(logsumexp, "logsumexp"), (softmax, "softmax"),
                     (log_softmax, "log_softmax")]:
    defalias(_prim, "scipy.special", _name)
