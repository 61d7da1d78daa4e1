"""`assert` and `raise` in transformed code.

    assert cond, msg               ->  rt.check_assert(cond, template, *values)
    raise ValueError(f"n={n}")      ->  rt.raise_error('ValueError', 'n={}', n)

A condition known while generating code decides now (a true assert emits nothing). The
message is a str.format template and its values, so f-strings with run-time values work in
every mode (Numba formats them in object mode and raises the same exception). The exception
must be a built-in class (ValueError, TypeError, IndexError, ...), as in Numba; `raise` inside
an `if` on data runs per example under vmap, and a batched assert raises when any example
fails.
"""
import builtins

import gast

from transpile.core.ir import Const
from transpile.frontend.normalize.values import RAISED, Static, Struct
from transpile.primitives import by_name

_CONVERSIONS = {-1: "", 115: "!s", 114: "!r", 97: "!a"}


def stmt_Assert(norm, node):
    cond = norm.expr(node.test, "cond")
    known, truth = norm.static_truth(cond)
    if known and truth:
        return
    template, values = message(norm, node, [node.msg] if node.msg is not None else [])
    if known:           # always false: raises whenever the function runs
        _emit(norm, "raise_error", [Const("AssertionError"), Const(template)] + values, node)
        norm.frame.returned = RAISED    # nothing after it runs: not compiled, not warned about
        return
    cond = norm.to_arg(cond, node.test)
    _emit(norm, "check_assert", [cond, Const(template)] + values, node)


def stmt_Raise(norm, node):
    if node.exc is None:
        raise norm.error(node, "a bare `raise` (re-raise) is not supported in transformed code",
                         hint="raise a built-in exception with a message: "
                         "raise ValueError('...')")
    exc, args = node.exc, []
    if isinstance(exc, gast.Call):
        if exc.keywords or any(isinstance(a, gast.Starred) for a in exc.args):
            raise norm.error(node, "raise with keyword or starred arguments is not supported "
                             "in transformed code", hint="pass one message: "
                             "raise ValueError(f'...')")
        args, exc = list(exc.args), exc.func
    cls = norm.expr(exc, "exc")
    obj = cls.obj if isinstance(cls, Static) else None
    if not (isinstance(obj, type) and issubclass(obj, BaseException)
            and getattr(builtins, obj.__name__, None) is obj):
        raise norm.error(node, "raise of something other than a built-in exception class is "
                         "not supported in transformed code",
                         hint="raise a built-in exception (ValueError, TypeError, "
                         "RuntimeError, ...) with a constant or f-string message")
    if len(args) > 1:
        raise norm.error(node, "an exception with several arguments is not supported in "
                         "transformed code", hint="pass one message: raise "
                         f"{obj.__name__}(f'...')")
    template, values = message(norm, node, args)
    _emit(norm, "raise_error", [Const(obj.__name__), Const(template)] + values, node)
    norm.frame.returned = RAISED        # nothing after it runs on this path


def _emit(norm, prim_name, args, node):
    norm.apply(by_name(prim_name), args, {}, node, "check")


def message(norm, node, args):
    """The exception's message as (a str.format template or None, its values)."""
    if not args:
        return None, []
    parts, values = [], []
    arg = args[0]

    def literal(text):
        parts.append(str(text).replace("{", "{{").replace("}", "}}"))

    def field(expr, conversion=-1, spec=""):
        v = norm.expr(expr, "t")
        if isinstance(v, Static) or (isinstance(v, Const) and conversion == -1 and not spec):
            obj = v.obj if isinstance(v, Static) else v.value
            text = format(obj, spec) if conversion == -1 else \
                ("{" + _CONVERSIONS[conversion] + "}").format(obj)
            literal(text)       # known now: written into the message
            return
        if isinstance(v, Struct):
            if v.kind == "dict":
                raise norm.error(node, "a dict in an exception message is not supported in "
                                 "transformed code")
            v = norm.to_arg(v, expr)
        parts.append("{" + _CONVERSIONS.get(conversion, "") + (":" + spec if spec else "") + "}")
        values.append(norm.to_arg(v, expr))

    if isinstance(arg, gast.Constant) and isinstance(arg.value, str):
        literal(arg.value)
    elif isinstance(arg, gast.JoinedStr):
        for piece in arg.values:
            if isinstance(piece, gast.Constant):
                literal(piece.value)
                continue
            spec = ""
            if piece.format_spec is not None:
                if not all(isinstance(p, gast.Constant) for p in piece.format_spec.values):
                    raise norm.error(node, "a computed format spec in an f-string is not "
                                     "supported in transformed code")
                spec = "".join(str(p.value) for p in piece.format_spec.values)
            field(piece.value, piece.conversion, spec)
    else:
        field(arg)
    return "".join(parts), values


STATEMENTS = {"Assert": stmt_Assert, "Raise": stmt_Raise}
