#!/usr/bin/env bash
# hipinductor-aot end to end: a good graph gives source, code objects and a manifest per arch; malformed input,
# an unknown arch or a missing file exit 2 with one line on stderr and no core dump; nothing half-written is left.
set -euo pipefail
aot=$1
src=$2
source "$(dirname "$0")/lib.sh"

"$aot" "$src/examples/softmax.json" --arch gfx90a,gfx942:sramecc+:xnack-,sm_90 -o "$work/out" 2>"$work/log" ||
  { cat "$work/log"; fail "good graph did not compile"; }
for f in softmax.gfx90a.hip softmax.gfx90a.hsaco softmax.gfx942_sramecc+_xnack-.hsaco softmax.sm_90.cubin manifest.json; do
  [ -s "$work/out/$f" ] || fail "missing $f (have: $(ls "$work/out"))"
done
python3 - "$work/out/manifest.json" <<'PY' || fail "manifest content"
import json, sys
m = json.load(open(sys.argv[1]))
assert [t["target"] for t in m["targets"]] == ["gfx90a", "gfx942:sramecc+:xnack-", "sm_90"], m["targets"]
k = m["targets"][0]["kernels"]
assert len(k) == 1 and k[0]["kind"] == "row_reduction", k
assert k[0]["facts"]["vgpr_spills"] == 0 and k[0]["facts"]["vgprs"] > 0, k[0]
assert m["inputs"][0]["sizes"] == ["32", "1000"], m["inputs"]
assert m["align"] == 0, m  # the example graph promises no alignment
PY
# A graph that promises 16-byte alignment: the manifest says so, and the kernels use the unchecked vector accesses.
python3 - "$src/examples/softmax.json" "$work/aligned.json" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))
g["version"], g["align"] = 2, 16
json.dump(g, open(sys.argv[2], "w"))
PY
"$aot" "$work/aligned.json" --arch sm_90 -o "$work/aligned" 2>"$work/log" || { cat "$work/log"; fail "aligned graph"; }
python3 -c "import json, sys; assert json.load(open(sys.argv[1]))['align'] == 16" "$work/aligned/manifest.json" ||
  fail "manifest without align"
grep 'hi_load_vec_aligned<' "$work/aligned/aligned.sm_90.hip" >/dev/null || fail "aligned graph kept checked loads"
# A graph with symbolic sizes compiles once: the manifest names its symbols, the kernels' size arguments and grids
# over them.
"$aot" "$src/tests/frontend/data/dynamic_softmax.json" --arch gfx942,sm_90 -o "$work/dynamic" 2>"$work/log" ||
  { cat "$work/log"; fail "symbolic graph did not compile"; }
python3 - "$work/dynamic/manifest.json" <<'PY' || fail "symbolic manifest content"
import json, sys
m = json.load(open(sys.argv[1]))
assert [s["name"] for s in m["symbols"]] == ["s0", "s1"], m["symbols"]
assert m["inputs"][0]["sizes"] == ["s0", "s1"], m["inputs"]
for t in m["targets"]:
    for k in t["kernels"]:
        sizes = [p for p in k["params"] if p["kind"] == "size"]
        assert sizes and all(p["symbol"] in m["kernel_symbols"] for p in sizes), k
        assert k["grid_symbols"], k  # the grid follows the sizes
PY
! ls "$work/out" | grep -q '\.tmp$' || fail "temporary files left behind"

printf '{"format": "hipinductor-graph", "version": 1, "nodes": [' >"$work/truncated.json"
expect_2 hipinductor-aot "truncated JSON" "$aot" "$work/truncated.json" -o "$work/bad"
sed 's/aten.amax.default/aten.frobnicate.default/' "$src/examples/softmax.json" >"$work/unknown_op.json"
expect_2 hipinductor-aot "unknown op" "$aot" "$work/unknown_op.json" -o "$work/bad"
expect_2 hipinductor-aot "missing file" "$aot" "$work/nope.json" -o "$work/bad"
expect_2 hipinductor-aot "unknown arch" "$aot" "$src/examples/softmax.json" --arch gfx9000 -o "$work/bad"
expect_2 hipinductor-aot "missing -o" "$aot" "$src/examples/softmax.json"
echo "1 passed, 0 failed"
