"""Elementwise primitives: one row each. `deriv` is the partial derivative per argument;
reverse mode uses g * d (summed back over broadcast axes), forward mode x_dot * d."""
import operator

import numpy as np

from transpile.core.ir import Const
from transpile.primitives.batching import rules as BR
from transpile.primitives import scalar_forms as SF
from transpile.primitives.registry import defmethod, defprim
from transpile_runtime import numpy_rows as NR

E = BR.elementwise

# ---- arithmetic (operators print as operators) --------------------------------------------
add = defprim("add", [np.add, operator.add], "np.add", "x, y", op="+", batch=E,
              deriv={"x": "1", "y": "1"}, vjp={"x": "g", "y": "g"}, jvp={"x": "x_dot", "y": "y_dot"},
              lower="({x} + {y})", cuda_c=SF.c_text("{x} + {y}"),
              numba_cuda=SF.py_text("{x} + {y}"), int_closed=True)
subtract = defprim("subtract", [np.subtract, operator.sub], "np.subtract", "x, y", op="-", batch=E,
                   deriv={"x": "1", "y": "-1"}, vjp={"x": "g", "y": "-g"},
                   jvp={"x": "x_dot", "y": "-y_dot"},
                   lower="({x} - {y})", cuda_c=SF.c_text("{x} - {y}"),
                   numba_cuda=SF.py_text("{x} - {y}"), int_closed=True)
multiply = defprim("multiply", [np.multiply, operator.mul], "np.multiply", "x, y", op="*", batch=E,
                   deriv={"x": "y", "y": "x"},
                   lower="({x} * {y})", cuda_c=SF.c_text("{x} * {y}"),
                   numba_cuda=SF.py_text("{x} * {y}"), int_closed=True)
divide = defprim("divide", [np.true_divide, np.divide, operator.truediv], "np.divide", "x, y",
                 op="/", batch=E, deriv={"x": "1 / y", "y": "-ans / y"},
                 vjp={"x": "g / y", "y": "-g * ans / y"},
                 jvp={"x": "x_dot / y", "y": "-y_dot * ans / y"},
                 lower="({x} / {y})", lower_py="py_divide({x}, {y})",
                 cuda_c=SF.c_text("{x} / {y}"),
                 numba_cuda=SF.py_text("{x} / {y}"))
power = defprim("power", [np.power, operator.pow], "np.power", "x, y", op="**", batch=E,
                deriv={"x": "np.where(y == 0, 0, y * x ** (y - 1))", "y": "rt.log_base(x) * ans"},
                lower=SF.power, lower_py="py_power({x}, {y})", cuda_c=SF.c_pow,
                numba_cuda=SF.py_pow)
negative = defprim("negative", [np.negative, operator.neg], "np.negative", "x", op="neg", batch=E,
                   deriv={"x": "-1"}, vjp={"x": "-g"}, jvp={"x": "-x_dot"},
                   lower="(-{x})", cuda_c=SF.c_text("-{x}"), numba_cuda=SF.py_text("-{x}"),
                   int_closed=True)
positive = defprim("positive", [np.positive, operator.pos], "np.positive", "x", op="pos", batch=E,
                   deriv={"x": "1"}, vjp={"x": "g"}, jvp={"x": "x_dot"},
                   lower="{x}", cuda_c=SF.c_text("{x}"), numba_cuda=SF.py_text("{x}"))
square = defprim("square", np.square, "np.square", "x", batch=E, deriv={"x": "2 * x"},
                 lower="({x} * {x})", cuda_c=SF.c_text("{x} * {x}"),
                 numba_cuda=SF.py_text("{x} * {x}"))
sqrt = defprim("sqrt", np.sqrt, "np.sqrt", "x", batch=E, deriv={"x": "0.5 / ans"},
               vjp={"x": "g * 0.5 / ans"}, jvp={"x": "x_dot * 0.5 / ans"},
               lower=SF.np_fn("sqrt"), cuda_c=SF.c_fn("sqrt"), numba_cuda=SF.py_fn("sqrt"))
