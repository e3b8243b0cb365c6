// emit_hip: scheduled loop IR -> one HIP translation unit holding every kernel of a graph.
//
// The source is the same for every target except for a small preamble (HI_WARP_SIZE, HI_TARGET_*) and the target
// prelude (codegen/preludes/{amd,nvidia,cpu}.h) placed before the common prelude; for the cpu device each kernel also
// gets a trampoline `extern "C" void K__hi_cpu(void** args)` that the cpu runtime calls. Kernel parameters follow
// HIP's kernelParams convention: args[i] points at the i-th argument's value.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "codegen/kernel_plan.h"
#include "codegen/target.h"
#include "ir/loop.h"

namespace hi {

/// One kernel parameter: a buffer pointer or a size symbol (hi_i64).
struct KernelParam {
  enum class Kind { Buffer, Size };
  Kind kind = Kind::Buffer;
  int buffer = -1;     ///< Buffer: LoopProgram buffer id
  std::string symbol;  ///< Size: symbol name
  std::string name;    ///< name in the source: in_ptr0 / out_ptr1 / buf_ptr2 / s0
  bool read_only = false;
};

struct EmittedKernel {
  std::string name;
  KernelKind kind = KernelKind::Pointwise;
  std::vector<KernelParam> params;
  Index grid;              ///< blocks (x); may contain size symbols
  int block = 256;         ///< threads per block (x)
  bool needs_sync = false; ///< uses __syncthreads or warp shuffles (the cpu device then runs threads as fibers)
  /// Launch every block of `grid` rather than capping it at a few waves of resident blocks (GraphRunner): pointwise
  /// kernels and plain row reductions, whose blocks are short and even.
  bool whole_grid = false;
};

struct EmittedModule {
  Target target;
  std::string source;  ///< complete translation unit, preludes included
  std::vector<EmittedKernel> kernels;
  std::vector<KernelPlan> plans;  ///< the plan each kernel was printed from, in the order of `kernels`
};

/// Version of the code generator's output format and preludes; part of every cache key.
std::string_view codegen_version();
/// Prelude text by file name ("common.h", "amd.h", ...); defined from codegen/preludes/ at build time.
std::string_view embedded_prelude(std::string_view name);

/// Emits `program` (which must have kernels, see fuse_kernels) for `target`: plans each kernel (plan_kernel), then
/// prints it as planned. The source depends on nothing else (no
/// names, no dates), so equal programs give equal sources and hit the code-object cache.
EmittedModule emit_hip(const LoopProgram& program, const Target& target);

/// One translation unit holding the kernels of several modules for one target (compile_graphs: a graph's segments
/// in one compiler call): one preamble, each module's kernels (and cpu entry points) in order. Kernel names must be
/// distinct; throws std::invalid_argument otherwise, or for modules of different targets.
EmittedModule combine_modules(const std::vector<const EmittedModule*>& modules);

/// `module` as compile units: consecutive kernels grouped until a group's kernel text passes `max_kernel_bytes` (a
/// kernel larger than that is a unit of its own), each unit a complete translation unit (the preamble, its kernels
/// and their cpu entry points) that compiles on its own. The units of a cpu module link into one shared object: all
/// but the first define HI_CPU_LATER_UNIT, so the prelude's exported symbols are defined once. A module that fits in
/// one unit is returned as it is (same source, so the same cache key). Kernel order is kept.
std::vector<EmittedModule> split_module(const EmittedModule& module, size_t max_kernel_bytes);

/// Only the kernels' text (no preamble/preludes), for golden tests and reading.
std::string kernels_text(const EmittedModule& m);

}  // namespace hi
