"""Ahead-of-time packages from torch.export programs: `aot_compile(exported, archs, path)` lowers the program to ATen
as the torch.compile backend does, partitions it with the backend's partitioner (segments of hipinductor kernels,
eager steps run by PyTorch), compiles every segment for every target (HIPRTC for gfx*, NVRTC for sm_*, the host
compiler for cpu; no GPU needed) and writes a package (package_format.py) that `load_package` (package_loader.py)
runs without compiling anything.

Command line: `python3 -m hipinductor.aot MODEL.pt2 --arch gfx90a,sm_90,cpu -o model.hipi` and
`python3 -m hipinductor.aot --inspect model.hipi` (`hipinductor-aot` hands `.pt2` inputs and --inspect to it).
"""

from __future__ import annotations

import argparse
import json
import operator
import sys
import time

import torch
import torch.fx as fx

from . import _C
from .backend import decomposition_table
from .compile_jobs import units
from .devices import ALIGN
from .graph_format import output_layout, segment_json
from .nodes import has_symbols, op_name, tensor_meta
from .options import Options
from .package_format import (DYNAMIC_SHAPES, FORMAT, VERSION, PackageError, PackageWriter, encode_arg, layout_of,
                             read_manifest, sha256_of)
from .partition import Segment, partition

#: Code-object file extension per target kind.
_EXTENSIONS = {"amd": "hsaco", "nvidia": "cubin", "cpu": "so"}
#: Attention stays one eager call, so PyTorch picks the kernel for the device the package runs on (on the CPU its
#: decomposition would name the CPU-only flash kernel).
_KEPT_WHOLE = ("aten.scaled_dot_product_attention.default",)


def export_decompositions() -> dict:
    """What torch.export programs are lowered with: the backend's table (decomposition_table: core ATen minus what
    hipinductor lowers, plus its overrides), and the CompositeImplicitAutograd ops' own decompositions, which
    AOTAutograd applies anyway under torch.compile but which export keeps unless the table lists them; ops hipinductor
    lowers and _KEPT_WHOLE stay whole."""
    table = {op: fn for op, fn in torch.export.default_decompositions().items()
             if not _C.has_lowering(str(op)) and str(op) not in _KEPT_WHOLE}
    table.update(decomposition_table())
    return table


def _kind(target: str) -> str:
    return "cpu" if target.startswith("cpu") else ("amd" if target.startswith("gfx") else "nvidia")


def aot_compile(exported, archs, path: str, *, log=None) -> dict:
    """Compiles `exported` (a torch.export.ExportedProgram, or the path of a `.pt2` from torch.export.save) for every
    target in `archs` ("gfx90a", "gfx942:sramecc+:xnack-", "sm_90", "cpu", ...; a comma-separated string or a list)
    into the package directory `path`, written atomically. Returns the manifest. Raises PackageError for programs a
    package cannot hold (symbolic sizes, non-tensor inputs), ValueError for unknown targets, and the compiler's
    errors (LoweringError, CompileError) naming the segment."""
    if isinstance(archs, str):
        archs = [a for a in archs.split(",") if a]
    targets = list(dict.fromkeys(_C.parse_target(a) for a in archs))
    if not targets:
        raise ValueError("hipinductor.aot_compile: no target given")
    if isinstance(exported, str):
        source = exported
        try:
            exported = torch.export.load(source)
        except FileNotFoundError:
            raise
        except Exception as e:  # noqa: BLE001 - whatever a damaged archive makes torch.export.load raise
            raise PackageError(f"{source}: not a torch.export program ({type(e).__name__}: {e})") from None
    say = log or (lambda msg: None)
    start = time.perf_counter()
    ep = exported.run_decompositions(export_decompositions())
    gm = ep.graph_module
    program = _Program(ep)
    p = partition(gm, Options(), set())
    segments = [s for s in p.steps if isinstance(s, Segment)]
    say(f"{len(segments)} segment(s), {len(p.steps) - len(segments)} eager step(s); "
        f"eager ops: {', '.join(p.fallback_ops) or 'none'} ({(time.perf_counter() - start) * 1000:.0f} ms)")
    graphs = []
    for seg in segments:
        metas = [tensor_meta(n) for n in seg.inputs]
        aligned = all(m.storage_offset() * m.element_size() % ALIGN == 0 for m in metas)
        graphs.append(json.dumps(segment_json(seg, metas, {}, aligned)))
    with PackageWriter(path) as writer:
        weights = program.write_weights(writer)
        manifest = {
            "format": FORMAT, "version": VERSION, "hipinductor": _C.version(), "torch": torch.__version__,
            "codegen": _C.codegen_version(), "dynamic_shapes": DYNAMIC_SHAPES, "symbols": [], "exported_on": program.device.type,
            "in_spec": program.in_spec, "out_spec": program.out_spec, "inputs": program.inputs,
            "outputs": program.outputs, "weights": weights,
            "steps": _steps(p.steps, segments, program),
            "ops_lowered": p.ops_lowered, "eager_ops": p.fallback_ops,
            "targets": [_compile_target(t, graphs, writer, say) for t in targets],
        }
        writer.commit(manifest)
    say(f"wrote {path} ({(time.perf_counter() - start):.1f} s)")
    return manifest


