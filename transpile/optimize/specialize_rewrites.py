"""Shape-specialization rewrites of derivative helpers, linear algebra and reductions, for
optimize/specialize.py: plain functions `rw_<primitive>(sp, eqn, out)` taking the Specializer `sp`,
returning True when they replaced the equation (appending to `out`), False to keep it.

    unbroadcast(g, x)    same shapes: g                  else: np.sum over the broadcast axes
    sum_grad(ct, x, ..)  a broadcast of ct to x's shape (fusable: read with broadcasting)
    check_scalar_output  checked now; the seed cotangent is the constant 1 of the output dtype
    reduced_count        an int constant (an ir.SizeConst: the sizes it multiplies)
    matmul_vjp_left/..   np.matmul / np.outer / * with transposes, by the operands' ndims
    norm, var, std       sums, products and sqrt (so fusion sees elementwise + reduction)

`BCAST` is the broadcast to a known shape these rewrites (and the specializer) emit. optimize/specialize.py
keys its table `REWRITES` by the rows these names give; nothing here imports optimize/specialize.py.
"""
import numpy as np

import transpile_runtime as runtime
from transpile.core.ir import Const, Eqn, IndexArg, SliceArg, TupleArg, SizeConst
from transpile.primitives.registry import Primitive, by_name
from transpile.core.avals import dummy

# A broadcast to a known shape, as a primitive the backends can read elementwise.
BCAST = Primitive("bcast", np.broadcast_to, "np.broadcast_to", "x, shape", batch="elementwise",
                  lower="{x}", operands=("x",), fusable=True, shape_safe=True)


def _norm_axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        return tuple(sorted(a % ndim for a in axis))
    return (axis % ndim,)


def rw_check_scalar_output(sp, eqn, out):
    av = sp.aval(eqn.args["out"])
    if av is None:
        return False
    holo = eqn.args.get("holomorphic", Const(False))
    runtime.check_scalar_output(dummy(av, True), eqn.args["fname"].value,
                                isinstance(holo, Const) and bool(holo.value))
    sp.subst[eqn.out] = Const(av.dtype.type(1) if not av.shape else av.dtype.type(1))
    if av.shape:
        return sp._bcast(eqn, out, Const(av.dtype.type(1)), av.shape)
    return True


def rw_unbroadcast(sp, eqn, out):
    g, x = eqn.args["ct"], eqn.args["x"]
    ga, xa = sp.aval(g), sp.aval(x)
    if ga is None or xa is None:
        return False
    if ga.shape == xa.shape:
        sp.alias(eqn, g)
        return True
    extra = ga.ndim - xa.ndim
    axes = tuple(range(extra)) + tuple(i + extra for i, n in enumerate(xa.shape)
                                       if n == 1 and ga.shape[i + extra] != 1)
    if not axes:
        return sp._reshape(eqn, out, g, xa.shape)
    if len(axes) == ga.ndim:
        s = sp.emit(out, by_name("sum"), {"x": g}, eqn.loc, base=eqn.out)
    else:
        s = sp.emit(out, by_name("sum"), {"x": g, "axis": Const(axes)}, eqn.loc,
                    base=eqn.out)
    if sp.aval(s).shape == xa.shape:
        sp.alias(eqn, s)
        return True
    return sp._reshape(eqn, out, s, xa.shape)


def rw_broadcast_like(sp, eqn, out):
    t, like = eqn.args["t"], eqn.args["like"]
    ta, la = sp.aval(t), sp.aval(like)
    if ta is None or la is None:
        return False
    if ta.shape == la.shape:
        sp.alias(eqn, t)
        return True
    return sp._bcast(eqn, out, t, la.shape)


def rw_broadcast_to(sp, eqn, out):
    x, shape = eqn.args["x"], eqn.args["shape"]
    if not isinstance(shape, Const) or sp.aval(x) is None:
        return False
    shape = shape.value if isinstance(shape.value, tuple) else (shape.value,)
    if sp.aval(x).shape == tuple(shape):
        sp.alias(eqn, x)
        return True
    return sp._bcast(eqn, out, x, shape)


