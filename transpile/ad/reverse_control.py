"""Reverse mode through control flow: `If`, `ForRange`, `While`, and the tape statements of
derivative code that is being differentiated again.

The generated function is: a forward sweep (the primal code, with `tape.push(...)` inside loops),
the seed, then a backward sweep (adjoints in reverse statement order). runtime/tape.py explains
the tape and why this design keeps derivatives of derivatives correct. In short:

  * after SSA (core/rename.py), nothing bound before an `if` or a loop is overwritten by
    it; only loop-carried names (copied in before the loop, copied back at the end of the body)
    and the join names of branches are bound more than once;
  * outside loops no value is ever lost, so straight-line code and top-level `if`s need no tape;
  * a loop iteration pushes its carried values when it starts and the values it bound when it
    ends (a `while` loop also counts its iterations); the backward loop runs the same indices in
    reverse and starts each iteration by popping them back;
  * an `if` in the backward sweep tests the same condition (restored by the pops when inside a
    loop) and runs the adjoint of the branch that ran;
  * adjoints that control flow touches live in one fixed name each (`dW = np.zeros_like(W)`
    before the backward loop, `dW = dW + ...` inside); inside a loop the adjoint of a value is
    reset to 0.0 once the statement that bound it has been processed, because the previous
    iteration's value of that name is a different value;
  * the tape statements of inner derivative code are differentiated like primitives: an active
    tape gets an adjoint tape (`dtape.push(dx)` for a pop, `dv = dv + dtape.pop()` for a push).
"""
from collections import Counter

from transpile.core import ir
from transpile.core.ir import Const, Eqn, Var
from transpile.primitives import by_name
from transpile.ad.reverse import ReverseSweep, _tag, check_opaque, contributions
from transpile.core.liveness import live_after
from transpile.ad.tape_slim import slim
from transpile.primitives.internal.adjoint_helpers import identity
from transpile.primitives.internal.control import added_to_zero, assign, tape_new, tape_pop
from transpile.primitives.numpy.structure import getitem


def _takes_zero(prim):
    """The row's reverse rule takes the scalar 0.0 for the adjoint of an array result: an
    elementwise row (its rule broadcasts g), a copy, a subscript (g is written into zeros)."""
    return bool(prim.deriv) or prim in (assign, identity, added_to_zero, getitem)


def walk_stmts(body):
    for st in body:
        yield st
        if isinstance(st, ir.If):
            yield from walk_stmts(st.body)
            yield from walk_stmts(st.orelse)
        elif isinstance(st, ir.ForRange):
            yield from walk_stmts(st.body)
        elif isinstance(st, ir.While):
            yield from walk_stmts(st.cond_body)
            yield from walk_stmts(st.body)


def _reads(body):
    return {n for st in body for n in ir.names_read(st)}


def useful_names(body, outs):
    """Names whose value reaches an output through differentiable statements."""
    useful = {o.name for o in outs if isinstance(o, Var)}
    tapes = set()
    changed = True
    while changed:
        changed = False
        for st in walk_stmts(body):
            if isinstance(st, Eqn) and st.out in useful:
                if st.prim is tape_pop:
                    new = {st.args["tape"].name} - tapes
                    tapes |= new
                    changed |= bool(new)
                elif not st.prim.nondiff:
                    new = set(st.vars_read()) - useful
                    useful |= new
                    changed |= bool(new)
            elif isinstance(st, ir.Push) and st.tape.name in tapes \
                    and isinstance(st.value, Var) and st.value.name not in useful:
                useful.add(st.value.name)
                changed = True
    return useful


def active_with_control(body, seeds, outs=None):
    """Names that depend differentiably on the seeds (to a fixed point, through loops), and
    the tapes that carry such values. With `outs`, only names that also reach an output."""
    active, tapes = set(seeds), set()
    changed = True
    while changed:
        changed = False
        for st in walk_stmts(body):
            if isinstance(st, Eqn):
                if st.out in active:
                    continue
                if st.prim is tape_pop:
                    hit = st.args["tape"].name in tapes
                else:
                    if st.prim.nondiff:
                        check_opaque(st, active)
                    hit = not st.prim.nondiff and any(n in active for n in st.vars_read())
                if hit:
                    active.add(st.out)
                    changed = True
            elif isinstance(st, ir.Push):
                if isinstance(st.value, Var) and st.value.name in active \
                        and st.tape.name not in tapes:
                    tapes.add(st.tape.name)
                    changed = True
    if outs is not None:
        active &= useful_names(body, outs) | set(seeds)
    return active, tapes


