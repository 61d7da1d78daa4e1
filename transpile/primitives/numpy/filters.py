"""Rows for NumPy's linear filters: np.convolve, np.correlate (and scipy.signal's N-D
convolve/correlate) and np.polyval.

Each is linear in every array argument (or bilinear), so forward mode applies the row to the
tangent and reverse mode transposes it: the transpose of a convolution is a correlation of the
cotangent padded to the 'full' length (rt.conv_pad_width). Complex arrays follow JAX's
convention (transpose, no conjugation), so np.correlate's conjugated second argument gets the
conjugate of its transpose.
"""
import numpy as np

from transpile.core.ir import Const
from transpile.primitives import numba_forms as NF
from transpile.primitives.batching.axis_rules import per_example, pointwise
from transpile.primitives.registry import defalias, defprim
from transpile_runtime import stats_adjoints as SA

# ---- convolution and correlation (1-D) ----------------------------------------------------------
# convolve: out[k] = sum_i x[i] y[k - i]; with G the cotangent padded to the full length,
# dx[i] = sum_k G[k] y[k - i] = correlate(G, conj(y), 'valid')[i], and dy likewise.
# correlate: the full result is convolve(x, conj(y)[::-1]).
_FULL = "np.pad(g, rt.conv_pad_width(np.size(x), np.size(y), mode, {kind!r}))"
_G = _FULL.format(kind="convolve")
convolve = defprim("convolve", np.convolve, "np.convolve", "x, y, mode='full'",
                   linear=("x", "y"), batch=per_example,
                   vjp={"x": f"np.correlate({_G}, np.conj(y), 'valid')",
                        "y": f"np.correlate({_G}, np.conj(x), 'valid')"},
                   numba=NF.sliding("convolve"))
_G = _FULL.format(kind="correlate")
correlate = defprim("correlate", np.correlate, "np.correlate", "x, y, mode='valid'",
                    linear=("x", "y"), batch=per_example,
                    vjp={"x": f"np.convolve({_G}, np.conj(y), 'valid')",
                         "y": f"np.conj(np.flip(np.correlate({_G}, np.conj(x), 'valid')))"},
                    numba=NF.sliding("correlate"))
defprim("conv_pad_width", SA.conv_pad_width, "rt.conv_pad_width", "n, m, mode='full', "
        "kind='convolve'", nondiff=True, batch=per_example)

# ---- scipy.signal.convolve / correlate (N-D, real or complex): the same rules along every
# axis, the cotangent padded to the 'full' result's shape (rt.signal_pad_width) ----------------
_SG = "rt.signal_full_ct(g, in1, in2, mode)"
signal_convolve = defprim(
    "signal_convolve", SA.signal_convolve, "rt.signal_convolve",
    "in1, in2, mode='full', method='auto'", linear=("in1", "in2"), batch=per_example,
    vjp={"in1": f"rt.signal_correlate({_SG}, np.conj(in2), 'valid')",
         "in2": f"rt.signal_correlate({_SG}, np.conj(in1), 'valid')"})
signal_correlate = defprim(
    "signal_correlate", SA.signal_correlate, "rt.signal_correlate",
    "in1, in2, mode='full', method='auto'", linear=("in1", "in2"), batch=per_example,
    vjp={"in1": f"rt.signal_convolve({_SG}, np.conj(in2), 'valid')",
         "in2": f"np.conj(np.flip(rt.signal_correlate({_SG}, np.conj(in1), 'valid')))"})
defalias(signal_convolve, "scipy.signal", "convolve")
defalias(signal_correlate, "scipy.signal", "correlate")
defprim("signal_full_ct", SA.signal_full_ct, "rt.signal_full_ct", "ct, in1, in2, mode='full'",
        linear=("ct",), shape_args=("in1", "in2"), batch=per_example,
        vjp={"ct": "rt.signal_crop(g, in1, in2, mode)"})
defprim("signal_crop", SA.signal_crop, "rt.signal_crop", "full, in1, in2, mode='full'",
        linear=("full",), shape_args=("in1", "in2"), batch=per_example,
        vjp={"full": "rt.signal_full_ct(g, in1, in2, mode)"})

# ---- polyval: p(x) = sum_k p[k] x^(n-1-k), linear in p; d/dx is the derivative polynomial -------
_DP = "np.polyval(p[:-1] * np.arange(np.size(p) - 1, 0, -1), x)"


def _horner_form(lw, eqn):
    """np.polyval of a coefficient vector: Horner's rule from the highest power, on x's
    shape (a number or an array)."""
    p, x, out = eqn.args["p"], eqn.args["x"], eqn.out
    ps, os_ = lw.av(p), lw.avals.get(eqn.out)
    if ps is None or ps.ndim != 1 or os_ is None or ps.shape[0] == 0:
        return None
    P, X, k = lw.fmt(p), lw.fmt(x), f"{out}_k"
    return [f"{out} = {X} * 0 + {P}[0]",
            f"for {k} in range(1, {P}.shape[0]):",
            f"    {out} = {out} * {X} + {P}[{k}]"]


def _horner_vjp_form(lw, eqn):
    """rt.polyval_vjp(ct, x, n)[k] = sum(ct * x ** (n - 1 - k)): the powers of x from the
    highest down, each summed against ct."""
    ct, x, n, out = eqn.args["ct"], eqn.args["x"], eqn.args["n"], eqn.out
    os_ = lw.avals.get(out)
    if os_ is None or os_.ndim != 1 or not isinstance(n, Const):
        return None
    C, X, m = lw.fmt(ct), lw.fmt(x), int(n.value)
    return [f"{out} = np.empty({m}, {NF._dt(os_.dtype)})",
            f"{out}_pw = {X} * 0 + 1.0",
            f"for {out}_k in range({m} - 1, -1, -1):",
            f"    {out}[{out}_k] = np.sum({C} * {out}_pw)",
            f"    {out}_pw = {out}_pw * {X}"]
polyval = defprim("polyval", np.polyval, "np.polyval", "p, x", linear=("p",),
                  batch=pointwise("x"),
                  vjp={"p": "rt.polyval_vjp(g, x, np.size(p))", "x": f"g * {_DP}"},
                  jvp={"x": f"x_dot * {_DP}"}, numba=_horner_form)
# polyval_vjp(ct, x, n)[k] = sum_j ct_j x_j^(n-1-k): its transpose in ct is np.polyval
polyval_vjp = defprim(
    "polyval_vjp", SA.polyval_vjp, "rt.polyval_vjp", "ct, x, n", linear=("ct",),
    batch=per_example,
    vjp={"ct": "np.polyval(g, x)", "x": "ct * np.polyval(g[:-1] * np.arange(n - 1, 0, -1), x)"},
    jvp={"x": "np.arange(n - 1, -1, -1) * np.append(rt.polyval_vjp(ct * x_dot, x, n - 1), 0.0)"},
    numba=_horner_vjp_form)
