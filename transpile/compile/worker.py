"""A background compile in a worker process (the calling side; the worker is
runtime/compile_worker.py).

Tiered jit (api/jit.py) runs the generated NumPy code while a specialization is compiled.
Numba's compiler holds the GIL most of the time, so compiling in a thread slows the NumPy
calls running meanwhile (on a 2-core machine, 100 NumPy-tier calls of an MLP step ran up to
several times slower). So by default the background thread generates the lowered module here
(transpile's own passes, ~0.1 s), then hands the module's file and the Numba types of the call
to a worker process, which compiles it into Numba's disk cache, and only *waits* for it (no
GIL held); it then loads the compiled code from the cache (a Numba cache hit, counted in
`Compiled.worker`) and calls switch to it.

`TRANSPILE_COMPILE_WORKER=0` compiles in the thread instead (the behaviour before workers).
The thread is also used where a worker cannot work: no module file (code compiled in parts),
argument types that do not pickle, a frozen application, or a worker that could not start
(then no worker is tried again in this process).

What the worker's end means (`WorkerCompile.run`):

    "compiled"     the module is in the disk cache: load it (precompile gets a cache hit)
    "refused"      Numba refused the code: the NumPy version, one warning with the construct
    "crashed"      killed by a signal or timed out: the NumPy version, one warning
    "unavailable"  no worker (could not start), or a Python error outside Numba's compiler in
                   it: compile here

While a worker compiles, it takes one core: NumPy's own BLAS in this process runs with one
thread fewer meanwhile (at least one; restored when no worker is compiling). The NumPy tier's
matrix products are small, and a threaded BLAS whose other thread finds no free core waits for
it: measured on the 2-core machine with other jobs running, 100 NumPy-tier calls of an MLP step
took 1.5–10.5 s with NumPy's 2 BLAS threads and 0.31–0.33 s with one. Only NumPy's bundled
BLAS is touched (the compiled code's BLAS, SciPy's, is lowering/cpu/module.py's business).

At interpreter exit a worker is not waited for: it finishes filling the cache on its own (its
own session, so a Ctrl-C meant for the program does not stop it half way; the cache's
manifest is written only after a complete compile) and the next run loads the result.
"""
import json
import os
import subprocess
import sys
import threading

from threadpoolctl import ThreadpoolController

from transpile_runtime import compile_worker

TIMEOUT = 900.0          # seconds a worker may compile before it is killed (a hang)
PREPARE_AFTER = 1.0      # seconds into a worker's compile when the caller prepares to load

_STATE = {"broken": False}
_LOCK = threading.Lock()
_EXITING = [False]
_WAITING = set()         # threads waiting on a worker (not joined at exit)


def enabled():
    """Compile in a worker process (default), or in a thread (TRANSPILE_COMPILE_WORKER=0)?"""
    flag = os.environ.get("TRANSPILE_COMPILE_WORKER", "1").strip().lower()
    if flag in ("0", "false", "no", "off") or _STATE["broken"]:
        return False
    return bool(sys.executable) and not getattr(sys, "frozen", False)


def waiting_threads():
    with _LOCK:
        return set(_WAITING)


def begin_exit():
    """At interpreter exit: threads waiting on a worker stop there (their worker finishes
    filling the cache alone); returns the threads that are not waiting (to be joined)."""
    with _LOCK:
        _EXITING[0] = True
        waiting = set(_WAITING)
    drop_spare()     # (ended here, its pipes closed: not left to the interpreter's teardown)
    return waiting


_CORES = {"workers": 0, "saved": []}     # workers compiling; (BLAS library, its threads)
# workers at once: one core stays for the caller (two signatures compiling at once on 2 cores
# take turns, as threads did on the GIL)
_SLOTS = threading.BoundedSemaphore(max(1, (os.cpu_count() or 2) - 1))


def _numpy_blas():
    """NumPy's bundled BLAS libraries loaded in this process (threadpoolctl's controllers)."""
    marks = ("numpy.libs", f"{os.sep}numpy{os.sep}")
    return [lib for lib in ThreadpoolController().lib_controllers
            if lib.user_api == "blas" and any(m in (lib.filepath or "") for m in marks)]


