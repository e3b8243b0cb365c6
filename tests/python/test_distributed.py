"""Distributed training through hipinductor.

CPU (CI): two processes on the gloo backend, CPU tensors on the cpu device. A few training steps of an MLP and of a
transformer block under DistributedDataParallel, compiled with backend="hipinductor", against eager DDP: losses and
gradients equal, dynamo's DDP optimizer splitting the graph at gradient buckets (several graphs, each compiled by
hipinductor, none compiled again on later steps), no collective in a kernel. Functional collectives traced into a
graph run eagerly, in the graph's order, once per call.

GPU (the GPU machine only, through scripts/gpu-check.sh): the same DDP check on NCCL, and FSDP2 (`fully_shard`, which
PyTorch 2.6 cannot run on CPU tensors: its all-gather needs device streams), compiled against eager, for a world of
one GPU and for a world of every GPU where there are several.

Every world runs under a deadline: a hang fails the test instead of blocking CI.
"""

from __future__ import annotations

import copy
import datetime
import faulthandler
import json
import os
import statistics
import time

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import hipinductor
from distributed_models import MODELS
from hipinductor.nodes import is_collective
from hipinductor.partition import Segment

#: Seconds a world may take, start to end, before the test kills its processes and fails.
WORLD_DEADLINE_S = 600
#: The smallest buckets dynamo's DDP optimizer takes (it needs the first bucket, which DDP fills up to 1 MB, to be no
#: larger than the others); the models have 2-3 MB of parameters, so their gradients fill several.
BUCKET_CAP_MB = 1
STEPS = 3

_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="GPU machine only: run through scripts/gpu-check.sh")
_gpus = pytest.mark.skipif(not torch.cuda.is_available() or torch.cuda.device_count() < 2,
                           reason="needs two or more GPUs")


# --- running a world -------------------------------------------------------------------------------------------------

def _entry(rank, world, store_file, backend, worker, args):
    """One process of a world: its process group around `worker(rank, world, *args)`. Ranks meet through a file
    store (no port to find free, and PyTorch builds without libuv have no default TCP store)."""
    # A rank still running shortly before the deadline prints where each of its threads is, for the failure report.
    faulthandler.dump_traceback_later(WORLD_DEADLINE_S - 15)
    if backend == "nccl":
        torch.cuda.set_device(rank)
    else:
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")  # one host: no hostname to resolve
    dist.init_process_group(backend, init_method=f"file://{store_file}", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=WORLD_DEADLINE_S))
    try:
        worker(rank, world, *args)
        # Both ranks done before either tears the group down: gloo's destroy can wait forever for a peer that has
        # already exited.
        dist.barrier()
    finally:
        dist.destroy_process_group()


def run_world(world: int, backend: str, worker, out_dir: str, *args) -> None:
    """Runs `worker(rank, world, backend, *args, out_dir)` in `world` spawned processes; a worker's exception fails
    the test with its traceback, and a world still running at the deadline is killed and fails it."""
    store_file = os.path.join(out_dir, "store")
    context = mp.start_processes(_entry, args=(world, store_file, backend, worker, (backend, *args, out_dir)),
                                 nprocs=world, join=False, start_method="spawn")
    deadline = time.monotonic() + WORLD_DEADLINE_S
    while not context.join(timeout=max(0.0, deadline - time.monotonic())):
        if time.monotonic() >= deadline:
            for p in context.processes:
                if p.is_alive():
                    p.kill()
            pytest.fail(f"the world of {world} processes ({backend}) did not finish within {WORLD_DEADLINE_S} s")


def _write(out_dir: str, rank: int, result: dict) -> None:
    path = os.path.join(out_dir, f"rank{rank}.json")
    with open(path + ".tmp", "w") as f:
        json.dump(result, f)
    os.replace(path + ".tmp", path)


def _read(out_dir: str, world: int) -> list[dict]:
    results = []
    for rank in range(world):
        with open(os.path.join(out_dir, f"rank{rank}.json")) as f:
            results.append(json.load(f))
    return results


# --- workers (module level: spawned processes import them) -----------------------------------------------------------

def _device(backend: str, rank: int) -> torch.device:
    return torch.device("cuda", rank) if backend == "nccl" else torch.device("cpu")


