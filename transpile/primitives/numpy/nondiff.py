"""Primitives with no derivative: comparisons, rounding, array creation, shape queries.
Their results carry no gradient (like integers in JAX)."""
import operator

import numpy as np

from transpile.primitives.batching import rules as BR
from transpile.primitives.batching.axis_rules import per_example
from transpile.primitives.batching.base import Rule
from transpile.primitives import scalar_forms as SF, numba_forms as NF
from transpile.primitives.registry import by_name, defmethod, defprim
from transpile_runtime import helpers as H, numpy_rows as NR

E = BR.elementwise


def _nd(name, impls, path, sig, **kw):
    return defprim(name, impls, path, sig, nondiff=True, **kw)


for _name, _np, _op, _sym in [("greater", np.greater, operator.gt, ">"),
                              ("greater_equal", np.greater_equal, operator.ge, ">="),
                              ("less", np.less, operator.lt, "<"),
                              ("less_equal", np.less_equal, operator.le, "<="),
                              ("equal", np.equal, operator.eq, "=="),
                              ("not_equal", np.not_equal, operator.ne, "!=")]:
    _nd(_name, [_np, _op], f"np.{_name}", "x, y", op=_sym, batch=E,
        bool_result=True, fresh=True,
        lower=f"({{x}} {_sym} {{y}})", cuda_c=SF.c_text(f"{{x}} {_sym} {{y}}"),
        numba_cuda=SF.py_text(f"{{x}} {_sym} {{y}}"))

for _name, _c, _py in [("logical_and", "{x} && {y}", "bool({x}) and bool({y})"),
                       ("logical_or", "{x} || {y}", "bool({x}) or bool({y})"),
                       ("logical_xor", "(bool)({x}) != (bool)({y})", None)]:
    _nd(_name, getattr(np, _name), f"np.{_name}", "x, y", batch=E, logical=True,
        bool_result=True, fresh=True,
        lower=f"({_py or 'bool({x}) != bool({y})'})", cuda_c=SF.c_text(_c),
        numba_cuda=_py and SF.py_text(_py))
logical_not = _nd("logical_not", [np.logical_not, operator.not_], "np.logical_not", "x",
                  op="not", batch=E, logical=True, bool_result=True, fresh=True,
                  lower="(not {x})", cuda_c=SF.c_text("!({x})"), numba_cuda=SF.py_text("not {x}"))
# bitwise operators on bool/int arrays (`m & n`, `~m`, `a << 1`): NumPy's ufuncs, no derivative
# (a shift by a negative count or by the width or more shifts every bit out, as in NumPy)
for _name, _op, _sym, _form in [
        ("bitwise_and", operator.and_, "&", "np.bitwise_and"),
        ("bitwise_or", operator.or_, "|", "np.bitwise_or"),
        ("bitwise_xor", operator.xor, "^", "np.bitwise_xor"),
        ("left_shift", operator.lshift, "<<", "np_left_shift"),
        ("right_shift", operator.rshift, ">>", "np_right_shift")]:
    _nd(_name, [getattr(np, _name), _op], f"np.{_name}", "x, y", op=_sym, batch=E,
        lower=f"{_form}({{x}}, {{y}})")
invert = _nd("invert", [np.invert, operator.invert], "np.invert", "x", op="invert", batch=E,
             lower="np.invert({x})")
_nd("sign", np.sign, "np.sign", "x", batch=E, fresh=True, lower="np_sign({x})",
    cuda_c=SF.c_helper("tp_sign"), numba_cuda=SF.py_helper("tp_sign"))
# rounding an integer or a bool is the identity (Python's math has no rint)
for _name, _py in [("floor", SF.py_round_int("math.floor({x})")),
                   ("ceil", SF.py_round_int("math.ceil({x})")), ("rint", None),
                   ("trunc", SF.py_round_int("(math.floor({x}) if {x} >= 0 else math.ceil({x}))"))]:
    _nd(_name, getattr(np, _name), f"np.{_name}", "x", batch=E, fresh=True,
        lower=SF.np_fn(_name), cuda_c=SF.c_float_fn(_name, "{x}"), numba_cuda=_py)
# an integer or a bool is never nan or inf (nor has a sign bit: Python's math has no signbit)
for _name, _int, _py in [("isnan", "false", SF.py_fn("isnan")),
                         ("isinf", "false", SF.py_fn("isinf")),
                         ("isfinite", "true", SF.py_fn("isfinite")),
                         ("signbit", "{x} < 0", None)]:
    _nd(_name, getattr(np, _name), f"np.{_name}", "x", batch=E,
        bool_result=True, fresh=True,
        lower=SF.np_fn(_name), cuda_c=SF.c_float_text(_name + "({x})", _int), numba_cuda=_py)
