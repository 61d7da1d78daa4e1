"""Run-time errors of compiled code, told at the user's line.

Numba's compiled code raises without a location (`IndexError: index is out of bounds`: no
index, no shape, no line). When a compiled specialization raises, `located` runs the
generated NumPy version of the same specialization once more on copies of the arguments
(its standard output captured, so prints do not repeat): NumPy raises its own message (the
index and the axis length, both shapes of a mismatch) from a line of the generated file, and
the `# line N:` comment above that line names the user's line. The error is raised again

* with the user's file:line in front of NumPy's message (for errors of NumPy operations; an
  `assert` or `raise` of the user keeps its own message),
* with a last traceback frame at the user's line (so tracebacks and `pdb.pm()` land there),
* with a note naming the generated file and line (`e.__notes__`, shown under the message).

When the NumPy version does not raise the same kind of error, the compiled code's own error is
kept (with a note). Called from compile/specialization.py's Compiled.run's exception path only.
"""
import types
import contextlib
import io
import linecache
import os
import re
import warnings

import numpy as np
from transpile.core import ir

from transpile.primitives.internal.debugging import debug_breakpoint

GENERATED_MODULE = "transpile_generated."
# "# line 7: y = x[i]", "# adjoint of line 7: ...", "# helpers.py:12: ..."
_COMMENT = re.compile(r"^\s*#\s*(?:(?:adjoint|tangent)\s+of\s+)?(?:line\s+(\d+)|([^\s:#]+):(\d+)):")
# the user's own raise/assert: their message is kept as it is
_USER_RAISES = ("rt.raise_error(", "rt.check_assert(", "rt.batch_check_assert(")


def located(compiled, e, leaves, free):
    """The exception to raise for `e`, raised by `compiled` (a compile/specialization.py Compiled)
    called on `leaves` and `free`: `e` itself when nothing better can be said."""
    try:
        return _located(compiled, e, leaves, free) or e
    except Exception:       # noqa: BLE001  (explaining an error must never hide it)
        return e


def _located(compiled, e, leaves, free):
    if getattr(e, "_transpile_located", False) or compiled.backend_name in ("cupy", "cuda"):
        return None
    if generated_frame(e.__traceback__) is not None:
        return None     # the NumPy version raised: its frame stays (core/tracebacks.py adds the user's)
    if any(q.prim is debug_breakpoint for q in _eqns(compiled.core)):   # must not run twice
        return None
    source = _rerun(compiled, leaves, free)
    if source is None or not isinstance(source, type(e)) and not isinstance(e, type(source)):
        _note(e, f"(in jit({compiled.jit.__name__}); compiled code: "
              f"{compiled.plan.path or 'not written'})")
        e._transpile_located = True
        return None
    gen = generated_frame(source.__traceback__)
    if gen is None:
        return None
    path, gen_line = gen
    user = user_line(compiled.core, path, gen_line)
    if user is None:
        return None
    filename, lineno = user
    text = (linecache.getline(path, gen_line) or "").strip()
    if str(e).startswith(f"{filename}:{lineno}: "):
        new = _copy(e, str(e))      # compiled code raised transpile's own message (shape_errors)
    elif any(r in text for r in _USER_RAISES):
        new = _copy(source, str(source))
    else:
        new = _copy(source, f"{filename}:{lineno}: {source}")
    if new is None:
        return None
    where = f"in jit({compiled.jit.__name__})" if hasattr(compiled, "jit") else ""
    _note(new, f"({where}; generated code: {path}:{gen_line}: {text}"
          + (f"; compiled module: {compiled.plan.path}" if compiled.plan.path and
             compiled.plan.path != path else "") + ")")
    new._transpile_located = True
    new.__context__ = e
    new.__suppress_context__ = True
    return at_user_line(new, filename, lineno, _function_name(compiled))


def generated_frame(tb):
    """(path, line) of the innermost frame of generated code in a traceback, or None."""
    found = None
    while tb is not None:
        g = tb.tb_frame.f_globals
        if str(g.get("__name__", "")).startswith(GENERATED_MODULE):
            found = (tb.tb_frame.f_code.co_filename, tb.tb_lineno)
        tb = tb.tb_next
    return found


def user_line(core, path, line):
    """The user's (file, line) of a generated line: the nearest `# line N:` comment above it
    (a comment naming another file, for a function that was inlined, gives that file)."""
    lines = linecache.getlines(path)
    if not lines or line > len(lines):
        return None
    indent = len(lines[line - 1]) - len(lines[line - 1].lstrip())
    for k in range(line - 1, -1, -1):
        text = lines[k]
        if text.lstrip().startswith("def "):
            break
        m = _COMMENT.match(text)
        if m is None or len(text) - len(text.lstrip()) > indent:
            continue
        if m.group(1):
            return core.filename, int(m.group(1))
        base, n = m.group(2), int(m.group(3))
        for (fname, _) in getattr(core, "source_lines", {}):
            if os.path.basename(fname) == base:
                return fname, n
        return None
    return None


