#include "lowering/lower_graph.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "lowering/lowering_context.h"
#include "lowering/op_registry.h"

namespace hi::lowering {

int GraphLowering::add_buffer(const std::string& name, DType dtype, const std::vector<Index>& sizes,
                              const std::vector<Index>& strides, Index offset, BufferKind kind, int io_position) {
  Buffer b;
  b.name = name;
  b.dtype = dtype;
  b.kind = kind;
  b.sizes = sizes;
  b.strides = strides;
  b.offset = std::move(offset);
  b.io_position = io_position;
  p_.buffers.push_back(std::move(b));
  return static_cast<int>(p_.buffers.size()) - 1;
}

TensorValue GraphLowering::realize(const TensorValue& v) {
  int b = add_buffer("buf" + std::to_string(next_buffer_++), v.dtype, v.sizes,
                     TensorMeta::contiguous_strides(v.sizes), Index(0), BufferKind::Intermediate, -1);
  Computation c;
  c.name = p_.buffers[b].name;
  c.buffer = b;
  c.sizes = v.sizes;
  c.body = v.body;
  c.origins = v.origins;
  c.op_names = v.op_names;
  p_.computations.push_back(std::move(c));
  TensorValue out;
  out.dtype = v.dtype;
  out.sizes = v.sizes;
  out.body = Expr::load(b, Computation::store_index(p_.buffers[b]), v.dtype);
  return out;
}

Expr GraphLowering::at_indirect(TensorValue& v, std::vector<Index> coords, const std::map<size_t, Expr>& indirect) {
  // The run-time coordinates go in as the variables ind0, ind1, ... (no value's body holds them: indirect loads bind
  // their own), then each load whose address holds some becomes an indirect load binding those it holds. A gather
  // of log_softmax's output at the targets (cross entropy) so reads x[row, target] and the row's statistics,
  // instead of storing the whole log_softmax for one element per row (Inductor inlines it the same way).
  std::vector<Expr> args;
  for (const auto& [d, e] : indirect) {
    coords[d] = Index::var(indirect_var(args.size()));
    args.push_back(Expr::cast(e, DType::Int64));
  }
  auto holds = [&](const Index& i) {
    std::vector<size_t> used;
    for (size_t k = 0; k < args.size(); ++k)
      for (const std::string& var : free_vars(i))
        if (var == indirect_var(k)) used.push_back(k);
    return used;
  };
  auto inlinable = [&](const Expr& body) {
    if (body->op == ExprOp::Load && body->args.empty()) return true;
    if (op_count(body) > options_.max_inline_ops) return false;
    bool ok = true;
    visit(body, [&](const Expr& e) {
      if (e->op == ExprOp::Reduce || (e->op == ExprOp::Load && !e->args.empty())) ok = false;
    });
    return ok;
  };
  if (!inlinable(v.body)) v = realize(v);
  bool through_index_value = false;
  visit(at(v, coords), [&](const Expr& e) {
    if (e->op == ExprOp::IndexValue && !holds(e->index).empty()) through_index_value = true;
  });
  if (through_index_value) v = realize(v);
  return rewrite(at(v, coords), [&](const Expr& e) -> std::optional<Expr> {
    if (e->op != ExprOp::Load) return std::nullopt;
    std::vector<size_t> used = holds(e->index);
    if (used.empty()) return std::nullopt;
    std::map<std::string, Index> renamed;
    std::vector<Expr> bound;
    for (size_t k : used) {
      renamed[indirect_var(k)] = Index::var(indirect_var(bound.size()));
      bound.push_back(args[k]);
    }
    return Expr::indirect_load(e->buffer, substitute(e->index, renamed), e->dtype, std::move(bound));
  });
}

TensorValue GraphLowering::scatter_add(
    const TensorValue& base, const std::vector<Index>& sizes, const std::vector<const TensorValue*>& inputs,
    const std::function<Expr(const std::vector<Index>&, std::vector<Index>&, std::map<size_t, Expr>&)>& fn) {
  TensorValue copy = make(base.dtype, base.sizes, {&base}, [&](const std::vector<Index>& c) { return at(base, c); });
  // Always a buffer of its own, even for a plain input: the adds must not reach the caller's tensor.
  TensorValue result = realize(copy);
  const int b = result.body->buffer;
  if (std::any_of(sizes.begin(), sizes.end(), [](const Index& s) { return s.is_const(0); })) return result;
  for (const auto& s : sizes) note_size(s);
  Computation c;
  c.name = p_.buffers[b].name + "_add";
  c.buffer = b;
  c.sizes = sizes;
  {
    ScopedLoopRanges scope(ranges_, sizes, out_var);
    std::vector<Index> target(base.sizes.size(), Index(0));
    std::map<size_t, Expr> indirect;
    c.body = Expr::cast(fn(coord_vars(sizes.size()), target, indirect), compute_type(base.dtype));
    std::vector<Expr> args;
    for (const auto& [d, e] : indirect) {
      target[d] = Index::var(indirect_var(args.size()));
      args.push_back(Expr::cast(e, DType::Int64));
    }
    Expr plain = at(result, target);
    c.scatter_target = Expr::indirect_load(b, plain->index, base.dtype, std::move(args));
  }
  c.origins = copy.origins;
  c.op_names = copy.op_names;
  for (const TensorValue* in : inputs) {
    merge_names(c.origins, in->origins);
    merge_names(c.op_names, in->op_names);
  }
  p_.computations.push_back(std::move(c));
  return result;
}

TensorValue GraphLowering::reduce(const TensorValue& input, std::vector<int64_t> dims, bool keepdim, ReduceOp op,
                                  DType acc, const std::function<Expr(const Expr&)>& prologue) {
  int64_t rank = input.rank();
  if (dims.empty())
    for (int64_t d = 0; d < rank; ++d) dims.push_back(d);
  for (auto& d : dims) d = wrap_dim(d, rank);
  if (rank == 0) dims.clear();  // dim 0 / -1 of a scalar names the scalar itself: nothing to reduce over
  std::sort(dims.begin(), dims.end());
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  std::vector<bool> reduced(rank, false);
  for (int64_t d : dims) reduced[d] = true;

  std::vector<Index> out_sizes, reduce_sizes;
  for (int64_t d = 0; d < rank; ++d) {
    if (reduced[d]) {
      reduce_sizes.push_back(input.sizes[d]);
      if (keepdim) out_sizes.push_back(Index(1));
    } else {
      out_sizes.push_back(input.sizes[d]);
    }
  }
  // Reading the input at (x.., r..): kept dims from the output coordinates, reduced dims from r0, r1, ...
  std::vector<Index> in_coords;
  size_t xi = 0, ri = 0;
  for (int64_t d = 0; d < rank; ++d) {
    if (reduced[d]) {
      in_coords.push_back(Index::var(reduce_var(ri++)));
      if (keepdim) ++xi;
    } else {
      in_coords.push_back(Index::var(out_var(xi++)));
    }
  }
  Expr value;
  {
    ScopedLoopRanges xs(ranges_, out_sizes, out_var);
    ScopedLoopRanges rs(ranges_, reduce_sizes, reduce_var);
    value = Expr::cast(at(input, in_coords), acc);
  }
  if (prologue) value = prologue(value);

  Expr body;
  if (op == ReduceOp::ArgMax || op == ReduceOp::ArgMin) {
    // The position is the row-major flat index over the reduced dims (over all dims for a flat argmax).
    std::vector<Index> strides = TensorMeta::contiguous_strides(reduce_sizes);
    std::vector<Index> terms;
    for (size_t i = 0; i < reduce_sizes.size(); ++i) terms.push_back(Index::var(reduce_var(i)) * strides[i]);
    body = Expr::arg_reduce(op, value, Expr::index_value(sum(terms), DType::Int64));
  } else {
    body = Expr::reduce(op, value);
  }
  return add_reduction(body, out_sizes, reduce_sizes, {&input});
}

TensorValue GraphLowering::add_reduction(const Expr& body, const std::vector<Index>& out_sizes,
                                         const std::vector<Index>& reduce_sizes,
                                         const std::vector<const TensorValue*>& inputs) {
  DType result_type = body->dtype;
  int b = add_buffer("buf" + std::to_string(next_buffer_++), result_type, out_sizes,
                     TensorMeta::contiguous_strides(out_sizes), Index(0), BufferKind::Intermediate, -1);
  Computation c;
  c.name = p_.buffers[b].name;
  c.buffer = b;
  c.sizes = out_sizes;
  c.reduce_sizes = reduce_sizes;
  // Reducing no dims (a 0-d input, or an empty dim list on one) is a reduction over one element: keep it a
  // reduction with a unit domain so kernels and the verifier see one shape of computation.
  if (c.reduce_sizes.empty()) c.reduce_sizes.push_back(Index(1));
  c.body = body;
  for (const TensorValue* in : inputs) merge_names(c.origins, in->origins);
  merge_names(c.origins, {node_->name});
  for (const TensorValue* in : inputs) merge_names(c.op_names, in->op_names);
  merge_names(c.op_names, {short_op_name(node_->target)});
  p_.computations.push_back(std::move(c));

  TensorValue out;
  out.dtype = result_type;
  out.sizes = out_sizes;
  out.body = Expr::load(b, Computation::store_index(p_.buffers[b]), result_type);
  return out;
}

void GraphLowering::lower_node(int index) {
  const Node& n = g_.nodes[index];
  node_ = &n;
  values_[index].resize(n.outputs.size());
  if (n.kind == NodeKind::Placeholder) {
    const TensorMeta& m = out_meta();
    // A symbol may appear only in an input's strides or offset (a slice of a tensor of another dynamic size): it is
    // a symbol of the graph as much as the sizes' are.
    for (const auto& s : m.sizes) note_size(s);
    for (const auto& s : m.strides) note_size(s);
    note_size(m.offset);
    int pos = static_cast<int>(p_.inputs.size());
    int b = add_buffer("in" + std::to_string(pos), m.dtype, m.sizes, m.strides, m.offset, BufferKind::Input, pos);
    p_.inputs.push_back(b);
    TensorValue v;
    v.dtype = m.dtype;
    v.sizes = m.sizes;
    v.body = Expr::load(b, Computation::store_index(p_.buffers[b]), m.dtype);
    values_[index][0] = std::move(v);
    return;
  }
  const OpDef* def = find_op(n.target);
  if (!def || !def->lowered()) fail("no lowering for this op");
  // Outputs with no elements have no values to compute: a constant stands for them, and the op's lowering, whose
  // index arithmetic may divide by the empty extent (a reshape's flat index, a tile's shape), never runs. Consumers
  // that are not empty themselves (a sum over the empty dim, a concatenation) never evaluate it either.
  if (!n.outputs.empty() && std::all_of(n.outputs.begin(), n.outputs.end(), [](const TensorMeta& m) {
        return std::any_of(m.sizes.begin(), m.sizes.end(), [](const Index& s) { return s.is_const(0); });
      })) {
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      TensorValue v;
      v.dtype = n.outputs[i].dtype;
      v.sizes = n.outputs[i].sizes;
      v.body = Expr::constant(0, v.dtype);
      v.origins = {n.name};
      v.op_names = {"empty"};
      values_[index][i] = std::move(v);
    }
    return;
  }
  std::vector<TensorValue> results;
  // Bound once per node; a graph the schema rejects is a LoweringError here, as every failure to lower is.
  try {
    BoundArgs bound = bind_args(n, def->schema);
    args_ = &bound;
    results = def->lower(*this, bound);
    args_ = nullptr;
  } catch (const SchemaError& e) {
    args_ = nullptr;
    throw LoweringError(e.what());
  } catch (...) {
    args_ = nullptr;
    throw;
  }
  if (results.size() > n.outputs.size()) fail("lowering produced more outputs than the node's meta lists");
  for (size_t i = 0; i < results.size(); ++i) {
    TensorValue& v = results[i];
    const TensorMeta& m = n.outputs[i];
    if (v.sizes.size() != m.sizes.size()) fail("lowered output " + std::to_string(i) + " has the wrong rank");
    for (size_t d = 0; d < m.sizes.size(); ++d)
      if (v.sizes[d] != m.sizes[d])
        fail("lowered output " + std::to_string(i) + " has size " + v.sizes[d].str() + " in dim " +
             std::to_string(d) + ", meta says " + m.sizes[d].str());
    if (v.dtype != m.dtype) {
      v.body = Expr::cast(v.body, m.dtype);
      v.dtype = m.dtype;
    }
    const int ops = op_count(v.body);
    if ((uses_[index] > 1 && ops > options_.max_inline_ops) || ops > options_.max_body_ops) {
      v = realize(v);
    } else if (auto o = output_refs_.find({index, i}); o != output_refs_.end() && uses_[index] > o->second &&
               m.is_contiguous() && has_transcendental(v.body)) {
      // A graph output is stored anyway: other nodes read that copy instead of evaluating its transcendentals again
      // (as Inductor's outputs are buffers its consumers read). RoPE's cos/sin of [T, D], read by q and k of
      // [B, H, T, D], were computed B * H times over; realize_output makes this buffer the output, no copy.
      v = realize(v);
    }
    values_[index][i] = std::move(v);
  }
}

