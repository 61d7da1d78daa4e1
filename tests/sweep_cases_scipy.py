"""Sweep cases for the scipy.special, scipy.stats and numpy.fft rows (see tests/sweep_cases.py).

Every parameter of a case is a swept input, so a case differentiates each density with respect
to x and its parameters at once; parameters without a derivative rule (t.cdf's df, gamma.cdf's
a, beta.cdf's a and b, poisson's k) are constants here and their refusal is tested in
tests/test_gradient_regressions.py.
"""
from sweep_cases import case

SP = "scipy.special"
ST = "scipy.stats"
_SHAPES1 = [[()], [(3,)], [(2, 3)]]

# ---- scipy.special, elementwise -------------------------------------------------------------
for _name, _expr, _dom in [
        ("erf", f"{SP}.erf(x)", "real"), ("erfc", f"{SP}.erfc(x)", "real"),
        ("erfinv", f"{SP}.erfinv(x)", "unit"), ("gammaln", f"{SP}.gammaln(x)", "pos"),
        ("gamma", f"{SP}.gamma(x)", "pos"),
        ("digamma", f"{SP}.digamma(x)", "pos"), ("digamma", f"{SP}.psi(x)", "pos"),
        ("polygamma", f"{SP}.polygamma(1, x)", "pos"),
        ("polygamma", f"{SP}.polygamma(0, x)", "pos"),
        ("expit", f"{SP}.expit(x)", "real"), ("logit", f"{SP}.logit(x)", "prob"),
        ("i0", f"{SP}.i0(x)", "real"), ("i0", "np.i0(x)", "real"),
        ("i1", f"{SP}.i1(x)", "real"), ("i0e", f"{SP}.i0e(x)", "pos"),
        ("i1e", f"{SP}.i1e(x)", "pos"), ("ndtr", f"{SP}.ndtr(x)", "real"),
        ("log_ndtr", f"{SP}.log_ndtr(x)", "real")]:
    for _s in _SHAPES1:
        case(f"special_{_name}", _expr, _s, domain=_dom,
             dtypes=("float64", "float32") if _s == [(3,)] else ("float64",))
for _name, _expr in [("betaln", f"{SP}.betaln(x, y)"), ("xlogy", f"{SP}.xlogy(x, y)"),
                     ("xlog1py", f"{SP}.xlog1py(x, y)")]:
    for _s in [[(3,), (3,)], [(2, 3), (3,)], [(), (3,)]]:
        case(f"special_{_name}", _expr, _s, domain="pos")

for _s in [[(3,), (3,)], [(2, 3), (3,)]]:
    case("special_beta", f"{SP}.beta(x, y)", _s, domain="pos")
# incomplete beta/gamma: derivatives in x only (a, b constants here)
case("special_betainc", f"{SP}.betainc(1.5, 2.5, x)", [(3,)], domain="prob")
case("special_betainc", f"{SP}.betainc(np.array([0.7, 3.0]), 1.2, x)", [(2, 2)], domain="prob")
case("special_gammainc", f"{SP}.gammainc(1.7, x)", [(3,)], domain="pos")
case("special_gammaincc", f"{SP}.gammaincc(np.array([0.8, 2.5, 4.0]), x)", [(2, 3)],
     domain="pos")

# ---- scipy.special, along axes ------------------------------------------------------------------
for _expr, _s in [(f"{SP}.logsumexp(x)", [(3,)]), (f"{SP}.logsumexp(x, axis=1)", [(2, 3)]),
                  (f"{SP}.logsumexp(x, axis=0, keepdims=True)", [(2, 3)]),
                  (f"{SP}.logsumexp(x, b=y)", [(3,), (3,)]),
                  (f"{SP}.logsumexp(x, axis=1, b=y)", [(2, 3), (3,)])]:
    case("special_logsumexp", _expr, _s, domain="pos" if "b=" in _expr else "real")
for _name in ("softmax", "log_softmax"):
    case(f"special_{_name}", f"{SP}.{_name}(x)", [(3,)], dtypes=("float64", "float32"))
    case(f"special_{_name}", f"{SP}.{_name}(x, axis=1)", [(2, 3)])
    case(f"special_{_name}", f"{SP}.{_name}(x, axis=0)", [(2, 3)])

# ---- scipy.stats -----------------------------------------------------------------------------------
for _m in ("logpdf", "pdf", "cdf", "sf", "logcdf", "logsf"):
    case(f"stats_norm_{_m}", f"{ST}.norm.{_m}(x)", [(3,)], dtypes=("float64", "float32"))
    case(f"stats_norm_{_m}", f"{ST}.norm.{_m}(x, y, z)", [(3,), (3,), ()], domain="pos")
for _m in ("logpdf", "pdf"):
    case(f"stats_t_{_m}", f"{ST}.t.{_m}(x, y, z, u)", [(3,), (), (3,), ()], domain="pos")
    case(f"stats_gamma_{_m}", f"{ST}.gamma.{_m}(x + 1.0, y, z - 1.0, u)", [(3,), (), (), ()],
         domain="pos")
    case(f"stats_beta_{_m}", f"{ST}.beta.{_m}(x, y, z)", [(3,), (), (3,)], domain="prob")
