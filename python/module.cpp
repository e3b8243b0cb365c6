// hipinductor._C: the compiler pipeline (tools/pipeline/compile_graph.h) and the cpu device, for the Python package.
//
// Python hands over a graph as hipinductor-graph JSON (docs/graph-format.md) and gets a CompiledGraph back; running
// it takes raw device pointers (tensor.data_ptr()), so this module never depends on libtorch. The GIL is released
// around everything slow (lowering, compilation, kernel launches). C++ errors become Python exceptions that keep the
// one-line message naming the node: GraphFormatError, LoweringError, CompileError (all RuntimeError subclasses),
// std::invalid_argument → ValueError.
//
// Process-wide state, all created on first use and never destroyed (worker threads and loaded code objects must
// outlive every CompiledGraph, including those collected during interpreter shutdown):
//   - one CodeObjectCache per cache directory ($HIPINDUCTOR_CACHE_DIR is re-read on every compile, so tests and
//     users may point it elsewhere at any time);
//   - one CpuDevice per cpu target id ("cpu", "cpu-w64"), whose worker pool starts with the first run.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "codegen/emit_hip.h"
#include "codegen/target.h"
#include "frontend/graph_json.h"
#include "lowering/lower_graph.h"
#include "runtime/code_object_cache.h"
#include "runtime/compiler.h"
#include "runtime/cpu_device.h"
#include "tools/pipeline/compile_graph.h"

#ifndef HIPINDUCTOR_VERSION
#define HIPINDUCTOR_VERSION "0.0.0"
#endif

namespace py = pybind11;

namespace {

/// The cache for the current default directory. Entries are only ever added, so a CodeObjectCache handed out
/// earlier stays valid while another thread compiles against a different directory.
hi::CodeObjectCache* process_cache() {
  static std::mutex mutex;
  static auto* caches = new std::map<std::filesystem::path, std::unique_ptr<hi::CodeObjectCache>>();
  std::filesystem::path directory = hi::CodeObjectCache::default_directory();
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<hi::CodeObjectCache>& cache = (*caches)[directory];
  if (!cache) cache = std::make_unique<hi::CodeObjectCache>(directory);
  return cache.get();
}

/// The cpu device for a cpu target, created on first use (it starts worker threads).
hi::Device& process_cpu_device(const hi::Target& target) {
  static std::mutex mutex;
  static auto* devices = new std::map<std::string, std::unique_ptr<hi::CpuDevice>>();
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<hi::CpuDevice>& device = (*devices)[target.id()];
  if (!device) device = std::make_unique<hi::CpuDevice>(target);
  return *device;
}

/// One compiled graph as Python sees it: the immutable compile result plus, once it has run, a runner whose
/// workspace is shared by all calls (hence the mutex: concurrent runs of one graph are serialized).
class PyCompiledGraph {
 public:
  PyCompiledGraph(std::shared_ptr<const hi::CompiledGraph> graph, std::string name)
      : graph_(std::move(graph)), name_(std::move(name)) {}

  const hi::CompiledGraph& graph() const { return *graph_; }
  const std::string& name() const { return name_; }

  /// Called without the GIL.
  void run(const std::vector<uintptr_t>& inputs, const std::vector<uintptr_t>& outputs, uintptr_t stream) {
    const hi::Target& target = graph_->module.target;
    if (target.kind != hi::TargetKind::Cpu)
      throw std::runtime_error("no " + target.id() +
                               " device in this build / process: the GPU runtime is not implemented yet");
    std::vector<void*> in(inputs.size()), out(outputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) in[i] = reinterpret_cast<void*>(inputs[i]);
    for (size_t i = 0; i < outputs.size(); ++i) out[i] = reinterpret_cast<void*>(outputs[i]);
    std::lock_guard<std::mutex> lock(mutex_);
    if (!runner_) runner_ = std::make_unique<hi::GraphRunner>(graph_, process_cpu_device(target));
    runner_->run(in, out, reinterpret_cast<void*>(stream));
  }

