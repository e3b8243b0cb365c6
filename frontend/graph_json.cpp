#include "frontend/graph_json.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "frontend/index_text.h"
#include "ir/op_schema.h"
#include "lowering/op_registry.h"

namespace hi {
namespace {

// ordered_json keeps kwargs in file order, so a graph round-trips exactly.
using Json = nlohmann::ordered_json;

constexpr int kMaxNesting = 64;

std::string one_line(std::string s) {
  for (char& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return s;
}

/// Longest echo of an input value (a name, a key, a dtype) in a message, and longest message: hostile input can hold
/// megabytes in one string, and an error line must stay readable.
constexpr size_t kMaxEcho = 80, kMaxMessage = 400;

std::string clipped(const std::string& s, size_t limit) {
  if (s.size() <= limit) return s;
  return s.substr(0, limit) + "...";
}

/// A string as JSON writes it, cut to kMaxEcho for messages.
std::string quoted(const std::string& s) { return clipped(Json(s).dump(), kMaxEcho); }
std::string echo(const std::string& s) { return clipped(s, kMaxEcho); }
std::string json_string(const std::string& s) { return Json(s).dump(); }

/// How a JSON value reads in "got ..." messages.
std::string describe(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::boolean: return "boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "integer";
    case Json::value_t::number_float: return "number";
    case Json::value_t::string: return "string";
    case Json::value_t::array: return "array";
    case Json::value_t::object:
      if (v.contains("ref")) return "tensor reference";
      if (v.contains("sym")) return "symbolic integer";
      if (v.contains("dtype")) return "dtype";
      if (v.contains("float")) return "float";
      return "object";
    default: return "unknown JSON value";
  }
}

/// How a schema argument type reads in "expected ..." messages.
std::string expected_json(const ArgSchema& a) {
  std::string s;
  switch (a.type) {
    case ArgType::Tensor: s = "a tensor reference"; break;
    case ArgType::TensorList: s = "a list of tensor references"; break;
    case ArgType::OptionalTensorList: s = "a list of tensor references or nulls"; break;
    case ArgType::Scalar: s = "a number or boolean"; break;
    case ArgType::Int: s = "an integer"; break;
    case ArgType::IntList: s = a.list_size > 0 ? "an integer or a list of integers" : "a list of integers"; break;
    case ArgType::Bool: s = "a boolean"; break;
    case ArgType::Float: s = "a number"; break;
    case ArgType::ScalarType: s = "a dtype ({\"dtype\": NAME})"; break;
    case ArgType::Str:
    case ArgType::Opaque: s = "a string"; break;
  }
  return a.optional ? s + " or null" : s;
}

std::string sizes_text(const std::vector<Index>& sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + format_index_text(sizes[i]);
  return s + "]";
}

/// Deepest nesting of arrays/objects, found before parsing so the recursive parser never runs out of stack.
bool nesting_too_deep(const std::string& text) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxNesting) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

class GraphReader {
 public:
  explicit GraphReader(std::string source) : source_(std::move(source)) {}

