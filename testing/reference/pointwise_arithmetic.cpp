// References of the pointwise arithmetic ops (lowering/ops/pointwise_arithmetic.cpp), through the evaluator's
// element functions: arithmetic in the result dtype, rounded as eager rounds.
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
ReferenceFn member(std::vector<HostTensor> (GraphEvaluator::*fn)()) {
  return [=](GraphEvaluator& E, const BoundArgs&) { return (E.*fn)(); };
}

std::vector<HostTensor> div_mode(GraphEvaluator& E, const BoundArgs& args) {
  if (!args.given("rounding_mode")) return E.binary(Binary::Div, false);
  const std::string& m = args.get_str("rounding_mode");
  if (m == "trunc") return E.binary(Binary::TruncDiv, false);
  if (m == "floor") return E.binary(Binary::FloorDiv, false);
  E.fail("rounding_mode must be None, 'trunc' or 'floor', got '" + m + "'");
}

/// self * 2 ** other in the floating result type (exact: a power of two scales without rounding, up to overflow).
std::vector<HostTensor> ldexp(GraphEvaluator& E, const BoundArgs& args) {
  Operand a = E.operand("self");
  Operand b = E.operand("other");
  HostTensor out = E.output();
  DType compute = opmath_type(out.dtype);
  std::vector<double> x = E.broadcast(a, out.sizes, compute, compute);
  std::vector<double> y = E.broadcast(b, out.sizes, compute, compute);
  for (size_t i = 0; i < x.size(); ++i) x[i] = round_to_dtype(compute, x[i] * std::pow(2.0, y[i]));
  return {E.output_from_values(0, x)};
}

std::vector<HostTensor> bitwise_not(GraphEvaluator& E, const BoundArgs& args) {
  const HostTensor& self = E.tensor("self");
  std::vector<double> v = self.values();
  for (double& x : v) x = self.dtype == DType::Bool ? (x == 0 ? 1.0 : 0.0) : static_cast<double>(~to_int64(x));
  return {E.output_from_values(0, v)};
}

}  // namespace

void register_pointwise_arithmetic_references(ReferenceTable& t) {
  t.add("aten.add.Tensor", binary(Binary::Add, true));
  t.add("aten.add.Scalar", binary(Binary::Add, true));
  t.add("aten.sub.Tensor", binary(Binary::Sub, true));
  t.add("aten.sub.Scalar", binary(Binary::Sub, true));
  t.add("aten.rsub.Tensor", binary(Binary::Sub, true, true));
  t.add("aten.rsub.Scalar", binary(Binary::Sub, true, true));
  t.add("aten.mul.Tensor", binary(Binary::Mul, false));
  t.add("aten.mul.Scalar", binary(Binary::Mul, false));
  t.add("aten.div.Tensor", binary(Binary::Div, false));
  t.add("aten.div.Scalar", binary(Binary::Div, false));
  t.add("aten.div.Tensor_mode", div_mode);
  t.add("aten.div.Scalar_mode", div_mode);
  t.add("aten.fmod.Tensor", binary(Binary::Fmod, false));
  t.add("aten.fmod.Scalar", binary(Binary::Fmod, false));
  t.add("aten.remainder.Tensor", binary(Binary::Remainder, false));
  t.add("aten.remainder.Scalar", binary(Binary::Remainder, false));
  t.add("aten.maximum.default", binary(Binary::Maximum, false));
  t.add("aten.minimum.default", binary(Binary::Minimum, false));
  t.add("aten.pow.Tensor_Scalar", binary(Binary::Pow, false));
  t.add("aten.pow.Tensor_Tensor", binary(Binary::Pow, false));
  t.add("aten.pow.Scalar", binary(Binary::Pow, false));
  t.add("aten.neg.default", unary(Unary::Neg));
  t.add("aten.abs.default", unary(Unary::Abs));
  t.add("aten.sign.default", unary(Unary::Sign));
  t.add("aten.floor.default", unary(Unary::Floor));
  t.add("aten.ceil.default", unary(Unary::Ceil));
  t.add("aten.trunc.default", unary(Unary::Trunc));
  t.add("aten.round.default", unary(Unary::Round));
  t.add("aten.round.decimals", [](GraphEvaluator& E, const BoundArgs& a) {
    int64_t d = a.get_int("decimals");
    if (d == 0) return E.unary(Unary::Round);
    DType t = opmath_type(E.out_meta().dtype);
    double k = round_to_dtype(t, std::pow(10.0, static_cast<double>(std::llabs(d))));
    return E.elementwise([=](double x) {
      return d > 0 ? round_to_dtype(t, std::nearbyint(round_to_dtype(t, x * k))) / k
                   : round_to_dtype(t, std::nearbyint(round_to_dtype(t, x / k))) * k;
    });
  });
  t.add("aten.clone.default", member(&GraphEvaluator::convert));
  t.add("aten.lift_fresh_copy.default", member(&GraphEvaluator::convert));
  t.add("aten.ldexp.Tensor", ldexp);
  t.add("aten.bitwise_and.Tensor", binary(Binary::BitwiseAnd, false));
  t.add("aten.bitwise_and.Scalar", binary(Binary::BitwiseAnd, false));
  t.add("aten.bitwise_or.Tensor", binary(Binary::BitwiseOr, false));
  t.add("aten.bitwise_or.Scalar", binary(Binary::BitwiseOr, false));
  t.add("aten.bitwise_not.default", bitwise_not);
  t.add("aten.bitwise_xor.Tensor", binary(Binary::BitwiseXor, false));
  t.add("aten.bitwise_xor.Scalar", binary(Binary::BitwiseXor, false));
  for (const char* name : {"__lshift__.Tensor", "__lshift__.Scalar", "bitwise_left_shift.Tensor",
                           "bitwise_left_shift.Tensor_Scalar", "bitwise_left_shift.Scalar_Tensor"})
    t.add(std::string("aten.") + name, binary(Binary::ShiftLeft, false));
  for (const char* name : {"__rshift__.Tensor", "__rshift__.Scalar", "bitwise_right_shift.Tensor",
                           "bitwise_right_shift.Tensor_Scalar", "bitwise_right_shift.Scalar_Tensor"})
    t.add(std::string("aten.") + name, binary(Binary::ShiftRight, false));
  t.add("aten._to_copy.default", member(&GraphEvaluator::convert));
  t.add("prims.convert_element_type.default", member(&GraphEvaluator::convert));
  t.add("aten.fmax.default", binary(Binary::Fmax, false));
  t.add("aten.fmin.default", binary(Binary::Fmin, false));
  t.add("aten.copysign.Tensor", binary(Binary::Copysign, false));
  t.add("aten.copysign.Scalar", binary(Binary::Copysign, false));
  t.add("aten.nextafter.default", binary(Binary::Nextafter, false));
}

}  // namespace hi::reference
