"""Graphs with symbolic sizes (dynamo's dynamic=True, mark_dynamic, automatic dynamic after a second size): each
segment compiles once for every size, calls at any size bind the symbols' values, results equal eager's, and the
reports say which dims were symbolic and how many compiles and recompiles happened, and why."""

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import hipinductor
# Primes, sizes no vector width divides, sizes past the vector widths, and 1 (dynamo specialises sizes 0 and 1: the
# call is a graph of dynamo's own, symbolic in the other dims); softmax and layer norm add a row longer than a row held
# in registers.
SIZES = [2, 3, 5, 7, 13, 31, 97, 257, 1031, 1]
LONG_ROW = 33001  # past 1024 threads x 32 values per thread (codegen/plan_reductions.cpp)


def compile(fn, **kw):
    return torch.compile(fn, backend="hipinductor", **kw)


def symbolic_reports() -> list[dict]:
    return [r for r in hipinductor.reports() if r["symbolic_dims"]]


def assert_compiled_once(expected_graphs: int = 1) -> list[dict]:
    """Each graph with symbolic sizes compiled every segment once for every size (and once more at most per set of
    its symbols whose values were multiples of 16: variants chosen per call; and the stand-ins some calls ran on
    while their own variant compiled in the background): no recompile, no fallback.
    (A call with a size of 1 is a graph of dynamo's own: it specialises sizes 0 and 1.)"""
    graphs = symbolic_reports()
    assert len(graphs) == expected_graphs, hipinductor.reports()
    for r in graphs:
        assert r["symbolic_fallbacks"] == {}, r
        assert r["recompiles"] == 0 and r["recompile_reasons"] == {}, r
        assert (r["compiles"] == r["symbolic_compiles"]
                == r["segments"] + r["variant_compiles"] + r["stand_in_compiles"]), r
        assert r["segments"] > 0, r
    return graphs


def _reset():
    torch._dynamo.reset()
    hipinductor.clear_reports()


