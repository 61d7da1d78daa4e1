"""The generated file's path is public (generated_path, Transform.source_path) and the pdb
recipes of docs/debugging.md work as written: a subprocess runs them with pdb commands on stdin
and must stop in the generated file, not in transpile's own code."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from transpile import debug_call, generated_path, grad, jit, vmap
from transpile.api.debugging import first_line

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(REPO, "docs", "debugging.md")


def loss(w, x):
    y = np.tanh(x @ w)
    return np.sum(y * y)


def _recipe():
    """The first python block of the '## pdb' section, as the docs show it."""
    text = open(DOC, encoding="utf-8").read()
    section = text[text.index("## pdb"):]
    m = re.search(r"```python\n(.*?)```", section, re.S)
    assert m, "docs/debugging.md lost its pdb recipe"
    return m.group(1)


def _run(script, stdin, tmp_path):
    path = tmp_path / "recipe.py"
    path.write_text(script)
    env = dict(os.environ, TRANSPILE_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, str(path)], input=stdin, capture_output=True, text=True,
                       env=env, timeout=120, cwd=str(tmp_path))
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


def test_generated_path_api(tmp_path, monkeypatch):
    monkeypatch.setenv("TRANSPILE_CACHE_DIR", str(tmp_path / "c"))
    w, x = np.full(3, 0.1), np.arange(6.0).reshape(2, 3)
    g = grad(loss)
    path = generated_path(g, w, x)
    assert path == g.source_path(w, x) and os.path.isfile(path)
    assert path.startswith(str(tmp_path / "c"))
    assert os.path.basename(path).startswith("loss__grad__")
    assert open(path).read() == g.source_for(w, x)
    # the file holds the function that runs: a traceback frame would name it
    assert "def loss__grad(w, x):" in open(path).read()
    # pytrees: another structure is another file
    tree_path = generated_path(grad(lambda p: np.sum(p["a"] ** 2)), {"a": w})
    assert tree_path != path and os.path.isfile(tree_path)
    # jit: the lowered module for these shapes
    jpath = generated_path(jit(loss), w, x)
    assert "@" in open(jpath).read() or "njit" in open(jpath).read()
    assert jpath == jit(loss).source_path(w, x)
    vpath = generated_path(vmap(np.sin), x)
    assert os.path.isfile(vpath)


def test_docs_pdb_recipe_stops_in_the_generated_file(tmp_path):
    out = _run(_recipe(), "where\nn\np __file__\np y_1\nc\n", tmp_path)
    lines = out.splitlines()
    path = lines[0].strip()                          # the recipe prints generated_path(...)
    assert path.endswith(".py") and "loss__grad__" in path
    stops = [l for l in lines if l.startswith("> ") or l.startswith("(Pdb) > ")]
    # the first stop is in the generated file, in the generated function
    assert stops and f"{path}(" in stops[0] and "loss__grad()" in stops[0], out
    assert not any("transpile/api/autodiff.py" in s for s in stops)
    assert f"'{path}'" in out                        # p __file__ inside the generated frame
    w, x = np.full(3, 0.1), np.arange(6.0).reshape(2, 3)
    assert repr(x @ w)[len("array("):-1].split(",")[0] in out      # p y_1 after one `n`


def test_pdb_runcall_with_a_breakpoint_on_the_generated_file(tmp_path):
    # the manual recipe: pdb.runcall, then `b PATH:LINE` and `c`
    script = (_recipe().split("dw = debug_call")[0] +
              "import pdb\ndw = pdb.runcall(grad(loss), w, x)\nprint('DW', dw)\n")
    (tmp_path / "manual.py").write_text(script)
    env = dict(os.environ, TRANSPILE_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.Popen([sys.executable, "-u", str(tmp_path / "manual.py")], text=True,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, env=env, cwd=str(tmp_path))
    path = p.stdout.readline().strip()               # printed by the recipe
    line = first_line(path)
    out, _ = p.communicate(f"b {path}:{line}\nc\nwhere\nc\n", timeout=120)
    assert p.returncode == 0, out
    stops = [l for l in out.splitlines() if "> " in l]
    # runcall alone stops in the dispatch code (the api boundary), or, where a test before this
    # one left pdb's first stop elsewhere, straight at the breakpoint in the generated file
    assert "/transpile/" in stops[0] or f"{path}(" in stops[0], out
    assert any(f"{path}({line})loss__grad()" in s for s in stops[1:]), out
    assert "DW [" in out


def test_debug_call_returns_the_result_and_refuses_compiled_jit(tmp_path, monkeypatch):
    monkeypatch.setenv("TRANSPILE_CACHE_DIR", str(tmp_path / "c"))
    import io
    w, x = np.full(3, 0.1), np.arange(6.0).reshape(2, 3)
    monkeypatch.setattr(sys, "stdin", io.StringIO("c\n"))
    dw = debug_call(grad(loss), w, x)
    y = np.tanh(x @ w)
    np.testing.assert_allclose(dw, x.T @ (2 * y * (1 - y * y)), rtol=1e-12)
    with pytest.raises(TypeError, match="backend=\"numpy\""):
        debug_call(jit(loss), w, x)
