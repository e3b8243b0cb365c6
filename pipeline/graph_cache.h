// graph_cache: graph-level entries of the on-disk cache, so that a warm start of a graph skips lowering, fusion,
// memory planning and codegen as well as the compile (docs/cache.md, "Graph entries").
//
// Key: SHA-256 over the serialized input graph (write_graph_json: nodes, metas, outputs; no graph name), the target
// id, codegen_version(), the compiler's name and version, the LoweringOptions fields, and pipeline_build_id() — the
// build of the compiler itself, because a graph entry stores the *result* of lowering and codegen: any rebuilt
// compiler must not reuse results of an older one (code-object entries, keyed by their source, stay shared).
// Value: the code-object entry's key plus what GraphRunner and the tools read of a CompiledGraph: every buffer's
// name, dtype, kind, io position, layout and workspace offset, the graph's inputs/outputs, the workspace size, and
// per kernel its name, kind, parameters, grid, block, needs_sync and whole_grid. The HIP source and code object come
// from the code-object entry. A CompiledGraph rebuilt from an entry has no computations or loop-IR kernels
// (program.computations and program.kernels are empty), so its loop IR dump shows only buffers.
//
// A graph with size symbols is keyed by its symbolic form (the JSON holds {"sym": ...} sizes), so one entry serves
// every binding of its symbols, also in a new process; the entry keeps sizes, grids and workspace offsets as
// expressions and the symbols' ranges.
#pragma once

#include <optional>
#include <string>

#include "pipeline/compile_graph.h"

namespace hi {

/// The build of the code containing this function: its ELF build id (NT_GNU_BUILD_ID) in hex, else
/// "<path>:<size>:<mtime>" of the binary or shared object holding it. Computed once per process.
const std::string& pipeline_build_id();

/// The graph entry's key for compiling `graph` with `options` by `compiler` (see the file comment).
std::string graph_entry_key(const Graph& graph, const CompileOptions& options, const Compiler& compiler);

/// The CompiledGraph stored under `key` for `target`, with its code object and source read (and checked) from the
/// code-object entry; cache_hit and graph_cache_hit set, compile_ms 0. nullopt when the entry is missing, corrupt
/// (reported once), for another target, or its code-object entry is gone or invalid. Counts a graph hit or miss in
/// the cache's stats.
std::optional<CompiledGraph> load_graph_entry(CodeObjectCache& cache, const std::string& key, const Target& target);

/// Stores `graph` (compiled through `cache`: graph.cache_key names its code-object entry) under `key`. Returns false
/// without writing for graphs without a code-object entry. I/O errors are reported once
/// on stderr, never thrown (the graph is compiled already).
bool store_graph_entry(CodeObjectCache& cache, const std::string& key, const CompiledGraph& graph);

/// After a GPU loaded `graph`'s code object: records the loader's per-kernel facts (module.kernel_facts()) into the
/// code-object entry's meta.json, once (CodeObjectCache::record_loader_facts). No-op for graphs not from a cache and
/// for devices without facts (the cpu device).
void record_loader_facts(const CompiledGraph& graph, const Module& module);

}  // namespace hi