def _take_core():
    with _LOCK:
        _CORES["workers"] += 1
        if _CORES["workers"] > 1:
            return
        try:
            for lib in _numpy_blas():
                n = lib.num_threads
                if n > 1:
                    _CORES["saved"].append((lib, n))
                    lib.set_num_threads(n - 1)
        except Exception:        # noqa: BLE001 (an unknown BLAS: leave it as it is)
            pass


def _give_back_core():
    with _LOCK:
        _CORES["workers"] -= 1
        if _CORES["workers"]:
            return
        saved, _CORES["saved"] = _CORES["saved"], []
        for lib, n in saved:
            try:
                lib.set_num_threads(n)
            except Exception:    # noqa: BLE001
                pass


_SPARE = {"proc": None, "key": None, "used": 0}   # a worker started ahead (see prestart)


def _spawn_key():
    """What a worker inherits when it starts: a spare started earlier serves a compile only if
    none of it changed since (the environment and sys.path it imports Numba and the module
    with, the working folder, the boot code)."""
    return (compile_worker.spawn, compile_worker.BOOT, tuple(sys.path), os.getcwd(),
            tuple(sorted(os.environ.items())))


def prestart():
    """Start one worker ahead of the first compile (jit(f) calls this): it imports Numba while
    the program sets up its data, so the first call's compile does not wait for that (~0.5-1 s
    of Python start-up and imports). At most one spare at a time; an unused spare ends when
    this process does (it reads end-of-file instead of a request)."""
    if not enabled():
        return
    with _LOCK:
        if _SPARE["proc"] is not None or _EXITING[0]:
            return
        try:
            _SPARE["proc"] = compile_worker.spawn()
        except OSError:
            _STATE["broken"] = True
            return
        _SPARE["key"] = _spawn_key()


def drop_spare():
    """End the spare worker, if any (it has not been given anything)."""
    proc = _take_spare(any_environment=True)
    if proc is not None:
        _SPARE["used"] -= 1
        _end(proc)


def _end(proc):
    try:
        proc.kill()
    except OSError:
        pass
    proc.communicate()


def _take_spare(any_environment=False):
    """The spare worker, if one is running and was started in this same environment."""
    with _LOCK:
        proc, key = _SPARE["proc"], _SPARE["key"]
        _SPARE["proc"] = _SPARE["key"] = None
    if proc is None:
        return None
    if proc.poll() is None and (any_environment or key == _spawn_key()):
        _SPARE["used"] += 1
        return proc
    _end(proc)
    return None


class WorkerError(Exception):
    """Numba's error, as the worker reported it (its message names the refused line)."""


