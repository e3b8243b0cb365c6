// References of the normalizations (lowering/ops/norms.cpp): softmax, log_softmax, layer norm, group norm, batch
// norm, in double with two-pass statistics.
#include <algorithm>
#include <cmath>

#include "testing/reference/families.h"
#include "testing/reference_context.h"

namespace hi::reference {
namespace {

/// The three batch norm overloads (see lowering/ops/norms.cpp).
enum class BatchNormVariant { NoTraining, Functional, NoStats };

std::vector<HostTensor> softmax(GraphEvaluator& E, const BoundArgs& args, bool log) {
  const HostTensor& self = E.tensor("self");
  std::vector<bool> reduced(static_cast<size_t>(self.rank()), false);
  int64_t dim = E.wrap_dim(args.get_int("dim"), self.rank());
  if (self.rank() > 0) reduced[dim] = true;
  Groups g = group_elements(self.sizes, reduced);
  std::vector<double> v = self.values();
  std::vector<double> peak(static_cast<size_t>(g.count), -INFINITY), total(static_cast<size_t>(g.count), 0.0);
  for (size_t i = 0; i < v.size(); ++i) peak[g.group[i]] = nan_max(peak[g.group[i]], v[i]);
  for (size_t i = 0; i < v.size(); ++i) total[g.group[i]] += std::exp(v[i] - peak[g.group[i]]);
  std::vector<double> r(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    double shifted = v[i] - peak[g.group[i]];
    r[i] = log ? shifted - std::log(total[g.group[i]]) : std::exp(shifted) / total[g.group[i]];
  }
  return {E.output_from_values(0, r)};
}

std::vector<HostTensor> layer_norm(GraphEvaluator& E, const BoundArgs& args) {
  const HostTensor& x = E.tensor("input");
  const std::vector<int64_t> shape = args.get_ints("normalized_shape");
  auto k = static_cast<int64_t>(shape.size());
  if (k > x.rank()) E.fail("normalized_shape is longer than the input's rank");
  for (int64_t i = 0; i < k; ++i)
    if (shape[i] != x.sizes[x.rank() - k + i])
      E.fail("normalized_shape " + shape_str(shape) + " does not match the input's trailing sizes " +
             shape_str(x.sizes));
  const HostTensor* w = E.optional_tensor("weight");
  const HostTensor* b = E.optional_tensor("bias");
  double eps = args.get_float("eps");
  std::vector<bool> reduced(static_cast<size_t>(x.rank()), false);
  for (int64_t i = x.rank() - k; i < x.rank(); ++i) reduced[i] = true;
  Groups g = group_elements(x.sizes, reduced);
  std::vector<double> v = x.values();
  std::vector<double> mean, variance;
  moments(v, g, 0.0, mean, variance);
  std::vector<double> rstd(variance.size());
  for (size_t i = 0; i < rstd.size(); ++i) rstd[i] = 1.0 / std::sqrt(variance[i] + eps);
  std::vector<double> wv, bv;
  if (w) wv = E.broadcast(Operand{w}, x.sizes, DType::Float64, DType::Float64);
  if (b) bv = E.broadcast(Operand{b}, x.sizes, DType::Float64, DType::Float64);
  std::vector<double> y(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    y[i] = (v[i] - mean[g.group[i]]) * rstd[g.group[i]];
    if (w) y[i] *= wv[i];
    if (b) y[i] += bv[i];
  }
  return {E.output_from_values(0, y), E.output_from_values(1, mean), E.output_from_values(2, rstd)};
}

std::vector<HostTensor> group_norm(GraphEvaluator& E, const BoundArgs& args) {
  const HostTensor& x = E.tensor("input");
  const HostTensor* w = E.optional_tensor("weight");
  const HostTensor* b = E.optional_tensor("bias");
  int64_t groups = args.get_int("group");
  double eps = args.get_float("eps");
  if (x.rank() < 2 || groups <= 0 || x.sizes[1] % groups != 0) E.fail("group must divide the channels");
  int64_t n = x.sizes[0], c = x.sizes[1], per_group = c / groups;
  int64_t spatial = x.numel() / std::max<int64_t>(n * c, 1);
  std::vector<double> v = x.values();  // row-major [N, C, spatial]
  std::vector<double> mean(static_cast<size_t>(n * groups), 0.0), var(mean.size(), 0.0);
  auto group_of = [&](size_t i) {
    int64_t k = static_cast<int64_t>(i) / spatial;  // n * C + channel
    return (k / c) * groups + (k % c) / per_group;
  };
  double count = static_cast<double>(per_group * spatial);
  for (size_t i = 0; i < v.size(); ++i) mean[group_of(i)] += v[i];
  for (double& m : mean) m /= count;
  for (size_t i = 0; i < v.size(); ++i) var[group_of(i)] += (v[i] - mean[group_of(i)]) * (v[i] - mean[group_of(i)]);
  std::vector<double> rstd(var.size());
  for (size_t k = 0; k < var.size(); ++k) rstd[k] = 1.0 / std::sqrt(var[k] / count + eps);
  std::vector<double> y(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    int64_t ch = (static_cast<int64_t>(i) / spatial) % c;
    y[i] = (v[i] - mean[group_of(i)]) * rstd[group_of(i)];
    if (w) y[i] *= w->at({ch});
    if (b) y[i] += b->at({ch});
  }
  return {E.output_from_values(0, y), E.output_from_values(1, mean), E.output_from_values(2, rstd)};
}

std::vector<HostTensor> batch_norm(GraphEvaluator& E, const BoundArgs& args, BatchNormVariant variant) {
  const HostTensor& x = E.tensor("input");
  const HostTensor* w = E.optional_tensor("weight");
  const HostTensor* b = E.optional_tensor("bias");
  const bool stats = variant != BatchNormVariant::NoStats;
  const HostTensor* rm = stats ? &E.tensor("running_mean") : nullptr;
  const HostTensor* rv = stats ? &E.tensor("running_var") : nullptr;
  const bool training = variant != BatchNormVariant::NoTraining && args.get_bool("training");
  const double momentum = args.get_float("momentum"), eps = args.get_float("eps");
  if (x.rank() < 2) E.fail("input must have rank >= 2");
  if (!training && !rm) E.fail("batch norm without running statistics must be training");
  int64_t c = x.sizes[1];
  std::vector<bool> reduced(static_cast<size_t>(x.rank()), true);
  reduced[1] = false;
  Groups g = group_elements(x.sizes, reduced);
  std::vector<double> v = x.values();
  std::vector<double> mean(static_cast<size_t>(c)), var(static_cast<size_t>(c));
  if (training) {
    moments(v, g, 0.0, mean, var);
  } else {
    for (int64_t k = 0; k < c; ++k) {
      mean[k] = rm->at({k});
      var[k] = rv->at({k});
    }
  }
  std::vector<double> invstd(static_cast<size_t>(c));
  for (int64_t k = 0; k < c; ++k) invstd[k] = 1.0 / std::sqrt(var[k] + eps);
  std::vector<double> y(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    int64_t ch = g.group[i];
    y[i] = (v[i] - mean[ch]) * invstd[ch];
    if (w) y[i] *= w->at({ch});
    if (b) y[i] += b->at({ch});
  }
  std::vector<HostTensor> out{E.output_from_values(0, y)};
  auto stat = [&](size_t i, const std::vector<double>& s) {
    return E.out_meta(i).sizes.size() == 1 && E.out_meta(i).sizes[0].is_const(0) ? E.output(i)
                                                                                 : E.output_from_values(i, s);
  };
  out.push_back(stat(1, mean));
  out.push_back(stat(2, invstd));
  if (variant != BatchNormVariant::Functional) return out;
  std::vector<double> new_mean(static_cast<size_t>(c)), new_var(static_cast<size_t>(c));
  double n = static_cast<double>(g.size);
  for (int64_t k = 0; k < c; ++k) {
    new_mean[k] = training ? momentum * mean[k] + (1 - momentum) * rm->at({k}) : rm->at({k});
    new_var[k] = training ? momentum * var[k] * n / (n - 1) + (1 - momentum) * rv->at({k}) : rv->at({k});
  }
  out.push_back(E.output_from_values(3, new_mean));
  out.push_back(E.output_from_values(4, new_var));
  return out;
}

}  // namespace

void register_norm_references(ReferenceTable& t) {
  t.add("aten._softmax.default", [](GraphEvaluator& E, const BoundArgs& a) { return softmax(E, a, false); });
  t.add("aten._log_softmax.default", [](GraphEvaluator& E, const BoundArgs& a) { return softmax(E, a, true); });
  t.add("aten.native_layer_norm.default", layer_norm);
  t.add("aten.native_group_norm.default", group_norm);
  auto variant = [](BatchNormVariant v) {
    return [v](GraphEvaluator& E, const BoundArgs& a) { return batch_norm(E, a, v); };
  };
  t.add("aten._native_batch_norm_legit_no_training.default", variant(BatchNormVariant::NoTraining));
  t.add("aten._native_batch_norm_legit_functional.default", variant(BatchNormVariant::Functional));
  t.add("aten._native_batch_norm_legit.no_stats", variant(BatchNormVariant::NoStats));
}

}  // namespace hi::reference
