// Pointwise math: exponentials and logarithms, roots, trigonometric and hyperbolic functions, activations (relu,
// gelu, silu, leaky_relu, hardtanh, elu and its backward), special functions (erf, erfinv, lgamma, digamma,
// polygamma, zeta), atan2, hypot. Integer and bool inputs compute in the default float type.
#include <cmath>
#include <optional>
#include <string>

#include "lowering/lowering_context.h"
#include "lowering/op_registry.h"

namespace hi {
namespace {

using lowering::compute_type;
using lowering::GraphLowering;
using lowering::lower_binary;
using lowering::lower_convert;
using lowering::lower_unary;
using lowering::Scalar;
using lowering::scalar_expr;
using lowering::TensorValue;

Metas unary_floating_only(const MetaInference& m, std::string_view what) {
  TensorMeta in = m.tensor("self");
  m.require_floating("self", in.dtype, what);
  return one(in.dtype, in.sizes);
}

Metas gelu(const MetaInference& m) {
  const std::string& approximate = m.arg("approximate").str();
  if (approximate != "none" && approximate != "tanh") {
    m.fail("approximate", "expected 'none' or 'tanh', got '" + approximate + "'");
  }
  return unary_floating_only(m, "gelu");
}

Metas atan2(const MetaInference& m) {
  return one(to_float(m.result_type({"self", "other"})), m.broadcast({"self", "other"}));
}

/// angle of a real tensor: pi below zero, else 0; NaN stays NaN (eager's angle_impl).
std::vector<TensorValue> lower_angle(GraphLowering& L) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor("self");
  DType compute = compute_type(m.dtype);
  return {L.make(m.dtype, m.sizes, {&self}, [&](const std::vector<Index>& c) {
    Expr x = Expr::cast(L.at(self, c), compute);
    Expr negative = Expr::binary(BinaryOp::Lt, x, Expr::constant(0, compute), DType::Bool);
    Expr v = Expr::where(negative, Expr::constant(3.14159265358979323846, compute), Expr::constant(0, compute));
    return Expr::cast(Expr::where(Expr::unary(UnaryOp::IsNan, x), x, v), m.dtype);
  })};
}

std::vector<TensorValue> lower_leaky_relu(GraphLowering& L) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor("self");
  double slope = L.args().get_float("negative_slope");
  DType compute = compute_type(m.dtype);
  return {L.make(m.dtype, m.sizes, {&self}, [&](const std::vector<Index>& c) {
    Expr x = Expr::cast(L.at(self, c), compute);
    Expr pos = Expr::binary(BinaryOp::Gt, x, Expr::constant(0, compute), DType::Bool);
    return Expr::cast(Expr::where(pos, x, Expr::binary(BinaryOp::Mul, x, Expr::constant(slope, compute), compute)),
                      m.dtype);
  })};
}

