"""Collectives inside pmap (runtime/collectives.py). Each shard's output depends on every
shard's input, so the adjoint of a sum over shards is again a sum over shards."""
from transpile_runtime import collectives as C
from transpile.primitives.registry import defprim

psum = defprim("psum", C.psum, "rt.psum", "x, axis_name", batch="collective", pure=False, linear=("x",),
               vjp={"x": "rt.psum(g, axis_name)"})
pmean = defprim("pmean", C.pmean, "rt.pmean", "x, axis_name", batch="collective", pure=False,
                linear=("x",), vjp={"x": "rt.pmean(g, axis_name)"})
_SHARE = "rt.extremum_share(x, ans, axis_name)"
pmax = defprim("pmax", C.pmax, "rt.pmax", "x, axis_name", batch="collective", pure=False,
               vjp={"x": f"rt.psum(g, axis_name) * {_SHARE}"},
               jvp={"x": f"rt.psum(x_dot * {_SHARE}, axis_name)"})
pmin = defprim("pmin", C.pmin, "rt.pmin", "x, axis_name", batch="collective", pure=False,
               vjp={"x": f"rt.psum(g, axis_name) * {_SHARE}"},
               jvp={"x": f"rt.psum(x_dot * {_SHARE}, axis_name)"})
all_gather = defprim("all_gather", C.all_gather, "rt.all_gather", "x, axis_name, *, axis=0, tiled=False",
                     batch="collective", pure=False, linear=("x",),
                     vjp={"x": "rt.all_gather_vjp(g, axis_name, axis, tiled)"})
all_gather_vjp = defprim("all_gather_vjp", C.all_gather_vjp, "rt.all_gather_vjp",
                         "ct, axis_name, axis=0, tiled=False", batch="collective", pure=False,
                         linear=("ct",), vjp={"ct": "rt.all_gather(g, axis_name, axis=axis, tiled=tiled)"})
axis_index = defprim("axis_index", C.axis_index, "rt.axis_index", "axis_name", batch="collective", pure=False,
                     nondiff=True)
axis_size = defprim("axis_size", C.axis_size, "rt.axis_size", "axis_name", batch="collective", pure=False,
                    nondiff=True)
extremum_share = defprim("extremum_share", C.extremum_share, "rt.extremum_share",
                         "x, ans, axis_name", batch="collective", pure=False, nondiff=True)
