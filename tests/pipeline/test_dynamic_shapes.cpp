// Graphs with symbolic sizes: compiled once for the cpu device, then run with many bindings of their symbols (1,
// primes, sizes no vector width divides, rows longer than registers hold) through one GraphRunner, each binding
// compared with the reference interpreter on the graph with the values substituted.
#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "frontend/graph_json.h"
#include "pipeline/graph_cache.h"
#include "run_on_cpu.h"
#include "runtime/cpu_device.h"
#include "runtime/temp_directory.h"
#include "tests/common/graph_builder.h"

namespace hi {
namespace {

using test::A;
using test::B;
using test::F;
using test::I;
using test::GraphBuilder;
using test::L;

const Index s0 = Index::var("s0");
const Index s1 = Index::var("s1");

/// Values every symbol takes: 1, primes, sizes no vector width (2, 4, 8) divides, multiples of 8, and one row longer
/// than a thread block keeps in registers.
const std::vector<int64_t> kRowValues{1, 2, 3, 7, 8, 13, 64, 127, 1000, 4099};
const std::vector<int64_t> kFewValues{1, 3, 5, 16};

CompileOptions cpu_options(const std::string& target = "cpu") {
  CompileOptions o;
  o.target = parse_target(target);
  o.graph_name = "dynamic";
  return o;
}

/// Compiles `graph` once, then checks every binding in `bindings` against the reference interpreter, all through one
/// runner.
void check_bindings(const Graph& graph, const std::vector<std::map<std::string, int64_t>>& bindings, double rtol,
                    double atol, const std::string& target = "cpu") {
  auto compiled = std::make_shared<const CompiledGraph>(compile_graph(graph, cpu_options(target)));
  CpuDevice device(compiled->module.target);
  GraphRunner runner(compiled, device);
  uint64_t seed = 1;
  for (const auto& values : bindings) {
    std::string binding;
    for (const auto& [name, v] : values) binding += name + "=" + std::to_string(v) + " ";
    SCOPED_TRACE(binding);
    test::expect_matches(run_bound_against_reference(graph, runner, values, seed++), rtol, atol);
  }
}

/// Every (s0, s1) pair of the two lists.
std::vector<std::map<std::string, int64_t>> pairs(const std::vector<int64_t>& rows, const std::vector<int64_t>& cols) {
  std::vector<std::map<std::string, int64_t>> out;
  for (int64_t r : rows)
    for (int64_t c : cols) out.push_back({{"s0", r}, {"s1", c}});
  return out;
}

std::vector<std::map<std::string, int64_t>> singles(const std::vector<int64_t>& values) {
  std::vector<std::map<std::string, int64_t>> out;
  for (int64_t v : values) out.push_back({{"s0", v}});
  return out;
}

TEST(DynamicShapes, KernelsTakeTheSizesAndGridsFollowThem) {
  CompiledGraph c = generate(test::softmax_graph(s0, s1), cpu_options());
  EXPECT_EQ(c.program.symbols(), (std::vector<std::string>{"s0", "s1"}));
  ASSERT_FALSE(c.module.kernels.empty());
  for (const EmittedKernel& k : c.module.kernels) {
    bool takes_size = false;
    for (const KernelParam& p : k.params) takes_size |= p.kind == KernelParam::Kind::Size;
    EXPECT_TRUE(takes_size) << k.name;
    EXPECT_FALSE(k.grid.as_const()) << k.name << ": grid " << k.grid.str() << " should follow the sizes";
  }
}

TEST(DynamicShapes, Pointwise) {
  check_bindings(test::pointwise_chain_graph(s0, s1), pairs({1, 3, 17}, {1, 2, 5, 8, 13, 127, 1000}), 1e-5, 1e-6);
}

TEST(DynamicShapes, PointwiseOneDimension) {
  GraphBuilder g;
  ValueRef x = g.input("x", DType::BFloat16, {s0});
  ValueRef y = g.call("aten.gelu.default", {A(x)}, DType::BFloat16, {s0});
  g.output(y);
  check_bindings(g.graph(), singles({1, 2, 7, 8, 9, 31, 1024, 4099, 65537}), 2e-2, 1e-2);
}

TEST(DynamicShapes, Broadcast) {
  // x[s0, s1] + row bias[s1] and * column scale[s0, 1].
  GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {s0, s1});
  ValueRef b = g.input("b", DType::Float32, {s1});
  ValueRef c = g.input("c", DType::Float32, {s0, 1});
  ValueRef add = g.call("aten.add.Tensor", {A(x), A(b)}, DType::Float32, {s0, s1});
  g.output(g.call("aten.mul.Tensor", {A(add), A(c)}, DType::Float32, {s0, s1}));
  check_bindings(g.graph(), pairs({1, 4, 7}, {1, 3, 8, 129}), 1e-6, 1e-6);
}

TEST(DynamicShapes, Softmax) {
  check_bindings(test::softmax_graph(s0, s1), pairs({1, 3}, kRowValues), 1e-5, 1e-6);
}

TEST(DynamicShapes, SoftmaxBf16Wavefront64) {
  check_bindings(test::softmax_graph(s0, s1, DType::BFloat16), pairs({2, 5}, {1, 7, 64, 1000, 4099}), 2e-2, 1e-2,
                 "cpu-w64");
}

TEST(DynamicShapes, LayerNormWithStatistics) {
  check_bindings(test::layer_norm_graph(s0, s1, true), pairs({1, 3}, kRowValues), 1e-4, 1e-5);
}

TEST(DynamicShapes, MeanAndVariance) {
  GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {s0, s1});
  ValueRef m = g.call("aten.mean.dim", {A(x), L({-1}), B(true)}, DType::Float32, {s0, 1});
  ValueRef v = g.call("aten.var.correction", {A(x), L({-1})}, DType::Float32, {s0},
                      {{"correction", I(1)}, {"keepdim", B(false)}});
  g.output(m);
  g.output(v);
  check_bindings(g.graph(), pairs({2, 5}, {2, 3, 9, 1000}), 1e-4, 1e-5);
}

