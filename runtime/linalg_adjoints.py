"""Helpers named in numpy.linalg rules (transpile/primitives/numpy/linalg.py): the parts of
multi-output factorizations and of np.linalg.lstsq, small linear maps (sym, phi, copyltu) and
np.linalg.norm's rules for ords other than the 2-norm / Frobenius norm."""
import numpy as np


def sym(x):
    """(x + x^T) / 2 on the last two axes."""
    return 0.5 * (x + np.swapaxes(x, -1, -2))


def phi(x):
    """Lower triangle of x with the diagonal halved (self-adjoint)."""
    n = np.shape(x)[-1]
    return np.tril(x) - 0.5 * x * np.eye(n, dtype=bool)


def copyltu(x):
    """The lower triangle of x copied onto the upper one."""
    return np.tril(x) + np.swapaxes(np.tril(x, -1), -1, -2)


def copyltu_t(x):
    """Transpose of copyltu."""
    return np.tril(x) + np.tril(np.swapaxes(x, -1, -2), -1)


def eye_like(x):
    return np.eye(np.shape(x)[-1], dtype=np.result_type(x))


def gap_inverse(w):
    """F[..., i, j] = 1 / (w_j - w_i) for i != j, 0 on the diagonal."""
    d = np.expand_dims(w, -2) - np.expand_dims(w, -1)
    n = np.shape(w)[-1]
    eye = np.eye(n, dtype=bool)
    with np.errstate(divide="ignore"):
        return np.where(eye, 0.0, 1.0 / np.where(eye, 1.0, d))


def gap_inverse_jvp(t, w):
    f = gap_inverse(w)
    dt = np.expand_dims(t, -2) - np.expand_dims(t, -1)
    return -(f * f) * dt


def gap_inverse_vjp(ct, w):
    f2 = gap_inverse(w) ** 2
    c = -f2 * ct
    return np.sum(c, axis=-2) - np.sum(c, axis=-1)


def _check_uplo(UPLO):
    if UPLO not in ("L", "U", "l", "u"):
        raise ValueError(f"UPLO argument must be 'L' or 'U', got {UPLO!r}")
    return UPLO.upper()


def tri_read(x, UPLO="L"):
    """The symmetric matrix np.linalg.eigh(x, UPLO) reads: the lower (UPLO='L') or upper
    ('U') triangle of x mirrored onto the other one (real x)."""
    if _check_uplo(UPLO) == "U":
        x = np.swapaxes(x, -1, -2)
    return np.tril(x) + np.swapaxes(np.tril(x, -1), -1, -2)


def tri_read_t(ct, UPLO="L"):
    """Transpose of tri_read: the read triangle gets ct_ij + ct_ji (the diagonal ct_ii), the
    other strict triangle 0 (x's entries there are never read)."""
    low = np.tril(ct) + np.tril(np.swapaxes(ct, -1, -2), -1)
    return np.swapaxes(low, -1, -2) if _check_uplo(UPLO) == "U" else low


def check_real_eigh(x):
    """The eigh rules are written for real symmetric input."""
    if np.iscomplexobj(x):
        raise NotImplementedError("derivatives of np.linalg.eigh / np.linalg.eigvalsh of a "
                                  "complex (Hermitian) matrix are not supported; real "
                                  "symmetric input only")
    return x


def check_real_linalg(x, name):
    """The rules of np.linalg.<name> are written for real matrices."""
    if np.iscomplexobj(x):
        raise NotImplementedError(f"derivatives of np.linalg.{name} of a complex matrix are "
                                  "not supported; real input only")
    return x


def eigh_values(x, UPLO="L"):
    return np.linalg.eigh(x, UPLO=UPLO)[0]


def eigh_vectors(x, UPLO="L"):
    return np.linalg.eigh(x, UPLO=UPLO)[1]


def slogdet_sign(x):
    return np.linalg.slogdet(x)[0]


def slogdet_logabs(x):
    return np.linalg.slogdet(x)[1]


def qr_q(x):
    return np.linalg.qr(x)[0]


def qr_r(x):
    return np.linalg.qr(x)[1]


