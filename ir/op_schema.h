// ATen operator schemas: how a node's arguments bind to an overload's schema, and the machinery meta rules (what
// tensors, dtype, sizes and strides, a call produces) are written with.
//
// Schemas are PyTorch schema strings, copied from `torch.ops.aten.X.Y._schema`, e.g.
//   aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
// Overloads are named as FX prints them: `aten.add.Tensor`, `aten.neg.default`, `prims.convert_element_type.default`.
// Which overloads exist, and each one's meta rule, is the op registry's business (lowering/op_registry.h: find_op,
// find_op_schema, bind_args(node), infer_meta).
//
// Binding follows Python's rules: positionals fill the arguments in order (never past `*`), keywords fill any
// argument by name, defaults fill the rest. Values are checked against the argument's type and normalised:
//   - `int[N]` given one int becomes a list of N copies (as `sum(x, 1)` does in Python);
//   - `float` given an integer constant becomes that float;
//   - `Tensor[]` given an empty int list becomes an empty tensor list (JSON cannot tell the two apart);
//   - a `Tensor` argument may hold a Python number (Bool/Int/Float) — FX graphs pass those in tensor positions
//     (`aten.add.Tensor(x, 1e-05)`); they promote like Scalars ("wrapped numbers") and broadcast as 0-d tensors;
//   - `Layout?`, `Device?`, `MemoryFormat?` are opaque: None or a string (`"cuda:0"`, `"torch.strided"`).
//
// Meta rules implement PyTorch's meta functions: broadcasting, type promotion (torch.result_type's
// categories: dimensioned tensors > 0-d tensors > Python numbers, a lower priority operand only promotes to a higher
// category), reductions, views. Views return the strides and offset a view has; every other op returns contiguous
// strides (PyTorch would propagate a permuted input layout through pointwise ops; callers that know the real
// layout, like the JSON reader, keep their own strides). For half/bfloat16 input, native_layer_norm's mean and rstd
// are float32, as on GPUs and the meta device (CPU would give the input dtype).
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"

namespace hi {

/// Type of one schema argument. SymInt is folded into Int; `T?` is `ArgSchema::optional`.
enum class ArgType {
  Tensor,              ///< `Tensor`
  TensorList,          ///< `Tensor[]`
  OptionalTensorList,  ///< `Tensor?[]`
  Scalar,              ///< `Scalar`: bool, int or float
  Int,                 ///< `int`, `SymInt`
  IntList,             ///< `int[]`, `int[N]`, `SymInt[]`
  Bool,                ///< `bool`
  Float,               ///< `float`
  ScalarType,          ///< `ScalarType`: a dtype
  Str,                 ///< `str`
  Opaque,              ///< `Layout`, `Device`, `MemoryFormat`: None or a string
};

/// One argument of a schema.
struct ArgSchema {
  std::string name;
  ArgType type = ArgType::Tensor;
  bool optional = false;      ///< `T?`: accepts None
  bool kwarg_only = false;    ///< declared after `*`
  int list_size = 0;          ///< N of `int[N]`: a single int is accepted as N copies; 0 otherwise
  std::optional<Arg> default_value;  ///< nullopt: required
  std::string type_text;      ///< as written in the schema (`int[1]?`, `Tensor?`), for messages
};

/// One ATen (or prims) overload.
struct OpSchema {
  std::string qualified_name;  ///< `aten.add.Tensor`
  std::string text;            ///< the schema string it was parsed from
  std::vector<ArgSchema> args;
  int num_outputs = 1;
  bool is_view = false;        ///< returns an alias of its first argument (`Tensor(a)`)
  /// Returns a list (`Tensor(a)[]`: split, unbind): the node has one output per element, as many as infer_meta
  /// gives; num_outputs is 1 then and does not count them.
  bool returns_list = false;
  /// Outputs 1 and 2 are per-group (per-channel) statistics (mean, rstd) whose dtype depends on the device: float32
  /// for 16-bit input on GPUs (and the meta device), the input's dtype on the cpu device; so do the sizes of batch
  /// norm's when not training: [C] on GPUs, [0] (what infer_meta gives) on the cpu device. The node's meta decides.
  bool device_statistics = false;

