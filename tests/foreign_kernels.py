"""A corpus of NumPy kernels in the styles other people write (issue 22, part 4).

Stencils on views, particle and wave simulations, image filters, pairwise distances, statistics
with `axis=`, recurrences, Monte Carlo with `np.random`, mask and bitwise logic, in-place updates
of arguments that return None, small linear algebra, and the constructs users reach for without
thinking (assert, import in the body, math.*, .real/.imag, chained assignment, np.ndindex,
newaxis, np.roll/tile/repeat/cumsum/average/linspace/stack, integer-array subscripts,
accumulators that start as an int and become a float), fancy indexing with several integer
arrays, boolean-mask writes of arrays, sorts along an axis and arrays sized at run time, and
least-squares fits, PCA with eigh/svd, Gram-Schmidt against qr, robust statistics along axes,
image rotations, np.put; then Python-heavy numerics (while loops
on tolerances, for/else, returns from nested loops, closures, lambdas, helpers, lists and
comprehensions, enumerate/zip/reversed/sorted, dicts of arrays, *args, keywords, module
constants, string options, f-strings, print) and other domains (finance, signal processing,
geometry, graphs, dynamic programming, hand-written sorts and searches, sparse CSR, particle in
cell, SIR, Runge-Kutta with a user right-hand side); and kernels in the styles of the Polybench
and npbench collections (2mm, cholesky, ludcmp, nussinov, deriche, fdtd-2d, symm, syr2k, gemver,
adi, durbin, covariance, doitgen, CFD steps, vertical advection, convolutions, LeNet/ResNet-like
layers, an FFT in loops, ...), whose slices of run-time length flow through products, flips,
reductions and slice writes.

Each kernel is a plain module-level function, written as a NumPy user would write it and never
adapted to transpile or Numba. KERNELS lists them as `Kernel` records:

* `args(n)`: a factory returning a fresh tuple of arguments for size `n` (deterministic: the same
  `n` gives equal arguments, so a NumPy run and a jit run can be compared, argument writes too);
* `size` / `bench_size`: `n` for the tests and for bench/bench_foreign.py;
* `loss`: where the kernel is differentiable, a module-level scalar-valued wrapper taking the
  same arguments (it copies arguments the kernel writes into), and `wrt`, the argument index the
  gradient is taken with respect to (a float64 array).

tests/test_foreign_kernels.py checks every kernel under `jit` against NumPy and every `loss`
under `grad` and `jit(grad)` against central finite differences.
"""
import math

import numpy as np


class Kernel:
    def __init__(self, fn, args, size, bench_size, loss=None, wrt=0):
        self.fn, self.args, self.size, self.bench_size = fn, args, size, bench_size
        self.loss, self.wrt = loss, wrt
        self.name = fn.__name__

    def __repr__(self):
        return self.name


def _rng(n, salt=0):
    return np.random.default_rng(1000 * n + salt)


# ---------------------------------------------------------------- stencils on views ----------


def jacobi_slices(u, steps):
    """Jacobi sweeps for Laplace's equation on a copy, boundary kept."""
    v = u.copy()
    for _ in range(steps):
        v[1:-1, 1:-1] = 0.25 * (v[:-2, 1:-1] + v[2:, 1:-1] + v[1:-1, :-2] + v[1:-1, 2:])
    return v


def jacobi_slices_args(n):
    return (_rng(n).random((n, n)), 4)


def jacobi_slices_loss(u, steps):
    return np.sum(jacobi_slices(u, steps) ** 2)


def jacobi_loops(u, steps):
    """The same sweep written with explicit loops and a second buffer."""
    nx, ny = u.shape
    new = u.copy()
    old = u.copy()
    for s in range(steps):
        for i in range(1, nx - 1):
            for j in range(1, ny - 1):
                new[i, j] = 0.25 * (old[i - 1, j] + old[i + 1, j] + old[i, j - 1] + old[i, j + 1])
        old[:, :] = new
    return new


def jacobi_loops_args(n):
    return (_rng(n, 1).random((n, n)), 3)


def jacobi_loops_loss(u, steps):
    return np.sum(np.sin(jacobi_loops(u, steps)))


def diffuse_inplace(u, tmp, steps):
    """The issue's example: writes into both arguments, returns nothing."""
    for n in range(steps):
        tmp[1:-1, 1:-1] = u[1:-1, 1:-1] + 0.1 * (u[2:, 1:-1] - 2 * u[1:-1, 1:-1] + u[:-2, 1:-1])
        u[:, :] = tmp[:, :]
        tmp[:, :] = 0.0


def diffuse_inplace_args(n):
    return (_rng(n, 2).random((n, n)), np.zeros((n, n)), 5)


def diffuse_inplace_loss(u, tmp, steps):
    w = u.copy()
    t = tmp.copy()
    diffuse_inplace(w, t, steps)
    return np.sum(w * w)


def heat_swap(u, alpha, steps):
    """Double buffering by swapping names: every other step writes into the caller's array."""
    un = u.copy()
    for k in range(steps):
        un[1:-1, 1:-1] = u[1:-1, 1:-1] + alpha * (
            u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4.0 * u[1:-1, 1:-1])
        u, un = un, u
    return u


def heat_swap_args(n):
    return (_rng(n, 3).random((n, n)), 0.2, 3)


def laplace_residual(u, h):
    """Norm of the discrete Laplacian's residual, interior points only."""
    r = (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1]) / (h * h)
    return np.sqrt(np.sum(r ** 2)) / r.size


def laplace_residual_args(n):
    return (_rng(n, 4).random((n, n)), 0.1)


def laplace_residual_loss(u, h):
    return laplace_residual(u, h)


def laplacian_roll(u):
    """Periodic five-point Laplacian with np.roll."""
    return (np.roll(u, 1, axis=0) + np.roll(u, -1, axis=0) + np.roll(u, 1, axis=1)
            + np.roll(u, -1, axis=1) - 4.0 * u)


def laplacian_roll_args(n):
    return (_rng(n, 5).random((n, n)),)


def laplacian_roll_loss(u):
    return np.sum(laplacian_roll(u) ** 2)


def local_view_base_write(x, n):
    """The issue's silently-wrong example: a view of a local, base written after the view."""
    V = np.zeros((6, 6), dtype=np.float32)
    v = V[1:-1, 1:-1]
    V[2:4, 2:4] = 0.25
    for i in range(n):
        v += x
    return V


def local_view_base_write_args(n):
    return (_rng(n, 6).random((4, 4)).astype(np.float32), 3)


def smooth_inplace(u, steps):
    """1-D smoothing written into the argument with an augmented slice assignment."""
    for s in range(steps):
        u[1:-1] += 0.25 * (u[2:] - 2.0 * u[1:-1] + u[:-2])


def smooth_inplace_args(n):
    return (_rng(n, 7).random(n), 6)


def smooth_inplace_loss(u, steps):
    w = u * 1.0
    smooth_inplace(w, steps)
    return np.sum(w ** 3)


# ------------------------------------------------------- particles and waves ----------------


def nbody_loops(pos, mass):
    """Pairwise gravitational accelerations with a softening length, double loop."""
    n = pos.shape[0]
    acc = np.zeros_like(pos)
    for i in range(n):
        for j in range(n):
            if i != j:
                dx = pos[j, 0] - pos[i, 0]
                dy = pos[j, 1] - pos[i, 1]
                dz = pos[j, 2] - pos[i, 2]
                r2 = dx * dx + dy * dy + dz * dz + 0.01
                inv = mass[j] / (r2 * np.sqrt(r2))
                acc[i, 0] += dx * inv
                acc[i, 1] += dy * inv
                acc[i, 2] += dz * inv
    return acc


def nbody_loops_args(n):
    r = _rng(n, 10)
    return (r.standard_normal((n, 3)), r.random(n) + 0.5)


def nbody_loops_loss(pos, mass):
    return np.sum(nbody_loops(pos, mass) ** 2)


def nbody_broadcast(pos, mass):
    """The same forces with broadcasting over all pairs."""
    d = pos[None, :, :] - pos[:, None, :]
    r2 = np.sum(d ** 2, axis=-1) + 0.01
    inv = r2 ** -1.5
    np.fill_diagonal(inv, 0.0)
    return np.sum(d * (mass[None, :, None] * inv[:, :, None]), axis=1)


def nbody_broadcast_args(n):
    r = _rng(n, 11)
    return (r.standard_normal((n, 3)), r.random(n) + 0.5)


def nbody_energy_leapfrog(pos, vel, mass, dt, steps):
    """Kick-drift-kick leapfrog on copies, returns the final kinetic energy."""
    x = pos.copy()
    v = vel.copy()
    n = x.shape[0]
    for s in range(steps):
        d = x[np.newaxis, :, :] - x[:, np.newaxis, :]
        r2 = (d ** 2).sum(axis=2) + 0.05
        a = (d * (mass / r2 ** 1.5)[:, :, np.newaxis]).sum(axis=1)
        v += 0.5 * dt * a
        x += dt * v
        d = x[np.newaxis, :, :] - x[:, np.newaxis, :]
        r2 = (d ** 2).sum(axis=2) + 0.05
        a = (d * (mass / r2 ** 1.5)[:, :, np.newaxis]).sum(axis=1)
        v += 0.5 * dt * a
    ke = 0.5 * np.sum(mass[:, None] * v ** 2)
    return ke / n


def nbody_energy_leapfrog_args(n):
    r = _rng(n, 12)
    return (r.standard_normal((n, 3)), 0.1 * r.standard_normal((n, 3)), r.random(n) + 0.5,
            0.01, 3)


def nbody_energy_leapfrog_loss(pos, vel, mass, dt, steps):
    return nbody_energy_leapfrog(pos, vel, mass, dt, steps)


def leapfrog_inplace(x, v, dt, steps):
    """Anharmonic oscillators advanced in place; returns None."""
    for k in range(steps):
        v -= 0.5 * dt * (x + x ** 3)
        x += dt * v
        v -= 0.5 * dt * (x + x ** 3)


def leapfrog_inplace_args(n):
    r = _rng(n, 13)
    return (r.standard_normal(n), r.standard_normal(n), 0.05, 10)


def leapfrog_inplace_loss(x, v, dt, steps):
    xx = x.copy()
    vv = v.copy()
    leapfrog_inplace(xx, vv, dt, steps)
    return np.sum(0.5 * vv ** 2 + 0.5 * xx ** 2 + 0.25 * xx ** 4)


def wave_1d_slices(u0, c, steps):
    """1-D wave equation, three time levels rotated by name, fixed ends."""
    u_prev = u0.copy()
    u = u0.copy()
    u_next = np.zeros_like(u0)
    c2 = c * c
    for t in range(steps):
        u_next[1:-1] = 2 * u[1:-1] - u_prev[1:-1] + c2 * (u[2:] - 2 * u[1:-1] + u[:-2])
        u_prev, u, u_next = u, u_next, u_prev
    return u


def wave_1d_slices_args(n):
    xs = np.linspace(0.0, 1.0, n)
    return (np.exp(-100.0 * (xs - 0.5) ** 2) + 0.01 * _rng(n, 14).random(n), 0.5, 8)


def wave_1d_slices_loss(u0, c, steps):
    return np.sum(wave_1d_slices(u0, c, steps) ** 2)


def wave_1d_loops(u0, c, steps):
    """The same scheme with an explicit loop over the grid and array copies."""
    n = u0.shape[0]
    u_prev = u0.copy()
    u = u0.copy()
    for t in range(steps):
        u_next = np.zeros(n)
        for i in range(1, n - 1):
            u_next[i] = 2.0 * u[i] - u_prev[i] + c * c * (u[i + 1] - 2.0 * u[i] + u[i - 1])
        u_prev = u
        u = u_next
    return u


def wave_1d_loops_args(n):
    return (np.sin(np.linspace(0.0, np.pi, n)) + 0.1 * _rng(n, 15).random(n), 0.4, 6)


def wave_1d_loops_loss(u0, c, steps):
    return np.sum(wave_1d_loops(u0, c, steps) ** 2)


# ---------------------------------------------------------------- image filters -------------


def box_blur_loops(img):
    h, w = img.shape
    out = np.zeros((h, w))
    for i in range(1, h - 1):
        for j in range(1, w - 1):
            s = 0.0
            for di in range(-1, 2):
                for dj in range(-1, 2):
                    s += img[i + di, j + dj]
            out[i, j] = s / 9.0
    return out


def box_blur_loops_args(n):
    return (_rng(n, 20).random((n, n)),)


def box_blur_loops_loss(img):
    return np.sum(box_blur_loops(img) ** 2)


def box_blur_slices(img):
    out = img.copy()
    acc = np.zeros_like(img[1:-1, 1:-1])
    for di in (0, 1, 2):
        for dj in (0, 1, 2):
            acc += img[di:di + img.shape[0] - 2, dj:dj + img.shape[1] - 2]
    out[1:-1, 1:-1] = acc / 9
    return out


def box_blur_slices_args(n):
    return (_rng(n, 21).random((n, n)),)


def box_blur_slices_loss(img):
    return np.sum(box_blur_slices(img) ** 2)


def sobel_magnitude(img):
    gx = (img[:-2, 2:] + 2 * img[1:-1, 2:] + img[2:, 2:]
          - img[:-2, :-2] - 2 * img[1:-1, :-2] - img[2:, :-2])
    gy = (img[2:, :-2] + 2 * img[2:, 1:-1] + img[2:, 2:]
          - img[:-2, :-2] - 2 * img[:-2, 1:-1] - img[:-2, 2:])
    mag = np.sqrt(gx ** 2 + gy ** 2 + 1e-12)
    return mag / mag.max()


def sobel_magnitude_args(n):
    return (_rng(n, 22).random((n, n)),)


def sobel_magnitude_loss(img):
    return np.sum(sobel_magnitude(img))


def median3_rows(img):
    """Median of three horizontal neighbours, from min/max, edges copied."""
    out = img.copy()
    a = img[:, :-2]
    b = img[:, 1:-1]
    c = img[:, 2:]
    out[:, 1:-1] = np.maximum(np.minimum(a, b), np.minimum(np.maximum(a, b), c))
    return out


def median3_rows_args(n):
    return (_rng(n, 23).random((n, n)),)


def median3_stack_sort(img):
    """Median of the 3x3 neighbourhood: stack the nine shifts and sort along the new axis."""
    h, w = img.shape
    shifts = []
    for di in range(3):
        for dj in range(3):
            shifts.append(img[di:h - 2 + di, dj:w - 2 + dj])
    st = np.stack(shifts)
    st = np.sort(st, axis=0)
    return st[4]


def median3_stack_sort_args(n):
    return (_rng(n, 24).random((n, n)),)


def threshold_masks(img, lo, hi):
    """Band-pass threshold with boolean masks; returns the count, the mask and the image."""
    band = (img > lo) & (img < hi)
    out = img.copy()
    out[~band] = 0.0
    binary = np.where(band, 1, 0)
    edges = band[1:, :] ^ band[:-1, :]
    return int(np.sum(binary)), edges, out


def threshold_masks_args(n):
    return (_rng(n, 25).random((n, n)), 0.25, 0.75)


def convolve_1d(x, w):
    """'valid' correlation of a signal with a short filter, loops."""
    n = x.shape[0]
    k = w.shape[0]
    out = np.empty(n - k + 1)
    for i in range(n - k + 1):
        s = 0.0
        for j in range(k):
            s += x[i + j] * w[j]
        out[i] = s
    return out


def convolve_1d_args(n):
    r = _rng(n, 26)
    return (r.standard_normal(n), np.array([0.25, 0.5, 0.25, -0.1]))


def convolve_1d_loss(x, w):
    return np.sum(np.tanh(convolve_1d(x, w)))


# ------------------------------------------------------------- pairwise distances -----------


def pdist_loops(X):
    n, d = X.shape
    D = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            s = 0.0
            for k in range(d):
                t = X[i, k] - X[j, k]
                s += t * t
            D[i, j] = math.sqrt(s)
            D[j, i] = D[i, j]
    return D


def pdist_loops_args(n):
    return (_rng(n, 30).standard_normal((n, 3)),)


def pdist_loops_loss(X):
    return np.sum(pdist_loops(X))


def pdist_broadcast(X):
    diff = X[:, None, :] - X[None, :, :]
    return np.sqrt((diff ** 2).sum(axis=-1) + 1e-12)


def pdist_broadcast_args(n):
    return (_rng(n, 31).standard_normal((n, 3)),)


def pdist_broadcast_loss(X):
    return np.sum(pdist_broadcast(X))


def pdist_gram(X, Y):
    """Squared distances between two point sets through the Gram matrix."""
    xx = np.sum(X * X, axis=1)
    yy = np.sum(Y * Y, axis=1)
    D = xx[:, np.newaxis] + yy[np.newaxis, :] - 2.0 * X @ Y.T
    return np.maximum(D, 0.0)


def pdist_gram_args(n):
    r = _rng(n, 32)
    return (r.standard_normal((n, 4)), r.standard_normal((n + 3, 4)))


def pdist_gram_loss(X, Y):
    return np.sum(np.exp(-pdist_gram(X, Y)))


def neighbours_within(X, r):
    """Number of neighbours of each point within radius r (integer counts)."""
    n = X.shape[0]
    counts = np.zeros(n, dtype=np.int64)
    r2 = r * r
    for i in range(n):
        for j in range(n):
            if i != j and np.sum((X[i] - X[j]) ** 2) < r2:
                counts[i] += 1
    return counts


def neighbours_within_args(n):
    return (_rng(n, 33).random((n, 2)), 0.3)


# ------------------------------------------------------------------ statistics --------------


def standardize_columns(X):
    mu = X.mean(axis=0)
    sd = X.std(axis=0)
    return (X - mu) / sd


def standardize_columns_args(n):
    return (_rng(n, 40).standard_normal((n, 5)) * 3.0 + 1.0,)


def standardize_columns_loss(X):
    return np.sum(standardize_columns(X) ** 3)


def row_var_and_cumsum(X):
    v = np.var(X, axis=1)
    c = np.cumsum(X, axis=0)
    return v, c[-1] - c[0]


def row_var_and_cumsum_args(n):
    return (_rng(n, 41).standard_normal((n, 4)),)


def row_var_and_cumsum_loss(X):
    v, c = row_var_and_cumsum(X)
    return np.sum(v) + np.sum(c ** 2)


def histogram_counts(x, lo, hi, nbins):
    """Histogram by hand: bin index from each value, clipped into range."""
    counts = np.zeros(nbins, dtype=np.int64)
    width = (hi - lo) / nbins
    for v in x:
        b = int((v - lo) / width)
        if b < 0:
            b = 0
        elif b >= nbins:
            b = nbins - 1
        counts[b] += 1
    return counts


def histogram_counts_args(n):
    return (_rng(n, 42).standard_normal(n), -2.0, 2.0, 8)


def weighted_average_cols(X, w):
    return np.average(X, axis=0, weights=w)


def weighted_average_cols_args(n):
    r = _rng(n, 43)
    return (r.standard_normal((n, 3)), r.random(n) + 0.1)


def weighted_average_cols_loss(X, w):
    return np.sum(weighted_average_cols(X, w) ** 2)


def moving_average_cumsum(x, k):
    c = np.cumsum(x)
    out = c[k - 1:].copy()
    out[1:] = c[k:] - c[:-k]
    return out / k


def moving_average_cumsum_args(n):
    return (_rng(n, 44).standard_normal(n), 3)