  Graph read(const std::string& text) {
    if (nesting_too_deep(text)) fail("not JSON this reader accepts: nested deeper than " +
                                     std::to_string(kMaxNesting) + " levels");
    Json doc;
    try {
      doc = Json::parse(text, reject_duplicate_keys());
    } catch (const Json::parse_error& e) {
      std::string msg = e.what();
      if (size_t p = msg.find("] "); p != std::string::npos) msg = msg.substr(p + 2);
      fail("not JSON: " + msg);
    }
    if (!doc.is_object()) fail("expected a JSON object at the top level, got " + describe(doc));
    check_fields(doc, {"format", "version", "nodes", "outputs", "align", "divisible", "index32"}, "");

    const Json* format = doc.contains("format") ? &doc["format"] : nullptr;
    if (!format) fail("missing field 'format' (expected \"" + std::string(kGraphFormatName) + "\")");
    if (!format->is_string() || format->get<std::string>() != kGraphFormatName) {
      fail("field 'format': expected \"" + std::string(kGraphFormatName) + "\", got " +
           (format->is_string() ? quoted(format->get<std::string>()) : describe(*format)));
    }
    if (!doc.contains("version")) fail("missing field 'version'");
    const Json& version = doc["version"];
    if (!version.is_number_integer()) fail("field 'version': expected an integer, got " + describe(version));
    if (version.get<int64_t>() < 1 || version.get<int64_t>() > kGraphFormatVersion) {
      fail("unsupported version " + version.dump() + " (this reader understands versions 1 to " +
           std::to_string(kGraphFormatVersion) + ")");
    }
    if (!doc.contains("nodes")) fail("missing field 'nodes'");
    if (!doc["nodes"].is_array()) fail("field 'nodes': expected an array, got " + describe(doc["nodes"]));
    if (!doc.contains("outputs")) fail("missing field 'outputs'");
    if (!doc["outputs"].is_array()) fail("field 'outputs': expected an array, got " + describe(doc["outputs"]));

    if (doc.contains("align")) {
      if (version.get<int64_t>() < 2) fail("field 'align' needs version 2, got version " + version.dump());
      const Json& a = doc["align"];
      if (!a.is_number_integer() || a.get<int64_t>() < 1 || a.get<int64_t>() > 4096 ||
          (a.get<int64_t>() & (a.get<int64_t>() - 1)) != 0)
        fail("field 'align': expected a power of two from 1 to 4096 (bytes), got " + a.dump());
      g_.align = a.get<int64_t>();
    }
    if (doc.contains("divisible")) {
      if (version.get<int64_t>() < 3) fail("field 'divisible' needs version 3, got version " + version.dump());
      const Json& d = doc["divisible"];
      if (!d.is_object()) fail("field 'divisible': expected an object of symbol: divisor, got " + describe(d));
      for (const auto& [symbol, divisor] : d.items()) {
        const std::string field = "divisible." + symbol;
        Index parsed;
        try {
          parsed = parse_index_text(symbol);
        } catch (const std::invalid_argument&) {
        }
        if (!parsed.is_var()) fail("field '" + field + "': expected a size symbol's name (\"s0\") as the key");
        if (!divisor.is_number_integer() || divisor.get<int64_t>() < 1 || divisor.get<int64_t>() > (int64_t{1} << 30))
          fail("field '" + field + "': expected a divisor from 1 to 2^30, got " + divisor.dump());
        if (divisor.get<int64_t>() > 1) g_.divisible[symbol] = divisor.get<int64_t>();
      }
    }
    if (doc.contains("index32")) {
      if (version.get<int64_t>() < 4) fail("field 'index32' needs version 4, got version " + version.dump());
      if (!doc["index32"].is_boolean()) fail("field 'index32': expected true or false, got " + describe(doc["index32"]));
      g_.index32 = doc["index32"].get<bool>();
    }
    for (size_t i = 0; i < doc["nodes"].size(); ++i) read_node(doc["nodes"][i], i);
    const Json& outputs = doc["outputs"];
    for (size_t i = 0; i < outputs.size(); ++i) {
      std::string field = "outputs[" + std::to_string(i) + "]";
      if (!outputs[i].is_object() || !outputs[i].contains("ref")) {
        fail(field + ": expected a tensor reference, got " + describe(outputs[i]));
      }
      g_.outputs.push_back(resolve(outputs[i], field, field + ": "));
    }

    std::vector<std::string> problems = verify_graph(g_);
    if (!problems.empty()) fail(one_line(problems.front()));
    return std::move(g_);
  }

 private:
  [[noreturn]] void fail(const std::string& msg) const {
    throw GraphFormatError(source_ + ": " + clipped(one_line(msg), kMaxMessage));
  }

  /// The "node 'add' (aten.add.Tensor)" prefix of messages about the node being read.
  std::string where() const {
    if (node_name_.empty()) return "nodes[" + std::to_string(node_index_) + "]";
    return "node '" + echo(node_name_) + "'" + (op_.empty() ? "" : " (" + op_ + ")");
  }
  [[noreturn]] void fail_field(const std::string& field, const std::string& msg) const {
    fail(where() + ": field '" + field + "': " + msg);
  }

