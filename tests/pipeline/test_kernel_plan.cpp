// Kernel plans (codegen/kernel_plan.h): the shape and launch plan_kernel chooses for representative graphs, checked
// on the plan's fields, without printing any source.
#include <gtest/gtest.h>

#include "codegen/kernel_plan.h"
#include "lowering/fuse_kernels.h"
#include "lowering/lower_graph.h"
#include "lowering/plan_memory.h"
#include "tests/common/graph_builder.h"

namespace hi {
namespace {

using test::A;
using test::F;
using test::L;
using test::S;

/// The plans of `g`'s kernels for `arch`, lowered as the pipeline does (without splitting reductions, so that each
/// test sees the reduction it builds).
std::vector<KernelPlan> plans(const Graph& g, const std::string& arch = "sm_90") {
  LoopProgram p = lower_graph(g);
  fuse_kernels(p);
  plan_memory(p);
  std::vector<KernelPlan> out;
  for (const Kernel& k : p.kernels) out.push_back(plan_kernel(p, k, parse_target(arch)));
  return out;
}

KernelPlan only_plan(const Graph& g, const std::string& arch = "sm_90") {
  std::vector<KernelPlan> all = plans(g, arch);
  EXPECT_EQ(all.size(), 1u);
  return all.at(0);
}

Graph add_relu_graph(DType dt, std::vector<Index> s) {
  test::GraphBuilder g;
  ValueRef x = g.input("x", dt, s);
  ValueRef y = g.input("y", dt, s);
  ValueRef a = g.call("aten.add.Tensor", {A(x), A(y)}, dt, s);
  g.output(g.call("aten.relu.default", {A(a)}, dt, s));
  return g.graph();
}

Graph unary_graph(const std::string& op, DType dt, std::vector<Index> s, test::GraphBuilder::Kwargs kw = {}) {
  test::GraphBuilder g;
  ValueRef x = g.input("x", dt, s);
  g.output(g.call(op, {A(x)}, dt, s, std::move(kw)));
  return g.graph();
}

Graph column_sum_graph(int64_t rows, int64_t cols) {
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {rows, cols});
  g.output(g.call("aten.sum.dim_IntList", {A(x), L({0})}, DType::Float32, {cols}));
  return g.graph();
}

TEST(KernelPlan, AddReluF32TakesFourLanesAndTwoGroups) {
  KernelPlan plan = only_plan(add_relu_graph(DType::Float32, {4096, 4096}));
  EXPECT_EQ(plan.kind, KernelKind::Pointwise);
  EXPECT_EQ(plan.block, 128);
  EXPECT_TRUE(plan.whole_grid);
  const auto& pw = std::get<PointwisePlan>(plan.shape);
  EXPECT_EQ(pw.form, PointwisePlan::Form::VectorGroups);
  EXPECT_EQ(pw.width, 4) << pw.width_reason;  // 16 bytes of f32
  // 32 bytes in flight per operand and thread are 2 groups of 4 f32 (at most 4 groups' load arrays per thread
  // would leave 2 each too).
  EXPECT_EQ(pw.groups_per_thread, 2) << pw.groups_reason;
  EXPECT_NE(pw.groups_reason.find("32 bytes"), std::string::npos) << pw.groups_reason;
  EXPECT_EQ(pw.groups, 4096 * 4096 / 4);
  EXPECT_EQ(plan.grid, Index(4096 * 4096 / 4 / (128 * 2)));
  EXPECT_TRUE(plan.hints.empty());
  EXPECT_FALSE(plan.needs_sync);
}

TEST(KernelPlan, GeluBf16TakesEightLanesAndTwoGroups) {
  KernelPlan plan = only_plan(unary_graph("aten.gelu.default", DType::BFloat16, {2048, 1024},
                                          {{"approximate", S("tanh")}}));
  const auto& pw = std::get<PointwisePlan>(plan.shape);
  EXPECT_EQ(pw.width, 8) << pw.width_reason;  // 16 bytes of bf16
  // One operand: 32 bytes in flight per thread are 2 groups of 8 bf16.
  EXPECT_EQ(pw.groups_per_thread, 2) << pw.groups_reason;
  EXPECT_NE(pw.groups_reason.find("32 bytes"), std::string::npos) << pw.groups_reason;
}

TEST(KernelPlan, MixedWidthStreamsTakeOneWholeAccessPerGroupForTheWidest) {
  // masked_fill: a bool mask beside f32 data. 8 lanes would move each f32 group as two 16-byte chunks per thread,
  // strided across the wave; 4 lanes give f32 one 16-byte and the mask one 4-byte access per group.
  {
    test::GraphBuilder g;
    ValueRef x = g.input("x", DType::Float32, {4096, 4096});
    ValueRef m = g.input("m", DType::Bool, {4096, 4096});
    g.output(g.call("aten.where.self", {A(m), A(g.call("aten.mul.Scalar", {A(x), F(0.0)}, DType::Float32, {4096, 4096})),
                                        A(x)},
                    DType::Float32, {4096, 4096}));
    // A copy: only_plan returns a temporary, and a reference into it dangles past this statement.
    const PointwisePlan pw = std::get<PointwisePlan>(only_plan(g.graph()).shape);
    EXPECT_EQ(pw.width, 4) << pw.width_reason;
    EXPECT_NE(pw.width_reason.find("narrowest keeps 4"), std::string::npos) << pw.width_reason;
    EXPECT_EQ(pw.groups_per_thread, 2) << pw.groups_reason;
  }
  // bf16 in, f32 out: f32's 16 bytes set 4 lanes (8 bytes of bf16).
  {
    test::GraphBuilder g;
    ValueRef x = g.input("x", DType::BFloat16, {1024, 1024});
    g.output(g.call("prims.convert_element_type.default", {A(x), Arg::of(DType::Float32)}, DType::Float32,
                    {1024, 1024}));
    EXPECT_EQ(std::get<PointwisePlan>(only_plan(g.graph()).shape).width, 4);
  }
  // A bool mask beside f64: 2 lanes would read the mask 2 bytes at a time; 4 keep its 4-byte accesses.
  {
    test::GraphBuilder g;
    ValueRef x = g.input("x", DType::Float64, {1024, 1024});
    ValueRef m = g.input("m", DType::Bool, {1024, 1024});
    g.output(g.call("aten.where.self", {A(m), A(x), A(g.call("aten.neg.default", {A(x)}, DType::Float64, {1024, 1024}))},
                    DType::Float64, {1024, 1024}));
    EXPECT_EQ(std::get<PointwisePlan>(only_plan(g.graph()).shape).width, 4);
  }
}

TEST(KernelPlan, TranscendentalsOverFewElementsNarrowVectorsAndGroups) {
  // sin over 128k bf16: 8 lanes would leave 16k threads; narrowed until 64k threads share the work.
  KernelPlan plan = only_plan(unary_graph("aten.sin.default", DType::BFloat16, {1024, 128}));
  const auto& pw = std::get<PointwisePlan>(plan.shape);
  EXPECT_EQ(pw.width, 2) << pw.width_reason;
  EXPECT_EQ(pw.groups_per_thread, 1) << pw.groups_reason;
  EXPECT_NE(pw.width_reason.find("transcendental"), std::string::npos) << pw.width_reason;
  // The same op over many elements keeps the full width.
  KernelPlan wide = only_plan(unary_graph("aten.sin.default", DType::BFloat16, {4096, 4096}));
  EXPECT_EQ(std::get<PointwisePlan>(wide.shape).width, 8);
}

TEST(KernelPlan, TransposedReadGoesThroughTiles) {
  // x read through its transpose (strides 1, 64) added to a contiguous y: loads of x are contiguous along the
  // second-innermost dim only, the store along the innermost.
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {64, 128}, {1, 64});
  ValueRef y = g.input("y", DType::Float32, {64, 128});
  g.output(g.call("aten.add.Tensor", {A(x), A(y)}, DType::Float32, {64, 128}));
  KernelPlan plan = only_plan(g.graph());
  const auto& pw = std::get<PointwisePlan>(plan.shape);
  ASSERT_EQ(pw.form, PointwisePlan::Form::TransposedTiles) << to_string(plan);
  EXPECT_EQ(pw.tiled_loads.size(), 1u);
  EXPECT_EQ(pw.tile_p, 64);
  EXPECT_EQ(pw.tile_q, 128);
  EXPECT_EQ(plan.block, pw.tile * pw.tile_rows);
  EXPECT_EQ(plan.grid, Index(64 / pw.tile * (128 / pw.tile)));
  EXPECT_TRUE(plan.needs_sync);
}

