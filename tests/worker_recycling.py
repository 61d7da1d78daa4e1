"""pytest-xdist workers that grow past a memory limit are replaced between tests.

Numba never gives back the memory of what it compiled: LLVM's MCJIT engine keeps every
module it was given, also after the dispatcher is gone (numba/numba#5976). A test worker's
memory therefore grows with every function the suite compiles; at one stop the two workers
held 13 and 11 GB at the end of the run, on a 23 GB machine without swap.

So, where the run uses xdist's default scheduler (`-n auto`, `--dist load`), a worker whose
resident memory passes TRANSPILE_TEST_WORKER_MB (default 5000) after a test is retired:

1. the controller asks it to give back the tests it holds but has not started (xdist's
   "steal" command; the worker gives back all of them or none);
2. once it has, those tests go back to the front of the controller's queue, the worker is
   told to shut down after the one or two tests it is running, and a fresh worker is started
   in its place (xdist's own way of replacing a crashed worker); it takes tests from the
   queue like the others. A worker that holds no more than the tests it is about to run is
   told to shut down after them at once. Where the queue ran empty while it answered (the
   other workers were then told to stop), it runs the tests it gave back itself: a run once
   hung at 99% there, every worker idle and tests left in the queue. No worker is retired
   with fewer than TRANSPILE_TEST_MIN_QUEUED (200) tests in the queue.

Its process ends once it has finished (xdist itself would keep a finished worker's process,
and its memory, until the end of the run). No test is cut short or run twice. Where the worker gave nothing back (it had run on), it is
asked again after a later test. Without xdist, with another scheduler, or where xdist's
internals are not what this expects, nothing is done.
"""
import os
import signal

import pytest

LIMIT_MB = float(os.environ.get("TRANSPILE_TEST_WORKER_MB", "5000"))
# tests left in the controller's queue for a replacement to be worth it (and for the queue not
# to run empty while the worker answers: the other workers are then told to stop)
MIN_QUEUED = int(os.environ.get("TRANSPILE_TEST_MIN_QUEUED", "200"))

_STATE = {"config": None, "retiring": set(), "retired": set(), "patched": None,
          "replaced": 0, "pids": {}}


def _resident_mb():
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE") / 1e6


def pytest_configure(config):
    _STATE["config"] = config


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """In a worker: the teardown report carries the worker's resident memory."""
    outcome = yield
    if call.when == "teardown" and os.environ.get("PYTEST_XDIST_WORKER"):
        mb = _resident_mb()
        if mb is not None:
            outcome.get_result().worker_resident_mb = mb
            outcome.get_result().worker_pid = os.getpid()


def _scheduler(config):
    dsession = config.pluginmanager.getplugin("dsession")
    sched = getattr(dsession, "sched", None)
    if sched is None or type(sched).__name__ != "LoadScheduling":
        return None, None
    needed = ("node2pending", "pending", "nodes", "check_schedule")
    if not all(hasattr(sched, a) for a in needed) or not hasattr(dsession, "_clone_node"):
        return None, None
    return dsession, sched


def _given_back(dsession, sched):
    """The scheduler's handler of a worker's "unscheduled" reply (LoadScheduling has none)."""
    def remove_pending_tests_from_node(node, indices):
        _STATE["retiring"].discard(node)
        if not indices:
            return                      # it had run on: asked again after a later test
        others = [n for n in sched.nodes if n is not node and not n.shutting_down]
        if not others or getattr(dsession, "shuttingdown", False):
            # the queue ran empty while it answered and the other workers were told to stop:
            # it runs the tests it gave back itself (nobody else would: the run would hang)
            node.send_runtest_some(list(indices))
            return
        held = sched.node2pending[node]
        for i in indices:
            held.remove(i)
        sched.pending[:0] = list(indices)
        _replace(dsession, sched, node)
    return remove_pending_tests_from_node


def pytest_runtest_logreport(report):
    """In the controller: retire a worker past the limit (see the module's docstring)."""
    mb = getattr(report, "worker_resident_mb", None)
    node = getattr(report, "node", None)
    if node is not None and getattr(report, "worker_pid", None):
        _STATE["pids"][node] = report.worker_pid
    config = _STATE["config"]
    if mb is None or node is None or config is None or mb < LIMIT_MB:
        return
    if node in _STATE["retiring"] or getattr(node, "shutting_down", True):
        return
    dsession, sched = _scheduler(config)
    if sched is None or getattr(dsession, "shuttingdown", True):
        return
    if len(sched.pending) < MIN_QUEUED or node not in sched.node2pending:
        return
    if _STATE["patched"] is not sched:
        sched.remove_pending_tests_from_node = _given_back(dsession, sched)
        _STATE["patched"] = sched
    # the first items are the test that just ended, the one running and the next one taken
    # from the worker's queue: ask for those after them
    queued = list(sched.node2pending[node][4:])
    if queued:
        _STATE["retiring"].add(node)
        node.send_steal(queued)
    else:                   # it holds no more than it is about to run: it ends after those
        _replace(dsession, sched, node)


def _replace(dsession, sched, node):
    _STATE["retired"].add(node)
    node.shutdown()
    dsession._clone_node(node)
    _STATE["replaced"] += 1
    for other in sched.nodes:
        sched.check_schedule(other)


def pytest_testnodedown(node, error):
    """In the controller: a retired worker's process ends once it has finished its tests
    (xdist keeps a finished worker's process, and all its memory, until the whole run ends)."""
    if node in _STATE["retired"]:
        _STATE["retired"].discard(node)
        pid = _STATE["pids"].pop(node, None)
        try:
            node.gateway.exit()
        except Exception:       # noqa: BLE001 (already gone: nothing to free)
            pass
        if pid is not None:     # (it has sent its last report: nothing of it is lost)
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def pytest_terminal_summary(terminalreporter):
    if _STATE["replaced"]:
        terminalreporter.write_line(
            f"xdist workers replaced past {LIMIT_MB:.0f} MB of memory: {_STATE['replaced']} "
            "(tests/worker_recycling.py)")
