// welford_step (ir/moments.h): a variance's two sums are recognised over elements and over a split's partials, and
// nothing else is.
#include <gtest/gtest.h>

#include "ir/moments.h"

namespace hi {
namespace {

constexpr int kSum = 1;  // the buffer the first sum fills

Expr f(double v, DType t = DType::Float32) { return Expr::constant(v, t); }
Expr bin(BinaryOp op, const Expr& a, const Expr& b) { return Expr::binary(op, a, b, a->dtype); }
Expr x(DType t = DType::Float32) { return Expr::load(0, Index::var("r0") * 8 + Index::var("x0"), t); }
Expr mean(double n, DType t = DType::Float32) {
  return bin(BinaryOp::Div, Expr::load(kSum, Index::var("x0"), t), f(n, t));
}
Expr squared(const Expr& d) { return bin(BinaryOp::Mul, d, d); }

TEST(Moments, ElementsOverTheReducedLength) {
  for (DType t : {DType::Float32, DType::Float64}) {
    Expr sum = Expr::reduce(ReduceOp::Sum, x(t));
    Expr sq = Expr::reduce(ReduceOp::Sum, squared(bin(BinaryOp::Sub, x(t), mean(100, t))));
    std::optional<WelfordStep> step = welford_step(sum, kSum, sq, 100);
    ASSERT_TRUE(step.has_value());
    EXPECT_EQ(step->value, x(t));
    EXPECT_FALSE(step->m2.defined());
    EXPECT_EQ(step->count, 1);
    EXPECT_FALSE(welford_step(sum, kSum, sq, 99)) << "N must be the reduced length";
    EXPECT_FALSE(welford_step(sum, kSum, sq, std::nullopt)) << "symbolic length";
    EXPECT_FALSE(welford_step(sum, kSum + 1, sq, 100)) << "the mean must be the first sum's";
  }
}

TEST(Moments, ElementsOverASymbolicLength) {
  // Over s0 elements the mean is sum / (float)s0: matched when s0 is the reduced length, never for partials.
  const Index s0 = Index::var("s0");
  Expr sum = Expr::reduce(ReduceOp::Sum, x());
  Expr m = bin(BinaryOp::Div, Expr::load(kSum, Index::var("x0"), DType::Float32),
               Expr::cast(Expr::index_value(s0, DType::Int64), DType::Float32));
  Expr sq = Expr::reduce(ReduceOp::Sum, squared(bin(BinaryOp::Sub, x(), m)));
  std::optional<WelfordStep> step = welford_step_over(sum, kSum, sq, s0);
  ASSERT_TRUE(step.has_value());
  EXPECT_EQ(step->value, x());
  EXPECT_FALSE(welford_step_over(sum, kSum, sq, Index::var("s1"))) << "N must be the reduced length";
  EXPECT_FALSE(welford_step(sum, kSum, sq, std::nullopt)) << "the constant-length form takes no symbols";
  Expr constant = Expr::reduce(ReduceOp::Sum, squared(bin(BinaryOp::Sub, x(), mean(100))));
  EXPECT_TRUE(welford_step_over(sum, kSum, constant, Index(100))) << "a constant length as welford_step";
}

TEST(Moments, PartialsMergedAsChan) {
  // 16 pieces of 64 elements: sum(b + 64 * (a / 64 - sum / 1024)^2).
  Expr a = Expr::load(2, Index::var("r0") * 8 + Index::var("x0"), DType::Float32);
  Expr b = Expr::load(3, Index::var("r0") * 8 + Index::var("x0"), DType::Float32);
  Expr sum = Expr::reduce(ReduceOp::Sum, a);
  Expr d = bin(BinaryOp::Sub, bin(BinaryOp::Div, a, f(64)), mean(1024));
  Expr sq = Expr::reduce(ReduceOp::Sum, bin(BinaryOp::Add, b, bin(BinaryOp::Mul, f(64), squared(d))));
  std::optional<WelfordStep> step = welford_step(sum, kSum, sq, 16);
  ASSERT_TRUE(step.has_value());
  EXPECT_EQ(step->value, a);
  EXPECT_EQ(step->m2, b);
  EXPECT_EQ(step->count, 64);
  EXPECT_FALSE(welford_step(sum, kSum, sq, 8)) << "N = pieces x 64";
  // The piece's mean must use the same c as its weight.
  Expr other = bin(BinaryOp::Sub, bin(BinaryOp::Div, a, f(32)), mean(1024));
  Expr wrong = Expr::reduce(ReduceOp::Sum, bin(BinaryOp::Add, b, bin(BinaryOp::Mul, f(64), squared(other))));
  EXPECT_FALSE(welford_step(sum, kSum, wrong, 16));
}

TEST(Moments, OtherPairsAreNotVariances) {
  Expr sum = Expr::reduce(ReduceOp::Sum, x());
  // Deviations of another value, a max instead of a sum, integers.
  Expr y = Expr::load(4, Index::var("r0") * 8 + Index::var("x0"), DType::Float32);
  EXPECT_FALSE(welford_step(sum, kSum, Expr::reduce(ReduceOp::Sum, squared(bin(BinaryOp::Sub, y, mean(100)))), 100));
  EXPECT_FALSE(welford_step(Expr::reduce(ReduceOp::Max, x()), kSum,
                            Expr::reduce(ReduceOp::Sum, squared(bin(BinaryOp::Sub, x(), mean(100)))), 100));
  Expr xi = Expr::load(0, Index::var("r0"), DType::Int64);
  Expr mi = bin(BinaryOp::Div, Expr::load(kSum, Index::var("x0"), DType::Int64), f(100, DType::Int64));
  EXPECT_FALSE(welford_step(Expr::reduce(ReduceOp::Sum, xi), kSum,
                            Expr::reduce(ReduceOp::Sum, squared(bin(BinaryOp::Sub, xi, mi))), 100));
}

}  // namespace
}  // namespace hi
