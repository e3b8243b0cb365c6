#!/usr/bin/env bash
# Ahead-of-time packages through the command line and the C++ API: `hipinductor-aot MODEL.pt2` (handed to Python)
# packages a kernels-only program for the cpu target (tests/python/test_aot.py covers the GPU targets), `--inspect`
# lists it, and hipinductor-run-package (pipeline/package.h, no Python) runs it with results equal to eager PyTorch's. A package with eager steps, a
# corrupt code object and another format version exit 2 naming the step or file.
set -euo pipefail
aot=$1
run_package=$2
src=$3
source "$(dirname "$0")/lib.sh"

python3 - "$work" <<'PY' || fail "exporting the test programs"
import sys, torch
work = sys.argv[1]

class NormGelu(torch.nn.Module):  # every op lowered: LayerNorm, gelu, the residual add
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.LayerNorm(48)
    def forward(self, x):
        return x + torch.nn.functional.gelu(self.norm(x) * 2.0)

class WithLinear(torch.nn.Module):  # a linear layer: an eager step (addmm)
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(48, 48)
    def forward(self, x):
        return torch.relu(self.fc(x))

torch.manual_seed(0)
x = torch.randn(4, 7, 48)
model = NormGelu().eval()
with torch.no_grad():
    model.norm.weight.uniform_(0.5, 1.5)
    model.norm.bias.uniform_(-0.5, 0.5)
torch.export.save(torch.export.export(model, (x,)), f"{work}/norm_gelu.pt2")
torch.export.save(torch.export.export(WithLinear().eval(), (x,)), f"{work}/linear.pt2")
x.numpy().tofile(f"{work}/x.bin")
model(x).detach().numpy().tofile(f"{work}/want.bin")
PY

"$aot" "$work/norm_gelu.pt2" --arch cpu -o "$work/norm_gelu.hipi" 2>"$work/log" ||
  { cat "$work/log"; fail "hipinductor-aot on a .pt2"; }
"$aot" --inspect "$work/norm_gelu.hipi" >"$work/inspect" || fail "--inspect"
grep -q "^target cpu: .* kernel" "$work/inspect" || { cat "$work/inspect"; fail "inspect lists the target"; }

"$run_package" "$work/norm_gelu.hipi" --input "$work/x.bin" --output "$work/got.bin" >"$work/run.log" 2>&1 ||
  { cat "$work/run.log"; fail "hipinductor-run-package"; }
grep -q "^target cpu:" "$work/run.log" || { cat "$work/run.log"; fail "the cpu target was not the one loaded"; }
python3 - "$work" <<'PY' || fail "C++ package output differs from eager"
import sys, numpy as np
got = np.fromfile(f"{sys.argv[1]}/got.bin", dtype=np.float32)
want = np.fromfile(f"{sys.argv[1]}/want.bin", dtype=np.float32)
assert got.shape == want.shape == (4 * 7 * 48,), (got.shape, want.shape)
err = float(np.abs(got - want).max())
assert err < 1e-4, err
PY

"$aot" "$work/linear.pt2" --arch cpu -o "$work/linear.hipi" 2>"$work/log" || { cat "$work/log"; fail "linear package"; }
set +e
"$run_package" "$work/linear.hipi" --input "$work/x.bin" --output "$work/y.bin" 2>"$work/err"
status=$?
set -e
[ "$status" = 2 ] && grep -q "step 0 runs aten.*in PyTorch" "$work/err" || { cat "$work/err"; fail "eager steps: exit $status"; }

cp -r "$work/norm_gelu.hipi" "$work/corrupt.hipi"
code=$(python3 -c "import json,sys; m=json.load(open(sys.argv[1])); print([t for t in m['targets'] if t['target']=='cpu'][0]['segments'][0]['code_object'])" "$work/corrupt.hipi/manifest.json")
printf 'garbage' | dd of="$work/corrupt.hipi/$code" bs=1 seek=200 conv=notrunc 2>/dev/null
expect_2 hipinductor-run-package "corrupt code object" "$run_package" "$work/corrupt.hipi" --input "$work/x.bin" --output "$work/y.bin"
grep -qF "$code: corrupt" "$work/stderr" || fail "the corrupt code object is not named"

cp -r "$work/norm_gelu.hipi" "$work/v99.hipi"
sed -i 's/"version": 1,/"version": 99,/' "$work/v99.hipi/manifest.json"
expect_2 hipinductor-run-package "other format version" "$run_package" "$work/v99.hipi" --input "$work/x.bin" --output "$work/y.bin"
grep -q "manifest.json: package format version 99" "$work/stderr" || fail "the version is not named"
echo "1 passed, 0 failed"
