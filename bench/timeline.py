#!/usr/bin/env python3
"""Where a benchmark case's time goes on the GPU, under do_bench's conditions (a 256 MB memset before each call,
which leaves L2 full of dirty lines): per variant, do_bench three times, a loop of calls without the memset, and a
profiled timeline of 30 calls giving the gap from the memset to the first kernel, each kernel's duration and the gap
before it (medians), the call's span and its busy time. Memory-bound cases add a copy of their own byte count.

    python3 bench/timeline.py CASES [VARIANTS] [--trace] [--out FILE]

CASES are bench/run_bench.py's case names, comma-separated; VARIANTS (default eager,inductor,hip) run in the order
given and may repeat (hip,inductor,hip,inductor shows how much the GPU's clocks move a block's GEMMs between runs);
the same-size copy comes last.
--trace also prints each kernel's grid, block, registers and shared memory from the profiler's trace.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

import torch
from torch.profiler import ProfilerActivity, profile
from triton.testing import do_bench

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_bench  # noqa: E402

FLUSH = torch.empty(256 << 20, dtype=torch.int8, device="cuda")


def median(values):
    return sorted(values)[len(values) // 2]


def launch_configs(prof):
    """Kernel name -> (grid, block, registers per thread, shared memory) from the profiler's Chrome trace."""
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        prof.export_chrome_trace(f.name)
        with open(f.name) as trace:
            events = json.load(trace)["traceEvents"]
    configs = {}
    for e in events:
        if e.get("cat") == "kernel":
            a = e.get("args", {})
            configs.setdefault(e["name"][:70], (a.get("grid"), a.get("block"), a.get("registers per thread"),
                                                a.get("shared memory")))
    return configs


def timeline(f, args, trace, calls=30):
    for _ in range(5):
        FLUSH.zero_()
        f(*args)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            FLUSH.zero_()
            f(*args)
        torch.cuda.synchronize()
    kernels = sorted((e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA),
                     key=lambda e: e.time_range.start)
    # Split the kernels into calls at each memset of the flush buffer (the long fill; a call's own memsets are short:
    # a case whose own fills take over 30 us would be split there too). Steps are matched by position in the call.
    per_call, current = [], None
    for e in kernels:
        start, end = e.time_range.start, e.time_range.end
        if ("fill" in e.name.lower() or "memset" in e.name.lower()) and end - start > 30:
            current = {"flush_end": end, "kernels": []}
            per_call.append(current)
        elif current is not None:
            current["kernels"].append((e.name[:70], start, end))
    per_call = [c for c in per_call if c["kernels"]][2:]
    if not per_call:
        raise SystemExit("timeline: no call followed a flush memset in the profile (is the variant on the GPU?)")
    gaps, spans, busy, steps = [], [], [], {}
    for c in per_call:
        ks = c["kernels"]
        gaps.append(ks[0][1] - c["flush_end"])
        spans.append(ks[-1][2] - ks[0][1])
        busy.append(sum(end - start for _, start, end in ks))
        previous_end = ks[0][1]
        for i, (name, start, end) in enumerate(ks):
            step = steps.setdefault(i, [name, [], []])
            step[1].append(end - start)
            step[2].append(start - previous_end)
            previous_end = end
    out = {"gap_us": median(gaps), "span_us": median(spans), "busy_us": median(busy),
           "steps": [(name, median(d), median(g)) for name, d, g in steps.values()]}
    if trace:
        out["configs"] = launch_configs(prof)
    return out


def variants_of(fn, args, nbytes, wanted):
    import hipinductor  # noqa: F401 - registers the backend

    compiled, out = {}, {}
    for i, v in enumerate(wanted):
        key = v if v not in out else f"{v}#{i}"
        if v == "eager":
            out[key] = fn
            continue
        if v not in ("inductor", "hip"):
            raise SystemExit(f"timeline: unknown variant '{v}' (eager, inductor, hip)")
        if v not in compiled:
            torch._dynamo.reset()
            compiled[v] = torch.compile(fn, backend="inductor" if v == "inductor" else "hipinductor")
            compiled[v](*args)
        out[key] = compiled[v]
    if nbytes:
        out["same_size_copy"] = run_bench.same_size_copy(nbytes)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases")
    parser.add_argument("variants", nargs="?", default="eager,inductor,hip")
    parser.add_argument("--trace", action="store_true", help="print each kernel's launch configuration")
    parser.add_argument("--out", help="JSON file for the results")
    a = parser.parse_args()
    results = {}
    for name in a.cases.split(","):
        fn, args, nbytes = run_bench.make_case(name)
        with torch.no_grad():
            for v, f in variants_of(fn, args, nbytes, a.variants.split(",")).items():
                r = {"do_bench_ms": [do_bench(lambda: f(*args), warmup=25, rep=100) for _ in range(3)],
                     "without_flush_ms": run_bench.events_ms(f, args, calls=200)}
                r.update(timeline(f, args, a.trace))
                results[f"{name}/{v}"] = r
                print(f"{name} {v}: do_bench {[round(t, 4) for t in r['do_bench_ms']]} ms, without flush "
                      f"{r['without_flush_ms']:.4f}; gap after the flush {r['gap_us']:.2f} us, span "
                      f"{r['span_us']:.2f}, busy {r['busy_us']:.2f}", flush=True)
                for kernel, us, gap in r["steps"]:
                    print(f"    {us:8.2f} us (+{gap:6.2f})  {kernel}")
                for kernel, config in r.get("configs", {}).items():
                    print(f"    config {kernel}: grid, block, registers, shared = {config}")
    if a.out:
        with open(a.out, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
