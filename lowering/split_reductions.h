// split_reductions: Inductor's "split reduction". A reduction with few outputs and a long reduced extent starves the
// GPU — a ColumnReduction kernel runs one thread per output (x[16384,4096].sum(0): 4096 threads looping 16384
// times), a RowReduction kernel one block per row (x.sum() of 64M elements: one block). Such a reduction is
// rewritten into two computations:
//
//  - stage 1, `partial` (a new contiguous Intermediate buffer, named "buf<N>" after the highest existing one): the
//    original output domain plus a split dimension of S pieces, each reducing `chunk = ceil(R / S)` consecutive
//    elements of the row-major flat reduction index (flat = s*chunk + r0; the original r0..rk are recovered from it
//    by floordiv/mod of the original reduce sizes). When chunk*S > R the flat index is clamped to R-1 so every load
//    stays in bounds; Sum/Prod then mask the excess with their identity (`where(flat < R, value, identity)`), while
//    Max/Min/Any/All need no mask (an element counted twice does not change them).
//  - stage 2: the original computation (same buffer, name, origins), now reducing the S partials of its output.
//
// Where S sits follows the kind fuse_kernels gives the original (is_row_major_inner_reduction), so both stages read
// coalesced and keep that kind:
//  - column-style (outputs are the contiguous direction): partial is [S, sizes...]; stage 1 is a ColumnReduction of
//    S*N threads, stage 2 a ColumnReduction over S with stride N.
//  - row-style (few long rows): partial is [sizes..., S]; stage 1 is a RowReduction of N*S rows of `chunk`, stage 2 a
//    RowReduction of N rows of S.
// A split whose stages would not get those kinds is not made.
//
// ArgMax/ArgMin keep two partials per piece, both computed by stage 1 (one kernel): the piece's extreme value (Max /
// Min of the same values) and its position in the whole reduction domain (Int64); stage 2 is the arg reduction of
// those values at those positions, so ties keep the first position and NaNs the first NaN's.
//
// A variance's two sums (ir/moments.h: sum(x) and sum((x - sum / R)^2), split alike) are split together, so that
// each stage takes them in one pass (fuse_kernels keeps such pairs in one kernel, codegen gives them one Welford
// accumulator): stage 1 reduces each piece of c = chunk elements to its sum a and the squared deviations b from its
// own mean a / c; stage 2 sums the a and merges the pieces as Chan et al., sum(b + c * (a / c - mean)^2). Their
// pieces are of equal size (S halved until it divides R, down to min_splits); where no such S exists the sums are
// split one by one as above (stage 1 then reads the data twice).
//
// A row-style reduction whose body reads, per row, what a row reduction computes over rows of length L that tile its
// reduced domain (kl_div's batchmean total over log_softmax's rows, each term reading the row's max and sum) is split
// with chunk = L, one piece per row, whenever its S stays within max_row_aligned_splits: stage 1 then has the row
// kernel's shape and reads the statistics at its own row, so fuse_kernels puts it in that kernel, and the rows are
// read once (a split into other chunks was a kernel of its own reading the inputs again).
//
// Eligible: reductions with Sum, Prod, Max, Min, Any, All, ArgMax or ArgMin (never LogAddExp, which is not
// idempotent) and constant sizes, R >= min_reduce_numel, and S (a power of two chosen from the thresholds below,
// deterministically) at least min_splits. The partial's dtype is the Reduce's value dtype (Bool for any/all, as the
// original result), widened to Float32 for Sum/Prod of 16-bit floats. Consumers are untouched: stage 2 writes the
// same buffer, so mean/var epilogues and LayerNorm's consumers keep working (a split row reduction leaves its former
// row kernel, which is why rows are only split when there are few of them, and rows that other computations read
// too, softmax's and the norms', only when there are fewer still: SplitOptions::shared_rows_min_rows).
//
// Runs after lower_graph and before fuse_kernels (it keeps computations in producer-before-consumer order: each
// partial comes right before its stage 2); plan_memory later places the partials in the workspace.
#pragma once

#include <cstdint>

#include "ir/loop.h"

namespace hi {

/// When and how far to split. Defaults are tuned for GPUs with ~100+ compute units of 2048 resident threads
/// (H200: 132 SMs, ~270k threads; MI300X: 304 CUs) and the kernels emit_hip prints for the two stages.
struct SplitOptions {
  bool enabled = true;
  /// Reductions over fewer elements are never split: they are cheap whatever the kernel.
  int64_t min_reduce_numel = 4096;
  /// Column-style: stage 1 aims for at least this many outputs (S*N). Its kernel then slices each partial's rows
  /// across a block (emit_column_vector_slices) for enough threads, so S stays small and stage 2 short. H200,
  /// x[16384,4096].sum(0) under do_bench (bench/shapes/cols.cu): S = 16 with 16 row slices 0.0735 ms, against
  /// 0.0754 for S = 128 and one thread per 4 outputs (earlier: 0.0771 at S = 128 against 0.0797 at 1M).
  int64_t column_target_outputs = 64 * 1024;
  /// Column-style: elements each stage-1 thread reduces serially, at least.
  int64_t min_column_chunk = 64;
  /// Row-style: stage 1 aims for at least this many rows (one block each), several blocks per compute unit.
  int64_t row_target_rows = 1024;
  /// Row-style: elements per stage-1 row, at least (8 per thread of a 256-thread block, to amortise the block reduce).
  int64_t min_row_chunk = 2048;
  /// Row-style reductions whose rows another computation reads as well (softmax's max and sum and the output they
  /// normalise, a norm's statistics and its output) are split only below this many rows. Unsplit, their row kernel
  /// takes the statistics in one pass and the output in a second, a block per row; split, every statistic is a
  /// pass of its own over misaligned chunks, the output another kernel (H200: softmax over 333 x 50257 f32, five
  /// kernels, 0.100 ms against Inductor's one looped kernel, 0.078). 128 rows give most SMs of an H200 (132) a block.
  int64_t shared_rows_min_rows = 128;
  /// A split into fewer pieces does not pay for the second kernel (so rows are split only when N <= 256 and columns
  /// when N < 32k with the defaults; wider column reductions fill the GPU with row slices unsplit).
  int64_t min_splits = 4;
  /// Stage 2 reduces S partials per output (serially in a column kernel): keep that short.
  int64_t max_splits = 1024;
  /// A row-style reduction over whole rows of a row reduction it reads per row (kl_div's batchmean total of terms
  /// that read both log_softmax's row statistics) is split one piece per row instead, so that stage 1 joins that row
  /// kernel and the rows are read once; up to this many partials, which stage 2 reads in one block (256 KB of f32).
  int64_t max_row_aligned_splits = 64 * 1024;
};

/// Splits the reductions of `program` that starve the GPU (see above); a no-op when options.enabled is false.
/// Expects no kernels yet (clears nothing, but computation indices shift).
void split_reductions(LoopProgram& program, const SplitOptions& options = {});

}  // namespace hi
