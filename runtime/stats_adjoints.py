"""Helpers named in the rules of transpile/primitives/numpy/stats.py and primitives/numpy/filters.py:
order-statistic weights (median, quantile, percentile), np.average's weights, np.cov's
observation matrix, the offsets of np.convolve's modes, np.interp's segment index, the
transpose of np.polyval in its coefficients, the scatter that undoes np.take, and one output of np.meshgrid. Plain NumPy; each linear helper has its
transpose beside it (both are rows of the table, so derivative code differentiates again)."""
import numpy as np

from .broadcasting import _norm_axes, unbroadcast

QUANTILE_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


# ---- order statistics ------------------------------------------------------------------------


def _reduced_last(x, axes):
    """x with the reduced axes moved to the end and flattened into one: (kept..., n)."""
    kept = [i for i in range(x.ndim) if i not in axes]
    moved = np.transpose(x, kept + list(axes))
    n = int(np.prod([x.shape[a] for a in axes], dtype=int))
    return moved.reshape(moved.shape[:len(kept)] + (n,)), kept + list(axes)


def _positions(q, n, method):
    """Order statistics lo, hi (lo <= hi) and the weight of hi, as np.quantile's `method`."""
    pos = np.asarray(q, dtype=np.float64) * (n - 1)
    lo = np.floor(pos)
    frac = pos - lo
    if method == "lower":
        frac = np.zeros_like(pos)
    elif method == "higher":
        lo, frac = np.ceil(pos), np.zeros_like(pos)
    elif method == "nearest":
        lo, frac = np.around(pos), np.zeros_like(pos)
    elif method == "midpoint":
        frac = np.where(frac == 0, 0.0, 0.5)
    elif method != "linear":
        raise NotImplementedError(f"derivatives of np.quantile(method={method!r}): only "
                                  f"{', '.join(QUANTILE_METHODS)}")
    lo = np.clip(lo, 0, n - 1).astype(np.intp)
    return lo, np.minimum(lo + 1, n - 1), frac


def quantile_mask(x, q, axis=None, method="linear"):
    """Weights w, shaped q.shape + x.shape, with np.quantile(x, q, axis) == sum(w * x, axis):
    the two order statistics around q (n - 1) weighted as linear interpolation weighs them,
    each weight shared equally among the entries tied with its order statistic."""
    x = np.asarray(x)
    axes = _norm_axes(axis, x.ndim)
    xm, order = _reduced_last(x, axes)
    lo, hi, frac = _positions(q, xm.shape[-1], method)
    s = np.sort(xm, axis=-1)
    dtype = x.dtype if np.issubdtype(x.dtype, np.inexact) else np.dtype(np.float64)

    def share(k):      # (nq, kept..., n): 1 / ties where an entry equals order statistic k
        stat = np.moveaxis(np.take(s, np.ravel(k), axis=-1), -1, 0)[..., None]
        hit = xm == stat
        with np.errstate(invalid="ignore", divide="ignore"):
            return hit / np.sum(hit, axis=-1, keepdims=True)
    f = np.reshape(np.ravel(frac), (-1,) + (1,) * xm.ndim)
    w = (1 - f) * share(lo) + f * share(hi)
    w = np.reshape(w, np.shape(q) + xm.shape[:-1] + tuple(x.shape[a] for a in axes))
    nq = np.ndim(q)
    w = np.transpose(w, list(range(nq)) + [nq + int(i) for i in np.argsort(order)])
    return w.astype(dtype, copy=False)


def _reduced_shape_axes(w, q, axis, keepdims):
    nq = np.ndim(q)
    axes = _norm_axes(axis, np.ndim(w) - nq)
    return nq, tuple(nq + a for a in axes)


def quantile_jvp(t, w, q, axis=None, keepdims=False):
    """sum(w * t) over the reduced axes: the tangent of np.quantile(x, q, axis) along t
    (w = quantile_mask(x, q, axis), leading axes for the entries of q)."""
    nq, axes = _reduced_shape_axes(w, q, axis, keepdims)
    return np.sum(w * t, axis=axes, keepdims=keepdims)


def quantile_vjp(ct, w, q, axis=None, keepdims=False):
    """Transpose of quantile_jvp: ct spread back over the reduced axes, weighted by w and
    summed over the entries of q."""
    nq, axes = _reduced_shape_axes(w, q, axis, keepdims)
    ct = np.asarray(ct)
    if not keepdims:
        for a in axes:
            ct = np.expand_dims(ct, a)
    return np.sum(ct * w, axis=tuple(range(nq)))


