// 2-d pooling (NCHW or CHW: the last two dims are the spatial ones): average and max pooling with their backward ops,
// adaptive average and max pooling with theirs. Windowed ops gather instead of scattering: backward ops compute each
// input position from the outputs whose windows may hold it, so no kernel needs atomics (docs/architecture.md).
#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include "lowering/lowering_context.h"
#include "lowering/op_registry.h"

namespace hi {
namespace {

using lowering::accumulate_type;
using lowering::and_into;
using lowering::clamp_coord;
using lowering::compare;
using lowering::compute_type;
using lowering::in_range;
using lowering::extreme_type;
using lowering::GraphLowering;
using lowering::TensorValue;

/// A 2-d pooling parameter (kernel_size, stride, padding, dilation): one int for both spatial dims or one per dim;
/// `fallback` (the kernel size, for an empty stride) where the list is empty.
std::array<int64_t, 2> pool_pair(const MetaInference& m, std::string_view name,
                                 std::optional<std::array<int64_t, 2>> fallback = std::nullopt) {
  const std::vector<Index>& v = m.arg(name).ints();
  if (v.empty() && fallback) return *fallback;
  if (v.size() != 1 && v.size() != 2) m.fail(name, "expected 1 or 2 ints, got " + sizes_str(v));
  return {m.constant(name, v[0]), m.constant(name, v.back())};
}

/// Output length of one pooled dim, as PyTorch's pooling_output_shape: windows start inside the input or its left
/// padding; ceil_mode rounds the count up but drops a last window that would start in the right padding.
Index pooled_size(const MetaInference& m, const Index& in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
  if (k < 1 || s < 1 || d < 1) m.fail("kernel_size", "kernel size, stride and dilation must be positive");
  if (p < 0 || p > k / 2) m.fail("padding", "pad should be at most half of the effective kernel size");
  const Index out = floordiv(in + Index(2 * p - (d * (k - 1) + 1) + (ceil_mode ? s - 1 : 0)), Index(s)) + Index(1);
  if (!ceil_mode) return out;
  if (!in.is_const()) m.fail("ceil_mode", "ceil_mode needs constant input sizes, got " + in.str());
  return (out.value() - 1) * s >= in.value() + p ? Index(out.value() - 1) : out;
}

/// A pooling op's input `self`: (N, C, H, W) or (C, H, W).
TensorMeta pool_input(const MetaInference& m) {
  TensorMeta in = m.tensor("self");
  if (in.rank() != 3 && in.rank() != 4)
    m.fail("self", "expected a 3-d or 4-d input, got rank " + std::to_string(in.rank()));
  return in;
}

/// `in` with its spatial sizes pooled to `h`, `w`.
std::vector<Index> pooled_sizes(const MetaInference& m, const TensorMeta& in, const Index& h, const Index& w) {
  std::vector<Index> sizes = in.sizes;
  sizes[sizes.size() - 2] = h;
  sizes[sizes.size() - 1] = w;
  for (const Index& s : {h, w})
    if (s.is_const() && s.value() < 1) m.fail("self", "pooled output size " + s.str() + " is too small");
  return sizes;
}

Metas pool2d(const MetaInference& m, bool max) {
  TensorMeta in = pool_input(m);
  auto k = pool_pair(m, "kernel_size");
  auto s = pool_pair(m, "stride", k);
  auto p = pool_pair(m, "padding");
  std::array<int64_t, 2> d{1, 1};
  if (max) d = pool_pair(m, "dilation");
  const bool ceil_mode = m.arg("ceil_mode").boolean();
  if (!max && m.given("divisor_override") && m.int_arg("divisor_override") == 0)
    m.fail("divisor_override", "must not be zero");
  const size_t r = in.sizes.size();
  Metas out = one(in.dtype, pooled_sizes(m, in, pooled_size(m, in.sizes[r - 2], k[0], s[0], p[0], d[0], ceil_mode),
                                         pooled_size(m, in.sizes[r - 1], k[1], s[1], p[1], d[1], ceil_mode)));
  if (max) out.push_back(TensorMeta::contiguous(DType::Int64, out[0].sizes));
  return out;
}

/// Pooling backward: the gradient of the pooled input, shaped as it; grad_output must be shaped as the pooling's
/// output.
Metas pool2d_backward(const MetaInference& m) {
  TensorMeta in = pool_input(m), grad = m.tensor("grad_output");
  if (grad.rank() != in.rank())
    m.fail("grad_output", "rank " + std::to_string(grad.rank()) + " differs from the input's");
  return one(grad.dtype, in.sizes);
}

Metas adaptive_avg_pool2d(const MetaInference& m) {
  TensorMeta in = pool_input(m);
  const std::vector<Index>& size = m.arg("output_size").ints();
  if (size.size() != 2) m.fail("output_size", "expected 2 sizes, got " + sizes_str(size));
  return one(in.dtype, pooled_sizes(m, in, size[0], size[1]));
}

/// adaptive_max_pool2d: the pooled values and their int64 positions.
Metas adaptive_max_pool2d(const MetaInference& m) {
  Metas out = adaptive_avg_pool2d(m);
  out.push_back(TensorMeta::contiguous(DType::Int64, out[0].sizes));
  return out;
}

/// Windows of at most this many taps are unrolled into pointwise code (one thread per output, taps in PyTorch's
/// order, so sums round as eager's); larger ones are reductions over the taps.
constexpr int64_t kMaxUnrolledTaps = 25;

/// The 2-d pooling parameter `name` as constants for (H, W): one int for both or one each; `fallback` where None or
/// empty (stride: the kernel size).
std::array<int64_t, 2> pool_param(GraphLowering& L, const BoundArgs& args, const char* name,
                                  std::array<int64_t, 2> fallback) {
  if (!args.given(name) || args.get(name).ints().empty()) return fallback;
  const std::vector<Index>& v = args.get(name).ints();
  auto h = v.front().as_const(), w = v.back().as_const();
  if (!h || !w) L.fail(std::string("argument '") + name + "' must be constant");
  return {*h, *w};
}

/// Where the windows of a 2-d pooling op lie: output (.., oh, ow)'s tap (i, j) reads input row
/// oh * stride - padding + i * dilation, column likewise. The last two dims are the spatial ones.
struct PoolWindows {
  size_t r = 0;
  std::array<Index, 2> in, out;  ///< spatial sizes of the input and of the pooled output
  std::array<int64_t, 2> k{}, s{}, p{}, d{1, 1};
  std::array<bool, 2> always_inside{};  ///< no window of this dim reaches outside the input
  bool include_pad = true;              ///< avg_pool2d's count_include_pad
  std::optional<int64_t> divisor_override;

