#include "lowering/fuse_kernels.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <set>

#include "ir/moments.h"

namespace hi {
namespace {

/// Operations one kernel may hold. Compilers (the host's, HIPRTC's and NVRTC's LLVM) take time superlinear in a
/// function's size, so a chain of thousands of fused computations as one kernel compiled for minutes; with kernels
/// of bounded size the compile time grows with their number, and the one store and load between two of them is
/// little next to the work they hold. Normal graphs' kernels hold far fewer operations.
constexpr int kMaxKernelOps = 1024;

class KernelFusion {
 public:
  explicit KernelFusion(LoopProgram& p) : p_(p) {}

  void run() {
    p_.kernels.clear();
    kernel_ops_.clear();
    kernel_of_.assign(p_.computations.size(), -1);
    // LoopProgram::producer searches the computations; asked per load of every placement, that was quadratic. The
    // last writer counts: readers of a buffer that scatters add to must follow the scatters.
    producer_.assign(p_.buffers.size(), -1);
    for (int c = 0; c < static_cast<int>(p_.computations.size()); ++c) producer_[p_.computations[c].buffer] = c;
    ops_.clear();
    for (const Computation& c : p_.computations) ops_.push_back(op_count(c.body));
    for (int c = 0; c < static_cast<int>(p_.computations.size()); ++c) place(c);
    share_corrected_means();
    mark_local_buffers();
    order_pointwise_loops();
    name_kernels();
  }

 private:
  /// Joins the latest kernel `c` fits, searching back from the last one but not past a kernel it reads from (that
  /// kernel must run first): a value stored by another kernel in between no longer splits a chain (BERT's first
  /// layer: the softmax's epilogue after the attention mask's own output ran as a kernel of its own, re-reading the
  /// scores, 26 + 71 us on the H200 against the 51 of the later layers' single kernel).
  void place(int c) {
    const Computation& comp = p_.computations[c];
    const std::set<int> sources = kernels_read_by(c);
    for (int k = static_cast<int>(p_.kernels.size()) - 1; k >= 0; --k) {
      if (can_join(k, c)) {
        p_.kernels[k].computations.push_back(c);
        kernel_of_[c] = k;
        kernel_ops_[k] += ops_[c];
        return;
      }
      if (sources.count(k)) break;
    }
    Kernel k;
    if (comp.is_scatter()) {
      // Atomic adds to addresses known only at run time: a kernel of its own, after the one filling its buffer.
      k.kind = KernelKind::Scatter;
      k.numel = comp.numel();
    } else if (comp.is_scan()) {
      // A scan's lines have their own shape (codegen/plan_scans.cpp): a kernel of its own, its prologue inlined in its body.
      k.kind = KernelKind::Scan;
      k.numel = simplify(floordiv(comp.numel(), comp.reduce_numel()), p_.size_ranges);
      k.row_length = comp.reduce_numel();
    } else if (!comp.is_reduction()) {
      k.kind = KernelKind::Pointwise;
      k.numel = comp.numel();
    } else {
      k.kind = is_row_major_inner_reduction(p_, comp) ? KernelKind::RowReduction : KernelKind::ColumnReduction;
      k.numel = comp.numel();
      k.row_length = comp.reduce_numel();
    }
    k.computations.push_back(c);
    p_.kernels.push_back(std::move(k));
    kernel_of_[c] = static_cast<int>(p_.kernels.size()) - 1;
    kernel_ops_.push_back(ops_[c]);
  }

  /// A row kernel that takes a variance's two sums over elements (ir/moments.h) corrects the mean sum / N from the
  /// deviations' own sum, or takes Welford's (codegen's deviations_mean): exact for a row of equal values, as
  /// PyTorch's statistics are, and every read of sum / N inside the kernel gets that value. A kernel elsewhere that
  /// reads sum / N (a second normalisation of the same input, whose kernel holds statistics of its own) would read the
  /// plain quotient, an ulp off where the row's rstd amplifies it (1e-5 for LayerNorm's exact 0 over an expanded
  /// input). The row kernel then also stores its mean, one float per row, and those reads load it.
  void share_corrected_means() {
    for (size_t k = 0; k < p_.kernels.size(); ++k) {
      const Kernel& kernel = p_.kernels[k];
      if (kernel.kind != KernelKind::RowReduction || kernel.row_length.is_const(1)) continue;
      const size_t count = kernel.computations.size();
      std::vector<Expr> means(count + 1);
      for (size_t n = 1; n < count; ++n) means[n] = corrected_mean(kernel, n);
      // A squared-deviation sum that is itself the first sum of the next pair keeps that pair adjacent. Each mean
      // shared adds a computation after its pair, moving the later ones by one.
      size_t added = 0;
      for (size_t n = 1; n < count; ++n)
        if (means[n].defined() && !means[n + 1].defined())
          added += share_mean(static_cast<int>(k), n + added, means[n]);
    }
  }

