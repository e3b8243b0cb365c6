// Comparisons and selection: eq / ne / lt / le / gt / ge (computed in the operands' promoted type), isnan, isinf,
// signbit, logical ops, where, clamp.
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

Metas compare(const MetaInference& m) {
  m.result_type({"self", "other"});
  return one(DType::Bool, m.broadcast({"self", "other"}));
}

Metas logical_binary(const MetaInference& m) {
  return one(DType::Bool, m.broadcast({"self", "other"}));
}

Metas unary_predicate(const MetaInference& m) {
  return one(DType::Bool, m.tensor("self").sizes);
}

Metas where(const MetaInference& m) {
  if (m.tensor("condition").dtype != DType::Bool) {
    m.fail("condition", "expected a bool tensor, got " + std::string(dtype_name(m.tensor("condition").dtype)));
  }
  return one(m.result_type({"self", "other"}), m.broadcast({"condition", "self", "other"}));
}

Metas clamp(const MetaInference& m) {
  if (!m.given("min") && !m.given("max")) m.fail("min", "at least one of 'min' and 'max' must not be None");
  return one(m.result_type({"self", "min", "max"}), m.broadcast({"self", "min", "max"}));
}

/// isinf / isnan of integers and bools are constant false.
std::vector<TensorValue> lower_float_predicate(GraphLowering& L, UnaryOp op) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor("self");
  if (is_floating(self.dtype)) return lower_unary(L, op);
  return {L.make(m.dtype, m.sizes, {&self}, [&](const std::vector<Index>&) { return Expr::constant(0, m.dtype); })};
}

/// signbit: the sign bit of floats (-0.0 and NaNs with it set too: copysign(1, x) < 0); integers below zero.
std::vector<TensorValue> lower_signbit(GraphLowering& L) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor("self");
  DType compute = compute_type(self.dtype);
  return {L.make(m.dtype, m.sizes, {&self}, [&](const std::vector<Index>& c) {
    Expr x = Expr::cast(L.at(self, c), compute);
    if (self.dtype == DType::Bool) return Expr::constant(0, m.dtype);
    if (is_floating(compute)) x = Expr::binary(BinaryOp::Copysign, Expr::constant(1, compute), x, compute);
    return Expr::cast(Expr::binary(BinaryOp::Lt, x, Expr::constant(0, compute), DType::Bool), m.dtype);
  })};
}

/// clamp, clamp.Tensor, clamp_min, clamp_max: the bounds the overload has (min, max or both), numbers or tensors.
std::vector<TensorValue> lower_clamp(GraphLowering& L, const BoundArgs& args) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor("self");
  std::optional<TensorValue> lo_t, hi_t;
  std::optional<Scalar> lo_s, hi_s;
  auto bound_arg = [&](const char* name, std::optional<TensorValue>& t, std::optional<Scalar>& s) {
    if (args.schema->arg_index(name) < 0) return;
    if (args.schema->args[static_cast<size_t>(args.schema->arg_index(name))].type == ArgType::Tensor)
      t = L.optional_tensor(name);
    else
      s = L.scalar(name);
  };
  bound_arg("min", lo_t, lo_s);
  bound_arg("max", hi_t, hi_s);
  DType compute = compute_type(m.dtype);
  std::vector<const TensorValue*> ts{&self};
  if (lo_t) ts.push_back(&*lo_t);
  if (hi_t) ts.push_back(&*hi_t);
  return {L.make(m.dtype, m.sizes, ts, [&](const std::vector<Index>& c) {
    Expr v = Expr::cast(L.at(self, L.broadcast_coords(self, m.sizes, c)), compute);
    auto bound = [&](const std::optional<TensorValue>& t, const std::optional<Scalar>& s) -> std::optional<Expr> {
      if (t) return Expr::cast(L.at(*t, L.broadcast_coords(*t, m.sizes, c)), compute);
      if (s) return scalar_expr(*s, compute);
      return std::nullopt;
    };
    // clamp propagates NaN from the input; maximum/minimum propagate NaN from either side, which the bounds never
    // are in practice, and eager's clamp(min=nan) gives nan too.
    if (auto lo = bound(lo_t, lo_s)) v = Expr::binary(BinaryOp::Maximum, v, *lo, compute);
    if (auto hi = bound(hi_t, hi_s)) v = Expr::binary(BinaryOp::Minimum, v, *hi, compute);
    return Expr::cast(v, m.dtype);
  })};
}