  /// From the op's kernel_size, stride, padding, and dilation (max pools) or count_include_pad and
  /// divisor_override (avg pools).
  PoolWindows(GraphLowering& L, const BoundArgs& args, const TensorValue& self, const std::vector<Index>& pooled,
              bool dilated) {
    if (!is_floating(self.dtype)) L.fail("pooling needs a floating-point input");
    r = self.sizes.size();
    k = pool_param(L, args, "kernel_size", {0, 0});
    s = pool_param(L, args, "stride", k);
    p = pool_param(L, args, "padding", {0, 0});
    if (dilated) {
      d = pool_param(L, args, "dilation", {1, 1});
    } else {
      include_pad = args.get_bool("count_include_pad");
      divisor_override = args.optional_int("divisor_override");
    }
    out = {pooled[r - 2], pooled[r - 1]};
    for (size_t i = 0; i < 2; ++i) {
      in[i] = self.sizes[r - 2 + i];
      auto n = in[i].as_const(), o = out[i].as_const();
      always_inside[i] = p[i] == 0 && n && o && (*o - 1) * s[i] + (k[i] - 1) * d[i] < *n;
    }
  }
  int64_t taps() const { return k[0] * k[1]; }
  Index start(const std::vector<Index>& c, size_t i) const { return c[r - 2 + i] * s[i] - Index(p[i]); }
  Index tap(const std::vector<Index>& c, size_t i, const Index& t) const { return start(c, i) + t * d[i]; }
  /// The input coordinates of tap (th, tw), clamped into the input, and whether the tap is inside it (null: always).
  std::pair<std::vector<Index>, std::optional<Expr>> read(const std::vector<Index>& c, const Index& th,
                                                          const Index& tw) const {
    std::vector<Index> at = c;
    std::optional<Expr> inside;
    const std::array<Index, 2> t{tap(c, 0, th), tap(c, 1, tw)};
    for (size_t i = 0; i < 2; ++i) {
      if (always_inside[i]) {
        at[r - 2 + i] = t[i];
        continue;
      }
      at[r - 2 + i] = clamp_coord(t[i], in[i]);
      and_into(inside, in_range(t[i], in[i]));
    }
    return {at, inside};
  }
  /// avg_pool2d's divisor for output c, as PyTorch's: divisor_override, else the window clipped to the padded input
  /// (count_include_pad) or to the input itself (at least 1: a window wholly in the padding sums to 0).
  Expr divisor(const std::vector<Index>& c, DType t) const {
    if (divisor_override) return Expr::constant(static_cast<double>(*divisor_override), t);
    // A dim whose windows all lie inside the input (no padding) contributes its kernel size: a constant, not a
    // clipped extent computed per output.
    if (always_inside[0] && always_inside[1]) return Expr::constant(static_cast<double>(k[0] * k[1]), t);
    const Index hs = start(c, 0), ws = start(c, 1);
    const Index he = min(hs + Index(k[0]), in[0] + Index(p[0])), we = min(ws + Index(k[1]), in[1] + Index(p[1]));
    Index n = (he - hs) * (we - ws);
    if (!include_pad) n = max((min(he, in[0]) - max(hs, Index(0))) * (min(we, in[1]) - max(ws, Index(0))), Index(1));
    return Expr::cast(Expr::index_value(n, DType::Int64), t);
  }
  /// Calls visit(o, at, valid) for each output whose window may hold input position c, in PyTorch's (row-major)
  /// order: o its coordinates, `at` o clamped into the output (safe to read), `valid` whether o is an output.
  /// Along a dim, those are floor((x + padding) / stride) - (n - 1) + q for q < n = (k - 1) * dilation / stride + 1.
  template <class Visit>
  void each_candidate(const std::vector<Index>& c, const Visit& visit) const {
    const std::array<int64_t, 2> n{(k[0] - 1) * d[0] / s[0] + 1, (k[1] - 1) * d[1] / s[1] + 1};
    for (int64_t qh = 0; qh < n[0]; ++qh)
      for (int64_t qw = 0; qw < n[1]; ++qw) {
        std::vector<Index> o = c, at = c;
        const std::array<int64_t, 2> q{qh, qw};
        for (size_t i = 0; i < 2; ++i) {
          o[r - 2 + i] = floordiv(c[r - 2 + i] + Index(p[i]), Index(s[i])) - Index(n[i] - 1 - q[i]);
          at[r - 2 + i] = clamp_coord(o[r - 2 + i], out[i]);
        }
        visit(o, at,
              Expr::binary(BinaryOp::LogicalAnd, in_range(o[r - 2], out[0]), in_range(o[r - 1], out[1]), DType::Bool));
      }
  }
  /// Tap (th, tw)'s value in `t`, `outside` where it falls in the padding.
  Expr value(GraphLowering& L, const TensorValue& self, const std::vector<Index>& c, const Index& th, const Index& tw,
             DType t, double outside) const {
    auto [at, inside] = read(c, th, tw);
    Expr v = Expr::cast(L.at(self, at), t);
    return inside ? Expr::where(*inside, v, Expr::constant(outside, t)) : v;
  }
};

/// avg_pool2d: each output the sum of its window (padding contributing zero) divided as PyTorch divides: by
/// divisor_override, else by the window clipped to the padded input (count_include_pad) or to the input itself; a
/// window wholly in the padding gives 0.
std::vector<TensorValue> lower_avg_pool2d(GraphLowering& L, const BoundArgs& args) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor("self");
  const PoolWindows win(L, args, self, m.sizes, false);
  const DType acc = accumulate_type(m.dtype);
  auto average = [&](const std::vector<Index>& c, const Expr& sum) {
    return Expr::cast(Expr::binary(BinaryOp::Div, sum, win.divisor(c, acc), acc), m.dtype);
  };
  if (win.taps() <= kMaxUnrolledTaps) {
    return {L.make(m.dtype, m.sizes, {&self}, [&](const std::vector<Index>& c) {
      Expr sum = Expr::constant(0, acc);
      for (int64_t i = 0; i < win.k[0]; ++i)
        for (int64_t j = 0; j < win.k[1]; ++j)
          sum = Expr::binary(BinaryOp::Add, sum, win.value(L, self, c, Index(i), Index(j), acc, 0), acc);
      return average(c, sum);
    })};
  }
  TensorValue total = L.reduction(m.sizes, {Index(win.k[0]), Index(win.k[1])}, {&self},
                                  [&](const std::vector<Index>& x, const std::vector<Index>& rv) {
                                    return Expr::reduce(ReduceOp::Sum, win.value(L, self, x, rv[0], rv[1], acc, 0));
                                  });
  return {L.make(m.dtype, m.sizes, {&total}, [&](const std::vector<Index>& c) { return average(c, L.at(total, c)); })};
}

/// A max pool's values and int64 positions as eager's loop finds them: from -inf at the window's first position
/// (`first(c)`), a tap replaces the maximum when it is greater or NaN, so a NaN wins, the last NaN's position is kept
/// and a window of only -inf points at `first(c)`. Over `taps` (height, width) per output: `value(c, i, j)` the tap's
/// value in `t` (-inf where the window has no tap there), `position(c, i, j)` its flat input position from int64
/// tap coordinates. Unrolled up to kMaxUnrolledTaps; beyond, reductions for the maximum, the first position of the
/// maximum and the last NaN's position.
template <class Value, class Position, class First>
std::vector<TensorValue> lower_max_with_positions(GraphLowering& L, const TensorValue& self, DType t,
                                                  std::array<int64_t, 2> taps, Value value, Position position,
                                                  First first) {
  const TensorMeta& m = L.out_meta(0);
  const double lowest = -INFINITY;
  auto lit = [](int64_t v) { return Expr::constant(static_cast<double>(v), DType::Int64); };
  if (taps[0] * taps[1] <= kMaxUnrolledTaps) {
    // best_t = maximum(best_{t-1}, tap_t) (NaN-propagating); the position moves where tap_t > best_{t-1} or is NaN.
    auto fold = [&](const std::vector<Index>& c, bool want_index) {
      Expr best = Expr::constant(lowest, t), at = first(c);
      for (int64_t i = 0; i < taps[0]; ++i)
        for (int64_t j = 0; j < taps[1]; ++j) {
          Expr v = value(c, Index(i), Index(j));
          if (want_index) {
            Expr wins = Expr::binary(BinaryOp::LogicalOr, Expr::binary(BinaryOp::Gt, v, best, DType::Bool),
                                     Expr::unary(UnaryOp::IsNan, v), DType::Bool);
            at = Expr::where(wins, position(c, lit(i), lit(j)), at);
          }
          best = Expr::binary(BinaryOp::Maximum, best, v, t);
        }
      return want_index ? at : Expr::cast(best, m.dtype);
    };
    return {L.make(m.dtype, m.sizes, {&self}, [&](const std::vector<Index>& c) { return fold(c, false); }),
            L.make(DType::Int64, m.sizes, {&self}, [&](const std::vector<Index>& c) { return fold(c, true); })};
  }
  const std::vector<Index> extent{Index(taps[0]), Index(taps[1])};
  auto tap_index = [&](const std::vector<Index>& rv) {
    return Expr::index_value(rv[0] * taps[1] + rv[1], DType::Int64);
  };
  TensorValue peak = L.reduction(m.sizes, extent, {&self}, [&](const auto& x, const auto& rv) {
    return Expr::reduce(ReduceOp::Max, value(x, rv[0], rv[1]));
  });
  TensorValue pos = L.reduction(m.sizes, extent, {&self}, [&](const auto& x, const auto& rv) {
    return Expr::arg_reduce(ReduceOp::ArgMax, value(x, rv[0], rv[1]), tap_index(rv));
  });
  TensorValue last_nan = L.reduction(m.sizes, extent, {&self}, [&](const auto& x, const auto& rv) {
    Expr nan = Expr::unary(UnaryOp::IsNan, value(x, rv[0], rv[1]));
    return Expr::reduce(ReduceOp::Max, Expr::where(nan, tap_index(rv), lit(-1)));
  });
  TensorValue values = L.make(m.dtype, m.sizes, {&peak},
                              [&](const std::vector<Index>& c) { return Expr::cast(L.at(peak, c), m.dtype); });
  TensorValue indices = L.make(DType::Int64, m.sizes, {&pos, &peak, &last_nan}, [&](const std::vector<Index>& c) {
    Expr q = Expr::where(Expr::unary(UnaryOp::IsNan, L.at(peak, c)), L.at(last_nan, c), L.at(pos, c));
    Expr at = position(c, Expr::binary(BinaryOp::FloorDiv, q, lit(taps[1]), DType::Int64),
                       Expr::binary(BinaryOp::Remainder, q, lit(taps[1]), DType::Int64));
    Expr all_lowest = Expr::binary(BinaryOp::Eq, L.at(peak, c), Expr::constant(lowest, t), DType::Bool);
    return Expr::where(all_lowest, first(c), at);
  });
  return {values, indices};
}

/// max_pool2d_with_indices: the window's maximum and the flat h * W + w input position it came from, as PyTorch's
/// loop finds them (lower_max_with_positions), its first position being the window's first tap inside the input.
std::vector<TensorValue> lower_max_pool2d_with_indices(GraphLowering& L, const BoundArgs& args) {
  const TensorMeta& m = L.out_meta(0);
  TensorValue self = L.tensor("self");
  const PoolWindows win(L, args, self, m.sizes, true);
  const DType t = extreme_type(self.dtype);
  auto lit = [](int64_t v) { return Expr::constant(static_cast<double>(v), DType::Int64); };
  auto i64 = [](const Index& i) { return Expr::index_value(i, DType::Int64); };
  auto flat = [&](const Expr& h, const Expr& w) {
    return Expr::binary(BinaryOp::Add, Expr::binary(BinaryOp::Mul, h, i64(win.in[1]), DType::Int64), w, DType::Int64);
  };
  // Input coordinate of tap `k` (an int64 Expr) along dim i: start + k * dilation.
  auto coord = [&](const std::vector<Index>& c, size_t i, const Expr& k) {
    return Expr::binary(BinaryOp::Add, i64(win.start(c, i)),
                        Expr::binary(BinaryOp::Mul, k, lit(win.d[i]), DType::Int64), DType::Int64);
  };
  // Positions of known taps (unrolled windows) and the first tap inside the input, st + ceil(max(-st, 0) / d) * d,
  // are index expressions: computed in the kernel's index width rather than in int64 arithmetic.
  auto first_tap = [&](const std::vector<Index>& c, size_t i) {
    const Index st = win.start(c, i);
    if (win.always_inside[i]) return st;
    return st + floordiv(max(Index(0) - st, Index(0)) + Index(win.d[i] - 1), Index(win.d[i])) * Index(win.d[i]);
  };
  return lower_max_with_positions(
      L, self, t, win.k,
      [&](const std::vector<Index>& c, const Index& i, const Index& j) {
        return win.value(L, self, c, i, j, t, -INFINITY);
      },
      [&](const std::vector<Index>& c, const Expr& i, const Expr& j) {
        if (i->op == ExprOp::Constant && j->op == ExprOp::Constant)
          return i64(win.tap(c, 0, Index(static_cast<int64_t>(i->value))) * win.in[1] +
                     win.tap(c, 1, Index(static_cast<int64_t>(j->value))));
        return flat(coord(c, 0, i), coord(c, 1, j));
      },
      [&](const std::vector<Index>& c) { return i64(first_tap(c, 0) * win.in[1] + first_tap(c, 1)); });
}

/// max_pool2d_with_indices_backward: each input position gathers the gradients of the outputs whose recorded
/// position it is, over the outputs whose windows may hold it, in PyTorch's order (outputs row-major).
std::vector<TensorValue> lower_max_pool2d_backward(GraphLowering& L, const BoundArgs& args) {
  const TensorMeta& m = L.out_meta();
  TensorValue grad = L.tensor("grad_output"), self = L.tensor("self"), indices = L.tensor("indices");
  const PoolWindows win(L, args, self, grad.sizes, true);
  const size_t r = win.r;
  const DType acc = compute_type(m.dtype);
  return {L.make(m.dtype, m.sizes, {&grad, &indices}, [&](const std::vector<Index>& c) {
    Expr here = Expr::index_value(c[r - 2] * win.in[1] + c[r - 1], DType::Int64);
    Expr sum = Expr::constant(0, acc);
    win.each_candidate(c, [&](const std::vector<Index>&, const std::vector<Index>& at, const Expr& valid) {
      Expr hit = Expr::binary(
          BinaryOp::LogicalAnd, valid,
          Expr::binary(BinaryOp::Eq, Expr::cast(L.at(indices, at), DType::Int64), here, DType::Bool), DType::Bool);
      sum = Expr::binary(BinaryOp::Add, sum, Expr::where(hit, Expr::cast(L.at(grad, at), acc), Expr::constant(0, acc)),
                         acc);
    });
    return Expr::cast(sum, m.dtype);
  })};
}

/// avg_pool2d_backward: each input position gathers grad_output / divisor from the outputs whose windows hold it,
/// in PyTorch's order; the divisor as the forward's.
std::vector<TensorValue> lower_avg_pool2d_backward(GraphLowering& L, const BoundArgs& args) {
  const TensorMeta& m = L.out_meta();
  TensorValue grad = L.tensor("grad_output"), self = L.tensor("self");
  const PoolWindows win(L, args, self, grad.sizes, false);
  const size_t r = win.r;
  const DType acc = compute_type(m.dtype);
  return {L.make(m.dtype, m.sizes, {&grad}, [&](const std::vector<Index>& c) {
    Expr sum = Expr::constant(0, acc);
    win.each_candidate(c, [&](const std::vector<Index>& o, const std::vector<Index>& at, const Expr& valid) {
      // The window starting at o * stride - padding reaches this position (it starts at or before it).
      std::optional<Expr> hit = valid;
      for (size_t i = 0; i < 2; ++i)
        and_into(hit, compare(BinaryOp::Lt, c[r - 2 + i], win.start(o, i) + Index(win.k[i])));
      Expr delta = Expr::binary(BinaryOp::Div, Expr::cast(L.at(grad, at), acc), win.divisor(o, acc), acc);
      sum = Expr::binary(BinaryOp::Add, sum, Expr::where(*hit, delta, Expr::constant(0, acc)), acc);
    });
    return Expr::cast(sum, m.dtype);
  })};
}

/// _adaptive_avg_pool2d's windows: output o of a dim averages input positions floor(o * in / out) ..
/// ceil((o + 1) * in / out) - 1. Constant spatial sizes only.
struct AdaptiveWindows {
  size_t r = 0;
  std::array<int64_t, 2> in{}, out{}, widest{}, overlap{};  ///< widest window; most windows holding one position