def _train_ddp_against_eager(rank, world, backend, name, out_dir):
    """STEPS SGD steps of eager DDP and compiled DDP from the same weights on this rank's own batches: equal losses and
    (all-reduced) gradients each step; the graphs hipinductor compiled, and the step times."""
    from torch.nn.parallel import DistributedDataParallel as DDP

    device = _device(backend, rank)
    make, shape = MODELS[name]
    torch.manual_seed(0)
    model = make().to(device)
    ids = [rank] if device.type == "cuda" else None
    eager = DDP(copy.deepcopy(model), device_ids=ids, bucket_cap_mb=BUCKET_CAP_MB)
    compiled_ddp = DDP(copy.deepcopy(model), device_ids=ids, bucket_cap_mb=BUCKET_CAP_MB)
    compiled = torch.compile(compiled_ddp, backend="hipinductor")
    opt_e = torch.optim.SGD(eager.parameters(), lr=0.05)
    opt_c = torch.optim.SGD(compiled_ddp.parameters(), lr=0.05)
    gen = torch.Generator().manual_seed(1 + rank)  # each rank its own data: the all-reduce changes the gradients
    times = {"eager": [], "compiled": []}
    graphs_after_first_step = None
    for step in range(STEPS):
        x = torch.randn(shape, generator=gen).to(device)
        losses = {}
        for kind, fn, opt in (("eager", eager, opt_e), ("compiled", compiled, opt_c)):
            opt.zero_grad(set_to_none=True)
            start = time.perf_counter()
            loss = fn(x).square().mean()
            loss.backward()
            if device.type == "cuda":
                torch.cuda.synchronize(device)
            times[kind].append(time.perf_counter() - start)
            losses[kind] = loss.detach()
        torch.testing.assert_close(losses["compiled"], losses["eager"], rtol=1e-4, atol=1e-5)
        for (pname, pe), pc in zip(eager.module.named_parameters(), compiled_ddp.module.parameters()):
            torch.testing.assert_close(pc.grad, pe.grad, rtol=1e-3, atol=1e-5, msg=lambda m: f"{pname}: {m}")
        opt_e.step()
        opt_c.step()
        if step == 0:
            graphs_after_first_step = len(hipinductor.reports())
    reports = hipinductor.reports()
    _write(out_dir, rank, {
        "graphs": {kind: sum(r["name"].startswith(kind) for r in reports) for kind in ("forward", "backward")},
        "graphs_after_first_step": graphs_after_first_step,
        "graphs_total": len(reports),
        "ops_lowered": sorted({op for r in reports for op in r["ops_lowered"]}),
        "kernels_per_graph": [r["kernels"] for r in reports],
        "eager_reasons": [r["eager_reason"] for r in reports if r["eager_reason"]],
        "step_s": {kind: statistics.median(t[1:]) for kind, t in times.items()},
    })


def _collectives_in_a_graph(rank, world, backend, out_dir):
    """A compiled function holding functional collectives: the second all-reduce reads only the input, so a schedule
    that moved eager ops as early as their inputs allow would issue it first."""
    import torch.distributed._functional_collectives as funcol

    group = dist.group.WORLD

    def f(x):
        a = torch.relu(x) * 2
        b = funcol.all_reduce(a, "sum", group)
        c = funcol.all_reduce(x, "max", group)
        return torch.sigmoid(b) + c * a

    device = _device(backend, rank)
    compiled = torch.compile(f, backend="hipinductor")
    x = torch.randn(64, 32, generator=torch.Generator().manual_seed(1 + rank)).to(device)
    want = f(x)
    for _ in range(2):  # the general path, then the fast path
        torch.testing.assert_close(compiled(x), want)
    (graph,) = list(hipinductor.reporting.live_graphs)
    in_graph_order = [n.name for n in graph.gm.graph.nodes if n.op == "call_function" and is_collective(n)]
    in_step_order = [s.name for s in graph.steps if not isinstance(s, Segment) and is_collective(s)]
    in_segments = [n.name for s in graph.steps if isinstance(s, Segment) for n in s.nodes if is_collective(n)]
    report = hipinductor.reports()[-1]
    _write(out_dir, rank, {"in_graph_order": in_graph_order, "in_step_order": in_step_order,
                           "in_segments": in_segments, "collectives": report["collectives"],
                           "ops_lowered": report["ops_lowered"], "kernels": report["kernels"]})


