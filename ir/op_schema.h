// ATen operator schemas: which overloads hipinductor understands, how a node's arguments bind to them, and what
// tensors (dtype, sizes, strides) a call produces.
//
// The table lives in op_schema.cpp as PyTorch schema strings, copied from `torch.ops.aten.X.Y._schema`, e.g.
//   aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
// parsed once on first use. Overloads are named as FX prints them: `aten.add.Tensor`, `aten.neg.default`,
// `prims.convert_element_type.default`.
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
// infer_meta implements PyTorch's meta functions for the table: broadcasting, type promotion (torch.result_type's
// categories: dimensioned tensors > 0-d tensors > Python numbers, a lower priority operand only promotes to a higher
// category), reductions, views. Views return the strides and offset a view has; every other op returns contiguous
// strides (PyTorch would propagate a permuted input layout through pointwise ops; callers that know the real
// layout, like the JSON reader, keep their own strides). For half/bfloat16 input, native_layer_norm's mean and rstd
// are float32, as on GPUs and the meta device (CPU would give the input dtype).
#pragma once

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

/// Schema of `qualified_name` (`aten.add.Tensor`, `aten.neg.default`), or nullptr for an overload not in the table.
const OpSchema* find_op_schema(std::string_view qualified_name);
/// Every overload in the table, in table order.
const std::vector<OpSchema>& all_op_schemas();

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

/// A node's arguments in schema order, defaults filled, values normalised (see the top of this file).
struct BoundArgs {
  const OpSchema* schema = nullptr;
  std::vector<Arg> values;  ///< one per schema argument

  /// Value of the argument called `name`; throws std::out_of_range for a name not in the schema (a caller bug).
  const Arg& get(std::string_view name) const;
};

/// Binds `node`'s positional and keyword arguments to its op's schema. Throws SchemaError for an unknown op, too
/// many positionals, an unknown or repeated keyword, a missing required argument, or a value of the wrong type.
/// Does not look at the graph: tensor references are checked by the caller (verify_graph, the JSON reader).
BoundArgs bind_args(const Node& node);

/// The tensors `node` produces (one per output), from its inputs' metas in `g` (only the nodes `node` references
/// need to be in `g`). Throws SchemaError when the inputs don't fit (shapes that don't broadcast, a dim out of
/// range, mean of an integer tensor, a view size that doesn't match, ...).
std::vector<TensorMeta> infer_meta(const Graph& g, const Node& node, const BoundArgs& args);
/// bind_args + infer_meta.
std::vector<TensorMeta> infer_meta(const Graph& g, const Node& node);

/// Schema spelling of a value kind for messages: `Tensor`, `int`, `float`, `str`, `None`, ...
std::string_view arg_kind_schema_name(Arg::Kind k);

}  // namespace hi
