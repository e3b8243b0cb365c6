#include "lowering/split_reductions.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "ir/graph.h"
#include "ir/int_math.h"
#include "ir/moments.h"
#include "lowering/fuse_kernels.h"

namespace hi {
namespace {

bool is_16bit_float(DType t) { return is_floating(t) && dtype_bytes(t) == 2; }

/// How one reduction is split.
struct SplitPlan {
  bool column = false;  ///< partial is [S, sizes...] (column-style) or [sizes..., S] (row-style)
  int64_t outputs = 0;  ///< N
  int64_t reduced = 0;  ///< R
  int64_t splits = 0;   ///< S
  int64_t chunk = 0;    ///< ceil(R / S)
};

class ReductionSplitter {
 public:
  ReductionSplitter(LoopProgram& p, const SplitOptions& o) : p_(p), o_(o) {}

  void run() {
    next_buffer_ = first_free_buffer_number(p_);
    // LoopProgram::producer searches the computations; row_aligned_plan asks it per load of every reduction.
    producer_.assign(p_.buffers.size(), -1);
    for (int c = static_cast<int>(p_.computations.size()); c-- > 0;) producer_[p_.computations[c].buffer] = c;
    // Plans first: whether a reduction is split depends on the computations around it, which splitting moves.
    std::vector<std::optional<SplitPlan>> plans;
    for (const Computation& c : p_.computations) plans.push_back(plan_for(c));
    std::vector<Computation> out;
    out.reserve(p_.computations.size());
    for (size_t i = 0; i < p_.computations.size(); ++i) {
      Computation& c = p_.computations[i];
      // A variance's sums, split alike, are split together (split_welford).
      if (i + 1 < p_.computations.size() && plans[i] && plans[i + 1] && same_split(*plans[i], *plans[i + 1]) &&
          c.sizes == p_.computations[i + 1].sizes && c.reduce_sizes == p_.computations[i + 1].reduce_sizes &&
          split_welford(c, p_.computations[i + 1], *plans[i], out)) {
        ++i;
        continue;
      }
      if (plans[i] && split(c, *plans[i], out)) continue;
      out.push_back(std::move(c));
    }
    p_.computations = std::move(out);
  }

 private:
  /// New buffers continue lower_graph's "buf<N>" numbering, so names stay unique and deterministic.
  static bool same_split(const SplitPlan& a, const SplitPlan& b) {
    return a.column == b.column && a.outputs == b.outputs && a.reduced == b.reduced && a.splits == b.splits;
  }

  std::optional<int64_t> constant(const Index& i) const { return simplify(i, p_.size_ranges).as_const(); }

  std::optional<SplitPlan> plan_for(const Computation& c) const {
    if (!c.is_reduction() || c.is_scan() || !c.body.defined() || c.body->op != ExprOp::Reduce) return std::nullopt;
    // LogAddExp is not idempotent: a padded chunk would need its identity.
    if (c.body->reduce_op() == ReduceOp::LogAddExp) return std::nullopt;
    SplitPlan plan;
    auto n = constant(c.numel());
    auto r = constant(c.reduce_numel());
    if (!n || !r || *n < 1 || *r < o_.min_reduce_numel) return std::nullopt;
    for (const Index& s : c.sizes)
      if (!constant(s)) return std::nullopt;
    for (const Index& s : c.reduce_sizes)
      if (!constant(s)) return std::nullopt;
    plan.outputs = *n;
    plan.reduced = *r;
    plan.column = !is_row_major_inner_reduction(p_, c);
    if (!plan.column) {
      if (std::optional<SplitPlan> aligned = row_aligned_plan(c, plan)) return aligned;
      if (plan.outputs >= o_.shared_rows_min_rows && shares_rows(c)) return std::nullopt;
    }
    int64_t target = plan.column ? o_.column_target_outputs : o_.row_target_rows;
    int64_t min_chunk = std::max<int64_t>(1, plan.column ? o_.min_column_chunk : o_.min_row_chunk);
    int64_t s = std::min({pow2_at_least(ceil_div(target, plan.outputs)), pow2_at_most(o_.max_splits),
                          pow2_at_most(plan.reduced / min_chunk)});
    if (s < std::max<int64_t>(2, o_.min_splits)) return std::nullopt;
    plan.splits = s;
    plan.chunk = ceil_div(plan.reduced, s);
    return plan;
  }

