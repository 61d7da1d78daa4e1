"""Writes in O(1) and intermediates released: liveness and buffer ownership on finished core
Python (after every transform), used when the code is printed.

Core Python is functional: `y = rt.setitem(x, i, v)` is a new array, so a loop writing `out[i]`
copies the whole array on every iteration. That copy is needed only while the old version `x`
(or anything sharing its buffer) is still read afterwards, by the forward code or by a
derivative's backward sweep. This pass answers, for the final body:

  * `sources(name)`: the allocations a name may point to. A row with the flag `fresh` always
    returns a new array (ufuncs, creation functions, setitem's copy); metadata (shapes,
    lengths: `no_buffer`) points to none; a row with `returns_arg` points where that argument
    does; anything else (views, `rt.assign`, helpers that may return their argument) may
    point to whatever its array arguments point to. Arguments, globals, and values popped
    from a tape are EXTERNAL: never written in place. A value pushed on a tape escapes.
  * liveness (core/liveness.py): the names read after a statement (backward dataflow over
    `If`, `ForRange`, `While`, to a fixed point around loops).

`y = rt.setitem(x, i, v)` becomes `y = rt.write_in_place(x, i, v)` (`x[i] = v; y = x`) when x
is owned (all its sources are allocations of this function that did not escape) and no name
sharing one of those sources, y aside, is live after the write. At the top level of the body,
`del a, b` releases intermediates at their last use, so eager `grad` holds only what its
backward sweep still reads.

API (also for the Numba lowering): `in_place_writes(body, params, outs) -> set of id(eqn)`,
`apply(core_body, params, outs)`.
"""
import copy

import numpy as np

from transpile.core import ir
from transpile.core.liveness import live_after, value_reads
from transpile.core.ir import Eqn, Var
from transpile.core.codegen import deferred_writes_last, fmt
from transpile.primitives.internal.adjoint_helpers import getitem_vjp
from transpile.primitives.internal.control import (add_at, added_to_zero, assign, setitem, tape_pop,
                                          write_back, write_in_place, write_in_place_if_array)
from transpile.primitives.numpy.elementwise import add
from transpile.primitives.numpy.structure import copy as copy_row
from transpile.core.tidy import tidy

EXTERNAL = "<external>"

def _stmts(body):
    for st in body:
        yield st
        if isinstance(st, ir.If):
            yield from _stmts(st.body)
            yield from _stmts(st.orelse)
        elif isinstance(st, ir.ForRange):
            yield from _stmts(st.body)
        elif isinstance(st, ir.While):
            yield from _stmts(st.cond_body)
            yield from _stmts(st.body)


def sources(body, params, scalars=(), owned=(), in_place=()):
    """name -> set of allocation sites (eqn out names) or EXTERNAL; and the escaped sites.
    `scalars`: names known to hold scalars (jit knows every shape), which hold no buffer.
    Arguments are not written in place: a call that raises leaves them as they were (and
    the NumPy version that jit runs again for the error's message reads them unchanged);
    `owned`: those that may be, as nothing can raise after their first write
    (optimize/no_raise.py; their site is their own name). `in_place`: ids of the writes
    done in place (in_place_writes): their result is the written array's buffer."""
    src = {p: ({p} if p in owned else {EXTERNAL}) for p in params}
    escaped = set()
    changed = True
    while changed:
        changed = False
        for st in _stmts(body):
            if isinstance(st, Eqn):
                prim = st.prim
                if prim.no_buffer or st.out in scalars or _number_copy(st):
                    new = set()
                elif prim is tape_pop:
                    new = {EXTERNAL}
                elif id(st) in in_place and isinstance(st.args.get("x"), Var):
                    new = set(src.get(st.args["x"].name, {EXTERNAL}))
                elif prim.fresh:
                    new = {st.out}
                elif prim.returns_arg is not None:   # the result is (a view of) that argument
                    a = st.args[prim.returns_arg]
                    new = set(src.get(a.name, {EXTERNAL})) if isinstance(a, Var) else set()
                else:
                    new = set()
                    reads = value_reads(st)
                    for a in reads:               # never a shape argument's buffer
                        new |= src.get(a, {EXTERNAL})
                    # made from metadata only (`n - 1` of a length, a loop index): none
                    metadata_only = reads and not set(reads) & set(scalars)
                    if not new and not metadata_only:
                        # made from constants only (np.broadcast_to(1.0, n), a seed of
                        # ones): a buffer of its own, or a captured array that is not ours
                        new = {EXTERNAL} if _const_array_arg(st) else {st.out}
                old = src.setdefault(st.out, set())
                if not new <= old:
                    old |= new
                    changed = True
            elif isinstance(st, ir.ForRange):
                src.setdefault(st.var, set())
            elif isinstance(st, ir.Push) and isinstance(st.value, Var):
                new = src.get(st.value.name, {EXTERNAL}) - escaped
                if new:
                    escaped |= new
                    changed = True
    return src, escaped


