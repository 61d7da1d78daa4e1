"""np.linalg.norm of every order and np.einsum of the common subscripts under jit and
jit(grad), with no statement run in NumPy (a TranspileWarning, a fallback or a segment break,
is an error here; the compiled tier is asserted):

* np.linalg.norm: vector p-norms for any p (3, 0.5, -1, ...), ord 0, inf, -inf; matrix
  'fro', 'nuc', 1, -1, 2, -2, inf, -inf; along an axis, over an axis pair, with keepdims;
  its gradient (rt.norm_vjp) and tangent (rt.norm_jvp) for every order they support;
* np.einsum: 'ij,ij->', 'ij,jk->ik', 'ij->j', 'ij->', 'i,i->', 'bij,bjk->bik', 'ii->',
  'ii->i', 'ij->ji' and others, and the gradient of subscripts that repeat an index inside
  one operand ('ii->', 'ii->i', 'iij->j'): the cotangent goes onto that diagonal.

Values are NumPy's (jit), gradients central finite differences in float64 and JAX's; float32
in gives float32 out.
"""
import numpy as np
import pytest

from fd import numerical_grad
from transpile import grad, jacfwd, jit

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

pytestmark = pytest.mark.filterwarnings("error::transpile.TranspileWarning")


def rng(seed):
    return np.random.default_rng(seed)


def compiled(f, *args):
    """jit(f)(*args) from the compiled tier (a fallback is an error: the filter above)."""
    j = jit(f, wait=True)
    got = j(*args)
    assert j.last_tier == "compiled"
    return got


def same(got, want, rtol=1e-12):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)


