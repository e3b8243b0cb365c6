// The reference families: one registration function per file in testing/reference/, named as the op registry's
// families (lowering/ops/), each adding its overloads' references to the reference table. Called once, in this
// order, when the table is first used.
#pragma once

namespace hi::reference {

class ReferenceTable;

void register_comparison_references(ReferenceTable& t);
void register_factory_references(ReferenceTable& t);
void register_indexing_references(ReferenceTable& t);
void register_layout_references(ReferenceTable& t);
void register_norm_references(ReferenceTable& t);
void register_pointwise_arithmetic_references(ReferenceTable& t);
void register_pointwise_math_references(ReferenceTable& t);
void register_pooling_references(ReferenceTable& t);
void register_reduction_references(ReferenceTable& t);
void register_scan_references(ReferenceTable& t);
void register_slice_references(ReferenceTable& t);
void register_view_references(ReferenceTable& t);

/// Every family above, in order.
inline void register_all_reference_families(ReferenceTable& t) {
  register_comparison_references(t);
  register_factory_references(t);
  register_indexing_references(t);
  register_layout_references(t);
  register_norm_references(t);
  register_pointwise_arithmetic_references(t);
  register_pointwise_math_references(t);
  register_pooling_references(t);
  register_reduction_references(t);
  register_scan_references(t);
  register_slice_references(t);
  register_view_references(t);
}

}  // namespace hi::reference