round_ = _nd("round", [np.round, np.around], "np.round", "x, decimals=0", batch=E, lower=SF.round_,
             cuda_c=SF.c_round)
floor_divide = _nd("floor_divide", [np.floor_divide, operator.floordiv], "np.floor_divide",
                   "x, y", op="//", batch=E, fresh=True, int_closed=True,
                   lower="np_floor_divide({x}, {y})", lower_py="py_floor_divide({x}, {y})",
                   cuda_c=SF.c_helper("tp_floor_divide", "x", "y"))

# creation from a shape or from another array's shape
# (np.ndarray(shape, dtype), as npbench's vadv makes its buffers, is np.empty)
zeros, ones, empty = [_nd(_name, [getattr(np, _name)] + ([np.ndarray] if _name == "empty" else []),
                          f"np.{_name}", "shape, dtype=None",
                          batch=BR.creation, array_result=True, fresh=True)
                      for _name in ["zeros", "ones", "empty"]]
zeros_like, ones_like, empty_like = [
    _nd(_name, getattr(np, _name), f"np.{_name}", "x, dtype=None", batch=BR.creation_like,
        array_result=True, fresh=True)
    for _name in ["zeros_like", "ones_like", "empty_like"]]
full = _nd("full", np.full, "np.full", "shape, fill_value, dtype=None", batch=BR.creation,
           array_result=True, fresh=True)
full_like = _nd("full_like", np.full_like, "np.full_like", "x, fill_value, dtype=None",
                batch=BR.creation_like,
                array_result=True, fresh=True)
arange = _nd("arange", np.arange, "np.arange", "start, stop=None, step=None, dtype=None",
             batch=BR.creation,
             array_result=True, fresh=True)
eye = _nd("eye", np.eye, "np.eye", "N, M=None, k=0, dtype=float", batch=BR.creation,
          array_result=True, fresh=True)
identity_matrix = _nd("identity_matrix", np.identity, "np.identity", "n, dtype=None",
                      batch=BR.creation,
                      array_result=True, fresh=True)

# queries
shape = _nd("shape", np.shape, "np.shape", "x", batch=BR.query, query=True, shape_safe=True)
ndim = _nd("ndim", np.ndim, "np.ndim", "x", batch=BR.query, query=True, shape_safe=True)
size = _nd("size", np.size, "np.size", "x, axis=None", batch=BR.query, query=True, shape_safe=True)
len_ = _nd("len", len, "len", "x", batch=BR.query,
           int_result=True, meta=True, no_buffer=True, query=True, scalar_result=True,
           shape_safe=True)
int_ = _nd("int", int, "int", "x", batch=BR.query,
           int_result=True, no_buffer=True, scalar_result=True, shape_safe=True,
           unsafe_in_select=True)
bool_ = _nd("bool", bool, "bool", "x", batch=BR.query,
            no_buffer=True, scalar_result=True, shape_safe=True, unsafe_in_select=True)
result_type = _nd("result_type", np.result_type, "np.result_type", "*arrays", batch=BR.query,
                  query=True)
argmax = _nd("argmax", np.argmax, "np.argmax", "x, axis=None", batch=BR.reduction, int_result=True)
argmin = _nd("argmin", np.argmin, "np.argmin", "x, axis=None", batch=BR.reduction, int_result=True)
def _isclose(eqn):
    """|x - y| <= atol + rtol |y| for finite values, equal values (infinities) close, nan
    close to nan if asked (arguments left out: NumPy's defaults)."""
    arg = {k: "{" + k + "}" if k in eqn.args else d
           for k, d in (("rtol", "1e-05"), ("atol", "1e-08"), ("equal_nan", "False"))}
    x, y = "as_inexact({x})", "as_inexact({y})"     # integers compared in float64, as NumPy
    return (f"(({x} == {y}) or (np.isfinite({x}) and np.isfinite({y}) and "
            f"abs({x} - {y}) <= {arg['atol']} + {arg['rtol']} * abs({y})) or "
            f"({arg['equal_nan']} and {x} != {x} and {y} != {y}))")


isclose = _nd("isclose", np.isclose, "np.isclose",
              "x, y, rtol=1e-05, atol=1e-08, equal_nan=False", batch=E, bool_result=True,
              fresh=True, lower=_isclose)
# counts of each integer in x (its length depends on the values); with weights, their sums:
# linear in the weights, whose cotangent reads the result's cotangent at each x
bincount = defprim("bincount", np.bincount, "np.bincount", "x, weights=None, minlength=0",
                   diff=("weights",), linear=("weights",), vjp={"weights": "g[x]"},
                   batch=per_example, data_shape=True)
# positions where v would be inserted into the sorted vector a (integers: no derivative)
searchsorted = _nd("searchsorted", np.searchsorted, "np.searchsorted",
                   "a, v, side='left', sorter=None", batch=per_example, int_result=True,
                   numba=NF.searchsorted, shape_from="v",   # (a may be of run-time length)
                   numba_unsized=True)
