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
namespace {
/// Lowerings not yet moved into the op registry's family files, found by position rather than bound arguments.
using LegacyLowerFn = std::function<std::vector<TensorValue>(GraphLowering&)>;
const std::map<std::string, LegacyLowerFn>& legacy_lowerings();
}  // namespace

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
    for (const auto& s : m.sizes) note_size(s);
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
  std::vector<TensorValue> results;
  if (const OpDef* def = find_op(n.target); def && def->lowered()) {
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
  } else {
    auto it = legacy_lowerings().find(n.target);
    if (it == legacy_lowerings().end()) fail("no lowering for this op");
    results = it->second(*this);
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
    if (uses_[index] > 1 && op_count(v.body) > options_.max_inline_ops) {
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

namespace {

// ---- op lowerings ------------------------------------------------------------------------------------------------

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
std::vector<TensorValue> lower_binary(GraphLowering& L, BinaryOp op, bool scalar_other, bool has_alpha = false,
                                      bool math_in_float = true) {
  const TensorMeta& m = L.out_meta();
  auto operand = [&](size_t i, const char* name, bool scalar_only, std::optional<TensorValue>& t,
                     std::optional<Scalar>& s) {
    if (scalar_only || !L.required(i, name).is_tensor())
      s = L.scalar(i, name);
    else
      t = L.tensor(i, name);
  };
  std::optional<TensorValue> self, other;
  std::optional<Scalar> self_scalar, other_scalar;
  operand(0, "self", false, self, self_scalar);
  operand(1, "other", scalar_other, other, other_scalar);
  if (!self && !other) L.fail("argument 'self' or 'other' must be a tensor");
  std::optional<Scalar> alpha = has_alpha ? L.scalar(2, "alpha") : std::nullopt;
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
  TensorValue self = L.tensor(0, "self");
  DType compute = compute_type(is_floating(m.dtype) ? m.dtype : self.dtype);
  if (op == UnaryOp::IsNan || op == UnaryOp::IsInf || op == UnaryOp::LogicalNot) compute = self.dtype;
  return {L.make(m.dtype, m.sizes, {&self}, [&](const std::vector<Index>& c) {
    return Expr::cast(Expr::unary(op, Expr::cast(L.at(self, c), compute)), m.dtype);
  })};
}

std::vector<TensorValue> lower_clamp(GraphLowering& L, bool tensor_bounds, int which /*0 both, 1 min, 2 max*/) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor(0, "self");
  std::optional<TensorValue> lo_t, hi_t;
  std::optional<Scalar> lo_s, hi_s;
  size_t lo_pos = 1, hi_pos = which == 2 ? 1 : 2;
  const char* lo_name = which == 1 ? "min" : "min";
  const char* hi_name = "max";
  if (which != 2) {
    if (tensor_bounds) lo_t = L.optional_tensor(lo_pos, lo_name);
    else lo_s = L.scalar(lo_pos, lo_name);
  }
  if (which != 1) {
    if (tensor_bounds) hi_t = L.optional_tensor(hi_pos, hi_name);
    else hi_s = L.scalar(hi_pos, hi_name);
  }
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

std::vector<TensorValue> lower_where(GraphLowering& L) {
  const TensorMeta& m = L.out_meta();
  TensorValue cond = L.tensor(0, "condition");
  const Arg& a_self = L.required(1, "self");
  const Arg& a_other = L.required(2, "other");
  std::optional<TensorValue> self, other;
  std::optional<Scalar> self_s, other_s;
  if (a_self.is_tensor()) self = L.tensor(1, "self"); else self_s = L.scalar(1, "self");
  if (a_other.is_tensor()) other = L.tensor(2, "other"); else other_s = L.scalar(2, "other");
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

std::vector<TensorValue> lower_convert(GraphLowering& L) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor(0, "self");
  return {L.make(m.dtype, m.sizes, {&self}, [&](const std::vector<Index>& c) {
    return Expr::cast(L.at(self, c), m.dtype);
  })};
}

Moments moments(GraphLowering& L, const TensorValue& x, const std::vector<int64_t>& dims, double correction) {
  DType acc = compute_type(x.dtype) == DType::Float64 ? DType::Float64 : DType::Float32;
  int64_t n = 1;
  for (int64_t d : dims) {
    if (x.rank() == 0) break;  // the scalar is its own mean
    auto s = x.sizes[L.wrap_dim(d, x.rank())].as_const();
    if (!s) L.fail("normalization over symbolic sizes is not supported yet");
    n *= *s;
  }
  TensorValue total = L.reduce(x, dims, /*keepdim=*/true, ReduceOp::Sum, acc);
  std::vector<Index> kept = total.sizes;
  Moments mo;
  mo.count = n;
  mo.mean = L.make(acc, kept, {&total}, [&](const std::vector<Index>& c) {
    return Expr::binary(BinaryOp::Div, L.at(total, c), Expr::constant(static_cast<double>(n), acc), acc);
  });
  // Two-pass variance (sum of squared deviations): as exact as eager's Welford, and one kernel once fused.
  TensorValue centered = L.make(acc, x.sizes, {&x}, [&](const std::vector<Index>& c) {
    Expr d = Expr::binary(BinaryOp::Sub, Expr::cast(L.at(x, c), acc), L.at(mo.mean, L.broadcast_coords(mo.mean, x.sizes, c)), acc);
    return Expr::binary(BinaryOp::Mul, d, d, acc);
  });
  TensorValue sq = L.reduce(centered, dims, /*keepdim=*/true, ReduceOp::Sum, acc);
  double denom = std::max(0.0, static_cast<double>(n) - correction);
  mo.variance = L.make(acc, kept, {&sq}, [&](const std::vector<Index>& c) {
    return Expr::binary(BinaryOp::Div, L.at(sq, c), Expr::constant(denom, acc), acc);
  });
  return mo;
}

TensorValue squeeze_dims(GraphLowering& L, const TensorValue& v, const std::vector<Index>& sizes) {
  if (v.sizes.size() == sizes.size()) return v;
  return L.remap(v, sizes, [&](const std::vector<Index>& c) {
    std::vector<Index> in;
    size_t o = 0;
    for (size_t j = 0; j < v.sizes.size(); ++j) {
      if (o < sizes.size() && sizes[o] == v.sizes[j] && (v.sizes.size() - j <= sizes.size() - o || !v.sizes[j].is_const(1)))
        in.push_back(c[o++]);
      else
        in.push_back(Index(0));
    }
    return in;
  });
}

namespace {

// ---- more pointwise ------------------------------------------------------------------------------------------------

/// rsub: other - alpha * self.
std::vector<TensorValue> lower_rsub(GraphLowering& L, bool scalar_other) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor(0, "self");
  std::optional<TensorValue> other;
  std::optional<Scalar> other_scalar;
  const Arg& a = L.required(1, "other");
  if (!scalar_other && a.is_tensor()) other = L.tensor(1, "other");
  else other_scalar = L.scalar(1, "other");
  std::optional<Scalar> alpha = L.scalar(2, "alpha");
  std::vector<const TensorValue*> ts{&self};
  if (other) ts.push_back(&*other);
  std::vector<Scalar> ss;
  if (other_scalar) ss.push_back(*other_scalar);
  DType compute = compute_type(operand_type(ts, ss));
  if (is_floating(m.dtype) && !is_floating(compute)) compute = compute_type(m.dtype);
  return {L.make(m.dtype, m.sizes, ts, [&](const std::vector<Index>& c) {
    Expr x = Expr::cast(L.at(self, L.broadcast_coords(self, m.sizes, c)), compute);
    Expr y = other ? Expr::cast(L.at(*other, L.broadcast_coords(*other, m.sizes, c)), compute)
                   : scalar_expr(*other_scalar, compute);
    if (alpha && alpha->value != 1) x = Expr::binary(BinaryOp::Mul, x, scalar_expr(*alpha, compute), compute);
    return Expr::cast(Expr::binary(BinaryOp::Sub, y, x, compute), m.dtype);
  })};
}

/// div with rounding_mode: None is true division, "trunc" / "floor" round the quotient (integers: exact).
std::vector<TensorValue> lower_div_mode(GraphLowering& L, bool scalar_other) {
  std::string mode = L.str_arg(kKwargOnly, "rounding_mode", "");
  if (mode.empty()) return lower_binary(L, BinaryOp::Div, scalar_other);
  if (mode != "trunc" && mode != "floor") L.fail("rounding_mode must be None, 'trunc' or 'floor', got '" + mode + "'");
  const TensorMeta& m = L.out_meta();
  if (mode == "trunc" && L.required(1, "other").is_tensor() && is_floating(m.dtype) &&
      dtype_bytes(m.dtype) == 2) {
    // CPU and CUDA eager divide 16-bit tensors in float, round the quotient to the 16-bit type (c10::BFloat16's
    // operator/), then truncate: bf16 -6.3125 / 1.0547 is -5.985 in float, -6.0 rounded, so -6 where trunc in
    // float gives -5. A Python-number divisor keeps the float quotient (bf16 22.375 / 0.7 truncates to 31).
    std::vector<TensorValue> q = lower_binary(L, BinaryOp::Div, scalar_other);
    q[0].body = Expr::cast(Expr::unary(UnaryOp::Trunc, Expr::cast(q[0].body, DType::Float32)), m.dtype);
    return q;
  }
  return lower_binary(L, mode == "trunc" ? BinaryOp::TruncDiv : BinaryOp::FloorDiv, scalar_other);
}

/// pow.Tensor_Scalar with the exponents PyTorch's kernels special-case (CUDA's pow_tensor_scalar_kernel; the CPU's
/// does the same for float types): 0.5, -0.5 and -1 as sqrt, rsqrt and reciprocal, 2, 3 and -2 as products in the
/// tensor's type, so a 16-bit x ** 3 rounds x * x before the second multiply, as eager's does. A general pow costs
/// about 70 instructions (GPT-2's tanh gelu, x ** 3 of 4096 x 3072 bf16 values: 59 us on the H200, Inductor 16 us).
std::vector<TensorValue> lower_pow_tensor_scalar(GraphLowering& L) {
  auto e = L.scalar(1, "exponent");
  const TensorMeta& m = L.out_meta();
  const double k = e ? e->value : 0.0;
  const bool special =
      e && (k == 2 || k == 3 || (is_floating(m.dtype) && (k == 0.5 || k == -0.5 || k == -1 || k == -2)));
  if (!special) return lower_binary(L, BinaryOp::Pow, true);
  TensorValue self = L.tensor(0, "self");
  DType compute = compute_type(m.dtype);
  return {L.make(m.dtype, m.sizes, {&self}, [&](const std::vector<Index>& c) {
    Expr v = Expr::cast(L.at(self, c), compute);
    // A product in the tensor's type: rounded to it where that is narrower than the compute type.
    auto mul = [&](const Expr& a, const Expr& b) {
      return Expr::cast(Expr::cast(Expr::binary(BinaryOp::Mul, a, b, compute), m.dtype), compute);
    };
    Expr r;
    if (k == 0.5) r = Expr::unary(UnaryOp::Sqrt, v);
    else if (k == -0.5) r = Expr::unary(UnaryOp::Rsqrt, v);
    else if (k == -1) r = Expr::unary(UnaryOp::Reciprocal, v);
    else if (k == 2) r = Expr::binary(BinaryOp::Mul, v, v, compute);
    else if (k == 3) r = Expr::binary(BinaryOp::Mul, mul(v, v), v, compute);
    else r = Expr::unary(UnaryOp::Reciprocal, mul(v, v));
    return Expr::cast(r, m.dtype);
  })};
}

/// pow.Scalar: a number raised to a tensor.
std::vector<TensorValue> lower_pow_scalar(GraphLowering& L) {
  const TensorMeta& m = L.out_meta();
  auto base = L.scalar(0, "self");
  if (!base) L.fail("missing argument 'self'");
  TensorValue e = L.tensor(1, "exponent");
  DType compute = compute_type(m.dtype);
  return {L.make(m.dtype, m.sizes, {&e}, [&](const std::vector<Index>& c) {
    Expr x = Expr::cast(L.at(e, c), compute);
    return Expr::cast(Expr::binary(BinaryOp::Pow, scalar_expr(*base, compute), x, compute), m.dtype);
  })};
}

/// isinf / isnan of integers and bools are constant false.
std::vector<TensorValue> lower_float_predicate(GraphLowering& L, UnaryOp op) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor(0, "self");
  if (is_floating(self.dtype)) return lower_unary(L, op);
  return {L.make(m.dtype, m.sizes, {&self}, [&](const std::vector<Index>&) { return Expr::constant(0, m.dtype); })};
}

/// signbit: the sign bit of floats (-0.0 and NaNs with it set too: copysign(1, x) < 0); integers below zero.
std::vector<TensorValue> lower_signbit(GraphLowering& L) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor(0, "self");
  DType compute = compute_type(self.dtype);
  return {L.make(m.dtype, m.sizes, {&self}, [&](const std::vector<Index>& c) {
    Expr x = Expr::cast(L.at(self, c), compute);
    if (self.dtype == DType::Bool) return Expr::constant(0, m.dtype);
    if (is_floating(compute)) x = Expr::binary(BinaryOp::Copysign, Expr::constant(1, compute), x, compute);
    return Expr::cast(Expr::binary(BinaryOp::Lt, x, Expr::constant(0, compute), DType::Bool), m.dtype);
  })};
}

/// angle of a real tensor: pi below zero, else 0; NaN stays NaN (eager's angle_impl).
std::vector<TensorValue> lower_angle(GraphLowering& L) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor(0, "self");
  DType compute = compute_type(m.dtype);
  return {L.make(m.dtype, m.sizes, {&self}, [&](const std::vector<Index>& c) {
    Expr x = Expr::cast(L.at(self, c), compute);
    Expr negative = Expr::binary(BinaryOp::Lt, x, Expr::constant(0, compute), DType::Bool);
    Expr v = Expr::where(negative, Expr::constant(3.14159265358979323846, compute), Expr::constant(0, compute));
    return Expr::cast(Expr::where(Expr::unary(UnaryOp::IsNan, x), x, v), m.dtype);
  })};
}

