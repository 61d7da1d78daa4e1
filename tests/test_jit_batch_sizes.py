"""A new batch size does not compile (issue 23, item 2): the lowered code reads its sizes from
the arguments at run time, so another batch size generates the same text and runs the
dispatcher compiled for the first one (counted by `compile_count`, not timed). A dimension of
1 (broadcasting), another dtype or rank compile anew. Numbers are checked against NumPy and
central finite differences for every size."""
import numpy as np

from transpile import grad, jit, value_and_grad, vmap

BATCHES = (200, 57)


def fd_grad(f, x, eps=1e-6):
    """Central finite differences of the scalar f at the float64 array x."""
    g = np.zeros_like(x)
    flat, gflat = x.reshape(-1), g.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + eps
        up = f(x)
        flat[i] = old - eps
        down = f(x)
        flat[i] = old
        gflat[i] = (up - down) / (2 * eps)
    return g


# -- jit(f) -------------------------------------------------------------------------------------

def selu_rows(x):
    y = np.where(x > 0, x, 1.67 * (np.exp(x) - 1.0)) * 1.05
    return np.sum(y, axis=1) / x.shape[1] + np.mean(y)


def test_jit_new_batch_size_does_not_compile():
    j = jit(selu_rows)
    rng = np.random.default_rng(0)
    for n in BATCHES:
        x = rng.standard_normal((n, 8))
        np.testing.assert_allclose(j(x), selu_rows(x), rtol=1e-12)
    assert j.compile_count == 1 and j.build_count == 2
    assert "x__n0 = x.shape[0]" in j.source


# -- jit(grad(f)) -------------------------------------------------------------------------------

def regression_loss(w, x, y):
    return np.mean((np.tanh(x @ w) - y) ** 2)


def test_jit_grad_new_batch_size_does_not_compile():
    j = jit(grad(regression_loss))
    rng = np.random.default_rng(1)
    w = rng.standard_normal((4, 3))
    for n in BATCHES:
        x, y = rng.standard_normal((n, 4)), rng.standard_normal((n, 3))
        got = j(w, x, y)
        np.testing.assert_allclose(got, fd_grad(lambda v: regression_loss(v, x, y), w.copy()),
                                   rtol=1e-6, atol=1e-8)
    assert j.compile_count == 1


# -- jit(value_and_grad(mlp_loss)) on a dict of params -------------------------------------------

def mlp_loss(p, x, y):
    h = np.tanh(x @ p["W1"] + p["b1"])
    out = h @ p["W2"] + p["b2"]
    return np.mean((out - y) ** 2)


def test_jit_value_and_grad_mlp_dict_new_batch_size_does_not_compile():
    rng = np.random.default_rng(2)
    p = {"W1": rng.standard_normal((5, 6)) / 3, "b1": rng.standard_normal(6) / 3,
         "W2": rng.standard_normal((6, 2)) / 3, "b2": rng.standard_normal(2) / 3}
    j = jit(value_and_grad(mlp_loss))
    for n in BATCHES:
        x, y = rng.standard_normal((n, 5)), rng.standard_normal((n, 2))
        value, g = j(p, x, y)
        np.testing.assert_allclose(value, mlp_loss(p, x, y), rtol=1e-12)
        for k in p:
            def at(v, k=k):
                return mlp_loss({**p, k: v}, x, y)
            np.testing.assert_allclose(g[k], fd_grad(at, p[k].copy()), rtol=1e-6, atol=1e-8)
    assert j.compile_count == 1


# -- jit(vmap(g)) -------------------------------------------------------------------------------

def example_loss(w, x, y):
    return (np.tanh(np.dot(x, w)) - y) ** 2