TEST(DynamicShapes, RowAndColumnSums) {
  GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {s0, s1});
  g.output(g.call("aten.sum.dim_IntList", {A(x), L({1})}, DType::Float32, {s0}));
  g.output(g.call("aten.sum.dim_IntList", {A(x), L({0})}, DType::Float32, {s1}));
  check_bindings(g.graph(), pairs({1, 7, 33}, {1, 5, 129, 1030}), 1e-4, 1e-4);
}

TEST(DynamicShapes, ColumnSumReadByALaterKernelUsesASymbolicWorkspace) {
  // x - x.sum(0): the column sums reach memory (the workspace, sized by s1) before the pointwise kernel reads them.
  GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {s0, s1});
  ValueRef s = g.call("aten.sum.dim_IntList", {A(x), L({0}), B(true)}, DType::Float32, {1, s1});
  g.output(g.call("aten.sub.Tensor", {A(x), A(s)}, DType::Float32, {s0, s1}));
  CompiledGraph c = generate(g.graph(), cpu_options());
  EXPECT_FALSE(c.program.workspace_bytes.as_const()) << "workspace " << c.program.workspace_bytes.str();
  check_bindings(g.graph(), pairs({1, 6, 33}, {1, 7, 64, 1001}), 1e-4, 1e-4);
}

TEST(DynamicShapes, PermuteAndSliceViews) {
  // (x.T)[:, 1:] * 2 + y over x[s0, s1]: a transposed read and a slice starting past the first row.
  GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {s0, s1});
  ValueRef y = g.input("y", DType::Float32, {s1, s0 - 1});
  ValueRef t = g.call("aten.permute.default", {A(x), L({1, 0})}, DType::Float32, {s1, s0});
  Graph graph;
  ValueRef sl = g.call("aten.slice.Tensor", {A(t), I(1), I(1), Arg::of(s0)}, DType::Float32, {s1, s0 - 1});
  ValueRef m = g.call("aten.mul.Tensor", {A(sl), F(2.0)}, DType::Float32, {s1, s0 - 1});
  g.output(g.call("aten.add.Tensor", {A(m), A(y)}, DType::Float32, {s1, s0 - 1}));
  graph = g.graph();
  for (ValueRef v : {t, sl}) {  // the views' own layouts
    TensorMeta& meta = graph.nodes[v.node].outputs[0];
    meta.strides = {1, s1};
    if (v.node == sl.node) meta.offset = s1;
  }
  // s0 - 1 >= 1 is not what the ranges say (s0 >= 1), so bind only values where the slice is non-empty.
  check_bindings(graph, pairs({2, 3, 9}, {1, 4, 17, 100}), 1e-6, 1e-6);
}

