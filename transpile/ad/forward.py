"""Forward mode: each primal statement is followed by its tangent statement.

The tangent of `y` is `y_dot`. Rules: `jvp` templates per argument, else `x_dot * deriv`,
else (linear arguments) the primitive applied to the tangent. Contributions are summed.
"""
from transpile.core.ir import TupleArg, Var
from transpile.primitives import by_name
from transpile.frontend.templates import instantiate, rule_env
from transpile.ad.sweep import Sweep
from transpile.ad.reverse import (_rule_text, _tag, _variadic_env,
                                          contributions, core_namer)


class ForwardSweep(Sweep):
    def __init__(self, core, wrt, namer=None):
        super().__init__(core, wrt, namer or core_namer(core))
        self.tan = {}
        self.tangent_params = []
        for p in self.wrt:
            t = self.namer.fresh(p + "_dot")
            self.tangent_params.append(t)
            self.tan[p] = Var(t)

    def run(self):
        for eqn in self.body:
            self.b.body.append(eqn)
            if eqn.out not in self.active or eqn.prim.nondiff:
                continue
            self.b.loc = _tag(eqn.loc, "tangent of")
            terms = self.terms_of(eqn)
            if not terms:
                continue
            base = eqn.out + "_dot"
            total = terms[0]
            for t in terms[1:]:
                total = self.b.emit(by_name("add"), {"x": total, "y": t}, base=base)
            if eqn.prim.elementwise and self._partial(eqn):
                total = self.b.emit(by_name("broadcast_like"), {"t": total, "like": Var(eqn.out)},
                                    base=base)
            if isinstance(total, Var) and getattr(self.b.body[-1], "out", None) == total.name \
                    and total.name not in self.tangent_names():
                self.namer.taken.discard(total.name)
                new = self.namer.fresh(base)
                self.b.body[-1].out = new
                total = Var(new)
            self.tan[eqn.out] = total

    def terms_of(self, eqn):
        """The tangent terms of an equation, one per active argument, or one term from the
        row's `jvp_joint` template (all tangents at once, `x_dot` of an inactive argument
        being zeros): setitem's tangent is then one write into x_dot, not a sum of arrays."""
        joint = eqn.prim.jvp_joint
        parts = contributions(eqn, self.active, "jvp")
        if joint and parts:
            env = rule_env(eqn)
            for pname in joint[0]:
                atom = eqn.args[pname]
                t = self.tan.get(atom.name) if isinstance(atom, Var) else None
                env[pname + "_dot"] = t if t is not None else self.b.emit(
                    by_name("zeros_like"), {"x": atom}, base="zero")
            return [instantiate(joint[1], env, self.namer, self.b, self.b.loc,
                                eqn.out + "_dot")]
        terms = [self.term(eqn, pname, k, atom) for pname, k, atom in parts]
        return [t for t in terms if t is not None]

    def tangent_names(self):
        return {v.name for v in self.tan.values() if isinstance(v, Var)} | set(self.params)

    def _partial(self, eqn):
        """Some array argument carries no tangent: the sum may not reach the result's shape."""
        return any(isinstance(v, Var) and v.name not in self.active
                   for v in eqn.args.values())

    def term(self, eqn, pname, k, atom):
        prim = eqn.prim
        t = self.tan.get(atom.name)
        if t is None:
            return None
        env = rule_env(eqn)
        env[pname + "_dot"] = t
        env = _variadic_env(eqn, pname, k, env)
        if k is not None:
            env[f"{pname}_{k}_dot"] = t
        base = eqn.out + "_dot"
        if pname in prim.jvp:
            return instantiate(_rule_text(prim.jvp[pname], eqn, k), env, self.namer, self.b,
                               self.b.loc, base)
        if pname in prim.deriv:
            d = instantiate(prim.deriv[pname], env, self.namer, self.b, self.b.loc, base)
            return self.b.emit(by_name("multiply"), {"x": t, "y": d}, base=base)
        # linear in this argument: the primitive applied to the tangent
        args = dict(eqn.args)
        if k is None:
            args[pname] = t
        else:
            if any(i != k for i, a in enumerate(eqn.args[pname].items)
                   if isinstance(a, Var) and a.name in self.active):
                return self.joint_linear(eqn, pname) if k == self.first_active(eqn, pname) else None
            items = list(eqn.args[pname].items)
            items[k] = t
            items = [it if i == k else self.zeros(it) for i, it in enumerate(items)]
            args[pname] = TupleArg(tuple(items), eqn.args[pname].kind)
        return self.b.emit(prim, args, base=base)

    def first_active(self, eqn, pname):
        for i, a in enumerate(eqn.args[pname].items):
            if isinstance(a, Var) and a.name in self.active:
                return i

    def joint_linear(self, eqn, pname):
        """stack/concatenate of several active arrays: one call on all their tangents."""
        items = []
        for a in eqn.args[pname].items:
            t = self.tan.get(a.name) if isinstance(a, Var) else None
            items.append(t if t is not None else self.zeros(a))
        args = dict(eqn.args)
        args[pname] = TupleArg(tuple(items), eqn.args[pname].kind)
        return self.b.emit(eqn.prim, args, base=eqn.out + "_dot")

    def zeros(self, atom):
        return self.b.emit(by_name("zeros_like"), {"x": atom}, base="zero")

    def output_tangents(self):
        self.b.loc = None
        out = []
        for o in self.outs:
            t = self.tan.get(o.name) if isinstance(o, Var) else None
            if t is None:
                t = self.b.emit(by_name("zeros_like"), {"x": o}, base="out_dot")
            out.append(t)
        return out
