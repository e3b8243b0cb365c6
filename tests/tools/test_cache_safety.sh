#!/usr/bin/env bash
# hipinductor-cache on a tampered cache (entries written here, no compiler needed): shard directories and graphs/
# replaced with symbolic links to directories outside the cache are never listed, and clear and prune delete nothing
# there; verify names them (exit 1). `clear --target ''` is misuse (exit 2) and removes nothing. meta.json fields of
# the wrong type are reported by verify and break neither list, stats, show nor clear. Unreadable shard directories
# are reported by verify (run without the capabilities that let root read them).
set -euo pipefail
tool=$1
source "$(dirname "$0")/lib.sh"
cache=$work/cache
outside=$work/outside
export HIPINDUCTOR_CACHE_DIR=$cache
unset HIPINDUCTOR_CACHE_MAX_SIZE

# entry KEY [JSON]: a valid cpu code-object entry under KEY, its meta.json fields overridden by JSON.
# graph_entry KEY: a graph entry with a valid checksum (its payload lacks code_key: no reader takes it).
entry() {
  local change=${2:-}
  python3 - "$cache" "$1" "${change:-{\}}" <<'PY'
import hashlib, json, os, sys
root, key, change = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
d = os.path.join(root, key[:2], key)
os.makedirs(d, mode=0o700)
binary, source = b"\x7fELF not really", "extern \"C\" void k() {}\n"
open(os.path.join(d, "kernel.so"), "wb").write(binary)
open(os.path.join(d, "source.hip"), "w").write(source)
meta = {"format": "hipinductor-code-object-cache-v2", "key": key, "name_hint": "k", "kernels": ["k"],
        "target": "cpu", "compiler_name": "host-c++", "compiler": "c++ (test)", "options": ["-O2"],
        "prelude_version": "p", "hipinductor_version": "0.1.0", "compile_ms": 1.5, "created": "2026-01-01T00:00:00Z",
        "binary": "kernel.so", "binary_size": len(binary), "sha256": hashlib.sha256(binary).hexdigest(),
        "source_sha256": hashlib.sha256(source.encode()).hexdigest()}
meta.update(change)
open(os.path.join(d, "meta.json"), "w").write(json.dumps(meta))
PY
}
graph_entry() {
  python3 - "$cache" "$1" <<'PY'
import hashlib, os, sys
root, key = sys.argv[1], sys.argv[2]
d = os.path.join(root, "graphs", key[:2])
os.makedirs(d, mode=0o700, exist_ok=True)
payload = '{"format": "test", "target": "cpu"}\n'
open(os.path.join(d, key + ".json"), "w").write("sha256 " + hashlib.sha256(payload.encode()).hexdigest() + "\n" + payload)
PY
}
key() { printf '%s%062d' "$1" "$2"; }  # key PREFIX N: 64 hex digits starting with PREFIX
count() { "$tool" list --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }
files_outside() { find "$outside" -type f | wc -l; }

# --- symbolic links to outside the cache ---------------------------------------------------------------------------
entry "$(key aa 1)"
entry "$(key bb 1)"
graph_entry "$(key cc 1)"
# "bb" and graphs/ now point outside, where they keep their entries and a stale temporary.
mkdir -p "$outside"
mv "$cache/bb" "$outside/bb" && ln -s "$outside/bb" "$cache/bb"
mv "$cache/graphs" "$outside/graphs" && ln -s "$outside/graphs" "$cache/graphs"
mkdir "$outside/bb/.tmp-left-behind" && touch -d '2 hours ago' "$outside/bb/.tmp-left-behind"
before=$(files_outside)
[ "$before" -eq 4 ] || fail "setup: $before files outside"

[ "$(count)" = 1 ] || fail "list shows entries behind a symbolic link"
"$tool" stats --json | python3 -c '
import json, sys
s = json.load(sys.stdin)
assert s["entries"] == 1 and s["graph_entries"] == 0, s' || fail "stats counts entries behind a symbolic link"
set +e
"$tool" verify >"$work/verify"
rc=$?
set -e
[ $rc -eq 1 ] || { cat "$work/verify"; fail "verify with symbolic links: exit $rc, expected 1"; }
grep "UNREAD   $cache/bb: .*symbolic link" "$work/verify" >/dev/null &&
  grep "UNREAD   $cache/graphs: .*symbolic link" "$work/verify" >/dev/null ||
  { cat "$work/verify"; fail "verify does not name both symbolic links"; }
