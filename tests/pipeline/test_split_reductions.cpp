// split_reductions: which reductions are split and into what kernels (at the real default thresholds, without
// running), and that split graphs compute what the reference interpreter does (small shapes with lowered thresholds,
// run on the cpu device at warp widths 32 and 64): masked tails, multi-dim reduction domains, NaN / inf in max/min,
// bool any/all, bf16 input, var/mean, LayerNorm and softmax over few long rows.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>

#include "lowering/fuse_kernels.h"
#include "lowering/lower_graph.h"
#include "lowering/plan_memory.h"
#include "lowering/split_reductions.h"
#include "runtime/cpu_device.h"
#include "tests/common/graph_builder.h"
#include "testing/check_numerics.h"
#include "run_on_cpu.h"

namespace hi {
namespace {

using test::A;
using test::B;
using test::F;
using test::I;
using test::L;

LoopProgram scheduled(const Graph& g, const SplitOptions& options = {}) {
  LoopProgram p = lower_graph(g);
  split_reductions(p, options);
  for (const auto& problem : verify_loop_program(p)) ADD_FAILURE() << "after split_reductions: " << problem;
  std::set<std::string> names;
  for (const Buffer& b : p.buffers) EXPECT_TRUE(names.insert(b.name).second) << "two buffers named " << b.name;
  fuse_kernels(p);
  plan_memory(p);
  for (const auto& problem : verify_loop_program(p)) ADD_FAILURE() << problem;
  return p;
}

void expect_kernel(const LoopProgram& p, size_t k, KernelKind kind, int64_t numel, int64_t row_length) {
  ASSERT_LT(k, p.kernels.size()) << p.str();
  EXPECT_EQ(p.kernels[k].kind, kind) << "kernel " << k << "\n" << p.str();
  EXPECT_EQ(p.kernels[k].numel, Index(numel)) << "kernel " << k << "\n" << p.str();
  EXPECT_EQ(p.kernels[k].row_length, Index(row_length)) << "kernel " << k << "\n" << p.str();
}

/// The index of the single load in a computation's body.
Index only_load_index(const Computation& c) {
  std::vector<Index> found;
  visit(c.body, [&](const Expr& e) {
    if (e->op == ExprOp::Load) found.push_back(e->index);
  });
  EXPECT_EQ(found.size(), 1u) << c.body.str();
  return found.empty() ? Index() : found[0];
}

// ---- structure, default thresholds ----------------------------------------------------------------------------

TEST(SplitReductions, ColumnSumBecomesTwoColumnKernels) {
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {16384, 4096});
  g.output(g.call("aten.sum.dim_IntList", {A(x), L({0})}, DType::Float32, {4096}));
  LoopProgram p = scheduled(g.graph());
  ASSERT_EQ(p.kernels.size(), 2u) << p.str();
  // 16 partial sums of 1024 rows each per column (the kernel slices those rows across its blocks), then 4096
  // outputs.
  expect_kernel(p, 0, KernelKind::ColumnReduction, 16 * 4096, 1024);
  expect_kernel(p, 1, KernelKind::ColumnReduction, 4096, 16);
  const Computation& partial = p.computations[0];
  EXPECT_EQ(p.buffers[partial.buffer].name, "buf0") << p.str();  // lower_graph's sum became out0
  EXPECT_EQ(p.buffers[partial.buffer].sizes, (std::vector<Index>{16, 4096}));
  EXPECT_EQ(only_load_index(partial), Index::var("x0") * (1024 * 4096) + Index::var("r0") * 4096 + Index::var("x1"));
  EXPECT_EQ(only_load_index(p.computations[1]), Index::var("r0") * 4096 + Index::var("x0"));
  EXPECT_EQ(p.computations[1].buffer, p.outputs[0]);
  EXPECT_EQ(p.workspace_bytes, 16 * 4096 * 4);
}

TEST(SplitReductions, FullSumOf64MElementsBecomesManyRows) {
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {8192, 8192});
  g.output(g.call("aten.sum.default", {A(x)}, DType::Float32, {}));
  LoopProgram p = scheduled(g.graph());
  ASSERT_EQ(p.kernels.size(), 2u) << p.str();
  expect_kernel(p, 0, KernelKind::RowReduction, 1024, 65536);
  expect_kernel(p, 1, KernelKind::RowReduction, 1, 1024);
  // The two reduced dims recombine into one contiguous flat index: no div/mod left in the row loop.
  EXPECT_EQ(only_load_index(p.computations[0]), Index::var("x0") * 65536 + Index::var("r0"));
  EXPECT_EQ(only_load_index(p.computations[1]), Index::var("r0"));
}

