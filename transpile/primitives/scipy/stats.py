"""scipy.stats densities: one row per (distribution, method). `scipy.stats.norm.logpdf` is a
bound method of a distribution instance (a new object at every attribute access), so the rows
are found by instance and method name (registry.defalias). Generated code calls the rt.*
functions of runtime/distributions.py. Univariate rows are elementwise (`deriv` per argument,
broadcasting like NumPy); parameters without a rule (t.cdf's df, gamma.cdf's a, beta.cdf's
a and b, poisson's k) refuse to be differentiated with an error naming the user's line."""
import transpile_runtime as rt
from transpile.core.ir import Const
from transpile.primitives.batching import rules as BR
from transpile.primitives.batching.axis_rules import per_example
from transpile.primitives.registry import defalias, defprim

E = BR.elementwise


def _scalar(fn, wrap="{}"):
    """`lower` for a fused Numba loop: fn (runtime/backends/numba_special.py) on the row's
    arguments, defaults written in for those the call left out."""
    def template(eqn):
        args = [f"{{{p.name}}}" if p.name in eqn.args else repr(float(p.default))
                for p in eqn.prim.params]
        return wrap.format(f"{fn}({', '.join(args)})")
    return template


def _row(dist, method, sig, deriv, scipy_dist=None, lower=None):
    name = f"{dist}_{method}"
    prim = defprim(f"stats_{name}", getattr(rt, name), f"rt.{name}", sig, batch=E, deriv=deriv,
                   lower=lower)
    defalias(prim, "scipy.stats", f"{scipy_dist or dist}.{method}")
    return prim


def _times_ans(deriv):
    return {k: f"ans * ({v})" for k, v in deriv.items()}


def _density_rows(dist, sig, dlogpdf, dcdf, logpdf_scalar=None, cdf_scalar=None):
    """logpdf, pdf (= ans * dlogpdf) and cdf rows."""
    _row(dist, "logpdf", sig, dlogpdf, lower=logpdf_scalar and _scalar(logpdf_scalar))
    _row(dist, "pdf", sig, _times_ans(dlogpdf),
         lower=logpdf_scalar and _scalar(logpdf_scalar, "np.exp({})"))
    _row(dist, "cdf", sig, dcdf, lower=cdf_scalar and _scalar(cdf_scalar))


# ---- normal ---------------------------------------------------------------------------------
Z = "((x - loc) / scale)"
_NORM = "x, loc=0, scale=1"
_PDF = "rt.norm_pdf(x, loc, scale)"
_density_rows("norm", _NORM,
              {"x": f"-{Z} / scale", "loc": f"{Z} / scale", "scale": f"({Z} * {Z} - 1) / scale"},
              {"x": _PDF, "loc": f"-{_PDF}", "scale": f"-{_PDF} * {Z}"},
              "norm_logpdf_scalar", "norm_cdf_scalar")
_row("norm", "sf", _NORM, {"x": f"-{_PDF}", "loc": _PDF, "scale": f"{_PDF} * {Z}"},
     lower=_scalar("norm_sf_scalar"))
_R = "np.exp(rt.norm_logpdf(x, loc, scale) - ans)"
_row("norm", "logcdf", _NORM, {"x": _R, "loc": f"-{_R}", "scale": f"-{_R} * {Z}"},
     lower=_scalar("norm_logcdf_scalar"))
_row("norm", "logsf", _NORM, {"x": f"-{_R}", "loc": _R, "scale": f"{_R} * {Z}"},
     lower=_scalar("norm_logsf_scalar"))

# ---- Student's t ------------------------------------------------------------------------------
_T = "x, df, loc=0, scale=1"
_D = f"(df + {Z} * {Z})"
_TPDF = "rt.t_pdf(x, df, loc, scale)"
_density_rows(
    "t", _T,
    {"x": f"-(df + 1) * {Z} / ({_D} * scale)", "loc": f"(df + 1) * {Z} / ({_D} * scale)",
     "scale": f"((df + 1) * {Z} * {Z} / {_D} - 1) / scale",
     "df": f"0.5 * (rt.digamma((df + 1) / 2) - rt.digamma(df / 2) - 1 / df"
           f" - np.log1p({Z} * {Z} / df) + (df + 1) * {Z} * {Z} / (df * {_D}))"},
    {"x": _TPDF, "loc": f"-{_TPDF}", "scale": f"-{_TPDF} * {Z}"}, "t_logpdf_scalar")

