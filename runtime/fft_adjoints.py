"""numpy.fft in one form, and its transpose (the reverse-mode rule of every np.fft function).

Every transform is one of four kinds over some axes, with transform lengths s:
    fft / ifft    complex -> complex (a real input is treated as complex)
    rfft          real -> the non-negative frequencies (last axis n // 2 + 1)
    irfft         those frequencies -> real (last axis n)
`fft_forward` computes it; `fft_adjoint` applies its transpose to a cotangent (JAX's
convention: the transpose, not the conjugate transpose; a real input gets the real part).
The two are each other's transposes, so derivatives of derivatives stay in these two rows.
"""
import numpy as np

_FORWARD = {"fft": np.fft.fftn, "ifft": np.fft.ifftn, "rfft": np.fft.rfftn,
            "irfft": np.fft.irfftn}


def _tuple(v):
    if v is None:
        return None
    return (int(v),) if np.ndim(v) == 0 else tuple(int(i) for i in v)


def fft_axes(ndim, s, axes):
    """The transformed axes as negative numbers (they stay right under a batch axis)."""
    s, axes = _tuple(s), _tuple(axes)
    if axes is None:
        axes = tuple(range(-len(s), 0)) if s is not None else tuple(range(-ndim, 0))
    return tuple(a - ndim if a >= 0 else a for a in axes)


def fft_forward(x, s=None, axes=None, norm=None, kind="fft"):
    """np.fft.{fftn, ifftn, rfftn, irfftn}(x, s, axes, norm)."""
    x = np.asarray(x)
    axes = fft_axes(x.ndim, s, axes)
    out = _FORWARD[kind](x, s=_tuple(s), axes=axes, norm=norm)
    return out.astype(_out_dtype(x, kind), copy=False)


def _out_dtype(x, kind):
    dt = np.result_type(x)
    single = dt in (np.float32, np.complex64)
    if kind == "irfft":
        return np.float32 if single else np.float64
    return np.complex64 if single else np.complex128


def _fit(y, shape, axes):
    """Truncate or zero-pad y along axes to shape's lengths (the transpose of doing the same
    to the input)."""
    for a in axes:
        n = shape[a]
        if y.shape[a] > n:
            y = np.take(y, np.arange(n), axis=a)
        elif y.shape[a] < n:
            pad = [(0, 0)] * y.ndim
            pad[a] = (0, n - y.shape[a])
            y = np.pad(y, pad)
    return y


def fft_adjoint(ct, x, s=None, axes=None, norm=None, kind="fft"):
    """Cotangent of x in fft_forward(x, s, axes, norm, kind) for the cotangent ct of its
    result; x is read for its shape and dtype only."""
    ct = np.asarray(ct)
    xshape, xdtype = np.shape(x), np.result_type(x)
    axes = fft_axes(len(xshape), s, axes)
    s = _tuple(s)
    if kind in ("fft", "ifft"):
        y = (np.fft.fftn if kind == "fft" else np.fft.ifftn)(ct, axes=axes, norm=norm)
    elif kind == "rfft":
        full = s if s is not None else tuple(xshape[a] for a in axes)
        y = np.fft.fftn(ct, s=full, axes=axes, norm=norm)
    elif kind == "irfft":
        n = s[-1] if s is not None else 2 * (xshape[axes[-1]] - 1)
        y = np.fft.ifftn(ct, axes=axes, norm=norm)
        y = np.take(y, np.arange(n // 2 + 1), axis=axes[-1])
        w = np.full(n // 2 + 1, 2.0)
        w[0] = 1.0
        if n % 2 == 0:
            w[-1] = 1.0
        y = y * np.reshape(w, (-1,) + (1,) * (-axes[-1] - 1))
    else:
        raise ValueError(f"unknown fft kind {kind!r}")
    y = _fit(y, xshape, axes)
    if not np.issubdtype(xdtype, np.complexfloating):
        y = y.real
        dt = xdtype if np.issubdtype(xdtype, np.floating) else np.float64
    else:
        dt = xdtype
    return y.astype(dt, copy=False)