def _qr_jvp(t, x):
    m, n = np.shape(x)[-2:]
    if m < n:
        # a wide x = [X | Y]: Q R_X = X is the QR of the square X, and R = [R_X | Q^T Y]
        dq, dr_x = _qr_jvp(t[..., :m], x[..., :m])
        q = np.linalg.qr(x[..., :m])[0]
        dr_y = np.swapaxes(dq, -1, -2) @ x[..., m:] + np.swapaxes(q, -1, -2) @ t[..., m:]
        return dq, np.concatenate([dr_x, dr_y], axis=-1)
    q, r = np.linalg.qr(x)
    dx_rinv = np.swapaxes(np.linalg.solve(np.swapaxes(r, -1, -2), np.swapaxes(t, -1, -2)), -1, -2)
    qt = np.swapaxes(q, -1, -2) @ dx_rinv
    low = np.tril(qt, -1)
    do = low - np.swapaxes(low, -1, -2)
    dq = q @ (do - qt) + dx_rinv
    dr = (qt - do) @ r
    return dq, dr


def qr_q_jvp(t, x):
    return _qr_jvp(t, x)[0]


def qr_r_jvp(t, x):
    return _qr_jvp(t, x)[1]


def svd_values(x, hermitian=False):
    return np.linalg.svd(x, compute_uv=False, hermitian=hermitian)


def svd_u(x, full_matrices=True, hermitian=False):
    return np.linalg.svd(x, full_matrices=full_matrices, hermitian=hermitian)[0]


def svd_vh(x, full_matrices=True, hermitian=False):
    return np.linalg.svd(x, full_matrices=full_matrices, hermitian=hermitian)[2]


def check_svd_vectors(t, x, full_matrices=True):
    """t, once x's singular vectors have derivative rules: reduced vectors (or a square x)."""
    m, n = np.shape(x)[-2:]
    if full_matrices and m != n:
        raise NotImplementedError(
            "derivatives of the singular vectors of np.linalg.svd(x, full_matrices=True) of a "
            f"non-square ({m}x{n}) matrix are not supported (the extra columns are not "
            "unique); use full_matrices=False")
    return t


def eig_values(x):
    return np.linalg.eig(x)[0]


def eig_vectors(x):
    return np.linalg.eig(x)[1]


def refuse_norm_second(g, ord):
    raise NotImplementedError(f"second derivatives of np.linalg.norm with ord={ord!r} are not "
                              "supported")


def refuse_norm_third(g, ord):
    raise NotImplementedError(f"third derivatives of np.linalg.norm with ord={ord!r} are not "
                              "supported")


def _axes(x, axis):
    nd = np.ndim(x)
    if axis is None:
        return tuple(range(nd))
    if isinstance(axis, (tuple, list)):
        return tuple(a % nd for a in axis)
    return (axis % nd,)


def _factor(x, ans, ord, axis):
    """d norm / d x, broadcast to x's shape; ans broadcast against the reduced axes. For complex
    x, F with d norm = Re(sum(conj(F) dx)) (sign(x) = x / |x|; the matrix 2-norm: u v^H)."""
    x = np.asarray(x)
    axes = _axes(x, axis)
    a = np.expand_dims(ans, axes) if np.ndim(ans) < x.ndim else ans
    ax = np.abs(x)
    sgn = np.sign(x)
    if len(axes) == 1:
        if ord in (None, 2):
            with np.errstate(invalid="ignore", divide="ignore"):
                return x / a
        if ord == np.inf or ord == -np.inf:
            mask = (ax == a).astype(float)
            return sgn * mask / np.sum(mask, axis=axes, keepdims=True)
        if ord == 0:
            return np.zeros_like(x, dtype=float)
        if ord == 1:
            return sgn
        with np.errstate(invalid="ignore", divide="ignore"):
            return sgn * (ax / a) ** (ord - 1)
    # matrix norms over two axes
    r, c = axes
    if ord in (None, "fro"):
        with np.errstate(invalid="ignore", divide="ignore"):
            return x / a
    xm = np.moveaxis(x, (r, c), (-2, -1))
    if ord in ("nuc", 2, -2):
        u, s, vh = np.linalg.svd(xm, full_matrices=False)
        if ord == "nuc":
            f = u @ vh
        else:
            i = 0 if ord == 2 else -1
            f = u[..., :, i:i + 1 if i == 0 else None] @ vh[..., i:i + 1 if i == 0 else None, :]
        return np.moveaxis(f, (-2, -1), (r, c))
    if ord in (1, -1, np.inf, -np.inf):
        along = -2 if ord in (1, -1) else -1           # 1: column sums, inf: row sums
        sums = np.sum(np.abs(xm), axis=along, keepdims=True)
        target = np.max(sums, axis=-1 if along == -2 else -2, keepdims=True) if ord > 0 else \
            np.min(sums, axis=-1 if along == -2 else -2, keepdims=True)
        mask = (sums == target).astype(float)
        mask = mask / np.sum(mask, axis=(-2, -1), keepdims=True)
        return np.moveaxis(np.sign(xm) * mask, (-2, -1), (r, c))
    raise NotImplementedError(f"grad of np.linalg.norm with ord={ord!r}")


