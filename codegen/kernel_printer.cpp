// KernelPrinter: expressions, parameters, stores and the kernel signature (see kernel_printer.h).
#include "codegen/kernel_printer.h"

#include <cctype>
#include <string_view>
#include <unordered_set>

namespace hi::codegen_detail {

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
  if (plan_.outline_math && is_library_math_call(e)) value = outlined_call(value);
  std::string name = temp();
  line("const " + value_type(e->dtype) + " " + name + " = " + value + ";");
  cse_.back()[e.hash()].emplace_back(e, name);
  return name;
}

void KernelPrinter::sync_facts() {
  std::string key;
  for (const auto& [name, r] : ranges_)
    key += name + ":" + (r.lo ? std::to_string(*r.lo) : "-") + ":" + (r.hi ? std::to_string(*r.hi) : "-") + ";";
  if (key == facts_ranges_) return;
  facts_.clear();
  facts_ranges_ = std::move(key);
}

namespace {

constexpr double kInt32Max = 2147483647.0;

std::optional<ValueBounds> type_bounds(DType t) {
  switch (t) {
    case DType::Bool: return ValueBounds{0, 1};
    case DType::UInt8: return ValueBounds{0, 255};
    case DType::Int8: return ValueBounds{-128, 127};
    case DType::Int16: return ValueBounds{-32768, 32767};
    case DType::Int32: return ValueBounds{-kInt32Max - 1, kInt32Max};
    default: return std::nullopt;
  }
}

/// The largest magnitude any partial result of `i` can take as C evaluates it (sums and products left to right),
/// with variables' bounds from `r`; nullopt when a variable is unbounded.
std::optional<double> magnitude(const Index& i, const VarRanges& r) {
  switch (i.op()) {
    case IndexOp::Const: return std::fabs(static_cast<double>(i.value()));
    case IndexOp::Var: {
      auto it = r.find(i.name());
      if (it == r.end() || !it->second.lo || !it->second.hi) return std::nullopt;
      return std::max(std::fabs(static_cast<double>(*it->second.lo)), std::fabs(static_cast<double>(*it->second.hi)));
    }
    case IndexOp::Add:
    case IndexOp::Mul: {
      double m = i.op() == IndexOp::Add ? 0 : 1;
      for (const Index& a : i.args()) {
        auto am = magnitude(a, r);
        if (!am) return std::nullopt;
        m = i.op() == IndexOp::Add ? m + *am : m * *am;
      }
      return m;
    }
    default: {
      auto a = magnitude(i.args()[0], r), b = magnitude(i.args()[1], r);
      if (!a || !b) return std::nullopt;
      return std::max(*a, *b);
    }
  }
}

}  // namespace