  AdaptiveWindows(GraphLowering& L, const TensorValue& self, const std::vector<Index>& pooled) {
    if (!is_floating(self.dtype)) L.fail("adaptive pooling needs a floating-point input");
    r = self.sizes.size();
    for (size_t i = 0; i < 2; ++i) {
      auto a = self.sizes[r - 2 + i].as_const(), b = pooled[r - 2 + i].as_const();
      if (!a || !b || *b < 1) L.fail("adaptive pooling needs constant spatial sizes");
      in[i] = *a;
      out[i] = *b;
      std::vector<int64_t> holding(static_cast<size_t>(in[i]), 0);
      for (int64_t o = 0; o < out[i]; ++o) {
        widest[i] = std::max(widest[i], end(i, o) - o * in[i] / out[i]);
        for (int64_t x = o * in[i] / out[i]; x < end(i, o); ++x) overlap[i] = std::max(overlap[i], ++holding[x]);
      }
    }
  }
  int64_t end(size_t i, int64_t o) const { return ((o + 1) * in[i] + out[i] - 1) / out[i]; }
  bool even(size_t i) const { return in[i] % out[i] == 0; }  ///< every window `widest` long, none overlapping
  std::pair<Index, Index> bounds(const Index& o, size_t i) const {
    return {floordiv(o * in[i], Index(out[i])), floordiv((o + Index(1)) * in[i] + Index(out[i] - 1), Index(out[i]))};
  }
  /// Tap (th, tw) of output c's window as `t`: `past_end` where the window is shorter than the widest.
  Expr value(GraphLowering& L, const TensorValue& self, const std::vector<Index>& c, const Index& th, const Index& tw,
             DType t, double past_end) const {
    std::vector<Index> at = c;
    std::optional<Expr> inside;
    for (size_t i = 0; i < 2; ++i) {
      auto [start, end] = bounds(c[r - 2 + i], i);
      const Index x = start + (i == 0 ? th : tw);
      at[r - 2 + i] = min(x, Index(in[i] - 1));
      if (!even(i)) and_into(inside, compare(BinaryOp::Lt, x, end));  // even: every window is `widest` long
    }
    Expr v = Expr::cast(L.at(self, at), t);
    return inside ? Expr::where(*inside, v, Expr::constant(past_end, t)) : v;
  }
  /// Calls fn(at, size, hit) for each window that may hold input position `c`, in output order (the first being
  /// floor(x * out / in) per dim): `at` its output coordinates (clamped into range), `size` its height and width,
  /// `hit` whether it exists and holds c (absent where every position lies in one window only).
  template <class F>
  void each_candidate(const std::vector<Index>& c, F fn) const {
    for (int64_t qh = 0; qh < overlap[0]; ++qh)
      for (int64_t qw = 0; qw < overlap[1]; ++qw) {
        std::vector<Index> at = c;
        std::optional<Expr> hit;
        std::array<Index, 2> size;
        for (size_t i = 0; i < 2; ++i) {
          const Index x = c[r - 2 + i];
          const Index o = floordiv(x * out[i], Index(in[i])) + Index(i == 0 ? qh : qw);
          at[r - 2 + i] = min(o, Index(out[i] - 1));
          auto [start, end] = bounds(o, i);
          size[i] = end - start;
          if (overlap[i] == 1) continue;  // the first window holding x is the only one
          and_into(hit, compare(BinaryOp::Lt, o, Index(out[i])));
          and_into(hit, compare(BinaryOp::Le, start, x));
        }
        fn(at, size, hit);
      }
  }
};

/// _adaptive_avg_pool2d: the widest window's taps, those past a smaller window's end contributing zero (unrolled,
/// or a reduction for wide windows such as global pooling), divided by the window's height, then by its width.
std::vector<TensorValue> lower_adaptive_avg_pool2d(GraphLowering& L, const BoundArgs&) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor("self");
  const AdaptiveWindows win(L, self, m.sizes);
  const size_t r = win.r;
  const DType acc = accumulate_type(m.dtype);
  auto tap = [&](const std::vector<Index>& c, const std::array<Index, 2>& t) {
    return win.value(L, self, c, t[0], t[1], acc, 0);
  };
  // sum / window height / window width: eager divides twice.
  auto average = [&](const std::vector<Index>& c, Expr sum) {
    for (size_t i = 0; i < 2; ++i) {
      auto [start, end] = win.bounds(c[r - 2 + i], i);
      sum = Expr::binary(BinaryOp::Div, sum, Expr::cast(Expr::index_value(end - start, DType::Int64), acc), acc);
    }
    return Expr::cast(sum, m.dtype);
  };
  if (win.widest[0] * win.widest[1] <= kMaxUnrolledTaps) {
    return {L.make(m.dtype, m.sizes, {&self}, [&](const std::vector<Index>& c) {
      Expr sum = Expr::constant(0, acc);
      for (int64_t i = 0; i < win.widest[0]; ++i)
        for (int64_t j = 0; j < win.widest[1]; ++j)
          sum = Expr::binary(BinaryOp::Add, sum, tap(c, {Index(i), Index(j)}), acc);
      return average(c, sum);
    })};
  }
  TensorValue total = L.reduction(m.sizes, {Index(win.widest[0]), Index(win.widest[1])}, {&self},
                                  [&](const std::vector<Index>& x, const std::vector<Index>& rv) {
                                    return Expr::reduce(ReduceOp::Sum, tap(x, {rv[0], rv[1]}));
                                  });
  return {L.make(m.dtype, m.sizes, {&total}, [&](const std::vector<Index>& c) { return average(c, L.at(total, c)); })};
}

