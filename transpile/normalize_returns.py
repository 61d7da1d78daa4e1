"""Early returns: `if c: return a` followed by more code becomes an if/else.

The statements after an `if` that returns on one of its paths run only on the paths that did
not return, so they are appended to each branch of that `if` (the rest of the function becomes
the other branch). The normalizer then sees an ordinary if/else whose paths all return: a static
condition picks a branch, a data condition becomes an `If` statement (a select under vmap).
A return inside a loop is refused by the loop's own normalization (with the user's line).
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


def fold_early_returns(stmts):
    """stmts with each `if` that may return followed by more statements rewritten so that the
    statements after it sit at the end of its branches."""
    for k, st in enumerate(stmts):
        if isinstance(st, gast.Return):
            return stmts[:k + 1]                   # code after a return never runs
        rest = stmts[k + 1:]
        if rest and isinstance(st, gast.If) and contains_return(st.body + st.orelse):
            new = gast.If(test=st.test, body=list(st.body) + list(rest),
                          orelse=list(st.orelse or []) + list(rest))
            gast.copy_location(new, st)
            return list(stmts[:k]) + [new]
    return stmts
