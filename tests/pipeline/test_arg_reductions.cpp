// Arg reductions (argmax, argmin, max / min with indices) as a kernel class: every kernel shape their plans take
// (rows in registers, row loops plain and peeled, column outputs per thread with and without vector groups, row
// slices, vector row slices, split stages), run on the cpu device at warp widths 32 and 64 against the reference
// interpreter (eager's first extreme, NaN counting as the extreme), in every dtype, with ties, NaNs and signed zeros.
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
using test::I;

/// One input layout, the dim reduced and the plan form its arg reduction must take (a piece of the first line of its
/// plan's text), compiled with or without split reductions.
struct Layout {
  std::vector<int64_t> sizes;
  int64_t dim;
  const char* form;
  bool split = true;
};

const std::vector<Layout>& layouts() {
  static const std::vector<Layout> l = {
      {{37, 45}, 1, "persistent rows"},         // odd rows in registers
      {{6, 64}, -1, "persistent rows"},         // vector groups, rows of a warp
      {{37, 45}, 0, "row slices"},              // few odd outputs: rows sliced across the block
      {{300, 64}, 0, "vector row slices"},      // few output groups: vector loads, rows sliced
      {{5, 300, 16}, 1, "vector row slices"},   // a middle dim
      {{3, 32771}, 0, "outputs per thread"},    // an output per thread
      {{2, 3, 65536}, 1, "outputs per thread"}, // four outputs per thread with vector loads
      {{5000, 3}, 0, "column_reduction"},       // long columns, few outputs: split into two stages
      {{3, 40001}, 1, "row_reduction"},         // few long rows: split
      {{2, 1}, 1, "row_reduction"},             // a dim of one
      {{1, 9}, 0, "column_reduction"},
      {{3, 40000}, 1, "looped rows", false},         // rows too long for registers
      {{3, 40001}, 1, "looped rows, peeled", false}, // ... of a length no vector width divides
      {{5000, 3}, 0, "row slices", false},
  };
  return l;
}

/// Small integers (many ties) with a NaN in some lines (floats), the first and the last element of a line among
/// them; and -0 next to +0 where a line's extreme is zero.
HostTensor arg_input(DType dt, const std::vector<int64_t>& sizes, uint64_t seed) {
  HostTensor t = random_tensor(dt, sizes, seed);
  std::vector<double>& s = t.storage;
  const int64_t n = static_cast<int64_t>(s.size());
  for (int64_t i = 0; i < n; ++i) s[i] = round_to_dtype(dt, std::round(s[i] / 4));  // -2..2 (ints), -1..1 (floats)
  if (!is_floating(dt)) return t;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (int64_t i = 0; i < n; i += 997) s[i] = nan;
  if (n > 1) s[n - 1] = nan;
  for (int64_t i = 1; i < n; i += 13) s[i] = (i / 13) % 2 ? -0.0 : 0.0;
  return t;
}

/// argmax / argmin (keepdim or not) and max / min with indices of every layout compiled with `split` or without,
/// in f32.
Graph arg_graph(bool split) {
  test::GraphBuilder g;
  int n = 0;
  for (const Layout& l : layouts()) {
    if (l.split != split) continue;
    ValueRef x = g.input("x" + std::to_string(n), DType::Float32, std::vector<Index>(l.sizes.begin(), l.sizes.end()));
    const std::string tag = std::to_string(n++);
    g.output(g.call_inferred("amax" + tag, "aten.argmax.default", {A(x), I(l.dim)}));
    g.output(g.call_inferred("amin" + tag, "aten.argmin.default", {A(x), I(l.dim), B(true)}));
    ValueRef mx = g.call_inferred("max" + tag, "aten.max.dim", {A(x), I(l.dim)});
    g.output(mx);
    g.output(ValueRef{mx.node, 1});
    ValueRef mn = g.call_inferred("min" + tag, "aten.min.dim", {A(x), I(l.dim), B(true)});
    g.output(mn);
    g.output(ValueRef{mn.node, 1});
  }
  return g.graph();
}

