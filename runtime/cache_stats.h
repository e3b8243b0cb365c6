// Persistent hit/miss counters of an on-disk cache directory, per target, shared by every process using it:
// <dir>/stats.json, read-modified-written under an exclusive flock on <dir>/stats.lock and replaced atomically, so
// concurrent processes never lose a count and a killed process never leaves a torn file. One update costs a lock, a
// read and a rename of a small file: done once per compile (a cache lookup), never per kernel launch.
#pragma once

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <string>

namespace hi {

struct CacheCounters {
  uint64_t hits = 0;          ///< code-object lookups answered from the cache
  uint64_t misses = 0;        ///< code-object lookups that compiled
  uint64_t graph_hits = 0;    ///< graph-entry lookups that skipped lowering and codegen
  uint64_t graph_misses = 0;  ///< graph-entry lookups that lowered the graph
};

enum class CacheLookup { CodeHit, CodeMiss, GraphHit, GraphMiss };

/// Adds one lookup for `target` (a target id) to the counters of cache directory `directory`. Best effort: a cache
/// directory that cannot be written loses the count, silently (statistics never fail a compile).
void record_cache_lookup(const std::filesystem::path& directory, const std::string& target, CacheLookup lookup);
/// Several lookups in one update (a graph hit is a graph hit and a code-object hit).
void record_cache_lookups(const std::filesystem::path& directory, const std::string& target,
                          std::initializer_list<CacheLookup> lookups);

/// The counters per target id; empty when nothing was recorded (or stats.json is unreadable).
std::map<std::string, CacheCounters> read_cache_stats(const std::filesystem::path& directory);

/// Forgets the counters (`hipinductor-cache clear`).
void reset_cache_stats(const std::filesystem::path& directory);

}  // namespace hi
