"""Writing a segment as a hipinductor graph: the versioned JSON document of docs/graph-format.md that `_C.compile`
reads, either specialised to the concrete sizes, strides and storage offsets of the tensors the segment receives
(symbolic sizes evaluated with the call's symbols), or symbolic: sizes written `{"sym": EXPR}` over the segment's own
symbol names (symbolic.SymbolNames), compiled once for every size.
"""

from __future__ import annotations

import json
import math
import operator

import sympy
import torch
import torch.fx as fx

from .devices import ALIGN
from .nodes import SUPPORTED_DTYPES, contiguous_strides, is_dense, is_sym_int, node_tensors, op_name
from .partition import Reject, Segment
from .symbolic import NotExpressible, SymbolNames, expr_of


def sym_value(x, env: dict) -> int:
    """The int `x` is (a SymInt evaluated with the symbols' values `env`)."""
    if isinstance(x, int):
        return x
    if isinstance(x, torch.SymInt):
        expr = x.node.expr
        if expr.is_number:
            return int(expr)
        return int(expr.xreplace(env))
    raise TypeError(f"not an int: {x!r}")


def output_layout(t: torch.Tensor, env: dict) -> dict:
    """Layout of a tensor the compiled segment *produces*: a fresh allocation, so offset 0, and eager's strides
    when they are a dense permutation (what PyTorch cares about), else contiguous ones (eager views into larger
    storage, e.g. the pieces of a split, would only waste memory and cannot be allocated alone). A symbolic layout
    (has_symbols) is decided for every size (symbolic_output_strides) and evaluated with `env`, so that it is the
    layout a symbolic compile of the segment writes."""
    sizes = [sym_value(s, env) for s in t.shape]
    if any(isinstance(s, torch.SymInt) for s in list(t.shape) + list(t.stride())):
        strides = [sym_value(s, env) for s in symbolic_output_strides(t)]
    else:
        strides = [sym_value(s, env) for s in t.stride()]
        if not is_dense(sizes, strides):
            strides = contiguous_strides(sizes)
    return {"dtype": SUPPORTED_DTYPES[t.dtype], "sizes": sizes, "strides": strides, "offset": 0}


def symbolic_output_strides(t: torch.Tensor) -> list:
    """output_layout's strides of a tensor with symbolic sizes, as ints and SymInts: its own where they are a dense
    permutation whatever the symbols' values (dims ordered by their strides' hints, each stride equal to the product
    of the sizes inside it as expressions), else contiguous ones."""
    from torch.fx.experimental.symbolic_shapes import hint_int

    sizes, strides = list(t.shape), list(t.stride())
    try:
        dims = sorted(((hint_int(st), st, n) for n, st in zip(sizes, strides) if not (isinstance(n, int) and n == 1)),
                      key=lambda d: d[0])
        expected = 1
        dense = True
        for _, st, n in dims:
            if sympy.expand(sympy.sympify(expr_of(st)) - sympy.sympify(expected)) != 0:
                dense = False
                break
            expected = expected * expr_of(n)
    except (NotExpressible, TypeError, ValueError):
        dense = False
    if dense:
        return strides
    out, step = [], 1
    for n in reversed(sizes):
        out.append(step)
        step = step * (n if not isinstance(n, int) else max(n, 1))
    return out[::-1]


def input_layout(seg: Segment, node: fx.Node, t: torch.Tensor) -> tuple[list, object]:
    """(strides, storage offset) of input `node` of `seg` (traced `t`, sizes symbolic) as a call brings it: the
    layout another segment writes it in (symbolic_output_strides, offset 0) where one does (Segment.produced), else
    the traced one (dynamo guards graph inputs' layouts; eager ops' results are checked per call)."""
    if node in seg.produced:
        return symbolic_output_strides(t), 0
    return list(t.stride()), t.storage_offset()


