// Properties of emitted source that the cpu device cannot expose (its fibers run a block's threads in order).
#include <gtest/gtest.h>

#include <regex>

#include "tests/common/graph_builder.h"
#include "tools/pipeline/compile_graph.h"

namespace hi {
namespace {

using test::A;
using test::B;
using test::L;

TEST(Codegen, RowKernelReadsItsOwnRowResultsFromRegistersEvenWhenStored) {
  // s is a graph output (stored by thread 0) and feeds the epilogue of the same kernel: the epilogue must take it
  // from the register every thread holds, never read back what thread 0 may not have written yet.
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {16, 64});
  ValueRef s = g.call("aten.sum.dim_IntList", {A(x), L({Index(-1)}), B(true)}, DType::Float32, {16, 1});
  ValueRef y = g.call("aten.div.Tensor", {A(x), A(s)}, DType::Float32, {16, 64});
  g.output(y);
  g.output(s);
  CompileOptions o;
  o.target = parse_target("sm_90");
  CompiledGraph c = generate(g.graph(), o);
  ASSERT_EQ(c.module.kernels.size(), 1u);
  std::string text = kernels_text(c.module);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(text, m, std::regex(R"(if \((threadIdx\.x|lane) == 0[^)]*\) (out_ptr\d+)\[)")))
      << text;
  std::string out_param = m[2].str();
  size_t after_store = text.find('\n', static_cast<size_t>(m.position(0)));
  EXPECT_EQ(text.find(out_param + "[row]", after_store), std::string::npos) << "reads back " << out_param << "\n" << text;
  EXPECT_NE(text.find("v_out"), std::string::npos) << text;
}

}  // namespace
}  // namespace hi
