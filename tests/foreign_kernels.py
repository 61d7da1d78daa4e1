"""A corpus of NumPy kernels in the styles other people write (issue 22, part 4).

Stencils on views, particle and wave simulations, image filters, pairwise distances, statistics
with `axis=`, recurrences, Monte Carlo with `np.random`, mask and bitwise logic, in-place updates
of arguments that return None, small linear algebra, and the constructs users reach for without
thinking (assert, import in the body, math.*, .real/.imag, chained assignment, np.ndindex,
newaxis, np.roll/tile/repeat/cumsum/average/linspace/stack, integer-array subscripts,
accumulators that start as an int and become a float), fancy indexing with several integer
arrays, boolean-mask writes of arrays, sorts along an axis and arrays sized at run time, and
least-squares fits, PCA with eigh/svd, Gram-Schmidt against qr, robust statistics along axes,
image rotations, np.put.

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
]

BY_NAME = {k.name: k for k in KERNELS}
