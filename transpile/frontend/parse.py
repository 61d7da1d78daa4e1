"""parse: a Python function object -> its gast tree, source location and name resolver.

Works for module-level functions, nested defs, lambdas (the right one when several share a
line) and functions typed into IPython/Jupyter (their cells are in linecache).
"""
import re
import builtins
import inspect
import linecache
import textwrap
from dataclasses import dataclass, field

import gast

from transpile.errors import TranspileError
from transpile.frontend.optional_locals import rewrite_optional_locals
from transpile.frontend.source_check import check_unchanged

DECORATOR_NAMES = {"grad", "value_and_grad", "jit", "vmap", "pmap", "jvp", "vjp", "jacfwd",
                   "jacrev", "jacobian", "hessian", "custom_vjp", "custom_jvp", "partial",
                   "checkpoint", "remat"}


@dataclass
class ParsedFunction:
    fn: object
    node: object                  # gast.FunctionDef or gast.Lambda
    filename: str
    line_offset: int              # add to node line numbers to get file line numbers
    lines: dict = field(default_factory=dict)   # file lineno -> source text (stripped)

    @property
    def name(self):
        return self.fn.__name__ if self.fn.__name__ != "<lambda>" else "lambda"

    def loc(self, node):
        lineno = getattr(node, "lineno", None)
        return (self.filename, lineno + self.line_offset) if lineno else (self.filename, None)

    def source_line(self, lineno):
        return self.lines.get(lineno, "")


_CACHE = {}
_EDITED_HINT = ("if the file was edited after the module was imported, reload the module "
                "(importlib.reload) or restart Python")


def parse_function(fn):
    """Parse fn's source. Results are cached by the code object (redefinitions re-parse)."""
    code = getattr(fn, "__code__", None)
    if code is None or not inspect.isfunction(fn):
        raise TranspileError(f"cannot transform {fn!r}: it is not a Python function "
                             f"(it is a {type(fn).__module__}.{type(fn).__name__})",
                             hint="pass a function defined with def or lambda (for a Numba "
                                  "dispatcher, its .py_func)")
    key = (code, code.co_filename, code.co_firstlineno)
    hit = _CACHE.get(key)
    if hit is not None and hit.fn is fn:
        return hit
    filename = code.co_filename
    checked_lines = None
    try:
        # the code object, not inspect.unwrap(fn): a functools.wraps wrapper is its own function
        lines, start = inspect.getsourcelines(code)
        checked_lines = lines
    except (OSError, TypeError):
        lines = linecache.getlines(filename)
        if not lines:
            raise TranspileError(
                f"cannot read the source of {fn.__qualname__}: transpile needs the Python "
                "source of the functions it transforms",
                filename=filename, lineno=code.co_firstlineno,
                hint="define the function in a file or notebook cell, not via exec/eval")
        start = code.co_firstlineno
        lines = lines[start - 1:]
    if fn.__name__ == "<lambda>":
        node, offset = _find_lambda("".join(lines), fn, start, filename)
        check_unchanged(fn, lam=node)      # the file may have been edited since the import
    else:
        source = textwrap.dedent("".join(lines))
        tree = _parse_text(source, filename, start, fn)
        node = next((n for n in tree.body if isinstance(n, (gast.FunctionDef,))), None)
        if node is None:
            raise TranspileError(f"cannot find the definition of {fn.__qualname__}",
                                 filename=filename, lineno=start, hint=_EDITED_HINT)
        first = min([node.lineno] + [d.lineno for d in node.decorator_list]) + start - 1
        check_unchanged(fn, lines=checked_lines, node=node,
                        first_line=first if checked_lines is not None else None)
        node.decorator_list = []
        rewrite_optional_locals(node, {n.id for n in gast.walk(node) if isinstance(n, gast.Name)})
        offset = start - 1
    all_lines = linecache.getlines(filename) or lines
    text = {i + 1: l.rstrip("\n") for i, l in enumerate(all_lines)}
    parsed = ParsedFunction(fn, node, filename, offset, text)
    _CACHE[key] = parsed
    return parsed


def _parse_text(source, filename, start, fn):
    try:
        return gast.parse(source)
    except SyntaxError:
        raise TranspileError(f"cannot parse the source of {fn.__qualname__}", filename=filename,
                             lineno=start, hint=_EDITED_HINT) from None


