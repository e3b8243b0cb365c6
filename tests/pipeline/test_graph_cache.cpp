// Graph entries (pipeline/graph_cache.h): a warm start skips lowering and codegen, rebuilds exactly what
// GraphRunner needs, runs correctly, and falls back to a full compile when its entry or its code object is bad.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <fstream>
#include <iterator>

#include "frontend/graph_json.h"
#include "runtime/temp_directory.h"
#include "run_on_cpu.h"
#include "tests/common/graph_builder.h"
#include "pipeline/graph_cache.h"

namespace hi {
namespace {

class GraphCacheTest : public ::testing::Test {
 protected:
  TempDirectory scratch{"hi-graph-cache-test-"};
  CodeObjectCache cache{scratch.path() / "cache"};
  Graph graph = load_graph_file(HI_SOURCE_DIR "/examples/layernorm_gelu_residual.json");
  CompileOptions options() {
    CompileOptions o;
    o.target = parse_target("cpu");
    o.graph_name = "layernorm_gelu_residual";
    o.cache = &cache;
    return o;
  }
};

TEST_F(GraphCacheTest, WarmStartSkipsLoweringAndRunsCorrectly) {
  CompiledGraph cold = compile_graph(graph, options());
  EXPECT_FALSE(cold.graph_cache_hit);
  EXPECT_FALSE(cold.cache_hit);
  EXPECT_FALSE(cold.cache_key.empty());

  // Timing (printed, not asserted): the warm start through the graph entry, against codegen + a code-object hit.
  auto time_ms = [](const std::function<void()>& f) {
    constexpr int kRuns = 20;
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kRuns; ++i) f();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() / kRuns;
  };
  CompiledGraph warm = compile_graph(graph, options());
  double warm_ms = time_ms([&] { compile_graph(graph, options()); });
  double codegen_hit_ms = time_ms([&] {
    CompiledGraph g = generate(graph, options());
    std::unique_ptr<Compiler> compiler = compiler_for(options().target);
    compile_cached(*compiler, g.module.source, "g", options().target, {}, std::string(codegen_version()), &cache);
  });
  ASSERT_TRUE(warm.graph_cache_hit);
  EXPECT_TRUE(warm.cache_hit);
  EXPECT_EQ(warm.compile_ms, 0);
  EXPECT_TRUE(warm.program.computations.empty()) << "lowering was skipped";
  std::printf("[ info ] layernorm_gelu_residual, cpu: cold %.1f ms (lower+codegen %.1f, compile %.1f); warm start "
              "through the graph entry %.2f ms; lowering+codegen and a code-object hit %.2f ms\n",
              cold.lower_ms + cold.compile_ms, cold.lower_ms, cold.compile_ms, warm_ms, codegen_hit_ms);

  // What GraphRunner and the tools read is the same.
  EXPECT_EQ(warm.code.binary, cold.code.binary);
  EXPECT_EQ(warm.module.source, cold.module.source);
  EXPECT_EQ(warm.cache_key, cold.cache_key);
  EXPECT_EQ(warm.program.inputs, cold.program.inputs);
  EXPECT_EQ(warm.program.outputs, cold.program.outputs);
  EXPECT_EQ(warm.program.workspace_offsets, cold.program.workspace_offsets);
  EXPECT_EQ(warm.program.workspace_bytes, cold.program.workspace_bytes);
  ASSERT_EQ(warm.program.buffers.size(), cold.program.buffers.size());
  for (size_t b = 0; b < cold.program.buffers.size(); ++b) {
    const Buffer &w = warm.program.buffers[b], &c = cold.program.buffers[b];
    EXPECT_EQ(w.name, c.name);
    EXPECT_EQ(w.dtype, c.dtype);
    EXPECT_EQ(w.kind, c.kind);
    EXPECT_EQ(w.sizes, c.sizes);
    EXPECT_EQ(w.strides, c.strides);
    EXPECT_EQ(w.offset, c.offset);
    EXPECT_EQ(w.io_position, c.io_position);
  }
  ASSERT_EQ(warm.module.kernels.size(), cold.module.kernels.size());
  for (size_t k = 0; k < cold.module.kernels.size(); ++k) {
    const EmittedKernel &w = warm.module.kernels[k], &c = cold.module.kernels[k];
    EXPECT_EQ(w.name, c.name);
    EXPECT_EQ(w.kind, c.kind);
    EXPECT_EQ(w.grid, c.grid);
    EXPECT_EQ(w.block, c.block);
    EXPECT_EQ(w.needs_sync, c.needs_sync);
    EXPECT_EQ(w.whole_grid, c.whole_grid);
    ASSERT_EQ(w.params.size(), c.params.size());
    for (size_t p = 0; p < c.params.size(); ++p) {
      EXPECT_EQ(w.params[p].buffer, c.params[p].buffer);
      EXPECT_EQ(w.params[p].name, c.params[p].name);
      EXPECT_EQ(w.params[p].read_only, c.params[p].read_only);
    }
  }

