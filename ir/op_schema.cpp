#include "ir/op_schema.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <stdexcept>

namespace hi {
namespace {

// ---------------------------------------------------------------------------------------------------------------
// Schema strings

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

/// Splits at commas outside brackets, parentheses and quotes.
std::vector<std::string_view> split_top_level(std::string_view s) {
  std::vector<std::string_view> parts;
  int depth = 0;
  char quote = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '(' || c == '[') {
      ++depth;
    } else if (c == ')' || c == ']') {
      --depth;
    } else if (c == ',' && depth == 0) {
      parts.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  if (!trim(s.substr(start)).empty() || !parts.empty()) parts.push_back(trim(s.substr(start)));
  return parts;
}

[[noreturn]] void bad_schema(std::string_view text, const std::string& why) {
  throw std::invalid_argument("schema '" + std::string(text) + "': " + why);
}

std::optional<int64_t> parse_int(std::string_view s) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

Arg parse_default(std::string_view text, const ArgSchema& a, std::string_view schema) {
  if (text == "None") return Arg::none();
  if (text == "True") return Arg::of(true);
  if (text == "False") return Arg::of(false);
  if (text.size() >= 2 && (text.front() == '"' || text.front() == '\'')) {
    return Arg::of(std::string(text.substr(1, text.size() - 2)));
  }
  if (text.front() == '[') {
    std::vector<Index> values;
    for (std::string_view part : split_top_level(text.substr(1, text.size() - 2))) {
      auto v = parse_int(part);
      if (!v) bad_schema(schema, "bad int list default '" + std::string(text) + "'");
      values.emplace_back(*v);
    }
    return Arg::of(std::move(values));
  }
  if (auto v = parse_int(text)) {
    if (a.type == ArgType::Float) return Arg::of(static_cast<double>(*v));
    if (a.type == ArgType::IntList) return Arg::of(std::vector<Index>(std::max(a.list_size, 1), Index(*v)));
    return Arg::of(Index(*v));
  }
  if (a.type == ArgType::Opaque) return Arg::of(std::string(text));  // contiguous_format, ...
  char* end = nullptr;
  std::string s(text);
  double d = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) bad_schema(schema, "cannot parse default '" + s + "'");
  return Arg::of(d);
}

ArgSchema parse_arg(std::string_view text, bool kwarg_only, std::string_view schema) {
  ArgSchema a;
  a.kwarg_only = kwarg_only;
  // The type ends at the first space outside an alias annotation (`Tensor(a -> *) self`).
  size_t space = std::string_view::npos;
  for (size_t i = 0, depth = 0; i < text.size(); ++i) {
    if (text[i] == '(') ++depth;
    if (text[i] == ')' && depth > 0) --depth;
    if (text[i] == ' ' && depth == 0) {
      space = i;
      break;
    }
  }
  if (space == std::string_view::npos) bad_schema(schema, "argument '" + std::string(text) + "' has no name");
  std::string type;
  for (size_t i = 0; i < space; ++i) {  // drop alias annotations: Tensor(a) -> Tensor, Tensor(a!) -> Tensor
    if (text[i] == '(') {
      while (i < space && text[i] != ')') ++i;
      continue;
    }
    type += text[i];
  }
  a.type_text = type;
  std::string_view rest = trim(text.substr(space + 1));
  std::string_view default_text;
  if (size_t eq = rest.find('='); eq != std::string_view::npos) {
    default_text = trim(rest.substr(eq + 1));
    rest = trim(rest.substr(0, eq));
  }
  a.name = std::string(rest);

  std::string_view t = type;
  if (t.ends_with('?')) {
    a.optional = true;
    t.remove_suffix(1);
  }
  if (t == "Tensor") {
    a.type = ArgType::Tensor;
  } else if (t == "Tensor[]") {
    a.type = ArgType::TensorList;
  } else if (t == "Tensor?[]") {
    a.type = ArgType::OptionalTensorList;
  } else if (t == "Scalar") {
    a.type = ArgType::Scalar;
  } else if (t == "int" || t == "SymInt") {
    a.type = ArgType::Int;
  } else if ((t.starts_with("int[") || t.starts_with("SymInt[")) && t.ends_with(']')) {
    a.type = ArgType::IntList;
    std::string_view n = t.substr(t.find('[') + 1);
    n.remove_suffix(1);
    if (!n.empty()) a.list_size = static_cast<int>(parse_int(n).value_or(0));
  } else if (t == "bool") {
    a.type = ArgType::Bool;
  } else if (t == "float") {
    a.type = ArgType::Float;
  } else if (t == "ScalarType") {
    a.type = ArgType::ScalarType;
  } else if (t == "str") {
    a.type = ArgType::Str;
  } else if (t == "Layout" || t == "Device" || t == "MemoryFormat") {
    a.type = ArgType::Opaque;
  } else {
    bad_schema(schema, "unsupported argument type '" + type + "'");
  }
  if (!default_text.empty()) a.default_value = parse_default(default_text, a, schema);
  return a;
}

}  // namespace

