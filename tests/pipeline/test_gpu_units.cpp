// GPU modules compiled as several units (CompileOptions::max_gpu_unit_kernel_bytes): NVRTC and HIPRTC compile
// without a GPU, so the units, the container they are kept in, its AMD facts and its cache entries are checked on any
// host. Running a split module on a GPU: tests/python/test_backend.py
// (test_module_compiled_as_several_units_runs_on_the_gpu, GPU machine only).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>

#include "nlohmann/json.hpp"
#include "pipeline/compile_graph.h"
#include "runtime/amd_code_object.h"
#include "runtime/cache_stats.h"
#include "runtime/code_object_units.h"
#include "runtime/cpu_device.h"
#include "runtime/sha256.h"
#include "runtime/temp_directory.h"
#include "testing/check_numerics.h"
#include "tests/common/graph_builder.h"
#include "tests/pipeline/run_on_cpu.h"

namespace hi {
namespace {

using test::A;
using test::B;
using test::I;

Graph softmax_chain(int n) {
  test::GraphBuilder g;
  std::vector<Index> s{4, 32};
  ValueRef v = g.input("x", DType::Float32, s);
  for (int i = 0; i < n; ++i) v = g.call("aten._softmax.default", {A(v), I(-1), B(false)}, DType::Float32, s);
  g.output(v);
  return g.graph();
}

bool starts_with(const std::vector<char>& b, const std::string& magic) {
  return b.size() >= magic.size() && std::string(b.data(), magic.size()) == magic;
}

/// Per target: a module past the bound is compiled as one unit per kernel group, kept as a container whose parts are
/// the target's own code objects and hold every kernel exactly once; below the bound, the one plain code object.
TEST(GpuUnits, ModulesPastTheBoundCompileIntoUnitsHoldingEveryKernelOnce) {
  const Graph g = softmax_chain(24);
  for (const char* name : {"sm_90", "gfx90a"}) {
    SCOPED_TRACE(name);
    CompileOptions o;
    o.target = parse_target(name);
    o.graph_name = "units";
    o.max_gpu_unit_kernel_bytes = size_t{1} << 40;  // a bound no module reaches
    CompiledGraph whole = compile_graph(g, o);
    ASSERT_GT(whole.module.kernels.size(), 1u);
    EXPECT_FALSE(is_code_object_units(whole.code.binary));
    EXPECT_TRUE(starts_with(whole.code.binary, "\x7f" "ELF") || starts_with(whole.code.binary, "__CLANG_OFFLOAD"));

    o.max_gpu_unit_kernel_bytes = 1;  // a unit per kernel
    CompiledGraph split = compile_graph(g, o);
    EXPECT_EQ(split.module.source, whole.module.source);
    ASSERT_TRUE(is_code_object_units(split.code.binary));
    std::vector<CodeObjectUnit> parts = unpack_code_object_units(split.code.binary);
    ASSERT_EQ(parts.size(), split.module.kernels.size());
    std::multiset<std::string> in_parts;
    for (const CodeObjectUnit& p : parts) {
      EXPECT_FALSE(is_code_object_units(p.binary));
      EXPECT_TRUE(starts_with(p.binary, "\x7f" "ELF") || starts_with(p.binary, "__CLANG_OFFLOAD"));
      in_parts.insert(p.kernels.begin(), p.kernels.end());
    }
    std::multiset<std::string> kernels;
    for (const EmittedKernel& k : split.module.kernels) kernels.insert(k.name);
    EXPECT_EQ(in_parts, kernels);

    if (o.target.kind == TargetKind::Amd) {
      // The code objects' own metadata agrees: every kernel once, read through the container, with the facts a
      // whole compile reports for it.
      std::map<std::string, AmdKernelFacts> plain;
      for (const AmdKernelFacts& f : read_amd_kernel_facts(whole.code.binary, o.target)) plain[f.name] = f;
      std::multiset<std::string> in_metadata;
      for (const AmdKernelFacts& f : read_amd_kernel_facts(split.code.binary, o.target)) {
        in_metadata.insert(f.name);
        ASSERT_TRUE(plain.count(f.name)) << f.name;
        EXPECT_EQ(f.vgpr_spill_count, plain[f.name].vgpr_spill_count) << f.name;
        EXPECT_EQ(f.lds_bytes, plain[f.name].lds_bytes) << f.name;
      }
      EXPECT_EQ(in_metadata, kernels);
      std::string isa = disassemble_amd_code_object(split.code.binary, o.target);
      EXPECT_NE(isa.find("; code object unit 1 of " + std::to_string(parts.size())), std::string::npos);
    }
  }
}

/// Each unit is a cache entry of its own: a graph sharing kernels with one compiled before finds their units, and the
/// graph's own entry holds the container, which verify accepts and reports when it is damaged.
TEST(GpuUnits, UnitsAreCacheEntriesOfTheirOwnAndVerifyChecksTheContainer) {
  TempDirectory scratch{"hi-gpu-units-test-"};
  CodeObjectCache cache{scratch.path() / "cache"};
  CompileOptions o;
  o.target = parse_target("sm_90");
  o.cache = &cache;
  o.max_gpu_unit_kernel_bytes = 1;
  CompiledGraph first = compile_graph(softmax_chain(24), o);
  const size_t units = first.module.kernels.size();
  CacheCounters after_first = read_cache_stats(cache.directory())["sm_90"];
  EXPECT_EQ(after_first.misses, units + 1);  // each unit, then the graph's container
  EXPECT_EQ(after_first.hits, 0u);

  // A longer chain starts with the same kernels: their units are hits.
  CompiledGraph second = compile_graph(softmax_chain(36), o);
  ASSERT_GT(second.module.kernels.size(), units);
  CacheCounters after_second = read_cache_stats(cache.directory())["sm_90"];
  EXPECT_GE(after_second.hits, 1u);
  EXPECT_EQ(after_second.hits + after_second.misses - after_first.misses, second.module.kernels.size() + 1);

  const std::filesystem::path entry = cache.entry_path(first.cache_key);
  std::vector<char> stored;
  ASSERT_EQ(check_code_object_entry(entry, &stored).state, EntryState::Valid);
  EXPECT_EQ(stored, first.code.binary);
  // A container cut short whose checksums were rewritten to match (what no damage to the file alone can do): still
  // corrupt, since no loader could take it apart.
  std::vector<char> cut(stored.begin(), stored.end() - 1);
  std::ifstream meta_in(entry / "meta.json");
  nlohmann::json meta = nlohmann::json::parse(meta_in);
  meta_in.close();
  const std::string binary_name = meta["binary"];
  std::ofstream(entry / binary_name, std::ios::binary | std::ios::trunc).write(cut.data(), long(cut.size()));
  meta["binary_size"] = cut.size();
  meta["sha256"] = sha256_hex(std::string_view(cut.data(), cut.size()));
  std::ofstream(entry / "meta.json", std::ios::trunc) << meta.dump();
  EntryCheck check = check_code_object_entry(entry);
  EXPECT_EQ(check.state, EntryState::Corrupt);
  EXPECT_NE(check.problem.find("truncated"), std::string::npos) << check.problem;
}

/// Device::load_for_target takes a container apart, loads each part with its own kernels and launches every kernel
/// from the part that holds it. The cpu device loads shared objects, so a container of them (each unit compiled as a
/// complete shared object) runs that path without a GPU, against the reference interpreter.
TEST(GpuUnits, AContainerLoadsPartByPartAndLaunchesEachKernelFromItsPart) {
  const Graph g = softmax_chain(24);
  CompileOptions o;
  o.target = parse_target("cpu");
  o.graph_name = "parts";
  auto compiled = std::make_shared<CompiledGraph>(compile_graph(g, o));
  std::vector<EmittedModule> units = split_module(compiled->module, 1);
  ASSERT_GT(units.size(), 1u);
  std::unique_ptr<Compiler> host = compiler_for(o.target);
  std::vector<CodeObjectUnit> parts;
  for (const EmittedModule& u : units) {
    std::string source = u.source;
    const std::string later = "#define HI_CPU_LATER_UNIT 1\n";  // each part stands alone: prelude symbols included
    if (size_t at = source.find(later); at != std::string::npos) source.erase(at, later.size());
    CodeObjectUnit part;
    for (const EmittedKernel& k : u.kernels) part.kernels.push_back(k.name);
    part.binary = host->compile(source, "part", o.target, {}).binary;
    parts.push_back(std::move(part));
  }
  compiled->code.binary = pack_code_object_units(parts);
  CpuDevice device(o.target);
  GraphRunner runner(compiled, device);
  test::expect_matches(run_bound_against_reference(g, runner, {}), 1e-4, 1e-6);

  // A container missing one of the graph's kernels is refused at load, naming it.
  parts.pop_back();
  compiled->code.binary = pack_code_object_units(parts);
  try {
    GraphRunner missing(compiled, device);
    ADD_FAILURE() << "a container without " << units.back().kernels.back().name << " loaded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(units.back().kernels.back().name), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace hi
