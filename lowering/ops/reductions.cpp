// Reductions: sum, mean, prod, amax / amin, max / min (with indices over a dim), argmax / argmin, any / all, var,
// std, var_mean, linalg_vector_norm. Every overload reduces the dims its `dim` argument names: all of them when the
// overload has none or it is None or empty.
#include <cmath>
#include <functional>
#include <set>

#include "lowering/lowering_context.h"
#include "lowering/op_registry.h"

namespace hi {
namespace {

using lowering::accumulate_type;
using lowering::compute_type;
using lowering::count_value;
using lowering::extreme_type;
using lowering::GraphLowering;
using lowering::Moments;
using lowering::moments;
using lowering::squeeze_dims;
using lowering::TensorValue;

/// The dims an overload reduces (see the top of this file); a symbolic dim throws.
std::vector<int64_t> reduction_dims(const BoundArgs& args) {
  if (args.schema->arg_index("dim") < 0 || !args.given("dim")) return {};
  if (args.get("dim").kind() == Arg::Kind::Int) return {args.get_int("dim")};
  return args.get_ints("dim");
}

/// keepdim, false for overloads without one.
bool keepdim_of(const BoundArgs& args) {
  return args.schema->arg_index("keepdim") >= 0 && args.get_bool("keepdim");
}

Metas sum(const MetaInference& m, bool has_dim) {
  TensorMeta in = m.tensor("self");
  std::vector<Index> sizes = has_dim ? m.reduce_sizes("dim", in, m.arg("dim"), m.arg("keepdim").boolean())
                                     : m.reduce_sizes("self", in, Arg::none(), false);
  return one(sum_dtype(m, in.dtype), sizes);
}

Metas mean(const MetaInference& m, bool has_dim) {
  TensorMeta in = m.tensor("self");
  DType t = m.given("dtype") ? m.arg("dtype").dtype() : in.dtype;
  if (!is_floating(t)) {
    m.fail(m.given("dtype") ? "dtype" : "self", "mean needs a floating-point result dtype, got " +
                                                    std::string(dtype_name(t)) +
                                                    (m.given("dtype") ? "" : " (pass dtype= for integer input)"));
  }
  std::vector<Index> sizes = has_dim ? m.reduce_sizes("dim", in, m.arg("dim"), m.arg("keepdim").boolean())
                                     : m.reduce_sizes("self", in, Arg::none(), false);
  return one(t, sizes);
}

Metas amax_amin(const MetaInference& m) {
  TensorMeta in = m.tensor("self");
  return one(in.dtype, m.reduce_sizes("dim", in, m.arg("dim"), m.arg("keepdim").boolean()));
}

Metas var(const MetaInference& m, bool with_mean) {
  TensorMeta in = m.tensor("self");
  m.require_floating("self", in.dtype, "var");
  std::vector<Index> sizes = m.reduce_sizes("dim", in, m.arg("dim"), m.arg("keepdim").boolean());
  Metas out = one(in.dtype, sizes);
  if (with_mean) out.push_back(out[0]);
  return out;
}

Metas reduce_one_dim(const MetaInference& m, DType values, std::optional<DType> indices) {
  TensorMeta in = m.tensor("self");
  Metas out = one(values, m.reduce_sizes("dim", in, Arg::of(std::vector<Index>{m.arg("dim").integer()}),
                                         m.arg("keepdim").boolean()));
  if (indices) out.push_back(TensorMeta::contiguous(*indices, out[0].sizes));
  return out;
}

Metas arg_reduce(const MetaInference& m) {
  TensorMeta in = m.tensor("self");
  const Arg& dim = m.arg("dim");
  if (dim.is_none()) {
    std::vector<Index> sizes(m.arg("keepdim").boolean() ? static_cast<size_t>(in.rank()) : 0, Index(1));
    return one(DType::Int64, sizes);
  }
  return one(DType::Int64,
             m.reduce_sizes("dim", in, Arg::of(std::vector<Index>{dim.integer()}), m.arg("keepdim").boolean()));
}

Metas reduce_all(const MetaInference& m, std::optional<DType> dtype) {
  TensorMeta in = m.tensor("self");
  return one(dtype.value_or(in.dtype), {});
}

Metas any_all(const MetaInference& m, bool has_dims) {
  TensorMeta in = m.tensor("self");
  DType t = in.dtype == DType::UInt8 ? DType::UInt8 : DType::Bool;
  if (!has_dims) return one(t, {});
  return one(t, m.reduce_sizes("dim", in, m.arg("dim"), m.arg("keepdim").boolean()));
}

Metas linalg_vector_norm(const MetaInference& m) {
  TensorMeta in = m.tensor("self");
  m.require_floating("self", in.dtype, "linalg_vector_norm");
  DType t = m.given("dtype") ? m.arg("dtype").dtype() : in.dtype;
  m.require_floating("dtype", t, "linalg_vector_norm");
  return one(t, m.reduce_sizes("dim", in, m.arg("dim"), m.arg("keepdim").boolean()));
}

std::vector<TensorValue> lower_sum(GraphLowering& L, const BoundArgs& args, bool mean) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor("self");
  std::vector<int64_t> dims = reduction_dims(args);
  bool keepdim = keepdim_of(args);
  DType acc = accumulate_type(mean ? m.dtype : self.dtype);
  if (is_floating(m.dtype)) acc = compute_type(m.dtype) == DType::Float64 ? DType::Float64 : acc;
  if (is_floating(m.dtype) && acc == DType::Int64) acc = compute_type(m.dtype);
  TensorValue total = L.reduce(self, dims, keepdim, ReduceOp::Sum, acc);
  if (!mean) {
    return {L.make(m.dtype, m.sizes, {&total},
                   [&](const std::vector<Index>& c) { return Expr::cast(L.at(total, c), m.dtype); })};
  }
  Index count = Index(1);
  std::vector<int64_t> wrapped = dims;
  if (wrapped.empty())
    for (int64_t d = 0; d < self.rank(); ++d) wrapped.push_back(d);
  std::set<int64_t> seen;
  for (int64_t d : wrapped)
    if (self.rank() > 0 && seen.insert(L.wrap_dim(d, self.rank())).second)
      count = count * self.sizes[L.wrap_dim(d, self.rank())];
  return {L.make(m.dtype, m.sizes, {&total}, [&](const std::vector<Index>& c) {
    Expr v = L.at(total, c);
    return Expr::cast(Expr::binary(BinaryOp::Div, v, count_value(count, acc), acc), m.dtype);
  })};
}

std::vector<TensorValue> lower_minmax(GraphLowering& L, const BoundArgs& args, ReduceOp op) {
  TensorValue self = L.tensor("self");
  TensorValue r = L.reduce(self, reduction_dims(args), keepdim_of(args), op, self.dtype);
  return {r};
}

/// var (and var_mean's mean) or, with `root`, std: the square root is taken of the variance as accumulated (float for
/// 16-bit inputs) and rounded to the result dtype once, as eager's kernels do; rounding the variance first and then
/// its root would round twice.
std::vector<TensorValue> lower_var(GraphLowering& L, const BoundArgs& args, bool with_mean, bool root = false) {
  TensorValue self = L.tensor("self");
  std::vector<int64_t> dims = reduction_dims(args);
  if (dims.empty())
    for (int64_t d = 0; d < self.rank(); ++d) dims.push_back(d);
  // correction=None is Bessel's correction, 1.
  double correction = args.optional_float("correction").value_or(1.0);
  bool keepdim = keepdim_of(args);
  Moments mo = moments(L, self, dims, correction);
  const TensorMeta& m = L.out_meta(0);
  if (!keepdim && m.sizes.size() == self.sizes.size() && !dims.empty()) L.fail("keepdim=False but meta keeps dims");
  std::vector<TensorValue> out;
  TensorValue var = squeeze_dims(L, mo.variance, m.sizes, dims);
  out.push_back(L.make(m.dtype, m.sizes, {&var}, [&](const std::vector<Index>& c) {
    Expr v = L.at(var, c);
    return Expr::cast(root ? Expr::unary(UnaryOp::Sqrt, v) : v, m.dtype);
  }));
  if (with_mean) {
    const TensorMeta& mm = L.out_meta(1);
    TensorValue mean = squeeze_dims(L, mo.mean, mm.sizes, dims);
    out.push_back(L.make(mm.dtype, mm.sizes, {&mean},
                         [&](const std::vector<Index>& c) { return Expr::cast(L.at(mean, c), mm.dtype); }));
  }
  return out;
}

/// prod.dim_int / prod.default, honouring dtype=.
std::vector<TensorValue> lower_prod(GraphLowering& L, const BoundArgs& args) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor("self");
  std::vector<int64_t> dims = reduction_dims(args);
  bool keepdim = keepdim_of(args);
  DType acc = accumulate_type(m.dtype);
  TensorValue total = L.reduce(self, dims, keepdim, ReduceOp::Prod, acc);
  return {L.make(m.dtype, m.sizes, {&total},
                 [&](const std::vector<Index>& c) { return Expr::cast(L.at(total, c), m.dtype); })};
}

