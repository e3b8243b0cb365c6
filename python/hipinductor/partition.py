"""Partitioning an ATen FX graph into *segments* (maximal runs of nodes hipinductor lowers, each compiled into one
translation unit of fused kernels) and *eager steps* (nodes that run in eager PyTorch: ops without a lowering, random
ops, tensors on devices without a hipinductor runtime, ...), in an order that needs few segments.

A node the compiler rejects later (a Reject raised while a segment is written or compiled) joins `forced_eager`, and
the graph is partitioned again with it eager, so one unsupported case never sends a whole graph to eager.
"""

from __future__ import annotations

import logging
import operator
import threading
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx as fx

from . import _C
from .devices import device_problem
from .nodes import (SUPPORTED_DTYPES, has_side_effects, is_collective, is_random, is_view, node_device, node_tensors,
                    op_name, statically_empty, tensor_meta)
from .options import Options

log = logging.getLogger("hipinductor")

#: Why a lowerable view runs eagerly: its users run eagerly, or what it views does.
EAGER_VIEW = "a view whose users run eagerly"
#: Nodes reading or producing a tensor with no elements run eagerly, where they cost no kernel: in a segment, an empty
#: tensor made the whole segment run eagerly (no index math on sizes of 0), the other nodes' kernels with it.
EMPTY = "an empty tensor"
#: Collectives and their waits run eagerly, as PyTorch's ops, in the graph's order (nodes.has_side_effects): never in a
#: kernel, whatever lowerings exist.
COLLECTIVE = "a collective"
# Ops lowered to atomic adds, whose sums depend on the order the adds land in: under
# torch.use_deterministic_algorithms they run in eager PyTorch (whose deterministic mode has kernels for them, or
# raises where it has none). Dynamo guards on the mode, so turning it on or off compiles the graph anew.
ATOMIC_ADD_OPS = frozenset({"aten.scatter_add.default", "aten.index_add.default", "aten.index_put.default"})


@dataclass
class Segment:
    """Nodes compiled together into one translation unit of kernels, and what running them needs: the compiled graphs
    per input layout, the prepared launches, and the compiles started early (compile_jobs.start_compiles)."""
    nodes: list[fx.Node]
    inputs: list[fx.Node] = field(default_factory=list)   # values read from outside the segment
    outputs: list[fx.Node] = field(default_factory=list)  # values used after the segment
    compiled: dict = field(default_factory=dict)          # layout signature -> _C.CompiledGraph
    rejected: bool = False
    launches: dict = field(default_factory=dict)          # (layout signature, symbols) -> executor.Launch
    pending: dict = field(default_factory=dict)           # layout signature -> Future of a compile started early
    # Graphs with symbolic sizes: aligned -> compile_jobs.SymbolicGraph (compiled once for every size), or the reason
    # the segment compiles per size instead (a str: the core's error, a value the format cannot write symbolically).
    symbolic: dict = field(default_factory=dict)
    # Inputs that another segment writes: fresh allocations in graph_format.output_layout's layout, which is not the
    # traced one where that is not dense (an expand's stride 0 is materialised).
    produced: set = field(default_factory=set)
    # dynamo's symbols that the segment's symbolic document holds (compile_jobs.divisible_symbols), once known.
    symbols: frozenset | None = None
    # The names its symbolic documents give dynamo's symbols (compile_jobs.symbolic_document: the same for every
    # variant), once one was written.
    symbol_names: object = None
    # (device, target) of compile_jobs.device_and_target, once asked (a segment's options never change).
    device_target: tuple | None = None


class Reject(Exception):
    """`node` cannot be compiled after all (`why`); `recoverable` where the compiler said so (LoweringError,
    GraphFormatError), which strict mode then still lets run eagerly."""

    def __init__(self, node, why: str, recoverable: bool = False):
        super().__init__(why)
        self.node = node
        self.why = why
        self.recoverable = recoverable


@dataclass
class Partition:
    """The steps of a graph in run order (Segment, or an fx.Node run eagerly) and what was lowered, per op name."""
    steps: list
    ops_lowered: list[str]
    fallback_ops: list[str]
    eager_views: list[str]
    eager_empty: list[str]
    collectives: list[str]


_warned_fallbacks: set[str] = set()
_warned_lock = threading.Lock()


def warn_fallback_once(op: str, why: str) -> None:
    """Logs, once per process and op, that `op` runs in eager PyTorch and why."""
    with _warned_lock:
        if op in _warned_fallbacks:
            return
        _warned_fallbacks.add(op)
    log.warning("hipinductor: %s runs in eager PyTorch (%s)", op, why)


def partition(gm: fx.GraphModule, options: Options, forced_eager: set) -> Partition:
    """Orders the graph into eager steps and segments (see _schedule), and records what was lowered."""
    decision = _decide(gm, options, forced_eager)
    lowered_ops: list[str] = []
    fallback_ops: list[str] = []
    eager_views: list[str] = []
    eager_empty: list[str] = []
    collectives: list[str] = []
    for node in gm.graph.nodes:
        if node.op != "call_function" or node.target is operator.getitem:
            continue
        ok, why = decision[node]
        if ok:
            lowered_ops.append(op_name(node))
        elif why == EAGER_VIEW:
            eager_views.append(op_name(node))
        elif why == EMPTY:
            eager_empty.append(op_name(node))
        elif why == COLLECTIVE:
            collectives.append(op_name(node))
        else:
            fallback_ops.append(op_name(node))
            warn_fallback_once(op_name(node), why)
    steps = _schedule(gm, {n for n, (ok, _) in decision.items() if ok})
    _wire_segments(gm, steps)
    return Partition(steps, sorted(set(lowered_ops)), sorted(set(fallback_ops)), sorted(set(eager_views)),
                     sorted(set(eager_empty)), sorted(set(collectives)))


