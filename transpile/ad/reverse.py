"""Reverse mode: the forward statements, then adjoint statements in reverse order.

For each primal statement `y = prim(x, ...)` whose result carries a gradient, the rule
template for each argument is instantiated with g = dy; contributions to the same variable are
summed (`dx = dx + ...`). Names: the adjoint of `x` is `dx`.
"""
from transpile.errors import TranspileError
from transpile.core.ir import Const, CoreFn, TupleArg, Var, bound_names
from transpile.frontend.normalize.normalizer import Namer
from transpile.primitives import by_name
from transpile.frontend.templates import instantiate, rule_env
from transpile.ad.sweep import Sweep, active_vars, check_opaque  # noqa: F401
from transpile.primitives.internal.control import setitem


def core_namer(core):
    names = set(core.params) | {"np", "rt"} | set(core.statics)
    names |= set(bound_names(core.body))
    return Namer(names)


def _tag(loc, tag):
    return None if loc is None else (loc[0], loc[1], tag)


def contributions(eqn, active, mode):
    """(argument name, position in a variadic argument or None, atom) for each argument of eqn
    that carries a derivative. Raises if an active value reaches an argument with no rule."""
    prim = eqn.prim
    rules = prim.vjp if mode == "vjp" else prim.jvp
    out = []
    for pname, value in eqn.args.items():
        if pname in prim.shape_args or pname in prim.discrete:
            continue
        items = list(enumerate(value.items)) if isinstance(value, TupleArg) else [(None, value)]
        for k, atom in items:
            if not (isinstance(atom, Var) and atom.name in active):
                continue
            if pname in rules or pname in prim.deriv or (mode == "jvp" and pname in prim.linear):
                out.append((pname, k, atom))
            elif prim.batch == "helper" or prim in (setitem,):
                continue   # runtime helpers: arguments without a rule only give a shape/dtype
            elif _reads_active(value, active) and pname not in ("index",):
                where = f"{eqn.loc[0]}:{eqn.loc[1]}" if eqn.loc else "generated code"
                name = user_name(prim)
                raise TranspileError(
                    f"no derivative rule for argument {pname!r} of {name} ({where})",
                    construct=f"{name}(... {pname}=<value that depends on the input> ...)",
                    hint="wrap that argument in transpile.stop_gradient(...) or register a rule "
                         "with transpile.defrule")
    if mode == "vjp" and len(rules) > 1:
        # in the order the row lists its rules (setitem reads g[index] before it zeroes it)
        order = {p: i for i, p in enumerate(rules)}
        out.sort(key=lambda c: order.get(c[0], len(order)))
    return out


def user_name(prim):
    """How the user spells a row (scipy.stats.t.cdf rather than the rt.t_cdf it runs)."""
    return prim.aliases[0] if prim.aliases else prim.path


def _reads_active(value, active):
    items = value.items if isinstance(value, TupleArg) else [value]
    return any(isinstance(a, Var) and a.name in active for a in items)


def _needs_unbroadcast(eqn, pname, k):
    """An elementwise primitive may broadcast this argument against another array argument."""
    if not eqn.prim.elementwise or k is not None:
        return False
    return any(isinstance(v, Var) for n, v in eqn.args.items() if n != pname)


def _rule_text(rule, eqn, k):
    return rule(eqn, k) if callable(rule) else rule


def _variadic_env(eqn, pname, k, env):
    if k is not None:
        env["k"] = Const(k)
        for i, item in enumerate(eqn.args[pname].items):
            env[f"{pname}_{i}"] = item
    return env


