// hi-cache-stress-driver GRAPH.json TARGET: compiles one graph through the default code-object cache
// ($HIPINDUCTOR_CACHE_DIR) for a cpu target, runs it on the cpu device against the reference interpreter, and prints
// one line: "ok GRAPH TARGET graph_hit=0|1 hit=0|1 max_error=E". Exit 0 when every output matches (max abs error
// <= 1e-3), 1 on a mismatch, 2 on an error. The many-process crash test (test_cache_concurrency.sh) runs it.
#include <cstdio>
#include <exception>
#include <filesystem>

#include "frontend/graph_json.h"
#include "testing/check_numerics.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s GRAPH.json TARGET\n", argv[0]);
    return 2;
  }
  try {
    hi::Graph graph = hi::load_graph_file(argv[1]);
    hi::CodeObjectCache cache;
    hi::CompileOptions options;
    options.target = hi::parse_target(argv[2]);
    options.graph_name = std::filesystem::path(argv[1]).stem().string();
    options.cache = &cache;
    hi::NumericsCheck r = hi::run_against_reference(graph, options);
    double worst = 0;
    for (size_t o = 0; o < r.actual.size(); ++o) worst = std::max(worst, hi::max_abs_error(r.actual[o], r.expected[o]));
    std::printf("%s %s %s graph_hit=%d hit=%d max_error=%.3g\n", worst <= 1e-3 ? "ok" : "MISMATCH",
                options.graph_name.c_str(), argv[2], int(r.compiled->graph_cache_hit), int(r.compiled->cache_hit),
                worst);
    return worst <= 1e-3 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hi-cache-stress-driver: %s: %s\n", argv[1], e.what());
    return 2;
  }
}
