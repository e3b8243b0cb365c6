// References of the views that take part of a tensor (lowering/ops/slices.cpp): each output element read from the
// input at the coordinates the view maps it to (as_strided: from the input's storage).
#include <algorithm>
#include <optional>

#include "testing/reference/families.h"
#include "testing/reference_context.h"

namespace hi::reference {
namespace {

/// slice.Tensor, and narrow_copy (whose length is the meta's size): `step` 1 there, it has none.
std::vector<HostTensor> slice(GraphEvaluator& E, const BoundArgs& args) {
  const HostTensor& self = E.tensor("self");
  int64_t dim = E.wrap_dim(args.get_int("dim"), self.rank());
  int64_t n = self.sizes[dim];
  std::optional<int64_t> from = args.optional_int("start");
  int64_t start = from ? std::clamp<int64_t>(*from < 0 ? *from + n : *from, 0, n) : 0;
  int64_t step = args.schema->arg_index("step") >= 0 ? args.get_int("step") : 1;
  HostTensor out = E.output();
  return {
      E.output_from_values(0, E.gather(self, out.sizes, [&](const std::vector<int64_t>& c, std::vector<int64_t>& in) {
        in = c;
        in[dim] = start + c[dim] * step;
      }))};
}

std::vector<HostTensor> select(GraphEvaluator& E, const BoundArgs& args) {
  const HostTensor& self = E.tensor("self");
  int64_t dim = E.wrap_dim(args.get_int("dim"), self.rank());
  int64_t index = args.get_int("index");
  if (index < 0) index += self.sizes[dim];
  if (index < 0 || index >= self.sizes[dim]) E.fail("index out of range");
  HostTensor out = E.output();
  return {
      E.output_from_values(0, E.gather(self, out.sizes, [&](const std::vector<int64_t>& c, std::vector<int64_t>& in) {
        for (int64_t d = 0, o = 0; d < self.rank(); ++d) in[d] = d == dim ? index : c[o++];
      }))};
}

std::vector<HostTensor> split(GraphEvaluator& E, const BoundArgs& args, bool unbind) {
  const HostTensor& self = E.tensor("self");
  int64_t dim = E.wrap_dim(args.get_int("dim"), self.rank());
  std::vector<HostTensor> out;
  int64_t start = 0;
  for (size_t k = 0; k < args.node->outputs.size(); ++k) {
    HostTensor piece = E.output(k);
    if (unbind) {
      auto kk = static_cast<int64_t>(k);
      out.push_back(E.output_from_values(
          k, E.gather(self, piece.sizes, [&](const std::vector<int64_t>& c, std::vector<int64_t>& in) {
            for (int64_t d = 0, o = 0; d < self.rank(); ++d) in[d] = d == dim ? kk : c[o++];
          })));
      continue;
    }
    if (piece.rank() != self.rank()) E.fail("output " + std::to_string(k) + " has the wrong rank");
    out.push_back(E.output_from_values(
        k, E.gather(self, piece.sizes, [&](const std::vector<int64_t>& c, std::vector<int64_t>& in) {
          in = c;
          in[dim] += start;
        })));
    start += piece.sizes[dim];
  }
  if (!unbind && start != self.sizes[dim]) E.fail("the pieces do not cover the split dim");
  return out;
}

std::vector<HostTensor> diagonal(GraphEvaluator& E, const BoundArgs& args) {
  const HostTensor& self = E.tensor("self");
  int64_t offset = args.get_int("offset");
  int64_t d1 = E.wrap_dim(args.get_int("dim1"), self.rank()), d2 = E.wrap_dim(args.get_int("dim2"), self.rank());
  if (d1 == d2) E.fail("dim1 and dim2 must differ");
  HostTensor out = E.output();
  return {
      E.output_from_values(0, E.gather(self, out.sizes, [&](const std::vector<int64_t>& c, std::vector<int64_t>& in) {
        for (int64_t d = 0, o = 0; d < self.rank(); ++d) {
          if (d == d1)
            in[d] = c.back() + (offset < 0 ? -offset : 0);
          else if (d == d2)
            in[d] = c.back() + (offset > 0 ? offset : 0);
          else
            in[d] = c[o++];
        }
      }))};
}

/// as_strided reads the storage of its input: a graph input's own storage (layout included), else the row-major
/// storage of the computed value.
std::vector<HostTensor> as_strided(GraphEvaluator& E, const BoundArgs& args) {
  const HostTensor& self = E.storage_of("self");
  std::optional<std::vector<int64_t>> sizes = args.get_ints("size"), strides = args.get_ints("stride");
  if (sizes->size() != strides->size()) E.fail("size and stride must be lists of one length");
  int64_t offset = args.optional_int("storage_offset").value_or(self.offset);
  HostTensor view;
  view.dtype = self.dtype;
  view.sizes = *sizes;
  view.strides = *strides;
  view.offset = offset;
  if (HostTensor::storage_size(view.sizes, view.strides, view.offset) > static_cast<int64_t>(self.storage.size()))
    E.fail("as_strided reaches past its input's storage");
  view.storage = self.storage;
  return {E.output_from_values(0, view.values())};
}

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

void register_slice_references(ReferenceTable& t) {
  t.add("aten.slice.Tensor", slice);
  t.add("aten.narrow_copy.default", slice);
  t.add("aten.select.int", select);
  for (const char* name : {"aten.split_with_sizes.default", "aten.split.Tensor", "aten.chunk.default"})
    t.add(name, [](GraphEvaluator& E, const BoundArgs& a) { return split(E, a, false); });
  t.add("aten.unbind.int", [](GraphEvaluator& E, const BoundArgs& a) { return split(E, a, true); });
  t.add("aten.diagonal.default", diagonal);
  t.add("aten.unfold.default", unfold);
  t.add("aten.as_strided.default", as_strided);
  t.add("aten.as_strided_copy.default", as_strided);
}

}  // namespace hi::reference
