"""Rows for NumPy's statistics: np.median, np.quantile, np.percentile, np.ptp, np.average,
np.cov and np.corrcoef.

An order statistic is a weighted sum of x: np.quantile(x, q) = sum(w * x) with
w = rt.quantile_mask(x, q, axis, method), the two sorted entries around q (n - 1) weighted as
linear interpolation weighs them (np.median: the middle one, or the two middle ones by
halves), a weight shared equally among tied entries, as np.max shares its cotangent. w is
piecewise constant in x, so the rules are linear in g and x_dot (second derivatives are 0);
they read like np.max's. In q, the linear method's quantile moves with the slope between
its two order statistics. np.ptp is max - min, written with the same extremum masks.

np.average(x, axis, weights) = sum(w x) / sum(w) with w = rt.weights_along(weights, x, axis)
(weights laid along `axis`). np.cov(m, y) = Xc diag(w) Xc^T / F for the observation matrix
X (one variable per row, rt.cov_obs_part), Xc = X - its weighted mean, F NumPy's
normalization; its cotangent is dX = (G + G^T) Xc diag(w) / F. np.corrcoef is
C / sqrt(diag C diag C^T) for C = np.cov(x, y), and its rules go through np.cov's.
"""
import numpy as np

from transpile.errors import TranspileError
from transpile.core.ir import Const
from transpile.primitives.batching import rules as BR
from transpile.primitives import numba_forms as NF
from transpile.primitives.batching.axis_rules import per_example
from transpile.primitives.batching.rules import NoRule, Rule, _const, _only_batched, _shift
from transpile.primitives.registry import defprim
from transpile_runtime import stats_adjoints as SA


def is_none(eqn, name):
    arg = eqn.args.get(name)
    return arg is None or (isinstance(arg, Const) and arg.value is None)


def refuse(eqn, message, construct, hint=None):
    """Refused while generating code, naming the user's line."""
    file, line = (eqn.loc[0], eqn.loc[1]) if eqn.loc else (None, None)
    raise TranspileError(message, file, line, construct=construct, hint=hint)


def _scalar_q(eqn):
    q = eqn.args.get("q")
    return q is None or (isinstance(q, Const) and np.ndim(q.value) == 0)


# ---- batching: a reduction over `axis` of a batched x (one q, no weights), else a loop -------


def _plain(eqn):
    return _scalar_q(eqn) and is_none(eqn, "weights")


def _reduce_batch(s, eqn):
    if not _plain(eqn):
        raise NoRule("an array q or weights")
    BR.reduction_batch(s, eqn)


def _reduce_rank(s, eqn):
    return BR.reduction_rank(s, eqn) if _plain(eqn) else None


def _mask_batch(s, eqn):
    """rt.quantile_mask(x, q, axis) of a batched x: x's shape, axes past the batch axis."""
    _only_batched(s, eqn, ["x"])
    if not _scalar_q(eqn):
        raise NoRule("an array q")
    x, args = eqn.args["x"], dict(eqn.args)
    axis, r = _const(args, "axis", None), s.r(x)
    if axis is not None:
        args["axis"] = Const(_shift(axis))
    elif r is not None:
        args["axis"] = Const(tuple(range(1, r + 1)))
    else:
        args["axis"] = s.emit("batch_axes", {"x": x}, base="axes", batched=False)
    s.final(eqn.prim, args)


REDUCE = Rule("reduction", _reduce_batch, _reduce_rank)
MASK = Rule("helper", _mask_batch, lambda s, eqn: s.r(eqn.args["x"]) if _scalar_q(eqn) else None)

# ---- order statistics ------------------------------------------------------------------------


