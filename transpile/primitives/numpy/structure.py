"""Shape and indexing primitives: they move elements around without arithmetic, so every one
is linear and its reverse rule moves the cotangent back."""
import operator

import numpy as np

from transpile.primitives.batching import rules as BR
from transpile.primitives import scalar_forms as SF, numba_forms as NF
from transpile.primitives.registry import defmethod, defprim

S = BR.structure

getitem = defprim("getitem", operator.getitem, "rt.getitem", "x, index", op="getitem", batch=BR.index,
                  linear=("x",), vjp={"x": "rt.getitem_vjp(g, x, index)"},
                  shape_safe=True, view="index",
                  construct="subscript")
transpose = defprim("transpose", np.transpose, "np.transpose", "x, axes=None", batch=S,
                    linear=("x",), vjp={"x": "rt.transpose_back(g, axes)"},
                    array_result=True, view="transpose")
reshape = defprim("reshape", np.reshape, "np.reshape", "x, shape", batch=S, linear=("x",),
                  vjp={"x": "np.reshape(g, np.shape(x))"}, array_result=True, view="reshape")
ravel = defprim("ravel", np.ravel, "np.ravel", "x", batch=S, linear=("x",),
                vjp={"x": "np.reshape(g, np.shape(x))"}, array_result=True, view="reshape")
expand_dims = defprim("expand_dims", np.expand_dims, "np.expand_dims", "x, axis", batch=S,
                      linear=("x",), vjp={"x": "np.reshape(g, np.shape(x))"},
                      array_result=True, view="axes")
squeeze = defprim("squeeze", np.squeeze, "np.squeeze", "x, axis=None", batch=S, linear=("x",),
                  vjp={"x": "np.reshape(g, np.shape(x))"}, array_result=True, view="axes")
atleast_1d = defprim("atleast_1d", np.atleast_1d, "np.atleast_1d", "x", batch=S, linear=("x",),
                     vjp={"x": "np.reshape(g, np.shape(x))"}, array_result=True, view="opaque")
atleast_2d = defprim("atleast_2d", np.atleast_2d, "np.atleast_2d", "x", batch=S, linear=("x",),
                     vjp={"x": "np.reshape(g, np.shape(x))"}, array_result=True, view="opaque")
swapaxes = defprim("swapaxes", np.swapaxes, "np.swapaxes", "x, axis1, axis2", batch=S,
                   linear=("x",), vjp={"x": "np.swapaxes(g, axis1, axis2)"}, view="opaque")
moveaxis = defprim("moveaxis", np.moveaxis, "np.moveaxis", "x, source, destination", batch=S,
                   linear=("x",), vjp={"x": "np.moveaxis(g, destination, source)"}, view="opaque")
broadcast_to = defprim("broadcast_to", np.broadcast_to, "np.broadcast_to", "x, shape", batch=S,
                       linear=("x",), vjp={"x": "rt.unbroadcast(g, x)"},
                       array_result=True, view="opaque", numba=NF.diagonal)
# (the items' values never decide the result's shape: np.stack((0, n, n + 1)) of counts)
concatenate = defprim("concatenate", np.concatenate, "np.concatenate", "arrays, axis=0", batch=S,
                      linear=("arrays",), vjp={"arrays": "rt.concat_vjp(g, arrays, k, axis)"},
                      array_result=True, fresh=True, sized_by=("axis",))
stack = defprim("stack", np.stack, "np.stack", "arrays, axis=0", batch=S, linear=("arrays",),
                vjp={"arrays": "rt.take_axis(g, k, axis)"}, array_result=True, fresh=True,
                sized_by=("axis",))
array = defprim("array", [np.array, np.asarray, np.asanyarray], "np.asarray", "x, dtype=None",
                batch=S, linear=("x",), vjp={"x": "rt.cast_like(g, x)"},
                array_result=True, view="same", sized_by=())   # (np.array([k, p]): 2 items)
# the array itself where it is C-contiguous, else a contiguous copy (Numba's own)
ascontiguousarray = defprim("ascontiguousarray", np.ascontiguousarray, "np.ascontiguousarray",
                            "x", batch=S, linear=("x",), vjp={"x": "g"}, array_result=True,
                            view="reshape", shape_safe=True,
                            numba=lambda lw, eqn: f"np.ascontiguousarray({lw.fmt(eqn.args['x'])})"
                            if lw.av(eqn.args["x"]) is not None and lw.av(eqn.args["x"]).ndim
                            else None)
copy = defprim("copy", np.copy, "np.copy", "x", batch=S, linear=("x",), vjp={"x": "g"},
               array_result=True, fresh=True, shape_safe=True)
astype = defprim("astype", None, "rt.astype", "x, dtype", batch=BR.elementwise, linear=("x",),
                 vjp={"x": "rt.cast_like(g, x)"}, shape_safe=True, fresh=True,
                 lower="{x}", cuda_c=SF.c_text("{x}"), numba_cuda=SF.py_text("{x}"),
                 operands=("x",))
tile = defprim("tile", np.tile, "np.tile", "x, reps", batch=S, linear=("x",),
               vjp={"x": "rt.tile_vjp(g, x, reps)"}, numba=NF.tile, array_result=True)
diagonal = defprim("diagonal", np.diagonal, "np.diagonal", "x, offset=0, axis1=0, axis2=1",
                   batch=S, linear=("x",), vjp={"x": "rt.diagonal_vjp(g, x, offset, axis1, axis2)"},
                   array_result=True, view="opaque", numba=NF.diagonal)
# (dtype and out: np.linalg.trace's NumPy source passes them)
trace = defprim("trace", np.trace, "np.trace",
                "x, offset=0, axis1=0, axis2=1, dtype=None, out=None", batch=S, linear=("x",),
                vjp={"x": "rt.diagonal_vjp(rt.expand_last(g), x, offset, axis1, axis2)"},
                numba=NF.trace)

defmethod("T", transpose)          # attribute x.T
defmethod("transpose", transpose)
defmethod("reshape", reshape)
defmethod("ravel", ravel)
defmethod("flatten", ravel)
defmethod("squeeze", squeeze)
defmethod("swapaxes", swapaxes)
defmethod("astype", astype)
defmethod("copy", copy)
defmethod("diagonal", diagonal)
defmethod("trace", trace)
