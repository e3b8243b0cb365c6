"""Compiling one ATen FX graph (a forward or backward graph from AOTAutograd) into hipinductor kernels.

The graph is split in graph order into *segments*: maximal runs of nodes hipinductor lowers, separated by nodes that
run in eager PyTorch (ops without a lowering, random ops, tensors on devices without a hipinductor runtime). Each
segment becomes one hipinductor graph (the versioned JSON of docs/graph-format.md) compiled by the C++ pipeline into
one translation unit of fused kernels. Segments are compiled on first call, specialised to the concrete sizes,
strides and storage offsets of the tensors they receive (symbolic sizes are evaluated then), and cached per layout.

A node the compiler rejects (a LoweringError or GraphFormatError names it) is moved to eager and the segment is
re-split, so one unsupported case never sends a whole graph to eager.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import operator
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple

import torch
import torch.fx as fx

from . import _C, fast_path
from .channels_last import channels_last_convs
from .empty_cat_inputs import drop_empty_cat_inputs
from .gemm_epilogue import fuse_gemm_activations
from .options import Options

log = logging.getLogger("hipinductor")

_SUPPORTED_DTYPES = {
    torch.float32: "float32",
    torch.float16: "float16",
    torch.bfloat16: "bfloat16",
    torch.float64: "float64",
    torch.int64: "int64",
    torch.int32: "int32",
    torch.int16: "int16",
    torch.int8: "int8",
    torch.uint8: "uint8",
    torch.bool: "bool",
}

_warned_fallbacks: set[str] = set()
_warned_lock = threading.Lock()


def _warn_fallback_once(op: str, why: str) -> None:
    with _warned_lock:
        if op in _warned_fallbacks:
            return
        _warned_fallbacks.add(op)
    log.warning("hipinductor: %s runs in eager PyTorch (%s)", op, why)


_gpu_targets: dict[tuple[str, int], tuple[str | None, str]] = {}


def _gpu_key(device: torch.device) -> tuple[str, int]:
    kind = "hip" if getattr(torch.version, "hip", None) else "cuda"
    return kind, device.index if device.index is not None else torch.cuda.current_device()


def _gpu_runtime(device: torch.device) -> tuple[str | None, str]:
    """(hipinductor target of a GPU device, e.g. "sm_90" or "gfx942:sramecc+:xnack-"; or None and why not)."""
    key = _gpu_key(device)
    if key not in _gpu_targets:
        try:
            _gpu_targets[key] = (_C.gpu_target(*key), "")
        except Exception as e:  # noqa: BLE001 - no runtime: those nodes run eagerly
            _gpu_targets[key] = (None, str(e))
    return _gpu_targets[key]


def gpu_target(device: torch.device) -> str | None:
    return _gpu_runtime(device)[0]


def _device_problem(t: torch.Tensor) -> str | None:
    if t.device.type == "cpu":
        return None
    if t.device.type == "cuda":
        target, why = _gpu_runtime(t.device)
        return None if target else f"no hipinductor GPU runtime: {why}"
    return f"no hipinductor runtime for device '{t.device.type}'"


def _node_device(node: fx.Node):
    ts = _node_tensors(node)
    return ts[0].device if ts else None


def op_name(node: fx.Node) -> str:
    """`aten.add.Tensor` for an OpOverload target; the callable's name otherwise."""
    t = node.target
    if isinstance(t, torch._ops.OpOverload):
        return str(t)
    return getattr(t, "__name__", str(t))


def _tensor_meta(node: fx.Node):
    val = node.meta.get("val")
    return val if isinstance(val, torch.Tensor) else None


def _node_tensors(node: fx.Node) -> list[torch.Tensor]:
    val = node.meta.get("val")
    if isinstance(val, torch.Tensor):
        return [val]
    if isinstance(val, (list, tuple)):
        return [v for v in val if isinstance(v, torch.Tensor)]
    return []


class Report(dict):
    """Per-graph facts: ops_lowered, fallback_ops, kernels, compile_ms, cache_hits, ... (a plain dict)."""


@dataclass
class Segment:
    nodes: list[fx.Node]
    inputs: list[fx.Node] = field(default_factory=list)   # values read from outside the segment
    outputs: list[fx.Node] = field(default_factory=list)  # values used after the segment
    compiled: dict = field(default_factory=dict)          # layout signature -> _C.CompiledGraph
    rejected: bool = False
    launches: dict = field(default_factory=dict)          # (layout signature, symbols) -> _Launch
    pending: dict = field(default_factory=dict)           # layout signature -> Future of a compile started early


@dataclass
class _Launch:
    """What one call of a segment needs besides its inputs, prepared once per input layout: the hot path then only
    allocates the outputs and calls the kernels."""
    compiled: Any                      # _C.CompiledGraph, or None: run the segment eagerly (empty tensors)
    device: torch.device | None = None
    outputs: list = field(default_factory=list)  # (sizes, strides, dtype) per segment output
    workspace_bytes: int = 0
    aligned: bool = False              # compiled with "align": needs every input's first element _ALIGN-aligned