void GraphLowering::realize_output(size_t position, const ValueRef& ref) {
  const TensorMeta& m = g_.meta(ref);
  const TensorValue& v = *values_.at(ref.node).at(ref.output);
  // A value that is exactly an intermediate buffer with the output's layout becomes that output: no copy.
  if (v.body->op == ExprOp::Load) {
    Buffer& b = p_.buffers[v.body->buffer];
    if (b.kind == BufferKind::Intermediate && b.dtype == m.dtype && b.sizes == m.sizes &&
        v.body->index == Computation::store_index(b) && m.is_contiguous()) {
      b.kind = BufferKind::Output;
      b.io_position = static_cast<int>(position);
      b.name = "out" + std::to_string(position);
      p_.computations[p_.producer(v.body->buffer)].name = b.name;
      p_.outputs.push_back(v.body->buffer);
      return;
    }
  }
  int b = add_buffer("out" + std::to_string(position), m.dtype, m.sizes, m.strides, m.offset, BufferKind::Output,
                     static_cast<int>(position));
  Computation c;
  c.name = p_.buffers[b].name;
  c.buffer = b;
  c.sizes = m.sizes;
  c.body = Expr::cast(v.body, m.dtype);
  c.origins = v.origins;
  c.op_names = v.op_names;
  if (c.origins.empty()) {
    c.origins = {g_.nodes[ref.node].name};
    c.op_names = {"copy"};
  }
  p_.computations.push_back(std::move(c));
  p_.outputs.push_back(b);
}

