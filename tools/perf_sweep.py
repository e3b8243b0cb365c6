#!/usr/bin/env python3
"""Performance sweep (not a test): eager vs torch.compile default (Inductor) vs hipinductor over PyTorch's OpInfo ops
that hipinductor lowers and the fused patterns users write (tools/perf_cases.py), at realistic sizes, on one GPU.

Per case, each variant's GPU time per call (`<variant>_ms`: do_bench's 256 MB flush, then a sleep kernel, so that the
whole call is queued before the GPU reaches it: the kernels' time, not the host's) and host time per call
(`<variant>_host_ms`: calls issued behind a sleep kernel), best of --rounds interleaved rounds of --calls calls, as
bench/host_time.py takes them; hipinductor's speed relative to Inductor's and to eager's (GPU time, and host time:
where a variant's host time exceeds its GPU time, back-to-back calls run at the host's pace); whether its result
matches eager's (where the two differ beyond the tolerance, a float64 run of the same inputs decides: hipinductor's
result is accepted when its error against that reference is at most 1.5 times eager's, and the row says
`ok_by_float64_reference`); and for memory-bound cases a device copy of the same bytes timed the same way (the
bandwidth fraction). The JSON goes to bench/results/perf-sweep-<gpu>.json (run_bench.write_results); a table of the
worst ratios and the geometric means is printed.

Two phases. First, workers compile and check the cases in parallel (both compilers, each case capped at
--compile-cap seconds, a worker that passes it is replaced and the case recorded as an error); nothing is timed then,
and the compile times recorded are these cold ones. Then one worker times the cases one at a time, compiling each
again from the caches the first phase filled, with no other process using the GPU or the CPUs: a case timed while
others compile shares the GPU with their first calls and autotuning, and its host-bound steps with their CPU load,
which moved single ratios by factors either way. A run stops handing out cases when --budget seconds (both phases)
have passed and lists the cases it did not time.

    python3 tools/perf_sweep.py [--filter softmax,layer_norm] [--limit N] [--budget 450] [--jobs 14]
                                [--out bench/results/perf-sweep-h200.json] [--no-opinfo]
    python3 tools/perf_sweep.py --device cpu --quick --variants eager,hipinductor --limit 4    # a check on the CPU
"""

from __future__ import annotations

import argparse
import datetime
import math
import multiprocessing as mp
import os
import queue
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
VARIANTS = ("eager", "inductor", "hipinductor")


def _setup_paths():
    for p in (HERE, os.path.join(REPO, "bench")):
        if p not in sys.path:
            sys.path.insert(0, p)


def _bench_gpu(fn, calls):
    """(GPU ms, host ms) per call of `fn`, as bench/host_time.py takes them: the GPU's time alone (do_bench's 256 MB
    flush, then a sleep kernel, so that the whole call is queued before the GPU reaches it and no launch waits on the
    host), and the host's time issuing a call (calls queued behind a sleep kernel), `calls` calls each."""
    import host_time

    for _ in range(3):
        fn()
    return (host_time.gpu_ms(fn, (), reps=calls, rounds=1),
            host_time.host_ms(fn, (), calls, rounds=1, sleep_cycles=int(1e7)))


