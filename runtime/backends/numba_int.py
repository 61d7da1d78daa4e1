"""NumPy's arithmetic at the edges, for the scalar forms of jit's Numba loops.

Numba's own scalar forms differ from NumPy's ufunc loops where it matters most: on integers
`np.fmod(-4, 3)` gives 2 (NumPy -1), `INT_MIN % -1` and `INT_MIN // -1` trap (SIGFPE: the
process dies), a shift by the width or more (or by a negative count) is whatever the CPU
does, `x ** -1` gives numbers where NumPy raises, `np.sign` of a large unsigned value is
wrong; on floats `-inf // 2.0` is inf (NumPy nan). Each function here is NumPy's loop for one
ufunc, written for Numba by the operands' types (`numba.extending.overload`):

    integers (and bools)   computed in int64 (uint64 when both operands are unsigned); the loop
                           casts the result to the result dtype, which wraps as NumPy's
                           narrower loops do. Division and remainder by 0 give 0 (NumPy warns),
                           INT_MIN // -1 gives INT_MIN, INT_MIN % -1 gives 0.
    floats                 NumPy's npy_divmod (float32 operands in float32), as NumPy computes.

The rows of transpile/primitives/numpy/ name them in their `lower` templates; the Python
functions are the reference (what NumPy gives) and run where Numba is not involved.
"""
import numpy as np
from numba import types
from numba.extending import overload

__all__ = ["np_floor_divide", "np_mod", "np_fmod", "np_left_shift", "np_right_shift",
           "np_power", "negative_power_base", "np_sign", "np_reciprocal", "as_inexact",
           "np_rint_keep_int", "np_round_up", "np_round_down",
           "nan_to_num_scalar", "float_max_of", "float_min_of",
           "ldexp_exponent", "py_floor_divide", "py_mod", "py_divide", "py_power"]

NEGATIVE_POWER = "Integers to negative integer powers are not allowed."


# ---- the reference (NumPy itself); Numba compiles the overloads below ----------------------

def np_floor_divide(x, y):
    return np.floor_divide(x, y)


def np_mod(x, y):
    return np.mod(x, y)


def np_fmod(x, y):
    return np.fmod(x, y)


def np_left_shift(x, y):
    return np.left_shift(x, y)


def np_right_shift(x, y):
    return np.right_shift(x, y)


def np_power(x, y):
    return np.power(x, y)


def negative_power_base(x):
    """x, the base of a power with a negative integer constant exponent: NumPy raises
    ValueError for an integer base."""
    if isinstance(x, (int, np.integer, bool, np.bool_)) or (
            isinstance(x, np.ndarray) and x.dtype.kind in "biu" and x.size):
        raise ValueError(NEGATIVE_POWER)
    return x


def np_sign(x):
    return np.sign(x)


def np_reciprocal(x):
    return np.reciprocal(x)


def as_inexact(x):
    """x as NumPy's isclose reads it: integers and bools as float64, floats as they are."""
    return x if isinstance(x, (float, np.inexact)) else np.float64(x)


def np_rint_keep_int(x):
    """np.round(x): an integer (or bool) as it is, a float to the nearest even integer."""
    return np.round(x)


def np_round_up(x, scale):
    """np.round(x, d) for d > 0, scale = 10**d: integers are kept."""
    return np.round(x, int(round(np.log10(scale))))


def np_round_down(x, scale):
    """np.round(x, d) for d < 0, scale = 10**-d: integers are rounded in float64 (the loop
    converts back, as NumPy does)."""
    return np.round(x, -int(round(np.log10(scale))))


def nan_to_num_scalar(x, nan, posinf, neginf):
    return np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)


def float_max_of(x):
    """The largest finite value of x's float dtype (np.nan_to_num's default for inf)."""
    return np.finfo(np.asarray(x).dtype).max


def float_min_of(x):
    return np.finfo(np.asarray(x).dtype).min


