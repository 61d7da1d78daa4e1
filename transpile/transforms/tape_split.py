"""One tape per pushed name, so that every tape holds values of one type (for jit).

Reverse mode (transforms/reverse_control.py) gives a function one tape: the forward sweep of
a loop pushes its carried values and the values it bound, the backward loop pops them back
into the same names, in reverse order. A Python list holds values of any type; compiled code
wants a buffer of one shape and dtype. Since a pop into `v` always takes back the value
pushed from `v`, the sequence of one name's pushes and pops is itself last-in-first-out, so

    tape = rt.Tape()                     tape__s_4 = rt.Tape()
    tape.push(s_4)            ->         tape__s_4.push(s_4)
    s_4 = tape.pop()                     s_4 = tape__s_4.pop()

computes the same values. A tape whose pops do not pair with its pushes by name (the adjoint
tapes of derivatives of derivatives) is left as it is; the Numba lowering then reports it.
"""
from collections import Counter

from transpile import ir
from transpile.ir import Eqn, Var
from transpile.primitives import by_name


def _walk(body):
    for st in body:
        yield st
        for f in ("body", "orelse", "cond_body"):
            yield from _walk(getattr(st, f, None) or [])


def split_tapes(core):
    """A copy of `core` whose tapes are split per pushed name (core unchanged if none)."""
    new_tapes = [st for st in _walk(core.body) if isinstance(st, Eqn) and st.prim.name == "tape_new"]
    if not new_tapes:
        return core
    pushes, pops = {}, {}
    for st in _walk(core.body):
        if isinstance(st, ir.Push) and isinstance(st.tape, Var):
            pushes.setdefault(st.tape.name, Counter())[
                st.value.name if isinstance(st.value, Var) else None] += 1
        elif isinstance(st, Eqn) and st.prim.name == "tape_pop":
            pops.setdefault(st.args["tape"].name, Counter())[st.out] += 1
    split = {}
    for t in new_tapes:
        pu, po = pushes.get(t.out, Counter()), pops.get(t.out, Counter())
        if None in pu or set(pu) != set(po):
            continue
        split[t.out] = sorted(pu)

    def name(tape, value):
        return f"{tape}__{value}"

    def rewrite(stmts):
        out = []
        for st in stmts:
            if isinstance(st, Eqn) and st.prim.name == "tape_new" and st.out in split:
                out += [Eqn(name(st.out, v), st.prim, {}, st.loc) for v in split[st.out]]
            elif isinstance(st, ir.Push) and isinstance(st.tape, Var) and st.tape.name in split:
                out.append(ir.Push(Var(name(st.tape.name, st.value.name)), st.value, st.loc))
            elif isinstance(st, Eqn) and st.prim.name == "tape_pop" and \
                    st.args["tape"].name in split:
                out.append(Eqn(st.out, by_name("tape_pop"),
                               {"tape": Var(name(st.args["tape"].name, st.out))}, st.loc))
            elif isinstance(st, ir.If):
                out.append(ir.If(st.cond, rewrite(st.body), rewrite(st.orelse), st.loc))
            elif isinstance(st, ir.ForRange):
                out.append(ir.ForRange(st.var, st.start, st.stop, st.step, rewrite(st.body),
                                       st.loc))
            elif isinstance(st, ir.While):
                out.append(ir.While(rewrite(st.cond_body), st.cond, rewrite(st.body), st.loc))
            else:
                out.append(st)
        return out

    if not split:
        return core
    import copy
    new = copy.copy(core)
    new.body = rewrite(core.body)
    return new


def drop_dead_tapes(body, outs):
    """Remove the tapes (split per name) whose popped values nothing reads, with their pushes,
    pops and the copies of the popped values (on specialized core Python, for jit: the
    backward sweep often needs only some of what a loop iteration bound)."""
    from transpile.transforms.specialize import dce
    stmts = list(_walk(body))
    pops = {}
    for st in stmts:
        if isinstance(st, Eqn) and st.prim.name == "tape_pop":
            pops.setdefault(st.args["tape"].name, []).append(st.out)
    if not pops:
        return body
    live = {o.name for o in outs if isinstance(o, Var)}
    copies, pushes = [], []
    for st in stmts:
        if isinstance(st, Eqn) and st.prim.name == "assign":
            copies.append(st)
        elif isinstance(st, Eqn) and st.prim.name != "tape_pop":
            live.update(st.vars_read())
        elif isinstance(st, ir.Push):
            pushes.append(st)
        elif not isinstance(st, (Eqn, ir.Comment)) and not hasattr(st, "eqns"):
            for f in ("cond", "start", "stop", "step"):
                v = getattr(st, f, None)
                if isinstance(v, Var):
                    live.add(v.name)
    live_tapes = set()
    changed = True
    while changed:
        changed = False
        for c in copies:
            if c.out in live:
                new = set(c.vars_read()) - live
                if new:
                    live |= new
                    changed = True
        for t, names in pops.items():
            if t not in live_tapes and any(n in live for n in names):
                live_tapes.add(t)
                changed = True
        for p in pushes:
            if isinstance(p.tape, Var) and p.tape.name in live_tapes and \
                    isinstance(p.value, Var) and p.value.name not in live:
                live.add(p.value.name)
                changed = True
    dead = set(pops) - live_tapes
    if not dead:
        return body

    def keep(st):
        if isinstance(st, ir.Push):
            return not (isinstance(st.tape, Var) and st.tape.name in dead)
        if isinstance(st, Eqn):
            if st.prim.name == "tape_pop":
                return st.args["tape"].name not in dead
            if st.prim.name == "tape_new":
                return st.out not in dead
            if st.prim.name == "assign":
                return st.out in live
        return True

    def rewrite(block):
        out = []
        for st in block:
            if not keep(st):
                continue
            if isinstance(st, ir.If):
                st = ir.If(st.cond, rewrite(st.body), rewrite(st.orelse), st.loc)
            elif isinstance(st, ir.ForRange):
                st = ir.ForRange(st.var, st.start, st.stop, st.step, rewrite(st.body), st.loc)
            elif isinstance(st, ir.While):
                st = ir.While(rewrite(st.cond_body), st.cond, rewrite(st.body), st.loc)
            out.append(st)
        return out
    return dce(rewrite(body), outs)