def test_symbolic_documents_name_symbols_by_appearance_not_by_dynamo_or_hints():
    # The segment's document is the compiler's cache key: two tensors with other dynamo symbols and other traced
    # sizes, but the same structure, must write the same sizes.
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, StatelessSymbolicContext

    from hipinductor.symbolic import NotExpressible, SymbolNames, evaluate, format_expr

    mode = FakeTensorMode(shape_env=ShapeEnv())
    dynamic = StatelessSymbolicContext(dynamic_sizes=[DimDynamic.DYNAMIC] * 2)
    a = mode.from_tensor(torch.randn(5, 7), symbolic_context=dynamic)
    b = mode.from_tensor(torch.randn(9, 3), symbolic_context=dynamic)  # dynamo's s2, s3
    written = []
    for t in (a, b):
        names = SymbolNames()
        n, m = t.shape
        written.append([names.size(v) for v in (m, n, n * m * 3, n // 2, t.stride(0), 4)])
    assert written[0] == written[1] == [{"sym": "s0"}, {"sym": "s1"}, {"sym": "(3*s0*s1)"}, {"sym": "(s1 // 2)"},
                                        {"sym": "s0"}, 4]
    n, m = a.shape
    assert evaluate(n * m + m % 4, {n.node.expr: 6, m.node.expr: 11}) == 69
    for e in ((n.node.expr + 1) % m.node.expr, torch.sym_max(n, m * 2).node.expr, (n * m // 3).node.expr):
        text = format_expr(e)  # the format's syntax is Python's for these, with min and max as functions
        # format_expr keeps the ShapeEnv's own names (s0, s1 in one PyTorch release, others in another)
        env = {str(n.node.expr): 6, str(m.node.expr): 4}
        assert eval(text, env) == int(e.xreplace({n.node.expr: 6, m.node.expr: 4})), text
    with pytest.raises(NotExpressible):
        SymbolNames().size(n / 2)


def test_pointwise_over_many_sizes_compiles_once():
    def f(x, y):
        return torch.relu(x * 2 + y).sigmoid() - y

    _reset()
    g = compile(f, dynamic=True)
    for n in SIZES:
        for m in (3, 64):
            x, y = torch.randn(n, m), torch.randn(m)
            torch.testing.assert_close(g(x, y), f(x, y))
    # The rows of 1 are a graph of dynamo's own, symbolic in the other dim.
    r, _ = assert_compiled_once(expected_graphs=2)
    # dynamo's symbol names differ between PyTorch releases (s0, s77): the dim, not the name, is what is checked.
    assert any(re.search(r"\.size\(0\)=s\d+$", d) for d in r["symbolic_dims"]), r["symbolic_dims"]


@pytest.mark.parametrize("dim", ["rows", "cols"])
def test_softmax_over_many_sizes_compiles_once(dim):
    def f(x):
        return torch.softmax(x * 0.5, -1)

    _reset()
    g = compile(f, dynamic=True)
    shapes = [(n, 40) for n in SIZES] if dim == "rows" else [(3, n) for n in SIZES + [LONG_ROW]]
    for shape in shapes:
        x = torch.randn(shape)
        torch.testing.assert_close(g(x), f(x))
    assert_compiled_once(expected_graphs=2)


def test_layer_norm_over_symbolic_rows_and_row_length_compiles_once():
    def f(x, w):
        return F.layer_norm(x, x.shape[-1:]) * 2 + F.layer_norm(x[..., :8], (8,), w)[..., :1]

    _reset()
    g = compile(f, dynamic=True)
    w = torch.randn(8)
    for rows, cols in zip(SIZES, [9, 11, 16, 17, 31, 97, 128, 257, 1031, LONG_ROW]):
        x = torch.randn(rows, cols)
        torch.testing.assert_close(g(x, w), f(x, w), rtol=1e-4, atol=1e-4)
    assert_compiled_once(expected_graphs=2)


class Block(torch.nn.Module):
    """A pre-norm transformer block with attention written out (its products run in eager PyTorch)."""

    def __init__(self, d=32, heads=4):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.qkv, self.proj = torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d)
        self.fc, self.out = torch.nn.Linear(d, 4 * d), torch.nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, -1)
        q, k, v = (z.view(b, t, self.heads, -1).transpose(1, 2) for z in (q, k, v))
        att = torch.softmax(q @ k.transpose(-1, -2) / (d // self.heads) ** 0.5, -1)
        x = x + self.proj((att @ v).transpose(1, 2).reshape(b, t, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


def test_transformer_block_over_many_sequence_lengths_compiles_once():
    torch.manual_seed(0)
    block = Block().eval()
    _reset()
    g = compile(block)
    with torch.no_grad():
        for t in [4, 2, 3, 5, 7, 13, 31, 64, 97]:  # automatic dynamic from the second length on
            x = torch.randn(2, t, 32)
            torch.testing.assert_close(g(x), block(x), rtol=1e-4, atol=1e-4)
    (r,) = assert_compiled_once()
    assert any(".size(1)=" in d for d in r["symbolic_dims"]), r["symbolic_dims"]


def test_arange_over_symbolic_bounds_compiles_once():
    # Positions over a dynamic sequence length: arange's length is the symbolic expression and its values an index
    # expression (an integer start that is itself a size, a step other than 1, a float result type).
    def f(x):
        n = x.shape[0]
        pos = torch.arange(n) * 2 + torch.arange(n, 2 * n)
        odd = torch.arange(1, n + 1, 3, dtype=torch.float32)
        return x * pos.float() + torch.arange(n, 0, -1) + odd.sum(), torch.arange(n).unsqueeze(1) <= torch.arange(n)

    _reset()
    g = compile(f, dynamic=True)
    # From 5 on: a trace at a length below 4 gives arange(1, n + 1, 3) one element, under a guard of dynamo's.
    for n in [5, 7, 13, 31, 97, 257, 1031, 4, 6, 64]:
        x = torch.randn(n)
        got, want = g(x), f(x)
        torch.testing.assert_close(got, want)
    assert_compiled_once()


class MaskedAttention(torch.nn.Module):
    """Two attention layers sharing a causal mask made as transformers' masking makes it: position ranges compared,
    then expanded over the batch (a view with a stride of 0 that the mask's segment materialises); the mask is read by
    eager attention and by a later segment, which receives it as the materialised copy, not in the traced layout."""

    def __init__(self, d=16, heads=2, vocab=50, positions=600):
        super().__init__()
        self.heads = heads
        self.wte, self.wpe = torch.nn.Embedding(vocab, d), torch.nn.Embedding(positions, d)
        self.qkv = torch.nn.ModuleList(torch.nn.Linear(d, 3 * d) for _ in range(2))
        self.ln = torch.nn.ModuleList(torch.nn.LayerNorm(d) for _ in range(2))

    def forward(self, ids):
        b, t = ids.shape
        pos = torch.arange(0, t, device=ids.device)
        h = self.wte(ids) + self.wpe(pos.unsqueeze(0))
        kv_idx = torch.arange(t, device=ids.device)
        mask = (kv_idx[None, :] <= pos[:, None])[None, None].expand(b, -1, -1, -1)
        for qkv, ln in zip(self.qkv, self.ln):
            q, k, v = qkv(ln(h)).split(h.shape[-1], -1)
            q, k, v = (z.view(b, t, self.heads, -1).transpose(1, 2) for z in (q, k, v))
            scores = (q @ k.transpose(-1, -2)).masked_fill(~mask, float("-inf"))
            h = h + (torch.softmax(scores, -1) @ v).transpose(1, 2).reshape(b, t, -1)
        return h


def test_gpt_style_model_over_batches_and_lengths_has_no_recompile():
    torch.manual_seed(0)
    model = MaskedAttention().eval()
    _reset()
    g = compile(model)
    # Lengths and batches that are primes or no multiple of the vector widths (no divisibility variant either); both
    # dims marked dynamic, as automatic dynamic makes them after a second batch and length.
    shapes = [(b, t) for b in (2, 3, 5) for t in (8, 5, 7, 13, 31, 11, 12, 6)]
    with torch.no_grad():
        for b, t in shapes:
            ids = torch.randint(0, 50, (b, t))
            torch._dynamo.mark_dynamic(ids, 0)
            torch._dynamo.mark_dynamic(ids, 1)
            torch.testing.assert_close(g(ids), model(ids), rtol=1e-4, atol=1e-4)
    (r,) = assert_compiled_once()
    assert r["variant_compiles"] == 0, r


def test_training_with_a_dynamic_batch_compiles_forward_and_backward_once():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.LayerNorm(32), torch.nn.GELU(),
                                torch.nn.Linear(32, 4))
    reference = [p.detach().clone().requires_grad_() for p in model.parameters()]

    def eager(x):
        w1, b1, lw, lb, w2, b2 = reference
        h = F.gelu(F.layer_norm(F.linear(x, w1, b1), (32,), lw, lb))
        return F.linear(h, w2, b2)

    _reset()
    g = compile(model)
    for batch in [4, 2, 3, 5, 7, 13, 31, 97, 257]:
        x = torch.randn(batch, 16)
        x.requires_grad_()
        xr = x.detach().clone().requires_grad_()
        got, want = g(x), eager(xr)
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
        dy = torch.randn_like(want)
        got_grads = torch.autograd.grad(got, [x, *model.parameters()], dy)
        want_grads = torch.autograd.grad(want, [xr, *reference], dy)
        for a, b in zip(got_grads, want_grads):
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)
    assert_compiled_once(expected_graphs=2)  # the forward and the backward of the dynamic batch


def test_two_dims_sharing_a_symbol_and_two_dims_that_do_not():
    def f(x):
        return (x * 3).softmax(-1) + x.sum(0, keepdim=True)

    _reset()
    g = compile(f, dynamic=True)
    for n in SIZES[:-1]:  # square inputs: dynamo gives both dims one symbol
        x = torch.randn(n, n)
        torch.testing.assert_close(g(x), f(x), rtol=1e-4, atol=1e-4)
    (shared,) = assert_compiled_once()
    assert len({d.split("=")[1] for d in shared["symbolic_dims"]}) == 1, shared["symbolic_dims"]

    _reset()
    g = compile(f, dynamic=True)
    for rows, cols in [(3, 5), (5, 3), (7, 7), (2, 31), (97, 13), (13, 13), (257, 2), (31, 1031)]:
        x = torch.randn(rows, cols)  # equal sizes after the trace are two symbols' values that happen to agree
        torch.testing.assert_close(g(x), f(x), rtol=1e-4, atol=1e-4)
    (distinct,) = assert_compiled_once()
    assert len({d.split("=")[1] for d in distinct["symbolic_dims"]}) == 2, distinct["symbolic_dims"]


def test_mark_dynamic_makes_the_marked_dim_symbolic_only():
    def f(x):
        return torch.tanh(x) * x.mean(-1, keepdim=True)

    _reset()
    g = compile(f)
    for n in SIZES[:-1]:
        x = torch.randn(n, 24)
        torch._dynamo.mark_dynamic(x, 0)
        torch.testing.assert_close(g(x), f(x))
    (r,) = assert_compiled_once()
    marked = [d.split(".")[1] for d in r["symbolic_dims"] if ".size(" in d]
    assert len(marked) == 1 and re.fullmatch(r"size\(0\)=s\d+", marked[0]), r["symbolic_dims"]


def test_fast_path_per_size_takes_the_symbols_values():
    from hipinductor.reporting import live_graphs

    def f(x):
        return torch.softmax(x, -1) * 2

    _reset()
    g = compile(f, dynamic=True)
    sizes = [3, 5, 7]
    for _ in range(3):  # the first round writes a fast path per size, the others take them
        for n in sizes:
            x = torch.randn(n, 10)
            torch.testing.assert_close(g(x), f(x))
    (r,) = assert_compiled_once()
    (graph,) = [gr for gr in list(live_graphs) if gr.name == r["name"]]
    paths = [fn for fn in graph.fast_paths.values() if fn]
    assert len(paths) == len(sizes)
    assert all("sizes=" in fn.source for fn in paths)


def test_a_misaligned_input_fails_the_alignment_guard_and_compiles_a_checked_variant():
    def f(x):
        return torch.relu(x) * 2

    _reset()
    g = compile(f, dynamic=True)
    for n in (8, 12):
        x = torch.randn(n)
        torch.testing.assert_close(g(x), f(x))
    raw = np.zeros(64 * 4 + 32, dtype=np.uint8)
    start = next(k for k in range(4, 32, 4) if (raw.ctypes.data + k) % 16)
    misaligned = torch.from_numpy(raw[start:start + 4 * 40].view(np.float32))
    misaligned.copy_(torch.randn(40))
    for _ in range(2):
        torch.testing.assert_close(g(misaligned), f(misaligned))
    (r,) = symbolic_reports()
    assert r["symbolic_compiles"] == 2 and r["recompiles"] == 1, r
    (reason,) = r["recompile_reasons"]
    assert "aligned" in reason


def test_sizes_divisible_by_16_take_a_variant_promised_so_and_others_the_general_one():
    # Softmax rows and column sums over [n, m]: the calls whose m is a multiple of 16 run a compile promised that
    # (vector rows without peeling), the others one for every size; each compiled once, chosen per call.
    def f(x):
        return torch.softmax(x, -1) + x.sum(0)

    _reset()
    g = compile(f, dynamic=True)
    shapes = [(3, 32), (5, 7), (7, 48), (13, 33), (2, 16), (31, 1031), (9, 4096), (4, 20)]
    for n, m in shapes:
        x = torch.randn(n, m)
        torch.testing.assert_close(g(x), f(x), rtol=1e-4, atol=1e-4)
    # Calls run on stand-ins while the variant for sizes no multiple of 16 compiles in the background; once it is
    # compiled, they take it.
    assert hipinductor.wait_for_compiles(timeout=300)
    for n, m in shapes:
        x = torch.randn(n, m)
        torch.testing.assert_close(g(x), f(x), rtol=1e-4, atol=1e-4)
    (r,) = assert_compiled_once()
    assert r["variant_compiles"] == r["segments"], r
    # The first compile started when the graph was built, the others in the background: none on a call's path.
    assert r["call_path_compiles"] == 0, r

    _reset()
    g = compile(f, dynamic=True, options={"divisibility_variants": False})
    for n, m in [(3, 32), (5, 7), (7, 48)]:
        x = torch.randn(n, m)
        torch.testing.assert_close(g(x), f(x), rtol=1e-4, atol=1e-4)
    (r,) = assert_compiled_once()
    assert r["variant_compiles"] == 0, r


def test_never_seen_sizes_after_warm_up_compile_nothing_on_the_call_path():
    # After a warm-up at sizes that are multiples of 16 (their variant compiled on the first call), calls at sizes
    # never seen (primes, sizes no vector width divides, large; every combination of divisible and not) run on
    # compiles made ahead or in the background: no compile on a call's path, results equal eager's.
    def f(x, w):
        return F.rms_norm(torch.softmax(x, -1) * 2, (x.shape[-1],), w) + x.sum(0)

    _reset()
    g = compile(f, dynamic=True)
    for n, m in [(16, 32), (32, 48)]:
        x, w = torch.randn(n, m), torch.randn(m)
        torch.testing.assert_close(g(x, w), f(x, w), rtol=1e-4, atol=1e-4)
    (r,) = symbolic_reports()
    first = r["call_path_compiles"]  # none: the graph's first compiles started when it was built
    for n, m in [(13, 7), (2, 1031), (48, 97), (5, 64), (257, 3), (32, 16)]:
        x, w = torch.randn(n, m), torch.randn(m)
        torch.testing.assert_close(g(x, w), f(x, w), rtol=1e-4, atol=1e-4)
    hipinductor.wait_for_compiles(timeout=300)
    (r,) = assert_compiled_once()
    assert r["call_path_compiles"] == first, r
    assert r["stand_in_calls"] + r["call_path_waits"] > 0, r


def test_a_segment_the_core_cannot_compile_symbolically_compiles_per_size_and_says_why():
    # Group norm over a symbolic spatial size is refused for symbolic compiles (docs/graph-format.md): that segment
    # compiles per size, each size's compile after the first a recompile with the core's reason.
    def f(x):
        return F.group_norm(x, 2) * 2 + 1

    _reset()
    g = compile(f, dynamic=True)
    sizes = (3, 5, 7)
    for n in sizes:
        x = torch.randn(2, 4, n)
        torch.testing.assert_close(g(x), f(x), rtol=1e-4, atol=1e-4)
    (r,) = symbolic_reports()
    fallbacks = r["symbolic_fallbacks"]
    assert fallbacks and all(why for why in fallbacks.values()), r
    assert r["compiles"] == r["symbolic_compiles"] + len(fallbacks) * len(sizes), r
    assert r["recompiles"] == len(fallbacks) * (len(sizes) - 1), r
    assert all(reason.startswith("compiled per size: ") for reason in r["recompile_reasons"]), r


_CHILD = r"""
import json, sys, torch, hipinductor
n = int(sys.argv[1])
torch._dynamo.reset()
g = torch.compile(lambda x: torch.softmax(x, -1) + x.sum(-1, keepdim=True), backend="hipinductor", dynamic=True)
x = torch.randn(n, n + 3)
torch.testing.assert_close(g(x), torch.softmax(x, -1) + x.sum(-1, keepdim=True))
print(json.dumps([r for r in hipinductor.reports() if r["symbolic_dims"]]))
"""


def test_a_new_process_with_a_new_size_finds_the_compile_on_disk(tmp_path):
    _reset()
    env = dict(os.environ, HIPINDUCTOR_CACHE_DIR=str(tmp_path / "cache"))

    def child(n):
        p = subprocess.run([sys.executable, "-c", _CHILD, str(n)], env=env, capture_output=True, text=True,
                           timeout=300)
        assert p.returncode == 0, p.stderr[-2000:]
        (r,) = json.loads(p.stdout.strip().splitlines()[-1])
        assert r["symbolic_compiles"] == r["compiles"] > 0 and r["recompiles"] == 0, r
        return r

    first = child(5)
    assert first["cache_hits"] == 0
    second = child(11)
    assert second["cache_hits"] == second["compiles"] == first["compiles"]


def test_index32_variant_choice_by_the_calls_extents():
    # A call takes the 32-bit-index variant when each of its tensors spans and holds fewer than INDEX32_LIMIT
    # elements; past that (here sizes past 2^31, never allocated) the 64-bit one, which serves every call.
    from hipinductor.compile_jobs import INDEX32_LIMIT, UNIVERSAL, index32_for_call, serves

    limit = INDEX32_LIMIT
    assert limit == hipinductor._C.INDEX32_LIMIT and limit < 2**31
    assert index32_for_call([((32768, 1024), (1024, 1), 0), ((1024,), (1,), 0)])
    assert index32_for_call([((limit - 1,), (1,), 0)])
    assert not index32_for_call([((limit,), (1,), 0)])
    assert not index32_for_call([((2**31 + 16,), (1,), 0)])
    assert not index32_for_call([((2**16, 2**15 + 1), (2**15 + 1, 1), 0)])
    # A view spanning past the limit, though holding few elements; a storage offset past it; a broadcast holding
    # more elements than it spans.
    assert not index32_for_call([((2, 8), (limit, 1), 0)])
    assert not index32_for_call([((16,), (1,), limit)])
    assert not index32_for_call([((2**20, 2**11), (0, 1), 0)])
    # The 64-bit variant serves a call of either kind; the 32-bit one only calls that fit it.
    call32, call64 = (True, frozenset(), True), (True, frozenset(), False)
    assert serves(UNIVERSAL, call32) and serves(UNIVERSAL, call64)
    assert serves(call32, call32) and not serves(call32, call64)


def test_index32_graph_refuses_sizes_past_its_promise():
    # The core compiles a graph promised index32 with 32-bit indices and refuses a binding whose extents break the
    # promise (here evaluated, not run: no tensor is allocated), so that no call runs it wrong.
    doc = {"format": "hipinductor-graph", "version": 4, "index32": True, "nodes": [
        {"name": "x", "op": "placeholder",
         "meta": {"dtype": "float32", "sizes": [{"sym": "s0"}, {"sym": "s1"}], "strides": [{"sym": "s1"}, 1]}},
        {"name": "y", "op": "aten._softmax.default", "args": [{"ref": "x"}, -1, False]}],
        "outputs": [{"ref": "y"}]}
    cg = hipinductor._C.compile(json.dumps(doc), target="cpu", name="index32_softmax", use_cache=False)
    assert cg.index32 and cg.symbols == ["s0", "s1"]
    cg.workspace_bytes_for([32768, 1024])
    limit = hipinductor._C.INDEX32_LIMIT
    with pytest.raises(ValueError, match="index32"):
        cg.workspace_bytes_for([2**21 + 1, 1024])
    with pytest.raises(ValueError, match="index32"):
        cg.workspace_bytes_for([1, limit])
    doc["version"] = 1
    del doc["index32"]
    assert not hipinductor._C.compile(json.dumps(doc), target="cpu", name="index64_softmax", use_cache=False).index32


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_row_kernels_index32_over_ragged_and_divisible_rows(dtype):
    # Softmax and RMSNorm, whose persistent-row variants hold rows narrower than planned (lanes past the row's groups
    # compute on group 0 and are left out of reductions and stores): results equal eager's at sizes of 1, primes,
    # widths no vector width divides and multiples of 16, on a variant indexing in 32 bits (64-bit runs only on
    # stand-ins while a call's own variant compiles), with no recompile.
    def f(x, w):
        return torch.softmax(x, -1) * 2 + x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(x.dtype) * w

    _reset()
    g = compile(f, dynamic=True)
    tol = dict(rtol=2e-2, atol=2e-2) if dtype == torch.bfloat16 else dict(rtol=1e-4, atol=1e-4)
    shapes = [(16, 1024), (3, 7), (13, 8), (2, 33), (31, 1031), (5, 64), (64, 16), (7, 2048), (1, 96), (3, 1)]
    for rounds in range(2):
        for n, m in shapes:
            x, w = torch.randn(n, m, dtype=dtype), torch.randn(m, dtype=dtype)
            torch.testing.assert_close(g(x, w), f(x, w), **tol)
        assert hipinductor.wait_for_compiles(timeout=300)
    for r in symbolic_reports():
        assert r["recompiles"] == 0 and r["symbolic_fallbacks"] == {}, r
        assert r["index32_launches"] > 0, r
        assert r["index64_launches"] <= r["stand_in_calls"], r
