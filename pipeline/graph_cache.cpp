#include "pipeline/graph_cache.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "frontend/graph_json.h"
#include "frontend/index_text.h"
#include "runtime/cache_stats.h"
#include "runtime/sha256.h"

namespace hi {
namespace {

using nlohmann::json;

// Bumped when the payload below changes meaning. 2: sizes, strides, offsets, grids and workspace offsets may be
// symbolic ({"sym": TEXT}); the size symbols' ranges and quotients (LoopProgram::quotients); size parameters.
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

// An index as the payload holds it: an integer, or {"sym": TEXT} (frontend/index_text.h) when it names symbols.
json index_json(const Index& i) {
  if (std::optional<int64_t> value = i.as_const()) return *value;
  return json{{"sym", format_index_text(i)}};
}

Index parse_index_json(const json& j) {
  if (j.is_object()) return parse_index_text(j.at("sym").get<std::string>());
  return Index(j.get<int64_t>());
}

BufferKind parse_buffer_kind(const std::string& name) {
  for (BufferKind k : {BufferKind::Input, BufferKind::Output, BufferKind::Intermediate})
    if (buffer_kind_name(k) == name) return k;
  throw std::invalid_argument("unknown buffer kind '" + name + "'");
}

KernelKind parse_kernel_kind(const std::string& name) {
  for (KernelKind k : {KernelKind::Pointwise, KernelKind::RowReduction, KernelKind::ColumnReduction})
    if (kernel_kind_name(k) == name) return k;
  throw std::invalid_argument("unknown kernel kind '" + name + "'");
}

std::vector<Index> indices(const json& values) {
  std::vector<Index> out;
  for (const json& v : values) out.push_back(parse_index_json(v));
  return out;
}

// The payload.
json graph_payload(const CompiledGraph& g) {
  const LoopProgram& p = g.program;
  json buffers = json::array();
  for (size_t b = 0; b < p.buffers.size(); ++b) {
    const Buffer& buffer = p.buffers[b];
    json sizes = json::array(), strides = json::array();
    for (const Index& s : buffer.sizes) sizes.push_back(index_json(s));
    for (const Index& s : buffer.strides) strides.push_back(index_json(s));
    buffers.push_back({{"name", buffer.name},
                       {"dtype", std::string(dtype_name(buffer.dtype))},
                       {"kind", std::string(buffer_kind_name(buffer.kind))},
                       {"sizes", sizes},
                       {"strides", strides},
                       {"offset", index_json(buffer.offset)},
                       {"io_position", buffer.io_position},
                       {"workspace_offset", p.in_workspace(static_cast<int>(b)) ? index_json(p.workspace_offsets[b])
                                                                               : json(-1)}});
  }
  json symbols = json::object(), quotients = json::object();
  for (const auto& [name, range] : p.size_ranges)
    symbols[name] = {range.lo ? json(*range.lo) : json(nullptr), range.hi ? json(*range.hi) : json(nullptr)};
  for (const auto& [name, q] : p.quotients) quotients[name] = {q.of, q.divisor};
  json kernels = json::array();
  for (const EmittedKernel& k : g.module.kernels) {
    json params = json::array();
    for (const KernelParam& param : k.params) {
      if (param.kind == KernelParam::Kind::Size) {
        params.push_back({{"symbol", param.symbol}, {"name", param.name}});
        continue;
      }
      params.push_back({{"buffer", param.buffer}, {"name", param.name}, {"read_only", param.read_only}});
    }
    kernels.push_back({{"name", k.name},
                       {"kind", std::string(kernel_kind_name(k.kind))},
                       {"grid", index_json(k.grid)},
                       {"block", k.block},
                       {"needs_sync", k.needs_sync},
                       {"whole_grid", k.whole_grid},
                       {"params", params}});
  }
  return {{"format", kGraphEntryFormat},
          {"target", g.module.target.id()},
          {"code_key", g.cache_key},
          {"codegen", std::string(codegen_version())},
          {"build_id", pipeline_build_id()},
          {"buffers", buffers},
          {"inputs", p.inputs},
          {"outputs", p.outputs},
          {"workspace_bytes", index_json(p.workspace_bytes)},
          {"symbols", symbols},
          {"quotients", quotients},
          {"align", p.align},
          {"kernels", kernels}};
}

// Rebuilds the runnable part of a CompiledGraph; throws (json or std::invalid_argument) on malformed payloads.
CompiledGraph compiled_graph_from(const json& j, const Target& target) {
  CompiledGraph g;
  LoopProgram& p = g.program;
  for (const json& jb : j.at("buffers")) {
    Buffer b;
    b.name = jb.at("name").get<std::string>();
    std::optional<DType> dtype = parse_dtype(jb.at("dtype").get<std::string>());
    if (!dtype) throw std::invalid_argument("unknown dtype of buffer " + b.name);
    b.dtype = *dtype;
    b.kind = parse_buffer_kind(jb.at("kind").get<std::string>());
    b.sizes = indices(jb.at("sizes"));
    b.strides = indices(jb.at("strides"));
    b.offset = parse_index_json(jb.at("offset"));
    b.io_position = jb.at("io_position").get<int>();
    p.buffers.push_back(std::move(b));
    const json& offset = jb.at("workspace_offset");
    const bool none = offset.is_number() && offset.get<int64_t>() < 0;
    p.workspace_offsets.push_back(none ? Index() : parse_index_json(offset));
  }
  for (const auto& [name, range] : j.at("symbols").items()) {
    Range r;
    if (!range.at(0).is_null()) r.lo = range.at(0).get<int64_t>();
    if (!range.at(1).is_null()) r.hi = range.at(1).get<int64_t>();
    p.size_ranges[name] = r;
  }
  for (const auto& [name, q] : j.at("quotients").items()) {
    if (!p.size_ranges.count(name)) throw std::invalid_argument("quotient " + name + " is not a size symbol");
    p.quotients[name] = {q.at(0).get<std::string>(), q.at(1).get<int64_t>()};
    if (p.quotients[name].divisor < 1) throw std::invalid_argument("quotient " + name + " has a bad divisor");
  }
  auto buffer_ids = [&](const json& ids) {
    std::vector<int> out = ids.get<std::vector<int>>();
    for (int id : out)
      if (id < 0 || static_cast<size_t>(id) >= p.buffers.size()) throw std::invalid_argument("bad buffer id");
    return out;
  };
  p.inputs = buffer_ids(j.at("inputs"));
  p.outputs = buffer_ids(j.at("outputs"));
  p.workspace_bytes = parse_index_json(j.at("workspace_bytes"));
  p.align = j.value("align", int64_t{0});

  g.module.target = target;
  for (const json& jk : j.at("kernels")) {
    EmittedKernel k;
    k.name = jk.at("name").get<std::string>();
    k.kind = parse_kernel_kind(jk.at("kind").get<std::string>());
    k.grid = parse_index_json(jk.at("grid"));
    k.block = jk.at("block").get<int>();
    k.needs_sync = jk.at("needs_sync").get<bool>();
    k.whole_grid = jk.at("whole_grid").get<bool>();
    for (const json& jp : jk.at("params")) {
      KernelParam param;
      if (jp.contains("symbol")) {
        param.kind = KernelParam::Kind::Size;
        param.symbol = jp.at("symbol").get<std::string>();
        if (!p.size_ranges.count(param.symbol))
          throw std::invalid_argument("kernel " + k.name + " takes an unknown size symbol " + param.symbol);
        param.name = jp.at("name").get<std::string>();
        k.params.push_back(std::move(param));
        continue;
      }
      param.kind = KernelParam::Kind::Buffer;
      param.buffer = jp.at("buffer").get<int>();
      if (param.buffer < 0 || static_cast<size_t>(param.buffer) >= p.buffers.size())
        throw std::invalid_argument("bad buffer id in kernel " + k.name);
      param.name = jp.at("name").get<std::string>();
      param.read_only = jp.at("read_only").get<bool>();
      k.params.push_back(std::move(param));
    }
    g.module.kernels.push_back(std::move(k));
  }
  return g;
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
  // And every SplitOptions field.
  const SplitOptions& split = options.split;
  for (int64_t v : {int64_t{split.enabled}, split.min_reduce_numel, split.column_target_outputs,
                    split.min_column_chunk, split.row_target_rows, split.min_row_chunk, split.min_splits,
                    split.max_splits})
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
    g = compiled_graph_from(j, target);
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