std::optional<ValueBounds> KernelPrinter::value_bounds(const Expr& e) {
  ValueFacts& f = facts(e);
  if (f.bounds) return *f.bounds;
  using B = std::optional<ValueBounds>;
  const ExprNode& n = *e;
  const bool fp = is_floating(n.dtype);
  // A float result widened for its rounding: 2^-20 relative covers float's rounding (and NVIDIA's approximate
  // division's 2 ulp) at each step, 2^-7 a 16-bit float's.
  auto widen = [&](double lo, double hi) -> B {
    if (!std::isfinite(lo) || !std::isfinite(hi)) return std::nullopt;
    if (!fp) return ValueBounds{lo, hi};
    const double m = std::max(std::fabs(lo), std::fabs(hi)) * (dtype_bytes(n.dtype) == 2 ? 0x1p-7 : 0x1p-20) + 0x1p-60;
    return ValueBounds{lo - m, hi + m};
  };
  auto arg = [&](size_t k) { return value_bounds(n.args[k]); };
  B r;
  switch (n.op) {
    case ExprOp::Constant: r = widen(n.value, n.value); break;
    case ExprOp::IndexValue: {
      const Range b = bounds(n.index, ranges_);
      if (b.lo && b.hi) r = widen(static_cast<double>(*b.lo), static_cast<double>(*b.hi));
      break;
    }
    case ExprOp::Load: r = type_bounds(n.dtype); break;
    case ExprOp::Cast: {
      const B a = arg(0);
      const B limits = type_bounds(n.dtype);
      if (n.dtype == DType::Bool) r = limits;
      else if (!a) r = limits;
      else if (fp) r = widen(a->lo, a->hi);
      else {
        // To an integer: floats truncate toward zero; a value outside the type wraps (or, from a float, is
        // undefined), and only the type's own bounds hold.
        const double lo = std::trunc(a->lo), hi = std::trunc(a->hi), top = limits ? limits->hi : 0x1p62;
        r = lo >= (limits ? limits->lo : -0x1p62) && hi <= top ? B(ValueBounds{lo, hi}) : limits;
      }
      break;
    }
    case ExprOp::Where: {
      const B a = arg(1), b = arg(2);
      if (a && b) r = ValueBounds{std::min(a->lo, b->lo), std::max(a->hi, b->hi)};
      break;
    }
    case ExprOp::Unary: {
      if (n.dtype == DType::Bool) {
        r = type_bounds(DType::Bool);
        break;
      }
      const B a = arg(0);
      if (!a) break;
      switch (n.unary_op()) {
        case UnaryOp::Neg: r = widen(-a->hi, -a->lo); break;
        case UnaryOp::Abs:
          r = widen(a->lo <= 0 && a->hi >= 0 ? 0 : std::min(std::fabs(a->lo), std::fabs(a->hi)),
                    std::max(std::fabs(a->lo), std::fabs(a->hi)));
          break;
        case UnaryOp::Relu: r = widen(std::max(a->lo, 0.0), std::max(a->hi, 0.0)); break;
        case UnaryOp::Floor:
        case UnaryOp::Ceil:
        case UnaryOp::Round:
        case UnaryOp::Trunc: r = widen(std::floor(a->lo), std::ceil(a->hi)); break;
        default: break;
      }
      break;
    }
    case ExprOp::Binary: {
      if (n.dtype == DType::Bool) {
        r = type_bounds(DType::Bool);
        break;
      }
      const B a = arg(0), b = arg(1);
      if (!a || !b) break;
      auto corners = [&](double (*op)(double, double)) {
        const double c[4] = {op(a->lo, b->lo), op(a->lo, b->hi), op(a->hi, b->lo), op(a->hi, b->hi)};
        return widen(*std::min_element(c, c + 4), *std::max_element(c, c + 4));
      };
      const bool constant_divisor = !fp && b->lo == b->hi && b->lo > 0;
      switch (n.binary_op()) {
        case BinaryOp::Add: r = widen(a->lo + b->lo, a->hi + b->hi); break;
        case BinaryOp::Sub: r = widen(a->lo - b->hi, a->hi - b->lo); break;
        case BinaryOp::Mul: r = corners([](double x, double y) { return x * y; }); break;
        case BinaryOp::Div:
          if (fp && (b->lo > 0 || b->hi < 0)) r = corners([](double x, double y) { return x / y; });
          break;
        case BinaryOp::Maximum: r = widen(std::max(a->lo, b->lo), std::max(a->hi, b->hi)); break;
        case BinaryOp::Minimum: r = widen(std::min(a->lo, b->lo), std::min(a->hi, b->hi)); break;
        case BinaryOp::FloorDiv:
          if (constant_divisor) r = ValueBounds{std::floor(a->lo / b->lo), std::floor(a->hi / b->lo)};
          break;
        case BinaryOp::Remainder:
          if (constant_divisor) r = ValueBounds{0, b->lo - 1};
          break;
        default: break;
      }
      break;
    }
    case ExprOp::Reduce: break;
  }
  ValueFacts& g = facts(e);  // `f` may have moved while operands were added
  g.bounds = r;
  return r;
}

