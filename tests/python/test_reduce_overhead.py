"""mode="reduce-overhead": CUDA/HIP graph capture and replay through CUDA graph trees (hipinductor/cuda_graphs.py).

The CPU tests check that the mode is accepted, that graphs which cannot be captured run as without it with the
reason reported, and that unknown modes and arguments are rejected. The GPU tests (the GPU machine only) check
replays against eager, the overwritten-output error and training."""

import logging

import pytest
import torch

import hipinductor
from hipinductor import cuda_graphs

_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="GPU machine only: run through scripts/gpu-check.sh")


def _mlp(x, w1, w2):
    return torch.nn.functional.layer_norm(torch.relu(x @ w1) @ w2 + x, (x.shape[-1],))


def test_cpu_tensors_run_without_capture_and_report_why(caplog):
    cuda_graphs._warned.clear()
    hipinductor.clear_reports()
    w1, w2 = torch.randn(32, 64), torch.randn(64, 32)
    compiled = torch.compile(_mlp, backend="hipinductor", mode="reduce-overhead")
    with caplog.at_level(logging.WARNING, logger="hipinductor"):
        for _ in range(3):
            x = torch.randn(4, 32)
            torch.testing.assert_close(compiled(x, w1, w2), _mlp(x, w1, w2))
    report = hipinductor.reports()[-1]
    assert report["cuda_graphs"] is False
    assert "cpu" in report["cuda_graphs_reason"]
    warnings = [r for r in caplog.records if "without CUDA graphs" in r.getMessage()]
    assert len(warnings) == 1, "one warning per reason"


def test_default_mode_reports_no_capture():
    hipinductor.clear_reports()
    x = torch.randn(4, 8)
    torch.compile(torch.sin, backend="hipinductor", mode="default")(x)
    report = hipinductor.reports()[-1]
    assert report["cuda_graphs"] is False and report["cuda_graphs_reason"] is None


@pytest.mark.parametrize("mode", ["max-autotune", "reduce_overhead"])
def test_unknown_modes_are_rejected_listing_the_supported_ones(mode):
    with pytest.raises(Exception, match="supported modes: 'default', 'reduce-overhead'"):
        torch.compile(torch.sin, backend="hipinductor", mode=mode)(torch.randn(3))


def test_unknown_backend_arguments_are_rejected():
    relu = torch.fx.symbolic_trace(torch.nn.ReLU())
    with pytest.raises(ValueError, match="unsupported mode 'fast'"):
        hipinductor.hipinductor_backend(relu, [torch.randn(2)], mode="fast")
    with pytest.raises(ValueError, match="unexpected backend arguments \\['fullgraph_please'\\]"):
        hipinductor.hipinductor_backend(relu, [torch.randn(2)], fullgraph_please=True)


def test_cuda_graphs_option_is_the_same_switch():
    assert hipinductor.Options.from_dict({"cuda_graphs": True}).cuda_graphs
    assert not hipinductor.Options.from_dict(None).cuda_graphs


def _gpu_graph(op, *args):
    """A one-op ATen graph whose values are fake CUDA tensors (no GPU needed to build it)."""
    from torch._subclasses import FakeTensorMode

    with FakeTensorMode(allow_non_fake_inputs=True):
        x = torch.empty(4, 8, device="cuda")
        out = op(x, *args)
    g = torch.fx.Graph()
    p = g.placeholder("x")
    p.meta["val"] = x
    n = g.call_function(op, (p, *args))
    n.meta["val"] = out
    g.output((n,))
    return torch.fx.GraphModule(torch.nn.Module(), g), [x]


def test_capture_blockers_name_the_op():
    aten = torch.ops.aten
    assert cuda_graphs.capture_blocker(*_gpu_graph(aten.sin.default)) is None
    reason = cuda_graphs.capture_blocker(*_gpu_graph(aten.add_.Tensor, 1.0))
    assert "aten.add_.Tensor" in reason and "in place" in reason
    gm, inputs = _gpu_graph(aten.sin.default)
    gm.graph.call_function(aten._local_scalar_dense.default, (next(iter(gm.graph.nodes)),))
    reason = cuda_graphs.capture_blocker(gm, inputs)
    assert "aten._local_scalar_dense.default" in reason and "host" in reason
    cpu = torch.fx.symbolic_trace(torch.nn.ReLU())
    assert "cpu" in cuda_graphs.capture_blocker(cpu, [torch.randn(2)])