def _lowerable(node: fx.Node, options: Options, forced_eager: set) -> tuple[bool, str]:
    if node.op != "call_function":
        return False, "not a call"
    if node.target is operator.getitem:
        return True, ""
    if not isinstance(node.target, torch._ops.OpOverload):
        return False, "not an ATen op"
    if is_collective(node):
        return False, COLLECTIVE
    name = op_name(node)
    if name in options.fallback_ops:
        return False, "listed in options['fallback_ops']"
    if not _C.has_lowering(name):
        return False, "no lowering"
    if name in ATOMIC_ADD_OPS and torch.are_deterministic_algorithms_enabled():
        return False, "deterministic algorithms are enabled (its atomic adds sum in no fixed order)"
    if node in forced_eager:
        return False, "the compiler rejected this node"
    if copies_for_another_device(node):
        return False, "a constant copied for an op on another device"
    tensors = node_tensors(node)
    if not tensors:
        return False, "produces no tensor"
    for a in node.all_input_nodes:
        tensors += node_tensors(a)
    for t in tensors:
        if t.dtype not in SUPPORTED_DTYPES:
            return False, f"dtype {t.dtype}"
        problem = device_problem(t)
        if problem:
            return False, problem
        if t.device != tensors[0].device:
            return False, "inputs on several devices"
    if any(statically_empty(t) for t in tensors):
        return False, EMPTY
    return True, ""


def _decide(gm: fx.GraphModule, options: Options, forced_eager: set) -> dict:
    """node -> (lowered?, why not). A view runs eagerly, where it is free, when lowering it buys nothing:
    - its users are not lowered: lowered, it would be a copy kernel (a transposed weight feeding an eager matmul,
      copied every call);
    - what it views is not lowered (a graph input, an eager matmul's result): kernels read the eager view as an
      input just as they would read through a lowered one, and eager readers of it then need no copy."""
    decision = {}
    lowered = lambda n: decision.get(n, (False, ""))[0]  # noqa: E731
    for node in gm.graph.nodes:
        if node.op == "call_function":
            decision[node] = _lowerable(node, options, forced_eager)
            base = node.args[0] if node.args else None
            if decision[node][0] and is_view(node) and isinstance(base, fx.Node) and not lowered(base):
                decision[node] = (False, EAGER_VIEW)
    for node in reversed(list(gm.graph.nodes)):
        # (a getitem counts as a view here: the pieces of a split feeding eager ops leave the split a view)
        if decision.get(node, (False, ""))[0] and (is_view(node) or node.target is operator.getitem):
            if not any(decision.get(u, (False, ""))[0] for u in node.users):
                decision[node] = (False, EAGER_VIEW)
    return decision


def _schedule(gm: fx.GraphModule, lowered: set) -> list:
    """Steps in an order that needs few segments: the graph's order is only one of its topological orders, and
    taken as it is, every eager node splits the lowered run around it (silu(gate(h)) * up(h) would be two kernels
    with the eager up-projection between them).

    Eager nodes run as early as their inputs allow (wave w: after segment w-1); lowered nodes run as late as their
    users allow (segment k: before the eager wave k+1 that first reads them), so a lowered node joins the segment
    of what consumes it rather than being written out early. A node with side effects (mutating an input, an
    op that is not an ATen op) stays a barrier in graph order; random ops keep their order among themselves."""
    nodes = [n for n in gm.graph.nodes if n.op == "call_function"]
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
        if has_side_effects(n):
            deps[n].update(since_barrier)
            barrier, since_barrier = n, []
            continue
        since_barrier.append(n)
        if is_random(n):
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
                by_device.setdefault(node_device(src), []).append(n)
        steps.extend(Segment(group) for group in by_device.values())
    return steps


def _wire_segments(gm: fx.GraphModule, steps: list) -> None:
    """Each segment's inputs (tensors it reads from outside) and outputs (values read after it)."""
    order = {n: i for i, n in enumerate(gm.graph.nodes)}
    for seg in (s for s in steps if isinstance(s, Segment)):
        inside = set(seg.nodes)
        seen = []
        for n in seg.nodes:
            for a in n.all_input_nodes:
                if a not in inside and a not in seen:
                    seen.append(a)
        seg.inputs = [a for a in seen if tensor_meta(a) is not None]
        last = max(order[n] for n in seg.nodes)
        outs = []
        for n in seg.nodes:
            if tensor_meta(n) is None:
                continue  # tuple-valued nodes are read through their getitems
            if any(u not in inside or order[u] > last for u in n.users):
                outs.append(n)
        seg.outputs = outs
    written = {n for seg in steps if isinstance(seg, Segment) for n in seg.outputs}
    for seg in (s for s in steps if isinstance(s, Segment)):
        seg.produced = {n for n in seg.inputs if n in written}


def copies_for_another_device(node: fx.Node) -> bool:
    """lift_fresh_copy of a constant whose readers run on another device (torch.tensor(2.0), a CPU scalar, read by a
    CUDA op): lowered, it would be a CPU segment of its own, compiled by the host compiler on a GPU program's first
    call; eagerly it is a copy of a few bytes."""
    if str(node.target) != "aten.lift_fresh_copy.default":
        return False
    here = node_device(node)
    return any(node_device(u) not in (None, here) for u in node.users)
