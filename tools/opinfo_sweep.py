#!/usr/bin/env python3
"""OpInfo sweep: every op in PyTorch's OpInfo database (torch.testing._internal.common_methods_invocations.op_db),
in float32 and bfloat16 (or the dtypes --dtypes names), through torch.compile(backend="hipinductor"), against eager.

Each (op, dtype) pair ends in exactly one bucket, never silently:
  match      compiled result equals eager (torch.testing.assert_close, dtype tolerances)
  mismatch   compiled result differs; the reason is recorded
  error      compiling or running raised; the reason is recorded
and, for matches, whether the pair ran *entirely* in hipinductor kernels (no eager fallback op, at least one kernel).
Pairs whose eager call itself fails, and random ops, are not tried. With --grad the
samples require grad and the gradients of the outputs' sum (the backward graph, compiled too) are compared as well.

    python3 tools/opinfo_sweep.py [--ops add,softmax] [--samples 1] [--jobs 2] [--device cuda] [--json out.json]
                                  [--dtypes float32,float64] [--grad]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import time
import traceback

# Random ops (eager and compiled draw different numbers) and uninitialized memory cannot be compared. Everything
# else is tried, linear algebra, FFTs and special functions included (they mostly run eagerly, which must still
# give eager's results). Matched as substrings:
SKIP_WORDS = ("rand", "bernoulli", "dropout", "multinomial", "uniform", "poisson", "exponential", "geometric",
              "cauchy", "log_normal", "rrelu", "empty")
# and as whole words of the op's name (split at "." and "_"): as substrings they would skip layer_norm and the rest.
SKIP_TOKENS = ("normal",)
# Families that run in eager PyTorch by design (Inductor's too: library calls, no kernels to generate): left out of
# the fraction that must run entirely in hipinductor kernels, not out of the sweep.
LIBRARY_PREFIXES = ("linalg.", "fft.", "sparse.")
LIBRARY_TOKENS = ("svd", "qr", "cholesky", "lu", "solve", "eig", "inverse", "pinverse", "lstsq", "ormqr", "geqrf",
                  "householder", "triangular", "det", "slogdet", "stft", "istft")
DTYPES = ("float32", "bfloat16")
PAIR_TIMEOUT_S = 120


def _words(name: str) -> set:
    """An op name's words, split at "." and "_"."""
    return set(name.replace(".", "_").split("_"))


def skipped_family(op) -> bool:
    return any(w in op.name for w in SKIP_WORDS) or not _words(op.name).isdisjoint(SKIP_TOKENS)


def library_family(name: str) -> bool:
    return name.startswith(LIBRARY_PREFIXES) or not _words(name).isdisjoint(LIBRARY_TOKENS)


def tolerances(dtype):
    import torch

    known = {torch.float32: dict(rtol=1.3e-5, atol=1e-5), torch.bfloat16: dict(rtol=1.6e-2, atol=1e-2)}
    return known.get(dtype, {})  # torch.testing's defaults: exact for integers and bool


def run_pair(args) -> dict:
    import faulthandler

    # A pair that hangs prints every thread's stack and ends its worker; the sweep records it as an error.
    faulthandler.dump_traceback_later(PAIR_TIMEOUT_S, exit=True)
    try:
        return _run_pair(args)
    finally:
        faulthandler.cancel_dump_traceback_later()


def _grads(fn, sample, leaves):
    """fn's outputs on `sample` and the gradients of the sum of its differentiable outputs w.r.t. `leaves`."""
    import torch
    from torch.utils._pytree import tree_leaves

    out = fn(sample.input, *sample.args)
    diff = [t for t in tree_leaves(out) if isinstance(t, torch.Tensor) and t.grad_fn is not None]
    if not diff:
        return out, None
    grads = torch.autograd.grad(diff, leaves, [torch.ones_like(t) for t in diff], allow_unused=True)
    return out, [torch.zeros_like(x) if g is None else g for x, g in zip(leaves, grads)]


