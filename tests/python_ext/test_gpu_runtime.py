"""hipinductor._C on GPUs: compile for the GPU's own target, run on CUDA tensors on PyTorch's streams, compare with eager.

The tests marked `gpu` need a GPU that PyTorch sees (run them through scripts/gpu-check.sh on the GPU machine); the
others run anywhere: the caller-supplied workspace on the cpu device, and the errors that say why there is no GPU
device. Run from the build tree: PYTHONPATH=build/python python3 -m pytest tests/python_ext/test_gpu_runtime.py
"""

import json
from pathlib import Path

import pytest
import torch

from hipinductor import _C

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
HAVE_GPU = torch.cuda.is_available()
GPU_KIND = "hip" if getattr(torch.version, "hip", None) else "cuda"

gpu = pytest.mark.skipif(not HAVE_GPU, reason="GPU machine only: run through scripts/gpu-check.sh")


def graph_json(nodes, outputs):
    return json.dumps({"format": "hipinductor-graph", "version": 1, "nodes": nodes, "outputs": outputs})


def placeholder(name, sizes, dtype="float32"):
    return {"name": name, "op": "placeholder", "meta": {"dtype": dtype, "sizes": sizes}}


def centered_json(rows, cols):
    """x - x.sum(0): a column reduction into the workspace, then a pointwise kernel reading it (2 kernels)."""
    return graph_json([
        placeholder("x", [rows, cols]),
        {"name": "s", "op": "aten.sum.dim_IntList", "args": [{"ref": "x"}, [0], True],
         "meta": {"dtype": "float32", "sizes": [1, cols]}},
        {"name": "d", "op": "aten.sub.Tensor", "args": [{"ref": "x"}, {"ref": "s"}],
         "meta": {"dtype": "float32", "sizes": [rows, cols]}},
    ], [{"ref": "d"}])


def aligned_workspace(nbytes, device="cpu"):
    """(tensor that owns it, 256-byte aligned pointer to at least nbytes); PyTorch's GPU blocks are already aligned."""
    t = torch.empty(nbytes + 256, dtype=torch.uint8, device=device)
    p = t.data_ptr()
    return t, p + (-p) % 256


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HIPINDUCTOR_CACHE_DIR", str(tmp_path / "cache"))


# --- anywhere ---------------------------------------------------------------------------------------------------

def test_caller_workspace_on_cpu_device():
    cg = _C.compile(centered_json(64, 100), "cpu", name="centered")
    assert cg.num_kernels >= 2 and cg.workspace_bytes > 0, cg.loop_ir
    x = torch.randn(64, 100)
    own, theirs = torch.empty_like(x), torch.empty_like(x)
    cg.run([x.data_ptr()], [own.data_ptr()])  # the runner's own workspace
    keep, ws = aligned_workspace(cg.workspace_bytes)
    cg.run([x.data_ptr()], [theirs.data_ptr()], workspace=ws)
    torch.testing.assert_close(own, x - x.sum(0))
    torch.testing.assert_close(theirs, x - x.sum(0))
    with pytest.raises(ValueError, match="256-byte aligned"):
        cg.run([x.data_ptr()], [theirs.data_ptr()], workspace=ws + 4)
    assert cg.kernel_facts == []  # the cpu device has no loader facts


def test_unknown_gpu_kind_is_a_value_error():
    with pytest.raises(ValueError, match="unknown GPU kind 'metal'"):
        _C.gpu_target("metal")


@pytest.mark.skipif(HAVE_GPU and GPU_KIND == "cuda", reason="an NVIDIA GPU is present")
def test_no_cuda_device_says_why():
    # No libcuda: the message names it and the files tried; libcuda without a GPU: the driver's error.
    with pytest.raises(RuntimeError, match=r"libcuda\.so\.1|CUDA_ERROR_"):
        _C.gpu_target("cuda")


@pytest.mark.skipif(HAVE_GPU and GPU_KIND == "hip", reason="an AMD GPU is present")
def test_no_hip_device_says_why():
    # No libamdhip64 (the NVIDIA machine): the message names the files tried; the library without a GPU (the dev
    # chroot): "no AMD GPU: hipInit returned hipErrorNoDevice ...".
    with pytest.raises(RuntimeError, match=r"libamdhip64\.so\.6|no AMD GPU"):
        _C.gpu_target("hip")


def test_gpu_graph_without_its_device_raises_the_device_message():
    if HAVE_GPU and GPU_KIND == "cuda":
        pytest.skip("an NVIDIA GPU is present")
    cg = _C.compile(centered_json(64, 100), "sm_90", name="centered")
    assert cg.kernel_facts == []  # NVIDIA facts come from the driver after the first run
    x = torch.randn(64, 100)
    with pytest.raises(RuntimeError, match=r"libcuda|CUDA_ERROR_"):
        cg.run([x.data_ptr()], [torch.empty_like(x).data_ptr()])


