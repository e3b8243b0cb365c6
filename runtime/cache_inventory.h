// What a cache directory holds, and how it shrinks: scanning entries (code objects and graph entries) with their
// sizes and last-used times, removing one under its lock, least-recently-used eviction down to a size, and removal
// of temp dirs left by killed writers. Used by CodeObjectCache's size cap and by the hipinductor-cache tool.
// Nothing here validates checksums (check_code_object_entry / read_checksummed_file do).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace hi {

/// One entry of a cache directory.
struct CacheItem {
  enum class Kind { CodeObject, Graph };
  Kind kind = Kind::CodeObject;
  std::string key;
  std::filesystem::path path;  ///< the entry directory (code object) or the .json file (graph entry)
  uint64_t bytes = 0;          ///< apparent size of its files
  double last_used = 0;        ///< mtime of the entry dir / graph file, seconds since the epoch
  bool owned = true;           ///< owned by the current user (others are never read, evicted or counted)
};

/// A directory of the cache that a scan did not look into, and why: a symbolic link (never followed), not a
/// directory, another user's, or unreadable. `hipinductor-cache verify` reports these besides bad entries.
struct CacheProblem {
  std::filesystem::path path;
  std::string problem;
};

/// Every entry under `directory` (sorted by kind, then key); none when it does not exist. Skips temp and trash dirs,
/// lock files and the stats files. Shard directories and graphs/ that are not the cache's own directories
/// (foreign_directory_problem: a symbolic link, ...) are never entered, so nothing outside the cache is ever listed,
/// evicted or cleared; they and directories that cannot be read go to `problems` when given. Cheap: a directory walk
/// and stat calls, no file contents read.
std::vector<CacheItem> scan_cache(const std::filesystem::path& directory, std::vector<CacheProblem>* problems = nullptr);

/// Removes `item`: a code-object entry only under its key's lock, taken without waiting (false when another process
/// holds it, i.e. is compiling or publishing that key), renamed aside first so readers see the whole entry or none;
/// its lock file goes too. A graph entry is unlinked. False when it vanished meanwhile or is not owned.
bool remove_cache_item(const CacheItem& item);

struct EvictionResult {
  size_t removed = 0;
  size_t in_use = 0;  ///< entries that had to be removed but were locked
  uint64_t bytes_before = 0;
  uint64_t bytes_after = 0;
};
/// Removes least-recently-used owned entries (graph and code-object entries alike, oldest mtime first) until the
/// owned entries total at most `max_bytes`, and temp dirs older than 10 minutes.
EvictionResult evict_cache(const std::filesystem::path& directory, uint64_t max_bytes);

/// Removes ".tmp-" and ".trash-" leftovers (of killed writers or evictors) last modified more than `min_age_s`
/// seconds ago, in the root and in the cache's own shard directories only (as scan_cache). Returns how many.
size_t remove_stale_temporaries(const std::filesystem::path& directory, double min_age_s = 600);

}  // namespace hi
