"""tools/perf_sweep.py (the GPU performance sweep) checked on the CPU at tiny sizes: the catalogue builds, a handful of
cases are checked in worker processes, then timed one at a time, and land in the JSON with times and ratios, and bad input
exits 2. Not a measurement: the sweep runs on the GPU machine."""

import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(REPO, "tools", "perf_sweep.py")


def _cases_module():
    sys.path.insert(0, os.path.join(REPO, "tools"))
    try:
        import perf_cases
    finally:
        sys.path.pop(0)
    return perf_cases


def test_catalogue_covers_the_op_classes_and_names_cases_once():
    perf_cases = _cases_module()
    from hipinductor import _C

    cases = perf_cases.catalogue(perf_cases.Sizes(True, "cpu"), set(_C.lowered_ops()))
    names = [c.name for c in cases]
    assert len(names) == len(set(names))
    groups = {c.group for c in cases}
    for wanted in ("softmax", "layer_norm", "group_norm", "cross_entropy", "adam_step", "embedding", "cumsum",
                   "cummax", "max_pool2d", "interpolate_bilinear", "gather_dim1", "index_add", "max_with_indices",
                   "broadcast_mul_add", "t5_block", "layer_norm_train", "exp", "add", "sum"):
        assert wanted in groups, wanted
    assert any(c.grad for c in cases)
    # f32 and bf16 both, for the OpInfo ops too
    assert {"exp/f32", "exp/bf16"} <= {"/".join(n.split("/")[:2]) for n in names}


def test_sweep_runs_cases_on_the_cpu_and_writes_ratios(tmp_path):
    out = tmp_path / "sweep.json"
    env = dict(os.environ, HIPINDUCTOR_STRICT="0")
    p = subprocess.run([sys.executable, TOOL, "--device", "cpu", "--quick", "--variants", "eager,hipinductor",
                        "--filter", "cumsum/f32/1x4096,softmax/f32/4x1000,mse_loss/f32", "--jobs", "2",
                        "--rounds", "1", "--rep-ms", "1", "--no-opinfo", "--out", str(out)],
                       env=env, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert "perf sweep:" in p.stdout and "geomean vs Inductor" in p.stdout, p.stdout[-2000:]
    results = json.loads(out.read_text())
    cases = results["cases"]
    assert sorted(cases) == ["cumsum/f32/1x4096/dim-1", "mse_loss/f32/1x4096", "softmax/f32/4x1000"], sorted(cases)
    for name, row in cases.items():
        assert "error" not in row, (name, row)
        assert row["ok"], (name, row)
        assert row["eager_ms"] > 0 and row["hipinductor_ms"] > 0
        assert row["speedup_vs_eager"] == row["eager_ms"] / row["hipinductor_ms"]
    assert results["summary"]["timed"] == len(cases)
    assert results["summary"]["skipped_for_budget"] == []
    # Checked in parallel first (cold compile times kept), then each case timed alone.
    assert "timing 3 case(s) one at a time" in p.stdout, p.stdout[-2000:]
    for row in cases.values():
        assert row["hipinductor_first_call_s"] > 0
    assert p.stdout.count("compiled, matches eager") == 3, p.stdout[-2000:]


def test_sweep_stops_at_its_budget_and_says_so(tmp_path):
    env = dict(os.environ, HIPINDUCTOR_STRICT="0")
    p = subprocess.run([sys.executable, TOOL, "--device", "cpu", "--quick", "--variants", "eager,hipinductor",
                        "--filter", "mse_loss/f32", "--jobs", "1", "--budget", "0", "--no-opinfo",
                        "--out", str(tmp_path / "s.json")], env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "the time budget ran out; not run: mse_loss/f32" in p.stdout, p.stdout[-2000:]
    assert json.loads((tmp_path / "s.json").read_text())["summary"]["skipped_for_budget"]


def test_sweep_names_bad_input():
    for args, message in ((["--variants", "eager,triton"], "'triton' is not one of"),
                          (["--device", "tpu"], "'tpu' is not cuda or cpu"),
                          (["--device", "cpu", "--quick", "--filter", "no_such_case"], "no case matches")):
        p = subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True, timeout=300)
        assert p.returncode == 2 and message in p.stderr, (args, p.stderr[-1000:])


def test_compare_settles_a_disagreement_with_a_float64_reference():
    sys.path.insert(0, os.path.join(REPO, "tools"))
    try:
        import perf_sweep
    finally:
        sys.path.pop(0)
    perf_sweep._setup_paths()
    import torch

    # A bf16 running sum of 4096 elements: eager's bf16 accumulator drifts, a float accumulator rounded once does not.
    x = torch.rand(4096, dtype=torch.bfloat16)
    exact = torch.cumsum(x.double(), 0)
    acc, sums = torch.zeros((), dtype=torch.bfloat16), []
    for v in x:  # a bf16 accumulator, as a 16-bit scan that rounds every step
        acc = acc + v
        sums.append(acc)
    eager = torch.stack(sums)
    ours = exact.to(torch.bfloat16)
    worse = (eager.double() + 2 * (eager.double() - exact)).to(torch.bfloat16)  # three times eager's error
    assert not torch.allclose(ours.float(), eager.float(), atol=3e-2, rtol=3e-2)
    reference = perf_sweep._float64_reference(lambda t: torch.cumsum(t, 0), [x])
    assert perf_sweep._compare(ours, eager, reference)[::2] == (True, True)
    assert perf_sweep._compare(worse, eager, reference)[::2] == (False, False)
    assert perf_sweep._compare(ours, eager)[::2] == (False, False)  # no reference: eager's verdict
    assert perf_sweep._compare(eager, eager, reference) == (True, 0.0, False)


def test_sweep_times_the_gpu_and_the_host_apart():
    """The GPU timer: a call that is all host time (a 1 ms wait before a tiny kernel, within the 2 ms sleep kernel
    queued ahead of each timed call) has a small GPU time and a host time of at least the wait; a call that is all
    GPU time (a sleep kernel) the reverse."""
    import time

    import pytest
    import torch

    if not torch.cuda.is_available():
        pytest.skip("GPU machine only: run through scripts/gpu-check.sh")
    sys.path.insert(0, os.path.join(REPO, "tools"))
    try:
        import perf_sweep
    finally:
        sys.path.pop(0)
    perf_sweep._setup_paths()
    x = torch.zeros(16, device="cuda")

    def host_bound():
        time.sleep(0.001)
        x.add_(1)

    def gpu_bound():
        torch.cuda._sleep(int(2e7))

    gpu, host = perf_sweep._bench_gpu(host_bound, 5)
    assert host >= 1.0 and gpu < 0.5, (gpu, host)
    gpu, host = perf_sweep._bench_gpu(gpu_bound, 5)
    assert gpu > 3 * host and host < 0.5, (gpu, host)
