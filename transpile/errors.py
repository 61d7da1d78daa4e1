"""Errors raised by transpile. Every refusal names the user's file:line and the construct."""
import os

from transpile_runtime import diagnostics

# frames in transpile/ are never the user's call site for a warning
diagnostics.add_internal_dir(os.path.dirname(os.path.abspath(__file__)))


class TranspileError(Exception):
    """A function could not be transformed.

    The message names the user's source location (file:line), the construct that was refused,
    and what to do instead.
    """

    def __init__(self, message, filename=None, lineno=None, construct=None, hint=None):
        self.filename = filename
        self.lineno = lineno
        self.construct = construct
        self.hint = hint
        where = f"{filename}:{lineno}: " if filename else ""
        text = f"{where}{message}"
        if construct:
            text += f"\n    construct: {construct}"
        if hint:
            text += f"\n    hint: {hint}"
        super().__init__(text)


class UnsupportedSyntax(TranspileError):
    """The function uses Python syntax outside the supported subset."""


class ShapesNeeded(UnsupportedSyntax):
    """The code needs an argument's shape when it is generated (the length of an array a
    comprehension runs over): transforms that keep their arguments' shapes retry with the
    shapes known (transpile/api/autodiff.py), others refuse with this message."""


class NoRuleError(TranspileError):
    """A called object has neither Python source nor a registered rule."""


# One class for the whole project, defined at the bottom layer so transpile_runtime can warn too.
from transpile_runtime.diagnostics import TranspileWarning  # noqa: E402,F401


class ShapeMismatch(TranspileError, ValueError):
    """jit found, while specializing to the arguments' shapes, an operation whose operands'
    shapes do not fit (a broadcast, a matmul): the call would fail there, so it fails now,
    before any code runs, at the user's line and with both shapes."""


class IndexOutOfBounds(ShapeMismatch, IndexError):
    """jit found, while specializing, a constant index past the end of an axis of known
    length: the call would fail there, so it fails now (an IndexError, at the user's line)."""


class NoAttribute(TranspileError, AttributeError):
    """An attribute that the value does not have (`x.mean()` of a string passed where an array
    was expected): Python's AttributeError, at the user's line."""


class ReadBeforeSet(TranspileError, UnboundLocalError):
    """A local variable read where no path has bound it yet (the first iteration of a loop
    reading the value a later statement of the body binds): Python's UnboundLocalError, at
    the user's line."""
