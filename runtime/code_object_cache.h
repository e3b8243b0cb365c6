// On-disk cache of compiled code objects, shared by all processes of one user.
//
// Directory: $HIPINDUCTOR_CACHE_DIR, else $XDG_CACHE_HOME/hipinductor, else ~/.cache/hipinductor (created 0700).
// Key: SHA-256 (hex) over source, target id, compiler name and version, the options, and a prelude version string
// (see cache_key). Entry: <dir>/<key[0:2]>/<key>/ holding
//   kernel.hsaco | kernel.cubin | kernel.so   the code object
//   source.hip                                the source it was compiled from (for humans and for debugging)
//   meta.json                                 name hint, target, compiler, options, compile_ms, created (UTC),
//                                             binary file name, size and sha256
// Writers build an entry in a temp dir next to it (".tmp-<key>-…", fsynced) and rename it into place, so readers see
// a whole entry or none. Readers trust an entry only when meta.json parses and the binary's size and SHA-256 match;
// anything else (a truncated or flipped file, a missing meta.json) is a miss, and the next put() replaces it.
// Temp dirs left by a crashed writer are never read. Safe for concurrent use by threads and processes.
#pragma once

#include <atomic>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "codegen/target.h"
#include "runtime/compiler.h"

namespace hi {

/// What a cache entry records besides its code object (written to meta.json).
struct CacheEntryInfo {
  std::string name_hint;
  Target target;
  std::string compiler;  ///< Compiler::version(): "hiprtc 5.7.31921"
  std::vector<std::string> options;
  double compile_ms = 0;
};

class CodeObjectCache {
 public:
  /// Uses `directory` as the cache root (created 0700 on first put).
  explicit CodeObjectCache(std::filesystem::path directory);
  /// The cache at default_directory().
  CodeObjectCache();

  /// $HIPINDUCTOR_CACHE_DIR, else $XDG_CACHE_HOME/hipinductor, else $HOME/.cache/hipinductor.
  static std::filesystem::path default_directory();
  /// The key for one compile: every input that can change the code object. Fields are length-prefixed before
  /// hashing, so no two different inputs serialize alike.
  static std::string cache_key(const std::string& source, const Target& target, const std::string& compiler_name,
                               const std::string& compiler_version, const std::vector<std::string>& options,
                               const std::string& prelude_version);
  /// "hsaco", "cubin" or "so".
  static std::string binary_extension(const Target& target);

  /// The code object stored under `key` when the entry is complete and its checksum matches. Counts a hit or miss.
  std::optional<std::vector<char>> get(const std::string& key);
  /// Stores an entry atomically, replacing an invalid one under the same key. When another writer has already
  /// published a valid entry for the key, that one is kept (same key = same inputs = interchangeable code).
  /// Throws std::runtime_error naming the path when the cache directory cannot be written.
  void put(const std::string& key, const std::vector<char>& binary, const std::string& source,
           const CacheEntryInfo& info);

  const std::filesystem::path& directory() const { return directory_; }
  /// <dir>/<key[0:2]>/<key>
  std::filesystem::path entry_path(const std::string& key) const;
  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }

 private:
  std::filesystem::path directory_;
  std::atomic<uint64_t> hits_{0};
  std::atomic<uint64_t> misses_{0};
};

/// Compiles through the cache: returns the cached code object on a hit (log empty, compile_ms 0), else compiles
/// with `compiler` and stores the result. `cache` may be null (always compiles). `hit`, when given, says which.
/// The key covers compiler.base_options(target) + `options` and `prelude_version` (the caller's version string for
/// the preludes it prepended, so editing a prelude invalidates old entries even if a source looked the same).
/// CompileError and errors writing the cache directory propagate.
CompiledCode compile_cached(Compiler& compiler, const std::string& source, const std::string& name_hint,
                            const Target& target, const std::vector<std::string>& options,
                            const std::string& prelude_version, CodeObjectCache* cache, bool* hit = nullptr);

}  // namespace hi
