"""hipinductor._C, the C++ extension: compile graph JSON, run it on the cpu device against eager PyTorch, errors.

Run from the build tree: PYTHONPATH=build/python python3 -m pytest tests/python_ext (scripts/run-tests.sh does).
"""

import importlib.metadata
import json
import os
import threading
from pathlib import Path

import pytest
import torch

from hipinductor import _C

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def example(name):
    return (EXAMPLES / f"{name}.json").read_text()


def graph_json(nodes, outputs):
    return json.dumps({"format": "hipinductor-graph", "version": 1, "nodes": nodes, "outputs": outputs})


def placeholder(name, sizes, dtype="float32"):
    return {"name": name, "op": "placeholder", "meta": {"dtype": dtype, "sizes": sizes}}


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    """Every test compiles into its own cache, so cache hits are only the ones a test makes."""
    monkeypatch.setenv("HIPINDUCTOR_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture(scope="module")
def softmax_cpu():
    return _C.compile(example("softmax"), "cpu", name="softmax", use_cache=False)


def test_module_facts():
    assert _C.version() == "0.1.0"
    assert _C.codegen_version()
    ops = _C.lowered_ops()
    assert "aten.add.Tensor" in ops and "aten.native_layer_norm.default" in ops
    assert ops == sorted(ops)
    assert _C.has_lowering("aten.exp.default")
    assert not _C.has_lowering("aten.no_such_op.default")


def test_op_schema_facts():
    # The C++ op-schema table's facts that the Python side reads instead of restating them.
    ops, views = _C.schema_ops(), _C.view_ops()
    assert ops == sorted(ops) and views == sorted(views) and set(views) <= set(ops)
    assert set(_C.lowered_ops()) <= set(ops)
    for view in ("aten.view.default", "aten.permute.default", "aten.split.Tensor", "aten.unbind.int"):
        assert view in views
    for op in ("aten.add.Tensor", "aten.clone.default", "aten._unsafe_view.default"):
        assert op in ops and op not in views
    assert _C.vector_alignment() == 16


def test_parse_target():
    assert _C.parse_target("cpu") == "cpu"
    assert _C.parse_target("cpu-w64") == "cpu-w64"
    assert _C.parse_target("gfx942:sramecc+:xnack-") == "gfx942:sramecc+:xnack-"
    assert _C.parse_target("sm_90") == "sm_90"
    with pytest.raises(ValueError, match="gfx"):
        _C.parse_target("not-a-gpu")


def test_cache_dir_follows_environment(private_cache):
    assert Path(_C.cache_dir()) == private_cache


def test_softmax_runs_on_cpu_device(softmax_cpu):
    cg = softmax_cpu
    assert (cg.name, cg.target) == ("softmax", "cpu")
    assert (cg.num_inputs, cg.num_outputs) == (1, 1)
    assert cg.num_kernels == 1 == len(cg.kernel_names), cg.kernels_text
    assert "__global__" in cg.kernels_text
    assert all(k in cg.source for k in cg.kernel_names)
    assert len(cg.source) > len(cg.kernels_text)
    assert cg.loop_ir and cg.lower_ms > 0 and cg.compile_ms > 0 and not cg.cache_hit
    # Per-step times, in pipeline order; the steps before the compiler call add up to lower_ms.
    steps = cg.stage_ms
    assert list(steps) == ["lower", "split", "fuse", "plan_memory", "emit", "compile"], steps
    assert steps["compile"] == cg.compile_ms
    assert 0 < sum(v for k, v in steps.items() if k != "compile") <= cg.lower_ms

    x = torch.randn(32, 1000)
    out = torch.empty(32, 1000)
    cg.run([x.data_ptr()], [out.data_ptr()])
    torch.testing.assert_close(out, torch.softmax(x, -1), rtol=1e-5, atol=1e-6)


def test_prepare_loads_ahead_and_run_takes_the_loaded_graph(private_cache):
    # A graph compiled ahead of its first call (a background variant) is loaded where it compiled: prepare() makes the
    # runner a first run() would (twice is once), and run() then uses it.
    cg = _C.compile(example("softmax"), "cpu", name="softmax_prepared", use_cache=False)
    assert cg.launch_grids(0) == []  # no runner yet
    cg.prepare(0)
    grids = cg.launch_grids(0)
    assert grids and grids[0][0] == cg.kernel_names[0], grids  # the runner exists, loaded
    cg.prepare(0)
    assert cg.launch_grids(0) == grids
    x = torch.randn(32, 1000)
    out = torch.empty(32, 1000)
    cg.run([x.data_ptr()], [out.data_ptr()])
    torch.testing.assert_close(out, torch.softmax(x, -1), rtol=1e-5, atol=1e-6)
    assert cg.launch_grids(0) == grids


def test_layernorm_gelu_residual_with_64_wide_warps():
    cg = _C.compile(example("layernorm_gelu_residual"), target="cpu-w64", name="ln")
    assert cg.target == "cpu-w64" and cg.num_inputs == 3
    x, w, b = torch.randn(64, 256), torch.randn(256), torch.randn(256)
    out = torch.empty(64, 256)
    cg.run([x.data_ptr(), w.data_ptr(), b.data_ptr()], [out.data_ptr()])
    expected = torch.nn.functional.gelu(torch.nn.functional.layer_norm(x, (256,), w, b, 1e-5), approximate="tanh") + x
    torch.testing.assert_close(out, expected, rtol=1e-4, atol=1e-5)


def test_symbolic_graph_compiles_once_and_runs_every_size(private_cache):
    # The softmax of examples/ over {"sym": "s0"} x {"sym": "s1"} rows, in float32.
    doc = json.loads(example("softmax"))
    symbolic = {32: {"sym": "s0"}, 1000: {"sym": "s1"}, 1: 1}
    for node in doc["nodes"]:
        node["meta"]["sizes"] = [symbolic[size] for size in node["meta"]["sizes"]]
        node["meta"].pop("strides")
    text = json.dumps(doc)
    cg = _C.compile(text, "cpu", name="dynamic_softmax")
    assert cg.symbols == ["s0", "s1"] and cg.symbol_divisors == [1, 1]
    assert cg.workspace_bytes_for([3, 5]) % 256 == 0
    for rows, cols in [(1, 1), (3, 7), (5, 1000), (2, 4099)]:
        x = torch.randn(rows, cols)
        out = torch.empty(rows, cols)
        cg.run([x.data_ptr()], [out.data_ptr()], sizes=[rows, cols])
        torch.testing.assert_close(out, torch.softmax(x, -1), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="s1 = 0"):
        cg.run([x.data_ptr()], [out.data_ptr()], sizes=[2, 0])
    with pytest.raises(ValueError, match="size value"):
        cg.run([x.data_ptr()], [out.data_ptr()])
    # A new process (here: a new compile) with another size finds the graph entry.
    again = _C.compile(text, "cpu", name="dynamic_softmax_again")
    assert again.cache_hit and again.symbols == ["s0", "s1"]


def test_a_symbol_only_in_strides_is_a_symbol_of_the_graph(private_cache):
    # Rows of s1 columns taken from rows of s5: s5 appears in no size (the AOT fuzzer's find: the loop IR's verifier
    # refused the index over s5 as "not a variable of its domain").
    doc = json.loads(open(os.path.join(os.path.dirname(__file__), "..", "fuzz", "corpus",
                                       "regress-stride-only-symbol.json")).read())
    cg = _C.compile(json.dumps(doc), "cpu", name="stride_symbol", use_cache=False)
    assert cg.symbols == ["s0", "s1", "s5"]
    for rows, cols, row_stride in [(1, 1, 1), (3, 7, 10), (4, 33, 33), (2, 1000, 4099)]:
        base = torch.randn(rows, row_stride)
        x = base[:, :cols]
        out = torch.empty(rows * cols)
        cg.run([x.data_ptr()], [out.data_ptr()], sizes=[rows, cols, row_stride])
        torch.testing.assert_close(out, torch.softmax(x, -1).reshape(-1) * 2, rtol=1e-5, atol=1e-6)


def test_run_checks_argument_counts(softmax_cpu):
    x = torch.randn(32, 1000)
    with pytest.raises(ValueError, match="1 inputs and 1 outputs"):
        softmax_cpu.run([x.data_ptr()], [])


def test_concurrent_runs_of_one_graph(softmax_cpu):
    errors = []

    def worker():
        try:
            for _ in range(5):
                x = torch.randn(32, 1000)
                out = torch.empty(32, 1000)
                softmax_cpu.run([x.data_ptr()], [out.data_ptr()])
                torch.testing.assert_close(out, torch.softmax(x, -1), rtol=1e-5, atol=1e-6)
        except BaseException as e:  # reported below, in the test's thread
            errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_second_compile_hits_the_cache(private_cache):
    source = graph_json(
        [placeholder("x", [4, 8]), {"name": "neg", "op": "aten.neg.default", "args": [{"ref": "x"}]}],
        [{"ref": "neg"}],
    )
    first = _C.compile(source)
    assert not first.cache_hit
    assert any(private_cache.rglob("meta.json")), "the first compile stored no cache entry"
    second = _C.compile(source)
    assert second.cache_hit and second.compile_ms == 0
    assert not _C.compile(source, use_cache=False).cache_hit

    x = torch.randn(4, 8)
    out = torch.empty(4, 8)
    second.run([x.data_ptr()], [out.data_ptr()])
    assert torch.equal(out, -x)


def _tuning_record(cache):
    """The cache's one code-object meta.json: its path, its content and the tuning record of its one device."""
    (meta_path,) = [m for m in cache.rglob("meta.json") if "graphs" not in m.parts]
    meta = json.loads(meta_path.read_text())
    ((_, record),) = meta["tuning"].items()
    return meta_path, meta, record


def test_autotune_times_grids_and_records_the_choice_next_to_the_code_object(private_cache):
    # On the cpu device the candidates are the whole grid (32 blocks here, the default) and a quarter of it; the
    # choice is recorded in the code-object entry's meta.json per device, and a later autotuned runner of that entry
    # (a warm start) takes the recorded grid instead of timing again. A runner without autotune keeps the default.
    def run(cg, autotune):
        x = torch.randn(32, 1000)
        out = torch.empty(32, 1000)
        cg.run([x.data_ptr()], [out.data_ptr()], autotune=autotune)
        torch.testing.assert_close(out, torch.softmax(x, -1), rtol=1e-5, atol=1e-6)

    first = _C.compile(example("softmax"), "cpu", name="softmax")
    (kernel,) = first.kernel_names
    assert first.launch_grids() == []
    run(first, True)
    meta_path, meta, record = _tuning_record(private_cache)
    tuned = record["kernels"][kernel]
    assert set(tuned["ms"]) == {"32", "8"} and all(t > 0 for t in tuned["ms"].values()), tuned
    assert first.launch_grids() == [(kernel, tuned["grid"])]

    other = 8 if tuned["grid"] == 32 else 32  # a record the next runner can only have read
    tuned["grid"] = other
    meta_path.write_text(json.dumps(meta))
    second = _C.compile(example("softmax"), "cpu", name="softmax")  # a graph-entry hit: a new runner
    assert second.cache_hit
    run(second, True)
    assert second.launch_grids() == [(kernel, other)]
    third = _C.compile(example("softmax"), "cpu", name="softmax")
    run(third, False)
    assert third.launch_grids() == [(kernel, 32)]


def _run_on_one_block(cache, source, name, run):
    """Compiles `source` on the cpu device and runs it autotuned (`run(compiled)`), rewrites the recorded grid of its
    one kernel to a single block, compiles again (a warm start that takes the record) and runs that. Returns the first
    run's tuning record and the second compiled graph."""
    first = _C.compile(source, "cpu", name=name)
    (kernel,) = first.kernel_names
    run(first)
    meta_path, meta, record = _tuning_record(cache)
    tried = dict(record["kernels"][kernel])
    record["kernels"][kernel]["grid"] = 1
    meta_path.write_text(json.dumps(meta))
    second = _C.compile(source, "cpu", name=name)
    run(second)
    assert second.launch_grids() == [(kernel, 1)]
    return tried, second


def test_column_slices_loop_over_their_groups_on_a_smaller_grid(private_cache):
    # x[2048,64].sum(0): 16 groups of 4 outputs, 8 groups x 128 row slices per block, so 2 blocks by default. A tuning
    # record of grid 1 (the cpu device's other candidate) makes the one block take both groups in turn: its grid-stride
    # loop runs twice, shared memory reused after the trailing barrier.
    source = graph_json(
        [placeholder("x", [2048, 64]),
         {"name": "s", "op": "aten.sum.dim_IntList", "args": [{"ref": "x"}, [0]]}],
        [{"ref": "s"}],
    )
    x = torch.randn(2048, 64)

    def run(cg):
        out = torch.empty(64)
        cg.run([x.data_ptr()], [out.data_ptr()], autotune=True)
        torch.testing.assert_close(out, x.sum(0), rtol=1e-5, atol=1e-4)

    tried, _ = _run_on_one_block(private_cache, source, "cols", run)
    assert set(tried["ms"]) == {"2", "1"}, tried


@pytest.mark.parametrize("norm", ["rms", "layer"])
def test_block_rows_loop_over_their_rows_on_a_smaller_grid(private_cache, norm):
    # Rows of 4096 f32 take a block each (256 threads reducing through shared memory). A tuning record of grid 1 makes
    # the one block take all 6 rows in turn: RMSNorm's one reduction per row alternates two shared arrays by row
    # parity, LayerNorm's two reductions reuse their own arrays row after row.
    x = torch.randn(6, 4096) * 3 + 1
    if norm == "rms":
        nodes = [placeholder("x", [6, 4096]),
                 {"name": "sq", "op": "aten.mul.Tensor", "args": [{"ref": "x"}, {"ref": "x"}]},
                 {"name": "ms", "op": "aten.mean.dim", "args": [{"ref": "sq"}, [-1], True]},
                 {"name": "eps", "op": "aten.add.Tensor", "args": [{"ref": "ms"}, 1e-6]},
                 {"name": "r", "op": "aten.rsqrt.default", "args": [{"ref": "eps"}]},
                 {"name": "y", "op": "aten.mul.Tensor", "args": [{"ref": "x"}, {"ref": "r"}]}]
        want = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
    else:
        nodes = [placeholder("x", [6, 4096]),
                 {"name": "y", "op": "aten.native_layer_norm.default",
                  "args": [{"ref": "x"}, [4096], None, None, 1e-5]}]
        want = torch.nn.functional.layer_norm(x, (4096,))
    source = graph_json(nodes, [{"ref": "y", "output": 0} if norm == "layer" else {"ref": "y"}])

    def run(cg):
        out = torch.empty(6, 4096)
        cg.run([x.data_ptr()], [out.data_ptr()], autotune=True)
        torch.testing.assert_close(out, want, rtol=1e-5, atol=1e-5)

    _, second = _run_on_one_block(private_cache, source, norm, run)
    assert "hi_block_reduce_free" in second.source


def test_debug_dir_gets_every_stage(tmp_path):
    _C.compile(example("softmax"), name="sm", debug_dir=str(tmp_path / "dump"))
    written = {p.name for p in (tmp_path / "dump" / "sm").iterdir()}
    assert {"graph.json", "loop_ir.txt", "kernels.txt", "plan.txt", "module.cpu.hip"} <= written


def op_without_lowering():
    for op in ("aten.mm.default", "aten.bmm.default", "aten.argmax.default"):
        if not _C.has_lowering(op):
            return op
    pytest.skip("every candidate op has a lowering now; pick another")


def test_lowering_error_names_the_node():
    op = op_without_lowering()
    a, b = placeholder("a", [4, 4]), placeholder("b", [4, 4])
    args = [{"ref": "a"}, {"ref": "b"}] if op != "aten.argmax.default" else [{"ref": "a"}]
    source = graph_json([a, b, {"name": "prod", "op": op, "args": args}], [{"ref": "prod"}])
    with pytest.raises(_C.LoweringError) as info:
        _C.compile(source)
    assert isinstance(info.value, RuntimeError)
    assert info.value.node == "prod"
    assert str(info.value).startswith(f"node 'prod' ({op}): ")


def test_graph_format_errors():
    with pytest.raises(_C.GraphFormatError) as info:
        _C.compile("{not json", name="broken")
    assert isinstance(info.value, RuntimeError)
    assert str(info.value).startswith("broken")
    assert info.value.node is None

    bad_arg = graph_json(
        [placeholder("x", [4]), {"name": "add", "op": "aten.add.Tensor", "args": [{"ref": "x"}, "oops"]}],
        [{"ref": "add"}],
    )
    with pytest.raises(_C.GraphFormatError, match=r"node 'add' \(aten.add.Tensor\)") as info:
        _C.compile(bad_arg)
    assert info.value.node == "add"


def test_bad_target_is_a_value_error():
    with pytest.raises(ValueError):
        _C.compile(example("softmax"), target="gfx")


def test_gpu_target_compiles_but_does_not_run():
    try:
        cg = _C.compile(example("softmax"), target="gfx90a", name="softmax_amd")
    except RuntimeError as e:
        if isinstance(e, (_C.CompileError, _C.LoweringError, _C.GraphFormatError)):
            raise
        pytest.skip(f"no HIPRTC here: {e}")
    assert cg.target == "gfx90a" and "__global__" in cg.kernels_text
    x = torch.randn(32, 1000)
    with pytest.raises(RuntimeError, match="no gfx90a device in this build"):
        cg.run([x.data_ptr()], [x.data_ptr()])


def test_warm_up_starts_only_nvrtc(monkeypatch):
    monkeypatch.setenv("CXX", "/nonexistent/c++")  # a cpu warm-up that ran the host compiler would raise
    _C.warm_up("cpu")
    _C.warm_up("gfx942:sramecc+:xnack-")
    with pytest.raises(ValueError, match="invalid target"):
        _C.warm_up("gfx")
    try:
        _C.warm_up("sm_90")
    except RuntimeError as e:
        if isinstance(e, _C.CompileError):
            raise
        pytest.skip(f"no NVRTC here: {e}")


def test_dynamo_entry_point_is_registered():
    try:
        importlib.metadata.distribution("hipinductor")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("no hipinductor distribution metadata on sys.path (not the build tree nor an installed wheel)")
    eps = importlib.metadata.entry_points()
    if hasattr(eps, "select"):
        group = eps.select(group="torch_dynamo_backends")
    else:  # Python 3.9: a dict of groups
        group = eps.get("torch_dynamo_backends", [])
    values = {ep.name: ep.value for ep in group}
    assert values.get("hipinductor") == "hipinductor.backend:hipinductor_backend"