TEST(KernelPlan, ConcatenationSelectsItsVectorLoad) {
  KernelPlan plan = only_plan(test::rope_graph(64, 128, 64, DType::BFloat16));
  const auto& pw = std::get<PointwisePlan>(plan.shape);
  ASSERT_EQ(pw.selected_loads.size(), 1u) << to_string(plan);
  EXPECT_EQ(pw.selected_loads[0].comparison, "<");
  EXPECT_EQ(pw.selected_loads[0].bound, 64);
  // A seam inside vector groups (59 of 96) selects nothing.
  KernelPlan straddling = only_plan(test::rope_graph(64, 96, 59, DType::BFloat16));
  EXPECT_TRUE(std::get<PointwisePlan>(straddling.shape).selected_loads.empty());
}

/// max_pool2d_with_indices(x, k, stride, padding)'s values of x [n, c, h, w] (the indices stay in registers).
Graph max_pool_graph(DType dt, int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t s, int64_t pad) {
  test::GraphBuilder g;
  ValueRef x = g.input("x", dt, {n, c, h, w});
  const int64_t oh = (h + 2 * pad - k) / s + 1, ow = (w + 2 * pad - k) / s + 1;
  ValueRef m = g.call_multi("aten.max_pool2d_with_indices.default", {A(x), L({k, k}), L({s, s}), L({pad, pad})},
                            {{dt, {n, c, oh, ow}}, {DType::Int64, {n, c, oh, ow}}});
  g.output(m);
  return g.graph();
}

