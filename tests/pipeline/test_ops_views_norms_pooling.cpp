// Numerical coverage of views with several outputs, norms, pooling and special functions (ops the OpInfo sweep
// through torch.compile once sent to eager): linalg_vector_norm, the multi-output views (split_with_sizes, split,
// chunk, unbind), diagonal, as_strided of graph inputs, NaN-ignoring fmax/fmin, copysign, nextafter, lgamma, digamma,
// erfinv, native_group_norm and the batch norms AOTAutograd emits (_native_batch_norm_legit_no_training /
// _functional / .no_stats), 2-d pooling and its backward ops. Graphs are built with metas inferred by the op
// registry, compiled for the cpu device at warp widths 32 and 64 and compared with the reference interpreter.
#include <gtest/gtest.h>

#include <cmath>

#include "frontend/graph_json.h"
#include "ir/op_schema.h"
#include "lowering/op_registry.h"
#include "lowering/lower_graph.h"
#include "run_on_cpu.h"

namespace hi {
namespace {

/// Builds a graph whose call metas come from infer_meta (or are given, for device-specific metas).
class Builder {
 public:
  ValueRef input(const std::string& name, DType dtype, std::vector<int64_t> sizes, std::vector<int64_t> strides = {},
                 int64_t offset = 0) {
    Node n;
    n.name = name;
    n.kind = NodeKind::Placeholder;
    std::vector<Index> s;
    for (int64_t v : sizes) s.emplace_back(v);
    TensorMeta m = TensorMeta::contiguous(dtype, s);
    if (!strides.empty()) {
      m.strides.clear();
      for (int64_t v : strides) m.strides.emplace_back(v);
    }
    m.offset = Index(offset);
    n.outputs.push_back(std::move(m));
    return add(std::move(n));
  }
  ValueRef call(const std::string& target, std::vector<Arg> args, std::vector<std::pair<std::string, Arg>> kwargs = {}) {
    Node n = make(target, std::move(args), std::move(kwargs));
    n.outputs = infer_meta(g_, n);
    return add(std::move(n));
  }
  /// A call with the given output metas (contiguous).
  ValueRef call_with(const std::string& target, std::vector<Arg> args,
                     std::vector<std::pair<DType, std::vector<int64_t>>> outs) {
    Node n = make(target, std::move(args), {});
    for (auto& [dtype, sizes] : outs) {
      std::vector<Index> s;
      for (int64_t v : sizes) s.emplace_back(v);
      n.outputs.push_back(TensorMeta::contiguous(dtype, s));
    }
    return add(std::move(n));
  }
  size_t outputs_of(ValueRef r) const { return g_.nodes[r.node].outputs.size(); }
  static ValueRef nth(ValueRef r, int i) { return ValueRef{r.node, i}; }
  void output(ValueRef v) { g_.outputs.push_back(v); }
  /// Every output of a multi-output call.
  void output_all(ValueRef v) {
    for (size_t k = 0; k < outputs_of(v); ++k) output(nth(v, static_cast<int>(k)));
  }
  const Graph& graph() const { return g_; }

