"""Loops that leave at their `break`, for jit.

The normalizer turns `break` into a flag (frontend/normalize/loops.py lower_jumps): the loop
runs all its iterations, and each one after the break skips the body (`if not _break: ...`)
and carries its values unchanged. The derivative transforms need that shape; compiled code
does not, and a search that stops at item k of n paid for all n iterations (the corpus'
first_row_above ran 19x slower than numba.njit). Here a range loop whose later iterations
provably do nothing gets `if _break: break` at the end of its body.

"Provably nothing", checked on the statements an iteration runs once the flag is set: the
guard (`not flag`, or `not (flag or continue_flag)`), reads of the loop's item
(`_item = x[k]`, which cannot raise inside the loop's range), and copies; the copies must
leave every name the loop carries with the value it had at the top of the iteration, and the
names they set otherwise are read nowhere outside the loop. Only functions without tapes (a
reverse pass reads what every forward iteration saved) and flags that are scalars (vmap's
batched flags are arrays) qualify.
"""
from transpile.core import ir
from transpile.core.ir import Eqn, Var
from transpile.primitives import by_name
from transpile.primitives.internal.control import assign, tape_new, tape_pop
from transpile.primitives.numpy.nondiff import logical_not
from transpile.primitives.numpy.structure import getitem

logical_or = by_name("logical_or")
_SKIP_ROWS = (assign, getitem, logical_not, logical_or)


def leave_loops_early(body, avals):
    """`body` with `if flag: break` at the end of the range loops that qualify."""
    if _has_tape(body):
        return body

    def rewrite(stmts):
        out = []
        for st in stmts:
            if isinstance(st, ir.If):
                st = ir.If(st.cond, rewrite(st.body), rewrite(st.orelse), st.loc)
            elif isinstance(st, ir.While):
                st = ir.While(rewrite(st.cond_body), st.cond, rewrite(st.body), st.loc)
            elif isinstance(st, ir.ForRange):
                inner = rewrite(st.body)
                flag = _leaving_flag(inner, st.var, avals, _reads_outside(body, st))
                if flag is not None:
                    inner = inner + [ir.If(Var(flag), [ir.Break(st.loc)], [], st.loc)]
                st = ir.ForRange(st.var, st.start, st.stop, st.step, inner, st.loc)
            out.append(st)
        return out
    return rewrite(body)


def _has_tape(stmts):
    for st in stmts:
        if isinstance(st, ir.Push):
            return True
        if isinstance(st, Eqn) and st.prim in (tape_new, tape_pop):
            return True
        for f in ("body", "orelse", "cond_body"):
            if _has_tape(getattr(st, f, None) or []):
                return True
    return False


def _reads_outside(body, loop):
    """Names read anywhere in the function except inside `loop` (its bounds included)."""
    names = set()

    def walk(stmts):
        for st in stmts:
            if isinstance(st, (Eqn, ir.Push)):
                names.update(ir.names_read(st))
                continue
            # (a statement's own reads: its condition or bounds; its bodies are walked)
            names.update(v.name for v in (getattr(st, f, None) for f in
                                          ("cond", "start", "stop", "step"))
                         if isinstance(v, Var))
            if st is not loop:
                for f in ("body", "orelse", "cond_body"):
                    walk(getattr(st, f, None) or [])
    walk(body)
    return names


def _guard(stmts, defs):
    """(index of the guarding If, the flag whose truth skips it) or None: an If whose condition
    is `not flag` or `not (flag or other)`."""
    for k, st in enumerate(stmts):
        if not isinstance(st, ir.If) or not isinstance(st.cond, Var):
            continue
        neg = defs.get(st.cond.name)
        if neg is None or neg.prim is not logical_not or not isinstance(neg.args["x"], Var):
            continue
        inner = neg.args["x"].name
        either = defs.get(inner)
        if either is not None and either.prim is logical_or:
            x = either.args.get("x")
            return (k, x.name) if isinstance(x, Var) else None
        return k, inner
    return None


def _leaving_flag(stmts, loop_var, avals, read_outside):
    defs = {st.out: st for st in stmts if isinstance(st, Eqn)}
    found = _guard(stmts, defs)
    if found is None:
        return None
    k, flag = found
    # the names the loop carries: the copies after the guarded body (`v = assign(v_5)`)
    carried = {st.out for st in stmts[k + 1:] if isinstance(st, Eqn)}
    av = avals.get(flag)
    if av is None or av.shape or flag not in carried or loop_var in read_outside:
        return None
    # an iteration once the flag is set runs everything but the guarded body
    value = {}          # name -> the name (as at the top of the iteration) it holds, or None
    for st in stmts[:k] + stmts[k].orelse + stmts[k + 1:]:
        if isinstance(st, ir.Comment):
            continue
        if not isinstance(st, Eqn) or st.prim not in _SKIP_ROWS:
            return None
        x = st.args.get("x")
        if st.prim is assign and isinstance(x, Var):
            value[st.out] = value.get(x.name, x.name)
        else:
            value[st.out] = None        # a read, a test or a constant: a new value
    for name, held in value.items():
        if name in carried:
            if held != name:
                return None
        elif name in read_outside:
            return None
    return flag