  /// The mean sum / N whose deviations the n-th computation of row kernel `k` sums, the (n-1)-th summing the
  /// elements, read at the row's own element; null when the two are not such a pair.
  Expr corrected_mean(const Kernel& k, size_t n) const {
    const Computation& sum = p_.computations[k.computations[n - 1]];
    const Computation& sq = p_.computations[k.computations[n]];
    if (!sum.is_reduction() || !sq.is_reduction() || sum.sizes != sq.sizes) return Expr();
    const std::optional<WelfordStep> step =
        float_element_step(sum.body, sum.buffer, sq.body, simplify(k.row_length, p_.size_ranges));
    if (!step) return Expr();
    const Expr& mean = step->mean;
    const VarRanges ranges = kernel_var_ranges(p_, k);
    const Index own = simplify(substitute(Computation::store_index(p_.buffers[sum.buffer]), kernel_var_map(sum, k)),
                               ranges);
    return simplify(substitute(mean->args[0]->index, kernel_var_map(sq, k)), ranges) == own ? mean : Expr();
  }

  /// Whether computation `c` sums squared deviations (of elements, or of pieces' partial sums) about the mean of the
  /// sum computed just before it: a variance's pair (ir/moments.h).
  bool second_of_variance_pair(int c) const {
    if (c == 0) return false;
    const Computation& sum = p_.computations[c - 1];
    const Computation& sq = p_.computations[c];
    if (!sum.is_reduction() || !sq.is_reduction() || sum.is_scan() || sq.is_scan()) return false;
    return welford_step_over(sum.body, sum.buffer, sq.body, simplify(sq.reduce_numel(), p_.size_ranges)).has_value();
  }

  /// Adds the pointwise computation of `mean` after the n-th computation of kernel `k` (a row epilogue: one value per
  /// row) when later computations of other kernels read the same quotient, and points those reads at its buffer;
  /// whether it did.
  bool share_mean(int k, size_t n, const Expr& mean) {
    const int sq = p_.kernels[k].computations[n];
    const int sum_buffer = mean->args[0]->buffer;
    auto is_mean = [&](const Expr& e) {
      return e->op == ExprOp::Binary && e->binary_op() == BinaryOp::Div && e->dtype == mean->dtype &&
             e->args[0]->op == ExprOp::Load && e->args[0]->buffer == sum_buffer && e->args[0]->args.empty() &&
             e->args[1] == mean->args[1];
    };
    std::vector<int> readers;
    for (int c = sq + 1; c < static_cast<int>(p_.computations.size()); ++c) {
      // A split variance's merge reads each piece's sum / N as that piece's mean, which is how ir/moments.h
      // recognises the merge (Chan's): the second sum of a variance pair keeps its reads.
      if (kernel_of_[c] == k || second_of_variance_pair(c)) continue;
      bool reads = false;
      visit_computation(p_.computations[c], [&](const Expr& e) { reads = reads || is_mean(e); });
      if (reads) readers.push_back(c);
    }
    if (readers.empty()) return false;

    Buffer b = p_.buffers[sum_buffer];
    b.name = "buf" + std::to_string(first_free_buffer_number(p_));
    b.dtype = mean->dtype;
    b.kind = BufferKind::Intermediate;
    b.io_position = -1;
    const int buffer = static_cast<int>(p_.buffers.size());
    p_.buffers.push_back(b);
    auto load_mean = [&](const Expr& e) -> std::optional<Expr> {
      if (!is_mean(e)) return std::nullopt;
      return Expr::load(buffer, e->args[0]->index, mean->dtype);
    };
    for (int c : readers) {
      Computation& reader = p_.computations[c];
      reader.body = rewrite(reader.body, load_mean);
      if (reader.scatter_target.defined()) reader.scatter_target = rewrite(reader.scatter_target, load_mean);
    }

    Computation m;
    m.name = b.name;
    m.buffer = buffer;
    m.sizes = p_.computations[sq].sizes;
    m.body = mean;
    m.origins = p_.computations[sq].origins;
    m.op_names = p_.computations[sq].op_names;
    const int at = sq + 1;
    p_.computations.insert(p_.computations.begin() + at, std::move(m));
    for (Kernel& kernel : p_.kernels)
      for (int& c : kernel.computations)
        if (c >= at) ++c;
    std::vector<int>& held = p_.kernels[k].computations;
    held.insert(held.begin() + static_cast<std::ptrdiff_t>(n) + 1, at);
    kernel_of_.insert(kernel_of_.begin() + at, k);
    ops_.insert(ops_.begin() + at, op_count(mean));
    kernel_ops_[k] += ops_[at];
    producer_.assign(p_.buffers.size(), -1);
    for (int c = 0; c < static_cast<int>(p_.computations.size()); ++c) producer_[p_.computations[c].buffer] = c;
    return true;
  }

