"""Batching rules: what `vmap` does with one primitive when some arguments carry a batch axis.

A rule is a `Rule`, a `str` subclass whose text is the primitive's batching *kind*
("elementwise", "reduction", ...), so code that only asks `prim.batch == "elementwise"` keeps
working. A rule has two parts:

  rank(s, eqn)   the per-example rank (ndim) of the result, or None when unknown
  batch(s, eqn)  emit the batched computation through `s` (a transforms.batching.BatchSweep)

Conventions (see transforms/batching.py for the design): the batch axis is axis 0 of every
batched value; `s.r(atom)` is the per-example rank of an atom (None if unknown), `s.b(atom)` says
whether it is batched; a rule ends with `s.final(prim, args)`, which binds the equation's own
output name. A rule that cannot handle a case raises `NoRule`; the transform then writes an
explicit loop over the batch for that statement.
"""
import string

from transpile.ir import Const, IndexArg, SliceArg, TupleArg, Var


class NoRule(Exception):
    """This case has no batching rule: fall back to a loop over the batch."""


class Rule(str):
    def __new__(cls, kind, batch, rank):
        obj = super().__new__(cls, kind)
        obj.batch, obj.rank = batch, rank
        return obj

    def __call__(self, s, eqn):
        return self.batch(s, eqn)


NON_ARRAY = ("dtype", "fname", "ord")


def _const(args, name, default=None):
    v = args.get(name, Const(default))
    if not isinstance(v, Const):
        raise NoRule(f"{name} is not a constant")
    return v.value


def _only_batched(s, eqn, allowed):
    """Raise NoRule if an argument outside `allowed` is batched."""
    for k, v in eqn.args.items():
        if k in allowed:
            continue
        items = v.items if isinstance(v, (TupleArg, IndexArg)) else [v]
        for it in items:
            if isinstance(it, SliceArg):
                it = [it.lower, it.upper, it.step]
            for a in (it if isinstance(it, list) else [it]):
                if s.b(a):
                    raise NoRule(f"argument {k} is batched")


def _shift(axis):
    """A per-example axis -> the batched value's axis (negative axes count from the right and
    stay as they are)."""
    if axis is None:
        return None
    if isinstance(axis, (tuple, list)):
        return tuple(_shift(a) for a in axis)
    return axis + 1 if axis >= 0 else axis


def _max_rank(ranks):
    if any(r is None for r in ranks):
        return None
    return max(ranks, default=0)


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

_FLATTENING = ("argmax", "argmin", "norm", "cumsum")


def reduction_rank(s, eqn):
    r = s.r(eqn.args["x"])
    name = eqn.prim.name
    axis = eqn.args.get("axis", Const(-1 if name == "argsort" else None))
    if not isinstance(axis, Const):
        return None
    axis = axis.value
    keep = eqn.args.get("keepdims", Const(False))
    keep = keep.value if isinstance(keep, Const) else None
    if name in ("argsort", "cumsum"):
        return 1 if (axis is None and name == "cumsum") else r
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


def args_with(eqn, **changes):
    args = dict(eqn.args)
    args.update(changes)
    return args


index = Rule("index", index_batch, index_rank)


# ---- products and linear algebra -------------------------------------------------------------

_LETTERS = string.ascii_lowercase


def _einsum_dot(rx, ry, kind):
    """Per-example einsum subscripts (x, y, out) for dot / matmul / inner."""
    xs = _LETTERS[:rx]
    rest = _LETTERS[rx:]
    if kind == "inner":
        ys = rest[:ry - 1] + xs[-1]
        return xs, ys, xs[:-1] + ys[:-1]
    if ry == 1:
        ys = xs[-1]
        return xs, ys, xs[:-1]
    if kind == "matmul" and rx == 1:
        ys = rest[:ry - 2] + xs[-1] + rest[ry - 2]
        return xs, ys, rest[:ry - 2] + rest[ry - 2]
    ys = rest[:ry - 2] + xs[-1] + rest[ry - 2]
    return xs, ys, xs[:-1] + rest[:ry - 2] + rest[ry - 2]


