// Internal to codegen/: the per-kernel printer and the helpers its emitters share. emit_hip.cpp plans each kernel
// (kernel_plan.h) and assembles a module from the printed kernels; kernel_printer.cpp prints expressions, parameters
// and the kernel signature; emit_pointwise.cpp, emit_rows.cpp and emit_columns.cpp each print one kernel shape as
// its plan says (docs/architecture.md). The printer takes no shape or launch decision of its own.
#pragma once

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

#include "codegen/emit_hip.h"
#include "codegen/kernel_lanes.h"
#include "codegen/kernel_plan.h"
#include "ir/moments.h"

namespace hi::codegen_detail {

/// C type of a value of `t` in registers: 16-bit floats compute in float.
inline std::string value_type(DType t) {
  switch (t) {
    case DType::Float32: case DType::Float16: case DType::BFloat16: return "float";
    case DType::Float64: return "double";
    case DType::Int64: return "hi_i64";
    case DType::Int32: return "int";
    case DType::Int16: return "hi_i16";
    case DType::Int8: return "hi_i8";
    case DType::UInt8: return "hi_u8";
    case DType::Bool: return "bool";
  }
  return "?";
}

/// C type of an element of `t` in memory.
inline std::string storage_type(DType t) {
  if (t == DType::BFloat16) return "hi_bfloat16";
  if (t == DType::Float16) return "hi_half";
  return value_type(t);
}

/// Whether reductions accumulate values of `t` in int: bool and the integers narrower than 32 bits, for which the
/// preludes have no shuffles or identities (hi_lowest / hi_highest) of their own.
inline bool accumulates_in_int(DType t) {
  return t == DType::Bool || t == DType::UInt8 || t == DType::Int8 || t == DType::Int16;
}
/// Accumulator type of a reduction of values of `t`.
inline std::string accumulator_type(DType t) { return accumulates_in_int(t) ? "int" : value_type(t); }

inline std::string reduce_functor(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "hi_sum_op";
    case ReduceOp::Prod: return "hi_prod_op";
    case ReduceOp::Max: return "hi_max_op";
    case ReduceOp::Min: return "hi_min_op";
    case ReduceOp::Any: return "hi_any_op";
    case ReduceOp::All: return "hi_all_op";
    case ReduceOp::ArgMax: return "hi_argmax_op";
    case ReduceOp::ArgMin: return "hi_argmin_op";
    case ReduceOp::LogAddExp: return "hi_logaddexp_op";
  }
  return "?";
}

inline std::string literal(double v, DType t) {
  if (t == DType::Bool) return v != 0 ? "true" : "false";
  if (!is_floating(t)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%lldLL", static_cast<long long>(v));
    std::string s = buf;
    return t == DType::Int64 ? "(hi_i64)" + s : "(" + value_type(t) + ")" + s;
  }
  bool f64 = t == DType::Float64;
  if (std::isnan(v)) return f64 ? "hi_nan_d()" : "hi_nan_f()";
  if (std::isinf(v)) return std::string(v < 0 ? "-" : "") + (f64 ? "hi_inf_d()" : "hi_inf_f()");
  char buf[64];
  std::snprintf(buf, sizeof buf, f64 ? "%.17g" : "%.9g", v);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return f64 ? s : s + "f";
}

/// Name of a C math function for a float or double operand: "sinf" / "sin".
inline std::string libm(const char* name, DType t) { return std::string(name) + (t == DType::Float64 ? "" : "f"); }

inline std::string convert(const std::string& x, DType from, DType to) {
  if (from == to) return x;
  switch (to) {
    case DType::BFloat16: return "hi_round_bf16((float)(" + x + "))";
    case DType::Float16: return "hi_round_half((float)(" + x + "))";
    case DType::Bool: return "((" + x + ") != 0)";
    default: return "(" + value_type(to) + ")(" + x + ")";
  }
}

inline std::string store_value(const std::string& x, DType t) {
  if (t == DType::BFloat16) return "hi_make_bf16(" + x + ")";
  if (t == DType::Float16) return "hi_make_half(" + x + ")";
  return x;
}

