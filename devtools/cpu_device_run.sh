#!/bin/bash
# CPU measurements for issue 23 on a quiet machine (the device machine's CPU cores), pinned to
# two cores as on the development machine: the one-core-busy test under each of Numba's
# threading layers, and the first-call benchmark against JAX on the CPU. Logs under $OUT.
set -o pipefail
export PYTHONUNBUFFERED=1 JAX_PLATFORMS=cpu NUMBA_NUM_THREADS=2
CORES=${CORES:-2,3}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
PIN="taskset -c $CORES"
$PIN true 2>/dev/null || PIN=""
echo "cores: $CORES ($(nproc) on the machine); loadavg $(cut -d' ' -f1-3 /proc/loadavg)"
for layer in ${LAYERS:-workqueue omp tbb}; do
  echo "== threading layer $layer"
  NUMBA_THREADING_LAYER=$layer TRANSPILE_CACHE_DIR=/tmp/tpc_$layer timeout ${DISPATCH_TIMEOUT:-120} \
    $PIN python3 bench/bench_dispatch.py > "$OUT/dispatch_$layer.log" 2>&1
  tail -${DISPATCH_TAIL:-6} "$OUT/dispatch_$layer.log"
done
[ -n "$FIRST_CALL" ] && TRANSPILE_CACHE_DIR=/tmp/tpc_first timeout ${FIRST_TIMEOUT:-300} \
  $PIN python3 bench/bench_first_call.py $FIRST_CALL 2>&1 | tee "$OUT/first_call.log"
exit 0