def product_rank(s, eqn):
    name, a = eqn.prim.name, eqn.args
    if name == "einsum":
        sub = a["subscripts"].value if isinstance(a["subscripts"], Const) else None
        if not isinstance(sub, str) or "..." in sub:
            return None
        return len(_einsum_output(sub))
    if name == "outer":
        return 2
    if name == "det":
        r = s.r(a["x"])
        return None if r is None else r - 2
    if name == "inv":
        return s.r(a["x"])
    if name == "solve":
        return s.r(a["b"])
    rx, ry = s.r(a["x"]), s.r(a["y"])
    if rx is None or ry is None:
        return None
    if rx == 0 or ry == 0:
        return max(rx, ry)
    if name == "matmul" and rx >= 2 and ry >= 2:
        return max(rx, ry)
    return len(_einsum_dot(rx, ry, name if name != "dot" else "dot")[2])


def _einsum_output(sub):
    sub = sub.replace(" ", "")
    if "->" in sub:
        return sub.split("->")[1]
    ins = sub.replace(",", "")
    return "".join(sorted(c for c in set(ins) if ins.count(c) == 1))


def product_batch(s, eqn):
    name, a = eqn.prim.name, eqn.args
    if name in ("det", "inv"):
        return s.final(eqn.prim, dict(a))         # NumPy's linalg works on stacks
    if name == "einsum":
        return _batch_einsum(s, eqn)
    if name == "solve":
        return _batch_solve(s, eqn)
    x, y = a["x"], a["y"]
    rx, ry = s.r(x), s.r(y)
    if name == "outer":
        xf = s.flatten(x)
        yf = s.flatten(y)
        return _final_einsum(s, [(xf, "i"), (yf, "j")], "ij")
    if rx == 0 or ry == 0:
        return elementwise_batch(s, eqn, prim=s.P("multiply"))
    bx, by = s.b(x), s.b(y)
    if name == "dot" and bx and not by and rx is not None:
        return s.final(eqn.prim, dict(a))          # np.dot(x_b, y): contracts x's last axis
    if rx is None or ry is None:
        raise NoRule("ranks unknown")
    if name in ("dot", "matmul") and not bx and by and ry == 1 and rx <= 2:
        # x @ y_b[i] for every i  ==  y_b @ x.T
        xt = x if rx == 1 else s.emit("transpose", {"x": x}, base=x.name + "_T",
                                      batched=False, rank=2)
        return s.final(eqn.prim, {"x": y, "y": xt})
    if name == "matmul" and ((rx >= 2 and ry >= 2) or (bx and not by and ry <= 2)
                             or (by and not bx and rx == 1 and ry >= 2)):
        args = dict(a)
        if rx >= 2 and ry >= 2:
            if bx:
                args["x"] = s.align(x, max(rx, ry))
            if by:
                args["y"] = s.align(y, max(rx, ry))
        return s.final(eqn.prim, args)
    xs, ys, out = _einsum_dot(rx, ry, name)
    return _final_einsum(s, [(x, xs), (y, ys)], out)


def _final_einsum(s, operands, out):
    """einsum with the batch letter added to every batched operand and to the output."""
    used = set("".join(sub for _, sub in operands) + out)
    z = next(c for c in "zyxwvutsrqponmlkjihgfedcba" if c not in used)
    subs = [(z + sub if s.b(v) else sub) for v, sub in operands]
    text = ",".join(subs) + "->" + z + out
    s.final("einsum", {"subscripts": Const(text),
                       "operands": TupleArg(tuple(v for v, _ in operands))})


def _batch_einsum(s, eqn):
    sub = _const(eqn.args, "subscripts")
    ops = eqn.args["operands"]
    if not isinstance(sub, str) or "..." in sub or not isinstance(ops, TupleArg):
        raise NoRule("einsum form")
    _only_batched(s, eqn, ["operands"])
    sub = sub.replace(" ", "")
    ins = sub.split("->")[0].split(",")
    _final_einsum(s, list(zip(ops.items, ins)), _einsum_output(sub))


