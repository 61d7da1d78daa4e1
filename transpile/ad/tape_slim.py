"""What a reverse-mode tape saves: only what the backward sweep reads.

ad/reverse_control.py pushes, at the end of each loop iteration, every value the loop
bound that the backward sweep reads somewhere. Two refinements on the finished body (forward
sweep, then backward sweep from index `split`), found by liveness on the backward sweep:

  * a popped value that nothing reads before the next pop of the same name (or after the
    backward loop) is dead: its push and its pops are dropped. A loop writing `out[i] = ...`
    carries `out`, and the backward of a write never reads the array, so `out` is no longer
    saved once per iteration;
  * a popped value read only as a *shape argument* (the registry's `shape_args`: `rt.unbroadcast(g,
    x)`, `rt.float_part(g, like)`, ...) is saved as `rt.shape_only(x)`, a zero-strided
    stand-in with x's shape and dtype (O(1) memory).

With the array off the tape, optimize/inplace.py finds its buffer owned and dead after each
write, so the write is done in place: a loop of n writes costs O(n) under `grad`, not O(n^2).
"""
from transpile.core import ir
from transpile.core.ir import Eqn, Var, map_atoms
from transpile.core.liveness import live_after, value_reads
from transpile.primitives import by_name
from transpile.primitives.internal.control import tape_pop




def _walk(body):
    for st in body:
        yield st
        if isinstance(st, ir.If):
            yield from _walk(st.body)
            yield from _walk(st.orelse)
        elif isinstance(st, ir.ForRange):
            yield from _walk(st.body)
        elif isinstance(st, ir.While):
            yield from _walk(st.cond_body)
            yield from _walk(st.body)


def slim(body, split, tape, outs, namer):
    """The body with dead pushes dropped and shape-only ones replaced by `rt.shape_only`."""
    back = body[split:]
    live = live_after(back, outs)
    full = live_after(back, outs, reads=value_reads)
    status = {}            # popped name -> "dead" / "shape" / "value" (the strongest use)
    rank = {"dead": 0, "shape": 1, "value": 2}
    for st in _walk(back):
        if isinstance(st, Eqn) and st.prim is tape_pop and st.args["tape"] == tape:
            n = st.out
            use = ("value" if n in full.get(id(st), ()) else
                   "shape" if n in live.get(id(st), ()) else "dead")
            if n not in status or rank[use] > rank[status[n]]:
                status[n] = use
    # a shape-only value is popped into a name of its own: every read of it must lie in the
    # blocks that pop it (below the pop), or the name also means the forward sweep's value
    blocks = _pop_blocks(back, tape)
    for n, use in status.items():
        if use == "shape" and not _popped_reads_contained(back, n, blocks.get(n, []), tape):
            status[n] = "value"
    if all(u == "value" for u in status.values()):
        return body
    stand_in = {n: namer.fresh(n + "_shape") for n, u in status.items() if u == "shape"}
    shape_like = by_name("shape_only")

    def forward(stmts):
        out = []
        for st in stmts:
            if isinstance(st, ir.Push) and st.tape == tape and isinstance(st.value, Var):
                use = status.get(st.value.name, "value")
                if use == "dead":
                    continue
                if use == "shape":
                    m = stand_in[st.value.name]
                    out.append(Eqn(m, shape_like, {"x": st.value}, st.loc))
                    out.append(ir.Push(st.tape, Var(m), st.loc))
                    continue
            out.append(_rebuild(st, forward))
        return out

    def backward(stmts, renames):
        out = []
        renames = dict(renames)
        for st in stmts:
            if isinstance(st, Eqn) and st.prim is tape_pop and st.args["tape"] == tape:
                use = status.get(st.out)
                if use == "dead":
                    continue
                if use == "shape":
                    renames[st.out] = stand_in[st.out]
                    out.append(Eqn(stand_in[st.out], st.prim, dict(st.args), st.loc))
                    continue
            st = _rename_reads(st, renames) if renames else st
            out.append(_rebuild(st, lambda b: backward(b, renames)))
            if isinstance(st, Eqn):
                renames.pop(st.out, None)
        return out

    return forward(body[:split]) + backward(back, {})


def _pop_blocks(back, tape):
    """popped name -> ids of the statement lists that pop it."""
    out = {}

    def visit(stmts):
        for st in stmts:
            if isinstance(st, Eqn) and st.prim is tape_pop and st.args["tape"] == tape:
                out.setdefault(st.out, []).append(id(stmts))
            for sub in _blocks_of(st):
                visit(sub)
    visit(back)
    return out


def _blocks_of(st):
    if isinstance(st, ir.If):
        return [st.body, st.orelse]
    if isinstance(st, ir.ForRange):
        return [st.body]
    if isinstance(st, ir.While):
        return [st.cond_body, st.body]
    return []


def _popped_reads_contained(back, n, pop_blocks, tape):
    """Reads of n before the first statement that pops it see the forward sweep's value (they
    keep the name); every read from there on must lie below a pop."""
    for k, st in enumerate(back):
        if any(isinstance(e, Eqn) and e.prim is tape_pop and e.out == n
               and e.args["tape"] == tape for e in _walk([st])):
            return _reads_only_below_pops(back[k:], n, pop_blocks, False)
    return True


def _reads_only_below_pops(stmts, n, pop_blocks, below):
    """Is every read of n in stmts after a pop of n in the same (or an enclosing) block?"""
    popped = below
    for st in stmts:
        if isinstance(st, Eqn) and st.prim is tape_pop and st.out == n:
            popped = id(stmts) in pop_blocks
            continue
        subs = _blocks_of(st)
        if subs:
            heads = [a for a in (getattr(st, "cond", None), getattr(st, "start", None),
                                 getattr(st, "stop", None), getattr(st, "step", None))
                     if isinstance(a, Var)]
            if not popped and any(a.name == n for a in heads):
                return False
            if not all(_reads_only_below_pops(b, n, pop_blocks, popped) for b in subs):
                return False
        elif not popped and n in ir.names_read(st):
            return False
        elif isinstance(st, Eqn) and st.out == n:
            popped = False    # bound again by something else: later reads see that value
    return True


def _rename_reads(st, renames):
    """The statement with reads of renamed names substituted (nested bodies left to _rebuild)."""
    def sub(atom):
        if isinstance(atom, Var) and atom.name in renames:
            return Var(renames[atom.name])
        return atom
    if isinstance(st, Eqn):
        return Eqn(st.out, st.prim, {k: map_atoms(v, sub) for k, v in st.args.items()}, st.loc)
    if isinstance(st, ir.Push):
        return ir.Push(sub(st.tape), sub(st.value), st.loc)
    if isinstance(st, ir.If):
        return ir.If(sub(st.cond), st.body, st.orelse, st.loc)
    if isinstance(st, ir.ForRange):
        return ir.ForRange(st.var, sub(st.start), sub(st.stop), sub(st.step), st.body, st.loc)
    if isinstance(st, ir.While):
        return ir.While(st.cond_body, sub(st.cond), st.body, st.loc)
    return st


def _rebuild(st, fn):
    if isinstance(st, ir.If):
        return ir.If(st.cond, fn(st.body), fn(st.orelse), st.loc)
    if isinstance(st, ir.ForRange):
        return ir.ForRange(st.var, st.start, st.stop, st.step, fn(st.body), st.loc)
    if isinstance(st, ir.While):
        return ir.While(fn(st.cond_body), st.cond, fn(st.body), st.loc)
    return st