class WorkerCompile:
    """One worker process: the spare started at jit(f) (prestart), or one started now (it
    imports Numba while the module is generated); given one module to compile, or
    discarded."""

    def __init__(self):
        self.proc = None
        self.reply = None
        self.returncode = None
        self.detail = ""
        self.slot = False        # holding one of the _SLOTS
        self.core = False        # holding a core (NumPy's BLAS with one thread fewer)
        while not _SLOTS.acquire(timeout=0.1):
            if _EXITING[0]:
                break            # (at exit: the worker runs on its own anyway)
        else:
            self.slot = True
        try:
            self.proc = _take_spare() or compile_worker.spawn()
        except OSError:
            _STATE["broken"] = True
            self._release_core()
            return
        _take_core()             # (from the start: the worker imports Numba meanwhile)
        self.core = True

    def _release_core(self):
        if self.core:
            self.core = False
            _give_back_core()
        if self.slot:
            self.slot = False
            _SLOTS.release()

    def discard(self):
        """No compile needed after all: end the worker (it holds nothing yet)."""
        self._release_core()
        p = self.proc
        if p is None:
            return
        self.proc = None
        try:
            p.kill()
        except OSError:
            pass
        p.communicate()

    def record(self, c):
        """After `c` loaded what this worker compiled: `c.worker` says how many signatures the
        worker compiled and how many the calling process then loaded from the disk cache
        (`cache_hits`) or had to compile itself (`compiled_here`: 0 unless the cache missed)."""
        disp = getattr(c.fn, "fn", c.fn)           # (AdaptiveThreads wraps the dispatcher)
        stats = getattr(disp, "stats", None)
        reply = self.reply or {}
        c.worker = {"compiled": reply.get("compiled", 0), "loaded": reply.get("loaded", 0),
                    "cache_hits": sum(stats.cache_hits.values()) if stats else 0,
                    "compiled_here": sum(stats.cache_misses.values()) if stats else 0}

    def run(self, path, name, sigs, prepare=None):
        """Have the worker compile `name` of the module at `path` for `sigs`; (outcome, detail)
        as the module docstring says. Blocks without holding the GIL, except for `prepare()`
        (this process's own set-up for loading the result: importing Numba, loading the
        module), run once the worker has compiled for PREPARE_AFTER seconds without
        finishing: not earlier, so that the first calls (the NumPy tier) do not wait for it
        behind the GIL, and not after, so that it does not delay the compiled tier."""
        if self.proc is None:
            return "unavailable", "no worker process"
        try:
            data = compile_worker.request(path, name, sigs)
        except Exception as e:      # noqa: BLE001 (a type that does not pickle: compile here)
            self.discard()
            return "unavailable", f"{type(e).__name__}: {e}"
        p = self.proc
        me = threading.current_thread()
        with _LOCK:
            exiting = _EXITING[0]
            if not exiting:
                _WAITING.add(me)
        if exiting:       # the program is ending: the worker fills the cache on its own
            self._release_core()
            self.proc = None
            try:
                p.stdin.write(data)
                p.stdin.close()
            except OSError:
                pass
            return "exiting", ""
        try:
            try:
                # the request is written here, whole (it is small; the worker reads one pickle,
                # not to EOF): communicate() retried after a timeout would not write the rest
                p.stdin.write(data)
                p.stdin.flush()
                try:
                    out, err = p.communicate(timeout=PREPARE_AFTER if prepare else TIMEOUT)
                except subprocess.TimeoutExpired:
                    if not prepare:
                        raise
                    with _LOCK:      # (joined at exit while it prepares: it holds the GIL)
                        _WAITING.discard(me)
                        exiting = _EXITING[0]
                    if not exiting:
                        try:
                            prepare()
                        finally:
                            with _LOCK:
                                _WAITING.add(me)
                    out, err = p.communicate(timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                p.kill()
                p.communicate()
                return "crashed", f"no answer after {TIMEOUT:.0f} s; killed"
            except (OSError, ValueError) as e:       # the worker died before reading
                p.kill()
                out, err = p.communicate()
                if p.returncode is not None and p.returncode < 0:
                    return "crashed", f"the worker process was killed by signal {-p.returncode}"
                _STATE["broken"] = True
                return "unavailable", f"{type(e).__name__}: {e}"
        finally:
            self._release_core()
            with _LOCK:
                _WAITING.discard(me)
                exiting = _EXITING[0]
            self.proc = None
        self.returncode = p.returncode
        if exiting:
            return "exiting", ""
        reply = _last_json(out)
        self.reply = reply
        if reply is not None and reply.get("ok"):
            return "compiled", ""
        if reply is not None and reply.get("numba"):
            return "refused", reply.get("error", "")
        if p.returncode is not None and p.returncode < 0:
            return "crashed", f"the worker process was killed by signal {-p.returncode}"
        # a Python error outside Numba's compiler: compile here instead; and where the worker
        # could not even start (its environment), start no more workers in this process
        if reply is None or reply.get("boot"):
            _STATE["broken"] = True
        why = reply.get("error") if reply is not None else \
            (err.decode(errors="replace").strip().splitlines() or ["no answer"])[-1]
        return "unavailable", why


def _last_json(out):
    for line in reversed(out.decode(errors="replace").strip().splitlines()):
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            return obj
    return None
