#!/usr/bin/env python3
"""hipinductor benchmark (not a test): eager vs torch.compile default (Inductor) vs hipinductor, in one run, on one GPU.

Per case: ms (triton.testing.do_bench, else CUDA events; best of 3 interleaved rounds, each starting one variant
later), achieved GB/s and % of the device-to-device copy bandwidth measured in the same run, cold compile time (empty
caches) and warm start (a new process, caches hit: time from torch.compile to the first result, per compiled graph,
after one eager run of the case in that process). Memory-bound cases also time a copy of their own byte count
(same_size_copy), for reference.
Cases as in ../shared/anchors: eight memory-bound kernels, and model blocks written with torch.nn (MLP with
LayerNorm+GELU, a GPT-style block, a LLaMA-style block with RMSNorm+SwiGLU+RoPE), bf16 inference; with
--cases models, the anchors' whole models too (GPT-2, BERT and LLaMA from transformers, ViT-B/16 and ResNet-50 from
timm, random weights), where those packages are installed.

    python3 bench/run_bench.py [--cases softmax_f32_8kx8k,...] [--out bench/results/microbench-h200.json]
                              [--no-warm] [--rounds N]

Each suite's latest result is bench/results/<suite>-<gpu>.json (microbench: the eight kernels and the blocks;
blocks: llama_2l and the blocks; models: --cases models), overwritten by the next run: git keeps the history.
The results record the commit measured: `git rev-parse HEAD`, or $HIPINDUCTOR_COMMIT where the tree has no git
metadata (the GPU machine receives a copy of the working tree).
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

DEV = "cuda"
ROUNDS = 3


def rmsnorm(x, w):
    return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(x.dtype) * w


# name -> (fn, make inputs, bytes factor: main input size x factor = bytes read + written)
MICRO = {
    "add_relu_f32_64M": (lambda a, b: torch.relu(a + b),
                         lambda: [torch.randn(1 << 26, device=DEV), torch.randn(1 << 26, device=DEV)], 3),
    "gelu_bf16_8kx8k": (lambda a: F.gelu(a, approximate="tanh"),
                        lambda: [torch.randn(8192, 8192, device=DEV, dtype=torch.bfloat16)], 2),
    "softmax_f32_8kx8k": (lambda a: torch.softmax(a, -1), lambda: [torch.randn(8192, 8192, device=DEV)], 2),
    "softmax_bf16_32kx1k": (lambda a: torch.softmax(a, -1),
                            lambda: [torch.randn(32768, 1024, device=DEV, dtype=torch.bfloat16)], 2),
    "layernorm_bf16_16kx4k": (lambda a, w, b: F.layer_norm(a, (4096,), w, b),
                              lambda: [torch.randn(16384, 4096, device=DEV, dtype=torch.bfloat16),
                                       torch.randn(4096, device=DEV, dtype=torch.bfloat16),
                                       torch.randn(4096, device=DEV, dtype=torch.bfloat16)], 2),
    "rmsnorm_bf16_16kx4k": (rmsnorm, lambda: [torch.randn(16384, 4096, device=DEV, dtype=torch.bfloat16),
                                              torch.randn(4096, device=DEV, dtype=torch.bfloat16)], 2),
    "sum_rows_f32_16kx4k": (lambda a: a.sum(-1), lambda: [torch.randn(16384, 4096, device=DEV)], 1),
    "sum_cols_f32_16kx4k": (lambda a: a.sum(0), lambda: [torch.randn(16384, 4096, device=DEV)], 1),
}


class GPTBlock(nn.Module):
    def __init__(self, d=1024, heads=16):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, -1)
        q, k, v = (z.view(b, t, self.heads, -1).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(y)
        return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class RMSNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return rmsnorm(x, self.weight)


def rope(x, cos, sin):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return x * cos + torch.cat((-x2, x1), -1) * sin


class LlamaBlock(nn.Module):
    def __init__(self, d=2048, heads=16, hidden=5632, t=1024):
        super().__init__()
        self.heads = heads
        self.n1, self.n2 = RMSNorm(d), RMSNorm(d)
        self.q, self.k, self.v, self.o = (nn.Linear(d, d, bias=False) for _ in range(4))
        self.gate, self.up = nn.Linear(d, hidden, bias=False), nn.Linear(d, hidden, bias=False)
        self.down = nn.Linear(hidden, d, bias=False)
        hd = d // heads
        inv = 1.0 / (10000 ** (torch.arange(0, hd, 2).float() / hd))
        ang = torch.outer(torch.arange(t).float(), inv)
        emb = torch.cat((ang, ang), -1)
        self.register_buffer("cos", emb.cos()[None, None], persistent=False)
        self.register_buffer("sin", emb.sin()[None, None], persistent=False)

    def forward(self, x):
        b, t, d = x.shape
        h = self.n1(x)
        q, k, v = (p(h).view(b, t, self.heads, -1).transpose(1, 2) for p in (self.q, self.k, self.v))
        q, k = rope(q, self.cos, self.sin), rope(k, self.cos, self.sin)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, d)
        x = x + self.o(y)
        h = self.n2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


def mlp_block():
    return nn.Sequential(nn.LayerNorm(4096), nn.Linear(4096, 16384), nn.GELU(approximate="tanh"),
                         nn.Linear(16384, 4096)), [torch.randn(8192, 4096)]


MODELS = {
    "mlp_block": mlp_block,
    "gpt_block": lambda: (GPTBlock(), [torch.randn(8, 512, 1024)]),
    "llama_block": lambda: (LlamaBlock(), [torch.randn(4, 1024, 2048)]),
}


# The anchors' whole models (../shared/anchors/measure_models.py: Hugging Face transformers and timm, random weights,
# the same configurations and inputs), where those packages are installed. Not in the default case list: each
# takes a minute or more of compiling; name them with --cases, or --cases models for all five.
def _hf(config_name, model_name, vocab, shape, **config):
    import transformers

    model = getattr(transformers, model_name)(getattr(transformers, config_name)(**config))
    return model, [torch.randint(0, vocab, shape)]


def _timm(name):
    import timm

    return timm.create_model(name, pretrained=False), [torch.randn(32, 3, 224, 224)]


REAL_MODELS = {
    "gpt2_4l": lambda: _hf("GPT2Config", "GPT2Model", 50257, (8, 512), n_layer=4),
    "bert_4l": lambda: _hf("BertConfig", "BertModel", 30522, (8, 512), num_hidden_layers=4),
    "llama_2l": lambda: _hf("LlamaConfig", "LlamaModel", 32000, (4, 1024), num_hidden_layers=2, hidden_size=2048,
                            intermediate_size=5632, num_attention_heads=16, num_key_value_heads=16,
                            vocab_size=32000),
    "vit_b16": lambda: _timm("vit_base_patch16_224"),
    "resnet50": lambda: _timm("resnet50"),
}


def make_case(name):
    """(callable, inputs, bytes moved or None)."""
    torch.manual_seed(0)
    if name in MICRO:
        fn, mk, factor = MICRO[name]
        args = mk()
        return fn, args, args[0].numel() * args[0].element_size() * factor
    model, args = {**MODELS, **REAL_MODELS}[name]()
    model = model.to(DEV, torch.bfloat16).eval()
    return model, [a.to(DEV, torch.bfloat16 if a.is_floating_point() else a.dtype) for a in args], None


def main_tensor(out):
    """The tensor a case's result is compared by: the output itself, a model output's last_hidden_state, or the
    first entry of a tuple."""
    if isinstance(out, torch.Tensor):
        return out
    if getattr(out, "last_hidden_state", None) is not None:
        return out.last_hidden_state
    return main_tensor(out[0])


def bench(fn, args, return_mode="mean"):
    try:
        from triton.testing import do_bench

        return do_bench(lambda: fn(*args), warmup=25, rep=100, return_mode=return_mode)
    except ImportError:
        return events_ms(fn, args)


def events_ms(fn, args, calls=50):
    """Mean ms per call over `calls` back-to-back calls between two CUDA events (no cache flush), after 10 warm-up
    calls."""
    for _ in range(10):
        fn(*args)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(calls):
        fn(*args)
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / calls


def same_size_copy(nbytes):
    """A device-to-device copy moving `nbytes` (half read, half written), as a case-shaped callable."""
    src = torch.empty(nbytes // 2, dtype=torch.uint8, device=DEV)
    dst = torch.empty_like(src)
    return lambda *_: dst.copy_(src)


def copy_bandwidth():
    x = torch.empty(1 << 30, dtype=torch.uint8, device=DEV)
    y = torch.empty_like(x)
    ms = bench(lambda: y.copy_(x), [])
    return 2 * x.numel() / (ms * 1e-3) / 1e9


def first_call_s(compiled, args):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    with torch.no_grad():
        out = compiled(*args)
    torch.cuda.synchronize()
    return time.perf_counter() - t0, out


def warm_start(name, cache_dir):
    """A new process whose caches are warm: seconds from torch.compile to the first result, and graphs compiled."""
    env = dict(os.environ, HIPINDUCTOR_CACHE_DIR=cache_dir)
    p = subprocess.run([sys.executable, __file__, "--child-warm", name], env=env, capture_output=True, text=True,
                       timeout=600)
    if p.returncode != 0:
        return {"error": p.stderr.strip().splitlines()[-1:]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def child_warm(name):
    import hipinductor

    fn, args, _ = make_case(name)
    # The model runs eagerly once first, as in run_case: the first cuBLAS/cuDNN calls of a process (handles,
    # workspaces; ~0.1 s) belong to the eager GEMMs and attention, not to starting from the cache, and would otherwise
    # land in the first call's own time.
    with torch.no_grad():
        fn(*args)
    torch.cuda.synchronize()
    torch._dynamo.reset()
    hipinductor.clear_reports()
    s, _ = first_call_s(torch.compile(fn, backend="hipinductor"), args)
    reports = hipinductor.reports()
    print(json.dumps({"warm_start_s": s, "graphs": len(reports),
                      "own_s": sum(r["build_ms"] + (r["first_call_ms"] or 0) for r in reports) / 1000,
                      "cache_hits": sum(r["cache_hits"] for r in reports),
                      "compile_ms": sum(r["compile_ms"] for r in reports)}))


def run_case(name, copy_gbps, hip_cache, warm):
    import hipinductor

    fn, args, nbytes = make_case(name)
    row = {}
    with torch.no_grad():
        ref = fn(*args)
        torch._dynamo.reset()
        c = torch.compile(fn)
        row["inductor_cold_compile_s"], inductor_out = first_call_s(c, args)
        torch._dynamo.reset()
        hipinductor.clear_reports()
        h = torch.compile(fn, backend="hipinductor")
        row["hipinductor_cold_compile_s"], out = first_call_s(h, args)
        # Its parts: hipinductor's own (building the graphs and their first run, compiles included) and the rest,
        # dynamo's and AOTAutograd's tracing, which Inductor's cold compile spends too.
        own = sum(r["build_ms"] + (r["first_call_ms"] or 0) for r in hipinductor.reports()) / 1000
        row["hipinductor_cold_own_s"] = own
        row["hipinductor_cold_trace_s"] = row["hipinductor_cold_compile_s"] - own
        # Interleaved rounds, best of each, each round starting one variant later: the GPU's clocks drift under
        # sustained load (the same GEMM kernels measured 6 % apart depending on which variant ran first; the SW power
        # cap throttles a round's later runs), so no variant always runs on a hot GPU.
        variants = {"eager": fn, "inductor": c, "hipinductor": h}
        if nbytes:
            # A reference, not a target: a copy moving the case's bytes (for the read-only sums not the same mix of
            # reads and writes), timed the same way. Per-call costs (launch, the dirty L2 do_bench's memset leaves,
            # the tail) weigh more on a case of 64-256 MB than on the 2 GB copy that copy_GBps comes from.
            variants["same_size_copy"] = same_size_copy(nbytes)
        times = {k: [] for k in variants}
        names = list(variants)
        for i in range(ROUNDS):
            for k in names[i % len(names):] + names[:i % len(names)]:
                times[k].append(bench(variants[k], args))
        for k, ts in times.items():
            row[f"{k}_ms"] = min(ts)
            row[f"{k}_ms_rounds"] = ts
    reports = hipinductor.reports()
    row["hipinductor_kernels"] = sum(r["kernels"] for r in reports)
    row["hipinductor_fallback_ops"] = sorted({f for r in reports for f in r["fallback_ops"]})
    row["hipinductor_graphs"] = len(reports)
    row["hipinductor_eager_reason"] = [r["eager_reason"] for r in reports if r["eager_reason"]]
    names = {r["name"] for r in reports}
    row["hipinductor_kernel_facts"] = [
        {k: f[k] for k in ("name", "registers", "local_bytes", "static_shared_bytes")}
        for f in hipinductor.kernel_facts() if f["graph"] in names]
    out, ref = main_tensor(out).float(), main_tensor(ref).float()
    row["max_abs_err_vs_eager"] = (out - ref).abs().max().item()
    # Inductor's, for scale: bf16 models round differently under any compiler.
    row["inductor_max_abs_err_vs_eager"] = (main_tensor(inductor_out).float() - ref).abs().max().item()
    row["ok"] = bool(torch.allclose(out, ref, atol=3e-2, rtol=3e-2))
    if nbytes:
        for k in ("eager", "inductor", "hipinductor", "same_size_copy"):
            gbps = nbytes / row[f"{k}_ms"] / 1e6
            row[f"{k}_GBps"] = gbps
            row[f"{k}_pct_copy"] = 100 * gbps / copy_gbps
        row["hipinductor_pct_same_size_copy"] = 100 * row["same_size_copy_ms"] / row["hipinductor_ms"]
    row["speedup_vs_inductor"] = row["inductor_ms"] / row["hipinductor_ms"]
    if warm:
        row["warm_start"] = warm_start(name, hip_cache)
    return row


def write_results(path: str, results: dict) -> None:
    """Writes a run's JSON to `path` (a suite's file in bench/results/, overwritten), making its folder."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(results, f, indent=1)
    print(f"wrote {path}")