LoopProgram GraphLowering::run() {
  for (const std::string& problem : verify_graph(g_)) throw LoweringError("invalid graph: " + problem);
  values_.resize(g_.nodes.size());
  uses_.assign(g_.nodes.size(), 0);
  auto count = [&](const Arg& a) {
    if (a.kind() == Arg::Kind::Tensor) ++uses_[a.tensor().node];
    if (a.kind() == Arg::Kind::TensorList)
      for (const auto& r : a.tensors())
        if (r) ++uses_[r->node];
  };
  for (const Node& n : g_.nodes) {
    for (const Arg& a : n.args) count(a);
    for (const auto& [k, a] : n.kwargs) count(a);
  }
  for (const ValueRef& r : g_.outputs) {
    ++uses_[r.node];
    ++output_refs_[{r.node, r.output}];
  }

  for (int i = 0; i < static_cast<int>(g_.nodes.size()); ++i) lower_node(i);
  node_ = nullptr;
  for (size_t i = 0; i < g_.outputs.size(); ++i) realize_output(i, g_.outputs[i]);
  p_.size_ranges = ranges_;
  for (const auto& problem : verify_loop_program(p_)) throw LoweringError("internal: " + problem);
  return std::move(p_);
}

// ---- pointwise ops' shared lowerings -------------------------------------------------------------------------------