  void check_fields(const Json& obj, std::initializer_list<const char*> known, const std::string& context) const {
    for (const auto& item : obj.items()) {
      bool ok = false;
      for (const char* k : known) ok = ok || item.key() == k;
      if (ok) continue;
      std::string list;
      for (const char* k : known) list += (list.empty() ? "" : ", ") + std::string(k);
      std::string msg = "unknown field '" + echo(item.key()) + "' (expected " + list + ")";
      if (context.empty()) fail(msg);
      fail(where() + ": " + (context == "." ? "" : "field '" + context + "': ") + msg);
    }
  }

  void read_node(const Json& j, size_t index) {
    node_index_ = index;
    node_name_.clear();
    op_.clear();
    if (!j.is_object()) fail(where() + ": expected an object, got " + describe(j));
    if (!j.contains("name")) fail(where() + ": missing field 'name'");
    if (!j["name"].is_string()) fail_field("name", "expected a string, got " + describe(j["name"]));
    Node node;
    node.name = j["name"].get<std::string>();
    if (node.name.empty()) fail_field("name", "must not be empty");
    node_name_ = node.name;
    if (names_.count(node.name)) {
      fail(where() + ": duplicate name (nodes[" + std::to_string(names_.at(node.name)) + "] has it too)");
    }
    if (!j.contains("op")) fail(where() + ": missing field 'op'");
    if (!j["op"].is_string()) fail_field("op", "expected a string, got " + describe(j["op"]));
    node.target = j["op"].get<std::string>();

    if (node.target == "placeholder") {
      op_ = "placeholder";
      check_fields(j, {"name", "op", "meta"}, ".");
      node.kind = NodeKind::Placeholder;
      node.target.clear();
      if (!j.contains("meta")) fail(where() + ": missing field 'meta'");
      if (!j["meta"].is_object()) fail_field("meta", "expected an object, got " + describe(j["meta"]));
      node.outputs.push_back(read_meta(j["meta"], "meta"));
    } else {
      read_call(j, node);
    }
    for (size_t i = 0; i < node.outputs.size(); ++i)
      check_extent(node.outputs[i], node.outputs.size() == 1 ? "meta" : "meta[" + std::to_string(i) + "]");
    names_.emplace(node.name, g_.nodes.size());
    g_.nodes.push_back(std::move(node));
  }