TEST(KernelPlan, WindowGathersTakeTheLanesTouchingFewestCacheLines) {
  // 3x3 windows of stride 2 over f32: groups of 4 lanes would spread each tap's wave-wide load over 8 lines (lanes
  // 32 bytes apart per thread), one element per thread keeps it to 2.
  KernelPlan plan = only_plan(max_pool_graph(DType::Float32, 2, 8, 64, 64, 3, 2, 1));
  const auto& pw = std::get<PointwisePlan>(plan.shape);
  EXPECT_EQ(pw.width, 1) << to_string(plan);
  EXPECT_EQ(pw.form, PointwisePlan::Form::Elements);
  EXPECT_NE(pw.width_reason.find("cache lines"), std::string::npos) << pw.width_reason;
  // 2x2 average pooling over bf16 likewise: 8 lanes of stride-2 taps touch four times the lines of one.
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::BFloat16, {2, 8, 64, 64});
  g.output(g.call("aten.avg_pool2d.default", {A(x), L({2, 2})}, DType::BFloat16, {2, 8, 32, 32}));
  KernelPlan avg = only_plan(g.graph());
  EXPECT_LT(std::get<PointwisePlan>(avg.shape).width, 8) << to_string(avg);
  // Contiguous kernels and broadcasts (uniform lanes) are not affected.
  test::GraphBuilder b;
  ValueRef y = b.input("y", DType::Float32, {1024, 1024});
  ValueRef r = b.input("r", DType::Float32, {1024, 1});
  b.output(b.call("aten.add.Tensor", {A(y), A(r)}, DType::Float32, {1024, 1024}));
  EXPECT_EQ(std::get<PointwisePlan>(only_plan(b.graph()).shape).width, 4);
}

