#!/usr/bin/env bash
# hipinductor-cache end to end on a fresh cache filled by hipinductor-aot (gfx90a, gfx942 through HIPRTC, sm_90
# through NVRTC, cpu through the host compiler; no GPU needed): list (--json, filters, sorting), show (prefix keys,
# hardware facts), source, disasm (AMD ISA through comgr; NVIDIA without cuobjdump: one line, exit 1), stats (hits
# and misses persisted across processes), verify (a flipped byte and a truncated code object are reported, exit 1;
# the next compile reports and rebuilds them), prune, clear (--target), and misuse (exit 2, one line).
set -euo pipefail
tool=$1
aot=$2
driver=$3
src=$4
source "$(dirname "$0")/lib.sh"
export HIPINDUCTOR_CACHE_DIR=$work/cache
unset HIPINDUCTOR_DEBUG_DIR HIPINDUCTOR_CACHE_MAX_SIZE
py() { python3 - "$@"; }

"$aot" "$src/examples/softmax.json" --arch gfx90a,gfx942:sramecc+:xnack-,sm_90,cpu -o "$work/aot" 2>"$work/log" ||
  { cat "$work/log"; fail "aot compile"; }
[ "$(stat -c %a "$HIPINDUCTOR_CACHE_DIR")" = 700 ] || fail "cache directory mode is not 0700"

# list
"$tool" list --json >"$work/list.json"
py "$work/list.json" <<'PY' || fail "list --json"
import json, sys
entries = json.load(open(sys.argv[1]))
assert sorted(e["target"] for e in entries) == ["cpu", "gfx90a", "gfx942:sramecc+:xnack-", "sm_90"], entries
for e in entries:
    assert e["kernels"] == ["fused_amax_sub_exp_sum_div_0"], e
    assert e["name_hint"] == "softmax" and e["hipinductor_version"] and e["compiler"] and e["compile_ms"] > 0, e
    assert len(e["sha256"]) == 64 and e["bytes"] > e["binary_size"] > 0, e
    assert e["path"].endswith(e["key"]) and e["last_used"].endswith("Z"), e
    if e["target"].startswith("gfx"):
        k = e["hardware_facts"]["kernels"][0]
        assert k["vgprs"] > 0 and k["sgprs"] > 0 and k["vgpr_spills"] == 0 and k["wavefront_size"] == 64, k
        assert 1 <= k["waves_per_simd"] <= 8, k
PY
[ "$("$tool" list --target gfx942 --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" = 1 ] ||
  fail "list --target gfx942"
[ "$("$tool" list --kernel amax_sub --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" = 4 ] ||
  fail "list --kernel"
[ "$("$tool" list --kernel nope --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" = 0 ] ||
  fail "list --kernel nope"
"$tool" list --sort size | sed -n 2p | grep "cpu" >/dev/null || fail "list --sort size: the cpu .so is the largest"
"$tool" list --sort compile-time >/dev/null && "$tool" list --sort age >/dev/null || fail "list --sort"

key_of() { python3 -c 'import json,sys; print([e["key"] for e in json.load(open(sys.argv[1])) if e["target"]==sys.argv[2]][0])' "$work/list.json" "$1"; }
amd=$(key_of gfx90a)
nv=$(key_of sm_90)
cpu=$(key_of cpu)

# show, source, disasm
"$tool" show "${amd:0:10}" >"$work/show" || fail "show by prefix"
grep -q "waves/SIMD" "$work/show" && grep -q "$amd" "$work/show" && grep -q "source.hip" "$work/show" ||
  { cat "$work/show"; fail "show text"; }
"$tool" show "$nv" | grep "not recorded (no GPU load yet)" >/dev/null || fail "show: NVIDIA facts before a GPU load"
"$tool" show "$amd" --json | python3 -c '
import json, sys
j = json.load(sys.stdin)
assert j["status"] == "ok" and j["target"] == "gfx90a" and j["hardware_facts"]["kernels"][0]["vgprs"] > 0, j' ||
  fail "show --json"
"$tool" show "$cpu" | grep "launch tuning    none" >/dev/null || fail "show: no tuning before autotune"
python3 - "$HIPINDUCTOR_CACHE_DIR/${cpu:0:2}/$cpu/meta.json" <<'PY' || fail "writing a tuning record"
import json, sys
meta = json.load(open(sys.argv[1]))
meta["tuning"] = {"cpu (test)": {"recorded": "2026-11-30T00:00:00Z", "kernels": {
    "fused_amax_sub_exp_sum_div_0": {"grid": 8, "ms": {"32": 0.0125, "8": 0.0101}}}}}
open(sys.argv[1], "w").write(json.dumps(meta))
PY
"$tool" show "$cpu" >"$work/show_cpu"
grep -q "launch tuning    on cpu (test)" "$work/show_cpu" && grep -q "fused_amax_sub_exp_sum_div_0  *8  32: 12.5, 8: 10.1" "$work/show_cpu" ||
  { cat "$work/show_cpu"; fail "show: launch tuning"; }
"$tool" source "$cpu" | grep "__global__" >/dev/null || fail "source"
"$tool" source "$cpu" --json | python3 -c 'import json,sys; assert "__global__" in json.load(sys.stdin)["source"]' ||
  fail "source --json"
