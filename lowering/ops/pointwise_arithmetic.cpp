// Pointwise arithmetic: add, sub, rsub, mul, div (true, trunc, floor), fmod, remainder, maximum / minimum, fmax /
// fmin, pow, neg, abs, sign, rounding, copysign, nextafter, ldexp, bitwise ops, and dtype conversions (_to_copy,
// convert_element_type, clone). Half types compute in float32 and round once to the result type.
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

Metas add_sub(const MetaInference& m, bool is_sub) {
  DType t = m.result_type({"self", "other"});
  if (is_sub && m.tensor("self").dtype == DType::Bool && m.tensor("other").dtype == DType::Bool) {
    m.fail("other", "subtraction of two bool tensors is not supported (use logical_xor)");
  }
  if (is_integral_or_bool(t) && m.arg("alpha").kind() == Arg::Kind::Float) {
    m.fail("alpha",
           "must not be a floating-point number for integral inputs (result " + std::string(dtype_name(t)) + ")");
  }
  return one(t, m.broadcast({"self", "other"}));
}

Metas divide_mode(const MetaInference& m) {
  const Arg& mode = m.arg("rounding_mode");
  if (mode.is_none()) return true_divide(m);
  if (mode.str() != "trunc" && mode.str() != "floor") {
    m.fail("rounding_mode", "expected None, 'trunc' or 'floor', got '" + mode.str() + "'");
  }
  return broadcast_binary(m, "self", "other");
}

Metas bitwise_binary(const MetaInference& m) {
  DType t = m.result_type({"self", "other"});
  if (!is_integral_or_bool(t))
    m.fail("other", "bitwise ops need integer or bool operands, got " + std::string(dtype_name(t)));
  return one(t, m.broadcast({"self", "other"}));
}

/// Shifts: bitwise ops' promotion, integer operands only (PyTorch defines no shift of bool or floating tensors).
Metas shift(const MetaInference& m) {
  DType t = m.result_type({"self", "other"});
  if (!is_integral_or_bool(t) || t == DType::Bool)
    m.fail("other", "shifts need integer operands, got " + std::string(dtype_name(t)));
  return one(t, m.broadcast({"self", "other"}));
}

Metas neg(const MetaInference& m) {
  TensorMeta in = m.tensor("self");
  if (in.dtype == DType::Bool) m.fail("self", "negation of a bool tensor is not supported (use logical_not)");
  return one(in.dtype, in.sizes);
}

Metas bitwise_not(const MetaInference& m) {
  TensorMeta in = m.tensor("self");
  if (!is_integral_or_bool(in.dtype)) {
    m.fail("self", "bitwise_not needs an integer or bool tensor, got " + std::string(dtype_name(in.dtype)));
  }
  return one(in.dtype, in.sizes);
}

Metas to_dtype(const MetaInference& m, std::string_view dtype_arg, std::string_view input) {
  TensorMeta in = m.tensor(input);
  return one(m.given(dtype_arg) ? m.arg(dtype_arg).dtype() : in.dtype, in.sizes);
}

Metas round_decimals(const MetaInference& m) {
  m.int_arg("decimals");
  return unary_same(m);
}

Metas copysign(const MetaInference& m) {
  return one(to_float(m.result_type({"self", "other"})), m.broadcast({"self", "other"}));
}

Metas nextafter(const MetaInference& m) {
  DType t = m.result_type({"self", "other"});
  m.require_floating("self", t, "nextafter");
  return one(t, m.broadcast({"self", "other"}));
}

/// rsub: other - alpha * self.
std::vector<TensorValue> lower_rsub(GraphLowering& L, bool scalar_other) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor("self");
  std::optional<TensorValue> other;
  std::optional<Scalar> other_scalar;
  const Arg& a = L.args().get("other");
  if (!scalar_other && a.is_tensor())
    other = L.tensor("other");
  else
    other_scalar = L.scalar("other");
  std::optional<Scalar> alpha = L.scalar("alpha");
  std::vector<const TensorValue*> ts{&self};
  if (other) ts.push_back(&*other);
  std::vector<Scalar> ss;
  if (other_scalar) ss.push_back(*other_scalar);
  DType compute = compute_type(operand_type(ts, ss));
  if (is_floating(m.dtype) && !is_floating(compute)) compute = compute_type(m.dtype);
  return {L.make(m.dtype, m.sizes, ts, [&](const std::vector<Index>& c) {
    Expr x = Expr::cast(L.at(self, L.broadcast_coords(self, m.sizes, c)), compute);
    Expr y = other ? Expr::cast(L.at(*other, L.broadcast_coords(*other, m.sizes, c)), compute)
                   : scalar_expr(*other_scalar, compute);
    if (alpha && alpha->value != 1) x = Expr::binary(BinaryOp::Mul, x, scalar_expr(*alpha, compute), compute);
    return Expr::cast(Expr::binary(BinaryOp::Sub, y, x, compute), m.dtype);
  })};
}

