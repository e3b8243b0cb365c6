// Cache invariants (docs/cache.md, "Validation"): nothing outside the cache directory is read as an entry, written
// through or deleted, however its shard directories are replaced with symbolic links; every entry file is validated
// on read and rebuilt when bad (source.hip, meta.json fields of the wrong type); scans report the directories they
// could not enter.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "runtime/cache_entry_meta.h"
#include "runtime/cache_files.h"
#include "runtime/cache_inventory.h"
#include "runtime/code_object_cache.h"
#include "runtime/temp_directory.h"

namespace hi {
namespace {

namespace fs = std::filesystem;

/// A compiler whose "code object" is its input, counting its compiles.
class EchoCompiler final : public Compiler {
 public:
  std::string name() const override { return "echo"; }
  std::string version() const override { return "echo 1"; }
  std::vector<std::string> base_options(const Target&) const override { return {}; }
  CompiledCode compile(const std::string& source, const std::string&, const Target&,
                       const std::vector<std::string>&) override {
    ++compiles;
    return {std::vector<char>(source.begin(), source.end()), "", 1.0};
  }
  int compiles = 0;
};

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_text(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

class CacheSafetyTest : public ::testing::Test {
 protected:
  TempDirectory scratch{"hi-cache-safety-"};
  fs::path root = scratch.path() / "cache";
  fs::path outside = scratch.path() / "outside";
  CodeObjectCache cache{root};
  EchoCompiler compiler;
  Target cpu = parse_target("cpu");

  std::string compile(const std::string& source, bool* hit = nullptr) {
    std::string key;
    compile_cached(compiler, source, "k", cpu, {}, "p1", &cache, hit, &key);
    return key;
  }
  std::string key_of(const std::string& source) {
    return CodeObjectCache::cache_key(source, cpu, compiler.name(), compiler.version(), {}, "p1");
  }
  /// Moves the directory `dir` of the cache to `outside` and leaves a symbolic link to it in its place.
  void replace_with_link(const fs::path& dir) {
    fs::rename(dir, outside);
    fs::create_directory_symlink(outside, dir);
  }
  size_t files_outside() {
    size_t n = 0;
    for (const auto& entry : fs::recursive_directory_iterator(outside)) n += entry.is_regular_file();
    return n;
  }
};

TEST_F(CacheSafetyTest, ASymlinkedShardIsNeitherReadNorWrittenNorCleared) {
  std::string key = compile("void a() {}");
  fs::path shard = cache.entry_path(key).parent_path();
  replace_with_link(shard);
  size_t before = files_outside();
  ASSERT_GT(before, 0u);

  // Readers: the entry behind the link is not ours to trust; the compile goes on (without the cache).
  EXPECT_FALSE(cache.get(key).has_value());
  bool hit = true;
  compile("void a() {}", &hit);
  EXPECT_FALSE(hit);
  EXPECT_EQ(compiler.compiles, 2);
  CacheEntryInfo info;
  info.name_hint = "k";
  info.target = cpu;
  EXPECT_THROW(cache.put(key, {'x'}, "void a() {}", info), std::runtime_error);
  EXPECT_THROW(cache.lock_entry(key), std::runtime_error);

  // Scans list nothing behind the link and report it; eviction and removal of temporaries delete nothing there.
  std::vector<CacheProblem> problems;
  EXPECT_TRUE(scan_cache(root, &problems).empty());
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].path, shard);
  EXPECT_NE(problems[0].problem.find("symbolic link"), std::string::npos) << problems[0].problem;
  fs::create_directory(outside / ".tmp-left-behind");
  struct timespec old[2] = {{0, 0}, {0, 0}};
  utimensat(AT_FDCWD, (outside / ".tmp-left-behind").c_str(), old, 0);
  evict_cache(root, 0);
  EXPECT_EQ(files_outside(), before);
  EXPECT_TRUE(fs::exists(outside / ".tmp-left-behind"));
}

TEST_F(CacheSafetyTest, ASymlinkedGraphsDirectoryIsNeitherReadNorWrittenNorCleared) {
  std::string key = key_of("graph");
  cache.put_graph_entry(key, "{\"graph\": 1}");
  ASSERT_TRUE(cache.get_graph_entry(key).has_value());
  replace_with_link(root / "graphs");
  EXPECT_FALSE(cache.get_graph_entry(key).has_value());
  EXPECT_THROW(cache.put_graph_entry(key, "{\"graph\": 2}"), std::runtime_error);
  std::vector<CacheProblem> problems;
  EXPECT_TRUE(scan_cache(root, &problems).empty());
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].path, root / "graphs");
  evict_cache(root, 0);
  EXPECT_EQ(files_outside(), 1u);
  EXPECT_NE(read_text(outside / key.substr(0, 2) / (key + ".json")).find("\"graph\": 1"), std::string::npos);
}

TEST_F(CacheSafetyTest, ASymlinkedShardInsideGraphsIsNotFollowed) {
  std::string key = key_of("graph");
  cache.put_graph_entry(key, "{}");
  replace_with_link(cache.graph_entry_path(key).parent_path());
  EXPECT_FALSE(cache.get_graph_entry(key).has_value());
  std::vector<CacheProblem> problems;
  EXPECT_TRUE(scan_cache(root, &problems).empty());
  EXPECT_EQ(problems.size(), 1u);
  evict_cache(root, 0);
  EXPECT_EQ(files_outside(), 1u);
}

