import atexit
import os
import shutil
import sys
import tempfile

# every temporary file of the run (generated modules, the disk cache, pytest's tmp_path) goes
# under one directory, removed when the process that made it ends: the xdist controller, whose
# environment the workers inherit (a run used to leave thousands of directories in /tmp)
if "TRANSPILE_TEST_TMP" not in os.environ:
    os.environ["TRANSPILE_TEST_TMP"] = tempfile.mkdtemp(prefix="transpile-tests-")
    atexit.register(shutil.rmtree, os.environ["TRANSPILE_TEST_TMP"], True)
tempfile.tempdir = os.environ["TRANSPILE_TEST_TMP"]

sys.path.insert(0, os.path.dirname(__file__))
# calls wait for the compiler here (tests inspect the compiled tier, count compiles);
# tests/test_jit_tiers.py turns tiers on per function (jit(f, wait=False))
os.environ.setdefault("TRANSPILE_TIERS", "0")
os.environ.setdefault("TRANSPILE_CACHE_DIR", tempfile.mkdtemp(prefix="transpile-test-cache-"))

# xdist workers past a memory limit are replaced between tests (Numba never frees what it
# compiled): see tests/worker_recycling.py
from worker_recycling import (pytest_configure, pytest_runtest_logreport,  # noqa: E402,F401
                              pytest_runtest_makereport, pytest_terminal_summary,
                              pytest_testnodedown)
