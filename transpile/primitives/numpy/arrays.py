"""Rows for NumPy's shape and rearranging functions (roll, flip, repeat, the stack family,
split, diag, triu/tril, kron, pad, sort, cumprod, tensordot), the mod family, linspace and the
complex parts (real, imag, conj, angle).

Complex numbers follow JAX's convention: a reverse rule transposes the (real-)linear map of
the forward rule without conjugating, so grad of a real function f(z) is df/dx - i df/dy.
Functions that split multiple outputs (np.split, ...) are expanded by the normalizer into one
primitive per output (`multi`), each with its own rules.
"""
import operator

import numpy as np

from transpile.core.ir import Const
from transpile.primitives.batching import rules as BR
from transpile.primitives import scalar_forms as SF, numba_forms as NF
from transpile.primitives.batching.axis_rules import axis_rule, per_example
from transpile.primitives.registry import defmethod, defprim
from transpile_runtime import array_adjoints as AA, complex_parts as CP

E = BR.elementwise

# ---- the mod family: derivative 1 in x, -floor(x / y) (mod) or -trunc(x / y) (fmod) in y --------
# (Numba's np.mod / np.fmod differ from NumPy's on integers: fmod(-4, 3) is 2 there, INT_MIN % -1
# traps; the forms are NumPy's loops, runtime/backends/numba_int.py)
mod = defprim("mod", [np.mod, np.remainder, operator.mod], "np.mod", "x, y", op="%", batch=E,
              deriv={"x": "1", "y": "-np.floor(x / y)"}, int_closed=True,
              lower="np_mod({x}, {y})", lower_py="py_mod({x}, {y})",
              cuda_c=SF.c_helper("tp_mod", "x", "y"))
fmod = defprim("fmod", np.fmod, "np.fmod", "x, y", batch=E,
               deriv={"x": "1", "y": "-np.trunc(x / y)"}, lower="np_fmod({x}, {y})",
               int_closed=True)

# ---- linspace: start * (1 - t) + stop * t ----------------------------------------------------
linspace = defprim(
    "linspace", np.linspace, "np.linspace", "start, stop, num=50, endpoint=True, dtype=None",
    batch=per_example,
    vjp={"start": "rt.linspace_part_vjp(g, num, endpoint, 0, start)",
         "stop": "rt.linspace_part_vjp(g, num, endpoint, 1, stop)"},
    jvp={"start": "rt.linspace_part(start_dot, num, endpoint, 0, start)",
         "stop": "rt.linspace_part(stop_dot, num, endpoint, 1, stop)"},
    numba=NF.linspace, array_result=True, fresh=True)
linspace_part = defprim(
    "linspace_part", AA.linspace_part, "rt.linspace_part", "t, num, endpoint, which, like",
    shape_args=("like",), batch=per_example, linear=("t",),
    vjp={"t": "rt.linspace_part_vjp(g, num, endpoint, which, like)"})
linspace_part_vjp = defprim(
    "linspace_part_vjp", AA.linspace_part_vjp, "rt.linspace_part_vjp",
    "ct, num, endpoint, which, like", shape_args=("like",), batch=per_example, linear=("ct",),
    vjp={"ct": "rt.linspace_part(g, num, endpoint, which, like)"})

# ---- complex parts ---------------------------------------------------------------------------
real = defprim("real", np.real, "np.real", "x", batch=E, linear=("x",),
               vjp={"x": "rt.match_complex(np.real(g), x)"}, lower="{x}.real", view="opaque")
imag = defprim("imag", np.imag, "np.imag", "x", batch=E, linear=("x",),
               vjp={"x": "rt.match_complex(-1j * np.real(g), x)"}, lower="{x}.imag", view="opaque")
conj = defprim("conj", [np.conj, np.conjugate], "np.conj", "x", batch=E, linear=("x",),
               vjp={"x": "np.conj(g)"}, lower="np.conj({x})")
angle = defprim("angle", np.angle, "np.angle", "x", batch=E, lower="np.arctan2({x}.imag, {x}.real)",
                vjp={"x": "rt.angle_vjp(g, x)"}, jvp={"x": "rt.angle_jvp(x_dot, x)"})
match_complex = defprim("match_complex", CP.match_complex, "rt.match_complex", "t, x",
                        shape_args=("x",), batch=E, linear=("t",),
                        vjp={"t": "rt.match_complex(g, t)"})
