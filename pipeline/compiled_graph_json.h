// compiled_graph_json: the runnable part of a CompiledGraph as JSON, and back: what graph entries of the cache
// (graph_cache.h) and ahead-of-time packages (package.h) store next to the code object, so that a later process runs
// the graph without lowering, generating or compiling it.
//
// Written: every buffer (name, dtype, kind, sizes, strides, offset, io position, workspace offset), the graph's input
// and output buffers, the workspace size, the alignment promise, and per kernel its name, kind, grid, block,
// needs_sync, whole_grid and parameters (buffer, name, read-only). Not written: the loop IR's computations and
// kernels, the HIP source and the code object (the caller stores those). Sizes, strides, offsets, grids and the
// workspace may be expressions over size symbols ({"sym": TEXT}); the symbols' ranges and quotients are written too.
#pragma once

#include <nlohmann/json.hpp>

#include "pipeline/compile_graph.h"

namespace hi {

/// The fields above of `graph`.
nlohmann::json compiled_graph_to_json(const CompiledGraph& graph);

/// A CompiledGraph for `target` rebuilt from compiled_graph_to_json's output: program (buffers, inputs, outputs,
/// workspace plan, align) and module.kernels; no source, no code, no computations. Throws nlohmann::json::exception
/// or std::invalid_argument (naming the field) for malformed input.
CompiledGraph compiled_graph_from_json(const nlohmann::json& j, const Target& target);

}  // namespace hi