/// trigamma as PyTorch's calc_trigamma, in x's compute type T: reflection below 0.5, six recurrence steps, then the
/// asymptotic series, whose polynomial eager evaluates in double (its coefficients are double literals) before
/// rounding the sum to T.
Expr trigamma_expr(Expr x, DType t) {
  auto k = [&](double v, DType d) { return Expr::constant(v, d); };
  auto bin = [](BinaryOp op, Expr a, Expr b, DType d) { return Expr::binary(op, std::move(a), std::move(b), d); };
  const DType d = DType::Float64;
  Expr reflect = bin(BinaryOp::Lt, x, k(0.5, t), DType::Bool);
  Expr pi = k(3.14159265358979323846, t);
  Expr s = Expr::unary(UnaryOp::Sin, bin(BinaryOp::Mul, pi, x, t));
  Expr pole = bin(BinaryOp::Div, bin(BinaryOp::Mul, pi, pi, t), bin(BinaryOp::Mul, s, s, t), t);
  Expr result = Expr::where(reflect, bin(BinaryOp::Sub, k(0, t), pole, t), k(0, t));
  Expr sign = Expr::where(reflect, k(-1, t), k(1, t));
  Expr v = Expr::where(reflect, bin(BinaryOp::Sub, k(1, t), x, t), x);
  for (int i = 0; i < 6; ++i) {
    result = bin(BinaryOp::Add, result, bin(BinaryOp::Div, k(1, t), bin(BinaryOp::Mul, v, v, t), t), t);
    v = bin(BinaryOp::Add, v, k(1, t), t);
  }
  Expr ixx = Expr::cast(bin(BinaryOp::Div, k(1, t), bin(BinaryOp::Mul, v, v, t), t), d);
  Expr poly = bin(
      BinaryOp::Mul, ixx,
      bin(BinaryOp::Sub, k(1.0 / 6, d),
          bin(BinaryOp::Mul, ixx, bin(BinaryOp::Sub, k(1.0 / 30, d), bin(BinaryOp::Mul, ixx, k(1.0 / 42, d), d), d), d),
          d),
      d);
  Expr head =
      Expr::cast(bin(BinaryOp::Add, k(1, t), bin(BinaryOp::Div, k(1, t), bin(BinaryOp::Mul, k(2, t), v, t), t), t), d);
  Expr tail = bin(BinaryOp::Div, bin(BinaryOp::Add, head, poly, d), Expr::cast(v, d), d);
  result = Expr::cast(bin(BinaryOp::Add, Expr::cast(result, d), tail, d), t);
  return bin(BinaryOp::Mul, sign, result, t);
}

/// polygamma(n, self) as PyTorch's calc_polygamma, in x's compute type: digamma for n = 0, trigamma for n = 1, else
/// (-1)^(n+1) n! zeta(n + 1, x) with the Hurwitz zeta in double, rounded to that type before the factor multiplies.
std::vector<TensorValue> lower_polygamma(GraphLowering& L) {
  const TensorMeta& m = L.out_meta();
  int64_t n = L.args().get_int("n");
  if (n < 0) L.fail("n must be non-negative, got " + std::to_string(n));
  TensorValue self = L.tensor("self");
  DType compute = compute_type(m.dtype);
  const double factor = (n % 2 ? 1.0 : -1.0) * std::tgamma(static_cast<double>(n) + 1);
  return {L.make(m.dtype, m.sizes, {&self}, [&](const std::vector<Index>& c) {
    Expr x = Expr::cast(L.at(self, c), compute);
    if (n == 0) return Expr::cast(Expr::unary(UnaryOp::Digamma, x), m.dtype);
    if (n == 1) return Expr::cast(trigamma_expr(x, compute), m.dtype);
    Expr z = Expr::binary(BinaryOp::Zeta, Expr::constant(static_cast<double>(n) + 1, DType::Float64),
                          Expr::cast(x, DType::Float64), DType::Float64);
    z = Expr::cast(Expr::cast(z, compute), DType::Float64);
    return Expr::cast(Expr::binary(BinaryOp::Mul, Expr::constant(factor, DType::Float64), z, DType::Float64), m.dtype);
  })};
}

/// elu(self, alpha, scale, input_scale): x * scale where x > 0, else expm1(x * input_scale) * alpha * scale (core
/// ATen on recent PyTorch, which no longer decomposes it).
std::vector<TensorValue> lower_elu(GraphLowering& L) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor("self");
  double alpha = L.args().get_float("alpha"), scale = L.args().get_float("scale");
  double input_scale = L.args().get_float("input_scale");
  DType compute = compute_type(m.dtype);
  auto k = [&](double v) { return Expr::constant(v, compute); };
  return {L.make(m.dtype, m.sizes, {&self}, [&](const std::vector<Index>& c) {
    Expr x = Expr::cast(L.at(self, c), compute);
    Expr neg = Expr::binary(BinaryOp::Mul,
                            Expr::unary(UnaryOp::Expm1, Expr::binary(BinaryOp::Mul, x, k(input_scale), compute)),
                            k(alpha * scale), compute);
    Expr nonpositive = Expr::binary(BinaryOp::Le, x, k(0), DType::Bool);
    return Expr::cast(Expr::where(nonpositive, neg, Expr::binary(BinaryOp::Mul, x, k(scale), compute)), m.dtype);
  })};
}