class ControlReverseSweep(ReverseSweep):
    def __init__(self, core, wrt):
        super().__init__(core, wrt)
        self.active, self.active_tapes = active_with_control(self.body, self.wrt, self.outs)
        self.counts = Counter(ir.bound_names(self.body))
        self.params_set = set(self.params)
        self.read = set()
        for st in walk_stmts(self.body):
            self.read |= set(ir.names_read(st))
        # names bound only inside a branch (an early return's values): possibly unbound
        # elsewhere, so an adjoint made for them outside their branch starts as 0.0
        top = set(self.params) | {st.out for st in self.body if isinstance(st, Eqn)}
        # and names bound only in a loop's body, read on one side of an if only (the last
        # item of a loop that may have run zero times, `if runs: v_3 = v else: v_3 = 0`)
        one_side, both, in_loops, guarded = set(), set(), set(), set()
        for st in walk_stmts(self.body):
            if isinstance(st, ir.If):
                a, b = set(ir.bound_names(st.body)), set(ir.bound_names(st.orelse))
                one_side |= a ^ b
                both |= a & b
                guarded |= _reads(st.body) ^ _reads(st.orelse)
            elif isinstance(st, (ir.ForRange, ir.While)):
                in_loops |= set(ir.bound_names(st.body))
        self.branch_only = (one_side - both - top) | (in_loops & guarded - top)
        self.tape = None
        self.dtapes = {}
        self.block_pushes = {}
        self.push_sites = {}     # id(block) -> {name: its Push at the end of the block}
        self.pop_sites = {}      # (id(block), name) -> the pops of that push
        self.counters = {}
        self.scalar_zero = set()  # adjoints made 0.0 by prefix (may still be that scalar)
        # names whose adjoint got a contribution in the block being processed, since it was
        # last reset (in a loop, any other adjoint may still hold the 0.0 of its reset)
        self.filled = set()

    def owned_or_primal(self):
        return set(self.params) | set(ir.bound_names(self.body))

    # -- structure -------------------------------------------------------------------------------

    def carried(self, st):
        inside = Counter(ir.bound_names([st]))
        if isinstance(st, ir.ForRange):
            inside.pop(st.var, None)
        return [n for n in inside if self.counts[n] > inside[n] or n in self.params_set]

    def block_defs(self, stmts):
        out = []
        for st in stmts:
            if isinstance(st, Eqn):
                if st.prim is not tape_new:
                    out.append(st.out)
            elif isinstance(st, ir.If):
                other = set(self.block_defs(st.orelse))
                out += [n for n in self.block_defs(st.body) if n in other]
            elif isinstance(st, (ir.ForRange, ir.While)):
                # every value the loop leaves behind, not only the carried ones: a name bound
                # inside an inner loop and read after it must be restored per outer iteration
                out += list(dict.fromkeys(ir.bound_names([st])))
        return out

    def pushes_for(self, stmts, exclude=()):
        names = [n for n in dict.fromkeys(self.block_defs(stmts) + self.block_extra.get(
            id(stmts), [])) if n not in exclude and n in self.read]
        self.block_pushes[id(stmts)] = names
        pushes = [ir.Push(self.tape, Var(n)) for n in names]
        self.push_sites[id(stmts)] = dict(zip(names, pushes))
        return pushes

    def pops(self, names, block=None):
        out = [Eqn(n, by_name("tape_pop"), {"tape": self.tape}) for n in reversed(names)]
        if block is not None:
            for e in out:
                self.pop_sites.setdefault((block, e.out), []).append(e)
        return out

    # -- the generated function ------------------------------------------------------------------

    def run(self, seed, fname, loss_leaf):
        self.block_extra = {}
        self.b.body = []
        if any(isinstance(st, (ir.ForRange, ir.While)) for st in walk_stmts(self.body)):
            self.tape = Var(self.namer.fresh("tape"))
            self.b.body.append(Eqn(self.tape.name, by_name("tape_new"), {}))
        self.b.body += self.forward_block(self.body, False)
        in_loops = set()
        for st in walk_stmts(self.body):
            if isinstance(st, (ir.ForRange, ir.While)):
                in_loops |= set(ir.bound_names([st]))
        outs = []
        keeps = {}
        for o in self.outs:
            if isinstance(o, Var) and o.name in in_loops:
                # the backward sweep pops loop values back: keep the result in a name of its own
                keep = self.namer.fresh(o.name + "_result")
                keeps[keep] = Eqn(keep, by_name("assign"), {"x": o})
                self.b.body.append(keeps[keep])
                outs.append(Var(keep))
            else:
                outs.append(o)
        primal_outs = outs
        extra = []
        if seed == "scalar":
            self.seed_scalar(self.outs[loss_leaf], fname)
        else:
            extra = self.seed_cotangents(self.outs)
        self.b.loc = None
        for t in sorted(self.active_tapes):
            d = self.namer.fresh("d" + t)
            self.b.body.append(Eqn(d, by_name("tape_new"), {}))
            self.dtapes[t] = Var(d)
        split = len(self.b.body)
        self.backward_block(self.body, False)
        grads = self.gradients()
        if self.tape is not None:
            self.prune(split, list(grads) + list(primal_outs))
            self.b.body = slim(self.b.body, split, self.tape, list(grads) + list(primal_outs),
                               self.namer)
        primal_outs = self.drop_unneeded_keeps(keeps, primal_outs)
        return self.b.body, extra, grads, primal_outs

    def drop_unneeded_keeps(self, keeps, outs):
        """`s_result = s` where nothing after it binds s again (the backward sweep did not
        pop s back): the output is s itself."""
        drop = set()
        for k, st in enumerate(self.b.body):
            if isinstance(st, Eqn) and st.out in keeps and st is keeps[st.out] and \
                    st.args["x"].name not in ir.bound_names(self.b.body[k + 1:]):
                drop.add(st.out)
        if not drop:
            return outs
        self.b.body = [st for st in self.b.body if not (isinstance(st, Eqn) and st.out in drop)]
        return [keeps[o.name].args["x"] if isinstance(o, Var) and o.name in drop else o
                for o in outs]

    def prune(self, split, outs):
        """Drop the pushes (and their pops) of values the backward sweep never reads, and the
        end-of-block pushes whose every pop is dead where it stands. A value bound inside an
        inner loop or branch (`cond`, a factor) is pushed at the end of each outer iteration,
        but the inner backward loop pops its own copies before reading them: pushing it there
        is useless, and wrong when the inner loop ran zero times (the name is unbound)."""
        tape = self.tape.name
        back = self.b.body[split:]
        used = {g.name for g in outs if isinstance(g, Var)}
        for st in walk_stmts(back):
            if not (isinstance(st, Eqn) and st.prim is tape_pop):
                used |= set(ir.names_read(st))
        live = live_after(back, outs)
        dropped = set()
        for block, sites in self.push_sites.items():
            for n, push in sites.items():
                pops = self.pop_sites.get((block, n), [])
                if pops and all(n not in live.get(id(e), {n}) for e in pops):
                    dropped.add(id(push))
                    dropped |= {id(e) for e in pops}

        def keep(st):
            if id(st) in dropped:
                return False
            if isinstance(st, ir.Push) and st.tape == Var(tape):
                return not isinstance(st.value, Var) or st.value.name in used
            if isinstance(st, Eqn) and st.prim is tape_pop and st.args["tape"] == Var(tape):
                return st.out in used
            return True

        def filt(body):
            out = []
            for st in body:
                if not keep(st):
                    continue
                if isinstance(st, ir.If):
                    st.body, st.orelse = filt(st.body), filt(st.orelse)
                elif isinstance(st, (ir.ForRange, ir.While)):
                    st.body = filt(st.body)
                out.append(st)
            return out
        self.b.body = filt(self.b.body)

    # -- forward sweep ---------------------------------------------------------------------------

    def forward_block(self, stmts, in_loop):
        out = []
        for st in stmts:
            if isinstance(st, ir.If):
                body = self.forward_block(st.body, in_loop)
                orelse = self.forward_block(st.orelse, in_loop)
                if in_loop:
                    body += self.pushes_for(st.body)
                    orelse += self.pushes_for(st.orelse)
                out.append(ir.If(st.cond, body, orelse, st.loc))
            elif isinstance(st, ir.ForRange):
                carried = self.carried(st)
                body = self.with_carried_pushes(self.forward_block(st.body, True), carried)
                body += self.pushes_for(st.body, exclude=carried)
                out.append(ir.ForRange(st.var, st.start, st.stop, st.step, body, st.loc))
            elif isinstance(st, ir.While):
                carried = self.carried(st)
                counter = self.namer.fresh("trips")
                self.counters[id(st)] = counter
                self.block_extra.setdefault(id(stmts), []).append(counter)
                self.read.add(counter)
                out.append(Eqn(counter, by_name("assign"), {"x": Const(0)}, st.loc))
                body = [Eqn(counter, by_name("add"), {"x": Var(counter), "y": Const(1)}, st.loc)]
                body += self.with_carried_pushes(self.forward_block(st.body, True), carried)
                body += self.pushes_for(st.body, exclude=carried)
                out.append(ir.While(st.cond_body, st.cond, body, st.loc))
            else:
                out.append(st)
        return out

    def with_carried_pushes(self, body, carried):
        """Push the carried values just before the copies at the end of the body that update
        them (so every push of an iteration comes after the pushes nested inside it)."""
        k = len(body)
        while k and isinstance(body[k - 1], Eqn) and body[k - 1].out in carried:
            k -= 1
        return body[:k] + [ir.Push(self.tape, Var(n)) for n in carried] + body[k:]

    # -- backward sweep --------------------------------------------------------------------------

    def accumulate(self, name, c, filled=True):
        super().accumulate(name, c)
        if filled:           # (not a 0.0 passed on by a copy or an elementwise rule)
            self.filled.add(name)

    def kill(self, name):
        self.filled.discard(name)
        d = self.adj.get(name)
        if isinstance(d, Var) and d.name in self.owned:
            self.b.body.append(Eqn(d.name, by_name("assign"), {"x": Const(0.0)}, self.b.loc))
        else:
            self.adj.pop(name, None)

    def prefix(self, st):
        """Give every adjoint the statement's backward code touches one fixed name."""
        inside = set(ir.bound_names([st]))
        carried = set(self.carried(st)) if isinstance(st, (ir.ForRange, ir.While)) else set()
        names = [n for n in dict.fromkeys(list(ir.names_read(st)) + ir.bound_names([st]))
                 if n in self.active]
        self.b.loc = _tag(st.loc, "adjoint of")
        for n in names:
            cur = self.adj.get(n)
            shared = isinstance(cur, Var) and any(
                v == cur for k, v in self.adj.items() if k != n)
            if isinstance(cur, Var) and cur.name in self.owned and not shared:
                if n in carried and cur.name in self.scalar_zero:
                    # made 0.0 for a name bound in one branch (an early return's other path);
                    # the loop carrying it needs an adjoint of its shape (`g[i] = 0` in the
                    # rule of a write reads g as an array)
                    self.b.body.append(Eqn(cur.name, by_name("adjoint_like"),
                                           {"d": cur, "x": Var(n)}, self.b.loc))
                    self.scalar_zero.discard(cur.name)
                continue
            d = self.adjoint_name(n)
            if cur is not None:
                self.b.body.append(Eqn(d, by_name("assign"), {"x": cur}, self.b.loc))
            elif n in carried or (n not in inside and n not in self.branch_only):
                self.b.body.append(Eqn(d, by_name("zeros_like"), {"x": Var(n)}, self.b.loc))
            else:
                self.b.body.append(Eqn(d, by_name("assign"), {"x": Const(0.0)}, self.b.loc))
                self.scalar_zero.add(d)
            self.adj[n] = Var(d)
            self.owned.add(d)

    def backward_block(self, stmts, in_loop):
        for st in reversed(stmts):
            if isinstance(st, Eqn):
                self.backward_eqn(st, in_loop)
            elif isinstance(st, ir.Push):
                self.backward_push(st)
            elif isinstance(st, ir.If):
                self.prefix(st)
                loc = self.b.loc

                before, after = set(self.filled), []

                def branch(block):
                    self.filled = set(before)
                    if in_loop:
                        self.b.body += self.pops(self.block_pushes[id(block)], id(block))
                    self.backward_block(block, in_loop)
                    after.append(self.filled)
                body = self.sub(lambda: branch(st.body))
                orelse = self.sub(lambda: branch(st.orelse))
                self.filled = before.intersection(*after)
                self.b.body.append(ir.If(st.cond, body, orelse, loc))
            elif isinstance(st, ir.ForRange):
                self.prefix(st)
                loc = self.b.loc
                b = self.b
                if st.start == Const(0) and st.step == Const(1):
                    # range(0, n): the last index is n - 1 (an empty range stays empty)
                    last = b.emit(by_name("subtract"), {"x": st.stop, "y": Const(1)},
                                  base="last")
                else:
                    n = b.emit(by_name("trip_count"), {"start": st.start, "stop": st.stop,
                                                       "step": st.step}, base="trips")
                    n1 = b.emit(by_name("subtract"), {"x": n, "y": Const(1)}, base="last")
                    last = b.emit(by_name("add"), {"x": st.start, "y": b.emit(
                        by_name("multiply"), {"x": n1, "y": st.step}, base="last")},
                        base="last")
                end = b.emit(by_name("subtract"), {"x": st.start, "y": st.step}, base="end")
                back = b.emit(by_name("negative"), {"x": st.step}, base="step")
                body = self.sub(lambda: self.loop_body(st, loc))
                self.b.body.append(ir.ForRange(st.var, last, end, back, body, loc))
            elif isinstance(st, ir.While):
                self.prefix(st)
                loc = self.b.loc
                k = self.namer.fresh("_")
                body = self.sub(lambda: self.loop_body(st, loc))
                self.b.body.append(ir.ForRange(k, Const(0), Var(self.counters[id(st)]), Const(1),
                                               body, loc))

    def loop_body(self, st, loc):
        before = self.filled
        self.filled = set()      # an iteration starts with the previous one's resets
        self.b.loc = loc
        self.b.body += self.pops(self.block_pushes[id(st.body)], id(st.body))
        self.b.body += self.pops(self.carried(st))
        self.backward_block(st.body, True)
        self.filled = before - set(ir.bound_names([st]))

    def backward_eqn(self, eqn, in_loop):
        if eqn.prim is tape_new:
            return
        if eqn.prim is tape_pop:
            t = eqn.args["tape"].name
            if t in self.active_tapes:
                self.b.loc = _tag(eqn.loc, "adjoint of")
                g = self.adj.get(eqn.out, Const(0.0))
                self.b.body.append(ir.Push(self.dtapes[t], g, self.b.loc))
                if in_loop:
                    self.kill(eqn.out)
            return
        g = self.adj.get(eqn.out)
        if g is None or eqn.prim.nondiff:
            return
        self.b.loc = _tag(eqn.loc, "adjoint of")
        # the adjoint may still be the 0.0 of its reset (a value the loop rebinds before
        # reading it, or reads only in a branch not taken)
        maybe_zero = in_loop and isinstance(g, Var) and g.name in self.owned and \
            eqn.out not in self.filled
        if maybe_zero and not _takes_zero(eqn.prim):
            # a rule that moves axes (reshape, matmul, solve, stack) needs zeros of its shape
            g = self.b.emit(by_name("adjoint_like"), {"d": g, "x": Var(eqn.out)},
                            base=g.name)
            maybe_zero = False
        parts = [(atom.name, self.contribution(eqn, pname, k, atom, g))
                 for pname, k, atom in contributions(eqn, self.active, "vjp")]
        for n, c in parts:
            self.accumulate(n, c, filled=not maybe_zero)
        if in_loop:
            self.kill(eqn.out)

    def backward_push(self, st):
        t = st.tape.name
        if t not in self.active_tapes:
            return
        v = st.value
        base = "d" + v.name if isinstance(v, Var) else "dpopped"
        popped = self.b.emit(by_name("tape_pop"), {"tape": self.dtapes[t]}, base=base)
        if isinstance(v, Var) and v.name in self.active:
            self.accumulate(v.name, popped)
