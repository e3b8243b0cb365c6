#include "runtime/sha256.h"

#include <stdexcept>

#include "runtime/dynamic_library.h"

namespace hi {
namespace {

/// The few EVP functions a digest needs, with the signatures OpenSSL 1.1 and 3 share (opaque pointers stand for
/// EVP_MD_CTX, EVP_MD and ENGINE).
struct Crypto {
  DynamicLibrary library;
  void* (*ctx_new)();
  void (*ctx_free)(void*);
  const void* (*sha256)();
  int (*init)(void*, const void*, void*);
  int (*update)(void*, const void*, size_t);
  int (*final)(void*, unsigned char*, unsigned int*);

  explicit Crypto(DynamicLibrary lib)
      : library(std::move(lib)),
        ctx_new(library.function<void* (*)()>("EVP_MD_CTX_new")),
        ctx_free(library.function<void (*)(void*)>("EVP_MD_CTX_free")),
        sha256(library.function<const void* (*)()>("EVP_sha256")),
        init(library.function<int (*)(void*, const void*, void*)>("EVP_DigestInit_ex")),
        update(library.function<int (*)(void*, const void*, size_t)>("EVP_DigestUpdate")),
        final(library.function<int (*)(void*, unsigned char*, unsigned int*)>("EVP_DigestFinal_ex")) {}
};

const Crypto& crypto() {
  // Opened once per process; the library stays loaded (its handle is never closed while hashes may run).
  static const Crypto* api = new Crypto(DynamicLibrary::open_first(
      "OpenSSL's libcrypto (SHA-256 of cache entries)", {"libcrypto.so.3", "libcrypto.so.1.1", "libcrypto.so"}));
  return *api;
}

[[noreturn]] void failed(const char* step) {
  throw std::runtime_error(std::string("SHA-256: libcrypto's ") + step + " failed");
}

}  // namespace

Sha256::Sha256() {
  const Crypto& c = crypto();
  context_ = c.ctx_new();
  if (!context_) failed("EVP_MD_CTX_new");
  if (c.init(context_, c.sha256(), nullptr) != 1) {
    c.ctx_free(context_);
    failed("EVP_DigestInit_ex");
  }
}

Sha256::~Sha256() { crypto().ctx_free(context_); }

Sha256& Sha256::update(const void* data, size_t size) {
  if (size > 0 && crypto().update(context_, data, size) != 1) failed("EVP_DigestUpdate");
  return *this;
}

std::array<uint8_t, 32> Sha256::digest() {
  std::array<uint8_t, 32> out{};
  unsigned int size = 0;
  if (crypto().final(context_, out.data(), &size) != 1 || size != out.size()) failed("EVP_DigestFinal_ex");
  return out;
}

std::string Sha256::hex_digest() {
  static const char* kDigits = "0123456789abcdef";
  std::string hex;
  for (uint8_t byte : digest()) {
    hex += kDigits[byte >> 4];
    hex += kDigits[byte & 15];
  }
  return hex;
}

std::string sha256_hex(std::string_view data) { return Sha256().update(data).hex_digest(); }

}  // namespace hi