class CompiledFxGraph:
    """The callable handed back to AOTAutograd for one ATen graph."""

    def __init__(self, gm: fx.GraphModule, options: Options, kind: str, index: int,
                 static_inputs: tuple[int, ...] = ()):
        start = time.perf_counter()
        self.gm = gm
        self.options = options
        self.name = f"{kind}_{index}"
        self.lock = threading.Lock()
        self.report = Report(
            name=self.name, ops_lowered=[], fallback_ops=[], kernels=0, compile_ms=0.0, cache_hits=0,
            segments=0, eager_reason=None, workspace_bytes=0, eager_views=[], eager_empty=[], early_compiles=0,
            shared_compiles=0, build_ms=0.0, first_call_ms=None, gemm_epilogues=0, empty_cat_inputs=0,
            channels_last_convs=0)
        self.forced_eager: set[fx.Node] = set()
        self.graph_eager_reason: str | None = None
        for n in gm.graph.nodes:  # AOTAutograd gives lifted constants no "val": their own tensor tells the same
            if (n.op == "get_attr" and not isinstance(n.meta.get("val"), torch.Tensor)
                    and isinstance(getattr(gm, n.target, None), torch.Tensor)):
                n.meta["val"] = getattr(gm, n.target)
        self.report["empty_cat_inputs"] = drop_empty_cat_inputs(gm)
        if options.gemm_epilogue:
            self.report["gemm_epilogues"] = fuse_gemm_activations(gm)
        if options.channels_last_convs and kind == "inference":
            self.report["channels_last_convs"] = channels_last_convs(gm)
        nodes = list(gm.graph.nodes)
        self._placeholders = [n for n in nodes if n.op == "placeholder"]
        self._constants = [n for n in nodes if n.op == "get_attr"]
        self._output = next(n for n in nodes if n.op == "output")
        self._symbolic = any(_has_symbols(n.meta.get("val")) for n in self._placeholders)
        # Fast paths (fast_path.py) need sizes known when written, and HIPINDUCTOR_CHECK needs the general path.
        self._fast_paths_apply = not self.options.check and not any(_has_symbols(n.meta.get("val")) for n in nodes)
        self._fast: dict[tuple, Any] = {}  # graph inputs' layouts -> fast_path function, or False
        # The inputs whose layouts select the fast path: all but the module's parameters and buffers, whose layouts
        # dynamo's guards check (ResNet-50: 1 input of 268; the key costs about 0.3 us per input and call). The static
        # indices name a forward graph's inputs: a backward graph's (saved values, gradients) are all keyed.
        static = {i for i in static_inputs if kind != "backward" and 0 <= i < len(self._placeholders)
                  and isinstance(self._placeholders[i].meta.get("val"), torch.Tensor)}
        self._key_inputs = [i for i in range(len(self._placeholders)) if i not in static] if static else None
        self._eager_calls: dict[fx.Node, _EagerCall] = {}
        self._plan()
        self._dump_aten_graph()
        self._start_compiles()
        self.report["build_ms"] = (time.perf_counter() - start) * 1000.0

    def _dump_aten_graph(self) -> None:
        """HIPINDUCTOR_DEBUG_DIR/<graph>/aten_graph.txt: the ATen graph as AOTAutograd handed it over, and the plan."""
        if not self.options.debug_dir:
            return
        import os

        folder = os.path.join(self.options.debug_dir, self.name)
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "aten_graph.txt"), "w") as f:
            f.write(self.gm.print_readable(print_output=False))
            f.write("\n# plan: segments (compiled) and eager steps, in order\n")
            for i, step in enumerate(self.steps):
                if isinstance(step, Segment):
                    f.write(f"segment s{i}: {' '.join(n.name for n in step.nodes)}\n")
                else:
                    f.write(f"eager {step.name}: {op_name(step)}\n")

    # ---- partitioning ------------------------------------------------------------------------------------------
    def _lowerable(self, node: fx.Node) -> tuple[bool, str]:
        if node.op != "call_function":
            return False, "not a call"
        if node.target is operator.getitem:
            return True, ""
        if not isinstance(node.target, torch._ops.OpOverload):
            return False, "not an ATen op"
        name = op_name(node)
        if name in self.options.fallback_ops:
            return False, "listed in options['fallback_ops']"
        if not _C.has_lowering(name):
            return False, "no lowering"
        if node in self.forced_eager:
            return False, "the compiler rejected this node"
        if _copies_for_another_device(node):
            return False, "a constant copied for an op on another device"
        tensors = _node_tensors(node)
        if not tensors:
            return False, "produces no tensor"
        for a in node.all_input_nodes:
            tensors += _node_tensors(a)
        for t in tensors:
            if t.dtype not in _SUPPORTED_DTYPES:
                return False, f"dtype {t.dtype}"
            problem = _device_problem(t)
            if problem:
                return False, problem
            if t.device != tensors[0].device:
                return False, "inputs on several devices"
        if any(_statically_empty(t) for t in tensors):
            return False, _EMPTY
        return True, ""

    def _decide(self) -> dict:
        """node -> (lowered?, why not). A view runs eagerly, where it is free, when lowering it buys nothing:
        - its users are not lowered: lowered, it would be a copy kernel (a transposed weight feeding an eager matmul,
          copied every call);
        - what it views is not lowered (a graph input, an eager matmul's result): kernels read the eager view as an
          input just as they would read through a lowered one, and eager readers of it then need no copy."""
        decision = {}
        lowered = lambda n: decision.get(n, (False, ""))[0]  # noqa: E731
        for node in self.gm.graph.nodes:
            if node.op == "call_function":
                decision[node] = self._lowerable(node)
                base = node.args[0] if node.args else None
                if decision[node][0] and _is_view(node) and isinstance(base, fx.Node) and not lowered(base):
                    decision[node] = (False, _EAGER_VIEW)
        for node in reversed(list(self.gm.graph.nodes)):
            # (a getitem counts as a view here: the pieces of a split feeding eager ops leave the split a view)
            if decision.get(node, (False, ""))[0] and (_is_view(node) or node.target is operator.getitem):
                if not any(decision.get(u, (False, ""))[0] for u in node.users):
                    decision[node] = (False, _EAGER_VIEW)
        return decision

    def _plan(self) -> None:
        """Orders the graph into eager steps and segments (see _schedule), and records what was lowered."""
        decision = self._decide()
        lowered_ops: list[str] = []
        fallback_ops: list[str] = []
        eager_views: list[str] = []
        eager_empty: list[str] = []
        for node in self.gm.graph.nodes:
            if node.op != "call_function" or node.target is operator.getitem:
                continue
            ok, why = decision[node]
            if ok:
                lowered_ops.append(op_name(node))
            elif why == _EAGER_VIEW:
                eager_views.append(op_name(node))
            elif why == _EMPTY:
                eager_empty.append(op_name(node))
            else:
                fallback_ops.append(op_name(node))
                _warn_fallback_once(op_name(node), why)
        self.steps = self._schedule({n for n, (ok, _) in decision.items() if ok})
        self._fast = {}
        self._wire_segments()
        self.report["ops_lowered"] = sorted(set(lowered_ops))
        self.report["fallback_ops"] = sorted(set(fallback_ops))
        self.report["eager_views"] = sorted(set(eager_views))
        self.report["eager_empty"] = sorted(set(eager_empty))
        self.report["segments"] = sum(isinstance(s, Segment) for s in self.steps)

    def _schedule(self, lowered: set) -> list:
        """Steps in an order that needs few segments: the graph's order is only one of its topological orders, and
        taken as it is, every eager node splits the lowered run around it (silu(gate(h)) * up(h) would be two kernels
        with the eager up-projection between them).

        Eager nodes run as early as their inputs allow (wave w: after segment w-1); lowered nodes run as late as their
        users allow (segment k: before the eager wave k+1 that first reads them), so a lowered node joins the segment
        of what consumes it rather than being written out early. A node with side effects (mutating an input, an
        op that is not an ATen op) stays a barrier in graph order; random ops keep their order among themselves."""
        nodes = [n for n in self.gm.graph.nodes if n.op == "call_function"]
        # getitem of a lowered node's tuple belongs to its source's segment; of an eager node's, to eager.
        for n in nodes:
            if n.target is operator.getitem:
                (lowered.add if n.args[0] in lowered else lowered.discard)(n)
        index = {n: i for i, n in enumerate(nodes)}
        deps: dict[fx.Node, set] = {n: {a for a in n.all_input_nodes if a in index} for n in nodes}
        barrier, random_prev, since_barrier = None, None, []
        for n in nodes:
            if barrier is not None:
                deps[n].add(barrier)
            if _has_side_effects(n):
                deps[n].update(since_barrier)
                barrier, since_barrier = n, []
                continue
            since_barrier.append(n)
            if _is_random(n):
                if random_prev is not None:
                    deps[n].add(random_prev)
                random_prev = n
        # ASAP stages: eager node -> wave, lowered node -> segment; segment k runs after wave k, wave k after k-1.
        stage: dict[fx.Node, int] = {}
        for n in nodes:  # graph order is topological, and the extra edges point forward
            s = 0
            for d in deps[n]:
                s = max(s, stage[d] + (1 if d in lowered and n not in lowered else 0))
            stage[n] = s
        last = max((stage[n] for n in nodes if n in lowered), default=0)
        users: dict[fx.Node, list] = {n: [] for n in nodes}
        for n in nodes:
            for d in deps[n]:
                users[d].append(n)
        # ALAP for lowered nodes, in reverse: before the first eager reader's wave, with the lowered readers.
        for n in reversed(nodes):
            if n not in lowered or n.target is operator.getitem:
                continue
            latest = last
            for u in users[n]:
                if u.target is operator.getitem and u in lowered:
                    for uu in users[u]:
                        latest = min(latest, stage[uu] - 1 if uu not in lowered else stage[uu])
                else:
                    latest = min(latest, stage[u] - 1 if u not in lowered else stage[u])
            stage[n] = max(stage[n], latest)
        for n in nodes:
            if n.target is operator.getitem and n in lowered:
                stage[n] = stage[n.args[0]]
        steps: list[Any] = []
        waves = max(stage.values(), default=0) + 1
        for k in range(waves):
            steps.extend(n for n in nodes if n not in lowered and stage[n] == k)
            # A segment runs on one device: the lowered nodes of a stage split by device (nodes on different devices
            # never read each other directly: the copy between devices runs eagerly).
            by_device: dict[Any, list] = {}
            for n in nodes:
                if n in lowered and stage[n] == k:
                    src = n.args[0] if n.target is operator.getitem else n
                    by_device.setdefault(_node_device(src), []).append(n)
            steps.extend(Segment(group) for group in by_device.values())
        return steps

    def _wire_segments(self) -> None:
        order = {n: i for i, n in enumerate(self.gm.graph.nodes)}
        for seg in (s for s in self.steps if isinstance(s, Segment)):
            inside = set(seg.nodes)
            seen = []
            for n in seg.nodes:
                for a in n.all_input_nodes:
                    if a not in inside and a not in seen:
                        seen.append(a)
            seg.inputs = [a for a in seen if _tensor_meta(a) is not None]
            last = max(order[n] for n in seg.nodes)
            outs = []
            for n in seg.nodes:
                if _tensor_meta(n) is None:
                    continue  # tuple-valued nodes are read through their getitems
                if any(u not in inside or order[u] > last for u in n.users):
                    outs.append(n)
            seg.outputs = outs

    # ---- conversion to the graph format --------------------------------------------------------------------------
    @staticmethod
    def _sym_value(x, env: dict) -> int:
        if isinstance(x, int):
            return x
        if isinstance(x, torch.SymInt):
            expr = x.node.expr
            if expr.is_number:
                return int(expr)
            return int(expr.xreplace(env))
        raise TypeError(f"not an int: {x!r}")

    def _layout(self, t: torch.Tensor, env: dict) -> dict:
        """Layout of a tensor the compiled segment *produces*: a fresh allocation, so offset 0, and eager's strides
        when they are a dense permutation (what PyTorch cares about), else contiguous ones (eager views into larger
        storage, e.g. the pieces of a split, would only waste memory and cannot be allocated alone)."""
        sizes = [self._sym_value(s, env) for s in t.shape]
        strides = [self._sym_value(s, env) for s in t.stride()]
        if not _is_dense(sizes, strides):
            strides = _contiguous_strides(sizes)
        return {"dtype": _SUPPORTED_DTYPES[t.dtype], "sizes": sizes, "strides": strides, "offset": 0}

    def _segment_json(self, seg: Segment, inputs: list[torch.Tensor], env: dict, aligned: bool = False) -> dict:
        names: dict[fx.Node, tuple[str, int | None]] = {}
        nodes_json = []
        for node, value in zip(seg.inputs, inputs):
            nodes_json.append({"name": node.name, "op": "placeholder",
                               "meta": {"dtype": _SUPPORTED_DTYPES[value.dtype], "sizes": list(value.shape),
                                        "strides": list(value.stride()), "offset": value.storage_offset()}})
            names[node] = (node.name, None)

        def ref(n: fx.Node) -> dict:
            if n not in names:
                raise _Reject(n, "reads a value the segment does not have")
            name, k = names[n]
            return {"ref": name} if k is None else {"ref": name, "output": k}

        def arg(a):
            if isinstance(a, fx.Node):
                val = a.meta.get("val")
                if _is_sym_int(a):
                    return self._sym_value(val, env)  # a size computed by an eager sym_size node
                if isinstance(val, torch.SymFloat):
                    return arg(val)  # a float computed from sizes (batch norm's 1 / (N * H * W))
                return ref(a)
            if isinstance(a, bool) or a is None or isinstance(a, str):
                return a
            if isinstance(a, (int, torch.SymInt)):
                return self._sym_value(a, env)
            if isinstance(a, (float, torch.SymFloat)):
                v = float(a) if isinstance(a, float) else float(a.node.expr.xreplace(env))
                if math.isnan(v):
                    return {"float": "nan"}
                if math.isinf(v):
                    return {"float": "inf" if v > 0 else "-inf"}
                return {"float": v}
            if isinstance(a, torch.dtype):
                if a not in _SUPPORTED_DTYPES:
                    raise _Reject(None, f"dtype {a}")
                return {"dtype": _SUPPORTED_DTYPES[a]}
            if isinstance(a, (torch.device, torch.layout, torch.memory_format)):
                return None
            if isinstance(a, (list, tuple)):
                # Tensor lists (None entries allowed); int lists whose symbolic entries eager nodes computed (full's
                # size [s0 * 32]) go through arg() like a lone size.
                if any(isinstance(x, fx.Node) and not _is_sym_int(x) for x in a) or (a and all(x is None for x in a)):
                    return [ref(x) if isinstance(x, fx.Node) else None for x in a]
                return [arg(x) for x in a]
            raise _Reject(None, f"argument {a!r} of type {type(a).__name__}")

        for node in seg.nodes:
            if node.target is operator.getitem:
                src, k = node.args
                names[node] = (names[src][0], k)
                continue
            metas = [self._layout(t, env) for t in _node_tensors(node)]
            try:
                entry = {"name": node.name, "op": op_name(node), "args": [arg(a) for a in node.args],
                         "meta": metas[0] if len(metas) == 1 else metas}
                if node.kwargs:
                    entry["kwargs"] = {k: arg(v) for k, v in node.kwargs.items()}
            except _Reject as r:
                raise _Reject(node, r.why) from None
            nodes_json.append(entry)
            names[node] = (node.name, None)
        graph = {"format": "hipinductor-graph", "version": 1, "nodes": nodes_json,
                 "outputs": [ref(n) for n in seg.outputs]}
        if aligned:  # inputs' first elements and (PyTorch-allocated) outputs: no run-time alignment checks
            graph["version"], graph["align"] = 2, _ALIGN
        return graph

    # ---- execution -----------------------------------------------------------------------------------------------
    def _device_and_target(self, seg: Segment):
        """The device a segment runs on and the target its kernels compile for (None: no GPU runtime)."""
        device = _node_device(next(n for n in seg.nodes if n.target is not operator.getitem))
        return device, (self.options.target if device.type == "cpu" else gpu_target(device))

    def _start_compiles(self) -> None:
        """Starts compiling every segment, in parallel threads, for the layouts the traced graph predicts (its fake
        tensors). The first call then mostly waits for compiles already under way instead of running them one after
        another; a segment whose real layout differs compiles at that point as usual."""
        if self._symbolic or self.graph_eager_reason is not None:
            return
        import concurrent.futures
        import os
        jobs = []
        for seg in (s for s in self.steps if isinstance(s, Segment)):
            try:
                metas = [_tensor_meta(n) for n in seg.inputs]
                if any(m is None or m.numel() == 0 for m in metas):
                    continue
                # PyTorch's allocators align storages; a call that is not compiles. No symbols here (static graphs).
                key = (_layout_key(metas), True, _symbols_key({}))
                _, target = self._device_and_target(seg)
                if target is None:
                    continue
                graph = self._segment_json(seg, metas, {}, aligned=True)
                job = _CompileJob(seg, key, json.dumps(graph), target, _without_names(graph))
            except Exception:  # noqa: BLE001 - only a head start; the call compiles (and reports) for real
                continue
            jobs.append(job)
        # A model's repeated layers give segments that differ only in their node names: the first such segment's
        # compiled graph serves them all (one compile, one module load; its kernels and debug dumps carry the first
        # segment's names).
        first: dict = {}
        copies = []
        for job in jobs:
            original = first.setdefault((job.target, job.shape), job)
            if original is not job:
                copies.append((job, original))
        jobs = list(first.values())  # the originals, in order
        if not jobs:
            return
        # Compile units (one compiler call, one translation unit each; see _units), in threads of this graph's own
        # that end with it; _C.compile_many releases the GIL. A unit's segments each load all of it, hence units of
        # at most _SEGMENTS_PER_UNIT. A failure leaves each segment to compile (and report) on its own.
        units = _units(jobs, target_of=lambda job: job.target)
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=min(len(units), max(2, min(8, os.cpu_count() or 2))),
                                                     thread_name_prefix="hipinductor-compile")
        for unit in units:
            futures = [concurrent.futures.Future() for _ in unit]
            for job, future in zip(unit, futures):
                job.seg.pending[job.key] = future
            names = [f"{self.name}_s{self.steps.index(job.seg)}" for job in unit]
            pool.submit(_compile_group, [job.source for job in unit], unit[0].target, names, futures,
                        self.options.debug_dir, self.options.use_cache)
        for copy, original in copies:
            future = concurrent.futures.Future()
            copy.seg.pending[copy.key] = future
            original.seg.pending[original.key].add_done_callback(functools.partial(_share_result, future))
        pool.shutdown(wait=False)

    def _compile_segment(self, seg: Segment, inputs: list[torch.Tensor], env: dict, aligned: bool):
        # The symbols' values are part of what a segment is compiled for: sizes and scalars computed from them are
        # constants in its graph, even where no input's layout shows them (x.median(0).values * x.shape[0]).
        key = (_layout_key(inputs), aligned, _symbols_key(env))
        cg = seg.compiled.get(key)
        if cg is not None:
            return cg
        early = seg.pending.pop(key, None)
        try:
            cg, ms = early.result() if early is not None else (None, 0.0)
        except Exception:  # noqa: BLE001 - compiled again below, where errors are reported
            cg = None
        if cg is not None:
            self.report["early_compiles"] += 1
            self.report["shared_compiles"] += int(ms is None)
            self.report["compile_ms"] += ms or 0.0  # the compile's own time, not the wait for it
        if cg is None:
            start = time.perf_counter()
            graph = self._segment_json(seg, inputs, env, aligned)
            _, target = self._device_and_target(seg)
            cg = _C.compile(json.dumps(graph), target=target,
                            name=f"{self.name}_s{self.steps.index(seg)}", debug_dir=self.options.debug_dir,
                            use_cache=self.options.use_cache)
            self.report["compile_ms"] += (time.perf_counter() - start) * 1000.0
        self.report["kernels"] += cg.num_kernels
        self.report["cache_hits"] += int(cg.cache_hit)
        self.report["workspace_bytes"] = max(self.report["workspace_bytes"], cg.workspace_bytes)
        seg.compiled[key] = cg
        return cg

    def _bind_symbols(self, args) -> dict:
        env = {}
        placeholders = self._placeholders
        for node, value in zip(placeholders, args):
            val = node.meta.get("val")
            if isinstance(val, torch.SymInt) and isinstance(value, int) and val.node.expr.is_symbol:
                env[val.node.expr] = value
            elif isinstance(val, torch.Tensor) and isinstance(value, torch.Tensor):
                for s, v in zip(list(val.shape) + list(val.stride()), list(value.shape) + list(value.stride())):
                    if isinstance(s, torch.SymInt) and s.node.expr.is_symbol:
                        env[s.node.expr] = v
        return env

    def __call__(self, *args):
        if self.graph_eager_reason is not None:
            return self.gm(*args)
        key = None  # which fast path: computed once per call, where fast paths apply at all
        if self._fast_paths_apply:
            try:
                key = _args_key(args if self._key_inputs is None else [args[i] for i in self._key_inputs])
            except (AttributeError, IndexError):  # not all tensors, or fewer than the graph's inputs
                pass
        fast = self._fast.get(key) if key is not None else None
        while True:
            try:
                if fast:
                    return fast(args)
                return self._run(args, key)
            except _Reject as r:
                fast = None
                self._reject(r)
            except Exception as e:  # noqa: BLE001 - a compiler fault must never kill the user's program
                if self.options.strict:
                    raise
                self.graph_eager_reason = f"{type(e).__name__}: {e}"
                self.report["eager_reason"] = self.graph_eager_reason
                log.warning("hipinductor: graph %s runs in eager PyTorch: %s", self.name, self.graph_eager_reason)
                return self.gm(*args)

    def _reject(self, r: "_Reject") -> None:
        if r.node is None or r.node in self.forced_eager:
            raise RuntimeError(f"hipinductor: segment rejected: {r.why}")
        if self.options.strict and not r.recoverable:
            raise RuntimeError(f"hipinductor: node '{r.node.name}' ({op_name(r.node)}): {r.why}")
        with self.lock:
            self.forced_eager.add(r.node)
            _warn_fallback_once(op_name(r.node), r.why)
            self._plan()

    def _run(self, args, key=None):
        """The general path: every step looked up and checked. A call whose layout `key` has no fast path yet records
        what its segments did and writes one (fast_path.build) for the next calls with that layout."""
        if self.report["first_call_ms"] is None:  # what torch.compile's first call spends in hipinductor
            start = time.perf_counter()
            try:
                return self._run_steps(args, key)
            finally:
                self.report["first_call_ms"] = (time.perf_counter() - start) * 1000.0
        return self._run_steps(args, key)

    def _run_steps(self, args, key):
        env: dict[fx.Node, Any] = dict(zip(self._placeholders, args))
        for node in self._constants:  # constants AOTAutograd lifted into the module (_tensor_constant0, ...)
            env[node] = getattr(self.gm, node.target)
        symbols = self._bind_symbols(args) if self._symbolic else {}
        # id(segment) -> the launch it ran, for the fast path this call writes
        launches = {} if key is not None and key not in self._fast and len(self._fast) < _MAX_FAST_PATHS else None
        for step in self.steps:
            if isinstance(step, Segment):
                launch = self._run_segment(step, env, symbols)
                if launches is not None:
                    launches[id(step)] = launch
                continue
            call = self._eager_calls.get(step)
            if call is None:
                call = self._eager_calls[step] = _EagerCall(step)
            env[step] = call(env)
        if launches is not None:
            self._fast[key] = self._write_fast_path(launches, env)
        return fx.node.map_arg(self._output.args[0], env.__getitem__)

    def _write_fast_path(self, launches, env):
        try:
            fn = fast_path.build(self, launches, fast_path.layouts_of(env))
        except Exception as e:  # noqa: BLE001 - the general path stays correct; only slower
            log.debug("hipinductor: no fast path for graph %s: %s", self.name, e)
            return False
        if fn is not None and self.options.debug_dir:
            import os

            folder = os.path.join(self.options.debug_dir, self.name)
            os.makedirs(folder, exist_ok=True)
            with open(os.path.join(folder, f"fast_path_{len(self._fast)}.py"), "w") as f:
                f.write(fn.source)
        return fn or False

    def _run_segment(self, seg: Segment, env: dict, symbols: dict):
        inputs = [env[n] for n in seg.inputs]
        try:
            aligned = _aligned(inputs)
            key = (_layout_key(inputs), aligned, tuple(symbols.values()))
        except AttributeError:  # not a tensor
            aligned, key = False, None
        launch = seg.launches.get(key) if key is not None else None
        if launch is None:
            launch = self._prepare_launch(seg, inputs, symbols, aligned)
            seg.launches[key] = launch
        if launch.compiled is None:
            self._run_eagerly(seg, env)
            return launch
        cg, device = launch.compiled, launch.device
        outputs = [torch.empty_strided(sizes, strides, dtype=dtype, device=device)
                   for sizes, strides, dtype in launch.outputs]
        # Kernels address element 0 of each storage and apply storage offsets themselves (they are compiled in).
        in_ptrs = [t.untyped_storage().data_ptr() for t in inputs]
        out_ptrs = [t.untyped_storage().data_ptr() for t in outputs]
        if device.type == "cpu":
            cg.run(in_ptrs, out_ptrs, autotune=self.options.autotune)
        else:
            # GPU: launch on PyTorch's current stream; the workspace comes from PyTorch's caching allocator.
            index = device.index or 0
            workspace = (torch.empty(launch.workspace_bytes, dtype=torch.uint8, device=device)
                         if launch.workspace_bytes else None)
            cg.run(in_ptrs, out_ptrs, stream=_current_stream(index),
                   workspace=workspace.data_ptr() if workspace is not None else 0, device=index,
                   autotune=self.options.autotune)
        if self.options.check:
            self._check_against_eager(seg, env, outputs, cg)
        self._store(seg, outputs, env)
        return launch

    def _prepare_launch(self, seg: Segment, inputs: list, symbols: dict, aligned: bool) -> "_Launch":
        for n, t in zip(seg.inputs, inputs):
            if not isinstance(t, torch.Tensor):
                raise _Reject(next(u for u in seg.nodes if n in u.all_input_nodes), f"input '{n.name}' is not a tensor")
        if any(t.numel() == 0 for t in inputs) or any(m.numel() == 0 for m in map(_tensor_meta, seg.outputs)):
            return _Launch(None)  # empty tensors: nothing worth a kernel, and no index math on 0
        try:
            cg = self._compile_segment(seg, inputs, symbols, aligned)
        except _C.LoweringError as e:
            node = self._node_named(seg, getattr(e, "node", None))
            raise _Reject(node, str(e), recoverable=True) from None
        except _C.GraphFormatError as e:
            m = re.search(r"node '([^']+)'", str(e))
            node = self._node_named(seg, m.group(1) if m else None)
            raise _Reject(node, str(e), recoverable=True) from None
        device, _ = self._device_and_target(seg)
        outputs = []
        for n in seg.outputs:
            meta = _tensor_meta(n)
            lay = self._layout(meta, symbols)
            outputs.append((lay["sizes"], lay["strides"], meta.dtype))
        return _Launch(cg, device, outputs, cg.workspace_bytes, aligned)

    def _check_against_eager(self, seg: Segment, env: dict, outputs: list[torch.Tensor], cg) -> None:
        reference = dict(env)
        self._run_eagerly(seg, reference)
        for n, got in zip(seg.outputs, outputs):
            want = reference[n]
            if not torch.allclose(got.float(), want.float(), rtol=2e-2, atol=2e-2, equal_nan=True):
                err = (got.float() - want.float()).abs().max().item()
                raise RuntimeError(f"hipinductor check: graph {self.name}, segment '{cg.name}', output '{n.name}' "
                                   f"differs from eager by up to {err:g}; kernels: {cg.kernel_names}")

    @staticmethod
    def _run_eagerly(seg: Segment, env: dict) -> None:
        for node in seg.nodes:
            a = fx.node.map_arg(node.args, lambda n: env[n])
            kw = fx.node.map_arg(node.kwargs, lambda n: env[n])
            env[node] = node.target(*a, **kw)

    @staticmethod
    def _store(seg: Segment, outputs: list[torch.Tensor], env: dict) -> None:
        for n, t in zip(seg.outputs, outputs):
            env[n] = t

    @staticmethod
    def _node_named(seg: Segment, name: str | None):
        if name is None:
            return seg.nodes[0]
        for n in seg.nodes:
            if n.name == name:
                return n
        return seg.nodes[0]


