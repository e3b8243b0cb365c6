// The op families: one registration function per file in lowering/ops/, each adding its overloads' definitions
// (schema, meta rule, lowering or eager reason) to the registry's table. Called once, in this order, by
// register_all_op_families when the registry is first used.
#pragma once

namespace hi {

class OpTable;

void register_comparison_ops(OpTable& t);
void register_factory_ops(OpTable& t);
void register_indexing_ops(OpTable& t);
void register_layout_ops(OpTable& t);
void register_matrix_product_ops(OpTable& t);
void register_norm_ops(OpTable& t);
void register_pointwise_arithmetic_ops(OpTable& t);
void register_pointwise_math_ops(OpTable& t);
void register_pooling_ops(OpTable& t);
void register_reduction_ops(OpTable& t);
void register_scan_ops(OpTable& t);
void register_slice_ops(OpTable& t);
void register_view_ops(OpTable& t);

/// Every family above, in order.
inline void register_all_op_families(OpTable& t) {
  register_comparison_ops(t);
  register_factory_ops(t);
  register_indexing_ops(t);
  register_layout_ops(t);
  register_matrix_product_ops(t);
  register_norm_ops(t);
  register_pointwise_arithmetic_ops(t);
  register_pointwise_math_ops(t);
  register_pooling_ops(t);
  register_reduction_ops(t);
  register_scan_ops(t);
  register_slice_ops(t);
  register_view_ops(t);
}

}  // namespace hi
