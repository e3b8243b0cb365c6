"""mode="reduce-overhead" (option `cuda_graphs`): each compiled graph's work, hipinductor's kernels and the eager steps
between them, captured into a CUDA graph (a HIP graph on ROCm: torch.cuda.CUDAGraph is both) and replayed per call.

The capture and replay are Inductor's CUDA graph trees (torch._inductor.cudagraph_trees, through compile_fx's
cudagraphify), so the semantics are the ones Inductor's users know: the module's parameters and buffers (and a
backward graph's saved values) are used in place, other inputs are copied into static buffers, the forward and
backward graphs share one private memory pool, a graph runs once without capture before it is recorded, a new input
size records again, and outputs stay valid until the next replay (reading one that a later replay overwrote raises
Inductor's error; torch.compiler.cudagraph_mark_step_begin() starts a new iteration). hipinductor's launches are
capturable as they are: they go to PyTorch's current stream (the tree's capture stream during recording), take their
workspaces from PyTorch's allocator (the tree's pool) and never synchronise with the host; segments compile during the
first, uncaptured run.

A graph that cannot be captured runs as without the mode; why goes to its report (`cuda_graphs_reason`) and a warning
once per reason.
"""

from __future__ import annotations

import logging
import threading

import torch
import torch.fx as fx

from .nodes import op_name

log = logging.getLogger("hipinductor")

#: What `mode=` accepts; "default" and None are the same.
SUPPORTED_MODES = ("default", "reduce-overhead")

#: Sizes of a graph with symbolic sizes recorded at most; a call with another size runs without capture. Each
#: recorded size keeps its own graph and outputs in the pool, so an unbounded stream of sizes (serving traffic) would
#: grow memory without end. Inductor warns past its cudagraph_dynamic_shape_warn_limit (50 by default) and keeps
#: recording; the cap follows that setting where PyTorch has it, so users tune both with one knob.
DEFAULT_MAX_RECORDED_SIZES = 50


def max_recorded_sizes() -> int:
    try:
        from torch._inductor import config

        limit = getattr(config.triton, "cudagraph_dynamic_shape_warn_limit", None)
    except ImportError:
        limit = None
    return limit if isinstance(limit, int) and limit > 0 else DEFAULT_MAX_RECORDED_SIZES


_warned: set = set()
_warned_lock = threading.Lock()


def check_mode(mode) -> bool:
    """Whether `mode` (torch.compile's argument) asks for CUDA graphs; ValueError for a mode hipinductor lacks."""
    if mode is None or mode == "default":
        return False
    if mode == "reduce-overhead":
        return True
    raise ValueError(f"hipinductor: unsupported mode {mode!r}; supported modes: "
                     f"{', '.join(repr(m) for m in SUPPORTED_MODES)}")


def capture_blocker(gm: fx.GraphModule, example_inputs) -> str | None:
    """Why the graph cannot be captured into a CUDA graph, or None when it can."""
    devices = {t.device for t in example_inputs if isinstance(t, torch.Tensor)}
    for n in gm.graph.nodes:
        val = n.meta.get("val")
        if isinstance(val, torch.Tensor):
            devices.add(val.device)
    if any(d.type != "cuda" for d in devices):
        kinds = sorted({d.type for d in devices if d.type != "cuda"})
        return f"tensors on {', '.join(kinds)} (CUDA/HIP graphs capture GPU work only)"
    if not devices:
        return "no GPU tensors"
    if len(devices) > 1:
        return f"tensors on {len(devices)} GPUs (a CUDA/HIP graph captures one device)"
    for n in gm.graph.nodes:
        if n.op != "call_function" or not isinstance(n.target, torch._ops.OpOverload):
            continue
        tags = n.target.tags
        if torch.Tag.data_dependent_output in tags or torch.Tag.dynamic_output_shape in tags:
            return f"{op_name(n)} ({n.name}) reads tensor values on the host, which a captured graph cannot replay"
        if n.target._schema.is_mutable:
            return f"{op_name(n)} ({n.name}) mutates a tensor in place, which replaying the graph would repeat"
    return None


def _static_indices(gm: fx.GraphModule, kind: str, static_inputs: tuple[int, ...]) -> list[int]:
    """Inputs used in place rather than copied: the module's parameters and buffers for forward and inference graphs
    (AOTAutograd's static_input_indices), every input but the incoming gradients for a backward graph (its saved
    values come from the forward graph's recording), as Inductor takes them."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    if kind == "backward":
        return [i for i, n in enumerate(placeholders) if "tangents" not in n.name]
    return sorted(i for i in static_inputs if 0 <= i < len(placeholders))


def boxed(compiled):
    """`compiled` in AOTAutograd's boxed convention, clearing the argument list as Inductor's graphs do (CUDA graph
    trees check that a recorded function released its inputs)."""

    def run(args):
        values = list(args)
        args.clear()
        return compiled(*values)

    run._boxed_call = True
    return run


def _warn_once(reason: str) -> None:
    with _warned_lock:
        if reason in _warned:
            return
        _warned.add(reason)
    log.warning("hipinductor: mode='reduce-overhead': a graph runs without CUDA graphs: %s", reason)


def wrap(compiled, gm: fx.GraphModule, example_inputs, kind: str, static_inputs: tuple[int, ...], report: dict):
    """The boxed callable AOTAutograd gets for `compiled`: replayed through CUDA graph trees when the graph can be
    captured, else `compiled` as it is (report['cuda_graphs_reason'] says why)."""
    reason = capture_blocker(gm, example_inputs)
    cudagraphify = None
    if reason is None:
        try:
            from torch._inductor.compile_fx import cudagraphify
        except ImportError:
            reason = "this PyTorch has no CUDA graph trees (torch._inductor.compile_fx.cudagraphify)"
    if reason is not None:
        report["cuda_graphs"] = False
        report["cuda_graphs_reason"] = reason
        _warn_once(reason)
        return boxed(compiled)
    device = next(t.device for t in example_inputs if isinstance(t, torch.Tensor))
    outputs = next(n for n in gm.graph.nodes if n.op == "output").args[0]
    stack_traces = [a.meta.get("stack_trace") if isinstance(a, fx.Node) else None
                    for a in (outputs if isinstance(outputs, (list, tuple)) else [outputs])]
    uncaptured = boxed(compiled)
    replay = cudagraphify(uncaptured, _static_indices(gm, kind, static_inputs),
                          device_index=device.index if device.index is not None else torch.cuda.current_device(),
                          stack_traces=stack_traces, is_backward=kind == "backward", is_inference=kind == "inference")
    report["cuda_graphs"] = True
    report["cuda_graphs_reason"] = None
    if not any(isinstance(n.meta.get("val"), torch.SymInt) for n in gm.graph.nodes if n.op == "placeholder"):
        replay._boxed_call = True  # it takes the argument list, as Inductor's compiled graphs do
        return replay
    # Symbolic sizes arrive as int arguments; the trees record once per distinct set of them, up to the cap.
    sizes: set = set()
    cap = max_recorded_sizes()

    def run(args):
        key = tuple(a for a in args if isinstance(a, int))
        if key not in sizes:
            if len(sizes) >= cap:
                reason = f"more than {cap} input sizes (each recorded size keeps its own graph and memory)"
                report["cuda_graphs_reason"] = reason
                _warn_once(reason)
                return uncaptured(args)
            sizes.add(key)
        return replay(args)

    run._boxed_call = True
    return run
