// The fuzzers' inputs (tests/fuzz): the seed corpus stays valid as the format evolves (a seed the reader rejects only
// exercises its first checks), and the dictionary keeps up with the op table, so mutations can splice in any op.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "frontend/graph_json.h"
#include "ir/dtype.h"
#include "lowering/op_registry.h"

namespace hi {
namespace {

namespace fs = std::filesystem;

const fs::path kFuzz = fs::path(HI_SOURCE_DIR) / "tests" / "fuzz";

/// The dictionary's values: each line `name="value"` or `"value"`, value with C escapes (only \" and \\ used here).
std::set<std::string> dictionary_values() {
  std::ifstream in(kFuzz / "graph.dict");
  std::set<std::string> values;
  for (std::string line; std::getline(in, line);) {
    size_t open = line.find('"');
    if (line.empty() || line[0] == '#' || open == std::string::npos || line.back() != '"') continue;
    std::string value;
    for (size_t i = open + 1; i + 1 < line.size(); ++i) {
      if (line[i] == '\\' && i + 2 < line.size()) ++i;
      value += line[i];
    }
    values.insert(value);
  }
  return values;
}

TEST(FuzzInputs, EverySeedReadsAsAGraph) {
  int seeds = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(kFuzz / "corpus")) {
    SCOPED_TRACE(e.path().string());
    EXPECT_NO_THROW(load_graph_file(e.path().string()));
    ++seeds;
  }
  EXPECT_GE(seeds, 20);
}

TEST(FuzzInputs, DictionaryHoldsEveryOpAndDtype) {
  std::set<std::string> values = dictionary_values();
  ASSERT_FALSE(values.empty()) << (kFuzz / "graph.dict");
  std::string missing;
  for (const OpSchema& s : all_op_schemas())
    if (!values.count("\"" + s.qualified_name + "\"")) missing += "\"\\\"" + s.qualified_name + "\\\"\"\n";
  for (int t = 0; t <= static_cast<int>(DType::Float64); ++t) {
    std::string name(dtype_name(static_cast<DType>(t)));
    if (!values.count("\"" + name + "\"")) missing += "\"\\\"" + name + "\\\"\"\n";
  }
  EXPECT_TRUE(missing.empty()) << "tests/fuzz/graph.dict lacks these lines:\n" << missing;
}

}  // namespace
}  // namespace hi
