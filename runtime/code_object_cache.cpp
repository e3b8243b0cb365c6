#include "runtime/code_object_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <thread>

#include "runtime/cache_entry_meta.h"
#include "runtime/cache_inventory.h"
#include "runtime/cache_stats.h"
#include "runtime/code_object_units.h"
#include "runtime/sha256.h"
#include "runtime/temp_directory.h"

#ifndef HIPINDUCTOR_VERSION
#define HIPINDUCTOR_VERSION "0.0.0"
#endif

namespace hi {

namespace {

// Bumped when the entry layout or the key serialization changes, so old entries become unreachable.
// v2: meta.json gained kernels, compiler_name, versions, source checksum and hardware facts; per-key lock files.
constexpr const char* kCacheFormat = "hipinductor-code-object-cache-v2";

void require_cache_key(const std::string& key) {
  if (!CodeObjectCache::is_key(key))
    throw std::invalid_argument("code-object cache key '" + key + "' is not 64 lowercase hex digits");
}

void add_field(Sha256& hash, std::string_view name, std::string_view value) {
  std::string header = std::string(name) + ":" + std::to_string(value.size()) + ":";
  hash.update(header).update(value).update("\n");
}

nlohmann::json amd_facts_json(const std::vector<AmdKernelFacts>& facts) {
  nlohmann::json kernels = nlohmann::json::array();
  for (const AmdKernelFacts& f : facts)
    kernels.push_back({{"name", f.name},
                       {"vgprs", f.vgpr_count},
                       {"sgprs", f.sgpr_count},
                       {"agprs", f.agpr_count},
                       {"lds_bytes", f.lds_bytes},
                       {"scratch_bytes", f.scratch_bytes},
                       {"vgpr_spills", f.vgpr_spill_count},
                       {"sgpr_spills", f.sgpr_spill_count},
                       {"wavefront_size", f.wavefront_size},
                       {"max_flat_workgroup_size", f.max_flat_workgroup_size},
                       {"waves_per_simd", f.waves_per_simd}});
  return kernels;
}

// Test hook (docs/cache.md): HIPINDUCTOR_CACHE_TEST_PUBLISH_DELAY_MS=N sleeps N ms between writing an entry's files
// and publishing it, so that the crash test can kill writers inside that window.
void test_publish_delay() {
  static const int delay_ms = [] {
    const char* text = std::getenv("HIPINDUCTOR_CACHE_TEST_PUBLISH_DELAY_MS");
    return text ? std::atoi(text) : 0;
  }();
  if (delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
}

}  // namespace

bool warn_once(const std::string& subject, const std::string& message) {
  static std::mutex mutex;
  static auto* reported = new std::set<std::string>();
  std::lock_guard<std::mutex> lock(mutex);
  if (!reported->insert(subject).second) return false;
  std::cerr << "hipinductor: " << message << "\n";
  return true;
}

std::string_view hipinductor_version() { return HIPINDUCTOR_VERSION; }

EntryCheck check_code_object_entry(const std::filesystem::path& entry, std::vector<char>* binary_out,
                                   std::string* meta_out, std::string* source_out) {
  struct stat info {};
  if (lstat(entry.c_str(), &info) != 0) return {EntryState::Missing, {}};
  if (!S_ISDIR(info.st_mode)) return {EntryState::NotOwned, "not a directory"};
  if (info.st_uid != geteuid()) return {EntryState::NotOwned, "owned by uid " + std::to_string(info.st_uid)};

  std::string meta_text;
  if (!read_file(entry / "meta.json", meta_text)) return {EntryState::Corrupt, "meta.json: missing"};
  nlohmann::json meta = nlohmann::json::parse(meta_text, nullptr, /*allow_exceptions=*/false);
  if (meta.is_discarded()) return {EntryState::Corrupt, "meta.json: not JSON"};
  if (std::string problem = entry_metadata_problem(meta); !problem.empty()) return {EntryState::Corrupt, problem};
  std::string binary_name = meta["binary"].get<std::string>();
  if (!binary_name.starts_with("kernel.") || binary_name.find('/') != std::string::npos)
    return {EntryState::Corrupt, "meta.json: bad binary name '" + binary_name + "'"};
  if (!owned_by_current_user(entry / binary_name) || !owned_by_current_user(entry / "meta.json"))
    return {EntryState::NotOwned, binary_name + " or meta.json is not owned by the current user"};
  std::string binary;
  if (!read_file(entry / binary_name, binary)) return {EntryState::Corrupt, binary_name + ": missing"};
  if (binary.size() != meta["binary_size"].get<uint64_t>())
    return {EntryState::Corrupt, binary_name + ": " + std::to_string(binary.size()) + " bytes, meta.json says " +
                                     std::to_string(meta["binary_size"].get<uint64_t>())};
  if (sha256_hex(binary) != meta["sha256"].get<std::string>())
    return {EntryState::Corrupt, binary_name + ": sha256 mismatch"};
  // A units container (a module compiled as several units) whose checksum holds but which no loader can take apart
  // was written so: readers would fail on it, so verify says so.
  if (std::vector<char> bytes(binary.begin(), binary.end()); is_code_object_units(bytes)) {
    try {
      unpack_code_object_units(bytes);
    } catch (const std::runtime_error& e) {
      return {EntryState::Corrupt, binary_name + ": " + e.what()};
    }
  }
  if (source_out) {
    if (!owned_by_current_user(entry / "source.hip") || !read_file(entry / "source.hip", *source_out))
      return {EntryState::Corrupt, "source.hip: missing"};
    if (sha256_hex(*source_out) != meta["source_sha256"].get<std::string>())
      return {EntryState::Corrupt, "source.hip: sha256 mismatch"};
  }
  if (binary_out) binary_out->assign(binary.begin(), binary.end());
  if (meta_out) *meta_out = std::move(meta_text);
  return {EntryState::Valid, {}};
}

CodeObjectCache::CodeObjectCache(std::filesystem::path directory)
    : directory_(std::move(directory)), max_bytes_(max_bytes_from_environment()) {}

CodeObjectCache::CodeObjectCache() : CodeObjectCache(default_directory()) {}

std::filesystem::path CodeObjectCache::default_directory() {
  if (const char* dir = std::getenv("HIPINDUCTOR_CACHE_DIR"); dir && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::filesystem::path(xdg) / "hipinductor";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::filesystem::path(home) / ".cache" / "hipinductor";
  throw std::runtime_error(
      "no code-object cache directory: set HIPINDUCTOR_CACHE_DIR (neither XDG_CACHE_HOME nor HOME is set)");
}

uint64_t CodeObjectCache::max_bytes_from_environment() {
  const char* text = std::getenv("HIPINDUCTOR_CACHE_MAX_SIZE");
  if (!text || !*text) return kDefaultMaxBytes;
  if (std::optional<uint64_t> bytes = parse_byte_size(text)) return *bytes;
  warn_once("HIPINDUCTOR_CACHE_MAX_SIZE", std::string("HIPINDUCTOR_CACHE_MAX_SIZE='") + text +
                                              "' is not a size (expected bytes or e.g. 500M, 2G); using 2G");
  return kDefaultMaxBytes;
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

bool CodeObjectCache::is_key(const std::string& key) {
  if (key.size() != 64) return false;
  for (char c : key)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::filesystem::path CodeObjectCache::entry_path(const std::string& key) const {
  require_cache_key(key);
  return directory_ / key.substr(0, 2) / key;
}

std::filesystem::path CodeObjectCache::lock_path(const std::string& key) const {
  require_cache_key(key);
  return directory_ / key.substr(0, 2) / (key + ".lock");
}

std::filesystem::path CodeObjectCache::graph_entry_path(const std::string& key) const {
  require_cache_key(key);
  return directory_ / "graphs" / key.substr(0, 2) / (key + ".json");
}

std::string CodeObjectCache::shard_problem(const std::string& key, bool graph) const {
  std::filesystem::path entry = graph ? graph_entry_path(key) : entry_path(key);
  return foreign_directory_problem(directory_, entry.parent_path());
}

std::string CodeObjectCache::readable_shard(const std::string& key, bool graph) const {
  std::string problem = shard_problem(key, graph);
  if (!problem.empty())
    warn_once("shard:" + problem, "code-object cache directory ignored: " + problem);
  return problem;
}

std::optional<std::vector<char>> CodeObjectCache::get(const std::string& key, bool count, std::string* source) {
  std::filesystem::path entry = entry_path(key);
  if (!readable_shard(key, /*graph=*/false).empty()) {
    if (count) ++misses_;
    return std::nullopt;
  }
  std::vector<char> binary;
  EntryCheck check = check_code_object_entry(entry, &binary, nullptr, source);
  if (check.state == EntryState::Valid) {
    touch_path(entry);
    if (count) ++hits_;
    return binary;
  }
  if (count) ++misses_;
  // An entry an evictor moved away while we read it looks torn; only an entry still in place is reported.
  if (check.state == EntryState::Corrupt && std::filesystem::exists(entry))
    warn_once(entry.string(), "code-object cache entry " + entry.string() + " is corrupt (" + check.problem +
                                  "); it will be rebuilt");
  if (check.state == EntryState::NotOwned)
    warn_once(entry.string(), "code-object cache entry " + entry.string() + " is ignored: " + check.problem);
  return std::nullopt;
}

FileLock CodeObjectCache::lock_entry(const std::string& key) {
  std::filesystem::path lock = lock_path(key);
  make_private_directories(lock.parent_path());
  if (std::string problem = shard_problem(key, /*graph=*/false); !problem.empty())
    throw std::runtime_error("cannot use cache directory: " + problem);
  return FileLock::acquire(lock);
}

void CodeObjectCache::put(const std::string& key, const std::vector<char>& binary, const std::string& source,
                          const CacheEntryInfo& info) {
  std::filesystem::path entry = entry_path(key);
  std::filesystem::path shard = entry.parent_path();
  make_private_directories(shard);
  if (std::string problem = shard_problem(key, /*graph=*/false); !problem.empty())
    throw std::runtime_error("cannot write cache entry " + entry.string() + ": " + problem);
  // An entry whose binary is intact but whose source.hip is not is replaced too: readers of the source (warm
  // starts through graph entries) would otherwise miss on it forever.
  std::string existing_source;
  if (check_code_object_entry(entry, nullptr, nullptr, &existing_source).state == EntryState::Valid) return;

  // Build the whole entry in a sibling temp dir (same file system, so rename is atomic), then publish it.
  // The writer's pid in the name says who left a staging dir behind (and lets the crash test kill a writer there).
  TempDirectory staging(".tmp-" + key + "-" + std::to_string(getpid()) + "-", shard);
  std::string binary_name = "kernel." + binary_extension(info.target);
  nlohmann::json meta = {
      {"format", kCacheFormat},
      {"key", key},
      {"name_hint", info.name_hint},
      {"kernels", info.kernels},
      {"target", info.target.id()},
      {"compiler_name", info.compiler_name},
      {"compiler", info.compiler},
      {"options", info.options},
      {"prelude_version", info.prelude_version},
      {"hipinductor_version", std::string(hipinductor_version())},
      {"compile_ms", info.compile_ms},
      {"created", utc_timestamp()},
      {"binary", binary_name},
      {"binary_size", binary.size()},
      {"sha256", sha256_hex(std::string_view(binary.data(), binary.size()))},
      {"source_sha256", sha256_hex(source)},
  };
  if (info.target.kind == TargetKind::Amd) {
    meta["hardware_facts"] = {{"source", "code-object metadata (comgr)"}, {"kernels", amd_facts_json(info.amd_facts)}};
    if (!info.facts_note.empty()) meta["hardware_facts"]["note"] = info.facts_note;
  }
  std::string meta_text = meta.dump(2) + "\n";
  write_file_synced(staging.path() / binary_name, binary.data(), binary.size());
  write_file_synced(staging.path() / "source.hip", source.data(), source.size());
  test_publish_delay();
  // meta.json last: even without the rename, an entry is never trusted before its checksum is written.
  write_file_synced(staging.path() / "meta.json", meta_text.data(), meta_text.size());
  sync_directory(staging.path());

  bool published = false;
  for (int attempt = 0; attempt < 4 && !published; ++attempt) {
    if (std::rename(staging.path().c_str(), entry.c_str()) == 0) {
      staging.release();
      sync_directory(shard);
      published = true;
      break;
    }
    if (errno != EEXIST && errno != ENOTEMPTY)
      throw std::runtime_error("cannot publish cache entry " + entry.string() + ": " + std::strerror(errno));
    // Someone else published first (keep theirs if intact), or an invalid entry is in the way: move it aside
    // (rename onto an empty reserved dir is atomic too) and retry.
    if (check_code_object_entry(entry, nullptr, nullptr, &existing_source).state == EntryState::Valid) return;
    TempDirectory trash(".trash-" + key + "-", shard);
    if (std::rename(entry.c_str(), trash.path().c_str()) != 0 && errno != ENOENT)
      throw std::runtime_error("cannot replace invalid cache entry " + entry.string() + ": " + std::strerror(errno));
  }
  if (!published)
    throw std::runtime_error("cannot publish cache entry " + entry.string() +
                             ": it kept changing under concurrent writers");
  enforce_size_cap();
}

namespace {

/// Rewrites the meta.json of the valid entry `entry` (under its lock, held by the caller) with `change`, when
/// `change` says it changed something. What loader facts and tuning records share.
bool update_meta(const std::filesystem::path& entry, const std::function<bool(nlohmann::json&)>& change) {
  std::string meta_text;
  if (check_code_object_entry(entry, nullptr, &meta_text).state != EntryState::Valid) return false;
  nlohmann::json meta = nlohmann::json::parse(meta_text);
  if (!change(meta)) return false;
  replace_file_atomically(entry / "meta.json", meta.dump(2) + "\n");
  return true;
}

}  // namespace

bool CodeObjectCache::record_loader_facts(const std::string& key, const std::vector<GpuKernelFacts>& facts) {
  if (facts.empty()) return false;
  try {
    FileLock lock = lock_entry(key);
    return update_meta(entry_path(key), [&](nlohmann::json& meta) {
      // A code object several graphs share (compile_graphs) is loaded by each for its own kernels: facts add up.
      nlohmann::json kernels =
          meta.contains("loader_facts") ? meta["loader_facts"]["kernels"] : nlohmann::json::array();
      std::set<std::string> known;
      for (const auto& k : kernels) known.insert(k.value("name", ""));
      size_t before = kernels.size();
      for (const GpuKernelFacts& k : facts)
        if (known.insert(k.name).second)
          kernels.push_back({{"name", k.name},
                             {"registers", k.registers},
                             {"static_shared_bytes", k.static_shared_bytes},
                             {"local_bytes", k.local_bytes},
                             {"max_threads_per_block", k.max_threads_per_block}});
      if (kernels.size() == before) return false;
      std::string source = meta["target"].get<std::string>().starts_with("sm_") ? "CUDA driver (cuFuncGetAttribute)"
                                                                                : "HIP runtime (hipFuncGetAttribute)";
      meta["loader_facts"] = {{"source", source}, {"recorded", utc_timestamp()}, {"kernels", kernels}};
      return true;
    });
  } catch (const std::exception& e) {
    warn_once("loader-facts:" + key, "cannot record loader facts in cache entry " + key + ": " + e.what());
    return false;
  }
}

bool CodeObjectCache::record_tuning(const std::string& key, const std::string& device,
                                    const std::vector<KernelTuning>& kernels) {
  if (kernels.empty()) return false;
  try {
    FileLock lock = lock_entry(key);
    return update_meta(entry_path(key), [&](nlohmann::json& meta) {
      nlohmann::json& mine = meta["tuning"][device];
      mine["recorded"] = utc_timestamp();
      for (const KernelTuning& k : kernels) {
        nlohmann::json ms = nlohmann::json::object();
        for (const auto& [grid, t] : k.ms) ms[std::to_string(grid)] = t;
        mine["kernels"][k.kernel] = {{"grid", k.grid}, {"ms", ms}};
      }
      return true;
    });
  } catch (const std::exception& e) {
    warn_once("tuning:" + key, "cannot record launch tuning in cache entry " + key + ": " + e.what());
    return false;
  }
}

std::map<std::string, unsigned> CodeObjectCache::tuned_grids(const std::string& key, const std::string& device) {
  std::map<std::string, unsigned> out;
  try {
    std::string meta_text;
    if (!shard_problem(key, /*graph=*/false).empty() ||
        check_code_object_entry(entry_path(key), nullptr, &meta_text).state != EntryState::Valid)
      return out;
    nlohmann::json meta = nlohmann::json::parse(meta_text);
    if (!meta.contains("tuning") || !meta["tuning"].contains(device)) return out;
    const nlohmann::json kernels = meta["tuning"][device].value("kernels", nlohmann::json::object());
    for (const auto& [kernel, t] : kernels.items())
      if (t.contains("grid") && t["grid"].is_number_unsigned() && t["grid"].get<unsigned>() > 0)
        out[kernel] = t["grid"].get<unsigned>();
  } catch (const std::exception&) {
    out.clear();  // a malformed record is no tuning
  }
  return out;
}

std::optional<std::string> CodeObjectCache::get_graph_entry(const std::string& key) {
  std::filesystem::path path = graph_entry_path(key);
  if (!readable_shard(key, /*graph=*/true).empty()) return std::nullopt;
  struct stat info {};
  if (lstat(path.c_str(), &info) != 0) return std::nullopt;
  if (!owned_by_current_user(path)) {
    warn_once(path.string(), "graph cache entry " + path.string() + " is ignored: not owned by the current user");
    return std::nullopt;
  }
  std::string payload;
  ChecksumStatus status = read_checksummed_file(path, payload);
  if (status == ChecksumStatus::Corrupt)
    warn_once(path.string(), "graph cache entry " + path.string() + " is corrupt (checksum mismatch); it will be "
                             "rebuilt");
  if (status != ChecksumStatus::Ok) return std::nullopt;
  touch_path(path);
  return payload;
}

void CodeObjectCache::put_graph_entry(const std::string& key, const std::string& payload) {
  std::filesystem::path path = graph_entry_path(key);
  make_private_directories(path.parent_path());
  if (std::string problem = shard_problem(key, /*graph=*/true); !problem.empty())
    throw std::runtime_error("cannot write graph cache entry " + path.string() + ": " + problem);
  write_checksummed_file(path, payload);
  enforce_size_cap();
}

size_t CodeObjectCache::enforce_size_cap() {
  std::optional<FileLock> evicting = FileLock::try_acquire(directory_ / "evict.lock");
  if (!evicting) return 0;
  return evict_cache(directory_, max_bytes_).removed;
}

CompiledCode compile_cached(Compiler& compiler, const std::string& source, const std::string& name_hint,
                            const Target& target, const std::vector<std::string>& options,
                            const std::string& prelude_version, CodeObjectCache* cache, bool* hit, std::string* key,
                            const std::vector<std::string>& kernels) {
  if (hit) *hit = false;
  if (key) key->clear();
  if (!cache) return compiler.compile(source, name_hint, target, options);

  std::vector<std::string> all_options = compiler.base_options(target);
  all_options.insert(all_options.end(), options.begin(), options.end());
  std::string entry_key = CodeObjectCache::cache_key(source, target, compiler.name(), compiler.version(), all_options,
                                                     prelude_version);
  auto cached = [&](std::vector<char> binary) {
    if (hit) *hit = true;
    if (key) *key = entry_key;
    record_cache_lookup(cache->directory(), target.id(), CacheLookup::CodeHit);
    return CompiledCode{std::move(binary), {}, 0.0};
  };
  // The source is checked too (a hit needs it intact): an entry with a damaged source.hip is compiled again and
  // replaced, where a hit on its binary alone would leave it damaged for every reader of the source.
  std::string cached_source;
  if (std::optional<std::vector<char>> binary = cache->get(entry_key, true, &cached_source))
    return cached(std::move(*binary));

  std::optional<FileLock> lock;
  try {
    lock = cache->lock_entry(entry_key);
  } catch (const std::exception& e) {
    warn_once("unwritable:" + cache->directory().string(),
              std::string(e.what()) + "; compiling without the code-object cache");
    return compiler.compile(source, name_hint, target, options);
  }
  // Another process may have compiled the key while we waited for the lock.
  if (std::optional<std::vector<char>> binary = cache->get(entry_key, /*count=*/false, &cached_source))
    return cached(std::move(*binary));

  CompiledCode compiled = compiler.compile(source, name_hint, target, options);
  record_cache_lookup(cache->directory(), target.id(), CacheLookup::CodeMiss);
  CacheEntryInfo info{name_hint,       target,  compiler.name(),     compiler.version(), all_options,
                      prelude_version, kernels, compiled.compile_ms, {},                 {}};
  if (target.kind == TargetKind::Amd) {
    try {
      info.amd_facts = read_amd_kernel_facts(compiled.binary, target);
      if (info.kernels.empty())
        for (const AmdKernelFacts& f : info.amd_facts) info.kernels.push_back(f.name);
    } catch (const std::exception& e) {
      info.facts_note = std::string("unavailable: ") + e.what();
    }
  }
  try {
    cache->put(entry_key, compiled.binary, source, info);
    if (key) *key = entry_key;
  } catch (const std::exception& e) {
    warn_once("unwritable:" + cache->directory().string(),
              std::string(e.what()) + "; compiling without the code-object cache");
  }
  return compiled;
}

}  // namespace hi
