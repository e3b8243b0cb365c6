// Internal to codegen/: plan_kernel's steps for each kernel shape (plan_pointwise.cpp, plan_reductions.cpp). Each
// fills `plan`'s block, grid, grid policy and synchronisation, and its shape.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "codegen/kernel_plan.h"

namespace hi::codegen_detail {

/// Threads per block of column kernels without vector row slices (and of row loops over rows of unknown length).
constexpr int kMaxBlock = 256;

void plan_pointwise(const LoopProgram& p, const Kernel& k, const Target& target, KernelPlan& plan);
/// Returns whether the rows are persistent (which the cache hints depend on).
bool plan_rows(const LoopProgram& p, const Kernel& k, const Target& target, KernelPlan& plan);
void plan_columns(const LoopProgram& p, const Kernel& k, const Target& target, KernelPlan& plan);
/// Persistent rows, as plan_rows plans them, for rows of at most `bound` columns where the row length is symbolic
/// (nullopt: the known length); false where the rows do not fit in registers, or a rule refuses them (then said in
/// `not_persistent` where given).
bool plan_persistent_rows(const LoopProgram& p, const Kernel& k, const Target& target, KernelPlan& plan,
                          std::optional<int64_t> bound, std::string* not_persistent = nullptr);

/// One of several kernels compiled for one fused kernel whose best shape depends on the magnitude of a symbolic size
/// (persistent rows up to a row length, row slices below an output count): all are compiled, and the sizes of a call
/// pick the one that runs, through the grid: each variant's grid is multiplied by `selected`, 1 for the sizes it
/// serves and 0 for the others, which exactly one variant serves (GraphRunner launches nothing for a grid of 0).
struct ShapeVariant {
  bool planned = false;  ///< `plan` holds the shape, block and grid; else the kernel's own plan (plan_kernel's)
  KernelPlan plan;
  std::string suffix;  ///< appended to the kernel's name (empty for the kernel's own plan)
  Index selected;
  std::string why;
};
/// A row kernel's variants where its row length is symbolic: persistent rows for each bound in a short ladder (the
/// ones whose rows fit in registers), then the row loop; empty where one plan serves every size.
std::vector<ShapeVariant> row_variants(const LoopProgram& p, const Kernel& k, const Target& target);
/// A column kernel's variants where its output count is symbolic: row slices for few outputs, then one output per
/// thread; empty where one plan serves every size.
std::vector<ShapeVariant> column_variants(const LoopProgram& p, const Kernel& k, const Target& target);
void plan_scan(const LoopProgram& p, const Kernel& k, const Target& target, KernelPlan& plan);
void plan_scatter(const LoopProgram& p, const Kernel& k, const Target& target, KernelPlan& plan);

/// What bounds a vector width besides contiguity: 16 bytes of the narrowest operand, of the narrowest load, or one
/// access per contiguous stream.
enum class VectorRule { Operands, Loads, OneChunkPerStream };

/// The widest V (8, 4, 2) that gives the most contiguous accesses of `k` when `var` = g*V + j, or 1 when none is
/// contiguous. `extent` is var's extent (over size symbols, possibly); with `divisible`, V must divide it for every
/// value of the symbols. V moves at most 16 bytes of the narrowest access per lane, and under VectorRule::Operands
/// at most 32 of each access moving along `var`; or under VectorRule::Loads 16 bytes of the narrowest load (column
/// reductions, whose stores are a row's worth of loads apart). Under
/// VectorRule::OneChunkPerStream (pointwise kernels), V is no wider than puts each contiguous stream's group in one
/// access of at most 16 bytes, unless the narrowest contiguous stream would then get accesses under 4 bytes.
int vector_width(const LoopProgram& p, const Kernel& k, const VarRanges& ranges, const std::string& var,
                 const Index& extent, bool divisible, VectorRule rule = VectorRule::Operands);
/// Looped row kernel `k`'s pairs of reductions taken in one pass (RowPlan::one_pass), over `bodies`: the views its
/// row loop prints.
std::vector<RowPlan::OnePass> one_pass_statistics(const LoopProgram& p, const Kernel& k,
                                                  const std::vector<Expr>& bodies);
/// Where computations n - 1 and n of row kernel `k` are sum(x) and sum(d * d) with d = x - sum / N (LayerNorm's
/// statistics, over `bodies`): the mean sum / N as bodies[n] reads it; else null. The printers take the mean from the
/// deviations (hi_deviation_sums) rather than from sum / N alone: a row of equal values must have exactly that value
/// as its mean, as PyTorch's Welford gives, or LayerNorm's (x - mean) * rsqrt(var + eps) turns the one rounding of
/// sum / N into a difference of eps^-1/2 ulps.
Expr deviations_mean(const LoopProgram& p, const Kernel& k, const std::vector<Expr>& bodies, size_t n);
/// Row kernel `k`'s softmax denominators (KernelPlan::reciprocal_divisors).
std::set<int> reciprocal_divisors(const LoopProgram& p, const Kernel& k);
/// The range of a group counter g < extent / V: [0, hi / V - 1] for an extent of at most hi, else [0, unbounded).
Range group_range(const Index& extent, int v, const VarRanges& ranges);
/// A persistent row's column at group cg, lane j: cg*V + j, after the row's head where it is peeled (RowPlan::peeled).
Index persistent_column(const RowPlan& plan);
/// Why vector_width chose `v` under `rule`.
std::string vector_width_reason(int v, const std::string& var, VectorRule rule = VectorRule::Operands);

}  // namespace hi::codegen_detail