def rw_sum_grad(sp, eqn, out):
    ct, x = eqn.args["ct"], eqn.args["x"]
    axis = eqn.args.get("axis", Const(None))
    keepdims = eqn.args.get("keepdims", Const(False))
    ca, xa = sp.aval(ct), sp.aval(x)
    if ca is None or xa is None or not isinstance(axis, Const) or \
            not isinstance(keepdims, Const):
        return False
    if ca.shape == xa.shape:
        sp.alias(eqn, ct)
        return True
    if not keepdims.value and ca.shape:
        axes = _norm_axes(axis.value, xa.ndim)
        kshape = tuple(1 if i in axes else n for i, n in enumerate(xa.shape))
        ct = sp.emit(out, by_name("reshape"), {"x": ct, "shape": Const(kshape)}, eqn.loc,
                     base=eqn.out)
    return sp._bcast(eqn, out, ct, xa.shape)


def _broadcast_back(sp, out, ct, xa, axis, keepdims, loc, base):
    ca = sp.aval(ct)
    if ca.shape == xa.shape:
        return ct
    if not keepdims and ca.shape:
        axes = _norm_axes(axis, xa.ndim)
        kshape = tuple(1 if i in axes else n for i, n in enumerate(xa.shape))
        ct = sp.emit(out, by_name("reshape"), {"x": ct, "shape": Const(kshape)}, loc,
                     base=base)
    return sp.emit(out, BCAST, {"x": ct, "shape": Const(tuple(xa.shape))}, loc, base=base)


def rw_extremum_mask(sp, eqn, out):
    x, ans = eqn.args["x"], eqn.args["ans"]
    axis = eqn.args.get("axis", Const(None))
    keep = eqn.args.get("keepdims", Const(False))
    xa, aa = sp.aval(x), sp.aval(ans)
    if xa is None or aa is None or not isinstance(axis, Const) or not isinstance(keep, Const):
        return False
    b = _broadcast_back(sp, out, ans, xa, axis.value, keep.value, eqn.loc, eqn.out)
    hit = sp.emit(out, by_name("equal"), {"x": x, "y": b}, eqn.loc, base=eqn.out)
    dt = np.result_type(xa.dtype, aa.dtype)
    hitf = sp.emit(out, by_name("astype"), {"x": hit, "dtype": Const(dt.type)}, eqn.loc,
                   base=eqn.out)
    cnt = _reduce(sp, out, "sum", hitf, axis.value, True, eqn.loc, eqn.out)
    sp.emit(out, by_name("divide"), {"x": hitf, "y": cnt}, eqn.loc, name=eqn.out)
    return True


def rw_reduced_count(sp, eqn, out):
    xa = sp.aval(eqn.args["x"])
    axis = eqn.args.get("axis", Const(None))
    if xa is None or not isinstance(axis, Const):
        return False
    dims = tuple(int(xa.shape[a]) for a in _norm_axes(axis.value, xa.ndim))
    n = 1
    for d in dims:
        n *= d
    # the sizes it multiplies stay known: compiled code reads them at run time
    sp.subst[eqn.out] = SizeConst(int(n), dims)
    return True


def _typed(sp, a):
    """The AVal of an atom, or the rank-and-dtype stand-in of a value of run-time length."""
    av = sp.aval(a)
    if av is None and hasattr(a, "name"):
        av = sp.unsized.get(a.name)
    return av


