#!/usr/bin/env python3
"""Dynamic-shapes benchmark (not a test): hipinductor vs torch.compile's default (Inductor) when the input sizes vary.

1. A transformer from `transformers` (GPT-2, built from a config: no downloads) called once at each of >= 8 sequence
   lengths for each of >= 3 batch sizes, as a new user's loop would (automatic dynamic: the second size compiles a
   graph with symbolic sizes): the total wall time of all those first calls, a never-seen size's first call after
   them (with the attention library's plans for it built beforehand, see main; and at a size nothing has run, with
   them), and the steady-state time at one of the sizes, compiled dynamically vs compiled for that size alone.
2. The eight memory-bound microbenchmarks of run_bench.py compiled with dynamic=True vs static, steady state.

Before the measured runs, eager runs every size, and on the GPU a child process runs the same sizes through both
compilers: it fills the CUDA compute cache with the library kernels the driver compiles from PTX on first use (see
main), a once-per-machine cost that would otherwise fall on whichever compiler runs first. The measured runs start
from empty compile caches of both compilers.

    python3 bench/dynamic_shapes.py [--out bench/results/dynamic-shapes-h200.json] [--no-inductor]
    python3 bench/dynamic_shapes.py --device cpu --quick       # tiny sizes: checks that it runs

On the GPU the results go to bench/results/dynamic-shapes-<gpu>.json (--out to change); CPU runs write only where
--out says (their numbers are no result).
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import sys
import tempfile
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_bench  # noqa: E402 - the shared cases and the results writer

# (batch sizes, sequence lengths, the never-seen (batch, length), the steady-state (batch, length)) per mode.
SHAPES = {
    "full": ([2, 4, 8], [64, 96, 128, 200, 256, 320, 384, 512], (6, 450), (8, 384)),
    "quick": ([2, 3, 4], [5, 7, 9, 12, 16, 20, 24, 31], (5, 27), (4, 24)),
}
#: Per mode, a size for each of eager, hipinductor and Inductor that nothing in the process has run before its own
#: first call there: that call pays the attention library's plan build for the size as well (see main).
COLD_SIZES = {
    "full": {"eager": (5, 337), "hipinductor": (5, 333), "inductor": (5, 335)},
    "quick": {"eager": (3, 29), "hipinductor": (3, 25), "inductor": (3, 23)},
}


#: Print a cProfile of hipinductor's never-seen call (--profile-unseen).
PROFILE_UNSEEN = False


def sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def timed_call(fn, args, device):
    sync(device)
    t0 = time.perf_counter()
    out = fn(*args)
    sync(device)
    return time.perf_counter() - t0, out


def steady_ms(fn, args, device) -> float:
    """Steady-state ms per call: run_bench.bench's median on the GPU (a model's forward here is bound by the host,
    whose stalls a mean takes in), else the median of timed calls."""
    if device == "cuda":
        return run_bench.bench(fn, args, return_mode="median")
    for _ in range(3):
        fn(*args)
    times = []
    for _ in range(15):
        t0 = time.perf_counter()
        fn(*args)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def make_model(device: str, quick: bool):
    """GPT-2 from transformers (4 layers; 1 small layer with --quick), random weights, and the name it is known by;
    without transformers (CPU checks only), run_bench's GPT-style block."""
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    try:
        import transformers
    except ImportError:
        if device == "cuda":
            raise
        d = 64 if quick else 1024
        model = run_bench.GPTBlock(d=d, heads=4)
        return model.to(device, dtype).eval(), "gpt_block (transformers not installed)", lambda b, t: (
            torch.randn(b, t, d, device=device, dtype=dtype),)
    config = (transformers.GPT2Config(n_layer=1, n_embd=64, n_head=2, vocab_size=1000, n_positions=128) if quick
              else transformers.GPT2Config(n_layer=4))
    model = transformers.GPT2Model(config).to(device, dtype).eval()
    vocab = config.vocab_size
    return model, "gpt2_1l_tiny" if quick else "gpt2_4l", lambda b, t: (
        torch.randint(0, vocab, (b, t), device=device),)


