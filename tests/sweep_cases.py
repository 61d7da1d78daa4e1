"""The case table of the primitive sweep (tests/test_primitive_sweep.py).

A case is a NumPy expression over parameters x, y, ... with the inputs to call it on:

    case("sin", "np.sin(x)", [(3,)])                         # one row, one shape
    case("add", "x + y", [(2, 3), (3,)])                     # broadcasting pair
    case("sum", "np.sum(x, axis=1, keepdims=True)", [(2, 3)])

Options: domain= ("real", "pos", "unit" (-1, 1), "prob" (0, 1), "gt1", "distinct" (well
separated values)), dtypes= (float64 always; "float32" and
"complex128" where meaningful), skip= {mode: reason} for a mode that is meaningless for this
case. Other modules register more cases with the same `case` function: every module named
tests/sweep_cases_*.py is imported by the sweep (e.g. sweep_cases_scipy.py).

EXEMPT lists the rows of the table that have no case, each with its reason; JIT_FALLBACK
lists rows that have no Numba lowering yet (jit runs their NumPy code and warns; the sweep
checks that it warns, so a row leaves the list once it gains a lowering).
"""
import importlib
import os
import sys
import tempfile

CASES = []          # Case objects, in registration order
MODES = ("grad", "jvp", "second", "vmap", "jit")


class Case:
    def __init__(self, prim, expr, shapes, domain, dtypes, skip, ints, tol, jit_always=False):
        self.prim, self.expr, self.shapes = prim, expr, [tuple(s) for s in shapes]
        self.domain, self.dtypes, self.skip = domain, tuple(dtypes), dict(skip or {})
        self.ints = ints or {}
        self.tol = tol
        self.jit_always = jit_always     # jit also this case (else only a row's first case)
        self.params = "xyzuvw"[:len(self.shapes)]
        self.index = len(CASES)

    @property
    def id(self):
        return f"{self.prim}[{self.index}]:{self.expr}"

    def fn(self):
        return getattr(_module(), f"case_{self.index}")

    def second(self):
        return getattr(_module(), f"second_{self.index}")

    def loss(self):
        return getattr(_module(), f"loss_{self.index}")


def case(prim, expr, shapes, *, domain="real", dtypes=("float64",), skip=None, ints=None,
         tol=None, jit_always=False):
    CASES.append(Case(prim, expr, shapes, domain, dtypes, skip, ints, tol, jit_always))


_MOD = None


def _module():
    """All case functions as real source in one generated module (transpile reads source)."""
    global _MOD
    if _MOD is not None and len(CASES) == _MOD._n:
        return _MOD
    lines = ["import numpy as np", "import scipy.special", "import scipy.stats", "import scipy.signal",
             "from transpile import grad", ""]
    for c in CASES:
        ps = ", ".join(c.params)
        lines += [f"def case_{c.index}({ps}):", f"    return {c.expr}", "",
                  f"def loss_{c.index}({ps}, w):",
                  f"    return np.sum(np.real(case_{c.index}({ps})) * w)", "",
                  f"def second_{c.index}({ps}, w, v):",
                  f"    return np.sum(np.real(grad(loss_{c.index})({ps}, w)) * v)", ""]
    src = "\n".join(lines)
    d = os.path.join(tempfile.gettempdir(), f"transpile_sweep_{os.getpid()}")
    os.makedirs(d, exist_ok=True)
    name = f"sweep_generated_{len(CASES)}"
    with open(os.path.join(d, name + ".py"), "w") as f:
        f.write(src)
    sys.path.insert(0, d)
    try:
        _MOD = importlib.import_module(name)
    finally:
        sys.path.remove(d)
    _MOD._n = len(CASES)
    return _MOD


# ---- elementwise --------------------------------------------------------------------------------
_SHAPES1 = [[()], [(3,)], [(2, 3)]]
for _name, _expr, _dom in [
        ("sin", "np.sin(x)", "real"), ("cos", "np.cos(x)", "real"), ("tan", "np.tan(x)", "unit"),
        ("exp", "np.exp(x)", "real"), ("exp2", "np.exp2(x)", "real"),
        ("expm1", "np.expm1(x)", "real"), ("log", "np.log(x)", "pos"),
        ("log2", "np.log2(x)", "pos"), ("log10", "np.log10(x)", "pos"),
        ("log1p", "np.log1p(x)", "pos"), ("sqrt", "np.sqrt(x)", "pos"),
        ("cbrt", "np.cbrt(x)", "pos"), ("square", "np.square(x)", "real"),
        ("reciprocal", "np.reciprocal(x)", "pos"), ("negative", "-x", "real"),
        ("positive", "+x", "real"), ("arcsin", "np.arcsin(x)", "unit"),
        ("arccos", "np.arccos(x)", "unit"), ("arctan", "np.arctan(x)", "real"),
        ("sinh", "np.sinh(x)", "real"), ("cosh", "np.cosh(x)", "real"),
        ("tanh", "np.tanh(x)", "real"), ("arcsinh", "np.arcsinh(x)", "real"),
        ("arccosh", "np.arccosh(x)", "gt1"), ("arctanh", "np.arctanh(x)", "unit"),
        ("absolute", "np.abs(x)", "real"), ("fabs", "np.fabs(x)", "real"),
        ("real", "np.real(x)", "real"),
        ("imag", "np.imag(x) + x", "real"), ("conj", "np.conj(x)", "real"),
        ("angle", "np.angle(x) * x + x", "real"),
        ("clip", "np.clip(x, -0.5, 0.5)", "real"), ("float", "float(x) * 2.0", "real"),
        ("copy", "np.copy(x)", "real"), ("array", "np.asarray(x)", "real")]:
    for _s in (_SHAPES1[:1] if _name == "float" else _SHAPES1):
        case(_name, _expr, _s, domain=_dom, dtypes=("float64", "float32"))