def rw_cast_like(sp, eqn, out):
    t, x = eqn.args["t"], eqn.args["x"]
    ta, xa = _typed(sp, t), _typed(sp, x)     # (only dtypes are read: lengths may be unknown)
    if ta is None or xa is None:
        return False
    if ta.dtype == xa.dtype and not ta.weak:
        sp.alias(eqn, t)
        return True
    if np.issubdtype(ta.dtype, np.complexfloating) and \
            not np.issubdtype(xa.dtype, np.complexfloating):
        # NumPy's cast of complex to real keeps the real part (Numba's refuses): said so
        t = sp.emit(out, by_name("real"), {"x": t}, eqn.loc, base=eqn.out)
        if sp.aval(t).dtype == xa.dtype:
            sp.alias(eqn, t)
            return True
    sp.emit(out, by_name("astype"), {"x": t, "dtype": Const(xa.dtype.type)}, eqn.loc,
            name=eqn.out)
    return True


def rw_grad_like(sp, eqn, out):
    ta, xa = sp.aval(eqn.args["t"]), sp.aval(eqn.args["x"])
    if ta is None or xa is None:
        return False
    if np.issubdtype(ta.dtype, np.complexfloating) and \
            np.issubdtype(xa.dtype, np.floating):
        # a real parameter gets the real part of a complex gradient (then its own dtype)
        if np.dtype(ta.dtype.type(0).real.dtype) == xa.dtype:
            sp.emit(out, by_name("real"), {"x": eqn.args["t"]}, eqn.loc, name=eqn.out)
            return True
        part = sp.emit(out, by_name("real"), {"x": eqn.args["t"]}, eqn.loc, base=eqn.out)
        sp.emit(out, by_name("astype"), {"x": part, "dtype": Const(xa.dtype.type)}, eqn.loc,
                name=eqn.out)
        return True
    if not np.issubdtype(xa.dtype, np.inexact) or ta.dtype == xa.dtype or \
            np.issubdtype(ta.dtype, np.complexfloating):
        sp.alias(eqn, eqn.args["t"])
        return True
    return rw_cast_like(sp, eqn, out)


def rw_match_complex(sp, eqn, out):
    """Real x: the real part of t (t itself when t is real); complex x: t."""
    ta, xa = sp.aval(eqn.args["t"]), sp.aval(eqn.args["x"])
    if ta is None or xa is None:
        return False
    if np.issubdtype(xa.dtype, np.complexfloating) or \
            not np.issubdtype(ta.dtype, np.complexfloating):
        sp.alias(eqn, eqn.args["t"])
        return True
    sp.emit(out, by_name("real"), {"x": eqn.args["t"]}, eqn.loc, name=eqn.out)
    return True


def rw_abs_factor(sp, eqn, out):
    """Real x: np.sign(x)."""
    xa = sp.aval(eqn.args["x"])
    if xa is None or np.issubdtype(xa.dtype, np.complexfloating):
        return False
    sp.emit(out, by_name("sign"), {"x": eqn.args["x"]}, eqn.loc, name=eqn.out)
    return True


def rw_angle_jvp(sp, eqn, out):
    """Real x: np.angle is piecewise constant, its tangent (and cotangent) zeros."""
    t, x = (eqn.args.get("t", eqn.args.get("ct")), eqn.args["x"])
    ta, xa = sp.aval(t), sp.aval(x)
    if ta is None or xa is None or np.issubdtype(xa.dtype, np.complexfloating):
        return False
    dtype = np.result_type(ta.dtype, xa.dtype) if "ct" in eqn.args else ta.dtype
    shape = np.broadcast_shapes(ta.shape, xa.shape)
    if not shape:
        sp.subst[eqn.out] = Const(np.dtype(dtype).type(0))
        return True
    return sp._bcast(eqn, out, Const(np.dtype(dtype).type(0)), shape)


rw_angle_vjp = rw_angle_jvp


def rw_astype(sp, eqn, out):
    xa = sp.aval(eqn.args["x"])
    d = eqn.args.get("dtype")
    if xa is None or not isinstance(d, Const):
        return False
    if xa.shape and np.dtype(d.value) == xa.dtype:
        sp.alias(eqn, eqn.args["x"])
        return True
    return False