/// round.decimals: round(x * 10^d) / 10^d (d < 0: round(x / 10^-d) * 10^-d), as eager computes it.
std::vector<TensorValue> lower_round_decimals(GraphLowering& L) {
  int64_t decimals = L.int_arg(kKwargOnly, "decimals", 0);
  if (decimals == 0) return lower_unary(L, UnaryOp::Round);
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor(0, "self");
  DType compute = compute_type(m.dtype);
  if (!is_floating(compute)) return lower_convert(L);
  double scale = std::pow(10.0, static_cast<double>(std::llabs(decimals)));
  return {L.make(m.dtype, m.sizes, {&self}, [&](const std::vector<Index>& c) {
    Expr x = Expr::cast(L.at(self, c), compute);
    Expr k = Expr::constant(scale, compute);
    BinaryOp in = decimals > 0 ? BinaryOp::Mul : BinaryOp::Div, out = decimals > 0 ? BinaryOp::Div : BinaryOp::Mul;
    Expr r = Expr::unary(UnaryOp::Round, Expr::binary(in, x, k, compute));
    return Expr::cast(Expr::binary(out, r, k, compute), m.dtype);
  })};
}

std::vector<TensorValue> lower_leaky_relu(GraphLowering& L) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor(0, "self");
  double slope = L.float_arg(1, "negative_slope", 0.01);
  DType compute = compute_type(m.dtype);
  return {L.make(m.dtype, m.sizes, {&self}, [&](const std::vector<Index>& c) {
    Expr x = Expr::cast(L.at(self, c), compute);
    Expr pos = Expr::binary(BinaryOp::Gt, x, Expr::constant(0, compute), DType::Bool);
    return Expr::cast(Expr::where(pos, x, Expr::binary(BinaryOp::Mul, x, Expr::constant(slope, compute), compute)),
                      m.dtype);
  })};
}

