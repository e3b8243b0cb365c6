// Numerical runs: emitted HIP source compiled for the cpu device (warp widths 32 and 64, so both the NVIDIA/RDNA and
// the CDNA code shapes execute), compared with the reference interpreter.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

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

/// Options for `target` with split_reductions off, so a kernel sees whole rows or columns.
CompileOptions unsplit(const std::string& target, const std::string& graph_name = "test") {
  CompileOptions o;
  o.target = parse_target(target);
  o.graph_name = graph_name;
  o.split.enabled = false;
  return o;
}

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
  CompileOptions o = unsplit(GetParam());
  CompiledGraph c = generate(test::softmax_graph(2, 40000), o);
  EXPECT_NE(kernels_text(c.module).find("cg < 10000; cg += 1024"), std::string::npos) << kernels_text(c.module);
  test::expect_matches(run_against_reference(test::softmax_graph(2, 40000), o), 1e-5, 1e-6);
  test::expect_matches(run_against_reference(test::layer_norm_graph(2, 36000, true, DType::BFloat16), o), 3e-2, 2e-2);
}

TEST_P(CpuNumerics, RowsOfLengthsNoVectorDividesArePeeled) {
  // 40003 f32 / 36001 bf16 / 33001 f32 columns: the rows start at every offset modulo the vector width (4 for f32,
  // 8 for bf16), so each row runs its scalar head up to the first aligned column, vector groups, then its scalar
  // tail. (The cpu device moves unaligned vectors as they are; the alignment itself is checked by the golden source.)
  // LayerNorm's weights, indexed by the column alone, are out of phase with the rows: it keeps one column per thread.
  CompileOptions o = unsplit(GetParam());
  const Graph ln = test::layer_norm_graph(9, 36001, true, DType::BFloat16);
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {7, 33001});
  g.output(g.call("aten.sum.dim_IntList", {A(x), L({-1})}, DType::Float32, {7}));
  const std::vector<std::pair<Graph, bool>> cases{{test::softmax_graph(5, 40003), true},
                                                  {test::softmax_graph(9, 36001, DType::BFloat16), true},
                                                  {g.graph(), true},
                                                  {ln, false}};
  for (const auto& [g, peeled] : cases) {
    const std::string text = kernels_text(generate(g, o).module);
    EXPECT_EQ(text.find("cg < ngroups") != std::string::npos, peeled) << text;
    EXPECT_EQ(text.find("const int head = ") != std::string::npos, peeled) << text;
  }
  for (const auto& [graph, peeled] : cases) {
    SCOPED_TRACE(peeled ? "peeled" : "layer norm");
    test::expect_matches(run_against_reference(graph, o), 2e-2, 1e-4);
  }
  // Tighter for the f32 cases.
  test::expect_matches(run_against_reference(test::softmax_graph(5, 40003), o), 1e-5, 1e-8);
  test::expect_matches(run_against_reference(g.graph(), o), 1e-5, 1e-3);
}