/// adaptive_max_pool2d: each window's maximum and flat h * W + w position as eager's loop finds them
/// (lower_max_with_positions) over the widest window's taps, those past a smaller window's end reading as -inf.
std::vector<TensorValue> lower_adaptive_max_pool2d(GraphLowering& L, const BoundArgs&) {
  const TensorMeta& m = L.out_meta(0);
  TensorValue self = L.tensor("self");
  const AdaptiveWindows win(L, self, m.sizes);
  const size_t r = win.r;
  const DType t = extreme_type(self.dtype);
  auto start = [&](const std::vector<Index>& c, size_t d) { return win.bounds(c[r - 2 + d], d).first; };
  auto value = [&](const std::vector<Index>& c, const Index& i, const Index& j) {
    return win.value(L, self, c, i, j, t, -INFINITY);
  };
  // (start_h + i) * W + start_w + j, from int64 tap coordinates.
  auto position = [&](const std::vector<Index>& c, const Expr& i, const Expr& j) {
    auto i64 = [](const Index& v) { return Expr::index_value(v, DType::Int64); };
    Expr h = Expr::binary(BinaryOp::Add, i64(start(c, 0)), i, DType::Int64);
    Expr w = Expr::binary(BinaryOp::Add, i64(start(c, 1)), j, DType::Int64);
    return Expr::binary(BinaryOp::Add, Expr::binary(BinaryOp::Mul, h, i64(Index(win.in[1])), DType::Int64), w,
                        DType::Int64);
  };
  return lower_max_with_positions(L, self, t, win.widest, value, position, [&](const std::vector<Index>& c) {
    return Expr::index_value(start(c, 0) * win.in[1] + start(c, 1), DType::Int64);
  });
}

