"""Programs found by the random-program tests (tests/random_programs.py) that once gave wrong
numbers or crashed, minimized; tests/test_random_regressions.py runs every transform on them."""
import numpy as np


def early_return_then_loop(x):          # jit(grad): a loop-carried name read after the if
    if np.sum(x) > -0.2:
        return np.sum(x)
    t3 = x * 1.0
    for i in range(2):
        t3 = t3 * 0.5 + np.sin(x)
    return np.sum(np.sin(t3))


def early_return_then_while(x):         # vmap(grad) where every example returns early
    if np.sum(x) > 0.0:
        return np.sum(np.sin(x) * x)
    t3 = x * 1.0
    k = 0
    while np.sum(np.abs(t3)) < 20.0 and k < 3:
        t3 = t3 * 1.5 + 0.25
        k = k + 1
    return np.sum(np.sin(t3))


def early_return_then_view_write(x):    # grad: the adjoint of a view still holds 0.0
    if np.sum(x) > 0.3:
        return np.sum(np.sin(x) * x)
    t3 = x * 1.0
    vt3 = t3[:2]
    vt3 *= 3.0
    return np.sum(t3 * t3)


def argument_write_then_break(x):       # vmap(grad): the argument written back too early
    t1 = np.tanh(x) * x
    x[0] = np.cos(x[1]) * 1.5
    t4 = t1 * 1.0
    for i in range(3):
        t4 = t4 * 0.5 + np.sin(t1)
        if np.sum(t4) > 0.5:
            break
    return np.sum(t4 * t4)


def recurrence_after_copy(x):           # jit(grad): the seed's buffer written in place
    t2 = x * 1.0
    t3 = t2 * 1.0
    for i in range(1, 4):
        t3[i] = np.tanh(t3[i - 1] * 0.5 + x[i])
    return np.sum(t2 + t3)


def unreached_adjoint(x):               # grad: unbroadcast of an adjoint that stayed 0.0
    if np.sum(x) > 0.3:
        return np.sum(np.sin(x) * x)
    t2 = x * 0.5 - 1.0
    t4 = x * 1.0
    if np.sum(t4) > -0.2:
        return np.sum(np.sin(t4) * t4)
    return np.sum(np.sin(t2 * -0.75))


def argument_written_twice(x):          # jit: fusion moved a read past an in-place write
    x[1] = np.cos(x[2]) * 1.5
    t1 = x * 1.0
    x[3] = np.cos(x[0]) * 1.5
    t2 = x * 1.0
    t4 = t1 * 0.5 + np.sin(t2)
    return np.sum(np.sin(t4))


def scalar_alias_then_augassign(x):     # jit(grad): rt.shape_like read back as a saved value
    s = x[0]
    alias = s
    s += np.sum(x * x)
    return np.sum(x * s + alias)


def early_return_after_loop(x):         # reverse over reverse: an adjoint of a value bound
    t1 = x * 1.0                        # on one path only was made from it on the other
    for i in range(2):
        t1 = t1 * 0.5 + np.sin(x)
    if np.sum(x) > 0.0:
        return np.sum(np.sin(x) * x)
    t2 = t1 * 0.5
    return np.sum(t2 * t2)


def slice_grown_in_a_loop(x):           # vmap(grad): a batched zero cotangent of shape (batch,)
    wt1 = x[:1]                         # added into a batched slice of x (a broadcast error)
    for i in range(4):
        if wt1.shape[0] < 2:
            wt1 = x[:wt1.shape[0] + 1]
    t1 = x * np.sum(wt1) + len(wt1)
    if np.sum(x) > 0.0:
        t5 = t1 * -0.75 + -0.75
    else:
        t5 = x - t1
    return np.sum(t5)


def list_of_data_length_then_branch(x):  # jit(vmap(grad)) crashed while compiling (a zero
    lt2 = []                             # adjoint joined with a value of run-time length)
    for i in range(4):
        if x[i] > 0.0:
            lt2.append(x[i] * 2.0)
    t2 = x * (np.sum(np.array(lt2)) + len(lt2))
    lt3 = []
    for u, v in zip(t2, x):
        lt3.append(u * np.cos(v))
    t3 = np.array(lt3) + t2
    if np.sum(t2) > 0.0:
        t5 = t3 * -0.75 + -0.75
    else:
        t5 = x - t2
    return np.sum(t5)