class _Program:
    """What the package records of the exported program itself: user inputs and outputs, their pytree specs, the
    weights (parameters, buffers and lifted constants, by placeholder name) and the device it was exported on."""

    def __init__(self, ep):
        self.ep = ep
        nodes = {n.name: n for n in ep.graph_module.graph.nodes if n.op == "placeholder"}
        kinds = torch.export.graph_signature.InputKind
        self.weights: dict[str, torch.Tensor] = {}
        self.inputs = []
        devices = set()
        for spec in ep.graph_signature.input_specs:
            node = nodes[spec.arg.name]
            val = node.meta.get("val")
            if spec.kind == kinds.USER_INPUT:
                if not isinstance(val, torch.Tensor):
                    raise PackageError(f"input '{spec.arg.name}' is not a tensor ({type(val).__name__}); packages "
                                       "take tensor inputs only")
                if has_symbols(val):
                    raise PackageError(f"input '{spec.arg.name}' has symbolic sizes {list(val.shape)}: dynamic "
                                       f"shapes are {DYNAMIC_SHAPES}")
                self.inputs.append(dict(layout_of(val), name=spec.arg.name))
                devices.add(val.device)
                continue
            if spec.kind in (kinds.PARAMETER, kinds.BUFFER):
                t = ep.state_dict[spec.target] if spec.target in ep.state_dict else ep.constants[spec.target]
            elif spec.kind == kinds.CONSTANT_TENSOR:
                t = ep.constants[spec.target]
            else:
                raise PackageError(f"input '{spec.arg.name}' of kind {spec.kind.name} cannot be stored in a package")
            if not isinstance(t, torch.Tensor):
                raise PackageError(f"weight '{spec.target}' is a {type(t).__name__}, not a tensor")
            self.weights[spec.arg.name] = t.detach()
            devices.add(t.device)
        if len(devices) > 1:
            raise PackageError(f"the program's tensors are on several devices ({sorted(map(str, devices))})")
        self.device = devices.pop() if devices else torch.device("cpu")
        self.input_names = {i["name"] for i in self.inputs}
        output_node = next(n for n in ep.graph_module.graph.nodes if n.op == "output")
        flat = list(output_node.args[0])
        kinds_out = torch.export.graph_signature.OutputKind
        self.outputs = []
        for spec, value in zip(ep.graph_signature.output_specs, flat):
            if spec.kind == kinds_out.USER_OUTPUT:
                entry = encode_arg(value, _value_name, "output")
                val = value.meta.get("val") if isinstance(value, fx.Node) else None
                if isinstance(val, torch.Tensor):  # for readers of the manifest: what the output is
                    entry = dict(entry, dtype=layout_of(val)["dtype"], sizes=list(val.shape))
                self.outputs.append(entry)
            elif spec.kind != kinds_out.LOSS_OUTPUT:
                raise PackageError(f"output '{spec.arg.name}' updates the program's state ({spec.kind.name}); "
                                   "packages hold inference programs (export the model in eval mode)")
        self.in_spec = torch.utils._pytree.treespec_dumps(ep.call_spec.in_spec)
        self.out_spec = torch.utils._pytree.treespec_dumps(ep.call_spec.out_spec)

    def write_weights(self, writer: PackageWriter) -> dict:
        """The weights as safetensors (each its own contiguous copy: safetensors stores no shared or strided
        storage), else with torch.save."""
        tensors = {name: t.contiguous().clone() for name, t in self.weights.items()}
        entries = [dict(layout_of(t), name=name) for name, t in tensors.items()]
        try:
            from safetensors.torch import save_file
        except ImportError:
            return {"format": "torch.save", "file": writer.add_file("weights.pt", lambda f: torch.save(tensors, f)),
                    "tensors": entries}
        return {"format": "safetensors",
                "file": writer.add_file("weights.safetensors", lambda f: save_file(tensors, f)), "tensors": entries}