_TR = "np.exp(rt.t_logpdf(x, df, loc, scale) - ans)"
_row("t", "logcdf", _T, {"x": _TR, "loc": f"-{_TR}", "scale": f"-{_TR} * {Z}"})

# ---- gamma -------------------------------------------------------------------------------------
_G = "x, a, loc=0, scale=1"
_DG = f"((a - 1) / {Z} - 1)"
_GPDF = "rt.gamma_pdf(x, a, loc, scale)"
_density_rows(
    "gamma", _G,
    {"x": f"{_DG} / scale", "loc": f"-{_DG} / scale", "scale": f"({Z} - a) / scale",
     "a": f"np.log({Z}) - rt.digamma(a)"},
    {"x": _GPDF, "loc": f"-{_GPDF}", "scale": f"-{_GPDF} * {Z}"})

# ---- beta --------------------------------------------------------------------------------------
_B = "x, a, b, loc=0, scale=1"
_DB = f"((a - 1) / {Z} - (b - 1) / (1 - {Z}))"
_BPDF = "rt.beta_pdf(x, a, b, loc, scale)"
_density_rows(
    "beta", _B,
    {"x": f"{_DB} / scale", "loc": f"-{_DB} / scale", "scale": f"-({_DB} * {Z} + 1) / scale",
     "a": f"np.log({Z}) - rt.digamma(a) + rt.digamma(a + b)",
     "b": f"np.log1p(-{Z}) - rt.digamma(b) + rt.digamma(a + b)"},
    {"x": _BPDF, "loc": f"-{_BPDF}", "scale": f"-{_BPDF} * {Z}"})

# ---- Poisson (derivative in mu only; k is a count) ---------------------------------------------
_P = "k, mu, loc=0"
_DP = "((k - loc) / mu - 1)"
_row("poisson", "logpmf", _P, {"mu": _DP})
_row("poisson", "pmf", _P, {"mu": f"ans * {_DP}"})
_row("poisson", "cdf", _P, {"mu": "-rt.poisson_pmf(np.floor(k - loc), mu)"})


# ---- multivariate normal: x (d,) or (n, d), mean (d,), cov (d, d) -------------------------------


def _r(eqn):
    mean = eqn.args.get("mean", Const(None))
    return "x" if isinstance(mean, Const) and mean.value is None else "(x - mean)"


# SciPy factors cov with scipy.linalg.eigh(lower=True): it reads the lower triangle of cov,
# S = rt.tri_read(cov) (cov mirrored), so the rules use S and the cotangent of cov is
# rt.tri_read_t of the symmetric one (0 above the diagonal; JAX symmetrizes instead: the two
# agree along symmetric directions)
_S = "rt.tri_read(cov)"


def _w(eqn):
    """S^-1 (x - mean), one row per sample."""
    return f"np.squeeze(np.linalg.solve({_S}, rt.expand_last({_r(eqn)})), -1)"