def _bench_cpu(fn, rep_ms):
    fn()
    times = []
    deadline = time.perf_counter() + rep_ms / 1000
    while not times or (time.perf_counter() < deadline and len(times) < 50):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return sorted(times)[len(times) // 2]


def bench(fn, opts) -> tuple[float, float | None]:
    """(ms, host ms or None) per call of `fn` on opts.device (on the CPU, one figure: the median call)."""
    if opts.device == "cpu":
        return _bench_cpu(fn, opts.rep_ms), None
    return _bench_gpu(fn, opts.calls)


def _step(fn, args, grad_outputs):
    """A callable running the case once: the forward, and for a training step its backward too."""
    import perf_cases

    if grad_outputs is None:
        return lambda: fn(*args)
    leaves = [a for a in args if getattr(a, "requires_grad", False)]

    def run():
        for a in leaves:
            a.grad = None
        outs = [t for t in perf_cases.tensors(fn(*args)) if t.requires_grad]
        import torch

        torch.autograd.backward(outs, grad_outputs[: len(outs)])

    return run


def _compare(actual, expected, reference=None) -> tuple[bool, float, bool]:
    """Whether hipinductor's result matches eager's (allclose at 1e-3, 3e-2 for bf16/f16), the largest absolute
    difference, and whether a float64 reference settled it: where the two differ beyond the tolerance, `reference()`
    (the case run in eager on float64 copies of the same inputs) decides, and the result is accepted when its error
    against the reference is at most 1.5 times eager's. Reductions and scans that keep a float accumulator for bf16
    inputs are closer to the exact result than eager's, and ill-conditioned patterns differ in the last bits of both:
    neither is a wrong result."""
    import perf_cases
    import torch

    a, e = perf_cases.tensors(actual), perf_cases.tensors(expected)
    if len(a) != len(e):
        return False, float("inf"), False
    worst, ok, by_reference = 0.0, True, False
    refs = None
    for i, (x, y) in enumerate(zip(a, e)):
        if x.shape != y.shape:
            return False, float("inf"), False
        if not x.dtype.is_floating_point:
            same = torch.equal(x, y)
            ok &= same
            worst = max(worst, 0.0 if same else 1.0)
            continue
        diff = (x.float() - y.float()).abs()
        finite = torch.isfinite(y.float())
        worst = max(worst, diff[finite].max().item() if finite.any() else 0.0)
        tol = 3e-2 if y.dtype in (torch.bfloat16, torch.float16) else 1e-3
        if torch.allclose(x.float(), y.float(), atol=tol, rtol=tol, equal_nan=True):
            continue
        if refs is None and reference is not None:
            try:
                refs = perf_cases.tensors(reference())
            except Exception:  # noqa: BLE001 - an op without float64 support leaves eager's verdict
                refs = []
        if refs and len(refs) == len(a) and refs[i].shape == x.shape and \
                _error_vs(x, refs[i]) <= 1.5 * _error_vs(y, refs[i]):
            by_reference = True
            continue
        ok = False
    return ok, worst, by_reference


def _error_vs(x, ref) -> float:
    """The largest absolute error of `x` against a float64 reference; a non-finite value where the reference has
    another counts as infinite."""
    import torch

    x, ref = x.double(), ref.double()
    finite = torch.isfinite(ref)
    same_special = (x == ref) | (torch.isnan(x) & torch.isnan(ref))
    if not bool((same_special | finite).all()) or not bool(torch.isfinite(x[finite]).all()):
        return float("inf")
    return (x[finite] - ref[finite]).abs().max().item() if finite.any() else 0.0


def _float64_reference(fn, args):
    """`fn` run in eager on float64 copies of `args` (other dtypes unchanged), without autograd."""
    import torch

    def run():
        with torch.no_grad():
            return fn(*[a.detach().double() if isinstance(a, torch.Tensor) and a.is_floating_point() else a
                        for a in args])

    return run


def run_case(case, opts) -> dict:
    """Compiles and runs `case` with each variant; with opts.phase "check", compares hipinductor's result with
    eager's; with "time", times the variants (the only process then using the GPU)."""
    import perf_cases
    import torch
    import torch._dynamo

    import hipinductor

    row = {"group": case.group, "grad": case.grad}
    args = case.make()
    if case.grad:
        args = [a.requires_grad_() if a.is_floating_point() else a for a in args]
    with torch.no_grad() if not case.grad else torch.enable_grad():
        out = case.fn(*args)
        grads = [torch.ones_like(t) for t in perf_cases.tensors(out) if t.requires_grad] if case.grad else None
        if case.memory_bound and not case.grad:
            row["bytes"] = perf_cases.bytes_moved(args, out)
        fns = {}
        for v in opts.variants:
            torch._dynamo.reset()
            if v == "eager":
                fns[v] = case.fn
                continue
            compiled = torch.compile(case.fn) if v == "inductor" else torch.compile(case.fn, backend="hipinductor")
            if v == "hipinductor":
                hipinductor.clear_reports()
            t0 = time.perf_counter()
            result = compiled(*args)
            _sync(opts.device)
            row[f"{v}_first_call_s"] = time.perf_counter() - t0
            if v == "hipinductor":
                hip_result = result
                reports = hipinductor.reports()
                row["hipinductor_kernels"] = sum(r["kernels"] for r in reports)
                row["hipinductor_fallback_ops"] = sorted({f for r in reports for f in r["fallback_ops"]})
                row["hipinductor_eager_reason"] = [r["eager_reason"][:200] for r in reports if r["eager_reason"]]
            fns[v] = compiled
        if opts.phase == "check":
            if "hipinductor" in fns:
                row["ok"], row["max_abs_err_vs_eager"], by_reference = _compare(
                    hip_result, out, _float64_reference(case.fn, args))
                if by_reference:
                    row["ok_by_float64_reference"] = True
            return row
        steps = {v: _step(f, args, grads) for v, f in fns.items()}
        if "bytes" in row and opts.device != "cpu":
            steps["same_size_copy"] = _same_size_copy(row["bytes"], opts.device)
        times = {v: [] for v in steps}
        host = {v: [] for v in steps}
        names = list(steps)
        for i in range(opts.rounds):
            for v in names[i % len(names):] + names[:i % len(names)]:
                ms, host_ms = bench(steps[v], opts)
                times[v].append(ms)
                if host_ms is not None and v != "same_size_copy":
                    host[v].append(host_ms)
    for v, ts in times.items():
        row[f"{v}_ms"] = min(ts)
    for v, ts in host.items():
        if ts:
            row[f"{v}_host_ms"] = min(ts)
    _ratios(row)
    return row


def _ratios(row: dict) -> None:
    """hipinductor's speed against Inductor and eager, and against a same-size copy, from the row's times."""
    h = row.get("hipinductor_ms")
    if h:
        for v in ("inductor", "eager"):
            if row.get(f"{v}_ms"):
                row[f"speedup_vs_{v}"] = row[f"{v}_ms"] / h
        if row.get("same_size_copy_ms"):
            row["pct_same_size_copy"] = 100 * row["same_size_copy_ms"] / h
    h = row.get("hipinductor_host_ms")
    if h:
        for v in ("inductor", "eager"):
            if row.get(f"{v}_host_ms"):
                row[f"host_speedup_vs_{v}"] = row[f"{v}_host_ms"] / h


def _sync(device):
    if device != "cpu":
        import torch

        torch.cuda.synchronize()


def _same_size_copy(nbytes, device):
    import torch

    src = torch.empty(max(1, nbytes // 2), dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    return lambda: dst.copy_(src)


# --- workers --------------------------------------------------------------------------------------------------------


def _worker(opts, tasks, done):
    import faulthandler

    _setup_paths()
    import perf_cases
    import torch
    import torch._dynamo

    from hipinductor import _C

    torch._dynamo.config.cache_size_limit = 64
    by_name = {c.name: c for c in perf_cases.catalogue(perf_cases.Sizes(opts.quick, opts.device),
                                                       set(_C.lowered_ops()), opinfo=opts.opinfo)}
    while True:
        name = tasks.get()
        if name is None:
            return
        done.put(("start", name, os.getpid()))
        # A case that compiles or runs past the cap ends this worker (its stacks printed); the parent records it.
        faulthandler.dump_traceback_later(opts.compile_cap * 5, exit=True)
        try:
            row = run_case(by_name[name], opts)
        except Exception as e:  # noqa: BLE001 - a failing case is a result, not the end of the run
            msg = str(e).strip().splitlines()
            row = {"group": by_name[name].group, "error": f"{type(e).__name__}: {msg[0][:300] if msg else ''}"}
        finally:
            faulthandler.cancel_dump_traceback_later()
        torch._dynamo.reset()
        if opts.device != "cpu":
            torch.cuda.empty_cache()
        done.put(("done", name, row))


def run_all(names, opts, start) -> tuple[dict, list]:
    """Runs the cases in worker processes; returns (rows by name, names skipped when the budget ran out)."""
    if time.time() - start > opts.budget:
        return {}, list(names)
    ctx = mp.get_context("spawn")
    tasks, done = ctx.Queue(), ctx.Queue()
    pending = list(names)
    workers: dict[int, mp.Process] = {}
    running: dict[int, str] = {}
    rows: dict[str, dict] = {}

    def spawn():
        w = ctx.Process(target=_worker, args=(opts, tasks, done), daemon=True)
        w.start()
        workers[w.pid] = w

    def feed():
        # Only as many cases queued as workers idle, so that the budget can stop the rest.
        while pending and len(running) + tasks_queued[0] < len(workers):
            if time.time() - start > opts.budget:
                return
            tasks.put(pending.pop(0))
            tasks_queued[0] += 1

    tasks_queued = [0]
    deaths = 0
    for _ in range(min(opts.jobs, max(1, len(names)))):
        spawn()
    feed()
    while running or tasks_queued[0]:
        try:
            kind, name, value = done.get(timeout=2)
        except queue.Empty:
            for pid, w in list(workers.items()):
                if w.is_alive():
                    continue
                del workers[pid]
                deaths += 1
                if deaths > len(names) + opts.jobs:
                    raise SystemExit("perf sweep: workers keep dying before taking a case (see their output)")
                if pid in running:
                    case = running.pop(pid)
                    rows[case] = {"error": f"worker died (exit {w.exitcode}): crashed, or past the "
                                           f"{opts.compile_cap} s cap"}
                if pending or tasks_queued[0]:
                    spawn()
            feed()
            continue
        if kind == "start":
            tasks_queued[0] -= 1
            running[value] = name
            continue
        running = {pid: n for pid, n in running.items() if n != name}
        rows[name] = value
        _print_row(name, value, len(rows), len(names), start)
        feed()
    for _ in workers:
        tasks.put(None)
    for w in workers.values():
        w.join(timeout=10)
    return rows, pending


def _print_row(name, row, n, total, start):
    if "error" in row:
        text = row["error"]
    else:
        parts = [f"{v} {row[v + '_ms']:.4f}" for v in (*VARIANTS, "same_size_copy") if row.get(v + "_ms")]
        text = " ms, ".join(parts) + " ms" if parts else "compiled" + (", matches eager" if row.get("ok") else "")
        if "speedup_vs_inductor" in row:
            text += f"  x{row['speedup_vs_inductor']:.2f} vs inductor"
        host = [f"{v} {row[v + '_host_ms']:.4f}" for v in VARIANTS if row.get(v + "_host_ms")]
        if host:
            text += "; host ms " + ", ".join(host)
        if not row.get("ok", True):
            text += "  MISMATCH"
    print(f"[{n}/{total} {time.time() - start:.0f}s] {name}: {text}", flush=True)


# --- summary --------------------------------------------------------------------------------------------------------


def summarize(rows: dict, skipped: list, worst: int) -> dict:
    import perf_cases

    timed = {n: r for n, r in rows.items() if "error" not in r}
    vs_ind = {n: r["speedup_vs_inductor"] for n, r in timed.items() if "speedup_vs_inductor" in r}
    vs_eager = {n: r["speedup_vs_eager"] for n, r in timed.items() if "speedup_vs_eager" in r}
    copy = [r["pct_same_size_copy"] for r in timed.values() if "pct_same_size_copy" in r]
    groups = sorted({r.get("group", n.split("/")[0]) for n, r in rows.items()})
    return {
        "cases": len(rows), "timed": len(timed), "errors": len(rows) - len(timed),
        "mismatches": sorted(n for n, r in timed.items() if not r.get("ok", True)),
        "skipped_for_budget": skipped, "groups": len(groups),
        "geomean_vs_inductor": perf_cases.geomean(vs_ind.values()),
        "geomean_vs_eager": perf_cases.geomean(vs_eager.values()),
        "below_0.9_inductor": sorted(n for n, s in vs_ind.items() if s < 0.9),
        "below_eager": sorted(n for n, s in vs_eager.items() if s < 1.0),
        "median_pct_same_size_copy": sorted(copy)[len(copy) // 2] if copy else None,
        "worst_vs_inductor": sorted(vs_ind.items(), key=lambda kv: kv[1])[:worst],
        # Host time per call (GPU runs only): a case whose host time exceeds its GPU time is host-bound when its
        # calls follow one another.
        "host_geomean_vs_inductor": _geomean_of(timed, "host_speedup_vs_inductor"),
        "host_geomean_vs_eager": _geomean_of(timed, "host_speedup_vs_eager"),
        "host_bound": sorted(n for n, r in timed.items()
                             if r.get("hipinductor_host_ms", 0) > r.get("hipinductor_ms", math.inf)),
    }


def _geomean_of(rows: dict, key: str):
    import perf_cases

    values = [r[key] for r in rows.values() if key in r]
    return perf_cases.geomean(values) if values else None


def print_summary(rows: dict, summary: dict) -> None:
    print(f"\nworst {len(summary['worst_vs_inductor'])} against Inductor (speedup < 1: hipinductor slower):")
    print(f"  {'case':58s} {'vs ind':>7s} {'vs eager':>8s} {'% copy':>7s} {'hip ms':>9s}")
    for name, s in summary["worst_vs_inductor"]:
        r = rows[name]
        pct = r.get("pct_same_size_copy")
        print(f"  {name[:58]:58s} {s:7.2f} {r.get('speedup_vs_eager', math.nan):8.2f} "
              f"{(f'{pct:.0f}' if pct else '-'):>7s} {r['hipinductor_ms']:9.4f}")
    errors = [(n, r["error"]) for n, r in rows.items() if "error" in r]
    for n, e in errors[:20]:
        print(f"  error {n}: {e[:160]}")
    for n in summary["mismatches"][:20]:
        print(f"  mismatch {n}: max abs err {rows[n].get('max_abs_err_vs_eager')}")
    print(f"perf sweep: {summary['cases']} cases ({summary['groups']} op/pattern classes), {summary['timed']} timed, "
          f"{summary['errors']} errors, {len(summary['mismatches'])} mismatches, "
          f"{len(summary['skipped_for_budget'])} skipped (time budget); geomean vs Inductor "
          f"{summary['geomean_vs_inductor']:.3f}, vs eager {summary['geomean_vs_eager']:.3f}; "
          f"{len(summary['below_0.9_inductor'])} below 0.9x Inductor, {len(summary['below_eager'])} below eager; "
          f"median % of a same-size copy {summary['median_pct_same_size_copy']}")
    if summary["host_geomean_vs_inductor"]:
        print(f"perf sweep: host time per call, geomean vs Inductor {summary['host_geomean_vs_inductor']:.3f}, "
              f"vs eager {summary['host_geomean_vs_eager']:.3f}; hipinductor's call host-bound (host time above "
              f"GPU time) in {len(summary['host_bound'])} cases")
    if summary["skipped_for_budget"]:
        print(f"perf sweep: the time budget ran out; not run: {', '.join(summary['skipped_for_budget'][:10])}"
              + (" ..." if len(summary["skipped_for_budget"]) > 10 else ""))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--filter", help="comma-separated substrings: only cases whose name holds one")
    parser.add_argument("--limit", type=int, help="at most this many cases (after --filter)")
    parser.add_argument("--budget", type=float, default=450, help="seconds after which no new case starts")
    parser.add_argument("--compile-cap", type=int, default=120,
                        help="seconds a case's compiles may take (a case is ended at 5 times this)")
    parser.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) - 2), help="worker processes")
    parser.add_argument("--device", default="cuda", help="cuda (the sweep), or cpu for a check of the tool")
    parser.add_argument("--quick", action="store_true", help="tiny sizes (a check of the tool, not a measurement)")
    parser.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated subset of "
                                                                      f"{','.join(VARIANTS)} (hipinductor required)")
    parser.add_argument("--rounds", type=int, default=2, help="interleaved timing rounds, best of (default 2)")
    parser.add_argument("--calls", type=int, default=5, help="calls per timing on the GPU (default 5)")
    parser.add_argument("--rep-ms", type=int, default=25, help="ms per timing on the cpu device (default 25)")
    parser.add_argument("--no-opinfo", dest="opinfo", action="store_false", help="patterns only")
    parser.add_argument("--worst", type=int, default=15, help="rows of the worst-ratio table")
    parser.add_argument("--list", action="store_true", help="print the case names and exit")
    parser.add_argument("--out", help="JSON file (default bench/results/perf-sweep-<gpu>.json on a GPU, none on cpu)")
    opts = parser.parse_args(argv)
    opts.variants = [v.strip() for v in opts.variants.split(",") if v.strip()]
    bad = [v for v in opts.variants if v not in VARIANTS]
    if bad or "hipinductor" not in opts.variants:
        parser.error(f"--variants: {bad[0] if bad else 'hipinductor'!r} "
                     f"{'is not one of ' + ','.join(VARIANTS) if bad else 'is required'}")
    if opts.rounds < 1 or opts.jobs < 1 or opts.rep_ms < 1 or opts.calls < 1:
        parser.error("--rounds, --jobs, --calls and --rep-ms must be at least 1")
    if opts.device not in ("cuda", "cpu"):
        parser.error(f"--device: {opts.device!r} is not cuda or cpu")

    _setup_paths()
    import perf_cases
    import torch

    from hipinductor import _C

    if opts.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: no CUDA device (use --device cpu --quick to check the tool)")
    # Cold caches shared by the workers, so that a case's compiles are its own: hipinductor's code objects,
    # Inductor's, and NVRTC's program cache in the driver's compute cache (as bench/run_bench.py).
    os.environ.setdefault("HIPINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="hipinductor-sweep-cache-"))
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="inductor-sweep-cache-"))
    os.environ.setdefault("CUDA_CACHE_PATH", tempfile.mkdtemp(prefix="cuda-compute-cache-"))
    # The workers are the parallelism: Inductor's own pool of compile processes in each would oversubscribe the CPUs.
    os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
    cases = perf_cases.catalogue(perf_cases.Sizes(opts.quick, opts.device), set(_C.lowered_ops()),
                                 opinfo=opts.opinfo)
    names = [c.name for c in cases]
    if opts.filter:
        keys = [k.strip() for k in opts.filter.split(",") if k.strip()]
        names = [n for n in names if any(k in n for k in keys)]
    if opts.limit is not None:
        names = names[: opts.limit]
    if opts.list:
        print("\n".join(names))
        return 0
    if not names:
        print("perf sweep: no case matches --filter", file=sys.stderr)
        return 2

    import run_bench

    start = time.time()
    copy_gbps = None
    if opts.device == "cuda":
        run_bench.DEV = "cuda"
        copy_gbps = run_bench.copy_bandwidth()
        print(f"copy bandwidth: {copy_gbps:.0f} GB/s", flush=True)
    print(f"perf sweep: {len(names)} cases, {opts.jobs} workers, budget {opts.budget:.0f} s", flush=True)
    checked, skipped = run_all(names, argparse.Namespace(**vars(opts), phase="check"), start)
    ordered = timed_phase({n: checked[n] for n in names if n in checked}, opts, start)
    skipped += [n for n, r in ordered.items() if "error" not in r and "hipinductor_ms" not in r]
    ordered = {n: r for n, r in ordered.items() if n not in skipped}
    summary = summarize(ordered, skipped, opts.worst)
    print_summary(ordered, summary)
    results = {"gpu": torch.cuda.get_device_name() if opts.device == "cuda" else "cpu",
               "date": datetime.date.today().isoformat(), "commit": run_bench.source_commit(),
               "torch": torch.__version__, "copy_GBps": copy_gbps, "quick": opts.quick, "rounds": opts.rounds,
               "calls": opts.calls, "rep_ms": opts.rep_ms, "seconds": time.time() - start, "summary": summary,
               "cases": ordered}
    out = opts.out
    if out is None and opts.device == "cuda":
        gpu = torch.cuda.get_device_name().lower()
        tag = next((t for t in ("h200", "h100", "a100", "mi300", "mi250") if t in gpu), "gpu")
        out = os.path.join(REPO, "bench", "results", f"perf-sweep-{tag}.json")
    if out:
        _write_atomically(run_bench, out, results)
    return 0


def timed_phase(rows: dict, opts, start) -> dict:
    """Times the checked cases (`rows`, those without an error) one at a time in one worker, each compiled again
    from the first phase's caches; returns `rows` with each case's times and ratios added (a case the budget left
    untimed keeps none). The first phase's cold compile times stay."""
    names = [n for n, r in rows.items() if "error" not in r]
    if not names:
        return rows
    print(f"\ntiming {len(names)} case(s) one at a time", flush=True)
    timed, _ = run_all(names, argparse.Namespace(**{**vars(opts), "jobs": 1, "phase": "time"}), start)
    for n, r in timed.items():
        if "error" in r:
            rows[n] = {**rows[n], "error": f"timing: {r['error']}"}
            continue
        rows[n].update({k: v for k, v in r.items() if k.endswith("_ms")})
        _ratios(rows[n])
    return rows


def _write_atomically(run_bench, path, results):
    """run_bench.write_results into a temporary file beside `path`, renamed over it: never half a file."""
    import json

    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
    os.close(fd)
    try:
        run_bench.write_results(tmp, json.loads(json.dumps(results, default=float)))
        os.replace(tmp, path)
        print(f"perf sweep: results in {path}")
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


if __name__ == "__main__":
    sys.exit(main())
