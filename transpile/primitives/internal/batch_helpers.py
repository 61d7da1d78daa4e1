"""Rows for the run-time helpers that batched (vmap) code calls (runtime/batching.py), with
reverse rules so that batched code can be differentiated again (grad of vmap)."""
from transpile_runtime import batching as RB
from transpile.primitives.batching import rules as BR, jacobian as JB
from transpile.core.ir import Const
from transpile.primitives.batching.rules import NoRule, Rule
from transpile.primitives.registry import defprim

_H = BR.batch_helper

batch_broadcast = defprim("batch_broadcast", RB.batch_broadcast, "rt.batch_broadcast", "x, size",
                          batch=_H, linear=("x",), vjp={"x": "np.sum(g, axis=0)"})
batch_align = defprim("batch_align", RB.batch_align, "rt.batch_align", "x, like_ndim, like_batched",
                      batch=_H, linear=("x",), vjp={"x": "np.reshape(g, np.shape(x))"})


def _same_shape_form(lw, eqn):
    """Shapes known equal when the code is generated: x itself (else NumPy raises)."""
    xs, os_ = lw.av(eqn.args["x"]), lw.av(eqn.args["other"])
    if xs is None or os_ is None or (xs.ndim == os_.ndim and xs.shape != os_.shape):
        return None
    return lw.fmt(eqn.args["x"])


batch_same_shape = defprim("batch_same_shape", RB.batch_same_shape, "rt.batch_same_shape",
                           "x, other, where=None", batch=_H, linear=("x",),
                           shape_args=("other",), vjp={"x": "g"}, numba=_same_shape_form)
batch_squeeze = defprim("batch_squeeze", RB.batch_squeeze, "rt.batch_squeeze", "x", batch=_H,
                        linear=("x",), vjp={"x": "np.reshape(g, np.shape(x))"})
batch_unbroadcast = defprim(
    "batch_unbroadcast", RB.batch_unbroadcast, "rt.batch_unbroadcast",
    "ct, x, ct_batched, x_batched", batch=_H, linear=("ct",),
    vjp={"ct": "rt.batch_broadcast_like(g, ct, ct_batched, ct_batched)"})
batch_broadcast_like = defprim(
    "batch_broadcast_like", RB.batch_broadcast_like, "rt.batch_broadcast_like",
    "t, like, t_batched, like_batched", batch=_H, linear=("t",),
    vjp={"t": "rt.batch_unbroadcast(g, t, True, t_batched)"})
batch_sum_grad = defprim(
    "batch_sum_grad", RB.batch_sum_grad, "rt.batch_sum_grad",
    "ct, x, axis, keepdims, ct_batched, x_batched", batch=_H, linear=("ct",),
    vjp={"ct": "rt.batch_sum_grad_vjp(g, ct, axis, keepdims, ct_batched)"})
# The loop fallback writes each example's result into row i of the batched result; these rows
# carry derivatives so that a vmap that fell back to a loop can be differentiated (grad of vmap).
batch_store = defprim("batch_store", RB.batch_store, "rt.batch_store",
                      "parts, i, value, n, where=None",
                      batch=_H, diff=("parts", "value"),
                      vjp={"parts": "rt.batch_without_row(g, i)",
                           "value": "rt.batch_row(g, i, value)"},
                      jvp={"parts": "rt.batch_without_row(parts_dot, i)",
                           "value": "rt.batch_store_tangent(i, value, value_dot, n)"})
batch_stacked = defprim("batch_stacked", RB.batch_stacked, "rt.batch_stacked", "parts, n",
                        batch=_H, linear=("parts",), vjp={"parts": "g"})
batch_store_tangent = defprim("batch_store_tangent", RB.batch_store_tangent,
                              "rt.batch_store_tangent", "i, primal, t, n", batch=_H,
                              diff=("t",), linear=("t",), shape_args=("primal",),
                              vjp={"t": "rt.batch_row(g, i, t)"})
batch_without_row = defprim("batch_without_row", RB.batch_without_row, "rt.batch_without_row",
                            "x, i", batch=_H, linear=("x",),
                            vjp={"x": "rt.batch_without_row(g, i)"})
# row i of a batched cotangent (the way back through batch_store), and its transpose: so that
# a vmap that fell back to a loop can be differentiated twice (hessian of vmap)
batch_row = defprim("batch_row", RB.batch_row, "rt.batch_row", "x, i, like", batch=_H,
                    linear=("x",), shape_args=("like",),
                    vjp={"x": "rt.batch_row_vjp(g, i, x)"})
batch_row_vjp = defprim("batch_row_vjp", RB.batch_row_vjp, "rt.batch_row_vjp", "g, i, x",
                        batch=_H, linear=("g",), shape_args=("x",),
                        vjp={"g": "rt.batch_row(g, i, g)"})
# Jacobians as one generated function: the basis of an argument, columns/rows into J's shape
jac_columns = defprim("jac_columns", RB.jac_columns, "rt.jac_columns", "cols, x",
                      batch=JB.jac_columns,
                      linear=("cols",), shape_args=("x",),
                      vjp={"cols": "rt.jac_columns_vjp(g, cols)"})
