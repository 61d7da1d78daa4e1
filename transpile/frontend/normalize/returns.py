"""Early returns: `if c: return a` followed by more code becomes an if/else.

The statements after an `if` that returns on one of its paths run only on the paths that did
not return, so they are appended to each branch of that `if` (the rest of the function becomes
the other branch). The normalizer then sees an ordinary if/else whose paths all return: a static
condition picks a branch, a data condition becomes an `If` statement (a select under vmap).
A return inside a loop becomes a flag and a break: `result = v; returned = True; break`, and
after the loop `if returned: return result` (folded like any early return); inside a loop
nested in others, each enclosing loop breaks after it on the flag. The result starts as a
placeholder (frontend/normalize/values.py), which takes the value returned without a copy on
the other paths, so any value (numbers, arrays, tuples of them) may be returned from inside
loops (a loop whose returns are all bare needs no result).
A function that returns on some path and may run off its end gets its implicit `return None`
written out (with_final_return), so a bare `return` under an `if` on data meets a return on
the other path. A loop's `else` clause that returns, breaks or continues an enclosing loop is
lifted: `no_break = True`, the loop (its own breaks clear the flag), `if no_break: ...`.
"""
import copy

import gast

from transpile.frontend.normalize.values import PLACEHOLDER_MARK


# the name of a value returned from inside a loop (set right before the loop breaks)
RESULT_PREFIX = "_result_"


def contains_return(stmts):
    """Whether a return occurs in these statements outside nested functions/lambdas/loops."""
    for st in stmts:
        if isinstance(st, gast.Return):
            return True
        if isinstance(st, gast.If) and (contains_return(st.body) or contains_return(st.orelse)):
            return True
    return False


def with_final_return(stmts):
    """A function body that returns on some path and may run off its end: the implicit
    `return None` written out, so that an early bare `return` under an `if` on data meets a
    return on the other path."""
    stmts = list(stmts)
    if stmts and _loop_returns(stmts) and not isinstance(stmts[-1], gast.Return):
        stmts.append(gast.copy_location(gast.Return(value=None), stmts[-1]))
    return stmts


def _loop_returns(stmts):
    """Whether a return occurs in these loop-body statements (ifs and nested loops included)."""
    for st in stmts:
        if isinstance(st, gast.Return):
            return True
        if isinstance(st, gast.If) and (_loop_returns(st.body) or _loop_returns(st.orelse)):
            return True
        if isinstance(st, (gast.For, gast.While)) and _loop_returns(st.body):
            return True
    return False


def _name(id_, ctx, node):
    return gast.copy_location(gast.Name(id=id_, ctx=ctx, annotation=None, type_comment=None),
                              node)


def _assign(target, value, node):
    return gast.copy_location(gast.Assign(targets=[_name(target, gast.Store(), node)],
                                          value=value, type_comment=None), node)


def _returns_to_breaks(stmts, flag, result):
    out = []
    for st in stmts:
        if isinstance(st, gast.Return):
            if result is not None:
                value = st.value if st.value is not None else \
                    gast.Constant(value=None, kind=None)
                out.append(_assign(result, value, st))
            out += [_assign(flag, gast.copy_location(gast.Constant(value=True, kind=None), st), st),
                    gast.copy_location(gast.Break(), st)]
            return out
        if isinstance(st, gast.If):
            st = gast.copy_location(gast.If(test=st.test,
                                            body=_returns_to_breaks(st.body, flag, result),
                                            orelse=_returns_to_breaks(st.orelse, flag, result)),
                                    st)
        elif isinstance(st, (gast.For, gast.While)) and (_loop_returns(st.body) or
                                                          _loop_returns(st.orelse)):
            # a loop nested in the loop: its returns break it, then this loop breaks too
            # (a break in its else clause belongs to this loop already)
            inner = copy.copy(st)
            inner.body = _returns_to_breaks(st.body, flag, result)
            inner.orelse = _returns_to_breaks(st.orelse, flag, result)
            out.append(inner)
            out.append(gast.copy_location(gast.If(test=_name(flag, gast.Load(), st),
                                                  body=[gast.copy_location(gast.Break(), st)],
                                                  orelse=[]), st))
            continue
        out.append(st)
    return out


def _lift_loop_return(st):
    """[flag = False, result = 0.0, loop with breaks, if flag: return result] (no result when
    every return in the loop is a bare `return`)."""
    tag = getattr(st, "lineno", 0)
    flag, result = f"_returned_{tag}", f"{RESULT_PREFIX}{tag}"
    if _only_bare_returns([st]):
        result = None               # `return` in a loop of a function returning None
    body = _returns_to_breaks(st.body, flag, result)
    if isinstance(st, gast.For):
        loop = gast.For(target=st.target, iter=st.iter, body=body, orelse=st.orelse,
                        type_comment=None)
    else:
        loop = gast.While(test=st.test, body=body, orelse=st.orelse)
    gast.copy_location(loop, st)
    false = gast.copy_location(gast.Constant(value=False, kind=None), st)
    # the result exists before the loop only to be joined; it is read only once a return set it
    zero = gast.copy_location(gast.Constant(value=PLACEHOLDER_MARK, kind=None), st)
    ret = gast.copy_location(gast.Return(value=None if result is None else
                                         _name(result, gast.Load(), st)), st)
    forever = isinstance(st, gast.While) and isinstance(st.test, gast.Constant) and \
        st.test.value is True and not _breaks(st.body)
    after = ret if forever else gast.If(test=_name(flag, gast.Load(), st), body=[ret], orelse=[])
    start = [_assign(flag, false, st)] + ([] if result is None else [_assign(result, zero, st)])
    return start + [loop, gast.copy_location(after, st)]


