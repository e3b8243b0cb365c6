#include <gtest/gtest.h>

#include <random>
#include <unordered_set>

#include "ir/index.h"

namespace hi {
namespace {

const Index x = Index::var("x");
const Index y = Index::var("y");
const Index x0 = Index::var("x0");
const Index x1 = Index::var("x1");
const Index x2 = Index::var("x2");
const Index x10 = Index::var("x10");

// Reference evaluator with Python floor semantics, independent of the library's folding code.
int64_t py_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t eval(const Index& e, const std::map<std::string, int64_t>& env) {
  const auto& a = e.args();
  switch (e.op()) {
    case IndexOp::Const: return e.value();
    case IndexOp::Var: return env.at(e.name());
    case IndexOp::Add: {
      int64_t s = 0;
      for (const Index& t : a) s += eval(t, env);
      return s;
    }
    case IndexOp::Mul: {
      int64_t p = 1;
      for (const Index& t : a) p *= eval(t, env);
      return p;
    }
    case IndexOp::FloorDiv: return py_div(eval(a[0], env), eval(a[1], env));
    case IndexOp::Mod: {
      int64_t l = eval(a[0], env);
      int64_t r = eval(a[1], env);
      return l - py_div(l, r) * r;
    }
    case IndexOp::Min: return std::min(eval(a[0], env), eval(a[1], env));
    case IndexOp::Max: return std::max(eval(a[0], env), eval(a[1], env));
  }
  return 0;
}

// ---- canonical forms --------------------------------------------------------------------------------------------

TEST(IndexCanon, CommutativeSumsAndProductsAreEqual) {
  EXPECT_EQ(x + y, y + x);
  EXPECT_EQ(x * y, y * x);
  EXPECT_EQ((x + y) + 3, x + (3 + y));
  EXPECT_EQ(min(x, y), min(y, x));
  EXPECT_NE(x + y, x * y);
}

TEST(IndexCanon, LikeTermsCombine) {
  EXPECT_EQ(x * 2 + x * 3, x * 5);
  EXPECT_EQ(x * 2 + 3 * x - x * 5, Index(0));
  EXPECT_EQ(x * y * 2 + y * x, x * y * 3);
  EXPECT_EQ((x - x).str(), "0");
}

TEST(IndexCanon, ConstantsFoldAndIdentitiesVanish) {
  EXPECT_EQ(Index(3) + 4, Index(7));
  EXPECT_EQ(Index(3) * 4 * x, x * 12);
  EXPECT_EQ(x * 1, x);
  EXPECT_EQ(x + 0, x);
  EXPECT_EQ(x * 0, Index(0));
  EXPECT_EQ(floordiv(Index(-7), 2), Index(-4));  // floor, not truncation
  EXPECT_EQ(mod(Index(-7), 2), Index(1));
  EXPECT_EQ(mod(Index(7), -2), Index(-1));
  EXPECT_EQ(floordiv(x, 1), x);
  EXPECT_EQ(mod(x, 1), Index(0));
  EXPECT_EQ(floordiv(0, x), Index(0));
  EXPECT_EQ(min(x, x), x);
  EXPECT_EQ(max(Index(3), Index(9)), Index(9));
  EXPECT_THROW(floordiv(x, 0), std::domain_error);
}

TEST(IndexCanon, FlatteningAndDistribution) {
  Index nested = sum({x, sum({y, sum({x0, 1})}), 2});
  EXPECT_EQ(nested.op(), IndexOp::Add);
  EXPECT_EQ(nested.args().size(), 4u);
  EXPECT_EQ(nested.str(), "x + x0 + y + 3");
  Index prod = product({x, product({y, 2}), 3});
  EXPECT_EQ(prod.op(), IndexOp::Mul);
  EXPECT_EQ(prod.args().size(), 3u);
  EXPECT_TRUE(prod.args()[0].is_const(6));  // c*x keeps its constant first
  EXPECT_EQ((x + 1) * 4, x * 4 + 4);
  EXPECT_EQ(((x + 1) * (y + 2)).str(), "x*2 + y + x*y + 2");
}

TEST(IndexCanon, EqualExpressionsHashEqual) {
  Index a = (x0 * 4096 + x1) * 2 + floordiv(x2, 3);
  Index b = floordiv(x2, 3) + x1 * 2 + 8192 * x0;
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.hash(), b.hash());
  std::unordered_set<Index> set{a, b, x0 + 1};
  EXPECT_EQ(set.size(), 2u);
}

TEST(IndexCanon, OrderIsStructuralAndStrict) {
  EXPECT_FALSE(x < x);
  EXPECT_TRUE(x2 < x10);  // natural order of numbered variables
  EXPECT_FALSE(x10 < x2);
  EXPECT_TRUE(Index(5) < x);
  EXPECT_NE(x < y, y < x);
}

// ---- printing -------------------------------------------------------------------------------------------------

TEST(IndexStr, PrintsMinimalPrecedenceCorrectC) {
  EXPECT_EQ((x0 * 4096 + x1).str(), "x0*4096 + x1");
  EXPECT_EQ((x1 + x0 * 4096).str(), "x0*4096 + x1");
  EXPECT_EQ(floordiv(x0 + 3, 4).str(), "(x0 + 3) / 4");
  EXPECT_EQ(mod(x1, 7).str(), "x1 % 7");
  EXPECT_EQ(mod(floordiv(x0, 3), 7).str(), "(x0 / 3) % 7");
  EXPECT_EQ(min(x0, 5).str(), "min(x0, 5)");
  EXPECT_EQ(max(x0 - 1, 0).str(), "max(x0 - 1, 0)");
  EXPECT_EQ(max(Index(0), x0 - 1), max(x0 - 1, 0));
  EXPECT_EQ((-x0 + 7).str(), "-x0 + 7");
  EXPECT_EQ((x1 - x0 * 3).str(), "-x0*3 + x1");
  EXPECT_EQ((x0 - x1 * 3 - 2).str(), "x0 - x1*3 - 2");
  EXPECT_EQ((floordiv(x, 7) * 7 + mod(x, 7)).str(), "(x / 7)*7 + x % 7");
  EXPECT_EQ(floordiv(x, y * 2).str(), "x / (y*2)");
  EXPECT_EQ(floordiv(x * 4, 3).str(), "x*4 / 3");
  EXPECT_EQ((x2 + x10 + x1).str(), "x1 + x2 + x10");
  EXPECT_EQ(Index(-5).str(), "-5");
  EXPECT_EQ(Index().str(), "<undefined>");
}

// ---- bounds ---------------------------------------------------------------------------------------------------

TEST(IndexBounds, IntervalArithmetic) {
  VarRanges r{{"x", Range::loop(10)}, {"y", Range{-3, 4}}};
  auto check = [&](const Index& e, std::optional<int64_t> lo, std::optional<int64_t> hi) {
    Range b = bounds(e, r);
    EXPECT_EQ(b.lo, lo) << e.str();
    EXPECT_EQ(b.hi, hi) << e.str();
  };
  check(x * 3 + 1, 1, 28);
  check(-x + 7, -2, 7);
  check(x * y, -27, 36);
  check(floordiv(x, 4), 0, 2);
  check(floordiv(y, 2), -2, 2);
  check(mod(x, 4), 0, 3);
  check(mod(x, 20), 0, 9);
  check(mod(x + 20, 30), 20, 29);
  check(min(x, 5), 0, 5);
  check(max(y, 0), 0, 4);
  check(Index::var("free") + 1, std::nullopt, std::nullopt);
  check(min(Index::var("free"), 5), std::nullopt, 5);
  check(mod(Index::var("free"), 8), 0, 7);  // floor mod is in [0, c) for any dividend
}

// ---- simplify: each rule with a case that fires and one that must not ------------------------------------------

TEST(IndexSimplify, PullsMultiplesOutOfFloorDiv) {
  VarRanges r{{"x0", Range::loop(16)}, {"x1", Range::loop(4096)}};
  EXPECT_EQ(simplify(floordiv(x0 * 4096 + x1, 4096), r), x0);
  // Without x1's range only the exact part leaves the division.
  EXPECT_EQ(simplify(floordiv(x0 * 4096 + x1, 4096)).str(), "x0 + x1 / 4096");
  EXPECT_EQ(simplify(floordiv(x0 * 8192 + x1 * 4096, 4096)), x0 * 2 + x1);
  EXPECT_EQ(simplify(floordiv(x0 * 3 + x1, 4096)), floordiv(x0 * 3 + x1, 4096));
}

TEST(IndexSimplify, ModDropsMultiples) {
  EXPECT_EQ(simplify(mod(x0 * 4096 + x1, 4096)), mod(x1, 4096));
  EXPECT_EQ(simplify(mod(x0 * 12 + x1, 4)), mod(x1, 4));  // 4 divides the coefficient 12
  EXPECT_EQ(simplify(mod(x0 - 1, 4)).str(), "(x0 + 3) % 4");
  EXPECT_EQ(simplify(mod(x0 * 3 + x1, 4)), mod(x0 * 3 + x1, 4));
}

// Kernels print floordiv and mod as C's truncating `/` and `%`: a split must not turn a non-negative dividend into a
// rest that may be negative (flip of a reshaped expanded tensor, (19 - x) floordiv 4 over x in [0, 19], printed as
// 4 + (3 - x) / 4, read row 4 for x = 4..6).
TEST(IndexSimplify, SplitsKeepNonNegativeDividendsNonNegative) {
  VarRanges r{{"x0", Range::loop(20)}};
  EXPECT_EQ(simplify(floordiv(19 - x0, 4), r), floordiv(19 - x0, 4));
  EXPECT_EQ(simplify(mod(19 - x0, 4), r), mod(19 - x0, 4));
  EXPECT_EQ(simplify(floordiv(19 - x0, 4), r).str(), "(-x0 + 19) / 4");
  // A rest that stays non-negative still leaves the multiples out, and so does a dividend that may be negative.
  EXPECT_EQ(simplify(floordiv(x0 * 4 + 19, 4), r).str(), "x0 + 4");
  EXPECT_EQ(simplify(floordiv(24 - x0, 4), {{"x0", Range::loop(4)}}).str(), "(-x0 + 24) / 4");
  EXPECT_EQ(simplify(mod(x0 - 1, 4), r).str(), "(x0 + 3) % 4");
}

TEST(IndexSimplify, SmallDividendIsItsOwnRemainder) {
  VarRanges r{{"x", Range::loop(7)}};
  EXPECT_EQ(simplify(floordiv(x, 7), r), Index(0));
  EXPECT_EQ(simplify(mod(x, 7), r), x);
  EXPECT_EQ(simplify(floordiv(x + 14, 7), r), Index(2));
  EXPECT_EQ(simplify(mod(x + 14, 7), r), x);
  EXPECT_EQ(simplify(floordiv(x, 6), r), floordiv(x, 6));
  EXPECT_EQ(simplify(mod(x, 6), r), mod(x, 6));
  // A symbolic divisor known to exceed the dividend.
  VarRanges rs{{"x", Range::loop(7)}, {"s", Range{8, std::nullopt}}};
  Index s = Index::var("s");
  EXPECT_EQ(simplify(mod(x, s), rs), x);
  EXPECT_EQ(simplify(floordiv(x, s), rs), Index(0));
  EXPECT_EQ(simplify(mod(x, s), {{"x", Range::loop(9)}, {"s", Range{8, std::nullopt}}}), mod(x, s));
}

TEST(IndexSimplify, NestedDivisionsMerge) {
  EXPECT_EQ(simplify(floordiv(floordiv(x, 4), 8)), floordiv(x, 32));
  EXPECT_EQ(simplify(floordiv(floordiv(x, y), 8)), floordiv(floordiv(x, y), 8));
}

TEST(IndexSimplify, DivisionOfModBecomesModOfDivision) {
  EXPECT_EQ(simplify(floordiv(mod(x, 24), 4)), mod(floordiv(x, 4), 6));
  EXPECT_EQ(simplify(floordiv(mod(x, 10), 4)), floordiv(mod(x, 10), 4));
}

TEST(IndexSimplify, ModOfMod) {
  EXPECT_EQ(simplify(mod(mod(x, 7), 7)), mod(x, 7));
  EXPECT_EQ(simplify(mod(mod(x, 28), 7)), mod(x, 7));
  EXPECT_EQ(simplify(mod(mod(x, 10), 7)), mod(mod(x, 10), 7));
}

TEST(IndexSimplify, SmallRemainderBelowCommonFactor) {
  // Vectorised index x*4 + v with v < 4: v cannot carry.
  VarRanges r{{"v", Range::loop(4)}};
  Index v = Index::var("v");
  EXPECT_EQ(simplify(floordiv(x * 4 + v, 8), r), floordiv(x, 2));
  EXPECT_EQ(simplify(mod(x * 4 + v, 8), r), mod(x, 2) * 4 + v);
  VarRanges wide{{"v", Range::loop(5)}};
  EXPECT_EQ(simplify(floordiv(x * 4 + v, 8), wide), floordiv(x * 4 + v, 8));
}

TEST(IndexSimplify, MinMaxDecidedByBounds) {
  VarRanges r{{"x", Range::loop(5)}};
  EXPECT_EQ(simplify(min(x, 8), r), x);
  EXPECT_EQ(simplify(max(x, 8), r), Index(8));
  EXPECT_EQ(simplify(max(x, 0), r), x);
  EXPECT_EQ(simplify(min(x, 3), r), min(x, 3));
}

TEST(IndexSimplify, RecombinesQuotientAndRemainder) {
  EXPECT_EQ(simplify(floordiv(x, 7) * 7 + mod(x, 7)), x);
  EXPECT_EQ(simplify(floordiv(x, 7) * 14 + mod(x, 7) * 2 + y), x * 2 + y);
  EXPECT_EQ(simplify(floordiv(x, 7) * 6 + mod(x, 7)), floordiv(x, 7) * 6 + mod(x, 7));
}

TEST(IndexSimplify, ReshapeRoundTrip) {
  // view(x, [24, 7]) then view back: the flat index is rebuilt from its coordinates.
  VarRanges r{{"x", Range::loop(24 * 7)}};
  EXPECT_EQ(simplify(floordiv(x, 7) * 7 + mod(x, 7), r), x);
  // Three levels: [4, 6, 7] coordinates of a flat index recombine through x / 42 == (x / 7) / 6.
  Index three = floordiv(x, 42) * 42 + mod(floordiv(x, 7), 6) * 7 + mod(x, 7);
  EXPECT_EQ(simplify(three, r), x);

  // Coordinates of a flattened (i, j) come back as (i, j).
  VarRanges ij{{"i", Range::loop(4)}, {"j", Range::loop(6)}};
  Index i = Index::var("i");
  Index j = Index::var("j");
  Index f = Index::var("f");
  std::map<std::string, Index> flat{{"f", i * 6 + j}};
  EXPECT_EQ(simplify(substitute(floordiv(f, 6), flat), ij), i);
  EXPECT_EQ(simplify(substitute(mod(f, 6), flat), ij), j);
}

TEST(IndexSimplify, RecombinesOverSymbolicSizes) {
  // The coordinates of a flat index over [s0, s1] and [s0, s1, s2] (unflatten's), read through contiguous strides.
  const Index s0 = Index::var("s0"), s1 = Index::var("s1"), s2 = Index::var("s2");
  const VarRanges r{{"x", Range{0, std::nullopt}}, {"s0", Range{1, std::nullopt}}, {"s1", Range{1, std::nullopt}},
                    {"s2", Range{1, std::nullopt}}};
  EXPECT_EQ(simplify(floordiv(x, s1) * s1 + mod(x, s1), r), x);
  Index three = floordiv(x, s1 * s2) * (s1 * s2) + mod(floordiv(x, s2), s1) * s2 + mod(x, s2);
  EXPECT_EQ(simplify(three, r), x);
  EXPECT_EQ(simplify(floordiv(floordiv(x, s2), s1), r), floordiv(x, s1 * s2));
  // A broadcast read (the column alone) stays as it is.
  EXPECT_EQ(simplify(mod(x, s1), r), mod(x, s1));
  // Every rewrite keeps the value, for many values of the symbols.
  for (const Index& e : {three, floordiv(x, s1) * s1 * 2 + mod(x, s1) * 2 + y, floordiv(floordiv(x, s2), s1) * 3}) {
    const Index simplified = simplify(e, r);
    for (int64_t xv : {0, 1, 5, 17, 63})
      for (int64_t v1 : {1, 2, 3, 7})
        for (int64_t v2 : {1, 4, 5}) {
          const std::map<std::string, int64_t> env{{"x", xv}, {"y", 3}, {"s0", 2}, {"s1", v1}, {"s2", v2}};
          EXPECT_EQ(evaluate(simplified, env), evaluate(e, env)) << e.str() << " -> " << simplified.str();
        }
  }
}

TEST(IndexQueries, EvaluateUsesFloorSemantics) {
  const std::map<std::string, int64_t> env{{"x", -7}, {"y", 2}};
  EXPECT_EQ(evaluate(floordiv(x, 2), env), -4);
  EXPECT_EQ(evaluate(mod(x, 3), env), 2);
  EXPECT_EQ(evaluate(min(x, y) + max(x, y) * y, env), -3);
  EXPECT_EQ(evaluate(x + Index::var("z"), env), std::nullopt);
  EXPECT_EQ(evaluate(floordiv(y, Index::var("z")), {{"y", 2}, {"z", 0}}), std::nullopt);
}

TEST(IndexSimplify, IsIdempotentAndKeepsHandlesWhenUnchanged) {
  Index e = x0 * 4096 + x1;
  EXPECT_EQ(simplify(e).node(), e.node());
  Index messy = floordiv(mod(x, 24), 4) + floordiv(x, 7) * 7 + mod(x, 7);
  EXPECT_EQ(simplify(simplify(messy)), simplify(messy));
}

// ---- property test -------------------------------------------------------------------------------------------

class RandomExpr {
 public:
  explicit RandomExpr(uint32_t seed) : rng_(seed) {}