/// any / all over one dim, a list of dims, or everything.
std::vector<TensorValue> lower_any_all(GraphLowering& L, const BoundArgs& args, ReduceOp op) {
  TensorValue self = L.tensor("self");
  std::vector<int64_t> dims = reduction_dims(args);
  bool keepdim = keepdim_of(args);
  if (self.rank() == 0) keepdim = false;
  return {L.reduce(self, dims, keepdim, op, DType::Bool)};
}

/// argmax / argmin; dim None reduces the flattened tensor.
std::vector<TensorValue> lower_arg_extreme(GraphLowering& L, const BoundArgs& args, ReduceOp op) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor("self");
  bool keepdim = keepdim_of(args);
  std::vector<int64_t> dims = reduction_dims(args);
  TensorValue r = L.reduce(self, dims, keepdim && !dims.empty(), op, extreme_type(self.dtype));
  if (r.sizes.size() == m.sizes.size()) return {r};
  return {L.remap(r, m.sizes, [](const std::vector<Index>&) { return std::vector<Index>{}; })};  // keepdim, dim None
}

/// max.dim / min.dim: (values, indices); max.default / min.default: the extreme of everything.
std::vector<TensorValue> lower_extreme(GraphLowering& L, const BoundArgs& args, bool is_max) {
  TensorValue self = L.tensor("self");
  const bool with_dim = args.schema->arg_index("dim") >= 0;
  std::vector<int64_t> dims = reduction_dims(args);
  bool keepdim = keepdim_of(args) && self.rank() > 0;
  DType t = extreme_type(self.dtype);
  TensorValue values = L.reduce(self, dims, keepdim, is_max ? ReduceOp::Max : ReduceOp::Min, t);
  const TensorMeta& m = L.out_meta(0);
  TensorValue v = L.make(m.dtype, m.sizes, {&values},
                         [&](const std::vector<Index>& c) { return Expr::cast(L.at(values, c), m.dtype); });
  if (!with_dim) return {v};
  return {v, L.reduce(self, dims, keepdim, is_max ? ReduceOp::ArgMax : ReduceOp::ArgMin, t)};
}

