// Internal to codegen/: how a fused kernel's computations look from inside the kernel, and across the lanes of its
// vector groups. The planner (kernel_plan.cpp) decides from these views and the printer (KernelPrinter) prints from
// the same ones, so both see one kernel the same way.
#pragma once

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ir/int_math.h"
#include "ir/loop.h"

namespace hi::codegen_detail {

/// How an index walks memory across the lanes `lane` = 0..V-1 of a vector group.
enum class LaneAccess {
  Uniform,     ///< the same element for every lane (a broadcast)
  Contiguous,  ///< consecutive elements: base + lane
  Gather,      ///< anything else: one scalar access per lane
};

inline LaneAccess classify_lanes(const Index& f, const std::string& lane, const VarRanges& ranges) {
  std::vector<std::string> vars = free_vars(f);
  if (std::find(vars.begin(), vars.end(), lane) == vars.end()) return LaneAccess::Uniform;
  Index base = simplify(substitute(f, {{lane, Index(0)}}), ranges);
  return simplify(f - base, ranges) == Index::var(lane) ? LaneAccess::Contiguous : LaneAccess::Gather;
}

/// Inside vector groups (`ranges` has the lane variable j): the index of lane 0, and whether lanes are contiguous.
inline Index lane0(const Index& f, const VarRanges& ranges) { return simplify(substitute(f, {{"j", Index(0)}}), ranges); }
inline bool contiguous_lanes(const Index& f, const VarRanges& ranges) {
  return classify_lanes(f, "j", ranges) == LaneAccess::Contiguous;
}

using hi::ceil_div;
using hi::pow2_at_least;
using hi::pow2_at_most;

inline bool is_arg_reduction(ReduceOp op) { return op == ReduceOp::ArgMax || op == ReduceOp::ArgMin; }

/// Whether `e` loads `buffer` anywhere.
bool reads_buffer(const Expr& e, int buffer);
/// Whether kernel `k` keeps `buffer` in registers (never stored).
bool is_local(const Kernel& k, int buffer);
/// Whether a computation of `k` writes `buffer`.
bool produced_here(const LoopProgram& p, const Kernel& k, int buffer);
/// `c`'s body and store index over the kernel's flat variables (kernel_var_map), simplified with `ranges`.
Expr kernel_body(const LoopProgram& p, const Kernel& k, const Computation& c, const VarRanges& ranges);
Index kernel_store_index(const LoopProgram& p, const Kernel& k, const Computation& c, const VarRanges& ranges);
/// Every computation's body and store index with the kernel variables replaced by `lanes`.
void lane_views(const LoopProgram& p, const Kernel& k, const std::map<std::string, Index>& lanes,
                const VarRanges& ranges, std::vector<Expr>& bodies, std::vector<Index>& stores);
/// Distinct direct loads in `bodies` of buffers no computation of `k` writes.
std::vector<Expr> external_loads(const LoopProgram& p, const Kernel& k, const std::vector<Expr>& bodies);
/// Loads and (with `stores`) stores of `k`'s computations as (index over the kernel's variables, element dtype).
std::vector<std::pair<Index, DType>> kernel_accesses(const LoopProgram& p, const Kernel& k, const VarRanges& ranges,
                                                     bool stores = true);
/// Bytes of the narrowest element among `accesses` (8 when there are none).
int narrowest_bytes(const std::vector<std::pair<Index, DType>>& accesses);
/// Whether a computation of row kernel `k` stores a row's elements (softmax's output, a norm's), rather than one
/// value per row.
bool writes_rows(const LoopProgram& p, const Kernel& k);

/// The buffers a kernel reads and writes (in memory: registers-only buffers are in neither) and the size symbols its
/// indices and sizes name: its parameters.
struct KernelOperands {
  std::set<int> read, written;
  std::set<std::string> symbols;
};
KernelOperands kernel_operands(const LoopProgram& p, const Kernel& k);

}  // namespace hi::codegen_detail
