"""What the user sees when something goes wrong: run-time errors of compiled code at the
user's line (with the index and the axis length), shape mismatches before any code runs,
filtered tracebacks (at most 2 frames of the package), and the API gaps of a first hour.

PYTEST_DONT_REWRITE: functions under test hold `assert`s, which pytest would rewrite (their
code would no longer match their source).
"""
import os
import pdb
import subprocess
import sys
import traceback
import warnings

import numpy as np
import pytest

import transpile as tp
from transpile import grad, jit, vmap

THIS = os.path.abspath(__file__)
PACKAGE_DIRS = (os.path.dirname(os.path.abspath(tp.__file__)) + os.sep,
                os.path.dirname(os.path.abspath(sys.modules["transpile_runtime"].__file__))
                + os.sep)


def _line_of(fn, text):
    """The line number of the line of `fn`'s source that holds `text`."""
    import inspect
    lines, start = inspect.getsourcelines(fn)
    for k, line in enumerate(lines):
        if text in line:
            return start + k
    raise AssertionError(text)


def _raised(fn, *args):
    try:
        fn(*args)
    except Exception as e:      # noqa: BLE001
        return e
    raise AssertionError("no exception")


def _formatted(e):
    return "".join(traceback.format_exception(e))


def _package_frames(e):
    return [f for f in traceback.extract_tb(e.__traceback__)
            if f.filename.startswith(PACKAGE_DIRS)]


@pytest.fixture(autouse=True)
def _filtering_on(monkeypatch):
    monkeypatch.delenv("TRANSPILE_TRACEBACK_FILTERING", raising=False)
    tp.config.update("transpile_traceback_filtering", None)
    yield
    tp.config.update("transpile_traceback_filtering", None)


# ---- run-time errors in compiled code ----------------------------------------------------------

def past_the_end(x, i):
    y = x * 2.0
    return y[i]


def test_index_error_in_compiled_code_names_the_users_line_index_and_size():
    x = np.arange(5.0)
    f = jit(past_the_end)
    assert f(x, 2) == 4.0                       # compiled and right
    e = _raised(f, x, 7)
    assert isinstance(e, IndexError)
    line = _line_of(past_the_end, "return y[i]")
    assert str(e).startswith(f"{THIS}:{line}: index 7 is out of bounds for axis 0 with size 5")
    text = _formatted(e)
    assert f'File "{THIS}", line {line}, in past_the_end' in text
    assert "return y[i]" in text
    # the generated file and line stay reachable (a note under the message)
    assert "generated code: " in text and ".py:" in text.split("generated code: ")[1]
    assert len(_package_frames(e)) <= 2


def test_index_error_then_the_function_still_runs_compiled():
    x = np.arange(5.0)
    f = jit(past_the_end)
    with pytest.raises(IndexError):
        f(x, -9)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert f(x, 4) == 8.0
        assert f(x, -1) == 8.0                   # NumPy's negative index, as in Python


def writes_then_fails(x, i):
    x[0] = x[0] + 1.0
    return x[i]


def test_rerun_for_the_message_does_not_write_twice():
    x = np.zeros(3)
    f = jit(writes_then_fails)
    f(x, 1)
    assert x[0] == 1.0
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 3"):
        f(x, 5)
    # never written twice (the message comes from a run on copies), and not at all: writes
    # into arguments are made when the call returns (docs/debugging.md)
    assert x[0] == 1.0


def fills_then_fails(x, i, n):
    x[0] = 1.0
    for k in range(1, 3):
        x[k] = x[k - 1] + 1.0
    assert n > 0, "n must be positive"
    return x[i]


