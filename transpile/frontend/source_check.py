"""Is the source text transpile read the code that runs? (a file edited after import)

transpile reads a function's source from its file (or the notebook's linecache). If the file was
edited after the module was imported, `grad(mod.loss)` would differentiate the *new* text while
`mod.loss` keeps running the old code: silently wrong numbers. So the text is compiled again
and compared with the function's code object on what the source determines: names, arguments,
constants, flags and the line structure, of the function and of every function nested in it.

The text is compiled in the same context as the original, so that nothing but an edit can make
a difference: the function's own indentation is kept (no dedent, which would change multi-line
strings), a method is compiled inside `class <Name>:` (so private names are mangled and `super()`
works the same way) and a closure inside a function that binds its free variables (so they stay
free variables). If the text cannot be compiled that way the check is skipped, never guessed.
"""
import gast
import ast
import types

from transpile.errors import TranspileError

_FLAGS = 0x04 | 0x08 | 0x20 | 0x80 | 0x100 | 0x200   # *args **kw generator coroutine async-gen
_FUTURE = 0x1FE0000                                    # __future__ compiler flags


def check_unchanged(fn, lines=None, lam=None, node=None, first_line=None):
    """Raise TranspileError if fn's code differs from the source text read for it.

    lines: the source lines of a def (with decorators, as in the file); node, first_line: the
    def's parsed node and the file line it starts on (its first decorator); lam: the lambda's
    AST node (gast) when fn is a lambda."""
    code = fn.__code__
    if node is not None and (getattr(node, "name", code.co_name) != code.co_name or
                             first_line not in (None, code.co_firstlineno)):
        _refuse(fn)
    try:
        if lam is not None:
            new = _compile_lambda(fn, lam)
        else:
            new = _compile_def(fn, lines)
    except (SyntaxError, ValueError, TypeError, RecursionError):
        return
    if new is None:
        return
    if _fingerprint(new) != _fingerprint(code):
        _refuse(fn)


def _refuse(fn):
    code = fn.__code__
    raise TranspileError(
            f"the source of {fn.__qualname__} changed after it was imported: "
            f"{code.co_filename} no longer holds the code that runs, so transforming the text "
            "would not match what the function computes",
            filename=code.co_filename, lineno=code.co_firstlineno,
            construct=f"def {fn.__name__}" if fn.__name__ != "<lambda>" else "lambda",
            hint="reload the module (importlib.reload(module)) or restart Python, then "
                 "transform the function again")


def _enclosing_class(fn):
    parts = fn.__qualname__.split(".")
    if len(parts) >= 2 and parts[-2] != "<locals>" and parts[-2].isidentifier():
        return parts[-2]
    return None


def _free(fn):
    return [n for n in fn.__code__.co_freevars if n != "__class__"]


def _compile_def(fn, lines):
    if not lines:
        return None
    first = next((l for l in lines if l.strip()), "")
    indent = len(first) - len(first.lstrip())
    src, cls, free = [], _enclosing_class(fn), _free(fn)
    if indent == 0 and (cls or free):
        return None
    if free:
        src.append("def __transpile_outer__():\n")
    if cls:
        if free and indent < 2:
            return None
        src.append((" " if free else "") + f"class {cls}:\n")
    if not src and indent:
        src.append("if 1:\n")
    body = "".join(lines)
    if not body.endswith("\n"):
        body += "\n"
    src.append(body)
    if free:
        src.append(" " * (1 if cls else indent) + " = ".join(free) + " = None\n")
    flags = fn.__code__.co_flags & _FUTURE
    module = compile("".join(src), fn.__code__.co_filename, "exec", flags=flags, dont_inherit=True)
    return _find(module, fn.__code__.co_name)


def _compile_lambda(fn, lam):
    node = gast.gast_to_ast(lam)
    body = [ast.Expr(node)]
    cls, free = _enclosing_class(fn), _free(fn)
    if cls:
        body = [ast.ClassDef(name=cls, bases=[], keywords=[], body=body, decorator_list=[])]
    if free:
        assign = ast.Assign([ast.Name(n, ast.Store()) for n in free], ast.Constant(None))
        args = ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[],
                             kw_defaults=[], kwarg=None, defaults=[])
        body = [ast.FunctionDef(name="__transpile_outer__", args=args, body=body + [assign],
                                decorator_list=[], returns=None)]
    module = ast.Module(body=body, type_ignores=[])
    ast.fix_missing_locations(module)
    flags = fn.__code__.co_flags & _FUTURE
    code = compile(module, fn.__code__.co_filename, "exec", flags=flags, dont_inherit=True)
    return _find(code, "<lambda>")


def _find(code, name):
    """The first code object named `name` below `code` (breadth first)."""
    queue = [code]
    while queue:
        c = queue.pop(0)
        if c is not code and c.co_name == name:
            return c
        queue += [k for k in c.co_consts if isinstance(k, types.CodeType)]
    return None


def _const_key(k):
    if isinstance(k, types.CodeType):
        return ("code", _fingerprint(k))
    if isinstance(k, (tuple, frozenset)):
        items = [_const_key(i) for i in k]
        return (type(k).__name__, tuple(sorted(items, key=repr)) if isinstance(k, frozenset)
                else tuple(items))
    return (type(k).__name__, repr(k))


def _fingerprint(code):
    first = code.co_firstlineno
    lines = tuple(sorted({ln - first for _, _, ln in code.co_lines() if ln is not None}))
    return (code.co_name, code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount,
            code.co_flags & _FLAGS, code.co_varnames, code.co_cellvars,
            tuple(n for n in code.co_freevars if n != "__class__"), code.co_names,
            tuple(_const_key(k) for k in code.co_consts), lines)
