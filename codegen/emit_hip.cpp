#include "codegen/emit_hip.h"

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


namespace hi {
namespace {

constexpr int kMaxBlock = 256;
constexpr int64_t kMinColumnThreads = 32768;

/// C type of a value of `t` in registers: 16-bit floats compute in float.
std::string value_type(DType t) {
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
std::string storage_type(DType t) {
  if (t == DType::BFloat16) return "hi_bfloat16";
  if (t == DType::Float16) return "hi_half";
  return value_type(t);
}

/// Accumulator type of a reduction (bool reduces as int so it can be shuffled and summed).
std::string accumulator_type(DType t) { return t == DType::Bool ? "int" : value_type(t); }

bool is_arg_reduction(ReduceOp op) { return op == ReduceOp::ArgMax || op == ReduceOp::ArgMin; }

std::string reduce_functor(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "hi_sum_op";
    case ReduceOp::Prod: return "hi_prod_op";
    case ReduceOp::Max: return "hi_max_op";
    case ReduceOp::Min: return "hi_min_op";
    case ReduceOp::Any: return "hi_any_op";
    case ReduceOp::All: return "hi_all_op";
    case ReduceOp::ArgMax: return "hi_argmax_op";
    case ReduceOp::ArgMin: return "hi_argmin_op";
  }
  return "?";
}

std::string literal(double v, DType t) {
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
std::string libm(const char* name, DType t) { return std::string(name) + (t == DType::Float64 ? "" : "f"); }

std::string convert(const std::string& x, DType from, DType to) {
  if (from == to) return x;
  switch (to) {
    case DType::BFloat16: return "hi_round_bf16((float)(" + x + "))";
    case DType::Float16: return "hi_round_half((float)(" + x + "))";
    case DType::Bool: return "((" + x + ") != 0)";
    default: return "(" + value_type(to) + ")(" + x + ")";
  }
}

std::string store_value(const std::string& x, DType t) {
  if (t == DType::BFloat16) return "hi_make_bf16(" + x + ")";
  if (t == DType::Float16) return "hi_make_half(" + x + ")";
  return x;
}

/// Index text in C: Index::str() spells min/max as `min(a, b)` / `max(a, b)`, which C and HIP do not define for
/// mixed integer types; the prelude's hi_imin / hi_imax take int64.
std::string index_c(std::string s) {
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

/// How an index walks memory across the lanes `lane` = 0..V-1 of a vector group.
enum class LaneAccess {
  Uniform,     ///< the same element for every lane (a broadcast)
  Contiguous,  ///< consecutive elements: base + lane
  Gather,      ///< anything else: one scalar access per lane
};

LaneAccess classify_lanes(const Index& f, const std::string& lane, const VarRanges& ranges) {
  std::vector<std::string> vars = free_vars(f);
  if (std::find(vars.begin(), vars.end(), lane) == vars.end()) return LaneAccess::Uniform;
  Index base = simplify(substitute(f, {{lane, Index(0)}}), ranges);
  return simplify(f - base, ranges) == Index::var(lane) ? LaneAccess::Contiguous : LaneAccess::Gather;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int pow2_at_least(int64_t v) {
  int p = 1;
  while (p < v) p *= 2;
  return p;
}

/// A row kernel whose rows fit in registers: each row is read once into `per_thread` = groups*width values per
/// thread, reduced and written from there ("persistent" reduction).
struct PersistentRows {
  int width = 1;            ///< V: consecutive columns per vector access
  int threads = 1;          ///< T: threads per row (a power of two)
  int groups = 1;           ///< E: vector groups per thread
  int rows_per_block = 1;   ///< rows sharing a block (T < warp) or 1
  int64_t rows = 0, length = 0;
};

class KernelPrinter {
 public:
  KernelPrinter(const LoopProgram& p, const Kernel& k, const Target& target)
      : p_(p), k_(k), target_(target), ranges_(kernel_var_ranges(p, k)) {}

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
      a.type = "hi_arg_acc<" + vt + ">";
      a.result_suffix = ".i";
      a.result_dtype = DType::Int64;
      return a;
    }
    a.type = vt;
    a.result_dtype = value->dtype == DType::Bool ? DType::Int32 : value->dtype;
    return a;
  }
  /// What one element contributes; prints its computation, so call it inside the reduction loop.
  std::string accumulated_element(const Expr& body) {
    const Expr& value = body->args[0];
    std::string vt = accumulator_type(value->dtype);
    if (is_arg_reduction(body->reduce_op()))
      return "hi_make_arg((" + vt + ")(" + expr(value) + "), (hi_i64)(" + expr(body->args[1]) + "))";
    return "(" + vt + ")(" + expr(value) + ")";
  }

  void collect_params();
  void emit_pointwise();
  /// The body of a one-element-per-iteration pointwise loop over `i`.
  void emit_pointwise_elements();
  /// Row kernel whose rows do not fit in registers (or have symbolic sizes): threads stride over the row in each
  /// phase, re-reading it from memory (caches).
  void emit_row_loop();
  void emit_row_persistent(const PersistentRows& plan);
  std::optional<PersistentRows> persistent_rows() const;
  /// Loads and stores of this kernel's computations as (index over the kernel's variables, element dtype).
  std::vector<std::pair<Index, DType>> accesses() const;
  /// The widest V (8, 4, 2) that gives the most contiguous accesses when `var` = g*V + j, or 1 when none is
  /// contiguous. `extent` is var's extent; with `divisible`, V must divide it.
  int vector_width(const std::string& var, int64_t extent, bool divisible) const;
  /// Distinct direct loads in `bodies` of buffers no computation of this kernel writes.
  std::vector<Expr> external_loads(const std::vector<Expr>& bodies) const;
  /// Declares `storage name[count]` filled with hi_load_vec by the caller, and makes `load` print as `name[lane]`.
  std::string vector_array(const Expr& load, int count, const std::string& lane);
  /// Inside vector groups (ranges_ has the lane variable j): the index of lane 0, and whether lanes are contiguous.
  Index lane0(const Index& f) const { return simplify(substitute(f, {{"j", Index(0)}}), ranges_); }
  bool contiguous_lanes(const Index& f) const { return classify_lanes(f, "j", ranges_) == LaneAccess::Contiguous; }
  /// Every computation's body and store index with the kernel variables replaced by `lanes`.
  void lane_views(const std::map<std::string, Index>& lanes, std::vector<Expr>& bodies, std::vector<Index>& stores) {
    for (int ci : k_.computations) {
      const Computation& c = p_.computations[ci];
      bodies.push_back(substitute_vars(kernel_body(c), lanes, ranges_));
      stores.push_back(simplify(substitute(kernel_store_index(c), lanes), ranges_));
    }
  }
  static int narrowest_bytes(const std::vector<std::pair<Index, DType>>& accesses) {
    int bytes = 8;
    for (const auto& a : accesses) bytes = std::min(bytes, static_cast<int>(dtype_bytes(a.second)));
    return std::max(1, bytes);
  }
  bool produced_here(int buffer) const {
    for (int c : k_.computations)
      if (p_.computations[c].buffer == buffer) return true;
    return false;
  }
  void emit_column_reduction();
  /// Row kernels: a per-row value (reduction result, row epilogue) in a register for later phases, and stored by
  /// thread 0 when other kernels read it.
  void keep_row_value(const Computation& c, const std::string& value);
  /// Stores computation `c` (body already substituted) into its buffer, or keeps it in a register if local.
  void store(const Computation& c, const std::string& value, DType value_dtype, const Index& where);
  Expr kernel_body(const Computation& c) {
    return substitute_vars(c.body, kernel_var_map(c, k_), ranges_);
  }
  Index kernel_store_index(const Computation& c) {
    return simplify(substitute(Computation::store_index(p_.buffers[c.buffer]),
                               kernel_var_map(c, k_)),
                    ranges_);
  }
  bool is_local(int buffer) const {
    return std::find(k_.local_buffers.begin(), k_.local_buffers.end(), buffer) != k_.local_buffers.end();
  }

  const LoopProgram& p_;
  const Kernel& k_;
  const Target& target_;
  VarRanges ranges_;
  std::ostringstream body_;
  int indent_ = 1;
  int next_temp_ = 0;
  std::vector<std::unordered_map<size_t, std::vector<std::pair<Expr, std::string>>>> cse_{1};
  std::map<int, std::string> local_value_;  // buffer -> C variable holding this thread's value
  std::map<int, std::string> param_of_buffer_;
  std::vector<KernelParam> params_;
  std::string index_type_ = "hi_i64";
  int block_ = kMaxBlock;
  Index grid_;
  int next_array_ = 0;
  /// Row kernels: the condition under which a thread stores its row's per-row values.
  std::string row_store_guard_ = "threadIdx.x == 0";
};

std::string KernelPrinter::expr(const Expr& e) {
  if (e->op == ExprOp::Constant) return literal(e->value, e->dtype);
  for (auto it = cse_.rbegin(); it != cse_.rend(); ++it) {
    auto found = it->find(e.hash());
    if (found == it->end()) continue;
    for (const auto& [known, name] : found->second)
      if (known == e) return name;
  }
  if (e->op == ExprOp::Load) {
    auto local = local_value_.find(e->buffer);
    if (local != local_value_.end()) return local->second;
  }
  std::string value = compute(e);
  std::string name = temp();
  line("const " + value_type(e->dtype) + " " + name + " = " + value + ";");
  cse_.back()[e.hash()].emplace_back(e, name);
  return name;
}

std::string KernelPrinter::compute(const Expr& e) {
  const ExprNode& n = *e;
  auto arg = [&](int i) { return expr(n.args[i]); };
  DType t = n.dtype;
  switch (n.op) {
    case ExprOp::Load: {
      const Buffer& b = p_.buffers[n.buffer];
      Index where = n.index;
      if (!n.args.empty()) {
        // An indirect load: evaluate its index operands, then address through them (see Expr::indirect_load).
        std::map<std::string, Index> bound;
        for (size_t k = 0; k < n.args.size(); ++k) bound[indirect_var(k)] = Index::var(expr(n.args[k]));
        where = substitute(where, bound);
      }
      std::string ref = param_name(n.buffer) + "[" + index(where) + "]";
      return is_floating(b.dtype) && dtype_bytes(b.dtype) == 2 ? "hi_to_float(" + ref + ")" : ref;
    }
    case ExprOp::Constant: return literal(n.value, t);
    case ExprOp::IndexValue: return "(" + value_type(t) + ")(" + index(n.index) + ")";
    case ExprOp::Cast: return convert(arg(0), n.args[0]->dtype, t);
    case ExprOp::Where: return arg(0) + " ? " + arg(1) + " : " + arg(2);
    case ExprOp::Reduce: throw std::logic_error("Reduce printed as a value");
    case ExprOp::Unary: {
      std::string x = arg(0);
      DType xt = n.args[0]->dtype;
      bool integral = !is_floating(xt);
      switch (n.unary_op()) {
        case UnaryOp::Neg: return "-" + x;
        case UnaryOp::Abs: return "hi_abs(" + x + ")";
        case UnaryOp::Exp: return "hi_exp(" + x + ")";
        case UnaryOp::Exp2: return "hi_exp2(" + x + ")";
        case UnaryOp::Expm1: return "hi_expm1(" + x + ")";
        case UnaryOp::Log: return "hi_log(" + x + ")";
        case UnaryOp::Log2: return "hi_log2(" + x + ")";
        case UnaryOp::Log10: return "hi_log10(" + x + ")";
        case UnaryOp::Log1p: return "hi_log1p(" + x + ")";
        case UnaryOp::Sqrt: return "hi_sqrt(" + x + ")";
        case UnaryOp::Rsqrt: return "hi_rsqrt(" + x + ")";
        case UnaryOp::Reciprocal: return literal(1, t) + " / " + x;
        case UnaryOp::Sin: return "hi_sin(" + x + ")";
        case UnaryOp::Cos: return "hi_cos(" + x + ")";
        case UnaryOp::Tan: return "hi_tan(" + x + ")";
        case UnaryOp::Asin: return libm("asin", t) + "(" + x + ")";
        case UnaryOp::Acos: return libm("acos", t) + "(" + x + ")";
        case UnaryOp::Atan: return libm("atan", t) + "(" + x + ")";
        case UnaryOp::Sinh: return libm("sinh", t) + "(" + x + ")";
        case UnaryOp::Cosh: return libm("cosh", t) + "(" + x + ")";
        case UnaryOp::Tanh: return "hi_tanh(" + x + ")";
        case UnaryOp::Asinh: return libm("asinh", t) + "(" + x + ")";
        case UnaryOp::Acosh: return libm("acosh", t) + "(" + x + ")";
        case UnaryOp::Atanh: return libm("atanh", t) + "(" + x + ")";
        case UnaryOp::Sigmoid: return "hi_sigmoid(" + x + ")";
        case UnaryOp::Relu: return "hi_relu(" + x + ")";
        case UnaryOp::Erf: return "hi_erf(" + x + ")";
        case UnaryOp::Erfc: return libm("erfc", t) + "(" + x + ")";
        case UnaryOp::GeluErf: return "hi_gelu(" + x + ")";
        case UnaryOp::GeluTanh: return "hi_gelu_tanh(" + x + ")";
        case UnaryOp::Silu: return "hi_silu(" + x + ")";
        case UnaryOp::Floor: return integral ? x : "hi_floor(" + x + ")";
        case UnaryOp::Ceil: return integral ? x : "hi_ceil(" + x + ")";
        case UnaryOp::Round: return integral ? x : "hi_round(" + x + ")";
        case UnaryOp::Trunc: return integral ? x : "hi_trunc(" + x + ")";
        case UnaryOp::Sign: return "hi_sign(" + x + ")";
        case UnaryOp::LogicalNot: return "!" + x;
        case UnaryOp::BitwiseNot: return xt == DType::Bool ? "!" + x : "~" + x;
        case UnaryOp::IsNan: return "hi_isnan(" + x + ")";
        case UnaryOp::IsInf: return "hi_isinf(" + x + ")";
        case UnaryOp::Square: return x + " * " + x;
        case UnaryOp::Lgamma: return libm("lgamma", t) + "(" + x + ")";
        case UnaryOp::Digamma: return "hi_digamma(" + x + ")";
        case UnaryOp::Erfinv: return "hi_erfinv(" + x + ")";
      }
      break;
    }
    case ExprOp::Binary: {
      std::string a = arg(0), b = arg(1);
      DType at = n.args[0]->dtype;
      bool fp = is_floating(at);
      auto infix = [&](const char* op) { return a + " " + op + " " + b; };
      switch (n.binary_op()) {
        case BinaryOp::Add: return infix("+");
        case BinaryOp::Sub: return infix("-");
        case BinaryOp::Mul: return infix("*");
        case BinaryOp::Div: return fp ? "hi_div(" + a + ", " + b + ")" : infix("/");
        case BinaryOp::FloorDiv: return "hi_floordiv(" + a + ", " + b + ")";
        case BinaryOp::TruncDiv: return fp ? "hi_trunc(" + a + " / " + b + ")" : infix("/");
        case BinaryOp::Remainder: return "hi_remainder(" + a + ", " + b + ")";
        case BinaryOp::Fmod: return fp ? "hi_fmod(" + a + ", " + b + ")" : infix("%");
        case BinaryOp::Pow:
          return fp ? "hi_pow(" + a + ", " + b + ")"
                    : "(" + value_type(t) + ")hi_pow((double)" + a + ", (double)" + b + ")";
        case BinaryOp::Maximum: return "hi_maximum(" + a + ", " + b + ")";
        case BinaryOp::Minimum: return "hi_minimum(" + a + ", " + b + ")";
        case BinaryOp::Atan2: return libm("atan2", at) + "(" + a + ", " + b + ")";
        case BinaryOp::Hypot: return libm("hypot", at) + "(" + a + ", " + b + ")";
        case BinaryOp::Eq: return infix("==");
        case BinaryOp::Ne: return infix("!=");
        case BinaryOp::Lt: return infix("<");
        case BinaryOp::Le: return infix("<=");
        case BinaryOp::Gt: return infix(">");
        case BinaryOp::Ge: return infix(">=");
        case BinaryOp::LogicalAnd: return "(" + a + " != 0) && (" + b + " != 0)";
        case BinaryOp::LogicalOr: return "(" + a + " != 0) || (" + b + " != 0)";
        case BinaryOp::LogicalXor: return "(" + a + " != 0) != (" + b + " != 0)";
        case BinaryOp::BitwiseAnd: return infix("&");
        case BinaryOp::BitwiseOr: return infix("|");
        case BinaryOp::BitwiseXor: return infix("^");
        case BinaryOp::ShiftLeft: return infix("<<");
        case BinaryOp::ShiftRight: return infix(">>");
        case BinaryOp::Fmax: return "hi_fmax(" + a + ", " + b + ")";
        case BinaryOp::Fmin: return "hi_fmin(" + a + ", " + b + ")";
        case BinaryOp::Copysign: return "hi_copysign(" + a + ", " + b + ")";
        case BinaryOp::Nextafter: return libm("nextafter", at) + "(" + a + ", " + b + ")";
      }
      break;
    }
  }
  throw std::logic_error("unprintable expression " + e.str());
}

void KernelPrinter::collect_params() {
  std::set<int> read, written;
  std::set<std::string> symbols;
  auto note_index = [&](const Index& i) {
    for (const std::string& v : free_vars(i))
      if (p_.size_ranges.count(v)) symbols.insert(v);
  };
  for (int c : k_.computations) {
    const Computation& comp = p_.computations[c];
    visit(comp.body, [&](const Expr& e) {
      if (e->index.defined()) note_index(e->index);
      if (e->op == ExprOp::Load && !is_local(e->buffer)) read.insert(e->buffer);
    });
    if (!is_local(comp.buffer)) written.insert(comp.buffer);
    for (const Index& s : comp.sizes) note_index(s);
    for (const Index& s : comp.reduce_sizes) note_index(s);
  }
  std::set<int> all = read;
  all.insert(written.begin(), written.end());
  for (int b : all) {
    KernelParam kp;
    kp.kind = KernelParam::Kind::Buffer;
    kp.buffer = b;
    kp.read_only = !written.count(b);
    const Buffer& buf = p_.buffers[b];
    const char* prefix = buf.kind == BufferKind::Input ? "in_ptr" : buf.kind == BufferKind::Output ? "out_ptr" : "buf_ptr";
    kp.name = prefix + std::to_string(b);
    param_of_buffer_[b] = kp.name;
    params_.push_back(kp);
  }
  for (const std::string& s : symbols) {
    KernelParam kp;
    kp.kind = KernelParam::Kind::Size;
    kp.symbol = s;
    kp.name = s;
    params_.push_back(kp);
  }
  // 32-bit index arithmetic when every extent this kernel touches is known to fit.
  int64_t largest = 0;
  bool known = symbols.empty();
  for (int b : all) {
    auto n = simplify(p_.buffers[b].storage_elements(), p_.size_ranges).as_const();
    if (!n) known = false;
    else largest = std::max(largest, *n);
  }
  auto total = simplify(k_.numel * k_.row_length, p_.size_ranges).as_const();
  if (!total) known = false;
  else largest = std::max(largest, *total);
  if (known && largest < (int64_t{1} << 31) - 4096) index_type_ = "int";
}

void KernelPrinter::store(const Computation& c, const std::string& value, DType value_dtype, const Index& where) {
  const Buffer& b = p_.buffers[c.buffer];
  std::string v = convert(value, value_dtype, b.dtype);
  if (is_local(c.buffer)) {
    std::string name = "v_" + b.name;
    line("const " + value_type(b.dtype) + " " + name + " = " + v + ";");
    local_value_[c.buffer] = name;
    return;
  }
  line(param_name(c.buffer) + "[" + index(where) + "] = " + store_value(v, b.dtype) + ";");
}

std::vector<std::pair<Index, DType>> KernelPrinter::accesses() const {
  std::vector<std::pair<Index, DType>> out;
  for (int ci : k_.computations) {
    const Computation& c = p_.computations[ci];
    Expr body = substitute_vars(c.body, kernel_var_map(c, k_), ranges_);
    for (const Expr& load : external_loads({body})) out.emplace_back(load->index, p_.buffers[load->buffer].dtype);
    if (!is_local(c.buffer))
      out.emplace_back(simplify(substitute(Computation::store_index(p_.buffers[c.buffer]), kernel_var_map(c, k_)),
                                ranges_),
                       p_.buffers[c.buffer].dtype);
  }
  return out;
}

int KernelPrinter::vector_width(const std::string& var, int64_t extent, bool divisible) const {
  std::vector<std::pair<Index, DType>> all = accesses();
  int best = 1, best_score = 0;
  for (int v = std::min(8, 16 / narrowest_bytes(all)); v >= 2; v /= 2) {
    if (extent < v || (divisible && extent % v != 0)) continue;
    VarRanges r = ranges_;
    r["g"] = Range::loop(extent / v);
    r["j"] = Range::loop(v);
    std::map<std::string, Index> lanes{{var, Index::var("g") * v + Index::var("j")}};
    int score = 0;
    for (const auto& a : all)
      if (classify_lanes(simplify(substitute(a.first, lanes), r), "j", r) == LaneAccess::Contiguous) ++score;
    if (score > best_score) {
      best = v;
      best_score = score;
    }
  }
  return best;
}

std::vector<Expr> KernelPrinter::external_loads(const std::vector<Expr>& bodies) const {
  std::vector<Expr> out;
  for (const Expr& body : bodies)
    visit(body, [&](const Expr& e) {
      if (e->op != ExprOp::Load || !e->args.empty() || produced_here(e->buffer)) return;
      if (std::find(out.begin(), out.end(), e) == out.end()) out.push_back(e);
    });
  return out;
}

std::string KernelPrinter::vector_array(const Expr& load, int count, const std::string& lane) {
  const Buffer& b = p_.buffers[load->buffer];
  std::string name = "ld" + std::to_string(next_array_++);
  line(storage_type(b.dtype) + " " + name + "[" + std::to_string(count) + "];");
  std::string element = name + "[" + lane + "]";
  cse_.back()[load.hash()].emplace_back(load, is_floating(b.dtype) && dtype_bytes(b.dtype) == 2
                                                  ? "hi_to_float(" + element + ")"
                                                  : element);
  return name;
}

void KernelPrinter::emit_pointwise_elements() {
  for (int ci : k_.computations) {
    const Computation& c = p_.computations[ci];
    Expr body = kernel_body(c);
    store(c, expr(body), body->dtype, kernel_store_index(c));
  }
}

void KernelPrinter::emit_pointwise() {
  const std::string I = index_type_, blk = std::to_string(block_);
  auto n = simplify(k_.numel, p_.size_ranges).as_const();
  const int v = n ? vector_width("i", *n, false) : 1;
  if (v == 1) {
    open("for (" + I + " i = (" + I + ")blockIdx.x * " + blk + " + threadIdx.x; i < " + index(k_.numel) +
         "; i += (" + I + ")gridDim.x * " + blk + ")");
    emit_pointwise_elements();
    close();
    grid_ = floordiv(k_.numel + (block_ - 1), Index(block_));
    return;
  }
  // Vector groups: elements i = g*V + j, j < V. A thread takes E groups a block apart per iteration (all loads
  // first, so E*V*bytes are in flight), moving contiguous operands with vector loads and stores; the last
  // numel % V elements take the scalar loop.
  const int64_t groups = *n / v;
  const int e_count = static_cast<int>(
      std::max<int64_t>(1, std::min<int64_t>(32 / (v * narrowest_bytes(accesses())), ceil_div(groups, block_))));
  const int64_t span = int64_t{block_} * e_count;
  grid_ = Index(ceil_div(groups, span));
  ranges_["g"] = Range::loop(groups);
  ranges_["j"] = Range::loop(v);
  const std::map<std::string, Index> lanes{{"i", Index::var("g") * v + Index::var("j")}};
  const std::string vs = std::to_string(v), es = std::to_string(e_count), per_thread = std::to_string(e_count * v);
  const std::string gs = std::to_string(groups);
  const bool ragged = groups % span != 0;
  line("// " + vs + " elements per vector group, " + es + " groups per thread");
  open("for (" + I + " g0 = (" + I + ")blockIdx.x * " + std::to_string(span) + " + threadIdx.x; g0 < " + gs +
       "; g0 += (" + I + ")gridDim.x * " + std::to_string(span) + ")");
  std::vector<Expr> bodies;
  std::vector<Index> stores;
  lane_views(lanes, bodies, stores);
  auto open_groups = [&] {
    line("#pragma unroll");
    open("for (int e = 0; e < " + es + "; ++e)");
    line("const " + I + " g = g0 + e * " + blk + ";");
  };
  auto guard = ragged ? "if (g < " + gs + ") " : std::string();
  std::vector<std::pair<std::string, const Expr*>> vector_loads;
  std::vector<Expr> loads = external_loads(bodies);
  for (const Expr& load : loads)
    if (contiguous_lanes(load->index))
      vector_loads.emplace_back(vector_array(load, e_count * v, "q"), &load);
  if (!vector_loads.empty()) {
    open_groups();
    for (const auto& [name, load] : vector_loads) {
      Index base = lane0((*load)->index);
      line(guard + "hi_load_vec<" + vs + ">(" + param_name((*load)->buffer) + " + (" + index(base) + "), &" + name +
           "[e * " + vs + "]);");
    }
    close();
  }
  std::vector<std::string> store_arrays(k_.computations.size());
  for (size_t n_c = 0; n_c < k_.computations.size(); ++n_c) {
    const Computation& c = p_.computations[k_.computations[n_c]];
    if (is_local(c.buffer) || !contiguous_lanes(stores[n_c])) continue;
    store_arrays[n_c] = "st" + std::to_string(next_array_++);
    line(storage_type(p_.buffers[c.buffer].dtype) + " " + store_arrays[n_c] + "[" + per_thread + "];");
  }
  line("#pragma unroll");
  open("for (int q = 0; q < " + per_thread + "; ++q)");
  line("const " + I + " g = g0 + (q / " + vs + ") * " + blk + ";");
  line("const int j = q % " + vs + ";");
  if (ragged) open("if (g < " + gs + ")");
  for (size_t n_c = 0; n_c < k_.computations.size(); ++n_c) {
    const Computation& c = p_.computations[k_.computations[n_c]];
    const Buffer& b = p_.buffers[c.buffer];
    // Later computations of the group read this value from the register, never from memory.
    std::string name = "v_" + b.name;
    line("const " + value_type(b.dtype) + " " + name + " = " +
         convert(expr(bodies[n_c]), bodies[n_c]->dtype, b.dtype) + ";");
    local_value_[c.buffer] = name;
    if (is_local(c.buffer)) continue;
    if (!store_arrays[n_c].empty())
      line(store_arrays[n_c] + "[q] = " + store_value(name, b.dtype) + ";");
    else
      line(param_name(c.buffer) + "[" + index(stores[n_c]) + "] = " + store_value(name, b.dtype) + ";");
  }
  if (ragged) close();
  close();
  if (std::any_of(store_arrays.begin(), store_arrays.end(), [](const std::string& a) { return !a.empty(); })) {
    open_groups();
    for (size_t n_c = 0; n_c < k_.computations.size(); ++n_c) {
      if (store_arrays[n_c].empty()) continue;
      int b = p_.computations[k_.computations[n_c]].buffer;
      Index base = lane0(stores[n_c]);
      line(guard + "hi_store_vec<" + vs + ">(" + param_name(b) + " + (" + index(base) + "), &" + store_arrays[n_c] +
           "[e * " + vs + "]);");
    }
    close();
  }
  close();
  local_value_.clear();
  if (*n % v == 0) return;
  open("for (" + I + " i = " + std::to_string(groups * v) + " + (" + I + ")blockIdx.x * " + blk +
       " + threadIdx.x; i < " + std::to_string(*n) + "; i += (" + I + ")gridDim.x * " + blk + ")");
  emit_pointwise_elements();
  close();
}

std::optional<PersistentRows> KernelPrinter::persistent_rows() const {
  auto rows = simplify(k_.numel, p_.size_ranges).as_const();
  auto length = simplify(k_.row_length, p_.size_ranges).as_const();
  if (!rows || !length || *rows < 1 || *length < 1) return std::nullopt;
  PersistentRows plan;
  plan.rows = *rows;
  plan.length = *length;
  plan.width = vector_width("col", *length, true);
  const int64_t groups = *length / plan.width;
  const int warp = target_.warp_size;
  if (groups <= 4 * warp) {
    plan.threads = std::min(warp, pow2_at_least(groups));  // a warp (or part of one) per row: shuffles only
  } else {
    const int target_groups = std::max(1, 16 / plan.width);  // about 16 values per thread and operand
    plan.threads = std::min(1024, pow2_at_least(ceil_div(groups, target_groups)));
  }
  plan.groups = static_cast<int>(ceil_div(groups, plan.threads));
  if (plan.groups * plan.width > 32) return std::nullopt;  // too long for registers
  plan.rows_per_block = plan.threads <= warp ? 256 / plan.threads : 1;
  return plan;
}

void KernelPrinter::emit_row_persistent(const PersistentRows& plan) {
  const int v = plan.width, t = plan.threads, e_count = plan.groups, rpb = plan.rows_per_block;
  const int64_t groups = plan.length / v;
  const std::string I = index_type_, vs = std::to_string(v), ts = std::to_string(t), rows = std::to_string(plan.rows);
  const std::string per_thread = std::to_string(e_count * v);
  ranges_["cg"] = Range::loop(groups);
  ranges_["j"] = Range::loop(v);
  const std::map<std::string, Index> lanes{{"col", Index::var("cg") * v + Index::var("j")}};
  line("// persistent rows: " + ts + " threads per row, " + per_thread + " values per thread in registers, " + vs +
       " per vector access");
  if (rpb == 1) {
    open("for (" + I + " row = blockIdx.x; row < " + rows + "; row += gridDim.x)");
    line("const int lane = threadIdx.x;");
  } else {
    // Several rows per block; the last block's spare row slots recompute the last row and store nothing, so every
    // lane reaches the shuffles and every load stays in bounds.
    const std::string rp = std::to_string(rpb);
    open("for (" + I + " row0 = (" + I + ")blockIdx.x * " + rp + "; row0 < " + rows + "; row0 += (" + I +
         ")gridDim.x * " + rp + ")");
    line("const int lane = threadIdx.x % " + ts + ";");
    line("const bool row_ok = row0 + (" + I + ")(threadIdx.x / " + ts + ") < " + rows + ";");
    line("const " + I + " row = row_ok ? row0 + (" + I + ")(threadIdx.x / " + ts + ") : " +
         std::to_string(plan.rows - 1) + ";");
    row_store_guard_ = "lane == 0 && row_ok";
  }
  const bool ragged = int64_t{e_count} * t > groups;
  const std::string valid = ragged ? "cg < " + std::to_string(groups) : "";
  auto guarded = [&](const std::string& extra, const std::string& statement) {
    std::string cond = valid;
    if (!extra.empty()) cond = cond.empty() ? extra : cond + " && " + extra;
    line(cond.empty() ? statement : "if (" + cond + ") " + statement);
  };
  const std::string store_ok = rpb == 1 ? "" : "row_ok";

  std::vector<Expr> bodies;
  std::vector<Index> stores;
  lane_views(lanes, bodies, stores);
  // Contiguous operands are read with vector loads: once per row into registers when several phases use them (the
  // row itself), else at the start of the one phase that does (weights), so they hold no registers elsewhere.
  struct RowLoad {
    Expr load;
    Index base;
    std::vector<size_t> users;  ///< positions in k_.computations
  };
  std::vector<RowLoad> row_loads;
  for (const Expr& load : external_loads(bodies)) {
    if (!contiguous_lanes(load->index)) continue;
    RowLoad l{load, lane0(load->index), {}};
    for (size_t n_c = 0; n_c < bodies.size(); ++n_c) {
      std::vector<Expr> used = external_loads({bodies[n_c]});
      if (std::find(used.begin(), used.end(), load) != used.end()) l.users.push_back(n_c);
    }
    row_loads.push_back(std::move(l));
  }
  auto open_groups = [&] {
    line("#pragma unroll");
    open("for (int e = 0; e < " + std::to_string(e_count) + "; ++e)");
    line("const int cg = e * " + ts + " + lane;");
  };
  auto open_values = [&] {
    line("#pragma unroll");
    open("for (int q = 0; q < " + per_thread + "; ++q)");
    line("const int cg = (q / " + vs + ") * " + ts + " + lane;");
    line("const int j = q % " + vs + ";");
    if (ragged) open("if (" + valid + ")");
  };
  auto close_values = [&] {
    if (ragged) close();
    close();
  };
  // Declares and fills the arrays of the loads that `shared` (used by several phases) selects, or that phase
  // `phase` alone uses.
  auto load_rows = [&](bool shared, size_t phase) {
    std::vector<std::pair<std::string, const RowLoad*>> arrays;
    for (const RowLoad& l : row_loads) {
      bool mine = shared ? l.users.size() > 1 : (l.users.size() == 1 && l.users[0] == phase);
      if (mine) arrays.emplace_back(vector_array(l.load, e_count * v, "q"), &l);
    }
    if (arrays.empty()) return;
    open_groups();
    for (const auto& [name, l] : arrays)
      guarded("", "hi_load_vec<" + vs + ">(" + param_name(l->load->buffer) + " + (" + index(l->base) + "), &" + name +
                      "[e * " + vs + "]);");
    close();
  };
  load_rows(true, 0);

  // Expensive per-element values that several phases compute (softmax's exp(x - max) in the sum and in the
  // output) are computed once and kept in a register array by the first phase that needs them.
  std::vector<std::pair<Expr, size_t>> cached;  // value, first phase computing it
  {
    auto per_element = [&](const Expr& e) {
      bool found = false;
      visit(e, [&](const Expr& x) {
        if (x->op != ExprOp::Load && x->op != ExprOp::IndexValue) return;
        if (x->op == ExprOp::Load && produced_here(x->buffer)) {
          const Computation& pc = p_.computations[p_.producer(x->buffer)];
          if (!pc.is_reduction() && !is_row_epilogue(pc, k_)) found = true;
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
        case UnaryOp::Square: case UnaryOp::Sign: return false;
        default: return true;
      }
    };
    std::vector<std::vector<Expr>> computed(bodies.size());  // per-element nodes of each phase
    for (size_t n_c = 0; n_c < bodies.size(); ++n_c) {
      const Computation& c = p_.computations[k_.computations[n_c]];
      if (is_row_epilogue(c, k_)) continue;
      const Expr root = c.is_reduction() ? bodies[n_c]->args[0] : bodies[n_c];
      visit(root, [&](const Expr& x) {
        if (!x->args.empty() && x->op != ExprOp::Load && per_element(x)) computed[n_c].push_back(x);
      });
      // Top-down over this phase: the largest expensive values an earlier phase computed.
      std::function<void(const Expr&)> reuse = [&](const Expr& x) {
        for (size_t earlier = 0; earlier < n_c; ++earlier)
          if (std::find(computed[earlier].begin(), computed[earlier].end(), x) != computed[earlier].end()) {
            if (!expensive(x)) break;
            bool known = std::any_of(cached.begin(), cached.end(), [&](const auto& p) { return p.first == x; });
            if (!known) cached.emplace_back(x, earlier);
            return;
          }
        for (const Expr& a : x->args) reuse(a);
      };
      reuse(root);
    }
  }
  std::vector<std::string> cache_arrays;
  for (const auto& [value, first] : cached) {
    cache_arrays.push_back("cv" + std::to_string(next_array_++));
    line(value_type(value->dtype) + " " + cache_arrays.back() + "[" + per_thread + "];");
  }
  // Inside phase `n_c`'s value loop: save the values it is first to compute; after the loop: reuse them.
  auto save_cached = [&](size_t n_c) {
    for (size_t k = 0; k < cached.size(); ++k)
      if (cached[k].second == n_c) line(cache_arrays[k] + "[q] = " + expr(cached[k].first) + ";");
  };
  auto reuse_cached = [&](size_t n_c) {
    for (size_t k = 0; k < cached.size(); ++k)
      if (cached[k].second == n_c)
        cse_.back()[cached[k].first.hash()].emplace_back(cached[k].first, cache_arrays[k] + "[q]");
  };

  // Which per-element values later computations of the kernel read (kept in register arrays across phases).
  std::set<int> read_later;
  for (size_t n_c = 0; n_c < bodies.size(); ++n_c)
    visit(bodies[n_c], [&](const Expr& e) {
      if (e->op == ExprOp::Load && produced_here(e->buffer)) read_later.insert(e->buffer);
    });

  for (size_t n_c = 0; n_c < k_.computations.size(); ++n_c) {
    const Computation& c = p_.computations[k_.computations[n_c]];
    const Expr& body = bodies[n_c];
    const Buffer& b = p_.buffers[c.buffer];
    if (is_row_epilogue(c, k_)) {
      line("// " + c.name + ": row epilogue");
      keep_row_value(c, convert(expr(body), body->dtype, b.dtype));
      continue;
    }
    if (!c.is_reduction()) {
      line("// " + c.name + ": epilogue");
      const bool contiguous = !is_local(c.buffer) && contiguous_lanes(stores[n_c]);
      std::string st, kept;
      if (contiguous) {
        st = "st" + std::to_string(next_array_++);
        line(storage_type(b.dtype) + " " + st + "[" + per_thread + "];");
      }
      if (read_later.count(c.buffer)) {
        kept = "pw_" + b.name;
        line(value_type(b.dtype) + " " + kept + "[" + per_thread + "];");
      }
      open("");
      load_rows(false, n_c);
      open_values();
      std::string value = expr(body);
      std::string name = "v_" + b.name;
      line("const " + value_type(b.dtype) + " " + name + " = " + convert(value, body->dtype, b.dtype) + ";");
      if (!kept.empty()) line(kept + "[q] = " + name + ";");
      if (contiguous) line(st + "[q] = " + store_value(name, b.dtype) + ";");
      else if (!is_local(c.buffer))
        line((store_ok.empty() ? "" : "if (" + store_ok + ") ") + param_name(c.buffer) + "[" + index(stores[n_c]) +
             "] = " + store_value(name, b.dtype) + ";");
      save_cached(n_c);
      close_values();
      close();
      reuse_cached(n_c);
      if (contiguous) {
        Index base = lane0(stores[n_c]);
        open_groups();
        guarded(store_ok, "hi_store_vec<" + vs + ">(" + param_name(c.buffer) + " + (" + index(base) + "), &" + st +
                              "[e * " + vs + "]);");
        close();
      }
      if (!kept.empty()) local_value_[c.buffer] = kept + "[q]";
      continue;
    }
    const ReduceOp op = body->reduce_op();
    const std::string functor = reduce_functor(op), acc = "acc_" + b.name;
    line("// " + c.name + ": " + std::string(reduce_op_name(op)) + " over the row");
    Accumulation a = accumulation(body);
    line(a.type + " " + acc + " = " + functor + "::identity<" + a.type + ">();");
    open("");
    load_rows(false, n_c);
    open_values();
    line(acc + " = " + functor + "::combine(" + acc + ", " + accumulated_element(body) + ");");
    save_cached(n_c);
    close_values();
    close();
    reuse_cached(n_c);
    if (t <= target_.warp_size) {
      line(acc + " = hi_group_reduce<" + functor + ">(" + acc + ", " + ts + ");");
    } else {
      line("__shared__ " + a.type + " smem_" + b.name + "[" + std::to_string(t / target_.warp_size) + "];");
      line(acc + " = hi_block_reduce<" + functor + ">(" + acc + ", smem_" + b.name + ");");
    }
    keep_row_value(c, convert(acc + a.result_suffix, a.result_dtype, b.dtype));
  }
  close();
  local_value_.clear();
}

void KernelPrinter::emit_row_loop() {
  // One block per row (grid-stride over rows); threads stride over the row's columns, in vector groups of V
  // consecutive columns when the row length allows.
  std::string rows = index(k_.numel), len = index(k_.row_length), blk = std::to_string(block_);
  auto length = simplify(k_.row_length, p_.size_ranges).as_const();
  const int v = length ? vector_width("col", *length, true) : 1;
  const std::string vs = std::to_string(v);
  std::map<std::string, Index> lanes;
  if (v > 1) {
    ranges_["cg"] = Range::loop(*length / v);
    ranges_["j"] = Range::loop(v);
    lanes["col"] = Index::var("cg") * v + Index::var("j");
  }
  // Opens the loop over this thread's columns: `col`, or vector groups `cg` with their contiguous loads issued
  // first and lanes `j`. Returns the store array of `c` (empty when it stores lane by lane or not at all).
  auto open_columns = [&](const Expr& body, const Computation* stored, const Index& where) {
    if (v == 1) {
      open("for (" + index_type_ + " col = threadIdx.x; col < " + len + "; col += " + blk + ")");
      return std::string();
    }
    open("for (" + index_type_ + " cg = threadIdx.x; cg < " + std::to_string(*length / v) + "; cg += " + blk + ")");
    for (const Expr& load : external_loads({body})) {
      if (!contiguous_lanes(load->index)) continue;
      Index base = lane0(load->index);
      std::string name = vector_array(load, v, "j");
      line("hi_load_vec<" + vs + ">(" + param_name(load->buffer) + " + (" + index(base) + "), " + name + ");");
    }
    std::string st;
    if (stored && !is_local(stored->buffer) && contiguous_lanes(where)) {
      st = "st" + std::to_string(next_array_++);
      line(storage_type(p_.buffers[stored->buffer].dtype) + " " + st + "[" + vs + "];");
    }
    line("#pragma unroll");
    open("for (int j = 0; j < " + vs + "; ++j)");
    return st;
  };
  auto close_columns = [&](const std::string& st, const Computation* stored, const Index& where) {
    if (v == 1) {
      close();
      return;
    }
    close();
    if (!st.empty()) {
      Index base = lane0(where);
      line("hi_store_vec<" + vs + ">(" + param_name(stored->buffer) + " + (" + index(base) + "), " + st + ");");
    }
    close();
  };
  open("for (" + index_type_ + " row = blockIdx.x; row < " + rows + "; row += gridDim.x)");
  for (int ci : k_.computations) {
    const Computation& c = p_.computations[ci];
    Expr body = kernel_body(c);
    Index where = kernel_store_index(c);
    if (v > 1) {
      body = substitute_vars(body, lanes, ranges_);
      where = simplify(substitute(where, lanes), ranges_);
    }
    const Buffer& b = p_.buffers[c.buffer];
    if (is_row_epilogue(c, k_)) {
      // One value per row: every thread computes it (it may feed later phases), thread 0 stores it.
      line("// " + c.name + ": row epilogue");
      keep_row_value(c, convert(expr(body), body->dtype, b.dtype));
      continue;
    }
    if (!c.is_reduction()) {
      line("// " + c.name + ": epilogue");
      std::string st = open_columns(body, &c, where);
      if (st.empty()) {
        store(c, expr(body), body->dtype, where);
      } else {
        line(st + "[j] = " + store_value(convert(expr(body), body->dtype, b.dtype), b.dtype) + ";");
      }
      close_columns(st, &c, where);
      continue;
    }
    const ReduceOp op = body->reduce_op();
    std::string functor = reduce_functor(op);
    std::string acc = "acc_" + b.name;
    line("// " + c.name + ": " + std::string(reduce_op_name(op)) + " over the row");
    Accumulation a = accumulation(body);
    std::string acc_t = a.type;
    line(acc_t + " " + acc + " = " + functor + "::identity<" + acc_t + ">();");
    open_columns(body, nullptr, where);
    line(acc + " = " + functor + "::combine(" + acc + ", " + accumulated_element(body) + ");");
    close_columns("", nullptr, where);
    line("__shared__ " + acc_t + " smem_" + b.name + "[" + std::to_string(std::max(1, block_ / target_.warp_size)) + "];");
    line(acc + " = hi_block_reduce<" + functor + ">(" + acc + ", smem_" + b.name + ");");
    keep_row_value(c, convert(acc + a.result_suffix, a.result_dtype, b.dtype));
  }
  close();
}

void KernelPrinter::keep_row_value(const Computation& c, const std::string& value) {
  // Every thread holds the row's value in a register, and later phases of this kernel read it from there even when
  // it also goes to memory: reading it back from memory would race with the thread that stores it.
  const Buffer& b = p_.buffers[c.buffer];
  std::string name = "v_" + b.name;
  line("const " + value_type(b.dtype) + " " + name + " = " + value + ";");
  local_value_[c.buffer] = name;
  if (!is_local(c.buffer))
    line("if (" + row_store_guard_ + ") " + param_name(c.buffer) + "[" + index(kernel_store_index(c)) +
         "] = " + store_value(name, b.dtype) + ";");
}

void KernelPrinter::emit_column_reduction() {
  const std::string I = index_type_, blk = std::to_string(block_);
  std::string numel = index(k_.numel), len = index(k_.row_length);
  auto n = simplify(k_.numel, p_.size_ranges).as_const();
  // Vector width only while enough threads remain to fill a GPU (one thread per output group and no other
  // parallelism here: short outputs are split into two reductions before this, see split_reductions).
  int v = n ? vector_width("i", *n, true) : 1;
  while (v > 1 && *n / v < kMinColumnThreads) v /= 2;
  grid_ = floordiv(k_.numel + (v * block_ - 1), Index(v * block_));
  if (v == 1) {
    open("for (" + I + " i = (" + I + ")blockIdx.x * " + blk + " + threadIdx.x; i < " + numel + "; i += (" + I +
         ")gridDim.x * " + blk + ")");
    for (int ci : k_.computations) {
      const Computation& c = p_.computations[ci];
      Expr body = kernel_body(c);
      const std::string functor = reduce_functor(body->reduce_op()), acc = "acc_" + p_.buffers[c.buffer].name;
      Accumulation a = accumulation(body);
      line(a.type + " " + acc + " = " + functor + "::identity<" + a.type + ">();");
      open("for (" + I + " r = 0; r < " + len + "; ++r)");
      line(acc + " = " + functor + "::combine(" + acc + ", " + accumulated_element(body) + ");");
      close();
      store(c, acc + a.result_suffix, a.result_dtype, kernel_store_index(c));
    }
    close();
    return;
  }
  // V neighbouring outputs per thread: each reduced step reads V consecutive elements with one vector load.
  const int64_t groups = *n / v;
  ranges_["g"] = Range::loop(groups);
  ranges_["j"] = Range::loop(v);
  const std::map<std::string, Index> lanes{{"i", Index::var("g") * v + Index::var("j")}};
  const std::string vs = std::to_string(v);
  line("// " + vs + " outputs per thread");
  open("for (" + I + " g = (" + I + ")blockIdx.x * " + blk + " + threadIdx.x; g < " + std::to_string(groups) +
       "; g += (" + I + ")gridDim.x * " + blk + ")");
  for (int ci : k_.computations) {
    const Computation& c = p_.computations[ci];
    const Buffer& b = p_.buffers[c.buffer];
    Expr body = substitute_vars(kernel_body(c), lanes, ranges_);
    Index where = simplify(substitute(kernel_store_index(c), lanes), ranges_);
    const std::string functor = reduce_functor(body->reduce_op()), acc = "acc_" + b.name;
    Accumulation a = accumulation(body);
    line(a.type + " " + acc + "[" + vs + "];");
    line("#pragma unroll");
    line("for (int j = 0; j < " + vs + "; ++j) " + acc + "[j] = " + functor + "::identity<" + a.type + ">();");
    line("#pragma unroll 4");
    open("for (" + I + " r = 0; r < " + len + "; ++r)");
    for (const Expr& load : external_loads({body})) {
      if (!contiguous_lanes(load->index)) continue;
      Index base = lane0(load->index);
      std::string name = vector_array(load, v, "j");
      line("hi_load_vec<" + vs + ">(" + param_name(load->buffer) + " + (" + index(base) + "), " + name + ");");
    }
    line("#pragma unroll");
    open("for (int j = 0; j < " + vs + "; ++j)");
    line(acc + "[j] = " + functor + "::combine(" + acc + "[j], " + accumulated_element(body) + ");");
    close();
    close();
    const bool contiguous = !is_local(c.buffer) && contiguous_lanes(where);
    std::string st = "st" + std::to_string(next_array_++);
    if (contiguous) line(storage_type(b.dtype) + " " + st + "[" + vs + "];");
    line("#pragma unroll");
    open("for (int j = 0; j < " + vs + "; ++j)");
    std::string value = convert(acc + "[j]" + a.result_suffix, a.result_dtype, b.dtype);
    if (contiguous) line(st + "[j] = " + store_value(value, b.dtype) + ";");
    else store(c, acc + "[j]" + a.result_suffix, a.result_dtype, where);
    close();
    if (contiguous) {
      Index base = lane0(where);
      line("hi_store_vec<" + vs + ">(" + param_name(c.buffer) + " + (" + index(base) + "), " + st + ");");
    }
  }
  close();
  local_value_.clear();
}

EmittedKernel KernelPrinter::emit(std::string& text) {
  EmittedKernel ek;
  ek.name = k_.name;
  ek.kind = k_.kind;
  collect_params();
  switch (k_.kind) {
    case KernelKind::Pointwise:
      block_ = kMaxBlock;
      emit_pointwise();
      break;
    case KernelKind::RowReduction: {
      if (auto plan = persistent_rows()) {
        block_ = plan->threads * plan->rows_per_block;
        emit_row_persistent(*plan);
        grid_ = Index(ceil_div(plan->rows, plan->rows_per_block));
      } else {
        // Rows too long for registers: 1024 threads per row stream them (256 for rows of unknown length).
        auto len = simplify(k_.row_length, p_.size_ranges).as_const();
        int want = len ? static_cast<int>(std::min<int64_t>(*len, 1024)) : kMaxBlock;
        block_ = std::max(target_.warp_size, (want + target_.warp_size - 1) / target_.warp_size * target_.warp_size);
        emit_row_loop();
        grid_ = k_.numel;
      }
      ek.needs_sync = true;
      break;
    }
    case KernelKind::ColumnReduction:
      block_ = kMaxBlock;
      emit_column_reduction();
      break;
  }
  ek.grid = simplify(grid_, p_.size_ranges);
  ek.block = block_;
  ek.params = params_;

  std::ostringstream os;
  os << "// " << k_.name << ": " << kernel_kind_name(k_.kind) << ", computes";
  for (int ci : k_.computations) os << " " << p_.computations[ci].name;
  os << "\n// from graph nodes:";
  std::vector<std::string> seen;
  for (int ci : k_.computations)
    for (const auto& o : p_.computations[ci].origins)
      if (std::find(seen.begin(), seen.end(), o) == seen.end()) {
        seen.push_back(o);
        os << " " << o;
      }
  os << "\nextern \"C\" __global__ void __launch_bounds__(" << block_ << ") " << k_.name << "(";
  for (size_t i = 0; i < params_.size(); ++i) {
    const KernelParam& kp = params_[i];
    if (i) os << ", ";
    if (kp.kind == KernelParam::Kind::Size) {
      os << "hi_i64 " << kp.name;
      continue;
    }
    os << (kp.read_only ? "const " : "") << storage_type(p_.buffers[kp.buffer].dtype) << "* __restrict__ " << kp.name;
  }
  os << ") {\n" << body_.str() << "}\n";
  text = os.str();
  return ek;
}

std::string cpu_trampoline(const EmittedKernel& k, const LoopProgram& p) {
  std::ostringstream os;
  os << "extern \"C\" void " << k.name << "__hi_cpu(void** args) { " << k.name << "(";
  for (size_t i = 0; i < k.params.size(); ++i) {
    const KernelParam& kp = k.params[i];
    std::string type = kp.kind == KernelParam::Kind::Size
                           ? "hi_i64"
                           : std::string(kp.read_only ? "const " : "") + storage_type(p.buffers[kp.buffer].dtype) + "*";
    os << (i ? ", " : "") << "*(" << type << "*)args[" << i << "]";
  }
  os << "); }\n";
  return os.str();
}

std::string target_macro(const Target& t) {
  switch (t.kind) {
    case TargetKind::Amd: return "HI_TARGET_AMD";
    case TargetKind::Nvidia: return "HI_TARGET_NVIDIA";
    case TargetKind::Cpu: return "HI_TARGET_CPU";
  }
  return "?";
}

std::string target_prelude_name(const Target& t) {
  switch (t.kind) {
    case TargetKind::Amd: return "amd.h";
    case TargetKind::Nvidia: return "nvidia.h";
    case TargetKind::Cpu: return "cpu.h";
  }
  return "?";
}

constexpr std::string_view kKernelsBegin = "// ---- kernels ----\n";

}  // namespace

std::string_view codegen_version() { return "hipinductor-codegen-1"; }

EmittedModule emit_hip(const LoopProgram& program, const Target& target) {
  if (program.kernels.empty() && !program.computations.empty())
    throw std::invalid_argument("emit_hip: program has no kernels (run fuse_kernels first)");
  EmittedModule m;
  m.target = target;
  std::ostringstream src;
  // The graph's name stays out of the source: the source is the cache key, and the same graph compiled under
  // another name (a new process numbers its graphs anew) must hit the cache.
  src << "// Generated by hipinductor (" << codegen_version() << ") for " << target.id() << ": "
      << program.kernels.size() << " kernel(s).\n";
  src << "#define HI_WARP_SIZE " << target.warp_size << "\n#define " << target_macro(target) << " 1\n";
  std::string_view tp = embedded_prelude(target_prelude_name(target));
  std::string_view common = embedded_prelude("common.h");
  if (tp.empty() || common.empty()) throw std::logic_error("emit_hip: preludes were not embedded at build time");
  src << tp << "\n" << common << "\n" << kKernelsBegin;
  std::string trampolines;
  for (const Kernel& k : program.kernels) {
    std::string text;
    m.kernels.push_back(KernelPrinter(program, k, target).emit(text));
    src << "\n" << text;
    if (target.kind == TargetKind::Cpu) trampolines += cpu_trampoline(m.kernels.back(), program);
  }
  if (!trampolines.empty()) src << "\n// cpu device entry points: args[i] points at the i-th argument\n" << trampolines;
  m.source = src.str();
  return m;
}

std::string kernels_text(const EmittedModule& m) {
  size_t pos = m.source.find(kKernelsBegin);
  std::string text = pos == std::string::npos ? m.source : m.source.substr(pos + kKernelsBegin.size());
  size_t tramp = text.find("\n// cpu device entry points");
  if (tramp != std::string::npos) text.resize(tramp + 1);
  return text;
}

}  // namespace hi