def _order_rules(q_of, method):
    """vjp and jvp of x for the quantile at q_of(eqn) (template text): the scalar-q rules of
    np.max with the mask of the order statistics, or rt.quantile_vjp/_jvp over the q's."""
    def mask(eqn):
        m = eqn.args.get("method", Const("linear"))
        if not isinstance(m, Const) or m.value not in SA.QUANTILE_METHODS:
            refuse(eqn, f"derivatives of the method {getattr(m, 'value', m)!r} of "
                   f"{eqn.prim.path} are not supported", f"{eqn.prim.path}(..., method=...)",
                   f"use one of {', '.join(SA.QUANTILE_METHODS)}")
        return f"rt.quantile_mask(x, {q_of(eqn)}, axis, {method})"

    def vjp(eqn, k):
        if _scalar_q(eqn):
            return f"rt.sum_grad(g, x, axis, keepdims) * {mask(eqn)}"
        return f"rt.quantile_vjp(g, {mask(eqn)}, q, axis, keepdims)"

    def jvp(eqn, k):
        if _scalar_q(eqn):
            return f"np.sum(x_dot * {mask(eqn)}, axis=axis, keepdims=keepdims)"
        return f"rt.quantile_jvp(x_dot, {mask(eqn)}, q, axis, keepdims)"
    return {"x": vjp}, {"x": jvp}


def _q_rules(fn, per):
    """vjp and jvp of q: between the order statistics lo = floor(q (n - 1)) and lo + 1 the
    linear method's quantile moves with slope (n - 1) (x[lo + 1] - x[lo]) (np.quantile's
    methods 'higher' and 'lower' give those two); the other methods are piecewise constant."""
    slope = (f"((rt.reduced_count(x, axis) - 1){per} * ({fn}(x, q, axis, method='higher', "
             f"keepdims=keepdims) - {fn}(x, q, axis, method='lower', keepdims=keepdims)))")

    def linear(eqn):
        m = eqn.args.get("method", Const("linear"))
        return isinstance(m, Const) and m.value == "linear"

    def vjp(eqn, k):     # g * slope summed over all but q's axes
        return (f"np.reshape(np.sum(np.reshape(g * {slope}, (np.size(q), -1)), axis=1), "
                f"np.shape(q))") if linear(eqn) else "0"

    def jvp(eqn, k):
        return (f"np.reshape(np.reshape({slope}, (np.size(q), -1)) * np.reshape(q_dot, "
                f"(np.size(q), 1)), np.shape(ans))") if linear(eqn) else "0"
    return vjp, jvp


def _percent(eqn):
    """np.percentile's q as a fraction (written out when it is a constant: NumPy's
    true_divide(q, 100), so jit's forms see the constant)."""
    q = eqn.args["q"]
    if _scalar_q(eqn):
        return repr(float(q.value) / 100)
    if isinstance(q, Const):
        try:
            frac = np.true_divide(np.asarray(q.value, dtype=np.float64), 100)
        except (TypeError, ValueError):
            frac = None
        if frac is not None and frac.ndim == 1:
            return "(" + "".join(f"{float(v)!r}, " for v in frac) + ")"
    return "np.asarray(q) / 100"


_vjp, _jvp = _order_rules(lambda eqn: "0.5", "'linear'")
median = defprim("median", np.median, "np.median",
                 "x, axis=None, out=None, overwrite_input=False, keepdims=False",
                 batch=REDUCE, vjp=_vjp, jvp=_jvp, numba=NF.order_statistic("median"))
_SIG = "x, q, axis=None, out=None, overwrite_input=False, method='linear', keepdims=False"
for _name, _q, _per in [("quantile", lambda eqn: "q", ""), ("percentile", _percent, " / 100")]:
    _vjp, _jvp = _order_rules(_q, "method")
    _vjp["q"], _jvp["q"] = _q_rules(f"np.{_name}", _per)
    defprim(_name, getattr(np, _name), f"np.{_name}", _SIG, batch=REDUCE, vjp=_vjp, jvp=_jvp,
            numba=NF.order_statistic(_name))
defprim("quantile_mask", SA.quantile_mask, "rt.quantile_mask", "x, q, axis=None, method='linear'",
        nondiff=True, batch=MASK, numba=NF.quantile_mask)
quantile_jvp = defprim("quantile_jvp", SA.quantile_jvp, "rt.quantile_jvp",
                       "t, w, q, axis=None, keepdims=False", shape_args=("q",), linear=("t",),
                       batch=per_example, vjp={"t": "rt.quantile_vjp(g, w, q, axis, keepdims)"},
                       numba=NF.quantile_jvp)
quantile_vjp = defprim("quantile_vjp", SA.quantile_vjp, "rt.quantile_vjp",
                       "ct, w, q, axis=None, keepdims=False", shape_args=("q",), linear=("ct",),
                       batch=per_example, vjp={"ct": "rt.quantile_jvp(g, w, q, axis, keepdims)"},
                       numba=NF.quantile_vjp)

