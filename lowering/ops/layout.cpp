// Layout ops that build a new tensor from others' elements without arithmetic: cat, constant_pad_nd, flip, repeat,
// slice_scatter, copy. Each output element reads one input element (or the fill value), chosen by index conditions.
#include <optional>

#include "lowering/lowering_context.h"
#include "lowering/op_registry.h"

namespace hi {
namespace {

using lowering::and_into;
using lowering::clamp_coord;
using lowering::GraphLowering;
using lowering::in_range;
using lowering::Scalar;
using lowering::scalar_expr;
using lowering::slice_bound;
using lowering::TensorValue;

Metas cat(const MetaInference& m) {
  std::vector<TensorMeta> parts = m.tensors("tensors");
  // PyTorch still skips legacy empty 1-d tensors ([0]) in cat.
  std::erase_if(parts, [](const TensorMeta& p) { return p.rank() == 1 && p.sizes[0].is_const(0); });
  if (parts.empty()) m.fail("tensors", "expected a non-empty list of tensors");
  const TensorMeta& first = parts[0];
  if (first.rank() == 0) m.fail("tensors", "cannot concatenate 0-d tensors");
  size_t d = static_cast<size_t>(m.wrap_dim("dim", m.int_arg("dim"), first.rank()));
  std::vector<Index> sizes = first.sizes;
  DType t = first.dtype;
  for (size_t k = 1; k < parts.size(); ++k) {
    const TensorMeta& p = parts[k];
    bool fits = p.rank() == first.rank();
    for (size_t i = 0; fits && i < sizes.size(); ++i) fits = i == d || p.sizes[i] == sizes[i];
    if (!fits) {
      m.fail("tensors", "tensor " + std::to_string(k) + " has sizes " + sizes_str(p.sizes) + ", which do not match " +
                            sizes_str(first.sizes) + " outside dim " + std::to_string(d));
    }
    sizes[d] = sizes[d] + p.sizes[d];
    t = promote_types(t, p.dtype);
  }
  return one(t, sizes);
}

Metas constant_pad_nd(const MetaInference& m) {
  TensorMeta in = m.tensor("self");
  const std::vector<Index>& pad = m.arg("pad").ints();
  if (pad.size() % 2 != 0) m.fail("pad", "must have an even number of entries, got " + sizes_str(pad));
  if (static_cast<int64_t>(pad.size() / 2) > in.rank()) {
    m.fail("pad", sizes_str(pad) + " pads more dims than the input's rank " + std::to_string(in.rank()));
  }
  std::vector<Index> sizes = in.sizes;
  for (size_t k = 0; k < pad.size() / 2; ++k) {
    Index& s = sizes[sizes.size() - 1 - k];
    s = s + pad[2 * k] + pad[2 * k + 1];
    if (s.is_const() && s.value() < 0) m.fail("pad", "crops dim " + std::to_string(sizes.size() - 1 - k) + " below 0");
  }
  return one(in.dtype, sizes);
}

Metas slice_scatter(const MetaInference& m) {
  TensorMeta in = m.tensor("self");
  if (in.rank() == 0) m.fail("self", "cannot slice a 0-d tensor");
  m.wrap_dim("dim", m.int_arg("dim"), in.rank());
  if (m.int_arg("step") <= 0) m.fail("step", "must be positive");
  return one(in.dtype, in.sizes);
}

Metas copy(const MetaInference& m) {
  TensorMeta in = m.tensor("self");
  std::vector<Index> sizes = m.broadcast({"self", "src"});
  if (sizes != in.sizes) m.fail("src", "does not broadcast to self's sizes " + sizes_str(in.sizes));
  return one(in.dtype, in.sizes);
}

Metas flip(const MetaInference& m) {
  TensorMeta in = m.tensor("self");
  for (const Index& d : m.arg("dims").ints()) m.wrap_dim("dims", m.constant("dims", d), in.rank());
  return one(in.dtype, in.sizes);
}

Metas repeat(const MetaInference& m) {
  TensorMeta in = m.tensor("self");
  const std::vector<Index>& reps = m.arg("repeats").ints();
  if (reps.size() < in.sizes.size()) {
    m.fail("repeats", sizes_str(reps) + " has fewer entries than the input's rank " + std::to_string(in.rank()));
  }
  std::vector<Index> sizes;
  size_t lead = reps.size() - in.sizes.size();
  for (size_t i = 0; i < reps.size(); ++i) sizes.push_back(i < lead ? reps[i] : reps[i] * in.sizes[i - lead]);
  return one(in.dtype, sizes);
}

std::vector<TensorValue> lower_cat(GraphLowering& L, const BoundArgs& args) {
  const TensorMeta& m = L.out_meta();
  std::vector<TensorValue> parts;
  for (auto& t : L.tensor_list("tensors")) {
    if (!t) L.fail("tensors must not hold None");
    if (t->rank() == 1 && t->sizes[0].is_const(0)) continue;  // legacy empty tensors are skipped
    parts.push_back(*t);
  }
  if (parts.empty()) L.fail("expected a non-empty list of tensors");
  int64_t dim = L.wrap_dim(args.get_int("dim"), parts[0].rank());
  std::vector<const TensorValue*> ts;
  for (const auto& p : parts) ts.push_back(&p);
  return {L.make(m.dtype, m.sizes, ts, [&](const std::vector<Index>& c) {
    // Nested selects from the last part backwards: where(c < end_0, part0, where(c < end_1, part1, ...)).
    std::vector<Index> offsets{Index(0)};
    for (const auto& p : parts) offsets.push_back(offsets.back() + p.sizes[dim]);
    Expr pos = Expr::index_value(c[dim], DType::Int64);
    Expr result;
    for (size_t k = parts.size(); k-- > 0;) {
      if (parts[k].sizes[dim].is_const(0)) continue;
      std::vector<Index> in = c;
      in[dim] = clamp_coord(c[dim] - offsets[k], parts[k].sizes[dim]);
      Expr v = Expr::cast(L.at(parts[k], in), m.dtype);
      if (!result.defined()) {
        result = v;
        continue;
      }
      Expr here = Expr::binary(BinaryOp::Lt, pos, Expr::index_value(offsets[k + 1], DType::Int64), DType::Bool);
      result = Expr::where(here, v, result);
    }
    if (!result.defined()) result = Expr::constant(0, m.dtype);
    return result;
  })};
}

std::vector<TensorValue> lower_constant_pad(GraphLowering& L, const BoundArgs& args) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor("self");
  const std::vector<Index>* pad = &args.get("pad").ints();
  if (pad->size() % 2 != 0 || static_cast<int64_t>(pad->size() / 2) > self.rank())
    L.fail("pad must hold an even number of ints, two per padded dim at most");
  auto value = L.scalar("value");
  Scalar fill = value.value_or(Scalar{});
  std::vector<Index> before(self.rank(), Index(0)), after(self.rank(), Index(0));
  for (size_t k = 0; k < pad->size() / 2; ++k) {
    before[self.rank() - 1 - k] = (*pad)[2 * k];
    after[self.rank() - 1 - k] = (*pad)[2 * k + 1];
  }
  return {L.make(m.dtype, m.sizes, {&self}, [&](const std::vector<Index>& c) {
    std::vector<Index> in;
    std::optional<Expr> inside;
    for (int64_t d = 0; d < self.rank(); ++d) {
      Index i = c[d] - before[d];
      auto b = before[d].as_const(), a = after[d].as_const();
      if (b && a && *b <= 0 && *a <= 0) {  // cropped (or untouched) only: always inside
        in.push_back(i);
        continue;
      }
      in.push_back(clamp_coord(i, self.sizes[d]));
      and_into(inside, in_range(i, self.sizes[d]));
    }
    Expr v = Expr::cast(L.at(self, in), m.dtype);
    if (!inside) return v;
    return Expr::where(*inside, v, scalar_expr(fill, m.dtype));
  })};
}

std::vector<TensorValue> lower_flip(GraphLowering& L, const BoundArgs& args) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor("self");
  std::vector<bool> flipped(self.rank(), false);
  for (int64_t d : args.get_ints("dims")) flipped[L.wrap_dim(d, self.rank())] = true;
  return {L.remap(self, m.sizes, [&](const std::vector<Index>& c) {
    std::vector<Index> in = c;
    for (int64_t d = 0; d < self.rank(); ++d)
      if (flipped[d]) in[d] = self.sizes[d] - Index(1) - c[d];
    return in;
  })};
}