bool KernelPrinter::narrowable(const Expr& e) {
  if (e->dtype != DType::Int64) return false;
  if (auto known = facts(e).narrowable) return *known;
  bool ok = false;
  switch (e->op) {
    case ExprOp::IndexValue:
    case ExprOp::Cast:
    case ExprOp::Where: ok = true; break;
    case ExprOp::Unary:
      ok = e->unary_op() == UnaryOp::Neg || e->unary_op() == UnaryOp::Abs || e->unary_op() == UnaryOp::Relu;
      break;
    case ExprOp::Binary:
      switch (e->binary_op()) {
        case BinaryOp::Add:
        case BinaryOp::Sub:
        case BinaryOp::Mul:
        case BinaryOp::Maximum:
        case BinaryOp::Minimum:
        case BinaryOp::FloorDiv:
        case BinaryOp::Remainder: ok = true; break;
        default: break;
      }
      break;
    default: break;
  }
  if (ok) {
    const auto b = value_bounds(e);
    ok = b && b->lo >= -kInt32Max && b->hi <= kInt32Max;
  }
  for (size_t k = e->op == ExprOp::Where ? 1 : 0; ok && k < e->args.size(); ++k)
    if (e->args[k]->dtype == DType::Int64) ok = narrows(e->args[k]);
  facts(e).narrowable = ok;
  return ok;
}

Expr KernelPrinter::narrowed(const Expr& e) {
  if (e->op == ExprOp::Constant) return Expr::constant(e->value, DType::Int32);
  if (const Expr& known = facts(e).narrowed; known.defined()) return known;
  auto arg = [&](size_t k) {
    const Expr& a = e->args[k];
    return a->dtype == DType::Int64 ? narrowed(a) : a;
  };
  Expr r;
  switch (e->op) {
    case ExprOp::IndexValue: r = Expr::index_value(e->index, DType::Int32); break;
    case ExprOp::Cast: r = Expr::cast(arg(0), DType::Int32); break;
    case ExprOp::Where: r = Expr::where(e->args[0], arg(1), arg(2)); break;
    case ExprOp::Unary: r = Expr::unary(e->unary_op(), arg(0)); break;
    case ExprOp::Binary: r = Expr::binary(e->binary_op(), arg(0), arg(1), DType::Int32); break;
    default: throw std::logic_error("not narrowable: " + e.str());
  }
  facts(e).narrowed = r;
  return r;
}

std::string KernelPrinter::outlined_call(const std::string& call) {
  // A library math call is printed as `name(args)`; its out-of-line version is the prelude's `name_ool`.
  const size_t open = call.find('(');
  if (open == std::string::npos || open == 0 || call.back() != ')')
    throw std::logic_error("not a math call: " + call);
  for (size_t i = 0; i < open; ++i)
    if (!(std::isalnum(static_cast<unsigned char>(call[i])) || call[i] == '_'))
      throw std::logic_error("not a math call: " + call);
  return call.substr(0, open) + "_ool" + call.substr(open);
}