  /// The split of row-style reduction `c` (its `base` plan's outputs and extent) into one piece per row of a row
  /// reduction that `c` reads per row: L = that reduction's row length tiles c's reduced domain, its rows are c's
  /// outputs times S = R / L, and after the split a load of its results reads stage 1's own row of them; that
  /// reduction is not split itself. nullopt when no loaded buffer is such, or S would exceed max_row_aligned_splits or fall
  /// below min_splits.
  std::optional<SplitPlan> row_aligned_plan(const Computation& c, const SplitPlan& base) const {
    std::optional<SplitPlan> found;
    visit(c.body, [&](const Expr& e) {
      if (found || e->op != ExprOp::Load || !e->args.empty()) return;
      const int producer = producer_[e->buffer];
      if (producer < 0) return;
      const Computation& d = p_.computations[producer];
      if (!d.is_reduction() || d.is_scan() || !is_row_major_inner_reduction(p_, d)) return;
      const std::optional<int64_t> rows = constant(d.numel()), length = constant(d.reduce_numel());
      if (!rows || !length || *length < 2 || base.reduced % *length != 0) return;
      const int64_t splits = base.reduced / *length;
      if (base.outputs * splits != *rows || splits < std::max<int64_t>(2, o_.min_splits) ||
          splits > o_.max_row_aligned_splits)
        return;
      SplitPlan plan = base;
      plan.splits = splits;
      plan.chunk = *length;
      // Stage 1's row (x..., s), flattened, must read d's result at that very row, as fuse_kernels requires of
      // a computation joining d's kernel.
      const StageOne one = stage_one(c, plan);
      Index row = Index(0);
      for (size_t i = 0; i < one.sizes.size(); ++i) row = row * one.sizes[i] + Index::var(out_var(i));
      const std::vector<Index> coords = unflatten(row, d.sizes);
      std::map<std::string, Index> at_row;
      for (size_t i = 0; i < coords.size(); ++i) at_row[out_var(i)] = coords[i];
      const Index own = simplify(substitute(Computation::store_index(p_.buffers[d.buffer]), at_row), one.ranges);
      if (simplify(substitute(e->index, one.repl), one.ranges) != own) return;
      // A row reduction split itself leaves its rows (too few to fill the GPU one block each).
      if (split_itself(producer)) return;
      found = plan;
    });
    return found;
  }

  /// Whether computation `index` gets a split plan of its own (plan_for), remembered: row_aligned_plan asks it of
  /// the producers of every load it looks at.
  bool split_itself(int index) const {
    auto [it, added] = split_memo_.try_emplace(index, false);
    if (added) it->second = plan_for(p_.computations[index]).has_value();
    return it->second;
  }

  /// Whether another computation reads `c`'s output over the same rows, or `c` reads one such (a reduction over the
  /// same rows, or an elementwise value over the rows' elements): fuse_kernels would hold them in one row kernel.
  bool shares_rows(const Computation& c) const {
    auto same_rows = [&](const Computation& d) {
      if (!d.is_reduction()) return simplify(d.numel() - c.numel() * c.reduce_numel(), p_.size_ranges) == Index(0);
      return !d.is_scan() && simplify(d.numel() - c.numel(), p_.size_ranges) == Index(0) &&
             simplify(d.reduce_numel() - c.reduce_numel(), p_.size_ranges) == Index(0);
    };
    auto reads = [](const Computation& reader, int buffer) {
      bool found = false;
      if (reader.body.defined())
        visit(reader.body, [&](const Expr& e) { found = found || (e->op == ExprOp::Load && e->buffer == buffer); });
      return found;
    };
    for (const Computation& d : p_.computations) {
      if (&d == &c || !d.body.defined() || !same_rows(d)) continue;
      if (reads(d, c.buffer) || reads(c, d.buffer)) return true;
    }
    return false;
  }

