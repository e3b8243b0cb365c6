// References of 2-d pooling ops, written as PyTorch's CPU loops.
#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include "testing/reference/families.h"
#include "testing/reference_context.h"

namespace hi::reference {
namespace {

/// Which pooling a forward or backward op is.
enum class PoolKind { Average, Max, AdaptiveAverage };

/// A 2-d pooling op's arguments.
struct PoolArgs {
  PoolKind kind = PoolKind::Average;
  std::array<int64_t, 2> k{}, s{}, p{}, d{1, 1};
  bool include_pad = true;
  std::optional<int64_t> divisor;

  /// Output (oh, ow)'s window clipped to the input (h in [hs, he), w in [ws, we)) and what its average divides by,
  /// as PyTorch's CPU kernels compute them; adaptive windows span floor(o * in / out) .. ceil((o + 1) * in / out).
  struct Window {
    int64_t hs, he, ws, we, count;
  };
  Window window(int64_t oh, int64_t ow, int64_t H, int64_t W, int64_t OH, int64_t OW) const {
    if (kind == PoolKind::AdaptiveAverage) {
      Window w{oh * H / OH, ((oh + 1) * H + OH - 1) / OH, ow * W / OW, ((ow + 1) * W + OW - 1) / OW, 0};
      w.count = (w.he - w.hs) * (w.we - w.ws);
      return w;
    }
    Window w{oh * s[0] - p[0], 0, ow * s[1] - p[1], 0, 0};
    w.he = std::min(w.hs + k[0], H + p[0]), w.we = std::min(w.ws + k[1], W + p[1]);
    w.count = (w.he - w.hs) * (w.we - w.ws);
    w.hs = std::max<int64_t>(w.hs, 0), w.ws = std::max<int64_t>(w.ws, 0);
    w.he = std::min(w.he, H), w.we = std::min(w.we, W);
    if (!include_pad) w.count = std::max<int64_t>((w.he - w.hs) * (w.we - w.ws), 1);
    if (divisor) w.count = *divisor;
    return w;
  }
};

PoolArgs pool_args(GraphEvaluator& E, const BoundArgs& args, PoolKind kind) {
  const HostTensor& self = E.tensor("self");
  if (self.rank() != 3 && self.rank() != 4) E.fail("expected a 3-d or 4-d input");
  auto pair = [&](const char* name, std::array<int64_t, 2> dflt) {
    std::optional<std::vector<int64_t>> v = args.optional_ints(name);
    if (!v || v->empty()) return dflt;
    return std::array<int64_t, 2>{v->front(), v->back()};
  };
  PoolArgs a;
  a.kind = kind;
  if (kind == PoolKind::AdaptiveAverage) return a;
  a.k = pair("kernel_size", {1, 1});
  a.s = pair("stride", a.k);
  a.p = pair("padding", {0, 0});
  if (kind == PoolKind::Max) a.d = pair("dilation", {1, 1});
  if (kind == PoolKind::Average) {
    a.include_pad = args.get_bool("count_include_pad");
    a.divisor = args.optional_int("divisor_override");
  }
  return a;
}

/// avg_pool2d, max_pool2d_with_indices, _adaptive_avg_pool2d, written as PyTorch's CPU loops.
std::vector<HostTensor> pool2d(GraphEvaluator& E, const BoundArgs& args, PoolKind kind) {
  const HostTensor& self = E.tensor("self");
  const PoolArgs a = pool_args(E, args, kind);
  const size_t r = self.sizes.size();
  const int64_t H = self.sizes[r - 2], W = self.sizes[r - 1];
  HostTensor out = E.output(0);
  HostTensor idx = kind == PoolKind::Max ? E.output(1) : HostTensor{};
  const int64_t OH = out.sizes[r - 2], OW = out.sizes[r - 1];
  const DType acc = opmath_type(out.dtype);
  for_each_index(out.sizes, [&](const std::vector<int64_t>& c, int64_t flat) {
    std::vector<int64_t> in = c;
    auto value = [&](int64_t h, int64_t w) {
      in[r - 2] = h;
      in[r - 1] = w;
      return self.at(in);
    };
    const int64_t oh = c[r - 2], ow = c[r - 1];
    if (kind == PoolKind::Max) {
      int64_t hs = oh * a.s[0] - a.p[0], ws = ow * a.s[1] - a.p[1];
      const int64_t he = std::min(hs + (a.k[0] - 1) * a.d[0] + 1, H), we = std::min(ws + (a.k[1] - 1) * a.d[1] + 1, W);
      while (hs < 0) hs += a.d[0];
      while (ws < 0) ws += a.d[1];
      double best = -INFINITY;
      int64_t at = hs * W + ws;
      for (int64_t h = hs; h < he; h += a.d[0])
        for (int64_t w = ws; w < we; w += a.d[1]) {
          const double v = value(h, w);
          if (v > best || std::isnan(v)) {
            best = v;
            at = h * W + w;
          }
        }
      out.storage[flat] = round_to_dtype(out.dtype, best);
      idx.storage[flat] = static_cast<double>(at);
      return;
    }
    const PoolArgs::Window win = a.window(oh, ow, H, W, OH, OW);
    if (win.hs >= win.he || win.ws >= win.we) {  // a window wholly in the padding
      out.storage[flat] = 0;
      return;
    }
    double sum = 0;
    for (int64_t h = win.hs; h < win.he; ++h)
      for (int64_t w = win.ws; w < win.we; ++w) sum = round_to_dtype(acc, sum + value(h, w));
    // Adaptive pooling divides by the window's height, then by its width.
    const double mean = kind == PoolKind::AdaptiveAverage
                            ? round_to_dtype(acc, round_to_dtype(acc, sum / static_cast<double>(win.he - win.hs)) /
                                                      static_cast<double>(win.we - win.ws))
                            : round_to_dtype(acc, sum / static_cast<double>(win.count));
    out.storage[flat] = round_to_dtype(out.dtype, mean);
  });
  if (kind == PoolKind::Max) return {out, idx};
  return {out};
}

/// avg_pool2d_backward, max_pool2d_with_indices_backward, _adaptive_avg_pool2d_backward: PyTorch's CPU loops, which
/// visit the outputs in order and add each one's share into the input positions it came from.
std::vector<HostTensor> pool2d_backward(GraphEvaluator& E, const BoundArgs& args, PoolKind kind) {
  const HostTensor& grad = E.tensor("grad_output");
  const HostTensor& self = E.tensor("self");
  const PoolArgs a = pool_args(E, args, kind);
  const HostTensor* indices = kind == PoolKind::Max ? &E.tensor("indices") : nullptr;
  const size_t r = self.sizes.size();
  const int64_t H = self.sizes[r - 2], W = self.sizes[r - 1], OH = grad.sizes[r - 2], OW = grad.sizes[r - 1];
  HostTensor out = E.output(0);
  const DType acc = opmath_type(out.dtype);
  std::vector<double> sums(static_cast<size_t>(out.numel()), 0.0);
  auto add = [&](std::vector<int64_t> c, int64_t h, int64_t w, double v) {
    c[r - 2] = h;
    c[r - 1] = w;
    double& x = sums[static_cast<size_t>(out.storage_index(c))];
    x = round_to_dtype(acc, x + v);
  };
  for_each_index(grad.sizes, [&](const std::vector<int64_t>& c, int64_t) {
    const double g = grad.at(c);
    if (kind == PoolKind::Max) {
      // A window wholly in the padding records a position outside the plane (eager writes there); skipped.
      const int64_t at = static_cast<int64_t>(indices->at(c));
      if (at >= 0 && at < H * W) add(c, at / W, at % W, g);
      return;
    }
    const PoolArgs::Window win = a.window(c[r - 2], c[r - 1], H, W, OH, OW);
    // Adaptive pooling divides by the window's height, then by its width.
    const double delta = kind == PoolKind::AdaptiveAverage
                             ? round_to_dtype(acc, round_to_dtype(acc, g / static_cast<double>(win.he - win.hs)) /
                                                       static_cast<double>(win.we - win.ws))
                             : round_to_dtype(acc, g / static_cast<double>(win.count));
    for (int64_t h = win.hs; h < win.he; ++h)
      for (int64_t w = win.ws; w < win.we; ++w) add(c, h, w, delta);
  });
  for (size_t i = 0; i < sums.size(); ++i) out.storage[i] = round_to_dtype(out.dtype, sums[i]);
  return {out};
}

/// adaptive_max_pool2d: each output's window spans floor(o * in / out) .. ceil((o + 1) * in / out); the first
/// largest value wins, a NaN takes over (and the last NaN stays), its position is h * W + w in the input plane.
std::vector<HostTensor> adaptive_max_pool2d(GraphEvaluator& E, const BoundArgs&) {
  const HostTensor& self = E.tensor("self");
  if (self.rank() != 3 && self.rank() != 4) E.fail("expected a 3-d or 4-d input");
  const size_t r = self.sizes.size();
  const int64_t H = self.sizes[r - 2], W = self.sizes[r - 1];
  HostTensor values = E.output(0), indices = E.output(1);
  const int64_t OH = values.sizes[r - 2], OW = values.sizes[r - 1];
  for_each_index(values.sizes, [&](const std::vector<int64_t>& c, int64_t flat) {
    const int64_t oh = c[r - 2], ow = c[r - 1];
    const int64_t hs = oh * H / OH, he = ((oh + 1) * H + OH - 1) / OH;
    const int64_t ws = ow * W / OW, we = ((ow + 1) * W + OW - 1) / OW;
    std::vector<int64_t> in = c;
    double best = -INFINITY;
    int64_t at = hs * W + ws;
    for (int64_t h = hs; h < he; ++h) {
      for (int64_t w = ws; w < we; ++w) {
        in[r - 2] = h;
        in[r - 1] = w;
        const double v = self.at(in);
        if (v > best || std::isnan(v)) {
          best = v;
          at = h * W + w;
        }
      }
    }
    values.storage[flat] = round_to_dtype(values.dtype, best);
    indices.storage[flat] = static_cast<double>(at);
  });
  return {values, indices};
}

/// adaptive_max_pool2d_backward: each output's gradient added, in output order, at the input position its index
/// names (accumulating in the op's computation type, as eager's CPU kernel does).
std::vector<HostTensor> adaptive_max_pool2d_backward(GraphEvaluator& E, const BoundArgs&) {
  const HostTensor& grad = E.tensor("grad_output");
  const HostTensor& self = E.tensor("self");
  const HostTensor& indices = E.tensor("indices");
  const size_t r = self.sizes.size();
  const int64_t W = self.sizes[r - 1];
  HostTensor out = E.output(0);
  const DType acc = opmath_type(out.dtype);
  std::vector<double> sums(static_cast<size_t>(out.numel()), 0.0);
  for_each_index(grad.sizes, [&](const std::vector<int64_t>& c, int64_t) {
    const int64_t at = static_cast<int64_t>(indices.at(c));
    std::vector<int64_t> in = c;
    in[r - 2] = at / W;
    in[r - 1] = at % W;
    double& x = sums[static_cast<size_t>(out.storage_index(in))];
    x = round_to_dtype(acc, x + grad.at(c));
  });
  for (size_t i = 0; i < sums.size(); ++i) out.storage[i] = round_to_dtype(out.dtype, sums[i]);
  return {out};
}

}  // namespace

void register_pooling_references(ReferenceTable& t) {
  auto forward = [](PoolKind k) { return [k](GraphEvaluator& E, const BoundArgs& a) { return pool2d(E, a, k); }; };
  auto backward = [](PoolKind k) {
    return [k](GraphEvaluator& E, const BoundArgs& a) { return pool2d_backward(E, a, k); };
  };
  t.add("aten.avg_pool2d.default", forward(PoolKind::Average));
  t.add("aten.max_pool2d_with_indices.default", forward(PoolKind::Max));
  t.add("aten._adaptive_avg_pool2d.default", forward(PoolKind::AdaptiveAverage));
  t.add("aten.avg_pool2d_backward.default", backward(PoolKind::Average));
  t.add("aten.max_pool2d_with_indices_backward.default", backward(PoolKind::Max));
  t.add("aten._adaptive_avg_pool2d_backward.default", backward(PoolKind::AdaptiveAverage));
  t.add("aten.adaptive_max_pool2d.default", adaptive_max_pool2d);
  t.add("aten.adaptive_max_pool2d_backward.default", adaptive_max_pool2d_backward);
}

}  // namespace hi::reference
