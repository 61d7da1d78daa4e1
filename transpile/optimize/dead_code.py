"""Dead values inside loops and branches, for jit (after the tapes that nothing reads are gone).

core/liveness.py's dce drops dead equations of the function's top level. Inside a loop or a branch a
value can die later, when drop_dead_tapes removes the push that was its only reader (the
shape stand-in `rt.shape_only(out)` of a write in a loop is one): left in place, the lowering
allocates it on every iteration. Here an equation anywhere is dropped unless its value
reaches an output or an effect (mark and sweep over the names, so a cycle of loop-join copies
that nothing else reads goes too; those copies also hid the single reader that
accumulate.scatter_adds looks for). Writes, tapes and effects are never dropped.
"""
from transpile.core import ir
from transpile.core.ir import Eqn, Var


def _removable(st):
    return isinstance(st, Eqn) and st.prim.pure and not st.prim.keep


def _mark(stmts, defs, roots):
    """defs: name -> the names its removable definitions read; roots: names read by
    everything else (effects, writes, tapes, loop bounds and conditions)."""
    for st in stmts:
        if _removable(st):
            defs.setdefault(st.out, set()).update(st.vars_read())
        elif isinstance(st, Eqn):
            roots.update(st.vars_read())
        elif isinstance(st, ir.Push):
            roots.update(ir.names_read(st))
        elif not isinstance(st, ir.Comment):
            for f in ("cond", "start", "stop", "step"):
                v = getattr(st, f, None)
                if isinstance(v, Var):
                    roots.add(v.name)
            for f in ("body", "orelse", "cond_body"):
                _mark(getattr(st, f, None) or [], defs, roots)


def _live(body, outs):
    """Names whose value reaches an output or an effect (copy cycles of loop joins that
    nothing else reads are not live)."""
    defs, roots = {}, {o.name for o in outs if isinstance(o, Var)}
    _mark(body, defs, roots)
    live, work = set(), list(roots)
    while work:
        n = work.pop()
        if n in live:
            continue
        live.add(n)
        work.extend(defs.get(n, ()))
    return live


def _drop(stmts, live):
    kept, dropped = [], False
    for st in stmts:
        if _removable(st) and st.out not in live:
            dropped = True
            continue
        if isinstance(st, ir.If):
            body, d1 = _drop(st.body, live)
            orelse, d2 = _drop(st.orelse, live)
            st = ir.If(st.cond, body, orelse, st.loc)
            dropped |= d1 or d2
        elif isinstance(st, ir.ForRange):
            body, d = _drop(st.body, live)
            st = ir.ForRange(st.var, st.start, st.stop, st.step, body, st.loc)
            dropped |= d
        elif isinstance(st, ir.While):
            cond_body, d1 = _drop(st.cond_body, live)
            body, d2 = _drop(st.body, live)
            st = ir.While(cond_body, st.cond, body, st.loc)
            dropped |= d1 or d2
        kept.append(st)
    return kept, dropped


def drop_dead_values(body, outs):
    """body without the pure equations (at any depth) whose results nothing reads."""
    body, _ = _drop(body, _live(body, outs))
    return body
