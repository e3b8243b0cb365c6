#!/usr/bin/env bash
# 16 processes compile 4 graphs x 2 cpu targets (8 distinct modules, each wanted by 2 processes) into one fresh
# cache at once. 3 are SIGKILLed at staggered times while compiling; then, as soon as writers are publishing (entries
# are held back 1 s between writing their files and the rename, HIPINDUCTOR_CACHE_TEST_PUBLISH_DELAY_MS), up to 3
# writers are killed inside that window, found by the pid in their staging dir's name. Then: hipinductor-cache
# verify finds 0 corrupt entries, every graph compiles (or is read back) and runs correctly in a fresh process, and
# verify still finds 0 corrupt entries.
set -euo pipefail
tool=$1
driver=$2
src=$3
source "$(dirname "$0")/lib.sh"
export HIPINDUCTOR_CACHE_DIR=$work/cache
unset HIPINDUCTOR_DEBUG_DIR HIPINDUCTOR_CACHE_MAX_SIZE
start=$(date +%s.%N)

graphs=(softmax layernorm_gelu_residual pointwise_chain layernorm_decomposed)
targets=(cpu cpu-w64)
pids=()
for i in $(seq 0 15); do
  g=${graphs[$((i % 4))]}
  t=${targets[$(((i / 4) % 2))]}
  HIPINDUCTOR_CACHE_TEST_PUBLISH_DELAY_MS=1000 "$driver" "$src/examples/$g.json" "$t" >"$work/run$i.out" 2>&1 &
  pids+=($!)
done
declare -A killed=()
for v in 1 6 11; do  # mid-compile
  sleep 0.3
  kill -KILL "${pids[$v]}" 2>/dev/null && killed[${pids[$v]}]=compile
done
publishing=0
for _ in $(seq 200); do  # mid-publish: kill the writer named by a staging dir, up to 3 of them
  for dir in "$HIPINDUCTOR_CACHE_DIR"/*/.tmp-*; do
    [ -d "$dir" ] || continue
    pid=$(basename "$dir" | cut -d- -f3)
    if [ -z "${killed[$pid]:-}" ] && kill -KILL "$pid" 2>/dev/null; then
      killed[$pid]=publish
      publishing=$((publishing + 1))
      [ $publishing -ge 3 ] && break
    fi
  done
  [ $publishing -ge 3 ] && break
  sleep 0.05
done
for i in $(seq 0 15); do
  rc=0
  wait "${pids[$i]}" || rc=$?
  if [ -n "${killed[${pids[$i]}]:-}" ]; then
    [ $rc -eq 137 ] || fail "process $i (${killed[${pids[$i]}]} victim) exited $rc, not by SIGKILL"
    continue
  fi
  [ $rc -eq 0 ] || { cat "$work/run$i.out"; fail "process $i exited $rc"; }
  grep -q '^ok ' "$work/run$i.out" || { cat "$work/run$i.out"; fail "process $i: no ok line"; }
done
echo "round 1: ${#killed[@]} processes killed ($((${#killed[@]} - publishing)) compiling, $publishing publishing);" \
  "$(find "$HIPINDUCTOR_CACHE_DIR" -name '.tmp-*' | wc -l) staging dir(s) left behind"
[ $publishing -ge 1 ] || fail "no writer was caught publishing"

"$tool" verify >"$work/verify1" || { cat "$work/verify1"; fail "verify after the kills"; }
grep -q ", 0 corrupt" "$work/verify1" || fail "verify: $(cat "$work/verify1")"

# Every graph in a fresh process: compiles what the killed ones left undone, reads the rest, all correct.
pids=()
for g in "${graphs[@]}"; do
  for t in "${targets[@]}"; do
    "$driver" "$src/examples/$g.json" "$t" >"$work/check-$g-$t.out" 2>&1 &
    pids+=($!)
  done
done
for p in "${pids[@]}"; do wait "$p" || fail "a check run failed: $(cat "$work"/check-*.out)"; done
cat "$work"/check-*.out
[ "$(grep -c '^ok ' "$work"/check-*.out | awk -F: '{s += $2} END {print s}')" -eq 8 ] || fail "not every graph ran"

"$tool" verify --json >"$work/verify2.json" || { cat "$work/verify2.json"; fail "verify at the end"; }
python3 - "$work/verify2.json" <<'PY' || fail "verify --json"
import json, sys
v = json.load(open(sys.argv[1]))
assert v["corrupt"] == [], v["corrupt"]
assert v["checked"] >= 16, v  # 8 code-object entries + 8 graph entries
PY
"$tool" list --json | python3 -c 'import json,sys; e=json.load(sys.stdin); assert len(e)==8, len(e)' ||
  fail "expected 8 code-object entries"
end=$(date +%s.%N)
echo "16-process crash test: $(python3 -c "print(round($end - $start, 1))") s"
echo "1 passed, 0 failed"
