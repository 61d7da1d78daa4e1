"""scipy.stats densities as generated code calls them (rt.norm_logpdf, rt.mvn_logpdf, ...).

Values come from scipy.stats itself (imported on first use), cast to the inputs' floating
dtype (float32 in, float32 out). Dirichlet is written out (SciPy raises off the simplex; like
JAX, this returns -inf there, so finite differences along the simplex still work).
"""
import numpy as np

from .special import _float_type, _keep

_STATS = None


def _st():
    global _STATS
    if _STATS is None:
        import scipy.stats
        _STATS = scipy.stats
    return _STATS


def norm_logpdf(x, loc=0, scale=1):
    return _keep(_st().norm.logpdf(x, loc, scale), x, loc, scale)


def norm_pdf(x, loc=0, scale=1):
    return _keep(_st().norm.pdf(x, loc, scale), x, loc, scale)


def norm_cdf(x, loc=0, scale=1):
    return _keep(_st().norm.cdf(x, loc, scale), x, loc, scale)


def norm_logcdf(x, loc=0, scale=1):
    return _keep(_st().norm.logcdf(x, loc, scale), x, loc, scale)


def norm_sf(x, loc=0, scale=1):
    return _keep(_st().norm.sf(x, loc, scale), x, loc, scale)


def norm_logsf(x, loc=0, scale=1):
    return _keep(_st().norm.logsf(x, loc, scale), x, loc, scale)


def t_logpdf(x, df, loc=0, scale=1):
    return _keep(_st().t.logpdf(x, df, loc, scale), x, df, loc, scale)


def t_pdf(x, df, loc=0, scale=1):
    return _keep(_st().t.pdf(x, df, loc, scale), x, df, loc, scale)


def t_cdf(x, df, loc=0, scale=1):
    return _keep(_st().t.cdf(x, df, loc, scale), x, df, loc, scale)


def t_logcdf(x, df, loc=0, scale=1):
    return _keep(_st().t.logcdf(x, df, loc, scale), x, df, loc, scale)


def mvn_entropy(mean=None, cov=1, allow_singular=False):
    """scipy.stats.multivariate_normal.entropy for a 2-D cov: (d (1 + log 2 pi) + logdet) / 2."""
    cov = np.asarray(cov)
    if cov.ndim != 2:
        raise NotImplementedError("scipy.stats.multivariate_normal.entropy inside a transformed "
                                  "function needs a 2-D cov")
    out = _st().multivariate_normal.entropy(mean, cov)
    return _keep(out, cov)


def gamma_logpdf(x, a, loc=0, scale=1):
    return _keep(_st().gamma.logpdf(x, a, loc, scale), x, a, loc, scale)


def gamma_pdf(x, a, loc=0, scale=1):
    return _keep(_st().gamma.pdf(x, a, loc, scale), x, a, loc, scale)


def gamma_cdf(x, a, loc=0, scale=1):
    return _keep(_st().gamma.cdf(x, a, loc, scale), x, a, loc, scale)


def beta_logpdf(x, a, b, loc=0, scale=1):
    return _keep(_st().beta.logpdf(x, a, b, loc, scale), x, a, b, loc, scale)


def beta_pdf(x, a, b, loc=0, scale=1):
    return _keep(_st().beta.pdf(x, a, b, loc, scale), x, a, b, loc, scale)


def beta_cdf(x, a, b, loc=0, scale=1):
    return _keep(_st().beta.cdf(x, a, b, loc, scale), x, a, b, loc, scale)


def poisson_logpmf(k, mu, loc=0):
    return _keep(_st().poisson.logpmf(k, mu, loc), k, mu, loc)


def poisson_pmf(k, mu, loc=0):
    return _keep(_st().poisson.pmf(k, mu, loc), k, mu, loc)


def poisson_cdf(k, mu, loc=0):
    return _keep(_st().poisson.cdf(k, mu, loc), k, mu, loc)


def _mvn_check(x, cov):
    if np.ndim(cov) != 2 or np.ndim(x) > 2:
        raise NotImplementedError(
            "scipy.stats.multivariate_normal inside a transformed function needs a 2-D cov "
            f"matrix and x of shape (d,) or (n, d) (got cov.ndim={np.ndim(cov)}, "
            f"x.ndim={np.ndim(x)}); write a diagonal covariance as np.diag(v)")


def mvn_logpdf(x, mean=None, cov=1, allow_singular=False):
    """scipy.stats.multivariate_normal.logpdf for a 2-D cov."""
    _mvn_check(x, cov)
    out = _st().multivariate_normal.logpdf(x, mean, cov, allow_singular)
    return _keep(out, x, cov) if mean is None else _keep(out, x, mean, cov)


def mvn_pdf(x, mean=None, cov=1, allow_singular=False):
    """scipy.stats.multivariate_normal.pdf for a 2-D cov."""
    return np.exp(mvn_logpdf(x, mean, cov, allow_singular))


def dirichlet_logpdf(x, alpha):
    """log density of Dirichlet(alpha) at x (components along axis 0); -inf off the simplex."""
    x, alpha = np.asarray(x), np.asarray(alpha)
    if alpha.ndim != 1 or x.ndim > 2 or x.shape[0] != alpha.shape[0]:
        raise NotImplementedError(
            "scipy.stats.dirichlet inside a transformed function needs alpha of shape (k,) and "
            f"x of shape (k,) or (k, n) (got x {x.shape}, alpha {alpha.shape})")
    import scipy.special as sp
    a = alpha.reshape((-1,) + (1,) * (x.ndim - 1))
    norm = np.sum(sp.gammaln(alpha)) - sp.gammaln(np.sum(alpha))
    logp = np.sum(sp.xlogy(a - 1, x), axis=0) - norm
    inside = np.all(x > 0, axis=0) & (np.abs(np.sum(x, axis=0) - 1) < 1e-6)
    out = np.where(inside, logp, -np.inf)
    return out.astype(_float_type(x, alpha))[()]


def dirichlet_pdf(x, alpha):
    return np.exp(dirichlet_logpdf(x, alpha))