def test_jit_vmap_grad_new_batch_size_does_not_compile():
    rng = np.random.default_rng(3)
    w = rng.standard_normal(4)
    j = jit(vmap(grad(example_loss), in_axes=(None, 0, 0)))
    for n in BATCHES:
        x, y = rng.standard_normal((n, 4)), rng.standard_normal(n)
        got = j(w, x, y)
        assert got.shape == (n, 4)
        for i in (0, n // 2, n - 1):
            want = fd_grad(lambda v: example_loss(v, x[i], y[i]), w.copy())
            np.testing.assert_allclose(got[i], want, rtol=1e-6, atol=1e-8)
    assert j.compile_count == 1


# -- a loop writing into an argument ------------------------------------------------------------

def euler_into(traj, y0, k):
    y = y0
    for t in range(traj.shape[0]):
        y = y + 0.1 * np.sin(k * y)
        traj[t] = y
    return np.sum(y * y)


def euler_loss(y0, k):
    traj = np.zeros((6, y0.shape[0]))
    y = y0
    for t in range(6):
        y = y + 0.1 * np.sin(k * y)
        traj[t] = y
    return np.sum(traj ** 2)


def test_loop_writing_into_an_argument_new_batch_size_does_not_compile():
    rng = np.random.default_rng(4)
    j = jit(euler_into)
    for n in BATCHES:
        y0 = rng.standard_normal(n)
        traj, want_traj = np.zeros((6, n)), np.zeros((6, n))
        got = j(traj, y0, 1.3)
        want = euler_into(want_traj, y0, 1.3)
        np.testing.assert_allclose(got, want, rtol=1e-12)
        np.testing.assert_allclose(traj, want_traj, rtol=1e-12)
    assert j.compile_count == 1


def test_grad_of_a_loop_writing_rows_new_batch_size_does_not_compile():
    rng = np.random.default_rng(5)
    j = jit(grad(euler_loss))
    for n in BATCHES:
        y0 = rng.standard_normal(n)
        # (values up to ~20: finite differences are good to ~1e-8 absolute)
        np.testing.assert_allclose(j(y0, 1.3), fd_grad(lambda v: euler_loss(v, 1.3), y0.copy()),
                                   rtol=1e-6, atol=1e-6)
    assert j.compile_count == 1


# -- what must compile anew ---------------------------------------------------------------------

def add_bias(x, b):
    return np.tanh(x + b) * 2.0


def test_a_dimension_of_one_compiles_anew_and_stays_right():
    rng = np.random.default_rng(6)
    j = jit(add_bias)
    x, b = rng.standard_normal((200, 3)), rng.standard_normal((200, 3))
    np.testing.assert_allclose(j(x, b), add_bias(x, b), rtol=1e-12)
    b1 = rng.standard_normal((1, 3))          # broadcasts over the rows
    np.testing.assert_allclose(j(x, b1), add_bias(x, b1), rtol=1e-12)
    assert j.compile_count == 2
    x1 = rng.standard_normal((1, 3))          # a batch of one, broadcast against b
    np.testing.assert_allclose(j(x1, b), add_bias(x1, b), rtol=1e-12)
    assert j.compile_count == 3
    # back to full batches of another size: the first code, nothing compiles
    x, b = rng.standard_normal((57, 3)), rng.standard_normal((57, 3))
    np.testing.assert_allclose(j(x, b), add_bias(x, b), rtol=1e-12)
    assert j.compile_count == 3


def test_grad_with_a_dimension_of_one_compiles_anew_and_stays_right():
    rng = np.random.default_rng(7)
    j = jit(grad(regression_loss))
    w = rng.standard_normal((4, 3))
    x, y = rng.standard_normal((200, 4)), rng.standard_normal((200, 3))
    j(w, x, y)
    y1 = rng.standard_normal((1, 3))          # the target broadcasts over the batch
    np.testing.assert_allclose(j(w, x, y1),
                               fd_grad(lambda v: regression_loss(v, x, y1), w.copy()),
                               rtol=1e-6, atol=1e-8)
    assert j.compile_count == 2


def test_dtype_and_rank_changes_compile_anew_and_stay_right():
    rng = np.random.default_rng(8)
    j = jit(add_bias)
    x, b = rng.standard_normal((200, 3)), rng.standard_normal(3)
    np.testing.assert_allclose(j(x, b), add_bias(x, b), rtol=1e-12)
    x32, b32 = x[:57].astype(np.float32), b.astype(np.float32)
    r = j(x32, b32)
    assert r.dtype == np.float32
    np.testing.assert_allclose(r, add_bias(x32, b32), rtol=1e-6)
    assert j.compile_count == 2
    x3 = rng.standard_normal((4, 5, 3))
    np.testing.assert_allclose(j(x3, b), add_bias(x3, b), rtol=1e-12)
    assert j.compile_count == 3


def count_to(x):
    # the range bound comes from a size: it is read at run time as well
    acc = 0.0
    for i in range(x.shape[0]):
        acc = acc + x[i] * i
    return acc


def test_a_size_folded_into_the_code_stays_right():
    j = jit(count_to)
    for n in BATCHES:
        x = np.linspace(0.0, 1.0, n)
        np.testing.assert_allclose(j(x), count_to(x), rtol=1e-12)
    # (x.shape[0] in the user's code is folded while normalizing: a constant in the text,
    # so each size compiles; what matters is that each is right)
    assert j.compile_count in (1, 2)


def test_a_layout_change_compiles_and_stays_right():
    rng = np.random.default_rng(9)
    j = jit(add_bias)
    x, b = rng.standard_normal((200, 3)), rng.standard_normal(3)
    np.testing.assert_allclose(j(x, b), add_bias(x, b), rtol=1e-12)
    strided = rng.standard_normal((57, 6))[:, ::2]      # the same text, another Numba layout
    np.testing.assert_allclose(j(strided, b), add_bias(strided, b), rtol=1e-12)
    assert j.compile_count == 2
    x = rng.standard_normal((31, 3))                      # contiguous again: compiled already
    np.testing.assert_allclose(j(x, b), add_bias(x, b), rtol=1e-12)
    assert j.compile_count == 2