def _run_pair(args) -> dict:
    op_name, variant, dtype_name, samples, device, grad = args
    import torch
    import torch._dynamo
    from torch.testing._internal.common_methods_invocations import op_db

    import hipinductor

    torch._dynamo.config.cache_size_limit = 64
    op = next(o for o in op_db if o.name == op_name and o.variant_test_name == variant)
    dtype = getattr(torch, dtype_name)
    result = {"op": op_name + (f".{variant}" if variant else ""), "dtype": dtype_name}
    if grad and not op.supports_autograd:
        return {**result, "status": "not_tried", "reason": "no autograd"}
    try:
        sample_list = list(op.sample_inputs(device, dtype, requires_grad=grad))[:samples]
    except Exception as e:  # noqa: BLE001
        return {**result, "status": "not_tried", "reason": f"sample_inputs: {type(e).__name__}"}
    if not sample_list:
        return {**result, "status": "not_tried", "reason": "no samples"}
    entirely = True
    tried = 0
    for sample in sample_list:
        def fn(x, *a, _op=op, _kw=sample.kwargs):
            return _op(x, *a, **_kw)

        # With --grad, also the gradients of the differentiable outputs' sum w.r.t. every input that requires one
        # (the backward graph goes through hipinductor too).
        leaves = [t for t in (sample.input, *sample.args, *sample.kwargs.values())
                  if isinstance(t, torch.Tensor) and t.requires_grad]
        try:
            torch.manual_seed(0)
            expected = _grads(fn, sample, leaves) if leaves else fn(sample.input, *sample.args)
        except Exception as e:  # noqa: BLE001
            continue
        tried += 1
        torch._dynamo.reset()
        hipinductor.clear_reports()
        try:
            torch.manual_seed(0)
            compiled = torch.compile(fn, backend="hipinductor")
            actual = _grads(compiled, sample, leaves) if leaves else compiled(sample.input, *sample.args)
        except Exception as e:  # noqa: BLE001
            msg = str(e).strip().splitlines()
            return {**result, "status": "error", "reason": f"{type(e).__name__}: {msg[0][:300] if msg else ''}"}
        try:
            torch.testing.assert_close(actual, expected, equal_nan=True, check_dtype=True, check_stride=False,
                                       **tolerances(dtype))
        except Exception as e:  # noqa: BLE001
            msg = str(e).strip().splitlines()
            return {**result, "status": "mismatch", "reason": " | ".join(m.strip() for m in msg[:4])[:400]}
        reports = hipinductor.reports()
        kernels = sum(r["kernels"] for r in reports)
        fallbacks = sorted({f for r in reports for f in r["fallback_ops"]})
        eager = [r["eager_reason"] for r in reports if r["eager_reason"]]
        # A pair runs entirely in hipinductor when dynamo handed its work to the backend and nothing of it ran in
        # eager PyTorch: no fallback op, no graph sent back to eager. Graphs of views only (AOTAutograd replays view
        # outputs itself) need no kernel and count; no graph at all (a graph break around the op) does not.
        if not reports or fallbacks or eager:
            entirely = False
            result.setdefault("fallback_ops", fallbacks)
            if eager:
                result["eager_reason"] = eager[0][:300]
    if tried == 0:
        return {**result, "status": "not_tried", "reason": "eager fails on every sample"}
    return {**result, "status": "match", "entirely": entirely, "kernels": kernels}


def _worker(tasks, done) -> None:
    while True:
        item = tasks.get()
        if item is None:
            return
        index, pair = item
        done.put(("start", index, os.getpid()))
        done.put(("done", index, run_pair(pair)))


