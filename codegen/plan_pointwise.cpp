// Plans of pointwise kernels: transposed tiles, vector groups (V, E, selected loads) or one element per iteration.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "codegen/kernel_lanes.h"
#include "codegen/plan_shapes.h"

namespace hi::codegen_detail {

namespace {

/// Threads per block of pointwise kernels. H200, do_bench, relu(a + b) over 64M f32 with 32 bytes per operand per
/// thread: 128 threads 0.1897 ms against 256 threads' 0.1911 (Inductor launches 128 too); tanh-gelu over 64M bf16
/// with 64 bytes per thread: 0.0733 against 0.0746 (bench/shapes/pw.cu: hand-written forms of the emitted kernels).
constexpr int kPointwiseBlock = 128;
/// Transposed reads' tiles: kTile x kTile elements per block of kTile x kTileRows threads (kTile / kTileRows rows
/// each); at most kMaxTiledOperands operands go through shared memory.
constexpr int kTile = 32, kTileRows = 8, kMaxTiledOperands = 4;
/// Transcendentals over few elements are bound by their instructions, not by memory: narrower vector groups (and
/// fewer groups per thread) until this many threads share them. RoPE's cos/sin of [1024, 128] bf16 ran 32 blocks of
/// 128 threads, each evaluating 64 sinf/cosf: 16 us on the H200, where Inductor's kernel took 1.
constexpr int64_t kComputeThreads = 65536;
/// E, a power of two: up to kBytesInFlight bytes per operand in flight per thread, at most kMaxLoadArrays groups'
/// load arrays and kMaxArrays groups' load and store arrays per thread: registers bound occupancy (LLaMA's
/// rotate-half, six operands: 2 groups each took 66 registers; 1 group, far fewer; one input and four outputs with 4
/// groups, 144 VGPRs on gfx942 against 76 with 2). So a one- or two-operand kernel loads 2 vectors per operand per
/// thread. H200, the sweep's unary ops over 4096 x 4096 (tools/perf_sweep.py, one case at a time, E forced): over
/// f32 (abs, asin, atanh, exp, relu, hardtanh, neg, sin, tanh, sigmoid) 2 groups took 4.5 % less time in all than 4
/// (sin 0.0381 -> 0.0363 ms, relu 0.0376 -> 0.0358; 4 groups left the last of 3.9 waves of blocks part-empty: 77 %
/// achieved occupancy in ncu against Inductor's 86 % with 8 elements per thread), over bf16 1.6 % less (each case
/// within noise), and 1 group no better than 2. relu(a + b) over 64M f32 with 2 each 0.1897 against 4's 0.1905; only
/// tanh-gelu over 64M bf16 favoured 4 (0.0733 against 0.0757, hand-written forms of the emitted kernels).
constexpr int64_t kBytesInFlight = 32, kMaxLoadArrays = 4, kMaxArrays = 10;
/// Bodies calling a long math function (lgamma, digamma, zeta: branches and loops, hundreds of instructions inlined
/// per call) are bound by instructions at any size: at most this many elements per thread, as Inductor's blocks of
/// 1024 elements over 128 threads. With E set by 64 bytes in flight instead (32 lgammaf per thread for bf16, 16 for
/// f32), the sweep's lgamma and digamma ran at 0.78-0.89x Inductor's speed on the H200 in two runs, bf16 (more
/// copies) the slowest, while short transcendentals (exp, tanh, sin) at the same widths kept pace; with 8, at
/// 0.95-1.00x (lgamma bf16 over 4096 x 4096: 0.109 ms -> 0.089, digamma 0.248 -> 0.206).
constexpr int kMaxLongMathCopies = 8;
/// Elements read from scattered addresses (pooling windows, upsampling and gather sources: V = 1) are this many per
/// thread, a block apart: threads doing one such element live too briefly to keep the SMs occupied (avg_pool2d over
/// bf16 ran at 43 % achieved occupancy). H200, the sweep's cases of this form at E = 1 / 2 / 4 (tools/perf_sweep.py,
/// one case at a time, E forced): avg_pool2d 32x64x112x112 bf16 0.0351 -> 0.0265 / 0.0265 ms, f32 0.0397 -> 0.0372 /
/// 0.0380, max_pool2d 3x3 bf16 0.0433 -> 0.0419 / 0.0420, f32 0.0472 -> 0.0451 / 0.0453; nearest upsampling,
/// gather and index_select within 3 % either way; but max_pool2d with its int64 indices 0.0356 -> 0.0404 / 0.0414,
/// so kernels storing 8-byte elements keep one.
constexpr int kElementsPerThread = 2;

bool has_long_math(const Expr& body) {
  bool found = false;
  visit(body, [&](const Expr& x) {
    found = found || (x->op == ExprOp::Unary && (x->unary_op() == UnaryOp::Lgamma ||
                                                 x->unary_op() == UnaryOp::Digamma)) ||
            (x->op == ExprOp::Binary && x->binary_op() == BinaryOp::Zeta);
  });
  return found;
}

/// `e` with the min/max nodes decided by `anchor` lying in [lo, hi] folded away: min(anchor + k, c) is anchor + k
/// when hi + k <= c and c when lo + k >= c (max alike); everything else is rebuilt from folded operands. Used under
/// one branch of `where(anchor < C, ...)`, where the clamps a concatenation puts into its loads' indices (to keep
/// the other branch's lanes in bounds) are decided.
Index fold_clamps(const Index& e, const Index& anchor, int64_t lo, int64_t hi, const VarRanges& ranges) {
  if (e.is_const() || e.is_var()) return e;
  std::vector<Index> a;
  for (const Index& x : e.args()) a.push_back(fold_clamps(x, anchor, lo, hi, ranges));
  switch (e.op()) {
    case IndexOp::Add: return sum(a);
    case IndexOp::Mul: return product(a);
    case IndexOp::FloorDiv: return floordiv(a[0], a[1]);
    case IndexOp::Mod: return mod(a[0], a[1]);
    case IndexOp::Min:
    case IndexOp::Max: {
      const bool is_min = e.op() == IndexOp::Min;
      for (int side = 0; side < 2; ++side) {
        const Index& v = a[side];
        const Index& c = a[1 - side];
        auto k = simplify(v - anchor, ranges).as_const();
        if (!c.is_const() || !k) continue;
        const int64_t vlo = lo + *k, vhi = hi + *k, cv = c.value();
        if (is_min ? vhi <= cv : vlo >= cv) return v;
        if (is_min ? vlo >= cv : vhi <= cv) return c;
      }
      return is_min ? min(a[0], a[1]) : max(a[0], a[1]);
    }
    default: return e;
  }
}

int count_in(const Expr& root, const Expr& load) {
  int n = 0;
  visit(root, [&](const Expr& e) { n += e == load; });
  return n;
}

/// The concatenations of `bodies` (over g and lanes j < v in `ranges`) whose operands one vector load can select.
std::vector<SelectedLoad> selected_loads(const LoopProgram& p, const std::vector<Expr>& bodies,
                                         const std::vector<Expr>& loads, int v, const VarRanges& ranges) {
  std::vector<Expr> gathers;  // read directly (no indirect index), not contiguous as written
  for (const Expr& load : loads)
    if (load->args.empty() && !contiguous_lanes(load->index, ranges)) gathers.push_back(load);
  std::vector<SelectedLoad> out;
  if (gathers.empty()) return out;
  std::vector<Expr> seen;
  for (const Expr& body : bodies)
    visit(body, [&](const Expr& w) {
      if (w->op != ExprOp::Where || std::find(seen.begin(), seen.end(), w) != seen.end()) return;
      seen.push_back(w);
      const Expr& cond = w->args[0];
      if (cond->op != ExprOp::Binary || cond->args[0]->op != ExprOp::IndexValue ||
          cond->args[1]->op != ExprOp::IndexValue)
        return;
      const BinaryOp op = cond->binary_op();
      if (op != BinaryOp::Lt && op != BinaryOp::Le && op != BinaryOp::Gt && op != BinaryOp::Ge) return;
      std::optional<int64_t> c = simplify(cond->args[1]->index, ranges).as_const();
      if (!c) return;
      // The condition must hold for all lanes of a group or for none: the anchor walks the lanes in order from a
      // multiple of V, and the first value of the upper part is a multiple of V too.
      const Index anchor = simplify(cond->args[0]->index, ranges);
      if (!contiguous_lanes(anchor, ranges)) return;
      const int64_t split = (op == BinaryOp::Lt || op == BinaryOp::Ge) ? *c : *c + 1;
      if (split % v != 0 || simplify(mod(lane0(anchor, ranges), Index(v)), ranges) != Index(0)) return;
      const Range r = bounds(anchor, ranges);
      if (!r.lo || !r.hi) return;
      const bool upper = op == BinaryOp::Lt || op == BinaryOp::Le;  // if-true branch: anchor below the split
      const int64_t lo[2] = {upper ? *r.lo : split, upper ? split : *r.lo};
      const int64_t hi[2] = {upper ? split - 1 : *r.hi, upper ? *r.hi : split - 1};
      if (lo[0] > hi[0] || lo[1] > hi[1]) return;
      // One gather per branch, read nowhere else, contiguous once the branch's clamps are folded.
      std::optional<std::pair<Expr, Index>> side[2];
      for (int s = 0; s < 2; ++s) {
        for (const Expr& load : gathers) {
          const int here = count_in(w->args[1 + s], load);
          if (here == 0) continue;
          int total = 0;
          for (const Expr& b : bodies) total += count_in(b, load);
          if (total != here || side[s]) return;
          Index folded = simplify(fold_clamps(load->index, anchor, lo[s], hi[s], ranges), ranges);
          if (!contiguous_lanes(folded, ranges)) return;
          side[s] = std::make_pair(load, lane0(folded, ranges));
        }
      }
      if (!side[0] || !side[1]) return;
      if (p.buffers[side[0]->first->buffer].dtype != p.buffers[side[1]->first->buffer].dtype) return;
      const char* sign = op == BinaryOp::Lt ? "<" : op == BinaryOp::Le ? "<=" : op == BinaryOp::Gt ? ">" : ">=";
      out.push_back({simplify(lane0(anchor, ranges), ranges), sign, *c, side[0]->first, side[0]->second,
                     side[1]->first, side[1]->second});
    });
  return out;
}

/// Bytes of the lines in which a GPU's L1 serves a wave's memory instruction (NVIDIA's and gfx942's are 128): each
/// distinct line one instruction touches costs the load/store unit a pass, whatever the bytes used in it.
constexpr int64_t kLineBytes = 128;
/// Waves sampled per kernel, spread evenly over its elements, when lane widths are compared by the lines they touch.
constexpr int64_t kSampledWaves = 4;
/// A narrower vector width is taken only when it touches at most this fraction of the lines of the wider one:
/// wider groups issue fewer instructions for the same data.
constexpr double kNarrowerLines = 0.875;

/// Cache lines per element that pointwise kernel `k` touches with vector groups of a given width, over waves of
/// `wave` threads sampled across its elements: a vector access is one instruction per group and touches the lines of
/// all its lanes; any other access is one instruction per lane (lanes of identical addresses merge, as the compiler
/// merges their loads) and touches the lines of that lane's `wave` addresses. Addresses are evaluated once, from the
/// index expressions, for the widest width asked; accesses whose
/// addresses are not known at plan time are left out. A direct access counts as a vector access where the sampled
/// groups' lanes are consecutive elements: the printer proves that for contiguous lanes, and a concatenation's
/// selected load is consecutive wherever its group does not straddle the seam.
class LaneLines {
 public:
  LaneLines(const LoopProgram& p, const Kernel& k, int64_t numel, int widest, int wave) : wave_(wave) {
    const VarRanges ranges = kernel_var_ranges(p, k);
    std::vector<std::function<std::optional<int64_t>(int64_t)>> address;
    std::vector<Expr> reads;
    for (int ci : k.computations) {
      const Computation& c = p.computations[ci];
      visit(kernel_body(p, k, c, ranges), [&](const Expr& e) {
        if (e->op != ExprOp::Load || produced_here(p, k, e->buffer) ||
            std::find(reads.begin(), reads.end(), e) != reads.end())
          return;
        reads.push_back(e);
        const int64_t bytes = dtype_bytes(p.buffers[e->buffer].dtype);
        direct_.push_back(e->args.empty());
        element_bytes_.push_back(bytes);
        address.push_back([e, bytes](int64_t i) -> std::optional<int64_t> {
          if (!e->args.empty()) return std::nullopt;  // computed coordinates: gathers_lanes keeps such kernels out
          std::optional<int64_t> v = evaluate(e->index, {{"i", i}});
          if (!v) return std::nullopt;
          return *v * bytes;
        });
      });
    }
    for (int ci : k.computations) {
      const Computation& c = p.computations[ci];
      if (is_local(k, c.buffer)) continue;
      const int64_t bytes = dtype_bytes(p.buffers[c.buffer].dtype);
      direct_.push_back(true);
      element_bytes_.push_back(bytes);
      address.push_back([store = kernel_store_index(p, k, c, ranges), bytes](int64_t i) -> std::optional<int64_t> {
        std::optional<int64_t> v = evaluate(store, {{"i", i}});
        if (!v) return std::nullopt;
        return *v * bytes;
      });
    }
    const int64_t span = int64_t{wave} * widest;
    for (int64_t s = 0; s < kSampledWaves; ++s) {
      const int64_t first = std::max<int64_t>(0, std::min(numel - span, numel * s / kSampledWaves / span * span));
      const int64_t count = std::min(span, numel - first);
      if (count <= 0) continue;
      std::vector<std::optional<std::vector<int64_t>>> sample;
      for (const auto& f : address) {
        std::vector<int64_t> at(count);
        bool ok = true;
        for (int64_t x = 0; x < count && ok; ++x) {
          std::optional<int64_t> a = f(first + x);
          ok = a.has_value();
          if (ok) at[x] = *a;
        }
        sample.push_back(ok ? std::optional(std::move(at)) : std::nullopt);
      }
      samples_.push_back(std::move(sample));
    }
  }

