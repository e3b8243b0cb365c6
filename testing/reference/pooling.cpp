// References of 2-d pooling ops, written as PyTorch's CPU loops.
#include <cmath>

#include "testing/reference/families.h"
#include "testing/reference_context.h"

namespace hi::reference {
namespace {

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
  const DType acc = out.dtype == DType::Float16 || out.dtype == DType::BFloat16 ? DType::Float32 : out.dtype;
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
  t.add("aten.adaptive_max_pool2d.default", adaptive_max_pool2d);
  t.add("aten.adaptive_max_pool2d_backward.default", adaptive_max_pool2d_backward);
}

}  // namespace hi::reference