def test_symbolic_sizes_are_recorded_up_to_the_cap_then_run_uncaptured(monkeypatch, caplog):
    from torch.fx.experimental.symbolic_shapes import ShapeEnv
    import torch._inductor.compile_fx as compile_fx

    gm, inputs = _gpu_graph(torch.ops.aten.sin.default)
    size = gm.graph.placeholder("s0")
    size.meta["val"] = ShapeEnv().create_unbacked_symint()
    recorded = []
    monkeypatch.setattr(compile_fx, "cudagraphify",
                        lambda model, static, **kwargs: lambda args: recorded.append(args[0]) or "replayed")
    monkeypatch.setattr(cuda_graphs, "max_recorded_sizes", lambda: 3)
    cuda_graphs._warned.clear()
    report = {}
    run = cuda_graphs.wrap(lambda *args: "uncaptured", gm, inputs, "inference", (), report)
    assert report == {"cuda_graphs": True, "cuda_graphs_reason": None}
    with caplog.at_level(logging.WARNING, logger="hipinductor"):
        assert [run([n]) for n in (1, 2, 3, 1)] == ["replayed"] * 4
        assert run([4]) == "uncaptured"
        assert run([2]) == "replayed"
    assert recorded == [1, 2, 3, 1, 2]
    assert "more than 3 input sizes" in report["cuda_graphs_reason"]
    assert sum("more than 3 input sizes" in r.getMessage() for r in caplog.records) == 1


@_gpu
def test_replays_match_eager_as_inputs_change():
    hipinductor.clear_reports()
    dev = "cuda"
    w1, w2 = torch.randn(256, 512, device=dev), torch.randn(512, 256, device=dev)
    compiled = torch.compile(_mlp, backend="hipinductor", mode="reduce-overhead")
    for i in range(6):
        x = torch.randn(16, 256, device=dev) * (i + 1)
        torch.testing.assert_close(compiled(x, w1, w2), _mlp(x, w1, w2), rtol=1e-4, atol=1e-4)
    report = hipinductor.reports()[-1]
    assert report["cuda_graphs"] is True and report["cuda_graphs_reason"] is None


def _read_after_overwrite(backend: str) -> str:
    """Calls a function compiled with mode="reduce-overhead" twice (a warm-up run, then the recording, which reuses
    the warm-up's memory) and reads the first call's output: what happens, in a word."""
    torch._dynamo.reset()
    compiled = torch.compile(lambda x: torch.sin(x) * 2, backend=backend, mode="reduce-overhead")
    x = torch.randn(1024, device="cuda")
    first = compiled(x)
    second = compiled(x)
    torch.testing.assert_close(second, torch.sin(x) * 2)
    try:
        first + 1
    except RuntimeError as e:
        return "overwritten" if "overwritten by a subsequent" in str(e) else f"other error: {e}"
    return "readable"


@_gpu
def test_reading_an_overwritten_output_raises_inductors_error():
    assert _read_after_overwrite("hipinductor") == "overwritten"
    assert _read_after_overwrite("inductor") == "overwritten"  # the behaviour users know, unchanged
    torch.compiler.cudagraph_mark_step_begin()


@_gpu
def test_training_gradients_match_the_uncaptured_run():
    def model():
        torch.manual_seed(0)
        return torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(), torch.nn.LayerNorm(128),
                                   torch.nn.Linear(128, 64)).cuda()

    plain, captured = model(), model()
    run_plain = torch.compile(plain, backend="hipinductor")
    run_captured = torch.compile(captured, backend="hipinductor", mode="reduce-overhead")
    for step in range(4):
        x = torch.randn(32, 64, device="cuda") * (step + 1)
        torch.compiler.cudagraph_mark_step_begin()
        run_plain(x).square().mean().backward()
        run_captured(x).square().mean().backward()
        for a, b in zip(plain.parameters(), captured.parameters()):
            torch.testing.assert_close(b.grad, a.grad, rtol=1e-5, atol=1e-6)
            a.grad = b.grad = None
    assert any(r["cuda_graphs"] for r in hipinductor.reports() if r["name"].startswith("backward"))
