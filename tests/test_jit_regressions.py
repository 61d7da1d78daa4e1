"""jit regressions found by testers: values carried by loops as permutations (a tuple swap),
and programs that used to fall back to NumPy under jit.

Every test turns TranspileWarning (jit's fallback to NumPy) into an error. Numbers are checked
against central finite differences in float64 (tests/fd.py) or against the function run
plainly.
"""
import numpy as np
import pytest

from fd import numerical_grad
from transpile import grad, hessian, jit, vmap

pytestmark = pytest.mark.filterwarnings("error::transpile.TranspileWarning")


def fd_rows(f, X):
    return np.stack([numerical_grad(f, [r]) for r in X])


def fd_hessian(f, x, eps=1e-6):
    """Central differences of the eager gradient (itself checked against finite differences
    elsewhere): a Hessian oracle that does not run jit."""
    g = grad(f)
    assert np.allclose(g(x), numerical_grad(f, [x]), rtol=1e-6, atol=1e-8)
    return np.stack([(g(x + eps * e) - g(x - eps * e)) / (2 * eps) for e in np.eye(len(x))])


# -- loop-carried permutations: a, b = b, a + ... --------------------------------------------------
# the backward loop carries the adjoints da, db; at the end of its body they are updated in
# parallel (da, db = db, da + ...). jit used to write them one after the other, so da read the
# new db (specialize substituted a copy of a carried name by the name itself).

def swap_fib(x):
    a, b = x[0], x[1]
    for i in range(5):
        a, b = b, a + b * x[2]
    return a + b


def swap_sin(x):
    a, b = x[0], x[1]
    for i in range(5):
        a, b = b, a * 0.5 + b * np.sin(x[2])
    return a + b


def swap_drop(x):
    a, b = x[0], x[1]
    for i in range(5):
        a, b = b, b * x[2]
    return a + 2.0 * b


def cycle3(x):
    a, b, c = x[0], x[1], x[2]
    for i in range(4):
        a, b, c = b * x[3], c, a
    return a + 2.0 * b + 3.0 * c


def cycle3_while(x):
    a, b, c = x[0], x[1], x[2]
    k = 0
    while k < 5:
        a, b, c = c, a + b * x[3], b
        k = k + 1
    return a * b + c


def snapshot_then_update(x):
    a = x[0]
    t = 0.0
    for i in range(3):
        t = a                 # t keeps the value a had before this iteration's update
        a = a * x[1]
    return t + 0.1 * a


SWAPS = [swap_fib, swap_sin, swap_drop, cycle3, cycle3_while, snapshot_then_update]
X4 = np.array([0.3, 1.2, -0.7, 0.9])


@pytest.mark.parametrize("f", SWAPS, ids=lambda f: f.__name__)
def test_jit_of_loop_permutation_value(f):
    assert np.allclose(jit(f)(X4), f(X4), rtol=1e-12)


