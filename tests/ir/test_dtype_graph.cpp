#include <gtest/gtest.h>

#include <algorithm>

#include "ir/dtype.h"
#include "ir/graph.h"

namespace hi {
namespace {

// ---- dtypes ---------------------------------------------------------------------------------------------------

TEST(DType, NamesRoundTrip) {
  for (DType t : {DType::Bool, DType::UInt8, DType::Int8, DType::Int16, DType::Int32, DType::Int64, DType::Float16,
                  DType::BFloat16, DType::Float32, DType::Float64}) {
    EXPECT_EQ(parse_dtype(dtype_name(t)), t) << dtype_name(t);
    EXPECT_EQ(parse_dtype("torch." + std::string(dtype_name(t))), t) << dtype_name(t);
  }
  EXPECT_EQ(dtype_name(DType::BFloat16), "bfloat16");
  EXPECT_EQ(dtype_name(DType::Bool), "bool");
}

TEST(DType, ParsesTorchAliases) {
  EXPECT_EQ(parse_dtype("torch.float"), DType::Float32);
  EXPECT_EQ(parse_dtype("half"), DType::Float16);
  EXPECT_EQ(parse_dtype("torch.double"), DType::Float64);
  EXPECT_EQ(parse_dtype("torch.long"), DType::Int64);
  EXPECT_EQ(parse_dtype("int"), DType::Int32);
  EXPECT_EQ(parse_dtype("torch.short"), DType::Int16);
  EXPECT_EQ(parse_dtype("float8"), std::nullopt);
  EXPECT_EQ(parse_dtype("torch."), std::nullopt);
  EXPECT_EQ(parse_dtype("Float32"), std::nullopt);
}

TEST(DType, SizesAndCategories) {
  EXPECT_EQ(dtype_bytes(DType::Bool), 1);
  EXPECT_EQ(dtype_bytes(DType::BFloat16), 2);
  EXPECT_EQ(dtype_bytes(DType::Int32), 4);
  EXPECT_EQ(dtype_bytes(DType::Float64), 8);
  EXPECT_TRUE(is_floating(DType::BFloat16));
  EXPECT_FALSE(is_floating(DType::Int64));
  EXPECT_TRUE(is_integer(DType::UInt8));
  EXPECT_FALSE(is_integer(DType::Bool));
  EXPECT_FALSE(is_integer(DType::Float16));
}

TEST(DType, PromotionMatchesTorch) {
  struct Case {
    DType a, b, want;
  };
  // Answers of torch.promote_types(a, b).
  const Case cases[] = {
      {DType::Bool, DType::Bool, DType::Bool},          {DType::Bool, DType::UInt8, DType::UInt8},
      {DType::Bool, DType::Float16, DType::Float16},    {DType::Bool, DType::Int64, DType::Int64},
      {DType::UInt8, DType::Int8, DType::Int16},        {DType::UInt8, DType::Int16, DType::Int16},
      {DType::UInt8, DType::Int32, DType::Int32},       {DType::UInt8, DType::Int64, DType::Int64},
      {DType::Int8, DType::Int16, DType::Int16},        {DType::Int8, DType::Int64, DType::Int64},
      {DType::Int32, DType::Int64, DType::Int64},       {DType::Int64, DType::Float16, DType::Float16},
      {DType::Int64, DType::BFloat16, DType::BFloat16}, {DType::Int32, DType::Float32, DType::Float32},
      {DType::UInt8, DType::Float16, DType::Float16},   {DType::Float16, DType::BFloat16, DType::Float32},
      {DType::Float16, DType::Float32, DType::Float32}, {DType::BFloat16, DType::Float32, DType::Float32},
      {DType::BFloat16, DType::Float64, DType::Float64}, {DType::Float32, DType::Float64, DType::Float64},
      {DType::Int64, DType::Float64, DType::Float64},   {DType::Float16, DType::Float16, DType::Float16},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(promote_types(c.a, c.b), c.want) << dtype_name(c.a) << " + " << dtype_name(c.b);
    EXPECT_EQ(promote_types(c.b, c.a), c.want) << dtype_name(c.b) << " + " << dtype_name(c.a);
  }
}

// ---- tensor metadata ------------------------------------------------------------------------------------------

TEST(TensorMeta, ContiguousStridesAreSymbolic) {
  Index s0 = Index::var("s0");
  TensorMeta m = TensorMeta::contiguous(DType::Float16, {s0, 3, 4});
  ASSERT_EQ(m.strides.size(), 3u);
  EXPECT_EQ(m.strides[0], Index(12));
  EXPECT_EQ(m.strides[1], Index(4));
  EXPECT_EQ(m.strides[2], Index(1));
  EXPECT_EQ(m.numel(), s0 * 12);
  EXPECT_TRUE(m.is_contiguous());
  EXPECT_EQ(TensorMeta::contiguous(DType::Float32, {}).numel(), Index(1));
}

TEST(TensorMeta, ContiguityIgnoresSizeOneDims) {
  TensorMeta m = TensorMeta::contiguous(DType::Float32, {2, 1, 5});
  m.strides[1] = Index(77);
  EXPECT_TRUE(m.is_contiguous());
  TensorMeta t = m;
  std::swap(t.strides[0], t.strides[2]);  // a transpose
  EXPECT_FALSE(t.is_contiguous());
  TensorMeta shifted = m;
  shifted.offset = Index(5);
  EXPECT_FALSE(shifted.is_contiguous());
}

// ---- graph ----------------------------------------------------------------------------------------------------

Node placeholder(std::string name) {
  Node n;
  n.name = std::move(name);
  n.kind = NodeKind::Placeholder;
  n.outputs = {TensorMeta::contiguous(DType::Float32, {4, 8})};
  return n;
}

Node call(std::string name, std::string target, std::vector<Arg> args) {
  Node n;
  n.name = std::move(name);
  n.target = std::move(target);
  n.args = std::move(args);
  n.outputs = {TensorMeta::contiguous(DType::Float32, {4, 8})};
  return n;
}

Graph add_graph() {
  Graph g;
  g.nodes.push_back(placeholder("x"));
  g.nodes.push_back(placeholder("y"));
  g.nodes.push_back(call("add", "aten.add.Tensor", {Arg::of(ValueRef{0}), Arg::of(ValueRef{1})}));
  g.nodes.back().kwargs.emplace_back("alpha", Arg::of(int64_t{2}));
  g.outputs = {ValueRef{2}};
  return g;
}

bool mentions(const std::vector<std::string>& problems, const std::string& a, const std::string& b) {
  return std::any_of(problems.begin(), problems.end(), [&](const std::string& p) {
    return p.find(a) != std::string::npos && p.find(b) != std::string::npos;
  });
}

TEST(Graph, LookupsAndKwargs) {
  Graph g = add_graph();
  EXPECT_EQ(g.find("add"), 2);
  EXPECT_EQ(g.find("nope"), -1);
  EXPECT_EQ(g.placeholders(), (std::vector<int>{0, 1}));
  ASSERT_NE(g.nodes[2].kwarg("alpha"), nullptr);
  EXPECT_EQ(g.nodes[2].kwarg("alpha")->integer(), Index(2));
  EXPECT_EQ(g.nodes[2].kwarg("beta"), nullptr);
  EXPECT_EQ(g.meta(ValueRef{2}).sizes[1], Index(8));
  EXPECT_EQ(arg_kind_name(g.nodes[2].args[0].kind()), "Tensor");
  EXPECT_EQ(arg_kind_name(Arg::of(std::vector<Index>{1, 2}).kind()), "SymInt[]");
}

TEST(Graph, SoundGraphVerifies) { EXPECT_TRUE(verify_graph(add_graph()).empty()); }

TEST(Graph, VerifierReportsDanglingReferences) {
  Graph g = add_graph();
  g.nodes[2].args[1] = Arg::of(ValueRef{7});
  g.nodes[2].kwargs[0].second = Arg::of(ValueRef{2});  // refers to itself
  g.nodes.push_back(call("cat", "aten.cat.default", {Arg{std::vector<std::optional<ValueRef>>{ValueRef{0, 3}}}}));
  g.outputs.push_back(ValueRef{9});
  auto problems = verify_graph(g);
  EXPECT_EQ(problems.size(), 4u);
  EXPECT_TRUE(mentions(problems, "node 'add': argument 1", "#7"));
  EXPECT_TRUE(mentions(problems, "node 'add': kwarg 'alpha'", "does not come earlier"));
  EXPECT_TRUE(mentions(problems, "node 'cat': argument 0 element 0", "output 3 of 'x'"));
  EXPECT_TRUE(mentions(problems, "graph output 1", "#9"));
}

TEST(Graph, VerifierReportsNamesAndPlaceholders) {
  Graph g = add_graph();
  g.nodes[1].name = "x";
  g.nodes[0].args.push_back(Arg::of(true));
  g.nodes.push_back(call("", "aten.relu.default", {Arg::of(ValueRef{2})}));
  Node two_outputs = placeholder("z");
  two_outputs.outputs.push_back(two_outputs.outputs.front());
  g.nodes.push_back(two_outputs);
  auto problems = verify_graph(g);
  EXPECT_EQ(problems.size(), 4u);
  EXPECT_TRUE(mentions(problems, "node 'x'", "already used by node #0"));
  EXPECT_TRUE(mentions(problems, "node 'x'", "placeholder with arguments"));
  EXPECT_TRUE(mentions(problems, "node #3", "empty name"));
  EXPECT_TRUE(mentions(problems, "node 'z'", "2 outputs, expected 1"));
}

}  // namespace
}  // namespace hi
