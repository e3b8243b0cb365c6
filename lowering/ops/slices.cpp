// Views that take part of a tensor: slice, select, split / chunk / unbind, diagonal, unfold, as_strided, and the
// copying twins narrow_copy and as_strided_copy. Like every view, each lowers to a remap of its input's coordinates
// (as_strided: to loads from its input's storage).
#include <algorithm>
#include <limits>
#include <optional>

#include "lowering/lowering_context.h"
#include "lowering/op_registry.h"

namespace hi {
namespace {

using lowering::GraphLowering;
using lowering::slice_bound;
using lowering::TensorValue;

Metas slice(const MetaInference& m) {
  TensorMeta in = m.tensor("self");
  if (in.rank() == 0) m.fail("self", "cannot slice a 0-d tensor");
  size_t d = static_cast<size_t>(m.wrap_dim("dim", m.int_arg("dim"), in.rank()));
  const Index& size = in.sizes[d];
  int64_t step = m.int_arg("step");
  if (step <= 0) m.fail("step", "must be positive, got " + std::to_string(step));
  // Constant bounds are wrapped and clamped as Python slicing does; symbolic ones are taken as in range.
  auto bound = [&](std::string_view name, const Index& fallback) -> Index {
    const Arg& a = m.arg(name);
    if (a.is_none()) return fallback;
    const Index& v = a.integer();
    if (!v.is_const()) return v;
    int64_t c = v.value();
    if (size.is_const()) {
      int64_t n = size.value();
      if (c < 0) c += n;
      return Index(std::clamp<int64_t>(c, 0, n));
    }
    if (c < 0) return size + Index(c);
    if (c >= std::numeric_limits<int64_t>::max() / 2) return size;  // FX spells "to the end" as INT64_MAX
    return Index(c);
  };
  Index start = bound("start", Index(0));
  Index end = bound("end", size);
  Index length = end - start;
  if (length.is_const() && length.value() < 0) length = Index(0);
  TensorMeta out = in;
  out.sizes[d] = step == 1 ? length : floordiv(length + Index(step - 1), Index(step));
  out.strides[d] = in.strides[d] * Index(step);
  out.offset = in.offset + start * in.strides[d];
  return {out};
}

Metas select(const MetaInference& m) {
  TensorMeta in = m.tensor("self");
  if (in.rank() == 0) m.fail("self", "cannot select from a 0-d tensor");
  size_t d = static_cast<size_t>(m.wrap_dim("dim", m.int_arg("dim"), in.rank()));
  Index index = m.arg("index").integer();
  if (index.is_const() && in.sizes[d].is_const()) {
    int64_t n = in.sizes[d].value();
    if (index.value() < -n || index.value() >= n) {
      m.fail("index",
             "index " + index.str() + " out of range for dim " + std::to_string(d) + " of size " + std::to_string(n));
    }
    if (index.value() < 0) index = Index(index.value() + n);
  } else if (index.is_const() && index.value() < 0) {
    index = in.sizes[d] + index;
  }
  TensorMeta out{in.dtype, {}, {}, in.offset + index * in.strides[d]};
  for (size_t i = 0; i < in.sizes.size(); ++i) {
    if (i == d) continue;
    out.sizes.push_back(in.sizes[i]);
    out.strides.push_back(in.strides[i]);
  }
  return {out};
}

/// Most outputs one split, chunk or unbind may give. The count comes from a size value, and every output is a node
/// output the compiler lowers and names: a size near 2^40 must be refused here, not enumerated.
constexpr int64_t kMaxPieces = int64_t{1} << 16;

void check_pieces(const MetaInference& m, const char* field, int64_t count) {
  if (count > kMaxPieces)
    m.fail(field, "would give " + std::to_string(count) + " outputs; at most " + std::to_string(kMaxPieces) +
                      " are supported");
}

/// Views of `in` along dim `d` of the given lengths, one after the other (the pieces of a split).
Metas split_pieces(const TensorMeta& in, size_t d, const std::vector<Index>& lengths) {
  Metas out;
  Index start(0);
  for (const Index& len : lengths) {
    TensorMeta piece = in;
    piece.sizes[d] = len;
    piece.offset = in.offset + start * in.strides[d];
    out.push_back(std::move(piece));
    start = start + len;
  }
  return out;
}

size_t split_dim(const MetaInference& m, const TensorMeta& in) {
  if (in.rank() == 0) m.fail("self", "cannot split a 0-d tensor");
  return static_cast<size_t>(m.wrap_dim("dim", m.int_arg("dim"), in.rank()));
}

Metas split_with_sizes(const MetaInference& m) {
  TensorMeta in = m.tensor("self");
  size_t d = split_dim(m, in);
  const std::vector<Index>& lengths = m.arg("split_sizes").ints();
  Index total(0);
  for (const Index& len : lengths) {
    if (len.is_const() && len.value() < 0) m.fail("split_sizes", "negative size in " + sizes_str(lengths));
    total = total + len;
  }
  if (total != in.sizes[d]) {
    m.fail("split_sizes",
           sizes_str(lengths) + " does not add up to dim " + std::to_string(d) + "'s size " + in.sizes[d].str());
  }
  return split_pieces(in, d, lengths);
}

/// split.Tensor and chunk: pieces of `split_size` along the dim, the last one shorter.
Metas split_even(const MetaInference& m, const TensorMeta& in, size_t d, int64_t split_size) {
  if (!in.sizes[d].is_const()) m.fail("self", "splitting a symbolic dim is not supported");
  int64_t n = in.sizes[d].value();
  if (split_size < 0 || (split_size == 0 && n != 0)) {
    m.fail("split_size",
           "split size " + std::to_string(split_size) + " cannot split a dim of size " + std::to_string(n));
  }
  int64_t count = split_size == 0 ? 1 : std::max<int64_t>(n / split_size + (n % split_size != 0), 1);
  check_pieces(m, "split_size", count);
  std::vector<Index> lengths;
  for (int64_t k = 0; k < count; ++k) lengths.emplace_back(std::min(split_size, n - k * split_size));
  return split_pieces(in, d, lengths);
}

Metas split_tensor(const MetaInference& m) {
  TensorMeta in = m.tensor("self");
  size_t d = split_dim(m, in);
  return split_even(m, in, d, m.int_arg("split_size"));
}

Metas chunk(const MetaInference& m) {
  TensorMeta in = m.tensor("self");
  size_t d = split_dim(m, in);
  int64_t chunks = m.int_arg("chunks");
  if (chunks <= 0) m.fail("chunks", "must be positive, got " + std::to_string(chunks));
  if (!in.sizes[d].is_const()) m.fail("self", "chunking a symbolic dim is not supported");
  int64_t n = in.sizes[d].value();
  if (n == 0) {
    check_pieces(m, "chunks", chunks);
    return split_pieces(in, d, std::vector<Index>(static_cast<size_t>(chunks), Index(0)));
  }
  return split_even(m, in, d, (n + chunks - 1) / chunks);
}

Metas unbind(const MetaInference& m) {
  TensorMeta in = m.tensor("self");
  size_t d = split_dim(m, in);
  if (!in.sizes[d].is_const()) m.fail("self", "unbinding a symbolic dim is not supported");
  check_pieces(m, "self", in.sizes[d].value());
  Metas out;
  for (int64_t k = 0; k < in.sizes[d].value(); ++k) {
    TensorMeta piece{in.dtype, {}, {}, in.offset + Index(k) * in.strides[d]};
    for (size_t i = 0; i < in.sizes.size(); ++i) {
      if (i == d) continue;
      piece.sizes.push_back(in.sizes[i]);
      piece.strides.push_back(in.strides[i]);
    }
    out.push_back(std::move(piece));
  }
  return out;
}

/// unfold: windows of `size` elements, `step` apart, along `dimension`, as a new last dim (a view of self).
Metas unfold(const MetaInference& m) {
  TensorMeta in = m.tensor("self");
  if (in.rank() == 0) m.fail("self", "unfold of a 0-dim tensor is not supported");
  const auto d = static_cast<size_t>(m.wrap_dim("dimension", m.int_arg("dimension"), in.rank()));
  const int64_t size = m.int_arg("size"), step = m.int_arg("step");
  if (step < 1) m.fail("step", "must be positive, got " + std::to_string(step));
  if (!in.sizes[d].is_const()) m.fail("self", "unfold along a symbolic dim is not supported");
  const int64_t n = in.sizes[d].value();
  if (size < 0 || size > n)
    m.fail("size", "must be between 0 and the dim's size " + std::to_string(n) + ", got " + std::to_string(size));
  TensorMeta out = in;
  out.sizes[d] = Index((n - size) / step + 1);
  out.strides[d] = in.strides[d] * Index(step);
  out.sizes.emplace_back(size);
  out.strides.push_back(in.strides[d]);
  return {out};
}

Metas diagonal(const MetaInference& m) {
  TensorMeta in = m.tensor("self");
  if (in.rank() < 2) m.fail("self", "diagonal needs a tensor of rank >= 2, got " + sizes_str(in.sizes));
  size_t d1 = static_cast<size_t>(m.wrap_dim("dim1", m.int_arg("dim1"), in.rank()));
  size_t d2 = static_cast<size_t>(m.wrap_dim("dim2", m.int_arg("dim2"), in.rank()));
  if (d1 == d2) m.fail("dim2", "dim1 and dim2 must differ, both are " + std::to_string(d1));
  int64_t offset = m.int_arg("offset");
  if (!in.sizes[d1].is_const() || !in.sizes[d2].is_const())
    m.fail("self", "diagonal of symbolic dims is not supported");
  int64_t s1 = in.sizes[d1].value(), s2 = in.sizes[d2].value();
  int64_t len = offset >= 0 ? std::min(s1, s2 - offset) : std::min(s1 + offset, s2);
  len = std::max<int64_t>(len, 0);
  TensorMeta out{in.dtype, {}, {}, in.offset};
  if (len > 0)
    out.offset = in.offset + (offset >= 0 ? Index(offset) * in.strides[d2] : Index(-offset) * in.strides[d1]);
  for (size_t i = 0; i < in.sizes.size(); ++i) {
    if (i == d1 || i == d2) continue;
    out.sizes.push_back(in.sizes[i]);
    out.strides.push_back(in.strides[i]);
  }
  out.sizes.emplace_back(len);
  out.strides.push_back(in.strides[d1] + in.strides[d2]);
  return {out};
}

/// narrow_copy(self, dim, start, length): `length` elements of dim from start (negative start counts from the end).
Metas narrow_copy(const MetaInference& m) {
  TensorMeta in = m.tensor("self");
  if (in.rank() == 0) m.fail("self", "cannot narrow a 0-d tensor");
  size_t d = static_cast<size_t>(m.wrap_dim("dim", m.int_arg("dim"), in.rank()));
  const Index length = m.arg("length").integer();
  if (length.is_const() && length.value() < 0) m.fail("length", "must be non-negative");
  auto size = in.sizes[d].as_const();
  const Index start = m.arg("start").integer();
  if (size && start.is_const() && length.is_const()) {
    int64_t st = start.value() < 0 ? start.value() + *size : start.value();
    if (st < 0 || st + length.value() > *size) {
      m.fail("start", "start " + std::to_string(start.value()) + " + length " + std::to_string(length.value()) +
                          " exceeds dimension size " + std::to_string(*size));
    }
  }
  std::vector<Index> sizes = in.sizes;
  sizes[d] = length;
  return one(in.dtype, sizes);
}

Metas as_strided(const MetaInference& m) {
  TensorMeta in = m.tensor("self");
  const std::vector<Index>& sizes = m.arg("size").ints();
  const std::vector<Index>& strides = m.arg("stride").ints();
  if (sizes.size() != strides.size()) {
    m.fail("stride", std::to_string(strides.size()) + " strides for " + std::to_string(sizes.size()) + " sizes");
  }
  for (const Index& s : sizes)
    if (s.is_const() && s.value() < 0) m.fail("size", "negative size in " + sizes_str(sizes));
  Index offset = m.given("storage_offset") ? m.arg("storage_offset").integer() : in.offset;
  if (offset.is_const() && offset.value() < 0) m.fail("storage_offset", "must be non-negative, got " + offset.str());
  return {TensorMeta{in.dtype, sizes, strides, offset}};
}

/// slice.Tensor, and narrow_copy (whose length is the meta's size): `step` 1 there, it has none.
std::vector<TensorValue> lower_slice(GraphLowering& L, const BoundArgs& args) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor("self");
  int64_t dim = L.wrap_dim(args.get_int("dim"), self.rank());
  int64_t step = args.schema->arg_index("step") >= 0 ? args.get_int("step") : 1;
  Index start = Index(0);
  if (args.given("start")) {
    Index v = args.get("start").integer();
    auto size = self.sizes[dim].as_const();
    if (v.is_const() && size)
      start = Index(slice_bound(v.value(), *size));
    else if (v.is_const() && v.value() < 0)
      start = self.sizes[dim] + v;
    else
      start = v;
  }
  return {L.remap(self, m.sizes, [&](const std::vector<Index>& c) {
    std::vector<Index> in = c;
    in[dim] = start + c[dim] * Index(step);
    return in;
  })};
}

std::vector<TensorValue> lower_select(GraphLowering& L, const BoundArgs& args) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor("self");
  int64_t dim = L.wrap_dim(args.get_int("dim"), self.rank());
  Index index = args.get("index").integer();
  if (index.is_const() && index.value() < 0) index = self.sizes[dim] + index;
  return {L.remap(self, m.sizes, [&](const std::vector<Index>& c) {
    std::vector<Index> in(c.begin(), c.begin() + dim);
    in.push_back(index);
    in.insert(in.end(), c.begin() + dim, c.end());
    return in;
  })};
}

