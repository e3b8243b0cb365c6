#include "ir/loop.h"

#include <algorithm>

#include <cmath>
#include <cstring>
#include <functional>
#include <set>
#include <sstream>
#include <stdexcept>

namespace hi {
namespace {

size_t mix(size_t seed, size_t v) { return seed ^ (v + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2)); }

size_t double_bits(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}

std::shared_ptr<ExprNode> make_node(ExprOp op, DType dtype) {
  auto n = std::make_shared<ExprNode>();
  n->op = op;
  n->dtype = dtype;
  return n;
}

size_t node_hash(const ExprNode& n) {
  size_t h = mix(static_cast<size_t>(n.op), static_cast<size_t>(n.dtype));
  h = mix(h, n.sub);
  h = mix(h, static_cast<size_t>(n.buffer + 1));
  if (n.index) h = mix(h, n.index.hash());
  h = mix(h, double_bits(n.value));
  for (const Expr& a : n.args) h = mix(h, a.hash());
  return h;
}

std::string format_constant(double v, DType t) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str() + ":" + std::string(dtype_name(t));
}

}  // namespace

std::string_view unary_op_name(UnaryOp op) {
  static const char* names[] = {
      "neg", "abs", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal", "sin",
      "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sigmoid", "relu",
      "erf", "erfc", "gelu", "gelu_tanh", "silu", "floor", "ceil", "round", "trunc", "sign", "logical_not",
      "bitwise_not", "isnan", "isinf", "lgamma", "digamma", "erfinv"};
  return names[static_cast<int>(op)];
}

std::string_view binary_op_name(BinaryOp op) {
  static const char* names[] = {
      "add",         "sub",     "mul",     "div",         "floordiv",   "truncdiv",    "remainder",   "fmod",
      "pow",         "maximum", "minimum", "atan2",       "hypot",      "eq",          "ne",          "lt",
      "le",          "gt",      "ge",      "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
      "bitwise_xor", "fmax",    "fmin",    "copysign",    "nextafter",  "zeta",
      "shift_left",  "shift_right"};
  return names[static_cast<int>(op)];
}

std::string_view reduce_op_name(ReduceOp op) {
  static const char* names[] = {"sum", "prod", "max", "min", "any", "all", "argmax", "argmin", "logaddexp"};
  return names[static_cast<int>(op)];
}

std::string_view kernel_kind_name(KernelKind k) {
  switch (k) {
    case KernelKind::Pointwise: return "pointwise";
    case KernelKind::RowReduction: return "row_reduction";
    case KernelKind::ColumnReduction: return "column_reduction";
    case KernelKind::Scan: return "scan";
    case KernelKind::Scatter: return "scatter";
  }
  return "?";
}

size_t Expr::hash() const { return node_ ? node_->hash : 0; }

bool Expr::operator==(const Expr& other) const {
  if (node_ == other.node_) return true;
  if (!node_ || !other.node_) return false;
  const ExprNode& a = *node_;
  const ExprNode& b = *other.node_;
  if (a.hash != b.hash || a.op != b.op || a.dtype != b.dtype || a.sub != b.sub || a.buffer != b.buffer ||
      a.args.size() != b.args.size())
    return false;
  if (a.index.defined() != b.index.defined() || (a.index.defined() && a.index != b.index)) return false;
  if (double_bits(a.value) != double_bits(b.value)) return false;
  for (size_t i = 0; i < a.args.size(); ++i)
    if (a.args[i] != b.args[i]) return false;
  return true;
}