TEST_P(CpuNumerics, PersistentRowsOfOddWidthsArePeeled) {
  // Rows held in registers whose length no vector width divides start at every offset modulo V: each row's columns
  // before its first aligned one and after its last whole group go one per lane, the rest in vector groups. Every dtype class, rows of a warp or less sharing blocks (33, 37 columns), rows of a whole block (16385),
  // and rows too short to peel (1 to 9 columns).
  CompileOptions o = unsplit(GetParam());
  test::GraphBuilder g;
  auto row_op = [&](const char* op, const char* name, DType dt, int64_t rows, int64_t cols) {
    ValueRef x = g.input(std::string("x_") + name, dt, {rows, cols});
    g.output(std::string(op) == "aten.any.dim" ? g.call_inferred(name, op, {A(x), I(-1)})
                                                : g.call_inferred(name, op, {A(x), L({-1})}));
  };
  row_op("aten.sum.dim_IntList", "sum_f32", DType::Float32, 9, 4099);
  row_op("aten.amax.default", "amax_bf16", DType::BFloat16, 9, 4093);
  row_op("aten.sum.dim_IntList", "sum_f16", DType::Float16, 13, 33);
  row_op("aten.sum.dim_IntList", "sum_f64", DType::Float64, 10, 4099);
  row_op("aten.sum.dim_IntList", "sum_i32", DType::Int32, 11, 4099);
  row_op("aten.any.dim", "any_bool", DType::Bool, 12, 4099);
  row_op("aten.sum.dim_IntList", "sum_bf16_long", DType::BFloat16, 3, 16385);
  for (int64_t cols : {1, 2, 3, 7, 8, 9})
    row_op("aten.sum.dim_IntList", ("sum_short" + std::to_string(cols)).c_str(), DType::BFloat16, 5, cols);
  // LayerNorm's weights, indexed by the column alone, are out of phase with the rows: staged in shared memory once
  // per block, which lets the rows be peeled, where they fit beside a multiprocessor's 16 warps of such blocks:
  // 4099 bf16 columns in blocks of 128 threads on the H200's 228 KB but not in a CDNA CU's 64 KiB; 1027 f32 columns
  // on both (one row of 64 threads per block where warps are 32 wide, four per block of 256 on wave64).
  const bool w32 = std::string(GetParam()) == "cpu";
  const Graph ln = test::layer_norm_graph(9, 4099, true, DType::BFloat16);
  const std::vector<std::pair<Graph, size_t>> cases{{g.graph(), 7},
                                                    {test::softmax_graph(9, 4099, DType::BFloat16), 1},
                                                    {test::softmax_graph(13, 37), 1},
                                                    {ln, w32 ? 1 : 0},
                                                    {test::layer_norm_graph(11, 1027, true), 1}};
  for (const auto& [graph, peeled] : cases) {
    NumericsCheck r = run_against_reference(graph, o, 5);
    const std::string text = kernels_text(r.compiled->module);
    size_t skews = 0;
    for (size_t at = text.find("const int nedge = "); at != std::string::npos; at = text.find("const int nedge = ", at + 1))
      ++skews;
    EXPECT_EQ(skews, peeled) << text;
    const bool staged = &graph == &cases[3].first ? w32 : &graph == &cases[4].first;  // the layer norms
    EXPECT_EQ(text.find(" stg_") != std::string::npos, staged) << text;
    if (peeled == 1)  // one kernel: no access of one element at a time
      for (const char* scalar : {"vec<1>", "vec<1,", "aligned<1>", "aligned<1,"})
        EXPECT_EQ(text.find(scalar), std::string::npos) << scalar << "\n" << text;
    test::expect_matches(r, 2e-2, 1e-3);
  }
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

/// Compiles `g` (a few rows longer than registers hold) as one row-loop kernel, unsplit (so few rows would otherwise
/// become partial reductions first), checks that its source says `expected`, and runs it against the reference.
void expect_one_pass_row_loop(const Graph& g, const std::string& target, const std::string& expected, double rtol,
                              double atol) {
  CompileOptions o = unsplit(target);
  CompiledGraph c = generate(g, o);
  ASSERT_EQ(c.module.kernels.size(), 1u);
  EXPECT_NE(kernels_text(c.module).find(expected), std::string::npos) << kernels_text(c.module);
  test::expect_matches(run_against_reference(g, o), rtol, atol);
}

TEST_P(CpuNumerics, SoftmaxOverRowsLongerThanRegistersIsOnePassPlusTheOutput) {
  // 40000 floats per row stream through a 1024-thread block: max and sum(exp(x - max)) are one online pass.
  expect_one_pass_row_loop(test::softmax_graph(3, 40000), GetParam(), "hi_online_softmax_op<0>::add", 1e-5, 1e-8);
}

TEST_P(CpuNumerics, OnlineSoftmaxKeepsEagersInfinitiesAndNaNs) {
  // softmax over 40000-float rows (one online pass): a row of -inf gives NaN, -inf entries give 0, a NaN makes its
  // row NaN, a huge value takes all the weight; as torch.softmax does.
  constexpr int64_t kCols = 40000;
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {5, kCols});
  g.output(g.call("aten._softmax.default", {A(x), I(-1), B(false)}, DType::Float32, {5, kCols}));
  CompileOptions o = unsplit(GetParam(), "online_softmax");
  auto compiled = std::make_shared<const CompiledGraph>(compile_graph(g.graph(), o));
  ASSERT_NE(kernels_text(compiled->module).find("hi_online_softmax_op<1>::add"), std::string::npos);
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> in(5 * kCols), out(5 * kCols, 7.0f);
  for (int64_t c = 0; c < kCols; ++c) {
    float v = static_cast<float>((c * 7919) % 1000) / 100.0f - 5.0f;
    in[c] = -inf;                                  // row 0: all -inf
    in[kCols + c] = c % 3 == 0 ? -inf : v;         // row 1: some -inf
    in[2 * kCols + c] = c == 123 ? NAN : v;        // row 2: one NaN
    in[3 * kCols + c] = c == 777 ? 1e30f : v;      // row 3: one huge value
    in[4 * kCols + c] = v;                         // row 4: plain
  }
  CpuDevice device(o.target);
  GraphRunner runner(compiled, device);
  runner.run({in.data()}, {out.data()});
  for (int64_t row : {1, 4}) {
    double m = -inf, sum = 0;
    for (int64_t c = 0; c < kCols; ++c) m = std::max<double>(m, in[row * kCols + c]);
    for (int64_t c = 0; c < kCols; ++c) sum += std::exp(in[row * kCols + c] - m);
    for (int64_t c = 0; c < kCols; c += 997) {
      double want = std::exp(in[row * kCols + c] - m) / sum;
      EXPECT_NEAR(out[row * kCols + c], want, 1e-5 * want + 1e-12) << "row " << row << " col " << c;
    }
  }
  for (int64_t c = 0; c < kCols; c += 997) {
    EXPECT_TRUE(std::isnan(out[c])) << "all -inf row, col " << c;
    EXPECT_TRUE(std::isnan(out[2 * kCols + c])) << "row with a NaN, col " << c;
    EXPECT_EQ(out[3 * kCols + c], 0.0f) << "col " << c;
  }
  EXPECT_EQ(out[kCols], 0.0f) << "an -inf entry";
  EXPECT_EQ(out[3 * kCols + 777], 1.0f);

  // The row sums themselves, when a graph returns them: eager's sum(exp(x - max)) over a row of -inf is NaN.
  test::GraphBuilder d;
  ValueRef dx = d.input("x", DType::Float32, {5, kCols});
  ValueRef mx = d.call("aten.amax.default", {A(dx), L({-1}), B(true)}, DType::Float32, {5, 1});
  ValueRef sub = d.call("aten.sub.Tensor", {A(dx), A(mx)}, DType::Float32, {5, kCols});
  ValueRef ex = d.call("aten.exp.default", {A(sub)}, DType::Float32, {5, kCols});
  d.output(d.call("aten.sum.dim_IntList", {A(ex), L({-1}), B(true)}, DType::Float32, {5, 1}));
  auto sums = std::make_shared<const CompiledGraph>(compile_graph(d.graph(), o));
  ASSERT_NE(kernels_text(sums->module).find("hi_online_softmax_op<0>::add"), std::string::npos);
  std::vector<float> s(5, 7.0f);
  GraphRunner(sums, device).run({in.data()}, {s.data()});
  EXPECT_TRUE(std::isnan(s[0])) << s[0];
  EXPECT_TRUE(std::isnan(s[2])) << s[2];
  EXPECT_NEAR(s[3], 1.0f, 1e-6);
  EXPECT_GT(s[4], 1.0f);
}

