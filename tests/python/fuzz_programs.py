"""Random straight-line PyTorch programs for differential testing (tests/python/test_fuzz_programs.py).

A program is data: a list of steps, each an input (shape, dtype, layout, special values) or an op applied to earlier
values with constant parameters. Being data, hypothesis shrinks it and prints it, and `run_program` runs it under
eager PyTorch or torch.compile alike. `programs()` draws programs that eager PyTorch runs: each step is run eagerly
as it is drawn (the tensors are small) and redrawn when PyTorch rejects it.

Each value carries an `exact` flag: true when eager and a correct compiler must agree on it bit for bit (inputs,
views, copies, neg/abs/relu/min/max/clamp/where of exact values, widening conversions). Ops with jumps (floor, round,
comparisons, argmax, conversions to integers) read only exact values, so a rounding difference one ulp wide never
becomes a difference of 1 in an integer; the comparison of inexact values is by tolerance against a float64 run.
"""

from __future__ import annotations

import dataclasses
import math
import os
from typing import Any

import torch
import torch.nn.functional as F
from hypothesis import strategies as st

FLOATS = ("float32", "bfloat16", "float16")
INTS = ("int32", "int64")
DTYPES = FLOATS + INTS + ("bool",)
SPECIALS = (float("nan"), float("inf"), float("-inf"), -0.0, 0.0)
LAYOUTS = ("contiguous", "transposed", "strided", "offset", "expanded")
#: Where test_fuzz_programs runs programs (eager, compiled and the float64 references alike):
#: HIPINDUCTOR_FUZZ_DEVICE, default the CPU. Programs are drawn, each step checked by eager, on the CPU either way:
#: an index out of range is an exception there, on a GPU an assertion that ends the process.
DEVICE = os.environ.get("HIPINDUCTOR_FUZZ_DEVICE", "cpu")


@dataclasses.dataclass(frozen=True)
class Step:
    """`op` over the values at `args` (indices into the program's values) with constant `params`. op "input" is a
    program input: params shape, dtype, layout, seed, specials ((position in [0, 1), value), ...), and for index
    inputs "high" (values drawn in [0, high))."""

    op: str
    args: tuple = ()
    params: tuple = ()  # sorted (name, value) pairs

    def param(self, name, default=None):
        return dict(self.params).get(name, default)

    def __repr__(self):
        p = ", ".join(f"{k}={v!r}" for k, v in self.params)
        return f"Step({self.op!r}, {self.args}, {p})"


@dataclasses.dataclass(frozen=True)
class Program:
    steps: tuple
    outputs: tuple  # value indices returned

    def inputs(self):
        return [s for s in self.steps if s.op == "input"]

    def ops(self):
        return {s.op for s in self.steps if s.op != "input"}


def _dtype(name):
    return getattr(torch, name)


# ---------------------------------------------------------------------------------------------------------------
# Ops: name -> function(params dict, *tensors). Constants only in params, so dynamo traces each program straight.

def _reduce(fn):
    return lambda p, x: fn(x, dim=p["dims"], keepdim=p["keepdim"])


UNARY_FLOAT = {
    "exp": torch.exp, "log": torch.log, "sqrt": torch.sqrt, "sin": torch.sin, "tanh": torch.tanh,
    "sigmoid": torch.sigmoid, "gelu": F.gelu, "reciprocal": torch.reciprocal, "rsqrt": torch.rsqrt, "erf": torch.erf,
    "expm1": torch.expm1, "log1p": torch.log1p, "silu": F.silu, "square": torch.square,
}
# Exact in every dtype: eager and a correct compiler agree bit for bit, signed zeros included.
UNARY_EXACT = {"neg": torch.neg, "abs": torch.abs, "relu": torch.relu}
# Piecewise constant: only on exact values.
UNARY_JUMPS = {"floor": torch.floor, "ceil": torch.ceil, "round": torch.round, "trunc": torch.trunc,
               "sign": torch.sign, "isnan": torch.isnan, "isinf": torch.isinf, "logical_not": torch.logical_not}