/// _adaptive_avg_pool2d_backward: each input position gathers grad_output / window height / window width (PyTorch
/// divides twice) from the windows holding it, the first being floor(x * out / in), in PyTorch's order.
std::vector<TensorValue> lower_adaptive_avg_pool2d_backward(GraphLowering& L, const BoundArgs&) {
  const TensorMeta& m = L.out_meta();
  TensorValue grad = L.tensor("grad_output"), self = L.tensor("self");
  const AdaptiveWindows win(L, self, grad.sizes);
  const DType acc = compute_type(m.dtype);
  return {L.make(m.dtype, m.sizes, {&grad}, [&](const std::vector<Index>& c) {
    Expr sum = Expr::constant(0, acc);
    win.each_candidate(
        c, [&](const std::vector<Index>& at, const std::array<Index, 2>& size, const std::optional<Expr>& hit) {
          Expr delta = Expr::cast(L.at(grad, at), acc);
          for (const Index& n : size)
            delta = Expr::binary(BinaryOp::Div, delta, Expr::cast(Expr::index_value(n, DType::Int64), acc), acc);
          sum = Expr::binary(BinaryOp::Add, sum, hit ? Expr::where(*hit, delta, Expr::constant(0, acc)) : delta, acc);
        });
    return Expr::cast(sum, m.dtype);
  })};
}

