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

// RoPE's cos of [T, D] is a graph output (the next layer reads it) and also multiplies q of [B, H, T, D]: the q
// kernel reads the stored cos instead of evaluating cos B * H times over; a cheap output (a * a) is still inlined.
TEST(Fusion, ConsumersReadATranscendentalOutputInsteadOfRecomputingIt) {
  test::GraphBuilder g;
  ValueRef a = g.input("a", DType::Float32, {64, 32});
  ValueRef q = g.input("q", DType::Float32, {4, 8, 64, 32});
  ValueRef c = g.call("aten.cos.default", {A(a)}, DType::Float32, {64, 32});
  ValueRef y = g.call("aten.mul.Tensor", {A(q), A(c)}, DType::Float32, {4, 8, 64, 32});
  ValueRef d = g.call("aten.mul.Tensor", {A(a), A(a)}, DType::Float32, {64, 32});
  ValueRef z = g.call("aten.mul.Tensor", {A(q), A(d)}, DType::Float32, {4, 8, 64, 32});
  g.output(c);
  g.output(y);
  g.output(d);
  g.output(z);
  LoopProgram p = scheduled(g.graph());
  ASSERT_EQ(p.kernels.size(), 2u) << p.str();
  int cos_evaluations = 0, doubled_reads = 0;
  for (const Computation& comp : p.computations)
    visit(comp.body, [&](const Expr& e) {
      cos_evaluations += e->op == ExprOp::Unary && e->unary_op() == UnaryOp::Cos;
      doubled_reads += e->op == ExprOp::Load && e->buffer == p.outputs[2];
    });
  EXPECT_EQ(cos_evaluations, 1) << p.str();  // only where cos is stored
  EXPECT_EQ(doubled_reads, 0) << p.str();   // a * a is evaluated where z needs it
  for (size_t k = 0; k < p.outputs.size(); ++k)
    EXPECT_EQ(p.buffers[p.outputs[k]].kind, BufferKind::Output);
  EXPECT_EQ(p.workspace_bytes, 0);  // the stored cos is the output itself, no intermediate copy
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

TEST(Fusion, PointwiseEpiloguesJoinTheirColumnReduction) {
  // relu(sum(x, 0) / 100 + b): one column kernel, the sum only in registers; y * 2, of the same element count but
  // reading nothing the column kernel computes, is no epilogue of it.
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {100, 48});
  ValueRef b = g.input("b", DType::Float32, {48});
  ValueRef y = g.input("y", DType::Float32, {48});
  ValueRef s = g.call("aten.sum.dim_IntList", {A(x), L({0})}, DType::Float32, {48});
  ValueRef d = g.call("aten.div.Tensor", {A(s), test::F(100.0)}, DType::Float32, {48});
  ValueRef a = g.call("aten.add.Tensor", {A(d), A(b)}, DType::Float32, {48});
  g.output(g.call("aten.relu.default", {A(a)}, DType::Float32, {48}));
  g.output(g.call("aten.mul.Tensor", {A(y), test::F(2.0)}, DType::Float32, {48}));
  LoopProgram p = scheduled(g.graph());
  ASSERT_EQ(p.kernels.size(), 2u) << p.str();
  EXPECT_EQ(p.kernels[0].kind, KernelKind::ColumnReduction);
  EXPECT_EQ(p.kernels[0].computations.size(), 2u) << p.str();  // the sum, its inlined epilogue
  EXPECT_EQ(p.kernels[0].local_buffers.size(), 1u) << p.str();
  EXPECT_EQ(p.kernels[1].kind, KernelKind::Pointwise);
  EXPECT_EQ(p.workspace_bytes, 0);
}

TEST(Fusion, SumOfLogSoftmaxOverItsRowsJoinsTheRowKernel) {
  // Label smoothing sums log_softmax over each row: x - max - log(sum) reads two per-row statistics and the row
  // itself; only the row, streamed, decides the kernel's kind, so the three reductions share one row kernel.
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {64, 1000});
  ValueRef lsm = g.call("aten._log_softmax.default", {A(x), test::I(1), B(false)}, DType::Float32, {64, 1000});
  g.output(g.call("aten.sum.dim_IntList", {A(lsm), L({1})}, DType::Float32, {64}));
  LoopProgram p = scheduled(g.graph());
  ASSERT_EQ(p.kernels.size(), 1u) << p.str();
  EXPECT_EQ(p.kernels[0].kind, KernelKind::RowReduction);
}

TEST(Fusion, SumOverRowsWithPerRowStatisticsIsAColumnReductionBesideTheRowSums) {
  // LayerNorm's backward: the row sums of g * w (and of g * w * xhat) and, over the same [rows, width] domain, the
  // weight gradient's sum over rows of g * (x - mean) * rstd. The per-row mean and rstd vary with the reduced
  // variable at stride 1, g and x at the row pitch: the matrix decides, so the weight gradient is a column reduction,
  // not a second reduction of the row kernel reading g and x transposed.
  test::GraphBuilder g;
  ValueRef grad = g.input("g", DType::Float32, {256, 512});
  ValueRef x = g.input("x", DType::Float32, {256, 512});
  ValueRef mean = g.input("mean", DType::Float32, {256, 1});
  ValueRef rstd = g.input("rstd", DType::Float32, {256, 1});
  ValueRef xhat = g.call("aten.mul.Tensor", {A(g.call("aten.sub.Tensor", {A(x), A(mean)}, DType::Float32, {256, 512})),
                                             A(rstd)},
                         DType::Float32, {256, 512});
  g.output(g.call("aten.sum.dim_IntList", {A(grad), L({1}), B(true)}, DType::Float32, {256, 1}));
  ValueRef prod = g.call("aten.mul.Tensor", {A(grad), A(xhat)}, DType::Float32, {256, 512});
  g.output(g.call("aten.sum.dim_IntList", {A(prod), L({0})}, DType::Float32, {512}));
  LoopProgram p = scheduled(g.graph());
  ASSERT_EQ(p.kernels.size(), 2u) << p.str();
  EXPECT_EQ(p.kernels[0].kind, KernelKind::RowReduction) << p.str();
  EXPECT_EQ(p.kernels[1].kind, KernelKind::ColumnReduction) << p.str();
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
  EXPECT_GT(p.workspace_bytes.as_const().value_or(0), 0);
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