BINARY = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div, "atan2": torch.atan2}
BINARY_EXACT = {"maximum": torch.maximum, "minimum": torch.minimum}
COMPARE = {"eq": torch.eq, "lt": torch.lt, "ge": torch.ge, "ne": torch.ne, "logical_and": torch.logical_and}
BITWISE = {"bitwise_and": torch.bitwise_and, "bitwise_or": torch.bitwise_or, "bitwise_xor": torch.bitwise_xor}
REDUCTIONS = {"sum": _reduce(torch.sum), "mean": _reduce(torch.mean), "amax": _reduce(torch.amax),
              "amin": _reduce(torch.amin), "var": _reduce(torch.var), "std": _reduce(torch.std),
              "logsumexp": _reduce(torch.logsumexp), "norm": lambda p, x: torch.linalg.vector_norm(
                  x, dim=p["dims"], keepdim=p["keepdim"]),
              "any": _reduce(torch.any), "all": _reduce(torch.all)}

OPS: dict[str, Any] = {}
OPS.update({k: (lambda f: lambda p, x: f(x))(f) for k, f in {**UNARY_FLOAT, **UNARY_EXACT, **UNARY_JUMPS}.items()})
OPS.update({k: (lambda f: lambda p, a, b: f(a, b))(f) for k, f in {**BINARY, **BINARY_EXACT, **COMPARE,
                                                                    **BITWISE}.items()})
OPS.update(REDUCTIONS)
OPS.update({
    "bitwise_not": lambda p, x: torch.bitwise_not(x),
    "clamp": lambda p, x: torch.clamp(x, p["lo"], p["hi"]),
    "nan_to_num": lambda p, x: torch.nan_to_num(x),
    "add_scalar": lambda p, x: x + p["value"],
    "mul_scalar": lambda p, x: x * p["value"],
    "pow_scalar": lambda p, x: torch.pow(x, p["value"]),
    "where": lambda p, c, a, b: torch.where(c, a, b),
    "to": lambda p, x: x.to(_dtype(p["dtype"])),
    "prod": lambda p, x: torch.prod(x, p["dim"], keepdim=p["keepdim"]),
    "argmax": lambda p, x: torch.argmax(x, p["dim"], keepdim=p["keepdim"]),
    "argmin": lambda p, x: torch.argmin(x, p["dim"], keepdim=p["keepdim"]),
    "cumsum": lambda p, x: torch.cumsum(x, p["dim"]),
    "softmax": lambda p, x: torch.softmax(x, p["dim"]),
    "log_softmax": lambda p, x: torch.log_softmax(x, p["dim"]),
    "layer_norm": lambda p, x: F.layer_norm(x, x.shape[len(x.shape) - p["ndims"]:]),
    "reshape": lambda p, x: x.reshape(p["shape"]),
    "permute": lambda p, x: x.permute(p["perm"]),
    "transpose": lambda p, x: x.transpose(p["dim0"], p["dim1"]),
    "unsqueeze": lambda p, x: x.unsqueeze(p["dim"]),
    "squeeze": lambda p, x: x.squeeze(p["dim"]),
    "expand": lambda p, x: x.expand(p["shape"]),
    "slice": lambda p, x: x[(slice(None),) * p["dim"] + (slice(p["start"], p["stop"], p["step"]),)],
    "select": lambda p, x: x.select(p["dim"], p["index"]),
    "flip": lambda p, x: x.flip(p["dims"]),
    "clone": lambda p, x: x.clone(),
    "contiguous": lambda p, x: x.contiguous(),
    "cat": lambda p, a, b: torch.cat([a, b], p["dim"]),
    "stack": lambda p, a, b: torch.stack([a, b], p["dim"]),
    "index_select": lambda p, x, i: torch.index_select(x, p["dim"], i),
    "gather": lambda p, x, i: torch.gather(x, p["dim"], i),
    "getitem_index": lambda p, x, i: x[i],
})

VIEWS = {"reshape", "permute", "transpose", "unsqueeze", "squeeze", "expand", "slice", "select", "flip", "clone",
         "contiguous"}
