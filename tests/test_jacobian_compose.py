"""jacfwd / jacrev / jacobian / hessian composed with each other, with jit, vmap and grad, for
arguments of any rank and pytrees: compared with JAX (float64) and central finite differences."""
import warnings

import numpy as np
import pytest

import transpile as tp
from fd import numerical_grad
from transpile.errors import TranspileWarning

jax = pytest.importorskip("jax")
jnp = jax.numpy
jax.config.update("jax_enable_x64", True)

rng = np.random.default_rng(11)
x3 = rng.normal(size=3)
X = rng.normal(size=(4, 3))
W = rng.normal(size=(2, 3))


def scalar_np(x):
    return np.sum(np.sin(x) * x[0])


def scalar_jnp(x):
    return jnp.sum(jnp.sin(x) * x[0])


def vector_np(x):
    return np.sin(x) * x[0] + np.cos(x)


def vector_jnp(x):
    return jnp.sin(x) * x[0] + jnp.cos(x)


def layer_np(W, b):
    return np.tanh(W @ b) * 2.0


def layer_jnp(W, b):
    return jnp.tanh(W @ b) * 2.0


def dict_np(p):
    return {"u": np.sin(p["a"]) * p["b"], "s": np.sum(p["a"] * p["b"])}


def dict_jnp(p):
    return {"u": jnp.sin(p["a"]) * p["b"], "s": jnp.sum(p["a"] * p["b"])}


def matrix_np(m):
    return np.sum(np.sin(m) * m)


def matrix_jnp(m):
    return jnp.sum(jnp.sin(m) * m)


def same(got, want, tol=1e-9):
    g_leaves, g_tree = jax.tree_util.tree_flatten(got)
    w_leaves, w_tree = jax.tree_util.tree_flatten(want)
    assert g_tree == w_tree, (g_tree, w_tree)
    for a, b in zip(g_leaves, w_leaves):
        assert np.shape(a) == np.shape(b), (np.shape(a), np.shape(b))
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


# Under jit the Jacobian code (batched reverse/forward sweeps) lowers to Numba: no NumPy
# fallback is allowed.
NOT_LOWERED_YET = ()


def no_other_fallback(fn, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TranspileWarning)
        out = fn(*args)
    msgs = [str(w.message) for w in caught if issubclass(w.category, TranspileWarning)]
    assert all(any(k in m for k in NOT_LOWERED_YET) for m in msgs), msgs
    return out