def _value_name(a) -> str | None:
    return a.name if isinstance(a, fx.Node) else None


def _steps(steps: list, segments: list, program: _Program) -> list:
    """The run order: kernels steps (a segment's inputs and outputs by value name, with the layouts it was compiled
    for) and eager steps (an ATen overload and its arguments; getitem of an eager step's tuple)."""
    out = []
    for step in steps:
        if isinstance(step, Segment):
            out.append({"kind": "kernels", "segment": segments.index(step),
                        "inputs": [n.name for n in step.inputs],
                        "input_layouts": [layout_of(tensor_meta(n)) for n in step.inputs],
                        "outputs": [n.name for n in step.outputs],
                        "output_layouts": [_output_layout(tensor_meta(n)) for n in step.outputs]})
            continue
        node: fx.Node = step
        where = f"node '{node.name}' ({op_name(node)})"
        if node.target is operator.getitem:
            out.append({"kind": "getitem", "value": node.args[0].name, "index": node.args[1], "output": node.name})
            continue
        if not isinstance(node.target, torch._ops.OpOverload):
            raise PackageError(f"{where}: not an ATen operator; packages record eager steps as ATen calls")
        out.append({"kind": "aten", "op": op_name(node), "output": node.name,
                    "args": [encode_arg(a, _value_name, where) for a in node.args],
                    "kwargs": {k: encode_arg(v, _value_name, where) for k, v in node.kwargs.items()}})
    return out


def _output_layout(meta) -> dict:
    lay = output_layout(meta, {})
    return {"dtype": str(meta.dtype).removeprefix("torch."), "sizes": lay["sizes"], "strides": lay["strides"],
            "offset": 0}


def _compile_target(target: str, graphs: list, writer: PackageWriter, say) -> dict:
    """Compiles every segment for `target` in compile units as the backend does (compile_jobs.units) and adds its
    code objects (content-named: segments of one unit share theirs) and sources to the package."""
    start = time.perf_counter()
    kind = _kind(target)
    tag = target.replace(":", "_")
    entries = [None] * len(graphs)
    jobs = list(range(len(graphs)))
    for unit in units(jobs, target_of=lambda _: target):
        compiled = _C.compile_many([graphs[k] for k in unit], target, [f"segment{k}" for k in unit])
        for k, cg in zip(unit, compiled):
            code = cg.code_object
            digest = sha256_of(code)[:16]
            kernels = []
            facts = {f["name"]: f for f in cg.kernel_facts} if kind == "amd" else {}
            record = json.loads(cg.record)
            for kr in record["kernels"]:
                entry = {"name": kr["name"], "kind": kr["kind"], "grid": kr["grid"], "block": kr["block"]}
                if kr["name"] in facts:
                    f = facts[kr["name"]]
                    entry["facts"] = {key: f[key] for key in ("vgpr_count", "sgpr_count", "agpr_count", "lds_bytes",
                                                              "scratch_bytes", "vgpr_spill_count", "sgpr_spill_count",
                                                              "waves_per_simd")}
                kernels.append(entry)
            entries[k] = {"graph": record,
                          "code_object": writer.add(f"{tag}/{digest}.{_EXTENSIONS[kind]}", code),
                          "source": writer.add(f"{tag}/{digest}.hip", cg.source.encode()),
                          "workspace_bytes": cg.workspace_bytes, "kernels": kernels}
    ms = (time.perf_counter() - start) * 1000.0
    say(f"{target}: {sum(len(e['kernels']) for e in entries)} kernel(s) in {len(entries)} segment(s), {ms:.0f} ms")
    return {"target": target, "kind": kind, "build_ms": round(ms, 1), "segments": entries}


