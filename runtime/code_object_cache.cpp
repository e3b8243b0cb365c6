#include "runtime/code_object_cache.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "runtime/sha256.h"
#include "runtime/temp_directory.h"

namespace hi {

namespace {

// Bumped when the entry layout or the key serialization changes, so old entries become unreachable.
constexpr const char* kCacheFormat = "hipinductor-code-object-cache-v1";

bool is_cache_key(const std::string& key) {
  if (key.size() != 64) return false;
  for (char c : key)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

void require_cache_key(const std::string& key) {
  if (!is_cache_key(key))
    throw std::invalid_argument("code-object cache key '" + key + "' is not 64 lowercase hex digits");
}

// mkdir -p with mode 0700 for every directory it creates: cached code objects are executable code, so other users
// must not be able to plant entries.
void make_private_directories(const std::filesystem::path& path) {
  std::filesystem::path partial;
  for (const auto& component : path) {
    partial /= component;
    if (mkdir(partial.c_str(), 0700) == 0 || errno == EEXIST) continue;
    throw std::runtime_error("cannot create cache directory " + partial.string() + ": " + std::strerror(errno));
  }
}

std::string utc_timestamp() {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

void add_field(Sha256& hash, std::string_view name, std::string_view value) {
  std::string header = std::string(name) + ":" + std::to_string(value.size()) + ":";
  hash.update(header).update(value).update("\n");
}

// The entry's code object if it is complete and intact; no counting (put() uses it too).
std::optional<std::vector<char>> read_valid_entry(const std::filesystem::path& entry) {
  std::string meta_text;
  if (!read_file(entry / "meta.json", meta_text)) return std::nullopt;
  nlohmann::json meta = nlohmann::json::parse(meta_text, nullptr, /*allow_exceptions=*/false);
  if (!meta.is_object() || !meta.contains("binary") || !meta["binary"].is_string() || !meta.contains("sha256") ||
      !meta["sha256"].is_string() || !meta.contains("binary_size") || !meta["binary_size"].is_number_unsigned())
    return std::nullopt;
  std::string binary_name = meta["binary"].get<std::string>();
  if (!binary_name.starts_with("kernel.") || binary_name.find('/') != std::string::npos) return std::nullopt;
  std::string binary;
  if (!read_file(entry / binary_name, binary)) return std::nullopt;
  if (binary.size() != meta["binary_size"].get<uint64_t>()) return std::nullopt;
  if (sha256_hex(binary) != meta["sha256"].get<std::string>()) return std::nullopt;
  return std::vector<char>(binary.begin(), binary.end());
}

}  // namespace

CodeObjectCache::CodeObjectCache(std::filesystem::path directory) : directory_(std::move(directory)) {}

CodeObjectCache::CodeObjectCache() : CodeObjectCache(default_directory()) {}

std::filesystem::path CodeObjectCache::default_directory() {
  if (const char* dir = std::getenv("HIPINDUCTOR_CACHE_DIR"); dir && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::filesystem::path(xdg) / "hipinductor";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::filesystem::path(home) / ".cache" / "hipinductor";
  throw std::runtime_error(
      "no code-object cache directory: set HIPINDUCTOR_CACHE_DIR (neither XDG_CACHE_HOME nor HOME is set)");
}

std::string CodeObjectCache::cache_key(const std::string& source, const Target& target,
                                       const std::string& compiler_name, const std::string& compiler_version,
                                       const std::vector<std::string>& options, const std::string& prelude_version) {
  Sha256 hash;
  add_field(hash, "format", kCacheFormat);
  add_field(hash, "target", target.id());
  add_field(hash, "compiler", compiler_name);
  add_field(hash, "compiler_version", compiler_version);
  add_field(hash, "option_count", std::to_string(options.size()));
  for (const std::string& option : options) add_field(hash, "option", option);
  add_field(hash, "prelude_version", prelude_version);
  add_field(hash, "source", source);
  return hash.hex_digest();
}

std::string CodeObjectCache::binary_extension(const Target& target) {
  switch (target.kind) {
    case TargetKind::Amd:
      return "hsaco";
    case TargetKind::Nvidia:
      return "cubin";
    case TargetKind::Cpu:
      return "so";
  }
  return "bin";
}

std::filesystem::path CodeObjectCache::entry_path(const std::string& key) const {
  require_cache_key(key);
  return directory_ / key.substr(0, 2) / key;
}

std::optional<std::vector<char>> CodeObjectCache::get(const std::string& key) {
  std::optional<std::vector<char>> binary = read_valid_entry(entry_path(key));
  ++(binary ? hits_ : misses_);
  return binary;
}

void CodeObjectCache::put(const std::string& key, const std::vector<char>& binary, const std::string& source,
                          const CacheEntryInfo& info) {
  std::filesystem::path entry = entry_path(key);
  std::filesystem::path shard = entry.parent_path();
  make_private_directories(shard);
  if (read_valid_entry(entry)) return;

  // Build the whole entry in a sibling temp dir (same file system, so rename is atomic), then publish it.
  TempDirectory staging(".tmp-" + key + "-", shard);
  std::string binary_name = "kernel." + binary_extension(info.target);
  nlohmann::json meta = {
      {"key", key},
      {"name_hint", info.name_hint},
      {"target", info.target.id()},
      {"compiler", info.compiler},
      {"options", info.options},
      {"compile_ms", info.compile_ms},
      {"created", utc_timestamp()},
      {"binary", binary_name},
      {"binary_size", binary.size()},
      {"sha256", sha256_hex(std::string_view(binary.data(), binary.size()))},
  };
  std::string meta_text = meta.dump(2) + "\n";
  write_file_synced(staging.path() / binary_name, binary.data(), binary.size());
  write_file_synced(staging.path() / "source.hip", source.data(), source.size());
  // meta.json last: even without the rename, an entry is never trusted before its checksum is written.
  write_file_synced(staging.path() / "meta.json", meta_text.data(), meta_text.size());
  sync_directory(staging.path());

  for (int attempt = 0; attempt < 4; ++attempt) {
    if (std::rename(staging.path().c_str(), entry.c_str()) == 0) {
      staging.release();
      sync_directory(shard);
      return;
    }
    if (errno != EEXIST && errno != ENOTEMPTY)
      throw std::runtime_error("cannot publish cache entry " + entry.string() + ": " + std::strerror(errno));
    // Someone else published first (keep theirs if intact), or an invalid entry is in the way: move it aside
    // (rename onto an empty reserved dir is atomic too) and retry.
    if (read_valid_entry(entry)) return;
    TempDirectory trash(".trash-" + key + "-", shard);
    if (std::rename(entry.c_str(), trash.path().c_str()) != 0 && errno != ENOENT)
      throw std::runtime_error("cannot replace invalid cache entry " + entry.string() + ": " + std::strerror(errno));
  }
  throw std::runtime_error("cannot publish cache entry " + entry.string() + ": it kept changing under concurrent writers");
}

CompiledCode compile_cached(Compiler& compiler, const std::string& source, const std::string& name_hint,
                            const Target& target, const std::vector<std::string>& options,
                            const std::string& prelude_version, CodeObjectCache* cache, bool* hit) {
  if (hit) *hit = false;
  if (!cache) return compiler.compile(source, name_hint, target, options);

  std::vector<std::string> all_options = compiler.base_options(target);
  all_options.insert(all_options.end(), options.begin(), options.end());
  std::string key = CodeObjectCache::cache_key(source, target, compiler.name(), compiler.version(), all_options,
                                               prelude_version);
  if (std::optional<std::vector<char>> binary = cache->get(key)) {
    if (hit) *hit = true;
    return CompiledCode{std::move(*binary), {}, 0.0};
  }
  CompiledCode compiled = compiler.compile(source, name_hint, target, options);
  CacheEntryInfo info{name_hint, target, compiler.version(), all_options,
                      compiled.compile_ms};
  cache->put(key, compiled.binary, source, info);
  return compiled;
}

}  // namespace hi
