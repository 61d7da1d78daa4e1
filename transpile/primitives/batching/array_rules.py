"""Batching rules for array operations: elementwise, reductions (and cumulative ones), shape
and structure (reshape, transpose, concatenate, ...), indexing, array creation and shape
queries. The rule protocol is described in primitives/batching/base.py."""
from transpile.core.ir import Const, IndexArg, SliceArg, TupleArg, Var
from transpile.primitives.batching.base import (NON_ARRAY, NoRule, Rule, _const, _max_rank,
                                                _only_batched, _shift, args_with)


# ---- elementwise ----------------------------------------------------------------------------


def _array_args(eqn):
    return [(k, v) for k, v in eqn.args.items()
            if k not in NON_ARRAY and isinstance(v, (Var, Const))]


def elementwise_rank(s, eqn):
    return _max_rank([s.r(v) for _, v in _array_args(eqn)])


def elementwise_batch(s, eqn, prim=None):
    if any(isinstance(v, (TupleArg, IndexArg)) for v in eqn.args.values()):
        raise NoRule("sequence argument")
    _only_batched(s, eqn, [k for k, _ in _array_args(eqn)])
    arrays = _array_args(eqn)
    args = dict(eqn.args)
    target = elementwise_rank(s, eqn)
    for k, v in arrays:
        if not s.b(v):
            continue
        if target is not None:
            args[k] = s.align(v, target)
        else:
            for k2, w in arrays:
                if k2 != k and isinstance(w, Var):
                    nd = s.emit("ndim", {"x": w}, base=w.name + "_ndim", batched=False, rank=0)
                    args[k] = s.emit("batch_align", {"x": args[k], "like_ndim": nd,
                                                     "like_batched": Const(s.b(w))},
                                     base=v.name, rank=None)
    s.final(prim or eqn.prim, args)


elementwise = Rule("elementwise", elementwise_batch, elementwise_rank)


# ---- reductions -----------------------------------------------------------------------------

_FLATTENING = ("argmax", "argmin", "norm", "cumsum", "nancumsum")


def reduction_rank(s, eqn):
    r = s.r(eqn.args["x"])
    name = eqn.prim.name
    axis = eqn.args.get("axis", Const(-1 if name == "argsort" else None))
    if not isinstance(axis, Const):
        return None
    axis = axis.value
    keep = eqn.args.get("keepdims", Const(False))
    keep = keep.value if isinstance(keep, Const) else None
    if name in ("argsort", "cumsum", "nancumsum"):
        return 1 if (axis is None and name != "argsort") else r
    if keep:
        return r
    if axis is None:
        return 0
    if r is None or keep is None:
        return None
    return r - (len(axis) if isinstance(axis, (tuple, list)) else 1)


def reduction_batch(s, eqn):
    _only_batched(s, eqn, ["x"])
    x = eqn.args["x"]
    name = eqn.prim.name
    args = dict(eqn.args)
    if isinstance(args.get("axis"), Var) and not s.b(args["axis"]):
        # an axis computed at run time (an inner vmap's batch_axes): past the new batch axis
        args["axis"] = s.emit("batch_shift_axes", {"axis": args["axis"]}, base="axes",
                              batched=False)
        s.final(eqn.prim, args)
        return
    axis = _const(args, "axis", -1 if name == "argsort" else None)
    r = s.r(x)
    if axis is None:
        if name in _FLATTENING or name == "argsort":
            if _const(args, "keepdims", False) or name == "argsort":
                raise NoRule("keepdims with axis=None")
            if name == "norm" and _const(args, "ord", None) is not None:
                raise NoRule("norm with ord and axis=None")
            args["x"] = s.emit("reshape", {"x": x, "shape": TupleArg((s.B, Const(-1)))},
                               base=x.name + "_flat", rank=1)
            args["axis"] = Const(1)
        elif r is not None:
            args["axis"] = Const(tuple(range(1, r + 1)) if r != 1 else 1)
        else:
            args["axis"] = s.emit("batch_axes", {"x": x}, base="axes", batched=False)
    else:
        args["axis"] = Const(_shift(axis))
    s.final(eqn.prim, args)