CASES = [
    ("jacfwd(jacrev)", lambda: tp.jacfwd(tp.jacrev(scalar_np))(x3),
     lambda: jax.jacfwd(jax.jacrev(scalar_jnp))(x3)),
    ("jacobian(jacobian)", lambda: tp.jacobian(tp.jacobian(scalar_np))(x3),
     lambda: jax.jacrev(jax.jacrev(scalar_jnp))(x3)),
    ("jacrev(jacfwd)", lambda: tp.jacrev(tp.jacfwd(scalar_np))(x3),
     lambda: jax.jacrev(jax.jacfwd(scalar_jnp))(x3)),
    ("jacfwd(jacfwd(vector))", lambda: tp.jacfwd(tp.jacfwd(vector_np))(x3),
     lambda: jax.jacfwd(jax.jacfwd(vector_jnp))(x3)),
    ("vmap(jacrev)", lambda: tp.vmap(tp.jacrev(vector_np))(X),
     lambda: jax.vmap(jax.jacrev(vector_jnp))(X)),
    ("vmap(jacfwd)", lambda: tp.vmap(tp.jacfwd(vector_np))(X),
     lambda: jax.vmap(jax.jacfwd(vector_jnp))(X)),
    ("vmap(hessian)", lambda: tp.vmap(tp.hessian(scalar_np))(X),
     lambda: jax.vmap(jax.hessian(scalar_jnp))(X)),
    ("jit(vmap(hessian))", lambda: tp.jit(tp.vmap(tp.hessian(scalar_np)))(X),
     lambda: jax.vmap(jax.hessian(scalar_jnp))(X)),
    ("jit(jacfwd(jacrev))", lambda: tp.jit(tp.jacfwd(tp.jacrev(scalar_np)))(x3),
     lambda: jax.jacfwd(jax.jacrev(scalar_jnp))(x3)),
    ("grad(sum(jacrev))", lambda: tp.grad(_sum_of_jacobian)(x3),
     lambda: jax.grad(lambda z: jnp.sum(jax.jacrev(vector_jnp)(z)))(x3)),
    ("jacrev of a matrix", lambda: tp.jacrev(vector_np)(X), lambda: jax.jacrev(vector_jnp)(X)),
    ("jit(jacrev) of a matrix", lambda: tp.jit(tp.jacrev(vector_np))(X),
     lambda: jax.jacrev(vector_jnp)(X)),
    ("jit(jacfwd) of a matrix", lambda: tp.jit(tp.jacfwd(vector_np))(X),
     lambda: jax.jacfwd(vector_jnp)(X)),
    ("hessian of a matrix", lambda: tp.hessian(matrix_np)(X), lambda: jax.hessian(matrix_jnp)(X)),
    ("jit(hessian) of a matrix", lambda: tp.jit(tp.hessian(matrix_np))(X),
     lambda: jax.hessian(matrix_jnp)(X)),
    ("jacfwd argnums=0", lambda: tp.jacfwd(layer_np)(W, x3), lambda: jax.jacfwd(layer_jnp)(W, x3)),
    ("jacrev argnums=(0, 1)", lambda: tp.jacrev(layer_np, argnums=(0, 1))(W, x3),
     lambda: jax.jacrev(layer_jnp, argnums=(0, 1))(W, x3)),
    ("jacfwd argnums=(0, 1)", lambda: tp.jacfwd(layer_np, argnums=(0, 1))(W, x3),
     lambda: jax.jacfwd(layer_jnp, argnums=(0, 1))(W, x3)),
    ("jit(jacrev argnums=1)", lambda: tp.jit(tp.jacrev(layer_np, argnums=1))(W, x3),
     lambda: jax.jacrev(layer_jnp, argnums=1)(W, x3)),
    ("vmap(jacfwd argnums=1), in_axes=(None, 0)",
     lambda: tp.vmap(tp.jacfwd(layer_np, argnums=1), in_axes=(None, 0))(W, X),
     lambda: jax.vmap(jax.jacfwd(layer_jnp, argnums=1), in_axes=(None, 0))(W, X)),
    ("jacfwd of a dict", lambda: tp.jacfwd(dict_np)({"a": x3, "b": x3 + 1.0}),
     lambda: jax.jacfwd(dict_jnp)({"a": x3, "b": x3 + 1.0})),
    ("jacrev of a dict", lambda: tp.jacrev(dict_np)({"a": x3, "b": x3 + 1.0}),
     lambda: jax.jacrev(dict_jnp)({"a": x3, "b": x3 + 1.0})),
    ("hessian of a dict", lambda: tp.hessian(_dict_loss_np)({"a": x3, "b": x3 + 1.0}),
     lambda: jax.hessian(_dict_loss_jnp)({"a": x3, "b": x3 + 1.0})),
]


def _sum_of_jacobian(z):
    return np.sum(tp.jacrev(vector_np)(z))


def _dict_loss_np(q):
    return np.sum(np.sin(q["a"]) * q["b"])


def _dict_loss_jnp(q):
    return jnp.sum(jnp.sin(q["a"]) * q["b"])


@pytest.mark.parametrize("name,ours,theirs", CASES, ids=[c[0] for c in CASES])
def test_jacobian_compositions_match_jax(name, ours, theirs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TranspileWarning)
        got = ours()
    fallbacks = [str(w.message) for w in caught if issubclass(w.category, TranspileWarning)]
    assert all(any(k in m for k in NOT_LOWERED_YET) for m in fallbacks), fallbacks
    same(got, theirs())


def test_hessian_recipes_agree_with_finite_differences():
    # jacfwd(jacrev(f)) and jacobian(jacobian(f)) are Hessians: central differences of grad
    g = tp.grad(scalar_np)
    fd = np.stack([numerical_grad(lambda z: g(z)[i], [x3]) for i in range(3)])
    for recipe in (tp.jacfwd(tp.jacrev(scalar_np)), tp.jacobian(tp.jacobian(scalar_np)),
                   tp.hessian(scalar_np)):
        np.testing.assert_allclose(recipe(x3), fd, rtol=1e-6, atol=1e-7)


def test_jit_of_jacobian_compiles_without_other_fallback():
    for fn, arg in ((tp.jacrev(vector_np), X), (tp.jacfwd(vector_np), x3),
                    (tp.hessian(matrix_np), X), (tp.jacfwd(tp.jacrev(scalar_np)), x3)):
        got = no_other_fallback(tp.jit(fn), arg)
        np.testing.assert_allclose(got, fn(arg), rtol=1e-10, atol=1e-12)


