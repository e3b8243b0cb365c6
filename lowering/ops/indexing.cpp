// Indexing: reads at positions held in index tensors (embedding, index_select, gather, index.Tensor), lowered to
// indirect loads; adds at such positions (scatter_add, index_put with accumulate, index_add), lowered to scatter
// kernels of atomic adds; scatters of one position per line, lowered to pointwise selections; and the inverse
// question, where values fall in a sorted sequence (bucketize, searchsorted).
#include <optional>
#include <string>

#include "lowering/lowering_context.h"
#include "lowering/op_registry.h"

namespace hi {
namespace {

using lowering::compute_type;
using lowering::GraphLowering;
using lowering::Scalar;
using lowering::scalar_expr;
using lowering::TensorValue;

void require_index_tensor(const MetaInference& m, std::string_view name, const TensorMeta& t) {
  if (t.dtype != DType::Int64 && t.dtype != DType::Int32) {
    m.fail(name, "expected an int64 or int32 index tensor, got " + std::string(dtype_name(t.dtype)));
  }
}

Metas embedding(const MetaInference& m) {
  TensorMeta w = m.tensor("weight"), idx = m.tensor("indices");
  if (w.rank() != 2) m.fail("weight", "must be 2-d, got sizes " + sizes_str(w.sizes));
  require_index_tensor(m, "indices", idx);
  std::vector<Index> sizes = idx.sizes;
  sizes.push_back(w.sizes[1]);
  return one(w.dtype, sizes);
}

Metas index_select(const MetaInference& m) {
  TensorMeta in = m.tensor("self"), idx = m.tensor("index");
  require_index_tensor(m, "index", idx);
  if (idx.rank() > 1) m.fail("index", "must be 0-d or 1-d, got sizes " + sizes_str(idx.sizes));
  if (in.rank() == 0) return one(in.dtype, {});
  size_t d = static_cast<size_t>(m.wrap_dim("dim", m.int_arg("dim"), in.rank()));
  std::vector<Index> sizes = in.sizes;
  sizes[d] = idx.rank() == 0 ? Index(1) : idx.sizes[0];
  return one(in.dtype, sizes);
}

Metas gather(const MetaInference& m) {
  TensorMeta in = m.tensor("self"), idx = m.tensor("index");
  if (idx.dtype != DType::Int64) m.fail("index", "expected an int64 tensor, got " + std::string(dtype_name(idx.dtype)));
  m.wrap_dim("dim", m.int_arg("dim"), in.rank());
  if (idx.rank() != in.rank() && !(idx.rank() <= 1 && in.rank() <= 1)) {
    m.fail("index", "must have the input's rank " + std::to_string(in.rank()) + ", got sizes " + sizes_str(idx.sizes));
  }
  return one(in.dtype, idx.sizes);
}

/// index.Tensor with integer index tensors (boolean masks make data-dependent shapes and are rejected).
Metas index_tensor(const MetaInference& m) {
  TensorMeta in = m.tensor("self");
  const auto& refs = m.arg("indices").tensors();
  if (static_cast<int64_t>(refs.size()) > in.rank()) {
    m.fail("indices", std::to_string(refs.size()) + " indices for a tensor of rank " + std::to_string(in.rank()));
  }
  std::vector<size_t> indexed;
  std::vector<Index> b;
  for (size_t d = 0; d < refs.size(); ++d) {
    if (!refs[d]) continue;
    const TensorMeta t = m.graph().meta(*refs[d]);
    require_index_tensor(m, "indices", t);
    indexed.push_back(d);
    std::vector<Index> merged(std::max(b.size(), t.sizes.size()));
    for (size_t i = 0; i < merged.size(); ++i) {
      const Index* x = i < b.size() ? &b[b.size() - 1 - i] : nullptr;
      const Index* y = i < t.sizes.size() ? &t.sizes[t.sizes.size() - 1 - i] : nullptr;
      Index& r = merged[merged.size() - 1 - i];
      if (!y)
        r = *x;
      else if (!x || x->is_const(1))
        r = *y;
      else if (y->is_const(1) || *x == *y)
        r = *x;
      else
        m.fail("indices", "index shapes " + sizes_str(b) + " and " + sizes_str(t.sizes) + " do not broadcast");
    }
    b = std::move(merged);
  }
  if (indexed.empty()) return one(in.dtype, in.sizes);
  bool adjacent = indexed.back() - indexed.front() + 1 == indexed.size();
  std::vector<Index> rest;
  std::vector<Index> sizes;
  for (size_t d = 0; d < in.sizes.size(); ++d) {
    bool is_indexed = d < refs.size() && refs[d];
    if (is_indexed) {
      if (adjacent && d == indexed.front()) sizes.insert(sizes.end(), b.begin(), b.end());
      continue;
    }
    sizes.push_back(in.sizes[d]);
  }
  if (!adjacent) sizes.insert(sizes.begin(), b.begin(), b.end());
  return one(in.dtype, sizes);
}

/// scatter_add, index_put, index_add: the result is self's dtype and shape.
Metas scatter_like(const MetaInference& m, const char* index_name) {
  TensorMeta in = m.tensor("self");
  if (std::string_view(index_name) == "indices") {
    for (const auto& r : m.arg("indices").tensors())
      if (r) {
        const TensorMeta t = m.graph().meta(*r);
        if (t.dtype != DType::Bool && t.dtype != DType::UInt8) require_index_tensor(m, "indices", t);
      }
  } else {
    require_index_tensor(m, index_name, m.tensor(index_name));
    if (in.rank() > 0) m.wrap_dim("dim", m.int_arg("dim"), in.rank());
  }
  return one(in.dtype, in.sizes);
}

/// bucketize / searchsorted: an insertion point per value (a number: one, 0-d), int64 or, with out_int32, int32.
Metas search(const MetaInference& m, bool bucketize) {
  const char* seq = bucketize ? "boundaries" : "sorted_sequence";
  TensorMeta s = m.tensor(seq);
  if (s.rank() < 1) m.fail(seq, "must have at least one dim");
  if (bucketize && s.rank() != 1) m.fail(seq, "bucketize needs a 1-d boundaries tensor");
  DType t = m.arg("out_int32").boolean() ? DType::Int32 : DType::Int64;
  const Arg& v = m.arg("self");
  return one(t, v.is_tensor() ? m.tensor("self").sizes : std::vector<Index>{});
}

/// An index value read from `index` at `coords`, as int64 with negative values wrapped by `size`.
Expr wrapped_index(GraphLowering& L, const TensorValue& index, const std::vector<Index>& coords, const Index& size) {
  Expr i = Expr::cast(L.at(index, coords), DType::Int64);
  Expr negative = Expr::binary(BinaryOp::Lt, i, Expr::constant(0, DType::Int64), DType::Bool);
  return Expr::where(negative, Expr::binary(BinaryOp::Add, i, Expr::index_value(size, DType::Int64), DType::Int64), i);
}

std::vector<TensorValue> lower_embedding(GraphLowering& L, const BoundArgs&) {
  const TensorMeta& m = L.out_meta();
  TensorValue weight = L.tensor("weight");
  TensorValue indices = L.tensor("indices");
  if (weight.rank() != 2) L.fail("weight must be 2-d");
  return {L.make(m.dtype, m.sizes, {&weight, &indices}, [&](const std::vector<Index>& c) {
    std::vector<Index> ic(c.begin(), c.end() - 1);
    Expr row = wrapped_index(L, indices, ic, weight.sizes[0]);
    return L.at_indirect(weight, {Index(0), c.back()}, {{0, row}});
  })};
}

std::vector<TensorValue> lower_index_select(GraphLowering& L, const BoundArgs& args) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor("self");
  int64_t dim = L.wrap_dim(args.get_int("dim"), self.rank());
  TensorValue index = L.tensor("index");
  return {L.make(m.dtype, m.sizes, {&self, &index}, [&](const std::vector<Index>& c) {
    if (self.rank() == 0) return L.at(self, {});
    std::vector<Index> ic;
    if (index.rank() == 1) ic.push_back(c[dim]);
    Expr i = wrapped_index(L, index, ic, self.sizes[dim]);
    return L.at_indirect(self, c, {{static_cast<size_t>(dim), i}});
  })};
}

std::vector<TensorValue> lower_gather(GraphLowering& L, const BoundArgs& args) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor("self");
  int64_t dim = L.wrap_dim(args.get_int("dim"), self.rank());
  TensorValue index = L.tensor("index");
  return {L.make(m.dtype, m.sizes, {&self, &index}, [&](const std::vector<Index>& c) {
    if (self.rank() == 0) return L.at(self, {});
    Expr i = wrapped_index(L, index, c, self.sizes[dim]);
    return L.at_indirect(self, c, {{static_cast<size_t>(dim), i}});
  })};
}