# Outputs exact when every input is: they move, select or compare-and-pick values without rounding.
# Conversions round to nearest even (or truncate) deterministically, so they are exact too.
EXACT_OPS = set(UNARY_EXACT) | set(BINARY_EXACT) | set(UNARY_JUMPS) | set(COMPARE) | set(BITWISE) | VIEWS | {
    "bitwise_not", "clamp", "nan_to_num", "where", "cat", "stack", "index_select", "gather", "getitem_index",
    "argmax", "argmin", "amax", "amin", "any", "all", "to"}
# Ops whose result has a sign of zero eager defines and a correct compiler reproduces (exact ops that keep the
# zero they read or pick); programs of only these are also compared with signed zeros. Not maximum and minimum: of
# +0 and -0, eager's CPU kernel returns the second operand in its vector loop and the first in its scalar one, so
# the sign depends on the element's position (torch.maximum(zeros(17), -zeros(17)) is -0 but for the last element).
SIGNED_ZERO_OPS = set(UNARY_EXACT) | VIEWS | {"clamp", "where", "cat", "stack", "index_select", "gather",
                                              "getitem_index", "mul", "to"}


def make_input(step: Step, device: str = "cpu") -> torch.Tensor:
    """The tensor an input step describes on `device`, deterministic in its params."""
    shape, dtype, layout = step.param("shape"), _dtype(step.param("dtype")), step.param("layout")
    g = torch.Generator().manual_seed(step.param("seed"))
    # The storage to take the view from: the layout decides its shape.
    if layout == "transposed" and len(shape) >= 2:
        base_shape = tuple(reversed(shape))
    elif layout == "strided" and len(shape) >= 1:
        base_shape = shape[:-1] + (shape[-1] * 2,)
    elif layout == "offset":
        base_shape = (math.prod(shape) + 1,)
    elif layout == "expanded":
        base_shape = tuple(1 if d in step.param("expand_dims", ()) else n for d, n in enumerate(shape))
    else:
        base_shape = shape
    if step.param("high") is not None:
        base = torch.randint(0, max(step.param("high"), 1), base_shape, generator=g, dtype=dtype)
    elif dtype == torch.bool:
        base = torch.rand(base_shape, generator=g) > 0.5
    elif dtype.is_floating_point:
        base = (torch.randn(base_shape, generator=g) * 2).to(dtype)
        flat = base.view(-1)
        for position, value in step.param("specials", ()):
            if flat.numel():
                flat[int(position * flat.numel())] = value
    else:
        base = torch.randint(-8, 9, base_shape, generator=g, dtype=dtype)
    # Drawn on the CPU (the generator is), then moved whole, so the view below has the layout on the device too.
    base = base.to(device)
    if layout == "transposed" and len(shape) >= 2:
        return base.permute(tuple(reversed(range(len(shape)))))
    if layout == "strided" and len(shape) >= 1:
        return base[..., ::2]
    if layout == "offset":
        return base[1:].view(shape)
    if layout == "expanded":
        return base.expand(shape)
    return base


def run_program(program: Program, inputs, float64: bool = False, round_to=None, all_values=None, given=None):
    """The program's outputs for `inputs` (one tensor per input step, in order). With float64, every float value is
    computed in float64 instead (conversions to a float dtype become float64, and so do integer values an op turns
    into floats, as exp of an int32 tensor): the reference that says which of two results is more accurate. With
    round_to as well (one dtype per value, eager's), each float value computed in float64 is rounded to its eager
    dtype before the next step reads it: every op exact and then rounded once, the result a compiler that rounds each
    stored intermediate once gets closest to. given, {value index: tensor}, makes later steps read that tensor in place
    of the value computed (the outputs returned stay the computed ones): with another run's outputs, each output is
    computed from that run's own earlier outputs. all_values, a list, receives every value of the run."""
    values, computed = [], {}
    it = iter(inputs)
    default_dtype = torch.get_default_dtype()
    if float64:
        torch.set_default_dtype(torch.float64)
    try:
        for s in program.steps:
            if s.op == "input":
                values.append(next(it))
                continue
            p = dict(s.params)
            if float64 and s.op == "to" and _dtype(p["dtype"]).is_floating_point:
                p["dtype"] = "float64"
            value = OPS[s.op](p, *[values[i] for i in s.args])
            if round_to is not None and value.is_floating_point() and round_to[len(values)].is_floating_point:
                value = value.to(round_to[len(values)]).double()
            computed[len(values)] = value
            values.append(given.get(len(values), value) if given else value)
    finally:
        torch.set_default_dtype(default_dtype)
    if all_values is not None:
        all_values[:] = values
    return tuple(computed.get(i, values[i]) for i in program.outputs)