TEST(DynamicShapes, Cat) {
  GraphBuilder g;
  ValueRef a = g.input("a", DType::Float32, {s0, s1});
  ValueRef b = g.input("b", DType::Float32, {s0, 3});
  g.output(g.call("aten.cat.default", {Arg{std::vector<std::optional<ValueRef>>{a, b}}, I(1)}, DType::Float32,
                  {s0, s1 + 3}));
  check_bindings(g.graph(), pairs({1, 5}, {1, 2, 4, 5, 8, 61}), 0, 0);
}

TEST(DynamicShapes, TwoDimsSharingOneSymbol) {
  // x[s0, s0] + x.T: both dims are s0.
  GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {s0, s0});
  ValueRef t = g.call("aten.permute.default", {A(x), L({1, 0})}, DType::Float32, {s0, s0});
  ValueRef y = g.call("aten.add.Tensor", {A(x), A(t)}, DType::Float32, {s0, s0});
  g.output(y);
  Graph graph = g.graph();
  graph.nodes[t.node].outputs[0].strides = {1, s0};
  CompiledGraph c = generate(graph, cpu_options());
  EXPECT_EQ(c.program.symbols(), std::vector<std::string>{"s0"});
  check_bindings(graph, singles({1, 2, 3, 8, 13, 64, 67}), 0, 0);
}

TEST(DynamicShapes, SizeExpressionsOfTwoSymbols) {
  // A flattened [s0 * s1] view of a softmax's output, scaled: sizes that are products of symbols.
  Graph graph = load_graph_file(HI_SOURCE_DIR "/tests/frontend/data/dynamic_softmax.json");
  check_bindings(graph, pairs({1, 4, 11}, {1, 3, 64, 999}), 1e-5, 1e-6);
}

TEST(DynamicShapes, SymbolicRowsTakeVectorGroups) {
  // Softmax rows of s1 columns: the row loop (the last variant, for the longest rows) is peeled (head, vector
  // groups, tail per row), for any s1.
  CompiledGraph c = generate(test::softmax_graph(s0, s1), cpu_options());
  ASSERT_FALSE(c.module.plans.empty());
  const auto& rows = std::get<RowPlan>(c.module.plans.back().shape);
  EXPECT_EQ(rows.form, RowPlan::Form::Looped) << to_string(c.module.plans.back());
  EXPECT_GT(rows.width, 1) << rows.width_reason;
  EXPECT_TRUE(rows.peeled) << to_string(c.module.plans.back());
}

/// The names of the kernels a run of a graph of one input and one output launches at `values`.
std::vector<std::string> launched(GraphRunner& runner, const std::vector<int64_t>& values) {
  int64_t elements = 1;
  for (int64_t v : values) elements *= v;
  std::vector<float> x(static_cast<size_t>(elements)), y(static_cast<size_t>(elements));
  runner.run({x.data()}, {y.data()}, values, nullptr, nullptr);
  std::vector<std::string> names;
  for (const auto& [name, grid] : runner.grids()) names.push_back(name);
  return names;
}