/// Index text in C: Index::str() spells min/max as `min(a, b)` / `max(a, b)`, which C and HIP do not define for
/// mixed integer types; the prelude's hi_imin / hi_imax take int64.
inline std::string index_c(std::string s) {
  for (const char* name : {"min(", "max("}) {
    for (size_t pos = s.find(name); pos != std::string::npos; pos = s.find(name, pos + 4)) {
      bool word_start = pos == 0 || !(std::isalnum(static_cast<unsigned char>(s[pos - 1])) || s[pos - 1] == '_');
      if (!word_start) continue;
      s.replace(pos, 3, name[1] == 'i' ? "hi_imin" : "hi_imax");
      pos += 4;
    }
  }
  return s;
}

/// Inclusive bounds of a value (KernelPrinter::value_bounds).
struct ValueBounds {
  double lo, hi;
};

class KernelPrinter {
 public:
  /// Prints kernel `k` of `p` as `plan` (plan_kernel's for `target`) says.
  KernelPrinter(const LoopProgram& p, const Kernel& k, const Target& target, const KernelPlan& plan)
      : p_(p), k_(k), target_(target), plan_(plan), ranges_(kernel_var_ranges(p, k)) {}

  EmittedKernel emit(std::string& text);

 private:
  // ---- lines and scopes ----
  void line(const std::string& s) { body_ << std::string(indent_ * 2, ' ') << s << "\n"; }
  void open(const std::string& s) {
    line(s.empty() ? "{" : s + " {");
    ++indent_;
    cse_.emplace_back();
  }
  void close() {
    --indent_;
    cse_.pop_back();
    line("}");
  }
  std::string temp() { return "t" + std::to_string(next_temp_++); }

  std::string index(const Index& i) { return index_c(simplify(i, ranges_).str()); }
  const std::string& param_name(int buffer) { return param_of_buffer_.at(buffer); }
  std::string expr(const Expr& e);
  std::string compute(const Expr& e);

  // ---- int64 values in 32 bits ----
  // An int64 value whose bounds the kernel proves (index values, constants and the arithmetic, conversions and
  // clamps between them: the source coordinates of upsampling and gathers through computed indices) is computed in
  // int: a float-to-int64 conversion, a 64-bit multiply or compare takes several instructions where the int one
  // takes one. Every int64 node of such a value fits in 32 bits, so no int operation wraps.
  /// Inclusive bounds of `e`'s value under ranges_ (floats widened for their rounding), or nullopt.
  std::optional<ValueBounds> value_bounds(const Expr& e);
  /// Whether int64 node `e` is computed in int: its bounds and those of every int64 operand fit in 32 bits.
  bool narrowable(const Expr& e);
  /// The int32 twin of narrowable `e` (or of an int64 constant that fits).
  Expr narrowed(const Expr& e);
  /// Whether int64 operand `a` is printed as int for a consumer computed in int.
  bool narrows(const Expr& a) {
    return a->op == ExprOp::Constant ? std::fabs(a->value) < 2147483647.0 : narrowable(a);
  }
  /// Memos of the above for the ranges_ they were computed under (cleared when ranges_ changes); the Expr held
  /// keeps its node, the key, alive.
  struct ValueFacts {
    Expr e;
    std::optional<std::optional<ValueBounds>> bounds;
    std::optional<bool> narrowable;
    Expr narrowed;
  };
  ValueFacts& facts(const Expr& e) { return facts_.try_emplace(e.operator->(), ValueFacts{e, {}, {}, {}}).first->second; }
  /// Clears the memos when ranges_ changed since they were filled.
  void sync_facts();
  std::unordered_map<const ExprNode*, ValueFacts> facts_;
  std::string facts_ranges_;
  /// `call` (a library math call, `name(args)`) through its out-of-line version (KernelPlan::outline_math).
  static std::string outlined_call(const std::string& call);
  /// Stores into bf16/f16 buffers round once. A float value is stored as is (hi_make_bf16 rounds it as a cast
  /// would: rounding twice gives what rounding once does), and a cast of a float to the buffer's dtype is stored
  /// from the float it rounds. Unless something else reads the cast's value, the compiler then drops it, and with
  /// it a conversion there and back (2 of gelu's ~30 instructions per element).
  static bool narrow_float(DType t) { return t == DType::BFloat16 || t == DType::Float16; }
  static const Expr& store_source(const Expr& e, DType to) {
    bool rounding = narrow_float(to) && e->op == ExprOp::Cast && e->dtype == to && e->args[0]->dtype == DType::Float32;
    return rounding ? e->args[0] : e;
  }
  std::string stored(const std::string& value, DType from, DType to) {
    if (narrow_float(to) && from == DType::Float32) return store_value(value, to);
    return store_value(convert(value, from, to), to);
  }
  std::string stored(const Expr& e, DType to) {
    const Expr& source = store_source(e, to);
    return stored(expr(source), source->dtype, to);
  }