/// div with rounding_mode: None is true division, "trunc" / "floor" round the quotient (integers: exact).
std::vector<TensorValue> lower_div_mode(GraphLowering& L, bool scalar_other) {
  std::string mode = L.args().str_or("rounding_mode", "");
  if (mode.empty()) return lower_binary(L, BinaryOp::Div, scalar_other);
  if (mode != "trunc" && mode != "floor") L.fail("rounding_mode must be None, 'trunc' or 'floor', got '" + mode + "'");
  const TensorMeta& m = L.out_meta();
  if (mode == "trunc" && L.args().get("other").is_tensor() && is_floating(m.dtype) && dtype_bytes(m.dtype) == 2) {
    // CPU and CUDA eager divide 16-bit tensors in float, round the quotient to the 16-bit type (c10::BFloat16's
    // operator/), then truncate: bf16 -6.3125 / 1.0547 is -5.985 in float, -6.0 rounded, so -6 where trunc in
    // float gives -5. A Python-number divisor keeps the float quotient (bf16 22.375 / 0.7 truncates to 31).
    std::vector<TensorValue> q = lower_binary(L, BinaryOp::Div, scalar_other);
    q[0].body = Expr::cast(Expr::unary(UnaryOp::Trunc, Expr::cast(q[0].body, DType::Float32)), m.dtype);
    return q;
  }
  return lower_binary(L, mode == "trunc" ? BinaryOp::TruncDiv : BinaryOp::FloorDiv, scalar_other);
}

/// pow.Tensor_Scalar with the exponents PyTorch's kernels special-case (CUDA's pow_tensor_scalar_kernel; the CPU's
/// does the same for float types): 0.5, -0.5 and -1 as sqrt, rsqrt and reciprocal, 2, 3 and -2 as products in the
/// tensor's type, so a 16-bit x ** 3 rounds x * x before the second multiply, as eager's does. A general pow costs
/// about 70 instructions (GPT-2's tanh gelu, x ** 3 of 4096 x 3072 bf16 values: 59 us on the H200, Inductor 16 us).
std::vector<TensorValue> lower_pow_tensor_scalar(GraphLowering& L) {
  auto e = L.scalar("exponent");
  const TensorMeta& m = L.out_meta();
  const double k = e ? e->value : 0.0;
  const bool special =
      e && (k == 2 || k == 3 || (is_floating(m.dtype) && (k == 0.5 || k == -0.5 || k == -1 || k == -2)));
  if (!special) return lower_binary(L, BinaryOp::Pow, true);
  TensorValue self = L.tensor("self");
  DType compute = compute_type(m.dtype);
  return {L.make(m.dtype, m.sizes, {&self}, [&](const std::vector<Index>& c) {
    Expr v = Expr::cast(L.at(self, c), compute);
    // A product in the tensor's type: rounded to it where that is narrower than the compute type.
    auto mul = [&](const Expr& a, const Expr& b) {
      return Expr::cast(Expr::cast(Expr::binary(BinaryOp::Mul, a, b, compute), m.dtype), compute);
    };
    Expr r;
    if (k == 0.5)
      r = Expr::unary(UnaryOp::Sqrt, v);
    else if (k == -0.5)
      r = Expr::unary(UnaryOp::Rsqrt, v);
    else if (k == -1)
      r = Expr::unary(UnaryOp::Reciprocal, v);
    else if (k == 2)
      r = Expr::binary(BinaryOp::Mul, v, v, compute);
    else if (k == 3)
      r = Expr::binary(BinaryOp::Mul, mul(v, v), v, compute);
    else
      r = Expr::unary(UnaryOp::Reciprocal, mul(v, v));
    return Expr::cast(r, m.dtype);
  })};
}