std::vector<TensorValue> lower_where(GraphLowering& L, const BoundArgs& args) {
  const TensorMeta& m = L.out_meta();
  TensorValue cond = L.tensor("condition");
  std::optional<TensorValue> self, other;
  std::optional<Scalar> self_s, other_s;
  if (args.get("self").is_tensor())
    self = L.tensor("self");
  else
    self_s = L.scalar("self");
  if (args.get("other").is_tensor())
    other = L.tensor("other");
  else
    other_s = L.scalar("other");
  std::vector<const TensorValue*> ts{&cond};
  if (self) ts.push_back(&*self);
  if (other) ts.push_back(&*other);
  return {L.make(m.dtype, m.sizes, ts, [&](const std::vector<Index>& c) {
    auto side = [&](const std::optional<TensorValue>& t, const std::optional<Scalar>& s) {
      return t ? Expr::cast(L.at(*t, L.broadcast_coords(*t, m.sizes, c)), m.dtype) : scalar_expr(*s, m.dtype);
    };
    Expr k = Expr::cast(L.at(cond, L.broadcast_coords(cond, m.sizes, c)), DType::Bool);
    return Expr::where(k, side(self, self_s), side(other, other_s));
  })};
}

}  // namespace

void register_comparison_ops(OpTable& t) {
  t.lowered(
      "aten::where.self(Tensor condition, Tensor self, Tensor other) -> Tensor",
      where, lower_where);
  t.lowered(
      "aten::where.ScalarSelf(Tensor condition, Scalar self, Tensor other) -> Tensor",
      where, lower_where);
  t.lowered(
      "aten::where.ScalarOther(Tensor condition, Tensor self, Scalar other) -> Tensor",
      where, lower_where);
  t.lowered(
      "aten::clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor",
      clamp, lower_clamp);
  t.lowered(
      "aten::clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor",
      clamp, lower_clamp);
  t.lowered(
      "aten::clamp_min(Tensor self, Scalar min) -> Tensor",
      [](const MetaInference& m) { return broadcast_binary(m, "self", "min"); }, lower_clamp);
  t.lowered(
      "aten::clamp_max(Tensor self, Scalar max) -> Tensor",
      [](const MetaInference& m) { return broadcast_binary(m, "self", "max"); }, lower_clamp);
  t.lowered(
      "aten::eq.Tensor(Tensor self, Tensor other) -> Tensor", compare,
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::Eq, false); });
  t.lowered(
      "aten::eq.Scalar(Tensor self, Scalar other) -> Tensor", compare,
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::Eq, true); });
  t.lowered(
      "aten::ne.Tensor(Tensor self, Tensor other) -> Tensor", compare,
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::Ne, false); });
  t.lowered(
      "aten::ne.Scalar(Tensor self, Scalar other) -> Tensor", compare,
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::Ne, true); });
  t.lowered(
      "aten::lt.Tensor(Tensor self, Tensor other) -> Tensor", compare,
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::Lt, false); });
  t.lowered(
      "aten::lt.Scalar(Tensor self, Scalar other) -> Tensor", compare,
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::Lt, true); });
  t.lowered(
      "aten::le.Tensor(Tensor self, Tensor other) -> Tensor", compare,
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::Le, false); });
  t.lowered(
      "aten::le.Scalar(Tensor self, Scalar other) -> Tensor", compare,
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::Le, true); });
  t.lowered(
      "aten::gt.Tensor(Tensor self, Tensor other) -> Tensor", compare,
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::Gt, false); });
  t.lowered(
      "aten::gt.Scalar(Tensor self, Scalar other) -> Tensor", compare,
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::Gt, true); });
  t.lowered(
      "aten::ge.Tensor(Tensor self, Tensor other) -> Tensor", compare,
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::Ge, false); });
  t.lowered(
      "aten::ge.Scalar(Tensor self, Scalar other) -> Tensor", compare,
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::Ge, true); });
  t.lowered(
      "aten::isnan(Tensor self) -> Tensor", unary_predicate,
      [](GraphLowering& L, const BoundArgs&) { return lower_float_predicate(L, UnaryOp::IsNan); });
  t.lowered(
      "aten::isinf(Tensor self) -> Tensor", unary_predicate,
      [](GraphLowering& L, const BoundArgs&) { return lower_float_predicate(L, UnaryOp::IsInf); });
  t.lowered(
      "aten::signbit(Tensor self) -> Tensor", unary_predicate,
      [](GraphLowering& L, const BoundArgs&) { return lower_signbit(L); });
  t.lowered(
      "aten::logical_not(Tensor self) -> Tensor", unary_predicate,
      [](GraphLowering& L, const BoundArgs&) { return lower_unary(L, UnaryOp::LogicalNot); });
  t.lowered(
      "aten::logical_and(Tensor self, Tensor other) -> Tensor",
      logical_binary,
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::LogicalAnd, false); });
  t.lowered(
      "aten::logical_or(Tensor self, Tensor other) -> Tensor", logical_binary,
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::LogicalOr, false); });
  t.lowered(
      "aten::logical_xor(Tensor self, Tensor other) -> Tensor",
      logical_binary,
      [](GraphLowering& L, const BoundArgs&) { return lower_binary(L, BinaryOp::LogicalXor, false); });
}

}  // namespace hi