def ldexp_exponent(y):
    """An exponent of np.ldexp clamped to a range where the result is already 0 or inf (Numba
    passes a C int: a larger int64 exponent would wrap)."""
    return max(min(y, 4200), -4200)


# ---- typing helpers --------------------------------------------------------------------------

def _is_int(t):
    return isinstance(t, (types.Integer, types.Boolean))


def _unsigned(t):
    return isinstance(t, types.Integer) and not t.signed


def _int_kind(x, y):
    """The integer type both operands are computed in: np.uint64 when both are unsigned (or
    bools), else np.int64; None when either is not an integer (or uint64 meets a signed
    integer: NumPy computes that in float64)."""
    if not (_is_int(x) and _is_int(y)):
        return None
    unsigned = [_unsigned(t) or isinstance(t, types.Boolean) for t in (x, y)]
    if all(unsigned):
        return np.uint64
    wide = [isinstance(t, types.Integer) and not t.signed and t.bitwidth == 64 for t in (x, y)]
    return None if any(wide) else np.int64


def _float_kind(x, y):
    """float32 when both operands are float32 (or one is and the other a small integer, as
    the loops pass them), else float64."""
    f32 = [t == types.float32 for t in (x, y)]
    return np.float32 if all(f32) else np.float64


# ---- integer division and remainder -----------------------------------------------------------

@overload(np_floor_divide, inline="always")
def _floor_divide(x, y):
    c = _int_kind(x, y)
    if c is not None:
        signed = c is np.int64

        def impl(x, y):
            a, b = c(x), c(y)
            if b == 0:
                return c(0)
            if signed and b == c(-1):
                return c(0) - a            # wraps: INT_MIN // -1 is INT_MIN
            return a // b
        return impl
    f = _float_kind(x, y)

    def impl_float(x, y):
        a, b = f(x), f(y)
        if b == 0:
            return a / b
        return _divmod_float(a, b)[0]
    return impl_float


@overload(np_mod, inline="always")
def _mod(x, y):
    c = _int_kind(x, y)
    if c is not None:
        signed = c is np.int64

        def impl(x, y):
            a, b = c(x), c(y)
            if b == 0 or (signed and b == c(-1)):
                return c(0)
            return a % b
        return impl
    f = _float_kind(x, y)

    def impl_float(x, y):
        a, b = f(x), f(y)
        if b == 0:
            return np.fmod(a, b)
        return _divmod_float(a, b)[1]
    return impl_float


@overload(np_fmod, inline="always")
def _fmod(x, y):
    c = _int_kind(x, y)
    if c is not None:
        signed = c is np.int64

        def impl(x, y):
            a, b = c(x), c(y)
            if b == 0 or (signed and b == c(-1)):
                return c(0)
            r = a % b                      # floor remainder (the sign of b) ...
            if signed and r != 0 and (r < 0) != (a < 0):
                r = r - b                  # ... moved to the sign of a (truncated division)
            return r
        return impl
    f = _float_kind(x, y)

    def impl_float(x, y):
        return np.fmod(f(x), f(y))
    return impl_float


def _divmod_float(a, b):
    """NumPy's npy_divmod for b != 0: (floor quotient, remainder with the sign of b)."""
    return a, b


@overload(_divmod_float, inline="always")
def _divmod_float_impl(a, b):
    def impl(a, b):
        mod = np.fmod(a, b)
        div = (a - mod) / b
        if mod != 0 or mod != mod:
            if (b < 0) != (mod < 0):
                mod = mod + b
                div = div - 1
        else:
            mod = np.copysign(mod - mod, b)
        if div != 0 or div != div:
            floordiv = np.floor(div)
            if div - floordiv > 0.5:
                floordiv = floordiv + 1
        else:
            floordiv = np.copysign(div - div, a / b)
        return floordiv, mod
    return impl


# ---- shifts: a count below 0 or of the width or more shifts every bit out -------------------