OpSchema parse_op_schema(std::string_view text) {
  OpSchema op;
  op.text = std::string(text);
  size_t open = text.find('(');
  size_t arrow = text.rfind("->");
  if (open == std::string_view::npos || arrow == std::string_view::npos || arrow < open) {
    bad_schema(text, "expected 'name(args) -> returns'");
  }
  size_t close = text.rfind(')', arrow);
  if (close == std::string_view::npos || close < open) bad_schema(text, "unbalanced parentheses");

  std::string_view name = trim(text.substr(0, open));
  std::string ns = "aten";
  if (size_t colons = name.find("::"); colons != std::string_view::npos) {
    ns = std::string(name.substr(0, colons));
    name = name.substr(colons + 2);
  }
  size_t dot = name.find('.');
  std::string base(name.substr(0, dot));
  std::string overload = dot == std::string_view::npos ? "default" : std::string(name.substr(dot + 1));
  if (base.empty()) bad_schema(text, "empty operator name");
  op.qualified_name = ns + "." + base + "." + overload;

  bool kwarg_only = false;
  for (std::string_view part : split_top_level(text.substr(open + 1, close - open - 1))) {
    if (part == "*") {
      kwarg_only = true;
      continue;
    }
    op.args.push_back(parse_arg(part, kwarg_only, text));
  }

  std::string_view returns = trim(text.substr(arrow + 2));
  if (returns.starts_with('(') && returns.ends_with(')')) {
    op.num_outputs = static_cast<int>(split_top_level(returns.substr(1, returns.size() - 2)).size());
  } else {
    op.num_outputs = 1;
  }
  op.is_view = returns.find("(a)") != std::string_view::npos;
  op.returns_list = returns.ends_with("[]");
  return op;
}

int OpSchema::arg_index(std::string_view arg_name) const {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].name == arg_name) return static_cast<int>(i);
  }
  return -1;
}

// ---------------------------------------------------------------------------------------------------------------
// Errors and binding

namespace {
std::string format_schema_error(const std::string& node, const std::string& op, const std::string& argument,
                                const std::string& detail) {
  std::string s = "node '" + node + "'";
  if (!op.empty()) s += " (" + op + ")";
  if (!argument.empty()) s += ": argument '" + argument + "'";
  return s + ": " + detail;
}
}  // namespace

SchemaError::SchemaError(std::string node, std::string op, std::string field, std::string argument,
                         std::string detail)
    : std::runtime_error(format_schema_error(node, op, argument, detail)),
      node_(std::move(node)),
      op_(std::move(op)),
      field_(std::move(field)),
      argument_(std::move(argument)),
      detail_(std::move(detail)) {}