  /// Lines per element with groups of `v` lanes (v at most the widest width), nullopt when no address is known.
  std::optional<double> per_element(int v) const {
    auto lines_of = [](const std::vector<int64_t>& addresses) {
      std::set<int64_t> l;
      for (int64_t b : addresses) l.insert(b >= 0 ? b / kLineBytes : -((-b + kLineBytes - 1) / kLineBytes));
      return static_cast<int64_t>(l.size());
    };
    const int64_t span = int64_t{wave_} * v;
    int64_t lines = 0, elements = 0;
    bool known = false;
    for (const auto& sample : samples_) {
      int64_t count = 0;
      for (size_t a = 0; a < sample.size(); ++a) {
        if (!sample[a]) continue;
        known = true;
        const std::vector<int64_t>& address = *sample[a];
        count = std::min<int64_t>(span, static_cast<int64_t>(address.size()));
        bool vector = v > 1 && direct_[a] && count % v == 0;
        for (int64_t x = 0; x < count && vector; ++x) vector = address[x] == address[x - x % v] + x % v * element_bytes_[a];
        if (vector) {
          lines += lines_of(std::vector<int64_t>(address.begin(), address.begin() + count));
          continue;
        }
        std::set<std::vector<int64_t>> lanes;  // one instruction per lane, lanes of identical addresses merged
        for (int64_t j = 0; j < v; ++j) {
          std::vector<int64_t> lane;
          for (int64_t x = j; x < count; x += v) lane.push_back(address[x]);
          if (lanes.insert(lane).second) lines += lines_of(lane);
        }
      }
      elements += count;
    }
    if (!known || elements == 0) return std::nullopt;
    return static_cast<double>(lines) / static_cast<double>(elements);
  }

