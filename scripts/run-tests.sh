#!/usr/bin/env bash
# All tests: the GoogleTest suites through ctest, then the Python tests (when the extension was built).
set -euo pipefail
build=${1:-build}
build_abs=$(cd "$build" && pwd)
# The loop IR is verified after every pass (CompileOptions::verify_passes), in the Python tests too.
export HIPINDUCTOR_VERIFY_PASSES=1
export HIPINDUCTOR_CACHE_DIR=${HIPINDUCTOR_CACHE_DIR:-$build_abs/test-cache}
# In a sanitizer build (make test SANITIZE=1) a report fails the test that hit it; stacks name the code at fault.
source "$(dirname "$0")/sanitizer-env.sh"
# TEST_LABELS (make test TEST_LABELS=...): only the C++ tests whose label matches (tests/CMakeLists.txt labels each
# test with its folder: frontend, ir, pipeline, runtime, tools, cache, fuzz).
labels=()
if [[ -n ${TEST_LABELS:-} ]]; then labels=(-L "$TEST_LABELS"); fi
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" "${labels[@]}"

# Python: the extension's tests and the package's, run against the build tree ($build/python, see
# python/CMakeLists.txt). pytest's exit code 5 (no tests collected) is not a failure.
if ! compgen -G "$build/python/hipinductor/_C*.so" >/dev/null; then
  echo "run-tests: no $build/python/hipinductor/_C*.so (HIPINDUCTOR_BUILD_PYTHON=OFF?): Python tests skipped"
  exit 0
fi
py_dirs=()
for dir in tests/python_ext tests/python; do
  if [[ -d $dir ]]; then py_dirs+=("$dir"); fi
done
if ((${#py_dirs[@]} == 0)); then
  exit 0
fi
status=0
PYTHONPATH="$build_abs/python${PYTHONPATH:+:$PYTHONPATH}" python3 -m pytest -q -p no:cacheprovider "${py_dirs[@]}" || status=$?
if ((status != 0 && status != 5)); then
  exit "$status"
fi