def moving_average_cumsum_loss(x, k):
    return np.sum(moving_average_cumsum(x, k) ** 2)


def covariance_matrix(X):
    n = X.shape[0]
    Xc = X - X.mean(axis=0, keepdims=True)
    return Xc.T @ Xc / (n - 1)


def covariance_matrix_args(n):
    return (_rng(n, 45).standard_normal((n, 4)),)


def covariance_matrix_loss(X):
    return np.sum(covariance_matrix(X) ** 2)


def outlier_indices(x):
    """Indices of |z| > 1.5 with one-argument np.where, and how many there are."""
    z = (x - np.mean(x)) / np.std(x)
    idx = np.where(np.abs(z) > 1.5)[0]
    return idx, len(idx)


def outlier_indices_args(n):
    return (_rng(n, 46).standard_normal(n),)


# ------------------------------------------------------------------ recurrences -------------


def fibonacci_mod(n):
    a, b = 0, 1
    for i in range(n):
        a, b = b, (a + b) % 1000003
    return a


def fibonacci_mod_args(n):
    return (n,)


def weighted_fibonacci(x):
    """y[i] = y[i-1] + x[i] * y[i-2] (a Fibonacci-like recurrence with data)."""
    y = np.empty_like(x)
    y[0] = 1.0
    y[1] = 1.0
    for i in range(2, x.shape[0]):
        y[i] = y[i - 1] * 0.5 + x[i] * y[i - 2]
    return y


def weighted_fibonacci_args(n):
    return (0.5 * _rng(n, 50).random(n),)


def weighted_fibonacci_loss(x):
    return np.sum(weighted_fibonacci(x))


def iir_biquad(x, b, a):
    """Direct-form-I second-order IIR filter."""
    n = x.shape[0]
    y = np.zeros(n)
    for i in range(n):
        acc = b[0] * x[i]
        if i >= 1:
            acc += b[1] * x[i - 1] - a[1] * y[i - 1]
        if i >= 2:
            acc += b[2] * x[i - 2] - a[2] * y[i - 2]
        y[i] = acc / a[0]
    return y


def iir_biquad_args(n):
    return (_rng(n, 51).standard_normal(n), np.array([0.2, 0.4, 0.2]),
            np.array([1.0, -0.5, 0.2]))


def iir_biquad_loss(x, b, a):
    return np.sum(iir_biquad(x, b, a) ** 2)


def cumulative_max(x):
    out = np.empty_like(x)
    m = x[0]
    for i in range(len(x)):
        if x[i] > m:
            m = x[i]
        out[i] = m
    return out


def cumulative_max_args(n):
    return (_rng(n, 52).standard_normal(n),)


def ewma_int_start(x, alpha):
    """Exponential moving average whose state starts as the int 0."""
    s = 0
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        s = alpha * x[i] + (1 - alpha) * s
        out[i] = s
    return out


def ewma_int_start_args(n):
    return (_rng(n, 53).standard_normal(n), 0.3)


def ewma_int_start_loss(x, alpha):
    return np.sum(ewma_int_start(x, alpha) ** 2)


def logistic_orbit(r, x0, n):
    x = x0
    total = 0.0
    for i in range(n):
        x = r * x * (1.0 - x)
        total += x
    return total / n


def logistic_orbit_args(n):
    return (3.7, 0.2, n)


# ------------------------------------------------------------------ Monte Carlo -------------


