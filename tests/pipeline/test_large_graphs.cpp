// Graphs of thousands of nodes in one segment (a long pointwise tail, an unrolled optimizer step, a stack of
// softmaxes): they compile for the cpu device and match the reference interpreter. Not timed: how compile time grows
// with graph size is measured by bench/compile_scaling.py; these check that the steps which keep it near-linear
// (large bodies realized, kernels of bounded size) keep the results right.
#include <gtest/gtest.h>

#include "tests/common/graph_builder.h"
#include "tests/pipeline/run_on_cpu.h"

namespace hi {
namespace {

using test::A;
using test::B;
using test::F;
using test::I;

/// `n` chained pointwise nodes over x of [rows, cols]; every eighth reads x again (a value with thousands of
/// readers). Each step maps [-2, 2] into itself, so values stay in range however long the chain.
Graph long_pointwise_chain(int n, int64_t rows, int64_t cols) {
  test::GraphBuilder g;
  std::vector<Index> s{rows, cols};
  ValueRef x = g.input("x", DType::Float32, s);
  ValueRef v = x;
  for (int i = 0; i < n; ++i) {
    switch (i % 8) {
      case 0: v = g.call("aten.mul.Tensor", {A(v), F(0.5)}, DType::Float32, s); break;
      case 1: v = g.call("aten.add.Tensor", {A(v), F(0.25)}, DType::Float32, s); break;
      case 2: v = g.call("aten.tanh.default", {A(v)}, DType::Float32, s); break;
      case 3: v = g.call("aten.sigmoid.default", {A(v)}, DType::Float32, s); break;
      case 4: v = g.call("aten.sub.Tensor", {A(v), A(x)}, DType::Float32, s); break;
      case 5: v = g.call("aten.sin.default", {A(v)}, DType::Float32, s); break;
      case 6: v = g.call("aten.relu.default", {A(v)}, DType::Float32, s); break;
      default: v = g.call("aten.neg.default", {A(v)}, DType::Float32, s); break;
    }
  }
  g.output(v);
  return g.graph();
}

/// `n` chained softmaxes over the rows of x of [rows, cols].
Graph long_softmax_chain(int n, int64_t rows, int64_t cols) {
  test::GraphBuilder g;
  std::vector<Index> s{rows, cols};
  ValueRef v = g.input("x", DType::Float32, s);
  for (int i = 0; i < n; ++i) v = g.call("aten._softmax.default", {A(v), I(-1), B(false)}, DType::Float32, s);
  g.output(v);
  return g.graph();
}

TEST(LargeGraphs, FiveThousandChainedPointwiseNodesMatchTheReference) {
  NumericsCheck r = test::run_on_cpu(long_pointwise_chain(5000, 8, 64), "cpu");
  test::expect_matches(r, 1e-4, 1e-5);
  // The chain is not one expression: bodies past LoweringOptions::max_body_ops were realized.
  EXPECT_GT(r.compiled->program.computations.size(), 1u);
}

TEST(LargeGraphs, TwoHundredChainedSoftmaxesMatchTheReference) {
  NumericsCheck r = test::run_on_cpu(long_softmax_chain(200, 4, 32), "cpu");
  test::expect_matches(r, 1e-4, 1e-6);
}

}  // namespace
}  // namespace hi
