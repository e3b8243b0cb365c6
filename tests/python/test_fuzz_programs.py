"""Random differential programs (fuzz_programs.py) through torch.compile(backend="hipinductor") against eager.

Each program hypothesis draws runs eagerly, compiled, and eagerly in float64. Outputs eager and a correct compiler
agree on bit for bit (fuzz_programs.exact_outputs) must be equal, NaNs included; others must be within PyTorch's
dtype tolerances of eager (torch.testing.assert_close) or, where not, no further from a float64 result than twice
eager's own error plus that tolerance: a compiled result may differ from eager by being more accurate, never less.
There are three float64 results: computed in float64 throughout; computed in float64 but rounded to eager's dtype
after every step (each op exact, then rounded once); and computed in float64 from the compiled program's own earlier
outputs (each output exact from the compiled values it reads, those being checked themselves). An ill-conditioned
step (exp of a large value, a power of a small one) turns one ulp of an intermediate into a large difference, so a
compiler that rounds intermediates more accurately than eager, or rounds them otherwise within their tolerance,
is close to the second or the third.
Programs of ops that define the sign of a zero (fuzz_programs.SIGNED_ZERO_OPS) are also compared sign for sign.

CI runs a fixed slice: HIPINDUCTOR_FUZZ_EXAMPLES programs (default 25), derandomized so every run draws the same
ones. A long campaign sets HIPINDUCTOR_FUZZ_EXAMPLES=10000 and HIPINDUCTOR_FUZZ_SEED (an integer, or "random");
HIPINDUCTOR_FUZZ_DEVICE=cuda runs the programs on a GPU; docs/fuzzing.md. A failure prints the shrunk program; fuzz_programs.run_program runs it by hand.
"""

import collections
import dataclasses
import functools
import operator
import os
from typing import Callable

import pytest
import torch
from hypothesis import HealthCheck, given, note, reject, seed, settings
from hypothesis import strategies as st

import hipinductor
from fuzz_programs import (DEVICE, SIGNED_ZERO_OPS, Program, Step, exact_outputs, make_input, programs,
                           run_program)

EXAMPLES = int(os.environ.get("HIPINDUCTOR_FUZZ_EXAMPLES", "25"))
SEED = os.environ.get("HIPINDUCTOR_FUZZ_SEED", "")


@dataclasses.dataclass(frozen=True)
class KnownMismatch:
    """A difference from eager that is eager's bug, not hipinductor's: `applies(program)` says when a mismatch of
    that program is this one."""

    name: str
    reason: str
    applies: Callable[[Program], bool]


# Eager bugs: a mismatch of a program these name is not a failure. Each entry says what eager gets wrong.
EAGER_BUGS: list[KnownMismatch] = []


def _errors(value: torch.Tensor, reference: torch.Tensor) -> torch.Tensor:
    """|value - reference| in float64, 0 where both are the same infinity or both NaN, inf where one is NaN."""
    v, r = value.double(), reference.double()
    same = (v == r) | (v.isnan() & r.isnan())
    err = (v - r).abs()
    err = torch.where(same, torch.zeros_like(err), err)
    return torch.where(err.isnan(), torch.full_like(err, float("inf")), err)


def _tolerance(dtype: torch.dtype):
    """PyTorch's default assert_close tolerances for `dtype` (rtol, atol)."""
    return {torch.float16: (1e-3, 1e-5), torch.bfloat16: (1.6e-2, 1e-5), torch.float32: (1.3e-6, 1e-5),
            torch.float64: (1e-7, 1e-7)}.get(dtype, (0.0, 0.0))


def _further_than_eager(a, e, r):
    """Where compiled `a` is further from reference `r` than twice eager's `e` error plus the dtype's tolerance."""
    rtol, atol = _tolerance(e.dtype)
    return _errors(a, r) > 2 * _errors(e, r) + atol + rtol * r.double().abs()


REFERENCE_NAMES = ("float64", "float64 rounded per value", "float64 from compiled outputs")


def compare(program: Program, actual, expected, references):
    """`references`: the float64 results (one tuple of outputs each) a correct compiler may be close to."""
    exact = exact_outputs(program)
    signed = program.ops() <= SIGNED_ZERO_OPS
    for k, (a, e) in enumerate(zip(actual, expected)):
        what = f"output {k} (value {program.outputs[k]})"
        assert a.shape == e.shape, f"{what}: shape {tuple(a.shape)}, eager {tuple(e.shape)}"
        assert a.dtype == e.dtype, f"{what}: dtype {a.dtype}, eager {e.dtype}"
        if exact[k] or not e.dtype.is_floating_point:
            torch.testing.assert_close(a, e, rtol=0, atol=0, equal_nan=True, msg=lambda m: f"{what} (exact): {m}")
        else:
            try:
                torch.testing.assert_close(a, e, equal_nan=True)
            except AssertionError as close_error:
                # Any reference may be the one a correct compiler is close to: float64 throughout when it keeps
                # intermediates unrounded (fused), float64 rounded per stored value when it rounds them as eager
                # does, but more accurately, float64 from its own outputs when it rounds an output otherwise than
                # eager within tolerance. An ill-conditioned step (a layer norm over two nearly equal values)
                # amplifies one ulp of an intermediate past any tolerance on another reference.
                bad = functools.reduce(operator.and_, (_further_than_eager(a, e, r[k]) for r in references))
                if bad.any():
                    i = tuple(int(v) for v in bad.nonzero()[0])
                    named = ", ".join(f"{name} {r[k][i].item()!r}" for name, r in zip(REFERENCE_NAMES, references))
                    raise AssertionError(
                        f"{what}: further from every float64 result than eager at {int(bad.sum())} of {a.numel()} "
                        f"elements, first at {i}: compiled {a[i].item()!r}, eager {e[i].item()!r}, "
                        f"{named}\n{close_error}") from None
        if signed and e.dtype.is_floating_point:
            zeros = (a == 0) & (e == 0)
            differ = zeros & (torch.signbit(a) != torch.signbit(e))
            assert not differ.any(), (f"{what}: {int(differ.sum())} zeros of the other sign, first at "
                                      f"{tuple(int(v) for v in differ.nonzero()[0])}")


