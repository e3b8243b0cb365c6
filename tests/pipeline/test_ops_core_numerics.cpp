// Numerical coverage of the core ATen ops beyond the first cut: pointwise (integer division semantics, bitwise,
// trigonometry), reductions (prod, any/all, argmax/argmin with ties and NaN, max/min with indices, cumsum), layout ops
// (slice, select, cat, constant_pad_nd, flip, repeat), indirect loads (embedding, index_select, gather, index.Tensor)
// and factories. Graphs are built with metas inferred by op_schema (what the JSON reader does), compiled for the cpu
// device at warp widths 32 and 64, and compared with the reference interpreter. Index tensors are derived inside the
// graph from the random int inputs (remainder / fmod) so they are in range, negative ones included where PyTorch
// wraps them.
#include <gtest/gtest.h>

#include "ir/op_schema.h"
#include "lowering/lower_graph.h"
#include "lowering/op_registry.h"
#include "run_on_cpu.h"

namespace hi {
namespace {

/// Builds a graph whose call metas come from infer_meta.
class Builder {
 public:
  ValueRef input(const std::string& name, DType dtype, std::vector<int64_t> sizes) {
    Node n;
    n.name = name;
    n.kind = NodeKind::Placeholder;
    std::vector<Index> s;
    for (int64_t v : sizes) s.emplace_back(v);
    n.outputs.push_back(TensorMeta::contiguous(dtype, s));
    return add(std::move(n));
  }
  ValueRef call(const std::string& target, std::vector<Arg> args, std::vector<std::pair<std::string, Arg>> kwargs = {}) {
    Node n;
    n.name = "n" + std::to_string(g_.nodes.size());
    n.target = target;
    n.args = std::move(args);
    n.kwargs = std::move(kwargs);
    n.outputs = infer_meta(g_, n);
    return add(std::move(n));
  }
  /// Output `i` of a multi-output call.
  static ValueRef nth(ValueRef r, int i) { return ValueRef{r.node, i}; }
  void output(ValueRef v) { g_.outputs.push_back(v); }
  const Graph& graph() const { return g_; }

