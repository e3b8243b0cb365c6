// Sizes at the edges: every dim of every kernel class may be 0 or 1 (a valid graph, which the planners and emitters
// must neither divide by nor loop over), and sizes whose index arithmetic overflows int64 are bad input.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "frontend/graph_json.h"
#include "run_on_cpu.h"
#include "tests/common/graph_builder.h"

namespace hi {
namespace {

using test::A;
using test::B;
using test::I;
using test::L;

/// One graph holding a kernel of each class over x [a, b] (and the transposed view of an [b, a] input, which takes
/// the transposed-tile plan when both are multiples of 32): pointwise, row, column and full reductions, softmax,
/// var/std, a scan, a concatenation, and layer norm. Outputs come from call_inferred, so their
/// metas are what the graph reader would accept.
Graph every_kernel_class(int64_t a, int64_t b, DType dt) {
  test::GraphBuilder g;
  ValueRef x = g.input("x", dt, {a, b});
  ValueRef y = g.input("y", dt, {a, b});
  ValueRef t = g.input("t", dt, {a, b}, {1, a});  // [a, b] viewed from a contiguous [b, a]
  ValueRef w = g.input("w", dt, {b});
  ValueRef sum = g.call_inferred("add", "aten.add.Tensor", {A(x), A(t)});
  g.output(g.call_inferred("relu", "aten.relu.default", {A(sum)}));
  g.output(g.call_inferred("mul", "aten.mul.Tensor", {A(x), A(y)}));
  g.output(g.call_inferred("rows", "aten.sum.dim_IntList", {A(x), L({1})}));
  g.output(g.call_inferred("columns", "aten.sum.dim_IntList", {A(x), L({0})}));
  g.output(g.call_inferred("all", "aten.sum.default", {A(x)}));
  g.output(g.call_inferred("mean", "aten.mean.dim", {A(y), L({0})}));
  g.output(g.call_inferred("softmax", "aten._softmax.default", {A(x), I(-1), B(false)}));
  g.output(g.call_inferred("var", "aten.var.correction", {A(x), L({1})}));
  g.output(g.call_inferred("std", "aten.std.correction", {A(y), L({0})}));
  g.output(g.call_inferred("cumsum", "aten.cumsum.default", {A(x), I(1)}));
  g.output(g.call_inferred("cat", "aten.cat.default", {Arg{std::vector<std::optional<ValueRef>>{x, t}}, I(1)}));
  g.output(g.call_inferred("ln", "aten.native_layer_norm.default",
                           {A(x), L({b}), A(w), A(w), test::F(1e-5)}));
  return g.graph();
}

/// Each dim 0, 1 or 64 (a multiple of the tiles and vector widths, so the widest plans are on the table).
TEST(EdgeSizes, EveryKernelClassCompilesAndRunsWithZeroAndOneInEachPosition) {
  for (int64_t a : {0, 1, 64})
    for (int64_t b : {0, 1, 64}) {
      SCOPED_TRACE("x [" + std::to_string(a) + ", " + std::to_string(b) + "]");
      const Graph f32 = every_kernel_class(a, b, DType::Float32);
      // The GPU targets' plans and source (no compiler run), then the cpu device against the reference.
      for (const char* target : {"gfx942", "sm_90"}) {
        CompileOptions o;
        o.target = parse_target(target);
        o.graph_name = "edge";
        EXPECT_NO_THROW(generate(f32, o)) << target;
        EXPECT_NO_THROW(generate(every_kernel_class(a, b, DType::BFloat16), o)) << target;
      }
      test::expect_matches(test::run_on_cpu(f32, "cpu-w64"), 1e-4, 1e-5);
    }
}

/// A 3-d pointwise and reduction mix with 0 and 1 in each position, including the innermost one.
TEST(EdgeSizes, ThreeDimsWithZeroOrOneInEachPosition) {
  for (int64_t z : {0, 1})
    for (int d = 0; d < 3; ++d) {
      std::vector<Index> s = {32, 64, 32};
      s[static_cast<size_t>(d)] = Index(z);
      SCOPED_TRACE("dim " + std::to_string(d) + " = " + std::to_string(z));
      test::GraphBuilder g;
      ValueRef x = g.input("x", DType::Float32, s);
      ValueRef p = g.call_inferred("permute", "aten.permute.default", {A(x), L({2, 1, 0})});
      ValueRef c = g.call_inferred("clone", "aten.clone.default", {A(p)});
      g.output(g.call_inferred("neg", "aten.neg.default", {A(c)}));
      g.output(g.call_inferred("amax", "aten.sum.dim_IntList", {A(x), L({1}), B(true)}));
      for (const char* target : {"gfx90a", "sm_90"}) {
        CompileOptions o;
        o.target = parse_target(target);
        o.graph_name = "edge3";
        EXPECT_NO_THROW(generate(g.graph(), o)) << target;
      }
      test::expect_matches(test::run_on_cpu(g.graph(), "cpu"), 1e-5, 1e-6);
    }
}

/// Sizes near 2^31, 2^40, 2^53 and 2^62 elements: every kernel class is planned and printed for each target, in as
/// few steps as for small sizes (the planners compute in int64 in constant time; a doubling loop over `int` wrapped to
/// 0 past 2^30 and never ended, so this test hangs until ctest's timeout when one comes back). The cpu device's source
/// is not compiled: nothing here can run, and compile time does not depend on the sizes.
TEST(EdgeSizes, HugeSizesPlanAndPrintForEveryKernelClass) {
  struct Case {
    int64_t a, b;
    DType dtype;
  };
  const int64_t k31 = int64_t{1} << 31, k40 = int64_t{1} << 40, k53 = int64_t{1} << 53;
  // Rows, columns, one long row and one long column at each magnitude; 2^60 half-precision elements are the
  // largest every_kernel_class's graph holds (its concatenation doubles a dim; each tensor's bytes stay below 2^63).
  // Several such intermediates live at once need a workspace past 2^63 bytes: that is bad input, said so, never an
  // overflowed offset.
  const std::vector<Case> cases = {
      {1, k31, DType::Float32},          {k31, 1, DType::Float32},          {k31 / 64, 64, DType::Float32},
      {1, k40, DType::Float32},          {k40, 1, DType::Float32},          {1 << 20, 1 << 20, DType::Float32},
      {1, k53, DType::Float32},          {k53, 1, DType::Float32},          {int64_t{1} << 27, 1 << 26, DType::Float32},
      {1, int64_t{1} << 60, DType::BFloat16}, {int64_t{1} << 60, 1, DType::Float16},
      {int64_t{1} << 30, int64_t{1} << 30, DType::BFloat16}};
  for (const Case& c : cases) {
    SCOPED_TRACE("x [" + std::to_string(c.a) + ", " + std::to_string(c.b) + "] " + std::string(dtype_name(c.dtype)));
    const Graph g = every_kernel_class(c.a, c.b, c.dtype);
    for (const char* target : {"gfx942", "sm_90", "cpu"}) {
      CompileOptions o;
      o.target = parse_target(target);
      o.graph_name = "huge";
      try {
        generate(g, o);
      } catch (const std::invalid_argument& e) {
        EXPECT_GE(c.a * c.b, int64_t{1} << 60) << target << ": " << e.what();
        EXPECT_NE(std::string(e.what()).find("workspace of more than 2^63 bytes"), std::string::npos) << e.what();
      }
    }
  }
  // 2^62 int8 elements are 2^62 bytes: a sum over them plans too.
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Int8, {int64_t{1} << 31, int64_t{1} << 31});
  g.output(g.call_inferred("all", "aten.sum.default", {A(x)}));
  g.output(g.call_inferred("rows", "aten.amax.default", {A(x), L({1})}));
  g.output(g.call_inferred("columns", "aten.sum.dim_IntList", {A(x), L({0})}));
  CompileOptions o;
  o.target = parse_target("gfx90a");
  o.graph_name = "huge_int8";
  EXPECT_NO_THROW(generate(g.graph(), o));
}

std::string graph_text(const std::string& sizes, const std::string& strides = "") {
  return R"({"format": "hipinductor-graph", "version": 1, "nodes": [
    {"name": "x", "op": "placeholder", "meta": {"dtype": "float32", "sizes": )" +
         sizes + (strides.empty() ? "" : R"(, "strides": )" + strides) + R"(}},
    {"name": "y", "op": "aten.neg.default", "args": [{"ref": "x"}]}],
    "outputs": [{"ref": "y"}]})";
}