# ---- np.average --------------------------------------------------------------------------------


def _weight_axes(weights, x, axis):
    shape = np.shape(x)
    if np.shape(weights) == shape:
        return None
    if axis is None:
        raise TypeError("np.average: axis must be given when weights and x differ in shape")
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    return tuple(a % len(shape) for a in axes)


def weights_along(weights, x, axis=None):
    """np.average's weights in a shape that broadcasts against x: as they are when shaped
    like x, else laid along `axis` (1-D weights, or weights shaped like x along the axes)."""
    axes = _weight_axes(weights, x, axis)
    if axes is None:
        return weights
    w = np.asarray(weights)
    if w.ndim > 1:
        w = np.transpose(w, np.argsort(axes))
    shape = np.shape(x)
    return np.reshape(w, tuple(n if i in axes else 1 for i, n in enumerate(shape)))


def weights_back(ct, weights, x, axis=None):
    """Transpose of weights_along (ct may have x's shape: it is summed back first)."""
    axes = _weight_axes(weights, x, axis)
    shape = np.shape(x)
    if axes is None:
        return unbroadcast(ct, weights)
    laid = tuple(n if i in axes else 1 for i, n in enumerate(shape))
    ct = unbroadcast(ct, np.broadcast_to(0.0, laid))
    ct = np.reshape(ct, tuple(shape[a] for a in sorted(axes)))
    if len(axes) > 1:
        ct = np.transpose(ct, np.argsort(np.argsort(axes)))
    return ct


# ---- np.cov -------------------------------------------------------------------------------------


def _cov_rows(a, rowvar):
    """np.cov's view of m (or y): 2-D, one variable per row."""
    a2 = np.atleast_2d(a)
    return a2.T if not rowvar and a2.shape[0] != 1 else a2


def cov_obs_part(t, m, y=None, rowvar=True, which=0):
    """The (variables, observations) matrix np.cov builds from m and y, with t in the rows of
    m (which=0) or of y (which=1) and zeros in the others."""
    rows = _cov_rows(t, rowvar)
    if y is None:
        return rows
    other = _cov_rows(np.broadcast_to(0.0, np.shape(y if which == 0 else m)), rowvar)
    out = np.zeros((rows.shape[0] + other.shape[0], rows.shape[1]), dtype=rows.dtype)
    if which == 0:
        out[:rows.shape[0]] = rows
    else:
        out[other.shape[0]:] = rows
    return out


def cov_obs_vjp(ct, m, y=None, rowvar=True, which=0):
    """Transpose of cov_obs_part: the rows of ct that came from m (which=0) or y (which=1),
    in that argument's shape."""
    arg = m if which == 0 else y
    n_m = _cov_rows(np.broadcast_to(0.0, np.shape(m)), rowvar).shape[0]
    block = ct[:n_m] if which == 0 else ct[n_m:]
    a2 = np.atleast_2d(np.broadcast_to(0.0, np.shape(arg)))
    if not rowvar and a2.shape[0] != 1:
        block = block.T
    return np.reshape(block, np.shape(arg))


def cov_weights(m, rowvar=True, fweights=None, aweights=None):
    """The weight of each observation of m in np.cov: fweights * aweights (ones)."""
    w = np.ones(_cov_rows(np.broadcast_to(0.0, np.shape(m)), rowvar).shape[1])
    if fweights is not None:
        w = w * np.asarray(fweights, dtype=np.float64)
    if aweights is not None:
        w = w * np.asarray(aweights, dtype=np.float64)
    return w


def cov_norm(m, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None):
    """np.cov's normalization F: sum(w) - ddof, corrected for aweights as NumPy does."""
    if ddof is None:
        ddof = 0 if bias else 1
    w = cov_weights(m, rowvar, fweights, aweights)
    w_sum = np.sum(w)
    if ddof == 0 or aweights is None:
        return w_sum - ddof
    return w_sum - ddof * np.sum(w * np.asarray(aweights, dtype=np.float64)) / w_sum


# ---- np.cross, np.convolve / np.correlate, np.interp, np.polyval ---------------------------------


