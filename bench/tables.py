#!/usr/bin/env python3
"""Markdown tables of a benchmark result file (bench/run_bench.py's JSON, and bench/dynamic_shapes.py's), as
docs/performance.md shows them.

    python3 bench/tables.py bench/results/microbench-h200.json [more.json ...]

Per case: ms of eager, Inductor and hipinductor (the best of the interleaved rounds), hipinductor's speed against
Inductor (> 1: faster), % of the device copy bandwidth and of a copy of the case's own bytes (memory-bound cases),
and cold compile seconds of both compilers.
"""

from __future__ import annotations

import json
import sys


def fmt(v, digits=3):
    return "—" if v is None else f"{v:.{digits}f}"


def reduce_overhead_table(d: dict) -> list[str]:
    """bench/reduce_overhead.py's columns: ms per call of each variant, do_bench's and back-to-back."""
    variants = ("eager", "inductor", "inductor_reduce_overhead", "hipinductor", "hipinductor_reduce_overhead")
    rows = ["| case | " + " | ".join(v.replace("_reduce_overhead", " + graphs") for v in variants) +
            " | hip + graphs vs Inductor + graphs |", "|---" * (len(variants) + 2) + "|"]
    for name, c in d["cases"].items():
        if "error" in c:
            rows.append(f"| {name} | error: {c['error'][:80]} |" + " |" * len(variants))
            continue
        cells = [f"{fmt(c.get(f'{v}_ms'))} / {fmt(c.get(f'{v}_back_to_back_ms'))}" for v in variants]
        ratio = " / ".join(f"{fmt(c.get(f'speedup_vs_inductor_reduce_overhead_{s}'), 2)}x"
                           for s in ("ms", "back_to_back_ms") if c.get(f"speedup_vs_inductor_reduce_overhead_{s}"))
        rows.append(f"| {name} | " + " | ".join(cells) + f" | {ratio} |")
    return rows


def _head(path: str, d: dict) -> str:
    """A table's first line: the file, GPU, date, commit and torch version of the run."""
    return (f"`{path}`: {d.get('gpu')}, {d.get('date')}, commit {d.get('commit') or 'not recorded'}, "
            f"torch {d.get('torch')}")


def dynamic_tables(path: str, d: dict) -> str:
    """bench/dynamic_shapes.py's results: the model's first calls, never-seen and cold sizes and steady states per
    compiler, then each microbenchmark's dynamic against static time."""
    head = f"{_head(path, d)}, {d.get('model')}"
    out = [head, ""]
    runs = d.get("model_runs") or {}
    if runs:
        out += ["| compiler | all first calls s | never-seen size's first call ms | cold size's first call s "
                "| steady ms, dynamic | steady ms, static |", "|---|---|---|---|---|---|"]
        for name, r in runs.items():
            cold = r.get("cold_size")
            cold_cell = (f"{fmt(r.get('cold_size_first_call_s'), 2)} ({cold[0]} x {cold[1]})" if cold
                         else "—")
            unseen = r.get("unseen_first_call_s")
            out.append(f"| {name} | {fmt(r.get('first_calls_total_s'), 1)} | "
                       f"{fmt(None if unseen is None else unseen * 1000, 1)} | {cold_cell} | "
                       f"{fmt(r.get('dynamic_steady_ms'), 2)} | {fmt(r.get('static_steady_ms'), 2)} |")
        if d.get("eager_cold_size_first_call_s") is not None:
            c = d.get("eager_cold_size") or ["?", "?"]
            out += ["", f"eager's first call at its cold size ({c[0]} x {c[1]}): "
                        f"{fmt(d['eager_cold_size_first_call_s'], 2)} s"]
        out.append("")
    micro = d.get("micro") or {}
    if micro:
        out += ["| microbenchmark, `dynamic=True` | dynamic ms | static ms | dynamic / static |", "|---|---|---|---|"]
        for name, r in micro.items():
            out.append(f"| {name} | {fmt(r.get('dynamic_ms'))} | {fmt(r.get('static_ms'))} | "
                       f"{fmt(r.get('dynamic_vs_static'), 2)} |")
    return "\n".join(out) + "\n"


def table(path: str) -> str:
    with open(path) as f:
        d = json.load(f)
    if "model_runs" in d or "micro" in d:
        return dynamic_tables(path, d)
    if any("hipinductor_reduce_overhead_ms" in c for c in d["cases"].values()):
        head = f"{_head(path, d)}, best of {d.get('rounds')} rounds; ms per call, do_bench / back-to-back"
        return head + "\n\n" + "\n".join(reduce_overhead_table(d)) + "\n"
    head = f"{_head(path, d)}, copy {fmt(d.get('copy_GBps'), 0)} GB/s, best of {d.get('rounds')} rounds"
    rows = ["| case | eager ms | Inductor ms | hipinductor ms | vs Inductor | % copy | % same-size copy "
            "| cold compile s (Inductor / hip) |",
            "|---|---|---|---|---|---|---|---|"]
    for name, c in d["cases"].items():
        if "error" in c:
            rows.append(f"| {name} | error: {c['error'][:80]} | | | | | | |")
            continue
        rows.append(f"| {name} | {fmt(c.get('eager_ms'))} | {fmt(c.get('inductor_ms'))} | "
                    f"{fmt(c.get('hipinductor_ms'))} | {fmt(c.get('speedup_vs_inductor'), 2)}x | "
                    f"{fmt(c.get('hipinductor_pct_copy'), 1)} | {fmt(c.get('hipinductor_pct_same_size_copy'), 1)} | "
                    f"{fmt(c.get('inductor_cold_compile_s'), 2)} / {fmt(c.get('hipinductor_cold_compile_s'), 2)} |")
    return head + "\n\n" + "\n".join(rows) + "\n"


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    for path in argv:
        try:
            print(table(path))
        except (OSError, ValueError, KeyError) as e:
            print(f"tables.py: {path}: {e}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