/// index.Tensor: advanced indexing. The index tensors broadcast to a shape B; when the indexed dims are adjacent B
/// takes their place, otherwise B comes first (NumPy's rule).
std::vector<TensorValue> lower_index(GraphLowering& L, const BoundArgs&) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor("self");
  std::vector<std::optional<TensorValue>> indices = L.tensor_list("indices");
  if (static_cast<int64_t>(indices.size()) > self.rank()) L.fail("too many indices for the tensor's rank");
  std::vector<size_t> indexed;
  size_t b_rank = 0;
  for (size_t d = 0; d < indices.size(); ++d) {
    if (!indices[d]) continue;
    if (indices[d]->dtype == DType::Bool || indices[d]->dtype == DType::UInt8)
      L.fail("boolean mask indices are not supported (they make data-dependent shapes)");
    indexed.push_back(d);
    b_rank = std::max(b_rank, indices[d]->sizes.size());
  }
  if (indexed.empty()) return lower_convert(L);
  bool adjacent = indexed.back() - indexed.front() + 1 == indexed.size();
  size_t b_start = adjacent ? indexed.front() : 0;
  std::vector<Index> b_sizes(m.sizes.begin() + b_start, m.sizes.begin() + b_start + b_rank);
  std::vector<const TensorValue*> ts{&self};
  for (auto& t : indices)
    if (t) ts.push_back(&*t);
  return {L.make(m.dtype, m.sizes, ts, [&](const std::vector<Index>& c) {
    std::vector<Index> bc(c.begin() + b_start, c.begin() + b_start + b_rank);
    std::vector<Index> in(self.rank(), Index(0));
    std::map<size_t, Expr> indirect;
    size_t out = 0;
    for (int64_t d = 0; d < self.rank(); ++d) {
      bool is_indexed = d < static_cast<int64_t>(indices.size()) && indices[d];
      if (is_indexed) {
        const TensorValue& t = *indices[d];
        indirect[d] = wrapped_index(L, t, L.broadcast_coords(t, b_sizes, bc), self.sizes[d]);
        continue;
      }
      if (out == b_start) out += b_rank;
      in[d] = c[out++];
    }
    return L.at_indirect(self, in, indirect);
  })};
}

