"""What hipinductor tells about the graphs it compiled: one Report per ATen graph and the process-wide list of them
(hipinductor.reports()), the hardware facts of the kernels of graphs still alive (hipinductor.kernel_facts()), and
the debug dump of each graph's ATen graph and plan (HIPINDUCTOR_DEBUG_DIR/<graph>/aten_graph.txt).
"""

from __future__ import annotations

import os
import threading
import weakref

import torch.fx as fx

from .nodes import op_name
from .partition import Segment


class Report(dict):
    """Per-graph facts: ops_lowered, fallback_ops, kernels, compile_ms, cache_hits, ... (a plain dict)."""

    @classmethod
    def new(cls, name: str) -> "Report":
        """The report of a graph about to be built: every key, nothing counted yet."""
        return cls(
            name=name, ops_lowered=[], fallback_ops=[], kernels=0, compile_ms=0.0, cache_hits=0,
            segments=0, eager_reason=None, workspace_bytes=0, eager_views=[], eager_empty=[], collectives=[],
            early_compiles=0, shared_compiles=0, build_ms=0.0, first_call_ms=None, gemm_epilogues=0,
            empty_cat_inputs=0, channels_last_convs=0, cuda_graphs=False, cuda_graphs_reason=None, symbolic_dims=[],
            compiles=0, symbolic_compiles=0, variant_compiles=0, stand_in_compiles=0, recompiles=0,
            recompile_reasons={}, symbolic_fallbacks={}, call_path_compiles=0, call_path_waits=0, stand_in_calls=0,
            index32_launches=0, index64_launches=0)


_reports: list[dict] = []
_reports_lock = threading.Lock()
#: The compiled graphs not yet collected (graph_module.CompiledFxGraph), for kernel_facts() and tests.
live_graphs: "weakref.WeakSet" = weakref.WeakSet()


def register(graph) -> None:
    """Records a compiled graph: its report in reports(), itself (weakly) for kernel_facts()."""
    with _reports_lock:
        _reports.append(graph.report)
        live_graphs.add(graph)


def reports() -> list[dict]:
    """One dict per compiled ATen graph (forward, backward, inference), oldest first: ops_lowered, fallback_ops,
    kernels, compile_ms, cache_hits, segments, workspace_bytes, eager_reason, collectives (the collective ops of the
    graph, run eagerly in its order), early_compiles (segments whose compile
    started when the graph was built, from its traced layouts, and was taken at the first call), shared_compiles
    (those of them that took another segment's compiled graph: the same code but for node names, as a model's
    repeated layers give), build_ms (building the graph: partition and starting those compiles), first_call_ms
    (its first run, waiting for them; None before it), and with mode="reduce-overhead" cuda_graphs (whether calls
    replay a CUDA/HIP graph) and cuda_graphs_reason (why not, when not). compile_ms sums each segment's share of lowering, codegen
    and compiler time (or of the cache lookup that replaced them); a graph's segments compile in one compiler call.

    Compiles and dynamic shapes: symbolic_dims (the graph inputs' dims dynamo made symbolic, as "input.size(d)=s0"),
    compiles (compiled graphs made for the graph's segments, cache hits included), symbolic_compiles (those of them
    compiled once for every size), variant_compiles (those of them for other symbols whose values are multiples of
    16 than the segment's first: Options.divisibility_variants, chosen per call, not recompiles), stand_in_compiles
    (those of them compiled for any alignment and size ahead of need, taken to run a call whose own variant was still
    compiling in the background), stand_in_calls (segment runs on such a stand-in), index32_launches and
    index64_launches (segment runs at a new size or layout on a symbolic compile indexing in 32 bits, or in 64: the
    latter where the call's extents need it, or on a stand-in), call_path_compiles (compiles run
    on a call's path, neither started when the graph was built nor in the background: a symbolic graph's are its
    segments' first compiles; any later one is a size that cost a compile), call_path_waits (times a call waited
    for a compile started earlier because nothing compiled served it yet), recompiles
    (compiles of a segment that had one already, for a guard it failed) and recompile_reasons
    (reason -> count: the guard the earlier compiles failed: a new layout, alignment, or why a segment of a graph
    with symbolic sizes compiles per size), symbolic_fallbacks (segment -> why it compiles per size: the core's
    error, or a value the graph format holds only evaluated)."""
    with _reports_lock:
        return [{k: (dict(v) if isinstance(v, dict) else list(v) if isinstance(v, list) else v) for k, v in r.items()}
                for r in _reports]


def clear_reports() -> None:
    with _reports_lock:
        _reports.clear()


def kernel_facts() -> list[dict]:
    """Hardware facts of each kernel of the compiled graphs still alive: registers, static_shared_bytes, local_bytes
    (spills), max_threads_per_block, plus 'graph' and 'segment'. AMD kernels: from the code object (comgr), always;
    NVIDIA kernels: from the driver, once the segment has run."""
    with _reports_lock:
        graphs = list(live_graphs)
    out = []
    seen = set()  # segments of repeated layers share one compiled graph
    for g in graphs:
        for step in g.steps:
            if isinstance(step, Segment):
                for cg in step.compiled.values():
                    if id(cg) not in seen:
                        seen.add(id(cg))
                        out.extend(dict(f, graph=g.name, segment=cg.name) for f in cg.kernel_facts)
    return out


def dump_aten_graph(debug_dir: str, name: str, gm: fx.GraphModule, steps: list) -> None:
    """debug_dir/<name>/aten_graph.txt: the ATen graph as AOTAutograd handed it over, and the plan (`steps`)."""
    folder = os.path.join(debug_dir, name)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "aten_graph.txt"), "w") as f:
        f.write(gm.print_readable(print_output=False))
        f.write("\n# plan: segments (compiled) and eager steps, in order\n")
        for i, step in enumerate(steps):
            if isinstance(step, Segment):
                f.write(f"segment s{i}: {' '.join(n.name for n in step.nodes)}\n")
            else:
                f.write(f"eager {step.name}: {op_name(step)}\n")
