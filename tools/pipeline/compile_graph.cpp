#include "tools/pipeline/compile_graph.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "frontend/graph_json.h"
#include "lowering/fuse_kernels.h"
#include "lowering/plan_memory.h"

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
  fuse_kernels(p);
  dump("kernels.txt", p.str());
  plan_memory(p);
  dump("plan.txt", plan_text(p));
  out.module = emit_hip(p, options.target, options.graph_name);
  dump("module." + options.target.file_tag() + ".hip", out.module.source);
  out.program = std::move(p);
  out.lower_ms = ms_since(start);
  return out;
}

CompiledGraph compile_graph(const Graph& graph, const CompileOptions& options) {
  CompiledGraph out = generate(graph, options);
  std::unique_ptr<Compiler> compiler = compiler_for(options.target);
  auto start = std::chrono::steady_clock::now();
  out.code = compile_cached(*compiler, out.module.source, options.graph_name, options.target, {},
                            std::string(codegen_version()), options.cache, &out.cache_hit);
  out.compile_ms = out.cache_hit ? 0 : ms_since(start);
  return out;
}

GraphRunner::GraphRunner(std::shared_ptr<const CompiledGraph> graph, Device& device)
    : graph_(std::move(graph)), device_(device) {
  std::vector<KernelInfo> infos;
  for (const EmittedKernel& k : graph_->module.kernels) infos.push_back({k.name, k.needs_sync});
  module_ = device_.load(graph_->code.binary, infos);
  if (graph_->program.workspace_bytes > 0) workspace_ = device_.alloc(graph_->program.workspace_bytes);
}

GraphRunner::~GraphRunner() {
  if (workspace_) device_.free(workspace_);
}

void GraphRunner::run(const std::vector<void*>& inputs, const std::vector<void*>& outputs, void* stream) {
  const LoopProgram& p = graph_->program;
  if (inputs.size() != p.inputs.size() || outputs.size() != p.outputs.size())
    throw std::invalid_argument("GraphRunner::run: graph takes " + std::to_string(p.inputs.size()) + " inputs and " +
                                std::to_string(p.outputs.size()) + " outputs, got " + std::to_string(inputs.size()) +
                                " and " + std::to_string(outputs.size()));
  std::vector<void*> pointer(p.buffers.size(), nullptr);
  for (size_t i = 0; i < inputs.size(); ++i) pointer[p.inputs[i]] = inputs[i];
  for (size_t i = 0; i < outputs.size(); ++i) pointer[p.outputs[i]] = outputs[i];
  for (size_t b = 0; b < p.buffers.size(); ++b)
    if (p.workspace_offsets[b] >= 0) pointer[b] = static_cast<char*>(workspace_) + p.workspace_offsets[b];

  for (const EmittedKernel& k : graph_->module.kernels) {
    std::vector<void*> values(k.params.size());
    std::vector<void*> args(k.params.size());
    for (size_t i = 0; i < k.params.size(); ++i) {
      const KernelParam& kp = k.params[i];
      if (kp.kind == KernelParam::Kind::Size)
        throw std::invalid_argument("GraphRunner::run: symbolic size '" + kp.symbol + "' needs a value");
      values[i] = pointer[kp.buffer];
      args[i] = &values[i];
    }
    auto grid = simplify(k.grid, p.size_ranges).as_const();
    if (!grid) throw std::invalid_argument("GraphRunner::run: kernel " + k.name + " has a symbolic grid");
    if (*grid == 0) continue;
    module_->launch(k.name, Dim3{static_cast<unsigned>(*grid), 1, 1}, Dim3{static_cast<unsigned>(k.block), 1, 1}, 0,
                    args.data(), stream);
  }
}

}  // namespace hi