  /// Position of the argument called `name`, or -1.
  int arg_index(std::string_view name) const;
};

/// Parses one schema string (`aten::add.Tensor(Tensor self, ...) -> Tensor`; no namespace means `aten`). Throws
/// std::invalid_argument naming the position at fault. Exposed for tests and for tools that extend the table.
OpSchema parse_op_schema(std::string_view text);

/// A node's arguments or metadata do not fit its op. what() is one line naming the node, the op, the argument and
/// what was expected: `node 'add_1' (aten.add.Tensor): argument 'other': expected Tensor, got str`.
class SchemaError : public std::runtime_error {
 public:
  /// `field` locates the problem in the node as given: `args[1]`, `kwargs.alpha`, `args` (arity), or empty when it
  /// is about the node as a whole. `argument` is the schema argument's name, empty when there is none.
  SchemaError(std::string node, std::string op, std::string field, std::string argument, std::string detail);

  const std::string& node() const { return node_; }
  const std::string& op() const { return op_; }
  const std::string& field() const { return field_; }
  const std::string& argument() const { return argument_; }
  /// The message without the node/op/argument prefix: `expected Tensor, got str`.
  const std::string& detail() const { return detail_; }

  /// For a value of the wrong type: the argument's schema (nullptr for other errors) and the kind given.
  const ArgSchema* expected = nullptr;
  Arg::Kind got = Arg::Kind::None;

 private:
  std::string node_, op_, field_, argument_, detail_;
};

/// A Python number argument (`Scalar`, or a number in a `Tensor` position): its value and kind.
struct Number {
  double value = 0;
  Arg::Kind kind = Arg::Kind::Int;  ///< Bool, Int or Float

  bool is_float() const { return kind == Arg::Kind::Float; }
  bool is_bool() const { return kind == Arg::Kind::Bool; }
};

/// A node's arguments in schema order, defaults filled, values normalised (see the top of this file), with typed
/// getters by argument name. A getter's errors are SchemaErrors naming the node, the op and the argument; a name
/// the schema does not have throws std::out_of_range (a bug in the caller).
struct BoundArgs {
  const OpSchema* schema = nullptr;
  const Node* node = nullptr;  ///< the node bound, for messages (bind_args sets it)
  std::vector<Arg> values;     ///< one per schema argument

  /// Value of the argument called `name`.
  const Arg& get(std::string_view name) const;
  /// The argument is not None.
  bool given(std::string_view name) const { return !get(name).is_none(); }

  /// `int`: its value; a symbolic int throws (callers that accept symbols read get(name).integer()).
  int64_t get_int(std::string_view name) const;
  /// `int?`: nullopt for None.
  std::optional<int64_t> optional_int(std::string_view name) const;
  bool get_bool(std::string_view name) const;
  /// `float`, `Scalar`, or a number in a `Tensor` position: the number's value (bool as 0/1).
  double get_float(std::string_view name) const;
  /// As get_float; nullopt for None.
  std::optional<double> optional_float(std::string_view name) const;
  /// `Scalar` (or a number in a `Tensor` position): value and kind.
  Number get_number(std::string_view name) const;
  /// As get_number; nullopt for None.
  std::optional<Number> optional_number(std::string_view name) const;
  const std::string& get_str(std::string_view name) const;
  /// `str?`: `fallback` for None.
  std::string str_or(std::string_view name, const std::string& fallback) const;
  /// `ScalarType?`: nullopt for None.
  std::optional<DType> optional_dtype(std::string_view name) const;
  /// `int[]`: constant values; a symbolic entry throws.
  std::vector<int64_t> get_ints(std::string_view name) const;
  /// `int[]?`: nullopt for None.
  std::optional<std::vector<int64_t>> optional_ints(std::string_view name) const;

  /// Throws a SchemaError about argument `name` of the bound node (its field located as given: `args[i]`, `kwargs.x`).
  [[noreturn]] void fail(std::string_view name, const std::string& detail) const;
  /// Where `name` came from in the node as given (`args[1]`, `kwargs.alpha`), or empty when it took its default.
  std::string field_of(std::string_view name) const;
};

/// Binds `node`'s positional and keyword arguments to `schema`. Throws SchemaError for too many positionals, an
/// unknown or repeated keyword, a missing required argument, or a value of the wrong type. Does not look at the
/// graph: tensor references are checked by the caller (verify_graph, the JSON reader). The registry's
/// bind_args(node) finds the schema by the node's target.
BoundArgs bind_args(const Node& node, const OpSchema& schema);

/// Schema spelling of a value kind for messages: `Tensor`, `int`, `float`, `str`, `None`, ...
std::string_view arg_kind_schema_name(Arg::Kind k);

// ---------------------------------------------------------------------------------------------------------------
// Type promotion and meta rules

/// torch's default dtype for a Python number of `kind`: bool, int64, or float32 (torch.get_default_dtype()).
DType default_dtype_of(Arg::Kind kind);

/// torch.result_type: the dtype a pointwise op computes in, from its operands' dtypes and priority classes (tensors
/// with dims > 0-d tensors > Python numbers); a lower-priority operand only promotes the result when its category
/// (bool < integer < floating) is higher. The promotion rule of meta inference and of the reference interpreter.
class ResultType {
 public:
  enum class Priority { Dimensioned, ZeroDim, WrappedNumber };

