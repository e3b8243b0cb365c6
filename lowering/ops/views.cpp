// Views that rearrange a tensor's dims: view, reshape, permute, t, transpose, expand, squeeze / unsqueeze, alias, and
// the copying twins of view and permute. A view lowers to a remap of its input's coordinates; nothing is copied until
// a consumer realizes it. Views that take part of a tensor are in slices.cpp.
#include <algorithm>
#include <limits>
#include <optional>

#include "lowering/lowering_context.h"
#include "lowering/op_registry.h"

namespace hi {
namespace {

using lowering::GraphLowering;
using lowering::lower_convert;
using lowering::TensorValue;

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
      "aten::permute(Tensor(a) self, int[] dims) -> Tensor(a)", permute,
      [](GraphLowering& L, const BoundArgs& a) { return lower_permute(L, a.get_ints("dims")); });
  t.lowered("aten::t(Tensor(a) self) -> Tensor(a)", t_meta, lower_t);
  t.lowered(
      "aten::transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)",
      transpose_int, lower_transpose);
  t.lowered(
      "aten::expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)",
      expand, lower_expand);
  t.lowered(
      "aten::unsqueeze(Tensor(a) self, int dim) -> Tensor(a)", unsqueeze,
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
      "aten::alias(Tensor(a) self) -> Tensor(a)", alias,
      [](GraphLowering& L, const BoundArgs&) { return lower_convert(L); });
  // Views' copying twins (functionalized graphs, OpInfo's *_copy ops that PyTorch does not decompose): a lowered
  // view is already index arithmetic realized into its own buffer.
  t.lowered(
      "aten::permute_copy(Tensor self, int[] dims) -> Tensor",
      [](const MetaInference& m) { return copied(permute(m)); },
      [](GraphLowering& L, const BoundArgs& a) { return lower_permute(L, a.get_ints("dims")); });
  t.lowered(
      "aten::view_copy(Tensor self, SymInt[] size) -> Tensor",
      [](const MetaInference& m) { return copied(view(m, "size", true)); }, lower_reshape);
}

}  // namespace hi
