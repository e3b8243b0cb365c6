#include "pipeline/graph_cache.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "frontend/graph_json.h"
#include "pipeline/compiled_graph_json.h"
#include "runtime/cache_stats.h"
#include "runtime/sha256.h"

namespace hi {
namespace {

using nlohmann::json;

// Bumped when the payload below changes meaning.
// 2: sizes, strides, offsets, grids and workspace offsets may be symbolic ({"sym": TEXT}); the size symbols' ranges
// and quotients (LoopProgram::quotients); size parameters.
constexpr const char* kGraphEntryFormat = "hipinductor-graph-entry-v2";

void add_field(Sha256& hash, std::string_view name, std::string_view value) {
  hash.update(std::string(name) + ":" + std::to_string(value.size()) + ":").update(value).update("\n");
}

struct BuildIdSearch {
  uintptr_t base;
  std::string hex;
};

// dl_iterate_phdr callback: the NT_GNU_BUILD_ID note of the object loaded at `base`.
int find_build_id(struct dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<BuildIdSearch*>(data);
  if (info->dlpi_addr != search->base) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    if (segment.p_type != PT_NOTE) continue;
    const char* cursor = reinterpret_cast<const char*>(info->dlpi_addr + segment.p_vaddr);
    const char* end = cursor + segment.p_memsz;
    while (cursor + sizeof(ElfW(Nhdr)) <= end) {
      const auto* note = reinterpret_cast<const ElfW(Nhdr)*>(cursor);
      const char* name = cursor + sizeof(ElfW(Nhdr));
      const char* desc = name + ((note->n_namesz + 3) & ~3u);
      if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
        static const char* kHex = "0123456789abcdef";
        for (size_t b = 0; b < note->n_descsz; ++b) {
          auto byte = static_cast<unsigned char>(desc[b]);
          search->hex += kHex[byte >> 4];
          search->hex += kHex[byte & 15];
        }
        return 1;
      }
      cursor = desc + ((note->n_descsz + 3) & ~3u);
    }
  }
  return 1;
}

// The graph entry: its format, target, code-object key and build, then the graph (compiled_graph_json.h).
json graph_payload(const CompiledGraph& g) {
  json payload = compiled_graph_to_json(g);
  payload["format"] = kGraphEntryFormat;
  payload["target"] = g.module.target.id();
  payload["code_key"] = g.cache_key;
  payload["codegen"] = std::string(codegen_version());
  payload["build_id"] = pipeline_build_id();
  return payload;
}

}  // namespace

const std::string& pipeline_build_id() {
  static const std::string id = [] {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&pipeline_build_id), &info) == 0 || !info.dli_fname)
      return std::string("unknown-build");
    BuildIdSearch search{reinterpret_cast<uintptr_t>(info.dli_fbase), {}};
    // The main program reports dlpi_addr 0 (non-PIE) or its load base (PIE); dli_fbase is the load address.
    dl_iterate_phdr(find_build_id, &search);
    if (!search.hex.empty()) return search.hex;
    struct stat file {};
    if (stat(info.dli_fname, &file) != 0) return std::string(info.dli_fname);
    return std::string(info.dli_fname) + ":" + std::to_string(file.st_size) + ":" +
           std::to_string(file.st_mtim.tv_sec) + "." + std::to_string(file.st_mtim.tv_nsec);
  }();
  return id;
}

std::string graph_entry_key(const Graph& graph, const CompileOptions& options, const Compiler& compiler) {
  Sha256 hash;
  add_field(hash, "format", kGraphEntryFormat);
  add_field(hash, "build", pipeline_build_id());
  add_field(hash, "codegen", codegen_version());
  add_field(hash, "target", options.target.id());
  add_field(hash, "compiler", compiler.name());
  add_field(hash, "compiler_version", compiler.version());
  // Every LoweringOptions field (a new field must be added here).
  add_field(hash, "max_inline_ops", std::to_string(options.lowering.max_inline_ops));
  add_field(hash, "max_body_ops", std::to_string(options.lowering.max_body_ops));
  // And every SplitOptions field.
  const SplitOptions& split = options.split;
  for (int64_t v : {int64_t{split.enabled}, split.min_reduce_numel, split.column_target_outputs,
                    split.min_column_chunk, split.row_target_rows, split.min_row_chunk, split.min_splits,
                    split.shared_rows_min_rows, split.max_splits, split.max_row_aligned_splits})
    add_field(hash, "split", std::to_string(v));
  add_field(hash, "graph", write_graph_json(graph));
  return hash.hex_digest();
}

std::optional<CompiledGraph> load_graph_entry(CodeObjectCache& cache, const std::string& key, const Target& target) {
  auto miss = [&]() -> std::optional<CompiledGraph> {
    record_cache_lookup(cache.directory(), target.id(), CacheLookup::GraphMiss);
    return std::nullopt;
  };
  std::optional<std::string> payload = cache.get_graph_entry(key);
  if (!payload) return miss();
  CompiledGraph g;
  std::string code_key;
  try {
    json j = json::parse(*payload);
    if (j.at("format") != kGraphEntryFormat || j.at("target") != target.id()) return miss();
    code_key = j.at("code_key").get<std::string>();
    g = compiled_graph_from_json(j, target);
  } catch (const std::exception& e) {
    // The checksum held, so the writer produced it: a format this build does not read. Rebuilt by the next store.
    warn_once(cache.graph_entry_path(key).string(),
              "graph cache entry " + cache.graph_entry_path(key).string() + " is unreadable (" + e.what() +
                  "); it will be rebuilt");
    return miss();
  }
  if (!CodeObjectCache::is_key(code_key)) return miss();
  std::optional<std::vector<char>> binary = cache.get(code_key, /*count=*/true, &g.module.source);
  if (!binary) return miss();
  g.code = CompiledCode{std::move(*binary), {}, 0.0};
  g.cache_hit = true;
  g.graph_cache_hit = true;
  g.cache_key = code_key;
  g.cache_dir = cache.directory();
  record_cache_lookups(cache.directory(), target.id(), {CacheLookup::GraphHit, CacheLookup::CodeHit});
  return g;
}

bool store_graph_entry(CodeObjectCache& cache, const std::string& key, const CompiledGraph& graph) {
  if (graph.cache_key.empty()) return false;
  json payload;
  try {
    payload = graph_payload(graph);
  } catch (const std::invalid_argument&) {
    return false;
  }
  try {
    cache.put_graph_entry(key, payload.dump(1) + "\n");
    return true;
  } catch (const std::exception& e) {
    warn_once("unwritable:" + cache.directory().string(), std::string(e.what()) + "; graph entry not cached");
    return false;
  }
}

void record_loader_facts(const CompiledGraph& graph, const Module& module) {
  if (graph.cache_key.empty() || graph.cache_dir.empty() || graph.module.target.kind == TargetKind::Cpu) return;
  std::vector<GpuKernelFacts> facts;
  try {
    facts = module.kernel_facts();
  } catch (const std::exception&) {
    return;
  }
  CodeObjectCache cache(graph.cache_dir);
  cache.record_loader_facts(graph.cache_key, facts);
}

}  // namespace hi
