// hipinductor._C: the compiler pipeline (pipeline/compile_graph.h) and the devices that run its output (the cpu
// device, the CUDA driver device, the HIP runtime device), for the Python package.
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
//   - one CpuDevice per cpu target id ("cpu", "cpu-w64"), whose worker pool starts with the first run;
//   - one GPU device per (kind, ordinal) (open_gpu_device: CudaDevice / HipDevice), opened by the first gpu_target()
//     or run() that needs it. A device that fails to open is not remembered: the next call tries again and raises
//     the device's message (no driver, no GPU) as RuntimeError.
// On GPUs, run() launches on the stream it is given (PyTorch's current stream) and returns without waiting; the
// caller's workspace pointer (from PyTorch's allocator, in that stream's order) is used when given.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
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
#include "ir/op_schema.h"
#include "lowering/lower_graph.h"
#include "lowering/op_registry.h"
#include "runtime/amd_code_object.h"
#include "runtime/code_object_cache.h"
#include "runtime/compiler.h"
#include "runtime/cpu_device.h"
#include "runtime/gpu_devices.h"
#include "pipeline/compiled_graph_json.h"
#include "pipeline/graph_runner.h"

#ifndef HIPINDUCTOR_VERSION
#define HIPINDUCTOR_VERSION "0.0.0"
#endif

namespace py = pybind11;

namespace {

/// Bytes of the kernels' widest vector access: the code generator moves vector groups in chunks of at most 16 bytes
/// (hi_vec_layout in codegen/preludes/common.h; KernelPrinter::vector_fn takes the unchecked access where the chunk
/// is provably aligned), so a graph promising this "align" lets every vector access of its inputs skip the check.
constexpr int64_t kVectorAlignmentBytes = 16;

/// Qualified names of the op-schema table's overloads, those with `is_view` only when `views_only`.
std::vector<std::string> schema_names(bool views_only) {
  std::vector<std::string> names;
  for (const hi::OpSchema& s : hi::all_op_schemas())
    if (!views_only || s.is_view) names.push_back(s.qualified_name);
  std::sort(names.begin(), names.end());
  return names;
}

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

/// The GPU device `ordinal` of `kind`, opened on first use and kept for the life of the process.
hi::Device& process_gpu_device(hi::TargetKind kind, int ordinal) {
  static std::mutex mutex;
  static auto* devices = new std::map<std::pair<hi::TargetKind, int>, std::unique_ptr<hi::Device>>();
  std::lock_guard<std::mutex> lock(mutex);
  auto found = devices->find({kind, ordinal});
  if (found != devices->end()) return *found->second;
  std::unique_ptr<hi::Device> device = hi::open_gpu_device(kind, ordinal);  // throws: nothing is remembered
  std::unique_ptr<hi::Device>& slot = (*devices)[{kind, ordinal}];
  slot = std::move(device);
  return *slot;
}

py::dict facts_dict(const hi::GpuKernelFacts& k) {
  py::dict d;
  d["name"] = k.name;
  d["registers"] = k.registers;
  d["static_shared_bytes"] = k.static_shared_bytes;
  d["local_bytes"] = k.local_bytes;
  d["max_threads_per_block"] = k.max_threads_per_block;
  return d;
}

/// The code object's metadata, with the keys of facts_dict too (registers = VGPRs, static_shared_bytes = LDS,
/// local_bytes = scratch, max_threads_per_block = the flat workgroup size bound).
py::dict facts_dict(const hi::AmdKernelFacts& k) {
  py::dict d =
      facts_dict(hi::GpuKernelFacts{k.name, k.vgpr_count, k.lds_bytes, k.scratch_bytes, k.max_flat_workgroup_size});
  d["vgpr_count"] = k.vgpr_count;
  d["sgpr_count"] = k.sgpr_count;
  d["agpr_count"] = k.agpr_count;
  d["lds_bytes"] = k.lds_bytes;
  d["scratch_bytes"] = k.scratch_bytes;
  d["vgpr_spill_count"] = k.vgpr_spill_count;
  d["sgpr_spill_count"] = k.sgpr_spill_count;
  d["wavefront_size"] = k.wavefront_size;
  d["max_flat_workgroup_size"] = k.max_flat_workgroup_size;
  d["waves_per_simd"] = k.waves_per_simd;
  return d;
}

/// One compiled graph as Python sees it: the immutable compile result plus, once it has run, one runner per device
/// ordinal, whose own workspace (used when the caller passes none) is shared by all calls on it (hence the mutex:
/// concurrent runs of one graph are serialized).
class PyCompiledGraph {
 public:
  PyCompiledGraph(std::shared_ptr<const hi::CompiledGraph> graph, std::string name)
      : graph_(std::move(graph)), name_(std::move(name)) {}