def _rank(sp, a):
    """The number of axes of an atom, a value of run-time length (sp.unsized) included, or
    None."""
    av = _typed(sp, a)
    return None if av is None else av.ndim


def rw_transpose_back(sp, eqn, out):
    axes = eqn.args.get("axes", Const(None))
    if _rank(sp, eqn.args["x"]) is None or not isinstance(axes, Const):
        return False
    args = {"x": eqn.args["x"]}
    if axes.value is not None:
        args["axes"] = Const(tuple(int(i) for i in np.argsort(axes.value)))
    sp.emit(out, by_name("transpose"), args, eqn.loc, name=eqn.out)
    return True


def rw_mT(sp, eqn, out):
    n = _rank(sp, eqn.args["x"])
    if n is None or n < 2:
        return False
    axes = tuple(range(n - 2)) + (n - 1, n - 2)
    sp.emit(out, by_name("transpose"), {"x": eqn.args["x"], "axes": Const(axes)}, eqn.loc,
            name=eqn.out)
    return True


def _T(sp, out, x, loc):
    n = _rank(sp, x)
    if n < 2:
        return x
    if n == 2:
        return sp.emit(out, by_name("transpose"), {"x": x}, loc, base="tr")
    axes = tuple(range(n - 2)) + (n - 1, n - 2)       # each matrix of a stack transposed
    return sp.emit(out, by_name("transpose"), {"x": x, "axes": Const(axes)}, loc, base="tr")


def _matmul_vjp(sp, eqn, out, side):
    """The cotangent of x (side "left") or y in x @ y (np.dot of vectors and matrices): a
    product with the other operand transposed, by the operands' ranks (known for values of
    run-time length too); of stacks of matrices, summed back over the batch axes the operand
    was broadcast along."""
    ct, x, y = eqn.args["ct"], eqn.args["x"], eqn.args["y"]
    nx, ny = _rank(sp, x), _rank(sp, y)
    if nx is None or ny is None:
        return False
    mm, mul, outer = by_name("matmul"), by_name("multiply"), by_name("outer")
    loc, name = eqn.loc, eqn.out
    if nx == 0 or ny == 0:        # np.dot of a scalar: a product, summed back to the operand
        p = sp.emit(out, mul, {"x": ct, "y": y if side == "left" else x}, loc, base=name)
        back = Eqn(name, by_name("unbroadcast"), {"ct": p, "x": x if side == "left" else y},
                   loc)
        if not rw_unbroadcast(sp, back, out):
            sp.emit(out, back.prim, back.args, loc, name=name)
        return True
    if nx > 2 or ny > 2:
        if eqn.prim in (by_name("dot_vjp_left"), by_name("dot_vjp_right")) and ny > 2:
            return False      # (np.dot of two stacks: every matrix with every other)
        get = by_name("getitem")

        def at(v, *items):
            return sp.emit(out, get, {"x": v, "index": IndexArg((Ellipsis,) + items)}, loc,
                           base=name)
        last, col = SliceArg(None, None, None), None
        if ny == 1 and side == "left":        # x (..., m, k) @ y (k,): ct (..., m)
            p = sp.emit(out, mul, {"x": at(ct, col), "y": y}, loc, base=name)
        elif ny == 1:
            p = at(sp.emit(out, mm, {"x": _T(sp, out, x, loc), "y": at(ct, col)}, loc,
                           base=name), Const(0))
        elif nx == 1 and side == "left":      # x (k,) @ y (..., k, n): ct (..., n)
            p = at(sp.emit(out, mm, {"x": y, "y": at(ct, col)}, loc, base=name), Const(0))
        elif nx == 1:
            p = sp.emit(out, mul, {"x": at(x, col), "y": at(ct, col, last)}, loc, base=name)
        elif side == "left":
            p = sp.emit(out, mm, {"x": ct, "y": _T(sp, out, y, loc)}, loc, base=name)
        else:
            p = sp.emit(out, mm, {"x": _T(sp, out, x, loc), "y": ct}, loc, base=name)
        back = Eqn(name, by_name("unbroadcast"), {"ct": p, "x": x if side == "left" else y},
                   loc)
        if not rw_unbroadcast(sp, back, out):
            sp.emit(out, back.prim, back.args, loc, name=name)
        return True
    if nx == 1 and ny == 1:
        sp.emit(out, mul, {"x": ct, "y": y if side == "left" else x}, loc, name=name)
    elif side == "left":
        if ny == 1:      # x (m,k) y (k,): ct (m,)
            sp.emit(out, outer, {"x": ct, "y": y}, loc, name=name)
        elif nx == 1:    # x (k,) y (k,n): ct (n,)
            sp.emit(out, mm, {"x": y, "y": ct}, loc, name=name)
        else:
            sp.emit(out, mm, {"x": ct, "y": _T(sp, out, y, loc)}, loc, name=name)
    else:
        if nx == 1:      # x (k,) y (k,n): ct (n,)
            sp.emit(out, outer, {"x": x, "y": ct}, loc, name=name)
        else:                 # x (m,k): x.T @ ct
            sp.emit(out, mm, {"x": _T(sp, out, x, loc), "y": ct}, loc, name=name)
    return True


