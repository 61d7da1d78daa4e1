"""Helpers for derivatives of functions that are not holomorphic on complex inputs (abs, real,
imag, angle), under JAX's convention: the reverse rule of a real-linear map is its transpose
over R^2, so grad of a real f(z) is df/dx - i df/dy. Also diag's adjoint."""
import numpy as np


def _is_complex(x):
    return np.iscomplexobj(x)


def match_complex(t, x):
    """t as a cotangent for x: its real part when x is real."""
    return t if _is_complex(x) else np.real(t)


def angle_jvp(t, x):
    """Tangent of np.angle(x): Im(t / x) for complex x, 0 for real x."""
    if not _is_complex(x):
        return np.zeros(np.broadcast_shapes(np.shape(t), np.shape(x)), dtype=np.result_type(t))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.imag(t / x)


def angle_vjp(ct, x):
    """Cotangent of x in np.angle(x): the transpose of angle_jvp."""
    if not _is_complex(x):
        return np.zeros(np.broadcast_shapes(np.shape(ct), np.shape(x)),
                        dtype=np.result_type(ct, x))
    with np.errstate(divide="ignore", invalid="ignore"):
        return -1j * np.real(ct) / x


def abs_factor(x):
    """d|x|: sign(x) for real x; conj(x) / |x| for complex x (0 at 0, as in JAX)."""
    if not _is_complex(x):
        return np.sign(x)
    a = np.abs(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(a == 0, 0, np.conj(x) / np.where(a == 0, 1, a))


def abs_factor_jvp(t, x):
    """Tangent of abs_factor along t: 0 for real x (piecewise constant); for complex x,
    F = conj(x) / |x| moves by conj(t) / |x| - conj(x) Re(conj(x) t) / |x|^3 (0 at x = 0)."""
    if not _is_complex(x):
        return np.zeros(np.broadcast_shapes(np.shape(t), np.shape(x)), dtype=np.result_type(t))
    a = np.abs(x)
    safe = np.where(a == 0, 1, a)
    out = np.conj(t) / safe - np.conj(x) * np.real(np.conj(x) * t) / safe ** 3
    return np.where(a == 0, 0, out)


def abs_factor_vjp(ct, x):
    """Cotangent of x for abs_factor (JAX's convention, the transpose of abs_factor_jvp under
    <a, b> = Re(a b)): conj(ct) / |x| - Re(ct conj(x)) conj(x) / |x|^3; 0 for real x."""
    if not _is_complex(x):
        return np.zeros(np.broadcast_shapes(np.shape(ct), np.shape(x)), dtype=np.result_type(ct))
    a = np.abs(x)
    safe = np.where(a == 0, 1, a)
    out = np.conj(ct) / safe - np.real(ct * np.conj(x)) * np.conj(x) / safe ** 3
    return np.where(a == 0, 0, out)


def diag_vjp(ct, x, k=0):
    """Cotangent of x in np.diag(x, k): the diagonal (x 2-D) or a matrix with ct on it (x 1-D)."""
    if np.ndim(x) == 1:
        return np.diagonal(ct, k)
    if np.ndim(ct) != 1:
        return np.diag(ct, k)
    out = np.zeros(np.shape(x), dtype=np.result_type(ct))   # x of any shape, square or not
    i = np.arange(np.shape(ct)[0])
    out[i + max(-k, 0), i + max(k, 0)] = ct
    return out
