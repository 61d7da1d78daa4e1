"""Fusion: group chains of elementwise equations (and the reductions that consume them) into
one loop, so memory is read once — the XLA trick, written as a pass over specialized core
Python (optimize/specialize.py gives every value a shape and dtype).

The pass only *describes* the groups; each backend lowers a `FusedGroup` its own way (Numba
loops with prange in transpile/lowering/cpu/module.py; CUDA C can do the same from the same
description):

    FusedGroup.shape       the iteration space: every member's output has this shape
    FusedGroup.inputs      names read from outside (arrays broadcast to `shape`, or scalars)
    FusedGroup.eqns        elementwise equations in order (one scalar expression each)
    FusedGroup.reductions  sum/mean/max/min/prod equations over values of `shape`, all over
                           the same axes (`FusedGroup.axes`)
    FusedGroup.outputs     members needed after the loop (written to arrays of `shape`)
    FusedGroup.stores      outputs written straight into a view of the array the next
                           statement writes them into (store_into_destinations)

np.roll with a constant shift along one axis joins a group as a read of its (outside)
array at a shifted index. Each row's scalar form is its `lower` field
(transpile/primitives/registry.py): a row with one is elementwise for fusion; `reduce` names
the accumulation of a reduction the loops know.
"""
from dataclasses import dataclass, field

import numpy as np

from transpile.core import ir
from transpile.core.ir import Const, Eqn, Var
from transpile.core.liveness import live_after
from transpile.primitives.internal.control import assign, setitem, write_back, write_in_place
from transpile.primitives.numpy.arrays import roll
from transpile.optimize.no_raise import selected_shape
from transpile.optimize.inplace import EXTERNAL


def scalar_template(eqn):
    """The Numba CPU scalar form of an equation: its row's `lower` (a template, or eqn ->
    template), or None when the row has none or refuses these arguments."""
    lower = eqn.prim.lower
    return lower(eqn) if callable(lower) else lower


@dataclass
class FusedGroup:
    name: str
    shape: tuple
    inputs: list = field(default_factory=list)
    outputs: list = field(default_factory=list)
    eqns: list = field(default_factory=list)
    reductions: list = field(default_factory=list)
    axes: tuple = None          # reduced axes (normalized) shared by all reductions
    loc: object = None
    stores: dict = field(default_factory=dict)   # output -> (x, index): written into x[index]

    def produced(self):
        return {e.out for e in self.eqns}

    def vars_read(self):
        """What the loop reads from outside: its inputs, and the arrays it stores into (the
        rest of such an array keeps its value)."""
        return list(dict.fromkeys(list(self.inputs) + [x for x, _ in self.stores.values()]))

    def bound_names(self):
        return list(self.outputs) + [r.out for r in self.reductions]

    def describe(self):
        ops = ", ".join(e.prim.name for e in self.eqns)
        reds = ", ".join(f"{r.prim.name}" for r in self.reductions)
        text = f"fused loop over {self.shape}: {ops or '(no elementwise ops)'}"
        if reds:
            text += f"; then {reds} over axes {self.axes}"
        return text


def _shifted_read(eqn, av, xs):
    """np.roll(x, shift, axis) with a constant shift along one axis, x of the result's shape:
    a read of x at a shifted index in the loop (lowering/cpu/kernels.py), no array of its own."""
    x, shift, axis = eqn.args.get("x"), eqn.args.get("shift"), eqn.args.get("axis")
    if not isinstance(x, Var) or xs is None or tuple(xs) != tuple(av.shape) or not av.shape:
        return False
    ints = (int, np.integer)
    return all(isinstance(a, Const) and isinstance(a.value, ints) and
               not isinstance(a.value, bool) for a in (shift, axis)) and \
        -len(xs) <= axis.value < len(xs)


def _norm_axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        return tuple(sorted(a % ndim for a in axis))
    return (axis % ndim,)