def sweep(backend: str, model, inputs, mode: str, device: str) -> dict:
    """One compiler's run over the shapes, from cold caches: each shape's first call, a never-seen shape's first
    call, and the steady state at the probe shape, compiled dynamically and for that shape alone."""
    import hipinductor

    batches, lengths, unseen, probe = SHAPES[mode]
    kw = {"backend": "hipinductor"} if backend == "hipinductor" else {}
    row: dict = {}
    torch._dynamo.reset()
    hipinductor.clear_reports()
    compiled = torch.compile(model, **kw)
    firsts = {}
    with torch.no_grad():
        for b in batches:
            for t in lengths:
                firsts[f"{b}x{t}"], _ = timed_call(compiled, inputs(b, t), device)
        row["first_calls_s"] = firsts
        row["first_calls_total_s"] = sum(firsts.values())
        u = inputs(*unseen)
        before = summary(hipinductor.reports()) if backend == "hipinductor" else None
        profile = None
        if PROFILE_UNSEEN and backend == "hipinductor":
            import cProfile
            profile = cProfile.Profile()
            profile.enable()
        row["unseen_first_call_s"], out = timed_call(compiled, u, device)
        if profile is not None:
            import pstats
            profile.disable()
            print("cProfile of hipinductor's never-seen call:", flush=True)
            pstats.Stats(profile).sort_stats("cumulative").print_stats(40)
        if before is not None:
            row["unseen_call"] = call_did(before)
        row["unseen_max_abs_err_vs_eager"] = (run_bench.main_tensor(out).float()
                                              - run_bench.main_tensor(model(*u)).float()).abs().max().item()
        cold = COLD_SIZES[mode][backend]
        row["cold_size"] = list(cold)
        before = summary(hipinductor.reports()) if backend == "hipinductor" else None
        row["cold_size_first_call_s"], _ = timed_call(compiled, inputs(*cold), device)
        if before is not None:
            row["cold_size_call"] = call_did(before)
        args = inputs(*probe)
        if backend == "hipinductor":
            row["background_compiles_done"] = hipinductor.wait_for_compiles(120)
        row["dynamic_steady_ms"] = steady_ms(compiled, args, device)
        ref = run_bench.main_tensor(model(*args)).float()
        got = run_bench.main_tensor(compiled(*args)).float()
        row["max_abs_err_vs_eager"] = (got - ref).abs().max().item()
        if backend == "hipinductor":
            row["reports"] = summary(hipinductor.reports())
        torch._dynamo.reset()
        static = torch.compile(model, dynamic=False, **kw)
        static(*args)
        row["static_steady_ms"] = steady_ms(static, args, device)
    row["dynamic_vs_static"] = row["dynamic_steady_ms"] / row["static_steady_ms"]
    return row


def call_did(before: dict) -> dict:
    """What hipinductor did since `before` (a summary taken just ahead of one call): new graphs (dynamo traced
    again), compiles on the call's path, waits, stand-ins."""
    import hipinductor

    after = summary(hipinductor.reports())
    return {k: after[k] - before[k] for k in
            ("graphs", "compiles", "call_path_compiles", "call_path_waits", "stand_in_calls")}


def summary(reports: list[dict]) -> dict:
    """What hipinductor's reports say about the compiles of a run."""
    reasons: dict = {}
    for r in reports:
        for k, v in r["recompile_reasons"].items():
            reasons[k] = reasons.get(k, 0) + v
    return {"graphs": len(reports), "symbolic_graphs": sum(bool(r["symbolic_dims"]) for r in reports),
            "compiles": sum(r["compiles"] for r in reports),
            "symbolic_compiles": sum(r["symbolic_compiles"] for r in reports),
            "recompiles": sum(r["recompiles"] for r in reports), "recompile_reasons": reasons,
            "call_path_compiles": sum(r["call_path_compiles"] for r in reports),
            "call_path_waits": sum(r["call_path_waits"] for r in reports),
            "stand_in_calls": sum(r["stand_in_calls"] for r in reports),
            "symbolic_fallbacks": {f"{r['name']}/{k}": v for r in reports for k, v in r["symbolic_fallbacks"].items()},
            "cache_hits": sum(r["cache_hits"] for r in reports),
            "compile_ms": sum(r["compile_ms"] for r in reports)}


