"""The `hipinductor` torch.compile backend: dynamo graph -> AOTAutograd (forward and backward ATen graphs, core ATen
decompositions minus the ops hipinductor lowers itself) -> hipinductor kernels with eager fallbacks."""

from __future__ import annotations

import functools
import inspect
import itertools
import logging
import struct
import threading

import torch

from . import _C, cuda_graphs
from .devices import gpu_target
from .graph_module import CompiledFxGraph
from .options import Options
from .passes.uint8_interpolation import uint8_cpu_interpolations_whole
from .reporting import register

log = logging.getLogger("hipinductor")

_graph_ids = itertools.count()


@functools.lru_cache(maxsize=None)
def decomposition_table() -> dict:
    """PyTorch's core ATen decompositions (the post-autograd table, where PyTorch has it), without the ops hipinductor
    lowers better whole (softmax, layer_norm, ...)."""
    import torch._decomp

    # Where core_aten_decompositions() also lists CompositeImplicitAutograd ops (a table made for export; PyTorch 2.6
    # here), collecting them costs ~0.2 s per process, and AOTAutograd decomposes those ops through their own kernels
    # anyway, as it does for Inductor's table. The post-autograd table is the rest (on 2.6: exactly the rest). Some
    # releases drop a few CompositeImplicitAutograd ops from the public table so that they keep their C++ kernels
    # (std, upsample_bilinear2d.vec, silu_backward); the post-autograd table decomposes those in Python, as Inductor
    # does.
    post_autograd = getattr(torch._decomp, "_core_aten_decompositions_post_autograd", None)
    table = dict(post_autograd() if post_autograd is not None else torch._decomp.core_aten_decompositions())
    for op in list(table):
        if _C.has_lowering(str(op)):
            del table[op]
    # An export-only decomposition: its second output is the attention weights where the op's backward reads the
    # logsumexp, so training through CPU attention got wrong gradients for q, k and v. Inductor leaves it out too.
    table.pop(torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default, None)
    # Decompositions that round once where eager's kernels round each step: 16-bit tensors take eager's steps, each
    # override calling the decomposition for the rest.
    overrides = {torch.ops.aten.logit.default: _logit_as_eager_computes_it,
                 torch.ops.aten.linalg_cross.default: _cross_as_eager_computes_it,
                 torch.ops.aten.addr.default: _addr_as_eager_computes_it,
                 torch.ops.aten._softmax_backward_data.default: _softmax_backward_as_eager_computes_it}
    for op, override in overrides.items():
        if op in table:
            table[op] = functools.partial(override, table[op])
    # Matrix products over an inner size of 1 (rotary embeddings' inverse frequencies times positions) are outer
    # products: one multiply per element, which a kernel fuses with what reads it, where the GEMM was a library call
    # of its own.
    table[torch.ops.aten.mm.default] = _product_over_inner_size_one
    table[torch.ops.aten.bmm.default] = _product_over_inner_size_one
    return table


def _product_over_inner_size_one(a, b):
    """mm / bmm of [.., M, 1] by [.., 1, N] as the elementwise product a * b: the same value as a GEMM's (a single
    product in float32 or wider, rounded once to the tensor's type, as cuBLAS's and CPU BLAS's with a zero beta),
    contiguous as theirs. Other products (NotImplemented) stay GEMMs."""
    k = a.shape[-1]
    if (not isinstance(k, int) or k != 1 or a.dtype != b.dtype or not a.dtype.is_floating_point
            or a.layout != torch.strided or b.layout != torch.strided):
        return NotImplemented
    return (a * b).contiguous()


_HALF_TYPES = (torch.float16, torch.bfloat16)


