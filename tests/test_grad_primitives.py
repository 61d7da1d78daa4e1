"""Every primitive in the table: grad vs central finite differences (float64), several shapes,
broadcasting, axis/keepdims variants."""
import numpy as np
import pytest

from fd import numerical_grad
from transpile import grad

rng = np.random.default_rng(0)


def pos(*shape):
    return rng.uniform(0.5, 1.5, size=shape)


def sym(*shape):
    return rng.uniform(-0.9, 0.9, size=shape)


# name -> (function of the differentiated arguments, example args, argnums)
CASES = {
    "add_broadcast": (lambda x, y: np.sum(np.sin(x + y)), [sym(3, 4), sym(4)], (0, 1)),
    "add_operator_scalar": (lambda x: np.sum((x + 2.0) ** 2), [sym(5)], (0,)),
    "subtract": (lambda x, y: np.sum(np.sin(np.subtract(x, y))), [sym(3, 1), sym(1, 4)], (0, 1)),
    "sub_operator": (lambda x, y: np.sum(np.cos(x - y)), [sym(2, 3), sym(3)], (0, 1)),
    "multiply": (lambda x, y: np.sum(np.multiply(x, y) * x), [sym(3, 4), sym(3, 1)], (0, 1)),
    "divide": (lambda x, y: np.sum(np.divide(x, y)), [sym(4), pos(4)], (0, 1)),
    "true_divide": (lambda x, y: np.sum(np.true_divide(x, y) ** 2), [sym(2, 3), pos(2, 3)], (0, 1)),
    "div_operator": (lambda x, y: np.sum(x / y), [sym(3), pos(2, 3)], (0, 1)),
    "power": (lambda x, y: np.sum(np.power(x, y)), [pos(4), sym(4)], (0, 1)),
    "pow_operator_const": (lambda x: np.sum(x ** 3), [sym(3, 2)], (0,)),
    "negative": (lambda x: np.sum(np.negative(x) * x), [sym(4)], (0,)),
    "unary_minus": (lambda x: np.sum(-x * np.sin(x)), [sym(4)], (0,)),
    "square": (lambda x: np.sum(np.square(x)), [sym(3, 3)], (0,)),
    "sqrt": (lambda x: np.sum(np.sqrt(x)), [pos(5)], (0,)),
    "exp": (lambda x: np.sum(np.exp(x)), [sym(2, 3)], (0,)),
    "expm1": (lambda x: np.sum(np.expm1(x)), [sym(4)], (0,)),
    "log": (lambda x: np.sum(np.log(x)), [pos(4)], (0,)),
    "log1p": (lambda x: np.sum(np.log1p(x)), [pos(4)], (0,)),
    "log2_log10": (lambda x: np.sum(np.log2(x) + np.log10(x)), [pos(4)], (0,)),
    "sin": (lambda x: np.sum(np.sin(x)), [sym(4)], (0,)),
    "cos": (lambda x: np.sum(np.cos(x)), [sym(4)], (0,)),
    "tan": (lambda x: np.sum(np.tan(x)), [sym(4)], (0,)),
    "arcsin": (lambda x: np.sum(np.arcsin(x)), [sym(4)], (0,)),
    "arccos": (lambda x: np.sum(np.arccos(x)), [sym(4)], (0,)),
    "arctan": (lambda x: np.sum(np.arctan(x)), [sym(4)], (0,)),
    "sinh": (lambda x: np.sum(np.sinh(x)), [sym(4)], (0,)),
    "cosh": (lambda x: np.sum(np.cosh(x)), [sym(4)], (0,)),
    "tanh": (lambda x: np.sum(np.tanh(x)), [sym(4)], (0,)),
    "abs": (lambda x: np.sum(np.abs(x) * x), [sym(5)], (0,)),
    "absolute_builtin_abs": (lambda x: np.sum(np.absolute(x) + abs(x)), [sym(5)], (0,)),
    "maximum": (lambda x, y: np.sum(np.maximum(x, y) ** 2), [sym(6), sym(6)], (0, 1)),
    "minimum": (lambda x, y: np.sum(np.minimum(x, y) ** 2), [sym(6), sym(6)], (0, 1)),
    "maximum_scalar": (lambda x: np.sum(np.maximum(x, 0.0) * x), [sym(6)], (0,)),
    "where": (lambda x, y: np.sum(np.where(x > 0, x * y, y ** 2)), [sym(6), sym(6)], (0, 1)),
    "clip": (lambda x: np.sum(np.clip(x, -0.5, 0.5) ** 2), [sym(8)], (0,)),
    "reciprocal": (lambda x: np.sum(np.reciprocal(x)), [pos(4)], (0,)),
    "sign_has_zero_grad": (lambda x: np.sum(np.sign(x) * x), [sym(4)], (0,)),
    "sum_axis": (lambda x: np.sum(np.sin(np.sum(x, axis=0))), [sym(3, 4)], (0,)),
    "sum_axis_keepdims": (lambda x: np.sum(x / np.sum(x, axis=1, keepdims=True)), [pos(3, 4)], (0,)),
    "sum_tuple_axis": (lambda x: np.sum(np.sum(x, axis=(0, 2)) ** 2), [sym(2, 3, 4)], (0,)),
    "sum_method": (lambda x: (x ** 2).sum(), [sym(3, 2)], (0,)),
    "mean": (lambda x: np.mean(x ** 2), [sym(3, 4)], (0,)),
    "mean_axis": (lambda x: np.sum(np.mean(x, axis=-1) ** 2), [sym(3, 4)], (0,)),
    "mean_method_keepdims": (lambda x: np.sum((x - x.mean(axis=0, keepdims=True)) ** 2), [sym(3, 4)], (0,)),
    "prod": (lambda x: np.prod(x), [pos(4)], (0,)),
    "prod_axis": (lambda x: np.sum(np.prod(x, axis=1)), [pos(3, 4)], (0,)),
    "max": (lambda x: np.max(x), [sym(7)], (0,)),
    "max_axis": (lambda x: np.sum(np.max(x, axis=0) ** 2), [sym(3, 4)], (0,)),
    "min_keepdims": (lambda x: np.sum(np.min(x, axis=1, keepdims=True) * x), [sym(3, 4)], (0,)),
    "amax_method": (lambda x: x.max() + np.amin(x), [sym(6)], (0,)),
    "var_std": (lambda x: np.var(x) + np.std(x, axis=0).sum(), [sym(5, 3)], (0,)),
    "dot_mv": (lambda A, x: np.sum(np.tanh(np.dot(A, x))), [sym(3, 4), sym(4)], (0, 1)),
    "dot_vv": (lambda x, y: np.dot(x, y), [sym(4), sym(4)], (0, 1)),
    "dot_mm": (lambda A, B: np.sum(np.dot(A, B) ** 2), [sym(2, 3), sym(3, 4)], (0, 1)),
    "dot_vm": (lambda x, B: np.sum(np.sin(np.dot(x, B))), [sym(3), sym(3, 4)], (0, 1)),
    "dot_scalar": (lambda a, x: np.sum(np.dot(a, x)), [np.float64(0.7), sym(3)], (1,)),
    "dot_nd": (lambda A, B: np.sum(np.dot(A, B) ** 2), [sym(2, 2, 3), sym(4, 3, 2)], (0, 1)),
    "matmul": (lambda A, B: np.sum(np.matmul(A, B) ** 2), [sym(2, 3), sym(3, 4)], (0, 1)),
    "matmul_operator_batched": (lambda A, B: np.sum((A @ B) ** 2), [sym(5, 2, 3), sym(3, 4)], (0, 1)),
    "matmul_mv": (lambda A, x: np.sum((A @ x) ** 2), [sym(2, 3), sym(3)], (0, 1)),
    "matmul_vm": (lambda x, A: np.sum((x @ A) ** 2), [sym(2), sym(2, 3)], (0, 1)),
    "outer": (lambda x, y: np.sum(np.sin(np.outer(x, y))), [sym(3), sym(4)], (0, 1)),
    "inner": (lambda x, y: np.sum(np.inner(x, y) ** 2), [sym(2, 3), sym(4, 3)], (0, 1)),
    "einsum_mm": (lambda A, B: np.sum(np.einsum("ij,jk->ik", A, B) ** 2), [sym(2, 3), sym(3, 4)], (0, 1)),
    "einsum_reduce": (lambda A, x: np.einsum("ij,j->", A, x), [sym(2, 3), sym(3)], (0, 1)),
    "transpose": (lambda A: np.sum(np.transpose(A) * np.arange(6.0).reshape(3, 2)), [sym(2, 3)], (0,)),
    "transpose_axes": (lambda A: np.sum(np.transpose(A, (2, 0, 1)) * np.arange(24.0).reshape(4, 2, 3)), [sym(2, 3, 4)], (0,)),
    "dot_T": (lambda A: np.sum(A.T @ A), [sym(3, 2)], (0,)),
    "reshape": (lambda x: np.sum(np.reshape(x, (3, 2)) @ np.ones(2) * np.arange(3.0)), [sym(6)], (0,)),
    "reshape_method_varargs": (lambda x: np.sum(x.reshape(2, 3)[0] ** 2), [sym(6)], (0,)),
    "ravel": (lambda x: np.sum(np.ravel(x) * np.arange(6.0)), [sym(2, 3)], (0,)),
    "expand_dims": (lambda x: np.sum(np.expand_dims(x, 0) * np.ones((2, 1))), [sym(3)], (0,)),
    "squeeze": (lambda x: np.sum(np.squeeze(x) ** 2), [sym(1, 3, 1)], (0,)),
    "concatenate": (lambda x, y: np.sum(np.concatenate([x, y], axis=0) * np.arange(5.0)), [sym(2), sym(3)], (0, 1)),
    "concatenate_axis1": (lambda x, y: np.sum(np.concatenate((x, y), axis=1) ** 3), [sym(2, 2), sym(2, 3)], (0, 1)),
    "stack": (lambda x, y: np.sum(np.stack([x, y]) * np.arange(6.0).reshape(2, 3)), [sym(3), sym(3)], (0, 1)),
    "stack_axis1": (lambda x, y: np.sum(np.stack([x, y * x], axis=1) ** 2), [sym(3), sym(3)], (0, 1)),
    "atleast": (lambda x: np.sum(np.atleast_2d(x) ** 2 + np.atleast_1d(x)), [sym(3)], (0,)),
    "getitem_int": (lambda x: x[1] ** 2, [sym(4)], (0,)),
    "getitem_slices": (lambda x: np.sum(x[1:] ** 2) + np.sum(x[::2]), [sym(6)], (0,)),
    "getitem_column": (lambda x: np.sum(np.sin(x[:, 1])), [sym(3, 4)], (0,)),
    "getitem_newaxis": (lambda x: np.sum(x[:, None] * x[None, :]), [sym(3)], (0,)),
    "getitem_fancy_repeats": (lambda x: np.sum(x[np.array([0, 2, 0])] ** 2), [sym(4)], (0,)),
    "getitem_negative": (lambda x: x[-1] * x[0], [sym(4)], (0,)),
    "det": (lambda A: np.linalg.det(A), [sym(3, 3) + 2 * np.eye(3)], (0,)),
    "inv": (lambda A: np.sum(np.linalg.inv(A) ** 2), [sym(3, 3) + 2 * np.eye(3)], (0,)),
    "solve_vec": (lambda A, b: np.sum(np.linalg.solve(A, b) ** 2), [sym(3, 3) + 2 * np.eye(3), sym(3)], (0, 1)),
    "solve_mat": (lambda A, b: np.sum(np.linalg.solve(A, b) ** 2), [sym(3, 3) + 2 * np.eye(3), sym(3, 2)], (0, 1)),
    "norm": (lambda x: np.linalg.norm(x), [sym(5)], (0,)),
    "norm_axis": (lambda x: np.sum(x / np.linalg.norm(x, axis=1, keepdims=True)), [sym(3, 4)], (0,)),
    "cumsum": (lambda x: np.sum(np.cumsum(x) ** 2), [sym(5)], (0,)),
    "logaddexp_arctan2_hypot": (lambda x, y: np.sum(np.logaddexp(x, y) + np.arctan2(x, y) + np.hypot(x, y)), [pos(4), pos(4)], (0, 1)),
    "hyperbolic_inverse": (lambda x: np.sum(np.arcsinh(x) + np.arctanh(x * 0.5) + np.arccosh(x + 1.5)), [pos(4)], (0,)),
    "nondiff_creation": (lambda x: np.sum(x * np.ones_like(x) + np.zeros_like(x) + np.shape(x)[0]), [sym(3)], (0,)),
    "astype_float": (lambda x: np.sum(x.astype(np.float64) ** 2), [sym(3)], (0,)),
    "trace_diagonal": (lambda A: np.trace(A @ A) + np.sum(np.diagonal(A) ** 2), [sym(3, 3)], (0,)),
    "swapaxes_moveaxis": (lambda A: np.sum(np.swapaxes(A, 0, 1)[0] + np.moveaxis(A, 0, -1)[1] ** 2), [sym(2, 3)], (0,)),
    "broadcast_to": (lambda x: np.sum(np.broadcast_to(x, (4, 3)) ** 2), [sym(3)], (0,)),
    "tile": (lambda x: np.sum(np.tile(x, (2, 2)) * np.arange(12.0).reshape(2, 6)), [sym(3)], (0,)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_grad_matches_finite_differences(name):
    f, args, argnums = CASES[name]
    got = grad(f, argnums=argnums)(*args)
    for k, a in enumerate(argnums):
        want = numerical_grad(f, args, a)
        assert np.shape(got[k]) == np.shape(args[a]), name
        np.testing.assert_allclose(got[k], want, rtol=1e-5, atol=1e-6, err_msg=name)


@pytest.mark.parametrize("name", sorted(CASES))
def test_generated_source_compiles_and_names_user_lines(name):
    f, args, argnums = CASES[name]
    g = grad(f, argnums=argnums)
    src = g.source_for(*args)
    compile(src, "<generated>", "exec")
    assert "def " in src and "# line" in src


def test_every_differentiable_primitive_is_covered():
    """A new differentiable primitive must get a finite-difference case above."""
    from transpile.primitives import all_primitives
    exercised = set()
    import transpile.ad.reverse as rev
    original = rev.ReverseSweep.contribution

    def spy(self, eqn, *a, **k):
        exercised.add(eqn.prim.name)
        return original(self, eqn, *a, **k)
    rev.ReverseSweep.contribution = spy
    try:
        for name in CASES:
            f, args, argnums = CASES[name]
            grad(f, argnums=argnums).__transpile_core__(
                grad(f, argnums=argnums).flatten_args(list(args))[1])
    finally:
        rev.ReverseSweep.contribution = original
    user_facing = {p.name for p in all_primitives(builtin_only=True)
                   if not p.nondiff and p.batch not in ("helper", "collective")}  # collectives: test_pmap_grad.py
    missing = user_facing - exercised - {"log_base", "identity", "positive", "copy", "array",
                                         "cbrt", "exp2", "astype",
                                         "setitem", "assign", "float",
                                         "cast_into", "float_part",
                                         "written_part", "added_to_zero"}
    # control flow: test_control_flow.py; float: test_grad_api.py; cast_into and float_part
    # (augmented assignment, writes into integer arrays): test_mutation.py
    # rows swept by tests/test_primitive_sweep.py (finite differences in every mode), and the
    # rt.* derivative helpers their first and second derivatives run through there
    import glob
    import importlib
    import os
    import sweep_cases
    for path in glob.glob(os.path.join(os.path.dirname(__file__), "sweep_cases_*.py")):
        importlib.import_module(os.path.basename(path)[:-3])
    missing -= {c.prim for c in sweep_cases.CASES}
    missing -= {p.name for p in all_primitives(builtin_only=True)
                if p.path.startswith("rt.") and not getattr(p, "aliases", ())}
    missing -= set(sweep_cases.EXEMPT)
    assert not missing, f"primitives without a finite-difference test: {sorted(missing)}"
