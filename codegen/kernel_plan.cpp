// plan_kernel: the choices every kernel shape shares (index width, cache hints), the shape's own (plan_shapes.h),
// and the plan's text.
#include "codegen/kernel_plan.h"

#include <limits>
#include <optional>
#include <sstream>

#include "codegen/kernel_lanes.h"
#include "codegen/plan_shapes.h"
#include "ir/moments.h"

namespace hi {

namespace {

using namespace codegen_detail;

void plan_index(const LoopProgram& p, const Kernel& k, const KernelOperands& operands, KernelPlan& plan) {
  int64_t largest = 0;
  bool known = operands.symbols.empty();
  std::set<int> all = operands.read;
  all.insert(operands.written.begin(), operands.written.end());
  for (int b : all) {
    auto n = simplify(p.buffers[b].storage_elements(), p.size_ranges).as_const();
    if (!n) known = false;
    else largest = std::max(largest, *n);
  }
  auto total = simplify(k.numel * k.row_length, p.size_ranges).as_const();
  if (!total) known = false;
  else largest = std::max(largest, *total);
  // 32-bit arithmetic where every extent is known to fit (kIndex32Limit), or the graph promises that every binding
  // of its symbols keeps them below it (LoopProgram::index32, which binding checks).
  plan.index32 = (known || p.index32) && largest < kIndex32Limit;
  plan.index_reason = largest >= kIndex32Limit ? "an extent of " + std::to_string(largest) + " needs 64 bits"
                      : known                  ? "every extent (largest " + std::to_string(largest) + ") fits in 32 bits"
                      : p.index32 ? "every extent stays below 2^30 - 4096 at the sizes the graph runs with (index32)"
                                  : "an extent unknown at compile time: 64-bit";
}

/// KernelPlan::positions32 of the kernel's arg reductions: positions are index values whose bounds over the
/// computation's own domain stay below 2^31.
void plan_positions(const LoopProgram& p, const Kernel& k, KernelPlan& plan) {
  bool any = false, fits = true;
  for (int ci : k.computations) {
    const Computation& c = p.computations[ci];
    if (!c.body.defined() || c.body->op != ExprOp::Reduce || !is_arg_reduction(c.body->reduce_op())) continue;
    any = true;
    const Expr& position = c.body->args[1];
    if (position->op != ExprOp::IndexValue) {
      fits = false;
      continue;
    }
    VarRanges ranges = p.size_ranges;
    auto domain = [&](const std::vector<Index>& sizes, std::string (*var)(size_t)) {
      for (size_t i = 0; i < sizes.size(); ++i) {
        const Range r = bounds(sizes[i], p.size_ranges);
        ranges[var(i)] = r.hi ? Range::loop(*r.hi) : Range{0, std::nullopt};
      }
    };
    domain(c.sizes, out_var);
    domain(c.reduce_sizes, reduce_var);
    const Range r = bounds(position->index, ranges);
    fits = fits && r.lo && *r.lo >= 0 && r.hi && *r.hi <= std::numeric_limits<int32_t>::max() - 1;
  }
  if (!any) return;
  plan.positions32 = fits;
  plan.positions_reason = fits ? "every arg-reduction position is an index below 2^31"
                               : "a position may reach 2^31 or is read from memory: 64-bit";
}

/// KernelPlan::extreme_pairs: each max (min) and the first later argmax (argmin) of the same values over the
/// kernel's variables. Not where a row loop takes the max in one pass with another statistic (online softmax), nor
/// for a phase that persistent rows cache a value in (kept simple: such kernels compute their own values).
void plan_extreme_pairs(const LoopProgram& p, const Kernel& k, KernelPlan& plan) {
  std::set<size_t> taken;
  if (const auto* rows = std::get_if<RowPlan>(&plan.shape)) {
    for (const RowPlan::OnePass& o : rows->one_pass) taken.insert({o.first, o.first + 1});
    for (const RowPlan::CachedValue& c : rows->cached_values) taken.insert(c.first);
  }
  const VarRanges ranges = kernel_var_ranges(p, k);
  std::vector<Expr> bodies;
  for (int ci : k.computations) bodies.push_back(kernel_body(p, k, p.computations[ci], ranges));
  auto reduce_op = [&](size_t n) -> std::optional<ReduceOp> {
    if (!bodies[n].defined() || bodies[n]->op != ExprOp::Reduce) return std::nullopt;
    return bodies[n]->reduce_op();
  };
  for (size_t n = 0; n < bodies.size(); ++n) {
    const std::optional<ReduceOp> op = reduce_op(n);
    if (!op || (*op != ReduceOp::Max && *op != ReduceOp::Min) || taken.count(n)) continue;
    const ReduceOp arg = *op == ReduceOp::Max ? ReduceOp::ArgMax : ReduceOp::ArgMin;
    for (size_t m = n + 1; m < bodies.size(); ++m) {
      if (reduce_op(m) != arg || taken.count(m) || bodies[m]->args[0] != bodies[n]->args[0]) continue;
      plan.extreme_pairs[n] = m;
      taken.insert({n, m});
      break;
    }
  }
}

/// KernelPlan::welford_pairs: each column-kernel sum with the sum of squared deviations after it (ir/moments.h).
void plan_welford_pairs(const LoopProgram& p, const Kernel& k, KernelPlan& plan) {
  if (k.kind != KernelKind::ColumnReduction) return;
  const VarRanges ranges = kernel_var_ranges(p, k);
  const std::optional<int64_t> steps = simplify(k.row_length, p.size_ranges).as_const();
  for (size_t n = 0; n + 1 < k.computations.size(); ++n) {
    const Computation& sum = p.computations[k.computations[n]];
    const Computation& sq = p.computations[k.computations[n + 1]];
    if (!sum.is_reduction() || !sq.is_reduction() || plan.extreme_pairs.count(n)) continue;
    if (!welford_step(kernel_body(p, k, sum, ranges), sum.buffer, kernel_body(p, k, sq, ranges), steps)) continue;
    plan.welford_pairs[n] = n + 1;
    ++n;
  }
}

/// Inductor's eviction policies for the buffers the kernel only reads: evict-last for weights that every row reads
/// and for data a row loop reads again in a later phase, evict-first for what column reductions and row loops read
/// once, none for pointwise kernels and rows held in registers.
void plan_hints(const LoopProgram& p, const Kernel& k, const KernelOperands& operands, bool persistent,
                KernelPlan& plan) {
  if (k.kind == KernelKind::Pointwise || k.kind == KernelKind::Scan || k.kind == KernelKind::Scatter) return;
  for (int b : operands.read) {
    if (operands.written.count(b)) continue;
    EvictionHint h;
    if (k.kind == KernelKind::ColumnReduction) {
      h.row_indexed = h.other = "HI_EVICT_FIRST";
      h.reason = "a column reduction reads each element once";
    } else if (persistent) {
      // Rows held in registers are read once, as Inductor's persistent reductions: no hint where the kernel writes
      // rows too (on the H200 evict-first made softmax and the norms 2-4 % slower, bf16 softmax 40 % under
      // do_bench's dirty L2), evict-first where it writes one value per row.
      h.other = "HI_EVICT_LAST";
      h.row_indexed = writes_rows(p, k) ? "" : "HI_EVICT_FIRST";
      h.reason = writes_rows(p, k) ? "rows held in registers, written back: no hint (evict-first measured slower)"
                                   : "rows held in registers, read once for one value per row";
    } else {
      // Row loops read a buffer again in each phase that uses it.
      int readers = 0;
      for (int ci : k.computations) readers += reads_buffer(p.computations[ci].body, b);
      h.other = "HI_EVICT_LAST";
      h.row_indexed = readers > 1 ? "HI_EVICT_LAST" : "HI_EVICT_FIRST";
      h.reason = "a row loop reads it in " + std::to_string(readers) + " phase(s)";
    }
    plan.hints[b] = h;
  }
}

const char* form_name(const KernelPlan& plan) {
  if (const auto* pw = std::get_if<PointwisePlan>(&plan.shape)) {
    switch (pw->form) {
      case PointwisePlan::Form::Elements: return "elements";
      case PointwisePlan::Form::VectorGroups: return "vector groups";
      case PointwisePlan::Form::TransposedTiles: return "transposed tiles";
    }
  }
  if (const auto* rows = std::get_if<RowPlan>(&plan.shape))
    return rows->form == RowPlan::Form::Persistent ? rows->peeled ? "persistent rows, peeled" : "persistent rows"
           : rows->peeled                          ? "looped rows, peeled"
                                                   : "looped rows";
  if (const auto* cols = std::get_if<ColumnPlan>(&plan.shape)) {
    switch (cols->form) {
      case ColumnPlan::Form::OutputsPerThread: return "outputs per thread";
      case ColumnPlan::Form::RowSlices: return "row slices";
      case ColumnPlan::Form::VectorRowSlices: return "vector row slices";
    }
  }
  if (const auto* scan = std::get_if<ScanPlan>(&plan.shape))
    return scan->form == ScanPlan::Form::LinesPerThread ? "lines per thread"
           : scan->form == ScanPlan::Form::LineChunks   ? "line chunks"
                                                        : "threads per line";
  return "?";
}

/// Calls of large math functions (is_library_math_call) a kernel may print inlined. NVRTC and HIPRTC inline each
/// call's whole body, slow paths included, and their optimizers then take time superlinear in the kernel's size:
/// 16 / 50 / 100 / 200 chained sinf took 2.3 / 3.5 / 9.8 / 27 s in NVRTC 12.4 for sm_90 (the same 400 called out of
/// line 0.7 s), and a 1,000-node pointwise chain of sin, tanh and sigmoid 19 s as one kernel, 2.8 s with its sins out
/// of line. 32 printed calls stay around a second. Normal kernels (RoPE's sin and cos over 16 lanes and groups, an
/// optimizer's pow) print fewer and keep their calls inlined, where a call's cost would show; kernels past the bound
/// are long fused chains, whose compile time it bounds.
constexpr int kMaxInlinedMathCalls = 32;

/// How many copies of each computation's body the kernel's loops print per thread (vector lanes times groups, the
/// persistent row loop unrolled over them), as the compiler sees them.
int printed_copies(const KernelPlan& plan) {
  if (const auto* pw = std::get_if<PointwisePlan>(&plan.shape))
    return pw->form == PointwisePlan::Form::TransposedTiles ? 1 : pw->width * pw->groups_per_thread;
  if (const auto* rows = std::get_if<RowPlan>(&plan.shape))
    return rows->form == RowPlan::Form::Persistent ? rows->width * rows->groups_per_thread : rows->width;
  return 1;
}

void plan_outlining(const LoopProgram& p, const Kernel& k, KernelPlan& plan) {
  std::set<const ExprNode*> calls;
  for (int c : k.computations)
    visit_computation(p.computations[c], [&](const Expr& e) {
      if (is_library_math_call(e)) calls.insert(&*e);
    });
  const long printed = static_cast<long>(calls.size()) * printed_copies(plan);
  plan.outline_math = printed > kMaxInlinedMathCalls;
  if (plan.outline_math)
    plan.outline_reason = std::to_string(calls.size()) + " library math call(s) printed " +
                          std::to_string(printed_copies(plan)) + " time(s) each, past " +
                          std::to_string(kMaxInlinedMathCalls) + " inlined";
}

}  // namespace

bool is_library_math_call(const Expr& e) {
  if (e->op != ExprOp::Unary && e->op != ExprOp::Binary) return false;
  const DType t = e->args[0]->dtype;
  if (!is_floating(t)) return false;
  if (e->op == ExprOp::Binary) {
    switch (e->binary_op()) {
      case BinaryOp::Pow: case BinaryOp::Fmod: case BinaryOp::Remainder: case BinaryOp::Zeta: case BinaryOp::Atan2:
      case BinaryOp::Hypot:
        return true;
      default:
        return false;
    }
  }
  switch (e->unary_op()) {
    // Large bodies whatever the type: argument reduction for large inputs (trigonometric), special cases.
    case UnaryOp::Sin: case UnaryOp::Cos: case UnaryOp::Tan: case UnaryOp::Asin: case UnaryOp::Acos:
    case UnaryOp::Atan: case UnaryOp::Sinh: case UnaryOp::Cosh: case UnaryOp::Asinh: case UnaryOp::Acosh:
    case UnaryOp::Atanh: case UnaryOp::Log1p: case UnaryOp::Erfc: case UnaryOp::Lgamma: case UnaryOp::Digamma:
    case UnaryOp::Erfinv:
      return true;
    // A few instructions in float (exp2 is one hardware instruction and a scaling, exp, tanh and erf short
    // polynomials): inlined, they cost the compilers little, and a call in a kernel's unrolled loops costs them more
    // than the body (50 chained softmaxes compiled 1.5 times slower in NVRTC with exp2 out of line). Double
    // versions are long polynomials with special-case paths.
    case UnaryOp::Exp: case UnaryOp::Exp2: case UnaryOp::Expm1: case UnaryOp::Log: case UnaryOp::Log2:
    case UnaryOp::Log10: case UnaryOp::Tanh: case UnaryOp::Sigmoid: case UnaryOp::Erf: case UnaryOp::GeluErf:
    case UnaryOp::GeluTanh: case UnaryOp::Silu:
      return t == DType::Float64;
    default:
      return false;
  }
}

KernelPlan plan_kernel(const LoopProgram& p, const Kernel& k, const Target& target) {
  KernelPlan plan;
  plan.kernel = k.name;
  plan.kind = k.kind;
  const KernelOperands operands = kernel_operands(p, k);
  plan_index(p, k, operands, plan);
  plan_positions(p, k, plan);
  bool persistent = false;
  switch (k.kind) {
    case KernelKind::Pointwise: plan_pointwise(p, k, target, plan); break;
    case KernelKind::RowReduction:
      persistent = plan_rows(p, k, target, plan);
      plan_extreme_pairs(p, k, plan);  // after the row plan: which phases it merges or caches
      break;
    case KernelKind::ColumnReduction:
      plan_extreme_pairs(p, k, plan);  // before the column plan: a pair is one reduction to slice
      plan_welford_pairs(p, k, plan);
      plan_columns(p, k, target, plan);
      break;
    case KernelKind::Scan: plan_scan(p, k, target, plan); break;
    case KernelKind::Scatter: plan_scatter(p, k, target, plan); break;
  }
  plan.grid = simplify(plan.grid, p.size_ranges);
  plan_hints(p, k, operands, persistent, plan);
  plan_outlining(p, k, plan);
  return plan;
}

std::vector<KernelPlan> plan_kernels(const LoopProgram& p, const Kernel& k, const Target& target) {
  std::vector<ShapeVariant> variants;
  if (k.kind == KernelKind::RowReduction) variants = row_variants(p, k, target);
  if (k.kind == KernelKind::ColumnReduction) variants = column_variants(p, k, target);
  if (variants.empty()) return {plan_kernel(p, k, target)};
  std::vector<KernelPlan> out;
  for (ShapeVariant& v : variants) {
    KernelPlan plan = v.planned ? std::move(v.plan) : plan_kernel(p, k, target);
    if (v.planned) {
      plan.kernel = k.name;
      plan.kind = k.kind;
      const KernelOperands operands = kernel_operands(p, k);
      plan_index(p, k, operands, plan);
      plan_welford_pairs(p, k, plan);
      const auto* rows = std::get_if<RowPlan>(&plan.shape);
      plan_hints(p, k, operands, rows && rows->form == RowPlan::Form::Persistent, plan);
      plan_outlining(p, k, plan);
    }
    plan.kernel += v.suffix;
    plan.grid = simplify(plan.grid * v.selected, p.size_ranges);
    plan.grid_reason += "; a variant: " + v.why;
    out.push_back(std::move(plan));
  }
  return out;
}

std::string to_string(const KernelPlan& plan) {
  std::ostringstream os;
  os << plan.kernel << ": " << kernel_kind_name(plan.kind) << ", " << form_name(plan) << "\n";
  os << "  block " << plan.block << ": " << plan.block_reason << "\n";
  os << "  grid " << plan.grid.str() << (plan.whole_grid ? ", whole grid" : ", capped at resident waves") << ": " << plan.grid_reason
     << "\n";
  os << "  index " << (plan.index32 ? "int" : "hi_i64") << ": " << plan.index_reason << "\n";
  if (!plan.positions_reason.empty())
    os << "  positions " << (plan.positions32 ? "int" : "hi_i64") << ": " << plan.positions_reason << "\n";
  if (plan.needs_sync) os << "  synchronises (barriers or shuffles)\n";
  if (const auto* pw = std::get_if<PointwisePlan>(&plan.shape)) {
    os << "  form: " << pw->form_reason << "\n";
    if (pw->form == PointwisePlan::Form::TransposedTiles) {
      os << "  tiles " << pw->tile << " x " << pw->tile << " over " << pw->tile_o << " x " << pw->tile_p << " x "
         << pw->tile_q << ", " << pw->tiled_loads.size() << " tiled load(s)\n";
    } else {
      os << "  V " << pw->width << ": " << pw->width_reason << "\n";
      os << "  E " << pw->groups_per_thread << ": " << pw->groups_reason << "\n";
      for (const SelectedLoad& s : pw->selected_loads)
        os << "  selected load: " << s.anchor.str() << " " << s.comparison << " " << s.bound << " ? buffer "
           << s.if_true->buffer << " : buffer " << s.if_false->buffer << "\n";
    }
  } else if (const auto* rows = std::get_if<RowPlan>(&plan.shape)) {
    os << "  form: " << rows->form_reason << "\n";
    os << "  V " << rows->width << ": " << rows->width_reason << "\n";
    os << "  T " << rows->threads << " threads per row: " << rows->threads_reason << "\n";
    if (rows->form == RowPlan::Form::Persistent) {
      os << "  E " << rows->groups_per_thread << " groups per thread\n";
      os << "  " << rows->rows_per_block << " row(s) per block: " << rows->rows_reason << "\n";
      for (const RowPlan::RowLoad& l : rows->row_loads)
        os << "  buffer " << l.load->buffer << " loaded " << (l.users.size() > 1 ? "once per row" : "in its phase")
           << "\n";
      for (const RowPlan::StagedOperand& st : rows->staged)
        os << "  buffer " << st.buffer << " staged in shared memory once per block, read at each row's columns\n";
      for (const RowPlan::CachedValue& c : rows->cached_values)
        os << "  computation " << c.first << " keeps " << c.value.str() << " for later ones\n";
    }
    if (rows->reads_only) os << "  reads rows only (one value per row)\n";
    if (rows->peeled) os << "  peeled from " << rows->row_start.str() << "\n";
    for (const RowPlan::OnePass& pass : rows->one_pass)
      os << "  computations " << pass.first << " and " << pass.first + 1 << " in one pass: "
         << (pass.online_softmax ? pass.base2 ? "online softmax (exp2)" : "online softmax" : "Welford") << "\n";
  } else if (const auto* cols = std::get_if<ColumnPlan>(&plan.shape)) {
    os << "  form: " << cols->form_reason << "\n";
    os << "  V " << cols->width << ": " << cols->width_reason << "\n";
    if (cols->form != ColumnPlan::Form::OutputsPerThread)
      os << "  " << cols->slices_x << " x " << cols->slices_y << " slices\n";
    if (!cols->unroll_reason.empty()) os << "  unroll " << cols->unroll << ": " << cols->unroll_reason << "\n";
  } else if (const auto* scan = std::get_if<ScanPlan>(&plan.shape)) {
    os << "  form: " << scan->form_reason << "\n";
    if (scan->form == ScanPlan::Form::ThreadsPerLine) {
      os << "  V " << scan->width << ": " << scan->width_reason << "\n";
      os << "  T " << scan->threads << " threads per line, " << scan->lines_per_block
         << " line(s) per block: " << scan->threads_reason << "\n";
    }
    if (scan->form == ScanPlan::Form::LineChunks)
      os << "  " << scan->lines_per_block << " lines x " << scan->chunks << " chunks per block\n";
  }
  for (const auto& [extreme, arg] : plan.extreme_pairs)
    os << "  computations " << extreme << " and " << arg << " in one {value, position} accumulator\n";
  if (plan.outline_math) os << "  math calls out of line: " << plan.outline_reason << "\n";
  for (const auto& [sum, sq] : plan.welford_pairs)
    os << "  computations " << sum << " and " << sq << " in one Welford accumulator (one pass)\n";
  for (int buffer : plan.reciprocal_divisors)
    os << "  divisions by buffer " << buffer << " (a softmax denominator) multiply by its reciprocal\n";
  for (const auto& [buffer, h] : plan.hints)
    os << "  hints buffer " << buffer << ": row-indexed " << (h.row_indexed.empty() ? "none" : h.row_indexed)
       << ", other " << (h.other.empty() ? "none" : h.other) << ": " << h.reason << "\n";
  return os.str();
}

}  // namespace hi