std::string Expr::str() const {
  if (!node_) return "<null>";
  const ExprNode& n = *node_;
  switch (n.op) {
    case ExprOp::Load: {
      std::string s = "load(buf" + std::to_string(n.buffer) + ", " + n.index.str();
      for (size_t k = 0; k < n.args.size(); ++k) s += "; " + indirect_var(k) + "=" + n.args[k].str();
      return s + ")";
    }
    case ExprOp::Constant: return format_constant(n.value, n.dtype);
    case ExprOp::IndexValue: return "index(" + n.index.str() + ")";
    case ExprOp::Unary: return std::string(unary_op_name(n.unary_op())) + "(" + n.args[0].str() + ")";
    case ExprOp::Binary:
      return std::string(binary_op_name(n.binary_op())) + "(" + n.args[0].str() + ", " + n.args[1].str() + ")";
    case ExprOp::Where: return "where(" + n.args[0].str() + ", " + n.args[1].str() + ", " + n.args[2].str() + ")";
    case ExprOp::Cast: return "cast<" + std::string(dtype_name(n.dtype)) + ">(" + n.args[0].str() + ")";
    case ExprOp::Reduce: {
      std::string s = std::string(reduce_op_name(n.reduce_op())) + "_reduce(" + n.args[0].str();
      if (n.args.size() > 1) s += ", " + n.args[1].str();
      return s + ")";
    }
  }
  return "?";
}

/// The only place that turns a filled node into a handle (fills the structural hash).
struct ExprFactory {
  static Expr finish(std::shared_ptr<ExprNode> n) {
    n->hash = node_hash(*n);
    return Expr(std::shared_ptr<const ExprNode>(std::move(n)));
  }
};
#define HI_FINISH(n) ExprFactory::finish(std::move(n))

Expr Expr::load(int buffer, Index index, DType dtype) {
  auto n = make_node(ExprOp::Load, dtype);
  n->buffer = buffer;
  n->index = std::move(index);
  return HI_FINISH(n);
}

Expr Expr::indirect_load(int buffer, Index index, DType dtype, std::vector<Expr> index_args) {
  auto n = make_node(ExprOp::Load, dtype);
  n->buffer = buffer;
  n->index = std::move(index);
  n->args = std::move(index_args);
  return HI_FINISH(n);
}

Expr Expr::constant(double value, DType dtype) {
  auto n = make_node(ExprOp::Constant, dtype);
  if (dtype == DType::Bool) value = value != 0 ? 1 : 0;
  n->value = value;
  return HI_FINISH(n);
}

Expr Expr::index_value(Index index, DType dtype) {
  auto n = make_node(ExprOp::IndexValue, dtype);
  n->index = std::move(index);
  return HI_FINISH(n);
}

Expr Expr::unary(UnaryOp op, Expr x) {
  DType t = x->dtype;
  if (op == UnaryOp::IsNan || op == UnaryOp::IsInf || op == UnaryOp::LogicalNot) t = DType::Bool;
  auto n = make_node(ExprOp::Unary, t);
  n->sub = static_cast<uint8_t>(op);
  n->args = {std::move(x)};
  return HI_FINISH(n);
}

Expr Expr::binary(BinaryOp op, Expr a, Expr b, DType dtype) {
  auto n = make_node(ExprOp::Binary, dtype);
  n->sub = static_cast<uint8_t>(op);
  n->args = {std::move(a), std::move(b)};
  return HI_FINISH(n);
}

Expr Expr::where(Expr cond, Expr a, Expr b) {
  auto n = make_node(ExprOp::Where, a->dtype);
  n->args = {std::move(cond), std::move(a), std::move(b)};
  return HI_FINISH(n);
}

Expr Expr::cast(Expr x, DType dtype) {
  if (x->dtype == dtype) return x;
  auto n = make_node(ExprOp::Cast, dtype);
  n->args = {std::move(x)};
  return HI_FINISH(n);
}

Expr Expr::reduce(ReduceOp op, Expr x) {
  DType t = x->dtype;
  if (op == ReduceOp::Any || op == ReduceOp::All) t = DType::Bool;
  auto n = make_node(ExprOp::Reduce, t);
  n->sub = static_cast<uint8_t>(op);
  n->args = {std::move(x)};
  return HI_FINISH(n);
}

Expr rewrite(const Expr& e, const std::function<std::optional<Expr>(const Expr&)>& f) {
  std::vector<Expr> args;
  bool changed = false;
  for (const Expr& a : e->args) {
    args.push_back(rewrite(a, f));
    changed |= args.back() != a;
  }
  Expr cur = e;
  if (changed) {
    auto n = std::make_shared<ExprNode>(*e);
    n->args = std::move(args);
    cur = HI_FINISH(n);
  }
  if (auto r = f(cur)) return *r;
  return cur;
}

