"""One tape per pushed name, so that every tape holds values of one type (for jit).

Reverse mode (ad/reverse_control.py) gives a function one tape: the forward sweep of
a loop pushes its carried values and the values it bound, the backward loop pops them back
into the same names, in reverse order. A Python list holds values of any type; compiled code
wants a buffer of one shape and dtype. Since a pop into `v` always takes back the value
pushed from `v`, the sequence of one name's pushes and pops is itself last-in-first-out, so

    tape = rt.Tape()                     tape__s_4 = rt.Tape()
    tape.push(s_4)            ->         tape__s_4.push(s_4)
    s_4 = tape.pop()                     s_4 = tape__s_4.pop()

computes the same values. Names do not always pair: a derivative of a derivative renames the
values the inner backward sweep pops. Then the pairing comes from the code's structure
(`_pair_sites`): the tape is followed through the body as a stack of push sites (one pass
through each loop body, both paths of each if, which must push as many values), and every
pop joins the sites it may take back into one group, which gets a tape of its own. Every pop
takes its value from its own group's tape, in the same order, so the values are the same.
A tape that neither way splits is left as it is; the Numba lowering then reports it.
"""
import copy
from collections import Counter

from transpile.core import ir
from transpile.core.ir import Eqn, Var
from transpile.primitives import by_name
from transpile.core.liveness import dce
from transpile.primitives.internal.control import assign, tape_new, tape_pop


def _walk(body):
    for st in body:
        yield st
        for f in ("body", "orelse", "cond_body"):
            yield from _walk(getattr(st, f, None) or [])


def split_tapes(core):
    """A copy of `core` whose tapes are split per pushed name (core unchanged if none)."""
    new_tapes = [st for st in _walk(core.body) if isinstance(st, Eqn) and st.prim is tape_new]
    if not new_tapes:
        return core
    pushes, pops = {}, {}
    for st in _walk(core.body):
        if isinstance(st, ir.Push) and isinstance(st.tape, Var):
            pushes.setdefault(st.tape.name, Counter())[
                st.value.name if isinstance(st.value, Var) else None] += 1
        elif isinstance(st, Eqn) and st.prim is tape_pop:
            pops.setdefault(st.args["tape"].name, Counter())[st.out] += 1
    split = {}          # tape -> its new tapes, in order
    site_tape = {}      # id(push or pop) -> its new tape
    taken = {st.out for st in _walk(core.body) if isinstance(st, Eqn)}
    for t in new_tapes:
        pu, po = pushes.get(t.out, Counter()), pops.get(t.out, Counter())
        if None not in pu and set(pu) == set(po):
            split[t.out] = [f"{t.out}__{v}" for v in sorted(pu)]
            for st in _walk(core.body):
                if isinstance(st, ir.Push) and st.tape == Var(t.out):
                    site_tape[id(st)] = f"{t.out}__{st.value.name}"
                elif isinstance(st, Eqn) and st.prim is tape_pop and \
                        st.args["tape"] == Var(t.out):
                    site_tape[id(st)] = f"{t.out}__{st.out}"
            continue
        groups = _pair_sites(core.body, t.out)
        if groups is None or len(groups) < 2:
            continue
        split[t.out] = []
        for members in groups:
            first = next((m.value.name for m in members if isinstance(m, ir.Push) and
                          isinstance(m.value, Var)), "const")
            new = f"{t.out}__{first}"
            while new in taken:
                new += "_"
            taken.add(new)
            split[t.out].append(new)
            for m in members:
                site_tape[id(m)] = new

    def rewrite(stmts):
        out = []
        for st in stmts:
            if isinstance(st, Eqn) and st.prim is tape_new and st.out in split:
                out += [Eqn(n, st.prim, {}, st.loc) for n in split[st.out]]
            elif isinstance(st, ir.Push) and id(st) in site_tape:
                out.append(ir.Push(Var(site_tape[id(st)]), st.value, st.loc))
            elif isinstance(st, Eqn) and id(st) in site_tape:
                out.append(Eqn(st.out, by_name("tape_pop"), {"tape": Var(site_tape[id(st)])},
                               st.loc))
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
    new = copy.copy(core)
    new.body = rewrite(core.body)
    return new


class _Unpaired(Exception):
    pass


class _Branch:
    """On the stack of push sites: what the two paths of `if cond:` pushed (lists of entries),
    when they pushed different numbers of values."""

    def __init__(self, cond, then, orelse):
        self.cond, self.then, self.orelse = cond, then, orelse

    def __eq__(self, other):
        return isinstance(other, _Branch) and (self.cond, self.then, self.orelse) == \
            (other.cond, other.then, other.orelse)

    __hash__ = None


def _merge(x, y):
    """One stack entry for the entries x, y of the two paths of an if."""
    if isinstance(x, _Branch) or isinstance(y, _Branch):
        if x == y:
            return x
        raise _Unpaired
    if x[1] != y[1]:
        raise _Unpaired
    return (x[0] | y[0], x[1])