/// dtype in which a pointwise op computes: torch.result_type of its operands (comparisons compute in it; arithmetic
/// results were decided by the same promotion in the meta rule).
DType operand_type(const std::vector<const TensorValue*>& tensors, const std::vector<Scalar>& scalars) {
  ResultType rt;
  for (const TensorValue* v : tensors) rt.add_tensor(v->dtype, v->rank());
  for (const Scalar& s : scalars) {
    rt.add_number(s.is_float ? Arg::Kind::Float : s.is_bool ? Arg::Kind::Bool : Arg::Kind::Int);
  }
  return rt.result().value_or(DType::Float32);
}

Expr binary_in(BinaryOp op, Expr a, Expr b, DType compute) {
  DType result = compute;
  switch (op) {
    case BinaryOp::Eq: case BinaryOp::Ne: case BinaryOp::Lt: case BinaryOp::Le: case BinaryOp::Gt: case BinaryOp::Ge:
    case BinaryOp::LogicalAnd: case BinaryOp::LogicalOr: case BinaryOp::LogicalXor:
      result = DType::Bool;
      break;
    default: break;
  }
  return Expr::binary(op, Expr::cast(std::move(a), compute), Expr::cast(std::move(b), compute), result);
}

/// `self op other` with broadcasting where either may be a tensor or a scalar (not both); `alpha` scales other
/// (add/sub). A scalar `self` comes from Python decompositions (logit's `1 - x` traces as sub.Tensor(1, x)).
std::vector<TensorValue> lower_binary(GraphLowering& L, BinaryOp op, bool scalar_other, bool has_alpha,
                                      bool math_in_float) {
  const TensorMeta& m = L.out_meta();
  // The operands are the schema's first two arguments: self and other, or exponent (pow).
  const std::vector<ArgSchema>& params = L.args().schema->args;
  auto operand = [&](const std::string& name, bool scalar_only, std::optional<TensorValue>& t,
                     std::optional<Scalar>& s) {
    if (scalar_only || !L.args().get(name).is_tensor())
      s = L.scalar(name);
    else
      t = L.tensor(name);
  };
  std::optional<TensorValue> self, other;
  std::optional<Scalar> self_scalar, other_scalar;
  operand(params.at(0).name, false, self, self_scalar);
  operand(params.at(1).name, scalar_other, other, other_scalar);
  if (!self && !other) L.fail("argument 'self' or 'other' must be a tensor");
  std::optional<Scalar> alpha = has_alpha ? L.scalar("alpha") : std::nullopt;
  std::vector<const TensorValue*> ts;
  for (const auto* t : {&self, &other})
    if (*t) ts.push_back(&**t);
  std::vector<Scalar> ss;
  for (const auto* x : {&self_scalar, &other_scalar})
    if (*x) ss.push_back(**x);
  DType operand_dtype = operand_type(ts, ss);
  // Half types compute in float32 (like eager's CUDA kernels); the result is rounded back by the final cast.
  DType compute = math_in_float ? compute_type(operand_dtype) : operand_dtype;
  // Integer operands of an op with a floating result (true division, atan2) compute in the result type.
  if (is_floating(m.dtype) && !is_floating(compute)) compute = compute_type(m.dtype);
  return {L.make(m.dtype, m.sizes, ts, [&](const std::vector<Index>& c) {
    auto value = [&](const std::optional<TensorValue>& t, const std::optional<Scalar>& s) {
      return t ? L.at(*t, L.broadcast_coords(*t, m.sizes, c)) : scalar_expr(*s, compute);
    };
    Expr a = value(self, self_scalar);
    Expr b = value(other, other_scalar);
    if (alpha && alpha->value != 1)
      b = Expr::binary(BinaryOp::Mul, Expr::cast(b, compute), scalar_expr(*alpha, compute), compute);
    return Expr::cast(binary_in(op, a, b, compute), m.dtype);
  })};
}