/// ldexp(self, other) = self * 2 ** other, in the (floating) result type, as eager computes it (PyTorch 2.11 keeps
/// it whole; earlier releases decompose it so).
std::vector<TensorValue> lower_ldexp(GraphLowering& L) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor(0, "self");
  TensorValue other = L.tensor(1, "other");
  DType compute = compute_type(m.dtype);
  return {L.make(m.dtype, m.sizes, {&self, &other}, [&](const std::vector<Index>& c) {
    Expr x = Expr::cast(L.at(self, L.broadcast_coords(self, m.sizes, c)), compute);
    Expr e = Expr::cast(L.at(other, L.broadcast_coords(other, m.sizes, c)), compute);
    Expr scale = Expr::binary(BinaryOp::Pow, Expr::constant(2, compute), e, compute);
    return Expr::cast(Expr::binary(BinaryOp::Mul, x, scale, compute), m.dtype);
  })};
}

/// trigamma as PyTorch's calc_trigamma, in x's compute type T: reflection below 0.5, six recurrence steps, then the
/// asymptotic series, whose polynomial eager evaluates in double (its coefficients are double literals) before
/// rounding the sum to T.
Expr trigamma_expr(Expr x, DType t) {
  auto k = [&](double v, DType d) { return Expr::constant(v, d); };
  auto bin = [](BinaryOp op, Expr a, Expr b, DType d) { return Expr::binary(op, std::move(a), std::move(b), d); };
  const DType d = DType::Float64;
  Expr reflect = bin(BinaryOp::Lt, x, k(0.5, t), DType::Bool);
  Expr pi = k(3.14159265358979323846, t);
  Expr s = Expr::unary(UnaryOp::Sin, bin(BinaryOp::Mul, pi, x, t));
  Expr pole = bin(BinaryOp::Div, bin(BinaryOp::Mul, pi, pi, t), bin(BinaryOp::Mul, s, s, t), t);
  Expr result = Expr::where(reflect, bin(BinaryOp::Sub, k(0, t), pole, t), k(0, t));
  Expr sign = Expr::where(reflect, k(-1, t), k(1, t));
  Expr v = Expr::where(reflect, bin(BinaryOp::Sub, k(1, t), x, t), x);
  for (int i = 0; i < 6; ++i) {
    result = bin(BinaryOp::Add, result, bin(BinaryOp::Div, k(1, t), bin(BinaryOp::Mul, v, v, t), t), t);
    v = bin(BinaryOp::Add, v, k(1, t), t);
  }
  Expr ixx = Expr::cast(bin(BinaryOp::Div, k(1, t), bin(BinaryOp::Mul, v, v, t), t), d);
  Expr poly = bin(
      BinaryOp::Mul, ixx,
      bin(BinaryOp::Sub, k(1.0 / 6, d),
          bin(BinaryOp::Mul, ixx, bin(BinaryOp::Sub, k(1.0 / 30, d), bin(BinaryOp::Mul, ixx, k(1.0 / 42, d), d), d), d),
          d),
      d);
  Expr head =
      Expr::cast(bin(BinaryOp::Add, k(1, t), bin(BinaryOp::Div, k(1, t), bin(BinaryOp::Mul, k(2, t), v, t), t), t), d);
  Expr tail = bin(BinaryOp::Div, bin(BinaryOp::Add, head, poly, d), Expr::cast(v, d), d);
  result = Expr::cast(bin(BinaryOp::Add, Expr::cast(result, d), tail, d), t);
  return bin(BinaryOp::Mul, sign, result, t);
}

