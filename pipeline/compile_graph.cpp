#include "pipeline/compile_graph.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "frontend/graph_json.h"
#include "lowering/fuse_kernels.h"
#include "lowering/plan_memory.h"
#include "lowering/split_reductions.h"
#include "pipeline/graph_cache.h"
#include "runtime/code_object_units.h"

namespace hi {
namespace {

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
  /// `text` is called only when dumping: a stage's text is as large as the graph, and most compiles dump nothing.
  void operator()(const std::string& file, const std::function<std::string()>& text) const {
    if (dir_.empty()) return;
    std::ofstream(dir_ / file) << text();
  }

 private:
  std::filesystem::path dir_;
};

/// Throws LoweringError naming `pass` when the loop IR it produced is not sound (CompileOptions::verify_passes).
void verify_after(const char* pass, const LoopProgram& p, const CompileOptions& o) {
  if (!o.verify_passes) return;
  std::vector<std::string> problems = verify_loop_program(p);
  if (problems.empty()) return;
  throw LoweringError("internal: loop IR after " + std::string(pass) + " of graph '" + o.graph_name + "': " +
                      problems.front() + (problems.size() > 1 ? " (and " + std::to_string(problems.size() - 1) +
                                                                      " more problems)" : ""));
}

std::string plan_text(const LoopProgram& p) {
  std::ostringstream os;
  os << "workspace_bytes " << p.workspace_bytes.str() << "\n";
  for (size_t b = 0; b < p.buffers.size(); ++b)
    if (p.in_workspace(static_cast<int>(b))) os << p.buffers[b].name << " at " << p.workspace_offsets[b].str() << "\n";
  for (const Kernel& k : p.kernels) os << "launch " << k.name << "\n";
  return os.str();
}

}  // namespace

bool CompileOptions::default_verify_passes() {
#ifndef NDEBUG
  return true;
#else
  const char* env = std::getenv("HIPINDUCTOR_VERIFY_PASSES");
  return env && std::string(env) == "1";
#endif
}

