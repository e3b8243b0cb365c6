#!/usr/bin/env bash
# All tests: the GoogleTest suites through ctest, then the Python tests (when the extension was built).
set -euo pipefail
build=${1:-build}
export HIPINDUCTOR_CACHE_DIR=${HIPINDUCTOR_CACHE_DIR:-$PWD/$build/test-cache}
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
