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
from typing import Any, Callable, NamedTuple

import torch
import torch.fx as fx


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


def build(graph, launches: dict, layouts: dict) -> Callable | None:
    """The straight-line function for the layout a general-path call had: `launches` maps id(segment) to the launch
    it ran, `layouts` (layouts_of) its values. None where the general path must stay (a segment ran eagerly, a step
    the writer does not handle)."""
    w = _Writer()
    steps = graph.steps
    from .graph_module import _ALIGN, Segment, _current_stream  # the graph module imports this module lazily

    # `layouts` are the values' layouts when the call ended; an op that changes a tensor's sizes, strides or offset
    # in place (set_, resize_, t_, ...) would make them differ from what earlier steps saw.
    if any(isinstance(s, fx.Node) and isinstance(s.target, torch._ops.OpOverload)
           and torch.Tag.inplace_view in s.target.tags for s in steps):
        return None

    linears, folded = _linear_steps(steps, launches)
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
    outputs = set(graph._output.all_input_nodes)
    made_by_segments = {n for s in steps if isinstance(s, Segment) for n in s.outputs}

    params = []
    for i, node in enumerate(graph._placeholders):
        w.names[node] = f"a{i}"
        params.append(f"a{i}")
    for node in graph._constants:
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
        w.globals["stream_of"] = _current_stream
        w.lines.append(f"s{idx} = stream_of({idx})")
        # Segment outputs allocated as Inductor's wrapper allocates its buffers: straight from the caching
        # allocator, without the dispatcher (the current device's), where the call runs on that device.
        if _ALLOC_CURRENT_GPU is not None:
            w.globals.update(alloc_current_gpu=_ALLOC_CURRENT_GPU, current_gpu=torch.cuda.current_device)
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
                checks.append(f"not ({' | '.join(to_align)}) & {_ALIGN - 1}")
            general = w.bind("general", _general_runner(graph, step))
            body = []
            if launch.device.type == "cpu":
                alloc = w.bind("alloc_cpu", _ALLOC_CPU or _allocator_on(launch.device))
            else:
                alloc = f"e{launch.device.index or 0}"
            for name, (sizes, strides, dtype) in zip(outs, launch.outputs):
                body.append(f"{name} = {alloc}({tuple(sizes)!r}, {tuple(strides)!r}, {w.bind('t', dtype)})")
            run = w.bind("run", launch.compiled.run)
            out_ptrs = "[" + ", ".join(f"{o}.data_ptr()" for o in outs) + "]"
            if launch.device.type == "cpu":
                body.append(f"{run}([{', '.join(ptrs)}], {out_ptrs})")
            else:
                idx = launch.device.index or 0
                wp = f"wp{idx}" if devices.get(idx) else "0"
                body.append(f"{run}([{', '.join(ptrs)}], {out_ptrs}, s{idx}, {wp}, {idx})")
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
    w.lines.append(f"return {w.expr(graph._output.args[0])}")
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
        from .graph_module import Segment, _is_view

        self.layouts = layouts
        self.base: dict[fx.Node, fx.Node | None] = {}  # collapsed view -> its base (None: a list view not called)
        self.parent_of: dict[fx.Node, fx.Node] = {}
        self.materialized: set[fx.Node] = set()
        self.guards: dict[fx.Node, str] = {}
        self.reinterpret: str | None = None
        outputs = set(graph._output.all_input_nodes)
        segment_outputs = {n for s in steps if isinstance(s, Segment) for n in s.outputs}
        self.fixed = set(graph._placeholders) | set(graph._constants) | segment_outputs  # layouts the key fixes
        eager = [s for s in steps if not isinstance(s, Segment) and s not in linears and s not in folded]

        def parent(n):
            if n.target is operator.getitem:
                src = n.args[0]
                if isinstance(src, fx.Node) and str(src.target) in _LIST_VIEWS:
                    return src.args[0]
                return None
            if _is_view(n) and str(n.target) not in _LIST_VIEWS and n.args and isinstance(n.args[0], fx.Node):
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


_VIEWS = ("aten.view.default", "aten._unsafe_view.default")