  void read_call(const Json& j, Node& node) {
    const OpSchema* schema = find_op_schema(node.target);
    if (!schema) fail("unknown op '" + echo(node.target) + "' at node '" + echo(node.name) + "'");
    op_ = schema->qualified_name;
    node.kind = NodeKind::Call;
    check_fields(j, {"name", "op", "args", "kwargs", "meta"}, ".");

    // Where each argument came from, to describe a value of the wrong type in JSON's words.
    std::unordered_map<std::string, const Json*> sources;
    if (j.contains("args")) {
      const Json& args = j["args"];
      if (!args.is_array()) fail_field("args", "expected an array, got " + describe(args));
      for (size_t i = 0; i < args.size(); ++i) {
        std::string field = "args[" + std::to_string(i) + "]";
        node.args.push_back(read_arg(args[i], field));
        sources[field] = &args[i];
      }
    }
    if (j.contains("kwargs")) {
      const Json& kwargs = j["kwargs"];
      if (!kwargs.is_object()) fail_field("kwargs", "expected an object, got " + describe(kwargs));
      for (const auto& item : kwargs.items()) {
        std::string field = "kwargs." + item.key();
        node.kwargs.emplace_back(item.key(), read_arg(item.value(), field));
        sources[field] = &item.value();
      }
    }

    std::vector<TensorMeta> inferred;
    try {
      BoundArgs bound = bind_args(node);
      inferred = infer_meta(g_, node, bound);
    } catch (const SchemaError& e) {
      if (e.expected && sources.count(e.field())) {
        fail_field(e.field(), "expected " + expected_json(*e.expected) + ", got " + describe(*sources[e.field()]));
      }
      fail(e.what());
    }

    if (!j.contains("meta")) {
      node.outputs = std::move(inferred);
      return;
    }
    const Json& meta = j["meta"];
    if (schema->num_outputs == 1 && meta.is_object()) {
      node.outputs.push_back(read_meta(meta, "meta"));
    } else if (meta.is_array()) {
      // A list-returning op (split, unbind) has as many outputs as its meta inference gives.
      size_t expected = schema->returns_list ? inferred.size() : static_cast<size_t>(schema->num_outputs);
      if (meta.size() != expected) {
        fail("node '" + echo(node.name) + "': meta: " + std::to_string(meta.size()) + " entries given, " + op_ + " has " +
             std::to_string(expected) + " output" + (expected == 1 ? "" : "s"));
      }
      for (size_t i = 0; i < meta.size(); ++i) {
        std::string field = "meta[" + std::to_string(i) + "]";
        if (!meta[i].is_object()) fail_field(field, "expected an object, got " + describe(meta[i]));
        node.outputs.push_back(read_meta(meta[i], field));
      }
    } else {
      fail_field("meta", std::string("expected ") +
                             (schema->num_outputs == 1 ? "an object" : "an array of " +
                                                                          std::to_string(schema->num_outputs) +
                                                                          " objects") +
                             ", got " + describe(meta));
    }
    if (node.outputs.size() != inferred.size()) {
      fail("node '" + echo(node.name) + "': meta: " + std::to_string(node.outputs.size()) + " entries given, " + op_ +
           " gives " + std::to_string(inferred.size()) + " here");
    }
    for (size_t i = 0; i < inferred.size(); ++i) {
      std::string field = meta.is_array() ? "meta[" + std::to_string(i) + "]" : "meta";
      const TensorMeta& given = node.outputs[i];
      // Norm statistics follow the device, as the node's meta says: float32 (GPUs) or the input's dtype (cpu
      // device); batch norm's when not training are [C] on GPUs where the cpu device's are empty ([0]).
      const bool statistics = schema->device_statistics && (i == 1 || i == 2) && !node.args.empty() &&
                              node.args[0].is_tensor();
      const TensorMeta* input = statistics ? &g_.meta(node.args[0].tensor()) : nullptr;
      const bool statistics_dtype = statistics && (given.dtype == DType::Float32 || given.dtype == input->dtype);
      const bool statistics_sizes = statistics && input->rank() >= 2 && inferred[i].sizes == std::vector<Index>{0} &&
                                    given.sizes == std::vector<Index>{input->sizes[1]};
      if (given.dtype != inferred[i].dtype && !statistics_dtype) {
        fail("node '" + echo(node.name) + "': " + field + ": dtype " + std::string(dtype_name(given.dtype)) +
             " inconsistent with " + op_ + ", which gives " + std::string(dtype_name(inferred[i].dtype)));
      }
      if (given.sizes != inferred[i].sizes && !statistics_sizes) {
        fail("node '" + echo(node.name) + "': " + field + ": sizes " + sizes_text(given.sizes) + " inconsistent with " +
             op_ + ", which gives " + sizes_text(inferred[i].sizes));
      }
    }
  }

  TensorMeta read_meta(const Json& j, const std::string& field) {
    check_fields(j, {"dtype", "sizes", "strides", "offset"}, field);
    TensorMeta m;
    if (!j.contains("dtype")) fail_field(field, "missing field 'dtype'");
    if (!j["dtype"].is_string()) fail_field(field + ".dtype", "expected a string, got " + describe(j["dtype"]));
    std::optional<DType> dtype = parse_dtype(j["dtype"].get<std::string>());
    if (!dtype) fail_field(field + ".dtype", "unknown dtype " + quoted(j["dtype"].get<std::string>()));
    m.dtype = *dtype;
    if (!j.contains("sizes")) fail_field(field, "missing field 'sizes'");
    m.sizes = read_index_list(j["sizes"], field + ".sizes");
    check_count(m.sizes, field);  // before the contiguous strides multiply them
    if (j.contains("strides")) {
      m.strides = read_index_list(j["strides"], field + ".strides");
      if (m.strides.size() != m.sizes.size()) {
        fail_field(field + ".strides", std::to_string(m.strides.size()) + " strides for " +
                                           std::to_string(m.sizes.size()) + " sizes");
      }
    } else {
      m.strides = TensorMeta::contiguous_strides(m.sizes);
    }
    m.offset = j.contains("offset") ? read_index(j["offset"], field + ".offset") : Index(0);
    return m;
  }

