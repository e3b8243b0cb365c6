// compile_graph: the whole pipeline for one graph, readable in one place:
//   verify -> lower_graph -> fuse_kernels -> plan_memory -> emit_hip -> compile (through the code-object cache)
// each step optionally dumped to HIPINDUCTOR_DEBUG_DIR (or CompileOptions::debug_dir). GraphRunner then executes the
// result on a Device: inputs and outputs are caller-owned device pointers, intermediates live in one workspace.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "codegen/emit_hip.h"
#include "codegen/target.h"
#include "ir/graph.h"
#include "ir/loop.h"
#include "lowering/lower_graph.h"
#include "runtime/code_object_cache.h"
#include "runtime/compiler.h"
#include "runtime/device.h"

namespace hi {

struct CompileOptions {
  Target target;
  std::string graph_name = "graph";
  /// Where to dump every stage; empty: $HIPINDUCTOR_DEBUG_DIR if set, else no dumps.
  std::string debug_dir;
  /// Null: no caching. compile_graph does not own it.
  CodeObjectCache* cache = nullptr;
  LoweringOptions lowering;
};

struct CompiledGraph {
  LoopProgram program;  ///< lowered, fused, memory-planned
  EmittedModule module;
  CompiledCode code;
  bool cache_hit = false;
  double lower_ms = 0;    ///< lowering, fusion, planning and codegen
  double compile_ms = 0;  ///< the compiler call (0 on a cache hit)
};

/// Lowers, fuses, plans and emits `graph` for `target` without compiling (what golden tests and the AOT command
/// read). Throws LoweringError for graphs the compiler cannot handle.
CompiledGraph generate(const Graph& graph, const CompileOptions& options);

/// generate() plus compilation of the module (through options.cache when given). Throws CompileError.
CompiledGraph compile_graph(const Graph& graph, const CompileOptions& options);

/// Runs a CompiledGraph's kernels in order on a device.
class GraphRunner {
 public:
  GraphRunner(std::shared_ptr<const CompiledGraph> graph, Device& device);
  ~GraphRunner();
  GraphRunner(const GraphRunner&) = delete;
  GraphRunner& operator=(const GraphRunner&) = delete;

  /// `inputs` / `outputs`: device pointers to each graph input's / output's storage (element 0 of the storage; the
  /// buffers' storage offsets are applied by the kernels). Launches on `stream` (null: the default stream).
  void run(const std::vector<void*>& inputs, const std::vector<void*>& outputs, void* stream = nullptr);

  const CompiledGraph& graph() const { return *graph_; }

 private:
  std::shared_ptr<const CompiledGraph> graph_;
  Device& device_;
  std::unique_ptr<Module> module_;
  void* workspace_ = nullptr;
};

}  // namespace hi
