"""vmap: batched generated source compared with a Python loop over the examples."""
import numpy as np
import pytest

from transpile import grad, show, vmap
from transpile.errors import TranspileError

rng = np.random.default_rng(0)
mat = rng.normal(size=(150, 100))
W1 = rng.normal(size=(8, 5))
b1 = rng.normal(size=8)
W2 = rng.normal(size=(3, 8))


def loop(f, *args, in_axes=0):
    """The oracle: np.stack([f(x) for x in batch])."""
    axes = in_axes if isinstance(in_axes, (tuple, list)) else [in_axes] * len(args)
    n = next(np.shape(a)[ax] for a, ax in zip(args, axes) if ax is not None)
    outs = []
    for i in range(n):
        outs.append(f(*[a if ax is None else np.take(a, i, axis=ax) for a, ax in zip(args, axes)]))
    return np.stack(outs)


# ---- seed functions --------------------------------------------------------------------------


def apply_matrix(v):
    return np.dot(mat, v)


def vec_vec_dot(x, y):
    return np.dot(x, y)


def one_hot(y, deep):
    ret = np.zeros(deep, dtype='float32')
    ret[y] = 1
    return ret


def selu(x, alpha=1.67, lmbda=1.05):
    return lmbda * np.where(x > 0, x, alpha * np.exp(x) - alpha)


def norm(x):
    return x / np.linalg.norm(x)


def softmax(x):
    e = np.exp(x - np.max(x))
    return e / np.sum(e)


def relu(z):
    return np.maximum(z, 0.0)


def mlp(x):
    h = relu(W1 @ x + b1)
    return softmax(W2 @ h)


def mlp_params(params, x):
    h = np.tanh(np.dot(params["W"], x) + params["b"])
    return np.sum(h ** 2)


def squared_loss(w, x, y):
    return (np.dot(x, w) - y) ** 2


def centered(x):
    return (x - x.mean(0)) / x.std(0)


def matrix_ops(a):
    t = a.T
    s = np.sum(a, axis=0, keepdims=True)
    r = np.reshape(a, (-1,))
    c = np.concatenate([r, r * 2.0])
    return np.sum(t @ a) + np.sum(s) + np.max(c) + np.trace(a)


def mixed_ranks(x, m):
    return np.sum(x * m, axis=-1) + x[0] - m[:, 1]


def two_outputs(x, y):
    return x * y, np.sum(x)


# ---- tests --------------------------------------------------------------------------------


def test_apply_matrix_is_one_matrix_product():
    xs = rng.normal(size=(10, 100))
    f = vmap(apply_matrix)
    np.testing.assert_allclose(f(xs), loop(apply_matrix, xs), rtol=1e-12)
    src = "\n".join(l for l in show(f, xs).splitlines() if not l.strip().startswith("#"))
    products = src.count("np.dot(") + src.count("np.matmul(") + src.count("np.einsum(") + \
        src.count(" @ ")
    assert products == 1, src
    assert "for " not in src and "batch_parts" not in src, src


def test_vec_vec_dot_in_axes_0_none_is_matrix_vector():
    xs, y = rng.normal(size=(10, 100)), rng.normal(size=100)
    f = vmap(vec_vec_dot, in_axes=(0, None))
    np.testing.assert_allclose(f(xs, y), loop(vec_vec_dot, xs, y, in_axes=(0, None)))
    assert "for " not in show(f, xs, y)


def test_vec_vec_dot_in_axes_0_1():
    xs, ys = rng.normal(size=(10, 100)), rng.normal(size=(100, 10))
    f = vmap(vec_vec_dot, in_axes=(0, 1))
    np.testing.assert_allclose(f(xs, ys), loop(vec_vec_dot, xs, ys, in_axes=(0, 1)))
    assert "for " not in show(f, xs, ys)


def test_vec_vec_dot_negative_axis():
    xs, ys = rng.normal(size=(10, 4)), rng.normal(size=(4, 10))
    f = vmap(vec_vec_dot, in_axes=(0, -1))
    np.testing.assert_allclose(f(xs, ys), loop(vec_vec_dot, xs, ys, in_axes=(0, 1)))


