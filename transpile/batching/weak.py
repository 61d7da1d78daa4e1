"""Python floats that become batched keep NumPy's per-example dtype.

Per example, `acc = 0.0` is a Python float: NumPy promotes it weakly, so `acc + v` with a
float32 v is float32. Batched, the same value is an array (np.broadcast_to(0.0, ...) before a
loop, np.where(c, 1, 2.5) for `c = 1` / `c = 2.5` on a batched predicate), and float64 arrays
promote strongly: the whole computation became float64. Such a value is cast to the dtype
NumPy gives its Python numbers next to the mapped arguments (np.result_type(x, 0.0): float32
for float32 x, float64 for integer x), when each number is exact in every float dtype (so
the cast changes no value)."""
import numpy as np

from transpile.core.ir import Const, Eqn, TupleArg, Var
from transpile.primitives.internal.adjoint_helpers import identity
from transpile.primitives.internal.control import assign


def python_number(sweep, atom):
    """The Python int/float an unbatched atom holds (weakly typed under NumPy), or None."""
    if isinstance(atom, Const) and type(atom.value) in (int, float):
        return atom.value
    if isinstance(atom, Var) and not sweep.b(atom):
        return sweep.weak.get(atom.name)
    return None


def note(sweep, eqn):
    """Record (or forget) that an unbatched equation's output is a Python number."""
    value = None
    if eqn.prim in (assign, identity):
        value = python_number(sweep, eqn.args["x"])
    if value is None:
        sweep.weak.pop(eqn.out, None)
    else:
        sweep.weak[eqn.out] = value


def _exact(c):
    return np.isfinite(c) and float(np.float16(c)) == c


def cast_like_inputs(sweep, name, numbers):
    """The batched `name`, made from the Python numbers `numbers`, cast to NumPy's dtype for
    them next to the mapped arguments (only when one is a float and each is exact)."""
    numbers = [c for c in numbers if c is not None]
    if not numbers or not any(type(c) is float for c in numbers) or \
            not all(_exact(c) for c in numbers) or not sweep.mapped:
        return
    items = tuple(Var(p) for p in sweep.mapped) + tuple(Const(c) for c in numbers)
    dtype = sweep.emit("result_type", {"arrays": TupleArg(items)}, base="dtype",
                       batched=False, rank=None)
    sweep.cur, sweep.cur_rank = Eqn(name, None, {}), sweep.rk.get(name)
    sweep.final("astype", {"x": Var(name), "dtype": dtype})
