// What op lowerings see of the lowering engine (lower_graph.cpp): values as expressions over their own coordinates
// (TensorValue), the GraphLowering that builds them (make, remap, reduce, realize, ...), and the helpers the op
// families share. Included by lower_graph.cpp and the family files in lowering/ops/, nothing else: the engine's
// contract to the rest of the compiler is lower_graph.h.
//
// A lowering (LowerFn, lowering/op_registry.h) receives the GraphLowering and the node's bound arguments, and returns
// one TensorValue per output of the node, in the output metas' sizes (the engine casts to the metas' dtypes). It
// reports what it cannot lower with GraphLowering::fail, a LoweringError naming the node and its op.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "ir/loop.h"
#include "ir/op_schema.h"
#include "lowering/lower_graph.h"

namespace hi::lowering {

/// A tensor known as an expression over its own coordinates x0..x{rank-1}, not (yet) in memory.
struct TensorValue {
  DType dtype = DType::Float32;
  std::vector<Index> sizes;
  Expr body;
  std::vector<std::string> origins;  ///< graph nodes inlined into body
  std::vector<std::string> op_names;

  int64_t rank() const { return static_cast<int64_t>(sizes.size()); }
};

inline std::vector<Index> coord_vars(size_t rank) {
  std::vector<Index> v;
  for (size_t i = 0; i < rank; ++i) v.push_back(Index::var(out_var(i)));
  return v;
}

inline std::string short_op_name(const std::string& target) {
  // "aten.native_layer_norm.default" -> "native_layer_norm"; "prims.convert_element_type.default" -> likewise.
  size_t first = target.find('.');
  size_t last = target.rfind('.');
  if (first == std::string::npos || first == last) return target;
  std::string name = target.substr(first + 1, last - first - 1);
  while (!name.empty() && name[0] == '_') name.erase(0, 1);
  return name;
}

/// Appends the names of `from` not yet in `into`, in order. Linear in both: a value inlined through a long chain
/// carries every node it holds, and searching the list per name made each step quadratic in the chain.
inline void merge_names(std::vector<std::string>& into, const std::vector<std::string>& from) {
  if (from.empty()) return;
  std::unordered_set<std::string_view> known(into.begin(), into.end());
  std::vector<std::string> added;
  for (const auto& s : from)
    if (known.insert(s).second) added.push_back(s);
  into.insert(into.end(), std::make_move_iterator(added.begin()), std::make_move_iterator(added.end()));
}

inline DType compute_type(DType t) { return (t == DType::Float16 || t == DType::BFloat16) ? DType::Float32 : t; }

/// Accumulation type of sum/prod/mean: float32 for half types, int64 for integers and bool.
inline DType accumulate_type(DType t) {
  if (t == DType::Float16 || t == DType::BFloat16) return DType::Float32;
  if (t == DType::Bool || is_integer(t)) return DType::Int64;
  return t;
}

/// Scalar operand of a pointwise op: its value and whether it is a floating-point Python number.
struct Scalar {
  double value = 0;
  bool is_float = false;
  bool is_bool = false;
};

/// Adds the ranges of loop variables over `sizes` for the lifetime of the scope (restoring what was there).
class ScopedLoopRanges {
 public:
  ScopedLoopRanges(VarRanges& ranges, const std::vector<Index>& sizes, std::string (*name)(size_t))
      : ranges_(ranges), saved_(ranges) {
    for (size_t i = 0; i < sizes.size(); ++i) {
      auto c = sizes[i].as_const();
      ranges[name(i)] = c ? Range::loop(std::max<int64_t>(*c, 1)) : Range{0, std::nullopt};
    }
  }
  ~ScopedLoopRanges() { ranges_ = saved_; }

 private:
  VarRanges& ranges_;
  VarRanges saved_;
};

class GraphLowering {
 public:
  GraphLowering(const Graph& g, const LoweringOptions& options) : g_(g), options_(options) {}

  LoopProgram run();

  // ---- what op lowerings use -------------------------------------------------------------------------------------
  const Node& node() const { return *node_; }
  [[noreturn]] void fail(const std::string& what) const {
    throw LoweringError("node '" + node_->name + "' (" + node_->target + "): " + what);
  }