_EAGER_VIEW = "a view whose users run eagerly"
# Nodes reading or producing a tensor with no elements run eagerly, where they cost no kernel: in a segment, an empty
# tensor made the whole segment run eagerly (no index math on sizes of 0), the other nodes' kernels with it.
_EMPTY = "an empty tensor"


def _statically_empty(t: torch.Tensor) -> bool:
    return all(isinstance(s, int) for s in t.shape) and 0 in t.shape


_VIEW_LIKE = {"aten._unsafe_view.default", "aten.reshape.default", "aten.alias.default"}


def _copies_for_another_device(node: fx.Node) -> bool:
    """lift_fresh_copy of a constant whose readers run on another device (torch.tensor(2.0), a CPU scalar, read by a
    CUDA op): lowered, it would be a CPU segment of its own, compiled by the host compiler on a GPU program's first
    call; eagerly it is a copy of a few bytes."""
    if str(node.target) != "aten.lift_fresh_copy.default":
        return False
    here = _node_device(node)
    return any(_node_device(u) not in (None, here) for u in node.users)


def _is_view(node: fx.Node) -> bool:
    """Ops that are views in eager (free there): permute, t, transpose, view, expand, slice, select, ..."""
    t = node.target
    return isinstance(t, torch._ops.OpOverload) and (getattr(t, "is_view", False) or str(t) in _VIEW_LIKE)