TEST(KernelPlan, ScatteredElementsTakeTwoPerThreadUnlessTheyStoreWideValues) {
  // avg_pool2d over bf16 [32, 64, 112, 112]: taps gathered one element per thread, two elements per thread a block
  // apart (measured faster: threads of one element live too briefly), so half the blocks.
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::BFloat16, {32, 64, 112, 112});
  g.output(g.call("aten.avg_pool2d.default", {A(x), L({2, 2})}, DType::BFloat16, {32, 64, 56, 56}));
  KernelPlan avg = only_plan(g.graph());
  const auto& pw = std::get<PointwisePlan>(avg.shape);
  ASSERT_EQ(pw.form, PointwisePlan::Form::Elements) << to_string(avg);
  EXPECT_EQ(pw.groups_per_thread, 2) << pw.groups_reason;
  EXPECT_EQ(avg.grid, Index(32 * 64 * 56 * 56 / 256));
  // Storing max pooling's int64 positions: one per thread (two measured slower).
  test::GraphBuilder m;
  ValueRef y = m.input("y", DType::BFloat16, {32, 64, 112, 112});
  ValueRef pooled = m.call_multi("aten.max_pool2d_with_indices.default", {A(y), L({2, 2})},
                                 {{DType::BFloat16, {32, 64, 56, 56}}, {DType::Int64, {32, 64, 56, 56}}});
  m.output(pooled);
  m.output(ValueRef{pooled.node, 1});
  KernelPlan with_indices = only_plan(m.graph());
  const auto& wi = std::get<PointwisePlan>(with_indices.shape);
  ASSERT_EQ(wi.form, PointwisePlan::Form::Elements) << to_string(with_indices);
  EXPECT_EQ(wi.groups_per_thread, 1) << to_string(with_indices);
  // Few elements keep their threads.
  KernelPlan small = only_plan(max_pool_graph(DType::Float32, 2, 8, 64, 64, 3, 2, 1));
  EXPECT_EQ(std::get<PointwisePlan>(small.shape).groups_per_thread, 1) << to_string(small);
}

TEST(KernelPlan, SoftmaxOver1024F32IsPersistentWithThreadsPerRowByWaveWidth) {
  // 256 groups of 4 per row. Warps of 32: past 4 warps' worth, so about 16 values per thread (64 threads), a row
  // per block. Wavefronts of 64: 256 groups fit 4 waves' worth, so one wave per row, 4 rows per 256-thread block.
  KernelPlan nv = only_plan(test::softmax_graph(4096, 1024), "sm_90");
  const auto& r32 = std::get<RowPlan>(nv.shape);
  EXPECT_EQ(r32.form, RowPlan::Form::Persistent);
  EXPECT_EQ(r32.width, 4);
  EXPECT_EQ(r32.threads, 64) << r32.threads_reason;
  EXPECT_EQ(r32.groups_per_thread, 4);
  EXPECT_EQ(r32.rows_per_block, 1);
  EXPECT_EQ(nv.block, 64);
  EXPECT_EQ(nv.grid, Index(4096));
  EXPECT_FALSE(nv.whole_grid);  // softmax writes its rows: capped at resident waves
  EXPECT_FALSE(r32.reads_only);

  KernelPlan amd = only_plan(test::softmax_graph(4096, 1024), "gfx90a");
  const auto& r64 = std::get<RowPlan>(amd.shape);
  EXPECT_EQ(r64.form, RowPlan::Form::Persistent);
  EXPECT_EQ(r64.threads, 64) << r64.threads_reason;
  EXPECT_EQ(r64.rows_per_block, 4) << r64.rows_reason;
  EXPECT_EQ(amd.block, 256);
  EXPECT_EQ(amd.grid, Index(1024));
  // exp(x - max) feeds both the sum and the output: computed once, by the sum (computation 1), and kept.
  ASSERT_EQ(r32.cached_values.size(), 1u) << to_string(nv);
  EXPECT_EQ(r32.cached_values[0].first, 1u);
  // x is read by the max, the sum and the output: once per row into registers.
  ASSERT_EQ(r32.row_loads.size(), 1u);
  EXPECT_EQ(r32.row_loads[0].users.size(), 3u);
  // Rows held in registers and written back take no eviction hint.
  for (const auto& [buffer, h] : amd.hints) EXPECT_EQ(h.row_indexed, "") << h.reason;
}