/// elu_backward(grad_output, alpha, scale, input_scale, is_result, self_or_result), as ATen's kernel: where the
/// saved value is <= 0, grad * input_scale * (result + alpha * scale) from the result, or grad * input_scale * alpha
/// * scale * exp(x * input_scale) from the input; elsewhere grad * scale.
std::vector<TensorValue> lower_elu_backward(GraphLowering& L) {
  const TensorMeta& m = L.out_meta();
  TensorValue grad = L.tensor("grad_output");
  double alpha = L.args().get_float("alpha"), scale = L.args().get_float("scale");
  double input_scale = L.args().get_float("input_scale");
  bool is_result = L.args().get_bool("is_result");
  TensorValue saved = L.tensor("self_or_result");
  DType compute = compute_type(m.dtype);
  auto k = [&](double v) { return Expr::constant(v, compute); };
  return {L.make(m.dtype, m.sizes, {&grad, &saved}, [&](const std::vector<Index>& c) {
    Expr g = Expr::cast(L.at(grad, L.broadcast_coords(grad, m.sizes, c)), compute);
    Expr a = Expr::cast(L.at(saved, L.broadcast_coords(saved, m.sizes, c)), compute);
    Expr slope =
        is_result
            ? Expr::binary(BinaryOp::Mul, k(input_scale), Expr::binary(BinaryOp::Add, a, k(alpha * scale), compute),
                           compute)
            : Expr::binary(BinaryOp::Mul, k(input_scale * alpha * scale),
                           Expr::unary(UnaryOp::Exp, Expr::binary(BinaryOp::Mul, a, k(input_scale), compute)), compute);
    Expr nonpositive = Expr::binary(BinaryOp::Le, a, k(0), DType::Bool);
    Expr d = Expr::where(nonpositive, Expr::binary(BinaryOp::Mul, g, slope, compute),
                         Expr::binary(BinaryOp::Mul, g, k(scale), compute));
    return Expr::cast(d, m.dtype);
  })};
}

std::vector<TensorValue> lower_hardtanh(GraphLowering& L) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor("self");
  double lo = L.args().get_float("min_val"), hi = L.args().get_float("max_val");
  DType compute = compute_type(m.dtype);
  return {L.make(m.dtype, m.sizes, {&self}, [&](const std::vector<Index>& c) {
    Expr x = Expr::cast(L.at(self, c), compute);
    x = Expr::binary(BinaryOp::Maximum, x, Expr::constant(lo, compute), compute);
    return Expr::cast(Expr::binary(BinaryOp::Minimum, x, Expr::constant(hi, compute), compute), m.dtype);
  })};
}

}  // namespace

