#!/usr/bin/env python3
"""Regenerate examples/*.json from real PyTorch modules traced with make_fx.

Each example is traced to an ATen-level FX graph (with the decompositions AOTAutograd would apply where the example
wants the decomposed form), then written in hipinductor's graph format (docs/graph-format.md).

    ./devenv python3 tools/export_examples.py [OUT_DIR]     # default OUT_DIR: examples/
    ./devenv python3 tools/export_examples.py --dynamic-fixture > tests/frontend/data/dynamic_softmax.json
"""
import json
import math
import operator
import os
import sys

import torch
import torch.nn.functional as F
from torch._decomp import get_decompositions
from torch.fx.experimental.proxy_tensor import make_fx

aten = torch.ops.aten

FORMAT = "hipinductor-graph"
VERSION = 1


def dtype_name(dtype):
    return str(dtype).removeprefix("torch.")


def encode_int(value):
    if isinstance(value, torch.SymInt):
        return {"sym": str(value)}
    return int(value)


def encode_meta(val):
    return {
        "dtype": dtype_name(val.dtype),
        "sizes": [encode_int(s) for s in val.shape],
        "strides": [encode_int(s) for s in val.stride()],
        **({"offset": encode_int(val.storage_offset())} if val.storage_offset() != 0 else {}),
    }


class Exporter:
    def __init__(self, gm):
        self.gm = gm
        # getitem(node, k) is not a node in hipinductor's format: its users reference output k of `node` directly.
        self.getitems = {}

    def ref(self, node):
        if node in self.getitems:
            source, index = self.getitems[node]
            return {"ref": source.name, "output": index}
        return {"ref": node.name}

    def arg(self, value):
        if isinstance(value, torch.fx.Node) and isinstance(value.meta.get("val"), torch.SymInt):
            return encode_int(value.meta["val"])  # sym_size / SymInt arithmetic: inline the expression
        if isinstance(value, torch.fx.Node):
            return self.ref(value)
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, (int, torch.SymInt)):
            return encode_int(value)
        if isinstance(value, float):
            return value if math.isfinite(value) else {"float": str(value)}
        if isinstance(value, torch.dtype):
            return {"dtype": dtype_name(value)}
        if isinstance(value, (list, tuple)):
            return [self.arg(v) for v in value]
        if isinstance(value, (torch.device, torch.layout, torch.memory_format)):
            return str(value)
        raise TypeError(f"cannot encode argument {value!r} of type {type(value).__name__}")

    def export(self):
        nodes, outputs = [], []
        for node in self.gm.graph.nodes:
            if node.op == "placeholder":
                nodes.append({"name": node.name, "op": "placeholder", "meta": encode_meta(node.meta["val"])})
            elif node.op == "call_function" and isinstance(node.meta.get("val"), torch.SymInt):
                continue  # inlined into its users by arg()
            elif node.op == "call_function" and node.target is operator.getitem:
                self.getitems[node] = (node.args[0], node.args[1])
            elif node.op == "call_function":
                val = node.meta["val"]
                meta = [encode_meta(v) for v in val] if isinstance(val, (tuple, list)) else encode_meta(val)
                entry = {"name": node.name, "op": str(node.target), "args": [self.arg(a) for a in node.args]}
                if node.kwargs:
                    entry["kwargs"] = {k: self.arg(v) for k, v in node.kwargs.items()}
                entry["meta"] = meta
                nodes.append(entry)
            elif node.op == "output":
                outputs = [self.ref(n) for n in node.args[0]]
            else:
                raise TypeError(f"node {node.name}: unsupported FX op {node.op}")
        return {"format": FORMAT, "version": VERSION, "nodes": nodes, "outputs": outputs}


def dumps(graph):
    """One node per line: readable, and diffs stay small."""
    lines = ['{"format": %s, "version": %d,' % (json.dumps(graph["format"]), graph["version"]), ' "nodes": [']
    lines.append(",\n".join("  " + json.dumps(n) for n in graph["nodes"]))
    lines.append(" ],")
    lines.append(' "outputs": %s}' % json.dumps(graph["outputs"]))
    return "\n".join(lines) + "\n"


def trace(fn, inputs, decompositions=(), tracing_mode="fake"):
    gm = make_fx(fn, decomposition_table=get_decompositions(list(decompositions)), tracing_mode=tracing_mode)(*inputs)
    return Exporter(gm).export()


def layernorm_gelu_residual():
    def fn(x, w, b):
        return (F.gelu(F.layer_norm(x, [256], w, b, eps=1e-5), approximate="tanh") + x,)
    return trace(fn, [torch.randn(64, 256), torch.randn(256), torch.randn(256)])


def softmax():
    def fn(x):
        return (torch.softmax(x, dim=-1),)
    return trace(fn, [torch.randn(32, 1000)], [aten._softmax])


def pointwise_chain():
    def fn(x):
        y = x * 2.0
        y = y + 1.0
        y = torch.relu(y)
        y = torch.sigmoid(y)
        y = torch.exp(y)
        y = torch.tanh(y)
        y = y - 0.5
        y = torch.abs(y)
        y = torch.sqrt(y)
        y = torch.neg(y)
        return (y,)
    return trace(fn, [torch.randn(1024, 512)])


def layernorm_decomposed():
    def fn(x, w, b):
        return (F.layer_norm(x, [768], w, b, eps=1e-5),)
    graph = trace(fn, [torch.randn(128, 768), torch.randn(768), torch.randn(768)], [aten.native_layer_norm])
    return graph


def dynamic_softmax_flatten():
    """Symbolic sizes (tests/frontend/data/): softmax over the last dim, then a flattening view."""
    def fn(x):
        return (torch.softmax(x, dim=-1).reshape(-1) * 2.0,)
    return trace(fn, [torch.randn(8, 16)], [aten._softmax], tracing_mode="symbolic")


EXAMPLES = {
    "layernorm_gelu_residual": layernorm_gelu_residual,
    "softmax": softmax,
    "pointwise_chain": pointwise_chain,
    "layernorm_decomposed": layernorm_decomposed,
}


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    out_dir = args[0] if args else os.path.join(os.path.dirname(__file__), "..", "examples")
    os.makedirs(out_dir, exist_ok=True)
    if "--dynamic-fixture" in sys.argv:
        sys.stdout.write(dumps(dynamic_softmax_flatten()))
        return
    for name, build in EXAMPLES.items():
        path = os.path.join(out_dir, name + ".json")
        with open(path, "w") as f:
            f.write(dumps(build()))
        print("wrote", os.path.normpath(path))


if __name__ == "__main__":
    main()