/// split_with_sizes / split.Tensor / chunk (`unbind` false) and unbind: each output is a view of a piece along the
/// split dim; the pieces' sizes come from the node's output metas.
std::vector<TensorValue> lower_split(GraphLowering& L, const BoundArgs& args, bool unbind) {
  TensorValue self = L.tensor("self");
  int64_t dim = L.wrap_dim(args.get_int("dim"), self.rank());
  std::vector<TensorValue> out;
  Index start(0);
  for (size_t k = 0; k < L.node().outputs.size(); ++k) {
    const TensorMeta& m = L.out_meta(k);
    if (unbind) {
      out.push_back(L.remap(self, m.sizes, [&](const std::vector<Index>& c) {
        std::vector<Index> in(c.begin(), c.begin() + dim);
        in.emplace_back(static_cast<int64_t>(k));
        in.insert(in.end(), c.begin() + dim, c.end());
        return in;
      }));
      continue;
    }
    if (m.sizes.size() != self.sizes.size()) L.fail("output " + std::to_string(k) + " has the wrong rank");
    out.push_back(L.remap(self, m.sizes, [&](const std::vector<Index>& c) {
      std::vector<Index> in = c;
      in[dim] = start + c[dim];
      return in;
    }));
    start = start + m.sizes[dim];
  }
  return out;
}

