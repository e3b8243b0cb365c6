// References of the indexing ops (lowering/ops/indexing.cpp): reads at index tensors' positions (negative ones
// wrapped, out-of-range ones rejected) and eager's binary search for bucketize / searchsorted.
#include <algorithm>
#include <string>

#include "testing/reference/families.h"
#include "testing/reference_context.h"

namespace hi::reference {
namespace {

/// bucketize / searchsorted by eager's binary search: lower bound moves past !(b >= v), upper bound past !(b > v).
std::vector<HostTensor> search(GraphEvaluator& E, const BoundArgs& args, bool bucketize) {
  const HostTensor& seq = E.tensor(bucketize ? "boundaries" : "sorted_sequence");
  Operand v = E.operand("self");
  bool right = args.get_bool("right");
  const std::string side = bucketize ? "" : args.str_or("side", "");
  if (side == "right")
    right = true;
  else if (side == "left")
    right = false;
  HostTensor out = E.output();
  const int64_t len = seq.sizes.back();
  std::vector<double> sv = seq.values();
  std::vector<double> vals = v.tensor ? v.tensor->values() : std::vector<double>{v.number};
  const int64_t per_row = v.tensor && v.tensor->rank() > 0 ? v.tensor->sizes.back() : 1;
  for (size_t i = 0; i < vals.size(); ++i) {
    const int64_t row = seq.rank() > 1 ? static_cast<int64_t>(i) / per_row : 0;
    int64_t lo = 0, hi = len;
    while (lo < hi) {
      int64_t mid = lo + (hi - lo) / 2;
      double b = sv[static_cast<size_t>(row * len + mid)];
      if (right ? !(b > vals[i]) : !(b >= vals[i]))
        lo = mid + 1;
      else
        hi = mid;
    }
    vals[i] = static_cast<double>(lo);
  }
  return {E.output_from_values(0, vals)};
}

std::vector<HostTensor> embedding(GraphEvaluator& E, const BoundArgs&) {
  const HostTensor& w = E.tensor("weight");
  const HostTensor& idx = E.tensor("indices");
  HostTensor out = E.output();
  std::vector<int64_t> ic(idx.sizes.size());
  return {E.output_from_values(0, E.gather(w, out.sizes, [&](const std::vector<int64_t>& c, std::vector<int64_t>& in) {
    std::copy(c.begin(), c.end() - 1, ic.begin());
    in[0] = E.checked_index(idx.at(ic), w.sizes[0]);
    in[1] = c.back();
  }))};
}

std::vector<HostTensor> index_select(GraphEvaluator& E, const BoundArgs& args) {
  const HostTensor& self = E.tensor("self");
  int64_t dim = E.wrap_dim(args.get_int("dim"), self.rank());
  const HostTensor& idx = E.tensor("index");
  HostTensor out = E.output();
  return {
      E.output_from_values(0, E.gather(self, out.sizes, [&](const std::vector<int64_t>& c, std::vector<int64_t>& in) {
        in = c;
        if (self.rank() == 0) return;
        in[dim] = E.checked_index(idx.rank() == 0 ? idx.at({}) : idx.at({c[dim]}), self.sizes[dim]);
      }))};
}

std::vector<HostTensor> gather(GraphEvaluator& E, const BoundArgs& args) {
  const HostTensor& self = E.tensor("self");
  int64_t dim = E.wrap_dim(args.get_int("dim"), self.rank());
  const HostTensor& idx = E.tensor("index");
  HostTensor out = E.output();
  return {
      E.output_from_values(0, E.gather(self, out.sizes, [&](const std::vector<int64_t>& c, std::vector<int64_t>& in) {
        in = c;
        if (self.rank() == 0) return;
        in[dim] = E.checked_index(idx.at(c), self.sizes[dim]);
      }))};
}

std::vector<HostTensor> index_tensor(GraphEvaluator& E, const BoundArgs&) {
  const HostTensor& self = E.tensor("self");
  std::vector<const HostTensor*> indices = E.tensor_list("indices");
  std::vector<size_t> indexed;
  size_t b_rank = 0;
  for (size_t d = 0; d < indices.size(); ++d) {
    if (!indices[d]) continue;
    if (!is_integer(indices[d]->dtype)) E.fail("only integer index tensors are supported");
    indexed.push_back(d);
    b_rank = std::max(b_rank, indices[d]->sizes.size());
  }
  HostTensor out = E.output();
  if (indexed.empty()) return {E.output_from_values(0, self.values())};
  bool adjacent = indexed.back() - indexed.front() + 1 == indexed.size();
  size_t b_start = adjacent ? indexed.front() : 0;
  return {
      E.output_from_values(0, E.gather(self, out.sizes, [&](const std::vector<int64_t>& c, std::vector<int64_t>& in) {
        size_t o = 0;
        for (int64_t d = 0; d < self.rank(); ++d) {
          if (static_cast<size_t>(d) < indices.size() && indices[d]) {
            const HostTensor& t = *indices[d];
            std::vector<int64_t> tc(t.sizes.size());
            size_t lead = b_rank - t.sizes.size();
            for (size_t j = 0; j < tc.size(); ++j) tc[j] = t.sizes[j] == 1 ? 0 : c[b_start + lead + j];
            in[d] = E.checked_index(t.at(tc), self.sizes[d]);
            continue;
          }
          if (o == b_start) o += b_rank;
          in[d] = c[o++];
        }
      }))};
}

}  // namespace

void register_indexing_references(ReferenceTable& t) {
  t.add("aten.embedding.default", embedding);
  t.add("aten.index_select.default", index_select);
  t.add("aten.gather.default", gather);
  t.add("aten.index.Tensor", index_tensor);
  for (const char* name : {"aten.bucketize.Tensor", "aten.bucketize.Scalar"})
    t.add(name, [](GraphEvaluator& E, const BoundArgs& a) { return search(E, a, true); });
  for (const char* name : {"aten.searchsorted.Tensor", "aten.searchsorted.Scalar"})
    t.add(name, [](GraphEvaluator& E, const BoundArgs& a) { return search(E, a, false); });
}

}  // namespace hi::reference