def check_grad(loss, jloss, *args, rtol=1e-6):
    """grad and jit(grad) of loss against finite differences and JAX's grad of jloss."""
    want = numerical_grad(loss, list(args))
    theirs = np.asarray(jax.grad(jloss)(*args))
    np.testing.assert_allclose(theirs, want, rtol=rtol, atol=1e-7)
    np.testing.assert_allclose(grad(loss)(*args), theirs, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(compiled(grad(loss), *args), theirs, rtol=1e-10, atol=1e-12)


# ---- np.linalg.norm: values ------------------------------------------------------------------

VECTOR_ORDS = [None, 1, 2, 3, 2.5, 0.5, 0, -1, -2, -0.5, np.inf, -np.inf]
MATRIX_ORDS = [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")   # NumPy's, for ord < 0
@pytest.mark.parametrize("order", VECTOR_ORDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_vector_norm_of_every_order_compiles(order, dtype):
    v = rng(1).normal(size=7) * 3
    v[2] = 0.0                       # ord 0 counts the nonzeros
    if dtype == np.int64:
        v = np.round(v)
    v = v.astype(dtype)

    def f(v):
        return np.linalg.norm(v, order)
    want = f(v)
    got = compiled(f, v)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    same(got, want, 1e-5 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("order", MATRIX_ORDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_matrix_norm_of_every_order_compiles(order, dtype):
    a = rng(2).normal(size=(5, 3)).astype(dtype)

    def f(a):
        return np.linalg.norm(a, order)

    def swapped(a):                  # rows and columns exchanged: the transpose's norm
        return np.linalg.norm(a, order, axis=(1, 0))
    tol = 1e-5 if dtype == np.float32 else 1e-12
    same(compiled(f, a), f(a), tol)
    same(compiled(swapped, a), swapped(a), tol)


@pytest.mark.parametrize("order", [None, 1, 3, 0, -1, np.inf, -np.inf])
@pytest.mark.parametrize("axis, keepdims", [(0, False), (1, False), (-1, True), (1, True)])
def test_vector_norms_along_an_axis(order, axis, keepdims):
    x = rng(3).normal(size=(4, 6))

    def f(x):
        return np.linalg.norm(x, order, axis=axis, keepdims=keepdims)
    same(compiled(f, x), f(x))


@pytest.mark.parametrize("order", [None, "fro", 1, -1, np.inf, -np.inf])
@pytest.mark.parametrize("keepdims", [False, True])
def test_matrix_norms_over_an_axis_pair_of_a_stack(order, keepdims):
    x = rng(4).normal(size=(3, 4, 5))

    def f(x):
        return np.linalg.norm(x, order, axis=(2, 0), keepdims=keepdims)
    same(compiled(f, x), f(x))


def test_norm_of_every_element_of_a_3d_array():
    x = rng(5).normal(size=(2, 3, 4))

    def f(x):
        return np.linalg.norm(x)
    same(compiled(f, x), f(x))


# ---- np.linalg.norm: gradients ---------------------------------------------------------------

GRAD_VECTOR_ORDS = [1, 2, 3, 2.5, 0.5, -1, -0.5, np.inf, -np.inf]


@pytest.mark.parametrize("order", GRAD_VECTOR_ORDS)
def test_vector_norm_gradient_of_every_order(order):
    v = rng(6).normal(size=6)

    def loss(v):
        return np.sin(np.linalg.norm(v, order)) * np.linalg.norm(v, order)

    def jloss(v):
        return jnp.sin(jnp.linalg.norm(v, order)) * jnp.linalg.norm(v, order)
    check_grad(loss, jloss, v)


def test_gradient_of_the_zero_norm_is_zero_compiled():
    v = rng(7).normal(size=5)

    def loss(v):
        return np.linalg.norm(v, 0) * np.sum(v)
    want = np.full(5, np.count_nonzero(v), dtype=float)
    np.testing.assert_allclose(compiled(grad(loss), v), want, rtol=1e-12)


@pytest.mark.parametrize("order", ["nuc", 1, -1, 2, -2, np.inf, -np.inf])
def test_matrix_norm_gradient_of_every_order(order):
    a = rng(8).normal(size=(4, 3))

    def loss(a):
        return np.linalg.norm(a, order) ** 2

    def jloss(a):
        return jnp.linalg.norm(a, order) ** 2
    check_grad(loss, jloss, a, rtol=1e-5)


@pytest.mark.parametrize("order", [1, 3, np.inf])
@pytest.mark.parametrize("keepdims", [False, True])
def test_norm_gradient_along_an_axis(order, keepdims):
    x = rng(9).normal(size=(3, 5))
    w = np.arange(3.0).reshape((3, 1) if keepdims else (3,))

    def loss(x):
        return np.sum(w * np.linalg.norm(x, order, axis=1, keepdims=keepdims))

    def jloss(x):
        return jnp.sum(w * jnp.linalg.norm(x, order, axis=1, keepdims=keepdims))
    check_grad(loss, jloss, x)


@pytest.mark.parametrize("order", [1, -1, np.inf, -np.inf])
def test_matrix_norm_gradient_over_an_axis_pair(order):
    x = rng(10).normal(size=(3, 4, 2))

    def loss(x):
        return np.sum(np.cos(np.linalg.norm(x, order, axis=(0, 2))))

    def jloss(x):
        return jnp.sum(jnp.cos(jnp.linalg.norm(x, order, axis=(0, 2))))
    check_grad(loss, jloss, x)


@pytest.mark.parametrize("order", [1, 3, np.inf, -np.inf])
def test_norm_tangent_compiles(order):
    """jacfwd: the tangent rule (rt.norm_jvp) compiled."""
    v = rng(11).normal(size=5)

    def f(v):
        return np.linalg.norm(v * v, order)
    want = np.asarray(jax.jacfwd(lambda v: jnp.linalg.norm(v * v, order))(v))
    np.testing.assert_allclose(compiled(jacfwd(f), v), want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("order", [1, 3, np.inf])
def test_norm_gradient_keeps_float32(order):
    v = rng(12).normal(size=6).astype(np.float32)

    def loss(v):
        return np.linalg.norm(v, order)
    got = compiled(grad(loss), v)
    assert got.dtype == np.float32
    want = np.asarray(jax.grad(lambda v: jnp.linalg.norm(v, order))(v.astype(np.float64)))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


# ---- np.einsum -------------------------------------------------------------------------------

EINSUM_CASES = [
    ("ij,ij->", [(3, 4), (3, 4)]),
    ("ij,jk->ik", [(3, 4), (4, 2)]),
    ("ij->j", [(3, 4)]),
    ("ij->", [(3, 4)]),
    ("i,i->", [(5,), (5,)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ii->", [(4, 4)]),
    ("ii->i", [(4, 4)]),
    ("ij->ji", [(3, 4)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij,j->i", [(3, 4), (4,)]),
    ("iij->j", [(3, 3, 2)]),
    ("ii,i->i", [(3, 3), (3,)]),
    ("ij,jk", [(3, 4), (4, 2)]),
]


def _einsum_fns(spec, n):
    if n == 1:
        return (lambda a: np.einsum(spec, a),
                lambda a: np.sum(np.sin(np.einsum(spec, a))),
                lambda a: jnp.sum(jnp.sin(jnp.einsum(spec, a))))
    return (lambda a, b: np.einsum(spec, a, b),
            lambda a, b: np.sum(np.sin(np.einsum(spec, a, b))),
            lambda a, b: jnp.sum(jnp.sin(jnp.einsum(spec, a, b))))


@pytest.mark.parametrize("spec, shapes", EINSUM_CASES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_einsum_compiles(spec, shapes, dtype):
    args = [rng(13).normal(size=s).astype(dtype) for s in shapes]
    f = _einsum_fns(spec, len(args))[0]
    same(compiled(f, *args), f(*args), 1e-5 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("spec, shapes", EINSUM_CASES)
def test_einsum_gradient_compiles(spec, shapes):
    """Every operand's gradient, the repeated-index ones ('ii', 'iij') included."""
    args = [rng(14).normal(size=s) for s in shapes]
    _, loss, jloss = _einsum_fns(spec, len(args))
    for k in range(len(args)):
        want = np.asarray(jax.grad(jloss, argnums=k)(*args))
        np.testing.assert_allclose(numerical_grad(loss, list(args), argnum=k), want,
                                   rtol=1e-6, atol=1e-7)
        mine = grad(loss, argnums=k)
        np.testing.assert_allclose(mine(*args), want, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(compiled(mine, *args), want, rtol=1e-12, atol=1e-12)


def test_einsum_of_the_result_itself():
    """The loss is the einsum (the cotangent 1.0 is a number written into the code)."""
    a = rng(15).normal(size=(4, 4))

    def loss(a):
        return np.einsum("ij,ij->", a, a)
    np.testing.assert_allclose(compiled(grad(loss), a), 2 * a, rtol=1e-12)


def test_trace_by_einsum_gradient_is_the_identity():
    a = rng(16).normal(size=(4, 4))

    def loss(a):
        return np.einsum("ii->", a)
    np.testing.assert_array_equal(grad(loss)(a), np.eye(4))
    np.testing.assert_array_equal(compiled(grad(loss), a), np.eye(4))


def test_einsum_gradient_keeps_float32():
    a = rng(17).normal(size=(3, 3)).astype(np.float32)

    def loss(a):
        return np.sum(np.einsum("ii->i", a) ** 2) + np.einsum("ij,ij->", a, a)
    got = compiled(grad(loss), a)
    assert got.dtype == np.float32
    want = 2 * np.diag(np.diag(a)) + 2 * a
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_second_derivative_through_a_repeated_index():
    """The diagonal scatter is linear: its own transpose reads the diagonal back."""
    a = rng(18).normal(size=(3, 3))

    def loss(a):
        return np.sum(np.einsum("ii->i", a) ** 3)
    g = grad(lambda a: np.sum(grad(loss)(a) * np.cos(a)))
    want = numerical_grad(lambda a: np.sum(grad(loss)(a) * np.cos(a)), [a])
    np.testing.assert_allclose(g(a), want, rtol=1e-6, atol=1e-7)


def test_repeated_index_with_ellipsis_is_refused_not_wrong():
    a = rng(19).normal(size=(2, 3, 3))

    def loss(a):
        return np.sum(np.einsum("...ii->...", a))
    with pytest.raises(NotImplementedError, match="repeated index"):
        grad(loss)(a)
