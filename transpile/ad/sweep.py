"""What reverse and forward mode share: the SSA form of the function, which names carry a
derivative, and a builder for the statements a sweep emits."""
import dataclasses

from transpile.errors import TranspileError
from transpile.core.ir import Eqn, ForRange, If, While, walk_eqns
from transpile.frontend.normalize.normalizer import Builder
from transpile.core.rename import ssa
from transpile.core.tidy import common_values


class Sweep:
    def __init__(self, core, wrt, namer):
        self.namer = namer
        self.body, self.outs = ssa(core, self.namer)
        self.body = common_values(self.body, core.params, self.outs)
        self.params = core.params
        self.wrt = [core.params[i] for i in wrt]
        self.body = differentiated_primals(self.body, self.wrt)
        self.active = active_vars(self.body, self.wrt)
        self.b = Builder(self.namer)

    def sub(self, fn):
        """Run fn with a fresh statement list; return what it emitted."""
        saved = self.b.body
        self.b.body = []
        try:
            fn()
        finally:
            body, self.b.body = self.b.body, saved
        return body


def differentiated_primals(body, seeds):
    """A call whose row has a `diff_primal` (custom_vjp, custom_jvp) gives, where a derivative
    flows through it, that row's result: fwd's output / the jvp rule's primal output, as JAX
    does. Which calls: those reading a value that depends on the seeds (over-approximated
    across loops and branches: a fixed point over every statement)."""
    if not any(e.prim.diff_primal is not None for e in walk_eqns(body)):
        return body
    active, grew = set(seeds), True
    while grew:
        grew = False
        for eqn in walk_eqns(body):
            if eqn.out not in active and not eqn.prim.nondiff and \
                    any(n in active for n in eqn.vars_read()):
                active.add(eqn.out)
                grew = True

    def swap(stmts):
        out = []
        for st in stmts:
            if isinstance(st, Eqn) and st.prim.diff_primal is not None and st.out in active:
                st = dataclasses.replace(st, prim=st.prim.diff_primal)
            elif isinstance(st, If):
                st = dataclasses.replace(st, body=swap(st.body), orelse=swap(st.orelse))
            elif isinstance(st, ForRange):
                st = dataclasses.replace(st, body=swap(st.body))
            elif isinstance(st, While):
                st = dataclasses.replace(st, cond_body=swap(st.cond_body), body=swap(st.body))
            out.append(st)
        return out
    return swap(body)


def active_vars(body, seeds):
    """Names whose values depend (differentiably) on the seed names."""
    active = set(seeds)
    for eqn in body:
        if not isinstance(eqn, Eqn):
            continue
        if eqn.prim.nondiff:
            check_opaque(eqn, active)
            continue
        if any(name in active for name in eqn.vars_read()):
            active.add(eqn.out)
    return active


def check_opaque(eqn, active):
    """A primitive with no rule whose derivative is not zero must not swallow a derivative."""
    if eqn.prim.opaque and any(n in active for n in eqn.vars_read()):
        where = f"{eqn.loc[0]}:{eqn.loc[1]}: " if eqn.loc and eqn.loc[1] else ""
        what = eqn.prim.user_path or eqn.prim.path
        raise TranspileError(
            f"{where}cannot differentiate through {what}: it has no derivative rule "
            "and its derivative is not zero", construct=f"{what}(...)",
            hint=eqn.prim.opaque_hint)
