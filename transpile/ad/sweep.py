"""What reverse and forward mode share: the SSA form of the function, which names carry a
derivative, and a builder for the statements a sweep emits."""
from transpile.errors import TranspileError
from transpile.core.ir import Eqn
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