  /// Sizes, strides and offset the compiler can index with int64 arithmetic: the element count, and the byte offset
  /// of the last element, must fit. Anything larger is no real tensor, and would overflow the compiler's index
  /// arithmetic later, far from the field at fault. Symbolic sizes are checked when they are bound, not here.
  void check_extent(const TensorMeta& m, const std::string& field) const {
    const int64_t numel = check_count(m.sizes, field);
    if (numel <= 0) return;  // no element is ever addressed, or a symbolic size
    if (!m.offset.is_const()) return;
    int64_t last = m.offset.value();
    bool overflow = false;
    for (size_t d = 0; d < m.sizes.size() && !overflow; ++d) {
      if (!m.strides[d].is_const()) return;
      int64_t step = 0;
      overflow = __builtin_mul_overflow(m.sizes[d].value() - 1, m.strides[d].value(), &step) ||
                 __builtin_add_overflow(last, step, &last);
    }
    overflow = overflow || __builtin_mul_overflow(last + 1, int64_t{dtype_bytes(m.dtype)}, &last);
    if (overflow)
      fail_field(field + ".strides", "sizes " + sizes_text(m.sizes) + " with strides " + sizes_text(m.strides) +
                                         " and offset " + format_index_text(m.offset) +
                                         " reach past the largest byte offset int64 holds");
  }

  /// The element count of constant `sizes` (-1 when one is symbolic), refused when it overflows int64.
  int64_t check_count(const std::vector<Index>& sizes, const std::string& field) const {
    int64_t numel = 1;
    for (const Index& s : sizes)
      if (!s.is_const()) return -1;
    for (const Index& s : sizes)
      if (__builtin_mul_overflow(numel, s.value(), &numel)) {
        // A zero anywhere makes the tensor empty, whatever the other sizes multiply to.
        for (const Index& z : sizes)
          if (z.is_const(0)) return 0;
        fail_field(field + ".sizes", sizes_text(sizes) + " hold more elements than int64 counts");
      }
    return numel;
  }

  /// The parser callback that refuses an object repeating a key: the format makes every field's meaning depend on
  /// its name, and nlohmann's parser would silently keep the last of two.
  Json::parser_callback_t reject_duplicate_keys() {
    return [this](int, Json::parse_event_t event, Json& parsed) {
      switch (event) {
        case Json::parse_event_t::object_start: open_keys_.emplace_back(); break;
        case Json::parse_event_t::object_end: open_keys_.pop_back(); break;
        case Json::parse_event_t::key: {
          std::string key = parsed.get<std::string>();
          if (!open_keys_.back().insert(key).second)
            fail("not JSON this reader accepts: key " + hi::quoted(key) + " appears twice in one object");
          break;
        }
        default: break;
      }
      return true;
    };
  }

  std::vector<Index> read_index_list(const Json& j, const std::string& field) {
    if (!j.is_array()) fail_field(field, "expected an array, got " + describe(j));
    std::vector<Index> out;
    for (size_t i = 0; i < j.size(); ++i) out.push_back(read_index(j[i], field + "[" + std::to_string(i) + "]"));
    return out;
  }

  /// A non-negative integer or {"sym": EXPR}: sizes, strides, offsets.
  Index read_index(const Json& j, const std::string& field) {
    if (j.is_object() && j.contains("sym")) return read_sym(j, field);
    if (!j.is_number_integer() && !j.is_number_unsigned()) {
      fail_field(field, "expected an integer or {\"sym\": EXPR}, got " + describe(j));
    }
    int64_t v = read_int(j, field);
    if (v < 0) fail_field(field, "expected a non-negative integer, got " + std::to_string(v));
    return Index(v);
  }

  int64_t read_int(const Json& j, const std::string& field) {
    if (j.is_number_unsigned() && j.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      fail_field(field, "integer " + j.dump() + " out of range");
    }
    return j.get<int64_t>();
  }

  Index read_sym(const Json& j, const std::string& field) {
    check_fields(j, {"sym"}, field);
    if (!j["sym"].is_string()) fail_field(field + ".sym", "expected a string, got " + describe(j["sym"]));
    try {
      return parse_index_text(j["sym"].get<std::string>());
    } catch (const std::invalid_argument& e) {
      fail_field(field + ".sym", e.what());
    }
  }

