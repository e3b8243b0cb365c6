// compile_graph: the whole pipeline for one graph, readable in one place:
//   verify -> lower_graph -> split_reductions -> fuse_kernels -> plan_memory -> emit_hip -> compile (through the
//   code-object cache)
// each step optionally dumped to HIPINDUCTOR_DEBUG_DIR (or CompileOptions::debug_dir), and the loop IR verified after
// each pass when CompileOptions::verify_passes is on. GraphRunner (graph_runner.h) executes the result on a Device.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <utility>
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

/// Kernel text per unit of a GPU module, per compiler (CompileOptions::max_gpu_unit_kernel_bytes). Each unit pays the
/// compiler's fixed cost again (starting the program and parsing the preludes), so a unit should hold several times
/// that cost's worth of kernels, and a module below the bound (each segment of the perf sweep's graphs has under 12 KB
/// of kernels) compiles whole, into the one code object it always did.
///   NVRTC: the fixed cost is ~0.1 s, kernel text ~25 ms per KiB (50 chained softmaxes: 134 KB in 3.4 s, idle host),
///          and concurrent calls run in parallel: 32 KiB units (~0.8 s each) spread a large module over the cores for
///          an eighth more work.
///   HIPRTC: the fixed cost is ~0.5 s (seven segments one by one 4.3 s, as one unit 0.9 s: docs/cache.md), and
///          HIPRTC 5.7 runs concurrent calls one at a time (of two threads compiling, one always waits on a lock), so
///          units buy no parallelism there, only cache entries shared between graphs: 128 KiB units keep the
///          repeated fixed cost near a tenth.
constexpr size_t kNvidiaUnitKernelBytes = 32 * 1024;
constexpr size_t kAmdUnitKernelBytes = 128 * 1024;

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
  /// cpu target: a module whose kernels' text passes this many bytes is compiled as several translation units
  /// (split_module), in parallel, one host compiler process per hardware thread, each unit cached on its own, then
  /// linked into the one shared object a whole compile would give. The host compiler's time grows with a unit's size
  /// and each unit pays the preludes once (about a kernel's worth of time), so units of a few kernels keep that
  /// overhead small while a graph of a thousand kernels still spreads over every core.
  size_t max_unit_kernel_bytes = 64 * 1024;
  /// GPU targets (NVRTC, HIPRTC): as max_unit_kernel_bytes, the units compiled concurrently in threads of this
  /// process and kept as one units container (code_object_units.h). 0: the compiler's bound, kNvidiaUnitKernelBytes
  /// or kAmdUnitKernelBytes.
  size_t max_gpu_unit_kernel_bytes = 0;
  /// Run verify_loop_program after every loop-IR pass and throw LoweringError naming the pass and the first problem.
  /// On in debug builds and wherever HIPINDUCTOR_VERIFY_PASSES=1 (the test suites set it); off otherwise, since a
  /// sound pipeline never trips it and the check walks every expression.
  bool verify_passes = default_verify_passes();

  static bool default_verify_passes();
};

struct CompiledGraph {
  LoopProgram program;  ///< lowered, fused, memory-planned
  EmittedModule module;
  CompiledCode code;
  bool cache_hit = false;
  double lower_ms = 0;    ///< lowering, fusion, planning and codegen (on a graph-entry hit: reading the entry)
  double compile_ms = 0;  ///< the compiler call (0 on a cache hit)
  /// Milliseconds per pipeline step, in order: lower, split, fuse, plan_memory, emit (kernel plans and printing),
  /// then compile (the compiler call; 0 on a code-object hit). Empty on a graph-entry hit. What lower_ms sums up,
  /// per step, so that a graph that compiles slowly says where (bench/compile_scaling.py).
  std::vector<std::pair<std::string, double>> stage_ms;
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
/// one compiler call (combine_modules): each compiler call has a fixed cost before its first kernel (NVRTC ~0.1 s,
/// HIPRTC more), so N small calls cost about N times that; a translation unit past the GPU unit bound still compiles
/// as units in parallel (CompileOptions::max_gpu_unit_kernel_bytes). Each such result's module.source is that translation unit and
/// its code the shared code object, as a graph entry later loads it; program and module.kernels are its own. Graph
/// entries are read and written per graph as in compile_graph, and a single miss compiles as compile_graph does.
/// `options` holds one CompileOptions per graph. Throws what compile_graph throws (CompileError for the unit).
std::vector<CompiledGraph> compile_graphs(const std::vector<Graph>& graphs, const std::vector<CompileOptions>& options);

}  // namespace hi