TEST(KernelPlan, LayerNormHoldsItsRowOnceAndLoadsWeightsInTheirPhase) {
  KernelPlan plan = only_plan(test::layer_norm_graph(4096, 1024, false));
  const auto& rows = std::get<RowPlan>(plan.shape);
  ASSERT_EQ(rows.form, RowPlan::Form::Persistent);
  ASSERT_EQ(rows.row_loads.size(), 3u) << to_string(plan);  // x, weight, bias
  size_t shared = 0, single = 0;
  for (const RowPlan::RowLoad& l : rows.row_loads) (l.users.size() > 1 ? shared : single) += 1;
  EXPECT_EQ(shared, 1u);
  EXPECT_EQ(single, 2u);
  // The weights are row-free loads: evict-last, as every row reads them.
  for (const auto& [buffer, h] : plan.hints) EXPECT_EQ(h.other, "HI_EVICT_LAST");
}

TEST(KernelPlan, PlainRowSumIsShapedAsTritonsOverTheWholeGrid) {
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {16384, 4096});
  g.output(g.call("aten.sum.dim_IntList", {A(x), L({-1})}, DType::Float32, {16384}));
  KernelPlan plan = only_plan(g.graph());
  const auto& rows = std::get<RowPlan>(plan.shape);
  EXPECT_EQ(rows.form, RowPlan::Form::Persistent);
  EXPECT_TRUE(rows.reads_only);
  EXPECT_TRUE(plan.whole_grid);
  EXPECT_EQ(rows.threads, 512) << rows.threads_reason;  // 8 values per thread
  ASSERT_EQ(plan.hints.size(), 1u);
  EXPECT_EQ(plan.hints.begin()->second.row_indexed, "HI_EVICT_FIRST");
}

TEST(KernelPlan, PlainRowReductionsKeepTwoVectorLoadsPerThread) {
  // 16-bit rows: 8 values are one 16-byte load; each thread takes two (f32 rows' 8 values are two already).
  for (DType dt : {DType::BFloat16, DType::Float16, DType::Float32}) {
    test::GraphBuilder g;
    ValueRef x = g.input("x", dt, {4096, 4096});
    g.output(g.call("aten.amax.default", {A(x), L({-1})}, dt, {4096}));
    KernelPlan plan = only_plan(g.graph());
    const auto& rows = std::get<RowPlan>(plan.shape);
    EXPECT_TRUE(rows.reads_only);
    EXPECT_EQ(rows.groups_per_thread, 2) << dtype_name(dt) << ": " << rows.threads_reason;
    EXPECT_EQ(rows.threads, 4096 / (2 * rows.width)) << dtype_name(dt);
  }
}

TEST(KernelPlan, RowLanesMoveAtMostTwoChunksOfAnyStream) {
  // The bf16 sum of values gathered by int64 indices: the bf16 output would allow 8 lanes, 64 bytes of indices per
  // lane; 4 lanes keep them to two 16-byte chunks.
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::BFloat16, {4096, 4096});
  ValueRef index = g.input("i", DType::Int64, {4096, 1024});
  ValueRef picked = g.call("aten.gather.default", {A(x), test::I(1), A(index)}, DType::BFloat16, {4096, 1024});
  g.output(g.call("aten.sum.dim_IntList", {A(picked), L({-1})}, DType::BFloat16, {4096}));
  KernelPlan plan = only_plan(g.graph());
  const auto& rows = std::get<RowPlan>(plan.shape);
  EXPECT_EQ(rows.width, 4) << rows.width_reason;
  EXPECT_GE(rows.threads, 64) << rows.threads_reason;
}