# ptp = max - min: the cotangent goes to the maximal entries and, negated, to the minimal ones
_SPREAD = ("(rt.extremum_mask(x, np.max(x, axis=axis, keepdims=keepdims), axis, keepdims) - "
           "rt.extremum_mask(x, np.min(x, axis=axis, keepdims=keepdims), axis, keepdims))")
ptp = defprim("ptp", np.ptp, "np.ptp", "x, axis=None, out=None, keepdims=False", batch=REDUCE,
              numba=NF.ptp,
              vjp={"x": f"rt.sum_grad(g, x, axis, keepdims) * {_SPREAD}"},
              jvp={"x": f"np.sum(x_dot * {_SPREAD}, axis=axis, keepdims=keepdims)"})

# ---- average: sum(w x) / sum(w) -----------------------------------------------------------------
_W = "rt.weights_along(weights, x, axis)"
_SUM_W = f"np.sum(rt.broadcast_like({_W}, x), axis=axis, keepdims=keepdims)"
_DEV = "(x - rt.sum_grad(ans, x, axis, keepdims))"


def _average_vjp_x(eqn, k):
    if is_none(eqn, "weights"):
        return "rt.sum_grad(g, x, axis, keepdims) / rt.reduced_count(x, axis)"
    return f"rt.sum_grad(g / {_SUM_W}, x, axis, keepdims) * {_W}"


# (np.average(..., returned=True) is not in the signature: it is refused where it is called)
average = defprim(
    "average", np.average, "np.average", "x, axis=None, weights=None, *, keepdims=False",
    batch=REDUCE, linear=("x",),
    vjp={"x": _average_vjp_x,
         "weights": f"rt.weights_back(rt.sum_grad(g / {_SUM_W}, x, axis, keepdims) * {_DEV}, "
                    "weights, x, axis)"},
    jvp={"weights": f"np.sum(rt.weights_along(weights_dot, x, axis) * {_DEV}, axis=axis, "
                    f"keepdims=keepdims) / {_SUM_W}"}, numba=NF.average)
weights_along = defprim("weights_along", SA.weights_along, "rt.weights_along",
                        "weights, x, axis=None", shape_args=("x",), linear=("weights",),
                        batch=per_example, vjp={"weights": "rt.weights_back(g, weights, x, axis)"},
                        numba=NF.weights_laid)
weights_back = defprim("weights_back", SA.weights_back, "rt.weights_back",
                       "ct, weights, x, axis=None", shape_args=("weights", "x"), linear=("ct",),
                       batch=per_example, numba=NF.weights_laid_back,
                       vjp={"ct": "rt.broadcast_like(rt.weights_along(g, weights, x, axis), ct)"})

# ---- cov and corrcoef ---------------------------------------------------------------------------


_XC = "(obs - np.sum(obs * w, axis=1, keepdims=True) / np.sum(w))"      # the centered data
_DXC = "(dobs - np.sum(dobs * w, axis=1, keepdims=True) / np.sum(w))"


class _Cov:
    """np.cov's rules as template text over a row's argument names (np.cov: m, y;
    np.corrcoef: x, y). The lambda binds, once each, obs (the observation matrix X), w (the
    observations' weights) and fact (the normalization F)."""

    def __init__(self, eqn, m, weighted):
        self.m = m
        obs = self.part(m, 0) if is_none(eqn, "y") else \
            f"{self.part(m, 0)} + {self.part('y', 1)}"
        w_args, f_args = (", fweights, aweights", ", bias, ddof, fweights, aweights") \
            if weighted else ("", "")
        self.bound = {"obs": obs, "w": f"rt.cov_weights({m}, rowvar{w_args})",
                      "fact": f"rt.cov_norm({m}, rowvar{f_args})"}

    def part(self, t, which):
        return f"rt.cov_obs_part({t}, {self.m}, y, rowvar, {which})"

    def let(self, body, **more):
        names = dict(self.bound, **more)
        return f"(lambda {', '.join(names)}: {body})({', '.join(names.values())})"

    def vjp(self, g, which):
        """dX = (G + G^T) Xc diag(w) / F, taken back to argument `which`."""
        return self.let(f"rt.cov_obs_vjp((gc + rt.mT(gc)) @ ({_XC} * w) / fact, {self.m}, y, "
                        f"rowvar, {which})", gc=f"np.atleast_2d({g})")

    def jvp(self, t, which):
        """dC = (dXc diag(w) Xc^T + Xc diag(w) dXc^T) / F, as a 2-D array."""
        return self.let(f"(({_DXC} * w) @ rt.mT({_XC}) + ({_XC} * w) @ rt.mT({_DXC})) / fact",
                        dobs=self.part(t, which))


