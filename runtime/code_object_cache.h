// On-disk cache of compiled code objects (and of graph entries, see below), shared by all processes of one user,
// surviving crashes. The layout, key and metadata are documented for users in docs/cache.md.
//
// Directory: $HIPINDUCTOR_CACHE_DIR, else $XDG_CACHE_HOME/hipinductor, else ~/.cache/hipinductor (created 0700).
// Key: SHA-256 (hex) over source, target id (with its features), compiler name and version, the options, and a
// prelude version string (see cache_key). Code-object entry: <dir>/<key[0:2]>/<key>/ holding
//   kernel.hsaco | kernel.cubin | kernel.so   the code object
//   source.hip                                the source it was compiled from
//   meta.json                                 kernels, target, compiler, options, versions, compile_ms, created,
//                                             checksums of binary and source, hardware facts (docs/cache.md)
// next to a lock file <dir>/<key[0:2]>/<key>.lock. Graph entries (opaque payloads written by the pipeline, see
// pipeline/graph_cache.h) live in <dir>/graphs/<key[0:2]>/<key>.json, self-checksummed (cache_files.h).
//
// Invariants:
//  - Writers build an entry in a temp dir next to it (".tmp-<key>-…", fsynced) and rename it into place, so readers
//    see a whole entry or none; a writer killed at any point leaves at most a ".tmp-" dir, which no reader opens.
//  - Readers trust an entry only when it is owned by the current user, meta.json parses and the binary's size and
//    SHA-256 match. A corrupt entry is reported once per process on stderr (naming it) and replaced by the next put.
//  - compile_cached serializes compiles of one key across processes with an flock on the key's lock file: one
//    process compiles, the others wait and then read its entry.
//  - "Last used" is the entry directory's (graph entry file's) mtime, touched on every hit; when the cache grows
//    past max_bytes() (HIPINDUCTOR_CACHE_MAX_SIZE, default 2 GiB) a put evicts least-recently-used entries
//    (evict_cache in cache_inventory.h), skipping entries whose lock is held.
//  - Hit and miss counts are persisted per target in <dir>/stats.json (cache_stats.h).
// Safe for concurrent use by threads and processes.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "codegen/target.h"
#include "runtime/amd_code_object.h"
#include "runtime/cache_files.h"
#include "runtime/compiler.h"
#include "runtime/device.h"

namespace hi {

/// What a cache entry records besides its code object (written to meta.json).
struct CacheEntryInfo {
  std::string name_hint;
  Target target;
  std::string compiler_name;  ///< Compiler::name(): "hiprtc"
  std::string compiler;       ///< Compiler::version(): "hiprtc 5.7.31921"
  std::vector<std::string> options;
  std::string prelude_version;
  std::vector<std::string> kernels;  ///< kernel names in the module
  double compile_ms = 0;
  /// AMD targets: the code object's metadata (read_amd_kernel_facts); empty otherwise or when comgr failed, in
  /// which case `facts_note` says why.
  std::vector<AmdKernelFacts> amd_facts;
  std::string facts_note;
};

/// What a reader found at an entry path.
enum class EntryState { Valid, Missing, Corrupt, NotOwned };
struct EntryCheck {
  EntryState state = EntryState::Missing;
  std::string problem;  ///< Corrupt / NotOwned: what is wrong, naming the file ("kernel.so: sha256 mismatch")
};

/// Checks the code-object entry directory `entry` (what get() trusts): owned, meta.json of the documented shape
/// (entry_metadata_problem), the binary's size and SHA-256, and a units container's structure (code_object_units.h);
/// with `source`, also source.hip's SHA-256 (read into
/// it). On Valid fills `binary` and `meta_text` when given. Never throws for a bad entry.
EntryCheck check_code_object_entry(const std::filesystem::path& entry, std::vector<char>* binary = nullptr,
                                   std::string* meta_text = nullptr, std::string* source = nullptr);

class CodeObjectCache {
 public:
  /// Uses `directory` as the cache root (created 0700 on first put). The size cap comes from
  /// HIPINDUCTOR_CACHE_MAX_SIZE (see max_bytes_from_environment).
  explicit CodeObjectCache(std::filesystem::path directory);
  /// The cache at default_directory().
  CodeObjectCache();

  /// $HIPINDUCTOR_CACHE_DIR, else $XDG_CACHE_HOME/hipinductor, else $HOME/.cache/hipinductor.
  static std::filesystem::path default_directory();
  static constexpr uint64_t kDefaultMaxBytes = uint64_t(2) << 30;
  /// HIPINDUCTOR_CACHE_MAX_SIZE parsed with parse_byte_size ("500M", "2G", plain bytes); kDefaultMaxBytes when unset,
  /// and, with one warning on stderr per process, when malformed.
  static uint64_t max_bytes_from_environment();
  /// The key for one compile: every input that can change the code object. Fields are length-prefixed before
  /// hashing, so no two different inputs serialize alike.
  static std::string cache_key(const std::string& source, const Target& target, const std::string& compiler_name,
                               const std::string& compiler_version, const std::vector<std::string>& options,
                               const std::string& prelude_version);
  /// "hsaco", "cubin" or "so".
  static std::string binary_extension(const Target& target);
  /// True for 64 lowercase hex digits.
  static bool is_key(const std::string& key);