TEST(DynamicShapes, SymbolicRowLengthsPickAPersistentVariantPerCall) {
  // One compile, several kernels for the softmax: persistent rows for row lengths up to each bound of the ladder,
  // the row loop past the last; the call's row length launches exactly one of them, and every one is right.
  const Graph graph = test::softmax_graph(s0, s1);
  CompiledGraph c = generate(graph, cpu_options());
  std::vector<std::string> names;
  for (const KernelPlan& plan : c.module.plans) {
    names.push_back(plan.kernel);
    const auto& rows = std::get<RowPlan>(plan.shape);
    const bool variant = plan.kernel.find("_upto") != std::string::npos;
    EXPECT_EQ(rows.form == RowPlan::Form::Persistent, variant) << to_string(plan);
    EXPECT_NE(plan.grid_reason.find("a variant: runs where"), std::string::npos) << to_string(plan);
  }
  ASSERT_EQ(names.size(), 6u) << to_string(c.module.plans[0]);
  auto compiled = std::make_shared<const CompiledGraph>(compile_graph(graph, cpu_options()));
  CpuDevice device(compiled->module.target);
  GraphRunner runner(compiled, device);
  EXPECT_EQ(launched(runner, {3, 7}), std::vector<std::string>{names[0]});
  EXPECT_EQ(launched(runner, {3, 1024}), std::vector<std::string>{names[0]});
  EXPECT_EQ(launched(runner, {3, 1025}), std::vector<std::string>{names[1]});
  EXPECT_EQ(launched(runner, {3, 2049}), std::vector<std::string>{names[2]});
  EXPECT_EQ(launched(runner, {1, 8192}), std::vector<std::string>{names[3]});
  EXPECT_EQ(launched(runner, {1, 16384}), std::vector<std::string>{names[4]});
  EXPECT_EQ(launched(runner, {1, 16385}), std::vector<std::string>{names[5]});
  check_bindings(graph, pairs({1, 3}, {1, 2, 7, 1024, 1025, 2049, 4099, 8192, 16384, 16385}), 1e-5, 1e-6);
}

TEST(DynamicShapes, SymbolicRowLengthsPersistentBf16AndStatistics) {
  // Variants where rows keep several operands and values in registers (LayerNorm's weights, mean and rstd outputs;
  // bf16 softmax's cached exponentials), and a warp of 64.
  check_bindings(test::layer_norm_graph(s0, s1, true), pairs({1, 3}, {1, 5, 64, 1000, 1031, 4096, 5000}), 1e-4,
                 1e-5);
  check_bindings(test::softmax_graph(s0, s1, DType::BFloat16), pairs({2, 5}, {1, 8, 33, 1024, 3001}), 2e-2, 1e-2,
                 "cpu-w64");
}

TEST(DynamicShapes, SymbolicColumnCountsPickRowSlicesForFewOutputs) {
  // x.sum(0) over x[s0, s1]: fewer than 32768 outputs take row slices (32 outputs x 32 slices of the rows per
  // block), more keep one output per thread; each is right for rows of 1, ragged blocks and past the switch.
  GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {s0, s1});
  g.output(g.call("aten.sum.dim_IntList", {A(x), L({0})}, DType::Float32, {s1}));
  const Graph graph = g.graph();
  CompiledGraph c = generate(graph, cpu_options());
  ASSERT_EQ(c.module.plans.size(), 2u);
  EXPECT_EQ(std::get<ColumnPlan>(c.module.plans[0].shape).form, ColumnPlan::Form::RowSlices)
      << to_string(c.module.plans[0]);
  EXPECT_EQ(std::get<ColumnPlan>(c.module.plans[1].shape).form, ColumnPlan::Form::OutputsPerThread)
      << to_string(c.module.plans[1]);
  auto compiled = std::make_shared<const CompiledGraph>(compile_graph(graph, cpu_options()));
  CpuDevice device(compiled->module.target);
  GraphRunner runner(compiled, device);
  EXPECT_EQ(launched(runner, {40, 33}), std::vector<std::string>{c.module.plans[0].kernel});
  EXPECT_EQ(launched(runner, {2, 32768}), std::vector<std::string>{c.module.plans[1].kernel});
  std::vector<std::map<std::string, int64_t>> bindings = pairs({1, 2, 67}, {1, 31, 33, 1030, 4097});
  bindings.push_back({{"s0", 3}, {"s1", 32768}});
  bindings.push_back({{"s0", 1}, {"s1", 40001}});
  check_bindings(graph, bindings, 1e-4, 1e-4);
}

