"""drop_empty_cat_inputs: tensors that add nothing to a concatenation leave it before the graph is partitioned."""

from __future__ import annotations

import functools

import torch
import torch.fx as fx


def _adds_nothing(val, dim: int, rank: int) -> bool:
    """A cat input whose sizes are known and contribute no element: a legacy empty 1-d tensor ([0], which cat skips
    whatever the others' rank), or an input of the result's rank with no extent along `dim`."""
    if not isinstance(val, torch.Tensor):
        return False
    sizes = val.shape
    if not all(isinstance(s, int) for s in sizes):  # symbolic: empty on some calls only
        return False
    if len(sizes) == 1 and sizes[0] == 0:
        return True
    return len(sizes) == rank and sizes[dim % rank] == 0


def drop_empty_cat_inputs(gm: fx.GraphModule) -> int:
    """Removes from each aten.cat the inputs that contribute no element (`_adds_nothing`), where one input is left and
    the others' dtypes still promote to the node's: a key/value cache that starts as `torch.tensor([])` and grows by
    `torch.cat([cache, k], -2)` (transformers' DynamicCache in GPT-2 and LLaMA) is then a copy of k, and the empty
    constant and its lift_fresh_copy are dead code. Before, they made the segment holding the cat take an empty
    input, so that segment (the attention mask, RoPE, the cache copies) ran node by node in eager PyTorch, and the
    graph had no fast path. Returns the cat nodes changed."""
    count = 0
    for node in gm.graph.nodes:
        if node.op != "call_function" or node.target is not torch.ops.aten.cat.default:
            continue
        out = node.meta.get("val")
        parts = node.args[0] if node.args else None
        if not isinstance(out, torch.Tensor) or not isinstance(parts, (list, tuple)):
            continue
        dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", 0)
        vals = [p.meta.get("val") if isinstance(p, fx.Node) else None for p in parts]
        keep = [p for p, v in zip(parts, vals) if not _adds_nothing(v, dim, out.dim())]
        if len(keep) == len(parts) or not keep:
            continue
        kept_vals = [p.meta.get("val") for p in keep]
        if not all(isinstance(v, torch.Tensor) for v in kept_vals):
            continue
        if functools.reduce(torch.promote_types, (v.dtype for v in kept_vals)) != out.dtype:
            continue  # the empty input decided the result's dtype
        node.args = (list(keep), *node.args[1:])
        count += 1
    if count:
        gm.graph.eliminate_dead_code()
        gm.graph.lint()
        gm.recompile()
    return count