def mc_pi(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.random(n)
    y = rng.random(n)
    inside = (x * x + y * y) <= 1.0
    return 4.0 * np.count_nonzero(inside) / n


def mc_pi_args(n):
    return (n, 12345)


def random_walk(rng, n, steps):
    """Walkers passed a Generator: displacement after `steps` normal steps each."""
    pos = np.zeros(n)
    for s in range(steps):
        pos += rng.standard_normal(n)
    return pos, np.mean(pos ** 2)


def random_walk_args(n):
    return (np.random.default_rng(7), n, 5)


def mc_integrate(rng, f_scale, n):
    """Monte Carlo estimate of the integral of exp(-a u^2) over [0, 1]."""
    u = rng.uniform(0.0, 1.0, n)
    vals = np.exp(-f_scale * u * u)
    return vals.mean(), vals.std() / math.sqrt(n)


def mc_integrate_args(n):
    return (np.random.default_rng(99), 2.0, n)


def bootstrap_means(x, nboot, seed):
    """Bootstrap resampling with integer-array subscripts."""
    rng = np.random.default_rng(seed)
    n = x.shape[0]
    means = np.empty(nboot)
    for b in range(nboot):
        idx = rng.integers(0, n, n)
        means[b] = x[idx].mean()
    return means


def bootstrap_means_args(n):
    return (_rng(n, 60).standard_normal(n), 20, 3)


def metropolis_gaussian(rng, steps, x0):
    """Random-walk Metropolis on a standard normal target."""
    x = x0
    acc = 0
    samples = np.empty(steps)
    for i in range(steps):
        prop = x + rng.normal(0.0, 0.8)
        if rng.random() < math.exp(0.5 * (x * x - prop * prop)):
            x = prop
            acc += 1
        samples[i] = x
    return samples, acc


def metropolis_gaussian_args(n):
    return (np.random.default_rng(11), n, 0.5)


# ------------------------------------------------------------- masks and bitwise ------------


def bitwise_int_ops(a, b):
    c = (a & b) | (a ^ b)
    d = ~a & 0xFF
    e = np.bitwise_and(a, 7) + np.bitwise_or(b, 1)
    return c, d, e, (a << 2) >> 1


def bitwise_int_ops_args(n):
    r = _rng(n, 70)
    return (r.integers(0, 256, n), r.integers(0, 256, n))


def bool_mask_logic(x, y):
    m = ((x > 0) & ~(y < 0)) | ((x > y) ^ (y > 1.0))
    idx = np.where(m)
    return m, idx[0], np.sum(x[idx]) if len(idx[0]) > 0 else 0.0


def bool_mask_logic_args(n):
    r = _rng(n, 71)
    return (r.standard_normal(n), r.standard_normal(n))


def popcount_loop(a):
    counts = np.zeros(a.shape[0], dtype=np.int64)
    for i in range(a.shape[0]):
        v = a[i]
        c = 0
        while v:
            c += v & 1
            v >>= 1
        counts[i] = c
    return counts


def popcount_loop_args(n):
    return (_rng(n, 72).integers(0, 1 << 20, n),)


def masked_where_select(x, y):
    """np.where with a compound bitwise mask, then a masked reduction."""
    sel = np.where((x > 0) & (y < 1) | (x < -1), x * y, -y)
    keep = ~((sel > 0.5) | (sel < -0.5))
    return sel, np.sum(sel[keep])


def masked_where_select_args(n):
    r = _rng(n, 73)
    return (r.standard_normal(n), r.standard_normal(n))


def masked_where_select_loss(x, y):
    sel, s = masked_where_select(x, y)
    return np.sum(sel ** 2) + s


# ------------------------------------------------------------ in-place argument updates -----


def fill_ellipsis(x, v):
    x[...] = v * 2.0 + 1.0


def fill_ellipsis_args(n):
    r = _rng(n, 80)
    return (np.zeros((n, 3)), r.standard_normal((n, 3)))


def fill_ellipsis_loss(x, v):
    out = np.zeros_like(v)
    fill_ellipsis(out, v)
    return np.sum(out ** 2)


def clamp_inplace(x, lo, hi):
    x[x < lo] = lo
    x[x > hi] = hi


def clamp_inplace_args(n):
    return (_rng(n, 81).standard_normal((n, 4)), -0.5, 0.5)


def normalize_rows_inplace(A):
    norms = np.sqrt(np.sum(A * A, axis=1))
    A[:, :] = A / norms[:, None]


def normalize_rows_inplace_args(n):
    return (_rng(n, 82).standard_normal((n, 3)),)


def normalize_rows_inplace_loss(A):
    B = A.copy()
    normalize_rows_inplace(B)
    return np.sum(B[:, 0] * B[:, 1])


def relax_boundary_inplace(u, steps):
    """Update the interior in place, re-impose zero-gradient edges each step."""
    for k in range(steps):
        u[1:-1, 1:-1] += 0.1 * (u[2:, 1:-1] + u[:-2, 1:-1] - 2.0 * u[1:-1, 1:-1])
        u[0, :] = u[1, :]
        u[-1, :] = u[-2, :]
        u[:, 0] = u[:, 1]
        u[:, -1] = u[:, -2]


def relax_boundary_inplace_args(n):
    return (_rng(n, 83).random((n, n)), 4)


def relax_boundary_inplace_loss(u, steps):
    w = u.copy()
    relax_boundary_inplace(w, steps)
    return np.sum(w ** 2)


# ---------------------------------------------------------------- linear algebra ------------


def solve_3x3(A, b):
    x = np.linalg.solve(A, b)
    return x, np.linalg.det(A)


def solve_3x3_args(n):
    r = _rng(n, 90)
    return (r.standard_normal((3, 3)) + 3.0 * np.eye(3), r.standard_normal(3))


def solve_3x3_loss(A, b):
    x, d = solve_3x3(A, b)
    return np.sum(x ** 2) + d


def inverse_8x8(A):
    Ai = np.linalg.inv(A)
    return Ai @ A - np.eye(A.shape[0]), Ai


def inverse_8x8_args(n):
    return (_rng(n, 91).standard_normal((8, 8)) + 4.0 * np.eye(8),)


def inverse_8x8_loss(A):
    r, Ai = inverse_8x8(A)
    return np.sum(Ai ** 2)


def cholesky_forward(A, b):
    """Cholesky factor, then forward substitution by hand."""
    L = np.linalg.cholesky(A)
    n = b.shape[0]
    y = np.zeros(n)
    for i in range(n):
        y[i] = (b[i] - np.dot(L[i, :i], y[:i])) / L[i, i]
    return y


def cholesky_forward_args(n):
    r = _rng(n, 92)
    M = r.standard_normal((8, 8))
    return (M @ M.T + 8.0 * np.eye(8), r.standard_normal(8))


def cholesky_forward_loss(A, b):
    # np.linalg.cholesky reads only the lower triangle: symmetrize, so that the derivative
    # does not depend on a convention for the upper triangle
    return np.sum(cholesky_forward(0.5 * (A + A.T), b) ** 2)


def power_iteration(A, iters):
    v = np.ones(A.shape[0])
    lam = 0.0
    for k in range(iters):
        w = A @ v
        lam = np.dot(v, w)
        v = w / np.linalg.norm(w)
    return lam, v


def power_iteration_args(n):
    r = _rng(n, 93)
    M = r.standard_normal((n, n))
    return (M @ M.T / n + np.eye(n), 20)


def power_iteration_loss(A, iters):
    lam, v = power_iteration(A, iters)
    return lam


def gauss_seidel(A, b, sweeps):
    n = b.shape[0]
    x = np.zeros(n)
    for s in range(sweeps):
        for i in range(n):
            sigma = A[i] @ x - A[i, i] * x[i]
            x[i] = (b[i] - sigma) / A[i, i]
    return x


def gauss_seidel_args(n):
    r = _rng(n, 94)
    return (r.random((n, n)) + n * np.eye(n), r.standard_normal(n), 6)


def gauss_seidel_loss(A, b, sweeps):
    return np.sum(gauss_seidel(A, b, sweeps) ** 2)


# ------------------------------------------------------------ everyday constructs -----------


def checked_norm(x):
    assert x.ndim == 1, "expects a vector"
    assert x.shape[0] > 1
    s = np.sum(x * x)
    assert s >= 0.0, "a sum of squares is never negative"
    return np.sqrt(s)


def checked_norm_args(n):
    return (_rng(n, 100).standard_normal(n),)


def checked_norm_loss(x):
    return checked_norm(x)


def import_in_body(x):
    import numpy as np
    import math
    return np.sum(np.cos(x)) * math.pi


def import_in_body_args(n):
    return (_rng(n, 101).standard_normal(n),)


def import_in_body_loss(x):
    return import_in_body(x)


def math_scalars(x):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = math.sin(x[i]) * math.exp(-0.5 * x[i]) + math.sqrt(1.0 + x[i] * x[i])
    return out


def math_scalars_args(n):
    return (_rng(n, 102).standard_normal(n),)


def math_scalars_loss(x):
    return np.sum(math_scalars(x))


def complex_parts(theta, r):
    z = r * np.exp(1j * theta)
    w = z * z + 1.0
    return w.real, w.imag, np.abs(w).sum()


def complex_parts_args(n):
    r = _rng(n, 103)
    return (r.random(n) * 6.0, r.random(n) + 0.5)


def complex_parts_loss(theta, r):
    re, im, a = complex_parts(theta, r)
    return np.sum(re * im) + a


def chained_assignment(x):
    a = b = 0
    lo = hi = x[0]
    for v in x:
        a = a + 1
        b = b + v
        if v < lo:
            lo = v
        if v > hi:
            hi = v
    s = t = np.zeros(3)      # two names for one array
    s[0] = lo
    t[1] = hi
    return a, b, s


def chained_assignment_args(n):
    return (_rng(n, 104).standard_normal(n),)


def chained_assignment_loss(x):
    a, b, s = chained_assignment(x)
    return b * 2.0 + np.sum(s)


def ndindex_fill(A):
    out = np.empty_like(A)
    for idx in np.ndindex(A.shape):
        i, j = idx
        out[idx] = A[idx] * (i + 1) - j
    return out


def ndindex_fill_args(n):
    return (_rng(n, 105).standard_normal((n, 4)),)


def ndindex_fill_loss(A):
    return np.sum(ndindex_fill(A) ** 2)


def tile_repeat_linspace(x):
    t = np.tile(x, 3)
    r = np.repeat(x, 2)
    g = np.linspace(0.0, 1.0, t.shape[0])
    return t * g, r * np.linspace(-1.0, 1.0, r.shape[0])


def tile_repeat_linspace_args(n):
    return (_rng(n, 106).standard_normal(n),)


def tile_repeat_linspace_loss(x):
    a, b = tile_repeat_linspace(x)
    return np.sum(a ** 2) + np.sum(b)


def stack_features(x):
    F = np.stack([x, x ** 2, np.sin(x)], axis=1)
    w = np.linspace(-1.0, 1.0, 3)
    return F @ w, np.cumsum(F, axis=0)


def stack_features_args(n):
    return (_rng(n, 107).standard_normal(n),)


def stack_features_loss(x):
    a, c = stack_features(x)
    return np.sum(a ** 2) + np.sum(c[-1])


def gather_scatter(x):
    """Integer-array subscripts: a constant permutation and a scatter-add by hand."""
    n = x.shape[0]
    perm = np.arange(n)[::-1]
    y = x[perm]
    idx = np.array([0, 2, 1, 0])
    g = x[idx] * 2.0
    buckets = np.zeros(3)
    for i in range(n):
        buckets[i % 3] += y[i]
    return g, buckets


def gather_scatter_args(n):
    return (_rng(n, 108).standard_normal(n),)


def gather_scatter_loss(x):
    g, b = gather_scatter(x)
    return np.sum(g * g) + np.sum(b ** 2)


def int_then_float_acc(x):
    """Accumulators that start as Python ints and become floats."""
    total = 0
    best = 0
    for i in range(x.shape[0]):
        total = total + x[i]
        if x[i] > best:
            best = x[i]
    n = 0
    for v in x:
        n += 1
    return total / n, best


def int_then_float_acc_args(n):
    return (_rng(n, 109).standard_normal(n),)


def int_then_float_acc_loss(x):
    m, b = int_then_float_acc(x)
    return m * 3.0


def softmax_rows(X):
    """Numerically stable softmax along axis 1 with keepdims."""
    m = X.max(axis=1, keepdims=True)
    e = np.exp(X - m)
    return e / e.sum(axis=1, keepdims=True)


def softmax_rows_args(n):
    return (_rng(n, 110).standard_normal((n, 5)),)


def softmax_rows_loss(X):
    return np.sum(softmax_rows(X) * np.arange(5.0))


def raise_on_bad(x, limit):
    """An explicit raise with a constant message, not taken on good data."""
    if np.any(np.isnan(x)):
        raise ValueError("input contains NaN")
    s = 0.0
    for v in x:
        if v > limit:
            raise ValueError("value above limit")
        s += v * v
    return s


def raise_on_bad_args(n):
    return (_rng(n, 111).random(n), 2.0)


def raise_on_bad_loss(x, limit):
    return raise_on_bad(x, limit)


def long_augassign_chain(x):
    """A long chain of augmented assignments (the issue's normalizer RecursionError)."""
    y = x * 1.0
    y += 1.0; y *= 0.9; y -= 0.1; y += x; y *= 0.5; y -= 0.2; y += 0.3; y *= 1.1   # noqa: E702
    y += 1.0; y *= 0.9; y -= 0.1; y += x; y *= 0.5; y -= 0.2; y += 0.3; y *= 1.1   # noqa: E702
    y += 1.0; y *= 0.9; y -= 0.1; y += x; y *= 0.5; y -= 0.2; y += 0.3; y *= 1.1   # noqa: E702
    y += 1.0; y *= 0.9; y -= 0.1; y += x; y *= 0.5; y -= 0.2; y += 0.3; y *= 1.1   # noqa: E702
    y += 1.0; y *= 0.9; y -= 0.1; y += x; y *= 0.5; y -= 0.2; y += 0.3; y *= 1.1   # noqa: E702
    y += 1.0; y *= 0.9; y -= 0.1; y += x; y *= 0.5; y -= 0.2; y += 0.3; y *= 1.1   # noqa: E702
    return y


def long_augassign_chain_args(n):
    return (_rng(n, 112).standard_normal(n),)


def long_augassign_chain_loss(x):
    return np.sum(long_augassign_chain(x) ** 2)


# ---------------------------------------------- a new user's first kernels (session 2026-11-25)

def kmeans_step(X, C):
    """One Lloyd step: nearest centre by broadcasting, then each centre the mean of its rows
    (rows picked by a boolean vector)."""
    d = ((X[:, None, :] - C[None, :, :]) ** 2).sum(axis=2)
    lab = d.argmin(axis=1)
    newC = np.zeros_like(C)
    for k in range(C.shape[0]):
        m = lab == k
        if m.sum() > 0:
            newC[k] = X[m].mean(axis=0)
        else:
            newC[k] = C[k]
    return newC


def kmeans_step_args(n):
    r = _rng(n, 41)
    return (r.normal(size=(n, 2)), r.normal(size=(3, 2)))


def row_mask_energy(X):
    """Energy of the rows whose first coordinate is positive."""
    m = X[:, 0] > 0.0
    sel = X[m]
    return np.sum(sel ** 2) + 0.5 * np.sum(np.tanh(sel[:, 1]))


def row_mask_energy_args(n):
    return (_rng(n, 42).normal(size=(n, 3)),)


def row_mask_energy_loss(X):
    return row_mask_energy(X)


def jacobi_solve(A, b, iters):
    """Jacobi iteration x <- (b - R x) / D with D the diagonal (np.diag, np.diagflat)."""
    x = np.zeros_like(b)
    D = np.diag(A)
    R = A - np.diagflat(D)
    for _ in range(iters):
        x = (b - R @ x) / D
    return x


def jacobi_solve_args(n):
    r = _rng(n, 43)
    return (np.eye(n) * 10 + r.normal(size=(n, n)), r.normal(size=n), 25)


def jacobi_solve_loss(A, b, iters):
    return np.sum(jacobi_solve(A, b, iters) ** 2)


def band_energy(A):
    """Diagonals of a rectangular matrix and its strict upper triangle."""
    d1 = np.diag(A, 1)
    U = np.triu(A, 1)
    L = np.tril(A, -1)
    return np.sum(d1 ** 3) + 2.0 * np.sum(np.diag(A)) + np.sum(U * U) - np.sum(np.abs(L))


def band_energy_args(n):
    return (_rng(n, 44).normal(size=(n, n + 2)),)


def band_energy_loss(A):
    return band_energy(A)


def histogram_manual(x, nbins):
    """Counts per bin with int() of a float position, the last edge in the last bin."""
    lo = x.min()
    hi = x.max()
    h = np.zeros(nbins, dtype=np.int64)
    width = (hi - lo) / nbins
    for v in x:
        k = int((v - lo) / width)
        if k >= nbins:
            k = nbins - 1
        h[k] += 1
    return h


def histogram_manual_args(n):
    return (_rng(n, 45).normal(size=n), 7)


def game_of_life(grid, steps):
    """Conway's rule on a torus with explicit neighbour loops over a tuple of offsets."""
    g = grid.copy()
    n, m = g.shape
    for s in range(steps):
        new = np.zeros_like(g)
        for i in range(n):
            for j in range(m):
                cnt = 0
                for di in (-1, 0, 1):
                    for dj in (-1, 0, 1):
                        if di == 0 and dj == 0:
                            continue
                        cnt += g[(i + di) % n, (j + dj) % m]
                if g[i, j] == 1 and (cnt == 2 or cnt == 3):
                    new[i, j] = 1
                elif g[i, j] == 0 and cnt == 3:
                    new[i, j] = 1
        g = new
    return g


def game_of_life_args(n):
    return ((_rng(n, 46).random((n, n + 1)) > 0.6).astype(np.int64), 3)


def max_drawdown(prices):
    """Largest fall from a running peak, with max() of two floats."""
    peak = prices[0]
    mdd = 0.0
    for p in prices:
        if p > peak:
            peak = p
        dd = (peak - p) / peak
        mdd = max(mdd, dd)
    return mdd


def max_drawdown_args(n):
    return (np.cumsum(_rng(n, 47).normal(size=n)) + 50.0,)


def max_drawdown_loss(prices):
    return max_drawdown(prices)


# ------------------------------------------------ fancy indexing, masks, run-time lengths ----
# (issue 22: kernels seen in the wild that index with several integer arrays, write through
# boolean masks, sort along an axis, or size an array by a scalar computed at run time)


def softmax_cross_entropy(logits, labels):
    """Mean cross-entropy of integer labels, the log-sum-exp shifted by the row maximum."""
    m = logits.max(axis=1, keepdims=True)
    lse = m[:, 0] + np.log(np.exp(logits - m).sum(axis=1))
    return np.mean(lse - logits[np.arange(len(labels)), labels])


def softmax_cross_entropy_args(n):
    r = _rng(n, 200)
    return (r.standard_normal((n, 4)), r.integers(0, 4, n))


def softmax_cross_entropy_loss(logits, labels):
    return softmax_cross_entropy(logits, labels)


def one_hot_weighted(labels, weights, k):
    """One-hot rows scaled by a weight per row, built by writing 1.0 at (row, label)."""
    out = np.zeros((labels.shape[0], k))
    out[np.arange(labels.shape[0]), labels] = 1.0
    return out * weights[:, None]


def one_hot_weighted_args(n):
    r = _rng(n, 201)
    return (r.integers(0, 5, n), r.random(n), 5)


def one_hot_weighted_loss(labels, weights, k):
    return np.sum(one_hot_weighted(labels, weights, k) ** 2)


def knn_regress(Xtr, ytr, Xte, k):
    """k-nearest-neighbour regression: argsort each row of the distance matrix, average the
    targets of the k closest (ytr indexed by a 2-D index array)."""
    d = ((Xte[:, None, :] - Xtr[None, :, :]) ** 2).sum(axis=2)
    idx = np.argsort(d, axis=1)[:, :k]
    return ytr[idx].mean(axis=1)


def knn_regress_args(n):
    r = _rng(n, 202)
    return (r.standard_normal((n, 3)), r.standard_normal(n), r.standard_normal((4, 3)), 3)


def gaussian_blur_rows(img, sigma):
    """Row-wise Gaussian blur with a kernel of 2 * int(3 * sigma) + 1 taps (its length comes
    from a float argument), edges clamped, a scalar accumulator per pixel."""
    r = int(3 * sigma)
    xs = np.arange(-r, r + 1)
    k = np.exp(-xs ** 2 / (2 * sigma ** 2))
    k /= k.sum()
    out = np.zeros_like(img)
    H, W = img.shape
    for i in range(H):
        for j in range(W):
            acc = 0.0
            for t in range(-r, r + 1):
                jj = min(max(j + t, 0), W - 1)
                acc += k[t + r] * img[i, jj]
            out[i, j] = acc
    return out


def gaussian_blur_rows_args(n):
    return (_rng(n, 203).random((n, n + 2)), 0.9)


def gaussian_blur_rows_loss(img, sigma):
    return np.sum(gaussian_blur_rows(img, sigma) ** 2)


def quadratic_roots_masked(a, b, c):
    """The larger root of each quadratic where it is real, NaN elsewhere (a mask write of an
    expression masked the same way)."""
    disc = b * b - 4 * a * c
    r = np.full(a.shape, np.nan)
    ok = disc >= 0
    r[ok] = (-b[ok] + np.sqrt(disc[ok])) / (2 * a[ok])
    return r


def quadratic_roots_masked_args(n):
    r = _rng(n, 204)
    return (r.random(n) + 0.5, r.standard_normal(n) * 3, r.random(n))


def quadratic_roots_masked_loss(a, b, c):
    r = quadratic_roots_masked(a, b, c)
    return np.sum(np.where(np.isnan(r), 0.0, r) ** 2)


def coo_to_dense(rows, cols, vals, shape0, shape1):
    """A sparse COO matrix made dense (a repeated (row, col) keeps its last value, as NumPy's
    assignment does), then a second set of entries added with +=."""
    M = np.zeros((shape0, shape1))
    M[rows, cols] = vals
    M[rows[::2], cols[::2]] += 0.5 * vals[::2]
    return M


def coo_to_dense_args(n):
    r = _rng(n, 205)
    return (r.integers(0, 4, n), r.integers(-5, 5, n), r.standard_normal(n), 4, 5)


def coo_to_dense_loss(rows, cols, vals, shape0, shape1):
    return np.sum(coo_to_dense(rows, cols, vals, shape0, shape1) ** 2)


def winsorize_masks(x, lo_q, hi_q):
    """Clip to the values at two sorted positions, through boolean-mask writes of arrays and
    in-place masked updates."""
    s = np.sort(x)
    lo = s[int(lo_q * (len(x) - 1))]
    hi = s[int(hi_q * (len(x) - 1))]
    y = x.copy()
    low = y < lo
    y[low] = lo + 0.1 * (x[low] - lo)
    high = y > hi
    y[high] -= 0.9 * (y[high] - hi)
    return y


def winsorize_masks_args(n):
    return (_rng(n, 206).standard_normal(n), 0.1, 0.9)


def winsorize_masks_loss(x, lo_q, hi_q):
    return np.sum(winsorize_masks(x, lo_q, hi_q) ** 2)


def bilinear_sample(img, ys, xs):
    """Bilinear interpolation at fractional points: four gathers img[rows, cols] with integer
    index arrays computed from the coordinates."""
    y0 = np.floor(ys).astype(np.int64)
    x0 = np.floor(xs).astype(np.int64)
    y1 = np.minimum(y0 + 1, img.shape[0] - 1)
    x1 = np.minimum(x0 + 1, img.shape[1] - 1)
    wy = ys - y0
    wx = xs - x0
    top = img[y0, x0] * (1 - wx) + img[y0, x1] * wx
    bottom = img[y1, x0] * (1 - wx) + img[y1, x1] * wx
    return top * (1 - wy) + bottom * wy


def bilinear_sample_args(n):
    r = _rng(n, 207)
    return (r.random((n, n)), r.random(2 * n) * (n - 1), r.random(2 * n) * (n - 1))


def bilinear_sample_loss(img, ys, xs):
    return np.sum(bilinear_sample(img, ys, xs) ** 2)


def embedding_bag_mean(W, bags):
    """Mean of embedding rows per bag: W indexed by a 2-D integer array, then the patch of
    each bag's first two columns of features read back with a row index beside a slice."""
    E = W[bags].mean(axis=1)
    first = W[bags[:, 0], 1:3]
    return E, first


def embedding_bag_mean_args(n):
    r = _rng(n, 208)
    return (r.standard_normal((n, 4)), r.integers(0, n, (3, 5)))


def embedding_bag_mean_loss(W, bags):
    E, first = embedding_bag_mean(W, bags)
    return np.sum(E ** 2) + np.sum(np.sin(first))
# ------------------------------------- least squares, factorizations, robust statistics ----------


def poly_fit_lstsq(x, y, deg):
    """A polynomial fit the way a notebook does it: Vandermonde columns, np.linalg.lstsq,
    then the fitted curve and the sum of squared residuals NumPy reports."""
    A = np.stack([x ** k for k in range(deg + 1)], axis=1)
    coef, res, rank, sv = np.linalg.lstsq(A, y, rcond=None)
    fitted = A @ coef
    return coef, fitted, res, rank, sv[0] / sv[-1]


def poly_fit_lstsq_args(n):
    r = _rng(n, 70)
    x = np.linspace(-1.0, 1.0, n)
    return (x, 0.5 - x + 2.0 * x ** 2 + 0.1 * r.normal(size=n), 3)


def poly_fit_lstsq_loss(x, y, deg):
    coef, fitted, res, rank, cond = poly_fit_lstsq(x, y, deg)
    return np.sum(coef ** 2) + res[0]


def pca_eigh(X, k):
    """PCA from the covariance matrix: eigh, components sorted by decreasing variance,
    each component's sign fixed so that its largest entry is positive."""
    Xc = X - X.mean(axis=0)
    C = Xc.T @ Xc / (X.shape[0] - 1)
    w, V = np.linalg.eigh(C)
    order = np.argsort(w)[::-1]
    w = w[order]
    V = V[:, order]
    for j in range(V.shape[1]):
        if V[np.argmax(np.abs(V[:, j])), j] < 0:
            V[:, j] = -V[:, j]
    scores = Xc @ V[:, :k]
    return scores, w / w.sum()


def pca_eigh_args(n):
    r = _rng(n, 71)
    return (r.normal(size=(n, 4)) @ np.diag([3.0, 2.0, 1.0, 0.5]), 2)


def pca_eigh_loss(X, k):
    scores, ratio = pca_eigh(X, k)
    return np.sum(scores ** 2) + np.sum(ratio[:k])


def pca_svd(X, k):
    """PCA from the SVD of the centered data (the explained variance and the projections)."""
    Xc = X - np.mean(X, axis=0, keepdims=True)
    U, s, Vt = np.linalg.svd(Xc, full_matrices=False)
    explained = s ** 2 / (X.shape[0] - 1)
    proj = U[:, :k] * s[:k]
    return explained, proj, Vt[:k]


def pca_svd_args(n):
    r = _rng(n, 72)
    return (r.normal(size=(n, 3)) * np.array([2.0, 1.0, 0.3]), 2)


def pca_svd_loss(X, k):
    explained, proj, comps = pca_svd(X, k)
    return np.sum(explained) + np.sum(proj ** 2) + np.sum(comps ** 4)


def gram_schmidt_vs_qr(A):
    """Classical Gram-Schmidt checked against np.linalg.qr: QR's signs made those of
    Gram-Schmidt (a positive diagonal of R) before comparing."""
    n, m = A.shape
    Q = np.zeros((n, m))
    for j in range(m):
        v = A[:, j].copy()
        for i in range(j):
            v = v - (Q[:, i] @ A[:, j]) * Q[:, i]
        Q[:, j] = v / np.linalg.norm(v)
    Qr, R = np.linalg.qr(A)
    signs = np.sign(np.diag(R))
    Qr = Qr * signs
    R = R * signs[:, None]
    return Q, Qr, np.max(np.abs(Q - Qr)), R


def gram_schmidt_vs_qr_args(n):
    return (_rng(n, 73).normal(size=(n, 3)),)


def gram_schmidt_vs_qr_loss(A):
    Q, Qr, err, R = gram_schmidt_vs_qr(A)
    return np.sum(R ** 2) + np.sum(Qr[:, 0] * np.arange(A.shape[0]))


def robust_columns(X):
    """Robust statistics along axis 0: median, MAD, interquartile range, range, and the
    robust z-scores a data-cleaning script computes."""
    med = np.median(X, axis=0)
    mad = np.median(np.abs(X - med), axis=0)
    q1, q3 = np.percentile(X, [25, 75], axis=0)
    spread = np.ptp(X, axis=0)
    z = 0.6745 * (X - med) / mad
    return med, mad, q3 - q1, spread, z, np.quantile(X, 0.9, axis=1)


def robust_columns_args(n):
    return (_rng(n, 74).normal(size=(n, 3)),)


def robust_columns_loss(X):
    med, mad, iqr, spread, z, q90 = robust_columns(X)
    return np.sum(med ** 2) + np.sum(iqr) + np.sum(spread) + np.sum(q90)


def rotate_and_upsample(img):
    """Image augmentation: the four rotations and the mirror images stacked, and a 2x nearest
    upsampling with np.kron."""
    views = [np.rot90(img, k) for k in range(4)]
    views += [np.rot90(np.fliplr(img), k) for k in range(4)]
    big = np.kron(img, np.ones((2, 2)))
    return np.stack(views), big


def rotate_and_upsample_args(n):
    return (_rng(n, 75).random((n, n)),)


def rotate_and_upsample_loss(img):
    views, big = rotate_and_upsample(img)
    w = np.arange(views.size).reshape(views.shape) % 5
    return np.sum(views * w) + np.sum(big ** 2)


def ridge_pinv(X, y, lam):
    """Ridge regression through the pseudo-inverse, with the rank of the design matrix and
    the correlation of the fit with the target."""
    d = X.shape[1]
    w = np.linalg.pinv(X.T @ X + lam * np.eye(d)) @ X.T @ y
    fit = X @ w
    return w, np.linalg.matrix_rank(X), np.corrcoef(fit, y)[0, 1], np.cov(X, rowvar=False)


def ridge_pinv_args(n):
    r = _rng(n, 76)
    X = r.normal(size=(n, 3))
    return (X, X @ np.array([1.0, -2.0, 0.5]) + 0.1 * r.normal(size=n), 0.3)


def ridge_pinv_loss(X, y, lam):
    w, rank, r, C = ridge_pinv(X, y, lam)
    return np.sum(w ** 2) + r + np.sum(C)


def batch_means(X, n_batches):
    """Minibatch statistics: np.array_split into batches (iterated), each batch's mean, and
    the first and second halves from a tuple-unpacked np.split."""
    means = []
    for batch in np.array_split(X, n_batches):
        means.append(batch.mean(axis=0))
    first, second = np.split(X[: 2 * (X.shape[0] // 2)], 2)
    return np.array(means), first.sum(axis=0) - second.sum(axis=0)


def batch_means_args(n):
    return (_rng(n, 77).random((n, 2)), 3)


def batch_means_loss(X, n_batches):
    means, diff = batch_means(X, n_batches)
    return np.sum(means ** 2) + np.sum(diff * np.array([1.0, -0.5]))


def zero_out_flat(x, idx, fill):
    """Clears flat positions of an array in place with np.put (the caller's array changes),
    the way an outlier-removal script does, and returns the kept fraction."""
    np.put(x, idx, fill)
    return np.count_nonzero(x != fill) / x.size


def zero_out_flat_args(n):
    r = _rng(n, 78)
    return (r.random((n, 3)), np.array([0, 4, -1, 4]), 0.0)


def zero_out_flat_loss(x, idx, fill):
    z = x.copy()
    np.put(z, idx, fill)
    return np.sum(z ** 2)


# ----------------------------------------- rows other people reach for (issue 22, rows) ------


def mandelbrot_complex(xmin, xmax, ymin, ymax, n, maxit):
    """Escape counts with the builtin complex() and abs() of a complex scalar."""
    out = np.zeros((n, n), dtype=np.int64)
    for j in range(n):
        for i in range(n):
            c = complex(xmin + (xmax - xmin) * i / n, ymin + (ymax - ymin) * j / n)
            z = 0j
            k = 0
            while abs(z) <= 2 and k < maxit:
                z = z * z + c
                k += 1
            out[j, i] = k
    return out


def mandelbrot_complex_args(n):
    return (-2.0, 1.0, -1.2, 1.2, n, 40)


def drawdown_accumulate(prices):
    """Drawdowns from the running peak (np.maximum.accumulate) and the running trough."""
    peak = np.maximum.accumulate(prices)
    trough = np.minimum.accumulate(prices[::-1])[::-1]
    return (peak - prices) / peak, np.max(peak - trough)


def drawdown_accumulate_args(n):
    return (np.cumsum(_rng(n, 48).normal(size=n)) + 60.0,)


def drawdown_accumulate_loss(prices):
    dd, spread = drawdown_accumulate(prices)
    return np.sum(dd ** 2) + spread


def histogram_equalize(img, nbins):
    """Histogram equalization: counts of np.histogram over [0, 1], their normalized cumulative
    sum, and each pixel mapped through it by its bin."""
    counts, edges = np.histogram(img, bins=nbins, range=(0.0, 1.0))
    cdf = np.cumsum(counts) / img.size
    idx = np.clip((img.ravel() * nbins).astype(np.int64), 0, nbins - 1)
    return cdf[idx].reshape(img.shape), counts, edges


def histogram_equalize_args(n):
    img = _rng(n, 49).random((n, n)) ** 2
    img[0, 0], img[0, 1] = 1.0, 0.5          # on the closed last edge and an inner edge
    return (img, 8)


def rbf_outer(a, b, gamma):
    """A Gaussian kernel matrix from np.subtract.outer, row sums by np.add.reduce."""
    K = np.exp(-gamma * np.subtract.outer(a, b) ** 2)
    return K, np.add.reduce(K, axis=1), np.multiply.outer(a, b).max()


def rbf_outer_args(n):
    r = _rng(n, 50)
    return (r.normal(size=n), r.normal(size=n + 2), 0.7)


def rbf_outer_loss(a, b, gamma):
    K, rows, m = rbf_outer(a, b, gamma)
    return np.sum(K * K) + np.sum(rows) + m


def coo_to_dense_add_at(rows, cols, vals, shape0, shape1):
    """A COO matrix made dense with np.add.at on (rows, cols) (duplicates add up), and the
    largest value per row with np.maximum.at."""
    A = np.zeros((shape0, shape1))
    np.add.at(A, (rows, cols), vals)
    best = np.full(shape0, -np.inf)
    np.maximum.at(best, rows, vals)
    return A, best


def coo_to_dense_add_at_args(n):
    r = _rng(n, 51)
    m = 3 * n
    return (r.integers(0, n, m), r.integers(0, n + 1, m), r.normal(size=m), n, n + 1)


def coo_to_dense_add_at_loss(rows, cols, vals, shape0, shape1):
    A, best = coo_to_dense_add_at(rows, cols, vals, shape0, shape1)
    return np.sum(A * A) + np.sum(np.where(np.isfinite(best), best, 0.0))


def nan_zscore(values, missing):
    """A z-score that skips missing values (NaN) with the nan-reductions, missing values
    imputed with the mean (a z of 0)."""
    x = np.where(missing, np.nan, values)
    mu = np.nanmean(x)
    sd = np.nanstd(x)
    z = (np.where(np.isnan(x), mu, x) - mu) / sd
    return z, np.nanmax(x) - mu, np.nanargmin(x), np.nancumsum(x)


def nan_zscore_args(n):
    missing = np.zeros(n, dtype=bool)
    missing[1::4] = True
    return (_rng(n, 52).normal(size=n), missing)


def nan_zscore_loss(values, missing):
    z, zmax, imin, cs = nan_zscore(values, missing)
    return np.sum(z ** 3) + np.nansum(cs) + zmax


def int_bucket_math(ticks, width):
    """Integer bucketing of signed time stamps: floor division, mod and fmod of negatives,
    shifts, and np.isin / np.unravel_index on the result."""
    bucket = ticks // width
    phase = ticks % width
    trunc_phase = np.fmod(ticks, width)
    packed = (bucket << 8) | (phase & 255)
    hot = np.isin(bucket, np.array([-2, 0, 3]))
    r, c = np.unravel_index(np.argmax(phase), (ticks.shape[0] // 4, 4))
    return bucket, phase, trunc_phase, packed >> 4, hot, r, c


def int_bucket_math_args(n):
    return (_rng(n, 53).integers(-1000, 1000, 4 * n), 7)


def velocity_profile(x, dt):
    """Speeds by np.diff with prepend (the first speed 0) and append, rounded for a report."""
    v = np.diff(x, prepend=x[0]) / dt
    a = np.diff(v, append=v[-1:]) / dt
    return v, a, round(float(np.max(np.abs(v))), 3), round(x[0])


def velocity_profile_args(n):
    return (np.cumsum(_rng(n, 54).random(n)), 0.1)


def velocity_profile_loss(x, dt):
    v, a, top, start = velocity_profile(x, dt)
    return np.sum(v ** 2) + np.sum(np.abs(a))
# ------------------------------------ Python-heavy numerics (session python, 2026-11-27) ------
# while loops on tolerances, for/else, returns from nested loops, closures, lambdas, module-level
# helpers, lists and tuples turned into arrays, comprehensions, enumerate/zip/reversed/sorted,
# dicts of arrays, mixed tuple returns, keywords and defaults, *args, module constants, Python
# scalar promotion, integer counters as indices, math.*, string options, f-strings, print.

_GL_NODES = np.array([-0.9061798459386640, -0.5384693101056831, 0.0,
                      0.5384693101056831, 0.9061798459386640])
_GL_WEIGHTS = np.array([0.2369268850561891, 0.4786286704993665, 0.5688888888888889,
                        0.4786286704993665, 0.2369268850561891])
_TWO_PI = 2.0 * math.pi
_EPS = 1e-12


def cbrt_newton(a, tol=1e-13, maxit=60):
    """Cube roots by Newton's method, one element at a time: `while True` left by a tolerance
    or an iteration cap, a conditional start, the iteration count summed over elements."""
    out = np.empty_like(a)
    total_iters = 0
    for i in range(a.shape[0]):
        x = a[i] if a[i] > 1.0 else 1.0
        it = 0
        while True:
            step = (x * x * x - a[i]) / (3.0 * x * x)
            x -= step
            it += 1
            if abs(step) < tol * x or it >= maxit:
                break
        out[i] = x
        total_iters += it
    return out, total_iters


def cbrt_newton_args(n):
    return (_rng(n, 200).random(n) * 10.0 + 0.5,)


def cbrt_newton_loss(a):
    r, _ = cbrt_newton(a)
    return np.sum(r * r)


def first_pair_summing(x, target):
    """The first pair i < j whose sum is near target: `return` from inside two loops."""
    n = x.shape[0]
    for i in range(n):
        for j in range(i + 1, n):
            if abs(x[i] + x[j] - target) < 0.05:
                return i, j
    return -1, -1


def first_pair_summing_args(n):
    return (np.round(_rng(n, 201).random(n) * 4.0, 1), 5.3)


def first_row_above(X, thresh):
    """for/else: the else branch runs when no row breaks the loop."""
    for i, row in enumerate(X):
        if row.sum() > thresh:
            found = i
            break
    else:
        found = -1
    return found, (X[found] * 2.0 if found >= 0 else np.zeros(X.shape[1]))


def first_row_above_args(n):
    return (_rng(n, 202).random((n, 3)), 2.2)


def first_row_above_loss(X, thresh):
    i, r = first_row_above(X, thresh)
    return np.sum(r * r)


def primes_for_else(n):
    """Trial division with for/else, primes collected in a list, then np.array(list)."""
    out = []
    for k in range(2, n):
        for d in range(2, int(math.sqrt(k)) + 1):
            if k % d == 0:
                break
        else:
            out.append(k)
    return np.array(out)


def primes_for_else_args(n):
    return (n,)


def closure_window_mean(x, width):
    """A nested helper closing over the argument and a local, called from a comprehension."""
    n = x.shape[0]
    half = width // 2

    def window_mean(i):
        lo = max(0, i - half)
        hi = min(n, i + half + 1)
        return np.mean(x[lo:hi])

    return np.array([window_mean(i) for i in range(n)])


def closure_window_mean_args(n):
    return (_rng(n, 203).standard_normal(n), 3)


def closure_window_mean_loss(x, width):
    return np.sum(closure_window_mean(x, width) ** 2)


def lambda_soft_threshold(x, a):
    """Lambdas bound to names, one with a default argument, one calling another."""
    sq = lambda v: v * v                                                   # noqa: E731
    soft = lambda v, t=0.5: np.sign(v) * np.maximum(np.abs(v) - t, 0.0)   # noqa: E731
    both = lambda v: soft(sq(v) - a, 0.25)                                 # noqa: E731
    return both(x) + soft(x)


def lambda_soft_threshold_args(n):
    return (_rng(n, 204).standard_normal(n) * 2.0, 0.7)


def lambda_soft_threshold_loss(x, a):
    return np.sum(lambda_soft_threshold(x, a) ** 2)


def _clip01(v):
    return min(max(v, 0.0), 1.0)


def _smoothstep(e0, e1, v):
    t = _clip01((v - e0) / (e1 - e0))
    return t * t * (3.0 - 2.0 * t)


def smoothstep_helpers(x, e0, e1):
    """Module-level helper functions calling each other, on one element at a time."""
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        out[i] = _smoothstep(e0, e1, x[i])
    return out


def smoothstep_helpers_args(n):
    return (_rng(n, 205).random(n) * 1.6 - 0.3, 0.0, 1.0)


def smoothstep_helpers_loss(x, e0, e1):
    return np.sum(smoothstep_helpers(x, e0, e1) * np.arange(x.shape[0]))


def peaks_to_arrays(x):
    """Local maxima gathered into two lists, then np.array(list) with and without a dtype."""
    idx = []
    vals = []
    for i in range(1, len(x) - 1):
        if x[i] > x[i - 1] and x[i] >= x[i + 1]:
            idx.append(i)
            vals.append(x[i])
    return np.array(idx, dtype=np.int64), np.array(vals)


def peaks_to_arrays_args(n):
    return (_rng(n, 206).standard_normal(n),)


def peaks_to_arrays_loss(x):
    i, v = peaks_to_arrays(x)
    return np.sum(v ** 3)


def polyline_lengths(xs, ys):
    """A list of (x, y) tuples, then pairs of tuples unpacked in a zip over two slices."""
    pts = []
    for x, y in zip(xs, ys):
        pts.append((x, y))
    total = 0.0
    lengths = []
    for (x0, y0), (x1, y1) in zip(pts[:-1], pts[1:]):
        d = math.hypot(x1 - x0, y1 - y0)
        lengths.append(d)
        total += d
    return total, np.array(lengths)


def polyline_lengths_args(n):
    r = _rng(n, 207)
    return (np.cumsum(r.random(n)), r.standard_normal(n))


def polyline_lengths_loss(xs, ys):
    t, l = polyline_lengths(xs, ys)
    return t + np.sum(l ** 2)


def row_norms_comprehension(X):
    """A generator expression inside sum() inside a list comprehension, and a filtered one."""
    norms = [math.sqrt(sum(v * v for v in row)) for row in X]
    big = [i for i, nrm in enumerate(norms) if nrm > 1.0]
    return np.array(norms), len(big)


def row_norms_comprehension_args(n):
    return (_rng(n, 208).standard_normal((n, 3)),)


def row_norms_comprehension_loss(X):
    nrm, _ = row_norms_comprehension(X)
    return np.sum(nrm)


def ranks_and_suffix(x, w):
    """sorted() with a key, enumerate over the order, then a reversed() suffix sum."""
    order = sorted(range(len(x)), key=lambda i: x[i])
    ranks = np.empty(len(x), dtype=np.int64)
    for r, i in enumerate(order):
        ranks[i] = r
    acc = 0.0
    suffix = np.empty_like(w)
    for i in reversed(range(len(w))):
        acc += w[i]
        suffix[i] = acc
    return ranks, suffix


def ranks_and_suffix_args(n):
    r = _rng(n, 209)
    return (r.standard_normal(n), r.standard_normal(n))


def reversed_zip_pairs(a, b):
    """zip of reversed() and a plain array, enumerate with start=1."""
    s = 0.0
    for k, (u, v) in enumerate(zip(reversed(a), b), start=1):
        s += k * u * v
    return s


def reversed_zip_pairs_args(n):
    r = _rng(n, 210)
    return (r.standard_normal(n), r.standard_normal(n))


def reversed_zip_pairs_loss(a, b):
    return reversed_zip_pairs(a, b)


def mlp_params_dict(params, X):
    """A dict of arrays as a parameter, read by string keys."""
    h = np.tanh(X @ params["W1"] + params["b1"])
    return h @ params["W2"] + params["b2"]


def mlp_params_dict_args(n):
    r = _rng(n, 211)
    params = {"W1": r.standard_normal((3, 4)), "b1": r.standard_normal(4),
              "W2": r.standard_normal((4, 2)), "b2": r.standard_normal(2)}
    return (params, r.standard_normal((n, 3)))


def mlp_params_dict_loss(params, X):
    return np.sum(mlp_params_dict(params, X) ** 2)


def summary_tuple(x):
    """A tuple of a Python int, a Python float, a NumPy bool and an array."""
    n_pos = int(np.sum(x > 0))
    return n_pos, float(x.mean()), x.max() > 1.0, np.sort(x)[-3:]


def summary_tuple_args(n):
    return (_rng(n, 212).standard_normal(n),)


def _huber(r, delta=1.0):
    a = np.abs(r)
    return np.where(a <= delta, 0.5 * r * r, delta * (a - 0.5 * delta))


def robust_fit_loss(w, X, y, delta=0.5, l2=1e-2):
    """Defaults on the kernel, a helper called with a keyword argument."""
    r = X @ w - y
    return np.mean(_huber(r, delta=delta)) + l2 * np.dot(w, w) + np.sum(_huber(w))


def robust_fit_loss_args(n):
    r = _rng(n, 213)
    return (r.standard_normal(3), r.standard_normal((n, 3)), r.standard_normal(n))


def robust_fit_loss_loss(w, X, y):
    return robust_fit_loss(w, X, y)


def _total(*arrays, scale=1.0):
    s = 0.0
    for a in arrays:
        s += np.sum(a)
    return s * scale


def star_args_norms(*vecs):
    """*args on the kernel itself and on a helper with a keyword after them."""
    sq = [v * v for v in vecs]
    return _total(*sq, scale=0.5), len(vecs), _total(vecs[0], vecs[-1])


def star_args_norms_args(n):
    r = _rng(n, 214)
    return (r.standard_normal(n), r.standard_normal(n), r.standard_normal(n))


def star_args_norms_loss(a, b, c):
    s, _, t = star_args_norms(a, b, c)
    return s + t * t


def gauss_legendre_panels(c, a, b, panels):
    """Module-level constant arrays zipped together, a constant computed from math.pi."""
    h = (b - a) / panels
    total = 0.0
    for p in range(panels):
        mid = a + (p + 0.5) * h
        for node, wt in zip(_GL_NODES, _GL_WEIGHTS):
            t = mid + 0.5 * h * node
            total += wt * (c[0] + c[1] * np.sin(_TWO_PI * t) + c[2] * t * t)
    return 0.5 * h * total


def gauss_legendre_panels_args(n):
    return (_rng(n, 215).standard_normal(3), 0.0, 1.5, n)


def gauss_legendre_panels_loss(c, a, b, panels):
    return gauss_legendre_panels(c, a, b, panels) ** 2


def scalar_promotion(x, n, flag):
    """Python int // and /, a bool plus an int, a bool times a float, bools counted into an int."""
    half = n // 2
    frac = n / 4
    bonus = flag + 1
    scale = True * 2.5
    k = 0
    for v in x:
        k += v > 0
    return half, frac, bonus, scale * k, x[:half] * frac + flag


def scalar_promotion_args(n):
    return (_rng(n, 216).standard_normal(n), n, True)


def compact_positive(x):
    """An integer counter used as the write index, then a slice up to it."""
    out = np.empty_like(x)
    k = 0
    for v in x:
        if v > 0:
            out[k] = v
            k += 1
    return out[:k], k


def compact_positive_args(n):
    return (_rng(n, 217).standard_normal(n),)


def compact_positive_loss(x):
    c, k = compact_positive(x)
    return np.sum(c ** 2) * k


def math_module_mix(x, y):
    """math.hypot/atan2/log1p/erf/copysign/fabs/floor/ceil/isfinite on elements."""
    out = np.empty(x.shape[0])
    flo = 0
    for i in range(x.shape[0]):
        r = math.hypot(x[i], y[i])
        th = math.atan2(y[i], x[i])
        out[i] = (math.log1p(r) * math.cos(th) + math.erf(x[i])
                  + math.copysign(1.0, y[i]) * math.fabs(x[i]))
        flo += math.floor(x[i] * 3) - math.ceil(y[i])
    return out, flo, math.isfinite(out.sum())


def math_module_mix_args(n):
    r = _rng(n, 218)
    return (r.standard_normal(n), r.standard_normal(n))


def math_module_mix_loss(x, y):
    out, _, _ = math_module_mix(x, y)
    return np.sum(out)


def correlate_mode(x, w, mode="same"):
    """A string option chosen by ==, an f-string in the error for an unknown one."""
    k = w.shape[0]
    if mode == "valid":
        n_out = x.shape[0] - k + 1
        start = 0
    elif mode == "same":
        n_out = x.shape[0]
        start = -(k // 2)
    else:
        raise ValueError(f"unknown mode {mode!r}")
    out = np.zeros(n_out)
    for i in range(n_out):
        for j in range(k):
            t = i + start + j
            if 0 <= t < x.shape[0]:
                out[i] += w[j] * x[t]
    return out


def correlate_mode_args(n):
    r = _rng(n, 219)
    return (r.standard_normal(n), np.array([0.25, 0.5, 0.25]), "same")


def correlate_mode_loss(x, w, mode):
    return np.sum(correlate_mode(x, w, mode) ** 2)


def correlate_valid_kw(x, w):
    """The same kernel called with mode= as a keyword from another function."""
    return correlate_mode(x, w, mode="valid") + correlate_mode(x, w)[1:-1]


def correlate_valid_kw_args(n):
    r = _rng(n, 220)
    return (r.standard_normal(n), np.array([1.0, -2.0, 1.0]))


def correlate_valid_kw_loss(x, w):
    return np.sum(np.sin(correlate_valid_kw(x, w)))


def validated_weights(w, x):
    """asserts with f-string messages and a raise with a formatted number."""
    assert w.ndim == 1, f"w must be 1-D, got {w.ndim}-D"
    assert w.shape == x.shape, f"shape mismatch: {w.shape} vs {x.shape}"
    total = w.sum()
    if total <= 0:
        raise ValueError(f"weights sum to {total:.3g}, expected > 0")
    return np.dot(w / total, x)


def validated_weights_args(n):
    r = _rng(n, 221)
    return (r.random(n) + 0.1, r.standard_normal(n))


def validated_weights_loss(w, x):
    return validated_weights(w, x)


def verbose_relaxation(A, b, iters):
    """Richardson iteration that prints its residual every few steps with an f-string."""
    x = np.zeros_like(b)
    for it in range(iters):
        r = b - A @ x
        x = x + 0.1 * r
        if it % 5 == 0:
            print(f"iter {it:3d} residual {np.linalg.norm(r):.3e}")
    return x


def verbose_relaxation_args(n):
    r = _rng(n, 222)
    return (np.eye(n) * 3.0 + 0.1 * r.standard_normal((n, n)), r.standard_normal(n), 12)


def verbose_relaxation_loss(A, b, iters):
    return np.sum(verbose_relaxation(A, b, iters) ** 2)


def secant_root(c, x0, x1, tol=1e-12, maxit=100):
    """A lambda over an argument, an early return inside the loop, a raise after it."""
    f = lambda x: c[0] * x ** 3 + c[1] * x - c[2]      # noqa: E731
    f0, f1 = f(x0), f(x1)
    for it in range(maxit):
        if f1 == f0:
            break
        x2 = x1 - f1 * (x1 - x0) / (f1 - f0)
        if abs(x2 - x1) < tol:
            return x2, it + 1
        x0, f0 = x1, f1
        x1, f1 = x2, f(x2)
    raise RuntimeError(f"secant did not converge after {maxit} iterations")


def secant_root_args(n):
    r = _rng(n, 223)
    return (np.array([1.0, 1.0 + r.random(), 2.0 + r.random()]), 0.0, 1.0)


def secant_root_loss(c, x0, x1):
    r, _ = secant_root(c, x0, x1)
    return r


def mixed_branch_increment(x):
    """An increment that is an int on one branch and a float on the other."""
    total = 0
    for v in x:
        inc = 1 if v > 0 else 0.5
        total += inc
    return total


def mixed_branch_increment_args(n):
    return (_rng(n, 224).standard_normal(n),)


def digit_sums(a):
    """Python integer arithmetic per element: while n > 0 with divmod, // and %."""
    out = np.zeros(a.shape[0], dtype=np.int64)
    for i in range(a.shape[0]):
        n = a[i]
        s = 0
        while n > 0:
            n, d = divmod(n, 10)
            s += d
        out[i] = s * (-1) ** (a[i] % 2) + (-7) // 2 + (-7) % 3
    return out


def digit_sums_args(n):
    return (_rng(n, 225).integers(0, 100000, n),)


def star_shape_stack(x):
    """np.zeros((*x.shape, 2)) and len(x.shape), rotation matrices from a nested list literal."""
    out = np.zeros((*x.shape, 2))
    for i in range(x.shape[0]):
        c, s = math.cos(x[i]), math.sin(x[i])
        R = np.array([[c, -s], [s, c]])
        out[i] = R @ np.array([1.0, 0.5])
    return out, len(x.shape)


def star_shape_stack_args(n):
    return (_rng(n, 226).standard_normal(n),)


def star_shape_stack_loss(x):
    out, _ = star_shape_stack(x)
    return np.sum(out[:, 0] * out[:, 1])


def any_all_generators(x, t):
    """any()/all() over generator expressions, sum() of a filtered generator, x.tolist()."""
    has_big = any(v > t for v in x)
    all_finite = all(math.isfinite(v) for v in x)
    n_small = sum(1 for v in x.tolist() if abs(v) < 0.5)
    return has_big, all_finite, n_small


def any_all_generators_args(n):
    return (_rng(n, 227).standard_normal(n), 1.5)


def isinstance_scale(x, scale):
    """A branch on isinstance() of an argument (a number here, an array elsewhere)."""
    if isinstance(scale, np.ndarray):
        return x * scale[:, None]
    elif isinstance(scale, (int, float)):
        return x * float(scale)
    raise TypeError(f"bad scale {type(scale).__name__}")


def isinstance_scale_args(n):
    return (_rng(n, 228).standard_normal((n, 2)), 3)


def dict_counts(labels, m):
    """A dict used as a counter with .get, read back by a comprehension."""
    counts = {}
    for v in labels:
        k = int(v)
        counts[k] = counts.get(k, 0) + 1
    return np.array([counts.get(k, 0) for k in range(m)])


def dict_counts_args(n):
    return (_rng(n, 229).integers(0, 5, n), 6)


def sliding_max_deque(x, k):
    """A list used as a deque: append, pop(), pop(0), truthiness, [-1] and [0]."""
    dq = []
    out = []
    for i in range(len(x)):
        while dq and x[dq[-1]] <= x[i]:
            dq.pop()
        dq.append(i)
        if dq[0] <= i - k:
            dq.pop(0)
        if i >= k - 1:
            out.append(x[dq[0]])
    return np.array(out)


def sliding_max_deque_args(n):
    return (_rng(n, 230).standard_normal(n), 3)


def sliding_max_deque_loss(x, k):
    return np.sum(sliding_max_deque(x, k) ** 2)


# ----------------------------------------------------- finance (session python, 2026-11-27) ----

def returns_stats(prices, periods_per_year=252):
    """Simple and log returns, annualised Sharpe ratio with std(ddof=1), cumulative growth."""
    rets = prices[1:] / prices[:-1] - 1.0
    logr = np.log(prices[1:] / prices[:-1])
    mu = rets.mean() * periods_per_year
    vol = rets.std(ddof=1) * math.sqrt(periods_per_year)
    sharpe = mu / vol
    cum = np.cumprod(1.0 + rets)
    return sharpe, logr.sum(), cum[-1], (rets < 0).mean()


def returns_stats_args(n):
    return (100.0 * np.exp(np.cumsum(0.01 * _rng(n, 240).standard_normal(n))),)


def returns_stats_loss(prices):
    s, lr, c, _ = returns_stats(prices)
    return s + lr + c


def drawdown_duration(equity):
    """Drawdown series and the longest run under water (an int counter with max())."""
    peak = equity[0]
    dd = np.zeros_like(equity)
    longest = 0
    cur = 0
    for t in range(len(equity)):
        if equity[t] >= peak:
            peak = equity[t]
            cur = 0
        else:
            cur += 1
            longest = max(longest, cur)
        dd[t] = equity[t] / peak - 1.0
    return dd, longest


def drawdown_duration_args(n):
    return (np.cumsum(_rng(n, 241).standard_normal(n)) + 40.0,)


def drawdown_duration_loss(equity):
    dd, _ = drawdown_duration(equity)
    return np.sum(dd ** 2)


def mc_european_call(s0, strike, rate, sigma, maturity, n, seed):
    """Black-Scholes Monte Carlo: default_rng(seed), standard_normal(n), price and its error."""
    rng = np.random.default_rng(seed)
    z = rng.standard_normal(n)
    st = s0 * np.exp((rate - 0.5 * sigma ** 2) * maturity + sigma * math.sqrt(maturity) * z)
    payoff = np.maximum(st - strike, 0.0)
    disc = math.exp(-rate * maturity)
    price = disc * payoff.mean()
    stderr = disc * payoff.std(ddof=1) / math.sqrt(n)
    return price, stderr


def mc_european_call_args(n):
    return (100.0, 105.0, 0.03, 0.2, 1.5, n, 7)


def mc_asian_paths(s0, strike, sigma, steps, n_paths, rng):
    """An arithmetic Asian call: a Python loop over paths and steps, one rng.normal() per step."""
    dt = 1.0 / steps
    total = 0.0
    for p in range(n_paths):
        s = s0
        avg = 0.0
        for k in range(steps):
            s *= math.exp(-0.5 * sigma * sigma * dt + sigma * math.sqrt(dt) * rng.normal())
            avg += s
        avg /= steps
        total += max(avg - strike, 0.0)
    return total / n_paths


def mc_asian_paths_args(n):
    return (100.0, 100.0, 0.25, 12, n, np.random.default_rng(n))


def moving_average_crossover(prices, short, long):
    """Two moving averages from a cumsum, an int position flipped by a crossover, the P&L."""
    c = np.cumsum(np.concatenate(([0.0], prices)))
    pos = 0
    pnl = 0.0
    trades = 0
    for t in range(long, len(prices)):
        ma_s = (c[t] - c[t - short]) / short
        ma_l = (c[t] - c[t - long]) / long
        new_pos = 1 if ma_s > ma_l else -1
        if new_pos != pos:
            trades += 1
            pos = new_pos
        pnl += pos * (prices[t] - prices[t - 1]) if t > long else 0.0
    return pnl, trades


def moving_average_crossover_args(n):
    return (np.cumsum(_rng(n, 242).standard_normal(n)) + 100.0, 3, 8)


def moving_average_crossover_loss(prices, short, long):
    p, _ = moving_average_crossover(prices, short, long)
    return p


# ------------------------------------------- signal processing (session python, 2026-11-27) ----

def iir_df2t(b, a, x):
    """lfilter's direct form II transposed as loops over a state vector; b and a rebound."""
    n = max(len(a), len(b))
    b = np.concatenate([b, np.zeros(n - len(b))]) / a[0]
    a = np.concatenate([a, np.zeros(n - len(a))]) / a[0]
    z = np.zeros(n - 1)
    y = np.empty_like(x)
    for i, xi in enumerate(x):
        yi = b[0] * xi + z[0]
        for k in range(1, n - 1):
            z[k - 1] = b[k] * xi + z[k] - a[k] * yi
        z[n - 2] = b[n - 1] * xi - a[n - 1] * yi
        y[i] = yi
    return y


def iir_df2t_args(n):
    return (np.array([0.1, 0.2, 0.1]), np.array([1.0, -0.6, 0.25, -0.05]),
            _rng(n, 250).standard_normal(n))


def iir_df2t_loss(b, a, x):
    return np.sum(iir_df2t(b, a, x) ** 2)


def windowed_sinc_fir(x, cutoff, taps):
    """A Hamming-windowed sinc low-pass designed in a loop with math.*, then applied."""
    h = np.empty(taps)
    m = (taps - 1) / 2
    for k in range(taps):
        t = k - m
        h[k] = 2 * cutoff if t == 0 else math.sin(2 * math.pi * cutoff * t) / (math.pi * t)
        h[k] *= 0.54 - 0.46 * math.cos(2 * math.pi * k / (taps - 1))
    h /= h.sum()
    y = np.zeros(len(x))
    for i in range(len(x)):
        for k in range(taps):
            if i - k >= 0:
                y[i] += h[k] * x[i - k]
    return y


def windowed_sinc_fir_args(n):
    return (_rng(n, 251).standard_normal(n), 0.15, 7)


def windowed_sinc_fir_loss(x, cutoff, taps):
    return np.sum(windowed_sinc_fir(x, cutoff, taps) ** 2)


def goertzel_power(x, freqs, fs):
    """Goertzel's recurrence per frequency: two scalars carried and swapped by a tuple."""
    out = np.empty(len(freqs))
    n = len(x)
    for j, f in enumerate(freqs):
        k = int(0.5 + n * f / fs)
        w = 2.0 * math.pi * k / n
        coeff = 2.0 * math.cos(w)
        s1, s2 = 0.0, 0.0
        for v in x:
            s1, s2 = v + coeff * s1 - s2, s1
        out[j] = s1 * s1 + s2 * s2 - coeff * s1 * s2
    return out


def goertzel_power_args(n):
    t = np.arange(n) / 64.0
    return (np.sin(2 * np.pi * 8.0 * t) + 0.3 * _rng(n, 252).standard_normal(n),
            np.array([4.0, 8.0, 12.0]), 64.0)


def goertzel_power_loss(x, freqs, fs):
    return np.sum(np.sqrt(goertzel_power(x, freqs, fs)))


def kalman_1d(z, q, r):
    """A scalar Kalman filter: predict and update, estimates and variances in two arrays."""
    xhat = np.zeros(len(z))
    pvar = np.zeros(len(z))
    x, p = z[0], 1.0
    for k in range(len(z)):
        p = p + q
        gain = p / (p + r)
        x = x + gain * (z[k] - x)
        p = (1 - gain) * p
        xhat[k] = x
        pvar[k] = p
    return xhat, pvar


def kalman_1d_args(n):
    return (np.sin(np.arange(n) * 0.2) + 0.3 * _rng(n, 253).standard_normal(n), 1e-3, 0.09)


def kalman_1d_loss(z, q, r):
    xh, _ = kalman_1d(z, q, r)
    return np.sum(xh ** 2)


# ------------------------------------------------------ geometry (session python, 2026-11-27) --

def shoelace_area(xs, ys):
    """Polygon area by the shoelace formula with a wrap-around index (i + 1) % n."""
    n = len(xs)
    area = 0.0
    for i in range(n):
        j = (i + 1) % n
        area += xs[i] * ys[j] - xs[j] * ys[i]
    return abs(area) / 2.0


def _star_polygon(n, salt):
    r = _rng(n, salt)
    ang = np.sort(r.random(n)) * 2 * np.pi
    rad = 1.0 + r.random(n)
    return rad * np.cos(ang), rad * np.sin(ang)


def shoelace_area_args(n):
    return _star_polygon(n, 260)


def shoelace_area_loss(xs, ys):
    return shoelace_area(xs, ys)


def points_in_polygon(px, py, poly):
    """Ray casting: rows unpacked into two names, `and` guarding a division, `c = not c`."""
    n = poly.shape[0]
    inside = np.zeros(px.shape[0], dtype=bool)
    for p in range(px.shape[0]):
        x, y = px[p], py[p]
        c = False
        j = n - 1
        for i in range(n):
            xi, yi = poly[i]
            xj, yj = poly[j]
            if (yi > y) != (yj > y) and x < (xj - xi) * (y - yi) / (yj - yi) + xi:
                c = not c
            j = i
        inside[p] = c
    return inside


def points_in_polygon_args(n):
    xs, ys = _star_polygon(9, 261)
    poly = np.stack([xs, ys], axis=1)
    poly[3, 1] = poly[4, 1]          # a horizontal edge: its division is never evaluated
    r = _rng(n, 262)
    return (r.random(n) * 4.0 - 2.0, r.random(n) * 4.0 - 2.0, poly)


def _cross2(o, a, b):
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def convex_hull_chain(pts):
    """Andrew's monotone chain: a list of points with pop() in a while loop, two halves joined."""
    P = pts[np.argsort(pts[:, 0])]
    lower = []
    for p in P:
        while len(lower) >= 2 and _cross2(lower[-2], lower[-1], p) <= 0:
            lower.pop()
        lower.append(p)
    upper = []
    for p in P[::-1]:
        while len(upper) >= 2 and _cross2(upper[-2], upper[-1], p) <= 0:
            upper.pop()
        upper.append(p)
    hull = lower[:-1] + upper[:-1]
    return np.array(hull)


def convex_hull_chain_args(n):
    return (_rng(n, 263).standard_normal((n, 2)),)


# ---------------------------------------------------------- graphs (session python, 2026-11-27) --

def bfs_distances(adj, src):
    """Breadth-first search with the queue as an int array and head/tail counters."""
    n = adj.shape[0]
    dist = np.full(n, -1, dtype=np.int64)
    queue = np.empty(n, dtype=np.int64)
    head, tail = 0, 0
    queue[tail] = src
    tail += 1
    dist[src] = 0
    while head < tail:
        u = queue[head]
        head += 1
        for v in range(n):
            if adj[u, v] and dist[v] < 0:
                dist[v] = dist[u] + 1
                queue[tail] = v
                tail += 1
    return dist


def bfs_distances_args(n):
    a = _rng(n, 270).random((n, n)) < 0.25
    return (a | a.T, 0)


def dijkstra_dense(W, src):
    """Dijkstra on a dense weight matrix: a linear scan for the closest unfinished node."""
    n = W.shape[0]
    dist = np.full(n, np.inf)
    done = np.zeros(n, dtype=np.bool_)
    prev = -np.ones(n, dtype=np.int64)
    dist[src] = 0.0
    for _ in range(n):
        u = -1
        best = np.inf
        for v in range(n):
            if not done[v] and dist[v] < best:
                best = dist[v]
                u = v
        if u == -1:
            break
        done[u] = True
        for v in range(n):
            w = W[u, v]
            if w > 0 and dist[u] + w < dist[v]:
                dist[v] = dist[u] + w
                prev[v] = u
    return dist, prev


def dijkstra_dense_args(n):
    return (_rng(n, 271).random((n, n)) * 3.0 + 0.1, 0)


def dijkstra_dense_loss(W, src):
    d, _ = dijkstra_dense(W, src)
    return np.sum(d)


def _find_root(parent, i):
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


def union_find_components(edges, n):
    """Union-find with path halving in a helper that writes into its argument."""
    parent = np.arange(n)
    for e in range(edges.shape[0]):
        ra = _find_root(parent, edges[e, 0])
        rb = _find_root(parent, edges[e, 1])
        if ra != rb:
            parent[ra] = rb
    roots = 0
    for i in range(n):
        if _find_root(parent, i) == i:
            roots += 1
    return roots, parent


def union_find_components_args(n):
    return (_rng(n, 272).integers(0, n, (n // 2, 2)), n)


def floyd_warshall_loops(W):
    """All-pairs shortest paths, three loops, with the next-hop matrix for path recovery."""
    n = W.shape[0]
    D = W.copy()
    nxt = np.empty((n, n), dtype=np.int64)
    for i in range(n):
        for j in range(n):
            nxt[i, j] = j
    for k in range(n):
        for i in range(n):
            for j in range(n):
                if D[i, k] + D[k, j] < D[i, j]:
                    D[i, j] = D[i, k] + D[k, j]
                    nxt[i, j] = nxt[i, k]
    return D, nxt


def floyd_warshall_loops_args(n):
    return (_rng(n, 273).random((n, n)) * 5.0 + 0.05,)


def floyd_warshall_loops_loss(W):
    D, _ = floyd_warshall_loops(W)
    return np.sum(D)


# ------------------------------------------------ dynamic programming (session python) ---------

def edit_distance(a, b):
    """Levenshtein distance: an int table, min() of three, a conditional cost."""
    m, n = len(a), len(b)
    D = np.zeros((m + 1, n + 1), dtype=np.int64)
    for i in range(m + 1):
        D[i, 0] = i
    for j in range(n + 1):
        D[0, j] = j
    for i in range(1, m + 1):
        for j in range(1, n + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            D[i, j] = min(D[i - 1, j] + 1, D[i, j - 1] + 1, D[i - 1, j - 1] + cost)
    return D[m, n]


def edit_distance_args(n):
    r = _rng(n, 280)
    return (r.integers(0, 4, n), r.integers(0, 4, n + 3))


def lcs_backtrack(a, b):
    """Longest common subsequence: the table, then a while loop walking back into a list."""
    m, n = len(a), len(b)
    L = np.zeros((m + 1, n + 1), dtype=np.int64)
    for i in range(m):
        for j in range(n):
            if a[i] == b[j]:
                L[i + 1, j + 1] = L[i, j] + 1
            else:
                L[i + 1, j + 1] = max(L[i, j + 1], L[i + 1, j])
    out = []
    i, j = m, n
    while i > 0 and j > 0:
        if a[i - 1] == b[j - 1]:
            out.append(a[i - 1])
            i -= 1
            j -= 1
        elif L[i - 1, j] >= L[i, j - 1]:
            i -= 1
        else:
            j -= 1
    out.reverse()
    return L[m, n], np.array(out, dtype=a.dtype)


def lcs_backtrack_args(n):
    r = _rng(n, 281)
    return (r.integers(0, 5, n), r.integers(0, 5, n + 2))


def knapsack_01(weights, values, capacity):
    """0/1 knapsack over a 1-D table, the inner range running backwards to an element."""
    best = np.zeros(capacity + 1)
    for w, v in zip(weights, values):
        for c in range(capacity, w - 1, -1):
            cand = best[c - w] + v
            if cand > best[c]:
                best[c] = cand
    return best[capacity]


def knapsack_01_args(n):
    r = _rng(n, 282)
    return (r.integers(1, 10, n), r.random(n) * 10.0, 3 * n)


def matrix_chain_order(dims):
    """Matrix-chain multiplication cost: a table filled by chain length, inf as the start."""
    n = len(dims) - 1
    M = np.zeros((n, n))
    split = np.zeros((n, n), dtype=np.int64)
    for length in range(2, n + 1):
        for i in range(n - length + 1):
            j = i + length - 1
            M[i, j] = math.inf
            for k in range(i, j):
                cost = M[i, k] + M[k + 1, j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost < M[i, j]:
                    M[i, j] = cost
                    split[i, j] = k
    return M[0, n - 1], split


def matrix_chain_order_args(n):
    return (_rng(n, 283).integers(2, 30, n + 1),)


# -------------------------------------------- sorting and searching (session python) ----------

def insertion_sort(x):
    """Insertion sort on a copy: `j >= 0 and a[j] > key` guards the index, a saved element."""
    a = x.copy()
    for i in range(1, len(a)):
        key = a[i]
        j = i - 1
        while j >= 0 and a[j] > key:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = key
    return a


def insertion_sort_args(n):
    return (_rng(n, 290).standard_normal(n),)


def insertion_sort_loss(x):
    return np.sum(insertion_sort(x) * np.arange(x.shape[0]))


def searchsorted_manual(sorted_x, queries):
    """Binary search per query: lo, hi = 0, len(...) and (lo + hi) // 2."""
    out = np.empty(len(queries), dtype=np.int64)
    for q in range(len(queries)):
        lo, hi = 0, len(sorted_x)
        while lo < hi:
            mid = (lo + hi) // 2
            if sorted_x[mid] < queries[q]:
                lo = mid + 1
            else:
                hi = mid
        out[q] = lo
    return out


def searchsorted_manual_args(n):
    r = _rng(n, 291)
    return (np.sort(r.standard_normal(n)), r.standard_normal(n + 3) * 1.5)


def quickselect(x, k):
    """Lomuto partitions with tuple swaps of elements and a return from inside the loop."""
    a = x.copy()
    lo, hi = 0, len(a) - 1
    while lo < hi:
        pivot = a[hi]
        i = lo
        for j in range(lo, hi):
            if a[j] < pivot:
                a[i], a[j] = a[j], a[i]
                i += 1
        a[i], a[hi] = a[hi], a[i]
        if i == k:
            return a[i]
        elif i < k:
            lo = i + 1
        else:
            hi = i - 1
    return a[lo]


def quickselect_args(n):
    return (_rng(n, 292).standard_normal(n), n // 2)


def quickselect_loss(x, k):
    return quickselect(x, k) ** 2


def merge_sorted(a, b):
    """The merge step: i = j = k = 0, three while loops."""
    out = np.empty(len(a) + len(b))
    i = j = k = 0
    while i < len(a) and j < len(b):
        if a[i] <= b[j]:
            out[k] = a[i]
            i += 1
        else:
            out[k] = b[j]
            j += 1
        k += 1
    while i < len(a):
        out[k] = a[i]
        i += 1
        k += 1
    while j < len(b):
        out[k] = b[j]
        j += 1
        k += 1
    return out


def merge_sorted_args(n):
    r = _rng(n, 293)
    return (np.sort(r.standard_normal(n)), np.sort(r.standard_normal(n + 2)))


def merge_sorted_loss(a, b):
    return np.sum(merge_sorted(a, b) * np.arange(2 * a.shape[0] + 2))


# ------------------------------------------------ sparse, particles, ODEs (session python) ----

def csr_from_dense(A, tol):
    """A CSR matrix built with lists, then its product with a vector by index ranges."""
    data, indices, indptr = [], [], [0]
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            if abs(A[i, j]) > tol:
                data.append(A[i, j])
                indices.append(j)
        indptr.append(len(data))
    return np.array(data), np.array(indices), np.array(indptr)


def csr_from_dense_args(n):
    return (_rng(n, 300).standard_normal((n, n + 1)), 0.8)


def csr_matvec(data, indices, indptr, x):
    """y = A @ x for A in CSR form: a range bounded by two elements of indptr."""
    n = len(indptr) - 1
    y = np.zeros(n)
    for row in range(n):
        for k in range(indptr[row], indptr[row + 1]):
            y[row] += data[k] * x[indices[k]]
    return y


def csr_matvec_args(n):
    r = _rng(n, 301)
    A = r.standard_normal((n, n)) * (r.random((n, n)) < 0.3)
    rows, cols = np.nonzero(A)
    indptr = np.searchsorted(rows, np.arange(n + 1))
    return (A[rows, cols], cols.astype(np.int64), indptr.astype(np.int64),
            r.standard_normal(n))


def csr_matvec_loss(data, indices, indptr, x):
    return np.sum(np.tanh(csr_matvec(data, indices, indptr, x)))


def pic_cic_deposit(pos, weights, ngrid, length):
    """Particle-in-cell: cloud-in-cell deposit on a periodic grid (int(math.floor()), %),
    then the field from a cumulative sum, means removed."""
    rho = np.zeros(ngrid)
    dx = length / ngrid
    for p in range(pos.shape[0]):
        xg = pos[p] / dx
        i = int(math.floor(xg))
        f = xg - i
        rho[i % ngrid] += weights[p] * (1.0 - f)
        rho[(i + 1) % ngrid] += weights[p] * f
    rho /= dx
    rho -= rho.mean()
    E = np.cumsum(rho) * dx
    E -= E.mean()
    return rho, E


def pic_cic_deposit_args(n):
    r = _rng(n, 302)
    return (r.random(n) * 2.0, r.random(n) + 0.5, 8, 2.0)


def pic_cic_deposit_loss(pos, weights, ngrid, length):
    rho, E = pic_cic_deposit(pos, weights, ngrid, length)
    return np.sum(E ** 2) + np.sum(rho * np.arange(ngrid))


def pic_push(x, v, qm, ngrid, length, dt, steps):
    """Particle-in-cell push: gather the grid field at particles, leapfrog, periodic wrap."""
    dx = length / ngrid
    x = x.copy()
    v = v.copy()
    for s in range(steps):
        rho = np.zeros(ngrid)
        for p in range(len(x)):
            i = int(x[p] // dx) % ngrid
            rho[i] += 1.0
        rho = rho / len(x) * ngrid - 1.0
        E = np.cumsum(rho) * dx
        E -= E.mean()
        for p in range(len(x)):
            i = int(x[p] // dx) % ngrid
            v[p] += qm * E[i] * dt
            x[p] = (x[p] + v[p] * dt) % length
    return x, v


def pic_push_args(n):
    r = _rng(n, 303)
    return (r.random(n) * 4.0, r.standard_normal(n) * 0.1, -1.0, 8, 4.0, 0.05, 4)


def sir_euler(beta, gamma, y0, days, dt=0.1):
    """SIR epidemic by Euler steps: an array unpacked into three names, tuple rows written."""
    steps = int(days / dt)
    s, i, r = y0
    history = np.empty((steps + 1, 3))
    history[0] = (s, i, r)
    n = s + i + r
    for k in range(steps):
        new_inf = beta * s * i / n * dt
        new_rec = gamma * i * dt
        s, i, r = s - new_inf, i + new_inf - new_rec, r + new_rec
        history[k + 1] = s, i, r
    peak_day = np.argmax(history[:, 1]) * dt
    return history, peak_day


def sir_euler_args(n):
    return (0.3, 0.1, np.array([990.0, 10.0, 0.0]), float(n))


def sir_euler_loss(beta, gamma, y0, days):
    h, _ = sir_euler(beta, gamma, y0, days)
    return np.sum(h[:, 1]) / 1000.0


def _lotka_volterra(t, y, a=1.5, b=1.0, c=3.0, d=1.0):
    x, z = y[0], y[1]
    return np.array([a * x - b * x * z, -c * z + d * x * z])


def _rk4_step(f, t, y, h):
    k1 = f(t, y)
    k2 = f(t + h / 2, y + h / 2 * k1)
    k3 = f(t + h / 2, y + h / 2 * k2)
    k4 = f(t + h, y + h * k3)
    return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def rk4_user_rhs(y0, h, n):
    """RK4 with the right-hand side passed as a function to a step helper, states in a list."""
    t = 0.0
    y = y0.copy()
    traj = [y0.copy()]
    for _ in range(n):
        y = _rk4_step(_lotka_volterra, t, y, h)
        t += h
        traj.append(y)
    return t, np.array(traj)


def rk4_user_rhs_args(n):
    return (np.array([1.0, 0.8]), 0.02, n)


def rk4_user_rhs_loss(y0, h, n):
    t, tr = rk4_user_rhs(y0, h, n)
    return np.sum(tr[-1] ** 2)


def _decay_rhs(t, y):
    return -y * (1.0 + 0.5 * math.sin(t))


def heun_adaptive(y0, t_end, tol):
    """Heun-Euler pair with step-size control: a while loop on time, accepted/rejected counts."""
    t = 0.0
    h = 0.1
    y = y0.copy()
    nsteps = 0
    nrej = 0
    while t < t_end:
        if t + h > t_end:
            h = t_end - t
        k1 = _decay_rhs(t, y)
        k2 = _decay_rhs(t + h, y + h * k1)
        y_high = y + h * 0.5 * (k1 + k2)
        err = np.max(np.abs(y_high - (y + h * k1)))
        if err <= tol:
            t += h
            y = y_high
            nsteps += 1
        else:
            nrej += 1
        h = 0.9 * h * min(max(math.sqrt(tol / (err + 1e-16)), 0.2), 5.0)
    return y, nsteps, nrej


def heun_adaptive_args(n):
    return (_rng(n, 304).random(n) + 0.5, 2.0, 1e-4)


def heun_adaptive_loss(y0, t_end, tol):
    y, _, _ = heun_adaptive(y0, t_end, tol)
    return np.sum(y ** 2)


def gcd_pairs(a, b):
    """Euclid's algorithm per pair: `while y:` with a tuple assignment of two ints."""
    out = np.empty(len(a), dtype=a.dtype)
    for i in range(len(a)):
        x, y = a[i], b[i]
        while y:
            x, y = y, x % y
        out[i] = x
    return out


def gcd_pairs_args(n):
    r = _rng(n, 305)
    return (r.integers(1, 1000, n), r.integers(0, 1000, n))


def collatz_steps(n):
    """Collatz stopping times for 1..n-1: a while loop with // and a conditional update."""
    steps = np.zeros(n, dtype=np.int64)
    longest = 0
    arg = 1
    for start in range(1, n):
        k = start
        c = 0
        while k != 1:
            k = k // 2 if k % 2 == 0 else 3 * k + 1
            c += 1
        steps[start] = c
        if c > longest:
            longest, arg = c, start
    return steps, longest, arg


def collatz_steps_args(n):
    return (n,)


# ------------------------------------------------ Polybench / npbench styles (run-time lengths) --


def polybench_2mm(alpha, beta, A, B, C, D):
    """2mm: D := alpha * A @ B @ C + beta * D, written into D."""
    D[:] = alpha * A @ B @ C + beta * D


def polybench_2mm_args(n):
    r = _rng(n, 300)
    return (1.5, 1.2, r.random((n, n + 1)), r.random((n + 1, n + 2)), r.random((n + 2, n)),
            r.random((n, n)))


def polybench_2mm_loss(alpha, beta, A, B, C, D):
    D = D.copy()
    polybench_2mm(alpha, beta, A, B, C, D)
    return np.sum(D ** 2)


def polybench_3mm(A, B, C, D):
    """3mm: three products, the last of the first two."""
    E = A @ B
    F = C @ D
    return E @ F


def polybench_3mm_args(n):
    r = _rng(n, 301)
    return (r.random((n, n + 1)), r.random((n + 1, n - 1)), r.random((n - 1, n + 2)),
            r.random((n + 2, n)))


def polybench_3mm_loss(A, B, C, D):
    return np.sum(np.sin(polybench_3mm(A, B, C, D)))


def cholesky_slices(A):
    """Cholesky in place, the lower triangle, with dot products of row prefixes."""
    A[0, 0] = np.sqrt(A[0, 0])
    for i in range(1, A.shape[0]):
        for j in range(i):
            A[i, j] -= np.dot(A[i, :j], A[j, :j])
            A[i, j] /= A[j, j]
        A[i, i] -= np.dot(A[i, :i], A[i, :i])
        A[i, i] = np.sqrt(A[i, i])


def cholesky_slices_args(n):
    M = _rng(n, 302).random((n, n))
    return (M @ M.T + n * np.eye(n),)


def cholesky_slices_loss(A):
    L = A.copy()
    cholesky_slices(L)
    return np.sum(np.tril(L) ** 2)


def ludcmp(A, b):
    """LU decomposition (Doolittle, in place) then forward and back substitution."""
    n = A.shape[0]
    x = np.zeros_like(b)
    y = np.zeros_like(b)
    for i in range(n):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, n):
            A[i, j] -= A[i, :i] @ A[:i, j]
    for i in range(n):
        y[i] = b[i] - A[i, :i] @ y[:i]
    for i in range(n - 1, -1, -1):
        x[i] = (y[i] - A[i, i + 1:] @ x[i + 1:]) / A[i, i]
    return x, y


def ludcmp_args(n):
    r = _rng(n, 303)
    return (r.random((n, n)) + n * np.eye(n), r.random(n))


def ludcmp_loss(A, b):
    x, y = ludcmp(A.copy(), b)
    return np.sum(x ** 2) + np.sum(np.sin(y))


def nussinov(seq):
    """RNA folding (Nussinov): the best count of pairs of each substring, filled by diagonals
    of growing length; a split's score is the maximum of a run-time-length sum of two slices."""
    n = seq.shape[0]
    table = np.zeros((n, n), dtype=np.int64)
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            best = max(table[i + 1, j], table[i, j - 1])
            pair = 1 if seq[i] + seq[j] == 3 else 0
            if j - i > 1:
                best = max(best, table[i + 1, j - 1] + pair)
                best = max(best, np.max(table[i, i + 1:j] + table[i + 2:j + 1, j]))
            else:
                best = max(best, pair)
            table[i, j] = best
    return table


def nussinov_args(n):
    return (_rng(n, 304).integers(0, 4, n),)


def deriche(alpha, img):
    """Deriche edge detector: causal and anticausal recursive filters along rows then
    columns, each step a vector operation over a whole column or row."""
    k = (1.0 - np.exp(-alpha)) ** 2 / (1.0 + 2.0 * alpha * np.exp(-alpha) - np.exp(2.0 * alpha))
    a1 = a5 = k
    a2 = a6 = k * np.exp(-alpha) * (alpha - 1.0)
    a3 = a7 = k * np.exp(-alpha) * (alpha + 1.0)
    a4 = a8 = -k * np.exp(-2.0 * alpha)
    b1 = 2.0 ** (-alpha)
    b2 = -np.exp(-2.0 * alpha)
    c1 = c2 = 1.0
    h, w = img.shape
    y1 = np.empty_like(img)
    y2 = np.empty_like(img)
    y1[:, 0] = a1 * img[:, 0]
    y1[:, 1] = a1 * img[:, 1] + a2 * img[:, 0] + b1 * y1[:, 0]
    for j in range(2, w):
        y1[:, j] = a1 * img[:, j] + a2 * img[:, j - 1] + b1 * y1[:, j - 1] + b2 * y1[:, j - 2]
    y2[:, -1] = 0.0
    y2[:, -2] = a3 * img[:, -1]
    for j in range(w - 3, -1, -1):
        y2[:, j] = a3 * img[:, j + 1] + a4 * img[:, j + 2] + b1 * y2[:, j + 1] + b2 * y2[:, j + 2]
    t = c1 * (y1 + y2)
    y1[0, :] = a5 * t[0, :]
    y1[1, :] = a5 * t[1, :] + a6 * t[0, :] + b1 * y1[0, :]
    for i in range(2, h):
        y1[i, :] = a5 * t[i, :] + a6 * t[i - 1, :] + b1 * y1[i - 1, :] + b2 * y1[i - 2, :]
    y2[-1, :] = 0.0
    y2[-2, :] = a7 * t[-1, :]
    for i in range(h - 3, -1, -1):
        y2[i, :] = a7 * t[i + 1, :] + a8 * t[i + 2, :] + b1 * y2[i + 1, :] + b2 * y2[i + 2, :]
    return c2 * (y1 + y2)


def deriche_args(n):
    return (0.25, _rng(n, 305).random((n, n + 3)))


def deriche_loss(alpha, img):
    return np.sum(deriche(alpha, img) ** 2)


def fdtd_2d(TMAX, ex, ey, hz, fict):
    """FDTD-2D: the electric and magnetic fields updated from each other's differences."""
    for t in range(TMAX):
        ey[0, :] = fict[t]
        ey[1:, :] -= 0.5 * (hz[1:, :] - hz[:-1, :])
        ex[:, 1:] -= 0.5 * (hz[:, 1:] - hz[:, :-1])
        hz[:-1, :-1] -= 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])


def fdtd_2d_args(n):
    r = _rng(n, 306)
    return (4, r.random((n, n + 1)), r.random((n, n + 1)), r.random((n, n + 1)), r.random(4))


def fdtd_2d_loss(TMAX, ex, ey, hz, fict):
    ex, ey, hz = ex.copy(), ey.copy(), hz.copy()
    fdtd_2d(TMAX, ex, ey, hz, fict)
    return np.sum(hz ** 2) + np.sum(ex * ey)


def jacobi_1d(TSTEPS, A, B):
    """Jacobi-1D: two buffers, three-point averages back and forth."""
    for t in range(1, TSTEPS):
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])


def jacobi_1d_args(n):
    r = _rng(n, 307)
    return (5, r.random(n), r.random(n))


def jacobi_1d_loss(TSTEPS, A, B):
    A, B = A.copy(), B.copy()
    jacobi_1d(TSTEPS, A, B)
    return np.sum(A ** 2) + np.sum(np.cos(B))


def symm(alpha, beta, C, A, B):
    """SYMM: C := alpha * A @ B + beta * C with A symmetric, only its lower triangle read,
    a column update of run-time length per element."""
    for i in range(C.shape[0]):
        for j in range(C.shape[1]):
            C[:i, j] += alpha * B[i, j] * A[i, :i]
            temp2 = B[:i, j] @ A[i, :i]
            C[i, j] = beta * C[i, j] + alpha * B[i, j] * A[i, i] + alpha * temp2


def symm_args(n):
    r = _rng(n, 308)
    return (1.5, 1.2, r.random((n, n + 2)), r.random((n, n)), r.random((n, n + 2)))


def symm_loss(alpha, beta, C, A, B):
    C = C.copy()
    symm(alpha, beta, C, A, B)
    return np.sum(C ** 2)


def syr2k(alpha, beta, C, A, B):
    """SYR2K: the lower triangle of C := alpha * (A @ B.T + B @ A.T) + beta * C, row prefixes
    of run-time length."""
    for i in range(A.shape[0]):
        C[i, :i + 1] *= beta
        for k in range(A.shape[1]):
            C[i, :i + 1] += A[:i + 1, k] * alpha * B[i, k] + B[:i + 1, k] * alpha * A[i, k]


def syr2k_args(n):
    r = _rng(n, 309)
    return (1.5, 1.2, r.random((n, n)), r.random((n, n - 2)), r.random((n, n - 2)))


def syr2k_loss(alpha, beta, C, A, B):
    C = C.copy()
    syr2k(alpha, beta, C, A, B)
    return np.sum(np.sin(C))


def gemver(alpha, beta, A, u1, v1, u2, v2, w, x, y, z):
    """GEMVER: a rank-2 update of A by outer products, then two matrix-vector products."""
    A += np.outer(u1, v1) + np.outer(u2, v2)
    x += beta * y @ A + z
    w += alpha * A @ x


def gemver_args(n):
    r = _rng(n, 310)
    return (1.5, 1.2, r.random((n, n)), *[r.random(n) for _ in range(8)])


def gemver_loss(alpha, beta, A, u1, v1, u2, v2, w, x, y, z):
    A, w, x = A.copy(), w.copy(), x.copy()
    gemver(alpha, beta, A, u1, v1, u2, v2, w, x, y, z)
    return np.sum(w ** 2) + np.sum(np.sin(A))


def trmm_rows(alpha, A, B):
    """TRMM written with whole rows: row i of B gains the strictly lower part of column i of
    A times the rows below it (a vector @ matrix of run-time row count)."""
    for i in range(B.shape[0]):
        B[i, :] += A[i + 1:, i] @ B[i + 1:, :]
    B *= alpha


def trmm_rows_args(n):
    r = _rng(n, 311)
    return (1.5, r.random((n, n)), r.random((n, n + 1)))


def trmm_rows_loss(alpha, A, B):
    B = B.copy()
    trmm_rows(alpha, A, B)
    return np.sum(B ** 2)


def adi(TSTEPS, N, u):
    """ADI: alternating column and row sweeps, each a tridiagonal solve (Thomas) vectorized
    over the other axis, with a reversed back substitution."""
    DX = 1.0 / N
    DY = 1.0 / N
    DT = 1.0 / TSTEPS
    B1, B2 = 2.0, 1.0
    mul1 = B1 * DT / (DX * DX)
    mul2 = B2 * DT / (DY * DY)
    a = -mul1 / 2.0
    b = 1.0 + mul1
    c = a
    d = -mul2 / 2.0
    e = 1.0 + mul2
    f = d
    v = np.empty_like(u)
    p = np.empty_like(u)
    q = np.empty_like(u)
    for t in range(1, TSTEPS + 1):
        v[0, 1:N - 1] = 1.0
        p[1:N - 1, 0] = 0.0
        q[1:N - 1, 0] = v[0, 1:N - 1]
        for j in range(1, N - 1):
            p[1:N - 1, j] = -c / (a * p[1:N - 1, j - 1] + b)
            q[1:N - 1, j] = (-d * u[j, 0:N - 2] + (1.0 + 2.0 * d) * u[j, 1:N - 1]
                             - f * u[j, 2:N] - a * q[1:N - 1, j - 1]) / (a * p[1:N - 1, j - 1] + b)
        v[N - 1, 1:N - 1] = 1.0
        for j in range(N - 2, 0, -1):
            v[j, 1:N - 1] = p[1:N - 1, j] * v[j + 1, 1:N - 1] + q[1:N - 1, j]
        u[1:N - 1, 0] = 1.0
        p[1:N - 1, 0] = 0.0
        q[1:N - 1, 0] = u[1:N - 1, 0]
        for j in range(1, N - 1):
            p[1:N - 1, j] = -f / (d * p[1:N - 1, j - 1] + e)
            q[1:N - 1, j] = (-a * v[0:N - 2, j] + (1.0 + 2.0 * a) * v[1:N - 1, j]
                             - c * v[2:N, j] - d * q[1:N - 1, j - 1]) / (d * p[1:N - 1, j - 1] + e)
        u[1:N - 1, N - 1] = 1.0
        for j in range(N - 2, 0, -1):
            u[1:N - 1, j] = p[1:N - 1, j] * u[1:N - 1, j + 1] + q[1:N - 1, j]


def adi_args(n):
    return (3, n, _rng(n, 312).random((n, n)))


def adi_loss(TSTEPS, N, u):
    u = u.copy()
    adi(TSTEPS, N, u)
    return np.sum(u ** 2)


def durbin_flip(r):
    """Durbin's Levinson recursion: dot products with reversed prefixes, a prefix updated by
    its own reversal."""
    y = np.empty_like(r)
    alpha = -r[0]
    beta = 1.0
    y[0] = -r[0]
    for k in range(1, r.shape[0]):
        beta *= 1.0 - alpha * alpha
        alpha = -(r[k] + np.dot(np.flip(r[:k]), y[:k])) / beta
        y[:k] += alpha * np.flip(y[:k])
        y[k] = alpha
    return y


def durbin_flip_args(n):
    return (_rng(n, 313).random(n) * 0.3,)


def durbin_flip_loss(r):
    return np.sum(durbin_flip(r) ** 2)


def covariance_triangle(M, float_n, data):
    """Covariance, the upper triangle of each row a vector @ matrix of run-time width, written
    into a row and a column at once."""
    mean = np.mean(data, axis=0)
    data -= mean
    cov = np.zeros((M, M), dtype=data.dtype)
    for i in range(M):
        cov[i:M, i] = cov[i, i:M] = data[:, i] @ data[:, i:M] / (float_n - 1.0)
    return cov


def covariance_triangle_args(n):
    return (n, float(n + 3), _rng(n, 314).random((n + 3, n)))


def covariance_triangle_loss(M, float_n, data):
    return np.sum(np.sin(covariance_triangle(M, float_n, data.copy())))


def correlation_triangle(M, float_n, data):
    """Correlation: standardized columns, then the strict upper triangle as in covariance."""
    mean = np.mean(data, axis=0)
    stddev = np.std(data, axis=0)
    stddev[stddev <= 0.1] = 1.0
    data -= mean
    data /= np.sqrt(float_n) * stddev
    corr = np.eye(M, dtype=data.dtype)
    for i in range(M - 1):
        corr[i + 1:M, i] = corr[i, i + 1:M] = data[:, i] @ data[:, i + 1:M]
    return corr


def correlation_triangle_args(n):
    return (n, float(n + 4), _rng(n, 315).random((n + 4, n)))


def correlation_triangle_loss(M, float_n, data):
    return np.sum(correlation_triangle(M, float_n, data.copy()) ** 2)


def doitgen_stack(NR, NQ, NP, A, C4):
    """doitgen: each slab of A times C4, through a 3-D matmul of (NQ, 1, NP) matrices."""
    for r in range(NR):
        A[r, :, :] = np.reshape(np.reshape(A[r], (NQ, 1, NP)) @ C4, (NQ, NP))


def doitgen_stack_args(n):
    r = _rng(n, 316)
    return (n - 1, n, n + 1, r.random((n - 1, n, n + 1)), r.random((n + 1, n + 1)))


def doitgen_stack_loss(NR, NQ, NP, A, C4):
    A = A.copy()
    doitgen_stack(NR, NQ, NP, A, C4)
    return np.sum(A ** 2)


def cavity_flow(nt, nit, u, v, dt, dx, dy, p, rho, nu):
    """Lid-driven cavity (the CFD Python step): pressure Poisson iterations from the
    velocity's source term, then the momentum update, boundaries set by slices."""
    for n in range(nt):
        un = u.copy()
        vn = v.copy()
        b = np.zeros_like(p)
        b[1:-1, 1:-1] = rho * (1.0 / dt * ((u[1:-1, 2:] - u[1:-1, 0:-2]) / (2 * dx)
                                           + (v[2:, 1:-1] - v[0:-2, 1:-1]) / (2 * dy))
                               - ((u[1:-1, 2:] - u[1:-1, 0:-2]) / (2 * dx)) ** 2
                               - 2 * ((u[2:, 1:-1] - u[0:-2, 1:-1]) / (2 * dy)
                                      * (v[1:-1, 2:] - v[1:-1, 0:-2]) / (2 * dx))
                               - ((v[2:, 1:-1] - v[0:-2, 1:-1]) / (2 * dy)) ** 2)
        for q in range(nit):
            pn = p.copy()
            p[1:-1, 1:-1] = (((pn[1:-1, 2:] + pn[1:-1, 0:-2]) * dy ** 2
                              + (pn[2:, 1:-1] + pn[0:-2, 1:-1]) * dx ** 2)
                             / (2 * (dx ** 2 + dy ** 2))
                             - dx ** 2 * dy ** 2 / (2 * (dx ** 2 + dy ** 2)) * b[1:-1, 1:-1])
            p[:, -1] = p[:, -2]
            p[0, :] = p[1, :]
            p[:, 0] = p[:, 1]
            p[-1, :] = 0.0
        u[1:-1, 1:-1] = (un[1:-1, 1:-1] - un[1:-1, 1:-1] * dt / dx * (un[1:-1, 1:-1] - un[1:-1, 0:-2])
                         - vn[1:-1, 1:-1] * dt / dy * (un[1:-1, 1:-1] - un[0:-2, 1:-1])
                         - dt / (2 * rho * dx) * (p[1:-1, 2:] - p[1:-1, 0:-2])
                         + nu * (dt / dx ** 2 * (un[1:-1, 2:] - 2 * un[1:-1, 1:-1] + un[1:-1, 0:-2])
                                 + dt / dy ** 2 * (un[2:, 1:-1] - 2 * un[1:-1, 1:-1] + un[0:-2, 1:-1])))
        v[1:-1, 1:-1] = (vn[1:-1, 1:-1] - un[1:-1, 1:-1] * dt / dx * (vn[1:-1, 1:-1] - vn[1:-1, 0:-2])
                         - vn[1:-1, 1:-1] * dt / dy * (vn[1:-1, 1:-1] - vn[0:-2, 1:-1])
                         - dt / (2 * rho * dy) * (p[2:, 1:-1] - p[0:-2, 1:-1])
                         + nu * (dt / dx ** 2 * (vn[1:-1, 2:] - 2 * vn[1:-1, 1:-1] + vn[1:-1, 0:-2])
                                 + dt / dy ** 2 * (vn[2:, 1:-1] - 2 * vn[1:-1, 1:-1] + vn[0:-2, 1:-1])))
        u[0, :] = 0.0
        u[:, 0] = 0.0
        u[:, -1] = 0.0
        u[-1, :] = 1.0
        v[0, :] = 0.0
        v[-1, :] = 0.0
        v[:, 0] = 0.0
        v[:, -1] = 0.0


def cavity_flow_args(n):
    r = _rng(n, 317)
    return (3, 5, r.random((n, n)) * 0.1, r.random((n, n)) * 0.1, 0.001, 2.0 / (n - 1),
            2.0 / (n - 1), r.random((n, n)) * 0.1, 1.0, 0.1)


def cavity_flow_loss(nt, nit, u, v, dt, dx, dy, p, rho, nu):
    u, v, p = u.copy(), v.copy(), p.copy()
    cavity_flow(nt, nit, u, v, dt, dx, dy, p, rho, nu)
    return np.sum(u ** 2) + np.sum(v ** 2) + np.sum(p)


def channel_flow_step(u, v, p, dt, dx, dy, rho, nu, F):
    """Channel flow: periodic in x (the wrapped neighbours written out with np.roll), a
    pressure Poisson step, then u and v updated; walls at the top and bottom."""
    un = u.copy()
    vn = v.copy()
    b = rho * (1.0 / dt * ((np.roll(u, -1, axis=1) - np.roll(u, 1, axis=1)) / (2 * dx)
                          + (np.roll(v, -1, axis=0) - np.roll(v, 1, axis=0)) / (2 * dy))
               - ((np.roll(u, -1, axis=1) - np.roll(u, 1, axis=1)) / (2 * dx)) ** 2)
    pn = p.copy()
    p[1:-1, :] = (((np.roll(pn, -1, axis=1) + np.roll(pn, 1, axis=1))[1:-1, :] * dy ** 2
                   + (pn[2:, :] + pn[:-2, :]) * dx ** 2) / (2 * (dx ** 2 + dy ** 2))
                  - dx ** 2 * dy ** 2 / (2 * (dx ** 2 + dy ** 2)) * b[1:-1, :])
    p[0, :] = p[1, :]
    p[-1, :] = p[-2, :]
    u[1:-1, :] = (un[1:-1, :] - un[1:-1, :] * dt / dx * (un[1:-1, :] - np.roll(un, 1, axis=1)[1:-1, :])
                  - vn[1:-1, :] * dt / dy * (un[1:-1, :] - un[:-2, :])
                  - dt / (2 * rho * dx) * (np.roll(p, -1, axis=1) - np.roll(p, 1, axis=1))[1:-1, :]
                  + nu * dt / dy ** 2 * (un[2:, :] - 2 * un[1:-1, :] + un[:-2, :]) + F * dt)
    v[1:-1, :] = (vn[1:-1, :] - un[1:-1, :] * dt / dx * (vn[1:-1, :] - np.roll(vn, 1, axis=1)[1:-1, :])
                  - dt / (2 * rho * dy) * (p[2:, :] - p[:-2, :])
                  + nu * dt / dy ** 2 * (vn[2:, :] - 2 * vn[1:-1, :] + vn[:-2, :]))
    u[0, :] = 0.0
    u[-1, :] = 0.0
    v[0, :] = 0.0
    v[-1, :] = 0.0
    return u, v, p


def channel_flow_step_args(n):
    r = _rng(n, 318)
    return (r.random((n, n + 2)) * 0.1, r.random((n, n + 2)) * 0.1, r.random((n, n + 2)) * 0.1,
            0.001, 2.0 / n, 2.0 / n, 1.0, 0.1, 1.0)


def channel_flow_step_loss(u, v, p, dt, dx, dy, rho, nu, F):
    u, v, p = channel_flow_step(u.copy(), v.copy(), p.copy(), dt, dx, dy, rho, nu, F)
    return np.sum(u ** 2) + np.sum(v * p)


def vadv_thomas(utens_stage, u_stage, wcon, u_pos, utens, dtr_stage):
    """Vertical advection (the stencil benchmark's scheme): a tridiagonal system along the
    vertical axis for every (i, j) column at once, forward sweep then back substitution."""
    BET_M, BET_P = 0.5, 0.5
    I, J, K = utens_stage.shape
    ccol = np.empty((I, J, K))
    dcol = np.empty((I, J, K))
    data_col = np.empty((I, J))
    gcv = 0.25 * (wcon[1:I + 1, :, 1] + wcon[:I, :, 1])
    cs = gcv * BET_M
    ccol[:, :, 0] = gcv * BET_P
    bcol = dtr_stage - ccol[:, :, 0]
    correction = -cs * (u_stage[:, :, 1] - u_stage[:, :, 0])
    dcol[:, :, 0] = (dtr_stage * u_pos[:, :, 0] + utens[:, :, 0] + utens_stage[:, :, 0]
                     + correction)
    divided = 1.0 / bcol
    ccol[:, :, 0] = ccol[:, :, 0] * divided
    dcol[:, :, 0] = dcol[:, :, 0] * divided
    for k in range(1, K - 1):
        gav = -0.25 * (wcon[1:I + 1, :, k] + wcon[:I, :, k])
        gcv = 0.25 * (wcon[1:I + 1, :, k + 1] + wcon[:I, :, k + 1])
        as_ = gav * BET_M
        cs = gcv * BET_M
        acol = gav * BET_P
        ccol[:, :, k] = gcv * BET_P
        bcol = dtr_stage - acol - ccol[:, :, k]
        correction = (-as_ * (u_stage[:, :, k - 1] - u_stage[:, :, k])
                      - cs * (u_stage[:, :, k + 1] - u_stage[:, :, k]))
        dcol[:, :, k] = (dtr_stage * u_pos[:, :, k] + utens[:, :, k] + utens_stage[:, :, k]
                         + correction)
        divided = 1.0 / (bcol - ccol[:, :, k - 1] * acol)
        ccol[:, :, k] = ccol[:, :, k] * divided
        dcol[:, :, k] = (dcol[:, :, k] - dcol[:, :, k - 1] * acol) * divided
    k = K - 1
    gav = -0.25 * (wcon[1:I + 1, :, k] + wcon[:I, :, k])
    as_ = gav * BET_M
    acol = gav * BET_P
    bcol = dtr_stage - acol
    correction = -as_ * (u_stage[:, :, k - 1] - u_stage[:, :, k])
    dcol[:, :, k] = (dtr_stage * u_pos[:, :, k] + utens[:, :, k] + utens_stage[:, :, k]
                     + correction)
    divided = 1.0 / (bcol - ccol[:, :, k - 1] * acol)
    dcol[:, :, k] = (dcol[:, :, k] - dcol[:, :, k - 1] * acol) * divided
    data_col[:] = dcol[:, :, k]
    utens_stage[:, :, k] = dtr_stage * (data_col - u_pos[:, :, k])
    for k in range(K - 2, -1, -1):
        data_col[:] = dcol[:, :, k] - ccol[:, :, k] * data_col
        utens_stage[:, :, k] = dtr_stage * (data_col - u_pos[:, :, k])


def vadv_thomas_args(n):
    r = _rng(n, 319)
    return (r.random((n, n + 1, 6)), r.random((n, n + 1, 6)), r.random((n + 1, n + 1, 6)),
            r.random((n, n + 1, 6)), r.random((n, n + 1, 6)), 3.0)


def vadv_thomas_loss(utens_stage, u_stage, wcon, u_pos, utens, dtr_stage):
    out = utens_stage.copy()
    vadv_thomas(out, u_stage, wcon, u_pos, utens, dtr_stage)
    return np.sum(out ** 2)


def conv2d_bias(x, weights, bias):
    """conv2d (valid, NHWC, C_out filters) by windows of fixed size at run-time positions,
    each summed against the filters over three axes, plus a bias."""
    K = weights.shape[0]
    H_out = x.shape[1] - K + 1
    W_out = x.shape[2] - K + 1
    out = np.empty((x.shape[0], H_out, W_out, weights.shape[3]), dtype=x.dtype)
    for i in range(H_out):
        for j in range(W_out):
            out[:, i, j, :] = np.sum(x[:, i:i + K, j:j + K, :, np.newaxis]
                                     * weights[np.newaxis, :, :, :], axis=(1, 2, 3))
    return out + bias


def conv2d_bias_args(n):
    r = _rng(n, 320)
    return (r.random((2, n, n + 1, 3)), r.random((3, 3, 3, 4)), r.random(4))


def conv2d_bias_loss(x, weights, bias):
    return np.sum(np.sin(conv2d_bias(x, weights, bias)))


def _conv_valid(x, w):
    K = w.shape[0]
    H = x.shape[1] - K + 1
    W = x.shape[2] - K + 1
    out = np.zeros((x.shape[0], H, W, w.shape[3]))
    for i in range(H):
        for j in range(W):
            out[:, i, j, :] = np.sum(x[:, i:i + K, j:j + K, :, None] * w[None], axis=(1, 2, 3))
    return out


def _max_pool2(x):
    H, W = x.shape[1] // 2, x.shape[2] // 2
    out = np.empty((x.shape[0], H, W, x.shape[3]))
    for i in range(H):
        for j in range(W):
            out[:, i, j, :] = np.max(x[:, 2 * i:2 * i + 2, 2 * j:2 * j + 2, :], axis=(1, 2))
    return out


def lenet_like(x, w1, b1, w2, b2, fc_w, fc_b):
    """A LeNet-like forward pass: conv, relu, 2x2 max pool, conv, relu, pool, flatten, dense."""
    h = np.maximum(_conv_valid(x, w1) + b1, 0.0)
    h = _max_pool2(h)
    h = np.maximum(_conv_valid(h, w2) + b2, 0.0)
    h = _max_pool2(h)
    flat = h.reshape(h.shape[0], -1)
    return flat @ fc_w + fc_b


def lenet_like_args(n):
    r = _rng(n, 321)
    return (r.random((2, n, n, 1)), r.standard_normal((3, 3, 1, 3)) * 0.5, r.random(3) * 0.1,
            r.standard_normal((3, 3, 3, 4)) * 0.5, r.random(4) * 0.1,
            r.standard_normal((((n - 2) // 2 - 2) // 2 * (((n - 2) // 2 - 2) // 2) * 4, 5)) * 0.3,
            r.random(5) * 0.1)


def lenet_like_loss(x, w1, b1, w2, b2, fc_w, fc_b):
    return np.sum(lenet_like(x, w1, b1, w2, b2, fc_w, fc_b) ** 2)


def mlp_forward(x, w1, b1, w2, b2, w3, b3):
    """An MLP: two relu layers and a softmax, the softmax with keepdims reductions."""
    h = np.maximum(x @ w1 + b1, 0)
    h = np.maximum(h @ w2 + b2, 0)
    z = h @ w3 + b3
    z = z - np.max(z, axis=-1, keepdims=True)
    e = np.exp(z)
    return e / np.sum(e, axis=-1, keepdims=True)


def mlp_forward_args(n):
    r = _rng(n, 322)
    return (r.standard_normal((n, 6)), r.standard_normal((6, 8)) * 0.4, r.random(8) * 0.1,
            r.standard_normal((8, 7)) * 0.4, r.random(7) * 0.1, r.standard_normal((7, 3)) * 0.4,
            r.random(3) * 0.1)


def mlp_forward_loss(x, w1, b1, w2, b2, w3, b3):
    return np.sum(np.log(mlp_forward(x, w1, b1, w2, b2, w3, b3)[:, 0]))


def softmax_axis(x):
    """softmax along the last axis of a 3-D array."""
    m = np.max(x, axis=-1, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=-1, keepdims=True)


def softmax_axis_args(n):
    return (_rng(n, 323).standard_normal((2, n, 5)),)


def softmax_axis_loss(x):
    return np.sum(softmax_axis(x) * np.arange(5.0))


def _conv3x3_same(x, w):
    """3x3 convolution with zero padding (NHWC), the padding written into a larger array."""
    H, W = x.shape[1], x.shape[2]
    padded = np.zeros((x.shape[0], H + 2, W + 2, x.shape[3]))
    padded[:, 1:H + 1, 1:W + 1, :] = x
    out = np.zeros((x.shape[0], H, W, w.shape[3]))
    for i in range(3):
        for j in range(3):
            out += padded[:, i:i + H, j:j + W, :] @ w[i, j]
    return out


def resnet_block(x, w1, w2, scale1, scale2):
    """A ResNet basic block: conv, scale, relu, conv, scale, the input added back, relu."""
    h = np.maximum(_conv3x3_same(x, w1) * scale1, 0.0)
    h = _conv3x3_same(h, w2) * scale2
    return np.maximum(h + x, 0.0)


def resnet_block_args(n):
    r = _rng(n, 324)
    return (r.standard_normal((2, n, n, 3)), r.standard_normal((3, 3, 3, 3)) * 0.3,
            r.standard_normal((3, 3, 3, 3)) * 0.3, r.random(3) + 0.5, r.random(3) + 0.5)


def resnet_block_loss(x, w1, w2, scale1, scale2):
    return np.sum(resnet_block(x, w1, w2, scale1, scale2) ** 2)


def fft_radix2(x):
    """An iterative radix-2 FFT in loops: bit-reversal permutation, then butterflies whose
    halves are slices of run-time length."""
    n = x.shape[0]
    a = x.astype(np.complex128)
    j = 0
    for i in range(1, n):
        bit = n >> 1
        while j & bit:
            j ^= bit
            bit >>= 1
        j ^= bit
        if i < j:
            t = a[i]
            a[i] = a[j]
            a[j] = t
    size = 2
    while size <= n:
        half = size // 2
        w = np.exp(-2j * np.pi * np.arange(half) / size)
        for start in range(0, n, size):
            even = a[start:start + half].copy()
            odd = a[start + half:start + size] * w
            a[start:start + half] = even + odd
            a[start + half:start + size] = even - odd
        size *= 2
    return a


def fft_radix2_args(n):
    return (_rng(n, 325).standard_normal(n),)


def fft_radix2_loss(x):
    return np.sum(np.abs(fft_radix2(x)) ** 2 * np.linspace(0.5, 1.5, x.shape[0]))


def compute_clip(array_1, array_2, a, b, c):
    """npbench's compute: integer arrays clipped, scaled and added."""
    return np.clip(array_1, 2, 10) * a + array_2 * b + c


def compute_clip_args(n):
    r = _rng(n, 326)
    return (r.integers(0, 20, (n, n + 1)), r.integers(-5, 5, (n, n + 1)), 4, 3, 9)


def go_fast_trace(a):
    """go_fast: tanh of the diagonal summed in a loop, added to the whole array."""
    trace = 0.0
    for i in range(a.shape[0]):
        trace += np.tanh(a[i, i])
    return a + trace


def go_fast_trace_args(n):
    return (_rng(n, 327).random((n, n)),)


def go_fast_trace_loss(a):
    return np.sum(go_fast_trace(a) ** 2)


def contour_integral(NR, NM, slab_per_bc, Ham, int_pts, Y):
    """A contour integral of the resolvent: at each quadrature point z, (z I - H)^-1 Y by a
    solve, weighted and summed into two moments."""
    P0 = np.zeros((NR, NM), dtype=np.complex128)
    P1 = np.zeros((NR, NM), dtype=np.complex128)
    for idx in range(int_pts.shape[0]):
        z = int_pts[idx]
        Tz = z * np.eye(NR) - Ham[0]
        for s in range(1, slab_per_bc + 1):
            Tz = Tz - Ham[s] * z ** (-s) - Ham[s].T * z ** s
        X = np.linalg.solve(Tz, Y)
        if np.abs(z) < 1.0:
            X = -X
        P0 += X / z
        P1 += X
    return P0, P1


def contour_integral_args(n):
    r = _rng(n, 328)
    Ham = (r.random((3, n, n)) + 1j * r.random((3, n, n))) * 0.1
    t = np.linspace(0.1, 2 * np.pi, 5)
    return (n, 2, 2, Ham, 1.5 * np.exp(1j * t), r.random((n, 2)) + 1j * r.random((n, 2)))


def gemm_update(alpha, beta, C, A, B):
    """GEMM written as Polybench's loop: each row scaled, then rank-1 updates of it."""
    for i in range(C.shape[0]):
        C[i, :] *= beta
        for k in range(A.shape[1]):
            C[i, :] += alpha * A[i, k] * B[k, :]


def gemm_update_args(n):
    r = _rng(n, 329)
    return (1.5, 1.2, r.random((n, n + 1)), r.random((n, n - 1)), r.random((n - 1, n + 1)))


def gemm_update_loss(alpha, beta, C, A, B):
    C = C.copy()
    gemm_update(alpha, beta, C, A, B)
    return np.sum(C ** 2)


def trisolv_rows(L, b):
    """Forward substitution with a dot product of each row's prefix."""
    x = np.zeros_like(b)
    for i in range(b.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
    return x


def trisolv_rows_args(n):
    r = _rng(n, 330)
    return (np.tril(r.random((n, n))) + n * np.eye(n), r.random(n))


def trisolv_rows_loss(L, b):
    return np.sum(trisolv_rows(L, b) ** 2)


def gramschmidt_cols(A):
    """Modified Gram-Schmidt on the columns: each column normalized, then removed from the
    columns after it by one vector @ matrix of run-time width and an outer product."""
    A = A.copy()
    m, n = A.shape
    Q = np.zeros_like(A)
    R = np.zeros((n, n))
    for k in range(n):
        R[k, k] = np.sqrt(A[:, k] @ A[:, k])
        Q[:, k] = A[:, k] / R[k, k]
        R[k, k + 1:] = Q[:, k] @ A[:, k + 1:]
        A[:, k + 1:] -= np.outer(Q[:, k], R[k, k + 1:])
    return Q, R


def gramschmidt_cols_args(n):
    return (_rng(n, 331).random((n + 2, n)) + np.eye(n + 2, n),)


def gramschmidt_cols_loss(A):
    Q, R = gramschmidt_cols(A)
    return np.sum(np.sin(Q)) + np.sum(R ** 2)


def seidel_rows(TSTEPS, A):
    """Seidel-2D with the row sums vectorized and the in-row dependence in a loop."""
    N = A.shape[0]
    for t in range(TSTEPS):
        for i in range(1, N - 1):
            A[i, 1:-1] += (A[i - 1, :-2] + A[i - 1, 1:-1] + A[i - 1, 2:] + A[i, 2:]
                           + A[i + 1, :-2] + A[i + 1, 1:-1] + A[i + 1, 2:])
            for j in range(1, N - 1):
                A[i, j] += A[i, j - 1]
                A[i, j] /= 9.0


def seidel_rows_args(n):
    return (2, _rng(n, 332).random((n, n)))


def seidel_rows_loss(TSTEPS, A):
    A = A.copy()
    seidel_rows(TSTEPS, A)
    return np.sum(A ** 2)


# ------------------------------------------------------------------------ registry ----------

_G = globals()


def _k(fn, size, bench_size, grad=False, wrt=0):
    name = fn.__name__
    return Kernel(fn, _G[name + "_args"], size, bench_size,
                  loss=_G[name + "_loss"] if grad else None, wrt=wrt)


KERNELS = [
    # stencils on views
    _k(jacobi_slices, 6, 400, grad=True),
    _k(jacobi_loops, 5, 200, grad=True),
    _k(diffuse_inplace, 5, 400, grad=True),
    _k(heat_swap, 6, 400),
    _k(laplace_residual, 6, 1000, grad=True),
    _k(laplacian_roll, 5, 600, grad=True),
    _k(local_view_base_write, 1, 1),
    _k(smooth_inplace, 8, 200000, grad=True),
    # particles and waves
    _k(nbody_loops, 5, 300, grad=True),
    _k(nbody_broadcast, 6, 300),
    _k(nbody_energy_leapfrog, 4, 150, grad=True),
    _k(leapfrog_inplace, 6, 100000, grad=True),
    _k(wave_1d_slices, 12, 200000, grad=True),
    _k(wave_1d_loops, 10, 50000, grad=True),
    # image filters
    _k(box_blur_loops, 6, 500, grad=True),
    _k(box_blur_slices, 6, 800, grad=True),
    _k(sobel_magnitude, 6, 800, grad=True),
    _k(median3_rows, 6, 800),
    _k(median3_stack_sort, 6, 300),
    _k(threshold_masks, 7, 800),
    _k(convolve_1d, 12, 500000, grad=True),
    # pairwise distances
    _k(pdist_loops, 5, 400, grad=True),
    _k(pdist_broadcast, 5, 400, grad=True),
    _k(pdist_gram, 4, 600, grad=True),
    _k(neighbours_within, 10, 400),
    # statistics
    _k(standardize_columns, 6, 100000, grad=True),
    _k(row_var_and_cumsum, 5, 100000, grad=True),
    _k(histogram_counts, 50, 1000000),
    _k(weighted_average_cols, 6, 100000, grad=True),
    _k(moving_average_cumsum, 10, 1000000, grad=True),
    _k(covariance_matrix, 6, 100000, grad=True),
    _k(outlier_indices, 40, 1000000),
    # recurrences
    _k(fibonacci_mod, 30, 1000000),
    _k(weighted_fibonacci, 8, 1000000, grad=True),
    _k(iir_biquad, 10, 1000000, grad=True),
    _k(cumulative_max, 20, 1000000),
    _k(ewma_int_start, 10, 1000000, grad=True),
    _k(logistic_orbit, 50, 1000000),
    # Monte Carlo
    _k(mc_pi, 1000, 1000000),
    _k(random_walk, 100, 100000),
    _k(mc_integrate, 1000, 1000000),
    _k(bootstrap_means, 30, 5000),
    _k(metropolis_gaussian, 200, 200000),
    # masks and bitwise logic
    _k(bitwise_int_ops, 16, 1000000),
    _k(bool_mask_logic, 16, 1000000),
    _k(popcount_loop, 16, 200000),
    _k(masked_where_select, 12, 1000000, grad=True),
    # in-place updates of arguments
    _k(fill_ellipsis, 4, 300000, grad=True, wrt=1),
    _k(clamp_inplace, 6, 300000),
    _k(normalize_rows_inplace, 5, 300000, grad=True),
    _k(relax_boundary_inplace, 6, 600, grad=True),
    # small linear algebra
    _k(solve_3x3, 1, 1, grad=True),
    _k(inverse_8x8, 1, 1, grad=True),
    _k(cholesky_forward, 1, 1, grad=True),
    _k(power_iteration, 5, 300, grad=True),
    _k(gauss_seidel, 5, 200, grad=True),
    # everyday constructs
    _k(checked_norm, 6, 1000000, grad=True),
    _k(import_in_body, 6, 1000000, grad=True),
    _k(math_scalars, 6, 1000000, grad=True),
    _k(complex_parts, 6, 1000000, grad=True),
    _k(chained_assignment, 6, 1000000, grad=True),
    _k(ndindex_fill, 4, 100000, grad=True),
    _k(tile_repeat_linspace, 5, 300000, grad=True),
    _k(stack_features, 6, 300000, grad=True),
    _k(gather_scatter, 6, 1000000, grad=True),
    _k(int_then_float_acc, 6, 1000000, grad=True),
    _k(softmax_rows, 5, 200000, grad=True),
    _k(raise_on_bad, 6, 1000000, grad=True),
    _k(long_augassign_chain, 6, 1000000, grad=True),
    # a new user's first kernels
    _k(kmeans_step, 40, 100000),
    _k(row_mask_energy, 12, 1000000, grad=True),
    _k(jacobi_solve, 5, 200, grad=True),
    _k(band_energy, 5, 1000, grad=True),
    _k(histogram_manual, 100, 100000),
    _k(game_of_life, 8, 64),
    _k(max_drawdown, 60, 1000000, grad=True),
    # fancy indexing, masks, run-time lengths
    _k(softmax_cross_entropy, 6, 100000, grad=True),
    _k(one_hot_weighted, 7, 100000, grad=True, wrt=1),
    _k(knn_regress, 12, 20000),
    _k(gaussian_blur_rows, 5, 300, grad=True),
    _k(quadratic_roots_masked, 9, 1000000, grad=True, wrt=1),
    _k(coo_to_dense, 10, 1000000, grad=True, wrt=2),
    _k(winsorize_masks, 15, 1000000, grad=True),
    _k(bilinear_sample, 6, 500, grad=True),
    _k(embedding_bag_mean, 7, 100000, grad=True),
    # rows other people reach for: complex(), ufunc methods, histogram, nan-reductions, ...
    _k(mandelbrot_complex, 12, 400),
    _k(drawdown_accumulate, 40, 1000000, grad=True),
    _k(histogram_equalize, 9, 1000),
    _k(rbf_outer, 6, 1000, grad=True),
    _k(coo_to_dense_add_at, 5, 3000, grad=True, wrt=2),
    _k(nan_zscore, 13, 1000000, grad=True),
    _k(int_bucket_math, 6, 250000),
    _k(velocity_profile, 20, 1000000, grad=True),
    # least squares, factorizations, robust statistics (numpy.linalg and statistics under jit)
    _k(poly_fit_lstsq, 12, 100000, grad=True, wrt=1),
    _k(pca_eigh, 10, 100000, grad=True),
    _k(pca_svd, 8, 100000, grad=True),
    _k(gram_schmidt_vs_qr, 5, 2000, grad=True),
    _k(robust_columns, 7, 100000, grad=True),
    _k(rotate_and_upsample, 4, 500, grad=True),
    _k(ridge_pinv, 9, 100000, grad=True),
    _k(batch_means, 7, 300000, grad=True),
    _k(zero_out_flat, 3, 300000, grad=True),
    # Python-heavy numerics (session python)
    _k(cbrt_newton, 8, 100000, grad=True),
    _k(first_pair_summing, 12, 2000),
    _k(first_row_above, 6, 100000, grad=True),
    _k(primes_for_else, 60, 20000),
    _k(closure_window_mean, 9, 100000, grad=True),
    _k(lambda_soft_threshold, 8, 1000000, grad=True),
    _k(smoothstep_helpers, 9, 1000000, grad=True),
    _k(peaks_to_arrays, 20, 1000000, grad=True),
    _k(polyline_lengths, 8, 100000, grad=True),
    _k(row_norms_comprehension, 6, 100000, grad=True),
    _k(ranks_and_suffix, 9, 16),      # sorted(key=...): an exchange network, up to 16 items
    _k(reversed_zip_pairs, 9, 1000000, grad=True),
    _k(mlp_params_dict, 6, 100000, grad=True, wrt=1),
    _k(summary_tuple, 9, 1000000),
    _k(robust_fit_loss, 10, 1000000, grad=True),
    _k(star_args_norms, 7, 1000000, grad=True),
    _k(gauss_legendre_panels, 6, 100000, grad=True),
    _k(scalar_promotion, 9, 1000000),
    _k(compact_positive, 12, 1000000, grad=True),
    _k(math_module_mix, 9, 300000, grad=True),
    _k(correlate_mode, 10, 1000000, grad=True),
    _k(correlate_valid_kw, 10, 1000000, grad=True),
    _k(validated_weights, 8, 1000000, grad=True),
    _k(verbose_relaxation, 5, 300, grad=True),
    _k(secant_root, 1, 1, grad=True),
    _k(mixed_branch_increment, 12, 1000000),
    _k(digit_sums, 10, 300000),
    _k(star_shape_stack, 7, 100000, grad=True),
    _k(any_all_generators, 12, 1000000),
    _k(isinstance_scale, 6, 1000000),
    _k(dict_counts, 30, 1000000),
    _k(sliding_max_deque, 15, 300000, grad=True),
    # finance
    _k(returns_stats, 30, 1000000, grad=True),
    _k(drawdown_duration, 40, 1000000, grad=True),
    _k(mc_european_call, 1000, 1000000),
    _k(mc_asian_paths, 20, 5000),
    _k(moving_average_crossover, 40, 1000000, grad=True),
    # signal processing
    _k(iir_df2t, 20, 1000000, grad=True, wrt=2),
    _k(windowed_sinc_fir, 20, 300000, grad=True),
    _k(goertzel_power, 64, 300000, grad=True),
    _k(kalman_1d, 30, 1000000, grad=True),
    # geometry
    _k(shoelace_area, 9, 1000000, grad=True),
    _k(points_in_polygon, 20, 30000),
    _k(convex_hull_chain, 25, 100000),
    # graphs
    _k(bfs_distances, 12, 1000),
    _k(dijkstra_dense, 7, 600, grad=True),
    _k(union_find_components, 20, 300000),
    _k(floyd_warshall_loops, 6, 150, grad=True),
    # dynamic programming
    _k(edit_distance, 9, 1000),
    _k(lcs_backtrack, 10, 1000),
    _k(knapsack_01, 10, 300),
    _k(matrix_chain_order, 8, 150),
    # sorting and searching by hand
    _k(insertion_sort, 10, 3000, grad=True),
    _k(searchsorted_manual, 12, 300000),
    _k(quickselect, 15, 300000, grad=True),
    _k(merge_sorted, 9, 300000, grad=True),
    # sparse matrices, particles, ODEs, integer loops
    _k(csr_from_dense, 6, 1000),
    _k(csr_matvec, 8, 1000, grad=True, wrt=3),
    _k(pic_cic_deposit, 12, 1000000, grad=True),
    _k(pic_push, 16, 100000),
    _k(sir_euler, 20, 10000, grad=True, wrt=2),
    _k(rk4_user_rhs, 20, 100000, grad=True),
    _k(heun_adaptive, 4, 100000, grad=True),
    _k(gcd_pairs, 12, 300000),
    _k(collatz_steps, 30, 100000),
    # Polybench / npbench styles: run-time lengths, products, stacks of matrices
    _k(polybench_2mm, 4, 400, grad=True, wrt=2),
    _k(polybench_3mm, 4, 400, grad=True),
    _k(cholesky_slices, 5, 300, grad=True),
    _k(ludcmp, 5, 300, grad=True),
    _k(nussinov, 9, 200),
    _k(deriche, 5, 600, grad=True, wrt=1),
    _k(fdtd_2d, 5, 500, grad=True, wrt=1),
    _k(jacobi_1d, 8, 100000, grad=True, wrt=1),
    _k(symm, 4, 150, grad=True, wrt=3),
    _k(syr2k, 5, 150, grad=True, wrt=3),
    _k(gemver, 5, 1000, grad=True, wrt=2),
    _k(trmm_rows, 5, 300, grad=True, wrt=1),
    _k(adi, 6, 200, grad=True, wrt=2),
    _k(durbin_flip, 7, 1000, grad=True),
    _k(covariance_triangle, 4, 300, grad=True, wrt=2),
    _k(correlation_triangle, 4, 300, grad=True, wrt=2),
    _k(doitgen_stack, 3, 60, grad=True, wrt=3),
    _k(cavity_flow, 7, 200, grad=True, wrt=2),
    _k(channel_flow_step, 6, 400, grad=True),
    _k(vadv_thomas, 3, 100, grad=True, wrt=1),
    _k(conv2d_bias, 5, 40, grad=True),
    _k(lenet_like, 12, 28, grad=True, wrt=1),
    _k(mlp_forward, 4, 10000, grad=True, wrt=1),
    _k(softmax_axis, 3, 100000, grad=True),
    _k(resnet_block, 4, 32, grad=True),
    _k(fft_radix2, 8, 65536, grad=True),
    _k(compute_clip, 5, 1000),
    _k(go_fast_trace, 5, 1000, grad=True),
    _k(contour_integral, 3, 100),
    _k(gemm_update, 4, 200, grad=True, wrt=2),
    _k(trisolv_rows, 5, 1000, grad=True),
    _k(gramschmidt_cols, 4, 200, grad=True),
    _k(seidel_rows, 5, 200, grad=True, wrt=1),
]

BY_NAME = {k.name: k for k in KERNELS}
