// Scans along one dim: cumsum, cumprod, cummax, cummin, logcumsumexp. Each output element is a masked reduction over
// the elements up to it (quadratic, but a plain reduction that every kernel shape handles).
#include <cmath>

#include "lowering/lowering_context.h"
#include "lowering/op_registry.h"

namespace hi {
namespace {

using lowering::accumulate_type;
using lowering::compute_type;
using lowering::GraphLowering;
using lowering::lower_convert;
using lowering::TensorValue;

/// cumsum / cumprod: integral inputs accumulate in int64 unless a dtype is given.
Metas scan_meta(const MetaInference& m) {
  TensorMeta in = m.tensor("self");
  m.wrap_dim("dim", m.int_arg("dim"), in.rank());
  return one(sum_dtype(m, in.dtype), in.sizes);
}

Metas cum_extreme_meta(const MetaInference& m) {
  TensorMeta in = m.tensor("self");
  m.wrap_dim("dim", m.int_arg("dim"), in.rank());
  return {TensorMeta::contiguous(in.dtype, in.sizes), TensorMeta::contiguous(DType::Int64, in.sizes)};
}

Metas logcumsumexp_meta(const MetaInference& m) {
  TensorMeta in = m.tensor("self");
  m.wrap_dim("dim", m.int_arg("dim"), in.rank());
  if (!is_floating(in.dtype)) m.fail("self", "logcumsumexp needs a floating-point tensor");
  return one(in.dtype, in.sizes);
}

/// cumsum / cumprod along `dim`: out[.., i, ..] reduces in[.., j, ..] over j <= i (quadratic, but a plain reduction
/// that every kernel shape handles).
std::vector<TensorValue> lower_scan(GraphLowering& L, const BoundArgs& args, ReduceOp op) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor("self");
  if (self.rank() == 0) return lower_convert(L);
  int64_t dim = L.wrap_dim(args.get_int("dim"), self.rank());
  DType acc = accumulate_type(m.dtype);
  TensorValue r =
      L.reduction(m.sizes, {self.sizes[dim]}, {&self}, [&](const std::vector<Index>& x, const std::vector<Index>& rv) {
        std::vector<Index> in = x;
        in[dim] = rv[0];
        Expr v = Expr::cast(Expr::cast(L.at(self, in), m.dtype), acc);
        Expr inside = Expr::binary(BinaryOp::Le, Expr::index_value(rv[0], DType::Int64),
                                   Expr::index_value(x[dim], DType::Int64), DType::Bool);
        Expr identity = Expr::constant(op == ReduceOp::Prod ? 1 : 0, acc);
        return Expr::reduce(op, Expr::where(inside, v, identity));
      });
  return {L.make(m.dtype, m.sizes, {&r}, [&](const std::vector<Index>& c) { return Expr::cast(L.at(r, c), m.dtype); })};
}

/// One dim of a scan's input, read at position j of the output element x's row: the element (as `type`) and
/// whether j lies at or before x's own position (the scan's mask).
struct ScanAlong {
  GraphLowering& L;
  const TensorValue& self;
  int64_t dim;
  DType type;

