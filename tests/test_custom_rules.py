"""custom_vjp, custom_jvp, stop_gradient, defrule and check_grads."""
import numpy as np
import pytest
import scipy.special

from transpile import (check_grads, custom_jvp, custom_vjp, defrule, grad, hessian, jacfwd,
                       jacrev, jvp, stop_gradient)
from transpile.errors import TranspileError


@custom_vjp
def clip_gradient(x):
    return x * 1.0


def _clip_fwd(x):
    return x * 1.0, None


def _clip_bwd(res, g):
    return (np.clip(g, -1.0, 1.0),)


clip_gradient.defvjp(_clip_fwd, _clip_bwd)


def test_custom_vjp_replaces_the_backward_rule():
    def loss(x):
        return np.sum(clip_gradient(x) * 5.0)
    x = np.array([1.0, -2.0])
    assert np.allclose(clip_gradient(x), x)
    np.testing.assert_allclose(grad(loss)(x), [1.0, 1.0])
    assert "rt.custom_rules." in grad(loss).source_for(x)


@custom_vjp
def safe_log1pexp(x):
    return np.log1p(np.exp(x))


def _sl_fwd(x):
    return np.log1p(np.exp(x)), x


def _sl_bwd(x, g):
    return (g / (1 + np.exp(-x)),)


safe_log1pexp.defvjp(_sl_fwd, _sl_bwd)


def test_custom_vjp_with_residuals_inside_a_loop():
    def f(x):
        s = 0.0
        for i in range(3):
            s = s + safe_log1pexp(x * (i + 1.0))
        return s
    x = 0.3
    want = sum((i + 1) / (1 + np.exp(-x * (i + 1))) for i in range(3))
    assert np.isclose(grad(f)(x), want)


@custom_jvp
def my_sin(x):
    return np.sin(x)


def _my_sin_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return np.sin(x), np.cos(x) * t


my_sin.defjvp(_my_sin_jvp)


def test_custom_jvp_forward_and_reverse():
    def f(x):
        return np.sum(my_sin(x) ** 2)
    x = np.array([0.3, 0.7])
    np.testing.assert_allclose(jvp(f, (x,), (np.ones(2),))[1], np.sum(np.sin(2 * x)))
    np.testing.assert_allclose(grad(f)(x), np.sin(2 * x))


def test_stop_gradient():
    def f(x):
        return x * stop_gradient(x) + x
    assert grad(f)(3.0) == 4.0


def test_stop_gradient_of_a_pytree_as_in_jax():
    # (a dict was refused: "a dict cannot be passed to a NumPy function")
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    from transpile import jit, vmap
    x = np.array([0.3, -1.2, 2.0])
    p = {"a": x, "b": (x * 2.0, 0.5)}

    def make(xp, sg):
        def f(q):
            s = sg(q)
            return xp.sum(s["a"] * q["a"] ** 2 + q["b"][0] * s["b"][0]) * s["b"][1] + q["b"][1]
        return f
    ours, theirs = make(np, stop_gradient), make(jnp, jax.lax.stop_gradient)
    for T, J in ((grad, jax.grad), (lambda f: jit(grad(f)), lambda f: jax.jit(jax.grad(f)))):
        got, want = T(ours)(p), J(theirs)(p)
        gl, gt = jax.tree_util.tree_flatten(got)
        wl, wt = jax.tree_util.tree_flatten(want)
        assert gt == wt
        for g, w in zip(gl, wl):
            np.testing.assert_allclose(g, np.asarray(w), rtol=1e-12)
    batch = {"a": np.stack([x, x]), "b": (np.stack([x, 2 * x]), np.array([0.5, 0.7]))}
    np.testing.assert_allclose(vmap(grad(ours))(batch)["a"],
                               jax.vmap(jax.grad(theirs))(batch)["a"], rtol=1e-12)


defrule(scipy.special.exp10, "x", deriv={"x": "ans * 2.302585092994046"})


def test_defrule_registers_a_scipy_function():
    ln10 = np.log(10.0)

    def f(x):
        return np.sum(scipy.special.exp10(x) * x)
    x = np.array([-0.5, 0.25, 2.0])
    e = 10.0 ** x
    np.testing.assert_allclose(grad(f)(x), e + x * e * ln10)
    h = hessian(lambda v: np.sum(scipy.special.exp10(v)))(x)
    np.testing.assert_allclose(h, np.diag(e * ln10 ** 2), rtol=1e-12)
    assert check_grads(f, (x,), order=2)


def test_defrule_refuses_a_function_that_has_rules():
    with pytest.raises(ValueError, match="already has rules"):
        defrule(np.exp, "x", deriv={"x": "ans"})