/// adaptive_max_pool2d_backward: each input position gathers the gradients of the outputs whose recorded position
/// it is, over the windows holding it, in output order (eager adds them into the input in that order).
std::vector<TensorValue> lower_adaptive_max_pool2d_backward(GraphLowering& L, const BoundArgs&) {
  const TensorMeta& m = L.out_meta();
  TensorValue grad = L.tensor("grad_output"), self = L.tensor("self"), indices = L.tensor("indices");
  const AdaptiveWindows win(L, self, grad.sizes);
  const size_t r = win.r;
  const DType acc = compute_type(m.dtype);
  return {L.make(m.dtype, m.sizes, {&grad, &indices}, [&](const std::vector<Index>& c) {
    Expr here = Expr::index_value(c[r - 2] * win.in[1] + c[r - 1], DType::Int64);
    Expr sum = Expr::constant(0, acc);
    win.each_candidate(
        c, [&](const std::vector<Index>& at, const std::array<Index, 2>&, const std::optional<Expr>& valid) {
          Expr hit = Expr::binary(BinaryOp::Eq, Expr::cast(L.at(indices, at), DType::Int64), here, DType::Bool);
          if (valid) hit = Expr::binary(BinaryOp::LogicalAnd, *valid, hit, DType::Bool);
          sum = Expr::binary(BinaryOp::Add, sum,
                             Expr::where(hit, Expr::cast(L.at(grad, at), acc), Expr::constant(0, acc)), acc);
        });
    return Expr::cast(sum, m.dtype);
  })};
}

}  // namespace