# d cbrt(x) = 1 / (3 cbrt(x)^2): +inf at 0 (as JAX; ans / (3 x) was 0 / 0 there)
cbrt = defprim("cbrt", np.cbrt, "np.cbrt", "x", batch=E, deriv={"x": "1 / (3 * ans * ans)"},
               vjp={"x": "g / (3 * ans * ans)"}, jvp={"x": "x_dot / (3 * ans * ans)"},
               lower=SF.np_fn("cbrt"), cuda_c=SF.c_fn("cbrt"))
reciprocal = defprim("reciprocal", np.reciprocal, "np.reciprocal", "x", batch=E,
                     deriv={"x": "-(ans * ans)"},
                     lower="np_reciprocal({x})", cuda_c=SF.c_text("{one} / {x}"),
                     numba_cuda=SF.py_text("{one} / {x}"))

# ---- exponentials and logarithms ------------------------------------------------------------
exp = defprim("exp", np.exp, "np.exp", "x", batch=E, deriv={"x": "ans"},
              lower=SF.np_fn("exp"), cuda_c=SF.c_fn("exp"), numba_cuda=SF.py_fn("exp"),
              lower_loop={"float32": "exp32({x})", "float64": "exp64({x})"})
exp2 = defprim("exp2", np.exp2, "np.exp2", "x", batch=E, deriv={"x": "ans * 0.6931471805599453"},
               lower=SF.np_fn("exp2"), cuda_c=SF.c_fn("exp2"))
expm1 = defprim("expm1", np.expm1, "np.expm1", "x", batch=E, deriv={"x": "ans + 1"},
                lower=SF.np_fn("expm1"), cuda_c=SF.c_fn("expm1"), numba_cuda=SF.py_fn("expm1"))
log = defprim("log", np.log, "np.log", "x", batch=E, deriv={"x": "1 / x"},
              vjp={"x": "g / x"}, jvp={"x": "x_dot / x"},
              lower=SF.np_fn("log"), cuda_c=SF.c_fn("log"), numba_cuda=SF.py_fn("log"))
log2 = defprim("log2", np.log2, "np.log2", "x", batch=E,
               deriv={"x": "1 / (x * 0.6931471805599453)"},
               lower=SF.np_fn("log2"), cuda_c=SF.c_fn("log2"), numba_cuda=SF.py_fn("log2"))
log10 = defprim("log10", np.log10, "np.log10", "x", batch=E,
                deriv={"x": "1 / (x * 2.302585092994046)"},
                lower=SF.np_fn("log10"), cuda_c=SF.c_fn("log10"), numba_cuda=SF.py_fn("log10"))
log1p = defprim("log1p", np.log1p, "np.log1p", "x", batch=E, deriv={"x": "1 / (1 + x)"},
                vjp={"x": "g / (1 + x)"}, jvp={"x": "x_dot / (1 + x)"},
                lower=SF.np_fn("log1p"), cuda_c=SF.c_fn("log1p"), numba_cuda=SF.py_fn("log1p"))
# d/dx = exp(x - ans); an operand at +inf is the result and gets 1 (inf - inf was nan there)
logaddexp = defprim("logaddexp", np.logaddexp, "np.logaddexp", "x, y", batch=E,
                    deriv={"x": "np.exp(np.where(x == np.inf, 0.0, x - ans))",
                           "y": "np.exp(np.where(y == np.inf, 0.0, y - ans))"},
                    lower="np.logaddexp({x}, {y})", cuda_c=SF.c_helper("tp_logaddexp", "x", "y"))

# ---- trigonometric and hyperbolic ------------------------------------------------------------
sin = defprim("sin", np.sin, "np.sin", "x", batch=E, deriv={"x": "np.cos(x)"},
              lower=SF.np_fn("sin"), cuda_c=SF.c_fn("sin"), numba_cuda=SF.py_fn("sin"))
cos = defprim("cos", np.cos, "np.cos", "x", batch=E, deriv={"x": "-np.sin(x)"},
              lower=SF.np_fn("cos"), cuda_c=SF.c_fn("cos"), numba_cuda=SF.py_fn("cos"))
