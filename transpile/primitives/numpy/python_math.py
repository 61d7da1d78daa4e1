"""Python's `math` module in transformed code: each scalar function means the NumPy row of the
same function (math.sin is np.sin on a scalar: the same derivative, vmap rule and lowering),
and math.floor/ceil/trunc, which return Python ints, are rows of their own without derivative.
"""
import math

import numpy as np

from transpile.core.ir import Const
from transpile.primitives.batching import rules as BR
from transpile.primitives.batching.base import Rule
from transpile.primitives.registry import by_name, defimpl, defprim
# the rows named below are registered by these modules
from transpile.primitives.numpy import elementwise, nondiff  # noqa: F401
from transpile.primitives.scipy import special  # noqa: F401

# math name -> the row it means
_SAME_AS = {
    "sin": "sin", "cos": "cos", "tan": "tan", "asin": "arcsin", "acos": "arccos",
    "atan": "arctan", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "asinh": "arcsinh",
    "acosh": "arccosh", "atanh": "arctanh", "exp": "exp", "expm1": "expm1", "log10": "log10",
    "log2": "log2", "log1p": "log1p", "sqrt": "sqrt", "fabs": "absolute", "atan2": "arctan2",
    "hypot": "hypot", "pow": "float_power", "erf": "special_erf", "erfc": "special_erfc", "lgamma": "special_gammaln",
    "gamma": "special_gamma",
    "isnan": "isnan", "isinf": "isinf", "isfinite": "isfinite", "copysign": "copysign",
    "degrees": "rad2deg", "radians": "deg2rad", "exp2": "exp2", "cbrt": "cbrt",
}
for _m, _row in _SAME_AS.items():
    if hasattr(math, _m):       # math.exp2 and math.cbrt: Python 3.11 on
        defimpl(by_name(_row), getattr(math, _m))
defimpl(by_name("log"), math.log)      # math.log(x); math.log(x, base) is refused by arity

def _as_int_batch(name):
    """math.floor of a value that differs per example: np.floor of the batch, as int64 (one
    Python int per example)."""
    def batch(s, eqn):
        x = eqn.args["x"]
        r = s.emit(name, {"x": x}, base=eqn.out, rank=s.r(x))
        return s.final("astype", {"x": r, "dtype": Const(np.int64)})
    return Rule("elementwise", batch, BR.elementwise.rank)


# an integer result (usable as an index), piecewise constant: no derivative
for _m in ("floor", "ceil", "trunc"):
    defprim(f"math_{_m}", getattr(math, _m), f"math.{_m}", "x", nondiff=True,
            batch=_as_int_batch(_m), lower=f"math.{_m}({{x}})",
            doc=f"math.{_m}: np.{_m} as a Python int")

