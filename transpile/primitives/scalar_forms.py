"""Scalar forms of rows for the backends that fuse elementwise chains into loops: the values
of the `lower=`, `cuda_c=` and `numba_cuda=` fields (registry.py documents them).

    Numba CPU (lower)     a template: {x}, {y}, ... are the operands, T(...) a constant in the
                          result dtype; or eqn -> template, None for arguments it cannot take
    CUDA C (cuda_c)       (a, m, eqn) -> C expression: a[arg] is an operand already in the
                          compute dtype (a['one'], a['half'], a['zero'] constants of it),
                          m('exp') the math function for that dtype (expf for float32)
    numba.cuda            (a, eqn) -> Python expression, `a` as for CUDA C
    (numba_cuda)

The CUDA C helpers tp_maximum, tp_sign, ... are defined in the kernel preamble
(transpile/lowering/gpu/cuda_c.py PREAMBLE), the numba.cuda ones in numba_cuda.HELPERS.
"""
import numpy as np

from transpile.core.ir import Const

# ---- Numba CPU ------------------------------------------------------------------------------


def power_form(y):
    """Scalar form of x ** y for a constant exponent (multiplications where exact). A negative
    integer exponent raises ValueError for an integer base, as NumPy does
    (runtime/backends/numba_int.py: negative_power_base); any other exponent of an integer
    base is NumPy's integer loop (np_power: a negative one raises there)."""
    forms = {0: "T(1)", 1: "{x}", 2: "({x} * {x})", 3: "({x} * {x} * {x})", 4: "(({x} * {x}) * ({x} * {x}))",
             -1: "(T(1) / {x})", -2: "(T(1) / ({x} * {x}))", 0.5: "np.sqrt({x})"}
    if isinstance(y, (int, float, np.integer, np.floating)) and not isinstance(y, bool) \
            and y in forms:
        form = forms[y]
        if y < 0 and isinstance(y, (int, np.integer)):
            form = form.replace("{x}", "negative_power_base({x})")
        return form
    return "np_power({x}, {y})"


def power(eqn):
    y = eqn.args.get("y")
    return power_form(y.value) if isinstance(y, Const) else "np_power({x}, {y})"


def _given(eqn, name):
    a = eqn.args.get(name, Const(None))
    return not (isinstance(a, Const) and a.value is None)


def clip(eqn):
    t = "{x}"
    if _given(eqn, "a_min"):
        t = "np.maximum(%s, {a_min})" % t
    if _given(eqn, "a_max"):
        t = "np.minimum(%s, {a_max})" % t
    return t


def clip_mask(eqn):
    conds = []
    if not (isinstance(eqn.args.get("lo"), Const) and eqn.args["lo"].value is None):
        conds.append("{x} >= {lo}")
    if not (isinstance(eqn.args.get("hi"), Const) and eqn.args["hi"].value is None):
        conds.append("{x} <= {hi}")
    return "(T(1) if (%s) else T(0))" % (" and ".join(conds) or "True")


def round_(eqn):
    """NumPy's rounding, for a constant d: rint(x * 10**d) / 10**d in x's float dtype; an
    integer is kept for d >= 0 and rounded in float64 for d < 0
    (runtime/backends/numba_int.py)."""
    d = eqn.args.get("decimals", Const(0))
    if not isinstance(d, Const):
        return None
    d = int(d.value)
    if d == 0:
        return "np_rint_keep_int({x})"
    scale = repr(10.0 ** abs(d))
    return f"np_round_up({{x}}, {scale})" if d > 0 else f"np_round_down({{x}}, {scale})"


def np_fn(name):
    """np.<name>({x})"""
    return "np.%s({x})" % name


# ---- CUDA C ---------------------------------------------------------------------------------


def c_fn(name, *args):
    """m(name)(x) (or of `args`): the math function of the compute dtype (expf for float32)."""
    args = args or ("x",)
    return lambda a, m, e: f"{m(name)}({', '.join(a[k] for k in args)})"


def c_helper(name, *args):
    """A preamble helper over the operands: tp_sign(x), tp_maximum(x, y)."""
    args = args or ("x",)
    return lambda a, m, e: f"{name}({', '.join(a[k] for k in args)})"


def c_text(template):
    """A C expression over the operands: c_text('{x} + {y}'), c_text('{one} / {x}')."""
    return lambda a, m, e: template.format(**a)


def c_float_fn(name, other):
    """m(name)(x) for float operands; the template `other` for integers and bools."""
    return lambda a, m, e: f"{m(name)}({a['x']})" if m.float else other.format(**a)


def c_float_text(template, other):
    """The template `template` for float operands, `other` for integers and bools."""
    return lambda a, m, e: (template if m.float else other).format(**a)


def c_pow(a, m, eqn):
    y = eqn.args.get("y")
    if isinstance(y, Const) and isinstance(y.value, (int, float, np.generic)):
        v = float(y.value)
        if v == 2:
            return f"{a['x']} * {a['x']}"
        if v == 1:
            return a["x"]
        if v == 0.5:
            return f"{m('sqrt')}({a['x']})"
        if v == -1:
            return f"{a['one']} / {a['x']}"
        if v == 3:
            return f"{a['x']} * {a['x']} * {a['x']}"
    return f"{m('pow')}({a['x']}, {a['y']})"


def c_round(a, m, eqn):
    """np.round(x, decimals): rint(x * 10**d) / 10**d, as NumPy computes it."""
    if not m.float:
        return a["x"]
    d = eqn.args.get("decimals", Const(0))
    d = int(d.value) if isinstance(d, Const) else None
    if d is None:
        return f"{m('rint')}({a['x']} * {m('pow')}(10.0, {a['decimals']})) / " \
               f"{m('pow')}(10.0, {a['decimals']})"
    if d == 0:
        return f"{m('rint')}({a['x']})"
    scale = repr(10.0 ** abs(d))
    if d > 0:
        return f"{m('rint')}({a['x']} * {scale}) / {scale}"
    return f"{m('rint')}({a['x']} / {scale}) * {scale}"


def c_clip(a, m, eqn):
    x = a["x"]
    if a.get("a_min") is not None:
        x = f"tp_maximum({x}, {a['a_min']})"
    if a.get("a_max") is not None:
        x = f"tp_minimum({x}, {a['a_max']})"
    return x


# ---- numba.cuda ------------------------------------------------------------------------------


def py_fn(name, *args):
    """math.<name>(x) (or of `args`)."""
    args = args or ("x",)
    return lambda a, e: f"math.{name}({', '.join(a[k] for k in args)})"


def py_helper(name, *args):
    """A device helper of numba_cuda.HELPERS over the operands: tp_sign(x), tp_maximum(x, y)."""
    args = args or ("x",)
    return lambda a, e: f"{name}({', '.join(a[k] for k in args)})"


def py_text(template):
    """A Python expression over the operands: py_text('{x} if {condition} else {y}')."""
    return lambda a, e: template.format(**a)


def py_round_int(template):
    """math.floor and friends give an int64 in numba.cuda (NaN and inf would become garbage):
    only values below 2**52 are rounded, every float from there on (and NaN, inf) is already
    integral and stays as it is."""
    return lambda a, e: f"({a['x']} if not abs({a['x']}) < 4503599627370496.0 else " \
        f"{template.format(**a)})"


def py_pow(a, e):
    y = e.args.get("y")
    if isinstance(y, Const) and isinstance(y.value, (int, float, np.generic)):
        v = float(y.value)
        if v == 2:
            return f"{a['x']} * {a['x']}"
        if v == 0.5:
            return f"math.sqrt({a['x']})"
    return f"{a['x']} ** {a['y']}"
