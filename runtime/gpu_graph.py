"""Replay a GPU program's launches as one CUDA graph (CuPy stream capture).

A jitted function on the CuPy backend is a sequence of generated kernels and CuPy/cuBLAS calls,
each costing microseconds of Python and launch overhead; for small arrays (an MLP step at batch
128) that overhead, not the GPU, sets the time. `GraphedCall(fn)` runs `fn` normally on the
first call for a given (stream, argument shapes), captures it into a CUDA graph on the second,
and from then on replays the graph:

    copy the arguments into the graph's input buffers   (one device-to-device copy each)
    launch the graph                                     (one call for every kernel in fn)
    copy the graph's outputs into fresh arrays           (the caller owns what it gets back)

The graph's buffers (inputs, intermediates, outputs) come from a memory pool private to that
graph, so nothing else ever reuses memory the graph writes on replay. Graphs are used only when
every argument is a CuPy array on the current GPU (Python scalars would be baked into the
kernels' arguments) and are kept per stream (pmap's stream devices each get their own). If the
capture fails (fn synchronizes with the host, say) the call falls back to running fn normally
for that signature. TRANSPILE_CUDA_GRAPHS=0 turns graphs off.

Graphs pay off only where launches, not bytes, set the time: the copies in and out move every
argument and result once more. So a signature whose arguments or results together exceed
TRANSPILE_CUDA_GRAPH_MAX_BYTES (default 8 MiB) runs plainly.
"""
import os
import threading


def graphs_enabled():
    return os.environ.get("TRANSPILE_CUDA_GRAPHS", "1") not in ("0", "", "false", "off")


def max_graph_bytes():
    return int(os.environ.get("TRANSPILE_CUDA_GRAPH_MAX_BYTES", str(8 << 20)))


def _in_pmap_shard():
    """pmap shards run plainly: a capture holds a process-wide lock (the matmul swap below),
    and shards must be free to meet at collectives."""
    from .devices import current_device
    return current_device() is not None


class _CaptureGemm:
    """2-D float32/float64 matrix products for use while a stream is being captured.

    CuPy refuses every cuBLAS call during stream capture (its cublas.setStream raises
    NotImplementedError), although cuBLAS itself can be captured. While capturing, `cupy.matmul`
    is replaced by `self.matmul`, which calls cublas{S,D}gemm through ctypes on a cuBLAS handle
    of our own, bound to the capturing stream, with a workspace from the graph's private pool.
    Anything else (batched, 1-D, integer, non-contiguous) raises, and the capture falls back.
    """

    def __init__(self, cupy, stream, workspace):
        import ctypes
        self.cupy = cupy
        self.lib = _cublas_library()
        self.handle = ctypes.c_void_p()
        _check(self.lib.cublasCreate_v2(ctypes.byref(self.handle)), "cublasCreate")
        _check(self.lib.cublasSetStream_v2(self.handle, ctypes.c_void_p(stream.ptr)),
               "cublasSetStream")
        _check(self.lib.cublasSetWorkspace_v2(self.handle, ctypes.c_void_p(workspace.data.ptr),
                                              ctypes.c_size_t(workspace.nbytes)),
               "cublasSetWorkspace")

    def close(self):
        self.lib.cublasDestroy_v2(self.handle)

    def matmul(self, a, b, out=None, **kwargs):
        import ctypes
        cupy = self.cupy
        if out is not None or kwargs or not isinstance(a, cupy.ndarray) or \
                not isinstance(b, cupy.ndarray) or a.ndim != 2 or b.ndim != 2 or \
                a.dtype != b.dtype or a.dtype.char not in "fd" or a.shape[1] != b.shape[0]:
            raise NotImplementedError("matmul under CUDA graph capture: only 2-D float32/"
                                      "float64 products of one dtype")
        m, k = a.shape
        n = b.shape[1]
        c = cupy.empty((m, n), a.dtype)
        if 0 in (m, n, k):
            c[...] = 0
            return c
        # row-major C = A B is column-major C^T = B^T A^T: gemm(opB, opA, n, m, k)
        op_b, ld_b, b = _operand(cupy, b)
        op_a, ld_a, a = _operand(cupy, a)
        scalar = ctypes.c_float if a.dtype.char == "f" else ctypes.c_double
        gemm = self.lib.cublasSgemm_v2 if a.dtype.char == "f" else self.lib.cublasDgemm_v2
        one, zero = scalar(1), scalar(0)
        _check(gemm(self.handle, op_b, op_a, n, m, k, ctypes.byref(one),
                    ctypes.c_void_p(b.data.ptr), ld_b, ctypes.c_void_p(a.data.ptr), ld_a,
                    ctypes.byref(zero), ctypes.c_void_p(c.data.ptr), n), "cublasGemm")
        return c


