"""torch.compile(backend="hipinductor") on small programs: results, fusion, fallbacks, reports, options, faults."""

import logging

import pytest
import torch

import hipinductor


def compile(fn, **options):
    return torch.compile(fn, backend="hipinductor", options=options or None)


def test_backend_found_through_entry_point_without_import():
    from importlib.metadata import entry_points

    names = [e.name for e in entry_points(group="torch_dynamo_backends")]
    assert "hipinductor" in names


def test_softmax_is_one_kernel_and_matches_eager():
    hipinductor.clear_reports()
    x = torch.randn(64, 300)
    out = compile(lambda t: torch.softmax(t, dim=-1))(x)
    torch.testing.assert_close(out, torch.softmax(x, dim=-1))
    (report,) = hipinductor.reports()
    assert report["kernels"] == 1
    assert report["fallback_ops"] == []
    assert "aten._softmax.default" in report["ops_lowered"]


def test_a_mask_stored_between_a_softmax_and_its_epilogue_does_not_split_them():
    # BERT's first layer: the attention mask (a graph output, for the later layers) was computed between the
    # softmax's reductions and its normalisation, and the normalisation became a kernel of its own that re-read the
    # scores (26 + 71 us on the H200 against the later layers' single 51 us kernel).
    b, h, s = 2, 3, 64

    def f(x):
        mask = (torch.arange(s)[None, :] <= torch.arange(s)[:, None]).expand(b, 1, s, s)
        return mask, torch.softmax(x + torch.where(mask, 0.0, float("-inf")), -1)

    x = torch.randn(b, h, s, s)
    hipinductor.clear_reports()
    for got, want in zip(compile(f)(x), f(x)):
        torch.testing.assert_close(got, want)
    (report,) = hipinductor.reports()
    assert report["kernels"] == 2 and report["fallback_ops"] == []


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("eps", [None, 0.2, 1e-6])
def test_16_bit_logit_on_the_cpu_rounds_each_step_as_eager(dtype, eps):
    # CPU eager's vectorised kernel rounds after the clamp, 1 - x, the division and the log, and rounds eps and
    # 1 - eps to the tensor's type (bf16 1 - 1e-6 is 1: logit(1) is inf); PyTorch's decomposition rounds once, 16 %
    # of OpInfo's float16 sample off by up to 0.0007.
    x = torch.cat([torch.rand(2000), torch.tensor([0.0, 1.0, 0.5])]).to(dtype)
    f = lambda t: torch.logit(t, eps)  # noqa: E731
    torch._dynamo.reset()
    hipinductor.clear_reports()
    got, want = compile(f)(x), f(x)
    assert torch.equal(got.isnan(), want.isnan()) and torch.equal(got.nan_to_num(), want.nan_to_num())
    assert hipinductor.reports()[0]["fallback_ops"] == []


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_16_bit_cross_products_round_each_step_as_eager(dtype):
    # Eager's cross kernels compute in c10::Half / BFloat16 arithmetic (each product and the difference rounded);
    # PyTorch's decomposition computes in float and rounded once: a third of float16 results one ulp off.
    a, b = (torch.randn(2, 4000, 3).mul(4).to(dtype).requires_grad_() for _ in range(2))
    f = lambda x, y: torch.linalg.cross(x, y, dim=-1)  # noqa: E731
    torch._dynamo.reset()
    got, want = compile(f)(a, b), f(a, b)
    assert torch.equal(got, want)
    g = torch.randn_like(want)
    grads = zip(torch.autograd.grad(got, (a, b), g), torch.autograd.grad(want, (a, b), g))
    assert all(torch.equal(x, y) for x, y in grads)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("beta, alpha", [(1, 1), (0.2, 0.6), (0, 2)])
def test_16_bit_addr_rounds_each_step_as_eager(dtype, beta, alpha):
    # Eager's addr kernels compute beta * self + alpha * vec1 * vec2 left to right in the tensor's type; PyTorch's
    # decomposition computes in float and rounded once (a quarter of bf16 results one ulp off).
    m, v1, v2 = torch.randn(50, 60).mul(3).to(dtype), torch.randn(50).mul(3).to(dtype), torch.randn(60).mul(3).to(dtype)
    m[0, 0] = float("nan")  # dropped where beta is 0
    f = lambda a, b, c: torch.addr(a, b, c, beta=beta, alpha=alpha)  # noqa: E731
    torch._dynamo.reset()
    got, want = compile(f)(m, v1, v2), f(m, v1, v2)
    assert torch.equal(got.isnan(), want.isnan()) and torch.equal(got.nan_to_num(), want.nan_to_num())


def test_layer_norm_gelu_residual_is_one_kernel():
    hipinductor.clear_reports()
    ln = torch.nn.LayerNorm(128)
    x = torch.randn(16, 128)

    def f(t):
        return torch.nn.functional.gelu(ln(t), approximate="tanh") + t

    with torch.no_grad():
        torch.testing.assert_close(compile(f)(x), f(x), rtol=1e-5, atol=1e-5)
    assert sum(r["kernels"] for r in hipinductor.reports()) == 1


def test_non_contiguous_and_sliced_inputs():
    base = torch.randn(40, 30)
    x = base.t()[5:, ::2]  # transposed, offset, strided
    f = lambda t: (t * 2).exp().sum(dim=0)  # noqa: E731
    torch.testing.assert_close(compile(f)(x), f(x))


def test_matmul_falls_back_with_one_warning_and_kernels_fuse_around_it(caplog):
    hipinductor.clear_reports()
    w = torch.randn(32, 16)

    def f(x):
        return torch.relu(x @ w + 1.0).sum(dim=-1)

    x = torch.randn(8, 32)
    with caplog.at_level(logging.WARNING, logger="hipinductor"):
        out = compile(f)(x)
        compile(lambda a: a @ w)(x)  # the same op again: no second warning
    torch.testing.assert_close(out, f(x))
    r = hipinductor.reports()[0]
    assert "aten.mm.default" in r["fallback_ops"]
    assert r["kernels"] >= 1
    warnings = [m for m in caplog.messages if "aten.mm.default" in m]
    assert len(warnings) == 1, caplog.messages


def test_unknown_option_lists_known_ones():
    with pytest.raises(Exception, match="unknown option 'frobnicate'.*known options: target"):
        compile(lambda t: t + 1, frobnicate=1)(torch.ones(3))


def test_arch_option_is_checked():
    with pytest.raises(Exception, match="gfx9999|not a"):
        compile(lambda t: t + 1, arch="gfx9999x")(torch.ones(3))
    out = compile(lambda t: t + 1, arch="gfx942")(torch.ones(3))
    torch.testing.assert_close(out, torch.full((3,), 2.0))


def test_cpu_w64_target_runs_the_wave64_code_shape():
    x = torch.randn(8, 500)
    out = compile(lambda t: torch.log_softmax(t, -1), target="cpu-w64")(x)
    torch.testing.assert_close(out, torch.log_softmax(x, -1))


def test_debug_dir_holds_every_stage(tmp_path):
    compile(lambda t: torch.softmax(t, -1), debug_dir=str(tmp_path))(torch.randn(4, 10))
    files = {p.name for p in tmp_path.rglob("*") if p.is_file()}
    for f in ("aten_graph.txt", "graph.json", "loop_ir.txt", "kernels.txt", "plan.txt"):
        assert f in files, files
    assert any(f.endswith(".hip") for f in files)


def test_compiler_fault_runs_eagerly_with_warning_unless_strict(monkeypatch, caplog):
    from hipinductor import compile_jobs

    def broken(*a, **k):
        raise RuntimeError("injected compiler fault")

    monkeypatch.setattr(compile_jobs._C, "compile", broken)
    monkeypatch.setattr(compile_jobs._C, "compile_many", broken)
    _raises_when_strict_else_runs_eagerly(monkeypatch, caplog, "injected compiler fault")


def _raises_when_strict_else_runs_eagerly(monkeypatch, caplog, fault, warning=""):
    """With a fault injected: strict (the tests' default) raises it; otherwise the program runs eagerly, right, and
    the warning names the fault."""
    x = torch.randn(5)
    with pytest.raises(Exception, match=fault):
        compile(lambda t: t.sin() + 1)(x)
    torch._dynamo.reset()
    monkeypatch.setenv("HIPINDUCTOR_STRICT", "0")
    with caplog.at_level(logging.WARNING, logger="hipinductor"):
        out = compile(lambda t: t.sin() + 2)(x)
    torch.testing.assert_close(out, x.sin() + 2)
    assert any(fault in m and warning in m for m in caplog.messages), caplog.messages


def test_dynamic_shapes_match_eager_over_sizes():
    f = compile(lambda t: torch.softmax(t * 2, -1))
    for n in (5, 7, 9):
        x = torch.randn(n, 33)
        torch.testing.assert_close(f(x), torch.softmax(x * 2, -1))