  /// A new contiguous Intermediate buffer of `dtype` and `sizes`, its index in p_.buffers once added.
  Buffer partial_buffer(DType dtype, const std::vector<Index>& sizes) {
    Buffer b;
    b.name = "buf" + std::to_string(next_buffer_++);
    b.dtype = dtype;
    b.kind = BufferKind::Intermediate;
    b.sizes = sizes;
    b.strides = TensorMeta::contiguous_strides(sizes);
    b.offset = Index(0);
    return b;
  }

  /// Appends stage 1 and stage 2 of `c` to `out` and adds the partial buffer(s); false (nothing added) when the
  /// stages would not get the kernel kinds the layout is meant for.
  ///
  /// Argmax / argmin keep two partials per chunk: the chunk's extreme value (Max / Min, NaN winning as in the arg
  /// reduction) and its position in the whole reduction domain (the original position expression, so a clamped
  /// duplicate of the last element carries its own position and changes nothing). Stage 2 is the arg reduction of
  /// the partial values at the partial positions: equal values keep the lowest position and NaNs the first NaN's, as
  /// one pass over the whole domain would.
  /// Stage 1's view of computation `c` split as `plan` says: its domain, and the substitution of the original
  /// variables over it.
  struct StageOne {
    std::vector<Index> sizes;  ///< the partial's: the split variable s next to the original output variables
    Index s;
    Index flat;  ///< s*chunk + r0, the flat position in the original reduction domain
    bool exact = false;  ///< chunk * S == R: no position is clamped
    std::map<std::string, Index> repl;
    VarRanges ranges;
    /// Stage 2's variables for reading a partial of stage 1's domain: its own outputs, s = r0.
    std::map<std::string, Index> read;
  };
  StageOne stage_one(const Computation& c, const SplitPlan& plan) const {
    StageOne d;
    const size_t rank = c.sizes.size();
    d.sizes = c.sizes;
    d.sizes.insert(plan.column ? d.sizes.begin() : d.sizes.end(), Index(plan.splits));
    d.s = Index::var(out_var(plan.column ? 0 : rank));
    for (size_t i = 0; i < rank; ++i) d.repl[out_var(i)] = Index::var(out_var(plan.column ? i + 1 : i));

    // The original reduction coordinates from the flat position s*chunk + r0, clamped into [0, R).
    d.flat = d.s * plan.chunk + Index::var(reduce_var(0));
    d.exact = plan.chunk * plan.splits == plan.reduced;
    Index position = d.exact ? d.flat : min(d.flat, Index(plan.reduced - 1));
    Index stride = Index(1);
    for (size_t j = c.reduce_sizes.size(); j-- > 0;) {
      Index coordinate = floordiv(position, stride);
      if (j > 0) coordinate = mod(coordinate, c.reduce_sizes[j]);
      d.repl[reduce_var(j)] = coordinate;
      stride = stride * c.reduce_sizes[j];
    }

    d.ranges = p_.size_ranges;
    for (size_t i = 0; i < d.sizes.size(); ++i) d.ranges[out_var(i)] = Range::loop(*constant(d.sizes[i]));
    d.ranges[reduce_var(0)] = Range::loop(plan.chunk);
    for (size_t i = 0; i < rank; ++i) d.read[out_var(plan.column ? i + 1 : i)] = Index::var(out_var(i));
    d.read[d.s.name()] = Index::var(reduce_var(0));
    return d;
  }