def segment_json(seg: Segment, inputs: list[torch.Tensor], env: dict, aligned: bool = False,
                 names: SymbolNames | None = None) -> dict:
    """The graph document of `seg` for `inputs` (its input values, or their fake tensors) and the symbols' values
    `env`; with `aligned`, promising every input's first element ALIGN-byte aligned. With `names`, `inputs` are the
    fake tensors and every symbolic size is written as such, its symbols named by `names` (env unused). Raises Reject
    naming the node whose arguments the format cannot express, and symbolic.NotExpressible for a symbolic value
    it can express only once evaluated (a float computed from sizes)."""
    if names is not None:
        size = names.size
    else:
        def size(x):
            return sym_value(x, env)
    names_of: dict[fx.Node, tuple[str, int | None]] = {}
    nodes_json = []
    for node, value in zip(seg.inputs, inputs):
        strides, offset = (input_layout(seg, node, value) if names is not None
                           else (value.stride(), value.storage_offset()))
        nodes_json.append({"name": node.name, "op": "placeholder",
                           "meta": {"dtype": SUPPORTED_DTYPES[value.dtype], "sizes": [size(s) for s in value.shape],
                                    "strides": [size(s) for s in strides], "offset": size(offset)}})
        names_of[node] = (node.name, None)

    def meta_of(t: torch.Tensor) -> dict:
        if names is None:
            return output_layout(t, env)
        return {"dtype": SUPPORTED_DTYPES[t.dtype], "sizes": [size(s) for s in t.shape],
                "strides": [size(s) for s in symbolic_output_strides(t)], "offset": 0}

    def ref(n: fx.Node) -> dict:
        if n not in names_of:
            raise Reject(n, "reads a value the segment does not have")
        name, k = names_of[n]
        return {"ref": name} if k is None else {"ref": name, "output": k}

    def arg(a):
        if isinstance(a, fx.Node):
            val = a.meta.get("val")
            if is_sym_int(a):
                return size(val)  # a size computed by an eager sym_size node
            if isinstance(val, torch.SymFloat):
                return arg(val)  # a float computed from sizes (batch norm's 1 / (N * H * W))
            return ref(a)
        if isinstance(a, bool) or a is None or isinstance(a, str):
            return a
        if isinstance(a, (int, torch.SymInt)):
            return size(a)
        if isinstance(a, (float, torch.SymFloat)):
            if isinstance(a, torch.SymFloat) and not a.node.expr.is_number and names is not None:
                raise NotExpressible(f"a float computed from symbolic sizes ({a.node.expr})")
            v = float(a) if isinstance(a, float) else float(a.node.expr.xreplace(env))
            if math.isnan(v):
                return {"float": "nan"}
            if math.isinf(v):
                return {"float": "inf" if v > 0 else "-inf"}
            return {"float": v}
        if isinstance(a, torch.dtype):
            if a not in SUPPORTED_DTYPES:
                raise Reject(None, f"dtype {a}")
            return {"dtype": SUPPORTED_DTYPES[a]}
        if isinstance(a, (torch.device, torch.layout, torch.memory_format)):
            return None
        if isinstance(a, (list, tuple)):
            # Tensor lists (None entries allowed); int lists whose symbolic entries eager nodes computed (full's
            # size [s0 * 32]) go through arg() like a lone size.
            if any(isinstance(x, fx.Node) and not is_sym_int(x) for x in a) or (a and all(x is None for x in a)):
                return [ref(x) if isinstance(x, fx.Node) else None for x in a]
            return [arg(x) for x in a]
        raise Reject(None, f"argument {a!r} of type {type(a).__name__}")

    for node in seg.nodes:
        if node.target is operator.getitem:
            src, k = node.args
            names_of[node] = (names_of[src][0], k)
            continue
        metas = [meta_of(t) for t in node_tensors(node)]
        try:
            entry = {"name": node.name, "op": op_name(node), "args": [arg(a) for a in node.args],
                     "meta": metas[0] if len(metas) == 1 else metas}
            if node.kwargs:
                entry["kwargs"] = {k: arg(v) for k, v in node.kwargs.items()}
        except Reject as r:
            raise Reject(node, r.why) from None
        nodes_json.append(entry)
        names_of[node] = (node.name, None)
    graph = {"format": "hipinductor-graph", "version": 1, "nodes": nodes_json,
             "outputs": [ref(n) for n in seg.outputs]}
    if aligned:  # inputs' first elements and (PyTorch-allocated) outputs: no run-time alignment checks
        graph["version"], graph["align"] = 2, ALIGN
    return graph


def without_names(graph: dict) -> str:
    """A segment's graph JSON with its node names replaced by their order of appearance: equal for segments that
    compile to the same kernels (a model's repeated layers)."""
    names: dict = {}

    def rename(x):
        if isinstance(x, dict):
            return {k: names.setdefault(v, len(names)) if k in ("name", "ref") else rename(v) for k, v in x.items()}
        if isinstance(x, list):
            return [rename(v) for v in x]
        return x

    return json.dumps(rename(graph), sort_keys=True)
