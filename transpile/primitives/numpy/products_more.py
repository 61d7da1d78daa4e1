"""Rows for NumPy's products and filters: np.cross, np.convolve, np.correlate, np.polyval,
np.linalg.multi_dot and np.linalg.lstsq.

Each is linear in every array argument (or bilinear), so forward mode applies the row to the
tangent and reverse mode transposes it: the transpose of a convolution is a correlation of the
cotangent padded to the 'full' length (rt.conv_pad_width), the transpose of a chain of
matrix products is the chain around the cotangent. Complex arrays follow JAX's convention
(transpose, no conjugation), so np.correlate's conjugated second argument gets the
conjugate of its transpose.

np.linalg.lstsq returns (x, residuals, rank, s), one row per part: x = pinv(a) b (its rules
are np.linalg.pinv's, from primitives/numpy/linalg.py); the residuals |b - a x|^2 per column have
derivatives 2 r (in b) and -2 r x^T (in a) at the optimum (r = b - a x); rank is an integer
(no derivative); s is np.linalg.svd's row of singular values.
"""
import numpy as np

from transpile.core.ir import Const
from transpile.primitives.batching.axis_rules import axis_rule, per_example, pointwise
from transpile.primitives.batching.rules import NoRule, Rule, _const, elementwise_batch
from transpile.primitives.numpy.linalg import pinv_jvp, pinv_vjp
from transpile.primitives.numpy.stats import is_none
from transpile.primitives.registry import defalias, defprim
from transpile_runtime import linalg_adjoints as LA, stats_adjoints as SA

# ---- cross: <g, x × y> = <x, y × g> = <y, g × x> ------------------------------------------------


def _cross_batch(s, eqn):
    """Vectors along negative axes: np.cross broadcasts the other axes like an elementwise op."""
    for p in ("axisa", "axisb", "axisc", "axis"):
        ax = _const(eqn.args, p, eqn.prim.param(p).default)
        if ax is not None and ax >= 0:
            raise NoRule(f"{p}={ax}")
    elementwise_batch(s, eqn)


def _cross_vjp(first, second, arg):
    """The cotangent of `arg`: first × second (g stands for the result's vectors),
    un-broadcast with the vectors last, then moved back to arg's vector axis. The vectors of
    x and y are checked to have 3 entries (NumPy 2 deprecates 2-entry vectors in np.cross)."""
    def rule(eqn, k):
        axes = {a: "axis" if not is_none(eqn, "axis") else ax for a, ax in _AXIS_OF.items()}
        vec = {a: a if a == "g" else f"rt.three_vectors({a}, {axes[a]})" for a in _AXIS_OF}
        cross = f"np.cross({vec[first]}, {vec[second]}, {axes[first]}, {axes[second]})"
        if all(eqn.args.get(a, Const(-1)).value in (-1, None) for a in _AXIS_OF.values()) \
                and is_none(eqn, "axis"):
            return f"rt.unbroadcast({cross}, {vec[arg]})"    # vectors last: as NumPy broadcasts
        return (f"np.moveaxis(rt.unbroadcast({cross}, np.moveaxis({vec[arg]}, {axes[arg]}, -1)), "
                f"-1, {axes[arg]})")
    return rule


_AXIS_OF = {"x": "axisa", "y": "axisb", "g": "axisc"}
cross = defprim("cross", np.cross, "np.cross", "x, y, axisa=-1, axisb=-1, axisc=-1, axis=None",
                linear=("x", "y"), batch=Rule("linalg", _cross_batch, lambda s, eqn: None),
                vjp={"x": _cross_vjp("y", "g", "x"), "y": _cross_vjp("g", "x", "y")})
three_vectors = defprim("three_vectors", SA.three_vectors, "rt.three_vectors", "x, axis=-1",
                        linear=("x",), batch=axis_rule(["axis"]),
                        vjp={"x": "rt.three_vectors(g, axis)"})

# ---- convolution and correlation (1-D) ----------------------------------------------------------
# convolve: out[k] = sum_i x[i] y[k - i]; with G the cotangent padded to the full length,
# dx[i] = sum_k G[k] y[k - i] = correlate(G, conj(y), 'valid')[i], and dy likewise.
# correlate: the full result is convolve(x, conj(y)[::-1]).
_FULL = "np.pad(g, rt.conv_pad_width(np.size(x), np.size(y), mode, {kind!r}))"
_G = _FULL.format(kind="convolve")
convolve = defprim("convolve", np.convolve, "np.convolve", "x, y, mode='full'",
                   linear=("x", "y"), batch=per_example,
                   vjp={"x": f"np.correlate({_G}, np.conj(y), 'valid')",
                        "y": f"np.correlate({_G}, np.conj(x), 'valid')"})
_G = _FULL.format(kind="correlate")
correlate = defprim("correlate", np.correlate, "np.correlate", "x, y, mode='valid'",
                    linear=("x", "y"), batch=per_example,
                    vjp={"x": f"np.convolve({_G}, np.conj(y), 'valid')",
                         "y": f"np.conj(np.flip(np.correlate({_G}, np.conj(x), 'valid')))"})
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
polyval = defprim("polyval", np.polyval, "np.polyval", "p, x", linear=("p",),
                  batch=pointwise("x"),
                  vjp={"p": "rt.polyval_vjp(g, x, np.size(p))", "x": f"g * {_DP}"},
                  jvp={"x": f"x_dot * {_DP}"})