argsort = _nd("argsort", np.argsort, "np.argsort", "x, axis=-1, kind=None", batch=BR.reduction,
              numba=NF.argsort)
attr_shape = _nd("attr_shape", None, "rt.attr_shape", "x", op="attr:shape", batch=BR.query,
                 meta=True, no_buffer=True, query=True, shape_safe=True)
tuple_concat = _nd("tuple_concat", None, "rt.tuple_concat", "a, b",
                   batch=BR.query)     # (n,) + x.shape
attr_ndim = _nd("attr_ndim", None, "rt.attr_ndim", "x", op="attr:ndim", batch=BR.query,
                int_result=True, meta=True, no_buffer=True, query=True, shape_safe=True)
attr_size = _nd("attr_size", None, "rt.attr_size", "x", op="attr:size", batch=BR.query,
                int_result=True, meta=True, no_buffer=True, query=True, shape_safe=True)
attr_dtype = _nd("attr_dtype", None, "rt.attr_dtype", "x", op="attr:dtype", batch=BR.query,
                 meta=True, no_buffer=True, query=True, shape_safe=True)
# whether np.reshape/ravel of an argument is a view (NumPy copies other layouts): checked
# where the function writes through such a view (frontend/normalize/aliasing.py); of an
# argument: never known while generating code, the layout being the caller's
attr_c_contiguous = _nd("attr_c_contiguous", H.attr_c_contiguous, "rt.attr_c_contiguous", "x", batch="helper",
                        bool_result=True, no_buffer=True, scalar_result=True,
                        numba=lambda lw, eqn: f"{lw.fmt(eqn.args['x'])}.flags.c_contiguous"
                        if lw.av(eqn.args["x"]) is not None and lw.av(eqn.args["x"]).ndim
                        else "True")
range_ = _nd("range", range, "range", "start, stop=None, step=None", batch=BR.query)
any_ = _nd("any", np.any, "np.any", "x, axis=None", batch=BR.reduction, numba=NF.whole("any"),
           bool_result=True)
all_ = _nd("all", np.all, "np.all", "x, axis=None", batch=BR.reduction, numba=NF.whole("all"),
           bool_result=True)
# results whose length depends on the values (np.where(c) and np.nonzero read argwhere's columns)
# (vmap: each example's own call, a (count, ndim) array; the counts must agree to stack)
argwhere = _nd("argwhere", np.argwhere, "np.argwhere", "x", batch=Rule(
    "per_example", per_example.batch, lambda s, eqn: 2), data_shape=True)
flatnonzero = _nd("flatnonzero", np.flatnonzero, "np.flatnonzero", "x", batch=BR.query,
                  data_shape=True)
unique = _nd("unique", np.unique, "np.unique", "x", batch=BR.query, data_shape=True)
count_nonzero = _nd("count_nonzero", np.count_nonzero, "np.count_nonzero", "x, axis=None",
                    batch=BR.reduction,
                    numba=NF.whole("count_nonzero"))

for _name in ["argmax", "argmin", "argsort", "any", "all", "round"]:
    defmethod(_name, by_name(_name))
for _name in ["shape", "ndim", "size", "dtype"]:
    defmethod(_name, by_name(f"attr_{_name}"))   # attributes x.shape, x.ndim, ...

# x.item(): the one element as a Python number (float, int, bool or complex by x's dtype);
# the identity on values, as float(x)
item = defprim("item", NR.item, "rt.item", "x", batch=BR.query, linear=("x",),
               vjp={"x": "rt.cast_like(g, x)"}, no_buffer=True, scalar_result=True,
               shape_safe=True,
               numba=lambda lw, eqn: f"{lw.fmt(eqn.args['x'])}.item()"
               if lw.av(eqn.args["x"]) is not None and lw.av(eqn.args["x"]).ndim
               else lw.fmt(eqn.args["x"]))
defmethod("item", item)
# float(x) keeps its derivative (it is the identity on values); int/bool are piecewise constant.
# the NumPy scalar a NumPy function returns for Python numbers (frontend/normalize/calls.py):
# the identity on values, a strong type (np.sqrt(2.0) * v32 is float64, as in NumPy 2)
numpy_scalar = defprim("numpy_scalar", H.numpy_scalar, "rt.numpy_scalar", "x", batch="helper",
                       linear=("x",), vjp={"x": "rt.cast_like(g, x)"}, no_buffer=True,
                       shape_safe=True, numba=lambda lw, eqn: lw.fmt(eqn.args["x"]))
float_ = defprim("float", float, "float", "x", batch=BR.query, linear=("x",),
                 vjp={"x": "rt.cast_like(g, x)"},
        no_buffer=True, scalar_result=True, shape_safe=True, unsafe_in_select=True)