std::vector<TensorValue> lower_unary(GraphLowering& L, UnaryOp op) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor("self");
  DType compute = compute_type(is_floating(m.dtype) ? m.dtype : self.dtype);
  if (op == UnaryOp::IsNan || op == UnaryOp::IsInf || op == UnaryOp::LogicalNot) compute = self.dtype;
  return {L.make(m.dtype, m.sizes, {&self}, [&](const std::vector<Index>& c) {
    return Expr::cast(Expr::unary(op, Expr::cast(L.at(self, c), compute)), m.dtype);
  })};
}

std::vector<TensorValue> lower_convert(GraphLowering& L) {
  const TensorMeta& m = L.out_meta();
  // The input is the schema's first argument: self, or a (prims.convert_element_type).
  TensorValue self = L.tensor(L.args().schema->args.at(0).name);
  return {L.make(m.dtype, m.sizes, {&self}, [&](const std::vector<Index>& c) {
    return Expr::cast(L.at(self, c), m.dtype);
  })};
}

Moments moments(GraphLowering& L, const TensorValue& x, const std::vector<int64_t>& dims, double correction) {
  DType acc = compute_type(x.dtype) == DType::Float64 ? DType::Float64 : DType::Float32;
  Index n = Index(1);
  for (int64_t d : dims) {
    if (x.rank() == 0) break;  // the scalar is its own mean
    n = n * x.sizes[L.wrap_dim(d, x.rank())];
  }
  TensorValue total = L.reduce(x, dims, /*keepdim=*/true, ReduceOp::Sum, acc);
  std::vector<Index> kept = total.sizes;
  Moments mo;
  mo.count = n;
  mo.mean = L.make(acc, kept, {&total}, [&](const std::vector<Index>& c) {
    return Expr::binary(BinaryOp::Div, L.at(total, c), count_value(n, acc), acc);
  });
  // Two-pass variance (sum of squared deviations): as exact as eager's Welford, and one kernel once fused.
  TensorValue centered = L.make(acc, x.sizes, {&x}, [&](const std::vector<Index>& c) {
    Expr d = Expr::binary(BinaryOp::Sub, Expr::cast(L.at(x, c), acc), L.at(mo.mean, L.broadcast_coords(mo.mean, x.sizes, c)), acc);
    return Expr::binary(BinaryOp::Mul, d, d, acc);
  });
  TensorValue sq = L.reduce(centered, dims, /*keepdim=*/true, ReduceOp::Sum, acc);
  // max(0, N - correction): a constant, or computed in the accumulation type where N is symbolic.
  Expr denom;
  if (std::optional<int64_t> count = n.as_const()) {
    denom = Expr::constant(std::max(0.0, static_cast<double>(*count) - correction), acc);
  } else {
    denom = Expr::binary(BinaryOp::Maximum,
                         Expr::binary(BinaryOp::Sub, count_value(n, acc), Expr::constant(correction, acc), acc),
                         Expr::constant(0.0, acc), acc);
  }
  mo.variance = L.make(acc, kept, {&sq}, [&](const std::vector<Index>& c) {
    return Expr::binary(BinaryOp::Div, L.at(sq, c), denom, acc);
  });
  return mo;
}

