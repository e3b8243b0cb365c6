#!/usr/bin/env python3
"""Per-call host overhead (not a test): microseconds of host time per call of a few one-kernel graphs and one
training step (forward + backward through AOTAutograd), for

    eager         the function itself (PyTorch's dispatch of one op)
    dynamo        torch.compile with a backend returning the dynamo graph's forward: dynamo's guards and frame
    aot_eager     torch.compile(backend="aot_eager"): dynamo plus AOTAutograd's runtime wrappers, running the ATen
                  graph eagerly (the floor any backend behind AOTAutograd pays)
    inductor      torch.compile's default backend (needs a C++ compiler on the CPU, Triton on GPUs)
    hipinductor   torch.compile(backend="hipinductor")

Each time is the fastest batch of 20 calls (a loaded machine's interruptions left out). On a GPU the calls are issued
behind a sleep kernel that outlasts them, so the time is the host's alone; on the CPU (--device cpu) kernels run
synchronously on tiny tensors, so the time is host work plus a small kernel.
--breakdown adds hipinductor's fast-path function alone and with its kernel launches made no-ops (its own host work
inside the call, without dynamo's and AOTAutograd's wrappers).

    python3 bench/host_overhead.py [--device cpu|cuda] [--calls 10000] [--variants eager,dynamo,...]
                                   [--cases relu,...] [--breakdown] [--profile] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import math
import pstats
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def _cases(device: str, small: bool):
    """name -> (function, make inputs, training step?). Sizes are tiny on the CPU (the host's cost dominates) and
    the sweep's on a GPU."""
    rows, width = (8, 16) if small else (4096, 4096)

    def x(dtype=torch.float32, grad=False):
        return torch.randn(rows, width, device=device, dtype=dtype, requires_grad=grad)

    def train(fn):
        def step(a, g):
            out = fn(a)
            out.backward(g)
            return out

        return step

    return {
        "relu": (torch.relu, lambda: [x()], False),
        "isnan_bf16": (torch.isnan, lambda: [x(torch.bfloat16)], False),
        "add": (torch.add, lambda: [x(), x()], False),
        "mean_dim": (lambda a: a.mean(-1), lambda: [x()], False),
        "softmax": (lambda a: torch.softmax(a, -1), lambda: [x()], False),
        "gelu_train": (train(lambda a: F.gelu(a, approximate="tanh")), lambda: [x(grad=True), x()], True),
        "softmax_train": (train(lambda a: torch.softmax(a, -1)), lambda: [x(grad=True), x()], True),
    }


def _dynamo_only(gm, example_inputs):
    return gm.forward


def compiled(variant: str, fn):
    torch._dynamo.reset()
    if variant == "eager":
        return fn
    if variant == "dynamo":
        return torch.compile(fn, backend=_dynamo_only)
    if variant == "aot_eager":
        return torch.compile(fn, backend="aot_eager")
    if variant == "inductor":
        return torch.compile(fn)
    if variant == "hipinductor":
        import hipinductor  # noqa: F401  (registers the backend)

        return torch.compile(fn, backend="hipinductor")
    raise ValueError(f"unknown variant {variant!r}")


def host_us(fn, args, calls: int, gpu: bool) -> float:
    """Host microseconds per call of fn(*args): the fastest of batches of 20 calls back to back, `calls` calls in all
    (the minimum leaves out batches another process or a collection interrupted; on a GPU the calls are issued behind
    a sleep kernel that outlasts them)."""
    batch = 20
    best = math.inf
    for start in range(0, max(calls, batch), 50 * batch):
        if gpu:
            torch.cuda.synchronize()
            torch.cuda._sleep(int(1e9))
        for _ in range(min(50, max(1, (calls - start) // batch))):
            t0 = time.perf_counter()
            for _ in range(batch):
                fn(*args)
            best = min(best, (time.perf_counter() - t0) * 1e6 / batch)
        if gpu:
            torch.cuda.synchronize()
    return best


def fast_path_breakdown(h, args, calls: int, gpu: bool) -> dict:
    """hipinductor's fast-path functions alone (called with the arguments one call of `h` gave them) and with their
    launches made no-ops."""
    from host_time import fast_paths_alone

    out = fast_paths_alone(h, args, lambda fn: host_us(fn, (), calls, gpu))
    out.pop("launches_per_call", None)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--calls", type=int, default=None, help="calls per timing (default 10000 cpu, 2000 cuda)")
    parser.add_argument("--variants", default="eager,dynamo,aot_eager,inductor,hipinductor")
    parser.add_argument("--cases", default=None, help="comma-separated case names (default: all)")
    parser.add_argument("--breakdown", action="store_true", help="also hipinductor's fast path alone")
    parser.add_argument("--profile", action="store_true", help="cProfile of hipinductor's calls, top 25")
    parser.add_argument("--out", help="JSON file for the results")
    opts = parser.parse_args()
    gpu = opts.device != "cpu"
    calls = opts.calls or (2000 if gpu else 10000)
    cases = _cases(opts.device, small=not gpu)
    names = opts.cases.split(",") if opts.cases else list(cases)
    variants = opts.variants.split(",")
    result = {"device": torch.cuda.get_device_name() if gpu else "cpu", "torch": torch.__version__, "calls": calls,
              "us_per_call": {}}
    print(f"{'case':16s}" + "".join(f"{v:>13s}" for v in variants), flush=True)
    for name in names:
        fn, make, training = cases[name]
        torch.manual_seed(0)
        args = make()
        row = {}
        for v in variants:
            try:
                f = compiled(v, fn)
                with torch.enable_grad() if training else torch.no_grad():
                    for _ in range(5):
                        f(*args)
                    row[v] = host_us(f, args, calls, gpu)
                    if v == "hipinductor" and opts.breakdown:
                        row.update({f"hipinductor_{k}": val
                                    for k, val in fast_path_breakdown(f, args, calls, gpu).items()})
                    if v == "hipinductor" and opts.profile:
                        pr = cProfile.Profile()
                        pr.enable()
                        for _ in range(min(calls, 2000)):
                            f(*args)
                        pr.disable()
                        pstats.Stats(pr).sort_stats("tottime").print_stats(25)
            except Exception as e:  # noqa: BLE001 - a variant this machine cannot run (no C++ compiler, ...)
                row[v] = None
                row[f"{v}_error"] = f"{type(e).__name__}: {str(e)[:200]}"
        result["us_per_call"][name] = row
        cells = "".join(f"{row[v]:13.1f}" if row.get(v) is not None else f"{'-':>13s}" for v in variants)
        extra = " ".join(f"{k}={val:.1f}" if isinstance(val, float) else f"{k}={val}"
                         for k, val in row.items() if k.startswith("hipinductor_") and "error" not in k)
        print(f"{name:16s}{cells}  {extra}", flush=True)
    if opts.out:
        with open(opts.out, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