# second order: Im(t / x) and -i Re(ct) / x differentiated in x (zero for real x)
angle_jvp = defprim("angle_jvp", CP.angle_jvp, "rt.angle_jvp", "t, x", batch=E,
                    vjp={"t": "rt.angle_vjp(g, x)",
                         "x": "rt.match_complex(1j * g * t / (x * x), x)"},
                    jvp={"t": "rt.angle_jvp(t_dot, x)", "x": "rt.angle_jvp(-t * x_dot / x, x)"})
angle_vjp = defprim("angle_vjp", CP.angle_vjp, "rt.angle_vjp", "ct, x", batch=E,
                    vjp={"ct": "rt.angle_jvp(g, x)", "x": "-g * rt.angle_vjp(ct, x) / x"},
                    jvp={"ct": "rt.angle_vjp(ct_dot, x)", "x": "-rt.angle_vjp(ct, x) * x_dot / x"})
abs_factor = defprim("abs_factor", CP.abs_factor, "rt.abs_factor", "x", batch=E,
                     vjp={"x": "rt.abs_factor_vjp(g, x)"}, jvp={"x": "rt.abs_factor_jvp(x_dot, x)"},
                     numba=NF.abs_factor)
# linear in t / ct (each the other's transpose); their derivatives in x (third derivatives of
# np.abs of a complex value) are refused by name
defprim("abs_factor_jvp", CP.abs_factor_jvp, "rt.abs_factor_jvp", "t, x", batch=E,
        linear=("t",), diff=("t",), vjp={"t": "rt.abs_factor_vjp(g, x)"})
defprim("abs_factor_vjp", CP.abs_factor_vjp, "rt.abs_factor_vjp", "ct, x", batch=E,
        linear=("ct",), diff=("ct",), vjp={"ct": "rt.abs_factor_jvp(g, x)"})

# ---- rearranging (linear: forward mode applies the primitive to the tangent) ------------------
roll = defprim("roll", np.roll, "np.roll", "x, shift, axis=None", linear=("x",),
               batch=axis_rule(["axis"]), vjp={"x": "rt.roll_back(g, shift, axis)"},
               numba=NF.roll)
roll_back = defprim("roll_back", AA.roll_back, "rt.roll_back", "ct, shift, axis=None",
                    linear=("ct",), batch=axis_rule(["axis"], array_params=("ct",),
                                                    rank=lambda s, e: s.r(e.args["ct"])),
                    vjp={"ct": "np.roll(g, shift, axis)"}, numba=NF.roll_back)
# flips and split pieces are views of x in NumPy: a write into one is refused ("opaque"),
# never silently done on a copy
flip = defprim("flip", np.flip, "np.flip", "x, axis=None", linear=("x",),
               batch=axis_rule(["axis"]), vjp={"x": "np.flip(g, axis)"}, numba=NF.flip,
               view="opaque")
fliplr = defprim("fliplr", np.fliplr, "np.fliplr", "x", linear=("x",), batch=per_example,
                 vjp={"x": "np.fliplr(g)"}, numba=NF.flip_axis(1), view="opaque")
flipud = defprim("flipud", np.flipud, "np.flipud", "x", linear=("x",), batch=per_example,
                 vjp={"x": "np.flipud(g)"}, numba=NF.flip_axis(0), view="opaque")
rot90 = defprim("rot90", np.rot90, "np.rot90", "x, k=1, axes=(0, 1)", linear=("x",),
                batch=axis_rule(["axes"]), vjp={"x": "np.rot90(g, -k, axes)"}, numba=NF.rot90,
                view="opaque")
repeat = defprim("repeat", np.repeat, "np.repeat", "x, repeats, axis=None", linear=("x",),
                 batch=per_example, vjp={"x": "rt.repeat_vjp(g, x, repeats, axis)"},
                 numba=NF.repeat, array_result=True)
repeat_vjp = defprim("repeat_vjp", AA.repeat_vjp, "rt.repeat_vjp", "ct, x, repeats, axis=None",
                     shape_args=("x",), linear=("ct",), batch=per_example,
                     vjp={"ct": "np.repeat(g, repeats, axis)"}, numba=NF.repeat_vjp)
_JOINED = {}


def _joined_vjp(kind):
    """arrays a list or tuple: the cotangent of its item k; one array (its rows joined): the
    cotangent of the whole array."""
    def rule(eqn, k):
        if k is None:
            return f"rt.joined_array_vjp(g, arrays, {kind!r})"
        return f"rt.joined_vjp(g, arrays, k, {kind!r})"
    return rule


