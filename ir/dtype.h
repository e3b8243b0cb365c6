// Element types shared by the graph IR and the loop IR, named as PyTorch names them (`float32`, `bfloat16`, ...).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hi {

enum class DType : uint8_t { Bool, UInt8, Int8, Int16, Int32, Int64, Float16, BFloat16, Float32, Float64 };

/// PyTorch's name without the `torch.` prefix: "float32", "bfloat16", "int64", "bool", ...
std::string_view dtype_name(DType t);
/// Accepts PyTorch's names with or without `torch.` and the common aliases (float, half, long, int, double).
std::optional<DType> parse_dtype(std::string_view name);
int dtype_bytes(DType t);
bool is_floating(DType t);
/// Integer types, bool excluded.
bool is_integer(DType t);

/// PyTorch's category-based promotion of two tensor dtypes (torch.promote_types).
DType promote_types(DType a, DType b);

}  // namespace hi
