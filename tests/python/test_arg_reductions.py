"""argmax / argmin / max and min with indices through torch.compile on the cpu device, against eager PyTorch itself:
every reduced-dim position (last, first, middle, all) and the kernel shapes they take, ties, NaNs, signed zeros,
keepdim, dims of one, empty non-reduced dims; float, 16-bit and integer dtypes."""
import pytest
import torch


def compile(fn):
    return torch.compile(fn, backend="hipinductor", options={"strict": True})


# (shape, dim): rows in registers, column slices, vector column slices, a middle dim, outputs per thread, split
# columns and rows, the flattened tensor, a dim of one.
LAYOUTS = [((37, 45), 1), ((37, 45), 0), ((300, 64), 0), ((5, 300, 16), 1), ((3, 32771), 0), ((5000, 3), 0),
           ((3, 40001), 1), ((100, 100), None), ((2, 1), 1), ((1, 9), 0)]


def _input(shape, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(-2, 3, shape, generator=g)  # small integers: many ties
    if dtype == torch.uint8:
        x = x + 2
    x = x.to(dtype)
    if dtype.is_floating_point:
        flat = x.view(-1)
        flat[::997] = float("nan")
        flat[1::13] = 0.0
        flat[14::26] = -0.0
    return x


def _everything(layouts):
    def f(*xs):
        out = []
        for x, (_, dim) in zip(xs, layouts):
            if dim is None:
                out += [torch.argmax(x), torch.argmin(x), torch.argmax(x, keepdim=True)]
                continue
            out += [torch.argmax(x, dim), torch.argmin(x, dim, keepdim=True)]
            out += list(torch.max(x, dim)) + list(torch.min(x, dim, keepdim=True))
        return out
    return f


# Every layout in f32; the other dtypes' kernels differ in their types only: rows, vector column slices, split columns.
@pytest.mark.parametrize("dtype,picked", [(torch.float32, range(len(LAYOUTS))), (torch.bfloat16, (0, 2, 5)),
                                          (torch.float16, (0, 2, 5)), (torch.int32, (0, 2, 5)),
                                          (torch.uint8, (0, 2, 5))])
def test_arg_reductions_match_eager(dtype, picked):
    layouts = [LAYOUTS[i] for i in picked]
    xs = [_input(LAYOUTS[i][0], dtype, i) for i in picked]
    f = _everything(layouts)
    got, want = compile(f)(*xs), f(*xs)
    assert len(got) == len(want)
    for n, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype and g.shape == w.shape, n
        if w.dtype == torch.int64:
            assert torch.equal(g, w), (n, (g != w).nonzero()[:5])
        else:  # values: the same elements, NaN where eager has NaN, zeros of either sign
            torch.testing.assert_close(g, w, rtol=0, atol=0, equal_nan=True)


def test_signed_zeros_and_nans_pick_eagers_positions():
    x = torch.tensor([[-0.0, 0.0, -1.0], [0.0, -0.0, -1.0], [1.0, float("nan"), float("nan")],
                      [-1.0, -1.0, -1.0]])
    f = compile(lambda t: (t.argmax(1), t.argmin(1), t.argmax(0), t.max(1)))
    got, want = f(x), (x.argmax(1), x.argmin(1), x.argmax(0), x.max(1))
    for g, w in zip(got[:3], want[:3]):
        assert torch.equal(g, w), (g, w)
    assert torch.equal(got[3].indices, want[3].indices)
    torch.testing.assert_close(got[3].values, want[3].values, equal_nan=True)


def test_empty_kept_dims():
    x = torch.randn(0, 7)
    got = compile(lambda t: (t.argmax(1), t.max(1).indices))(x)
    assert got[0].shape == (0,) and got[1].shape == (0,)
