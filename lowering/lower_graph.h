// lower_graph: graph IR -> loop IR computations (no kernels yet; see fuse_kernels).
//
// Every ATen call is lowered to a lazily built expression over its output coordinates (Inductor's inner_fn, as an
// explicit tree): pointwise ops compose bodies, views remap the coordinates their input is read at, and nothing is
// written to memory until a value must be *realized*: graph outputs, reductions (which always fill a buffer), and
// values read by several consumers whose bodies are too large to recompute at each of them.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/loop.h"

namespace hi {

/// Raised for graphs the lowering cannot handle; the message names the node, its op and what was wrong.
class LoweringError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct LoweringOptions {
  /// A value read by more than one consumer is recomputed at each (inlined) while its body has at most this many
  /// operations; larger ones are realized into a buffer.
  int max_inline_ops = 24;
};

/// True when lower_graph has a lowering for the ATen overload `target` (e.g. "aten.add.Tensor").
bool has_lowering(const std::string& target);
/// All overloads with a lowering, sorted.
std::vector<std::string> lowered_ops();

/// Lowers `g`: one buffer per graph input and output, computations for everything realized. Throws LoweringError.
/// Symbols the graph promises divisible (Graph::divisible) are lowered as divisor * quotient symbols
/// (LoopProgram::quotients).
LoopProgram lower_graph(const Graph& g, const LoweringOptions& options = {});

}  // namespace hi
