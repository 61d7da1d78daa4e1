"""Elementwise primitives: one row each. `deriv` is the partial derivative per argument;
reverse mode uses g * d (summed back over broadcast axes), forward mode x_dot * d."""
import operator

import numpy as np

from transpile.primitives import batching_rules as BR
from transpile.primitives.registry import defprim

E = BR.elementwise

# ---- arithmetic (operators print as operators) --------------------------------------------
add = defprim("add", [np.add, operator.add], "np.add", "x, y", op="+", batch=E,
              deriv={"x": "1", "y": "1"}, vjp={"x": "g", "y": "g"}, jvp={"x": "x_dot", "y": "y_dot"},
              int_closed=True)
subtract = defprim("subtract", [np.subtract, operator.sub], "np.subtract", "x, y", op="-", batch=E,
                   deriv={"x": "1", "y": "-1"}, vjp={"x": "g", "y": "-g"},
                   jvp={"x": "x_dot", "y": "-y_dot"}, int_closed=True)
multiply = defprim("multiply", [np.multiply, operator.mul], "np.multiply", "x, y", op="*", batch=E,
                   deriv={"x": "y", "y": "x"}, int_closed=True)
divide = defprim("divide", [np.true_divide, np.divide, operator.truediv], "np.divide", "x, y",
                 op="/", batch=E, deriv={"x": "1 / y", "y": "-ans / y"},
                 vjp={"x": "g / y", "y": "-g * ans / y"},
                 jvp={"x": "x_dot / y", "y": "-y_dot * ans / y"})
power = defprim("power", [np.power, operator.pow], "np.power", "x, y", op="**", batch=E,
                deriv={"x": "y * x ** (y - 1)", "y": "rt.log_base(x) * ans"})
negative = defprim("negative", [np.negative, operator.neg], "np.negative", "x", op="neg", batch=E,
                   deriv={"x": "-1"}, vjp={"x": "-g"}, jvp={"x": "-x_dot"}, int_closed=True)
positive = defprim("positive", [np.positive, operator.pos], "np.positive", "x", op="pos", batch=E,
                   deriv={"x": "1"}, vjp={"x": "g"}, jvp={"x": "x_dot"})
square = defprim("square", np.square, "np.square", "x", batch=E, deriv={"x": "2 * x"})
sqrt = defprim("sqrt", np.sqrt, "np.sqrt", "x", batch=E, deriv={"x": "0.5 / ans"},
               vjp={"x": "g * 0.5 / ans"}, jvp={"x": "x_dot * 0.5 / ans"})
cbrt = defprim("cbrt", np.cbrt, "np.cbrt", "x", batch=E, deriv={"x": "ans / (3 * x)"})
reciprocal = defprim("reciprocal", np.reciprocal, "np.reciprocal", "x", batch=E,
                     deriv={"x": "-(ans * ans)"})

# ---- exponentials and logarithms ------------------------------------------------------------
exp = defprim("exp", np.exp, "np.exp", "x", batch=E, deriv={"x": "ans"})
exp2 = defprim("exp2", np.exp2, "np.exp2", "x", batch=E, deriv={"x": "ans * 0.6931471805599453"})
expm1 = defprim("expm1", np.expm1, "np.expm1", "x", batch=E, deriv={"x": "ans + 1"})
log = defprim("log", np.log, "np.log", "x", batch=E, deriv={"x": "1 / x"},
              vjp={"x": "g / x"}, jvp={"x": "x_dot / x"})
log2 = defprim("log2", np.log2, "np.log2", "x", batch=E,
               deriv={"x": "1 / (x * 0.6931471805599453)"})
log10 = defprim("log10", np.log10, "np.log10", "x", batch=E,
                deriv={"x": "1 / (x * 2.302585092994046)"})
log1p = defprim("log1p", np.log1p, "np.log1p", "x", batch=E, deriv={"x": "1 / (1 + x)"},
                vjp={"x": "g / (1 + x)"}, jvp={"x": "x_dot / (1 + x)"})
