#!/usr/bin/env bash
# GPU suite, run on a machine with a GPU, ROCm or CUDA, and PyTorch (the lent H200: CUDA 13, PyTorch 2.11; no
# network there, so everything builds natively from what is installed). Builds, runs every test (the GPU ones
# included), the OpInfo sweep on the GPU and, with --bench, the benchmark. Results go to $RESULTS (default $OUT or
# ./gpu-results): ctest.log, pytest.log, sweep.json/.log, bench.json/.log.
set -uo pipefail
cd "$(dirname "$0")/.."
bench=0
[ "${1:-}" = "--bench" ] && bench=1
results=${RESULTS:-${OUT:-$PWD/gpu-results}}
mkdir -p "$results"
build=build-gpu
export HIPINDUCTOR_CACHE_DIR=${HIPINDUCTOR_CACHE_DIR:-/tmp/hipinductor-gpu-cache}
status=0

echo "== build" >&2
cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release >"$results/build.log" 2>&1 &&
  cmake --build $build -j "$(nproc)" >>"$results/build.log" 2>&1 || { tail -30 "$results/build.log"; exit 1; }

echo "== ctest" >&2
ctest --test-dir $build -j 8 --output-on-failure >"$results/ctest.log" 2>&1 || status=1
tail -3 "$results/ctest.log"

echo "== pytest (GPU tests included)" >&2
PYTHONPATH=$PWD/$build/python${EXTRA_PYTHONPATH:+:$EXTRA_PYTHONPATH} python3 -m pytest -q -p no:cacheprovider tests/python_ext tests/python \
  >"$results/pytest.log" 2>&1 || status=1
tail -3 "$results/pytest.log"

echo "== OpInfo sweep on cuda" >&2
# torch.testing._internal needs the pure-Python 'expecttest', which the GPU image lacks: point EXTRA_PYTHONPATH at a
# copy (e.g. Debian's python3-expecttest files, carried in an ignored folder). Without it the sweep cannot start.
if PYTHONPATH=${EXTRA_PYTHONPATH:-} python3 -c "import expecttest" 2>/dev/null; then
  PYTHONPATH=$PWD/$build/python:${EXTRA_PYTHONPATH:-} HIPINDUCTOR_STRICT=0 python3 tools/opinfo_sweep.py --device cuda \
    --jobs 8 --json "$results/sweep.json" >"$results/sweep.log" 2>&1 || status=1
  tail -1 "$results/sweep.log"
else
  echo "OpInfo sweep NOT RUN: python module 'expecttest' missing (set EXTRA_PYTHONPATH)" | tee "$results/sweep.log"
  status=1
fi

if [ $bench = 1 ]; then
  echo "== benchmark" >&2
  PYTHONPATH=$PWD/$build/python python3 bench/run_bench.py --out "$results/bench.json" >"$results/bench.log" 2>&1 ||
    status=1
  tail -15 "$results/bench.log"
fi
exit $status
