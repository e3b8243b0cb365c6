// compile_graph: the whole pipeline for one graph, readable in one place:
//   verify -> lower_graph -> split_reductions -> fuse_kernels -> plan_memory -> emit_hip -> compile (through the
//   code-object cache)
// each step optionally dumped to HIPINDUCTOR_DEBUG_DIR (or CompileOptions::debug_dir). GraphRunner then executes the
// result on a Device: inputs and outputs are caller-owned device pointers, intermediates live in one workspace.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "codegen/emit_hip.h"
#include "codegen/target.h"
#include "ir/graph.h"
#include "ir/loop.h"
#include "lowering/lower_graph.h"
#include "lowering/split_reductions.h"
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
  SplitOptions split;
  /// Appended to every kernel's name (compile_graphs keeps the names of graphs compiled together distinct).
  std::string kernel_suffix;
};

struct CompiledGraph {
  LoopProgram program;  ///< lowered, fused, memory-planned
  EmittedModule module;
  CompiledCode code;
  bool cache_hit = false;
  double lower_ms = 0;    ///< lowering, fusion, planning and codegen (on a graph-entry hit: reading the entry)
  double compile_ms = 0;  ///< the compiler call (0 on a cache hit)
  /// Came from a graph entry (graph_cache.h): lowering and codegen were skipped too, and `program` holds only the
  /// buffers, inputs/outputs and the workspace plan (no computations or loop-IR kernels).
  bool graph_cache_hit = false;
  std::string cache_key;             ///< the code-object cache entry of `code`; empty when not cached
  std::filesystem::path cache_dir;   ///< the cache directory holding it
};

/// Lowers, fuses, plans and emits `graph` for `target` without compiling (what golden tests and the AOT command
/// read). Throws LoweringError for graphs the compiler cannot handle.
CompiledGraph generate(const Graph& graph, const CompileOptions& options);

/// generate() plus compilation of the module (through options.cache when given). With a cache, a graph entry for the
/// same graph, target, compiler and build is used instead (skipping generate(); not when debug dumps are requested)
/// and one is written after a compile (graph_cache.h). Throws CompileError.
CompiledGraph compile_graph(const Graph& graph, const CompileOptions& options);

/// Graphs for one target (a torch.compile graph's segments) compiled together: those that miss the cache are
/// generated with kernel names made distinct (suffix "_g<i>") and their kernels compiled as one translation unit, in
/// one compiler call (combine_modules). NVRTC spends ~20 ms per call before the first kernel and runs concurrent calls
/// one at a time, so N calls cost about N times one. Each such result's module.source is that translation unit and
/// its code the shared code object, as a graph entry later loads it; program and module.kernels are its own. Graph
/// entries are read and written per graph as in compile_graph, and a single miss compiles as compile_graph does.
/// `options` holds one CompileOptions per graph. Throws what compile_graph throws (CompileError for the unit).
std::vector<CompiledGraph> compile_graphs(const std::vector<Graph>& graphs, const std::vector<CompileOptions>& options);

/// Runs a CompiledGraph's kernels in order on a device. Kernel argument arrays are built once, at construction; a run
/// only writes the input, output and workspace pointers into them and launches. One run at a time per runner (the
/// argument arrays are shared); the Python extension serializes runs of one graph.
class GraphRunner {
 public:
  /// Loads the code object on `device` (Device::load_for_target: the graph's target must run there). `device` must
  /// outlive the runner.
  GraphRunner(std::shared_ptr<const CompiledGraph> graph, Device& device);
  ~GraphRunner();
  GraphRunner(const GraphRunner&) = delete;
  GraphRunner& operator=(const GraphRunner&) = delete;