def rw_matmul_vjp_left(sp, eqn, out):
    return _matmul_vjp(sp, eqn, out, "left")


def rw_matmul_vjp_right(sp, eqn, out):
    return _matmul_vjp(sp, eqn, out, "right")


def rw_dot_vjp_left(sp, eqn, out):
    return _matmul_vjp(sp, eqn, out, "left")


def rw_dot_vjp_right(sp, eqn, out):
    return _matmul_vjp(sp, eqn, out, "right")


def rw_dot(sp, eqn, out):
    nx, ny = _rank(sp, eqn.args["x"]), _rank(sp, eqn.args["y"])
    if nx is None or ny is None:
        return False
    if nx == 0 or ny == 0:
        sp.emit(out, by_name("multiply"), dict(eqn.args), eqn.loc, name=eqn.out)
        return True
    if nx <= 2 and ny <= 2:
        sp.emit(out, by_name("matmul"), dict(eqn.args), eqn.loc, name=eqn.out)
        return True
    return False


def rw_check_norm_ord(sp, eqn, out):
    o = eqn.args.get("ord", Const(None))
    xa = sp.aval(eqn.args["x"])
    if not isinstance(o, Const) or xa is None:
        return False
    runtime.check_norm_ord(dummy(xa, True), o.value)
    sp.alias(eqn, eqn.args["x"])
    return True


def rw_norm(sp, eqn, out):
    x = eqn.args["x"]
    o = eqn.args.get("ord", Const(None))
    axis = eqn.args.get("axis", Const(None))
    keep = eqn.args.get("keepdims", Const(False))
    xa = sp.aval(x)
    if xa is None or not all(isinstance(a, Const) for a in (o, axis, keep)):
        return False
    if o.value is not None and not (o.value == 2 and (xa.ndim == 1 or
                                                      isinstance(axis.value, int))):
        return False
    sq = sp.emit(out, by_name("multiply"), {"x": x, "y": x}, eqn.loc, base=eqn.out)
    s = _reduce(sp, out, "sum", sq, axis.value, keep.value, eqn.loc, eqn.out)
    sp.emit(out, by_name("sqrt"), {"x": s}, eqn.loc, name=eqn.out)
    return True


def _reduce(sp, out, kind, x, axis, keepdims, loc, base):
    args = {"x": x}
    if axis is not None:
        args["axis"] = Const(axis)
    if keepdims:
        args["keepdims"] = Const(True)
    return sp.emit(out, by_name(kind), args, loc, base=base)


