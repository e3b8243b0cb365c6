#!/usr/bin/env python3
"""mode="reduce-overhead" benchmark (not a test): small-batch decoder inference, where calls are host-bound, and one
large case, where the mode should change nothing. Per case, in one process on one GPU: eager, Inductor and
hipinductor without the mode, and both compilers with mode="reduce-overhead" (CUDA graphs), timed as
bench/run_bench.py times a case (do_bench, best of interleaved rounds) and as 100 back-to-back calls between two
CUDA events, with each variant's max error against eager.

    python3 bench/reduce_overhead.py [--cases gpt2_b1_t16,...] [--rounds 3] [--out bench/results/reduce-overhead-h200.json]

Cases: GPT-2 (4 layers) and LLaMA with grouped-query attention (2 layers, 16 heads sharing 4 key/value heads) from
transformers with random weights, bf16, batch 1-2 and 16-32 tokens; `llama_block_large`, run_bench.py's LLaMA-style
block at its size (4 x 1024 tokens of 2048).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_bench  # noqa: E402  (the benchmark's method and cases)


_LLAMA_GQA = dict(num_hidden_layers=2, hidden_size=2048, intermediate_size=5632, num_attention_heads=16,
                  num_key_value_heads=4, vocab_size=32000)
CASES = {
    "gpt2_b1_t16": lambda: run_bench._hf("GPT2Config", "GPT2Model", 50257, (1, 16), n_layer=4),
    "gpt2_b2_t32": lambda: run_bench._hf("GPT2Config", "GPT2Model", 50257, (2, 32), n_layer=4),
    "llama_gqa_b1_t16": lambda: run_bench._hf("LlamaConfig", "LlamaModel", 32000, (1, 16), **_LLAMA_GQA),
    "llama_gqa_b2_t32": lambda: run_bench._hf("LlamaConfig", "LlamaModel", 32000, (2, 32), **_LLAMA_GQA),
    "llama_block_large": run_bench.MODELS["llama_block"],
}

VARIANTS = {  # name -> torch.compile arguments (None: eager)
    "eager": None,
    "inductor": {},
    "inductor_reduce_overhead": {"mode": "reduce-overhead"},
    "hipinductor": {"backend": "hipinductor"},
    "hipinductor_reduce_overhead": {"backend": "hipinductor", "mode": "reduce-overhead"},
}


def make(name):
    """The case's model in bf16 on the GPU, in eval mode, and its inputs (as run_bench.make_case makes them)."""
    torch.manual_seed(0)
    model, args = CASES[name]()
    model = model.to(run_bench.DEV, torch.bfloat16).eval()
    return model, [a.to(run_bench.DEV, torch.bfloat16 if a.is_floating_point() else a.dtype) for a in args]


def run_case(name, rounds):
    import hipinductor

    model, args = make(name)
    row = {}
    with torch.no_grad():
        ref = run_bench.main_tensor(model(*args)).float()
        fns = {}
        for variant, kwargs in VARIANTS.items():
            if kwargs is None:
                fns[variant] = model
                continue
            torch._dynamo.reset()
            hipinductor.clear_reports()
            fn = torch.compile(model, **kwargs)
            row[f"{variant}_cold_compile_s"], out = run_bench.first_call_s(fn, args)
            for _ in range(3):  # CUDA graph trees: a warm-up run, then the recording, then replays
                out = fn(*args)
            row[f"{variant}_max_abs_err_vs_eager"] = (run_bench.main_tensor(out).float() - ref).abs().max().item()
            if variant.startswith("hipinductor"):
                reports = hipinductor.reports()
                row[f"{variant}_cuda_graphs"] = [r["cuda_graphs"] for r in reports]
                row[f"{variant}_cuda_graphs_reason"] = sorted({r["cuda_graphs_reason"] for r in reports
                                                               if r["cuda_graphs_reason"]})
            fns[variant] = fn
        # Two measures per round: do_bench's (an L2 flush before each call, as run_bench.py) and back-to-back calls
        # between two events (no flush: the host's cost per call shows when it exceeds the GPU's, as in serving).
        times = {k: [] for k in fns}
        back_to_back = {k: [] for k in fns}
        names = list(fns)
        for i in range(rounds):
            for k in names[i % len(names):] + names[:i % len(names)]:
                times[k].append(run_bench.bench(fns[k], args))
                back_to_back[k].append(run_bench.events_ms(fns[k], args, calls=100))
        for k in names:
            row[f"{k}_ms"] = min(times[k])
            row[f"{k}_ms_rounds"] = times[k]
            row[f"{k}_back_to_back_ms"] = min(back_to_back[k])
            row[f"{k}_back_to_back_ms_rounds"] = back_to_back[k]
    for suffix in ("ms", "back_to_back_ms"):
        row[f"speedup_vs_inductor_reduce_overhead_{suffix}"] = (row[f"inductor_reduce_overhead_{suffix}"] /
                                                                 row[f"hipinductor_reduce_overhead_{suffix}"])
    row["reduce_overhead_speedup_hipinductor"] = row["hipinductor_ms"] / row["hipinductor_reduce_overhead_ms"]
    return row


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", help="comma-separated case names (default: all)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", help="JSON file for the results")
    args = parser.parse_args()
    names = args.cases.split(",") if args.cases else list(CASES)
    unknown = [n for n in names if n not in CASES]
    if unknown:
        parser.error(f"unknown case {unknown[0]!r} (cases: {', '.join(CASES)})")
    results = {"gpu": torch.cuda.get_device_name(), "date": datetime.date.today().isoformat(),
               "commit": run_bench.source_commit(), "torch": torch.__version__, "rounds": args.rounds, "cases": {}}
    for name in names:
        try:
            row = run_case(name, args.rounds)
        except Exception as e:  # noqa: BLE001 - a failing case is a result, not the end of the run
            row = {"error": f"{type(e).__name__}: {str(e)[:400]}"}
        results["cases"][name] = row
        short = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items() if not k.endswith("rounds")}
        print(name, json.dumps(short), flush=True)
    if args.out:
        run_bench.write_results(args.out, results)


if __name__ == "__main__":
    main()
