"""Gradients that third-party NumPy gradient suites exercise (issue 25): eigh/eigvalsh with
UPLO, complex inputs under JAX's convention, joins of inline lists and of arrays, vjp
cotangent shapes, *args/**kwargs, dicts of known keys, random generators inside a
differentiated function, rules needed only for the arguments differentiated.

Every number is checked against central differences in float64 (tests/fd.py) and, where JAX
computes the same function, against JAX (x64) as a second oracle.
"""
import warnings

import numpy as np
import pytest
import scipy.stats

import transpile as tp
from transpile.errors import TranspileError
from fd import numerical_grad

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import jax.scipy.stats as jstats  # noqa: E402

RNG = np.random.default_rng(25)
EPS = 1e-6


def close(a, b, tol=1e-6):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def fd_jvp(f, args, tangents):
    plus = f(*[a + EPS * t for a, t in zip(args, tangents)])
    minus = f(*[a - EPS * t for a, t in zip(args, tangents)])
    return (np.asarray(plus) - np.asarray(minus)) / (2 * EPS)


def quiet(fn, *args):
    """jit may fall back to NumPy for linalg rows (with a warning): the numbers are checked."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args)


def _only(f, args, argnum):
    """f as a function of argument argnum alone (the others closed over, one name each)."""
    if len(args) == 1:
        return f
    if len(args) == 2:
        a0, a1 = args

        def at0(v):
            return f(v, a1)

        def at1(v):
            return f(a0, v)
        return (at0, at1)[argnum]
    b0, b1, b2 = args

    def bt0(v):
        return f(v, b1, b2)

    def bt1(v):
        return f(b0, v, b2)

    def bt2(v):
        return f(b0, b1, v)
    return (bt0, bt1, bt2)[argnum]


def check_all_modes(f, args, argnum=0, tol=1e-6, second=True):
    """grad vs FD, jvp vs FD, jit(grad) vs grad, and a second derivative (grad of a directional
    first derivative) vs FD of the first."""
    want = numerical_grad(f, args, argnum)
    g = tp.grad(f, argnums=argnum)(*args)
    close(g, want, tol)
    close(quiet(tp.jit(tp.grad(f, argnums=argnum)), *args), want, tol)
    tans = [np.zeros_like(a) for a in args]
    tans[argnum] = RNG.normal(size=np.shape(args[argnum]))

    only = _only(f, args, argnum)     # jvp in argument argnum only (the others: no rule)
    _, t = tp.jvp(only, (args[argnum],), (tans[argnum],))
    close(t, fd_jvp(f, args, tans), tol)
    if second:
        v = RNG.normal(size=np.shape(args[argnum]))

        def h(*a):
            return np.sum(tp.grad(f, argnums=argnum)(*a) * v)
        close(tp.grad(h, argnums=argnum)(*args), numerical_grad(h, args, argnum), 1e-4)
    return g


# ---- eigh / eigvalsh read one triangle --------------------------------------------------------

def eigh_values_L(a):
    return np.sum(np.linalg.eigh(a, UPLO="L")[0] ** 3)


def eigh_values_U(a):
    return np.sum(np.linalg.eigh(a, UPLO="U")[0] ** 3)


def eigh_vectors_U(a):
    w, v = np.linalg.eigh(a, UPLO="U")
    return np.sum(np.abs(v) * np.arange(9.0).reshape(3, 3)) + np.sum(w)


def eigvalsh_L(a):
    return np.sum(np.sin(np.linalg.eigvalsh(a, UPLO="L")))


def eigvalsh_U(a):
    return np.sum(np.sin(np.linalg.eigvalsh(a, "U")))


def eigh_default(a):
    return np.sum(np.linalg.eigh(a)[0] * np.array([1.0, -2.0, 0.5]))


@pytest.mark.parametrize("f,uplo", [(eigh_values_L, "L"), (eigh_values_U, "U"),
                                    (eigh_vectors_U, "U"), (eigvalsh_L, "L"), (eigvalsh_U, "U"),
                                    (eigh_default, "L")])
def test_eigh_uplo_reads_one_triangle(f, uplo):
    a = RNG.normal(size=(3, 3))          # not symmetric: only one triangle is read
    g = check_all_modes(f, [a])
    unread = np.triu(g, 1) if uplo == "L" else np.tril(g, -1)
    assert np.all(unread == 0)
    assert np.abs(g).max() > 0.1


def test_eigh_uplo_agrees_with_jax_along_symmetric_directions():
    # JAX symmetrizes its input, NumPy reads one triangle: they agree on symmetric matrices
    # along symmetric tangents
    m = RNG.normal(size=(3, 3))
    a = m + m.T
    s = RNG.normal(size=(3, 3))
    t = s + s.T
    for uplo, f in (("L", eigvalsh_L), ("U", eigvalsh_U)):
        _, ours = tp.jvp(f, (a,), (t,))
        _, theirs = jax.jvp(lambda x: jnp.sum(jnp.sin(jnp.linalg.eigvalsh(x, UPLO=uplo))),
                            (a,), (t,))
        close(ours, theirs, 1e-9)


def complex_eigh(a):
    return np.sum(np.linalg.eigvalsh(a))


def test_complex_eigh_derivative_is_refused():
    z = RNG.normal(size=(3, 3)) + 1j * RNG.normal(size=(3, 3))
    with pytest.raises(NotImplementedError, match="eigh"):
        tp.grad(complex_eigh)(z + z.conj().T)


# ---- complex inputs: JAX's convention ---------------------------------------------------------

def vec_norm(z):
    return np.linalg.norm(z)


def mat_norm_fro(z):
    return np.linalg.norm(z, "fro")


def test_complex_norm_matches_jax_exactly():
    z = RNG.normal(size=4) + 1j * RNG.normal(size=4)
    close(tp.grad(vec_norm)(z), jax.grad(lambda v: jnp.linalg.norm(v))(z), 1e-12)
    Z = RNG.normal(size=(3, 3)) + 1j * RNG.normal(size=(3, 3))
    close(tp.grad(mat_norm_fro)(Z), jax.grad(lambda v: jnp.linalg.norm(v, "fro"))(Z), 1e-12)
    # JAX's convention: the gradient of a real f(z) is df/dx - i df/dy
    fd = numerical_grad(lambda x, y: vec_norm(x + 1j * y), [z.real, z.imag], 0) - \
        1j * numerical_grad(lambda x, y: vec_norm(x + 1j * y), [z.real, z.imag], 1)
    close(tp.grad(vec_norm)(z), fd)


def _module_fn(tmp_path, name, expr):
    import importlib.util
    path = tmp_path / f"{name}.py"
    path.write_text(f"import numpy as np\n\n\ndef f(x):\n    return {expr}\n")
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.f


_Z3 = RNG.normal(size=3) + 1j * RNG.normal(size=3)
_ZM = RNG.normal(size=(3, 3)) + 1j * RNG.normal(size=(3, 3))
COMPLEX_RULES = [
    ("np.sum(np.abs(x))", _Z3), ("np.sum(np.abs(x) ** 2)", _Z3),
    ("np.sum(np.real(np.exp(x)))", _Z3), ("np.sum(np.imag(np.log(x)))", _Z3),
    ("np.sum(np.real(np.sqrt(x)))", _Z3), ("np.sum(np.real(np.sin(x) * x))", _Z3),
    ("np.sum(np.real(1 / x))", _Z3), ("np.sum(np.real(x ** 3))", _Z3),
    ("np.sum(np.angle(x))", _Z3), ("np.real(np.vdot(x, 2 * x + 1))", _Z3),
    ("np.real(np.sum(x @ x))", _ZM), ("np.real(np.sum(np.linalg.inv(x)))", _ZM),
    ("np.real(np.linalg.det(x))", _ZM), ("np.linalg.slogdet(x)[1]", _ZM),
    ("np.real(np.prod(x))", _Z3), ("np.sum(np.abs(np.fft.fft(x)) ** 2)", _Z3),
    ("np.var(x)", _Z3), ("np.std(x)", _Z3), ("np.max(np.abs(x))", _Z3),
    ("np.sum(np.linalg.svd(x, compute_uv=False))", _ZM),
    ("np.real(np.sum(np.linalg.pinv(x)))", _ZM),
    ("np.linalg.norm(x, 1)", _Z3), ("np.linalg.norm(x, 3)", _Z3),
    ("np.linalg.norm(x, np.inf)", _Z3), ("np.linalg.norm(x, 'nuc')", _ZM),
    ("np.linalg.norm(x, 2)", _ZM), ("np.linalg.norm(x, 1)", _ZM),
    ("np.sum(np.linalg.norm(x, axis=1))", _ZM),
]


@pytest.mark.parametrize("expr,z", COMPLEX_RULES, ids=[e for e, _ in COMPLEX_RULES])
def test_complex_rules_follow_jax(tmp_path, expr, z):
    f = _module_fn(tmp_path, f"cplx_{abs(hash(expr))}", expr)
    fj = eval("lambda x: " + expr.replace("np.", "jnp."), {"jnp": jnp})
    close(tp.grad(f)(z), jax.grad(fj)(z), 1e-9)


def complex_cholesky(x):
    return np.real(np.sum(np.linalg.cholesky(x @ np.conj(x.T) + 3 * np.eye(3))))


def complex_qr(x):
    return np.real(np.sum(np.linalg.qr(x)[1]))


@pytest.mark.parametrize("f,name", [(complex_cholesky, "cholesky"), (complex_qr, "qr")])
def test_complex_cholesky_qr_refused_by_name(f, name):
    with pytest.raises(NotImplementedError, match=f"np.linalg.{name} of a complex"):
        tp.grad(f)(_ZM)


# ---- joins of inline lists and of arrays ------------------------------------------------------

def vstack_inline(x):
    return np.sum(np.vstack([x * k for k in range(3)]) ** 2)


def vstack_of_array(X):
    return np.sum(np.sin(np.vstack(X)) * np.arange(6.0).reshape(2, 3))


def hstack_of_array(X):
    return np.sum(np.hstack(X) ** 3)


def column_stack_of_array(X):
    return np.sum(np.column_stack(X) ** 2 * np.arange(6.0).reshape(3, 2))


def row_stack_expr(x):
    return np.sum(np.row_stack([x, x ** 2]) @ np.ones(3))


@pytest.mark.parametrize("f,shape", [(vstack_inline, (3,)), (vstack_of_array, (2, 3)),
                                     (hstack_of_array, (2, 3)),
                                     (column_stack_of_array, (2, 3)),
                                     (row_stack_expr, (3,))])
def test_joins(f, shape):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)    # np.row_stack
        check_all_modes(f, [RNG.normal(size=shape)])


# ---- vjp cotangent shapes, tensor-Jacobian products -------------------------------------------

def rolled_sin(a):
    return np.roll(np.sin(a), 1)


def test_vjp_refuses_a_cotangent_of_another_shape():
    a = RNG.normal(size=(5, 4, 3))
    _, pullback = tp.vjp(rolled_sin, a)
    with pytest.raises(ValueError, match=r"shape \(5, 4\)"):
        pullback(RNG.normal(size=(5, 4)))
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        pullback(np.ones(3))       # broadcastable: was silently summed


def tensor_dot_fun(a, V):
    return np.tensordot(V, rolled_sin(a), axes=np.ndim(V))


def test_tensor_jacobian_product():
    a = RNG.normal(size=(5, 4, 3))
    V = RNG.normal(size=(5, 4))
    J = tp.jacobian(rolled_sin)(a)
    want = np.tensordot(V, J, axes=2)
    close(tp.jacrev(tensor_dot_fun)(a, V), want, 1e-12)
    close(tp.jacfwd(tensor_dot_fun)(a, V), want, 1e-12)
    jj = jax.jacobian(lambda x: jnp.roll(jnp.sin(x), 1))(a)
    close(want, jnp.tensordot(V, jj, axes=2), 1e-12)


# ---- *args / **kwargs ------------------------------------------------------------------------

def sym(*args):
    return sum(np.sum(np.sin(a) * a) for a in args)


star_lambda = lambda *args: np.sum(args[0] * args[1] ** 2)  # noqa: E731


def with_kwargs(x, *rest, scale=1.0, **extra):
    return np.sum(x * scale) + np.sum(rest[0] ** 2) * extra["w"]


def calls_star(x, y):
    def inner(a, *rest, k=2.0, **kw):
        return np.sum(a * k) + sum(np.sum(r ** 2) for r in rest) + np.sum(kw["z"] ** 3)
    g = lambda *a, **kw: np.sum(a[0] * a[1]) * kw["s"]  # noqa: E731
    return inner(x, y, x * y, z=y) + g(x, y, s=3.0) + sym(x, y)


def test_star_args_grad_jvp_jit_vmap():
    x, y = RNG.normal(size=3), RNG.normal(size=3)
    for argnum in (0, 1):
        close(tp.grad(sym, argnums=argnum)(x, y), numerical_grad(sym, [x, y], argnum))
        close(tp.grad(star_lambda, argnums=argnum)(x, y),
              numerical_grad(star_lambda, [x, y], argnum))
        close(tp.grad(calls_star, argnums=argnum)(x, y),
              numerical_grad(calls_star, [x, y], argnum))
    close(tp.grad(sym)(x, y), jax.grad(lambda *a: sum(jnp.sum(jnp.sin(v) * v) for v in a))(x, y),
          1e-12)
    gx, gy = tp.grad(star_lambda, argnums=(0, 1))(x, y)
    close(gy, 2 * x * y, 1e-12)
    tx, ty = RNG.normal(size=3), RNG.normal(size=3)
    _, t = tp.jvp(star_lambda, (x, y), (tx, ty))
    close(t, fd_jvp(star_lambda, [x, y], [tx, ty]))
    close(tp.jit(tp.grad(sym, argnums=1))(x, y), numerical_grad(sym, [x, y], 1))
    close(tp.jit(sym)(x, y), sym(x, y), 1e-12)
    X, Y = RNG.normal(size=(4, 3)), RNG.normal(size=(4, 3))
    close(tp.vmap(sym)(X, Y), [sym(a, b) for a, b in zip(X, Y)], 1e-12)
    close(tp.vmap(tp.grad(sym, argnums=1))(X, Y),
          [numerical_grad(sym, [a, b], 1) for a, b in zip(X, Y)])
    close(tp.hessian(star_lambda, argnums=1)(x, y), np.diag(2 * x), 1e-9)
    close(tp.grad(tp.grad(lambda *a: np.sin(a[0]) * a[1]))(0.7, 2.0), -2.0 * np.sin(0.7), 1e-12)


def test_star_kwargs():
    x, y = RNG.normal(size=3), RNG.normal(size=3)

    def f(x, y):
        return with_kwargs(x, y, scale=2.0, w=3.0)
    close(tp.grad(with_kwargs, argnums=1)(x, y, scale=2.0, w=3.0), numerical_grad(f, [x, y], 1))
    close(tp.grad(with_kwargs)(x, y, scale=2.0, w=3.0), np.full(3, 2.0), 1e-12)
    close(tp.jit(with_kwargs)(x, y, scale=2.0, w=3.0), f(x, y), 1e-12)
    with pytest.raises(ValueError, match="out of range"):
        tp.grad(sym, argnums=2)(x, y)


def mvn_star(*args):
    return scipy.stats.multivariate_normal.logpdf(*args)


def test_scipy_through_star_args():
    x, m = np.array([0.3, -0.2]), np.array([0.1, 0.2])
    C = np.array([[1.0, 0.3], [0.3, 2.0]])
    for argnum in (0, 1):
        got = tp.grad(mvn_star, argnums=argnum)(x, m, C)
        close(got, numerical_grad(mvn_star, [x, m, C], argnum))
        close(got, jax.grad(jstats.multivariate_normal.logpdf, argnums=argnum)(x, m, C), 1e-10)


# ---- dicts of known keys ---------------------------------------------------------------------

def dict_loop(p):
    t = 0.0
    for k in p:
        t = t + np.sum(p[k] ** 2) * (2.0 if k == "a" else 1.0)
    return t


def dict_items(p):
    t = 0.0
    for k, v in p.items():
        t = t + np.sum(np.sin(v))
    return t


def dict_values_keys(p):
    return sum(np.sum(v ** 3) for v in p.values()) + sum(np.sum(p[k]) for k in p.keys())


def dict_get(p):
    return np.sum(p.get("a", 0.0) ** 2) + np.sum(p.get("missing", 1.0)) + np.sum(p.get("b"))


def dict_sorted(p):
    out = 0.0
    for i, k in enumerate(sorted(p)):
        out = out + (i + 1.0) * np.sum(p[k] ** 2)
    return out


@pytest.mark.parametrize("f", [dict_loop, dict_items, dict_values_keys, dict_get, dict_sorted])
def test_dict_methods(f):
    p = {"b": RNG.normal(size=2), "a": RNG.normal(size=3)}
    g = tp.grad(f)(p)
    assert set(g) == {"a", "b"}
    for k in p:
        def fk(v, k=k):
            q = dict(p)
            q[k] = v
            return f(q)
        close(g[k], numerical_grad(fk, [p[k]]))
    jg = quiet(tp.jit(tp.grad(f)), p)
    for k in p:
        close(jg[k], g[k], 1e-12)


# ---- random generators inside a differentiated function ---------------------------------------

def random_state_noise(x):
    noise = np.random.RandomState(0).randn(3)
    return np.sum((x + noise) ** 2)


def random_state_stream(x):
    rs = np.random.RandomState(1)
    return np.sum(x * rs.randn(3)) + np.sum(x ** 2 * rs.rand(3)) + np.sum(rs.randn(2, 3) @ x)


def default_rng_stream(x):
    rng = np.random.default_rng(3)
    return np.sum(x * rng.normal(size=3)) + np.sum(x ** 2 * rng.normal(0.0, 2.0, 3))


@pytest.mark.parametrize("f", [random_state_noise, random_state_stream, default_rng_stream])
def test_random_generators_are_constants(f):
    x = RNG.normal(size=3)
    check_all_modes(f, [x])
    close(quiet(tp.jit(f), x), f(x), 1e-12)       # the same numbers as NumPy


def random_draw_in_loop(x, n):
    rs = np.random.RandomState(0)
    t = 0.0
    for i in range(n):
        t = t + np.sum(x * rs.randn(3))
    return t


def test_random_draw_in_a_runtime_loop():
    """The draws run in the loop, in NumPy's order: d/dx sum_i x . z_i = sum_i z_i."""
    rs = np.random.RandomState(0)
    want = sum(rs.randn(3) for _ in range(3))
    close(tp.grad(random_draw_in_loop)(np.ones(3), 3), want, 1e-12)
    close(quiet(tp.jit(tp.grad(random_draw_in_loop)), np.ones(3), 3), want, 1e-12)