for _name, _expr in [("exp", "np.exp(x)"), ("sin", "np.sin(x)"), ("absolute", "np.abs(x)"),
                     ("real", "np.real(x)"), ("imag", "np.imag(x)"), ("conj", "np.conj(x)"),
                     ("angle", "np.angle(x)"), ("multiply", "x * np.conj(x)")]:
    case(_name, _expr, [(3,)], dtypes=("complex128",), skip={
        "second": "second derivatives of complex non-holomorphic rows are not claimed"}
        if _name in ("absolute", "angle") else None)

_PAIRS = [[(3,), (3,)], [(2, 3), (3,)], [(), (2, 3)]]
for _name, _expr, _dom in [
        ("add", "x + y", "real"), ("subtract", "x - y", "real"), ("multiply", "x * y", "real"),
        ("divide", "x / y", "pos"), ("power", "x ** y", "pos"),
        ("arctan2", "np.arctan2(x, y)", "pos"), ("hypot", "np.hypot(x, y)", "pos"),
        ("logaddexp", "np.logaddexp(x, y)", "real"), ("maximum", "np.maximum(x, y)", "distinct"),
        ("minimum", "np.minimum(x, y)", "distinct"), ("mod", "np.mod(x, y)", "pos"),
        ("fmax", "np.fmax(x, y)", "distinct"), ("fmin", "np.fmin(x, y)", "distinct"),
        ("mod", "x % y", "pos"), ("fmod", "np.fmod(x, y)", "pos"),
        ("where", "np.where(x > y, x, y * 2.0)", "distinct"),
        ("copysign", "np.copysign(x, y)", "real")]:
    for _s in _PAIRS:
        case(_name, _expr, _s, domain=_dom, dtypes=("float64", "float32"))
# a NaN operand of np.fmax / np.fmin is ignored: the other one gets the derivative
case("fmax", "np.fmax(np.where(x > 0, np.nan, x), y)", [(4,), (4,)], domain="distinct",
     jit_always=True)
case("fmin", "np.fmin(x, np.where(y > 0, np.nan, y))", [(4,), (4,)], domain="distinct",
     jit_always=True)
# the bounds of np.clip are differentiated too (lo where x < lo <= hi, hi where x > hi or lo > hi)
for _expr, _s in [("np.clip(x, y, z)", [(4,), (4,), (4,)]), ("np.clip(x, y, None)", [(2, 3), (3,)]),
                  ("np.clip(x, None, y)", [(3,), ()]), ("np.clip(x, y, y + 0.5)", [(), (3,)])]:
    case("clip", _expr, _s, domain="distinct", jit_always=True)
for _expr, _s in [("np.ldexp(x, 3)", (2, 3)), ("np.ldexp(x, np.array([1, -2, 0]))", (3,)),
                  ("np.ldexp(x * x, -1)", ())]:
    case("ldexp", _expr, [_s], dtypes=("float64", "float32"))

# ---- reductions ---------------------------------------------------------------------------------
for _name, _f in [("sum", "np.sum"), ("mean", "np.mean"), ("prod", "np.prod"),
                  ("max", "np.max"), ("min", "np.min"), ("var", "np.var"), ("std", "np.std")]:
    _dom = "distinct" if _name in ("max", "min") else ("pos" if _name == "prod" else "real")
    case(_name, f"{_f}(x)", [(3,)], domain=_dom, dtypes=("float64", "float32"))
    for _ax in ("None", "0", "1", "(0, 1)", "-1"):
        for _kd in ("False", "True"):
            case(_name, f"{_f}(x, axis={_ax}, keepdims={_kd})", [(2, 3)], domain=_dom)
case("sum", "np.sum([1.0, x * x, 2.0])", [()])
case("mean", "np.mean([x, x + 2.0])", [()])
case("cumsum", "np.cumsum(x)", [(2, 3)])
case("cumsum", "np.cumsum(x, axis=1)", [(2, 3)])
case("cumprod", "np.cumprod(x)", [(4,)], domain="pos")
case("cumprod", "np.cumprod(x, axis=0)", [(3, 2)], domain="pos")
for _ord in ("None", "1", "2", "np.inf", "-np.inf", "3", "0.5"):
    case("norm", f"np.linalg.norm(x, ord={_ord})", [(4,)], domain="distinct")