Expr map_indices(const Expr& e, const std::function<Index(const Index&)>& f) {
  return rewrite(e, [&](const Expr& x) -> std::optional<Expr> {
    if (x->op != ExprOp::Load && x->op != ExprOp::IndexValue) return std::nullopt;
    Index mapped = f(x->index);
    if (mapped == x->index) return std::nullopt;
    auto n = std::make_shared<ExprNode>(*x);
    n->index = std::move(mapped);
    return HI_FINISH(n);
  });
}

Expr Expr::arg_reduce(ReduceOp op, Expr x, Expr position) {
  auto n = make_node(ExprOp::Reduce, DType::Int64);
  n->sub = static_cast<uint8_t>(op);
  n->args = {std::move(x), std::move(position)};
  return HI_FINISH(n);
}

#undef HI_FINISH

Expr substitute_vars(const Expr& e, const std::map<std::string, Index>& repl, const VarRanges& ranges) {
  return map_indices(e, [&](const Index& i) { return simplify(substitute(i, repl), ranges); });
}

void visit(const Expr& e, const std::function<void(const Expr&)>& f) {
  for (const Expr& a : e->args) visit(a, f);
  f(e);
}

void visit_computation(const Computation& c, const std::function<void(const Expr&)>& f) {
  visit(c.body, f);
  if (c.is_scatter()) visit(c.scatter_target, f);
}

int op_count(const Expr& e) {
  int count = 0;
  visit(e, [&](const Expr& x) { count += x->args.empty() ? 0 : 1; });
  return count;
}

bool has_transcendental(const Expr& e) {
  bool found = false;
  visit(e, [&](const Expr& x) {
    if (x->op == ExprOp::Unary) {
      switch (x->unary_op()) {
        case UnaryOp::Exp: case UnaryOp::Exp2: case UnaryOp::Expm1: case UnaryOp::Log: case UnaryOp::Log2:
        case UnaryOp::Log10: case UnaryOp::Log1p: case UnaryOp::Sin: case UnaryOp::Cos: case UnaryOp::Tan:
        case UnaryOp::Asin: case UnaryOp::Acos: case UnaryOp::Atan: case UnaryOp::Sinh: case UnaryOp::Cosh:
        case UnaryOp::Tanh: case UnaryOp::Asinh: case UnaryOp::Acosh: case UnaryOp::Atanh: case UnaryOp::Sigmoid:
        case UnaryOp::Erf: case UnaryOp::Erfc: case UnaryOp::GeluErf: case UnaryOp::GeluTanh: case UnaryOp::Silu:
        case UnaryOp::Lgamma: case UnaryOp::Digamma: case UnaryOp::Erfinv:
          found = true;
          break;
        default:
          break;
      }
    } else if (x->op == ExprOp::Binary) {
      BinaryOp b = x->binary_op();
      found = found || b == BinaryOp::Pow || b == BinaryOp::Atan2 || b == BinaryOp::Hypot || b == BinaryOp::Zeta;
    }
  });
  return found;
}

Index Buffer::storage_elements() const {
  std::vector<Index> terms{offset, Index(1)};
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i].is_const(0)) return Index(0);
    terms.push_back((sizes[i] - 1) * strides[i]);
  }
  return sum(terms);
}

std::string out_var(size_t i) { return "x" + std::to_string(i); }
std::string reduce_var(size_t i) { return "r" + std::to_string(i); }
std::string indirect_var(size_t k) { return "ind" + std::to_string(k); }

Index Computation::store_index(const Buffer& b) {
  std::vector<Index> terms{b.offset};
  for (size_t i = 0; i < b.strides.size(); ++i) terms.push_back(Index::var(out_var(i)) * b.strides[i]);
  return sum(terms);
}

Index Computation::numel() const { return product(sizes); }
Index Computation::reduce_numel() const { return product(reduce_sizes); }

int LoopProgram::producer(int buffer) const {
  for (size_t i = 0; i < computations.size(); ++i)
    if (computations[i].buffer == buffer) return static_cast<int>(i);
  return -1;
}