/// The element types atomic adds exist for on every target (bool sums are logical ors: eager's).
void require_atomic_add_type(GraphLowering& L, DType t) {
  if (t == DType::Bool) L.fail("adds into a bool tensor are not lowered");
}

/// scatter_add(self, dim, index, src): self[x with x[dim] = index[x]] += src[x] for every x of index's shape.
std::vector<TensorValue> lower_scatter_add(GraphLowering& L, const BoundArgs& args) {
  TensorValue self = L.tensor("self"), index = L.tensor("index"), src = L.tensor("src");
  require_atomic_add_type(L, self.dtype);
  if (self.rank() == 0 || index.rank() != self.rank() || src.rank() != self.rank())
    L.fail("scatter_add of 0-d tensors or of operands of different ranks is not lowered");
  const int64_t dim = L.wrap_dim(args.get_int("dim"), self.rank());
  return {L.scatter_add(self, index.sizes, {&index, &src},
                        [&](const std::vector<Index>& x, std::vector<Index>& target, std::map<size_t, Expr>& ind) {
                          target = x;
                          ind[dim] = wrapped_index(L, index, x, self.sizes[dim]);
                          return L.at(src, x);
                        })};
}

/// scatter(self, dim, index, value) and scatter(self, dim, index, src) with one position per line along dim
/// (index.size(dim) == 1, self's sizes elsewhere): each line of self has at most one element replaced, so the result
/// is pointwise, where(x[dim] == index[x with x[dim] = 0], value, self[x]), with no second kernel and no atomics
/// (cross-entropy's backward scatters -1 so into zeros, at each row's target). Other index shapes stay eager's: a
/// line's several positions may name one element twice, and which value it keeps then is eager's to choose.
std::vector<TensorValue> lower_scatter(GraphLowering& L, const BoundArgs& args, bool from_src) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor("self"), index = L.tensor("index");
  if (self.rank() == 0 || index.rank() != self.rank())
    L.fail("scatter of 0-d tensors or with an index of another rank is not lowered");
  const int64_t dim = L.wrap_dim(args.get_int("dim"), self.rank());
  for (int64_t d = 0; d < self.rank(); ++d)
    if (d == dim ? !index.sizes[d].is_const(1) : !(index.sizes[d] == self.sizes[d]))
      L.fail("scatter is lowered with one index per line along dim (index sizes " + sizes_str(index.sizes) +
             ", self's " + sizes_str(self.sizes) + ")");
  std::optional<TensorValue> src;
  std::optional<Scalar> value;
  std::vector<const TensorValue*> ts{&self, &index};
  if (from_src) {
    src = L.tensor("src");
    if (src->rank() != self.rank()) L.fail("scatter with a src of another rank is not lowered");
    ts.push_back(&*src);
  } else {
    value = L.scalar("value");
    if (!value) L.fail("scatter's value is not a number");
  }
  return {L.make(m.dtype, m.sizes, ts, [&](const std::vector<Index>& c) {
    std::vector<Index> line = c;
    line[dim] = Index(0);
    Expr target = wrapped_index(L, index, line, self.sizes[dim]);
    Expr hit = Expr::binary(BinaryOp::Eq, Expr::index_value(c[dim], DType::Int64), target, DType::Bool);
    Expr v = src ? Expr::cast(L.at(*src, line), m.dtype) : scalar_expr(*value, m.dtype);
    return Expr::where(hit, v, L.at(self, c));
  })};
}