def test_bfloat16_layer_norm():
    # On the cpu device native_layer_norm keeps a bfloat16 input's mean and rstd in bfloat16 (GPUs: float32); the
    # node's meta decides, and the op is lowered either way.
    hipinductor.clear_reports()
    ln = torch.nn.LayerNorm(64).to(torch.bfloat16)
    x = torch.randn(8, 64, dtype=torch.bfloat16)
    with torch.no_grad():
        torch.testing.assert_close(compile(ln)(x), ln(x), rtol=2e-2, atol=2e-2)
    stats = compile(lambda t: torch.ops.aten.native_layer_norm(t, [64], None, None, 1e-5))(x)
    for got, want in zip(stats, torch.ops.aten.native_layer_norm(x, [64], None, None, 1e-5)):
        assert got.dtype == want.dtype
        torch.testing.assert_close(got, want, rtol=2e-2, atol=2e-2)
    assert all(r["fallback_ops"] == [] for r in hipinductor.reports()), hipinductor.reports()
    assert sum(r["kernels"] for r in hipinductor.reports()) >= 2


def test_segments_compile_ahead_of_the_first_call_for_the_traced_layouts():
    # Two segments around an eager matmul: both start compiling when the graph is built, for the layouts of the
    # traced (fake) tensors; the first call must find each early compile under its real layout and use it.
    from hipinductor.partition import Segment
    from hipinductor.reporting import live_graphs

    def f(x, w):
        return torch.relu(torch.softmax(x, -1) @ w) + 1

    x, w = torch.randn(16, 32), torch.randn(32, 8)
    torch._dynamo.reset()
    hipinductor.clear_reports()
    out = torch.compile(f, backend="hipinductor")(x, w)
    torch.testing.assert_close(out, f(x, w))
    names = {r["name"] for r in hipinductor.reports()}
    segments = [s for g in list(live_graphs) if g.name in names for s in g.steps if isinstance(s, Segment)]
    assert len(segments) == 2
    assert sum(r["early_compiles"] for r in hipinductor.reports()) == 2
    for s in segments:
        assert len(s.compiled) == 1 and not s.pending  # the early compile was taken, none left unused
    # What the first call spent in hipinductor, for the benchmark's cold-compile breakdown.
    (r,) = hipinductor.reports()
    assert r["build_ms"] > 0 and r["first_call_ms"] > 0


def test_a_graphs_segments_compile_in_one_compiler_call(monkeypatch):
    # NVRTC runs concurrent compiles one at a time and pays a fixed cost per call: the segments of a graph go to the
    # compiler as one translation unit. Each segment still shows only its own kernels.
    from hipinductor import compile_jobs

    calls = []
    real_many, real_one = compile_jobs._C.compile_many, compile_jobs._C.compile

    def many(sources, *a, **k):
        calls.append(len(sources))
        return real_many(sources, *a, **k)

    def one(*a, **k):
        calls.append(1)
        return real_one(*a, **k)

    monkeypatch.setattr(compile_jobs._C, "compile_many", many)
    monkeypatch.setattr(compile_jobs._C, "compile", one)

    def f(x, w):
        return torch.sigmoid(torch.softmax(x * 3, -1) @ w) @ w.t() - 2

    x, w = torch.randn(16, 32), torch.randn(32, 8)
    torch._dynamo.reset()
    hipinductor.clear_reports()
    out = torch.compile(f, backend="hipinductor", options={"use_cache": False})(x, w)
    torch.testing.assert_close(out, f(x, w))
    assert calls == [3]
    segments = _segments()
    kernels = [name for s in segments for cg in s.compiled.values() for name in cg.kernel_names]
    assert len(set(kernels)) == len(kernels) == 3, kernels
    for s in segments:
        (cg,) = s.compiled.values()
        for name in kernels:
            assert (name in cg.kernels_text) == (name in cg.kernel_names), (name, cg.kernels_text)


def test_many_segments_compile_in_capped_units_and_a_failing_unit_compiles_apart(monkeypatch):
    # Ten segments between matmuls: units of at most 8 (each segment loads its whole unit). When a unit's compile
    # fails, its segments still compile early, one by one, so one segment's fault stays its own.
    from hipinductor import compile_jobs

    def f(x, w):
        for i in range(9):
            x = torch.sin(x + i / 8) @ w  # a shift per layer: segments that share no compile
        return x + 1

    x, w = torch.randn(8, 8), torch.randn(8, 8) / 3
    sizes = []
    real_many = compile_jobs._C.compile_many

    def many(sources, *a, **k):
        sizes.append(len(sources))
        return real_many(sources, *a, **k)

    monkeypatch.setattr(compile_jobs._C, "compile_many", many)
    r = _compile_uncached_and_check(f, x, w)
    assert sorted(sizes) == [2, 8] and r["segments"] == 10 and r["early_compiles"] == 10

    def broken(*a, **k):
        raise RuntimeError("injected unit fault")

    monkeypatch.setattr(compile_jobs._C, "compile_many", broken)
    r = _compile_uncached_and_check(f, x, w)
    assert r["early_compiles"] == 10 and r["eager_reason"] is None


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_narrow_stores_round_once_bit_for_bit(dtype):
    # A float computed in a kernel and cast to bf16/f16 is stored from the float (the store rounds it once); the
    # cast's rounded value still feeds what reads it later. Single IEEE operations only, so that eager's bits are
    # the only right answer, in pointwise and row kernels.
    def f(x, w):
        y = (x * 3).to(dtype)                                # stored from the float
        z = (y.float() + 0.3).to(dtype)                      # reads the rounded y
        n = (x - x.amax(-1, keepdim=True)).to(dtype)         # a row kernel
        return y, z, n, (n.float() * w).to(dtype)            # reads the rounded n

    x, w = torch.randn(33, 257) * 50, torch.randn(257)
    torch._dynamo.reset()
    hipinductor.clear_reports()
    got = torch.compile(f, backend="hipinductor", options={"use_cache": False})(x, w)
    (report,) = hipinductor.reports()
    assert report["kernels"] >= 1 and not report["fallback_ops"], report
    for g, e in zip(got, f(x, w)):
        assert g.dtype == dtype and torch.equal(g.view(torch.int16), e.view(torch.int16))


def test_compile_units_per_target():
    # NVIDIA targets spread a graph's segments over up to 4 units that compile in parallel (NVRTC compiles
    # concurrently at a small fixed cost per call); HIPRTC and the host compiler pay ~0.5 s per call, so other
    # targets fill units of 8. Units keep the segments' order and never exceed 8.
    from hipinductor.compile_jobs import units as compile_units

    def sizes(target, n):
        units = compile_units([(target, i) for i in range(n)], target_of=lambda job: job[0])
        assert [i for u in units for _, i in u] == list(range(n))
        return [len(u) for u in units]

    assert sizes("sm_90", 1) == [1]
    assert sizes("sm_90", 3) == [1, 1, 1]
    assert sizes("sm_90", 8) == [2, 2, 2, 2]
    assert sizes("sm_90", 10) == [3, 3, 3, 1]
    assert sizes("sm_90", 40) == [8, 8, 8, 8, 8]
    assert sizes("gfx942:sramecc+:xnack-", 10) == [8, 2]
    assert sizes("cpu", 8) == [8]
    mixed = compile_units([("sm_90", 0), ("cpu", 1), ("sm_90", 2)], target_of=lambda job: job[0])
    assert [[i for _, i in u] for u in mixed] == [[0], [2], [1]]


def test_repeated_layers_share_one_compile(monkeypatch):
    # Segments that differ only in node names (a model's repeated layers) take the first one's compiled graph: one
    # compile and one module for all of them, also when their unit's compile fails and its segments compile apart.
    from hipinductor import compile_jobs

    layer = lambda: torch.nn.Sequential(torch.nn.LayerNorm(32), torch.nn.Linear(32, 32), torch.nn.GELU())  # noqa: E731
    model = torch.nn.Sequential(*[layer() for _ in range(4)])
    x = torch.randn(8, 32)
    sources = []
    real_many = compile_jobs._C.compile_many

    def many(srcs, *a, **k):
        sources.extend(srcs)
        return real_many(srcs, *a, **k)

    monkeypatch.setattr(compile_jobs._C, "compile_many", many)
    with torch.no_grad():
        r = _compile_uncached_and_check(model, x, rtol=1e-5, atol=1e-5)
    assert r["segments"] == 5 and r["early_compiles"] == 5, r
    # Segments: layer norm; (gelu, layer norm) x 3, the same three times; gelu.
    assert r["shared_compiles"] == 2 and len(sources) == r["segments"] - 2, (r, len(sources))
    compiled = [cg for s in _segments() for cg in s.compiled.values()]
    assert len({id(cg) for cg in compiled}) == len(sources)

    def broken(*a, **k):
        raise RuntimeError("injected unit fault")

    monkeypatch.setattr(compile_jobs._C, "compile_many", broken)
    with torch.no_grad():
        r = _compile_uncached_and_check(model, x, rtol=1e-5, atol=1e-5)
    # The unit's segments compiled one by one instead; the copies still take their original's result.
    assert r["eager_reason"] is None and r["early_compiles"] == 5 and r["shared_compiles"] == 2, r