case("norm", "np.linalg.norm(x, ord=0) + np.sum(x)", [(4,)], domain="distinct")
case("norm", "np.linalg.norm(x, ord=3, axis=1)", [(2, 3)], domain="distinct")
for _ord in ("None", "'fro'", "'nuc'", "1", "-1", "2", "-2", "np.inf", "-np.inf"):
    case("norm", f"np.linalg.norm(x, ord={_ord})", [(3, 3)], domain="distinct",
         skip={"second": "second derivatives of the matrix norms 'nuc', 2 and -2 are refused "
                         "(rt.norm_second)"} if _ord in ("'nuc'", "2", "-2") else None)
case("norm", "np.linalg.norm(x, axis=1)", [(2, 3)])
case("norm", "np.linalg.norm(x, axis=0, keepdims=True)", [(2, 3)])
case("norm", "np.linalg.norm([x, x + 2.0])", [()])
# complex input: JAX's convention (the cotangent of z is g * conj(d norm))
for _ord, _s in [("None", (4,)), ("1", (4,)), ("3", (4,)), ("np.inf", (4,)), ("None", (3, 3)),
                 ("'fro'", (3, 3)), ("'nuc'", (3, 3)), ("2", (3, 3)), ("1", (3, 3))]:
    case("norm", f"np.linalg.norm(x, ord={_ord})", [_s], domain="distinct",
         dtypes=("complex128",))
case("norm", "np.linalg.norm(x, axis=1)", [(2, 3)], dtypes=("complex128",))

# ---- shape and indexing -------------------------------------------------------------------------
for _name, _expr, _s in [
        ("reshape", "np.reshape(x, (3, 2))", (2, 3)), ("ravel", "np.ravel(x)", (2, 3)),
        ("ascontiguousarray", "np.ascontiguousarray(x.T)", (2, 3)),
        ("transpose", "np.transpose(x)", (2, 3)), ("transpose", "np.transpose(x, (1, 0, 2))",
                                                   (2, 3, 2)),
        ("expand_dims", "np.expand_dims(x, 1)", (2, 3)), ("squeeze", "np.squeeze(x)", (2, 1)),
        ("atleast_1d", "np.atleast_1d(x)", ()), ("atleast_2d", "np.atleast_2d(x)", (3,)),
        ("swapaxes", "np.swapaxes(x, 0, 1)", (2, 3)),
        ("moveaxis", "np.moveaxis(x, 0, -1)", (2, 3, 2)),
        ("broadcast_to", "np.broadcast_to(x, (2, 3))", (3,)), ("tile", "np.tile(x, 2)", (3,)),
        ("tile", "np.tile(x, (2, 1))", (2, 3)),
        ("diagonal", "np.diagonal(x)", (3, 3)), ("diagonal", "np.diagonal(x, 1)", (3, 4)),
        ("trace", "np.trace(x)", (3, 3)), ("diag", "np.diag(x)", (3,)),
        ("diag", "np.diag(x)", (3, 3)), ("diag", "np.diag(x, 1)", (3,)),
        ("diag", "np.diag(x, -1)", (2, 4)), ("diagflat", "np.diagflat(x)", (3,)),
        ("diagflat", "np.diagflat(x, -1)", (2, 2)),
        ("triu", "np.triu(x)", (3, 3)), ("tril", "np.tril(x, -1)", (3, 3)),
        ("roll", "np.roll(x, 1)", (2, 3)), ("roll", "np.roll(x, -1, axis=1)", (2, 3)),
        ("flip", "np.flip(x)", (2, 3)), ("flip", "np.flip(x, 1)", (2, 3)),
        ("fliplr", "np.fliplr(x)", (2, 3)), ("flipud", "np.flipud(x)", (2, 3)),
        ("rot90", "np.rot90(x)", (2, 3)), ("rot90", "np.rot90(x, 2)", (2, 3)),
        ("repeat", "np.repeat(x, 2)", (2, 3)), ("repeat", "np.repeat(x, 2, axis=0)", (2, 3)),
        ("pad", "np.pad(x, 1)", (2, 3)), ("pad", "np.pad(x, ((1, 0), (0, 2)))", (2, 3)),
        ("sort", "np.sort(x)", (2, 3)), ("sort", "np.sort(x, axis=0)", (3, 2)),
        ("split", "np.split(x, 2)[1] * 2.0 + np.split(x, 2)[0]", (4,)),
        ("split", "np.split(x, [1], axis=1)[1]", (2, 3)),
        ("array_split", "np.array_split(x, 2)[0]", (5,)),
        ("select", "np.select([x > 0, x < -0.5], [x ** 2, x * 3.0], np.sin(x))", (2, 3)),
        ("select", "np.select([x > 0.1], [x[0] * 2.0])", (2, 3)),
        ("vsplit", "np.vsplit(x, 2)[1] * 2.0 + np.vsplit(x, 2)[0]", (4, 2)),
        ("hsplit", "np.hsplit(x, [1])[1]", (2, 3)), ("hsplit", "np.hsplit(x, 2)[0]", (4,)),
        ("dsplit", "np.dsplit(x, 2)[1]", (2, 1, 4)),
        ("linspace", "np.linspace(x, 3.0, 5)", ()),
        ("linspace_endpoint", "np.linspace(0.5, x, 4, endpoint=False)", ()),
        ("array", "np.array([[x, x], [x, x]])", ()),
        ("array", "np.array([x, 2.0 * x])", (3,))]:
    if _name == "linspace_endpoint":   # jit once lowered it ignoring endpoint=False
        case("linspace", _expr, [_s], jit_always=True)
        continue
    case(_name, _expr, [_s], domain="distinct" if _name == "sort" else "real")