# --- on the GPU -------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def target():
    return _C.gpu_target(GPU_KIND, torch.cuda.current_device())


@gpu
def test_gpu_target_matches_the_device(target):
    info = _C.gpu_info(GPU_KIND, torch.cuda.current_device())
    assert info["target"] == target and target in info["name"]
    assert info["multiprocessors"] == torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
    if GPU_KIND == "cuda":
        major, minor = torch.cuda.get_device_capability()
        assert target == f"sm_{major}{minor}"
    else:
        assert target.split(":")[0] == torch.cuda.get_device_properties(0).gcnArchName.split(":")[0]


@gpu
def test_softmax_on_gpu(target):
    cg = _C.compile((EXAMPLES / "softmax.json").read_text(), target, name="softmax")
    x = torch.randn(32, 1000, device="cuda")
    out = torch.full_like(x, float("nan"))
    workspace = torch.empty(max(cg.workspace_bytes, 1), dtype=torch.uint8, device="cuda")
    cg.run([x.data_ptr()], [out.data_ptr()], stream=torch.cuda.current_stream().cuda_stream,
           workspace=workspace.data_ptr() if cg.workspace_bytes else 0, device=torch.cuda.current_device())
    # No synchronize: the comparison's own work is ordered after the kernels on the same (current) stream.
    torch.testing.assert_close(out, torch.softmax(x, -1), rtol=1e-5, atol=1e-6)

    facts = cg.kernel_facts
    assert [f["name"] for f in facts] == cg.kernel_names
    for f in facts:
        assert f["registers"] > 0 and f["max_threads_per_block"] >= 32, f
        assert f["static_shared_bytes"] >= 0 and f["local_bytes"] >= 0, f


@gpu
def test_autotune_on_gpu_keeps_results_and_records_grids(target, tmp_path):
    # Two kernels (a column reduction into the workspace, then a pointwise kernel), each run with several grids
    # before the run's own launch: the result is the plain run's, and the choice is recorded for this GPU.
    cg = _C.compile(centered_json(4096, 3000), target, name="centered")
    stream = torch.cuda.current_stream().cuda_stream
    x = torch.randn(4096, 3000, device="cuda")
    out = torch.full_like(x, float("nan"))
    workspace = torch.full((cg.workspace_bytes,), 0xFF, dtype=torch.uint8, device="cuda")
    cg.run([x.data_ptr()], [out.data_ptr()], stream=stream, workspace=workspace.data_ptr(),
           device=torch.cuda.current_device(), autotune=True)
    torch.testing.assert_close(out, x - x.sum(0), rtol=1e-4, atol=1e-4)
    grids = dict(cg.launch_grids(torch.cuda.current_device()))
    assert set(grids) == set(cg.kernel_names), grids
    metas = [m for m in (tmp_path / "cache").rglob("meta.json") if "graphs" not in m.parts]
    tunings = [json.loads(m.read_text()).get("tuning") for m in metas]
    ((device, record),) = [t for t in tunings if t][0].items()
    assert {k: v["grid"] for k, v in record["kernels"].items()}.items() <= grids.items(), (record, grids)
    assert all(len(v["ms"]) >= 2 for v in record["kernels"].values()), record


@gpu
def test_two_kernels_through_a_caller_workspace(target):
    cg = _C.compile(centered_json(512, 300), target, name="centered")
    assert cg.num_kernels >= 2 and cg.workspace_bytes > 0, cg.loop_ir
    stream = torch.cuda.current_stream().cuda_stream
    for trial in range(3):  # fresh inputs and a fresh workspace each time: stale data would show
        x = torch.randn(512, 300, device="cuda")
        out = torch.full_like(x, float("nan"))
        workspace = torch.full((cg.workspace_bytes,), 0xFF, dtype=torch.uint8, device="cuda")  # NaN-ish garbage
        cg.run([x.data_ptr()], [out.data_ptr()], stream=stream, workspace=workspace.data_ptr())
        torch.testing.assert_close(out, x - x.sum(0), rtol=1e-4, atol=1e-4, msg=f"trial {trial}")
    # Without a workspace the graph uses its own.
    x = torch.randn(512, 300, device="cuda")
    out = torch.empty_like(x)
    cg.run([x.data_ptr()], [out.data_ptr()], stream=stream)
    torch.testing.assert_close(out, x - x.sum(0), rtol=1e-4, atol=1e-4)


