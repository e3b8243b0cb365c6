// fuse_kernels: groups a LoopProgram's computations into kernels (fills LoopProgram::kernels).
//
// Computations are visited in program order and appended to the most recent kernel when that is legal, Inductor's
// grouping by (numel, reduction numel):
//  - pointwise after pointwise with the same numel;
//  - a reduction after a row-reduction kernel with the same (rows, row length) — softmax's max then sum,
//    LayerNorm's mean then variance;
//  - a pointwise epilogue of rows*row_length elements after a row-reduction kernel — softmax's normalisation,
//    LayerNorm's output — when it reads that kernel's reduction results at its own row.
// Reads of a buffer written earlier in the same kernel must address the very element the reader's thread computes
// (same row for reduction results; same element otherwise), checked on the simplified index expressions. Buffers
// whose readers all sit in the writing kernel and that are not graph outputs stay in registers (Kernel::local_buffers).
// Reductions whose reduced dimensions are not the innermost in memory become ColumnReduction kernels of their own,
// except that an argmax (argmin) joins the max (min) of the same values before it: one {value, position} pair.
#pragma once

#include "ir/loop.h"

namespace hi {

void fuse_kernels(LoopProgram& program);

/// The kind fuse_kernels gives reduction `c`: true for a RowReduction (the innermost reduced variable walks memory
/// with stride 1 in at least as many loads as the innermost output variable does), false for a ColumnReduction.
/// split_reductions asks it too, to lay out partial results the way both of its stages read coalesced.
bool is_row_major_inner_reduction(const LoopProgram& p, const Computation& c);

}  // namespace hi
