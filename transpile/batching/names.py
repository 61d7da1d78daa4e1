"""Reading and renaming the statements of core Python, for the batching sweep: which names
a block reads and writes, which tapes it uses, and copies with names replaced."""
from transpile.core import ir
from transpile.core.ir import Eqn, Var, map_atoms
from transpile.primitives import by_name
from transpile.primitives.internal.control import tape_pop


def _atom_names(values):
    return {a.name for a in ir.iter_atoms(values) if isinstance(a, Var)}


def tapes_used(stmts):
    out = set()
    for st in stmts:
        if isinstance(st, ir.Push):
            out.add(st.tape.name)
        elif isinstance(st, Eqn) and st.prim is tape_pop:
            out.add(st.args["tape"].name)
        elif isinstance(st, ir.If):
            out |= tapes_used(st.body) | tapes_used(st.orelse)
        elif isinstance(st, ir.ForRange):
            out |= tapes_used(st.body)
        elif isinstance(st, ir.While):
            out |= tapes_used(st.cond_body) | tapes_used(st.body)
    return out


def reads(stmts):
    out = set()
    for st in stmts:
        if isinstance(st, ir.Push):
            out |= _atom_names([st.tape, st.value])
        elif isinstance(st, Eqn):
            out |= _atom_names(st.args.values())
        elif isinstance(st, ir.If):
            out |= _atom_names([st.cond]) | reads(st.body) | reads(st.orelse)
        elif isinstance(st, ir.ForRange):
            out |= _atom_names([st.start, st.stop, st.step]) | reads(st.body)
        elif isinstance(st, ir.While):
            out |= _atom_names([st.cond]) | reads(st.cond_body) | reads(st.body)
    return out


def writes(stmts):
    out = set()
    for st in stmts:
        if isinstance(st, Eqn):
            out.add(st.out)
        elif isinstance(st, ir.If):
            out |= writes(st.body) | writes(st.orelse)
        elif isinstance(st, ir.ForRange):
            out |= {st.var} | writes(st.body)
        elif isinstance(st, ir.While):
            out |= writes(st.cond_body) | writes(st.body)
    return out


def rename_stmt(st, mapping):
    """Copy a statement with names replaced (reads and writes) according to mapping."""
    def sub(a):
        return mapping.get(a.name, a) if isinstance(a, Var) else a

    def name(n):
        return mapping[n].name if n in mapping else n
    if isinstance(st, Eqn):
        return Eqn(name(st.out), st.prim, {k: map_atoms(v, sub) for k, v in st.args.items()},
                   st.loc)
    if isinstance(st, ir.If):
        return ir.If(sub(st.cond), [rename_stmt(s, mapping) for s in st.body],
                     [rename_stmt(s, mapping) for s in st.orelse], st.loc)
    if isinstance(st, ir.ForRange):
        return ir.ForRange(name(st.var), sub(st.start), sub(st.stop), sub(st.step),
                           [rename_stmt(s, mapping) for s in st.body], st.loc)
    if isinstance(st, ir.While):
        return ir.While([rename_stmt(s, mapping) for s in st.cond_body], sub(st.cond),
                        [rename_stmt(s, mapping) for s in st.body], st.loc)
    if isinstance(st, ir.Push):
        return ir.Push(sub(st.tape), sub(st.value), st.loc)
    return st


def rename_branch(body, mapping, fresh, defined):
    """Copy a branch body with every name it writes given a new name (fresh(v)), in program
    order: a read before the branch's first write of a name still sees the outer value. Names
    written inside nested control flow are bound to their new name (a copy of the outer value,
    where there is one) before that statement, so every path leaves them defined."""
    def sub(a):
        return mapping.get(a.name, a) if isinstance(a, Var) else a
    out = []
    for st in body:
        if isinstance(st, Eqn):
            args = {k: map_atoms(v, sub) for k, v in st.args.items()}
            if st.out not in mapping:
                mapping[st.out] = fresh(st.out)
            out.append(Eqn(mapping[st.out].name, st.prim, args, st.loc))
        elif isinstance(st, (ir.If, ir.ForRange, ir.While)):
            for v in sorted(writes([st])):
                if v not in mapping:
                    mapping[v] = fresh(v)
                    if v in defined:
                        out.append(Eqn(mapping[v].name, by_name("identity"), {"x": Var(v)},
                                       getattr(st, "loc", None)))
            out.append(rename_stmt(st, mapping))
        else:
            out.append(st)
    return out


def live_in(stmts, live_out):
    """Names read by `stmts` before they write them, or live after them (backward liveness)."""
    live = set(live_out)
    for st in reversed(stmts):
        if isinstance(st, Eqn):
            live = (live - {st.out}) | _atom_names(st.args.values())
        elif isinstance(st, ir.If):
            live = live_in(st.body, live) | live_in(st.orelse, live) | _atom_names([st.cond])
        elif isinstance(st, (ir.ForRange, ir.While)):
            live = loop_live(st, live)
        else:
            live |= reads([st])
    return live


def _jumps(stmts):
    for st in stmts:
        if isinstance(st, (ir.Break, ir.Continue)):
            return True
        if isinstance(st, ir.If) and (_jumps(st.body) or _jumps(st.orelse)):
            return True
        if isinstance(st, ir.While) and (_jumps(st.cond_body) or _jumps(st.body)):
            return True
        if isinstance(st, ir.ForRange) and _jumps(st.body):
            return True
    return False


def loop_live(st, live):
    """The names live at the end of a loop's body (`st`: ir.ForRange or ir.While; live: the
    names live after the loop): those read after the loop, or by a later iteration before it
    writes them. A loop with break/continue keeps every name it reads."""
    if _jumps([st]):
        return set(live) | reads([st])
    cond_body = st.cond_body if isinstance(st, ir.While) else []
    test = _atom_names([st.cond]) if isinstance(st, ir.While) else \
        _atom_names([st.start, st.stop, st.step])
    head = set(live) | (test if isinstance(st, ir.ForRange) else set())
    while True:
        body_in = live_in(st.body, head)
        if isinstance(st, ir.ForRange):
            body_in.discard(st.var)
        new = head | live_in(cond_body, set(live) | test | body_in)
        if new == head:
            return head
        head = new