TEST_P(CpuNumerics, LayerNormOverRowsLongerThanRegistersTakesOneWelfordPass) {
  // 40000 floats per row: the sum and the sum of squared deviations come from one Welford pass; out, mean and
  // rstd as the reference computes them.
  expect_one_pass_row_loop(test::layer_norm_graph(3, 40000, true), GetParam(), "hi_welford_op::add", 1e-4, 1e-5);
}

TEST_P(CpuNumerics, TransposedOutputsWalkedInMemoryOrder) {
  NumericsCheck r = test::run_on_cpu(test::transposed_rope_graph(2, 6, 3, 8), GetParam());
  ASSERT_EQ(r.actual.size(), 1u);
  EXPECT_FALSE(r.compiled->program.kernels.at(0).loop_order.empty());
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
  CompileOptions o = unsplit(GetParam());
  NumericsCheck r = run_against_reference(g.graph(), o, 3);
  EXPECT_NE(kernels_text(r.compiled->module).find("row slices per block"), std::string::npos)
      << kernels_text(r.compiled->module);
  test::expect_matches(r, 1e-4, 1e-4);
}

TEST_P(CpuNumerics, ColumnReductionsWithVectorRowSlices) {
  // One reduction per kernel over vector groups too few to fill the GPU: TX groups of V outputs x TY row slices
  // per block. 200 f32 columns (50 groups of 4 in 64 lanes: a ragged block), 64 bf16 columns (8 groups of 8, a max),
  // 6 int64 columns (3 groups of 2), 48 f16 columns (6 groups of 8, a sum in float), 32 int8 columns (4 groups of 8,
  // a min accumulated in int), 12 f32 columns (a product). Unsplit, so the slices see the whole column.
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {1000, 200});
  ValueRef h = g.input("h", DType::BFloat16, {513, 64});
  ValueRef n = g.input("n", DType::Int64, {300, 6});
  ValueRef f = g.input("f", DType::Float16, {300, 48});
  ValueRef c = g.input("c", DType::Int8, {301, 32});
  ValueRef p = g.input("p", DType::Float32, {40, 12});
  g.output(g.call_inferred("s", "aten.sum.dim_IntList", {A(x), L({0})}));
  g.output(g.call_inferred("mx", "aten.amax.default", {A(h), L({0})}));
  g.output(g.call_inferred("ns", "aten.sum.dim_IntList", {A(n), L({0})}));
  g.output(g.call_inferred("fs", "aten.sum.dim_IntList", {A(f), L({0})}));
  g.output(g.call_inferred("cm", "aten.amin.default", {A(c), L({0})}));
  g.output(g.call_inferred("pp", "aten.prod.dim_int", {A(p), I(0)}));
  CompileOptions o = unsplit(GetParam());
  NumericsCheck r = run_against_reference(g.graph(), o, 3);
  const std::string text = kernels_text(r.compiled->module);
  for (const char* shape : {"4 outputs per thread, 8 threads x 128 row slices", "8 outputs per thread, 8 threads x 128",
                            "2 outputs per thread, 4 threads x 64 row slices", "8 outputs per thread, 8 threads x 64",
                            "8 outputs per thread, 4 threads x 64", "4 outputs per thread, 4 threads x 8"})
    EXPECT_NE(text.find(shape), std::string::npos) << shape << "\n" << text;
  test::expect_matches(r, 1e-4, 1e-4);
}

