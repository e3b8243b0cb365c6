"""The per-call fast path of a compiled graph: once a call with some input layout has run through the general path
(which compiles segments and prepares their launches), the same steps are written out as one straight-line Python
function for that layout, as Inductor's wrapper code is: eager ops called directly, segment outputs allocated and
kernels launched with their layouts and storage-offset corrections as constants, no per-step lookups, and values
deleted after their last use.

What the function assumes is checked where it can change: the graph inputs' layouts select the function (the
caller's key), and before each segment the layouts of inputs that eager ops produced are compared with those its
kernels were compiled for; a difference runs that segment through the general path (which compiles for the new
layout), so the function is never wrong, only slower. Segment outputs always have the layout the graph's metadata
gives them, whatever path produced them.
"""

from __future__ import annotations

import math
import operator
from typing import Any, Callable

import torch
import torch.fx as fx

from .devices import ALIGN, current_stream
from .linear_folding import fold_linear_layers
from .nodes import is_view
from .partition import Segment


class _Writer:
    def __init__(self):
        self.lines: list[str] = []
        self.globals: dict[str, Any] = {}
        self.names: dict[fx.Node, str] = {}

    def bind(self, prefix: str, value) -> str:
        name = f"{prefix}{len(self.globals)}"
        self.globals[name] = value
        return name

    def expr(self, a) -> str:
        """Python source for an argument: a value of the run, a literal, or a bound constant."""
        if isinstance(a, fx.Node):
            return self.names[a]
        if isinstance(a, (list, tuple)):
            parts = [self.expr(x) for x in a]
            if isinstance(a, tuple):
                return "(" + "".join(p + ", " for p in parts) + ")"
            return "[" + ", ".join(parts) + "]"
        if a is None or isinstance(a, (bool, int, str)):
            return repr(a)
        if isinstance(a, float) and math.isfinite(a):
            return repr(a)
        return self.bind("k", a)


def layouts_of(env: dict) -> dict:
    """What the recording call's values were: node -> (sizes, strides, storage offset, dtype, storage address)."""
    out = {}
    for n, v in env.items():
        if isinstance(v, torch.Tensor):
            out[n] = (tuple(v.size()), tuple(v.stride()), v.storage_offset(), v.dtype, v.untyped_storage().data_ptr())
    return out


