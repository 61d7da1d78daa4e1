"""numpy.linalg rows: cholesky, eigh, slogdet, pinv, matrix_power, qr, svd, np.linalg.norm for
every ord, solve, det, inv, multi_dot and lstsq. Reverse and forward rules are written with other primitives
(solve, matmul, tril, ...) wherever possible, so second derivatives follow.

Conventions: cholesky and eigh/eigvalsh follow NumPy, which reads one triangle (cholesky the
lower one, eigh the one UPLO names), so the other strict triangle gets a zero cotangent (JAX
symmetrizes its input instead: the two agree along symmetric directions); eigenvectors and singular vectors
are defined up to sign, so only sign-invariant functions of them have well-defined derivatives;
eigenvalues and singular values must be distinct. Rules written for real matrices refuse
complex ones by name (rt.check_real_linalg, rt.check_real_eigh, rt.check_svd_vectors).
"""
import numpy as np


from transpile.primitives import numba_forms as NF
from transpile.primitives.batching.axis_rules import per_example, rank_minus, stacked
from transpile.primitives.batching import rules as BR
from transpile.primitives.batching.rules import Rule
from transpile.primitives.registry import defprim
from transpile_runtime import linalg_adjoints as LA

L = BR.linalg

_rank0 = Rule("linalg", stacked.batch, rank_minus(2))
_rank1 = Rule("linalg", stacked.batch, rank_minus(1))

sym = defprim("sym", LA.sym, "rt.sym", "x", linear=("x",), batch=stacked, vjp={"x": "rt.sym(g)"},
              numba=NF.sym)
phi = defprim("phi", LA.phi, "rt.phi", "x", linear=("x",), batch=stacked, vjp={"x": "rt.phi(g)"},
              numba=NF.phi)
copyltu = defprim("copyltu", LA.copyltu, "rt.copyltu", "x", linear=("x",), batch=stacked,
                  vjp={"x": "rt.copyltu_t(g)"}, numba=NF.copyltu)
copyltu_t = defprim("copyltu_t", LA.copyltu_t, "rt.copyltu_t", "x", linear=("x",),
                    batch=stacked, vjp={"x": "rt.copyltu(g)"}, numba=NF.copyltu_t)
defprim("eye_like", LA.eye_like, "rt.eye_like", "x", nondiff=True, batch=per_example,
        numba=NF.eye_like)
defprim("gap_inverse", LA.gap_inverse, "rt.gap_inverse", "w", batch=per_example,
        vjp={"w": "rt.gap_inverse_vjp(g, w)"}, jvp={"w": "rt.gap_inverse_jvp(w_dot, w)"},
        numba=NF.gap_inverse)
defprim("gap_inverse_jvp", LA.gap_inverse_jvp, "rt.gap_inverse_jvp", "t, w", linear=("t",),
        batch=per_example, vjp={"t": "rt.gap_inverse_vjp(g, w)"}, numba=NF.gap_inverse_jvp)
defprim("gap_inverse_vjp", LA.gap_inverse_vjp, "rt.gap_inverse_vjp", "ct, w", linear=("ct",),
        batch=per_example, vjp={"ct": "rt.gap_inverse_jvp(g, w)"}, numba=NF.gap_inverse_vjp)

# np.linalg.cholesky reads the lower triangle of x (as eigh with UPLO='L' does): the cotangent
# is rt.tri_read_t of the symmetrized one (0 above the diagonal), the tangent reads tri_read
cholesky = defprim(
    "cholesky", np.linalg.cholesky, "np.linalg.cholesky", "x", batch=stacked,
    numba=NF.linalg("cholesky"),
    vjp={"x": "rt.check_real_linalg(rt.tri_read_t(rt.sym(np.linalg.solve(rt.mT(ans), "
              "rt.mT(np.linalg.solve(rt.mT(ans), rt.mT(rt.phi(rt.mT(ans) @ g))))))), "
              "'cholesky')"},
    jvp={"x": "ans @ rt.phi(np.linalg.solve(ans, rt.mT(np.linalg.solve(ans, "
              "rt.mT(rt.tri_read(rt.check_real_linalg(x_dot, 'cholesky')))))))"})

