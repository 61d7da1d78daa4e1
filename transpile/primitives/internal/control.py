"""Rows for control flow and assignment: copies (`a = b`), functional subscript writes, and the
tape that reverse mode uses through loops (runtime/tape.py explains the design).

`tape_new` and `tape_pop` carry no rules here: the transforms treat a tape's pushes and pops
as a pair (ad/reverse.py gives an active tape an adjoint tape, ad/forward.py a
tangent tape)."""
from transpile_runtime import tape as T
from transpile.primitives.batching import rules as BR, writes as BW
from transpile.primitives import numba_forms as NF
from transpile.primitives.registry import defprim

assign = defprim("assign", T.assign, "rt.assign", "x", op="assign", batch=BW.assign,
                 linear=("x",), vjp={"x": "g"}, shape_safe=True, view="same",
                 construct="assignment")
setitem = defprim("setitem", T.setitem, "rt.setitem", "x, index, v", batch=BW.setitem,
                  linear=("x", "v"),
                  # v's rule first, on a copy of g[index]: x's rule may then zero g in place
                  vjp={"v": "rt.float_part(rt.unbroadcast(rt.written_part(g, index), v), ans)",
                       "x": "rt.setitem(g, index, 0)"},
                  jvp={"x": "rt.setitem(x_dot, index, 0)",
                       "v": "rt.float_part(rt.setitem(np.zeros_like(ans), index, v_dot), ans)"},
                  array_result=True, fresh=True, keep=True, shape_safe=True,
                  subscript_write=True,
                  construct="subscript assignment")
# forward mode: one write of v's tangent into x's tangent (ad/forward.py, jvp_joint)
setitem.jvp_joint = (("x", "v"), "rt.setitem(x_dot, index, rt.float_part(v_dot, ans))")
# `v op= e` where v may be a scalar (transpile/frontend/normalize/aliasing_scalars.py): decided when it runs
if_array = defprim("if_array", T.if_array, "rt.if_array", "probe, a, b", batch=BW.if_array,
                   linear=("a", "b"), shape_args=("probe",),
                   vjp={"a": "rt.if_array(probe, g, rt.shape_like(g))",
                        "b": "rt.if_array(probe, rt.shape_like(g), g)"},
                   jvp={"a": "rt.if_array(probe, a_dot, rt.shape_like(a_dot))",
                        "b": "rt.if_array(probe, rt.shape_like(b_dot), b_dot)"})
setitem_if_array = defprim(
    "setitem_if_array", T.setitem_if_array, "rt.setitem_if_array", "x, index, v, probe",
    batch=BW.setitem_if_array, linear=("x", "v"), shape_args=("probe",),
    vjp={"v": "rt.if_array(probe, rt.float_part(rt.unbroadcast(rt.written_part(g, index), v), "
              "ans), rt.shape_like(v))",
         "x": "rt.setitem_if_array(g, index, 0, probe)"},
    keep=True, returns_arg="x", subscript_write=True)
setitem_if_array.jvp_joint = (("x", "v"), "rt.setitem_if_array(x_dot, index, "
                                          "rt.float_part(v_dot, ans), probe)")
write_in_place_if_array = defprim("write_in_place_if_array", T.write_in_place_if_array,
                                  "rt.write_in_place_if_array", "x, index, v, probe",
                                  batch="helper", nondiff=True, returns_arg="x", writes_arg=True)
# `like op= v` on an array: the result keeps like's dtype (transpile/frontend/normalize/aliasing.py)
float_part = defprim("float_part", T.float_part, "rt.float_part", "t, like", batch=BW.float_part,
                     linear=("t",), shape_args=("like",), vjp={"t": "rt.float_part(g, like)"},
                     shape_safe=True)
# (its derivative is cut where the result is an integer array: `like` an int array written in
# place; a number `like` is rebound, and `s = 0; s += x[i]` carries x's derivative)
cast_into = defprim("cast_into", T.cast_into, "rt.cast_into", "x, like", batch=BW.cast_into,
                    shape_args=("like",), vjp={"x": "rt.float_part(g, ans)"},
                    jvp={"x": "rt.float_part(x_dot, ans)"}, shape_safe=True,
                    construct="augmented assignment")
# the caller's array argument receives the final value of a function that wrote into it
write_back = defprim("write_back", T.write_back, "rt.write_back", "dest, value", batch=BW.write_back,
                     nondiff=True, pure=False, keep=True, no_buffer=True, shape_safe=True,
                     writes_arg=True,
                     construct="write into an argument")
adjoint_like = defprim("adjoint_like", T.adjoint_like, "rt.adjoint_like", "d, x", batch=BR.helper,
                       linear=("d",), vjp={"d": "rt.unbroadcast(g, d)"}, shape_safe=True,
                       shape_args=("x",))
tape_new = defprim("tape_new", T.Tape, "rt.Tape", "", batch="helper", nondiff=True, pure=False,
                   keep=True, no_buffer=True, shape_safe=True,
                   construct="reverse-mode tape of a loop")
tape_pop = defprim("tape_pop", T.tape_pop, "rt.tape_pop", "tape", op="method:pop", batch="helper",
                    pure=False, keep=True, shape_safe=True,
                   construct="reverse-mode tape of a loop")
trip_count = defprim("trip_count", T.trip_count, "rt.trip_count", "start, stop, step",
                     batch="helper", nondiff=True,
                     int_result=True, no_buffer=True, scalar_result=True, shape_safe=True)
# what a tape saves for a value the backward sweep reads only for its shape/dtype
# (ad/tape_slim.py)
shape_like = defprim("shape_like", T.shape_like, "rt.shape_like", "x", batch=BW.assign,
                     nondiff=True, meta=True, no_buffer=True)
# the same helper where the tape saves it (ad/tape_slim.py): only the shape/dtype of the
# saved value is ever read, so a compiled scalar may keep its value (optimize/specialize_control.py)
shape_only = defprim("shape_only", T.shape_only, "rt.shape_only", "x", batch=BW.assign,
                     nondiff=True, meta=True, no_buffer=True)
# what of g reaches v in `y[index] = v` (duplicate integer indices: the last one written)
written_part = defprim("written_part", T.written_part, "rt.written_part", "x, index",
                       batch=BR.index, linear=("x",),
                       vjp={"x": "rt.setitem(np.zeros_like(x), index, g)"}, fresh=True,
                       numba=NF.written_part)
# `d = d + c` where the adjoint d holds 0.0 (optimize/inplace.py): d becomes c's buffer
added_to_zero = defprim("added_to_zero", T.added_to_zero, "rt.added_to_zero", "d",
                        batch=BW.added_to_zero, linear=("d",), vjp={"d": "g"}, returns_arg="d")
# `acc = acc + rt.getitem_vjp(ct, like, index)` where acc is owned and dead afterwards
# (optimize/inplace.py): ct added into acc's buffer
add_at = defprim("add_at", T.add_at, "rt.add_at", "acc, index, ct, like", batch="helper",
                 nondiff=True, keep=True, returns_arg="acc", writes_arg=True)
# `y = rt.setitem(x, index, v)` where x is owned and dead afterwards (optimize/inplace.py)
write_in_place = defprim("write_in_place", T.write_in_place, "rt.write_in_place", "x, index, v",
                         batch="helper", nondiff=True, keep=True, returns_arg="x", shape_safe=True,
                         writes_arg=True,
                         construct="subscript assignment")
