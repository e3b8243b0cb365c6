#include "tools/pipeline/compile_graph.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "frontend/graph_json.h"
#include "lowering/fuse_kernels.h"
#include "lowering/plan_memory.h"
#include "lowering/split_reductions.h"
#include "tools/pipeline/graph_cache.h"

namespace hi {
namespace {

/// Threads a multiprocessor keeps resident at best (2048 on NVIDIA sm_80/sm_90; AMD CDNA CUs hold 2560 at most).
constexpr int kResidentThreadsPerMultiprocessor = 2048;
/// Waves of resident blocks a kernel's grid is capped at (see GraphRunner's constructor).
constexpr int kGridWaves = 16;

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

/// Writes one stage's output under the debug directory; a no-op without one.
class DebugDump {
 public:
  DebugDump(const CompileOptions& o) {
    std::string dir = o.debug_dir;
    if (dir.empty())
      if (const char* env = std::getenv("HIPINDUCTOR_DEBUG_DIR")) dir = env;
    if (dir.empty()) return;
    dir_ = std::filesystem::path(dir) / o.graph_name;
    std::filesystem::create_directories(dir_);
  }
  void operator()(const std::string& file, const std::string& text) const {
    if (dir_.empty()) return;
    std::ofstream(dir_ / file) << text;
  }