def three_vectors(x, axis=-1):
    """x, checked to hold 3-entry vectors along axis (np.cross's derivatives do not take the
    2-entry vectors NumPy 2 deprecates)."""
    if np.shape(x)[axis] != 3:
        raise NotImplementedError("derivatives of np.cross need 3-entry vectors (NumPy 2 "
                                  "deprecates 2-entry ones): append a zero z component")
    return x


def conv_pad_width(n, m, mode="full", kind="convolve"):
    """((lo, hi),): the zeros around np.convolve(x, y, mode) (or np.correlate) of n and m
    entries that make it the 'full' result; a cotangent padded so is the full one."""
    n, m = int(n), int(m)
    full, short = n + m - 1, min(n, m)
    length = {"full": full, "same": max(n, m), "valid": max(n, m) - short + 1}[mode]
    lo = {"full": 0, "same": (short - 1) - short // 2, "valid": short - 1}[mode]
    if kind == "correlate" and m > n:      # NumPy swaps the arguments and reverses the result
        lo = full - lo - length
    return ((lo, full - length - lo),)


def interp_index(x, xp):
    """For each x, the segment [xp[i], xp[i + 1]] np.interp reads (clipped to the ends)."""
    i = np.searchsorted(xp, x, side="right") - 1
    return np.clip(i, 0, max(np.size(xp) - 2, 0))


def polyval_vjp(ct, x, n):
    """Transpose of p -> np.polyval(p, x) for n coefficients: sum_j ct_j x_j ** (n - 1 - k)."""
    powers = np.vander(np.ravel(x), int(n))
    ct = np.broadcast_to(ct, np.shape(x))
    return np.ravel(ct) @ powers if powers.size else np.zeros(int(n), np.result_type(ct, x))


# ---- np.take, np.meshgrid -----------------------------------------------------------------------


def _wrapped(indices, n, mode):
    idx = np.asarray(indices)
    if mode == "wrap":
        return idx % n
    if mode == "clip":
        return np.clip(idx, 0, n - 1)
    return idx


def take_vjp(ct, x, indices, axis=None, mode="raise"):
    """Transpose of np.take(x, indices, axis, mode=mode): ct added back where the taken
    entries came from (repeated indices add up)."""
    out = np.zeros(np.shape(x), dtype=np.result_type(ct))
    idx = _wrapped(indices, np.size(x) if axis is None else np.shape(x)[axis], mode)
    if axis is None:
        flat = out.reshape(-1)
        np.add.at(flat, idx, ct)
        return out
    axis = axis % out.ndim
    ct = np.moveaxis(np.asarray(ct), list(range(axis, axis + idx.ndim)), list(range(idx.ndim)))
    np.add.at(np.moveaxis(out, axis, 0), idx, ct)
    return out


def meshgrid_part(*xi, k=0, sparse=False, indexing="xy"):
    """Output k of np.meshgrid(*xi, sparse=sparse, indexing=indexing)."""
    return np.meshgrid(*xi, sparse=sparse, indexing=indexing)[k]


def signal_pad_width(in1, in2, mode="full"):
    """Per axis (lo, hi): the zeros around scipy.signal.convolve/correlate(in1, in2, mode) that
    make it the 'full' result ('same': centred on in1's shape; 'valid': the part where one
    array covers the other)."""
    out = []
    for n1, n2 in zip(np.shape(in1), np.shape(in2)):
        full = n1 + n2 - 1
        length = {"full": full, "same": n1, "valid": abs(n1 - n2) + 1}[mode]
        lo = {"full": 0, "same": (full - n1) // 2, "valid": min(n1, n2) - 1}[mode]
        out.append((lo, full - length - lo))
    return tuple(out)


def signal_convolve(in1, in2, mode="full", method="auto"):
    import scipy.signal
    return scipy.signal.convolve(in1, in2, mode, method)


def signal_correlate(in1, in2, mode="full", method="auto"):
    import scipy.signal
    return scipy.signal.correlate(in1, in2, mode, method)


def signal_full_ct(ct, in1, in2, mode="full"):
    """The cotangent of scipy.signal.convolve/correlate(in1, in2, mode) padded with zeros to the
    'full' result's shape."""
    return np.pad(ct, signal_pad_width(in1, in2, mode))


def signal_crop(full, in1, in2, mode="full"):
    """Transpose of signal_full_ct: the part of a 'full'-shaped array that `mode` keeps."""
    index = tuple(slice(lo, n - hi) for (lo, hi), n in
                  zip(signal_pad_width(in1, in2, mode), np.shape(full)))
    return np.asarray(full)[index]
