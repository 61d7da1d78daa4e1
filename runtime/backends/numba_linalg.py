"""LAPACK calls for jit's Numba code where Numba's np.linalg functions do not make the call
NumPy makes: np.linalg.eigh / eigvalsh with UPLO='U' (Numba reads the lower triangle
always, and dsyevd on the upper one gives other eigenvector signs than on the mirrored lower
one) and np.linalg.svd(compute_uv=False) (NumPy asks dgesdd for no vectors, JOBZ='N', whose
singular values differ in the last bits from those computed with vectors).

Each calls the LAPACK routine NumPy calls (dsyevd, dgesdd), with NumPy's arguments, on a
Fortran-ordered float64 copy, through the C helpers Numba registers for its own np.linalg
(numba/_lapack.c: the workspace queries are done there). Like NumPy (and unlike Numba's
np.linalg) they do not refuse NaN or inf; a routine that does not converge raises NumPy's
LinAlgError message. NumPy computes float32 input in float64 too, so the callers cast.
"""
import numpy as np
from numba import njit, types

__all__ = ["eigh_lapack", "svd_values_lapack"]

_F64P = types.CPointer(types.float64)
_xxxevd = types.ExternalFunction("numba_ez_xxxevd", types.intc(
    types.char, types.char, types.char, types.intp, _F64P, types.intp, _F64P))
_gesdd = types.ExternalFunction("numba_ez_gesdd", types.intc(
    types.char, types.char, types.intp, types.intp, _F64P, types.intp, _F64P, _F64P,
    types.intp, _F64P, types.intp))

_D, _V, _N, _L, _U = ord("d"), ord("V"), ord("N"), ord("L"), ord("U")


@njit(cache=True)
def _fortran_copy(a):
    """A float64 copy of the matrix a in Fortran order (what LAPACK reads)."""
    m, n = a.shape
    out = np.empty((n, m), np.float64)
    for i in range(m):
        for j in range(n):
            out[j, i] = a[i, j]
    return out.T


@njit(cache=True)
def eigh_lapack(a, upper, vectors):
    """dsyevd of the square matrix a reading its upper (upper=True) or lower triangle:
    (eigenvalues ascending, eigenvectors as columns; a copy of a where vectors=False)."""
    n = a.shape[0]
    if a.shape[1] != n:
        raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square")
    acpy = _fortran_copy(a)
    w = np.empty(n, np.float64)
    if n == 0:
        return w, acpy
    info = _xxxevd(_D, _V if vectors else _N, _U if upper else _L, n, acpy.ctypes, n,
                   w.ctypes)
    if info < 0:
        raise ValueError("LAPACK dsyevd: an invalid argument")
    if info > 0:
        raise np.linalg.LinAlgError("Eigenvalues did not converge")
    return w, acpy


@njit(cache=True)
def svd_values_lapack(a):
    """The singular values of the matrix a (descending) from dgesdd with JOBZ='N'."""
    m, n = a.shape
    k = min(m, n)
    s = np.empty(k, np.float64)
    if k == 0:
        return s
    acpy = _fortran_copy(a)
    unused = np.empty(1, np.float64)
    info = _gesdd(_D, _N, m, n, acpy.ctypes, m, s.ctypes, unused.ctypes, 1, unused.ctypes, 1)
    if info < 0:
        raise ValueError("LAPACK dgesdd: an invalid argument")
    if info > 0:
        raise np.linalg.LinAlgError("SVD did not converge")
    return s