for _kind in ("vstack", "hstack", "dstack", "column_stack"):
    _JOINED[_kind] = defprim(_kind, [getattr(np, _kind)] +
                             ([np.row_stack] if _kind == "vstack" and
                              hasattr(np, "row_stack") else []),
                             f"np.{_kind}", "arrays", linear=("arrays",), batch=per_example,
                             vjp={"arrays": _joined_vjp(_kind)},
                             numba=NF.joined(_kind),
                             array_result=_kind in ("vstack", "hstack"))
joined_array = defprim("joined_array", AA.joined_array, "rt.joined_array", "x, kind",
                       linear=("x",), batch=per_example,
                       vjp={"x": "rt.joined_array_vjp(g, x, kind)"})
joined_array_vjp = defprim("joined_array_vjp", AA.joined_array_vjp, "rt.joined_array_vjp",
                           "ct, x, kind", shape_args=("x",), linear=("ct",), batch=per_example,
                           vjp={"ct": "rt.joined_array(g, kind)"})
joined_vjp = defprim("joined_vjp", AA.joined_vjp, "rt.joined_vjp", "ct, arrays, k, kind",
                     shape_args=("arrays",), linear=("ct",), batch=per_example,
                     vjp={"ct": "rt.joined_pad(g, arrays, k, kind)"}, numba=NF.joined_vjp)
joined_pad = defprim("joined_pad", AA.joined_pad, "rt.joined_pad", "part, arrays, k, kind",
                     shape_args=("arrays",), linear=("part",), batch=per_example,
                     vjp={"part": "rt.joined_vjp(g, arrays, k, kind)"})


def _split_parts(even, axis=None):
    def parts(bound, const):
        ios = const(bound.get("indices_or_sections"))
        n = ios if isinstance(ios, int) else len(ios) + 1
        extra = {} if axis is None else {"axis": axis}
        return [("split_part", {"k": k, "even": even, **extra}) for k in range(n)]
    return parts


split = defprim("split", np.split, "np.split", "x, indices_or_sections, axis=0",
                linear=("x",), batch=per_example)
array_split = defprim("array_split", np.array_split, "np.array_split",
                      "x, indices_or_sections, axis=0", linear=("x",), batch=per_example)
split.multi, array_split.multi = _split_parts(True), _split_parts(False)
for _name, _axis in (("vsplit", "v"), ("hsplit", "h"), ("dsplit", "d")):
    defprim(_name, getattr(np, _name), f"np.{_name}", "x, indices_or_sections",
            linear=("x",), batch=per_example).multi = _split_parts(True, _axis)
split_part = defprim("split_part", AA.split_part, "rt.split_part",
                     "x, indices_or_sections, axis=0, k=0, even=True", linear=("x",),
                     batch=per_example, numba=NF.split_part, view="opaque",
                     construct="np.split/np.array_split",
                     vjp={"x": "rt.split_part_vjp(g, x, indices_or_sections, axis, k, even)"})
split_part_vjp = defprim("split_part_vjp", AA.split_part_vjp, "rt.split_part_vjp",
                         "ct, x, indices_or_sections, axis=0, k=0, even=True", shape_args=("x",),
                         linear=("ct",), batch=per_example, numba=NF.split_part_vjp,
                         vjp={"ct": "rt.split_part(g, indices_or_sections, axis, k, even)"})

diag = defprim("diag", np.diag, "np.diag", "x, k=0", linear=("x",), batch=per_example,
               numba=NF.with_k("diag"),
               vjp={"x": "rt.diag_vjp(g, x, k)"}, array_result=True)
diag_vjp = defprim("diag_vjp", CP.diag_vjp, "rt.diag_vjp", "ct, x, k=0", shape_args=("x",),
                   linear=("ct",), batch=per_example, vjp={"ct": "np.diag(g, k)"},
                   numba=NF.diag_vjp)
# np.diagflat(v, k): v flattened onto the k-th diagonal; its adjoint reads that diagonal back
diagflat = defprim("diagflat", np.diagflat, "np.diagflat", "v, k=0", linear=("v",),
                   batch=per_example, vjp={"v": "np.reshape(np.diag(g, k), np.shape(v))"},
                   array_result=True, numba=NF.with_k("diagflat"))
triu = defprim("triu", np.triu, "np.triu", "x, k=0", linear=("x",), batch=per_example,
               numba=NF.with_k("triu"),
               vjp={"x": "np.triu(g, k)"})
tril = defprim("tril", np.tril, "np.tril", "x, k=0", linear=("x",), batch=per_example,
               numba=NF.with_k("tril"),
               vjp={"x": "np.tril(g, k)"})
kron = defprim("kron", np.kron, "np.kron", "x, y", linear=("x", "y"), batch=per_example,
               vjp={"x": "rt.kron_vjp_left(g, x, y)", "y": "rt.kron_vjp_right(g, x, y)"},
               numba=NF.kron)
