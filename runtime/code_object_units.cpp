#include "runtime/code_object_units.h"

#include <cstdint>
#include <cstring>
#include <set>
#include <stdexcept>

namespace hi {
namespace {

constexpr char kMagic[8] = {'H', 'I', 'U', 'N', 'I', 'T', 'S', '1'};

template <typename T>
void put(std::vector<char>& out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));  // little-endian on every host we build for
  out.insert(out.end(), bytes, bytes + sizeof(T));
}

/// Reads the container front to back; every read checks the bytes left first, so a damaged size can neither read
/// past the end nor make a huge allocation.
class Reader {
 public:
  explicit Reader(const std::vector<char>& bytes) : bytes_(bytes) {}
  template <typename T>
  T get(const char* what) {
    need(sizeof(T), what);
    T value;
    std::memcpy(&value, bytes_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return value;
  }
  const char* take(uint64_t size, const char* what) {
    need(size, what);
    const char* p = bytes_.data() + at_;
    at_ += static_cast<size_t>(size);
    return p;
  }
  size_t left() const { return bytes_.size() - at_; }

 private:
  void need(uint64_t size, const char* what) const {
    if (size > left())
      throw std::runtime_error("code object units container is truncated: " + std::string(what) + " needs " +
                               std::to_string(size) + " bytes, " + std::to_string(left()) + " left");
  }
  const std::vector<char>& bytes_;
  size_t at_ = 0;
};

}  // namespace

bool is_code_object_units(const std::vector<char>& bytes) {
  return bytes.size() >= sizeof kMagic && std::memcmp(bytes.data(), kMagic, sizeof kMagic) == 0;
}

std::vector<char> pack_code_object_units(const std::vector<CodeObjectUnit>& units) {
  if (units.empty()) throw std::invalid_argument("pack_code_object_units: no units");
  std::vector<char> out(kMagic, kMagic + sizeof kMagic);
  put<uint32_t>(out, static_cast<uint32_t>(units.size()));
  for (const CodeObjectUnit& u : units) {
    put<uint32_t>(out, static_cast<uint32_t>(u.kernels.size()));
    for (const std::string& k : u.kernels) {
      put<uint32_t>(out, static_cast<uint32_t>(k.size()));
      out.insert(out.end(), k.begin(), k.end());
    }
    put<uint64_t>(out, u.binary.size());
    out.insert(out.end(), u.binary.begin(), u.binary.end());
  }
  return out;
}

std::vector<CodeObjectUnit> unpack_code_object_units(const std::vector<char>& bytes) {
  if (!is_code_object_units(bytes)) throw std::runtime_error("not a code object units container (no HIUNITS1 magic)");
  Reader r(bytes);
  r.take(sizeof kMagic, "the magic");
  uint32_t count = r.get<uint32_t>("the part count");
  if (count == 0) throw std::runtime_error("code object units container has no parts");
  std::vector<CodeObjectUnit> units;
  std::set<std::string> seen;
  for (uint32_t p = 0; p < count; ++p) {
    CodeObjectUnit u;
    uint32_t kernels = r.get<uint32_t>("a part's kernel count");
    for (uint32_t k = 0; k < kernels; ++k) {
      uint32_t length = r.get<uint32_t>("a kernel name's length");
      std::string name(r.take(length, "a kernel name"), length);
      if (!seen.insert(name).second)
        throw std::runtime_error("code object units container names kernel '" + name + "' twice");
      u.kernels.push_back(std::move(name));
    }
    uint64_t size = r.get<uint64_t>("a part's code object size");
    if (size == 0) throw std::runtime_error("code object units container: part " + std::to_string(p) + " is empty");
    const char* code = r.take(size, "a part's code object");
    u.binary.assign(code, code + size);
    units.push_back(std::move(u));
  }
  if (r.left() != 0)
    throw std::runtime_error("code object units container has " + std::to_string(r.left()) +
                             " bytes after its last part");
  return units;
}

}  // namespace hi
