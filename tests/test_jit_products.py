"""Matrix products under jit against NumPy: small ones by Numba's np.dot, large ones and strided
ones by NumPy's own BLAS from the compiled code (runtime/backends/numba_products.py), a stack
times one matrix as one product of the stack's rows. Fallback (TranspileWarning) is an error."""
import re
import warnings

import numpy as np
import pytest

from transpile import jit
from transpile.errors import TranspileWarning


def _run(f, *args):
    j = jit(f, wait=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranspileWarning)
        got = j(*args)
    return got, j.source_for(*args)


def _close(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype
    tol = 1e-5 if want.dtype in (np.float32, np.complex64) else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def products(a, b, v):
    return a @ b, v @ b, a @ v[:a.shape[1]], np.dot(a, b) * 2.0


def strided(d):
    out = np.zeros((d.shape[1], d.shape[1]))
    for i in range(d.shape[1]):
        out[i, i:] = d[:, i] @ d[:, i:]          # a column times a slice of columns
    return out


def stack_times_matrix(s, m):
    return np.reshape(s, (s.shape[0], 1, s.shape[1])) @ m, np.dot(s.reshape(2, -1, s.shape[1]), m)


@pytest.mark.parametrize("n", [3, 40, 130])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_products_of_every_size_equal_numpy(n, dtype):
    r = np.random.default_rng(n)
    a = (r.standard_normal((n, n + 2)) + (1j * r.standard_normal((n, n + 2))
                                          if dtype == np.complex128 else 0)).astype(dtype)
    b = r.standard_normal((n + 2, n)).astype(dtype)
    v = r.standard_normal(n + 2).astype(dtype)
    got, src = _run(products, a, b, v)
    for g, w in zip(got, products(a, b, v)):
        _close(g, w)
    assert "blas_dot(" in src


@pytest.mark.parametrize("shape", [(12, 10), (203, 200)])
def test_strided_operands_equal_numpy(shape):
    d = np.random.default_rng(1).standard_normal(shape)
    got, src = _run(strided, d)
    _close(got, strided(d))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_a_stack_times_a_matrix_is_one_product(dtype):
    r = np.random.default_rng(2)
    s = (r.standard_normal((6, 5)) * 4).astype(dtype)
    m = r.standard_normal((5, 7))
    got, src = _run(stack_times_matrix, s, m)
    for g, w in zip(got, stack_times_matrix(s, m)):
        _close(g, w)
    main = src.split("def stack_times_matrix__jit")[1]
    assert not re.search(r"^\s*for ", main, re.M), src          # no loop per matrix


def rank_two_update(A, u1, v1, u2, v2):
    A += np.outer(u1, v1) + np.outer(u2, v2)       # the caller's A, as gemver writes it
    return np.outer(u1, A[0]).sum(axis=0)


OUTER_CASES = [
    (np.arange(4.0), np.arange(3.0) - 1.0),
    (np.arange(6).reshape(2, 3), np.linspace(0, 1, 4)),            # int, flattened
    (np.arange(3, dtype=np.float32), np.arange(2, dtype=np.float32)),
    (np.array([1 + 2j, 3j]), np.array([0.5, 2.0, -1.0])),
    (np.arange(2.0).reshape(1, 1, 2), np.arange(3.0)),                # 3-d, flattened
    (np.array([True, False]), np.array([3, 4])),
    (np.zeros(0), np.arange(3.0)),
]


@pytest.mark.parametrize("case", range(len(OUTER_CASES)))
def test_outer_is_a_broadcast_product_with_numpys_values(case):
    x, y = OUTER_CASES[case]
    got, src = _run(lambda a, b: np.outer(a, b) * 1, x, y)
    _close(got, np.outer(x, y) * 1)
    assert "np.outer" not in "\n".join(ln for ln in src.splitlines()
                                        if not ln.strip().startswith("#"))


def test_a_rank_two_update_writes_no_outer_product():
    r = np.random.default_rng(3)
    args = [r.random((40, 40))] + [r.random(40) for _ in range(4)]
    mine, theirs = [a.copy() for a in args], [a.copy() for a in args]
    got, src = _run(rank_two_update, *mine)
    want = rank_two_update(*theirs)
    _close(got, want)
    _close(mine[0], theirs[0])              # the caller's A updated alike
    code = [ln for ln in src.splitlines() if not ln.strip().startswith("#")]
    assert not [ln for ln in code if "np.outer" in ln or "np.empty((A__n0, A__n0)" in ln]


def _int_gemm(alpha, beta, C, A, B):
    C *= beta
    C += alpha * A @ B


def _int_products(A, B, v, w):
    return A @ B, A @ v, w @ A, v @ v, np.dot(A, v), (A @ B).sum()


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.int16])
def test_integer_matrix_products_compile(dtype):
    # (Numba's np.dot takes floats only: the whole function ran in NumPy)
    rng = np.random.default_rng(0)
    A = rng.integers(0, 50, (3, 4)).astype(dtype)
    B = rng.integers(0, 50, (4, 2)).astype(dtype)
    v, w = rng.integers(0, 9, 4).astype(dtype), rng.integers(0, 9, 3).astype(dtype)
    want_C, got_C = np.ones((3, 2), dtype), np.ones((3, 2), dtype)
    _int_gemm(3, 2, want_C, A, B)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranspileWarning)
        jit(_int_gemm)(3, 2, got_C, A, B)
        got = jit(_int_products)(A, B, v, w)
    np.testing.assert_array_equal(got_C, want_C)
    for g, want in zip(got, _int_products(A, B, v, w)):
        np.testing.assert_array_equal(g, want)
        assert np.result_type(g) == np.result_type(want)
