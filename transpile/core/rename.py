"""Renaming passes over core Python: copying a body with fresh names (inlining), and giving
every rebinding of a name a new name (SSA) so reverse mode can read every value it needs."""
from transpile.core import ir
from transpile.core.ir import Const, Eqn, Var, map_atoms
from transpile.primitives import by_name


def _sub(mapping):
    def fn(atom):
        if isinstance(atom, Var) and atom.name in mapping:
            return mapping[atom.name]
        return atom
    return fn


def rename_body(body, mapping, namer, outs=None):
    """Copy `body`; inputs are substituted from `mapping` (name -> atom); every name the body
    binds gets a fresh name. `mapping` is updated with the final binding of each name. `outs`
    are the atoms read after the body (None: any name may be)."""
    out = []
    own = set()         # the names this copy binds
    for k, st in enumerate(body):
        if isinstance(st, Eqn):
            args = {k: map_atoms(v, _sub(mapping)) for k, v in st.args.items()}
            new = namer.fresh(st.out)
            own.add(new)
            out.append(Eqn(new, st.prim, args, st.loc))
            mapping[st.out] = Var(new)
        elif isinstance(st, ir.Comment):
            out.append(st)
        elif isinstance(st, ir.Push):
            out.append(ir.Push(map_atoms(st.tape, _sub(mapping)), map_atoms(st.value, _sub(mapping)),
                               st.loc))
        else:
            later = None
            if outs is not None:
                later = {a.name for a in ir.iter_atoms(outs) if isinstance(a, Var)}
                for s in body[k + 1:]:
                    later.update(ir.names_read(s))
            out += rename_control(st, mapping, namer, later, own)
    return out


def rename_control(st, mapping, namer, later=None, own=frozenset()):
    """Copy a control-flow statement for inlining. Every name bound inside it gets one name
    (the same in both branches and on every iteration, so joins and loop-carried values keep
    working): the name the copy already gave it (`own`), else a fresh one. A name bound
    outside under another name (an argument, a caller's value) is first copied into the fresh
    name where its old value can still be seen: read inside before the statement binds it,
    or read after (`later`; None: any name) on a path that does not bind it. No copy for a
    name the copy bound itself: that value may not exist (bound on one path of an earlier
    `if` only, such as a backward loop's index, read again only where that path ran)."""
    pre = []
    fixed = {}
    exposed, bound = exposed_reads([st], set())
    for name in dict.fromkeys(ir.bound_names([st])):
        cur = mapping.get(name)
        if isinstance(cur, Var) and cur.name in own:
            fixed[name] = cur.name
            continue
        new = namer.fresh(name)
        fixed[name] = new
        if isinstance(own, set):
            own.add(new)
        seen = name in exposed or later is None or (name in later and name not in bound)
        if name in mapping and seen:
            pre.append(Eqn(new, _assign(), {"x": mapping[name]}, getattr(st, "loc", None)))
    for name, new in fixed.items():
        mapping[name] = Var(new)
    return pre + [_rename_fixed(st, mapping, fixed)]


def exposed_reads(stmts, bound):
    """(names read before this code surely binds them, names surely bound after it), starting
    from the surely-bound set `bound`. A loop may run no iteration; a while's test runs once."""
    exposed = set()
    bound = set(bound)
    for st in stmts:
        if isinstance(st, (Eqn, ir.Push)):
            exposed.update(n for n in ir.names_read(st) if n not in bound)
            if isinstance(st, Eqn):
                bound.add(st.out)
        elif isinstance(st, ir.If):
            if isinstance(st.cond, Var) and st.cond.name not in bound:
                exposed.add(st.cond.name)
            e1, b1 = exposed_reads(st.body, bound)
            e2, b2 = exposed_reads(st.orelse, bound)
            exposed |= e1 | e2
            bound = b1 & b2
        elif isinstance(st, ir.ForRange):
            exposed.update(a.name for a in (st.start, st.stop, st.step)
                           if isinstance(a, Var) and a.name not in bound)
            exposed |= exposed_reads(st.body, bound | {st.var})[0]
        elif isinstance(st, ir.While):
            e1, bound = exposed_reads(st.cond_body, bound)
            exposed |= e1
            if isinstance(st.cond, Var) and st.cond.name not in bound:
                exposed.add(st.cond.name)
            exposed |= exposed_reads(st.body, bound)[0]
    return exposed, bound


def _assign():
    return by_name("assign")