  const hi::CompiledGraph& graph() const { return *graph_; }
  const std::string& name() const { return name_; }

  /// Called without the GIL: loads the code object on `device` (0 for the cpu device) as run's first call there
  /// would, so that a graph compiled ahead of its first call (a background variant) does not load on the call's path.
  void prepare(int device) {
    std::lock_guard<std::mutex> lock(mutex_);
    runner_for(device);
  }

  /// Called without the GIL.
  void run(const std::vector<uintptr_t>& inputs, const std::vector<uintptr_t>& outputs, uintptr_t stream,
           uintptr_t workspace, int device, bool autotune, const std::vector<int64_t>& sizes) {
    std::vector<void*> in(inputs.size()), out(outputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) in[i] = reinterpret_cast<void*>(inputs[i]);
    for (size_t i = 0; i < outputs.size(); ++i) out[i] = reinterpret_cast<void*>(outputs[i]);
    std::lock_guard<std::mutex> lock(mutex_);
    std::unique_ptr<hi::GraphRunner>& runner = runner_for(device);
    if (autotune)  // tunes on the runner's first call, then runs as run() does
      runner->autotune(in, out, sizes, reinterpret_cast<void*>(workspace), reinterpret_cast<void*>(stream));
    else
      runner->run(in, out, sizes, reinterpret_cast<void*>(workspace), reinterpret_cast<void*>(stream));
  }

  /// Workspace bytes for `sizes` (one value per symbol), evaluated from the plan without a runner.
  int64_t workspace_bytes_for(const std::vector<int64_t>& sizes) const {
    const hi::LoopProgram& p = graph_->program;
    std::optional<int64_t> bytes = hi::evaluate(p.workspace_bytes, p.bind_symbols(sizes));
    if (!bytes) throw std::invalid_argument("workspace_bytes_for: cannot evaluate " + p.workspace_bytes.str());
    return *bytes;
  }

  /// (kernel, grid) per launch of the runner on `device`; empty before it ran there.
  std::vector<std::pair<std::string, unsigned>> launch_grids(int device) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = runners_.find(graph_->module.target.kind == hi::TargetKind::Cpu ? 0 : device);
    return it != runners_.end() && it->second ? it->second->grids() : std::vector<std::pair<std::string, unsigned>>{};
  }

  /// The device to run on; a GPU device that cannot be opened is reported naming the target, then the device's
  /// reason ("no sm_90 device in this build / process: the CUDA driver (libcuda) is not available: ...").
  static hi::Device& device_for(const hi::Target& target, int ordinal) {
    if (target.kind == hi::TargetKind::Cpu) return process_cpu_device(target);
    try {
      return process_gpu_device(target.kind, ordinal);
    } catch (const std::runtime_error& e) {
      throw std::runtime_error("no " + target.id() + " device in this build / process: " + e.what());
    }
  }