def build(graph, launches: dict, layouts: dict, symbols: dict | None = None) -> Callable | None:
    """The straight-line function for the layout a general-path call had on `graph` (an executor.Executor: its
    steps, placeholders, constants, output, gm, name and run_segment), `launches` maps id(segment) to the launch
    it ran, `layouts` (layouts_of) its values, `symbols` the values it bound to the graph's size symbols (which the
    layout fixes: the graph inputs' sizes and int inputs are in the fast path's key). None where the general path
    must stay (a segment ran eagerly, a step the writer does not handle)."""
    symbols = symbols or {}
    w = _Writer()
    steps = graph.steps
    # `layouts` are the values' layouts when the call ended; an op that changes a tensor's sizes, strides or offset
    # in place (set_, resize_, t_, ...) would make them differ from what earlier steps saw.
    if any(isinstance(s, fx.Node) and isinstance(s.target, torch._ops.OpOverload)
           and torch.Tag.inplace_view in s.target.tags for s in steps):
        return None

    linears, folded = fold_linear_layers(steps, launches)
    views = _ViewChains(graph, steps, linears, folded, layouts)
    # Last step reading each value, to delete it there (as Inductor's wrapper does) instead of holding every
    # intermediate until the call returns.
    last_use: dict[fx.Node, int] = {}
    for i, step in enumerate(steps):
        if isinstance(step, Segment):
            reads = step.inputs
        elif step in linears:
            reads = linears[step].reads()
        elif step in folded:
            reads = []
        elif step in views.base:
            reads = [views.base[step]] if step in views.materialized else []
        else:
            reads = step.all_input_nodes
        for n in reads:
            last_use[n] = i
    outputs = set(graph.output.all_input_nodes)
    made_by_segments = {n for s in steps if isinstance(s, Segment) for n in s.outputs}

    params = []
    for i, node in enumerate(graph.placeholders):
        w.names[node] = f"a{i}"
        params.append(f"a{i}")
    for node in graph.constants:
        w.names[node] = w.bind("c", getattr(graph.gm, node.target))
    w.lines.append(f"({''.join(p + ', ' for p in params)}) = args")
    w.lines.append("del args")

    devices: dict[int, int] = {}  # GPU index -> workspace bytes
    for step in steps:
        if isinstance(step, Segment):
            launch = launches.get(id(step))
            if launch is None or launch.compiled is None:
                return None
            if launch.device.type != "cpu":
                idx = launch.device.index or 0
                devices[idx] = max(devices.get(idx, 0), launch.workspace_bytes)
    for idx, ws in devices.items():
        # PyTorch's current stream, asked per call (the caller may have switched streams), through the raw C
        # accessor where PyTorch has one.
        w.globals["stream_of"] = _RAW_STREAM or current_stream
        w.lines.append(f"s{idx} = stream_of({idx})")
        # Segment outputs allocated as Inductor's wrapper allocates its buffers: straight from the caching
        # allocator, without the dispatcher (the current device's), where the call runs on that device.
        if _ALLOC_CURRENT_GPU is not None:
            w.globals.update(alloc_current_gpu=_ALLOC_CURRENT_GPU, current_gpu=_CURRENT_GPU)
            other = w.bind("alloc_on", _allocator_on(torch.device("cuda", idx)))
            w.lines.append(f"e{idx} = alloc_current_gpu if current_gpu() == {idx} else {other}")
        else:
            w.lines.append(f"e{idx} = {w.bind('alloc_on', _allocator_on(torch.device('cuda', idx)))}")
        if ws:
            dev = w.bind("d", torch.device("cuda", idx))
            w.lines.append(f"w{idx} = empty({ws}, dtype=uint8, device={dev})")
            w.lines.append(f"wp{idx} = w{idx}.data_ptr()")
    w.globals.update(empty=torch.empty, uint8=torch.uint8)

    counter = 0
    for i, step in enumerate(steps):
        if isinstance(step, Segment):
            launch = launches[id(step)]
            outs = []
            for n in step.outputs:
                counter += 1
                w.names[n] = f"v{counter}"
                outs.append(f"v{counter}")
            checks, ptrs, to_align = [], [], []
            for n in step.inputs:
                name = w.names[n]
                _, strides, offset, dtype, _ = layouts[n]
                if n.op == "call_function" and n not in made_by_segments:
                    checks.append(f"{name}.stride() == {strides!r} and {name}.storage_offset() == {offset}")
                pointer = f"{name}.data_ptr()"
                if launch.aligned and n.op != "get_attr" and n not in made_by_segments:
                    # Compiled for aligned inputs: checked for values from outside (segment outputs always are).
                    counter += 1
                    pointer = f"p{counter}"
                    w.lines.append(f"{pointer} = {name}.data_ptr()")
                    to_align.append(pointer)
                ptrs.append(f"{pointer} - {offset * dtype.itemsize}" if offset else pointer)
            if to_align:
                checks.append(f"not ({' | '.join(to_align)}) & {ALIGN - 1}")
            general = w.bind("general", _general_runner(graph, step, symbols))
            body = []
            if launch.device.type == "cpu":
                alloc = w.bind("alloc_cpu", _ALLOC_CPU or _allocator_on(launch.device))
            else:
                alloc = f"e{launch.device.index or 0}"
            for name, (sizes, strides, dtype) in zip(outs, launch.outputs):
                body.append(f"{name} = {alloc}({tuple(sizes)!r}, {tuple(strides)!r}, {w.bind('t', dtype)})")
            run = w.bind("run", launch.compiled.run)
            out_ptrs = "[" + ", ".join(f"{o}.data_ptr()" for o in outs) + "]"
            # A compile for every size takes the symbols' values of this layout.
            sizes = f", sizes={w.bind('z', list(launch.sizes))}" if launch.sizes else ""
            if launch.device.type == "cpu":
                body.append(f"{run}([{', '.join(ptrs)}], {out_ptrs}{sizes})")
            else:
                idx = launch.device.index or 0
                wp = f"wp{idx}" if devices.get(idx) else "0"
                body.append(f"{run}([{', '.join(ptrs)}], {out_ptrs}, s{idx}, {wp}, {idx}{sizes})")
            ins = "[" + ", ".join(w.names[n] for n in step.inputs) + "]"
            fallback = f"({''.join(o + ', ' for o in outs)}) = {general}({ins})" if outs else f"{general}({ins})"
            if checks:
                w.lines.append(f"if {' and '.join(checks)}:")
                w.lines.extend("    " + b for b in body)
                w.lines.append("else:")
                w.lines.append("    " + fallback)
            else:
                w.lines.extend(body)
        elif step in folded:
            continue  # computed by the linear call that replaces it
        elif step in views.base:
            if step in views.materialized:  # others are only read by views of the same base
                counter += 1
                name = w.names[step] = f"v{counter}"
                views.write(w, step, name)
        else:
            counter += 1
            name = w.names[step] = f"v{counter}"
            if step in linears:
                w.lines.append(f"{name} = {linears[step].call(w)}")
            elif step.target is operator.getitem:
                src, k = step.args
                w.lines.append(f"{name} = {w.names[src]}[{k!r}]")
            else:
                w.lines.append(f"{name} = {_op_call(w, step, [w.expr(a) for a in step.args])}")
        dead = [w.names[n] for n, last in last_use.items()
                if last == i and n not in outputs and n.op != "get_attr" and n in w.names]
        if dead:
            w.lines.append("del " + ", ".join(dead))
    w.lines.append(f"return {w.expr(graph.output.args[0])}")
    source = "def fast_call(args):\n" + "".join("    " + line + "\n" for line in w.lines)
    namespace = dict(w.globals)
    exec(compile(source, f"<hipinductor fast path {graph.name}>", "exec"), namespace)
    fn = namespace["fast_call"]
    fn.source = source
    return fn