  bool split(const Computation& c, const SplitPlan& plan, std::vector<Computation>& out) {
    const ReduceOp op = c.body->reduce_op();
    const bool arg = op == ReduceOp::ArgMax || op == ReduceOp::ArgMin;
    const int partial_buffer_index = static_cast<int>(p_.buffers.size());
    const StageOne d = stage_one(c, plan);
    const std::vector<Index>& partial_sizes = d.sizes;
    const Index& flat = d.flat;
    const bool exact = d.exact;
    Expr value = substitute_vars(c.body->args[0], d.repl, d.ranges);
    if (!exact && (op == ReduceOp::Sum || op == ReduceOp::Prod)) {
      Expr inside = Expr::binary(BinaryOp::Lt, Expr::index_value(flat, DType::Int64),
                                 Expr::index_value(Index(plan.reduced), DType::Int64), DType::Bool);
      value = Expr::where(inside, value, Expr::constant(op == ReduceOp::Sum ? 0 : 1, value->dtype));
    }
    // 16-bit partial sums would round every partial; the accumulator is float anyway.
    if ((op == ReduceOp::Sum || op == ReduceOp::Prod) && is_16bit_float(value->dtype))
      value = Expr::cast(value, DType::Float32);

    const int first_number = next_buffer_;
    std::vector<Buffer> partials;
    std::vector<Computation> stages;
    auto add_stage1 = [&](const Expr& body) {
      partials.push_back(partial_buffer(body->dtype, partial_sizes));
      Computation stage1;
      stage1.name = partials.back().name;
      stage1.buffer = partial_buffer_index + static_cast<int>(partials.size()) - 1;
      stage1.sizes = partial_sizes;
      stage1.reduce_sizes = {Index(plan.chunk)};
      stage1.body = body;
      stage1.origins = c.origins;
      stage1.op_names = c.op_names;
      stages.push_back(std::move(stage1));
    };
    if (arg) {
      add_stage1(Expr::reduce(op == ReduceOp::ArgMax ? ReduceOp::Max : ReduceOp::Min, value));
      add_stage1(Expr::arg_reduce(op, value, substitute_vars(c.body->args[1], d.repl, d.ranges)));
    } else {
      add_stage1(Expr::reduce(op, value));
    }

    // Stage 2 reads partial[.., s = r0, ..] at its own output coordinates.
    Index at = simplify(substitute(Computation::store_index(partials[0]), d.read), p_.size_ranges);
    auto partial = [&](size_t n) { return Expr::load(stages[n].buffer, at, partials[n].dtype); };
    Computation stage2 = c;
    stage2.reduce_sizes = {Index(plan.splits)};
    stage2.body = arg ? Expr::arg_reduce(op, partial(0), partial(1)) : Expr::reduce(op, partial(0));

    // The kinds are asked with the partials in place (they read the buffers' sizes), and undone when refused.
    for (Buffer& b : partials) p_.buffers.push_back(b);
    bool kinds = true;
    for (const Computation& stage1 : stages) kinds = kinds && is_row_major_inner_reduction(p_, stage1) != plan.column;
    kinds = kinds && is_row_major_inner_reduction(p_, stage2) != plan.column;
    if (!kinds) {
      p_.buffers.resize(p_.buffers.size() - partials.size());
      next_buffer_ = first_number;
      return false;
    }
    for (Computation& stage1 : stages) out.push_back(std::move(stage1));
    out.push_back(std::move(stage2));
    return true;
  }