# ---------------------------------------------------------------------------------------------------------------
# Drawing programs

SIZES = st.sampled_from((0, 1, 1, 2, 3, 4, 5, 7, 8, 16, 33))


@st.composite
def shapes(draw, min_rank=0, max_rank=4):
    rank = draw(st.integers(min_rank, max_rank))
    dims = [draw(SIZES) for _ in range(rank)]
    # Mostly small: elements beyond a few thousand only slow the run.
    while math.prod(dims) > 4096:
        dims[dims.index(max(dims))] //= 2
    return tuple(dims)


class _Builder:
    """Values drawn so far: steps, their eager values (for shapes and dtypes, and to ask PyTorch whether a step is
    valid; dtype support is not checked on meta tensors) and exactness."""

    def __init__(self, draw):
        self.draw = draw
        self.steps: list[Step] = []
        self.values: list[torch.Tensor] = []
        self.exact: list[bool] = []

    def add(self, op, args, params, exact) -> int | None:
        step = Step(op, tuple(args), tuple(sorted(params.items())))
        try:
            if op == "input":
                out = make_input(step)
            else:
                out = OPS[op](dict(step.params), *[self.values[i] for i in args])
        except (RuntimeError, IndexError, ValueError, TypeError):
            return None
        if not isinstance(out, torch.Tensor):
            return None
        self.steps.append(step)
        self.values.append(out)
        self.exact.append(exact)
        return len(self.steps) - 1

    def input(self, shape=None, dtype=None, high=None) -> int:
        d = self.draw
        shape = d(shapes()) if shape is None else tuple(shape)
        dtype = dtype or d(st.sampled_from(FLOATS * 3 + INTS + ("bool",)))
        layout = d(st.sampled_from(LAYOUTS))
        params = dict(shape=shape, dtype=dtype, layout=layout, seed=d(st.integers(0, 2**16)))
        if layout == "expanded":
            params["expand_dims"] = tuple(i for i in range(len(shape)) if d(st.booleans()))
        if high is not None:
            params["high"] = high
        elif dtype in FLOATS and d(st.booleans()):
            params["specials"] = tuple(d(st.lists(st.tuples(st.floats(0, 0.999), st.sampled_from(SPECIALS)),
                                                  max_size=4)))
        index = self.add("input", (), params, True)
        assert index is not None, params
        return index

    def broadcast_partner(self, x: int) -> int:
        """A value whose shape broadcasts with value x's: an earlier value that does, or a new input with some of x's
        dims set to 1 or dropped from the front, or one more leading dim."""
        d = self.draw
        shape = tuple(self.values[x].shape)
        fits = [i for i, m in enumerate(self.values) if i != x and _broadcasts(tuple(m.shape), shape)]
        if fits and d(st.booleans()):
            return d(st.sampled_from(fits))
        new = [1 if d(st.integers(0, 3)) == 0 else n for n in shape]
        drop = d(st.integers(0, len(new)))
        new = new[drop:]
        if d(st.integers(0, 5)) == 0:
            new = [d(SIZES)] + new
        return self.input(shape=new)

    def dim(self, x: int) -> int | None:
        rank = self.values[x].dim()
        return self.draw(st.integers(-rank, rank - 1)) if rank else None


def _broadcasts(a, b):
    return all(p == q or p == 1 or q == 1 for p, q in zip(reversed(a), reversed(b)))


def _is_float(t):
    return t.dtype.is_floating_point