tan = defprim("tan", np.tan, "np.tan", "x", batch=E, deriv={"x": "1 + ans * ans"},
              lower=SF.np_fn("tan"), cuda_c=SF.c_fn("tan"), numba_cuda=SF.py_fn("tan"))
arcsin = defprim("arcsin", np.arcsin, "np.arcsin", "x", batch=E,
                 deriv={"x": "1 / np.sqrt(1 - x * x)"},
                 lower=SF.np_fn("arcsin"), cuda_c=SF.c_fn("asin"), numba_cuda=SF.py_fn("asin"))
arccos = defprim("arccos", np.arccos, "np.arccos", "x", batch=E,
                 deriv={"x": "-1 / np.sqrt(1 - x * x)"},
                 lower=SF.np_fn("arccos"), cuda_c=SF.c_fn("acos"), numba_cuda=SF.py_fn("acos"))
arctan = defprim("arctan", np.arctan, "np.arctan", "x", batch=E, deriv={"x": "1 / (1 + x * x)"},
                 lower=SF.np_fn("arctan"), cuda_c=SF.c_fn("atan"), numba_cuda=SF.py_fn("atan"))
arctan2 = defprim("arctan2", np.arctan2, "np.arctan2", "x, y", batch=E,
                  deriv={"x": "y / (x * x + y * y)", "y": "-x / (x * x + y * y)"},
                  lower="np.arctan2({x}, {y})", cuda_c=SF.c_fn("atan2", "x", "y"),
                  numba_cuda=SF.py_fn("atan2", "x", "y"))
# d/dx = x / ans; at x == y == 0 the subgradient (0.5, 0.5), as JAX (the inner where keeps
# the branch not taken finite, so that second derivatives there are 0, not nan)
_HYPOT_R = "np.where(ans == 0, 1.0, ans)"
hypot = defprim("hypot", np.hypot, "np.hypot", "x, y", batch=E,
                deriv={"x": f"np.where(ans == 0, 0.5, x / {_HYPOT_R})",
                       "y": f"np.where(ans == 0, 0.5, y / {_HYPOT_R})"},
                lower="np.hypot({x}, {y})", cuda_c=SF.c_fn("hypot", "x", "y"),
                numba_cuda=SF.py_fn("hypot", "x", "y"))
# |x| with the sign of y (y's sign bit: -0.0 counts as negative); no derivative flows to y
copysign = defprim("copysign", np.copysign, "np.copysign", "x, y", batch=E,
                   deriv={"x": "np.sign(x) * np.copysign(np.ones_like(ans), y)", "y": "0.0 * ans"},
                   lower="np.copysign({x}, {y})", cuda_c=SF.c_fn("copysign", "x", "y"),
                   numba_cuda=SF.py_fn("copysign", "x", "y"))
# x * 2**y for an integer y (read as an integer by every backend)
ldexp = defprim("ldexp", np.ldexp, "np.ldexp", "x, y", batch=E,
                deriv={"x": "np.ldexp(np.ones_like(ans), y)"}, uncast=("y",),
                lower="np.ldexp({x}, ldexp_exponent({y}))",
                cuda_c=lambda a, m, e: f"{m('ldexp')}({a['x']}, (int)({a['y']}))",
                numba_cuda=SF.py_text("math.ldexp({x}, int({y}))"))
sinh = defprim("sinh", np.sinh, "np.sinh", "x", batch=E, deriv={"x": "np.cosh(x)"},
               lower=SF.np_fn("sinh"), cuda_c=SF.c_fn("sinh"), numba_cuda=SF.py_fn("sinh"))
cosh = defprim("cosh", np.cosh, "np.cosh", "x", batch=E, deriv={"x": "np.sinh(x)"},
               lower=SF.np_fn("cosh"), cuda_c=SF.c_fn("cosh"), numba_cuda=SF.py_fn("cosh"))