def _addr_as_eager_computes_it(decomposition, self, vec1, vec2, *, beta=1, alpha=1):
    """addr of 16-bit tensors of one dtype as eager's CPU and CUDA kernels compute it: beta * self + alpha * vec1 *
    vec2, left to right in the tensor's type (alpha and beta converted to it), and alpha * vec1 * vec2 alone where
    beta is 0. PyTorch's decomposition computes beta * self + alpha * outer(vec1, vec2) in float and rounds once: a
    quarter of bf16 results one ulp from eager's. Other tensors take the decomposition (CPU eager's float32 and
    float64 go through BLAS's rank-1 update, whose fused multiply-adds no elementwise order reproduces)."""
    if not (self.dtype == vec1.dtype == vec2.dtype and self.dtype in _HALF_TYPES):
        return decomposition(self, vec1, vec2, beta=beta, alpha=alpha)
    product = (vec1 * _rounded(alpha, self.dtype))[:, None] * vec2[None, :]
    if beta == 0:  # NaNs in self dropped, as eager drops them
        return product.expand(torch.broadcast_shapes(self.shape, product.shape))
    return self * _rounded(beta, self.dtype) + product


def _cross_as_eager_computes_it(decomposition, a, b, dim=-1):
    """linalg_cross of two 16-bit tensors as eager's kernels (CPU and CUDA) compute it, in c10::Half / BFloat16
    arithmetic: each product and the difference rounded to the tensor's type. PyTorch's decomposition computes in
    float and rounds once (a third of float16 results one ulp from eager's). Other tensors take the decomposition."""
    if a.dtype != b.dtype or a.dtype not in _HALF_TYPES:
        return decomposition(a, b, dim)
    return inspect.unwrap(decomposition)(a, b, dim)  # the same steps without its cast to float


def _logit_as_eager_computes_it(decomposition, x, eps=None):
    """logit of 16-bit CPU tensors as CPU eager's vectorised kernel computes it, rounding to the tensor's type after
    each step (eps and 1 - eps too): the clamp, 1 - x, x / (1 - x), the log. PyTorch's decomposition (and CUDA's
    kernel) rounds once, which put 16 % of OpInfo's float16 sample 0.0007 away from CPU eager's. Other tensors take
    the decomposition."""
    if x.device.type != "cpu" or x.dtype not in _HALF_TYPES:
        return decomposition(x, eps)
    if eps is not None:
        lo = _rounded(eps, x.dtype)
        hi = _rounded(1 - lo, x.dtype)
        x = torch.where(x < lo, lo, torch.where(x > hi, hi, x))
    return torch.log(x / (1 - x))


def _softmax_backward_as_eager_computes_it(decomposition, grad, output, dim, input_dtype):
    """softmax's backward of 16-bit CPU tensors as CPU eager's kernels compute it, in float: output * (grad - s) with
    s = sum(grad * output) over dim, rounded to the tensor's type where dim is the innermost one (the last-dim
    kernel's sum is a scalar_t). PyTorch's decomposition computes grad * output - output * s, with s unrounded: 3 of
    OpInfo's 250 bf16 gradients over the last dim 0.017 away from CPU eager's. Other tensors (CUDA's kernels compute
    the decomposition's form) take the decomposition."""
    if (grad.device.type != "cpu" or grad.dtype not in _HALF_TYPES or not grad.dtype == output.dtype == input_dtype
            or grad.dim() == 0):
        return decomposition(grad, output, dim, input_dtype)
    g, o = grad.float(), output.float()
    s = (g * o).sum(dim, keepdim=True)
    if dim % grad.dim() == grad.dim() - 1:
        s = s.to(grad.dtype).float()
    return (o * (g - s)).to(grad.dtype).contiguous()


def _rounded(v: float, dtype: torch.dtype) -> float:
    """v as C++ converts a double to c10::Half / c10::BFloat16: to float first, then to nearest even (no tensor, so
    that nothing is traced)."""
    f = struct.unpack("<f", struct.pack("<f", v))[0]
    if dtype == torch.float16:
        return struct.unpack("<e", struct.pack("<e", f))[0]
    bits = struct.unpack("<I", struct.pack("<f", f))[0]
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def _compiler(options: Options, kind: str):
    def compile_graph(gm: torch.fx.GraphModule, example_inputs):
        static_inputs = _static_input_indices()
        compiled = CompiledFxGraph(gm, options, kind, next(_graph_ids), static_inputs=static_inputs)
        register(compiled)
        if options.cuda_graphs:
            return cuda_graphs.wrap(compiled, gm, example_inputs, kind, static_inputs, compiled.report)
        return compiled.call_boxed  # AOTAutograd's boxed convention, without a wrapper's frame per call

    return compile_graph