def test_one_hot():
    y = np.array([3, 0, 9, 1])
    out = vmap(one_hot, in_axes=[0, None])(y, 10)
    np.testing.assert_array_equal(out, np.eye(10, dtype=np.float32)[y])
    assert out.dtype == np.float32


@pytest.mark.parametrize("fn", [selu, norm, softmax, relu, centered])
def test_elementwise_and_reductions(fn):
    xs = rng.normal(size=(7, 6))
    f = vmap(fn)
    np.testing.assert_allclose(f(xs), loop(fn, xs), rtol=1e-12)
    assert "for " not in show(f, xs)


def test_float32_preserved():
    xs = rng.normal(size=(5, 4)).astype(np.float32)
    assert vmap(softmax)(xs).dtype == np.float32
    assert vmap(selu)(xs).dtype == np.float32


def test_mlp_with_unbatched_weights():
    xs = rng.normal(size=(6, 5))
    f = vmap(mlp)
    np.testing.assert_allclose(f(xs), loop(mlp, xs), rtol=1e-12)
    src = show(f, xs)
    assert "for " not in src
    assert "batch_broadcast" not in src        # weights are never broadcast over the batch


def test_structure_ops():
    xs = rng.normal(size=(4, 3, 3))
    f = vmap(matrix_ops)
    np.testing.assert_allclose(f(xs), loop(matrix_ops, xs), rtol=1e-12)
    assert "for " not in show(f, xs)


def test_mixed_ranks_between_batched_and_unbatched():
    xs, m = rng.normal(size=(5, 3)), rng.normal(size=(4, 3))
    f = vmap(mixed_ranks, in_axes=(0, None))
    np.testing.assert_allclose(f(xs, m), loop(mixed_ranks, xs, m, in_axes=(0, None)))
    # x (3,) batched against m (4, 3): both sides batched the other way round too
    ms = rng.normal(size=(5, 4, 3))
    g = vmap(mixed_ranks, in_axes=(None, 0))
    np.testing.assert_allclose(g(xs[0], ms), loop(mixed_ranks, xs[0], ms, in_axes=(None, 0)))
    h = vmap(mixed_ranks)
    np.testing.assert_allclose(h(xs, ms), loop(mixed_ranks, xs, ms))
    assert "for " not in show(h, xs, ms)


def test_out_axes():
    xs = rng.normal(size=(5, 3))
    f = vmap(lambda x: np.outer(x, x), out_axes=1)
    expected = np.stack([np.outer(x, x) for x in xs], axis=1)
    np.testing.assert_allclose(f(xs), expected)
    g = vmap(two_outputs, in_axes=(0, None), out_axes=(0, None))
    y = rng.normal(size=3)
    with pytest.raises(TranspileError, match="out_axes=None"):
        g(xs, y)
    g2 = vmap(two_outputs, in_axes=(None, 0), out_axes=(-1, 0))
    a, b = g2(y, xs)
    np.testing.assert_allclose(a, (y * xs).T)
    np.testing.assert_allclose(b, np.full(5, np.sum(y)))


def test_nested_vmap():
    xs, ys = rng.normal(size=(4, 6)), rng.normal(size=(5, 6))
    pairwise = vmap(vmap(vec_vec_dot, in_axes=(None, 0)), in_axes=(0, None))
    np.testing.assert_allclose(pairwise(xs, ys), xs @ ys.T)
    assert "for " not in show(pairwise, xs, ys)
    xss = rng.normal(size=(3, 4, 6))
    f = vmap(vmap(softmax))
    np.testing.assert_allclose(f(xss), np.stack([loop(softmax, x) for x in xss]))


def test_vmap_calls_user_functions():
    xs = rng.normal(size=(6, 5))
    np.testing.assert_allclose(vmap(mlp)(xs), loop(mlp, xs))   # mlp calls relu and softmax