def _rename_fixed(st, mapping, fixed):
    sub = _sub(mapping)
    if isinstance(st, Eqn):
        args = {k: map_atoms(v, sub) for k, v in st.args.items()}
        return Eqn(fixed.get(st.out, st.out), st.prim, args, st.loc)
    if isinstance(st, ir.Push):
        return ir.Push(map_atoms(st.tape, sub), map_atoms(st.value, sub), st.loc)
    if isinstance(st, ir.If):
        return ir.If(map_atoms(st.cond, sub), [_rename_fixed(s, mapping, fixed) for s in st.body],
                     [_rename_fixed(s, mapping, fixed) for s in st.orelse], st.loc)
    if isinstance(st, ir.ForRange):
        return ir.ForRange(fixed.get(st.var, st.var), *[map_atoms(a, sub) for a in
                                                        (st.start, st.stop, st.step)],
                           [_rename_fixed(s, mapping, fixed) for s in st.body], st.loc)
    if isinstance(st, ir.While):
        return ir.While([_rename_fixed(s, mapping, fixed) for s in st.cond_body],
                        map_atoms(st.cond, sub),
                        [_rename_fixed(s, mapping, fixed) for s in st.body], st.loc)
    return st


def _init_loop_vars(body, names):
    """`i = 0` before each range loop binding one of `names` (_SSA.copy_before)."""
    if not names:
        return body
    out = []
    for st in body:
        if isinstance(st, ir.If):
            st = ir.If(st.cond, _init_loop_vars(st.body, names),
                       _init_loop_vars(st.orelse, names), st.loc)
        elif isinstance(st, ir.ForRange):
            if st.var in names:
                out.append(Eqn(st.var, _assign(), {"x": Const(0)}, st.loc))
            st = ir.ForRange(st.var, st.start, st.stop, st.step,
                             _init_loop_vars(st.body, names), st.loc)
        elif isinstance(st, ir.While):
            st = ir.While(_init_loop_vars(st.cond_body, names), st.cond,
                          _init_loop_vars(st.body, names), st.loc)
        out.append(st)
    return out


def ssa(core, namer):
    """Rename so that no straight-line name is bound twice (parameters count as bound).

    With control flow (see _SSA): inside branches and loop bodies every statement also binds
    a name of its own; the value of a name after an `if` is an explicit copy at the end of both
    branches (`x_3 = x_2` / `x_3 = x`), and a loop-carried value has a name of its own, copied
    in before the loop and copied back at the end of the body. Reverse mode relies on this:
    nothing bound before a branch or loop is ever overwritten by it."""
    if ir.has_control_flow(core.body):
        s = _SSA(namer, set(core.params))
        mapping = {p: Var(p) for p in core.params}
        body = _init_loop_vars(s.block(core.body, mapping), s.read_unbound)
        outs = [map_atoms(o, _sub(mapping)) if isinstance(o, (Var, Const)) else o
                for o in core.outs]
        return body, outs
    seen = set(core.params)
    mapping = {}
    body = []
    for st in core.body:
        if isinstance(st, Eqn):
            args = {k: map_atoms(v, _sub(mapping)) for k, v in st.args.items()}
            name = st.out
            if name in seen:
                name = namer.numbered(st.out, start=2)
                mapping[st.out] = Var(name)
            else:
                mapping.pop(st.out, None)
            seen.add(name)
            body.append(Eqn(name, st.prim, args, st.loc))
        else:
            body.append(st)
    outs = [map_atoms(o, _sub(mapping)) if isinstance(o, (Var, Const)) else o for o in core.outs]
    return body, outs


