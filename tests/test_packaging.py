"""Packaging: setup.cfg lists every package folder, runtime/ is installed as transpile_runtime
(no top-level `runtime` module), and a user's own runtime.py does not shadow anything."""
import configparser
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _cfg():
    cfg = configparser.ConfigParser()
    cfg.read(os.path.join(ROOT, "setup.cfg"))
    return cfg


def _listed(cfg, key):
    return {line.strip() for line in cfg["options"][key].splitlines() if line.strip()}


def test_setup_cfg_lists_every_package_folder():
    cfg = _cfg()
    dirs = {}
    for line in _listed(cfg, "package_dir"):
        name, folder = (part.strip() for part in line.split("="))
        dirs[folder] = name
    found = set()
    for top in ("transpile", "runtime"):
        for dirpath, _dirs, files in os.walk(os.path.join(ROOT, top)):
            if "__init__.py" not in files:
                continue
            parts = os.path.relpath(dirpath, ROOT).split(os.sep)
            parts[0] = dirs.get(parts[0], parts[0])
            found.add(".".join(parts))
    assert _listed(cfg, "packages") == found
    assert dirs == {"runtime": "transpile_runtime"}


def _run(code, cwd):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True,
                          text=True, env=env)


def test_no_top_level_runtime_module(tmp_path):
    r = _run("import runtime", str(tmp_path))
    assert r.returncode != 0 and "No module named 'runtime'" in r.stderr


def test_users_own_runtime_py_does_not_break_transpile(tmp_path):
    (tmp_path / "runtime.py").write_text("MINE = True\n")
    r = _run("import runtime, transpile, transpile_runtime\n"
             "assert runtime.MINE and transpile_runtime.__file__ != runtime.__file__\n"
             "print(transpile.grad.__module__)", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "transpile.api.autodiff"