tanh = defprim("tanh", np.tanh, "np.tanh", "x", batch=E, deriv={"x": "1 - ans * ans"},
               lower=SF.np_fn("tanh"), cuda_c=SF.c_fn("tanh"), numba_cuda=SF.py_fn("tanh"),
               lower_loop={"float32": "tanh32({x})", "float64": "tanh64({x})"})
arcsinh = defprim("arcsinh", np.arcsinh, "np.arcsinh", "x", batch=E,
                  deriv={"x": "1 / np.sqrt(x * x + 1)"},
                  lower=SF.np_fn("arcsinh"), cuda_c=SF.c_fn("asinh"), numba_cuda=SF.py_fn("asinh"))
arccosh = defprim("arccosh", np.arccosh, "np.arccosh", "x", batch=E,
                  deriv={"x": "1 / np.sqrt(x * x - 1)"},
                  lower=SF.np_fn("arccosh"), cuda_c=SF.c_fn("acosh"), numba_cuda=SF.py_fn("acosh"))
arctanh = defprim("arctanh", np.arctanh, "np.arctanh", "x", batch=E,
                  deriv={"x": "1 / (1 - x * x)"},
                  lower=SF.np_fn("arctanh"), cuda_c=SF.c_fn("atanh"), numba_cuda=SF.py_fn("atanh"))

# ---- piecewise ----------------------------------------------------------------------------------
absolute = defprim("absolute", [np.absolute, np.abs, abs], "np.abs", "x", batch=E,
                   deriv={"x": "np.sign(x)"},    # real x; complex x: the vjp/jvp below
                   vjp={"x": "np.real(g) * rt.abs_factor(x)"}, jvp={"x": "np.real(x_dot * rt.abs_factor(x))"},
                   lower="abs({x})", cuda_c=SF.c_float_fn("fabs", "abs({x})"),
                   numba_cuda=SF.py_text("abs({x})"))
fabs = defprim("fabs", np.fabs, "np.fabs", "x", batch=E, deriv={"x": "np.sign(x)"},
              lower=SF.np_fn("fabs"), cuda_c=SF.c_fn("fabs"), numba_cuda=SF.py_fn("fabs"))
maximum = defprim("maximum", np.maximum, "np.maximum", "x, y", batch=E,
                  deriv={"x": "rt.select_weight(x, y)", "y": "rt.select_weight(y, x)"},
                  lower="np.maximum({x}, {y})", cuda_c=SF.c_helper("tp_maximum", "x", "y"),
                  numba_cuda=SF.py_helper("tp_maximum", "x", "y"), int_closed=True)
minimum = defprim("minimum", np.minimum, "np.minimum", "x, y", batch=E,
                  deriv={"x": "rt.select_weight(y, x)", "y": "rt.select_weight(x, y)"},
                  lower="np.minimum({x}, {y})", cuda_c=SF.c_helper("tp_minimum", "x", "y"),
                  numba_cuda=SF.py_helper("tp_minimum", "x", "y"), int_closed=True)
# np.fmax / np.fmin: a NaN operand is ignored (the other one is the result, and gets the
# derivative); as in JAX, x gets it where it wins or y is NaN, y everywhere else (ties included)
_FMAX_X = "(x > y) | np.isnan(y)"
_FMIN_X = "(x < y) | np.isnan(y)"
fmax = defprim("fmax", np.fmax, "np.fmax", "x, y", batch=E,
               deriv={"x": _FMAX_X, "y": f"np.logical_not({_FMAX_X})"},
               lower="np.fmax({x}, {y})", int_closed=True)
fmin = defprim("fmin", np.fmin, "np.fmin", "x, y", batch=E,
               deriv={"x": _FMIN_X, "y": f"np.logical_not({_FMIN_X})"},
               lower="np.fmin({x}, {y})", int_closed=True)
