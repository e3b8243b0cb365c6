#include "runtime/cache_entry_meta.h"

#include <initializer_list>

namespace hi {
namespace {

using nlohmann::json;

enum class Type { String, Unsigned, Number, Object, Array, Strings };

bool has_type(const json& value, Type type) {
  switch (type) {
    case Type::String:
      return value.is_string();
    case Type::Unsigned:
      return value.is_number_unsigned();
    case Type::Number:
      return value.is_number();
    case Type::Object:
      return value.is_object();
    case Type::Array:
      return value.is_array();
    case Type::Strings:
      if (!value.is_array()) return false;
      for (const json& item : value)
        if (!item.is_string()) return false;
      return true;
  }
  return false;
}

const char* type_name(Type type) {
  switch (type) {
    case Type::String:
      return "a string";
    case Type::Unsigned:
      return "a non-negative integer";
    case Type::Number:
      return "a number";
    case Type::Object:
      return "an object";
    case Type::Array:
      return "an array";
    case Type::Strings:
      return "an array of strings";
  }
  return "?";
}

struct Field {
  const char* name;
  Type type;
  bool required;
};

/// The first field of `object` (named `where` in messages) that is missing though required, or not of its type.
std::string field_problem(const json& object, const std::string& where, std::initializer_list<Field> fields) {
  if (!object.is_object()) return where + " is not an object";
  for (const Field& f : fields) {
    auto it = object.find(f.name);
    if (it == object.end()) {
      if (f.required) return where + ": field '" + f.name + "' is missing";
      continue;
    }
    if (!has_type(*it, f.type)) return where + ": field '" + f.name + "' is not " + type_name(f.type);
  }
  return "";
}

/// A per-kernel fact list ({"kernels": [{"name": ..., <integer facts>...}]}) as hardware_facts and loader_facts hold.
std::string kernel_list_problem(const json& facts, const std::string& where) {
  for (const json& kernel : facts["kernels"]) {
    if (!kernel.is_object()) return where + ".kernels: an element is not an object";
    for (const auto& [name, value] : kernel.items())
      if (name == "name" ? !value.is_string() : !value.is_number_integer())
        return where + ".kernels: field '" + name + "' is not " + (name == "name" ? "a string" : "an integer");
  }
  return "";
}

}  // namespace

std::string entry_metadata_problem(const json& meta) {
  std::string problem = field_problem(
      meta, "meta.json",
      {{"format", Type::String, true}, {"key", Type::String, true}, {"name_hint", Type::String, true},
       {"kernels", Type::Strings, true}, {"target", Type::String, true}, {"compiler_name", Type::String, true},
       {"compiler", Type::String, true}, {"options", Type::Strings, true}, {"prelude_version", Type::String, true},
       {"hipinductor_version", Type::String, true}, {"compile_ms", Type::Number, true},
       {"created", Type::String, true}, {"binary", Type::String, true}, {"binary_size", Type::Unsigned, true},
       {"sha256", Type::String, true}, {"source_sha256", Type::String, true},
       {"hardware_facts", Type::Object, false}, {"loader_facts", Type::Object, false},
       {"tuning", Type::Object, false}});
  if (!problem.empty()) return problem;
  for (const char* facts : {"hardware_facts", "loader_facts"}) {
    if (!meta.contains(facts)) continue;
    std::string where = std::string("meta.json: ") + facts;
    problem = field_problem(meta[facts], where,
                            {{"source", Type::String, false}, {"note", Type::String, false},
                             {"recorded", Type::String, false}, {"kernels", Type::Array, true}});
    if (problem.empty()) problem = kernel_list_problem(meta[facts], where);
    if (!problem.empty()) return problem;
  }
  if (!meta.contains("tuning")) return "";
  for (const auto& [device, record] : meta["tuning"].items()) {
    std::string where = "meta.json: tuning['" + device + "']";
    problem = field_problem(record, where, {{"recorded", Type::String, false}, {"kernels", Type::Object, false}});
    if (!problem.empty()) return problem;
    const json kernels = record.value("kernels", json::object());  // named: items() refers into it
    for (const auto& [kernel, tuned] : kernels.items()) {
      std::string at = where + ".kernels['" + kernel + "']";
      problem = field_problem(tuned, at, {{"grid", Type::Unsigned, true}, {"ms", Type::Object, false}});
      if (!problem.empty()) return problem;
      const json times = tuned.value("ms", json::object());
      for (const auto& [blocks, ms] : times.items())
        if (!ms.is_number()) return at + ".ms: the time for " + blocks + " blocks is not a number";
    }
  }
  return "";
}

}  // namespace hi
