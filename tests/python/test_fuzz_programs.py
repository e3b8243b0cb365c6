"""Random differential programs (fuzz_programs.py) through torch.compile(backend="hipinductor") against eager.

Each program hypothesis draws runs eagerly, compiled, and eagerly in float64. Outputs eager and a correct compiler
agree on bit for bit (fuzz_programs.exact_outputs) must be equal, NaNs included; others must be within PyTorch's
dtype tolerances of eager (torch.testing.assert_close) or, where not, no further from a float64 result than twice
eager's own error plus that tolerance: a compiled result may differ from eager by being more accurate, never less.
There are two float64 results: computed in float64 throughout, and computed in float64 but rounded to eager's dtype
after every step (each op exact, then rounded once); an ill-conditioned step turns one ulp of an intermediate into
a large difference, so a compiler that rounds intermediates more accurately than eager is close to the second.
Programs of ops that define the sign of a zero (fuzz_programs.SIGNED_ZERO_OPS) are also compared sign for sign.

CI runs a fixed slice: HIPINDUCTOR_FUZZ_EXAMPLES programs (default 25), derandomized so every run draws the same
ones. A long campaign sets HIPINDUCTOR_FUZZ_EXAMPLES=10000 and HIPINDUCTOR_FUZZ_SEED (an integer, or "random");
HIPINDUCTOR_FUZZ_DEVICE=cuda runs the programs on a GPU; docs/fuzzing.md. A failure prints the shrunk program; fuzz_programs.run_program runs it by hand.
"""

import collections
import dataclasses
import os
from typing import Callable

import pytest
import torch
from hypothesis import HealthCheck, given, note, reject, seed, settings

import hipinductor
from fuzz_programs import DEVICE, SIGNED_ZERO_OPS, Program, exact_outputs, make_input, programs, run_program

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


def compare(program: Program, actual, expected, reference, rounded_reference):
    exact = exact_outputs(program)
    signed = program.ops() <= SIGNED_ZERO_OPS
    for k, (a, e, r, rr) in enumerate(zip(actual, expected, reference, rounded_reference)):
        what = f"output {k} (value {program.outputs[k]})"
        assert a.shape == e.shape, f"{what}: shape {tuple(a.shape)}, eager {tuple(e.shape)}"
        assert a.dtype == e.dtype, f"{what}: dtype {a.dtype}, eager {e.dtype}"
        if exact[k] or not e.dtype.is_floating_point:
            torch.testing.assert_close(a, e, rtol=0, atol=0, equal_nan=True, msg=lambda m: f"{what} (exact): {m}")
        else:
            try:
                torch.testing.assert_close(a, e, equal_nan=True)
            except AssertionError as close_error:
                # Either reference may be the one a correct compiler is close to: float64 throughout when it keeps
                # intermediates unrounded (fused), float64 rounded per stored value when it rounds them as eager
                # does, but more accurately. An ill-conditioned step (a layer norm over two nearly equal values)
                # amplifies one ulp of an intermediate past any tolerance on the other reference.
                bad = _further_than_eager(a, e, r) & _further_than_eager(a, e, rr)
                if bad.any():
                    i = tuple(int(v) for v in bad.nonzero()[0])
                    raise AssertionError(
                        f"{what}: further from both float64 results than eager at {int(bad.sum())} of {a.numel()} "
                        f"elements, first at {i}: compiled {a[i].item()!r}, eager {e[i].item()!r}, "
                        f"float64 {r[i].item()!r}, float64 rounded per value {rr[i].item()!r}\n{close_error}") from None
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
    try:
        compare(program, actual, expected, reference, rounded_reference)
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