def norm_vjp(ct, x, ans, ord, axis, keepdims):
    """Cotangent of x in np.linalg.norm(x, ord, axis, keepdims)."""
    axes = _axes(x, axis)
    c = np.asarray(ct)
    if not keepdims and c.ndim < np.ndim(x):
        c = np.expand_dims(c, axes)
    return c * np.conj(_factor(x, ans, ord, axis))


def norm_jvp(t, x, ans, ord, axis, keepdims):
    """Tangent of np.linalg.norm(x, ord, axis, keepdims) along t."""
    axes = _axes(x, axis)
    prod = np.asarray(t) * np.conj(_factor(x, ans, ord, axis))
    return np.sum(np.real(prod) if np.iscomplexobj(x) else prod, axis=axes, keepdims=keepdims)


def _dfactor(x, ans, ord, axis):
    """(dF/dx elementwise, dF/d ans) of norm_vjp's factor F for real x and the norms whose F
    is elementwise (vector norms; matrix 'fro', 1, -1, inf, -inf); None for the others."""
    if np.iscomplexobj(x):
        raise NotImplementedError("second derivatives of np.linalg.norm of complex input are "
                                  "not supported")
    x = np.asarray(x)
    axes = _axes(x, axis)
    a = np.expand_dims(ans, axes) if np.ndim(ans) < x.ndim else ans
    zero = np.zeros(x.shape)
    if len(axes) == 1:
        if ord in (None, 2):
            ord = 2
        if ord in (0, 1, np.inf, -np.inf):
            return zero, zero
        ax = np.abs(x)
        with np.errstate(invalid="ignore", divide="ignore"):
            return ((ord - 1) * ax ** (ord - 2) * a ** (1 - ord),
                    (1 - ord) * np.sign(x) * ax ** (ord - 1) * a ** (-ord))
    if ord in (None, "fro"):
        with np.errstate(invalid="ignore", divide="ignore"):
            return 1 / a + zero, -x / (a * a)
    if ord in (1, -1, np.inf, -np.inf):
        return zero, zero
    raise NotImplementedError(f"second derivatives of np.linalg.norm with ord={ord!r} are not "
                              "supported")


def norm_second(u, v, x, nrm, ord, axis, keepdims, which, reduce):
    """u * v * dF/dx (which 0) or u * v * dF/d nrm (which 1), u and v shaped like x or like the
    norm (expanded over its axes), summed over the norm's axes when reduce: every derivative of
    norm_vjp(ct, x, nrm) = ct F and norm_jvp(t, x, nrm) = sum(t F) in x and in nrm."""
    axes = _axes(x, axis)
    nd = np.ndim(x)

    def expand(a):
        a = np.asarray(a)
        return np.expand_dims(a, axes) if not keepdims and 0 < nd != a.ndim else a
    out = expand(u) * expand(v) * _dfactor(x, nrm, ord, axis)[which]
    if reduce:
        out = np.sum(out, axis=axes, keepdims=keepdims)
        return np.reshape(out, np.shape(nrm))
    return out


# ---- np.linalg.lstsq ----------------------------------------------------------------------------


def lstsq_x(a, b, rcond=None):
    return np.linalg.lstsq(a, b, rcond)[0]


def lstsq_residuals(a, b, rcond=None):
    return np.linalg.lstsq(a, b, rcond)[1]


def lstsq_rank(a, b, rcond=None):
    return np.linalg.lstsq(a, b, rcond)[2]


def residual_weights(ct, like):
    """A cotangent of lstsq's residuals shaped like one row of b (a scalar for 1-D b, one
    entry per column): zeros where NumPy returns no residuals (rank < n or m <= n)."""
    if np.size(ct) == 0:
        return np.zeros(np.shape(like), dtype=np.result_type(ct, np.float64))
    return np.reshape(ct, np.shape(like))


def residual_weights_t(c, res):
    """Transpose of residual_weights: per-column values in the residuals' shape."""
    if np.size(res) == 0:
        return np.zeros(np.shape(res), dtype=np.result_type(c))
    return np.reshape(c, np.shape(res))