/// index_add(self, dim, index, source, alpha): self[x with x[dim] = index[x[dim]]] += alpha * source[x].
std::vector<TensorValue> lower_index_add(GraphLowering& L, const BoundArgs& args) {
  TensorValue self = L.tensor("self"), index = L.tensor("index"), source = L.tensor("source");
  require_atomic_add_type(L, self.dtype);
  if (self.rank() == 0 || source.rank() != self.rank() || index.rank() > 1)
    L.fail("index_add of 0-d tensors, of operands of different ranks or with a multi-dim index is not lowered");
  const int64_t dim = L.wrap_dim(args.get_int("dim"), self.rank());
  const DType compute = compute_type(self.dtype);
  const std::optional<Scalar> alpha = L.scalar("alpha");
  return {L.scatter_add(self, source.sizes, {&index, &source},
                        [&](const std::vector<Index>& x, std::vector<Index>& target, std::map<size_t, Expr>& ind) {
                          target = x;
                          std::vector<Index> ic;
                          if (index.rank() == 1) ic.push_back(x[dim]);
                          ind[dim] = wrapped_index(L, index, ic, self.sizes[dim]);
                          Expr v = Expr::cast(L.at(source, x), compute);
                          if (alpha && alpha->value != 1)
                            v = Expr::binary(BinaryOp::Mul, v, scalar_expr(*alpha, compute), compute);
                          return v;
                        })};
}