reduction = Rule("reduction", reduction_batch, reduction_rank)
cumulative = Rule("cumulative", reduction_batch, reduction_rank)


# ---- structure ------------------------------------------------------------------------------


def _shape_items(shape):
    """A shape argument -> tuple of atoms, or None when its length is not known."""
    if isinstance(shape, Const):
        v = shape.value
        if isinstance(v, int):
            return (Const(v),)
        if isinstance(v, tuple):
            return tuple(Const(i) for i in v)
        return None
    if isinstance(shape, TupleArg):
        return tuple(shape.items)
    return None


def structure_rank(s, eqn):
    name, a = eqn.prim.name, eqn.args
    r = s.r(a["x"]) if "x" in a else None
    if name in ("reshape", "broadcast_to"):
        items = _shape_items(a["shape"])
        if items is None:
            return s.tuple_len(a["shape"])
        return len(items)
    if name == "ravel":
        return 1
    if name == "expand_dims":
        ax = a["axis"].value if isinstance(a["axis"], Const) else None
        return None if r is None else r + (len(ax) if isinstance(ax, tuple) else 1)
    if name == "squeeze":
        ax = a.get("axis", Const(None))
        if not isinstance(ax, Const) or ax.value is None or r is None:
            return None
        return r - (len(ax.value) if isinstance(ax.value, tuple) else 1)
    if name == "atleast_1d":
        return None if r is None else max(r, 1)
    if name == "atleast_2d":
        return None if r is None else max(r, 2)
    if name in ("concatenate",):
        return _max_rank([s.r(v) for v in a["arrays"].items]) \
            if isinstance(a["arrays"], TupleArg) else None
    if name == "stack":
        rr = _max_rank([s.r(v) for v in a["arrays"].items]) \
            if isinstance(a["arrays"], TupleArg) else None
        return None if rr is None else rr + 1
    if name == "tile":
        reps = a["reps"].value if isinstance(a["reps"], Const) else None
        if reps is None or r is None:
            return None
        return max(r, 1 if isinstance(reps, int) else len(reps))
    if name == "diagonal":
        return None if r is None else r - 1
    if name == "trace":
        return None if r is None else r - 2
    return r      # transpose, swapaxes, moveaxis, array, copy


