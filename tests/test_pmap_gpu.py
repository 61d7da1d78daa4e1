"""pmap over GPU stream devices (marked `gpu`): shards run as generated CUDA kernels on their
own CuPy streams, results and collectives match NumPy, float32 stays float32. Skipped cleanly
without a device. NCCL (several GPUs) is exercised as far as one GPU allows."""
import numpy as np
import pytest

from transpile.api.pmap import all_gather, pmap, pmean, psum


def _device():
    try:
        from transpile.lowering.gpu.cupy_backend import device_available
        return device_available()
    except Exception:
        return False


pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not _device(), reason="no CUDA device visible (or CuPy missing)")]


@pytest.fixture
def four_streams():
    from transpile_runtime import devices as rd
    rd.reset_gpu_devices(streams=4)
    yield rd.devices("gpu")
    rd.reset_gpu_devices()


def logistic_poly(x):
    return 1.0 / (1.0 + np.exp(-x)) * x + np.sin(x)


def test_stream_devices_have_distinct_streams(four_streams):
    import cupy
    assert len(four_streams) == 4 * cupy.cuda.runtime.getDeviceCount()
    ptrs = {d.stream.ptr for d in four_streams}
    assert len(ptrs) == len(four_streams) and 0 not in ptrs


def test_pmap_on_streams_matches_numpy(four_streams):
    import cupy
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 70_001)).astype(np.float32)
    out = pmap(logistic_poly, backend="gpu", devices=four_streams[:4])(cupy.asarray(x))
    assert isinstance(out, cupy.ndarray) and out.dtype == np.float32 and out.shape == x.shape
    ref = logistic_poly(x.astype(np.float64))
    assert np.max(np.abs(cupy.asnumpy(out) - ref)) < 1e-5


def test_pmap_numpy_input_is_moved_to_the_gpu(four_streams):
    import cupy
    x = np.linspace(-2, 2, 4 * 513, dtype=np.float32).reshape(4, 513)
    out = pmap(lambda v: v * v + 2 * v, backend="gpu", devices=four_streams[:4])(x)
    assert isinstance(out, cupy.ndarray)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(cupy.asnumpy(out), x64 * x64 + 2 * x64, rtol=1e-6, atol=1e-6)


def test_collectives_between_stream_shards(four_streams):
    import cupy
    rng = np.random.default_rng(4)
    x = rng.standard_normal((4, 1000)).astype(np.float32)

    def f(v):
        return v / psum(v, "i"), pmean(v * v, "i")
    a, b = pmap(f, axis_name="i", backend="gpu", devices=four_streams[:4])(cupy.asarray(x))
    x64 = x.astype(np.float64)
    total = x64.sum(0)
    ok = np.abs(total) > 1e-2        # v / psum(v) is ill-conditioned where the sum is ~0
    np.testing.assert_allclose(cupy.asnumpy(a)[:, ok], (x64 / total)[:, ok], rtol=1e-3)
    np.testing.assert_allclose(cupy.asnumpy(b)[0], (x64 * x64).mean(0), rtol=1e-5)
    assert isinstance(a, cupy.ndarray) and a.dtype == np.float32 and b.dtype == np.float32


def test_all_gather_between_stream_shards_runs_as_cupy_ops(four_streams):
    """all_gather's result shape depends on the axis, so the shard has no kernel plan: it runs
    as CuPy array ops, and says so."""
    import cupy
    from transpile import TranspileWarning
    x = np.arange(4 * 6, dtype=np.float32).reshape(4, 6)
    with pytest.warns(TranspileWarning, match="CuPy array ops"):
        out = pmap(lambda v: all_gather(v.sum(), "i"), axis_name="i", backend="gpu",
                   devices=four_streams[:4])(cupy.asarray(x))
    assert isinstance(out, cupy.ndarray)
    np.testing.assert_array_equal(cupy.asnumpy(out), np.tile(x.sum(1), (4, 1)))


def test_nccl_is_used_only_for_distinct_gpus(four_streams):
    from transpile_runtime.gpu_collectives import nccl_clique
    assert nccl_clique(four_streams[:2]) is None or four_streams[0].gpu != four_streams[1].gpu


def test_nccl_all_reduce_single_rank():
    """The NCCL call path (communicator, dtype and op codes, stream) on one rank."""
    import cupy
    from transpile_runtime.gpu_collectives import NcclClique, nccl_module
    nccl = nccl_module()
    if nccl is None:
        pytest.skip("this CuPy build has no NCCL")
    clique = NcclClique(nccl, (0,))
    x = cupy.arange(10, dtype=cupy.float32)
    for op in ("psum", "pmax", "pmin"):
        out = clique.all_reduce(0, x, op)
        cupy.cuda.Device().synchronize()
        np.testing.assert_array_equal(cupy.asnumpy(out), np.arange(10, dtype=np.float32))
