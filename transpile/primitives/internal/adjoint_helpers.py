"""Rules for the runtime helpers that derivative code calls (runtime/broadcasting.py,
runtime/adjoints.py). With these rows, generated derivatives can be differentiated again."""
from transpile_runtime import adjoints as A, broadcasting as B, helpers as H
from transpile.primitives.batching import rules as BR
from transpile.primitives import scalar_forms as SF, numba_forms as NF
from transpile.primitives.registry import defprim

unbroadcast = defprim("unbroadcast", B.unbroadcast, "rt.unbroadcast", "ct, x", shape_args=("x",), batch=BR.helper,
                      linear=("ct",), vjp={"ct": "rt.broadcast_like(g, ct)"})
broadcast_like = defprim("broadcast_like", B.broadcast_like, "rt.broadcast_like", "t, like",
                         shape_args=("like",), batch=BR.helper, linear=("t",), vjp={"t": "rt.unbroadcast(g, t)"},
                         cuda_c=SF.c_text("{t}"), numba_cuda=SF.py_text("{t}"), operands=("t",),
                         bcast_operand="t")
sum_grad = defprim("sum_grad", B.sum_grad, "rt.sum_grad", "ct, x, axis=None, keepdims=False",
                   shape_args=("x",), batch=BR.helper, linear=("ct",),
                   vjp={"ct": "np.sum(g, axis=axis, keepdims=keepdims)"},
                   cuda_c=SF.c_text("{ct}"), numba_cuda=SF.py_text("{ct}"), operands=("ct",),
                   bcast_operand="ct")
cast_like = defprim("cast_like", B.cast_like, "rt.cast_like", "t, x", shape_args=("x",), batch=BR.helper,
                    linear=("t",), vjp={"t": "rt.cast_like(g, t)"})
grad_like = defprim("grad_like", B.grad_like, "rt.grad_like", "t, x", shape_args=("x",),
                    batch=BR.helper, linear=("t",), vjp={"t": "rt.grad_like(g, t)"})
mT = defprim("mT", B.mT, "rt.mT", "x", batch=BR.helper, linear=("x",), vjp={"x": "rt.mT(g)"},
             numba=NF.mT)
identity = defprim("identity", B.identity, "rt.identity", "x", batch=BR.elementwise,
                   linear=("x",), vjp={"x": "g"}, shape_safe=True,
                   lower="{x}", cuda_c=SF.c_text("{x}"), numba_cuda=SF.py_text("{x}"))
stop_gradient = defprim("stop_gradient", B.stop_gradient, "rt.stop_gradient", "x",
                        batch=BR.elementwise, nondiff=True, shape_safe=True,
                        lower="{x}", cuda_c=SF.c_text("{x}"), numba_cuda=SF.py_text("{x}"))
(reduced_count, extremum_mask, select_weight, clip_mask, transpose_inverse,
 check_scalar_output) = [defprim(_name, _f, f"rt.{_name}", _sig, batch=BR.helper, nondiff=True,
                                 **_fields) for _name, _f, _sig, _fields in [
        ("reduced_count", B.reduced_count, "x, axis=None", dict(query=True, shape_only=True)),
        ("extremum_mask", B.extremum_mask, "x, ans, axis=None, keepdims=False", {}),
        ("select_weight", B.select_weight, "x, y", dict(
            lower="(T(1) if {x} > {y} else (T(0.5) if {x} == {y} else T(0)))",
            cuda_c=SF.c_text("{x} > {y} ? {one} : ({x} == {y} ? {half} : {zero})"),
            numba_cuda=SF.py_text("{one} if {x} > {y} else ({half} if {x} == {y} else {zero})"))),
        ("clip_mask", B.clip_mask, "x, lo=None, hi=None", dict(lower=SF.clip_mask)),
        ("transpose_inverse", A.transpose_inverse, "axes", dict(query=True)),
        ("check_scalar_output", A.check_scalar_output, "out, fname, holomorphic=False",
         dict(fresh=True, unsafe_in_select=True, shape_safe=True, shape_only=True))]]

matmul_vjp_left = defprim(
    "matmul_vjp_left", A.matmul_vjp_left, "rt.matmul_vjp_left", "ct, x, y", shape_args=("x",), batch=BR.helper,
    linear=("ct", "y"),
    vjp={"ct": "rt.broadcast_like(np.matmul(g, y), ct)", "y": "rt.matmul_vjp_right(ct, g, y)"})