def test_per_example_gradients():
    w = rng.normal(size=4)
    xs, ys = rng.normal(size=(8, 4)), rng.normal(size=8)
    per_example = vmap(grad(squared_loss), in_axes=(None, 0, 0))
    got = per_example(w, xs, ys)
    analytic = 2 * (xs @ w - ys)[:, None] * xs
    np.testing.assert_allclose(got, analytic, rtol=1e-12)
    assert got.shape == (8, 4)


def test_per_example_gradients_pytree_prefix():
    params = {"W": rng.normal(size=(3, 4)), "b": rng.normal(size=3)}
    xs = rng.normal(size=(5, 4))
    f = vmap(grad(mlp_params), in_axes=({"W": None, "b": None}, 0))
    g = f(params, xs)
    for i in range(5):
        gi = grad(mlp_params)(params, xs[i])
        np.testing.assert_allclose(g["W"][i], gi["W"], rtol=1e-12)
        np.testing.assert_allclose(g["b"][i], gi["b"], rtol=1e-12)


def test_in_axes_pytree_prefix_maps_some_leaves():
    params = {"W": rng.normal(size=(5, 3, 4)), "b": rng.normal(size=3)}
    x = rng.normal(size=4)
    f = vmap(mlp_params, in_axes=({"W": 0, "b": None}, None))
    expected = [mlp_params({"W": params["W"][i], "b": params["b"]}, x) for i in range(5)]
    np.testing.assert_allclose(f(params, x), expected)


batched_selu = vmap(selu)
batched_apply = vmap(apply_matrix)


def test_grad_of_vmapped_sum():
    xs = rng.normal(size=(6, 5))

    def total(x):
        return np.sum(batched_selu(x))
    g = grad(total)(xs)
    # d selu / dx = lmbda * (1 if x > 0 else alpha * exp(x))
    expected = 1.05 * np.where(xs > 0, 1.0, 1.67 * np.exp(xs))
    np.testing.assert_allclose(g, expected, rtol=1e-12)


def test_grad_of_vmapped_matrix_product():
    xs = rng.normal(size=(10, 100))

    def total(x):
        return np.sum(batched_apply(x) ** 2)
    # Under grad the batched argument's rank is unknown, so np.dot(mat, x) falls back to a loop
    # over the batch; its rows (rt.batch_store) carry derivatives, so grad goes through it.
    g = grad(total)(xs)
    np.testing.assert_allclose(g, 2 * (xs @ mat.T) @ mat, rtol=1e-10)
    # grad inside the vmap (per-example gradients) works
    per_example = vmap(grad(lambda x: np.sum(np.dot(mat, x) ** 2)))(xs)
    np.testing.assert_allclose(per_example, 2 * (xs @ mat.T) @ mat, rtol=1e-10)


def test_branch_on_batched_data_becomes_select():
    from transpile.core import ir
    from transpile.primitives import by_name
    from transpile.batching.vectorize import BatchSweep
    from transpile.core.ir import Const, CoreFn, Eqn, Var
    from transpile.pytree import LEAF
    from transpile.core import codegen
    # def f(x): c = x > 0; if c: y = x * 2 else: y = -x; return y      (x a scalar per example)
    body = [Eqn("c", by_name("greater"), {"x": Var("x"), "y": Const(0.0)}),
            ir.If(Var("c"), [Eqn("y", by_name("multiply"), {"x": Var("x"), "y": Const(2.0)})],
                  [Eqn("y", by_name("negative"), {"x": Var("x")})])]
    core = CoreFn("f", ["x"], body, [Var("y")], LEAF)
    sweep = BatchSweep(core, [True], [0])
    sweep.start("x")
    sweep.run(core.body, {"y"})
    out = CoreFn("f__vmap", ["x"], sweep.bld.body, [Var("y")], LEAF)
    fn, _, text = codegen.load(out)
    assert "np.where" in text and "if " not in text.split("def ")[1].replace("# ", "")
    xs = np.array([-1.0, 2.0, 0.5, -3.0])
    np.testing.assert_allclose(fn(xs), np.where(xs > 0, 2 * xs, -xs))