  /// Accumulator type, the value one element contributes, and the accumulated result with its dtype, of the
  /// reduction `body` (argmax/argmin accumulate a {value, position} pair and yield the position).
  struct Accumulation {
    std::string type, result_suffix;
    DType result_dtype;
  };
  Accumulation accumulation(const Expr& body) {
    const Expr& value = body->args[0];
    Accumulation a;
    std::string vt = accumulator_type(value->dtype);
    if (is_arg_reduction(body->reduce_op())) {
      a.type = "hi_arg_acc<" + vt + ", " + position_type() + ">";
      a.result_suffix = ".i";
      a.result_dtype = plan_.positions32 ? DType::Int32 : DType::Int64;
      return a;
    }
    a.type = vt;
    a.result_dtype = accumulates_in_int(value->dtype) ? DType::Int32 : value->dtype;
    return a;
  }
  /// KernelPlan::extreme_pairs seen from the max (min) computation `n`: the arg reduction whose accumulator it
  /// prints, if any.
  std::optional<size_t> paired_arg(size_t n) const {
    auto it = plan_.extreme_pairs.find(n);
    if (it == plan_.extreme_pairs.end()) return std::nullopt;
    return it->second;
  }
  /// Whether computation `n` is an arg reduction its max (min) computes (and prints nothing of its own).
  bool computed_with_extreme(size_t n) const {
    for (const auto& [extreme, arg] : plan_.extreme_pairs)
      if (arg == n) return true;
    return false;
  }
  /// C type of arg reductions' positions (KernelPlan::positions32).
  std::string position_type() const { return plan_.positions32 ? "int" : "hi_i64"; }
  /// What one element contributes; prints its computation, so call it inside the reduction loop.
  std::string accumulated_element(const Expr& body) {
    const Expr& value = body->args[0];
    std::string vt = accumulator_type(value->dtype);
    if (is_arg_reduction(body->reduce_op()))
      return "hi_make_arg((" + vt + ")(" + expr(value) + "), (" + position_type() + ")(" + expr(body->args[1]) + "))";
    return "(" + vt + ")(" + expr(value) + ")";
  }

  /// Column kernels: the accumulator computation `n` prints and the computations stored from it. One serves two
  /// where the plan pairs them: a max with its argmax (KernelPlan::extreme_pairs: the argmax's {value, position}
  /// pairs), a variance's sums (KernelPlan::welford_pairs: a Welford accumulator, the sum stored as n * mean).
  /// `body(m)` is computation m's reduction as the kernel form views it.
  struct ColumnAccumulator {
    Expr body;  ///< the reduction whose values it accumulates
    std::string functor;
    Accumulation accumulation;  ///< its type
    std::optional<WelfordStep> welford;
    size_t named = 0;                                      ///< the computation whose buffer names it
    std::vector<std::pair<size_t, Accumulation>> results;  ///< computations stored from it, with suffix and dtype
  };
  ColumnAccumulator column_accumulator(size_t n, const std::function<Expr(size_t)>& body);
  /// What one reduced step contributes to `a`; prints its computation, so call it inside the reduction loop.
  std::string column_element(const ColumnAccumulator& a);
  /// A Welford accumulator `acc` of a group's V columns after one more reduced step (column_element's) at the
  /// weight `weight` they share (hi_welford_weight); prints its computation, as column_element.
  std::string column_welford_step(const ColumnAccumulator& a, const std::string& acc, const std::string& weight);
  /// Whether computation `n` is stored from another's accumulator (and prints nothing of its own).
  bool accumulated_with_other(size_t n) const {
    for (const auto& [sum, sq] : plan_.welford_pairs)
      if (sq == n) return true;
    return computed_with_extreme(n);
  }

