// References of the pointwise math ops (lowering/ops/pointwise_math.cpp), in double and rounded to the result
// dtype; integer input converted to the default float type first.
#include <cmath>
#include <cstdlib>
#include <string>

#include "testing/reference/families.h"
#include "testing/reference_context.h"

namespace hi::reference {
namespace {

/// A reference through the evaluator's shared pointwise machinery (reference_eval.cpp).
ReferenceFn binary(Binary op, bool has_alpha, bool reversed = false) {
  return [=](GraphEvaluator& E, const BoundArgs&) { return E.binary(op, has_alpha, reversed); };
}
ReferenceFn unary(Unary op) {
  return [=](GraphEvaluator& E, const BoundArgs&) { return E.unary(op); };
}

/// polygamma(n, self): digamma for n = 0, else (-1)^(n+1) n! zeta(n + 1, x).
std::vector<HostTensor> polygamma(GraphEvaluator& E, const BoundArgs& args) {
  int64_t n = args.get_int("n");
  if (n < 0) E.fail("polygamma's n must be non-negative");
  const HostTensor& self = E.tensor("self");
  HostTensor out = E.output();
  std::vector<double> v = self.values();
  const double factor = (n % 2 ? 1.0 : -1.0) * std::tgamma(static_cast<double>(n) + 1);
  const DType t = opmath_type(out.dtype);
  for (double& x : v) {
    x = round_to_dtype(t, x);
    x = n == 0   ? digamma(x)
        : n == 1 ? hurwitz_zeta(2, x)
                 : factor * round_to_dtype(t, hurwitz_zeta(static_cast<double>(n) + 1, x));
  }
  return {E.output_from_values(0, v)};
}

}  // namespace

void register_pointwise_math_references(ReferenceTable& t) {
  t.add("aten.leaky_relu.default", [](GraphEvaluator& E, const BoundArgs& a) {
    double s = round_to_dtype(opmath_type(E.out_meta().dtype), a.get_float("negative_slope"));
    return E.elementwise([=](double x) { return x > 0 ? x : x * s; });
  });
  t.add("aten.hardtanh.default", [](GraphEvaluator& E, const BoundArgs& a) {
    double lo = a.get_float("min_val"), hi = a.get_float("max_val");
    return E.elementwise([=](double x) { return nan_min(nan_max(x, lo), hi); });
  });
  t.add("aten.elu.default", [](GraphEvaluator& E, const BoundArgs& a) {
    double alpha = a.get_float("alpha"), scale = a.get_float("scale"), input_scale = a.get_float("input_scale");
    return E.elementwise([=](double x) { return x <= 0 ? std::expm1(x * input_scale) * alpha * scale : x * scale; });
  });
  t.add("aten.elu_backward.default", [](GraphEvaluator& E, const BoundArgs& a) {
    double alpha = a.get_float("alpha"), scale = a.get_float("scale"), input_scale = a.get_float("input_scale");
    bool is_result = a.get_bool("is_result");
    std::vector<double> g = E.tensor("grad_output").values(), r = E.tensor("self_or_result").values();
    for (size_t i = 0; i < g.size(); ++i) {
      double slope =
          is_result ? input_scale * (r[i] + alpha * scale) : input_scale * alpha * scale * std::exp(r[i] * input_scale);
      g[i] *= r[i] <= 0 ? slope : scale;
    }
    return std::vector<HostTensor>{E.output_from_values(0, g)};
  });
  t.add("aten.relu.default", unary(Unary::Relu));
  t.add("aten.exp.default", unary(Unary::Exp));
  t.add("aten.exp2.default", unary(Unary::Exp2));
  t.add("aten.expm1.default", unary(Unary::Expm1));
  t.add("aten.log.default", unary(Unary::Log));
  t.add("aten.log2.default", unary(Unary::Log2));
  t.add("aten.log1p.default", unary(Unary::Log1p));
  t.add("aten.sqrt.default", unary(Unary::Sqrt));
  t.add("aten.rsqrt.default", unary(Unary::Rsqrt));
  t.add("aten.reciprocal.default", unary(Unary::Reciprocal));
  t.add("aten.tanh.default", unary(Unary::Tanh));
  t.add("aten.sigmoid.default", unary(Unary::Sigmoid));
  t.add("aten.erf.default", unary(Unary::Erf));
  t.add("aten.sin.default", unary(Unary::Sin));
  t.add("aten.cos.default", unary(Unary::Cos));
  t.add("aten.tan.default", unary(Unary::Tan));
  t.add("aten.atan.default", unary(Unary::Atan));
  t.add("aten.asin.default", unary(Unary::Asin));
  t.add("aten.acos.default", unary(Unary::Acos));
  t.add("aten.sinh.default", unary(Unary::Sinh));
  t.add("aten.cosh.default", unary(Unary::Cosh));
  t.add("aten.asinh.default", unary(Unary::Asinh));
  t.add("aten.acosh.default", unary(Unary::Acosh));
  t.add("aten.atanh.default", unary(Unary::Atanh));
  t.add("aten.erfc.default", unary(Unary::Erfc));
  t.add("aten.log10.default", unary(Unary::Log10));
  t.add("aten.atan2.default", binary(Binary::Atan2, false));
  t.add("aten.hypot.default", binary(Binary::Hypot, false));
  t.add("aten.gelu.default", [](GraphEvaluator& E, const BoundArgs& a) {
    const std::string& approx = a.get_str("approximate");
    if (approx != "none" && approx != "tanh") E.fail("approximate must be 'none' or 'tanh', got '" + approx + "'");
    return E.unary(approx == "tanh" ? Unary::GeluTanh : Unary::GeluErf);
  });
  t.add("aten.silu.default", unary(Unary::Silu));
  t.add("aten.angle.default", [](GraphEvaluator& E, const BoundArgs&) {
    return E.elementwise([](double x) { return std::isnan(x) ? x : x < 0 ? 3.14159265358979323846 : 0.0; });
  });
  t.add("aten.lgamma.default", unary(Unary::Lgamma));
  t.add("aten.digamma.default", unary(Unary::Digamma));
  t.add("aten.polygamma.default", polygamma);
  t.add("aten.special_zeta.default", binary(Binary::Zeta, false));
  t.add("aten.special_zeta.self_scalar", binary(Binary::Zeta, false));
  t.add("aten.special_zeta.other_scalar", binary(Binary::Zeta, false));
  t.add("aten.erfinv.default", unary(Unary::Erfinv));
}

}  // namespace hi::reference