where = defprim("where", np.where, "np.where", "condition, x, y", batch=E, diff=("x", "y"),
                vjp={"x": "np.where(condition, g, 0)", "y": "np.where(condition, 0, g)"},
                jvp={"x": "np.where(condition, x_dot, 0)", "y": "np.where(condition, 0, y_dot)"},
                lower="({x} if {condition} else {y})", cuda_c=SF.c_text("{condition} ? {x} : {y}"),
                numba_cuda=SF.py_text("{x} if {condition} else {y}"), operands=("x", "y"),
                uncast=("condition",), discrete=("condition",), logical=True,
                array_result=True, fresh=True)
# np.clip(x, lo, hi) = min(max(x, lo), hi): x gets the derivative where lo <= x <= hi (at the
# bounds too), lo where x < lo <= hi, hi where x > hi or lo > hi (a missing bound: None)
clip = defprim("clip", np.clip, "np.clip", "x, a_min=None, a_max=None", batch=E,
               deriv={"x": "rt.clip_mask(x, a_min, a_max)",
                      "a_min": "(x < a_min) * rt.clip_mask(a_min, None, a_max)",
                      "a_max": "1 - (x <= a_max) * rt.clip_mask(a_max, a_min, None)"},
               lower=SF.clip, cuda_c=SF.c_clip, operands=("x", "a_min", "a_max"),
               printed_defaults=("a_min", "a_max"))
defmethod("clip", clip)


def _clip_bounds(args, kwargs):
    """np.clip(x, lo) / x.clip(lo) / np.clip(x, min=lo, max=hi) (NumPy 2.1's names): both
    bounds given, None for a missing one (generated code passes both: np.clip needs them)."""
    args, kwargs = list(args), dict(kwargs)
    for old, new in (("a_min", "min"), ("a_max", "max")):
        if new in kwargs and old not in kwargs:
            kwargs[old] = kwargs.pop(new)
    for i, name in ((1, "a_min"), (2, "a_max")):
        if len(args) <= i and name not in kwargs:
            kwargs[name] = Const(None)
    return args, kwargs


clip.canonical_args = _clip_bounds

# ---- np.sinc, np.logaddexp2, degrees and radians, np.float_power -------------------------------
# d sinc(x) / dx = (cos(pi x) - sinc(x)) / x away from 0; at x = 0 the k-th derivative is
# rt.sinc_at_zero(k, x), whose own derivative is the (k + 1)-th: every order right at 0
def _sinc_at_zero_scalar(eqn):
    k = eqn.args.get("k")
    if not isinstance(k, Const):
        return None
    return f"T({NR.sinc_at_zero(k.value, 0.0).item()!r})"


sinc_at_zero = defprim("sinc_at_zero", NR.sinc_at_zero, "rt.sinc_at_zero", "k, x", batch=E,
                       deriv={"x": "rt.sinc_at_zero(k + 1, x)"}, lower=_sinc_at_zero_scalar)
sinc = defprim("sinc", np.sinc, "np.sinc", "x", batch=E, deriv={
    "x": "np.where(x == 0, rt.sinc_at_zero(1, x), (np.cos(3.141592653589793 * x) - ans) / "
         "np.where(x == 0, 1.0 + 0.0 * x, x))"}, lower="np.sinc({x})")
logaddexp2 = defprim("logaddexp2", np.logaddexp2, "np.logaddexp2", "x, y", batch=E,
                     deriv={"x": "np.exp2(np.where(x == np.inf, 0.0, x - ans))",
                            "y": "np.exp2(np.where(y == np.inf, 0.0, y - ans))"},
                     lower="np.logaddexp2({x}, {y})")
for _name, _fns, _k in [("deg2rad", [np.deg2rad, np.radians], "0.017453292519943295"),
                        ("rad2deg", [np.rad2deg, np.degrees], "57.29577951308232")]:
    defprim(_name, _fns, f"np.{_name}", "x", batch=E, linear=("x",),
            deriv={"x": _k}, lower=f"({{x}} * T({_k}))")
# (computed in float64 or complex128 whatever the operands: the loops cast them to the result)
float_power = defprim("float_power", np.float_power, "np.float_power", "x, y", batch=E,
                      deriv={"x": "y * np.float_power(x, y - 1)",
                             "y": "rt.log_base(x) * ans"}, lower="({x} ** {y})")
