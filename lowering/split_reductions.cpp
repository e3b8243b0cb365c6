#include "lowering/split_reductions.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "ir/graph.h"
#include "lowering/fuse_kernels.h"

namespace hi {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
/// Smallest power of two >= v (v >= 1).
int64_t pow2_at_least(int64_t v) {
  int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}
/// Largest power of two <= v, or 0 when v < 1.
int64_t pow2_at_most(int64_t v) {
  if (v < 1) return 0;
  int64_t p = 1;
  while (p <= v / 2) p *= 2;
  return p;
}

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
    next_buffer_ = first_free_buffer_number();
    // Plans first: whether a reduction is split depends on the computations around it, which splitting moves.
    std::vector<std::optional<SplitPlan>> plans;
    for (const Computation& c : p_.computations) plans.push_back(plan_for(c));
    std::vector<Computation> out;
    out.reserve(p_.computations.size());
    for (size_t i = 0; i < p_.computations.size(); ++i) {
      Computation& c = p_.computations[i];
      if (plans[i] && split(c, *plans[i], out)) continue;
      out.push_back(std::move(c));
    }
    p_.computations = std::move(out);
  }

 private:
  /// New buffers continue lower_graph's "buf<N>" numbering, so names stay unique and deterministic.
  int first_free_buffer_number() const {
    int next = 0;
    for (const Buffer& b : p_.buffers) {
      if (b.name.size() < 4 || b.name.compare(0, 3, "buf") != 0) continue;
      if (b.name.find_first_not_of("0123456789", 3) != std::string::npos) continue;
      next = std::max(next, std::stoi(b.name.substr(3)) + 1);
    }
    return next;
  }

  std::optional<int64_t> constant(const Index& i) const { return simplify(i, p_.size_ranges).as_const(); }

  std::optional<SplitPlan> plan_for(const Computation& c) const {
    if (!c.is_reduction() || c.is_scan() || !c.body.defined() || c.body->op != ExprOp::Reduce) return std::nullopt;
    switch (c.body->reduce_op()) {
      case ReduceOp::ArgMax:
      case ReduceOp::ArgMin:
      case ReduceOp::LogAddExp: return std::nullopt;  // not idempotent: a padded chunk would need its identity
      default: break;
    }
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
    if (!plan.column && plan.outputs >= o_.shared_rows_min_rows && shares_rows(c)) return std::nullopt;
    int64_t target = plan.column ? o_.column_target_outputs : o_.row_target_rows;
    int64_t min_chunk = std::max<int64_t>(1, plan.column ? o_.min_column_chunk : o_.min_row_chunk);
    int64_t s = std::min({pow2_at_least(ceil_div(target, plan.outputs)), pow2_at_most(o_.max_splits),
                          pow2_at_most(plan.reduced / min_chunk)});
    if (s < std::max<int64_t>(2, o_.min_splits)) return std::nullopt;
    plan.splits = s;
    plan.chunk = ceil_div(plan.reduced, s);
    return plan;
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

  /// Appends stage 1 and stage 2 of `c` to `out` and adds the partial buffer; false (nothing added) when the stages
  /// would not get the kernel kinds the layout is meant for.
  bool split(const Computation& c, const SplitPlan& plan, std::vector<Computation>& out) {
    const ReduceOp op = c.body->reduce_op();
    const size_t rank = c.sizes.size();
    const int partial_buffer = static_cast<int>(p_.buffers.size());

    // Stage 1's domain: the split variable s next to the original output variables.
    std::vector<Index> partial_sizes = c.sizes;
    partial_sizes.insert(plan.column ? partial_sizes.begin() : partial_sizes.end(), Index(plan.splits));
    Index s = Index::var(out_var(plan.column ? 0 : rank));
    std::map<std::string, Index> repl;
    for (size_t i = 0; i < rank; ++i) repl[out_var(i)] = Index::var(out_var(plan.column ? i + 1 : i));

    // The original reduction coordinates from the flat position s*chunk + r0, clamped into [0, R).
    Index flat = s * plan.chunk + Index::var(reduce_var(0));
    const bool exact = plan.chunk * plan.splits == plan.reduced;
    Index position = exact ? flat : min(flat, Index(plan.reduced - 1));
    Index stride = Index(1);
    for (size_t j = c.reduce_sizes.size(); j-- > 0;) {
      Index coordinate = floordiv(position, stride);
      if (j > 0) coordinate = mod(coordinate, c.reduce_sizes[j]);
      repl[reduce_var(j)] = coordinate;
      stride = stride * c.reduce_sizes[j];
    }

    VarRanges ranges = p_.size_ranges;
    for (size_t i = 0; i < partial_sizes.size(); ++i) ranges[out_var(i)] = Range::loop(*constant(partial_sizes[i]));
    ranges[reduce_var(0)] = Range::loop(plan.chunk);
    Expr value = substitute_vars(c.body->args[0], repl, ranges);
    if (!exact && (op == ReduceOp::Sum || op == ReduceOp::Prod)) {
      Expr inside = Expr::binary(BinaryOp::Lt, Expr::index_value(flat, DType::Int64),
                                 Expr::index_value(Index(plan.reduced), DType::Int64), DType::Bool);
      value = Expr::where(inside, value, Expr::constant(op == ReduceOp::Sum ? 0 : 1, value->dtype));
    }
    // 16-bit partial sums would round every partial; the accumulator is float anyway.
    if ((op == ReduceOp::Sum || op == ReduceOp::Prod) && is_16bit_float(value->dtype))
      value = Expr::cast(value, DType::Float32);

    Buffer partial;
    partial.name = "buf" + std::to_string(next_buffer_);
    partial.dtype = Expr::reduce(op, value)->dtype;
    partial.kind = BufferKind::Intermediate;
    partial.sizes = partial_sizes;
    partial.strides = TensorMeta::contiguous_strides(partial_sizes);
    partial.offset = Index(0);

    Computation stage1;
    stage1.name = partial.name;
    stage1.buffer = partial_buffer;
    stage1.sizes = partial_sizes;
    stage1.reduce_sizes = {Index(plan.chunk)};
    stage1.body = Expr::reduce(op, value);
    stage1.origins = c.origins;
    stage1.op_names = c.op_names;

    // Stage 2 reads partial[.., s = r0, ..] at its own output coordinates.
    std::map<std::string, Index> read;
    for (size_t i = 0; i < rank; ++i) read[out_var(plan.column ? i + 1 : i)] = Index::var(out_var(i));
    read[s.name()] = Index::var(reduce_var(0));
    Index at = simplify(substitute(Computation::store_index(partial), read), p_.size_ranges);
    Computation stage2 = c;
    stage2.reduce_sizes = {Index(plan.splits)};
    stage2.body = Expr::reduce(op, Expr::load(partial_buffer, at, partial.dtype));

    if (is_row_major_inner_reduction(p_, stage1) == plan.column) return false;
    if (is_row_major_inner_reduction(p_, stage2) == plan.column) return false;

    ++next_buffer_;
    p_.buffers.push_back(std::move(partial));
    out.push_back(std::move(stage1));
    out.push_back(std::move(stage2));
    return true;
  }

  LoopProgram& p_;
  const SplitOptions& o_;
  int next_buffer_ = 0;
};

}  // namespace

void split_reductions(LoopProgram& program, const SplitOptions& options) {
  if (!options.enabled) return;
  ReductionSplitter(program, options).run();
}

}  // namespace hi
