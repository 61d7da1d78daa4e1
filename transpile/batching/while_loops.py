"""A `while` whose condition depends on the mapped axis, batched with an active mask.

Each example stops at its own trip count. The batched loop runs while any example is still
active; the body runs for every example, and each name the body writes keeps its old value for
the examples that have stopped (np.where on the mask, through the sweep's `if` on a batched
value):

    active = True (per example)
    while True:
        <condition code>
        going = np.logical_and(active, cond)
        if not rt.batch_any(going): break
        if going: <body>              # batched if: both sides, then np.where
        active = going

Only for loops whose code can run for every example (no break/continue, no nested loop on
batched data, no reverse-mode tape); the others fall back to a loop over the batch."""
from transpile.core import ir
from transpile.core.ir import Const, Eqn, Var
from transpile.primitives import by_name


def can_mask(st, safe, tapes_used):
    return safe(st.cond_body) and safe(st.body) and not tapes_used([st])


def masked_while(sweep, st):
    """The masked form of `st` (an ir.While), to be batched by the sweep in its place."""
    namer = sweep.namer
    active = namer.fresh("active")
    going = namer.fresh("going")
    any_going = namer.fresh("any_going")
    sweep.own_any.add(any_going)
    sweep.bld.loc = st.loc
    init = sweep.emit("batch_broadcast", {"x": Const(True), "size": sweep.B}, base=active,
                      rank=0)
    sweep.bools.add(init.name)
    start = [Eqn(active, by_name("assign"), {"x": init}, st.loc)]
    cond_body = list(st.cond_body) + [
        Eqn(going, by_name("logical_and"), {"x": Var(active), "y": st.cond}, st.loc),
        Eqn(any_going, by_name("batch_any"), {"going": Var(going)}, st.loc)]
    body = [ir.If(Var(going), list(st.body), [], st.loc),
            Eqn(active, by_name("assign"), {"x": Var(going)}, st.loc)]
    return start, ir.While(cond_body, Var(any_going), body, st.loc)