def _number_copy(st):
    """`n = 0` (a counter, an adjoint reset to 0.0): a Python number, no buffer."""
    x = st.args.get("x")
    return st.prim is assign and isinstance(x, ir.Const) and \
        isinstance(x.value, (int, float, complex)) and not isinstance(x.value, bool)


def _const_array_arg(st):
    return any(isinstance(a, ir.Const) and isinstance(a.value, np.ndarray)
               for a in ir.iter_atoms(list(st.args.values())))


def _dead_owned(name, st, src, escaped, live):
    """Is the buffer of `name` owned, and unread (through any alias) after statement st?"""
    sx = src.get(name, {EXTERNAL})
    if not sx or EXTERNAL in sx or sx & escaped:
        return False
    after = live.get(id(st), set())
    return not any(n != st.out and src.get(n, {EXTERNAL}) & sx for n in after)


def _blocks(st):
    if isinstance(st, ir.If):
        return [st.body, st.orelse]
    if isinstance(st, ir.ForRange):
        return [st.body]
    if isinstance(st, ir.While):
        return [st.cond_body, st.body]
    return []


class _Generations:
    """Buffers of one pass through a block: sources() knows allocation *sites*, and a site in a
    loop is a new buffer on every iteration. At a write into an array allocated in the current
    pass through a block (young: every binding of it is in the stretch of the block from the
    allocation to the write, and holds that allocation or a view of it), a name bound only
    outside that stretch (old: the time step's `u` carried from the previous iteration, where
    this iteration's `u_next = np.zeros(n)` is being written) cannot share its buffer."""

    LIMIT = 20000       # statements: beyond this, no second look (the writes copy)

    def __init__(self, body, src, scalars):
        self.src, self.scalars = src, scalars
        self.where, self.defs, self.stmt = {}, {}, {}
        self._young = {}
        self.size = 0
        self._walk(body, ())

    def _walk(self, block, path):
        for k, st in enumerate(block):
            self.size += 1
            here = path + ((block, k),)
            self.where[id(st)] = here
            self.stmt[id(st)] = st
            if isinstance(st, Eqn):
                self.defs.setdefault(st.out, []).append(id(st))
            elif isinstance(st, ir.ForRange):
                self.defs.setdefault(st.var, []).append(id(st))
            for sub in _blocks(st):
                self._walk(sub, here)

    def _in(self, sid, depth, block, lo, hi):
        path = self.where[sid]
        return len(path) > depth and path[depth][0] is block and lo <= path[depth][1] <= hi

    def _young_def(self, st, young):
        if not isinstance(st, Eqn) or st.prim.no_buffer or st.out in self.scalars \
                or st.prim is tape_pop:
            return False
        if st.prim.fresh:
            return True
        if st.prim.returns_arg is not None:
            a = st.args[st.prim.returns_arg]
            return isinstance(a, Var) and a.name in young
        held = [a for a in value_reads(st) if self.src.get(a, {EXTERNAL})]
        if not held:
            return not _const_array_arg(st)
        return all(a in young for a in held)

    def young(self, depth, block, lo, hi):
        key = (depth, id(block), lo, hi)
        if key not in self._young:
            inside = {n for n, ds in self.defs.items()
                      if all(self._in(d, depth, block, lo, hi) for d in ds)}
            # the largest set closed under _young_def: names bound around a loop hold each
            # other (new_2 = new; loop: new_3 = new_2 ... new_2 = new_3), and both are young
            # when every binding of the cycle holds this pass's allocation
            young, changed = set(inside), True
            while changed:
                changed = False
                for n in list(young):
                    if not all(self._young_def(self.stmt[d], young) for d in self.defs[n]):
                        young.discard(n)
                        changed = True
            self._young[key] = young
        return self._young[key]

    def apart(self, x, st, risky):
        """Is every name in `risky` bound outside a stretch where `x` is young, at write st?"""
        if self.size > self.LIMIT or id(st) not in self.where:
            return False
        path = self.where[id(st)]
        for depth in range(len(path) - 1, -1, -1):
            block, hi = path[depth]
            for lo in range(hi, -1, -1):
                if x in self.young(depth, block, lo, hi):
                    if all(not any(self._in(d, depth, block, lo, hi)
                                   for d in self.defs.get(n, ())) for n in risky):
                        return True
                    break
        return False


