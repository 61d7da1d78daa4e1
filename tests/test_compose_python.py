"""Python people write inside transformed code (issue #13, second half): pytree utilities,
NamedTuple/dataclass/registered nodes, Python ints as dynamic jit arguments, early returns,
defaults/keywords, partials and methods, print/breakpoint, builtins, argnums forms.

Oracles: central finite differences in float64 (tests/fd.py), JAX with x64, NumPy."""
import dataclasses
import functools
import sys
import time
import warnings
from typing import NamedTuple

import numpy as np
import pytest

import transpile as tp
from transpile import TranspileError, TranspileWarning
from fd import numerical_grad

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

X = np.array([0.3, -1.2, 2.0])


def _no_fallback():
    warnings.simplefilter("error", TranspileWarning)


# ---- pytrees inside transformed code ---------------------------------------------------------

def sgd_step(params, grads):
    return tp.tree_map(lambda p, g: p - 0.1 * g, params, grads)


def test_tree_map_inside_jit_update_step():
    params = {"w": np.array([1.0, -2.0]), "b": 0.5}
    grads = {"w": np.array([0.1, 0.2]), "b": 0.3}
    with warnings.catch_warnings():
        _no_fallback()
        new = tp.jit(sgd_step)(params, grads)
    want = jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)
    assert sorted(new) == ["b", "w"]
    np.testing.assert_allclose(new["w"], want["w"])
    np.testing.assert_allclose(new["b"], want["b"])


def leaves_loss(params):
    return sum(np.sum(np.sin(leaf) ** 2) for leaf in tp.tree_leaves(params))


def test_tree_leaves_inside_grad_matches_jax_and_fd():
    params = {"w": np.array([1.0, -2.0]), "b": np.array(0.5), "c": (np.array([0.2, 0.1]),)}
    g = tp.grad(leaves_loss)(params)
    want = jax.grad(lambda p: sum(jnp.sum(jnp.sin(l) ** 2)
                                  for l in jax.tree_util.tree_leaves(p)))(params)
    np.testing.assert_allclose(g["w"], want["w"])
    np.testing.assert_allclose(g["b"], want["b"])
    np.testing.assert_allclose(g["c"][0], want["c"][0])
    fd = numerical_grad(lambda w: leaves_loss({"w": w, "b": params["b"], "c": params["c"]}),
                        [params["w"]])
    np.testing.assert_allclose(g["w"], fd, rtol=1e-6)


def flatten_loss(params):
    leaves, treedef = tp.tree_flatten(params)
    doubled = tp.tree_unflatten(treedef, [2.0 * leaf for leaf in leaves])
    return np.sum(doubled["w"] ** 2) * doubled["b"]


def test_tree_flatten_unflatten_inside_grad():
    params = {"w": np.array([1.0, -2.0]), "b": np.array(0.5)}
    g = tp.grad(flatten_loss)(params)
    want = jax.grad(lambda p: jnp.sum((2 * p["w"]) ** 2) * (2 * p["b"]))(params)
    np.testing.assert_allclose(g["w"], want["w"])
    np.testing.assert_allclose(g["b"], want["b"])


def structure_mismatch(a, b):
    return tp.tree_map(lambda u, v: u + v, a, b)


def test_tree_map_structure_mismatch_names_the_line():
    with pytest.raises(TranspileError, match=r"test_compose_python.py:\d+.*structures differ"):
        tp.grad(lambda a: np.sum(structure_mismatch({"w": a}, (a,))["w"]))(X)


class Params(NamedTuple):
    w: np.ndarray
    b: float


@dataclasses.dataclass
class DataParams:
    w: np.ndarray
    b: float


class Registered:
    def __init__(self, w, b):
        self.w, self.b = w, b


tp.register_pytree_node(Registered, lambda r: ((r.w, r.b), None),
                        lambda aux, children: Registered(*children))


def node_loss(p, x):
    return np.sum(np.tanh(p.w * x + p.b) ** 2)