namespace {

std::string join_indices(const std::vector<Index>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i].str();
  return s + "]";
}

}  // namespace

std::string_view buffer_kind_name(BufferKind k) {
  switch (k) {
    case BufferKind::Input: return "input";
    case BufferKind::Output: return "output";
    case BufferKind::Intermediate: return "intermediate";
  }
  return "?";
}

std::vector<std::string> LoopProgram::symbols() const {
  std::set<std::string> names;
  for (const auto& [name, range] : size_ranges) {
    auto q = quotients.find(name);
    names.insert(q == quotients.end() ? name : q->second.of);
  }
  return {names.begin(), names.end()};
}

std::map<std::string, int64_t> LoopProgram::bind_symbols(const std::vector<int64_t>& values) const {
  const std::vector<std::string> names = symbols();
  if (values.size() != names.size()) {
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
    throw std::invalid_argument("the graph takes " + std::to_string(names.size()) + " size value(s)" +
                                (list.empty() ? "" : " (" + list + ")") + ", got " + std::to_string(values.size()));
  }
  std::map<std::string, int64_t> given;
  for (size_t i = 0; i < names.size(); ++i) given[names[i]] = values[i];
  std::map<std::string, int64_t> out;
  for (const auto& [name, range] : size_ranges) {
    auto q = quotients.find(name);
    const std::string& of = q == quotients.end() ? name : q->second.of;
    const int64_t divisor = q == quotients.end() ? 1 : q->second.divisor;
    const int64_t v = given.at(of);
    if (v % divisor != 0)
      throw std::invalid_argument("size symbol " + of + " = " + std::to_string(v) + " is not divisible by " +
                                  std::to_string(divisor) + ", as the graph promised ('divisible'); compile it for "
                                  "this size");
    const int64_t value = v / divisor;
    if ((range.lo && value < *range.lo) || (range.hi && value > *range.hi)) {
      auto scaled = [&](const std::optional<int64_t>& b) { return b ? std::to_string(*b * divisor) : std::string(); };
      throw std::invalid_argument("size symbol " + of + " = " + std::to_string(v) +
                                  " is outside the range the graph was compiled for ([" +
                                  (range.lo ? scaled(range.lo) : "-inf") + ", " + (range.hi ? scaled(range.hi) : "inf") +
                                  "]); compile it for this size");
    }
    out[name] = value;
  }
  if (index32) {
    const int64_t largest = largest_extent(out);
    if (largest >= kIndex32Limit)
      throw std::invalid_argument("an extent of " + std::to_string(largest) + " elements at these sizes needs 64-bit "
                                  "indices; the graph was compiled for 32-bit ones ('index32'): compile it without");
  }
  return out;
}

int64_t LoopProgram::largest_extent(const std::map<std::string, int64_t>& values) const {
  int64_t largest = 0;
  auto take = [&](const Index& e, const char* what) {
    std::optional<int64_t> v = evaluate(e, values);
    if (!v) throw std::invalid_argument(std::string(what) + " " + e.str() + " cannot be evaluated for these sizes");
    largest = std::max(largest, *v);
  };
  for (const Buffer& b : buffers) take(b.storage_elements(), "the storage extent");
  for (const Kernel& k : kernels) take(k.numel * k.row_length, "the iteration space");
  return largest;
}

