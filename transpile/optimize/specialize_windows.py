"""Fixed-length windows: x[i:i + 3], x[i - 1:i + 2], A[i:i + 2, j:j + 2] with run-time bounds.

A slice whose bounds are computed at run time usually has a shape known only at run time, which
jit cannot type. When both bounds are the same run-time integer plus constants, the window
has a fixed length (the difference of the constants) as long as it lies inside the array,
which is what such code means. The specializer gives it that shape and records it in
`avals.windows`; the lowering checks the shape right after the slice, and a window that
reached past an end (where NumPy gives a shorter slice) makes that call run the NumPy version
(api/jit.py), so the numbers are always NumPy's.
"""
import numpy as np

from transpile.core import ir
from transpile.core.ir import Const, Var
from transpile.primitives.internal.adjoint_helpers import getitem_vjp
from transpile.primitives.numpy.elementwise import add, multiply, subtract
from transpile.core.avals import dummy
# the lowering's IndexError message starts with this
from transpile_runtime.backends.messages import WINDOW as MARK


def _int_const(a):
    return isinstance(a, Const) and isinstance(a.value, (int, np.integer)) and \
        not isinstance(a.value, bool)


def note_offset(sp, eqn):
    """Remember t = i + c / t = i - c / t = c + i, and t = c * i (a stride: x[2 * k:2 * k + 2]
    computes 2 * k twice): the root of t (a name, or ("*", c, root)) and its constant offset
    (integers; i bound once in its scope)."""
    prim = eqn.prim
    if prim not in (add, subtract, multiply) or eqn.out in sp.multi:
        return
    x, y = eqn.args.get("x"), eqn.args.get("y")
    if prim is multiply:
        base, c = (x, y) if isinstance(x, Var) and _int_const(y) else (y, x)
        if not (isinstance(base, Var) and _int_const(c)):
            return
        k = int(c.value)
        _note(sp, eqn, base, lambda root, c0: (("*", k, root), k * c0))
        return
    if isinstance(x, Var) and _int_const(y):
        base, c = x, int(y.value) * (1 if prim is add else -1)
    elif prim is add and isinstance(y, Var) and _int_const(x):
        base, c = y, int(x.value)
    else:
        return
    _note(sp, eqn, base, lambda root, c0: (root, c0 + c))


def _note(sp, eqn, base, make):
    """Record eqn.out as make(root, offset) of the int scalar `base` (bound once)."""
    av = sp.aval(base)
    if av is None or av.shape or av.dtype.kind not in "iu" or base.name in sp.multi:
        return
    offsets = _offsets(sp)
    root, c0 = offsets.get(base.name, (base.name, 0))
    offsets[eqn.out] = make(root, c0)


def _offsets(sp):
    o = getattr(sp, "_offsets", None)
    if o is None:
        o = sp._offsets = {}
    return o


def _bound(sp, a):
    """(root name, constant offset) of a slice bound, or None."""
    if not isinstance(a, Var):
        return None
    o = _offsets(sp)
    if a.name in o:
        return o[a.name]
    av = sp.aval(a)
    if av is None or av.shape or av.dtype.kind not in "iu" or a.name in sp.multi:
        return None
    return (a.name, 0)


def window_aval(sp, eqn):
    """The AVal of x[...] whose run-time slices are all fixed-length windows (recorded in
    avals.windows), or None."""
    x, index = eqn.args.get("x"), eqn.args.get("index")
    xa = sp.aval(x)
    if xa is None or not isinstance(index, ir.IndexArg):
        return None
    concrete = []
    for it in index.items:
        if isinstance(it, ir.SliceArg) and any(isinstance(b, Var)
                                               for b in (it.lower, it.upper, it.step)):
            if it.step is not None and not (_int_const(it.step) and it.step.value == 1):
                return None
            lo, hi = _bound(sp, it.lower), _bound(sp, it.upper)
            if lo is None or hi is None or lo[0] != hi[0] or hi[1] - lo[1] < 0:
                return None
            concrete.append(slice(0, hi[1] - lo[1]))
        elif isinstance(it, ir.SliceArg):
            concrete.append(slice(*[None if b is None else sp.value(b) for b in
                                    (it.lower, it.upper, it.step)]))
        elif isinstance(it, (Var, Const)):
            v = sp.value(it, True)
            if np.ndim(v):
                return None
            concrete.append(v)
        else:
            concrete.append(it)
    try:
        shape = np.shape(dummy(xa, True)[tuple(concrete)])
    except Exception:
        return None
    AVal = type(xa)
    av = AVal(tuple(shape), xa.dtype)
    sp.avals.windows[eqn.out] = (tuple(shape), eqn.loc)
    return av


def has_run_time_slice(eqn):
    index = eqn.args.get("index")
    return isinstance(index, ir.IndexArg) and any(
        isinstance(it, ir.SliceArg) and any(isinstance(b, Var) for b in (it.lower, it.upper,
                                                                         it.step))
        for it in index.items)


def scatter_aval(sp, eqn):
    """getitem_vjp(ct, x, index) with run-time slice bounds: zeros of x's shape (ct's dtype)
    with ct added in; setitem(x, index, v): x's shape and dtype. Neither depends on the
    index (a write of the wrong size fails at run time, as in NumPy)."""
    if eqn.prim is not getitem_vjp:
        return sp.aval(eqn.args.get("x"))
    xa, ct = sp.aval(eqn.args.get("x")), eqn.args.get("ct")
    ca = sp.aval(ct)
    if ca is None and isinstance(ct, Var):      # ct of run-time length (x[:i]'s): its dtype
        ca = sp.unsized.get(ct.name)
    if xa is None or ca is None:
        return None
    dtype = np.result_type(ca.dtype.type(0).item() if ca.weak else dummy(ca))
    return type(xa)(tuple(xa.shape), dtype)
