"""Writes in O(1) and intermediates released: liveness and buffer ownership on finished core
Python (after every transform), used when the code is printed.

Core Python is functional: `y = rt.setitem(x, i, v)` is a new array, so a loop writing `out[i]`
copies the whole array on every iteration. That copy is needed only while the old version `x`
(or anything sharing its buffer) is still read afterwards, by the forward code or by a
derivative's backward sweep. This pass answers, for the final body:

  * `sources(name)`: the allocations a name may point to. A primitive in FRESH always returns
    a new array (ufuncs, creation functions, setitem's copy); metadata (shapes, lengths) points
    to none; anything else (views, `rt.assign`, helpers that may return their argument) may
    point to whatever its array arguments point to. Arguments, globals, and values popped
    from a tape are EXTERNAL: never written in place. A value pushed on a tape escapes.
  * `live_after(stmt)`: the names read after a statement (backward dataflow over `If`,
    `ForRange`, `While`, to a fixed point around loops).

`y = rt.setitem(x, i, v)` becomes `y = rt.write_in_place(x, i, v)` (`x[i] = v; y = x`) when x
is owned (all its sources are allocations of this function that did not escape) and no name
sharing one of those sources, y aside, is live after the write. At the top level of the body,
`del a, b` releases intermediates at their last use, so eager `grad` holds only what its
backward sweep still reads.

API (also for the Numba lowering): `in_place_writes(body, params, outs) -> set of id(eqn)`,
`live_after(body, outs) -> {id(stmt): set of names}`, `apply(core_body, params, outs)`.
"""
from transpile import ir
from transpile.ir import Eqn, Var

EXTERNAL = "<external>"

FRESH = {
    # creation
    "zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like",
    "arange", "linspace", "eye", "identity_matrix", "copy", "setitem", "stack",
    "concatenate", "outer", "matmul", "dot", "where", "check_scalar_output",
    # ufuncs without a `deriv` entry in the table
    "ceil", "floor", "floor_divide", "mod", "rint", "trunc", "sign", "equal", "not_equal",
    "greater", "greater_equal", "less", "less_equal", "logical_and", "logical_or",
    "logical_not", "logical_xor", "isnan", "isinf", "isfinite", "signbit",
}
NO_BUFFER = {"attr_shape", "attr_ndim", "attr_size", "attr_dtype", "len", "int", "float",
             "bool", "trip_count", "tape_new", "write_back"}


def _fresh(prim):
    return prim.name in FRESH or (bool(prim.deriv) and prim.name not in ("real", "imag"))


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


def sources(body, params):
    """name -> set of allocation sites (eqn out names) or EXTERNAL; and the escaped sites."""
    src = {p: {EXTERNAL} for p in params}
    escaped = set()
    changed = True
    while changed:
        changed = False
        for st in _stmts(body):
            if isinstance(st, Eqn):
                name = st.prim.name
                if name in NO_BUFFER:
                    new = set()
                elif name == "tape_pop":
                    new = {EXTERNAL}
                elif _fresh(st.prim):
                    new = {st.out}
                else:
                    new = set()
                    for a in st.vars_read():
                        new |= src.get(a, {EXTERNAL})
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


def _reads(st):
    return set(ir.names_read(st))


def live_after(body, outs):
    """{id(stmt): names live right after it}, for every statement (nested ones included)."""
    record = {}
    out_names = {o.name for o in outs if isinstance(o, Var)}
    _block(body, set(out_names), record)
    return record


def _block(stmts, live, record):
    for st in reversed(stmts):
        record[id(st)] = set(live)
        if isinstance(st, Eqn):
            live = (live - {st.out}) | set(st.vars_read())
        elif isinstance(st, ir.If):
            a = _block(st.body, live, record)
            b = _block(st.orelse, live, record)
            live = a | b | ({st.cond.name} if isinstance(st.cond, Var) else set())
        elif isinstance(st, ir.ForRange):
            bounds = {a.name for a in (st.start, st.stop, st.step) if isinstance(a, Var)}
            loop_live = set(live)
            while True:
                body_in = _block(st.body, loop_live, record) - {st.var}
                new = live | body_in
                if new <= loop_live:
                    break
                loop_live |= new
            live = loop_live | bounds
        elif isinstance(st, ir.While):
            cond = {st.cond.name} if isinstance(st.cond, Var) else set()
            head_live = set(live)      # live at the top of cond_body
            while True:
                body_in = _block(st.body, head_live, record)
                cond_in = _block(st.cond_body, live | cond | body_in, record)
                if cond_in <= head_live:
                    break
                head_live |= cond_in
            live = head_live
        elif isinstance(st, ir.Push):
            live = live | _reads(st)
        elif isinstance(st, (ir.Break, ir.Continue, ir.Comment)):
            pass
        else:
            live = live | _reads(st)
    return live


def _dead_owned(name, st, src, escaped, live):
    """Is the buffer of `name` owned, and unread (through any alias) after statement st?"""
    sx = src.get(name, {EXTERNAL})
    if not sx or EXTERNAL in sx or sx & escaped:
        return False
    after = live.get(id(st), set())
    return not any(n != st.out and src.get(n, {EXTERNAL}) & sx for n in after)


def in_place_writes(body, params, outs):
    """The setitem equations that may write into their array in place (ids)."""
    return set(_choices(body, params, outs)[0])


def _choices(body, params, outs):
    """({id(setitem eqn)}, {id(ufunc eqn): argument whose buffer can hold the result})."""
    import numpy as np
    src, escaped = sources(body, params)
    live = live_after(body, outs)
    writes, reuse = set(), {}
    for st in _stmts(body):
        if not isinstance(st, Eqn):
            continue
        if st.prim.name == "setitem":
            x = st.args["x"]
            if isinstance(x, Var) and _dead_owned(x.name, st, src, escaped, live):
                writes.add(id(st))
        elif isinstance(st.prim.impl, np.ufunc) and st.prim.impl.nout == 1 \
                and len(st.args) == st.prim.impl.nin:
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
        from transpile.codegen import fmt
        printer.comment_for(self.eqn.loc, indent)
        args = ", ".join(fmt(a) for a in self.eqn.args.values())
        return [f"{self.eqn.out} = rt.compute_into({self.buf.name}, {self.eqn.prim.path}, "
                f"{args})"]


class Del:
    """`del a, b`: release intermediates at their last use (printed by transpile.codegen)."""

    def __init__(self, names):
        self.names = names

    def print_lines(self, printer, indent):
        return [f"del {', '.join(self.names)}"]


def apply(body, params, outs):
    """The body to print: in-place writes where safe, `del` at the top level after last uses."""
    from transpile.primitives import by_name
    chosen, reuse = _choices(body, params, outs)
    body = release_dead(body, params, outs)
    if chosen or reuse:
        store = by_name("write_in_place")

        def rewrite(stmts):
            out = []
            for st in stmts:
                if isinstance(st, Eqn) and id(st) in chosen:
                    st = Eqn(st.out, store, dict(st.args), st.loc)
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
        if isinstance(st, Eqn) and st.prim.name == "write_back":
            continue
        if isinstance(st, Eqn) and st.prim.name not in NO_BUFFER:
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
    import copy
    from transpile.codegen import deferred_writes_last
    new = copy.copy(core)
    new.body = apply(deferred_writes_last(core.body), core.params, core.outs)
    return new