void register_pointwise_math_ops(OpTable& t) {
  t.lowered(
      "aten::leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor",
      unary_same,
      [](GraphLowering& L, const BoundArgs&) { return lower_leaky_relu(L); });
  t.lowered(
      "aten::hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor",
      unary_same,
      [](GraphLowering& L, const BoundArgs&) { return lower_hardtanh(L); });
  t.lowered(
      "aten::elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor",
      unary_same,
      [](GraphLowering& L, const BoundArgs&) { return lower_elu(L); });
  t.lowered(
      "aten::elu_backward(Tensor grad_output, Scalar alpha, Scalar scale, Scalar input_scale, bool is_result, "
      "Tensor self_or_result) -> Tensor",
      [](const MetaInference& m) { return one(m.tensor("grad_output").dtype, m.tensor("grad_output").sizes); },
      [](GraphLowering& L, const BoundArgs&) { return lower_elu_backward(L); });
  t.lowered(
      "aten::relu(Tensor self) -> Tensor", unary_same,
      [](GraphLowering& L, const BoundArgs&) { return lower_unary(L, UnaryOp::Relu); });
  t.lowered(
      "aten::exp(Tensor self) -> Tensor", unary_float,
      [](GraphLowering& L, const BoundArgs&) { return lower_unary(L, UnaryOp::Exp); });
  t.lowered(
      "aten::exp2(Tensor self) -> Tensor", unary_float,
      [](GraphLowering& L, const BoundArgs&) { return lower_unary(L, UnaryOp::Exp2); });
  t.lowered(
      "aten::expm1(Tensor self) -> Tensor", unary_float,
      [](GraphLowering& L, const BoundArgs&) { return lower_unary(L, UnaryOp::Expm1); });
  t.lowered(
      "aten::log(Tensor self) -> Tensor", unary_float,
      [](GraphLowering& L, const BoundArgs&) { return lower_unary(L, UnaryOp::Log); });
  t.lowered(
      "aten::log2(Tensor self) -> Tensor", unary_float,
      [](GraphLowering& L, const BoundArgs&) { return lower_unary(L, UnaryOp::Log2); });
  t.lowered(
      "aten::log1p(Tensor self) -> Tensor", unary_float,
      [](GraphLowering& L, const BoundArgs&) { return lower_unary(L, UnaryOp::Log1p); });
  t.lowered(
      "aten::sqrt(Tensor self) -> Tensor", unary_float,
      [](GraphLowering& L, const BoundArgs&) { return lower_unary(L, UnaryOp::Sqrt); });
  t.lowered(
      "aten::rsqrt(Tensor self) -> Tensor", unary_float,
      [](GraphLowering& L, const BoundArgs&) { return lower_unary(L, UnaryOp::Rsqrt); });
  t.lowered(
      "aten::reciprocal(Tensor self) -> Tensor", unary_float,
      [](GraphLowering& L, const BoundArgs&) { return lower_unary(L, UnaryOp::Reciprocal); });
  t.lowered(
      "aten::tanh(Tensor self) -> Tensor", unary_float,
      [](GraphLowering& L, const BoundArgs&) { return lower_unary(L, UnaryOp::Tanh); });
  t.lowered(
      "aten::sigmoid(Tensor self) -> Tensor", unary_float,
      [](GraphLowering& L, const BoundArgs&) { return lower_unary(L, UnaryOp::Sigmoid); });
  t.lowered(
      "aten::erf(Tensor self) -> Tensor", unary_float,
      [](GraphLowering& L, const BoundArgs&) { return lower_unary(L, UnaryOp::Erf); });
  t.lowered(
      "aten::sin(Tensor self) -> Tensor", unary_float,
      [](GraphLowering& L, const BoundArgs&) { return lower_unary(L, UnaryOp::Sin); });
  t.lowered(
      "aten::cos(Tensor self) -> Tensor", unary_float,
      [](GraphLowering& L, const BoundArgs&) { return lower_unary(L, UnaryOp::Cos); });
  t.lowered(
      "aten::tan(Tensor self) -> Tensor", unary_float,
      [](GraphLowering& L, const BoundArgs&) { return lower_unary(L, UnaryOp::Tan); });
  t.lowered(
      "aten::atan(Tensor self) -> Tensor", unary_float,
      [](GraphLowering& L, const BoundArgs&) { return lower_unary(L, UnaryOp::Atan); });
  t.lowered(
      "aten::asin(Tensor self) -> Tensor", unary_float,
      [](GraphLowering& L, const BoundArgs&) { return lower_unary(L, UnaryOp::Asin); });
  t.lowered(
      "aten::acos(Tensor self) -> Tensor", unary_float,
      [](GraphLowering& L, const BoundArgs&) { return lower_unary(L, UnaryOp::Acos); });
  t.lowered(
      "aten::sinh(Tensor self) -> Tensor", unary_float,
      [](GraphLowering& L, const BoundArgs&) { return lower_unary(L, UnaryOp::Sinh); });
  t.lowered(
      "aten::cosh(Tensor self) -> Tensor", unary_float,
      [](GraphLowering& L, const BoundArgs&) { return lower_unary(L, UnaryOp::Cosh); });
  t.lowered(
      "aten::asinh(Tensor self) -> Tensor", unary_float,
      [](GraphLowering& L, const BoundArgs&) { return lower_unary(L, UnaryOp::Asinh); });
  t.lowered(
      "aten::acosh(Tensor self) -> Tensor", unary_float,
      [](GraphLowering& L, const BoundArgs&) { return lower_unary(L, UnaryOp::Acosh); });
  t.lowered(
      "aten::atanh(Tensor self) -> Tensor", unary_float,
      [](GraphLowering& L, const BoundArgs&) { return lower_unary(L, UnaryOp::Atanh); });
  t.lowered(
      "aten::erfc(Tensor self) -> Tensor", unary_float,
      [](GraphLowering& L, const BoundArgs&) { return lower_unary(L, UnaryOp::Erfc); });
  t.lowered(
      "aten::log10(Tensor self) -> Tensor", unary_float,
      [](GraphLowering& L, const BoundArgs&) { return lower_unary(L, UnaryOp::Log10); });
  t.lowered(
      "aten::atan2(Tensor self, Tensor other) -> Tensor", atan2,
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::Atan2, false); });
  t.lowered(
      "aten::hypot(Tensor self, Tensor other) -> Tensor",
      [](const MetaInference& m) { return broadcast_binary(m, "self", "other"); },
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::Hypot, false); });
  t.lowered(
      "aten::gelu(Tensor self, *, str approximate=\"none\") -> Tensor", gelu,
      [](GraphLowering& L, const BoundArgs& a) {
        const std::string& approx = a.get_str("approximate");
        if (approx != "none" && approx != "tanh") L.fail("approximate must be 'none' or 'tanh', got '" + approx + "'");
        return lower_unary(L, approx == "tanh" ? UnaryOp::GeluTanh : UnaryOp::GeluErf);
      });
  t.lowered(
      "aten::silu(Tensor self) -> Tensor", [](const MetaInference& m) { return unary_floating_only(m, "silu"); },
      [](GraphLowering& L, const BoundArgs&) { return lower_unary(L, UnaryOp::Silu); });
  t.lowered(
      "aten::angle(Tensor self) -> Tensor", unary_float,
      [](GraphLowering& L, const BoundArgs&) { return lower_angle(L); });
  t.lowered(
      "aten::lgamma(Tensor self) -> Tensor", unary_float,
      [](GraphLowering& L, const BoundArgs&) { return lower_unary(L, UnaryOp::Lgamma); });
  t.lowered(
      "aten::digamma(Tensor self) -> Tensor", unary_float,
      [](GraphLowering& L, const BoundArgs&) { return lower_unary(L, UnaryOp::Digamma); });
  t.lowered(
      "aten::polygamma(int n, Tensor self) -> Tensor", unary_float,
      [](GraphLowering& L, const BoundArgs&) { return lower_polygamma(L); });
  t.lowered(
      "aten::special_zeta(Tensor self, Tensor other) -> Tensor", true_divide,
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::Zeta, false); });
  t.lowered(
      "aten::special_zeta.self_scalar(Scalar self, Tensor other) -> Tensor",
      true_divide,
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::Zeta, false); });
  t.lowered(
      "aten::special_zeta.other_scalar(Tensor self, Scalar other) -> Tensor",
      true_divide,
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::Zeta, true); });
  t.lowered(
      "aten::erfinv(Tensor self) -> Tensor", unary_float,
      [](GraphLowering& L, const BoundArgs&) { return lower_unary(L, UnaryOp::Erfinv); });
}

}  // namespace hi
