// run_against_reference: compile a graph for the cpu device, run it on deterministic random inputs with the
// placeholders' own layouts (strides, offsets), and evaluate the same graph with the reference interpreter.
// Used by the numerical tests and by `make demo`.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/graph_runner.h"
#include "testing/reference_eval.h"

namespace hi {

struct NumericsCheck {
  std::vector<HostTensor> expected;  ///< reference interpreter, per graph output
  std::vector<HostTensor> actual;    ///< the compiled kernels on the cpu device, read back with the outputs' layouts
  std::shared_ptr<const CompiledGraph> compiled;
};

/// `options.target` must be a cpu target. Throws what compile_graph and the reference interpreter throw.
NumericsCheck run_against_reference(const Graph& graph, const CompileOptions& options, uint64_t seed = 1);

/// As run_against_reference, on the given `inputs` (one per placeholder) instead of random ones; the graph's outputs
/// must be contiguous (they are read back as such).
NumericsCheck run_on_inputs_against_reference(const Graph& graph, const CompileOptions& options,
                                              const std::vector<HostTensor>& inputs);

/// `graph` with every size symbol replaced by its value in `values` (metas and int arguments): the concrete graph
/// that one binding of a symbolic graph stands for. Throws std::invalid_argument for a symbol without a value.
Graph bind_symbols(const Graph& graph, const std::map<std::string, int64_t>& values);

/// Runs `runner` (over a cpu-target compile of the symbolic `graph`) with the symbols bound to `values`, on
/// deterministic random inputs laid out as the bound graph's placeholders, and evaluates the bound graph with the
/// reference interpreter. The result's `compiled` is the runner's graph.
NumericsCheck run_bound_against_reference(const Graph& graph, GraphRunner& runner,
                                          const std::map<std::string, int64_t>& values, uint64_t seed = 1);

}  // namespace hi
