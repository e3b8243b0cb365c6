// References of the reductions (lowering/ops/reductions.cpp), in double; integer sums and products wrap as eager's
// do, max / min / argmax / argmin take the first extreme with NaN as the extreme.
#include <cmath>
#include <optional>

#include "testing/reference/families.h"
#include "testing/reference_context.h"

namespace hi::reference {
namespace {

/// The dims an overload reduces: every dim (nullopt) when it has no `dim` argument or it is None, else the int or the
/// list given (an empty list: every dim).
std::optional<std::vector<int64_t>> reduction_dims(const BoundArgs& args) {
  if (args.schema->arg_index("dim") < 0 || !args.given("dim")) return std::nullopt;
  if (args.get("dim").kind() == Arg::Kind::Int) return std::vector<int64_t>{args.get_int("dim")};
  return args.get_ints("dim");
}

std::vector<HostTensor> sum(GraphEvaluator& E, const BoundArgs& args, bool mean) {
  const HostTensor& self = E.tensor("self");
  Groups g = group_elements(self.sizes, E.reduced_dims(reduction_dims(args), self.rank()));
  DType out_type = E.out_meta().dtype;
  std::vector<double> v = self.values();
  std::vector<double> acc(static_cast<size_t>(g.count), 0.0);
  if (!is_floating(out_type) && !mean) {
    std::vector<uint64_t> iacc(acc.size(), 0);  // wrapping integer sum
    for (size_t i = 0; i < v.size(); ++i) iacc[g.group[i]] += static_cast<uint64_t>(to_int64(v[i]));
    for (size_t k = 0; k < acc.size(); ++k) acc[k] = static_cast<double>(wrapping(iacc[k]));
  } else {
    for (size_t i = 0; i < v.size(); ++i) acc[g.group[i]] += v[i];
  }
  if (mean)
    for (double& a : acc) a /= static_cast<double>(g.size);
  return {E.output_from_values(0, acc)};
}

std::vector<HostTensor> minmax(GraphEvaluator& E, const BoundArgs& args, bool max) {
  const HostTensor& self = E.tensor("self");
  Groups g = group_elements(self.sizes, E.reduced_dims(reduction_dims(args), self.rank()));
  if (g.size == 0 && g.count > 0) E.fail("reduction over an empty dimension has no identity");
  std::vector<double> v = self.values();
  std::vector<double> acc(static_cast<size_t>(g.count), max ? -INFINITY : INFINITY);
  for (size_t i = 0; i < v.size(); ++i) {
    double& a = acc[g.group[i]];
    a = max ? nan_max(a, v[i]) : nan_min(a, v[i]);
  }
  return {E.output_from_values(0, acc)};
}
/// var, var_mean, or (with `root`) std from the unrounded variance: one rounding to the result dtype.
std::vector<HostTensor> var(GraphEvaluator& E, const BoundArgs& args, bool with_mean, bool root = false) {
  const HostTensor& self = E.tensor("self");
  Groups g = group_elements(self.sizes, E.reduced_dims(reduction_dims(args), self.rank()));
  double correction = args.optional_float("correction").value_or(1.0);
  std::vector<double> mean, variance;
  moments(self.values(), g, correction, mean, variance);
  if (root)
    for (double& x : variance) x = std::sqrt(x);
  std::vector<HostTensor> out{E.output_from_values(0, variance)};
  if (with_mean) out.push_back(E.output_from_values(1, mean));
  return out;
}
std::vector<HostTensor> prod(GraphEvaluator& E, const BoundArgs& args) {
  const HostTensor& self = E.tensor("self");
  std::optional<std::vector<int64_t>> dims = reduction_dims(args);
  DType t = E.out_meta().dtype;
  std::vector<double> acc;
  if (!is_floating(t)) {
    acc = E.fold(self, dims, 1, [](double a, double v, int64_t, int64_t&) {
      return static_cast<double>(wrapping(static_cast<uint64_t>(to_int64(a)) * static_cast<uint64_t>(to_int64(v))));
    });
  } else {
    acc = E.fold(self, dims, 1, [&](double a, double v, int64_t, int64_t&) { return a * round_to_dtype(t, v); });
  }
  return {E.output_from_values(0, acc)};
}

std::vector<HostTensor> any_all(GraphEvaluator& E, const BoundArgs& args, bool any) {
  const HostTensor& self = E.tensor("self");
  std::optional<std::vector<int64_t>> dims = reduction_dims(args);
  auto acc = E.fold(self, dims, any ? 0 : 1, [&](double a, double v, int64_t, int64_t&) {
    bool b = v != 0;  // NaN is true
    return any ? ((a != 0 || b) ? 1.0 : 0.0) : ((a != 0 && b) ? 1.0 : 0.0);
  });
  return {E.output_from_values(0, acc)};
}

/// argmax/argmin positions and max/min values: the first extreme, NaN counting as the extreme.
std::vector<HostTensor> extreme(GraphEvaluator& E, const BoundArgs& args, bool is_max, bool values, bool indices) {
  const HostTensor& self = E.tensor("self");
  std::optional<std::vector<int64_t>> dims = reduction_dims(args);
  Groups g = group_elements(self.sizes, E.reduced_dims(dims, self.rank()));
  if (g.size == 0 && g.count > 0) E.fail("reduction over an empty dimension has no identity");
  std::vector<int64_t> pos;
  auto acc = E.fold(
      self, dims, 0,
      [&](double a, double v, int64_t n, int64_t& p) {
        if (n == 0 || std::isnan(a)) {
          if (n == 0) p = 0;
          return n == 0 ? v : a;
        }
        bool better = std::isnan(v) || (is_max ? v > a : v < a);
        if (better) p = n;
        return better ? v : a;
      },
      &pos);
  std::vector<HostTensor> out;
  if (values) out.push_back(E.output_from_values(0, acc));
  if (indices) {
    std::vector<double> ids(pos.begin(), pos.end());
    out.push_back(E.output_from_values(values ? 1 : 0, ids));
  }
  return out;
}
std::vector<HostTensor> vector_norm(GraphEvaluator& E, const BoundArgs& args) {
  const HostTensor& self = E.tensor("self");
  double ord = args.get_float("ord");
  DType t = E.out_meta().dtype;
  Groups g = group_elements(self.sizes, E.reduced_dims(reduction_dims(args), self.rank()));
  std::vector<double> v = self.values();
  bool is_max = std::isinf(ord) && ord > 0, is_min = std::isinf(ord) && ord < 0;
  std::vector<double> acc(static_cast<size_t>(g.count), is_max ? -INFINITY : (is_min ? INFINITY : 0.0));
  for (size_t i = 0; i < v.size(); ++i) {
    double a = std::fabs(round_to_dtype(t, v[i]));  // dtype=: the input is converted first
    double& r = acc[g.group[i]];
    if (is_max)
      r = nan_max(r, a);
    else if (is_min)
      r = nan_min(r, a);
    else if (ord == 0)
      r += (a != 0) ? 1.0 : 0.0;  // NaN != 0 counts
    else if (ord == 1)
      r += a;
    else if (ord == 2)
      r += a * a;
    else
      r += std::pow(a, ord);
  }
  for (double& r : acc) {
    if (ord == 2)
      r = std::sqrt(r);
    else if (!std::isinf(ord) && ord != 0 && ord != 1)
      r = std::pow(r, 1.0 / ord);
  }
  return {E.output_from_values(0, acc)};
}

}  // namespace

void register_reduction_references(ReferenceTable& t) {
  auto sum_of = [](bool mean) { return [mean](GraphEvaluator& E, const BoundArgs& a) { return sum(E, a, mean); }; };
  t.add("aten.sum.dim_IntList", sum_of(false));
  t.add("aten.sum.default", sum_of(false));
  t.add("aten.mean.dim", sum_of(true));
  t.add("aten.mean.default", sum_of(true));
  t.add("aten.amax.default", [](GraphEvaluator& E, const BoundArgs& a) { return minmax(E, a, true); });
  t.add("aten.amin.default", [](GraphEvaluator& E, const BoundArgs& a) { return minmax(E, a, false); });
  t.add("aten.var.correction", [](GraphEvaluator& E, const BoundArgs& a) { return var(E, a, false); });
  t.add("aten.var_mean.correction", [](GraphEvaluator& E, const BoundArgs& a) { return var(E, a, true); });
  t.add("aten.std.correction", [](GraphEvaluator& E, const BoundArgs& a) { return var(E, a, false, true); });
  t.add("aten.prod.dim_int", prod);
  t.add("aten.prod.default", prod);
  for (const char* name : {"aten.any.dim", "aten.any.dims", "aten.any.default"})
    t.add(name, [](GraphEvaluator& E, const BoundArgs& a) { return any_all(E, a, true); });
  for (const char* name : {"aten.all.dim", "aten.all.default"})
    t.add(name, [](GraphEvaluator& E, const BoundArgs& a) { return any_all(E, a, false); });
  t.add("aten.argmax.default", [](GraphEvaluator& E, const BoundArgs& a) { return extreme(E, a, true, false, true); });
  t.add("aten.argmin.default", [](GraphEvaluator& E, const BoundArgs& a) { return extreme(E, a, false, false, true); });
  t.add("aten.max.dim", [](GraphEvaluator& E, const BoundArgs& a) { return extreme(E, a, true, true, true); });
  t.add("aten.min.dim", [](GraphEvaluator& E, const BoundArgs& a) { return extreme(E, a, false, true, true); });
  t.add("aten.max.default", [](GraphEvaluator& E, const BoundArgs& a) { return extreme(E, a, true, true, false); });
  t.add("aten.min.default", [](GraphEvaluator& E, const BoundArgs& a) { return extreme(E, a, false, true, false); });
  t.add("aten.linalg_vector_norm.default", vector_norm);
}

}  // namespace hi::reference
