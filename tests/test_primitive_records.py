"""A primitive is one declared record (issue 24): what the transforms know about a primitive is
a field of its row, asked as a property, never looked up by the primitive's name.

The scan reads transpile/ with `ast` (transpile/primitives/, where the rows are declared, is
left out) and fails on
  * a comparison, membership test, subscript or `.get()` / `.startswith()` / `.endswith()`
    involving `prim.name` or `<...>.prim.name`, directly or through a local name bound to it
    (`name = eqn.prim.name; if name in SOME_SET`);
  * `getattr(<...prim...>, ...)`: a Primitive declares every field, so a default is never needed.
"""
import ast
import os

import pytest

from transpile.primitives import by_name
from transpile.primitives.registry import Primitive

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(ROOT, "transpile")

# attributes only a row has (once set from outside and read back with a default): a getattr of
# one of them, whatever the object is called, is a row's field read with a default
_ROW_ONLY = {"prim", "multi", "jvp_joint", "fusable", "user_rule", "opaque", "opaque_hint",
             "user_path", "aliases", "canonical_args"}


def _mentions_prim(node):
    """`prim` or `<...>.prim`: an expression that names a primitive."""
    return (isinstance(node, ast.Name) and node.id == "prim") or \
        (isinstance(node, ast.Attribute) and node.attr == "prim")


def _is_prim_name(node):
    return isinstance(node, ast.Attribute) and node.attr == "name" and _mentions_prim(node.value)


class _Scan(ast.NodeVisitor):
    def __init__(self):
        self.sites = []
        self.tainted = [set()]      # per function: local names bound to a prim.name

    def _named(self, node):
        return _is_prim_name(node) or (isinstance(node, ast.Name) and
                                       node.id in self.tainted[-1])

    def _function(self, node):
        self.tainted.append(set())
        self.generic_visit(node)
        self.tainted.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_Assign(self, node):
        # bound before the uses below it are visited (uses come later in the source)
        for t in node.targets:
            pairs = [(t, node.value)]
            if isinstance(t, ast.Tuple) and isinstance(node.value, ast.Tuple) and \
                    len(t.elts) == len(node.value.elts):
                pairs = list(zip(t.elts, node.value.elts))     # a, b = x.prim, x.prim.name
            for target, value in pairs:
                if any(_is_prim_name(v) for v in ast.walk(value)):
                    self.tainted[-1].update(sub.id for sub in ast.walk(target)
                                            if isinstance(sub, ast.Name))
        self.generic_visit(node)

    def visit_Compare(self, node):
        if any(self._named(x) for x in [node.left] + node.comparators):
            self.sites.append((node.lineno, "compares a primitive's name"))
        self.generic_visit(node)

    def visit_Subscript(self, node):
        if any(self._named(x) for x in ast.walk(node.slice)):
            self.sites.append((node.lineno, "looks up by a primitive's name"))
        self.generic_visit(node)

    def visit_Call(self, node):
        f = node.func
        if isinstance(f, ast.Attribute):
            if f.attr in ("startswith", "endswith") and self._named(f.value):
                self.sites.append((node.lineno, f"{f.attr}() on a primitive's name"))
            if f.attr in ("get", "pop", "setdefault", "__contains__") and node.args and \
                    self._named(node.args[0]):
                self.sites.append((node.lineno, "looks up by a primitive's name"))
        if isinstance(f, ast.Name) and f.id in ("getattr", "hasattr") and node.args:
            obj, attr = node.args[0], node.args[1] if len(node.args) > 1 else None
            if any(_mentions_prim(x) for x in ast.walk(obj)) or \
                    (isinstance(attr, ast.Constant) and attr.value in _ROW_ONLY):
                self.sites.append((node.lineno, f"{f.id}() on a primitive"))
        self.generic_visit(node)


def scan_source(text, filename="<string>"):
    s = _Scan()
    s.visit(ast.parse(text, filename))
    return sorted(s.sites)


def scan_package():
    found = {}
    for dirpath, _dirs, files in os.walk(PACKAGE):
        rel_dir = os.path.relpath(dirpath, ROOT).replace(os.sep, "/")
        if rel_dir.startswith("transpile/primitives") or "__pycache__" in rel_dir:
            continue
        for f in sorted(files):
            if f.endswith(".py"):
                path = os.path.join(dirpath, f)
                with open(path, encoding="utf-8") as fh:
                    sites = scan_source(fh.read(), path)
                if sites:
                    found[f"{rel_dir}/{f}"] = sites
    return found


def test_no_primitive_is_asked_by_name_outside_its_row():
    found = scan_package()
    offenders = found
    assert offenders == {}, "\n".join(f"{path}:{line}: {why}" for path, sites in
                                      sorted(offenders.items()) for line, why in sites)


@pytest.mark.parametrize("text", [
    "if eqn.prim.name == 'tape_pop': pass",
    "x = st.prim.name in KEEP",
    "def f(eqn):\n    name = eqn.prim.name\n    return name in {'a', 'b'}",
    "h = HANDLERS[st.prim.name]",
    "h = HANDLERS.get(st.prim.name)",
    "ok = prim.name.startswith('refuse_')",
    "m = getattr(prim, 'multi', None)",
    "m = getattr(eqn.prim, 'fusable', False)",
    "m = getattr(q, 'prim', None)",
    "m = getattr(p, 'aliases', ())",
])
def test_the_scan_finds_each_kind_of_site(text):
    assert scan_source(text) != []


@pytest.mark.parametrize("text", [
    "if eqn.prim is tape_pop: pass",
    "msg = f'{eqn.prim.name}() of an array'",
    "if prim.fresh or prim.view: pass",
    "core = CoreFn(name=prim.name)",
])
def test_the_scan_lets_properties_and_messages_pass(text):
    assert scan_source(text) == []


def test_a_primitive_declares_every_field():
    prim = by_name("exp")
    with pytest.raises(AttributeError):
        prim.not_a_field = True
    with pytest.raises(AttributeError):
        Primitive("probe", None, "probe", "x").fusible = True    # a misspelt flag fails loudly


def test_every_declared_field_has_a_value_and_a_line_in_the_docstring():
    from transpile.primitives import registry
    doc = registry.__doc__
    prim = by_name("exp")
    for field in Primitive.__slots__:
        getattr(prim, field)            # set in __init__: no default needed at any use site
        if not field.startswith("_"):
            assert f"\n  {field} " in doc or f"\n  {field}\n" in doc or \
                f"\n  {field}  " in doc, f"field {field!r} is not documented in registry.py"
