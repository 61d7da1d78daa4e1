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


class _Graph:
    def __init__(self, graph, inputs, outputs, pool):
        self.graph = graph
        self.inputs = inputs
        self.outputs = outputs
        self.pool = pool                # keeps the graph's memory reserved for it
        self.lock = threading.Lock()


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
        if not graphs_enabled() or not args or \
                not all(type(a) is cupy.ndarray for a in args):
            return self.fn(*args)
        stream = cupy.cuda.get_current_stream()
        device = cupy.cuda.Device().id
        if any(a.device.id != device for a in args) or \
                sum(a.nbytes for a in args) > max_graph_bytes():
            return self.fn(*args)
        key = (device, stream.ptr, tuple((a.shape, a.dtype.str) for a in args))
        entry = self._graphs.get(key)
        if entry is None:
            with self._lock:
                first = key not in self._seen
                self._seen.add(key)
            if first:                   # compiles the kernels, creates library handles
                return self.fn(*args)
            entry = self._capture(key, args, stream)
        if entry is False:
            return self.fn(*args)
        return self._replay(entry, args, stream)

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
                capture.begin_capture()
                try:
                    outs = self.fn(*inputs)
                finally:
                    graph = capture.end_capture()
                graph.upload(capture)
                capture.synchronize()
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
        with entry.lock:
            for buf, a in zip(entry.inputs, args):
                if not a.flags.c_contiguous:
                    a = cupy.ascontiguousarray(a)
                buf.data.copy_from_device_async(a.data, a.nbytes, stream)
            entry.graph.launch(stream)
            results = []
            for o in entry.outputs:
                if isinstance(o, cupy.ndarray):
                    r = cupy.empty(o.shape, o.dtype)
                    r.data.copy_from_device_async(o.data, o.nbytes, stream)
                    o = r
                results.append(o)
        return results
