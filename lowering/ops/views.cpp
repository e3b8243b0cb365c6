// Views: ops whose outputs alias their input (view, reshape, permute, transpose, expand, squeeze / unsqueeze, slice,
// select, diagonal, unfold, as_strided, split / chunk / unbind) and their copying twins. A view lowers to a remap of
// its input's coordinates; nothing is copied until a consumer realizes it.
#include <algorithm>
#include <limits>
#include <optional>

#include "lowering/lowering_context.h"
#include "lowering/op_registry.h"

namespace hi {
namespace {

using lowering::GraphLowering;
using lowering::lower_convert;
using lowering::slice_bound;
using lowering::TensorValue;

/// A view op's `_copy` twin: the same sizes, contiguous.
Metas copied(const Metas& views) {
  Metas out;
  for (const TensorMeta& v : views) out.push_back(TensorMeta::contiguous(v.dtype, v.sizes));
  return out;
}

/// `a < b` when both are constants; for symbolic sizes, "not equal" (sizes are >= 1, and a mismatch fails later).
bool smaller(const Index& a, const Index& b) {
  if (a.is_const() && b.is_const()) return a.value() < b.value();
  return a != b;
}

/// PyTorch's computeStride: the strides a view of (sizes, strides) with `new_sizes` has, or nullopt when the
/// memory layout cannot be viewed that way (reshape then copies).
std::optional<std::vector<Index>> view_strides(const std::vector<Index>& sizes, const std::vector<Index>& strides,
                                               const std::vector<Index>& new_sizes) {
  std::vector<Index> out(new_sizes.size());
  if (sizes.empty()) return std::vector<Index>(new_sizes.size(), Index(1));
  if (product(sizes).is_const(0)) return TensorMeta::contiguous_strides(new_sizes);
  int64_t view_d = static_cast<int64_t>(new_sizes.size()) - 1;
  Index chunk_base_stride = strides.back();
  Index tensor_numel = 1;
  Index view_numel = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    tensor_numel = tensor_numel * sizes[static_cast<size_t>(d)];
    if (d == 0 || (!sizes[static_cast<size_t>(d - 1)].is_const(1) &&
                   strides[static_cast<size_t>(d - 1)] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (smaller(view_numel, tensor_numel) || new_sizes[static_cast<size_t>(view_d)].is_const(1))) {
        out[static_cast<size_t>(view_d)] = view_numel * chunk_base_stride;
        view_numel = view_numel * new_sizes[static_cast<size_t>(view_d)];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base_stride = strides[static_cast<size_t>(d - 1)];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

/// `numerator / denominator` when it divides exactly: constants divide, symbolic factors cancel.
std::optional<Index> exact_quotient(const Index& numerator, const Index& denominator) {
  auto factors = [](const Index& e, int64_t& coefficient) {
    std::vector<Index> symbolic;
    std::vector<Index> all = e.op() == IndexOp::Mul ? e.args() : std::vector<Index>{e};
    for (const Index& f : all) {
      if (f.is_const()) {
        coefficient *= f.value();
      } else {
        symbolic.push_back(f);
      }
    }
    return symbolic;
  };
  int64_t num_c = 1, den_c = 1;
  std::vector<Index> num = factors(numerator, num_c);
  std::vector<Index> den = factors(denominator, den_c);
  if (den_c == 0 || num_c % den_c != 0) return std::nullopt;
  for (const Index& f : den) {
    auto it = std::find(num.begin(), num.end(), f);
    if (it == num.end()) return std::nullopt;
    num.erase(it);
  }
  return product(num) * Index(num_c / den_c);
}

/// The size list of a view/reshape with at most one -1 inferred from the input's numel.
std::vector<Index> infer_view_size(const MetaInference& m, std::string_view name, const TensorMeta& in) {
  std::vector<Index> sizes = m.arg(name).ints();
  int inferred = -1;
  std::vector<Index> known;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i].is_const(-1)) {
      if (inferred >= 0) m.fail(name, "only one dimension can be -1, got " + sizes_str(sizes));
      inferred = static_cast<int>(i);
    } else if (sizes[i].is_const() && sizes[i].value() < 0) {
      m.fail(name, "invalid size " + sizes[i].str() + " in " + sizes_str(sizes));
    } else {
      known.push_back(sizes[i]);
    }
  }
  Index numel = in.numel();
  if (inferred >= 0) {
    std::optional<Index> q = exact_quotient(numel, product(known));
    if (!q)
      m.fail(name, "cannot infer the -1 in " + sizes_str(sizes) + " for an input of " + numel.str() + " elements");
    sizes[static_cast<size_t>(inferred)] = *q;
  } else if (product(sizes) != numel) {
    m.fail(name, "shape " + sizes_str(sizes) + " (" + product(sizes).str() + " elements) does not match the input's " +
                     sizes_str(in.sizes) + " (" + numel.str() + " elements)");
  }
  return sizes;
}

/// view (must not copy), reshape and _unsafe_view (copy into contiguous memory when a view is impossible).
Metas view(const MetaInference& m, std::string_view size_arg, bool may_copy) {
  TensorMeta in = m.tensor("self");
  std::vector<Index> sizes = infer_view_size(m, size_arg, in);
  std::optional<std::vector<Index>> strides = view_strides(in.sizes, in.strides, sizes);
  if (strides) return {TensorMeta{in.dtype, sizes, *strides, in.offset}};
  if (!may_copy) {
    m.fail(size_arg, "view as " + sizes_str(sizes) + " is not compatible with the input's sizes " +
                         sizes_str(in.sizes) + " and strides " + sizes_str(in.strides) + " (use reshape)");
  }
  return one(in.dtype, sizes);
}

Metas permute(const MetaInference& m) {
  TensorMeta in = m.tensor("self");
  const std::vector<Index>& dims = m.arg("dims").ints();
  if (static_cast<int64_t>(dims.size()) != in.rank()) {
    m.fail("dims", "has " + std::to_string(dims.size()) + " entries for a tensor of rank " + std::to_string(in.rank()));
  }
  TensorMeta out{in.dtype, {}, {}, in.offset};
  std::vector<bool> seen(dims.size(), false);
  for (const Index& d : dims) {
    size_t w = static_cast<size_t>(m.wrap_dim("dims", m.constant("dims", d), in.rank()));
    if (seen[w]) m.fail("dims", "dim " + std::to_string(w) + " appears more than once in " + sizes_str(dims));
    seen[w] = true;
    out.sizes.push_back(in.sizes[w]);
    out.strides.push_back(in.strides[w]);
  }
  return {out};
}

Metas transpose(const MetaInference& m, int64_t dim0, int64_t dim1) {
  TensorMeta out = m.tensor("self");
  if (out.rank() == 0) return {out};
  std::swap(out.sizes[static_cast<size_t>(dim0)], out.sizes[static_cast<size_t>(dim1)]);
  std::swap(out.strides[static_cast<size_t>(dim0)], out.strides[static_cast<size_t>(dim1)]);
  return {out};
}

Metas transpose_int(const MetaInference& m) {
  int64_t rank = m.tensor("self").rank();
  return transpose(m, m.wrap_dim("dim0", m.int_arg("dim0"), rank), m.wrap_dim("dim1", m.int_arg("dim1"), rank));
}

Metas t_meta(const MetaInference& m) {
  int64_t rank = m.tensor("self").rank();
  if (rank > 2) m.fail("self", "t() expects a tensor of rank <= 2, got rank " + std::to_string(rank));
  return rank < 2 ? Metas{m.tensor("self")} : transpose(m, 0, 1);
}

Metas expand(const MetaInference& m) {
  TensorMeta in = m.tensor("self");
  const std::vector<Index>& target = m.arg("size").ints();
  if (target.size() < in.sizes.size()) {
    m.fail("size", sizes_str(target) + " has fewer dims than the input's " + sizes_str(in.sizes));
  }
  size_t lead = target.size() - in.sizes.size();
  TensorMeta out{in.dtype, {}, {}, in.offset};
  for (size_t i = 0; i < target.size(); ++i) {
    const Index& want = target[i];
    if (i < lead) {
      if (want.is_const() && want.value() < 0)
        m.fail("size",
               "new leading dim " + std::to_string(i) + " cannot be " + want.str() + " in " + sizes_str(target));
      out.sizes.push_back(want);
      out.strides.emplace_back(0);
      continue;
    }
    const Index& have = in.sizes[i - lead];
    if (want.is_const(-1) || want == have) {
      out.sizes.push_back(have);
      out.strides.push_back(in.strides[i - lead]);
    } else if (have.is_const(1)) {
      out.sizes.push_back(want);
      out.strides.emplace_back(0);
    } else {
      m.fail("size", "cannot expand dim " + std::to_string(i) + " of size " + have.str() + " to " + want.str() +
                         " (input sizes " + sizes_str(in.sizes) + ", target " + sizes_str(target) + ")");
    }
  }
  return {out};
}

Metas unsqueeze(const MetaInference& m) {
  TensorMeta in = m.tensor("self");
  size_t d = static_cast<size_t>(m.wrap_dim("dim", m.int_arg("dim"), in.rank() + 1));
  Index stride = d < in.sizes.size() ? in.sizes[d] * in.strides[d] : Index(1);
  in.sizes.insert(in.sizes.begin() + static_cast<int64_t>(d), Index(1));
  in.strides.insert(in.strides.begin() + static_cast<int64_t>(d), stride);
  return {in};
}

/// squeeze.default (`dims_arg` empty: every size-1 dim), squeeze.dim and squeeze.dims. Symbolic sizes are never
/// squeezed: a symbol is not known to be 1.
Metas squeeze(const MetaInference& m, std::string_view dims_arg) {
  TensorMeta in = m.tensor("self");
  std::vector<bool> drop(static_cast<size_t>(in.rank()), dims_arg.empty());
  if (!dims_arg.empty()) {
    const Arg& a = m.arg(dims_arg);
    std::vector<Index> dims = a.kind() == Arg::Kind::Int ? std::vector<Index>{a.integer()} : a.ints();
    for (const Index& d : dims) {
      int64_t w = m.wrap_dim(dims_arg, m.constant(dims_arg, d), in.rank());
      if (in.rank() > 0) drop[static_cast<size_t>(w)] = true;
    }
  }
  TensorMeta out{in.dtype, {}, {}, in.offset};
  for (size_t i = 0; i < drop.size(); ++i) {
    if (drop[i] && in.sizes[i].is_const(1)) continue;
    out.sizes.push_back(in.sizes[i]);
    out.strides.push_back(in.strides[i]);
  }
  return {out};
}

Metas alias(const MetaInference& m) {
  return {m.tensor("self")};
}

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
  int64_t count = split_size == 0 ? 1 : std::max<int64_t>((n + split_size - 1) / split_size, 1);
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
  if (n == 0) return split_pieces(in, d, std::vector<Index>(static_cast<size_t>(chunks), Index(0)));
  return split_even(m, in, d, (n + chunks - 1) / chunks);
}

Metas unbind(const MetaInference& m) {
  TensorMeta in = m.tensor("self");
  size_t d = split_dim(m, in);
  if (!in.sizes[d].is_const()) m.fail("self", "unbinding a symbolic dim is not supported");
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

std::vector<TensorValue> lower_reshape(GraphLowering& L, const BoundArgs&) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor("self");
  std::vector<Index> in_strides = TensorMeta::contiguous_strides(self.sizes);
  std::vector<Index> out_strides = TensorMeta::contiguous_strides(m.sizes);
  return {L.remap(self, m.sizes, [&](const std::vector<Index>& c) {
    std::vector<Index> terms;
    for (size_t i = 0; i < c.size(); ++i) terms.push_back(c[i] * out_strides[i]);
    Index flat = sum(terms);
    std::vector<Index> in;
    for (size_t j = 0; j < self.sizes.size(); ++j)
      in.push_back(j == 0 ? floordiv(flat, in_strides[j]) : mod(floordiv(flat, in_strides[j]), self.sizes[j]));
    return in;
  })};
}

std::vector<TensorValue> lower_permute(GraphLowering& L, std::vector<int64_t> dims) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor("self");
  for (auto& d : dims) d = L.wrap_dim(d, self.rank());
  return {L.remap(self, m.sizes, [&](const std::vector<Index>& c) {
    std::vector<Index> in(self.sizes.size(), Index(0));
    for (size_t i = 0; i < dims.size(); ++i) in[dims[i]] = c[i];
    return in;
  })};
}

