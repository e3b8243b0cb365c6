"""Compiling segments: once for every size where the graph has symbolic sizes (`compile_symbolic`), for the layouts
a call brings (`compile_segment`, cached per layout, aligned-ness and symbols' values), and early, when the graph is built, for the layouts its traced fake tensors predict (`start_compiles`): then
the first call mostly waits for compiles already under way instead of running them one after another.

Early compiles go to the compiler in *units* (one `_C.compile_many` call, one translation unit each), in threads of
the graph's own that `_C` runs without the GIL; segments that differ only in node names (a model's repeated layers)
share one compile.
"""

from __future__ import annotations

import concurrent.futures
import functools
import json
import operator
import os
import threading
import time
from typing import NamedTuple

import torch

from . import _C
from .devices import gpu_target
from .graph_format import segment_json, without_names
from .nodes import node_device, tensor_meta
from .options import Options
from .partition import Segment
from .symbolic import NotExpressible, SymbolNames, evaluate

#: The key of a segment's symbolic compile in Segment.compiled and Segment.pending (with its variant: aligned-ness,
#: the symbols promised divisible, and whether it indexes in 32 bits).
SYMBOLIC = "symbolic"
#: What a symbolic compile may be promised of a symbol (Options.divisibility_variants): a multiple of 16 makes every
#: vector width (8 x 2 bytes, 4 x 4, 2 x 8) divide a row of that many elements and keeps rows 16-element aligned;
#: Triton specialises its launches on the same divisor.
SIZE_DIVISOR = 16
#: Extents (elements of a tensor's storage, of a kernel's iteration space) below which kernels index in 32 bits: the
#: core's kIndex32Limit. A symbolic compile promised that every call keeps them below it (index32) indexes in 32 bits;
#: the core refuses a binding that breaks the promise, which the call then runs on a 64-bit variant.
INDEX32_LIMIT = _C.INDEX32_LIMIT
#: The symbolic compile that serves every call (any alignment, no divisibility promised, 64-bit indices): compiled in
#: the background after a segment's first symbolic compile, so that a call whose own variant is not compiled yet runs
#: on it while that variant compiles in the background, instead of compiling on the call's path.
UNIVERSAL = (False, frozenset(), False)
#: Whether `_C` compiles graphs with symbolic sizes once for every size (its CompiledGraph names their symbols).
CORE_COMPILES_SYMBOLICALLY = hasattr(_C.CompiledGraph, "symbols")

SEGMENTS_PER_UNIT = 8
# NVRTC compiles units of one process concurrently, at ~40 ms of fixed cost per call: a graph's segments spread over
# 4 units compile in parallel threads (GPT block, fresh sources on the H200 host: 4 units 212 ms, one unit 238 ms,
# both with -split-compile; LLaMA block 159 vs 224 ms). HIPRTC's fixed cost per call is ~0.5 s, so AMD targets (and
# the host compiler) keep one unit per SEGMENTS_PER_UNIT segments.
NVRTC_UNITS = 4


class SymbolicGraph(NamedTuple):
    """A segment compiled once for every size: the compiled graph and dynamo's symbols in the order of its
    `symbols` (the values its run takes as `sizes`)."""
    compiled: object
    symbols: list


class CompileJob(NamedTuple):
    """A segment's early compile: its layout key, graph JSON, target, and the JSON without node names (`shape`)."""
    seg: Segment
    key: tuple
    source: str
    target: str
    shape: str


def layout_key(tensors) -> tuple:
    """What a segment is compiled for: each input's dtype, sizes, strides and storage offset."""
    return tuple((t.dtype, t.shape, t.stride(), t.storage_offset()) for t in tensors)


def symbols_key(env: dict) -> tuple:
    """The symbols' values a segment was compiled with, in a stable order."""
    return tuple(sorted((str(k), int(v)) for k, v in env.items()))


def device_and_target(seg: Segment, options: Options):
    """The device a segment runs on and the target its kernels compile for (None: no GPU runtime); found once per
    segment (a graph with symbolic sizes asks at each new size, on the call's path)."""
    if seg.device_target is None:
        device = node_device(next(n for n in seg.nodes if n.target is not operator.getitem))
        seg.device_target = (device, options.target if device.type == "cpu" else gpu_target(device))
    return seg.device_target