std::vector<TensorValue> lower_repeat(GraphLowering& L, const BoundArgs&) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor("self");
  size_t lead = m.sizes.size() - self.sizes.size();
  return {L.remap(self, m.sizes, [&](const std::vector<Index>& c) {
    std::vector<Index> in;
    for (size_t d = 0; d < self.sizes.size(); ++d) in.push_back(mod(c[lead + d], self.sizes[d]));
    return in;
  })};
}

/// slice_scatter: self, with the slice (dim, start:end:step) replaced by src.
std::vector<TensorValue> lower_slice_scatter(GraphLowering& L, const BoundArgs& args) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor("self");
  TensorValue src = L.tensor("src");
  int64_t dim = L.wrap_dim(args.get_int("dim"), self.rank());
  auto size = self.sizes[dim].as_const();
  if (!size) L.fail("slice_scatter over a symbolic dim is not supported yet");
  auto bound = [&](const char* name, int64_t dflt) {
    std::optional<int64_t> v = args.optional_int(name);
    return v ? slice_bound(*v, *size) : dflt;
  };
  int64_t start = bound("start", 0), end = bound("end", *size), step = args.get_int("step");
  if (step <= 0) L.fail("step must be positive");
  return {L.make(m.dtype, m.sizes, {&self, &src}, [&](const std::vector<Index>& c) {
    Index k = max(c[dim] - Index(start), Index(0));
    std::vector<Index> in = c;
    in[dim] = clamp_coord(floordiv(k, Index(step)), src.sizes[dim]);
    Expr pos = Expr::index_value(c[dim], DType::Int64);
    Expr inside = Expr::binary(
        BinaryOp::LogicalAnd,
        Expr::binary(BinaryOp::Ge, pos, Expr::constant(static_cast<double>(start), DType::Int64), DType::Bool),
        Expr::binary(BinaryOp::Lt, pos, Expr::constant(static_cast<double>(end), DType::Int64), DType::Bool),
        DType::Bool);
    if (step != 1)
      inside = Expr::binary(BinaryOp::LogicalAnd, inside,
                            Expr::binary(BinaryOp::Eq, Expr::index_value(mod(k, Index(step)), DType::Int64),
                                         Expr::constant(0, DType::Int64), DType::Bool),
                            DType::Bool);
    return Expr::where(inside, Expr::cast(L.at(src, in), m.dtype), Expr::cast(L.at(self, c), m.dtype));
  })};
}