def _operand(cupy, x):
    """(cuBLAS op, leading dimension, array) for a row-major 2-D operand: a C-contiguous
    matrix is its own transpose in column-major (op N); an F-contiguous one (a transposed
    view) is op T; anything else is made C-contiguous first (a capturable copy kernel)."""
    rows, cols = x.shape
    item = x.itemsize
    if x.strides == (cols * item, item) or rows == 1:
        return 0, max(cols, 1), x
    if x.strides == (item, rows * item) or cols == 1:
        return 1, max(rows, 1), x
    x = cupy.ascontiguousarray(x)
    return 0, max(cols, 1), x


def _check(status, what):
    if status != 0:
        raise RuntimeError(f"{what} failed with cuBLAS status {status}")


_CUBLAS = []


def _cublas_library():
    """The libcublas that CuPy loaded (same library, so same device state), by ctypes."""
    import ctypes
    if not _CUBLAS:
        import cupy
        cupy.cuda.device.get_cublas_handle()        # makes CuPy load libcublas
        path = None
        with open("/proc/self/maps") as maps:
            for line in maps:
                if "libcublas.so" in line and "libcublasLt" not in line:
                    path = line.split()[-1]
                    break
        if path is None:
            raise RuntimeError("libcublas is not loaded in this process")
        lib = ctypes.CDLL(path)
        for name in ("cublasSgemm_v2", "cublasDgemm_v2"):
            getattr(lib, name).argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int,
                                           ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                           ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int,
                                           ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p,
                                           ctypes.c_void_p, ctypes.c_int]
        _CUBLAS.append(lib)
    return _CUBLAS[0]


class _patched_matmul:
    """cupy.matmul -> gemm.matmul for the duration of a capture (np.matmul on CuPy arrays and
    the executor's impl_for both look cupy.matmul up by name at call time)."""

    _lock = threading.Lock()

    def __init__(self, cupy, gemm):
        self.cupy, self.gemm = cupy, gemm

    def __enter__(self):
        self._lock.acquire()
        self.saved = self.cupy.matmul
        self.cupy.matmul = self.gemm.matmul
        return self

    def __exit__(self, *exc):
        self.cupy.matmul = self.saved
        self._lock.release()
        return False


class _Graph:
    def __init__(self, graph, inputs, outputs, pool):
        import cupy
        self.graph = graph
        self.inputs = inputs
        self.outputs = outputs
        self.pool = pool                # keeps the graph's memory reserved for it
        self.lock = threading.Lock()
        self.in_ptrs = [b.data.ptr for b in inputs if isinstance(b, cupy.ndarray)]
        self.out_specs = [(o.shape, o.dtype, o.data.ptr, o.nbytes, None)
                          if isinstance(o, cupy.ndarray) else (None, None, 0, 0, o)
                          for o in outputs]