std::vector<TensorValue> lower_diagonal(GraphLowering& L, const BoundArgs& args) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor("self");
  int64_t offset = args.get_int("offset");
  int64_t d1 = L.wrap_dim(args.get_int("dim1"), self.rank()), d2 = L.wrap_dim(args.get_int("dim2"), self.rank());
  if (d1 == d2) L.fail("dim1 and dim2 must differ");
  return {L.remap(self, m.sizes, [&](const std::vector<Index>& c) {
    std::vector<Index> in;
    size_t o = 0;
    for (int64_t d = 0; d < self.rank(); ++d) {
      if (d == d1)
        in.push_back(c.back() + Index(offset < 0 ? -offset : 0));
      else if (d == d2)
        in.push_back(c.back() + Index(offset > 0 ? offset : 0));
      else
        in.push_back(c[o++]);
    }
    return in;
  })};
}

/// unfold: output (.., i, .., j) reads self (.., i * step + j, ..), the window index in place of the dim and the
/// position in the window last.
std::vector<TensorValue> lower_unfold(GraphLowering& L, const BoundArgs& args) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor("self");
  const int64_t d = L.wrap_dim(args.get_int("dimension"), self.rank()), step = args.get_int("step");
  return {L.remap(self, m.sizes, [&](const std::vector<Index>& c) {
    std::vector<Index> in(c.begin(), c.end() - 1);
    in[d] = c[d] * step + c.back();
    return in;
  })};
}

