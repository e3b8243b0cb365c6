// Integer helpers the planners size things with: ceil_div and powers of two over int64_t. Constant time and free of
// overflow for every int64_t a graph can hold (sizes up to 2^62 and beyond), so a plan's cost never depends on the
// magnitude of a size: a doubling loop over `int` wrapped to 0 past 2^30 and never ended.
#pragma once

#include <bit>
#include <cstdint>

namespace hi {

/// ceil(a / b) for a >= 0, b >= 1, without the overflow of (a + b - 1) / b near INT64_MAX.
inline int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0); }

/// The largest power of two an int64_t holds.
inline constexpr int64_t kMaxPow2 = int64_t{1} << 62;

/// Smallest power of two >= v; 1 for v <= 1; kMaxPow2 for v above it (no power of two past it is representable).
inline int64_t pow2_at_least(int64_t v) {
  if (v <= 1) return 1;
  if (v >= kMaxPow2) return kMaxPow2;
  return static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(v)));
}

/// Largest power of two <= v; 1 for v < 2.
inline int64_t pow2_at_most(int64_t v) {
  if (v < 2) return 1;
  return static_cast<int64_t>(std::bit_floor(static_cast<uint64_t>(v)));
}

}  // namespace hi
