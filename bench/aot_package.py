#!/usr/bin/env python3
"""Ahead-of-time packages (not a test): per case, a torch.export program built on the CPU (no GPU involved) into a
package per target (gfx90a, gfx942, gfx1100, sm_90), each from an empty cache; the packages' sizes (code objects,
weights); then, on the GPU, each in a fresh process: the sm_90 package's load time and first call, against the
JIT's (torch.compile, backend="hipinductor") first call with an empty cache (cold) and with the cache the cold run
filled (warm), and the package's largest difference from the JIT's output.

    python3 bench/aot_package.py [--cases gpt_block,llama_block] [--out bench/results/aot-h200.json]

The cases are run_bench.py's blocks in bf16. Each child process runs the model eagerly once first, as run_bench.py's
warm start does, so that the first cuBLAS/cuDNN calls of the process are not counted as anyone's first call.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_bench  # noqa: E402  (the benchmark's cases and result writer)

TARGETS = ["gfx90a", "gfx942", "gfx1100", "sm_90"]
CASES = ("gpt_block", "llama_block")


def make(name, device="cpu"):
    torch.manual_seed(0)
    model, args = run_bench.MODELS[name]()
    model = model.to(device, torch.bfloat16).eval()
    return model, [a.to(device, torch.bfloat16) for a in args]


def tree_bytes(path: str) -> int:
    return sum(os.path.getsize(os.path.join(root, f)) for root, _, files in os.walk(path) for f in files)


def build(name: str, folder: str) -> dict:
    """Exports on the CPU and builds one package per target, each from an empty cache (its build time); the GPU runs
    the sm_90 one."""
    import hipinductor

    model, args = make(name)
    start = time.perf_counter()
    exported = torch.export.export(model, tuple(args))
    row = {"export_s": time.perf_counter() - start, "build_s": {}, "code_object_bytes": {}, "package_bytes": {}}
    for target in TARGETS:
        os.environ["HIPINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="hipinductor-aot-bench-cache-")
        path = os.path.join(folder, f"{name}.{target}.hipi")
        start = time.perf_counter()
        m = hipinductor.aot_compile(exported, [target], path)
        row["build_s"][target] = time.perf_counter() - start
        row["code_object_bytes"][target] = sum(m["files"][f]["size"] for f in
                                               {s["code_object"] for s in m["targets"][0]["segments"]})
        row["package_bytes"][target] = tree_bytes(path)
        row["weights_bytes"] = m["files"][m["weights"]["file"]]["size"]
        row["kernels"] = sum(len(s["kernels"]) for s in m["targets"][0]["segments"])
        row["eager_ops"] = m["eager_ops"]
    torch.save(args, os.path.join(folder, f"{name}.inputs.pt"))
    return row


def child(mode: str, name: str, folder: str) -> None:
    """One fresh process: `package` loads and calls the package; `jit` compiles and calls (cold or warm by the cache
    it is given). Prints one JSON line."""
    import hipinductor

    model, args = make(name, "cuda")
    args = [a.cuda() for a in torch.load(os.path.join(folder, f"{name}.inputs.pt"))]
    with torch.no_grad():
        model(*args)
    torch.cuda.synchronize()
    out = {}
    start = time.perf_counter()
    if mode == "package":
        fn = hipinductor.load_package(os.path.join(folder, f"{name}.sm_90.hipi"), "cuda")
        out["load_s"] = time.perf_counter() - start
        out["target"] = fn.target
    else:
        fn = torch.compile(model, backend="hipinductor")
    t0 = time.perf_counter()
    with torch.no_grad():
        result = run_bench.main_tensor(fn(*args))
    torch.cuda.synchronize()
    out["first_call_s"] = time.perf_counter() - t0
    out["load_and_first_call_s"] = time.perf_counter() - start
    torch.save(result.cpu(), os.path.join(folder, f"{name}.{mode}.out.pt"))
    print(json.dumps(out))


def run_child(mode: str, name: str, folder: str, cache: str) -> dict:
    env = dict(os.environ, HIPINDUCTOR_CACHE_DIR=cache)
    p = subprocess.run([sys.executable, __file__, "--child", mode, name, folder], env=env, capture_output=True,
                       text=True, timeout=900)
    if p.returncode != 0:
        return {"error": p.stderr.strip().splitlines()[-1:]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def run_case(name: str) -> dict:
    folder = tempfile.mkdtemp(prefix=f"aot-bench-{name}-")
    row = build(name, folder)
    row["package"] = run_child("package", name, folder, tempfile.mkdtemp(prefix="hipinductor-empty-cache-"))
    jit_cache = tempfile.mkdtemp(prefix="hipinductor-jit-cache-")
    row["jit_cold"] = run_child("jit", name, folder, jit_cache)
    row["jit_warm"] = run_child("jit", name, folder, jit_cache)
    try:
        a = torch.load(os.path.join(folder, f"{name}.package.out.pt")).float()
        b = torch.load(os.path.join(folder, f"{name}.jit.out.pt")).float()
        row["max_abs_diff_vs_jit"] = (a - b).abs().max().item()
    except FileNotFoundError as e:
        row["max_abs_diff_vs_jit"] = f"missing output: {e.filename}"
    return row


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", help=f"comma-separated case names (default: {','.join(CASES)})")
    parser.add_argument("--out", help="JSON file for the results (bench/results/aot-h200.json)")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(*args.child)
    names = args.cases.split(",") if args.cases else list(CASES)
    unknown = [n for n in names if n not in run_bench.MODELS]
    if unknown:
        parser.error(f"unknown case {unknown[0]!r} (cases: {', '.join(run_bench.MODELS)})")
    # Cold JIT compiles must be cold: NVRTC 12.9+ would find programs in the driver's compute cache (run_bench.py).
    os.environ["CUDA_CACHE_PATH"] = tempfile.mkdtemp(prefix="cuda-compute-cache-")
    results = {"gpu": torch.cuda.get_device_name() if torch.cuda.is_available() else None,
               "date": datetime.date.today().isoformat(), "commit": run_bench.source_commit(),
               "torch": torch.__version__, "targets": TARGETS, "cases": {}}
    for name in names:
        try:
            row = run_case(name)
        except Exception as e:  # noqa: BLE001 - a failing case is a result, not the end of the run
            row = {"error": f"{type(e).__name__}: {str(e)[:400]}"}
        results["cases"][name] = row
        print(name, json.dumps(row), flush=True)
    if args.out:
        run_bench.write_results(args.out, results)


if __name__ == "__main__":
    main()