def test_check_grads_passes_and_fails():
    def f(x, y):
        return np.sum(np.tanh(x) * y ** 2)
    assert check_grads(f, (np.array([0.1, 0.5]), np.array([1.0, -2.0])), order=2)
    with pytest.raises(AssertionError, match="reverse mode"):
        check_grads(lambda x: clip_gradient(x) * 5.0, (np.array([1.0, 2.0]),), order=1,
                    modes=("rev",))
    with pytest.raises(ValueError, match="unknown modes"):
        check_grads(f, (1.0, 1.0), modes=("sideways",))


# -- forward mode through custom_vjp, and second order through either rule ---------------------

def _square_with_rule():
    @custom_vjp
    def sq(x):
        return x ** 2
    sq.defvjp(lambda x: (x ** 2, x), lambda x, g: (2.0 * g * x,))
    return sq


def test_jvp_and_jacfwd_of_custom_vjp_transpose_its_bwd():
    sq = _square_with_rule()
    x = np.array([0.3, 1.2, -0.7])
    t = np.array([1.0, -2.0, 0.5])
    out, tan = jvp(lambda z: np.sum(sq(z) * z), (x,), (t,))
    np.testing.assert_allclose(tan, np.sum(3 * x ** 2 * t), rtol=1e-12)
    np.testing.assert_allclose(jacfwd(sq)(x), np.diag(2 * x), rtol=1e-12)


@pytest.mark.parametrize("kind", ["vjp", "jvp"])
def test_second_order_through_a_custom_rule_is_refused_not_zero(kind):
    if kind == "vjp":
        f = _square_with_rule()
    else:
        @custom_jvp
        def f(x):
            return np.sin(x)
        f.defjvp(lambda p, t: (np.sin(p[0]), t[0] * np.cos(p[0])))
    x = np.array([0.3, 1.2, -0.7])
    for T in (hessian, lambda g: jacrev(grad(g))):
        with pytest.raises(TranspileError, match=f"custom_{kind} rule of {f.__name__}"):
            T(lambda z: np.sum(f(z)))(x)


def test_a_bwd_cotangent_of_another_shape_than_its_argument_is_an_error():
    # (grad of a scalar came back with shape (3,), as bwd left it unsummed over the broadcast)
    @custom_vjp
    def scaled(x, b):
        return x * b

    def fwd(x, b):
        return x * b, (x, b)

    def bwd(res, g):
        x, b = res
        return g * b, g * x          # the second should be np.sum(g * x)
    scaled.defvjp(fwd, bwd)
    with pytest.raises(ValueError, match=r"shape \(3,\) for 'b', whose shape is \(\)"):
        grad(lambda b: np.sum(scaled(np.ones(3), b)))(2.0)


def test_a_custom_function_with_several_outputs_is_refused_clearly():
    # (grad crashed in generated code: "Cannot construct a dtype from an array"; jvp returned
    # one stacked tangent)
    @custom_vjp
    def sin_cos(a):
        return np.sin(a), np.cos(a)
    sin_cos.defvjp(lambda a: ((np.sin(a), np.cos(a)), a),
                   lambda a, g: (np.cos(a) * g[0] - np.sin(a) * g[1],))
    x = np.array([0.1, 0.2])
    with pytest.raises(TypeError, match="sin_cos: .* returns one array .* not a tuple"):
        grad(lambda a: np.sum(sin_cos(a)[0]))(x)


def _rules_whose_primal_differs():
    """f(a) = a, while fwd and the jvp rule give 2a (a differently computed primal): JAX's
    output under differentiation is fwd's / the rule's."""
    @custom_vjp
    def fv(a):
        return a * 1.0
    fv.defvjp(lambda a: (a * 2.0, a), lambda res, g: (g * 5.0,))

    @custom_jvp
    def fj(a):
        return a * 1.0
    fj.defjvp(lambda p, t: (p[0] * 2.0, t[0] * 5.0))
    return fv, fj


def _losses(f, xp):
    def loss(a):
        return xp.sum(xp.sin(f(a)))

    def looped(a):
        s = 0.0
        for i in range(2):
            s = s + xp.sum(f(a * (i + 1)))
        return s
    return loss, looped


