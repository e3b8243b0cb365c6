#!/usr/bin/env python3
"""Host time per call (not a test): how long the CPU spends issuing a case's compiled function, for eager, Inductor
and hipinductor: N calls issued back to back while a sleep kernel queued first keeps the GPU busy (so no launch waits
on the GPU and the time is the host's alone), total / N, best of 3. Small model blocks and whole models are host-bound
on a fast GPU: there do_bench's per-call time is this host time, not the kernels'.

    python3 bench/host_time.py [--cases gpt_block,resnet50] [--calls 20] [--profile FILE] [--primitives]
                               [--out FILE.json]

--profile: hipinductor's calls are also run under cProfile; the top functions of each case are appended to FILE.
--api FILE: each variant's CUDA runtime/driver calls over 5 calls (count, host time), from the profiler, appended to
FILE: a synchronizing call (cudaStreamSynchronize, cudaMalloc, ...) there is where the host waits for the GPU.
--gpu: also each variant's GPU time per call as do_bench takes it (256 MB flush, CUDA events) but with a sleep kernel
queued between the flush and the start event, so every launch of the call is queued before the GPU reaches it (GPU
time alone, no waiting on the host), beside plain do_bench's time: where do_bench's is the larger, the GPU waited on
the host during the call.
--breakdown: hipinductor's host time per call split: the whole call, its fast-path function alone (called with the
arguments a call gave it, without dynamo's and AOTAutograd's wrappers), and that function with hipinductor's own
kernel launches made no-ops (what is left: eager ops, allocation, views).
--primitives: first the host cost of the steps a fast path is made of (allocation, data_ptr, a launch of ours
against one of PyTorch's), in us.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime
import io
import json
import math
import os
import pstats
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_bench  # noqa: E402  (the benchmark's cases)


def host_ms(fn, args, calls, rounds=3, sleep_cycles=int(2e9)):
    """Host ms per call of `fn`: `calls` calls issued behind a sleep kernel that outlasts them (the default, about a
    second of GPU time, outlasts any case's calls), best of `rounds`."""
    best = math.inf
    for _ in range(rounds):
        torch.cuda.synchronize()
        torch.cuda._sleep(sleep_cycles)
        t0 = time.perf_counter()
        for _ in range(calls):
            fn(*args)
        best = min(best, (time.perf_counter() - t0) * 1e3 / calls)
        torch.cuda.synchronize()
    return best


_FLUSH = None


def gpu_ms(fn, args, reps=50, rounds=3):
    """Mean ms per call between CUDA events after do_bench's 256 MB flush, with a sleep kernel of about 2 ms between
    the flush and the start event (longer than issuing a call), best of `rounds` rounds of `reps` calls."""
    global _FLUSH
    if _FLUSH is None:  # do_bench's flush buffer, made once for every variant's rounds
        _FLUSH = torch.empty(int(256e6 // 4), dtype=torch.int, device="cuda")
    start = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    end = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    best = math.inf
    for _ in range(rounds):
        torch.cuda.synchronize()
        for i in range(reps):
            _FLUSH.zero_()
            torch.cuda._sleep(int(4e6))
            start[i].record()
            fn(*args)
            end[i].record()
        torch.cuda.synchronize()
        best = min(best, sum(s.elapsed_time(e) for s, e in zip(start, end)) / reps)
    return best


def fast_paths_alone(h, args, timer) -> dict:
    """hipinductor's fast-path functions alone (called with the arguments one call of `h` with `args` gave them) and
    with their kernel launches made no-ops, each timed by `timer(fn)`: {"fast_paths", "fast_only", "fast_no_launch",
    "launches_per_call"}, or {} where `h` took no fast path."""
    from hipinductor.reporting import live_graphs

    recorded, wrapped = [], []  # (fast function, the arguments it was called with); (graph, key, fast function)
    for g in list(live_graphs):
        for key, f in list(g.fast_paths.items()):
            if not f:
                continue

            def rec(a, f=f):
                recorded.append((f, list(a)))
                return f(a)

            g.fast_paths[key] = rec
            wrapped.append((g, key, f))
    try:
        h(*args)
    finally:
        for g, key, f in wrapped:
            g.fast_paths[key] = f
    if not recorded:
        return {}

    def all_fast():
        for f, a in recorded:
            f(list(a))

    out = {"fast_paths": len(recorded), "fast_only": timer(all_fast)}
    saved = []
    for f, _ in recorded:
        for name, value in list(f.__globals__.items()):
            if name.startswith("run") and callable(value):
                saved.append((f.__globals__, name, value))
                f.__globals__[name] = lambda *a: None
    try:
        out["fast_no_launch"] = timer(all_fast)
        out["launches_per_call"] = len(saved)
    finally:
        for ns, name, value in saved:
            ns[name] = value
    return out


def breakdown(h, args, calls) -> dict:
    """Host ms per call of hipinductor's fast-path functions alone, and without their kernel launches (see --breakdown);
    the compiled function `h` has run with `args` before."""
    out = fast_paths_alone(h, args, lambda fn: host_ms(fn, (), calls))
    names = {"fast_only": "fast_only_host_ms", "fast_no_launch": "fast_no_launch_host_ms"}
    return {names.get(k, k): v for k, v in out.items()}


def api_calls(fn, args, calls=5) -> str:
    """The CUDA runtime / driver calls of `calls` calls of `fn`: name, count, host us in total."""
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn(*args)
        torch.cuda.synchronize()
    rows = [(e.key, e.count, e.cpu_time_total) for e in prof.key_averages()
            if e.key.startswith(("cuda", "cu")) and not e.key.startswith("cudnn")]
    rows.sort(key=lambda r: -r[2])
    ops = sorted(((e.key, e.count, e.cpu_time_total) for e in prof.key_averages() if e.key.startswith("aten::")),
                 key=lambda r: -r[2])[:12]
    return "\n".join(f"{k:50s} {c:6d} {t:10.1f} us" for k, c, t in rows + [("--- aten", 0, 0.0)] + ops)


def primitives() -> dict:
    """us per call of the steps fast paths are made of, on an idle GPU (each loop of 2000 issues faster than the GPU
    runs it)."""
    import hipinductor  # noqa: F401
    from hipinductor.devices import current_stream
    from hipinductor.executor import args_key
    from hipinductor.fast_path import _ALLOC_CURRENT_GPU as alloc_cuda

    x = torch.randn(1024, 1024, device="cuda", dtype=torch.bfloat16)
    y = torch.empty_like(x)

    def relu_add(a):
        return torch.relu(a) + 1

    torch._dynamo.reset()
    ind = torch.compile(relu_add)
    ind(x)
    torch._dynamo.reset()
    hip = torch.compile(relu_add, backend="hipinductor")
    hip(x)
    steps = {
        "empty_strided": lambda: torch.empty_strided((1024, 1024), (1024, 1), dtype=torch.bfloat16, device="cuda"),
        "data_ptr": x.data_ptr,
        "storage_data_ptr": lambda: x.untyped_storage().data_ptr(),
        "args_key_1": lambda: args_key((x,)),
        "current_stream": lambda: current_stream(0),
        "eager_clamp_min_out": lambda: torch.clamp_min(x, 0, out=y),
        "eager_add": lambda: torch.add(x, 1),
        "inductor_relu_add": lambda: ind(x),
        "hipinductor_relu_add": lambda: hip(x),
    }
    if alloc_cuda is not None:
        steps["_empty_strided_cuda"] = lambda: alloc_cuda((1024, 1024), (1024, 1), torch.bfloat16)
    out = {}
    with torch.no_grad():
        for name, f in steps.items():
            for _ in range(100):
                f()
            torch.cuda.synchronize()
            best = math.inf
            for _ in range(3):
                t0 = time.perf_counter()
                for _ in range(2000):
                    f()
                best = min(best, (time.perf_counter() - t0) / 2000 * 1e6)
                torch.cuda.synchronize()
            out[name] = best
            print(f"{name:24s} {best:7.2f} us", flush=True)
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", default="mlp_block,gpt_block,llama_block")
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--profile", help="file for cProfile listings of hipinductor's calls")
    parser.add_argument("--primitives", action="store_true", help="time fast paths' steps first")
    parser.add_argument("--api", help="file for each variant's CUDA API calls")
    parser.add_argument("--breakdown", action="store_true", help="split hipinductor's host time (see above)")
    parser.add_argument("--gpu", action="store_true", help="also GPU time alone and do_bench's time per variant")
    parser.add_argument("--out", help="JSON file for the results")
    opts = parser.parse_args()
    import hipinductor  # noqa: F401  (registers the backend)

    result = {"gpu": torch.cuda.get_device_name(), "date": datetime.date.today().isoformat(),
              "commit": run_bench.source_commit(), "torch": torch.__version__, "calls": opts.calls}
    if opts.primitives:
        result["primitives_us"] = primitives()
    rows = result["cases"] = {}
    for name in opts.cases.split(","):
        fn, args, _ = run_bench.make_case(name)
        row = {}
        with torch.no_grad():
            variants = {"eager": fn}
            torch._dynamo.reset()
            variants["inductor"] = torch.compile(fn)
            variants["inductor"](*args)
            torch._dynamo.reset()
            variants["hipinductor"] = h = torch.compile(fn, backend="hipinductor")
            h(*args)
            for k, f in variants.items():
                for _ in range(3):
                    f(*args)
                row[f"{k}_host_ms"] = host_ms(f, args, opts.calls)
            if opts.breakdown:
                row.update({f"hipinductor_{k}": v for k, v in breakdown(h, args, opts.calls).items()})
            if opts.gpu:
                for _ in range(2):  # rounds interleaving the variants
                    for k, f in variants.items():
                        row[f"{k}_gpu_ms"] = min(row.get(f"{k}_gpu_ms", math.inf), gpu_ms(f, args))
                        row[f"{k}_do_bench_ms"] = min(row.get(f"{k}_do_bench_ms", math.inf), run_bench.bench(f, args))
            if opts.api:
                for k, f in variants.items():
                    with open(opts.api, "a") as out:
                        out.write(f"==== {name} {k}\n{api_calls(f, args)}\n")
            if opts.profile:
                torch.cuda.synchronize()
                pr = cProfile.Profile()
                pr.enable()
                for _ in range(opts.calls):
                    h(*args)
                pr.disable()
                torch.cuda.synchronize()
                s = io.StringIO()
                pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(40)
                with open(opts.profile, "a") as f:
                    f.write(f"==== {name}\n{s.getvalue()}")
        rows[name] = row
        print(name, " ".join(f"{k} {v:.3f}" for k, v in row.items()), flush=True)
        del variants, fn, args
        torch.cuda.empty_cache()
    if opts.out:
        with open(opts.out, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
