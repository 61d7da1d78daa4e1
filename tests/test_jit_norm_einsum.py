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