def _train_fsdp_against_eager(rank, world, backend, name, out_dir):
    """STEPS SGD steps of eager FSDP2 and compiled FSDP2 (each layer sharded, then the root) from the same weights:
    equal losses and gradients (gathered from their shards) each step."""
    try:
        from torch.distributed.fsdp import fully_shard
    except ImportError:  # PyTorch before 2.6 has it only here
        from torch.distributed._composable.fsdp import fully_shard

    device = _device(backend, rank)
    make, shape = MODELS[name]
    torch.manual_seed(0)
    model = make().to(device)
    eager, sharded = copy.deepcopy(model), copy.deepcopy(model)
    for m in (eager, sharded):
        for child in m.children():
            if any(True for _ in child.parameters()):
                fully_shard(child)
        fully_shard(m)
    compiled = torch.compile(sharded, backend="hipinductor")
    opt_e = torch.optim.SGD(eager.parameters(), lr=0.05)
    opt_c = torch.optim.SGD(sharded.parameters(), lr=0.05)
    gen = torch.Generator().manual_seed(1 + rank)
    for _ in range(STEPS):
        x = torch.randn(shape, generator=gen).to(device)
        losses = {}
        for kind, fn, opt in (("eager", eager, opt_e), ("compiled", compiled, opt_c)):
            opt.zero_grad(set_to_none=True)
            loss = fn(x).square().mean()
            loss.backward()
            losses[kind] = loss.detach()
        torch.testing.assert_close(losses["compiled"], losses["eager"], rtol=1e-4, atol=1e-5)
        for (pname, pe), pc in zip(eager.named_parameters(), sharded.parameters()):
            torch.testing.assert_close(pc.grad.full_tensor(), pe.grad.full_tensor(), rtol=1e-3, atol=1e-5,
                                       msg=lambda m: f"{pname}: {m}")
        opt_e.step()
        opt_c.step()
    reports = hipinductor.reports()
    _write(out_dir, rank, {
        "graphs_total": len(reports),
        "ops_lowered": sorted({op for r in reports for op in r["ops_lowered"]}),
        "collectives": sorted({op for r in reports for op in r["collectives"]}),
        "kernels": sum(r["kernels"] for r in reports),
        "eager_reasons": [r["eager_reason"] for r in reports if r["eager_reason"]],
    })


def _check_ddp(results: list[dict], label: str) -> None:
    for r in results:
        # dynamo's DDP optimizer split the forward at buckets, each piece compiled by hipinductor (its report), with
        # kernels of its own, and nothing compiled again after the first step.
        assert r["graphs"]["forward"] >= 2 and r["graphs"]["backward"] >= 2, r
        assert r["graphs_total"] == r["graphs_after_first_step"], r
        assert all(k > 0 for k in r["kernels_per_graph"]), r
        assert not r["eager_reasons"], r
        assert not [op for op in r["ops_lowered"] if "c10d" in op], r
    times = results[0]["step_s"]
    print(f"\n{label}: median step (forward + backward) eager DDP {times['eager'] * 1e3:.1f} ms, compiled DDP "
          f"{times['compiled'] * 1e3:.1f} ms; graphs {results[0]['graphs']}")


# --- CPU: gloo, two processes ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(MODELS))
def test_ddp_on_gloo_trains_like_eager_ddp_with_graphs_split_at_buckets(name, tmp_path):
    run_world(2, "gloo", _train_ddp_against_eager, str(tmp_path), name)
    _check_ddp(_read(str(tmp_path), 2), f"{name}, 2 processes, gloo, cpu")


def test_collectives_in_a_graph_run_eagerly_in_graph_order(tmp_path):
    run_world(2, "gloo", _collectives_in_a_graph, str(tmp_path))
    for r in _read(str(tmp_path), 2):
        assert len(r["in_graph_order"]) == 4, r  # two all-reduces and their waits
        assert r["in_step_order"] == r["in_graph_order"], r
        assert not r["in_segments"], r
        assert {"_c10d_functional.all_reduce.default", "_c10d_functional.wait_tensor.default"} <= set(
            r["collectives"]), r
        assert r["kernels"] > 0 and not [op for op in r["ops_lowered"] if "c10d" in op], r


# --- a collective runs once per call, whatever the compiler does -----------------------------------------------------

_counted_calls = [0]


@torch.library.custom_op("hipinductor_test::counted", mutates_args=())
def _counted(x: torch.Tensor) -> torch.Tensor:
    """Stands for a collective: an op without a lowering that must run once per call of the graph."""
    _counted_calls[0] += 1
    return x * 3


@_counted.register_fake
def _(x):
    return torch.empty_like(x)