TEST(SplitReductions, ArgmaxSplitsIntoValuesAndPositions) {
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {16384, 4096});
  g.output(g.call("aten.argmax.default", {A(x), I(0)}, DType::Int64, {4096}));
  LoopProgram p = scheduled(g.graph());
  ASSERT_EQ(p.kernels.size(), 2u) << p.str();
  // Stage 1: each piece's max and its position, in one kernel; stage 2: the argmax of those maxima at those positions.
  expect_kernel(p, 0, KernelKind::ColumnReduction, 16 * 4096, 1024);
  expect_kernel(p, 1, KernelKind::ColumnReduction, 4096, 16);
  ASSERT_EQ(p.kernels[0].computations.size(), 2u) << p.str();
  EXPECT_EQ(p.computations[p.kernels[0].computations[0]].body->reduce_op(), ReduceOp::Max);
  EXPECT_EQ(p.computations[p.kernels[0].computations[1]].body->reduce_op(), ReduceOp::ArgMax);
  const Expr& stage2 = p.computations[p.kernels[1].computations[0]].body;
  EXPECT_EQ(stage2->reduce_op(), ReduceOp::ArgMax);
  EXPECT_EQ(stage2->args[1]->op, ExprOp::Load) << stage2.str();  // positions in the whole column, from stage 1
}

TEST(SplitReductions, RowSumWithManyRowsIsNotSplit) {
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {4096, 4096});
  g.output(g.call("aten.sum.dim_IntList", {A(x), L({1})}, DType::Float32, {4096}));
  g.output(g.call("aten.sum.dim_IntList", {A(x), L({0})}, DType::Float32, {4096}));  // 4096 threads, R = 4096
  LoopProgram p = scheduled(g.graph());
  ASSERT_EQ(p.kernels.size(), 3u) << p.str();
  expect_kernel(p, 0, KernelKind::RowReduction, 4096, 4096);  // 4096 rows: already enough blocks
  // The column sum is split: 4096 threads of 4096 serial loads each would be a sixteenth of the GPU.
  expect_kernel(p, 1, KernelKind::ColumnReduction, 16 * 4096, 256);
  expect_kernel(p, 2, KernelKind::ColumnReduction, 4096, 16);
}

TEST(SplitReductions, RowsOtherComputationsReadStayWholeUnlessVeryFew) {
  // Softmax over 333 rows of GPT-2's vocabulary: its max, sum and output read the same rows, so one row kernel (the
  // statistics in one pass, the output in a second) beats five kernels reading the rows three times.
  LoopProgram p = scheduled(test::softmax_graph(333, 50257));
  ASSERT_EQ(p.kernels.size(), 1u) << p.str();
  expect_kernel(p, 0, KernelKind::RowReduction, 333, 50257);
  // A plain sum of those rows, which nothing else reads, is still split, and so is softmax over 64 rows.
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {333, 50257});
  g.output(g.call("aten.sum.dim_IntList", {A(x), L({1})}, DType::Float32, {333}));
  EXPECT_EQ(scheduled(g.graph()).kernels.size(), 2u);
  EXPECT_EQ(scheduled(test::softmax_graph(64, 50257)).kernels.size(), 5u);
  // The threshold is an option.
  SplitOptions o;
  o.shared_rows_min_rows = 512;
  EXPECT_EQ(scheduled(test::softmax_graph(333, 50257), o).kernels.size(), 5u);
}