def _batch_solve(s, eqn):
    a, b = eqn.args["a"], eqn.args["b"]
    rb = s.r(b)
    if rb is None:
        raise NoRule("rank unknown")
    a = a if s.b(a) else s.broadcast(a)
    b = b if s.b(b) else s.broadcast(b)
    if rb == 2:
        return s.final(eqn.prim, {"a": a, "b": b})
    col = s.emit("expand_dims", {"x": b, "axis": Const(-1)}, base=b.name + "_col", rank=2)
    sol = s.emit(eqn.prim, {"a": a, "b": col}, base=eqn.out + "_col", rank=2)
    s.final("getitem", {"x": sol, "index": IndexArg((Ellipsis, Const(0)))})


linalg = Rule("linalg", product_batch, product_rank)


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


# ---- rules for the runtime helpers that derivative code calls -------------------------------
# Each helper computes something per example; the batched form calls the matching
# rt.batch_* helper (runtime/batching.py), which knows which arguments carry the batch axis.


def _flag(s, atom):
    return Const(bool(s.b(atom)))


def helper_rank(s, eqn):
    name, a = eqn.prim.name, eqn.args
    like = {"unbroadcast": "x", "broadcast_like": "like", "sum_grad": "x", "cast_like": "t", "grad_like": "t",
            "mT": "x", "check_scalar_output": "out", "extremum_mask": "x", "clip_mask": "x",
            "matmul_vjp_left": "x", "matmul_vjp_right": "y", "dot_vjp_left": "x",
            "dot_vjp_right": "y", "getitem_vjp": "x", "concat_vjp": "ct", "concat_pad": None,
            "put_axis": "like", "transpose_back": "x", "cumsum_vjp": "x", "check_norm_ord": "x",
            "tile_vjp": "x", "diagonal_vjp": "x", "batch_align": None, "batch_squeeze": None}
    if name in ("reduced_count", "transpose_inverse", "batch_reduced_count"):
        return 0 if name != "transpose_inverse" else None
    if name == "select_weight":
        return _max_rank([s.r(a["x"]), s.r(a["y"])])
    if name == "expand_last":
        r = s.r(a["x"])
        return None if r is None else r + 1
    if name == "take_axis":
        r = s.r(a["x"])
        return None if r is None else r - 1
    key = like.get(name)
    return s.r(a[key]) if key else None


