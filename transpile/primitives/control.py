"""Rows for control flow and assignment: copies (`a = b`), functional subscript writes, and the
tape that reverse mode uses through loops (runtime/tape.py explains the design).

`tape_new` and `tape_pop` carry no rules here: the transforms treat a tape's pushes and pops
as a pair (transforms/reverse.py gives an active tape an adjoint tape, transforms/forward.py a
tangent tape)."""
from transpile_runtime import tape as T
from transpile.primitives.registry import defprim

assign = defprim("assign", T.assign, "rt.assign", "x", op="assign", batch="elementwise",
                 linear=("x",), vjp={"x": "g"})
setitem = defprim("setitem", T.setitem, "rt.setitem", "x, index, v", batch="index",
                  linear=("x", "v"),
                  vjp={"x": "rt.setitem(g, index, 0)",
                       "v": "rt.float_part(rt.unbroadcast(g[index], v), ans)"},
                  jvp={"x": "rt.setitem(x_dot, index, 0)",
                       "v": "rt.float_part(rt.setitem(np.zeros_like(ans), index, v_dot), ans)"})
# `like op= v` on an array: the result keeps like's dtype (transpile/aliasing.py)
float_part = defprim("float_part", T.float_part, "rt.float_part", "t, like", batch="elementwise",
                     linear=("t",), shape_args=("like",), vjp={"t": "rt.float_part(g, like)"})
cast_into = defprim("cast_into", T.cast_into, "rt.cast_into", "x, like", batch="elementwise",
                    shape_args=("like",), vjp={"x": "rt.float_part(g, like)"},
                    jvp={"x": "rt.float_part(x_dot, like)"})
# the caller's array argument receives the final value of a function that wrote into it
write_back = defprim("write_back", T.write_back, "rt.write_back", "dest, value", batch="helper",
                     nondiff=True, pure=False)
adjoint_like = defprim("adjoint_like", T.adjoint_like, "rt.adjoint_like", "d, x", batch="helper",
                       linear=("d",), vjp={"d": "rt.unbroadcast(g, d)"})
tape_new = defprim("tape_new", T.Tape, "rt.Tape", "", batch="helper", nondiff=True, pure=False)
tape_pop = defprim("tape_pop", T.tape_pop, "rt.tape_pop", "tape", op="method:pop", batch="helper",
                    pure=False)
trip_count = defprim("trip_count", T.trip_count, "rt.trip_count", "start, stop, step",
                     batch="helper", nondiff=True)
# `y = rt.setitem(x, index, v)` where x is owned and dead afterwards (transforms/inplace.py)
write_in_place = defprim("write_in_place", T.write_in_place, "rt.write_in_place", "x, index, v",
                         batch="helper", nondiff=True)