/// as_strided of a graph input read directly: a load from the same storage at storage_offset + sum(c_i * stride_i).
/// Of a computed value there is no storage to stride through: rejected (the node then runs eagerly).
std::vector<TensorValue> lower_as_strided(GraphLowering& L, const BoundArgs& args) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor("self");
  std::optional<int> b = L.input_buffer(self);
  if (!b) L.fail("as_strided of a computed value is not supported");
  const Buffer& in = L.buffer(*b);
  const std::vector<Index>* sizes = &args.get("size").ints();
  const std::vector<Index>* strides = &args.get("stride").ints();
  if (sizes->size() != strides->size()) L.fail("size and stride must be lists of one length");
  Index offset = in.offset;
  if (args.given("storage_offset")) offset = args.get("storage_offset").integer();
  // The view must stay inside the storage the input's own layout spans (all the kernel is known to be given).
  std::vector<Index> reach{offset};
  bool empty = false;
  for (size_t i = 0; i < sizes->size(); ++i) {
    auto s = (*sizes)[i].as_const(), st = (*strides)[i].as_const();
    if (!s || !st) L.fail("as_strided with symbolic sizes or strides is not supported");
    if (*st < 0) L.fail("as_strided with negative strides is not supported");
    if (*s == 0) empty = true;
    reach.push_back(Index((*s - 1) * *st));
  }
  auto last = sum(reach).as_const(), have = in.storage_elements().as_const();
  if (!empty && (!last || !have || *last >= *have))
    L.fail("as_strided reaches past the storage of its input's layout (element " + sum(reach).str() + " of " +
           in.storage_elements().str() + ")");
  return {L.make(m.dtype, m.sizes, {&self}, [&](const std::vector<Index>& c) {
    std::vector<Index> terms{offset};
    for (size_t i = 0; i < c.size(); ++i) terms.push_back(c[i] * (*strides)[i]);
    return Expr::cast(Expr::load(*b, sum(terms), in.dtype), m.dtype);
  })};
}

}  // namespace

