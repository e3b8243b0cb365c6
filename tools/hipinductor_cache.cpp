// hipinductor-cache: inspect and maintain the on-disk code-object cache (docs/cache.md).
//
//   list [--target T] [--kernel SUBSTR] [--sort key|size|age|compile-time]   code-object entries, one a line
//   show KEY        metadata, paths, hardware facts            (KEY: a unique prefix of a key)
//   source KEY      the entry's HIP source
//   disasm KEY      AMD ISA (comgr), NVIDIA SASS (cuobjdump from PATH), cpu (objdump from PATH)
//   stats           entries, bytes, hits/misses by target
//   verify          every entry's checksums and metadata, and cache directories not read (symbolic links,
//                   unreadable); exit 1 when there is any problem
//   prune --max-size SIZE    evict least-recently-used entries down to SIZE
//   clear [--target T]       remove every entry (of target T; an empty T is misuse)
// Every read command takes --json; --cache-dir DIR overrides $HIPINDUCTOR_CACHE_DIR. Exit status: 0 done, 1 corrupt
// entries or directories not read (verify) or a failing tool (disasm), 2 misuse (unknown command or option, bad size,
// unknown or ambiguous key, unknown or empty target), with one line on stderr.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>

#include "codegen/target.h"
#include "runtime/amd_code_object.h"
#include "runtime/cache_entry_meta.h"
#include "runtime/cache_files.h"
#include "runtime/cache_inventory.h"
#include "runtime/cache_stats.h"
#include "runtime/code_object_cache.h"
#include "runtime/code_object_units.h"
#include "tools/error_line.h"
#include "runtime/process.h"
#include "runtime/temp_directory.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace hi {
namespace {

constexpr const char* kTool = "hipinductor-cache";

/// Misuse: one line, exit 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// A failure that is not the user's: one line, exit 1.
struct ToolFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A code-object entry with its metadata (not checksummed: see verify).
struct EntryView {
  CacheItem item;
  json meta;  ///< null when meta.json is missing, unreadable or not of the documented shape (meta_problem says why)
  std::string meta_problem;
  std::string target() const { return meta.is_object() && meta.contains("target") ? meta["target"].get<std::string>() : ""; }
  std::vector<std::string> kernels() const {
    if (!meta.is_object() || !meta.contains("kernels") || !meta["kernels"].is_array()) return {};
    return meta["kernels"].get<std::vector<std::string>>();
  }
  double compile_ms() const {
    return meta.is_object() && meta.contains("compile_ms") && meta["compile_ms"].is_number() ? meta["compile_ms"].get<double>() : 0;
  }
};

EntryView view_of(const CacheItem& item) {
  EntryView view{item, nullptr, {}};
  std::string text;
  if (read_file(item.path / "meta.json", text)) view.meta = json::parse(text, nullptr, false);
  if (view.meta.is_discarded()) view.meta = nullptr;
  // Every field is read as its documented type below: metadata of another shape is shown as none.
  if (!view.meta.is_null()) view.meta_problem = entry_metadata_problem(view.meta);
  if (!view.meta_problem.empty()) view.meta = nullptr;
  return view;
}

std::vector<EntryView> code_entries(const fs::path& dir) {
  std::vector<EntryView> out;
  for (const CacheItem& item : scan_cache(dir))
    if (item.kind == CacheItem::Kind::CodeObject && item.owned) out.push_back(view_of(item));
  return out;
}

std::string timestamp(double seconds) { return utc_timestamp(static_cast<std::time_t>(seconds)); }

/// Canonical id of a --target value, or UsageError (an empty one too: `clear --target ''` must not clear all).
std::string target_id(const std::optional<std::string>& name) {
  if (!name) return "";
  if (name->empty()) throw UsageError("--target: empty (name a target, e.g. gfx942 or cpu)");
  try {
    return parse_target(*name).id();
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--target: ") + e.what());
  }
}

bool target_matches(const std::string& entry_target, const std::string& wanted) {
  return entry_target == wanted || entry_target.rfind(wanted + ":", 0) == 0;  // "gfx942" matches gfx942:sramecc+...
}

EntryView find_entry(const fs::path& dir, const std::string& prefix) {
  if (prefix.empty() || prefix.find_first_not_of("0123456789abcdef") != std::string::npos)
    throw UsageError("'" + prefix + "' is not a cache key or key prefix (lowercase hex digits)");
  std::vector<EntryView> found;
  for (EntryView& e : code_entries(dir))
    if (e.item.key.rfind(prefix, 0) == 0) found.push_back(std::move(e));
  if (found.empty()) throw UsageError("no cache entry with key prefix '" + prefix + "' in " + dir.string());
  if (found.size() > 1)
    throw UsageError("key prefix '" + prefix + "' is ambiguous in " + dir.string() + ": " +
                     std::to_string(found.size()) + " entries match");
  return found[0];
}

json entry_json(const EntryView& e) {
  json j = e.meta.is_object() ? e.meta : json::object();
  j["key"] = e.item.key;
  j["path"] = e.item.path.string();
  j["source_path"] = (e.item.path / "source.hip").string();
  if (e.meta.is_object() && e.meta.contains("binary")) j["binary_path"] = (e.item.path / e.meta["binary"].get<std::string>()).string();
  j["bytes"] = e.item.bytes;
  j["last_used"] = timestamp(e.item.last_used);
  return j;
}

// ---- list ----------------------------------------------------------------------------------------------------------

int list(const fs::path& dir, const std::optional<std::string>& target, const std::string& kernel,
         const std::string& sort, bool as_json) {
  std::string wanted = target_id(target);
  std::vector<EntryView> entries = code_entries(dir);
  std::erase_if(entries, [&](const EntryView& e) {
    if (!wanted.empty() && !target_matches(e.target(), wanted)) return true;
    if (kernel.empty()) return false;
    for (const std::string& k : e.kernels())
      if (k.find(kernel) != std::string::npos) return false;
    return true;
  });
  if (sort == "size")
    std::stable_sort(entries.begin(), entries.end(), [](auto& a, auto& b) { return a.item.bytes > b.item.bytes; });
  else if (sort == "age")
    std::stable_sort(entries.begin(), entries.end(),
                     [](auto& a, auto& b) { return a.item.last_used > b.item.last_used; });
  else if (sort == "compile-time")
    std::stable_sort(entries.begin(), entries.end(), [](auto& a, auto& b) { return a.compile_ms() > b.compile_ms(); });

  if (as_json) {
    json out = json::array();
    for (const EntryView& e : entries) out.push_back(entry_json(e));
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  std::printf("%-12s  %-24s  %10s  %10s  %-20s  %s\n", "KEY", "TARGET", "SIZE", "COMPILE", "LAST USED", "KERNELS");
  for (const EntryView& e : entries) {
    std::string kernels;
    for (const std::string& k : e.kernels()) kernels += (kernels.empty() ? "" : ", ") + k;
    char compile[32];
    std::snprintf(compile, sizeof compile, "%.0f ms", e.compile_ms());
    std::printf("%-12s  %-24s  %10s  %10s  %-20s  %s\n", e.item.key.substr(0, 12).c_str(),
                e.meta.is_null() ? "(no meta.json)" : e.target().c_str(), format_byte_size(e.item.bytes).c_str(),
                compile, timestamp(e.item.last_used).c_str(), kernels.c_str());
  }
  return 0;
}

// ---- show ----------------------------------------------------------------------------------------------------------

void print_facts(const json& meta) {
  std::string target = meta.value("target", "");
  if (target.starts_with("cpu")) {
    std::printf("hardware facts   none (cpu device)\n");
    return;
  }
  if (meta.contains("hardware_facts")) {
    const json& facts = meta["hardware_facts"];
    std::printf("hardware facts   from %s; waves/SIMD = occupancy the VGPRs allow (docs/cache.md)\n",
                facts.value("source", "?").c_str());
    if (facts.contains("note")) std::printf("                 %s\n", facts["note"].get<std::string>().c_str());
    std::printf("  %-40s %5s %5s %5s %7s %8s %8s %5s %10s\n", "KERNEL", "VGPRs", "SGPRs", "AGPRs", "LDS B",
                "scratch", "spills", "wave", "waves/SIMD");
    for (const json& k : facts.value("kernels", json::array())) {
      std::string spills = std::to_string(k.value("vgpr_spills", 0)) + "/" + std::to_string(k.value("sgpr_spills", 0));
      std::printf("  %-40s %5d %5d %5d %7d %8d %8s %5d %10d\n", k.value("name", "?").c_str(), k.value("vgprs", 0),
                  k.value("sgprs", 0), k.value("agprs", 0), k.value("lds_bytes", 0), k.value("scratch_bytes", 0),
                  spills.c_str(), k.value("wavefront_size", 0), k.value("waves_per_simd", 0));
    }
  }
  if (!meta.contains("loader_facts")) {
    std::printf("loader facts     not recorded (no GPU load yet)\n");
    return;
  }
  const json& loader = meta["loader_facts"];
  std::printf("loader facts     from %s, recorded %s\n", loader.value("source", "?").c_str(),
              loader.value("recorded", "?").c_str());
  std::printf("  %-40s %9s %13s %11s %12s\n", "KERNEL", "registers", "shared B", "local B", "max threads");
  for (const json& k : loader.value("kernels", json::array()))
    std::printf("  %-40s %9d %13d %11d %12d\n", k.value("name", "?").c_str(), k.value("registers", 0),
                k.value("static_shared_bytes", 0), k.value("local_bytes", 0), k.value("max_threads_per_block", 0));
}

/// The grids autotuning chose (GraphRunner::autotune), per device, with every candidate's time.
void print_tuning(const json& meta) {
  if (!meta.contains("tuning") || !meta["tuning"].is_object()) {
    std::printf("launch tuning    none (autotune off, or not run on a device yet)\n");
    return;
  }
  for (const auto& [device, t] : meta["tuning"].items()) {
    std::printf("launch tuning    on %s, recorded %s\n", device.c_str(),
                t.is_object() ? t.value("recorded", "?").c_str() : "?");
    std::printf("  %-40s %8s  %s\n", "KERNEL", "grid", "candidates (blocks: us per launch)");
    const json kernels = t.is_object() ? t.value("kernels", json::object()) : json::object();
    for (const auto& [kernel, k] : kernels.items()) {
      std::string candidates;
      const json times = k.is_object() ? k.value("ms", json::object()) : json::object();
      for (const auto& [blocks, ms] : times.items()) {
        char us[32];
        std::snprintf(us, sizeof us, "%.1f", ms.is_number() ? ms.get<double>() * 1000.0 : 0.0);
        candidates += (candidates.empty() ? "" : ", ") + blocks + ": " + us;
      }
      std::printf("  %-40s %8u  %s\n", kernel.c_str(), k.is_object() ? k.value("grid", 0u) : 0u, candidates.c_str());
    }
  }
}

int show(const fs::path& dir, const std::string& prefix, bool as_json) {
  EntryView e = find_entry(dir, prefix);
  std::string source_text;
  std::vector<char> binary;
  EntryCheck check = check_code_object_entry(e.item.path, &binary, nullptr, &source_text);
  // A module compiled as several units (code_object_units.h): how many code objects the entry holds.
  size_t units = is_code_object_units(binary) ? unpack_code_object_units(binary).size() : 0;
  if (as_json) {
    json j = entry_json(e);
    j["status"] = check.state == EntryState::Valid ? "ok" : "corrupt";
    if (!check.problem.empty()) j["problem"] = check.problem;
    if (units) j["code_object_units"] = units;
    if (j.contains("target") && !j["target"].get<std::string>().starts_with("cpu") && !j.contains("loader_facts"))
      j["loader_facts"] = "not recorded (no GPU load yet)";
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  const json& m = e.meta.is_object() ? e.meta : json::object();
  auto field = [&](const char* name) { return m.contains(name) ? (m[name].is_string() ? m[name].get<std::string>() : m[name].dump()) : std::string("?"); };
  std::string options;
  for (const json& o : m.value("options", json::array())) options += (options.empty() ? "" : " ") + o.get<std::string>();
  std::string kernels;
  for (const std::string& k : e.kernels()) kernels += (kernels.empty() ? "" : ", ") + k;
  std::printf("key              %s\n", e.item.key.c_str());
  std::printf("entry            %s (%s)\n", e.item.path.string().c_str(), format_byte_size(e.item.bytes).c_str());
  std::printf("source           %s\n", (e.item.path / "source.hip").string().c_str());
  std::printf("code object      %s (%s bytes, sha256 %s)\n", (e.item.path / field("binary")).string().c_str(),
              field("binary_size").c_str(), field("sha256").c_str());
  if (units) std::printf("code objects     %zu units (a module compiled as several units)\n", units);
  std::printf("checksum         %s\n", check.state == EntryState::Valid ? "ok" : ("CORRUPT: " + check.problem).c_str());
  std::printf("target           %s\n", field("target").c_str());
  std::printf("kernels          %s\n", kernels.c_str());
  std::printf("name hint        %s\n", field("name_hint").c_str());
  std::printf("compiler         %s (%s)\n", field("compiler").c_str(), field("compiler_name").c_str());
  std::printf("options          %s\n", options.c_str());
  std::printf("prelude version  %s\n", field("prelude_version").c_str());
  std::printf("hipinductor      %s\n", field("hipinductor_version").c_str());
  std::printf("compile time     %.1f ms\n", e.compile_ms());
  std::printf("created          %s\n", field("created").c_str());
  std::printf("last used        %s\n", timestamp(e.item.last_used).c_str());
  print_facts(m);
  print_tuning(m);
  return 0;
}

// ---- source, disasm ----------------------------------------------------------------------------------------------

int source(const fs::path& dir, const std::string& prefix, bool as_json) {
  EntryView e = find_entry(dir, prefix);
  std::string text;
  if (!read_file(e.item.path / "source.hip", text))
    throw ToolFailure("cannot read " + (e.item.path / "source.hip").string());
  if (as_json)
    std::cout << json{{"key", e.item.key}, {"path", (e.item.path / "source.hip").string()}, {"source", text}}.dump(2)
              << "\n";
  else
    std::cout << text;
  return 0;
}

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string d; std::getline(dirs, d, ':');)
    if (!d.empty() && access((fs::path(d) / program).c_str(), X_OK) == 0) return true;
  return false;
}

int disasm(const fs::path& dir, const std::string& prefix, bool as_json) {
  EntryView e = find_entry(dir, prefix);
  std::vector<char> binary;
  EntryCheck check = check_code_object_entry(e.item.path, &binary);
  if (check.state != EntryState::Valid)
    throw ToolFailure("cache entry " + e.item.path.string() + " is corrupt (" + check.problem + ")");
  Target target = parse_target(e.target());
  fs::path binary_path = e.item.path / e.meta["binary"].get<std::string>();
  std::string text;
  if (target.kind == TargetKind::Amd) {
    text = disassemble_amd_code_object(binary, target);
  } else {
    std::string tool = target.kind == TargetKind::Nvidia ? "cuobjdump" : "objdump";
    if (!on_path(tool))
      throw ToolFailure(tool + " is not on PATH: cannot disassemble the " + target.id() + " code object " +
                        binary_path.string());
    auto disassemble = [&](const fs::path& file) {
      std::vector<std::string> argv = target.kind == TargetKind::Nvidia
                                          ? std::vector<std::string>{tool, "-sass", file.string()}
                                          : std::vector<std::string>{tool, "-d", file.string()};
      ProcessResult r = run_process(argv);
      if (r.exit_code != 0)
        throw ToolFailure(tool + " failed (exit " + std::to_string(r.exit_code) + ") on " + binary_path.string());
      return r.output;
    };
    if (!is_code_object_units(binary)) {
      text = disassemble(binary_path);
    } else {  // a module compiled as several units: each part is a code object the tool reads from a file of its own
      std::vector<CodeObjectUnit> units = unpack_code_object_units(binary);
      TempDirectory parts("hipinductor-cache-disasm-");
      for (size_t p = 0; p < units.size(); ++p) {
        fs::path file = parts.path() / ("unit" + std::to_string(p) + binary_path.extension().string());
        std::ofstream(file, std::ios::binary).write(units[p].binary.data(), long(units[p].binary.size()));
        text += "// code object unit " + std::to_string(p) + " of " + std::to_string(units.size()) + "\n" +
                disassemble(file);
      }
    }
  }
  if (as_json)
    std::cout << json{{"key", e.item.key}, {"target", target.id()}, {"disassembly", text}}.dump(2) << "\n";
  else
    std::cout << text;
  return 0;
}

// ---- stats, verify -----------------------------------------------------------------------------------------------

int stats(const fs::path& dir, bool as_json) {
  struct PerTarget {
    size_t entries = 0, graph_entries = 0;
    uint64_t bytes = 0;
    CacheCounters counters;
  };
  std::map<std::string, PerTarget> by_target;
  size_t entries = 0, graph_entries = 0;
  uint64_t bytes = 0;
  for (const CacheItem& item : scan_cache(dir)) {
    if (!item.owned) continue;
    bytes += item.bytes;
    std::string target = "?";
    if (item.kind == CacheItem::Kind::CodeObject) {
      ++entries;
      target = view_of(item).target();
    } else {
      ++graph_entries;
      std::string payload;
      if (read_checksummed_file(item.path, payload) == ChecksumStatus::Ok) {
        json j = json::parse(payload, nullptr, false);
        if (j.is_object() && j.contains("target") && j["target"].is_string()) target = j["target"].get<std::string>();
      }
    }
    PerTarget& t = by_target[target.empty() ? "?" : target];
    (item.kind == CacheItem::Kind::CodeObject ? t.entries : t.graph_entries)++;
    t.bytes += item.bytes;
  }
  for (const auto& [target, counters] : read_cache_stats(dir)) by_target[target].counters = counters;
  uint64_t max_bytes = CodeObjectCache::max_bytes_from_environment();
  if (as_json) {
    json targets = json::object();
    CacheCounters total;
    for (const auto& [target, t] : by_target) {
      targets[target] = {{"entries", t.entries},          {"graph_entries", t.graph_entries},
                         {"bytes", t.bytes},              {"hits", t.counters.hits},
                         {"misses", t.counters.misses},   {"graph_hits", t.counters.graph_hits},
                         {"graph_misses", t.counters.graph_misses}};
      total.hits += t.counters.hits, total.misses += t.counters.misses;
      total.graph_hits += t.counters.graph_hits, total.graph_misses += t.counters.graph_misses;
    }
    std::cout << json{{"directory", dir.string()}, {"entries", entries}, {"graph_entries", graph_entries},
                      {"bytes", bytes}, {"max_bytes", max_bytes}, {"hits", total.hits}, {"misses", total.misses},
                      {"graph_hits", total.graph_hits}, {"graph_misses", total.graph_misses}, {"targets", targets}}
                     .dump(2)
              << "\n";
    return 0;
  }
  std::printf("cache %s: %zu code-object entries, %zu graph entries, %s of %s (HIPINDUCTOR_CACHE_MAX_SIZE)\n",
              dir.string().c_str(), entries, graph_entries, format_byte_size(bytes).c_str(),
              format_byte_size(max_bytes).c_str());
  std::printf("%-24s %8s %8s %10s %8s %8s %10s %12s\n", "TARGET", "ENTRIES", "GRAPHS", "SIZE", "HITS", "MISSES",
              "GRAPH HITS", "GRAPH MISSES");
  for (const auto& [target, t] : by_target)
    std::printf("%-24s %8zu %8zu %10s %8llu %8llu %10llu %12llu\n", target.c_str(), t.entries, t.graph_entries,
                format_byte_size(t.bytes).c_str(), static_cast<unsigned long long>(t.counters.hits),
                static_cast<unsigned long long>(t.counters.misses),
                static_cast<unsigned long long>(t.counters.graph_hits),
                static_cast<unsigned long long>(t.counters.graph_misses));
  return 0;
}

int verify(const fs::path& dir, bool as_json) {
  json corrupt = json::array(), ignored = json::array(), unread = json::array();
  size_t checked = 0;
  std::vector<CacheProblem> problems;
  std::vector<CacheItem> items = scan_cache(dir, &problems);
  for (const CacheProblem& p : problems) unread.push_back({{"path", p.path.string()}, {"problem", p.problem}});
  for (const CacheItem& item : items) {
    std::string kind = item.kind == CacheItem::Kind::CodeObject ? "code-object" : "graph";
    if (!item.owned) {
      ignored.push_back({{"key", item.key}, {"kind", kind}, {"path", item.path.string()},
                         {"problem", "not owned by the current user"}});
      continue;
    }
    ++checked;
    std::string problem;
    if (item.kind == CacheItem::Kind::CodeObject) {
      std::string source;
      EntryCheck check = check_code_object_entry(item.path, nullptr, nullptr, &source);
      if (check.state == EntryState::Missing) {
        --checked;  // removed while we looked
        continue;
      }
      if (check.state != EntryState::Valid) problem = check.problem;
    } else {
      std::string payload;
      ChecksumStatus status = read_checksummed_file(item.path, payload);
      if (status == ChecksumStatus::Missing) {
        --checked;
        continue;
      }
      if (status == ChecksumStatus::Corrupt) {
        problem = "checksum mismatch";
      } else {  // what load_graph_entry reads before anything else (a payload it cannot read is rebuilt)
        json j = json::parse(payload, nullptr, false);
        if (!j.is_object() || !j.contains("format") || !j["format"].is_string() || !j.contains("target") ||
            !j["target"].is_string() || !j.contains("code_key") || !j["code_key"].is_string())
          problem = "not a graph entry (format, target or code_key missing or not a string)";
      }
    }
    if (!problem.empty())
      corrupt.push_back({{"key", item.key}, {"kind", kind}, {"path", item.path.string()}, {"problem", problem}});
  }
  if (as_json) {
    std::cout << json{{"directory", dir.string()}, {"checked", checked}, {"corrupt", corrupt}, {"ignored", ignored},
                      {"unread", unread}}
                     .dump(2)
              << "\n";
  } else {
    for (const json& c : corrupt)
      std::printf("CORRUPT  %s entry %s (%s): %s\n", c["kind"].get<std::string>().c_str(),
                  c["key"].get<std::string>().c_str(), c["path"].get<std::string>().c_str(),
                  c["problem"].get<std::string>().c_str());
    for (const json& c : ignored)
      std::printf("IGNORED  %s entry %s: %s\n", c["kind"].get<std::string>().c_str(), c["path"].get<std::string>().c_str(),
                  c["problem"].get<std::string>().c_str());
    for (const json& u : unread)
      std::printf("UNREAD   %s: %s\n", u["path"].get<std::string>().c_str(), u["problem"].get<std::string>().c_str());
    std::printf("%zu entries checked, %zu corrupt, %zu directories not read\n", checked, corrupt.size(),
                unread.size());
  }
  return corrupt.empty() && unread.empty() ? 0 : 1;
}

// ---- prune, clear ------------------------------------------------------------------------------------------------

int prune(const fs::path& dir, const std::string& max_size) {
  std::optional<uint64_t> max_bytes = parse_byte_size(max_size);
  if (!max_bytes) throw UsageError("--max-size '" + max_size + "' is not a size (bytes, or e.g. 500M, 2G)");
  std::optional<FileLock> evicting;
  if (fs::is_directory(dir)) evicting = FileLock::acquire(dir / "evict.lock");
  EvictionResult r = evict_cache(dir, *max_bytes);
  std::printf("pruned %zu entries: %s -> %s (limit %s)%s\n", r.removed, format_byte_size(r.bytes_before).c_str(),
              format_byte_size(r.bytes_after).c_str(), format_byte_size(*max_bytes).c_str(),
              r.in_use ? (", " + std::to_string(r.in_use) + " in use kept").c_str() : "");
  return 0;
}

int clear(const fs::path& dir, const std::optional<std::string>& target) {
  std::string wanted = target_id(target);
  size_t removed = 0, in_use = 0;
  for (const CacheItem& item : scan_cache(dir)) {
    if (!item.owned) continue;
    if (!wanted.empty()) {
      std::string entry_target;
      if (item.kind == CacheItem::Kind::CodeObject) {
        entry_target = view_of(item).target();
      } else {
        std::string payload;
        if (read_checksummed_file(item.path, payload) == ChecksumStatus::Ok) {
          json j = json::parse(payload, nullptr, false);
          if (j.is_object() && j.contains("target") && j["target"].is_string())
            entry_target = j["target"].get<std::string>();
        }
      }
      if (!target_matches(entry_target, wanted)) continue;
    }
    if (remove_cache_item(item))
      ++removed;
    else if (fs::exists(item.path))
      ++in_use;
  }
  if (wanted.empty()) {
    remove_stale_temporaries(dir);
    reset_cache_stats(dir);
  }
  std::printf("removed %zu entries%s%s\n", removed, wanted.empty() ? "" : (" for " + wanted).c_str(),
              in_use ? (", " + std::to_string(in_use) + " in use kept").c_str() : "");
  return 0;
}

}  // namespace
}  // namespace hi

