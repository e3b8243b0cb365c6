// Numerical runs: emitted HIP source compiled for the cpu device (warp widths 32 and 64, so both the NVIDIA/RDNA and
// the CDNA code shapes execute), compared with the reference interpreter.
#include <gtest/gtest.h>

#include "run_on_cpu.h"
#include "runtime/cpu_device.h"
#include "tests/common/graph_builder.h"

namespace hi {
namespace {

using test::A;
using test::B;
using test::F;
using test::I;
using test::L;
using test::S;

class CpuNumerics : public ::testing::TestWithParam<std::string> {};

TEST_P(CpuNumerics, Softmax) {
  test::expect_matches(test::run_on_cpu(test::softmax_graph(8, 300), GetParam()), 1e-5, 1e-6);
}

TEST_P(CpuNumerics, SoftmaxBf16) {
  test::expect_matches(test::run_on_cpu(test::softmax_graph(4, 200, DType::BFloat16), GetParam()), 2e-2, 1e-2);
}

TEST_P(CpuNumerics, LayerNormWithStatistics) {
  test::expect_matches(test::run_on_cpu(test::layer_norm_graph(6, 160, true), GetParam()), 1e-4, 1e-5);
}

TEST_P(CpuNumerics, RowsTooLongForRegistersStreamInVectorGroups) {
  // 40000 f32 / 36000 bf16 columns exceed what a thread keeps in registers: the row-loop kernel, with vector groups
  // (split_reductions, which would cut these few rows into pieces, is off here).
  CompileOptions o;
  o.target = parse_target(GetParam());
  o.graph_name = "test";
  o.split.enabled = false;
  CompiledGraph c = generate(test::softmax_graph(2, 40000), o);
  EXPECT_NE(kernels_text(c.module).find("cg < 10000; cg += 1024"), std::string::npos) << kernels_text(c.module);
  test::expect_matches(run_against_reference(test::softmax_graph(2, 40000), o), 1e-5, 1e-6);
  test::expect_matches(run_against_reference(test::layer_norm_graph(2, 36000, true, DType::BFloat16), o), 3e-2, 2e-2);
}

TEST_P(CpuNumerics, PointwiseChain) {
  test::expect_matches(test::run_on_cpu(test::pointwise_chain_graph(33, 17), GetParam()), 1e-5, 1e-6);
}

TEST_P(CpuNumerics, NonContiguousInputs) {
  // x is a transposed view (strides [1, 9]) with a storage offset; y broadcasts along dim 0.
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {7, 9}, {1, 7}, 3);
  ValueRef y = g.input("y", DType::Float32, {1, 9});
  ValueRef a = g.call("aten.mul.Tensor", {A(x), A(y)}, DType::Float32, {7, 9});
  ValueRef p = g.call("aten.permute.default", {A(a), L({1, 0})}, DType::Float32, {9, 7});
  ValueRef r = g.call("aten.view.default", {A(p), L({63})}, DType::Float32, {63});
  ValueRef e = g.call("aten.expand.default", {A(r), L({2, 63})}, DType::Float32, {2, 63});
  g.output(e);
  test::expect_matches(test::run_on_cpu(g.graph(), GetParam()), 1e-6, 1e-7);
}

TEST_P(CpuNumerics, TransposedOutputsWalkedInMemoryOrder) {
  NumericsCheck r = test::run_on_cpu(test::transposed_rope_graph(2, 6, 3, 8), GetParam());
  ASSERT_EQ(r.actual.size(), 1u);
  test::expect_matches(r, 1e-6, 1e-6);
}

TEST_P(CpuNumerics, ReductionsOverNonLastDims) {
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {5, 6, 7});
  ValueRef s0 = g.call("aten.sum.dim_IntList", {A(x), L({0})}, DType::Float32, {6, 7});
  ValueRef m1 = g.call("aten.amax.default", {A(x), L({1}), B(true)}, DType::Float32, {5, 1, 7});
  ValueRef mn = g.call("aten.mean.dim", {A(x), L({0, 2})}, DType::Float32, {6});
  ValueRef mi = g.call("aten.amin.default", {A(x), L({-1, 0})}, DType::Float32, {6});
  g.output(s0);
  g.output(m1);
  g.output(mn);
  g.output(mi);
  test::expect_matches(test::run_on_cpu(g.graph(), GetParam()), 1e-5, 1e-5);
}

TEST_P(CpuNumerics, GeluBothApproximationsAndResidual) {
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {10, 20});
  ValueRef a = g.call("aten.gelu.default", {A(x)}, DType::Float32, {10, 20});
  ValueRef b = g.call("aten.gelu.default", {A(x)}, DType::Float32, {10, 20}, {{"approximate", S("tanh")}});
  ValueRef c = g.call("aten.add.Tensor", {A(a), A(b)}, DType::Float32, {10, 20}, {{"alpha", F(0.5)}});
  ValueRef d = g.call("aten.clamp.default", {A(c), F(-0.25), F(1.5)}, DType::Float32, {10, 20});
  ValueRef w = g.call("aten.where.self", {A(g.call("aten.gt.Scalar", {A(x), F(0.0)}, DType::Bool, {10, 20})),
                                          A(d), A(x)},
                      DType::Float32, {10, 20});
  g.output(w);
  test::expect_matches(test::run_on_cpu(g.graph(), GetParam()), 1e-5, 1e-6);
}