def _pair_sites(body, tape):
    """The pushes and pops of `tape` in groups that share no value (each a list of the
    statements), or None when the structure does not say which push a pop takes back."""
    parent = {}

    def find(k):
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    sites = {}
    pop_of = {}
    popped_from = {}     # a popped name -> the names whose pushes it may take back

    def uses(stmts):
        """(pushes onto the tape, pops from it) somewhere in stmts"""
        push = pop = False
        for st in _walk(stmts):
            push = push or isinstance(st, ir.Push) and st.tape == Var(tape)
            pop = pop or isinstance(st, Eqn) and st.prim is tape_pop and \
                st.args["tape"] == Var(tape)
        return push, pop

    def run(stmts, stack, pushed_in=0, popped_in=0):
        """The stack after stmts: (sites, loop depth) per value. A value pushed inside k
        loops that only push must be popped inside k loops that only pop (mirrored)."""
        for st in stmts:
            if isinstance(st, ir.Push):
                if st.tape == Var(tape):
                    sites[id(st)] = st
                    parent[id(st)] = id(st)
                    stack = stack + [(frozenset([id(st)]), pushed_in)]
                elif isinstance(st.value, Var) and st.value.name == tape:
                    raise _Unpaired
            elif isinstance(st, Eqn):
                if st.prim is tape_pop and st.args["tape"] == Var(tape):
                    if not stack or isinstance(stack[-1], _Branch):
                        raise _Unpaired
                    (slot, depth), stack = stack[-1], stack[:-1]
                    if depth != popped_in:
                        raise _Unpaired
                    first = next(iter(slot))
                    for k in slot:
                        parent[find(k)] = find(first)
                    pop_of[id(st)] = (st, first)
                    values = {sites[k].value.name if isinstance(sites[k].value, Var) else None
                              for k in slot}
                    popped_from[st.out] = values if None not in values else set()
                elif st.prim is not tape_new and tape in st.vars_read():
                    raise _Unpaired      # the tape used some other way (copied, passed)
            elif isinstance(st, (ir.Break, ir.Continue)):
                raise _Unpaired          # (only reached where the loop touches the tape)
            elif isinstance(st, ir.If):
                top = stack[-1] if stack else None
                if isinstance(top, _Branch) and isinstance(st.cond, Var) and \
                        popped_from.get(st.cond.name) == {top.cond}:
                    # the backward sweep's `if c:` on the popped condition of the forward
                    # sweep's branch: each path takes back what that path pushed
                    a = run(st.body, stack[:-1] + top.then, pushed_in, popped_in)
                    b = run(st.orelse, stack[:-1] + top.orelse, pushed_in, popped_in)
                else:
                    a = run(st.body, stack, pushed_in, popped_in)
                    b = run(st.orelse, stack, pushed_in, popped_in)
                n = len(stack)
                if len(a) != len(b) and isinstance(st.cond, Var) and a[:n] == stack and \
                        b[:n] == stack and st.cond.name not in ir.bound_names(st.body) + \
                        ir.bound_names(st.orelse):
                    # the paths push different values (reverse mode pushes the condition
                    # too, after the branch): they stay apart until an `if` on it pops them
                    stack = stack + [_Branch(st.cond.name, a[n:], b[n:])]
                    continue
                stack = [_merge(x, y) for x, y in zip(a, b)] if len(a) == len(b) else None
                if stack is None:
                    raise _Unpaired
            elif isinstance(st, (ir.ForRange, ir.While)):
                if isinstance(st, ir.While) and any(uses(st.cond_body)):
                    raise _Unpaired
                push, pop = uses(st.body)
                if push and pop:
                    # an iteration takes back only what it pushed: the iterations are alike
                    if run(st.body, [], pushed_in, popped_in):
                        raise _Unpaired
                elif push:
                    # one iteration stands for every iteration: a later loop that only pops
                    # takes back what this one pushed, iteration by iteration
                    stack = run(st.body, stack, pushed_in + 1, popped_in)
                elif pop:
                    stack = run(st.body, stack, pushed_in, popped_in + 1)
        return stack

    try:
        run(body, [])
    except _Unpaired:
        return None
    groups = {}
    for k, st in sites.items():
        groups.setdefault(find(k), []).append(st)
    for st, first in pop_of.values():
        groups[find(first)].append(st)
    return list(groups.values())


def drop_dead_tapes(body, outs):
    """Remove the tapes (split per name) whose popped values nothing reads, with their pushes,
    pops and the copies of the popped values (on specialized core Python, for jit: the
    backward sweep often needs only some of what a loop iteration bound)."""
    stmts = list(_walk(body))
    pops = {}
    for st in stmts:
        if isinstance(st, Eqn) and st.prim is tape_pop:
            pops.setdefault(st.args["tape"].name, []).append(st.out)
    if not pops:
        return body
    live = {o.name for o in outs if isinstance(o, Var)}
    copies, pushes = [], []
    for st in stmts:
        if isinstance(st, Eqn) and st.prim is assign:
            copies.append(st)
        elif isinstance(st, Eqn) and st.prim is not tape_pop:
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
            if st.prim is tape_pop:
                return st.args["tape"].name not in dead
            if st.prim is tape_new:
                return st.out not in dead
            if st.prim is assign:
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
