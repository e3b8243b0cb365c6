// hipinductor-aot GRAPH.json --arch gfx90a,gfx942 -o DIR
// hipinductor-aot MODEL.pt2 --arch gfx90a,gfx942,sm_90,cpu -o model.hipi     (and --inspect model.hipi)
//
// A torch.export program (.pt2) and --inspect go to the Python side (`python3 -m hipinductor.aot`, the interpreter
// named by $HIPINDUCTOR_PYTHON, else python3): exporting, partitioning and the eager steps are PyTorch's. What follows
// is the JSON route.
//
// Offline (ahead-of-time) compilation, no GPU needed: writes into DIR, per architecture, the HIP source
// (<graph>.<arch>.hip) and its code object (<graph>.<arch>.hsaco / .cubin / .so; for a large GPU module, a container
// of several units' code objects, counted in the target's "code_object_units"), and one manifest.json describing
// the kernels (parameters, launch shapes, code-object facts), the graph's inputs and outputs, and the workspace
// plan. A graph with symbolic sizes compiles once for all of them: the manifest lists its size symbols ("symbols",
// in binding order, with the divisors the graph promised), says what each kernel symbol holds ("kernel_symbols": a
// graph symbol's value divided by its divisor), marks the kernels' size arguments ("kind": "size", the kernel
// symbol), and gives grids, workspace offsets and the workspace size as expressions over the kernel symbols.
// The files are written into a temporary directory next to DIR and moved into DIR only once every target has
// compiled, the manifest last: a failed or interrupted run (a bad target, a full disk) leaves DIR as it was.
// Exit status: 0 done, 2 bad usage or bad input (one line on stderr naming the file, node or option), 1 a
// compiler or I/O failure.
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "frontend/graph_json.h"
#include "runtime/amd_code_object.h"
#include "runtime/code_object_cache.h"
#include "runtime/code_object_units.h"
#include "tools/cli_errors.h"
#include "pipeline/compile_graph.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace hi {
namespace {

void write_file(const fs::path& path, const std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw std::runtime_error("cannot write " + path.string() + ": " + std::strerror(errno));
}

/// A directory next to the output that holds a run's files until they are all written; removed with whatever is
/// left in it when the run ends, however it ends.
class StagingDirectory {
 public:
  explicit StagingDirectory(const fs::path& out_dir) {
    const fs::path parent = out_dir.parent_path();
    fs::create_directories(parent);
    std::string pattern = (parent / ("." + out_dir.filename().string() + ".tmp-XXXXXX")).string();
    if (!mkdtemp(pattern.data()))
      throw std::runtime_error("cannot create a directory next to " + out_dir.string() + ": " + std::strerror(errno));
    path_ = pattern;
  }
  StagingDirectory(const StagingDirectory&) = delete;
  StagingDirectory& operator=(const StagingDirectory&) = delete;
  ~StagingDirectory() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }

  /// Moves the files into `out_dir` (created when missing), `last` after the others: renames within one file
  /// system, so each file appears whole.
  void publish(const fs::path& out_dir, const std::vector<std::string>& files, const std::string& last) {
    if (!fs::exists(out_dir)) {
      std::error_code ec;
      fs::rename(path_, out_dir, ec);  // the whole directory at once
      if (!ec) return;
    }
    fs::create_directory(out_dir);
    for (const std::string& f : files)
      if (f != last) fs::rename(path_ / f, out_dir / f);
    fs::rename(path_ / last, out_dir / last);
  }

 private:
  fs::path path_;
};

json meta_json(const Buffer& b) {
  json j{{"name", b.name}, {"dtype", dtype_name(b.dtype)}, {"offset", b.offset.str()}};
  for (const Index& s : b.sizes) j["sizes"].push_back(s.str());
  for (const Index& s : b.strides) j["strides"].push_back(s.str());
  return j;
}

// A size, offset or grid: the integer when it is one, else the expression over the size symbols in C syntax (`/` and
// `%` are floor division and modulo; every such value is non-negative).
json size_json(const Index& i) {
  if (std::optional<int64_t> value = i.as_const()) return *value;
  return i.str();
}

