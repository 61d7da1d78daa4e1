"""NumPy's integer (and float edge) semantics under jit: every elementwise row that takes
integers (and bools where NumPy takes them), over int8 ... uint32, mixed integer/float pairs,
Python-int constants and scalars, with negative values, zeros as divisors, INT_MIN / -1 and
shift counts past the width, compiled against plain NumPy: the same dtype, the same integers
and booleans exactly, floats exactly where NumPy's loop is exact arithmetic (+, //, %, fmod,
max, ...) and within a few ulp where it calls a libm function (sin, cbrt, arctan2, ...).

Numba's own forms got these wrong: np.fmod(-4, 3) was 2 (NumPy -1), INT_MIN % -1 killed the
process (SIGFPE), a shift by 64 or by -1 gave the unshifted value, `x ** -1` of an integer
array gave numbers (NumPy raises ValueError), np.sign of a large uint32 was 2**32 - 1,
np.fmax / np.fmin were np.maximum / np.minimum (NaN not ignored), `-inf // 2.0` was inf.
"""
import importlib
import os
import re
import sys
import tempfile
import warnings

import numpy as np
import pytest

from transpile import jit
from transpile.errors import TranspileWarning

pytestmark = pytest.mark.filterwarnings("error::transpile.TranspileWarning")

UNARY = [
    ("negative", "-x"), ("positive", "+x"), ("square", "np.square(x)"), ("sqrt", "np.sqrt(x)"),
    ("cbrt", "np.cbrt(x)"), ("reciprocal", "np.reciprocal(x)"), ("exp", "np.exp(x)"),
    ("exp2", "np.exp2(x)"), ("expm1", "np.expm1(x)"), ("log", "np.log(x)"),
    ("log2", "np.log2(x)"), ("log10", "np.log10(x)"), ("log1p", "np.log1p(x)"),
    ("sin", "np.sin(x)"), ("cos", "np.cos(x)"), ("tan", "np.tan(x)"),
    ("arcsin", "np.arcsin(x)"), ("arccos", "np.arccos(x)"), ("arctan", "np.arctan(x)"),
    ("sinh", "np.sinh(x)"), ("cosh", "np.cosh(x)"), ("tanh", "np.tanh(x)"),
    ("arcsinh", "np.arcsinh(x)"), ("arccosh", "np.arccosh(x)"), ("arctanh", "np.arctanh(x)"),
    ("absolute", "np.abs(x)"), ("abs", "abs(x)"), ("fabs", "np.fabs(x)"), ("sign", "np.sign(x)"),
    ("floor", "np.floor(x)"), ("ceil", "np.ceil(x)"), ("rint", "np.rint(x)"),
    ("trunc", "np.trunc(x)"), ("round", "np.round(x)"), ("round_1", "np.round(x, 1)"),
    ("round_m1", "np.round(x >> 2, -1)"), ("round_m1f", "np.round(x * 1.0, -1)"), ("isnan", "np.isnan(x)"), ("isinf", "np.isinf(x)"),
    ("isfinite", "np.isfinite(x)"), ("signbit", "np.signbit(x)"), ("invert", "~x"),
    ("logical_not", "np.logical_not(x)"), ("deg2rad", "np.deg2rad(x)"),
    ("rad2deg", "np.rad2deg(x)"), ("nan_to_num", "np.nan_to_num(x)"),
    ("clip", "np.clip(x, -3, 5)"), ("ldexp", "np.ldexp(1.5, x)"),
    ("heaviside", "np.heaviside(x, 0.5)"), ("sinc", "np.sinc(x)"),
    ("astype", "x.astype(np.float64)"), ("power_2", "x ** 2"), ("power_0", "x ** 0"),
    ("power_5", "np.power(x, 5)"),
]
BINARY = [
    ("add", "x + y"), ("subtract", "x - y"), ("multiply", "x * y"), ("divide", "x / y"),
    ("floor_divide", "x // y"), ("mod", "x % y"), ("remainder", "np.remainder(x, y)"),
    ("fmod", "np.fmod(x, y)"), ("maximum", "np.maximum(x, y)"),
    ("minimum", "np.minimum(x, y)"), ("fmax", "np.fmax(x, y)"), ("fmin", "np.fmin(x, y)"),
    ("arctan2", "np.arctan2(x, y)"), ("hypot", "np.hypot(x, y)"),
    ("logaddexp", "np.logaddexp(x, y)"), ("logaddexp2", "np.logaddexp2(x, y)"),
    ("copysign", "np.copysign(x, y)"), ("heaviside", "np.heaviside(x, y)"),
    ("greater", "x > y"), ("greater_equal", "x >= y"), ("less", "x < y"),
    ("less_equal", "x <= y"), ("equal", "x == y"), ("not_equal", "x != y"),
    ("logical_and", "np.logical_and(x, y)"), ("logical_or", "np.logical_or(x, y)"),
    ("logical_xor", "np.logical_xor(x, y)"), ("bitwise_and", "x & y"), ("bitwise_or", "x | y"),
    ("bitwise_xor", "x ^ y"), ("left_shift", "x << y"), ("right_shift", "x >> y"),
    ("where", "np.where(x > y, x, y)"), ("isclose", "np.isclose(x, y)"),
    ("power", "x ** (np.abs(y) % 5)"), ("clip", "np.clip(x, y, y + 3)"),
]
# NumPy's loop is plain arithmetic (no libm call): float results must match to the bit
EXACT = {"negative", "positive", "square", "sqrt", "reciprocal", "absolute", "abs", "fabs",
         "sign", "floor", "ceil", "rint", "trunc", "round", "round_1", "round_m1", "round_m1f",
         "isnan",
         "isinf", "isfinite", "signbit", "invert", "logical_not", "nan_to_num", "clip",
         "ldexp", "heaviside", "astype", "power_2", "power_0", "add", "subtract", "multiply",
         "divide", "floor_divide", "mod", "remainder", "fmod", "maximum", "minimum", "fmax",
         "fmin", "copysign", "where", "greater", "greater_equal", "less", "less_equal",
         "equal", "not_equal", "logical_and", "logical_or", "logical_xor", "bitwise_and",
         "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "isclose"}

# the sign of a zero result is NumPy's SIMD choice on ties (maximum(-0.0, 0.0)): not compared
ZERO_SIGN_FREE = {"maximum", "minimum", "fmax", "fmin", "clip", "where"}

INTS = ("int8", "int16", "int32", "int64", "uint8", "uint32")


def values(dtype, role):
    """Edge values of a dtype: INT_MIN, INT_MAX, around zero, the divisors 0 and -1, shift
    counts past the width; floats with infinities, NaN and signed zeros."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return np.array([False, True])
    if dt.kind == "f":
        return np.array([-np.inf, -7.5, -1.0, -0.0, 0.0, 0.1, 1.0, 3.0, 6.25, 1e4, np.inf,
                         np.nan], dt)
    info = np.iinfo(dt)
    vs = [info.min, info.min + 1, -7, -3, -1, 0, 1, 2, 6, 7, info.max - 1, info.max] \
        if role == "x" else [info.min, -3, -2, -1, 0, 1, 2, 3, 7, 8, 9, 64, 65, info.max]
    return np.array(sorted({v for v in vs if info.min <= v <= info.max}), dt)


def pairs(dx, dy):
    x, y = np.meshgrid(values(dx, "x"), values(dy, "y"), indexing="ij")
    return x.ravel(), y.ravel()


_DIR = tempfile.mkdtemp(prefix="transpile_intsem_")
_COUNT = [0]


def make(body_lines, params):
    """A function with real source (transpile reads it), in a module of its own."""
    _COUNT[0] += 1
    name = f"intsem_{os.getpid()}_{_COUNT[0]}"
    src = "import numpy as np\n\n\ndef f(%s):\n%s\n" % (
        params, "\n".join("    " + line for line in body_lines))
    with open(os.path.join(_DIR, name + ".py"), "w") as fh:
        fh.write(src)
    sys.path.insert(0, _DIR)
    try:
        return importlib.import_module(name).f
    finally:
        sys.path.remove(_DIR)


def numpy_rows(rows, env):
    """The rows NumPy evaluates for these operands (not a TypeError), with their results;
    rows whose result is float16 (int8 / uint8 operands of sin, sqrt, ...) apart."""
    out, half = [], []
    for name, expr in rows:
        try:
            with np.errstate(all="ignore"):
                r = eval(expr, {"np": np}, dict(env))
        except TypeError:
            continue            # NumPy has no loop for these dtypes (x & y of floats)
        (half if np.asarray(r).dtype == np.float16 else out).append((name, expr, r))
    return out, half


def check(name, got, want, where=""):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"{name}{where}: dtype {got.dtype}, NumPy {want.dtype}"
    assert got.shape == want.shape, f"{name}{where}: shape {got.shape}, NumPy {want.shape}"
    if want.dtype.kind in "fc" and name not in EXACT:
        ulp = np.finfo(want.dtype).eps
        with np.errstate(invalid="ignore"):
            ok = np.isclose(got, want, rtol=8 * ulp, atol=2 * ulp, equal_nan=True)
        bad = np.flatnonzero(~ok)
    else:
        same = (got == want) | ((got != got) & (want != want))
        if want.dtype.kind == "f" and name not in ZERO_SIGN_FREE:   # the sign of a zero too (-0.0 from fmod, copysign)
            same &= np.signbit(got) == np.signbit(want)
        bad = np.flatnonzero(~same)
    assert bad.size == 0, f"{name}{where}: {got.ravel()[bad[:5]]} where NumPy gives " \
                          f"{want.ravel()[bad[:5]]} (at flat positions {bad[:5]})"


def run_rows(rows, args, params):
    env = dict(zip([p.strip() for p in params.split(",")], args))
    kept, half = numpy_rows(rows, env)
    f = make(["return (" + ", ".join(e for _, e, _ in kept) + ",)"], params)
    j = jit(f, wait=True)
    got = j(*args)
    assert j.last_tier == "compiled"
    for (name, _, want), g in zip(kept, got):
        check(name, g, want)
    return [n for n, _, _ in half]


@pytest.mark.parametrize("dx,dy", [(d, d) for d in INTS + ("bool", "float32", "float64")] + [
    ("int8", "int64"), ("uint32", "int32"), ("uint8", "bool"), ("int16", "float32"),
    ("int32", "float32"), ("int64", "float64"), ("bool", "float64"), ("uint8", "int8")])
def test_binary_rows_match_numpy(dx, dy):
    x, y = pairs(dx, dy)
    half = run_rows(BINARY, (x, y), "x, y")
    if half:      # float16 results: no Numba float16, so NumPy runs them, with a warning
        f = make(["return (" + ", ".join(e for n, e in BINARY if n in half) + ",)"], "x, y")
        with pytest.warns(TranspileWarning, match="float16"):
            got = jit(f, wait=True)(x, y)
        with np.errstate(all="ignore"):
            want = f(x, y)
        for n, g, w in zip(half, got, want):
            check(n, g, w)


@pytest.mark.parametrize("dtype", INTS + ("bool", "float32", "float64"))
def test_unary_rows_match_numpy(dtype):
    x = values(dtype, "x")
    rows = UNARY
    if dtype == "bool":   # (NumPy's `b ** 2` squares a bool array: int8; np.power: int64)
        rows = [r for r in UNARY if r[0] not in ("power_2", "power_0")]
    run_rows(rows, (x,), "x")


@pytest.mark.parametrize("dtype", INTS)
def test_python_int_and_float_constants(dtype):
    """NumPy 2's weak Python scalars: the array's dtype for an int that fits it, float64 for
    a Python float with an integer array; divisors 0 and negative ones."""
    x = values(dtype, "x")
    rows = [("c_add", "x + 3"), ("c_sub", "5 - x"), ("c_mul", "x * 2"),
            ("c_floordiv", "x // 3"), ("c_floordiv_neg", "x // -2"), ("c_floordiv0", "x // 0"),
            ("c_rfloordiv", "-7 // x"), ("c_mod", "x % 3"), ("c_mod_neg", "x % -3"),
            ("c_mod0", "x % 0"), ("c_rmod", "7 % x"), ("c_fmod", "np.fmod(x, 3)"),
            ("c_fmod_neg", "np.fmod(x, -3)"), ("c_fmod0", "np.fmod(x, 0)"),
            ("c_div", "x / 2"), ("c_div0", "x / 0"), ("c_fmul", "x * 2.5"),
            ("c_fadd", "x + 0.5"), ("c_pow", "x ** 3"), ("c_shl", "x << 3"),
            ("c_shr", "x >> 1"), ("c_and", "x & 5"), ("c_max", "np.maximum(x, 2)"),
            ("c_cmp", "x > 2"), ("c_where", "np.where(x > 0, x, 0)")]
    rows = [(n.replace("c_", ""), e) for n, e in rows if not (
        np.dtype(dtype).kind == "u" and any(s in e for s in ("-2", "-3", "-7")))]
    run_rows(rows, (x,), "x")


@pytest.mark.parametrize("dx,dy", [("int8", "int8"), ("int64", "int64"), ("uint32", "uint32"),
                                   ("int32", "float32"), ("float64", "float64")])
def test_scalar_operands_match_numpy(dx, dy):
    """0-d values (x[i], y[i]: NumPy scalars) take the scalar path of the lowering."""
    x, y = pairs(dx, dy)
    env = {"x": x[0], "y": y[0]}
    kept, _ = numpy_rows(BINARY, env)
    f = make(["a, b = x[i], y[i]"] + ["return (" + ", ".join(
        re.sub(r"\by\b", "b", re.sub(r"\bx\b", "a", e)) for _, e, _ in kept) + ",)"],
        "x, y, i")
    j = jit(f, wait=True)
    for i in range(x.size):
        with np.errstate(all="ignore"):
            want = f(x, y, i)
        got = j(x, y, i)
        assert j.last_tier == "compiled"
        for (name, _, _), g, w in zip(kept, got, want):
            check(name, g, w, f" at x={x[i]!r}, y={y[i]!r}")


def test_fmod_of_negative_integers():
    """The lead's probe: Numba's np.fmod gave [0 1 2 0 0 1 2 0]."""
    f = make(["return np.fmod(x, 3), np.fmod(x, -3), x % 3, x // 3"], "x")
    x = np.arange(-4, 4)
    j = jit(f, wait=True)
    got = j(x)
    assert j.last_tier == "compiled"
    np.testing.assert_array_equal(got[0], [-1, 0, -2, -1, 0, 1, 2, 0])
    for g, w in zip(got, f(x)):
        check("fmod", g, w)


@pytest.mark.parametrize("expr", ["x ** -1", "x ** -2", "np.power(x, k)", "x ** y",
                                  "np.reciprocal(x) + x ** -1"])
@pytest.mark.parametrize("dtype", ["int8", "int64", "uint32", "bool"])
def test_integers_to_negative_powers_raise_as_in_numpy(expr, dtype):
    if dtype == "uint32" and "y" in expr:
        pytest.skip("no negative uint32 exponent")
    f = make([f"return {expr}"], "x, y, k")
    x = np.array([1, 2, 3], dtype)
    y = np.array([2, -1, 0], "int64")
    with pytest.raises((ValueError, OverflowError)) as numpy_error:
        f(x, y, -1)
    if numpy_error.type is OverflowError:
        # uint32 ** -1: NumPy refuses the Python int -1 for uint32, and so does jit (a
        # constant -1 runs NumPy, with a warning: the stand-ins raise while generating code)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TranspileWarning)
            with pytest.raises(OverflowError, match="out of bounds for uint32"):
                jit(f, wait=True)(x, y, -1)
        return
    with pytest.raises(ValueError, match="Integers to negative integer powers are not "
                                         "allowed"):
        jit(f, wait=True)(x, y, -1)


def test_negative_powers_of_floats_and_empty_integer_arrays():
    f = make(["return x ** -1, x ** -2, x ** k"], "x, k")
    for x in (np.array([1.0, 2.0, 4.0]), np.array([1.0, 2.0], np.float32),
              np.zeros(0, np.int64)):
        j = jit(f, wait=True)
        got = j(x, -1)
        assert j.last_tier == "compiled"
        for n, g, w in zip(("power_m1", "power_m2", "power_k"), got, f(x, -1)):
            check(n, g, w)


def test_large_integer_power_in_a_parallel_loop_raises():
    """A prange loop (large arrays) raises from the compiled code as well."""
    f = make(["return x ** k"], "x, k")
    x = np.arange(1, 300_001)
    j = jit(f, wait=True)
    np.testing.assert_array_equal(j(x, 2), x ** 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")        # Numba: a loop that raises is not parallel
        with pytest.raises(ValueError, match="negative integer powers"):
            j(x, -1)


@pytest.mark.parametrize("dtype", ["float16"])
def test_float16_runs_numpy_with_a_warning(dtype):
    """Numba has no float16: the function runs NumPy (float16 kept), with a warning."""
    f = make(["y = x * 2 + 1", "return np.sqrt(y), y.dtype == np.float16"], "x")
    x = np.array([0.5, 1.0, 3.25], dtype)
    with pytest.warns(TranspileWarning, match="float16"):
        got = jit(f, wait=True)(x)
    want = f(x)
    assert got[0].dtype == np.float16
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1]


def test_float32_stays_float32():
    f = make(["return x * 2.5 + 1, x // 0.5, x % 0.3, np.round(x, 2), np.fmax(x, 0.25)"], "x")
    x = np.array([0.1, -1.7, 2.25, np.nan], np.float32)
    j = jit(f, wait=True)
    got = j(x)
    assert j.last_tier == "compiled"
    for n, g, w in zip(("mul", "floor_divide", "mod", "round", "fmax"), got, f(x)):
        check(n, g, w)


# ---- Python scalars: Python's semantics, not NumPy's ------------------------------------------


@pytest.mark.parametrize("expr,args,error", [
    ("a // b", (7, 0), ZeroDivisionError), ("a % b", (-7, 0), ZeroDivisionError),
    ("a / b", (1.0, 0.0), ZeroDivisionError), ("a / b", (3, 0), ZeroDivisionError),
    ("a // b", (1.5, 0.0), ZeroDivisionError), ("a % b", (2.5, 0.0), ZeroDivisionError),
    ("a ** b", (0.0, -1.0), ZeroDivisionError)])
def test_python_scalars_raise_where_python_raises(expr, args, error):
    """7 // 0 of Python ints raises in Python (NumPy's int64 gives 0 with a warning)."""
    f = make([f"return {expr}"], "a, b")
    with pytest.raises(error):
        f(*args)
    with pytest.raises(error):
        jit(f, wait=True)(*args)


def test_python_scalars_compute_as_python_elsewhere():
    f = make(["acc = 1", "for i in range(n):", "    acc = (acc * 31 + i) % m",
              "return acc, a // b, a % b, -a // b, a / b, a ** 3, a ** b, c // d, c % d"],
             "n, m, a, b, c, d")
    args = (40, 1000003, 7, 3, -7.5, 2.0)
    j = jit(f, wait=True)
    got = j(*args)
    assert j.last_tier == "compiled"
    want = f(*args)
    assert got == want and [type(g) for g in got] == [type(w) for w in want]


def test_a_python_int_to_a_negative_power_raises_under_jit():
    """Python gives the float 0.5 for 2 ** -1: compiled code holding an int cannot, and says
    so (the NumPy tier gives Python's 0.5)."""
    f = make(["return a ** b"], "a, b")
    assert f(2, -1) == 0.5
    with pytest.raises(ValueError, match="negative int power"):
        jit(f, wait=True)(2, -1)
    assert jit(f, wait=True)(2, 5) == 32


@pytest.mark.parametrize("dtype,k", [("int8", 300), ("uint8", -1), ("int16", -40000),
                                     ("uint32", 2 ** 32)])
def test_python_int_out_of_the_arrays_range_raises(dtype, k):
    """NumPy 2: a Python int that does not fit the integer array's dtype raises
    OverflowError (compiled code wrapped it: int8 + 300 gave 44, ...)."""
    f = make(["return x + k, x[0] * k"], "x, k")
    x = np.arange(3, dtype=dtype)
    with pytest.raises(OverflowError, match="out of bounds"):
        f(x, k)
    with pytest.raises(OverflowError, match="out of bounds"):
        jit(f, wait=True)(x, k)
    small = 3
    got, want = jit(f, wait=True)(x, small), f(x, small)
    check("add", got[0], want[0])
    check("multiply", got[1], want[1])
    assert jit(make(["return x == k"], "x, k"), wait=True)(x, k).tolist() == [False] * 3


def test_uint64_with_python_ints_keeps_every_bit():
    """NumPy 2 computes `u // 3` and `u % n` (n a Python int) in uint64; the compiled forms
    went through float64 (int64 with uint64) and lost the low bits: 2**64 - 1 // 3 gave
    6148914691236516864, % 10 gave 6 (hunt: a hash function on uint64 words)."""
    f = make(["s = x[0] // 3, x[0] % 10, x[1] // n, x[1] % n, np.fmod(x[0], 7)",
              "return s, x // 3, x % n, x >> 3",
              ], "x, n")
    x = np.array([2 ** 64 - 1, 2 ** 63 + 12345, 2 ** 53 + 1], dtype=np.uint64)
    j = jit(f, wait=True)
    got, want = j(x, 1000003), f(x, 1000003)
    assert j.last_tier == "compiled"
    for g, w in zip(got[0] + got[1:], want[0] + want[1:]):
        check("uint64", g, w)
    # a length known only at run time (a loop over a slice whose end is an argument)
    g2 = make(["out = np.zeros(k, dtype=np.uint64)",
               "for i in range(k):",
               "    out[i] = x[i] // n + x[i] % 10",
               "return out, x[:k] // n"], "x, n, k")
    got, want = jit(g2, wait=True)(x, 7, 3), g2(x, 7, 3)
    check("uint64", got[0], want[0])
    check("uint64", got[1], want[1])


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "uint32", "bool"])
def test_builtin_sum_of_an_integer_array_adds_as_python_does(dtype):
    """Python's sum(x) adds the elements to the int 0 one by one: the total keeps (and wraps
    in) the array's dtype, where np.sum widens to int64 (jit gave np.int64(300) for two
    uint8s, 200 + 100; Python np.uint8(44)); a float start gives a float total."""
    f = make(["return sum(x), sum(x, 5), sum(x, 0.0), sum(m), sum(x[:2])"], "x, m")
    x = np.array([100, 127, 90, 2], dtype=dtype) if dtype != "bool" else np.ones(4, bool)
    m = np.stack([x, x[::-1], x])
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = f(x, m)
        got = jit(f, wait=True)(x, m)
        tier = jit(f)(x, m)             # the NumPy tier of a first call
    for g, t, w in zip(got, tier, want):
        check("sum", g, w)
        check("sum", t, w)
