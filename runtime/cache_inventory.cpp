#include "runtime/cache_inventory.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <ctime>

#include "runtime/cache_files.h"
#include "runtime/code_object_cache.h"
#include "runtime/temp_directory.h"

namespace hi {
namespace {

namespace fs = std::filesystem;

bool is_shard_name(const std::string& name) {
  return name.size() == 2 && std::all_of(name.begin(), name.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

uint64_t directory_bytes(const fs::path& dir) {
  uint64_t total = 0;
  std::error_code error;
  for (const fs::directory_entry& file : fs::directory_iterator(dir, error)) {
    std::error_code ignored;
    if (file.is_regular_file(ignored)) total += file.file_size(ignored);
  }
  return total;
}

double now_seconds() { return static_cast<double>(std::time(nullptr)); }

void report(std::vector<CacheProblem>* problems, const fs::path& path, std::string problem) {
  if (problems) problems->push_back({path, std::move(problem)});
}

/// Whether the directory `dir` can be listed; when not, reported (a missing one is not a problem).
bool readable_directory(const fs::path& dir, std::vector<CacheProblem>* problems) {
  std::error_code error;
  fs::directory_iterator probe(dir, error);
  if (!error) return true;
  if (error != std::errc::no_such_file_or_directory) report(problems, dir, "cannot read: " + error.message());
  return false;
}

/// The shard directories ("ab") in `parent` (the root or graphs/) that are the cache's own and readable. The others
/// are reported and never entered: `parent` itself, when it is a link or another user's, is not listed at all.
std::vector<fs::path> own_shards(const fs::path& root, const fs::path& parent, std::vector<CacheProblem>* problems) {
  std::vector<fs::path> shards;
  if (std::string problem = foreign_directory_problem(root, parent); !problem.empty()) {
    report(problems, parent, problem);
    return shards;
  }
  if (!readable_directory(parent, problems)) return shards;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(parent, error)) {
    if (!is_shard_name(entry.path().filename().string())) continue;
    if (std::string problem = foreign_directory_problem(root, entry.path()); !problem.empty()) {
      report(problems, entry.path(), problem);
      continue;
    }
    if (readable_directory(entry.path(), problems)) shards.push_back(entry.path());
  }
  std::sort(shards.begin(), shards.end());
  return shards;
}

}  // namespace

std::vector<CacheItem> scan_cache(const fs::path& directory, std::vector<CacheProblem>* problems) {
  std::vector<CacheItem> items;
  std::error_code error;
  if (!fs::is_directory(directory, error)) return items;
  for (const fs::path& shard : own_shards(directory, directory, problems)) {
    std::string shard_name = shard.filename().string();
    for (const fs::directory_entry& entry : fs::directory_iterator(shard, error)) {
      std::string key = entry.path().filename().string();
      if (!CodeObjectCache::is_key(key) || key.compare(0, 2, shard_name) != 0) continue;
      CacheItem item{CacheItem::Kind::CodeObject, key, entry.path()};
      item.owned = owned_by_current_user(entry.path());
      if (!entry.is_directory(error) || entry.is_symlink(error)) {
        item.owned = false;
      } else {
        item.bytes = directory_bytes(entry.path());
      }
      item.last_used = modification_time(entry.path()).value_or(0);
      items.push_back(std::move(item));
    }
  }
  for (const fs::path& shard : own_shards(directory, directory / "graphs", problems)) {
    for (const fs::directory_entry& entry : fs::directory_iterator(shard, error)) {
      if (entry.path().extension() != ".json") continue;
      std::string key = entry.path().stem().string();
      if (!CodeObjectCache::is_key(key)) continue;
      CacheItem item{CacheItem::Kind::Graph, key, entry.path()};
      item.owned = owned_by_current_user(entry.path()) && entry.is_regular_file(error);
      std::error_code ignored;
      item.bytes = item.owned ? entry.file_size(ignored) : 0;
      item.last_used = modification_time(entry.path()).value_or(0);
      items.push_back(std::move(item));
    }
  }
  std::sort(items.begin(), items.end(), [](const CacheItem& a, const CacheItem& b) {
    return a.kind != b.kind ? a.kind < b.kind : a.key < b.key;
  });
  return items;
}

bool remove_cache_item(const CacheItem& item) {
  if (!item.owned) return false;
  std::error_code ignored;
  if (item.kind == CacheItem::Kind::Graph) return fs::remove(item.path, ignored);

  fs::path shard = item.path.parent_path();
  std::optional<FileLock> lock = FileLock::try_acquire(shard / (item.key + ".lock"));
  if (!lock) return false;
  // Rename onto an empty reserved dir (atomic), so a reader sees the whole entry or nothing, then delete at leisure.
  TempDirectory trash(".trash-" + item.key + "-", shard);
  bool moved = std::rename(item.path.c_str(), trash.path().c_str()) == 0;
  lock->remove_file();
  return moved;
}

size_t remove_stale_temporaries(const fs::path& directory, double min_age_s) {
  size_t removed = 0;
  double cutoff = now_seconds() - min_age_s;
  auto sweep = [&](const fs::path& dir) {
    std::error_code error;
    for (const fs::directory_entry& entry : fs::directory_iterator(dir, error)) {
      std::string name = entry.path().filename().string();
      if (!name.starts_with(".tmp-") && !name.starts_with(".trash-")) continue;
      if (!owned_by_current_user(entry.path())) continue;
      if (modification_time(entry.path()).value_or(0) > cutoff) continue;
      std::error_code ignored;
      if (fs::remove_all(entry.path(), ignored) > 0) ++removed;
    }
  };
  sweep(directory);
  for (const fs::path& parent : {directory, directory / "graphs"})
    for (const fs::path& shard : own_shards(directory, parent, nullptr)) sweep(shard);
  return removed;
}

EvictionResult evict_cache(const fs::path& directory, uint64_t max_bytes) {
  EvictionResult result;
  remove_stale_temporaries(directory);
  std::vector<CacheItem> items = scan_cache(directory);
  std::erase_if(items, [](const CacheItem& item) { return !item.owned; });
  for (const CacheItem& item : items) result.bytes_before += item.bytes;
  result.bytes_after = result.bytes_before;
  if (result.bytes_before <= max_bytes) return result;
  std::stable_sort(items.begin(), items.end(),
                   [](const CacheItem& a, const CacheItem& b) { return a.last_used < b.last_used; });
  for (const CacheItem& item : items) {
    if (result.bytes_after <= max_bytes) break;
    if (remove_cache_item(item)) {
      ++result.removed;
      result.bytes_after -= item.bytes;
    } else if (fs::exists(item.path)) {
      ++result.in_use;
    }
  }
  return result;
}

}  // namespace hi
