"""Devices that pmap runs shards on, each with its own persistent worker thread.

* CPU: `TRANSPILE_CPU_DEVICES=N` virtual devices (default: the number of cores). Each owns one
  worker thread, so nogil Numba code and NumPy's big kernels run truly in parallel.
* GPU: `TRANSPILE_GPU_STREAMS=S` stream devices per CUDA GPU found through CuPy (imported
  lazily; without CuPy there are none). Default S: 4 when one GPU is visible (so pmap can
  spread shards over streams of it), 1 when several are. Stream device `gpu:G.s` runs every
  task inside `cupy.cuda.Device(G)` on its own CuPy stream (kernels, cuBLAS and copies of
  different shards overlap on the GPU), and waits for that stream before handing results back.

`devices()`, `device_count()` and `local_device_count()` mirror JAX. Under mpirun (see
runtime/mpi.py) `device_count()` counts the devices of every process, `local_device_count()`
only this process's.
"""
import os
import queue
import threading
from concurrent.futures import Future

_STOP = object()


class Device:
    """One device and its worker thread. Tasks run in submission order, one at a time."""

    platform = "?"

    def __init__(self, id):
        self.id = id
        self._tasks = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._work, name=f"transpile-{self}", daemon=True)
        self._thread.start()

    def __repr__(self):
        return f"{self.platform}:{self.id}"

    def submit(self, fn, *args):
        """Run fn(*args) on this device's worker thread; return a concurrent.futures.Future."""
        future = Future()
        self._tasks.put((future, fn, args))
        return future

    def put(self, x):
        """Move an array (or leaf) onto this device."""
        return x

    def context(self):
        """A context manager the worker enters around every task."""
        return _NoContext()

    def owns_current_thread(self):
        return threading.current_thread() is self._thread

    def stop(self):
        self._tasks.put(_STOP)

    def _work(self):
        while True:
            task = self._tasks.get()
            if task is _STOP:
                return
            future, fn, args = task
            if not future.set_running_or_notify_cancel():
                continue
            try:
                with self.context():
                    result = fn(*args)
            except BaseException as exc:  # handed to the caller through the future
                future.set_exception(exc)
            else:
                future.set_result(result)


class CpuDevice(Device):
    platform = "cpu"


class GpuDevice(Device):
    """One CuPy stream on CUDA GPU `gpu` (the `lane`-th of that GPU's stream devices)."""
    platform = "gpu"

    def __init__(self, id, gpu=None, lane=0):
        self.gpu = id if gpu is None else gpu
        self.lane = lane
        self._stream = None
        super().__init__(id)

    def __repr__(self):
        return f"gpu:{self.gpu}" if self.lane == 0 and not _lanes_shown() else \
            f"gpu:{self.gpu}.{self.lane}"

    @property
    def stream(self):
        """This device's CuPy stream (a blocking stream: it orders with the legacy default
        stream that the caller's own CuPy work runs on, but not with the other lanes)."""
        if self._stream is None:
            cupy = _cupy()
            with cupy.cuda.Device(self.gpu):
                self._stream = cupy.cuda.Stream(non_blocking=False)
        return self._stream

    def put(self, x):
        """x on this GPU: NumPy arrays are copied in (on this lane's stream when called from
        its worker); a CuPy array on another GPU is copied peer to peer."""
        cupy = _cupy()
        if isinstance(x, cupy.ndarray) and x.device.id != self.gpu:
            from .gpu_collectives import copy_to_gpu
            return copy_to_gpu(x, self.gpu)
        with cupy.cuda.Device(self.gpu):
            return cupy.asarray(x)

    def context(self):
        return _GpuContext(self)

    def sync(self):
        """Wait until everything queued on this device's stream has run."""
        self.stream.synchronize()


class _GpuContext:
    """Current device = the GPU, current stream = the lane's; on exit, wait for the stream so
    arrays handed to other threads (results, collective operands) are complete."""

    def __init__(self, device):
        self.device = device

    def __enter__(self):
        cupy = _cupy()
        self._dev = cupy.cuda.Device(self.device.gpu)
        self._dev.__enter__()
        self._stream = self.device.stream
        self._stream.__enter__()
        return self

    def __exit__(self, *exc):
        try:
            self._stream.synchronize()
        finally:
            self._stream.__exit__(*exc)
            self._dev.__exit__(*exc)
        return False


