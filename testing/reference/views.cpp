// References of view ops: each output element read from the input at the coordinates the view maps it to.
#include "testing/reference/families.h"
#include "testing/reference_context.h"

namespace hi::reference {
namespace {

/// unfold(dimension, size, step): out[..., i, ..., k] = self[..., i * step + k, ...], the window index k last.
std::vector<HostTensor> unfold(GraphEvaluator& E, const BoundArgs& args) {
  const HostTensor& self = E.tensor("self");
  const std::vector<int64_t> out_sizes = E.concrete(E.out_meta().sizes, "output meta");
  if (self.rank() == 0) return {E.output_from_values(0, self.values())};
  const int64_t d = E.wrap_dim(args.get_int("dimension"), self.rank()), step = args.get_int("step");
  return {
      E.output_from_values(0, E.gather(self, out_sizes, [&](const std::vector<int64_t>& c, std::vector<int64_t>& in) {
        for (size_t i = 0; i + 1 < c.size(); ++i) in[i] = c[i];
        in[static_cast<size_t>(d)] = c[static_cast<size_t>(d)] * step + c.back();
      }))};
}

}  // namespace

void register_view_references(ReferenceTable& t) {
  t.add("aten.unfold.default", unfold);
}

}  // namespace hi::reference