# ---- a rule is needed only for the arguments differentiated -----------------------------------

def poisson_pmf(k, mu):
    return np.sum(scipy.stats.poisson.pmf(k, mu))


def poisson_logpmf(k, mu):
    return np.sum(scipy.stats.poisson.logpmf(k, mu))


def poisson_cdf(k, mu):
    return np.sum(scipy.stats.poisson.cdf(k, mu))


def t_cdf(x, df):
    return np.sum(scipy.stats.t.cdf(x, df))


@pytest.mark.parametrize("f,jf,cont", [
    (poisson_pmf, lambda k, mu: jnp.sum(jstats.poisson.pmf(k, mu)), 1),
    (poisson_logpmf, lambda k, mu: jnp.sum(jstats.poisson.logpmf(k, mu)), 1),
    (poisson_cdf, lambda k, mu: jnp.sum(jstats.poisson.cdf(k, mu)), 1),
    (t_cdf, None, 0)])      # JAX has no t.cdf
def test_rule_only_for_the_differentiated_argument(f, jf, cont):
    if cont == 1:
        args = [np.array([1.0, 3.0, 0.0]), np.array([1.5, 2.0, 0.7])]
    else:
        args = [np.array([0.3, -1.0, 2.0]), np.array([3.0, 4.0, 2.5])]
    want = numerical_grad(f, args, cont)
    close(tp.grad(f, argnums=cont)(*args), want)
    close(tp.jacrev(f, argnums=cont)(*args), want)
    close(tp.jacfwd(f, argnums=cont)(*args), want)
    close(quiet(tp.jit(tp.grad(f, argnums=cont)), *args), want)
    h = tp.hessian(f, argnums=cont)(*args)
    assert h.shape == (3, 3)
    for i in range(len(args[cont])):
        close(h[i], numerical_grad(lambda *a, i=i: tp.grad(f, argnums=cont)(*a)[i], args, cont),
              1e-4)
    if jf is not None:
        close(tp.grad(f, argnums=cont)(*args), jax.grad(jf, argnums=cont)(*args), 1e-6)