class _NoContext:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _cupy():
    import cupy
    return cupy


# ---------------------------------------------------------------- the device registry

_lock = threading.Lock()
_cpu_devices = None
_gpu_devices = None


def default_cpu_device_count():
    text = os.environ.get("TRANSPILE_CPU_DEVICES")
    if text is None:
        return os.cpu_count() or 1
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise ValueError(f"TRANSPILE_CPU_DEVICES must be a positive integer, got {text!r}")
    return n


def cpu_devices():
    global _cpu_devices
    with _lock:
        if _cpu_devices is None:
            _cpu_devices = [CpuDevice(i) for i in range(default_cpu_device_count())]
        return list(_cpu_devices)


def gpu_devices():
    """CUDA GPUs seen by CuPy; [] without CuPy or without a GPU."""
    global _gpu_devices
    with _lock:
        if _gpu_devices is None:
            n = _count_gpus()
            lanes = gpu_streams_per_device(n)
            _gpu_devices = [GpuDevice(g * lanes + s, gpu=g, lane=s)
                            for g in range(n) for s in range(lanes)]
        return list(_gpu_devices)


def gpu_streams_per_device(n_gpus=1):
    """Stream devices per GPU: TRANSPILE_GPU_STREAMS, else 4 on a single GPU, 1 on several."""
    text = os.environ.get("TRANSPILE_GPU_STREAMS")
    if text is None:
        return 4 if n_gpus == 1 else 1
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise ValueError(f"TRANSPILE_GPU_STREAMS must be a positive integer, got {text!r}")
    return n


def _lanes_shown():
    return _gpu_devices is not None and any(d.lane for d in _gpu_devices)


def _count_gpus():
    try:
        cupy = _cupy()
        return cupy.cuda.runtime.getDeviceCount()
    except Exception:  # no cupy, no driver, no device
        return 0


def reset_cpu_devices(n=None):
    """Stop the CPU workers and make `n` new devices (default: TRANSPILE_CPU_DEVICES / cores).

    Call it between pmap calls, never while one runs. Tests use it to get a known count.
    """
    global _cpu_devices
    with _lock:
        old, _cpu_devices = _cpu_devices or [], None
        if n is not None:
            if int(n) < 1:
                raise ValueError(f"reset_cpu_devices: need at least one device, got {n}")
            _cpu_devices = [CpuDevice(i) for i in range(int(n))]
    for d in old:
        d.stop()


def default_backend():
    return os.environ.get("TRANSPILE_DEFAULT_BACKEND", "cpu")


def local_devices(backend=None):
    """This process's devices of one backend ('cpu' or 'gpu'/'cuda'; default 'cpu')."""
    backend = (backend or default_backend()).lower()
    if backend == "cpu":
        return cpu_devices()
    if backend in ("gpu", "cuda"):
        found = gpu_devices()
        if not found:
            raise RuntimeError(
                f"backend={backend!r}: no GPU found (CuPy is missing or sees no CUDA device); "
                "install the [cuda] extra or use backend='cpu'")
        return found
    raise ValueError(f"unknown backend {backend!r}; use 'cpu' or 'gpu'")


def local_device_count(backend=None):
    return len(local_devices(backend))


def devices(backend=None):
    """The devices pmap can use from this process (the local ones)."""
    return local_devices(backend)


def device_count(backend=None):
    """Devices over all processes: local_device_count() times the number of MPI processes."""
    from . import mpi
    return local_device_count(backend) * mpi.process_count()


def current_device():
    """The device whose worker thread is running the caller, or None."""
    for group in (_cpu_devices or [], _gpu_devices or []):
        for d in group:
            if d.owns_current_thread():
                return d
    return None


def reset_gpu_devices(streams=None):
    """Stop the GPU workers; the next gpu_devices() makes new ones (`streams` per GPU, default
    TRANSPILE_GPU_STREAMS / 4 on one GPU). Call it between pmap calls, never while one runs."""
    global _gpu_devices
    with _lock:
        old, _gpu_devices = _gpu_devices or [], None
        if streams is not None:
            if int(streams) < 1:
                raise ValueError(f"reset_gpu_devices: need at least one stream, got {streams}")
            n = _count_gpus()
            _gpu_devices = [GpuDevice(g * int(streams) + s, gpu=g, lane=s)
                            for g in range(n) for s in range(int(streams))]
    for d in old:
        d.stop()