def _dead_young(name, st, src, escaped, live, gens):
    """_dead_owned, with a second look (_Generations) at the names that share x's sources."""
    if _dead_owned(name, st, src, escaped, live):
        return True
    sx = src.get(name, {EXTERNAL})
    if not sx or EXTERNAL in sx or sx & escaped:
        return False
    risky = [n for n in live.get(id(st), set())
             if n != st.out and src.get(n, {EXTERNAL}) & sx]
    return gens.apart(name, st, risky)


def in_place_writes(body, params, outs, scalars=(), owned=()):
    """The setitem equations that may write into their array in place (ids); `owned`: the
    arguments whose own buffer may be written (optimize/no_raise.py's owned_arguments)."""
    return set(_choices(body, params, outs, scalars, owned)[0])


def _reads_values_into(st):
    """value_reads, but the argument a write-back writes into is a destination, not a read."""
    names = value_reads(st)
    if st.prim is write_back and isinstance(st.args["dest"], Var):
        names = [n for n in names if n != st.args["dest"].name]
    return names


def _choices(body, params, outs, scalars=(), owned=()):
    """({id(setitem eqn)}, {id(ufunc eqn): argument whose buffer can hold the result})."""
    src, escaped = sources(body, params, scalars, owned)
    live = live_after(body, outs, reads=_reads_values_into if owned else value_reads)
    gens = _Generations(body, src, set(scalars))
    writes, reuse = set(), {}
    for st in _stmts(body):
        if not isinstance(st, Eqn):
            continue
        if st.prim.subscript_write:
            x = st.args["x"]
            if isinstance(x, Var) and _dead_young(x.name, st, src, escaped, live, gens):
                writes.add(id(st))
        elif isinstance(st.prim.impl, np.ufunc) and st.prim.impl.nout == 1 \
                and st.prim.impl.signature is None and len(st.args) == st.prim.impl.nin:
            # elementwise ufuncs only: a gufunc (np.matmul) has core dimensions
            for a in st.args.values():
                if isinstance(a, Var) and _dead_owned(a.name, st, src, escaped, live):
                    reuse[id(st)] = a
                    break
    return writes, reuse


class ComputeInto:
    """`z = rt.compute_into(a, np.multiply, a, b)`: the ufunc writes its result into a's
    buffer (a is owned and dead afterwards) when the shape and dtype match, else allocates."""

    def __init__(self, eqn, buf):
        self.eqn, self.buf = eqn, buf
        self.loc = eqn.loc

    def print_lines(self, printer, indent):
        printer.comment_for(self.eqn.loc, indent)
        args = ", ".join(fmt(a) for a in self.eqn.args.values())
        return [f"{self.eqn.out} = rt.compute_into({self.buf.name}, {self.eqn.prim.path}, "
                f"{args})"]


class Del:
    """`del a, b`: release intermediates at their last use (printed by transpile.core.codegen)."""

    def __init__(self, names):
        self.names = names

    def print_lines(self, printer, indent):
        return [f"del {', '.join(self.names)}"]


def _is_zero(st):
    return isinstance(st, Eqn) and st.prim is assign and isinstance(
        st.args["x"], ir.Const) and isinstance(st.args["x"].value, float) and \
        st.args["x"].value == 0.0


