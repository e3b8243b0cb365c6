// Scans along one dim: cumsum, cumprod, cummax, cummin, logcumsumexp. Each is a scan computation
// (GraphLowering::scan): linear in the data, a Scan kernel of its own.

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

/// The element of `self` at position `s` of output element x's line along `dim`, as `type`.
Expr along(GraphLowering& L, const TensorValue& self, int64_t dim, const std::vector<Index>& x, const Index& s,
           DType type) {
  std::vector<Index> in = x;
  in[dim] = s;
  return Expr::cast(L.at(self, in), type);
}

/// cumsum / cumprod along `dim`: one scan, accumulating in the output dtype's accumulation type and stored in the
/// output dtype (each element rounded once, as eager).
std::vector<TensorValue> lower_scan(GraphLowering& L, const BoundArgs& args, ReduceOp op) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor("self");
  if (self.rank() == 0) return lower_convert(L);
  int64_t dim = L.wrap_dim(args.get_int("dim"), self.rank());
  DType acc = accumulate_type(m.dtype);
  return {L.scan(m.sizes, dim, m.dtype, {&self}, [&](const std::vector<Index>& x, const Index& s) {
    return Expr::reduce(op, Expr::cast(along(L, self, dim, x, s, m.dtype), acc));
  })};
}

/// cummax / cummin: the running extreme is a scan (NaN propagating), and its index another one: the last position
/// j <= i whose element is the running extreme at j (a new extreme, or a tie with the one before, as eager's >= /
/// <= keeps the last; a NaN there: the last NaN so far, as eager keeps it).
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
  TensorValue peak = L.scan(m.sizes, dim, m.dtype, {&self}, [&](const std::vector<Index>& x, const Index& s) {
    return Expr::reduce(is_max ? ReduceOp::Max : ReduceOp::Min, along(L, self, dim, x, s, t));
  });
  TensorValue where_at = L.scan(mi.sizes, dim, mi.dtype, {&self, &peak}, [&](const std::vector<Index>& x, const Index& s) {
    Expr v = along(L, self, dim, x, s, t), p = along(L, peak, dim, x, s, t);
    Expr hit = Expr::binary(BinaryOp::Eq, v, p, DType::Bool);
    if (is_floating(t)) {
      Expr both_nan = Expr::binary(BinaryOp::LogicalAnd, Expr::unary(UnaryOp::IsNan, v),
                                   Expr::unary(UnaryOp::IsNan, p), DType::Bool);
      hit = Expr::binary(BinaryOp::LogicalOr, hit, both_nan, DType::Bool);
    }
    return Expr::reduce(ReduceOp::Max,
                        Expr::where(hit, Expr::index_value(s, DType::Int64), Expr::constant(-1, DType::Int64)));
  });
  return {peak, where_at};
}

/// logcumsumexp along `dim`: one scan whose step is log(exp(a) + exp(b)) (ReduceOp::LogAddExp), in the compute
/// type.
std::vector<TensorValue> lower_logcumsumexp(GraphLowering& L, const BoundArgs& args) {
  TensorValue self = L.tensor("self");
  const TensorMeta& m = L.out_meta();
  if (self.rank() == 0) return lower_convert(L);
  int64_t dim = L.wrap_dim(args.get_int("dim"), self.rank());
  DType t = compute_type(m.dtype);
  return {L.scan(m.sizes, dim, m.dtype, {&self}, [&](const std::vector<Index>& x, const Index& s) {
    return Expr::reduce(ReduceOp::LogAddExp, along(L, self, dim, x, s, t));
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
