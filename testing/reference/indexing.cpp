// References of the indexing ops (lowering/ops/indexing.cpp): reads at index tensors' positions (negative ones
// wrapped, out-of-range ones rejected) and eager's binary search for bucketize / searchsorted.
#include <algorithm>
#include <functional>
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

/// Row-major flat position of coordinates `c` in a tensor of `sizes`.
int64_t flat_of(const std::vector<int64_t>& c, const std::vector<int64_t>& sizes) {
  int64_t f = 0;
  for (size_t d = 0; d < sizes.size(); ++d) f = f * sizes[d] + c[d];
  return f;
}

/// self's values with `value(x)` added at `target(x)` (written there, without `accumulate`) for every x of `sizes`,
/// in order, in double: a position written twice keeps the last value.
using Coords = std::vector<int64_t>;
std::vector<HostTensor> scatter_into(GraphEvaluator& E, const HostTensor& self, const Coords& sizes,
                                     const std::function<double(const Coords&)>& value,
                                     const std::function<void(const Coords&, Coords&)>& target,
                                     bool accumulate = true) {
  std::vector<double> out = self.values();
  std::vector<int64_t> t(self.sizes.size());
  for_each_index(sizes, [&](const std::vector<int64_t>& x, int64_t) {
    target(x, t);
    double& o = out[static_cast<size_t>(flat_of(t, self.sizes))];
    o = accumulate ? o + value(x) : value(x);
  });
  return {E.output_from_values(0, out)};
}

std::vector<HostTensor> scatter_add(GraphEvaluator& E, const BoundArgs& args) {
  const HostTensor& self = E.tensor("self");
  const HostTensor& idx = E.tensor("index");
  const HostTensor& src = E.tensor("src");
  const int64_t dim = E.wrap_dim(args.get_int("dim"), self.rank());
  return scatter_into(
      E, self, idx.sizes, [&](const std::vector<int64_t>& x) { return src.at(x); },
      [&](const std::vector<int64_t>& x, std::vector<int64_t>& t) {
        t = x;
        t[dim] = E.checked_index(idx.at(x), self.sizes[dim]);
      });
}

/// scatter: value (or src[x]) written at x with x[dim] = index[x], for every x of index's shape in order (eager
/// leaves unspecified which value a position named twice keeps).
std::vector<HostTensor> scatter(GraphEvaluator& E, const BoundArgs& args, bool from_src) {
  const HostTensor& self = E.tensor("self");
  const HostTensor& idx = E.tensor("index");
  const HostTensor* src = from_src ? &E.tensor("src") : nullptr;
  const double value = from_src ? 0.0 : args.get_float("value");
  const int64_t dim = E.wrap_dim(args.get_int("dim"), self.rank());
  return scatter_into(
      E, self, idx.sizes, [&](const std::vector<int64_t>& x) { return src ? src->at(x) : value; },
      [&](const std::vector<int64_t>& x, std::vector<int64_t>& t) {
        t = x;
        t[dim] = E.checked_index(idx.at(x), self.sizes[dim]);
      },
      false);
}

std::vector<HostTensor> index_add(GraphEvaluator& E, const BoundArgs& args) {
  const HostTensor& self = E.tensor("self");
  const HostTensor& idx = E.tensor("index");
  const HostTensor& source = E.tensor("source");
  const int64_t dim = E.wrap_dim(args.get_int("dim"), self.rank());
  const double alpha = args.given("alpha") ? args.get_float("alpha") : 1.0;
  return scatter_into(
      E, self, source.sizes, [&](const std::vector<int64_t>& x) { return alpha * source.at(x); },
      [&](const std::vector<int64_t>& x, std::vector<int64_t>& t) {
        t = x;
        t[dim] = E.checked_index(idx.rank() == 0 ? idx.at({}) : idx.at({x[dim]}), self.sizes[dim]);
      });
}

std::vector<HostTensor> index_put(GraphEvaluator& E, const BoundArgs& args) {
  if (!args.get_bool("accumulate")) E.fail("only index_put with accumulate is referenced");
  const HostTensor& self = E.tensor("self");
  const HostTensor& values = E.tensor("values");
  std::vector<const HostTensor*> indices = E.tensor_list("indices");
  std::vector<size_t> indexed;
  std::vector<int64_t> b;  // the index tensors' broadcast shape
  for (size_t d = 0; d < indices.size(); ++d) {
    if (!indices[d]) continue;
    indexed.push_back(d);
    const std::vector<int64_t>& s = indices[d]->sizes;
    std::vector<int64_t> merged(std::max(b.size(), s.size()), 1);
    for (size_t i = 0; i < merged.size(); ++i) {
      int64_t x = i < b.size() ? b[b.size() - 1 - i] : 1, y = i < s.size() ? s[s.size() - 1 - i] : 1;
      merged[merged.size() - 1 - i] = x == 1 ? y : x;
    }
    b = merged;
  }
  const bool adjacent = indexed.back() - indexed.front() + 1 == indexed.size();
  const size_t b_start = adjacent ? indexed.front() : 0;
  std::vector<int64_t> sizes;
  for (size_t d = 0; d < self.sizes.size(); ++d) {
    if (d < indices.size() && indices[d]) {
      if (adjacent && d == indexed.front()) sizes.insert(sizes.end(), b.begin(), b.end());
      continue;
    }
    sizes.push_back(self.sizes[d]);
  }
  if (!adjacent) sizes.insert(sizes.begin(), b.begin(), b.end());
  auto broadcast_at = [](const HostTensor& t, const std::vector<int64_t>& c) {
    std::vector<int64_t> tc(t.sizes.size());
    const size_t lead = c.size() - tc.size();
    for (size_t j = 0; j < tc.size(); ++j) tc[j] = t.sizes[j] == 1 ? 0 : c[lead + j];
    return t.at(tc);
  };
  return scatter_into(
      E, self, sizes, [&](const std::vector<int64_t>& x) { return broadcast_at(values, x); },
      [&](const std::vector<int64_t>& x, std::vector<int64_t>& t) {
        std::vector<int64_t> bc(x.begin() + b_start, x.begin() + b_start + b.size());
        size_t o = 0;
        for (int64_t d = 0; d < self.rank(); ++d) {
          if (static_cast<size_t>(d) < indices.size() && indices[d]) {
            t[d] = E.checked_index(broadcast_at(*indices[d], bc), self.sizes[d]);
            continue;
          }
          if (o == b_start) o += b.size();
          t[d] = x[o++];
        }
      });
}

}  // namespace

void register_indexing_references(ReferenceTable& t) {
  t.add("aten.embedding.default", embedding);
  t.add("aten.index_select.default", index_select);
  t.add("aten.gather.default", gather);
  t.add("aten.index.Tensor", index_tensor);
  t.add("aten.scatter_add.default", scatter_add);
  t.add("aten.scatter.value", [](GraphEvaluator& E, const BoundArgs& a) { return scatter(E, a, false); });
  t.add("aten.scatter.src", [](GraphEvaluator& E, const BoundArgs& a) { return scatter(E, a, true); });
  t.add("aten.index_add.default", index_add);
  t.add("aten.index_put.default", index_put);
  for (const char* name : {"aten.bucketize.Tensor", "aten.bucketize.Scalar"})
    t.add(name, [](GraphEvaluator& E, const BoundArgs& a) { return search(E, a, true); });
  for (const char* name : {"aten.searchsorted.Tensor", "aten.searchsorted.Scalar"})
    t.add(name, [](GraphEvaluator& E, const BoundArgs& a) { return search(E, a, false); });
}

}  // namespace hi::reference
