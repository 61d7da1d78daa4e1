"""Forward mode through control flow: tangent statements go next to the primal ones inside
branches and loop bodies. A value bound inside control flow (or bound more than once, like a
loop-carried value) keeps one tangent name everywhere, so the joins of branches and the copies
of loop-carried values carry their tangents along (`h_2_dot = h_3_dot` next to `h_2 = h_3`).

The tape statements of derivative code (runtime/tape.py) get a tangent tape: `tape_dot.push(
v_dot)` next to `tape.push(v)`, `x_dot = tape_dot.pop()` next to `x = tape.pop()`.
"""
from collections import Counter

from transpile.core import ir
from transpile.core.ir import Const, Eqn, Var
from transpile.primitives import by_name
from transpile.ad.forward import ForwardSweep
from transpile.ad.reverse import _tag
from transpile.ad.reverse_control import active_with_control
from transpile.primitives.internal.control import tape_new, tape_pop


def _inside_control(body, out):
    for st in body:
        if isinstance(st, (ir.If, ir.ForRange, ir.While)):
            out |= set(ir.bound_names([st]))
    return out


class ControlForwardSweep(ForwardSweep):
    def __init__(self, core, wrt):
        super().__init__(core, wrt)
        self.active, self.active_tapes = active_with_control(self.body, self.wrt)
        counts = Counter(ir.bound_names(self.body))
        inside = _inside_control(self.body, set())
        self.fixed = {}
        for n in sorted(self.active):
            if (counts[n] > 1 or n in inside) and n not in self.params:
                self.fixed[n] = self.namer.fresh(n + "_dot")
        self.tape_tans = {}
        # what made each value (a tape value's tangent depends on it)
        self.made_by = {e.out: e.prim for e in ir.walk_eqns(self.body)}

    def run(self):
        self.b.body = []
        self.block(self.body)

    def block(self, stmts):
        for st in stmts:
            if isinstance(st, Eqn):
                self.eqn(st)
            elif isinstance(st, ir.Push):
                self.b.body.append(st)
                t = self.tape_tans.get(st.tape.name)
                if t is not None:
                    v = st.value
                    vd = self.tan.get(v.name) if isinstance(v, Var) else None
                    made = self.made_by.get(v.name) if isinstance(v, Var) else None
                    if vd is None and isinstance(v, Var) and not (made is not None and (
                            made.meta or made.bool_result or made.int_result)):
                        # float zeros of the value's shape: the rule reading the popped
                        # tangent may move axes (matmul, reshape); a flag, a count or a
                        # value saved for its shape only: 0.0, as every such push
                        vd = self.b.emit(by_name("adjoint_like"), {"d": Const(0.0), "x": v},
                                         base=v.name + "_dot")
                    self.b.body.append(ir.Push(t, vd if vd is not None else Const(0.0), st.loc))
            elif isinstance(st, ir.If):
                body = self.sub(lambda: self.block(st.body))
                orelse = self.sub(lambda: self.block(st.orelse))
                self.b.body.append(ir.If(st.cond, body, orelse, st.loc))
            elif isinstance(st, ir.ForRange):
                body = self.sub(lambda: self.block(st.body))
                self.b.body.append(ir.ForRange(st.var, st.start, st.stop, st.step, body, st.loc))
            elif isinstance(st, ir.While):
                body = self.sub(lambda: self.block(st.body))
                self.b.body.append(ir.While(st.cond_body, st.cond, body, st.loc))
            else:
                self.b.body.append(st)

    def eqn(self, eqn):
        self.b.body.append(eqn)
        if eqn.prim is tape_new:
            if eqn.out in self.active_tapes:
                t = self.namer.fresh(eqn.out + "_dot")
                self.b.body.append(Eqn(t, by_name("tape_new"), {}, eqn.loc))
                self.tape_tans[eqn.out] = Var(t)
            return
        if eqn.out not in self.active:
            return
        self.b.loc = _tag(eqn.loc, "tangent of")
        if eqn.prim is tape_pop:
            t = self.tape_tans[eqn.args["tape"].name]
            out = self.fixed.get(eqn.out) or self.namer.fresh(eqn.out + "_dot")
            self.b.body.append(Eqn(out, by_name("tape_pop"), {"tape": t}, self.b.loc))
            self.tan[eqn.out] = Var(out)
            return
        total = None
        if not eqn.prim.nondiff:
            terms = self.terms_of(eqn)
            base = eqn.out + "_dot"
            if terms:
                total = terms[0]
                for t in terms[1:]:
                    total = self.b.emit(by_name("add"), {"x": total, "y": t}, base=base)
                if eqn.prim.elementwise and self._partial(eqn):
                    total = self.b.emit(by_name("broadcast_like"),
                                        {"t": total, "like": Var(eqn.out)}, base=base)
        fixed = self.fixed.get(eqn.out)
        if fixed is None:
            if total is None:
                return
            if isinstance(total, Var) and getattr(self.b.body[-1], "out", None) == total.name \
                    and total.name not in self.tangent_names():
                self.namer.taken.discard(total.name)
                new = self.namer.fresh(eqn.out + "_dot")
                self.b.body[-1].out = new
                total = Var(new)
            self.tan[eqn.out] = total
            return
        if total is None:
            self.b.body.append(Eqn(fixed, by_name("zeros_like"), {"x": Var(eqn.out)}, self.b.loc))
        elif isinstance(total, Var) and getattr(self.b.body[-1], "out", None) == total.name \
                and total.name not in self.tangent_names():
            self.b.body[-1].out = fixed
        else:
            self.b.body.append(Eqn(fixed, by_name("assign"), {"x": total}, self.b.loc))
        self.tan[eqn.out] = Var(fixed)