def _has_side_effects(node: fx.Node) -> bool:
    """Mutates an argument, or is not an ATen op (a higher-order op, a Python callable): keeps its place."""
    t = node.target
    if t is operator.getitem:
        return False
    if not isinstance(t, torch._ops.OpOverload):
        return True
    return t._schema.is_mutable


def _is_random(node: fx.Node) -> bool:
    t = node.target
    return isinstance(t, torch._ops.OpOverload) and torch.Tag.nondeterministic_seeded in t.tags


def _contiguous_strides(sizes: list[int]) -> list[int]:
    strides, step = [], 1
    for n in reversed(sizes):
        strides.append(step)
        step *= max(n, 1)
    return strides[::-1]


def _is_dense(sizes: list[int], strides: list[int]) -> bool:
    """Non-overlapping and dense: some permutation of the dims is contiguous (size-1 dims' strides don't matter)."""
    dims = sorted((st, n) for n, st in zip(sizes, strides) if n != 1)
    expected = 1
    for st, n in dims:
        if st != expected:
            return False
        expected *= n
    return True


class _Reject(Exception):
    def __init__(self, node, why: str, recoverable: bool = False):
        super().__init__(why)
        self.node = node
        self.why = why
        self.recoverable = recoverable


def _is_sym_int(node: fx.Node) -> bool:
    """A node whose value is a (possibly symbolic) int, such as a size computed from sym_size."""
    val = node.meta.get("val")
    return isinstance(val, (int, torch.SymInt)) and not isinstance(val, bool)