  /// A tensor operand; its rank decides its priority.
  void add_tensor(DType t, int64_t rank) { add(t, rank > 0 ? Priority::Dimensioned : Priority::ZeroDim); }
  /// A Python number, as its default dtype.
  void add_number(Arg::Kind kind) { add(default_dtype_of(kind), Priority::WrappedNumber); }
  void add(DType t, Priority p);
  /// nullopt only when nothing was added.
  std::optional<DType> result() const;

 private:
  std::optional<DType> dimensioned_, zero_dim_, wrapped_;
};

/// An operand of a pointwise op as meta rules see it: a tensor, or a Python number treated as a 0-d tensor of its
/// default dtype.
struct MetaOperand {
  TensorMeta meta;
  bool wrapped_number = false;
};

/// What a meta rule reads: the node's bound arguments, the metas of the tensors they reference, and PyTorch's shape
/// and dtype rules. Failures are SchemaErrors naming the node, the op and the argument.
class MetaInference {
 public:
  MetaInference(const Graph& g, const Node& node, const BoundArgs& args) : g_(g), node_(node), args_(args) {}

  const BoundArgs& args() const { return args_; }
  const Arg& arg(std::string_view name) const { return args_.get(name); }
  bool given(std::string_view name) const { return !arg(name).is_none(); }
  const Graph& graph() const { return g_; }

  [[noreturn]] void fail(std::string_view argument, const std::string& detail) const;

  MetaOperand operand(std::string_view name) const;
  TensorMeta tensor(std::string_view name) const { return operand(name).meta; }
  std::vector<TensorMeta> tensors(std::string_view name) const;

  int64_t constant(std::string_view name, const Index& v) const;
  int64_t int_arg(std::string_view name) const { return constant(name, arg(name).integer()); }
  /// Wraps a (possibly negative) dim of a rank-`rank` tensor; a 0-d tensor accepts -1 and 0, as PyTorch does.
  int64_t wrap_dim(std::string_view name, int64_t dim, int64_t rank) const;
  /// Broadcast sizes of the named operands (None ones skipped).
  std::vector<Index> broadcast(const std::vector<std::string_view>& names) const;
  /// torch.result_type of the named operands (None ones skipped); float32 when none is given.
  DType result_type(const std::vector<std::string_view>& names) const;
  void require_floating(std::string_view name, DType t, std::string_view what) const;
  /// Reduced sizes; `dims` None or empty means every dim.
  std::vector<Index> reduce_sizes(std::string_view dim_name, const TensorMeta& in, const Arg& dims,
                                  bool keepdim) const;

  /// Where `argument` came from in the node as given, for SchemaError::field.
  std::string field_of(std::string_view argument) const { return args_.field_of(argument); }

 private:
  const Graph& g_;
  const Node& node_;
  const BoundArgs& args_;
};

using Metas = std::vector<TensorMeta>;
/// One contiguous output.
inline Metas one(DType t, std::vector<Index> sizes) { return {TensorMeta::contiguous(t, std::move(sizes))}; }
/// Sizes as messages print them: `[2, s0, 3]`.
std::string sizes_str(const std::vector<Index>& sizes);
/// The dtype transcendental ops compute integer and bool inputs in: `t` when floating, else float32.
inline DType to_float(DType t) { return is_floating(t) ? t : DType::Float32; }
inline bool is_integral_or_bool(DType t) { return t == DType::Bool || is_integer(t); }
/// Pointwise meta rules the families share: the named operands broadcast, in torch.result_type's dtype
/// (broadcast_binary), or a float result type for true division and its kin (true_divide: self, other); one input's
/// sizes in its dtype (unary_same) or in the default float type for integer input (unary_float).
Metas broadcast_binary(const MetaInference& m, std::string_view a, std::string_view b);
Metas true_divide(const MetaInference& m);
/// A view op's `_copy` twin: the views' sizes, contiguous.
Metas copied(const Metas& views);
Metas unary_same(const MetaInference& m);
Metas unary_float(const MetaInference& m);
/// The result dtype of sum, prod, cumsum, cumprod: the `dtype` argument when given, else int64 for integral and bool
/// input (they accumulate in int64), else the input's.
DType sum_dtype(const MetaInference& m, DType in);

}  // namespace hi