# polyval_vjp(ct, x, n)[k] = sum_j ct_j x_j^(n-1-k): its transpose in ct is np.polyval
polyval_vjp = defprim(
    "polyval_vjp", SA.polyval_vjp, "rt.polyval_vjp", "ct, x, n", linear=("ct",),
    batch=per_example,
    vjp={"ct": "np.polyval(g, x)", "x": "ct * np.polyval(g[:-1] * np.arange(n - 1, 0, -1), x)"},
    jvp={"x": "np.arange(n - 1, -1, -1) * np.append(rt.polyval_vjp(ct * x_dot, x, n - 1), 0.0)"})

# ---- multi_dot: A_0 A_1 ... A_{n-1} (a 1-D first array is a row, a 1-D last one a column) -------


def _chain(eqn):
    n = len(eqn.args["arrays"].items)
    mats = [f"arrays_{i}" for i in range(n)]
    mats[0] = f"np.reshape(arrays_0, (-1, np.shape(arrays_0)[-1]))"
    mats[-1] = f"np.reshape(arrays_{n - 1}, (np.shape(arrays_{n - 1})[0], -1))"
    return mats


def _multi_dot_vjp(eqn, k):
    """dA_k = (A_0 ... A_{k-1})^T G (A_{k+1} ... A_{n-1})^T, G the 2-D cotangent."""
    mats = _chain(eqn)
    out = f"np.reshape(g, (np.shape({mats[0]})[0], np.shape({mats[-1]})[1]))"
    if k > 0:
        out = f"rt.mT({' @ '.join(mats[:k])}) @ {out}"
    if k < len(mats) - 1:
        out = f"{out} @ rt.mT({' @ '.join(mats[k + 1:])})"
    return f"np.reshape({out}, np.shape(arrays_{k}))"


def _multi_dot_jvp(eqn, k):
    items = [f"arrays_{i}_dot" if i == k else f"arrays_{i}"
             for i in range(len(eqn.args["arrays"].items))]
    return f"np.linalg.multi_dot([{', '.join(items)}])"


multi_dot = defprim("multi_dot", np.linalg.multi_dot, "np.linalg.multi_dot", "arrays, *, out=None",
                    batch=per_example, vjp={"arrays": _multi_dot_vjp},
                    jvp={"arrays": _multi_dot_jvp})

# ---- lstsq -----------------------------------------------------------------------------------
lstsq = defprim("lstsq", np.linalg.lstsq, "np.linalg.lstsq", "x, y, rcond=None",
                batch=per_example)
lstsq.multi = lambda bound, const: [("lstsq_x", {}), ("lstsq_residuals", {}),
                                    ("lstsq_rank", {}), ("svd_values", {})]


def _col(v):
    """A 1-D vector as a column; a matrix as it is."""
    return f"np.reshape({v}, (np.shape({v})[0], -1))"


# x = P y with P = pinv(a) (computed once: the lambda binds it); P's cotangent is g y^T
_GY = f"({_col('g')} @ rt.mT({_col('y')}))"
lstsq_x = defprim(
    "lstsq_x", LA.lstsq_x, "rt.lstsq_x", "x, y, rcond=None", batch=per_example,
    vjp={"x": f"(lambda p: {pinv_vjp(_GY, 'p')})(np.linalg.pinv(x))",
         "y": "rt.mT(np.linalg.pinv(x)) @ g"},
    jvp={"x": f"(lambda p: ({pinv_jvp('x_dot', 'p')}) @ y)(np.linalg.pinv(x))",
         "y": "np.linalg.pinv(x) @ y_dot"})


def _at_solution(body):
    """body over sol = lstsq's x and r = y - x @ sol (bound once each)."""
    return f"(lambda sol: (lambda r: {body})(y - x @ sol))(rt.lstsq_x(x, y, rcond))"


_W = "rt.residual_weights(g, y[0])"           # the cotangent per column of y
lstsq_residuals = defprim(
    "lstsq_residuals", LA.lstsq_residuals, "rt.lstsq_residuals", "x, y, rcond=None",
    batch=per_example, data_shape=True,     # empty unless a has full column rank (m > n)
    vjp={"x": _at_solution(f"-2 * {_col(f'(r * {_W})')} @ rt.mT({_col('sol')})"),
         "y": _at_solution(f"2 * r * {_W}")},
    jvp={"x": _at_solution("rt.residual_weights_t(-2 * np.sum(r * (x_dot @ sol), axis=0), ans)"),
         "y": _at_solution("rt.residual_weights_t(2 * np.sum(r * y_dot, axis=0), ans)")})
defprim("lstsq_rank", LA.lstsq_rank, "rt.lstsq_rank", "x, y, rcond=None", nondiff=True,
        batch=per_example)
residual_weights = defprim("residual_weights", LA.residual_weights, "rt.residual_weights",
                           "ct, like", shape_args=("like",), linear=("ct",), batch=per_example,
                           vjp={"ct": "rt.residual_weights_t(g, ct)"})
residual_weights_t = defprim("residual_weights_t", LA.residual_weights_t,
                             "rt.residual_weights_t", "c, res", shape_args=("res",),
                             linear=("c",), batch=per_example,
                             vjp={"c": "rt.residual_weights(g, c)"})
