"""grad / value_and_grad API: seeds, pytrees, argnums, has_aux, dtypes, errors, caching."""
import linecache
import os
import warnings

import numpy as np
import pytest

from fd import numerical_grad
from transpile.errors import TranspileWarning
import transpile
from transpile import (TranspileError, grad, hessian, jacfwd, jacobian, jacrev, jvp, show,
                       tree_flatten, tree_leaves, tree_map, tree_unflatten, value_and_grad, vjp)


def sum_logistic(x):
    return np.sum(1.0 / (1.0 + np.exp(-x)))


def mse(x, y):
    return np.sum((x - y) ** 2)


def loss_fn(params, X, y):
    output = np.matmul(X, params['w']) + params['b']
    return np.sum((output - y) ** 2)


def mse_aux(x, y):
    return mse(x, y), {'add': x + y, 'del': x - y}


# ---- seeds ------------------------------------------------------------------------------------

def test_seed_cubic_at_two():
    assert grad(lambda x: x ** 3 + 2 * x)(2.0) == pytest.approx(14.0)


def test_seed_sum_logistic():
    g = grad(sum_logistic)(np.arange(3.))
    np.testing.assert_allclose(g, [0.25, 0.19661193, 0.10499359], rtol=1e-6)


def test_seed_mse_argnums_tuple():
    x = np.arange(5.)
    y = x + 0.1
    gx, gy = grad(mse, argnums=(0, 1))(x, y)
    np.testing.assert_allclose(gx, 2 * (x - y))
    np.testing.assert_allclose(gy, -2 * (x - y))
    np.testing.assert_allclose(grad(mse)(x, y), 2 * (x - y))
    np.testing.assert_allclose(grad(mse, argnums=-1)(x, y), -2 * (x - y))


def test_seed_dict_params_loss():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(32, 7))
    y = np.zeros(10)
    params = {'w': rng.normal(size=(7, 10)), 'b': np.zeros(10)}
    g = grad(loss_fn)(params, X, y)
    assert set(g) == {'w', 'b'}
    out = X @ params['w'] + params['b']
    np.testing.assert_allclose(g['w'], X.T @ (2 * (out - y)))
    np.testing.assert_allclose(g['b'], np.sum(2 * (out - y), axis=0))


def test_seed_has_aux():
    x = np.arange(5.)
    y = x + np.ones(5) * 0.1
    g, aux = grad(mse_aux, has_aux=True)(x, y)
    np.testing.assert_allclose(g, 2 * (x - y))
    np.testing.assert_allclose(aux['add'], x + y)
    np.testing.assert_allclose(aux['del'], x - y)
    (v, aux2), g2 = value_and_grad(mse_aux, has_aux=True)(x, y)
    assert v == pytest.approx(mse(x, y))
    np.testing.assert_allclose(aux2['del'], x - y)
    np.testing.assert_allclose(g2, g)


def test_value_and_grad():
    x = np.linspace(-1, 1, 7)
    v, g = value_and_grad(sum_logistic)(x)
    assert v == pytest.approx(sum_logistic(x))
    np.testing.assert_allclose(g, numerical_grad(sum_logistic, [x]), rtol=1e-6)


# ---- pytrees ----------------------------------------------------------------------------------

def nested_loss(p, x):
    h = np.tanh(x @ p['layers'][0][0] + p['layers'][0][1])
    out = h @ p['layers'][1][0] + p['layers'][1][1]
    return np.mean(out ** 2) + p['scale'] * np.sum(x)


def test_nested_pytree_gradient_structure_and_values():
    rng = np.random.default_rng(2)
    p = {'layers': [(rng.normal(size=(3, 4)), rng.normal(size=4)),
                    (rng.normal(size=(4, 2)), rng.normal(size=2))], 'scale': 0.5}
    x = rng.normal(size=(5, 3))
    g = grad(nested_loss)(p, x)
    assert tree_flatten(g)[1] == tree_flatten(p)[1]
    leaves, tree = tree_flatten(p)
    for i, leaf in enumerate(leaves):
        def f_leaf(v, i=i):
            ls = list(leaves)
            ls[i] = v
            return nested_loss(tree_unflatten(tree, ls), x)
        want = numerical_grad(f_leaf, [np.asarray(leaf, dtype=float)])
        np.testing.assert_allclose(tree_leaves(g)[i], want, rtol=1e-5, atol=1e-7)