@pytest.mark.parametrize("cls", [Params, DataParams, Registered])
def test_pytree_nodes_as_parameters_under_grad_and_jit(cls):
    w, b, x = np.array([0.4, -0.7, 1.1]), 0.3, X
    want_w, want_b = jax.grad(lambda w, b: jnp.sum(jnp.tanh(w * x + b) ** 2),
                              argnums=(0, 1))(w, b)
    for transform in (tp.grad, lambda f: tp.jit(tp.grad(f))):
        g = transform(node_loss)(cls(w, b), x)
        assert type(g) is cls
        np.testing.assert_allclose(g.w, want_w)
        np.testing.assert_allclose(g.b, want_b)


def build_inside(w, x):
    p = Params(w, 0.25)
    return node_loss(p, x)


def test_named_tuple_built_inside_the_function():
    w = np.array([0.4, -0.7, 1.1])
    g = tp.grad(build_inside)(w, X)
    np.testing.assert_allclose(g, numerical_grad(build_inside, [w, X]), rtol=1e-6)


# ---- Python ints as dynamic jit arguments ------------------------------------------------------

def scaled(i, x):
    return np.sum(np.sin(x) * i) / (1 + i)


def test_jit_int_argument_does_not_recompile():
    f = tp.jit(scaled)
    f(0, X)
    start = time.perf_counter()
    for i in range(1, 21):
        np.testing.assert_allclose(f(i, X), np.sum(np.sin(X) * i) / (1 + i))
    per_call = (time.perf_counter() - start) / 20
    assert f.compile_count == 1
    assert per_call < 0.05      # generous: a recompilation costs ~0.5 s


def head(n, x):
    return x[:n] * 2.0


def test_jit_int_that_shapes_the_result_is_specialized():
    f = tp.jit(head)
    for n in (1, 2, 3):
        np.testing.assert_allclose(f(n, X), X[:n] * 2.0)
    assert f.compile_count == 3