kron_vjp_left = defprim("kron_vjp_left", AA.kron_vjp_left, "rt.kron_vjp_left", "ct, x, y",
                        shape_args=("x",), linear=("ct", "y"), batch=per_example,
                        vjp={"ct": "np.kron(g, y)", "y": "rt.kron_vjp_right(ct, g, y)"},
                        numba=NF.kron_vjp(0))
kron_vjp_right = defprim("kron_vjp_right", AA.kron_vjp_right, "rt.kron_vjp_right", "ct, x, y",
                         shape_args=("y",), linear=("ct", "x"), batch=per_example,
                         vjp={"ct": "np.kron(x, g)", "x": "rt.kron_vjp_left(ct, x, g)"},
                         numba=NF.kron_vjp(1))
pad = defprim("pad", np.pad, "np.pad", "x, pad_width, mode='constant'", linear=("x",),
              batch=per_example, vjp={"x": "rt.pad_vjp(g, pad_width, np.ndim(x), mode)"},
              numba=NF.pad)
pad_vjp = defprim("pad_vjp", AA.pad_vjp, "rt.pad_vjp", "ct, pad_width, ndim, mode='constant'",
                  linear=("ct",), batch=per_example, vjp={"ct": "np.pad(g, pad_width, mode)"},
                  numba=NF.pad_vjp)
tensordot = defprim("tensordot", np.tensordot, "np.tensordot", "x, y, axes=2",
                    linear=("x", "y"), batch=per_example,
                    vjp={"x": "rt.tensordot_vjp(g, x, y, axes, 0)",
                         "y": "rt.tensordot_vjp(g, x, y, axes, 1)"}, numba=NF.tensordot)


def _which(eqn):
    return eqn.args["which"].value


def _tdv_vjp(arg):
    def rule(eqn, k):
        w = _which(eqn)
        if arg == "ct":
            return "np.tensordot(g, y, axes)" if w == 0 else "np.tensordot(x, g, axes)"
        if (arg == "x") == (w == 0):
            return "0"          # this operand only gives the cotangent's shape
        return "rt.tensordot_vjp(ct, g, y, axes, 1)" if w == 0 else \
            "rt.tensordot_vjp(ct, x, g, axes, 0)"
    return rule


def _tdv_jvp(arg):
    def rule(eqn, k):
        if (arg == "x") == (_which(eqn) == 0):
            return "0"
        return f"rt.tensordot_vjp(ct, {'x_dot' if arg == 'x' else 'x'}, " \
               f"{'y_dot' if arg == 'y' else 'y'}, axes, which)"
    return rule


tensordot_vjp = defprim("tensordot_vjp", AA.tensordot_vjp, "rt.tensordot_vjp",
                        "ct, x, y, axes, which", linear=("ct",), batch=per_example,
                        vjp={a: _tdv_vjp(a) for a in ("ct", "x", "y")},
                        jvp={"x": _tdv_jvp("x"), "y": _tdv_jvp("y")}, numba=NF.tensordot_vjp)

# ---- sorting: a data-dependent permutation (differentiable almost everywhere) -----------------
def _flat_if_axis_none(s, eqn):
    """The rank of a row that flattens x when axis is None (np.sort(x, axis=None)): 1."""
    axis = eqn.args.get("axis", Const(-1))
    return 1 if isinstance(axis, Const) and axis.value is None else s.r(eqn.args["x"])


sort = defprim("sort", np.sort, "np.sort", "x, axis=-1, kind=None",
               batch=axis_rule(["axis"], rank=_flat_if_axis_none),
               vjp={"x": "rt.put_along(g, x, rt.sort_perm(x, axis), axis)"},
               jvp={"x": "rt.take_along(x_dot, rt.sort_perm(x, axis), axis)"}, numba=NF.sort,
               array_result=True)
defprim("sort_perm", AA.sort_perm, "rt.sort_perm", "x, axis=-1", nondiff=True,
        batch=axis_rule(["axis"]), numba=NF.sort_perm)
take_along = defprim("take_along", [AA.take_along, np.take_along_axis], "rt.take_along",
                     "x, idx, axis=-1",
                     linear=("x",), batch=per_example,
                     vjp={"x": "rt.put_along(g, x, idx, axis)"}, numba=NF.take_along)
put_along = defprim("put_along", AA.put_along, "rt.put_along", "ct, like, idx, axis=-1",
                    shape_args=("like",), linear=("ct",), batch=per_example,
                    vjp={"ct": "rt.take_along(g, idx, axis)"}, numba=NF.put_along)