  /// The code object stored under `key` when the entry is valid (check_code_object_entry); marks it used. Counts a
  /// hit or miss in hits()/misses() when `count`. A corrupt or foreign entry is reported once per process on stderr.
  /// With `source`, also reads source.hip and checks it against meta.json's source_sha256 (a mismatch is a miss,
  /// reported like a corrupt binary). An entry in a shard directory that is not the cache's own (a symbolic link,
  /// another user's: foreign_directory_problem) is never read: a miss, reported once. Throws
  /// std::invalid_argument for a malformed key.
  std::optional<std::vector<char>> get(const std::string& key, bool count = true, std::string* source = nullptr);
  /// Stores an entry atomically, replacing an invalid one (its source.hip included) under the same key. When another
  /// writer has already published a valid entry for the key, that one is kept (same key = same inputs =
  /// interchangeable code). Then enforces the size cap. Throws std::runtime_error naming the path when the cache
  /// directory cannot be written or the entry's shard directory is not the cache's own (never written through).
  void put(const std::string& key, const std::vector<char>& binary, const std::string& source,
           const CacheEntryInfo& info);
  /// The exclusive per-key lock (blocking) that compile_cached holds around "look up, compile, put".
  FileLock lock_entry(const std::string& key);
  /// Adds the loader's per-kernel facts (NVIDIA: cuFuncGetAttribute; only known once a GPU loads the module) to the
  /// entry's meta.json under "loader_facts", rewriting it atomically under the entry's lock. Kernels already recorded
  /// are kept (a shared code object is loaded once per graph, each time for its own kernels). No-op (false) when the
  /// entry is not valid or no kernel is new. Never throws for I/O errors.
  bool record_loader_facts(const std::string& key, const std::vector<GpuKernelFacts>& facts);
  /// One kernel's launch tuning on one device (GraphRunner::autotune): the grid chosen and each candidate's time.
  struct KernelTuning {
    std::string kernel;
    unsigned grid = 0;
    std::vector<std::pair<unsigned, double>> ms;  ///< (blocks, milliseconds per launch)
  };
  /// Adds `kernels`' tuning on `device` (Device::name()) to the entry's meta.json under "tuning", next to the code
  /// object, rewriting it atomically under the entry's lock (a kernel tuned again replaces its record). No-op (false)
  /// when the entry is not valid. Never throws for I/O errors.
  bool record_tuning(const std::string& key, const std::string& device, const std::vector<KernelTuning>& kernels);
  /// The grids record_tuning stored for `device`: kernel name -> blocks. Empty when there are none or the entry is
  /// not valid.
  std::map<std::string, unsigned> tuned_grids(const std::string& key, const std::string& device);

  /// A graph entry's payload when its checksum holds (marks it used); a corrupt one is reported once, a missing one
  /// is silent, one in a graphs/ or shard directory that is not the cache's own is never read (reported once). Does not count (the pipeline records graph hits in the stats).
  std::optional<std::string> get_graph_entry(const std::string& key);
  /// Writes a graph entry atomically (replacing any), then enforces the size cap. Throws naming the path.
  void put_graph_entry(const std::string& key, const std::string& payload);

  /// Evicts least-recently-used entries until the cache holds at most max_bytes() (see evict_cache); returns the
  /// number evicted. Skipped (0) while another process is evicting.
  size_t enforce_size_cap();

  const std::filesystem::path& directory() const { return directory_; }
  /// <dir>/<key[0:2]>/<key>
  std::filesystem::path entry_path(const std::string& key) const;
  /// <dir>/<key[0:2]>/<key>.lock
  std::filesystem::path lock_path(const std::string& key) const;
  /// <dir>/graphs/<key[0:2]>/<key>.json
  std::filesystem::path graph_entry_path(const std::string& key) const;
  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }
  uint64_t max_bytes() const { return max_bytes_; }
  void set_max_bytes(uint64_t bytes) { max_bytes_ = bytes; }

 private:
  /// foreign_directory_problem for the shard directory of `key`'s code-object (or graph) entry.
  std::string shard_problem(const std::string& key, bool graph) const;
  /// shard_problem, reported once per process when there is one (readers then miss).
  std::string readable_shard(const std::string& key, bool graph) const;

  std::filesystem::path directory_;
  std::atomic<uint64_t> max_bytes_;
  std::atomic<uint64_t> hits_{0};
  std::atomic<uint64_t> misses_{0};
};

/// Writes "hipinductor: <message>" to stderr the first time this process reports `subject` (an entry path), then
/// never again for it. Thread-safe. Returns whether it wrote.
bool warn_once(const std::string& subject, const std::string& message);

/// Compiles through the cache: returns the cached code object on a hit (log empty, compile_ms 0), else takes the
/// key's lock, looks again (another process may have compiled it meanwhile: a hit), else compiles with `compiler`
/// and stores the result with its metadata (kernel names `kernels`; AMD: the code object's facts through comgr).
/// `cache` may be null (always compiles). `hit`, when given, says which; `key`, when given, receives the entry's key
/// (empty without a cache). The key covers compiler.base_options(target) + `options` and `prelude_version` (the
/// caller's version string for the preludes it prepended, so editing a prelude invalidates old entries). Records
/// the lookup in the cache's persistent stats. CompileError propagates; a cache directory that cannot be written
/// is reported once on stderr and the compile goes on without caching.
CompiledCode compile_cached(Compiler& compiler, const std::string& source, const std::string& name_hint,
                            const Target& target, const std::vector<std::string>& options,
                            const std::string& prelude_version, CodeObjectCache* cache, bool* hit = nullptr,
                            std::string* key = nullptr, const std::vector<std::string>& kernels = {});

/// The hipinductor version recorded in entries ("0.1.0").
std::string_view hipinductor_version();

}  // namespace hi
