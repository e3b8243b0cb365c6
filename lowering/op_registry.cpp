#include "lowering/op_registry.h"

#include <memory>
#include <stdexcept>

#include "lowering/lowering_context.h"
#include "lowering/ops/families.h"

namespace hi {

OpDef& OpTable::add(OpDef def) {
  if (by_name_.count(def.schema.qualified_name)) {
    throw std::logic_error("op registry: " + def.schema.qualified_name + " is defined twice");
  }
  if (!def.meta) throw std::logic_error("op registry: " + def.schema.qualified_name + " has no meta rule");
  defs_.push_back(std::make_unique<OpDef>(std::move(def)));
  OpDef* d = defs_.back().get();
  by_name_.emplace(d->schema.qualified_name, d);
  ordered_.push_back(d);
  return *d;
}

OpDef& OpTable::lowered(std::string_view schema, MetaRule meta, LowerFn lower) {
  OpDef def;
  def.schema = parse_op_schema(schema);
  def.meta = std::move(meta);
  def.lower = std::move(lower);
  if (!def.lower) throw std::logic_error("op registry: " + def.schema.qualified_name + " has an empty lowering");
  return add(std::move(def));
}

OpDef& OpTable::eager(std::string_view schema, MetaRule meta, std::string reason) {
  OpDef def;
  def.schema = parse_op_schema(schema);
  def.meta = std::move(meta);
  def.eager_reason = std::move(reason);
  if (def.eager_reason.empty()) {
    throw std::logic_error("op registry: " + def.schema.qualified_name + " is declared eager without a reason");
  }
  return add(std::move(def));
}

const OpDef* OpTable::find(std::string_view qualified_name) const {
  auto it = by_name_.find(qualified_name);
  return it == by_name_.end() ? nullptr : it->second;
}

namespace {

const OpTable& registry() {
  static const OpTable table = [] {
    OpTable t;
    register_all_op_families(t);
    return t;
  }();
  return table;
}

/// The registry's schemas, in registration order.
const std::vector<OpSchema>& schema_list() {
  static const std::vector<OpSchema> schemas = [] {
    std::vector<OpSchema> out;
    for (const OpDef* d : registry().ops()) out.push_back(d->schema);
    return out;
  }();
  return schemas;
}

}  // namespace

const OpDef* find_op(std::string_view qualified_name) { return registry().find(qualified_name); }

const std::vector<const OpDef*>& all_ops() { return registry().ops(); }

const OpSchema* find_op_schema(std::string_view qualified_name) {
  const OpDef* d = find_op(qualified_name);
  return d ? &d->schema : nullptr;
}

const std::vector<OpSchema>& all_op_schemas() { return schema_list(); }

BoundArgs bind_args(const Node& node) {
  const OpSchema* schema = find_op_schema(node.target);
  if (!schema) throw SchemaError(node.name, "", "op", "", "unknown op '" + node.target + "'");
  return bind_args(node, *schema);
}

std::vector<TensorMeta> infer_meta(const Graph& g, const Node& node, const BoundArgs& args) {
  if (!args.schema) throw SchemaError(node.name, node.target, "op", "", "arguments are not bound");
  const OpDef* d = find_op(args.schema->qualified_name);
  if (!d) throw SchemaError(node.name, node.target, "op", "", "unknown op '" + node.target + "'");
  return d->meta(MetaInference(g, node, args));
}

std::vector<TensorMeta> infer_meta(const Graph& g, const Node& node) { return infer_meta(g, node, bind_args(node)); }

}  // namespace hi