  /// One argument, decoded by its JSON shape alone; bind_args then checks it against the schema.
  Arg read_arg(const Json& j, const std::string& field) {
    switch (j.type()) {
      case Json::value_t::null: return Arg::none();
      case Json::value_t::boolean: return Arg::of(j.get<bool>());
      case Json::value_t::number_integer:
      case Json::value_t::number_unsigned: return Arg::of(read_int(j, field));
      case Json::value_t::number_float: return Arg::of(j.get<double>());
      case Json::value_t::string: return Arg::of(j.get<std::string>());
      case Json::value_t::array: return read_list(j, field);
      case Json::value_t::object: break;
      default: fail_field(field, "unsupported JSON value");
    }
    if (j.contains("ref")) return Arg::of(resolve(j, field, "node '" + echo(node_name_) + "': "));
    if (j.contains("sym")) return Arg::of(read_sym(j, field));
    if (j.contains("dtype")) {
      check_fields(j, {"dtype"}, field);
      const Json& name = j["dtype"];
      if (!name.is_string()) fail_field(field + ".dtype", "expected a string, got " + describe(name));
      std::optional<DType> t = parse_dtype(name.get<std::string>());
      if (!t) fail_field(field + ".dtype", "unknown dtype " + quoted(name.get<std::string>()));
      return Arg::of(*t);
    }
    if (j.contains("float")) {
      check_fields(j, {"float"}, field);
      const Json& v = j["float"];
      if (v.is_number()) return Arg::of(v.get<double>());
      if (v.is_string()) {
        std::string s = v.get<std::string>();
        if (s == "inf") return Arg::of(std::numeric_limits<double>::infinity());
        if (s == "-inf") return Arg::of(-std::numeric_limits<double>::infinity());
        if (s == "nan") return Arg::of(std::numeric_limits<double>::quiet_NaN());
      }
      fail_field(field + ".float", "expected a number, \"inf\", \"-inf\" or \"nan\", got " +
                                       (v.is_string() ? quoted(v.get<std::string>()) : describe(v)));
    }
    fail_field(field, "expected an object with one of 'ref', 'sym', 'dtype', 'float', got " +
                          (j.empty() ? std::string("{}") : "one with '" + j.items().begin().key() + "'"));
  }

  /// An array is an int list (integers and syms, or empty) or a tensor list (references and nulls).
  Arg read_list(const Json& j, const std::string& field) {
    if (j.empty()) return Arg::of(std::vector<Index>{});
    const Json& first = j[0];
    bool tensors = first.is_null() || (first.is_object() && first.contains("ref"));
    if (tensors) {
      std::vector<std::optional<ValueRef>> refs;
      for (size_t i = 0; i < j.size(); ++i) {
        std::string item = field + "[" + std::to_string(i) + "]";
        if (j[i].is_null()) {
          refs.emplace_back(std::nullopt);
        } else if (j[i].is_object() && j[i].contains("ref")) {
          refs.emplace_back(resolve(j[i], item, "node '" + echo(node_name_) + "': "));
        } else {
          fail_field(item, "expected a tensor reference or null (the list holds tensors), got " + describe(j[i]));
        }
      }
      return Arg{std::move(refs)};
    }
    std::vector<Index> ints;
    for (size_t i = 0; i < j.size(); ++i) {
      std::string item = field + "[" + std::to_string(i) + "]";
      if (j[i].is_object() && j[i].contains("sym")) {
        ints.push_back(read_sym(j[i], item));
      } else if (j[i].is_number_integer() || j[i].is_number_unsigned()) {
        ints.emplace_back(read_int(j[i], item));
      } else {
        fail_field(item, "expected an integer or {\"sym\": EXPR} (lists hold integers or tensor references), got " +
                             describe(j[i]));
      }
    }
    return Arg::of(std::move(ints));
  }