def _find_lambda(text, fn, start, filename):
    """The lambda's node in the lines that hold it: parse from each `lambda` keyword (longest
    prefix that parses) and pick the one with fn's parameters (and body column, if several)."""
    want = list(fn.__code__.co_varnames[:fn.__code__.co_argcount])
    found = []
    for m in re.finditer(r"\blambda\b", text):
        o = m.start()
        for end in range(len(text), o, -1):
            try:
                tree = gast.parse("(" + text[o:end] + ")", mode="eval")
            except SyntaxError:
                continue
            lam = next((n for n in gast.walk(tree) if isinstance(n, gast.Lambda)), None)
            if lam is not None and [a.id for a in lam.args.args] == want:
                line = text.count("\n", 0, o)
                col = o - (text.rfind("\n", 0, o) + 1)
                found.append((lam, start - 1 + line, col))
            break
    if not found:
        raise TranspileError("cannot find the lambda's source", filename=filename, lineno=start,
                             hint=_EDITED_HINT)
    if len(found) > 1:
        positions = [p for p in fn.__code__.co_positions()
                     if p[0] is not None and p[2] is not None and (p[2], p[3]) != (0, 0)]
        if positions:
            first_line = min(p[0] for p in positions)
            body_col = min(p[2] for p in positions if p[0] == first_line)
            same_line = [f for f in found if f[1] + 1 == first_line and f[2] < body_col]
            if same_line:
                found = [max(same_line, key=lambda f: f[2])]
    lam, offset, _ = found[0]
    return lam, offset


class Resolver:
    """Resolves free names of a function: closure cells, then globals, then builtins."""

    def __init__(self, fn):
        self.fn = fn
        self.globals = fn.__globals__
        code = fn.__code__
        cells = fn.__closure__ or ()
        self.closure = dict(zip(code.co_freevars, cells))

    def has(self, name):
        return name in self.closure or name in self.globals or hasattr(builtins, name)

    def lookup(self, name):
        """Returns (value, where) where `where` says how to re-read it at call time."""
        if name in self.closure:
            try:
                return self.closure[name].cell_contents, ("closure", self.closure[name])
            except ValueError:
                raise NameError(f"free variable {name!r} is not bound yet") from None
        if name in self.globals:
            return self.globals[name], ("global", self.globals, name)
        if hasattr(builtins, name):
            return getattr(builtins, name), ("builtin", name)
        raise NameError(name)


def read_binding(where):
    """Re-read a free variable at call time (so globals changed later are seen)."""
    kind = where[0]
    if kind == "closure":
        return where[1].cell_contents
    if kind == "global":
        return where[1][where[2]]
    if kind == "attr":             # an attribute of an object (self.w of a bound method)
        return getattr(where[1], where[2])
    if kind == "item":             # an entry of a global (or closure) tuple, list or dict
        return read_binding(where[1])[where[2]]
    if kind == "structure":        # the structure of such a container (the code unrolls it)
        return container_structure(read_binding(where[1]))
    if kind == "id":               # which object is bound there (the code holds that one)
        return id(read_binding(where[1]))
    return getattr(builtins, where[1])


def container_structure(obj):
    """The types, lengths and keys of nested tuples/lists/dicts ("leaf" for anything else):
    code generated for a global container holds while this stays equal."""
    if type(obj) in (tuple, list):
        return (type(obj).__name__,) + tuple(container_structure(v) for v in obj)
    if type(obj) is dict:
        return ("dict",) + tuple((k, container_structure(v)) for k, v in obj.items())
    return "leaf"


UNROLLED_CONTAINER_ITEMS = 64    # a longer global list of arrays or numbers is one array


def unrolled_container(obj):
    """A tuple/list/dict of at most UNROLLED_CONTAINER_ITEMS entries (dict keys strings or
    ints, sortable), nested containers likewise."""
    if type(obj) not in (tuple, list, dict) or len(obj) > UNROLLED_CONTAINER_ITEMS:
        return False
    if type(obj) is dict:
        keys = list(obj)
        if not (all(type(k) is str for k in keys) or all(type(k) is int for k in keys)):
            return False
        values = list(obj.values())
    else:
        values = list(obj)
    return all(unrolled_container(v) if type(v) in (tuple, list, dict) else True
               for v in values)