 private:
  ValueRef add(Node n) {
    g_.nodes.push_back(std::move(n));
    return ValueRef{static_cast<int>(g_.nodes.size()) - 1, 0};
  }
  Graph g_;
};

Arg t(ValueRef v) { return Arg::of(v); }
Arg i(int64_t v) { return Arg::of(v); }
Arg f(double v) { return Arg::of(v); }
Arg b(bool v) { return Arg::of(v); }
Arg s(const std::string& v) { return Arg::of(v); }
Arg dt(DType d) { return Arg::of(d); }
Arg ints(std::vector<int64_t> v) {
  std::vector<Index> r;
  for (int64_t x : v) r.emplace_back(x);
  return Arg::of(r);
}
Arg tensors(std::vector<std::optional<ValueRef>> v) { return Arg{std::move(v)}; }

void check(const Builder& g, const std::string& target, double rtol = 1e-5, double atol = 1e-6) {
  test::expect_matches(test::run_on_cpu(g.graph(), target), rtol, atol);
}

class CoreOps : public ::testing::TestWithParam<std::string> {};

TEST_P(CoreOps, FloatPointwise) {
  Builder g;
  ValueRef x = g.input("x", DType::Float32, {6, 33});
  ValueRef y = g.input("y", DType::Float32, {6, 33});
  ValueRef ypos = g.call("aten.add.Tensor", {t(g.call("aten.abs.default", {t(y)})), f(0.5)});
  ValueRef yneg = g.call("aten.neg.default", {t(ypos)});
  g.output(g.call("aten.fmod.Tensor", {t(x), t(yneg)}));
  g.output(g.call("aten.fmod.Scalar", {t(x), f(0.7)}));
  g.output(g.call("aten.remainder.Tensor", {t(x), t(yneg)}));
  g.output(g.call("aten.remainder.Scalar", {t(x), f(0.7)}));
  g.output(g.call("aten.div.Tensor_mode", {t(x), t(yneg)}, {{"rounding_mode", s("floor")}}));
  g.output(g.call("aten.div.Tensor_mode", {t(x), t(ypos)}, {{"rounding_mode", s("trunc")}}));
  g.output(g.call("aten.div.Scalar_mode", {t(x), f(0.3)}, {{"rounding_mode", s("floor")}}));
  g.output(g.call("aten.pow.Scalar", {f(2.5), t(x)}));
  g.output(g.call("aten.atan2.default", {t(x), t(y)}));
  g.output(g.call("aten.hypot.default", {t(x), t(y)}));
  ValueRef half = g.call("aten.mul.Tensor", {t(x), f(0.45)});
  for (const char* op : {"aten.tan.default", "aten.atan.default", "aten.asin.default", "aten.acos.default",
                         "aten.sinh.default", "aten.cosh.default", "aten.asinh.default", "aten.atanh.default",
                         "aten.erfc.default", "aten.round.default"})
    g.output(g.call(op, {t(half)}));
  g.output(g.call("aten.acosh.default", {t(ypos)}));
  g.output(g.call("aten.log10.default", {t(ypos)}));
  g.output(g.call("aten.round.decimals", {t(x)}, {{"decimals", i(2)}}));
  g.output(g.call("aten.round.decimals", {t(x)}, {{"decimals", i(0)}}));
  g.output(g.call("aten.rsub.Scalar", {t(x), f(1.0)}));
  g.output(g.call("aten.rsub.Tensor", {t(x), t(y)}, {{"alpha", f(2.0)}}));
  g.output(g.call("aten.leaky_relu.default", {t(x), f(0.1)}));
  g.output(g.call("aten.hardtanh.default", {t(x), f(-0.5), f(0.75)}));
  // elu (core ATen on recent PyTorch) and its backward from the input and from the result; `1 - x` as a Python
  // decomposition traces it (logit's): sub.Tensor with a number for self.
  ValueRef inf0 = g.call("aten.mul.Tensor", {t(x), f(0.0)});  // +-0.0 by x's sign
  ValueRef elu = g.call("aten.elu.default", {t(x), f(0.7), f(1.5), f(0.5)});
  g.output(elu);
  g.output(g.call("aten.elu_backward.default", {t(y), f(0.7), f(1.5), f(0.5), b(false), t(x)}));
  g.output(g.call("aten.elu_backward.default", {t(y), f(0.7), f(1.5), f(0.5), b(true), t(elu)}));
  g.output(g.call("aten.sub.Tensor", {f(1.0), t(x)}));
  g.output(g.call("aten.signbit.default", {t(g.call("aten.neg.default", {t(inf0)}))}));
  g.output(g.call("aten.signbit.default", {t(x)}));
  // polygamma: the Hurwitz zeta for n >= 2 (negative x too); trigamma's series (n = 1) over positive x, since near
  // its poles eager's float reflection (which it follows) is coarser than the reference; special_zeta.
  for (int64_t n : {2, 3})
    g.output(g.call("aten.polygamma.default", {i(n), t(g.call("aten.mul.Tensor", {t(x), f(3.0)}))}));
  g.output(g.call("aten.polygamma.default", {i(1), t(g.call("aten.mul.Tensor", {t(ypos), f(3.0)}))}));
  g.output(g.call("aten.special_zeta.default", {t(g.call("aten.add.Tensor", {t(ypos), f(1.2)})), t(x)}));
  // bucketize / searchsorted over sorted rows (cumulative sums): ties (the rows themselves), NaN values, left and
  // right, int32, batched rows, a number.
  ValueRef rows = g.call("aten.cumsum.default", {t(ypos), i(1)});
  ValueRef row0 = g.call("aten.select.int", {t(rows), i(0), i(0)});
  ValueRef wide = g.call("aten.mul.Tensor", {t(x), f(10.0)});
  g.output(g.call("aten.bucketize.Tensor", {t(wide), t(row0)}, {{"out_int32", b(true)}, {"right", b(true)}}));
  g.output(g.call("aten.bucketize.Tensor", {t(g.call("aten.log.default", {t(x)})), t(row0)}));
  g.output(g.call("aten.searchsorted.Tensor", {t(rows), t(rows)}));
  g.output(g.call("aten.searchsorted.Tensor", {t(rows), t(rows)}, {{"side", s("right")}}));
  g.output(g.call("aten.searchsorted.Tensor", {t(rows), t(wide)}));
  g.output(g.call("aten.searchsorted.Scalar", {t(row0), f(3.5)}));
  g.output(g.call("aten.special_zeta.other_scalar", {t(g.call("aten.add.Tensor", {t(ypos), f(1.0)})), f(2.5)}));
  g.output(g.call("aten.angle.default", {t(x)}));
  g.output(g.call("aten.ldexp.Tensor",
                  {t(x), t(g.call("aten.round.default", {t(g.call("aten.mul.Tensor", {t(y), f(4.0)}))}))}));
  ValueRef gt = g.call("aten.gt.Scalar", {t(x), f(0.0)});
  ValueRef lt = g.call("aten.lt.Scalar", {t(y), f(0.5)});
  g.output(g.call("aten.logical_xor.default", {t(gt), t(lt)}));
  g.output(g.call("aten.where.ScalarSelf", {t(gt), f(-3.0), t(y)}));
  g.output(g.call("aten.where.ScalarOther", {t(gt), t(x), i(7)}));
  ValueRef inf = g.call("aten.div.Tensor", {t(x), t(g.call("aten.round.default", {t(y)}))});  // x/0 -> inf
  g.output(g.call("aten.isinf.default", {t(inf)}));
  g.output(g.call("aten.isnan.default", {t(inf)}));
  check(g, GetParam());
}

TEST_P(CoreOps, BFloat16Pointwise) {
  Builder g;
  ValueRef x = g.input("x", DType::BFloat16, {5, 40});
  ValueRef y = g.input("y", DType::BFloat16, {40});
  ValueRef ypos = g.call("aten.add.Tensor", {t(g.call("aten.abs.default", {t(y)})), f(0.5)});
  g.output(g.call("aten.remainder.Tensor", {t(x), t(ypos)}));
  g.output(g.call("aten.fmod.Scalar", {t(x), f(0.75)}));
  g.output(g.call("aten.div.Tensor_mode", {t(x), t(ypos)}, {{"rounding_mode", s("floor")}}));
  g.output(g.call("aten.atan2.default", {t(x), t(y)}));
  g.output(g.call("aten.tan.default", {t(g.call("aten.mul.Tensor", {t(x), f(0.5)}))}));
  g.output(g.call("aten.round.default", {t(g.call("aten.mul.Tensor", {t(x), f(3.0)}))}));
  g.output(g.call("aten.rsub.Scalar", {t(x), f(1.0)}));
  g.output(g.call("aten.leaky_relu.default", {t(x)}));
  check(g, GetParam(), 1e-2, 1e-2);
}

TEST_P(CoreOps, IntegerAndBoolPointwise) {
  Builder g;
  ValueRef a = g.input("a", DType::Int64, {3, 41});
  ValueRef bb = g.input("b", DType::Int64, {3, 41});
  ValueRef c = g.input("c", DType::Int32, {41});
  // Non-zero divisors of both signs.
  ValueRef d = g.call("aten.where.ScalarSelf", {t(g.call("aten.eq.Scalar", {t(bb), i(0)})), i(-3), t(bb)});
  g.output(g.call("aten.fmod.Tensor", {t(a), t(d)}));
  g.output(g.call("aten.remainder.Tensor", {t(a), t(d)}));
  g.output(g.call("aten.remainder.Scalar", {t(a), i(-5)}));
  g.output(g.call("aten.div.Tensor_mode", {t(a), t(d)}, {{"rounding_mode", s("floor")}}));
  g.output(g.call("aten.div.Tensor_mode", {t(a), t(d)}, {{"rounding_mode", s("trunc")}}));
  g.output(g.call("aten.div.Scalar_mode", {t(a), i(3)}, {{"rounding_mode", s("floor")}}));
  g.output(g.call("aten.bitwise_and.Tensor", {t(a), t(c)}));
  g.output(g.call("aten.bitwise_or.Scalar", {t(a), i(5)}));
  g.output(g.call("aten.bitwise_xor.Tensor", {t(a), t(bb)}));
  g.output(g.call("aten.bitwise_not.default", {t(c)}));
  g.output(g.call("aten.maximum.default", {t(a), t(c)}));
  g.output(g.call("aten.minimum.default", {t(a), t(bb)}));
  g.output(g.call("aten.abs.default", {t(c)}));
  g.output(g.call("aten.neg.default", {t(a)}));
  g.output(g.call("aten.sign.default", {t(a)}));
  g.output(g.call("aten.clamp.default", {t(a), i(-3), i(4)}));
  g.output(g.call("aten.rsub.Scalar", {t(a), i(10)}));
  g.output(g.call("aten.pow.Tensor_Scalar", {t(a), i(3)}));
  g.output(g.call("aten.isinf.default", {t(a)}));
  g.output(g.call("aten.round.default", {t(a)}));
  g.output(g.call("aten.atan2.default", {t(a), t(d)}));
  ValueRef p = g.call("aten.gt.Scalar", {t(a), i(0)});
  ValueRef q = g.call("aten.lt.Scalar", {t(bb), i(2)});
  g.output(g.call("aten.bitwise_and.Tensor", {t(p), t(q)}));
  g.output(g.call("aten.bitwise_xor.Tensor", {t(p), t(q)}));
  g.output(g.call("aten.bitwise_not.default", {t(p)}));
  g.output(g.call("aten.logical_xor.default", {t(a), t(bb)}));
  check(g, GetParam(), 1e-6, 1e-6);
}

TEST_P(CoreOps, Reductions) {
  Builder g;
  ValueRef x = g.input("x", DType::Float32, {7, 45});
  ValueRef n = g.input("n", DType::Int64, {5, 6, 9});
  ValueRef h = g.input("h", DType::BFloat16, {4, 70});
  ValueRef small = g.call("aten.add.Tensor", {t(g.call("aten.mul.Tensor", {t(x), f(0.25)})), f(1.0)});
  g.output(g.call("aten.prod.dim_int", {t(small), i(1)}));
  g.output(g.call("aten.prod.dim_int", {t(small), i(0), b(true)}));
  g.output(g.call("aten.prod.default", {t(g.call("aten.slice.Tensor", {t(small), i(1), i(0), i(8)}))}));
  g.output(g.call("aten.prod.dim_int", {t(g.call("aten.remainder.Scalar", {t(n), i(3)})), i(2)}));
  ValueRef pos = g.call("aten.gt.Scalar", {t(x), f(1.5)});
  g.output(g.call("aten.any.dim", {t(pos), i(1)}));
  g.output(g.call("aten.all.dim", {t(g.call("aten.gt.Scalar", {t(x), f(-1.9)})), i(0), b(true)}));
  g.output(g.call("aten.any.default", {t(pos)}));
  g.output(g.call("aten.all.default", {t(pos)}));
  g.output(g.call("aten.any.dims", {t(n), ints({0, 2})}));
  // argmax / argmin: float rows, integer ties (first index wins), flat, keepdim, non-last dims, NaN first.
  g.output(g.call("aten.argmax.default", {t(x), i(-1)}));
  g.output(g.call("aten.argmin.default", {t(x), i(0), b(true)}));
  g.output(g.call("aten.argmax.default", {t(x)}));
  g.output(g.call("aten.argmin.default", {t(n)}, {{"keepdim", b(true)}}));
  g.output(g.call("aten.argmax.default", {t(n), i(2)}));
  g.output(g.call("aten.argmin.default", {t(n), i(1)}));
  g.output(g.call("aten.argmax.default", {t(h), i(1)}));
  ValueRef nan = g.call("aten.log.default", {t(x)});  // NaN where x < 0
  g.output(g.call("aten.argmax.default", {t(nan), i(1)}));
  g.output(g.call("aten.argmin.default", {t(nan), i(1)}));
  ValueRef mx = g.call("aten.max.dim", {t(x), i(1)});
  g.output(Builder::nth(mx, 0));
  g.output(Builder::nth(mx, 1));
  ValueRef mn = g.call("aten.min.dim", {t(n), i(1), b(true)});
  g.output(Builder::nth(mn, 0));
  g.output(Builder::nth(mn, 1));
  ValueRef mh = g.call("aten.max.dim", {t(h), i(-1)});
  g.output(Builder::nth(mh, 0));
  g.output(Builder::nth(mh, 1));
  g.output(g.call("aten.max.default", {t(x)}));
  g.output(g.call("aten.min.default", {t(n)}));
  g.output(g.call("aten.sum.dim_IntList", {t(x), ints({1})}, {{"dtype", dt(DType::Float64)}}));
  g.output(g.call("aten.sum.dim_IntList", {t(n), ints({0})}, {{"dtype", dt(DType::Float32)}}));
  g.output(g.call("aten.std.correction", {t(x), ints({1})}));
  g.output(g.call("aten.cumsum.default", {t(x), i(1)}));
  g.output(g.call("aten.cumsum.default", {t(n), i(0)}));
  g.output(g.call("aten.cumprod.default", {t(small), i(0)}));
  // Running extremes: NaNs (the last NaN's index), integer ties (the last index), bf16, along dim 0 and 1.
  for (const ValueRef& v : {nan, n, h})
    for (const char* op : {"aten.cummax.default", "aten.cummin.default"}) {
      ValueRef c = g.call(op, {t(v), i(v.node == n.node ? 2 : 1)});
      g.output(Builder::nth(c, 0));
      g.output(Builder::nth(c, 1));
    }
  ValueRef c0 = g.call("aten.cummax.default", {t(x), i(0)});
  g.output(Builder::nth(c0, 0));
  g.output(Builder::nth(c0, 1));
  g.output(g.call("aten.logcumsumexp.default", {t(x), i(1)}));
  g.output(g.call("aten.logcumsumexp.default", {t(nan), i(0)}));
  g.output(g.call("aten.logcumsumexp.default", {t(g.call("aten.log.default", {t(pos)})), i(1)}));  // -inf, 0
  check(g, GetParam(), 1e-4, 1e-5);
}

TEST_P(CoreOps, LayoutOps) {
  Builder g;
  ValueRef x = g.input("x", DType::Float32, {6, 10, 7});
  ValueRef y = g.input("y", DType::Float32, {6, 3, 7});
  ValueRef k = g.input("k", DType::Int64, {6, 2, 7});
  ValueRef h = g.input("h", DType::BFloat16, {5, 9});
  g.output(g.call("aten.slice.Tensor", {t(x), i(1), i(1), i(9), i(3)}));
  g.output(g.call("aten.slice.Tensor", {t(x), i(2), i(-4), i(INT64_MAX)}));
  g.output(g.call("aten.slice.Tensor", {t(x), i(0), i(-100), i(-2)}));
  g.output(g.call("aten.select.int", {t(x), i(1), i(-3)}));
  g.output(g.call("aten.select.int", {t(x), i(2), i(0)}));
  g.output(g.call("aten.cat.default", {tensors({x, y, k}), i(1)}));
  g.output(g.call("aten.cat.default", {tensors({y, g.call("aten.exp.default", {t(y)})}), i(-1)}));
  g.output(g.call("aten.cat.default", {tensors({x, x})}));
  g.output(g.call("aten.constant_pad_nd.default", {t(x), ints({1, 2, 0, 3}), f(-1.5)}));
  g.output(g.call("aten.constant_pad_nd.default", {t(x), ints({-2, 1, 1, -3})}));
  g.output(g.call("aten.constant_pad_nd.default", {t(h), ints({2, 2}), f(0.25)}));
  g.output(g.call("aten.flip.default", {t(x), ints({0, -1})}));
  g.output(g.call("aten.repeat.default", {t(y), ints({2, 1, 3, 1})}));
  g.output(g.call("aten.repeat.default", {t(h), ints({2, 2})}));
  ValueRef part = g.call("aten.slice.Tensor", {t(x), i(1), i(1), i(9), i(3)});  // [6, 3, 7]
  g.output(g.call("aten.slice_scatter.default", {t(x), t(g.call("aten.neg.default", {t(part)})), i(1), i(1), i(9), i(3)}));
  g.output(g.call("aten.slice_scatter.default", {t(x), t(y), i(1), i(-3)}));
  ValueRef row = g.call("aten.slice.Tensor", {t(g.call("aten.select.int", {t(y), i(0), i(0)})), i(0), i(0), i(2)});
  g.output(g.call("aten.copy.default", {t(k), t(row)}));  // [2, 7] float broadcast into [6, 2, 7] int64
  // Views' copying twins, of an input and of a computed value.
  ValueRef ex = g.call("aten.exp.default", {t(x)});
  g.output(g.call("aten.permute_copy.default", {t(ex), ints({2, 0, 1})}));
  g.output(g.call("aten.view_copy.default", {t(x), ints({42, 10})}));
  g.output(g.call("aten.narrow_copy.default", {t(ex), i(1), i(-4), i(3)}));
  g.output(g.call("aten.as_strided_copy.default", {t(x), ints({3, 4}), ints({5, 2}), i(7)}));
  check(g, GetParam());
}

TEST_P(CoreOps, IndirectLoads) {
  Builder g;
  ValueRef w = g.input("w", DType::Float32, {10, 16});
  ValueRef raw = g.input("raw", DType::Int64, {3, 5});
  ValueRef x = g.input("x", DType::Float32, {6, 7, 8});
  ValueRef raw3 = g.input("raw3", DType::Int64, {6, 4, 8});
  ValueRef wb = g.input("wb", DType::BFloat16, {12, 9});
  ValueRef ids = g.call("aten.remainder.Scalar", {t(raw), i(10)});
  g.output(g.call("aten.embedding.default", {t(w), t(ids)}));
  // The weight computed in the graph (evaluated at the indexed rows), and bfloat16 storage.
  g.output(g.call("aten.embedding.default", {t(g.call("aten.tanh.default", {t(w)})), t(ids)}));
  g.output(g.call("aten.embedding.default", {t(wb), t(g.call("aten.remainder.Scalar", {t(raw), i(12)}))}));
  ValueRef sel = g.call("aten.remainder.Scalar", {t(g.call("aten.view.default", {t(raw), ints({15})})), i(7)});
  g.output(g.call("aten.index_select.default", {t(x), i(1), t(sel)}));
  g.output(g.call("aten.index_select.default",
                  {t(w), i(0), t(g.call("aten.remainder.Scalar", {t(g.call("aten.view.default", {t(raw), ints({15})})), i(10)}))}));
  ValueRef gi = g.call("aten.remainder.Scalar", {t(raw3), i(7)});
  g.output(g.call("aten.gather.default", {t(x), i(1), t(gi)}));
  g.output(g.call("aten.gather.default", {t(g.call("aten.exp.default", {t(x)})), i(1), t(gi)}));
  // index.Tensor: negative indices wrap (fmod keeps the sign), adjacent and separated indexed dims, broadcasting.
  ValueRef i1 = g.call("aten.fmod.Scalar", {t(raw), i(7)});                                       // [3, 5]
  ValueRef i2 = g.call("aten.fmod.Scalar", {t(g.call("aten.slice.Tensor", {t(raw), i(0), i(0), i(1)})), i(8)});  // [1, 5]
  ValueRef i0 = g.call("aten.remainder.Scalar", {t(g.call("aten.select.int", {t(raw), i(0), i(2)})), i(6)});   // [5]
  g.output(g.call("aten.index.Tensor", {t(x), tensors({std::nullopt, i1, i2})}));
  g.output(g.call("aten.index.Tensor", {t(x), tensors({i0, std::nullopt, i2})}));
  g.output(g.call("aten.index.Tensor", {t(x), tensors({i1})}));
  g.output(g.call("aten.index.Tensor", {t(x), tensors({std::nullopt, i0})}));
  // An indirect load feeding a reduction.
  g.output(g.call("aten.sum.dim_IntList", {t(g.call("aten.embedding.default", {t(w), t(ids)})), ints({-1})}));
  check(g, GetParam());
}

TEST_P(CoreOps, IndirectLoadsOfComputedValues) {
  Builder g;
  ValueRef x = g.input("x", DType::Float32, {6, 7, 8});
  ValueRef raw = g.input("raw", DType::Int64, {3, 5});
  ValueRef row = g.input("row", DType::Float32, {1, 1, 8});
  ValueRef logits = g.input("logits", DType::Float32, {5, 37});
  ValueRef target = g.input("target", DType::Int64, {5});
  // Cross entropy as AOTAutograd writes it: the log_softmax read at each row's target (ignore_index -100 for the
  // negative targets), never stored whole.
  ValueRef tgt = g.call("aten.where.ScalarOther", {t(g.call("aten.ge.Scalar", {t(target), i(0)})),
                                                   t(g.call("aten.remainder.Scalar", {t(target), i(37)})), i(-100)});
  ValueRef keep = g.call("aten.ne.Scalar", {t(tgt), i(-100)});
  ValueRef safe = g.call("aten.where.ScalarOther", {t(keep), t(tgt), i(0)});
  ValueRef lsm = g.call("aten._log_softmax.default", {t(logits), i(1), b(false)});
  ValueRef picked = g.call("aten.squeeze.dim", {t(g.call("aten.gather.default",
                                                       {t(lsm), i(1), t(g.call("aten.unsqueeze.default", {t(safe), i(1)}))})),
                                                i(1)});
  ValueRef losses = g.call("aten.where.ScalarOther", {t(keep), t(g.call("aten.neg.default", {t(picked)})), f(0.0)});
  ValueRef count = g.call("aten._to_copy.default", {t(g.call("aten.sum.default", {t(keep)}))},
                          {{"dtype", dt(DType::Float32)}});
  g.output(g.call("aten.div.Tensor", {t(g.call("aten.sum.default", {t(losses)})), t(count)}));
  // index.Tensor of a sum whose operands each reach one of the two indexed dims (their loads bind one index each),
  // and a gather of a value holding its own coordinate (iota: stored first, an index value cannot be indirect).
  ValueRef i0 = g.call("aten.remainder.Scalar", {t(g.call("aten.select.int", {t(raw), i(0), i(2)})), i(6)});  // [5]
  ValueRef i2 = g.call("aten.remainder.Scalar", {t(g.call("aten.select.int", {t(raw), i(0), i(1)})), i(8)});  // [5]
  ValueRef xr = g.call("aten.add.Tensor", {t(g.call("aten.exp.default", {t(x)})), t(row)});
  g.output(g.call("aten.index.Tensor", {t(xr), tensors({i0, std::nullopt, i2})}));
  ValueRef iota = g.call("aten.arange.start", {i(0), i(8)}, {{"dtype", dt(DType::Float32)}});
  ValueRef gi = g.call("aten.remainder.Scalar", {t(g.call("aten.view.default", {t(raw), ints({3, 5, 1})})), i(8)});
  ValueRef xi = g.call("aten.add.Tensor", {t(g.call("aten.slice.Tensor", {t(x), i(1), i(0), i(5)})), t(iota)});
  g.output(g.call("aten.gather.default", {t(g.call("aten.slice.Tensor", {t(xi), i(0), i(0), i(3)})), i(2), t(gi)}));
  check(g, GetParam());
}

TEST(IndirectLoads, CrossEntropyDoesNotStoreTheLogSoftmax) {
  Builder g;
  ValueRef logits = g.input("logits", DType::Float32, {64, 1000});
  ValueRef target = g.input("target", DType::Int64, {64});
  ValueRef lsm = g.call("aten._log_softmax.default", {t(logits), i(1), b(false)});
  ValueRef picked = g.call("aten.gather.default", {t(lsm), i(1), t(g.call("aten.unsqueeze.default", {t(target), i(1)}))});
  g.output(g.call("aten.neg.default", {t(g.call("aten.sum.default", {t(picked)}))}));
  LoopProgram p = lower_graph(g.graph());
  for (const Buffer& buf : p.buffers)
    EXPECT_FALSE(buf.kind == BufferKind::Intermediate && buf.sizes.size() == 2 && buf.sizes[1] == Index(1000))
        << buf.name << " holds the whole log_softmax:\n" << p.str();
}

TEST_P(CoreOps, IndirectAdds) {
  // scatter_add, index_add and index_put with accumulate: scatter kernels of atomic adds into a copy of self, with
  // duplicate positions (index values from a small range), negative ones where PyTorch wraps them (index_put),
  // computed operands, bf16 / int storage, and readers of the result after the adds.
  Builder g;
  ValueRef x = g.input("x", DType::Float32, {6, 7, 8});
  ValueRef raw = g.input("raw", DType::Int64, {6, 4, 9});
  ValueRef src = g.input("src", DType::Float32, {6, 5, 9});
  ValueRef xi = g.input("xi", DType::Int32, {6, 7, 8});
  ValueRef rows = g.input("rows", DType::Int64, {5});
  ValueRef s2 = g.input("s2", DType::Float32, {5, 7, 8});
  ValueRef si2 = g.input("si2", DType::Int32, {6, 7, 5});
  ValueRef si = g.call("aten.slice.Tensor", {t(raw), i(2), i(0), i(8)});  // [6, 4, 8], a strided view
  ValueRef idx = g.call("aten.remainder.Scalar", {t(si), i(3)});           // positions 0..2 of dim 1, hit often
  ValueRef s8 = g.call("aten.slice.Tensor", {t(src), i(2), i(0), i(8)});
  ValueRef sum = g.call("aten.scatter_add.default", {t(x), i(1), t(idx), t(s8)});
  g.output(sum);
  g.output(g.call("aten.mul.Scalar", {t(sum), f(2.0)}));  // a reader of the scattered buffer
  g.output(g.call("aten.scatter_add.default", {t(g.call("aten.exp.default", {t(x)})), i(-1),
                                               t(g.call("aten.remainder.Scalar", {t(si), i(8)})),
                                               t(g.call("aten.tanh.default", {t(s8)}))}));
  ValueRef r = g.call("aten.remainder.Scalar", {t(rows), i(3)});
  g.output(g.call("aten.index_add.default", {t(x), i(0), t(r), t(s2)}, {{"alpha", f(0.5)}}));
  g.output(g.call("aten.index_add.default", {t(xi), i(2), t(g.call("aten.remainder.Scalar", {t(rows), i(8)})), t(si2)}));
  ValueRef neg = g.call("aten.sub.Scalar", {t(g.call("aten.remainder.Scalar", {t(rows), i(4)})), i(2)});  // -2..1
  g.output(g.call("aten.index_put.default",
                  {t(x), tensors({neg}), t(g.call("aten.slice.Tensor", {t(s2), i(1), i(0), i(1)})), b(true)}));
  g.output(g.call("aten.index_put.default",
                  {t(x), tensors({std::nullopt, g.call("aten.remainder.Scalar", {t(rows), i(7)})}),
                   t(g.call("aten.full.default", {ints({8}), f(1.5)})), b(true)}));
  check(g, GetParam(), 1e-2, 1e-5);
  // bf16 storage: each atomic add rounds to bf16 (as eager's CUDA kernel's), the reference rounds the exact sum once,
  // so a few additions may differ by a few bf16 ulps.
  Builder h;
  ValueRef hb = h.input("xb", DType::BFloat16, {6, 7, 8});
  ValueRef hraw = h.input("raw", DType::Int64, {6, 4, 8});
  ValueRef hs = h.input("src", DType::BFloat16, {6, 4, 8});
  h.output(h.call("aten.scatter_add.default", {t(hb), i(1), t(h.call("aten.remainder.Scalar", {t(hraw), i(3)})), t(hs)}));
  check(h, GetParam(), 4e-2, 4e-2);
}

TEST_P(CoreOps, ScattersOfOnePositionPerLine) {
  // scatter of a value or of src's elements with index.size(dim) == 1: a selection per element against the
  // reference's writes in order, along the first and the last dim, into a computed self, read again after.
  Builder g;
  ValueRef x = g.input("x", DType::Float32, {6, 7, 8});
  ValueRef raw = g.input("raw", DType::Int64, {6, 7, 1});
  ValueRef raw0 = g.input("raw0", DType::Int64, {1, 7, 8});
  ValueRef src = g.input("src", DType::Float32, {6, 7, 8});
  ValueRef last = g.call("aten.remainder.Scalar", {t(raw), i(8)});
  ValueRef first = g.call("aten.remainder.Scalar", {t(raw0), i(6)});
  ValueRef ex = g.call("aten.exp.default", {t(x)});
  ValueRef filled = g.call("aten.scatter.value", {t(ex), i(-1), t(last), f(-1.0)});
  g.output(g.call("aten.mul.Scalar", {t(filled), f(2.0)}));
  g.output(g.call("aten.scatter.src", {t(x), i(0), t(first), t(src)}));
  check(g, GetParam(), 1e-5, 1e-5);
}

TEST_P(CoreOps, Factories) {
  Builder g;
  ValueRef x = g.input("x", DType::Float32, {4, 9});
  g.output(g.call("aten.arange.start_step", {f(0.5), i(10), f(1.5)}));
  g.output(g.call("aten.arange.start_step", {i(-3), i(40), i(4)}));
  g.output(g.call("aten.arange.default", {i(12)}));
  g.output(g.call("aten.arange.start", {i(2), i(9)}, {{"dtype", dt(DType::Float32)}}));
  g.output(g.call("prims.iota.default", {i(7)},
                  {{"start", i(3)}, {"step", i(2)}, {"dtype", dt(DType::Int64)}, {"device", s("cpu")},
                   {"requires_grad", b(false)}}));
  g.output(g.call("aten.full.default", {ints({3, 4}), f(2.5)}));
  g.output(g.call("aten.full.default", {ints({5}), i(7)}, {{"dtype", dt(DType::Int32)}}));
  g.output(g.call("aten.zeros.default", {ints({2, 3})}));
  g.output(g.call("aten.ones.default", {ints({2, 3})}, {{"dtype", dt(DType::Bool)}}));
  g.output(g.call("aten.scalar_tensor.default", {f(-4.25)}));
  g.output(g.call("aten.full_like.default", {t(x), f(3.0)}));
  // Factories feeding pointwise math: x + arange over the last dim.
  ValueRef r = g.call("aten.arange.start_step", {i(0), i(9), i(1)}, {{"dtype", dt(DType::Float32)}});
  g.output(g.call("aten.add.Tensor", {t(x), t(r)}));
  check(g, GetParam());
}

TEST_P(CoreOps, IntegerPowers) {
  // PyTorch's integer pow: exact by squaring and wrapping, and for tensor exponents below zero 1 (base 1), +-1
  // (base -1) or 0 (0 ** -5 was INT64_MIN, through a double pow's inf). Checked against written-out values, not only
  // the reference interpreter.
  Builder g;
  ValueRef base = g.call("aten.view.default", {t(g.call("aten.arange.start", {i(-3), i(4)})), ints({7, 1})});
  ValueRef exps = g.call("aten.view.default", {t(g.call("aten.arange.start", {i(-2), i(6)})), ints({1, 8})});
  g.output(g.call("aten.pow.Tensor_Tensor", {t(base), t(exps)}));
  g.output(g.call("aten.pow.Scalar", {i(2), t(exps)}));
  ValueRef three = g.call("aten.full.default", {ints({4}), i(3)}, {{"dtype", dt(DType::Int8)}});
  ValueRef odd = g.call("aten.arange.start_step", {i(1), i(9), i(2)}, {{"dtype", dt(DType::Int8)}});
  g.output(g.call("aten.pow.Tensor_Tensor", {t(three), t(odd)}));  // 3, 27, 243 -> -13, 2187 -> -117
  auto r = test::run_on_cpu(g.graph(), GetParam());
  test::expect_matches(r, 0, 0);
  ASSERT_EQ(r.actual.size(), 3u);
  auto powi = [](int64_t a, int64_t e) -> int64_t {
    if (e < 0) return a == 1 ? 1 : a == -1 ? (e % 2 ? -1 : 1) : 0;
    int64_t p = 1;
    while (e-- > 0) p *= a;
    return p;
  };
  for (int a = -3; a <= 3; ++a)
    for (int e = -2; e <= 5; ++e)
      EXPECT_EQ(r.actual[0].storage[(a + 3) * 8 + (e + 2)], static_cast<double>(powi(a, e))) << a << " ** " << e;
  for (int e = -2; e <= 5; ++e) EXPECT_EQ(r.actual[1].storage[e + 2], static_cast<double>(powi(2, e))) << e;
  EXPECT_EQ(r.actual[2].storage, (std::vector<double>{3, 27, -13, -117}));
}

TEST_P(CoreOps, Shifts) {
  // PyTorch's shifts: amounts below 0 or at least the bit width shift everything out (0 left; right, the sign fill:
  // arithmetic for signed types, one bit short of the width), left shifts wrap. Checked against written-out values
  // for int8, int32 and int64 and uint8, and against the reference interpreter for every overload.
  Builder g;
  ValueRef v = g.call("aten.arange.start", {i(-3), i(4)});  // int64 -3..3
  ValueRef vals = g.call("aten.view.default", {t(g.call("aten.mul.Scalar", {t(v), i(37)})), ints({7, 1})});
  ValueRef amounts = g.call("aten.view.default", {t(g.call("aten.arange.start", {i(-2), i(66)})), ints({1, 68})});
  g.output(g.call("aten.__lshift__.Tensor", {t(vals), t(amounts)}));
  g.output(g.call("aten.__rshift__.Tensor", {t(vals), t(amounts)}));
  for (DType d : {DType::Int8, DType::Int32, DType::UInt8}) {
    ValueRef x = g.call("aten._to_copy.default", {t(vals)}, {{"dtype", dt(d)}});
    ValueRef n = g.call("aten._to_copy.default", {t(amounts)}, {{"dtype", dt(d)}});
    g.output(g.call("aten.bitwise_left_shift.Tensor", {t(x), t(n)}));
    g.output(g.call("aten.bitwise_right_shift.Tensor", {t(x), t(n)}));
  }
  ValueRef x32 = g.call("aten._to_copy.default", {t(vals)}, {{"dtype", dt(DType::Int32)}});
  g.output(g.call("aten.__rshift__.Scalar", {t(x32), i(2)}));
  g.output(g.call("aten.__lshift__.Scalar", {t(x32), i(30)}));
  g.output(g.call("aten.bitwise_left_shift.Tensor_Scalar", {t(x32), i(40)}));
  g.output(g.call("aten.bitwise_right_shift.Scalar_Tensor", {i(-1000), t(amounts)}));
  g.output(g.call("aten.bitwise_left_shift.Scalar_Tensor", {i(3), t(amounts)}));
  auto r = test::run_on_cpu(g.graph(), GetParam());
  test::expect_matches(r, 0, 0);
  ASSERT_EQ(r.actual.size(), 13u);
  // The expected value of `a` shifted by `n` in a type of `bits` bits (signed or not), as PyTorch computes it.
  auto expect = [](int64_t a, int64_t n, int bits, bool is_signed, bool left) -> int64_t {
    auto wrap = [&](uint64_t u) -> int64_t {
      if (bits == 64) return static_cast<int64_t>(u);
      u &= (uint64_t{1} << bits) - 1;
      if (is_signed && (u >> (bits - 1))) return static_cast<int64_t>(u) - (int64_t{1} << bits);
      return static_cast<int64_t>(u);
    };
    a = wrap(static_cast<uint64_t>(a));
    n = wrap(static_cast<uint64_t>(n));
    if (left) return n < 0 || n >= bits ? 0 : wrap(static_cast<uint64_t>(a) << n);
    const int max_shift = bits - (is_signed ? 1 : 0);
    return a >> (n < 0 || n >= max_shift ? max_shift : n);
  };
  const struct {
    int bits;
    bool is_signed;
  } types[] = {{64, true}, {8, true}, {32, true}, {8, false}};
  for (int k = 0; k < 4; ++k)
    for (int a = -3; a <= 3; ++a)
      for (int n = -2; n < 66; ++n)
        for (int left = 0; left < 2; ++left)
          EXPECT_EQ(r.actual[2 * k + (1 - left)].storage[(a + 3) * 68 + (n + 2)],
                    static_cast<double>(expect(37 * a, n, types[k].bits, types[k].is_signed, left)))
              << types[k].bits << (types[k].is_signed ? "-bit signed " : "-bit unsigned ") << 37 * a
              << (left ? " << " : " >> ") << n;
  for (int a = -3; a <= 3; ++a) {
    EXPECT_EQ(r.actual[8].storage[a + 3], static_cast<double>((37 * a) >> 2));
    EXPECT_EQ(r.actual[9].storage[a + 3], static_cast<double>(expect(37 * a, 30, 32, true, true)));
    EXPECT_EQ(r.actual[10].storage[a + 3], 0.0);
  }
  for (int n = -2; n < 66; ++n) {
    EXPECT_EQ(r.actual[11].storage[n + 2], static_cast<double>(expect(-1000, n, 64, true, false))) << n;
    EXPECT_EQ(r.actual[12].storage[n + 2], static_cast<double>(expect(3, n, 64, true, true))) << n;
  }
}

INSTANTIATE_TEST_SUITE_P(WarpWidths, CoreOps, ::testing::Values("cpu", "cpu-w64"),
                         [](const auto& info) { return info.param == "cpu" ? std::string("w32") : std::string("w64"); });

}  // namespace
}  // namespace hi
