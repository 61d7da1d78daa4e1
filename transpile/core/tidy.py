"""Printed code a person would write: moves and stores that only the way the code was
generated needed (optimize/inplace.py runs this on the body it prints).

Reverse mode gives every adjoint that control flow touches one fixed name, resets it to 0.0
once the statement that bound its primal has been processed, and adds the first contribution
to that zero (`d = rt.added_to_zero(c)`, see inplace.adds_to_zero). Most of those statements
say nothing:

  * `d = 0.0` (any copy `a = b`) whose value nothing reads before `d` is bound again goes
    (the block of resets before a backward loop whose every path writes them first; the
    `s_result = s` copy of a value grad does not return);
  * `a = rt.added_to_zero(c)` or `a = c`, where c is a temporary made earlier in the same block
    and read only there, becomes the statement that made c, bound to `a`
    (`da = rt.unbroadcast(g, x)`);
  * `a = rt.added_to_zero(c)` or `a = c`, where that value of `a` is read only further down
    its block, before c is bound again: those reads read c;
  * a value computed again (`x[i]` in the test of an `if` and in its branch, the product
    `g * y` twice in the adjoint of `y * y`) is the name that holds it (`b = a`, which the
    previous point then folds away): elementwise rows, subscripts and `rt.unbroadcast`.

`rt.added_to_zero(c)` is `0.0 + c`: the same value for an adjoint, which is a float.
"""
from collections import Counter

from transpile.core import ir
from transpile.core.ir import Eqn, Var, map_atoms
from transpile.primitives.internal.adjoint_helpers import unbroadcast
from transpile.primitives.internal.control import added_to_zero, assign
from transpile.primitives.numpy.structure import getitem
from transpile.core.liveness import live_after

_MOVES = (assign, added_to_zero)
_RECOMPUTED = (getitem, unbroadcast)     # besides elementwise rows


def tidy(body, params, outs, rounds=4):
    """The body with dead copies and zero stores dropped and moves folded away."""
    for _ in range(rounds):
        new = _drop_dead_copies(_reuse_values(body), outs)
        new = _coalesce(new, outs)
        new = _propagate(new, params, outs)
        if _same(new, body):
            return new
        body = new
    return body


def common_values(body, params, outs):
    """The primal body of a derivative with subscripts computed again read from the name
    that holds them (before reverse mode decides what goes on the tape: `x[i]` in the test
    of an `if` and in its branch is saved once). Only subscripts: a copy of an array value
    joining branches can hide its shape from jit's specialization."""
    body = _reuse_values(body, subscripts_only=True)
    for _ in range(4):
        new = _propagate(body, params, outs)
        if _same(new, body):
            break
        body = new
    return body


def _same(a, b):
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


def _walk(body):
    for st in body:
        yield st
        for f in ("cond_body", "body", "orelse"):
            yield from _walk(getattr(st, f, None) or [])


def _rebuild(st, fn):
    """st with fn applied to each nested body (a new statement when it has bodies)."""
    if isinstance(st, ir.If):
        parts = (st.body, st.orelse)
    elif isinstance(st, ir.ForRange):
        parts = (st.body,)
    elif isinstance(st, ir.While):
        parts = (st.cond_body, st.body)
    else:
        return st
    new = [fn(p) for p in parts]
    if all(len(a) == len(b) and all(x is y for x, y in zip(a, b)) for a, b in zip(parts, new)):
        return st                       # unchanged: the same statement
    if isinstance(st, ir.If):
        return ir.If(st.cond, new[0], new[1], st.loc)
    if isinstance(st, ir.ForRange):
        return ir.ForRange(st.var, st.start, st.stop, st.step, new[0], st.loc)
    return ir.While(new[0], st.cond, new[1], st.loc)


def _head_reads(st):
    vals = [getattr(st, f, None) for f in ("cond", "start", "stop", "step")]
    return [v.name for v in vals if isinstance(v, Var)]


def _reads(st):
    """Names one statement reads itself (a compound statement: its head only)."""
    if isinstance(st, (Eqn, ir.Push)):
        return ir.names_read(st)
    return _head_reads(st)


def _read_counts(body, outs):
    c = Counter(o.name for o in outs if isinstance(o, Var))
    for st in _walk(body):
        c.update(_reads(st))
    return c


def _is_move(st):
    return isinstance(st, Eqn) and any(st.prim is m for m in _MOVES) and len(st.args) == 1


def _drop_dead_copies(body, outs):
    live = live_after(body, outs)

    def block(stmts):
        return [_rebuild(st, block) for st in stmts
                if not (_is_move(st) and st.out not in live.get(id(st), {st.out}))]
    return block(body)


def _coalesce(body, outs):
    reads = _read_counts(body, outs)
    binds = Counter(ir.bound_names(body))

    def block(stmts):
        out = [_rebuild(st, block) for st in stmts]
        k = 0
        while k < len(out):
            st = out[k]
            c = st.args.get("d", st.args.get("x")) if _is_move(st) else None
            if isinstance(c, Var) and reads[c.name] == 1 and binds[c.name] == 1:
                j = next((i for i in range(k - 1, -1, -1) if isinstance(out[i], Eqn)
                          and out[i].out == c.name), None)
                between = out[j + 1:k] if j is not None else None
                if between is not None and st.out not in _names(between) and \
                        st.out not in out[j].vars_read():
                    d = out[j]
                    out[j] = Eqn(st.out, d.prim, d.args, d.loc)
                    del out[k]
                    continue
            k += 1
        return out
    return block(body)


def _names(stmts):
    names = set(ir.bound_names(stmts))
    for st in _walk(stmts):
        names.update(_reads(st))
    return names