 private:
  std::shared_ptr<const hi::CompiledGraph> graph_;
  std::string name_;
  std::mutex mutex_;
  std::unique_ptr<hi::GraphRunner> runner_;
};

std::unique_ptr<PyCompiledGraph> compile(const std::string& graph_json, const std::string& target,
                                         const std::string& name, const std::optional<std::string>& debug_dir,
                                         bool use_cache) {
  hi::CompileOptions options;
  options.target = hi::parse_target(target);
  options.graph_name = name;
  if (debug_dir) options.debug_dir = *debug_dir;
  if (use_cache) options.cache = process_cache();
  hi::Graph graph = hi::read_graph_json(graph_json, name);
  auto compiled = std::make_shared<const hi::CompiledGraph>(hi::compile_graph(graph, options));
  return std::make_unique<PyCompiledGraph>(std::move(compiled), name);
}

/// NAME from the first `node 'NAME'` in an error message, or None.
py::object node_from_message(const std::string& message) {
  const std::string marker = "node '";
  size_t begin = message.find(marker);
  if (begin == std::string::npos) return py::none();
  begin += marker.size();
  size_t end = message.find('\'', begin);
  if (end == std::string::npos) return py::none();
  return py::str(message.substr(begin, end - begin));
}

/// Raises `type(message)` with extra attributes set on the instance.
void set_error(py::handle type, const std::string& message,
               const std::vector<std::pair<const char*, py::object>>& attrs) {
  py::object error = type(message);
  for (const auto& [key, value] : attrs) error.attr(key) = value;
  PyErr_SetObject(type.ptr(), error.ptr());
}

}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "hipinductor's C++ core: graph JSON -> HIP kernels -> code objects, and the cpu device that runs them";

  // Leaked on purpose: exception types live as long as the interpreter.
  static py::handle graph_format_error =
      py::exception<hi::GraphFormatError>(m, "GraphFormatError", PyExc_RuntimeError).release();
  static py::handle lowering_error = py::exception<hi::LoweringError>(m, "LoweringError", PyExc_RuntimeError).release();
  static py::handle compile_error = py::exception<hi::CompileError>(m, "CompileError", PyExc_RuntimeError).release();
  py::setattr(graph_format_error, "__doc__",
              py::str("A graph JSON that cannot be read; .node names the node at fault (or None)."));
  py::setattr(lowering_error, "__doc__",
              py::str("A graph the compiler cannot lower; .node names the node at fault (or None)."));
  py::setattr(compile_error, "__doc__",
              py::str("Emitted source the compiler rejected; .kernel names it, .log holds the compiler's output."));

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const hi::GraphFormatError& e) {
      set_error(graph_format_error, e.what(), {{"node", node_from_message(e.what())}});
    } catch (const hi::LoweringError& e) {
      set_error(lowering_error, e.what(), {{"node", node_from_message(e.what())}});
    } catch (const hi::CompileError& e) {
      set_error(compile_error, e.what(), {{"kernel", py::str(e.name_hint())}, {"log", py::str(e.log())}});
    } catch (const std::invalid_argument& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });

  m.def(
      "version", [] { return std::string(HIPINDUCTOR_VERSION); }, "The hipinductor version: \"0.1.0\".");
  m.def(
      "codegen_version", [] { return std::string(hi::codegen_version()); },
      "Version of the code generator's output and preludes (part of every cache key).");
  m.def("lowered_ops", &hi::lowered_ops, "Every ATen overload with a lowering (\"aten.add.Tensor\", ...), sorted.");
  m.def("has_lowering", &hi::has_lowering, py::arg("target"),
        "True when the overload `target` (\"aten.add.Tensor\") has a lowering.");
  m.def(
      "parse_target", [](const std::string& name) { return hi::parse_target(name).id(); }, py::arg("name"),
      "Canonical id of a target name (\"gfx942:sramecc+:xnack-\", \"sm_90\", \"cpu\", \"cpu-w64\"); ValueError "
      "for names that are not targets.");
  m.def(
      "cache_dir", [] { return hi::CodeObjectCache::default_directory().string(); },
      "The code-object cache directory compile() uses now ($HIPINDUCTOR_CACHE_DIR, else "
      "$XDG_CACHE_HOME/hipinductor, else ~/.cache/hipinductor).");

  m.def("compile", &compile, py::arg("graph_json"), py::arg("target") = "cpu", py::arg("name") = "graph",
        py::arg("debug_dir") = py::none(), py::arg("use_cache") = true, py::call_guard<py::gil_scoped_release>(),
        "Compiles a hipinductor-graph JSON document for `target`: lowering, fusion, memory planning, HIP emission "
        "and compilation, through the on-disk code-object cache when use_cache. `name` starts error messages and "
        "names debug dumps (written under debug_dir, or $HIPINDUCTOR_DEBUG_DIR, when set). Raises "
        "GraphFormatError, LoweringError, CompileError, ValueError (bad target).");

  py::class_<PyCompiledGraph>(m, "CompiledGraph",
                              "A compiled graph: its HIP source, kernels and code object, runnable on the cpu device.")
      .def_property_readonly("name", &PyCompiledGraph::name)
      .def_property_readonly("target", [](const PyCompiledGraph& g) { return g.graph().module.target.id(); })
      .def_property_readonly(
          "source", [](const PyCompiledGraph& g) { return g.graph().module.source; },
          "The whole HIP translation unit, preludes included.")
      .def_property_readonly(
          "kernels_text", [](const PyCompiledGraph& g) { return hi::kernels_text(g.graph().module); },
          "Only the kernels (no preamble or preludes).")
      .def_property_readonly("kernel_names",
                             [](const PyCompiledGraph& g) {
                               std::vector<std::string> names;
                               for (const hi::EmittedKernel& k : g.graph().module.kernels) names.push_back(k.name);
                               return names;
                             })
      .def_property_readonly("num_kernels", [](const PyCompiledGraph& g) { return g.graph().module.kernels.size(); })
      .def_property_readonly(
          "lower_ms", [](const PyCompiledGraph& g) { return g.graph().lower_ms; },
          "Lowering, fusion, planning and codegen, in milliseconds.")
      .def_property_readonly(
          "compile_ms", [](const PyCompiledGraph& g) { return g.graph().compile_ms; },
          "The compiler call in milliseconds (0 on a cache hit).")
      .def_property_readonly("cache_hit", [](const PyCompiledGraph& g) { return g.graph().cache_hit; })
      .def_property_readonly(
          "compile_log", [](const PyCompiledGraph& g) { return g.graph().code.log; },
          "Compiler warnings; empty when there were none or on a cache hit.")
      .def_property_readonly("workspace_bytes",
                             [](const PyCompiledGraph& g) { return g.graph().program.workspace_bytes; })
      .def_property_readonly(
          "loop_ir", [](const PyCompiledGraph& g) { return g.graph().program.str(); },
          "The lowered, fused, planned loop program as text.")
      .def_property_readonly("num_inputs", [](const PyCompiledGraph& g) { return g.graph().program.inputs.size(); })
      .def_property_readonly("num_outputs", [](const PyCompiledGraph& g) { return g.graph().program.outputs.size(); })
      .def("run", &PyCompiledGraph::run, py::arg("inputs"), py::arg("outputs"), py::arg("stream") = 0,
           py::call_guard<py::gil_scoped_release>(),
           "Runs the kernels in order. inputs / outputs: data pointers (tensor.data_ptr()) of each graph input's and "
           "output's storage, laid out as the graph's meta says; the caller owns them and must keep them alive for "
           "the call. Synchronous on the cpu device. Concurrent runs of one CompiledGraph are serialized.")
      .def("__repr__", [](const PyCompiledGraph& g) {
        return "<hipinductor._C.CompiledGraph '" + g.name() + "' target=" + g.graph().module.target.id() +
               " kernels=" + std::to_string(g.graph().module.kernels.size()) +
               (g.graph().cache_hit ? " (cached)>" : ">");
      });
}