def test_the_primal_output_under_differentiation_is_fwds_or_the_rules_as_in_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    from transpile import jit, value_and_grad, vjp, vmap
    fv, fj = _rules_whose_primal_differs()

    @jax.custom_vjp
    def jfv(a):
        return a * 1.0
    jfv.defvjp(lambda a: (a * 2.0, a), lambda res, g: (g * 5.0,))

    @jax.custom_jvp
    def jfj(a):
        return a * 1.0
    jfj.defjvp(lambda p, t: (p[0] * 2.0, t[0] * 5.0))

    x = np.array([0.3, -1.2, 2.0])
    X = np.stack([x, 2 * x])
    for ours, theirs in ((fv, jfv), (fj, jfj)):
        loss, looped = _losses(ours, np)
        jloss, jlooped = _losses(theirs, jnp)
        for got, want in (
                (value_and_grad(loss)(x), jax.value_and_grad(jloss)(x)),
                (jit(value_and_grad(loss))(x), jax.jit(jax.value_and_grad(jloss))(x)),
                (vmap(value_and_grad(loss))(X), jax.vmap(jax.value_and_grad(jloss))(X)),
                (value_and_grad(looped)(x), jax.value_and_grad(jlooped)(x)),
                (vjp(ours, x)[0], jax.vjp(theirs, x)[0]),
                (ours(x), theirs(x)),                       # not differentiated: f's output
                (jit(loss)(x), jax.jit(jloss)(x)),
                (vmap(ours)(X), jax.vmap(theirs)(X))):
            for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
                np.testing.assert_allclose(g, np.asarray(w), rtol=1e-12)
    t = np.array([1.0, 0.5, -2.0])
    out, tan = jvp(fj, (x,), (t,))
    jout, jtan = jax.jvp(jfj, (x,), (t,))
    np.testing.assert_allclose(out, jout, rtol=1e-12)
    np.testing.assert_allclose(tan, jtan, rtol=1e-12)
    # JAX refuses jvp of a custom_vjp; ours transposes bwd, its primal output is fwd's
    np.testing.assert_allclose(jvp(fv, (x,), (t,))[0], 2 * x, rtol=1e-12)


def test_nondiff_argnums_and_pytree_arguments_as_in_jax():
    # (nondiff_argnums raised TypeError: unexpected keyword argument; a dict argument was
    # refused: "custom rules take array arguments only")
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    from functools import partial
    from transpile import jit, value_and_grad, vmap

    def make(cvjp, cjvp, xp):
        @partial(cvjp, nondiff_argnums=(1, 2))
        def clip(x, act, c):
            return act(x) * 1.0
        clip.defvjp(lambda x, act, c: (act(x) * 1.0, x),
                    lambda act, c, x, g: (xp.clip(g * 3.0, -c, c),))

        @cvjp
        def pf(p, s):
            return xp.sum(p["a"] * p["b"]) * s
        pf.defvjp(lambda p, s: (xp.sum(p["a"] * p["b"]) * s, (p, s)),
                  lambda r, g: ({"a": g * r[0]["b"] * r[1], "b": g * r[0]["a"] * r[1]},
                                g * xp.sum(r[0]["a"] * r[0]["b"]) * 2.0))

        @partial(cjvp, nondiff_argnums=(0,))
        def scaled(k, p):
            return xp.sin(p["w"]) * k + p["b"]

        def scaled_rule(k, primals, tangents):
            (p,), (t,) = primals, tangents
            return xp.sin(p["w"]) * k + p["b"], xp.cos(p["w"]) * t["w"] * k * 2.0 + t["b"]
        scaled.defjvp(scaled_rule)

        def loss(x, p):
            return (xp.sum(clip(x, xp.tanh, 0.5)) + pf(p, 1.5) +
                    xp.sum(scaled(3.0, {"w": x, "b": p["a"]})))
        return loss
    ours = make(custom_vjp, custom_jvp, np)
    theirs = make(jax.custom_vjp, jax.custom_jvp, jnp)
    x = np.array([0.3, -1.2, 2.0])
    P = {"a": np.array([1.0, 2.0, -1.0]), "b": np.array([3.0, 4.0, 0.5])}
    X = np.stack([x, 2 * x])

    def same(got, want):
        gl, gt = jax.tree_util.tree_flatten(got)
        wl, wt = jax.tree_util.tree_flatten(want)
        assert gt == wt
        for g, w in zip(gl, wl):
            np.testing.assert_allclose(g, np.asarray(w), rtol=1e-12)
    same(value_and_grad(ours, argnums=(0, 1))(x, P),
         jax.value_and_grad(theirs, argnums=(0, 1))(x, P))
    same(jit(grad(ours, argnums=1))(x, P), jax.jit(jax.grad(theirs, argnums=1))(x, P))
    same(vmap(grad(ours), in_axes=(0, None))(X, P),
         jax.vmap(jax.grad(theirs), in_axes=(0, None))(X, P))
    same(ours(x, P), theirs(x, P))