def _lift_loop_else(st):
    """for/while ... else: with a return in it: [no_break = True, the loop (each of its own
    breaks clears the flag first), if no_break: the else clause], so that the returns fold
    like any other."""
    flag = f"_no_break_{getattr(st, 'lineno', 0)}"
    loop = copy.copy(st)
    loop.body = _flag_breaks(st.body, flag)
    loop.orelse = []
    true = gast.copy_location(gast.Constant(value=True, kind=None), st)
    after = gast.copy_location(gast.If(test=_name(flag, gast.Load(), st), body=list(st.orelse),
                                       orelse=[]), st)
    return [_assign(flag, true, st), loop, after]


def lift_jumping_elses(stmts):
    """A loop body whose inner loops' else clauses break or continue this loop (`for j ...:
    ... else: continue`), with those loops lifted (the flag form of _lift_loop_else), so that
    the jumps belong to this loop's body."""
    out = []
    for st in stmts:
        if isinstance(st, (gast.For, gast.While)) and st.orelse and _jumps(st.orelse):
            out += _lift_loop_else(st)
        elif isinstance(st, gast.If):
            out.append(gast.copy_location(gast.If(test=st.test,
                                                  body=lift_jumping_elses(st.body),
                                                  orelse=lift_jumping_elses(st.orelse)), st))
        else:
            out.append(st)
    return out


def _jumps(stmts):
    """Whether these statements break or continue an enclosing loop (`for ...: ... else:
    continue` inside another loop: the nested-break idiom)."""
    for st in stmts:
        if isinstance(st, (gast.Break, gast.Continue)):
            return True
        if isinstance(st, gast.If) and (_jumps(st.body) or _jumps(st.orelse)):
            return True
    return False


def _flag_breaks(stmts, flag):
    """stmts with `flag = False` before each break of their loop (not of nested loops)."""
    out = []
    for st in stmts:
        if isinstance(st, gast.Break):
            false = gast.copy_location(gast.Constant(value=False, kind=None), st)
            out += [_assign(flag, false, st), st]
            continue
        if isinstance(st, gast.If):
            st = gast.copy_location(gast.If(test=st.test, body=_flag_breaks(st.body, flag),
                                            orelse=_flag_breaks(st.orelse, flag)), st)
        out.append(st)
    return out


def _only_bare_returns(stmts):
    """Whether every return in these statements (nested functions aside) returns None."""
    todo = list(stmts)
    while todo:
        n = todo.pop()
        if isinstance(n, (gast.FunctionDef, gast.Lambda)):
            continue
        if isinstance(n, gast.Return) and n.value is not None and not (
                isinstance(n.value, gast.Constant) and n.value.value is None):
            return False
        todo.extend(gast.iter_child_nodes(n))
    return True


def _breaks(stmts):
    """Whether the user's loop body breaks out of this loop (outside nested loops)."""
    for st in stmts:
        if isinstance(st, gast.Break):
            return True
        if isinstance(st, gast.If) and (_breaks(st.body) or _breaks(st.orelse)):
            return True
    return False


def fold_early_returns(stmts):
    """stmts with each `if` that may return followed by more statements rewritten so that the
    statements after it sit at the end of its branches."""
    for k, st in enumerate(stmts):
        if isinstance(st, (gast.For, gast.While)) and st.orelse and (
                _loop_returns(st.orelse) or _loop_returns(st.body) or _jumps(st.orelse)):
            lifted = _lift_loop_else(st)
            return fold_early_returns(list(stmts[:k]) + lifted + list(stmts[k + 1:]))
        if isinstance(st, (gast.For, gast.While)) and not st.orelse and _loop_returns(st.body):
            lifted = _lift_loop_return(st)
            return fold_early_returns(list(stmts[:k]) + lifted + list(stmts[k + 1:]))
        if isinstance(st, gast.Return):
            return stmts[:k + 1]                   # code after a return never runs
        rest = stmts[k + 1:]
        if rest and isinstance(st, gast.If) and contains_return(st.body + st.orelse):
            new = gast.If(test=st.test, body=list(st.body) + list(rest),
                          orelse=list(st.orelse or []) + list(rest))
            gast.copy_location(new, st)
            return list(stmts[:k]) + [new]
    return stmts