  // Arguments by name, from the node's bound arguments (lowerings defined in the op registry).
  const BoundArgs& args() const {
    if (!args_) fail("internal: arguments are not bound");
    return *args_;
  }
  /// The tensor argument `name`.
  TensorValue tensor(std::string_view name) {
    const Arg& a = args().get(name);
    if (!a.is_tensor()) fail("argument '" + std::string(name) + "' must be a tensor");
    return value(a.tensor());
  }
  /// The tensor argument `name`; nullopt for None.
  std::optional<TensorValue> optional_tensor(std::string_view name) {
    const Arg& a = args().get(name);
    if (a.is_none()) return std::nullopt;
    if (!a.is_tensor()) fail("argument '" + std::string(name) + "' must be a tensor or None");
    return value(a.tensor());
  }
  /// The number argument `name` (a Scalar, or a number in a Tensor position); nullopt for None.
  std::optional<Scalar> scalar(std::string_view name) const {
    std::optional<Number> n = args().optional_number(name);
    if (!n) return std::nullopt;
    return Scalar{n->value, n->is_float(), n->is_bool()};
  }
  /// The tensor list argument `name` (Tensor[] / Tensor?[]); None entries stay nullopt.
  std::vector<std::optional<TensorValue>> tensor_list(std::string_view name) {
    std::vector<std::optional<TensorValue>> out;
    for (const auto& r : args().get(name).tensors()) {
      if (r) out.emplace_back(value(*r));
      else out.emplace_back(std::nullopt);
    }
    return out;
  }

  const TensorMeta& out_meta(size_t i = 0) const {
    if (i >= node_->outputs.size()) fail("has no meta for output " + std::to_string(i));
    return node_->outputs[i];
  }
  int64_t wrap_dim(int64_t dim, int64_t rank) const {
    int64_t r = std::max<int64_t>(rank, 1);
    if (dim < -r || dim >= r) fail("dimension " + std::to_string(dim) + " out of range for rank " + std::to_string(rank));
    return dim < 0 ? dim + r : dim;
  }

  /// The value of `v` at coordinates `coords` (one per dim of v), indices simplified.
  Expr at(const TensorValue& v, const std::vector<Index>& coords) const {
    std::map<std::string, Index> repl;
    for (size_t i = 0; i < coords.size(); ++i) repl[out_var(i)] = coords[i];
    return substitute_vars(v.body, repl, ranges_);
  }
  /// Coordinates of `v` when it is broadcast to `out_sizes` and read at `out_coords`.
  std::vector<Index> broadcast_coords(const TensorValue& v, const std::vector<Index>& out_sizes,
                                      const std::vector<Index>& out_coords) const {
    std::vector<Index> c;
    size_t off = out_sizes.size() - v.sizes.size();
    for (size_t j = 0; j < v.sizes.size(); ++j)
      c.push_back(v.sizes[j].is_const(1) && !out_sizes[j + off].is_const(1) ? Index(0) : out_coords[j + off]);
    return c;
  }

  /// A new value over `sizes` whose body is built by `fn` from the output coordinates; origins of `inputs` merged.
  TensorValue make(DType dtype, std::vector<Index> sizes, const std::vector<const TensorValue*>& inputs,
                   const std::function<Expr(const std::vector<Index>&)>& fn) {
    TensorValue v;
    v.dtype = dtype;
    v.sizes = std::move(sizes);
    for (const auto& s : v.sizes) note_size(s);
    {
      ScopedLoopRanges scope(ranges_, v.sizes, out_var);
      v.body = fn(coord_vars(v.sizes.size()));
    }
    for (const TensorValue* in : inputs) {
      merge_names(v.origins, in->origins);
      merge_names(v.op_names, in->op_names);
    }
    merge_names(v.origins, {node_->name});
    merge_names(v.op_names, {short_op_name(node_->target)});
    return v;
  }
  /// A value whose coordinates map to the coordinates of `in` (views): in_coords = map(out_coords).
  TensorValue remap(const TensorValue& in, std::vector<Index> sizes,
                    const std::function<std::vector<Index>(const std::vector<Index>&)>& map) {
    TensorValue v = make(in.dtype, std::move(sizes), {&in}, [&](const std::vector<Index>& c) { return at(in, map(c)); });
    return v;
  }

  /// Writes `v` into a new intermediate buffer and returns a value that loads it.
  TensorValue realize(const TensorValue& v);
  /// Reduces `input` over `dims` with `op` in `acc` type; returns the reduction result (sizes as keepdim says).
  TensorValue reduce(const TensorValue& input, std::vector<int64_t> dims, bool keepdim, ReduceOp op, DType acc,
                     const std::function<Expr(const Expr&)>& prologue = nullptr);