@gpu
def test_interleaves_with_eager_work_on_a_side_stream(target):
    # Large enough that the eager kernels before and after take a while: if run() ignored the stream (or waited on
    # the wrong one), it would read y before `x * 2` wrote it, or `out + 1` would read out before the graph wrote it.
    rows, cols = 4096, 2048
    cg = _C.compile(centered_json(rows, cols), target, name="centered_big")
    side = torch.cuda.Stream()
    results = []
    with torch.cuda.stream(side):
        for _ in range(4):
            x = torch.randn(rows, cols, device="cuda")
            y = (x * 2).sin().mul_(3)  # eager, on the side stream
            out = torch.empty_like(y)
            workspace = torch.empty(cg.workspace_bytes, dtype=torch.uint8, device="cuda")  # the side stream's pool
            cg.run([y.data_ptr()], [out.data_ptr()], stream=side.cuda_stream, workspace=workspace.data_ptr())
            z = out + 1  # eager again, after the graph in the stream's order
            results.append((y, z))
    # Only the default stream waits for the side stream; nothing else synchronizes.
    torch.cuda.current_stream().wait_stream(side)
    for y, z in results:
        torch.testing.assert_close(z, (y - y.sum(0)) + 1, rtol=1e-3, atol=1e-3)


@gpu
def test_code_for_another_gpu_is_refused(target):
    if GPU_KIND != "cuda":
        pytest.skip("NVIDIA case: a cubin for another sm")
    other = "sm_80" if target != "sm_80" else "sm_90"
    cg = _C.compile(centered_json(64, 100), other, name="centered_other")
    x = torch.randn(64, 100, device="cuda")
    with pytest.raises(RuntimeError, match=f"compiled for {other} cannot run on"):
        cg.run([x.data_ptr()], [torch.empty_like(x).data_ptr()], stream=torch.cuda.current_stream().cuda_stream)


@gpu
def test_device_out_of_range_raises(target):
    cg = _C.compile(centered_json(64, 100), target, name="centered")
    x = torch.randn(64, 100, device="cuda")
    with pytest.raises(RuntimeError, match="no (CUDA|AMD) GPU"):
        cg.run([x.data_ptr()], [torch.empty_like(x).data_ptr()], device=torch.cuda.device_count())


@gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_vector_paths_match_eager_on_odd_sizes_and_offsets(dtype):
    # Vector loads need aligned, contiguous runs: views at odd offsets take the scalar fallback at run time, sizes
    # that are not a multiple of the vector width take the tail loop, short rows share a warp, long rows a block.
    import hipinductor  # noqa: F401 - registers the backend

    def f(a, b, w):
        y = torch.relu(a + b) * 2
        s = torch.softmax(a.float(), -1)
        n = torch.nn.functional.layer_norm(a.float(), (a.shape[-1],), w.float())
        return y, s, n, a.sum(0)

    for rows, cols, offset in [(37, 1000, 0), (5, 4099, 1), (64, 96, 3), (3, 16384, 0)]:
        base = torch.randn(rows * cols + offset, device="cuda", dtype=dtype)
        a = base[offset:].view(rows, cols)
        b = torch.randn(rows, cols, device="cuda", dtype=dtype)
        w = torch.randn(cols, device="cuda", dtype=dtype)
        torch._dynamo.reset()
        got = torch.compile(f, backend="hipinductor")(a, b, w)
        want = f(a, b, w)
        for g, e in zip(got, want):
            tol = 2e-2 if dtype == torch.bfloat16 else 1e-4
            torch.testing.assert_close(g.float(), e.float(), atol=tol * max(1.0, e.float().abs().max().item()), rtol=tol)


@gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_gelu_tanh_on_gpu_matches_eager_at_the_edges(dtype):
    # The GPU's float gelu(tanh) is x * sigmoid(2u) with the fast exponential and division: eager's values at
    # +-inf, NaN, +-0, the saturated tails and everywhere between, within OpInfo's default float32 tolerances.
    import hipinductor  # noqa: F401 - registers the backend

    special = torch.tensor([float("inf"), float("-inf"), float("nan"), 0.0, -0.0, -1e4, -88.0, -30.0, -9.5, -5.0,
                            1e-30, -1e-30, 5.0, 30.0, 1e4], device="cuda")
    x = torch.cat([special, torch.linspace(-12, 12, 40001, device="cuda")]).to(dtype)
    torch._dynamo.reset()
    got = torch.compile(lambda a: torch.nn.functional.gelu(a, approximate="tanh"), backend="hipinductor")(x)
    want = torch.nn.functional.gelu(x, approximate="tanh")
    tol = dict(rtol=1.3e-6, atol=1e-5) if dtype == torch.float32 else dict(rtol=1.6e-2, atol=1e-5)
    torch.testing.assert_close(got, want, equal_nan=True, **tol)
    assert torch.equal(torch.signbit(got[:5]), torch.signbit(want[:5]))  # -0 stays -0


@gpu
def test_kernel_facts_after_a_run():
    import hipinductor

    x = torch.randn(4096, 4096, device="cuda")
    torch._dynamo.reset()
    hipinductor.clear_reports()
    torch.compile(lambda t: torch.softmax(t, -1), backend="hipinductor")(x)
    names = {r["name"] for r in hipinductor.reports()}
    facts = [f for f in hipinductor.kernel_facts() if f["graph"] in names]
    assert facts, hipinductor.reports()
    for f in facts:
        assert f["registers"] > 0 and f["local_bytes"] == 0, f  # no spills