/// copy: src broadcast to self's shape, in self's dtype.
std::vector<TensorValue> lower_copy(GraphLowering& L, const BoundArgs&) {
  const TensorMeta& m = L.out_meta();
  TensorValue src = L.tensor("src");
  return {L.make(m.dtype, m.sizes, {&src}, [&](const std::vector<Index>& c) {
    return Expr::cast(L.at(src, L.broadcast_coords(src, m.sizes, c)), m.dtype);
  })};
}

}  // namespace

void register_layout_ops(OpTable& t) {
  t.lowered(
      "aten::cat(Tensor[] tensors, int dim=0) -> Tensor", cat, lower_cat);
  t.lowered(
      "aten::constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor",
      constant_pad_nd, lower_constant_pad);
  t.lowered(
      "aten::flip(Tensor self, int[] dims) -> Tensor", flip, lower_flip);
  t.lowered(
      "aten::slice_scatter(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) "
      "-> Tensor",
      slice_scatter, lower_slice_scatter);
  t.lowered(
      "aten::copy(Tensor self, Tensor src, bool non_blocking=False) -> Tensor",
      copy, lower_copy);
  t.lowered(
      "aten::repeat(Tensor self, SymInt[] repeats) -> Tensor", repeat,
      lower_repeat);
}

}  // namespace hi
