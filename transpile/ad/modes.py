"""Entry points of reverse and forward mode: each picks the straight-line sweep
(ad/reverse.py / ad/forward.py) or, when the body has loops, branches or a tape, the control-flow
sweep that extends it (ad/reverse_control.py / ad/forward_control.py). Living above all four, it lets
the control-flow files subclass the sweeps without the sweeps importing them back."""
import copy

from transpile.core import ir as _ir
from transpile.ad.forward import ForwardSweep
from transpile.ad.forward_control import ControlForwardSweep
from transpile.ad.reverse import ReverseSweep
from transpile.ad.reverse_control import ControlReverseSweep
from transpile.core.liveness import reads
from transpile.primitives.internal.control import tape_pop


def reverse_core(core, wrt, *, seed="scalar", fname="f", loss_leaf=0, holomorphic=False):
    """Returns (body, extra cotangent params, gradient atoms, primal output atoms)."""
    if _ir.has_control_flow(core.body) or any(e.prim is tape_pop
                                              for e in _ir.walk_eqns(core.body)):
        rs = ControlReverseSweep(core, wrt)
        rs.holomorphic = holomorphic
        return rs.run(seed, fname, loss_leaf)
    if any(isinstance(st, _ir.Comment) for st in core.body):   # straight-line code with notes
        core = copy.copy(core)
        core.body = [st for st in core.body if not isinstance(st, _ir.Comment)]
    rs = ReverseSweep(core, wrt)
    rs.holomorphic = holomorphic
    extra = []
    if seed == "scalar":
        rs.seed_scalar(rs.outs[loss_leaf], fname)
    else:
        extra = rs.seed_cotangents(rs.outs)
    rs.sweep()
    grads = rs.gradients()
    return rs.b.body, extra, grads, rs.outs


def forward_core(core, wrt):
    """Returns (body, tangent params, primal output atoms, tangent output atoms)."""
    if _ir.has_control_flow(core.body) or any(e.prim is tape_pop
                                              for e in _ir.walk_eqns(core.body)):
        fs = ControlForwardSweep(core, wrt)
        fs.run()
        return fs.b.body, fs.tangent_params, fs.outs, fs.output_tangents()
    fs = ForwardSweep(core, wrt)
    fs.run()
    touts = fs.output_tangents()
    return _drop_unread_refusals(fs.b.body, fs.outs + touts), fs.tangent_params, fs.outs, touts


def _drop_unread_refusals(body, outs):
    """A tangent that has no rule may be a run-time refusal (rt.refuse_norm_third, ...); when
    nothing reads it (an output of a multi-output row that the function does not use), it
    goes, so only the derivatives actually needed are refused."""
    live = {o.name for o in outs if isinstance(o, _ir.Var)}
    kept = []
    for st in reversed(body):
        if isinstance(st, _ir.Eqn) and st.prim.refusal and \
                st.out not in live:
            continue
        live.update(reads(st))
        kept.append(st)
    return kept[::-1]