void register_slice_ops(OpTable& t) {
  t.lowered(
      "aten::slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> "
      "Tensor(a)",
      slice, lower_slice);
  t.lowered(
      "aten::select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)",
      select, lower_select);
  t.lowered(
      "aten::split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]",
      split_with_sizes,
      [](GraphLowering& L, const BoundArgs& a) { return lower_split(L, a, false); });
  t.lowered(
      "aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
      split_tensor,
      [](GraphLowering& L, const BoundArgs& a) { return lower_split(L, a, false); });
  t.lowered(
      "aten::unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]",
      unbind,
      [](GraphLowering& L, const BoundArgs& a) { return lower_split(L, a, true); });
  t.lowered(
      "aten::chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]",
      chunk,
      [](GraphLowering& L, const BoundArgs& a) { return lower_split(L, a, false); });
  t.lowered(
      "aten::diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)",
      diagonal, lower_diagonal);
  t.lowered(
      "aten::unfold(Tensor(a) self, int dimension, int size, int step) -> Tensor(a)",
      unfold, lower_unfold);
  t.lowered(
      "aten::as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a)",
      as_strided, lower_as_strided);
  // Views' copying twins (functionalized graphs, OpInfo's *_copy ops that PyTorch does not decompose): a lowered
  // view is already index arithmetic realized into its own buffer.
  t.lowered(
      "aten::as_strided_copy(Tensor self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor",
      [](const MetaInference& m) { return copied(as_strided(m)); }, lower_as_strided);
  t.lowered(
      "aten::narrow_copy(Tensor self, int dim, SymInt start, SymInt length) -> Tensor",
      narrow_copy, lower_slice);
}

}  // namespace hi
