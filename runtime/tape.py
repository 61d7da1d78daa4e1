"""The tape that reverse-mode code uses to get through loops, and the functional array write.

Generated reverse-mode code is split into a forward sweep and a backward sweep. Straight-line
code needs no tape: every value has its own name (SSA) and is still there when the backward
sweep reads it. A loop body, though, rebinds the same names on every iteration. So the forward
sweep of a loop ends each iteration with

    tape.push(h)            # the loop-carried value at the start of the iteration
    ...
    tape.push(a)            # every value the iteration bound (its locals)

and the backward sweep runs the loop in reverse, starting each iteration by popping them back
(`a = tape.pop()`, ..., `h = tape.pop()`), so the adjoint statements read exactly the values
the forward iteration computed. A `while` loop also counts its iterations (the count is the
backward loop's trip count); an `if` inside a loop pushes what its branch bound.

Why this design (and not, say, recomputing each iteration from its inputs): the generated
derivative must itself be transformable. The pushes and pops are ordinary statements in core
Python (`transpile.core.ir.Push`, and the primitive `tape_pop`), so an outer transform treats them
like any other statement:

  * an outer reverse pass gives each active tape an adjoint tape: the adjoint of
    `x = tape.pop()` is `dtape.push(dx)`, the adjoint of `tape.push(v)` is
    `dv = dv + dtape.pop()`. The outer backward sweep runs the inner pops and pushes in the
    opposite order, so the adjoint tape is last-in-first-out exactly like the tape itself.
  * an outer forward pass gives each active tape a tangent tape: `tape_dot.push(v_dot)` next
    to `tape.push(v)`, `x_dot = tape_dot.pop()` next to `x = tape.pop()`.

Nothing is ever re-executed, so a pop runs exactly once per push, at every order of
differentiation. A tape is a plain Python list underneath (Numba can compile the same pattern
with a typed List, or with preallocated arrays when trip counts are known).

`setitem(x, index, v)` is `y = x.copy(); y[index] = v` (NumPy assignment into an array, written
functionally so the old value stays available to the adjoint code that needs it).
"""
import numpy as np


class Tape:
    """A last-in-first-out stack of values (the branch taken, trip counts, overwritten values)."""

    __slots__ = ("items",)

    def __init__(self):
        self.items = []

    def push(self, value):
        self.items.append(value)

    def pop(self):
        return self.items.pop()

    def __len__(self):
        return len(self.items)

    def __repr__(self):
        return f"<Tape with {len(self.items)} values>"


def tape_pop(tape):
    return tape.pop()


def setitem(x, index, v):
    """A copy of x with x[index] = v (the functional form of a subscript assignment). As in
    NumPy, x keeps its dtype: a float written into an integer array is truncated."""
    y = np.array(x, copy=True)
    y[index] = v
    return y


def assign(x):
    """A plain copy of a name (`a = b`); used for the joins of branches and loop-carried values."""
    return x


def adjoint_like(d, x):
    """An accumulated adjoint that may still be the scalar 0.0, as an array shaped like x."""
    if np.shape(d) == np.shape(x) and np.result_type(d) == np.result_type(x):
        return d
    out = np.zeros(np.shape(x), dtype=np.result_type(x) if np.issubdtype(
        np.result_type(x), np.inexact) else np.float64)
    out = out + d
    if np.ndim(x) == 0 and not isinstance(x, np.ndarray):
        return out.dtype.type(out)
    return out.astype(out.dtype, copy=False)


def trip_count(start, stop, step):
    """len(range(start, stop, step)): how many times a for loop ran (for the backward loop)."""
    return len(range(int(start), int(stop), int(step)))


