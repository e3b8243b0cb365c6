// What the reference interpreter's per-family op references (testing/reference/<family>.cpp) see of its engine
// (reference_eval.cpp): the GraphEvaluator with its argument, output, broadcasting and reduction helpers, and the
// reference table they register into, keyed by the op registry's overload names (lowering/op_registry.h).
//
// A reference (ReferenceFn) receives the evaluator and the node's bound arguments and returns one host tensor per
// output of the node, rounded to the output metas' dtypes (GraphEvaluator::output / output_from_values do it). It
// reports what it cannot evaluate with GraphEvaluator::fail, naming the node and its op.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "ir/op_schema.h"
#include "testing/reference_eval.h"

namespace hi::reference {

inline int64_t numel_of(const std::vector<int64_t>& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

/// Calls fn(idx, flat) for every coordinate of `sizes` in row-major order.
template <class F>
void for_each_index(const std::vector<int64_t>& sizes, F fn) {
  int64_t n = numel_of(sizes);
  std::vector<int64_t> idx(sizes.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    fn(idx, i);
    for (size_t d = sizes.size(); d-- > 0;) {
      if (++idx[d] < sizes[d]) break;
      idx[d] = 0;
    }
  }
}

inline int64_t to_int64(double v) {
  double t = std::trunc(v);
  if (std::isnan(t) || t >= 9223372036854775808.0 || t < -9223372036854775808.0)
    return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(t);
}

/// A wrapped-around integer result (two's complement), as eager's integer kernels overflow.
inline int64_t wrapping(uint64_t v) { return static_cast<int64_t>(v); }

/// Eager's "opmath" type: half types compute (and hold Python-number operands) in float32.
inline DType opmath_type(DType t) { return t == DType::Float16 || t == DType::BFloat16 ? DType::Float32 : t; }

/// `[2, 3]`, for messages.
std::string shape_str(const std::vector<int64_t>& v);

/// An operand of a pointwise op: a tensor, or a Python number (a "wrapped number" in PyTorch's promotion).
struct Operand {
  const HostTensor* tensor = nullptr;
  double number = 0;
  DType number_type = DType::Int64;  ///< Bool, Int64 or Float64 for Python bool / int / float
};

/// Elements of a reduction grouped by output element: group[i] is the output (row-major over kept dims) that input
/// element i (row-major) contributes to.
struct Groups {
  std::vector<int64_t> group;
  int64_t count = 1;  ///< number of outputs
  int64_t size = 1;   ///< elements per output
};

/// Groups of `sizes`' elements by output when the dims flagged in `reduced` are reduced.
Groups group_elements(const std::vector<int64_t>& sizes, const std::vector<bool>& reduced);
/// Two-pass mean and variance per group; variance divides by max(0, N - correction) as eager does.
void moments(const std::vector<double>& v, const Groups& g, double correction, std::vector<double>& mean,
             std::vector<double>& variance);
/// max / min that propagate NaN, as eager's reductions and maximum / minimum do.
double nan_max(double a, double b);
double nan_min(double a, double b);

/// Hurwitz zeta(x, q) and digamma(x) in double, as PyTorch computes them (special_zeta, polygamma).
double hurwitz_zeta(double x, double q);
double digamma(double x);

/// The binary and unary element functions (applied in reference_eval.cpp).
enum class Binary {
  Add,
  Sub,
  Mul,
  Div,
  Pow,
  Maximum,
  Minimum,
  FloorDiv,
  TruncDiv,
  Remainder,
  Fmod,
  BitwiseAnd,
  BitwiseOr,
  BitwiseXor,
  Atan2,
  Hypot,
  Fmax,
  Fmin,
  Copysign,
  Nextafter,
  Zeta,
  ShiftLeft,
  ShiftRight,
  // Comparisons and logic from here on (they compute in the operands' promoted type).
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  LogicalAnd,
  LogicalOr,
  LogicalXor
};

enum class Unary {
  Neg, Abs, Exp, Log, Sqrt, Rsqrt, Tanh, Sigmoid, Relu, Erf, Sin, Cos, Reciprocal, Log1p, Expm1, Floor, Ceil,
  LogicalNot, Silu, Exp2, Log2, Trunc, Sign, IsNan, GeluErf, GeluTanh, Tan, Atan, Asin, Acos, Sinh, Cosh, Asinh,
  Acosh, Atanh, Erfc, Log10, Round, IsInf, Lgamma, Digamma, Erfinv
};

class GraphEvaluator;

/// Evaluates one call of an overload (see the top of this file).
using ReferenceFn = std::function<std::vector<HostTensor>(GraphEvaluator&, const BoundArgs&)>;

/// The per-family references, by overload name (`aten.cumsum.default`).
class ReferenceTable {
 public:
  /// Adds the reference of `qualified_name`; a name given twice throws std::logic_error.
  void add(const std::string& qualified_name, ReferenceFn fn);
  const ReferenceFn* find(std::string_view qualified_name) const;
  std::vector<std::string> names() const;

 private:
  std::map<std::string, ReferenceFn, std::less<>> fns_;
};

/// The table, built on first use from every family's registration (testing/reference/families.h).
const ReferenceTable& reference_table();

class GraphEvaluator {
 public:
  GraphEvaluator(const Graph& g, const std::vector<HostTensor>& inputs) : g_(g), inputs_(inputs) {}

  std::vector<HostTensor> run();

  // What the per-family references use.

  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("reference_eval: node '" + node_->name + "' (" + node_->target + "): " + what);
  }

  // Arguments by name, from the node's bound arguments (references in testing/reference/).
  const BoundArgs& args() const {
    if (!args_) fail("internal: arguments are not bound");
    return *args_;
  }
  const HostTensor& tensor(std::string_view name) const {
    const Arg& a = args().get(name);
    if (!a.is_tensor()) fail("argument '" + std::string(name) + "' must be a tensor");
    return value(a.tensor());
  }
  /// The tensor-or-number argument `name` (a Python number in a Tensor or Scalar position).
  Operand operand(std::string_view name) const {
    const Arg& a = args().get(name);
    if (a.is_tensor()) return Operand{&value(a.tensor())};
    Number n = args().get_number(name);
    return Operand{nullptr, n.value, n.is_float() ? DType::Float64 : n.is_bool() ? DType::Bool : DType::Int64};
  }
  /// The tensor list argument `name`; None entries are nullptr.
  std::vector<const HostTensor*> tensor_list(std::string_view name) const {
    std::vector<const HostTensor*> out;
    for (const auto& r : args().get(name).tensors()) out.push_back(r ? &value(*r) : nullptr);
    return out;
  }
  /// The storage the tensor argument `name` reads (as_strided): a graph input's own storage and layout, else the
  /// computed value's row-major one.
  const HostTensor& storage_of(std::string_view name) const {
    const Arg& a = args().get(name);
    if (!a.is_tensor()) fail("argument '" + std::string(name) + "' must be a tensor");
    auto placeholder = input_of_node_.find(a.tensor().node);
    return placeholder != input_of_node_.end() ? inputs_[placeholder->second] : value(a.tensor());
  }
  /// The tensor argument `name`; nullptr for None.
  const HostTensor* optional_tensor(std::string_view name) const {
    const Arg& a = args().get(name);
    if (a.is_none()) return nullptr;
    if (!a.is_tensor()) fail("argument '" + std::string(name) + "' must be a tensor or None");
    return &value(a.tensor());
  }

  /// The value a reference points at (evaluated already: graphs are in order).
  const HostTensor& value(const ValueRef& r) const { return values_.at(r.node).at(r.output); }
  int64_t wrap_dim(int64_t dim, int64_t rank) const {
    int64_t r = std::max<int64_t>(rank, 1);
    if (dim < -r || dim >= r)
      fail("dimension " + std::to_string(dim) + " out of range for rank " + std::to_string(rank));
    return dim < 0 ? dim + r : dim;
  }

  // ---- outputs ----
  const TensorMeta& out_meta(size_t i = 0) const {
    if (i >= node_->outputs.size()) fail("has no meta for output " + std::to_string(i));
    return node_->outputs[i];
  }
  std::vector<int64_t> concrete(const std::vector<Index>& sizes, const char* what) const {
    std::vector<int64_t> out;
    for (const Index& s : sizes) {
      auto c = s.as_const();
      if (!c) fail(std::string(what) + " has a symbolic size (" + s.str() + "); only concrete sizes are supported");
      out.push_back(*c);
    }
    return out;
  }
  /// A zero-filled row-major tensor with output `i`'s dtype and sizes.
  HostTensor output(size_t i = 0) const {
    return HostTensor::contiguous(out_meta(i).dtype, concrete(out_meta(i).sizes, "output meta"));
  }
  HostTensor output_from_values(size_t i, const std::vector<double>& values) const {
    HostTensor out = output(i);
    if (static_cast<int64_t>(values.size()) != out.numel())
      fail("output " + std::to_string(i) + " meta has " + std::to_string(out.numel()) + " elements, the op produced " +
           std::to_string(values.size()));
    for (size_t k = 0; k < values.size(); ++k) out.storage[k] = round_to_dtype(out.dtype, values[k]);
    return out;
  }

  /// Values of `o` read at every coordinate of `out_sizes` (broadcasting), converted to `tensor_type` (tensors) or
  /// `number_type` (Python numbers).
  std::vector<double> broadcast(const Operand& o, const std::vector<int64_t>& out_sizes, DType tensor_type,
                                DType number_type) const {
    std::vector<double> out(static_cast<size_t>(numel_of(out_sizes)));
    if (!o.tensor) {
      std::fill(out.begin(), out.end(), round_to_dtype(number_type, o.number));
      return out;
    }
    const HostTensor& t = *o.tensor;
    if (t.rank() > static_cast<int64_t>(out_sizes.size()))
      fail("operand of shape " + shape_str(t.sizes) + " does not broadcast to " + shape_str(out_sizes));
    size_t lead = out_sizes.size() - t.sizes.size();
    for (size_t d = 0; d < t.sizes.size(); ++d)
      if (t.sizes[d] != 1 && t.sizes[d] != out_sizes[lead + d])
        fail("operand of shape " + shape_str(t.sizes) + " does not broadcast to " + shape_str(out_sizes));
    std::vector<int64_t> idx(t.sizes.size());
    for_each_index(out_sizes, [&](const std::vector<int64_t>& c, int64_t flat) {
      for (size_t d = 0; d < idx.size(); ++d) idx[d] = t.sizes[d] == 1 ? 0 : c[lead + d];
      out[flat] = round_to_dtype(tensor_type, t.at(idx));
    });
    return out;
  }

  /// Output values gathered from `t`: the element of output coordinates `c` is t at `in_coords(c)`.
  std::vector<double> gather(const HostTensor& t, const std::vector<int64_t>& out_sizes,
                             const std::function<void(const std::vector<int64_t>&, std::vector<int64_t>&)>& in_coords)
      const {
    std::vector<double> out(static_cast<size_t>(numel_of(out_sizes)));
    std::vector<int64_t> idx(t.sizes.size());
    for_each_index(out_sizes, [&](const std::vector<int64_t>& c, int64_t flat) {
      in_coords(c, idx);
      out[flat] = t.at(idx);
    });
    return out;
  }

  /// Reduced dims: the list given, or all dims when it is absent, None or empty.
  std::vector<bool> reduced_dims(const std::optional<std::vector<int64_t>>& dims, int64_t rank) const {
    std::vector<bool> reduced(static_cast<size_t>(rank), !dims || dims->empty());
    if (dims)
      for (int64_t d : *dims) {
        int64_t w = wrap_dim(d, rank);
        if (rank > 0) reduced[w] = true;
      }
    return reduced;
  }

  // ---- shared pointwise machinery: each reads the bound call's operands by name and rounds as eager does ----
  /// A binary op of the schema's first two arguments (self and other, or exponent), broadcast; `has_alpha`: alpha
  /// scales the second (add, sub); `reversed`: rsub's other - alpha * self.
  std::vector<HostTensor> binary(Binary op, bool has_alpha, bool reversed = false);
  /// A unary op of self, computed in the result dtype (the input's for predicates).
  std::vector<HostTensor> unary(Unary op);
  /// clamp and clamp_min / clamp_max: the bounds the overload has.
  std::vector<HostTensor> clamp();
  std::vector<HostTensor> where();
  /// The schema's first argument converted to the output dtype (_to_copy, convert_element_type, clone, alias).
  std::vector<HostTensor> convert();
  /// `fn` of each element of self, in eager's opmath type.
  std::vector<HostTensor> elementwise(const std::function<double(double)>& fn);

  // ---- shared reduction and indexing machinery ----
  /// An index value checked against `size` and wrapped when negative.
  int64_t checked_index(double v, int64_t size) const;
  /// Reduction of `self` over `dims` (all when empty / None) with `fn(acc, value, position)`; `init` starts each
  /// group. Positions are row-major over the reduced dims.
  std::vector<double> fold(const HostTensor& self, const std::optional<std::vector<int64_t>>& dims, double init,
                           const std::function<double(double, double, int64_t, int64_t&)>& fn,
                           std::vector<int64_t>* positions = nullptr) const;

 private:
  std::map<int, size_t> input_of_node_;  ///< placeholder node -> position in inputs_ (as_strided reads its storage)

  const Graph& g_;
  const std::vector<HostTensor>& inputs_;
  std::vector<std::vector<HostTensor>> values_;
  const Node* node_ = nullptr;
  const BoundArgs* args_ = nullptr;  ///< node_'s bound arguments while a registered reference runs
};

}  // namespace hi::reference
