#include "ir/moments.h"

#include <functional>

namespace hi {
namespace {

bool is_binary(const Expr& e, BinaryOp op) { return e->op == ExprOp::Binary && e->binary_op() == op; }

bool reads(const Expr& e, int buffer) {
  bool found = false;
  visit(e, [&](const Expr& n) { found = found || (n->op == ExprOp::Load && n->buffer == buffer); });
  return found;
}

/// The constant c of `e` = c * f or f * c (f written into *rest); 0 when `e` is no such product.
double constant_factor(const Expr& e, Expr* rest) {
  if (!is_binary(e, BinaryOp::Mul)) return 0;
  for (int k = 0; k < 2; ++k) {
    const Expr& c = e->args[k];
    if (c->op == ExprOp::Constant && c->value > 0) {
      *rest = e->args[1 - k];
      return c->value;
    }
  }
  return 0;
}

/// welford_step, with `covers(n, c)` saying whether n, the mean's divisor, is the count of elements both sums cover
/// (c the elements per step).
std::optional<WelfordStep> match(const Expr& sum, int sum_buffer, const Expr& sq,
                                 const std::function<bool(const Expr&, double)>& covers) {
  auto plain_sum = [](const Expr& e) {
    return e.defined() && e->op == ExprOp::Reduce && e->reduce_op() == ReduceOp::Sum && e->args.size() == 1;
  };
  if (!plain_sum(sum) || !plain_sum(sq)) return std::nullopt;
  const DType t = sum->args[0]->dtype;
  if ((t != DType::Float32 && t != DType::Float64) || sq->args[0]->dtype != t) return std::nullopt;
  WelfordStep step;
  step.value = sum->args[0];
  // The squared deviation d * d, and b + c * (d * d) around it for partials.
  Expr square = sq->args[0];
  if (is_binary(square, BinaryOp::Add)) {
    step.m2 = square->args[0];
    step.count = constant_factor(square->args[1], &square);
    if (step.count == 0 || reads(step.m2, sum_buffer)) return std::nullopt;
  }
  if (!is_binary(square, BinaryOp::Mul) || square->args[0] != square->args[1]) return std::nullopt;
  const Expr& d = square->args[0];
  if (!is_binary(d, BinaryOp::Sub)) return std::nullopt;
  // d = x - mean, or a / c - mean for partials.
  const Expr& own = d->args[0];
  if (!step.m2.defined() && own != step.value) return std::nullopt;
  if (step.m2.defined() && !(is_binary(own, BinaryOp::Div) && own->args[0] == step.value &&
                             own->args[1]->op == ExprOp::Constant && own->args[1]->value == step.count))
    return std::nullopt;
  // mean = load(sum) / N, N the elements both sums cover.
  const Expr& mean = d->args[1];
  if (!is_binary(mean, BinaryOp::Div)) return std::nullopt;
  step.mean = mean;
  const Expr& total = mean->args[0];
  const Expr& n = mean->args[1];
  if (total->op != ExprOp::Load || total->buffer != sum_buffer || !total->args.empty()) return std::nullopt;
  if (!covers(n, step.count)) return std::nullopt;
  if (reads(step.value, sum_buffer)) return std::nullopt;
  return step;
}

}  // namespace

std::optional<WelfordStep> welford_step(const Expr& sum, int sum_buffer, const Expr& sq, std::optional<int64_t> steps) {
  if (!steps) return std::nullopt;
  return match(sum, sum_buffer, sq, [&](const Expr& n, double count) {
    return n->op == ExprOp::Constant && n->value == static_cast<double>(*steps) * count;
  });
}

std::optional<WelfordStep> welford_step_over(const Expr& sum, int sum_buffer, const Expr& sq, const Index& steps) {
  if (steps.is_const()) return welford_step(sum, sum_buffer, sq, std::optional<int64_t>(steps.value()));
  // A symbolic count is the size expression cast to float, over elements only (split partials have constant counts).
  return match(sum, sum_buffer, sq, [&](const Expr& n, double count) {
    return count == 1 && n->op == ExprOp::Cast && n->args[0]->op == ExprOp::IndexValue && n->args[0]->index == steps;
  });
}

std::optional<WelfordStep> float_element_step(const Expr& sum, int sum_buffer, const Expr& sq, const Index& steps) {
  std::optional<WelfordStep> step = welford_step_over(sum, sum_buffer, sq, steps);
  if (!step || step->m2.defined() || step->value->dtype != DType::Float32) return std::nullopt;
  return step;
}

}  // namespace hi