/// linalg_vector_norm: ord 2 (sqrt of the sum of squares), 1, inf / -inf (max / min of |x|), 0 (count of non-zeros)
/// and any other p (sum(|x|^p)^(1/p)), accumulated in float (double for float64 results).
std::vector<TensorValue> lower_vector_norm(GraphLowering& L, const BoundArgs& args) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor("self");
  double ord = args.get_float("ord");
  std::vector<int64_t> dims = reduction_dims(args);
  bool keepdim = keepdim_of(args);
  DType acc = compute_type(m.dtype);
  if (self.dtype != m.dtype) {  // dtype=: the input is converted first
    TensorValue in = self;
    self =
        L.make(m.dtype, in.sizes, {&in}, [&](const std::vector<Index>& c) { return Expr::cast(L.at(in, c), m.dtype); });
  }
  auto abs_of = [](const Expr& v) { return Expr::unary(UnaryOp::Abs, v); };
  std::function<Expr(const Expr&)> finish = [](const Expr& v) { return v; };
  TensorValue r;
  if (std::isinf(ord)) {
    r = L.reduce(self, dims, keepdim, ord > 0 ? ReduceOp::Max : ReduceOp::Min, acc, abs_of);
  } else if (ord == 0) {
    r = L.reduce(self, dims, keepdim, ReduceOp::Sum, acc, [&](const Expr& v) {
      return Expr::cast(Expr::binary(BinaryOp::Ne, v, Expr::constant(0, acc), DType::Bool), acc);
    });
  } else if (ord == 1) {
    r = L.reduce(self, dims, keepdim, ReduceOp::Sum, acc, abs_of);
  } else if (ord == 2) {
    r = L.reduce(self, dims, keepdim, ReduceOp::Sum, acc,
                 [&](const Expr& v) { return Expr::binary(BinaryOp::Mul, v, v, acc); });
    finish = [](const Expr& v) { return Expr::unary(UnaryOp::Sqrt, v); };
  } else {
    r = L.reduce(self, dims, keepdim, ReduceOp::Sum, acc, [&](const Expr& v) {
      return Expr::binary(BinaryOp::Pow, Expr::unary(UnaryOp::Abs, v), Expr::constant(ord, acc), acc);
    });
    finish = [&, acc](const Expr& v) { return Expr::binary(BinaryOp::Pow, v, Expr::constant(1.0 / ord, acc), acc); };
  }
  return {L.make(m.dtype, m.sizes, {&r},
                 [&](const std::vector<Index>& c) { return Expr::cast(finish(L.at(r, c)), m.dtype); })};
}

}  // namespace

