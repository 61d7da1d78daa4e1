"""A list of arrays that grows at run time (more items than are written out when the code is
generated, or under an `if` on the data): a buffer of rows (frontend/normalize/runlists.py),
compiled under jit with fallback as an error, differentiated under grad and jit(grad) against
central differences, and NumPy's meaning for np.stack/vstack/hstack/column_stack/concatenate.
Writes Python's list would see through an appended array are refused with the line."""
import numpy as np
import pytest

from transpile import grad, jit
from transpile.errors import TranspileError

pytestmark = pytest.mark.filterwarnings("error::transpile.TranspileWarning")

N = 300         # more than the 256 items a loop appending arrays is written out for


def trajectory(y0, h, n):
    y = y0.copy()
    traj = [y0.copy()]
    for _ in range(n):
        y = y + h * (-y + np.sin(y))
        traj.append(y)
    return np.array(traj)


def trajectory_from_empty(y0, h, n):
    y = y0.copy()
    traj = []
    for _ in range(n):
        y = y + h * (-y + np.cos(y))
        traj.append(y.copy())
    return np.stack(traj)


def trajectory_loss(y0, h, n):
    return np.sum(trajectory(y0, h, n)[-1] ** 2) + np.sum(trajectory_from_empty(y0, h, n) ** 2)


def rows_above(X, t):
    keep = []
    for i in range(X.shape[0]):
        if X[i].sum() > t:
            keep.append(X[i] * X[i, 1])
    if len(keep) == 0:
        return np.zeros((0, X.shape[1]))
    return np.array(keep)


def rows_above_loss(X):
    return np.sum(rows_above(X, 1.5) ** 2)


def monotone_stack(X):
    st = []
    for i in range(X.shape[0]):
        if len(st) > 0 and st[-1][0] > X[i, 0]:
            st.pop()
        st.append(X[i].copy())
    s = 0.0
    for v in st:
        s += v[1]
    return np.array(st), s, len(st)


def joined(X, t):
    rows, mats = [], []
    for i in range(X.shape[0]):
        if X[i, 0] > t:
            rows.append(X[i] + 1.0)
            mats.append(np.outer(X[i], X[i]))
    if len(rows) == 0:
        return 0.0
    return (np.sum(np.concatenate(rows)) + np.sum(np.vstack(rows) * 2)
            + np.sum(np.hstack(rows) ** 2) + np.sum(np.column_stack(rows)[0])
            + np.sum(np.stack(rows, axis=1)[1]) + np.sum(np.stack(mats, axis=-1)[0, 1])
            + np.sum(np.concatenate(mats, axis=1)[1]) + np.sum(np.vstack(mats)[::2])
            + np.sum(np.hstack(mats)[0]))


