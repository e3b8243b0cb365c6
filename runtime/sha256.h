// SHA-256 of cache keys and entry checksums, computed by OpenSSL's libcrypto (EVP digest API, present in OpenSSL 1.1
// and 3). libcrypto is opened at run time like the vendor libraries (dynamic_library.h): the build then needs no
// OpenSSL headers, and every machine that runs PyTorch has the library (Python's hashlib and ssl link it).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace hi {

/// Incremental hasher: update() any number of times, then digest() once (the object is spent afterwards).
/// Throws std::runtime_error naming the libraries tried when libcrypto cannot be opened.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  Sha256& update(const void* data, size_t size);
  Sha256& update(std::string_view text) { return update(text.data(), text.size()); }
  std::array<uint8_t, 32> digest();
  /// digest() as 64 lowercase hex digits.
  std::string hex_digest();

 private:
  void* context_ = nullptr;  ///< libcrypto's EVP_MD_CTX
};

/// Lowercase hex SHA-256 of `data`.
std::string sha256_hex(std::string_view data);

}  // namespace hi