def test_loop_on_unbatched_trip_count_stays_a_loop():
    from transpile.core import codegen
    from transpile.core.ir import Const, CoreFn, Eqn, ForRange, Var
    from transpile.primitives import by_name
    from transpile.pytree import LEAF
    from transpile.batching.vectorize import BatchSweep
    # def f(x, n): acc = 0.0; for k in range(n): acc = acc * x + 1.0; return acc
    body = [Eqn("acc", by_name("astype"), {"x": Const(0.0), "dtype": Const(np.float64)}),
            ForRange("k", Const(0), Var("n"), Const(1),
                     [Eqn("t", by_name("multiply"), {"x": Var("acc"), "y": Var("x")}),
                      Eqn("acc", by_name("add"), {"x": Var("t"), "y": Const(1.0)})])]
    core = CoreFn("f", ["x", "n"], body, [Var("acc")], LEAF)
    sweep = BatchSweep(core, [True, False], [0, 0])
    sweep.start("x")
    sweep.run(core.body, {"acc"})
    out = CoreFn("f__vmap", ["x", "n"], sweep.bld.body, [Var("acc")], LEAF)
    fn, _, text = codegen.load(out)
    assert text.count("for ") == 1 and "batch_broadcast" in text   # acc becomes batched
    xs = np.array([0.5, 2.0, -1.0])
    np.testing.assert_allclose(fn(xs, 3), xs ** 2 + xs + 1)


def test_loop_fallback_is_visible_and_correct():
    xs = rng.normal(size=(4, 3, 3))

    def logdet_like(a):
        return np.linalg.solve(a @ a.T + 3.0 * np.eye(3), a[0])
    f = vmap(logdet_like)
    np.testing.assert_allclose(f(xs), loop(logdet_like, xs), rtol=1e-10)


def test_axis_size_without_mapped_arguments():
    f = vmap(lambda x: x * 2.0, in_axes=None, axis_size=3)
    out = f(np.arange(2.0))
    np.testing.assert_allclose(out, np.tile(np.arange(2.0) * 2.0, (3, 1)))


# ---- errors -------------------------------------------------------------------------------


def test_error_different_sizes():
    f = vmap(vec_vec_dot)
    with pytest.raises(ValueError, match="different sizes.*x axis 0 has size 3.*y axis 0 has "
                                         "size 4"):
        f(np.ones((3, 2)), np.ones((4, 2)))


def test_error_nothing_mapped():
    with pytest.raises(ValueError, match="no argument is mapped.*axis_size"):
        vmap(vec_vec_dot, in_axes=None)(np.ones(2), np.ones(2))


def test_error_axis_out_of_range():
    with pytest.raises(ValueError, match="in_axes=2 is out of range for x, which has rank 2"):
        vmap(vec_vec_dot, in_axes=(2, None))(np.ones((3, 2)), np.ones(2))


def test_error_in_axes_length():
    with pytest.raises(ValueError, match="in_axes .* has 3 entries but vec_vec_dot takes 2"):
        vmap(vec_vec_dot, in_axes=(0, 0, 0))


def _ragged_mask(x):
    kept = x[x > 0]
    return np.sum(kept)


def test_ragged_boolean_mask_error_names_the_users_line():
    # each example keeps a different number of elements: no batched array holds them (JAX
    # refuses too); the error names the user's file:line and says what to do instead
    import inspect
    line = inspect.getsourcelines(_ragged_mask)[1] + 1
    xs = np.array([[1.0, -2.0, 3.0], [-1.0, -2.0, 3.0]])
    with pytest.raises(ValueError) as info:
        vmap(_ragged_mask)(xs)
    msg = str(info.value)
    assert f"test_vmap.py:{line}" in msg and "different shapes" in msg and "np.where" in msg


def _sum_or_half(x):
    if np.sum(x) > 100.0:
        return np.sum(x)
    return 0.5


def test_jit_of_vmap_over_scalar_examples_reduces_over_no_axes():
    # each example is a scalar: the batched np.sum reduces over no axes (axis=()), which the
    # fused-kernel printer once crashed on (min() of an empty sequence)
    from transpile import jit
    for xs in (np.ones(4), np.array([50.0, 150.0, -3.0])):
        want = np.array([_sum_or_half(v) for v in xs])
        np.testing.assert_allclose(vmap(_sum_or_half)(xs), want)
        np.testing.assert_allclose(jit(vmap(_sum_or_half))(xs), want)