std::string KernelPrinter::compute(const Expr& e) {
  sync_facts();
  const ExprNode& n = *e;
  // An int64 value proven to fit is computed in int (narrowed) and widened here for consumers that take int64.
  if (n.dtype == DType::Int64 && n.op != ExprOp::Load && narrowable(e)) return "(hi_i64)" + expr(narrowed(e));
  // A consumer of other type (a compare, a conversion to float) whose int64 operands all fit reads them as int.
  if (n.dtype != DType::Int64 && n.op != ExprOp::Load && n.op != ExprOp::Reduce) {
    bool any = false, all = true;
    for (const Expr& a : n.args)
      if (a->dtype == DType::Int64) {
        any = any || a->op != ExprOp::Constant;
        all = all && narrows(a);
      }
    if (any && all) {
      auto arg = [&](size_t k) { return n.args[k]->dtype == DType::Int64 ? narrowed(n.args[k]) : n.args[k]; };
      switch (n.op) {
        case ExprOp::Cast: return compute(Expr::cast(arg(0), n.dtype));
        case ExprOp::Unary: return compute(Expr::unary(n.unary_op(), arg(0)));
        case ExprOp::Binary: return compute(Expr::binary(n.binary_op(), arg(0), arg(1), n.dtype));
        default: break;
      }
    }
  }
  auto arg = [&](int i) { return expr(n.args[i]); };
  DType t = n.dtype;
  switch (n.op) {
    case ExprOp::Load: {
      const Buffer& b = p_.buffers[n.buffer];
      Index where = n.index;
      if (!n.args.empty()) {
        // An indirect load: evaluate its index operands, then address through them (see Expr::indirect_load).
        // Operands computed in int stay int in the address where no partial sum or product of it can leave 32
        // bits, with the operands' bounds.
        std::map<std::string, Index> bound;
        VarRanges with_operands = ranges_;
        for (size_t k = 0; k < n.args.size(); ++k) {
          const Expr& a = n.args[k];
          const bool fits = a->dtype == DType::Int64 && a->op != ExprOp::Constant && narrowable(a);
          const std::string name = fits ? expr(narrowed(a)) : expr(a);
          bound[indirect_var(k)] = Index::var(name);
          if (!fits) continue;
          const auto vb = value_bounds(a);
          with_operands[name] = Range{static_cast<int64_t>(vb->lo), static_cast<int64_t>(vb->hi)};
        }
        if (auto m = magnitude(simplify(substitute(where, bound), ranges_), with_operands); !m || *m > kInt32Max) {
          for (size_t k = 0; k < n.args.size(); ++k) bound[indirect_var(k)] = Index::var(expr(n.args[k]));
        }
        where = substitute(where, bound);
      }
      auto staged = n.args.empty() ? staged_.find(n.buffer) : staged_.end();
      std::string ref = staged != staged_.end() ? staged_slot(n.buffer, staged_column_)
                                                : param_name(n.buffer) + "[" + index(where) + "]";
      return is_floating(b.dtype) && dtype_bytes(b.dtype) == 2 ? "hi_to_float(" + ref + ")" : ref;
    }
    case ExprOp::Constant: return literal(n.value, t);
    case ExprOp::IndexValue: return "(" + value_type(t) + ")(" + index(n.index) + ")";
    case ExprOp::Cast: return convert(arg(0), n.args[0]->dtype, t);
    case ExprOp::Where: {
      // Each operand prints its temporaries as it is visited, so the operands are visited in a fixed order (else,
      // then, condition: the order of the golden sources) rather than inside one `+` chain, whose operands C++
      // evaluates in an order left to the compiler (GCC and clang differ, and so did their kernels' text).
      std::string b = arg(2), a = arg(1), c = arg(0);
      return c + " ? " + a + " : " + b;
    }
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
        case BinaryOp::Div:
          if (!fp) return infix("/");
          // x / 1 is x exactly (NaN, infinities and zeros' signs too); NVIDIA's approximate division need not be, and
          // a mean over one element must equal that element.
          if (n.args[1]->op == ExprOp::Constant && n.args[1]->value == 1.0) return a;
          // By softmax's sum held in a register: a multiply by its reciprocal (KernelPlan::reciprocal_divisors).
          if (row_value(n.args[1]) && plan_.reciprocal_divisors.count(n.args[1]->buffer))
            return a + " * (" + literal(1, at) + " / " + b + ")";
          return "hi_div(" + a + ", " + b + ")";
        case BinaryOp::FloorDiv: return "hi_floordiv(" + a + ", " + b + ")";
        case BinaryOp::TruncDiv: return fp ? "hi_trunc(" + a + " / " + b + ")" : infix("/");
        case BinaryOp::Remainder: return "hi_remainder(" + a + ", " + b + ")";
        case BinaryOp::Fmod: return fp ? "hi_fmod(" + a + ", " + b + ")" : infix("%");
        case BinaryOp::Pow:
          if (fp) return "hi_pow(" + a + ", " + b + ")";
          return "hi_ipow<" + value_type(t) + ">(" + a + ", " + b + ")";
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
        case BinaryOp::Fmax: return "hi_fmax(" + a + ", " + b + ")";
        case BinaryOp::Fmin: return "hi_fmin(" + a + ", " + b + ")";
        case BinaryOp::Copysign: return "hi_copysign(" + a + ", " + b + ")";
        case BinaryOp::Nextafter: return libm("nextafter", at) + "(" + a + ", " + b + ")";
        case BinaryOp::Zeta:
          return "hi_zeta(" + a + ", " + b + ")";
        case BinaryOp::ShiftLeft: return "hi_shift_left<" + value_type(at) + ">(" + a + ", " + b + ")";
        case BinaryOp::ShiftRight: return "hi_shift_right<" + value_type(at) + ">(" + a + ", " + b + ")";
      }
      break;
    }
  }
  throw std::logic_error("unprintable expression " + e.str());
}

