"""Generate the documentation that must never drift from the code.

    python -m transpile.doc_tables            # rewrite the generated blocks in docs/*.md
    python -m transpile.doc_tables --check    # exit 1 if any block is out of date

docs/supported.md: the NumPy-coverage table comes from the primitive table
(`transpile.primitives.all_primitives()` and `registry.describe_rules`); the Python-subset table
comes from *running* the transforms on one small function per construct (supported means grad
produced source; otherwise the error transpile raises is quoted).
docs/how_it_works.md: the generated source for grad, vmap and jit of one function, produced by
the transforms themselves.

Generated blocks sit between `<!-- BEGIN GENERATED: name -->` and `<!-- END GENERATED: name -->`;
everything else in those files is hand-written and left alone. tests/test_docs_tables.py
regenerates the blocks and fails on any difference.
"""
import argparse
import builtins
import functools
import importlib.util
import operator
import os
import re
import sys

import numpy as np

import transpile
from transpile.primitives import registry

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(REPO, "docs")

_OPS = {"+": "a + b", "-": "a - b", "*": "a * b", "/": "a / b", "**": "a ** b", "neg": "-a",
        "pos": "+a", "@": "a @ b", "getitem": "a[i]", "<": "a < b", "<=": "a <= b",
        ">": "a > b", ">=": "a >= b", "==": "a == b", "!=": "a != b", "//": "a // b",
        "%": "a % b", "not": "not a", "invert": "~a", "&": "a & b", "|": "a | b", "^": "a ^ b"}

KIND_ORDER = ["elementwise", "reduction", "cumulative", "structure", "index", "linalg",
              "pointwise", "axis", "fft", "stack", "creation", "creation_like", "query",
              "helper"]
KIND_TITLES = {
    "elementwise": "Elementwise (broadcasting; reverse mode un-broadcasts)",
    "reduction": "Reductions (axis, keepdims)",
    "cumulative": "Cumulative",
    "structure": "Shapes and structure",
    "index": "Indexing",
    "linalg": "Products and linear algebra",
    "pointwise": "Pointwise in one argument (np.interp, np.polyval in x)",
    "creation": "Array creation (no derivative)",
    "creation_like": "Creation from another array (no derivative)",
    "query": "Queries and comparisons (no derivative)",
    "helper": "Runtime helpers that generated derivative code calls (differentiable again)",
    "axis": "Along an axis (scipy.special softmax family)",
    "fft": "numpy.fft (linear; reverse mode applies the transpose)",
    "stack": "Densities of vectors (scipy.stats multivariate_normal, dirichlet)",
}


# ---- NumPy coverage -----------------------------------------------------------------------------


def _spellings(prim):
    """How user code can call this primitive: numpy names, operators, builtins, methods."""
    names = list(prim.aliases)          # scipy.special.erf, scipy.stats.norm.pdf
    for f in registry._KEEPALIVE:
        if registry.lookup(f) is not prim:
            continue
        mod = getattr(f, "__module__", None)
        name = getattr(f, "__name__", None)
        if mod == "_operator" or getattr(operator, name or "", None) is f:
            continue                                       # shown through prim.op below
        if name and getattr(np, name, None) is f:
            names.append(f"np.{name}")
        elif name and getattr(np.linalg, name, None) is f:
            names.append(f"np.linalg.{name}")
        elif name and getattr(np.fft, name, None) is f:
            names.append(f"np.fft.{name}")
        elif name and getattr(builtins, name, None) is f:
            names.append(f"{name}()")
        elif prim.path.startswith("rt."):
            if not prim.aliases:
                names.append(prim.path)
        elif name:
            names.append(name)
    if prim.op:
        names.insert(0, _OPS.get(prim.op, prim.op))
    for meth, (p, _) in registry.METHODS.items():
        if p is prim:
            names.append(f"x.{meth}" if meth in ("T", "shape", "ndim", "size", "dtype")
                         else f"x.{meth}()")
    seen, out = set(), []
    for n in names or [prim.path]:
        if n not in seen:
            seen.add(n)
            out.append(n)
    return out


