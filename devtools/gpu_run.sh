#!/bin/bash
# Device batch: versions, GPU tests, GPU benchmarks; logs under $OUT. Run from the repo copy.
set -o pipefail
export PYTHONUNBUFFERED=1 TRANSPILE_CACHE_DIR=/tmp/tpc
{
nvidia-smi -L
python3 -c "import sys,numpy,numba,cupy,jax; print(sys.version); print('numpy',numpy.__version__,'numba',numba.__version__,'cupy',cupy.__version__,'jax',jax.__version__, jax.devices()); print(cupy.cuda.runtime.getDeviceProperties(0)['name'])"
} 2>&1 | tee $OUT/env.log
# test_mpirun_two_processes is left out: mpirun as root on the device machine needs
# OMPI_ALLOW_RUN_AS_ROOT and then hangs (no network there); it runs in the CPU suite.
timeout ${TEST_TIMEOUT:-240} python3 -m pytest -v -p no:cacheprovider -p timeout --timeout 90 -rs -o addopts="" \
  tests/test_gpu_device.py tests/test_jit_gpu_dispatch.py tests/test_gpu_codegen.py tests/test_pmap*.py \
  -k "not mpirun" ${EXTRA_TESTS} > $OUT/tests.log 2>&1
grep -E "PASSED|FAILED|ERROR|SKIPPED" $OUT/tests.log | grep -v PASSED | head -40; tail -1 $OUT/tests.log
timeout ${BENCH_TIMEOUT:-150} python3 bench/bench_gpu.py ${BENCH_ARGS} 2>&1 | tee $OUT/bench.log
timeout 90 python3 bench/bench_pmap_gpu.py 2>&1 | tee $OUT/pmap.log
[ -n "$PROFILE" ] && timeout 60 python3 devtools/profile_mlp.py > $OUT/profile.log 2>&1
[ -n "$SWEEP" ] && timeout 120 python3 devtools/sweep_blocks.py 2>&1 | tee $OUT/sweep.log
exit 0