std::string_view arg_kind_schema_name(Arg::Kind k) {
  switch (k) {
    case Arg::Kind::None: return "None";
    case Arg::Kind::Tensor: return "Tensor";
    case Arg::Kind::TensorList: return "Tensor[]";
    case Arg::Kind::Bool: return "bool";
    case Arg::Kind::Int: return "int";
    case Arg::Kind::IntList: return "int[]";
    case Arg::Kind::Float: return "float";
    case Arg::Kind::Str: return "str";
    case Arg::Kind::DType: return "ScalarType";
  }
  return "?";
}

const Arg& BoundArgs::get(std::string_view name) const {
  int i = schema ? schema->arg_index(name) : -1;
  if (i < 0) {
    throw std::out_of_range("BoundArgs::get: no argument '" + std::string(name) + "' in " +
                            (schema ? schema->qualified_name : std::string("(unbound)")));
  }
  return values[static_cast<size_t>(i)];
}

std::string BoundArgs::field_of(std::string_view name) const {
  int i = schema ? schema->arg_index(name) : -1;
  if (i < 0 || !node) return "";
  if (static_cast<size_t>(i) < node->args.size()) return "args[" + std::to_string(i) + "]";
  if (node->kwarg(name)) return "kwargs." + std::string(name);
  return "";
}

void BoundArgs::fail(std::string_view name, const std::string& detail) const {
  throw SchemaError(node ? node->name : std::string(), schema ? schema->qualified_name : std::string(),
                    field_of(name), std::string(name), detail);
}

int64_t BoundArgs::get_int(std::string_view name) const {
  const Index& v = get(name).integer();
  if (!v.is_const()) fail(name, "expected a constant, got symbolic " + v.str());
  return v.value();
}

std::optional<int64_t> BoundArgs::optional_int(std::string_view name) const {
  if (!given(name)) return std::nullopt;
  return get_int(name);
}

bool BoundArgs::get_bool(std::string_view name) const { return get(name).boolean(); }

Number BoundArgs::get_number(std::string_view name) const {
  const Arg& a = get(name);
  switch (a.kind()) {
    case Arg::Kind::Float: return {a.number(), Arg::Kind::Float};
    case Arg::Kind::Bool: return {a.boolean() ? 1.0 : 0.0, Arg::Kind::Bool};
    case Arg::Kind::Int:
      if (!a.integer().is_const()) fail(name, "is a symbolic scalar (" + a.integer().str() + "); only constants are supported");
      return {static_cast<double>(a.integer().value()), Arg::Kind::Int};
    default: fail(name, "expected a number, got " + std::string(arg_kind_schema_name(a.kind())));
  }
}

std::optional<Number> BoundArgs::optional_number(std::string_view name) const {
  if (!given(name)) return std::nullopt;
  return get_number(name);
}

double BoundArgs::get_float(std::string_view name) const { return get_number(name).value; }

std::optional<double> BoundArgs::optional_float(std::string_view name) const {
  if (!given(name)) return std::nullopt;
  return get_float(name);
}

const std::string& BoundArgs::get_str(std::string_view name) const { return get(name).str(); }

std::string BoundArgs::str_or(std::string_view name, const std::string& fallback) const {
  return given(name) ? get_str(name) : fallback;
}

std::optional<DType> BoundArgs::optional_dtype(std::string_view name) const {
  if (!given(name)) return std::nullopt;
  return get(name).dtype();
}

std::vector<int64_t> BoundArgs::get_ints(std::string_view name) const {
  std::vector<int64_t> out;
  for (const Index& v : get(name).ints()) {
    if (!v.is_const()) fail(name, "expected constants, got symbolic " + v.str());
    out.push_back(v.value());
  }
  return out;
}

std::optional<std::vector<int64_t>> BoundArgs::optional_ints(std::string_view name) const {
  if (!given(name)) return std::nullopt;
  return get_ints(name);
}