class GraphedCall:
    """fn(*cupy_arrays) -> list of outputs, replayed as a CUDA graph after one plain call."""

    def __init__(self, fn, cupy):
        self.fn = fn
        self.cupy = cupy
        self._graphs = {}               # key -> _Graph, or False (capture failed: run plainly)
        self._seen = set()
        self._lock = threading.Lock()
        self.failure = None             # why the last capture failed, for diagnostics

    def __call__(self, *args):
        cupy = self.cupy
        if not args or not graphs_enabled():
            return self.fn(*args)
        ndarray = cupy.ndarray
        for a in args:
            if type(a) is not ndarray:
                return self.fn(*args)
        stream = cupy.cuda.get_current_stream()
        key = (stream.ptr,) + tuple([(a.shape, a.dtype.char, a.data.device_id) for a in args])
        entry = self._graphs.get(key)
        if entry is None:
            entry = self._first_calls(key, args, stream)
        if entry is False or entry is None:
            return self.fn(*args)
        return self._replay(entry, args, stream)

    def _first_calls(self, key, args, stream):
        """None on the first call of a signature (run plainly: compiles the kernels, creates
        library handles), then the captured graph, or False where no graph applies."""
        device = self.cupy.cuda.Device().id
        if _in_pmap_shard() or any(a.data.device_id != device for a in args) or \
                sum(a.nbytes for a in args) > max_graph_bytes():
            return False                # not cached: pmap shards and big calls stay plain
        with self._lock:
            first = key not in self._seen
            self._seen.add(key)
        if first:
            return None
        return self._capture(key, args, stream)

    def _capture(self, key, args, stream):
        cupy = self.cupy
        pool = cupy.cuda.MemoryPool()
        capture = cupy.cuda.Stream(non_blocking=True)
        entry = False
        try:
            with cupy.cuda.using_allocator(pool.malloc), capture:
                inputs = [cupy.empty(a.shape, a.dtype) for a in args]
                capture.synchronize()
                stream.synchronize()
                for buf, a in zip(inputs, args):
                    buf[...] = a
                outs = self.fn(*inputs)     # fills the private pool's cache for the capture
                del outs
                workspace = cupy.empty(32 << 20, cupy.uint8)   # cuBLAS workspace, this graph's
                gemm = _CaptureGemm(cupy, capture, workspace)
                capture.synchronize()
                try:
                    with _patched_matmul(cupy, gemm):
                        capture.begin_capture()
                        try:
                            outs = self.fn(*inputs)
                        finally:
                            graph = capture.end_capture()
                except BaseException:
                    gemm.close()
                    raise
                graph.upload(capture)
                capture.synchronize()
                inputs.append(workspace)    # kept alive with the graph, as is gemm's handle
                inputs.append(gemm)
            if not isinstance(outs, (list, tuple)):
                raise TypeError("graphed function must return a list of outputs")
            big = sum(getattr(o, "nbytes", 0) for o in outs)
            if big > max_graph_bytes():
                raise ValueError(f"results of {big} bytes: copying them out costs more than "
                                 "the graph saves")
            entry = _Graph(graph, inputs, list(outs), pool)
        except Exception as exc:            # not capturable: run this signature plainly
            self.failure = f"{type(exc).__name__}: {exc}"
            entry = False
        with self._lock:
            self._graphs[key] = entry
        return entry

    def _replay(self, entry, args, stream):
        cupy = self.cupy
        memcpy = cupy.cuda.runtime.memcpyAsync
        d2d = cupy.cuda.runtime.memcpyDeviceToDevice
        sp = stream.ptr
        with entry.lock:
            for ptr, a in zip(entry.in_ptrs, args):
                if not a.flags.c_contiguous:
                    a = cupy.ascontiguousarray(a)
                if a.nbytes:
                    memcpy(ptr, a.data.ptr, a.nbytes, d2d, sp)
            entry.graph.launch(stream)
            results = []
            empty = cupy.empty
            for shape, dtype, ptr, nbytes, value in entry.out_specs:
                if shape is None:
                    results.append(value)
                    continue
                r = empty(shape, dtype)
                if nbytes:
                    memcpy(r.data.ptr, ptr, nbytes, d2d, sp)
                results.append(r)
        return results