def _central(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = eps
        g.flat[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


def _same(got, want):
    if isinstance(want, tuple):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
        return
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-12, atol=1e-12)
    assert np.asarray(got).shape == np.asarray(want).shape


@pytest.mark.parametrize("fn,args", [
    (trajectory, (np.array([0.3, 0.7, 1.1]), 0.05, N)),
    (trajectory_from_empty, (np.array([0.3, 0.7, 1.1]), 0.05, N)),
    (rows_above, (np.random.default_rng(0).random((N, 3)), 1.5)),
    (rows_above, (np.random.default_rng(0).random((N, 3)), 5.0)),     # nothing kept
    (monotone_stack, (np.random.default_rng(1).random((N, 3)),)),
    (joined, (np.random.default_rng(2).random((N, 3)), 0.3)),
    (joined, (np.random.default_rng(2).random((N, 3)), 2.0)),        # empty: the early return
], ids=["trajectory", "from_empty", "rows_above", "none_kept", "stack_pop", "joins",
        "joins_empty"])
def test_jit_matches_numpy(fn, args):
    _same(jit(fn, wait=True)(*args), fn(*args))


def test_float32_items_keep_their_dtype():
    y0 = np.array([0.3, 0.7], dtype=np.float32)
    got = jit(trajectory, wait=True)(y0, 0.05, N)
    assert got.dtype == np.float32 and got.shape == (N + 1, 2)
    np.testing.assert_allclose(got, trajectory(y0, np.float32(0.05), N), rtol=1e-5)


@pytest.mark.parametrize("transform", ["grad", "jit(grad)"])
def test_trajectory_gradient(transform):
    y0 = np.array([0.3, 0.7, 1.1])
    f = grad(trajectory_loss) if transform == "grad" else jit(grad(trajectory_loss), wait=True)
    want = _central(lambda y: trajectory_loss(y, 0.01, N), y0)
    np.testing.assert_allclose(f(y0, 0.01, N), want, rtol=1e-6)


def test_rows_kept_under_if_gradient():
    X = np.random.default_rng(3).random((N, 3))
    np.testing.assert_allclose(grad(rows_above_loss)(X), _central(rows_above_loss, X),
                               rtol=1e-6, atol=1e-8)


def appended_then_written(y0, n):
    y = y0.copy()
    out = []
    for i in range(n):
        out.append(y)
        y += 1.0            # Python's list holds y itself: every item would change
    return np.array(out)


def item_written(X):
    out = []
    for i in range(X.shape[0]):
        out.append(X[i] * 2.0)
    last = out[-1]
    last[0] = 5.0           # Python would change the list's last item
    return np.array(out)


def test_write_into_an_appended_array_is_refused():
    with pytest.raises(TranspileError, match=r"writing into 'y', which is an array appended at "
                                             r"line \d+ to the list 'out'"):
        jit(appended_then_written, wait=True)(np.zeros(2), N)


def test_write_into_an_item_read_back_is_refused():
    with pytest.raises(TranspileError, match="writing into 'last', which is an item of the list "
                                             "'out'"):
        jit(item_written, wait=True)(np.ones((N, 2)))


def ragged(X):
    out = []
    for i in range(X.shape[0]):
        if X[i, 0] > 0.5:
            out.append(X[i])
        else:
            out.append(X[i, :1])
    return len(out)


def test_items_of_another_shape_raise_at_run_time():
    X = np.random.default_rng(4).random((N, 2))
    f = jit(ragged, wait=True)
    with pytest.raises(ValueError, match="holds arrays of one shape"):
        f(X)


def sorted_rows(X):
    out = []
    for i in range(X.shape[0]):
        out.append(X[i])
    out.sort()
    return len(out)


def test_sorting_a_list_of_arrays_is_refused():
    with pytest.raises(TranspileError, match="sorting the list 'out' of arrays"):
        jit(sorted_rows, wait=True)(np.ones((N, 2)))


# -- operators and methods on a list of run-time length: Python's meaning ---------------------

def kept(x, t):
    a = []
    for v in x:
        if v > t:
            a.append(v)
    return a


def joined_and_sliced(X):
    a, b = [], []
    for i in range(X.shape[0]):
        if X[i, 0] > 0.5:
            a.append(X[i] * 1.0)
        else:
            b.append(X[i] + 1.0)
    c = a[:-1] + b[1:]
    return np.array(c), np.array(a[::2]), np.array(b[-3:]), len(c)


def concatenated_numbers(x):
    a = kept(x, 0.0)
    return np.array(a + a), np.array(a * 2), np.array(a + [7.0]), np.array([7.0] + a)


def extended(x, n):
    a, b = [], []
    for i in range(n):
        a.append(x[i])
        a.extend([x[i] * 2, x[i] * 3])
        if x[i] > 0.5:
            b.append(x[i] + 1)
    c = a                   # another name for the list: sees the extends below (a list of
    #                         known structure held by two names is refused: the test below)
    a.extend(b)
    a += b
    return np.array(c), len(a)


def unrolled_then_extended(x):
    a = [x[0], x[1]]
    a.extend(kept(x, 0.5))
    return np.array(a)


def elementwise_with_array(x):
    a = kept(x, 0.0)
    return np.array(a) + 1.0


@pytest.mark.parametrize("fn,args", [
    (joined_and_sliced, (np.random.default_rng(5).random((N, 2)),)),
    (joined_and_sliced, (np.random.default_rng(5).random((7, 2)),)),
    (concatenated_numbers, (np.random.default_rng(6).standard_normal(N),)),
    (concatenated_numbers, (np.random.default_rng(6).standard_normal(5),)),
    (extended, (np.random.default_rng(7).random(N + 10), N)),
    (unrolled_then_extended, (np.random.default_rng(8).random(N),)),
], ids=["join_slice", "join_slice_short", "concat_numbers", "concat_short", "extend",
        "struct_extended"])
def test_list_operators_have_pythons_meaning(fn, args):
    _same(jit(fn, wait=True)(*args), fn(*args))


def added_to_numbers(x):
    a = kept(x, 0.0)
    return np.array(a - a)      # (Python: TypeError)


def test_other_operators_on_a_list_are_refused():
    with pytest.raises(TranspileError, match="this operator on the list 'a' is not supported"):
        jit(added_to_numbers, wait=True)(np.random.default_rng(9).standard_normal(N))


def aliased_known_list(x):
    a = [x[0]]
    b = a
    a += [x[1]]             # Python: b sees the new item too
    return np.array(b)


def test_extending_a_list_another_name_holds_is_refused():
    with pytest.raises(TranspileError, match="another name .* also holds"):
        jit(aliased_known_list, wait=True)(np.ones(3))
