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
assert all("code_object_units" not in t for t in m["targets"]), m["targets"]  # small modules compile whole
PY
# A module past the GPU unit bound (CompileOptions::max_gpu_unit_kernel_bytes) compiles as several units: its code
# object file is a units container, counted in the manifest.
python3 -c "import sys; sys.path.insert(0, sys.argv[1]); from compile_scaling import softmax_chain
open(sys.argv[2], 'w').write(softmax_chain(30))" "$src/bench" "$work/chain.json"
"$aot" "$work/chain.json" --arch sm_90 -o "$work/chain" 2>"$work/log" || { cat "$work/log"; fail "long chain"; }
python3 - "$work/chain" <<'PY' || fail "long chain's units"
import json, sys
m = json.load(open(sys.argv[1] + "/manifest.json"))
(t,) = m["targets"]
assert t["code_object_units"] >= 2 and len(t["kernels"]) >= t["code_object_units"], t
assert open(sys.argv[1] + "/" + t["code_object"], "rb").read(8) == b"HIUNITS1"
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

# Unknown targets are refused by name before any compiler runs, and a run that fails writes nothing: not the good
# targets' files, not a staging directory.
expect_2 hipinductor-aot "unknown processor" "$aot" "$src/examples/softmax.json" --arch gfx999 -o "$work/bad"
grep "gfx999" "$work/stderr" >/dev/null || fail "message does not name gfx999"
expect_2 hipinductor-aot "unknown feature" "$aot" "$src/examples/softmax.json" --arch gfx942:bogus+ -o "$work/bad"
grep "bogus" "$work/stderr" >/dev/null || fail "message does not name the feature"
expect_2 hipinductor-aot "mixed targets" "$aot" "$src/examples/softmax.json" --arch gfx90a,gfx999 -o "$work/bad"
[ ! -e "$work/bad" ] || fail "a failed run left $work/bad: $(ls -A "$work/bad")"
! ls -A "$work" | grep '\.tmp' >/dev/null || fail "a failed run left a staging directory: $(ls -A "$work")"
touch "$work/a_file"
expect_2 hipinductor-aot "-o naming a file" "$aot" "$src/examples/softmax.json" --arch sm_90 -o "$work/a_file"

# Rewriting an existing output directory replaces its files; a write that fails (the file-size limit stands in for
# a full disk) exits 1 and leaves the directory as it was, with no staging directory next to it.
"$aot" "$src/examples/softmax.json" --arch sm_90 -o "$work/out" 2>"$work/log" || { cat "$work/log"; fail "rerun"; }
cp "$work/out/manifest.json" "$work/manifest.before"
set +e
(ulimit -f 1; exec "$aot" "$src/examples/softmax.json" --arch sm_90,gfx90a -o "$work/out") 2>"$work/stderr"
rc=$?
set -e
[ $rc -eq 1 ] || { cat "$work/stderr"; fail "failed write: exit $rc, expected 1"; }
grep "^hipinductor-aot: .*cannot write" "$work/stderr" >/dev/null || { cat "$work/stderr"; fail "failed write message"; }
cmp -s "$work/out/manifest.json" "$work/manifest.before" || fail "failed write changed the manifest"
! ls -A "$work" "$work/out" | grep '\.tmp' >/dev/null || fail "failed write left temporary files: $(ls -A "$work")"

# Duplicate keys, over-long echoes of input, input past the size limit and endless input are bad input, on one
# bounded line naming the file.
sed 's/"format": "hipinductor-graph"/"format": "hipinductor-graph", "format": "hipinductor-graph"/' \
  "$src/examples/softmax.json" >"$work/dup.json"
expect_2 hipinductor-aot "duplicate key" "$aot" "$work/dup.json" -o "$work/bad"
grep "dup.json: .*appears twice" "$work/stderr" >/dev/null || fail "duplicate key message"
python3 - "$src/examples/softmax.json" "$work/long.json" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))
g["nodes"][1]["op"] = "aten." + "x" * 5_000_000
json.dump(g, open(sys.argv[2], "w"))
PY
expect_2 hipinductor-aot "5 MB op name" "$aot" "$work/long.json" -o "$work/bad"
[ "$(wc -c <"$work/stderr")" -le 501 ] || fail "error line of $(wc -c <"$work/stderr") bytes"
grep "long.json" "$work/stderr" >/dev/null || fail "long error line does not name the file"
expect_2 hipinductor-aot "input over the limit" "$aot" "$work/long.json" --max-input-size 1000 -o "$work/bad"
expect_2 hipinductor-aot "endless input" "$aot" /dev/zero --max-input-size 1000000 -o "$work/bad"
grep "/dev/zero: .*limit" "$work/stderr" >/dev/null || fail "endless input message"
python3 - "$src/examples/softmax.json" "$work/strides.json" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))
g["nodes"][0]["meta"]["strides"] = [2**62, 2**62]
json.dump(g, open(sys.argv[2], "w"))
PY
expect_2 hipinductor-aot "absurd strides" "$aot" "$work/strides.json" -o "$work/bad"
grep "meta.strides" "$work/stderr" >/dev/null || fail "absurd strides message does not name the field"
[ ! -e "$work/bad" ] || fail "bad input left $work/bad"
echo "1 passed, 0 failed"
