#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>

#include "runtime/cache_files.h"
#include "runtime/cache_inventory.h"
#include "runtime/cache_stats.h"
#include "runtime/code_object_cache.h"
#include "runtime/temp_directory.h"

namespace hi {
namespace {

// A compiler whose "code object" is its input, counting how often it really compiles.
class CountingCompiler final : public Compiler {
 public:
  explicit CountingCompiler(std::string version = "fake 1.0") : version_(std::move(version)) {}
  std::string name() const override { return "fake"; }
  std::string version() const override { return version_; }
  std::vector<std::string> base_options(const Target& target) const override { return {"--target=" + target.id()}; }
  CompiledCode compile(const std::string& source, const std::string&, const Target& target,
                       const std::vector<std::string>& options) override {
    ++compiles;
    if (delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    std::string binary = "BINARY[" + target.id() + "]" + source;
    for (const std::string& option : options) binary += " " + option;
    return {std::vector<char>(binary.begin(), binary.end()), "", 1.5};
  }
  std::atomic<int> compiles = 0;
  int delay_ms = 0;

 private:
  std::string version_;
};

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

class CodeObjectCacheTest : public ::testing::Test {
 protected:
  TempDirectory scratch{"hi-cache-test-"};
  std::filesystem::path root = scratch.path() / "cache";
  CodeObjectCache cache{root};
  Target cpu = parse_target("cpu");
  const std::string source = "extern \"C\" void k() {}";