jac_columns_vjp = defprim("jac_columns_vjp", RB.jac_columns_vjp, "rt.jac_columns_vjp", "ct, cols",
                          batch=_H, linear=("ct",), shape_args=("cols",),
                          vjp={"ct": "rt.jac_columns_to(g, ct)"})
jac_columns_to = defprim("jac_columns_to", RB.jac_columns_to, "rt.jac_columns_to", "h, like",
                         batch=_H, linear=("h",), shape_args=("like",),
                         vjp={"h": "rt.jac_columns_vjp(g, h)"})
jac_rows = defprim("jac_rows", RB.jac_rows, "rt.jac_rows", "rows, out", batch=JB.jac_rows,
                   linear=("rows",), shape_args=("out",),
                   vjp={"rows": "np.reshape(g, np.shape(rows))"})
basis_like = defprim("basis_like", RB.basis_like, "rt.basis_like", "x", batch=JB.basis_like,
                     nondiff=True)
batch_jac_columns = defprim("batch_jac_columns", RB.batch_jac_columns, "rt.batch_jac_columns",
                            "cols, x, x_batched", batch=_H, linear=("cols",), shape_args=("x",),
                            vjp={"cols": "rt.batch_jac_columns_vjp(g, cols)"})
batch_jac_rows = defprim("batch_jac_rows", RB.batch_jac_rows, "rt.batch_jac_rows",
                         "rows, out, out_batched", batch=_H, linear=("rows",),
                         shape_args=("out",), vjp={"rows": "np.reshape(g, np.shape(rows))"})
batch_getitem_vjp = defprim(
    "batch_getitem_vjp", RB.batch_getitem_vjp, "rt.batch_getitem_vjp",
    "ct, x, index, ct_batched, x_batched", batch=_H, linear=("ct",), shape_args=("x",),
    vjp={"ct": "rt.batch_getitem_vjp_back(g, index, ct_batched)"})
# its transpose, linear in ct (x is ct_batched's batched x: a hessian of a hessian)
batch_getitem_vjp_back = defprim(
    "batch_getitem_vjp_back", RB.batch_getitem_vjp_back, "rt.batch_getitem_vjp_back",
    "ct, index, ct_batched", batch=_H, linear=("ct",),
    vjp={"ct": "rt.batch_getitem_vjp(g, ct, index, ct_batched, True)"})


def _any_batch(s, eqn):
    raise NoRule("rt.batch_any inside a nested vmap")     # loops over the outer batch


# is any example of a batched while loop still running (a bool of the whole batch)
batch_any = defprim("batch_any", RB.batch_any, "rt.batch_any", "going",
                    batch=BR.Rule("helper", _any_batch, lambda s, e: 0), nondiff=True)
# The loop fallback collects per-example results in a Python list: no derivative flows through
# that list, so differentiating it must fail loudly rather than give zeros.
_LOOP_SET = {"opaque": True, "opaque_hint": (
    "grad of a vmap that fell back to a loop over the batch is not supported yet; apply grad "
    "inside the vmap (vmap(grad(f))), or call the vmapped function on arrays outside grad")}
(batch_basis_like, batch_slots, batch_not, batch_parts, batch_set, batch_reduced_count,
 batch_extremum_mask, batch_check_scalar_output, batch_sum_grad_vjp) = [
    defprim(_name, getattr(RB, _name), f"rt.{_name}", _sig, batch=_H, nondiff=True, **_flags)
    for _name, _sig, _flags in [
        ("batch_basis_like", "x", {}), ("batch_slots", "n", {}), ("batch_not", "x", {}),
        ("batch_parts", "n", {"unsafe_in_select": True}),
        ("batch_set", "parts, i, value", {"unsafe_in_select": True, **_LOOP_SET}),
        ("batch_reduced_count", "x, axis=None", {}),
        ("batch_extremum_mask", "x, ans, axis, keepdims, x_batched, ans_batched", {}),
        ("batch_check_scalar_output", "out, fname, holomorphic=False",
         {"unsafe_in_select": True}),
        ("batch_sum_grad_vjp", "g, ct, axis, keepdims, ct_batched", {})]]



def _axes_batch(s, eqn):
    """batch_axes(x) of a value another vmap batches: the same axes, one batch axis more in
    front (unbatched: every example has the same)."""
    outer = eqn.args.get("outer", Const(0))
    s.final("batch_axes", {"x": eqn.args["x"], "outer": Const(outer.value + 1)},
            batched=False, rank=None)


def _shift_batch(s, eqn):
    raise NoRule("a batched axis argument")


batch_axes = defprim("batch_axes", RB.batch_axes, "rt.batch_axes", "x, outer=0",
                     batch=Rule("batch_axes", _axes_batch, lambda s, eqn: None), nondiff=True)
batch_shift_axes = defprim("batch_shift_axes", RB.batch_shift_axes, "rt.batch_shift_axes",
                           "axis", batch=Rule("batch_shift_axes", _shift_batch,
                                              lambda s, eqn: None), nondiff=True)