def test_autotune_option_tunes_each_segment_on_its_first_run(tmp_path, monkeypatch):
    import json

    monkeypatch.setenv("HIPINDUCTOR_CACHE_DIR", str(tmp_path))
    x = torch.randn(64, 300)
    f = lambda t: torch.softmax(t * 2, -1) + t.sum(0)  # noqa: E731
    torch._dynamo.reset()
    hipinductor.clear_reports()
    torch.testing.assert_close(compile(f, autotune=True)(x), f(x))
    graphs = [cg for s in _segments() for cg in s.compiled.values()]
    assert graphs and all(cg.launch_grids() for cg in graphs)
    tuned = [json.loads(m.read_text()).get("tuning") for m in tmp_path.rglob("meta.json") if "graphs" not in m.parts]
    assert any(tuned), "no tuning recorded next to the code objects"


def _compile_uncached_and_check(fn, *args, **tolerance):
    """fn compiled afresh without the cache, its result checked against eager (assert_close, with `tolerance`); the
    graph's one report."""
    torch._dynamo.reset()
    hipinductor.clear_reports()
    out = torch.compile(fn, backend="hipinductor", options={"use_cache": False})(*args)
    torch.testing.assert_close(out, fn(*args), **tolerance)
    (report,) = hipinductor.reports()
    return report


def _segments():
    from hipinductor.partition import Segment
    from hipinductor.reporting import live_graphs

    names = {r["name"] for r in hipinductor.reports()}
    return [s for g in list(live_graphs) if g.name in names for s in g.steps if isinstance(s, Segment)]


def test_eager_node_between_fusable_nodes_does_not_split_them():
    # Graph order puts the eager up-projection between silu(gate) and the product (SwiGLU); scheduled, the two
    # matmuls run first and silu * up is one kernel.
    wg, wu = torch.randn(32, 48), torch.randn(32, 48)

    def f(h):
        return torch.nn.functional.silu(h @ wg) * (h @ wu)

    h = torch.randn(16, 32)
    torch._dynamo.reset()
    hipinductor.clear_reports()
    torch.testing.assert_close(compile(f)(h), f(h))
    assert sum(r["kernels"] for r in hipinductor.reports()) == 1
    assert len(_segments()) == 1


def test_split_pieces_read_by_eager_ops_stay_views():
    # q, k, v = split(...) feeding only eager ops: no copy kernel for the pieces (eager reads views of the matmul).
    w = torch.randn(16, 48)

    def f(x):
        q, k, v = (x @ w).split(16, -1)
        return torch.bmm(torch.bmm(q, k.transpose(1, 2)), v)

    x = torch.randn(2, 8, 16)
    torch._dynamo.reset()
    hipinductor.clear_reports()
    torch.testing.assert_close(compile(f)(x), f(x))
    assert sum(r["kernels"] for r in hipinductor.reports()) == 0


def test_random_and_mutating_eager_ops_keep_their_order():
    # Random eager ops draw from the generator in graph order, and an input mutation happens after every read of
    # the old value, however the scheduler moves other nodes.
    def f(x, buf):
        a = torch.rand_like(x.sin()) + 1  # waits for a kernel; the next random op does not
        b = torch.randn_like(x) * 2
        y = buf * 3 + a
        buf.add_(1)
        return y, b

    x = torch.randn(8, 8)
    torch.manual_seed(0)
    buf_ref = torch.zeros(8, 8)
    ref = f(x, buf_ref)
    torch._dynamo.reset()
    buf = torch.zeros(8, 8)
    compiled = compile(f)
    torch.manual_seed(0)
    got = compiled(x, buf)
    torch.testing.assert_close(got, ref)
    torch.testing.assert_close(buf, buf_ref)


def _graph_of_last_compile():
    from hipinductor.reporting import live_graphs

    names = {r["name"] for r in hipinductor.reports()}
    (graph,) = [g for g in list(live_graphs) if g.name in names]
    return graph


def test_fast_path_is_written_after_the_first_call_and_keyed_by_layout():
    def f(x, w):
        return torch.relu(torch.bmm(x, w) * 2).sum(-1) + x.mean()

    w = torch.randn(4, 16, 8)
    torch._dynamo.reset()
    hipinductor.clear_reports()
    compiled = compile(f)
    for _ in range(3):  # the first call takes the general path and writes the fast one; the others take it
        x = torch.randn(4, 8, 16)
        torch.testing.assert_close(compiled(x, w), f(x, w))
    graph = _graph_of_last_compile()
    assert len(graph.fast_paths) == 1 and callable(next(iter(graph.fast_paths.values())))
    # Another input layout (the graph called directly, as AOTAutograd would): its own fast path, still correct.
    xt = torch.randn(4, 16, 8).transpose(1, 2)
    by_shape = {tuple(xt.shape): xt, tuple(w.shape): w}
    args = [by_shape[tuple(n.meta["val"].shape)] for n in graph.placeholders]
    for _ in range(2):
        torch.testing.assert_close(graph(*args)[0], f(xt, w))
    assert len(graph.fast_paths) == 2


def _own_work_of_one_call(step):
    """What hipinductor's own code does in one call of `step`: its Python functions (the package's and the code it
    generates, in call order), and the C functions they call."""
    import sys

    frames, c_calls = [], []

    def ours(code):
        return code.co_filename.startswith("<hipinductor") or "/hipinductor/" in code.co_filename

    def profile(frame, event, arg):
        if event == "call" and ours(frame.f_code):
            frames.append(frame.f_code.co_name)
        elif event == "c_call" and ours(frame.f_code):
            c_calls.append(getattr(arg, "__name__", repr(arg)))

    sys.setprofile(profile)
    try:
        step()
    finally:
        sys.setprofile(None)
    return frames, c_calls


def _launch_calls_visible(graph) -> bool:
    """Whether sys.setprofile sees a call of the bound `run` method the fast path holds as a c_call event: whether it
    does depends on the Python and pybind11 releases (a bound method of a pybind11 function is reported by some, not
    by others), so the launch count below is asserted only where the profiler can see launches at all."""
    import sys

    fast = next(iter(graph.fast_paths.values()))
    runs = [v for k, v in fast.__globals__.items() if k.startswith("run") and callable(v)]
    assert runs, "the fast path binds its segment's run"
    seen = []
    sys.setprofile(lambda frame, event, arg: seen.append(getattr(arg, "__name__", None)) if event == "c_call" else None)
    try:
        try:
            runs[0]()  # no arguments: refused by pybind11 before anything runs
        except TypeError:
            pass
    finally:
        sys.setprofile(None)
    return "run" in seen


def test_a_one_kernel_graph_calls_only_its_entry_key_and_fast_path():
    """The per-call host cost of a compiled graph: past dynamo's guards and AOTAutograd's wrappers, one call runs
    three Python functions of hipinductor's (the boxed entry, the layout key, the fast path) and allocates nothing but
    its output; forward and backward of a training step each do the same."""
    x = torch.randn(8, 16)
    torch._dynamo.reset()
    hipinductor.clear_reports()
    compiled = compile(lambda t: torch.relu(t) * 2)
    with torch.no_grad():
        for _ in range(2):  # the general path, which writes the fast path; then the fast path
            compiled(x)
        frames, c_calls = _own_work_of_one_call(lambda: compiled(x))
    assert frames == ["call_boxed", "key_of", "fast_call"]
    allocations = [c for c in c_calls if "empty" in c or c in ("zeros", "tensor", "contiguous", "clone")]
    assert len(allocations) == 1, c_calls  # the output
    launches_visible = _launch_calls_visible(_graph_of_last_compile())
    assert c_calls.count("run") == (1 if launches_visible else 0), c_calls  # one launch of the compiled segment

    xg, g = torch.randn(8, 16, requires_grad=True), torch.randn(8, 16)
    torch._dynamo.reset()
    gelu = compile(lambda t: torch.nn.functional.gelu(t, approximate="tanh"))

    def train_step():
        gelu(xg).backward(g)

    for _ in range(2):
        train_step()
    frames, c_calls = _own_work_of_one_call(train_step)
    assert frames == ["call_boxed", "key_of", "fast_call"] * 2
    assert len([c for c in c_calls if "empty" in c or c in ("contiguous", "clone")]) == 2, c_calls
    assert c_calls.count("run") == (2 if launches_visible else 0), c_calls


