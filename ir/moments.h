// The two sums of a variance as the loop IR writes them, recognised so that kernels can take both in one pass over
// the data with Welford's method (codegen's row and column kernels) and fusion can keep them in one kernel.
#pragma once

#include <cstdint>
#include <optional>

#include "ir/loop.h"

namespace hi {

/// One step of a variance's pair of sums, as a Welford accumulator {n, mean, m2} takes it:
///  - elements, as lowering's moments() writes them: sum = reduce(sum, x) and sq = reduce(sum, d * d) with
///    d = x - load(sum) / N: each step is one element x (n = 1, m2 = 0);
///  - partials, as split_reductions merges them: sum = reduce(sum, a) and sq = reduce(sum, b + c * (d * d)) with
///    d = a / c - load(sum) / N: each step is a piece of c elements whose sum is a and whose squared deviations from
///    its own mean sum to b (Chan's merge: n = c, mean = a / c, m2 = b).
/// N is the count of elements both sums cover: the reduced steps times c.
struct WelfordStep {
  Expr value;        ///< x, or a piece's sum a
  Expr m2;           ///< a piece's b; undefined for elements
  double count = 1;  ///< c; 1 for elements
  Expr mean;         ///< load(sum) / N, the mean the squared deviations are taken about
};

/// The step of reduction bodies `sum` and `sq` (with `sum_buffer` the buffer `sum` fills, which `sq` reads) when they
/// are such a pair over `steps` reduced steps, in float32 or float64; nullopt otherwise (also for symbolic `steps`).
std::optional<WelfordStep> welford_step(const Expr& sum, int sum_buffer, const Expr& sq, std::optional<int64_t> steps);
/// welford_step over `steps` reduced steps that may be symbolic (simplified as the IR writes them): elements whose mean
/// divides by the size expression cast to float also match.
std::optional<WelfordStep> welford_step_over(const Expr& sum, int sum_buffer, const Expr& sq, const Index& steps);
/// welford_step_over for a pair over elements in float32 (no pieces' m2): the pairs a row kernel accumulates with
/// Welford or corrects by the deviations' own sum (codegen), and whose corrected mean fuse_kernels shares with other
/// kernels, so both decide by this one test.
std::optional<WelfordStep> float_element_step(const Expr& sum, int sum_buffer, const Expr& sq, const Index& steps);

}  // namespace hi