  /// Splits a variance's two sums `sum` and `sq` (ir/moments.h, over elements) together, both as `plan` says, so
  /// that each stage takes them in one pass (fuse_kernels keeps such pairs in one kernel): stage 1 reduces each piece
  /// of c = chunk elements to its sum a and the squared deviations b from its own mean a / c; stage 2 sums the a and
  /// merges the pieces as Chan et al., sum(b + c * (a / c - mean)^2) (the pair ir/moments.h names partials). The
  /// pieces are of equal size: S is halved from the planned one, down to min_splits, until it divides R (fewer
  /// pieces read once beat more read twice); false (nothing added) where none does, or where the kinds would not
  /// hold.
  bool split_welford(const Computation& sum, const Computation& sq, const SplitPlan& planned,
                     std::vector<Computation>& out) {
    SplitPlan plan = planned;
    while (plan.reduced % plan.splits != 0 && plan.splits / 2 >= std::max<int64_t>(2, o_.min_splits)) plan.splits /= 2;
    if (plan.reduced % plan.splits != 0) return false;
    plan.chunk = plan.reduced / plan.splits;
    const std::optional<WelfordStep> step = welford_step(sum.body, sum.buffer, sq.body, plan.reduced);
    if (!step || step->m2.defined()) return false;
    const StageOne d = stage_one(sum, plan);
    const DType t = step->value->dtype;
    const int first_number = next_buffer_;
    const int a_index = static_cast<int>(p_.buffers.size()), b_index = a_index + 1;
    const Buffer a = partial_buffer(t, d.sizes), b = partial_buffer(t, d.sizes);
    auto stage1 = [&](const Buffer& partial, int index, const Computation& original, const Expr& body) {
      Computation c;
      c.name = partial.name;
      c.buffer = index;
      c.sizes = d.sizes;
      c.reduce_sizes = {Index(plan.chunk)};
      c.body = body;
      c.origins = original.origins;
      c.op_names = original.op_names;
      return c;
    };
    auto binary = [&](BinaryOp op, const Expr& l, const Expr& r) { return Expr::binary(op, l, r, t); };
    const Expr x = substitute_vars(step->value, d.repl, d.ranges);
    const Expr chunk = Expr::constant(static_cast<double>(plan.chunk), t);
    const Expr piece_mean = binary(BinaryOp::Div, Expr::load(a_index, Computation::store_index(a), t), chunk);
    const Expr dx = binary(BinaryOp::Sub, x, piece_mean);
    Computation sum1 = stage1(a, a_index, sum, Expr::reduce(ReduceOp::Sum, x));
    Computation sq1 = stage1(b, b_index, sq, Expr::reduce(ReduceOp::Sum, binary(BinaryOp::Mul, dx, dx)));

    const Index at = simplify(substitute(Computation::store_index(a), d.read), p_.size_ranges);
    const Expr pa = Expr::load(a_index, at, t), pb = Expr::load(b_index, at, t);
    Computation sum2 = sum;
    sum2.reduce_sizes = {Index(plan.splits)};
    sum2.body = Expr::reduce(ReduceOp::Sum, pa);
    // The whole mean, as sq read it: load(sum) / R.
    const Expr mean = step->mean;
    const Expr da = binary(BinaryOp::Sub, binary(BinaryOp::Div, pa, chunk), mean);
    Computation sq2 = sq;
    sq2.reduce_sizes = {Index(plan.splits)};
    sq2.body = Expr::reduce(ReduceOp::Sum,
                            binary(BinaryOp::Add, pb, binary(BinaryOp::Mul, chunk, binary(BinaryOp::Mul, da, da))));

    p_.buffers.push_back(a);
    p_.buffers.push_back(b);
    bool kinds = true;
    for (const Computation* c : {&sum1, &sq1}) kinds = kinds && is_row_major_inner_reduction(p_, *c) != plan.column;
    for (const Computation* c : {&sum2, &sq2}) kinds = kinds && is_row_major_inner_reduction(p_, *c) != plan.column;
    if (!kinds) {
      p_.buffers.resize(p_.buffers.size() - 2);
      next_buffer_ = first_number;
      return false;
    }
    for (Computation* c : {&sum1, &sq1, &sum2, &sq2}) out.push_back(std::move(*c));
    return true;
  }

  LoopProgram& p_;
  const SplitOptions& o_;
  int next_buffer_ = 0;
  std::vector<int> producer_;  ///< the first computation filling each buffer before splitting, -1 for inputs
  mutable std::map<int, bool> split_memo_;
};

}  // namespace

void split_reductions(LoopProgram& program, const SplitOptions& options) {
  if (!options.enabled) return;
  ReductionSplitter(program, options).run();
}

}  // namespace hi
