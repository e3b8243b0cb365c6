// Golden HIP source for representative kernels, and a compile-only check of every one of them with HIPRTC for
// gfx90a and gfx942 (0 spills, 0 scratch, VGPRs read from the code object) and with NVRTC for sm_90.
// `make golden` (HIPINDUCTOR_UPDATE_GOLDEN=1) rewrites the files after an intended codegen change.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "frontend/graph_json.h"
#include "runtime/amd_code_object.h"
#include "runtime/compiler.h"
#include "tests/common/graph_builder.h"
#include "pipeline/compile_graph.h"

namespace hi {
namespace {

using test::A;
using test::B;
using test::I;
using test::L;
using test::S;

struct GoldenCase {
  std::string name;
  Graph graph;
};

Graph bf16_gelu_graph() {
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::BFloat16, {2048, 1024});
  ValueRef y = g.call("aten.gelu.default", {A(x)}, DType::BFloat16, {2048, 1024}, {{"approximate", S("tanh")}});
  g.output(y);
  return g.graph();
}

Graph column_sum_graph() {
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {1024, 512});
  ValueRef s = g.call("aten.sum.dim_IntList", {A(x), L({0})}, DType::Float32, {512});
  g.output(s);
  return g.graph();
}

/// torch.softmax over bf16 rows too long for registers (the vocabulary of a language model).
Graph long_softmax_bf16_graph() {
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::BFloat16, {512, 65536});
  g.output(g.call("aten._softmax.default", {A(x), I(-1), B(false)}, DType::BFloat16, {512, 65536}));
  return g.graph();
}

/// log_softmax over GPT-2's 50257-entry vocabulary: rows no vector width divides, peeled to aligned vector groups.
Graph log_softmax_odd_rows_bf16_graph() {
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::BFloat16, {512, 50257});
  g.output(g.call("aten._log_softmax.default", {A(x), I(-1), B(false)}, DType::BFloat16, {512, 50257}));
  return g.graph();
}

std::vector<GoldenCase> golden_cases() {
  std::string ex = std::string(HI_SOURCE_DIR) + "/examples/";
  return {
      {"softmax", load_graph_file(ex + "softmax.json")},
      {"layernorm_gelu_residual", load_graph_file(ex + "layernorm_gelu_residual.json")},
      {"layernorm_decomposed", load_graph_file(ex + "layernorm_decomposed.json")},
      {"pointwise_chain", load_graph_file(ex + "pointwise_chain.json")},
      {"layer_norm_stats", test::layer_norm_graph(64, 256, true)},
      {"gelu_bf16", bf16_gelu_graph()},
      {"column_sum", column_sum_graph()},
      {"rope_cat_bf16", test::rope_graph(64, 128, 64, DType::BFloat16)},
      {"softmax_long_rows_bf16", long_softmax_bf16_graph()},
      {"layer_norm_long_rows", test::layer_norm_graph(512, 65536, true)},
      {"log_softmax_odd_rows_bf16", log_softmax_odd_rows_bf16_graph()},
  };
}

std::string golden_path(const std::string& name) { return std::string(HI_SOURCE_DIR) + "/tests/golden/" + name + ".hip"; }

CompileOptions options_for(const std::string& target, const std::string& name) {
  CompileOptions o;
  o.target = parse_target(target);
  o.graph_name = name;
  return o;
}

class Golden : public ::testing::TestWithParam<size_t> {
 protected:
  GoldenCase c = golden_cases().at(GetParam());
};

TEST_P(Golden, SourceMatchesGoldenFile) {
  std::string text = kernels_text(generate(c.graph, options_for("gfx942", c.name)).module);
  std::string path = golden_path(c.name);
  if (std::getenv("HIPINDUCTOR_UPDATE_GOLDEN")) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path) << text;
    GTEST_SKIP() << "rewrote " << path;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in) << "missing " << path << " (run `make golden`)";
  std::stringstream want;
  want << in.rdbuf();
  EXPECT_EQ(text, want.str()) << "emitted source changed; if intended, run `make golden` and review the diff";
}

TEST_P(Golden, CompilesForAmdWithoutSpills) {
  for (const char* arch : {"gfx90a", "gfx942:sramecc+:xnack-"}) {
    CompileOptions o = options_for(arch, c.name);
    CodeObjectCache cache;
    o.cache = &cache;
    CompiledGraph g = compile_graph(c.graph, o);
    std::vector<AmdKernelFacts> facts = read_amd_kernel_facts(g.code.binary, o.target);
    ASSERT_EQ(facts.size(), g.module.kernels.size()) << arch;
    for (const AmdKernelFacts& f : facts) {
      SCOPED_TRACE(std::string(arch) + " " + f.name);
      EXPECT_EQ(f.vgpr_spill_count, 0);
      EXPECT_EQ(f.sgpr_spill_count, 0);
      EXPECT_EQ(f.scratch_bytes, 0);
      EXPECT_GT(f.vgpr_count, 0);
      EXPECT_EQ(f.wavefront_size, 64);
      RecordProperty(std::string(arch) + ":" + f.name + ":vgprs", f.vgpr_count);
      std::cout << "[ facts    ] " << arch << " " << f.name << ": " << f.vgpr_count << " VGPRs, " << f.sgpr_count
                << " SGPRs, " << f.lds_bytes << " B LDS, " << f.waves_per_simd << " waves/SIMD\n";
    }
  }
}

TEST_P(Golden, CompilesForNvidiaSm90) {
  CompileOptions o = options_for("sm_90", c.name);
  CodeObjectCache cache;
  o.cache = &cache;
  CompiledGraph g = compile_graph(c.graph, o);
  ASSERT_GE(g.code.binary.size(), 4u);
  EXPECT_EQ(std::string(g.code.binary.data() + 1, 3), "ELF");
}

INSTANTIATE_TEST_SUITE_P(Kernels, Golden, ::testing::Range<size_t>(0, golden_cases().size()),
                         [](const auto& info) { return golden_cases().at(info.param).name; });

TEST(Examples, BundledGraphsFuseAsExpected) {
  std::string ex = std::string(HI_SOURCE_DIR) + "/examples/";
  auto kernels = [&](const char* file) {
    return generate(load_graph_file(ex + file), options_for("gfx942", file)).program.kernels.size();
  };
  EXPECT_EQ(kernels("softmax.json"), 1u);
  EXPECT_EQ(kernels("layernorm_decomposed.json"), 1u);
  EXPECT_EQ(kernels("layernorm_gelu_residual.json"), 1u);
  EXPECT_EQ(kernels("pointwise_chain.json"), 1u);
}

}  // namespace
}  // namespace hi
