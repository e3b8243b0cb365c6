// Results eager defines to the bit: which zero relu, clamp, maximum and their relatives return on ties of +0 and -0
// (seen through 1 / x), and std of 16-bit floats rounded once, from the variance as accumulated.
#include <gtest/gtest.h>

#include <cmath>

#include "run_on_cpu.h"
#include "tests/common/graph_builder.h"

namespace hi {
namespace {

using test::A;
using test::F;

/// Eager CPU (std::max(x, 0), std::min(std::max(x, lo), hi), fmax's NaN-ignoring form) keeps the first operand on a
/// tie of +0 and -0: 1 / relu(-0.0) is -inf, 1 / clamp(-0.0, min=0.0) is -inf, 1 / maximum(-0.0, +0.0) is -inf.
TEST(SignedZeros, TiesKeepTheFirstOperandAsEagerDoes) {
  for (DType dt : {DType::Float32, DType::BFloat16, DType::Float64}) {
    SCOPED_TRACE(dtype_name(dt));
    test::GraphBuilder g;
    const std::vector<Index> s = {4, 67};  // vector groups and a scalar tail
    ValueRef x = g.input("x", dt, s);
    ValueRef y = g.input("y", dt, s);
    // +-0 by the sign of the random inputs: every combination of the two zeros occurs.
    ValueRef zx = g.call_inferred("zx", "aten.mul.Tensor", {A(x), F(0.0)});
    ValueRef zy = g.call_inferred("zy", "aten.mul.Tensor", {A(y), F(0.0)});
    auto inverse = [&](const std::string& name, ValueRef v) {
      g.output(g.call_inferred(name + "_inv", "aten.reciprocal.default", {A(v)}));
    };
    inverse("relu", g.call_inferred("relu", "aten.relu.default", {A(zx)}));
    inverse("maximum", g.call_inferred("maximum", "aten.maximum.default", {A(zx), A(zy)}));
    inverse("minimum", g.call_inferred("minimum", "aten.minimum.default", {A(zx), A(zy)}));
    inverse("fmax", g.call_inferred("fmax", "aten.fmax.default", {A(zx), A(zy)}));
    inverse("fmin", g.call_inferred("fmin", "aten.fmin.default", {A(zx), A(zy)}));
    inverse("clamp", g.call_inferred("clamp", "aten.clamp.default", {A(zx), F(0.0), F(0.0)}));
    inverse("clamp_t", g.call_inferred("clamp_t", "aten.clamp.Tensor", {A(zx), A(zy), A(zy)}));
    inverse("clamp_min", g.call_inferred("clamp_min", "aten.clamp_min.default", {A(zx), F(-0.0)}));
    inverse("clamp_max", g.call_inferred("clamp_max", "aten.clamp_max.default", {A(zx), F(0.0)}));
    inverse("hardtanh", g.call_inferred("hardtanh", "aten.hardtanh.default", {A(zx), F(0.0), F(1.0)}));
    NumericsCheck r = test::run_on_cpu(g.graph(), "cpu");
    ASSERT_EQ(r.actual.size(), r.expected.size());
    for (size_t o = 0; o < r.actual.size(); ++o) {
      const std::vector<double> got = r.actual[o].values(), want = r.expected[o].values();
      int minus = 0;
      for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_TRUE(std::isinf(want[i])) << "output " << o << " element " << i;
        minus += want[i] < 0;
        ASSERT_EQ(got[i], want[i]) << "output " << o << " element " << i << "\n" << kernels_text(r.compiled->module);
      }
      EXPECT_GT(minus, 0) << "output " << o << ": no -0 result, the test shows nothing";
    }
  }
}

/// The reference interpreter holds eager's answers, so the test above compares with them: spelled out here.
TEST(SignedZeros, ReferenceFollowsEager) {
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {2});
  g.output(g.call_inferred("relu", "aten.relu.default", {A(x)}));
  g.output(g.call_inferred("maximum", "aten.maximum.default", {A(x), A(g.call_inferred("n", "aten.neg.default", {A(x)}))}));
  HostTensor in = HostTensor::from_values(DType::Float32, {2}, {-0.0, 0.0});
  std::vector<HostTensor> out = evaluate_graph(g.graph(), {in});
  EXPECT_TRUE(std::signbit(out[0].values()[0]));   // relu(-0) = -0
  EXPECT_FALSE(std::signbit(out[0].values()[1]));  // relu(+0) = +0
  EXPECT_TRUE(std::signbit(out[1].values()[0]));   // maximum(-0, +0) = -0
  EXPECT_FALSE(std::signbit(out[1].values()[1]));  // maximum(+0, -0) = +0
}

/// std of bf16 / fp16: the root of the float variance, rounded once. Rounding the variance to the 16-bit type first
/// and then its root is off by one ulp in about one element of eight; the tolerance here is below half an ulp.
TEST(Rounding, StdOfHalfTypesRoundsOnce) {
  for (DType dt : {DType::BFloat16, DType::Float16}) {
    SCOPED_TRACE(dtype_name(dt));
    test::GraphBuilder g;
    ValueRef x = g.input("x", dt, {256, 40});
    g.output(g.call_inferred("std", "aten.std.correction", {A(x), test::L({1})}));
    g.output(g.call_inferred("std_all", "aten.std.correction", {A(x), test::L({0})}));
    const double half_ulp = dt == DType::BFloat16 ? 1.0 / 256 : 1.0 / 2048;
    test::expect_matches(test::run_on_cpu(g.graph(), "cpu"), half_ulp / 2, 0);
  }
}

}  // namespace
}  // namespace hi
