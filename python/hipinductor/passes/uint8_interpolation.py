"""uint8_cpu_interpolations_whole: bilinear / bicubic interpolation of uint8 CPU images runs as eager computes it."""

from __future__ import annotations

import functools
import inspect

import torch
import torch.fx as fx

# F.interpolate and the older names dynamo records as they are, with the arguments each passes on to it.
_INTERPOLATE_FORMS = {
    torch.nn.functional.interpolate: {},
    torch.nn.functional.upsample: {},
    torch.nn.functional.upsample_bilinear: {"mode": "bilinear", "align_corners": True},
}
# torch._C._nn's .vec functions, called directly: (input, output_size, align_corners, scale_factors).
_VEC_FUNCTIONS = {
    getattr(torch._C._nn, name): name
    for name in ("upsample_bilinear2d", "upsample_bicubic2d", "_upsample_bilinear2d_aa", "_upsample_bicubic2d_aa")
    if hasattr(torch._C._nn, name)
}


def uint8_cpu_interpolations_whole(gm: fx.GraphModule) -> int:
    """Bilinear / bicubic interpolation of 4-d uint8 cpu images in a dynamo graph (F.interpolate and its older
    names, or torch._C._nn's .vec functions; AOTAutograd decomposes all of them into float index arithmetic) becomes
    hipinductor::eager_interpolation, the ATen op called with its output size and scales as eager's .vec calls it.
    AOTAutograd keeps that op whole and the planner runs it eagerly. CPU eager interpolates uint8 in fixed point
    (int16 weights), one off from the rounded float result for up to a quarter of the pixels; CUDA's kernels and
    every other dtype match the decomposition and keep it. Returns the calls rewritten."""
    rewritten = 0
    for node in gm.graph.nodes:
        call = _interpolation_call(node)
        if call is None:
            continue
        op, image, align_corners, scales = call
        x, out = image.meta.get("example_value"), node.meta.get("example_value")
        if not (isinstance(x, torch.Tensor) and x.dtype == torch.uint8 and x.device.type == "cpu" and x.dim() == 4
                and isinstance(out, torch.Tensor) and all(isinstance(d, int) for d in out.shape)):
            continue
        node.target = _eager_interpolation()
        node.args, node.kwargs = (image, op, list(out.shape[-2:]), align_corners, *scales), {}
        rewritten += 1
    if rewritten:
        gm.recompile()
    return rewritten


def _interpolation_call(node: fx.Node):
    """(ATen op name, image node, align_corners, (scale_h, scale_w)) of a bilinear / bicubic interpolation call
    whose arguments other than the image are constants; None for anything else."""
    if node.op != "call_function":
        return None
    if node.target in _INTERPOLATE_FORMS:
        try:
            a = inspect.signature(node.target).bind(*node.args, **node.kwargs).arguments
        except TypeError:
            return None
        a.update(_INTERPOLATE_FORMS[node.target])
        mode, antialias = a.get("mode", "nearest"), a.get("antialias", False)
        if mode not in ("bilinear", "bicubic") or not isinstance(antialias, bool):
            return None
        op = ("_upsample_%s2d_aa" if antialias else "upsample_%s2d") % mode
        align_corners, factor = a.get("align_corners") or False, a.get("scale_factor")
        # F.interpolate hands the kernel its scale factors unless it recomputes them (or was given a size)
        factors = None if factor is None or a.get("recompute_scale_factor") else factor
        if isinstance(factors, (int, float)):
            factors = (factors, factors)
    elif node.target in _VEC_FUNCTIONS and not node.kwargs and len(node.args) == 4:
        op = _VEC_FUNCTIONS[node.target]
        _, _, align_corners, factors = node.args
    else:
        return None
    image = node.args[0] if node.args else None
    if not isinstance(image, fx.Node) or not isinstance(align_corners, bool) or not hasattr(torch.ops.aten, op):
        return None
    if factors is None:
        return op, image, align_corners, (None, None)
    if (isinstance(factors, (list, tuple)) and len(factors) == 2
            and all(isinstance(f, (int, float)) and not isinstance(f, bool) for f in factors)):
        return op, image, align_corners, tuple(float(f) for f in factors)
    return None


@functools.lru_cache(maxsize=None)
def _eager_interpolation():
    """hipinductor::eager_interpolation(image, op, size, align_corners, scale_h, scale_w): the upsample ATen op named
    `op` (upsample_bilinear2d, ...), called eagerly. An op of our own, so that AOTAutograd keeps it whole: the ATen
    ops' own decompositions run at the autograd key while it traces."""

    @torch.library.custom_op("hipinductor::eager_interpolation", mutates_args=(),
                             schema="(Tensor image, str op, int[] size, bool align_corners, float? scale_h, "
                                    "float? scale_w) -> Tensor")
    def eager_interpolation(image, op, size, align_corners, scale_h, scale_w):
        return getattr(torch.ops.aten, op).default(image, size, align_corners, scale_h, scale_w)

    @eager_interpolation.register_fake
    def _(image, op, size, align_corners, scale_h, scale_w):
        out = image.new_empty((*image.shape[:2], *size))
        return out.contiguous(memory_format=torch.channels_last) if image.is_contiguous(
            memory_format=torch.channels_last) else out

    return eager_interpolation