def test_fast_path_key_leaves_out_the_modules_parameters_and_buffers():
    """Dynamo's guards check the layouts of a module's parameters and buffers (AOTAutograd's static inputs); the
    call's key checks the rest, so a user input of another layout still takes a path of its own."""
    net = torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.BatchNorm1d(8), torch.nn.ReLU()).eval()
    torch._dynamo.reset()
    hipinductor.clear_reports()
    compiled = compile(net)
    with torch.no_grad():
        for _ in range(2):
            x = torch.randn(5, 16)
            torch.testing.assert_close(compiled(x), net(x))
    graph = _graph_of_last_compile()
    params = {tuple(p.shape) for p in list(net.parameters()) + list(net.buffers()) if p.dim()}
    keyed = [graph.placeholders[i] for i in graph.key_inputs]
    # The key reads the user's input alone; every other input is one of the module's tensors.
    assert [tuple(n.meta["val"].shape) for n in keyed] == [(5, 16)]
    others = [n for n in graph.placeholders if n not in keyed]
    assert others and all(tuple(n.meta["val"].shape) in params | {()} for n in others)
    # The graph called directly (as AOTAutograd calls it) with the input transposed in memory: a fast path of its
    # own, still correct. The real arguments are those of a compiled call, caught on their way into the fast path.
    (key, fast), seen = next(iter(graph.fast_paths.items())), []
    graph.fast_paths[key] = lambda args: seen.append(list(args)) or fast(args)
    with torch.no_grad():
        compiled(x)
        (args,) = seen
        xt = torch.randn(16, 5).t()
        args = [xt if n in keyed else a for n, a in zip(graph.placeholders, args)]
        for _ in range(2):
            torch.testing.assert_close(graph(*args)[0], net(xt))
    assert len(graph.fast_paths) == 2


def _matches_eager_on_fresh_calls(f, *args, calls=3):
    """Compiles f afresh, checks `calls` calls (the general path, then the fast path) against eager; its report."""
    torch._dynamo.reset()
    hipinductor.clear_reports()
    compiled = compile(f)
    for _ in range(calls):
        torch.testing.assert_close(compiled(*args), f(*args))
    (report,) = hipinductor.reports()
    return report


def test_a_cache_grown_from_an_empty_tensor_is_a_copy_in_a_kernel_with_a_fast_path():
    # transformers' DynamicCache: keys start as torch.tensor([]) and grow by torch.cat([keys, k], -2). The empty
    # tensor made the segment holding the cat (and the mask and RoPE beside it, in GPT-2 and LLaMA) run node by node
    # in eager PyTorch, and the graph had no fast path.
    def f(x, w):
        k = (x @ w).view(2, 6, 3, 4).transpose(1, 2)
        keys = torch.cat([torch.tensor([], dtype=x.dtype), k], dim=-2)
        values = torch.cat([torch.zeros(2, 3, 0, 4), k * 2], dim=-2)
        mask = torch.arange(6)[None, :] <= torch.arange(6)[:, None]
        return keys, torch.where(mask, values @ keys.transpose(-1, -2), -1e4)

    report = _matches_eager_on_fresh_calls(f, torch.randn(2, 6, 8), torch.randn(8, 12))
    assert report["empty_cat_inputs"] == 2
    assert set(report["fallback_ops"]) <= {"aten.bmm.default", "aten.mm.default", "aten.view.default"}
    graph = _graph_of_last_compile()
    assert not any(str(n.target) == "aten.lift_fresh_copy.default" for n in graph.gm.graph.nodes)
    assert len(graph.fast_paths) == 1 and callable(next(iter(graph.fast_paths.values())))


def test_nodes_of_empty_tensors_run_eagerly_and_the_rest_in_kernels_with_a_fast_path():
    # An empty tensor in a segment made the whole segment run eagerly (relu and the add beside it too), and the
    # graph had no fast path.
    def f(x, w):
        return torch.relu(x @ w)[:, :0] * 2 + 1, torch.relu(x @ w) + 1, (torch.relu(x @ w)[:0] + 3).sum(0)

    report = _matches_eager_on_fresh_calls(f, torch.randn(4, 8), torch.randn(8, 3))
    assert {"aten.mul.Tensor", "aten.sum.dim_IntList"} <= set(report["eager_empty"])
    assert "aten.relu.default" in report["ops_lowered"] and report["kernels"] >= 1
    fast = next(iter(_graph_of_last_compile().fast_paths.values()))
    assert callable(fast), "no fast path"


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64])
def test_pow_by_a_small_number_is_eagers_product_not_a_pow_call(tmp_path, dtype):
    # PyTorch's kernels compute x ** 2, 3, -2 as products in the tensor's type (a bf16 x * x rounded before the
    # second multiply) and 0.5, -0.5, -1 as sqrt, rsqrt, reciprocal; a general pow costs ~70 instructions (GPT-2's
    # gelu: 59 us against Inductor's 16 on the H200). CPU eager's float16 ** 3 and ** -2 go through pow instead
    # (one rounding), within an ulp of these.
    x = torch.randn(4096, dtype=torch.float64).mul(3).to(dtype)
    f = lambda t: (t ** 2, t ** 3, t ** -2, t.abs() ** 0.5, t ** -1, t ** 3.0)  # noqa: E731
    torch._dynamo.reset()
    got = compile(f, debug_dir=str(tmp_path))(x)
    for g, want in zip(got, f(x)):
        if dtype == torch.bfloat16:  # x * x rounded to bf16 before the second multiply, as eager's
            assert torch.equal(g, want), (g - want).abs().max()
        else:  # CPU eager's vector paths differ by PyTorch version and processor: within an ulp
            torch.testing.assert_close(g, want, rtol=2 * torch.finfo(dtype).eps, atol=0)
    (kernels,) = tmp_path.glob("*/kernels.txt")
    assert "mul(" in kernels.read_text() and "pow(" not in kernels.read_text()


def test_channels_last_convolutions_give_the_kernels_around_them_nhwc_layouts(monkeypatch):
    # GPU graphs only by default (cuDNN's bf16/fp16 convolutions run NHWC natively); widened to the cpu here.
    from hipinductor.passes import channels_last

    monkeypatch.setattr(channels_last, "DEVICE_TYPES", ("cpu",))
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
                              torch.nn.Conv2d(8, 8, 1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
                              torch.nn.Conv2d(8, 4, 3, stride=2)).to(torch.bfloat16).eval()
    x = torch.randn(2, 3, 12, 12, dtype=torch.bfloat16)
    torch._dynamo.reset()
    hipinductor.clear_reports()
    with torch.no_grad():
        # Eager with the same NHWC convolutions: CPU bf16 convolutions give other values NCHW than NHWC (oneDNN picks
        # its algorithm by layout and processor: 0.19 apart on one machine, where the NHWC ones were within 0.002 of
        # float32's), and the rewrite asks for NHWC ones.
        want = net.to(memory_format=torch.channels_last)(x.contiguous(memory_format=torch.channels_last))
        net.to(memory_format=torch.contiguous_format)
        got = compile(net)(x)
    (report,) = hipinductor.reports()
    assert report["channels_last_convs"] == 3
    # The graph's output keeps eager's contiguous layout; values as eager's within bf16 rounding.
    assert got.is_contiguous() and got.shape == want.shape
    torch.testing.assert_close(got, want, atol=3e-2, rtol=3e-2)
    graph = _graph_of_last_compile()
    convs = [n for n in graph.gm.graph.nodes if n.target is torch.ops.aten.convolution.default]
    assert all(n.meta["val"].is_contiguous(memory_format=torch.channels_last) for n in convs)
    # Copies only of the NCHW image and the two 3x3 weights: the 1x1 weight and conv results are NHWC already.
    clones = [n for n in graph.gm.graph.nodes if n.target is torch.ops.aten.clone.default
              and n.kwargs.get("memory_format") is torch.channels_last]
    assert len(clones) == 3
    assert "aten.relu.default" in report["ops_lowered"]


def test_channels_last_leaves_graphs_it_cannot_recompute_as_they_were(monkeypatch):
    # Data-dependent sizes (nonzero) would come back as new symbols: such a graph is left alone; and where computing
    # the metas again fails, the rewrite is undone and the metas restored.
    from torch.fx.experimental.proxy_tensor import make_fx
    from hipinductor.passes import channels_last

    def f(x, w):
        y = torch.nn.functional.conv2d(x, w)
        return y, torch.nonzero(y > 0)

    x, w = torch.randn(1, 2, 6, 6, dtype=torch.bfloat16), torch.randn(3, 2, 3, 3, dtype=torch.bfloat16)
    for fn, breaks in ((f, False), (lambda x, w: torch.nn.functional.conv2d(x, w).relu(), True)):
        gm = make_fx(fn, tracing_mode="fake")(x, w)
        metas = {n.name: n.meta.get("val") for n in gm.graph.nodes}
        nodes = [n.name for n in gm.graph.nodes]
        if breaks:
            monkeypatch.setattr(channels_last, "_propagate", lambda *a: (_ for _ in ()).throw(RuntimeError("no")))
        assert channels_last.channels_last_convs(gm, ("cpu",)) == 0
        assert [n.name for n in gm.graph.nodes] == nodes
        assert all(n.meta.get("val") is metas[n.name] for n in gm.graph.nodes)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64])
