"""jit's pass order, in one place: core Python (after every transform) -> the body a backend
lowers.

    split_tapes        a loop's tape per value, so each can be dropped on its own (ad/)
    specialize         fold what the argument shapes decide; runtime helpers become plain
                       NumPy (optimize/specialize.py)
    drop_dead_values   (again after the next two: dead copies hide single reads from them)
    scatter_adds       `a = a + rt.getitem_vjp(...)` becomes a scatter-add into a (ad/)
    reads_before_writes, drop_dead_tapes
    leave_loops_early  a range loop whose iterations after a `break` do nothing leaves there
    checks_before_loops  a loop reading x[i] over range(n) checks n once before it, where
                       that lets the arguments be written in place (optimize/no_raise.py)
    copies_on_entry    an argument a loop writes into is copied once before the loop
                       (unless it may be written in place: optimize/no_raise.py)
    in_place_writes    which subscript writes may reuse their array (optimize/inplace.py);
                       the arguments' own buffers too where nothing can raise after their
                       first write (optimize/no_raise.py)
    fuse               elementwise chains and reductions -> loops (optimize/fusion.py); a
                       loop whose result is written in place into a slice writes it there,
                       and one computing an argument's final value writes into the argument
"""
from transpile.ad.accumulate import reads_before_writes, scatter_adds
from transpile.ad.tape_split import drop_dead_tapes, split_tapes
from transpile.optimize.dead_code import drop_dead_values
from transpile.optimize.early_exit import leave_loops_early
from transpile.optimize.fusion import (fuse, store_final_values, store_into_destinations,
                                       store_into_dying_inputs)
from transpile.optimize.inplace import copies_on_entry, in_place_writes, sources
from transpile.optimize.no_raise import checks_before_loops, owned_arguments
from transpile.optimize.specialize import specialize


def optimized_body(core, avals, params):
    """(body, outs, avals by name, ids of the writes done in place, the arguments written in
    place) for these argument avals;
    `params`: the names whose buffers come from outside (arguments, static arrays)."""
    body, outs, av = specialize(split_tapes(core), avals)
    body = drop_dead_values(body, outs)
    body = drop_dead_tapes(reads_before_writes(scatter_adds(body, outs, av)), outs)
    body = drop_dead_values(body, outs)
    body = leave_loops_early(body, av)
    scalars = {n for n, a in av.items() if a is not None and not a.shape}
    owned = owned_arguments(body, av, params)
    if not owned:       # reads at a loop's variable checked once before the loop, if that helps
        checked, proved = checks_before_loops(body, av)
        owned = owned_arguments(checked, av, params, proved) if proved else set()
        body = checked if owned else body
    # an argument a loop writes into: copied once before the loop, not on every iteration
    body = copies_on_entry(body, params, owned)
    in_place = in_place_writes(body, params, outs, scalars=scalars, owned=owned)
    src = sources(body, params, scalars, owned, in_place)[0]
    body = store_into_destinations(fuse(body, av, outs, in_place), outs, src, in_place, av)
    body = store_final_values(body, outs, src, av)
    body = store_into_dying_inputs(body, outs, src, av, params)
    return body, outs, av, in_place, owned