def units(jobs: list, target_of) -> list[list]:
    """`jobs` in compile units, per target and in order: on NVIDIA targets spread over NVRTC_UNITS units (more past
    4 x SEGMENTS_PER_UNIT jobs, since no unit holds more), elsewhere units of SEGMENTS_PER_UNIT."""
    by_target: dict = {}
    for job in jobs:
        by_target.setdefault(target_of(job), []).append(job)
    out = []
    for target, group in by_target.items():
        per_unit = SEGMENTS_PER_UNIT
        if target.startswith("sm_"):
            per_unit = min(per_unit, -(-len(group) // NVRTC_UNITS))
        out += [group[k:k + per_unit] for k in range(0, len(group), per_unit)]
    return out


def start_compiles(steps: list, graph_name: str, options: Options, symbolic: bool = False) -> None:
    """Starts compiling every segment of `steps`, in parallel threads, for the layouts its fake tensors predict (a
    static graph's) or for every size (`symbolic`: a graph with symbolic sizes), with aligned inputs; each compile's
    Future waits in its segment's `pending`. A segment whose real layout differs compiles at its first call as
    usual."""
    jobs = []
    for seg in (s for s in steps if isinstance(s, Segment)):
        try:
            metas = [tensor_meta(n) for n in seg.inputs]
            if any(m is None for m in metas) or (not symbolic and any(m.numel() == 0 for m in metas)):
                continue
            _, target = device_and_target(seg, options)
            if target is None:
                continue
            # PyTorch's allocators align storages; a call that is not compiles.
            if symbolic:
                if not CORE_COMPILES_SYMBOLICALLY:
                    continue
                # The variant the first call most likely takes: the one for the sizes traced.
                values = traced_values(metas)
                variant = (True, divisible_symbols(seg, values, options),
                           index32_for_call(seg_layouts(seg, values)))
                key = (SYMBOLIC, *variant)
                graph, _ = symbolic_document(seg, *variant)
            else:
                key = (layout_key(metas), True, symbols_key({}))
                graph = segment_json(seg, metas, {}, aligned=True)
            job = CompileJob(seg, key, json.dumps(graph), target, without_names(graph))
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
    # Compile units (one compiler call, one translation unit each; see units), in threads of this graph's own
    # that end with it; _C.compile_many releases the GIL. A unit's segments each load all of it, hence units of
    # at most SEGMENTS_PER_UNIT. A failure leaves each segment to compile (and report) on its own.
    groups = units(jobs, target_of=lambda job: job.target)
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=min(len(groups), max(2, min(8, os.cpu_count() or 2))),
                                                 thread_name_prefix="hipinductor-compile")
    for unit in groups:
        futures = [concurrent.futures.Future() for _ in unit]
        for job, future in zip(unit, futures):
            job.seg.pending[job.key] = future
        names = [f"{graph_name}_s{steps.index(job.seg)}" for job in unit]
        pool.submit(_compile_group, [job.source for job in unit], unit[0].target, names, futures,
                    options.debug_dir, options.use_cache)
    for copy, original in copies:
        future = concurrent.futures.Future()
        copy.seg.pending[copy.key] = future
        original.seg.pending[original.key].add_done_callback(functools.partial(_share_result, future))
    pool.shutdown(wait=False)


def symbolic_document(seg: Segment, aligned: bool, divisible: frozenset = frozenset(),
                      index32: bool = False) -> tuple[dict, SymbolNames]:
    """The symbolic graph document of `seg` (its inputs' fake tensors' layouts, sizes as written by dynamo) and the
    names it gives dynamo's symbols; `divisible` (dynamo's symbols) are promised multiples of SIZE_DIVISOR, and
    `index32` promises every extent below INDEX32_LIMIT. Raises NotExpressible, and Reject as segment_json does."""
    metas = [tensor_meta(n) for n in seg.inputs]
    missing = [n.name for n, m in zip(seg.inputs, metas) if m is None]
    if missing:
        raise NotExpressible(f"input '{missing[0]}' has no traced tensor")
    names = SymbolNames()
    graph = segment_json(seg, metas, {}, aligned, names=names)
    promised = {names.to_local[s].name: SIZE_DIVISOR for s in divisible if s in names.to_local}
    if promised:
        graph["version"], graph["divisible"] = 3, dict(sorted(promised.items()))
    if index32:
        graph["version"], graph["index32"] = 4, True
    return graph, names


def traced_values(metas: list) -> dict:
    """dynamo's size symbols that `metas` (fake tensors) have as sizes, and the values traced for them (hints)."""
    from torch.fx.experimental.symbolic_shapes import hint_int

    out = {}
    for m in metas:
        for x in m.shape:
            if isinstance(x, torch.SymInt) and x.node.expr.is_symbol:
                try:
                    out[x.node.expr] = hint_int(x)
                except Exception:  # noqa: BLE001 - a size without a hint predicts nothing
                    pass
    return out


def divisible_symbols(seg: Segment, symbols: dict, options: Options) -> frozenset:
    """The symbols of `seg`'s document (dynamo's) whose values in a call (`symbols`) are multiples of SIZE_DIVISOR:
    which of its symbolic compiles serves the call (Options.divisibility_variants; none without it)."""
    if not options.divisibility_variants:
        return frozenset()
    if seg.symbols is None:
        try:
            seg.symbol_names = symbolic_document(seg, aligned=False)[1]
            seg.symbols = frozenset(seg.symbol_names.to_local)
        except Exception:  # noqa: BLE001 - compile_symbolic reports why the document cannot be written
            seg.symbols = frozenset()
    return frozenset(s for s in seg.symbols if s in symbols and int(symbols[s]) % SIZE_DIVISOR == 0)


def serves(variant: tuple, call: tuple) -> bool:
    """Whether the symbolic compile `variant` (aligned, divisible, index32) may run a call needing `call`'s: it
    assumes no alignment the call lacks, and promises no divisibility nor 32-bit extents the call's sizes lack."""
    return (call[0] or not variant[0]) and variant[1] <= call[1] and (call[2] or not variant[2])


def storage_extent(sizes, strides, offset: int = 0) -> int:
    """Elements a tensor's storage spans from element 0 (0 for an empty tensor)."""
    if any(int(n) == 0 for n in sizes):
        return 0
    return int(offset) + 1 + sum((int(n) - 1) * abs(int(s)) for n, s in zip(sizes, strides))


def index32_for_call(layouts) -> bool:
    """Whether a call whose tensors have `layouts` ((sizes, strides, storage offset) each: the segment's inputs and
    outputs) runs on a variant that indexes in 32 bits: each spans, and holds, fewer than INDEX32_LIMIT elements.
    A kernel's iteration space past those of its tensors (a reduction of a broadcast never stored) is checked by
    the core when the sizes are bound; a call it refuses takes the 64-bit variant (the executor's _symbolic_launch)."""
    for sizes, strides, offset in layouts:
        numel = 1
        for n in sizes:
            numel *= int(n)
        if numel >= INDEX32_LIMIT or storage_extent(sizes, strides, offset) >= INDEX32_LIMIT:
            return False
    return True


def seg_layouts(seg: Segment, values: dict) -> list:
    """The layouts ((sizes, strides, storage offset)) of `seg`'s inputs' and outputs' fake tensors at the symbols'
    `values` (dynamo's), where every one evaluates; none where one does not (a prediction of the first call's
    variant only: the call decides from its own tensors)."""
    out = []
    try:
        for n in [*seg.inputs, *seg.outputs]:
            m = tensor_meta(n)
            out.append(([evaluate(x, values) for x in m.shape], [evaluate(x, values) for x in m.stride()],
                        evaluate(m.storage_offset(), values)))
    except Exception:  # noqa: BLE001 - a size without a traced value: ordinary sizes are the likely call
        return []
    return out


_background_pool = None
_background_lock = threading.Lock()
_background_futures: set = set()


def start_symbolic_variant(seg: Segment, variant: tuple, *, name: str, options: Options) -> None:
    """Starts compiling `seg`'s symbolic variant (aligned, divisible, index32) in a background thread, unless it is
    compiled, compiling or refused; compile_symbolic takes the result (and reports any error) when a call needs it."""
    global _background_pool
    key = (SYMBOLIC, *variant)
    if not CORE_COMPILES_SYMBOLICALLY or variant in seg.symbolic or key in seg.pending:
        return
    try:
        device, target = device_and_target(seg, options)
    except Exception:  # noqa: BLE001 - compile_symbolic says why when a call needs this variant
        return
    if target is None:
        return
    future = concurrent.futures.Future()
    seg.pending[key] = future
    with _background_lock:
        if _background_pool is None:
            # Few threads: variants are compiled ahead of need, next to the calls' own work.
            _background_pool = concurrent.futures.ThreadPoolExecutor(
                max_workers=max(1, min(4, (os.cpu_count() or 2) // 2)), thread_name_prefix="hipinductor-variants")
        _background_futures.add(future)
    future.add_done_callback(_forget_background)
    _background_pool.submit(_compile_variant, seg, variant, target, name, future, options, device.index or 0)


def _compile_variant(seg: Segment, variant: tuple, target: str, name: str, future, options: Options,
                     device: int) -> None:
    """A background variant's compile, its document written here too, and its code object loaded on `device` (an
    index; the cpu device's is 0): none of it on the path of the call that first takes the variant (a module load
    is a driver call per segment, which the call would otherwise make)."""
    try:
        source = json.dumps(symbolic_document(seg, *variant)[0])
    except Exception as e:  # noqa: BLE001 - compile_symbolic writes it again, where the error is kept
        future.set_exception(e)
        return
    _compile_group([source], target, [name], [future], options.debug_dir, options.use_cache, device)


def _forget_background(future) -> None:
    with _background_lock:
        _background_futures.discard(future)


def wait_for_compiles(timeout: float | None = None) -> bool:
    """Waits until the symbolic variants compiling in the background are compiled (a server's warm-up can end with
    it, so that no call runs on a stand-in); returns whether all were within `timeout` seconds."""
    with _background_lock:
        futures = list(_background_futures)
    done, not_done = concurrent.futures.wait(futures, timeout=timeout)
    return not not_done


def symbolic_for_call(seg: Segment, call: tuple, *, name: str, options: Options, report: dict):
    """The symbolic compile a call runs `seg` with, where `call` is the most specialised variant that serves it
    (aligned: its inputs' alignment; divisible: its symbols that are multiples of SIZE_DIVISOR; index32: whether its
    extents fit 32-bit indices), and whether it is a stand-in: (SymbolicGraph, stand_in), or (why no symbolic compile
    serves it, False).

    Only a segment's first symbolic compile runs on a call's path. Later, the call's own variant (the most
    specialised that serves it) is taken when compiled; while it compiles (in the background, started here) the call
    runs on a compiled variant that also serves it (UNIVERSAL at the latest, compiled in the background after the
    first): a stand-in, which the caller keeps for this call only. A call waits only where nothing that serves it is
    compiled yet."""
    kw = dict(name=name, options=options, report=report)
    aligned, divisible, index32 = call
    order = list(dict.fromkeys([call, (aligned, divisible, False), (aligned, frozenset(), index32),
                                (aligned, frozenset(), False), UNIVERSAL]))

    def state(v):
        """v's SymbolicGraph or why it has none (taking a finished background compile), its Future, or None."""
        got = seg.symbolic.get(v)
        if got is not None:
            return got
        future = seg.pending.get((SYMBOLIC, *v))
        if future is None:
            return None
        if future.done():
            return compile_symbolic(seg, v, stand_in=v != want, **kw)
        return future

    want = order[0]
    while True:
        waits, why = [], None
        for v in order:
            got = state(v)
            if isinstance(got, str):  # refused: the next, more general variant is the call's own
                why = why or got
                if v == want and v != order[-1]:
                    want = order[order.index(v) + 1]
                continue
            if got is None:
                if v != want:
                    continue
                if not seg.symbolic and not seg.pending:  # the segment's first symbolic compile
                    got = compile_symbolic(seg, v, **kw)
                    if isinstance(got, SymbolicGraph):
                        start_symbolic_variant(seg, UNIVERSAL, name=name, options=options)
                        return got, False
                    why = why or got
                    if v != order[-1]:
                        want = order[order.index(v) + 1]
                    continue
                start_symbolic_variant(seg, v, name=name, options=options)
                got = seg.pending.get((SYMBOLIC, *v))
                if got is None:  # no background compile for it: compiled here, where any error is kept
                    got = compile_symbolic(seg, v, **kw)
                    if isinstance(got, str):
                        why = why or got
                        if v != order[-1]:
                            want = order[order.index(v) + 1]
                        continue
            if isinstance(got, SymbolicGraph):
                if v != want:
                    report["stand_in_calls"] += 1
                return got, v != want
            waits.append(got)
        if not waits:
            return why or "no symbolic compile serves the call", False
        report["call_path_waits"] += 1
        concurrent.futures.wait(waits, return_when=concurrent.futures.FIRST_COMPLETED)


def compile_symbolic(seg: Segment, variant: tuple, *, name: str, options: Options, report: dict,
                     stand_in: bool = False):
    """`seg` compiled once for every size (a SymbolicGraph) as `variant` says (aligned: for aligned inputs;
    divisible: whose symbols there are multiples of SIZE_DIVISOR; index32: whose extents fit 32-bit indices), or why
    it cannot be (a str: the core's error, a value the graph format cannot hold symbolically, a
    core without symbolic compiles); either is kept on the segment, so each is decided once. Adds the compile's facts
    to `report`: a compile for other divisible symbols than the segment's first is a variant (variant_compiles), not
    a recompile, nor is one taken as a `stand_in` for a call whose own variant still compiles (stand_in_compiles).
    A compile run here, not taken from one started ahead, is a call-path compile (call_path_compiles). Raises Reject
    from the graph-format writer."""
    aligned = variant[0]
    done = seg.symbolic.get(variant)
    if done is not None:
        return done
    if not CORE_COMPILES_SYMBOLICALLY:
        seg.symbolic[variant] = why = "this build of the core compiles no graph with symbolic sizes"
        return why
    key = (SYMBOLIC, *variant)
    early = seg.pending.pop(key, None)
    start = time.perf_counter()
    cg, ms = None, None
    if early is not None:
        try:
            cg, ms = early.result()
        except Exception:  # noqa: BLE001 - compiled again below, where the error is kept
            cg = None
    # A compile taken from one started earlier needs only the symbols' names, which every variant's document shares.
    names = seg.symbol_names if cg is not None else None
    if names is None:
        try:
            graph, names = symbolic_document(seg, *variant)
        except NotExpressible as e:
            seg.symbolic[variant] = why = f"the graph format cannot write it symbolically: {e}"
            return why
        seg.symbol_names = names
    try:
        if cg is None:
            _, target = device_and_target(seg, options)
            report["call_path_compiles"] += 1
            cg = _C.compile(json.dumps(graph), target=target, name=name, debug_dir=options.debug_dir,
                            use_cache=options.use_cache)
            ms = (time.perf_counter() - start) * 1000.0
        symbols = getattr(cg, "symbols", None)
        if symbols is None and names.to_local:
            raise RuntimeError("this build of the core runs no graph with symbolic sizes (CompiledGraph.symbols)")
        order = names.order(list(symbols or []))
    except Exception as e:  # noqa: BLE001 - the segment then compiles per size, which reports its own errors
        msg = str(e).strip().splitlines()
        seg.symbolic[variant] = why = f"{type(e).__name__}: {msg[0][:300] if msg else ''}"
        return why
    if early is not None:
        report["early_compiles"] += 1
        report["shared_compiles"] += int(ms is None)
    # Another divisibility of the same aligned-ness is a variant chosen per call, not a guard that failed.
    variant_of = not stand_in and any(k[0] == SYMBOLIC and k[1] == aligned for k in seg.compiled if k)
    _count_compile(seg, cg, ms or 0.0, report,
                   None if variant_of or stand_in else
                   f"inputs' first elements {'' if aligned else 'not '}{_C.vector_alignment()}-byte aligned, unlike "
                   "at the earlier compile")
    report["symbolic_compiles"] += 1
    report["variant_compiles"] += int(variant_of)
    report["stand_in_compiles"] += int(stand_in)
    seg.compiled[key] = cg
    seg.symbolic[variant] = done = SymbolicGraph(cg, order)
    return done


def _count_compile(seg: Segment, cg, ms: float, report: dict, recompile_reason: str | None) -> None:
    """A new compiled graph of `seg` in `report`: its compile's facts, and a recompile (with its reason) where the
    segment had one already."""
    report["compile_ms"] += ms
    report["kernels"] += cg.num_kernels
    report["cache_hits"] += int(cg.cache_hit)
    if not getattr(cg, "symbols", None):  # a graph with symbols has a workspace per binding
        report["workspace_bytes"] = max(report["workspace_bytes"], cg.workspace_bytes)
    report["compiles"] += 1
    if seg.compiled and recompile_reason is not None:
        report["recompiles"] += 1
        reasons = report["recompile_reasons"]
        reasons[recompile_reason] = reasons.get(recompile_reason, 0) + 1


def recompile_reason(seg: Segment, key: tuple, symbolic_why: str | None) -> str:
    """Why `seg` compiles again for `key` (layout_key, aligned, symbols): the guard its earlier compiles fail."""
    if symbolic_why is not None:
        return f"compiled per size: {symbolic_why}"
    layouts = {k[0] for k in seg.compiled if k and k[0] != SYMBOLIC}
    if key[0] in layouts:
        if not key[1]:
            return f"an input's first element is not {_C.vector_alignment()}-byte aligned"
        return "new values of the symbols"
    return "a new input layout (sizes, strides or storage offset)"


def compile_segment(seg: Segment, inputs: list[torch.Tensor], env: dict, aligned: bool, *, name: str,
                    options: Options, report: dict, symbolic_why: str | None = None):
    """The _C.CompiledGraph of `seg` for `inputs`, the symbols' values `env` and `aligned`: cached on the segment,
    taken from its early compile when one was started for that layout, else compiled now (as `name`). Adds the
    compile's facts to `report`, a compile after the segment's first as a recompile, its reason `symbolic_why`
    (why a graph with symbolic sizes compiles per size) or the layout guard the earlier compiles fail. Raises what
    _C.compile raises, and Reject from the graph-format writer."""
    # The symbols' values are part of what a segment is compiled for: sizes and scalars computed from them are
    # constants in its graph, even where no input's layout shows them (x.median(0).values * x.shape[0]).
    key = (layout_key(inputs), aligned, symbols_key(env))
    cg = seg.compiled.get(key)
    if cg is not None:
        return cg
    early = seg.pending.pop(key, None)
    try:
        cg, ms = early.result() if early is not None else (None, 0.0)
    except Exception:  # noqa: BLE001 - compiled again below, where errors are reported
        cg = None
    if cg is not None:
        report["early_compiles"] += 1
        report["shared_compiles"] += int(ms is None)
        ms = ms or 0.0  # the compile's own time, not the wait for it
    if cg is None:
        report["call_path_compiles"] += 1
        start = time.perf_counter()
        graph = segment_json(seg, inputs, env, aligned)
        _, target = device_and_target(seg, options)
        cg = _C.compile(json.dumps(graph), target=target, name=name, debug_dir=options.debug_dir,
                        use_cache=options.use_cache)
        ms = (time.perf_counter() - start) * 1000.0
    _count_compile(seg, cg, ms, report, recompile_reason(seg, key, symbolic_why))
    seg.compiled[key] = cg
    return cg


def _compile_group(sources, target, names, futures, debug_dir, use_cache, device: int | None = None) -> None:
    """Compiles `sources` as one unit (_C.compile_many) and sets each result, with its compile_ms, on its future. If
    the unit fails, each source compiles on its own, so that one segment's fault is only that segment's. Every
    future ends resolved. With `device`, each compiled graph is also loaded there (CompiledGraph.prepare) first."""
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
                if device is not None and hasattr(cg, "prepare"):
                    try:
                        cg.prepare(device)
                    except Exception:  # noqa: BLE001 - the first run() raises it again, where it is reported
                        pass
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
