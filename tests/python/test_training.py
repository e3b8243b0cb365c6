"""Training through hipinductor: forward and backward graphs compiled, losses and gradients match eager."""

import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

import hipinductor


class MLP(nn.Module):
    def __init__(self, d=64, hidden=128):
        super().__init__()
        self.fc1 = nn.Linear(d, hidden)
        self.ln = nn.LayerNorm(hidden)
        self.fc2 = nn.Linear(hidden, d)

    def forward(self, x):
        return self.fc2(F.gelu(self.ln(self.fc1(x))))


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class Block(nn.Module):
    """A small pre-norm transformer block: causal self-attention with an explicit softmax, RMSNorm, residuals."""

    def __init__(self, d=32, heads=4):
        super().__init__()
        self.heads = heads
        self.norm1 = RMSNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.norm2 = RMSNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(d, dim=-1)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) / (d // self.heads) ** 0.5
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
        att = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(y)
        return x + self.mlp(self.norm2(x))


def check_training(model, x, steps=2):
    torch.manual_seed(0)
    eager = model
    compiled_model = copy.deepcopy(model)
    compiled = torch.compile(compiled_model, backend="hipinductor")
    for _ in range(steps):
        for m in (eager, compiled_model):
            m.zero_grad()
        loss_e = eager(x).square().mean()
        loss_c = compiled(x).square().mean()
        loss_e.backward()
        loss_c.backward()
        torch.testing.assert_close(loss_c, loss_e, rtol=1e-4, atol=1e-5)
        for (name, pe), (_, pc) in zip(eager.named_parameters(), compiled_model.named_parameters()):
            torch.testing.assert_close(pc.grad, pe.grad, rtol=1e-3, atol=1e-5, msg=lambda m: f"{name}: {m}")
        with torch.no_grad():
            for pe, pc in zip(eager.parameters(), compiled_model.parameters()):
                pe -= 0.01 * pe.grad
                pc -= 0.01 * pc.grad


def test_mlp_with_layernorm_and_gelu_trains_like_eager():
    hipinductor.clear_reports()
    torch.manual_seed(0)
    check_training(MLP(), torch.randn(16, 64))
    kinds = {r["name"].split("_")[0] for r in hipinductor.reports()}
    assert {"forward", "backward"} <= kinds
    assert sum(r["kernels"] for r in hipinductor.reports()) > 0


def test_transformer_block_trains_like_eager():
    torch.manual_seed(0)
    check_training(Block(), torch.randn(2, 8, 32))


def test_repeated_layers_share_compiles_in_both_directions_and_train_like_eager():
    # Four identical layers: their forward segments and their backward segments each share one compile.
    torch._dynamo.reset()
    hipinductor.clear_reports()
    torch.manual_seed(0)
    layers = nn.Sequential(*[nn.Sequential(nn.LayerNorm(48), nn.Linear(48, 48), nn.GELU()) for _ in range(4)])
    check_training(layers, torch.randn(16, 48))
    shared = {r["name"].split("_")[0]: r["shared_compiles"] for r in hipinductor.reports()}
    assert shared.get("forward", 0) >= 2 and shared.get("backward", 0) >= 2, hipinductor.reports()


def test_forward_saves_what_the_backward_cannot_recompute_cheaply(tmp_path):
    # RMSNorm over bf16: the min-cut partition keeps x, w and rstd for the backward and recomputes x.float() and
    # x * rstd there (AOTAutograd's default partition also saved those two full-size tensors).
    def rmsnorm(x, w):
        return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(x.dtype) * w

    x = torch.randn(64, 256, dtype=torch.bfloat16, requires_grad=True)
    w = torch.randn(256, dtype=torch.bfloat16, requires_grad=True)
    f = torch.compile(rmsnorm, backend="hipinductor", options={"debug_dir": str(tmp_path)})
    f(x, w).sum().backward()
    gx, gw = x.grad.clone(), w.grad.clone()
    x.grad, w.grad = None, None
    rmsnorm(x, w).sum().backward()
    torch.testing.assert_close(gx, x.grad, atol=2e-2, rtol=2e-2)
    torch.testing.assert_close(gw, w.grad, atol=0.5, rtol=2e-2)
    # forward_<N>: N counts the graphs this process has compiled
    (dump,) = [d for d in tmp_path.glob("forward_*") if (d / "aten_graph.txt").exists()]
    graph = (dump / "aten_graph.txt").read_text()
    returned = next(line for line in graph.splitlines() if line.strip().startswith("return ("))
    saved = returned.strip()[len("return ("):-1].split(", ")[1:]
    full = [name for name in saved if f"{name}: \"f32[64, 256]\"" in graph or f"{name}: \"bf16[64, 256]\"" in graph]
    assert full == ["primals_1"], (saved, graph)