TEST(SplitReductions, ShortReductionsAndDisabledOptionsAreUntouched) {
  LoopProgram ln = scheduled(test::layer_norm_graph(64, 256, true));
  EXPECT_EQ(ln.kernels.size(), 1u) << ln.str();
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {16384, 4096});
  g.output(g.call("aten.sum.dim_IntList", {A(x), L({0})}, DType::Float32, {4096}));
  SplitOptions off;
  off.enabled = false;
  EXPECT_EQ(scheduled(g.graph(), off).kernels.size(), 1u);
}

TEST(SplitReductions, LayerNormOverFewLongRowsSplitsBothStatistics) {
  LoopProgram p = scheduled(test::layer_norm_graph(4, 1 << 20, true));
  // The mean's and the variance's sums are split together (a Welford pair): partial rows taking both in one pass,
  // then final rows merging the pieces and writing the mean/rstd outputs (4 each) as row epilogues; then the
  // normalised output (4M elements) as a pointwise kernel.
  ASSERT_EQ(p.kernels.size(), 3u) << p.str();
  expect_kernel(p, 0, KernelKind::RowReduction, 4 * 256, 4096);
  EXPECT_EQ(p.kernels[0].computations.size(), 2u) << p.str();
  expect_kernel(p, 1, KernelKind::RowReduction, 4, 256);
  EXPECT_EQ(p.kernels[1].computations.size(), 4u) << p.str();
  EXPECT_EQ(p.kernels[2].kind, KernelKind::Pointwise);
}

TEST(SplitReductions, TotalOverARowKernelsRowsJoinsItOnePiecePerRow) {
  // sum(log_softmax(x)) over everything: each term reads its row's max and sum, so the total is split one piece per
  // row and stage 1 joins the softmax statistics' row kernel (the rows are read once); stage 2 sums 2048 partials.
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {2048, 4096});
  ValueRef lsm = g.call("aten._log_softmax.default", {A(x), test::I(-1), test::B(false)}, DType::Float32, {2048, 4096});
  g.output(g.call("aten.sum.default", {A(lsm)}, DType::Float32, {}));
  LoopProgram p = scheduled(g.graph());
  ASSERT_EQ(p.kernels.size(), 2u) << p.str();
  expect_kernel(p, 0, KernelKind::RowReduction, 2048, 4096);
  EXPECT_EQ(p.kernels[0].computations.size(), 3u) << p.str();  // max, sum of exp, the row's partial
  expect_kernel(p, 1, KernelKind::RowReduction, 1, 2048);

  // Rows too few to fill the GPU are split themselves: the total then keeps its own split.
  test::GraphBuilder few;
  ValueRef y = few.input("y", DType::Float32, {4, 1 << 20});
  ValueRef lsm2 = few.call("aten._log_softmax.default", {A(y), test::I(-1), test::B(false)}, DType::Float32, {4, 1 << 20});
  few.output(few.call("aten.sum.default", {A(lsm2)}, DType::Float32, {}));
  LoopProgram q = scheduled(few.graph());
  ASSERT_FALSE(q.kernels.empty());
  expect_kernel(q, q.kernels.size() - 1, KernelKind::RowReduction, 1, 1024);  // not 4 pieces of a million
}

TEST(SplitReductions, NonDivisibleLengthIsClampedAndMasked) {
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {100003});
  g.output(g.call("aten.sum.default", {A(x)}, DType::Float32, {}));
  LoopProgram p = scheduled(g.graph());
  ASSERT_EQ(p.kernels.size(), 2u) << p.str();
  expect_kernel(p, 0, KernelKind::RowReduction, 32, 3126);  // 32 * 3126 = 100032 > 100003
  std::string body = p.computations[0].body.str();
  EXPECT_NE(body.find("where("), std::string::npos) << body;
  EXPECT_NE(body.find("min("), std::string::npos) << body;
}