def test_tree_utilities_match_jax_conventions():
    tree = {'b': [1, (2, 3)], 'a': 4}
    leaves, td = tree_flatten(tree)
    assert leaves == [4, 1, 2, 3]          # dict keys sorted
    assert tree_unflatten(td, leaves) == tree
    assert tree_map(lambda a, b: a + b, tree, tree) == {'b': [2, (4, 6)], 'a': 8}
    assert tree_leaves([None, 1]) == [1]
    with pytest.raises(ValueError):
        tree_map(lambda a, b: a, {'a': 1}, {'b': 1})


def test_tree_utilities_take_is_leaf_and_a_prefix_structure_as_jax():
    # (tree_map(..., is_leaf=...) raised TypeError: unexpected keyword argument)
    jax = pytest.importorskip("jax")
    tu = jax.tree_util
    x = np.array([1.0, 2.0])
    tree = {"b": [x, (3.0, None)], "a": {"z": x * 2, "y": ()}, "c": None}
    for is_leaf in (lambda n: isinstance(n, tuple), lambda n: n is None,
                    lambda n: isinstance(n, list), lambda n: isinstance(n, dict) and "z" in n):
        def count(v):
            return len(tu.tree_leaves(v)) if not isinstance(v, np.ndarray) else v.size
        got = tree_map(count, tree, is_leaf=is_leaf)
        want = tu.tree_map(count, tree, is_leaf=is_leaf)
        assert got == want
        assert [repr(v) for v in tree_leaves(tree, is_leaf=is_leaf)] == \
            [repr(v) for v in tu.tree_leaves(tree, is_leaf=is_leaf)]
        leaves, td = tree_flatten(tree, is_leaf=is_leaf)
        assert len(leaves) == td.num_leaves == len(tu.tree_flatten(tree, is_leaf=is_leaf)[0])
        jleaves, jtd = tu.tree_flatten(tree, is_leaf=is_leaf)
        assert repr(tree_unflatten(td, leaves)) == repr(tu.tree_unflatten(jtd, jleaves))
    # the other trees may hold a whole subtree where the first has a leaf (a prefix)
    first, second = {"w": 1.0, "b": 2.0}, {"w": (x, x), "b": [x]}
    got = tree_map(lambda a, b: len(b), first, second)
    assert got == tu.tree_map(lambda a, b: len(b), first, second)
    with pytest.raises(ValueError):
        tree_map(lambda a, b: a, second, first)


# ---- dtypes -----------------------------------------------------------------------------------

def test_float32_in_float32_out():
    x = np.linspace(-2, 2, 11).astype(np.float32)
    g = grad(sum_logistic)(x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, grad(sum_logistic)(x.astype(np.float64)), rtol=1e-5)
    W = np.ones((3, 2), np.float32)
    gw = grad(lambda W, x: np.sum(np.tanh(x @ W) ** 2))(W, np.ones((4, 3), np.float32))
    assert gw.dtype == np.float32


def test_integer_input_is_an_error():
    with pytest.raises(TypeError, match="float"):
        grad(sum_logistic)(np.arange(3))
    with pytest.raises(TypeError, match="2.0 instead of 2"):
        grad(lambda x: x * x)(2)


# ---- errors -----------------------------------------------------------------------------------

def uses_try(x):
    try:
        y = x * 2
    except ValueError:
        y = x
    return np.sum(y)


def uses_with(x):
    with open("f") as f:
        pass
    return x


def returns_vector(x):
    return x * 2


def test_unsupported_syntax_names_file_line_and_construct():
    with pytest.raises(TranspileError) as e:
        grad(uses_try)(np.ones(2))
    msg = str(e.value)
    assert "test_grad_api.py:" in msg and "try/except" in msg
    line = int(msg.split("test_grad_api.py:")[1].split(":")[0])
    assert "try:" in linecache.getline(__file__, line)
    with pytest.raises(TranspileError, match="with"):
        grad(uses_with)(np.ones(2))


def test_non_scalar_output_is_an_error():
    with pytest.raises(TypeError, match=r"scalar.*shape \(3,\)"):
        grad(returns_vector)(np.ones(3))


def test_bad_argnums():
    with pytest.raises(ValueError, match="out of range"):
        grad(mse, argnums=2)
    with pytest.raises(TypeError, match="argnums"):
        grad(mse, argnums="x")


def test_callable_without_source_or_rule_is_named():
    import math

    def f(x):
        return math.ldexp(x, 1)
    with pytest.raises(transpile.NoRuleError, match="ldexp"):
        grad(f)(2.0)