/// index_put(self, indices, values, accumulate=True): values (broadcast to the shape self[indices] has, see
/// lower_index) added at the positions the index tensors name. Without accumulate, elements named twice get one of
/// the values, which one unspecified: that stays eager's.
std::vector<TensorValue> lower_index_put(GraphLowering& L, const BoundArgs& args) {
  if (!args.get_bool("accumulate")) L.fail("index_put without accumulate is not lowered");
  TensorValue self = L.tensor("self"), values = L.tensor("values");
  require_atomic_add_type(L, self.dtype);
  std::vector<std::optional<TensorValue>> indices = L.tensor_list("indices");
  if (static_cast<int64_t>(indices.size()) > self.rank()) L.fail("too many indices for the tensor's rank");
  std::vector<size_t> indexed;
  std::vector<Index> b_sizes;  // the index tensors' broadcast shape
  for (size_t d = 0; d < indices.size(); ++d) {
    if (!indices[d]) continue;
    if (indices[d]->dtype == DType::Bool || indices[d]->dtype == DType::UInt8)
      L.fail("boolean mask indices are not supported (they make data-dependent shapes)");
    indexed.push_back(d);
    const std::vector<Index>& t = indices[d]->sizes;
    std::vector<Index> merged(std::max(b_sizes.size(), t.size()));
    for (size_t i = 0; i < merged.size(); ++i) {
      const Index* x = i < b_sizes.size() ? &b_sizes[b_sizes.size() - 1 - i] : nullptr;
      const Index* y = i < t.size() ? &t[t.size() - 1 - i] : nullptr;
      Index& r = merged[merged.size() - 1 - i];
      if (!y) r = *x;
      else if (!x || x->is_const(1)) r = *y;
      else if (y->is_const(1) || *x == *y) r = *x;
      else L.fail("index shapes do not broadcast");
    }
    b_sizes = std::move(merged);
  }
  if (indexed.empty()) L.fail("index_put without index tensors is not lowered");
  const bool adjacent = indexed.back() - indexed.front() + 1 == indexed.size();
  const size_t b_start = adjacent ? indexed.front() : 0, b_rank = b_sizes.size();
  std::vector<Index> sizes;  // the shape of self[indices]
  for (size_t d = 0; d < self.sizes.size(); ++d) {
    if (d < indices.size() && indices[d]) {
      if (adjacent && d == indexed.front()) sizes.insert(sizes.end(), b_sizes.begin(), b_sizes.end());
      continue;
    }
    sizes.push_back(self.sizes[d]);
  }
  if (!adjacent) sizes.insert(sizes.begin(), b_sizes.begin(), b_sizes.end());
  if (values.rank() > static_cast<int64_t>(sizes.size())) L.fail("values have more dims than self[indices]");
  std::vector<const TensorValue*> ts{&values};
  for (auto& t : indices)
    if (t) ts.push_back(&*t);
  return {L.scatter_add(self, sizes, ts,
                        [&](const std::vector<Index>& x, std::vector<Index>& target, std::map<size_t, Expr>& ind) {
                          std::vector<Index> bc(x.begin() + b_start, x.begin() + b_start + b_rank);
                          size_t out = 0;
                          for (int64_t d = 0; d < self.rank(); ++d) {
                            if (d < static_cast<int64_t>(indices.size()) && indices[d]) {
                              const TensorValue& t = *indices[d];
                              ind[d] = wrapped_index(L, t, L.broadcast_coords(t, b_sizes, bc), self.sizes[d]);
                              continue;
                            }
                            if (out == b_start) out += b_rank;
                            target[d] = x[out++];
                          }
                          return L.at(values, L.broadcast_coords(values, sizes, x));
                        })};
}