# eigh(x, UPLO) reads one triangle of x: it is eigh of S = rt.tri_read(x, UPLO) (that triangle
# mirrored), so the cotangent of x is rt.tri_read_t of the symmetric-matrix cotangent (zero on
# the strict triangle that is never read). w = eigenvalues (ascending), V = eigenvectors;
# F_ij = 1 / (w_j - w_i) off the diagonal.
tri_read = defprim("tri_read", LA.tri_read, "rt.tri_read", "x, UPLO='L'", linear=("x",),
                   batch=stacked, vjp={"x": "rt.tri_read_t(g, UPLO)"})
tri_read_t = defprim("tri_read_t", LA.tri_read_t, "rt.tri_read_t", "ct, UPLO='L'",
                     linear=("ct",), batch=stacked, vjp={"ct": "rt.tri_read(g, UPLO)"},
                     numba=NF.tri_read_t)
check_real_linalg = defprim("check_real_linalg", LA.check_real_linalg, "rt.check_real_linalg",
                            "x, name", linear=("x",), batch=stacked,
                            vjp={"x": "rt.check_real_linalg(g, name)"}, numba=NF.real_only)
check_real_eigh = defprim("check_real_eigh", LA.check_real_eigh, "rt.check_real_eigh", "x",
                          linear=("x",), batch=stacked, vjp={"x": "rt.check_real_eigh(g)"},
                          numba=NF.real_only)
_V = "rt.eigh_vectors(x, UPLO)"
_W = "rt.eigh_values(x, UPLO)"
_READ = "rt.tri_read(rt.check_real_eigh(x_dot), UPLO)"
eigh = defprim("eigh", np.linalg.eigh, "np.linalg.eigh", "x, UPLO='L'", linear=(),
               batch=per_example)
eigh.multi = lambda bound, const: [("eigh_values", {}), ("eigh_vectors", {})]
eigh_values = defprim(
    "eigh_values", LA.eigh_values, "rt.eigh_values", "x, UPLO='L'", batch=_rank1,
    numba=NF.eigh_part(0),
    vjp={"x": f"rt.tri_read_t(rt.check_real_eigh(({_V} * np.expand_dims(g, -2)) @ "
              f"rt.mT({_V})), UPLO)"},
    jvp={"x": f"np.sum({_V} * ({_READ} @ {_V}), axis=-2)"})
eigh_vectors = defprim(
    "eigh_vectors", LA.eigh_vectors, "rt.eigh_vectors", "x, UPLO='L'", batch=stacked,
    numba=NF.eigh_part(1),
    vjp={"x": f"rt.tri_read_t(rt.check_real_eigh(rt.sym({_V} @ (rt.gap_inverse({_W}) * "
              f"(rt.mT({_V}) @ g)) @ rt.mT({_V}))), UPLO)"},
    jvp={"x": f"ans @ (rt.gap_inverse({_W}) * (rt.mT(ans) @ {_READ} @ ans))"})
eigvalsh = defprim("eigvalsh", np.linalg.eigvalsh, "np.linalg.eigvalsh", "x, UPLO='L'",
                   batch=_rank1, vjp=eigh_values.vjp, jvp=eigh_values.jvp,
                   numba=NF.eigh_part(0, vectors=False))

slogdet = defprim("slogdet", np.linalg.slogdet, "np.linalg.slogdet", "x", batch=per_example)
slogdet.multi = lambda bound, const: [("slogdet_sign", {}), ("slogdet_logabs", {})]
defprim("slogdet_sign", LA.slogdet_sign, "rt.slogdet_sign", "x", nondiff=True, batch=_rank0,
        numba=NF.linalg("slogdet", 0))
slogdet_logabs = defprim(
    "slogdet_logabs", LA.slogdet_logabs, "rt.slogdet_logabs", "x", batch=_rank0,
    numba=NF.linalg("slogdet", 1),
    vjp={"x": "rt.mT(np.linalg.inv(x)) * rt.expand_last(rt.expand_last(g))"},
    jvp={"x": "np.sum(rt.mT(np.linalg.inv(x)) * x_dot, axis=(-2, -1))"})



def pinv_vjp(g, p, x="x"):
    """Cotangent of x in p = pinv(x) for the cotangent g of p (template text; np.linalg.lstsq
    uses it too)."""
    return (f"-(rt.mT({p}) @ {g} @ rt.mT({p})) + (rt.mT({g}) - {x} @ {p} @ rt.mT({g})) @ {p} @ "
            f"rt.mT({p}) + rt.mT({p}) @ {p} @ (rt.mT({g}) - rt.mT({g}) @ {p} @ {x})")