def test_has_aux_requires_pair():
    with pytest.raises(TranspileError, match="has_aux"):
        grad(sum_logistic, has_aux=True)(np.ones(2))


# ---- generated code, files, caching -----------------------------------------------------------

def test_generated_file_is_real_and_readable():
    g = grad(loss_fn)
    src = show(g, {'w': np.ones((2, 3)), 'b': np.ones(3)}, np.ones((4, 2)), np.ones(3))
    assert "def loss_fn__grad(params_b, params_w, X, y):" in src
    assert "dparams_w" in src and "# line" in src and "adjoint of line" in src
    spec = next(iter(g._cache.values()))
    assert spec.path.startswith(os.environ["TRANSPILE_CACHE_DIR"])
    assert open(spec.path).read() == src
    assert oct(os.stat(spec.path).st_mode & 0o777) == oct(0o600)


def test_traceback_lands_in_generated_file():
    def bad(x):
        return np.sum(np.dot(x, np.ones(5)))
    with pytest.raises(ValueError) as e:
        grad(bad)(np.ones(3))
    frames = [str(f.path) for f in e.traceback]
    assert any("bad__grad__" in f for f in frames)


SCALE = 2.0


def scaled(x):
    return SCALE * np.sum(x ** 2)


def helper(x):
    return np.sum(x ** 2)


def calls_helper(x):
    return helper(x) * 3.0


def test_globals_and_helpers_changes_are_never_stale():
    global SCALE, helper
    g = grad(scaled)
    np.testing.assert_allclose(g(np.ones(2)), [4.0, 4.0])
    SCALE = 3.0
    try:
        np.testing.assert_allclose(g(np.ones(2)), [6.0, 6.0])
    finally:
        SCALE = 2.0
    gh = grad(calls_helper)
    np.testing.assert_allclose(gh(np.ones(2)), [6.0, 6.0])
    old = helper

    def helper(x):  # noqa: F811  (redefinition is the point)
        return np.sum(x ** 3)
    try:
        np.testing.assert_allclose(gh(np.ones(2)), [9.0, 9.0])
    finally:
        helper = old


def test_global_array_is_read_at_call_time():
    import types
    mod = types.ModuleType("m")
    exec("import numpy as np\nW = np.ones(3)\ndef f(x):\n    return np.sum(W * x)\n", mod.__dict__)
    # exec'd code has no file: transpile says so clearly
    with pytest.raises(TranspileError, match="source"):
        grad(mod.f)(np.ones(3))


def test_closure_variable():
    k = np.array([1.0, 2.0, 3.0])

    def f(x):
        return np.sum(k * x ** 2)
    np.testing.assert_allclose(grad(f)(np.ones(3)), 2 * k)


def test_static_python_flag_picks_branch():
    def f(x, square=True):
        if square:
            return np.sum(x ** 2)
        return np.sum(x)
    np.testing.assert_allclose(grad(f)(np.ones(2)), [2.0, 2.0])
    np.testing.assert_allclose(grad(f)(np.ones(2), False), [1.0, 1.0])


def test_decorator_forms():
    @grad
    def f(x):
        return np.sum(np.sin(x))

    @transpile.grad(argnums=1)
    def h(x, y):
        return np.sum(x * y)
    np.testing.assert_allclose(f(np.zeros(2)), [1.0, 1.0])
    np.testing.assert_allclose(h(np.full(2, 3.0), np.ones(2)), [3.0, 3.0])
    assert f.__name__ == "f"


def test_calls_to_user_functions_are_inlined():
    def sigmoid(z):
        return 1.0 / (1.0 + np.exp(-z))

    def model(w, x):
        return np.sum(sigmoid(x @ w))
    w = np.array([0.5, -0.3])
    x = np.array([[1.0, 2.0], [0.5, -1.0]])
    np.testing.assert_allclose(grad(model)(w, x), numerical_grad(model, [w, x]), rtol=1e-6)


# ---- forward mode, jacobians, higher order (straight-line code) -------------------------------

def test_jvp_vjp():
    x = np.array([0.1, 0.2, 0.3])
    v = np.array([1.0, 0.5, -1.0])
    out, t = jvp(lambda x: np.sin(x) * x, (x,), (v,))
    np.testing.assert_allclose(out, np.sin(x) * x)
    np.testing.assert_allclose(t, (np.cos(x) * x + np.sin(x)) * v)
    out, pull = vjp(lambda x: np.sin(x) * x, x)
    (ct,) = pull(v)
    np.testing.assert_allclose(ct, (np.cos(x) * x + np.sin(x)) * v)