std::vector<TensorValue> lower_expand(GraphLowering& L, const BoundArgs&) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor("self");
  return {L.remap(self, m.sizes, [&](const std::vector<Index>& c) { return L.broadcast_coords(self, m.sizes, c); })};
}

/// unsqueeze / squeeze: the output's coordinates are the input's with size-1 dims added or dropped.
std::vector<TensorValue> lower_size_one_dims(GraphLowering& L, const BoundArgs&) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor("self");
  // Match dims greedily: equal sizes pair up; unmatched size-1 dims on either side are the added/dropped ones.
  return {L.remap(self, m.sizes, [&](const std::vector<Index>& c) {
    std::vector<Index> in;
    size_t o = 0;
    for (size_t j = 0; j < self.sizes.size(); ++j) {
      while (o < m.sizes.size() && m.sizes[o] != self.sizes[j] && m.sizes[o].is_const(1)) ++o;
      if (o < m.sizes.size() && m.sizes[o] == self.sizes[j] &&
          (self.sizes.size() - j <= m.sizes.size() - o || !self.sizes[j].is_const(1))) {
        in.push_back(c[o++]);
      } else {
        in.push_back(Index(0));  // a dropped size-1 dim
      }
    }
    return in;
  })};
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

/// t: a transpose of the two dims of a matrix; a vector or a 0-d tensor is itself.
std::vector<TensorValue> lower_t(GraphLowering& L, const BoundArgs&) {
  TensorValue self = L.tensor("self");
  return self.rank() < 2 ? lower_convert(L) : lower_permute(L, {1, 0});
}

