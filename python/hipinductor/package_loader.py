"""Running an ahead-of-time package (aot.py writes them): `load_package(path)` picks the code objects of the device's
target, loads them without starting any compiler, and returns a callable that runs the package's steps: hipinductor's
kernels, and the eager steps (matrix products, attention, ops without a lowering) through PyTorch.
"""

from __future__ import annotations

import io
import json
import time

import torch

from . import _C
from .devices import ALIGN, current_stream, gpu_target
from .package_format import (PackageError, decode_arg, dtype_of, read_file, read_manifest, resolve_op)


def device_target(device: torch.device) -> str:
    """The hipinductor target code must be compiled for to run on `device` ("cpu", "sm_90", "gfx942:sramecc+:xnack-")."""
    if device.type == "cpu":
        return "cpu"
    if device.type != "cuda":
        raise PackageError(f"hipinductor packages run on CPU and CUDA/ROCm devices, not on '{device.type}'")
    target = gpu_target(device)
    if target is None:
        raise PackageError(f"no hipinductor GPU runtime for {device}")
    return target


def load_package(path: str, device=None) -> "PackagedProgram":
    """The package at `path` (a directory written by hipinductor.aot_compile or hipinductor-aot), ready to run on
    `device` (default: the current CUDA/ROCm device where PyTorch has one, else the CPU). Raises PackageError naming the
    file for packages of another format version, corrupt or truncated files, and for a device whose target the
    package has no code for (naming the device's target and the package's)."""
    if device is None:
        device = torch.device("cuda", torch.cuda.current_device()) if torch.cuda.is_available() else "cpu"
    return PackagedProgram(path, torch.device(device))


class PackagedProgram:
    """A loaded package: call it as the exported module (same arguments, same output structure). `target` is the
    target whose code objects were loaded; `first_call_ms` the first call's wall time (None before it)."""

    def __init__(self, path: str, device: torch.device):
        if device.type == "cuda" and device.index is None:
            device = torch.device("cuda", torch.cuda.current_device())
        self.path = path
        self.device = device
        manifest = read_manifest(path)
        self.manifest = manifest
        want = device_target(device)
        have = [t["target"] for t in manifest["targets"]]
        chosen = next((t for t in manifest["targets"] if t["target"] == want), None) or next(
            (t for t in manifest["targets"] if _C.code_runs_on(t["target"], want)), None)
        if chosen is None:
            raise PackageError(f"{path}: no code for this device: {device} is {want}, the package has "
                               f"{', '.join(have)}; build the package with --arch {want.split(':')[0]}")
        self.target = chosen["target"]
        self.weights = {name: t.to(device) for name, t in _read_weights(path, manifest).items()}
        code_objects: dict[str, bytes] = {}
        self.segments = []
        for k, seg in enumerate(chosen["segments"]):
            if seg["code_object"] not in code_objects:
                code_objects[seg["code_object"]] = read_file(path, manifest, seg["code_object"])
            source = read_file(path, manifest, seg["source"]).decode()
            self.segments.append(_C.load_compiled(json.dumps(seg["graph"]), code_objects[seg["code_object"]], source,
                                                  self.target, f"segment{k}"))
        self.steps = [_prepare(step, k) for k, step in enumerate(manifest["steps"])]
        for step in self.steps:
            if step["kind"] == "kernels":  # compiled with the graph format's "align" promise
                step["align"] = chosen["segments"][step["segment"]]["graph"].get("align", 0) > 1
        self.in_spec = torch.utils._pytree.treespec_loads(manifest["in_spec"])
        self.out_spec = torch.utils._pytree.treespec_loads(manifest["out_spec"])
        self.first_call_ms = None

    def __repr__(self) -> str:
        return f"<hipinductor package {self.path} target={self.target} device={self.device}>"

    def __call__(self, *args, **kwargs):
        if self.first_call_ms is not None:
            return self._run(args, kwargs)
        start = time.perf_counter()
        try:
            return self._run(args, kwargs)
        finally:
            if self.device.type == "cuda":
                torch.cuda.synchronize(self.device)
            self.first_call_ms = (time.perf_counter() - start) * 1000.0

    def _run(self, args, kwargs):
        flat, spec = torch.utils._pytree.tree_flatten((args, kwargs))
        if spec != self.in_spec:
            raise TypeError(f"{self.path}: the package takes arguments structured as {self.in_spec}, got {spec}")
        env = dict(self.weights)
        for spec_in, value in zip(self.manifest["inputs"], flat):
            env[spec_in["name"]] = self._checked_input(spec_in, value)
        for step in self.steps:
            kind = step["kind"]
            if kind == "kernels":
                self._run_kernels(step, env)
            elif kind == "aten":
                args_ = decode_arg(step["args"], env, self.device)
                kwargs_ = {k: decode_arg(v, env, self.device) for k, v in step["kwargs"].items()}
                env[step["output"]] = step["callable"](*args_, **kwargs_)
            else:
                env[step["output"]] = env[step["value"]][step["index"]]
        outputs = [decode_arg(o, env, self.device) for o in self.manifest["outputs"]]
        return torch.utils._pytree.tree_unflatten(outputs, self.out_spec)

    def _checked_input(self, spec: dict, value):
        name = spec["name"]
        if not isinstance(value, torch.Tensor):
            raise TypeError(f"{self.path}: input '{name}' must be a tensor, got {type(value).__name__}")
        if value.dtype != dtype_of(spec["dtype"]) or list(value.shape) != spec["sizes"]:
            raise ValueError(f"{self.path}: input '{name}' must be {spec['dtype']}{spec['sizes']} (sizes are fixed "
                             f"in packages), got {str(value.dtype).removeprefix('torch.')}{list(value.shape)}")
        if value.device != self.device:
            raise ValueError(f"{self.path}: input '{name}' is on {value.device}; the package was loaded for "
                             f"{self.device}")
        return value

    def _run_kernels(self, step: dict, env: dict) -> None:
        cg = self.segments[step["segment"]]
        aligned = step["align"]
        inputs = [_with_layout(env[n], lay, aligned) for n, lay in zip(step["inputs"], step["input_layouts"])]
        outputs = [torch.empty_strided(lay["sizes"], lay["strides"], dtype=dtype_of(lay["dtype"]), device=self.device)
                   for lay in step["output_layouts"]]
        in_ptrs = [t.untyped_storage().data_ptr() for t in inputs]
        out_ptrs = [t.untyped_storage().data_ptr() for t in outputs]
        if self.device.type == "cpu":
            cg.run(in_ptrs, out_ptrs)
        else:
            index = self.device.index
            workspace = (torch.empty(cg.workspace_bytes, dtype=torch.uint8, device=self.device)
                         if cg.workspace_bytes else None)
            cg.run(in_ptrs, out_ptrs, stream=current_stream(index),
                   workspace=workspace.data_ptr() if workspace is not None else 0, device=index)
        for n, t in zip(step["outputs"], outputs):
            env[n] = t