def test_differentiating_the_discrete_argument_is_refused_by_name():
    with pytest.raises(TranspileError, match="'k' of scipy.stats.poisson.pmf"):
        tp.grad(poisson_pmf, argnums=0)(np.array([1.0, 3.0]), np.array([1.5, 2.0]))
    with pytest.raises(TranspileError, match="'df' of scipy.stats.t.cdf"):
        tp.grad(t_cdf, argnums=1)(np.array([0.3, -1.0]), np.array([3.0, 4.0]))


# ---- linear algebra rules: svd vectors, eig values, pinv, norm orders --------------------------

_W33 = RNG.normal(size=(3, 3))


def svd_u_abs(a):
    u = np.linalg.svd(a, full_matrices=False)[0]
    return np.sum(np.abs(u) * _W33[:u.shape[0], :u.shape[1]])


def svd_vh_abs(a):
    vh = np.linalg.svd(a, full_matrices=False)[2]
    return np.sum(np.abs(vh) * _W33[:vh.shape[0], :vh.shape[1]])


def svd_square_all(a):
    u, s, vh = np.linalg.svd(a)
    return np.sum(np.abs(u) * _W33) + np.sum(s ** 2) + np.sum(np.abs(vh) * _W33.T)


@pytest.mark.parametrize("f,shape", [(svd_u_abs, (3, 2)), (svd_u_abs, (2, 3)),
                                     (svd_vh_abs, (3, 2)), (svd_vh_abs, (2, 3)),
                                     (svd_square_all, (3, 3))])
