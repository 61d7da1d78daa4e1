"""Shape specialization of vmap's run-time helpers (runtime/batching.py), for optimize/specialize.py.

Batched code calls `rt.batch_*` helpers wherever the batching transform could not decide
something when it generated the code. Under jit every shape is known, so they become plain
array code that Numba compiles:

    batch_broadcast(x, n)            np.broadcast_to(x, (n,) + shape)      (a copy when carried)
    batch_check_scalar_output(out)   checked now; the seed is ones of the batched shape
    batch_unbroadcast(ct, x, ..)     a sum over the broadcast axes of each example
    batch_broadcast_like(t, like)    a broadcast to the batched shape of `like`
    batch_align(x, ndim, batched)    a reshape inserting unit axes after the batch axis
    rows = batch_slots(n)            rows = np.zeros((n,) + shape, dtype)  (shape and dtype of
    rows = batch_store(rows, i, v)     the first stored row; the allocation is filled in
    y = batch_stacked(rows, n)         when the loop body shows it) / rows[i] = v / y = rows

A helper whose operands' shapes are still unknown is left alone (the lowering then refuses
it, naming the construct).
"""
import numpy as np

from transpile.core.ir import Const, Eqn, IndexArg, SliceArg, Var
from transpile.primitives.registry import by_name
from transpile.optimize.specialize_control import is_zero
from transpile.optimize.specialize_rewrites import _norm_axes
from transpile_runtime.batching import batch_check_scalar_output
from transpile.primitives.internal.control import assign
from transpile.core.avals import AVal


def _size(sp, a):
    """The batch size as a Python int (a constant under jit), or None."""
    a = sp.atom(a)
    if isinstance(a, Const) and isinstance(a.value, (int, np.integer)) and \
            not isinstance(a.value, bool):
        return int(a.value)
    return None


def rw_batch_broadcast(sp, eqn, out):
    x = eqn.args["x"]
    xa, n = sp.aval(x), _size(sp, eqn.args["size"])
    if xa is None or n is None:
        return False
    sp._bcast(eqn, out, x, (n,) + tuple(xa.shape))
    if is_zero(x) or isinstance(x, Var) and x.name in sp.known_zeros:
        # a reset adjoint that a branch join makes batched: when the other path holds an
        # array, these zeros take its shape (specialize_control.bind_joined)
        sp.zero_bcasts[eqn.out] = out[-1]
    return True


def rw_batch_check_scalar_output(sp, eqn, out):
    av = sp.aval(eqn.args["out"])
    if av is None or not av.shape:
        return False
    holo = eqn.args.get("holomorphic", Const(False))
    batch_check_scalar_output(np.zeros(av.shape, av.dtype), eqn.args["fname"].value,
                              isinstance(holo, Const) and bool(holo.value))
    return sp._bcast(eqn, out, Const(av.dtype.type(1)), av.shape)


def _flag(a):
    return bool(a.value) if isinstance(a, Const) else None


def rw_batch_unbroadcast(sp, eqn, out):
    a = eqn.args
    ga, xa = sp.aval(a["ct"]), sp.aval(a["x"])
    ct_b, x_b = _flag(a["ct_batched"]), _flag(a["x_batched"])
    if ga is None or xa is None or ct_b is None or x_b is None or not ct_b:
        return False
    shape = xa.shape[1:] if x_b else xa.shape
    gshape = ga.shape[1:]
    if gshape == shape:
        sp.alias(eqn, a["ct"])
        return True
    extra = len(gshape) - len(shape)
    if extra < 0:
        return False
    axes = tuple(range(1, extra + 1)) + tuple(
        1 + i + extra for i, m in enumerate(shape) if m == 1 and gshape[i + extra] != 1)
    s = a["ct"]
    if axes:
        s = sp.emit(out, by_name("sum"), {"x": s, "axis": Const(axes)}, eqn.loc, base=eqn.out)
    want = ga.shape[:1] + tuple(shape)
    if sp.aval(s).shape == want:
        sp.alias(eqn, s)
        return True
    return sp._reshape(eqn, out, s, want)


def rw_batch_broadcast_like(sp, eqn, out):
    a = eqn.args
    ta, la = sp.aval(a["t"]), sp.aval(a["like"])
    t_b, l_b = _flag(a["t_batched"]), _flag(a["like_batched"])
    if ta is None or la is None or t_b is None or l_b is None:
        return False
    shape = la.shape[1:] if l_b else la.shape
    size = ta.shape[0] if t_b else la.shape[0]
    t = a["t"]
    if t_b:
        r = len(ta.shape) - 1
        if r < len(shape):
            t = sp.emit(out, by_name("reshape"),
                        {"x": t, "shape": Const(ta.shape[:1] + (1,) * (len(shape) - r)
                                                + ta.shape[1:])}, eqn.loc, base=eqn.out)
    target = (size,) + tuple(shape)
    if sp.aval(t).shape == target:
        sp.alias(eqn, t)
        return True
    return sp._bcast(eqn, out, t, target)