TEST_P(CpuNumerics, ConcatenationSeamsInAndBetweenVectorGroups) {
  // rotate-half's cat with its seam on and off a vector-group boundary (4 f32 / 8 bf16 lanes), and rows whose length
  // is not a multiple of the width.
  test::expect_matches(test::run_on_cpu(test::rope_graph(6, 128, 64), GetParam()), 1e-6, 1e-6);
  test::expect_matches(test::run_on_cpu(test::rope_graph(6, 96, 59), GetParam()), 1e-6, 1e-6);
  test::expect_matches(test::run_on_cpu(test::rope_graph(5, 64, 32, DType::BFloat16), GetParam()), 1e-2, 1e-2);
  test::expect_matches(test::run_on_cpu(test::rope_graph(3, 30, 13), GetParam()), 1e-6, 1e-6);
}

TEST_P(CpuNumerics, ColumnReductionsWithRowSlicesPerBlock) {
  // Few outputs (100 and 3, so the last block is ragged, and 40 bools) over many rows: a block holds TX outputs x
  // TY row slices that meet in shared memory. var keeps its mean in a register for its second reduction. Unsplit,
  // so the slices see the whole column.
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {1000, 100});
  ValueRef y = g.input("y", DType::Float32, {301, 3});
  ValueRef b = g.input("b", DType::Bool, {517, 40});
  g.output(g.call_inferred("s", "aten.sum.dim_IntList", {A(x), L({0})}));
  g.output(g.call_inferred("mx", "aten.amax.default", {A(x), L({0})}));
  g.output(g.call_inferred("v", "aten.var.correction", {A(y), L({0})}, {{"correction", F(1.0)}}));
  g.output(g.call_inferred("any", "aten.any.dim", {A(b), I(0)}));
  CompileOptions o;
  o.target = parse_target(GetParam());
  o.graph_name = "test";
  o.split.enabled = false;
  NumericsCheck r = run_against_reference(g.graph(), o, 3);
  EXPECT_NE(kernels_text(r.compiled->module).find("row slices per block"), std::string::npos)
      << kernels_text(r.compiled->module);
  test::expect_matches(r, 1e-4, 1e-4);
}

TEST_P(CpuNumerics, AlignedGraphsRunAndRefuseMisalignedPointers) {
  // A graph compiled with align 16 runs from 16-byte aligned pointers; an input whose first element is not aligned
  // is refused by name before any kernel runs (its vector accesses were compiled without checks).
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {4, 32});
  g.output(g.call("aten.mul.Tensor", {A(x), A(x)}, DType::Float32, {4, 32}));
  Graph graph = g.graph();
  graph.align = 16;
  CompileOptions o;
  o.target = parse_target(GetParam());
  o.graph_name = "aligned";
  auto compiled = std::make_shared<const CompiledGraph>(compile_graph(graph, o));
  CpuDevice device(o.target);
  GraphRunner runner(compiled, device);
  alignas(16) float in[129], out[128];
  for (int i = 0; i < 129; ++i) in[i] = 0.5f * static_cast<float>(i);
  runner.run({in}, {out});
  EXPECT_EQ(out[5], 6.25f);
  try {
    runner.run({in + 1}, {out});
    ADD_FAILURE() << "a misaligned input ran";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("input 0 ('in0') is not 16-byte aligned"), std::string::npos) << e.what();
  }
}

TEST_P(CpuNumerics, TypePromotionAndConversion) {
  test::GraphBuilder g;
  ValueRef i = g.input("i", DType::Int64, {12});
  ValueRef h = g.input("h", DType::BFloat16, {12});
  ValueRef a = g.call("aten.add.Tensor", {A(i), A(h)}, DType::BFloat16, {12});
  ValueRef d = g.call("aten.div.Tensor", {A(i), I(3)}, DType::Float32, {12});
  ValueRef c = g.call("prims.convert_element_type.default", {A(d), Arg::of(DType::Int32)}, DType::Int32, {12});
  g.output(a);
  g.output(d);
  g.output(c);
  test::expect_matches(test::run_on_cpu(g.graph(), GetParam()), 1e-6, 1e-6);
}

INSTANTIATE_TEST_SUITE_P(WarpWidths, CpuNumerics, ::testing::Values("cpu", "cpu-w64"),
                         [](const auto& info) { return info.param == "cpu" ? std::string("w32") : std::string("w64"); });

}  // namespace
}  // namespace hi
