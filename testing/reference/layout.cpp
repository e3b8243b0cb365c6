// References of the layout ops (lowering/ops/layout.cpp): cat, constant_pad_nd, flip, repeat, slice_scatter, copy.
#include <algorithm>
#include <optional>

#include "testing/reference/families.h"
#include "testing/reference_context.h"

namespace hi::reference {
namespace {

std::vector<HostTensor> cat(GraphEvaluator& E, const BoundArgs& args) {
  std::vector<const HostTensor*> parts;
  for (const HostTensor* t : E.tensor_list("tensors"))
    if (t && !(t->rank() == 1 && t->sizes[0] == 0)) parts.push_back(t);
  if (parts.empty()) E.fail("expected a non-empty list of tensors");
  int64_t dim = E.wrap_dim(args.get_int("dim"), parts[0]->rank());
  HostTensor out = E.output();
  for_each_index(out.sizes, [&](const std::vector<int64_t>& c, int64_t flat) {
    std::vector<int64_t> in = c;
    for (const HostTensor* p : parts) {
      if (in[dim] < p->sizes[dim]) {
        out.storage[flat] = round_to_dtype(out.dtype, p->at(in));
        return;
      }
      in[dim] -= p->sizes[dim];
    }
  });
  return {out};
}

std::vector<HostTensor> constant_pad(GraphEvaluator& E, const BoundArgs& args) {
  const HostTensor& self = E.tensor("self");
  std::optional<std::vector<int64_t>> pad = args.get_ints("pad");
  double value = args.get_float("value");
  std::vector<int64_t> before(self.rank(), 0);
  for (size_t k = 0; k < pad->size() / 2; ++k) before[self.rank() - 1 - k] = (*pad)[2 * k];
  HostTensor out = E.output();
  for_each_index(out.sizes, [&](const std::vector<int64_t>& c, int64_t flat) {
    std::vector<int64_t> in(c.size());
    bool inside = true;
    for (size_t d = 0; d < c.size(); ++d) {
      in[d] = c[d] - before[d];
      inside = inside && in[d] >= 0 && in[d] < self.sizes[d];
    }
    out.storage[flat] = round_to_dtype(out.dtype, inside ? self.at(in) : value);
  });
  return {out};
}

std::vector<HostTensor> flip(GraphEvaluator& E, const BoundArgs& args) {
  const HostTensor& self = E.tensor("self");
  std::vector<bool> flipped(self.rank(), false);
  for (int64_t d : args.get_ints("dims")) flipped[E.wrap_dim(d, self.rank())] = true;
  return {
      E.output_from_values(0, E.gather(self, self.sizes, [&](const std::vector<int64_t>& c, std::vector<int64_t>& in) {
        for (size_t d = 0; d < c.size(); ++d) in[d] = flipped[d] ? self.sizes[d] - 1 - c[d] : c[d];
      }))};
}

std::vector<HostTensor> repeat(GraphEvaluator& E, const BoundArgs&) {
  const HostTensor& self = E.tensor("self");
  HostTensor out = E.output();
  size_t lead = out.sizes.size() - self.sizes.size();
  return {
      E.output_from_values(0, E.gather(self, out.sizes, [&](const std::vector<int64_t>& c, std::vector<int64_t>& in) {
        for (size_t d = 0; d < self.sizes.size(); ++d) in[d] = c[lead + d] % self.sizes[d];
      }))};
}

std::vector<HostTensor> slice_scatter(GraphEvaluator& E, const BoundArgs& args) {
  const HostTensor& self = E.tensor("self");
  const HostTensor& src = E.tensor("src");
  int64_t dim = E.wrap_dim(args.get_int("dim"), self.rank());
  int64_t n = self.sizes[dim];
  int64_t start = args.optional_int("start").value_or(0);
  if (start < 0) start += n;
  start = std::clamp<int64_t>(start, 0, n);
  int64_t step = args.get_int("step");
  HostTensor out = E.output_from_values(0, self.values());
  for_each_index(src.sizes, [&](const std::vector<int64_t>& c, int64_t) {
    std::vector<int64_t> o = c;
    o[dim] = start + c[dim] * step;
    out.at(o) = round_to_dtype(out.dtype, src.at(c));
  });
  return {out};
}

/// copy: src broadcast to self's shape, in self's dtype.
std::vector<HostTensor> copy(GraphEvaluator& E, const BoundArgs&) {
  const HostTensor& src = E.tensor("src");
  HostTensor out = E.output();
  return {E.output_from_values(0, E.broadcast(Operand{&src}, out.sizes, out.dtype, out.dtype))};
}

}  // namespace

void register_layout_references(ReferenceTable& t) {
  t.add("aten.cat.default", cat);
  t.add("aten.constant_pad_nd.default", constant_pad);
  t.add("aten.flip.default", flip);
  t.add("aten.repeat.default", repeat);
  t.add("aten.slice_scatter.default", slice_scatter);
  t.add("aten.copy.default", copy);
}

}  // namespace hi::reference
