"""The cases of the performance sweep (tools/perf_sweep.py): PyTorch's OpInfo ops that hipinductor lowers, at
realistic sizes and in several layouts per op class, and the fused patterns users write.

A case is built the same way in every process (the sweep's workers build the list and pick theirs by name), so
`catalogue()` must be deterministic: no randomness outside the input factories, which seed themselves.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Callable

import torch
import torch.nn.functional as F

# Elements of a case's main tensor: 16M (64 MB in f32, 32 MB in bf16) at full size, tiny with --quick (the cpu
# device runs every HIP thread as a fiber).
FULL_ELEMENTS = 1 << 24
QUICK_ELEMENTS = 1 << 12

FLOATS = ("float32", "bfloat16")
SHORT = {"float32": "f32", "bfloat16": "bf16", "float16": "f16", "int32": "i32", "int64": "i64", "bool": "bool"}


@dataclasses.dataclass
class Case:
    name: str  # "<group>/<dtype>/<shape>": unique, stable across runs
    group: str  # the op or pattern, for the summary per class
    fn: Callable
    make: Callable[[], list]  # the inputs, on the sweep's device
    grad: bool = False  # a training step: forward, then the backward of the outputs (inputs marked requires_grad)
    memory_bound: bool = True  # compared with a copy of the bytes it reads and writes


class Sizes:
    """Shapes scaled to the mode: `rows(w)` rows of width w make about one main tensor."""

    def __init__(self, quick: bool, device: str):
        self.quick = quick
        self.device = device
        self.elements = QUICK_ELEMENTS if quick else FULL_ELEMENTS

    def rows(self, width: int) -> int:
        return max(1, self.elements // width)

    def batch(self, full: int) -> int:
        """A batch dim: `full` at full size, 1 with --quick."""
        return 1 if self.quick else full

    def dim(self, full: int, quick: int) -> int:
        return quick if self.quick else full


def _dtype(name: str) -> torch.dtype:
    return getattr(torch, name)


def _maker(sz: Sizes, dtype: str, *specs):
    """Inputs from specs: a shape tuple (randn of the case's dtype), or a callable (device, dtype) -> tensor."""
    dt, dev = _dtype(dtype), sz.device

    def make():
        torch.manual_seed(0)
        out = []
        for s in specs:
            if callable(s):
                out.append(s(dev, dt))
            elif dt.is_floating_point:
                out.append(torch.randn(s, device=dev, dtype=dt))
            elif dt == torch.bool:
                out.append(torch.rand(s, device=dev) > 0.5)
            else:
                out.append(torch.randint(-100, 100, s, device=dev, dtype=dt))
        return out

    return make


def _weight(shape, fan_in: int):
    """A matrix weight as nn.Linear scales it (std 1/sqrt(fan_in)): standard-normal weights make activations grow by
    sqrt(fan_in) per product, so a block's outputs and softmax scores reach values where float rounding, not the
    compiler, decides how far two correct results differ."""
    return lambda dev, dt: (torch.randn(shape, device=dev, dtype=torch.float32) / math.sqrt(fan_in)).to(dt)


def _fmt(shape) -> str:
    return "x".join(str(s) for s in shape)


# --- OpInfo ops: every lowered unary and binary ufunc and reduction, in several layouts -----------------------------


def _lowered(op, lowered: set[str], arity: int = 1, **kwargs) -> bool:
    """Whether hipinductor lowers the op's ATen overloads and the op takes `arity` plain tensors (and `kwargs`),
    checked on 2x2 inputs on the CPU: ops needing more arguments (polygamma's order) are left out."""
    name = getattr(op, "aten_name", None) or op.name
    if op.name.startswith(("masked.", "sparse.", "linalg.", "_")) or "." in name:
        return False
    if not any(n.startswith(f"aten.{name}.") for n in lowered):
        return False
    try:
        op.op(*[torch.ones(2, 2) for _ in range(arity)], **kwargs)
    except Exception:  # noqa: BLE001 - any failure means the plain call does not fit the op
        return False
    return True


def _domain_input(op, shape):
    """Random inputs inside a unary op's domain (log's positives, acos's [-1, 1]), else standard normal."""
    lo, hi = getattr(op, "domain", (None, None)) or (None, None)

    def make(dev, dt):
        if not dt.is_floating_point:
            low = 0 if lo is not None and lo >= 0 else -100
            return torch.randint(max(low, 1 if lo is not None and lo > 0 else low), 100, shape, device=dev, dtype=dt)
        if lo is None and hi is None:
            return torch.randn(shape, device=dev, dtype=dt)
        a = -4.0 if lo is None else float(lo) + 1e-3
        b = 4.0 if hi is None else float(hi) - 1e-3
        return (torch.rand(shape, device=dev, dtype=torch.float32) * (b - a) + a).to(dt)

    return make


def opinfo_cases(sz: Sizes, lowered: set[str]) -> list[Case]:
    from torch.testing._internal.common_methods_invocations import binary_ufuncs, reduction_ops, unary_ufuncs

    cases = []
    w = 4096
    square = (sz.rows(w), w)
    for op in unary_ufuncs:
        if not _lowered(op, lowered):
            continue
        for d in FLOATS:
            if op.supports_dtype(_dtype(d), sz.device):
                cases.append(Case(f"{op.name}/{SHORT[d]}/{_fmt(square)}", op.name, op.op,
                                  _maker(sz, d, _domain_input(op, square))))
        if op.supports_dtype(torch.int32, sz.device) and not op.supports_dtype(torch.float32, sz.device):
            cases.append(Case(f"{op.name}/i32/{_fmt(square)}", op.name, op.op,
                              _maker(sz, "int32", _domain_input(op, square))))
    for op in binary_ufuncs:
        if not _lowered(op, lowered, 2):
            continue
        dts = [d for d in FLOATS if op.supports_dtype(_dtype(d), sz.device)] or \
              [d for d in ("int32",) if op.supports_dtype(_dtype(d), sz.device)]
        for d in dts:
            cases.append(Case(f"{op.name}/{SHORT[d]}/{_fmt(square)}", op.name, op.op, _maker(sz, d, square, square)))
    # Reductions: last dim (a multiple of the vector width and not), the first dim, a middle dim, everything.
    layouts = [((sz.rows(4096), 4096), -1), ((sz.rows(4099), 4099), -1), ((sz.rows(4096), 4096), 0),
               ((sz.batch(64), sz.rows(64 * 64) if sz.quick else 4096, 64), 1)]
    for op in reduction_ops:
        if not _lowered(op, lowered, 1, dim=-1):
            continue
        for d in FLOATS:
            if not op.supports_dtype(_dtype(d), sz.device):
                continue
            for shape, dim in layouts:
                def fn(x, _op=op.op, _dim=dim):
                    return _op(x, dim=_dim)

                cases.append(Case(f"{op.name}/{SHORT[d]}/{_fmt(shape)}/dim{dim}", op.name, fn, _maker(sz, d, shape)))
    return [c for c in cases if _plain_call(c)]


def _plain_call(case: Case) -> bool:
    """Op families whose call needs more than tensors (foreach lists, masks) are left out."""
    return not any(k in case.group for k in ("_foreach", "masked."))


# --- fused patterns ------------------------------------------------------------------------------------------------


def rmsnorm(x, w):
    return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(x.dtype) * w


def t5_layer_norm(x, w):
    """T5's LayerNorm: no mean subtracted, no bias, variance in float."""
    var = x.float().pow(2).mean(-1, keepdim=True)
    return w * (x.float() * torch.rsqrt(var + 1e-6)).to(x.dtype)


def t5_block(x, bias, wq, wk, wv, wo, wi0, wi1, wff, ln1, ln2):
    """A T5 encoder layer: RMS-style norm, attention with an additive position bias and no scaling, a gated-gelu
    feed-forward, residuals."""
    b, t, d = x.shape
    h = t5_layer_norm(x, ln1)
    heads = bias.shape[1]
    q, k, v = ((h @ w).view(b, t, heads, -1).transpose(1, 2) for w in (wq, wk, wv))
    scores = q @ k.transpose(-1, -2) + bias
    y = (torch.softmax(scores.float(), -1).to(x.dtype) @ v).transpose(1, 2).reshape(b, t, d)
    x = x + y @ wo
    h = t5_layer_norm(x, ln2)
    return x + (F.gelu(h @ wi0, approximate="tanh") * (h @ wi1)) @ wff


def adam_step(p, g, m, v, lr=1e-3, b1=0.9, b2=0.999, eps=1e-8, step=10):
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    mh = m / (1 - b1 ** step)
    vh = v / (1 - b2 ** step)
    return p - lr * mh / (vh.sqrt() + eps), m, v


def sgd_momentum(p, g, buf, lr=0.1, mu=0.9, wd=1e-4):
    g = g + wd * p
    buf = mu * buf + g
    return p - lr * buf, buf


def rope(x, cos, sin):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return x * cos + torch.cat((-x2, x1), -1) * sin


def _ids(n, vocab, shape_fn=None):
    return lambda dev, dt: torch.randint(0, vocab, (n,) if shape_fn is None else shape_fn, device=dev)


def pattern_cases(sz: Sizes) -> list[Case]:
    cases: list[Case] = []

    def add(group, dtype, shape_name, fn, *specs, grad=False, memory_bound=True):
        cases.append(Case(f"{group}/{SHORT[dtype]}/{shape_name}", group, fn, _maker(sz, dtype, *specs), grad=grad,
                          memory_bound=memory_bound))

    for d in FLOATS + ("float16",):
        # softmax over widths a vector width divides and widths none does, and over the first dim
        for w in (1024, 4096, 1000, 4099, 50257):
            add("softmax", d, f"{sz.rows(w)}x{w}", lambda x: torch.softmax(x, -1), (sz.rows(w), w))
        add("softmax_dim0", d, f"4096x{sz.rows(4096)}", lambda x: torch.softmax(x, 0), (4096, sz.rows(4096)))
        add("log_softmax", d, f"{sz.rows(32000)}x32000", lambda x: torch.log_softmax(x, -1), (sz.rows(32000), 32000))
        for w in (4096, 4099):
            r = sz.rows(w)
            add("layer_norm", d, f"{r}x{w}", lambda x, g, b: F.layer_norm(x, g.shape, g, b), (r, w), (w,), (w,))
    for d in FLOATS:
        r, w = sz.rows(4096), 4096
        add("rmsnorm", d, f"{r}x{w}", rmsnorm, (r, w), (w,))
        add("layer_norm_gelu_residual", d, f"{r}x{w}",
            lambda x, res, g, b: F.gelu(F.layer_norm(x + res, g.shape, g, b)), (r, w), (r, w), (w,), (w,))
        add("bias_residual_layer_norm", d, f"{r}x{w}",
            lambda x, bias, res, g, b: F.layer_norm(x + bias + res, g.shape, g, b), (r, w), (w,), (r, w), (w,), (w,))
        add("rmsnorm_silu_mul", d, f"{r}x{w}", lambda x, w_, u: F.silu(rmsnorm(x, w_)) * u, (r, w), (w,), (r, w))
        # normalisations whose reduced elements are not one row
        n, c, hw = sz.batch(32), 256, sz.dim(56, 8)
        add("group_norm", d, f"{n}x{c}x{hw}x{hw}", lambda x, g, b: F.group_norm(x, 32, g, b), (n, c, hw, hw), (c,), (c,))
        add("group_norm_silu", d, f"{n}x{c}x{hw}x{hw}", lambda x, g, b: F.silu(F.group_norm(x, 32, g, b)),
            (n, c, hw, hw), (c,), (c,))
        add("group_norm_channels_last", d, f"{n}x{c}x{hw}x{hw}",
            lambda x, g, b: F.group_norm(x.to(memory_format=torch.channels_last), 32, g, b),
            (n, c, hw, hw), (c,), (c,))
        add("instance_norm", d, f"{n}x{c}x{hw}x{hw}", lambda x: F.instance_norm(x), (n, c, hw, hw))
        add("batch_norm_train", d, f"{n}x{c}x{hw}x{hw}",
            lambda x, g, b: F.batch_norm(x, None, None, g, b, training=True), (n, c, hw, hw), (c,), (c,))
        add("batch_norm_relu_eval", d, f"{n}x{c}x{hw}x{hw}",
            lambda x, m, v, g, b: F.relu(F.batch_norm(x, m, v.abs() + 1, g, b)), (n, c, hw, hw), (c,), (c,), (c,),
            (c,))
        # losses
        for vocab in (32000, 50257):
            rows = sz.rows(vocab)
            add("cross_entropy", d, f"{rows}x{vocab}", lambda x, t: F.cross_entropy(x, t), (rows, vocab),
                _ids(rows, vocab))
        rows = sz.rows(32000)
        add("cross_entropy_smoothing", d, f"{rows}x32000", lambda x, t: F.cross_entropy(x, t, label_smoothing=0.1),
            (rows, 32000), _ids(rows, 32000))
        add("nll_loss", d, f"{rows}x32000", lambda x, t: F.nll_loss(x, t), (rows, 32000), _ids(rows, 32000))
        add("cross_entropy_train", d, f"{rows}x32000", lambda x, t: F.cross_entropy(x, t), (rows, 32000),
            _ids(rows, 32000), grad=True)
        add("mse_loss", d, f"{r}x{w}", lambda a, b: F.mse_loss(a, b), (r, w), (r, w))
        add("smooth_l1_loss", d, f"{r}x{w}", lambda a, b: F.smooth_l1_loss(a, b), (r, w), (r, w))
        add("bce_with_logits", d, f"{r}x{w}", lambda a, b: F.binary_cross_entropy_with_logits(a, b.sigmoid()),
            (r, w), (r, w))
        add("kl_div", d, f"{r}x{w}", lambda a, b: F.kl_div(a.log_softmax(-1), b.log_softmax(-1), log_target=True,
                                                         reduction="batchmean"), (r, w), (r, w))
        # optimizer updates (one flat parameter, as fused multi-tensor optimizers see it)
        n1 = sz.elements
        add("adam_step", d, f"{n1}", adam_step, (n1,), (n1,), (n1,), lambda dev, dt: torch.rand(n1, device=dev, dtype=dt))
        add("sgd_momentum", d, f"{n1}", sgd_momentum, (n1,), (n1,), (n1,))
        add("clip_grad_scale", d, f"{n1}", lambda g: g * (1.0 / torch.clamp(g.norm() / 1.0, min=1.0)), (n1,))
        # attention prologues and epilogues
        b, t, h, hd = sz.batch(8), sz.dim(1024, 16), 16, 64
        add("attention_mask_softmax", d, f"{b}x{h}x{t}x{t}",
            lambda s, m: torch.softmax(s * 0.125 + m, -1), (b, h, t, t), (b, 1, 1, t))
        add("causal_softmax", d, f"{b}x{h}x{t}x{t}",
            lambda s: torch.softmax(s.masked_fill(torch.ones(t, t, dtype=torch.bool, device=s.device).triu(1),
                                                  float("-inf")), -1), (b, h, t, t))
        add("qkv_split_transpose", d, f"{b}x{t}x{3 * h * hd}",
            lambda qkv: [z.view(b, t, h, hd).transpose(1, 2).contiguous() for z in qkv.split(h * hd, -1)],
            (b, t, 3 * h * hd))
        add("rope", d, f"{b}x{h}x{t}x{hd}", rope, (b, h, t, hd), (1, 1, t, hd), (1, 1, t, hd))
        add("attention_out_residual", d, f"{b}x{t}x{h * hd}",
            lambda y, res: res + y.transpose(1, 2).reshape(b, t, h * hd), (b, h, t, hd), (b, t, h * hd))
        # embeddings
        tokens, vocab, dm = sz.rows(1024), sz.dim(32000, 64), 1024
        add("embedding", d, f"{tokens}x{dm}", lambda ids, tab: F.embedding(ids, tab), _ids(tokens, vocab),
            (vocab, dm))
        add("embedding_layer_norm", d, f"{tokens}x{dm}",
            lambda ids, pos, tab, g, bb: F.layer_norm(F.embedding(ids, tab) + pos, (dm,), g, bb),
            _ids(tokens, vocab), (tokens, dm), (vocab, dm), (dm,), (dm,))
        # scans along the last dim and along the first
        for op in ("cumsum", "cumprod", "logcumsumexp"):
            fn = getattr(torch, op)
            add(op, d, f"{sz.rows(4096)}x4096/dim-1", lambda x, _f=fn: _f(x, -1), (sz.rows(4096), 4096))
            add(op, d, f"4096x{sz.rows(4096)}/dim0", lambda x, _f=fn: _f(x, 0), (4096, sz.rows(4096)))
        add("cummax", d, f"{sz.rows(4096)}x4096/dim-1", lambda x: torch.cummax(x, -1), (sz.rows(4096), 4096))
        # pooling and interpolation
        n, c, hw = sz.batch(32), 64, sz.dim(112, 8)
        add("max_pool2d", d, f"{n}x{c}x{hw}x{hw}", lambda x: F.max_pool2d(x, 3, 2, 1), (n, c, hw, hw))
        add("max_pool2d_indices", d, f"{n}x{c}x{hw}x{hw}", lambda x: F.max_pool2d(x, 2, return_indices=True),
            (n, c, hw, hw))
        add("avg_pool2d", d, f"{n}x{c}x{hw}x{hw}", lambda x: F.avg_pool2d(x, 2), (n, c, hw, hw))
        add("adaptive_avg_pool2d_1", d, f"{n}x{c * 4}x{hw // 2}x{hw // 2}", lambda x: F.adaptive_avg_pool2d(x, 1),
            (n, c * 4, hw // 2, hw // 2))
        add("interpolate_nearest", d, f"{n}x{c}x{hw // 2}x{hw // 2}",
            lambda x: F.interpolate(x, scale_factor=2, mode="nearest"), (n, c, hw // 2, hw // 2))
        add("interpolate_bilinear", d, f"{n}x{c}x{hw // 2}x{hw // 2}",
            lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"), (n, c, hw // 2, hw // 2))
        # gather / scatter / index_add
        rr, ww = sz.rows(4096), 4096
        add("gather_dim1", d, f"{rr}x{ww}", lambda x, i: torch.gather(x, 1, i), (rr, ww),
            lambda dev, dt: torch.randint(0, ww, (rr, ww // 4), device=dev))
        add("gather_reduce", d, f"{rr}x{ww}", lambda x, i: torch.gather(x, 1, i).sum(-1), (rr, ww),
            lambda dev, dt: torch.randint(0, ww, (rr, ww // 4), device=dev))
        add("index_select", d, f"{rr}x{ww}", lambda x, i: x.index_select(0, i), (rr, ww),
            lambda dev, dt: torch.randint(0, rr, (rr,), device=dev))
        add("index_add", d, f"{rr}x{ww}", lambda x, i, s: x.index_add(0, i, s), (rr, ww),
            lambda dev, dt: torch.randperm(rr, device=dev)[: max(1, rr // 4)], (max(1, rr // 4), ww))
        add("scatter_add", d, f"{rr}x{ww}", lambda x, i, s: x.scatter_add(1, i, s), (rr, ww),
            lambda dev, dt: torch.randint(0, ww, (rr, ww // 4), device=dev), (rr, ww // 4))
        # max with indices, argmax, broadcast operands, transposed and sliced inputs
        add("max_with_indices", d, f"{r}x{w}", lambda x: torch.max(x, -1), (r, w))
        add("max_with_indices", d, f"{sz.rows(4099)}x4099", lambda x: torch.max(x, -1), (sz.rows(4099), 4099))
        add("argmax", d, f"{r}x{w}", lambda x: torch.argmax(x, -1), (r, w))
        add("broadcast_mul_add", d, f"{r}x{w}", lambda x, col, row: x * col + row, (r, w), (r, 1), (w,))
        add("broadcast_mul_add", d, f"{sz.rows(4099)}x4099", lambda x, col, row: x * col + row,
            (sz.rows(4099), 4099), (sz.rows(4099), 1), (4099,))
        add("transposed_add", d, f"{w}x{r}", lambda a, b: a.t() + b, (w, r), (r, w))
        add("sliced_gelu", d, f"{r}x{w + 3}", lambda a: F.gelu(a[:, 3:]), (r, w + 3))
        add("odd_width_silu", d, f"{sz.rows(4099)}x4099", F.silu, (sz.rows(4099), 4099))
        # backward graphs of training steps
        add("layer_norm_train", d, f"{r}x{w}", lambda x, g, b: F.layer_norm(x, g.shape, g, b), (r, w), (w,), (w,),
            grad=True)
        add("softmax_train", d, f"{sz.rows(1000)}x1000", lambda x: torch.softmax(x, -1), (sz.rows(1000), 1000),
            grad=True)
        add("gelu_train", d, f"{r}x{w}", lambda x: F.gelu(x, approximate="tanh"), (r, w), grad=True)
        add("rmsnorm_train", d, f"{r}x{w}", rmsnorm, (r, w), (w,), grad=True)
        add("group_norm_train", d, f"{n}x{c}x{hw}x{hw}", lambda x, g, b: F.group_norm(x, 32, g, b), (n, c, hw, hw),
            (c,), (c,), grad=True)
        tm, dmm = sz.rows(1024) // 4 or 1, 1024
        add("mlp_train", d, f"{tm}x{dmm}",
            lambda x, g, b, w1, w2: F.linear(F.gelu(F.linear(F.layer_norm(x, g.shape, g, b), w1)), w2) + x,
            (tm, dmm), (dmm,), (dmm,), _weight((4 * dmm, dmm), dmm), _weight((dmm, 4 * dmm), 4 * dmm), grad=True,
            memory_bound=False)
        # a T5-style encoder block (its matrix products run in cuBLAS under every compiler)
        bt, tt, dd, hh = sz.batch(8), sz.dim(512, 16), 512, 8
        add("t5_block", d, f"{bt}x{tt}x{dd}", t5_block, (bt, tt, dd), (1, hh, tt, tt),
            *(_weight((dd, dd), dd) for _ in range(4)), _weight((dd, 4 * dd), dd), _weight((dd, 4 * dd), dd),
            _weight((4 * dd, dd), 4 * dd), (dd,), (dd,), memory_bound=False)
    # integer ops where they are common: sums and scans of counts, masks
    r, w = sz.rows(4096), 4096
    for d in ("int32", "int64"):
        add("sum_int", d, f"{r}x{w}", lambda x: x.sum(-1), (r, w))
        add("cumsum_int", d, f"{r}x{w}", lambda x: torch.cumsum(x, -1), (r, w))
        add("bitwise_and_shift", d, f"{r}x{w}", lambda a, b: (a & b) >> 2, (r, w), (r, w))
    add("mask_count", "bool", f"{r}x{w}", lambda m: m.sum(-1), (r, w))
    add("masked_fill", "float32", f"{r}x{w}", lambda x, m: x.masked_fill(m, 0.0), (r, w),
        lambda dev, dt: torch.rand(r, w, device=dev) > 0.5)
    return cases


def catalogue(sz: Sizes, lowered: set[str], opinfo: bool = True) -> list[Case]:
    """Every case, patterns first (the time budget, when it runs out, cuts the OpInfo cases at the end)."""
    cases = pattern_cases(sz) + (opinfo_cases(sz, lowered) if opinfo else [])
    seen = set()
    unique = []
    for c in cases:
        if c.name not in seen:
            seen.add(c.name)
            unique.append(c)
    return unique


def tensors(x) -> list:
    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for v in x for t in tensors(v)]
    return []


def bytes_moved(inputs, outputs) -> int:
    """Bytes a case must read and write at least: its inputs' elements (a view's own, not its base's) and its
    outputs'."""
    return sum(t.numel() * t.element_size() for t in tensors(inputs) + tensors(outputs))


def geomean(xs) -> float:
    xs = [x for x in xs if x and x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")