def test_svd_singular_vectors(f, shape):
    a = RNG.normal(size=shape)
    g = check_all_modes(f, [a], tol=1e-5)
    jf = {svd_u_abs: lambda x: jnp.sum(jnp.abs(jnp.linalg.svd(x, full_matrices=False)[0])
                                       * _W33[:x.shape[0], :min(x.shape)]),
          svd_vh_abs: lambda x: jnp.sum(jnp.abs(jnp.linalg.svd(x, full_matrices=False)[2])
                                        * _W33[:min(x.shape), :x.shape[1]])}.get(f)
    if jf is not None:
        close(g, jax.grad(jf)(a), 1e-8)


def svd_full_u(a):
    return np.sum(np.abs(np.linalg.svd(a)[0]))


def test_svd_full_matrices_nonsquare_refused_and_primal_shape():
    a = RNG.normal(size=(3, 2))
    with pytest.raises(NotImplementedError, match="full_matrices=True"):
        tp.grad(svd_full_u)(a)
    close(quiet(tp.jit(svd_full_u), a), svd_full_u(a), 1e-12)     # U is 3x3, as NumPy's


def eig_values_loss(a):
    w = np.linalg.eig(a)[0]
    return np.sum(np.abs(w) * np.array([1.0, -2.0, 0.5])) + np.sum(np.real(w ** 2))