def helper_batch(s, eqn):
    name, a = eqn.prim.name, eqn.args
    if name == "unbroadcast":
        _only_batched(s, eqn, ["ct", "x"])
        return s.final("batch_unbroadcast", {"ct": a["ct"], "x": a["x"],
                                             "ct_batched": _flag(s, a["ct"]),
                                             "x_batched": _flag(s, a["x"])},
                       batched=s.b(a["ct"]))
    if name == "broadcast_like":
        return s.final("batch_broadcast_like", {"t": a["t"], "like": a["like"],
                                                "t_batched": _flag(s, a["t"]),
                                                "like_batched": _flag(s, a["like"])})
    if name == "sum_grad":
        _only_batched(s, eqn, ["ct", "x"])
        return s.final("batch_sum_grad", {
            "ct": a["ct"], "x": a["x"], "axis": a.get("axis", Const(None)),
            "keepdims": a.get("keepdims", Const(False)),
            "ct_batched": _flag(s, a["ct"]), "x_batched": _flag(s, a["x"])})
    if name in ("cast_like", "grad_like"):
        _only_batched(s, eqn, ["t", "x"])
        return s.final(eqn.prim, dict(a), batched=s.b(a["t"]))
    if name == "mT" and s.b(a["x"]):
        r = s.r(a["x"])
        if r is None:
            raise NoRule("rank unknown")
        if r < 2:   # examples are vectors or scalars: left as they are
            return s.final("identity", {"x": a["x"]})
    if name in ("mT", "expand_last", "check_norm_ord") and not (
            name == "check_norm_ord" and _const(a, "ord", None) == 2):
        _only_batched(s, eqn, ["x"])
        return s.final(eqn.prim, dict(a))
    if name == "check_scalar_output":
        _only_batched(s, eqn, ["out"])
        return s.final("batch_check_scalar_output", dict(a))
    if name == "reduced_count":
        _only_batched(s, eqn, ["x"])
        return s.final("batch_reduced_count", dict(a), batched=False)
    if name == "extremum_mask":
        _only_batched(s, eqn, ["x", "ans"])
        return s.final("batch_extremum_mask", {
            "x": a["x"], "ans": a["ans"], "axis": a.get("axis", Const(None)),
            "keepdims": a.get("keepdims", Const(False)),
            "x_batched": _flag(s, a["x"]), "ans_batched": _flag(s, a["ans"])})
    if name in ("select_weight", "clip_mask"):
        return elementwise_batch(s, eqn)
    if name == "getitem_vjp":
        _only_batched(s, eqn, ["ct", "x"])
        return s.final("batch_getitem_vjp", {"ct": a["ct"], "x": a["x"], "index": a["index"],
                                             "ct_batched": _flag(s, a["ct"]),
                                             "x_batched": _flag(s, a["x"])})
    if name == "transpose_back":
        axes = _const(a, "axes", None)
        inverse = None if axes is None else tuple(sorted(range(len(axes)), key=lambda i: axes[i]))
        return structure_batch(s, _with_prim(eqn, s.P("transpose"),
                                             {"x": a["x"], "axes": Const(inverse)}))
    if name == "take_axis":
        _only_batched(s, eqn, ["x"])
        return s.final(eqn.prim, args_with(eqn, axis=Const(_shift(_const(a, "axis", 0)))))
    if name in ("dot_vjp_left", "dot_vjp_right", "matmul_vjp_left", "matmul_vjp_right"):
        return s.expand(eqn, _product_vjp_text(s, eqn))
    raise NoRule(name)


def _with_prim(eqn, prim, args):
    return type(eqn)(eqn.out, prim, args, eqn.loc)


def _product_vjp_text(s, eqn):
    """The cotangent of one factor of a product, for known small ranks, written with plain
    products so that their batching rules apply (ct: cotangent of the product)."""
    name, a = eqn.prim.name, eqn.args
    rx, ry = s.r(a["x"]), s.r(a["y"])
    if rx is None or ry is None or rx == 0 or ry == 0 or rx > 2 or ry > 2:
        raise NoRule("ranks")
    left = name.endswith("left")
    if rx == 1 and ry == 1:
        return "ct * y" if left else "ct * x"
    if left:
        if ry == 1:                              # x (m, n), y (n,), ct (m,)
            return "np.multiply(np.expand_dims(ct, -1), y)"
        if rx == 1:                              # x (n,), y (n, k), ct (k,)
            return "np.dot(y, ct)"
        return "np.matmul(ct, np.transpose(y))"  # x (m, n), y (n, k), ct (m, k)
    if rx == 1:                                  # x (n,), y (n, k), ct (k,)
        return "np.multiply(np.expand_dims(x, -1), ct)"
    if ry == 1:                                  # x (m, n), y (n,), ct (m,)
        return "np.dot(ct, x)"
    return "np.matmul(np.transpose(x), ct)"      # x (m, n), y (n, k), ct (m, k)


helper = Rule("helper", helper_batch, helper_rank)


# ---- the batching helpers' own rows -----------------------------------------------------------


def batch_helper_rank(s, eqn):
    return None


def batch_helper_batch(s, eqn):
    raise NoRule(f"{eqn.prim.path} inside a nested vmap")


batch_helper = Rule("helper", batch_helper_batch, batch_helper_rank)
