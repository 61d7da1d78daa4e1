"""Sparse adjoint accumulation for jit: `d + getitem_vjp(ct, x, i)` as a write at `i`.

The adjoint of a read `x[i]` is an array of zeros with the cotangent at `i`, added to x's
adjoint: `t = rt.getitem_vjp(ct, x, i); dx_2 = dx + t`, O(size of x) per read. In a loop
over x's elements that makes a gradient O(n^2). On specialized core Python (every value's
shape and dtype known) this pass rewrites the pair, where `t` has no other reader and the sum
keeps dx's shape and dtype, into

    g = dx[i]
    s = g + ct
    dx_2 = rt.setitem(dx, i, s)

the same numbers (for a basic index: integers and slices); optimize/inplace.py then turns
the setitem into an O(1) store when nothing reads the old dx afterwards, which is the case
for an adjoint accumulator.
"""
from collections import Counter

import numpy as np

from transpile.core import ir
from transpile.core.ir import Const, Eqn, IndexArg, SliceArg, Var
from transpile.primitives import by_name
from transpile.core.avals import AVal
from transpile.primitives.internal.adjoint_helpers import getitem_vjp
from transpile.primitives.internal.control import setitem
from transpile.primitives.numpy.elementwise import add
from transpile.primitives.numpy.structure import getitem


def _walk(body):
    for st in body:
        yield st
        for f in ("body", "orelse", "cond_body"):
            yield from _walk(getattr(st, f, None) or [])


def _reads(body, outs):
    c = Counter(o.name for o in outs if isinstance(o, Var))
    for st in _walk(body):
        if isinstance(st, (Eqn, ir.Push)):
            c.update(ir.names_read(st))
        else:
            for f in ("cond", "start", "stop", "step"):
                v = getattr(st, f, None)
                if isinstance(v, Var):
                    c[v.name] += 1
    return c


def _basic_shape(shape, index, avals):
    """Shape of an array of `shape` indexed by a basic IndexArg, or None (not basic)."""
    if not isinstance(index, IndexArg):
        return None
    concrete = []
    for it in index.items:
        if isinstance(it, SliceArg):
            parts = []
            for b in (it.lower, it.upper, it.step):
                if b is None:
                    parts.append(None)
                elif isinstance(b, Const) and isinstance(b.value, (int, np.integer)):
                    parts.append(int(b.value))
                else:
                    return None
            concrete.append(slice(*parts))
        elif isinstance(it, Const) and isinstance(it.value, (int, np.integer)) and \
                not isinstance(it.value, bool):
            concrete.append(int(it.value))
        elif isinstance(it, Var):
            av = avals.get(it.name)
            if av is None or av.shape or av.dtype.kind not in "iu":
                return None
            concrete.append(0)
        else:
            return None
    try:
        return np.empty(shape, dtype=np.int8)[tuple(concrete)].shape
    except (IndexError, TypeError, ValueError):
        return None


def scatter_adds(body, outs, avals):
    """The body with `d + getitem_vjp(ct, x, i)` rewritten as a read-add-write at i."""
    reads = _reads(body, outs)
    taken = set(ir.bound_names(body)) | set(avals)
    counter = [0]

    def fresh(base):
        while True:
            counter[0] += 1
            name = f"{base}_a{counter[0]}"
            if name not in taken:
                taken.add(name)
                return name

    def block(stmts):
        pending = {}        # t -> getitem_vjp eqn, removable
        out = []
        for st in stmts:
            if isinstance(st, Eqn) and st.prim is getitem_vjp and reads[st.out] == 1:
                pending[st.out] = st
                out.append(st)
                continue
            if isinstance(st, Eqn) and st.prim is add:
                x, y = st.args.get("x"), st.args.get("y")
                t, d = (y, x) if isinstance(y, Var) and y.name in pending else (x, y)
                if isinstance(t, Var) and t.name in pending and isinstance(d, Var):
                    new = _rewrite(st, pending.pop(t.name), d, avals, fresh, AVal)
                    if new is not None:
                        out = [s for s in out if not (isinstance(s, Eqn) and s.out == t.name)]
                        out += new
                        continue
            if isinstance(st, ir.If):
                st = ir.If(st.cond, block(st.body), block(st.orelse), st.loc)
            elif isinstance(st, ir.ForRange):
                st = ir.ForRange(st.var, st.start, st.stop, st.step, block(st.body), st.loc)
            elif isinstance(st, ir.While):
                st = ir.While(block(st.cond_body), st.cond, block(st.body), st.loc)
            out.append(st)
        return out
    return block(body)


def _rewrite(add, vjp, d, avals, fresh, AVal):
    dav, uav = avals.get(d.name), avals.get(add.out)
    ct = vjp.args["ct"]
    cav = avals.get(ct.name) if isinstance(ct, Var) else None
    if dav is None or uav is None or dav != uav or not dav.shape or \
            (isinstance(ct, Var) and cav is None):
        return None
    index = vjp.args["index"]
    gshape = _basic_shape(dav.shape, index, avals)
    if gshape is None:
        return None
    if cav is not None and np.broadcast_shapes(gshape, cav.shape) != gshape:
        return None
    g, s = fresh(add.out + "_at"), fresh(add.out + "_sum")
    avals[g] = AVal(gshape, dav.dtype)
    avals[s] = AVal(gshape, dav.dtype)
    return [Eqn(g, by_name("getitem"), {"x": d, "index": index}, add.loc),
            Eqn(s, by_name("add"), {"x": Var(g), "y": ct}, add.loc),
            Eqn(add.out, by_name("setitem"), {"x": d, "index": index, "v": Var(s)}, add.loc)]


def reads_before_writes(body):
    """Move `b = d[j]` above an earlier `a = rt.setitem(d, i, v)` of the same block (d is not
    changed by the functional write, so b is the same), so that the write can be done in place
    when d is read by nothing else afterwards (the adjoint of a subscript write reads the
    cotangent at i after zeroing it there)."""
    def block(stmts):
        out = []
        writes = {}            # d -> index in out of the first setitem of d
        for st in stmts:
            if isinstance(st, Eqn) and st.prim is getitem and \
                    isinstance(st.args.get("x"), Var) and st.args["x"].name in writes:
                pos = writes[st.args["x"].name]
                later = set()
                for s in out[pos:]:
                    later |= set(ir.bound_names([s]))
                if not (set(st.vars_read()) & later):
                    out.insert(pos, st)
                    writes = {k: (p + 1 if p >= pos else p) for k, p in writes.items()}
                    continue
            if isinstance(st, Eqn) and st.prim is setitem and \
                    isinstance(st.args.get("x"), Var):
                writes.setdefault(st.args["x"].name, len(out))
            if isinstance(st, ir.If):
                st = ir.If(st.cond, block(st.body), block(st.orelse), st.loc)
            elif isinstance(st, ir.ForRange):
                st = ir.ForRange(st.var, st.start, st.stop, st.step, block(st.body), st.loc)
            elif isinstance(st, ir.While):
                st = ir.While(block(st.cond_body), st.cond, block(st.body), st.loc)
            out.append(st)
        return out
    return block(body)