  /// The kernels holding a producer of a buffer computation `c` loads.
  std::set<int> kernels_read_by(int c) const {
    std::set<int> kernels;
    visit_computation(p_.computations[c], [&](const Expr& e) {
      if (e->op != ExprOp::Load) return;
      int prod = producer_[e->buffer];
      if (prod >= 0 && kernel_of_[prod] >= 0) kernels.insert(kernel_of_[prod]);
    });
    return kernels;
  }

  bool can_join(int k_index, int c) const {
    const Kernel& k = p_.kernels[k_index];
    const Computation& comp = p_.computations[c];
    if (comp.is_scan() || comp.is_scatter()) return false;
    if (kernel_ops_[k_index] + ops_[c] > kMaxKernelOps) return false;
    switch (k.kind) {
      case KernelKind::Scan: return false;
      case KernelKind::Scatter: return false;
      case KernelKind::Pointwise:
        if (comp.is_reduction() || comp.numel() != k.numel) return false;
        break;
      case KernelKind::RowReduction:
        if (comp.is_reduction()) {
          if (comp.numel() != k.numel || comp.reduce_numel() != k.row_length) return false;
          if (!is_row_major_inner_reduction(p_, comp)) return false;
        } else if (comp.numel() != simplify(k.numel * k.row_length, p_.size_ranges) && !is_row_epilogue(comp, k)) {
          return false;
        }
        break;
      case KernelKind::ColumnReduction:
        if (!extreme_pair(k, comp) && !welford_pair(k, comp) && !column_epilogue(k_index, c)) return false;
        break;
    }
    return reads_are_thread_local(k_index, comp);
  }

  /// Whether `comp` is a pointwise epilogue of column kernel `k_index`: one value per output, reading what the kernel
  /// computes (mean's division, a cast of a 16-bit sum, an activation). The kernel's threads hold each output's
  /// result in registers, so the epilogue costs no launch and no round trip through memory (bf16 sum over dim 1 of
  /// [64, 4096, 64]: three kernels, the last a cast, at 0.75x eager's speed on the H200).
  bool column_epilogue(int k_index, int c) const {
    const Computation& comp = p_.computations[c];
    if (comp.is_reduction() || comp.numel() != p_.kernels[k_index].numel) return false;
    return kernels_read_by(c).count(k_index) > 0;
  }

  /// Whether column kernel `k` is a lone max (min) of the very values argmax (argmin) `comp` reduces, over the same
  /// domain (torch.max(x, 0), split arg reductions' first stage): the two then share one {value, position}
  /// accumulator (codegen's KernelPlan::extreme_pairs). Other column reductions keep kernels of their own.
  bool extreme_pair(const Kernel& k, const Computation& comp) const {
    if (k.computations.size() != 1 || !comp.is_reduction() || comp.body->op != ExprOp::Reduce) return false;
    const Computation& first = p_.computations[k.computations[0]];
    if (first.body->op != ExprOp::Reduce || first.sizes != comp.sizes || first.reduce_sizes != comp.reduce_sizes)
      return false;
    const ReduceOp a = first.body->reduce_op(), b = comp.body->reduce_op();
    const bool pair = (a == ReduceOp::Max && b == ReduceOp::ArgMax) || (a == ReduceOp::Min && b == ReduceOp::ArgMin);
    return pair && first.body->args[0] == comp.body->args[0];
  }

  /// Whether column kernel `k` is a lone sum whose values' squared deviations from its mean `comp` sums, over the
  /// same domain (a variance's two sums, ir/moments.h): one Welford accumulator then takes both in one pass over the
  /// data (codegen's KernelPlan::welford_pairs), where two kernels would read it twice.
  bool welford_pair(const Kernel& k, const Computation& comp) const {
    if (k.computations.size() != 1 || !comp.is_reduction()) return false;
    const Computation& first = p_.computations[k.computations[0]];
    if (!first.is_reduction() || first.sizes != comp.sizes || first.reduce_sizes != comp.reduce_sizes) return false;
    return welford_step(first.body, first.buffer, comp.body, simplify(comp.reduce_numel(), p_.size_ranges).as_const())
        .has_value();
  }