/// polygamma(n, self) as PyTorch's calc_polygamma, in x's compute type: digamma for n = 0, trigamma for n = 1, else
/// (-1)^(n+1) n! zeta(n + 1, x) with the Hurwitz zeta in double, rounded to that type before the factor multiplies.
std::vector<TensorValue> lower_polygamma(GraphLowering& L) {
  const TensorMeta& m = L.out_meta();
  int64_t n = L.int_arg(0, "n");
  if (n < 0) L.fail("n must be non-negative, got " + std::to_string(n));
  TensorValue self = L.tensor(1, "self");
  DType compute = compute_type(m.dtype);
  const double factor = (n % 2 ? 1.0 : -1.0) * std::tgamma(static_cast<double>(n) + 1);
  return {L.make(m.dtype, m.sizes, {&self}, [&](const std::vector<Index>& c) {
    Expr x = Expr::cast(L.at(self, c), compute);
    if (n == 0) return Expr::cast(Expr::unary(UnaryOp::Digamma, x), m.dtype);
    if (n == 1) return Expr::cast(trigamma_expr(x, compute), m.dtype);
    Expr z = Expr::binary(BinaryOp::Zeta, Expr::constant(static_cast<double>(n) + 1, DType::Float64),
                          Expr::cast(x, DType::Float64), DType::Float64);
    z = Expr::cast(Expr::cast(z, compute), DType::Float64);
    return Expr::cast(Expr::binary(BinaryOp::Mul, Expr::constant(factor, DType::Float64), z, DType::Float64), m.dtype);
  })};
}