def _mark(flag):
    return "yes" if flag else "—"


def _batch(prim):
    b = prim.batch
    if b is None:
        return "—"
    return b if isinstance(b, str) else "rule"


def coverage_table():
    prims = registry.all_primitives(builtin_only=True)
    by_kind = {}
    for p in prims:
        by_kind.setdefault(p.batch if isinstance(p.batch, str) else "other", []).append(p)
    kinds = [k for k in KIND_ORDER if k in by_kind] + sorted(k for k in by_kind
                                                             if k not in KIND_ORDER)
    n_user = sum(1 for p in prims if not p.path.startswith("rt.") or p.aliases)
    lines = [f"{len(prims)} primitives: {n_user} for user code, {len(prims) - n_user} runtime "
             "helpers. *grad* = reverse-mode rule (or no derivative by definition), *jvp* = "
             "forward-mode rule, *vmap kind* = the batching entry in the table (`describe_rules`), "
             "*fused* = has a scalar lowering for jit's loop fusion.", ""]
    for kind in kinds:
        group = sorted(by_kind[kind], key=lambda p: p.name)
        lines += [f"### {KIND_TITLES.get(kind, kind)}", "",
                  "| primitive | how you write it | grad | jvp | vmap kind | fused |",
                  "|---|---|---|---|---|---|"]
        for p in group:
            r = registry.describe_rules(p)
            spell = ", ".join(f"`{s}`" for s in _spellings(p))
            grad = "zero / none" if p.nondiff else _mark(r["grad"])
            jvp = "zero / none" if p.nondiff else _mark(r["jvp"])
            lines.append(f"| {p.name} | {spell} | {grad} | {jvp} | {_batch(p)} | "
                         f"{_mark(r['fusion'])} |")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


# ---- Python subset: probed by running the transforms ------------------------------------------

# One function per construct. They are only ever transformed (never run) by subset_table().


def c_arith(x):
    return x * 2.0 + x ** 2 - x / 3.0


def c_compare_where(x):
    return np.sum(np.where(x > 0, x, -x))


def c_tuple_unpack(x):
    a, b = x * 2.0, x + 1.0
    return np.sum(a * b)


def c_augassign(x):
    y = x * 1.0
    y += x
    y *= 2.0
    return np.sum(y)


def c_containers(x):
    d = {"a": x, "b": [x * 2.0, x]}
    return np.sum(d["a"] + d["b"][0])


def c_index_slice(x):
    return x[0] + np.sum(x[1:]) + np.sum(x[::2])


def c_methods(x):
    return x.reshape(-1).sum() + x.T.mean()


def c_user_function(x):
    return np.sum(c_arith(x))


def c_nested_def(x):
    def sq(v):
        return v * v
    return np.sum(sq(x))


def c_lambda(x):
    sq = lambda v: v * v  # noqa: E731
    return np.sum(sq(x))


def c_static_if(x, flag=True):   # probed as grad(f)(x) with flag left at its default
    if flag:
        return np.sum(x)
    return np.sum(x * 2.0)


def c_shape_if(x):
    if x.ndim == 1:
        return np.sum(x)
    return np.sum(x * 2.0)


def c_data_if(x):
    if np.sum(x) > 0:
        y = x * 2.0
    else:
        y = -x
    return np.sum(y)


def c_ifexp(x):
    return np.sum(x) if np.sum(x) > 0 else -np.sum(x)


def c_for_range(x):
    s = 0.0
    for i in range(3):
        s = s + np.sum(x * i)
    return s


def c_for_array(x):
    s = 0.0
    for v in x:
        s = s + v * v
    return s


def c_while(x):
    y = np.sum(x)
    while y > 1.0:
        y = y * 0.5
    return y


def c_listcomp(x):
    return np.sum(np.stack([x * i for i in range(3)]))


def c_setitem(x):
    y = np.zeros(3)
    y[0] = np.sum(x)
    return np.sum(y)


def c_try(x):
    try:
        return np.sum(x)
    except ValueError:
        return 0.0


