// Factories: tensors made from sizes and numbers (full, zeros, ones, empty, arange, iota, ...), no tensor input but
// full_like's (whose sizes and dtype it takes).
#include <cmath>
#include <optional>

#include "lowering/lowering_context.h"
#include "lowering/op_registry.h"

namespace hi {
namespace {

using lowering::GraphLowering;
using lowering::TensorValue;

std::vector<Index> size_list(const MetaInference& m, std::string_view name) {
  std::vector<Index> sizes = m.arg(name).ints();
  for (const Index& s : sizes) {
    if (s.is_const() && s.value() < 0) m.fail(name, "negative size in " + sizes_str(sizes));
  }
  return sizes;
}

Metas full(const MetaInference& m) {
  DType t = m.given("dtype") ? m.arg("dtype").dtype() : default_dtype_of(m.arg("fill_value").kind());
  return one(t, size_list(m, "size"));
}

Metas factory(const MetaInference& m) {
  return one(m.given("dtype") ? m.arg("dtype").dtype() : DType::Float32, size_list(m, "size"));
}

/// An integer Scalar argument of arange as an index expression (symbols allowed), or nullopt for a float one; a bool
/// is 0 or 1, as PyTorch reads it.
std::optional<Index> integer_bound(const Arg& a) {
  if (a.kind() == Arg::Kind::Int) return a.integer();
  if (a.kind() == Arg::Kind::Bool) return Index(a.boolean() ? 1 : 0);
  return std::nullopt;
}

/// Length of arange(start, end, step): ceil((end - start) / step), as PyTorch computes it in double. Integer bounds
/// may be symbols (a position range over a dynamic sequence length): the length is then the index expression
/// (end - start + step - 1) floordiv step for a constant step, equal to the double formula for every value.
Metas arange(const MetaInference& m, bool has_start, bool has_step) {
  bool any_float = m.arg("end").kind() == Arg::Kind::Float ||
                   (has_start && m.arg("start").kind() == Arg::Kind::Float) ||
                   (has_step && m.arg("step").kind() == Arg::Kind::Float);
  DType t = m.given("dtype") ? m.arg("dtype").dtype() : any_float ? DType::Float32 : DType::Int64;
  if (!any_float) {
    Index start = has_start ? *integer_bound(m.arg("start")) : Index(0);
    Index end = *integer_bound(m.arg("end"));
    int64_t step = has_step ? m.constant("step", *integer_bound(m.arg("step"))) : 1;
    if (step == 0) m.fail("step", "must be nonzero");
    Index n = step > 0 ? floordiv(end - start + Index(step - 1), Index(step))
                       : floordiv(start - end + Index(-step - 1), Index(-step));
    if (n.is_const() && n.value() < 0) m.fail("end", "arange's bounds are inconsistent with the sign of step");
    return one(t, {n});
  }
  auto number = [&](std::string_view name, double dflt) {
    if (name == "start" && !has_start) return dflt;
    if (name == "step" && !has_step) return dflt;
    const Arg& a = m.arg(name);
    if (a.kind() == Arg::Kind::Float) return a.number();
    return static_cast<double>(m.constant(name, *integer_bound(a)));
  };
  double start = number("start", 0), end = number("end", 0), step = number("step", 1);
  if (step == 0) m.fail("step", "must be nonzero");
  double n = std::ceil((end - start) / step);
  if (n < 0) m.fail("end", "arange's bounds are inconsistent with the sign of step");
  return one(t, {Index(static_cast<int64_t>(n))});
}

Metas iota(const MetaInference& m) {
  Index n = m.arg("length").integer();
  if (n.is_const() && n.value() < 0) m.fail("length", "must be non-negative");
  return one(m.arg("dtype").dtype(), {n});
}

Metas full_like(const MetaInference& m) {
  TensorMeta in = m.tensor("self");
  return one(m.given("dtype") ? m.arg("dtype").dtype() : in.dtype, in.sizes);
}

Metas scalar_tensor(const MetaInference& m) {
  return one(m.given("dtype") ? m.arg("dtype").dtype() : DType::Float32, {});
}

/// A tensor of the output meta's sizes holding `fill`.
std::vector<TensorValue> lower_full(GraphLowering& L, double fill) {
  const TensorMeta& m = L.out_meta();
  return {L.make(m.dtype, m.sizes, {}, [&](const std::vector<Index>&) { return Expr::constant(fill, m.dtype); })};
}

/// arange / iota: start + i * step, computed in int64 for integer results and in double for floating ones.
std::vector<TensorValue> lower_range(GraphLowering& L, double start, double step) {
  const TensorMeta& m = L.out_meta();
  DType compute = is_floating(m.dtype) ? DType::Float64 : DType::Int64;
  return {L.make(m.dtype, m.sizes, {}, [&](const std::vector<Index>& c) {
    Expr i = Expr::index_value(c.empty() ? Index(0) : c[0], compute);
    Expr v = Expr::binary(BinaryOp::Add, Expr::constant(start, compute),
                          Expr::binary(BinaryOp::Mul, i, Expr::constant(step, compute), compute), compute);
    return Expr::cast(v, m.dtype);
  })};
}

/// arange / iota over integer start and step (start may be a symbol): the value start + i * step is an index
/// expression, exact in int64 and rounded once to a floating result type (as the double formula rounds it).
std::vector<TensorValue> lower_integer_range(GraphLowering& L, const Index& start, int64_t step) {
  const TensorMeta& m = L.out_meta();
  return {L.make(m.dtype, m.sizes, {}, [&](const std::vector<Index>& c) {
    Index i = c.empty() ? Index(0) : c[0];
    return Expr::cast(Expr::index_value(start + i * Index(step), DType::Int64), m.dtype);
  })};
}

/// arange's lowering: integer start and step (the default 0 and 1 included) take the index path, so a symbolic
/// start lowers; a float one computes in double.
std::vector<TensorValue> lower_arange(GraphLowering& L, const BoundArgs& a, bool has_start, bool has_step) {
  std::optional<Index> start = has_start ? integer_bound(a.get("start")) : Index(0);
  std::optional<Index> step = has_step ? integer_bound(a.get("step")) : Index(1);
  if (start && step && step->is_const()) return lower_integer_range(L, *start, step->value());
  return lower_range(L, has_start ? a.get_float("start") : 0, has_step ? a.get_float("step") : 1);
}

/// The value of a factory that is filled with a constant, by op.
LowerFn filled_with(double value) {
  return [value](GraphLowering& L, const BoundArgs&) { return lower_full(L, value); };
}

}  // namespace

void register_factory_ops(OpTable& t) {
  auto fill_value = [](GraphLowering& L, const BoundArgs& a) { return lower_full(L, a.get_float("fill_value")); };
  t.lowered(
      "aten::full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, "
      "Device? device=None, bool? pin_memory=None) -> Tensor",
      full, fill_value);
  t.lowered(
      "aten::zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
      "bool? pin_memory=None) -> Tensor",
      factory, filled_with(0));
  t.lowered(
      "aten::ones(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
      "bool? pin_memory=None) -> Tensor",
      factory, filled_with(1));
  // Uninitialised memory in eager; zeros here, so results are deterministic.
  t.lowered(
      "aten::empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
      "Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
      factory, filled_with(0));
  // Its physical_layout (the order of the strides) comes with the node's meta, as every output layout does.
  t.lowered(
      "aten::empty_permuted(SymInt[] size, int[] physical_layout, *, ScalarType? dtype=None, "
      "Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
      factory, filled_with(0));
  t.lowered(
      "aten::arange(Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
      "bool? pin_memory=None) -> Tensor",
      [](const MetaInference& m) { return arange(m, false, false); },
      [](GraphLowering& L, const BoundArgs& a) { return lower_arange(L, a, false, false); });
  t.lowered(
      "aten::arange.start(Scalar start, Scalar end, *, ScalarType? dtype=None, Layout? layout=None, "
      "Device? device=None, bool? pin_memory=None) -> Tensor",
      [](const MetaInference& m) { return arange(m, true, false); },
      [](GraphLowering& L, const BoundArgs& a) { return lower_arange(L, a, true, false); });
  t.lowered(
      "aten::arange.start_step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None, "
      "Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
      [](const MetaInference& m) { return arange(m, true, true); },
      [](GraphLowering& L, const BoundArgs& a) { return lower_arange(L, a, true, true); });
  t.lowered(
      "prims::iota(SymInt length, *, SymInt start, SymInt step, ScalarType dtype, Device device, "
      "bool requires_grad) -> Tensor",
      iota, [](GraphLowering& L, const BoundArgs& a) {
        const Index& step = a.get("step").integer();
        if (!step.is_const()) a.fail("step", "expected a constant, got symbolic " + step.str());
        return lower_integer_range(L, a.get("start").integer(), step.value());
      });
  t.lowered(
      "aten::full_like(Tensor self, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, "
      "Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
      full_like, fill_value);
  t.lowered(
      "aten::scalar_tensor(Scalar s, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
      "bool? pin_memory=None) -> Tensor",
      scalar_tensor, [](GraphLowering& L, const BoundArgs& a) { return lower_full(L, a.get_float("s")); });
}

}  // namespace hi