  /// See the kernel_facts property's docstring.
  py::list kernel_facts() {
    py::list facts;
    const hi::Target& target = graph_->module.target;
    if (target.kind == hi::TargetKind::Amd) {
      std::vector<hi::AmdKernelFacts> amd;
      {
        py::gil_scoped_release release;
        amd = hi::read_amd_kernel_facts(graph_->code.binary, target);
      }
      for (const hi::AmdKernelFacts& k : amd) facts.append(facts_dict(k));
      return facts;
    }
    std::vector<hi::GpuKernelFacts> loaded;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mutex_);
      for (const auto& [ordinal, runner] : runners_)
        if (runner) {
          loaded = runner->kernel_facts();
          break;
        }
    }
    for (const hi::GpuKernelFacts& k : loaded) facts.append(facts_dict(k));
    return facts;
  }

 private:
  std::shared_ptr<const hi::CompiledGraph> graph_;
  std::string name_;
  std::mutex mutex_;
  /// The runner on `device` (0 for the cpu device), made on first use; mutex_ held.
  std::unique_ptr<hi::GraphRunner>& runner_for(int device) {
    const hi::Target& target = graph_->module.target;
    const int ordinal = target.kind == hi::TargetKind::Cpu ? 0 : device;
    std::unique_ptr<hi::GraphRunner>& runner = runners_[ordinal];
    if (!runner) runner = std::make_unique<hi::GraphRunner>(graph_, device_for(target, ordinal));
    return runner;
  }
  std::map<int, std::unique_ptr<hi::GraphRunner>> runners_;  ///< by device ordinal (0 for the cpu device)
};

hi::CompileOptions compile_options(const hi::Target& target, const std::string& name,
                                   const std::optional<std::string>& debug_dir, bool use_cache) {
  hi::CompileOptions options;
  options.target = target;
  options.graph_name = name;
  if (debug_dir) options.debug_dir = *debug_dir;
  if (use_cache) options.cache = process_cache();
  return options;
}

std::unique_ptr<PyCompiledGraph> compile(const std::string& graph_json, const std::string& target,
                                         const std::string& name, const std::optional<std::string>& debug_dir,
                                         bool use_cache) {
  hi::Graph graph = hi::read_graph_json(graph_json, name);
  auto compiled = std::make_shared<const hi::CompiledGraph>(
      hi::compile_graph(graph, compile_options(hi::parse_target(target), name, debug_dir, use_cache)));
  return std::make_unique<PyCompiledGraph>(std::move(compiled), name);
}

std::vector<std::unique_ptr<PyCompiledGraph>> compile_many(const std::vector<std::string>& graph_jsons,
                                                          const std::string& target,
                                                          const std::vector<std::string>& names,
                                                          const std::optional<std::string>& debug_dir, bool use_cache) {
  if (names.size() != graph_jsons.size())
    throw std::invalid_argument("compile_many: " + std::to_string(graph_jsons.size()) + " graphs but " +
                                std::to_string(names.size()) + " names");
  const hi::Target t = hi::parse_target(target);
  std::vector<hi::Graph> graphs;
  std::vector<hi::CompileOptions> options;
  for (size_t i = 0; i < graph_jsons.size(); ++i) {
    options.push_back(compile_options(t, names[i], debug_dir, use_cache));
    graphs.push_back(hi::read_graph_json(graph_jsons[i], names[i]));
  }
  std::vector<std::unique_ptr<PyCompiledGraph>> out;
  for (hi::CompiledGraph& g : hi::compile_graphs(graphs, options))
    out.push_back(std::make_unique<PyCompiledGraph>(std::make_shared<const hi::CompiledGraph>(std::move(g)),
                                                    names[out.size()]));
  return out;
}