@overload(np_left_shift, inline="always")
def _left_shift(x, y):
    c = _int_kind(x, y)
    if c is None:
        return None

    def impl(x, y):
        a, b = c(x), c(y)
        if b < 0 or b >= 64:
            return c(0)
        return a << b
    return impl


@overload(np_right_shift, inline="always")
def _right_shift(x, y):
    c = _int_kind(x, y)
    if c is None:
        return None

    def impl(x, y):
        a, b = c(x), c(y)
        if b < 0 or b >= 64:
            return c(-1) if a < 0 else c(0)
        return a >> b
    return impl


# ---- powers --------------------------------------------------------------------------------------

@overload(np_power, inline="always")
def _power(x, y):
    c = _int_kind(x, y)
    if c is not None:
        def impl(x, y):
            a, b = c(x), c(y)
            if b < 0:
                raise ValueError(NEGATIVE_POWER)
            r = c(1)
            while b > 0:                   # (wraps as NumPy's integer loop does)
                if b & 1:
                    r = r * a
                a = a * a
                b = b >> 1
            return r
        return impl

    def impl_float(x, y):
        return x ** y
    return impl_float


@overload(negative_power_base, inline="always")
def _negative_power_base(x):
    if _is_int(x):
        def impl(x):
            if x == x:          # (always: a branch, so that the function has a return type)
                raise ValueError(NEGATIVE_POWER)
            return x
        return impl
    return lambda x: x


# ---- sign, reciprocal, isclose's operands ---------------------------------------------------------

@overload(np_sign, inline="always")
def _sign(x):
    if _unsigned(x) or isinstance(x, types.Boolean):
        return lambda x: 1 if x else 0
    # (np.sign(-0.0) is 0.0 in NumPy, -0.0 in Numba)
    return lambda x: np.sign(x) if x != 0 else x - x


@overload(np_reciprocal, inline="always")
def _reciprocal(x):
    if isinstance(x, types.Boolean):
        return lambda x: np.int64(1) if x else np.int64(0)
    if isinstance(x, types.Integer):
        # NumPy computes 1.0 / x in double and converts: 1 / 0 is inf, which becomes INT_MIN
        # for 32- and 64-bit signed results and 0 for the others
        at_zero = int(np.iinfo(np.dtype(f"int{x.bitwidth}")).min) \
            if x.signed and x.bitwidth >= 32 else 0
        signed = x.signed

        def impl(x):
            if x == 0:
                return np.int64(at_zero)
            if x == 1:
                return np.int64(1)
            if signed and x == -1:
                return np.int64(-1)
            return np.int64(0)
        return impl
    f = np.float32 if x == types.float32 else np.float64
    return lambda x: f(1) / x


@overload(as_inexact, inline="always")
def _as_inexact(x):
    if isinstance(x, types.Float):
        return lambda x: x
    return lambda x: np.float64(x)


# ---- np.round, np.nan_to_num, np.ldexp's exponent ---------------------------------------------------

@overload(np_rint_keep_int, inline="always")
def _rint_keep_int(x):
    if _is_int(x):
        return lambda x: x
    return lambda x: np.rint(x)


# In the float's own dtype, as NumPy rounds (a float32 2.675 to 2 decimals is 2.68; in float64
# it would be 2.67). Compiled without fastmath and not inlined: a fused loop's fastmath would
# turn the division into a product with the reciprocal (float32 1e6 + 0.555 to 3 decimals
# came out one unit off); instruction flags stay with the instructions when LLVM inlines it.
@overload(np_round_up, jit_options={"fastmath": False})
def _round_up(x, scale):
    if _is_int(x):
        return lambda x, scale: x
    f = np.float32 if x == types.float32 else np.float64

    def impl(x, scale):
        s = f(scale)
        return np.rint(x * s) / s
    return impl