# What Inductor's wrapper code allocates with: empty_strided made in C++, (sizes, strides, dtype), on the CPU or on
# the current GPU.
_GUARDS = getattr(getattr(torch._C, "_dynamo", None), "guards", None)
_ALLOC_CPU = getattr(_GUARDS, "_empty_strided_cpu", None)
_ALLOC_CURRENT_GPU = getattr(_GUARDS, "_empty_strided_cuda", None)
# The current GPU and stream from PyTorch's C accessors, without torch.cuda's Python wrappers (current_device's
# lazy-init check alone is three Python calls). A fast path exists only after a call ran kernels on a GPU, so CUDA
# (or HIP) is initialised in this process by then.
_CURRENT_GPU = getattr(torch._C, "_cuda_getDevice", None) or torch.cuda.current_device
_RAW_STREAM = getattr(torch._C, "_cuda_getCurrentRawStream", None)


def _allocator_on(device: torch.device) -> Callable:
    def alloc(sizes, strides, dtype):
        return torch.empty_strided(sizes, strides, dtype=dtype, device=device)

    return alloc


def _reinterpret_as_strided(base, sizes, strides, offset_increment):  # pragma: no cover - older PyTorch
    return base.as_strided(sizes, strides, base.storage_offset() + offset_increment)


# What Inductor's wrapper code calls: an alias made in C++, its storage offset the base's plus the last argument.
_reinterpret = getattr(_GUARDS, "_reinterpret_tensor", None) or _reinterpret_as_strided

# Views producing a list of views (their getitems are the tensors).
_LIST_VIEWS = ("aten.split.Tensor", "aten.split_with_sizes.default", "aten.unbind.int", "aten.chunk.default",
               "aten.tensor_split.sections", "aten.tensor_split.indices")