json kernel_json(const CompiledGraph& g, const EmittedKernel& k) {
  json params = json::array();
  for (const KernelParam& p : k.params) {
    if (p.kind == KernelParam::Kind::Size) {
      // A 64-bit integer argument holding the value of one of the graph's size symbols.
      params.push_back({{"name", p.name}, {"kind", "size"}, {"symbol", p.symbol}, {"dtype", "int64"}});
      continue;
    }
    const Buffer& b = g.program.buffers[p.buffer];
    json jp{{"name", p.name}, {"kind", "buffer"}, {"buffer", b.name}, {"dtype", dtype_name(b.dtype)},
            {"read_only", p.read_only}};
    if (b.kind == BufferKind::Input) jp["input"] = b.io_position;
    if (b.kind == BufferKind::Output) jp["output"] = b.io_position;
    if (g.program.in_workspace(p.buffer)) jp["workspace_offset"] = size_json(g.program.workspace_offsets[p.buffer]);
    params.push_back(jp);
  }
  // The grid (blocks) as an expression over the size symbols (a string, C syntax) and the symbols it names: a loader
  // evaluates it with the values it binds, and launches nothing where it is 0 (a variant for other sizes).
  return {{"name", k.name}, {"kind", kernel_kind_name(k.kind)}, {"grid", k.grid.str()},
          {"grid_symbols", free_vars(k.grid)}, {"block", k.block}, {"needs_sync", k.needs_sync},
          {"whole_grid", k.whole_grid}, {"params", params}};
}

int run(const std::string& graph_path, const std::vector<std::string>& archs, const fs::path& out_arg,
        size_t max_input_bytes) {
  fs::path out_dir = fs::absolute(out_arg).lexically_normal();
  if (out_dir.filename().empty()) out_dir = out_dir.parent_path();  // written as DIR/
  // Every target and the output path are checked before any compiler runs: all of the output or none of it.
  std::vector<Target> targets;
  for (const std::string& a : archs) targets.push_back(parse_target(a));  // invalid_argument -> exit 2
  if (fs::exists(out_dir) && !fs::is_directory(out_dir))
    throw std::invalid_argument("-o " + out_arg.string() + ": exists and is not a directory");
  Graph graph = load_graph_file(graph_path, max_input_bytes);
  std::string name = fs::path(graph_path).stem().string();
  StagingDirectory staging(out_dir);
  std::vector<std::string> written;
  auto stage = [&](const std::string& file, std::string_view bytes) {
    write_file(staging.path() / file, bytes);
    written.push_back(file);
  };
  CodeObjectCache cache;

  json manifest{{"format", "hipinductor-aot-manifest"}, {"version", 1}, {"graph", name},
                {"source_graph", fs::path(graph_path).filename().string()},
                {"codegen", std::string(codegen_version())}};
  for (const Target& t : targets) {
    auto start = std::chrono::steady_clock::now();
    std::cerr << "hipinductor-aot: " << name << ": compiling for " << t.id() << "\n";
    CompileOptions o;
    o.target = t;
    o.graph_name = name;
    o.cache = &cache;
    CompiledGraph g = compile_graph(graph, o);
    std::string base = name + "." + t.file_tag();
    std::string object_file = base + "." + CodeObjectCache::binary_extension(t);
    stage(base + ".hip", g.module.source);
    stage(object_file, std::string_view(g.code.binary.data(), g.code.binary.size()));

    json jt{{"target", t.id()}, {"source", base + ".hip"}, {"code_object", object_file},
            {"compiler", compiler_for(t)->version()}, {"workspace_bytes", size_json(g.program.workspace_bytes)}};
    // A GPU module past CompileOptions::max_gpu_unit_kernel_bytes compiled as several units: its code object file is
    // a units container (runtime/code_object_units.h) that Device::load_for_target loads part by part.
    if (is_code_object_units(g.code.binary)) jt["code_object_units"] = unpack_code_object_units(g.code.binary).size();
    std::vector<AmdKernelFacts> facts;
    if (t.kind == TargetKind::Amd) facts = read_amd_kernel_facts(g.code.binary, t);
    for (const EmittedKernel& k : g.module.kernels) {
      json jk = kernel_json(g, k);
      for (const AmdKernelFacts& f : facts)
        if (f.name == k.name)
          jk["facts"] = {{"vgprs", f.vgpr_count}, {"sgprs", f.sgpr_count}, {"agprs", f.agpr_count},
                         {"lds_bytes", f.lds_bytes}, {"scratch_bytes", f.scratch_bytes},
                         {"vgpr_spills", f.vgpr_spill_count}, {"sgpr_spills", f.sgpr_spill_count},
                         {"waves_per_simd", f.waves_per_simd}};
      jt["kernels"].push_back(jk);
    }
    manifest["targets"].push_back(jt);
    if (!manifest.contains("inputs")) {
      // What a loader must guarantee: the graph's "align" (bytes every input's first element and every output are
      // aligned to; the kernels' vector accesses were compiled on that promise), 0 when the graph makes none.
      manifest["align"] = g.program.align;
      // The size symbols, in the order a runner binds them; each value must lie in [min, max] (null: unbounded), the
      // range the kernels were planned for.
      // The size symbols, in the order a runner binds them: each value must be at least 1 and a multiple of its
      // "divisible" (the graph's promise, 1 for none). Kernels take either a symbol's value or, for a symbol
      // promised divisible, its quotient: "kernel_symbols" says what each size argument's symbol holds.
      manifest["symbols"] = json::array();
      for (const std::string& s : g.program.symbols()) {
        int64_t divisor = 1;
        for (const auto& [name, q] : g.program.quotients)
          if (q.of == s) divisor = q.divisor;
        manifest["symbols"].push_back({{"name", s}, {"min", 1}, {"divisible", divisor}});
      }
      manifest["kernel_symbols"] = json::object();
      for (const auto& [name, range] : g.program.size_ranges) {
        auto q = g.program.quotients.find(name);
        manifest["kernel_symbols"][name] = q == g.program.quotients.end()
                                               ? json{{"symbol", name}, {"divisor", 1}}
                                               : json{{"symbol", q->second.of}, {"divisor", q->second.divisor}};
      }
      manifest["inputs"] = json::array();
      manifest["outputs"] = json::array();
      for (int b : g.program.inputs) manifest["inputs"].push_back(meta_json(g.program.buffers[b]));
      for (int b : g.program.outputs) manifest["outputs"].push_back(meta_json(g.program.buffers[b]));
    }
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::cerr << "hipinductor-aot: " << name << ": " << t.id() << ": " << g.module.kernels.size() << " kernel(s), "
              << (g.cache_hit ? "from the cache" : "compiled") << ", " << static_cast<int>(ms) << " ms\n";
  }
  stage("manifest.json", manifest.dump(2) + "\n");
  staging.publish(out_dir, written, "manifest.json");
  std::cerr << "hipinductor-aot: wrote " << (out_dir / "manifest.json").string() << "\n";
  return 0;
}

}  // namespace
}  // namespace hi