class Fuser:
    def __init__(self, avals, outs, min_group=1):
        self.avals = avals
        self.count = 0
        self.outs = {o.name for o in outs if isinstance(o, Var)}

    # -- classification ------------------------------------------------------------------------

    def shape(self, atom):
        if isinstance(atom, Var):
            av = self.avals.get(atom.name)
            return None if av is None else av.shape
        if isinstance(atom, Const):
            v = atom.value
            if isinstance(v, (bool, int, float, complex, np.generic)):
                return ()
        return None

    def kind(self, eqn):
        prim = eqn.prim
        av = self.avals.get(eqn.out)
        if av is None:
            return None
        if prim.reduce is not None:
            x = eqn.args.get("x")
            xs = self.shape(x)
            if not isinstance(x, Var) or not xs:
                return None
            for k in ("axis", "keepdims"):
                if k in eqn.args and not isinstance(eqn.args[k], Const):
                    return None
            for k in ("dtype", "out"):
                if k in eqn.args and not (isinstance(eqn.args[k], Const) and
                                          eqn.args[k].value is None):
                    return None
            if not (np.issubdtype(av.dtype, np.number) or av.dtype == np.bool_):
                return None
            return "red"
        if prim is roll:
            return "roll" if _shifted_read(eqn, av, self.shape(eqn.args.get("x"))) else None
        if not av.shape or scalar_template(eqn) is None:
            return None
        data = prim.operands
        for k, a in eqn.args.items():
            if data is not None and k not in data and k not in prim.uncast:
                if not isinstance(a, Const):      # astype's dtype, a broadcast's shape
                    return None
                continue
            if isinstance(a, Const) and a.value is None and prim.param(k) is not None and \
                    prim.param(k).default is None:
                continue                          # an optional argument left out (clip)
            s = self.shape(a)
            if s is None or len(s) > len(av.shape):
                return None
            for i, n in enumerate(s):
                m = av.shape[len(av.shape) - len(s) + i]
                if n != m and n != 1:
                    return None
        return "ew"

    def red_axes(self, eqn):
        xs = self.shape(eqn.args["x"])
        axis = eqn.args.get("axis", Const(None)).value
        return _norm_axes(axis, len(xs))

    # -- grouping ------------------------------------------------------------------------------

    def block(self, stmts):
        result, before = [], []
        group = None

        def close():
            nonlocal group, before
            if group is not None:
                hoisted = self.block(before) if before else []
                result.extend(hoisted)
                result.append(self.finish(group))
            else:
                result.extend(before)
            group, before = None, []

        for st in stmts:
            if not isinstance(st, Eqn):
                close()
                result.append(self.control(st))
                continue
            kind = self.kind(st)
            if group is not None and self.mutates(st):
                # a write into a buffer in place: the group's reads happen before it (it may
                # write what the group reads), so the group is not moved past it
                close()
                result.append(st)
                continue
            if group is not None:
                reads = set(st.vars_read())
                blocked = reads & group["red_outs"]
                if kind == "roll" and st.args["x"].name in group["produced"]:
                    blocked = True      # a shifted read of an array made in the loop itself
                if not blocked and kind in ("ew", "roll") and \
                        self.avals[st.out].shape == group["shape"]:
                    group["eqns"].append(st)
                    group["produced"].add(st.out)
                    continue
                if not blocked and kind == "red" and \
                        self.shape(st.args["x"]) == group["shape"] and \
                        (group["axes"] is None or self.red_axes(st) == group["axes"]):
                    group["reds"].append(st)
                    group["axes"] = self.red_axes(st)
                    group["red_outs"].add(st.out)
                    continue
                if reads & (group["produced"] | group["red_outs"]):
                    close()
                else:
                    before.append(st)
                    continue
            if kind in ("ew", "roll"):
                group = dict(shape=self.avals[st.out].shape, eqns=[st], reds=[], axes=None,
                             produced={st.out}, red_outs=set(), loc=st.loc)
            elif kind == "red":
                group = dict(shape=self.shape(st.args["x"]), eqns=[], reds=[st],
                             axes=self.red_axes(st), produced=set(), red_outs={st.out},
                             loc=st.loc)
            else:
                result.append(st)
        close()
        return result

    def mutates(self, st):
        return st.prim.writes_arg or (st.prim is setitem and id(st) in self.in_place)

    def control(self, st):
        if isinstance(st, ir.If):
            return ir.If(st.cond, self.block(st.body), self.block(st.orelse), st.loc)
        if isinstance(st, ir.ForRange):
            return ir.ForRange(st.var, st.start, st.stop, st.step, self.block(st.body), st.loc)
        if isinstance(st, ir.While):
            return ir.While(self.block(st.cond_body), st.cond, self.block(st.body), st.loc)
        return st

    def finish(self, g):
        self.count += 1
        group = FusedGroup(f"fused{self.count}", tuple(g["shape"]), eqns=g["eqns"],
                           reductions=g["reds"], axes=g["axes"], loc=g["loc"])
        produced = group.produced()
        seen = set()
        for e in group.eqns + group.reductions:
            for n in e.vars_read():
                if n not in produced and n not in seen:
                    seen.add(n)
                    group.inputs.append(n)
        group.outputs = [e.out for e in group.eqns if e.out in self.used_outside(group)]
        return group

    def used_outside(self, group):
        members = {id(e) for e in group.eqns + group.reductions}
        names = group.produced()
        needed = set(self.outs & names)
        for e in self.all_readers:
            if id(e) in members:
                continue
            needed |= names & set(e.vars_read())
        needed |= names & self.control_reads
        return needed