TEST(DynamicShapes, ArangeOverSymbolicBounds) {
  // Positions over a dynamic length: arange(s0), arange(s1, s1 + s0) and arange(1, s0 + 1, 3) as f32; lengths are
  // the symbolic expressions, values index expressions.
  GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {s0});
  ValueRef y = g.input("y", DType::Float32, {s1});  // s1 is a size too, as dynamo's symbols are
  ValueRef a = g.call("aten.arange.default", {Arg::of(s0)}, DType::Int64, {s0});
  ValueRef b = g.call("aten.arange.start", {Arg::of(s1), Arg::of(s1 + s0)}, DType::Int64, {s0});
  ValueRef c = g.call("aten.arange.start_step", {I(1), Arg::of(s0 + 1), I(3)}, DType::Float32,
                      {floordiv(s0 + 2, Index(3))}, {{"dtype", Arg::of(DType::Float32)}});
  ValueRef ab = g.call("aten.add.Tensor", {A(a), A(b)}, DType::Int64, {s0});
  g.output(g.call("aten.mul.Tensor", {A(x), A(ab)}, DType::Float32, {s0}));
  g.output(c);
  g.output(g.call("aten.mul.Tensor", {A(y), F(2.0)}, DType::Float32, {s1}));
  check_bindings(g.graph(), pairs({1, 2, 3, 4, 7, 100}, {1, 5}), 0, 0);
}

TEST(DynamicShapes, SymbolicPointwiseTakesVectorGroups) {
  CompiledGraph c = generate(test::pointwise_chain_graph(s0, s1), cpu_options());
  ASSERT_EQ(c.module.plans.size(), 1u);
  const auto& pw = std::get<PointwisePlan>(c.module.plans[0].shape);
  EXPECT_EQ(pw.form, PointwisePlan::Form::VectorGroups) << to_string(c.module.plans[0]);
  EXPECT_EQ(pw.width, 4) << pw.width_reason;
}

TEST(DynamicShapes, DivisibilityPromisesGiveAlignedVectorRows) {
  // LayerNorm's weights are indexed by the column alone, out of phase with peeled rows: without a promise the
  // persistent variants whose rows' weights fit in shared memory (up to 4096 f32 columns, 2 x 16 KiB) stage them
  // there and peel their rows to vector groups of 4; longer rows and the row loop stay scalar. With s1 promised
  // divisible by 8, rows take vector groups of 4 f32 unpeeled.
  Graph graph = test::layer_norm_graph(s0, s1, true);
  CompiledGraph plain = generate(graph, cpu_options());
  for (const KernelPlan& plan : plain.module.plans) {
    const auto& rows = std::get<RowPlan>(plan.shape);
    const bool staged = rows.form == RowPlan::Form::Persistent && rows.length <= 4096;
    EXPECT_EQ(rows.width, staged ? 4 : 1) << to_string(plan);
    EXPECT_EQ(rows.peeled, staged) << to_string(plan);
    EXPECT_EQ(rows.staged.size(), staged ? 2u : 0u) << to_string(plan);
  }
  check_bindings(graph, pairs({1, 3}, {1, 5, 37, 1027, 2051, 4095}), 1e-4, 1e-5);
  graph.divisible = {{"s1", 8}};
  CompiledGraph promised = generate(graph, cpu_options());
  for (const KernelPlan& plan : promised.module.plans)
    EXPECT_EQ(std::get<RowPlan>(plan.shape).width, 4) << to_string(plan);
  const auto& rows = std::get<RowPlan>(promised.module.plans.back().shape);
  EXPECT_FALSE(rows.peeled);
  EXPECT_EQ(promised.program.symbols(), (std::vector<std::string>{"s0", "s1"}));
  check_bindings(graph, pairs({1, 3}, {8, 16, 24, 1000, 4104}), 1e-4, 1e-5);

  auto compiled = std::make_shared<const CompiledGraph>(compile_graph(graph, cpu_options()));
  CpuDevice device(compiled->module.target);
  GraphRunner runner(compiled, device);
  std::vector<float> x(64), w(16), b(16), out(64), mean(4), rstd(4);
  try {
    runner.run({x.data(), w.data(), b.data()}, {out.data(), mean.data(), rstd.data()}, {2, 12}, nullptr, nullptr);
    FAIL() << "s1 = 12 ran against the promise of 8";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("s1 = 12 is not divisible by 8"), std::string::npos) << e.what();
  }
}