def pinv_jvp(t, p, x="x"):
    """Tangent of p = pinv(x) along the tangent t of x (template text)."""
    return (f"-({p} @ {t} @ {p}) + {p} @ rt.mT({p}) @ (rt.mT({t}) - rt.mT({t}) @ {x} @ {p}) + "
            f"(rt.mT({t}) - {p} @ {x} @ rt.mT({t})) @ rt.mT({p}) @ {p}")


# rcond/hermitian change how p is computed, not its derivative while the rank stays the same
# (hermitian=True: NumPy reads the lower triangle of x, S = rt.tri_read(x))
def _pinv_vjp(eqn, k):
    if getattr(eqn.args.get("hermitian"), "value", False):
        return f"rt.tri_read_t(rt.sym({pinv_vjp('g', 'ans', 'rt.tri_read(x)')}))"
    return pinv_vjp("g", "ans")


def _pinv_jvp(eqn, k):
    if getattr(eqn.args.get("hermitian"), "value", False):
        return pinv_jvp("rt.tri_read(x_dot)", "ans", "rt.tri_read(x)")
    return pinv_jvp("x_dot", "ans")


pinv = defprim("pinv", np.linalg.pinv, "np.linalg.pinv", "x, rcond=None, hermitian=False",
               batch=stacked, vjp={"x": _pinv_vjp}, jvp={"x": _pinv_jvp}, numba=NF.pinv)


def _mpow_terms(eqn, lhs, rhs, mid, base):
    n = eqn.args["n"].value
    if not isinstance(n, (int, np.integer)):
        raise NotImplementedError("np.linalg.matrix_power needs an integer exponent known "
                                  "when the code is generated")
    m = abs(int(n))
    if m == 0:
        return "0"
    terms = [f"np.linalg.matrix_power({base}, {k}) @ {mid} @ np.linalg.matrix_power({base}, "
             f"{m - 1 - k})" for k in range(m)]
    return " + ".join(terms), n < 0


def _mpow_vjp(eqn, k):
    out = _mpow_terms(eqn, None, None, "g", "rt.mT(x)" if eqn.args["n"].value >= 0 else
                      "rt.mT(np.linalg.inv(x))")
    if out == "0":
        return "0"
    text, neg = out
    if neg:   # A^-m = B^m with B = inv(A): dA-bar = -B^T Bbar B^T
        return f"-(rt.mT(np.linalg.inv(x)) @ ({text}) @ rt.mT(np.linalg.inv(x)))"
    return text


def _mpow_jvp(eqn, k):
    n = eqn.args["n"].value
    mid = "x_dot" if n >= 0 else "(-(np.linalg.inv(x) @ x_dot @ np.linalg.inv(x)))"
    out = _mpow_terms(eqn, None, None, mid, "x" if n >= 0 else "np.linalg.inv(x)")
    return "np.zeros_like(x_dot)" if out == "0" else out[0]   # A^0 = I: a zero of x's shape


matrix_power = defprim("matrix_power", np.linalg.matrix_power, "np.linalg.matrix_power", "x, n",
                       batch=stacked, vjp={"x": _mpow_vjp}, jvp={"x": _mpow_jvp},
                       numba=NF.matrix_power)

# qr (reduced, m >= n): Abar = (Qbar + Q copyltu(M)) R^-T,  M = R Rbar^T - Qbar^T Q
_Q, _R = "rt.qr_q(x)", "rt.qr_r(x)"
qr = defprim("qr", np.linalg.qr, "np.linalg.qr", "x, mode='reduced'", batch=per_example)


def _qr_parts(bound, const):
    mode = const(bound.get("mode")) or "reduced"
    if mode == "r":
        return "qr_r"
    if mode != "reduced":
        raise NotImplementedError(f"np.linalg.qr(mode={mode!r}): only mode='reduced' and 'r'")
    return [("qr_q", {}), ("qr_r", {})]


qr.multi = _qr_parts
qr_q = defprim("qr_q", LA.qr_q, "rt.qr_q", "x", batch=stacked, numba=NF.qr_part(0),
               vjp={"x": f"rt.check_real_linalg(rt.mT(np.linalg.solve({_R}, rt.mT(g + "
                         f"{_Q} @ rt.copyltu(-(rt.mT(g) @ {_Q}))))), 'qr')"},
               jvp={"x": "rt.qr_q_jvp(rt.check_real_linalg(x_dot, 'qr'), x)"})
