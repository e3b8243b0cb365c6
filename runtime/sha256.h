// SHA-256 (FIPS 180-4), self-contained: cache keys and code-object checksums must not depend on OpenSSL headers
// being installed on the build machine.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace hi {

/// Incremental hasher: update() any number of times, then digest() once (the object is spent afterwards).
class Sha256 {
 public:
  Sha256();
  Sha256& update(const void* data, size_t size);
  Sha256& update(std::string_view text) { return update(text.data(), text.size()); }
  std::array<uint8_t, 32> digest();
  /// digest() as 64 lowercase hex digits.
  std::string hex_digest();

 private:
  void compress(const uint8_t* block);
  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

/// Lowercase hex SHA-256 of `data`.
std::string sha256_hex(std::string_view data);

}  // namespace hi
