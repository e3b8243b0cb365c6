// References of the comparisons and selections (lowering/ops/comparisons.cpp): comparisons in the operands'
// promoted dtype, where and clamp in the result dtype.
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

}  // namespace

void register_comparison_references(ReferenceTable& t) {
  t.add("aten.where.self", member(&GraphEvaluator::where));
  t.add("aten.where.ScalarSelf", member(&GraphEvaluator::where));
  t.add("aten.where.ScalarOther", member(&GraphEvaluator::where));
  t.add("aten.clamp.default", member(&GraphEvaluator::clamp));
  t.add("aten.clamp.Tensor", member(&GraphEvaluator::clamp));
  t.add("aten.clamp_min.default", member(&GraphEvaluator::clamp));
  t.add("aten.clamp_max.default", member(&GraphEvaluator::clamp));
  t.add("aten.eq.Tensor", binary(Binary::Eq, false));
  t.add("aten.eq.Scalar", binary(Binary::Eq, false));
  t.add("aten.ne.Tensor", binary(Binary::Ne, false));
  t.add("aten.ne.Scalar", binary(Binary::Ne, false));
  t.add("aten.lt.Tensor", binary(Binary::Lt, false));
  t.add("aten.lt.Scalar", binary(Binary::Lt, false));
  t.add("aten.le.Tensor", binary(Binary::Le, false));
  t.add("aten.le.Scalar", binary(Binary::Le, false));
  t.add("aten.gt.Tensor", binary(Binary::Gt, false));
  t.add("aten.gt.Scalar", binary(Binary::Gt, false));
  t.add("aten.ge.Tensor", binary(Binary::Ge, false));
  t.add("aten.ge.Scalar", binary(Binary::Ge, false));
  t.add("aten.isnan.default", unary(Unary::IsNan));
  t.add("aten.isinf.default", unary(Unary::IsInf));
  t.add("aten.signbit.default", [](GraphEvaluator& E, const BoundArgs&) {
    return E.elementwise([](double x) { return std::signbit(x) ? 1.0 : 0.0; });
  });
  t.add("aten.logical_not.default", unary(Unary::LogicalNot));
  t.add("aten.logical_and.default", binary(Binary::LogicalAnd, false));
  t.add("aten.logical_or.default", binary(Binary::LogicalOr, false));
  t.add("aten.logical_xor.default", binary(Binary::LogicalXor, false));
}

}  // namespace hi::reference