"$tool" disasm "$amd" >"$work/isa" || fail "disasm gfx90a"
grep -q "s_endpgm" "$work/isa" && grep -q "fused_amax_sub_exp_sum_div_0" "$work/isa" || fail "disasm: no gfx90a ISA"
"$tool" disasm "$(key_of gfx942:sramecc+:xnack-)" --json | python3 -c '
import json, sys
assert "s_endpgm" in json.load(sys.stdin)["disassembly"]' || fail "disasm gfx942 --json"
set +e
PATH=/nonexistent "$tool" disasm "$nv" >"$work/out" 2>"$work/err"
rc=$?
set -e
[ $rc -eq 1 ] && [ "$(wc -l <"$work/err")" -eq 1 ] && grep -q "cuobjdump" "$work/err" ||
  { cat "$work/err"; fail "disasm sm_90 without cuobjdump: exit $rc"; }

# stats: a second aot run is all hits, counted across processes.
"$aot" "$src/examples/softmax.json" --arch gfx90a,cpu -o "$work/aot2" 2>/dev/null
"$tool" stats --json >"$work/stats.json"
python3 - "$work/stats.json" <<'PY' || fail "stats --json"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["entries"] == 4 and s["graph_entries"] == 4, s
assert s["targets"]["gfx90a"]["misses"] == 1 and s["targets"]["gfx90a"]["hits"] == 1, s["targets"]["gfx90a"]
assert s["targets"]["gfx90a"]["graph_hits"] == 1 and s["targets"]["sm_90"]["hits"] == 0, s["targets"]
assert s["bytes"] > 0 and s["max_bytes"] == 2 << 30, s
PY
"$tool" stats | grep "gfx90a" >/dev/null || fail "stats text"

# verify: corrupt one code object by a flipped byte, truncate another.
"$tool" verify >/dev/null || fail "verify on a good cache"
python3 - "$HIPINDUCTOR_CACHE_DIR/${amd:0:2}/$amd/kernel.hsaco" <<'PY'
import sys
p = sys.argv[1]; b = bytearray(open(p, "rb").read()); b[len(b) // 2] ^= 0x10; open(p, "wb").write(b)
PY
truncate -s 100 "$HIPINDUCTOR_CACHE_DIR/${cpu:0:2}/$cpu/kernel.so"
set +e
"$tool" verify >"$work/verify"
rc=$?
set -e
[ $rc -eq 1 ] || fail "verify with corrupt entries: exit $rc"
grep -q "CORRUPT.*$amd.*sha256 mismatch" "$work/verify" && grep -q "CORRUPT.*$cpu.*kernel.so: 100 bytes" "$work/verify" ||
  { cat "$work/verify"; fail "verify does not list both corrupt entries"; }
grep -q "2 corrupt" "$work/verify" || fail "verify count"
# The next compile reports each once (naming the entry) and rebuilds it.
"$aot" "$src/examples/softmax.json" --arch gfx90a,cpu -o "$work/aot3" 2>"$work/rebuild"
grep -q "$amd is corrupt" "$work/rebuild" && grep -q "$cpu is corrupt" "$work/rebuild" ||
  { cat "$work/rebuild"; fail "rebuild did not report the corrupt entries"; }
"$tool" verify >/dev/null || fail "verify after the rebuild"
"$driver" "$src/examples/softmax.json" cpu | grep "^ok " >/dev/null || fail "the rebuilt cpu entry does not run"

# misuse: exit 2, one line naming the tool
expect_2 hipinductor-cache "unknown command" "$tool" frobnicate
expect_2 hipinductor-cache "no command" "$tool"
expect_2 hipinductor-cache "unknown option" "$tool" list --frobnicate
expect_2 hipinductor-cache "bad size" "$tool" prune --max-size 12X
expect_2 hipinductor-cache "unknown key" "$tool" show 0000000
expect_2 hipinductor-cache "not a key" "$tool" show ../../etc
expect_2 hipinductor-cache "bad --sort" "$tool" list --sort colour
expect_2 hipinductor-cache "bad --target" "$tool" clear --target gfx9000

# --cache-dir overrides the environment
"$tool" list --cache-dir "$work/empty" --json | python3 -c 'import json,sys; assert json.load(sys.stdin) == []' ||
  fail "--cache-dir"

# prune: to a size between one and all entries, then to nothing.
total=$("$tool" stats --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["bytes"])')
"$tool" prune --max-size $((total - 1)) | grep "pruned [1-9]" >/dev/null || fail "prune removed nothing"
left=$("$tool" stats --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["bytes"])')
[ "$left" -lt "$total" ] || fail "prune: $left >= $total"
"$tool" verify >/dev/null || fail "verify after prune"

# clear --target, then clear
"$aot" "$src/examples/softmax.json" --arch gfx90a,gfx942:sramecc+:xnack-,cpu -o "$work/aot4" 2>/dev/null
"$tool" clear --target gfx90a | grep "removed 2 entries" >/dev/null || fail "clear --target gfx90a (code + graph entry)"
"$tool" list --json | python3 -c '
import json, sys
targets = sorted(e["target"] for e in json.load(sys.stdin))
assert "gfx90a" not in targets and "gfx942:sramecc+:xnack-" in targets and "cpu" in targets, targets' ||
  fail "clear --target removed the wrong entries"
"$tool" clear | grep "removed" >/dev/null || fail "clear"
"$tool" stats --json | python3 -c '
import json, sys
s = json.load(sys.stdin)
assert s["entries"] == 0 and s["graph_entries"] == 0 and s["hits"] == 0, s' || fail "cache not empty after clear"
echo "1 passed, 0 failed"