 private:
  int wave_;
  std::vector<bool> direct_;             ///< per access (loads, then stores): a direct load or a store
  std::vector<int64_t> element_bytes_;   ///< per access
  std::vector<std::vector<std::optional<std::vector<int64_t>>>> samples_;  ///< per wave, per access: byte addresses
};

/// Whether kernel `k`, in lane views `bodies` and `stores` (lane variable j), reads or writes lane by lane where the
/// lanes' addresses differ (a gather, not a concatenation's selected load), so that narrower vector groups may touch
/// fewer cache lines. Not where a load's addresses come from computed coordinates (indirect loads: an upsampling's
/// source rows and columns, float products, floors and clamps per element): a group of lanes shares those
/// computations, which a line count does not see (bilinear upsampling of f32 ran 1.9x slower on the H200 at one lane
/// per thread than in groups of 4).
bool gathers_lanes(const LoopProgram& p, const Kernel& k, const std::vector<Expr>& bodies,
                   const std::vector<Index>& stores, const std::vector<SelectedLoad>& selected,
                   const VarRanges& ranges) {
  bool any = false, computed = false;
  for (const Expr& body : bodies)
    visit(body, [&](const Expr& e) {
      if (e->op != ExprOp::Load || produced_here(p, k, e->buffer)) return;
      if (!e->args.empty()) {
        computed = true;
        return;
      }
      if (classify_lanes(e->index, "j", ranges) != LaneAccess::Gather) return;
      for (const SelectedLoad& s : selected)
        if (e == s.if_true || e == s.if_false) return;
      any = true;
    });
  for (size_t c = 0; c < stores.size(); ++c)
    if (!is_local(k, p.computations[k.computations[c]].buffer) &&
        classify_lanes(stores[c], "j", ranges) == LaneAccess::Gather)
      any = true;
  return any && !computed;
}

/// The width, of `v` and the narrower powers of two, whose lanes touch the fewest cache lines per element
/// (LaneLines), a narrower one only where it touches at most kNarrowerLines of the best so far; `v` where the addresses
/// are not known at plan time.
int fewest_lines_width(const LoopProgram& p, const Kernel& k, int64_t numel, int v, int wave) {
  const LaneLines lines(p, k, numel, v, wave);
  std::optional<double> best_lines = lines.per_element(v);
  if (!best_lines) return v;
  int best = v;
  for (int w = v / 2; w >= 1; w /= 2) {
    std::optional<double> l = lines.per_element(w);
    if (l && *l <= kNarrowerLines * *best_lines) {
      best = w;
      best_lines = l;
    }
  }
  return best;
}

/// Pointwise kernels reading an operand transposed (contiguous along the walk's second-innermost dim, not its
/// innermost) while every store is contiguous along the innermost: tiles of such operands go through shared memory,
/// read with lanes along the dim they are contiguous in, so loads and stores both coalesce. False where that does
/// not apply.
bool plan_transposed(const LoopProgram& p, const Kernel& k, PointwisePlan& pw) {
  auto n = simplify(k.numel, p.size_ranges).as_const();
  if (!n) return false;
  // The flat index i = (xo * P + xp) * Q + xq, for P x Q the two innermost dims one computation walks (its
  // outputs' memory order): the kernel's computations share i, not always their shapes (q, k^T and v of attention).
  std::vector<std::pair<int64_t, int64_t>> splits;
  for (int ci : k.computations) {
    const Computation& c = p.computations[ci];
    std::vector<Index> walked = c.sizes;
    if (!k.loop_order.empty()) {
      walked.clear();
      for (int d : k.loop_order) walked.push_back(c.sizes[d]);
    }
    if (walked.size() < 2) continue;
    auto pc = simplify(walked[walked.size() - 2], p.size_ranges).as_const();
    auto qc = simplify(walked.back(), p.size_ranges).as_const();
    // An empty walk has nothing to tile (and P x Q = 0 divides nothing).
    if (pc && qc && *pc > 0 && *qc > 0 && *pc % kTile == 0 && *qc % kTile == 0 && *n % (*pc * *qc) == 0 &&
        std::find(splits.begin(), splits.end(), std::make_pair(*pc, *qc)) == splits.end())
      splits.emplace_back(*pc, *qc);
  }
  for (const auto& [P, Q] : splits) {
    const int64_t O = *n / (P * Q);
    VarRanges ranges = kernel_var_ranges(p, k);
    ranges["xo"] = Range::loop(O);
    ranges["xp"] = Range::loop(P);
    ranges["xq"] = Range::loop(Q);
    std::vector<Expr> bodies;
    std::vector<Index> stores;
    lane_views(p, k, {{"i", (Index::var("xo") * P + Index::var("xp")) * Q + Index::var("xq")}}, ranges, bodies,
               stores);
    auto along = [&](const Index& f, const char* var) { return classify_lanes(f, var, ranges); };
    bool stores_coalesce = true;
    for (size_t c = 0; c < stores.size(); ++c)
      if (!is_local(k, p.computations[k.computations[c]].buffer) && along(stores[c], "xq") != LaneAccess::Contiguous)
        stores_coalesce = false;
    std::vector<Expr> tiled;
    for (const Expr& load : external_loads(p, k, bodies))
      if (load->args.empty() && along(load->index, "xq") == LaneAccess::Gather &&
          along(load->index, "xp") == LaneAccess::Contiguous)
        tiled.push_back(load);
    if (!stores_coalesce || tiled.empty() || tiled.size() > kMaxTiledOperands) continue;
    pw.form = PointwisePlan::Form::TransposedTiles;
    pw.form_reason = std::to_string(tiled.size()) + " operand(s) contiguous along the walk's dim of " +
                     std::to_string(P) + ", every store along its innermost (" + std::to_string(Q) +
                     "): tiles through shared memory coalesce both";
    pw.tile = kTile;
    pw.tile_rows = kTileRows;
    pw.tile_o = O;
    pw.tile_p = P;
    pw.tile_q = Q;
    pw.tiled_loads = std::move(tiled);
    return true;
  }
  return false;
}

}  // namespace

void plan_scatter(const LoopProgram& p, const Kernel& k, const Target&, KernelPlan& plan) {
  PointwisePlan pw;
  plan.block = kPointwiseBlock;
  plan.block_reason = "pointwise blocks of 128";
  plan.whole_grid = true;
  plan.grid_reason = "one element per thread: the block scheduler spreads the atomics over the SMs";
  plan.grid = floordiv(k.numel + (plan.block - 1), Index(plan.block));
  pw.form = PointwisePlan::Form::Elements;
  pw.form_reason = "a scatter: each element's value added atomically where its index says";
  pw.width_reason = "targets known only at run time: no vector stores";
  pw.groups_reason = "one element per iteration";
  plan.shape = std::move(pw);
  (void)p;
}

void plan_pointwise(const LoopProgram& p, const Kernel& k, const Target& target, KernelPlan& plan) {
  PointwisePlan pw;
  plan.block = kPointwiseBlock;
  plan.block_reason = "pointwise blocks of 128 (Inductor's too): relu(a + b) over 64M f32 0.1897 ms against 256's "
                      "0.1911 on the H200";
  plan.whole_grid = true;
  plan.grid_reason = "pointwise blocks are short and even: the block scheduler evens out the SMs";
  if (plan_transposed(p, k, pw)) {
    const int64_t tiles = pw.tile_o * (pw.tile_p / pw.tile) * (pw.tile_q / pw.tile);
    plan.block = pw.tile * pw.tile_rows;
    plan.block_reason = "a tile's " + std::to_string(pw.tile) + " x " + std::to_string(pw.tile_rows) + " threads";
    plan.grid = Index(tiles);
    plan.needs_sync = true;
    plan.shape = std::move(pw);
    return;
  }
  VarRanges ranges = kernel_var_ranges(p, k);
  const Index numel = simplify(k.numel, p.size_ranges);
  auto n = numel.as_const();
  // A symbolic element count takes vector groups too: which accesses are contiguous across a group's lanes is proven
  // for every value of the symbols, the group count is numel / V at run time, and the scalar loop does the rest.
  // Every stream one whole access per group: pointwise kernels read and write all their streams at the same rate.
  int v = vector_width(p, k, ranges, "i", numel, false, VectorRule::OneChunkPerStream);
  pw.width_reason = vector_width_reason(v, "i", VectorRule::OneChunkPerStream) +
                    (n ? "" : " (element count over size symbols)");
  const bool transcendental = std::any_of(k.computations.begin(), k.computations.end(),
                                          [&](int c) { return has_transcendental(p.computations[c].body); });
  if (n && transcendental && v > 1 && *n / v < kComputeThreads) {
    while (v > 1 && *n / v < kComputeThreads) v /= 2;
    pw.width_reason = "transcendentals over " + std::to_string(*n) + " elements are bound by instructions: " +
                      "narrowed until 64k threads share them";
  }
  bool compared_lines = false;
  for (;;) {
    pw.width = v;
    if (v == 1) {
      pw.form = PointwisePlan::Form::Elements;
      pw.form_reason = "no vector groups (V = 1)";
      pw.groups_reason = "one element per iteration";
      const bool wide_stores = std::any_of(k.computations.begin(), k.computations.end(), [&](int c) {
        const int b = p.computations[c].buffer;
        return !is_local(k, b) && dtype_bytes(p.buffers[b].dtype) > 4;
      });
      const std::optional<int64_t> elements = numel.as_const();
      if (wide_stores) {
        pw.groups_reason = "one element per iteration: 8-byte stores (" + std::to_string(kElementsPerThread) +
                           " per thread measured slower)";
      } else if (elements && *elements < int64_t{kElementsPerThread} * kComputeThreads) {
        pw.groups_reason = "one element per iteration: few elements (threads kept)";
      } else {
        pw.groups_per_thread = kElementsPerThread;
        pw.groups_reason = std::to_string(kElementsPerThread) + " elements per thread, a block apart";
      }
      const int64_t span = int64_t{plan.block} * pw.groups_per_thread;
      plan.grid = floordiv(k.numel + (span - 1), Index(span));
      plan.shape = std::move(pw);
      return;
    }
    pw.form = PointwisePlan::Form::VectorGroups;
    pw.form_reason = "vector groups of " + std::to_string(v) + " elements";
    const Index groups = simplify(floordiv(numel, Index(v)), p.size_ranges);
    const std::optional<int64_t> known_groups = groups.as_const();
    pw.groups = groups;
    ranges["g"] = group_range(numel, v, p.size_ranges);
    ranges["j"] = Range::loop(v);
    std::vector<Expr> bodies;
    std::vector<Index> stores;
    lane_views(p, k, {{"i", Index::var("g") * v + Index::var("j")}}, ranges, bodies, stores);
    std::vector<Expr> loads = external_loads(p, k, bodies);
    // Concatenations: where the cat's condition holds for a whole vector group or for none of it, the group loads
    // the taken operand with one vector load from a selected address, into one array both operands read from.
    pw.selected_loads = selected_loads(p, bodies, loads, v, ranges);
    // Lanes read one by one from different addresses (pooling windows, upsampling sources) spread each wave-wide
    // instruction over V times the memory of one lane per thread: max_pool2d's stride-2 taps over f32 touched 8 lines
    // per instruction in groups of 4 against 2 with one element per thread. The width whose accesses touch the fewest
    // cache lines wins there.
    if (n && !compared_lines && gathers_lanes(p, k, bodies, stores, pw.selected_loads, ranges)) {
      compared_lines = true;
      if (int w = fewest_lines_width(p, k, *n, v, target.warp_size); w < v) {
        pw.width_reason = "lanes gathered from different addresses: " + std::to_string(w) +
                          " lane(s) touch the fewest "
                          "cache lines per element (of " +
                          std::to_string(v) + " and narrower)";
        v = w;
        continue;
      }
    }
    const int64_t arrays =
        static_cast<int64_t>(pw.selected_loads.size()) +
        std::count_if(loads.begin(), loads.end(), [&](const Expr& l) { return contiguous_lanes(l->index, ranges); });
    int64_t store_arrays = 0;
    for (size_t c = 0; c < k.computations.size(); ++c)
      store_arrays += !is_local(k, p.computations[k.computations[c]].buffer) && contiguous_lanes(stores[c], ranges);
    // A symbolic group count sets no limit of its own (any count runs correctly; few groups leave threads idle).
    const int64_t limits[4] = {kBytesInFlight / (v * narrowest_bytes(kernel_accesses(p, k, ranges))),
                               known_groups ? ceil_div(*known_groups, plan.block) : kBytesInFlight,
                               kMaxLoadArrays / std::max<int64_t>(1, arrays),
                               kMaxArrays / std::max<int64_t>(1, arrays + store_arrays)};
    const char* why[4] = {"32 bytes of the narrowest operand in flight per thread", "one iteration covers every group",
                          "at most 4 groups' load arrays per thread (registers bound occupancy)",
                          "at most 10 groups' load and store arrays per thread (registers bound occupancy)"};
    const int binding = static_cast<int>(std::min_element(limits, limits + 4) - limits);
    int e = static_cast<int>(pow2_at_most(limits[binding]));
    pw.groups_reason = std::string(why[binding]) + " (" + std::to_string(arrays) + " load and " +
                       std::to_string(store_arrays) + " store arrays)";
    if (known_groups && transcendental && e > 1 && *known_groups / e < kComputeThreads) {
      while (e > 1 && *known_groups / e < kComputeThreads) e /= 2;
      pw.groups_reason = "transcendentals over few groups: fewer groups per thread until 64k threads share them";
    }
    if (e > 1 && v * e > kMaxLongMathCopies &&
        std::any_of(k.computations.begin(), k.computations.end(),
                    [&](int c) { return has_long_math(p.computations[c].body); })) {
      e = std::max(1, kMaxLongMathCopies / v);
      pw.groups_reason = "long math functions (lgamma, digamma, zeta) are bound by instructions: at most " +
                         std::to_string(kMaxLongMathCopies) + " elements per thread";
    }
    pw.groups_per_thread = e;
    const int64_t span = int64_t{plan.block} * e;
    plan.grid = simplify(floordiv(groups + Index(span - 1), Index(span)), p.size_ranges);
    // The scalar loop over numel % V runs in the same blocks: with fewer elements than V there are no groups, and one
    // block must still run.
    if (!known_groups) plan.grid = simplify(max(plan.grid, min(numel, Index(1))), p.size_ranges);
    plan.shape = std::move(pw);
    return;
  }
}

}  // namespace hi::codegen_detail