def structure_batch(s, eqn):
    name, a = eqn.prim.name, eqn.args
    args = dict(a)
    if name in ("concatenate", "stack"):
        return _batch_joined(s, eqn)
    _only_batched(s, eqn, ["x"])
    x = a["x"]
    r = s.r(x)
    if name == "transpose":
        axes = _const(a, "axes", None)
        if axes is None and r is None:
            t = s.emit("transpose", {"x": x}, base=x.name + "_T", rank=None)
            return s.final("moveaxis", {"x": t, "source": Const(-1), "destination": Const(0)})
        if axes is None:
            axes = tuple(range(r - 1, -1, -1))
        args["axes"] = Const((0,) + tuple(_shift(ax if r is None else ax % r) for ax in axes))
    elif name in ("reshape", "broadcast_to"):
        items = _shape_items(a["shape"])
        if items is None or any(s.b(i) for i in items):
            raise NoRule("shape not known")
        if name == "broadcast_to":
            if r is None:
                raise NoRule("rank unknown")
            args["x"] = s.align(x, len(items))
        args["shape"] = TupleArg((s.B,) + items)
        return s.final(eqn.prim, args)
    elif name == "ravel":
        return s.final("reshape", {"x": x, "shape": TupleArg((s.B, Const(-1)))})
    elif name == "expand_dims":
        args["axis"] = Const(_shift(_const(a, "axis")))
    elif name == "squeeze":
        axis = _const(a, "axis", None)
        if axis is None:
            return s.final("batch_squeeze", {"x": x})
        args["axis"] = Const(_shift(axis))
    elif name in ("atleast_1d", "atleast_2d"):
        need = 1 if name == "atleast_1d" else 2
        if r is None:
            raise NoRule("rank unknown")
        if r < need:
            return s.final("reshape", {"x": x, "shape": TupleArg(
                (s.B,) + (Const(1),) * (need - r) +
                ((Const(-1),) if r == 1 else ()))}) if r == 1 else \
                s.final("reshape", {"x": x, "shape": TupleArg((s.B,) + (Const(1),) * need)})
    elif name == "swapaxes":
        args["axis1"] = Const(_shift(_const(a, "axis1")))
        args["axis2"] = Const(_shift(_const(a, "axis2")))
    elif name == "moveaxis":
        args["source"] = Const(_shift(_const(a, "source")))
        args["destination"] = Const(_shift(_const(a, "destination")))
    elif name == "tile":
        reps = _const(a, "reps")
        reps = (reps,) if isinstance(reps, int) else tuple(reps)
        if r is None:
            raise NoRule("rank unknown")
        n = max(r, len(reps))
        args["x"] = s.align(x, n)
        args["reps"] = Const((1,) * (n - len(reps) + 1) + reps)
    elif name in ("diagonal", "trace"):
        args["axis1"] = Const(_shift(_const(a, "axis1", 0)))
        args["axis2"] = Const(_shift(_const(a, "axis2", 1)))
    elif name in ("array", "copy"):
        if not isinstance(x, Var):
            raise NoRule("not an array")
    else:
        raise NoRule(name)
    s.final(eqn.prim, args)


def _batch_joined(s, eqn):
    arrays = eqn.args["arrays"]
    if not isinstance(arrays, TupleArg):
        raise NoRule("arrays is not a literal sequence")
    _only_batched(s, eqn, ["arrays"])
    axis = _const(eqn.args, "axis", 0)
    if axis is None:
        raise NoRule("axis=None")
    items = tuple(v if s.b(v) else s.broadcast(v) for v in arrays.items)
    s.final(eqn.prim, {"arrays": TupleArg(items, arrays.kind), "axis": Const(_shift(axis))})


structure = Rule("structure", structure_batch, structure_rank)


# ---- indexing -------------------------------------------------------------------------------


def index_rank(s, eqn):
    r = s.r(eqn.args["x"])
    index = eqn.args["index"]
    if r is None:
        return None
    adv = []
    out = r
    for it in index.items:
        if it is None:
            out += 1
        elif it is Ellipsis or isinstance(it, SliceArg):
            continue
        else:
            ri = s.r(it)
            if ri is None:
                return None
            if ri == 0:
                out -= 1
            else:
                if s.dtype_kind(it) == "b":
                    return None
                adv.append(ri)
                out -= 1
    if adv:
        out += max(adv)
    return out


