"""The models distributed training is checked and timed with (tests/python/test_distributed.py,
bench/distributed.py): an MLP of four linear layers with LayerNorm and GELU, and a pre-norm transformer block."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    def __init__(self, d=256, hidden=512):
        super().__init__()
        self.fc1 = nn.Linear(d, hidden)
        self.ln = nn.LayerNorm(hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, hidden)
        self.fc4 = nn.Linear(hidden, d)

    def forward(self, x):
        h = F.gelu(self.ln(self.fc1(x)))
        h = torch.relu(self.fc2(h)) + h
        return self.fc4(torch.tanh(self.fc3(h)) * h)


class Block(nn.Module):
    """A pre-norm transformer block: causal self-attention with an explicit softmax, LayerNorm, a GELU MLP."""

    def __init__(self, d=256, heads=4):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.norm2 = nn.LayerNorm(d)
        self.up = nn.Linear(d, 4 * d)
        self.down = nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(d, dim=-1)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) / (d // self.heads) ** 0.5
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool, device=x.device), diagonal=1)
        att = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
        x = x + self.proj((att @ v).transpose(1, 2).reshape(b, t, d))
        return x + self.down(F.gelu(self.up(self.norm2(x))))


#: name -> (model, the shape of one rank's batch)
MODELS = {"mlp": (MLP, (16, 256)), "block": (Block, (2, 8, 256))}
