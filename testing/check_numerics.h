// run_against_reference: compile a graph for the cpu device, run it on deterministic random inputs with the
// placeholders' own layouts (strides, offsets), and evaluate the same graph with the reference interpreter.
// Used by the numerical tests and by `make demo`.
#pragma once

#include <memory>
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

}  // namespace hi