/// bucketize / searchsorted over a sorted sequence of at most kMaxSearchLength entries: the insertion point counts
/// the entries the binary search passes, !(b >= v) (left) or !(b > v) (right), so a NaN value lands after every entry
/// as eager's search puts it. A masked sum rather than a search (the IR has no data-dependent loops): quadratic, so
/// longer sequences and a sorter stay eager's. A sequence with NaN entries (which sorting puts last) can give
/// another insertion point than eager's search.
constexpr int64_t kMaxSearchLength = 4096;
std::vector<TensorValue> lower_search(GraphLowering& L, const BoundArgs& args, bool bucketize) {
  const TensorMeta& m = L.out_meta();
  TensorValue seq = L.tensor(bucketize ? "boundaries" : "sorted_sequence");
  std::optional<TensorValue> values;
  std::optional<Scalar> value_number;
  if (args.get("self").is_tensor())
    values = L.tensor("self");
  else
    value_number = L.scalar("self");
  // bucketize has neither a sorter nor a side.
  if (!bucketize && L.optional_tensor("sorter")) L.fail("a sorter is not lowered");
  bool right = args.get_bool("right");
  const std::string side = bucketize ? "" : args.str_or("side", "");
  if (side == "right")
    right = true;
  else if (side == "left")
    right = false;
  if (seq.rank() < 1) L.fail("the sorted sequence must have at least one dim");
  auto length = seq.sizes.back().as_const();
  if (!length || *length > kMaxSearchLength)
    L.fail("sorted sequences longer than " + std::to_string(kMaxSearchLength) + " are not lowered");
  const bool batched = seq.rank() > 1;
  if (batched && (!values || values->rank() != seq.rank())) L.fail("batched sequences need values of the same rank");
  DType t = compute_type(values ? promote_types(seq.dtype, values->dtype) : seq.dtype);
  std::vector<const TensorValue*> ts{&seq};
  if (values) ts.push_back(&*values);
  TensorValue count =
      L.reduction(m.sizes, {Index(*length)}, ts, [&](const std::vector<Index>& x, const std::vector<Index>& rv) {
        std::vector<Index> at_seq{rv[0]};
        if (batched) {
          at_seq.assign(x.begin(), x.end() - 1);
          at_seq.push_back(rv[0]);
        }
        Expr b = Expr::cast(L.at(seq, at_seq), t);
        Expr v = values ? Expr::cast(L.at(*values, x), t) : scalar_expr(*value_number, t);
        Expr passed =
            Expr::unary(UnaryOp::LogicalNot, Expr::binary(right ? BinaryOp::Gt : BinaryOp::Ge, b, v, DType::Bool));
        return Expr::reduce(ReduceOp::Sum, Expr::cast(passed, DType::Int64));
      });
  return {L.make(m.dtype, m.sizes, {&count},
                 [&](const std::vector<Index>& c) { return Expr::cast(L.at(count, c), m.dtype); })};
}

}  // namespace

void register_indexing_ops(OpTable& t) {
  t.lowered(
      "aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
      index_tensor, lower_index);
  t.lowered(
      "aten::gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor",
      gather, lower_gather);
  t.lowered(
      "aten::embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, "
      "bool sparse=False) -> Tensor",
      embedding, lower_embedding);
  t.lowered(
      "aten::index_select(Tensor self, int dim, Tensor index) -> Tensor",
      index_select, lower_index_select);
  t.lowered(
      "aten::scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor",
      [](const MetaInference& m) { return scatter_like(m, "index"); }, lower_scatter_add);
  t.lowered(
      "aten::scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor",
      [](const MetaInference& m) { return scatter_like(m, "index"); },
      [](GraphLowering& L, const BoundArgs& a) { return lower_scatter(L, a, false); });
  t.lowered(
      "aten::scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor",
      [](const MetaInference& m) { return scatter_like(m, "index"); },
      [](GraphLowering& L, const BoundArgs& a) { return lower_scatter(L, a, true); });
  t.lowered(
      "aten::index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor",
      [](const MetaInference& m) { return scatter_like(m, "index"); }, lower_index_add);
  t.lowered(
      "aten::index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor",
      [](const MetaInference& m) { return scatter_like(m, "indices"); }, lower_index_put);
  t.lowered(
      "aten::bucketize.Tensor(Tensor self, Tensor boundaries, *, bool out_int32=False, bool right=False) -> Tensor",
      [](const MetaInference& m) { return search(m, true); },
      [](GraphLowering& L, const BoundArgs& a) { return lower_search(L, a, true); });
  t.lowered(
      "aten::bucketize.Scalar(Scalar self, Tensor boundaries, *, bool out_int32=False, bool right=False) -> Tensor",
      [](const MetaInference& m) { return search(m, true); },
      [](GraphLowering& L, const BoundArgs& a) { return lower_search(L, a, true); });
  t.lowered(
      "aten::searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, bool out_int32=False, bool right=False, "
      "str? side=None, Tensor? sorter=None) -> Tensor",
      [](const MetaInference& m) { return search(m, false); },
      [](GraphLowering& L, const BoundArgs& a) { return lower_search(L, a, false); });
  t.lowered(
      "aten::searchsorted.Scalar(Tensor sorted_sequence, Scalar self, *, bool out_int32=False, bool right=False, "
      "str? side=None, Tensor? sorter=None) -> Tensor",
      [](const MetaInference& m) { return search(m, false); },
      [](GraphLowering& L, const BoundArgs& a) { return lower_search(L, a, false); });
}

}  // namespace hi
