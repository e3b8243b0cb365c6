// GraphRunner: executes a CompiledGraph (compile_graph.h) on a Device. Inputs and outputs are caller-owned device
// pointers; intermediates live in one workspace, the runner's own or the caller's. Kernel argument arrays are built
// once, so a run only writes pointers and launches.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/compile_graph.h"
#include "runtime/device.h"

namespace hi {

/// Runs a CompiledGraph's kernels in order on a device. Kernel argument arrays are built once, at construction; a run
/// only writes the input, output and workspace pointers into them and launches. One run at a time per runner (the
/// argument arrays are shared); the Python extension serializes runs of one graph.
///
/// Graphs with size symbols (LoopProgram::symbols(): sorted by name) take the symbols' values with each run, in that
/// order. Binding values other than the last run's evaluates each launch's grid expression, the workspace offsets and
/// the workspace size, and writes the size arguments: no recompilation or re-planning. Values outside what the graph
/// was compiled for (each symbol's range, at least 1, and its promised divisor: LoopProgram::bind_symbols) are
/// refused with std::invalid_argument naming the symbol, so a violated assumption never runs kernels planned for
/// other sizes.
class GraphRunner {
 public:
  /// Loads the code object on `device` (Device::load_for_target: the graph's target must run there). `device` must
  /// outlive the runner.
  GraphRunner(std::shared_ptr<const CompiledGraph> graph, Device& device);
  ~GraphRunner();
  GraphRunner(const GraphRunner&) = delete;
  GraphRunner& operator=(const GraphRunner&) = delete;

  /// `inputs` / `outputs`: device pointers to each graph input's / output's storage (element 0 of the storage; the
  /// buffers' storage offsets are applied by the kernels). `sizes`: one value per size symbol, in symbols() order
  /// (empty for graphs without symbols). A graph compiled with `align` (Graph::align) needs each input's first element
  /// and each output's storage aligned to it; std::invalid_argument names the one that is not. Launches on `stream`
  /// (null: the default stream); on GPUs returns before the kernels finish. Intermediates live in the runner's own
  /// workspace, allocated through the Device on the first run that needs it, grown when a binding needs more, and
  /// reused (so runs on different streams must not overlap).
  void run(const std::vector<void*>& inputs, const std::vector<void*>& outputs, void* stream = nullptr) {
    run(inputs, outputs, std::vector<int64_t>{}, nullptr, stream);
  }
  /// The same with the caller's workspace (on GPUs: from PyTorch's allocator, in `stream`'s order): at least
  /// workspace_bytes(sizes) bytes, 256-byte aligned; may be null when that is 0, and null means the runner's own for
  /// the overload taking `sizes`. Throws std::invalid_argument for a missing or misaligned workspace.
  void run(const std::vector<void*>& inputs, const std::vector<void*>& outputs, void* workspace, void* stream);
  void run(const std::vector<void*>& inputs, const std::vector<void*>& outputs, const std::vector<int64_t>& sizes,
           void* workspace, void* stream);

  /// run() with tuned grids (autotuning). The first call on this runner takes the grids an earlier tuning on this
  /// device recorded next to the code object (CodeObjectCache::record_tuning), and times each other kernel with every
  /// candidate grid (device events around one launch, caches flushed before it, the median of 5 rounds): the
  /// kernel's whole grid, and 1, 2, 4, 8 and 16 waves of the blocks a GPU keeps resident (the default is 16); on the
  /// cpu device the whole grid and a quarter of it. A candidate replaces the default only when it is at least 3 %
  /// faster; the choices are recorded. Kernels run several times: each writes only buffers it does not read, none of
  /// them a graph input (the graphs are functional, and plan_memory never lets a kernel's output share bytes with a
  /// buffer it reads). Later calls are run(). With HIPINDUCTOR_BLOCKS_PER_SM set, only run(). A null `workspace` means
  /// the runner's own. Kernels with a symbolic grid are not tuned (a grid chosen for one binding says nothing about
  /// another): they launch as run() launches them.
  void autotune(const std::vector<void*>& inputs, const std::vector<void*>& outputs, void* workspace, void* stream) {
    autotune(inputs, outputs, std::vector<int64_t>{}, workspace, stream);
  }
  void autotune(const std::vector<void*>& inputs, const std::vector<void*>& outputs, const std::vector<int64_t>& sizes,
                void* workspace, void* stream);
  /// Each launched kernel's name and grid (blocks), in launch order, for the last binding of the sizes (before any
  /// run of a graph with symbols: empty).
  std::vector<std::pair<std::string, unsigned>> grids() const;

