"""channels_last_convs: 2-d convolutions of 16-bit GPU tensors take channels-last (NHWC) inputs and weights."""

from __future__ import annotations

import torch
import torch.fx as fx

from ..nodes import has_symbols

# Devices whose convolutions are rewritten (tests widen it to "cpu").
DEVICE_TYPES: tuple[str, ...] = ("cuda",)
_CONV = torch.ops.aten.convolution.default
_CLONE = torch.ops.aten.clone.default


def _rewritable(conv: fx.Node, device_types) -> bool:
    x = conv.args[0].meta.get("val") if isinstance(conv.args[0], fx.Node) else None
    transposed = conv.args[6] if len(conv.args) > 6 else False
    return (isinstance(x, torch.Tensor) and x.dim() == 4 and x.device.type in device_types and not transposed
            and x.dtype in (torch.bfloat16, torch.float16) and isinstance(conv.args[1], fx.Node))


def _channels_last(val) -> bool:
    return isinstance(val, torch.Tensor) and val.is_contiguous(memory_format=torch.channels_last)


def _propagate(gm: fx.GraphModule, fake_mode) -> None:
    """Every call's meta 'val' computed again from its inputs' under `fake_mode`, in graph order."""
    vals: dict[fx.Node, object] = {}
    for node in gm.graph.nodes:
        if node.op == "placeholder":
            vals[node] = node.meta["val"]
        elif node.op == "get_attr":
            real = getattr(gm, node.target)
            vals[node] = fake_mode.from_tensor(real, static_shapes=True) if isinstance(real, torch.Tensor) else real
        elif node.op == "call_function":
            args = fx.node.map_arg(node.args, vals.__getitem__)
            kwargs = fx.node.map_arg(node.kwargs, vals.__getitem__)
            with fake_mode:
                vals[node] = node.target(*args, **kwargs)
            node.meta["val"] = vals[node]


def channels_last_convs(gm: fx.GraphModule, device_types: tuple[str, ...] | None = None) -> int:
    """Gives each 2-d convolution of bf16/fp16 tensors on `device_types` (default DEVICE_TYPES) a channels-last input
    and weight, copied there (aten.clone) where they are not already, and recomputes the graph's metas: the
    convolutions' results are then channels-last too, and so are the batch norms, activations and residual adds that
    read them, which hipinductor's kernels produce in that layout. cuDNN's bf16/fp16 convolutions run NHWC natively;
    eager PyTorch's NCHW tensors cost them layout conversions (Inductor's layout optimization does the same). 1x1
    weights are channels-last already; a graph's contiguous outputs stay contiguous (others may come back in another
    dense layout than eager's). For inference graphs of static sizes (the caller's part: a training graph's saved
    activations would reach its backward graph in another layout than the one it was traced with); graphs with
    symbolic sizes are left alone, and so is a graph whose metas cannot be computed again. Returns the convolutions
    rewritten."""
    device_types = DEVICE_TYPES if device_types is None else device_types
    convs = [n for n in gm.graph.nodes
             if n.op == "call_function" and n.target is _CONV and _rewritable(n, device_types)]
    if not convs:
        return 0
    fake_mode = torch._guards.detect_fake_mode([n.meta.get("val") for n in gm.graph.nodes if n.op == "placeholder"])
    if fake_mode is None or any(has_symbols(n.meta.get("val")) for n in gm.graph.nodes):
        return 0  # symbols (dynamic or data-dependent sizes) would come back as new ones
    metas = {n: n.meta["val"] for n in gm.graph.nodes if "val" in n.meta}
    clones = []
    for conv in convs:
        args = list(conv.args)
        for i in (0, 1):
            with gm.graph.inserting_before(conv):
                args[i] = gm.graph.call_function(_CLONE, (args[i],), {"memory_format": torch.channels_last})
            clones.append(args[i])
        conv.args = tuple(args)
    try:
        _propagate(gm, fake_mode)
    except Exception:  # noqa: BLE001 - an op fake tensors cannot run (data-dependent): the graph stays as it was
        for c in clones:
            c.replace_all_uses_with(c.args[0])
            gm.graph.erase_node(c)
        for n in gm.graph.nodes:
            if n in metas:
                n.meta["val"] = metas[n]
            else:
                n.meta.pop("val", None)
        return 0
    for c in clones:  # copies of what is channels-last already (1x1 weights, earlier convolutions' results)
        if _channels_last(c.args[0].meta.get("val")):
            c.replace_all_uses_with(c.args[0])
            gm.graph.erase_node(c)
    # The graph's contiguous outputs stay contiguous: a result that became channels-last is copied back.
    output = next(n for n in gm.graph.nodes if n.op == "output")
    for n in output.all_input_nodes:
        was, val = metas.get(n), n.meta.get("val")
        if not isinstance(was, torch.Tensor) or not was.is_contiguous() or val.is_contiguous():
            continue
        with gm.graph.inserting_before(output):
            back = gm.graph.call_function(_CLONE, (n,), {"memory_format": torch.contiguous_format})
        with fake_mode:
            back.meta["val"] = _CLONE(val, memory_format=torch.contiguous_format)
        output.args = fx.node.map_arg(output.args, lambda a, n=n, back=back: back if a is n else a)
    gm.graph.lint()
    gm.recompile()
    return len(convs)