def test_eig_eigenvalues():
    a = RNG.normal(size=(3, 3))
    check_all_modes(eig_values_loss, [a])
    z = RNG.normal(size=(3, 3)) + 1j * RNG.normal(size=(3, 3))

    def fxy(x, y):
        return eig_values_loss(x + 1j * y)
    fd = numerical_grad(fxy, [z.real, z.imag], 0) - 1j * numerical_grad(fxy, [z.real, z.imag], 1)
    close(tp.grad(eig_values_loss)(z), fd)
    w8 = jnp.array([1.0, -2.0, 0.5])

    def jloss(x):      # eigvals's order: the same LAPACK routine as NumPy's
        w = jnp.linalg.eigvals(x)
        return jnp.sum(jnp.abs(w) * w8) + jnp.sum(jnp.real(w ** 2))
    np.testing.assert_allclose(np.linalg.eigvals(a), jnp.linalg.eigvals(a), atol=1e-12)
    close(tp.grad(eig_values_loss)(a), jax.grad(jloss)(a), 1e-8)
    close(tp.grad(eig_values_loss)(z), jax.grad(jloss)(z), 1e-8)


def pinv_loss(a):
    return np.sum(np.linalg.pinv(a, rcond=1e-12) ** 2 * _W33[:a.shape[1], :a.shape[0]])