  /// `inputs` / `outputs`: device pointers to each graph input's / output's storage (element 0 of the storage; the
  /// buffers' storage offsets are applied by the kernels). A graph compiled with `align` (Graph::align) needs each
  /// input's first element and each output's storage aligned to it; std::invalid_argument names the one that is not. Launches on `stream` (null: the default stream); on GPUs
  /// returns before the kernels finish. Intermediates live in the runner's own workspace, allocated through the
  /// Device on the first run that needs it and reused (so runs on different streams must not overlap).
  void run(const std::vector<void*>& inputs, const std::vector<void*>& outputs, void* stream = nullptr);
  /// The same with the caller's workspace (on GPUs: from PyTorch's allocator, in `stream`'s order): at least
  /// workspace_bytes() bytes, 256-byte aligned; may be null when workspace_bytes() is 0. Throws
  /// std::invalid_argument for a missing or misaligned workspace.
  void run(const std::vector<void*>& inputs, const std::vector<void*>& outputs, void* workspace, void* stream);

  /// run() with tuned grids (autotuning). The first call on this runner takes the grids an earlier tuning on this
  /// device recorded next to the code object (CodeObjectCache::record_tuning), and times each other kernel with every
  /// candidate grid (device events around one launch, caches flushed before it, the median of 5 rounds): the
  /// kernel's whole grid, and 1, 2, 4, 8 and 16 waves of the blocks a GPU keeps resident (the default is 16); on the
  /// cpu device the whole grid and a quarter of it. A candidate replaces the default only when it is at least 3 %
  /// faster; the choices are recorded. Kernels run several times: each writes only buffers it does not read, none of
  /// them a graph input (the graphs are functional, and plan_memory never lets a kernel's output share bytes with a
  /// buffer it reads). Later calls are run(). With HIPINDUCTOR_BLOCKS_PER_SM set, only run(). A null `workspace` means
  /// the runner's own.
  void autotune(const std::vector<void*>& inputs, const std::vector<void*>& outputs, void* workspace, void* stream);
  /// Each launched kernel's name and grid (blocks), in launch order.
  std::vector<std::pair<std::string, unsigned>> grids() const;

  size_t workspace_bytes() const;
  /// The device loader's per-kernel facts (registers, shared and local memory; empty on the cpu device).
  std::vector<GpuKernelFacts> kernel_facts() const { return module_->kernel_facts(); }
  const CompiledGraph& graph() const { return *graph_; }
  Device& device() const { return device_; }

 private:
  /// Where a kernel's pointer argument comes from on each run.
  struct PointerSource {
    enum class Kind { Input, Output, Workspace } kind;
    size_t index;   ///< Input / Output: position in run()'s vector; Workspace: byte offset
    size_t launch;  ///< which launch's argument...
    size_t param;   ///< ...and which of its parameters
  };
  struct Launch {
    const std::string* kernel;
    Dim3 grid, block;
    std::vector<void*> values;     ///< argument values (device pointers)
    std::vector<void*> args;       ///< args[i] = &values[i], what Module::launch takes
    std::vector<unsigned> grids;   ///< autotune's candidates, ascending (grid.x is one of them)
  };

  /// Throws std::invalid_argument for a caller's workspace run() cannot take (missing or misaligned).
  void check_workspace(void* workspace) const;
  /// The caller's workspace, checked, or (null) the runner's own, allocated on first need.
  void* workspace_or_own(void* workspace);
  /// Checks the arguments and fills every launch's pointer values for a run.
  void bind(const std::vector<void*>& inputs, const std::vector<void*>& outputs, void* workspace);
  void launch_all(const std::vector<void*>& inputs, const std::vector<void*>& outputs, void* workspace, void* stream);

  std::shared_ptr<const CompiledGraph> graph_;
  Device& device_;
  std::unique_ptr<Module> module_;
  std::vector<Launch> launches_;  ///< kernels with an empty grid are left out
  std::vector<PointerSource> sources_;
  /// Graph::align: the inputs and outputs whose first element must be aligned, and its byte offset in the storage.
  struct AlignedPointer {
    bool input;
    size_t position;
    uintptr_t first_byte;
  };
  std::vector<AlignedPointer> aligned_;
  std::string cannot_run_;  ///< why run() must refuse (symbolic sizes), or empty
  void* own_workspace_ = nullptr;
  bool tuned_ = false;
};

}  // namespace hi