std::string read_error(const std::string& text) {
  try {
    read_graph_json(text, "big.json");
  } catch (const GraphFormatError& e) {
    return e.what();
  }
  return "(accepted)";
}

/// Element counts and byte extents past int64 are refused by the reader, naming the field, before any stage does
/// arithmetic on them.
TEST(EdgeSizes, SizesAndStridesWhoseProductsOverflowAreBadInput) {
  EXPECT_NE(read_error(graph_text("[4294967296, 4294967296]")).find("field 'meta.sizes'"), std::string::npos)
      << read_error(graph_text("[4294967296, 4294967296]"));
  EXPECT_NE(read_error(graph_text("[3, 2]", "[4611686018427387904, 1]")).find("field 'meta.strides'"),
            std::string::npos)
      << read_error(graph_text("[3, 2]", "[4611686018427387904, 1]"));
  // The byte extent counts too: 2^61 float32 elements are 2^63 bytes.
  EXPECT_NE(read_error(graph_text("[2305843009213693952]")).find("byte offset"), std::string::npos);
  // An empty tensor addresses nothing, however large its other sizes and strides.
  EXPECT_EQ(read_error(graph_text("[0, 9223372036854775807]", "[9223372036854775807, 9223372036854775807]")),
            "(accepted)");
}

}  // namespace
}  // namespace hi