def run_all(pairs, jobs: int, start: float) -> list[dict]:
    """Runs the pairs in `jobs` worker processes; a worker that dies (a crash, or a hang ended by the watchdog)
    costs only its pair, which is recorded as an error, and is replaced."""
    ctx = mp.get_context("spawn")
    tasks, done = ctx.Queue(), ctx.Queue()
    for item in enumerate(pairs):
        tasks.put(item)
    workers = {}

    def spawn():
        w = ctx.Process(target=_worker, args=(tasks, done), daemon=True)
        w.start()
        workers[w.pid] = w

    for _ in range(jobs):
        spawn()
    running: dict[int, int] = {}  # pid -> pair index
    results: dict[int, dict] = {}
    import queue

    while len(results) < len(pairs):
        try:
            kind, index, value = done.get(timeout=5)
        except queue.Empty:
            for pid, w in list(workers.items()):
                if not w.is_alive():
                    del workers[pid]
                    if pid in running:
                        i = running.pop(pid)
                        name, variant, dtype = pairs[i][0], pairs[i][1], pairs[i][2]
                        results[i] = {"op": name + (f".{variant}" if variant else ""), "dtype": dtype,
                                      "status": "error",
                                      "reason": f"worker died (exit {w.exitcode}): crashed, or hung > {PAIR_TIMEOUT_S} s"}
                    spawn()
            continue
        if kind == "start":
            running[value] = index
            continue
        running = {pid: i for pid, i in running.items() if i != index}
        results[index] = value
        if len(results) % 50 == 0 or len(results) == len(pairs):
            print(f"opinfo sweep: {len(results)}/{len(pairs)} pairs, {time.time() - start:.0f} s", file=sys.stderr,
                  flush=True)
    for _ in workers:
        tasks.put(None)
    return [results[i] for i in range(len(pairs))]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", help="comma-separated OpInfo names (default: all)")
    parser.add_argument("--samples", type=int, default=1, help="samples per (op, dtype) pair")
    parser.add_argument("--dtypes", default=",".join(DTYPES),
                        help=f"comma-separated dtypes (default: {','.join(DTYPES)}; e.g. float16,float64,int64,bool)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--json", help="write every pair's result here")
    parser.add_argument("--device", default="cpu", help="cpu, or cuda on a GPU machine")
    parser.add_argument("--grad", action="store_true",
                        help="also compare gradients (inputs that require grad; ops without autograd not tried)")
    parser.add_argument("--min-match", type=float, default=0.0, help="exit 1 below this match fraction")
    parser.add_argument("--min-entirely", type=float, default=0.0,
                        help="exit 1 below this fraction in kernels (of the pairs outside linear algebra, FFT, sparse)")
    args = parser.parse_args(argv)

    import torch

    dtypes = list(dict.fromkeys(d.strip() for d in args.dtypes.split(",") if d.strip()))
    for d in dtypes:
        if not isinstance(getattr(torch, d, None), torch.dtype):
            parser.error(f"--dtypes: '{d}' is not a torch dtype")
    from torch.testing._internal.common_methods_invocations import op_db

    wanted = set(args.ops.split(",")) if args.ops else None
    pairs = []
    for op in op_db:
        if wanted is not None and op.name not in wanted:
            continue
        if wanted is None and skipped_family(op):
            continue
        for d in dtypes:
            if op.supports_dtype(getattr(torch, d), args.device):
                pairs.append((op.name, op.variant_test_name, d, args.samples, args.device, args.grad))
    start = time.time()
    results = run_all(pairs, args.jobs, start)
    results.sort(key=lambda r: (r["op"], r["dtype"]))
    tried = [r for r in results if r["status"] != "not_tried"]
    match = [r for r in tried if r["status"] == "match"]
    entirely = [r for r in match if r.get("entirely")]
    no_kernel = sum(1 for r in entirely if r.get("kernels") == 0)
    for r in tried:
        if r["status"] != "match":
            print(f"  {r['status']:8s} {r['op']} {r['dtype']}: {r['reason']}")
    n = max(len(tried), 1)
    # The kernel coverage bar counts pairs outside the library families (and each family's pairs that did run
    # entirely in kernels, so the fraction never exceeds 1).
    kernel_n = max(sum(1 for r in tried if not library_family(r["op"]) or r.get("entirely")), 1)
    print(f"opinfo sweep: {len(tried)} pairs tried ({len(results) - len(tried)} not tried), "
          f"{len(match)} match ({100 * len(match) / n:.1f} %), "
          f"{sum(r['status'] == 'mismatch' for r in tried)} mismatch, {sum(r['status'] == 'error' for r in tried)} error, "
          f"{len(entirely)} entirely in hipinductor kernels ({100 * len(entirely) / kernel_n:.1f} % of the "
          f"{kernel_n} pairs outside linear algebra, FFT and sparse; {no_kernel} views only), "
          f"{time.time() - start:.0f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    ok = len(match) / n >= args.min_match and len(entirely) / kernel_n >= args.min_entirely
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
