#include "ir/dtype.h"

#include <array>
#include <utility>

namespace hi {

namespace {

struct DTypeInfo {
  DType type;
  std::string_view name;
  int bytes;
};

// In enum order, so that `kInfo[static_cast<size_t>(t)]` is `t`'s entry.
constexpr std::array<DTypeInfo, 10> kInfo = {{
    {DType::Bool, "bool", 1},
    {DType::UInt8, "uint8", 1},
    {DType::Int8, "int8", 1},
    {DType::Int16, "int16", 2},
    {DType::Int32, "int32", 4},
    {DType::Int64, "int64", 8},
    {DType::Float16, "float16", 2},
    {DType::BFloat16, "bfloat16", 2},
    {DType::Float32, "float32", 4},
    {DType::Float64, "float64", 8},
}};

// The aliases torch itself defines as attributes (torch.half is torch.float16, ...); nothing looser, so a typo in a
// graph file is an error instead of a silently different type.
constexpr std::array<std::pair<std::string_view, DType>, 6> kAliases = {{
    {"half", DType::Float16},
    {"float", DType::Float32},
    {"double", DType::Float64},
    {"short", DType::Int16},
    {"int", DType::Int32},
    {"long", DType::Int64},
}};

const DTypeInfo& info(DType t) { return kInfo[static_cast<size_t>(t)]; }

}  // namespace

std::string_view dtype_name(DType t) { return info(t).name; }

std::optional<DType> parse_dtype(std::string_view name) {
  if (name.starts_with("torch.")) name.remove_prefix(6);
  for (const DTypeInfo& i : kInfo) {
    if (i.name == name) return i.type;
  }
  for (const auto& [alias, type] : kAliases) {
    if (alias == name) return type;
  }
  return std::nullopt;
}

int dtype_bytes(DType t) { return info(t).bytes; }

bool is_floating(DType t) { return t >= DType::Float16; }

bool is_integer(DType t) { return t >= DType::UInt8 && t <= DType::Int64; }

// torch.promote_types: the higher category (bool < integer < floating) wins, and within a category the wider type.
// The enum lists types in exactly that order, so the later of the two wins, except for the two pairs whose values
// neither operand type can hold: uint8/int8 meet in int16, float16/bfloat16 in float32.
DType promote_types(DType a, DType b) {
  if (a > b) std::swap(a, b);
  if (a == DType::UInt8 && b == DType::Int8) return DType::Int16;
  if (a == DType::Float16 && b == DType::BFloat16) return DType::Float32;
  return b;
}

}  // namespace hi