def c_with(x):
    with np.errstate(all="ignore"):
        return np.sum(np.log(x))


def c_assert_raise(x):
    assert x.ndim == 1, f"expected a vector, got {x.ndim} dimensions"
    if np.sum(x) < 0.0:
        raise ValueError("negative total")
    return np.sum(x)


def c_print(x):
    print("x is", x)
    return np.sum(x)


def c_breakpoint(x):
    breakpoint()
    return np.sum(x)


def c_return_in_loop(x):
    s = 0.0
    for v in x:
        if v > 1.0:
            return s
        s = s + v * v
    return s


def c_builtins(x):
    return sum(x) + max(x) * min(x) + abs(x[0]) * len(x)


def c_tree_util(x):
    params = {"w": x, "b": x[0]}
    scaled = transpile.tree_map(lambda p: 2.0 * p, params)
    return sum(np.sum(leaf) for leaf in transpile.tree_leaves(scaled))


def c_partial(x):
    f = functools.partial(c_static_if, flag=False)
    return f(x)


def _c_star(*args, scale=1.0, **kw):
    return sum(np.sum(a * scale) for a in args) + np.sum(kw["z"])


def c_star_args(x):
    return _c_star(x, x * 2.0, scale=3.0, z=x)


def c_dict_methods(x):
    d = {"a": x, "b": x * 2.0}
    t = np.sum(d.get("c", 0.0))
    for k, v in d.items():
        t = t + np.sum(v)
    return t + sum(np.sum(d[k]) for k in sorted(d)) + sum(np.sum(v) for v in d.values())


def c_random_state(x):
    return np.sum(x * np.random.RandomState(0).randn(3))


def c_default_rng(x):
    rng = np.random.default_rng(0)
    t = 0.0
    for i in range(2):
        t = t + np.sum(x * rng.normal(0.0, 1.0, 3))
    return t


SUBSET = [
    ("arithmetic operators `+ - * / ** @`, unary `-`", c_arith),
    ("comparisons inside `np.where`", c_compare_where),
    ("tuple unpacking `a, b = ...`", c_tuple_unpack),
    ("augmented assignment `+=`, `*=`", c_augassign),
    ("dict / list / tuple literals of known structure", c_containers),
    ("indexing and slicing reads `x[0]`, `x[1:]`, `x[::2]`", c_index_slice),
    ("array methods and attributes `x.sum()`, `x.T`", c_methods),
    ("calling your own functions (inlined)", c_user_function),
    ("nested `def`", c_nested_def),
    ("`lambda`", c_lambda),
    ("`if` on a static (bool/int/str) argument", c_static_if),
    ("`if` on shapes (`x.ndim`, `x.shape`)", c_shape_if),
    ("`if` on array data", c_data_if),
    ("conditional expression on array data", c_ifexp),
    ("`for i in range(n)`", c_for_range),
    ("`for v in array`", c_for_array),
    ("`while` on array data", c_while),
    ("list comprehension", c_listcomp),
    ("subscript assignment `y[i] = v`", c_setitem),
    ("`try` / `except`", c_try),
    ("`with`", c_with),
    ("`assert`, `raise` of a built-in exception (also compiled by `jit`)", c_assert_raise),
    ("`print(...)` (runs with each call's values, like jax.debug.print)", c_print),
    ("`breakpoint()` (the debugger sees your variables in `env`)", c_breakpoint),
    ("`return` inside a loop", c_return_in_loop),
    ("builtins `sum`, `max`, `min`, `abs`, `len` over arrays", c_builtins),
    ("`tree_map`, `tree_leaves` inside the function", c_tree_util),
    ("`functools.partial` inside the function", c_partial),
    ("`*args` / `**kwargs` parameters (bound to a tuple / dict)", c_star_args),
    ("dicts of known keys: `for k in d`, `d.items()`, `.values()`, `.keys()`, `.get()`, "
     "`sorted(d)`", c_dict_methods),
    ("`np.random.RandomState(seed).randn(...)` (a value not differentiated)", c_random_state),
    ("draws from `np.random.default_rng(seed)`, `np.random.RandomState(seed)` or a "
     "`np.random.Generator` argument, in loops too (`jit` compiles them: NumPy's numbers)",
     c_default_rng),
]


