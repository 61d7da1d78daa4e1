"""Programs that write into arrays (subscripts, slices, views, aliases, augmented assignment):
the cases tests/test_mutation.py runs under every transform against NumPy itself."""
import numpy as np


def alias_after_write(x):            # the snippet of issue 11
    b = x * 2.0
    b[0] = 1.0
    c = b * 1.0
    return np.sum(b) + 0.0 * np.sum(c)


def view_write(x):
    y = x * 1.0
    v = y[:2]
    v *= 10.0
    return np.sum(y * x)


def int_truncation(x):
    idx = np.zeros(3, np.int64)
    idx[0] = x[0] * 10.0
    return np.sum(idx * x[:3]) + np.sum(x)


def alias_before_loop(x):
    v = np.cos(x)
    acc = v
    for i in range(2):
        acc = acc * v
    return np.sum(acc)


def slice_writes(x):
    out = np.zeros(6)
    out[1:4] = x[:3] * 2.0
    out[::2] += 1.0
    return np.sum(out * x)


def row_writes(x):
    A = x.reshape(2, 3)
    B = np.zeros((2, 3))
    for i in range(2):
        B[i] = A[i] * 3.0
        B[i, 0] = A[i, 1] ** 2
    return np.sum(B * B)


def rnn(x):
    W = np.outer(x[:3], x[3:]) * 0.5
    h = np.zeros((4, 3))
    h[0] = x[:3]
    for t in range(3):
        h[t + 1] = np.tanh(W @ h[t] + x[t])
    return np.sum(h ** 2)


def copy_then_write(x):
    y = x.copy()
    y[0] = 0.0
    return np.sum(y * x)


def writes_argument(x):
    x[0] = 0.5 * x[1]
    x[2:4] *= 3.0
    return np.sum(x ** 2)


def row_view_in_loop(x):
    B = x.reshape(2, 3) * 1.0
    for i in range(2):
        r = B[i]
        r *= 2.0 + i
    return np.sum(B * x.reshape(2, 3))


def transpose_view(x):
    Y = x.reshape(2, 3) * 1.0
    T = Y.T
    T[0] = x[3:5]
    return np.sum(Y ** 2)


def alias_in_branch(x):
    y = x * 1.0
    b = y
    if np.sum(x) > 0:
        b[1] = 5.0 * x[2]
    else:
        b[2] = -x[1]
    return np.sum(y * x)


def branch_then_write(x):
    if np.sum(x) > 0:
        y = x * 2.0
    else:
        y = x * 3.0
    y[0] = 1.0
    return np.sum(y * x)


def _fill(a, v):
    a[0] = v
    a[1:] += v


def helper_writes(x):
    y = x * 1.0
    _fill(y, x[1])
    return np.sum(y * y)


def augassign_alias(x):
    a = x * 1.0
    b = a
    b += x
    return np.sum(a * x)


def reshape_view(x):
    y = x * 1.0
    m = y.reshape(2, 3)
    m[0] = 0.5
    return np.sum(y * x)


def asarray_alias(x):
    y = x * 1.0
    z = np.asarray(y)
    z[1] = 7.0
    return np.sum(y * x)


def flatten_copy(x):
    Y = x.reshape(2, 3) * 1.0
    m = Y.flatten()
    m[0] = 100.0
    return np.sum(Y * Y) + np.sum(m)


def while_writes(x):
    y = x * 1.0
    i = 0
    while i < 3:
        y[i] = y[i] * y[i + 1]
        i = i + 1
    return np.sum(y)


def view_then_base_write(x):
    y = x * 1.0
    v = y[1:4]
    y[2] = 10.0 * x[0]
    return np.sum(v * v)


def loop_accumulate_slices(x):
    out = np.zeros(6)
    for i in range(3):
        out[i:i + 3] += x[i] * x[3:]
    return np.sum(out ** 2)


PROGRAMS = [alias_after_write, view_write, int_truncation, alias_before_loop, slice_writes,
            row_writes, rnn, copy_then_write, writes_argument, row_view_in_loop,
            transpose_view, alias_in_branch, branch_then_write, helper_writes, augassign_alias,
            reshape_view, asarray_alias, flatten_copy, while_writes, view_then_base_write,
            loop_accumulate_slices]
