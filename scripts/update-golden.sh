#!/usr/bin/env bash
# Rewrites tests/golden/*.hip from the current code generator (after an intended codegen change); review the diff.
set -euo pipefail
build=${1:-build}
HIPINDUCTOR_UPDATE_GOLDEN=1 ctest --test-dir "$build" -R 'Golden\.' --output-on-failure
git --no-pager diff --stat -- tests/golden || true
