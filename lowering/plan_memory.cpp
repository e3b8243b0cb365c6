#include "lowering/plan_memory.h"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace hi {
namespace {

struct Interval {
  int buffer;
  int first, last;  // kernel indices
  int64_t bytes;    // concrete sizes
  Index symbolic;   // symbolic sizes (bytes unused then)
};

class MemoryPlanner {
 public:
  explicit MemoryPlanner(LoopProgram& p) : p_(p) {}

  void run() {
    p_.workspace_offsets.assign(p_.buffers.size(), Index());
    int64_t concrete_bytes = 0;
    std::vector<Interval> intervals = lifetimes();
    // Greedy placement in order of first use: reuse the lowest offset whose occupant is dead, else grow. Good enough
    // for the chains graphs are made of; an optimal packing is NP-hard and buys little here.
    struct Placed { int64_t offset, bytes; int last; };
    std::vector<Placed> placed;
    for (const Interval& iv : intervals) {
      if (iv.symbolic.defined()) continue;
      // Intervals come in order of first use, so an occupant dead before this one starts is dead for every later
      // one too: dropping it changes no placement and keeps the scan proportional to what is live, not to every
      // buffer placed so far (a long chain of realized values has thousands).
      std::erase_if(placed, [&](const Placed& pl) { return pl.last < iv.first; });
      int64_t offset = 0;
      bool moved = true;
      while (moved) {
        moved = false;
        for (const Placed& pl : placed) {
          bool overlaps = offset < end_of(pl.offset, pl.bytes) && pl.offset < end_of(offset, iv.bytes);
          if (overlaps) {
            offset = end_of(pl.offset, pl.bytes);
            moved = true;
          }
        }
      }
      placed.push_back({offset, iv.bytes, iv.last});
      p_.workspace_offsets[iv.buffer] = Index(offset);
      concrete_bytes = std::max(concrete_bytes, end_of(offset, iv.bytes));
    }
    // Symbolic sizes: one slot each, after the concrete part.
    Index end = Index(concrete_bytes);
    for (const Interval& iv : intervals) {
      if (!iv.symbolic.defined()) continue;
      p_.workspace_offsets[iv.buffer] = end;
      end = simplify(end + align(iv.symbolic), p_.size_ranges);
    }
    p_.workspace_bytes = end;
  }

 private:
  /// The aligned end of `bytes` placed at `offset`; a workspace past 2^63 bytes is bad input (intermediates that large
  /// cannot be addressed), not an overflow.
  static int64_t end_of(int64_t offset, int64_t bytes) {
    int64_t end = 0;
    if (__builtin_add_overflow(offset, bytes, &end) || end > INT64_MAX - kWorkspaceAlignment)
      throw std::invalid_argument("the graph's intermediates need a workspace of more than 2^63 bytes");
    return align(end);
  }
  static int64_t align(int64_t v) { return (v + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment; }
  static Index align(const Index& v) {
    return floordiv(v + Index(kWorkspaceAlignment - 1), Index(kWorkspaceAlignment)) * Index(kWorkspaceAlignment);
  }

  std::vector<Interval> lifetimes() {
    std::vector<int> first(p_.buffers.size(), -1), last(p_.buffers.size(), -1);
    std::vector<bool> local(p_.buffers.size(), false);
    for (size_t k = 0; k < p_.kernels.size(); ++k) {
      for (int b : p_.kernels[k].local_buffers) local[b] = true;
      for (int c : p_.kernels[k].computations) {
        int b = p_.computations[c].buffer;
        if (first[b] < 0) first[b] = static_cast<int>(k);
        last[b] = std::max(last[b], static_cast<int>(k));
        visit_computation(p_.computations[c], [&](const Expr& e) {
          if (e->op == ExprOp::Load) last[e->buffer] = std::max(last[e->buffer], static_cast<int>(k));
        });
      }
    }
    std::vector<Interval> out;
    for (size_t b = 0; b < p_.buffers.size(); ++b) {
      const Buffer& buf = p_.buffers[b];
      if (buf.kind != BufferKind::Intermediate || local[b] || first[b] < 0) continue;
      Index elements = simplify(buf.storage_elements(), p_.size_ranges);
      if (auto n = elements.as_const())
        out.push_back({static_cast<int>(b), first[b], last[b], *n * dtype_bytes(buf.dtype), Index()});
      else
        out.push_back({static_cast<int>(b), first[b], last[b], 0,
                       simplify(elements * Index(dtype_bytes(buf.dtype)), p_.size_ranges)});
    }
    std::sort(out.begin(), out.end(), [](const Interval& a, const Interval& b) { return a.first < b.first; });
    return out;
  }

  LoopProgram& p_;
};

}  // namespace

void plan_memory(LoopProgram& program) { MemoryPlanner(program).run(); }

}  // namespace hi
