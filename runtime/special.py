"""scipy.special functions as generated code calls them (rt.erf, rt.gammaln, ...).

SciPy is imported on first use, not when transpile is imported. Each function returns the
floating dtype of its inputs (float32 in, float32 out), as JAX does.
"""
import numpy as np

_SPECIAL = None


def _sp():
    global _SPECIAL
    if _SPECIAL is None:
        import scipy.special
        _SPECIAL = scipy.special
    return _SPECIAL


def _float_type(*xs):
    dt = np.result_type(*xs)
    return dt if np.issubdtype(dt, np.inexact) else np.dtype(np.float64)


def _keep(out, *xs):
    dt = _float_type(*xs)
    if np.result_type(out) != dt:
        return np.asarray(out).astype(dt)[()]
    return out


def erf(x):
    return _keep(_sp().erf(x), x)


def erfc(x):
    return _keep(_sp().erfc(x), x)


def erfinv(x):
    return _keep(_sp().erfinv(x), x)


def gamma(x):
    return _keep(_sp().gamma(x), x)


def gammaln(x):
    return _keep(_sp().gammaln(x), x)


def digamma(x):
    return _keep(_sp().digamma(x), x)


def polygamma(n, x):
    return _keep(_sp().polygamma(n, x), x)


def expit(x):
    return _keep(_sp().expit(x), x)


def logit(x):
    return _keep(_sp().logit(x), x)


def xlogy(x, y):
    return _keep(_sp().xlogy(x, y), x, y)


def xlog1py(x, y):
    return _keep(_sp().xlog1py(x, y), x, y)


def i0(x):
    return _keep(_sp().i0(x), x)


def i1(x):
    return _keep(_sp().i1(x), x)


def i0e(x):
    return _keep(_sp().i0e(x), x)


def i1e(x):
    return _keep(_sp().i1e(x), x)


def i1_over_x(x):
    """d/dx i1(x) = i0(x) - i1(x)/x, with its limit 1/2 at x == 0."""
    x = np.asarray(x)
    safe = np.where(x == 0, 1, x)
    return np.where(x == 0, 0.5, i1(safe) / safe).astype(_float_type(x))[()]


def i1e_over_x(x):
    """i1e(x)/x, with its limit 1/2 at x == 0."""
    x = np.asarray(x)
    safe = np.where(x == 0, 1, x)
    return np.where(x == 0, 0.5, i1e(safe) / safe).astype(_float_type(x))[()]


def betaln(a, b):
    return _keep(_sp().betaln(a, b), a, b)


def beta(a, b):
    return _keep(_sp().beta(a, b), a, b)


def betainc(a, b, x):
    return _keep(_sp().betainc(a, b, x), a, b, x)


def gammainc(a, x):
    return _keep(_sp().gammainc(a, x), a, x)


def gammaincc(a, x):
    return _keep(_sp().gammaincc(a, x), a, x)


def ndtr(x):
    return _keep(_sp().ndtr(x), x)


def log_ndtr(x):
    return _keep(_sp().log_ndtr(x), x)


def _no_sign(return_sign):
    if return_sign:
        raise NotImplementedError(
            "scipy.special.logsumexp(..., return_sign=True) is not supported inside a "
            "transformed function; call it with return_sign=False (the default), with b >= 0")


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    _no_sign(return_sign)
    return _keep(_sp().logsumexp(a, axis=axis, b=b, keepdims=keepdims), a)


def softmax(x, axis=None):
    return _keep(_sp().softmax(x, axis=axis), x)


def log_softmax(x, axis=None):
    return _keep(_sp().log_softmax(x, axis=axis), x)