  /// {"ref": NAME, "output": K} to the value it names; `prefix` starts messages ("node 'add': ", "outputs[0]: ").
  ValueRef resolve(const Json& j, const std::string& field, const std::string& prefix) {
    check_fields(j, {"ref", "output"}, field);
    if (!j["ref"].is_string()) fail_field(field + ".ref", "expected a node name (string), got " + describe(j["ref"]));
    std::string name = j["ref"].get<std::string>();
    auto it = names_.find(name);
    if (it == names_.end()) {
      fail(prefix + "dangling reference '" + echo(name) + "' (no earlier node has that name)");
    }
    ValueRef r{static_cast<int>(it->second), 0};
    if (j.contains("output")) {
      const Json& k = j["output"];
      if (!k.is_number_integer() && !k.is_number_unsigned()) {
        fail(prefix + "field '" + field + ".output': expected an integer, got " + describe(k));
      }
      int64_t out = read_int(k, field + ".output");
      size_t count = g_.nodes[it->second].outputs.size();
      if (out < 0 || static_cast<uint64_t>(out) >= count) {
        fail(prefix + "field '" + field + ".output': node '" + echo(name) + "' has no output " + std::to_string(out) +
             " (it has " + std::to_string(count) + ")");
      }
      r.output = static_cast<int>(out);
    }
    return r;
  }

  std::string source_;
  std::vector<std::unordered_set<std::string>> open_keys_;
  Graph g_;
  std::unordered_map<std::string, size_t> names_;
  size_t node_index_ = 0;
  std::string node_name_;
  std::string op_;
};

// ---------------------------------------------------------------------------------------------------------------
// Writing

Json index_json(const Index& e) {
  if (e.is_const()) return e.value();
  return Json{{"sym", format_index_text(e)}};
}

Json index_list_json(const std::vector<Index>& v) {
  Json out = Json::array();
  for (const Index& e : v) out.push_back(index_json(e));
  return out;
}

Json meta_json(const TensorMeta& m) {
  Json out = {{"dtype", std::string(dtype_name(m.dtype))}, {"sizes", index_list_json(m.sizes)},
              {"strides", index_list_json(m.strides)}};
  if (!m.offset.is_const(0)) out["offset"] = index_json(m.offset);
  return out;
}

class GraphWriter {
 public:
  explicit GraphWriter(const Graph& g) : g_(g) {}

  std::string write() {
    const int version = g_.index32 ? 4 : !g_.divisible.empty() ? 3 : g_.align ? 2 : 1;
    std::string out = "{\"format\": " + json_string(kGraphFormatName) + ", \"version\": " + std::to_string(version) +
                      (g_.align ? ", \"align\": " + std::to_string(g_.align) : std::string());
    if (!g_.divisible.empty()) {
      Json d = Json::object();
      for (const auto& [symbol, divisor] : g_.divisible) d[symbol] = divisor;
      out += ", \"divisible\": " + compact(d);
    }
    if (g_.index32) out += ", \"index32\": true";
    out += ",\n \"nodes\": [";
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      out += i ? ",\n  " : "\n  ";
      out += compact(node_json(g_.nodes[i]));
    }
    Json outputs = Json::array();
    for (const ValueRef& r : g_.outputs) outputs.push_back(ref_json(r, "graph outputs"));
    out += "\n ],\n \"outputs\": " + compact(outputs) + "}\n";
    return out;
  }

 private:
  Json node_json(const Node& n) {
    Json j = {{"name", n.name}};
    if (n.kind == NodeKind::Placeholder) {
      j["op"] = "placeholder";
      j["meta"] = n.outputs.empty() ? Json::object() : meta_json(n.outputs[0]);
      return j;
    }
    j["op"] = n.target;
    Json args = Json::array();
    for (const Arg& a : n.args) args.push_back(arg_json(a, n.name));
    j["args"] = std::move(args);
    if (!n.kwargs.empty()) {
      Json kwargs = Json::object();
      for (const auto& [key, value] : n.kwargs) kwargs[key] = arg_json(value, n.name);
      j["kwargs"] = std::move(kwargs);
    }
    const OpSchema* schema = find_op_schema(n.target);
    bool single = schema ? schema->num_outputs == 1 : n.outputs.size() == 1;
    if (single && n.outputs.size() == 1) {
      j["meta"] = meta_json(n.outputs[0]);
    } else {
      Json metas = Json::array();
      for (const TensorMeta& m : n.outputs) metas.push_back(meta_json(m));
      j["meta"] = std::move(metas);
    }
    return j;
  }