std::string LoopProgram::str() const {
  std::ostringstream os;
  for (size_t i = 0; i < buffers.size(); ++i) {
    const Buffer& b = buffers[i];
    os << "buf" << i << " " << b.name << ": " << buffer_kind_name(b.kind) << " " << dtype_name(b.dtype)
       << join_indices(b.sizes) << " strides " << join_indices(b.strides) << " offset " << b.offset.str() << "\n";
  }
  for (const Computation& c : computations) {
    os << c.name << " = "
       << (c.is_scan()        ? "scan along dim " + std::to_string(c.scan_dim)
           : c.is_reduction() ? "reduction"
           : c.is_scatter()   ? "scatter-add"
                              : "pointwise")
       << " over " << join_indices(c.sizes);
    if (c.is_reduction()) os << " x " << join_indices(c.reduce_sizes);
    os << " from";
    for (const auto& o : c.origins) os << " " << o;
    os << "\n    " << c.body.str() << "\n";
    if (c.is_scatter()) os << "    added at " << c.scatter_target.str() << "\n";
  }
  for (const Kernel& k : kernels) {
    os << "kernel " << k.name << " (" << kernel_kind_name(k.kind) << ", numel " << k.numel.str();
    if (k.kind != KernelKind::Pointwise) os << ", row " << k.row_length.str();
    os << "):";
    for (int c : k.computations) os << " " << computations[c].name;
    if (!k.loop_order.empty()) {
      os << "; loop order";
      for (int d : k.loop_order) os << " x" << d;
    }
    if (!k.local_buffers.empty()) {
      os << "; in registers:";
      for (int b : k.local_buffers) os << " " << buffers[b].name;
    }
    os << "\n";
  }
  return os.str();
}

std::vector<Index> unflatten(const Index& flat, const std::vector<Index>& sizes) {
  // An empty domain has no index to take apart (and its strides would divide by zero): any coordinates do.
  if (std::any_of(sizes.begin(), sizes.end(), [](const Index& s) { return s.is_const(0); }))
    return std::vector<Index>(sizes.size(), Index(0));
  std::vector<Index> strides(sizes.size(), Index(1));
  for (size_t i = sizes.size(); i-- > 1;) strides[i - 1] = strides[i] * sizes[i];
  std::vector<Index> coords;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i].is_const(1)) {
      coords.push_back(Index(0));
      continue;
    }
    Index q = floordiv(flat, strides[i]);
    coords.push_back(i == 0 ? q : mod(q, sizes[i]));
  }
  return coords;
}

namespace {

void bind_coords(std::map<std::string, Index>& m, const std::vector<Index>& coords, std::string (*name)(size_t)) {
  for (size_t i = 0; i < coords.size(); ++i) m[name(i)] = coords[i];
}

/// Where `sizes` splits into the dims of rows and the dims of one row of `row_length` elements (the trailing dims'
/// product is row_length), for a symbolic row length; nullopt for a constant one (whose coordinates the simplifier
/// finds from the flat index) or where no split matches.
std::optional<size_t> row_split(const std::vector<Index>& sizes, const Index& row_length) {
  if (row_length.is_const()) return std::nullopt;
  Index inner = Index(1);
  for (size_t d = sizes.size(); d-- > 0;) {
    inner = inner * sizes[d];
    if (inner == row_length) return d;
  }
  return std::nullopt;
}

}  // namespace

bool is_row_epilogue(const Computation& c, const Kernel& k) {
  return k.kind == KernelKind::RowReduction && !c.is_reduction() && c.numel() == k.numel &&
         !k.row_length.is_const(1);
}