def test_jacobian_is_one_generated_function_under_jit():
    # compiled (no fallback), and the basis is one batched sweep: the entry function has no
    # loop over the Jacobian's columns (its fused kernels loop over elements)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranspileWarning)
        src = tp.show(tp.jit(tp.jacrev(vector_np)), x3)
    assert "@njit" in src, src
    entry = src[src.index("def vector_np__jacrev__jit("):]
    assert not any(line.strip().startswith("for ") for line in entry.splitlines()), entry


def test_float32_jacobian_keeps_dtype():
    x32 = x3.astype(np.float32)
    for fn in (tp.jacfwd(vector_np), tp.jacrev(vector_np), tp.jit(tp.jacrev(vector_np))):
        out = fn(x32)
        assert out.dtype == np.float32
        np.testing.assert_allclose(out, jax.jacrev(vector_jnp)(x3), rtol=1e-5, atol=1e-5)


def _vector_of_dict(p, x):
    return np.sin(p["w"] * x) + p["b"] * np.sum(x)


def _vector_of_dict_jnp(p, x):
    return jnp.sin(p["w"] * x) + p["b"] * jnp.sum(x)


def test_jacobians_of_pytrees_inside_other_transforms_match_jax():
    # (every Jacobian of a dict argument or output under jit, vmap, grad or another Jacobian
    # was refused: "jacrev(e) inside another transform needs its argument 0 to be one array")
    D = {"a": x3, "b": x3 + 1.0}
    P = {"w": np.array([0.5, -1.0, 2.0]), "b": 0.3}
    X = np.stack([x3, 2 * x3])
    B = {"a": np.stack([x3, x3 - 1.0]), "b": np.stack([x3 + 1.0, 2 * x3])}

    def inner(p):
        return np.sum(tp.jacrev(_dict_loss_np)(p)["a"] ** 2)

    def jinner(p):
        return jnp.sum(jax.jacrev(_dict_loss_jnp)(p)["a"] ** 2)
    cases = [
        (tp.grad(inner)(D), jax.grad(jinner)(D)),
        (tp.jacfwd(tp.jacrev(_dict_loss_np))(D), jax.jacfwd(jax.jacrev(_dict_loss_jnp))(D)),
        (tp.jacrev(tp.jacfwd(_dict_loss_np))(D), jax.jacrev(jax.jacfwd(_dict_loss_jnp))(D)),
        (tp.jacrev(tp.jacrev(_dict_loss_np))(D), jax.jacrev(jax.jacrev(_dict_loss_jnp))(D)),
        (tp.jit(tp.jacrev(_dict_loss_np))(D), jax.jit(jax.jacrev(_dict_loss_jnp))(D)),
        (tp.jit(tp.hessian(_dict_loss_np))(D), jax.jit(jax.hessian(_dict_loss_jnp))(D)),
        (tp.vmap(tp.hessian(_dict_loss_np))(B), jax.vmap(jax.hessian(_dict_loss_jnp))(B)),
        (tp.jit(tp.jacfwd(tp.grad(_dict_loss_np)))(D),
         jax.jit(jax.jacfwd(jax.grad(_dict_loss_jnp)))(D)),
    ]
    for ours, theirs in ((tp.jacrev, jax.jacrev), (tp.jacfwd, jax.jacfwd)):
        cases.append((tp.vmap(ours(_vector_of_dict), in_axes=(None, 0))(P, X),
                      jax.vmap(theirs(_vector_of_dict_jnp), in_axes=(None, 0))(P, X)))
        cases.append((tp.jit(ours(_vector_of_dict, argnums=1))(P, x3),
                      jax.jit(theirs(_vector_of_dict_jnp, argnums=1))(P, x3)))
    for got, want in cases:
        gl, gt = jax.tree_util.tree_flatten(got)
        wl, wt = jax.tree_util.tree_flatten(want)
        assert gt == wt
        for g, w in zip(gl, wl):
            np.testing.assert_allclose(g, np.asarray(w), rtol=1e-10, atol=1e-12)


_both_jacobians = tp.jacrev(layer_np, argnums=(0, 1))


def _sum_of_both_jacobians(W, b):
    J = _both_jacobians(W, b)
    return np.sum(J[0]) + np.sum(J[1] * J[1])


def _sum_of_both_jacobians_jnp(W, b):
    J = jax.jacrev(layer_jnp, argnums=(0, 1))(W, b)
    return jnp.sum(J[0]) + jnp.sum(J[1] * J[1])