for _name, _expr, _shapes in [
        ("concatenate", "np.concatenate([x, y])", [(2,), (3,)]),
        ("concatenate", "np.concatenate((x, y), axis=1)", [(2, 1), (2, 3)]),
        ("concatenate", "np.r_[x, y, 2.0]", [(2,), ()]),
        ("column_stack", "np.c_[x, y]", [(3,), (3,)]),
        ("stack", "np.stack([x, y], axis=1)", [(3,), (3,)]),
        ("vstack", "np.vstack([x, y])", [(3,), (2, 3)]),
        ("hstack", "np.hstack([x, y])", [(3,), (2,)]),
        ("hstack", "np.hstack((x, y))", [(2, 1), (2, 2)]),
        ("dstack", "np.dstack([x, y])", [(2, 3), (2, 3)]),
        ("column_stack", "np.column_stack([x, y])", [(3,), (3, 2)]),
        # one array: its rows joined; a list built inline
        ("vstack", "np.vstack(x)", [(2, 3)]), ("vstack", "np.vstack(x)", [(2, 2, 3)]),
        ("hstack", "np.hstack(x)", [(2, 3)]), ("dstack", "np.dstack(x)", [(2, 3)]),
        ("column_stack", "np.column_stack(x)", [(2, 3)]),
        ("vstack", "np.vstack([x * k for k in range(3)])", [(2,)]),
        ("vstack", "np.row_stack([x, x ** 2])", [(2,)]),
        ("column_stack", "np.column_stack([x ** k for k in range(3)])", [(2,)]),
        ("kron", "np.kron(x, y)", [(2,), (3,)]), ("kron", "np.kron(x, y)", [(2, 2), (2, 3)])]:
    case(_name, _expr, _shapes)

# ---- products and linear algebra --------------------------------------------------------------------
for _name, _expr, _shapes in [
        ("matmul", "x @ y", [(2, 3), (3, 4)]), ("matmul", "x @ y", [(3,), (3, 2)]),
        ("matmul", "x @ y", [(2, 2, 3), (3,)]),
        ("dot", "np.dot(x, y)", [(2, 3), (3,)]), ("dot", "np.dot(x, y)", [(), (3,)]),
        ("dot", "np.dot(x, y)", [(2, 2, 3), (3,)]),
        ("inner", "np.inner(x, y)", [(3,), (3,)]), ("inner", "np.inner(x, y)", [(), (3,)]),
        ("inner", "np.inner(x, y)", [(2, 3), (4, 3)]),
        ("outer", "np.outer(x, y)", [(2,), (3,)]),
        ("einsum", "np.einsum('ij,jk->ik', x, y)", [(2, 3), (3, 2)]),
        ("einsum", "np.einsum('...ij,...jk->...ik', x, y)", [(2, 3), (2, 3, 2)]),
        ("einsum", "np.einsum('i,i', x, y)", [(3,), (3,)]),
        ("einsum", "np.einsum(x, [0, 1], y, [1, 2])", [(2, 3), (3, 2)]),
        ("einsum", "np.einsum(x, [0, 1], y, [1, 2], [2, 0])", [(2, 3), (3, 2)]),
        ("einsum", "np.einsum(x, [Ellipsis, 1], [1, Ellipsis])", [(2, 3)]),
        ("tensordot", "np.tensordot(x, y)", [(2, 3), (2, 3)]),
        ("tensordot", "np.tensordot(x, y, axes=1)", [(2, 3), (3, 2)]),
        ("tensordot", "np.tensordot(x, y, axes=([0], [1]))", [(2, 3), (4, 2)]),
        ("solve", "np.linalg.solve(x + 4.0 * np.eye(3), y)", [(3, 3), (3,)])]:
    case(_name, _expr, _shapes)
case("det", "np.linalg.det(x)", [(3, 3)])
case("inv", "np.linalg.inv(x + 4.0 * np.eye(3))", [(3, 3)])
case("pinv", "np.linalg.pinv(x)", [(3, 2)])
case("matrix_power", "np.linalg.matrix_power(x, 3)", [(2, 2)])
case("matrix_power", "np.linalg.matrix_power(x + 3.0 * np.eye(2), -2)", [(2, 2)])
case("slogdet", "np.linalg.slogdet(x + 4.0 * np.eye(3))[1]", [(3, 3)])
case("cholesky", "np.linalg.cholesky(x @ x.T + 3.0 * np.eye(3))", [(3, 3)])
case("cholesky", "np.linalg.cholesky(x + 3.0 * np.eye(3))", [(3, 3)])   # lower triangle read
case("eigh", "np.linalg.eigh(x + x.T)[0]", [(3, 3)], domain="distinct")
case("eigh", "np.abs(np.linalg.eigh(x + x.T)[1])", [(3, 3)], domain="distinct")
case("eigvalsh", "np.linalg.eigvalsh(x + x.T)", [(3, 3)], domain="distinct")
# one triangle read (x not symmetric): the other strict triangle gets a zero gradient
for _up in ("'L'", "'U'"):
    case("eigh", f"np.linalg.eigh(x, UPLO={_up})[0]", [(3, 3)], domain="distinct")
    case("eigh", f"np.abs(np.linalg.eigh(x, UPLO={_up})[1])", [(3, 3)], domain="distinct")
    case("eigvalsh", f"np.linalg.eigvalsh(x, UPLO={_up})", [(3, 3)], domain="distinct")