def test_transposed_reads_go_through_shared_memory_tiles(tmp_path, dtype):
    # BERT's attention prologue: q and v scaled and copied, k transposed; the transposed read went lane by lane
    # across rows (31 us on the H200 for 8 x 12 x 512 x 64 against Inductor's two kernels' 10).
    def f(q, k, v):
        return (q.to(torch.float32) * 0.125, k.transpose(-1, -2).contiguous().to(torch.float32) * 0.125,
                v.to(torch.float32), (k.transpose(1, 2) + 1).contiguous())

    q, k, v = (torch.randn(2, 3, 96, 64).mul(4).to(dtype) for _ in range(3))
    torch._dynamo.reset()
    got = compile(f, debug_dir=str(tmp_path))(q, k, v)
    for g, want in zip(got, f(q, k, v)):
        torch.testing.assert_close(g, want, rtol=0, atol=0)
    sources = "".join(p.read_text() for p in tmp_path.glob("*/module.*"))
    assert "__shared__" in sources and "tile0[tx][ty + r]" in sources
    # With a broadcast operand, a value two outputs share and another output walked the other way.
    x, b = torch.randn(3, 64, 96).mul(4).to(dtype), torch.randn(64).mul(4).to(dtype)

    def g(x, b):
        shared = x.transpose(-1, -2) + b
        return shared.relu().contiguous(), shared.contiguous() * 3, x * 2

    torch._dynamo.reset()
    for got, want in zip(compile(g)(x, b), g(x, b)):
        torch.testing.assert_close(got, want, rtol=0, atol=0)
    # Sizes no tile divides keep the plain kernel, and the same results.
    x = torch.randn(5, 33, 20).to(dtype)
    torch.testing.assert_close(compile(lambda t: t.transpose(1, 2) * 2)(x), x.transpose(1, 2) * 2, rtol=0, atol=0)


def test_fast_path_runs_a_segment_generally_when_an_eager_op_changes_layout():
    # The fast path compares the layouts eager ops produce with those its kernels were compiled for; an eager op
    # that returns another layout (here: bmm made to return a column-major result) must not be misread.
    def f(x, w):
        return torch.relu(torch.bmm(x, w) + 1)

    x, w = torch.randn(4, 8, 16), torch.randn(4, 16, 8)
    torch._dynamo.reset()
    hipinductor.clear_reports()
    compiled = compile(f)
    compiled(x, w)
    compiled(x, w)
    fast = next(iter(_graph_of_last_compile().fast_paths.values()))
    names = [k for k, v in fast.__globals__.items() if v is torch.bmm]
    assert names, fast.source
    for k in names:
        fast.__globals__[k] = lambda a, b: torch.bmm(a, b).mT.contiguous().mT
    torch.testing.assert_close(compiled(x, w), f(x, w))


def test_fast_path_calls_linear_for_decomposed_linear_layers():
    # AOTAutograd decomposes nn.Linear into t, view, addmm (mm without a bias), view; the fast path calls
    # torch.nn.functional.linear instead, which reaches the same addmm / mm on the same views.
    lin, lin2 = torch.nn.Linear(16, 24), torch.nn.Linear(24, 8, bias=False)

    def f(x):
        y = lin(torch.relu(x))  # 3-D input from a kernel, output read by an eager op
        z = torch.bmm(y, y.transpose(1, 2))
        return lin2(torch.tanh(y[:, 0])), z  # 2-D input, no bias

    x = torch.randn(2, 5, 16)
    torch._dynamo.reset()
    hipinductor.clear_reports()
    compiled = compile(f)
    with torch.no_grad():
        for _ in range(2):
            torch.testing.assert_close(compiled(x), f(x))
    source = next(iter(_graph_of_last_compile().fast_paths.values())).source
    assert source.count("= linear") == 2, source


def test_fast_path_makes_eager_views_from_their_base_and_checks_its_layout():
    # view chains (split pieces viewed and transposed) read by eager ops are made in one call each from the base,
    # with the layouts the first call gave them; when the base comes from an eager op that returns another layout
    # (bmm made column-major), the chain runs as written.
    def f(x, w, v):
        q, k = torch.bmm(x, w).split(4, -1)
        return torch.bmm(q.transpose(1, 2), v) + 1, torch.bmm(k.transpose(1, 2).reshape(4, 4, 8), v) * 2

    x, w, v = torch.randn(4, 8, 16), torch.randn(4, 16, 8), torch.randn(4, 8, 5)
    torch._dynamo.reset()
    hipinductor.clear_reports()
    compiled = compile(f)
    for _ in range(2):
        torch.testing.assert_close(compiled(x, w, v), f(x, w, v))
    fast = next(iter(_graph_of_last_compile().fast_paths.values()))
    made = [line for line in fast.source.splitlines() if "= reinterpret" in line]
    assert len(made) == 2 and all(" if ok0 else " in line for line in made), fast.source
    names = [k for k, val in fast.__globals__.items() if val is torch.bmm]
    for k in names:
        fast.__globals__[k] = lambda a, b: torch.bmm(a, b).mT.contiguous().mT
    torch.testing.assert_close(compiled(x, w, v), f(x, w, v))


def test_segments_compile_for_aligned_inputs_and_check_them_per_call():
    # Segments are compiled for inputs whose first elements are 16-byte aligned (PyTorch's allocators give that),
    # without run-time alignment checks in the kernels; the fast path checks the pointers, and a call whose input is
    # not aligned (here a numpy buffer 4 bytes in, the same layout otherwise) compiles and runs a checked variant.
    import numpy as np

    def f(x):
        return torch.relu(x) * 2

    torch._dynamo.reset()
    hipinductor.clear_reports()
    compiled = compile(f)
    x = torch.randn(64)
    for _ in range(2):
        torch.testing.assert_close(compiled(x), f(x))
    raw = np.zeros(64 * 4 + 32, dtype=np.uint8)
    start = next(k for k in range(4, 32, 4) if (raw.ctypes.data + k) % 16)
    misaligned = torch.from_numpy(raw[start:start + 256].view(np.float32))
    misaligned.copy_(torch.randn(64))
    assert misaligned.data_ptr() % 16 and misaligned.storage_offset() == 0
    for _ in range(2):
        torch.testing.assert_close(compiled(misaligned), f(misaligned))
    graph = _graph_of_last_compile()
    (segment,) = [s for s in graph.steps if hasattr(s, "compiled")]
    assert sorted(aligned for _, aligned, _ in segment.compiled) == [False, True]


def test_fast_path_views_of_a_sliced_input_keep_its_storage_offset():
    # A view of a graph input that is itself a slice (storage offset 8): the fast path makes it from the input with
    # the offset relative to the input's own.
    def f(x, v):
        return torch.bmm(x.view(4, 8, 4), v) + 1

    x, v = torch.randn(200)[8:136], torch.randn(4, 4, 3)
    torch._dynamo.reset()
    compiled = compile(f)
    for _ in range(3):
        torch.testing.assert_close(compiled(x, v), f(x, v))


def test_division_by_a_tiny_row_sum_is_exact():
    # Softmax divides by its sum (>= 1) through one reciprocal per row; other row divisors keep the division, which
    # stays finite for sums below 2^-126 (their reciprocal would overflow).
    t = torch.full((4, 64), 1e-45)
    out = compile(lambda a: a / a.sum(-1, keepdim=True))(t)
    torch.testing.assert_close(out, t / t.sum(-1, keepdim=True))
    x = torch.randn(8, 40)
    torch.testing.assert_close(compile(lambda a: torch.softmax(a, -1))(x), torch.softmax(x, -1))


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8, torch.int16, torch.bool])
def test_max_min_argmax_of_narrow_integers_run_in_kernels(dtype):
    # Reductions of bool and integers narrower than 32 bits accumulate in int: the preludes' shuffles and identities
    # had no uint8/int8/int16 versions, so these failed to compile and ran eagerly.
    hipinductor.clear_reports()
    g = torch.Generator().manual_seed(0)
    x = torch.randint(-100 if dtype.is_signed else 0, 2 if dtype == torch.bool else 100, (37, 300), generator=g)
    x = x.to(dtype)

    def f(t):
        out = (t.amax(-1), t.amin(0), t.max(-1).values, t.amax())
        return out if dtype == torch.bool else out + (t.argmax(-1), t.argmin(0))  # eager has no bool argmax

    expected = f(x)
    actual = compile(f)(x)
    for a, e in zip(actual, expected):
        assert a.dtype == e.dtype
        torch.testing.assert_close(a, e, rtol=0, atol=0)
    reports = hipinductor.reports()
    assert reports and all(r["eager_reason"] is None for r in reports), reports
    assert sum(r["kernels"] for r in reports) >= 1