"$tool" verify --json >"$work/verify.json" || true  # exit 1, checked above
python3 -c '
import json, sys
v = json.load(open(sys.argv[1]))
assert v["checked"] == 1 and not v["corrupt"] and len(v["unread"]) == 2, v' "$work/verify.json" || fail "verify --json"
"$tool" prune --max-size 0 >/dev/null
"$tool" clear >/dev/null
[ "$(files_outside)" -eq "$before" ] && [ -d "$outside/bb/.tmp-left-behind" ] ||
  fail "prune or clear deleted files outside the cache"
[ "$(count)" = 0 ] || fail "clear left the entry inside the cache"
rm -rf "$cache" "$outside"

# --- clear --target '' ----------------------------------------------------------------------------------------------
entry "$(key aa 1)"
expect_2 hipinductor-cache "clear --target ''" "$tool" clear --target ''
expect_2 hipinductor-cache "list --target ''" "$tool" list --target ''
[ "$(count)" = 1 ] || fail "clear --target '' removed entries"

# --- meta.json fields of the wrong type -----------------------------------------------------------------------------
# Every field goes through each command. The variants of a command (text and --json, --target) read meta.json alike;
# in the sanitizer build (HIPINDUCTOR_TEST_SANITIZED=1, tests/CMakeLists.txt), where every process pays the
# sanitizers' start-up and exit leak check, they run for the first field only.
all_variants() { [ "$n" = 1 ] || [ -z "${HIPINDUCTOR_TEST_SANITIZED:-}" ]; }
n=0
for change in '{"target": 42}' '{"kernels": [1, 2]}' '{"options": "-O3"}' '{"compile_ms": "slow"}' \
              '{"binary": 7}' '{"name_hint": ["k"]}' '{"created": false}' \
              '{"loader_facts": {"kernels": [{"name": "k", "registers": "32"}]}}' \
              '{"hardware_facts": {"kernels": [{"name": 1}]}}' '{"tuning": {"dev": {"kernels": {"k": {"grid": -1}}}}}' \
              '{"tuning": {"dev": {"recorded": 1}}}'; do
  n=$((n + 1))
  bad=$(key dd "$n")
  entry "$bad" "$change"
  "$tool" list >/dev/null || fail "list with $change"
  "$tool" stats >/dev/null || fail "stats with $change"
  "$tool" show "$bad" >"$work/show" || fail "show with $change"
  if all_variants; then
    "$tool" list --json >/dev/null && "$tool" list --target cpu >/dev/null || fail "list variants with $change"
    "$tool" stats --json >/dev/null || fail "stats --json with $change"
    "$tool" show "$bad" --json >/dev/null || fail "show --json with $change"
  fi
  grep "checksum         CORRUPT: meta.json" "$work/show" >/dev/null || { cat "$work/show"; fail "show: $change"; }
  set +e
  "$tool" verify >"$work/verify"
  rc=$?
  set -e
  [ $rc -eq 1 ] && grep "CORRUPT  code-object entry $bad .*meta.json" "$work/verify" >/dev/null ||
    { cat "$work/verify"; fail "verify does not report $change (exit $rc)"; }
  if all_variants; then
    "$tool" clear --target cpu >/dev/null || fail "clear --target with $change"
  fi
  "$tool" clear >/dev/null || fail "clear with $change"
  [ "$(count)" = 0 ] || fail "clear left entries with $change"
  echo "ok: $change"
done

# --- a graph entry whose checksum holds but whose payload is not one (what a reader rebuilds) ----------------------
graph_entry "$(key cc 2)"
set +e
"$tool" verify >"$work/verify"
rc=$?
set -e
[ $rc -eq 1 ] && grep "CORRUPT  graph entry $(key cc 2) .*not a graph entry" "$work/verify" >/dev/null ||
  { cat "$work/verify"; fail "verify does not report a graph entry without code_key (exit $rc)"; }
"$tool" clear >/dev/null

# --- unreadable shard directories -----------------------------------------------------------------------------------
# root reads any directory; without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH it is held to the mode bits like others.
unprivileged() {
  if [ "$(id -u)" = 0 ]; then setpriv --bounding-set -dac_override,-dac_read_search "$@"; else "$@"; fi
}
entry "$(key aa 1)"
entry "$(key ee 1)"
chmod 000 "$cache/ee"
set +e
unprivileged "$tool" verify >"$work/verify"
rc=$?
set -e
chmod 700 "$cache/ee"
[ $rc -eq 1 ] && grep "UNREAD   $cache/ee: cannot read" "$work/verify" >/dev/null &&
  grep "1 entries checked, 0 corrupt, 1 directories not read" "$work/verify" >/dev/null ||
  { cat "$work/verify"; fail "verify with an unreadable shard: exit $rc"; }
"$tool" verify >/dev/null || fail "verify once the shard is readable again"
echo "1 passed, 0 failed"