std::map<std::string, Index> kernel_var_map(const Computation& c, const Kernel& k) {
  std::map<std::string, Index> m;
  const Index& row_length = k.row_length;
  switch (k.kind) {
    case KernelKind::Pointwise:
      if (k.loop_order.size() == c.sizes.size()) {
        std::vector<Index> walked;
        for (int d : k.loop_order) walked.push_back(c.sizes[d]);
        std::vector<Index> coords = unflatten(Index::var("i"), walked);
        for (size_t n = 0; n < coords.size(); ++n) m[out_var(k.loop_order[n])] = coords[n];
      } else {
        bind_coords(m, unflatten(Index::var("i"), c.sizes), out_var);
      }
      break;
    case KernelKind::RowReduction:
      if (c.is_reduction() || is_row_epilogue(c, k)) {
        bind_coords(m, unflatten(Index::var("row"), c.sizes), out_var);
        bind_coords(m, unflatten(Index::var("col"), c.reduce_sizes), reduce_var);
      } else if (std::optional<size_t> split = row_split(c.sizes, row_length)) {
        // Over symbolic sizes, the coordinates of (row, col) split at the dims that make up a row: exact because
        // col < row_length, which the simplifier cannot know of a symbolic length.
        std::vector<Index> outer(c.sizes.begin(), c.sizes.begin() + *split);
        std::vector<Index> inner(c.sizes.begin() + *split, c.sizes.end());
        std::vector<Index> coords = unflatten(Index::var("row"), outer);
        for (const Index& x : unflatten(Index::var("col"), inner)) coords.push_back(x);
        bind_coords(m, coords, out_var);
      } else {
        bind_coords(m, unflatten(Index::var("row") * row_length + Index::var("col"), c.sizes), out_var);
      }
      break;
    case KernelKind::ColumnReduction:
      bind_coords(m, unflatten(Index::var("i"), c.sizes), out_var);
      bind_coords(m, unflatten(Index::var("r"), c.reduce_sizes), reduce_var);
      break;
    case KernelKind::Scatter: bind_coords(m, unflatten(Index::var("i"), c.sizes), out_var); break;
    case KernelKind::Scan: {
      // The line walks every dim but the scanned one, row-major; the scanned dim and the body's r0 are `s`.
      std::vector<Index> others;
      for (size_t d = 0; d < c.sizes.size(); ++d)
        if (static_cast<int>(d) != c.scan_dim) others.push_back(c.sizes[d]);
      std::vector<Index> coords = unflatten(Index::var("line"), others);
      for (size_t d = 0, n = 0; d < c.sizes.size(); ++d)
        m[out_var(d)] = static_cast<int>(d) == c.scan_dim ? Index::var("s") : coords[n++];
      m[reduce_var(0)] = Index::var("s");
      break;
    }
  }
  return m;
}

VarRanges kernel_var_ranges(const LoopProgram& p, const Kernel& k) {
  VarRanges r = p.size_ranges;
  auto loop = [&](const char* name, const Index& extent) {
    auto c = simplify(extent, p.size_ranges).as_const();
    r[name] = c ? Range::loop(std::max<int64_t>(*c, 1)) : Range{0, std::nullopt};
  };
  switch (k.kind) {
    case KernelKind::Pointwise:
    case KernelKind::Scatter: loop("i", k.numel); break;
    case KernelKind::RowReduction:
      loop("row", k.numel);
      loop("col", k.row_length);
      break;
    case KernelKind::ColumnReduction:
      loop("i", k.numel);
      loop("r", k.row_length);
      break;
    case KernelKind::Scan:
      loop("line", k.numel);
      loop("s", k.row_length);
      break;
  }
  return r;
}

int first_free_buffer_number(const LoopProgram& p) {
  int next = 0;
  for (const Buffer& b : p.buffers) {
    if (b.name.size() < 4 || b.name.compare(0, 3, "buf") != 0) continue;
    if (b.name.find_first_not_of("0123456789", 3) != std::string::npos) continue;
    next = std::max(next, std::stoi(b.name.substr(3)) + 1);
  }
  return next;
}

