// References of the views that rearrange dims (lowering/ops/views.cpp): each output element read from the input at
// the coordinates the view maps it to.
#include <algorithm>
#include <optional>

#include "testing/reference/families.h"
#include "testing/reference_context.h"

namespace hi::reference {
namespace {

// view, reshape, _unsafe_view, squeeze, unsqueeze: the row-major element order is unchanged.
std::vector<HostTensor> reshape(GraphEvaluator& E, const BoundArgs&) {
  return {E.output_from_values(0, E.tensor("self").values())};
}

std::vector<HostTensor> permute(GraphEvaluator& E, std::vector<int64_t> dims) {
  const HostTensor& self = E.tensor("self");
  if (static_cast<int64_t>(dims.size()) != self.rank()) E.fail("permutation length differs from the input's rank");
  for (auto& d : dims) d = E.wrap_dim(d, self.rank());
  std::vector<int64_t> sizes(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) sizes[i] = self.sizes[dims[i]];
  std::vector<double> v = E.gather(self, sizes, [&](const std::vector<int64_t>& c, std::vector<int64_t>& in) {
    for (size_t i = 0; i < dims.size(); ++i) in[dims[i]] = c[i];
  });
  HostTensor out = E.output_from_values(0, v);
  if (out.sizes != sizes) E.fail("output meta shape " + shape_str(out.sizes) + ", expected " + shape_str(sizes));
  return {out};
}

std::vector<HostTensor> expand(GraphEvaluator& E, const BoundArgs&) {
  const HostTensor& self = E.tensor("self");
  HostTensor out = E.output();
  return {E.output_from_values(0, E.broadcast(Operand{&self}, out.sizes, out.dtype, out.dtype))};
}

}  // namespace

void register_view_references(ReferenceTable& t) {
  for (const char* name :
       {"aten.view.default", "aten.reshape.default", "aten._unsafe_view.default", "aten.view_copy.default",
        "aten.unsqueeze.default", "aten.squeeze.dim", "aten.squeeze.dims", "aten.squeeze.default"})
    t.add(name, reshape);
  for (const char* name : {"aten.permute.default", "aten.permute_copy.default"})
    t.add(name, [](GraphEvaluator& E, const BoundArgs& a) { return permute(E, a.get_ints("dims")); });
  t.add("aten.t.default", [](GraphEvaluator& E, const BoundArgs&) {
    int64_t rank = E.tensor("self").rank();
    if (rank > 2) E.fail("t() expects a tensor of at most 2 dims");
    return rank < 2 ? E.convert() : permute(E, {1, 0});
  });
  t.add("aten.transpose.int", [](GraphEvaluator& E, const BoundArgs& args) {
    int64_t rank = E.tensor("self").rank();
    if (rank == 0) return E.convert();
    int64_t a = E.wrap_dim(args.get_int("dim0"), rank), b = E.wrap_dim(args.get_int("dim1"), rank);
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < rank; ++d) dims.push_back(d == a ? b : d == b ? a : d);
    return permute(E, dims);
  });
  t.add("aten.expand.default", expand);
  t.add("aten.alias.default", [](GraphEvaluator& E, const BoundArgs&) { return E.convert(); });
}

}  // namespace hi::reference