void register_reduction_ops(OpTable& t) {
  t.lowered(
      "aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
      [](const MetaInference& m) { return sum(m, true); },
      [](GraphLowering& L, const BoundArgs& a) { return lower_sum(L, a, false); });
  t.lowered(
      "aten::sum(Tensor self, *, ScalarType? dtype=None) -> Tensor",
      [](const MetaInference& m) { return sum(m, false); },
      [](GraphLowering& L, const BoundArgs& a) { return lower_sum(L, a, false); });
  t.lowered(
      "aten::mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
      [](const MetaInference& m) { return mean(m, true); },
      [](GraphLowering& L, const BoundArgs& a) { return lower_sum(L, a, true); });
  t.lowered(
      "aten::mean(Tensor self, *, ScalarType? dtype=None) -> Tensor",
      [](const MetaInference& m) { return mean(m, false); },
      [](GraphLowering& L, const BoundArgs& a) { return lower_sum(L, a, true); });
  t.lowered(
      "aten::prod.dim_int(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
      [](const MetaInference& m) { return reduce_one_dim(m, sum_dtype(m, m.tensor("self").dtype), std::nullopt); },
      lower_prod);
  t.lowered(
      "aten::amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor",
      amax_amin,
      [](GraphLowering& L, const BoundArgs& a) { return lower_minmax(L, a, ReduceOp::Max); });
  t.lowered(
      "aten::prod(Tensor self, *, ScalarType? dtype=None) -> Tensor",
      [](const MetaInference& m) { return reduce_all(m, sum_dtype(m, m.tensor("self").dtype)); }, lower_prod);
  t.lowered(
      "aten::max(Tensor self) -> Tensor", [](const MetaInference& m) { return reduce_all(m, std::nullopt); },
      [](GraphLowering& L, const BoundArgs& a) { return lower_extreme(L, a, true); });
  t.lowered(
      "aten::min(Tensor self) -> Tensor", [](const MetaInference& m) { return reduce_all(m, std::nullopt); },
      [](GraphLowering& L, const BoundArgs& a) { return lower_extreme(L, a, false); });
  t.lowered(
      "aten::any(Tensor self) -> Tensor", [](const MetaInference& m) { return any_all(m, false); },
      [](GraphLowering& L, const BoundArgs& a) { return lower_any_all(L, a, ReduceOp::Any); });
  t.lowered(
      "aten::any.dims(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor",
      [](const MetaInference& m) { return any_all(m, true); },
      [](GraphLowering& L, const BoundArgs& a) { return lower_any_all(L, a, ReduceOp::Any); });
  t.lowered(
      "aten::all(Tensor self) -> Tensor", [](const MetaInference& m) { return any_all(m, false); },
      [](GraphLowering& L, const BoundArgs& a) { return lower_any_all(L, a, ReduceOp::All); });
  t.lowered(
      "aten::amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor",
      amax_amin,
      [](GraphLowering& L, const BoundArgs& a) { return lower_minmax(L, a, ReduceOp::Min); });
  t.lowered(
      "aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
      [](const MetaInference& m) { return reduce_one_dim(m, m.tensor("self").dtype, DType::Int64); },
      [](GraphLowering& L, const BoundArgs& a) { return lower_extreme(L, a, true); });
  t.lowered(
      "aten::min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
      [](const MetaInference& m) { return reduce_one_dim(m, m.tensor("self").dtype, DType::Int64); },
      [](GraphLowering& L, const BoundArgs& a) { return lower_extreme(L, a, false); });
  t.lowered(
      "aten::argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",
      arg_reduce,
      [](GraphLowering& L, const BoundArgs& a) { return lower_arg_extreme(L, a, ReduceOp::ArgMax); });
  t.lowered(
      "aten::argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",
      arg_reduce,
      [](GraphLowering& L, const BoundArgs& a) { return lower_arg_extreme(L, a, ReduceOp::ArgMin); });
  t.lowered(
      "aten::any.dim(Tensor self, int dim, bool keepdim=False) -> Tensor",
      [](const MetaInference& m) {
        return reduce_one_dim(m, m.tensor("self").dtype == DType::UInt8 ? DType::UInt8 : DType::Bool, std::nullopt);
      },
      [](GraphLowering& L, const BoundArgs& a) { return lower_any_all(L, a, ReduceOp::Any); });
  t.lowered(
      "aten::all.dim(Tensor self, int dim, bool keepdim=False) -> Tensor",
      [](const MetaInference& m) {
        return reduce_one_dim(m, m.tensor("self").dtype == DType::UInt8 ? DType::UInt8 : DType::Bool, std::nullopt);
      },
      [](GraphLowering& L, const BoundArgs& a) { return lower_any_all(L, a, ReduceOp::All); });
  t.lowered(
      "aten::var.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> "
      "Tensor",
      [](const MetaInference& m) { return var(m, false); },
      [](GraphLowering& L, const BoundArgs& a) { return lower_var(L, a, false); });
  t.lowered(
      "aten::std.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> "
      "Tensor",
      [](const MetaInference& m) { return var(m, false); },
      [](GraphLowering& L, const BoundArgs& a) { return lower_var(L, a, false, true); });
  t.lowered(
      "aten::var_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> "
      "(Tensor, Tensor)",
      [](const MetaInference& m) { return var(m, true); },
      [](GraphLowering& L, const BoundArgs& a) { return lower_var(L, a, true); });
  t.lowered(
      "aten::linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, "
      "ScalarType? dtype=None) -> Tensor",
      linalg_vector_norm, lower_vector_norm);
}

}  // namespace hi