  // And it runs: run_against_reference compiles through the same cache (a graph hit) and runs on the cpu device.
  NumericsCheck r = run_against_reference(graph, options());
  EXPECT_TRUE(r.compiled->graph_cache_hit);
  test::expect_matches(r, 1e-4, 1e-4);
}

TEST_F(GraphCacheTest, GraphsCompiledTogetherShareOneUnitAndStartWarmApart) {
  // A torch.compile graph's segments: one compiler call for all of them, each graph still its own entry.
  std::vector<Graph> graphs{graph, test::softmax_graph(16, 64), test::pointwise_chain_graph(8, 32)};
  std::vector<CompileOptions> opts(graphs.size(), options());
  for (size_t i = 0; i < graphs.size(); ++i) opts[i].graph_name = "segment" + std::to_string(i);
  std::vector<CompiledGraph> cold = compile_graphs(graphs, opts);
  ASSERT_EQ(cold.size(), graphs.size());
  for (size_t i = 0; i < cold.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_FALSE(cold[i].cache_hit);
    EXPECT_EQ(cold[i].cache_key, cold[0].cache_key) << "one code object";
    EXPECT_EQ(cold[i].module.source, cold[0].module.source);
    const std::string own = kernels_text(cold[i].module);
    for (size_t j = 0; j < cold.size(); ++j)
      for (const EmittedKernel& k : cold[j].module.kernels) {
        EXPECT_NE(cold[i].module.source.find(" " + k.name + "("), std::string::npos) << k.name;
        EXPECT_EQ(own.find(" " + k.name + "(") != std::string::npos, i == j) << k.name << " in\n" << own;
      }
  }
  // Each graph starts warm from its own entry, loads the shared unit and runs correctly.
  for (size_t i = 0; i < graphs.size(); ++i) {
    SCOPED_TRACE(i);
    NumericsCheck r = run_against_reference(graphs[i], opts[i]);
    EXPECT_TRUE(r.compiled->graph_cache_hit);
    EXPECT_EQ(r.compiled->cache_key, cold[0].cache_key);
    test::expect_matches(r, 1e-4, 1e-4);
  }
  std::vector<CompiledGraph> warm = compile_graphs(graphs, opts);
  for (const CompiledGraph& g : warm) EXPECT_TRUE(g.graph_cache_hit);
  // Two modules with a kernel of the same name cannot share a unit.
  std::vector<const EmittedModule*> twice{&cold[1].module, &cold[1].module};
  EXPECT_THROW(combine_modules(twice), std::invalid_argument);
}

TEST_F(GraphCacheTest, BadGraphEntryOrLostCodeObjectFallsBackToACompile) {
  CompiledGraph cold = compile_graph(graph, options());
  std::unique_ptr<Compiler> compiler = compiler_for(options().target);
  std::filesystem::path entry = cache.graph_entry_path(graph_entry_key(graph, options(), *compiler));
  ASSERT_TRUE(std::filesystem::exists(entry));

  std::filesystem::resize_file(entry, std::filesystem::file_size(entry) - 10);  // truncated
  testing::internal::CaptureStderr();
  CompiledGraph again = compile_graph(graph, options());
  std::string warning = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(again.graph_cache_hit);
  EXPECT_TRUE(again.cache_hit) << "the code object itself was fine";
  EXPECT_NE(warning.find(entry.string()), std::string::npos) << warning;
  EXPECT_TRUE(compile_graph(graph, options()).graph_cache_hit) << "rewritten";

  // The code-object entry it names is gone (evicted): lower and compile again, then the graph entry works again.
  std::filesystem::remove_all(cache.entry_path(cold.cache_key));
  CompiledGraph rebuilt = compile_graph(graph, options());
  EXPECT_FALSE(rebuilt.graph_cache_hit);
  EXPECT_FALSE(rebuilt.cache_hit);
  EXPECT_TRUE(compile_graph(graph, options()).graph_cache_hit);

  // Debug dumps need every stage: the graph entry is bypassed.
  CompileOptions dumping = options();
  dumping.debug_dir = (scratch.path() / "dump").string();
  EXPECT_FALSE(compile_graph(graph, dumping).graph_cache_hit);
}

class OtherVersion final : public Compiler {
 public:
  explicit OtherVersion(std::unique_ptr<Compiler> real) : real_(std::move(real)) {}
  std::string name() const override { return real_->name(); }
  std::string version() const override { return real_->version() + "+1"; }
  std::vector<std::string> base_options(const Target& t) const override { return real_->base_options(t); }
  CompiledCode compile(const std::string& s, const std::string& n, const Target& t,
                       const std::vector<std::string>& o) override {
    return real_->compile(s, n, t, o);
  }

 private:
  std::unique_ptr<Compiler> real_;
};

TEST_F(GraphCacheTest, KeyCoversTargetCompilerOptionsAndGraph) {
  CompileOptions o = options();
  std::unique_ptr<Compiler> compiler = compiler_for(o.target);
  std::string key = graph_entry_key(graph, o, *compiler);
  EXPECT_EQ(key, graph_entry_key(graph, o, *compiler));
  OtherVersion newer(compiler_for(o.target));
  EXPECT_NE(key, graph_entry_key(graph, o, newer));
  CompileOptions wide = o;
  wide.target = parse_target("cpu-w64");
  EXPECT_NE(key, graph_entry_key(graph, wide, *compiler));
  CompileOptions inline_less = o;
  inline_less.lowering.max_inline_ops = 3;
  EXPECT_NE(key, graph_entry_key(graph, inline_less, *compiler));
  Graph other = load_graph_file(HI_SOURCE_DIR "/examples/softmax.json");
  EXPECT_NE(key, graph_entry_key(other, o, *compiler));
  EXPECT_FALSE(pipeline_build_id().empty());
}

}  // namespace
}  // namespace hi