namespace {

// Whether the command line is for the Python side: a .pt2 program, or --inspect.
bool for_python(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--inspect" || a.starts_with("--inspect=") || (a.size() > 4 && a.ends_with(".pt2"))) return true;
  }
  return false;
}

int exec_python(int argc, char** argv) {
  const char* python = std::getenv("HIPINDUCTOR_PYTHON");
  if (!python || !*python) python = "python3";
  std::vector<char*> args{const_cast<char*>(python), const_cast<char*>("-m"), const_cast<char*>("hipinductor.aot")};
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  execvp(python, args.data());
  std::cerr << "hipinductor-aot: cannot start " << python << " for a torch.export program (" << std::strerror(errno)
            << "); set HIPINDUCTOR_PYTHON to a Python with PyTorch and hipinductor\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (for_python(argc, argv)) return exec_python(argc, argv);
  // Past a file-size limit a write should fail (EFBIG) like one to a full disk, reported with the staging directory
  // removed, not end the process with the files half-written.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"hipinductor-aot: compile a graph's kernels ahead of time for AMD (HIPRTC) or NVIDIA (NVRTC) targets. "
               "A torch.export program (MODEL.pt2 --arch ... -o model.hipi) and --inspect PACKAGE go to "
               "python3 -m hipinductor.aot (see its --help)"};
  std::string graph;
  std::string arch_list = "gfx90a,gfx942";
  std::string out_dir;
  size_t max_input_bytes = hi::kMaxGraphFileBytes;
  app.add_option("graph", graph, "graph file (docs/graph-format.md)")->required();
  app.add_option("--arch", arch_list, "comma-separated targets: gfx90a, gfx942:sramecc+:xnack-, sm_90, cpu ...");
  app.add_option("-o,--output", out_dir,
                 "output directory (created; files already in it are replaced only when every target compiled)")
      ->required();
  app.add_option("--max-input-size", max_input_bytes, "largest graph file read, in bytes (default 1 GiB)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "hipinductor-aot: " << e.what() << " (see --help)\n";
    return 2;
  }
  std::vector<std::string> archs;
  std::stringstream ss(arch_list);
  for (std::string a; std::getline(ss, a, ',');)
    if (!a.empty()) archs.push_back(a);
  if (archs.empty()) {
    std::cerr << "hipinductor-aot: --arch names no target\n";
    return 2;
  }
  try {
    return hi::run(graph, archs, out_dir, max_input_bytes);
  } catch (...) {
    return hi::report_error("hipinductor-aot", graph, std::current_exception());
  }
}