def rw_batch_align(sp, eqn, out):
    a = eqn.args
    xa = sp.aval(a["x"])
    like_ndim, like_b = a["like_ndim"], a["like_batched"]
    like_ndim = sp.atom(like_ndim)
    if xa is None or not isinstance(like_ndim, Const) or _flag(like_b) is None:
        return False
    n = int(like_ndim.value) - (1 if _flag(like_b) else 0)
    r = len(xa.shape) - 1
    if r >= n:
        sp.alias(eqn, a["x"])
        return True
    return sp._reshape(eqn, out, a["x"], xa.shape[:1] + (1,) * (n - r) + xa.shape[1:])


def rw_batch_sum_grad(sp, eqn, out):
    a = eqn.args
    ca, xa = sp.aval(a["ct"]), sp.aval(a["x"])
    axis, keep = a["axis"], a["keepdims"]
    ct_b, x_b = _flag(a["ct_batched"]), _flag(a["x_batched"])
    if ca is None or xa is None or not isinstance(axis, Const) or _flag(keep) is None or \
            ct_b is None or x_b is None:
        return False
    shape = tuple(xa.shape[1:] if x_b else xa.shape)
    size = ca.shape[0] if ct_b else xa.shape[0]
    cshape = list(ca.shape[1:] if ct_b else ca.shape)
    if not _flag(keep):
        for ax in _norm_axes(axis.value, len(shape)):
            cshape.insert(ax, 1)
    kshape = ((size,) if ct_b else (1,)) + tuple(cshape)
    ct = a["ct"]
    if tuple(ca.shape) != kshape:
        ct = sp.emit(out, by_name("reshape"), {"x": ct, "shape": Const(kshape)}, eqn.loc,
                     base=eqn.out)
    return sp._bcast(eqn, out, ct, (size,) + shape)


def _basic_index(sp, index):
    if not isinstance(index, IndexArg):
        return False
    for it in index.items:
        if isinstance(it, SliceArg):
            continue
        if isinstance(it, Const) and isinstance(it.value, (int, np.integer)) and \
                not isinstance(it.value, bool):
            continue
        if isinstance(it, Var):
            av = sp.aval(it)
            if av is not None and not av.shape and av.dtype.kind in "iu":
                continue
        return False
    return True


def rw_batch_getitem_vjp(sp, eqn, out):
    """zeros shaped like the batched x with each example's cotangent written at the index
    (a basic index: every position is written once)."""
    a = eqn.args
    ca, xa = sp.aval(a["ct"]), sp.aval(a["x"])
    ct_b, x_b = _flag(a["ct_batched"]), _flag(a["x_batched"])
    index = a["index"]
    if ca is None or xa is None or ct_b is None or x_b is None or \
            not _basic_index(sp, index):
        return False
    full = IndexArg((SliceArg(None, None, None),) + tuple(index.items))
    if x_b and ct_b:
        # the plain getitem_vjp of the batched x at [:, index]: jit's accumulation pass then
        # adds it into the running cotangent in place (no zeros of the batch per step)
        sp.emit(out, by_name("getitem_vjp"), {"ct": a["ct"], "x": a["x"], "index": full},
                eqn.loc, name=eqn.out)
        return True
    shape = tuple(xa.shape[1:] if x_b else xa.shape)
    size = ca.shape[0] if ct_b else xa.shape[0]
    dtype = np.result_type(ca.dtype)
    if ca.weak:
        dtype = np.result_type(ca.dtype.type(0), np.float64)
    zeros = sp.emit(out, by_name("zeros"), {"shape": Const((size,) + shape),
                                            "dtype": Const(dtype.type)}, eqn.loc,
                    base=eqn.out)
    ct = a["ct"]
    if not ct_b and ca.shape:
        ct = sp.emit(out, by_name("reshape"), {"x": ct, "shape": Const((1,) + tuple(ca.shape))},
                     eqn.loc, base=eqn.out)
    sp.emit(out, by_name("setitem"), {"x": zeros, "index": full, "v": ct}, eqn.loc,
            name=eqn.out)
    return True


# -- the loop over the batch: rows allocated at the size of the first stored row -----------------

class Slots:
    """The `batch_slots` allocations of one specialization and the names that share them."""

    def __init__(self):
        self.root = {}          # name -> the batch_slots output it is (a copy of) a row set of
        self.alloc = {}         # root -> the allocation equation (filled in at the first store)
        self.aval = {}          # root -> AVal of the rows

    def group(self, root):
        return [n for n, r in self.root.items() if r == root]


def slots_of(sp):
    s = getattr(sp, "_slots", None)
    if s is None:
        s = sp._slots = Slots()
    return s


def note_copy(sp, eqn):
    """`a = b` (an SSA join copy) of a set of rows: a belongs to b's allocation."""
    x = eqn.args.get("x")
    s = getattr(sp, "_slots", None)
    if s is None or eqn.prim is not assign or not isinstance(x, Var):
        return
    root = s.root.get(x.name)
    if root is not None:
        s.root[eqn.out] = root
        if root in s.aval:
            sp.avals[eqn.out] = s.aval[root]