TEST_F(CacheSafetyTest, ACorruptSourceIsRebuilt) {
  const std::string source = "void b() {}";
  std::string key = compile(source);
  fs::path file = cache.entry_path(key) / "source.hip";
  write_text(file, "void b() { damaged }");
  std::string read_back;
  EXPECT_FALSE(cache.get(key, true, &read_back).has_value());  // what a warm start through a graph entry reads
  EXPECT_EQ(check_code_object_entry(cache.entry_path(key), nullptr, nullptr, &read_back).problem,
            "source.hip: sha256 mismatch");
  bool hit = true;
  compile(source, &hit);
  EXPECT_FALSE(hit);
  EXPECT_EQ(compiler.compiles, 2);
  EXPECT_EQ(read_text(file), source);
  ASSERT_TRUE(cache.get(key, true, &read_back).has_value());
  EXPECT_EQ(read_back, source);
  compile(source, &hit);
  EXPECT_TRUE(hit);
}

TEST_F(CacheSafetyTest, AMissingSourceIsRebuilt) {
  std::string key = compile("void c() {}");
  fs::remove(cache.entry_path(key) / "source.hip");
  bool hit = true;
  compile("void c() {}", &hit);
  EXPECT_FALSE(hit);
  EXPECT_EQ(read_text(cache.entry_path(key) / "source.hip"), "void c() {}");
}

TEST_F(CacheSafetyTest, MetadataOfTheWrongTypeIsCorruptAndRebuilt) {
  const std::string source = "void d() {}";
  std::string key = compile(source);
  fs::path meta_file = cache.entry_path(key) / "meta.json";
  const nlohmann::json good = nlohmann::json::parse(read_text(meta_file));
  ASSERT_EQ(entry_metadata_problem(good), "");
  struct Case {
    const char* change;
    const char* problem;
  };
  const Case cases[] = {
      {R"({"target": 42})", "field 'target' is not a string"},
      {R"({"kernels": [1, 2]})", "field 'kernels' is not an array of strings"},
      {R"({"options": "-O3"})", "field 'options' is not an array of strings"},
      {R"({"compile_ms": "fast"})", "field 'compile_ms' is not a number"},
      {R"({"binary_size": -1})", "field 'binary_size' is not a non-negative integer"},
      {R"({"created": 7})", "field 'created' is not a string"},
      {R"({"hardware_facts": {"kernels": [{"name": "k", "vgprs": "many"}]}})", "field 'vgprs' is not an integer"},
      {R"({"loader_facts": {"kernels": "none"}})", "field 'kernels' is not an array"},
      {R"({"tuning": {"dev": {"kernels": {"k": {"grid": "8"}}}}})", "field 'grid' is not a non-negative integer"},
      {R"({"tuning": {"dev": {"kernels": {"k": {"grid": 8, "ms": {"8": "slow"}}}}}})", "is not a number"},
  };
  for (const Case& c : cases) {
    nlohmann::json meta = good;
    meta.merge_patch(nlohmann::json::parse(c.change));
    std::string problem = entry_metadata_problem(meta);
    EXPECT_NE(problem.find(c.problem), std::string::npos) << c.change << " -> " << problem;
    write_text(meta_file, meta.dump());
    EntryCheck check = check_code_object_entry(cache.entry_path(key));
    EXPECT_EQ(check.state, EntryState::Corrupt) << c.change;
    EXPECT_EQ(check.problem, problem);
  }
  nlohmann::json missing = good;
  missing.erase("source_sha256");
  EXPECT_EQ(entry_metadata_problem(missing), "meta.json: field 'source_sha256' is missing");
  // The last bad one is rebuilt by the next compile of its source.
  int before = compiler.compiles;
  bool hit = true;
  compile(source, &hit);
  EXPECT_FALSE(hit);
  EXPECT_EQ(compiler.compiles, before + 1);
  EXPECT_EQ(check_code_object_entry(cache.entry_path(key)).state, EntryState::Valid);
}

TEST_F(CacheSafetyTest, ScansReportShardsThatAreNotDirectories) {
  compile("void e() {}");
  fs::create_directories(root);
  write_text(root / "ff", "a file where a shard directory belongs");
  std::vector<CacheProblem> problems;
  EXPECT_EQ(scan_cache(root, &problems).size(), 1u);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].path, root / "ff");
  EXPECT_NE(problems[0].problem.find("not a directory"), std::string::npos);
}

TEST(ForeignDirectoryProblem, NamesTheFirstComponentThatIsNotOurs) {
  TempDirectory scratch("hi-foreign-");
  fs::path root = scratch.path();
  fs::create_directories(root / "graphs" / "ab");
  EXPECT_EQ(foreign_directory_problem(root, root / "graphs" / "ab"), "");
  EXPECT_EQ(foreign_directory_problem(root, root / "graphs" / "cd"), "");  // not there yet: a writer creates it
  fs::create_directory_symlink(root / "graphs" / "ab", root / "graphs" / "ef");
  EXPECT_EQ(foreign_directory_problem(root, root / "graphs" / "ef"),
            (root / "graphs" / "ef").string() + " is a symbolic link (not followed)");
  // The root itself may be a link (a cache directory kept elsewhere).
  fs::create_directory_symlink(root / "graphs", root / "linked-root");
  EXPECT_EQ(foreign_directory_problem(root / "linked-root", root / "linked-root" / "ab"), "");
}

}  // namespace
}  // namespace hi