@pytest.mark.parametrize("i, n, error", [(9, 1, IndexError), (1, 0, AssertionError)])
def test_a_call_that_raises_leaves_the_arguments_as_they_were(i, n, error):
    x = np.zeros(4)
    with pytest.raises(error):
        fills_then_fails(x, i, n)
    assert x.tolist() == [1.0, 2.0, 3.0, 0.0]            # NumPy: the writes before the error
    for f in (jit(fills_then_fails), jit(fills_then_fails, backend="numpy")):
        x = np.zeros(4)
        with pytest.raises(error):
            f(x, i, n)
        assert x.tolist() == [0.0] * 4                   # transformed: none of them
        assert f(x, 2, 1) == 3.0 and x.tolist() == [1.0, 2.0, 3.0, 0.0]


def in_a_loop(x, n):
    total = 0.0
    for k in range(n):
        total = total + x[k] * 2.0
    return total


def test_index_error_inside_a_loop():
    x = np.arange(4.0)
    f = jit(in_a_loop)
    assert f(x, 4) == 12.0
    e = _raised(f, x, 6)
    line = _line_of(in_a_loop, "total = total + x[k]")
    assert isinstance(e, IndexError)
    assert f"{THIS}:{line}:" in str(e) and "index 4 is out of bounds for axis 0 with size 4" \
        in str(e)


def divide_ints(a, b):
    return a // b