/// elu(self, alpha, scale, input_scale): x * scale where x > 0, else expm1(x * input_scale) * alpha * scale (core
/// ATen on recent PyTorch, which no longer decomposes it).
std::vector<TensorValue> lower_elu(GraphLowering& L) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor(0, "self");
  double alpha = L.float_arg(1, "alpha", 1), scale = L.float_arg(2, "scale", 1);
  double input_scale = L.float_arg(3, "input_scale", 1);
  DType compute = compute_type(m.dtype);
  auto k = [&](double v) { return Expr::constant(v, compute); };
  return {L.make(m.dtype, m.sizes, {&self}, [&](const std::vector<Index>& c) {
    Expr x = Expr::cast(L.at(self, c), compute);
    Expr neg = Expr::binary(BinaryOp::Mul,
                            Expr::unary(UnaryOp::Expm1, Expr::binary(BinaryOp::Mul, x, k(input_scale), compute)),
                            k(alpha * scale), compute);
    Expr nonpositive = Expr::binary(BinaryOp::Le, x, k(0), DType::Bool);
    return Expr::cast(Expr::where(nonpositive, neg, Expr::binary(BinaryOp::Mul, x, k(scale), compute)), m.dtype);
  })};
}

/// elu_backward(grad_output, alpha, scale, input_scale, is_result, self_or_result), as ATen's kernel: where the
/// saved value is <= 0, grad * input_scale * (result + alpha * scale) from the result, or grad * input_scale * alpha
/// * scale * exp(x * input_scale) from the input; elsewhere grad * scale.
std::vector<TensorValue> lower_elu_backward(GraphLowering& L) {
  const TensorMeta& m = L.out_meta();
  TensorValue grad = L.tensor(0, "grad_output");
  double alpha = L.float_arg(1, "alpha", 1), scale = L.float_arg(2, "scale", 1);
  double input_scale = L.float_arg(3, "input_scale", 1);
  bool is_result = L.bool_arg(4, "is_result", false);
  TensorValue saved = L.tensor(5, "self_or_result");
  DType compute = compute_type(m.dtype);
  auto k = [&](double v) { return Expr::constant(v, compute); };
  return {L.make(m.dtype, m.sizes, {&grad, &saved}, [&](const std::vector<Index>& c) {
    Expr g = Expr::cast(L.at(grad, L.broadcast_coords(grad, m.sizes, c)), compute);
    Expr a = Expr::cast(L.at(saved, L.broadcast_coords(saved, m.sizes, c)), compute);
    Expr slope =
        is_result
            ? Expr::binary(BinaryOp::Mul, k(input_scale), Expr::binary(BinaryOp::Add, a, k(alpha * scale), compute),
                           compute)
            : Expr::binary(BinaryOp::Mul, k(input_scale * alpha * scale),
                           Expr::unary(UnaryOp::Exp, Expr::binary(BinaryOp::Mul, a, k(input_scale), compute)), compute);
    Expr nonpositive = Expr::binary(BinaryOp::Le, a, k(0), DType::Bool);
    Expr d = Expr::where(nonpositive, Expr::binary(BinaryOp::Mul, g, slope, compute),
                         Expr::binary(BinaryOp::Mul, g, k(scale), compute));
    return Expr::cast(d, m.dtype);
  })};
}