def test_pinv():
    a = RNG.normal(size=(3, 2))
    g = check_all_modes(pinv_loss, [a], tol=1e-5)
    close(g, jax.grad(lambda x: jnp.sum(jnp.linalg.pinv(x) ** 2 * _W33[:2, :3]))(a), 1e-8)


@pytest.mark.parametrize("ord_", [1, 3, 0.5, np.inf, None])
def test_vector_norm_orders_second_order(ord_):
    def f(x):
        return np.linalg.norm(x, ord_)
    x = RNG.normal(size=4)
    check_all_modes(f, [x], tol=1e-5)
    h = tp.hessian(f)(x)
    hj = jax.hessian(lambda v: jnp.linalg.norm(v, ord_))(x)
    close(h, hj, 1e-8)


# ---- NumPy rows: gradient, splits, select, einsum sublists -------------------------------------

def np_gradient(x):
    return np.sum(np.gradient(x, 0.5, edge_order=2) ** 2 * np.arange(5.0))


def np_gradient_axis(x):
    return np.sum(np.gradient(x, axis=1) * _W33[:2, :3])


def np_vsplit(x):
    return np.sum(np.vsplit(x, 2)[1] ** 2 * 3.0 + np.vsplit(x, 2)[0])


def np_hsplit(x):
    return np.sum(np.sin(np.hsplit(x, [1])[1]))


def np_select(x):
    return np.sum(np.select([x > 0, x < -0.5], [x ** 2, x * 3.0], np.sin(x)))


def einsum_sublist(x):
    return np.sum(np.einsum(x, [0, 1], x, [1, 2], [2, 0]) ** 2)


@pytest.mark.parametrize("f,shape,jf", [
    (np_gradient, (5,), lambda x: jnp.sum(jnp.gradient(x, 0.5) ** 2 * jnp.arange(5.0))),
    (np_gradient_axis, (2, 3), lambda x: jnp.sum(jnp.gradient(x, axis=1) * _W33[:2, :3])),
    (np_vsplit, (4, 2), lambda x: jnp.sum(jnp.vsplit(x, 2)[1] ** 2 * 3.0 + jnp.vsplit(x, 2)[0])),
    (np_hsplit, (2, 3), lambda x: jnp.sum(jnp.sin(jnp.hsplit(x, [1])[1]))),
    (np_select, (3, 3), lambda x: jnp.sum(jnp.select([x > 0, x < -0.5], [x ** 2, x * 3.0],
                                                     jnp.sin(x)))),
    (einsum_sublist, (3, 3), lambda x: jnp.sum(jnp.einsum(x, [0, 1], x, [1, 2], [2, 0]) ** 2))])
def test_numpy_rows(f, shape, jf):
    x = RNG.normal(size=shape)
    g = check_all_modes(f, [x])
    if f is not np_gradient:         # edge_order=2: jnp.gradient has only edge_order 1
        close(g, jax.grad(jf)(x), 1e-8)


def np_gradient_nd(x):
    return np.sum(np.gradient(x)[0])


def test_gradient_of_nd_array_without_axis_refused():
    with pytest.raises(NotImplementedError, match="axis"):
        tp.grad(np_gradient_nd)(RNG.normal(size=(3, 3)))


# ---- scipy.special: beta, betainc, gammainc ----------------------------------------------------