@pytest.mark.parametrize("f", SWAPS, ids=lambda f: f.__name__)
def test_jit_grad_of_loop_permutation(f):
    assert np.allclose(jit(grad(f))(X4), numerical_grad(f, [X4]), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", SWAPS, ids=lambda f: f.__name__)
def test_jit_vmap_grad_of_loop_permutation(f):
    X = np.stack([X4, X4[::-1] * 1.1, X4 + 0.5])
    assert np.allclose(jit(vmap(grad(f)))(X), fd_rows(f, X), rtol=1e-6, atol=1e-8)


def test_jit_grad_swap_in_forward_loop_read_after():
    def f(x):
        a, b = x[0], x[1]
        for i in range(3):
            a, b = b, a
            b = b * x[2]
        return a * 10.0 + b
    assert np.allclose(jit(grad(f))(X4), numerical_grad(f, [X4]), rtol=1e-6, atol=1e-8)


def test_parallel_assign_keeps_old_values_without_jit():
    # `a, b, c = b * k, c, a`: the new a (a computed value) used to take the name `a` while
    # c = a still had to read the old one (the normalizer; wrong under every transform)
    x = X4
    assert np.allclose(vmap(cycle3)(np.stack([x, 2 * x])), [cycle3(x), cycle3(2 * x)])
    assert np.allclose(grad(cycle3)(x), numerical_grad(cycle3, [x]), rtol=1e-6, atol=1e-8)


# -- fallbacks: zeros_like of a scalar was a 0-d array under jit ---------------------------------
# (the adjoint of a scalar carried by a loop started as np.zeros(()), which Numba cannot join
# with the float64 the loop assigns: a return inside a loop, a while over scalars under vmap)

def early_in_for(x):
    acc = 0.0
    for i in range(x.shape[0]):
        acc = acc + x[i] ** 2
        if acc > 1.0:
            return acc * 2.0
    return acc


def early_in_while(x):
    acc = 0.0
    i = 0
    while i < x.shape[0]:
        acc = acc + np.sin(x[i]) * x[i]
        if acc > 0.8:
            return acc * 3.0
        i = i + 1
    return acc


def while_scalar(a, b):
    s = 0.0
    while a < 5.0:
        a = a * 1.5 + b
        s = s + a * b
    return s


@pytest.mark.parametrize("f", [early_in_for, early_in_while], ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [np.array([0.3, 1.2, -0.7, 0.9]),      # returns inside the loop
                               np.array([0.1, 0.2, -0.3, 0.25])])    # runs to the end
def test_jit_grad_of_return_inside_loop(f, x):
    assert np.allclose(jit(grad(f))(x), numerical_grad(f, [x]), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", [early_in_for, early_in_while], ids=lambda f: f.__name__)
def test_jit_vmap_grad_of_return_inside_loop(f):
    X = np.array([[0.3, 1.2, -0.7, 0.9], [0.1, 0.2, -0.3, 0.25], [0.6, -0.5, 0.4, 0.3]])
    assert np.allclose(jit(vmap(grad(f)))(X), fd_rows(f, X), rtol=1e-6, atol=1e-8)


def test_jit_vmap_grad_of_while_on_scalars():
    A = np.array([0.1, 1.0, 3.0])
    B = np.array([0.5, 0.2, 1.0])
    ga, gb = jit(vmap(grad(while_scalar, argnums=(0, 1))))(A, B)
    for k in range(3):
        assert np.isclose(ga[k], numerical_grad(while_scalar, [A[k], B[k]], 0), rtol=1e-6)
        assert np.isclose(gb[k], numerical_grad(while_scalar, [A[k], B[k]], 1), rtol=1e-6)


# -- fallbacks: jit(hessian) of loops with a branch or writes --------------------------------------

def loop_if(x):
    acc = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0.5:
            acc = acc + x[i] ** 3
    return acc


def loop_if_else(x):
    acc = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0.5:
            acc = acc + x[i] ** 3
        else:
            acc = acc + np.sin(x[i]) * x[i]
    return acc


def branch_write(x):
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        if x[i] > 0:
            out[i] = x[i] ** 2
        else:
            out[i] = np.sin(x[i])
    return np.sum(out * x)


def loop_write(x):
    out = x.copy()
    for i in range(1, x.shape[0]):
        out[i] = out[i] * out[i - 1]
    return np.sum(out)


@pytest.mark.parametrize("f", [loop_if, loop_if_else, branch_write, loop_write],
                         ids=lambda f: f.__name__)
def test_jit_hessian_of_loop(f):
    # the backward sweep's `if` pops what the forward branch pushed (the two paths push
    # different numbers of values: the tape is split by that structure); a loop over the
    # batch inside a loop is allocated at its rows' shape when the outer loop is specialized
    # again
    x = np.array([0.3, 1.2, -0.7, 0.9])
    assert np.allclose(jit(hessian(f))(x), fd_hessian(f, x), rtol=1e-6, atol=1e-7)


# -- fallbacks: an index array, a stride-2 window ---------------------------------------------------

def index_read(x):
    idx = np.array([0, 2])
    return np.sum(x[idx] ** 2)


def index_read_repeated(A):
    idx = np.array([2, 0, 2])             # an index that appears twice gets both cotangents
    return np.sum(np.sin(A[:, idx]) * A[1, idx])


def index_in_loop(x):
    idx = np.array([1, 3, 1])
    s = 0.0
    for k in range(3):
        s = s + np.sum(np.sin(x[idx]) * (k + 1.0))
    return s


def index_write(x):
    y = np.zeros(6)
    idx = np.array([0, 5, 2])
    y[idx] = x[:3] * 2.0
    return np.sum(y ** 2 * np.arange(6.0))


@pytest.mark.parametrize("f, x", [(index_read, np.array([0.3, 1.2, -0.7, 0.9])),
                                  (index_read_repeated, np.arange(12.0).reshape(3, 4) / 10),
                                  (index_in_loop, np.array([0.3, 1.2, -0.7, 0.9])),
                                  (index_write, np.array([0.3, 1.2, -0.7, 0.9]))],
                         ids=["read", "repeated", "in_loop", "write"])
def test_jit_constant_index_array(f, x):
    assert np.allclose(jit(f)(x), f(x), rtol=1e-12)
    if f is not index_write:             # (its adjoint, rt.written_part, still falls back)
        assert np.allclose(jit(grad(f))(x), numerical_grad(f, [x]), rtol=1e-6, atol=1e-8)


def stride_window(x):
    acc = np.zeros(2)
    for k in range(x.shape[0] // 2):
        acc = acc + x[2 * k: 2 * k + 2] * (k + 1.0)
    return np.sum(acc ** 2)


def stride3_window(x):
    acc = 0.0
    for k in range(x.shape[0] // 3):
        acc = acc + np.sum(np.sin(x[3 * k + 1: 3 * (k + 1)]))
    return acc


@pytest.mark.parametrize("f", [stride_window, stride3_window], ids=lambda f: f.__name__)
def test_jit_strided_window(f):
    x = np.array([0.3, 1.2, -0.7, 0.9, 0.5, -0.2])
    assert np.allclose(jit(f)(x), f(x), rtol=1e-12)
    assert np.allclose(jit(grad(f))(x), numerical_grad(f, [x]), rtol=1e-6, atol=1e-8)


# -- `a or b` / `a and b` whose right side draws random numbers ------------------------------------
# Python evaluates the right side only where the left does not decide; a random draw there
# advances the generator only then (a Metropolis step: `dE <= 0 or rng.random() < p`). The right
# side used to be computed always, so the generator ran ahead and the numbers differed.

def metropolis_count(x, seed):
    rng = np.random.default_rng(seed)
    accepted = 0
    for i in range(len(x)):
        if x[i] <= 0.5 or rng.random() < 0.5:
            accepted += 1
    return accepted, rng.random()


def and_draw(x, seed):
    rng = np.random.default_rng(seed)
    c = 0
    for i in range(len(x)):
        ok = x[i] > 0.5 and rng.random() < 0.5
        if ok:
            c += 1
    return c, rng.random()


@pytest.mark.parametrize("fn", [metropolis_count, and_draw])
@pytest.mark.parametrize("backend", ["numba", "numpy"])
def test_short_circuit_random_draw(fn, backend):
    x = np.random.default_rng(1).random(40)
    want = fn(x, 3)
    got = jit(fn, backend=backend, wait=True)(x, 3)
    assert int(got[0]) == want[0]
    assert float(got[1]) == want[1]


def ranks_by_key(x):
    order = sorted(range(len(x)), key=lambda i: x[i])
    ranks = np.empty(len(x), dtype=np.int64)
    for r, i in enumerate(order):
        ranks[i] = r
    return ranks


def test_sorted_with_key_compiles_up_to_its_limit_and_refuses_past_it():
    # 30 keys made Numba's SSA pass recurse past Python's limit of 1000 frames (a RecursionError
    # out of the user's call) and took minutes to compile: the exchange network now stops at
    # SORT_KEY_LIMIT items, with an error that names the line and says what to write instead
    import warnings

    from transpile.errors import TranspileError, TranspileWarning
    from transpile.frontend.normalize.builtins import SORT_KEY_LIMIT
    rng = np.random.default_rng(3)
    x = np.round(rng.standard_normal(SORT_KEY_LIMIT), 1)      # ties kept in order, as Python
    f = jit(ranks_by_key)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranspileWarning)
        got = f(x)
    assert f.last_tier == "compiled"
    np.testing.assert_array_equal(got, ranks_by_key(x))
    with pytest.raises(TranspileError, match=r"(?s)test_jit_regressions.py:\d+.*sorted.*np.argsort"):
        f(rng.standard_normal(SORT_KEY_LIMIT + 1))


def sparse_fill(rows, cols, vals, n):
    A = np.zeros((n, n + 1))
    flags = np.zeros(n * 8, dtype=bool)
    counts = np.zeros_like(rows)
    z = np.zeros((n, 2), dtype=np.complex64)
    for k in range(rows.shape[0]):
        A[rows[k], cols[k]] += vals[k]
        flags[rows[k]] = True
        counts[k] = rows[k] + 1
    return A, flags, counts, z


@pytest.mark.parametrize("n", [5, 1200])
def test_large_zeros_in_compiled_code_are_numpys_lazy_zeros(n):
    """np.zeros of 1 MiB or more in compiled code is NumPy's allocation (pages zeroed by the
    kernel on first touch; Numba wrote zeros over the whole buffer: a sparse fill of a
    3000 x 3000 matrix took 30 ms instead of 0.08 ms); small ones stay Numba's. Both give
    zeros of the right dtype and shape."""
    import warnings
    from transpile import TranspileWarning
    r = np.random.default_rng(5)
    rows, cols = r.integers(0, n, 40), r.integers(0, n, 40)
    vals = r.standard_normal(40)
    j = jit(sparse_fill, static_argnums=3, wait=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranspileWarning)
        got = j(rows, cols, vals, n)
    want = sparse_fill(rows, cols, vals, n)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)
    assert "zeros_lazy((" in j.source


# a list comprehension over range(len(x)) was written out item by item: 1,000 items gave 4,000
# lines and 200 s of compiling, 100,000 never finished; past COMP_UNROLL items it is a loop
def window_means(x):
    n = x.shape[0]
    return np.array([np.mean(x[max(0, i - 1):i + 2]) for i in range(n)])


def positives(x):
    return np.array([x[i] for i in range(x.shape[0]) if x[i] > 0])


def sum_of_squares_list(x):
    return sum([x[i] ** 2 for i in range(x.shape[0])])


def pair_products(x):
    return np.sum(np.array([x[i] * x[i + 1] for i in range(0, x.shape[0] - 1, 2)]))


def row_norms(X):                  # over an array's rows, then over the list it made
    norms = [np.sqrt(np.sum(row * row)) for row in X]
    big = [i for i, nrm in enumerate(norms) if nrm > 1.0]
    return np.array(norms) * len(big)


def zipped_products(X):
    return np.array([np.sum(a * b) for a, b in zip(X, X[::-1])])


# (still written out item by item: a list of arrays, [x[i] * np.ones(3) for i in range(n)],
# which is not a buffer of run-time length; docs/user_guide.md)
@pytest.mark.parametrize("f", [window_means, positives, sum_of_squares_list, pair_products,
                               row_norms, zipped_products])
@pytest.mark.filterwarnings("error::transpile.TranspileWarning")     # compiled, no NumPy fallback
def test_long_list_comprehensions_compile_as_loops(f):
    x = np.random.default_rng(9).standard_normal(3000)
    if f in (row_norms, zipped_products):
        x = x.reshape(1000, 3)
    j = jit(f, wait=True)
    np.testing.assert_allclose(j(x.copy()), f(x.copy()), rtol=1e-12, atol=1e-12)
    assert len(j.source.splitlines()) < 300          # a loop, not 3,000 copies of the item
    y = x[:500] * 2.0                                # another length: the same compiled code
    np.testing.assert_allclose(j(y.copy()), f(y.copy()), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("f", [window_means, sum_of_squares_list, pair_products, row_norms,
                               zipped_products])
def test_long_list_comprehensions_differentiate(f):
    x = np.random.default_rng(10).standard_normal(130)
    if f in (row_norms, zipped_products):
        x = np.random.default_rng(10).standard_normal((70, 2))
    loss = lambda z: np.sum(f(z))          # noqa: E731
    want = numerical_grad(loss, [x.copy()])
    np.testing.assert_allclose(grad(loss)(x.copy()), want, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(jit(grad(loss))(x.copy()), want, rtol=1e-6, atol=1e-7)
    xs = np.stack([x, 0.5 * x])
    np.testing.assert_allclose(vmap(f)(xs), np.stack([f(r) for r in xs]), rtol=1e-12)


# -- session 38: silent wrong numbers found on foreign-style code ---------------------------------
# A comprehension in a loop body replaced the frame's name table with a copy, so the loop did not
# see the names rebound after it: `x = n * 0.5` was lost and every iteration read the first x
# (jit, backend="numpy" and vmap alike). A tuple used as a whole index, `x[t]` with t = (1, 2),
# was read as the integer-array index x[[1, 2]].

def comp_in_loop(x, steps):
    for _ in range(steps):
        n = sum(x * i for i in (1.0, 2.0))
        x = n * 0.5
    return x


def filtered_comp_in_loop(grid, steps):
    """Game of life on a torus: the 8 neighbours summed from a filtered comprehension."""
    for _ in range(steps):
        n = sum(np.roll(np.roll(grid, i, 0), j, 1) for i in (-1, 0, 1) for j in (-1, 0, 1)
                if (i, j) != (0, 0))
        grid = ((n == 3) | ((grid == 1) & (n == 2))).astype(np.int64)
    return grid


def list_comp_in_loop(x, steps):
    for k in range(steps):
        x = np.stack([np.sin(x) * c for c in (0.5, -1.0, 2.0) if c != -1.0]).sum(axis=0) + k
    return x


@pytest.mark.parametrize("steps", [1, 2, 3])
def test_a_comprehension_in_a_loop_keeps_the_names_rebound_after_it(steps):
    x = np.array([0.3, -0.2, 1.1])
    for f in (comp_in_loop, list_comp_in_loop):
        want = f(x, steps)
        np.testing.assert_allclose(jit(f, wait=True)(x, steps), want, rtol=1e-14)
        np.testing.assert_allclose(jit(f, backend="numpy")(x, steps), want, rtol=1e-14)
        loss = lambda v, f=f: np.sum(f(v, steps) ** 2)
        want_g = numerical_grad(loss, [x])
        np.testing.assert_allclose(grad(loss)(x), want_g, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(jit(grad(loss), wait=True)(x), want_g, rtol=1e-6, atol=1e-8)
        X = np.stack([x, 2 * x])
        np.testing.assert_allclose(vmap(f, in_axes=(0, None))(X, steps),
                                   np.stack([f(r, steps) for r in X]), rtol=1e-14)
    g = (np.random.default_rng(1).random((8, 8)) > 0.6).astype(np.int64)
    got = jit(filtered_comp_in_loop, wait=True)(g, steps)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, filtered_comp_in_loop(g, steps))


def tuple_indexes(x, i, k):
    t = (1, 2)
    u = (i, 0)
    s = tuple(slice(None, -1) if d == k else slice(None) for d in range(x.ndim))
    x[(0, slice(0, 2))] = -1.0
    w = (slice(1, None), i)
    return x[t], x[u], x[s], x[w], x[slice(i, None)], x[..., slice(1, 3)], x[(None, 1)]


def test_a_tuple_used_as_a_whole_index_is_a_tuple_of_indices():
    x = np.arange(12.0).reshape(3, 4)
    for i, k in ((2, 0), (1, 1)):
        want_x = x.copy()
        want = tuple_indexes(want_x, i, k)
        got_x = x.copy()
        got = jit(tuple_indexes, wait=True)(got_x, i, k)
        np.testing.assert_array_equal(got_x, want_x)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert np.shape(g) == np.shape(w)
            np.testing.assert_array_equal(g, w)
    loss = lambda v: np.sum(np.sin(tuple_indexes(v * 1.0, 1, 0)[2]))
    np.testing.assert_allclose(jit(grad(loss), wait=True)(x), numerical_grad(loss, [x]),
                               rtol=1e-6, atol=1e-8)


def tuple_compares(x, i):
    t = 0.0
    if (i, 1) == (2, 1):
        t += 1.0
    if (x.shape[0], 2) != (3, 2):
        t += 10.0
    if (1, 2) < (1, 3):
        t += 100.0
    if (1, 2) == [1, 2]:            # a tuple is never equal to a list
        t += 1000.0
    if (x[0], 1) == (1.0, 1):
        t += 1e4
    if (1, 2) == (1, 2, 3):
        t += 1e5
    return t * x


def test_tuples_compare_as_python_compares_them():
    for i in (1, 2):
        for x in (np.ones(3), np.zeros(4)):
            np.testing.assert_array_equal(jit(tuple_compares, wait=True)(x, i),
                                          tuple_compares(x, i))


# -- a name holding another's value before an if that rebinds the other on one path ----------
# `z = y; if c: y = y + 1` (no else): the join gave y's new value to z as well (z and y were
# one name in the generated code; the copy of the old y made on the then path was dropped).
# A silent wrong number under every transform, found on foreign-style code (a running
# maximum appended to a list: `if v > 0: m = v` then `out.append(m)`).

def alias_then_rebound(x):
    y = x * 2.0
    z = y
    if x[0] > 0:
        y = y + 1.0
    return z


def alias_scalar_then_rebound(x):
    y = x[0] * 2.0
    z = y
    if x[1] > 0:
        y = 0.0
    return z * x


def alias_both_read(x):
    y = x * 2.0
    z = y
    if x[0] > 0:
        y = y + 1.0
    return z + y * y


def last_positive_seen(x):
    out = []
    m = 0.0
    for v in x:
        if v > 0:
            m = v
        out.append(m)
    return np.array(out)


def alias_in_a_tuple(x):
    m = x[0] * 1.0
    pair = (m, x[1])
    if x[2] > 0:
        m = m * 3.0
    return pair[0] * m + pair[1]


@pytest.mark.parametrize("f", [alias_then_rebound, alias_scalar_then_rebound, alias_both_read,
                               last_positive_seen, alias_in_a_tuple])
def test_an_alias_keeps_the_value_from_before_an_if_that_rebinds_the_name(f):
    for x in (np.array([0.3, -1.0, 2.0]), np.array([-0.5, 0.7, -2.0]), np.array([1.0, 2.0, 3.0])):
        want = f(x)
        np.testing.assert_allclose(jit(f, wait=True)(x), want, rtol=1e-14)
        np.testing.assert_allclose(jit(f, backend="numpy")(x), want, rtol=1e-14)
        loss = lambda v: np.sum(f(v) ** 2)
        want_g = numerical_grad(loss, [x])
        np.testing.assert_allclose(grad(loss)(x), want_g, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(jit(grad(loss), wait=True)(x), want_g, rtol=1e-6, atol=1e-8)
        X = np.stack([x, -x[::-1], x * 0.5])
        want_v = np.stack([f(r) for r in X])
        np.testing.assert_allclose(vmap(f)(X), want_v, rtol=1e-14)
        np.testing.assert_allclose(jit(vmap(f), wait=True)(X), want_v, rtol=1e-14)


# -- a name first bound in the body of a loop with a break, read after the loop ---------------
# (power iteration: `lam = np.linalg.norm(w)` in the body, `if converged: break`, return lam)
# was refused as "name 'lam' is not defined": the break puts the body under a flag, so the
# name was bound on one path of an if only. Numba and Python take it.

def first_bound_before_break(x):
    for i in range(10):
        y = x * i
        if i > 2:
            break
    return y


def power_iteration(A):
    v = np.ones(A.shape[0])
    for it in range(100):
        w = A @ v
        lam = np.linalg.norm(w)
        v_new = w / lam
        if np.linalg.norm(v_new - v) < 1e-10:
            break
        v = v_new
    return lam * v


def while_with_break(x):
    k = 0
    while k < 20:
        s = np.sum(x * k)
        if s > 5.0:
            break
        k += 1
    return s * x


def inner_loop_break(x):
    for i in range(3):
        for j in range(4):
            t = x[j % 3] * (i + j)
            if t > 1.0:
                break
        u = t * 2.0
    return u * x


@pytest.mark.parametrize("f, x", [
    (first_bound_before_break, np.array([1.0, 2.0, -0.5])),
    (power_iteration, np.array([[2.0, 1.0, 0.0], [1.0, 3.0, 0.5], [0.0, 0.5, 1.0]])),
    (while_with_break, np.array([0.3, -1.0, 2.0])),
    (inner_loop_break, np.array([0.3, -1.0, 2.0])),
    (inner_loop_break, np.array([0.05, 0.1, 0.2]))])
def test_a_name_first_bound_in_a_loop_with_a_break_is_read_after_it(f, x):
    want = f(x)
    np.testing.assert_allclose(jit(f, wait=True)(x), want, rtol=1e-12)
    np.testing.assert_allclose(jit(f, backend="numpy")(x), want, rtol=1e-12)
    loss = lambda v: np.sum(np.sin(f(v)))
    want_g = numerical_grad(loss, [x])
    np.testing.assert_allclose(grad(loss)(x), want_g, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(jit(grad(loss), wait=True)(x), want_g, rtol=1e-5, atol=1e-7)
    X = np.stack([x, x * 0.5])
    np.testing.assert_allclose(vmap(f)(X), np.stack([f(r) for r in X]), rtol=1e-12)


# -- Python sequences: `(1,) * k`, `[0.0] * n`, a list indexed by a range loop's variable ----
# (`acc = [0.0] * 3; for i in range(3): acc[i] = ...`: "arithmetic on a tuple/list" and "an
# index into a list must be known when the code is generated"; the loop is now unrolled where
# its trip count is known, up to 64 iterations). np.ix_ (read from our own NumPy source) uses
# the tuple repetition.

def list_of_floats_by_index(x, n):
    acc = [0.0] * n
    for i in range(n):
        acc[i] = np.sum(x * x) * (i + 1)
    total = 0.0
    for i in range(n - 1, -1, -1):
        total = total * 0.5 + acc[i]
    return total


def literal_list_by_index(x):
    w = [1.0, -2.0, 0.5]
    parts = [x, x, x]
    for k in range(3):
        parts[k] = np.sin(x) * w[k]
    return sum(parts)


def broadcast_shape_of_ones(x):
    s = (1,) * (x.ndim - 1)
    return x.reshape(x.shape + s) * 2.0


def cross_product_pick(A, r, c):
    return A[np.ix_(r, c)] * 2.0


def test_repeated_sequences_and_lists_indexed_in_range_loops():
    x = np.array([0.3, -1.2, 2.0])
    for n in (1, 4):
        assert jit(list_of_floats_by_index, wait=True)(x, n) == pytest.approx(
            list_of_floats_by_index(x, n), rel=1e-14)
        g = grad(list_of_floats_by_index)
        want = numerical_grad(lambda v: list_of_floats_by_index(v, n), [x])
        np.testing.assert_allclose(g(x, n), want, rtol=1e-6)
        np.testing.assert_allclose(jit(g, wait=True)(x, n), want, rtol=1e-6)
    np.testing.assert_allclose(jit(literal_list_by_index, wait=True)(x), literal_list_by_index(x),
                               rtol=1e-14)
    X = np.stack([x, -x])
    np.testing.assert_allclose(vmap(literal_list_by_index)(X),
                               np.stack([literal_list_by_index(r) for r in X]), rtol=1e-14)
    for v in (x, np.ones((2, 3, 4))):
        np.testing.assert_array_equal(jit(broadcast_shape_of_ones, wait=True)(v),
                                      broadcast_shape_of_ones(v))
    A = np.arange(20.0).reshape(4, 5)
    r, c = np.array([0, 2]), np.array([4, 1, 3])
    np.testing.assert_array_equal(jit(cross_product_pick, wait=True)(A, r, c),
                                  cross_product_pick(A, r, c))
    G = np.zeros_like(A)
    np.add.at(G, np.ix_(r, c), 2.0)
    loss = lambda M, r, c: np.sum(cross_product_pick(M, r, c))
    np.testing.assert_allclose(grad(loss)(A, r, c), G)
    np.testing.assert_allclose(jit(grad(loss), wait=True)(A, r, c), G)


# -- *args before keyword-only parameters ----------------------------------------------------
# f(*xs, a=1.0) called with as many positional arguments as f has named parameters took the
# fast path of binding (one value per parameter, in order): the second array became `a` and
# xs lost it. A silent wrong number under jit, grad, value_and_grad and vmap.

def star_then_keyword_only(*xs, a=1.0, b=10.0):
    return np.sum(xs[0] * xs[-1]) * a + b + 100.0 * len(xs)


def star_after_a_default(x, y=2.0, *rest):
    return np.sum(x * y) + len(rest)


def test_star_args_before_keyword_only_parameters():
    x = [np.array([1.0, -2.0]), np.array([2.0, 0.5]), np.array([3.0, 1.5])]
    for n in (1, 2, 3):
        args = x[:n]
        want = star_then_keyword_only(*args)
        assert jit(star_then_keyword_only, wait=True)(*args) == pytest.approx(want, rel=1e-14)
        assert jit(star_then_keyword_only, wait=True)(*args, b=3.0) == pytest.approx(
            star_then_keyword_only(*args, b=3.0), rel=1e-14)
        g = grad(star_then_keyword_only, argnums=n - 1)(*args)
        num = numerical_grad(lambda v: star_then_keyword_only(*args[:-1], v), [args[-1]])
        np.testing.assert_allclose(g, num, rtol=1e-6, atol=1e-9)
        X = [np.stack([a, 2 * a]) for a in args]
        np.testing.assert_allclose(vmap(star_then_keyword_only)(*X),
                                   [star_then_keyword_only(*[r[k] for r in X]) for k in (0, 1)],
                                   rtol=1e-14)
    X = np.ones((2, 3))
    np.testing.assert_allclose(vmap(star_after_a_default)(X), [6.0, 6.0])
    np.testing.assert_allclose(vmap(star_after_a_default)(X, np.full((2, 3), 3.0), X),
                               [10.0, 10.0])


# a name holding another's value before an if that rebinds the other, then a list appended
# under a data if: the copy kept for the old value had no known dtype, so jit refused the
# list ("the type of its items must be known") — found by the random generator (alias_if)

def alias_if_then_grown_list(x):
    acc = 0.0
    for i in range(4):
        if x[i] > 0.1:
            acc = acc + np.sin(x[i])
    m = x * acc * 1.5
    held = m
    if x[0] > -0.5:
        m = m + x
    t = held * 2.0 + m
    rows = []
    for i in range(4):
        if t[i] > -0.5:
            rows.append(x * t[i])
    return np.sum(np.stack(rows)) if rows else 0.0


def test_alias_before_an_if_then_a_list_grown_under_an_if():
    f = alias_if_then_grown_list
    for x in (np.array([0.6, -0.2, 0.7, 0.15]), np.array([-0.6, -0.9, 0.2, 0.3])):
        assert jit(f, wait=True)(x) == pytest.approx(f(x), rel=1e-13)
        np.testing.assert_allclose(grad(f)(x), numerical_grad(f, [x]), rtol=1e-6, atol=1e-8)


# -- `c[k] op= v` on an array held in a list or dict writes into that array -------------------
# (NumPy's in-place operator: every name holding the array sees it). It rebound the entry to a
# new array instead, so `for k in params: params[k] -= lr * grads[k]` left the caller's arrays
# unchanged under jit, and `bufs = [z]; bufs[0] += 1` left z as it was: silent wrong numbers.

def bump_through_a_list(x):
    z = x * 1.0
    bufs = [z, z]
    bufs[0] += 1.0
    bufs[1] *= x
    return np.sum(z * bufs[1])


def bump_through_a_dict(x):
    z = x * 2.0
    d = {"a": z, "b": x * 1.0}
    d["a"] -= d["b"]
    return np.sum(z ** 2)


def sgd_step(params, grads, lr):
    for k in params:
        params[k] -= lr * grads[k]


def sgd_step_list(ws, gs, lr):
    for i in range(len(ws)):
        ws[i] -= lr * gs[i]
    return ws[0].sum() + ws[1].sum()


def test_an_augmented_assignment_into_a_held_array_writes_in_place():
    x = np.array([1.0, -2.0, 0.5])
    for f in (bump_through_a_list, bump_through_a_dict):
        assert jit(f, wait=True)(x) == pytest.approx(f(x), rel=1e-14)
        np.testing.assert_allclose(grad(f)(x), numerical_grad(f, [x]), rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(jit(grad(f), wait=True)(x), numerical_grad(f, [x]),
                                   rtol=1e-6, atol=1e-8)
    p = {"w": np.ones(3), "b": np.zeros(2)}
    g = {"w": np.full(3, 2.0), "b": np.full(2, 4.0)}
    w = p["w"]
    assert jit(sgd_step, wait=True)(p, g, 0.5) is None
    assert p["w"] is w
    np.testing.assert_array_equal(p["w"], [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(p["b"], [-2.0, -2.0])
    ws = [np.ones(3), np.zeros(2)]
    assert jit(sgd_step_list, wait=True)(ws, [np.full(3, 2.0), np.full(2, 4.0)], 0.5) == -4.0
    np.testing.assert_array_equal(ws[1], [-2.0, -2.0])


# jit(hessian(f)) / jit(jacfwd(f)) of f with a defaulted parameter crashed while building the
# composed function ("non-default argument follows default argument")

def cubic_with_rate(w, lr=0.5):
    return np.sum(w ** 3) * lr


def vector_with_rate(w, lr=0.5):
    return np.sin(w) * lr + w[::-1] ** 2


def test_composed_jacobians_of_a_function_with_a_default():
    from transpile import jacfwd, jacrev
    w = np.array([1.0, 2.0, -0.5])
    np.testing.assert_allclose(jit(hessian(cubic_with_rate), wait=True)(w),
                               np.diag(3.0 * w), rtol=1e-12)
    np.testing.assert_allclose(jit(hessian(cubic_with_rate), wait=True)(w, 0.25),
                               np.diag(1.5 * w), rtol=1e-12)
    want = np.diag(0.5 * np.cos(w)) + np.fliplr(np.diag(2 * w[::-1]))
    for t in (jacfwd, jacrev):
        np.testing.assert_allclose(jit(t(vector_with_rate), wait=True)(w), want, rtol=1e-12)


# x.astype(dtype, copy=False) was refused ("unexpected keyword argument 'copy'"), and with it
# np.tri (NumPy's own source calls it). copy=False gives x itself where the dtype is x's own.

def astype_without_copy(x):
    y = x * 1.0
    z = y.astype(np.float64, copy=False)
    z[0] = 5.0
    w = y.astype(np.float32, copy=False)
    w[1] = -1.0
    return y, w, np.tri(3) * np.sum(z ** 2)


def test_astype_copy_false_and_np_tri():
    x = np.array([1.0, 2.0, 3.0])
    got, want = jit(astype_without_copy, wait=True)(x), astype_without_copy(x)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
    loss = lambda v: np.sum(v.astype(np.float64, copy=False) ** 2 * np.tri(3))
    np.testing.assert_allclose(grad(loss)(x), numerical_grad(loss, [x]), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jit(grad(loss), wait=True)(x), numerical_grad(loss, [x]),
                               rtol=1e-6, atol=1e-8)


# K[np.diag_indices_from(K)] += eps crashed in jit's lowering (np.diff of the shape tuple
# NumPy's own source checks); np.diag_indices(_from) are now read from our NumPy source

def jitter_the_diagonal(K):
    K = K * 1.0
    K[np.diag_indices_from(K)] += 1e-2
    K[np.diag_indices(K.shape[0])] *= 3.0
    return K


@pytest.mark.filterwarnings("error::transpile.TranspileWarning")
def test_diagonal_indices():
    K = np.arange(9.0).reshape(3, 3)
    np.testing.assert_array_equal(jit(jitter_the_diagonal, wait=True)(K), jitter_the_diagonal(K))
    loss = lambda M: np.sum(jitter_the_diagonal(M) ** 2)
    np.testing.assert_allclose(jit(grad(loss), wait=True)(K), numerical_grad(loss, [K]),
                               rtol=1e-6, atol=1e-8)


# a dict holding an array (written in place) and a number (rebound) updated in a loop:
# `params["w"] -= ...; params["b"] -= ...` (a training loop). jit gave the number's update
# up (the in-place write was applied to a number), and grad refused the loop (the names
# holding the array were taken to end on different buffers)

def fit_in_place(params, X, y, lr=0.1, steps=4):
    for _ in range(steps):
        err = X @ params["w"] + params["b"] - y
        grads = {"w": X.T @ err / len(y), "b": np.mean(err)}
        for k in params:
            params[k] -= lr * grads[k]
    return np.mean((X @ params["w"] + params["b"] - y) ** 2)


def test_a_training_loop_updating_a_dict_in_place():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + 0.3
    want_p = {"w": np.zeros(3), "b": np.float64(0.0)}
    want = fit_in_place(want_p, X, y)
    got_p = {"w": np.zeros(3), "b": np.float64(0.0)}
    assert jit(fit_in_place, wait=True)(got_p, X, y) == pytest.approx(want, rel=1e-12)
    np.testing.assert_allclose(got_p["w"], want_p["w"], rtol=1e-12)   # written in place
    loss = lambda w, b: fit_in_place({"w": w, "b": b}, X, y)
    w0, b0 = np.array([1.0, -0.5, 0.2]), 0.5
    g = grad(loss, argnums=(0, 1))(w0.copy(), b0)
    np.testing.assert_allclose(g[0], numerical_grad(lambda w: loss(w.copy(), b0), [w0]),
                               rtol=1e-6, atol=1e-8)
    fd_b = (loss(w0.copy(), b0 + 1e-6) - loss(w0.copy(), b0 - 1e-6)) / 2e-6
    assert g[1] == pytest.approx(fd_b, rel=1e-6)


# the array methods that write into their array: `y.sort()`, `x[i].sort()` (a row, through a
# view), `y.fill(v)` were refused ("an expression statement has no effect")

def median_by_sort(x):
    y = x.copy()
    y.sort()
    return y[y.shape[0] // 2] + y[0]


def sort_rows_in_place(A):
    for i in range(A.shape[0]):
        A[i].sort()
    B = np.empty_like(A)
    B.fill(0.5)
    return B * A[:, :1]


def sort_columns_in_place(A):
    A.sort(axis=0)


def test_array_methods_that_write_in_place():
    rng = np.random.default_rng(4)
    A = rng.standard_normal((4, 5))
    a1, a2 = A.copy(), A.copy()
    np.testing.assert_array_equal(jit(sort_rows_in_place, wait=True)(a1), sort_rows_in_place(a2))
    np.testing.assert_array_equal(a1, a2)               # the caller's rows sorted
    b1, b2 = A.copy(), A.copy()
    assert jit(sort_columns_in_place, wait=True)(b1) is None
    sort_columns_in_place(b2)
    np.testing.assert_array_equal(b1, b2)
    x = rng.standard_normal(7)
    assert jit(median_by_sort, wait=True)(x) == median_by_sort(x)
    fd = numerical_grad(median_by_sort, [x])
    np.testing.assert_allclose(grad(median_by_sort)(x), fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jit(grad(median_by_sort), wait=True)(x), fd, rtol=1e-6, atol=1e-8)


# a variable named `rt` (a GRU's reset gate r_t) took the name of the runtime module the
# generated code imports as rt: every transform but jit crashed

def gru_with_rt(x, h0):
    h = h0
    for t in range(x.shape[0]):
        rt = 1.0 / (1.0 + np.exp(-(x[t] + h)))
        h = rt * h + (1 - rt) * np.tanh(x[t])
    return np.sum(h)


def param_named_rt(rt, np_=2.0):
    return np.sum(rt ** 2) * np_


def test_user_names_rt_and_np():
    rng = np.random.default_rng(5)
    X, h0 = rng.standard_normal((5, 2)), rng.standard_normal(2)
    fd = numerical_grad(gru_with_rt, [X, h0])
    np.testing.assert_allclose(grad(gru_with_rt)(X, h0), fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jit(grad(gru_with_rt), wait=True)(X, h0), fd, rtol=1e-6,
                               atol=1e-8)
    r = np.array([0.5, -1.0])
    np.testing.assert_allclose(grad(param_named_rt)(r), 4.0 * r)
    np.testing.assert_allclose(grad(param_named_rt)(rt=r), 4.0 * r)
    np.testing.assert_allclose(vmap(grad(param_named_rt))(r), 4.0 * r)
    np.testing.assert_allclose(hessian(param_named_rt)(r), 4.0 * np.eye(2))


# jit(grad(f)) of an f that writes into its argument: the compiled gradient was stored into
# the argument's buffer (a write done in place was taken for a copy the function owned), so
# the caller's x held the gradient, and the gradient was x itself

def bump_then_square(x):
    x[0] += 1.0
    return np.sum(x ** 2)


def copy_into_weights(x, w):
    w[0] = x[0]
    return np.sum(w * x)


def smooth_in_place(x, a=0.7):
    for i in range(1, x.shape[0]):
        x[i] = a * x[i] + (1 - a) * x[i - 1]
    return np.sum(x * x)


@pytest.mark.parametrize("f, n", [(bump_then_square, 1), (copy_into_weights, 2),
                                  (smooth_in_place, 1)])
def test_jit_grad_writes_arguments_as_numpy_does(f, n):
    rng = np.random.default_rng(6)
    args = [rng.standard_normal(5) for _ in range(n)]
    want_args = [a.copy() for a in args]
    f(*want_args)
    fd = numerical_grad(lambda *a: f(*[b.copy() for b in a]), [a.copy() for a in args])
    for transform in (grad, lambda f: jit(grad(f), wait=True)):
        got_args = [a.copy() for a in args]
        g = transform(f)(*got_args)
        for got, want in zip(got_args, want_args):
            np.testing.assert_array_equal(got, want)        # written as NumPy writes
        assert not any(g is a for a in got_args)
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)


# out= a row of an array (`np.exp(Z[i], out=Z[i])`, softmax rows in place) was refused as
# an assignment into a nested subscript

def softmax_rows_in_place(Z):
    for i in range(Z.shape[0]):
        Z[i] -= Z[i].max()
        np.exp(Z[i], out=Z[i])
        Z[i] /= Z[i].sum()
    return Z


def test_out_into_a_row():
    Z = np.random.default_rng(7).standard_normal((3, 4))
    want_z = Z.copy()
    want = softmax_rows_in_place(want_z)
    got_z = Z.copy()
    got = jit(softmax_rows_in_place, wait=True)(got_z)
    np.testing.assert_allclose(got, want, rtol=1e-14)
    np.testing.assert_allclose(got_z, want_z, rtol=1e-14)     # the caller's rows written


# np.take along an axis had no Numba form (a segment break under jit and jit(grad))

def take_along(E, ids):
    return np.sum(np.take(E, ids, axis=0) ** 2) + np.sum(np.take(E, ids - 3, axis=1)) + \
        np.sum(np.take(E, 1, axis=-1))


def test_take_along_an_axis():
    rng = np.random.default_rng(8)
    E, ids = rng.standard_normal((5, 4)), np.array([0, 2, 2, 1])
    assert jit(take_along, wait=True)(E, ids) == pytest.approx(take_along(E, ids), rel=1e-13)
    fd = numerical_grad(lambda e: take_along(e, ids), [E])
    np.testing.assert_allclose(grad(take_along)(E, ids), fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jit(grad(take_along), wait=True)(E, ids), fd, rtol=1e-6,
                               atol=1e-8)


# a reduction with dtype= (np.sum(a, dtype=np.float64), np.cumsum, np.cumprod, np.mean) had
# no Numba form: the whole function ran NumPy

def reductions_with_dtype(a, X):
    return (np.cumsum(a, dtype=np.float64)[-1] + np.sum(a, dtype=np.float64),
            np.mean(X, axis=0, dtype=np.float32), np.prod(a, dtype=np.int64),
            np.cumprod(a, dtype=float))


def test_reductions_with_a_dtype():
    rng = np.random.default_rng(9)
    a, X = rng.integers(1, 5, size=6).astype(np.int32), rng.standard_normal((4, 3))
    for got, want in zip(jit(reductions_with_dtype, wait=True)(a, X), reductions_with_dtype(a, X)):
        assert np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_allclose(got, want, rtol=1e-6)
    loss = lambda x: np.sum(x * x, dtype=np.float64)
    x32 = X.astype(np.float32)
    g = jit(grad(loss), wait=True)(x32)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, 2 * x32, rtol=1e-6)


# np.linalg.matrix_power had no Numba lowering (a segment break under jit and jit(grad))

def matrix_powers(A):
    return np.sum(np.linalg.matrix_power(A, 3)) + np.sum(np.linalg.matrix_power(A, -2)) + \
        np.trace(np.linalg.matrix_power(A, 0))


def test_matrix_power():
    A = np.random.default_rng(10).standard_normal((3, 3)) * 0.5 + np.eye(3)
    assert jit(matrix_powers, wait=True)(A) == pytest.approx(matrix_powers(A), rel=1e-12)
    fd = numerical_grad(matrix_powers, [A])
    np.testing.assert_allclose(jit(grad(matrix_powers), wait=True)(A), fd, rtol=1e-5, atol=1e-7)
    A32 = A.astype(np.float32)
    got = jit(lambda a: np.linalg.matrix_power(a, 5), wait=True)(A32)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, np.linalg.matrix_power(A32, 5), rtol=1e-5)


# np.divmod had no rule (NoRuleError); it is read from transpile's NumPy source

def quotient_and_remainder(x, a):
    q, r = np.divmod(x, 3.0)
    qi, ri = np.divmod(a, 4)
    return q * 10.0 + r * x, qi, ri


def test_divmod():
    x, a = np.array([-4.5, 1.25, 7.0, 3.5]), np.array([-7, 3, 9, 12])
    for got, want in zip(jit(quotient_and_remainder, wait=True)(x, a),
                         quotient_and_remainder(x, a)):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    loss = lambda v: np.sum(quotient_and_remainder(v, a)[0])
    np.testing.assert_allclose(grad(loss)(x), numerical_grad(loss, [x]), rtol=1e-6)


# a table of run-time length read at a 2-D image of indices (histogram equalization:
# lut = np.bincount(img.ravel()); lut[img]) broke a segment ("advanced (array) indexing")

def equalize_counts(img):
    lut = np.bincount(img.ravel(), minlength=8)
    cdf = np.cumsum(lut)
    return lut[img], cdf[img] * 1.0 / cdf[-1]


def test_table_of_run_time_length_at_a_2d_index():
    img = np.random.default_rng(11).integers(0, 8, size=(4, 5))
    for got, want in zip(jit(equalize_counts, wait=True)(img), equalize_counts(img)):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


# scipy.linalg.solve_triangular (a Gaussian process's Cholesky solves) was refused: its SciPy
# source cannot be transformed; transpile's own source solves the triangle SciPy reads

def gp_negative_log_likelihood(K, y):
    from scipy.linalg import solve_triangular
    L = np.linalg.cholesky(K)
    a = solve_triangular(L, y, lower=True)
    b = solve_triangular(L.T, a, lower=False)
    return 0.5 * y @ b + np.sum(np.log(np.diag(L)))


def triangular_forms(A, B):
    import scipy.linalg
    st = scipy.linalg.solve_triangular
    return st(A, B), st(A, B, lower=True, trans="T"), st(A, B, unit_diagonal=True, trans=1)


def test_solve_triangular():
    import scipy.linalg
    rng = np.random.default_rng(12)
    X = rng.standard_normal((5, 2))
    K, y = X @ X.T + np.eye(5), rng.standard_normal(5)
    assert jit(gp_negative_log_likelihood, wait=True)(K, y) == \
        pytest.approx(gp_negative_log_likelihood(K, y), rel=1e-12)
    fd = numerical_grad(gp_negative_log_likelihood, [K, y], 1)
    np.testing.assert_allclose(grad(gp_negative_log_likelihood, argnums=1)(K, y), fd, rtol=1e-6)
    np.testing.assert_allclose(jit(grad(gp_negative_log_likelihood, argnums=1), wait=True)(K, y),
                               fd, rtol=1e-6)
    A, B = rng.standard_normal((4, 4)) + 4 * np.eye(4), rng.standard_normal((4, 2))
    want = (scipy.linalg.solve_triangular(A, B),
            scipy.linalg.solve_triangular(A, B, lower=True, trans="T"),
            scipy.linalg.solve_triangular(A, B, unit_diagonal=True, trans=1))
    for dt, tol in ((np.float64, 1e-12), (np.float32, 1e-5)):
        got = jit(triangular_forms, wait=True)(A.astype(dt), B.astype(dt))
        for g, w in zip(got, want):
            assert g.dtype == dt
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


# calls that write into an argument inside a loop (np.add.at, out=, np.put, .fill, .sort):
# the loop did not see the write (no assignment in its source), so only the last iteration's
# write reached the caller's array, under jit and eager transforms alike

def add_at_twice(A, idx):
    for k in range(2):
        np.add.at(A, idx, 1.0)
    return A * 1.0


def exp_in_place_twice(A):
    for k in range(2):
        np.exp(A, out=A)
    return A * 1.0


def put_each(A):
    for k in range(3):
        np.put(A, [k], k + 10.0)
    return A * 1.0


def fill_rows(A):
    for i in range(A.shape[0]):
        A[i].fill(i - 1.5)
    return A * 1.0


@pytest.mark.parametrize("f, extra", [(add_at_twice, (np.array([0, 0, 2]),)),
                                      (exp_in_place_twice, ()), (put_each, ()),
                                      (fill_rows, ())], ids=lambda v: getattr(v, "__name__", ""))
def test_writes_by_calls_in_a_loop_reach_the_argument(f, extra):
    A = np.arange(12.0).reshape(3, 4) * 0.1
    want_a = A.copy()
    want = f(want_a, *extra)
    for transform in (lambda f: jit(f, wait=True), lambda f: jit(f, backend="numpy")):
        got_a = A.copy()
        got = transform(f)(got_a, *extra)
        np.testing.assert_allclose(got, want, rtol=1e-14)
        np.testing.assert_allclose(got_a, want_a, rtol=1e-14)


# an argument written into and then its name rebound (`x[0] = 4.0; x = x * 2.0`): the
# caller's array never got the write (the write-back went to the new binding), and
# jit(grad) returned the written argument as the gradient; a reshape of another shape then
# crashed in the write-back

def write_then_rebind(x):
    x[0] = 4.0
    x = x * 2.0
    return np.sum(x * x)


def write_then_rebind_to_zeros(x):
    x[0] = 4.0
    x = np.zeros(3)
    return x


def write_then_reshape(x):
    x[0] = 1.5
    x = x.reshape(3, 1)
    return np.sum(x * x)


# eager reverse mode of an argument updated as a whole in a loop (`s *= x`): the backward
# loop popped the name back, and the caller's s received its value on entry

def scale_in_a_loop(x, s):
    for i in range(3):
        s *= x
    return np.sum(s)


@pytest.mark.parametrize("f", [write_then_rebind, write_then_reshape, scale_in_a_loop],
                         ids=lambda f: f.__name__)
def test_arguments_written_then_rebound(f):
    n = 2 if f is scale_in_a_loop else 1
    rng = np.random.default_rng(13)
    args = [rng.standard_normal(3) + 1.5 for _ in range(n)]
    want_args = [a.copy() for a in args]
    want = f(*want_args)
    fd = numerical_grad(lambda *a: f(*[b.copy() for b in a]), [a.copy() for a in args])
    for transform in (lambda f: jit(f, wait=True), lambda f: jit(f, backend="numpy")):
        got_args = [a.copy() for a in args]
        assert transform(f)(*got_args) == pytest.approx(want, rel=1e-12)
        for got, w in zip(got_args, want_args):
            np.testing.assert_allclose(got, w, rtol=1e-12)
    for transform in (grad, lambda f: jit(grad(f), wait=True)):
        got_args = [a.copy() for a in args]
        g = transform(f)(*got_args)
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)
        for got, w in zip(got_args, want_args):
            np.testing.assert_allclose(got, w, rtol=1e-12)
    x = args[0].copy()
    np.testing.assert_array_equal(jit(write_then_rebind_to_zeros, wait=True)(x), np.zeros(3))
    assert x[0] == 4.0


# the same array passed twice to a function that writes into its arguments: jit, grad, vjp
# and jacrev refused it; jvp, vmap, jacfwd and hessian computed other numbers than NumPy

def writes_first_reads_second(a, b):
    a[0] = 10.0
    return np.sum(b * b)


def test_shared_arguments_refused_by_every_transform():
    from transpile import jacfwd, jvp
    from transpile.compile.specialization import ArgumentsOverlap
    x = np.array([1.0, 2.0, 3.0])
    X = np.stack([x, x + 1.0])
    calls = [lambda: jvp(writes_first_reads_second, (x, x), (np.ones(3), np.ones(3))),
             lambda: vmap(writes_first_reads_second)(X, X),
             lambda: jacfwd(writes_first_reads_second, argnums=1)(x, x),
             lambda: hessian(writes_first_reads_second, argnums=1)(x, x)]
    for call in calls:
        with pytest.raises(ArgumentsOverlap, match="share memory"):
            call()
    y = x.copy()   # separate arrays: NumPy's numbers
    assert jvp(writes_first_reads_second, (x.copy(), y), (np.zeros(3), np.ones(3)))[1] == \
        pytest.approx(2 * np.sum(y))


# a 0-d array argument written in place (`s += 1.0`, `s[...] = v`, `s[()] = v`): compiled
# code holds it as a number, so the caller's array kept its value under jit; jit(grad) of
# `s[()] = v` produced `1.0[]` (a SyntaxError); grad of a parameter a loop rebinds at once
# (`for x in rows`) returned the Python float 0.0, not zeros of x's shape

def bump_scalar_array(s):
    s += 1.0
    return s * 1.0


def set_scalar_array(x, s):
    s[()] = x[0]
    return np.sum(x) + s


def rebound_by_a_loop(x, rows):
    for x in rows:
        pass
    return np.sum(x)


def test_zero_d_array_arguments_written():
    """Such a call runs the NumPy version (the warning says so for the write): the caller's
    0-d array is written as NumPy writes it."""
    import warnings
    x = np.array([1.0, 2.0, 3.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = np.array(0.5)
        assert jit(bump_scalar_array, wait=True)(s) == 1.5 and s == 1.5
        for transform in (lambda f: jit(f, wait=True), lambda f: jit(grad(f), wait=True), grad):
            s = np.array(0.5)
            transform(set_scalar_array)(x, s)
            assert s == 1.0
        np.testing.assert_array_equal(jit(grad(set_scalar_array), wait=True)(x, np.array(0.5)),
                                      [2.0, 1.0, 1.0])
    g = grad(rebound_by_a_loop)(x, np.ones((2, 3)))
    assert isinstance(g, np.ndarray) and g.shape == (3,) and not g.any()


# jit(hessian) of a loop writing into its argument under an if: a tangent pushed for a value
# saved only for its shape (or a flag) took that value's shape, and the one tangent tape held
# arrays of two shapes (a fallback this session's first fix of hessian through loops caused)

def square_positive_entries(x):
    for i in range(x.shape[0]):
        if x[i] > 0:
            x[i] = x[i] ** 2
    return np.sum(x * x)


def test_jit_hessian_of_a_conditional_write_in_a_loop():
    x = np.array([1.0, -2.0, 3.0, 0.5])
    want = fd_hessian(lambda v: square_positive_entries(v.copy()), x)
    np.testing.assert_allclose(hessian(square_positive_entries)(x.copy()), want, rtol=1e-5,
                               atol=1e-5)
    np.testing.assert_allclose(jit(hessian(square_positive_entries), wait=True)(x.copy()), want,
                               rtol=1e-5, atol=1e-5)


# ---- NumPy signatures the lowering read wrongly, views refused instead of copied -----------------

def eye_and_arange(n):
    return np.eye(n, k=1), np.eye(n + 1, k=-1) @ np.ones(n + 1), np.arange(n * 3, step=3), \
        np.arange(10, step=3)


def integer_dtype_reductions(a, b):
    return (np.sum(a, dtype=np.int32), np.sum(a.reshape(2, 3), axis=0, dtype=np.int16),
            np.prod(a, dtype=np.int32), np.sum(b, dtype=np.int8), np.cumsum(b, dtype=np.int8))


def test_eye_with_k_arange_with_step_and_integer_dtype_reductions_match_numpy():
    for got, want in zip(jit(eye_and_arange)(3), eye_and_arange(3)):
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    a = np.arange(1, 7, dtype=np.int8)
    b = np.full(3, 100, dtype=np.int16)              # an int8 sum of 300 wraps to 44
    for got, want in zip(jit(integer_dtype_reductions)(a, b), integer_dtype_reductions(a, b)):
        assert np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_array_equal(got, want)


def write_into_split(x):
    a, b = np.split(x, 2)
    a[:] = 0.0
    return x


def write_into_flip(x):
    f = np.flip(x)
    f[0] = 100.0
    return x


@pytest.mark.parametrize("f, what", [(write_into_split, "np.split"), (write_into_flip, "np.flip")])
def test_a_write_into_a_view_numpy_makes_by_split_or_flip_is_refused(f, what):
    # NumPy writes x through these views; the transforms wrote a copy and x kept its values
    from transpile.errors import TranspileError
    with pytest.raises(TranspileError, match=rf"test_jit_regressions.py:\d+.*view made by {what}"):
        jit(f)(np.arange(6.0))


def sum_by_index(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i]
    return s


def fill_ramp(n, v):
    out = np.zeros(n)
    for i in range(n):
        out[i] = v * i
    return out


def rows_doubled(A):
    t = np.zeros(A.shape[1])
    for i in range(A.shape[0]):
        t = t + A[i] * 2.0
    return t


def test_loops_over_empty_arrays_compile():
    # the element read/write of a zero-length stand-in failed while typing: NumPy fallback
    for f, args in [(sum_by_index, (np.zeros(0),)), (fill_ramp, (0, 2.0)),
                    (rows_doubled, (np.zeros((0, 3)),))]:
        jf = jit(f)
        got = jf(*args)
        assert jf.last_tier == "compiled"
        want = f(*args)
        assert np.shape(got) == np.shape(want)
        np.testing.assert_array_equal(got, want)


def any_all_count_keepdims(B):
    m = B > 0
    return (np.any(m, axis=1, keepdims=True), np.all(m, axis=0, keepdims=True),
            np.count_nonzero(m, axis=1, keepdims=True), m.all(axis=0, keepdims=True),
            np.any(m, keepdims=True))


def test_keepdims_on_any_all_and_count_nonzero():
    B = np.array([[1.0, -1.0], [-2.0, -3.0], [4.0, 5.0]])
    for got, want in zip(jit(any_all_count_keepdims)(B), any_all_count_keepdims(B)):
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def _last_counter(x, n):
    s = 0.0
    for k in range(n):
        s += x[k]
    return s * k          # k is unbound when the loop ran zero times (Python raises)


def test_a_loop_counter_read_after_a_zero_trip_loop_raises_as_python():
    x = np.arange(1.0, 5.0)
    assert jit(_last_counter)(x, 3) == _last_counter(x, 3)
    np.testing.assert_allclose(grad(_last_counter)(x, 3), [2.0, 2.0, 2.0, 0.0])
    for t in (_last_counter, jit(_last_counter), grad(_last_counter)):
        with pytest.raises(UnboundLocalError, match="'k'"):
            t(x, 0)
    with pytest.raises(UnboundLocalError, match="'k'"):
        vmap(_last_counter, in_axes=(0, None))(np.ones((2, 4)), 0)
    X = np.arange(8.0).reshape(2, 4)
    np.testing.assert_allclose(vmap(_last_counter, in_axes=(0, None))(X, 2),
                               [_last_counter(X[0], 2), _last_counter(X[1], 2)])


def _horner_rev(x):
    s = 0.0
    for i in range(len(x))[::-1]:
        s = s * 0.5 + x[i]
    return s


def _back_substitution(U, b):
    n = b.shape[0]
    x = np.zeros(n)
    for i in np.arange(n)[::-1]:
        x[i] = (b[i] - U[i, i + 1:] @ x[i + 1:]) / U[i, i]
    return x


def test_a_range_sliced_backwards_is_a_reversed_range_loop():
    import warnings
    from transpile.errors import TranspileWarning
    x = np.array([1.0, 3.0, 2.0, 5.0])
    U = np.triu(np.random.default_rng(0).uniform(1.0, 2.0, (4, 4)))
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranspileWarning)     # (was: the whole function in NumPy)
        assert jit(_horner_rev)(x) == _horner_rev(x)
        assert jit(_horner_rev)(np.zeros(0)) == 0.0
        np.testing.assert_allclose(jit(_back_substitution)(U, x), np.linalg.solve(U, x))
    np.testing.assert_allclose(grad(_horner_rev)(x), numerical_grad(_horner_rev, [x]), rtol=1e-7)
