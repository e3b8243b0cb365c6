// hipinductor-demo GRAPH.json: the walking skeleton end to end, for a human. Prints the fused kernels' HIP source,
// their gfx90a and gfx942 code-object facts (HIPRTC, no GPU needed), and the max error of a cpu-device run of the
// same source against the reference interpreter. Exit status 2 on bad usage or bad input (malformed graph,
// unsupported op), 1 on a compiler failure; see cli_errors.h.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>

#include "frontend/graph_json.h"
#include "runtime/amd_code_object.h"
#include "runtime/code_object_cache.h"
#include "testing/check_numerics.h"
#include "tools/cli_errors.h"

int main(int argc, char** argv) {
  CLI::App app{"hipinductor-demo: compile one graph and show what came out"};
  std::string path;
  app.add_option("graph", path, "graph file (docs/graph-format.md)")->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << hi::error_line(std::string("hipinductor-demo: ") + e.what() + " (see --help)") << "\n";
    return 2;
  }
  try {
    hi::Graph graph = hi::load_graph_file(path);
    hi::CodeObjectCache cache;
    hi::CompileOptions o;
    o.graph_name = std::filesystem::path(path).stem().string();
    o.cache = &cache;

    o.target = hi::parse_target("gfx942:sramecc+:xnack-");
    hi::CompiledGraph shown = hi::generate(graph, o);
    std::printf("== %s: %zu graph nodes -> %zu kernel(s)\n\n", path.c_str(), graph.nodes.size(),
                shown.module.kernels.size());
    std::printf("%s\n", hi::kernels_text(shown.module).c_str());

    std::printf("== code objects (HIPRTC, no GPU)\n");
    for (const char* arch : {"gfx90a", "gfx942:sramecc+:xnack-"}) {
      o.target = hi::parse_target(arch);
      hi::CompiledGraph g = hi::compile_graph(graph, o);
      for (const hi::AmdKernelFacts& f : hi::read_amd_kernel_facts(g.code.binary, o.target))
        std::printf("%-24s %-40s VGPRs %3d  SGPRs %3d  LDS %5d B  spills %d/%d  scratch %d B  waves/SIMD %d  (%s)\n",
                    arch, f.name.c_str(), f.vgpr_count, f.sgpr_count, f.lds_bytes, f.vgpr_spill_count,
                    f.sgpr_spill_count, f.scratch_bytes, f.waves_per_simd,
                    g.cache_hit ? "cached" : (std::to_string(static_cast<int>(g.compile_ms)) + " ms").c_str());
    }

    std::printf("\n== cpu device run vs reference interpreter\n");
    for (const char* cpu : {"cpu", "cpu-w64"}) {
      o.target = hi::parse_target(cpu);
      hi::NumericsCheck r = hi::run_against_reference(graph, o);
      for (size_t i = 0; i < r.actual.size(); ++i)
        std::printf("%-8s output %zu: max abs error %.3g\n", cpu, i, hi::max_abs_error(r.actual[i], r.expected[i]));
    }
    return 0;
  } catch (...) {
    return hi::report_error("hipinductor-demo", path, std::current_exception());
  }
}