CompiledGraph generate(const Graph& graph, const CompileOptions& options) {
  auto start = std::chrono::steady_clock::now();
  DebugDump dump(options);
  dump("graph.json", [&] { return write_graph_json(graph); });

  CompiledGraph out;
  auto step = start;
  auto stage = [&](const char* name) {
    auto now = std::chrono::steady_clock::now();
    out.stage_ms.emplace_back(name, std::chrono::duration<double, std::milli>(now - step).count());
    step = now;
  };
  LoopProgram p = lower_graph(graph, options.lowering);
  dump("loop_ir.txt", [&] { return p.str(); });
  stage("lower");
  size_t lowered = p.computations.size();
  split_reductions(p, options.split);
  if (p.computations.size() != lowered) dump("split.txt", [&] { return p.str(); });
  verify_after("split_reductions", p, options);
  stage("split");
  fuse_kernels(p);
  for (Kernel& k : p.kernels) k.name += options.kernel_suffix;
  dump("kernels.txt", [&] { return p.str(); });
  verify_after("fuse_kernels", p, options);
  stage("fuse");
  plan_memory(p);
  dump("plan.txt", [&] { return plan_text(p); });
  verify_after("plan_memory", p, options);
  stage("plan_memory");
  out.module = emit_hip(p, options.target);
  dump("plans.txt", [&] {
    std::string plans;
    for (const KernelPlan& plan : out.module.plans) plans += to_string(plan);
    return plans;
  });
  dump("module." + options.target.file_tag() + ".hip", [&] { return out.module.source; });
  stage("emit");
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

/// The compiler for a module split into units (split_module): compile() of the module's source compiles the units
/// concurrently, one thread per unit up to the hardware threads, each through the cache as an entry of its own (so a
/// unit that another graph also holds, the same layer's kernels, is a hit), then makes one code object of them: for
/// the cpu target the host compiler's objects linked into the shared object compiling the whole source would give;
/// for GPU targets a units container (code_object_units.h) holding each unit's code object and kernel names, which
/// Device::load_for_target loads part by part. Its name, version and options are the wrapped compiler's, so
/// compile_cached keys, locks and stores the result as it would the whole source's.
class UnitCompiler final : public Compiler {
 public:
  UnitCompiler(Compiler& compiler, const EmittedModule& module, std::vector<EmittedModule> units,
               CodeObjectCache* cache)
      : compiler_(compiler), module_(module), units_(std::move(units)), cache_(cache) {}

  std::string name() const override { return compiler_.name(); }
  std::string version() const override { return compiler_.version(); }
  std::vector<std::string> base_options(const Target& target) const override {
    return compiler_.base_options(target);
  }

  CompiledCode compile(const std::string& source, const std::string& name_hint, const Target& target,
                       const std::vector<std::string>& extra_options) override {
    if (&source != &module_.source && source != module_.source)
      throw std::logic_error("UnitCompiler: compiles only the module it was made for");
    auto start = std::chrono::steady_clock::now();
    const bool host = target.kind == TargetKind::Cpu;
    std::vector<std::string> options = extra_options;
    if (host) options.push_back("-c");
    std::vector<CodeObjectUnit> parts(units_.size());
    std::vector<std::string> logs(units_.size());
    std::vector<std::exception_ptr> errors(units_.size());
    std::atomic<size_t> next{0};
    auto work = [&] {
      for (size_t u; (u = next++) < units_.size();) {
        try {
          for (const EmittedKernel& k : units_[u].kernels) parts[u].kernels.push_back(k.name);
          CompiledCode code = compile_cached(compiler_, units_[u].source, name_hint + "_unit" + std::to_string(u),
                                             target, options, std::string(codegen_version()), cache_, nullptr,
                                             nullptr, parts[u].kernels);
          parts[u].binary = std::move(code.binary);
          logs[u] = std::move(code.log);
        } catch (...) {
          errors[u] = std::current_exception();
        }
      }
    };
    const size_t threads = std::min<size_t>(units_.size(), std::max(1u, std::thread::hardware_concurrency()));
    std::vector<std::thread> pool;
    for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
    work();
    for (std::thread& t : pool) t.join();
    for (const std::exception_ptr& e : errors)
      if (e) std::rethrow_exception(e);
    CompiledCode out;
    if (host) {
      std::vector<std::vector<char>> objects;
      for (CodeObjectUnit& p : parts) objects.push_back(std::move(p.binary));
      out = link_host_objects(objects, name_hint);
    } else {
      out.binary = pack_code_object_units(parts);
      for (size_t u = 0; u < logs.size(); ++u)
        if (!logs[u].empty()) out.log += (out.log.empty() ? "" : "\n") + ("unit " + std::to_string(u) + ": ") + logs[u];
    }
    out.compile_ms = ms_since(start);
    return out;
  }

 private:
  Compiler& compiler_;
  const EmittedModule& module_;
  std::vector<EmittedModule> units_;
  CodeObjectCache* cache_;
};

/// Compiles `module` through the cache of `options` into every graph of `graphs` (which it holds the kernels of),
/// then writes their graph entries under `graph_keys`.
void compile_module(const EmittedModule& module, const CompileOptions& options, Compiler& compiler,
                    const std::vector<CompiledGraph*>& graphs, const std::vector<std::string>& graph_keys) {
  auto start = std::chrono::steady_clock::now();
  std::vector<std::string> kernel_names;
  for (const EmittedKernel& k : module.kernels) kernel_names.push_back(k.name);
  bool hit = false;
  std::string key;
  std::optional<UnitCompiler> units;
  size_t unit_bytes = options.max_gpu_unit_kernel_bytes;
  if (options.target.kind == TargetKind::Cpu)
    unit_bytes = options.max_unit_kernel_bytes;
  else if (unit_bytes == 0)
    unit_bytes = options.target.kind == TargetKind::Nvidia ? kNvidiaUnitKernelBytes : kAmdUnitKernelBytes;
  if (std::vector<EmittedModule> parts = split_module(module, unit_bytes); parts.size() > 1)
    units.emplace(compiler, module, std::move(parts), options.cache);
  CompiledCode code = compile_cached(units ? static_cast<Compiler&>(*units) : compiler, module.source,
                                     options.graph_name, options.target, {}, std::string(codegen_version()),
                                     options.cache, &hit, &key, kernel_names);
  double ms = hit ? 0 : ms_since(start);
  for (size_t i = 0; i < graphs.size(); ++i) {
    CompiledGraph& g = *graphs[i];
    g.code = code;
    g.cache_hit = hit;
    g.cache_key = key;
    g.compile_ms = ms / static_cast<double>(graphs.size());  // each graph's share of the one call
    g.stage_ms.emplace_back("compile", g.compile_ms);
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

}  // namespace hi