qr_r = defprim("qr_r", LA.qr_r, "rt.qr_r", "x", batch=stacked, numba=NF.qr_part(1),
               vjp={"x": f"rt.check_real_linalg(rt.mT(np.linalg.solve({_R}, rt.mT({_Q} @ "
                         f"rt.copyltu({_R} @ rt.mT(g))))), 'qr')"},
               jvp={"x": "rt.qr_r_jvp(rt.check_real_linalg(x_dot, 'qr'), x)"})
defprim("qr_q_jvp", LA.qr_q_jvp, "rt.qr_q_jvp", "t, x", linear=("t",), batch=per_example,
        vjp={"t": f"rt.mT(np.linalg.solve({_R}, rt.mT(g + {_Q} @ "
                  f"rt.copyltu(-(rt.mT(g) @ {_Q})))))"})
defprim("qr_r_jvp", LA.qr_r_jvp, "rt.qr_r_jvp", "t, x", linear=("t",), batch=per_example,
        vjp={"t": f"rt.mT(np.linalg.solve({_R}, rt.mT({_Q} @ rt.copyltu({_R} @ rt.mT(g)))))"})

# svd: A = U diag(s) Vh (reduced, k = min(m, n)); F_ij = 1 / (s_j^2 - s_i^2) off the diagonal.
#   dU  = U (F o (dS S + S dS^T)) + (I - U U^T) dA V / s        dS = U^T dA V
#   dV  = V (F o (S dS + dS^T S)) + (I - V V^T) dA^T U / s      (real matrices)
# and the reverse rules are their transposes. U with full_matrices=True of a non-square matrix
# (its extra columns are not unique) and complex matrices are refused by name.
svd = defprim("svd", np.linalg.svd, "np.linalg.svd",
              "x, full_matrices=True, compute_uv=True, hermitian=False", batch=per_example)


def _svd_parts(bound, const):
    if const(bound.get("compute_uv")) is False:
        return "svd_values"
    return [("svd_u", {}), ("svd_values", {}), ("svd_vh", {})]


svd.multi = _svd_parts
# (hermitian: NumPy's eigh-based factors, whose signs the rules must share)
_U, _S, _VH = ("rt.svd_u(x, False, hermitian)", "rt.svd_values(x, hermitian)",
               "rt.svd_vh(x, False, hermitian)")
_F = f"rt.gap_inverse({_S} * {_S})"
_ROW, _COL = f"np.expand_dims({_S}, -2)", f"np.expand_dims({_S}, -1)"
def _herm_vjp(text):
    """hermitian=True: NumPy factors x with eigh, which reads its lower triangle; the cotangent
    of x is then rt.tri_read_t of the symmetrized one (0 above the diagonal)."""
    def rule(eqn, k):
        h = eqn.args.get("hermitian")
        if getattr(h, "value", False):
            return f"rt.check_real_linalg(rt.tri_read_t(rt.sym({text})), 'svd(hermitian=True)')"
        return text
    return rule


def _herm_jvp(text):
    def rule(eqn, k):
        h = eqn.args.get("hermitian")
        return text.replace("x_dot", "rt.tri_read(x_dot)") if getattr(h, "value", False) \
            else text
    return rule


svd_values = defprim(
    "svd_values", LA.svd_values, "rt.svd_values", "x, hermitian=False", batch=_rank1,
    numba=NF.svd_values,
    vjp={"x": _herm_vjp(f"(np.conj({_U}) * np.expand_dims(g, -2)) @ np.conj({_VH})")},
    jvp={"x": _herm_jvp(f"np.real(np.sum(np.conj({_U}) * (x_dot @ "
                        f"np.conj(rt.mT({_VH}))), axis=-2))")})
_G = "rt.check_svd_vectors(g, x, full_matrices)"      # g, once what has no rule is refused
_T = "rt.check_svd_vectors(x_dot, x, full_matrices)"


def _H(a):
    """Conjugate transpose (of the last two axes)."""
    return f"np.conj(rt.mT({a}))"