def _probe(fn):
    x = np.linspace(0.5, 1.5, 3)
    try:
        transpile.grad(fn).source_for(x)
        return "yes", ""
    except Exception as e:
        first = str(e).splitlines()[0]
        first = re.sub(r"^\S*doc_tables\.py:\d+: ", "", first)
        first = re.sub(r"0x[0-9a-f]+", "0x…", first)
        return "no", first.replace("|", "\\|")


def subset_table():
    lines = ["| construct | grad | what transpile says |", "|---|---|---|"]
    for title, fn in SUBSET:
        ok, msg = _probe(fn)
        lines.append(f"| {title} | {ok} | {msg} |")
    return "\n".join(lines) + "\n"


# ---- how it works: real generated code -----------------------------------------------------------


def _clean(text):
    return text.replace(REPO + os.sep, "")


def _snippet_module():
    path = os.path.join(DOCS, "snippets", "how_it_works.py")
    spec = importlib.util.spec_from_file_location("transpile_docs_how_it_works", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def how_it_works_blocks():
    snip = _snippet_module()
    x = np.linspace(-1.0, 1.0, 5)
    blocks = {}
    blocks["core"] = _clean(transpile.show(snip.loss, x))
    blocks["grad"] = _clean(transpile.grad(snip.loss).source_for(x))
    jit, vmap = getattr(transpile, "jit", None), getattr(transpile, "vmap", None)
    if callable(vmap) and not isinstance(vmap, type(os)):
        blocks["vmap"] = _clean(transpile.show(vmap(snip.loss), np.ones((3, 5))))
    else:
        blocks["vmap"] = "# vmap is not in this build yet (issue #4): regenerate with\n" \
                         "#   python -m transpile.doc_tables\n"
    if callable(jit) and not isinstance(jit, type(os)):
        blocks["jit"] = _clean(jit(transpile.grad(snip.loss)).source_for(x))
    else:
        blocks["jit"] = "# jit is not in this build yet (issue #5): regenerate with\n" \
                        "#   python -m transpile.doc_tables\n"
    return {k: "```python\n" + v.rstrip() + "\n```\n" for k, v in blocks.items()}


# ---- writing the blocks --------------------------------------------------------------------------


def generated_blocks():
    """{file name: {block name: text}}"""
    return {"supported.md": {"numpy-coverage": coverage_table(), "python-subset": subset_table()},
            "how_it_works.md": how_it_works_blocks()}


_BLOCK = re.compile(r"(<!-- BEGIN GENERATED: (?P<name>[\w-]+) -->\n)(?P<body>.*?)"
                    r"(<!-- END GENERATED: (?P=name) -->)", re.S)


def render(text, blocks):
    found = set()

    def sub(m):
        name = m.group("name")
        if name not in blocks:
            return m.group(0)
        found.add(name)
        return m.group(1) + blocks[name] + m.group(4)
    out = _BLOCK.sub(sub, text)
    missing = set(blocks) - found
    if missing:
        raise ValueError(f"no marker for generated block(s) {sorted(missing)}")
    return out


def stale_files(write=False):
    stale = []
    for fname, blocks in generated_blocks().items():
        path = os.path.join(DOCS, fname)
        with open(path) as f:
            text = f.read()
        new = render(text, blocks)
        if new != text:
            stale.append(path)
            if write:
                with open(path, "w") as f:
                    f.write(new)
    return stale


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m transpile.doc_tables", description=__doc__)
    p.add_argument("--check", action="store_true", help="do not write; exit 1 if out of date")
    a = p.parse_args(argv)
    stale = stale_files(write=not a.check)
    for path in stale:
        print(("out of date: " if a.check else "rewrote ") + os.path.relpath(path, REPO))
    return 1 if (a.check and stale) else 0


if __name__ == "__main__":
    sys.exit(main())
