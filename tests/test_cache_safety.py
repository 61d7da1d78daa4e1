"""The cache directory: unusable -> private temporary dir with one warning; deleted while in
use -> recreated; world-writable -> made private; other user's -> refused; forged compiled code
-> never loaded (keyed MAC); edited generated files -> rewritten to the text that runs."""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
import threading
import warnings

import numpy as np
import pytest

from transpile import TranspileWarning, grad, jit
from transpile_runtime import diskcache

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def loss(x):
    return np.sum(np.sin(x) * x ** 2)


def dloss_exact(x):
    return np.cos(x) * x ** 2 + 2 * x * np.sin(x)


def tuple_loss(xs):
    total = 0.0
    for x in xs:
        total = total + np.sum(np.tanh(x) ** 2)
    return total


def _transpile_warnings(record):
    return [w for w in record if issubclass(w.category, TranspileWarning)]


def test_cache_dir_under_a_file_falls_back_with_one_warning(tmp_path, monkeypatch):
    blocker = tmp_path / "afile"
    blocker.write_text("not a directory")
    monkeypatch.setenv("TRANSPILE_CACHE_DIR", str(blocker / "cache"))
    x = np.linspace(-1.0, 1.0, 5)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1
        g = grad(loss)(x)
        g2 = grad(tuple_loss)((x, x[:3]))
    np.testing.assert_allclose(g, dloss_exact(x), rtol=1e-12)
    np.testing.assert_allclose(g2[1], 2 * np.tanh(x[:3]) * (1 - np.tanh(x[:3]) ** 2), rtol=1e-12)
    ws = _transpile_warnings(rec)
    assert len(ws) == 1, [str(w.message) for w in ws]
    msg = str(ws[0].message)
    assert str(blocker / "cache") in msg and "temporary directory" in msg
    # the warning names this test's line, not a file inside transpile
    assert ws[0].filename == __file__ and ws[0].lineno == line
    fallback = diskcache.cache_root()
    assert fallback != str(blocker / "cache")
    assert os.stat(fallback).st_mode & 0o077 == 0
    path = grad(loss).source_path(x)
    assert path.startswith(fallback + os.sep) and os.path.isfile(path)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root writes into read-only directories, so none can be made")
def test_read_only_cache_dir_falls_back(tmp_path, monkeypatch):
    d = tmp_path / "ro"
    d.mkdir(mode=0o500)
    monkeypatch.setenv("TRANSPILE_CACHE_DIR", str(d))
    with pytest.warns(TranspileWarning, match="not writable"):
        g = grad(loss)(np.ones(3))
    np.testing.assert_allclose(g, dloss_exact(np.ones(3)), rtol=1e-12)


def test_world_writable_cache_dir_is_made_private_and_its_key_discarded(tmp_path, monkeypatch):
    d = tmp_path / "shared"
    d.mkdir()
    os.chmod(d, 0o777)
    planted = b"k" * diskcache.KEY_BYTES          # a key a stranger could have left there
    (d / diskcache.KEY_NAME).write_bytes(planted)
    os.chmod(d / diskcache.KEY_NAME, 0o600)
    monkeypatch.setenv("TRANSPILE_CACHE_DIR", str(d))
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        g = grad(loss)(np.ones(4))
    np.testing.assert_allclose(g, dloss_exact(np.ones(4)), rtol=1e-12)
    ws = _transpile_warnings(rec)
    assert len(ws) == 1 and "writable by other users" in str(ws[0].message)
    assert ws[0].filename == __file__
    assert os.stat(d).st_mode & 0o777 == 0o700
    key = diskcache.signing_key(str(d))
    assert key is not None and key != planted
    assert os.stat(d / diskcache.KEY_NAME).st_mode & 0o777 == 0o600


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="giving a directory to another user needs root")
def test_cache_dir_owned_by_another_user_is_refused(tmp_path, monkeypatch):
    d = tmp_path / "theirs"
    d.mkdir(mode=0o700)
    os.chown(d, 54321, 54321)
    monkeypatch.setenv("TRANSPILE_CACHE_DIR", str(d))
    with pytest.warns(TranspileWarning, match="owned by another user"):
        g = grad(loss)(np.ones(2))
    np.testing.assert_allclose(g, dloss_exact(np.ones(2)), rtol=1e-12)
    assert os.listdir(d) == []          # nothing written into (or loaded from) their folder


def test_key_file_with_wrong_mode_is_replaced(tmp_path):
    root = str(tmp_path)
    first = diskcache.signing_key(root)
    os.chmod(os.path.join(root, diskcache.KEY_NAME), 0o644)
    second = diskcache.signing_key(root)
    assert second is not None and second != first
    assert diskcache.signing_key(root) == second