namespace {

/// Checks one value against its argument's type and returns it normalised (see op_schema.h), or nullopt when the
/// type does not fit.
std::optional<Arg> coerce(const ArgSchema& a, const Arg& v) {
  using K = Arg::Kind;
  if (v.is_none()) return a.optional ? std::optional<Arg>(v) : std::nullopt;
  switch (a.type) {
    case ArgType::Tensor:
      if (v.kind() == K::Tensor || v.kind() == K::Bool || v.kind() == K::Int || v.kind() == K::Float) return v;
      return std::nullopt;
    case ArgType::TensorList:
    case ArgType::OptionalTensorList:
      if (v.kind() == K::IntList && v.ints().empty()) return Arg{std::vector<std::optional<ValueRef>>{}};
      if (v.kind() != K::TensorList) return std::nullopt;
      if (a.type == ArgType::TensorList) {
        for (const auto& t : v.tensors()) {
          if (!t) return std::nullopt;
        }
      }
      return v;
    case ArgType::Scalar:
      if (v.kind() == K::Bool || v.kind() == K::Int || v.kind() == K::Float) return v;
      return std::nullopt;
    case ArgType::Int:
      if (v.kind() == K::Int) return v;
      return std::nullopt;
    case ArgType::IntList:
      if (v.kind() == K::IntList) return v;
      if (v.kind() == K::Int && a.list_size > 0) return Arg::of(std::vector<Index>(a.list_size, v.integer()));
      return std::nullopt;
    case ArgType::Bool:
      if (v.kind() == K::Bool) return v;
      return std::nullopt;
    case ArgType::Float:
      if (v.kind() == K::Float) return v;
      if (v.kind() == K::Int && v.integer().is_const()) return Arg::of(static_cast<double>(v.integer().value()));
      return std::nullopt;
    case ArgType::ScalarType:
      if (v.kind() == K::DType) return v;
      return std::nullopt;
    case ArgType::Str:
    case ArgType::Opaque:
      if (v.kind() == K::Str) return v;
      return std::nullopt;
  }
  return std::nullopt;
}

std::string join_names(const std::vector<ArgSchema>& args, bool keyword) {
  std::string s;
  for (const ArgSchema& a : args) {
    if (!keyword && a.kwarg_only) continue;
    if (!s.empty()) s += ", ";
    s += a.name;
  }
  return s.empty() ? "none" : s;
}

}  // namespace

BoundArgs bind_args(const Node& node, const OpSchema& op_schema) {
  const OpSchema* schema = &op_schema;
  const std::string& op = schema->qualified_name;

  size_t positional_limit = 0;
  for (const ArgSchema& a : schema->args) positional_limit += a.kwarg_only ? 0 : 1;
  if (node.args.size() > positional_limit) {
    throw SchemaError(node.name, op, "args", "",
                      std::to_string(node.args.size()) + " positional arguments given, at most " +
                          std::to_string(positional_limit) + " accepted (" + join_names(schema->args, false) + ")");
  }

  std::vector<std::optional<Arg>> values(schema->args.size());
  auto take = [&](size_t i, const Arg& v, const std::string& field) {
    const ArgSchema& a = schema->args[i];
    std::optional<Arg> c = coerce(a, v);
    if (!c) {
      std::string got(arg_kind_schema_name(v.kind()));
      if (v.kind() == Arg::Kind::TensorList && a.type == ArgType::TensorList) got = "a tensor list holding None";
      if (v.kind() == Arg::Kind::Int && a.type == ArgType::Float) got = "symbolic int " + v.integer().str();
      SchemaError e(node.name, op, field, a.name, "expected " + a.type_text + ", got " + got);
      e.expected = &a;
      e.got = v.kind();
      throw e;
    }
    values[i] = std::move(c);
  };
  for (size_t i = 0; i < node.args.size(); ++i) take(i, node.args[i], "args[" + std::to_string(i) + "]");
  for (const auto& [key, value] : node.kwargs) {
    int i = schema->arg_index(key);
    std::string field = "kwargs." + key;
    if (i < 0) {
      throw SchemaError(node.name, op, field, "",
                        "unknown keyword argument '" + key + "' (accepted: " + join_names(schema->args, true) + ")");
    }
    if (values[static_cast<size_t>(i)]) {
      throw SchemaError(node.name, op, field, key,
                        static_cast<size_t>(i) < node.args.size() ? "given both positionally and by keyword"
                                                                  : "given twice");
    }
    take(static_cast<size_t>(i), value, field);
  }

  BoundArgs bound;
  bound.schema = schema;
  bound.node = &node;
  bound.values.reserve(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const ArgSchema& a = schema->args[i];
    if (!values[i] && !a.default_value) {
      throw SchemaError(node.name, op, "args", a.name, "missing (required, " + a.type_text + ", no default)");
    }
    bound.values.push_back(values[i] ? std::move(*values[i]) : *a.default_value);
  }
  return bound;
}

}  // namespace hi