/// pow.Scalar: a number raised to a tensor.
std::vector<TensorValue> lower_pow_scalar(GraphLowering& L) {
  const TensorMeta& m = L.out_meta();
  auto base = L.scalar("self");
  if (!base) L.fail("missing argument 'self'");
  TensorValue e = L.tensor("exponent");
  DType compute = compute_type(m.dtype);
  return {L.make(m.dtype, m.sizes, {&e}, [&](const std::vector<Index>& c) {
    Expr x = Expr::cast(L.at(e, c), compute);
    return Expr::cast(Expr::binary(BinaryOp::Pow, scalar_expr(*base, compute), x, compute), m.dtype);
  })};
}

/// round.decimals: round(x * 10^d) / 10^d (d < 0: round(x / 10^-d) * 10^-d), as eager computes it.
std::vector<TensorValue> lower_round_decimals(GraphLowering& L) {
  int64_t decimals = L.args().get_int("decimals");
  if (decimals == 0) return lower_unary(L, UnaryOp::Round);
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor("self");
  DType compute = compute_type(m.dtype);
  if (!is_floating(compute)) return lower_convert(L);
  double scale = std::pow(10.0, static_cast<double>(std::llabs(decimals)));
  return {L.make(m.dtype, m.sizes, {&self}, [&](const std::vector<Index>& c) {
    Expr x = Expr::cast(L.at(self, c), compute);
    Expr k = Expr::constant(scale, compute);
    BinaryOp in = decimals > 0 ? BinaryOp::Mul : BinaryOp::Div, out = decimals > 0 ? BinaryOp::Div : BinaryOp::Mul;
    Expr r = Expr::unary(UnaryOp::Round, Expr::binary(in, x, k, compute));
    return Expr::cast(Expr::binary(out, r, k, compute), m.dtype);
  })};
}

/// ldexp(self, other) = self * 2 ** other, in the (floating) result type, as eager computes it (PyTorch 2.11 keeps
/// it whole; earlier releases decompose it so).
std::vector<TensorValue> lower_ldexp(GraphLowering& L) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor("self");
  TensorValue other = L.tensor("other");
  DType compute = compute_type(m.dtype);
  return {L.make(m.dtype, m.sizes, {&self, &other}, [&](const std::vector<Index>& c) {
    Expr x = Expr::cast(L.at(self, L.broadcast_coords(self, m.sizes, c)), compute);
    Expr e = Expr::cast(L.at(other, L.broadcast_coords(other, m.sizes, c)), compute);
    Expr scale = Expr::binary(BinaryOp::Pow, Expr::constant(2, compute), e, compute);
    return Expr::cast(Expr::binary(BinaryOp::Mul, x, scale, compute), m.dtype);
  })};
}

}  // namespace