def at_user_line(exc, filename, lineno, funcname):
    """`exc` with a last traceback frame at filename:lineno (as if raised there), after the
    frames it already has: traceback printers show the user's line and `pdb.pm()` stops at
    it."""
    before = exc.__traceback__
    exc.__traceback__ = None
    try:
        # the statement spans the user's line exactly (no carets under it in tracebacks)
        text = linecache.getline(filename, lineno)
        indent = len(text) - len(text.lstrip())
        name = "e" + "_" * max(0, len(text.strip()) - len("raise e"))
        code = _raise_code(filename, lineno, indent, name)
        code = code.replace(co_name=funcname or "<transformed>")
        exec(code, {name: exc, "__name__": "transpile_user_line"})
    except BaseException as raised:       # noqa: BLE001  (the exception raised just above)
        if raised is not exc or raised.__traceback__ is None:
            exc.__traceback__ = before
            return exc
        last = raised.__traceback__
        while last.tb_next is not None:
            last = last.tb_next            # the frame at the user's line
        frames = []
        tb = before
        while tb is not None:
            frames.append((tb.tb_frame, tb.tb_lasti, tb.tb_lineno))
            tb = tb.tb_next
        out = last
        for frame, lasti, line in reversed(frames):
            out = types.TracebackType(out, frame, lasti, line)
        exc.__traceback__ = out
        return exc
    exc.__traceback__ = before
    return exc


def _raise_code(filename, lineno, indent, name):
    """Code that raises `name` from column `indent` of line `lineno` of `filename`."""
    if indent and lineno > 1:
        src = "\n" * (lineno - 2) + "if 1:\n" + " " * indent + "raise " + name
    else:
        src = "\n" * (lineno - 1) + "raise " + name
    return compile(src, filename, "exec")


def _rerun(compiled, leaves, free):
    """The NumPy version's exception on copies of the arguments (None if it does not raise)."""
    args = [np.array(v, copy=True) if isinstance(v, np.ndarray) else v for v in leaves]
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        try:
            compiled.plan.eager_callable()(*args, *free)
        except Exception as r:      # noqa: BLE001  (the error to explain)
            return r
    return None


def _copy(exc, message):
    try:
        new = type(exc)(message)
    except Exception:       # noqa: BLE001  (an exception class with another signature)
        return None
    if str(new) != message:
        return None
    for n in getattr(exc, "__notes__", ()):
        _note(new, n)
    return new


def _note(exc, text):
    if hasattr(exc, "add_note"):
        exc.add_note(text)


def _function_name(compiled):
    return getattr(compiled.jit, "__name__", None) or "<transformed>"


def _eqns(core):
    try:
        return list(ir.walk_eqns(core.body))
    except Exception:       # noqa: BLE001
        return []


_HEADER = re.compile(r"^# (?:Generated|Lowered) by transpile(?:\.jit)? (?:for \S+ \(\S+\) )?from "
                     r"(.+):(\d+) \((.+)\)\.\s*$")


def origin_of(path):
    """(user's file, function name) from a generated file's first line, or None."""
    m = _HEADER.match(linecache.getline(path, 1))
    return (m.group(1), m.group(3)) if m else None


def users_line_for_generated(path, line):
    """(file, line, function name) of the user's line that a line of a generated file came
    from (its `# line N:` comment), for tracebacks of the eager transforms; None if unknown."""
    origin = origin_of(path)
    if origin is None:
        return None
    filename, name = origin

    class _Core:      # what user_line reads: the function's file and the files it inlined
        pass
    core = _Core()
    core.filename = filename
    core.source_lines = {(os.path.join(os.path.dirname(filename), f), 0): ""
                         for f in _sibling_names(filename)}
    where = user_line(core, path, line)
    if where is None or not os.path.exists(where[0]):
        return None
    return where[0], where[1], name.rsplit(".", 1)[-1]


def _sibling_names(filename):
    try:
        return [f for f in os.listdir(os.path.dirname(filename)) if f.endswith(".py")]
    except OSError:
        return []


def frame_at(filename, lineno, funcname):
    """A traceback entry (frame, lasti, line) at the user's line, for a traceback to show."""
    class _Marker(Exception):
        pass
    marker = at_user_line(_Marker(), filename, lineno, funcname)
    tb = marker.__traceback__
    if tb is None:
        return None
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame, tb.tb_lasti, tb.tb_lineno