TEST(KernelPlan, RowOfGpt2VocabularyIsLoopedAndPeeled) {
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::BFloat16, {512, 50257});
  g.output(g.call("aten._log_softmax.default", {A(x), test::I(-1), test::B(false)}, DType::BFloat16, {512, 50257}));
  KernelPlan plan = only_plan(g.graph());
  const auto& rows = std::get<RowPlan>(plan.shape);
  EXPECT_EQ(rows.form, RowPlan::Form::Looped) << rows.form_reason;
  EXPECT_TRUE(rows.peeled) << rows.width_reason;
  EXPECT_EQ(rows.width, 8);
  EXPECT_EQ(plan.block, 1024);
  EXPECT_EQ(plan.grid, Index(512));
  EXPECT_TRUE(plan.needs_sync);
  // A row loop reads x in more than one phase: evict-last.
  ASSERT_FALSE(plan.hints.empty());
  EXPECT_EQ(plan.hints.begin()->second.row_indexed, "HI_EVICT_LAST") << plan.hints.begin()->second.reason;
}

TEST(KernelPlan, FewOutputColumnSumsSliceTheirRows) {
  // 512 outputs in 128 groups of 4: a single reduction too small to fill the GPU slices rows with vector loads.
  KernelPlan vec = only_plan(column_sum_graph(1024, 512));
  const auto& v = std::get<ColumnPlan>(vec.shape);
  EXPECT_EQ(v.form, ColumnPlan::Form::VectorRowSlices) << v.form_reason;
  EXPECT_EQ(v.width, 4);
  EXPECT_EQ(vec.block, v.slices_x * v.slices_y);
  EXPECT_GT(v.slices_y, 1);
  EXPECT_TRUE(vec.needs_sync);
  ASSERT_EQ(vec.hints.size(), 1u);
  EXPECT_EQ(vec.hints.begin()->second.row_indexed, "HI_EVICT_FIRST");
  // 7 outputs: no vector width divides them, so scalar row slices, 8 outputs x 32 slices per block.
  KernelPlan scalar = only_plan(column_sum_graph(4096, 7));
  const auto& s = std::get<ColumnPlan>(scalar.shape);
  EXPECT_EQ(s.form, ColumnPlan::Form::RowSlices) << s.form_reason;
  EXPECT_EQ(s.width, 1);
  EXPECT_EQ(s.slices_x, 8);
  EXPECT_EQ(s.slices_y, 32);
  EXPECT_EQ(scalar.grid, Index(1));
  // Many outputs: one thread per group of 4 neighbouring outputs.
  KernelPlan many = only_plan(column_sum_graph(64, 1 << 20));
  const auto& m = std::get<ColumnPlan>(many.shape);
  EXPECT_EQ(m.form, ColumnPlan::Form::OutputsPerThread);
  EXPECT_EQ(m.width, 4);
  EXPECT_FALSE(many.needs_sync);
}

TEST(KernelPlan, ColumnVectorWidthIsBoundByTheLoads) {
  // any over dim 0 loads f32 (bf16) and stores bool: a lane's V values are 16 bytes of what it loads (V 4 for f32,
  // 8 for bf16), however narrow the stores a column's worth of loads later.
  for (DType dt : {DType::Float32, DType::BFloat16}) {
    SCOPED_TRACE(dtype_name(dt));
    test::GraphBuilder g;
    ValueRef x = g.input("x", dt, {1024, 4096});
    g.output(g.call_inferred("any", "aten.any.dim", {A(x), test::I(0)}));
    KernelPlan plan = only_plan(g.graph());
    const auto& c = std::get<ColumnPlan>(plan.shape);
    EXPECT_EQ(c.width, dt == DType::Float32 ? 4 : 8) << c.width_reason;
    EXPECT_NE(c.width_reason.find("narrowest load"), std::string::npos) << c.width_reason;
  }
}

