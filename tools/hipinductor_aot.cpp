// hipinductor-aot GRAPH.json --arch gfx90a,gfx942 -o DIR
//
// Offline (ahead-of-time) compilation, no GPU needed: writes into DIR, per architecture, the HIP source
// (<graph>.<arch>.hip) and its code object (<graph>.<arch>.hsaco / .cubin / .so), and one manifest.json describing
// the kernels (parameters, launch shapes, code-object facts), the graph's inputs and outputs, and the workspace
// plan. A graph with symbolic sizes compiles once for all of them: the manifest lists its size symbols ("symbols",
// in binding order, with the divisors the graph promised), says what each kernel symbol holds ("kernel_symbols": a
// graph symbol's value divided by its divisor), marks the kernels' size arguments ("kind": "size", the kernel
// symbol), and gives grids, workspace offsets and the workspace size as expressions over the kernel symbols. Every file is written
// to a temporary name and renamed, so an interrupted run leaves no half-written file.
// Exit status: 0 done, 2 bad usage or bad input (one line on stderr naming the file, node or option), 1 a
// compiler failure.
#include <CLI/CLI.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "frontend/graph_json.h"
#include "runtime/amd_code_object.h"
#include "runtime/code_object_cache.h"
#include "tools/cli_errors.h"
#include "pipeline/compile_graph.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace hi {
namespace {

void write_file(const fs::path& path, const std::string_view bytes) {
  fs::path tmp = path;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw std::runtime_error("cannot write " + tmp.string());
  }
  fs::rename(tmp, path);
}

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
  // evaluates it with the values it binds.
  return {{"name", k.name}, {"kind", kernel_kind_name(k.kind)}, {"grid", k.grid.str()},
          {"grid_symbols", free_vars(k.grid)}, {"block", k.block}, {"needs_sync", k.needs_sync},
          {"whole_grid", k.whole_grid}, {"params", params}};
}

int run(const std::string& graph_path, const std::vector<std::string>& archs, const fs::path& out_dir) {
  Graph graph = load_graph_file(graph_path);
  std::vector<Target> targets;
  for (const std::string& a : archs) targets.push_back(parse_target(a));  // invalid_argument -> exit 2
  std::string name = fs::path(graph_path).stem().string();
  fs::create_directories(out_dir);
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
    write_file(out_dir / (base + ".hip"), g.module.source);
    write_file(out_dir / object_file, std::string_view(g.code.binary.data(), g.code.binary.size()));

    json jt{{"target", t.id()}, {"source", base + ".hip"}, {"code_object", object_file},
            {"compiler", compiler_for(t)->version()}, {"workspace_bytes", size_json(g.program.workspace_bytes)}};
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
  write_file(out_dir / "manifest.json", manifest.dump(2) + "\n");
  std::cerr << "hipinductor-aot: wrote " << (out_dir / "manifest.json").string() << "\n";
  return 0;
}

}  // namespace
}  // namespace hi

int main(int argc, char** argv) {
  CLI::App app{"hipinductor-aot: compile a graph's kernels ahead of time for AMD (HIPRTC) or NVIDIA (NVRTC) targets"};
  std::string graph;
  std::string arch_list = "gfx90a,gfx942";
  std::string out_dir;
  app.add_option("graph", graph, "graph file (docs/graph-format.md)")->required();
  app.add_option("--arch", arch_list, "comma-separated targets: gfx90a, gfx942:sramecc+:xnack-, sm_90, cpu ...");
  app.add_option("-o,--output", out_dir, "output directory")->required();
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
    return hi::run(graph, archs, out_dir);
  } catch (...) {
    return hi::report_error("hipinductor-aot", graph, std::current_exception());
  }
}