def _has_symbols(val) -> bool:
    if isinstance(val, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        return True
    if isinstance(val, (list, tuple)):
        return any(_has_symbols(v) for v in val)
    if isinstance(val, torch.Tensor):
        return any(isinstance(s, torch.SymInt) for s in list(val.shape) + list(val.stride()))
    return False


def _current_stream(index: int) -> int:
    """The raw handle of PyTorch's current stream on GPU `index` (the cheap private call when there is one)."""
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw(index)
    return torch.cuda.current_stream(index).cuda_stream



class _EagerCall:
    """An eager step with its arguments prepared once: which positions read values of the run, which are constants.
    (fx.node.map_arg walks every argument on every call; this walks only the nodes.)"""

    def __init__(self, node: fx.Node):
        self.target = node.target
        self.args = [self._template(a) for a in node.args]
        self.kwargs = {k: self._template(v) for k, v in node.kwargs.items()}
        self.constant_kwargs = not any(isinstance(v, _Fetch) for v in self.kwargs.values())

    @classmethod
    def _template(cls, a):
        if isinstance(a, fx.Node):
            return _Fetch(a)
        if isinstance(a, (list, tuple)):
            parts = [cls._template(x) for x in a]
            if any(isinstance(p, (_Fetch, _Build)) for p in parts):
                return _Build(type(a) if type(a) in (list, tuple) else list, parts)
            return a
        return a

    @staticmethod
    def _value(t, env):
        if isinstance(t, _Fetch):
            return env[t.node]
        if isinstance(t, _Build):
            return t.kind(_EagerCall._value(p, env) for p in t.parts)
        return t

    def __call__(self, env: dict):
        value = _EagerCall._value
        args = [value(a, env) for a in self.args]
        if self.constant_kwargs:
            return self.target(*args, **self.kwargs)
        return self.target(*args, **{k: value(v, env) for k, v in self.kwargs.items()})


class _Fetch:
    __slots__ = ("node",)

    def __init__(self, node: fx.Node):
        self.node = node


class _Build:
    __slots__ = ("kind", "parts")

    def __init__(self, kind, parts: list):
        self.kind = kind
        self.parts = parts


_MAX_FAST_PATHS = 8


class _CompileJob(NamedTuple):
    """A segment's early compile: its layout key, graph JSON, target, and the JSON without node names (`shape`)."""
    seg: "Segment"
    key: tuple
    source: str
    target: str
    shape: str


_SEGMENTS_PER_UNIT = 8
# NVRTC compiles units of one process concurrently, at ~40 ms of fixed cost per call: a graph's segments spread over
# 4 units compile in parallel threads (GPT block, fresh sources on the H200 host: 4 units 212 ms, one unit 238 ms,
# both with -split-compile; LLaMA block 159 vs 224 ms). HIPRTC's fixed cost per call is ~0.5 s, so AMD targets (and
# the host compiler) keep one unit per _SEGMENTS_PER_UNIT segments.
_NVRTC_UNITS = 4


def _units(jobs: list, target_of) -> list[list]:
    """`jobs` in compile units, per target and in order: on NVIDIA targets spread over _NVRTC_UNITS units (more past
    4 x _SEGMENTS_PER_UNIT jobs, since no unit holds more), elsewhere units of _SEGMENTS_PER_UNIT."""
    by_target: dict = {}
    for job in jobs:
        by_target.setdefault(target_of(job), []).append(job)
    units = []
    for target, group in by_target.items():
        per_unit = _SEGMENTS_PER_UNIT
        if target.startswith("sm_"):
            per_unit = min(per_unit, -(-len(group) // _NVRTC_UNITS))
        units += [group[k:k + per_unit] for k in range(0, len(group), per_unit)]
    return units


def _compile_group(sources, target, names, futures, debug_dir, use_cache) -> None:
    """Compiles `sources` as one unit (_C.compile_many) and sets each result, with its compile_ms, on its future. If
    the unit fails, each source compiles on its own, so that one segment's fault is only that segment's. Every
    future ends resolved."""
    try:
        try:
            compiled = _C.compile_many(sources, target, names, debug_dir=debug_dir, use_cache=use_cache)
        except Exception as e:  # noqa: BLE001 - which segment is at fault is found below, or at its first run
            if len(sources) == 1:
                futures[0].set_exception(e)
                return
            compiled = None
        for k, f in enumerate(futures):
            try:
                cg = compiled[k] if compiled is not None else _C.compile(
                    sources[k], target=target, name=names[k], debug_dir=debug_dir, use_cache=use_cache)
                f.set_result((cg, cg.compile_ms + cg.lower_ms))
            except Exception as e:  # noqa: BLE001 - handed to whoever waits on it
                f.set_exception(e)
    finally:
        for f in futures:
            if not f.done():
                f.set_exception(RuntimeError("hipinductor: the early compile was interrupted"))


def _share_result(future, done) -> None:
    """Resolves `future` (a segment sharing another's compile) from `done` (that compile's), with compile time None:
    the time is the other segment's."""
    try:
        future.set_result((done.result()[0], None))
    except Exception as e:  # noqa: BLE001 - handed to whoever waits on it
        future.set_exception(e)


def _without_names(graph: dict) -> str:
    """A segment's graph JSON with its node names replaced by their order of appearance: equal for segments that
    compile to the same kernels (a model's repeated layers)."""
    names: dict = {}

    def rename(x):
        if isinstance(x, dict):
            return {k: names.setdefault(v, len(names)) if k in ("name", "ref") else rename(v) for k, v in x.items()}
        if isinstance(x, list):
            return [rename(v) for v in x]
        return x

    return json.dumps(rename(graph), sort_keys=True)


def _args_key(args) -> tuple:
    """Which fast path a call takes: each of the inputs' dtype, device, sizes, strides and storage offset."""
    return tuple((t.dtype, t.device, t.shape, t.stride(), t.storage_offset()) for t in args)


_ALIGN = 16  # bytes: the widest vector access


def _aligned(tensors) -> bool:
    """Whether every tensor's first element is _ALIGN-byte aligned, as a segment compiled with "align" needs."""
    return all(t.data_ptr() % _ALIGN == 0 for t in tensors)


def _symbols_key(env: dict) -> tuple:
    """The symbols' values a segment was compiled with, in a stable order."""
    return tuple(sorted((str(k), int(v)) for k, v in env.items()))


def _layout_key(tensors) -> tuple:
    """What a segment is compiled for: each input's dtype, sizes, strides and storage offset."""
    return tuple((t.dtype, t.shape, t.stride(), t.storage_offset()) for t in tensors)