def _all_eqns(body, control_reads):
    for st in body:
        if isinstance(st, Eqn):
            yield st
        elif isinstance(st, ir.Push):      # a value saved on a tape is read later
            control_reads.update(ir.names_read(st))
        else:
            for f in ("cond", "start", "stop", "step"):
                v = getattr(st, f, None)
                if isinstance(v, Var):
                    control_reads.add(v.name)
            for f in ("body", "orelse", "cond_body"):
                yield from _all_eqns(getattr(st, f, None) or [], control_reads)


def fuse(body, avals, outs, in_place=()):
    """Group a specialized body: returns the body with `FusedGroup`s in place of the
    equations they cover (control flow bodies are grouped separately). `in_place`: ids of the
    setitem equations that write in place (a group never moves past one)."""
    f = Fuser(avals, outs)
    f.in_place = set(in_place)
    f.control_reads = set()
    f.all_readers = list(_all_eqns(body, f.control_reads))
    return f.block(body)


def store_into_destinations(body, outs, src, in_place, avals):
    """`o = <fused loop>; y = x[index] = o` (a write in place, basic slices only, o read nowhere
    else): the loop writes its element straight into the view x[index] and the write becomes
    `y = x` (FusedGroup.stores). Not where an input of the loop may share x's buffer
    (`src`: optimize/inplace.py's sources), as the loop would read what it wrote, and only
    where x[index] has the loop's shape and x the value's dtype (no broadcast, no cast)."""
    reads = {}

    def count(names):
        for n in names:
            reads[n] = reads.get(n, 0) + 1

    def walk(block):
        for st in block:
            if isinstance(st, FusedGroup):
                for e in st.eqns + st.reductions:
                    count(e.vars_read())
            elif isinstance(st, (Eqn, ir.Push)):
                count(ir.names_read(st))
            else:
                count(a.name for f in ("cond", "start", "stop", "step")
                      for a in [getattr(st, f, None)] if isinstance(a, Var))
                for f in ("body", "orelse", "cond_body"):
                    walk(getattr(st, f, None) or [])
    walk(body)
    count(o.name for o in outs if isinstance(o, Var))

    def rewrite(block):
        out = []
        for st in block:
            if isinstance(st, (ir.If, ir.ForRange, ir.While)):
                for f in ("body", "orelse", "cond_body"):
                    if getattr(st, f, None) is not None:
                        setattr(st, f, rewrite(getattr(st, f)))
            prev = out[-1] if out else None
            if isinstance(prev, FusedGroup) and isinstance(st, Eqn) and \
                    _stores_into(prev, st, reads, src, in_place, avals):
                o = st.args["v"].name
                prev.stores[o] = (st.args["x"].name, st.args["index"])
                st = Eqn(st.out, assign, {"x": st.args["x"]}, st.loc)
            out.append(st)
        return out
    return rewrite(body)


def store_final_values(body, outs, src, avals):
    """`v = <fused loop>; ...; rt.write_back(p, v)` at the top level, p an argument written in
    place (its own buffer) whose old value nothing reads after the loop (`p += vel * dt`):
    the loop writes v straight into p (`v = p`, FusedGroup.stores) and the final copy goes.
    The loop may read p itself, element by element at the index it writes (no other view of
    p's buffer, no np.roll of it); v may be read afterwards, and returned (it is p's buffer,
    as NumPy's `p += ...; return p` is)."""
    finals = {}
    for k, st in enumerate(body):
        if isinstance(st, Eqn) and st.prim is write_back and isinstance(st.args["dest"], Var) \
                and isinstance(st.args["value"], Var):
            p = st.args["dest"].name
            finals[st.args["value"].name] = None if p in finals.values() else (p, k)
    if not finals:
        return body

    def dest_not_read(eqn):
        return [a.name for k, a in eqn.args.items() if isinstance(a, Var)
                and not (eqn.prim is write_back and k == "dest")]
    live = live_after(body, outs, reads=lambda e: dest_not_read(e))
    dropped = set()
    for k, g in enumerate(body):
        if not isinstance(g, FusedGroup):
            continue
        for v in g.outputs:
            if finals.get(v) is None or v in g.stores:
                continue
            p, at = finals[v]
            if at < k or not _final_fits(g, v, p, src, avals, live[id(g)]):
                continue
            g.stores[v] = (p, ir.IndexArg((Ellipsis,)))
            dropped.add(at)
    return [st for k, st in enumerate(body) if k not in dropped]


