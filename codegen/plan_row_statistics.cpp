// Row statistics that change how a row kernel is printed: pairs of reductions taken in one pass over the row (online
// softmax, Welford), and softmax denominators divided by through one reciprocal per row.
#include <optional>

#include "codegen/kernel_lanes.h"
#include "codegen/plan_shapes.h"
#include "ir/moments.h"

namespace hi::codegen_detail {

namespace {

/// Whether `c` is a reduction whose (kernel-view) body reduces with `op`.
bool reduces(const Computation& c, const Expr& body, ReduceOp op) {
  return c.is_reduction() && body->op == ExprOp::Reduce && body->reduce_op() == op;
}

/// The shift s of exp(s), or of exp2(s * c) with a constant c > 0 (*scale = c; 0 for exp); null for other values.
Expr exp_shift(const Expr& e, double* scale) {
  *scale = 0;
  if (e->op != ExprOp::Unary) return Expr();
  if (e->unary_op() == UnaryOp::Exp) return e->args[0];
  if (e->unary_op() != UnaryOp::Exp2 || e->args[0]->op != ExprOp::Binary || e->args[0]->binary_op() != BinaryOp::Mul)
    return Expr();
  for (int k = 0; k < 2; ++k) {
    const Expr& c = e->args[0]->args[1 - k];
    if (c->op == ExprOp::Constant && c->value > 0) {
      *scale = c->value;
      return e->args[0]->args[k];
    }
  }
  return Expr();
}

/// Whether `buffer` is softmax's denominator, sum(exp(x - max(x))) (or the exp2 form): at least 1.
bool sum_of_exp_shifted_by_max(const LoopProgram& p, int buffer) {
  // sum(exp(x - max(x))) or sum(exp2((x - max(x)) * c)), c > 0: the maximum's own term is 1.
  int ci = p.producer(buffer);
  if (ci < 0) return false;
  const Expr& sum = p.computations[ci].body;
  if (!sum.defined() || sum->op != ExprOp::Reduce || sum->reduce_op() != ReduceOp::Sum) return false;
  double scale;
  Expr shifted = exp_shift(sum->args[0], &scale);
  if (!shifted.defined() || shifted->op != ExprOp::Binary || shifted->binary_op() != BinaryOp::Sub) return false;
  const Expr& m = shifted->args[1];
  if (m->op != ExprOp::Load || !m->args.empty()) return false;
  int mi = p.producer(m->buffer);
  if (mi < 0) return false;
  const Expr& max = p.computations[mi].body;
  return max.defined() && max->op == ExprOp::Reduce && max->reduce_op() == ReduceOp::Max &&
         max->args[0] == shifted->args[0];
}

/// Whether `max` is reduce(max, x) and `sum`, the computation after it, is reduce(sum, exp(x - max)) (or
/// exp2((x - max) * log2(e)): *base2), in float, as the softmax lowering writes it (bodies as the kernel sees them).
bool online_softmax(const Computation& max, const Expr& max_body, const Computation& sum, const Expr& sum_body,
                    bool* base2) {
  if (!reduces(max, max_body, ReduceOp::Max) || !reduces(sum, sum_body, ReduceOp::Sum)) return false;
  const Expr& x = max_body->args[0];
  const Expr& e = sum_body->args[0];
  if (x->dtype != DType::Float32 || e->dtype != DType::Float32) return false;
  double scale;
  Expr shifted = exp_shift(e, &scale);
  *base2 = scale != 0;
  if (*base2 && static_cast<float>(scale) != static_cast<float>(1.4426950408889634)) return false;  // log2(e) only
  if (!shifted.defined() || shifted->op != ExprOp::Binary || shifted->binary_op() != BinaryOp::Sub ||
      !(shifted->args[0] == x))
    return false;
  const Expr& m = shifted->args[1];
  if (m->op != ExprOp::Load || m->buffer != max.buffer) return false;
  // x itself must not read the maximum (it is printed before the maximum exists).
  return !reads_buffer(x, max.buffer);
}

/// The step of `sum` and `sq`, the computation after it, when they are a variance's sums over the row's elements
/// (ir/moments.h), in float: LayerNorm's statistics. The row length may be symbolic.
std::optional<WelfordStep> welford(const Computation& sum, const Expr& sum_body, const Computation& sq,
                                   const Expr& sq_body, const LoopProgram& p, const Kernel& k) {
  if (!sum.is_reduction() || !sq.is_reduction()) return std::nullopt;
  return float_element_step(sum_body, sum.buffer, sq_body, simplify(k.row_length, p.size_ranges));
}

}  // namespace

Expr deviations_mean(const LoopProgram& p, const Kernel& k, const std::vector<Expr>& bodies, size_t n) {
  if (n == 0 || n >= k.computations.size()) return Expr();
  const std::optional<WelfordStep> step =
      welford(p.computations[k.computations[n - 1]], bodies[n - 1], p.computations[k.computations[n]], bodies[n], p, k);
  return step ? step->mean : Expr();
}

std::vector<RowPlan::OnePass> one_pass_statistics(const LoopProgram& p, const Kernel& k,
                                                  const std::vector<Expr>& bodies) {
  std::vector<RowPlan::OnePass> out;
  for (size_t n = 0; n + 1 < k.computations.size(); ++n) {
    const Computation& c = p.computations[k.computations[n]];
    const Computation& next = p.computations[k.computations[n + 1]];
    RowPlan::OnePass pass{n, false, false};
    pass.online_softmax = online_softmax(c, bodies[n], next, bodies[n + 1], &pass.base2);
    if (!pass.online_softmax && !welford(c, bodies[n], next, bodies[n + 1], p, k)) continue;
    out.push_back(pass);
    ++n;  // the pair's second reduction starts no pair of its own
  }
  return out;
}

std::set<int> reciprocal_divisors(const LoopProgram& p, const Kernel& k) {
  std::set<int> out;
  for (int ci : k.computations) {
    const Computation& c = p.computations[ci];
    if (c.is_reduction() && sum_of_exp_shifted_by_max(p, c.buffer)) out.insert(c.buffer);
  }
  return out;
}

}  // namespace hi::codegen_detail