def test_graph_aot_autograd_cannot_trace_runs_eagerly_unless_strict(monkeypatch, caplog):
    from hipinductor import backend

    def broken(x):
        raise RuntimeError("injected decomposition fault")

    monkeypatch.setattr(backend, "decomposition_table", lambda: {torch.ops.aten.sin.default: broken})
    _raises_when_strict_else_runs_eagerly(monkeypatch, caplog, "injected decomposition fault",
                                          "AOTAutograd could not trace")


def test_tensor_constants_made_in_the_program_run_in_kernels():
    # torch.tensor(...) inside the program: AOTAutograd lifts the data into a module constant and copies it
    # (lift_fresh_copy), which reads the constant; both the copy and its readers fuse into the one kernel.
    def f(x):
        return x * torch.tensor([1.0, 2.0, 3.0]) + torch.tensor([1, -2, 3]) + torch.tensor(0.5)

    hipinductor.clear_reports()
    compiled = compile(f)
    for _ in range(3):  # the general path, then the fast path
        x = torch.randn(4, 3)
        torch.testing.assert_close(compiled(x), f(x))
    (report,) = hipinductor.reports()
    assert "aten.lift_fresh_copy.default" in report["ops_lowered"]
    assert report["fallback_ops"] == [] and report["kernels"] == 1


def test_a_cpu_constant_read_by_a_gpu_op_is_copied_eagerly():
    # x_cuda * torch.tensor(2.0): the CPU constant's copy would otherwise be a CPU segment of its own (a host-compiler
    # compile on a GPU program's first call). Fake CUDA tensors stand in for the GPU.
    from torch._subclasses.fake_tensor import FakeTensorMode

    from hipinductor.partition import copies_for_another_device

    aten = torch.ops.aten
    graph = torch.fx.Graph()
    x, c = graph.placeholder("x"), graph.get_attr("c")
    copy = graph.call_function(aten.lift_fresh_copy.default, (c,))
    on_gpu = graph.call_function(aten.mul.Tensor, (x, copy))
    on_cpu = graph.call_function(aten.lift_fresh_copy.default, (c,))
    graph.output((on_gpu, graph.call_function(aten.mul.Tensor, (on_cpu, on_cpu))))
    with FakeTensorMode():
        x.meta["val"] = torch.empty(3, device="cuda")
        c.meta["val"] = copy.meta["val"] = on_cpu.meta["val"] = torch.empty(())
        on_gpu.meta["val"] = torch.empty(3, device="cuda")
        next(iter(on_cpu.users)).meta["val"] = torch.empty(())
    assert copies_for_another_device(copy)
    assert not copies_for_another_device(on_cpu) and not copies_for_another_device(on_gpu)


def test_empty_permuted_from_loss_decompositions_runs_in_kernels():
    # hinge_embedding_loss and cosine_embedding_loss decompose through empty_permuted (a buffer their where() fills);
    # it lowers as a zero fill, so neither loss is split around an eager allocation.
    torch.manual_seed(0)
    x, t = torch.randn(5, 6), torch.randint(0, 2, (5, 6)).float() * 2 - 1
    a, b, y = torch.randn(4, 6), torch.randn(4, 6), torch.tensor([1, -1, 1, -1])

    def f(x, t, a, b, y):
        return (torch.nn.functional.hinge_embedding_loss(x, t, margin=0.5),
                torch.nn.functional.cosine_embedding_loss(a, b, y, margin=0.1))

    hipinductor.clear_reports()
    compiled = compile(f)
    for _ in range(2):
        torch.testing.assert_close(compiled(x, t, a, b, y), f(x, t, a, b, y))
    (report,) = hipinductor.reports()
    assert "aten.empty_permuted.default" in report["ops_lowered"] and report["fallback_ops"] == []


def test_adaptive_max_pool2d_and_its_backward_run_in_kernels_global_pooling_too():
    x = torch.randn(2, 3, 10, 9)
    xe, xc = x.clone().requires_grad_(), x.clone().requires_grad_()
    hipinductor.clear_reports()
    f = lambda t: torch.nn.functional.adaptive_max_pool2d(t, (4, 3), return_indices=True)  # noqa: E731
    out, expected = compile(f)(xc), f(xe)
    torch.testing.assert_close(out, expected)
    out[0].square().sum().backward()
    expected[0].square().sum().backward()
    torch.testing.assert_close(xc.grad, xe.grad)
    forward, backward = hipinductor.reports()
    assert forward["ops_lowered"] == ["aten.adaptive_max_pool2d.default"] and forward["kernels"] >= 1
    assert "aten.adaptive_max_pool2d_backward.default" in backward["ops_lowered"] and not backward["fallback_ops"]
    # Global max pooling (90-tap windows, reductions): NaN planes keep the last NaN's position, -inf planes the first
    # position, ties the first maximum, as eager's loop.
    x[0, 0, 3, 4] = x[0, 0, 7, 1] = float("nan")
    x[0, 1] = float("-inf")
    x[1, 1, 2, 2] = x[1, 1, 6, 3] = 9.0
    torch._dynamo.reset()
    hipinductor.clear_reports()
    g = lambda t: torch.nn.functional.adaptive_max_pool2d(t, 1, return_indices=True)  # noqa: E731
    values, positions = compile(g)(x)
    expected_values, expected_positions = g(x)
    torch.testing.assert_close(values, expected_values, equal_nan=True)
    assert torch.equal(positions, expected_positions) and positions[0, 0].item() == 7 * 9 + 1
    assert hipinductor.reports()[0]["fallback_ops"] == []


def test_unfold_of_a_computed_value_is_read_through_in_the_kernel():
    # Sliding windows (Tensor.unfold, twice: 3x3 patches with stride 2) of a kernel's result: the views are index
    # arithmetic inside the one kernel, as Inductor's are; gradients go through unfold's backward.
    def f(x):
        return (x.relu() + 1).unfold(2, 3, 2).unfold(3, 3, 2).mean((-1, -2))

    x = torch.randn(2, 3, 9, 8)
    hipinductor.clear_reports()
    with torch.no_grad():
        torch.testing.assert_close(compile(f)(x), f(x))
    (report,) = hipinductor.reports()
    assert "aten.unfold.default" in report["ops_lowered"] and report["fallback_ops"] == []
    assert report["kernels"] == 1
    torch._dynamo.reset()
    xe, xc = x.clone().requires_grad_(), x.clone().requires_grad_()
    out, expected = compile(f)(xc), f(xe)
    torch.testing.assert_close(out, expected)
    out.square().sum().backward()
    expected.square().sum().backward()
    torch.testing.assert_close(xc.grad, xe.grad)


def _aten_graph(f, *args):
    from torch.fx.experimental.proxy_tensor import make_fx

    return make_fx(f, tracing_mode="fake")(*args)


def _targets(gm):
    return [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]


def test_gemm_epilogue_takes_relu_and_tanh_gelu_of_an_addmm_read_once():
    from hipinductor.passes.gemm_epilogue import fuse_gemm_activations

    aten = torch.ops.aten

    def f(x, w, b):
        h = aten.gelu(aten.addmm(b, x, w.t()), approximate="tanh")          # taken
        v = aten.relu(aten.view(aten.addmm(b, h, w.t()), [2, 3, 16]))        # taken, through nn.Linear's view
        exact = aten.gelu(aten.addmm(b, x, w.t()))                           # exact gelu: no epilogue has it
        twice = aten.addmm(b, x, w.t())
        kept = aten.relu(twice) + twice                                      # the product is read again
        scaled = aten.relu(aten.addmm(b, x, w.t(), beta=0.5, alpha=2.0))     # taken, with beta and alpha
        return v, exact, kept, scaled

    args = (torch.randn(6, 16), torch.randn(16, 16), torch.randn(16))
    gm = _aten_graph(f, *args)
    assert fuse_gemm_activations(gm) == 0  # CPU tensors: the default is GPUs only (CPU's use_gelu is exact gelu)
    assert fuse_gemm_activations(gm, ("cpu",)) == 3
    fused = [n for n in gm.graph.nodes if n.target is aten._addmm_activation.default]
    assert [n.kwargs for n in fused] == [{"use_gelu": True}, {"use_gelu": False},
                                         {"beta": 0.5, "alpha": 2.0, "use_gelu": False}]
    targets = _targets(gm)
    assert targets.count("aten.addmm.default") == 2 and targets.count("aten.gelu.default") == 1
    assert targets.count("aten.relu.default") == 1
    # relu is exact either way, on every device: the rewritten graph gives eager's results for those outputs.
    got, want = gm(*args), f(*args)
    for i in (2, 3):
        torch.testing.assert_close(got[i], want[i], rtol=0, atol=0)


_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="GPU machine only: run through scripts/gpu-check.sh")


