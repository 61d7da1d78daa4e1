"""Traceback filtering, as JAX does it: an error raised through a transformed function shows
the user's frames (and the generated code's), not transpile's own.

The user-facing entry points (the `__call__` of grad, jit, vmap, pmap, ... and `source_for`)
are wrapped by `api_boundary`: when an exception leaves one, the frames of files inside
transpile/ and transpile_runtime are dropped from its traceback (and from those of its cause
and context), so a filtered traceback holds one frame of the package, the entry point the user
called. A TranspileError that names the user's file:line (an unsupported construct, a shape
mismatch) gets a last frame at that line, so the traceback ends where the problem is and
`pdb.pm()` stops there; errors inside generated code keep the generated file's frame.

Turn it off to see everything:

    TRANSPILE_TRACEBACK_FILTERING=off python script.py
    transpile.config.update("transpile_traceback_filtering", "off")   # or "on"; None: env
"""
import functools
import os
import sys
import types
from transpile.errors import TranspileError
from transpile.core.runtime_errors import at_user_line
from transpile.core import runtime_errors

_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # transpile/


def _package_dirs():
    dirs = [_HERE]
    rt = sys.modules.get("transpile_runtime")
    if rt is not None and getattr(rt, "__file__", None):
        dirs.append(os.path.dirname(os.path.abspath(rt.__file__)))
    return tuple(d + os.sep for d in dirs)


class Config:
    """transpile's settings: `transpile.config.update(name, value)` or attribute access."""

    def __init__(self):
        self.transpile_traceback_filtering = None      # None: $TRANSPILE_TRACEBACK_FILTERING

    def update(self, name, value):
        if not hasattr(self, name):
            raise AttributeError(f"transpile.config has no setting {name!r} (settings: "
                                 f"{', '.join(vars(self))})")
        setattr(self, name, value)


config = Config()


def filtering_enabled():
    value = config.transpile_traceback_filtering
    if value is None:
        value = os.environ.get("TRANSPILE_TRACEBACK_FILTERING", "on")
    if isinstance(value, str):
        return value.strip().lower() not in ("off", "0", "false", "no", "none")
    return bool(value)


def is_internal(filename):
    return filename.startswith(_package_dirs()) if filename else False


def filter_traceback(tb):
    """The traceback without the frames of transpile/ and transpile_runtime (new objects).
    Before the last frame of generated code, a frame at the user's line it came from."""
    frames = []
    while tb is not None:
        if not is_internal(tb.tb_frame.f_code.co_filename):
            frames.append((tb.tb_frame, tb.tb_lasti, tb.tb_lineno))
        tb = tb.tb_next
    generated = [k for k, (f, _, _) in enumerate(frames)
                 if str(f.f_globals.get("__name__", "")).startswith("transpile_generated.")]
    if generated:
        k = generated[-1]
        user = runtime_errors.users_line_for_generated(frames[k][0].f_code.co_filename,
                                                       frames[k][2])
        entry = runtime_errors.frame_at(*user) if user else None
        if entry is not None and not (k and frames[k - 1][0].f_code.co_filename == user[0] and
                                      frames[k - 1][2] == user[1]):
            frames.insert(k, entry)
    out = None
    for frame, lasti, lineno in reversed(frames):
        out = types.TracebackType(out, frame, lasti, lineno)
    return out


def filtered(e):
    """`e` with filtered tracebacks (its own, its cause's, its context's), ending at the
    user's line for a TranspileError that names one."""
    seen = set()
    todo = [e]
    while todo:
        x = todo.pop()
        if x is None or id(x) in seen:
            continue
        seen.add(id(x))
        _end_at_user_line(x)
        before = x.__traceback__
        x.__traceback__ = filter_traceback(before)
        if x is e and before is not None and x.__traceback__ is None and \
                hasattr(x, "add_note") and not getattr(x, "_transpile_noted", False):
            # raised inside transpile itself: say where its frames went
            x.add_note("(transpile's own frames are hidden from this traceback; "
                       "TRANSPILE_TRACEBACK_FILTERING=off shows them)")
            x._transpile_noted = True
        todo += [x.__cause__, x.__context__]
    return e


def _end_at_user_line(e):
    if not isinstance(e, TranspileError) or not getattr(e, "filename", None) or \
            not getattr(e, "lineno", None) or getattr(e, "_transpile_at_line", False):
        return
    last = e.__traceback__
    while last is not None and last.tb_next is not None:
        last = last.tb_next
    if last is not None and last.tb_frame.f_code.co_filename == e.filename and \
            last.tb_lineno == e.lineno:
        return
    if not os.path.exists(e.filename) and not e.filename.startswith("<"):
        return
    at_user_line(e, e.filename, e.lineno, "<transformed function>")
    e._transpile_at_line = True


def api_boundary(fn):
    """Wrap a user-facing entry point: exceptions leave it with filtered tracebacks."""
    @functools.wraps(fn)
    def boundary(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            if not filtering_enabled():
                raise
            # (this frame is the one frame of transpile that the traceback keeps)
            raise filtered(e)
    boundary.__transpile_boundary__ = True
    return boundary