def test_zero_division_in_compiled_int_code_names_the_line():
    f = jit(divide_ints)
    assert f(np.arange(4), np.full(4, 2)).tolist() == [0, 0, 1, 1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = f(np.arange(4), np.zeros(4, np.int64))   # NumPy semantics: 0 and a warning
    assert out.tolist() == (np.arange(4) // np.maximum(np.zeros(4, np.int64), 1) * 0).tolist()


# ---- shape mismatches before any code runs -----------------------------------------------------

def matmul_after_add(a, b):
    return (a + 1.0) @ b


def test_shape_mismatch_is_a_value_error_at_the_users_line_without_a_warning():
    a, b = np.ones((2, 3)), np.ones((4, 2))
    f = jit(matmul_after_add)
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # no "Numba cannot compile" fallback warning
        e = _raised(f, a, b)
    assert isinstance(e, ValueError) and isinstance(e, tp.TranspileError)
    line = _line_of(matmul_after_add, "return (a + 1.0) @ b")
    assert str(e).startswith(f"{THIS}:{line}: shapes (2, 3) and (4, 2) do not fit in np.matmul")
    text = _formatted(e)
    assert f'File "{THIS}", line {line}' in text
    assert len(_package_frames(e)) <= 2
    # right shapes: compiled, and the same numbers as NumPy
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(f(a, np.ones((3, 2))), (a + 1.0) @ np.ones((3, 2)))


def add_mismatch(a, b):
    c = a * 2.0
    return c + b


def test_broadcast_mismatch_names_both_shapes():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        e = _raised(jit(add_mismatch), np.ones(3), np.ones(4))
    line = _line_of(add_mismatch, "return c + b")
    assert isinstance(e, ValueError)
    assert f"{THIS}:{line}: shapes (3,) and (4,) cannot be broadcast together in np.add" \
        in str(e)


def checked_matmul(a, b, n):
    assert n > 0, f"n must be positive, got {n}"
    c = a @ b
    return c * n


def test_mismatch_after_a_users_check_lets_the_check_speak_first():
    a, b = np.ones((2, 3)), np.ones((4, 2))
    f = jit(checked_matmul)
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # compiled: no fallback warning
        with pytest.raises(AssertionError, match="n must be positive, got -1"):
            f(a, b, -1)
        e = _raised(f, a, b, 2)                 # the check passes: the mismatch raises
    line = _line_of(checked_matmul, "c = a @ b")
    assert isinstance(e, ValueError)
    assert str(e).startswith(f"{THIS}:{line}: shapes (2, 3) and (4, 2) do not fit in np.matmul")
    assert f'File "{THIS}", line {line}' in _formatted(e)
    src = f.source_for(a, b, 2)
    assert "raise ValueError(" in src and "do not fit in np.matmul" in src
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(f(a, np.ones((3, 2)), 2), 2 * a @ np.ones((3, 2)))


def mismatch_in_a_branch(a, b, flag):
    if flag > 0:
        return a @ b
    return a


def test_mismatch_in_a_branch_not_taken_is_no_error():
    a, b = np.ones((2, 3)), np.ones((4, 2))
    out = jit(mismatch_in_a_branch)(a, b, -1)
    np.testing.assert_allclose(out, a)


# ---- traceback filtering -----------------------------------------------------------------------

def uses_try(x):
    try:
        y = x * 2
    except ValueError:
        y = x
    return y


def test_transform_time_error_is_filtered_and_ends_at_the_users_line():
    e = _raised(grad(lambda x: np.sum(uses_try(x))), np.ones(2))
    assert isinstance(e, tp.UnsupportedSyntax)
    line = _line_of(uses_try, "try:")
    text = _formatted(e)
    assert f'File "{THIS}", line {line}' in text
    assert len(_package_frames(e)) <= 2, text
    e = _raised(jit(uses_try), np.ones(2))
    assert len(_package_frames(e)) <= 2, _formatted(e)


def test_filtering_off_shows_the_frames(monkeypatch):
    monkeypatch.setenv("TRANSPILE_TRACEBACK_FILTERING", "off")
    e = _raised(grad(lambda x: np.sum(uses_try(x))), np.ones(2))
    assert len(_package_frames(e)) > 2
    monkeypatch.delenv("TRANSPILE_TRACEBACK_FILTERING")
    tp.config.update("transpile_traceback_filtering", "off")
    e = _raised(grad(lambda x: np.sum(uses_try(x))), np.ones(2))
    assert len(_package_frames(e)) > 2
    tp.config.update("transpile_traceback_filtering", "on")
    e = _raised(grad(lambda x: np.sum(uses_try(x))), np.ones(2))
    assert len(_package_frames(e)) <= 2
    with pytest.raises(AttributeError, match="transpile_traceback_filtering"):
        tp.config.update("no_such_setting", 1)


def eager_error(x):
    y = np.log(x)
    return np.sum(y[10])


@pytest.mark.parametrize("transform", [grad, vmap, lambda f: jit(f, backend="numpy")])
def test_runtime_error_in_generated_numpy_code_is_filtered(transform):
    x = np.ones((3, 4)) if transform is vmap else np.ones(4)
    e = _raised(transform(eager_error), x)
    assert isinstance(e, IndexError)
    text = _formatted(e)
    assert len(_package_frames(e)) <= 2, text
    assert "10]" in text                       # the generated line (or the user's) is shown


def test_pdb_post_mortem_lands_in_user_or_generated_code():
    e = _raised(jit(past_the_end), np.arange(5.0), 7)
    tb = e.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    assert not tb.tb_frame.f_code.co_filename.startswith(PACKAGE_DIRS)
    assert tb.tb_frame.f_code.co_filename == THIS
    # pdb.post_mortem walks the same traceback: its last frame is where it stops
    p = pdb.Pdb()
    p.reset()
    stack, index = p.get_stack(None, e.__traceback__)
    assert stack[index][0].f_code.co_filename == THIS


def test_assert_in_compiled_code_keeps_its_message_and_points_at_the_line():
    def checked(x):
        s = np.sum(x)
        if s > 10.0:
            raise ValueError(f"sum too large: {s:.1f}")
        return s
    f = jit(checked)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert f(np.ones(3)) == 3.0
        e = _raised(f, np.full(3, 5.0))
    assert isinstance(e, ValueError) and str(e) == "sum too large: 15.0"
    line = _line_of(checked, "raise ValueError")
    assert f'File "{THIS}", line {line}' in _formatted(e)
    assert len(_package_frames(e)) <= 2


# ---- API gaps ----------------------------------------------------------------------------------

def test_jit_source_after_a_call_and_before():
    f = jit(past_the_end)
    with pytest.raises(TypeError, match=r"call it first.*source_for\(x, i\)"):
        f.source
    f(np.arange(5.0), 1)
    src = f.source
    assert "@njit" in src and "def past_the_end__jit" in src
    assert f"# line {_line_of(past_the_end, 'return y[i]')}: return y[i]" in src
    assert "float64[:]" in src                  # (sizes are read at run time)
    f(np.arange(3.0, dtype=np.float32), 1)      # another specialization
    assert "float32[:]" in f.source
    f(np.arange(5.0), 1)                        # back to the first: .source follows the call
    assert "float64[:]" in f.source


def comprehension_over_rows(x):
    return np.stack([r * 2.0 for r in x])


def test_vmap_source_without_examples_says_it_needs_them():
    with pytest.raises(tp.TranspileError, match=r"vmap\(comprehension_over_rows\)\.source "
                                                r"needs example arguments") as info:
        vmap(comprehension_over_rows).source
    assert "source_for(x)" in str(info.value)
    assert "def comprehension_over_rows__vmap" in \
        vmap(comprehension_over_rows).source_for(np.ones((2, 3, 4)))


def test_cli_show_jit_without_args_names_the_parameters(tmp_path):
    src = tmp_path / "model.py"
    src.write_text("import numpy as np\n\n\ndef predict(w, x, scale=2.0):\n"
                   "    return np.tanh(x @ w) * scale\n")
    out = subprocess.run([sys.executable, "-m", "transpile", "show", str(src), "-f", "predict",
                          "-t", "jit"], capture_output=True, text=True)
    assert out.returncode != 0
    assert "predict(w, x, scale=2.0) needs example arguments" in out.stderr
    assert '--args "np.ones(3), np.ones(3)"' in out.stderr
    ok = subprocess.run([sys.executable, "-m", "transpile", "show", str(src), "-f", "predict",
                         "-t", "jit", "--args", "np.ones(3), np.ones((4, 3))"],
                        capture_output=True, text=True)
    assert ok.returncode == 0 and "def predict__jit" in ok.stdout


def test_optimizers_and_random_without_importing_the_submodules():
    code = ("import transpile as tp, numpy as np\n"
            "init, update, get = tp.optimizers.sgd(0.5)\n"
            "s = update(0, np.ones(2), init(np.zeros(2)))\n"
            "print(get(s).tolist(), tp.random.normal(tp.random.PRNGKey(0), (2,)).shape)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "[-0.5, -0.5] (2,)", out.stderr


# ---- errors that pointed into NumPy's files, or at the wrong kind of global -------------------

def uses_polyval(x):
    return np.sum(np.polynomial.polynomial.polyval(x, [1.0, 2.0, 3.0]))


def test_library_function_without_rule_is_told_at_the_users_call():
    e = _raised(grad(uses_polyval), np.ones(3))
    assert isinstance(e, tp.TranspileError)
    line = _line_of(uses_polyval, "np.polynomial")
    msg = str(e)
    assert msg.startswith(f"{THIS}:{line}: np.polynomial.polynomial.polyval(...) has no "
                          "transpile rule")
    assert "ndmin" in msg                                     # the piece its source needs
    assert "numpy/polynomial/polynomial.py:" in msg          # where, for the curious
    assert "construct: np.polynomial.polynomial.polyval(x, [1.0, 2.0, 3.0])" in msg
    assert f'File "{THIS}", line {line}' in _formatted(e)
    assert len(_package_frames(e)) <= 2


CACHE = {}
TABLE = np.zeros(3)


def writes_global_dict(x):
    CACHE["last"] = x
    return np.sum(x)


def writes_global_array(x):
    TABLE[0] = 1.0
    return np.sum(x)


def test_writing_into_a_global_dict_is_not_called_an_array():
    msg = str(_raised(grad(writes_global_dict), np.ones(3)))
    assert "a global (or closure) dict" in msg and "np.copy" not in msg
    assert f"{THIS}:{_line_of(writes_global_dict, 'CACHE[')}:" in msg
    msg = str(_raised(grad(writes_global_array), np.ones(3)))
    assert "global (or closure) array" in msg and "np.copy(TABLE)" in msg


def test_an_error_inside_transpile_itself_says_how_to_see_its_frames():
    e = _raised(grad(lambda x: np.sum(x)), object())      # fails inside transpile's checks
    text = _formatted(e)
    assert len(_package_frames(e)) <= 2
    assert "TRANSPILE_TRACEBACK_FILTERING=off shows them" in text


def matmul_in_a_branch(a, b, flag):
    c = a * 2.0
    if flag > 0:
        c = c @ b
    return c


def add_in_a_loop(a, b, n):
    s = 0.0
    for i in range(n):
        s = s + np.sum(a + b)
    return s


@pytest.mark.parametrize("fn, args, text, shapes", [
    (matmul_in_a_branch, (np.ones((2, 3)), np.ones((4, 2)), 1), "c = c @ b",
     "shapes (2, 3) and (4, 2) do not fit in np.matmul"),
    (add_in_a_loop, (np.ones(3), np.ones(4), 2), "s = s + np.sum(a + b)",
     "shapes (3,) and (4,) cannot be broadcast together in np.add")])
def test_shape_mismatch_in_a_branch_or_loop_is_an_error_at_the_users_line(fn, args, text, shapes):
    f = jit(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # compiled: no fallback warning
        e = _raised(f, *args)
        # the branch not taken, the loop not run: no error, NumPy's numbers
        quiet = args[:-1] + (0,)
        np.testing.assert_array_equal(f(*quiet), fn(*quiet))
        assert f.last_tier == "compiled"
    assert isinstance(e, ValueError)
    line = _line_of(fn, text)
    assert str(e).startswith(f"{THIS}:{line}: {shapes}"), str(e)
    assert f'File "{THIS}", line {line}' in _formatted(e)
    assert len(_package_frames(e)) <= 2
    with pytest.raises(ValueError):             # NumPy itself fails there too
        fn(*args)


def draws_inside(key, x):
    k1, k2 = tp.random.split(key)
    return x + tp.random.normal(k1, (3,))


def test_tp_random_inside_jit_runs_compiled_with_the_same_numbers():
    # transpile.random's calls are rows: compiled (no fallback warning), the same bits as NumPy
    key, x = tp.random.PRNGKey(0), np.ones(3)
    f = jit(draws_inside)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = f(key, x)
    assert f.last_tier == "compiled"
    np.testing.assert_array_equal(got, draws_inside(key, x))
    k1, _ = tp.random.split(key)
    np.testing.assert_array_equal(got, x + tp.random.normal(k1, (3,)))


@pytest.mark.parametrize("entry", [lambda f: tp.jacfwd(f)(np.ones(2)),
                                   lambda f: tp.jacrev(f)(np.ones(2)),
                                   lambda f: tp.show(f),
                                   lambda f: vmap(f)(np.ones((2, 2))),
                                   lambda f: tp.value_and_grad(lambda x: np.sum(f(x)))(
                                       np.ones(2))])
def test_every_entry_point_filters(entry):
    e = _raised(entry, uses_try)
    assert isinstance(e, tp.UnsupportedSyntax)
    assert len(_package_frames(e)) <= 2, _formatted(e)
    assert f'File "{THIS}", line {_line_of(uses_try, "try:")}' in _formatted(e)


def appends_through_a_nested_list(x):
    rows = [[], []]
    for r, v in zip(rows, [x, 2 * x]):
        r.append(v)
    return np.sum(x) + len(rows[0]) + len(rows[1])


def test_append_to_a_list_held_inside_another_is_refused_not_lost():
    # the append rebinds r; rows would keep the empty lists (a silently wrong 3.0 for 5.0)
    assert appends_through_a_nested_list(np.ones(3)) == 5.0
    e = _raised(jit(appends_through_a_nested_list), np.ones(3))
    assert isinstance(e, tp.UnsupportedSyntax)
    assert "r.append(...) on a list another name (or a list holding it) also holds" in str(e)