def test_jacobians_of_several_arguments_compose():
    for ours, theirs in ((tp.jacrev, jax.jacrev), (tp.jacfwd, jax.jacfwd)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", TranspileWarning)
            got = tp.jit(ours(layer_np, argnums=(0, 1)))(W, x3)
        msgs = [str(w.message) for w in caught if issubclass(w.category, TranspileWarning)]
        # the basis of the 2-D W makes a batched 3-D np.matmul, which Numba does not lower
        assert all("np.matmul(" in m or any(k in m for k in NOT_LOWERED_YET) for m in msgs), msgs
        same(got, theirs(layer_jnp, argnums=(0, 1))(W, x3))
    got = tp.grad(_sum_of_both_jacobians, argnums=(0, 1))(W, x3)
    same(got, jax.grad(_sum_of_both_jacobians_jnp, argnums=(0, 1))(W, x3))


def _with_aux(v):
    return np.sin(v) * v, np.sum(v ** 2)


@pytest.mark.parametrize("kind", ["jacrev", "jacfwd"])
def test_jacobian_with_aux_matches_jax(kind):
    x = np.array([0.3, 1.2, -0.7])
    jac, aux = getattr(tp, kind)(_with_aux, has_aux=True)(x)
    want, want_aux = getattr(jax, kind)(lambda v: (jnp.sin(v) * v, jnp.sum(v ** 2)),
                                        has_aux=True)(x)
    np.testing.assert_allclose(jac, np.asarray(want), rtol=1e-12)
    assert np.isclose(aux, float(want_aux))


# a string among the arguments (a mode switch): jacfwd and hessian made a float zero tangent
# of it and crashed ("could not convert string to float"); it is static, as in JAX

def scaled_by_mode(x, mode):
    return x * 2.0 if mode == "double" else x ** 3


def test_jacobians_with_a_string_argument():
    def jax_f(x, mode):
        return x * 2.0 if mode == "double" else x ** 3
    for mode in ("double", "cube"):
        want = jax.jacfwd(jax_f)(x3, mode)
        np.testing.assert_allclose(tp.jacfwd(scaled_by_mode)(x3, mode), want, rtol=1e-12)
        np.testing.assert_allclose(tp.jacrev(scaled_by_mode)(x3, mode), want, rtol=1e-12)
        h = tp.hessian(lambda x, m: np.sum(scaled_by_mode(x, m)))(x3, mode)
        np.testing.assert_allclose(
            h, jax.hessian(lambda x: jnp.sum(jax_f(x, mode)))(x3), rtol=1e-12, atol=1e-14)


def _with_aux_dict(x):
    return np.sin(x) * x[0], {"n": np.sum(x ** 2), "x": x * 2.0}


def _with_aux_dict_jnp(x):
    return jnp.sin(x) * x[0], {"n": jnp.sum(x ** 2), "x": x * 2.0}


def test_jacobians_with_aux_inside_other_transforms_match_jax():
    # (vmap(jacrev(f, has_aux=True)), jit(...), a jacfwd with aux inside a jit'd function:
    # "jacrev(f, has_aux=True) cannot be transformed again (jit, grad, vmap) yet")
    X = np.stack([x3, 2 * x3])

    def inner(x):
        J, aux = tp.jacfwd(_with_aux_dict, has_aux=True)(x)
        return np.sum(J ** 2) + aux["n"]

    def jinner(x):
        J, aux = jax.jacfwd(_with_aux_dict_jnp, has_aux=True)(x)
        return jnp.sum(J ** 2) + aux["n"]
    cases = [(tp.jit(inner)(x3), jax.jit(jinner)(x3)),
             (tp.grad(inner)(x3), jax.grad(jinner)(x3))]
    for ours, theirs in ((tp.jacrev, jax.jacrev), (tp.jacfwd, jax.jacfwd)):
        cases.append((tp.vmap(ours(_with_aux_dict, has_aux=True))(X),
                      jax.vmap(theirs(_with_aux_dict_jnp, has_aux=True))(X)))
        cases.append((tp.jit(ours(_with_aux_dict, has_aux=True))(x3),
                      jax.jit(theirs(_with_aux_dict_jnp, has_aux=True))(x3)))
    for got, want in cases:
        gl, gt = jax.tree_util.tree_flatten(got)
        wl, wt = jax.tree_util.tree_flatten(want)
        assert gt == wt
        for g, w in zip(gl, wl):
            np.testing.assert_allclose(g, np.asarray(w), rtol=1e-10, atol=1e-12)
