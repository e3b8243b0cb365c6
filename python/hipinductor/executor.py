"""Running a partitioned graph: the call of a compiled graph (its fast path for the inputs' layout where one was
written, else the general path), segments (compiled for the layouts they receive, then launched) and eager steps.

The general path looks every step up and checks it; a call whose input layout has no fast path yet records what its
segments did and has fast_path.build write one for the next calls with that layout. A node the compiler rejects
(Reject) is moved to eager and the graph partitioned again; any other fault sends the graph to eager PyTorch with one
warning, unless strict.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import torch
import torch.fx as fx

from . import _C, fast_path
from .compile_jobs import (compile_segment, device_and_target, divisible_symbols, index32_for_call, layout_key,
                           symbolic_for_call)
from .devices import aligned as all_aligned, current_stream
from .graph_format import input_layout, output_layout, symbolic_output_strides
from .nodes import op_name, tensor_meta
from .options import Options
from .partition import Reject, Segment, partition, warn_fallback_once
from .reporting import Report
from .symbolic import Layouts, bind

log = logging.getLogger("hipinductor")

#: Input layouts of one graph that get a fast path of their own; calls with others take the general path.
MAX_FAST_PATHS = 8
#: The same for a graph with symbolic sizes, whose calls bring many layouts (a sequence length each): past this
#: many, the oldest fast path makes room for the new one, each costing one general-path call to write.
MAX_SYMBOLIC_FAST_PATHS = 64
#: Layouts of a graph with symbolic sizes remembered as called once (the next call at one writes its fast path);
#: forgotten all together past this many.
MAX_SEEN_ONCE = 4096


@dataclass
class Launch:
    """What one call of a segment needs besides its inputs, prepared once per input layout: the hot path then only
    allocates the outputs and calls the kernels."""
    compiled: Any                      # _C.CompiledGraph, or None: run the segment eagerly (empty tensors)
    device: torch.device | None = None
    outputs: list = field(default_factory=list)  # (sizes, strides, dtype) per segment output
    workspace_bytes: int = 0
    aligned: bool = False              # compiled with "align": needs every input's first element ALIGN-aligned
    sizes: list | None = None          # compiled once for every size: the values of its symbols in this layout
    stand_in: bool = False             # a more general compile while the layout's own compiles: for this call only


def args_key(args) -> tuple:
    """Which fast path a call takes: each of the inputs' dtype, device, sizes, strides and storage offset (and the
    value of each int input: a symbolic size dynamo passes). Raises AttributeError for other inputs."""
    return tuple((t.dtype, t.device, t.shape, t.stride(), t.storage_offset()) if type(t) is not int else t
                 for t in args)


def _not_an_int(value):
    raise AttributeError(f"a size input is {type(value).__name__}, not int")


def key_function(placeholders: list[fx.Node], key_inputs: list[int] | None) -> Callable[[Any], tuple]:
    """args -> the fast paths' key of a call: what args_key gives for the inputs `key_inputs` (None: all), flattened
    into one tuple, by straight-line code written for this graph's inputs (a key is built on every call: no
    generator, no per-input tuple, no type test for inputs traced as tensors). Raises AttributeError, IndexError or
    TypeError where args_key would not give a key (an input that is not a tensor, or not an int where the graph
    takes one; fewer arguments)."""
    parts = []
    for i in range(len(placeholders)) if key_inputs is None else key_inputs:
        val = placeholders[i].meta.get("val")
        a = f"args[{i}]"
        if isinstance(val, torch.Tensor):
            parts.append(f"{a}.dtype, {a}.device, {a}.shape, {a}.stride(), {a}.storage_offset()")
        elif isinstance(val, (int, torch.SymInt)):
            parts.append(f"{a} if type({a}) is int else not_an_int({a})")
        else:  # what the trace does not say: as args_key takes it (one element of the key)
            parts.append(f"({a}.dtype, {a}.device, {a}.shape, {a}.stride(), {a}.storage_offset()) "
                         f"if type({a}) is not int else {a}")
    source = f"def key_of(args):\n    return ({''.join(p + ', ' for p in parts)})\n"
    namespace = {"not_an_int": _not_an_int}
    exec(compile(source, "<hipinductor fast path key>", "exec"), namespace)
    return namespace["key_of"]


class Executor:
    """How an ATen graph runs once partitioned. Whoever builds it (graph_module.CompiledFxGraph) runs the graph's
    passes first, sets `symbolic`, `fast_paths_apply` and `key_inputs`, and calls plan()."""

    def __init__(self, gm: fx.GraphModule, options: Options, name: str, report: Report):
        self.gm = gm
        self.options = options
        self.name = name
        self.report = report
        self.lock = threading.Lock()
        self.forced_eager: set[fx.Node] = set()
        self.graph_eager_reason: str | None = None
        nodes = list(gm.graph.nodes)
        self.placeholders = [n for n in nodes if n.op == "placeholder"]
        self.constants = [n for n in nodes if n.op == "get_attr"]
        self.output = next(n for n in nodes if n.op == "output")
        self.steps: list = []
        self.symbolic = False   # graph inputs with symbolic sizes: symbols bound per call
        self.fast_paths_apply = False
        self.fast_paths: dict[tuple, Any] = {}  # graph inputs' layouts -> fast_path function, or False
        self.key_inputs: list[int] | None = None  # the inputs the fast paths' key reads; None: all of them
        self._key_of = None  # args -> the fast paths' key (key_function), made by plan(); None: no fast paths
        self._eager_calls: dict[fx.Node, EagerCall] = {}
        self._layouts = Layouts()  # symbolic tensors' layouts at a call's symbol values
        self._seen_once: set = set()  # layouts of a graph with symbolic sizes called once, without a fast path

    def plan(self) -> None:
        """Partitions the graph (again, after a rejection: fast paths written for the old steps are dropped)."""
        p = partition(self.gm, self.options, self.forced_eager)
        self.steps = p.steps
        self.fast_paths = {}
        self._key_of = key_function(self.placeholders, self.key_inputs) if self.fast_paths_apply else None
        self.report["ops_lowered"] = p.ops_lowered
        self.report["fallback_ops"] = p.fallback_ops
        self.report["eager_views"] = p.eager_views
        self.report["eager_empty"] = p.eager_empty
        self.report["collectives"] = p.collectives
        self.report["segments"] = sum(isinstance(s, Segment) for s in self.steps)

    def segment_name(self, seg: Segment) -> str:
        return f"{self.name}_s{self.steps.index(seg)}"

    def __call__(self, *args):
        return self.call_boxed(args)

    def call_boxed(self, args):
        """One call, in AOTAutograd's boxed convention (`args` the list of the graph's inputs, left as it is): the
        fast path written for the inputs' layout where there is one, else the general path. This is the per-call
        hot path: one key (built by code generated for this graph's inputs), one dict lookup, the fast path."""
        key_of = self._key_of
        if key_of is None:  # HIPINDUCTOR_CHECK: every call takes the general path
            return self._call(args, None)
        try:
            key = key_of(args)
        except (AttributeError, IndexError, TypeError):  # not all tensors, or fewer than the graph's inputs
            return self._call(args, None)
        fast = self.fast_paths.get(key)
        if not fast:
            return self._call(args, key)
        try:
            return fast(args)
        except Exception as e:  # noqa: BLE001 - handled as a general-path failure is (see _call)
            return self._call(args, key, e)

    call_boxed._boxed_call = True  # AOTAutograd passes the argument list itself (as to make_boxed_func's)

    def _call(self, args, key, fast_path_error: Exception | None = None):
        """A call without a fast path for its layout `key` (None: no key), or whose fast path raised
        `fast_path_error`: the general path, which compiles and writes the fast path where it can."""
        if self.graph_eager_reason is not None:
            return self.gm(*args)
        # The values this call has computed so far. A retry after a rejection, and the eager run after a fault, take
        # them up where the failed attempt left off: an eager step that already ran (a collective, which every other
        # process issues once; a random op; an op mutating an input) must not run again.
        env: dict[fx.Node, Any] = {}
        while True:
            try:
                if fast_path_error is not None:
                    e, fast_path_error = fast_path_error, None
                    raise e
                return self._run(args, key, env)
            except Reject as r:
                self._reject(r)
            except Exception as e:  # noqa: BLE001 - a compiler fault must never kill the user's program
                if self.options.strict:
                    raise
                self.graph_eager_reason = f"{type(e).__name__}: {e}"
                self.fast_paths = {}
                self.report["eager_reason"] = self.graph_eager_reason
                log.warning("hipinductor: graph %s runs in eager PyTorch: %s", self.name, self.graph_eager_reason)
                return self._finish_eagerly(args, env)

    def _finish_eagerly(self, args, env: dict):
        """The rest of a call whose steps failed part way, in eager PyTorch and graph order (every step order
        partition makes keeps the graph's dependencies, so what already ran is an earlier part of it)."""
        if not env:
            return self.gm(*args)
        for node in self.gm.graph.nodes:
            if node.op == "call_function" and node not in env:
                env[node] = EagerCall(node)(env)
        return fx.node.map_arg(self.output.args[0], env.__getitem__)

    def _reject(self, r: Reject) -> None:
        if r.node is None or r.node in self.forced_eager:
            raise RuntimeError(f"hipinductor: segment rejected: {r.why}")
        if self.options.strict and not r.recoverable:
            raise RuntimeError(f"hipinductor: node '{r.node.name}' ({op_name(r.node)}): {r.why}")
        with self.lock:
            self.forced_eager.add(r.node)
            warn_fallback_once(op_name(r.node), r.why)
            self.plan()

    def _run(self, args, key, env: dict):
        """The general path: every step looked up and checked. A call whose layout `key` has no fast path yet records
        what its segments did and writes one (fast_path.build) for the next calls with that layout. Values go to
        `env`; eager steps whose value is there already (from an attempt of this call that a rejection cut short) are
        not run again."""
        if self.report["first_call_ms"] is None:  # what torch.compile's first call spends in hipinductor
            start = time.perf_counter()
            try:
                return self._run_steps(args, key, env)
            finally:
                self.report["first_call_ms"] = (time.perf_counter() - start) * 1000.0
        return self._run_steps(args, key, env)

    def _run_steps(self, args, key, env: dict):
        env.update(zip(self.placeholders, args))
        for node in self.constants:  # constants AOTAutograd lifted into the module (_tensor_constant0, ...)
            env[node] = getattr(self.gm, node.target)
        symbols = self._bind_symbols(args) if self.symbolic else {}
        # id(segment) -> the launch it ran, for the fast path this call writes
        launches = ({} if key is not None and key not in self.fast_paths and self._repeats(key)
                    and self._room_for_fast_path() else None)
        for step in self.steps:
            if isinstance(step, Segment):
                launch = self.run_segment(step, env, symbols)
                if launches is not None:
                    # A stand-in is not what later calls at this layout run: they write the fast path.
                    launches = None if launch.stand_in else launches
                    if launches is not None:
                        launches[id(step)] = launch
                continue
            if step in env:
                continue
            call = self._eager_calls.get(step)
            if call is None:
                call = self._eager_calls[step] = EagerCall(step)
            env[step] = call(env)
        if launches is not None and self.graph_eager_reason is None:  # (another thread's call may have failed)
            self.fast_paths[key] = self._write_fast_path(launches, env, symbols)
        return fx.node.map_arg(self.output.args[0], env.__getitem__)

    def _repeats(self, key) -> bool:
        """Whether a call with layout `key` is worth a fast path: always in a static graph; in a graph with symbolic
        sizes from the layout's second call on, so that a size seen once (serving traffic, the last batch of an
        epoch) does not pay for writing and compiling one on its call's path."""
        if not self.symbolic or key in self._seen_once:
            return True
        if len(self._seen_once) >= MAX_SEEN_ONCE:
            self._seen_once.clear()
        self._seen_once.add(key)
        return False

    def _room_for_fast_path(self) -> bool:
        """Whether a new layout gets a fast path: below MAX_FAST_PATHS, or for a graph with symbolic sizes after
        dropping its oldest one past MAX_SYMBOLIC_FAST_PATHS."""
        if len(self.fast_paths) < MAX_FAST_PATHS:
            return True
        if not self.symbolic:
            return False
        while len(self.fast_paths) >= MAX_SYMBOLIC_FAST_PATHS:
            try:
                del self.fast_paths[next(iter(self.fast_paths))]
            except (StopIteration, KeyError, RuntimeError):  # another thread changed it: try again next call
                return False
        return True

    def _write_fast_path(self, launches, env, symbols):
        try:
            fn = fast_path.build(self, launches, fast_path.layouts_of(env), symbols)
        except Exception as e:  # noqa: BLE001 - the general path stays correct; only slower
            log.debug("hipinductor: no fast path for graph %s: %s", self.name, e)
            return False
        if fn is not None and self.options.debug_dir:
            folder = os.path.join(self.options.debug_dir, self.name)
            os.makedirs(folder, exist_ok=True)
            with open(os.path.join(folder, f"fast_path_{len(self.fast_paths)}.py"), "w") as f:
                f.write(fn.source)
        return fn or False

    def _bind_symbols(self, args) -> dict:
        env = {}
        for node, value in zip(self.placeholders, args):
            val = node.meta.get("val")
            if isinstance(val, torch.SymInt) and isinstance(value, int) and val.node.expr.is_symbol:
                env[val.node.expr] = value
            elif isinstance(val, torch.Tensor) and isinstance(value, torch.Tensor):
                for s, v in zip([*val.shape, *val.stride(), val.storage_offset()],
                                [*value.shape, *value.stride(), value.storage_offset()]):
                    if isinstance(s, torch.SymInt) and s.node.expr.is_symbol:
                        env[s.node.expr] = v
        return env

    def run_segment(self, seg: Segment, env: dict, symbols: dict) -> Launch:
        """Runs `seg` on its inputs' values in `env` (compiling it for their layout first where needed) and stores its
        outputs there; returns the launch it ran."""
        inputs = [env[n] for n in seg.inputs]
        try:
            aligned = all_aligned(inputs)
            key = (layout_key(inputs), aligned, tuple(symbols.values()))
        except AttributeError:  # not a tensor
            aligned, key = False, None
        launch = seg.launches.get(key) if key is not None else None
        if launch is None:
            launch = self._prepare_launch(seg, inputs, symbols, aligned)
            if not launch.stand_in:
                seg.launches[key] = launch
        if launch.compiled is None:
            _run_eagerly(seg, env)
            return launch
        cg, device = launch.compiled, launch.device
        outputs = [torch.empty_strided(sizes, strides, dtype=dtype, device=device)
                   for sizes, strides, dtype in launch.outputs]
        # Kernels address element 0 of each storage and apply storage offsets themselves (they are compiled in, or
        # computed from the symbols' values).
        in_ptrs = [t.untyped_storage().data_ptr() for t in inputs]
        out_ptrs = [t.untyped_storage().data_ptr() for t in outputs]
        sizes = {"sizes": launch.sizes} if launch.sizes else {}
        if device.type == "cpu":
            cg.run(in_ptrs, out_ptrs, autotune=self.options.autotune, **sizes)
        else:
            # GPU: launch on PyTorch's current stream; the workspace comes from PyTorch's caching allocator.
            index = device.index or 0
            workspace = (torch.empty(launch.workspace_bytes, dtype=torch.uint8, device=device)
                         if launch.workspace_bytes else None)
            cg.run(in_ptrs, out_ptrs, stream=current_stream(index),
                   workspace=workspace.data_ptr() if workspace is not None else 0, device=index,
                   autotune=self.options.autotune, **sizes)
        if self.options.check:
            self._check_against_eager(seg, env, outputs, cg)
        for n, t in zip(seg.outputs, outputs):
            env[n] = t
        return launch

    def _prepare_launch(self, seg: Segment, inputs: list, symbols: dict, aligned: bool) -> Launch:
        for n, t in zip(seg.inputs, inputs):
            if not isinstance(t, torch.Tensor):
                raise Reject(next(u for u in seg.nodes if n in u.all_input_nodes), f"input '{n.name}' is not a tensor")
        outputs = [(*self._output_layout(n, symbols), tensor_meta(n).dtype) for n in seg.outputs]
        if any(t.numel() == 0 for t in inputs) or any(0 in sizes for sizes, _, _ in outputs):
            return Launch(None)  # empty tensors: nothing worth a kernel, and no index math on 0
        symbolic_why = None
        if self.symbolic:
            launch = self._symbolic_launch(seg, inputs, symbols, aligned, outputs)
            if not isinstance(launch, str):
                return launch
            symbolic_why = launch
        try:
            cg = compile_segment(seg, inputs, symbols, aligned, name=self.segment_name(seg), options=self.options,
                                 report=self.report, symbolic_why=symbolic_why)
        except _C.LoweringError as e:
            node = _node_named(seg, getattr(e, "node", None))
            raise Reject(node, str(e), recoverable=True) from None
        except _C.GraphFormatError as e:
            m = re.search(r"node '([^']+)'", str(e))
            node = _node_named(seg, m.group(1) if m else None)
            raise Reject(node, str(e), recoverable=True) from None
        device, _ = device_and_target(seg, self.options)
        return Launch(cg, device, outputs, cg.workspace_bytes, aligned)

    def _output_layout(self, node: fx.Node, symbols: dict) -> tuple[list, list]:
        """(sizes, strides) of a segment output at the call's symbol values: graph_format.output_layout's."""
        meta = tensor_meta(node)
        if self.symbolic:
            return self._layouts.output(node, meta, symbols, symbolic_output_strides)
        lay = output_layout(meta, symbols)
        return lay["sizes"], lay["strides"]

    def _symbolic_launch(self, seg: Segment, inputs: list, symbols: dict, aligned: bool,
                         outputs: list) -> Launch | str:
        """The launch of `seg`'s compile for every size at this call's symbol values, or why there is none (the
        segment then compiles for this call's layout, as a static graph's does; reported once per segment)."""
        # The variant for the symbols whose values here are multiples of SIZE_DIVISOR and for 32-bit indices where
        # the call's tensors fit them (both promised to the compiler), or a more general one: where that cannot
        # compile, or as a stand-in while it compiles in the background.
        layouts = [(t.shape, t.stride(), t.storage_offset()) for t in inputs]
        layouts += [(sizes, strides, 0) for sizes, strides, _ in outputs]
        call = (aligned, divisible_symbols(seg, symbols, self.options), index32_for_call(layouts))
        launch = self._symbolic_variant_launch(seg, inputs, symbols, call, outputs)
        if isinstance(launch, str) and call[2]:
            # The core refused the 32-bit variant at these sizes (an iteration space past the tensors' own): 64-bit.
            launch = self._symbolic_variant_launch(seg, inputs, symbols, (*call[:2], False), outputs)
        return launch

    def _symbolic_variant_launch(self, seg: Segment, inputs: list, symbols: dict, call: tuple,
                                 outputs: list) -> Launch | str:
        done, stand_in = symbolic_for_call(seg, call, name=self.segment_name(seg), options=self.options,
                                           report=self.report)
        if isinstance(done, str):
            self.report["symbolic_fallbacks"].setdefault(self.segment_name(seg), done)
            return done
        # What the symbolic compile assumes of each input: the layout its trace gives, at these symbol values.
        # dynamo's guards hold it for graph inputs; values made by eager ops (a GEMM's result) are checked here.
        for n, t in zip(seg.inputs, inputs):
            if not self._layouts.input_matches(n, tensor_meta(n), t, symbols,
                                               functools.partial(input_layout, seg, n)):
                return (f"input '{n.name}' has sizes {tuple(t.shape)}, strides {t.stride()}, offset "
                        f"{t.storage_offset()}, not the traced layout at these sizes")
        try:
            sizes = bind(done.symbols, symbols)
        except KeyError as e:
            return f"symbol {e} has no value in this call"
        cg = done.compiled
        # The core compiles for symbols of at least 1 (and any divisibility the document promised): a binding it
        # cannot take is refused here, once per layout, by the accessor that evaluates the workspace for it.
        small = [f"{s}={v}" for s, v in zip(done.symbols, sizes) if v < 1]
        if small:
            return f"symbol values below 1 ({', '.join(small)})"
        try:
            workspace = _workspace_bytes(cg, sizes)
        except ValueError as e:
            return f"the compiled graph refuses these sizes: {e}"
        device, _ = device_and_target(seg, self.options)
        self.report["index32_launches" if cg.index32 else "index64_launches"] += 1
        return Launch(cg, device, outputs, workspace, call[0] and not stand_in, sizes, stand_in)

    def _check_against_eager(self, seg: Segment, env: dict, outputs: list[torch.Tensor], cg) -> None:
        reference = dict(env)
        _run_eagerly(seg, reference)
        for n, got in zip(seg.outputs, outputs):
            want = reference[n]
            if not torch.allclose(got.float(), want.float(), rtol=2e-2, atol=2e-2, equal_nan=True):
                err = (got.float() - want.float()).abs().max().item()
                raise RuntimeError(f"hipinductor check: graph {self.name}, segment '{cg.name}', output '{n.name}' "
                                   f"differs from eager by up to {err:g}; kernels: {cg.kernel_names}")


def _workspace_bytes(cg, sizes: list[int]) -> int:
    """The workspace `cg`'s kernels need at the symbols' values `sizes`."""
    return cg.workspace_bytes_for(sizes) if sizes else cg.workspace_bytes


def _run_eagerly(seg: Segment, env: dict) -> None:
    for node in seg.nodes:
        a = fx.node.map_arg(node.args, lambda n: env[n])
        kw = fx.node.map_arg(node.kwargs, lambda n: env[n])
        env[node] = node.target(*a, **kw)


def _node_named(seg: Segment, name: str | None):
    if name is None:
        return seg.nodes[0]
    for n in seg.nodes:
        if n.name == name:
            return n
    return seg.nodes[0]


class EagerCall:
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
            return t.kind(EagerCall._value(p, env) for p in t.parts)
        return t

    def __call__(self, env: dict):
        value = EagerCall._value
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
