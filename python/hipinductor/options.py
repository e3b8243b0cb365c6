"""Options of the hipinductor backend: torch.compile(..., options={...}) and environment variables."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields

from . import _C


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


@dataclass
class Options:
    #: Target for CPU tensors' kernels: "cpu" (warp 32) or "cpu-w64" (warp 64). GPU targets come from the device.
    target: str = "cpu"
    #: AMD/NVIDIA target to compile for, e.g. "gfx942"; checked (and, without a GPU runtime, only recorded).
    arch: str | None = None
    #: Write every stage of every graph here (also HIPINDUCTOR_DEBUG_DIR).
    debug_dir: str | None = field(default_factory=lambda: os.environ.get("HIPINDUCTOR_DEBUG_DIR") or None)
    #: Use the on-disk code-object cache (HIPINDUCTOR_CACHE_DIR).
    use_cache: bool = True
    #: Raise on compiler faults instead of running the graph eagerly with a warning (also HIPINDUCTOR_STRICT=1).
    strict: bool = field(default_factory=lambda: _env_flag("HIPINDUCTOR_STRICT"))
    #: Debugging: also run every compiled segment eagerly and raise on the first one whose outputs differ
    #: (HIPINDUCTOR_CHECK=1); names the graph, the segment and its debug-dump folder.
    check: bool = field(default_factory=lambda: _env_flag("HIPINDUCTOR_CHECK"))
    #: Time a few grid sizes per kernel on its first run and keep the fastest, recorded in the code-object cache per
    #: device (also HIPINDUCTOR_AUTOTUNE=1). Off by default: the default grids measured within noise of the best on
    #: the H200 benchmark.
    autotune: bool = field(default_factory=lambda: _env_flag("HIPINDUCTOR_AUTOTUNE"))
    #: Move relu and tanh-approximated gelu of a GPU addmm's product into the GEMM's epilogue (_addmm_activation:
    #: cuBLASLt's RELU_BIAS, GELU_BIAS) instead of a kernel reading the product again (passes/gemm_epilogue.py).
    gemm_epilogue: bool = True
    #: Give 2-d convolutions of bf16/fp16 GPU tensors channels-last inputs and weights in inference graphs, so cuDNN
    #: runs them NHWC and the kernels around them produce that layout (passes/channels_last.py).
    channels_last_convs: bool = True
    #: Capture each compiled GPU graph into a CUDA/HIP graph and replay it per call (what mode="reduce-overhead"
    #: turns on; cuda_graphs.py). Graphs that cannot be captured run without, with the reason in their report.
    cuda_graphs: bool = False
    #: Graphs with symbolic sizes: compile a segment once per set of its symbols whose values in a call are
    #: multiples of SIZE_DIVISOR (compile_jobs), promising it to the compiler (vector groups without peeling, aligned
    #: rows), as Triton specialises its launches on arguments divisible by 16; at most 2^k compiles for k symbols.
    #: Off: one compile for every size, which proves only the divisibility the size expressions show.
    divisibility_variants: bool = True
    #: ATen overloads (e.g. "aten.mm.default") to run in eager PyTorch even when hipinductor lowers them.
    fallback_ops: frozenset = frozenset()

    @classmethod
    def known(cls) -> list[str]:
        return [f.name for f in fields(cls)]

    @classmethod
    def from_dict(cls, options: dict | None) -> "Options":
        o = cls()
        for key, value in (options or {}).items():
            if key not in cls.known():
                raise ValueError(f"hipinductor: unknown option '{key}'; known options: {', '.join(cls.known())}")
            if key == "fallback_ops":
                value = frozenset(value)
            setattr(o, key, value)
        o.target = _C.parse_target(o.target)
        if not o.target.startswith("cpu"):
            raise ValueError(f"hipinductor: option 'target' must be 'cpu' or 'cpu-w64', got '{o.target}' "
                             "(GPU targets follow the tensors' device; use 'arch' to name one)")
        if o.arch is not None:
            o.arch = _C.parse_target(o.arch)
        return o