  /// Every load of a buffer produced inside kernel `k_index` must address what the reading thread itself produced.
  bool reads_are_thread_local(int k_index, const Computation& comp) const {
    const Kernel& k = p_.kernels[k_index];
    VarRanges ranges = kernel_var_ranges(p_, k);
    Expr body = substitute_vars(comp.body, kernel_var_map(comp, k), ranges);
    bool ok = true;
    visit(body, [&](const Expr& e) {
      if (!ok || e->op != ExprOp::Load) return;
      int prod = producer_[e->buffer];
      if (prod < 0 || kernel_of_[prod] != k_index) return;
      const Computation& pc = p_.computations[prod];
      Index written = simplify(substitute(Computation::store_index(p_.buffers[pc.buffer]),
                                          kernel_var_map(pc, k)),
                               ranges);
      if (written != e->index) ok = false;
      // In a row kernel, a reduction result or row epilogue is one value per row: read it at the reader's row.
      if ((pc.is_reduction() || is_row_epilogue(pc, k)) && k.kind == KernelKind::RowReduction)
        for (const std::string& v : free_vars(e->index))
          if (v == "col") ok = false;
      // A pointwise value in a row kernel is per (row, col); a reduction reading it reduces over col, fine.
    });
    return ok;
  }

  void mark_local_buffers() {
    std::vector<std::set<int>> readers(p_.buffers.size());
    for (size_t c = 0; c < p_.computations.size(); ++c)
      visit_computation(p_.computations[c], [&](const Expr& e) {
        if (e->op == ExprOp::Load) readers[e->buffer].insert(kernel_of_[c]);
      });
    for (size_t k = 0; k < p_.kernels.size(); ++k) {
      Kernel& kernel = p_.kernels[k];
      for (int c : kernel.computations) {
        int b = p_.computations[c].buffer;
        // A scatter adds to memory: what it adds to is never only a register.
        if (p_.buffers[b].kind != BufferKind::Intermediate || p_.computations[c].is_scatter()) continue;
        bool only_here = std::all_of(readers[b].begin(), readers[b].end(), [&](int r) { return r == int(k); });
        if (only_here) kernel.local_buffers.push_back(b);
      }
    }
  }

  /// A pointwise kernel whose stored buffers all lie in memory in another order than their logical dims (a
  /// transposed view's storage, e.g. q and k after rotary embedding, viewed (b, h, t, d) over (b, t, h, d)) walks its
  /// flat index in that memory order, as Inductor reorders loops: stores and loads laid out alike become contiguous
  /// and vectorize, without div/mod chains per access. Only when every computation has the same shape, so producer
  /// and reader in the kernel still share coordinates per thread.
  void order_pointwise_loops() {
    for (Kernel& k : p_.kernels) {
      if (k.kind != KernelKind::Pointwise) continue;
      const std::vector<Index>& sizes = p_.computations[k.computations[0]].sizes;
      if (sizes.size() < 2) continue;
      std::optional<std::vector<int>> order;
      bool agree = true;
      for (int c : k.computations) {
        const Computation& comp = p_.computations[c];
        if (comp.sizes != sizes) agree = false;
        if (!agree) break;
        if (std::find(k.local_buffers.begin(), k.local_buffers.end(), comp.buffer) != k.local_buffers.end()) continue;
        std::optional<std::vector<int>> mine = memory_order(p_.buffers[comp.buffer], sizes);
        if (!mine || (order && *order != *mine)) agree = false;
        else order = mine;
      }
      if (!agree || !order) continue;
      std::vector<int> row_major(sizes.size());
      for (size_t d = 0; d < sizes.size(); ++d) row_major[d] = static_cast<int>(d);
      if (*order != row_major) k.loop_order = *order;
    }
  }

