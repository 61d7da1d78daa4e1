"""Products and linear algebra."""
import operator

import numpy as np

from transpile.primitives import batching_rules as BR
from transpile.primitives.registry import defmethod, defprim

L = BR.linalg

matmul = defprim("matmul", [np.matmul, operator.matmul], "np.matmul", "x, y", op="@", batch=L,
                 linear=("x", "y"),
                 vjp={"x": "rt.matmul_vjp_left(g, x, y)", "y": "rt.matmul_vjp_right(g, x, y)"})
dot = defprim("dot", np.dot, "np.dot", "x, y", batch=L, linear=("x", "y"),
              vjp={"x": "rt.dot_vjp_left(g, x, y)", "y": "rt.dot_vjp_right(g, x, y)"})
outer = defprim("outer", np.outer, "np.outer", "x, y", batch=L, linear=("x", "y"),
                vjp={"x": "np.reshape(np.dot(g, np.ravel(y)), np.shape(x))",
                     "y": "np.reshape(np.dot(np.ravel(x), g), np.shape(y))"})
inner = defprim("inner", np.inner, "np.inner", "x, y", batch=L, linear=("x", "y"),
                vjp={"x": "rt.dot_vjp_left(g, x, rt.mT(y))",
                     "y": "rt.mT(rt.dot_vjp_right(g, x, rt.mT(y)))"})
einsum = defprim("einsum", np.einsum, "np.einsum", "subscripts, *operands", batch=L,
                 linear=("operands",), vjp={"operands": "einsum_vjp"})
det = defprim("det", np.linalg.det, "np.linalg.det", "x", batch=L,
              vjp={"x": "rt.mT(np.linalg.inv(x)) * rt.expand_last(rt.expand_last(g * ans))"},
              jvp={"x": "ans * np.sum(rt.mT(np.linalg.inv(x)) * x_dot, axis=(-2, -1))"})
inv = defprim("inv", np.linalg.inv, "np.linalg.inv", "x", batch=L,
              vjp={"x": "-(rt.mT(ans) @ g @ rt.mT(ans))"},
              jvp={"x": "-(ans @ x_dot @ ans)"})
solve = defprim("solve", np.linalg.solve, "np.linalg.solve", "a, b", batch=L,
                vjp={"b": "np.linalg.solve(rt.mT(a), g)",
                     "a": "-rt.matmul_vjp_left(np.linalg.solve(rt.mT(a), g), a, ans)"},
                jvp={"b": "np.linalg.solve(a, b_dot)", "a": "-np.linalg.solve(a, a_dot @ ans)"})

defmethod("dot", dot)