@_gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_gemm_epilogue_on_gpu_matches_eager_and_folds_into_the_fast_path(dtype):
    torch.manual_seed(0)
    mlp = torch.nn.Sequential(torch.nn.LayerNorm(64), torch.nn.Linear(64, 256), torch.nn.GELU(approximate="tanh"),
                              torch.nn.Linear(256, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8)).cuda().to(dtype)
    x = torch.randn(4, 32, 64, device="cuda", dtype=dtype)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == torch.float32 else dict(rtol=2e-2, atol=2e-2)
    for fuse in (True, False):
        torch._dynamo.reset()
        hipinductor.clear_reports()
        compiled = compile(mlp, gemm_epilogue=fuse)
        with torch.no_grad():
            for _ in range(3):  # general path, then the fast path
                torch.testing.assert_close(compiled(x), mlp(x), **tol)
        (report,) = hipinductor.reports()
        assert report["gemm_epilogues"] == (2 if fuse else 0)
        source = next(iter(_graph_of_last_compile().fast_paths.values())).source
        assert source.count("addmm_activation") == (2 if fuse else 0), source
    if dtype != torch.float32:
        return
    # Training: relu's product is saved only through relu's output, so the forward still fuses it; gelu's is saved.
    torch._dynamo.reset()
    hipinductor.clear_reports()
    xg = x.detach().requires_grad_()
    compiled = compile(mlp)
    out = compiled(xg)
    out.float().square().sum().backward()
    grads = [p.grad.clone() for p in mlp.parameters()] + [xg.grad.clone()]
    mlp.zero_grad()
    xg.grad = None
    ref = mlp(xg)
    ref.float().square().sum().backward()
    torch.testing.assert_close(out, ref, **tol)
    for g, p in zip(grads, list(mlp.parameters()) + [xg]):
        torch.testing.assert_close(g, p.grad, rtol=1e-4, atol=1e-4)
    assert [r["gemm_epilogues"] for r in hipinductor.reports()] == [1, 0]


def test_elu_family_and_logit_run_in_kernels_with_their_gradients():
    # elu is core ATen on recent PyTorch (not decomposed there): lowered whole, with elu_backward from the input
    # (celu, selu) or the result (in-place elu saves its output). logit's decomposition computes `1 - x` as
    # sub.Tensor(1, x), a number for self.
    def f(x):
        return (torch.nn.functional.elu(x, 0.7), torch.selu(x), torch.nn.functional.celu(x, 1.3),
                torch.nn.functional.elu(x * 2, inplace=True), torch.logit(x.sigmoid(), 1e-3))

    x = torch.randn(7, 33)
    xe, xc = x.clone().requires_grad_(), x.clone().requires_grad_()
    hipinductor.clear_reports()
    out, expected = compile(f)(xc), f(xe)
    torch.testing.assert_close(out, expected)
    sum(o.sum() for o in out).backward()
    sum(o.sum() for o in expected).backward()
    torch.testing.assert_close(xc.grad, xe.grad)
    forward, backward = hipinductor.reports()
    assert "aten.elu.default" in forward["ops_lowered"] and forward["fallback_ops"] == [], forward
    assert "aten.elu_backward.default" in backward["ops_lowered"] and backward["fallback_ops"] == [], backward


def test_bfloat16_batch_norm_training_normalises_with_the_statistics_eager_cpu_stores():
    # With 16-bit parameters, CPU eager saves the batch mean and invstd in that type and normalises with the rounded
    # values; near-zero outputs differed from eager by that rounding (0.02 on OpInfo's samples) before.
    torch.manual_seed(0)
    x = (torch.randn(6, 5, 7) * 2 + 5).bfloat16()
    w, b = torch.rand(5).bfloat16() + 0.5, torch.randn(5).bfloat16()
    rm, rv = torch.zeros(5, dtype=torch.bfloat16), torch.ones(5, dtype=torch.bfloat16)

    def f(x, w, b, rm, rv):
        return torch.nn.functional.batch_norm(x, rm, rv, w, b, training=True, momentum=0.5, eps=0.6)

    # Mixed parameters (float32 with bf16 input) keep float32 statistics in eager, unrounded.
    for params in ((w, b, rm, rv), tuple(p.float() for p in (w, b, rm, rv))):
        torch._dynamo.reset()
        w_, b_, rm_, rv_ = params
        rm2, rv2 = rm_.clone(), rv_.clone()
        hipinductor.clear_reports()
        out, expected = compile(f)(x, w_, b_, rm2, rv2), f(x, w_, b_, rm_, rv_)
        assert hipinductor.reports()[0]["fallback_ops"] == []
        # Within one bf16 ulp of eager's (float32 rounding may still tip a value across a bf16 boundary).
        e = expected.float()
        ulp = torch.exp2(torch.floor(torch.log2(e.abs().clamp_min(2.0**-100))) - 7)
        assert ((out.float() - e).abs() <= ulp).all(), ((out.float() - e).abs() / ulp).max()
        torch.testing.assert_close((rm2, rv2), (rm_, rv_))


def test_polygamma_and_zeta_match_eager_across_their_domain():
    # Positive, large and negative arguments, poles, inf and NaN; n = 0 (digamma), 1 (trigamma's series, as eager
    # computes it in the argument's precision) and 2..4 (the Hurwitz zeta).
    torch.manual_seed(0)
    x = torch.cat([torch.randn(300) * 5, torch.rand(100) * 100, -torch.rand(100) * 10 - 0.01,
                   torch.tensor([0.5, 1.0, -1.0, 0.0, float("inf"), float("nan")])])
    for dtype, rtol in ((torch.float32, 1e-5), (torch.float64, 1e-10)):
        for n in range(5):
            torch._dynamo.reset()
            hipinductor.clear_reports()
            got = compile(lambda t: torch.polygamma(n, t))(x.to(dtype))  # noqa: B023
            torch.testing.assert_close(got, torch.polygamma(n, x.to(dtype)), rtol=rtol, atol=1e-6, equal_nan=True)
            assert hipinductor.reports()[0]["fallback_ops"] == []
    a, q = torch.rand(50) * 5 + 1, torch.rand(50) * 10 - 3
    torch.testing.assert_close(compile(torch.special.zeta)(a, q), torch.special.zeta(a, q), rtol=1e-5, atol=1e-6,
                               equal_nan=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.float64])
def test_matrix_products_over_an_inner_size_of_one_are_kernels_equal_to_the_gemm(dtype):
    """A rotary embedding's frequencies times positions, bmm [B, M, 1] x [B, 1, N], and mm [M, 1] x [1, N]: one
    product per element, in a kernel with what reads it, bit for bit the GEMM's. An inner size of 2 stays a GEMM."""
    def f(a, b, c, d):
        return torch.cat((torch.bmm(a, b), torch.bmm(a, b)), -1).transpose(1, 2), torch.mm(c, d) + 1

    args = [torch.randn(3, 5, 1, dtype=dtype), torch.randn(3, 1, 7, dtype=dtype), torch.randn(4, 1, dtype=dtype),
            torch.randn(1, 6, dtype=dtype)]
    torch._dynamo.reset()
    hipinductor.clear_reports()
    for got, want in zip(compile(f)(*args), f(*args)):
        assert torch.equal(got, want)
    (report,) = hipinductor.reports()
    assert report["fallback_ops"] == [] and report["kernels"] >= 1
    torch._dynamo.reset()
    hipinductor.clear_reports()
    a, b = torch.randn(3, 5, 2, dtype=dtype), torch.randn(3, 2, 7, dtype=dtype)
    torch.testing.assert_close(compile(torch.bmm)(a, b), torch.bmm(a, b))
    assert hipinductor.reports()[0]["fallback_ops"] == ["aten.bmm.default"]


def test_training_graphs_key_the_forward_without_parameters_and_the_backward_by_every_input():
    """The forward graph's static inputs are the module's parameters; the backward graph's inputs (saved values,
    gradients) are all keyed, whatever the forward's static indices say."""
    from hipinductor.reporting import live_graphs

    net = torch.nn.Sequential(torch.nn.Linear(6, 4), torch.nn.Tanh())
    torch._dynamo.reset()
    hipinductor.clear_reports()
    compiled = compile(net)
    for _ in range(2):
        x = torch.randn(3, 6, requires_grad=True)
        compiled(x).sum().backward()
    names = {r["name"] for r in hipinductor.reports()}
    graphs = {g.name.split("_")[0]: g for g in list(live_graphs) if g.name in names}
    forward, backward = graphs["forward"], graphs["backward"]
    keyed = [tuple(forward.placeholders[i].meta["val"].shape) for i in forward.key_inputs]
    assert keyed == [(3, 6)] and len(forward.placeholders) == 3
    assert backward.key_inputs is None


