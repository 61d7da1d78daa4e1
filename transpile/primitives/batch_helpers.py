"""Rows for the run-time helpers that batched (vmap) code calls (runtime/batching.py), with
reverse rules so that batched code can be differentiated again (grad of vmap)."""
from transpile_runtime import batching as RB
from transpile.primitives import batching_rules as BR
from transpile.primitives.registry import by_name, defprim

_H = BR.batch_helper

batch_broadcast = defprim("batch_broadcast", RB.batch_broadcast, "rt.batch_broadcast", "x, size",
                          batch=_H, linear=("x",), vjp={"x": "np.sum(g, axis=0)"})
batch_align = defprim("batch_align", RB.batch_align, "rt.batch_align", "x, like_ndim, like_batched",
                      batch=_H, linear=("x",), vjp={"x": "np.reshape(g, np.shape(x))"})
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
for _name, _sig in [("batch_axes", "x"), ("batch_parts", "n"), ("batch_set", "parts, i, value"),
                    ("batch_reduced_count", "x, axis=None"),
                    ("batch_extremum_mask", "x, ans, axis, keepdims, x_batched, ans_batched"),
                    ("batch_check_scalar_output", "out, fname, holomorphic=False"),
                    ("batch_sum_grad_vjp", "g, ct, axis, keepdims, ct_batched")]:
    defprim(_name, getattr(RB, _name), f"rt.{_name}", _sig, batch=_H, nondiff=True)

# The loop fallback collects per-example results in a Python list: no derivative flows through
# that list, so differentiating it must fail loudly rather than give zeros.
by_name("batch_set").opaque = True
by_name("batch_set").opaque_hint = (
    "grad of a vmap that fell back to a loop over the batch is not supported yet; apply grad "
    "inside the vmap (vmap(grad(f))), or call the vmapped function on arrays outside grad")