def sp_beta(a, b):
    return np.sum(scipy.special.beta(a, b) ** 2)


def sp_betainc(a, b, x):
    return np.sum(scipy.special.betainc(a, b, x) ** 2)


def sp_gammainc(a, x):
    return np.sum(scipy.special.gammainc(a, x) ** 2 + scipy.special.gammaincc(a, x))


import jax.scipy.special as jsp  # noqa: E402
import scipy.special  # noqa: E402


def test_scipy_special_rows():
    a, b, x = np.array([1.5, 2.5]), np.array([0.7, 3.0]), np.array([0.3, 0.6])
    for n in (0, 1):
        g = check_all_modes(sp_beta, [a, b], argnum=n)
        close(g, jax.grad(lambda a, b: jnp.sum(jnp.exp(jsp.betaln(a, b)) ** 2), argnums=n)(a, b),
              1e-8)
    g = check_all_modes(sp_betainc, [a, b, x], argnum=2)
    close(g, jax.grad(lambda a, b, x: jnp.sum(jsp.betainc(a, b, x) ** 2), argnums=2)(a, b, x),
          1e-8)
    g = check_all_modes(sp_gammainc, [a, x], argnum=1)
    close(g, jax.grad(lambda a, x: jnp.sum(jsp.gammainc(a, x) ** 2 + jsp.gammaincc(a, x)),
                      argnums=1)(a, x), 1e-8)
    with pytest.raises(TranspileError, match="'a' of scipy.special.betainc"):
        tp.grad(sp_betainc)(a, b, x)
    with pytest.raises(TranspileError, match="'a' of scipy.special.gammainc"):
        tp.grad(sp_gammainc)(a, x)


# ---- complex: second derivatives of |z|, holomorphic ------------------------------------------

def abs_sum(w):
    return np.sum(np.abs(w))


_VC = np.array([1.0, 2.0, -0.5])


def grad_abs_weighted(z):
    return np.real(np.sum(tp.grad(abs_sum)(z) * _VC))


def test_second_derivatives_of_complex_abs():
    z = RNG.normal(size=3) + 1j * RNG.normal(size=3)
    inner = jax.grad(lambda w: jnp.sum(jnp.abs(w)))
    want = jax.grad(lambda z: jnp.real(jnp.sum(inner(z) * _VC)))(z)
    got = tp.grad(grad_abs_weighted)(z)
    close(got, want, 1e-10)

    def fxy(x, y):
        return grad_abs_weighted(x + 1j * y)
    fd = numerical_grad(fxy, [z.real, z.imag], 0) - 1j * numerical_grad(fxy, [z.real, z.imag], 1)
    close(got, fd)
    v = RNG.normal(size=3) + 1j * RNG.normal(size=3)
    _, t = tp.jvp(tp.grad(abs_sum), (z,), (v,))        # forward over reverse
    close(t, jax.jvp(jax.grad(lambda w: jnp.sum(jnp.abs(w))), (z,), (v,))[1], 1e-10)


def holo(z):
    return np.sin(z[0]) * z[1] + z[1] ** 3


def holo_vec(z):
    return z ** 2 * np.exp(z)


def test_holomorphic():
    z = np.array([0.3 + 0.4j, -1.0 + 0.2j])
    jh = lambda z: jnp.sin(z[0]) * z[1] + z[1] ** 3  # noqa: E731
    jv = lambda z: z ** 2 * jnp.exp(z)  # noqa: E731
    close(tp.grad(holo, holomorphic=True)(z), jax.grad(jh, holomorphic=True)(z), 1e-12)
    close(tp.jacfwd(holo_vec, holomorphic=True)(z), jax.jacfwd(jv, holomorphic=True)(z), 1e-12)
    close(tp.jacrev(holo_vec, holomorphic=True)(z), jax.jacrev(jv, holomorphic=True)(z), 1e-12)
    close(tp.hessian(holo, holomorphic=True)(z), jax.hessian(jh, holomorphic=True)(z), 1e-12)
    # the complex derivative: (f(z + h) - f(z - h)) / 2h along the real axis
    h = 1e-6
    fd = [(holo(z + h * e) - holo(z - h * e)) / (2 * h) for e in np.eye(2)]
    close(tp.grad(holo, holomorphic=True)(z), fd)
    with pytest.raises(TypeError, match="complex"):
        tp.grad(holo, holomorphic=True)(np.ones(2))


# ---- one triangle read: cholesky, SciPy's multivariate normal ---------------------------------

def cholesky_loss(a):
    return np.sum(np.linalg.cholesky(a) * _W33)


_XM, _MM = np.array([0.5, -0.3, 0.2]), np.array([0.1, 0.2, -0.1])


def mvn_logpdf_cov(c):
    return scipy.stats.multivariate_normal.logpdf(_XM, _MM, c)