def test_uint8_cpu_bilinear_and_bicubic_interpolation_equal_eagers_fixed_point_kernel():
    """CPU eager interpolates uint8 images in fixed point, one off from the rounded float decomposition for up to a
    quarter of the pixels: those calls run eagerly (as one op of ours), bit for bit; float images keep the kernels."""
    import torch.nn.functional as F

    def f(x):
        return (F.interpolate(x, scale_factor=2, mode="bilinear"),
                F.interpolate(x, size=(7, 9), mode="bicubic", align_corners=True),
                F.interpolate(x, scale_factor=0.6, mode="bilinear", antialias=True),
                F.upsample_bilinear(x, scale_factor=1.5))

    torch.manual_seed(0)
    x = torch.randint(0, 256, (2, 3, 8, 10), dtype=torch.uint8)
    for image in (x, x.contiguous(memory_format=torch.channels_last)):
        torch._dynamo.reset()
        hipinductor.clear_reports()
        for got, want in zip(compile(f)(image), f(image)):
            assert torch.equal(got, want) and got.is_contiguous() == want.is_contiguous()
        assert hipinductor.reports()[0]["fallback_ops"] == ["hipinductor.eager_interpolation.default"]
    torch._dynamo.reset()
    hipinductor.clear_reports()
    xf = x.float()
    for got, want in zip(compile(f)(xf), f(xf)):
        # float32 rounding order: PyTorch 2.11's CPU bicubic kernel differs from its decomposition by up to 1.2e-4
        # on these 0..255 pixels (8 ulps at 255); 2.6's did not.
        torch.testing.assert_close(got, want, rtol=1.3e-6, atol=2.5e-4)
    (report,) = hipinductor.reports()
    assert report["kernels"] >= 1 and "hipinductor.eager_interpolation.default" not in report["fallback_ops"]


@pytest.mark.parametrize("mode", ["nearest", "bilinear"])
def test_upsampling_source_coordinates_are_computed_in_int(tmp_path, mode):
    """The decomposition computes each output's source row and column as int64 (float coordinates converted, clamped,
    wrapped); their bounds follow from the output's extents, so the kernel computes them in int, and the results stay
    eager's: odd sizes, a sliced (non-contiguous) input, align_corners, bf16."""
    import torch.nn.functional as F

    torch.manual_seed(0)
    x = torch.randn(2, 3, 7, 12)[:, :, :, 1:10]
    kwargs = [{"scale_factor": 2}, {"size": (9, 4)}]
    if mode == "bilinear":
        kwargs.append({"size": (5, 13), "align_corners": True})
    for kw in kwargs:
        for t in (x, x.to(torch.bfloat16)):
            torch._dynamo.reset()
            fn = lambda v: F.interpolate(v, mode=mode, **kw)  # noqa: E731
            got, want = compile(fn, debug_dir=str(tmp_path))(t), fn(t)
            if mode == "nearest" or t.dtype == torch.bfloat16:
                torch.testing.assert_close(got, want, rtol=0, atol=0 if mode == "nearest" else 8e-3)
            else:
                torch.testing.assert_close(got, want, rtol=1.3e-6, atol=1e-6)
    sources = [p.read_text() for p in tmp_path.rglob("*.hip")]
    assert sources
    for text in sources:
        kernels = text.split("// ---- kernels ----", 1)[1]
        assert "hi_i64" not in kernels, kernels


def test_gathers_read_cheap_producers_in_place_of_a_buffer():
    """An upsampling or an embedding of a computed value (a bf16 image cast to float by the decomposition, a relu, a
    weight cast to half) reads that value's own inputs at the gathered positions: one kernel, no buffer between."""
    import torch.nn.functional as F

    torch.manual_seed(0)
    x = torch.randn(2, 3, 5, 7).to(torch.bfloat16)
    w = torch.randn(10, 6)
    idx = torch.tensor([[3, 0, 9], [9, 1, 1]])
    cases = [
        (lambda t: F.interpolate(t, scale_factor=2, mode="nearest"), (x,)),
        (lambda t: F.interpolate(torch.relu(t) * 3, size=(9, 4), mode="nearest"), (x.float(),)),
        (lambda t, i: F.embedding(i, t.to(torch.float16)), (w, idx)),
    ]
    for fn, args in cases:
        torch._dynamo.reset()
        hipinductor.clear_reports()
        assert torch.equal(compile(fn)(*args), fn(*args))
        (report,) = hipinductor.reports()
        assert report["kernels"] == 1 and report["fallback_ops"] == [], report


def test_a_python_float_argument_dynamo_asks_to_specialize_still_compiles():
    """Dynamo traces a Python float argument as a tensor and, where AOTAutograd cannot keep it one (clamp's bound),
    asks to trace the frame again with the float specialized (TensorifyScalarRestartAnalysis, raised from inside the
    backend). That request is dynamo's: swallowed, the whole graph ran eagerly for that value."""
    def f(x, bound):
        return torch.clamp(x * 2, min=bound).exp()

    torch._dynamo.reset()
    hipinductor.clear_reports()
    compiled = compile(f)
    x = torch.randn(8)
    torch.testing.assert_close(compiled(x, 0.5), f(x, 0.5))
    (report,) = hipinductor.reports()
    assert report["kernels"] == 1 and report["eager_reason"] is None


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_16_bit_trunc_division_truncates_the_rounded_quotient_as_eager(dtype):
    # Eager divides 16-bit operands in float, rounds the quotient to the tensor's type (c10::BFloat16's operator/),
    # then truncates: bf16 -6.3125 / 1.0547 is -5.985 in float and -6.0 rounded, so -6 (trunc in float gave -5).
    a = torch.cat([torch.tensor([-6.3125, 2.998, 7.0]), torch.randn(5000).mul(20)]).to(dtype)
    b = torch.cat([torch.tensor([1.0547, 1.0, 2.0]), torch.randn(5000).mul(3)]).to(dtype)
    f = lambda x, y: (torch.div(x, y, rounding_mode="trunc"), torch.div(x, 0.7, rounding_mode="trunc"))  # noqa: E731
    torch._dynamo.reset()
    hipinductor.clear_reports()
    got, want = compile(f)(a, b), f(a, b)
    for g, w in zip(got, want):
        assert torch.equal(g.isnan(), w.isnan()) and torch.equal(g.nan_to_num(), w.nan_to_num())
    assert got[0][0].item() == (-6.0 if dtype == torch.bfloat16 else -5.0)  # float16 rounds -5.985 to -5.984
    assert hipinductor.reports()[0]["fallback_ops"] == []


@_gpu
def test_module_compiled_as_several_units_runs_on_the_gpu():
    """A graph whose kernels pass the GPU unit bound (CompileOptions::max_gpu_unit_kernel_bytes) compiles as several
    units kept in one container (runtime/code_object_units.h): on the GPU every kernel launches from its part, with
    eager's results, and the loader's facts name every kernel."""
    def f(x):
        for _ in range(50):
            x = torch.softmax(x, -1)
        return x

    x = torch.randn(64, 512, device="cuda")
    hipinductor.clear_reports()
    compiled = compile(f)
    for _ in range(2):
        torch.testing.assert_close(compiled(x), f(x), rtol=1e-5, atol=1e-6)
    from hipinductor.partition import Segment

    (compiled_graph,) = [cg for step in _graph_of_last_compile().steps if isinstance(step, Segment)
                         for cg in step.compiled.values()]
    code = compiled_graph.code_object
    assert code[:8] == b"HIUNITS1", code[:8]
    assert int.from_bytes(code[8:12], "little") >= 2
    assert sorted(k["name"] for k in compiled_graph.kernel_facts) == sorted(compiled_graph.kernel_names)


@_gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_nan_propagating_extremes_on_gpu_match_eager(dtype):
    # On sm_80+ maximum/minimum are one max.NaN / min.NaN instruction: NaN must still win in pointwise maximum and
    # clamp, max pooling windows, amax/amin over rows and columns and a running cummax, as in eager.
    torch.manual_seed(0)
    x = torch.randn(4, 8, 30, 30, device="cuda", dtype=dtype)
    x[0, 0, 3, 4] = float("nan")
    x[1, 2, 0, 0] = float("nan")
    x[2, 3] = float("-inf")
    x[3, 1, 5] = 0.0
    x[3, 1, 6] = -0.0
    y = torch.randn_like(x)
    y[0, 1, 7, 7] = float("nan")

    def f(a, b):
        return (torch.maximum(a, b), torch.minimum(a, b), a.clamp(-0.5, 0.5),
                torch.nn.functional.max_pool2d(a, 3, 2, 1), a.amax(-1), a.amin(0), a.amax((2, 3)),
                a.flatten(2).cummax(-1).values)

    expected = f(x, y)
    actual = torch.compile(f, backend="hipinductor")(x, y)
    for e, a in zip(expected, actual):
        assert torch.equal(torch.isnan(a), torch.isnan(e))
        torch.testing.assert_close(a, e, equal_nan=True, rtol=0, atol=0)
