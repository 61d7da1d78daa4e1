"""The documentation site: every example on the pages written for it runs as shown, and the
strict mkdocs build (API reference from the docstrings included) succeeds. CI installs the
[docs] extra, so there the build test must run, never skip."""
import importlib.util
import os
import re
import subprocess
import sys
import tempfile

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNNABLE_PAGES = ["custom_rules.md", "optimizers.md", "random.md", "index.md", "mutation.md"]


def _blocks(page):
    text = open(os.path.join(REPO, "docs", page), encoding="utf-8").read()
    return re.findall(r"```python\n(.*?)```", text, re.S)


@pytest.mark.parametrize("page", RUNNABLE_PAGES)
def test_page_examples_run(page, tmp_path):
    blocks = _blocks(page)
    assert blocks, f"docs/{page} has no python example"
    env = dict(os.environ, TRANSPILE_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for i, code in enumerate(blocks):
        script = tmp_path / f"{os.path.splitext(page)[0]}_{i}.py"
        script.write_text(code)
        p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                           env=env, timeout=300, cwd=str(tmp_path))
        assert p.returncode == 0, f"docs/{page} example {i + 1} failed:\n{code}\n{p.stderr}"


def test_api_reference_covers_the_public_api():
    import transpile
    text = open(os.path.join(REPO, "docs", "api.md"), encoding="utf-8").read()
    documented = set(re.findall(r"^::: transpile\.(\w+)", text, re.M))
    missing = [n for n in transpile.__all__ if n not in documented]
    assert not missing, f"docs/api.md does not document {missing}"


def test_docs_extra_and_ci_build():
    import configparser
    cfg = configparser.ConfigParser()
    cfg.read(os.path.join(REPO, "setup.cfg"))
    test_extra = cfg["options.extras_require"]["test"].split()
    for extra in (cfg["options.extras_require"]["docs"].split(), test_extra):
        assert any(d.startswith("mkdocs") for d in extra)
        assert any(d.startswith("mkdocstrings") for d in extra)
    # CI runs README's test command (the [test] extra, so mkdocs is there and the strict
    # build below runs instead of skipping: CI=1 turns a missing mkdocs into a failure)
    ci = open(os.path.join(REPO, ".ci", "run"), encoding="utf-8").read()
    readme = open(os.path.join(REPO, "README.md"), encoding="utf-8").read()
    test_cmd = [ln.strip() for ln in ci.splitlines() if "pytest" in ln][-1]
    assert test_cmd in readme and ".[test]" in test_cmd
    assert "CI=1" in ci


def test_strict_docs_build():
    if importlib.util.find_spec("mkdocs") is None or \
            importlib.util.find_spec("mkdocstrings_handlers") is None:
        if os.environ.get("CI"):
            pytest.fail("CI must install the [docs] extra: mkdocs/mkdocstrings are missing")
        pytest.skip("mkdocs is not installed (pip install -e '.[docs]')")
    with tempfile.TemporaryDirectory() as site:
        p = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", site],
                           cwd=REPO, capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, p.stdout + p.stderr
        api = open(os.path.join(site, "api", "index.html"), encoding="utf-8").read()
        # the reference really holds the docstrings
        assert "Gradient of a scalar function" in api and "debug_call" in api


def test_no_merge_conflict_markers_left_in_the_tree():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    markers = re.compile(r"^(<{7} |>{7} |={7}$)")
    found = []
    for top in ("docs", "transpile", "runtime", "tests", "examples", "bench", ".ci"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in files:
                if not name.endswith((".md", ".py", ".cfg", ".yml", ".toml", ".txt", "run")):
                    continue
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8", errors="replace") as fh:
                    for k, line in enumerate(fh, 1):
                        if markers.match(line.rstrip("\n")):
                            found.append(f"{os.path.relpath(path, root)}:{k}")
    for name in ("README.md", "setup.cfg", "mkdocs.yml"):
        path = os.path.join(root, name)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as fh:
                found += [f"{name}:{k}" for k, line in enumerate(fh, 1)
                          if markers.match(line.rstrip("\n"))]
    assert not found, found