int main(int argc, char** argv) {
  CLI::App app{"hipinductor-cache: inspect and maintain hipinductor's on-disk code-object cache (docs/cache.md)"};
  app.require_subcommand(1);
  app.fallthrough();
  std::string cache_dir;
  app.add_option("--cache-dir", cache_dir, "cache directory (default: $HIPINDUCTOR_CACHE_DIR, else ~/.cache/hipinductor)");
  bool as_json = false;
  std::string key, target, kernel, sort = "key", max_size;
  CLI::Option* target_options[2];

  auto* list = app.add_subcommand("list", "list code-object entries");
  target_options[0] =
      list->add_option("--target", target, "only entries for this target (gfx942 matches gfx942:sramecc+:xnack-)");
  list->add_option("--kernel", kernel, "only entries with a kernel whose name contains this text");
  list->add_option("--sort", sort, "key, size (largest first), age (most recently used first), compile-time")
      ->check(CLI::IsMember({"key", "size", "age", "compile-time"}));
  auto* show = app.add_subcommand("show", "metadata, paths and hardware facts of one entry");
  auto* source = app.add_subcommand("source", "print an entry's HIP source");
  auto* disasm = app.add_subcommand("disasm", "disassemble an entry's code object");
  for (CLI::App* c : {show, source, disasm}) c->add_option("key", key, "a cache key or a unique prefix of one")->required();
  auto* stats = app.add_subcommand("stats", "entries, bytes and hits/misses by target");
  auto* verify = app.add_subcommand("verify", "check every entry's checksums; exit 1 when any is corrupt");
  for (CLI::App* c : {list, show, source, disasm, stats, verify}) c->add_flag("--json", as_json, "print JSON");
  auto* prune = app.add_subcommand("prune", "evict least-recently-used entries down to a size");
  prune->add_option("--max-size", max_size, "bytes, or with a suffix: 500M, 2G")->required();
  auto* clear = app.add_subcommand("clear", "remove entries");
  target_options[1] = clear->add_option("--target", target, "only entries for this target");

  // The first word that is not an option (or --cache-dir's value) names the command.
  for (int i = 1; i < argc; ++i) {
    std::string word = argv[i];
    if (word == "--cache-dir") {
      ++i;
      continue;
    }
    if (word.starts_with("-")) continue;
    static const std::set<std::string> kCommands = {"list",   "show",   "source", "disasm",
                                                    "stats",  "verify", "prune",  "clear"};
    if (!kCommands.count(word)) {
      std::cerr << hi::error_line(std::string(hi::kTool) + ": unknown command '" + word +
                                  "' (list, show, source, disasm, stats, verify, prune, clear; see --help)")
                << "\n";
      return 2;
    }
    break;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << hi::error_line(std::string(hi::kTool) + ": " + e.what() + " (see --help)") << "\n";
    return 2;
  }
  try {
    fs::path dir = cache_dir.empty() ? hi::CodeObjectCache::default_directory() : fs::path(cache_dir);
    std::optional<std::string> wanted;  // --target given (even empty: an error, not "every target")
    if (target_options[0]->count() + target_options[1]->count() > 0) wanted = target;
    if (*list) return hi::list(dir, wanted, kernel, sort, as_json);
    if (*show) return hi::show(dir, key, as_json);
    if (*source) return hi::source(dir, key, as_json);
    if (*disasm) return hi::disasm(dir, key, as_json);
    if (*stats) return hi::stats(dir, as_json);
    if (*verify) return hi::verify(dir, as_json);
    if (*prune) return hi::prune(dir, max_size);
    if (*clear) return hi::clear(dir, wanted);
    return 2;
  } catch (const hi::UsageError& e) {
    std::cerr << hi::error_line(std::string(hi::kTool) + ": " + e.what()) << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << hi::error_line(std::string(hi::kTool) + ": " + e.what()) << "\n";
    return 1;
  }
}