class ReverseSweep(Sweep):
    def __init__(self, core, wrt, namer=None):
        super().__init__(core, wrt, namer or core_namer(core))
        self.b.body = list(self.body)
        self.adj = {}        # primal name -> Var holding its adjoint so far
        self.owned = set()   # adjoint names created for (and only for) one primal variable

    def adjoint_name(self, name):
        return self.namer.fresh("d" + name)

    def accumulate(self, name, c):
        if isinstance(c, Const) and c.value == 0:
            return
        if name not in self.adj:
            if isinstance(c, Var) and self.b.body and getattr(self.b.body[-1], "out", None) == c.name \
                    and c.name not in {v.name for v in self.adj.values() if isinstance(v, Var)} \
                    and c.name not in self.owned_or_primal():
                self.namer.taken.discard(c.name)
                new = self.adjoint_name(name)
                self.b.body[-1].out = new
                c = Var(new)
                self.owned.add(new)
            self.adj[name] = c
            return
        cur = self.adj[name]
        out = cur.name if cur.name in self.owned else self.adjoint_name(name)
        self.adj[name] = self.b.emit(by_name("add"), {"x": cur, "y": c}, out=out)
        self.owned.add(out)

    def owned_or_primal(self):
        return set(self.params) | {e.out for e in self.body}

    def seed_scalar(self, out, fname):
        """dout = 1 (checked: the output must be a float scalar)."""
        self.b.loc = None
        check = by_name("check_scalar_output")
        args = {"out": out, "fname": Const(fname)}
        if getattr(self, "holomorphic", False):
            args["holomorphic"] = Const(True)
        if isinstance(out, Var):
            name = self.adjoint_name(out.name)
            g = self.b.emit(check, args, out=name)
            if out.name in self.active:
                self.adj[out.name] = g
                self.owned.add(name)
        else:
            self.b.emit(check, args, base="dout")

    def seed_cotangents(self, outs):
        """One cotangent parameter per output leaf; returns their names."""
        names = []
        for o in outs:
            base = o.name if isinstance(o, Var) else "out"
            ct = self.namer.fresh("d" + base)
            names.append(ct)
            if isinstance(o, Var) and o.name in self.active:
                self.accumulate(o.name, Var(ct)) if o.name in self.adj else \
                    self.adj.__setitem__(o.name, Var(ct))
        return names

    def sweep(self):
        for eqn in reversed(self.body):
            g = self.adj.get(eqn.out)
            if g is None or eqn.prim.nondiff:
                continue
            self.b.loc = _tag(eqn.loc, "adjoint of")
            for pname, k, atom in contributions(eqn, self.active, "vjp"):
                self.accumulate(atom.name, self.contribution(eqn, pname, k, atom, g))

    def contribution(self, eqn, pname, k, atom, g):
        prim = eqn.prim
        env = _variadic_env(eqn, pname, k, rule_env(eqn, {"g": g}))
        base = "d" + atom.name
        if pname in prim.vjp:
            c = instantiate(_rule_text(prim.vjp[pname], eqn, k), env, self.namer, self.b,
                            self.b.loc, base)
        else:
            d = instantiate(prim.deriv[pname], env, self.namer, self.b, self.b.loc, base)
            c = self.b.emit(by_name("multiply"), {"x": g, "y": d}, base=base)
        if _needs_unbroadcast(eqn, pname, k):
            c = self.b.emit(by_name("unbroadcast"), {"ct": c, "x": atom}, base=base)
        return c

    def gradients(self):
        """The adjoint of each wrt parameter (zeros where the output does not depend on it)."""
        self.b.loc = None
        grads = []
        for p in self.wrt:
            g = self.adj.get(p)
            if g is None:
                g = self.b.emit(by_name("zeros_like"), {"x": Var(p)}, base="d" + p)
            elif isinstance(g, Var):     # the parameter's dtype (float32 stays float32)
                g = self.b.emit(by_name("grad_like"), {"t": g, "x": Var(p)}, base="d" + p)
            grads.append(g)
        return grads


def make_core(core, suffix, body, params, outs, out_tree):
    return CoreFn(name=core.name + suffix, params=params, body=body, outs=outs, out_tree=out_tree,
                  free=core.free, statics=core.statics, filename=core.filename,
                  source_lines=core.source_lines, notes=list(core.notes))