case("eigh", "np.linalg.eigh(x)[0]", [(3, 3)], domain="distinct")
# eig: eigenvalues (complex for a real matrix) and eigenvectors (phase-invariant: |V|)
case("eig", "np.abs(np.linalg.eig(x)[0]) + np.real(np.linalg.eig(x)[0] ** 2)", [(3, 3)],
     domain="distinct", dtypes=("float64", "complex128"))
case("eig", "np.abs(np.linalg.eig(x)[1])", [(3, 3)], domain="distinct",
     dtypes=("float64", "complex128"))
case("eigvals", "np.real(np.linalg.eigvals(x)) * 2.0 + np.imag(np.linalg.eigvals(x))",
     [(3, 3)], domain="distinct", dtypes=("float64", "complex128"))
case("qr", "np.linalg.qr(x)[1]", [(3, 2)])
case("qr", "np.linalg.qr(x)[0]", [(3, 2)])
case("svd", "np.linalg.svd(x, compute_uv=False)", [(3, 2)], domain="distinct")
# singular vectors (up to sign: |U|, |Vh|, or products that do not see the signs)
for _s in ((3, 2), (2, 3)):
    case("svd", "np.abs(np.linalg.svd(x, full_matrices=False)[0])", [_s], domain="distinct",
         dtypes=("float64", "complex128"))
    case("svd", "np.abs(np.linalg.svd(x, full_matrices=False)[2])", [_s], domain="distinct",
         dtypes=("float64", "complex128"))
case("svd", "np.abs(np.linalg.svd(x)[0]) + np.abs(np.linalg.svd(x)[2])", [(3, 3)],
     domain="distinct")
# hermitian=True: NumPy's eigh-based factors read the lower triangle of x
case("svd", "np.linalg.svd(x, compute_uv=False, hermitian=True)", [(3, 3)], domain="distinct")
case("svd", "np.linalg.svd(x, hermitian=True)[0] * np.linalg.svd(x, hermitian=True)[2].T",
     [(3, 3)], domain="distinct")
case("pinv", "np.linalg.pinv(x, rcond=1e-12)", [(2, 3)])
case("pinv", "np.linalg.pinv(x @ x.T + np.eye(3), hermitian=True)", [(3, 3)])
case("pinv", "np.linalg.pinv(x + 3.0 * np.eye(3), hermitian=True)", [(3, 3)])  # lower read

# ---- np.diff, np.sinc, np.logaddexp2, degrees/radians, np.float_power, np.vdot, np.nansum -------
for _name, _expr, _shapes, _dom in [
        ("diff", "np.diff(x)", [(4,)], "real"), ("diff", "np.diff(x, 2, axis=0)", [(4, 2)], "real"),
        ("diff", "np.diff(x, axis=1)", [(2, 3)], "real"),
        ("sinc", "np.sinc(x)", [(3,)], "real"), ("sinc", "np.sinc(x * 0.0) + x", [()], "real"),
        ("logaddexp2", "np.logaddexp2(x, y)", [(2, 3), (3,)], "real"),
        ("deg2rad", "np.deg2rad(x)", [(3,)], "real"), ("deg2rad", "np.radians(x)", [()], "real"),
        ("rad2deg", "np.rad2deg(x)", [(3,)], "real"), ("rad2deg", "np.degrees(x)", [()], "real"),
        ("float_power", "np.float_power(x, y)", [(3,), (3,)], "pos"),
        ("vdot", "np.vdot(x, y)", [(2, 3), (6,)], "real"),
        ("nansum", "np.nansum(x)", [(3,)], "real"),
        ("nansum", "np.nansum(x, axis=1, keepdims=True)", [(2, 3)], "real"),
        ("nansum", "np.nansum(np.where(x > 0, x, np.nan))", [(4,)], "distinct")]:
    case(_name, _expr, _shapes, domain=_dom,
         dtypes=("float64", "float32") if _name in ("sinc", "deg2rad") and _shapes == [(3,)]
         else ("float64",))
case("vdot", "np.vdot(x, y)", [(3,), (3,)], dtypes=("complex128",),
     skip={"second": "second derivatives of complex non-holomorphic rows are not claimed"})

# ---- transpile/primitives/numpy/stats.py: order statistics, average, cov, corrcoef --------------
_F32 = ("float64", "float32")
for _expr, _shapes in [
        ("np.median(x)", [(5,)]), ("np.median(x)", [(4,)]), ("np.median(x, axis=1)", [(3, 4)]),
        ("np.median(x, axis=0, keepdims=True)", [(5, 2)]), ("np.median(x, axis=(0, 2))", [(2, 3, 2)])]:
    case("median", _expr, _shapes, domain="distinct", dtypes=_F32 if _shapes == [(5,)] else
         ("float64",))