# complex matrices (JAX's formulas): dS = U^H dA V; dU gains diag(i Im(dS_ii) / s_i)
_DS = f"({_H(_U)} @ {_T} @ {_H(_VH)})"
_FB = f"(rt.gap_inverse({_S} * {_S}) * (rt.mT({_U}) @ {_G}))"
_FBV = f"(rt.gap_inverse({_S} * {_S}) * np.conj({_VH} @ rt.mT({_G})))"
_BU = f"(rt.mT({_U}) @ {_G})"
svd_u = defprim(
    "svd_u", LA.svd_u, "rt.svd_u", "x, full_matrices=True, hermitian=False", batch=stacked,
    numba=NF.svd_vectors(0),
    vjp={"x": _herm_vjp(f"np.conj({_U}) @ (({_FB} + {_H(_FB)}) * {_ROW} + rt.eye_like({_S}) * "
                        f"({_BU} - np.conj({_BU})) / (2 * {_ROW})) @ np.conj({_VH}) + "
                        f"(({_G} - np.conj({_U}) @ {_BU}) / {_ROW}) @ np.conj({_VH})")},
    jvp={"x": _herm_jvp(f"{_U} @ ({_F} * ({_DS} * {_ROW} + {_COL} * {_H(_DS)}) + "
                        f"rt.eye_like({_S}) * ({_DS} - np.conj({_DS})) / (2 * {_ROW})) + "
                        f"({_T} @ {_H(_VH)} - {_U} @ {_DS}) / {_ROW}")})
svd_vh = defprim(
    "svd_vh", LA.svd_vh, "rt.svd_vh", "x, full_matrices=True, hermitian=False", batch=stacked,
    numba=NF.svd_vectors(2),
    vjp={"x": _herm_vjp(f"np.conj({_U}) @ ({_COL} * ({_FBV} + {_H(_FBV)})) @ np.conj({_VH}) + "
                        f"np.conj({_U}) @ (({_G} - {_G} @ rt.mT({_VH}) @ np.conj({_VH})) / "
                        f"{_COL})")},
    jvp={"x": _herm_jvp(_H(f"{_H(_VH)} @ ({_F} * ({_COL} * {_DS} + {_H(_DS)} * {_ROW})) + "
                           f"({_H(_T)} @ {_U} - {_H(_VH)} @ {_H(_DS)}) / {_ROW}"))})
defprim("check_svd_vectors", LA.check_svd_vectors, "rt.check_svd_vectors",
        "t, x, full_matrices", linear=("t",), shape_args=("x",), batch=per_example,
        vjp={"t": "rt.check_svd_vectors(g, x, full_matrices)"}, numba=NF.check_svd_vectors)
# eig: A = V diag(w) V^-1 (distinct eigenvalues), columns of V of unit norm (their phase is
# arbitrary: only phase-invariant functions of V, such as |V|, have derivatives, as in JAX and
# autograd). With C = V^-1 dA V and F_ij = 1 / (w_j - w_i) off the diagonal:
#   dw = diag(C),   dV = dV0 - V diag(Re(diag(V^H dV0))),   dV0 = V (F o C)
# and, transposed (JAX's convention; the real part for a real A), with G' = G - conj(V)
# diag(Re(diag(V^T G))): the cotangent of A is V^-T (diag(g_w) + F o (V^T G')) V^T.
eig = defprim("eig", np.linalg.eig, "np.linalg.eig", "x", batch=per_example)
eig.multi = lambda bound, const: [("eig_values", {}), ("eig_vectors", {})]
eigvals = defprim("eigvals", np.linalg.eigvals, "np.linalg.eigvals", "x", batch=per_example)
eigvals.multi = lambda bound, const: "eig_values"
_EV, _EW = "rt.eig_vectors(x)", "rt.eig_values(x)"
_GP = f"(g - np.conj({_EV}) * np.expand_dims(np.real(np.sum(g * {_EV}, axis=-2)), -2))"
_DV0 = f"({_EV} @ (rt.gap_inverse({_EW}) * (np.linalg.solve({_EV}, x_dot) @ {_EV})))"
eig_values = defprim(
    "eig_values", LA.eig_values, "rt.eig_values", "x", batch=per_example,
    vjp={"x": f"rt.match_complex(rt.mT(({_EV} * np.expand_dims(g, -2)) @ "
              f"np.linalg.inv({_EV})), x)"},
    jvp={"x": f"np.diagonal(np.linalg.solve({_EV}, x_dot) @ {_EV}, axis1=-2, axis2=-1)"})
eig_vectors = defprim(
    "eig_vectors", LA.eig_vectors, "rt.eig_vectors", "x", batch=per_example,
    vjp={"x": f"rt.match_complex(np.linalg.solve(rt.mT({_EV}), rt.gap_inverse({_EW}) * "
              f"(rt.mT({_EV}) @ {_GP})) @ rt.mT({_EV}), x)"},
    jvp={"x": f"{_DV0} - {_EV} * np.expand_dims(np.real(np.sum(np.conj({_EV}) * {_DV0}, "
              f"axis=-2)), -2)"})