/// NAME from the first `node 'NAME'` in an error message, or None.
// A CompiledGraph rebuilt from a package's record of it and its code object: nothing is lowered or compiled (what
// hipinductor.load_package runs).
std::unique_ptr<PyCompiledGraph> load_compiled(const std::string& record, const py::bytes& code_object,
                                               const std::string& source, const std::string& target,
                                               const std::string& name) {
  std::string_view bytes = code_object;
  hi::CompiledGraph graph;
  try {
    graph = hi::compiled_graph_from_json(nlohmann::json::parse(record), hi::parse_target(target));
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument("compiled graph record of '" + name + "' is malformed: " + e.what());
  }
  graph.module.source = source;
  graph.code.binary.assign(bytes.begin(), bytes.end());
  return std::make_unique<PyCompiledGraph>(std::make_shared<const hi::CompiledGraph>(std::move(graph)), name);
}

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
  m.doc() = "hipinductor's C++ core: graph JSON -> HIP kernels -> code objects, and the devices that run them";

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
      "schema_ops", [] { return schema_names(false); },
      "Every ATen overload the C++ op-schema table has (\"aten.add.Tensor\", ...), sorted: the ops whose facts "
      "(view_ops) the C++ side owns.");
  m.def(
      "view_ops", [] { return schema_names(true); },
      "The overloads of schema_ops() that are views: their schema returns an alias of their first argument "
      "(`-> Tensor(a)`, `-> Tensor(a)[]`), sorted.");
  m.attr("INDEX32_LIMIT") = hi::kIndex32Limit;
  m.def(
      "vector_alignment", [] { return kVectorAlignmentBytes; },
      "Bytes of the kernels' widest vector access (16): the \"align\" a graph promises (graph format version 2) so "
      "that the kernels need no run-time alignment checks.");
  m.def(
      "parse_target", [](const std::string& name) { return hi::parse_target(name).id(); }, py::arg("name"),
      "Canonical id of a target name (\"gfx942:sramecc+:xnack-\", \"sm_90\", \"cpu\", \"cpu-w64\"); ValueError "
      "for names that are not targets.");
  m.def(
      "cache_dir", [] { return hi::CodeObjectCache::default_directory().string(); },
      "The code-object cache directory compile() uses now ($HIPINDUCTOR_CACHE_DIR, else "
      "$XDG_CACHE_HOME/hipinductor, else ~/.cache/hipinductor).");

  m.def(
      "gpu_target",
      [](const std::string& kind, int ordinal) {
        return process_gpu_device(hi::gpu_kind_from_name(kind), ordinal).target().id();
      },
      py::arg("kind") = "cuda", py::arg("ordinal") = 0, py::call_guard<py::gil_scoped_release>(),
      "Target id of GPU `ordinal` of `kind` (\"cuda\" or \"hip\"): \"sm_90\", \"gfx942:sramecc+:xnack-\". Opens "
      "the device on first use and keeps it. Raises RuntimeError with the device's message when it cannot be opened "
      "(no driver library, no GPU), ValueError for an unknown kind.");
  m.def(
      "gpu_info",
      [](const std::string& kind, int ordinal) {
        hi::Device* device = nullptr;
        {
          py::gil_scoped_release release;
          device = &process_gpu_device(hi::gpu_kind_from_name(kind), ordinal);
        }
        py::dict info;
        info["name"] = device->name();
        info["target"] = device->target().id();
        info["multiprocessors"] = device->multiprocessor_count();
        return info;
      },
      py::arg("kind") = "cuda", py::arg("ordinal") = 0,
      "{name, target, multiprocessors (SMs or CUs)} of GPU `ordinal` of `kind`; raises as gpu_target does.");

  m.def("compile", &compile, py::arg("graph_json"), py::arg("target") = "cpu", py::arg("name") = "graph",
        py::arg("debug_dir") = py::none(), py::arg("use_cache") = true, py::call_guard<py::gil_scoped_release>(),
        "Compiles a hipinductor-graph JSON document for `target`: lowering, fusion, memory planning, HIP emission "
        "and compilation, through the on-disk code-object cache when use_cache. `name` starts error messages and "
        "names debug dumps (written under debug_dir, or $HIPINDUCTOR_DEBUG_DIR, when set). Raises "
        "GraphFormatError, LoweringError, CompileError, ValueError (bad target).");

  m.def("load_compiled", &load_compiled, py::arg("record"), py::arg("code_object"), py::arg("source"),
        py::arg("target"), py::arg("name"),
        "A CompiledGraph from `record` (CompiledGraph.record's JSON) and `code_object` (its bytes), for `target`, "
        "without lowering or compiling anything: what ahead-of-time packages load. ValueError for a malformed "
        "record or target.");
  m.def(
      "code_runs_on",
      [](const std::string& code, const std::string& device) {
        return hi::code_runs_on(hi::parse_target(code), hi::parse_target(device));
      },
      py::arg("code"), py::arg("device"),
      "Whether a code object compiled for target `code` runs on a device whose target is `device` (same NVIDIA "
      "major with a minor at least the code's; same AMD processor with every feature the code states; same cpu "
      "warp).");

  m.def(
      "warm_up", [](const std::string& target) { hi::warm_up_compiler(hi::parse_target(target)); }, py::arg("target"),
      py::call_guard<py::gil_scoped_release>(),
      "Starts NVRTC for an NVIDIA `target` with one trivial compile, so that its once-per-process start is paid "
      "ahead of the first real compile; the torch.compile backend runs it in a thread while AOTAutograd traces. "
      "Does nothing for other targets. Raises as compile() does when the compiler is missing or fails.");

  m.def("compile_many", &compile_many, py::arg("graph_jsons"), py::arg("target"), py::arg("names"),
        py::arg("debug_dir") = py::none(), py::arg("use_cache") = true, py::call_guard<py::gil_scoped_release>(),
        "Compiles several graph JSON documents for one `target` as compile() does each, but the kernels of those "
        "that miss the cache go to the compiler in one translation unit, in one call (a torch.compile graph's "
        "segments). Returns a CompiledGraph per document, in order; raises as compile() does.");

  py::class_<PyCompiledGraph>(
      m, "CompiledGraph", "A compiled graph: its HIP source, kernels and code object, runnable on its target's device.")
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
      .def_property_readonly(
          "stage_ms",
          [](const PyCompiledGraph& g) {
            py::dict d;
            for (const auto& [stage, ms] : g.graph().stage_ms) d[py::str(stage)] = ms;
            return d;
          },
          "{step: milliseconds} of this compile, in pipeline order: lower, split, fuse, plan_memory, emit, compile "
          "(empty on a graph-entry hit, which skipped them).")
      .def_property_readonly("cache_hit", [](const PyCompiledGraph& g) { return g.graph().cache_hit; })
      .def_property_readonly(
          "compile_log", [](const PyCompiledGraph& g) { return g.graph().code.log; },
          "Compiler warnings; empty when there were none or on a cache hit.")
      .def_property_readonly(
          "workspace_bytes",
          [](const PyCompiledGraph& g) {
            std::optional<int64_t> bytes = g.graph().program.workspace_bytes.as_const();
            if (!bytes)
              throw std::invalid_argument("CompiledGraph.workspace_bytes: the graph's workspace depends on its size "
                                          "symbols (" + g.graph().program.workspace_bytes.str() +
                                          "); use workspace_bytes_for(sizes)");
            return *bytes;
          },
          "Workspace bytes of a graph without size symbols; ValueError for one with symbols.")
      .def_property_readonly(
          "index32", [](const PyCompiledGraph& g) { return g.graph().program.index32; },
          "Whether the graph was promised that every binding keeps its extents below INDEX32_LIMIT (\"index32\", "
          "graph format version 4), so that its kernels index in 32 bits; bindings that break it are refused.")
      .def_property_readonly(
          "symbols", [](const PyCompiledGraph& g) { return g.graph().program.symbols(); },
          "The graph's size symbols (['s0', 's1']), in the order run(sizes=...) and workspace_bytes_for take their "
          "values; empty for a graph with concrete sizes.")
      .def_property_readonly(
          "symbol_divisors",
          [](const PyCompiledGraph& g) {
            std::vector<int64_t> out;
            for (const std::string& s : g.graph().program.symbols()) {
              int64_t divisor = 1;
              for (const auto& [name, q] : g.graph().program.quotients)
                if (q.of == s) divisor = q.divisor;
              out.push_back(divisor);
            }
            return out;
          },
          "The divisor each symbol was promised to have (the graph's 'divisible'; 1 for none), in `symbols` order. "
          "Every symbol is at least 1; run() refuses values that break either with ValueError.")
      .def("workspace_bytes_for", &PyCompiledGraph::workspace_bytes_for, py::arg("sizes"),
           "Workspace bytes for the size symbols' values `sizes` (in `symbols` order); for a graph without symbols, "
           "sizes=[] gives workspace_bytes.")
      .def_property_readonly(
          "loop_ir", [](const PyCompiledGraph& g) { return g.graph().program.str(); },
          "The lowered, fused, planned loop program as text.")
      .def_property_readonly(
          "record", [](const PyCompiledGraph& g) { return hi::compiled_graph_to_json(g.graph()).dump(); },
          "What running the graph needs besides its code object, as JSON (buffers, workspace plan, kernels and their "
          "launches; pipeline/compiled_graph_json.h): load_compiled's input. ValueError for graphs with symbolic "
          "sizes.")
      .def_property_readonly(
          "code_object",
          [](const PyCompiledGraph& g) {
            const std::vector<char>& b = g.graph().code.binary;
            return py::bytes(b.data(), b.size());
          },
          "The code object's bytes (.hsaco, .cubin or the cpu device's .so; for a GPU module compiled as several "
          "units, a units container holding each unit's: runtime/code_object_units.h).")
      .def_property_readonly("num_inputs", [](const PyCompiledGraph& g) { return g.graph().program.inputs.size(); })
      .def_property_readonly("num_outputs", [](const PyCompiledGraph& g) { return g.graph().program.outputs.size(); })
      .def("launch_grids", &PyCompiledGraph::launch_grids, py::arg("device") = 0,
           py::call_guard<py::gil_scoped_release>(),
           "[(kernel, blocks)] of each launch on GPU `device` (0 for the cpu device), as autotuning or the default "
           "grid cap left them; empty before the graph ran there.")
      .def("prepare", &PyCompiledGraph::prepare, py::arg("device") = 0, py::call_guard<py::gil_scoped_release>(),
           "Loads the code object on GPU `device` (0 for the cpu device) now, as the first run() there would; "
           "RuntimeError as run() for a device that cannot take it.")
      .def("run", &PyCompiledGraph::run, py::arg("inputs"), py::arg("outputs"), py::arg("stream") = 0,
           py::arg("workspace") = 0, py::arg("device") = 0, py::arg("autotune") = false,
           py::arg("sizes") = std::vector<int64_t>{},
           py::call_guard<py::gil_scoped_release>(),
           "Runs the kernels in order. inputs / outputs: data pointers (untyped_storage().data_ptr()) of each graph "
           "input's and output's storage, laid out as the graph's meta says; the caller owns them and must keep them "
           "alive until the kernels finish. cpu targets: synchronous on the cpu device. GPU targets (sm_*, gfx*): "
           "launched on GPU `device` (its process-wide device, opened on first use) on `stream` "
           "(torch.cuda.current_stream().cuda_stream; 0 for the default stream), returning without waiting. "
           "workspace: a device pointer to at least workspace_bytes bytes, 256-byte aligned (e.g. a uint8 tensor "
           "from PyTorch's allocator, used in that stream's order); 0: the graph's own workspace, allocated once. "
           "Concurrent runs of one CompiledGraph are serialized. autotune: the first run on a device times each "
           "kernel with a few grids and keeps the fastest, recorded next to the code object in the cache (later "
           "runners start with it). sizes: the size symbols' values, in `symbols` order (empty for a graph without "
           "symbols); a new binding only evaluates grids and workspace offsets, nothing is compiled again, and the "
           "workspace must then hold workspace_bytes_for(sizes) bytes. Values below 1 or not divisible by their "
           "`symbol_divisors` raise ValueError. Raises RuntimeError with the device's message when "
           "the device cannot be opened or the code object was compiled for another GPU.")
      .def_property_readonly(
          "kernel_facts", &PyCompiledGraph::kernel_facts,
          "Per-kernel resource facts, one dict per kernel with at least name, registers, static_shared_bytes, "
          "local_bytes, max_threads_per_block. AMD targets: from the code object's metadata (comgr; no GPU needed), "
          "plus vgpr_count, sgpr_count, agpr_count, lds_bytes, scratch_bytes, vgpr/sgpr_spill_count, wavefront_size, "
          "max_flat_workgroup_size, waves_per_simd. NVIDIA targets: from the driver (cuFuncGetAttribute) once the "
          "graph has run, else an empty list. cpu targets: an empty list.")
      .def("__repr__", [](const PyCompiledGraph& g) {
        return "<hipinductor._C.CompiledGraph '" + g.name() + "' target=" + g.graph().module.target.id() +
               " kernels=" + std::to_string(g.graph().module.kernels.size()) +
               (g.graph().cache_hit ? " (cached)>" : ">");
      });
}