def _moments(sp, eqn, out, root):
    x = eqn.args["x"]
    axis = eqn.args.get("axis", Const(None))
    keep = eqn.args.get("keepdims", Const(False))
    ddof = eqn.args.get("ddof", Const(0))
    dt = eqn.args.get("dtype", Const(None))
    xa = sp.aval(x)
    if xa is None or not all(isinstance(a, Const) for a in (axis, keep, ddof, dt)) \
            or dt.value is not None or not np.issubdtype(xa.dtype, np.floating):
        return False
    axes = _norm_axes(axis.value, xa.ndim)
    n = 1
    for a in axes:
        n *= xa.shape[a]
    m = _reduce(sp, out, "mean", x, axis.value, True, eqn.loc, eqn.out)
    d = sp.emit(out, by_name("subtract"), {"x": x, "y": m}, eqn.loc, base=eqn.out)
    d2 = sp.emit(out, by_name("multiply"), {"x": d, "y": d}, eqn.loc, base=eqn.out)
    s = _reduce(sp, out, "sum", d2, axis.value, keep.value, eqn.loc, eqn.out)
    kw = dict(name=eqn.out) if not root else dict(base=eqn.out)
    v = sp.emit(out, by_name("divide"), {"x": s, "y": Const(float(n - ddof.value))},
                eqn.loc, **kw)
    if root:
        sp.emit(out, by_name("sqrt"), {"x": v}, eqn.loc, name=eqn.out)
    return True


def rw_var(sp, eqn, out):
    return _moments(sp, eqn, out, False)


def rw_std(sp, eqn, out):
    return _moments(sp, eqn, out, True)


def rw_reduce_no_axes(sp, eqn, out):
    """np.sum(x, axis=()) (vmap's reduction of a scalar example): no axis is reduced, so the
    result is x itself, in the reduction's dtype."""
    axis = eqn.args.get("axis")
    x = eqn.args.get("x")
    xa = sp.aval(x)
    if not (isinstance(axis, Const) and axis.value == ()) or xa is None:
        return False
    av = sp.infer(Eqn(eqn.out, eqn.prim, eqn.args, eqn.loc))
    if av is None or tuple(av.shape) != tuple(xa.shape):
        return False
    if av.dtype == xa.dtype:
        sp.alias(eqn, x)
        return True
    sp.emit(out, by_name("astype"), {"x": x, "dtype": Const(av.dtype.type)}, eqn.loc,
            name=eqn.out)
    return True


def rw_outer(sp, eqn, out):
    """np.outer(x, y): x[:, None] * y[None, :] of the flattened arguments, which fusion folds
    into the loop that reads the product (`A += np.outer(u, v)` writes no n-by-m array)."""
    x, y = eqn.args["x"], eqn.args["y"]
    xa, ya = sp.aval(x), sp.aval(y)
    if xa is None or ya is None or not xa.ndim or not ya.ndim:
        return False        # (a number: NumPy makes it a float64 array, not a weak scalar)
    every = SliceArg(None, None, None)
    x = x if xa.ndim == 1 else sp.emit(out, by_name("ravel"), {"x": x}, eqn.loc, base=eqn.out)
    y = y if ya.ndim == 1 else sp.emit(out, by_name("ravel"), {"x": y}, eqn.loc, base=eqn.out)
    col = sp.emit(out, by_name("getitem"), {"x": x, "index": IndexArg((every, None))}, eqn.loc,
                  base=eqn.out)
    row = sp.emit(out, by_name("getitem"), {"x": y, "index": IndexArg((None, every))}, eqn.loc,
                  base=eqn.out)
    sp.emit(out, by_name("multiply"), {"x": col, "y": row}, eqn.loc, name=eqn.out)
    return True


def rw_count_nonzero(sp, eqn, out):
    """np.count_nonzero(x) of a whole array: the sum of x (of x != 0 when x is not boolean),
    which fusion folds into the loop computing x (no boolean array is written first)."""
    x, axis = eqn.args["x"], eqn.args.get("axis", Const(None))
    xa = sp.aval(x)
    if xa is None or not xa.shape or not (isinstance(axis, Const) and axis.value is None):
        return False
    if xa.dtype != np.bool_:
        x = sp.emit(out, by_name("not_equal"), {"x": x, "y": Const(xa.dtype.type(0))},
                    eqn.loc, base=eqn.out)
    sp.emit(out, by_name("sum"), {"x": x}, eqn.loc, name=eqn.out)
    return True


