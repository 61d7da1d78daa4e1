"""numpy.fft: every transform is linear, so forward mode applies it to the tangent; reverse mode
applies its transpose, rt.fft_adjoint (runtime/fft_adjoints.py), which knows the four kinds
(fft, ifft, rfft, irfft) over any axes with any lengths and norm. rt.fft_forward and
rt.fft_adjoint are each other's transposes, so higher derivatives stay in these rows."""
import numpy as np

import transpile_runtime as rt
from transpile.core.ir import Const
from transpile.primitives.batching import rules as BR
from transpile.primitives.registry import defprim


def _array_key(eqn):
    return next(k for k in ("a", "x", "ct") if k in eqn.args)


def _rank(s, eqn):
    return s.r(eqn.args["x"] if "x" in eqn.args else eqn.args[_array_key(eqn)])


def _negative(axes, r):
    if any(a >= 0 for a in axes):
        if r is None:
            raise BR.NoRule("rank unknown")
        axes = tuple(a - r if a >= 0 else a for a in axes)
    return axes


def _batch(s, eqn):
    """Transformed axes written as negative numbers never meet the batch axis in front."""
    key = _array_key(eqn)
    BR._only_batched(s, eqn, [key] + (["x"] if key == "ct" else []))
    if key == "ct" and s.b(eqn.args["x"]) and not s.b(eqn.args["ct"]):
        raise BR.NoRule("cotangent not batched")
    args = dict(eqn.args)
    r = _rank(s, eqn)
    if "axis" in args or "axis" in [p.name for p in eqn.prim.params]:
        axis = BR._const(args, "axis", eqn.prim.param("axis").default)
        args["axis"] = Const(_negative((axis,), r)[0])
    else:
        axes = BR._const(args, "axes", eqn.prim.param("axes").default)
        size = BR._const(args, "s", None) if eqn.prim.param("s") else None
        if axes is None and size is None:
            if r is None:
                raise BR.NoRule("rank unknown")
            axes = tuple(range(-r, 0))
        if axes is not None:
            axes = (axes,) if isinstance(axes, int) else tuple(axes)
            args["axes"] = Const(_negative(axes, r))
    s.final(eqn.prim, args)


FFT = BR.Rule("fft", _batch, _rank)

_ONE_AXIS = "a, n=None, axis=-1, norm=None"
_TWO_AXES = "a, s=None, axes=(-2, -1), norm=None"
_ALL_AXES = "a, s=None, axes=None, norm=None"


def _transform(name, sig, kind):
    lengths, axes = ("n", "axis") if sig is _ONE_AXIS else ("s", "axes")
    return defprim(f"fft_{name}", getattr(np.fft, name), f"np.fft.{name}", sig, batch=FFT,
                   linear=("a",),
                   vjp={"a": f"rt.fft_adjoint(g, a, {lengths}, {axes}, norm, {kind!r})"})


for _kind in ("fft", "ifft", "rfft", "irfft"):
    _transform(_kind, _ONE_AXIS, _kind)
    _transform(_kind.replace("fft", "fft2"), _TWO_AXES, _kind)
    _transform(_kind.replace("fft", "fftn"), _ALL_AXES, _kind)

fftshift = defprim("fft_fftshift", np.fft.fftshift, "np.fft.fftshift", "x, axes=None", batch=FFT,
                   linear=("x",), vjp={"x": "np.fft.ifftshift(g, axes)"})
ifftshift = defprim("fft_ifftshift", np.fft.ifftshift, "np.fft.ifftshift", "x, axes=None",
                    batch=FFT, linear=("x",), vjp={"x": "np.fft.fftshift(g, axes)"})

fft_forward = defprim("fft_forward", rt.fft_forward, "rt.fft_forward",
                      "x, s=None, axes=None, norm=None, kind='fft'", batch=FFT, linear=("x",),
                      vjp={"x": "rt.fft_adjoint(g, x, s, axes, norm, kind)"})
fft_adjoint = defprim("fft_adjoint", rt.fft_adjoint, "rt.fft_adjoint",
                      "ct, x, s=None, axes=None, norm=None, kind='fft'", batch=FFT,
                      shape_args=("x",), linear=("ct",),
                      vjp={"ct": "rt.fft_forward(g, s, axes, norm, kind)"})
