#!/usr/bin/env python3
"""hipinductor compile-time scaling (a benchmark, not a test): how long one graph takes to compile against its size.

Graphs are written directly as hipinductor graph JSON (no PyTorch needed), one placeholder then a chain:
  pointwise  N chained pointwise nodes over one [64, 256] f32 tensor (mul, add, tanh, sigmoid, sub, relu, ... in turn),
             the shape of a long pointwise tail or an unrolled optimizer step;
  softmax    N chained aten._softmax calls over the rows of a [64, 512] f32 tensor.
Each case is compiled in a child process (so one that runs past --timeout is stopped and recorded as such) through
`hipinductor._C.compile` without the code-object cache, and records the wall time of the call and the pipeline's
own stage times (`CompiledGraph.stage_ms`: lower, split, fuse, plan_memory, emit, compile).

Compile time is a host cost, so a result measured on a machine without a GPU is legitimate: the cpu target compiles
with the host C++ compiler; gfx90a / sm_90 run HIPRTC / NVRTC where they are installed (a target whose compiler is
missing is skipped, and listed as such). Modules past the unit bounds compile as several units in parallel, one per
hardware thread ("units" in each record), so GPU and cpu times depend on the host's cores (recorded as "cpus").

    PYTHONPATH=build/python python3 bench/compile_scaling.py [--kinds pointwise,softmax]
        [--pointwise-sizes 1000,2000,4000,10000] [--softmax-sizes 100,200,400,1000] [--targets cpu]
        [--timeout 300] [--out bench/results/compile-scaling-cpu.json] [--note TEXT]

The suite's latest result is bench/results/compile-scaling-<machine>.json (`cpu` for a run on a host without a GPU),
overwritten by the next run: git keeps the history.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

POINTWISE_SHAPE = [64, 256]
SOFTMAX_SHAPE = [64, 512]


def _meta(sizes):
    strides, s = [], 1
    for n in reversed(sizes):
        strides.insert(0, s)
        s *= n
    return {"dtype": "float32", "sizes": list(sizes), "strides": strides}


def _call(name, op, args, sizes):
    return {"name": name, "op": op, "args": args, "meta": _meta(sizes)}


# Values stay in a bounded range whatever the chain's length: every op maps [-2, 2] into itself.
_POINTWISE_STEPS = [
    ("aten.mul.Tensor", [0.5]),
    ("aten.add.Tensor", [0.25]),
    ("aten.tanh.default", []),
    ("aten.sigmoid.default", []),
    ("aten.sub.Tensor", [0.5]),
    ("aten.relu.default", []),
    ("aten.sin.default", []),
    ("aten.neg.default", []),
]


def pointwise_chain(n: int) -> str:
    """N chained pointwise nodes over one input; the last is the output."""
    nodes = [{"name": "x", "op": "placeholder", "meta": _meta(POINTWISE_SHAPE)}]
    prev = "x"
    for i in range(n):
        op, extra = _POINTWISE_STEPS[i % len(_POINTWISE_STEPS)]
        name = f"n{i}"
        nodes.append(_call(name, op, [{"ref": prev}] + extra, POINTWISE_SHAPE))
        prev = name
    return json.dumps({"format": "hipinductor-graph", "version": 1, "nodes": nodes, "outputs": [{"ref": prev}]})


def softmax_chain(n: int) -> str:
    """N chained softmaxes over the rows of one input; the last is the output."""
    nodes = [{"name": "x", "op": "placeholder", "meta": _meta(SOFTMAX_SHAPE)}]
    prev = "x"
    for i in range(n):
        name = f"s{i}"
        nodes.append(_call(name, "aten._softmax.default", [{"ref": prev}, -1, False], SOFTMAX_SHAPE))
        prev = name
    return json.dumps({"format": "hipinductor-graph", "version": 1, "nodes": nodes, "outputs": [{"ref": prev}]})


GRAPHS = {"pointwise": pointwise_chain, "softmax": softmax_chain}


def child(kind: str, nodes: int, target: str) -> None:
    """Compiles one case in this process and prints its record as one JSON line."""
    from hipinductor import _C

    text = GRAPHS[kind](nodes)
    start = time.perf_counter()
    g = _C.compile(text, target=target, name=f"{kind}_{nodes}", use_cache=False)
    wall = (time.perf_counter() - start) * 1e3
    code = g.code_object
    # A GPU module past the unit bound compiles as several units, kept in one container (runtime/code_object_units.h:
    # magic "HIUNITS1", then the part count).
    units = int.from_bytes(code[8:12], "little") if code[:8] == b"HIUNITS1" else 1
    print(json.dumps({"wall_ms": round(wall, 1), "lower_ms": round(g.lower_ms, 1),
                      "compile_ms": round(g.compile_ms, 1),
                      "stage_ms": {k: round(v, 1) for k, v in getattr(g, "stage_ms", {}).items()},
                      "kernels": g.num_kernels, "units": units, "source_bytes": len(g.source)}))


def compiler_missing(target: str) -> str | None:
    """Why `target` cannot be compiled here (its compiler library is not installed: HIPRTC on an NVIDIA machine), or
    None. Tried in a child process with a one-node graph."""
    cmd = [sys.executable, os.path.abspath(__file__), "--child", f"pointwise:1:{target}"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if out.returncode == 0:
        return None
    return (out.stderr.strip().splitlines() or ["exit " + str(out.returncode)])[-1][:500]


def run_case(kind: str, nodes: int, target: str, timeout: float) -> dict:
    record = {"kind": kind, "nodes": nodes, "target": target}
    cmd = [sys.executable, os.path.abspath(__file__), "--child", f"{kind}:{nodes}:{target}"]
    start = time.perf_counter()
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        record.update(timed_out=True, wall_ms=round(timeout * 1e3, 1))
        return record
    if out.returncode != 0:
        record.update(error=(out.stderr.strip().splitlines() or ["exit " + str(out.returncode)])[-1][:500],
                      wall_ms=round((time.perf_counter() - start) * 1e3, 1))
        return record
    record.update(json.loads(out.stdout.strip().splitlines()[-1]))
    return record


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kinds", default="pointwise,softmax")
    parser.add_argument("--pointwise-sizes", default="1000,2000,4000,10000")
    parser.add_argument("--softmax-sizes", default="100,200,400,1000")
    parser.add_argument("--targets", default="cpu", help="comma-separated targets (cpu, gfx90a, sm_90, ...)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per case before it is stopped")
    parser.add_argument("--out", help="JSON file for the results (default: print only)")
    parser.add_argument("--note", default="host compile time; cpu target compiled by the host C++ compiler",
                        help="the results' note: say how loaded the host was")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, nodes, target = args.child.split(":", 2)
        child(kind, int(nodes), target)
        return 0

    kinds = [k for k in args.kinds.split(",") if k]
    for k in kinds:
        if k not in GRAPHS:
            print(f"compile_scaling: unknown kind '{k}' (expected one of {', '.join(GRAPHS)})", file=sys.stderr)
            return 2
    try:
        sizes = {"pointwise": [int(s) for s in args.pointwise_sizes.split(",") if s],
                 "softmax": [int(s) for s in args.softmax_sizes.split(",") if s]}
    except ValueError as e:
        print(f"compile_scaling: bad size list: {e}", file=sys.stderr)
        return 2
    cases, skipped = [], []
    for target in [t for t in args.targets.split(",") if t]:
        why = compiler_missing(target)
        if why:
            print(f"{target:8} skipped: cannot compile for it here ({why})", flush=True)
            skipped.append({"target": target, "reason": why})
            continue
        for kind in kinds:
            for n in sizes[kind]:
                r = run_case(kind, n, target, args.timeout)
                cases.append(r)
                status = "timed out" if r.get("timed_out") else r.get("error", "")
                stages = " ".join(f"{k}={v:.0f}" for k, v in r.get("stage_ms", {}).items())
                units = f"units={r['units']} " if r.get("units", 1) > 1 else ""
                print(f"{target:8} {kind:9} {n:6} nodes: {r['wall_ms'] / 1e3:8.2f} s  {units}{stages} {status}",
                      flush=True)

    if args.out:
        from run_bench import source_commit, write_results

        write_results(args.out, {
            "suite": "compile-scaling",
            "machine": platform.node(),
            "host": platform.processor() or platform.machine(),
            "note": args.note,
            "commit": source_commit(),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "timeout_s": args.timeout,
            "cpus": os.cpu_count(),
            "cases": cases,
            "skipped_targets": skipped,
        })
    return 0


if __name__ == "__main__":
    sys.exit(main())