# ---- np.vander: columns x ** p; each derivative is a vander_slope of one order more --------------
_VANDER_VJP = "np.sum(g * rt.vander_slope(x, N, increasing, {k}), axis=1)"
_VANDER_JVP = "np.expand_dims(x_dot, 1) * rt.vander_slope(x, N, increasing, {k})"
vander = defprim("vander", np.vander, "np.vander", "x, N=None, increasing=False",
                 batch=per_example, vjp={"x": _VANDER_VJP.format(k=1)},
                 jvp={"x": _VANDER_JVP.format(k=1)}, array_result=True, fresh=True)
vander_slope = defprim("vander_slope", AA.vander_slope, "rt.vander_slope",
                       "x, N=None, increasing=False, order=1", batch=per_example,
                       vjp={"x": _VANDER_VJP.format(k="order + 1")},
                       jvp={"x": _VANDER_JVP.format(k="order + 1")})

# ---- cumulative product: d y_k / d x_i = prod_{l <= k, l != i} x_l (k >= i) ---------------------
# y_k / x_i is 0 / 0 where x_i = 0. With Q the cumulative product of x with its zeros read as 1,
# c the count of zeros so far, z x's zero entries (0, with their derivative) and cz their
# cumulative sum, the tangent of y_k is Q_k times
#   c = 0:  sum_i t_i / x_i
#   c = 1:  t_j + cz_k sum_{i != j} t_i / x_i              (j the zero: cz_k = x_j)
#   c = 2:  t_j1 x_j2 + t_j2 x_j1 = (t_j1 + t_j2) cz_k - (t_j1 x_j1 + t_j2 x_j2)
#   more:   0
# i.e. Q (a cumsum(t w) + b cumsum(t e) - (c == 2) cumsum(t z)) with w = 1 / x off the zeros, e
# the zeros' indicator; the reverse rule is its transpose. Each case is y's tangent as a
# function of x to first order, so second derivatives are exact where x has zeros too.
_NZ = "np.where(x == 0, 1, x)"
_CZ = "np.cumsum(x == 0, axis=axis)"
_Q = f"np.cumprod({_NZ}, axis=axis)"
_W = f"np.where(x == 0, 0, 1 / {_NZ})"
_E = "(x == 0)"
_Z = "np.where(x == 0, x, 0)"
_ZC = f"np.cumsum({_Z}, axis=axis)"
_A = f"(({_CZ} == 0) + ({_CZ} == 1) * {_ZC})"
_B = f"(({_CZ} == 1) + ({_CZ} == 2) * {_ZC})"
_C2 = f"({_CZ} == 2)"
_CUMPROD_VJP = (f"{_W} * rt.cumsum_vjp(g * {_Q} * {_A}, x, axis) + "
                f"{_E} * rt.cumsum_vjp(g * {_Q} * {_B}, x, axis) - "
                f"{_Z} * rt.cumsum_vjp(g * {_Q} * {_C2}, x, axis)")
_CUMPROD_JVP = (f"{_Q} * ({_A} * np.cumsum(x_dot * {_W}, axis=axis) + "
                f"{_B} * np.cumsum(x_dot * {_E}, axis=axis) - "
                f"{_C2} * np.cumsum(x_dot * {_Z}, axis=axis))")
cumprod = defprim("cumprod", np.cumprod, "np.cumprod", "x, axis=None, dtype=None, out=None",
                  batch=per_example, vjp={"x": _CUMPROD_VJP}, jvp={"x": _CUMPROD_JVP},
                  numba=NF.cumprod)

for _name, _prim in [("cumprod", cumprod), ("repeat", repeat),
                     ("conj", conj), ("conjugate", conj)]:
    if _prim is not None:
        defmethod(_name, _prim)

# ---- np.diff and its transpose -----------------------------------------------------------------
diff = defprim("diff", np.diff, "np.diff", "x, n=1, axis=-1", linear=("x",),
               batch=axis_rule(["axis"]), vjp={"x": "rt.diff_vjp(g, n, axis, x)"}, numba=NF.diff)
diff_vjp = defprim("diff_vjp", AA.diff_vjp, "rt.diff_vjp", "ct, n=1, axis=-1, like=None",
                   linear=("ct",), shape_args=("like",),
                   batch=axis_rule(["axis"], array_params=("ct", "like"),
                                   rank=lambda s, e: s.r(e.args["ct"])),
                   vjp={"ct": "np.diff(g, n, axis)"}, numba=NF.diff_vjp)