logaddexp = defprim("logaddexp", np.logaddexp, "np.logaddexp", "x, y", batch=E,
                    deriv={"x": "np.exp(x - ans)", "y": "np.exp(y - ans)"})

# ---- trigonometric and hyperbolic ------------------------------------------------------------
sin = defprim("sin", np.sin, "np.sin", "x", batch=E, deriv={"x": "np.cos(x)"})
cos = defprim("cos", np.cos, "np.cos", "x", batch=E, deriv={"x": "-np.sin(x)"})
tan = defprim("tan", np.tan, "np.tan", "x", batch=E, deriv={"x": "1 + ans * ans"})
arcsin = defprim("arcsin", np.arcsin, "np.arcsin", "x", batch=E,
                 deriv={"x": "1 / np.sqrt(1 - x * x)"})
arccos = defprim("arccos", np.arccos, "np.arccos", "x", batch=E,
                 deriv={"x": "-1 / np.sqrt(1 - x * x)"})
arctan = defprim("arctan", np.arctan, "np.arctan", "x", batch=E, deriv={"x": "1 / (1 + x * x)"})
arctan2 = defprim("arctan2", np.arctan2, "np.arctan2", "x, y", batch=E,
                  deriv={"x": "y / (x * x + y * y)", "y": "-x / (x * x + y * y)"})
hypot = defprim("hypot", np.hypot, "np.hypot", "x, y", batch=E,
                deriv={"x": "x / ans", "y": "y / ans"})
sinh = defprim("sinh", np.sinh, "np.sinh", "x", batch=E, deriv={"x": "np.cosh(x)"})
cosh = defprim("cosh", np.cosh, "np.cosh", "x", batch=E, deriv={"x": "np.sinh(x)"})
tanh = defprim("tanh", np.tanh, "np.tanh", "x", batch=E, deriv={"x": "1 - ans * ans"})
arcsinh = defprim("arcsinh", np.arcsinh, "np.arcsinh", "x", batch=E,
                  deriv={"x": "1 / np.sqrt(x * x + 1)"})
arccosh = defprim("arccosh", np.arccosh, "np.arccosh", "x", batch=E,
                  deriv={"x": "1 / np.sqrt(x * x - 1)"})
arctanh = defprim("arctanh", np.arctanh, "np.arctanh", "x", batch=E,
                  deriv={"x": "1 / (1 - x * x)"})

# ---- piecewise ----------------------------------------------------------------------------------
absolute = defprim("absolute", [np.absolute, np.abs, abs], "np.abs", "x", batch=E,
                   deriv={"x": "np.sign(x)"},    # real x; complex x: the vjp/jvp below
                   vjp={"x": "g * rt.abs_factor(x)"}, jvp={"x": "np.real(x_dot * rt.abs_factor(x))"})
maximum = defprim("maximum", [np.maximum, np.fmax], "np.maximum", "x, y", batch=E,
                  deriv={"x": "rt.select_weight(x, y)", "y": "rt.select_weight(y, x)"},
                  int_closed=True)
minimum = defprim("minimum", [np.minimum, np.fmin], "np.minimum", "x, y", batch=E,
                  deriv={"x": "rt.select_weight(y, x)", "y": "rt.select_weight(x, y)"},
                  int_closed=True)
where = defprim("where", np.where, "np.where", "condition, x, y", batch=E, diff=("x", "y"),
                vjp={"x": "np.where(condition, g, 0)", "y": "np.where(condition, 0, g)"},
                jvp={"x": "np.where(condition, x_dot, 0)", "y": "np.where(condition, 0, y_dot)"},
                array_result=True, fresh=True)
clip = defprim("clip", np.clip, "np.clip", "x, a_min=None, a_max=None", batch=E,
               deriv={"x": "rt.clip_mask(x, a_min, a_max)"})