def micro_inputs(name: str, device: str, quick: bool) -> list[torch.Tensor]:
    """run_bench's inputs of case `name`, on `device`; with `quick`, the leading dim (rows, or the whole of a 1-d
    input) 64 times smaller in the inputs that share it with the first (the cases' functions name their row lengths:
    layer norm's (4096,))."""
    _, make, _ = run_bench.MICRO[name]
    run_bench.DEV = "meta"
    try:
        metas = make()
    finally:
        run_bench.DEV = device
    rows = metas[0].shape[0]
    out = []
    for m in metas:
        shape = list(m.shape)
        if quick and shape[0] == rows and rows >= 1024:
            shape[0] //= 64
        out.append(torch.randn(shape, device=device, dtype=m.dtype))
    return out


def micro(device: str, quick: bool) -> dict:
    """Each microbenchmark's steady state compiled with dynamic=True and compiled static."""
    import hipinductor

    rows = {}
    for name, (fn, _, _) in run_bench.MICRO.items():
        args = micro_inputs(name, device, quick)
        row = {}
        with torch.no_grad():
            for label, dynamic in (("dynamic", True), ("static", False)):
                torch._dynamo.reset()
                hipinductor.clear_reports()
                compiled = torch.compile(fn, backend="hipinductor", dynamic=dynamic)
                got = compiled(*args)
                # Steady state: after the variants a symbolic compile starts in the background (until then calls
                # run on a more general one).
                row[f"{label}_background_compiles_done"] = hipinductor.wait_for_compiles(120)
                row[f"{label}_ms"] = steady_ms(compiled, args, device)
                row[f"{label}_max_abs_err"] = (got.float() - fn(*args).float()).abs().max().item()
                if dynamic:
                    row["reports"] = summary(hipinductor.reports())
        row["dynamic_vs_static"] = row["dynamic_ms"] / row["static_ms"]
        rows[name] = row
        print(name, {k: round(v, 4) if isinstance(v, float) else v for k, v in row.items() if k != "reports"},
              flush=True)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    parser.add_argument("--quick", action="store_true", help="tiny model and sizes (checks that the script runs)")
    parser.add_argument("--no-inductor", action="store_true", help="skip Inductor's runs")
    parser.add_argument("--no-micro", action="store_true", help="skip the microbenchmarks")
    parser.add_argument("--no-model", action="store_true", help="skip the transformer's runs")
    parser.add_argument("--out", help="JSON file (default on the GPU: bench/results/dynamic-shapes-<gpu>.json)")
    parser.add_argument("--profile-unseen", action="store_true",
                        help="print a cProfile of hipinductor's first call at the never-seen size")
    parser.add_argument("--no-warm-process", action="store_true",
                        help="skip the child process that fills the CUDA compute cache before the measured runs")
    parser.add_argument("--warm-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    global PROFILE_UNSEEN
    PROFILE_UNSEEN = args.profile_unseen
    device = args.device
    if device == "cuda" and not torch.cuda.is_available():
        parser.error("no GPU here: use --device cpu --quick to check the script")
    mode = "quick" if args.quick else "full"
    run_bench.DEV = device
    # Cold caches for both compilers, as run_bench's cold compiles.
    os.environ["HIPINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="hipinductor-dyn-cache-")
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="inductor-dyn-cache-"))
    if device == "cuda" and not args.warm_only:
        # The driver's compute cache holds the PTX it compiled for this GPU: library kernels shipped as PTX only
        # (PyTorch's memory-efficient attention on sm_90 is) are compiled there on their first use on a machine, and
        # then found by every later process. Whichever compiler's graphs first call such a kernel at a new shape pays
        # that (0.6-1 s per never-seen size on the H200 with GPT-2), so a cache shared by both compilers' runs
        # favours the one that runs second. The measured runs therefore start from a cache that a child process has
        # filled running the same shapes through both compilers (with its own compile caches): the PTX compiles are
        # a machine's one-time cost, not a compiler's, and neither run pays them.
        os.environ["CUDA_CACHE_PATH"] = tempfile.mkdtemp(prefix="cuda-compute-cache-")
        if not args.no_warm_process and not args.no_model:
            import subprocess
            child = [sys.executable, os.path.abspath(__file__), "--warm-only"] + (["--quick"] if args.quick else []) + (
                ["--no-inductor"] if args.no_inductor else [])
            start = time.perf_counter()
            subprocess.run(child, check=True, env=dict(os.environ, HIPINDUCTOR_CACHE_DIR=tempfile.mkdtemp(
                prefix="hipinductor-dyn-warm-"), TORCHINDUCTOR_CACHE_DIR=tempfile.mkdtemp(prefix="inductor-dyn-warm-")))
            print(f"compute cache filled by a child process in {time.perf_counter() - start:.0f} s", flush=True)
    import hipinductor  # noqa: F401 - registers the backend

    torch.manual_seed(0)
    model, model_name, inputs = make_model(device, args.quick)
    batches, lengths, unseen, probe = SHAPES[mode]
    # Eager first, at every size the runs will see: the GEMM handles and the library kernels each size picks (cuBLAS
    # loads its kernels lazily) are then loaded before either compiler's first calls,
    # which measure the compilers and not which of them ran first. Then the model's captured graph run by eager ATen
    # (aot_eager) at the same sizes: traced by dynamo, transformers passes the attention a materialized causal mask
    # where eager passes is_causal, so the graph's attention op is another cuDNN plan per size than eager's
    # (0.5-0.8 s to build on the H200), kept in a per-thread cache. Built here, neither compiler's first call at a
    # size pays it, and whichever ran second no longer finds the plan the first one built. Each compiler's first call
    # at a size of its own that nothing has run (COLD_SIZES) is measured as well, with eager's, plan builds included.
    with torch.no_grad():
        sizes = [(b, t) for b in batches for t in lengths] + [unseen, probe]
        for b, t in sizes:
            model(*inputs(b, t))
        if not args.warm_only:
            graph_in_eager = torch.compile(model, backend="aot_eager")
            for b, t in sizes:
                graph_in_eager(*inputs(b, t))
            torch._dynamo.reset()
        sync(device)
    if args.warm_only:
        for backend in ["hipinductor"] + ([] if args.no_inductor else ["inductor"]):
            torch._dynamo.reset()
            compiled = torch.compile(model, **({"backend": "hipinductor"} if backend == "hipinductor" else {}))
            with torch.no_grad():
                for b, t in [(b, t) for b in batches for t in lengths] + [unseen, probe]:
                    compiled(*inputs(b, t))
            sync(device)
        return
    results = {"gpu": torch.cuda.get_device_name() if device == "cuda" else "cpu",
               "date": datetime.date.today().isoformat(), "commit": run_bench.source_commit(),
               "torch": torch.__version__, "model": model_name, "batches": batches, "lengths": lengths,
               "unseen": list(unseen), "probe": list(probe), "model_runs": {}}
    if not args.no_model:
        cold = COLD_SIZES[mode]["eager"]
        with torch.no_grad():
            results["eager_cold_size"] = list(cold)
            results["eager_cold_size_first_call_s"], _ = timed_call(model, inputs(*cold), device)
    for backend in [] if args.no_model else ["hipinductor"] + ([] if args.no_inductor else ["inductor"]):
        row = sweep(backend, model, inputs, mode, device)
        results["model_runs"][backend] = row
        print(backend, {k: round(v, 4) if isinstance(v, float) else v for k, v in row.items()
                        if k not in ("first_calls_s", "reports")}, flush=True)
    runs = results["model_runs"]
    if "inductor" in runs:
        hip, ind = runs["hipinductor"], runs["inductor"]
        results["first_calls_total_vs_inductor"] = hip["first_calls_total_s"] / ind["first_calls_total_s"]
        results["dynamic_steady_vs_inductor"] = hip["dynamic_steady_ms"] / ind["dynamic_steady_ms"]
    if not args.no_micro:
        results["micro"] = micro(device, args.quick)
    out = args.out
    if out is None and device == "cuda":
        gpu = "h200" if "H200" in results["gpu"] else results["gpu"].lower().replace(" ", "-")
        out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", f"dynamic-shapes-{gpu}.json")
    if out:
        run_bench.write_results(out, results)


if __name__ == "__main__":
    main()