def adds_to_zero(body):
    """`d = d + c` where d is known to hold the 0.0 of a reset adjoint becomes
    `d = rt.added_to_zero(c)` (c's buffer, no new array). Known-zero names are followed through
    straight-line code, both paths of an `if` and around loops (zero on entry and at the end of
    the body)."""
    move = added_to_zero

    def block(stmts, zero):
        out = []
        for st in stmts:
            if isinstance(st, Eqn):
                args = st.args
                if st.prim is add and st.out in zero:
                    others = [a for k, a in args.items()
                              if not (isinstance(a, Var) and a.name == st.out)]
                    if len(others) == 1 and len(args) == 2:
                        st = Eqn(st.out, move, {"d": others[0]}, st.loc)
                zero = (zero | {st.out}) if _is_zero(st) else (zero - {st.out})
                out.append(st)
            elif isinstance(st, ir.If):
                a, za = block(st.body, zero)
                b, zb = block(st.orelse, zero)
                out.append(ir.If(st.cond, a, b, st.loc))
                zero = za & zb
            elif isinstance(st, (ir.ForRange, ir.While)):
                entry = set(zero)
                if isinstance(st, ir.ForRange):
                    entry.discard(st.var)
                while True:         # zero on entry: before the loop and after every iteration
                    if isinstance(st, ir.ForRange):
                        new, end = block(st.body, entry)
                    else:
                        cb, mid = block(st.cond_body, entry)
                        new, end = block(st.body, mid)
                    if entry <= end:
                        break
                    entry &= end
                if isinstance(st, ir.ForRange):
                    out.append(ir.ForRange(st.var, st.start, st.stop, st.step, new, st.loc))
                    zero = set(entry)
                else:
                    out.append(ir.While(cb, st.cond, new, st.loc))
                    zero = set(mid)
            else:
                out.append(st)
        return out, zero
    return block(body, set())[0]


def accumulations_at(body, params, outs):
    """`t = rt.getitem_vjp(g, x, idx)` followed by `a2 = a + t` (t read nowhere else, a owned
    and dead afterwards, g not sharing a's buffer) becomes `a2 = rt.add_at(a, idx, g, x)`: the
    cotangent of a read `x[idx]` is added in place instead of through an array of zeros."""
    src, escaped = sources(body, params)
    live = live_after(body, outs, reads=value_reads)
    reads = {}
    for st in _stmts(body):
        if isinstance(st, Eqn):
            names = st.vars_read()
        elif isinstance(st, ir.Push):
            names = ir.names_read(st)
        else:       # the head of a compound statement (its body is visited on its own)
            heads = [getattr(st, a, None) for a in ("cond", "start", "stop", "step")]
            names = [h.name for h in heads if isinstance(h, Var)]
        for n in names:
            reads[n] = reads.get(n, 0) + 1

    def fuse(stmts):
        out = []
        k = 0
        while k < len(stmts):
            st = stmts[k]
            nxt = stmts[k + 1] if k + 1 < len(stmts) else None
            if isinstance(st, Eqn) and st.prim is getitem_vjp and isinstance(nxt, Eqn) \
                    and nxt.prim is add and reads.get(st.out) == 1:
                acc = [a for a in nxt.args.values() if not (isinstance(a, Var) and
                                                            a.name == st.out)]
                g = st.args["ct"]
                if len(acc) == 1 and len(nxt.args) == 2 and isinstance(acc[0], Var) and \
                        _dead_owned(acc[0].name, nxt, src, escaped, live) and not (
                        isinstance(g, Var) and src.get(g.name, {EXTERNAL}) &
                        src.get(acc[0].name, set())):
                    out.append(Eqn(nxt.out, add_at, {"acc": acc[0], "index": st.args["index"],
                                                     "ct": g, "like": st.args["x"]}, nxt.loc))
                    k += 2
                    continue
            if isinstance(st, ir.If):
                st = ir.If(st.cond, fuse(st.body), fuse(st.orelse), st.loc)
            elif isinstance(st, ir.ForRange):
                st = ir.ForRange(st.var, st.start, st.stop, st.step, fuse(st.body), st.loc)
            elif isinstance(st, ir.While):
                st = ir.While(fuse(st.cond_body), st.cond, fuse(st.body), st.loc)
            out.append(st)
            k += 1
        return out
    return fuse(body)