void KernelPrinter::collect_params() {
  const KernelOperands operands = kernel_operands(p_, k_);
  std::set<int> all = operands.read;
  all.insert(operands.written.begin(), operands.written.end());
  for (int b : all) {
    KernelParam kp;
    kp.kind = KernelParam::Kind::Buffer;
    kp.buffer = b;
    kp.read_only = !operands.written.count(b);
    const Buffer& buf = p_.buffers[b];
    const char* prefix = buf.kind == BufferKind::Input ? "in_ptr" : buf.kind == BufferKind::Output ? "out_ptr" : "buf_ptr";
    kp.name = prefix + std::to_string(b);
    param_of_buffer_[b] = kp.name;
    params_.push_back(kp);
  }
  for (const std::string& s : operands.symbols) {
    KernelParam kp;
    kp.kind = KernelParam::Kind::Size;
    kp.symbol = s;
    kp.name = s;
    params_.push_back(kp);
  }
  index_type_ = plan_.index32 ? "int" : "hi_i64";
}

void KernelPrinter::store(const Computation& c, const std::string& value, DType value_dtype, const Index& where) {
  const Buffer& b = p_.buffers[c.buffer];
  if (c.is_scatter()) {
    // The target's address, through its index operands as an indirect load's; the value added in the buffer's
    // compute type (float for 16-bit floats, whose atomic add rounds once per addition, as eager's).
    const Expr target = substitute_vars(c.scatter_target, kernel_var_map(c, k_), ranges_);
    std::map<std::string, Index> bound;
    for (size_t k = 0; k < target->args.size(); ++k) bound[indirect_var(k)] = Index::var(expr(target->args[k]));
    const DType add_type = narrow_float(b.dtype) ? DType::Float32 : b.dtype;
    line("hi_atomic_add(" + param_name(c.buffer) + " + (" + index(substitute(target->index, bound)) + "), " +
         convert(value, value_dtype, add_type) + ");");
    return;
  }
  if (is_local(c.buffer)) {
    std::string name = "v_" + b.name;
    line("const " + value_type(b.dtype) + " " + name + " = " + convert(value, value_dtype, b.dtype) + ";");
    local_value_[c.buffer] = name;
    return;
  }
  line(param_name(c.buffer) + "[" + index(where) + "] = " + stored(value, value_dtype, b.dtype) + ";");
}

std::string KernelPrinter::vector_array(const Expr& load, int count, const std::string& lane) {
  const Buffer& b = p_.buffers[load->buffer];
  std::string name = "ld" + std::to_string(next_array_++);
  line(storage_type(b.dtype) + " " + name + "[" + std::to_string(count) + "];");
  alias_vector_array(load, name, lane);
  return name;
}

std::string KernelPrinter::load_hint(int buffer, const Index& base) const {
  auto hint = plan_.hints.find(buffer);
  if (hint == plan_.hints.end()) return "";
  std::vector<std::string> vars = free_vars(base);
  return std::find(vars.begin(), vars.end(), "row") == vars.end() ? hint->second.other : hint->second.row_indexed;
}