def test_jit_int_keeps_float32_and_works_inside_pytrees():
    f = tp.jit(lambda cfg, x: x * cfg["k"] + cfg["k"] // 2)
    x32 = X.astype(np.float32)
    for k in (1, 2, 7):
        out = f({"k": k}, x32)
        assert out.dtype == np.float32
        np.testing.assert_allclose(out, x32 * k + k // 2, rtol=1e-6)
    assert f.compile_count == 1
    # arithmetic among Python scalars stays weakly typed (NumPy 2): float32 is kept
    assert tp.jit(lambda s, x: x * (s * 2.0))(0.5, x32).dtype == np.float32


def test_jit_grad_with_int_argument():
    f = tp.jit(tp.grad(lambda x, k: np.sum(np.sin(x) * k ** 2)))
    for k in (1, 2, 5):
        np.testing.assert_allclose(f(X, k), np.cos(X) * k ** 2)
    assert f.compile_count == 1


# ---- early returns -----------------------------------------------------------------------------

def by_mode(x, mode):
    if mode == "square":
        return np.sum(x ** 2)
    return np.sum(np.sin(x))


def by_sign(x):
    if np.sum(x) > 0:
        return np.sum(x ** 3)
    return np.sum(np.exp(x))


def test_early_return_on_static_and_data_conditions():
    np.testing.assert_allclose(tp.grad(by_mode)(X, "square"), 2 * X)
    np.testing.assert_allclose(tp.grad(by_mode)(X, "sin"), np.cos(X))
    for x in (X, -X):
        want = jax.grad(lambda x: jnp.sum(x ** 3) if np.sum(x) > 0 else jnp.sum(jnp.exp(x)))(x)
        np.testing.assert_allclose(tp.grad(by_sign)(x), want)
        with warnings.catch_warnings():
            # the gradient's branch on data has no Numba lowering yet (issue #12): NumPy runs it
            warnings.simplefilter("ignore", TranspileWarning)
            np.testing.assert_allclose(tp.jit(tp.grad(by_sign))(x), want)
    xs = np.stack([X, -X])
    np.testing.assert_allclose(tp.vmap(by_sign)(xs), [by_sign(X), by_sign(-X)])


def scalar_branch(t):
    if t > 0:
        return t ** 3
    return np.sin(t)


def test_grad_of_grad_with_early_return():
    for t in (0.7, -0.4):
        branch = (lambda t: t ** 3) if t > 0 else jnp.sin      # the branch this t takes
        want = float(jax.grad(jax.grad(branch))(t))
        assert tp.grad(tp.grad(scalar_branch))(t) == pytest.approx(want, rel=1e-12)


def return_in_loop(x):
    s = 0.0
    for i in range(3):
        if x[i] > 1.5:
            return s * x[i]
        s = s + x[i] ** 2
    return s


def halve_until_small(t):
    while True:
        t = t * 0.5
        if t < 0.1:
            return t * 3.0


def test_return_inside_loops():
    for x in (X, np.array([0.3, 1.6, 2.0]), np.array([0.3, 1.0, 1.0])):
        assert tp.grad(return_in_loop)(x) == pytest.approx(
            numerical_grad(return_in_loop, [x]), rel=1e-6)
        with warnings.catch_warnings():
            # indexing by the loop variable has no Numba lowering yet (issue #12)
            warnings.simplefilter("ignore", TranspileWarning)
            assert tp.jit(return_in_loop)(x) == pytest.approx(return_in_loop(x))
    for t, halvings in ((0.7, 3), (3.0, 5)):
        assert tp.grad(halve_until_small)(t) == pytest.approx(3.0 * 0.5 ** halvings)


def return_in_nested_loop(x):
    s = 0.0
    for i in range(3):
        for j in range(3):
            if x[i] * x[j] > 3.0:
                return s
            s = s + x[i] * x[j]
    return s


def test_return_inside_a_nested_loop():
    # each enclosing loop breaks on the return's flag (the value is the one returned)
    for x in (X, np.array([0.3, 1.6, 2.0]), np.array([0.3, 1.0, 1.0])):
        assert tp.grad(return_in_nested_loop)(x) == pytest.approx(
            numerical_grad(return_in_nested_loop, [x]), rel=1e-6, abs=1e-9)
        assert tp.jit(return_in_nested_loop)(x) == pytest.approx(return_in_nested_loop(x))


# ---- defaults, keywords, partials, methods ---------------------------------------------------

def with_default(x, s=2.0):
    return np.sum(np.sin(x) * s)


def test_defaults_and_keywords_in_every_transform():
    jf = lambda x, s=2.0: jnp.sum(jnp.sin(x) * s)   # noqa: E731
    np.testing.assert_allclose(tp.hessian(with_default)(X), jax.hessian(jf)(X))
    np.testing.assert_allclose(tp.jacfwd(with_default)(X), jax.jacfwd(jf)(X))
    np.testing.assert_allclose(tp.jacrev(with_default)(X), jax.jacrev(jf)(X))
    p, t = tp.jvp(with_default, (X,), (X,))
    jp, jt = jax.jvp(jf, (X,), (X,))
    assert p == pytest.approx(float(jp)) and t == pytest.approx(float(jt))
    np.testing.assert_allclose(tp.grad(with_default)(X, s=3.0), jax.grad(jf)(X, 3.0))
    assert tp.jit(with_default)(X, s=3.0) == pytest.approx(float(jf(X, 3.0)))
    np.testing.assert_allclose(tp.grad(tp.grad(lambda t, s=2.0: np.sin(t) * s))(0.3),
                               -2.0 * np.sin(0.3))


class Model:
    def __init__(self, k):
        self.k = k

    def loss(self, x):
        return np.sum(x ** 2) * self.k

    @classmethod
    def cubic(cls, x):
        return np.sum(x ** 3)

    @staticmethod
    def quartic(x):
        return np.sum(x ** 4)


def test_partial_bound_class_and_static_methods():
    np.testing.assert_allclose(tp.grad(functools.partial(with_default, s=3.0))(X),
                               3.0 * np.cos(X))
    m = Model(2.0)
    np.testing.assert_allclose(tp.grad(m.loss)(X), 4.0 * X)
    m.k = 5.0                                       # attributes are read at each call
    np.testing.assert_allclose(tp.grad(m.loss)(X), 10.0 * X)
    np.testing.assert_allclose(tp.grad(Model.cubic)(X), 3 * X ** 2)
    np.testing.assert_allclose(tp.grad(Model.quartic)(X), 4 * X ** 3)


# ---- print and breakpoint --------------------------------------------------------------------

def printing(x):
    y = np.sin(x)
    print("y is", y)
    z = np.sum(y * 2)
    print(z)
    return z


def test_print_runs_with_the_values_of_each_call(capsys):
    g = tp.grad(printing)(X)
    np.testing.assert_allclose(g, 2 * np.cos(X))
    out = capsys.readouterr().out.splitlines()
    assert out == [f"y is {np.sin(X)}", f"{np.sum(np.sin(X) * 2)}"]
    assert "rt.debug_print(" in tp.grad(printing).source
    with warnings.catch_warnings():
        _no_fallback()
        assert tp.jit(printing)(-X) == pytest.approx(np.sum(np.sin(-X) * 2))
    out = capsys.readouterr().out
    assert "y is" in out and f"{np.sum(np.sin(-X) * 2)}" in out


def printing_fstrings(x):
    print(f"x0={x[0]:.3f} all={x!r}", np.sum(x), sep=" | ")
    for i in range(2):
        print(f"i={i} s={np.sum(x * i)}")
    return np.sum(x ** 2)


def _fstring_lines(x):
    lines = [f"x0={x[0]:.3f} all={x!r} | {np.sum(x)}"]
    return lines + [f"i={i} s={np.sum(x * i)}" for i in range(2)]


def test_print_of_fstrings_formats_each_calls_values(capsys):
    np.testing.assert_allclose(tp.grad(printing_fstrings)(X), 2 * X)
    assert capsys.readouterr().out.splitlines() == _fstring_lines(X)
    with warnings.catch_warnings():
        _no_fallback()                       # jit: str.format in Numba's object mode
        assert tp.jit(printing_fstrings)(-X) == pytest.approx(np.sum(X ** 2))
    assert capsys.readouterr().out.splitlines() == _fstring_lines(-X)


def print_to_file(x):
    print(x, file=sys.stderr)
    return np.sum(x)


def test_print_with_file_refuses_with_the_line():
    with pytest.raises(TranspileError, match=r"test_compose_python.py:\d+.*file="):
        tp.grad(print_to_file)(X)


def stops(x):
    y = x * 2.0
    breakpoint()
    return np.sum(y)


def test_breakpoint_stops_with_the_users_variables(monkeypatch):
    seen = []
    monkeypatch.setattr(sys, "breakpointhook", lambda: seen.append(
        dict(sys._getframe(1).f_locals["env"])))
    np.testing.assert_allclose(tp.grad(stops)(X), 2.0 * np.ones(3))
    assert len(seen) == 1
    np.testing.assert_allclose(seen[0]["x"], X)
    np.testing.assert_allclose(seen[0]["y"], 2.0 * X)


# ---- builtins ----------------------------------------------------------------------------------

def builtin_mix(x):
    return sum(x) + max(x) * min(x) + abs(x[0]) * len(x) + sum([x[0], x[1]], 1.0)


def test_builtins_over_arrays_and_lists():
    want = jax.grad(lambda x: jnp.sum(x) + jnp.max(x) * jnp.min(x) + jnp.abs(x[0]) * 3
                    + x[0] + x[1] + 1.0)(X)
    np.testing.assert_allclose(tp.grad(builtin_mix)(X), want)
    np.testing.assert_allclose(tp.jit(tp.grad(builtin_mix))(X), want)


def sorted_weights(x):
    a, b, c = sorted([x[0], x[2], x[1]])
    return a + 2 * b + 3 * c


def test_sorted_of_scalars_is_differentiable():
    x = np.array([3.0, 1.0, 2.0])
    np.testing.assert_allclose(tp.grad(sorted_weights)(x), numerical_grad(sorted_weights, [x]),
                               rtol=1e-6)
    np.testing.assert_allclose(tp.grad(sorted_weights)(x),
                               jax.grad(lambda x: jnp.sum(jnp.sort(x) * jnp.arange(1, 4)))(x))


def enum_zip(x, y):
    s = 0.0
    for i, (a, b) in enumerate(zip(x, y)):
        s = s + i * a * b
    return s


def comprehension(x):
    return sum([v * v for v in x]) + sum(np.sin(v) for v in x)


def test_enumerate_zip_and_comprehensions_over_arrays():
    y = X + 1.0
    want = np.arange(3) * y
    np.testing.assert_allclose(tp.grad(enum_zip)(X, y), want)
    with warnings.catch_warnings():
        _no_fallback()                      # under jit the lengths are known: unrolled
        np.testing.assert_allclose(tp.jit(tp.grad(enum_zip))(X, y), want)
        np.testing.assert_allclose(tp.jit(tp.grad(comprehension))(X), 2 * X + np.cos(X))


def typed(x, k):
    if isinstance(k, int):
        return np.sum(x) * float(k)
    return np.sum(x)


def ambiguous(x):
    if isinstance(x, np.ndarray):
        return np.sum(x)
    return x


def test_isinstance_and_float():
    np.testing.assert_allclose(tp.grad(typed)(X, 3), 3.0 * np.ones(3))
    np.testing.assert_allclose(tp.grad(typed)(X, "a"), np.ones(3))
    with pytest.raises(TranspileError, match=r"test_compose_python.py:\d+.*isinstance"):
        tp.grad(ambiguous)(X)


# ---- argnums forms, tp.random ------------------------------------------------------------------

def two(a, b):
    return np.sum(a * b ** 2)


def test_argnums_forms():
    ja, jb = jax.grad(lambda a, b: jnp.sum(a * b ** 2), argnums=(0, 1))(X, 2 * X)
    np.testing.assert_allclose(tp.grad(two, argnums=np.int64(1))(X, 2 * X), jb)
    np.testing.assert_allclose(tp.grad(two, argnums=-1)(X, 2 * X), jb)
    ga, gb = tp.grad(two, argnums=(0, 1))(X, 2 * X)
    np.testing.assert_allclose(ga, ja)
    np.testing.assert_allclose(gb, jb)


def test_random_reachable_as_attribute():
    import transpile.random as random_module
    assert tp.random is random_module


# ---- more Python: callable instances, NamedTuple._replace, for/else, dict comprehensions,
# ---- starred unpacking

class Scaled:
    def __init__(self, a):
        self.a = a

    def __call__(self, x):
        return np.sum(x * self.a) ** 2


_SCALED = Scaled(np.array([0.5, -1.0, 2.0]))


def calls_instance(x):
    return _SCALED(x) + np.sum(x)


class Pair(NamedTuple):
    w: np.ndarray
    b: float


def replaced(p):
    q = p._replace(b=p.b * 2.0)
    return np.sum(q.w ** 2) * q.b


def for_else(x):
    acc = 0.0
    for i in range(x.shape[0]):
        if x[i] < 0:
            acc = acc - x[i]
            break
        acc = acc + x[i] ** 2
    else:
        acc = acc * 3.0
    return acc


def while_else(x):
    k, s = 0, 0.0
    while k < 3:
        s = s + x[k] ** 2
        if s > 4.0:
            break
        k += 1
    else:
        s = s * 2.0
    return s


def dict_comprehension(x):
    d = {k: x[i] ** 2 for i, k in enumerate(["a", "b"])}
    return d["a"] * d["b"]


def starred(x):
    a, *rest, c = x
    return a * np.sum(np.array(rest)) + c ** 2


@pytest.mark.parametrize("f", [calls_instance, _SCALED, for_else, while_else, dict_comprehension,
                               starred])
@pytest.mark.parametrize("x", [X, -X, np.array([2.1, 1.5, 0.1])])
def test_more_python_under_grad_jit_and_vmap(f, x):
    want = numerical_grad(f, [x.copy()])
    np.testing.assert_allclose(tp.grad(f)(x), want, rtol=1e-6, atol=1e-8)
    with warnings.catch_warnings():
        _no_fallback()
        np.testing.assert_allclose(tp.jit(tp.grad(f))(x), want, rtol=1e-6, atol=1e-8)
        assert np.isclose(tp.jit(f)(x), f(x))
    xs = np.stack([x, 0.5 * x])
    np.testing.assert_allclose(tp.vmap(f)(xs), [f(r) for r in xs], rtol=1e-12)


def test_namedtuple_replace_inside_grad():
    p = Pair(X, 2.0)
    g = tp.grad(replaced)(p)
    np.testing.assert_allclose(g.w, 2 * X * 4.0, rtol=1e-12)
    assert np.isclose(g.b, np.sum(X ** 2) * 2.0)


def appends(x):
    parts = []
    for i in range(x.shape[0]):
        parts.append(x[i] * (i + 1.0))
    return sum(parts)


def appends_rows(x):
    rows = []
    for v in x:
        rows.append(np.sin(v) * x)
    rows.extend([x, 2 * x])
    return np.sum(np.stack(rows) ** 2)


@pytest.mark.parametrize("f", [appends, appends_rows])
def test_lists_built_by_append_in_a_loop(f):
    want = numerical_grad(f, [X.copy()])
    np.testing.assert_allclose(tp.grad(f)(X), want, rtol=1e-6, atol=1e-8)
    with warnings.catch_warnings():
        _no_fallback()
        np.testing.assert_allclose(tp.jit(tp.grad(f))(X), want, rtol=1e-6, atol=1e-8)
    xs = np.stack([X, -X])
    np.testing.assert_allclose(tp.vmap(f)(xs), [f(r) for r in xs], rtol=1e-12)


def appends_on_data(x):
    parts = []
    for i in range(x.shape[0]):
        if x[i] > 0:
            parts.append(x[i])
    return sum(parts)


def test_an_append_on_a_data_branch():
    # the list's length depends on the data: its items in an array and a count (a RunList)
    for x in (X, -X, np.abs(X)):
        np.testing.assert_allclose(tp.grad(appends_on_data)(x),
                                   numerical_grad(appends_on_data, [x.copy()]), rtol=1e-6,
                                   atol=1e-8)
        assert tp.jit(appends_on_data)(x) == pytest.approx(appends_on_data(x), rel=1e-12)


def scaled_by_int(x, k):
    return np.sum(x ** 2) * k + np.sum(x[:k])


def picks_by_int(x, k):
    parts = [x * 2, x * 3, x * 4]
    return np.sum(parts[k])          # a list index: k's value is needed when generating code


@pytest.mark.parametrize("f, entries", [(scaled_by_int, 1), (picks_by_int, 3)])
def test_grad_takes_python_ints_as_values_unless_code_needs_them(f, entries):
    g = tp.grad(f)
    for k in range(3):
        want = numerical_grad(lambda z: f(z, k), [X.copy()])
        np.testing.assert_allclose(g(X, k), want, rtol=1e-6, atol=1e-8)
    assert len(g._cache) == entries      # one generated function for every k, or one per k


_CAPTURED = (0.4, 3)


def _scaled(x, c, k):
    return np.sum(np.sin(x) * c) * k


def test_a_captured_tuple_of_numbers_expands_in_a_call_and_a_tuple():
    def by_call(x):
        return _scaled(x, *_CAPTURED)

    def by_tuple(x):
        t = (x, *_CAPTURED)
        return _scaled(*t)

    x = np.linspace(0.1, 1.0, 4)
    for f in (by_call, by_tuple):
        np.testing.assert_allclose(tp.grad(f)(x), 0.4 * 3 * np.cos(x), rtol=1e-12)
        np.testing.assert_allclose(tp.jit(f)(x), _scaled(x, *_CAPTURED), rtol=1e-12)
