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


def repeated_index_write(x):       # NumPy keeps the last value written to a repeated index
    y = x * 1.0
    y[[0, 0, 2]] += x[1:4]
    return np.sum(y * x)


def mask_write(x):                 # (vmap: a read y[mask] differs in size per example)
    y = x * 1.0
    y[y > 0] = 0.5
    y[x < -0.5] = x[0] ** 2
    return np.sum(y * x)


def swap_elements(x):
    y = x * 1.0
    y[0], y[1] = y[1], y[0] * 2.0
    return np.sum(y * x)


def column_write(x):
    A = np.outer(x[:3], x[3:])
    A[:, 1] = x[:3] ** 2
    return np.sum(A * A)


def view_of_view(x):
    A = np.outer(x[:3], x[3:])
    r = A[1:]
    s = r[:, ::2]
    s *= 2.0 + x[0]
    return np.sum(A * A)


def reversed_view(x):
    y = x * 1.0
    v = y[::-1]
    v[0] = 9.0 * x[0]
    v[2:4] += x[:2]
    return np.sum(y * x)


def ravel_write(x):
    A = np.outer(x[:2], x[2:5])
    r = A.ravel()
    r[1] = 3.0 * x[1]
    return np.sum(A * x[2:5])


def int_array_accumulate(x):
    k = np.arange(6)
    k += 2
    k[1] = x[0] * 4.0
    return np.sum(k * x)


def scalar_accumulator(x):         # acc = x[0] is a copied scalar: += rebinds acc only
    acc = x[0]
    for i in range(1, 4):
        acc += x[i] * x[i]
    return acc + np.sum(x)


def scalar_alias_kept(x):          # t keeps the old scalar when s *= 3 rebinds s
    s = x[1]
    t = s
    s *= 3.0
    u = np.dot(x, x)
    w = u
    u += x[2]
    return s + t * u + w + np.sum(x)


def matrix_element_copy(x):        # A[1, 2] is a scalar: A is not written
    A = np.outer(x[:3], x[3:])
    v = A[1, 2]
    v += 1.0
    return np.sum(A * A) + v * x[0]


def rows_by_iteration(x):          # iterating over a matrix gives row views
    A = np.outer(x[:3], x[3:])
    for row in A:
        row *= 2.0 + x[0]
        row[0] = x[1] * row[1]
    return np.sum(A * A)


def argument_view_read_after_write(x):   # x[:, 2]-like views of the argument read by grad
    x[1] = np.cos(x[2]) * 1.5
    x[2] = np.cos(x[3]) * 1.5
    return np.sum(x * x)


def _write_first(x, buf):
    buf[0] = x[0] * 2.0
    return np.sum(buf * x)


PROGRAMS = [alias_after_write, view_write, int_truncation, alias_before_loop, slice_writes,
            row_writes, rnn, copy_then_write, writes_argument, row_view_in_loop,
            transpose_view, alias_in_branch, branch_then_write, helper_writes, augassign_alias,
            reshape_view, asarray_alias, flatten_copy, while_writes, view_then_base_write,
            loop_accumulate_slices, repeated_index_write, mask_write, swap_elements,
            column_write, view_of_view, reversed_view, ravel_write, int_array_accumulate,
            scalar_accumulator, scalar_alias_kept, matrix_element_copy, rows_by_iteration,
            argument_view_read_after_write]
