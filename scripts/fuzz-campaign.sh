#!/usr/bin/env bash
# Runs the libFuzzer harnesses (tests/fuzz) of a HIPINDUCTOR_FUZZ build: each one for a time or a number of inputs,
# starting from the seed corpus, with the format's dictionary. docs/fuzzing.md says how to read and minimise what it
# finds. Exit status: 0 when no harness found anything, 1 when one did, 2 on bad usage.
#
#   scripts/fuzz-campaign.sh [--seconds S | --runs N] [--harness NAME]... [--jobs J] [--timeout T] [--seed K]
#                            [BUILD_DIR]
#
#   --seconds S   run each harness for S seconds (default 60)
#   --runs N      run each harness on N inputs instead (libFuzzer -runs)
#   --harness H   only this harness (graph_reader, aot_pipeline; repeatable; default both)
#   --jobs J      J fuzzing processes per harness sharing one corpus (default 1)
#   --timeout T   an input running longer than T seconds is a finding (a hang; default 25)
#   --seed K      libFuzzer's random seed (default: a new one each run); a fixed seed makes a run from the same
#                 corpus try the same inputs first, as CI's slice does, so its verdict does not change by chance
#   BUILD_DIR     the build holding the harnesses (default build-asan, what `make test SANITIZE=1` configures)
#
# Under BUILD_DIR/fuzz/: corpus/<harness>/ (the inputs found so far, kept between runs: the seeds in tests/fuzz/corpus
# are read, never written), findings/<harness>/ (crash-*, timeout-*, oom-*, leak-* inputs), <harness>.log.
set -uo pipefail
cd "$(dirname "$0")/.."

seconds=60
runs=""
jobs=1
seed=""
timeout=25
harnesses=()
build=build-asan
usage() { sed -n '2,/^set /p' "$0" | sed -e '/^set /d' -e 's/^# \{0,1\}//' >&2; exit 2; }
while (($#)); do
  case $1 in
    --seconds) seconds=${2:?}; shift 2 ;;
    --runs) runs=${2:?}; shift 2 ;;
    --seed) seed=${2:?}; shift 2 ;;
    --harness) harnesses+=("${2:?}"); shift 2 ;;
    --jobs) jobs=${2:?}; shift 2 ;;
    --timeout) timeout=${2:?}; shift 2 ;;
    -h|--help) usage ;;
    -*) echo "fuzz-campaign: unknown option $1" >&2; usage ;;
    *) build=$1; shift ;;
  esac
done
((${#harnesses[@]})) || harnesses=(graph_reader aot_pipeline)
if [[ ! -d $build ]]; then
  echo "fuzz-campaign: no build directory $build" >&2
  exit 2
fi
build=$(cd "$build" && pwd)
root=$PWD

# Sanitizer reports abort (libFuzzer saves the input); symbolised stacks for the log.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
source "$root/scripts/sanitizer-env.sh"
unset HIPINDUCTOR_DEBUG_DIR

# libFuzzer's slow-unit-* files (an input over 10 s) are not counted: a loaded machine writes them for any input.
count_findings() { find "$1" -type f \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' -o -name 'leak-*' \) | wc -l; }

status=0
for h in "${harnesses[@]}"; do
  bin=$build/tests/fuzz/hi_fuzz_$h
  if [[ ! -x $bin ]]; then
    echo "fuzz-campaign: no $bin (configure with -DHIPINDUCTOR_FUZZ=ON and clang: make build SANITIZE=1)" >&2
    exit 2
  fi
  corpus=$build/fuzz/corpus/$h
  findings=$build/fuzz/findings/$h
  log=$build/fuzz/$h.log
  mkdir -p "$corpus" "$findings"
  before=$(count_findings "$findings")
  limit=(-max_total_time="$seconds")
  [[ -n $runs ]] && limit=(-runs="$runs")
  parallel=()
  ((jobs > 1)) && parallel=(-jobs="$jobs" -workers="$jobs")
  [[ -n $seed ]] && parallel+=(-seed="$seed")
  amount="$seconds s"
  [[ -n $runs ]] && amount="$runs runs"
  echo "fuzz-campaign: $h: $amount, $jobs process(es), log $log"
  # -max_len: the seeds' graphs are up to a few KB; room for mutations to grow them. Run from BUILD_DIR/fuzz, where
  # libFuzzer's -jobs writes its per-process logs (fuzz-<n>.log).
  rm -f "$build"/fuzz/fuzz-*.log
  (cd "$build/fuzz" && "$bin" -dict="$root/tests/fuzz/graph.dict" -artifact_prefix="$findings/" \
    -timeout="$timeout" -max_len=16384 -print_final_stats=1 "${limit[@]}" "${parallel[@]}" "$corpus" \
    "$root/tests/fuzz/corpus") >"$log" 2>&1
  rc=$?
  after=$(count_findings "$findings")
  grep -h -E '^(stat::number_of_executed_units|stat::peak_rss_mb|Done [0-9]+ runs)' "$log" "$build"/fuzz/fuzz-*.log \
    2>/dev/null | sed "s/^/fuzz-campaign: $h: /"
  echo "fuzz-campaign: $h: corpus $(find "$corpus" -type f | wc -l) inputs, $((after - before)) new finding(s)"
  if ((rc != 0 || after > before)); then
    status=1
    grep -h -E -A3 'fuzz finding|ERROR: (AddressSanitizer|libFuzzer|LeakSanitizer)|runtime error:' "$log" | head -40
    ls -t "$findings" | head -5 | sed "s|^|fuzz-campaign: $h: finding $findings/|"
  fi
done
exit "$status"