matmul_vjp_right = defprim(
    "matmul_vjp_right", A.matmul_vjp_right, "rt.matmul_vjp_right", "ct, x, y", shape_args=("y",), batch=BR.helper,
    linear=("ct", "x"),
    vjp={"ct": "rt.broadcast_like(np.matmul(x, g), ct)", "x": "rt.matmul_vjp_left(ct, x, g)"})
dot_vjp_left = defprim(
    "dot_vjp_left", A.dot_vjp_left, "rt.dot_vjp_left", "ct, x, y", shape_args=("x",), batch=BR.helper,
    linear=("ct", "y"),
    vjp={"ct": "rt.broadcast_like(np.dot(g, y), ct)", "y": "rt.dot_vjp_right(ct, g, y)"})
dot_vjp_right = defprim(
    "dot_vjp_right", A.dot_vjp_right, "rt.dot_vjp_right", "ct, x, y", shape_args=("y",), batch=BR.helper,
    linear=("ct", "x"),
    vjp={"ct": "rt.broadcast_like(np.dot(x, g), ct)", "x": "rt.dot_vjp_left(ct, x, g)"})
getitem_vjp = defprim("getitem_vjp", A.getitem_vjp, "rt.getitem_vjp", "ct, x, index",
                      shape_args=("x",), batch=BR.helper, linear=("ct",), vjp={"ct": "g[index]"},
                      shape_safe=True,
                      construct="gradient of a subscript")
concat_vjp = defprim("concat_vjp", A.concat_vjp, "rt.concat_vjp", "ct, arrays, k, axis=0",
                     shape_args=("arrays",), batch=BR.helper, linear=("ct",),
                     vjp={"ct": "rt.concat_pad(g, arrays, k, axis)"})
concat_pad = defprim("concat_pad", A.concat_pad, "rt.concat_pad", "part, arrays, k, axis=0",
                     shape_args=("arrays",), batch=BR.helper, linear=("part",),
                     vjp={"part": "rt.concat_vjp(g, arrays, k, axis)"})
take_axis = defprim("take_axis", A.take_axis, "rt.take_axis", "x, k, axis=0", batch=BR.helper,
                    linear=("x",), vjp={"x": "rt.put_axis(g, x, k, axis)"})
put_axis = defprim("put_axis", A.put_axis, "rt.put_axis", "part, like, k, axis=0",
                   shape_args=("like",), batch=BR.helper, linear=("part",), vjp={"part": "rt.take_axis(g, k, axis)"})
transpose_back = defprim("transpose_back", H.transpose_back, "rt.transpose_back", "x, axes",
                         batch=BR.helper, linear=("x",), vjp={"x": "np.transpose(g, axes)"})
log_base = defprim("log_base", H.log_base, "rt.log_base", "x", batch=BR.elementwise,
                   deriv={"x": "1 / x"},
                   lower="(T(0) if {x} == 0 else np.log({x}))", cuda_c=SF.c_fn("log"),
                   numba_cuda=SF.py_fn("log"))
cumsum_vjp = defprim("cumsum_vjp", H.cumsum_vjp, "rt.cumsum_vjp", "ct, x, axis=None",
                     shape_args=("x",), batch=BR.helper, linear=("ct",),
                     vjp={"ct": "np.reshape(np.cumsum(g, axis=axis), np.shape(ct))"},
                     numba=NF.cumsum_vjp)
check_norm_ord = defprim("check_norm_ord", H.check_norm_ord, "rt.check_norm_ord", "x, ord",
                         batch=BR.helper, linear=("x",), vjp={"x": "rt.check_norm_ord(g, ord)"},
                         unsafe_in_select=True)
expand_last = defprim("expand_last", H.expand_last, "rt.expand_last", "x", batch=BR.helper,
                      linear=("x",), vjp={"x": "np.sum(g, axis=-1)"}, numba=NF.expand_last)
tile_vjp = defprim("tile_vjp", H.tile_vjp, "rt.tile_vjp", "ct, x, reps", shape_args=("x",), batch=BR.helper,
                   linear=("ct",), vjp={"ct": "np.tile(g, reps)"}, numba=NF.tile_vjp)
diagonal_vjp = defprim("diagonal_vjp", H.diagonal_vjp, "rt.diagonal_vjp",
                       "ct, x, offset=0, axis1=0, axis2=1", shape_args=("x",), batch=BR.helper, linear=("ct",),
                       vjp={"ct": "np.diagonal(g, offset, axis1, axis2)"}, numba=NF.diagonal_vjp)