  /// Adds a reduction computation with a ready `body` (a Reduce over r0.. of an expression over x0.., r0..).
  TensorValue add_reduction(const Expr& body, const std::vector<Index>& out_sizes,
                            const std::vector<Index>& reduce_sizes, const std::vector<const TensorValue*>& inputs);
  /// A reduction whose body `fn(x, r)` is built from output coordinates x and reduction coordinates r.
  TensorValue reduction(std::vector<Index> out_sizes, std::vector<Index> reduce_sizes,
                        const std::vector<const TensorValue*>& inputs,
                        const std::function<Expr(const std::vector<Index>&, const std::vector<Index>&)>& fn) {
    for (const auto& s : out_sizes) note_size(s);
    for (const auto& s : reduce_sizes) note_size(s);
    Expr body;
    {
      ScopedLoopRanges xs(ranges_, out_sizes, out_var);
      ScopedLoopRanges rs(ranges_, reduce_sizes, reduce_var);
      std::vector<Index> r;
      for (size_t i = 0; i < reduce_sizes.size(); ++i) r.push_back(Index::var(reduce_var(i)));
      body = fn(coord_vars(out_sizes.size()), r);
    }
    return add_reduction(body, out_sizes, reduce_sizes, inputs);
  }
  /// An inclusive scan along `dim` of `sizes` (Computation::scan_dim), stored as `stored`: `fn(x, s)` is the Reduce
  /// of the element at position s of x's line (x[dim] itself must not appear; the scan's order does the masking).
  /// Linear in the data: a Scan kernel of its own (codegen/plan_scans.cpp).
  TensorValue scan(const std::vector<Index>& sizes, int64_t dim, DType stored, const std::vector<const TensorValue*>& inputs,
                   const std::function<Expr(const std::vector<Index>&, const Index&)>& fn) {
    TensorValue v = reduction(sizes, {sizes[dim]}, inputs,
                              [&](const std::vector<Index>& x, const std::vector<Index>& r) { return fn(x, r[0]); });
    Computation& c = p_.computations.back();
    c.scan_dim = static_cast<int>(dim);
    p_.buffers[c.buffer].dtype = stored;
    v.dtype = stored;
    v.body = Expr::load(c.buffer, v.body->index, stored);
    return v;
  }
  /// A copy of `base` in a new buffer, then every value `fn(x)` over `sizes` added to it, atomically, at base's
  /// coordinates that `fn` sets in `target` (one per dim of base), those of the dims in `indirect` (dim -> Int64
  /// expression, non-negative) computed at run time: scatter_add, index_put with accumulate, index_add. Returns the
  /// value that loads the result (readers follow the adds: Computation::scatter_target).
  TensorValue scatter_add(const TensorValue& base, const std::vector<Index>& sizes,
                          const std::vector<const TensorValue*>& inputs,
                          const std::function<Expr(const std::vector<Index>& x, std::vector<Index>& target,
                                                   std::map<size_t, Expr>& indirect)>& fn);
  /// `v` read at `coords`, where the coordinates of the dims in `indirect` (dim -> Int64 expression, non-negative)
  /// are values computed at run time: `v`'s body at those coordinates, each load whose address they reach an
  /// indirect load (see Expr::indirect_load). A value too costly to recompute per read (more than max_inline_ops
  /// operations) or whose index values they would reach is realized first, and `v` becomes that buffer.
  Expr at_indirect(TensorValue& v, std::vector<Index> coords, const std::map<size_t, Expr>& indirect);

  /// The graph input buffer `v` reads, when `v` is that input itself (a plain load in the input's own layout).
  std::optional<int> input_buffer(const TensorValue& v) const {
    if (v.body->op != ExprOp::Load || !v.body->args.empty()) return std::nullopt;
    const Buffer& b = p_.buffers[v.body->buffer];
    if (b.kind != BufferKind::Input) return std::nullopt;
    if (simplify(v.body->index, ranges_) != simplify(Computation::store_index(b), ranges_)) return std::nullopt;
    return v.body->buffer;
  }
  const Buffer& buffer(int b) const { return p_.buffers.at(b); }

  void note_size(const Index& s) {
    if (auto c = s.as_const()) return;
    for (const auto& name : free_vars(s))
      if (!ranges_.count(name)) ranges_[name] = Range{1, std::nullopt};
  }

 private:
  TensorValue value(const ValueRef& ref) {
    if (!ref.valid() || ref.node >= static_cast<int>(values_.size()) || ref.output < 0 ||
        ref.output >= static_cast<int>(values_[ref.node].size()) || !values_[ref.node][ref.output])
      fail("reads a value that was not computed (node " + std::to_string(ref.node) + ", output " +
           std::to_string(ref.output) + ")");
    return *values_[ref.node][ref.output];
  }
  void lower_node(int index);
  void realize_output(size_t position, const ValueRef& ref);
  int add_buffer(const std::string& name, DType dtype, const std::vector<Index>& sizes,
                 const std::vector<Index>& strides, Index offset, BufferKind kind, int io_position);