  /// The dims of a buffer of shape `sizes` by decreasing stride (dims of size 1 last, in place), or nullopt when
  /// a stride is not a constant or the buffer's shape differs.
  std::optional<std::vector<int>> memory_order(const Buffer& b, const std::vector<Index>& sizes) const {
    if (b.sizes != sizes || b.strides.size() != sizes.size()) return std::nullopt;
    std::vector<int> dims, unit;
    std::vector<int64_t> strides(sizes.size());
    for (size_t d = 0; d < sizes.size(); ++d) {
      auto st = simplify(b.strides[d], p_.size_ranges).as_const();
      if (!st) return std::nullopt;
      strides[d] = *st;
      (sizes[d].is_const(1) ? unit : dims).push_back(static_cast<int>(d));
    }
    std::vector<int> row_major = dims;  // the non-unit dims in order
    std::stable_sort(dims.begin(), dims.end(), [&](int a, int c) { return strides[a] > strides[c]; });
    // Unit dims sit anywhere in row-major order too: only the non-unit dims' order counts.
    if (dims == row_major) {
      std::vector<int> identity(sizes.size());
      std::iota(identity.begin(), identity.end(), 0);
      return identity;
    }
    for (int d : unit) dims.push_back(d);
    return dims;
  }

  void name_kernels() {
    for (size_t k = 0; k < p_.kernels.size(); ++k) {
      std::vector<std::string> ops;
      for (int c : p_.kernels[k].computations)
        for (const auto& op : p_.computations[c].op_names)
          if (std::find(ops.begin(), ops.end(), op) == ops.end()) ops.push_back(op);
      std::string name = "fused";
      const size_t max_ops = 6;
      for (size_t i = 0; i < ops.size() && i < max_ops; ++i) name += "_" + ops[i];
      if (ops.size() > max_ops) name += "_etc";
      p_.kernels[k].name = name + "_" + std::to_string(k);
    }
  }

  LoopProgram& p_;
  std::vector<int> kernel_of_;
  std::vector<int> producer_;    ///< computation filling each buffer, -1 for inputs
  std::vector<int> ops_;         ///< op_count of each computation's body
  std::vector<int> kernel_ops_;  ///< operations each kernel holds so far
};

}  // namespace

bool is_row_major_inner_reduction(const LoopProgram& p, const Computation& c) {
  // A row kernel reads a row with consecutive threads on consecutive columns; that pays when the innermost reduced
  // variable walks memory with stride 1 in the loads that matter. Otherwise (reductions over outer dims), the output
  // elements are the contiguous direction and a thread per output element reads coalesced.
  // The loads that matter vary with both the innermost reduced variable and the innermost output variable: only
  // there do the two kinds of kernel differ, one reading along memory and the other across it. A load varying with
  // one of them only is read along memory, or one value for all lanes, either way: a row's max and sum that
  // log_softmax's terms subtract, LayerNorm's per-row mean and rstd in the column sums of its weight's gradient.
  // Were those to vote, two such vectors outvoted the matrix (the weight gradient's sum over rows then read the
  // matrix transposed, each lane 8 KiB from the next). Without any such load, the loads varying with a reduced
  // variable vote, and without those, every load.
  const std::string inner_r = reduce_var(c.reduce_sizes.size() - 1);
  // A kept dim of one (keepdim's trailing 1) has no direction to read along: column votes need a real one.
  const std::string inner_x =
      c.sizes.empty() || c.sizes.back().is_const(1) ? std::string() : out_var(c.sizes.size() - 1);
  // Each load classified once (its free variables computed once): the tiers below choose among them.
  struct Voter {
    Index index;
    bool streamed, spanning;
  };
  std::vector<Voter> loads;
  bool any_streamed = false, any_spanning = false;
  visit(c.body, [&](const Expr& e) {
    if (e->op != ExprOp::Load) return;
    const std::vector<std::string> vars = free_vars(e->index);
    auto has = [&](const std::string& v) { return std::find(vars.begin(), vars.end(), v) != vars.end(); };
    bool streamed = false;
    for (size_t j = 0; j < c.reduce_sizes.size() && !streamed; ++j) streamed = has(reduce_var(j));
    const bool spanning = !inner_x.empty() && has(inner_r) && has(inner_x);
    loads.push_back({e->index, streamed, spanning});
    any_streamed = any_streamed || streamed;
    any_spanning = any_spanning || spanning;
  });
  int row_votes = 0, column_votes = 0;
  for (const Voter& l : loads) {
    if ((any_spanning && !l.spanning) || (any_streamed && !l.streamed)) continue;
    auto cr = affine_coefficient(l.index, inner_r);
    if (cr && cr->is_const(1)) ++row_votes;
    if (!inner_x.empty()) {
      auto cx = affine_coefficient(l.index, inner_x);
      if (cx && cx->is_const(1)) ++column_votes;
    }
  }
  return row_votes >= column_votes;
}

void fuse_kernels(LoopProgram& program) { KernelFusion(program).run(); }

}  // namespace hi
