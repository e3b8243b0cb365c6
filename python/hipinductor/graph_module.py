"""Compiling one ATen FX graph (a forward or backward graph from AOTAutograd) into hipinductor kernels.

CompiledFxGraph wires the steps together: the graph passes (passes/), the partition into segments and eager steps
(partition.py), the debug dump of the plan (reporting.py) and the early compiles of the segments (compile_jobs.py);
calling it runs the graph (executor.py), through a fast path per input layout once one is written (fast_path.py).
Segments of a static graph are compiled specialised to the concrete sizes, strides and storage offsets of the tensors
they receive, and cached per layout; those of a graph with symbolic sizes are compiled once for every size (their
symbols bound per call), or, where the core cannot, per size as a static graph's.
"""

from __future__ import annotations

import time

import torch
import torch.fx as fx

from .compile_jobs import start_compiles
from .executor import Executor
from .nodes import has_symbols
from .options import Options
from .passes.channels_last import channels_last_convs
from .passes.empty_cat_inputs import drop_empty_cat_inputs
from .passes.gemm_epilogue import fuse_gemm_activations
from .reporting import Report, dump_aten_graph


class CompiledFxGraph(Executor):
    """The callable handed back to AOTAutograd for one ATen graph."""

    def __init__(self, gm: fx.GraphModule, options: Options, kind: str, index: int,
                 static_inputs: tuple[int, ...] = ()):
        start = time.perf_counter()
        name = f"{kind}_{index}"
        report = Report.new(name)
        for n in gm.graph.nodes:  # AOTAutograd gives lifted constants no "val": their own tensor tells the same
            if (n.op == "get_attr" and not isinstance(n.meta.get("val"), torch.Tensor)
                    and isinstance(getattr(gm, n.target, None), torch.Tensor)):
                n.meta["val"] = getattr(gm, n.target)
        report["empty_cat_inputs"] = drop_empty_cat_inputs(gm)
        if options.gemm_epilogue:
            report["gemm_epilogues"] = fuse_gemm_activations(gm)
        if options.channels_last_convs and kind == "inference":
            report["channels_last_convs"] = channels_last_convs(gm)
        super().__init__(gm, options, name, report)
        self.symbolic = any(has_symbols(n.meta.get("val")) for n in self.placeholders)
        report["symbolic_dims"] = symbolic_dims(self.placeholders)
        # HIPINDUCTOR_CHECK needs the general path. A fast path is written per input layout, which fixes the
        # symbols' values too (the sizes of the inputs and the ints dynamo passes are in its key).
        self.fast_paths_apply = not options.check
        # The inputs whose layouts select the fast path: all but the module's parameters and buffers, whose layouts
        # dynamo's guards check (ResNet-50: 1 input of 268; the key costs about 0.3 us per input and call). The static
        # indices name a forward graph's inputs: a backward graph's (saved values, gradients) are all keyed.
        static = {i for i in static_inputs if kind != "backward" and 0 <= i < len(self.placeholders)
                  and isinstance(self.placeholders[i].meta.get("val"), torch.Tensor)}
        self.key_inputs = [i for i in range(len(self.placeholders)) if i not in static] if static else None
        self.plan()
        if options.debug_dir:
            dump_aten_graph(options.debug_dir, self.name, gm, self.steps)
        # Compiles for the layouts the traced graph predicts (or for every size), started now: the first call then
        # mostly waits for compiles under way.
        if self.graph_eager_reason is None:
            start_compiles(self.steps, self.name, options, symbolic=self.symbolic)
        report["build_ms"] = (time.perf_counter() - start) * 1000.0


def symbolic_dims(placeholders: list[fx.Node]) -> list[str]:
    """The graph inputs' symbolic sizes, as "input.size(d)=EXPR", and symbolic int inputs, as "input=EXPR"."""
    out = []
    for n in placeholders:
        val = n.meta.get("val")
        if isinstance(val, torch.Tensor):
            out += [f"{n.name}.size({d})={s}" for d, s in enumerate(val.shape) if isinstance(s, torch.SymInt)]
        elif isinstance(val, torch.SymInt):
            out.append(f"{n.name}={val}")
    return out
