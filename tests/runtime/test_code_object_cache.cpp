#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

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
    std::string binary = "BINARY[" + target.id() + "]" + source;
    for (const std::string& option : options) binary += " " + option;
    return {std::vector<char>(binary.begin(), binary.end()), "", 1.5};
  }
  int compiles = 0;

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
  // Only the published entry, the crashed writer's leftovers, and no staging or trash dir of ours.
  for (const auto& item : std::filesystem::directory_iterator(shard)) {
    std::string name = item.path().filename();
    EXPECT_TRUE(name == key || name == ".tmp-" + key + "-crash1") << "unexpected " << name;
  }
}

TEST_F(CodeObjectCacheTest, KeepsAnIntactEntryPublishedByAnotherWriter) {
  CountingCompiler compiler;
  std::string key = key_for(compiler);
  std::vector<char> first = {'o', 'n', 'e'};
  std::vector<char> second = {'t', 'w', 'o'};
  CacheEntryInfo info{"k", cpu, "fake 1.0", {}, 1.0};
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

}  // namespace
}  // namespace hi