TEST(KernelPlan, LongMathFunctionsTakeAtMostEightElementsPerThread) {
  // lgamma and digamma are hundreds of instructions per call: 8 elements per thread (bf16: one group of 8; f32: two
  // of 4), where bytes in flight alone would print 16 and 8 calls. exp keeps its groups.
  for (const char* op : {"aten.lgamma.default", "aten.digamma.default"})
    for (DType dt : {DType::BFloat16, DType::Float32}) {
      const auto pw = std::get<PointwisePlan>(only_plan(unary_graph(op, dt, {4096, 4096})).shape);
      EXPECT_EQ(pw.width * pw.groups_per_thread, 8) << op << " " << pw.groups_reason;
      EXPECT_EQ(pw.width, dt == DType::Float32 ? 4 : 8) << op;
    }
  const auto exp =
      std::get<PointwisePlan>(only_plan(unary_graph("aten.exp.default", DType::BFloat16, {4096, 4096})).shape);
  EXPECT_EQ(exp.width * exp.groups_per_thread, 16) << exp.groups_reason;
}

TEST(KernelPlan, RowsOfF32WithAPerRowBoolOutputTakeEightLanes) {
  // all over f32 rows stores one bool per row, the narrowest access: 16 bytes of it allow 8 lanes, two 16-byte f32
  // loads per lane, whether V divides the rows or they are peeled (vector_width says why that stays).
  for (int64_t cols : {4096, 4099}) {
    test::GraphBuilder g;
    ValueRef x = g.input("x", DType::Float32, {4093, cols});
    g.output(g.call_inferred("all", "aten.all.dim", {A(x), test::I(-1)}));
    const RowPlan rows = std::get<RowPlan>(only_plan(g.graph()).shape);
    EXPECT_EQ(rows.width, 8) << cols << ": " << rows.width_reason;
    EXPECT_EQ(rows.peeled, cols % 8 != 0) << rows.width_reason;
  }
}

TEST(KernelPlan, RowLoopsTakeSoftmaxAndLayerNormStatisticsInOnePass) {
  // Softmax over rows too long for registers: max and sum(exp(x - max)) in one online pass; its output divides by
  // the denominator through one reciprocal per row.
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::BFloat16, {512, 65536});
  g.output(g.call("aten._softmax.default", {A(x), test::I(-1), test::B(false)}, DType::BFloat16, {512, 65536}));
  KernelPlan softmax = only_plan(g.graph());
  const auto& rows = std::get<RowPlan>(softmax.shape);
  ASSERT_EQ(rows.form, RowPlan::Form::Looped);
  ASSERT_EQ(rows.one_pass.size(), 1u) << to_string(softmax);
  EXPECT_EQ(rows.one_pass[0].first, 0u);
  EXPECT_TRUE(rows.one_pass[0].online_softmax);
  EXPECT_EQ(softmax.reciprocal_divisors.size(), 1u) << to_string(softmax);
  // LayerNorm over such rows: sum(x) and sum((x - mean)^2) in one Welford pass; nothing divides by a softmax sum.
  KernelPlan norm = only_plan(test::layer_norm_graph(512, 65536, true));
  const auto& norm_rows = std::get<RowPlan>(norm.shape);
  ASSERT_EQ(norm_rows.form, RowPlan::Form::Looped);
  ASSERT_EQ(norm_rows.one_pass.size(), 1u) << to_string(norm);
  EXPECT_FALSE(norm_rows.one_pass[0].online_softmax);
  EXPECT_TRUE(norm.reciprocal_divisors.empty());
  // Persistent rows read the row once anyway: no one-pass statistics, but the reciprocal holds.
  KernelPlan held = only_plan(test::softmax_graph(4096, 1024));
  EXPECT_TRUE(std::get<RowPlan>(held.shape).one_pass.empty());
  EXPECT_EQ(held.reciprocal_divisors.size(), 1u);
}