  Json ref_json(const ValueRef& r, const std::string& user) {
    if (r.node < 0 || static_cast<size_t>(r.node) >= g_.nodes.size()) {
      throw std::invalid_argument("write_graph_json: " + user + " reference node index " + std::to_string(r.node) +
                                  ", which is out of range");
    }
    const Node& target = g_.nodes[static_cast<size_t>(r.node)];
    Json j = {{"ref", target.name}};
    // Spelled out for multi-output nodes even when 0, so a reader sees which output is meant.
    if (r.output != 0 || target.outputs.size() > 1) j["output"] = r.output;
    return j;
  }

  Json arg_json(const Arg& a, const std::string& node) {
    switch (a.kind()) {
      case Arg::Kind::None: return nullptr;
      case Arg::Kind::Tensor: return ref_json(a.tensor(), "node '" + node + "'");
      case Arg::Kind::TensorList: {
        Json out = Json::array();
        for (const auto& r : a.tensors()) out.push_back(r ? ref_json(*r, "node '" + node + "'") : Json(nullptr));
        return out;
      }
      case Arg::Kind::Bool: return a.boolean();
      case Arg::Kind::Int: return index_json(a.integer());
      case Arg::Kind::IntList: return index_list_json(a.ints());
      case Arg::Kind::Float: {
        double d = a.number();
        if (std::isnan(d)) return Json{{"float", "nan"}};
        if (std::isinf(d)) return Json{{"float", d > 0 ? "inf" : "-inf"}};
        return d;
      }
      case Arg::Kind::Str: return a.str();
      case Arg::Kind::DType: return Json{{"dtype", std::string(dtype_name(a.dtype()))}};
    }
    return nullptr;
  }

  /// JSON on one line with a space after ':' and ',' (as Python's json.dumps writes it).
  static std::string compact(const Json& j) {
    if (j.is_array()) {
      std::string s = "[";
      for (size_t i = 0; i < j.size(); ++i) s += (i ? ", " : "") + compact(j[i]);
      return s + "]";
    }
    if (j.is_object()) {
      std::string s = "{";
      bool first = true;
      for (const auto& item : j.items()) {
        s += (first ? "" : ", ") + json_string(item.key()) + ": " + compact(item.value());
        first = false;
      }
      return s + "}";
    }
    return j.dump();
  }

  const Graph& g_;
};

}  // namespace

Graph read_graph_json(const std::string& text, const std::string& source_name) {
  try {
    return GraphReader(source_name).read(text);
  } catch (const GraphFormatError&) {
    throw;
  } catch (const std::exception& e) {
    // A safety net: anything the checks above missed still surfaces as a one-line format error.
    throw GraphFormatError(source_name + ": " + clipped(one_line(e.what()), kMaxMessage));
  }
}

Graph load_graph_file(const std::string& path, size_t max_bytes) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw GraphFormatError(path + ": is a directory, not a graph file");
  const std::string limit = "the " + std::to_string(max_bytes) + "-byte limit for graph files";
  // A regular file's size says it at once; a pipe or a device (/dev/zero) is read in chunks until the limit.
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > max_bytes) throw GraphFormatError(path + ": " + std::to_string(size) + " bytes, over " + limit);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw GraphFormatError(path + ": cannot open: " + std::strerror(errno));
  std::string text;
  std::vector<char> chunk(1 << 20);
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    text.append(chunk.data(), static_cast<size_t>(in.gcount()));
    if (text.size() > max_bytes) throw GraphFormatError(path + ": more than " + limit);
  }
  if (in.bad()) throw GraphFormatError(path + ": cannot read: " + std::strerror(errno));
  return read_graph_json(text, path);
}

std::string write_graph_json(const Graph& g) { return GraphWriter(g).write(); }

void save_graph_file(const Graph& g, const std::string& path) {
  std::string text = write_graph_json(g);
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error(path + ": cannot write: " + std::strerror(errno));
}

}  // namespace hi