class _SSA:
    def __init__(self, namer, params):
        self.namer = namer
        self.seen = set(params)
        self.partial = set()    # names bound on one path of an earlier if only
        self.in_loop = False
        self.loop_vars = set()  # range loops' variables: unbound where the loop ran zero times
        self.read_unbound = set()   # those of them copied where they may be unbound

    def copy_before(self, out, atom, loc):
        """A copy made before a loop: of a range loop's variable, which that loop leaves
        unbound where it ran zero times (`for i in range(k + 1, n)` twice in a row, k == n - 1),
        that variable is first bound to 0 before its loop (_init_loop_vars)."""
        if isinstance(atom, Var) and atom.name in self.loop_vars:
            self.read_unbound.add(atom.name)
        return self.copy(out, atom, loc)

    def bind(self, name, mapping):
        new = name if name not in self.seen else self.namer.numbered(_stem(name), start=2)
        self.seen.add(new)
        mapping[name] = Var(new)
        return new

    def copy(self, out, atom, loc):
        return Eqn(out, _assign(), {"x": atom}, loc)

    def block(self, body, mapping):
        out = []
        for st in body:
            sub = _sub(mapping)
            if isinstance(st, Eqn):
                args = {k: map_atoms(v, sub) for k, v in st.args.items()}
                out.append(Eqn(self.bind(st.out, mapping), st.prim, args, st.loc))
            elif isinstance(st, ir.Push):
                out.append(ir.Push(map_atoms(st.tape, sub), map_atoms(st.value, sub), st.loc))
            elif isinstance(st, ir.Comment):
                out.append(st)
            elif isinstance(st, ir.If):
                out.append(self.branch(st, mapping))
            elif isinstance(st, (ir.ForRange, ir.While)):
                out += self.loop(st, mapping)
            else:
                raise NotImplementedError(f"{type(st).__name__} should have been lowered")
        return out

    def branch(self, st, mapping):
        cond = map_atoms(st.cond, _sub(mapping))
        m1, m2 = dict(mapping), dict(mapping)
        body, orelse = self.block(st.body, m1), self.block(st.orelse, m2)
        in_then, in_else = set(ir.bound_names(st.body)), set(ir.bound_names(st.orelse))
        for name in dict.fromkeys(ir.bound_names(st.body) + ir.bound_names(st.orelse)):
            a, b = m1.get(name), m2.get(name)
            if name in self.partial:      # bound by an earlier branch only: maybe unbound here
                a = a if name in in_then else None
                b = b if name in in_else else None
            if a is None or b is None:
                # bound on one path only: after the if it is read (if at all) only where that
                # path ran (a later `if` on the same condition: the backward sweep), where it
                # holds that path's last value, which may live under another name (a loop-
                # carried copy). Forgetting it would read an earlier binding of the name; a
                # later join must not copy it on a path where it was never bound.
                mapping[name] = a if a is not None else b
                self.partial.add(name)
                continue
            self.partial.discard(name)
            if a == b:
                mapping[name] = a
                continue
            join = self.namer.numbered(_stem(name), start=2)
            self.seen.add(join)
            body.append(self.copy(join, a, st.loc))
            orelse.append(self.copy(join, b, st.loc))
            mapping[name] = Var(join)
        return ir.If(cond, body, orelse, st.loc)

    def loop(self, st, mapping):
        inner = ir.bound_names([st])
        carried = [n for n in dict.fromkeys(inner) if n in mapping or n in self.seen
                   and n not in inner]
        carried = [n for n in dict.fromkeys(inner) if n in mapping and n not in self.partial
                   and (not isinstance(st, ir.ForRange) or n != st.var)]
        pre = []
        loop_names = {}
        for n in carried:
            c = self.namer.numbered(_stem(n), start=2)
            self.seen.add(c)
            pre.append(self.copy_before(c, mapping[n], st.loc))
            loop_names[n] = Var(c)
        mapping.update(loop_names)
        m = dict(mapping)
        if isinstance(st, ir.ForRange):
            bounds = [map_atoms(a, _sub(mapping)) for a in (st.start, st.stop, st.step)]
            prior = mapping.get(st.var) if st.var not in self.partial else None
            var = self.bind(st.var, m)
            if self.in_loop and prior is not None:
                # a loop that runs zero times leaves its variable as it was (a backward loop's
                # index, carried by the enclosing loop, is copied back after it)
                pre.append(self.copy_before(var, prior, st.loc))
            self.loop_vars.add(var)
            cond_body, cond = None, None
        else:
            cond_body = self.block(st.cond_body, m)
            cond = map_atoms(st.cond, _sub(m))
        outer, self.in_loop = self.in_loop, True
        body = self.block(st.body, m)
        self.in_loop = outer
        for n in carried:
            if m[n] != loop_names[n]:
                body.append(self.copy(loop_names[n].name, m[n], st.loc))
        for n in dict.fromkeys(inner):
            if n not in loop_names and n in m:
                mapping[n] = m[n]
        if isinstance(st, ir.ForRange):
            return pre + [ir.ForRange(var, *bounds, body, st.loc)]
        return pre + [ir.While(cond_body, cond, body, st.loc)]


def _stem(name):
    head, _, tail = name.rpartition("_")
    return head if head and tail.isdigit() else name