def copies_on_entry(body, params, owned=()):
    """A loop that writes into a carried array (`for ...: y_1 = rt.setitem(y, i, v); y = y_1`)
    whose value on entry is not the function's own (an argument, a tangent passed in, a
    value saved on a tape) would copy it on every iteration: copy it once before the loop
    instead (`y = np.copy(x)` for `y = x`), so the writes inside can be done in place.
    `owned`: arguments that may be written in place (optimize/no_raise.py): not copied."""
    src, escaped = sources(body, params, owned=owned)

    def written(stmts):
        return {st.args["x"].name for st in _stmts(stmts) if isinstance(st, Eqn)
                and st.prim.subscript_write and isinstance(st.args["x"], Var)}

    def block(stmts):
        out = list(stmts)
        for k, st in enumerate(out):
            if isinstance(st, ir.If):
                out[k] = ir.If(st.cond, block(st.body), block(st.orelse), st.loc)
            elif isinstance(st, ir.ForRange):
                out[k] = ir.ForRange(st.var, st.start, st.stop, st.step, block(st.body), st.loc)
            elif isinstance(st, ir.While):
                out[k] = ir.While(block(st.cond_body), st.cond, block(st.body), st.loc)
            if not isinstance(st, (ir.ForRange, ir.While)):
                continue
            names = written(st.body if isinstance(st, ir.ForRange) else
                            st.cond_body + st.body)
            j = k - 1
            while j >= 0 and isinstance(out[j], Eqn) and out[j].prim is assign:
                e = out[j]
                b = e.args["x"]
                if e.out in names and isinstance(b, Var):
                    sb = src.get(b.name, {EXTERNAL})
                    if EXTERNAL in sb or sb & escaped:
                        out[j] = Eqn(e.out, copy_row, {"x": b}, e.loc)
                j -= 1
        return out
    return block(body)


def apply(body, params, outs):
    """The body to print: in-place writes where safe, `del` at the top level after last uses."""
    body = copies_on_entry(body, params)
    body = tidy(adds_to_zero(body), params, outs)
    body = accumulations_at(body, params, outs)
    chosen, reuse = _choices(body, params, outs)
    body = release_dead(body, params, outs)
    if chosen or reuse:
        store = write_in_place

        def rewrite(stmts):
            out = []
            for st in stmts:
                if isinstance(st, Eqn) and id(st) in chosen:
                    st = Eqn(st.out, store if st.prim is setitem else write_in_place_if_array,
                             dict(st.args), st.loc)
                elif isinstance(st, Eqn) and id(st) in reuse:
                    st = ComputeInto(st, reuse[id(st)])
                elif isinstance(st, ir.If):
                    st = ir.If(st.cond, rewrite(st.body), rewrite(st.orelse), st.loc)
                elif isinstance(st, ir.ForRange):
                    st = ir.ForRange(st.var, st.start, st.stop, st.step, rewrite(st.body), st.loc)
                elif isinstance(st, ir.While):
                    st = ir.While(rewrite(st.cond_body), st.cond, rewrite(st.body), st.loc)
                out.append(st)
            return out
        body = rewrite(body)
    return body


def release_dead(body, params, outs):
    """Insert `del` after the top-level statement that reads a name for the last time (names
    bound by top-level statements that hold arrays; never arguments or outputs)."""
    live = live_after(body, outs)
    keep = set(params) | {o.name for o in outs if isinstance(o, Var)}
    out = []
    bound = set()
    for st in body:
        out.append(st)
        if isinstance(st, Eqn) and st.prim is write_back:
            continue
        if isinstance(st, Eqn) and not st.prim.no_buffer:
            bound.add(st.out)
        if isinstance(st, Eqn):
            used = set(st.vars_read()) | {st.out}
        else:
            used = set(ir.names_read(st))
        after = live.get(id(st), set())
        dead = sorted(n for n in used if n in bound and n not in after and n not in keep)
        if dead:
            bound -= set(dead)
            out.append(Del(dead))
    return out


def for_printing(core):
    """A copy of `core` whose body writes in place and releases intermediates."""
    new = copy.copy(core)
    new.body = apply(deferred_writes_last(core.body), core.params, core.outs)
    return new
