"""More NumPy rows users differentiate: np.diff, np.sinc, np.logaddexp2, the degree/radian
conversions, np.float_power, np.vdot and np.nansum."""
import numpy as np

from transpile.primitives.batching import rules as BR
from transpile.primitives import numba_forms as NF
from transpile.primitives.batching.axis_rules import per_example
from transpile.primitives.registry import defprim
from transpile_runtime import array_adjoints as AA

E = BR.elementwise

diff = defprim("diff", np.diff, "np.diff", "x, n=1, axis=-1", linear=("x",), batch=per_example,
               vjp={"x": "rt.diff_vjp(g, n, axis)"}, numba=NF.diff)
diff_vjp = defprim("diff_vjp", AA.diff_vjp, "rt.diff_vjp", "ct, n=1, axis=-1", linear=("ct",),
                   batch=per_example, vjp={"ct": "np.diff(g, n, axis)"}, numba=NF.diff_vjp)

# d sinc(x) / dx = (cos(pi x) - sinc(x)) / x, 0 at x = 0
sinc = defprim("sinc", np.sinc, "np.sinc", "x", batch=E, deriv={
    "x": "np.where(x == 0, 0.0 * x, (np.cos(3.141592653589793 * x) - ans) / "
         "np.where(x == 0, 1.0 + 0.0 * x, x))"}, lower="np.sinc({x})")
logaddexp2 = defprim("logaddexp2", np.logaddexp2, "np.logaddexp2", "x, y", batch=E,
                     deriv={"x": "np.exp2(x - ans)", "y": "np.exp2(y - ans)"},
                     lower="np.logaddexp2({x}, {y})")
for _name, _fns, _k in [("deg2rad", [np.deg2rad, np.radians], "0.017453292519943295"),
                        ("rad2deg", [np.rad2deg, np.degrees], "57.29577951308232")]:
    defprim(_name, _fns, f"np.{_name}", "x", batch=E, linear=("x",),
            deriv={"x": _k}, lower=f"({{x}} * T({_k}))")
float_power = defprim("float_power", np.float_power, "np.float_power", "x, y", batch=E,
                      deriv={"x": "y * np.float_power(x, y - 1)",
                             "y": "rt.log_base(x) * ans"})
# vdot(x, y) = sum(conj(x) * y) over the flattened arrays (anti-linear in x)
vdot = defprim("vdot", np.vdot, "np.vdot", "x, y", batch=per_example, linear=("x", "y"),
               vjp={"x": "np.reshape(np.conj(g * np.ravel(y)), np.shape(x))",
                    "y": "np.reshape(g * np.conj(np.ravel(x)), np.shape(y))"}, product=True)
nansum = defprim("nansum", np.nansum, "np.nansum",
                 "x, axis=None, dtype=None, out=None, keepdims=False", batch=BR.reduction,
                 vjp={"x": "np.where(np.isnan(x), 0.0, rt.sum_grad(g, x, axis, keepdims))"},
                 jvp={"x": "np.sum(np.where(np.isnan(x), 0.0, x_dot), axis=axis, "
                           "keepdims=keepdims)"})