TEST_P(CpuNumerics, ColumnReductionsComputeTheirEpiloguesInEveryForm) {
  // relu(sum(x, 0) * 0.5 + bias) and a bf16 mean (a sum, a division, a cast): the epilogues run in the column kernel,
  // from the results in registers, in each kernel form: vector row slices (256 f32 columns: 64 groups of 4; 64 bf16
  // columns), row slices (37 columns, no vector width), one group of 4 outputs per thread (65536 f32 columns) and
  // one output per thread (40001 columns), the sum a graph output too in two of them, and exp of the scaled sum
  // both returned and doubled. Unsplit, and split into two stages (the second takes the epilogues).
  for (const bool split : {false, true}) {
    test::GraphBuilder g;
    const std::vector<std::pair<int64_t, int64_t>> shapes = {{300, 256}, {301, 37}, {5, 65536}, {6, 40001}};
    for (size_t n = 0; n < shapes.size(); ++n) {
      const auto [rows, cols] = shapes[n];
      const std::string tag = std::to_string(n);
      ValueRef x = g.input("x" + tag, DType::Float32, {rows, cols});
      ValueRef bias = g.input("b" + tag, DType::Float32, {cols});
      ValueRef s = g.call_inferred("s" + tag, "aten.sum.dim_IntList", {A(x), L({0})});
      ValueRef h = g.call_inferred("h" + tag, "aten.mul.Tensor", {A(s), F(0.5)});
      ValueRef a = g.call_inferred("a" + tag, "aten.add.Tensor", {A(h), A(bias)});
      g.output(g.call_inferred("r" + tag, "aten.relu.default", {A(a)}));
      if (n % 2 == 0) g.output(s);  // stored too: the epilogue still reads it from the register
      // An epilogue returned and read by another: exp's output is stored, and the product reads it from the register.
      ValueRef e = g.call_inferred("e" + tag, "aten.exp.default", {A(h)});
      g.output(e);
      g.output(g.call_inferred("m" + tag, "aten.mul.Tensor", {A(e), F(2.0)}));
    }
    ValueRef m = g.input("m", DType::BFloat16, {513, 64});
    g.output(g.call_inferred("mean", "aten.mean.dim", {A(m), L({0})}));
    CompileOptions o = unsplit(GetParam());
    o.split.enabled = split;
    NumericsCheck r = run_against_reference(g.graph(), o, 3);
    const std::string text = kernels_text(r.compiled->module);
    if (!split) {
      // One kernel per output: each epilogue joined its reduction.
      EXPECT_EQ(r.compiled->module.kernels.size(), shapes.size() + 1) << text;
      for (const char* shape : {"4 outputs per thread, 8 threads x", "row slices per block", "// 4 outputs per thread",
                                "i < 40001"})
        EXPECT_NE(text.find(shape), std::string::npos) << shape << "\n" << text;
    }
    test::expect_matches(r, 1e-4, 1e-2);
  }
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