def test_jacobians_and_hessian():
    x = np.arange(3.)
    np.testing.assert_allclose(jacobian(np.exp)(x), np.diag(np.exp(x)), rtol=1e-12)
    np.testing.assert_allclose(jacfwd(np.exp)(x), np.diag(np.exp(x)), rtol=1e-12)
    np.testing.assert_allclose(jacrev(lambda x: x[::-1] * 2)(x), 2 * np.eye(3)[::-1])
    s = 1 / (1 + np.exp(-x))
    np.testing.assert_allclose(hessian(sum_logistic)(x), np.diag(s * (1 - s) * (1 - 2 * s)),
                               atol=1e-12)


def test_grad_of_grad_of_grad():
    f = lambda x: x ** 3 + 2 * x  # noqa: E731
    assert grad(grad(f))(2.0) == pytest.approx(12.0)
    assert grad(grad(grad(f)))(2.0) == pytest.approx(6.0)
    assert grad(grad(grad(sum_logistic)))(1.0) == pytest.approx(-0.0353256, rel=1e-5)


def test_grad_of_grad_through_matmul_and_reductions():
    rng = np.random.default_rng(3)
    A = rng.normal(size=(3, 3))

    def f(x):
        return np.sum(np.tanh(A @ x) ** 2) + np.max(x) * np.mean(x)

    def gsum(x):
        return np.sum(grad(f)(x) * np.arange(1.0, 4.0))
    x = rng.normal(size=3)
    np.testing.assert_allclose(grad(lambda x: np.sum(grad(f)(x) * np.arange(1.0, 4.0)))(x),
                               numerical_grad(gsum, [x]), rtol=1e-5, atol=1e-7)


def test_function_from_notebook_cell_via_linecache():
    """IPython/Jupyter register each cell's text in linecache under a pseudo file name."""
    cell = "import numpy as np\ndef cell_fn(x):\n    y = np.sin(x)\n    return np.sum(y * y)\n"
    name = "<ipython-input-7-abcdef>"
    linecache.cache[name] = (len(cell), None, cell.splitlines(True), name)
    ns = {}
    exec(compile(cell, name, "exec"), ns)
    x = np.array([0.3, 0.7])
    np.testing.assert_allclose(grad(ns["cell_fn"])(x), 2 * np.sin(x) * np.cos(x))
    assert "# line 3: y = np.sin(x)" in grad(ns["cell_fn"]).source


def test_generated_names_do_not_collide_with_users():
    def f(x, dx):
        out = x * dx
        out_1 = np.sin(out)
        return np.sum(out_1 * dx)
    x, dx = np.array([0.1, 0.2]), np.array([1.5, 2.0])
    np.testing.assert_allclose(grad(f)(x, dx), numerical_grad(f, [x, dx]), rtol=1e-6)
    src = grad(f).source
    assert "dx_2" in src or "ddx" in src


def test_nested_def_and_lambda_at_call_site():
    def outer():
        def inner(x):
            return np.sum(np.cos(x))
        return inner
    np.testing.assert_allclose(grad(outer())(np.zeros(2)), [0.0, 0.0])
    pair = (lambda x: np.sum(x * 2.0), lambda x: np.sum(x * 3.0))
    np.testing.assert_allclose(grad(pair[1])(np.ones(2)), [3.0, 3.0])
    np.testing.assert_allclose(grad(pair[0])(np.ones(2)), [2.0, 2.0])


def test_tuple_unpacking_and_augmented_assignment():
    def f(p):
        a, b = p
        a += b * 2
        a *= a
        return np.sum(a)
    p = (np.array([1.0, 2.0]), np.array([0.5, -1.0]))
    want_a = 2 * (p[0] + 2 * p[1])
    left = (p[0] + 2 * p[1]) ** 2
    ga, gb = grad(f)(p)
    np.testing.assert_allclose(ga, want_a)
    np.testing.assert_allclose(gb, 2 * want_a)
    np.testing.assert_allclose(p[0], left)   # `a += ...` wrote into p[0] in place, as in NumPy