def rw_batch_slots(sp, eqn, out):
    n = _size(sp, eqn.args["n"])
    if n is None:
        return False
    s = slots_of(sp)
    alloc = Eqn(eqn.out, by_name("zeros"), {"shape": Const((n,)), "dtype": Const(None)},
                eqn.loc)
    s.root[eqn.out] = eqn.out
    s.alloc[eqn.out] = alloc
    s.size = n
    rows = s.aval.get(eqn.out)
    if rows is not None:
        # specialized again (an enclosing loop's body runs until its carried values are
        # stable): the rows stored on the earlier pass give the allocation its shape now
        alloc.args = {"shape": Const(rows.shape), "dtype": Const(rows.dtype.type)}
        sp.avals[eqn.out] = rows
    out.append(alloc)
    return True


def rw_batch_store(sp, eqn, out):
    a = eqn.args
    s = getattr(sp, "_slots", None)
    parts = a["parts"]
    root = s.root.get(parts.name) if s is not None and isinstance(parts, Var) else None
    if root is None:
        return False
    value = a["value"]
    if isinstance(value, Const) and value.value is None:   # this path left the name unbound
        s.root[eqn.out] = root
        sp.alias(eqn, parts)
        return True
    va = sp.aval(value)
    n = _size(sp, a["n"])
    if va is None or n is None:
        return False
    rows = s.aval.get(root)
    if rows is None:
        rows = s.aval[root] = AVal((n,) + tuple(va.shape), va.dtype)
        s.alloc[root].args = {"shape": Const(rows.shape), "dtype": Const(rows.dtype.type)}
    elif rows.shape[1:] != tuple(va.shape) and va.shape:
        return False
    elif not np.can_cast(va.dtype, rows.dtype, casting="same_kind") or \
            np.result_type(va.dtype, rows.dtype) != rows.dtype:
        return False          # a later row of a wider type: the NumPy version promotes
    s.root[eqn.out] = root
    for name in s.group(root):
        sp.avals[name] = rows
    sp.emit(out, by_name("setitem"), {"x": parts, "index": IndexArg((a["i"],)), "v": value},
            eqn.loc, name=eqn.out)
    return True


def rw_batch_stacked(sp, eqn, out):
    s = getattr(sp, "_slots", None)
    parts = eqn.args["parts"]
    root = s.root.get(parts.name) if s is not None and isinstance(parts, Var) else None
    if root is None or root not in s.aval:
        return False
    sp.alias(eqn, parts)
    return True


def rw_basis_like(sp, eqn, out, batched=False):
    """rt.basis_like(x) (a Jacobian's basis vectors, each shaped like x, stacked on axis 0) of
    a known shape: np.eye reshaped (batch_basis_like: of one example of a batched x)."""
    xa = sp.aval(eqn.args["x"])
    if xa is None:
        return False
    shape = tuple(xa.shape[1:] if batched else xa.shape)
    dtype = xa.dtype if np.issubdtype(xa.dtype, np.inexact) else np.dtype(np.float64)
    n = int(np.prod(shape, dtype=np.int64))
    eye = sp.emit(out, by_name("eye"), {"N": Const(n), "dtype": Const(dtype.type)}, eqn.loc,
                  base=eqn.out)
    return sp._reshape(eqn, out, eye, (n,) + shape)


def rw_batch_basis_like(sp, eqn, out):
    return rw_basis_like(sp, eqn, out, batched=True)


def rw_jac_rows(sp, eqn, out):
    """rt.jac_rows(rows, out): the rows (m,) + x shape reshaped to out.shape + x shape."""
    ra, oa = sp.aval(eqn.args["rows"]), sp.aval(eqn.args["out"])
    if ra is None or oa is None:
        return False
    return sp._reshape(eqn, out, eqn.args["rows"], tuple(oa.shape) + tuple(ra.shape[1:]))


def rw_jac_columns(sp, eqn, out):
    """rt.jac_columns(cols, x): the columns (n,) + out shape moved to the end, reshaped to
    out shape + x shape."""
    ca, xa = sp.aval(eqn.args["cols"]), sp.aval(eqn.args["x"])
    if ca is None or xa is None or not ca.shape:
        return False
    moved = sp.emit(out, by_name("moveaxis"), {"x": eqn.args["cols"], "source": Const(0),
                                               "destination": Const(-1)}, eqn.loc, base=eqn.out)
    return sp._reshape(eqn, out, moved, tuple(ca.shape[1:]) + tuple(xa.shape))


REWRITES = {f.__name__[3:]: f for f in (
    rw_basis_like, rw_batch_basis_like, rw_jac_rows, rw_jac_columns,
    rw_batch_broadcast, rw_batch_check_scalar_output, rw_batch_unbroadcast,
    rw_batch_broadcast_like, rw_batch_align, rw_batch_sum_grad, rw_batch_getitem_vjp,
    rw_batch_slots, rw_batch_store, rw_batch_stacked)}