TEST(DynamicShapes, ValuesOutsideTheCompiledRangeAreRefused) {
  auto compiled = std::make_shared<const CompiledGraph>(compile_graph(test::softmax_graph(s0, s1), cpu_options()));
  CpuDevice device(compiled->module.target);
  GraphRunner runner(compiled, device);
  EXPECT_EQ(runner.symbols(), (std::vector<std::string>{"s0", "s1"}));
  std::vector<float> x(8), out(8);
  std::vector<void*> in{x.data()}, outs{out.data()};
  try {
    runner.run(in, outs, {2, 0}, nullptr, nullptr);
    FAIL() << "a size of 0 ran";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("s1 = 0"), std::string::npos) << e.what();
  }
  EXPECT_THROW(runner.run(in, outs, {2}, nullptr, nullptr), std::invalid_argument);   // one value missing
  EXPECT_THROW(runner.run(in, outs, nullptr), std::invalid_argument);                 // none given
  EXPECT_THROW(runner.workspace_bytes(), std::invalid_argument);
  EXPECT_EQ(runner.workspace_bytes({2, 4}) % kWorkspaceAlignment, 0u);
}

TEST(DynamicShapes, RebindingOnlyEvaluatesGrids) {
  auto compiled = std::make_shared<const CompiledGraph>(compile_graph(test::pointwise_chain_graph(s0, s1), cpu_options()));
  CpuDevice device(compiled->module.target);
  GraphRunner runner(compiled, device);
  std::vector<float> x(4096), y(4096), out(4096);
  std::vector<void*> in{x.data(), y.data()}, outs{out.data()};
  runner.run(in, outs, {2, 3}, nullptr, nullptr);
  auto small = runner.grids();
  runner.run(in, outs, {64, 64}, nullptr, nullptr);
  auto large = runner.grids();
  ASSERT_EQ(small.size(), 1u);
  ASSERT_EQ(large.size(), 1u);
  EXPECT_LT(small[0].second, large[0].second) << "the grid follows s0 * s1";
}

TEST(DynamicShapes, OpsThatCannotTakeSymbolsFailNamingTheNode) {
  // slice_scatter along a symbolic dim has no symbolic lowering: a LoweringError naming the node, at compile time.
  GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {s0, 4});
  ValueRef src = g.input("src", DType::Float32, {1, 4});
  g.output(g.call("aten.slice_scatter.default", {A(x), A(src), I(0), I(0), I(1)}, DType::Float32, {s0, 4}));
  try {
    generate(g.graph(), cpu_options());
    FAIL() << "slice_scatter over a symbolic dim compiled";
  } catch (const LoweringError& e) {
    EXPECT_NE(std::string(e.what()).find("slice_scatter"), std::string::npos) << e.what();
  }
}

TEST(DynamicShapes, TheGraphEntryServesEverySizeInANewProcess) {
  TempDirectory scratch{"hi-dynamic-cache-test-"};
  CodeObjectCache cache{scratch.path() / "cache"};
  const Graph graph = test::layer_norm_graph(s0, s1, true);
  CompileOptions o = cpu_options();
  o.cache = &cache;
  CompiledGraph cold = compile_graph(graph, o);
  EXPECT_FALSE(cold.graph_cache_hit);
  // What a new process does: read the graph again (as JSON) and compile it: the entry is found without lowering.
  const Graph reread = read_graph_json(write_graph_json(graph), "reread");
  auto warm = std::make_shared<const CompiledGraph>(compile_graph(reread, o));
  ASSERT_TRUE(warm->graph_cache_hit);
  EXPECT_TRUE(warm->program.computations.empty()) << "lowering was skipped";
  EXPECT_EQ(warm->program.symbols(), cold.program.symbols());
  CpuDevice device(warm->module.target);
  GraphRunner runner(warm, device);
  uint64_t seed = 1;
  for (const auto& values : pairs({1, 3}, {1, 7, 129, 4099}))
    test::expect_matches(run_bound_against_reference(graph, runner, values, seed++), 1e-4, 1e-5);
}

}  // namespace
}  // namespace hi
