// References of the scans (lowering/ops/scans.cpp): cumsum, cumprod, cummax, cummin, logcumsumexp, evaluated in
// order along the dim as eager's scans run.
#include <algorithm>
#include <cmath>

#include "testing/reference/families.h"
#include "testing/reference_context.h"

namespace hi::reference {
namespace {

std::vector<HostTensor> scan(GraphEvaluator& E, const BoundArgs& args, bool product) {
  const HostTensor& self = E.tensor("self");
  HostTensor out = E.output();
  if (self.rank() == 0) return {E.output_from_values(0, self.values())};
  int64_t dim = E.wrap_dim(args.get_int("dim"), self.rank());
  bool integral = !is_floating(out.dtype);
  for_each_index(self.sizes, [&](const std::vector<int64_t>& idx, int64_t flat) {
    double v = round_to_dtype(out.dtype, self.at(idx));
    if (idx[dim] > 0) {
      double prev = out.storage[flat - out.strides[dim]];
      if (integral) {
        auto p = static_cast<uint64_t>(to_int64(prev)), q = static_cast<uint64_t>(to_int64(v));
        v = static_cast<double>(wrapping(product ? p * q : p + q));
      } else {
        v = product ? prev * v : prev + v;
      }
    }
    out.storage[flat] = round_to_dtype(out.dtype, v);
  });
  return {out};
}

/// cummax / cummin as eager's scan: a NaN, or a value at least as extreme as the running one, takes over (so the
/// index is the last position holding the extreme; after a NaN, the last NaN).
std::vector<HostTensor> cum_extreme(GraphEvaluator& E, const BoundArgs& args, bool is_max) {
  const HostTensor& self = E.tensor("self");
  HostTensor values = E.output(0), indices = E.output(1);
  if (self.rank() == 0) return {E.output_from_values(0, self.values()), E.output_from_values(1, {0.0})};
  int64_t dim = E.wrap_dim(args.get_int("dim"), self.rank());
  for_each_index(self.sizes, [&](const std::vector<int64_t>& idx, int64_t flat) {
    double x = self.at(idx), best = x, pos = static_cast<double>(idx[dim]);
    if (idx[dim] > 0) {
      double prev = values.storage[flat - values.strides[dim]];
      bool take = std::isnan(x) || (!std::isnan(prev) && (is_max ? x >= prev : x <= prev));
      if (!take) {
        best = prev;
        pos = indices.storage[flat - indices.strides[dim]];
      }
    }
    values.storage[flat] = best;
    indices.storage[flat] = pos;
  });
  return {values, indices};
}

/// logcumsumexp in double: log(exp(a) + exp(b)) as max + log1p(exp(min - max)), an infinite max kept.
std::vector<HostTensor> logcumsumexp(GraphEvaluator& E, const BoundArgs& args) {
  const HostTensor& self = E.tensor("self");
  HostTensor out = E.output();
  if (self.rank() == 0) return {E.output_from_values(0, self.values())};
  int64_t dim = E.wrap_dim(args.get_int("dim"), self.rank());
  std::vector<double> acc(out.storage.size());
  for_each_index(self.sizes, [&](const std::vector<int64_t>& idx, int64_t flat) {
    double x = self.at(idx);
    if (idx[dim] > 0) {
      double a = acc[static_cast<size_t>(flat - out.strides[dim])];
      double hi = std::max(a, x), lo = std::min(a, x);
      if (std::isnan(a) || std::isnan(x))
        x = std::nan("");
      else if (!std::isinf(hi))
        x = hi + std::log1p(std::exp(lo - hi));
      else
        x = hi;
    }
    acc[static_cast<size_t>(flat)] = x;
    out.storage[flat] = round_to_dtype(out.dtype, x);
  });
  return {out};
}

}  // namespace

void register_scan_references(ReferenceTable& t) {
  t.add("aten.cumsum.default", [](GraphEvaluator& E, const BoundArgs& a) { return scan(E, a, false); });
  t.add("aten.cumprod.default", [](GraphEvaluator& E, const BoundArgs& a) { return scan(E, a, true); });
  t.add("aten.cummax.default", [](GraphEvaluator& E, const BoundArgs& a) { return cum_extreme(E, a, true); });
  t.add("aten.cummin.default", [](GraphEvaluator& E, const BoundArgs& a) { return cum_extreme(E, a, false); });
  t.add("aten.logcumsumexp.default", logcumsumexp);
}

}  // namespace hi::reference
