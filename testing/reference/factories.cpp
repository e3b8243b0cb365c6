// References of the factories (lowering/ops/factories.cpp).
#include <algorithm>

#include "testing/reference/families.h"
#include "testing/reference_context.h"

namespace hi::reference {
namespace {

/// A tensor of the output meta's sizes holding `value`.
std::vector<HostTensor> fill(GraphEvaluator& E, double value) {
  HostTensor out = E.output();
  std::fill(out.storage.begin(), out.storage.end(), round_to_dtype(out.dtype, value));
  return {out};
}

/// arange / iota: start + i * step, in double.
std::vector<HostTensor> range(GraphEvaluator& E, double start, double step) {
  HostTensor out = E.output();
  for (size_t i = 0; i < out.storage.size(); ++i)
    out.storage[i] = round_to_dtype(out.dtype, start + static_cast<double>(i) * step);
  return {out};
}

ReferenceFn filled_with(double value) {
  return [value](GraphEvaluator& E, const BoundArgs&) { return fill(E, value); };
}

}  // namespace

void register_factory_references(ReferenceTable& t) {
  auto fill_value = [](GraphEvaluator& E, const BoundArgs& a) { return fill(E, a.get_float("fill_value")); };
  t.add("aten.full.default", fill_value);
  t.add("aten.full_like.default", fill_value);
  t.add("aten.scalar_tensor.default", [](GraphEvaluator& E, const BoundArgs& a) { return fill(E, a.get_float("s")); });
  t.add("aten.zeros.default", filled_with(0));
  t.add("aten.ones.default", filled_with(1));
  t.add("aten.empty.memory_format", filled_with(0));
  t.add("aten.empty_permuted.default", filled_with(0));
  t.add("aten.arange.default", [](GraphEvaluator& E, const BoundArgs&) { return range(E, 0, 1); });
  t.add("aten.arange.start", [](GraphEvaluator& E, const BoundArgs& a) { return range(E, a.get_float("start"), 1); });
  t.add("aten.arange.start_step",
        [](GraphEvaluator& E, const BoundArgs& a) { return range(E, a.get_float("start"), a.get_float("step")); });
  t.add("prims.iota.default", [](GraphEvaluator& E, const BoundArgs& a) {
    return range(E, static_cast<double>(a.get_int("start")), static_cast<double>(a.get_int("step")));
  });
}

}  // namespace hi::reference