std::string KernelPrinter::vector_fn(const char* op, int buffer, const Index& base, int v) const {
  std::string args = std::to_string(v);
  if (std::string_view(op) == "load")
    if (std::string hint = load_hint(buffer, base); !hint.empty()) args += ", " + hint;
  const std::string checked = std::string("hi_") + op + "_vec<" + args + ">";
  const Buffer& b = p_.buffers[buffer];
  const int64_t item = dtype_bytes(b.dtype), chunk = std::min<int64_t>(16, v * item);
  if (chunk % item != 0) return checked;
  int64_t known = 0;  // what the buffer's first element is aligned to
  Index first = Index(0);
  if (p_.in_workspace(buffer)) {
    known = kWorkspaceAlignment;
  } else if (b.kind == BufferKind::Input || b.kind == BufferKind::Output) {
    known = p_.align;
    first = b.offset;
  }
  if (known < chunk || !first.as_const()) return checked;
  // Aligned for every thread when the lane-0 element's distance from the first element is a multiple of the chunk.
  // A peeled row's head is -row_start modulo V, the chunk's elements (V * item <= 16 bytes, or 16 / item).
  Index at = base;
  if (head_aligns_ && chunk == v * item) at = substitute(base, {{"head", Index(0) - *head_aligns_}});
  Index distance = simplify(mod(at - first, Index(chunk / item)), ranges_);
  if (distance != Index(0)) return checked;
  return std::string("hi_") + op + "_vec_aligned<" + args + ">";
}

void KernelPrinter::alias_vector_array(const Expr& load, const std::string& name, const std::string& lane) {
  const Buffer& b = p_.buffers[load->buffer];
  std::string element = name + "[" + lane + "]";
  cse_.back()[load.hash()].emplace_back(load, is_floating(b.dtype) && dtype_bytes(b.dtype) == 2
                                                  ? "hi_to_float(" + element + ")"
                                                  : element);
}

EmittedKernel KernelPrinter::emit(std::string& text) {
  EmittedKernel ek;
  ek.name = plan_.kernel;
  ek.kind = k_.kind;
  collect_params();
  if (const auto* pw = std::get_if<PointwisePlan>(&plan_.shape)) {
    if (pw->form == PointwisePlan::Form::TransposedTiles) emit_transposed_tiles(*pw);
    else emit_pointwise(*pw);
  } else if (const auto* rows = std::get_if<RowPlan>(&plan_.shape)) {
    if (rows->form == RowPlan::Form::Persistent) emit_row_persistent(*rows);
    else emit_row_loop(*rows);
  } else if (const auto* scan = std::get_if<ScanPlan>(&plan_.shape)) {
    emit_scan(*scan);
  } else {
    emit_column_reduction(std::get<ColumnPlan>(plan_.shape));
  }
  ek.grid = plan_.grid;
  ek.block = plan_.block;
  ek.needs_sync = plan_.needs_sync;
  ek.whole_grid = plan_.whole_grid;
  ek.params = params_;

  std::ostringstream os;
  os << "// " << plan_.kernel << ": " << kernel_kind_name(k_.kind) << ", computes";
  for (int ci : k_.computations) os << " " << p_.computations[ci].name;
  os << "\n// from graph nodes:";
  std::unordered_set<std::string_view> seen;  // a fused chain names thousands of nodes: no search per name
  for (int ci : k_.computations)
    for (const auto& o : p_.computations[ci].origins)
      if (seen.insert(o).second) os << " " << o;
  os << "\nextern \"C\" __global__ void __launch_bounds__(" << plan_.block << ") " << plan_.kernel << "(";
  // Sizes arrive as 64-bit values; a kernel indexing in 32 bits (plan.index32, where the extents they span fit)
  // takes them as 32-bit ints, so that no index arithmetic widens to 64 bits.
  std::string narrowed;
  for (size_t i = 0; i < params_.size(); ++i) {
    const KernelParam& kp = params_[i];
    if (i) os << ", ";
    if (kp.kind == KernelParam::Kind::Size) {
      if (plan_.index32) {
        os << "hi_i64 " << kp.name << "_i64";
        narrowed += "  const int " + kp.name + " = (int)" + kp.name + "_i64;\n";
      } else {
        os << "hi_i64 " << kp.name;
      }
      continue;
    }
    os << (kp.read_only ? "const " : "") << storage_type(p_.buffers[kp.buffer].dtype) << "* __restrict__ " << kp.name;
  }
  os << ") {\n" << narrowed << body_.str() << "}\n";
  text = os.str();
  return ek;
}

}  // namespace hi::codegen_detail