std::vector<TensorValue> lower_hardtanh(GraphLowering& L) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor(0, "self");
  double lo = L.float_arg(1, "min_val", -1), hi = L.float_arg(2, "max_val", 1);
  DType compute = compute_type(m.dtype);
  return {L.make(m.dtype, m.sizes, {&self}, [&](const std::vector<Index>& c) {
    Expr x = Expr::cast(L.at(self, c), compute);
    x = Expr::binary(BinaryOp::Maximum, x, Expr::constant(lo, compute), compute);
    return Expr::cast(Expr::binary(BinaryOp::Minimum, x, Expr::constant(hi, compute), compute), m.dtype);
  })};
}

const std::map<std::string, LegacyLowerFn>& legacy_lowerings() {
  static const std::map<std::string, LegacyLowerFn> table = [] {
    std::map<std::string, LegacyLowerFn> t;
    auto binary = [&](const std::string& name, BinaryOp op, bool alpha = false) {
      t["aten." + name + ".Tensor"] = [op, alpha](GraphLowering& L) { return lower_binary(L, op, false, alpha); };
      t["aten." + name + ".Scalar"] = [op, alpha](GraphLowering& L) { return lower_binary(L, op, true, alpha); };
    };
    binary("add", BinaryOp::Add, true);
    binary("sub", BinaryOp::Sub, true);
    binary("mul", BinaryOp::Mul);
    binary("div", BinaryOp::Div);
    binary("eq", BinaryOp::Eq);
    binary("ne", BinaryOp::Ne);
    binary("lt", BinaryOp::Lt);
    binary("le", BinaryOp::Le);
    binary("gt", BinaryOp::Gt);
    binary("ge", BinaryOp::Ge);
    t["aten.maximum.default"] = [](GraphLowering& L) { return lower_binary(L, BinaryOp::Maximum, false); };
    t["aten.minimum.default"] = [](GraphLowering& L) { return lower_binary(L, BinaryOp::Minimum, false); };
    t["aten.logical_and.default"] = [](GraphLowering& L) { return lower_binary(L, BinaryOp::LogicalAnd, false); };
    t["aten.logical_or.default"] = [](GraphLowering& L) { return lower_binary(L, BinaryOp::LogicalOr, false); };
    t["aten.pow.Tensor_Scalar"] = lower_pow_tensor_scalar;
    t["aten.pow.Tensor_Tensor"] = [](GraphLowering& L) { return lower_binary(L, BinaryOp::Pow, false); };
    const std::pair<const char*, UnaryOp> unary[] = {
        {"neg", UnaryOp::Neg}, {"abs", UnaryOp::Abs}, {"exp", UnaryOp::Exp}, {"log", UnaryOp::Log},
        {"sqrt", UnaryOp::Sqrt}, {"rsqrt", UnaryOp::Rsqrt}, {"tanh", UnaryOp::Tanh}, {"sigmoid", UnaryOp::Sigmoid},
        {"relu", UnaryOp::Relu}, {"erf", UnaryOp::Erf}, {"sin", UnaryOp::Sin}, {"cos", UnaryOp::Cos},
        {"reciprocal", UnaryOp::Reciprocal}, {"log1p", UnaryOp::Log1p}, {"expm1", UnaryOp::Expm1},
        {"floor", UnaryOp::Floor}, {"ceil", UnaryOp::Ceil}, {"logical_not", UnaryOp::LogicalNot},
        {"silu", UnaryOp::Silu}, {"exp2", UnaryOp::Exp2}, {"log2", UnaryOp::Log2}, {"trunc", UnaryOp::Trunc},
        {"sign", UnaryOp::Sign}, {"isnan", UnaryOp::IsNan}};
    for (const auto& [name, op] : unary) {
      UnaryOp o = op;
      t[std::string("aten.") + name + ".default"] = [o](GraphLowering& L) { return lower_unary(L, o); };
    }
    t["aten.gelu.default"] = [](GraphLowering& L) {
      std::string approx = L.str_arg(1, "approximate", "none");
      if (approx != "none" && approx != "tanh") L.fail("approximate must be 'none' or 'tanh', got '" + approx + "'");
      return lower_unary(L, approx == "tanh" ? UnaryOp::GeluTanh : UnaryOp::GeluErf);
    };
    t["aten.where.self"] = lower_where;
    t["aten.clamp.default"] = [](GraphLowering& L) { return lower_clamp(L, false, 0); };
    t["aten.clamp.Tensor"] = [](GraphLowering& L) { return lower_clamp(L, true, 0); };
    t["aten.clamp_min.default"] = [](GraphLowering& L) { return lower_clamp(L, false, 1); };
    t["aten.clamp_max.default"] = [](GraphLowering& L) { return lower_clamp(L, false, 2); };
    t["aten._to_copy.default"] = [](GraphLowering& L) { return lower_convert(L); };
    t["prims.convert_element_type.default"] = [](GraphLowering& L) { return lower_convert(L); };
    t["aten.clone.default"] = [](GraphLowering& L) { return lower_convert(L); };
    t["aten.lift_fresh_copy.default"] = [](GraphLowering& L) { return lower_convert(L); };

    // Pointwise.
    binary("fmod", BinaryOp::Fmod);
    binary("remainder", BinaryOp::Remainder);
    binary("bitwise_and", BinaryOp::BitwiseAnd);
    binary("bitwise_or", BinaryOp::BitwiseOr);
    binary("bitwise_xor", BinaryOp::BitwiseXor);
    t["aten.rsub.Tensor"] = [](GraphLowering& L) { return lower_rsub(L, false); };
    t["aten.rsub.Scalar"] = [](GraphLowering& L) { return lower_rsub(L, true); };
    t["aten.div.Tensor_mode"] = [](GraphLowering& L) { return lower_div_mode(L, false); };
    t["aten.div.Scalar_mode"] = [](GraphLowering& L) { return lower_div_mode(L, true); };
    t["aten.pow.Scalar"] = lower_pow_scalar;
    t["aten.logical_xor.default"] = [](GraphLowering& L) { return lower_binary(L, BinaryOp::LogicalXor, false); };
    t["aten.atan2.default"] = [](GraphLowering& L) { return lower_binary(L, BinaryOp::Atan2, false); };
    t["aten.hypot.default"] = [](GraphLowering& L) { return lower_binary(L, BinaryOp::Hypot, false); };
    const std::pair<const char*, UnaryOp> more_unary[] = {
        {"tan", UnaryOp::Tan}, {"atan", UnaryOp::Atan}, {"asin", UnaryOp::Asin}, {"acos", UnaryOp::Acos},
        {"sinh", UnaryOp::Sinh}, {"cosh", UnaryOp::Cosh}, {"asinh", UnaryOp::Asinh}, {"acosh", UnaryOp::Acosh},
        {"atanh", UnaryOp::Atanh}, {"erfc", UnaryOp::Erfc}, {"log10", UnaryOp::Log10}, {"round", UnaryOp::Round},
        {"bitwise_not", UnaryOp::BitwiseNot}};
    for (const auto& [name, op] : more_unary) {
      UnaryOp o = op;
      t[std::string("aten.") + name + ".default"] = [o](GraphLowering& L) { return lower_unary(L, o); };
    }
    t["aten.isnan.default"] = [](GraphLowering& L) { return lower_float_predicate(L, UnaryOp::IsNan); };
    t["aten.isinf.default"] = [](GraphLowering& L) { return lower_float_predicate(L, UnaryOp::IsInf); };
    t["aten.signbit.default"] = lower_signbit;
    t["aten.angle.default"] = lower_angle;
    t["aten.round.decimals"] = lower_round_decimals;
    t["aten.where.ScalarSelf"] = lower_where;
    t["aten.where.ScalarOther"] = lower_where;
    t["aten.leaky_relu.default"] = lower_leaky_relu;
    t["aten.elu.default"] = lower_elu;
    t["aten.ldexp.Tensor"] = lower_ldexp;
    t["aten.polygamma.default"] = lower_polygamma;
    t["aten.special_zeta.default"] = [](GraphLowering& L) { return lower_binary(L, BinaryOp::Zeta, false); };
    t["aten.special_zeta.self_scalar"] = [](GraphLowering& L) { return lower_binary(L, BinaryOp::Zeta, false); };
    t["aten.special_zeta.other_scalar"] = [](GraphLowering& L) { return lower_binary(L, BinaryOp::Zeta, true); };
    t["aten.elu_backward.default"] = lower_elu_backward;
    t["aten.hardtanh.default"] = lower_hardtanh;
    // Reductions.
    // Views and layout.
    // Second coverage round.
    t["aten.fmax.default"] = [](GraphLowering& L) { return lower_binary(L, BinaryOp::Fmax, false); };
    t["aten.fmin.default"] = [](GraphLowering& L) { return lower_binary(L, BinaryOp::Fmin, false); };
    t["aten.copysign.Tensor"] = [](GraphLowering& L) { return lower_binary(L, BinaryOp::Copysign, false); };
    t["aten.copysign.Scalar"] = [](GraphLowering& L) { return lower_binary(L, BinaryOp::Copysign, true); };
    t["aten.nextafter.default"] = [](GraphLowering& L) {
      DType d = L.out_meta().dtype;
      if (d != DType::Float32 && d != DType::Float64) L.fail("nextafter is only lowered for float32 and float64");
      return lower_binary(L, BinaryOp::Nextafter, false, false, false);
    };
    t["aten.lgamma.default"] = [](GraphLowering& L) { return lower_unary(L, UnaryOp::Lgamma); };
    t["aten.digamma.default"] = [](GraphLowering& L) { return lower_unary(L, UnaryOp::Digamma); };
    t["aten.erfinv.default"] = [](GraphLowering& L) { return lower_unary(L, UnaryOp::Erfinv); };
    return t;
  }();
  return table;
}

}  // namespace

bool has_legacy_lowering(const std::string& target) { return legacy_lowerings().count(target) > 0; }

std::vector<std::string> legacy_lowered_ops() {
  std::vector<std::string> names;
  for (const auto& [k, v] : legacy_lowerings()) names.push_back(k);
  return names;
}

}  // namespace hi::lowering

namespace hi {

bool has_lowering(const std::string& target) {
  if (const OpDef* def = find_op(target); def && def->lowered()) return true;
  return lowering::has_legacy_lowering(target);
}

std::vector<std::string> lowered_ops() {
  std::set<std::string> names;
  for (const OpDef* def : all_ops()) {
    if (def->lowered()) names.insert(def->schema.qualified_name);
  }
  for (const std::string& name : lowering::legacy_lowered_ops()) names.insert(name);
  return {names.begin(), names.end()};
}

LoopProgram lower_graph(const Graph& g, const LoweringOptions& options) {
  LoopProgram p = lowering::GraphLowering(g, options).run();
  p.align = g.align;
  return p;
}

}  // namespace hi
