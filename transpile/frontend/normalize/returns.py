"""Early returns: `if c: return a` followed by more code becomes an if/else.

The statements after an `if` that returns on one of its paths run only on the paths that did
not return, so they are appended to each branch of that `if` (the rest of the function becomes
the other branch). The normalizer then sees an ordinary if/else whose paths all return: a static
condition picks a branch, a data condition becomes an `If` statement (a select under vmap).
A return inside a loop becomes a flag and a break: `result = v; returned = True; break`, and
after the loop `if returned: return result` (folded like any early return). The result starts
as 0.0, so a loop that returns a tuple or list from inside refuses (structures differ).
"""
import gast


def contains_return(stmts):
    """Whether a return occurs in these statements outside nested functions/lambdas/loops."""
    for st in stmts:
        if isinstance(st, gast.Return):
            return True
        if isinstance(st, gast.If) and (contains_return(st.body) or contains_return(st.orelse)):
            return True
    return False


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
            value = st.value if st.value is not None else gast.Constant(value=None, kind=None)
            out += [_assign(result, value, st),
                    _assign(flag, gast.copy_location(gast.Constant(value=True, kind=None), st), st),
                    gast.copy_location(gast.Break(), st)]
            return out
        if isinstance(st, gast.If):
            st = gast.copy_location(gast.If(test=st.test,
                                            body=_returns_to_breaks(st.body, flag, result),
                                            orelse=_returns_to_breaks(st.orelse, flag, result)),
                                    st)
        elif isinstance(st, (gast.For, gast.While)) and _loop_returns(st.body):
            raise NestedLoopReturn(st)
        out.append(st)
    return out


class NestedLoopReturn(Exception):
    """A return inside a loop nested in a loop: refused (the normalizer names the line)."""

    def __init__(self, node):
        super().__init__("return inside a nested loop")
        self.node = node


def _lift_loop_return(st):
    """[flag = False, result = 0.0, loop with breaks, if flag: return result]."""
    tag = getattr(st, "lineno", 0)
    flag, result = f"_returned_{tag}", f"_result_{tag}"
    body = _returns_to_breaks(st.body, flag, result)
    if isinstance(st, gast.For):
        loop = gast.For(target=st.target, iter=st.iter, body=body, orelse=st.orelse,
                        type_comment=None)
    else:
        loop = gast.While(test=st.test, body=body, orelse=st.orelse)
    gast.copy_location(loop, st)
    false = gast.copy_location(gast.Constant(value=False, kind=None), st)
    zero = gast.copy_location(gast.Constant(value=0.0, kind=None), st)
    ret = gast.copy_location(gast.Return(value=_name(result, gast.Load(), st)), st)
    forever = isinstance(st, gast.While) and isinstance(st.test, gast.Constant) and \
        st.test.value is True and not _breaks(st.body)
    after = ret if forever else gast.If(test=_name(flag, gast.Load(), st), body=[ret], orelse=[])
    return [_assign(flag, false, st), _assign(result, zero, st), loop,
            gast.copy_location(after, st)]


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
