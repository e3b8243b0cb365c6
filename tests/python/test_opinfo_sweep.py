"""PyTorch's OpInfo database through torch.compile(backend="hipinductor"), against eager: float32 and bfloat16 (the
sweep's default), and other dtypes on request.

Runs tools/opinfo_sweep.py (which prints every pair that does not match, with its reason, and the counts) and holds
it to the bar: >= 90 % of the pairs tried match eager, >= 70 % of those outside linear algebra, FFT and sparse run
entirely in hipinductor (no eager fallback op)."""

import json
import os
import subprocess
import sys


REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _sweep_module():
    sys.path.insert(0, os.path.join(REPO, "tools"))
    try:
        import opinfo_sweep
    finally:
        sys.path.pop(0)
    return opinfo_sweep


def test_opinfo_sweep_matches_eager(tmp_path):
    env = dict(os.environ, HIPINDUCTOR_STRICT="0")  # the sweep measures what users get: faults run eagerly
    p = subprocess.run([sys.executable, os.path.join(REPO, "tools", "opinfo_sweep.py"), "--jobs",
                        str(min(os.cpu_count() or 1, 4)), "--min-match", "0.9", "--min-entirely", "0.7",
                        "--json", str(tmp_path / "sweep.json")],
                       env=env, capture_output=True, text=True, timeout=1800)
    print(p.stdout)
    summary = [line for line in p.stdout.splitlines() if line.startswith("opinfo sweep:")]
    assert summary, p.stderr[-3000:]
    assert p.returncode == 0, summary[-1]


def test_sweep_skips_only_random_ops_and_by_word_where_a_fragment_would_catch_others():
    # "lu" (the factorization) once skipped gelu, silu, relu and every other name containing the letters, and "qr"
    # sqrt and rsqrt.
    opinfo_sweep = _sweep_module()

    class Op:
        def __init__(self, name):
            self.name = name

    kept = ["nn.functional.gelu", "nn.functional.silu", "nn.functional.relu", "nn.functional.glu", "column_stack",
            "kthvalue", "detach", "nn.functional.normalize", "softmax", "sqrt", "rsqrt", "resolve_conj", "lu",
            "linalg.vector_norm", "special.ndtr", "_softmax_backward_data", "count_nonzero", "nn.functional.layer_norm"]
    skipped = ["normal", "randn", "nn.functional.dropout", "nn.functional.rrelu", "bernoulli", "empty_like",
               "normal.number_mean", "nn.functional.feature_alpha_dropout"]
    assert [n for n in kept if opinfo_sweep.skipped_family(Op(n))] == []
    assert [n for n in skipped if not opinfo_sweep.skipped_family(Op(n))] == []


def test_sweep_takes_other_dtypes_and_names_a_bad_one(tmp_path):
    tool = os.path.join(REPO, "tools", "opinfo_sweep.py")
    env = dict(os.environ, HIPINDUCTOR_STRICT="0")
    p = subprocess.run([sys.executable, tool, "--ops", "abs,add", "--dtypes", "int64,float64", "--jobs", "1",
                        "--min-match", "1.0", "--json", str(tmp_path / "sweep.json")],
                       env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    with open(tmp_path / "sweep.json") as f:
        pairs = {(r["op"], r["dtype"]): r["status"] for r in json.load(f)}
    assert pairs == {(op, d): "match" for op in ("abs", "add") for d in ("int64", "float64")}, pairs
    bad = subprocess.run([sys.executable, tool, "--dtypes", "float32,floaty"], env=env, capture_output=True,
                         text=True, timeout=600)
    assert bad.returncode == 2 and "'floaty' is not a torch dtype" in bad.stderr, bad.stderr[-2000:]


def test_sweep_compares_gradients_with_grad():
    opinfo_sweep = _sweep_module()
    import torch
    from torch.testing._internal.opinfo.core import SampleInput

    x = torch.randn(7, requires_grad=True)
    w = torch.randn(7, requires_grad=True)
    out, grads = opinfo_sweep._grads(lambda a, b: (a.sin() * b, a.argmax()), SampleInput(x, args=(w,)), [x, w])
    torch.testing.assert_close(out[0], x.sin() * w)
    torch.testing.assert_close(grads[0], x.cos() * w)
    torch.testing.assert_close(grads[1], x.sin())
    env = dict(os.environ, HIPINDUCTOR_STRICT="0")
    p = subprocess.run([sys.executable, os.path.join(REPO, "tools", "opinfo_sweep.py"), "--ops",
                        "nn.functional.gelu,softmax", "--dtypes", "float32", "--grad", "--jobs", "1",
                        "--min-match", "1.0"], env=env, capture_output=True, text=True, timeout=600)
    # gelu, softmax and softmax.with_dtype, each with its backward graph
    summary = p.stdout + p.stderr[-2000:]
    assert p.returncode == 0 and "3 pairs tried" in p.stdout and "3 match" in p.stdout, summary