def _f(x):
    return torch.cos(_counted(torch.sin(x)))


def _fail_compiling_cos(monkeypatch, make_error):
    """The segment holding cos (after the eager step) fails to compile."""
    from hipinductor import executor

    original = executor.compile_segment

    def compile_segment(seg, *args, **kwargs):
        cos = [n for n in seg.nodes if "cos" in str(n.target)]
        if cos:
            raise make_error(cos[0])
        return original(seg, *args, **kwargs)

    monkeypatch.setattr(executor, "compile_segment", compile_segment)


def test_a_rejected_segment_does_not_run_the_eager_steps_before_it_again(monkeypatch):
    from hipinductor.partition import Reject

    _fail_compiling_cos(monkeypatch, lambda node: Reject(node, "rejected by the test", recoverable=True))
    x = torch.randn(8, 16)
    compiled = torch.compile(_f, backend="hipinductor")
    _counted_calls[0] = 0
    torch.testing.assert_close(compiled(x), torch.cos(torch.sin(x) * 3))
    assert _counted_calls[0] == 1, "the retry after the rejection ran the eager step again"
    assert "aten.cos.default" in hipinductor.reports()[-1]["fallback_ops"]


def test_a_graph_falling_back_to_eager_mid_call_does_not_run_eager_steps_again(monkeypatch):
    _fail_compiling_cos(monkeypatch, lambda node: RuntimeError("a compiler fault raised by the test"))
    x = torch.randn(8, 16)
    compiled = torch.compile(_f, backend="hipinductor", options={"strict": False})
    _counted_calls[0] = 0
    torch.testing.assert_close(compiled(x), torch.cos(torch.sin(x) * 3))
    assert _counted_calls[0] == 1, "the eager fallback ran the eager step again"
    assert "a compiler fault raised by the test" in hipinductor.reports()[-1]["eager_reason"]
    torch.testing.assert_close(compiled(x), torch.cos(torch.sin(x) * 3))
    assert _counted_calls[0] == 2


# --- GPU: NCCL (the GPU machine) -------------------------------------------------------------------------------------

def _check_fsdp(results: list[dict], label: str) -> None:
    for r in results:
        assert r["graphs_total"] >= 2 and r["kernels"] > 0, r
        assert not r["eager_reasons"], r
        assert not [op for op in r["ops_lowered"] if "c10d" in op], r
    print(f"\n{label}: {results[0]['graphs_total']} graphs; collectives in them: {results[0]['collectives']}")


@_gpu
@pytest.mark.parametrize("name", sorted(MODELS))
def test_ddp_on_nccl_world_of_one_trains_like_eager_ddp(name, tmp_path):
    run_world(1, "nccl", _train_ddp_against_eager, str(tmp_path), name)
    _check_ddp(_read(str(tmp_path), 1), f"{name}, 1 GPU, nccl")


@_gpu
@pytest.mark.parametrize("name", sorted(MODELS))
def test_fsdp2_on_nccl_world_of_one_trains_like_eager_fsdp2(name, tmp_path):
    run_world(1, "nccl", _train_fsdp_against_eager, str(tmp_path), name)
    _check_fsdp(_read(str(tmp_path), 1), f"FSDP2 {name}, 1 GPU, nccl")


@_gpus
@pytest.mark.parametrize("name", sorted(MODELS))
def test_ddp_on_nccl_every_gpu_trains_like_eager_ddp(name, tmp_path):
    world = torch.cuda.device_count()
    run_world(world, "nccl", _train_ddp_against_eager, str(tmp_path), name)
    _check_ddp(_read(str(tmp_path), world), f"{name}, {world} GPUs, nccl")


@_gpus
@pytest.mark.parametrize("name", sorted(MODELS))
def test_fsdp2_on_nccl_every_gpu_trains_like_eager_fsdp2(name, tmp_path):
    world = torch.cuda.device_count()
    run_world(world, "nccl", _train_fsdp_against_eager, str(tmp_path), name)
    _check_fsdp(_read(str(tmp_path), world), f"FSDP2 {name}, {world} GPUs, nccl")


@_gpu
def test_collectives_in_a_graph_on_nccl_run_eagerly_in_graph_order(tmp_path):
    run_world(1, "nccl", _collectives_in_a_graph, str(tmp_path))
    for r in _read(str(tmp_path), 1):
        assert r["in_step_order"] == r["in_graph_order"] and len(r["in_graph_order"]) == 4, r
        assert not r["in_segments"], r