def _cov_rules(m, weighted, vjp_of, jvp_of):
    args = [(m, 0), ("y", 1)]
    return ({a: (lambda eqn, k, w=w: vjp_of(_Cov(eqn, m, weighted), w)) for a, w in args},
            {a: (lambda eqn, k, a=a, w=w: jvp_of(_Cov(eqn, m, weighted), f"{a}_dot", w))
             for a, w in args})


_vjp, _jvp = _cov_rules("m", True, lambda c, which: c.vjp("g", which),
                        lambda c, t, which: f"np.reshape({c.jvp(t, which)}, np.shape(ans))")
cov = defprim("cov", np.cov, "np.cov", "m, y=None, rowvar=True, bias=False, ddof=None, "
              "fweights=None, aweights=None, *, dtype=None",
              batch=per_example, vjp=_vjp, jvp=_jvp, numba=NF.cov)
cov_obs_part = defprim("cov_obs_part", SA.cov_obs_part, "rt.cov_obs_part",
                       "t, m, y=None, rowvar=True, which=0", shape_args=("m", "y"),
                       linear=("t",), batch=per_example, numba=NF.cov_obs_part,
                       vjp={"t": "rt.cov_obs_vjp(g, m, y, rowvar, which)"})
cov_obs_vjp = defprim("cov_obs_vjp", SA.cov_obs_vjp, "rt.cov_obs_vjp",
                      "ct, m, y=None, rowvar=True, which=0", shape_args=("m", "y"),
                      linear=("ct",), batch=per_example, numba=NF.cov_obs_vjp,
                      vjp={"ct": "rt.cov_obs_part(g, m, y, rowvar, which)"})
defprim("cov_weights", SA.cov_weights, "rt.cov_weights",
        "m, rowvar=True, fweights=None, aweights=None", nondiff=True, batch=per_example,
        numba=NF.cov_constant(SA.cov_weights))
defprim("cov_norm", SA.cov_norm, "rt.cov_norm",
        "m, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None", nondiff=True,
        batch=per_example, numba=NF.cov_constant(SA.cov_norm))

# corrcoef: R = C / (s s^T), s = sqrt(diag C); dR = dC / (s s^T) - R (a 1^T + 1 a^T) with
# a = diag(dC) / (2 s^2), whose transpose gives C's cotangent G / (s s^T) - diag(b),
# b = ((G R) 1 + (G R)^T 1) / (2 s^2)
_SD = "np.sqrt(np.diagonal(np.atleast_2d(np.cov(x, y, rowvar))))"
_G, _R = "np.atleast_2d(g)", "np.atleast_2d(ans)"


def _corr_vjp(c, which):
    g_c = (f"{_G} / np.outer(sd, sd) - np.diag((np.sum({_G} * {_R}, axis=1) + "
           f"np.sum({_G} * {_R}, axis=0)) / (2 * sd * sd))")
    return f"(lambda sd: {c.vjp(g_c, which)})({_SD})"


def _corr_jvp(c, t, which):
    a = "(np.diagonal(dc) / (2 * sd * sd))"
    return (f"(lambda sd, dc: np.reshape(dc / np.outer(sd, sd) - {_R} * (rt.expand_last({a}) + "
            f"{a}), np.shape(ans)))({_SD}, {c.jvp(t, which)})")


_vjp, _jvp = _cov_rules("x", False, _corr_vjp, _corr_jvp)
corrcoef = defprim("corrcoef", np.corrcoef, "np.corrcoef", "x, y=None, rowvar=True, *, dtype=None",
                   batch=per_example, vjp=_vjp, jvp=_jvp, numba=NF.corrcoef)