TEST(SplitReductions, SourceIsDeterministic) {
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {9000, 100});
  g.output(g.call("aten.sum.dim_IntList", {A(x), L({0})}, DType::Float32, {100}));
  CompileOptions o;
  o.target = parse_target("gfx90a");
  std::string first = generate(g.graph(), o).module.source;
  EXPECT_EQ(first, generate(g.graph(), o).module.source);
  EXPECT_EQ(generate(g.graph(), o).program.kernels.size(), 2u);
}

// ---- numerics, lowered thresholds -----------------------------------------------------------------------------

SplitOptions small_split() {
  SplitOptions o;
  o.min_reduce_numel = 256;
  o.column_target_outputs = 512;
  o.min_column_chunk = 16;
  o.row_target_rows = 64;
  o.min_row_chunk = 32;
  o.min_splits = 2;
  o.max_splits = 64;
  return o;
}

class SplitNumerics : public ::testing::TestWithParam<std::string> {
 protected:
  CompileOptions options() const {
    CompileOptions o;
    o.target = parse_target(GetParam());
    o.graph_name = "split_test";
    o.split = small_split();
    return o;
  }
  /// Number of reductions lower_graph makes and the split program has, so a test sees that splitting happened.
  static void expect_split(const Graph& g, const CompiledGraph& c, size_t at_least) {
    size_t before = lower_graph(g).computations.size();
    EXPECT_GE(c.program.computations.size(), before + at_least) << c.program.str();
  }
  /// Runs `g` on given inputs (graph outputs must be contiguous) and on the reference interpreter.
  NumericsCheck run(const Graph& g, const std::vector<HostTensor>& inputs) const {
    return run_on_inputs_against_reference(g, options(), inputs);
  }
};

TEST_P(SplitNumerics, SumsAndProducts) {
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {1000, 24});
  ValueRef y = g.input("y", DType::Float32, {50, 6, 40});
  ValueRef z = g.input("z", DType::Float32, {37, 101});
  ValueRef n = g.input("n", DType::Int32, {1000, 8});
  g.output(g.call_inferred("s_col", "aten.sum.dim_IntList", {A(x), L({0})}));           // column, masked tail
  g.output(g.call_inferred("s_rows", "aten.sum.dim_IntList", {A(y), L({0, 2})}));       // row-style, two dims
  g.output(g.call_inferred("s_cols", "aten.sum.dim_IntList", {A(y), L({0, 1}), B(true)}));  // column, two dims
  g.output(g.call_inferred("s_all", "aten.sum.default", {A(z)}));                        // one row, masked tail
  g.output(g.call_inferred("s_int", "aten.sum.dim_IntList", {A(n), L({0})}));            // int64 accumulation
  // Products of values near 1 (the masked tail must contribute 1).
  ValueRef near_one = g.call_inferred("near_one", "aten.add.Scalar",
                                      {A(g.call_inferred("tiny", "aten.mul.Scalar", {A(x), F(0.001)})), F(1.0)});
  g.output(g.call_inferred("p_col", "aten.prod.dim_int", {A(near_one), I(0)}));
  NumericsCheck r = run_against_reference(g.graph(), options());
  expect_split(g.graph(), *r.compiled, 6);
  test::expect_matches(r, 1e-4, 1e-4);
}

TEST_P(SplitNumerics, MaxMinWithNanAndInfinities) {
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {999, 16});
  ValueRef v = g.input("v", DType::Float32, {4001});
  g.output(g.call_inferred("mx", "aten.amax.default", {A(x), L({0})}));
  g.output(g.call_inferred("mn", "aten.amin.default", {A(x), L({0})}));
  g.output(g.call_inferred("vmx", "aten.amax.default", {A(v), L({})}));
  g.output(g.call_inferred("vmn", "aten.amin.default", {A(v), L({})}));
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  HostTensor xt = random_tensor(DType::Float32, {999, 16}, 3);
  for (int64_t i = 0; i < 999; ++i) {
    xt.at({i, 5}) = -inf;  // all -inf: max -inf
    xt.at({i, 6}) = inf;   // all +inf: min +inf
  }
  xt.at({17, 3}) = nan;   // NaN in the first chunk
  xt.at({998, 4}) = nan;  // NaN as the last element, inside the clamped tail
  xt.at({500, 7}) = -inf;
  xt.at({0, 8}) = inf;
  HostTensor vt = random_tensor(DType::Float32, {4001}, 4);
  vt.at({4000}) = 7.5;  // the extreme is the last element, read again by every clamped position
  vt.at({4}) = -9.25;
  NumericsCheck r = run(g.graph(), {xt, vt});
  expect_split(g.graph(), *r.compiled, 4);
  test::expect_matches(r, 0, 0);
  EXPECT_TRUE(std::isnan(r.actual[0].at({3})) && std::isnan(r.actual[1].at({4})));
  EXPECT_EQ(r.actual[0].at({5}), -inf);
  EXPECT_EQ(r.actual[1].at({6}), inf);
  EXPECT_EQ(r.actual[2].at({}), 7.5);
  EXPECT_EQ(r.actual[3].at({}), -9.25);
}

