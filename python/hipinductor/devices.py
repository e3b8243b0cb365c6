"""The devices hipinductor's kernels run on: which GPU target a CUDA / ROCm device is (through `_C`'s GPU runtime),
which tensors have no runtime here, PyTorch's current stream, and the pointer alignment compiled kernels may assume.
"""

from __future__ import annotations

import torch

from . import _C

#: Bytes of the widest vector access of the kernels (`_C.vector_alignment()`): a segment compiled with the graph
#: format's "align" promise needs every input's first element aligned to it.
ALIGN: int = _C.vector_alignment()

# (kind, ordinal) -> (target, "") or (None, why the device has no runtime); asked once per process and device.
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
    """The hipinductor target of GPU `device`, or None where hipinductor has no runtime for it."""
    return _gpu_runtime(device)[0]


def device_problem(t: torch.Tensor) -> str | None:
    """Why kernels cannot run on `t`'s device, or None where they can."""
    if t.device.type == "cpu":
        return None
    if t.device.type == "cuda":
        target, why = _gpu_runtime(t.device)
        return None if target else f"no hipinductor GPU runtime: {why}"
    return f"no hipinductor runtime for device '{t.device.type}'"


def current_stream(index: int) -> int:
    """The raw handle of PyTorch's current stream on GPU `index` (the cheap private call when there is one)."""
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw(index)
    return torch.cuda.current_stream(index).cuda_stream


def aligned(tensors) -> bool:
    """Whether every tensor's first element is ALIGN-byte aligned, as a segment compiled with "align" needs."""
    return all(t.data_ptr() % ALIGN == 0 for t in tensors)
