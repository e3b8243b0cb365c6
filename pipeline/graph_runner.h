// GraphRunner: executes a CompiledGraph (compile_graph.h) on a Device. Inputs and outputs are caller-owned device
// pointers; intermediates live in one workspace, the runner's own or the caller's. Kernel argument arrays are built
// once, so a run only writes pointers and launches.
#pragma once

#include <cstdint>
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