def _draw_step(b: _Builder) -> int | None:
    d = b.draw
    x = d(st.integers(0, len(b.steps) - 1))
    m = b.values[x]
    ex = b.exact[x]
    kind = d(st.sampled_from(("unary", "unary", "binary", "binary", "reduce", "norm", "view", "view", "cat", "index",
                              "to", "where", "scalar")))
    if kind == "unary":
        names = list(UNARY_FLOAT) + list(UNARY_EXACT) + ["clamp", "nan_to_num", "bitwise_not"]
        if ex:
            names += list(UNARY_JUMPS)
        op = d(st.sampled_from(names))
        params = dict(lo=-0.5, hi=d(st.sampled_from((0.0, 0.75)))) if op == "clamp" else {}
        return b.add(op, [x], params, ex and op in EXACT_OPS)
    if kind == "binary":
        y = b.broadcast_partner(x)
        both = ex and b.exact[y]
        names = list(BINARY) + list(BINARY_EXACT) + list(BITWISE)
        if both:
            names += list(COMPARE)
        op = d(st.sampled_from(names))
        args = [x, y] if d(st.booleans()) else [y, x]
        return b.add(op, args, {}, both and op in EXACT_OPS)
    if kind == "scalar":
        op = d(st.sampled_from(("add_scalar", "mul_scalar", "pow_scalar")))
        value = d(st.sampled_from((2, 0.5, -1.5, 3)) if op == "pow_scalar" else st.sampled_from((1, -2, 0.25, 3.0)))
        return b.add(op, [x], dict(value=value), False)
    if kind == "reduce":
        if m.dim() == 0:
            return None
        op = d(st.sampled_from(list(REDUCTIONS) + ["prod", "argmax", "argmin", "cumsum", "softmax",
                                                    "log_softmax"]))
        if op in ("argmax", "argmin", "any", "all") and not ex:
            return None  # jumps: only of exact values
        if op in REDUCTIONS:
            dims = tuple(sorted(set(d(st.lists(st.integers(0, m.dim() - 1), min_size=1, max_size=m.dim())))))
            return b.add(op, [x], dict(dims=dims, keepdim=d(st.booleans())), ex and op in EXACT_OPS)
        params = dict(dim=b.dim(x))
        if op in ("prod", "argmax", "argmin"):
            params["keepdim"] = d(st.booleans())
        return b.add(op, [x], params, ex and op in EXACT_OPS)
    if kind == "norm":
        if m.dim() == 0:
            return None
        return b.add("layer_norm", [x], dict(ndims=d(st.integers(1, m.dim()))), False)
    if kind == "view":
        return _draw_view(b, x)
    if kind == "cat":
        if m.dim() == 0:
            return None
        dim = b.dim(x)
        if d(st.booleans()):
            shape = list(m.shape)
            shape[dim] = d(SIZES)
            y = b.input(shape=shape, dtype=str(m.dtype).removeprefix("torch."))
            return b.add("cat", [x, y], dict(dim=dim), ex)
        y = b.input(shape=m.shape, dtype=str(m.dtype).removeprefix("torch."))
        return b.add("stack", [x, y], dict(dim=d(st.integers(-m.dim() - 1, m.dim()))), ex)
    if kind == "index":
        if m.dim() == 0:
            return None
        dim = b.dim(x)
        size = m.shape[dim]
        op = d(st.sampled_from(("index_select", "gather", "getitem_index")))
        if op == "gather":
            shape = [min(n, d(SIZES)) if i != dim % m.dim() else d(SIZES) for i, n in enumerate(m.shape)]
            if size == 0:
                shape[dim] = 0
            i = b.input(shape=shape, dtype="int64", high=size)
        else:
            length = d(SIZES) if size else 0
            i = b.input(shape=(length,), dtype="int64", high=size)
            if op == "getitem_index":
                dim = 0
                if m.shape[0] != size:
                    return None
        return b.add(op, [x, i], {} if op == "getitem_index" else dict(dim=dim), ex)
    if kind == "to":
        target = d(st.sampled_from(DTYPES))
        if _is_float(m) and target not in FLOATS and not ex:
            return None  # float -> integer or bool jumps: only of exact values
        return b.add("to", [x], dict(dtype=target), ex)
    if kind == "where":
        cond = [i for i, t in enumerate(b.values) if t.dtype == torch.bool and b.exact[i] and _broadcasts(
            tuple(t.shape), tuple(m.shape))]
        if not cond:
            return None
        y = b.broadcast_partner(x)
        return b.add("where", [d(st.sampled_from(cond)), x, y], {}, ex and b.exact[y])
    return None