#: Views whose sizes the program recorded for the strides its eager steps had where it was exported: on another device
#: an eager kernel may lay its result out otherwise (CUDA's attention returns a permuted tensor where the CPU's is
#: contiguous), which those sizes may not view. reshape gives the same values, as a view wherever one exists; the
#: graph is functional, so nothing writes through the alias a view would have been.
_RESHAPED_VIEWS = {"aten.view.default", "aten._unsafe_view.default"}


def _prepare(step: dict, k: int) -> dict:
    step = dict(step)
    if step["kind"] == "aten":
        try:
            step["callable"] = resolve_op("aten.reshape.default" if step["op"] in _RESHAPED_VIEWS else step["op"])
        except (AttributeError, ValueError):
            raise PackageError(f"step {k}: operator {step['op']} does not exist in this PyTorch "
                               f"({torch.__version__})") from None
    elif step["kind"] not in ("kernels", "getitem"):
        raise PackageError(f"step {k}: unknown kind {step['kind']!r}")
    return step


def _with_layout(t: torch.Tensor, lay: dict, aligned: bool) -> torch.Tensor:
    """`t` laid out as a segment was compiled for (strides and storage offset; first element ALIGN-aligned): itself
    where it is, else a copy. Eager steps may lay out their results differently on the device the package runs on
    than on the one it was built on (CUDA's attention kernels return permuted outputs)."""
    if list(t.shape) != lay["sizes"] or t.dtype != dtype_of(lay["dtype"]):
        raise PackageError(f"a value of {str(t.dtype).removeprefix('torch.')}{list(t.shape)} reached kernels compiled "
                           f"for {lay['dtype']}{lay['sizes']}")
    if (list(t.stride()) == lay["strides"] and t.storage_offset() == lay["offset"]
            and (not aligned or t.data_ptr() % ALIGN == 0)):
        return t
    sizes, strides = lay["sizes"], lay["strides"]
    span = 1 + sum((s - 1) * st for s, st in zip(sizes, strides)) if all(s > 0 for s in sizes) else 0
    storage = torch.empty(lay["offset"] + span, dtype=t.dtype, device=t.device)
    out = storage.as_strided(sizes, strides, lay["offset"])
    out.copy_(t)
    return out


def _read_weights(path: str, manifest: dict) -> dict:
    w = manifest["weights"]
    data = read_file(path, manifest, w["file"])
    if w["format"] == "safetensors":
        try:
            from safetensors.torch import load as load_safetensors
        except ImportError:
            raise PackageError(f"{path}: its weights are safetensors; install the safetensors package") from None
        try:
            return load_safetensors(data)
        except Exception as e:  # noqa: BLE001 - the checksum held: a writer's fault, reported with the file
            raise PackageError(f"{path}/{w['file']}: unreadable weights ({e})") from None
    return torch.load(io.BytesIO(data), weights_only=True)