class _ViewChains:
    """Eager view steps (view, transpose, split's pieces, ...) whose value aliases the storage of a base value that
    is not a view: as Inductor's wrapper does, each view some other step reads is made in one call from its base,
    with the sizes, strides and storage offset the recording call gave it (an alias made in C++, no dispatch), and
    views read only by further views are not made at all. Where the base comes from an eager op, whose layout the
    call's key does not fix, its layout is checked first and the view chain runs as written if it differs."""

    def __init__(self, graph, steps, linears, folded, layouts):
        self.layouts = layouts
        self.base: dict[fx.Node, fx.Node | None] = {}  # collapsed view -> its base (None: a list view not called)
        self.parent_of: dict[fx.Node, fx.Node] = {}
        self.materialized: set[fx.Node] = set()
        self.guards: dict[fx.Node, str] = {}
        self.reinterpret: str | None = None
        outputs = set(graph.output.all_input_nodes)
        segment_outputs = {n for s in steps if isinstance(s, Segment) for n in s.outputs}
        self.fixed = set(graph.placeholders) | set(graph.constants) | segment_outputs  # layouts the key fixes
        eager = [s for s in steps if not isinstance(s, Segment) and s not in linears and s not in folded]

        def parent(n):
            if n.target is operator.getitem:
                src = n.args[0]
                if isinstance(src, fx.Node) and str(src.target) in _LIST_VIEWS:
                    return src.args[0]
                return None
            if is_view(n) and str(n.target) not in _LIST_VIEWS and n.args and isinstance(n.args[0], fx.Node):
                return n.args[0]
            return None

        for n in eager:
            p = parent(n)
            if p is None or n in outputs or n not in layouts:
                continue
            b = self.base.get(p, p)
            if b not in layouts:
                continue
            mine, theirs = layouts[n], layouts[b]
            if mine[3] != theirs[3] or mine[4] != theirs[4]:  # another dtype, or a copy (reshape)
                continue
            self.base[n] = b
            self.parent_of[n] = p
        # A list view whose pieces are all collapsed is not called either.
        for n in eager:
            if str(n.target) in _LIST_VIEWS and n.users and all(u in self.base for u in n.users):
                self.base[n] = None
        for n, b in self.base.items():
            if b is not None and any(u not in self.base for u in n.users):
                self.materialized.add(n)

    def chain(self, w, n) -> str:
        """Source computing `n` from its base through the steps as written."""
        if n not in self.base:
            return w.names[n]
        p = self.parent_of[n]
        if n.target is operator.getitem:
            src = n.args[0]
            return f"{_op_call(w, src, [self.chain(w, p)] + [w.expr(a) for a in src.args[1:]])}[{n.args[1]!r}]"
        return _op_call(w, n, [self.chain(w, p)] + [w.expr(a) for a in n.args[1:]])

    def write(self, w, n, name: str) -> None:
        b = self.base[n]
        sizes, strides, offset = self.layouts[n][:3]
        if self.reinterpret is None:
            self.reinterpret = w.bind("reinterpret", _reinterpret)
        fn = self.reinterpret
        # The base's storage offset is what the recording call had: fixed by the call's key (graph inputs), by
        # construction (segment outputs, constants) or by the guard below (eager results).
        made = f"{fn}({w.names[b]}, {sizes!r}, {strides!r}, {offset - self.layouts[b][2]})"
        if b in self.fixed:
            w.lines.append(f"{name} = {made}")
            return
        if b not in self.guards:
            bs, bst, boff = self.layouts[b][:3]
            self.guards[b] = guard = f"ok{len(self.guards)}"
            w.lines.append(f"{guard} = {w.names[b]}.stride() == {bst!r} and {w.names[b]}.storage_offset() == {boff}")
        w.lines.append(f"{name} = {made} if {self.guards[b]} else {self.chain(w, n)}")


# Eager steps the fast path calls as Tensor methods or torch functions, which take the same arguments as the ATen
# overload and reach it with less argument parsing than OpOverload calls (H200 machine: x.view 2.7 us, the
# aten.view.default call 5.1 us). Only overloads whose method / function resolves to that same overload.
_METHODS = {
    "aten.view.default": "view",
    "aten._unsafe_view.default": "view",  # the same sizes and strides; only autograd's view tracking differs
    "aten.t.default": "t",
    "aten.transpose.int": "transpose",
    "aten.permute.default": "permute",
    "aten.expand.default": "expand",
    "aten.unsqueeze.default": "unsqueeze",
    "aten.squeeze.dim": "squeeze",
    "aten.select.int": "select",
    "aten.unbind.int": "unbind",
}
_FUNCTIONS = {
    f"aten.{name}.default": getattr(torch, name)
    for name in ("mm", "bmm", "addmm", "baddbmm", "convolution", "_scaled_dot_product_cudnn_attention",
                 "_scaled_dot_product_flash_attention", "_scaled_dot_product_efficient_attention",
                 "_native_batch_norm_legit_no_training")
    if hasattr(torch, name)
}


def _op_call(w: _Writer, node: fx.Node, args: list[str]) -> str:
    """Source calling `node`'s op on `args` (its positional arguments as source) and its keyword arguments: a Tensor
    method or torch function where one reaches the same overload, else the op."""
    target = node.target
    kwargs = [f"{k}={w.expr(v)}" for k, v in node.kwargs.items()]
    method = _METHODS.get(str(target)) if not kwargs else None
    if method and args:
        return f"{args[0]}.{method}({', '.join(args[1:])})"
    function = _FUNCTIONS.get(str(target))
    fn = w.bind("op", function if function is not None else
                target._op if isinstance(target, torch._ops.OpOverload) else target)
    return f"{fn}({', '.join(args + kwargs)})"


def _general_runner(graph, segment, symbols: dict) -> Callable:
    def run(inputs):
        env = dict(zip(segment.inputs, inputs))
        graph.run_segment(segment, env, symbols)
        return [env[n] for n in segment.outputs]

    return run
