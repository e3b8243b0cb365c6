"""Facts about the nodes of an ATen FX graph and the values their metas describe, shared by the passes, the
partitioner, the graph-format writer, the executor and the fast path.

Which ATen ops are views is the C++ op-schema table's fact (`_C.view_ops()`: the overloads whose schema returns an
alias of their first argument) for the ops that table has; for the ops it does not have (ops hipinductor only ever
runs eagerly) it is PyTorch's own (`OpOverload.is_view`), since the C++ side never sees them.
"""

from __future__ import annotations

import operator

import torch
import torch.fx as fx

from . import _C

#: PyTorch dtypes hipinductor's graph format has, and their names there.
SUPPORTED_DTYPES = {
    torch.float32: "float32",
    torch.float16: "float16",
    torch.bfloat16: "bfloat16",
    torch.float64: "float64",
    torch.int64: "int64",
    torch.int32: "int32",
    torch.int16: "int16",
    torch.int8: "int8",
    torch.uint8: "uint8",
    torch.bool: "bool",
}

#: Overloads whose result is a reshaped alias of their input (AOTAutograd writes both for `view`).
RESHAPE_VIEWS = ("aten.view.default", "aten._unsafe_view.default")

_SCHEMA_OPS = frozenset(_C.schema_ops())
# Python's additions to the C++ table's views, for the partitioner and the fast path only: _unsafe_view returns a new
# tensor in its schema (so the C++ table, like PyTorch, does not call it a view) but is `view` apart from autograd's
# view tracking, and is as free in eager.
VIEW_OPS = frozenset(_C.view_ops()) | {"aten._unsafe_view.default"}


def op_name(node: fx.Node) -> str:
    """`aten.add.Tensor` for an OpOverload target; the callable's name otherwise."""
    t = node.target
    if isinstance(t, torch._ops.OpOverload):
        return str(t)
    return getattr(t, "__name__", str(t))


def is_view(node: fx.Node) -> bool:
    """Ops that are views in eager (free there): permute, t, transpose, view, expand, slice, select, split, ..."""
    t = node.target
    if not isinstance(t, torch._ops.OpOverload):
        return False
    name = str(t)
    if name in VIEW_OPS:
        return True
    if name in _SCHEMA_OPS:
        return False
    return bool(getattr(t, "is_view", False))


def tensor_meta(node: fx.Node):
    """The tensor `node` produces (its fake tensor), or None where it produces something else."""
    val = node.meta.get("val")
    return val if isinstance(val, torch.Tensor) else None


def node_tensors(node: fx.Node) -> list[torch.Tensor]:
    """The tensors `node` produces: its value, or the tensors of its tuple or list value."""
    val = node.meta.get("val")
    if isinstance(val, torch.Tensor):
        return [val]
    if isinstance(val, (list, tuple)):
        return [v for v in val if isinstance(v, torch.Tensor)]
    return []


def node_device(node: fx.Node):
    """The device of the first tensor `node` produces, or None."""
    ts = node_tensors(node)
    return ts[0].device if ts else None


def has_symbols(val) -> bool:
    """Whether a meta value (a tensor's sizes and strides, a scalar, a list of them) holds symbolic values."""
    if isinstance(val, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        return True
    if isinstance(val, (list, tuple)):
        return any(has_symbols(v) for v in val)
    if isinstance(val, torch.Tensor):
        return any(isinstance(s, torch.SymInt) for s in list(val.shape) + list(val.stride()))
    return False


def is_sym_int(node: fx.Node) -> bool:
    """A node whose value is a (possibly symbolic) int, such as a size computed from sym_size."""
    val = node.meta.get("val")
    return isinstance(val, (int, torch.SymInt)) and not isinstance(val, bool)


#: Namespaces of PyTorch's collective ops: the functional collectives traced into graphs (FSDP2's all-gathers and
#: reduce-scatters, DTensor's redistributions, a user's funcol calls) with their waits, and c10d's in-place ones.
COLLECTIVE_NAMESPACES = frozenset({"_c10d_functional", "_c10d_functional_autograd", "c10d_functional", "c10d"})


def is_collective(node: fx.Node) -> bool:
    """A collective (or the wait for one): communication between the processes of a group."""
    t = node.target
    return isinstance(t, torch._ops.OpOverload) and t.namespace in COLLECTIVE_NAMESPACES


def has_side_effects(node: fx.Node) -> bool:
    """Mutates an argument, is not an ATen op (a higher-order op, a Python callable), or is a collective: keeps its
    place. Every process of a group must issue its collectives in one order, and the graph's order is where its
    producer (FSDP, DTensor, the user) put each wait so that communication overlaps the compute before it; a
    functional collective's schema mutates nothing, so only this rule keeps it from moving."""
    t = node.target
    if t is operator.getitem:
        return False
    if not isinstance(t, torch._ops.OpOverload):
        return True
    return t._schema.is_mutable or t.namespace in COLLECTIVE_NAMESPACES


def is_random(node: fx.Node) -> bool:
    t = node.target
    return isinstance(t, torch._ops.OpOverload) and torch.Tag.nondeterministic_seeded in t.tags


def statically_empty(t: torch.Tensor) -> bool:
    """Sizes known when the graph is built, one of them 0."""
    return all(isinstance(s, int) for s in t.shape) and 0 in t.shape


def contiguous_strides(sizes: list[int]) -> list[int]:
    strides, step = [], 1
    for n in reversed(sizes):
        strides.append(step)
        step *= max(n, 1)
    return strides[::-1]


def is_dense(sizes: list[int], strides: list[int]) -> bool:
    """Non-overlapping and dense: some permutation of the dims is contiguous (size-1 dims' strides don't matter)."""
    dims = sorted((st, n) for n, st in zip(sizes, strides) if n != 1)
    expected = 1
    for st, n in dims:
        if st != expected:
            return False
        expected *= n
    return True