  CompiledCode compile(Compiler& compiler, bool* hit, const std::string& text = {}, const Target* target = nullptr) {
    return compile_cached(compiler, text.empty() ? source : text, "k", target ? *target : cpu, {"-DX=1"}, "prelude-1",
                          &cache, hit);
  }
  std::string key_for(Compiler& compiler) {
    std::vector<std::string> options = compiler.base_options(cpu);
    options.push_back("-DX=1");
    return CodeObjectCache::cache_key(source, cpu, compiler.name(), compiler.version(), options, "prelude-1");
  }
};

TEST_F(CodeObjectCacheTest, MissThenHit) {
  CountingCompiler compiler;
  bool hit = true;
  CompiledCode first = compile(compiler, &hit);
  EXPECT_FALSE(hit);
  EXPECT_EQ(compiler.compiles, 1);
  EXPECT_DOUBLE_EQ(first.compile_ms, 1.5);
  CompiledCode second = compile(compiler, &hit);
  EXPECT_TRUE(hit);
  EXPECT_EQ(compiler.compiles, 1);
  EXPECT_EQ(second.binary, first.binary);
  EXPECT_EQ(second.compile_ms, 0.0);
  EXPECT_EQ(cache.misses(), 1u);
  EXPECT_EQ(cache.hits(), 1u);

  // A second cache object over the same directory (another process) sees the entry.
  CodeObjectCache other(root);
  EXPECT_TRUE(other.get(key_for(compiler)).has_value());
}

TEST_F(CodeObjectCacheTest, EntryLayoutAndPrivateDirectories) {
  CountingCompiler compiler;
  CompiledCode code = compile(compiler, nullptr);
  std::string key = key_for(compiler);
  std::filesystem::path entry = root / key.substr(0, 2) / key;
  EXPECT_EQ(cache.entry_path(key), entry);
  ASSERT_TRUE(std::filesystem::is_directory(entry));
  EXPECT_EQ(read_text(entry / "kernel.so"), std::string(code.binary.begin(), code.binary.end()));
  EXPECT_EQ(read_text(entry / "source.hip"), source);
  nlohmann::json meta = nlohmann::json::parse(read_text(entry / "meta.json"));
  EXPECT_EQ(meta["name_hint"], "k");
  EXPECT_EQ(meta["target"], "cpu");
  EXPECT_EQ(meta["compiler"], "fake 1.0");
  EXPECT_EQ(meta["compiler_name"], "fake");
  EXPECT_EQ(meta["prelude_version"], "prelude-1");
  EXPECT_EQ(meta["hipinductor_version"], std::string(hipinductor_version()));
  EXPECT_EQ(meta["source_sha256"].get<std::string>().size(), 64u);
  EXPECT_TRUE(meta["kernels"].is_array());
  EXPECT_EQ(meta["options"], (nlohmann::json{"--target=cpu", "-DX=1"}));
  EXPECT_EQ(meta["compile_ms"], 1.5);
  EXPECT_EQ(meta["binary"], "kernel.so");
  EXPECT_EQ(meta["sha256"].get<std::string>().size(), 64u);
  EXPECT_TRUE(meta["created"].get<std::string>().ends_with("Z"));
  for (const std::filesystem::path& dir : {root, root / key.substr(0, 2)}) {
    struct stat info {};
    ASSERT_EQ(stat(dir.c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 0777, 0700u) << dir;
  }
  EXPECT_EQ(CodeObjectCache::binary_extension(parse_target("gfx90a")), "hsaco");
  EXPECT_EQ(CodeObjectCache::binary_extension(parse_target("sm_90")), "cubin");
}

TEST_F(CodeObjectCacheTest, FlippedOrTruncatedBinaryIsDetectedAndRecompiled) {
  CountingCompiler compiler;
  CompiledCode original = compile(compiler, nullptr);
  std::filesystem::path binary_path = cache.entry_path(key_for(compiler)) / "kernel.so";

  std::string bytes = read_text(binary_path);
  bytes[bytes.size() / 2] ^= 0x01;
  std::ofstream(binary_path, std::ios::binary | std::ios::trunc) << bytes;
  bool hit = true;
  CompiledCode recompiled = compile(compiler, &hit);
  EXPECT_FALSE(hit);
  EXPECT_EQ(compiler.compiles, 2);
  EXPECT_EQ(recompiled.binary, original.binary);
  compile(compiler, &hit);
  EXPECT_TRUE(hit) << "the corrupted entry was replaced";

  std::filesystem::resize_file(binary_path, 3);
  compile(compiler, &hit);
  EXPECT_FALSE(hit);
  EXPECT_EQ(compiler.compiles, 3);
  compile(compiler, &hit);
  EXPECT_TRUE(hit);

  std::filesystem::remove(cache.entry_path(key_for(compiler)) / "meta.json");
  compile(compiler, &hit);
  EXPECT_FALSE(hit) << "an entry without meta.json is not trusted";
  EXPECT_EQ(compiler.compiles, 4);
}

TEST_F(CodeObjectCacheTest, EveryInputChangesTheKey) {
  Target gfx90a = parse_target("gfx90a");
  Target gfx942 = parse_target("gfx942:sramecc+:xnack-");
  std::string base = CodeObjectCache::cache_key("src", gfx90a, "hiprtc", "hiprtc 5.7.1", {"-O3"}, "p1");
  EXPECT_EQ(base.size(), 64u);
  EXPECT_EQ(base, CodeObjectCache::cache_key("src", gfx90a, "hiprtc", "hiprtc 5.7.1", {"-O3"}, "p1"));
  EXPECT_NE(base, CodeObjectCache::cache_key("src", gfx942, "hiprtc", "hiprtc 5.7.1", {"-O3"}, "p1"));
  EXPECT_NE(base, CodeObjectCache::cache_key("src", parse_target("gfx942:sramecc-:xnack-"), "hiprtc",
                                             "hiprtc 5.7.1", {"-O3"}, "p1"));
  EXPECT_NE(base, CodeObjectCache::cache_key("src", gfx90a, "hiprtc", "hiprtc 5.7.2", {"-O3"}, "p1"));
  EXPECT_NE(base, CodeObjectCache::cache_key("src", gfx90a, "other", "hiprtc 5.7.1", {"-O3"}, "p1"));
  EXPECT_NE(base, CodeObjectCache::cache_key("src", gfx90a, "hiprtc", "hiprtc 5.7.1", {"-O2"}, "p1"));
  EXPECT_NE(base, CodeObjectCache::cache_key("src", gfx90a, "hiprtc", "hiprtc 5.7.1", {"-O3"}, "p2"));
  EXPECT_NE(base, CodeObjectCache::cache_key("src2", gfx90a, "hiprtc", "hiprtc 5.7.1", {"-O3"}, "p1"));
  // Length prefixes: moving text between adjacent fields gives a different key.
  EXPECT_NE(CodeObjectCache::cache_key("src", gfx90a, "hiprtc", "v", {"-a", "b"}, "p1"),
            CodeObjectCache::cache_key("src", gfx90a, "hiprtc", "v", {"-ab"}, "p1"));

  // Through compile_cached: another compiler version or target compiles again.
  CountingCompiler v1("fake 1.0"), v2("fake 2.0");
  bool hit = false;
  compile(v1, &hit);
  compile(v2, &hit);
  EXPECT_FALSE(hit);
  EXPECT_EQ(v2.compiles, 1);
  Target wide = parse_target("cpu-w64");
  compile(v1, &hit, {}, &wide);
  EXPECT_FALSE(hit);
  EXPECT_EQ(v1.compiles, 2);
}

TEST_F(CodeObjectCacheTest, LeftoverTempDirOrPartialEntryIsNeverTrusted) {
  CountingCompiler compiler;
  std::string key = key_for(compiler);
  std::filesystem::path shard = root / key.substr(0, 2);
  // A writer that died before its rename: a staging dir with a partial entry.
  std::filesystem::create_directories(shard / (".tmp-" + key + "-crash1"));
  std::ofstream(shard / (".tmp-" + key + "-crash1") / "kernel.so") << "partial";
  EXPECT_FALSE(cache.get(key).has_value());
  // A non-atomic writer's half-written entry in the final place: binary, no meta.json.
  std::filesystem::create_directories(shard / key);
  std::ofstream(shard / key / "kernel.so") << "partial";
  EXPECT_FALSE(cache.get(key).has_value());

  bool hit = true;
  CompiledCode code = compile(compiler, &hit);
  EXPECT_FALSE(hit);
  std::optional<std::vector<char>> cached = cache.get(key);
  ASSERT_TRUE(cached.has_value());
  EXPECT_EQ(*cached, code.binary);
  // Only the published entry, its lock file, the crashed writer's leftovers, and no staging or trash dir of ours.
  for (const auto& item : std::filesystem::directory_iterator(shard)) {
    std::string name = item.path().filename();
    EXPECT_TRUE(name == key || name == key + ".lock" || name == ".tmp-" + key + "-crash1") << "unexpected " << name;
  }
  // Leftovers are swept once old enough (a live writer's staging dir is young).
  EXPECT_EQ(remove_stale_temporaries(root), 0u);
  std::filesystem::last_write_time(shard / (".tmp-" + key + "-crash1"),
                                   std::filesystem::file_time_type::clock::now() - std::chrono::hours(1));
  EXPECT_EQ(remove_stale_temporaries(root), 1u);
  EXPECT_FALSE(std::filesystem::exists(shard / (".tmp-" + key + "-crash1")));
}

TEST_F(CodeObjectCacheTest, KeepsAnIntactEntryPublishedByAnotherWriter) {
  CountingCompiler compiler;
  std::string key = key_for(compiler);
  std::vector<char> first = {'o', 'n', 'e'};
  std::vector<char> second = {'t', 'w', 'o'};
  CacheEntryInfo info;
  info.name_hint = "k";
  info.target = cpu;
  info.compiler = "fake 1.0";
  cache.put(key, first, source, info);
  cache.put(key, second, source, info);
  EXPECT_EQ(*cache.get(key), first);
}

TEST_F(CodeObjectCacheTest, RejectsMalformedKeys) {
  EXPECT_THROW(cache.get("../../etc"), std::invalid_argument);
  EXPECT_THROW(cache.get(std::string(64, 'G')), std::invalid_argument);
}

TEST(CodeObjectCacheDirectory, FollowsTheEnvironment) {
  auto saved = [](const char* name) -> std::optional<std::string> {
    const char* value = std::getenv(name);
    return value ? std::optional<std::string>(value) : std::nullopt;
  };
  std::optional<std::string> cache_dir = saved("HIPINDUCTOR_CACHE_DIR"), xdg = saved("XDG_CACHE_HOME"),
                             home = saved("HOME");
  setenv("HIPINDUCTOR_CACHE_DIR", "/explicit/dir", 1);
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  setenv("HOME", "/home/someone", 1);
  EXPECT_EQ(CodeObjectCache::default_directory(), "/explicit/dir");
  unsetenv("HIPINDUCTOR_CACHE_DIR");
  EXPECT_EQ(CodeObjectCache::default_directory(), "/xdg/hipinductor");
  unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(CodeObjectCache::default_directory(), "/home/someone/.cache/hipinductor");
  auto restore = [](const char* name, const std::optional<std::string>& value) {
    if (value) setenv(name, value->c_str(), 1);
    else unsetenv(name);
  };
  restore("HIPINDUCTOR_CACHE_DIR", cache_dir);
  restore("XDG_CACHE_HOME", xdg);
  restore("HOME", home);
}

TEST(CodeObjectCacheWithHostCompiler, SecondCompileIsAHit) {
  TempDirectory scratch("hi-cache-host-");
  CodeObjectCache cache(scratch.path());
  Target cpu = parse_target("cpu");
  std::unique_ptr<Compiler> compiler = compiler_for(cpu);
  std::string source = "extern \"C\" int seven() { return 7; }\n";
  bool hit = true;
  CompiledCode first = compile_cached(*compiler, source, "seven", cpu, {}, "p", &cache, &hit);
  EXPECT_FALSE(hit);
  CompiledCode second = compile_cached(*compiler, source, "seven", cpu, {}, "p", &cache, &hit);
  EXPECT_TRUE(hit);
  EXPECT_EQ(first.binary, second.binary);
  std::cout << "[ info ] host compile " << first.compile_ms << " ms; cache hit returned in well under that\n";
}

TEST_F(CodeObjectCacheTest, CorruptEntryIsReportedOnceNamingIt) {
  CountingCompiler compiler;
  compile(compiler, nullptr);
  std::filesystem::path entry = cache.entry_path(key_for(compiler));
  auto flip = [&] {
    std::string bytes = read_text(entry / "kernel.so");
    bytes[0] ^= 0x40;
    std::ofstream(entry / "kernel.so", std::ios::binary | std::ios::trunc) << bytes;
  };
  flip();
  testing::internal::CaptureStderr();
  bool hit = true;
  compile(compiler, &hit);
  std::string first = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(hit);
  EXPECT_NE(first.find(entry.string()), std::string::npos) << first;
  EXPECT_NE(first.find("kernel.so: sha256 mismatch"), std::string::npos) << first;
  EXPECT_EQ(std::count(first.begin(), first.end(), '\n'), 1) << "reported once, not per lookup: " << first;
  EXPECT_EQ(check_code_object_entry(entry).state, EntryState::Valid) << "rebuilt";

  flip();  // the same entry again: not reported a second time by this process, still rebuilt
  testing::internal::CaptureStderr();
  compile(compiler, &hit);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_FALSE(hit);
  EXPECT_EQ(compiler.compiles, 3);
}

TEST_F(CodeObjectCacheTest, ConcurrentCompilesOfOneKeyCompileOnce) {
  CountingCompiler compiler;
  compiler.delay_ms = 300;
  std::vector<std::thread> threads;
  std::atomic<int> hits = 0;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] {
      bool hit = false;
      compile(compiler, &hit);
      hits += hit;
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(compiler.compiles, 1) << "the others waited on the key's lock and reused the entry";
  EXPECT_EQ(hits, 3);
  EXPECT_TRUE(std::filesystem::exists(cache.lock_path(key_for(compiler))));
}

TEST_F(CodeObjectCacheTest, StatsPersistAcrossProcesses) {
  CountingCompiler compiler;
  compile(compiler, nullptr);
  compile(compiler, nullptr);
  compile(compiler, nullptr);
  std::map<std::string, CacheCounters> stats = read_cache_stats(root);
  ASSERT_TRUE(stats.count("cpu"));
  EXPECT_EQ(stats["cpu"].misses, 1u);
  EXPECT_EQ(stats["cpu"].hits, 2u);
  reset_cache_stats(root);
  EXPECT_TRUE(read_cache_stats(root).empty());
}

TEST(CacheSizes, ParseAndFormat) {
  EXPECT_EQ(parse_byte_size("2147483648"), uint64_t(2) << 30);
  EXPECT_EQ(parse_byte_size("500M"), uint64_t(500) << 20);
  EXPECT_EQ(parse_byte_size("2G"), uint64_t(2) << 30);
  EXPECT_EQ(parse_byte_size("2g"), uint64_t(2) << 30);
  EXPECT_EQ(parse_byte_size("1.5GiB"), uint64_t(3) << 29);
  EXPECT_EQ(parse_byte_size("64KB"), uint64_t(64) << 10);
  EXPECT_EQ(parse_byte_size("12B"), 12u);
  for (const char* bad : {"", "-1", "M", "5X", "1.5", "2GG", "1e9", "99999999999999999999", "20000000T"})
    EXPECT_FALSE(parse_byte_size(bad).has_value()) << bad;
  EXPECT_EQ(format_byte_size(37), "37 B");
  EXPECT_EQ(format_byte_size(uint64_t(3) << 29), "1.5 GiB");

  setenv("HIPINDUCTOR_CACHE_MAX_SIZE", "500M", 1);
  EXPECT_EQ(CodeObjectCache::max_bytes_from_environment(), uint64_t(500) << 20);
  setenv("HIPINDUCTOR_CACHE_MAX_SIZE", "lots", 1);
  EXPECT_EQ(CodeObjectCache::max_bytes_from_environment(), CodeObjectCache::kDefaultMaxBytes);
  unsetenv("HIPINDUCTOR_CACHE_MAX_SIZE");
  EXPECT_EQ(CodeObjectCache::max_bytes_from_environment(), CodeObjectCache::kDefaultMaxBytes);
}

TEST_F(CodeObjectCacheTest, SizeCapEvictsLeastRecentlyUsed) {
  CountingCompiler compiler;
  std::vector<std::string> keys;
  for (int i = 0; i < 4; ++i) {
    std::string text = source + " // " + std::to_string(i) + std::string(4000, ' ');
    compile(compiler, nullptr, text);
    std::vector<std::string> options = compiler.base_options(cpu);
    options.push_back("-DX=1");
    keys.push_back(CodeObjectCache::cache_key(text, cpu, compiler.name(), compiler.version(), options, "prelude-1"));
    // Entries used at distinct, increasing times: 0 is the least recently used.
    auto when = std::filesystem::file_time_type::clock::now() - std::chrono::hours(10 - i);
    std::filesystem::last_write_time(cache.entry_path(keys.back()), when);
  }
  // A hit makes entry 0 the most recently used.
  ASSERT_TRUE(cache.get(keys[0]).has_value());
  std::vector<CacheItem> items = scan_cache(root);
  ASSERT_EQ(items.size(), 4u);
  uint64_t entry_bytes = items[0].bytes;
  EXPECT_GT(entry_bytes, 8000u);  // source + binary + meta

  cache.set_max_bytes(entry_bytes * 2 + entry_bytes / 2);  // room for two
  EXPECT_EQ(cache.enforce_size_cap(), 2u);
  EXPECT_TRUE(cache.get(keys[0]).has_value()) << "recently hit: kept";
  EXPECT_FALSE(cache.get(keys[1]).has_value()) << "least recently used: evicted";
  EXPECT_FALSE(cache.get(keys[2]).has_value());
  EXPECT_TRUE(cache.get(keys[3]).has_value());
  EXPECT_FALSE(std::filesystem::exists(cache.lock_path(keys[1])));

  // An entry whose lock is held (being compiled or published) is never evicted.
  FileLock held = cache.lock_entry(keys[3]);
  EvictionResult r = evict_cache(root, 0);
  EXPECT_EQ(r.removed, 1u);
  EXPECT_EQ(r.in_use, 1u);
  EXPECT_TRUE(cache.get(keys[3]).has_value());
}

TEST_F(CodeObjectCacheTest, PutEnforcesTheCapFromTheEnvironment) {
  setenv("HIPINDUCTOR_CACHE_MAX_SIZE", "1", 1);
  CodeObjectCache tiny(root);
  unsetenv("HIPINDUCTOR_CACHE_MAX_SIZE");
  EXPECT_EQ(tiny.max_bytes(), 1u);
  CountingCompiler compiler;
  compile_cached(compiler, source, "k", cpu, {}, "p", &tiny);
  compile_cached(compiler, source + " ", "k", cpu, {}, "p", &tiny);
  // Each put evicts what it can; the entry being published is locked by its writer, so at most one stays.
  EXPECT_LE(scan_cache(root).size(), 1u);
}

TEST_F(CodeObjectCacheTest, LoaderFactsAreRecordedOncePerKernel) {
  CountingCompiler compiler;
  compile(compiler, nullptr);
  std::string key = key_for(compiler);
  EXPECT_FALSE(nlohmann::json::parse(read_text(cache.entry_path(key) / "meta.json")).contains("loader_facts"));
  EXPECT_FALSE(cache.record_loader_facts(key, {}));
  EXPECT_TRUE(cache.record_loader_facts(key, {GpuKernelFacts{"k", 40, 1024, 0, 1024}}));
  EXPECT_FALSE(cache.record_loader_facts(key, {GpuKernelFacts{"k", 99, 0, 0, 0}})) << "kept the first";
  // Another graph loading a unit it shares (compile_graphs) adds its own kernels.
  EXPECT_TRUE(cache.record_loader_facts(key, {GpuKernelFacts{"k", 99, 0, 0, 0}, GpuKernelFacts{"k2", 32, 0, 0, 256}}));
  nlohmann::json meta = nlohmann::json::parse(read_text(cache.entry_path(key) / "meta.json"));
  ASSERT_TRUE(meta.contains("loader_facts"));
  ASSERT_EQ(meta["loader_facts"]["kernels"].size(), 2u);
  EXPECT_EQ(meta["loader_facts"]["kernels"][0]["registers"], 40);
  EXPECT_EQ(meta["loader_facts"]["kernels"][1]["name"], "k2");
  EXPECT_EQ(check_code_object_entry(cache.entry_path(key)).state, EntryState::Valid);
  EXPECT_TRUE(cache.get(key).has_value());
}

TEST_F(CodeObjectCacheTest, GraphEntriesAreChecksummed) {
  std::string key(64, 'a');
  EXPECT_FALSE(cache.get_graph_entry(key).has_value());
  cache.put_graph_entry(key, "{\"x\": 1}\n");
  EXPECT_EQ(cache.get_graph_entry(key), "{\"x\": 1}\n");
  std::filesystem::path path = cache.graph_entry_path(key);
  std::string text = read_text(path);
  text[text.size() - 3] = '2';
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  testing::internal::CaptureStderr();
  EXPECT_FALSE(cache.get_graph_entry(key).has_value());
  std::string warning = testing::internal::GetCapturedStderr();
  EXPECT_NE(warning.find(path.string()), std::string::npos) << warning;
  cache.put_graph_entry(key, "{}\n");
  EXPECT_EQ(cache.get_graph_entry(key), "{}\n");
}

TEST_F(CodeObjectCacheTest, EntriesOfAnotherUserAreIgnored) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to chown an entry to another user";
  CountingCompiler compiler;
  compile(compiler, nullptr);
  std::filesystem::path entry = cache.entry_path(key_for(compiler));
  for (const char* file : {"", "kernel.so", "meta.json", "source.hip"})
    ASSERT_EQ(chown((entry / file).c_str(), 4242, 4242), 0);
  testing::internal::CaptureStderr();
  bool hit = true;
  compile(compiler, &hit);
  std::string warning = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(hit);
  EXPECT_NE(warning.find("ignored"), std::string::npos) << warning;
  EXPECT_EQ(check_code_object_entry(entry).state, EntryState::Valid) << "replaced by one of ours";
}

TEST(CacheFiles, LockIsExclusiveAndSurvivesRemoval) {
  TempDirectory scratch("hi-lock-test-");
  std::filesystem::path path = scratch.path() / "k.lock";
  std::optional<FileLock> first = FileLock::try_acquire(path);
  ASSERT_TRUE(first.has_value());
  EXPECT_FALSE(FileLock::try_acquire(path).has_value());
  std::atomic<bool> acquired = false;
  std::thread waiter([&] {
    FileLock second = FileLock::acquire(path);
    acquired = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(acquired);
  first->remove_file();  // the remover deletes the lock file while holding it
  first.reset();
  waiter.join();
  EXPECT_TRUE(acquired) << "the waiter retried on the new lock file";
}

}  // namespace
}  // namespace hi
