// Plans of row and column reductions: persistent or looped rows, threads per row; column vector groups and slices.
#include <algorithm>
#include <functional>
#include <optional>

#include "codegen/kernel_lanes.h"
#include "codegen/plan_shapes.h"

namespace hi::codegen_detail {

namespace {

/// Rows too long for registers: up to this many threads per row stream them.
constexpr int kRowLoopThreads = 1024;
/// Most values a persistent row keeps per thread (per operand) before the row is looped instead.
constexpr int kMaxRegisterValues = 32;
/// Most values per thread of a persistent row that a whole kRowLoopThreads block holds and writes back (see
/// persistent_rows).
constexpr int kMaxBlockRowValues = 16;
/// Fewest vector groups a persistent row of a length no vector width divides spans before it is peeled.
constexpr int64_t kMinPeeledGroups = 4;
/// Shared memory of the unit whose kResidentWarps warps share it: 228 KB on an H200 SM (sm_90), 64 KiB of LDS on a
/// CDNA CU (gfx90a, gfx942; 4 SIMDs), 128 KiB on an RDNA WGP (gfx1100 in its default WGP mode; 4 SIMD32s). The cpu
/// device stands for the GPU of its warp width.
int64_t shared_per_multiprocessor(const Target& target) {
  if (target.kind == TargetKind::Amd) return target.warp_size == 64 ? 65536 : 131072;
  return target.kind == TargetKind::Cpu && target.warp_size == 64 ? 65536 : 233472;
}
/// Most static shared memory one block may declare (NVIDIA's limit without an opt-in to dynamic shared memory).
constexpr int64_t kMaxStaticShared = 49152;
/// Warps (waves) a multiprocessor should keep resident: 4 per SIMD / SM sub-partition, the AMD code-quality floor.
constexpr int64_t kResidentWarps = 16;
/// Shared memory a block keeps for its reductions' warp partials beside staged operands.
constexpr int64_t kReductionShared = 1024;
/// Fewest threads a column kernel keeps when it widens its vector groups.
constexpr int64_t kMinColumnThreads = 32768;
/// Vector groups below which a single-reduction column kernel slices its rows across a block, the threads it then
/// aims for (about a full H200: 132 SMs x 2048), and the blocks it keeps while it can (2 per H200 SM).
constexpr int64_t kVectorSliceGroups = 65536;
constexpr int64_t kVectorSliceThreads = 262144;
constexpr int64_t kVectorSliceBlocks = 256;
/// Shared memory the slices of one block may use to meet.
constexpr int64_t kVectorSliceSharedBytes = 32768;
/// Reduced steps a column thread unrolls (ColumnPlan::unroll), and the most it unrolls where shared memory left its
/// block fewer row slices than it wanted.
constexpr int kColumnUnroll = 4;
constexpr int kMaxColumnUnroll = 8;

/// Persistent rows' vector loads and cached values (RowPlan::row_loads, cached_values) over `bodies`: the
/// computations over col = cg*V + j in `ranges`.
void plan_row_registers(const LoopProgram& p, const Kernel& k, const std::vector<Expr>& bodies, const VarRanges& ranges,
                        RowPlan& plan) {
  for (const Expr& load : external_loads(p, k, bodies)) {
    if (!contiguous_lanes(load->index, ranges)) continue;
    if (std::any_of(plan.staged.begin(), plan.staged.end(),
                    [&](const RowPlan::StagedOperand& s) { return s.buffer == load->buffer; }))
      continue;  // read from shared memory
    RowPlan::RowLoad l{load, lane0(load->index, ranges), {}};
    for (size_t n_c = 0; n_c < bodies.size(); ++n_c) {
      std::vector<Expr> used = external_loads(p, k, {bodies[n_c]});
      if (std::find(used.begin(), used.end(), load) != used.end()) l.users.push_back(n_c);
    }
    plan.row_loads.push_back(std::move(l));
  }
  std::vector<RowPlan::CachedValue>& cached = plan.cached_values;
  auto per_element = [&](const Expr& e) {
    bool found = false;
    visit(e, [&](const Expr& x) {
      if (x->op != ExprOp::Load && x->op != ExprOp::IndexValue) return;
      if (x->op == ExprOp::Load && produced_here(p, k, x->buffer)) {
        const Computation& pc = p.computations[p.producer(x->buffer)];
        if (!pc.is_reduction() && !is_row_epilogue(pc, k)) found = true;
        return;
      }
      for (const std::string& var : free_vars(x->index))
        if (var == "cg" || var == "j") found = true;
    });
    return found;
  };
  auto expensive = [](const Expr& e) {
    if (op_count(e) >= 2) return true;
    if (e->op != ExprOp::Unary) return false;
    switch (e->unary_op()) {
      case UnaryOp::Neg: case UnaryOp::Abs: case UnaryOp::Relu: case UnaryOp::LogicalNot: case UnaryOp::BitwiseNot:
      case UnaryOp::Sign: return false;
      default: return true;
    }
  };
  std::vector<std::vector<Expr>> computed(bodies.size());  // per-element nodes of each phase
  for (size_t n_c = 0; n_c < bodies.size(); ++n_c) {
    const Computation& c = p.computations[k.computations[n_c]];
    if (is_row_epilogue(c, k)) continue;
    const Expr root = c.is_reduction() ? bodies[n_c]->args[0] : bodies[n_c];
    visit(root, [&](const Expr& x) {
      if (!x->args.empty() && x->op != ExprOp::Load && per_element(x)) computed[n_c].push_back(x);
    });
    // Top-down over this phase: the largest expensive values an earlier phase computed.
    std::function<void(const Expr&)> reuse = [&](const Expr& x) {
      for (size_t earlier = 0; earlier < n_c; ++earlier)
        if (std::find(computed[earlier].begin(), computed[earlier].end(), x) != computed[earlier].end()) {
          if (!expensive(x)) break;
          bool known = std::any_of(cached.begin(), cached.end(), [&](const RowPlan::CachedValue& v) { return v.value == x; });
          if (!known) cached.push_back({x, earlier});
          return;
        }
      for (const Expr& a : x->args) reuse(a);
    };
    reuse(root);
  }
}

/// Rows of a length no vector width divides: the widest V that makes the most accesses contiguous along the row
/// without dividing its length (1 where none is), and the index of each contiguous access (loads, then stores to
/// memory) at the row's first column, over row.
struct OddRows {
  int width = 1;
  std::vector<Index> starts;
  std::vector<int> buffers;  ///< each start's loaded buffer, -1 for a store
};
OddRows odd_rows(const LoopProgram& p, const Kernel& k, const VarRanges& base, const Index& length) {
  OddRows odd;
  odd.width = vector_width(p, k, base, "col", length, false);
  if (odd.width == 1) return odd;
  VarRanges ranges = base;
  ranges["cg"] = group_range(length, odd.width, p.size_ranges);
  ranges["j"] = Range::loop(odd.width);
  std::vector<Expr> bodies;
  std::vector<Index> stores;
  lane_views(p, k, {{"col", Index::var("cg") * odd.width + Index::var("j")}}, ranges, bodies, stores);
  auto start = [&](const Index& f) { return simplify(substitute(lane0(f, ranges), {{"cg", Index(0)}}), ranges); };
  for (const Expr& load : external_loads(p, k, bodies))
    if (contiguous_lanes(load->index, ranges)) {
      odd.starts.push_back(start(load->index));
      odd.buffers.push_back(load->buffer);
    }
  for (size_t n = 0; n < stores.size(); ++n)
    if (!is_local(k, p.computations[k.computations[n]].buffer) && contiguous_lanes(stores[n], ranges)) {
      odd.starts.push_back(start(stores[n]));
      odd.buffers.push_back(-1);
    }
  return odd;
}

/// Whether every contiguous access of `odd` is in the same phase modulo its V: one head aligns them all.
bool one_phase(const OddRows& odd, const VarRanges& ranges) {
  bool same = !odd.starts.empty();
  for (const Index& a : odd.starts)
    same = same && simplify(mod(a - odd.starts[0], Index(odd.width)), ranges) == Index(0);
  return same;
}

/// The operands of a row kernel that each block can stage in shared memory (RowPlan::staged): buffers read
/// contiguously along the row by the column alone, at one index, wherever the kernel reads them.
std::vector<RowPlan::StagedOperand> column_operands(const LoopProgram& p, const Kernel& k, const VarRanges& base) {
  std::vector<Expr> bodies;
  std::vector<Index> stores;
  lane_views(p, k, {}, base, bodies, stores);
  std::vector<RowPlan::StagedOperand> found;
  std::set<int> refused;
  for (const Expr& load : external_loads(p, k, bodies)) {
    const std::vector<std::string> vars = free_vars(load->index);
    const bool by_column = std::find(vars.begin(), vars.end(), "row") == vars.end() &&
                           classify_lanes(load->index, "col", base) == LaneAccess::Contiguous;
    auto known = std::find_if(found.begin(), found.end(),
                              [&](const RowPlan::StagedOperand& s) { return s.buffer == load->buffer; });
    if (!by_column || (known != found.end() && known->at != load->index)) {
      refused.insert(load->buffer);
      continue;
    }
    if (known == found.end()) found.push_back({load->buffer, load->index});
  }
  // A buffer read anywhere else (by the row, or through an index) stays in global memory.
  for (const Expr& b : bodies)
    visit(b, [&](const Expr& e) {
      if (e->op == ExprOp::Load && !e->args.empty()) refused.insert(e->buffer);
    });
  found.erase(std::remove_if(found.begin(), found.end(),
                             [&](const RowPlan::StagedOperand& s) { return refused.count(s.buffer) > 0; }),
              found.end());
  return found;
}

/// Persistent rows planned as rows of `planned` columns: the known row length, or for a symbolic one the bound of
/// the variant (persistent_row_variant) that runs it for lengths up to there. `not_persistent` says why not, where a
/// rule (not the length alone) refuses them.
std::optional<RowPlan> persistent_rows(const LoopProgram& p, const Kernel& k, const Target& target,
                                       std::string& not_persistent, std::optional<int64_t> bound = std::nullopt,
                                       bool may_stage = true) {
  // Only the row length decides the registers each thread holds: it must be known, or bounded by the variant. The
  // row count may be symbolic (a dynamic batch or sequence length): it sets only the loop bound and the grid, both
  // evaluated per call.
  const Index rows = simplify(k.numel, p.size_ranges);
  const Index row_length = simplify(k.row_length, p.size_ranges);
  std::optional<int64_t> length = row_length.as_const();
  if (!length) length = bound;
  if (!length || *length < 1 || (rows.is_const() && rows.value() < 1)) return std::nullopt;
  RowPlan plan;
  plan.form = RowPlan::Form::Persistent;
  plan.length = *length;
  // V divides the row length for every value; a row shorter than planned leaves its last groups' lanes idle
  // (RowPlan::groups).
  const VarRanges base = kernel_var_ranges(p, k);
  plan.width = vector_width(p, k, base, "col", row_length, true);
  plan.width_reason = vector_width_reason(plan.width, "col");
  // A length no V divides (4099; a symbolic one without a promised divisor) leaves most rows starting off the vector
  // alignment. Element by element, a warp moves 64 bytes of a 16-bit row per load instruction, and the sweep's odd
  // row reductions and norms ran at 0.55-0.71x Inductor's speed on the H200. Such rows are peeled as the row loop
  // peels them (RowPlan::peeled): vector groups from the row's first aligned column, and the columns before it and
  // after the last whole group one per lane, in extra register slots. Only when every contiguous operand is in the
  // same phase, as for the row loop: a weight indexed by the column alone is not, and its misaligned vectors took
  // LayerNorm over 4099 bf16 columns from 125 to 215 VGPRs on gfx90a/gfx942 (2 waves per SIMD). Rows of fewer
  // than kMinPeeledGroups groups keep one element per access: their edges would be most of them.
  //
  // Operands indexed by the column alone are instead staged in shared memory (RowPlan::staged) where the rows
  // are written back: the grid is then capped and each block streams many rows, so it reads them from global
  // memory once and each row reads them from shared memory at its own columns, in the rows' phase, keeping no
  // registers for them between phases.
  if (plan.width == 1) {
    OddRows odd = odd_rows(p, k, base, row_length);
    std::vector<RowPlan::StagedOperand> staged;
    if (odd.width > 1 && !one_phase(odd, base) && may_stage && writes_rows(p, k)) {
      staged = column_operands(p, k, base);
      OddRows rows_only = odd;
      rows_only.starts.clear();
      for (size_t n = 0; n < odd.starts.size(); ++n)
        if (std::none_of(staged.begin(), staged.end(),
                         [&](const RowPlan::StagedOperand& s) { return s.buffer == odd.buffers[n]; }))
          rows_only.starts.push_back(odd.starts[n]);
      if (!staged.empty() && one_phase(rows_only, base)) odd = rows_only;
      else staged.clear();
    }
    if (odd.width > 1 && one_phase(odd, base) && *length >= kMinPeeledGroups * odd.width) {
      plan.peeled = true;
      plan.width = odd.width;
      plan.row_start = odd.starts[0];
      plan.staged = std::move(staged);
      plan.width_reason = "no vector width divides the row length " + row_length.str() +
                          ": rows peeled to their first " + std::to_string(odd.width) + "-aligned column";
    }
  }
  const int v = plan.width;
  plan.groups = simplify(floordiv(row_length, Index(v)), p.size_ranges);
  const int64_t groups = *length / v;
  const int warp = target.warp_size;
  plan.reads_only = !writes_rows(p, k);
  if (groups <= 4 * warp) {
    plan.threads = static_cast<int>(std::min<int64_t>(warp, pow2_at_least(groups)));
    plan.threads_reason = std::to_string(groups) + " groups per row: a warp (or part of one) per row, shuffles only";
  } else {
    // About 16 values per thread and operand; 32 (four 16-byte vectors) for 16-bit types in rows long enough to
    // keep 128 threads (4 warps) so; 8 for plain reductions, which are then shaped as Triton's (more threads per
    // row, one row per block over the whole grid, evict-first loads). On the H200, under do_bench's dirty L2: sum
    // over 16k x 4k f32 rows took 0.0678 ms shaped so (Inductor's: 0.0677), against 0.0711 with 16 values, the
    // capped grid and plain loads, and 0.0704-0.0717 with one or two of the three changes alone; LayerNorm over
    // 16k x 4k bf16 rows (bench/shapes/ln.cu) 0.0713 ms median with 32 values (128 threads) against 0.0736 with 16
    // (256 threads), a same-size copy 0.0679. Shorter 16-bit rows (2048: 64 threads at 32) are unmeasured.
    // Plain reductions keep at least two vector loads in flight per thread: 16-bit rows' 8 values are one 16-byte
    // load, and with one per thread the loads' latency, not the bandwidth, set the pace. bf16 rows of 4096 and of
    // 4099 (peeled) on the H200, one load -> two per thread: sum 0.0154 -> 0.0136 ms and 0.0224 -> 0.0141, mean
    // 0.0155 -> 0.0140, amax 0.0210 -> 0.0161, var 0.0203 -> 0.0154, all 0.0157 -> 0.0140. f32 rows had two already.
    const int values = plan.reads_only ? 8 : plan.width == 8 && groups >= 4 * 128 ? 32 : 16;
    const int target_groups = std::max(plan.reads_only ? 2 : 1, values / plan.width);
    plan.threads = static_cast<int>(std::min<int64_t>(kRowLoopThreads, pow2_at_least(ceil_div(groups, target_groups))));
    plan.threads_reason = "about " + std::to_string(target_groups * plan.width) + " values per thread" +
                          (plan.reads_only ? " (a plain reduction, shaped as Triton's, two vector loads at least)"
                           : values == 32  ? " (16-bit rows of at least 128 threads: LayerNorm bf16 0.0713 ms "
                                             "against 16 values' 0.0736 on the H200)"
                                           : "");
  }
  const int64_t groups_per_thread = ceil_div(groups, plan.threads);
  if (groups_per_thread * plan.width > kMaxRegisterValues) return std::nullopt;  // too long for registers
  plan.groups_per_thread = static_cast<int>(groups_per_thread);
  // A row that takes a whole 1024-thread block and more than 16 values per thread of it, and is written back (a
  // norm, softmax), leaves one block per SM/CU: at 1024 threads a thread has 64 registers (NVIDIA) and its load,
  // cached-value and store arrays take them or spill, so each SM loads a row, reduces it and stores it in turns,
  // its memory idle between. Such rows stream in row loops instead (two blocks per SM, each phase re-reading the
  // row from L2), as Inductor's looped reductions do: group norm over 8 x 56 x 56 groups (28 values per thread in
  // three arrays) ran 3x slower persistent than Inductor's two looped kernels on the H200, log_softmax over
  // 32000-wide rows (32 values) 1.3x.
  if (!plan.reads_only && plan.threads == kRowLoopThreads && plan.groups_per_thread * plan.width > kMaxBlockRowValues) {
    not_persistent = "rows of more than " + std::to_string(kMaxBlockRowValues) + " values per thread of a " +
                     std::to_string(kRowLoopThreads) + "-thread block, written back: one block per SM, loop them";
    return std::nullopt;
  }
  plan.form_reason = std::to_string(plan.groups_per_thread * plan.width) + " values per thread fit in registers";
  // Rows a warp or less long share blocks: of 64 threads where warps are 32 wide, since small blocks even out the
  // multiprocessors' last rows (on the H200, bf16 softmax over 32k x 1k rows, a warp each, spanned 33.7 us in blocks
  // of 2 rows against 34.4 in blocks of 8 and 34.1 in blocks of 4; Inductor's, one row per block: 34.1-34.3; RDNA's
  // wave32 unmeasured); of 256 (4 waves) on wave64 AMD GPUs, unmeasured there, where a CU holds a bounded number of
  // workgroups.
  const int block = warp == 32 ? 64 : 256;
  plan.rows_per_block = plan.threads <= warp ? std::max(1, block / plan.threads) : 1;
  if (!plan.staged.empty()) {
    // Staged operands take shared memory for the whole row (the variant's bound for a symbolic length) in every
    // block: within NVIDIA's static limit, and small enough that a multiprocessor still holds kResidentWarps
    // warps of such blocks; else the weights are not staged and the rows not peeled.
    int64_t bytes = kReductionShared;
    for (const RowPlan::StagedOperand& s : plan.staged) {
      const int64_t item = dtype_bytes(p.buffers[s.buffer].dtype);  // and a word of padding per 128 bytes
      bytes += (*length + (*length / (128 / item) + 1) * std::max<int64_t>(1, 4 / item)) * item;
    }
    const int64_t block_threads = int64_t{plan.threads} * plan.rows_per_block;
    const int64_t blocks = ceil_div(kResidentWarps * warp, block_threads);
    if (bytes > kMaxStaticShared || bytes * blocks > shared_per_multiprocessor(target))
      return persistent_rows(p, k, target, not_persistent, bound, false);
  }
  VarRanges ranges = base;
  ranges["cg"] = Range::loop(groups);
  ranges["j"] = Range::loop(plan.width);
  if (plan.peeled) {
    ranges["head"] = Range::loop(plan.width);
    ranges["cg"] = Range{-1, groups};  // a column before the head is in group -1, one after the last in group `groups`
  }
  std::vector<Expr> bodies;
  std::vector<Index> stores;
  lane_views(p, k, {{"col", persistent_column(plan)}}, ranges, bodies, stores);
  plan_row_registers(p, k, bodies, ranges, plan);
  plan.rows_reason = plan.threads <= warp ? "rows of a warp or less share blocks of " + std::to_string(block) +
                                                (warp == 32 ? " (small blocks even out the SMs' last rows)"
                                                            : " (4 waves: a CU holds a bounded number of workgroups)")
                                          : "one row per block";
  return plan;
}

/// A row loop's V, whether its rows are peeled (for a row length no vector width divides), and which of its
/// reductions are taken in one pass, found over the views the loop prints.
void plan_row_loop(const LoopProgram& p, const Kernel& k, RowPlan& rows) {
  const VarRanges base = kernel_var_ranges(p, k);
  const Index length = simplify(k.row_length, p.size_ranges);
  // A symbolic row length takes vector groups where V divides it for every value of the symbols, else is peeled as
  // a length no V divides: the head, the groups and the tail are found per row at run time, for any length.
  const int v = vector_width(p, k, base, "col", length, true);
  rows.width_reason = vector_width_reason(v, "col");
  // A row length that no vector width divides (GPT-2's 50257-entry vocabulary) leaves most rows starting off the
  // vector alignment. Such rows are peeled: the columns before the first aligned one (`head`, found per row from
  // the first contiguous operand) and the few after the last whole group go one per thread, the rest in vector
  // groups from there (vector accesses that check alignment at run time where the target needs it). Only when every
  // contiguous operand is in the same phase as the first: a weight indexed by the column alone is not, and its
  // misaligned groups, read element by element with lanes 16 bytes apart, made LayerNorm over 4096 x 50257 bf16
  // slower on the H200 (0.46 -> 0.55 ms) than unpeeled.
  if (v == 1) {
    if (const OddRows odd = odd_rows(p, k, base, length); odd.width > 1) {
      const int w = odd.width;
      if (one_phase(odd, base)) {
        VarRanges ranges = base;
        ranges["head"] = Range::loop(w);
        ranges["cg"] = group_range(length, w, p.size_ranges);
        ranges["j"] = Range::loop(w);
        std::vector<Expr> bodies;
        std::vector<Index> stores;
        lane_views(p, k, {{"col", Index::var("head") + Index::var("cg") * w + Index::var("j")}}, ranges, bodies,
                   stores);
        rows.peeled = true;
        rows.row_start = odd.starts[0];
        rows.width = w;
        rows.width_reason = "no vector width divides the row length " + length.str() +
                            ": rows peeled to their first " + std::to_string(w) + "-aligned column";
        rows.one_pass = one_pass_statistics(p, k, bodies);
        return;
      }
      rows.width_reason = "no vector width divides the row length, and its contiguous accesses are not in one "
                          "phase: not peeled";
    }
  }
  rows.width = v;
  VarRanges ranges = base;
  std::map<std::string, Index> lanes;
  if (v > 1) {
    ranges["cg"] = group_range(length, v, p.size_ranges);
    ranges["j"] = Range::loop(v);
    lanes["col"] = Index::var("cg") * v + Index::var("j");
  }
  std::vector<Expr> bodies;
  std::vector<Index> stores;
  lane_views(p, k, lanes, ranges, bodies, stores);
  rows.one_pass = one_pass_statistics(p, k, bodies);
}

/// TY for row slices over `outputs` outputs of a `block`-thread column kernel; 1 when one thread per output fills
/// the GPU.
int column_slices(const LoopProgram& p, const Kernel& k, int64_t outputs, int block) {
  // Row slices per block so that about kMinColumnThreads threads run, while a warp still spans TX >= 32 (or all)
  // consecutive outputs; each slice keeps a few rows.
  const int64_t min_tx = std::min<int64_t>(32, pow2_at_least(outputs));
  const int64_t wanted = pow2_at_least(ceil_div(kMinColumnThreads, outputs));
  int ty = static_cast<int>(std::min<int64_t>(wanted, block / min_tx));
  if (auto len = simplify(k.row_length, p.size_ranges).as_const())
    while (ty > 1 && *len < 4 * ty) ty /= 2;
  return std::max(1, ty);
}

/// Bytes of one accumulator of the reduction `body` in shared memory: floats for 16-bit values, and for argmax /
/// argmin a {value, position} pair padded to twice its wider member.
int64_t accumulator_bytes(const Expr& body, bool positions32) {
  const int64_t value = std::max<int64_t>(4, dtype_bytes(body->args[0]->dtype));
  if (!is_arg_reduction(body->reduce_op())) return value;
  return 2 * std::max<int64_t>(value, positions32 ? 4 : 8);
}

/// TX x TY for vector row slices over `groups` groups of V outputs; TY = 1 where they do not apply (more than one
/// reduction, groups enough to fill the GPU, rows too short to slice). Arg reductions slice as any other: their
/// combine selects by a total order, so the slices may meet in any grouping; a max with its argmax
/// (KernelPlan::extreme_pairs) is one reduction of pairs, a variance's sums (KernelPlan::welford_pairs) one of
/// Welford accumulators.
struct VectorSlices {
  int tx = 1, ty = 1;
  int unroll = kColumnUnroll;  ///< reduced steps per thread in flight
  std::string unroll_reason;
};
/// The reductions of column kernel `k` (the rest are pointwise epilogues).
size_t column_reductions(const LoopProgram& p, const Kernel& k) {
  return std::count_if(k.computations.begin(), k.computations.end(),
                       [&](int c) { return p.computations[c].is_reduction(); });
}

VectorSlices column_vector_slices(const LoopProgram& p, const Kernel& k, const Target& target,
                                  const KernelPlan& plan, int64_t groups, int v) {
  const size_t shared = plan.extreme_pairs.size() + plan.welford_pairs.size();
  if (column_reductions(p, k) != 1 + shared || shared > 1 || groups >= kVectorSliceGroups) return {};
  const Computation& c =
      p.computations[k.computations[plan.extreme_pairs.empty() ? 0 : plan.extreme_pairs.begin()->second]];
  auto len = simplify(k.row_length, p.size_ranges).as_const();
  if (!len) return {};
  // TY for TX groups side by side: slices up to a 1024-thread block, each keeping at least 4 rows; `wanted` is TY
  // before shared memory bounds it. A Welford accumulator is three values of the sum's type.
  const int64_t acc_bytes =
      plan.welford_pairs.empty() ? accumulator_bytes(c.body, plan.positions32) : 3 * accumulator_bytes(c.body, false);
  auto slices = [&](int tx, int* wanted = nullptr) {
    int ty = static_cast<int>(std::min<int64_t>(1024 / tx, pow2_at_least(ceil_div(kVectorSliceThreads, groups))));
    while (ty > 1 && *len < 4 * ty) ty /= 2;
    if (wanted) *wanted = ty;
    while (ty > 1 && ty * tx * v * acc_bytes > kVectorSliceSharedBytes) ty /= 2;
    return ty;
  };
  // 64 groups side by side (a warp reads 32 x 16 contiguous bytes of a row), down to 8 (a 128-byte line per row)
  // while that leaves fewer than kVectorSliceBlocks blocks and blocks of at least two warps (x[2048,4096].sum(0),
  // unsplit: 1024 groups, 128 blocks of 8 x 128).
  const int min_block = std::max(64, 2 * target.warp_size);
  int tx = static_cast<int>(std::min<int64_t>(64, pow2_at_least(groups)));
  while (tx > 8 && ceil_div(groups, tx) < kVectorSliceBlocks && tx / 2 * slices(tx / 2) >= min_block) tx /= 2;
  VectorSlices out;
  int wanted = 1;
  out.tx = tx;
  out.ty = slices(tx, &wanted);
  // Fewer slices than wanted (wide accumulators: Welford's three values, argmax pairs) leave fewer threads, each
  // streaming more rows: they unroll more of them, so that an SM keeps about the bytes in flight that the wanted
  // slices would (variance over bf16 columns: 8 of 32 slices, 16 warps per H200 SM of 4 x 16 bytes in flight per
  // thread, about the 32 KB a full SM's share of the copy bandwidth needs over a DRAM latency; 8 rows in flight
  // double that). Not more: a thread's load registers grow with it. Only where waves are 32 wide: the wave64
  // targets are unmeasured, and their budget for 4 waves per SIMD (128 VGPRs per lane) is the tighter.
  if (out.ty < wanted && target.warp_size == 32) {
    out.unroll = std::min(kMaxColumnUnroll, kColumnUnroll * (wanted / out.ty));
    out.unroll_reason = std::to_string(out.ty) + " of " + std::to_string(wanted) +
                        " wanted row slices (shared memory): more rows per thread in flight";
  }
  return out;
}

/// The row length bounds of a symbolic row length's persistent variants, each planned as a row of that length and
/// run for lengths above the bound before it: a factor of 2 apart, so a row keeps at least half of the lanes its
/// variant plans busy. (A factor of 4 ran rows of 8192 f32 columns on the 16384 plan, 1024 threads of which half
/// idle, at half the rows per SM of the static 512-thread plan.) The last, 16384, is 1024 threads x 16 values (f32
/// rows in registers at the values per thread persistent_rows aims for). Longer rows take the row loop.
constexpr int64_t kSymbolicRowBounds[] = {1024, 2048, 4096, 8192, 16384};

/// 1 where lo < x <= hi, else 0 (x >= 1, a size), as an index expression: a variant's grid times this launches it
/// only for those values (GraphRunner launches nothing for a grid of 0).
Index within(const Index& x, int64_t lo, std::optional<int64_t> hi, const VarRanges& ranges) {
  Index above = min(Index(1), max(Index(0), x - Index(lo)));
  Index below = hi ? min(Index(1), max(Index(0), Index(*hi + 1) - x)) : Index(1);
  return simplify(above * below, ranges);
}

}  // namespace

std::vector<ShapeVariant> row_variants(const LoopProgram& p, const Kernel& k, const Target& target) {
  const Index length = simplify(k.row_length, p.size_ranges);
  std::vector<ShapeVariant> out;
  if (length.is_const()) return out;
  int64_t lo = 0;
  for (int64_t bound : kSymbolicRowBounds) {
    ShapeVariant v;
    if (!plan_persistent_rows(p, k, target, v.plan, bound)) continue;
    v.planned = true;
    v.suffix = "_upto" + std::to_string(bound);
    v.selected = within(length, lo, bound, p.size_ranges);
    v.why = "runs where " + std::to_string(lo) + " < " + length.str() + " <= " + std::to_string(bound) +
            " (persistent rows planned for " + std::to_string(bound) + " columns)";
    out.push_back(std::move(v));
    lo = bound;
  }
  if (out.empty()) return out;
  ShapeVariant loop;  // the kernel's own plan: the row loop
  loop.selected = within(length, lo, std::nullopt, p.size_ranges);
  loop.why = "runs where " + length.str() + " > " + std::to_string(lo) + " (rows longer than the persistent variants)";
  out.push_back(std::move(loop));
  return out;
}

std::vector<ShapeVariant> column_variants(const LoopProgram& p, const Kernel& k, const Target& target) {
  const Index outputs = simplify(k.numel, p.size_ranges);
  std::vector<ShapeVariant> out;
  if (outputs.is_const()) return out;
  for (int ci : k.computations)
    if (p.computations[ci].is_reduction() && is_arg_reduction(p.computations[ci].body->reduce_op()))
      return out;  // pairs keep one output per thread
  // Few outputs leave one thread per output (group) too few to fill the GPU (x[16384, n].sum(0)): those counts
  // take row slices of a 1024-thread block, as the static plans do below the same counts. A single reduction whose
  // output count V divides for every value (a promised divisor) takes vector row slices of TX = 8 groups (a 128-byte
  // line per row for f32) x TY = 128 slices, the shape the static plan picks for x[16384, 4096].sum(0), whose shared
  // memory (TY x TX x V accumulators of at most 8 bytes x 16 bytes / V) fits kVectorSliceSharedBytes for every
  // dtype; others take TX = 32 consecutive outputs (a warp's loads coalesce) x TY = 32 slices, so that even a few
  // outputs keep 32 threads each streaming their rows.
  const int v = vector_width(p, k, kernel_var_ranges(p, k), "i", outputs, true, VectorRule::Loads);
  const bool vector = v > 1 && column_reductions(p, k) == 1;
  const int64_t few = vector ? v * kVectorSliceGroups : kMinColumnThreads;
  ShapeVariant slices;
  slices.planned = true;
  slices.suffix = "_slices";
  KernelPlan& plan = slices.plan;
  ColumnPlan cols;
  cols.form = vector ? ColumnPlan::Form::VectorRowSlices : ColumnPlan::Form::RowSlices;
  cols.form_reason = "an output count below " + std::to_string(few) +
                     ", too few for a thread each: row slices met in shared memory";
  cols.width = vector ? v : 1;
  cols.width_reason =
      vector ? vector_width_reason(v, "i", VectorRule::Loads) : "a symbolic output count: one output per lane";
  cols.slices_x = vector ? 8 : 32;
  cols.slices_y = vector ? 128 : 32;
  plan.block = cols.slices_x * cols.slices_y;
  plan.block_reason = std::to_string(cols.slices_x) + (vector ? " output groups x " : " outputs x ") +
                      std::to_string(cols.slices_y) + " row slices";
  const Index lanes = simplify(floordiv(outputs, Index(cols.width)), p.size_ranges);
  plan.grid = simplify(floordiv(lanes + Index(cols.slices_x - 1), Index(cols.slices_x)), p.size_ranges);
  plan.grid_reason = "blocks stream many outputs each";
  plan.needs_sync = true;
  plan.shape = std::move(cols);
  slices.selected = within(outputs, 0, few - 1, p.size_ranges);
  slices.why = "runs where " + outputs.str() + " < " + std::to_string(few);
  out.push_back(std::move(slices));
  ShapeVariant own;
  own.selected = within(outputs, few - 1, std::nullopt, p.size_ranges);
  own.why = "runs where " + outputs.str() + " >= " + std::to_string(few);
  out.push_back(std::move(own));
  return out;
}

bool plan_persistent_rows(const LoopProgram& p, const Kernel& k, const Target& target, KernelPlan& plan,
                          std::optional<int64_t> bound, std::string* not_persistent) {
  std::string why;
  std::optional<RowPlan> rows = persistent_rows(p, k, target, why, bound);
  if (!rows) {
    if (not_persistent) *not_persistent = why;
    return false;
  }
  plan.needs_sync = true;
  plan.reciprocal_divisors = reciprocal_divisors(p, k);
  plan.whole_grid = rows->reads_only;
  plan.grid_reason = rows->reads_only ? "a plain reduction, shaped as Triton's" : "blocks stream many rows each";
  plan.block = rows->threads * rows->rows_per_block;
  plan.block_reason = std::to_string(rows->rows_per_block) + " row(s) x " + std::to_string(rows->threads) +
                      " threads";
  plan.grid = simplify(floordiv(k.numel + (rows->rows_per_block - 1), Index(rows->rows_per_block)), p.size_ranges);
  plan.shape = std::move(*rows);
  return true;
}

bool plan_rows(const LoopProgram& p, const Kernel& k, const Target& target, KernelPlan& plan) {
  std::string not_persistent;
  if (plan_persistent_rows(p, k, target, plan, std::nullopt, &not_persistent)) return true;
  plan.needs_sync = true;
  plan.reciprocal_divisors = reciprocal_divisors(p, k);
  RowPlan rows;
  rows.form = RowPlan::Form::Looped;
  auto len = simplify(k.row_length, p.size_ranges).as_const();
  rows.form_reason = !not_persistent.empty() ? not_persistent
                     : len                    ? "rows too long for registers"
                                              : "row length unknown at compile time";
  int want = len ? static_cast<int>(std::min<int64_t>(*len, kRowLoopThreads)) : kMaxBlock;
  plan.block = std::max(target.warp_size, (want + target.warp_size - 1) / target.warp_size * target.warp_size);
  rows.threads = plan.block;
  rows.threads_reason = len ? "one block per row: up to 1024 threads, whole warps" : "one block per row of 256 threads";
  plan.block_reason = "one row per block";
  plan.grid = k.numel;
  plan.grid_reason = "blocks stream many rows each";
  plan_row_loop(p, k, rows);
  plan.shape = std::move(rows);
  return false;
}

void plan_columns(const LoopProgram& p, const Kernel& k, const Target& target, KernelPlan& plan) {
  ColumnPlan cols;
  plan.block = kMaxBlock;
  plan.block_reason = "256 threads";
  plan.grid_reason = "blocks stream many outputs or rows each";
  auto n = simplify(k.numel, p.size_ranges).as_const();
  // A single reduction over too few vector groups slices rows across a block with its vector loads. Otherwise the
  // vector width holds only while enough threads remain to fill a GPU (one thread per output group), and fewer
  // outputs than that take scalar row slices. Long columns with few outputs are also split into two reductions
  // before this (split_reductions). A symbolic output count takes the V that divides it for every value (a promised
  // divisor), one group per thread: few outputs are column_variants' row slices.
  // V is bounded by the loads alone: a thread's V values of each load are one access of 16 bytes at most, so that a
  // warp's loads fill every 32-byte sector they touch. A column's one store comes a column's worth of loads later:
  // any(f32 -> bool) over dim 1 of [64, 4096, 64] read 32 bytes per lane (V 8 for its bool stores), two accesses
  // to half of each sector: 0.0335 ms in the H200 sweep, where amax over the same input (f32 stores, V 4) took
  // 0.0265.
  int v =
      vector_width(p, k, kernel_var_ranges(p, k), "i", simplify(k.numel, p.size_ranges), true, VectorRule::Loads);
  cols.width_reason = vector_width_reason(v, "i", VectorRule::Loads);
  if (v > 1 && n) {
    if (const VectorSlices s = column_vector_slices(p, k, target, plan, *n / v, v); s.ty > 1) {
      const int tx = s.tx, ty = s.ty;
      cols.form = ColumnPlan::Form::VectorRowSlices;
      cols.form_reason = "a single reduction over " + std::to_string(*n / v) +
                         " output groups, too few to fill the GPU: rows sliced across the block";
      cols.width = v;
      cols.slices_x = tx;
      cols.slices_y = ty;
      cols.unroll = s.unroll;
      cols.unroll_reason = s.unroll_reason;
      plan.block = tx * ty;
      plan.block_reason = std::to_string(tx) + " output groups x " + std::to_string(ty) + " row slices";
      plan.grid = Index(ceil_div(*n / v, tx));
      plan.needs_sync = true;
      plan.shape = std::move(cols);
      return;
    }
  }
  if (v > 1 && n && *n / v < kMinColumnThreads) {
    while (v > 1 && *n / v < kMinColumnThreads) v /= 2;
    cols.width_reason = "narrowed to keep 32768 threads (one per output group)";
  }
  cols.width = v;
  plan.grid = floordiv(k.numel + (v * plan.block - 1), Index(v * plan.block));
  if (int ty = n && v == 1 ? column_slices(p, k, *n, plan.block) : 1; ty > 1) {
    cols.form = ColumnPlan::Form::RowSlices;
    cols.form_reason = std::to_string(*n) + " outputs, too few for a thread each: row slices met in shared memory";
    cols.slices_y = ty;
    cols.slices_x = plan.block / ty;
    plan.block_reason = std::to_string(cols.slices_x) + " outputs x " + std::to_string(ty) + " row slices";
    plan.grid = Index(ceil_div(*n, cols.slices_x));
    plan.needs_sync = true;
    plan.shape = std::move(cols);
    return;
  }
  cols.form = ColumnPlan::Form::OutputsPerThread;
  cols.form_reason = v > 1 ? std::to_string(v) + " neighbouring outputs per thread" : "one output per thread";
  plan.shape = std::move(cols);
}

Range group_range(const Index& extent, int v, const VarRanges& ranges) {
  const Range r = bounds(extent, ranges);
  return r.hi ? Range::loop(*r.hi / v) : Range{0, std::nullopt};
}

namespace {

/// Bytes a row kernel's lane moves of one stream per vector group, at most: two 16-byte chunks (vector_width).
constexpr int kRowChunkBytes = 32;

/// The widest element of the accesses whose address moves with `var`, in bytes (0 when none does).
int widest_bytes_along(const std::vector<std::pair<Index, DType>>& accesses, const std::string& var) {
  int widest = 0;
  for (const auto& a : accesses) {
    const std::vector<std::string> vars = free_vars(a.first);
    if (std::find(vars.begin(), vars.end(), var) != vars.end())
      widest = std::max(widest, static_cast<int>(dtype_bytes(a.second)));
  }
  return widest;
}

}  // namespace

int vector_width(const LoopProgram& p, const Kernel& k, const VarRanges& ranges, const std::string& var,
                 const Index& extent, bool divisible, VectorRule rule) {
  const bool loads_bound = rule == VectorRule::Loads;
  const bool one_chunk_per_stream = rule == VectorRule::OneChunkPerStream;
  std::vector<std::pair<Index, DType>> all = kernel_accesses(p, k, ranges);
  std::vector<std::pair<Index, DType>> loads = loads_bound ? kernel_accesses(p, k, ranges, false) : all;
  // The narrowest of all accesses, a row reduction's per-row output included: all() over f32 rows (one bool per row)
  // takes 8 lanes, two 16-byte loads per lane. Bounded by the accesses along the row alone (4 lanes), all() over
  // 4093 x 4099 f32 rows took 0.0290 ms on the H200 against 0.0218 with 8 (the perf sweep, 4096 wide rows unchanged).
  // But no lane moves more than two 16-byte chunks of any stream along `var` (row_chunk_bytes): the bf16 sum of
  // gathered values over rows of 1024 int64 indices took 8 lanes from its bf16 output, 64 bytes of indices per lane
  // and a quarter of the threads per row, 0.0415 ms on the H200 against 0.0266 with 4 lanes (32 bytes); all(),
  // any() and amax over 4093 x 4099 f32 rows and cross-entropy's rows kept their times (within 2 %).
  const int widest_along = widest_bytes_along(all, var);
  const Range span = bounds(extent, ranges);
  int best = 1, best_score = 0;
  for (int v = std::min(8, 16 / narrowest_bytes(loads.empty() ? all : loads)); v >= 2; v /= 2) {
    if (rule == VectorRule::Operands && v * widest_along > kRowChunkBytes) continue;
    // A symbolic extent qualifies when V divides it for every value (s0*16 for V up to 16), and may be below V only
    // where its range allows.
    if (span.hi && *span.hi < v) continue;
    if (divisible && simplify(mod(extent, Index(v)), ranges) != Index(0)) continue;
    VarRanges r = ranges;
    r["g"] = group_range(extent, v, ranges);
    r["j"] = Range::loop(v);
    std::map<std::string, Index> lanes{{var, Index::var("g") * v + Index::var("j")}};
    int score = 0, widest = 0, narrowest = 16;
    for (const auto& a : all)
      if (classify_lanes(simplify(substitute(a.first, lanes), r), "j", r) == LaneAccess::Contiguous) {
        ++score;
        widest = std::max(widest, static_cast<int>(dtype_bytes(a.second)));
        narrowest = std::min(narrowest, static_cast<int>(dtype_bytes(a.second)));
      }
    // A group wider than 16 bytes of a stream is moved as several 16-byte chunks per thread, each instruction's
    // chunks strided across the wave (half of every sector it touches for two chunks), where half the lanes give
    // every stream one whole chunk per thread, coalesced; narrower only while the narrowest stream keeps accesses
    // of at least 4 bytes (a bool mask beside f32 takes 4 lanes: 4-byte mask and 16-byte f32 accesses).
    if (one_chunk_per_stream && score && v * widest > 16 && (v / 2) * narrowest >= 4) continue;
    if (score > best_score) {
      best = v;
      best_score = score;
    }
  }
  return best;
}

Index persistent_column(const RowPlan& plan) {
  const Index col = Index::var("cg") * plan.width + Index::var("j");
  return plan.peeled ? Index::var("head") + col : col;
}

std::string vector_width_reason(int v, const std::string& var, VectorRule rule) {
  if (v == 1) return "no vector width makes an access contiguous along " + var;
  if (rule == VectorRule::OneChunkPerStream)
    return "the widest of 8/4/2 lanes with the most accesses contiguous along " + var +
           ", each contiguous stream's group in one access of at most 16 bytes where the narrowest keeps 4";
  if (rule == VectorRule::Loads)
    return "the widest of 8/4/2 lanes (16 bytes of the narrowest load at most) with the most accesses contiguous "
           "along " + var;
  return "the widest of 8/4/2 lanes (16 bytes of the narrowest operand, 32 of the widest stream along " + var +
         " at most) with the most accesses contiguous along " + var;
}

}  // namespace hi::codegen_detail