TEST_P(SplitNumerics, ArgmaxArgminWithTiesNansAndSignedZeros) {
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {999, 8});
  ValueRef v = g.input("v", DType::Float32, {4001});
  ValueRef n = g.input("n", DType::Int32, {3, 700});
  g.output(g.call_inferred("amax", "aten.argmax.default", {A(x), I(0)}));
  g.output(g.call_inferred("amin", "aten.argmin.default", {A(x), I(0), B(true)}));
  g.output(g.call_inferred("vmax", "aten.argmax.default", {A(v)}));
  ValueRef mx = g.call_inferred("mx", "aten.max.dim", {A(x), I(0)});
  g.output(mx);
  g.output(ValueRef{mx.node, 1});
  g.output(g.call_inferred("nmax", "aten.argmax.default", {A(n), I(1)}));
  g.output(g.call_inferred("nmin", "aten.argmin.default", {A(n), I(1)}));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  HostTensor xt = random_tensor(DType::Float32, {999, 8}, 3);
  for (int64_t i = 0; i < 999; ++i) {
    xt.at({i, 0}) = std::round(xt.at({i, 0}));  // ties across pieces: the first position wins
    xt.at({i, 1}) = i == 0 ? -3.0 : -1.0;       // the extreme only in the first piece / its min
    xt.at({i, 2}) = i % 2 ? -0.0 : 0.0;         // zeros of both signs compare equal: position 0
    xt.at({i, 3}) = i == 998 ? 5.0 : 1.0;       // the max is the last element, in the clamped tail
  }
  xt.at({500, 4}) = nan;  // one NaN: it wins
  xt.at({998, 5}) = nan;  // NaN in the clamped tail
  xt.at({600, 6}) = nan;  // two NaNs in different pieces: the first
  xt.at({70, 6}) = nan;
  HostTensor vt = random_tensor(DType::Float32, {4001}, 4);
  vt.at({4000}) = 9.0;
  HostTensor nt = random_tensor(DType::Int32, {3, 700}, 5);  // values in [-8, 8]: many ties
  NumericsCheck r = run(g.graph(), {xt, vt, nt});
  expect_split(g.graph(), *r.compiled, 4);
  test::expect_matches(r, 0, 0);
  EXPECT_EQ(r.actual[0].at({1}), 1);  // xt[i, 1] is max at every i but 0: the first of the ties
  EXPECT_EQ(r.actual[1].at({0, 1}), 0);
  EXPECT_EQ(r.actual[0].at({2}), 0);
  EXPECT_EQ(r.actual[0].at({3}), 998);
  EXPECT_EQ(r.actual[0].at({4}), 500);
  EXPECT_EQ(r.actual[1].at({0, 5}), 998);
  EXPECT_EQ(r.actual[0].at({6}), 70);
  EXPECT_EQ(r.actual[2].at({}), 4000);
  EXPECT_TRUE(std::isnan(r.actual[3].at({6})));
}

