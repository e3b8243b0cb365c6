"""Adds at run-time positions (scatter_add, index_add, index_put with accumulate: scatter kernels of atomic adds),
scatters of one position per line (pointwise kernels) and integer shifts, through torch.compile on the cpu device,
against eager: every dtype class, duplicate and negative indices, and deterministic mode, under which the adds stay
eager's."""

import pytest
import torch

import hipinductor


def compile(fn):
    return torch.compile(fn, backend="hipinductor")


def _lowered_alone(fn, *args, atol=None, rtol=None):
    """fn compiled matches eager, with no op left to eager."""
    hipinductor.clear_reports()
    got = compile(fn)(*args)
    torch.testing.assert_close(got, fn(*args), atol=atol, rtol=rtol)
    reports = hipinductor.reports()
    assert reports and all(r["fallback_ops"] == [] for r in reports), reports
    return reports


DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int32, torch.int64, torch.int16,
          torch.int8, torch.uint8]


def _values(shape, dtype):
    if dtype.is_floating_point:
        return torch.randn(shape).to(dtype)
    return torch.randint(0, 5, shape).to(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_scatter_add_with_duplicate_indices(dtype):
    torch.manual_seed(0)
    x, src = _values((5, 37), dtype), _values((4, 53), dtype)
    index = torch.randint(0, 37, (4, 29))  # many positions hit twice or more; src wider than index
    tol = 4e-2 if dtype in (torch.bfloat16, torch.float16) else None
    reports = _lowered_alone(lambda a, i, s: a.scatter_add(1, i, s) * 2, x, index, src, atol=tol, rtol=tol)
    assert "aten.scatter_add.default" in reports[0]["ops_lowered"]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64])
def test_index_add_and_index_put_accumulate(dtype):
    torch.manual_seed(1)
    x = _values((9, 6, 3), dtype)
    index = torch.tensor([0, 8, 3, 0, -1, 3, 3])  # duplicates; index_put wraps -1
    src = _values((7, 6, 3), dtype)
    tol = 4e-2 if dtype == torch.bfloat16 else None
    alpha = 2 if not dtype.is_floating_point else 0.5
    _lowered_alone(lambda a, i, s: a.index_add(0, i.abs(), s, alpha=alpha), x, index, src, atol=tol, rtol=tol)
    _lowered_alone(lambda a, i, s: a.index_put((i,), s, accumulate=True), x, index, src, atol=tol, rtol=tol)
    # Non-adjacent index tensors broadcast against each other, values broadcast to the indexed shape.
    rows, cols = torch.tensor([[1], [-2], [1]]), torch.tensor([0, 2, 2, 0])
    _lowered_alone(lambda a, r, c, v: torch.ops.aten.index_put(a, [r, None, c], v, True), x, rows, cols,
                   src[0, 0, :1], atol=tol, rtol=tol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64])
def test_scatter_of_one_position_per_line_is_a_pointwise_kernel(dtype):
    # index.size(dim) == 1, self's sizes elsewhere: a value or src element replaces one element of each line, along
    # any dim; nothing left to eager.
    torch.manual_seed(3)
    x, src = _values((6, 7, 5), dtype), _values((6, 7, 5), dtype)
    for dim in (0, 1, 2, -1):
        shape = list(x.shape)
        shape[dim] = 1
        index = torch.randint(0, x.shape[dim], shape)
        reports = _lowered_alone(lambda a, i: a.scatter(dim, i, 3) + 1, x, index)
        assert "aten.scatter.value" in reports[0]["ops_lowered"], reports
        reports = _lowered_alone(lambda a, i, s: a.scatter(dim, i, s) * 2, x, index, src)
        assert "aten.scatter.src" in reports[0]["ops_lowered"], reports


def test_scatter_of_several_positions_per_line_stays_eagers():
    torch.manual_seed(4)
    x = torch.randn(4, 9)
    index = torch.tensor([[0, 3], [8, 8], [1, 2], [5, 0]])  # two positions per row, one row naming one twice
    hipinductor.clear_reports()
    got = compile(lambda a, i: a.scatter(1, i, 2.0) - 1)(x, index)
    torch.testing.assert_close(got, x.scatter(1, index, 2.0) - 1)
    assert any("aten.scatter.value" in r["fallback_ops"] for r in hipinductor.reports()), hipinductor.reports()


def test_cross_entropy_backward_scatters_in_a_kernel():
    # nll_loss's backward scatters -1 at each row's target into zeros: one position per row, lowered.
    torch.manual_seed(5)
    x = torch.randn(16, 100, requires_grad=True)
    t = torch.randint(0, 100, (16,))
    hipinductor.clear_reports()
    compile(lambda a, b: torch.nn.functional.cross_entropy(a, b))(x, t).backward()
    got = x.grad.clone()
    x.grad = None
    torch.nn.functional.cross_entropy(x, t).backward()
    torch.testing.assert_close(got, x.grad)
    reports = hipinductor.reports()
    assert all(r["fallback_ops"] == [] for r in reports), reports


def test_index_add_decomposed_from_a_module_and_its_gradient():
    torch.manual_seed(2)
    x = torch.randn(10, 8, requires_grad=True)
    index = torch.tensor([1, 1, 4, 9])
    src = torch.randn(4, 8, requires_grad=True)

    def f(a, s):
        return (a.index_add(0, index, s) ** 2).sum()

    got = compile(f)(x, src)
    got.backward()
    gx, gs = x.grad.clone(), src.grad.clone()
    x.grad, src.grad = None, None
    want = f(x, src)
    want.backward()
    torch.testing.assert_close(got, want)
    torch.testing.assert_close(gx, x.grad)
    torch.testing.assert_close(gs, src.grad)


def test_deterministic_mode_leaves_the_adds_to_eager():
    x, index, src = torch.zeros(4, 6), torch.randint(0, 6, (4, 6)), torch.randn(4, 6)
    f = lambda a, i, s: a.scatter_add(1, i, s) + 1  # noqa: E731
    torch.use_deterministic_algorithms(True)
    try:
        hipinductor.clear_reports()
        torch.testing.assert_close(compile(f)(x, index, src), f(x, index, src))
        (report,) = hipinductor.reports()
        assert report["fallback_ops"] == ["aten.scatter_add.default"], report
    finally:
        torch.use_deterministic_algorithms(False)
    torch._dynamo.reset()
    _lowered_alone(f, x, index, src)


@pytest.mark.parametrize("dtype", [torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64])
def test_shifts_match_eager(dtype):
    bits = torch.iinfo(dtype).bits
    lo = 0 if dtype == torch.uint8 else -5
    a = (torch.arange(-40, 41) * 3).to(dtype)[:, None]
    n = torch.arange(lo, bits + 3).to(dtype)[None, :]  # negative amounts and amounts at and past the width
    _lowered_alone(lambda x, k: (x << k, x >> k, torch.bitwise_left_shift(x, k), torch.bitwise_right_shift(x, k)),
                   a, n)
    _lowered_alone(lambda x: ((x & 0x3c) >> 2, x << 3, x >> (bits - 1)), a)


def test_shift_of_a_number_by_a_tensor_and_promotion():
    n = torch.arange(-2, 66)
    _lowered_alone(lambda k: (torch.bitwise_left_shift(3, k), torch.bitwise_right_shift(-1000, k)), n)
    a, k = torch.randint(-100, 100, (7, 5), dtype=torch.int32), torch.randint(0, 40, (5,))
    _lowered_alone(lambda x, s: (x >> s, x << s), a, k)  # int32 by int64: int64