 private:
  std::filesystem::path dir_;
};

std::string plan_text(const LoopProgram& p) {
  std::ostringstream os;
  os << "workspace_bytes " << p.workspace_bytes << "\n";
  for (size_t b = 0; b < p.buffers.size(); ++b)
    if (p.workspace_offsets[b] >= 0) os << p.buffers[b].name << " at " << p.workspace_offsets[b] << "\n";
  for (const Kernel& k : p.kernels) os << "launch " << k.name << "\n";
  return os.str();
}

}  // namespace

CompiledGraph generate(const Graph& graph, const CompileOptions& options) {
  auto start = std::chrono::steady_clock::now();
  DebugDump dump(options);
  dump("graph.json", write_graph_json(graph));

  CompiledGraph out;
  LoopProgram p = lower_graph(graph, options.lowering);
  dump("loop_ir.txt", p.str());
  size_t lowered = p.computations.size();
  split_reductions(p, options.split);
  if (p.computations.size() != lowered) dump("split.txt", p.str());
  fuse_kernels(p);
  for (Kernel& k : p.kernels) k.name += options.kernel_suffix;
  dump("kernels.txt", p.str());
  plan_memory(p);
  dump("plan.txt", plan_text(p));
  out.module = emit_hip(p, options.target);
  std::string plans;
  for (const KernelPlan& plan : out.module.plans) plans += to_string(plan);
  dump("plans.txt", plans);
  dump("module." + options.target.file_tag() + ".hip", out.module.source);
  out.program = std::move(p);
  out.lower_ms = ms_since(start);
  return out;
}

namespace {

/// compile_graph's first step: the compiler for options.target (null when it is missing and there is no cache to
/// look in) and, with a cache, the graph entry's key and the entry itself when it holds.
std::optional<CompiledGraph> find_graph_entry(const Graph& graph, const CompileOptions& options,
                                              std::unique_ptr<Compiler>& compiler, std::string& graph_key) {
  if (!options.cache) return std::nullopt;
  auto start = std::chrono::steady_clock::now();
  try {
    compiler = compiler_for(options.target);
  } catch (const std::runtime_error&) {
  }
  if (compiler) graph_key = graph_entry_key(graph, options, *compiler);
  // Skipped when debug dumps ask for every stage.
  bool dumping = !options.debug_dir.empty() || std::getenv("HIPINDUCTOR_DEBUG_DIR");
  if (graph_key.empty() || dumping) return std::nullopt;
  std::optional<CompiledGraph> cached = load_graph_entry(*options.cache, graph_key, options.target);
  if (cached) cached->lower_ms = ms_since(start);
  return cached;
}

/// Compiles `module` through the cache of `options` into every graph of `graphs` (which it holds the kernels of),
/// then writes their graph entries under `graph_keys`.
void compile_module(const EmittedModule& module, const CompileOptions& options, Compiler& compiler,
                    const std::vector<CompiledGraph*>& graphs, const std::vector<std::string>& graph_keys) {
  auto start = std::chrono::steady_clock::now();
  std::vector<std::string> kernel_names;
  for (const EmittedKernel& k : module.kernels) kernel_names.push_back(k.name);
  bool hit = false;
  std::string key;
  CompiledCode code = compile_cached(compiler, module.source, options.graph_name, options.target, {},
                                     std::string(codegen_version()), options.cache, &hit, &key, kernel_names);
  double ms = hit ? 0 : ms_since(start);
  for (size_t i = 0; i < graphs.size(); ++i) {
    CompiledGraph& g = *graphs[i];
    g.code = code;
    g.cache_hit = hit;
    g.cache_key = key;
    g.compile_ms = ms / static_cast<double>(graphs.size());  // each graph's share of the one call
    if (options.cache && !key.empty()) {
      g.cache_dir = options.cache->directory();
      if (!graph_keys[i].empty()) store_graph_entry(*options.cache, graph_keys[i], g);
    }
  }
}

}  // namespace

CompiledGraph compile_graph(const Graph& graph, const CompileOptions& options) {
  // Graph entry (graph_cache.h): a warm start skips generate() too. Skipped when the compiler is missing (generate's
  // errors come first then).
  std::string graph_key;
  std::unique_ptr<Compiler> compiler;
  if (std::optional<CompiledGraph> cached = find_graph_entry(graph, options, compiler, graph_key))
    return std::move(*cached);
  CompiledGraph out = generate(graph, options);
  if (!compiler) compiler = compiler_for(options.target);
  compile_module(out.module, options, *compiler, {&out}, {graph_key});
  return out;
}

std::vector<CompiledGraph> compile_graphs(const std::vector<Graph>& graphs, const std::vector<CompileOptions>& options) {
  if (graphs.size() != options.size())
    throw std::invalid_argument("compile_graphs: " + std::to_string(graphs.size()) + " graphs but " +
                                std::to_string(options.size()) + " options");
  std::vector<std::optional<CompiledGraph>> done(graphs.size());
  std::vector<std::string> keys(graphs.size());
  std::unique_ptr<Compiler> compiler;
  std::vector<size_t> misses;
  for (size_t i = 0; i < graphs.size(); ++i) {
    if (options[i].target.id() != options[0].target.id())
      throw std::invalid_argument("compile_graphs: graphs for " + options[0].target.id() + " and " +
                                  options[i].target.id());
    std::unique_ptr<Compiler> found;
    done[i] = find_graph_entry(graphs[i], options[i], found, keys[i]);
    if (found && !compiler) compiler = std::move(found);
    if (!done[i]) misses.push_back(i);
  }
  if (!misses.empty()) {
    // The misses' kernels as one unit; a single miss is compiled as compile_graph would (its own names and source).
    std::vector<CompiledGraph*> generated;
    std::vector<const EmittedModule*> modules;
    std::vector<std::string> miss_keys;
    for (size_t n = 0; n < misses.size(); ++n) {
      size_t i = misses[n];
      CompileOptions o = options[i];
      if (misses.size() > 1) o.kernel_suffix += "_g" + std::to_string(n);
      done[i] = generate(graphs[i], o);
      generated.push_back(&*done[i]);
      modules.push_back(&done[i]->module);
      miss_keys.push_back(keys[i]);
    }
    EmittedModule combined;
    if (modules.size() > 1) {
      combined = combine_modules(modules);
      for (CompiledGraph* g : generated) g->module.source = combined.source;
    }
    if (!compiler) compiler = compiler_for(options[0].target);
    compile_module(modules.size() > 1 ? combined : *modules[0], options[misses[0]], *compiler, generated, miss_keys);
  }
  std::vector<CompiledGraph> out;
  out.reserve(graphs.size());
  for (auto& g : done) out.push_back(std::move(*g));
  return out;
}

GraphRunner::GraphRunner(std::shared_ptr<const CompiledGraph> graph, Device& device)
    : graph_(std::move(graph)), device_(device) {
  std::vector<KernelInfo> infos;
  for (const EmittedKernel& k : graph_->module.kernels) infos.push_back({k.name, k.needs_sync});
  module_ = device_.load_for_target(graph_->module.target, graph_->code.binary, infos);
  record_loader_facts(*graph_, *module_);  // into the cache entry's metadata, once (graph_cache.h)

  // Which run-time pointer each buffer gets; a later rule wins, as graph outputs may also be inputs and the plan
  // places only intermediates in the workspace.
  const LoopProgram& p = graph_->program;
  std::vector<std::optional<PointerSource>> source(p.buffers.size());
  for (size_t i = 0; i < p.inputs.size(); ++i) source[p.inputs[i]] = PointerSource{PointerSource::Kind::Input, i, 0, 0};
  for (size_t i = 0; i < p.outputs.size(); ++i)
    source[p.outputs[i]] = PointerSource{PointerSource::Kind::Output, i, 0, 0};
  for (size_t b = 0; b < p.buffers.size(); ++b)
    if (p.workspace_offsets[b] >= 0)
      source[b] = PointerSource{PointerSource::Kind::Workspace, static_cast<size_t>(p.workspace_offsets[b]), 0, 0};

  if (p.align > 1) {
    auto first_byte = [&](int buffer) {
      const Buffer& b = p.buffers[buffer];
      auto offset = b.offset.as_const();
      return static_cast<uintptr_t>((offset ? *offset : 0) * dtype_bytes(b.dtype));
    };
    for (size_t i = 0; i < p.inputs.size(); ++i) aligned_.push_back({true, i, first_byte(p.inputs[i])});
    for (size_t i = 0; i < p.outputs.size(); ++i) aligned_.push_back({false, i, first_byte(p.outputs[i])});
  }

  for (const EmittedKernel& k : graph_->module.kernels) {
    auto grid = simplify(k.grid, p.size_ranges).as_const();
    if (!grid) {
      if (cannot_run_.empty()) cannot_run_ = "GraphRunner::run: kernel " + k.name + " has a symbolic grid";
      continue;
    }
    if (*grid == 0) continue;
    // Every kernel loops over its work (grid-stride), so its grid may be smaller than its work. Kernels whose blocks
    // hold much work per row or column (norms, softmax, column reductions) are capped at kGridWaves waves of the
    // blocks that stay resident at once (the driver's occupancy figure). On the H200, under do_bench, 16 waves beat 8:
    // LayerNorm over 16k x 4k bf16 took 0.0712-0.0715 ms against 0.0722-0.0728 (the whole grid: 0.0717-0.0725),
    // RMSNorm 0.0706-0.0714 against 0.0713-0.0720, softmax over 8k x 8k f32 0.1343-0.1345 against 0.1355-0.1364;
    // one wave was slower than several. Kernels marked whole_grid (pointwise, plain row reductions) launch every
    // block, as Inductor's do: the block scheduler then evens out the multiprocessors, which do_bench's dirty L2 (its
    // 256 MB memset before each call) slows unevenly. On the H200 add+relu over 64M f32 took 0.1903 ms against 0.1946
    // when capped at 8 waves, gelu over 8k x 8k bf16 0.0708 against 0.0720. HIPINDUCTOR_BLOCKS_PER_SM overrides the
    // cap's blocks per SM (0: no cap), for tuning.
    // HIP's launch limit: grid x block threads below 2^32 (CUDA's grid.x limit, 2^31 - 1, is looser).
    const int64_t whole = std::min<int64_t>(*grid, (int64_t{1} << 31) / k.block);
    *grid = whole;
    std::set<unsigned> candidates{static_cast<unsigned>(whole)};
    if (int sms = device_.multiprocessor_count(); sms > 0) {
      int resident = module_->resident_blocks(k.name, k.block, 0);
      if (resident <= 0) resident = std::max(1, kResidentThreadsPerMultiprocessor / k.block);
      for (int waves = 1; waves <= kGridWaves; waves *= 2)
        candidates.insert(static_cast<unsigned>(std::min<int64_t>(whole, int64_t{sms} * resident * waves)));
      int64_t per_sm = k.whole_grid ? 0 : int64_t{resident} * kGridWaves;
      if (const char* forced = std::getenv("HIPINDUCTOR_BLOCKS_PER_SM")) per_sm = std::atoi(forced);
      if (per_sm > 0) *grid = std::min<int64_t>(*grid, int64_t{sms} * per_sm);
    } else {
      candidates.insert(static_cast<unsigned>(std::max<int64_t>(1, whole / 4)));
    }
    candidates.insert(static_cast<unsigned>(*grid));
    Launch launch{&k.name, Dim3{static_cast<unsigned>(*grid), 1, 1}, Dim3{static_cast<unsigned>(k.block), 1, 1},
                  std::vector<void*>(k.params.size(), nullptr), std::vector<void*>(k.params.size(), nullptr),
                  std::vector<unsigned>(candidates.begin(), candidates.end())};
    for (size_t i = 0; i < k.params.size(); ++i) {
      launch.args[i] = &launch.values[i];
      const KernelParam& kp = k.params[i];
      if (kp.kind == KernelParam::Kind::Size) {
        if (cannot_run_.empty()) cannot_run_ = "GraphRunner::run: symbolic size '" + kp.symbol + "' needs a value";
        continue;
      }
      // A buffer with no source (neither input, output nor planned) keeps a null pointer, as before.
      if (!source[kp.buffer]) continue;
      PointerSource s = *source[kp.buffer];
      s.launch = launches_.size();
      s.param = i;
      sources_.push_back(s);
    }
    launches_.push_back(std::move(launch));  // moving the vectors keeps their buffers, so args stay valid
  }
}

GraphRunner::~GraphRunner() {
  if (own_workspace_) device_.free(own_workspace_);
}

size_t GraphRunner::workspace_bytes() const {
  return static_cast<size_t>(graph_->program.workspace_bytes);
}

void GraphRunner::run(const std::vector<void*>& inputs, const std::vector<void*>& outputs, void* stream) {
  launch_all(inputs, outputs, workspace_or_own(nullptr), stream);  // the device's alignment is the kernels' need
}

void* GraphRunner::workspace_or_own(void* workspace) {
  if (workspace) {
    check_workspace(workspace);
    return workspace;
  }
  if (workspace_bytes() > 0 && !own_workspace_) own_workspace_ = device_.alloc(workspace_bytes());
  return own_workspace_;
}

void GraphRunner::run(const std::vector<void*>& inputs, const std::vector<void*>& outputs, void* workspace,
                      void* stream) {
  check_workspace(workspace);
  launch_all(inputs, outputs, workspace, stream);
}

void GraphRunner::check_workspace(void* workspace) const {
  if (workspace_bytes() == 0) return;
  if (!workspace)
    throw std::invalid_argument("GraphRunner::run: the graph needs a workspace of " +
                                std::to_string(workspace_bytes()) + " bytes, got a null pointer");
  if (reinterpret_cast<uintptr_t>(workspace) % static_cast<uintptr_t>(kWorkspaceAlignment) != 0)
    throw std::invalid_argument("GraphRunner::run: the workspace must be " + std::to_string(kWorkspaceAlignment) +
                                "-byte aligned");
}

std::vector<std::pair<std::string, unsigned>> GraphRunner::grids() const {
  std::vector<std::pair<std::string, unsigned>> out;
  for (const Launch& l : launches_) out.emplace_back(*l.kernel, l.grid.x);
  return out;
}

void GraphRunner::autotune(const std::vector<void*>& inputs, const std::vector<void*>& outputs, void* workspace,
                           void* stream) {
  workspace = workspace_or_own(workspace);
  // An explicit grid cap (HIPINDUCTOR_BLOCKS_PER_SM) is the user's choice: nothing to tune then.
  if (tuned_ || std::getenv("HIPINDUCTOR_BLOCKS_PER_SM")) {
    launch_all(inputs, outputs, workspace, stream);
    return;
  }
  // What an earlier tuning on this device chose, recorded next to the code object (a code object several segments
  // share holds their kernels' records side by side).
  std::map<std::string, unsigned> recorded;
  if (!graph_->cache_key.empty() && !graph_->cache_dir.empty())
    recorded = CodeObjectCache(graph_->cache_dir).tuned_grids(graph_->cache_key, device_.name());
  bind(inputs, outputs, workspace);
  // Each candidate is timed by the device's events around one launch, with the caches flushed before it (256 MB
  // overwritten, as Triton's do_bench does): a kernel rerun on what its last run left in L2 favours grids that the
  // program's own, cold, first touch does not (timed that way, softmax over 32k x 1k bf16 was tuned to a grid that
  // took 0.051 ms in the benchmark against the default's 0.038 on the H200). Rounds visit the candidates in turn; a
  // candidate's time is its median.
  const bool gpu = device_.multiprocessor_count() > 0;
  const int rounds = gpu ? 5 : 2;
  constexpr size_t kFlushBytes = size_t{256} << 20;
  struct Flush {
    Device& device;
    void* pointer;
    ~Flush() {
      if (pointer) device.free(pointer);
    }
  } flush{device_, gpu ? device_.alloc(kFlushBytes) : nullptr};
  std::vector<CodeObjectCache::KernelTuning> record;
  for (Launch& l : launches_) {
    auto launch = [&] { module_->launch(*l.kernel, l.grid, l.block, 0, l.args.data(), stream); };
    auto found = recorded.find(*l.kernel);
    if (found != recorded.end() && std::count(l.grids.begin(), l.grids.end(), found->second)) l.grid.x = found->second;
    if (l.grids.size() < 2 || found != recorded.end()) {
      launch();
      continue;
    }
    const unsigned fallback = l.grid.x;
    std::vector<std::vector<double>> times(l.grids.size());
    for (int round = 0; round < rounds; ++round)
      for (size_t c = 0; c < l.grids.size(); ++c) {
        l.grid.x = l.grids[c];
        if (flush.pointer) device_.fill(flush.pointer, round, kFlushBytes, stream);
        times[c].push_back(device_.time_ms(launch, stream));
      }
    CodeObjectCache::KernelTuning t{*l.kernel, fallback, {}};
    double base = 0;
    for (size_t c = 0; c < l.grids.size(); ++c) {
      std::nth_element(times[c].begin(), times[c].begin() + rounds / 2, times[c].end());
      t.ms.emplace_back(l.grids[c], times[c][rounds / 2]);
      if (l.grids[c] == fallback) base = t.ms.back().second;
    }
    double best = base;
    for (const auto& [blocks, ms] : t.ms)
      if (ms < 0.97 * base && ms < best) {  // the default stays unless another grid is clearly faster
        best = ms;
        t.grid = blocks;
      }
    l.grid.x = t.grid;
    launch();  // the run's own launch
    record.push_back(std::move(t));
  }
  tuned_ = true;
  if (!record.empty() && !graph_->cache_key.empty() && !graph_->cache_dir.empty())
    CodeObjectCache(graph_->cache_dir).record_tuning(graph_->cache_key, device_.name(), record);
}

void GraphRunner::bind(const std::vector<void*>& inputs, const std::vector<void*>& outputs, void* workspace) {
  const LoopProgram& p = graph_->program;
  if (inputs.size() != p.inputs.size() || outputs.size() != p.outputs.size())
    throw std::invalid_argument("GraphRunner::run: graph takes " + std::to_string(p.inputs.size()) + " inputs and " +
                                std::to_string(p.outputs.size()) + " outputs, got " + std::to_string(inputs.size()) +
                                " and " + std::to_string(outputs.size()));
  if (!cannot_run_.empty()) throw std::invalid_argument(cannot_run_);
  // The kernels' vector accesses were proven aligned from the graph's promise (Graph::align), so a pointer that
  // breaks it is refused here rather than faulting on the device.
  for (const AlignedPointer& a : aligned_) {
    const void* storage = a.input ? inputs[a.position] : outputs[a.position];
    if ((reinterpret_cast<uintptr_t>(storage) + a.first_byte) % static_cast<uintptr_t>(p.align) != 0) {
      const Buffer& b = p.buffers[a.input ? p.inputs[a.position] : p.outputs[a.position]];
      throw std::invalid_argument("GraphRunner::run: " + std::string(a.input ? "input " : "output ") +
                                  std::to_string(a.position) + " ('" + b.name + "') is not " +
                                  std::to_string(p.align) + "-byte aligned, as the graph was compiled for (its 'align')");
    }
  }
  for (const PointerSource& s : sources_) {
    void* pointer = nullptr;
    switch (s.kind) {
      case PointerSource::Kind::Input:
        pointer = inputs[s.index];
        break;
      case PointerSource::Kind::Output:
        pointer = outputs[s.index];
        break;
      case PointerSource::Kind::Workspace:
        pointer = static_cast<char*>(workspace) + s.index;
        break;
    }
    launches_[s.launch].values[s.param] = pointer;
  }
}

void GraphRunner::launch_all(const std::vector<void*>& inputs, const std::vector<void*>& outputs, void* workspace,
                             void* stream) {
  bind(inputs, outputs, workspace);
  for (Launch& launch : launches_)
    module_->launch(*launch.kernel, launch.grid, launch.block, 0, launch.args.data(), stream);
}

}  // namespace hi
