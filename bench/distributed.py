#!/usr/bin/env python3
"""Step times of DistributedDataParallel training (not a test): eager DDP against DDP compiled with hipinductor, on
the models of tests/python/test_distributed.py (an MLP of four linear layers with LayerNorm and GELU, and a pre-norm
transformer block), at their sizes there.

    python3 bench/distributed.py [--device cpu|cuda] [--world N] [--models mlp,block] [--steps 10]
                                 [--out bench/results/distributed-cpu.json]

One process per rank (spawned): gloo with CPU tensors on the cpu device (`--device cpu`, 2 ranks by default), or
NCCL with one GPU per rank (`--device cuda`, every GPU by default). Per model, rank 0 reports the median over
`--steps` timed steps (after two untimed ones: the first compiles) of one training step — forward, backward with its
all-reduces, SGD update — for each variant, the variants alternating step by step. Ranks start each step together
(a barrier, outside the timing).
"""

from __future__ import annotations

import argparse
import copy
import datetime
import json
import os
import statistics
import sys
import tempfile
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# The models are the test's (tests/python/distributed_models.py), so the timed steps are the checked ones.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "python"))
import run_bench  # noqa: E402  (write_results, source_commit)
from distributed_models import MODELS  # noqa: E402

WARMUP_STEPS = 2
BUCKET_CAP_MB = 1  # as the test: several buckets, so dynamo's DDP optimizer splits the graph


def _rank(rank, world, store_file, device_kind, models, steps, out):
    import hipinductor

    backend = "nccl" if device_kind == "cuda" else "gloo"
    if device_kind == "cuda":
        torch.cuda.set_device(rank)
    else:
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    # A file store, as the test: PyTorch builds without libuv have no default TCP store.
    dist.init_process_group(backend, init_method=f"file://{store_file}", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=600))
    from torch.nn.parallel import DistributedDataParallel as DDP

    device = torch.device("cuda", rank) if device_kind == "cuda" else torch.device("cpu")
    ids = [rank] if device_kind == "cuda" else None
    results = {}
    for name in models:
        torch._dynamo.reset()
        hipinductor.clear_reports()
        make, shape = MODELS[name]
        torch.manual_seed(0)
        model = make().to(device)
        eager = DDP(copy.deepcopy(model), device_ids=ids, bucket_cap_mb=BUCKET_CAP_MB)
        compiled_ddp = DDP(copy.deepcopy(model), device_ids=ids, bucket_cap_mb=BUCKET_CAP_MB)
        variants = {"eager_ddp": eager, "compiled_ddp": torch.compile(compiled_ddp, backend="hipinductor")}
        optimizers = {"eager_ddp": torch.optim.SGD(eager.parameters(), lr=0.01),
                      "compiled_ddp": torch.optim.SGD(compiled_ddp.parameters(), lr=0.01)}
        gen = torch.Generator().manual_seed(1 + rank)
        times = {v: [] for v in variants}
        first_step_s = {}
        for step in range(WARMUP_STEPS + steps):
            x = torch.randn(shape, generator=gen).to(device)
            for variant, fn in variants.items():
                dist.barrier()
                start = time.perf_counter()
                optimizers[variant].zero_grad(set_to_none=True)
                fn(x).square().mean().backward()
                optimizers[variant].step()
                if device_kind == "cuda":
                    torch.cuda.synchronize(device)
                elapsed = time.perf_counter() - start
                if step == 0:
                    first_step_s[variant] = elapsed
                if step >= WARMUP_STEPS:
                    times[variant].append(elapsed)
        reports = hipinductor.reports()
        results[name] = {
            "batch_shape": list(shape),
            **{f"{v}_step_ms": statistics.median(t) * 1e3 for v, t in times.items()},
            **{f"{v}_step_ms_min": min(t) * 1e3 for v, t in times.items()},
            "compiled_ddp_first_step_s": first_step_s["compiled_ddp"],
            "graphs": {k: sum(r["name"].startswith(k) for r in reports) for k in ("forward", "backward")},
            "kernels": sum(r["kernels"] for r in reports),
        }
    if rank == 0:
        with open(out, "w") as f:
            json.dump(results, f)
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--world", type=int, help="ranks (default: 2 on cpu, every GPU on cuda)")
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated: " + ", ".join(MODELS))
    parser.add_argument("--steps", type=int, default=10, help="timed steps per variant")
    parser.add_argument("--out", help="JSON file for the results")
    args = parser.parse_args()
    models = args.models.split(",")
    unknown = [m for m in models if m not in MODELS]
    if unknown:
        parser.error(f"unknown models {unknown} (known: {', '.join(MODELS)})")
    world = args.world or (torch.cuda.device_count() if args.device == "cuda" else 2)
    if world < 1:
        parser.error("no GPU" if args.device == "cuda" else "--world must be at least 1")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "rank0.json")
        mp.start_processes(_rank, args=(world, os.path.join(tmp, "store"), args.device, models, args.steps, out),
                           nprocs=world, start_method="spawn")
        with open(out) as f:
            cases = json.load(f)
    for name, r in cases.items():
        print(f"{name:6s} {args.device} x{world}: eager DDP {r['eager_ddp_step_ms']:8.2f} ms/step, compiled DDP "
              f"{r['compiled_ddp_step_ms']:8.2f} ms/step (first step {r['compiled_ddp_first_step_s']:.1f} s), "
              f"graphs {r['graphs']}")
    if args.out:
        device = torch.cuda.get_device_name(0) if args.device == "cuda" else "cpu"
        run_bench.write_results(args.out, {
            "device": device, "world": world, "backend": "nccl" if args.device == "cuda" else "gloo",
            "cpu_count": os.cpu_count(), "load_average_1m": os.getloadavg()[0], "date": datetime.date.today().isoformat(),
            "commit": run_bench.source_commit(), "torch": torch.__version__, "steps": args.steps, "cases": cases})


if __name__ == "__main__":
    main()