def _draw_view(b: _Builder, x: int) -> int | None:
    d = b.draw
    m = b.values[x]
    shape = tuple(m.shape)
    rank = len(shape)
    op = d(st.sampled_from(("reshape", "permute", "transpose", "unsqueeze", "squeeze", "expand", "slice", "select",
                            "flip", "clone", "contiguous")))
    if op == "reshape":
        # Merge two neighbouring dims, split one by a divisor, or flatten.
        if rank >= 2 and d(st.booleans()):
            k = d(st.integers(0, rank - 2))
            new = shape[:k] + (shape[k] * shape[k + 1],) + shape[k + 2:]
        elif rank >= 1 and d(st.booleans()):
            k = d(st.integers(0, rank - 1))
            divisors = [q for q in range(1, shape[k] + 1) if shape[k] % q == 0] or [1]
            q = d(st.sampled_from(divisors))
            new = shape[:k] + (q, shape[k] // q if q else 0) + shape[k + 1:]
        else:
            new = (-1,)
        return b.add(op, [x], dict(shape=new), b.exact[x])
    if op == "permute":
        return b.add(op, [x], dict(perm=tuple(d(st.permutations(range(rank))))), b.exact[x])
    if op == "transpose":
        if rank == 0:
            return None
        return b.add(op, [x], dict(dim0=b.dim(x), dim1=b.dim(x)), b.exact[x])
    if op == "unsqueeze":
        return b.add(op, [x], dict(dim=d(st.integers(-rank - 1, rank))), b.exact[x])
    if op in ("squeeze", "select", "slice"):
        if rank == 0:
            return None
        dim = b.dim(x)
        if op == "squeeze":
            return b.add(op, [x], dict(dim=dim), b.exact[x])
        if op == "select":
            if shape[dim] == 0:
                return None
            return b.add(op, [x], dict(dim=dim, index=d(st.integers(-shape[dim], shape[dim] - 1))), b.exact[x])
        start = d(st.one_of(st.none(), st.integers(-shape[dim] - 1, shape[dim] + 1)))
        stop = d(st.one_of(st.none(), st.integers(-shape[dim] - 1, shape[dim] + 1)))
        return b.add(op, [x], dict(dim=dim % rank, start=start, stop=stop, step=d(st.sampled_from((None, 1, 2, 3)))),
                     b.exact[x])
    if op == "expand":
        new = tuple(d(SIZES) if n == 1 else n for n in shape)
        if d(st.booleans()):
            new = (d(st.sampled_from((1, 2, 3))),) + new
        return b.add(op, [x], dict(shape=new), b.exact[x])
    if op == "flip":
        if rank == 0:
            return None
        dims = tuple(sorted(set(d(st.lists(st.integers(0, rank - 1), min_size=1, max_size=rank)))))
        return b.add(op, [x], dict(dims=dims), b.exact[x])
    return b.add(op, [x], {}, b.exact[x])


@st.composite
def programs(draw, max_steps=8):
    b = _Builder(draw)
    b.input()
    wanted = draw(st.integers(1, max_steps))
    made = 0
    for _ in range(wanted * 4):
        if made == wanted:
            break
        if _draw_step(b) is not None:
            made += 1
    ops = [i for i, s in enumerate(b.steps) if s.op != "input"]
    if not ops:
        return Program(tuple(b.steps), (0,))
    # The last op's value, and now and then an earlier one (an intermediate that must also be written).
    outputs = {ops[-1]} | {i for i in ops[:-1] if draw(st.integers(0, 4)) == 0}
    return Program(tuple(b.steps), tuple(sorted(outputs)))


def exact_outputs(program: Program) -> list[bool]:
    """Per output, whether eager and a correct compiler agree on it bit for bit (see the module docstring)."""
    exact: list[bool] = []
    for s in program.steps:
        if s.op == "input":
            exact.append(True)
        else:
            exact.append(s.op in EXACT_OPS and all(exact[i] for i in s.args))
    return [exact[i] for i in program.outputs]
