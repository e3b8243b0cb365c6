// Scan kernels (cumsum, cumprod, cummax / cummin, logcumsumexp): each scan is a Scan kernel of its own, linear in the
// data, planned as a thread per strided line or as threads per contiguous line; and it computes what the reference
// interpreter computes over line lengths that fill a step, leave one ragged, are shorter than a warp, or take several
// steps, along the last, a middle and the first dim, in f32, bf16, int32 and bool, at warp widths 32 and 64.
#include <gtest/gtest.h>

#include "ir/op_schema.h"
#include "lowering/op_registry.h"
#include "pipeline/compile_graph.h"
#include "run_on_cpu.h"

namespace hi {
namespace {

class Graphs {
 public:
  ValueRef input(DType dtype, std::vector<int64_t> sizes) {
    Node n;
    n.name = "in" + std::to_string(g_.nodes.size());
    n.kind = NodeKind::Placeholder;
    std::vector<Index> s;
    for (int64_t v : sizes) s.emplace_back(v);
    n.outputs.push_back(TensorMeta::contiguous(dtype, s));
    return add(std::move(n));
  }
  ValueRef call(const std::string& target, std::vector<Arg> args,
                std::vector<std::pair<std::string, Arg>> kwargs = {}) {
    Node n;
    n.name = "n" + std::to_string(g_.nodes.size());
    n.target = target;
    n.args = std::move(args);
    n.kwargs = std::move(kwargs);
    n.outputs = infer_meta(g_, n);
    return add(std::move(n));
  }
  void output(ValueRef v) { g_.outputs.push_back(v); }
  void outputs(ValueRef v, int n) {
    for (int k = 0; k < n; ++k) g_.outputs.push_back(ValueRef{v.node, k});
  }
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

CompiledGraph generate_for(const Graph& g, const std::string& target) {
  CompileOptions options;
  options.target = parse_target(target);
  options.graph_name = "scans";
  return generate(g, options);
}

class Scans : public ::testing::TestWithParam<std::string> {};

// Every scan op, along the last dim over lengths 1, 3 (no vector width divides it), 8 and 48 (lines shorter than a
// warp, several per warp), 1000 (a ragged last step) and 4100 (several steps of a 256-thread line), and along dims 0
// and 1 of a 3-d tensor (a thread per line).
TEST_P(Scans, MatchTheReferenceOverLengthsAndDims) {
  for (int64_t n : {1, 3, 8, 48, 1000, 4100}) {
    Graphs g;
    ValueRef x = g.input(DType::Float32, {5, n});
    ValueRef small = g.call("aten.mul.Tensor", {t(g.call("aten.sigmoid.default", {t(x)})), Arg::of(1.5)});
    g.output(g.call("aten.cumsum.default", {t(x), i(-1)}));
    g.output(g.call("aten.cumprod.default", {t(small), i(1)}));
    g.output(g.call("aten.logcumsumexp.default", {t(x), i(1)}));
    g.outputs(g.call("aten.cummax.default", {t(x), i(1)}), 2);
    g.outputs(g.call("aten.cummin.default", {t(x), i(-1)}), 2);
    SCOPED_TRACE("length " + std::to_string(n));
    test::expect_matches(test::run_on_cpu(g.graph(), GetParam()), 1e-4, 1e-4);
  }
  Graphs g;
  ValueRef x = g.input(DType::Float32, {7, 33, 6});
  for (int64_t dim : {0, 1}) {
    g.output(g.call("aten.cumsum.default", {t(x), i(dim)}));
    g.output(g.call("aten.logcumsumexp.default", {t(x), i(dim)}));
    g.outputs(g.call("aten.cummin.default", {t(x), i(dim)}), 2);
  }
  test::expect_matches(test::run_on_cpu(g.graph(), GetParam()), 1e-4, 1e-4);
}

// bf16 inputs (a bf16 sum is accumulated in float, as eager's CPU kernel does; the reference rounds each step to
// the output dtype, as eager's CUDA kernel does, so it is compared summed into f32); integers and bool accumulate
// exactly in int64; running extremes keep the last index of a tie (integers have many) and of a NaN.
TEST_P(Scans, MatchTheReferenceInOtherDtypes) {
  Graphs g;
  ValueRef h = g.input(DType::BFloat16, {4, 300});
  ValueRef n = g.input(DType::Int32, {3, 130});
  ValueRef small = g.call("aten.remainder.Scalar", {t(n), i(4)});
  ValueRef mask = g.call("aten.gt.Scalar", {t(n), i(0)});
  ValueRef f = g.input(DType::Float32, {3, 40});
  ValueRef nan = g.call("aten.log.default", {t(f)});  // NaN where f < 0
  ValueRef z = g.call("aten.mul.Tensor", {t(f), Arg::of(0.0)});
  ValueRef with_nan = g.call("aten.div.Tensor", {t(z), t(z)});  // 0/0: NaN everywhere
  g.output(g.call("aten.cumsum.default", {t(h), i(1)}, {{"dtype", Arg::of(DType::Float32)}}));
  g.output(g.call("aten.logcumsumexp.default", {t(h), i(0)}));
  g.outputs(g.call("aten.cummax.default", {t(h), i(1)}), 2);
  g.output(g.call("aten.cumsum.default", {t(n), i(1)}));
  g.output(g.call("aten.cumsum.default", {t(mask), i(1)}));
  g.outputs(g.call("aten.cummax.default", {t(small), i(1)}), 2);
  g.outputs(g.call("aten.cummin.default", {t(small), i(0)}), 2);
  g.outputs(g.call("aten.cummax.default", {t(mask), i(1)}), 2);
  g.outputs(g.call("aten.cummax.default", {t(nan), i(1)}), 2);
  g.outputs(g.call("aten.cummin.default", {t(with_nan), i(0)}), 2);
  g.output(g.call("aten.logcumsumexp.default", {t(g.call("aten.log.default", {t(mask)})), i(1)}));  // -inf, 0
  test::expect_matches(test::run_on_cpu(g.graph(), GetParam()), 2e-2, 2e-2);
}

INSTANTIATE_TEST_SUITE_P(WarpWidths, Scans, ::testing::Values("cpu", "cpu-w64"),
                         [](const auto& info) { return info.param == "cpu" ? std::string("w32") : std::string("w64"); });

/// The plan decision: one Scan kernel per scan, no reduction kernel (the quadratic masked reduction it replaces);
/// threads per line for contiguous lines, a thread per line for many strided lines, chunks of few strided lines.
TEST(ScanPlans, FormFollowsTheLinesLayoutAndCount) {
  Graphs g;
  ValueRef x = g.input(DType::Float32, {64, 4096});
  ValueRef y = g.input(DType::Float32, {40, 70000});
  g.output(g.call("aten.cumsum.default", {t(x), i(1)}));
  g.output(g.call("aten.cumsum.default", {t(x), i(0)}));
  g.output(g.call("aten.cumsum.default", {t(y), i(0)}));
  CompiledGraph c = generate_for(g.graph(), "cpu");
  ASSERT_EQ(c.program.kernels.size(), 3u);
  for (const Kernel& k : c.program.kernels) EXPECT_EQ(k.kind, KernelKind::Scan) << k.name;
  ASSERT_EQ(c.module.plans.size(), 3u);
  const ScanPlan& rows = std::get<ScanPlan>(c.module.plans[0].shape);
  EXPECT_EQ(rows.form, ScanPlan::Form::ThreadsPerLine) << to_string(c.module.plans[0]);
  EXPECT_EQ(rows.width, 4) << to_string(c.module.plans[0]);  // 16 bytes of f32
  EXPECT_EQ(rows.threads, 256);
  EXPECT_TRUE(c.module.plans[0].needs_sync);
  const ScanPlan& few = std::get<ScanPlan>(c.module.plans[1].shape);
  EXPECT_EQ(few.form, ScanPlan::Form::LineChunks) << to_string(c.module.plans[1]);
  EXPECT_EQ(few.chunks * few.lines_per_block, c.module.plans[1].block);
  EXPECT_GE(64 / few.chunks, 16);  // chunks of at least 16 elements
  const ScanPlan& many = std::get<ScanPlan>(c.module.plans[2].shape);
  EXPECT_EQ(many.form, ScanPlan::Form::LinesPerThread) << to_string(c.module.plans[2]);
  EXPECT_FALSE(c.module.plans[2].needs_sync);
  // Linear in the data: no masked comparison of positions, the only loops over lines and their steps.
  std::string text = kernels_text(c.module);
  EXPECT_NE(text.find("hi_shfl_xor"), std::string::npos) << text;
  EXPECT_EQ(text.find(" <= "), std::string::npos) << text;
}

/// A thread of a contiguous line scans 16 elements per step (G vector groups of V) when the combine is
/// logcumsumexp's, so that the scan across the line's threads, which each step pays whatever a thread took, is spread
/// over them (fewer where the line has fewer); arithmetic combines, bound by memory, keep one group per thread.
TEST(ScanPlans, CostlyCombinesTakeSixteenElementsPerThreadAndStep) {
  Graphs g;
  ValueRef x = g.input(DType::Float32, {64, 4096});
  ValueRef h = g.input(DType::BFloat16, {64, 32000});
  ValueRef s = g.input(DType::Float32, {64, 8});
  g.output(g.call("aten.logcumsumexp.default", {t(x), i(1)}));
  g.output(g.call("aten.cumsum.default", {t(h), i(1)}, {{"dtype", Arg::of(DType::BFloat16)}}));
  g.output(g.call("aten.logcumsumexp.default", {t(s), i(1)}));
  g.outputs(g.call("aten.cummax.default", {t(x), i(1)}), 2);
  CompiledGraph c = generate_for(g.graph(), "cpu");
  ASSERT_GE(c.module.plans.size(), 4u);
  const ScanPlan& rows = std::get<ScanPlan>(c.module.plans[0].shape);
  ASSERT_EQ(rows.form, ScanPlan::Form::ThreadsPerLine) << to_string(c.module.plans[0]);
  EXPECT_EQ(rows.width * rows.groups_per_thread, 16) << to_string(c.module.plans[0]);
  EXPECT_EQ(rows.threads, 256) << to_string(c.module.plans[0]);  // 4096 elements: one step
  const ScanPlan& sums = std::get<ScanPlan>(c.module.plans[1].shape);
  EXPECT_EQ(sums.width, 8) << to_string(c.module.plans[1]);
  EXPECT_EQ(sums.groups_per_thread, 1) << to_string(c.module.plans[1]);
  const ScanPlan& few = std::get<ScanPlan>(c.module.plans[2].shape);
  EXPECT_EQ(few.width * few.groups_per_thread * few.threads, 8) << to_string(c.module.plans[2]);
  for (size_t n = 3; n < c.module.plans.size(); ++n)  // cummax: values, then indices
    EXPECT_EQ(std::get<ScanPlan>(c.module.plans[n].shape).groups_per_thread, 1) << to_string(c.module.plans[n]);
  std::string text = kernels_text(c.module);
  EXPECT_NE(text.find("16 consecutive elements per thread and step"), std::string::npos) << text;
}

/// Short lines share a block (several per warp), each line's threads a power of two.
TEST(ScanPlans, ShortLinesShareABlock) {
  Graphs g;
  ValueRef x = g.input(DType::BFloat16, {1000, 48});
  g.output(g.call("aten.cumsum.default", {t(x), i(1)}));
  CompiledGraph c = generate_for(g.graph(), "cpu-w64");
  const ScanPlan& plan = std::get<ScanPlan>(c.module.plans.at(0).shape);
  EXPECT_EQ(plan.form, ScanPlan::Form::ThreadsPerLine);
  EXPECT_GE(plan.width * plan.threads, 48) << to_string(c.module.plans[0]);
  EXPECT_EQ(plan.threads * plan.lines_per_block, c.module.plans[0].block);
  EXPECT_GT(plan.lines_per_block, 1);
}

}  // namespace
}  // namespace hi
