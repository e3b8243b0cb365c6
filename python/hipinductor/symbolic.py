"""Symbolic sizes of a segment: the expressions over dynamo's size symbols that its layouts and arguments hold, written
in the graph format's `{"sym": EXPR}` syntax with the segment's own symbol names, and the values those names take in
a call.

A segment's symbols are renamed `s0, s1, ...` in the order they first appear in its graph document, so the document
(the compiler's cache key) depends neither on dynamo's numbering nor on the sizes seen when it was traced: a model's
repeated layers give equal documents, and a new process with new sizes finds the compiled graph on disk.
"""

from __future__ import annotations

import sympy
import torch

#: sympy functions that PyTorch's symbolic shapes build, by class name, and how the graph format writes them.
_BINARY = {"FloorDiv": "//", "PythonMod": "%", "Mod": "%"}
_CALLS = {"Max": "max", "Min": "min"}


class NotExpressible(Exception):
    """An expression the graph format has no syntax for (a float, a division that is not floored, ...)."""


def expr_of(x) -> sympy.Expr | int:
    """The sympy expression of a SymInt, or the int itself."""
    if isinstance(x, torch.SymInt):
        e = x.node.expr
        return int(e) if e.is_number else e
    if isinstance(x, int):
        return x
    raise NotExpressible(f"not an int: {x!r}")


def format_expr(e) -> str:
    """`e` (a sympy integer expression) in the graph format's syntax: symbols, integers, + - * // %, min, max."""
    if isinstance(e, int) or (isinstance(e, sympy.Integer)):
        return str(int(e))
    if isinstance(e, sympy.Symbol):
        return e.name
    if isinstance(e, sympy.Add):
        return "(" + " + ".join(format_expr(a) for a in e.args) + ")"
    if isinstance(e, sympy.Mul):
        if any(a.is_number and not a.is_Integer for a in e.args):
            raise NotExpressible(f"non-integer factor in {e}")
        return "(" + "*".join(format_expr(a) for a in e.args) + ")"
    if isinstance(e, sympy.Pow):
        base, exp = e.args
        if exp.is_Integer and int(exp) >= 1:
            return "(" + "*".join([format_expr(base)] * int(exp)) + ")"
        raise NotExpressible(f"power {e}")
    name = type(e).__name__
    if name in _BINARY and len(e.args) == 2:
        return f"({format_expr(e.args[0])} {_BINARY[name]} {format_expr(e.args[1])})"
    if name in _CALLS and len(e.args) >= 2:
        out = format_expr(e.args[0])
        for a in e.args[1:]:
            out = f"{_CALLS[name]}({out}, {format_expr(a)})"
        return out
    raise NotExpressible(f"'{name}' in {e}")


class SymbolNames:
    """dynamo's symbols -> the segment's names (s0, s1, ... in order of first appearance)."""

    def __init__(self):
        self.to_local: dict[sympy.Symbol, sympy.Symbol] = {}

    def size(self, x):
        """An int, or {"sym": EXPR} for a symbolic one (its symbols renamed)."""
        e = expr_of(x)
        if isinstance(e, int):
            return e
        for s in sorted(e.free_symbols, key=lambda s: s.name):
            if s not in self.to_local:
                self.to_local[s] = sympy.Symbol(f"s{len(self.to_local)}", integer=True, positive=True)
        local = e.xreplace(self.to_local)
        if local.is_number:
            return int(local)
        return {"sym": format_expr(local)}

    def order(self, names: list[str]) -> list[sympy.Symbol]:
        """dynamo's symbols in the order of `names` (the compiled graph's `symbols`, local names)."""
        back = {v.name: k for k, v in self.to_local.items()}
        missing = [n for n in names if n not in back]
        if missing:
            raise KeyError(f"the compiled graph takes symbols {missing} that its document does not hold")
        return [back[n] for n in names]


def bind(symbols: list[sympy.Symbol], env: dict) -> list[int]:
    """The values of `symbols` (dynamo's) in a call whose bound symbols are `env`."""
    return [int(env[s]) for s in symbols]


def evaluate(x, env: dict) -> int:
    """A size (int or SymInt) evaluated with the call's symbol values."""
    e = expr_of(x)
    return e if isinstance(e, int) else int(e.xreplace(env))


class Evaluator:
    """A fixed list of sizes (ints and SymInts) evaluated at a call's symbol values by Python source compiled once:
    a graph's first call at a new size evaluates every segment's layouts, which sympy's substitution would make
    cost milliseconds."""

    def __init__(self, values: list):
        exprs = [expr_of(v) for v in values]
        symbols = sorted({s for e in exprs if not isinstance(e, int) for s in e.free_symbols}, key=lambda s: s.name)
        local = {s: sympy.Symbol(f"v{i}", integer=True, nonnegative=True) for i, s in enumerate(symbols)}
        try:
            body = "".join((str(e) if isinstance(e, int) else format_expr(e.xreplace(local))) + ", " for e in exprs)
        except NotExpressible:
            self._exprs = exprs
            self._fn = self._substituting
            return
        source = ("def evaluate(env):\n" + "".join(f"    v{i} = env[k{i}]\n" for i in range(len(symbols)))
                  + f"    return ({body})\n")
        namespace = {f"k{i}": s for i, s in enumerate(symbols)}
        exec(compile(source, "<hipinductor sizes>", "exec"), namespace)
        self._fn = namespace["evaluate"]

    def __call__(self, env: dict) -> tuple:
        return self._fn(env)

    def _substituting(self, env: dict) -> tuple:
        return tuple(e if isinstance(e, int) else int(e.xreplace(env)) for e in self._exprs)


class Layouts:
    """The layouts a graph's symbolic tensors take at a call's symbol values, evaluated through an Evaluator per
    node, made at the node's first use."""

    def __init__(self):
        self._inputs: dict = {}
        self._outputs: dict = {}

    def input_matches(self, node, meta: torch.Tensor, value: torch.Tensor, env: dict, layout) -> bool:
        """Whether `value` has the layout a segment compiled symbolically assumes of input `node` at `env`: its
        traced sizes (fake `meta`) and `layout(meta)`'s (strides, storage offset) (graph_format.input_layout)."""
        if value.dim() != meta.dim() or value.dtype != meta.dtype:
            return False
        ev = self._inputs.get(node)
        if ev is None:
            strides, offset = layout(meta)
            ev = self._inputs[node] = Evaluator([*meta.shape, *strides, offset])
        want = ev(env)
        d = meta.dim()
        sizes = tuple(value.shape)
        if want[:d] != sizes:
            return False
        # Strides of size-1 dims are never read.
        if any(n != 1 and w != v for n, w, v in zip(sizes, want[d:2 * d], value.stride())):
            return False
        return value.numel() == 0 or want[2 * d] == value.storage_offset()

    def output(self, node, meta: torch.Tensor, env: dict, output_strides) -> tuple[list, list]:
        """(sizes, strides) of the tensor `node` produces (fake `meta`) at `env`, its strides as
        `output_strides(meta)` gives them for every size."""
        ev = self._outputs.get(node)
        if ev is None:
            ev = self._outputs[node] = Evaluator([*meta.shape, *output_strides(meta)])
        values = ev(env)
        return list(values[:meta.dim()]), list(values[meta.dim():])