case("stats_t_cdf", f"{ST}.t.cdf(x, 3.0, y, z)", [(3,), (3,), ()], domain="pos")
case("stats_gamma_cdf", f"{ST}.gamma.cdf(x + 2.0, 2.5, y, z)", [(3,), (), ()], domain="pos")
case("stats_beta_cdf", f"{ST}.beta.cdf(x, 2.0, 3.0)", [(3,)], domain="prob")
case("stats_beta_cdf", f"{ST}.beta.cdf(x, 2.0, 3.0, y - 1.0, z + 1.0)", [(3,), (), ()],
     domain="prob")
for _m in ("logpmf", "pmf", "cdf"):
    case(f"stats_poisson_{_m}", f"{ST}.poisson.{_m}(np.array([0.0, 2.0, 5.0]), x)", [(3,)],
         domain="pos")
    case(f"stats_poisson_{_m}", f"{ST}.poisson.{_m}(3.0, x, 1.0)", [()], domain="pos")
_COV = "np.array([[2.0, 0.3, 0.0], [0.3, 1.5, 0.2], [0.0, 0.2, 1.0]])"
for _m in ("logpdf", "pdf"):
    case(f"stats_mvn_{_m}", f"{ST}.multivariate_normal.{_m}(x, np.array([0.1, -0.2, 0.3]), "
         f"{_COV})", [(3,)])
    case(f"stats_mvn_{_m}", f"{ST}.multivariate_normal.{_m}(x, y, {_COV} + 0.1 * z @ z.T)",
         [(3,), (3,), (3, 3)], skip={
             "vmap": "the row batches x only (one example per call); tests/test_gradient_"
                     "regressions.py checks vmap over x with mean and cov fixed"})
    case(f"stats_mvn_{_m}", f"{ST}.multivariate_normal.{_m}(x, y, {_COV})", [(2, 3), (3,)],
         skip={"vmap": "several samples per example: no batching rule (refused)"})
    case(f"stats_dirichlet_{_m}", f"{ST}.dirichlet.{_m}(x / np.sum(x), y)", [(3,), (3,)],
         domain="pos")
    # a cov that is not symmetric: SciPy reads its lower triangle
    case(f"stats_mvn_{_m}", f"{ST}.multivariate_normal.{_m}(x, None, {_COV} + 0.2 * y)",
         [(3,), (3, 3)], skip={"vmap": "the row batches x only (one example per call)"})
case("stats_mvn_entropy", f"{ST}.multivariate_normal.entropy(x, {_COV} + 0.2 * y)",
     [(3,), (3, 3)])
case("stats_t_logcdf", f"{ST}.t.logcdf(x, 3.0, y, z)", [(3,), (3,), ()], domain="pos")

# ---- scipy.signal ----------------------------------------------------------------------------------
for _f in ("convolve", "correlate"):
    for _mode, _s in [("full", [(4,), (3,)]), ("same", [(2, 4), (2, 3)]),
                      ("valid", [(3, 4), (2, 2)]), ("valid", [(2,), (4,)])]:
        case(f"signal_{_f}", f"scipy.signal.{_f}(x, y, mode={_mode!r})", _s)

# ---- numpy.fft -------------------------------------------------------------------------------------
for _name, _expr, _s in [
        ("fft", "np.fft.fft(x)", [(4,)]), ("fft", "np.fft.fft(x, n=5)", [(3,)]),
        ("fft", "np.fft.fft(x, axis=0)", [(3, 2)]), ("ifft", "np.fft.ifft(x)", [(4,)]),
        ("ifft", "np.fft.ifft(x, norm='ortho')", [(2, 3)]), ("rfft", "np.fft.rfft(x)", [(5,)]),
        ("rfft", "np.fft.rfft(x, axis=0)", [(4, 2)]), ("irfft", "np.fft.irfft(x)", [(4,)]),
        ("irfft", "np.fft.irfft(x, n=5)", [(3,)]), ("fft2", "np.fft.fft2(x)", [(2, 3)]),
        ("ifft2", "np.fft.ifft2(x)", [(3, 2)]), ("rfft2", "np.fft.rfft2(x)", [(2, 4)]),
        ("irfft2", "np.fft.irfft2(x)", [(2, 3)]), ("fftn", "np.fft.fftn(x)", [(2, 2, 3)]),
        ("ifftn", "np.fft.ifftn(x, axes=(0,))", [(3, 2)]), ("rfftn", "np.fft.rfftn(x)", [(2, 3)]),
        ("irfftn", "np.fft.irfftn(x)", [(2, 3)]), ("fftshift", "np.fft.fftshift(x)", [(5,)]),
        ("fftshift", "np.fft.fftshift(x, axes=1)", [(2, 3)]),
        ("ifftshift", "np.fft.ifftshift(x)", [(2, 3)])]:
    case(f"fft_{_name}", _expr, _s,
         dtypes=("float64", "complex128") if _name in ("fft", "ifft", "irfft", "fft2")
         else ("float64",))
