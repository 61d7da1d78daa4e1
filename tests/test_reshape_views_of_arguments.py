"""A reshape/ravel of an argument is a view of the caller's array only when that array is
C-contiguous: NumPy copies a Fortran-ordered, transposed or strided one. The generated code
takes the reshape as a view (a write through it reaches the argument), so a call with another
layout must not run that code: jit of a plain function runs the function itself (one
warning), the other transforms refuse the call with a clear error. np.squeeze and
np.expand_dims are views of any array."""
import warnings

import numpy as np
import pytest

from transpile import grad, jit, vmap
from transpile.errors import TranspileError, TranspileWarning


def ravel_write(A):
    r = A.ravel()
    r[0] = 100.0
    return r.sum()


def reshape_add(A):
    r = A.reshape(-1)
    r[1] += 5.0
    return r * 2.0


def contiguous_copy_write(A):
    r = np.ascontiguousarray(A)
    r[0, 0] = -1.0
    return r.sum() + A.sum()


def view_then_base_written(A):
    v = A.reshape(-1)
    A[0, 0] = 9.0
    return v.sum()


LAYOUTS = {
    "C": lambda: np.arange(1.0, 13.0).reshape(3, 4),
    "F": lambda: np.asfortranarray(np.arange(1.0, 13.0).reshape(3, 4)),
    "transposed": lambda: np.arange(1.0, 13.0).reshape(4, 3).T,
    "strided": lambda: np.arange(1.0, 25.0).reshape(3, 8)[:, ::2],
}


@pytest.mark.parametrize("fn", [ravel_write, reshape_add, contiguous_copy_write,
                                view_then_base_written])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_jit_gives_numpys_result_and_argument_for_every_layout(fn, layout):
    want_arg = LAYOUTS[layout]()
    want = fn(want_arg)
    got_arg = LAYOUTS[layout]()
    j = jit(fn)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = j(got_arg)
        again = j(LAYOUTS[layout]())
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got_arg, want_arg)       # the caller's array as NumPy left it
    texts = [str(w.message) for w in caught if issubclass(w.category, TranspileWarning)]
    if layout == "C":
        assert texts == [] and j.last_tier == "compiled"
        np.testing.assert_array_equal(again, want)
    else:
        assert texts and all("not C-contiguous" in t and "plain Python" in t for t in texts)


def test_the_fast_path_checks_the_layout_too():
    j = jit(ravel_write)
    for _ in range(3):          # the C-contiguous calls install the fast entry
        j(LAYOUTS["C"]())
    a = LAYOUTS["F"]()
    want = LAYOUTS["F"]()
    with pytest.warns(TranspileWarning, match="not C-contiguous"):
        assert j(a) == ravel_write(want)
    np.testing.assert_array_equal(a, want)


def loss(A):
    r = A.ravel()
    r[0] = 0.0
    return np.sum(A ** 2)


def test_grad_is_right_for_c_order_and_refuses_other_layouts():
    A = LAYOUTS["C"]()
    want = 2.0 * A
    want[0, 0] = 0.0            # the write through the view replaced A[0, 0]
    np.testing.assert_allclose(grad(loss)(A.copy()), want)
    np.testing.assert_allclose(jit(grad(loss))(A.copy()), want)
    for t in (grad(loss), jit(grad(loss))):
        with pytest.raises(TranspileError, match="'A' is not C-contiguous"):
            t(LAYOUTS["F"]())


def test_vmap_of_a_reshape_view_write():
    batch = np.stack([LAYOUTS["C"](), 2.0 * LAYOUTS["C"]()])
    want = [view_then_base_written(b.copy()) for b in batch]
    np.testing.assert_allclose(vmap(view_then_base_written)(batch.copy()), want)


def squeeze_expand(x):
    B = np.zeros((3, 4))
    v = np.expand_dims(B.T, 0)       # a view of a transposed (not contiguous) view
    v[0, 1, 2] = x
    w = np.squeeze(v[:, ::2])
    w[0, 0] += 1.0
    return B


def test_squeeze_and_expand_dims_are_views_of_any_array():
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranspileWarning)
        np.testing.assert_array_equal(jit(squeeze_expand)(5.0), squeeze_expand(5.0))
    g = grad(lambda x: np.sum(squeeze_expand(x) ** 2))(5.0)
    assert g == pytest.approx(2 * 5.0)


def returns_reshape(a):
    a[0] += 1.0
    return a.reshape(2, 3)


def returns_part_of_ravel(a):
    r = a.ravel()
    r[2] = 7.0
    return r[1:]


def returns_views_and_a_copy(a):
    a[1] *= 2
    return np.expand_dims(a, 0), a.T.ravel()      # a view of a; a copy (ravel of a.T)


@pytest.mark.parametrize("fn,shape", [(returns_reshape, (6,)), (returns_part_of_ravel, (6,)),
                                      (returns_views_and_a_copy, (2, 3))])
def test_returned_reshapes_of_a_written_argument_are_views_as_in_numpy(fn, shape):
    want_arg = np.arange(6.0).reshape(shape)
    got_arg = want_arg.copy()
    want = fn(want_arg)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranspileWarning)
        got = jit(fn)(got_arg)
    want = want if isinstance(want, tuple) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    np.testing.assert_array_equal(got_arg, want_arg)
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g, w)
        assert np.shares_memory(g, got_arg) == np.shares_memory(w, want_arg)