class _Linear(NamedTuple):
    """One call replacing nn.Linear's eager steps: F.linear(x, weight, bias), or, where fuse_gemm_activations gave the
    addmm an activation, _addmm_activation on x flattened to 2-D (`flat`), viewed back to `out`."""
    x: fx.Node
    weight: fx.Node
    bias: fx.Node | None
    use_gelu: bool | None = None
    flat: tuple | None = None
    out: tuple | None = None

    def reads(self) -> list:
        return [n for n in (self.x, self.weight, self.bias) if n is not None]

    def call(self, w: "_Writer") -> str:
        x, weight = w.names[self.x], w.names[self.weight]
        if self.use_gelu is None:
            return f"{w.bind('linear', torch.nn.functional.linear)}({', '.join(w.names[n] for n in self.reads())})"
        fn = w.bind("addmm_activation", torch._addmm_activation)
        call = (f"{fn}({w.names[self.bias]}, {x}{f'.view({self.flat!r})' if self.flat else ''}, {weight}.t(), "
                f"use_gelu={self.use_gelu})")
        return f"{call}.view({self.out!r})" if self.out else call


def _linear_steps(steps, launches) -> tuple[dict, set]:
    """nn.Linear as AOTAutograd decomposes it, `view(addmm(b, view(x, [M, K]), t(w)), [.., N])` (or mm without a
    bias, or without the views for 2-D x), all eager steps: {the last step: _Linear} and the steps that its call
    folds away. torch.nn.functional.linear reaches the same addmm / mm on the same views (at::linear: addmm for 2-D
    input with a bias, the flattened addmm for contiguous 3-D input with a bias, else matmul, which folds a contiguous
    3-D input into one mm), so results are identical, with one call instead of four. fuse_gemm_activations'
    `_addmm_activation` folds the same way, into one line of views around it. 3-D x must be contiguous: only a
    segment's output, whose layout is fixed, qualifies."""
    from .graph_module import Segment, _contiguous_strides

    eager = {s for s in steps if not isinstance(s, Segment)}
    contiguous = set()
    for s in steps:
        if isinstance(s, Segment) and id(s) in launches:
            for n, (sizes, strides, _) in zip(s.outputs, launches[id(s)].outputs):
                if list(strides) == _contiguous_strides(list(sizes)):
                    contiguous.add(n)

    def only_user(n, user):
        return n in eager and list(n.users) == [user]

    linears, folded = {}, set()
    for a in eager:
        name, use_gelu = str(a.target), None
        if name == "aten._addmm_activation.default" and set(a.kwargs) <= {"use_gelu"}:
            use_gelu = bool(a.kwargs.get("use_gelu", False))
        elif name not in ("aten.addmm.default", "aten.mm.default") or a.kwargs:
            continue
        bias, lhs, t = (a.args if name != "aten.mm.default" else (None, *a.args))
        if len(a.args) != (3 if bias is not None else 2) or not isinstance(t, fx.Node):
            continue
        if str(t.target) != "aten.t.default" or not only_user(t, a):
            continue
        weight = t.args[0]
        wv, bv = weight.meta.get("val"), bias.meta.get("val") if isinstance(bias, fx.Node) else None
        if not isinstance(wv, torch.Tensor) or wv.dim() != 2:
            continue
        if bias is not None and not (isinstance(bv, torch.Tensor) and bv.dim() == 1):
            continue
        # 3-D: x viewed to [M, K] before and the product viewed back after.
        if str(getattr(lhs, "target", "")) in _VIEWS and only_user(lhs, a) and len(a.users) == 1:
            after = next(iter(a.users))
            x = lhs.args[0]
            xv, ov = x.meta.get("val"), after.meta.get("val")
            if (str(after.target) in _VIEWS and after in eager and isinstance(xv, torch.Tensor) and xv.dim() == 3
                    and x in contiguous and list(ov.shape) == list(xv.shape[:-1]) + [wv.shape[0]]):
                linears[after] = _Linear(x, weight, bias, use_gelu, tuple(lhs.meta["val"].shape), tuple(ov.shape))
                folded.update((lhs, t, a))
                continue
        lv = lhs.meta.get("val") if isinstance(lhs, fx.Node) else None
        if isinstance(lv, torch.Tensor) and lv.dim() == 2:
            linears[a] = _Linear(lhs, weight, bias, use_gelu)
            folded.add(t)
    return linears, folded


def _general_runner(graph, segment) -> Callable:
    def run(inputs):
        env = dict(zip(segment.inputs, inputs))
        graph._run_segment(segment, env, {})
        return [env[n] for n in segment.outputs]

    return run