for _name, _expr, _shapes in [
        ("quantile", "np.quantile(x, 0.3)", [(5,)]),
        ("quantile", "np.quantile(x, [0.25, 0.9], axis=1)", [(3, 5)]),
        ("quantile", "np.quantile(x, 0.7, axis=0, keepdims=True)", [(4, 3)]),
        ("quantile", "np.quantile(x, [[0.1], [0.6]], axis=-1, keepdims=True)", [(2, 4)]),
        ("percentile", "np.percentile(x, 40.0, axis=1, keepdims=True)", [(3, 5)]),
        ("percentile", "np.percentile(x, [10, 75])", [(6,)]),
        ("ptp", "np.ptp(x)", [(5,)]), ("ptp", "np.ptp(x, axis=0)", [(3, 4)]),
        ("ptp", "np.ptp(x, axis=1, keepdims=True)", [(3, 4)])]:
    case(_name, _expr, _shapes, domain="distinct", dtypes=_F32 if _shapes in ([(5,)], [(6,)])
         else ("float64",))
case("quantile", "np.quantile(x, 1.0 / (1.0 + np.exp(-y)), axis=1)", [(3, 6), (2,)],
     domain="distinct")
case("percentile", "np.percentile(x, 100.0 / (1.0 + np.exp(-y)), keepdims=True)", [(7,), ()],
     domain="distinct")
case("quantile", "np.quantile(x, 0.5 + 0.1 * np.tanh(y), method='lower')", [(5,), ()],
     domain="distinct")
for _method in ("lower", "higher", "nearest", "midpoint"):
    case("quantile", f"np.quantile(x, [0.3, 0.5], axis=1, method={_method!r})", [(2, 5)],
         domain="distinct")
for _name, _expr, _shapes in [
        ("average", "np.average(x)", [(2, 3)]), ("average", "np.average(x, axis=1)", [(2, 3)]),
        ("average", "np.average(x, axis=0, weights=y)", [(3, 2), (3,)]),
        ("average", "np.average(x, weights=y, keepdims=True)", [(2, 3), (2, 3)]),
        ("average", "np.average(x, axis=(0, 2), weights=y)", [(2, 3, 2), (2, 2)]),
        ("cov", "np.cov(x)", [(3, 5)]), ("cov", "np.cov(x)", [(6,)]),
        ("cov", "np.cov(x, rowvar=False)", [(5, 2)]), ("cov", "np.cov(x, y)", [(5,), (5,)]),
        ("cov", "np.cov(x, y, rowvar=False, bias=True)", [(4, 2), (4,)]),
        ("cov", "np.cov(x, aweights=[1.0, 2.0, 0.5, 1.5], ddof=1)", [(2, 4)]),
        ("cov", "np.cov(x, fweights=[1, 2, 1, 3], ddof=0)", [(2, 4)]),
        ("corrcoef", "np.corrcoef(x)", [(3, 5)]), ("corrcoef", "np.corrcoef(x, y)", [(5,), (5,)]),
        ("corrcoef", "np.corrcoef(x, rowvar=False)", [(5, 3)])]:
    case(_name, _expr, _shapes, domain="pos" if "weights" in _expr else "real",
         dtypes=_F32 if _expr in ("np.average(x)", "np.cov(x)", "np.corrcoef(x)") else
         ("float64",))

# ---- np.cross, np.convolve, np.correlate, np.polyval, np.linalg.multi_dot, np.linalg.lstsq -------
for _name, _expr, _shapes in [
        ("cross", "np.cross(x, y)", [(3,), (3,)]), ("cross", "np.cross(x, y)", [(2, 3), (3,)]),
        ("cross", "np.cross(x, y, axisa=0, axisb=0, axisc=0)", [(3, 2), (3, 2)]),
        ("cross", "np.cross(x, y, axis=0)", [(3, 2), (3, 2)]),
        ("cross", "np.cross(x, y, axisa=0, axisb=0)", [(3, 2), (3,)]),
        ("cross", "np.cross(x, y, axisb=0, axisc=0)", [(2, 3), (3, 2)]),
        ("polyval", "np.polyval(x, y)", [(3,), (4,)]), ("polyval", "np.polyval(x, y)", [(4,), ()]),
        ("polyval", "np.polyval(x, y)", [(1,), (2, 2)]),
        ("multi_dot", "np.linalg.multi_dot([x, y, z])", [(2, 3), (3, 4), (4, 2)]),
        ("multi_dot", "np.linalg.multi_dot([x, y, z])", [(3,), (3, 4), (4,)]),
        ("multi_dot", "np.linalg.multi_dot([x, y])", [(2, 3), (3,)]),
        ("lstsq", "np.linalg.lstsq(x, y)[0]", [(5, 3), (5, 2)]),
        ("lstsq", "np.linalg.lstsq(x, y)[0]", [(5, 3), (5,)]),
        ("lstsq", "np.linalg.lstsq(x, y)[1]", [(5, 3), (5, 2)]),
        ("lstsq", "np.linalg.lstsq(x, y)[1]", [(5, 3), (5,)])]:
    case(_name, _expr, _shapes, dtypes=_F32 if _expr == "np.cross(x, y)" and
         _shapes[0] == (3,) else ("float64",))
