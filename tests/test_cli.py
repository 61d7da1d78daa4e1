"""The `transpile` command line: show, list, transforms, --args, --out, errors (in-process and as a subprocess)."""
import os
import subprocess
import sys
import textwrap

import pytest

import transpile
from transpile import cli

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MODEL = textwrap.dedent('''\
    import numpy as np
    from transpile import grad

    def sum_logistic(x):
        return np.sum(1.0 / (1.0 + np.exp(-x)))

    def scale(x, k):
        return x * k

    @grad
    def loss(w, x):
        return np.mean((x @ w) ** 2)

    if __name__ == "__main__":
        raise SystemExit("the __main__ block must not run when the CLI imports this file")
''')

PLAIN = textwrap.dedent('''\
    import numpy as np

    def f(x):
        return np.sum(np.sin(x))

    def g(x, y):
        return x * y
''')


@pytest.fixture
def files(tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    (tmp_path / "plain.py").write_text(PLAIN)
    return tmp_path


def run_main(argv, capsys):
    rc = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def compiles(text):
    compile(text, "<generated>", "exec")
    return True


def test_show_decorated_functions(files, capsys):
    rc, out, err = run_main(["show", files / "model.py"], capsys)
    assert rc == 0, err
    assert "def loss__grad(w, x):" in out
    assert "dw = " in out and "return dw" in out
    assert "# line 12: return np.mean((x @ w) ** 2)" in out
    assert "sum_logistic" not in out           # not decorated, not named
    assert "\x1b[" not in out                  # not a terminal: plain text
    assert compiles(out)


def test_show_named_function_with_grad(files, capsys):
    rc, out, err = run_main(["show", files / "model.py", "--function", "sum_logistic",
                             "--transform", "grad"], capsys)
    assert rc == 0, err
    assert "def sum_logistic__grad(x):" in out
    assert "np.exp(" in out and "return dx" in out
    assert compiles(out)


def test_generated_code_printed_is_the_code_that_runs(files, capsys):
    import numpy as np
    rc, out, _ = run_main(["show", files / "model.py", "-f", "sum_logistic", "-t", "grad"], capsys)
    ns = {}
    exec(compile(out, "<cli>", "exec"), ns)
    got = ns["sum_logistic__grad"](np.arange(3.0))
    np.testing.assert_allclose(got, [0.25, 0.19661193, 0.10499359], rtol=1e-6)


@pytest.mark.parametrize("transform, expect", [
    ("value_and_grad", "def sum_logistic__value_and_grad(x):"),
    ("jvp", "def sum_logistic__jvp(x, x_dot):"),
    ("vjp", "def sum_logistic__vjp(x, "),
    ("jacfwd", "jacfwd(f) calls this generated jvp"),
    ("jacrev", "jacrev(f) calls this generated vjp"),
    ("hessian", "def sum_logistic__grad__jvp(x, x_dot):"),
])
def test_each_derivative_transform(files, capsys, transform, expect):
    rc, out, err = run_main(["show", files / "model.py", "-f", "sum_logistic", "-t", transform],
                            capsys)
    assert rc == 0, err
    assert expect in out
    assert compiles(out)


def test_no_decorated_functions_lists_them_and_fails(files, capsys):
    rc, out, err = run_main(["show", files / "plain.py"], capsys)
    assert rc == 2
    assert "no functions decorated" in err
    assert "--function NAME" in err
    assert "f                        line 3" in err and "def g(x, y)" in err


def test_plain_function_without_transform_shows_core_form(files, capsys):
    rc, out, err = run_main(["show", files / "plain.py", "-f", "g"], capsys)
    assert rc == 0, err
    assert "def g(x, y):" in out and "core form" in out


def test_unknown_transform_lists_valid_ones(files, capsys):
    rc, out, err = run_main(["show", files / "plain.py", "-f", "f", "-t", "grad,gard"], capsys)
    assert rc == 2
    assert "unknown transform 'gard'" in err
    for name in cli.TRANSFORMS:
        assert name in err


def test_unknown_function_lists_functions(files, capsys):
    rc, out, err = run_main(["show", files / "plain.py", "-f", "nope"], capsys)
    assert rc == 2
    assert "has no function 'nope'" in err and "def f(x)" in err


def test_missing_file(files, capsys):
    rc, out, err = run_main(["show", files / "missing.py"], capsys)
    assert rc == 2 and "no such file" in err


def test_bad_args_expression(files, capsys):
    rc, out, err = run_main(["show", files / "plain.py", "-f", "f", "-t", "grad",
                             "--args", "np.ones(3"], capsys)
    assert rc == 2 and "could not evaluate --args" in err


def test_args_pick_the_specialization(files, capsys):
    # a dict argument changes the generated signature (pytree leaves are flattened)
    (files / "tree.py").write_text(textwrap.dedent('''\
        import numpy as np
        def loss(p, x):
            return np.sum((x * p["w"] + p["b"]) ** 2)
    '''))
    rc, out, err = run_main(["show", files / "tree.py", "-f", "loss", "-t", "grad", "--args",
                             "{'w': np.ones(3), 'b': 0.5}, np.ones(3)"], capsys)
    assert rc == 0, err
    assert "def loss__grad(" in out and compiles(out)


def test_backend_needs_jit(files, capsys):
    rc, out, err = run_main(["show", files / "plain.py", "-f", "f", "-t", "grad",
                             "--backend", "cpu"], capsys)
    assert rc == 2 and "add jit to --transform" in err


def test_out_writes_files_for_an_ide(files, capsys, tmp_path):
    dest = tmp_path / "generated"
    rc, out, err = run_main(["show", files / "model.py", "-f", "sum_logistic", "-f", "scale",
                             "-t", "value_and_grad", "--out", dest], capsys)
    assert rc == 0, err
    for name in ("sum_logistic", "scale"):
        written = dest / f"{name}__value_and_grad.py"
        assert written.exists() and f"wrote {written}" in err
        text = written.read_text()
        assert f"def {name}__value_and_grad(" in text and compiles(text)


def test_list_command(files, capsys):
    rc, out, err = run_main(["list", files / "model.py"], capsys)
    assert rc == 0
    assert "loss" in out and "<grad of loss>" in out and "def sum_logistic(x)" in out


def test_color_always_uses_pygments(files, capsys):
    pytest.importorskip("pygments")
    rc, out, err = run_main(["show", files / "plain.py", "-f", "f", "-t", "grad",
                             "--color", "always"], capsys)
    assert rc == 0 and "\x1b[" in out


def test_help_and_version(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert "show" in out and "list" in out and "jit,grad" in out
    assert cli.main(["--version"]) == 0
    assert transpile.__version__ in capsys.readouterr().out
    assert cli.main([]) == 2


def test_show_help_names_every_option(capsys):
    with pytest.raises(SystemExit):
        cli.main(["show", "--help"])
    out = capsys.readouterr().out
    for opt in ("--function", "--transform", "--backend", "--args", "--out", "--color"):
        assert opt in out
    for name in cli.TRANSFORMS:
        assert name in out


def test_jit_chain_with_args(files, capsys):
    rc, out, err = run_main(["show", files / "model.py", "-f", "sum_logistic", "-t", "jit,grad",
                             "--args", "np.ones(3)"], capsys)
    assert rc == 0, err
    assert "sum_logistic" in out and compiles(out)


def test_vmap(files, capsys):
    rc, out, err = run_main(["show", files / "plain.py", "-f", "g", "-t", "vmap",
                             "--args", "np.ones((4, 3)), np.ones((4, 3))"], capsys)
    assert rc == 0, err
    assert "def g" in out and compiles(out)


# ---- as a real command -------------------------------------------------------------------


def subprocess_cli(*args, cwd=None):
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "transpile", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, env=env, timeout=120)


def test_subprocess_show_grad(files):
    p = subprocess_cli("show", files / "model.py", "-f", "sum_logistic", "-t", "grad")
    assert p.returncode == 0, p.stderr
    assert "def sum_logistic__grad(x):" in p.stdout
    assert "\x1b[" not in p.stdout


def test_subprocess_file_imports_its_neighbours(files):
    (files / "helpers.py").write_text("import numpy as np\ndef act(x):\n    return np.tanh(x)\n")
    (files / "uses.py").write_text(textwrap.dedent('''\
        import numpy as np
        from helpers import act
        def loss(x):
            return np.sum(act(x) ** 2)
    '''))
    p = subprocess_cli("show", "uses.py", "-f", "loss", "-t", "grad", cwd=str(files.parent))
    assert p.returncode == 2 and "no such file" in p.stderr
    p = subprocess_cli("show", files / "uses.py", "-f", "loss", "-t", "grad", cwd="/")
    assert p.returncode == 0, p.stderr
    assert "np.tanh" in p.stdout


def test_subprocess_errors_are_one_clear_line(files):
    p = subprocess_cli("show", files / "plain.py", "-t", "bogus")
    assert p.returncode == 2
    assert p.stderr.startswith("transpile: error: unknown transform 'bogus'")
    assert "Traceback" not in p.stderr


def test_subprocess_help():
    p = subprocess_cli("--help")
    assert p.returncode == 0 and "usage: transpile" in p.stdout


def test_console_script_is_declared():
    cfg = open(os.path.join(REPO, "setup.cfg")).read()
    assert "transpile = transpile.cli:main" in cfg