TEST_P(SplitNumerics, BoolAnyAll) {
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Bool, {777, 8});
  ValueRef v = g.input("v", DType::Bool, {5000});
  g.output(g.call_inferred("any_col", "aten.any.dim", {A(x), I(0)}));
  g.output(g.call_inferred("all_col", "aten.all.dim", {A(x), I(0)}));
  g.output(g.call_inferred("any_v", "aten.any.default", {A(v)}));
  g.output(g.call_inferred("all_v", "aten.all.default", {A(v)}));
  HostTensor xt = HostTensor::contiguous(DType::Bool, {777, 8});
  for (int64_t i = 0; i < 777; ++i) {
    xt.at({i, 2}) = 1;                 // column 2 all true
    xt.at({i, 3}) = i != 500;          // column 3 true but one
    xt.at({i, 5}) = i % 3 == 0;        // mixed
    xt.at({i, 7}) = 1;
  }
  xt.at({776, 1}) = 1;  // column 1: only the last element, in the clamped tail
  xt.at({776, 7}) = 0;  // column 7: all true but the last
  HostTensor vt = HostTensor::contiguous(DType::Bool, {5000});
  vt.at({4999}) = 1;
  NumericsCheck r = run(g.graph(), {xt, vt});
  expect_split(g.graph(), *r.compiled, 4);
  test::expect_matches(r, 0, 0);
  EXPECT_EQ(r.actual[0].values(), (std::vector<double>{0, 1, 1, 1, 0, 1, 0, 1}));
  EXPECT_EQ(r.actual[1].values(), (std::vector<double>{0, 0, 1, 0, 0, 0, 0, 0}));
  EXPECT_EQ(r.actual[2].at({}), 1);
  EXPECT_EQ(r.actual[3].at({}), 0);
}

TEST_P(SplitNumerics, Bf16InputSums) {
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::BFloat16, {513, 40});
  ValueRef v = g.input("v", DType::BFloat16, {3000});
  g.output(g.call_inferred("s_col", "aten.sum.dim_IntList", {A(x), L({0})}));
  g.output(g.call_inferred("s_all", "aten.sum.default", {A(v)}));
  g.output(g.call_inferred("mx", "aten.amax.default", {A(x), L({0})}));
  NumericsCheck r = run_against_reference(g.graph(), options());
  expect_split(g.graph(), *r.compiled, 3);
  test::expect_matches(r, 1e-2, 0.25);  // bf16 results: one rounding of a sum of magnitude ~50
}

TEST_P(SplitNumerics, VarAndMean) {
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {2000, 12});
  ValueRef v = g.input("v", DType::Float32, {4099});
  ValueRef w = g.input("w", DType::Float32, {3, 5000});
  g.output(g.call_inferred("var_col", "aten.var.correction", {A(x), L({0})}, {{"correction", F(1.0)}}));
  ValueRef vm = g.call_inferred("vm", "aten.var_mean.correction", {A(v)}, {{"correction", F(0.0)}});
  g.output(vm);
  g.output(ValueRef{vm.node, 1});
  g.output(g.call_inferred("mean_rows", "aten.mean.dim", {A(w), L({1}), B(true)}));
  NumericsCheck r = run_against_reference(g.graph(), options());
  expect_split(g.graph(), *r.compiled, 5);
  test::expect_matches(r, 1e-4, 1e-5);
}

TEST_P(SplitNumerics, LayerNormOverFewLongRows) {
  Graph g = test::layer_norm_graph(3, 5000, true);
  NumericsCheck r = run_against_reference(g, options());
  expect_split(g, *r.compiled, 2);
  test::expect_matches(r, 1e-4, 1e-5);
}

TEST_P(SplitNumerics, SoftmaxOverFewLongRows) {
  Graph g = test::softmax_graph(2, 3000);
  NumericsCheck r = run_against_reference(g, options());
  expect_split(g, *r.compiled, 2);
  test::expect_matches(r, 1e-5, 1e-7);
}

INSTANTIATE_TEST_SUITE_P(WarpWidths, SplitNumerics, ::testing::Values("cpu", "cpu-w64"),
                         [](const auto& info) { return std::string(info.param == "cpu" ? "w32" : "w64"); });

}  // namespace
}  // namespace hi
