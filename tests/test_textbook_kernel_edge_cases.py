"""Textbook numerical kernels at their edges (a loop over an empty slice, a 1x1 matrix, a
pivot chosen per example): each form against plain NumPy/Python, and derivatives against
central finite differences in float64."""
import warnings

import numpy as np
import pytest

from fd import numerical_grad
from test_jit_foreign_constructs import solve_with_partial_pivoting
from transpile import grad, hessian, jit, jvp, vmap
from transpile.errors import TranspileError, TranspileWarning


def compiled(f, *args, **kw):
    """jit(f)(*args) with any fallback to NumPy raised as an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranspileWarning)
        return jit(f, **kw)(*args)


# ---- `for v in array` that runs zero times, its name reused by a later (nested) loop ------------

def over_items(x, n):
    s = 0.0
    for v in x[:n]:             # no item when n == 0: v stays unbound
        s += v
    for i in range(1):
        for v in x[:2]:         # the same name, one loop deeper
            s += v * v
    return s


def over_rows(A, n):
    s = 0.0
    for i, v in enumerate(A[0, :n]):
        s += v * i
    for j in range(A.shape[0]):
        for i, v in enumerate(A[j]):
            s += v * v * (i + 1)
    return s


@pytest.mark.parametrize("f, x", [
    (over_items, np.array([1.5, 2.0, 3.0])),
    (over_rows, np.array([[1.5, 2.0], [3.0, -1.0]])),
])
@pytest.mark.parametrize("n", [0, 2])
def test_an_item_loop_that_ran_zero_times_then_its_name_reused_one_loop_deeper(f, x, n):
    # (eager grad, jvp and hessian raised UnboundLocalError for v)
    want = numerical_grad(f, (x, n))
    np.testing.assert_allclose(grad(f)(x, n), want, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(jit(grad(f))(x, n), want, rtol=1e-6, atol=1e-7)
    t = np.ones_like(x)
    y, dy = jvp(lambda z: f(z, n), (x,), (t,))
    assert y == pytest.approx(f(x, n))
    assert dy == pytest.approx(np.sum(want * t))
    H = hessian(lambda z: f(z, n))(x)
    Hfd = numerical_grad(lambda z: grad(f)(z, n), (x,))   # d(grad)/dz summed over outputs
    np.testing.assert_allclose(np.sum(H.reshape(x.size, x.size), axis=0).reshape(x.shape),
                               Hfd, rtol=1e-5, atol=1e-6)
    assert compiled(f, x, n) == pytest.approx(f(x, n))


# ---- Gaussian elimination with a fancy-index row swap, on a 1x1 matrix --------------------------

def eliminate(A):
    A = A.copy()
    n = A.shape[0]
    for k in range(n):
        p = k
        for i in range(k + 1, n):       # runs zero times at k == n - 1 (always for n == 1)
            if abs(A[i, k]) > abs(A[p, k]):
                p = i
        if p != k:
            A[[k, p]] = A[[p, k]]
        for i in range(k + 1, n):       # the same name: entered with the one above
            A[i] -= A[i, k] / A[k, k] * A[k]
    return A


def eliminate_with_fft(A):
    A = A.copy()
    n = A.shape[0]
    for k in range(n):
        for i in range(k + 1, n):
            A[i, k] += 0.0
        A[k] += np.fft.fft(A[k]).real * 0.0     # Numba has no FFT: this part runs in NumPy
        for i in range(k + 1, n):
            A[i] -= A[i, k] / A[k, k] * A[k]
    return A


@pytest.mark.parametrize("A", [np.array([[3.0]]), np.array([[1.0, 2.0], [3.0, 1.0]]),
                               np.array([[1.0, 2.0, 0.5], [3.0, 1.0, 1.0], [2.0, 1.0, 4.0]])])
def test_elimination_with_a_fancy_index_row_swap_compiles_for_every_size(A):
    # (1x1: the swap ran in NumPy, "unknown result shape", then UnboundLocalError for i)
    np.testing.assert_allclose(compiled(eliminate, A), eliminate(A), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("n", [1, 3])
def test_two_range_loops_of_one_name_in_a_part_run_in_numpy(n):
    # (the second loop's variable was entered from the first one's, unbound where that one
    # ran zero times: UnboundLocalError in the part run in NumPy)
    A = np.arange(1.0, 1.0 + n * n).reshape(n, n) + 3 * np.eye(n)
    with pytest.warns(TranspileWarning, match="fft"):
        got = jit(eliminate_with_fft)(A)
    np.testing.assert_allclose(got, eliminate_with_fft(A), rtol=1e-12, atol=1e-14)


# ---- vmap: a per-example scalar inside a list index (partial pivoting) --------------------------

def pick(b):
    p = np.argmax(b)
    return b[[p, 0]]


def pick_at(b, i):
    return b[[i, 0]]


# partial pivoting with p per example under vmap: the solver of test_jit_foreign_constructs
gauss_solve = solve_with_partial_pivoting


def test_vmap_of_a_list_index_holding_a_per_example_scalar():
    # (vmap raised ValueError: the list [p, 0] of a batched p was made a ragged array)
    B = np.array([[1.0, 3, 2], [5.0, 1, 2], [0.0, 1, 4]])
    want = np.stack([pick(r) for r in B])
    np.testing.assert_array_equal(vmap(pick)(B), want)
    np.testing.assert_array_equal(jit(vmap(pick))(B), want)
    idx = np.array([1, 2, 0])
    want = np.stack([pick_at(r, i) for r, i in zip(B, idx)])
    np.testing.assert_array_equal(vmap(pick_at)(B, idx), want)
    np.testing.assert_array_equal(vmap(pick_at, in_axes=(None, 0))(B[0], idx),
                                  np.stack([pick_at(B[0], i) for i in idx]))


def test_vmap_of_gaussian_elimination_with_a_per_example_pivot():
    rng = np.random.default_rng(1)
    As = rng.standard_normal((4, 3, 3))
    bs = rng.standard_normal((4, 3))
    want = np.stack([gauss_solve(A, b) for A, b in zip(As, bs)])
    np.testing.assert_allclose(want, np.linalg.solve(As, bs[..., None])[..., 0], rtol=1e-9)
    np.testing.assert_allclose(vmap(gauss_solve)(As, bs), want, rtol=1e-12)
    np.testing.assert_allclose(jit(vmap(gauss_solve))(As, bs), want, rtol=1e-12)
    loss = lambda A, b: np.sum(gauss_solve(A, b) ** 2)
    g = vmap(grad(loss))(As, bs)
    for k in range(4):
        np.testing.assert_allclose(g[k], numerical_grad(loss, (As[k], bs[k])),
                                   rtol=1e-5, atol=1e-7)


# ---- vmap: a loop's counter rebound in an if on batched data, then a write index ----------------

def skip_next(x):
    out = np.zeros(x.shape[0])
    for i in range(2):
        if x[i] > 0:
            out[i] = 1.0
            i = i + 1               # C-style "skip the next element"
        out[i] += 5.0
    return out


def test_vmap_of_a_loop_counter_rebound_on_one_path_then_written_at():
    # (vmap raised TypeError: the per-example loop of the write indexed the loop's int counter)
    X = np.array([[1.0, -1.0, 0.0], [-1.0, 1.0, 0.0], [2.0, 3.0, -1.0]])
    want = np.stack([skip_next(r) for r in X])
    np.testing.assert_array_equal(vmap(skip_next)(X), want)
    np.testing.assert_array_equal(jit(vmap(skip_next))(X), want)
    np.testing.assert_array_equal(compiled(skip_next, X[0]), skip_next(X[0]))


# ---- an argument written in a loop body, then rebound in the same body: a clear refusal ---------

def stream_then_collide(a, steps):
    for s in range(steps):
        a[0] += 1.0             # the caller's array, on the first iteration only
        a = a * 0.5             # a new array from then on
    return a


@pytest.mark.parametrize("transform", ["jit", "grad", "vmap"])
def test_an_argument_written_then_rebound_in_a_loop_body_is_refused_naming_it(transform):
    # (grad named the caller's variable z, not the function's a, and no message said what
    # the trouble is: the caller's array written on the first iteration only)
    x = np.arange(3.0)
    call = {"jit": lambda: jit(stream_then_collide)(x.copy(), 2),
            "grad": lambda: grad(lambda z: np.sum(stream_then_collide(z, 2)))(x.copy()),
            "vmap": lambda: vmap(stream_then_collide, in_axes=(0, None))(np.stack([x, x]), 2)}
    line = stream_then_collide.__code__.co_firstlineno + 1
    with pytest.raises(TranspileError, match=rf"test_textbook_kernel_edge_cases.py:{line}: "
                       r"'a' is written in place by the loop body and then rebound"):
        call[transform]()


# ---- vmap: a number argument updated by an augmented assignment in a loop -----------------------

def halvings(x, n):
    c = 0.0
    while n > 1:
        n //= 2
        c += x
    return c


def halve_three_times(x, n):
    for i in range(3):
        n //= 2
    return x * n


def collatz_steps(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n //= 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def decay(x, lr):
    for i in range(3):
        lr *= 0.5
    return x * lr


@pytest.mark.parametrize("f, args", [
    (halvings, (np.array([1.0, 2.0, 3.0, 4.0]), np.array([1, 5, 16, 7]))),
    (halve_three_times, (np.array([1.0, 2.0, 3.0, 4.0]), np.array([1, 5, 16, 70]))),
    (collatz_steps, (np.array([1, 6, 7, 27]),)),
    (decay, (np.array([1.0, 2.0, 3.0, 4.0]), np.array([0.1, 0.2, 0.3, 0.4]))),
])
def test_vmap_of_a_per_example_number_updated_in_a_loop(f, args):
    # (ShapesNeeded: one example of a mapped vector is a number, never a 0-d array)
    want = np.array([f(*[a[k].item() for a in args]) for k in range(len(args[0]))])
    np.testing.assert_allclose(vmap(f)(*args), want, rtol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TranspileWarning)   # (a batched while: partly NumPy)
        np.testing.assert_allclose(jit(vmap(f))(*args), want, rtol=1e-12)


def kadane(x):
    best = x[0]
    cur = x[0]
    for i in range(1, len(x)):
        if cur < 0:
            cur = x[i]
        else:
            cur += x[i]
        if cur > best:
            best = cur
    return best


def test_kadane_over_a_list_of_floats_under_grad_jit_and_vmap():
    # (eager grad of the list refused cur as "may or may not share memory")
    L = [-2.0, 1.0, -3.0, 4.0, -1.0, 2.0, 1.0, -5.0, 4.0]
    assert compiled(kadane, L) == kadane(L)
    g = np.array(grad(kadane)(L), dtype=float)
    np.testing.assert_allclose(g, numerical_grad(lambda z: kadane(list(z)), (np.array(L),)),
                               atol=1e-7)
    X = np.array([L, L[::-1], [1.0] * 9])
    np.testing.assert_allclose(vmap(kadane)(X), [kadane(list(r)) for r in X])


# ---- s = b[piv[i]]; s -= ... : an element read through an int array, then updated ---------------

def permuted_forward_substitution(L, b, piv):
    n = b.shape[0]
    y = np.zeros(n)
    for i in range(n):
        s = b[piv[i]]               # a number: NumPy copied the element
        for j in range(i):
            s -= L[i, j] * y[j]
        y[i] = s
    return y


def row_through_an_index_vector(A, idx):
    r = A[idx[0]]                   # a row view of A: the write below changes A
    r += 1.0
    return A * A


def test_an_element_read_through_an_int_array_then_updated_under_grad_and_vmap():
    # (grad and vmap refused s as "a view made by y[index] with an index that may be an
    # integer array"; b[piv[i]] of a vector is a number)
    rng = np.random.default_rng(2)
    L = np.tril(rng.standard_normal((3, 3)), -1) + np.eye(3)
    b = rng.standard_normal(3)
    piv = np.array([2, 0, 1])
    loss = lambda L, b: np.sum(permuted_forward_substitution(L, b, piv) ** 2)
    for k in (0, 1):
        want = numerical_grad(loss, (L, b), argnum=k)
        np.testing.assert_allclose(grad(loss, argnums=k)(L, b), want, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(jit(grad(loss, argnums=k))(L, b), want, rtol=1e-6, atol=1e-8)
    B = rng.standard_normal((4, 3))
    want = np.stack([permuted_forward_substitution(L, r, piv) for r in B])
    f = vmap(permuted_forward_substitution, in_axes=(None, 0, None))
    np.testing.assert_allclose(f(L, B, piv), want, rtol=1e-12)
    np.testing.assert_allclose(jit(f)(L, B, piv), want, rtol=1e-12)
    # a row view through an index vector: the write reaches A, its derivative too
    A = np.arange(6.0).reshape(2, 3)
    idx = np.array([1, 0])
    loss2 = lambda A, idx: np.sum(row_through_an_index_vector(A.copy(), idx))
    np.testing.assert_allclose(grad(loss2)(A, idx),
                               numerical_grad(lambda A: loss2(A, idx), (A,)), rtol=1e-6)
