// Fusion decisions: how many kernels representative graphs become, and what stays out of memory.
#include <gtest/gtest.h>

#include "lowering/fuse_kernels.h"
#include "lowering/lower_graph.h"
#include "lowering/plan_memory.h"
#include "tests/common/graph_builder.h"

namespace hi {
namespace {

using test::A;
using test::B;
using test::L;

LoopProgram scheduled(const Graph& g) {
  LoopProgram p = lower_graph(g);
  fuse_kernels(p);
  plan_memory(p);
  for (const auto& problem : verify_loop_program(p)) ADD_FAILURE() << problem;
  return p;
}

TEST(Fusion, SoftmaxIsOneRowKernelWithNothingInMemory) {
  LoopProgram p = scheduled(test::softmax_graph(32, 1000));
  ASSERT_EQ(p.kernels.size(), 1u) << p.str();
  EXPECT_EQ(p.kernels[0].kind, KernelKind::RowReduction);
  EXPECT_EQ(p.kernels[0].computations.size(), 3u);  // max, sum, normalise
  EXPECT_EQ(p.kernels[0].local_buffers.size(), 2u);
  EXPECT_EQ(p.workspace_bytes, 0);
  EXPECT_EQ(p.kernels[0].name, "fused_amax_sub_exp_sum_div_0");
}

TEST(Fusion, LayerNormIsOneKernel) {
  LoopProgram p = scheduled(test::layer_norm_graph(64, 256, false));
  ASSERT_EQ(p.kernels.size(), 1u) << p.str();
  EXPECT_EQ(p.kernels[0].kind, KernelKind::RowReduction);
  EXPECT_EQ(p.workspace_bytes, 0);
}

TEST(Fusion, LayerNormWithMeanAndRstdOutputsIsOneKernel) {
  // The training forward graph also returns mean and rstd: they are stored, still by the one kernel.
  LoopProgram p = scheduled(test::layer_norm_graph(64, 256, true));
  EXPECT_EQ(p.kernels.size(), 1u) << p.str();
}

TEST(Fusion, TenPointwiseOpsAreOneKernel) {
  LoopProgram p = scheduled(test::pointwise_chain_graph(128, 64));
  ASSERT_EQ(p.kernels.size(), 1u) << p.str();
  EXPECT_EQ(p.kernels[0].kind, KernelKind::Pointwise);
  EXPECT_EQ(p.computations.size(), 1u);  // all inlined: no intermediate is ever realized
}

TEST(Fusion, ReductionOverLeadingDimIsAColumnReduction) {
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {100, 48});
  ValueRef s = g.call("aten.sum.dim_IntList", {A(x), L({0})}, DType::Float32, {48});
  g.output(s);
  LoopProgram p = scheduled(g.graph());
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_EQ(p.kernels[0].kind, KernelKind::ColumnReduction);
}

TEST(Fusion, ConsumerOfReductionAtAnotherIndexIsNotFused) {
  // y = x - sum(x, dim=0): the sum is per column, the row kernel would need other rows' results.
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {16, 32});
  ValueRef s = g.call("aten.sum.dim_IntList", {A(x), L({0}), B(true)}, DType::Float32, {1, 32});
  ValueRef y = g.call("aten.sub.Tensor", {A(x), A(s)}, DType::Float32, {16, 32});
  g.output(y);
  LoopProgram p = scheduled(g.graph());
  EXPECT_EQ(p.kernels.size(), 2u) << p.str();
  EXPECT_GT(p.workspace_bytes, 0);
}

TEST(Fusion, UnknownOpNamesTheNode) {
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {4});
  ValueRef y = g.call("aten.frobnicate.default", {A(x)}, DType::Float32, {4});
  g.output(y);
  try {
    lower_graph(g.graph());
    FAIL() << "expected LoweringError";
  } catch (const LoweringError& e) {
    EXPECT_STREQ(e.what(), "node 'frobnicate' (aten.frobnicate.default): no lowering for this op");
  }
}

}  // namespace
}  // namespace hi
