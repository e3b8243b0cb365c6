// The shape of a code-object entry's meta.json (docs/cache.md): which fields it has and of which JSON types, checked
// before anything reads them, so that a hand-edited or damaged file is a corrupt entry (rebuilt by the next compile,
// reported by `hipinductor-cache verify`) instead of a type error in whatever reads it (list, stats, show, clear).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace hi {

/// Empty when `meta` has every field CodeObjectCache::put writes, each of its documented type, and the optional ones
/// (hardware_facts, loader_facts, tuning) shaped as their writers write them; else the first problem, naming the
/// field ("field 'target' is not a string").
std::string entry_metadata_problem(const nlohmann::json& meta);

}  // namespace hi
