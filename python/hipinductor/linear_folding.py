"""nn.Linear's eager steps as AOTAutograd decomposes them, `view(addmm(b, view(x), t(w)))`, recognised in a
recorded call and written by the fast path as one call (F.linear, or _addmm_activation where the gemm_epilogue pass
gave the addmm an activation)."""

from __future__ import annotations

from typing import NamedTuple

import torch
import torch.fx as fx

from .nodes import RESHAPE_VIEWS, contiguous_strides, has_symbols
from .partition import Segment


class Linear(NamedTuple):
    """One call replacing nn.Linear's eager steps: F.linear(x, weight, bias), or, where fuse_gemm_activations gave the
    addmm an activation, _addmm_activation on x flattened to 2-D (`flat`), viewed back to `out`."""
    x: fx.Node
    weight: fx.Node
    bias: fx.Node | None
    use_gelu: bool | None = None
    flat: tuple | None = None
    out: tuple | None = None

    def reads(self) -> list:
        return [n for n in (self.x, self.weight, self.bias) if n is not None]

    def call(self, w) -> str:
        """Source of the call, with `w` (fast_path's writer) naming values and binding constants."""
        x, weight = w.names[self.x], w.names[self.weight]
        if self.use_gelu is None:
            return f"{w.bind('linear', torch.nn.functional.linear)}({', '.join(w.names[n] for n in self.reads())})"
        fn = w.bind("addmm_activation", torch._addmm_activation)
        call = (f"{fn}({w.names[self.bias]}, {x}{f'.view({self.flat!r})' if self.flat else ''}, {weight}.t(), "
                f"use_gelu={self.use_gelu})")
        return f"{call}.view({self.out!r})" if self.out else call


def fold_linear_layers(steps, launches) -> tuple[dict, set]:
    """nn.Linear as AOTAutograd decomposes it, `view(addmm(b, view(x, [M, K]), t(w)), [.., N])` (or mm without a
    bias, or without the views for 2-D x), all eager steps: {the last step: Linear} and the steps that its call
    folds away. torch.nn.functional.linear reaches the same addmm / mm on the same views (at::linear: addmm for 2-D
    input with a bias, the flattened addmm for contiguous 3-D input with a bias, else matmul, which folds a contiguous
    3-D input into one mm), so results are identical, with one call instead of four. fuse_gemm_activations'
    `_addmm_activation` folds the same way, into one line of views around it. 3-D x must be contiguous: only a
    segment's output, whose layout is fixed, qualifies."""
    eager = {s for s in steps if not isinstance(s, Segment)}
    contiguous = set()
    for s in steps:
        if isinstance(s, Segment) and id(s) in launches:
            for n, (sizes, strides, _) in zip(s.outputs, launches[id(s)].outputs):
                if list(strides) == contiguous_strides(list(sizes)):
                    contiguous.add(n)

    def only_user(n, user):
        return n in eager and list(n.users) == [user]

    linears, folded = {}, set()
    for a in eager:
        name, use_gelu = str(a.target), None
        if name == "aten._addmm_activation.default" and set(a.kwargs) <= {"use_gelu"}:
            use_gelu = bool(a.kwargs.get("use_gelu", False))
        elif name not in ("aten.addmm.default", "aten.mm.default") or a.kwargs:
            continue
        bias, lhs, t = (a.args if name != "aten.mm.default" else (None, *a.args))
        if len(a.args) != (3 if bias is not None else 2) or not isinstance(t, fx.Node):
            continue
        if str(t.target) != "aten.t.default" or not only_user(t, a):
            continue
        weight = t.args[0]
        wv, bv = weight.meta.get("val"), bias.meta.get("val") if isinstance(bias, fx.Node) else None
        if not isinstance(wv, torch.Tensor) or wv.dim() != 2:
            continue
        if bias is not None and not (isinstance(bv, torch.Tensor) and bv.dim() == 1):
            continue
        # 3-D: x viewed to [M, K] before and the product viewed back after.
        if str(getattr(lhs, "target", "")) in RESHAPE_VIEWS and only_user(lhs, a) and len(a.users) == 1:
            after = next(iter(a.users))
            x = lhs.args[0]
            xv, ov = x.meta.get("val"), after.meta.get("val")
            # Symbolic sizes: equal as expressions, for every size (comparing their values would compare the
            # traced sizes); _addmm_activation's views would need the call's sizes, so it stays as written there.
            if (str(after.target) in RESHAPE_VIEWS and after in eager and isinstance(xv, torch.Tensor) and xv.dim() == 3
                    and x in contiguous and _same_sizes(ov.shape, list(xv.shape[:-1]) + [wv.shape[0]])
                    and not (use_gelu is not None and has_symbols(ov))):
                linears[after] = Linear(x, weight, bias, use_gelu, tuple(lhs.meta["val"].shape), tuple(ov.shape))
                folded.update((lhs, t, a))
                continue
        lv = lhs.meta.get("val") if isinstance(lhs, fx.Node) else None
        if isinstance(lv, torch.Tensor) and lv.dim() == 2:
            linears[a] = Linear(lhs, weight, bias, use_gelu)
            folded.add(t)
    return linears, folded


def _same_sizes(a, b) -> bool:
    """Sizes equal whatever the values of their symbols."""
    from torch.fx.experimental.symbolic_shapes import statically_known_true

    return len(a) == len(b) and all(statically_known_true(x == y) for x, y in zip(a, b))
