"""Batching rules (vmap) for copies and subscript writes: the rows of primitives/internal/control.py.

  * `assign`, `added_to_zero`: the value itself, batched as its argument is;
  * `float_part(t, like)` / `cast_into(x, like)`: `like` only gives the dtype, which the batch
    axis does not change, so the result is batched as `t` / `x` is (a `like` that is a number
    in each example is rebound: cast_into is then x itself);
  * `setitem(x, index, v)` (`x[index] = v` in the functional form): one write into the batched
    buffer, `x_b[(:, *index)] = v_b` with v's axes aligned after the batch axis, not a loop over
    the batch. A batched index (one integer per example) becomes `x_b[(rows, *index)]` with
    `rows = arange(B)`. Other cases (array or boolean indices, a batched slice bound) raise
    NoRule: vmap then writes an explicit loop over the batch (correct, slower).
"""
from transpile.core.ir import Const, IndexArg, SliceArg, Eqn
from transpile.primitives.batching.rules import NoRule, Rule, index_rank
from transpile.primitives.registry import by_name
from transpile.errors import TranspileError


def _same_as(arg):
    def rank(s, eqn):
        return s.r(eqn.args[arg])

    def batch(s, eqn):
        s.final(eqn.prim, dict(eqn.args), batched=s.b(eqn.args[arg]))
    return Rule("elementwise", batch, rank)


assign = _same_as("x")
added_to_zero = _same_as("d")
float_part = _same_as("t")


def _cast_into_batch(s, eqn):
    like = eqn.args["like"]
    if s.b(like) and s.r(like) == 0:
        # `s op= v` with s a number in each example (s = 0 before a loop, broadcast over the
        # batch): Python rebinds it; casting into the batched ints would raise
        s.final(by_name("assign"), {"x": eqn.args["x"]}, batched=s.b(eqn.args["x"]))
        return
    s.final(eqn.prim, dict(eqn.args), batched=s.b(eqn.args["x"]))


cast_into = Rule("elementwise", _cast_into_batch, lambda s, eqn: s.r(eqn.args["x"]))


def setitem_rank(s, eqn):
    return s.r(eqn.args["x"])


def setitem_batch(s, eqn):
    x, index, v = eqn.args["x"], eqn.args["index"], eqn.args["v"]
    items = list(index.items) if isinstance(index, IndexArg) else None
    if items is None:
        raise NoRule("index is not a subscript")
    rx = s.r(x)
    if rx is None:
        raise NoRule("rank unknown")
    batched_items = []
    for k, it in enumerate(items):
        if it is None:
            raise NoRule("newaxis in a write")
        if isinstance(it, SliceArg):
            if any(s.b(p) for p in (it.lower, it.upper, it.step) if p is not None):
                raise NoRule("batched slice bounds")
            continue
        if it is Ellipsis:
            continue
        if s.r(it) != 0 or s.dtype_kind(it) == "b":
            raise NoRule("array or boolean index")   # advanced indexing: keep NumPy's layout
        if s.b(it):
            batched_items.append(k)
    sub = index_rank(s, eqn)        # per-example rank of x[index]
    if sub is None:
        raise NoRule("rank unknown")
    if not s.b(x):
        x = s.broadcast(x)
    if s.b(v):
        rv = s.r(v)
        if rv is None:     # rank known when the code runs: unit axes after the batch axis
            v = s.emit("batch_align", {"x": v, "like_ndim": Const(sub),
                                       "like_batched": Const(False)}, base=v.name, rank=sub)
        elif rv > sub:
            raise NoRule("value rank")
        else:
            v = s.align(v, sub)
    if batched_items:
        rows = s.emit("arange", {"start": s.B}, base="rows", batched=False, rank=1)
        lead = (rows,)
    else:
        lead = (SliceArg(),)
    s.final(eqn.prim, {"x": x, "index": IndexArg(lead + tuple(items)), "v": v}, batched=True,
            rank=rx)


setitem = Rule("index", setitem_batch, setitem_rank)


def _per_example_array(s, probe):
    """Is probe an array in each example (per-example rank > 0)? NoRule when unknown."""
    r = s.r(probe)
    if r is None:
        raise NoRule("rank unknown")
    return r > 0


def if_array_rank(s, eqn):
    ra, rb = s.r(eqn.args["a"]), s.r(eqn.args["b"])
    return ra if ra == rb else None


def if_array_batch(s, eqn):
    chosen = eqn.args["a"] if _per_example_array(s, eqn.args["probe"]) else eqn.args["b"]
    s.final("assign", {"x": chosen}, batched=s.b(chosen), rank=s.r(chosen))


def setitem_if_array_batch(s, eqn):
    a = eqn.args
    if _per_example_array(s, a["probe"]):
        e = Eqn(eqn.out, by_name("setitem"), {"x": a["x"], "index": a["index"], "v": a["v"]},
                eqn.loc)
        s.cur = e
        return setitem_batch(s, e)
    s.final("assign", {"x": a["x"]}, batched=s.b(a["x"]), rank=s.r(a["x"]))


if_array = Rule("elementwise", if_array_batch, if_array_rank)
setitem_if_array = Rule("index", setitem_if_array_batch, setitem_rank)


def write_back_rank(s, eqn):
    return 0


def write_back_batch(s, eqn):
    """Each example's final value goes into its own row of the caller's batched array (one
    `dest[...] = value` for the batch). An unbatched argument (in_axes None) written by the
    function would be written by every example in turn, each reading the previous one's
    writes: that has no batched form and is refused."""
    dest, value = eqn.args["dest"], eqn.args["value"]
    if not s.b(dest):
        where = f"{eqn.loc[0]}:{eqn.loc[1]}: " if eqn.loc else ""
        raise TranspileError(f"{where}vmap: the function writes into an argument that is not "
                             "batched (in_axes None), so every example would write into the "
                             "same array", construct="a write into an unbatched argument",
                             hint="batch that argument, or copy it inside the function "
                                  "before writing")
    s.final(eqn.prim, {"dest": dest, "value": value}, batched=False, rank=0)


write_back = Rule("helper", write_back_batch, write_back_rank)