def source_commit() -> str | None:
    """The commit being measured: $HIPINDUCTOR_COMMIT, else `git rev-parse HEAD` of this checkout, else None."""
    if os.environ.get("HIPINDUCTOR_COMMIT"):
        return os.environ["HIPINDUCTOR_COMMIT"]
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=os.path.dirname(os.path.abspath(__file__)),
                             capture_output=True, text=True, check=True)
        return out.stdout.strip() or None
    except (OSError, subprocess.CalledProcessError):
        return None


def main():
    global ROUNDS
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", help="comma-separated case names (default: all)")
    parser.add_argument("--out", help="JSON file for the results")
    parser.add_argument("--no-warm", action="store_true", help="skip warm-start subprocesses")
    parser.add_argument("--rounds", type=int, default=ROUNDS, help=f"interleaved timing rounds (default {ROUNDS})")
    parser.add_argument("--child-warm", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_warm:
        return child_warm(args.child_warm)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    ROUNDS = args.rounds

    hip_cache = tempfile.mkdtemp(prefix="hipinductor-bench-cache-")
    os.environ["HIPINDUCTOR_CACHE_DIR"] = hip_cache          # cold: empty caches for both compilers
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="inductor-bench-cache-"))
    # NVRTC 12.9+ keeps its own cache of compiled programs in the CUDA driver's compute cache: a graph compiled on
    # this machine before (an earlier run, a test) would come back from it in a small fraction of a cold compile's
    # time. An empty one, set before CUDA starts, keeps the cold numbers cold (the warm-start children inherit it).
    os.environ["CUDA_CACHE_PATH"] = tempfile.mkdtemp(prefix="cuda-compute-cache-")
    names = args.cases.split(",") if args.cases else list(MICRO) + list(MODELS)
    names = [n for name in names for n in (REAL_MODELS if name == "models" else [name])]
    unknown = [n for n in names if n not in {**MICRO, **MODELS, **REAL_MODELS}]
    if unknown:
        parser.error(f"unknown case {unknown[0]!r} (cases: {', '.join([*MICRO, *MODELS, *REAL_MODELS])}, models)")
    copy_gbps = copy_bandwidth()
    results = {"gpu": torch.cuda.get_device_name(), "date": datetime.date.today().isoformat(),
               "commit": source_commit(), "torch": torch.__version__, "copy_GBps": copy_gbps, "rounds": ROUNDS, "cases": {}}
    print(f"copy bandwidth: {copy_gbps:.0f} GB/s", flush=True)
    for name in names:
        try:
            row = run_case(name, copy_gbps, hip_cache, not args.no_warm)
        except Exception as e:  # noqa: BLE001 - a failing case is a result, not the end of the run
            row = {"error": f"{type(e).__name__}: {str(e)[:400]}"}
        results["cases"][name] = row
        short = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items()}
        print(name, json.dumps(short), flush=True)
    if args.out:
        write_results(args.out, results)


if __name__ == "__main__":
    main()