def _mvn_rules(scale_g, scale_t):
    """Rules of logpdf (scale_g = 'g', scale_t = '1') or pdf ('g * ans', 'ans')."""
    def vjp_x(eqn, k):
        return f"rt.unbroadcast(-rt.expand_last({scale_g}) * {_w(eqn)}, x)"

    def vjp_mean(eqn, k):
        return f"rt.unbroadcast(rt.expand_last({scale_g}) * {_w(eqn)}, mean)"

    def vjp_cov(eqn, k):
        w = _w(eqn)
        return (f"rt.tri_read_t(0.5 * (rt.mT(np.atleast_2d(rt.expand_last({scale_g}) * {w})) @ "
                f"np.atleast_2d({w})) - 0.5 * np.sum({scale_g}) * np.linalg.inv({_S}))")

    def jvp_x(eqn, k):
        return f"-{scale_t} * np.sum(x_dot * {_w(eqn)}, axis=-1)"

    def jvp_mean(eqn, k):
        return f"{scale_t} * np.sum(mean_dot * {_w(eqn)}, axis=-1)"

    def jvp_cov(eqn, k):
        w = _w(eqn)
        t = "rt.tri_read(cov_dot)"
        return (f"{scale_t} * (0.5 * np.sum({w} * np.squeeze({t} @ rt.expand_last({w}), -1),"
                f" axis=-1) - 0.5 * np.trace(np.linalg.solve({_S}, {t})))")
    return ({"x": vjp_x, "mean": vjp_mean, "cov": vjp_cov},
            {"x": jvp_x, "mean": jvp_mean, "cov": jvp_cov})


def _one_batched_row(key, transpose):
    """vmap: only `key` batched, one example per call (the row takes a stack of examples)."""
    def rank(s, eqn):
        return 0 if s.r(eqn.args[key]) == 1 else None

    def batch(s, eqn):
        BR._only_batched(s, eqn, [key])
        if s.r(eqn.args[key]) != 1:
            raise BR.NoRule("several samples per example")
        args = dict(eqn.args)
        if transpose:
            args[key] = s.emit("transpose", {"x": args[key]}, base=args[key].name + "_T",
                               rank=None)
        s.final(eqn.prim, args)
    return BR.Rule("stack", batch, rank)


_MVN = "x, mean=None, cov=1, allow_singular=False"
for _method, _g, _t in [("logpdf", "g", "1"), ("pdf", "g * ans", "ans")]:
    _vjp, _jvp = _mvn_rules(_g, _t)
    _prim = defprim(f"stats_mvn_{_method}", getattr(rt, f"mvn_{_method}"), f"rt.mvn_{_method}",
                    _MVN, batch=_one_batched_row("x", False), vjp=_vjp, jvp=_jvp)
    defalias(_prim, "scipy.stats", f"multivariate_normal.{_method}")

# entropy: (d (1 + log 2 pi) + log det cov) / 2, which does not depend on the mean
_ent = defprim("stats_mvn_entropy", rt.mvn_entropy, "rt.mvn_entropy",
               "mean=None, cov=1, allow_singular=False", batch=per_example,
               vjp={"mean": "np.zeros_like(mean)",
                    "cov": f"rt.tri_read_t(0.5 * g * np.linalg.inv({_S}))"},
               jvp={"mean": "np.zeros_like(ans)",
                    "cov": f"0.5 * np.trace(np.linalg.solve({_S}, rt.tri_read(cov_dot)))"})
defalias(_ent, "scipy.stats", "multivariate_normal.entropy")

# ---- Dirichlet: x (k,) or (k, n), alpha (k,); np.transpose puts the k axis last -----------------
_XT = "np.transpose(x)"
_DA = f"(np.log({_XT}) - rt.digamma(alpha) + rt.digamma(np.sum(alpha)))"
for _method, _g, _t in [("logpdf", "g", "1"), ("pdf", "g * ans", "ans")]:
    _prim = defprim(
        f"stats_dirichlet_{_method}", getattr(rt, f"dirichlet_{_method}"),
        f"rt.dirichlet_{_method}", "x, alpha", batch=_one_batched_row("x", True),
        vjp={"x": f"np.transpose(rt.expand_last({_g}) * (alpha - 1) / {_XT})",
             "alpha": f"np.sum(np.atleast_2d(rt.expand_last({_g}) * {_DA}), axis=0)"},
        jvp={"x": f"{_t} * np.sum(np.transpose(x_dot) * (alpha - 1) / {_XT}, axis=-1)",
             "alpha": f"{_t} * np.sum(alpha_dot * {_DA}, axis=-1)"})
    defalias(_prim, "scipy.stats", f"dirichlet.{_method}")