/// The dtypes other than f32, over rows in registers, row slices, vector row slices (V = 8 for 16-bit types) and
/// split columns: argmin and max with indices of each.
const std::vector<DType> kOtherDtypes = {DType::BFloat16, DType::Float16, DType::Float64, DType::Int32,
                                         DType::Int64,    DType::Int8,    DType::UInt8};
const std::vector<Layout> kDtypeLayouts = {
    {{37, 45}, 1, "persistent rows"}, {{37, 45}, 0, "row slices"}, {{300, 64}, 0, "vector row slices"},
    {{5000, 3}, 0, "column_reduction"}};

Graph dtypes_graph() {
  test::GraphBuilder g;
  int n = 0;
  for (DType dt : kOtherDtypes)
    for (const Layout& l : kDtypeLayouts) {
      ValueRef x = g.input("x" + std::to_string(n), dt, std::vector<Index>(l.sizes.begin(), l.sizes.end()));
      const std::string tag = std::to_string(n++);
      g.output(g.call_inferred("amin" + tag, "aten.argmin.default", {A(x), I(l.dim)}));
      ValueRef mx = g.call_inferred("max" + tag, "aten.max.dim", {A(x), I(l.dim), B(true)});
      g.output(mx);
      g.output(ValueRef{mx.node, 1});
    }
  return g.graph();
}

/// Compiles `g` for the cpu target `target`, runs it on `inputs` (placeholder order, row-major) and evaluates it
/// with the reference interpreter.
NumericsCheck run_on_inputs(const Graph& g, const std::string& target, bool split,
                            const std::vector<HostTensor>& inputs) {
  CompileOptions o;
  o.target = parse_target(target);
  o.graph_name = "arg_reductions";
  o.split.enabled = split;
  return run_on_inputs_against_reference(g, o, inputs);
}

class ArgReductions : public ::testing::TestWithParam<std::string> {};

void expect_equal(const NumericsCheck& r) {
  ASSERT_EQ(r.actual.size(), r.expected.size());
  for (size_t out = 0; out < r.actual.size(); ++out) {
    std::string why;
    EXPECT_TRUE(all_close(r.actual[out], r.expected[out], 0, 0, &why)) << "output " << out << ": " << why;
  }
}

/// Whether some kernel's plan names `form` on its first line.
bool planned_as(const EmittedModule& m, const std::string& form) {
  for (const KernelPlan& plan : m.plans) {
    const std::string text = to_string(plan);
    if (text.substr(0, text.find('\n')).find(form) != std::string::npos) return true;
  }
  return false;
}

TEST_P(ArgReductions, EveryKernelShapeMatchesEager) {
  for (bool split : {true, false}) {
    SCOPED_TRACE(split ? "split" : "unsplit");
    std::vector<HostTensor> inputs;
    uint64_t seed = 1;
    for (const Layout& l : layouts())
      if (l.split == split) inputs.push_back(arg_input(DType::Float32, l.sizes, seed++));
    NumericsCheck r = run_on_inputs(arg_graph(split), GetParam(), split, inputs);
    expect_equal(r);
    for (const Layout& l : layouts())
      if (l.split == split) EXPECT_TRUE(planned_as(r.compiled->module, l.form)) << "no kernel planned as " << l.form;
  }
}

// The dtypes' kernels differ from f32's in their types only: one warp width.
TEST(ArgReductions, EveryDtypeMatchesEager) {
  std::vector<HostTensor> inputs;
  uint64_t seed = 1;
  for (DType dt : kOtherDtypes)
    for (const Layout& l : kDtypeLayouts) inputs.push_back(arg_input(dt, l.sizes, seed++));
  NumericsCheck r = run_on_inputs(dtypes_graph(), "cpu", true, inputs);
  expect_equal(r);
  for (const Layout& l : kDtypeLayouts)
    EXPECT_TRUE(planned_as(r.compiled->module, l.form)) << "no kernel planned as " << l.form;
}

INSTANTIATE_TEST_SUITE_P(WarpWidths, ArgReductions, ::testing::Values("cpu", "cpu-w64"),
                         [](const auto& info) { return std::string(info.param == "cpu" ? "w32" : "w64"); });

}  // namespace
}  // namespace hi