TEST(KernelPlan, WideWrittenRowsOfAWholeBlockAreLooped) {
  // log_softmax over 32000 f32: 8000 groups of 4 would hold 32 values per thread of a 1024-thread block, written
  // back: one block per SM. Looped instead, max and sum in one online pass.
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {524, 32000});
  g.output(g.call("aten._log_softmax.default", {A(x), test::I(-1), test::B(false)}, DType::Float32, {524, 32000}));
  KernelPlan wide = only_plan(g.graph());
  const auto& rows = std::get<RowPlan>(wide.shape);
  ASSERT_EQ(rows.form, RowPlan::Form::Looped) << to_string(wide);
  EXPECT_NE(rows.form_reason.find("one block per SM"), std::string::npos) << rows.form_reason;
  EXPECT_EQ(rows.width, 4);
  ASSERT_EQ(rows.one_pass.size(), 1u) << to_string(wide);
  EXPECT_TRUE(rows.one_pass[0].online_softmax);
  // Group norm over 32 groups of 8 x 56 x 56 (25088 elements per row, weights by channel): looped, Welford.
  test::GraphBuilder gn;
  ValueRef im = gn.input("x", DType::Float32, {32, 256, 56, 56});
  ValueRef w = gn.input("w", DType::Float32, {256});
  ValueRef b = gn.input("b", DType::Float32, {256});
  gn.output(gn.call_inferred("gn", "aten.native_group_norm.default",
                             {A(im), A(w), A(b), test::I(32), test::I(256), test::I(3136), test::I(32), test::F(1e-5)}));
  KernelPlan norm = only_plan(gn.graph());
  const auto& norm_rows = std::get<RowPlan>(norm.shape);
  ASSERT_EQ(norm_rows.form, RowPlan::Form::Looped) << to_string(norm);
  EXPECT_EQ(norm_rows.width, 4);
  ASSERT_EQ(norm_rows.one_pass.size(), 1u) << to_string(norm);
  EXPECT_FALSE(norm_rows.one_pass[0].online_softmax);
  // 16 values per thread of a 1024-thread block stay in registers (softmax over 16384), and so do plain reductions
  // of the 32000-wide rows, which write nothing back.
  const KernelPlan held_plan = only_plan(test::softmax_graph(512, 16384));  // `held` refers into it
  const auto& held = std::get<RowPlan>(held_plan.shape);
  EXPECT_EQ(held.form, RowPlan::Form::Persistent);
  EXPECT_EQ(held.threads, 1024);
  EXPECT_EQ(held.groups_per_thread * held.width, 16);
  test::GraphBuilder sum;
  ValueRef y = sum.input("x", DType::Float32, {524, 32000});
  sum.output(sum.call("aten.sum.dim_IntList", {A(y), L({-1})}, DType::Float32, {524}));
  EXPECT_EQ(std::get<RowPlan>(only_plan(sum.graph()).shape).form, RowPlan::Form::Persistent);
}

TEST(KernelPlan, IndexWidthFollowsTheLargestExtent) {
  EXPECT_TRUE(only_plan(add_relu_graph(DType::Float32, {1024, 1024})).index32);
  KernelPlan big = only_plan(add_relu_graph(DType::Float32, {32768, 32768}));
  EXPECT_FALSE(big.index32) << big.index_reason;
  KernelPlan symbolic = only_plan(add_relu_graph(DType::Float32, {Index::var("s0"), 1024}));
  EXPECT_FALSE(symbolic.index32) << symbolic.index_reason;
  // Vector groups over a symbolic element count: the group count and the scalar tail are found at run time.
  EXPECT_EQ(std::get<PointwisePlan>(symbolic.shape).form, PointwisePlan::Form::VectorGroups);
  EXPECT_FALSE(symbolic.grid.as_const()) << symbolic.grid.str();
}

TEST(KernelPlan, TextNamesTheKernelAndEveryChoice) {
  KernelPlan plan = only_plan(test::softmax_graph(4096, 1024));
  std::string text = to_string(plan);
  EXPECT_EQ(text.rfind(plan.kernel + ": ", 0), 0u) << text;
  for (const char* field : {"block ", "grid ", "index ", "V ", "T "}) EXPECT_NE(text.find(field), std::string::npos) << text;
}

}  // namespace
}  // namespace hi