# second derivatives of the norms whose factor is elementwise (vector norms, matrix 'fro', 1,
# -1, inf, -inf; real x): rt.norm_second_x / _ans; the matrix 2-norm, -2 and 'nuc' refuse
# ('nrm', the norm: in a template 'ans' is the row's own result)
_ARGS = "x, nrm, ord, axis, keepdims"


def _second(u, v, which, reduce):
    return f"rt.norm_second({u}, {v}, {_ARGS}, {which}, {reduce})"


norm_vjp = defprim("norm_vjp", LA.norm_vjp, "rt.norm_vjp", "ct, x, nrm, ord, axis, keepdims",
                   linear=("ct",), batch=per_example,
                   vjp={"ct": f"rt.norm_jvp(g, {_ARGS})", "x": _second("g", "ct", 0, False),
                        "nrm": _second("g", "ct", 1, True)},
                   jvp={"x": _second("x_dot", "ct", 0, False),
                        "nrm": _second("nrm_dot", "ct", 1, False)}, numba=NF.norm_vjp)
norm_jvp = defprim("norm_jvp", LA.norm_jvp, "rt.norm_jvp", "t, x, nrm, ord, axis, keepdims",
                   linear=("t",), batch=per_example,
                   vjp={"t": f"rt.norm_vjp(g, {_ARGS})", "x": _second("t", "g", 0, False),
                        "nrm": _second("t", "g", 1, True)},
                   jvp={"x": _second("t", "x_dot", 0, True),
                        "nrm": _second("t", "nrm_dot", 1, True)}, numba=NF.norm_jvp)
_THIRD = "rt.refuse_norm_third(g, ord)"
defprim("norm_second", LA.norm_second, "rt.norm_second",
        "u, v, x, nrm, ord, axis, keepdims, which, reduce", batch=per_example,
        vjp={p: _THIRD for p in ("u", "v", "x", "nrm")},
        jvp={p: f"rt.refuse_norm_third({p}_dot, ord)" for p in ("u", "v", "x", "nrm")})
for _name in ("refuse_norm_second", "refuse_norm_third"):
    defprim(_name, getattr(LA, _name), f"rt.{_name}", "g, ord", nondiff=True, batch=per_example,
            refusal=True)


# ---- solve, det, inv ---------------------------------------------------------------------------
det = defprim("det", np.linalg.det, "np.linalg.det", "x", batch=L,
              vjp={"x": "rt.mT(np.linalg.inv(x)) * rt.expand_last(rt.expand_last(g * ans))"},
              jvp={"x": "ans * np.sum(rt.mT(np.linalg.inv(x)) * x_dot, axis=(-2, -1))"})
inv = defprim("inv", np.linalg.inv, "np.linalg.inv", "x", batch=L,
              vjp={"x": "-(rt.mT(ans) @ g @ rt.mT(ans))"},
              jvp={"x": "-(ans @ x_dot @ ans)"})
solve = defprim("solve", np.linalg.solve, "np.linalg.solve", "a, b", batch=L,
                vjp={"b": "np.linalg.solve(rt.mT(a), g)",
                     "a": "-rt.matmul_vjp_left(np.linalg.solve(rt.mT(a), g), a, ans)"},
                jvp={"b": "np.linalg.solve(a, b_dot)", "a": "-np.linalg.solve(a, a_dot @ ans)"})

# ---- multi_dot: A_0 A_1 ... A_{n-1} (a 1-D first array is a row, a 1-D last one a column) -------


def _chain(eqn):
    n = len(eqn.args["arrays"].items)
    mats = [f"arrays_{i}" for i in range(n)]
    mats[0] = f"np.reshape(arrays_0, (-1, np.shape(arrays_0)[-1]))"
    mats[-1] = f"np.reshape(arrays_{n - 1}, (np.shape(arrays_{n - 1})[0], -1))"
    return mats


