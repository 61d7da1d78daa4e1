"""Every example runs in --fast mode in a subprocess; its printed numbers are checked here too.

The examples assert their own results (they exit non-zero on a regression); these tests read
the printed numbers again so a failure says which number moved. An example that needs a
transform not yet in this build is an expected failure naming the issue that brings it, and
turns into a normal passing test as soon as the transform is there.
"""
import os
import re
import subprocess
import sys

import pytest


REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(REPO, "examples")


def run_example(name, *args, timeout=300):
    env = dict(os.environ, TRANSPILE_EXAMPLES_FAST="1",
               PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, os.path.join(EXAMPLES, name), "--fast", *args],
                       capture_output=True, text=True, env=env, timeout=timeout, cwd=REPO)
    assert p.returncode == 0, f"{name} failed:\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
    return p.stdout


def number(pattern, text):
    m = re.search(pattern, text)
    assert m, f"{pattern!r} not found in output:\n{text[-2000:]}"
    return float(m.group(1))


def test_every_example_is_tested():
    tested = {"quickstart.py", "linear_regression.py", "mlp_training.py",
              "per_example_gradients.py", "newton_hessian.py", "data_parallel.py",
              "control_flow.py"}
    present = {f for f in os.listdir(EXAMPLES) if f.endswith(".py")}
    assert present == tested


def test_every_example_has_fast_mode_and_checks():
    for f in os.listdir(EXAMPLES):
        if f.endswith(".py"):
            text = open(os.path.join(EXAMPLES, f)).read()
            assert "--fast" in text and "TRANSPILE_EXAMPLES_FAST" in text, f
            assert "assert" in text, f"{f} must check its own numbers"
            assert 'if __name__ == "__main__":' in text, f


def test_quickstart():
    out = run_example("quickstart.py")
    grads = re.search(r"grad:\s+\[([^\]]+)\]", out).group(1).split()
    assert [float(v) for v in grads] == pytest.approx([0.25, 0.1966119, 0.1049936], abs=1e-7)
    assert "-0.0353256" in out
    assert "def sum_logistic__grad(x):" in out          # the printed generated source
    assert "quickstart: all checks passed" in out


def test_linear_regression():
    out = run_example("linear_regression.py")
    w = number(r"fitted w = ([-\d.]+)", out)
    b = number(r"b = ([-\d.]+)\s+\(true", out)
    assert abs(w - 4) < 0.1 and abs(b - 1) < 0.06
    assert "linear_regression: all checks passed" in out


def test_mlp_training():
    out = run_example("mlp_training.py")
    assert number(r"test accuracy:\s+([\d.]+)", out) > 0.95
    assert number(r"train accuracy:\s+([\d.]+)", out) > 0.95
    first = number(r"first epoch ([\d.]+)", out)
    last = number(r"last epoch ([\d.]+)", out)
    assert last < first / 5


def test_mlp_training_writes_loss_curve(tmp_path):
    pytest.importorskip("matplotlib", reason="the loss plot needs the [examples] extra")
    png = tmp_path / "loss.png"
    out = run_example("mlp_training.py", "--plot", str(png))
    assert f"wrote {png}" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_per_example_gradients():
    out = run_example("per_example_gradients.py")
    assert "per-example gradients: (256, 8)" in out
    assert "matches the analytic" in out and "equal a loop of grad calls" in out
    assert "per_example_gradients: all checks passed" in out


def test_newton_hessian():
    out = run_example("newton_hessian.py")
    assert "matches finite differences of grad" in out
    steps = number(r"converged in (\d+) Newton steps", out)
    assert steps <= 12
    gnorms = [float(v) for v in re.findall(r"\|grad\| ([\d.e+-]+)", out)]
    assert gnorms[-1] < 1e-10 and gnorms[0] > 0.1
    assert "def loss__grad(w, X, y):" in out


def test_data_parallel():
    out = run_example("data_parallel.py")
    assert "4 devices x 64 examples" in out
    pm = re.search(r"pmap:\s+\[([^\]]+)\]", out).group(1).split()
    full = re.search(r"full batch:\s*\[([^\]]+)\]", out).group(1).split()
    assert [float(v) for v in pm] == pytest.approx([float(v) for v in full], rel=1e-7)
    assert number(r"final loss ([\d.]+)", out) < 0.01


def test_control_flow():
    out = run_example("control_flow.py")
    assert "(4 loop trips" in out
    assert number(r"grad\(exp_series\)\(0\.5, 25\) = ([\d.]+)", out) == pytest.approx(1.6487212707)
    assert "control_flow: all checks passed" in out


def test_cli_shows_quickstart_gradient():
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-m", "transpile", "show",
                        os.path.join(EXAMPLES, "quickstart.py")],
                       capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "def derivative_fn__grad(x):" in p.stdout and "return dx" in p.stdout