class _Fail(Exception):
    pass


def _propagate(body, params, outs):
    skip = set(params) | {o.name for o in outs if isinstance(o, Var)}
    live = live_after(body, outs)
    touched = set()         # names whose reads a rewrite here changed

    def block(stmts):
        live_out = live.get(id(stmts[-1]), set()) if stmts else set()
        stmts = [_rebuild(st, block) for st in stmts]
        k = 0
        while k < len(stmts):
            st = stmts[k]
            c = st.args.get("d", st.args.get("x")) if _is_move(st) else None
            if isinstance(c, Var) and st.out not in skip and st.out != c.name and \
                    not {st.out, c.name} & touched:
                a, c = st.out, c.name
                state = {"clobbered": False, "done": False, "maybe": False}
                try:
                    rest = _subst(stmts[k + 1:], a, c, state)
                except _Fail:
                    rest = None
                if rest is not None and (state["done"] or a not in live_out):
                    stmts[k:] = rest
                    touched.update((a, c))
                    continue
            k += 1
        return stmts
    return block(body)


def _reads_below(stmts):
    out = set()
    for st in _walk(stmts):
        out.update(_reads(st))
    return out


def _sub_atom(a, c):
    def fn(atom):
        return Var(c) if isinstance(atom, Var) and atom.name == a else atom
    return fn


def _subst(stmts, a, c, state):
    """stmts with the reads of a (until a is bound again) reading c; fails where c may have
    been bound again before such a read, or where a read may see either value of a."""
    fn = _sub_atom(a, c)
    out = []
    for k, st in enumerate(stmts):
        if state["done"]:
            return out + list(stmts[k:])
        reads = _reads(st) if not isinstance(st, (ir.If, ir.ForRange, ir.While)) else []
        if a in reads or a in _head_reads(st):
            if state["clobbered"] or state["maybe"]:
                raise _Fail
        if isinstance(st, Eqn):
            if a in reads:
                st = Eqn(st.out, st.prim, {k2: map_atoms(v, fn) for k2, v in st.args.items()},
                         st.loc)
            if st.out == c:
                state["clobbered"] = True
            if st.out == a:
                state["done"] = True
        elif isinstance(st, ir.Push):
            if a in reads:
                st = ir.Push(fn(st.tape), fn(st.value), st.loc)
        elif isinstance(st, ir.If):
            cond = Var(c) if isinstance(st.cond, Var) and st.cond.name == a else st.cond
            s1, s2 = dict(state), dict(state)
            body, orelse = _subst(st.body, a, c, s1), _subst(st.orelse, a, c, s2)
            state["clobbered"] = s1["clobbered"] or s2["clobbered"]
            state["done"] = s1["done"] and s2["done"]
            state["maybe"] = state["maybe"] or s1["done"] or s2["done"] or s1["maybe"] or \
                s2["maybe"]
            st = ir.If(cond, body, orelse, st.loc)
        elif isinstance(st, (ir.ForRange, ir.While)):
            bound = set(ir.bound_names([st]))
            inside_reads = a in _reads_below(st.body) | _reads_below(
                getattr(st, "cond_body", []))
            if a in _head_reads(st) or (inside_reads and (
                    c in bound or a in bound or state["clobbered"] or state["maybe"])):
                raise _Fail
            if inside_reads:
                st = _rebuild(st, lambda b: _subst(b, a, c, dict(state)))
            state["clobbered"] = state["clobbered"] or c in bound
            state["maybe"] = state["maybe"] or a in bound
        out.append(st)
    return out


def _key(st, subscripts_only=False):
    """What a pure equation computes, as a hashable key (None: not a candidate)."""
    prim = st.prim
    if subscripts_only:
        if prim is not getitem:
            return None
    elif not (prim.pure and (prim.elementwise or any(prim is p for p in _RECOMPUTED))) or \
            _is_move(st):
        return None
    parts = []
    for k, v in st.args.items():
        atoms = list(ir.iter_atoms([v]))
        if any(isinstance(a, ir.Const) and not ir.is_literal(a.value) for a in atoms):
            return None
        parts.append((k, repr(v)))
    return (id(prim), tuple(parts))


def _reuse_values(body, subscripts_only=False):
    """A pure value computed again where the name that holds it is still bound to it
    becomes a copy of that name."""
    def block(stmts, state):
        # avail: key -> the name holding that value; by_name: name -> keys it reads or holds
        avail, by_name = dict(state[0]), dict(state[1])      # (sets never mutated)

        def forget(names):
            for n in names:
                for key in by_name.pop(n, ()):
                    avail.pop(key, None)

        out = []
        for st in stmts:
            if isinstance(st, Eqn):
                key = _key(st, subscripts_only)
                held = avail.get(key) if key is not None else None
                if held is not None and held != st.out:
                    st = Eqn(st.out, assign, {"x": Var(held)}, st.loc)
                forget([st.out])
                if key is not None and st.prim is not assign and st.out not in st.vars_read():
                    avail[key] = st.out
                    for n in {st.out, *st.vars_read()}:
                        by_name[n] = by_name.get(n, frozenset()) | {key}
            elif isinstance(st, ir.If):
                here = (avail, by_name)
                st = ir.If(st.cond, block(st.body, here), block(st.orelse, here), st.loc)
                forget(ir.bound_names([st]))
            elif isinstance(st, (ir.ForRange, ir.While)):
                forget(ir.bound_names([st]))
                here = (avail, by_name)
                st = _rebuild(st, lambda b: block(b, here))
            out.append(st)
        return out
    return block(body, ({}, {}))
