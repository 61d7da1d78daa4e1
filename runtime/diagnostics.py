"""Warnings that point at the user's code.

`TranspileWarning` lives here, at the bottom layer, so that runtime code (the disk cache, the
backends) can warn without importing transpile; `transpile.TranspileWarning` is this class.

`warn(message)` reports the warning at the first frame of the call stack that is neither
transpile's nor transpile_runtime's code nor a generated file, i.e. the user's line that called
the transformed function (`grad(f)(x)`, `jit(f)(x)`), not a line inside transpile.
"""
import os
import sys
import warnings


class TranspileWarning(UserWarning):
    """Something worked, but not the way asked (e.g. jit fell back to NumPy, or the cache
    directory was unusable and a private temporary one is used)."""


# Folders whose frames are skipped when looking for the user's call site: this package, the
# transpile package (it registers itself on import) and the cache roots (generated files).
_INTERNAL = [os.path.dirname(os.path.abspath(__file__)) + os.sep]


def add_internal_dir(path):
    """Frames from files under `path` are not the user's (called by transpile and the cache)."""
    prefix = os.path.abspath(path).rstrip(os.sep) + os.sep
    if prefix not in _INTERNAL:
        _INTERNAL.append(prefix)


def is_internal(filename):
    return filename.startswith(tuple(_INTERNAL))


# Frames of these modules are plumbing too: a worker thread (pmap's shards) starts in them.
_PLUMBING = ("threading", "concurrent.futures.thread", "concurrent.futures._base")


def _is_plumbing(frame):
    return is_internal(frame.f_code.co_filename) or \
        frame.f_globals.get("__name__") in _PLUMBING


def user_stacklevel():
    """The stacklevel, for a warnings.warn called by the caller of this function, that names
    the first frame outside transpile (the user's call site); None if there is none (a
    worker thread that runs only transpile's code)."""
    frame = sys._getframe(1)       # the frame that will call warnings.warn (stacklevel 1)
    level = 1
    while frame is not None and _is_plumbing(frame):
        frame = frame.f_back
        level += 1
    return None if frame is None else level


def warn(message, category=TranspileWarning, where=None):
    """warnings.warn(message, category) attributed to the user's line. `where` = (filename,
    lineno) of the user's function names it when no user frame is on this thread's stack."""
    level = user_stacklevel()
    if level is None and where is not None and where[0]:
        warnings.warn_explicit(message, category, where[0], where[1] or 1,
                               module=os.path.splitext(os.path.basename(where[0]))[0])
        return
    warnings.warn(message, category, stacklevel=level or 1)
