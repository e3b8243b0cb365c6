// The op registry: every ATen (or prims) overload hipinductor understands, each defined once.
//
// An overload's definition is its schema string (as `torch.ops.<ns>.<op>.<overload>._schema` prints it, torch 2.6),
// its meta rule (PyTorch's meta function: output dtypes and sizes) and either its lowering or the reason it stays
// eager. Definitions are grouped by family in lowering/ops/<family>.cpp, schema, meta rule and lowering side by side,
// the way Inductor keys a lowering on its definition (`@register_lowering`).
//
// The table is built once, on first use, by calling one `register_<family>_ops(OpTable&)` per family file
// (lowering/ops/families.h): explicit calls, not static initialisers, because a static library drops object files
// nothing references. The reference implementations (the test oracle) live in hi_testing under the same names;
// tests/pipeline/test_op_registry.cpp checks the tables agree.
//
// The registry is in hi_lowering because a definition holds its lowering; the schema machinery it builds on
// (OpSchema, bind_args, BoundArgs, MetaInference) is in ir/op_schema.h, and the frontend, which validates graphs with
// schemas and meta rules, links hi_lowering for the table.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/op_schema.h"

namespace hi {

namespace lowering {
class GraphLowering;
struct TensorValue;
}  // namespace lowering

/// Output metas of a call from its bound arguments and its inputs' metas (see MetaInference).
using MetaRule = std::function<std::vector<TensorMeta>(const MetaInference&)>;
/// Lowers one call: its outputs as lazily built values (lowering/lowering_context.h). Arguments arrive bound.
using LowerFn = std::function<std::vector<lowering::TensorValue>(lowering::GraphLowering&, const BoundArgs&)>;

/// One overload's definition.
struct OpDef {
  OpSchema schema;
  MetaRule meta;
  /// Empty for ops declared eager.
  LowerFn lower;
  /// Why the op is not lowered (matrix products and convolutions go to vendor libraries, ...): non-empty exactly
  /// when `lower` is empty.
  std::string eager_reason;

  bool lowered() const { return static_cast<bool>(lower); }
};

/// The table the family files fill. Adding an overload twice, or one whose schema does not parse, throws
/// std::logic_error (a bug in a family file, found by any test that touches the registry).
class OpTable {
 public:
  /// An overload with a lowering.
  OpDef& lowered(std::string_view schema, MetaRule meta, LowerFn lower);
  /// An overload the compiler accepts in graphs but does not lower; `reason` says why.
  OpDef& eager(std::string_view schema, MetaRule meta, std::string reason);

  const OpDef* find(std::string_view qualified_name) const;
  const std::vector<const OpDef*>& ops() const { return ordered_; }

 private:
  OpDef& add(OpDef def);

  std::vector<std::unique_ptr<OpDef>> defs_;
  std::vector<const OpDef*> ordered_;
  std::map<std::string, const OpDef*, std::less<>> by_name_;
};

/// The definition of `qualified_name` (`aten.add.Tensor`), or nullptr for an overload not in the registry.
const OpDef* find_op(std::string_view qualified_name);
/// Every definition, in registration order (family by family).
const std::vector<const OpDef*>& all_ops();

/// Schema of `qualified_name`, or nullptr (find_op's schema).
const OpSchema* find_op_schema(std::string_view qualified_name);
/// Every schema in the registry, in registration order.
const std::vector<OpSchema>& all_op_schemas();

/// Binds `node`'s arguments to its op's schema (bind_args of ir/op_schema.h with the registry's schema). Throws
/// SchemaError for an op not in the registry, and what bind_args throws.
BoundArgs bind_args(const Node& node);

/// The tensors `node` produces (one per output), from its inputs' metas in `g` (only the nodes `node` references
/// need to be in `g`): the op's meta rule. Throws SchemaError when the inputs don't fit (shapes that don't
/// broadcast, a dim out of range, mean of an integer tensor, a view size that doesn't match, ...).
std::vector<TensorMeta> infer_meta(const Graph& g, const Node& node, const BoundArgs& args);
/// bind_args + infer_meta.
std::vector<TensorMeta> infer_meta(const Graph& g, const Node& node);

}  // namespace hi
