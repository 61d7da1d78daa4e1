"""Liveness on core Python: which names a statement's successors still read.

`live_after(body, outs)` -> {id(stmt): names live right after it}, for every statement
(nested ones included), by backward dataflow over `If`, `ForRange` and `While` (to a fixed
point around loops). transforms/inplace.py (writes in place, `del`), transforms/tidy.py
(dead copies), tape_slim.py and reverse_control.py read it.
"""
from transpile import ir
from transpile.ir import Eqn, Var


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
        else:
            live = live | _reads(st)
    return live