std::vector<TensorValue> lower_transpose(GraphLowering& L, const BoundArgs& args) {
  TensorValue self = L.tensor("self");
  int64_t a = L.wrap_dim(args.get_int("dim0"), self.rank()), b = L.wrap_dim(args.get_int("dim1"), self.rank());
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < std::max<int64_t>(self.rank(), 1); ++d) dims.push_back(d == a ? b : d == b ? a : d);
  if (self.rank() == 0) return lower_convert(L);
  return lower_permute(L, dims);
}

}  // namespace

void register_view_ops(OpTable& t) {
  t.lowered(
      "aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)",
      [](const MetaInference& m) { return view(m, "size", false); }, lower_reshape);
  t.lowered(
      "aten::reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)",
      [](const MetaInference& m) { return view(m, "shape", true); }, lower_reshape);
  t.lowered(
      "aten::_unsafe_view(Tensor self, SymInt[] size) -> Tensor",
      [](const MetaInference& m) { return view(m, "size", true); }, lower_reshape);
  t.lowered(
      "aten::permute(Tensor(a) self, int[] dims) -> Tensor(a)", [](const MetaInference& m) { return permute(m); },
      [](GraphLowering& L, const BoundArgs& a) { return lower_permute(L, a.get_ints("dims")); });
  t.lowered("aten::t(Tensor(a) self) -> Tensor(a)", t_meta, lower_t);
  t.lowered(
      "aten::transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)",
      [](const MetaInference& m) { return transpose_int(m); }, lower_transpose);
  t.lowered(
      "aten::expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)",
      [](const MetaInference& m) { return expand(m); }, lower_expand);
  t.lowered(
      "aten::unsqueeze(Tensor(a) self, int dim) -> Tensor(a)", [](const MetaInference& m) { return unsqueeze(m); },
      lower_size_one_dims);
  t.lowered(
      "aten::squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)",
      [](const MetaInference& m) { return squeeze(m, "dim"); }, lower_size_one_dims);
  t.lowered(
      "aten::squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)",
      [](const MetaInference& m) { return squeeze(m, "dim"); }, lower_size_one_dims);
  t.lowered(
      "aten::squeeze(Tensor(a) self) -> Tensor(a)", [](const MetaInference& m) { return squeeze(m, ""); },
      lower_size_one_dims);
  t.lowered(
      "aten::alias(Tensor(a) self) -> Tensor(a)", [](const MetaInference& m) { return alias(m); },
      [](GraphLowering& L, const BoundArgs&) { return lower_convert(L); });
  t.lowered(
      "aten::slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> "
      "Tensor(a)",
      [](const MetaInference& m) { return slice(m); }, lower_slice);
  t.lowered(
      "aten::select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)",
      [](const MetaInference& m) { return select(m); }, lower_select);
  t.lowered(
      "aten::split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]",
      [](const MetaInference& m) { return split_with_sizes(m); },
      [](GraphLowering& L, const BoundArgs& a) { return lower_split(L, a, false); });
  t.lowered(
      "aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
      [](const MetaInference& m) { return split_tensor(m); },
      [](GraphLowering& L, const BoundArgs& a) { return lower_split(L, a, false); });
  t.lowered(
      "aten::unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]",
      [](const MetaInference& m) { return unbind(m); },
      [](GraphLowering& L, const BoundArgs& a) { return lower_split(L, a, true); });
  t.lowered(
      "aten::chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]",
      [](const MetaInference& m) { return chunk(m); },
      [](GraphLowering& L, const BoundArgs& a) { return lower_split(L, a, false); });
  t.lowered(
      "aten::diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)",
      [](const MetaInference& m) { return diagonal(m); }, lower_diagonal);
  t.lowered(
      "aten::unfold(Tensor(a) self, int dimension, int size, int step) -> Tensor(a)",
      [](const MetaInference& m) { return unfold(m); }, lower_unfold);
  t.lowered(
      "aten::as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a)",
      [](const MetaInference& m) { return as_strided(m); }, lower_as_strided);
  // Views' copying twins (functionalized graphs, OpInfo's *_copy ops that PyTorch does not decompose): a lowered
  // view is already index arithmetic realized into its own buffer.
  t.lowered(
      "aten::as_strided_copy(Tensor self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor",
      [](const MetaInference& m) { return copied(as_strided(m)); }, lower_as_strided);
  t.lowered(
      "aten::permute_copy(Tensor self, int[] dims) -> Tensor",
      [](const MetaInference& m) { return copied(permute(m)); },
      [](GraphLowering& L, const BoundArgs& a) { return lower_permute(L, a.get_ints("dims")); });
  t.lowered(
      "aten::view_copy(Tensor self, SymInt[] size) -> Tensor",
      [](const MetaInference& m) { return copied(view(m, "size", true)); }, lower_reshape);
  t.lowered(
      "aten::narrow_copy(Tensor self, int dim, SymInt start, SymInt length) -> Tensor",
      [](const MetaInference& m) { return narrow_copy(m); }, lower_slice);
}

}  // namespace hi