def cast_into(x, like):
    """The value an augmented assignment `like op= ...` leaves in `like`: NumPy computes in
    place, so an array keeps its dtype (casting 'same_kind', as NumPy's ufuncs do); a scalar
    is simply rebound."""
    if isinstance(like, np.ndarray):
        x = np.asarray(x)
        if x.dtype != like.dtype:
            if not np.can_cast(x.dtype, like.dtype, casting="same_kind"):
                raise TypeError(f"Cannot cast ufunc output from dtype('{x.dtype}') to "
                                f"dtype('{like.dtype}') with casting rule 'same_kind' "
                                "(an augmented assignment keeps the array's dtype)")
            x = x.astype(like.dtype)
        return x
    return x


def float_part(t, like):
    """A derivative that flows into `like`: zero where `like` is an integer (or bool) array,
    whose values cannot change infinitesimally (JAX treats integer arrays the same way)."""
    if np.issubdtype(np.result_type(like), np.inexact):
        return t
    return np.zeros(np.shape(t), dtype=np.result_type(t, np.float64) if np.issubdtype(
        np.result_type(t), np.inexact) else np.float64)


def write_back(dest, value):
    """The last statement of a function that wrote into its argument `dest`: copy the final
    value into the caller's array, as NumPy's in-place writes would have left it."""
    if isinstance(dest, np.ndarray) and value is not dest:
        dest[...] = value
    return None


def write_in_place(x, index, v):
    """`x[index] = v` in place, returning x: the generated code's O(1) form of setitem, used
    where optimize/inplace.py proved that nothing reads the old value of x afterwards."""
    if type(x) is np.ndarray and x.flags.writeable:
        x[index] = v
        return x
    if not isinstance(x, np.ndarray) and np.ndim(x) == 0 and np.ndim(v) == 0 and v == 0 and \
            x == 0:
        return x    # an adjoint still holding its scalar 0.0 (nothing reached it): zeroing a
        # part of it (reverse mode of `v *= 3` through a view) leaves it 0.0
    return setitem(x, index, v)


def compute_into(buf, ufunc, *args):
    """ufunc(*args), written into `buf` when it is a writable array of the result's shape and
    dtype (the generated code passes a buffer that nothing reads afterwards)."""
    if type(buf) is np.ndarray and buf.flags.writeable and ufunc.signature is None:
        try:
            shape = np.broadcast_shapes(*[np.shape(a) for a in args])
        except ValueError:
            shape = None
        if shape == buf.shape and _out_dtype(ufunc, args) == buf.dtype:
            return ufunc(*args, out=buf)
    return ufunc(*args)


def _out_dtype(ufunc, args):
    """The dtype ufunc(*args) returns (np.divide of integers is float, np.greater's is bool);
    Python numbers are weak, as NumPy treats them. Where NumPy cannot tell (no loop, or a
    NumPy without weak Python numbers in resolve_dtypes): the promoted input dtype."""
    try:
        return ufunc.resolve_dtypes(tuple(type(a) if type(a) in (int, float, complex)
                                          else np.result_type(a) for a in args) + (None,))[-1]
    except (TypeError, ValueError):
        return np.result_type(*args)


def shape_like(x):
    """Zeros with x's shape, dtype and kind (array or scalar) in O(1) memory: a read-only
    zero-strided array for an array, a zero of x's type for a scalar (anything else is
    returned as it is). Reverse mode saves this on the tape, instead of x itself, for a value
    the backward sweep reads only for its shape or dtype (`rt.unbroadcast(g, x)`,
    `rt.float_part(g, x)`), so a loop that writes into an array does not save the array on
    every iteration; derivative rules use it for a zero shaped like a cotangent."""
    if isinstance(x, np.ndarray):
        return np.broadcast_to(np.zeros((), dtype=x.dtype), x.shape)
    if isinstance(x, (np.generic, float, int, complex)) and not isinstance(x, bool):
        return type(x)(0)
    return x


def shape_only(x):
    """shape_like(x) where reverse mode saves it on the tape in place of x (only x's shape and
    dtype are read back); a name of its own so that generated code read again (jit of grad)
    keeps the two apart."""
    return shape_like(x)


