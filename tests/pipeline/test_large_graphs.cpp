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

/// Occurrences of `needle` in `text`.
size_t count_of(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
  return n;
}

/// What keeps a long chain's compile time linear in its length, for a GPU target (generated only, nothing compiled):
/// kernels of bounded source size, and no kernel with more calls of large math functions inlined than the plans allow
/// (past that bound they are called out of line: the compilers inline each call's slow paths and slow down
/// superlinearly).
TEST(LargeGraphs, LongChainsCompileIntoKernelsOfBoundedSize) {
  CompileOptions o;
  o.target = parse_target("sm_90");
  for (const Graph& g : {long_pointwise_chain(5000, 64, 256), long_softmax_chain(200, 64, 512)}) {
    CompiledGraph generated = generate(g, o);
    std::vector<EmittedModule> units = split_module(generated.module, 1);  // a unit per kernel
    ASSERT_GT(units.size(), 1u);
    bool outlined = false;
    for (const EmittedModule& unit : units) {
      const std::string text = kernels_text(unit);
      EXPECT_LT(text.size(), size_t{96} * 1024) << unit.kernels[0].name;
      EXPECT_LE(count_of(text, "hi_sin("), 32u) << unit.kernels[0].name;
      outlined = outlined || text.find("_ool(") != std::string::npos;
    }
    EXPECT_EQ(outlined, g.nodes.size() > 1000) << "the pointwise chain's kernels call their math out of line";
  }
  // A kernel with a few math calls (a GELU's) keeps them inlined.
  test::GraphBuilder b;
  std::vector<Index> s{64, 256};
  ValueRef x = b.input("x", DType::Float32, s);
  b.output(b.call("aten.gelu.default", {A(b.call("aten.sin.default", {A(x)}, DType::Float32, s))}, DType::Float32, s));
  CompiledGraph small = generate(b.graph(), o);
  EXPECT_EQ(kernels_text(small.module).find("_ool("), std::string::npos);
  EXPECT_NE(kernels_text(small.module).find("hi_sin("), std::string::npos);
}

/// A module past CompileOptions::max_unit_kernel_bytes is compiled as several units (split_module), linked into one
/// shared object on the cpu device: the results are the reference's, and the units are complete translation units
/// holding every kernel once, in order.
TEST(LargeGraphs, ModulesCompiledAsSeveralUnitsMatchTheReference) {
  const Graph g = long_softmax_chain(40, 4, 32);
  CompileOptions o;
  o.target = parse_target("cpu");
  o.graph_name = "units";
  o.max_unit_kernel_bytes = 1;  // a unit per kernel
  CompiledGraph generated = generate(g, o);
  ASSERT_GT(generated.module.kernels.size(), 2u);
  std::vector<EmittedModule> units = split_module(generated.module, o.max_unit_kernel_bytes);
  ASSERT_EQ(units.size(), generated.module.kernels.size());
  for (size_t u = 0; u < units.size(); ++u) {
    ASSERT_EQ(units[u].kernels.size(), 1u);
    EXPECT_EQ(units[u].kernels[0].name, generated.module.kernels[u].name);
    EXPECT_NE(units[u].source.find(" " + units[u].kernels[0].name + "("), std::string::npos);
    EXPECT_NE(units[u].source.find(units[u].kernels[0].name + "__hi_cpu("), std::string::npos);
    EXPECT_EQ(units[u].source.find("#define HI_CPU_LATER_UNIT") != std::string::npos, u > 0);
    for (size_t other = 0; other < units.size(); ++other) {
      if (other != u) EXPECT_EQ(units[u].source.find(" " + units[other].kernels[0].name + "("), std::string::npos);
    }
  }
  // Two kernels' worth per unit groups them; a bound no module reaches leaves the module whole, source unchanged.
  size_t two = kernels_text(units[0]).size() + kernels_text(units[1]).size();
  EXPECT_EQ(split_module(generated.module, two).size(), (units.size() + 1) / 2);
  std::vector<EmittedModule> whole = split_module(generated.module, size_t{1} << 40);
  ASSERT_EQ(whole.size(), 1u);
  EXPECT_EQ(whole[0].source, generated.module.source);

  o.max_unit_kernel_bytes = two;
  NumericsCheck r = run_against_reference(g, o);
  test::expect_matches(r, 1e-4, 1e-6);
}

}  // namespace
}  // namespace hi