case("lstsq", "np.linalg.lstsq(x, y)[3] + np.linalg.lstsq(x, y)[1]", [(4, 3), (4,)],
     skip={"second": "second derivatives of singular values go through the singular vectors"})
for _name in ("convolve", "correlate"):
    for _mode in ("full", "same", "valid"):
        for _shapes in ([(5,), (3,)], [(3,), (5,)], [(2,), (4,)]):
            case(_name, f"np.{_name}(x, y, {_mode!r})", _shapes,
                 dtypes=_F32 if _mode == "full" and _shapes[0] == (5,) else ("float64",))
    case(_name, f"np.{_name}(x, y)", [(4,), (2,)])

# ---- transpile/primitives/numpy/piecewise.py ----------------------------------------------------
for _name, _expr, _shapes, _dom in [
        ("interp", "np.interp(x, [-1.0, 0.0, 0.5, 1.3], [1.0, -0.5, 2.0, 0.3])", [(6,)], "real"),
        ("interp", "np.interp(y, [-1.0, 0.0, 0.5, 1.3], x)", [(4,), (5,)], "real"),
        ("interp", "np.interp(y, [-1.0, 0.0, 0.5, 1.3], x, left=z[0], right=z[1])",
         [(4,), (6,), (2,)], "real"),
        ("interp", "np.interp(y, np.cumsum(x) - 1.5, [1.0, -0.5, 2.0, 0.3])", [(4,), (5,)],
         "pos"),
        ("bincount", "np.bincount(np.array([0, 3, 3, 1, 0, 3]), weights=x)", [(6,)], "real"),
        ("bincount", "np.bincount(np.array([2, 0, 2]), x, minlength=5)", [(3,)], "real"),
        ("heaviside", "np.heaviside(x, 0.5) * x", [(3,)], "real"),
        ("heaviside", "np.heaviside(np.round(x), y)", [(5,), (5,)], "real"),
        ("nan_to_num", "np.nan_to_num(np.where(x > 0, x, np.nan))", [(4,)], "distinct"),
        ("nan_to_num", "np.nan_to_num(np.where(x > 0, x, np.nan), nan=y)", [(4,), ()],
         "distinct"),
        ("nan_to_num", "np.nan_to_num(np.where(x > 0, np.inf, x), posinf=y[0], neginf=y[1])",
         [(4,), (2,)], "distinct"),
        ("take", "np.take(x, [0, 2, 2, -1])", [(2, 3)], "real"),
        ("take", "np.take(x, [[1, 0], [2, 2]], axis=1)", [(2, 3)], "real"),
        ("take", "np.take(x, [4, -7], mode='wrap')", [(5,)], "real"),
        ("take", "np.take(x, [1, 9], axis=0, mode='clip')", [(3, 2)], "real"),
        ("take", "x.take([2, 0]) * 2.0", [(3,)], "real"),
        ("append", "np.append(x, y)", [(2, 3), (2,)], "real"),
        ("append", "np.append(x, y, axis=0)", [(2, 3), (1, 3)], "real"),
        ("append", "np.append(x, 2.0)", [(3,)], "real"),
        ("meshgrid", "np.meshgrid(x, y)[0] * np.meshgrid(x, y)[1]", [(3,), (2,)], "real"),
        ("meshgrid", "np.meshgrid(x, y, indexing='ij')[1] ** 2", [(3,), (2,)], "real"),
        ("meshgrid", "np.meshgrid(x, y, z, sparse=True)[2] + np.meshgrid(x, y, z)[0]",
         [(2,), (3,), (2,)], "real")]:
    case(_name, _expr, _shapes, domain=_dom,
         dtypes=_F32 if _shapes in ([(6,)], [(3,)], [(2, 3)]) and "axis" not in _expr
         else ("float64",), jit_always=_name in ("heaviside", "nan_to_num"))