TensorValue squeeze_dims(GraphLowering& L, const TensorValue& v, const std::vector<Index>& sizes,
                         const std::vector<int64_t>& dims) {
  if (v.sizes.size() == sizes.size()) return v;
  const int64_t rank = static_cast<int64_t>(v.sizes.size());
  std::set<int64_t> reduced;
  for (int64_t d : dims) reduced.insert(L.wrap_dim(d, rank));  // rank > 0: a 0-d value returned above
  if (rank - static_cast<int64_t>(reduced.size()) != static_cast<int64_t>(sizes.size()))
    L.fail("a reduction over " + std::to_string(reduced.size()) + " of " + std::to_string(rank) +
           " dims cannot have an output of rank " + std::to_string(sizes.size()));
  return L.remap(v, sizes, [&](const std::vector<Index>& c) {
    std::vector<Index> in;
    size_t o = 0;
    for (int64_t j = 0; j < rank; ++j) in.push_back(reduced.count(j) ? Index(0) : c[o++]);
    return in;
  });
}

}  // namespace hi::lowering

namespace hi {

bool has_lowering(const std::string& target) {
  const OpDef* def = find_op(target);
  return def && def->lowered();
}

std::vector<std::string> lowered_ops() {
  std::set<std::string> names;
  for (const OpDef* def : all_ops()) {
    if (def->lowered()) names.insert(def->schema.qualified_name);
  }
  return {names.begin(), names.end()};
}

LoopProgram lower_graph(const Graph& g, const LoweringOptions& options) {
  if (g.divisible.empty()) {
    LoopProgram p = lowering::GraphLowering(g, options).run();
    p.align = g.align;
    p.index32 = g.index32;
    return p;
  }
  // A symbol promised divisible by d is lowered as d * q: the simplifier then proves what the promise gives (vector
  // groups of a row of s0 columns, aligned accesses) with no rules of its own about divisibility, and the kernels
  // take q. LoopProgram::bind_symbols checks the promise and divides on every binding.
  std::map<std::string, Index> replacements;
  std::map<std::string, LoopProgram::Quotient> quotients;
  for (const auto& [symbol, divisor] : g.divisible) {
    const std::string q = symbol + "_div" + std::to_string(divisor);
    replacements[symbol] = Index(divisor) * Index::var(q);
    quotients[q] = {symbol, divisor};
  }
  Graph divided = substitute_symbols(g, replacements);
  divided.divisible.clear();
  LoopProgram p = lowering::GraphLowering(divided, options).run();
  p.align = g.align;
  p.index32 = g.index32;
  for (auto& [q, quotient] : quotients)
    if (p.size_ranges.count(q)) p.quotients[q] = quotient;
  return p;
}

}  // namespace hi