def mvn_pdf_cov(c):
    return scipy.stats.multivariate_normal.pdf(_XM, _MM, c) * 3.0


def mvn_entropy_cov(c):
    return scipy.stats.multivariate_normal.entropy(_MM, c)


@pytest.mark.parametrize("f,jf", [
    (cholesky_loss, lambda c: jnp.sum(jnp.linalg.cholesky(c) * _W33)),
    (mvn_logpdf_cov, lambda c: jstats.multivariate_normal.logpdf(_XM, _MM, c)),
    (mvn_pdf_cov, lambda c: jstats.multivariate_normal.pdf(_XM, _MM, c) * 3.0),
    (mvn_entropy_cov, None)])
def test_lower_triangle_read(f, jf):
    c = np.array([[2.0, 0.3, 0.1], [-0.2, 3.0, 0.4], [0.5, 0.1, 2.5]])   # not symmetric
    g = check_all_modes(f, [c])
    assert np.all(np.triu(g, 1) == 0)
    if jf is not None:        # JAX symmetrizes: the same derivative along symmetric directions
        s = c + c.T
        t = RNG.normal(size=(3, 3))
        t = t + t.T
        close(tp.jvp(f, (s,), (t,))[1], jax.jvp(jf, (s,), (t,))[1], 1e-9)


def t_logcdf(x, loc):
    return np.sum(scipy.stats.t.logcdf(x, 3.0, loc, 1.5))


def test_t_logcdf():
    x, loc = np.array([0.3, -1.0, 2.0]), np.array([0.1, 0.0, -0.2])
    for n in (0, 1):
        check_all_modes(t_logcdf, [x, loc], argnum=n)


import scipy.signal  # noqa: E402
import jax.scipy.signal as jsignal  # noqa: E402


def sig_convolve(a, b):
    return np.sum(scipy.signal.convolve(a, b, mode="same") ** 2)


def sig_correlate(a, b):
    return np.sum(np.sin(scipy.signal.correlate(a, b)))


@pytest.mark.parametrize("f,jf", [
    (sig_convolve, lambda a, b: jnp.sum(jsignal.convolve(a, b, mode="same") ** 2)),
    (sig_correlate, lambda a, b: jnp.sum(jnp.sin(jsignal.correlate(a, b))))])
def test_scipy_signal(f, jf):
    a, b = RNG.normal(size=(3, 4)), RNG.normal(size=(2, 3))
    for n in (0, 1):
        g = check_all_modes(f, [a, b], argnum=n)
        close(g, jax.grad(jf, argnums=n)(a, b), 1e-8)


def eig_vectors_loss(a):
    w, v = np.linalg.eig(a)
    return np.sum(np.abs(v) * _W44) + np.sum(np.abs(w))


_W44 = RNG.normal(size=(4, 4))


def test_eig_eigenvectors():
    a = RNG.normal(size=(4, 4))           # real, with (generically) a complex pair
    check_all_modes(eig_vectors_loss, [a], tol=1e-5)
    z = a + 1j * RNG.normal(size=(4, 4))

    def fxy(x, y):
        return eig_vectors_loss(x + 1j * y)
    fd = numerical_grad(fxy, [z.real, z.imag], 0) - 1j * numerical_grad(fxy, [z.real, z.imag], 1)
    close(tp.grad(eig_vectors_loss)(z), fd, 1e-5)


def svd_u_abs_c(a):
    return np.sum(np.abs(np.linalg.svd(a, full_matrices=False)[0]) * _W33[:3, :2])


def svd_vh_abs_c(a):
    return np.sum(np.abs(np.linalg.svd(a, full_matrices=False)[2]) * _W33[:2, :2])


@pytest.mark.parametrize("f,jf", [
    (svd_u_abs_c, lambda a: jnp.sum(jnp.abs(jnp.linalg.svd(a, full_matrices=False)[0])
                                    * _W33[:3, :2])),
    (svd_vh_abs_c, lambda a: jnp.sum(jnp.abs(jnp.linalg.svd(a, full_matrices=False)[2])
                                     * _W33[:2, :2]))])
def test_complex_singular_vectors(f, jf):
    z = RNG.normal(size=(3, 2)) + 1j * RNG.normal(size=(3, 2))

    def fxy(x, y):
        return f(x + 1j * y)
    fd = numerical_grad(fxy, [z.real, z.imag], 0) - 1j * numerical_grad(fxy, [z.real, z.imag], 1)
    g = tp.grad(f)(z)
    close(g, fd)
    close(g, jax.grad(jf)(z), 1e-8)
    t = RNG.normal(size=(3, 2)) + 1j * RNG.normal(size=(3, 2))
    close(tp.jvp(f, (z,), (t,))[1], fd_jvp(f, [z], [t]))