 private:
  Node make(const std::string& target, std::vector<Arg> args, std::vector<std::pair<std::string, Arg>> kwargs) {
    Node n;
    n.name = "n" + std::to_string(g_.nodes.size());
    n.target = target;
    n.args = std::move(args);
    n.kwargs = std::move(kwargs);
    return n;
  }
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
Arg dt(DType d) { return Arg::of(d); }
Arg none() { return Arg::none(); }
Arg ints(std::vector<int64_t> v) {
  std::vector<Index> r;
  for (int64_t x : v) r.emplace_back(x);
  return Arg::of(r);
}

void check(const Builder& g, const std::string& target, double rtol = 1e-5, double atol = 1e-6) {
  test::expect_matches(test::run_on_cpu(g.graph(), target), rtol, atol);
}

class ViewsNormsPoolingOps : public ::testing::TestWithParam<std::string> {};

TEST_P(ViewsNormsPoolingOps, VectorNorm) {
  Builder g;
  ValueRef x = g.input("x", DType::Float32, {6, 33});
  ValueRef x3 = g.input("x3", DType::Float32, {3, 5, 7});
  ValueRef d = g.input("d", DType::Float64, {5, 9});
  ValueRef sparse = g.call("aten.relu.default", {t(x)});  // zeros for ord 0
  g.output(g.call("aten.linalg_vector_norm.default", {t(x)}));
  g.output(g.call("aten.linalg_vector_norm.default", {t(x), i(1), ints({1})}));
  g.output(g.call("aten.linalg_vector_norm.default", {t(x), f(INFINITY), ints({0}), b(true)}));
  g.output(g.call("aten.linalg_vector_norm.default", {t(x), f(-INFINITY), ints({1})}));
  g.output(g.call("aten.linalg_vector_norm.default", {t(sparse), i(0), ints({-1})}));
  g.output(g.call("aten.linalg_vector_norm.default", {t(x), f(3.0), ints({-1})}));
  g.output(g.call("aten.linalg_vector_norm.default", {t(x3), f(0.5), ints({0, 2})}));
  g.output(g.call("aten.linalg_vector_norm.default", {t(x3), i(2), ints({1}), b(true)}));
  g.output(g.call("aten.linalg_vector_norm.default", {t(x3), i(2), none(), b(true)}));
  g.output(g.call("aten.linalg_vector_norm.default", {t(x), i(2), ints({1})}, {{"dtype", dt(DType::Float64)}}));
  g.output(g.call("aten.linalg_vector_norm.default", {t(d), f(2.5), ints({0})}));
  // A norm feeding pointwise math (normalize): x / max(norm, eps).
  ValueRef n = g.call("aten.linalg_vector_norm.default", {t(x), i(2), ints({1}), b(true)});
  g.output(g.call("aten.div.Tensor", {t(x), t(g.call("aten.clamp_min.default", {t(n), f(1e-12)}))}));
  check(g, GetParam(), 2e-5, 1e-5);
}

TEST_P(ViewsNormsPoolingOps, HalfPrecision) {
  Builder g;
  ValueRef h = g.input("h", DType::BFloat16, {4, 20});
  ValueRef x = g.input("x", DType::Float16, {5, 8});
  g.output(g.call("aten.linalg_vector_norm.default", {t(h), i(2), ints({1})}));
  g.output(g.call("aten.linalg_vector_norm.default", {t(h), f(INFINITY)}));
  g.output(g.call("aten.linalg_vector_norm.default", {t(x), i(1), ints({0})}, {{"dtype", dt(DType::Float32)}}));
  g.output(g.call("aten.fmax.default", {t(h), t(g.call("aten.log.default", {t(h)}))}));
  g.output(g.call("aten.fmin.default", {t(x), t(g.call("aten.log.default", {t(x)}))}));
  g.output(g.call("aten.copysign.Tensor", {t(h), t(g.call("aten.neg.default", {t(h)}))}));
  g.output(g.call("aten.lgamma.default", {t(h)}));
  g.output(g.call("aten.digamma.default", {t(x)}));
  g.output(g.call("aten.erfinv.default", {t(g.call("aten.mul.Tensor", {t(h), f(0.45)}))}));
  ValueRef s = g.call("aten.split_with_sizes.default", {t(h), ints({5, 15}), i(1)});
  g.output_all(s);
  g.output(g.call("aten.diagonal.default", {t(x), i(1)}));
  check(g, GetParam(), 1e-2, 1e-2);
}

TEST_P(ViewsNormsPoolingOps, Splits) {
  Builder g;
  ValueRef x = g.input("x", DType::Float32, {4, 6, 5});
  ValueRef h = g.input("h", DType::BFloat16, {7, 3});
  ValueRef s = g.call("aten.split_with_sizes.default", {t(x), ints({2, 3, 1}), i(1)});
  ASSERT_EQ(g.outputs_of(s), 3u);
  g.output_all(s);
  ValueRef s2 = g.call("aten.split.Tensor", {t(x), i(4), i(-1)});  // pieces of 4 and 1
  ASSERT_EQ(g.outputs_of(s2), 2u);
  g.output_all(s2);
  ValueRef c = g.call("aten.chunk.default", {t(h), i(3)});  // 3, 3, 1 rows
  ASSERT_EQ(g.outputs_of(c), 3u);
  g.output_all(c);
  ValueRef u = g.call("aten.unbind.int", {t(x), i(1)});
  ASSERT_EQ(g.outputs_of(u), 6u);
  g.output(Builder::nth(u, 0));
  g.output(Builder::nth(u, 5));
  // Pieces of a computed value feeding math, and a split with an empty piece.
  ValueRef e = g.call("aten.split_with_sizes.default", {t(g.call("aten.exp.default", {t(x)})), ints({3, 0, 1}), i(0)});
  g.output(g.call("aten.add.Tensor", {t(Builder::nth(e, 0)), t(Builder::nth(e, 2))}));
  g.output(Builder::nth(e, 1));
  g.output(g.call("aten.mul.Tensor", {t(Builder::nth(s, 1)), t(Builder::nth(s, 2))}));
  check(g, GetParam());
}

TEST_P(ViewsNormsPoolingOps, Diagonal) {
  Builder g;
  ValueRef x = g.input("x", DType::Float32, {5, 7});
  ValueRef y = g.input("y", DType::Float32, {3, 4, 5});
  g.output(g.call("aten.diagonal.default", {t(x)}));
  g.output(g.call("aten.diagonal.default", {t(x), i(2)}));
  g.output(g.call("aten.diagonal.default", {t(x), i(-3)}));
  g.output(g.call("aten.diagonal.default", {t(x), i(9)}));  // empty
  g.output(g.call("aten.diagonal.default", {t(y), i(1), i(2), i(0)}));
  g.output(g.call("aten.diagonal.default", {t(y), i(-1), i(-1), i(1)}));
  ValueRef d = g.call("aten.diagonal.default", {t(g.call("aten.tanh.default", {t(y)})), i(0), i(1), i(2)});
  g.output(g.call("aten.sum.dim_IntList", {t(d), ints({-1})}));  // trace per batch
  check(g, GetParam());
}

TEST_P(ViewsNormsPoolingOps, Pointwise) {
  Builder g;
  ValueRef x = g.input("x", DType::Float32, {6, 33});
  ValueRef y = g.input("y", DType::Float32, {6, 33});
  ValueRef dx = g.input("dx", DType::Float64, {4, 9});
  ValueRef n = g.input("n", DType::Int64, {6, 33});
  ValueRef xn = g.call("aten.log.default", {t(x)});  // NaN where x < 0
  ValueRef yn = g.call("aten.log.default", {t(y)});
  g.output(g.call("aten.fmax.default", {t(xn), t(yn)}));
  g.output(g.call("aten.fmin.default", {t(xn), t(yn)}));
  g.output(g.call("aten.fmax.default", {t(x), t(n)}));
  g.output(g.call("aten.fmin.default", {t(n), t(g.call("aten.neg.default", {t(n)}))}));
  g.output(g.call("aten.copysign.Tensor", {t(x), t(y)}));
  g.output(g.call("aten.copysign.Scalar", {t(x), f(-1.0)}));
  g.output(g.call("aten.copysign.Scalar", {t(n), f(-0.0)}));  // int input, float result; -0.0 has its sign
  g.output(g.call("aten.copysign.Tensor", {t(n), t(y)}));
  g.output(g.call("aten.nextafter.default", {t(x), t(y)}));
  g.output(g.call("aten.nextafter.default", {t(dx), t(g.call("aten.neg.default", {t(dx)}))}));
  // lgamma / digamma over positive and negative non-integer arguments, integers (poles) and zero included.
  ValueRef wide = g.call("aten.mul.Tensor", {t(x), f(3.7)});
  g.output(g.call("aten.lgamma.default", {t(wide)}));
  g.output(g.call("aten.digamma.default", {t(wide)}));
  g.output(g.call("aten.lgamma.default", {t(g.call("aten.add.Tensor", {t(g.call("aten.abs.default", {t(x)})), f(0.01)}))}));
  g.output(g.call("aten.digamma.default", {t(g.call("aten.mul.Tensor", {t(x), f(30.0)}))}));
  g.output(g.call("aten.digamma.default", {t(g.call("aten.round.default", {t(wide)}))}));  // poles and +-0
  g.output(g.call("aten.lgamma.default", {t(n)}));
  g.output(g.call("aten.digamma.default", {t(dx)}));
  // erfinv inside (-1, 1), near +-1, and at / beyond the ends.
  g.output(g.call("aten.erfinv.default", {t(g.call("aten.mul.Tensor", {t(x), f(0.4999)}))}));
  g.output(g.call("aten.erfinv.default", {t(g.call("aten.tanh.default", {t(g.call("aten.mul.Tensor", {t(x), f(4.0)}))}))}));
  g.output(g.call("aten.erfinv.default", {t(g.call("aten.clamp.default", {t(x), f(-1.0), f(1.0)}))}));
  g.output(g.call("aten.erfinv.default", {t(g.call("aten.mul.Tensor", {t(dx), f(0.49)}))}));
  check(g, GetParam(), 2e-5, 2e-5);
}

TEST_P(ViewsNormsPoolingOps, AsStridedOfInputs) {
  Builder g;
  ValueRef x = g.input("x", DType::Float32, {6, 8});
  ValueRef v = g.input("v", DType::Float32, {4, 5}, {12, 2}, 3);  // a strided view with a storage offset
  g.output(g.call("aten.as_strided.default", {t(x), ints({3, 4}), ints({8, 2}), i(5)}));
  g.output(g.call("aten.as_strided.default", {t(x), ints({5, 4}), ints({2, 1})}));  // overlapping windows
  g.output(g.call("aten.as_strided.default", {t(v), ints({2, 3}), ints({1, 12})}));  // the input's own offset
  g.output(g.call("aten.as_strided.default", {t(v), ints({4, 5}), ints({12, 2}), i(3)}));
  ValueRef w = g.call("aten.as_strided.default", {t(x), ints({6, 6}), ints({8, 1})});
  g.output(g.call("aten.sum.dim_IntList", {t(g.call("aten.exp.default", {t(w)})), ints({1})}));
  check(g, GetParam());
}

TEST_P(ViewsNormsPoolingOps, AsStridedOfComputedValueIsRejected) {
  Builder g;
  ValueRef x = g.input("x", DType::Float32, {6, 8});
  ValueRef e = g.call("aten.exp.default", {t(x)});
  g.output(g.call("aten.as_strided.default", {t(e), ints({3, 4}), ints({8, 2})}));
  try {
    test::run_on_cpu(g.graph(), GetParam());
    FAIL() << "expected a LoweringError";
  } catch (const LoweringError& err) {
    EXPECT_NE(std::string(err.what()).find("as_strided of a computed value is not supported"), std::string::npos)
        << err.what();
    EXPECT_NE(std::string(err.what()).find("'n2'"), std::string::npos) << err.what();
  }
}

TEST_P(ViewsNormsPoolingOps, GroupNorm) {
  Builder g;
  ValueRef x = g.input("x", DType::Float32, {3, 6, 4, 5});
  ValueRef w = g.input("w", DType::Float32, {6});
  ValueRef bb = g.input("b", DType::Float32, {6});
  ValueRef x2 = g.input("x2", DType::Float32, {4, 8});
  ValueRef h = g.input("h", DType::BFloat16, {2, 4, 9});
  g.output_all(g.call("aten.native_group_norm.default", {t(x), t(w), t(bb), i(3), i(6), i(20), i(3), f(1e-5)}));
  g.output_all(g.call("aten.native_group_norm.default", {t(x2), none(), none(), i(4), i(8), i(1), i(2), f(1e-3)}));
  g.output_all(g.call("aten.native_group_norm.default", {t(h), none(), none(), i(2), i(4), i(9), i(4), f(1e-5)}));
  check(g, GetParam(), 2e-2, 2e-2);  // bfloat16 outputs; float ones are far closer (checked below)
}

TEST_P(ViewsNormsPoolingOps, GroupNormFloat) {
  Builder g;
  ValueRef x = g.input("x", DType::Float32, {3, 6, 4, 5});
  ValueRef w = g.input("w", DType::Float32, {6});
  ValueRef bb = g.input("b", DType::Float32, {6});
  ValueRef gn = g.call("aten.native_group_norm.default", {t(x), t(w), t(bb), i(3), i(6), i(20), i(2), f(1e-5)});
  g.output_all(gn);
  g.output(g.call("aten.relu.default", {t(gn)}));
  check(g, GetParam(), 1e-4, 1e-5);
}

TEST_P(ViewsNormsPoolingOps, GroupNormOverWideGroupsInRowLoops) {
  // Groups too wide to hold in registers, unsplit (as when there are enough of them): row loops, the statistics in
  // one Welford pass. An odd channel size (97 x 89) peels every row; channels-last strides read the group strided;
  // bf16 storage.
  Builder g;
  ValueRef x = g.input("x", DType::Float32, {1, 3, 97, 89});
  ValueRef w = g.input("w", DType::Float32, {3});
  ValueRef bb = g.input("b", DType::Float32, {3});
  ValueRef cl = g.input("cl", DType::Float32, {1, 4, 70, 66}, {18480, 1, 264, 4});
  ValueRef h = g.input("h", DType::BFloat16, {1, 2, 96, 96});
  g.output_all(g.call("aten.native_group_norm.default", {t(x), t(w), t(bb), i(1), i(3), i(97 * 89), i(1), f(1e-5)}));
  g.output_all(g.call("aten.native_group_norm.default", {t(cl), none(), none(), i(1), i(4), i(4620), i(1), f(1e-5)}));
  ValueRef hn = g.call("aten.native_group_norm.default", {t(h), none(), none(), i(1), i(2), i(9216), i(1), f(1e-5)});
  g.output(Builder::nth(hn, 0));
  CompileOptions options;
  options.target = parse_target(GetParam());
  options.graph_name = "test";
  options.split.enabled = false;
  NumericsCheck r = run_against_reference(g.graph(), options);
  for (const Kernel& k : r.compiled->program.kernels) EXPECT_EQ(k.kind, KernelKind::RowReduction);
  EXPECT_NE(kernels_text(r.compiled->module).find("in one pass"), std::string::npos) << kernels_text(r.compiled->module);
  test::expect_matches(r, 2e-2, 2e-2);  // the bf16 output; the float ones are checked closer below
  for (size_t o = 0; o + 1 < r.actual.size(); ++o) {
    std::string why;
    EXPECT_TRUE(all_close(r.actual[o], r.expected[o], 1e-4, 1e-5, &why)) << "output " << o << ": " << why;
  }
}

TEST_P(ViewsNormsPoolingOps, BatchNorm) {
  Builder g;
  ValueRef x = g.input("x", DType::Float32, {4, 3, 5, 6});
  ValueRef w = g.input("w", DType::Float32, {3});
  ValueRef bb = g.input("b", DType::Float32, {3});
  ValueRef rm = g.input("rm", DType::Float32, {3});
  ValueRef rv_raw = g.input("rv", DType::Float32, {3});
  ValueRef x2 = g.input("x2", DType::Float32, {7, 5});
  ValueRef rv = g.call("aten.add.Tensor", {t(g.call("aten.abs.default", {t(rv_raw)})), f(0.5)});
  ValueRef w5 = g.input("w5", DType::Float32, {5});
  ValueRef rm5 = g.input("rm5", DType::Float32, {5});
  ValueRef rv5 = g.call("aten.add.Tensor", {t(g.call("aten.abs.default", {t(g.input("rv5", DType::Float32, {5}))})), f(0.5)});
  // Eval (cpu metas: empty save_mean / save_rstd).
  g.output_all(g.call("aten._native_batch_norm_legit_no_training.default", {t(x), t(w), t(bb), t(rm), t(rv), f(0.1), f(1e-5)}));
  // Training, every output: normalised, save_mean, save_rstd, updated running mean and var.
  g.output_all(g.call("aten._native_batch_norm_legit_functional.default",
                      {t(x), t(w), t(bb), t(rm), t(rv), b(true), f(0.1), f(1e-5)}));
  g.output_all(g.call("aten._native_batch_norm_legit_functional.default",
                      {t(x2), none(), none(), t(rm5), t(rv5), b(false), f(0.2), f(1e-3)}));
  g.output_all(g.call("aten._native_batch_norm_legit_functional.default",
                      {t(x2), t(w5), none(), t(rm5), t(rv5), b(true), f(0.3), f(1e-3)}));
  g.output_all(g.call("aten._native_batch_norm_legit.no_stats", {t(x2), none(), t(w5), b(true), f(0.1), f(1e-5)}));
  // GPU metas: save_mean / save_rstd are the running statistics used, float32 [C].
  g.output_all(g.call_with("aten._native_batch_norm_legit_no_training.default",
                           {t(x), t(w), t(bb), t(rm), t(rv), f(0.1), f(1e-5)},
                           {{DType::Float32, {4, 3, 5, 6}}, {DType::Float32, {3}}, {DType::Float32, {3}}}));
  check(g, GetParam(), 1e-4, 1e-5);
}

TEST_P(ViewsNormsPoolingOps, BatchNormHalf) {
  Builder g;
  ValueRef x = g.input("x", DType::BFloat16, {6, 4, 7});
  ValueRef w = g.input("w", DType::BFloat16, {4});
  ValueRef rm = g.input("rm", DType::Float32, {4});
  ValueRef rv = g.call("aten.add.Tensor", {t(g.call("aten.abs.default", {t(g.input("rv", DType::Float32, {4}))})), f(0.5)});
  g.output_all(g.call("aten._native_batch_norm_legit_functional.default",
                      {t(x), t(w), t(w), t(rm), t(rv), b(true), f(0.1), f(1e-5)}));
  g.output_all(g.call("aten._native_batch_norm_legit_no_training.default", {t(x), t(w), none(), t(rm), t(rv), f(0.1), f(1e-5)}));
  check(g, GetParam(), 2e-2, 2e-2);
}

TEST_P(ViewsNormsPoolingOps, Pooling2d) {
  Builder g;
  ValueRef x = g.input("x", DType::Float32, {2, 3, 9, 10});
  ValueRef c = g.input("c", DType::Float32, {4, 7, 5});  // (C, H, W)
  ValueRef h = g.input("h", DType::BFloat16, {1, 2, 6, 6});
  // avg_pool2d: plain, padded (with and without the padding counted), ceil_mode windows that start in the padding,
  // divisor_override, one int for both dims, a 3-d input, bfloat16.
  g.output(g.call("aten.avg_pool2d.default", {t(x), ints({2, 2})}));
  g.output(g.call("aten.avg_pool2d.default", {t(x), ints({3, 2}), ints({2, 1}), ints({1, 1})}));
  g.output(g.call("aten.avg_pool2d.default", {t(x), ints({3, 3}), ints({2, 2}), ints({1, 1}), b(true), b(false)}));
  g.output(g.call("aten.avg_pool2d.default", {t(x), ints({3, 3}), ints({2, 3}), ints({1, 1}), b(true), b(true)}));
  g.output(g.call("aten.avg_pool2d.default", {t(x), ints({2, 3}), ints({}), ints({0, 1}), b(false), b(true), i(5)}));
  g.output(g.call("aten.avg_pool2d.default", {t(c), ints({3}), ints({2})}));
  g.output(g.call("aten.avg_pool2d.default", {t(h), ints({2, 2}), ints({1, 1}), ints({1, 1})}));
  // max_pool2d_with_indices: values and flat positions; padding, dilation, ceil_mode; windows of only -inf (from
  // log(0) where x >= 0) take their first tap inside the input.
  g.output_all(g.call("aten.max_pool2d_with_indices.default", {t(x), ints({2, 2})}));
  g.output_all(g.call("aten.max_pool2d_with_indices.default", {t(x), ints({3, 3}), ints({2, 2}), ints({1, 1})}));
  g.output_all(g.call("aten.max_pool2d_with_indices.default",
                      {t(x), ints({3, 2}), ints({1, 2}), ints({1, 1}), ints({2, 3}), b(true)}));
  ValueRef lows = g.call("aten.log.default", {t(g.call("aten.relu.default", {t(g.call("aten.neg.default", {t(x)}))}))});
  g.output_all(g.call("aten.max_pool2d_with_indices.default", {t(lows), ints({2, 2}), ints({1, 1}), ints({1, 1})}));
  g.output_all(g.call("aten.max_pool2d_with_indices.default",
                      {t(lows), ints({3, 3}), ints({2, 2}), ints({1, 1}), ints({2, 2})}));
  g.output_all(g.call("aten.max_pool2d_with_indices.default", {t(c), ints({2}), ints({}), ints({1})}));
  g.output_all(g.call("aten.max_pool2d_with_indices.default", {t(h), ints({3, 3}), ints({2, 2}), ints({1, 1})}));
  // _adaptive_avg_pool2d: windows of uneven sizes (9 -> 4, 10 -> 3), larger outputs than inputs, global pooling.
  g.output(g.call("aten._adaptive_avg_pool2d.default", {t(x), ints({4, 3})}));
  g.output(g.call("aten._adaptive_avg_pool2d.default", {t(x), ints({11, 6})}));
  g.output(g.call("aten._adaptive_avg_pool2d.default", {t(x), ints({1, 1})}));
  g.output(g.call("aten._adaptive_avg_pool2d.default", {t(c), ints({3, 2})}));
  g.output(g.call("aten._adaptive_avg_pool2d.default", {t(h), ints({4, 4})}));
  check(g, GetParam(), 1e-2, 1e-2);  // bfloat16 outputs; float ones are far closer (checked below)
}

TEST_P(ViewsNormsPoolingOps, Pooling2dFloat) {
  Builder g;
  ValueRef x = g.input("x", DType::Float32, {2, 3, 9, 10});
  g.output(g.call("aten.avg_pool2d.default", {t(x), ints({3, 3}), ints({2, 2}), ints({1, 1}), b(true), b(false)}));
  g.output_all(g.call("aten.max_pool2d_with_indices.default", {t(x), ints({3, 3}), ints({2, 2}), ints({1, 1})}));
  g.output(g.call("aten._adaptive_avg_pool2d.default", {t(x), ints({4, 3})}));
  // NaN (sqrt of the negative half) wins its windows, and the position is the last NaN's, as PyTorch's loop keeps it.
  ValueRef nans = g.call("aten.sqrt.default", {t(x)});
  g.output_all(g.call("aten.max_pool2d_with_indices.default", {t(nans), ints({3, 3}), ints({1, 1}), ints({1, 1})}));
  // A 6 x 6 window (36 taps, past the unrolled size) keeps the last NaN's position too.
  g.output_all(g.call("aten.max_pool2d_with_indices.default", {t(nans), ints({6, 6}), ints({3, 3}), ints({1, 2})}));
  ValueRef pooled = g.call("aten._adaptive_avg_pool2d.default", {t(x), ints({1, 1})});
  g.output(g.call("aten.relu.default", {t(pooled)}));
  check(g, GetParam(), 1e-5, 1e-6);
}

// Windows over enough outputs that each thread takes two of them, a block apart, with a count that leaves the last
// iteration ragged (4 x 9 x 61 x 60 outputs: 176 past a multiple of two blocks), in f32 and bf16; max pooling's
// values alone (its positions not stored) take two too.
TEST_P(ViewsNormsPoolingOps, PoolingWithTwoWindowsPerThread) {
  Builder g;
  ValueRef x = g.input("x", DType::Float32, {4, 9, 122, 121});
  ValueRef h = g.input("h", DType::BFloat16, {4, 9, 122, 121});
  g.output(g.call("aten.avg_pool2d.default", {t(x), ints({2, 2})}));
  g.output(g.call("aten.avg_pool2d.default", {t(h), ints({2, 2})}));
  g.output(Builder::nth(g.call("aten.max_pool2d_with_indices.default", {t(x), ints({3, 3}), ints({2, 2}), ints({1, 1})}), 0));
  g.output(Builder::nth(g.call("aten.max_pool2d_with_indices.default", {t(h), ints({2, 2})}), 0));
  check(g, GetParam(), 1e-2, 1e-2);
}

// Ops whose references the registry test found missing: adaptive max pooling (forward, and backward from its
// recorded positions), unfold (overlapping and strided windows).
TEST_P(ViewsNormsPoolingOps, AdaptiveMaxPoolAndUnfold) {
  Builder g;
  ValueRef x = g.input("x", DType::Float32, {2, 3, 9, 10});
  ValueRef nans = g.call("aten.sqrt.default", {t(x)});
  ValueRef pooled = g.call("aten.adaptive_max_pool2d.default", {t(nans), ints({4, 3})});
  g.output_all(pooled);
  ValueRef grad = g.input("grad", DType::Float32, {2, 3, 4, 3});
  ValueRef plain = g.call("aten.adaptive_max_pool2d.default", {t(x), ints({4, 3})});
  g.output(g.call("aten.adaptive_max_pool2d_backward.default", {t(grad), t(x), t(Builder::nth(plain, 1))}));
  g.output(g.call("aten.unfold.default", {t(x), i(3), i(4), i(3)}));
  g.output(g.call("aten.unfold.default", {t(x), i(-1), i(2), i(1)}));
  check(g, GetParam(), 1e-5, 1e-6);
}

TEST_P(ViewsNormsPoolingOps, Pooling2dBackward) {
  Builder g;
  ValueRef x = g.input("x", DType::Float32, {2, 3, 9, 10});
  ValueRef c = g.input("c", DType::Float32, {2, 7, 5});
  // Gradients of each pooling's output shape (inputs), and max pools' recorded positions from the forward op.
  auto grad_for = [&](ValueRef pooled, const std::string& name) {
    std::vector<int64_t> sizes;
    for (const Index& s : g.graph().nodes[pooled.node].outputs[pooled.output].sizes) sizes.push_back(s.value());
    return g.input(name, DType::Float32, sizes);
  };
  // max: overlapping windows (stride 1, padding), strided ones with dilation and ceil_mode, a 3-d input.
  struct MaxCase {
    ValueRef in;
    std::vector<Arg> args;
  };
  std::vector<MaxCase> max_cases = {
      {x, {ints({3, 3}), ints({1, 1}), ints({1, 1}), ints({1, 1}), b(false)}},
      {x, {ints({3, 2}), ints({2, 1}), ints({1, 1}), ints({2, 2}), b(true)}},
      {c, {ints({2, 2}), ints({2, 2}), ints({0, 0}), ints({1, 1}), b(false)}},
  };
  for (size_t n = 0; n < max_cases.size(); ++n) {
    std::vector<Arg> fwd{t(max_cases[n].in)};
    fwd.insert(fwd.end(), max_cases[n].args.begin(), max_cases[n].args.end());
    ValueRef mp = g.call("aten.max_pool2d_with_indices.default", fwd);
    ValueRef gy = grad_for(mp, "gm" + std::to_string(n));
    std::vector<Arg> bwd{t(gy), t(max_cases[n].in)};
    bwd.insert(bwd.end(), max_cases[n].args.begin(), max_cases[n].args.end());
    bwd.push_back(t(Builder::nth(mp, 1)));
    g.output(g.call("aten.max_pool2d_with_indices_backward.default", bwd));
  }
  // avg: overlapping padded windows with and without the padding counted, ceil_mode, divisor_override.
  std::vector<std::vector<Arg>> avg_cases = {
      {ints({3, 3}), ints({1, 1}), ints({1, 1}), b(false), b(true), none()},
      {ints({3, 3}), ints({2, 2}), ints({1, 1}), b(true), b(false), none()},
      {ints({2, 3}), ints({2, 3}), ints({0, 1}), b(false), b(true), i(4)},
  };
  for (size_t n = 0; n < avg_cases.size(); ++n) {
    std::vector<Arg> fwd{t(x)};
    fwd.insert(fwd.end(), avg_cases[n].begin(), avg_cases[n].end());
    ValueRef gy = grad_for(g.call("aten.avg_pool2d.default", fwd), "ga" + std::to_string(n));
    std::vector<Arg> bwd{t(gy), t(x)};
    bwd.insert(bwd.end(), avg_cases[n].begin(), avg_cases[n].end());
    g.output(g.call("aten.avg_pool2d_backward.default", bwd));
  }
  // adaptive: uneven overlapping windows (9 -> 4, 10 -> 3), enlarging (9 -> 11), global.
  int n = 0;
  for (auto sizes : {std::vector<int64_t>{4, 3}, std::vector<int64_t>{11, 6}, std::vector<int64_t>{1, 1}}) {
    ValueRef gy =
        grad_for(g.call("aten._adaptive_avg_pool2d.default", {t(x), ints(sizes)}), "gd" + std::to_string(n++));
    g.output(g.call("aten._adaptive_avg_pool2d_backward.default", {t(gy), t(x)}));
  }
  check(g, GetParam(), 1e-5, 1e-6);
}

TEST(ViewsNormsPoolingSchemas, PoolingMetasFollowPyTorchsOutputSizes) {
  Builder g;
  ValueRef x = g.input("x", DType::Float32, {1, 1, 5, 5});
  auto sizes = [&](ValueRef r) {
    std::vector<int64_t> out;
    for (const Index& s : g.graph().nodes[r.node].outputs[r.output].sizes) out.push_back(s.value());
    return out;
  };
  // ceil_mode rounds (5 - 2) / 2 up: 3 windows where floor division gives 2. With padding 1, (5 + 2 - 2) / 2 rounds
  // up to 3 + 1 windows, but the fourth would start in the right padding and is dropped.
  EXPECT_EQ(sizes(g.call("aten.avg_pool2d.default", {t(x), ints({2, 2}), ints({2, 2}), ints({0, 0}), b(true)})),
            (std::vector<int64_t>{1, 1, 3, 3}));
  EXPECT_EQ(sizes(g.call("aten.avg_pool2d.default", {t(x), ints({2, 2}), ints({2, 2}), ints({1, 1}), b(true)})),
            (std::vector<int64_t>{1, 1, 3, 3}));
  EXPECT_EQ(sizes(g.call("aten.avg_pool2d.default", {t(x), ints({2, 2})})), (std::vector<int64_t>{1, 1, 2, 2}));
  ValueRef m =
      g.call("aten.max_pool2d_with_indices.default", {t(x), ints({3, 3}), ints({1, 1}), ints({1, 1}), ints({2, 2})});
  EXPECT_EQ(sizes(m), (std::vector<int64_t>{1, 1, 3, 3}));
  EXPECT_EQ(g.graph().nodes[m.node].outputs[1].dtype, DType::Int64);
  EXPECT_THROW(g.call("aten.avg_pool2d.default", {t(x), ints({2, 2}), ints({1, 1}), ints({2, 2})}), SchemaError);
  EXPECT_THROW(g.call("aten.avg_pool2d.default", {t(x), ints({2, 2}), ints({}), ints({0}), b(false), b(true), i(0)}),
               SchemaError);
}

TEST(ViewsNormsPoolingSchemas, ListReturnsAndAliasAnnotations) {
  const OpSchema* s = find_op_schema("aten.split_with_sizes.default");
  ASSERT_NE(s, nullptr);
  EXPECT_TRUE(s->returns_list);
  EXPECT_TRUE(s->is_view);
  ASSERT_EQ(s->args.size(), 3u);
  EXPECT_EQ(s->args[0].name, "self");
  EXPECT_EQ(s->args[0].type, ArgType::Tensor);
  EXPECT_FALSE(find_op_schema("aten.diagonal.default")->returns_list);
  EXPECT_EQ(find_op_schema("aten._native_batch_norm_legit_functional.default")->num_outputs, 5);
}

TEST(ViewsNormsPoolingSchemas, SplitMetasAreViews) {
  Builder g;
  ValueRef x = g.input("x", DType::Float32, {4, 10});
  ValueRef s = g.call("aten.split.Tensor", {t(x), i(4), i(1)});
  const Node& n = g.graph().nodes[s.node];
  ASSERT_EQ(n.outputs.size(), 3u);
  EXPECT_EQ(n.outputs[2].sizes, (std::vector<Index>{Index(4), Index(2)}));
  EXPECT_EQ(n.outputs[2].strides, (std::vector<Index>{Index(10), Index(1)}));
  EXPECT_EQ(n.outputs[2].offset, Index(8));
  ValueRef d = g.call("aten.diagonal.default", {t(x), i(-1)});
  const TensorMeta& dm = g.graph().nodes[d.node].outputs[0];
  EXPECT_EQ(dm.sizes, (std::vector<Index>{Index(3)}));
  EXPECT_EQ(dm.strides, (std::vector<Index>{Index(11)}));
  EXPECT_EQ(dm.offset, Index(10));
}

TEST(ViewsNormsPoolingSchemas, ListReturningOpsRoundTripThroughJson) {
  Builder g;
  ValueRef x = g.input("x", DType::Float32, {4, 10});
  ValueRef s = g.call("aten.split_with_sizes.default", {t(x), ints({3, 7}), i(1)});
  ValueRef one = g.call("aten.split.Tensor", {t(x), i(4)});  // a single piece: meta written as an object
  g.output_all(s);
  g.output(one);
  Graph back = read_graph_json(write_graph_json(g.graph()), "split.json");
  ASSERT_EQ(back.nodes[s.node].outputs.size(), 2u);
  EXPECT_EQ(back.nodes[s.node].outputs[1].sizes, (std::vector<Index>{Index(4), Index(7)}));
  EXPECT_EQ(back.nodes[one.node].outputs.size(), 1u);
  // A meta list whose length differs from the pieces the op makes is rejected.
  Builder wrong;
  ValueRef wx = wrong.input("x", DType::Float32, {4, 10});
  wrong.output(wrong.call_with("aten.split_with_sizes.default", {t(wx), ints({3, 7}), i(1)},
                               {{DType::Float32, {4, 3}}, {DType::Float32, {4, 7}}, {DType::Float32, {4, 7}}}));
  EXPECT_THROW(read_graph_json(write_graph_json(wrong.graph()), "wrong.json"), std::exception);
}

TEST(ViewsNormsPoolingSchemas, BatchNormStatisticsFollowTheNodesDevice) {
  // 16-bit batch norm saves float32 statistics on GPUs, the input's dtype on the cpu device: the node's meta decides,
  // as for layer and group norm (the GPU's float32 metas were rejected, and bf16 batch norm ran eagerly there).
  for (DType stats : {DType::Float32, DType::BFloat16, DType::Float16}) {
    Builder g;
    ValueRef x = g.input("x", DType::BFloat16, {4, 3, 5});
    ValueRef w = g.input("w", DType::BFloat16, {3});
    ValueRef rm = g.input("rm", DType::BFloat16, {3});
    ValueRef bn = g.call_with(
        "aten._native_batch_norm_legit_functional.default", {t(x), t(w), t(w), t(rm), t(rm), b(true), f(0.1), f(1e-5)},
        {{DType::BFloat16, {4, 3, 5}}, {stats, {3}}, {stats, {3}}, {DType::Float32, {3}}, {DType::Float32, {3}}});
    g.output_all(bn);
    if (stats == DType::Float16) {
      EXPECT_THROW(read_graph_json(write_graph_json(g.graph()), "bn.json"), std::exception);
      continue;
    }
    Graph back = read_graph_json(write_graph_json(g.graph()), "bn.json");
    EXPECT_EQ(back.nodes[bn.node].outputs[1].dtype, stats);
  }
}

TEST(ViewsNormsPoolingSchemas, InferenceBatchNormStatisticsAreEmptyOnTheCpuAndPerChannelOnGpus) {
  // Not training, the cpu device's saved statistics are [0] and CUDA's float32 [C] (ResNet-50 on the H200 ran every
  // batch norm eagerly, its [64] metas rejected); other sizes are still an error.
  for (int64_t size : {0, 3, 5}) {
    Builder g;
    ValueRef x = g.input("x", DType::BFloat16, {4, 3, 5});
    ValueRef w = g.input("w", DType::BFloat16, {3});
    ValueRef rm = g.input("rm", DType::Float32, {3});
    ValueRef bn = g.call_with("aten._native_batch_norm_legit_no_training.default",
                              {t(x), t(w), t(w), t(rm), t(rm), f(0.1), f(1e-5)},
                              {{DType::BFloat16, {4, 3, 5}}, {DType::Float32, {size}}, {DType::Float32, {size}}});
    g.output_all(bn);
    if (size == 5) {
      EXPECT_THROW(read_graph_json(write_graph_json(g.graph()), "bn.json"), std::exception);
      continue;
    }
    Graph back = read_graph_json(write_graph_json(g.graph()), "bn.json");
    EXPECT_EQ(back.nodes[bn.node].outputs[2].sizes, std::vector<Index>{size});
  }
}

INSTANTIATE_TEST_SUITE_P(WarpWidths, ViewsNormsPoolingOps, ::testing::Values("cpu", "cpu-w64"),
                         [](const auto& info) { return info.param == "cpu" ? std::string("w32") : std::string("w64"); });

}  // namespace
}  // namespace hi