std::vector<std::string> verify_loop_program(const LoopProgram& p) {
  std::vector<std::string> problems;
  std::vector<int> fills(p.buffers.size(), 0);
  for (const Computation& c : p.computations) {
    const std::string where = "computation '" + c.name + "'";
    if (c.buffer < 0 || c.buffer >= static_cast<int>(p.buffers.size())) {
      problems.push_back(where + ": fills no existing buffer");
      continue;
    }
    if (p.buffers[c.buffer].kind == BufferKind::Input) problems.push_back(where + ": writes input buffer");
    if (c.is_scatter()) {
      if (fills[c.buffer] != 1) problems.push_back(where + ": scatters into a buffer no computation filled before");
      if (c.is_reduction() || c.scatter_target->op != ExprOp::Load || c.scatter_target->buffer != c.buffer)
        problems.push_back(where + ": a scatter is pointwise and its target a load of its own buffer");
    } else {
      ++fills[c.buffer];
    }
    if (!c.body.defined()) {
      problems.push_back(where + ": has no body");
      continue;
    }
    std::set<std::string> vars;
    for (size_t i = 0; i < c.sizes.size(); ++i) vars.insert(out_var(i));
    for (size_t i = 0; i < c.reduce_sizes.size(); ++i) vars.insert(reduce_var(i));
    for (const auto& [name, range] : p.size_ranges) vars.insert(name);
    if (c.is_reduction() != (c.body->op == ExprOp::Reduce))
      problems.push_back(where + ": a reduction's body must have a Reduce at its root, and only a reduction's");
    if (c.is_scan() && (c.scan_dim >= static_cast<int>(c.sizes.size()) || c.reduce_sizes.size() != 1 ||
                        c.reduce_sizes[0] != c.sizes[c.scan_dim]))
      problems.push_back(where + ": a scan reduces exactly its scanned dim (reduce_sizes {sizes[scan_dim]})");
    visit_computation(c, [&](const Expr& e) {
      if (e->op == ExprOp::Reduce && e != c.body) problems.push_back(where + ": Reduce below the root");
      if (e->op == ExprOp::Load && (e->buffer < 0 || e->buffer >= static_cast<int>(p.buffers.size())))
        problems.push_back(where + ": load of missing buffer " + std::to_string(e->buffer));
      if (e->index.defined())
        for (const std::string& v : free_vars(e->index)) {
          bool bound_here = false;  // an indirect load's own ind<k> variables
          if (e->op == ExprOp::Load)
            for (size_t k = 0; k < e->args.size(); ++k) bound_here |= v == indirect_var(k);
          if (!vars.count(v) && !bound_here) problems.push_back(where + ": index uses '" + v + "', not a variable of its domain");
        }
    });
  }
  for (size_t b = 0; b < p.buffers.size(); ++b)
    if (p.buffers[b].kind != BufferKind::Input && fills[b] != 1)
      problems.push_back("buffer '" + p.buffers[b].name + "' is filled " + std::to_string(fills[b]) + " times");
  if (!p.kernels.empty()) {
    std::vector<int> kernel_of(p.computations.size(), -1);
    for (size_t k = 0; k < p.kernels.size(); ++k)
      for (int c : p.kernels[k].computations) {
        if (kernel_of.at(c) != -1) problems.push_back("computation '" + p.computations[c].name + "' in two kernels");
        if (p.computations.at(c).is_scan() != (p.kernels[k].kind == KernelKind::Scan))
          problems.push_back("computation '" + p.computations[c].name + "': scans go in Scan kernels, and only scans");
        if (p.computations.at(c).is_scatter() != (p.kernels[k].kind == KernelKind::Scatter))
          problems.push_back("computation '" + p.computations[c].name +
                             "': scatters go in Scatter kernels, and only scatters");
        kernel_of[c] = static_cast<int>(k);
      }
    // The last computation writing each buffer (its filling one, or the last scatter into it): readers follow it.
    std::vector<int> producer(p.buffers.size(), -1), filler(p.buffers.size(), -1);
    for (size_t c = 0; c < p.computations.size(); ++c) {
      int b = p.computations[c].buffer;
      if (b < 0 || b >= static_cast<int>(p.buffers.size())) continue;
      producer[b] = static_cast<int>(c);
      if (filler[b] < 0) filler[b] = static_cast<int>(c);
    }
    for (size_t c = 0; c < p.computations.size(); ++c) {
      if (kernel_of[c] == -1) {
        problems.push_back("computation '" + p.computations[c].name + "' in no kernel");
        continue;
      }
      const int fill = p.computations[c].is_scatter() ? filler[p.computations[c].buffer] : -1;
      if (fill >= 0 && kernel_of[fill] > kernel_of[c])
        problems.push_back("kernel of '" + p.computations[c].name + "' scatters before its buffer is filled");
      visit_computation(p.computations[c], [&](const Expr& e) {
        if (e->op != ExprOp::Load || e->buffer < 0 || e->buffer >= static_cast<int>(p.buffers.size())) return;
        int prod = producer[e->buffer];
        if (prod >= 0 && prod != static_cast<int>(c) && kernel_of[prod] > kernel_of[c])
          problems.push_back("kernel of '" + p.computations[c].name + "' runs before the producer of what it reads");
      });
    }
  }
  return problems;
}

}  // namespace hi