def rw_concat_vjp(sp, eqn, out):
    """The cotangent of arrays[k] in np.concatenate(arrays, axis): a static slice of ct."""
    a = eqn.args
    ct, arrays, k = a["ct"], a["arrays"], a["k"]
    axis = a.get("axis", Const(0))
    ca = sp.aval(ct)
    if ca is None or not isinstance(arrays, TupleArg) or not isinstance(k, Const) or \
            not isinstance(axis, Const) or axis.value is None:
        return False
    shapes = [sp.aval(x) for x in arrays.items]
    if any(s is None or not s.shape for s in shapes):
        return False
    ax = int(axis.value) % len(ca.shape)
    start = sum(s.shape[ax] for s in shapes[:int(k.value)])
    stop = start + shapes[int(k.value)].shape[ax]
    items = [SliceArg(None, None, None)] * ax + [SliceArg(Const(start), Const(stop), None)]
    sp.emit(out, by_name("getitem"), {"x": ct, "index": IndexArg(tuple(items))}, eqn.loc,
            name=eqn.out)
    return True


def _axis_index(sp, x, k, axis):
    """The index (:, ..., :, k) of position k along `axis` of x, or None."""
    n = _rank(sp, x)
    if not n or not isinstance(k, Const) or not isinstance(axis, Const):
        return None
    ax = int(axis.value) % n
    return IndexArg(tuple([SliceArg(None, None, None)] * ax + [Const(int(k.value))]))


def rw_take_axis(sp, eqn, out):
    """rt.take_axis(x, k, axis) (the cotangent of one input of np.stack): x[:, ..., k]."""
    a = eqn.args
    index = _axis_index(sp, a["x"], a["k"], a.get("axis", Const(0)))
    if index is None:
        return False
    sp.emit(out, by_name("getitem"), {"x": a["x"], "index": index}, eqn.loc, name=eqn.out)
    return True


def rw_put_axis(sp, eqn, out):
    """rt.put_axis(part, like, k, axis): zeros shaped like `like`, `part` at position k."""
    a = eqn.args
    la, pa = sp.aval(a["like"]), sp.aval(a["part"])
    index = _axis_index(sp, a["like"], a["k"], a.get("axis", Const(0)))
    if index is None or pa is None:
        return False
    zeros = sp.emit(out, by_name("zeros"), {"shape": Const(tuple(la.shape)),
                                            "dtype": Const(pa.dtype.type)}, eqn.loc,
                    base=eqn.out)
    sp.emit(out, by_name("setitem"), {"x": zeros, "index": index, "v": a["part"]}, eqn.loc,
            name=eqn.out)
    return True


REWRITES = {f.__name__[3:]: f for f in (
    rw_concat_vjp,
    rw_check_scalar_output, rw_unbroadcast, rw_broadcast_like, rw_broadcast_to, rw_sum_grad,
    rw_extremum_mask, rw_reduced_count, rw_cast_like, rw_grad_like, rw_match_complex,
    rw_abs_factor, rw_angle_jvp, rw_astype, rw_transpose_back, rw_mT, rw_matmul_vjp_left,
    rw_matmul_vjp_right, rw_dot_vjp_left, rw_dot_vjp_right, rw_dot, rw_check_norm_ord, rw_norm,
    rw_var, rw_std, rw_count_nonzero, rw_outer)}
REWRITES["angle_vjp"] = rw_angle_vjp
for _name in ("sum", "mean", "prod", "max", "min"):
    REWRITES[_name] = rw_reduce_no_axes
REWRITES["take_axis"] = rw_take_axis
REWRITES["put_axis"] = rw_put_axis