// ---------------------------------------------------------------------------------------------------------------
// Meta inference

namespace hi {

DType default_dtype_of(Arg::Kind kind) {
  switch (kind) {
    case Arg::Kind::Bool: return DType::Bool;
    case Arg::Kind::Int: return DType::Int64;
    default: return DType::Float32;  // torch.get_default_dtype()
  }
}

std::string sizes_str(const std::vector<Index>& sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + sizes[i].str();
  return s + "]";
}

void ResultType::add(DType t, Priority p) {
  std::optional<DType>& slot =
      p == Priority::WrappedNumber ? wrapped_ : p == Priority::ZeroDim ? zero_dim_ : dimensioned_;
  slot = slot ? promote_types(*slot, t) : t;
}

namespace {
// c10's combine_categories: a lower-priority operand only matters when it is of a higher category.
std::optional<DType> combine_categories(std::optional<DType> higher, std::optional<DType> lower) {
  if (!higher) return lower;
  if (!lower || is_floating(*higher)) return higher;
  if (*higher == DType::Bool || is_floating(*lower)) return promote_types(*higher, *lower);
  return higher;
}
}  // namespace

std::optional<DType> ResultType::result() const {
  return combine_categories(dimensioned_, combine_categories(zero_dim_, wrapped_));
}

void MetaInference::fail(std::string_view argument, const std::string& detail) const {
  throw SchemaError(node_.name, args_.schema->qualified_name, field_of(argument), std::string(argument), detail);
}

MetaOperand MetaInference::operand(std::string_view name) const {
  const Arg& a = arg(name);
  if (a.is_tensor()) {
    const ValueRef& r = a.tensor();
    if (r.node < 0 || static_cast<size_t>(r.node) >= g_.nodes.size() ||
        r.output < 0 || static_cast<size_t>(r.output) >= g_.nodes[static_cast<size_t>(r.node)].outputs.size()) {
      fail(name, "reference to a value that is not in the graph");
    }
    return {g_.meta(r), false};
  }
  return {TensorMeta::contiguous(default_dtype_of(a.kind()), {}), true};
}

std::vector<TensorMeta> MetaInference::tensors(std::string_view name) const {
  std::vector<TensorMeta> out;
  for (const auto& r : arg(name).tensors()) {
    if (!r || r->node < 0 || static_cast<size_t>(r->node) >= g_.nodes.size() || r->output < 0 ||
        static_cast<size_t>(r->output) >= g_.nodes[static_cast<size_t>(r->node)].outputs.size()) {
      fail(name, "reference to a value that is not in the graph");
    }
    out.push_back(g_.meta(*r));
  }
  return out;
}

int64_t MetaInference::constant(std::string_view name, const Index& v) const {
  if (!v.is_const()) fail(name, "expected a constant, got symbolic " + v.str());
  return v.value();
}

int64_t MetaInference::wrap_dim(std::string_view name, int64_t dim, int64_t rank) const {
  int64_t r = std::max<int64_t>(rank, 1);
  if (dim < -r || dim >= r) {
    fail(name, "dim " + std::to_string(dim) + " out of range for a tensor of rank " + std::to_string(rank) +
                   " (expected [" + std::to_string(-r) + ", " + std::to_string(r - 1) + "])");
  }
  return dim < 0 ? dim + r : dim;
}

std::vector<Index> MetaInference::broadcast(const std::vector<std::string_view>& names) const {
  std::vector<Index> out;
  std::string first;
  for (std::string_view name : names) {
    if (arg(name).is_none()) continue;
    const TensorMeta m = tensor(name);
    std::vector<Index> merged(std::max(out.size(), m.sizes.size()));
    for (size_t i = 0; i < merged.size(); ++i) {  // aligned from the right
      const Index* a = i < out.size() ? &out[out.size() - 1 - i] : nullptr;
      const Index* b = i < m.sizes.size() ? &m.sizes[m.sizes.size() - 1 - i] : nullptr;
      Index& r = merged[merged.size() - 1 - i];
      if (!b) {
        r = *a;
      } else if (!a || a->is_const(1)) {
        r = *b;
      } else if (b->is_const(1) || *a == *b) {
        r = *a;
      } else {
        fail(name, "sizes " + sizes_str(m.sizes) + " do not broadcast with " + first + "'s " + sizes_str(out) +
                       " (dim " + std::to_string(static_cast<int64_t>(merged.size() - 1 - i)) + ": " + b->str() +
                       " vs " + a->str() + ")");
      }
    }
    out = std::move(merged);
    first = first.empty() ? std::string(name) : "the other operands";
  }
  return out;
}

DType MetaInference::result_type(const std::vector<std::string_view>& names) const {
  ResultType rt;
  for (std::string_view name : names) {
    if (arg(name).is_none()) continue;
    MetaOperand o = operand(name);
    if (o.wrapped_number) {
      rt.add(o.meta.dtype, ResultType::Priority::WrappedNumber);
    } else {
      rt.add_tensor(o.meta.dtype, o.meta.rank());
    }
  }
  return rt.result().value_or(DType::Float32);
}

void MetaInference::require_floating(std::string_view name, DType t, std::string_view what) const {
  if (!is_floating(t)) fail(name, std::string(what) + " needs a floating-point tensor, got " +
                                      std::string(dtype_name(t)));
}

std::vector<Index> MetaInference::reduce_sizes(std::string_view dim_name, const TensorMeta& in, const Arg& dims,
                                               bool keepdim) const {
  std::vector<bool> reduced(static_cast<size_t>(in.rank()), dims.is_none() || dims.ints().empty());
  if (!dims.is_none()) {
    for (const Index& d : dims.ints()) {
      int64_t w = wrap_dim(dim_name, constant(dim_name, d), in.rank());
      if (in.rank() == 0) continue;
      if (reduced[static_cast<size_t>(w)]) {
        fail(dim_name, "dim " + std::to_string(w) + " appears more than once in the list");
      }
      reduced[static_cast<size_t>(w)] = true;
    }
  }
  std::vector<Index> out;
  for (size_t i = 0; i < reduced.size(); ++i) {
    if (!reduced[i]) {
      out.push_back(in.sizes[i]);
    } else if (keepdim) {
      out.emplace_back(1);
    }
  }
  return out;
}

Metas broadcast_binary(const MetaInference& m, std::string_view a, std::string_view b) {
  return one(m.result_type({a, b}), m.broadcast({a, b}));
}

Metas copied(const Metas& views) {
  Metas out;
  for (const TensorMeta& v : views) out.push_back(TensorMeta::contiguous(v.dtype, v.sizes));
  return out;
}

Metas true_divide(const MetaInference& m) {
  return one(to_float(m.result_type({"self", "other"})), m.broadcast({"self", "other"}));
}

Metas unary_same(const MetaInference& m) {
  TensorMeta in = m.tensor("self");
  return one(in.dtype, in.sizes);
}

Metas unary_float(const MetaInference& m) {
  TensorMeta in = m.tensor("self");
  return one(to_float(in.dtype), in.sizes);
}

DType sum_dtype(const MetaInference& m, DType in) {
  if (m.given("dtype")) return m.arg("dtype").dtype();
  return is_integral_or_bool(in) ? DType::Int64 : in;
}

}  // namespace hi