def written_part(x, index):
    """The part of x (an adjoint shaped like the array written) that flows to the value of a
    write `y[index] = v`: x[index], in a buffer of its own (reverse mode then zeroes x[index]
    in place), with 0 where an integer-array index names an element more than once and a
    later occurrence overwrote it (NumPy keeps the last value written). An adjoint still
    holding its scalar 0.0 (nothing reached it on this path) gives 0.0."""
    if np.ndim(x) == 0:
        return x
    sel = x[index]
    if not isinstance(sel, np.ndarray):
        return sel
    if _basic_index(index):
        return np.array(sel, copy=True)
    order = np.arange(sel.size).reshape(sel.shape)
    ids = np.full(np.shape(x), -1, dtype=np.intp)
    ids[index] = order
    return np.where(ids[index] == order, sel, np.zeros((), dtype=sel.dtype))


def added_to_zero(d):
    """`0.0 + d`, for an adjoint that is known to hold 0.0 (reverse mode's loops reset adjoints
    to 0.0): a floating array d itself, else `0.0 + d`. The generated code then refers to d's
    buffer through the new name as well (optimize/inplace.py tracks that alias)."""
    if type(d) is np.ndarray and d.ndim and np.issubdtype(d.dtype, np.inexact):
        return d
    return 0.0 + d


def add_at(acc, index, ct, like):
    """`acc + rt.getitem_vjp(ct, like, index)` (an adjoint accumulating the cotangent of a read
    `like[index]`) without the array of zeros: ct is added into acc's buffer at index, where
    acc is a writable array of like's shape whose dtype holds the sum. The generated code uses
    it where optimize/inplace.py proved that nothing reads acc's old value afterwards."""
    if type(acc) is np.ndarray and acc.flags.writeable and acc.shape == np.shape(like) \
            and (np.result_type(acc, ct) == acc.dtype or _primal_dtype(acc, ct, like)):
        if _basic_index(index):
            acc[index] += ct
        else:
            np.add.at(acc, index, ct)
        return acc
    from .adjoints import getitem_vjp
    out = acc + getitem_vjp(ct, like, index)
    if isinstance(acc, np.ndarray) and isinstance(out, np.ndarray) and \
            out.dtype != acc.dtype and _primal_dtype(acc, ct, like):
        out = out.astype(acc.dtype)
    return out


def _primal_dtype(acc, ct, like):
    """Is acc the adjoint of a float array `like` in like's own dtype, which a wider
    cotangent is cast into (as JAX gives a float32 value a float32 cotangent)?"""
    return acc.dtype == np.result_type(like) and np.issubdtype(acc.dtype, np.inexact) and \
        np.can_cast(np.result_type(ct), acc.dtype, casting="same_kind")


def _basic_index(index):
    """An index of integers, slices, Ellipsis and None: no element is selected twice."""
    items = index if isinstance(index, tuple) else (index,)
    return all(it is None or it is Ellipsis or isinstance(it, (slice, int, np.integer))
               for it in items)


def if_array(probe, a, b):
    """a when probe is an ndarray, else b. `v op= e` writes in place into an array but only
    rebinds v when v is a scalar (`acc = x[0]; acc += ...`): the other names that held v take
    `rt.if_array(v_old, v_new, v_old)` (transpile/frontend/normalize/aliasing_scalars.py)."""
    return a if isinstance(probe, np.ndarray) else b


def setitem_if_array(x, index, v, probe):
    """x with x[index] = v (a copy, as rt.setitem) when probe, the old value of x[index], is an
    ndarray (a view of x, so a write through it changed x); x itself when probe is a scalar
    (NumPy copied the element out of x, and x is unchanged)."""
    if isinstance(probe, np.ndarray):
        return setitem(x, index, v)
    return x


def write_in_place_if_array(x, index, v, probe):
    """rt.setitem_if_array, writing into x in place (where optimize/inplace.py proved that
    nothing reads the old value of x afterwards)."""
    if isinstance(probe, np.ndarray):
        return write_in_place(x, index, v)
    return x