  void collect_params();
  void emit_pointwise(const PointwisePlan& plan);
  /// Pointwise kernels reading operands transposed: the plan's tiled loads read into shared memory with lanes along
  /// xp, then the computations computed and stored with lanes along xq, the tiled loads read from the tiles.
  void emit_transposed_tiles(const PointwisePlan& plan);
  /// The body of a one-element-per-iteration pointwise loop over `i`.
  void emit_pointwise_elements();
  /// Row kernel whose rows do not fit in registers (or have symbolic sizes): threads stride over the row in each
  /// phase, re-reading it from memory (caches).
  void emit_row_loop(const RowPlan& plan);
  /// Row kernel whose rows fit in registers: each row is read once into E*V values per thread, reduced and written
  /// from there ("persistent" reduction).
  void emit_row_persistent(const RowPlan& plan);
  /// Distinct direct loads in `bodies` of buffers no computation of this kernel writes.
  std::vector<Expr> external_loads(const std::vector<Expr>& bodies) const {
    return codegen_detail::external_loads(p_, k_, bodies);
  }
  /// Declares `storage name[count]` filled with hi_load_vec by the caller, and makes `load` print as `name[lane]`.
  std::string vector_array(const Expr& load, int count, const std::string& lane);
  /// "hi_load_vec<V>" / "hi_store_vec<V>" (`op` "load" or "store") for V elements of `buffer` from lane-0 index
  /// `base`, or the "_aligned" variant without the run-time alignment check where the access is provably aligned to
  /// its chunk: workspace buffers (aligned offsets), and inputs / outputs of a graph with `align`.
  std::string vector_fn(const char* op, int buffer, const Index& base, int v) const;
  /// The plan's cache hint of a vector load of `buffer` from lane-0 index `base` ("" for none).
  std::string load_hint(int buffer, const Index& base) const;
  /// The statement `vector_fn(...)(param + (base), data);`: V elements of `buffer` from lane-0 index `base`.
  std::string vector_call(const char* op, int buffer, const Index& base, int v, const std::string& data) {
    return vector_fn(op, buffer, base, v) + "(" + param_name(buffer) + " + (" + index(base) + "), " + data + ");";
  }
  /// One vector group per thread (lane `j`): loads every lane-contiguous external load of `body` into a V-element
  /// array that `body` then reads.
  void load_group(const Expr& body, int v) {
    for (const Expr& load : external_loads({body}))
      if (contiguous_lanes(load->index))
        line(vector_call("load", load->buffer, lane0(load->index), v, vector_array(load, v, "j")));
  }
  /// Makes `load` print as `name[lane]` too: an array vector_array declared for another load.
  void alias_vector_array(const Expr& load, const std::string& name, const std::string& lane);
  /// Inside vector groups (ranges_ has the lane variable j): the index of lane 0, and whether lanes are contiguous.
  Index lane0(const Index& f) const { return codegen_detail::lane0(f, ranges_); }
  bool contiguous_lanes(const Index& f) const { return codegen_detail::contiguous_lanes(f, ranges_); }
  /// Every computation's body and store index with the kernel variables replaced by `lanes`.
  void lane_views(const std::map<std::string, Index>& lanes, std::vector<Expr>& bodies, std::vector<Index>& stores) {
    codegen_detail::lane_views(p_, k_, lanes, ranges_, bodies, stores);
  }
  /// Column kernels over `groups` groups of V outputs: lane_views with output i = g*V + j (g < groups, j < V).
  void column_lane_views(const Index& groups, int v, std::vector<Expr>& bodies, std::vector<Index>& stores) {
    ranges_["g"] = groups.is_const() ? Range::loop(groups.value()) : Range{0, std::nullopt};
    ranges_["j"] = Range::loop(v);
    lane_views({{"i", Index::var("g") * v + Index::var("j")}}, bodies, stores);
  }
  /// Pointwise and column kernels: whether computation `n` of the kernel (at `where` over lanes j) is stored with
  /// vector stores from an array.
  bool vector_store(size_t n, const Index& where) const {
    return !is_local(p_.computations[k_.computations[n]].buffer) && contiguous_lanes(where);
  }
  bool produced_here(int buffer) const { return codegen_detail::produced_here(p_, k_, buffer); }
  void emit_column_reduction(const ColumnPlan& plan);
  /// Scan kernels as their plan says (emit_scans.cpp).
  void emit_scan(const ScanPlan& plan);
  /// LineChunks: each thread's chunk read for its total, then scanned from the totals of the chunks before it.
  void emit_scan_chunks(const ScanPlan& plan, const Computation& c);
  /// ThreadsPerLine: the exclusive prefix `pre` and the total `tot` of the T threads' totals of each line (`tot`
  /// holds this thread's on entry).
  void emit_scan_across_threads(const ScanPlan& plan, const std::string& functor, const std::string& type);
  /// Column kernel with TX outputs x TY row slices per block, the slices combined through shared memory: for
  /// outputs too few to give each thread its own.
  void emit_column_slices(const Index& outputs, int tx_count, int ty_count);
  /// Column kernel with TX groups of V consecutive outputs (one vector load per row) x TY row slices per block, the
  /// slices combined through shared memory by slice 0, which stores: a single reduction (split reductions' stage 1,
  /// bias gradients) whose output groups are too few to fill the GPU.
  void emit_column_vector_slices(const Index& groups, int v, int tx_count, int ty_count, int unroll);
  /// Column kernels: `acc`[V], the accumulator `a` of V lanes (j) accumulated over the rows `loop` (a for header
  /// over r) opens, one vector load per contiguous operand and row, `unroll` rows unrolled (ColumnPlan::unroll).
  void accumulate_group(const ColumnAccumulator& a, const std::string& acc, int v, int unroll, const std::string& loop);
  /// Column kernels: `acc`[V] of computation `n` stored at `where` (over lanes j), with one vector store when the
  /// lanes are contiguous.
  void store_group(size_t n, const std::string& acc, const Accumulation& a, const Index& where, int v);
  /// Column kernels: the accumulators `results` (computation, accumulator array, accumulation) of V lanes and the
  /// kernel's pointwise epilogues (`bodies` and `stores` over lanes j) stored in one loop over the lanes, so that the
  /// epilogues read the results from registers; store_group per result where the kernel has no epilogue.
  struct GroupResult {
    size_t n;
    std::string acc;
    Accumulation a;
  };
  void store_groups(const std::vector<GroupResult>& results, const std::vector<Expr>& bodies,
                    const std::vector<Index>& stores, int v);
  /// Whether computation `n` of a column kernel is a pointwise epilogue (fuse_kernels: one value per output).
  bool column_epilogue(size_t n) const { return !p_.computations[k_.computations[n]].is_reduction(); }
  bool has_column_epilogues() const {
    for (size_t n = 0; n < k_.computations.size(); ++n)
      if (column_epilogue(n)) return true;
    return false;
  }
  /// Row kernels: a per-row value (reduction result, row epilogue) in a register for later phases, and stored by
  /// thread 0 when other kernels read it.
  void keep_row_value(const Computation& c, const std::string& value);
  /// Row kernels: keep_row_value of reduction `c` (body `body`) from its reduced accumulator `acc`, or, where `arg`
  /// is the argmax whose pairs `acc` holds (KernelPlan::extreme_pairs), of both: c from the pair's value.
  void keep_reduced(const Computation& c, const Expr& body, const Computation* arg, const std::string& acc,
                    const Accumulation& a);
  /// A row epilogue (one value per row) of `c`, printed and kept; false when `c` is not one.
  bool emit_row_epilogue(const Computation& c, const Expr& body);
  /// Opens a row reduction phase: its comment and accumulator, initialised to the reduction's identity.
  struct RowReduction {
    std::string functor, acc;
    Accumulation accumulation;
  };
  /// With `mean` (deviations_mean: c sums squared deviations from it), the accumulator is hi_deviation_sums.
  RowReduction begin_row_reduction(const Computation& c, const Expr& body, const Expr& mean = Expr());
  /// What one element contributes to a row reduction; with `deviations`, one begun with a mean (begin_row_reduction).
  std::string row_element(const Expr& body, bool deviations) {
    if (!deviations) return accumulated_element(body);
    const Expr& squared = body->args[0];
    return "hi_make_deviation_sums(" + expr(squared) + ", " + expr(squared->args[0]) + ")";
  }
  /// After a reduction of deviation sums `acc` (c's, from `mean`): c's value, the squared deviations about the
  /// corrected mean, and the corrected mean for every later read of `mean` in the kernel.
  void keep_deviations(const Computation& c, const Expr& mean, const std::string& acc);
  /// Later expressions of the kernel read `value` for `mean` (a row value's expression), instead of computing it.
  void take_mean(const Expr& mean, const std::string& value);
  /// Stores computation `c` (body already substituted) into its buffer, or keeps it in a register if local.
  void store(const Computation& c, const std::string& value, DType value_dtype, const Index& where);
  /// The same for the value of `e`, a cast that rounds a float to the buffer's dtype stored from the float.
  void store(const Computation& c, const Expr& e, const Index& where) {
    const Expr& source = store_source(e, p_.buffers[c.buffer].dtype);
    store(c, expr(source), source->dtype, where);
  }
  Expr kernel_body(const Computation& c) { return codegen_detail::kernel_body(p_, k_, c, ranges_); }
  Index kernel_store_index(const Computation& c) { return codegen_detail::kernel_store_index(p_, k_, c, ranges_); }
  bool is_local(int buffer) const { return codegen_detail::is_local(k_, buffer); }

