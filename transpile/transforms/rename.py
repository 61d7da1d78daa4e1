"""Renaming passes over core Python: copying a body with fresh names (inlining), and giving
every rebinding of a name a new name (SSA) so reverse mode can read every value it needs."""
from transpile import ir
from transpile.ir import Const, Eqn, Var, map_atoms


def _sub(mapping):
    def fn(atom):
        if isinstance(atom, Var) and atom.name in mapping:
            return mapping[atom.name]
        return atom
    return fn


def rename_body(body, mapping, namer):
    """Copy `body`; inputs are substituted from `mapping` (name -> atom); every name the body
    binds gets a fresh name. `mapping` is updated with the final binding of each name."""
    out = []
    for st in body:
        if isinstance(st, Eqn):
            args = {k: map_atoms(v, _sub(mapping)) for k, v in st.args.items()}
            new = namer.fresh(st.out)
            out.append(Eqn(new, st.prim, args, st.loc))
            mapping[st.out] = Var(new)
        elif isinstance(st, ir.Comment):
            out.append(st)
        else:
            out.append(rename_control(st, mapping, namer))
    return out


def rename_control(st, mapping, namer):
    """Control-flow statements: extended by the control-flow transforms."""
    raise NotImplementedError(f"renaming {type(st).__name__} is not supported yet")


def ssa(core, namer):
    """Rename so that no straight-line name is bound twice (parameters count as bound)."""
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