  const Graph& g_;
  LoweringOptions options_;
  const Node* node_ = nullptr;
  const BoundArgs* args_ = nullptr;  ///< node_'s bound arguments while a registry lowering runs
  LoopProgram p_;
  VarRanges ranges_;
  std::vector<std::vector<std::optional<TensorValue>>> values_;
  std::vector<int> uses_;
  std::map<std::pair<int, size_t>, int> output_refs_;  ///< (node, output) -> times the graph's outputs list it
  int next_buffer_ = 0;
};


/// The dtype a pointwise op computes in: torch.result_type of its operands (ResultType).
DType operand_type(const std::vector<const TensorValue*>& tensors, const std::vector<Scalar>& scalars);
/// `a op b` computed in `compute` (comparisons and logical ops give bool).
Expr binary_in(BinaryOp op, Expr a, Expr b, DType compute);
/// A binary pointwise op over the schema's first two arguments, broadcast; either may be a number (`scalar_other`:
/// the second always is). `has_alpha`: `alpha` scales the second (add, sub). Half types compute in float32 unless
/// `math_in_float` is false.
std::vector<TensorValue> lower_binary(GraphLowering& L, BinaryOp op, bool scalar_other, bool has_alpha = false,
                                      bool math_in_float = true);
/// A unary pointwise op of `self`, in float32 for half types and in the result type for integer input to a
/// floating op.
std::vector<TensorValue> lower_unary(GraphLowering& L, UnaryOp op);

/// PyTorch's dtype conversion of `self` to the output meta (also clone, alias, and ops that reduce to a copy, such as
/// a scan over a 0-d tensor).
std::vector<TensorValue> lower_convert(GraphLowering& L);

/// Mean and variance over `dims` in float (or double) accumulation; variance divides by N - correction.
struct Moments {
  TensorValue mean;      ///< keepdim sizes
  TensorValue variance;  ///< keepdim sizes
  Index count;           ///< N, over the size symbols where the reduced dims are symbolic
};

/// The element count `n` as a value of `t`: a constant, or (over size symbols) the index cast to `t`, so divisions
/// by a count work for symbolic sizes too.
inline Expr count_value(const Index& n, DType t) {
  if (std::optional<int64_t> c = n.as_const()) return Expr::constant(static_cast<double>(*c), t);
  return Expr::cast(Expr::index_value(n, DType::Int64), t);
}

/// Mean and variance of `x` over `dims` (keepdim sizes), the variance divided by N - correction: two reductions
/// (sum, then sum of squared deviations) in float32, or float64 for double input.
Moments moments(GraphLowering& L, const TensorValue& x, const std::vector<int64_t>& dims, double correction);
/// `v` (a keepdim value of a reduction over `dims`) with those dims dropped when `sizes` (the output meta's) has fewer
/// dims. The reduced dims are named, not found by their size 1: in [1, 1, 7, 1] reduced over dim 3, the first size-1
/// dims are kept ones.
TensorValue squeeze_dims(GraphLowering& L, const TensorValue& v, const std::vector<Index>& sizes,
                         const std::vector<int64_t>& dims);

/// Comparison type of max/min/argmax values: float for half types, int64 for integers and bool.
inline DType extreme_type(DType t) {
  if (t == DType::Bool || is_integer(t)) return DType::Int64;
  return compute_type(t);
}

/// Python slice bound: negative counts from the end, then clamped to [0, size].
inline int64_t slice_bound(int64_t v, int64_t size) {
  if (v < 0) v += size;
  return std::clamp<int64_t>(v, 0, size);
}

/// A number operand as a constant of the computation type.
inline Expr scalar_expr(const Scalar& s, DType t) { return Expr::constant(s.value, t); }

// Index conditions of gathers (padding, windows, concatenation).
/// Index coordinate clamped into [0, size - 1]: lanes a `where` discards still load in bounds.
inline Index clamp_coord(const Index& i, const Index& size) { return min(max(i, Index(0)), size - Index(1)); }
/// `a op b` for index expressions (op a comparison), as a bool expression.
inline Expr compare(BinaryOp op, const Index& a, const Index& b) {
  return Expr::binary(op, Expr::index_value(a, DType::Int64), Expr::index_value(b, DType::Int64), DType::Bool);
}
/// 0 <= o < n, as a bool expression.
inline Expr in_range(const Index& o, const Index& n) {
  return Expr::binary(BinaryOp::LogicalAnd, compare(BinaryOp::Ge, o, Index(0)), compare(BinaryOp::Lt, o, n),
                      DType::Bool);
}
/// `all` and `ok` (`ok` where `all` is still empty): conditions gathered dim by dim.
inline void and_into(std::optional<Expr>& all, const Expr& ok) {
  all = all ? Expr::binary(BinaryOp::LogicalAnd, *all, ok, DType::Bool) : ok;
}

}  // namespace hi::lowering