# ---- primitives/numpy/ufunc_methods.py, nan_reductions.py, ...: ufunc methods, nan-reductions, diff's prepend/append,
# complex() --------------------------------------------------------------------------------------
for _name, _expr, _shapes, _dom in [
        ("maximum_accumulate", "np.maximum.accumulate(x)", [(6,)], "distinct"),
        ("maximum_accumulate", "np.maximum.accumulate(x, axis=1)", [(2, 4)], "distinct"),
        ("minimum_accumulate", "np.minimum.accumulate(x)", [(6,)], "distinct"),
        ("minimum_accumulate", "np.minimum.accumulate(x, axis=0)", [(4, 2)], "distinct"),
        ("add_accumulate", "np.add.accumulate(x)", [(2, 3)], "real"),
        ("add_accumulate", "np.add.accumulate(x, axis=1)", [(2, 3)], "real"),
        ("multiply_accumulate", "np.multiply.accumulate(x)", [(4,)], "pos"),
        ("multiply_accumulate", "np.multiply.accumulate(x, axis=1)", [(2, 3)], "pos"),
        ("outer_expand", "np.add.outer(x, y)", [(3,), (2,)], "real"),
        ("outer_expand", "np.multiply.outer(x, y)", [(2,), (2, 2)], "real"),
        ("outer_expand", "np.subtract.outer(x, y) ** 2", [(2, 2), (3,)], "real"),
        ("diff_extend", "np.diff(x, prepend=0.5)", [(4,)], "real"),
        ("diff_extend", "np.diff(x, append=y)", [(4,), (2,)], "real"),
        ("diff_extend", "np.diff(x, 2, axis=0, prepend=y, append=1.0)", [(3, 2), (1, 2)], "real"),
        ("nanmean", "np.nanmean(np.where(x > 0.4, np.nan, x))", [(6,)], "distinct"),
        ("nanmean", "np.nanmean(x, axis=1, keepdims=True)", [(2, 3)], "real"),
        ("nanvar", "np.nanvar(np.where(x > 0.4, np.nan, x))", [(6,)], "distinct"),
        ("nanvar", "np.nanvar(x, axis=0, ddof=1)", [(3, 2)], "real"),
        ("nanstd", "np.nanstd(np.where(x > 0.4, np.nan, x))", [(6,)], "distinct"),
        ("nanstd", "np.nanstd(x, axis=1, ddof=1)", [(2, 3)], "real"),
        ("nanprod", "np.nanprod(np.where(x > 1.5, np.nan, x))", [(5,)], "pos"),
        ("nanprod", "np.nanprod(x, axis=0)", [(2, 3)], "pos"),
        ("nanmax", "np.nanmax(np.where(x > 0.4, np.nan, x))", [(6,)], "distinct"),
        ("nanmax", "np.nanmax(x, axis=1)", [(2, 3)], "distinct"),
        ("nanmin", "np.nanmin(np.where(x < -0.4, np.nan, x))", [(6,)], "distinct"),
        ("nanmin", "np.nanmin(x, axis=0, keepdims=True)", [(3, 2)], "distinct"),
        ("nancumsum", "np.nancumsum(np.where(x > 0.4, np.nan, x))", [(6,)], "distinct"),
        ("nancumsum", "np.nancumsum(x, axis=1)", [(2, 3)], "real"),
        ("complex", "np.abs(complex(x, y) * complex(y, 0.5))", [(), ()], "real"),
        ("complex", "np.real(complex(x) ** 2) + np.imag(complex(0.5, y) ** 3)", [(), ()],
         "real")]:
    case(_name, _expr, _shapes, domain=_dom,
         dtypes=_F32 if _shapes in ([(6,)], [(4,)]) and "nan" not in _expr else ("float64",))

case("vander", "np.vander(x)", [(3,)])
case("vander", "np.vander(x, 4, increasing=True)", [(3,)])
case("vander", "np.vander(x, 2)", [(4,)])
case("gradient", "np.gradient(x)", [(5,)])
case("gradient", "np.gradient(x, 0.5, axis=1, edge_order=2)", [(3, 4)])
case("gradient", "np.gradient(x, [0.0, 0.3, 1.0, 1.2])", [(4,)])

# ---- rows with no case, and why --------------------------------------------------------------------
EXEMPT = {}
# nondiff rows (comparisons, rounding, creation, shape queries; derivative zero as in JAX),
# rt.* runtime helper rows (tested through the derivatives of the rows that use them), and
# rows with their own test files (collectives: test_pmap*.py; setitem/assign: test_control_flow.py)
EXEMPT_KINDS = ("nondiff", "runtime helper", "collective", "control")

# rows whose jit has no Numba lowering yet: jit warns (TranspileWarning) and runs NumPy.
JIT_FALLBACK = {}
for _p in ('select vstack '
           'linspace').split():
    JIT_FALLBACK[_p] = 'no Numba lowering of the row or of a helper in its derivative'
# (its result's length is read at run time; the sweep's loss multiplies it by weights of a
# fixed shape, whose unbroadcast against a run-time length has no lowering)
JIT_FALLBACK['bincount'] = 'unbroadcast of a run-time length'
for _p in ('multi_dot interp take append vander').split():
    JIT_FALLBACK[_p] = 'no Numba lowering of the row or of a helper in its derivative'
for _p in ('eig eigvals').split():
    JIT_FALLBACK[_p] = 'numpy.linalg: no Numba lowering of the row or of its derivative'
for _p in ('fft_fft fft_fft2 fft_fftn fft_fftshift fft_ifft fft_ifft2 fft_ifftn fft_ifftshift '
           'fft_irfft fft_irfft2 fft_irfftn fft_rfft fft_rfft2 fft_rfftn').split():
    JIT_FALLBACK[_p] = 'numpy.fft: Numba has no FFT'
for _p in ('signal_convolve signal_correlate special_beta special_betainc special_gammainc special_gammaincc special_i0 '
           'special_i0e special_i1 special_i1e special_log_softmax '
           'special_polygamma special_softmax stats_beta_cdf stats_beta_logpdf stats_beta_pdf '
           'stats_dirichlet_logpdf stats_dirichlet_pdf stats_gamma_cdf stats_gamma_logpdf '
           'stats_gamma_pdf stats_mvn_entropy stats_t_logcdf stats_mvn_logpdf stats_mvn_pdf '
           'stats_poisson_cdf stats_poisson_logpmf '
           'stats_poisson_pmf stats_t_cdf').split():
    JIT_FALLBACK[_p] = 'no Numba kernel for the function or one of its derivatives'

# (row, mode) pairs that no case can check, with the reason
MODE_EXEMPT = {}