def check_program(program: Program, stats: collections.Counter):
    note(f"program: {program}")
    inputs = [s for s in program.steps if s.op == "input"]
    try:
        expected = run_program(program, [make_input(s, DEVICE) for s in inputs])
    except (RuntimeError, IndexError, ValueError):
        reject()  # eager rejects it on values its meta run could not see
    eager_values = []
    run_program(program, [make_input(s, DEVICE) for s in inputs], all_values=eager_values)
    as_float64 = [t.double() if t.is_floating_point() else t for t in (make_input(s, DEVICE) for s in inputs)]
    reference = run_program(program, as_float64, float64=True)
    rounded_reference = run_program(program, as_float64, float64=True, round_to=[v.dtype for v in eager_values])

    torch._dynamo.reset()
    hipinductor.clear_reports()
    compiled = torch.compile(lambda *xs: run_program(program, xs), backend="hipinductor", dynamic=False)
    actual = compiled(*[make_input(s, DEVICE) for s in inputs])
    kernels = sum(r["kernels"] for r in hipinductor.reports())
    note(f"hipinductor kernels: {kernels}")
    # Outputs that are floats, as float64, read by the later steps of the third reference.
    given = {v: a.double() if a.is_floating_point() else a for v, a in zip(program.outputs, actual)}
    from_compiled = run_program(program, as_float64, float64=True, given=given)
    try:
        compare(program, actual, expected, (reference, rounded_reference, from_compiled))
    except AssertionError:
        if any(bug.applies(program) for bug in EAGER_BUGS):
            stats["eager_bugs"] += 1
            return
        raise
    stats["programs"] += 1
    stats["with_kernels"] += kernels > 0


def test_fuzz_programs():
    stats = collections.Counter()
    config = settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=not SEED,
                      suppress_health_check=list(HealthCheck), print_blob=True)

    def one_program(program):
        check_program(program, stats)

    run = config(given(programs())(one_program))
    if SEED and SEED != "random":
        run = seed(int(SEED))(run)
    run()
    print(f"fuzz programs: {dict(stats)}")
    # Most programs must have run hipinductor kernels, or this compared eager with eager.
    assert stats["with_kernels"] >= stats["programs"] // 2, dict(stats)


def _step(op, args=(), **params):
    return Step(op, tuple(args), tuple(sorted(params.items())))


# Programs where a correct compiler's result is further than tolerance from eager's and from the first two float64
# references, because an ill-conditioned step amplifies an intermediate's rounding: exp(exp(4)) where eager's exp(4)
# is an ulp off (float64 of an int32 input must promote to float64, not float32), a float16 x ** 3 eager's CPU rounds
# once and CUDA's twice, then sin of it, and powers of a layer norm's values near 0.
AMPLIFIED = [
    Program((_step("input", dtype="int32", layout="contiguous", seed=0, shape=(3,)), _step("exp", (0,)),
             _step("exp", (1,))), (1, 2)),
    Program((_step("input", dtype="float16", layout="contiguous", seed=0, shape=(1, 5)), _step("exp", (0,)),
             _step("exp", (0,)), _step("pow_scalar", (0,), value=3), _step("sin", (3,))), (1, 2, 3, 4)),
    Program((_step("input", dtype="float32", layout="contiguous", seed=18329, shape=(2, 5, 7)),
             _step("layer_norm", (0,), ndims=1), _step("exp", (0,)), _step("pow_scalar", (1,), value=-1.5)),
            (1, 2, 3)),
    Program((_step("input", dtype="float32", layout="strided", seed=1, shape=(2,)), _step("layer_norm", (0,), ndims=1),
             _step("exp", (1,)), _step("pow_scalar", (2,), value=2), _step("exp", (3,))), (1, 2, 3, 4)),
]


@pytest.mark.parametrize("index", range(len(AMPLIFIED)))
def test_amplified_rounding_is_not_a_mismatch(index):
    stats = collections.Counter()
    settings(max_examples=1, deadline=None, database=None)(given(st.just(AMPLIFIED[index]))(
        lambda program: check_program(program, stats)))()
    assert stats["programs"] == 1 and stats["with_kernels"] == 1, dict(stats)


def test_a_wrong_output_is_a_mismatch():
    """The third reference reads the compiled outputs, so a compiled output that is wrong must still fail: here
    exp(x) compared with x * 2 in its place."""
    program = AMPLIFIED[0]
    inputs = [make_input(s, DEVICE) for s in program.inputs()]
    expected = run_program(program, inputs)
    as_float64 = [t.double() if t.is_floating_point() else t for t in inputs]
    reference = run_program(program, as_float64, float64=True)
    wrong = (expected[0], expected[1] * 2)
    from_wrong = run_program(program, as_float64, float64=True, given={1: wrong[0].double(), 2: wrong[1].double()})
    with pytest.raises(AssertionError, match="further from every float64 result"):
        compare(program, wrong, expected, (reference, reference, from_wrong))