def inspect_package(path: str) -> str:
    """A package's targets, kernels and their facts, as text."""
    m = read_manifest(path)
    lines = [f"{path}: hipinductor package v{m['version']} (hipinductor {m['hipinductor']}, PyTorch {m['torch']})",
             f"inputs: " + ", ".join(f"{i['name']} {i['dtype']}{i['sizes']}" for i in m["inputs"]),
             f"steps: {sum(s['kind'] == 'kernels' for s in m['steps'])} kernel segment(s), "
             f"{sum(s['kind'] != 'kernels' for s in m['steps'])} eager step(s) "
             f"({', '.join(m['eager_ops']) or 'none'})",
             f"weights: {len(m['weights']['tensors'])} tensor(s), {m['weights']['format']}",
             f"dynamic shapes: {m['dynamic_shapes']}"]
    for t in m["targets"]:
        size = sum(m["files"][f]["size"] for f in {s["code_object"] for s in t["segments"]})
        lines.append(f"target {t['target']}: {sum(len(s['kernels']) for s in t['segments'])} kernel(s), code objects "
                     f"{size} bytes, built in {t['build_ms']:.0f} ms")
        for k, seg in enumerate(t["segments"]):
            for kern in seg["kernels"]:
                facts = kern.get("facts")
                text = (" ".join(f"{key}={v}" for key, v in facts.items()) if facts
                        else "facts: recorded when a GPU loads it" if t["kind"] == "nvidia" else "")
                lines.append(f"  segment {k}: {kern['name']} ({kern['kind']}, grid {kern['grid']} x {kern['block']})"
                             + (f" {text}" if text else ""))
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="hipinductor-aot", description="Compile a torch.export program (.pt2) into "
                                     "a hipinductor package for several targets, without a GPU; or inspect one.")
    parser.add_argument("program", nargs="?", help="a .pt2 file from torch.export.save")
    parser.add_argument("--arch", default="gfx90a,gfx942", help="comma-separated targets: gfx90a, "
                        "gfx942:sramecc+:xnack-, gfx1100, sm_90, cpu ...")
    parser.add_argument("-o", "--output", help="the package directory to write (e.g. model.hipi)")
    parser.add_argument("--inspect", metavar="PACKAGE", help="list a package's targets, kernels and their facts")
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return 2 if e.code else 0
    try:
        if args.inspect:
            print(inspect_package(args.inspect))
            return 0
        if not args.program or not args.output:
            print("hipinductor-aot: a .pt2 program and -o PACKAGE are required (or --inspect PACKAGE)", file=sys.stderr)
            return 2
        aot_compile(args.program, args.arch, args.output, log=lambda m: print(f"hipinductor-aot: {m}", file=sys.stderr))
        return 0
    except (PackageError, ValueError, FileNotFoundError, _C.GraphFormatError, _C.LoweringError) as e:
        print(f"hipinductor-aot: {args.program or args.inspect}: {e}", file=sys.stderr)
        return 2
    except _C.CompileError as e:
        print(f"hipinductor-aot: {args.program}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
