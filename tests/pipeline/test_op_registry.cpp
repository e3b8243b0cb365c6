// The op registry is complete and agrees with the reference interpreter: every op has a schema and a meta rule, is
// lowered or declared eager with a reason, every lowered op has a reference, and no table names an op the registry
// does not define. A new op that skips one of these fails here, not in a user's graph.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>

#include "lowering/lower_graph.h"
#include "lowering/op_registry.h"
#include "testing/reference_eval.h"

namespace hi {
namespace {

std::set<std::string> as_set(const std::vector<std::string>& v) { return {v.begin(), v.end()}; }

TEST(OpRegistry, EveryOpHasASchemaAndAMetaRule) {
  ASSERT_FALSE(all_ops().empty());
  for (const OpDef* def : all_ops()) {
    const std::string& name = def->schema.qualified_name;
    EXPECT_FALSE(name.empty());
    EXPECT_FALSE(def->schema.text.empty()) << name;
    EXPECT_TRUE(static_cast<bool>(def->meta)) << name << " has no meta rule";
    EXPECT_EQ(find_op(name), def) << name;
    EXPECT_EQ(find_op_schema(name), &def->schema) << name;
  }
}

TEST(OpRegistry, EveryOpIsLoweredOrDeclaredEagerWithAReason) {
  for (const OpDef* def : all_ops()) {
    const std::string& name = def->schema.qualified_name;
    if (def->lowered()) {
      EXPECT_TRUE(def->eager_reason.empty()) << name << " is lowered and declared eager";
      EXPECT_TRUE(has_lowering(name)) << name;
    } else {
      EXPECT_FALSE(def->eager_reason.empty()) << name << " is neither lowered nor declared eager with a reason";
      EXPECT_FALSE(has_lowering(name)) << name;
    }
  }
  // Every overload a graph may hold (the frontend accepts exactly those with a schema) is lowered or eager.
  for (const OpSchema& s : all_op_schemas()) {
    const OpDef* def = find_op(s.qualified_name);
    EXPECT_TRUE(has_lowering(s.qualified_name) || (def && !def->eager_reason.empty()))
        << s.qualified_name << " has a schema but is neither lowered nor declared eager";
  }
}

TEST(OpRegistry, EveryLoweredOpHasAReference) {
  std::set<std::string> references = as_set(reference_ops());
  for (const std::string& name : lowered_ops()) {
    EXPECT_TRUE(references.count(name)) << name << " is lowered but the reference interpreter cannot evaluate it";
  }
}

TEST(OpRegistry, EveryTableNamesOnlyRegisteredOps) {
  for (const std::string& name : lowered_ops()) {
    const OpDef* def = find_op(name);
    EXPECT_TRUE(def && def->lowered()) << "lowering of " << name << ", which the registry does not lower";
  }
  for (const std::string& name : reference_ops()) {
    EXPECT_NE(find_op(name), nullptr) << "reference of " << name << ", which the registry does not define";
  }
  // The schema list is the registry's: nothing else defines an op.
  EXPECT_EQ(all_op_schemas().size(), all_ops().size());
}

TEST(OpRegistry, TableRejectsIncompleteDefinitions) {
  OpTable t;
  MetaRule meta = [](const MetaInference& m) { return one(m.tensor("self").dtype, m.tensor("self").sizes); };
  t.eager("aten::mm(Tensor self, Tensor mat2) -> Tensor", meta, "vendor BLAS");
  EXPECT_NE(t.find("aten.mm.default"), nullptr);
  EXPECT_THROW(t.eager("aten::mm(Tensor self, Tensor mat2) -> Tensor", meta, "again"), std::logic_error);
  EXPECT_THROW(t.eager("aten::bmm(Tensor self, Tensor mat2) -> Tensor", meta, ""), std::logic_error);
  EXPECT_THROW(t.eager("aten::neg(Tensor self) -> Tensor", nullptr, "no meta"), std::logic_error);
  EXPECT_THROW(t.lowered("aten::abs(Tensor self) -> Tensor", meta, nullptr), std::logic_error);
}

}  // namespace
}  // namespace hi