  /// The graph's size symbols, in the order run() takes their values.
  const std::vector<std::string>& symbols() const { return symbols_; }
  /// Workspace bytes of a graph without symbols; std::invalid_argument for one with symbols (use the overload).
  size_t workspace_bytes() const;
  /// Workspace bytes for `sizes` (one per symbol); std::invalid_argument for values the graph cannot take.
  size_t workspace_bytes(const std::vector<int64_t>& sizes) const;
  /// The device loader's per-kernel facts (registers, shared and local memory; empty on the cpu device).
  std::vector<GpuKernelFacts> kernel_facts() const { return module_->kernel_facts(); }
  const CompiledGraph& graph() const { return *graph_; }
  Device& device() const { return device_; }

 private:
  /// Where a kernel's pointer argument comes from on each run.
  struct PointerSource {
    enum class Kind { Input, Output, Workspace } kind;
    size_t index;   ///< Input / Output: position in run()'s vector; Workspace: position in workspace_offsets_
    size_t launch;  ///< which launch's argument...
    size_t param;   ///< ...and which of its parameters
  };
  struct Launch {
    const std::string* kernel;
    Index grid_blocks;             ///< the plan's grid, over the size symbols
    int64_t cap = 0;               ///< blocks the grid is capped at (resident waves), 0 for none
    Dim3 grid, block;              ///< grid for the current binding (grid.x 0: nothing to do, not launched)
    std::vector<void*> values;     ///< argument values (device pointers)
    std::vector<int64_t> sizes;    ///< size arguments' values
    std::vector<void*> args;       ///< args[i] = &values[i] or &sizes[k], what Module::launch takes
    std::vector<std::pair<size_t, std::string>> size_params;  ///< (position in `sizes`, program symbol)
    std::vector<unsigned> grids;   ///< autotune's candidates, ascending (grid.x is one of them); empty if symbolic
  };

  /// Program symbol values by name (LoopProgram::bind_symbols); throws std::invalid_argument naming the symbol.
  std::map<std::string, int64_t> symbol_values(const std::vector<int64_t>& sizes) const;
  /// Evaluates grids, workspace offsets and size arguments for `sizes` unless they are the bound ones.
  void bind_sizes(const std::vector<int64_t>& sizes);
  /// Throws std::invalid_argument for a caller's workspace run() cannot take (missing or misaligned).
  void check_workspace(void* workspace) const;
  /// The caller's workspace, checked, or (null) the runner's own, allocated or grown on need.
  void* workspace_or_own(void* workspace);
  /// Checks the arguments and fills every launch's pointer values for a run.
  void bind(const std::vector<void*>& inputs, const std::vector<void*>& outputs, void* workspace);
  void launch_all(const std::vector<void*>& inputs, const std::vector<void*>& outputs, void* workspace, void* stream);

  std::shared_ptr<const CompiledGraph> graph_;
  Device& device_;
  std::unique_ptr<Module> module_;
  std::vector<std::string> symbols_;
  std::vector<Launch> launches_;
  std::vector<PointerSource> sources_;
  std::vector<Index> workspace_offset_exprs_;  ///< workspace buffers' offsets, over the symbols
  std::vector<size_t> workspace_offsets_;      ///< ...for the current binding
  size_t workspace_bytes_ = 0;                 ///< for the current binding
  /// Graph::align: the inputs and outputs whose first element must be aligned, and its byte offset in the storage.
  struct AlignedPointer {
    bool input;
    size_t position;
    Index first_byte_expr;
    uintptr_t first_byte = 0;  ///< for the current binding
  };
  std::vector<AlignedPointer> aligned_;
  std::vector<int64_t> bound_sizes_;
  bool bound_ = false;
  void* own_workspace_ = nullptr;
  size_t own_workspace_bytes_ = 0;
  bool tuned_ = false;
};

}  // namespace hi