def last_appended_or_default(x):        # vmap(grad): both sides of the batched `if lt` ran the
    lt1 = []                            # read's adjoint with a placeholder index (IndexError)
    for i in range(4):
        if x[i] > 0.5:
            lt1.append(x[i] * 2.0)
    t1 = x * (lt1[-1] if lt1 else 0.5)
    return np.sum(t1)


def best_starting_as_none(x):          # `best = None ... if best is None or ...` was refused
    best = None                         # (now a value and a flag: frontend/optional_locals.py);
                                        # vmap(grad) crashed on the loop's `if` on a carried flag
    prev = None
    total = 0.0
    for i in range(4):
        d = (x[i] - 0.25) ** 2 + 0.1 * i     # (no ties: a min is not differentiable there)
        if best is None or d < best:
            best = d
        if prev is not None:
            total = total + prev * x[i]
        prev = x[i] * 0.5
    return best + total


def swapped_by_views(x):                # tuple assignment of views: NumPy copies row 1 into
    A = np.outer(x, x[:2])              # row 0, then the new row 0 into row 1 (jit swapped)
    A[0], A[1] = A[1], A[0]
    np.multiply(A, 1.5, out=A)          # out= was refused as a statement with no effect
    return np.sum(A * np.arange(8.0).reshape(4, 2))


def view_scaled_after_early_return(x):   # vmap(grad) (a loop over the batch: the adjoint of
    if np.sum(x) > 0.3:                  # t4 is an array on one path, 0.0 on the other) zeroed
        t1 = x + x                       # part of the scalar 0.0 of `vt4 *= 3` (IndexError)
    else:
        t1 = x * -0.75 + -0.75
    t2 = x * t1
    if np.sum(t1) > 0.3:
        return np.sum(np.sin(t1) * t1)
    t4 = t1 * 1.0
    vt4 = t4[:2]
    vt4 *= 3.0
    t5 = t2 * 1.0
    if np.sum(t1) > 0.3:
        t5 = np.sqrt(t4 * t4 + 1.0)
    return np.sum(t5)


def rows_grown_in_a_loop(x):            # jit(grad): the adjoint of a block of rows of run-time
    A = np.outer(x, np.cos(x))          # length, reset to 0 each iteration, was 0.0 on one path
    w = A[:1, :]                        # and an array on the other (a fallback)
    for i in range(4):
        if w.shape[0] < 3:
            w = A[:w.shape[0] + 1, :]
    s = np.sum(w * w, axis=0)
    return np.sum(s * x) + w.shape[0]


def windows_grown_and_summed(x):        # two grown windows multiplied elementwise
    a = x[:1]
    b = np.sin(x)[:1]
    for i in range(3):
        if a.shape[0] < 3:
            a = x[:a.shape[0] + 1]
            b = np.sin(x)[:b.shape[0] + 1]
    return np.sum(a * b) + np.sum(a) * 0.5


def list_grown_under_an_if_then_joined(x):   # jit(grad): the cotangent of the list's buffer
    t1 = np.log(1.0 + x * x)                # (run-time rows) was read by written_part and
    rows = []                               # cast_like, which needed a known length
    for i in range(3):
        if t1[i] > 0.5:
            rows.append(x * t1[i])
    t2 = x + (np.stack(rows[::2] + rows[-1:], axis=1).sum(axis=1) if rows else t1)
    return np.sum(t2 * t2)


PROGRAMS = [early_return_then_loop, early_return_then_while, early_return_then_view_write,
            argument_write_then_break, recurrence_after_copy, unreached_adjoint,
            argument_written_twice, scalar_alias_then_augassign, early_return_after_loop,
            slice_grown_in_a_loop, last_appended_or_default, best_starting_as_none,
            swapped_by_views, view_scaled_after_early_return, rows_grown_in_a_loop,
            windows_grown_and_summed]
# second order (reverse over reverse, forward over reverse) on the ones that write no argument
SECOND_ORDER = [early_return_then_loop, early_return_then_while, unreached_adjoint,
                early_return_after_loop]
