"""Collectives between the GPU shards of one pmap (see collectives.py for the rendezvous).

* Shards on distinct GPUs (TRANSPILE_GPU_STREAMS=1 on a machine with several): psum, pmean,
  pmax and pmin run as NCCL all-reduces through CuPy (`cupy.cuda.nccl`), one communicator
  per GPU, each shard's call queued on its own stream. NCCL needs one GPU per rank, so
  stream devices that share a GPU never take this path.
* Otherwise (stream devices on one GPU, or no NCCL in this CuPy build) every shard reads its
  partners' arrays directly (one GPU) or through peer-to-peer copies (`copy_to_gpu`).
"""
import threading

_NCCL_OP = {"psum": "NCCL_SUM", "pmean": "NCCL_SUM", "pmax": "NCCL_MAX", "pmin": "NCCL_MIN"}
_NCCL_DTYPE = {"float16": "NCCL_FLOAT16", "float32": "NCCL_FLOAT32",
               "float64": "NCCL_FLOAT64", "int32": "NCCL_INT32", "int64": "NCCL_INT64",
               "uint8": "NCCL_UINT8", "int8": "NCCL_INT8", "uint32": "NCCL_UINT32",
               "uint64": "NCCL_UINT64"}

_lock = threading.Lock()
_cliques = {}


def _cupy():
    import cupy
    return cupy


def nccl_module():
    """cupy.cuda.nccl when this CuPy build has NCCL, else None."""
    try:
        from cupy.cuda import nccl
    except Exception:
        return None
    return nccl if getattr(nccl, "available", True) else None


def copy_to_gpu(x, gpu):
    """A copy of CuPy array x on GPU `gpu` (peer-to-peer copy, queued on the current stream)."""
    cupy = _cupy()
    with cupy.cuda.Device(x.device.id):
        src = cupy.ascontiguousarray(x)
    with cupy.cuda.Device(gpu):
        out = cupy.empty(src.shape, src.dtype)
        stream = cupy.cuda.get_current_stream()
        cupy.cuda.runtime.memcpyPeerAsync(out.data.ptr, gpu, src.data.ptr, src.device.id,
                                          src.nbytes, stream.ptr)
        return out


def nccl_clique(devices):
    """The NCCL communicators of these shard devices (one per distinct GPU), or None where
    NCCL cannot serve them (fewer than 2 devices, two on one GPU, no NCCL)."""
    gpus = tuple(getattr(d, "gpu", None) for d in devices)
    if len(gpus) < 2 or None in gpus or len(set(gpus)) != len(gpus):
        return None
    nccl = nccl_module()
    if nccl is None:
        return None
    with _lock:
        clique = _cliques.get(gpus)
        if clique is None:
            clique = _cliques[gpus] = NcclClique(nccl, gpus)
        return clique


class NcclClique:
    """One NCCL communicator per GPU of a pmap's shards (ncclCommInitAll, single process)."""

    def __init__(self, nccl, gpus):
        self.nccl = nccl
        self.gpus = gpus
        self.comms = nccl.NcclCommunicator.initAll(list(gpus))

    def all_reduce(self, rank, x, op):
        """op ('psum', 'pmax', ...) of x over every rank; call from each rank's own thread, in
        the same order on every rank. Returns a new CuPy array on rank's GPU."""
        cupy = _cupy()
        with cupy.cuda.Device(self.gpus[rank]):
            src = cupy.ascontiguousarray(cupy.asarray(x))
            name = _NCCL_DTYPE.get(src.dtype.name)
            if name is None:
                raise TypeError(f"{op}: NCCL has no reduction for dtype {src.dtype}")
            out = cupy.empty_like(src)
            stream = cupy.cuda.get_current_stream()
            self.comms[rank].allReduce(src.data.ptr, out.data.ptr, src.size,
                                       getattr(self.nccl, name), getattr(self.nccl, _NCCL_OP[op]),
                                       stream.ptr)
            return out
