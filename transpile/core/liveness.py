"""Liveness over core Python: which names a statement reads, which are live after each
statement (backward dataflow through branches and loops), and dropping equations whose
results are never read. Reverse mode (tape slimming, splitting) and jit's passes
(specialize, in-place reuse) share it."""
from transpile.core import ir
from transpile.core.ir import Eqn, Var


def reads(st):
    """Names a statement reads (control flow: everything inside)."""
    if isinstance(st, Eqn):
        return st.vars_read()
    if isinstance(st, ir.Push):
        return ir.names_read(st)
    if hasattr(st, "vars_read"):        # a fused loop (optimize/fusion.py FusedGroup)
        return st.vars_read()
    names = []
    for f in ("cond", "start", "stop", "step"):
        v = getattr(st, f, None)
        if isinstance(v, Var):
            names.append(v.name)
    for f in ("body", "orelse", "cond_body"):
        for s in getattr(st, f, None) or []:
            names += reads(s)
    return names


def dce(body, outs):
    """Drop equations whose results are never read (all primitives are pure)."""
    live = {o.name for o in outs if isinstance(o, Var)}
    kept = []
    for st in reversed(body):
        if isinstance(st, Eqn):
            if st.out not in live and st.prim.pure:
                continue
            live.update(st.vars_read())
        elif isinstance(st, ir.If) and not dce(st.body, [Var(n) for n in live]) and \
                not dce(st.orelse, [Var(n) for n in live]):
            continue        # (an if whose paths only bind names never read)
        elif not isinstance(st, ir.Comment):
            live.update(reads(st))
        kept.append(st)
    kept.reverse()
    return kept


def _reads(st):
    return set(ir.names_read(st))


def live_after(body, outs, reads=None):
    """{id(stmt): names live right after it}, for every statement (nested ones included).
    `reads(eqn)` (default: every name it reads) says which reads of an equation count."""
    record = {}
    out_names = {o.name for o in outs if isinstance(o, Var)}
    _block(body, set(out_names), record, reads or Eqn.vars_read)
    return record


def _block(stmts, live, record, reads=Eqn.vars_read):
    for st in reversed(stmts):
        record[id(st)] = set(live)
        if isinstance(st, Eqn):
            live = (live - {st.out}) | set(reads(st))
        elif isinstance(st, ir.If):
            a = _block(st.body, live, record, reads)
            b = _block(st.orelse, live, record, reads)
            live = a | b | ({st.cond.name} if isinstance(st.cond, Var) else set())
        elif isinstance(st, ir.ForRange):
            bounds = {a.name for a in (st.start, st.stop, st.step) if isinstance(a, Var)}
            loop_live = set(live)
            while True:
                body_in = _block(st.body, loop_live, record, reads) - {st.var}
                new = live | body_in
                if new <= loop_live:
                    break
                loop_live |= new
            live = loop_live | bounds
        elif isinstance(st, ir.While):
            cond = {st.cond.name} if isinstance(st.cond, Var) else set()
            head_live = set(live)      # live at the top of cond_body
            while True:
                body_in = _block(st.body, head_live, record, reads)
                cond_in = _block(st.cond_body, live | cond | body_in, record, reads)
                if cond_in <= head_live:
                    break
                head_live |= cond_in
            live = head_live
        elif isinstance(st, ir.Push):
            live = live | _reads(st)
        elif isinstance(st, (ir.Break, ir.Continue, ir.Comment)):
            pass
        elif hasattr(st, "vars_read"):  # a fused loop: binds its outputs, reads its inputs
            live = (live - set(st.bound_names())) | set(st.vars_read())
        else:
            live = live | _reads(st)
    return live


def value_reads(st):
    """Names an equation reads for their values (metadata reads and shape arguments aside)."""
    if st.prim.meta:      # only the shape/dtype, which a write in place does not change
        return []
    shape = set(st.prim.shape_args)
    return [a.name for a in ir.iter_atoms(v for k, v in st.args.items() if k not in shape)
            if isinstance(a, Var)]