def index_batch(s, eqn):
    x, index = eqn.args["x"], eqn.args["index"]
    items = list(index.items)
    batched = [i for i, it in enumerate(items) if isinstance(it, (Var, Const)) and s.b(it)]
    for it in items:
        if isinstance(it, SliceArg) and any(s.b(p) for p in (it.lower, it.upper, it.step)):
            raise NoRule("batched slice bounds")
    if not batched:
        # x batched, index the same for every example: keep the batch axis in front
        arrays = [i for i, it in enumerate(items)
                  if isinstance(it, (Var, Const)) and s.r(it) != 0]
        if arrays and arrays[-1] - arrays[0] + 1 != len(arrays):
            raise NoRule("advanced indices separated by slices")
        return s.final(eqn.prim, {"x": x, "index": IndexArg((SliceArg(),) + tuple(items))})
    if len(batched) > 1:
        raise NoRule("several batched indices")
    if s.dtype_kind(items[batched[0]]) == "b":
        raise NoRule("batched boolean mask")    # each example may select a different count
    p = batched[0]
    before = items[:p]
    if not all(isinstance(it, SliceArg) and it == SliceArg() for it in before):
        raise NoRule("batched index after other indices")
    if any(isinstance(it, (Var, Const)) and s.r(it) != 0 for i, it in enumerate(items) if i != p):
        raise NoRule("batched index with other array indices")
    if any(it is None for it in items):
        raise NoRule("newaxis with a batched index")
    y = items[p]
    if s.b(x):
        ry = s.r(y)
        if p != 0 or ry is None:
            raise NoRule("batched index into a batched array")
        rows = s.emit("arange", {"start": s.B}, base="rows", batched=False, rank=1)
        if ry > 0:
            rows = s.emit("reshape", {"x": rows, "shape": TupleArg((s.B,) + (Const(1),) * ry)},
                          base="rows", batched=False, rank=ry + 1)
        return s.final(eqn.prim, {"x": x, "index": IndexArg((rows,) + tuple(items))})
    if p == 0:
        return s.final(eqn.prim, args_with(eqn, index=IndexArg(tuple(items))))
    t = s.emit(eqn.prim, {"x": x, "index": IndexArg(tuple(items))}, base=eqn.out, rank=None)
    s.final("moveaxis", {"x": t, "source": Const(p), "destination": Const(0)})


index = Rule("index", index_batch, index_rank)


# ---- creation, queries ----------------------------------------------------------------------


def creation_rank(s, eqn):
    name, a = eqn.prim.name, eqn.args
    if name in ("arange", "linspace"):
        return 1
    if name in ("eye", "identity_matrix"):
        return 2
    items = _shape_items(a["shape"])
    return len(items) if items is not None else s.tuple_len(a["shape"])


def creation_batch(s, eqn):
    raise NoRule("array creation from a batched value")


creation = Rule("creation", creation_batch, creation_rank)


def creation_like_rank(s, eqn):
    return s.r(eqn.args["x"])


def creation_like_batch(s, eqn):
    _only_batched(s, eqn, ["x"])
    s.final(eqn.prim, dict(eqn.args))


creation_like = Rule("creation_like", creation_like_batch, creation_like_rank)


def query_rank(s, eqn):
    return None if eqn.prim.name in ("shape", "attr_shape", "range", "result_type",
                                     "attr_dtype") else 0


def query_batch(s, eqn):
    """Shapes of batched values are the per-example shapes; the results are not batched."""
    name, x = eqn.prim.name, eqn.args.get("x")
    if name in ("attr_dtype", "result_type"):
        return s.final(eqn.prim, dict(eqn.args), batched=False)
    _only_batched(s, eqn, ["x"])
    if name in ("shape", "attr_shape"):
        shp = s.emit(eqn.prim, {"x": x}, base=eqn.out, batched=False)
        return s.final("getitem", {"x": shp, "index": IndexArg((SliceArg(Const(1)),))},
                       batched=False)
    if name in ("ndim", "attr_ndim"):
        if s.r(x) is not None:
            return s.final("int", {"x": Const(s.r(x))}, batched=False)
        n = s.emit(eqn.prim, {"x": x}, base=eqn.out, batched=False)
        return s.final("subtract", {"x": n, "y": Const(1)}, batched=False)
    if name in ("len",):
        shp = s.emit("attr_shape", {"x": x}, base=x.name + "_shape", batched=False)
        return s.final("getitem", {"x": shp, "index": IndexArg((Const(1),))}, batched=False)
    if name in ("size", "attr_size") and "axis" not in eqn.args:
        n = s.emit(eqn.prim, {"x": x}, base=eqn.out, batched=False)
        return s.final("floor_divide", {"x": n, "y": s.B}, batched=False)
    raise NoRule(name)


query = Rule("query", query_batch, query_rank)