def test_cache_deleted_while_compiling(tmp_path, monkeypatch):
    cache = tmp_path / "volatile"
    monkeypatch.setenv("TRANSPILE_CACHE_DIR", str(cache))
    stop = threading.Event()
    deletions = [0]

    def deleter():
        while not stop.is_set():
            if cache.exists():
                shutil.rmtree(cache, ignore_errors=True)
                deletions[0] += 1
            stop.wait(0.01)

    t = threading.Thread(target=deleter)
    t.start()
    failures = []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", TranspileWarning)   # no fallback to NumPy either
            for n in range(1, 25):              # 24 new specializations: each writes a file
                xs = tuple(np.linspace(-1, 1, 3) * (k + 1) for k in range(n))
                try:
                    g = grad(tuple_loss)(xs)
                    for gx, x in zip(g, xs):
                        np.testing.assert_allclose(gx, 2 * np.tanh(x) * (1 - np.tanh(x) ** 2),
                                                   rtol=1e-12)
                except Exception as e:        # noqa: BLE001 (collected, asserted below)
                    failures.append(__import__('traceback').format_exc())
            for n in range(1, 7):               # 6 Numba compiles (a new rank each: a new
                x = np.linspace(-1, 1.5, 5).reshape((1,) * (n - 1) + (5,))   # size would not)
                try:
                    np.testing.assert_allclose(jit(loss)(x), loss(x), rtol=1e-12)
                except Exception as e:        # noqa: BLE001
                    failures.append(__import__('traceback').format_exc())
    finally:
        stop.set()
        t.join()
    assert deletions[0] > 5
    assert failures == [], "\n".join(failures)


def test_edited_generated_file_is_rewritten(tmp_path, monkeypatch):
    monkeypatch.setenv("TRANSPILE_CACHE_DIR", str(tmp_path / "c"))
    x = np.linspace(0.1, 1.0, 4)
    path = grad(loss).source_path(x)
    text = open(path).read()
    with open(path, "w") as fh:
        fh.write(text.replace("np.cos", "np.tan") + "\n# edited\n")
    fresh = grad(loss)                          # a new transform loads the file again
    np.testing.assert_allclose(fresh(x), dloss_exact(x), rtol=1e-12)
    assert fresh.source_path(x) == path
    assert open(path).read() == text == fresh.source_for(x)
    # a truncated (corrupted) file too
    with open(path, "w") as fh:
        fh.write(text[:40])
    grad(loss)(x)
    assert open(path).read() == text


def test_edited_jit_module_is_rewritten(tmp_path, monkeypatch):
    monkeypatch.setenv("TRANSPILE_CACHE_DIR", str(tmp_path / "c"))
    x = np.linspace(0.1, 1.0, 4)
    f = jit(loss)
    f(x)
    path = f.source_path(x)
    text = open(path).read()
    assert text == f.source_for(x)
    with open(path, "w") as fh:
        fh.write("garbage\n")
    g = jit(loss)
    np.testing.assert_allclose(g(x), loss(x), rtol=1e-12)
    assert open(path).read() == text


# ---- a forged compiled file ------------------------------------------------------------------

CHILD = textwrap.dedent("""
    import sys, json
    sys.path.insert(0, {root!r}); sys.path.insert(0, {mod!r})
    import numpy as np
    from transpile import jit
    from forged_fn import h
    f = jit(h)
    out = f(np.linspace(-1, 1, 7))
    c = list(f._specs.values())[0]
    print(json.dumps({{"value": float(out), "eager": c.eager, "path": c.plan.path}}))
""")


def _child(tmp, cache):
    env = dict(os.environ, TRANSPILE_CACHE_DIR=cache, NUMBA_DEBUG_CACHE="1")
    res = subprocess.run([sys.executable, "-c", CHILD.format(root=ROOT, mod=str(tmp))],
                         env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout.strip().splitlines()[-1]), res.stdout


class _Payload:
    """Unpickling this creates a folder: proof that a forged cache file was executed."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.makedirs, (self.marker,))


def _forge(path, marker, key=None):
    """Replace the entry's object files by a pickle that runs code, and rewrite the manifest's
    hashes to match (as an attacker without the key would); with `key`, sign it too."""
    import pickle
    pyc = os.path.join(os.path.dirname(path), "__pycache__")
    manifest_path = os.path.splitext(path)[0] + ".manifest"
    manifest = json.load(open(manifest_path))
    payload = pickle.dumps(_Payload(marker))
    for name in manifest["files"]:
        if name.endswith(".nbc"):
            with open(os.path.join(pyc, name), "wb") as fh:
                fh.write(payload)
            manifest["files"][name] = hashlib.sha256(payload).hexdigest()
    if key is not None:
        manifest["mac"] = diskcache._mac(key, os.path.splitext(os.path.basename(path))[0],
                                         manifest["files"])
    with open(manifest_path, "w") as fh:
        json.dump(manifest, fh)


def test_forged_compiled_file_with_rewritten_hash_is_not_executed(tmp_path):
    (tmp_path / "forged_fn.py").write_text(
        "import numpy as np\n\ndef h(x):\n    return np.sum(np.cos(x) * x)\n")
    cache = str(tmp_path / "cache")
    first, log1 = _child(tmp_path, cache)
    assert "data saved" in log1 and not first["eager"]
    marker = str(tmp_path / "PWNED")
    _forge(first["path"], marker)
    second, log2 = _child(tmp_path, cache)
    assert not os.path.exists(marker), "a forged cache file was unpickled"
    assert "data saved" in log2                 # recompiled instead
    xs = np.linspace(-1, 1, 7)
    assert second["value"] == pytest.approx(float(np.sum(np.cos(xs) * xs)), rel=1e-12)
    # control: the same forgery signed with the user's key is trusted, and Numba runs it (so
    # the check above is what stopped it)
    _forge(first["path"], marker, key=diskcache.signing_key(cache, create=False))
    subprocess.run([sys.executable, "-c", CHILD.format(root=ROOT, mod=str(tmp_path))],
                   env=dict(os.environ, TRANSPILE_CACHE_DIR=cache), capture_output=True,
                   text=True, timeout=300)
    assert os.path.exists(marker)