def test_string_key_on_array_leaf_is_a_clear_error():
    def f(params):
        return np.sum(params['w'] ** 2)
    with pytest.raises(TranspileError, match="string key needs a dict"):
        grad(f)(np.ones(3))
    np.testing.assert_allclose(grad(f)({'w': np.ones(2)})['w'], [2.0, 2.0])


def test_float_conversion_keeps_the_derivative():
    def f(x):
        return float(x) ** 2 * 3.0
    assert grad(f)(2.0) == pytest.approx(12.0)


def test_transforming_a_jacobian_again_differentiates_it():
    # sum(jacobian(sin)(x)) = sum(cos(x)) (a diagonal Jacobian): its gradient is -sin(x)
    x = np.arange(3.0)
    np.testing.assert_allclose(grad(lambda x: np.sum(jacrev(np.sin)(x)))(x), -np.sin(x),
                               atol=1e-12)
    np.testing.assert_allclose(grad(lambda x: np.sum(jacfwd(np.sin)(x)))(x), -np.sin(x),
                               atol=1e-12)


def test_jit_hessian_is_one_generated_function():
    from transpile import jit
    x = np.linspace(-1.5, 2.0, 7)
    s = 1 / (1 + np.exp(-x))
    h = jit(hessian(sum_logistic))(x)
    np.testing.assert_allclose(h, np.diag(s * (1 - s) * (1 - 2 * s)), atol=1e-12)
    x32 = x.astype(np.float32)
    h32 = jit(hessian(sum_logistic))(x32)
    assert h32.dtype == np.float32
    np.testing.assert_allclose(h32, h, atol=1e-6)

    def quartic(w, A):
        return np.sum((A @ w) ** 4) + np.sum(np.sin(w))
    A = np.array([[1.0, 0.5, 0.0], [0.2, -1.0, 0.3]])
    w = np.array([0.3, -0.2, 0.5])
    np.testing.assert_allclose(jit(hessian(quartic))(w, A), hessian(quartic)(w, A), rtol=1e-10)
    # a 2-D argument: also one generated function (H[i, j, k, l] = d2 f / dM[i, j] dM[k, l])
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranspileWarning)
        h2 = jit(hessian(lambda M: np.sum(M ** 3)))(np.full((2, 2), 2.0))
    np.testing.assert_allclose(h2.reshape(4, 4), np.diag(np.full(4, 12.0)), atol=1e-12)
    np.testing.assert_allclose(hessian(lambda M: np.sum(M ** 3))(np.ones((2, 2))).reshape(4, 4),
                               np.diag(np.full(4, 6.0)))


def test_functools_wraps_decorator_is_not_skipped():
    import functools

    def doubling(f):
        @functools.wraps(f)
        def wrapper(x):
            return 2.0 * f(x)
        return wrapper

    @doubling
    def f(x):
        return np.sum(x ** 2)
    np.testing.assert_allclose(grad(f)(np.ones(2)), [4.0, 4.0])


def test_jvp_of_an_integer_primal_needs_a_float0_tangent_as_in_jax():
    # (an int primal with a float tangent silently gave a zero tangent: jvp(f, (3,), (1.0,))
    # -> (6, 0), while an int array primal gave 2)
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    assert np.dtype(transpile.float0) == np.dtype(jax.dtypes.float0)

    def f(t):
        return t * 2
    for p, t in (((3,), (1.0,)), ((np.arange(3),), (np.ones(3),)), ((True,), (1.0,)),
                 ((np.arange(3),), (np.arange(3),))):
        with pytest.raises(TypeError):
            jax.jvp(f, p, t)
        with pytest.raises(TypeError, match="float0"):
            jvp(f, p, t)
    z = np.zeros((), dtype=transpile.float0)
    for fun, p, t in ((f, (3,), (z,)),
                      (lambda t, x: t * x, (np.arange(3), 2.0),
                       (np.zeros(3, dtype=transpile.float0), 1.0)),
                      (lambda x: (x, np.argmax(x)), (np.arange(3.0),), (np.ones(3),))):
        got, want = jvp(fun, p, t), jax.jvp(fun, p, t)
        gl, wl = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
        assert len(gl) == len(wl)
        for g, w in zip(gl, wl):
            assert np.asarray(g).dtype == np.asarray(w).dtype or \
                np.asarray(g).dtype.kind == np.asarray(w).dtype.kind == "f"
            if np.asarray(w).dtype != transpile.float0:
                np.testing.assert_allclose(g, np.asarray(w), rtol=1e-12)