void register_pointwise_arithmetic_ops(OpTable& t) {
  t.lowered(
      "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
      [](const MetaInference& m) { return add_sub(m, false); },
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::Add, false, true); });
  t.lowered(
      "aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
      [](const MetaInference& m) { return add_sub(m, false); },
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::Add, true, true); });
  t.lowered(
      "aten::sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
      [](const MetaInference& m) { return add_sub(m, true); },
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::Sub, false, true); });
  t.lowered(
      "aten::sub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
      [](const MetaInference& m) { return add_sub(m, true); },
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::Sub, true, true); });
  t.lowered(
      "aten::rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
      [](const MetaInference& m) { return add_sub(m, true); },
      [](GraphLowering& L, const BoundArgs&) { return lower_rsub(L, false); });
  t.lowered(
      "aten::rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
      [](const MetaInference& m) { return add_sub(m, true); },
      [](GraphLowering& L, const BoundArgs&) { return lower_rsub(L, true); });
  t.lowered(
      "aten::mul.Tensor(Tensor self, Tensor other) -> Tensor",
      [](const MetaInference& m) { return broadcast_binary(m, "self", "other"); },
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::Mul, false); });
  t.lowered(
      "aten::mul.Scalar(Tensor self, Scalar other) -> Tensor",
      [](const MetaInference& m) { return broadcast_binary(m, "self", "other"); },
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::Mul, true); });
  t.lowered(
      "aten::div.Tensor(Tensor self, Tensor other) -> Tensor", true_divide,
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::Div, false); });
  t.lowered(
      "aten::div.Scalar(Tensor self, Scalar other) -> Tensor", true_divide,
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::Div, true); });
  t.lowered(
      "aten::div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor",
      divide_mode,
      [](GraphLowering& L, const BoundArgs&) { return lower_div_mode(L, false); });
  t.lowered(
      "aten::div.Scalar_mode(Tensor self, Scalar other, *, str? rounding_mode) -> Tensor",
      divide_mode,
      [](GraphLowering& L, const BoundArgs&) { return lower_div_mode(L, true); });
  t.lowered(
      "aten::fmod.Tensor(Tensor self, Tensor other) -> Tensor",
      [](const MetaInference& m) { return broadcast_binary(m, "self", "other"); },
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::Fmod, false); });
  t.lowered(
      "aten::fmod.Scalar(Tensor self, Scalar other) -> Tensor",
      [](const MetaInference& m) { return broadcast_binary(m, "self", "other"); },
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::Fmod, true); });
  t.lowered(
      "aten::remainder.Tensor(Tensor self, Tensor other) -> Tensor",
      [](const MetaInference& m) { return broadcast_binary(m, "self", "other"); },
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::Remainder, false); });
  t.lowered(
      "aten::remainder.Scalar(Tensor self, Scalar other) -> Tensor",
      [](const MetaInference& m) { return broadcast_binary(m, "self", "other"); },
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::Remainder, true); });
  t.lowered(
      "aten::maximum(Tensor self, Tensor other) -> Tensor",
      [](const MetaInference& m) { return broadcast_binary(m, "self", "other"); },
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::Maximum, false); });
  t.lowered(
      "aten::minimum(Tensor self, Tensor other) -> Tensor",
      [](const MetaInference& m) { return broadcast_binary(m, "self", "other"); },
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::Minimum, false); });
  t.lowered(
      "aten::pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor",
      [](const MetaInference& m) { return broadcast_binary(m, "self", "exponent"); },
      [](GraphLowering& L, const BoundArgs&) { return lower_pow_tensor_scalar(L); });
  t.lowered(
      "aten::pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor",
      [](const MetaInference& m) { return broadcast_binary(m, "self", "exponent"); },
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::Pow, false); });
  t.lowered(
      "aten::pow.Scalar(Scalar self, Tensor exponent) -> Tensor",
      [](const MetaInference& m) { return broadcast_binary(m, "self", "exponent"); },
      [](GraphLowering& L, const BoundArgs&) { return lower_pow_scalar(L); });
  t.lowered(
      "aten::neg(Tensor self) -> Tensor", neg,
      [](GraphLowering& L, const BoundArgs&) { return lower_unary(L, UnaryOp::Neg); });
  t.lowered(
      "aten::abs(Tensor self) -> Tensor", unary_same,
      [](GraphLowering& L, const BoundArgs&) { return lower_unary(L, UnaryOp::Abs); });
  t.lowered(
      "aten::sign(Tensor self) -> Tensor", unary_same,
      [](GraphLowering& L, const BoundArgs&) { return lower_unary(L, UnaryOp::Sign); });
  t.lowered(
      "aten::floor(Tensor self) -> Tensor", unary_same,
      [](GraphLowering& L, const BoundArgs&) { return lower_unary(L, UnaryOp::Floor); });
  t.lowered(
      "aten::ceil(Tensor self) -> Tensor", unary_same,
      [](GraphLowering& L, const BoundArgs&) { return lower_unary(L, UnaryOp::Ceil); });
  t.lowered(
      "aten::trunc(Tensor self) -> Tensor", unary_same,
      [](GraphLowering& L, const BoundArgs&) { return lower_unary(L, UnaryOp::Trunc); });
  t.lowered(
      "aten::round(Tensor self) -> Tensor", unary_same,
      [](GraphLowering& L, const BoundArgs&) { return lower_unary(L, UnaryOp::Round); });
  t.lowered(
      "aten::round.decimals(Tensor self, *, int decimals) -> Tensor",
      round_decimals,
      [](GraphLowering& L, const BoundArgs&) { return lower_round_decimals(L); });
  t.lowered(
      "aten::clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor",
      unary_same,
      [](GraphLowering& L, const BoundArgs&) { return lower_convert(L); });
  // A copy of a constant made inside the traced program (torch.tensor(...)): a clone.
  t.lowered(
      "aten::lift_fresh_copy(Tensor self) -> Tensor", unary_same,
      [](GraphLowering& L, const BoundArgs&) { return lower_convert(L); });
  t.lowered(
      "aten::ldexp.Tensor(Tensor self, Tensor other) -> Tensor", true_divide,
      [](GraphLowering& L, const BoundArgs&) { return lower_ldexp(L); });
  t.lowered(
      "aten::bitwise_and.Tensor(Tensor self, Tensor other) -> Tensor",
      bitwise_binary,
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::BitwiseAnd, false); });
  t.lowered(
      "aten::bitwise_and.Scalar(Tensor self, Scalar other) -> Tensor",
      bitwise_binary,
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::BitwiseAnd, true); });
  t.lowered(
      "aten::bitwise_or.Tensor(Tensor self, Tensor other) -> Tensor",
      bitwise_binary,
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::BitwiseOr, false); });
  t.lowered(
      "aten::bitwise_or.Scalar(Tensor self, Scalar other) -> Tensor",
      bitwise_binary,
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::BitwiseOr, true); });
  t.lowered(
      "aten::bitwise_not(Tensor self) -> Tensor", bitwise_not,
      [](GraphLowering& L, const BoundArgs&) { return lower_unary(L, UnaryOp::BitwiseNot); });
  t.lowered(
      "aten::bitwise_xor.Tensor(Tensor self, Tensor other) -> Tensor",
      bitwise_binary,
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::BitwiseXor, false); });
  t.lowered(
      "aten::bitwise_xor.Scalar(Tensor self, Scalar other) -> Tensor",
      bitwise_binary,
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::BitwiseXor, true); });
  // Shifts: the operator overloads (x << n, x >> n) and the functions, with a tensor or a number on either side.
  for (const char* dir : {"left", "right"}) {
    const std::string d = dir, op = d == "left" ? "__lshift__" : "__rshift__";
    const BinaryOp b = d == "left" ? BinaryOp::ShiftLeft : BinaryOp::ShiftRight;
    auto tensor_other = [b](GraphLowering& L, const BoundArgs&) { return lower_binary(L, b, false); };
    auto scalar_other = [b](GraphLowering& L, const BoundArgs&) { return lower_binary(L, b, true); };
    t.lowered("aten::" + op + ".Tensor(Tensor self, Tensor other) -> Tensor", shift, tensor_other);
    t.lowered("aten::" + op + ".Scalar(Tensor self, Scalar other) -> Tensor", shift, scalar_other);
    t.lowered("aten::bitwise_" + d + "_shift.Tensor(Tensor self, Tensor other) -> Tensor", shift, tensor_other);
    t.lowered("aten::bitwise_" + d + "_shift.Tensor_Scalar(Tensor self, Scalar other) -> Tensor", shift, scalar_other);
    t.lowered("aten::bitwise_" + d + "_shift.Scalar_Tensor(Scalar self, Tensor other) -> Tensor", shift, tensor_other);
  }
  t.lowered(
      "aten::_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
      "bool? pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor",
      [](const MetaInference& m) { return to_dtype(m, "dtype", "self"); },
      [](GraphLowering& L, const BoundArgs&) { return lower_convert(L); });
  t.lowered(
      "prims::convert_element_type(Tensor a, ScalarType dtype) -> Tensor",
      [](const MetaInference& m) { return to_dtype(m, "dtype", "a"); },
      [](GraphLowering& L, const BoundArgs&) { return lower_convert(L); });
  t.lowered(
      "aten::fmax(Tensor self, Tensor other) -> Tensor",
      [](const MetaInference& m) { return broadcast_binary(m, "self", "other"); },
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::Fmax, false); });
  t.lowered(
      "aten::fmin(Tensor self, Tensor other) -> Tensor",
      [](const MetaInference& m) { return broadcast_binary(m, "self", "other"); },
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::Fmin, false); });
  t.lowered(
      "aten::copysign.Tensor(Tensor self, Tensor other) -> Tensor", copysign,
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::Copysign, false); });
  t.lowered(
      "aten::copysign.Scalar(Tensor self, Scalar other) -> Tensor", copysign,
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::Copysign, true); });
  t.lowered(
      "aten::nextafter(Tensor self, Tensor other) -> Tensor", nextafter,
      [](GraphLowering& L, const BoundArgs&) {
        DType d = L.out_meta().dtype;
        if (d != DType::Float32 && d != DType::Float64) L.fail("nextafter is only lowered for float32 and float64");
        return lower_binary(L, BinaryOp::Nextafter, false, false, false);
      });
}

}  // namespace hi