@overload(np_round_down, jit_options={"fastmath": False})
def _round_down(x, scale):
    if _is_int(x):
        return lambda x, scale: np.rint(np.float64(x) / scale) * scale
    f = np.float32 if x == types.float32 else np.float64

    def impl(x, scale):
        s = f(scale)
        return np.rint(x / s) * s
    return impl


@overload(nan_to_num_scalar, inline="always")
def _nan_to_num(x, nan, posinf, neginf):
    if not isinstance(x, types.Float):
        return lambda x, nan, posinf, neginf: x      # an integer is never nan or inf
    f = np.float32 if x == types.float32 else np.float64

    def impl(x, nan, posinf, neginf):
        if x != x:
            return f(nan)
        if x == np.inf:
            return f(posinf)
        if x == -np.inf:
            return f(neginf)
        return x
    return impl


@overload(float_max_of, inline="always")
def _float_max_of(x):
    if not isinstance(x, types.Float):
        return lambda x: 0.0
    big = float(np.finfo(np.float32 if x == types.float32 else np.float64).max)
    return lambda x: big


@overload(float_min_of, inline="always")
def _float_min_of(x):
    if not isinstance(x, types.Float):
        return lambda x: 0.0
    small = float(np.finfo(np.float32 if x == types.float32 else np.float64).min)
    return lambda x: small


@overload(ldexp_exponent, inline="always")
def _ldexp_exponent(y):
    return lambda y: np.int32(max(min(np.int64(y), 4200), -4200))


# ---- Python scalars (both operands Python ints or floats): Python's errors -------------------
#
# NumPy gives 0 (or inf) with a warning where Python raises; transformed code holding Python
# scalars follows Python. A Python int is an int64 here: where Python's result would be a float
# (2 ** -1), compiled code cannot give it, and raises instead.

PY_NEGATIVE_POWER = ("a Python int to a negative int power is a float in Python (2 ** -1 is "
                     "0.5), which compiled code cannot give for an int: write float(a) ** b")


def py_floor_divide(x, y):
    return x // y


def py_mod(x, y):
    return x % y


def py_divide(x, y):
    return x / y


def py_power(x, y):
    return x ** y


@overload(py_floor_divide, inline="always")
def _py_floor_divide(x, y):
    if _is_int(x) and _is_int(y):
        def impl(x, y):
            if y == 0:
                raise ZeroDivisionError("integer division or modulo by zero")
            return np_floor_divide(x, y)
        return impl

    def impl_float(x, y):
        if y == 0:
            raise ZeroDivisionError("float floor division by zero")
        return np_floor_divide(x, y)
    return impl_float


@overload(py_mod, inline="always")
def _py_mod(x, y):
    if _is_int(x) and _is_int(y):
        def impl(x, y):
            if y == 0:
                raise ZeroDivisionError("integer modulo by zero")
            return np_mod(x, y)
        return impl

    def impl_float(x, y):
        if y == 0:
            raise ZeroDivisionError("float modulo by zero")
        return np_mod(x, y)
    return impl_float


@overload(py_divide, inline="always")
def _py_divide(x, y):
    message = "division by zero" if _is_int(x) and _is_int(y) else "float division by zero"

    def impl(x, y):
        if y == 0:
            raise ZeroDivisionError(message)
        return x / y
    return impl


@overload(py_power, inline="always")
def _py_power(x, y):
    if _is_int(x) and _is_int(y):
        def impl(x, y):
            if y < 0:
                raise ValueError(PY_NEGATIVE_POWER)
            return np_power(x, y)
        return impl

    if isinstance(x, types.Complex) or isinstance(y, types.Complex):
        def impl_complex(x, y):     # (complex numbers have no order: no zero-power check)
            return x ** y
        return impl_complex

    def impl_float(x, y):
        if x == 0 and y < 0:
            raise ZeroDivisionError("0.0 cannot be raised to a negative power")
        return x ** y
    return impl_float
