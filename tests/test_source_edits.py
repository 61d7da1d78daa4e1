"""A source file edited after import is refused (the text would not be the code that runs);
unedited functions of every kind (methods, closures, lambdas, decorated, notebook cells) pass."""
import functools
import importlib
import linecache
import os
import sys
import textwrap

import numpy as np
import pytest

from transpile import TranspileError, grad
from transpile.frontend.parse import parse_function

MODULE = '''\
import functools
import numpy as np


def loss(x):
    return np.sum(np.sin(x) * 2.0)


def make(scale):
    def inner(x):
        return np.sum(np.tanh(x) * scale)
    return inner


square = lambda x: np.sum(x * x * 1.5)


class Model:
    """A model."""

    def __init__(self):
        self.__w = 2.0

    def energy(self, x):
        """Energy.

        Multi-line docstring, indented like the code.
        """
        return np.sum(x ** 2) * 0.5
'''


@pytest.fixture
def module(tmp_path, monkeypatch):
    name = f"edited_mod_{abs(hash(str(tmp_path))) % 10 ** 8}"
    path = tmp_path / f"{name}.py"
    path.write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module(name)
    yield mod, path
    sys.modules.pop(name, None)


def _edit(path, old, new):
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    st = os.stat(path)
    os.utime(path, (st.st_atime, st.st_mtime + 10))    # a visibly newer file for linecache


def test_edited_constant_is_refused_and_reload_fixes_it(module):
    mod, path = module
    x = np.linspace(-1, 1, 4)
    _edit(path, "np.sin(x) * 2.0", "np.sin(x) * 3.0")
    with pytest.raises(TranspileError) as e:
        grad(mod.loss)(x)
    msg = str(e.value)
    assert "changed after it was imported" in msg and "reload" in msg
    assert f"{path}:5" in msg            # names the function's file:line
    mod = importlib.reload(mod)
    np.testing.assert_allclose(grad(mod.loss)(x), 3.0 * np.cos(x), rtol=1e-12)


def test_edited_call_is_refused(module):
    mod, path = module
    _edit(path, "np.sin(x) * 2.0", "np.cos(x) * 2.0")
    with pytest.raises(TranspileError, match="changed after it was imported"):
        grad(mod.loss)(np.ones(3))


def test_lines_inserted_above_are_refused(module):
    mod, path = module
    _edit(path, "import functools\n", "import functools\n# a comment\n\n\n")
    with pytest.raises(TranspileError, match="reload"):
        grad(mod.loss)(np.ones(3))


def test_edited_closure_lambda_and_method_are_refused(module):
    mod, path = module
    inner = mod.make(2.0)
    energy = mod.Model.energy
    _edit(path, "np.tanh(x) * scale", "np.tanh(x) * scale * 2")
    with pytest.raises(TranspileError, match="changed after it was imported"):
        parse_function(inner)
    _edit(path, "x * x * 1.5", "x * x * 2.5")
    with pytest.raises(TranspileError, match="changed after it was imported"):
        parse_function(mod.square)
    _edit(path, "** 2) * 0.5", "** 3) * 0.5")
    with pytest.raises(TranspileError, match="changed after it was imported"):
        parse_function(energy)


def test_unedited_module_functions_pass(module):
    mod, _ = module
    x = np.linspace(-1, 1, 5)
    np.testing.assert_allclose(grad(mod.loss)(x), 2.0 * np.cos(x), rtol=1e-12)
    np.testing.assert_allclose(grad(mod.make(3.0))(x), 3.0 * (1 - np.tanh(x) ** 2), rtol=1e-12)
    np.testing.assert_allclose(grad(mod.square)(x), 3.0 * x, rtol=1e-12)
    parse_function(mod.Model.energy)
    parse_function(mod.Model.__init__)


# ---- no false positives on unedited functions of every shape ------------------------------------

def _deco(f):
    @functools.wraps(f)
    def wrapper(*args):
        return f(*args)
    return wrapper


@_deco
def decorated(x):
    return np.sum(np.exp(x))


class Base:
    def value(self, x):
        return np.sum(x)


class Child(Base):
    """Private names are mangled, super() needs __class__."""

    __scale = 2.0

    def value(self, x):
        """Doubles Base.value.

            An indented block in the docstring.
        """
        return super().value(x) * self.__scale

    lam = staticmethod(lambda x: np.sum(x * Child._Child__scale))


def closures():
    a, b = 2.0, 3.0
    count = 0

    def outer(x):
        def deeper(y):
            nonlocal count
            count += 1
            return y * b
        return np.sum(deeper(x) * a)
    k = lambda x: np.sum(x * a) + b
    return outer, k


def test_no_false_positive_on_unedited_functions():
    outer, k = closures()
    for fn in (decorated, Base.value, Child.value, Child.lam, outer, k,
               lambda x: np.sum(x) * 2.0, _deco, closures):
        parse_function(fn)       # raises if the check misfires
    x = np.linspace(0.1, 1, 3)
    np.testing.assert_allclose(grad(k)(x), np.full(3, 2.0), rtol=1e-12)
    np.testing.assert_allclose(grad(Child.lam)(x), np.full(3, 2.0), rtol=1e-12)


def test_no_false_positive_on_notebook_cells_and_future_annotations():
    # a function typed into a notebook: its source is only in linecache
    src = textwrap.dedent('''\
        from __future__ import annotations
        import numpy as np

        def cell_fn(x: np.ndarray) -> float:
            """A notebook function."""
            return np.sum(np.log1p(x * x))
    ''')
    filename = "<ipython-input-7-0123456789ab>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    ns = {}
    exec(compile(src, filename, "exec"), ns)
    x = np.linspace(0.1, 1, 4)
    np.testing.assert_allclose(grad(ns["cell_fn"])(x), 2 * x / (1 + x * x), rtol=1e-12)
    # the cell re-run with other text: the old function object no longer matches
    src2 = src.replace("np.log1p(x * x)", "np.log1p(x * x * 2)")
    linecache.cache[filename] = (len(src2), None, src2.splitlines(True), filename)
    fresh = {}
    exec(compile(src, filename, "exec"), fresh)      # the code that "runs" is the old text
    with pytest.raises(TranspileError, match="changed after it was imported"):
        parse_function(fresh["cell_fn"])