def _dead_loop_with_break(x):
    t1 = x * 1.0
    for i in range(2):                 # nothing after the loop reads t1
        t1 = t1 * 0.5 + np.sin(x)
        if np.sum(t1) > 0.0:
            break
    t2 = np.sin(x)
    return np.sum(t2)


def test_jit_of_vmap_with_a_dead_loop_compiles():
    # the loop's body is dead once vmap loops over the batch: the printed loop body was only
    # comments (an IndentationError in the generated module); found by the random programs
    import warnings
    from transpile import TranspileWarning, grad, jit
    xs = np.stack([np.linspace(-1, 1, 5), np.linspace(-2, 0.5, 5)])
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranspileWarning)
        np.testing.assert_allclose(jit(vmap(_dead_loop_with_break))(xs),
                                   [_dead_loop_with_break(r) for r in xs])
        np.testing.assert_allclose(jit(vmap(grad(_dead_loop_with_break)))(xs), np.cos(xs))
    np.testing.assert_allclose(vmap(_dead_loop_with_break)(xs),
                               [_dead_loop_with_break(r) for r in xs])


def test_axes_given_as_a_namedtuple_or_a_registered_node_as_in_jax():
    # (a NamedTuple in_axes: "has a structure (P) but the value is a single array"; a
    # registered class: "in_axes must be an int, None, or a tuple/list/dict of those")
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    from collections import namedtuple
    from transpile import register_pytree_node
    x = np.array([0.3, -1.2, 2.0])
    X = np.stack([x, 2 * x])
    P = namedtuple("P", "w b")

    def f(p):
        return p.w * p.b

    def same(got, want):
        gl, gt = jax.tree_util.tree_flatten(got)
        wl, wt = jax.tree_util.tree_flatten(want)
        assert gt == wt
        for g, w in zip(gl, wl):
            np.testing.assert_allclose(g, np.asarray(w), rtol=1e-12)
    same(vmap(f, in_axes=(P(0, None),))(P(X, 2.0)),
         jax.vmap(f, in_axes=(P(0, None),))(P(X, 2.0)))
    same(vmap(f, in_axes=(P(1, None),))(P(X.T, 2.0)),
         jax.vmap(f, in_axes=(P(1, None),))(P(X.T, 2.0)))

    def g(a):
        return P(a * 2.0, np.sum(a))
    same(vmap(g, out_axes=P(1, 0))(X), jax.vmap(g, out_axes=P(1, 0))(X))

    class Pt:
        def __init__(self, a, b):
            self.a, self.b = a, b
    register_pytree_node(Pt, lambda p: ((p.a, p.b), None), lambda aux, ch: Pt(*ch))
    jax.tree_util.register_pytree_node(Pt, lambda p: ((p.a, p.b), None),
                                       lambda aux, ch: Pt(*ch))
    same(vmap(lambda p: p.a * p.b, in_axes=(Pt(0, None),))(Pt(X, 1.5)),
         jax.vmap(lambda p: p.a * p.b, in_axes=(Pt(0, None),))(Pt(X, 1.5)))
    with pytest.raises(ValueError, match="P"):
        vmap(f, in_axes=(P(0, None),))(X)


def test_vmap_errors_name_the_leaf_of_a_pytree_argument():
    # (both leaves were called "p": "p axis 0 has size 5, p axis 0 has size 4")
    X = np.ones((4, 3))
    with pytest.raises(ValueError, match=r"p\['b'\] axis 0 has size 5, p\['w'\] axis 0 has "
                                         r"size 4"):
        vmap(lambda p: p["w"] * p["b"])({"w": X, "b": np.ones(5)})
    with pytest.raises(ValueError, match=r"out of range for p\['b'\]"):
        vmap(lambda p: p["w"] * p["b"])({"w": X, "b": 2.0})
    with pytest.raises(ValueError, match=r"q\[1\] axis 0 has size 2"):
        vmap(lambda q: q[0] * q[1])((X, np.ones((2, 3))))
