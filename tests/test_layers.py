"""One-way layers: runtime/ (installed as transpile_runtime) imports nothing from transpile/,
and the modules of transpile/ and runtime/ import each other without a cycle. The graph is
built from the source by tests/check_layers.py, lazy imports inside functions included. The
packages of transpile/ are the pipeline's stages, in the order of check_layers.LAYERS: a module
imports only from its own layer or the layers below."""
import os
import subprocess
import sys
import textwrap

import check_layers

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_repository_layers_have_no_cycle_and_runtime_stays_below():
    found = check_layers.problems(ROOT)
    assert found == [], "\n".join(found)


def test_checker_script_exits_zero_on_the_repository():
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "check_layers.py"), ROOT],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "layers ok" in r.stdout


def _tree(tmp_path, files):
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return str(tmp_path)


def test_checker_finds_a_cycle_through_a_lazy_import(tmp_path):
    root = _tree(tmp_path, {
        "transpile/__init__.py": "",
        "transpile/low.py": """
            def f():
                from transpile import high   # lazy, still an edge
                return high
        """,
        "transpile/high.py": "from transpile.low import f\n",
        "runtime/__init__.py": "",
    })
    found = check_layers.problems(root, layers=[])
    assert len(found) == 1 and found[0].startswith("import cycle (2 modules)")
    assert "transpile.high" in found[0] and "transpile.low" in found[0]
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "check_layers.py"), root],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "import cycle" in r.stdout


def test_checker_finds_a_cycle_through_relative_imports(tmp_path):
    root = _tree(tmp_path, {
        "transpile/__init__.py": "",
        "transpile/transforms/__init__.py": "",
        "transpile/transforms/a.py": "from .b import x\n",
        "transpile/transforms/b.py": "from . import a\nx = 1\n",
        "runtime/__init__.py": "",
    })
    found = check_layers.problems(root, layers=[])
    assert found == ["import cycle (2 modules): transpile.transforms.a -> "
                     "transpile.transforms.b -> transpile.transforms.a"]


def test_checker_refuses_runtime_importing_transpile(tmp_path):
    root = _tree(tmp_path, {
        "transpile/__init__.py": "",
        "transpile/ir.py": "",
        "runtime/__init__.py": "",
        "runtime/helpers.py": """
            def g():
                import transpile.ir
                return transpile.ir
        """,
    })
    assert check_layers.problems(root, layers=[]) == [
        "runtime imports transpile: transpile_runtime.helpers -> transpile.ir"]


def test_checker_accepts_a_one_way_tree(tmp_path):
    root = _tree(tmp_path, {
        "transpile/__init__.py": "from transpile import api\n",
        "transpile/api.py": "from transpile import low\nimport transpile_runtime\n",
        "transpile/low.py": "import numpy\n",
        "runtime/__init__.py": "from transpile_runtime import helpers\n",
        "runtime/helpers.py": "import numpy\n",
    })
    assert check_layers.problems(root, layers=[]) == []


def test_checker_counts_a_name_read_from_the_package_init(tmp_path):
    # transpile/__init__.py imports api; api reading a name defined in __init__ is a cycle,
    # while importing a sibling submodule through the package is not
    root = _tree(tmp_path, {
        "transpile/__init__.py": "from transpile.api import grad\nVERSION = '1'\n",
        "transpile/api.py": """
            from transpile import ir            # a submodule: fine
            def grad():
                from transpile import VERSION   # a name of the package: an edge to it
                return VERSION
        """,
        "transpile/ir.py": "",
        "runtime/__init__.py": "",
    })
    assert check_layers.problems(root, layers=[]) == [
        "import cycle (2 modules): transpile -> transpile.api -> transpile"]


def test_checker_refuses_an_upward_import(tmp_path):
    root = _tree(tmp_path, {
        "transpile/__init__.py": "",
        "transpile/core/__init__.py": "",
        "transpile/core/ir.py": "",
        "transpile/core/codegen.py": "from transpile.core import ir\n",
        "transpile/frontend/__init__.py": "",
        "transpile/frontend/parse.py": "from transpile.core import codegen\n",
        "transpile/core/avals.py": """
            def f():
                from transpile.frontend.parse import x   # lazy, and still upward
        """,
        "runtime/__init__.py": "",
    })
    layers = [["transpile.core"], ["transpile.frontend"], ["transpile"]]
    assert check_layers.problems(root, layers=layers) == [
        "upward import: transpile.core.avals -> transpile.frontend.parse "
        "(transpile.core is below transpile.frontend)"]


def test_a_module_belongs_to_the_layer_of_its_longest_prefix():
    layers = [["transpile.core.ir"], ["transpile.primitives"], ["transpile.core"], ["transpile"]]
    assert check_layers.layer_of("transpile.core.ir", layers) == 0
    assert check_layers.layer_of("transpile.core.rename", layers) == 2
    assert check_layers.layer_of("transpile.primitives.registry", layers) == 1
    assert check_layers.layer_of("transpile.cli", layers) == 3
    assert check_layers.layer_of("numpy", layers) is None


def test_the_top_of_transpile_holds_the_public_modules_only():
    top = sorted(f for f in os.listdir(os.path.join(ROOT, "transpile")) if f.endswith(".py"))
    assert len(top) <= 12, top
    packages = sorted(d for d in os.listdir(os.path.join(ROOT, "transpile"))
                      if os.path.exists(os.path.join(ROOT, "transpile", d, "__init__.py")))
    layered = {p.split(".")[1] for layer in check_layers.LAYERS for p in layer
               if p.startswith("transpile.") and p.count(".") >= 1}
    assert set(packages) <= layered, set(packages) - layered