def test_jvp_has_aux_as_in_jax():
    # (jvp(..., has_aux=True) raised TypeError: unexpected keyword argument)
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    x, t = np.array([0.3, -1.2, 2.0]), np.array([1.0, 0.5, -2.0])

    def make(xp):
        def f(z, w):
            return xp.sin(z) * w, {"a": z * w, "n": xp.sum(z)}
        return f
    got = jvp(make(np), (x, 2.0), (t, 0.5), has_aux=True)
    want = jax.jvp(make(jnp), (x, 2.0), (t, 0.5), has_aux=True)
    assert len(got) == 3
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-12)
    assert jax.tree_util.tree_structure(got[2]) == jax.tree_util.tree_structure(want[2])
    with pytest.raises(TypeError, match="pair"):
        jvp(lambda z: np.sin(z), (x,), (t,), has_aux=True)


def test_a_vjp_function_can_be_transformed_again_as_in_jax():
    # (vmap(pullback)(np.eye(n)), jit(pullback), grad through it: "no rule for type: it has
    # no Python source", naming runtime/tape.py)
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    from transpile import jit, vmap
    x = np.array([0.3, -1.2, 2.0])
    P = {"w": np.array([0.5, -1.0, 2.0]), "b": 0.7}

    def make(xp):
        def f(z, p):
            return xp.sin(z) * z[0] * p["w"] + p["b"] * z
        return f
    _, pb = vjp(make(np), x, P)
    _, jpb = jax.vjp(make(jnp), x, P)
    eye, c = np.eye(3), np.array([1.0, -0.5, 2.0])

    def same(got, want):
        gl, gt = jax.tree_util.tree_flatten(got)
        wl, wt = jax.tree_util.tree_flatten(want)
        assert gt == wt
        for g, w in zip(gl, wl):
            np.testing.assert_allclose(g, np.asarray(w), rtol=1e-12, atol=1e-14)
    same(pb(c), jpb(c))
    same(vmap(pb)(eye), jax.vmap(jpb)(eye))
    same(jit(pb)(c), jax.jit(jpb)(c))
    same(grad(lambda v: np.sum(pb(v)[0] ** 2) + pb(v)[1]["b"])(c),
         jax.grad(lambda v: jnp.sum(jpb(v)[0] ** 2) + jpb(v)[1]["b"])(c))


def test_functools_partial_of_a_transformed_function_can_be_transformed_as_in_jax():
    # (grad(partial(jit(f), n=2)) and the like: "cannot transform functools.partial(<jit of
    # f>, n=2): it is not a Python function")
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    from functools import partial
    from transpile import jit, vmap
    x = np.array([0.3, -1.2, 2.0])
    X = np.stack([x, 2 * x])
    c = x.copy()

    def power_sum(xp):
        return lambda z, n: xp.sum(xp.sin(z) ** n)

    def weighted(xp):
        return lambda w, z: xp.sum(xp.tanh(z * w))

    def prod(xp):
        return lambda a, b: xp.sum(xp.sin(a) * b)

    def same(got, want):
        np.testing.assert_allclose(got, np.asarray(want), rtol=1e-12)
    same(grad(partial(jit(power_sum(np), static_argnums=1), n=3))(x),
         jax.grad(partial(jax.jit(power_sum(jnp), static_argnums=1), n=3))(x))
    vw = vmap(partial(jit(weighted(np)), c))
    same(vw(X), jax.vmap(partial(jax.jit(weighted(jnp)), c))(X))
    c *= 2.0                          # the bound array is read at each call
    same(vw(X), jax.vmap(partial(jax.jit(weighted(jnp)), c))(X))
    same(jit(partial(grad(prod(np)), b=x))(x), jax.jit(partial(jax.grad(prod(jnp)), b=x))(x))


def test_hessian_and_holomorphic_jacobian_errors_name_the_transform_called():
    # (hessian of an int array said "grad requires <lambda> to return a float"; jacfwd/jacrev
    # with holomorphic=True of a real input said "grad(..., holomorphic=True)")
    with pytest.raises(TypeError, match=r"^hessian requires float inputs"):
        hessian(lambda t: np.sum(t ** 3))(np.arange(3))
    for name, T in (("jacfwd", jacfwd), ("jacrev", jacrev)):
        with pytest.raises(TypeError, match=rf"^{name}\(\.\.\., holomorphic=True\) requires "
                                            "complex inputs"):
            T(lambda t: t * 2, holomorphic=True)(np.ones(2))