void register_pooling_ops(OpTable& t) {
  t.lowered(
      "aten::avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, "
      "bool count_include_pad=True, int? divisor_override=None) -> Tensor",
      [](const MetaInference& m) { return pool2d(m, false); }, lower_avg_pool2d);
  t.lowered(
      "aten::max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
      "int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)",
      [](const MetaInference& m) { return pool2d(m, true); }, lower_max_pool2d_with_indices);
  t.lowered(
      "aten::_adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor",
      adaptive_avg_pool2d, lower_adaptive_avg_pool2d);
  t.lowered(
      "aten::adaptive_max_pool2d(Tensor self, int[2] output_size) -> (Tensor, Tensor)",
      adaptive_max_pool2d, lower_adaptive_max_pool2d);
  t.lowered(
      "aten::adaptive_max_pool2d_backward(Tensor grad_output, Tensor self, Tensor indices) -> Tensor",
      pool2d_backward, lower_adaptive_max_pool2d_backward);
  t.lowered(
      "aten::avg_pool2d_backward(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride, int[2] padding, "
      "bool ceil_mode, bool count_include_pad, int? divisor_override) -> Tensor",
      pool2d_backward, lower_avg_pool2d_backward);
  t.lowered(
      "aten::max_pool2d_with_indices_backward(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride, "
      "int[2] padding, int[2] dilation, bool ceil_mode, Tensor indices) -> Tensor",
      pool2d_backward, lower_max_pool2d_backward);
  t.lowered(
      "aten::_adaptive_avg_pool2d_backward(Tensor grad_output, Tensor self) -> Tensor",
      pool2d_backward, lower_adaptive_avg_pool2d_backward);
}

}  // namespace hi
