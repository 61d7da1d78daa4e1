#!/bin/bash
# The foreign corpus benchmark on a quiet machine (the device machine's CPU cores): SHARDS
# processes, each pinned to two cores of its own and two Numba threads, as on the development
# machine; one summary over all kernels (or NAMES, space-separated; REVERSE=1 starts from the
# last kernel). Logs under $OUT.
set -o pipefail
export PYTHONUNBUFFERED=1 NUMBA_NUM_THREADS=2 TRANSPILE_TIERS=0
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
SHARDS=${SHARDS:-6}
for ((i = 0; i < SHARDS; i++)); do
  cores="$((2 + 2 * i)),$((3 + 2 * i))"
  PIN="taskset -c $cores"; $PIN true 2>/dev/null || PIN=""
  TRANSPILE_CACHE_DIR=/tmp/tpf_$i timeout ${FOREIGN_TIMEOUT:-480} $PIN python3 bench/bench_foreign.py \
    ${REVERSE:+--reverse} --shard $i/$SHARDS --json "$OUT/rows$i.json" 1 ${NAMES} > "$OUT/foreign$i.log" 2>&1 &
done
wait
python3 bench/bench_foreign.py --merge "$OUT"/rows*.json | tee "$OUT/foreign_summary.log"
exit 0