  Expr at(const std::vector<Index>& x, const Index& j) const {
    std::vector<Index> in = x;
    in[dim] = j;
    return Expr::cast(L.at(self, in), type);
  }
  Expr inside(const std::vector<Index>& x, const Index& j) const {
    return Expr::binary(BinaryOp::Le, Expr::index_value(j, DType::Int64), Expr::index_value(x[dim], DType::Int64),
                        DType::Bool);
  }
  /// The running max or min over j <= i: masked-out terms repeat the element at i (idempotent, so no identity is
  /// needed for any dtype), NaN propagating.
  TensorValue running(ReduceOp op, const std::vector<Index>& sizes) const {
    return L.reduction(sizes, {self.sizes[dim]}, {&self},
                       [&](const std::vector<Index>& x, const std::vector<Index>& rv) {
                         return Expr::reduce(op, Expr::where(inside(x, rv[0]), at(x, rv[0]), at(x, x[dim])));
                       });
  }
};

/// The running extreme along `dim` (cummax / cummin): out[.., i, ..] = max over j <= i (ScanAlong::running).
/// Indices as eager's scan keeps them: the last position holding the extreme (a NaN extreme: the last NaN so far).
std::vector<TensorValue> lower_cum_extreme(GraphLowering& L, const BoundArgs& args, bool is_max) {
  TensorValue self = L.tensor("self");
  const TensorMeta& m = L.out_meta(0);
  const TensorMeta& mi = L.out_meta(1);
  if (self.rank() == 0) {
    return {L.make(m.dtype, m.sizes, {&self},
                   [&](const std::vector<Index>& c) { return Expr::cast(L.at(self, c), m.dtype); }),
            L.make(mi.dtype, mi.sizes, {}, [&](const std::vector<Index>&) { return Expr::constant(0, mi.dtype); })};
  }
  int64_t dim = L.wrap_dim(args.get_int("dim"), self.rank());
  DType t = self.dtype == DType::Bool ? DType::Int32 : compute_type(self.dtype);
  const ScanAlong scan{L, self, dim, t};
  TensorValue peak = scan.running(is_max ? ReduceOp::Max : ReduceOp::Min, m.sizes);
  TensorValue where_at = L.reduction(
      mi.sizes, {self.sizes[dim]}, {&self, &peak}, [&](const std::vector<Index>& x, const std::vector<Index>& rv) {
        Expr v = scan.at(x, rv[0]), p = L.at(peak, x);
        Expr hit = Expr::binary(BinaryOp::Eq, v, p, DType::Bool);
        if (is_floating(t)) {
          Expr both_nan = Expr::binary(BinaryOp::LogicalAnd, Expr::unary(UnaryOp::IsNan, v),
                                       Expr::unary(UnaryOp::IsNan, p), DType::Bool);
          hit = Expr::binary(BinaryOp::LogicalOr, hit, both_nan, DType::Bool);
        }
        Expr take = Expr::binary(BinaryOp::LogicalAnd, scan.inside(x, rv[0]), hit, DType::Bool);
        return Expr::reduce(
            ReduceOp::Max, Expr::where(take, Expr::index_value(rv[0], DType::Int64), Expr::constant(-1, DType::Int64)));
      });
  return {L.make(m.dtype, m.sizes, {&peak},
                 [&](const std::vector<Index>& c) { return Expr::cast(L.at(peak, c), m.dtype); }),
          L.make(mi.dtype, mi.sizes, {&where_at},
                 [&](const std::vector<Index>& c) { return Expr::cast(L.at(where_at, c), mi.dtype); })};
}

/// logcumsumexp along `dim`: with M the running maximum, M + log(sum over j <= i of exp(x_j - M)); an infinite M is
/// the result (all -inf so far, or a +inf), a NaN propagates through M.
std::vector<TensorValue> lower_logcumsumexp(GraphLowering& L, const BoundArgs& args) {
  TensorValue self = L.tensor("self");
  const TensorMeta& m = L.out_meta();
  if (self.rank() == 0) return lower_convert(L);
  int64_t dim = L.wrap_dim(args.get_int("dim"), self.rank());
  DType t = compute_type(m.dtype);
  const ScanAlong scan{L, self, dim, t};
  TensorValue peak = scan.running(ReduceOp::Max, m.sizes);
  TensorValue total = L.reduction(
      m.sizes, {self.sizes[dim]}, {&self, &peak}, [&](const std::vector<Index>& x, const std::vector<Index>& rv) {
        Expr e = Expr::unary(UnaryOp::Exp, Expr::binary(BinaryOp::Sub, scan.at(x, rv[0]), L.at(peak, x), t));
        return Expr::reduce(ReduceOp::Sum, Expr::where(scan.inside(x, rv[0]), e, Expr::constant(0, t)));
      });
  return {L.make(m.dtype, m.sizes, {&peak, &total}, [&](const std::vector<Index>& c) {
    Expr p = L.at(peak, c);
    Expr v = Expr::binary(BinaryOp::Add, p, Expr::unary(UnaryOp::Log, L.at(total, c)), t);
    return Expr::cast(Expr::where(Expr::unary(UnaryOp::IsInf, p), p, v), m.dtype);
  })};
}

}  // namespace

void register_scan_ops(OpTable& t) {
  t.lowered("aten::cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor", scan_meta,
            [](GraphLowering& L, const BoundArgs& a) { return lower_scan(L, a, ReduceOp::Sum); });
  t.lowered("aten::cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor", scan_meta,
            [](GraphLowering& L, const BoundArgs& a) { return lower_scan(L, a, ReduceOp::Prod); });
  t.lowered("aten::cummax(Tensor self, int dim) -> (Tensor values, Tensor indices)", cum_extreme_meta,
            [](GraphLowering& L, const BoundArgs& a) { return lower_cum_extreme(L, a, true); });
  t.lowered("aten::cummin(Tensor self, int dim) -> (Tensor values, Tensor indices)", cum_extreme_meta,
            [](GraphLowering& L, const BoundArgs& a) { return lower_cum_extreme(L, a, false); });
  t.lowered("aten::logcumsumexp(Tensor self, int dim) -> Tensor", logcumsumexp_meta, lower_logcumsumexp);
}

}  // namespace hi