def _static_input_indices() -> tuple[int, ...]:
    """Which inputs of the forward / inference graph being compiled are the module's parameters and buffers
    (AOTAutograd's static_input_indices, what Inductor's CUDA graphs take as fixed): dynamo's guards already check
    that they have the layouts they were traced with."""
    context = torch._guards.TracingContext.try_get()
    metadata = getattr(context, "fw_metadata", None) if context is not None else None
    return tuple(getattr(metadata, "static_input_indices", None) or ())


def hipinductor_backend(gm: torch.fx.GraphModule, example_inputs, options: dict | None = None, mode: str | None = None,
                        **unused):
    """torch.compile(model, backend="hipinductor", options={...}) or mode="reduce-overhead" (CUDA/HIP graphs,
    cuda_graphs.py); see Options for the keys."""
    if unused:
        raise ValueError(f"hipinductor: unexpected backend arguments {sorted(unused)}; the backend takes options={{...}}"
                         f" and mode= ({', '.join(repr(m) for m in cuda_graphs.SUPPORTED_MODES)})")
    opts = Options.from_dict(options)
    if cuda_graphs.check_mode(mode):
        opts.cuda_graphs = True
    _warm_up_compilers(example_inputs)
    from torch._dynamo.backends.common import aot_autograd
    from torch._functorch.partitioners import min_cut_rematerialization_partition
    from torch.fx.experimental.symbolic_shapes import ConstraintViolationError

    uint8_cpu_interpolations_whole(gm)
    try:
        return aot_autograd(
            fw_compiler=_compiler(opts, "forward"),
            bw_compiler=_compiler(opts, "backward"),
            inference_compiler=_compiler(opts, "inference"),
            decompositions=decomposition_table(),
            # What the backward reads from the forward: the min-cut partition (Inductor's) saves what is cheapest
            # to keep and recomputes what fuses (RMSNorm over bf16 saved x.float() in f32 and x * rstd, 96 MB a
            # 4096 x 4096 step, where it recomputes both from x and rstd).
            partition_fn=min_cut_rematerialization_partition,
        )(gm, example_inputs)
    except (ConstraintViolationError, torch._dynamo.exc.RestartAnalysis):
        # The user's dynamic-shape constraints do not hold (dynamo reports that), or dynamo's request to trace the
        # frame again (a float input it had made a tensor, to be specialized): both are dynamo's to handle.
        raise
    except Exception as e:  # noqa: BLE001 - a graph AOTAutograd cannot trace still runs, as written
        # E.g. PyTorch 2.6's decomposition of linspace(Tensor, Tensor, steps=1) leaves an in-place copy_ that
        # AOTAutograd's functional-graph check rejects (Inductor fails there too). Unless strict, the dynamo graph
        # then runs in eager PyTorch.
        if opts.strict:
            raise
        msg = str(e).strip().splitlines()
        log.warning("hipinductor: AOTAutograd could not trace a graph of %d nodes (%s: %s); it runs in eager "
                    "PyTorch", len(gm.graph.nodes), type(e).__name__, msg[0][:300] if msg else "")
        return gm.forward


_warmed_devices: set = set()
_warmed_lock = threading.Lock()


def _warm_up_compilers(example_inputs) -> None:
    """Starts, once per process and GPU, that GPU's compiler (NVRTC's first compile in a process takes up to ~0.35 s
    more than later ones; see _C.warm_up) in a thread of its own, which runs while AOTAutograd traces the graph; the
    first real compile then finds it started. A compiler that fails here fails again, and is reported, when the
    graph compiles."""
    devices = {t.device for t in example_inputs if isinstance(t, torch.Tensor) and t.device.type == "cuda"}
    for device in devices:
        with _warmed_lock:
            if device in _warmed_devices:
                continue
            _warmed_devices.add(device)
        threading.Thread(target=_warm_up, args=(device,), name="hipinductor-warm-up").start()


def _warm_up(device) -> None:
    try:
        target = gpu_target(device)
        if target is not None:
            _C.warm_up(target)
    except Exception as e:  # noqa: BLE001 - only a head start
        log.debug("hipinductor: compiler warm-up for %s failed: %s", device, e)
