#include "runtime/cache_stats.h"

#include <nlohmann/json.hpp>

#include "runtime/cache_files.h"
#include "runtime/temp_directory.h"

namespace hi {
namespace {

std::map<std::string, CacheCounters> parse_stats(const std::string& text) {
  std::map<std::string, CacheCounters> stats;
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("targets") || !j["targets"].is_object()) return stats;
  auto count = [](const nlohmann::json& o, const char* name) -> uint64_t {
    return o.contains(name) && o[name].is_number_unsigned() ? o[name].get<uint64_t>() : 0;
  };
  for (const auto& [target, o] : j["targets"].items()) {
    if (!o.is_object()) continue;
    stats[target] = {count(o, "hits"), count(o, "misses"), count(o, "graph_hits"), count(o, "graph_misses")};
  }
  return stats;
}

std::string dump_stats(const std::map<std::string, CacheCounters>& stats) {
  nlohmann::json targets = nlohmann::json::object();
  for (const auto& [target, c] : stats)
    targets[target] = {{"hits", c.hits}, {"misses", c.misses}, {"graph_hits", c.graph_hits},
                       {"graph_misses", c.graph_misses}};
  return nlohmann::json{{"format", "hipinductor-cache-stats-v1"}, {"targets", targets}}.dump(1) + "\n";
}

}  // namespace

void record_cache_lookup(const std::filesystem::path& directory, const std::string& target, CacheLookup lookup) {
  record_cache_lookups(directory, target, {lookup});
}

void record_cache_lookups(const std::filesystem::path& directory, const std::string& target,
                          std::initializer_list<CacheLookup> lookups) {
  try {
    make_private_directories(directory);
    FileLock lock = FileLock::acquire(directory / "stats.lock");
    std::string text;
    std::map<std::string, CacheCounters> stats;
    if (read_file(directory / "stats.json", text)) stats = parse_stats(text);
    CacheCounters& c = stats[target];
    for (CacheLookup lookup : lookups) switch (lookup) {
        case CacheLookup::CodeHit: ++c.hits; break;
        case CacheLookup::CodeMiss: ++c.misses; break;
        case CacheLookup::GraphHit: ++c.graph_hits; break;
        case CacheLookup::GraphMiss: ++c.graph_misses; break;
      }
    // Not fsynced: after a power loss a few counts may be lost, which is cheaper than an fsync per compile.
    replace_file_atomically(directory / "stats.json", dump_stats(stats), /*durable=*/false);
  } catch (const std::exception&) {
    // Statistics are best effort.
  }
}

std::map<std::string, CacheCounters> read_cache_stats(const std::filesystem::path& directory) {
  std::string text;
  if (!read_file(directory / "stats.json", text)) return {};
  return parse_stats(text);
}

void reset_cache_stats(const std::filesystem::path& directory) {
  std::error_code ignored;
  if (!std::filesystem::exists(directory, ignored)) return;
  FileLock lock = FileLock::acquire(directory / "stats.lock");
  std::filesystem::remove(directory / "stats.json", ignored);
}

}  // namespace hi