def store_into_dying_inputs(body, outs, src, avals, params):
    """`v = <fused loop reading a>` where a is a buffer the function made itself, of v's shape
    and dtype, and neither a nor anything sharing its buffer is read after the loop (`out +=
    part` in a loop, `h = np.maximum(h * s, 0)`): the loop writes v into a's buffer
    (`v = a`, FusedGroup.stores) instead of a new array. Each element of a is read before the
    element of v at the same index is written, and only there: a is read by elementwise rows
    alone, at the loop's own index (no broadcast, no shifted read, no np.roll), and no other
    input of the loop shares its buffer. An argument's buffer is never taken (the caller sees
    it: an argument written in place holds its final value there)."""
    live = live_after(body, outs)
    outside = {EXTERNAL} | set(params)
    src = {n: set(s) for n, s in src.items()}
    # nor a buffer whose value is written back into an argument at the end (a copy of the
    # argument that a loop wrote into: the caller gets it)
    for st in ir.walk_eqns(body):
        if st.prim is write_back and isinstance(st.args["value"], Var):
            outside |= src.get(st.args["value"].name, set())
    for g in groups_in(body):       # a stored output is its destination's buffer
        for v, (x, _) in g.stores.items():
            _shares(src, v, x)
    for g in groups_in(body):
        for v in g.outputs:
            vav = avals.get(v)
            if v in g.stores or vav is None or tuple(vav.shape) != tuple(g.shape):
                continue
            a = _dying_input(g, v, vav, src, avals, live[id(g)], outside)
            if a is not None:
                g.stores[v] = (a, ir.IndexArg((Ellipsis,)))
                _shares(src, v, a)
    return body


def _shares(src, v, x):
    """v (a fused loop's output) now lives in x's buffer: v, and every name sharing a site
    with v, has x's sites too (more sharing than there may be: never less)."""
    extra = set(src.get(x, {EXTERNAL}))
    mine = set(src.get(v, ())) | {v}
    src.setdefault(v, set()).update(extra)
    for s in src.values():
        if s & mine:
            s |= extra


def _dying_input(g, v, vav, src, avals, live_after_loop, outside):
    taken = {x for x, _ in g.stores.values()}
    for a in g.inputs:
        aav, sa = avals.get(a), src.get(a)
        if a in taken or aav is None or aav.dtype != vav.dtype or \
                tuple(aav.shape) != tuple(g.shape) or not sa or sa & outside:
            continue
        sharing = {n for n, s in src.items() if s & sa}
        if (live_after_loop - {v}) & sharing or \
                any(n in sharing and n != a for n in g.inputs) or \
                any(x in sharing for x in taken):
            continue
        readers = [e for e in g.eqns + g.reductions if a in e.vars_read()]
        if all(e.prim.elementwise for e in readers) and not any(e in g.reductions
                                                                for e in readers):
            return a
    return None


def _final_fits(g, v, p, src, avals, live_after_loop):
    pav, vav = avals.get(p), avals.get(v)
    sp = src.get(p)
    if pav is None or vav is None or sp != {p} or pav.dtype != vav.dtype or \
            tuple(pav.shape) != tuple(vav.shape) or tuple(vav.shape) != tuple(g.shape):
        return False
    sharing = {n for n, s in src.items() if s & sp}
    if any(n in sharing and n != p for n in g.inputs) or live_after_loop & sharing:
        return False
    return not any(e.prim is roll and isinstance(e.args.get("x"), Var) and
                   e.args["x"].name in sharing for e in g.eqns)


def _stores_into(g, st, reads, src, in_place, avals):
    if not (st.prim is setitem and id(st) in in_place or st.prim is write_in_place):
        return False
    x, v, index = st.args["x"], st.args["v"], st.args["index"]
    if not (isinstance(x, Var) and isinstance(v, Var) and v.name in g.outputs) or \
            v.name in g.stores or reads.get(v.name) != 1 or not isinstance(index, ir.IndexArg):
        return False
    xav, vav = avals.get(x.name), avals.get(v.name)
    if xav is None or vav is None or xav.dtype != vav.dtype or \
            tuple(vav.shape) != tuple(g.shape) or \
            selected_shape(x, index, avals) != tuple(vav.shape):
        return False
    for it in index.items:
        if it is Ellipsis or isinstance(it, Const) and it.value is Ellipsis:
            continue
        if not isinstance(it, ir.SliceArg) or any(
                b is not None and not (isinstance(b, Const) and (b.value is None or isinstance(
                    b.value, (int, np.integer)) and not isinstance(b.value, bool)))
                for b in (it.lower, it.upper, it.step)):
            return False
    sx = src.get(x.name)
    if not sx or "<external>" in sx:
        return False
    return not any(src.get(n, {"<external>"}) & sx for n in g.inputs)


def groups_in(body):
    for st in body:
        if isinstance(st, FusedGroup):
            yield st
        elif isinstance(st, (ir.If, ir.ForRange, ir.While)):
            for f in ("body", "orelse", "cond_body"):
                yield from groups_in(getattr(st, f, None) or [])