  Index make(int depth) {
    if (depth == 0 || pick(4) == 0) return leaf();
    Index a = make(depth - 1);
    switch (pick(7)) {
      case 0: return a + make(depth - 1);
      case 1: return a - make(depth - 1);
      case 2: return a * leaf();
      case 3: return floordiv(a, pick_divisor());
      case 4: return mod(a, pick_divisor());
      case 5: return min(a, make(depth - 1));
      default: return max(a, make(depth - 1));
    }
  }

 private:
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  Index leaf() {
    static const Index vars[] = {Index::var("a"), Index::var("b"), Index::var("c")};
    if (pick(3) == 0) return Index(pick(9) - 2);
    return vars[pick(3)];
  }
  Index pick_divisor() {
    static const int64_t divisors[] = {1, 2, 3, 4, 6, 8, 12};
    return divisors[pick(7)];
  }

  std::mt19937 rng_;
};

TEST(IndexSimplify, RandomExpressionsKeepTheirValue) {
  const VarRanges ranges{{"a", Range::loop(6)}, {"b", Range::loop(4)}, {"c", Range{-3, 5}}};
  RandomExpr gen(1234);
  int simplified = 0;
  for (int n = 0; n < 2000; ++n) {
    Index e = gen.make(4);
    Index s = simplify(e, ranges);
    if (s != e) ++simplified;
    ASSERT_EQ(simplify(s, ranges), s) << "not idempotent: " << e.str() << " -> " << s.str();
    for (int64_t a = 0; a < 6; ++a) {
      for (int64_t b = 0; b < 4; ++b) {
        for (int64_t c = -3; c <= 5; ++c) {
          std::map<std::string, int64_t> env{{"a", a}, {"b", b}, {"c", c}};
          int64_t want = eval(e, env);
          ASSERT_EQ(eval(s, env), want) << e.str() << " -> " << s.str() << " at a=" << a << " b=" << b << " c=" << c;
          Range r = bounds(e, ranges);
          if (r.lo) {
            ASSERT_LE(*r.lo, want) << e.str();
          }
          if (r.hi) {
            ASSERT_GE(*r.hi, want) << e.str();
          }
        }
      }
    }
  }
  EXPECT_GT(simplified, 200);  // the generator exercises the rules, not just the factories
}

// ---- substitute / free_vars / affine_coefficient ---------------------------------------------------------------

TEST(IndexQueries, SubstituteCanonicalises) {
  Index e = x * 4 + y;
  EXPECT_EQ(substitute(e, {{"x", y}}), y * 5);
  EXPECT_EQ(substitute(e, {{"x", Index(2)}, {"y", Index(1)}}), Index(9));
  EXPECT_EQ(substitute(e, {{"z", Index(2)}}).node(), e.node());
}

TEST(IndexQueries, FreeVarsAreSortedAndUnique) {
  Index e = floordiv(x1 * y, 4) + mod(x1, 3) + x0;
  EXPECT_EQ(free_vars(e), (std::vector<std::string>{"x0", "x1", "y"}));
  EXPECT_TRUE(free_vars(Index(3)).empty());
}

TEST(IndexQueries, AffineCoefficient) {
  Index s = Index::var("s");
  EXPECT_EQ(affine_coefficient(x * 4 + y, "x"), Index(4));
  EXPECT_EQ(affine_coefficient(x * s + x * 2 + y, "x"), s + 2);
  EXPECT_EQ(affine_coefficient(y + 3, "x"), Index(0));
  EXPECT_EQ(affine_coefficient(x, "x"), Index(1));
  EXPECT_EQ(affine_coefficient(x * x, "x"), std::nullopt);
  EXPECT_EQ(affine_coefficient(floordiv(x, 2) + x, "x"), std::nullopt);
  EXPECT_EQ(affine_coefficient(min(y, 3) * x, "x"), min(y, 3));
}

}  // namespace
}  // namespace hi
