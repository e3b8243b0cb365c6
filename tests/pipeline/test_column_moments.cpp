// Variance statistics over non-innermost dims (var, std, var_mean, std_mean, batch-norm statistics): their two sums
// are taken in one pass with a Welford accumulator (ir/moments.h, KernelPlan::welford_pairs), unsplit and split
// (stage 1 per piece, stage 2 merging the pieces as Chan et al.), so the input is read once; and they compute what
// the reference interpreter does on the cpu device (warp widths 32 and 64): every float dtype, corrections, keepdim,
// several dims, odd, 1 and 0 sizes, channels-last, and large means where a naive sum of squares would cancel.
#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>
#include <map>
#include <set>

#include "pipeline/compile_graph.h"
#include "tests/common/graph_builder.h"
#include "testing/check_numerics.h"
#include "run_on_cpu.h"

namespace hi {
namespace {

using test::A;
using test::B;
using test::F;
using test::L;

/// The kernels of `p` that load buffer `buffer`.
std::set<size_t> kernels_reading(const LoopProgram& p, int buffer) {
  std::set<size_t> out;
  for (size_t k = 0; k < p.kernels.size(); ++k)
    for (int c : p.kernels[k].computations)
      visit_computation(p.computations[c], [&](const Expr& e) {
        if (e->op == ExprOp::Load && e->buffer == buffer) out.insert(k);
      });
  return out;
}

/// One reduction of a graph under construction: `op` (aten.var.correction, aten.var_mean.correction, ...) of a new
/// input over `dims`, its outputs made graph outputs.
void add_moments(test::GraphBuilder& g, const std::string& op, DType dtype, std::vector<Index> sizes,
                 std::vector<int64_t> dims, double correction, bool keepdim, std::vector<Index> strides = {}) {
  const std::string name = "x" + std::to_string(g.graph().nodes.size());
  ValueRef x = g.input(name, dtype, std::move(sizes), std::move(strides));
  std::vector<Index> reduced(dims.begin(), dims.end());
  ValueRef r = g.call_inferred("m_" + name, op, {A(x), L(reduced)},
                               {{"correction", F(correction)}, {"keepdim", B(keepdim)}});
  g.output(r);
  if (op.find("_mean") != std::string::npos) g.output(ValueRef{r.node, 1});
}

/// A graph of that one reduction.
Graph moments_graph(const std::string& op, DType dtype, std::vector<Index> sizes, std::vector<int64_t> dims,
                    double correction, bool keepdim, std::vector<Index> strides = {}) {
  test::GraphBuilder g;
  add_moments(g, op, dtype, std::move(sizes), std::move(dims), correction, keepdim, std::move(strides));
  return g.graph();
}

CompileOptions options(const std::string& target, bool small_split) {
  CompileOptions o;
  o.target = parse_target(target);
  o.graph_name = "moments";
  if (small_split) {  // split at small sizes, so the tests stay fast
    o.split.min_reduce_numel = 64;
    o.split.column_target_outputs = 512;
    o.split.min_column_chunk = 8;
    o.split.row_target_rows = 64;
    o.split.min_row_chunk = 16;
    o.split.min_splits = 2;
    o.split.max_splits = 64;
  }
  return o;
}

/// Whether a kernel of `source` takes a Welford accumulator (combine for one column, add and merge at the weight a
/// vector group's columns share).
bool uses_welford(const std::string& source) { return source.find("hi_welford_op::") != std::string::npos; }

void expect_one_read(const Graph& g, const CompileOptions& o) {
  CompiledGraph c = generate(g, o);
  EXPECT_EQ(kernels_reading(c.program, 0).size(), 1u) << c.program.str();
  EXPECT_TRUE(uses_welford(c.module.source)) << c.program.str();
}

// ---- structure, default thresholds ------------------------------------------------------------------------------

TEST(ColumnMoments, ColumnVariancesReadTheirInputOnce) {
  const CompileOptions o = options("cpu", false);
  // Split (few outputs, long columns): stage 1 takes both sums per piece in one pass.
  expect_one_read(moments_graph("aten.var.correction", DType::Float32, {4096, 4096}, {0}, 1, false), o);
  expect_one_read(moments_graph("aten.std.correction", DType::Float32, {64, 4096, 64}, {1}, 1, false), o);
  // Unsplit: one column kernel.
  expect_one_read(moments_graph("aten.var_mean.correction", DType::BFloat16, {300, 70000}, {0}, 0, true), o);
  expect_one_read(moments_graph("aten.var_mean.correction", DType::Float64, {50, 3, 4001}, {0, 1}, 1, false), o);
}

TEST(ColumnMoments, SplitStagesAreWelfordPairs) {
  CompiledGraph c = generate(moments_graph("aten.var.correction", DType::Float32, {4096, 4096}, {0}, 1, false),
                             options("cpu", false));
  // Stage 1 (pieces) and stage 2 (merging them) each one kernel of one Welford accumulator; the division by n - 1
  // is stage 2's epilogue.
  size_t pairs = 0;
  for (const Kernel& k : c.program.kernels)
    pairs += k.kind == KernelKind::ColumnReduction &&
             std::count_if(k.computations.begin(), k.computations.end(),
                           [&](int n) { return c.program.computations[n].is_reduction(); }) == 2;
  EXPECT_EQ(pairs, 2u) << c.program.str();
  EXPECT_EQ(c.program.kernels.size(), 2u) << c.program.str();
  EXPECT_NE(c.module.source.find("hi_make_welford("), std::string::npos) << c.module.source;
}

// ---- numerics on the cpu device ------------------------------------------------------------------------------------

class ColumnMomentsNumerics : public ::testing::TestWithParam<std::string> {
 protected:
  /// `g` against the reference, unsplit and split at small sizes; `one_pass`: the Welford accumulator is used.
  void check(const Graph& g, double rtol, double atol, bool one_pass = true) const {
    for (bool split : {false, true}) {
      SCOPED_TRACE(split ? "split" : "unsplit");
      NumericsCheck r = run_against_reference(g, options(GetParam(), split));
      if (one_pass) {
        EXPECT_TRUE(uses_welford(r.compiled->module.source));
      }
      test::expect_matches(r, rtol, atol);
    }
  }
};

TEST_P(ColumnMomentsNumerics, EveryFloatDtypeCorrectionAndKeepdim) {
  test::GraphBuilder g;
  add_moments(g, "aten.var.correction", DType::Float32, {257, 13}, {0}, 1, false);
  add_moments(g, "aten.std.correction", DType::Float64, {3, 129, 5}, {1}, 0, true);
  add_moments(g, "aten.var_mean.correction", DType::BFloat16, {37, 128, 6}, {0, 1}, 2, true);
  add_moments(g, "aten.std.correction", DType::Float16, {200, 9}, {0}, 1, false);
  check(g.graph(), 1e-2, 1e-3);
  // f32 and f64 alone, at their own precision (columns split into pieces of equal size, which split_welford takes;
  // 257 rows, above, have none: each sum splits on its own).
  check(moments_graph("aten.var_mean.correction", DType::Float32, {256, 13}, {0}, 1, false), 1e-5, 1e-6);
  check(moments_graph("aten.std.correction", DType::Float64, {3, 128, 5}, {1}, 0, true), 1e-10, 1e-12);
}

TEST_P(ColumnMomentsNumerics, BatchNormStatisticsNchwAndChannelsLast) {
  test::GraphBuilder g;
  add_moments(g, "aten.var_mean.correction", DType::Float32, {6, 5, 7, 9}, {0, 2, 3}, 0, true);
  // Channels-last: C innermost in memory.
  add_moments(g, "aten.var_mean.correction", DType::Float32, {6, 5, 7, 9}, {0, 2, 3}, 0, true,
              {Index(5 * 7 * 9), Index(1), Index(9 * 5), Index(5)});
  check(g.graph(), 1e-5, 1e-6, /*one_pass=*/false);  // row kernels where unsplit: persistent rows read once
}

TEST_P(ColumnMomentsNumerics, SizesOneAndZero) {
  // One element per column: correction 0 gives 0, correction 1 gives NaN (0 / 0), as eager; no element: NaN.
  test::GraphBuilder g;
  add_moments(g, "aten.var.correction", DType::Float32, {1, 7}, {0}, 0, false);
  add_moments(g, "aten.var.correction", DType::Float32, {1, 7}, {0}, 1, false);
  add_moments(g, "aten.std.correction", DType::Float32, {5, 1, 3}, {0}, 1, true);
  add_moments(g, "aten.var.correction", DType::Float32, {0, 4}, {0}, 1, false);
  check(g.graph(), 1e-6, 1e-7, /*one_pass=*/false);
}

TEST_P(ColumnMomentsNumerics, LargeMeansDoNotCancel) {
  // Values 1e4 + u, u in [0, 1): a sum of squares minus the squared sum loses every digit of the variance in float;
  // the Welford pieces and their merge keep it.
  test::GraphBuilder g;
  const int64_t rows = 4096, cols = 8;  // pieces of equal size when split
  ValueRef x = g.input("x", DType::Float32, {rows, cols});
  g.output(g.call_inferred("v", "aten.var.correction", {A(x), L({0})}, {{"correction", F(1.0)}}));
  std::vector<double> values(rows * cols);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<double>(static_cast<float>(1e4 + std::fmod(static_cast<double>(i) * 0.618033988749, 1.0)));
  for (bool split : {false, true}) {
    NumericsCheck r = run_on_inputs_against_reference(
        g.graph(), options(GetParam(), split), {HostTensor::from_values(DType::Float32, {rows, cols}, values)});
    EXPECT_TRUE(uses_welford(r.compiled->module.source));
    test::expect_matches(r, 1e-3, 0);
  }
}

TEST_P(ColumnMomentsNumerics, VectorGroupsShareOneWeight) {
  // Vector groups of 8 (16-bit) and 4 (f32) columns whose Welford steps share a count: rows that the slices divide
  // unevenly (300, 37), one row, a reduced dim of 1.
  test::GraphBuilder g;
  add_moments(g, "aten.var.correction", DType::BFloat16, {300, 64}, {0}, 1, false);
  add_moments(g, "aten.std.correction", DType::Float16, {5, 37, 16}, {1}, 0, true);
  add_moments(g, "aten.var_mean.correction", DType::Float32, {1, 64}, {0}, 1, false);
  add_moments(g, "aten.var_mean.correction", DType::Float32, {3, 1, 8}, {1}, 1, true);
  check(g.graph(), 1e-2, 1e-3);
  check(moments_graph("aten.var_mean.correction", DType::Float32, {1024, 24}, {0}, 1, false), 1e-5, 1e-6);
}

TEST_P(ColumnMomentsNumerics, NanAndInfinityReachTheirColumnsOnly) {
  // A NaN or an infinity makes its column's variance NaN, and a NaN its mean; an infinity's mean is NaN or the
  // infinity, by where it falls in the order Welford's steps take (eager's too: torch.var_mean over [inf, 1, 2]
  // gives NaN, NaN). The other columns of the same vector groups keep theirs.
  const int64_t rows = 512, cols = 16;
  const std::map<int64_t, double> special = {{3, NAN}, {5, INFINITY}, {9, -INFINITY}};
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {rows, cols});
  ValueRef vm = g.call_inferred("vm", "aten.var_mean.correction", {A(x), L({0})}, {{"correction", F(1.0)}});
  g.output(vm);
  g.output(ValueRef{vm.node, 1});
  std::vector<double> values(rows * cols);
  for (size_t i = 0; i < values.size(); ++i) values[i] = std::sin(static_cast<double>(i)) * 3 + 1;
  values[37 * cols + 3] = std::nan("");
  values[0 * cols + 5] = special.at(5);
  values[(rows - 1) * cols + 9] = special.at(9);
  for (bool split : {false, true}) {
    SCOPED_TRACE(split ? "split" : "unsplit");
    NumericsCheck r = run_on_inputs_against_reference(
        g.graph(), options(GetParam(), split), {HostTensor::from_values(DType::Float32, {rows, cols}, values)});
    EXPECT_TRUE(uses_welford(r.compiled->module.source));
    ASSERT_EQ(r.actual.size(), 2u);
    for (int64_t c = 0; c < cols; ++c) {
      for (size_t o = 0; o < 2; ++o) {
        const double a = r.actual[o].at({c});
        if (auto sp = special.find(c); sp != special.end()) {
          EXPECT_TRUE(std::isnan(a) || (o == 1 && a == sp->second)) << "output " << o << " column " << c << ": " << a;
        } else {
          EXPECT_NEAR(a, r.expected[o].at({c}), 1e-5) << "output " << o << " column " << c;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(WarpWidths, ColumnMomentsNumerics, ::testing::Values("cpu", "cpu-w64"),
                         [](const auto& info) { return std::string(info.param == "cpu" ? "w32" : "w64"); });

}  // namespace
}  // namespace hi