def _multi_dot_vjp(eqn, k):
    """dA_k = (A_0 ... A_{k-1})^T G (A_{k+1} ... A_{n-1})^T, G the 2-D cotangent."""
    mats = _chain(eqn)
    out = f"np.reshape(g, (np.shape({mats[0]})[0], np.shape({mats[-1]})[1]))"
    if k > 0:
        out = f"rt.mT({' @ '.join(mats[:k])}) @ {out}"
    if k < len(mats) - 1:
        out = f"{out} @ rt.mT({' @ '.join(mats[k + 1:])})"
    return f"np.reshape({out}, np.shape(arrays_{k}))"


def _multi_dot_jvp(eqn, k):
    items = [f"arrays_{i}_dot" if i == k else f"arrays_{i}"
             for i in range(len(eqn.args["arrays"].items))]
    return f"np.linalg.multi_dot([{', '.join(items)}])"


multi_dot = defprim("multi_dot", np.linalg.multi_dot, "np.linalg.multi_dot", "arrays, *, out=None",
                    batch=per_example, vjp={"arrays": _multi_dot_vjp},
                    jvp={"arrays": _multi_dot_jvp})

# ---- lstsq -----------------------------------------------------------------------------------
lstsq = defprim("lstsq", np.linalg.lstsq, "np.linalg.lstsq", "x, y, rcond=None",
                batch=per_example)
lstsq.multi = lambda bound, const: [("lstsq_x", {}), ("lstsq_residuals", {}),
                                    ("lstsq_rank", {}), ("svd_values", {})]


def _col(v):
    """A 1-D vector as a column; a matrix as it is."""
    return f"np.reshape({v}, (np.shape({v})[0], -1))"


# x = P y with P = pinv(a) (computed once: the lambda binds it); P's cotangent is g y^T
_GY = f"({_col('g')} @ rt.mT({_col('y')}))"
lstsq_x = defprim(
    "lstsq_x", LA.lstsq_x, "rt.lstsq_x", "x, y, rcond=None", batch=per_example,
    numba=NF.lstsq_part(0),
    vjp={"x": f"(lambda p: {pinv_vjp(_GY, 'p')})(np.linalg.pinv(x))",
         "y": "rt.mT(np.linalg.pinv(x)) @ g"},
    jvp={"x": f"(lambda p: ({pinv_jvp('x_dot', 'p')}) @ y)(np.linalg.pinv(x))",
         "y": "np.linalg.pinv(x) @ y_dot"})


def _at_solution(body):
    """body over sol = lstsq's x and r = y - x @ sol (bound once each)."""
    return f"(lambda sol: (lambda r: {body})(y - x @ sol))(rt.lstsq_x(x, y, rcond))"


_W = "rt.residual_weights(g, y[0])"           # the cotangent per column of y
lstsq_residuals = defprim(
    "lstsq_residuals", LA.lstsq_residuals, "rt.lstsq_residuals", "x, y, rcond=None",
    batch=per_example, data_shape=True,     # empty unless a has full column rank (m > n)
    numba=NF.lstsq_part(1), numba_unsized=True,
    vjp={"x": _at_solution(f"-2 * {_col(f'(r * {_W})')} @ rt.mT({_col('sol')})"),
         "y": _at_solution(f"2 * r * {_W}")},
    jvp={"x": _at_solution("rt.residual_weights_t(-2 * np.sum(r * (x_dot @ sol), axis=0), ans)"),
         "y": _at_solution("rt.residual_weights_t(2 * np.sum(r * y_dot, axis=0), ans)")})
defprim("lstsq_rank", LA.lstsq_rank, "rt.lstsq_rank", "x, y, rcond=None", nondiff=True,
        batch=per_example, numba=NF.lstsq_part(2))
residual_weights = defprim("residual_weights", LA.residual_weights, "rt.residual_weights",
                           "ct, like", shape_args=("like",), linear=("ct",), batch=per_example,
                           vjp={"ct": "rt.residual_weights_t(g, ct)"}, shape_from="like",
                           numba=NF.residual_weights, numba_unsized=True)
residual_weights_t = defprim("residual_weights_t", LA.residual_weights_t,
                             "rt.residual_weights_t", "c, res", shape_args=("res",),
                             linear=("c",), batch=per_example,
                             vjp={"c": "rt.residual_weights(g, c)"},
                             numba=NF.residual_weights_t, numba_unsized=True)

# ---- matrix_rank: the number of singular values above a tolerance (an integer: no derivative)
defprim("matrix_rank", np.linalg.matrix_rank, "np.linalg.matrix_rank",
        "A, tol=None, hermitian=False, *, rtol=None", nondiff=True, batch=per_example,
        numba=NF.matrix_rank)