  const LoopProgram& p_;
  const Kernel& k_;
  const Target& target_;
  const KernelPlan& plan_;
  VarRanges ranges_;
  std::ostringstream body_;
  int indent_ = 1;
  int next_temp_ = 0;
  std::vector<std::unordered_map<size_t, std::vector<std::pair<Expr, std::string>>>> cse_{1};
  std::map<int, std::string> local_value_;  // buffer -> C variable holding this thread's value
  std::map<int, std::string> param_of_buffer_;
  std::vector<KernelParam> params_;
  std::string index_type_ = "hi_i64";
  int next_array_ = 0;
  /// Row kernels: the condition under which a thread stores its row's per-row values.
  std::string row_store_guard_ = "threadIdx.x == 0";
  /// Peeled persistent rows: the row start their `head` aligns (head = -row_start modulo V), for vector_fn.
  std::optional<Index> head_aligns_;
  /// Persistent rows: operands staged in shared memory (RowPlan::staged), buffer -> {array, element bytes}, read
  /// there at the lane's column `staged_column_`, one word of padding after each 128 bytes (emit_row_persistent).
  std::map<int, std::pair<std::string, int>> staged_;
  std::string staged_column_;
  std::string staged_slot(int buffer, const std::string& col) const {
    const auto& [name, item] = staged_.at(buffer);
    const int shift = item == 1 ? 7 : item == 2 ? 6 : item == 4 ? 5 : 4;  // log2(128 / item)
    return name + "[(" + col + ") + (int)((unsigned)(" + col + ") >> " + std::to_string(shift) + ") * " +
           std::to_string(std::max(1, 4 / item)) + "]";
  }
  /// Row kernels: buffers whose value is one per row, held in a register (keep_row_value).
  std::set<int> row_values_;
  bool row_value(const Expr& e) const {
    return e->op == ExprOp::Load && e->args.empty() && row_values_.count(e->buffer) && local_value_.count(e->buffer);
  }
};

}  // namespace hi::codegen_detail
