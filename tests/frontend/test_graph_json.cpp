#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "frontend/graph_json.h"
#include "frontend/index_text.h"
#include "ir/op_schema.h"

namespace hi {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

const std::string kExamples = std::string(HI_SOURCE_DIR) + "/examples";
const std::string kData = std::string(HI_SOURCE_DIR) + "/tests/frontend/data";

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> example_files() {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(kExamples)) {
    if (e.path().extension() == ".json") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

bool same_meta(const TensorMeta& a, const TensorMeta& b) {
  return a.dtype == b.dtype && a.sizes == b.sizes && a.strides == b.strides && a.offset == b.offset;
}

void expect_same_graph(const Graph& a, const Graph& b) {
  ASSERT_EQ(a.nodes.size(), b.nodes.size());
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    const Node& x = a.nodes[i];
    const Node& y = b.nodes[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(x.target, y.target);
    EXPECT_TRUE(x.args.size() == y.args.size() &&
                std::equal(x.args.begin(), x.args.end(), y.args.begin(),
                           [](const Arg& p, const Arg& q) { return p.value == q.value; }))
        << x.name;
    ASSERT_EQ(x.kwargs.size(), y.kwargs.size()) << x.name;
    for (size_t k = 0; k < x.kwargs.size(); ++k) {
      EXPECT_EQ(x.kwargs[k].first, y.kwargs[k].first);
      EXPECT_TRUE(x.kwargs[k].second.value == y.kwargs[k].second.value) << x.name << " " << x.kwargs[k].first;
    }
    ASSERT_EQ(x.outputs.size(), y.outputs.size()) << x.name;
    for (size_t k = 0; k < x.outputs.size(); ++k) EXPECT_TRUE(same_meta(x.outputs[k], y.outputs[k])) << x.name;
  }
  EXPECT_EQ(a.outputs, b.outputs);
}

std::string error_of(const std::string& text) {
  try {
    read_graph_json(text, "g.json");
  } catch (const GraphFormatError& e) {
    return e.what();
  }
  return "(no GraphFormatError)";
}

/// A small valid graph as JSON, to mutate in error tests.
Json base_graph() {
  return Json::parse(R"({"format": "hipinductor-graph", "version": 1,
    "nodes": [
      {"name": "x", "op": "placeholder", "meta": {"dtype": "float32", "sizes": [8, 64], "strides": [64, 1], "offset": 0}},
      {"name": "add", "op": "aten.add.Tensor", "args": [{"ref": "x"}, {"ref": "x"}], "kwargs": {"alpha": 1},
       "meta": {"dtype": "float32", "sizes": [8, 64], "strides": [64, 1]}},
      {"name": "sum", "op": "aten.sum.dim_IntList", "args": [{"ref": "add"}, [1], true],
       "meta": {"dtype": "float32", "sizes": [8, 1]}}
    ],
    "outputs": [{"ref": "sum"}]})");
}

std::string error_of(const Json& doc) { return error_of(doc.dump()); }

// --- examples and round trips ----------------------------------------------------------------------------------------

TEST(GraphJson, ExamplesLoadAndRoundTrip) {
  std::vector<std::string> files = example_files();
  ASSERT_GE(files.size(), 4u);
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    Graph g = load_graph_file(path);
    EXPECT_TRUE(verify_graph(g).empty());
    std::string text = write_graph_json(g);
    Graph again = read_graph_json(text, "written");
    expect_same_graph(g, again);
    EXPECT_EQ(write_graph_json(again), text);
  }
}

// The writer and tools/export_examples.py lay files out the same way, so a bundled example is its own golden file.
TEST(GraphJson, WriterReproducesExampleFilesExactly) {
  for (const std::string& path : example_files()) {
    EXPECT_EQ(write_graph_json(load_graph_file(path)), slurp(path)) << path;
  }
  std::string traced = kData + "/dynamic_softmax.json";  // make_fx(tracing_mode="symbolic")
  EXPECT_EQ(write_graph_json(load_graph_file(traced)), slurp(traced));
}

TEST(GraphJson, LayerNormGeluResidualExample) {
  Graph g = load_graph_file(kExamples + "/layernorm_gelu_residual.json");
  int ln = g.find("native_layer_norm");
  ASSERT_GE(ln, 0);
  ASSERT_EQ(g.nodes[ln].outputs.size(), 3u);
  EXPECT_EQ(g.nodes[ln].outputs[1].sizes, (std::vector<Index>{64, 1}));
  int gelu = g.find("gelu");
  ASSERT_GE(gelu, 0);
  EXPECT_EQ(g.nodes[gelu].args[0].tensor(), (ValueRef{ln, 0}));
  ASSERT_EQ(g.nodes[gelu].kwarg("approximate")->str(), "tanh");
  EXPECT_EQ(g.nodes[g.outputs[0].node].target, "aten.add.Tensor");
}

TEST(GraphJson, DynamicShapesFixture) {
  Graph g = load_graph_file(kData + "/dynamic_shapes.json");
  Index s0 = Index::var("s0");
  EXPECT_EQ(g.meta({g.find("flat"), 0}).sizes, std::vector<Index>{s0 * Index(64)});  // meta inferred
  EXPECT_EQ(g.meta({g.find("rows"), 0}).sizes, (std::vector<Index>{s0 * Index(2), Index(32)}));
  EXPECT_EQ(g.meta({g.find("half"), 0}).sizes, (std::vector<Index>{s0, Index(32)}));
  EXPECT_EQ(g.meta({g.find("w"), 0}).strides, (std::vector<Index>{Index(1), Index(64)}));  // trusted as given
  EXPECT_EQ(g.meta({g.find("cast"), 0}).dtype, DType::Float32);
  EXPECT_TRUE(std::isinf(g.nodes[g.find("bound")].kwarg("min")->number()));
  Graph again = read_graph_json(write_graph_json(g), "written");
  expect_same_graph(g, again);
}

TEST(GraphJson, AlignmentRoundTripsAndIsChecked) {
  Json doc = base_graph();
  EXPECT_EQ(read_graph_json(doc.dump(), "g.json").align, 0);
  doc["align"] = 16;
  EXPECT_EQ(error_of(doc), "g.json: field 'align' needs version 2, got version 1");
  doc["version"] = 2;
  Graph g = read_graph_json(doc.dump(), "g.json");
  EXPECT_EQ(g.align, 16);
  EXPECT_EQ(read_graph_json(write_graph_json(g), "again.json").align, 16);
  for (Json bad : {Json(12), Json(0), Json(8192), Json("16"), Json(1.5)}) {
    doc["align"] = bad;
    EXPECT_NE(error_of(doc).find("field 'align': expected a power of two from 1 to 4096"), std::string::npos)
        << error_of(doc);
  }
}

TEST(GraphJson, DivisibilityRoundTripsAndIsChecked) {
  Json doc = base_graph();
  doc["divisible"] = {{"s0", 16}};
  EXPECT_EQ(error_of(doc), "g.json: field 'divisible' needs version 3, got version 1");
  doc["version"] = 3;
  Graph g = read_graph_json(doc.dump(), "g.json");
  EXPECT_EQ(g.divisible, (std::map<std::string, int64_t>{{"s0", 16}}));
  EXPECT_EQ(read_graph_json(write_graph_json(g), "again.json").divisible, g.divisible);
  EXPECT_NE(write_graph_json(g).find("\"version\": 3"), std::string::npos);
  for (Json bad : {Json(0), Json(-4), Json("16"), Json(2.5)}) {
    doc["divisible"] = {{"s0", bad}};
    EXPECT_NE(error_of(doc).find("field 'divisible.s0': expected a divisor"), std::string::npos) << error_of(doc);
  }
  doc["divisible"] = {{"s0 + 1", 4}};
  EXPECT_NE(error_of(doc).find("expected a size symbol's name"), std::string::npos) << error_of(doc);
  doc["divisible"] = Json::array();
  EXPECT_NE(error_of(doc).find("field 'divisible': expected an object"), std::string::npos) << error_of(doc);
}

TEST(GraphJson, Index32RoundTripsAndIsChecked) {
  Json doc = base_graph();
  doc["index32"] = true;
  EXPECT_EQ(error_of(doc), "g.json: field 'index32' needs version 4, got version 1");
  doc["version"] = 4;
  Graph g = read_graph_json(doc.dump(), "g.json");
  EXPECT_TRUE(g.index32);
  EXPECT_TRUE(read_graph_json(write_graph_json(g), "again.json").index32);
  EXPECT_NE(write_graph_json(g).find("\"version\": 4"), std::string::npos);
  doc["index32"] = 1;
  EXPECT_NE(error_of(doc).find("field 'index32': expected true or false"), std::string::npos) << error_of(doc);
}

TEST(GraphJson, ArgumentEncodings) {
  Json doc = base_graph();
  doc["nodes"].push_back(Json::parse(
      R"({"name": "c", "op": "aten._to_copy.default", "args": [{"ref": "add"}],
          "kwargs": {"dtype": {"dtype": "torch.bfloat16"}, "layout": "torch.strided", "device": "cuda:0",
                     "pin_memory": false}})"));
  doc["nodes"].push_back(Json::parse(
      R"({"name": "f", "op": "aten.full.default", "args": [[2, {"sym": "s0"}], {"float": 1}]})"));
  doc["nodes"].push_back(Json::parse(R"({"name": "cat", "op": "aten.cat.default", "args": [[{"ref": "x"}, {"ref": "add"}], -1]})"));
  Graph g = read_graph_json(doc.dump(), "g.json");
  const Node& c = g.nodes[g.find("c")];
  EXPECT_EQ(c.outputs[0].dtype, DType::BFloat16);
  EXPECT_EQ(c.kwarg("device")->str(), "cuda:0");
  const Node& f = g.nodes[g.find("f")];
  EXPECT_EQ(f.args[1].kind(), Arg::Kind::Float);
  EXPECT_EQ(f.outputs[0].dtype, DType::Float32);
  EXPECT_EQ(f.outputs[0].sizes, (std::vector<Index>{Index(2), Index::var("s0")}));
  EXPECT_EQ(g.nodes[g.find("cat")].outputs[0].sizes, (std::vector<Index>{Index(8), Index(128)}));
  expect_same_graph(g, read_graph_json(write_graph_json(g), "written"));
}

TEST(IndexText, FormatsAndParsesBack) {
  Index s0 = Index::var("s0"), s1 = Index::var("s1");
  for (const Index& e : {s0, s0 * Index(64), s0 + Index(1), s0 * s1 + Index(3), floordiv(s0, Index(2)),
                         mod(s0 + Index(1), Index(4)), floordiv(s0, s1 * Index(2)), min(s0, Index(8)),
                         max(s0 * Index(2), s1), s0 - Index(5), Index(-3), (s0 + s1) * Index(2)}) {
    EXPECT_EQ(parse_index_text(format_index_text(e)), e) << format_index_text(e);
  }
  EXPECT_EQ(parse_index_text("2*s0 + -1"), s0 * Index(2) - Index(1));
  EXPECT_EQ(parse_index_text("s0 / 2"), floordiv(s0, Index(2)));
  EXPECT_THROW(parse_index_text("s0 +"), std::invalid_argument);
  EXPECT_THROW(parse_index_text("s0 // 0"), std::invalid_argument);
  EXPECT_THROW(parse_index_text("min(s0)"), std::invalid_argument);
  EXPECT_THROW(parse_index_text(std::string(200, '(') + "s0" + std::string(200, ')')), std::invalid_argument);
}

// --- one test per error kind, exact messages -------------------------------------------------------------------------

TEST(GraphJsonErrors, NotJson) {
  EXPECT_EQ(error_of(std::string("{\"format\": \"hipinductor-graph\",\n \"version\": 1,\n \"nodes\": [,")),
            "g.json: not JSON: parse error at line 3, column 12: syntax error while parsing value - unexpected ','; "
            "expected '[', '{', or a literal");
  EXPECT_EQ(error_of(std::string(1000, '[')), "g.json: not JSON this reader accepts: nested deeper than 64 levels");
  EXPECT_EQ(error_of(std::string("[1, 2]")), "g.json: expected a JSON object at the top level, got array");
}

TEST(GraphJsonErrors, HeaderFields) {
  Json doc = base_graph();
  doc.erase("format");
  EXPECT_EQ(error_of(doc), "g.json: missing field 'format' (expected \"hipinductor-graph\")");
  doc = base_graph();
  doc["format"] = "onnx";
  EXPECT_EQ(error_of(doc), "g.json: field 'format': expected \"hipinductor-graph\", got \"onnx\"");
  doc = base_graph();
  doc["version"] = 5;
  EXPECT_EQ(error_of(doc), "g.json: unsupported version 5 (this reader understands versions 1 to 4)");
  doc = base_graph();
  doc["version"] = "1";
  EXPECT_EQ(error_of(doc), "g.json: field 'version': expected an integer, got string");
  doc = base_graph();
  doc.erase("nodes");
  EXPECT_EQ(error_of(doc), "g.json: missing field 'nodes'");
  doc = base_graph();
  doc["extra"] = 1;
  EXPECT_EQ(error_of(doc),
            "g.json: unknown field 'extra' (expected format, version, nodes, outputs, align, divisible, index32)");
}

TEST(GraphJsonErrors, UnknownOp) {
  Json doc = base_graph();
  doc["nodes"][1]["op"] = "aten.frobnicate.default";
  doc["nodes"][1]["name"] = "f";
  EXPECT_EQ(error_of(doc), "g.json: unknown op 'aten.frobnicate.default' at node 'f'");
}

TEST(GraphJsonErrors, DanglingReference) {
  Json doc = base_graph();
  doc["nodes"][1]["args"][1] = Json{{"ref", "y"}};
  EXPECT_EQ(error_of(doc), "g.json: node 'add': dangling reference 'y' (no earlier node has that name)");
  doc = base_graph();
  doc["nodes"][1]["args"][0] = Json{{"ref", "sum"}};  // a later node
  EXPECT_EQ(error_of(doc), "g.json: node 'add': dangling reference 'sum' (no earlier node has that name)");
  doc = base_graph();
  doc["outputs"][0] = Json{{"ref", "nope"}};
  EXPECT_EQ(error_of(doc), "g.json: outputs[0]: dangling reference 'nope' (no earlier node has that name)");
  doc = base_graph();
  doc["nodes"][1]["args"][0] = Json{{"ref", "x"}, {"output", 1}};
  EXPECT_EQ(error_of(doc), "g.json: node 'add': field 'args[0].output': node 'x' has no output 1 (it has 1)");
}

TEST(GraphJsonErrors, ArgumentTypes) {
  Json doc = base_graph();
  doc["nodes"][1]["args"][1] = "x";
  EXPECT_EQ(error_of(doc), "g.json: node 'add' (aten.add.Tensor): field 'args[1]': expected a tensor reference, got "
                           "string");
  doc = base_graph();
  doc["nodes"][2]["args"][2] = 1;
  EXPECT_EQ(error_of(doc), "g.json: node 'sum' (aten.sum.dim_IntList): field 'args[2]': expected a boolean, got "
                           "integer");
  doc = base_graph();
  doc["nodes"][1]["kwargs"]["alpha"] = Json{{"ref", "x"}};
  EXPECT_EQ(error_of(doc), "g.json: node 'add' (aten.add.Tensor): field 'kwargs.alpha': expected a number or "
                           "boolean, got tensor reference");
  doc = base_graph();
  doc["nodes"][2]["args"][1] = Json::array({1, "a"});
  EXPECT_EQ(error_of(doc), "g.json: node 'sum' (aten.sum.dim_IntList): field 'args[1][1]': expected an integer or "
                           "{\"sym\": EXPR} (lists hold integers or tensor references), got string");
  doc = base_graph();
  doc["nodes"][1]["args"][1] = Json{{"tensor", "x"}};
  EXPECT_EQ(error_of(doc), "g.json: node 'add' (aten.add.Tensor): field 'args[1]': expected an object with one of "
                           "'ref', 'sym', 'dtype', 'float', got one with 'tensor'");
  doc = base_graph();
  doc["nodes"][1]["args"] = Json{{"self", "x"}};
  EXPECT_EQ(error_of(doc), "g.json: node 'add' (aten.add.Tensor): field 'args': expected an array, got object");
}

TEST(GraphJsonErrors, Arity) {
  Json doc = base_graph();
  doc["nodes"][1]["args"].push_back(2);
  EXPECT_EQ(error_of(doc), "g.json: node 'add' (aten.add.Tensor): 3 positional arguments given, at most 2 accepted "
                           "(self, other)");
  doc = base_graph();
  doc["nodes"][1]["args"].erase(1);
  EXPECT_EQ(error_of(doc), "g.json: node 'add' (aten.add.Tensor): argument 'other': missing (required, Tensor, no "
                           "default)");
  doc = base_graph();
  doc["nodes"][1]["kwargs"]["beta"] = 1;
  EXPECT_EQ(error_of(doc), "g.json: node 'add' (aten.add.Tensor): unknown keyword argument 'beta' (accepted: self, "
                           "other, alpha)");
}

TEST(GraphJsonErrors, MetaInconsistentWithOp) {
  Json doc = base_graph();
  doc["nodes"][2]["meta"]["sizes"] = Json::array({8});
  EXPECT_EQ(error_of(doc), "g.json: node 'sum': meta: sizes [8] inconsistent with aten.sum.dim_IntList, which gives "
                           "[8, 1]");
  doc = base_graph();
  doc["nodes"][1]["meta"]["dtype"] = "float16";
  EXPECT_EQ(error_of(doc), "g.json: node 'add': meta: dtype float16 inconsistent with aten.add.Tensor, which gives "
                           "float32");
  doc = base_graph();
  doc["nodes"][1]["meta"] = Json::array({doc["nodes"][1]["meta"], doc["nodes"][1]["meta"]});
  EXPECT_EQ(error_of(doc), "g.json: node 'add': meta: 2 entries given, aten.add.Tensor has 1 output");
  doc = base_graph();
  doc["nodes"][1]["args"][1] = Json{{"ref", "sum"}};
  doc["nodes"][2]["args"][0] = Json{{"ref", "x"}};
  std::swap(doc["nodes"][1], doc["nodes"][2]);
  doc["outputs"][0] = Json{{"ref", "add"}};
  doc["nodes"][2]["meta"]["sizes"] = Json::array({8, 1});
  EXPECT_EQ(error_of(doc), "g.json: node 'add': meta: sizes [8, 1] inconsistent with aten.add.Tensor, which gives "
                           "[8, 64]");
  // An op's own error surfaces with the file name in front.
  doc = base_graph();
  doc["nodes"][2]["args"][1] = Json::array({2});
  EXPECT_EQ(error_of(doc), "g.json: node 'sum' (aten.sum.dim_IntList): argument 'dim': dim 2 out of range for a "
                           "tensor of rank 2 (expected [-2, 1])");
}

TEST(GraphJsonErrors, MetaFields) {
  Json doc = base_graph();
  doc["nodes"][0]["meta"]["dtype"] = "float8";
  EXPECT_EQ(error_of(doc), "g.json: node 'x' (placeholder): field 'meta.dtype': unknown dtype \"float8\"");
  doc = base_graph();
  doc["nodes"][0]["meta"]["sizes"][1] = -64;
  EXPECT_EQ(error_of(doc), "g.json: node 'x' (placeholder): field 'meta.sizes[1]': expected a non-negative integer, "
                           "got -64");
  doc = base_graph();
  doc["nodes"][0]["meta"]["sizes"][1] = Json{{"sym", "s0 +"}};
  EXPECT_EQ(error_of(doc), "g.json: node 'x' (placeholder): field 'meta.sizes[1].sym': expected a number, symbol or "
                           "'(' at offset 4 of 's0 +'");
  doc = base_graph();
  doc["nodes"][0]["meta"]["strides"] = Json::array({1});
  EXPECT_EQ(error_of(doc), "g.json: node 'x' (placeholder): field 'meta.strides': 1 strides for 2 sizes");
  doc = base_graph();
  doc["nodes"][0].erase("meta");
  EXPECT_EQ(error_of(doc), "g.json: node 'x' (placeholder): missing field 'meta'");
  doc = base_graph();
  doc["nodes"][0]["meta"]["layout"] = "strided";
  EXPECT_EQ(error_of(doc), "g.json: node 'x' (placeholder): field 'meta': unknown field 'layout' (expected dtype, "
                           "sizes, strides, offset)");
}

TEST(GraphJsonErrors, NodeFields) {
  Json doc = base_graph();
  doc["nodes"][1].erase("name");
  EXPECT_EQ(error_of(doc), "g.json: nodes[1]: missing field 'name'");
  doc = base_graph();
  doc["nodes"][1]["name"] = "x";
  EXPECT_EQ(error_of(doc), "g.json: node 'x': duplicate name (nodes[0] has it too)");
  doc = base_graph();
  doc["nodes"][0]["args"] = Json::array();
  EXPECT_EQ(error_of(doc), "g.json: node 'x' (placeholder): unknown field 'args' (expected name, op, meta)");
  doc = base_graph();
  doc["nodes"][1]["target"] = "aten.add.Tensor";
  EXPECT_EQ(error_of(doc), "g.json: node 'add' (aten.add.Tensor): unknown field 'target' (expected name, op, args, "
                           "kwargs, meta)");
  doc = base_graph();
  doc["nodes"][1]["op"] = 3;
  EXPECT_EQ(error_of(doc), "g.json: node 'add': field 'op': expected a string, got integer");
  doc = base_graph();
  doc["nodes"][2] = "sum";
  EXPECT_EQ(error_of(doc), "g.json: nodes[2]: expected an object, got string");
}

TEST(GraphJsonErrors, MissingFile) {
  try {
    load_graph_file(kData + "/no_such_file.json");
    FAIL();
  } catch (const GraphFormatError& e) {
    EXPECT_EQ(std::string(e.what()), kData + "/no_such_file.json: cannot open: No such file or directory");
  }
}

TEST(GraphJsonErrors, DuplicateKeysAreRefusedAtEveryLevel) {
  EXPECT_EQ(error_of(std::string(R"({"format": "hipinductor-graph", "format": "onnx", "version": 1})")),
            "g.json: not JSON this reader accepts: key \"format\" appears twice in one object");
  std::string text = base_graph().dump();
  const std::string meta = R"("meta":{"dtype":"float32",)";
  ASSERT_NE(text.find(meta), std::string::npos);
  text.replace(text.find(meta), meta.size(), R"("meta":{"dtype":"float32","dtype":"float16",)");
  EXPECT_EQ(error_of(text), "g.json: not JSON this reader accepts: key \"dtype\" appears twice in one object");
  // The same key in sibling objects is no duplicate.
  EXPECT_EQ(error_of(base_graph()), "(no GraphFormatError)");
}

/// Input echoed into a message is cut: a 1 MB name or op gives a line of a few hundred characters that still names
/// the file.
TEST(GraphJsonErrors, MessagesAreBoundedWhateverTheInputHolds) {
  const std::string huge(1 << 20, 'n');
  for (const char* field : {"name", "op"}) {
    Json doc = base_graph();
    doc["nodes"][1][field] = huge;
    if (std::string(field) == "name") doc["nodes"][1]["op"] = "aten.frobnicate.default";
    const std::string message = error_of(doc);
    EXPECT_LE(message.size(), 420u) << field;
    EXPECT_EQ(message.rfind("g.json: unknown op '", 0), 0u) << message.substr(0, 100);
    EXPECT_NE(message.find("..."), std::string::npos) << field;
  }
  Json doc = base_graph();
  doc["nodes"][0]["meta"][huge] = 1;
  EXPECT_LE(error_of(doc).size(), 420u);
}

TEST(GraphJsonErrors, FilesPastTheSizeLimitAndEndlessInputStop) {
  const std::string path = kExamples + "/softmax.json";
  EXPECT_NO_THROW(load_graph_file(path));
  try {
    load_graph_file(path, 100);
    FAIL();
  } catch (const GraphFormatError& e) {
    EXPECT_NE(std::string(e.what()).find("bytes, over the 100-byte limit for graph files"), std::string::npos)
        << e.what();
  }
  try {
    load_graph_file("/dev/zero", 3 << 20);
    FAIL();
  } catch (const GraphFormatError& e) {
    EXPECT_EQ(std::string(e.what()), "/dev/zero: more than the 3145728-byte limit for graph files");
  }
  try {
    load_graph_file(kData);
    FAIL();
  } catch (const GraphFormatError& e) {
    EXPECT_EQ(std::string(e.what()), kData + ": is a directory, not a graph file");
  }
}

// --- fuzz-ish: malformed input only ever raises GraphFormatError ------------------------------------------------------

/// Reads `text`; fails the test if anything but success or a one-line GraphFormatError comes out.
void expect_clean_outcome(const std::string& text, const std::string& what) {
  try {
    read_graph_json(text, "fuzz.json");
  } catch (const GraphFormatError& e) {
    std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << what << ": " << msg;
    EXPECT_EQ(msg.rfind("fuzz.json: ", 0), 0u) << what << ": " << msg;
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": escaped as " << typeid(e).name() << ": " << e.what();
  }
}

TEST(GraphJsonFuzz, TruncatedFiles) {
  std::string text = slurp(kExamples + "/softmax.json");
  ASSERT_FALSE(text.empty());
  for (size_t n = 0; n < text.size(); n += 3) expect_clean_outcome(text.substr(0, n), "truncated at " + std::to_string(n));
}

TEST(GraphJsonFuzz, ByteMutations) {
  std::string text = slurp(kExamples + "/layernorm_gelu_residual.json");
  std::mt19937 rng(1234);
  const std::string alphabet = "{}[]\":,0123456789-.eEaxnulltrufs \\";
  for (int i = 0; i < 3000; ++i) {
    std::string t = text;
    int edits = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < edits; ++k) {
      size_t pos = rng() % t.size();
      switch (rng() % 3) {
        case 0: t[pos] = alphabet[rng() % alphabet.size()]; break;
        case 1: t.erase(pos, 1 + rng() % 8); break;
        default: t.insert(pos, 1, alphabet[rng() % alphabet.size()]); break;
      }
    }
    expect_clean_outcome(t, "mutation " + std::to_string(i));
  }
}

/// Replaces every value in the document, one at a time, with values of other JSON types.
void mutate_everywhere(const Json& doc, Json& node, int& count) {
  static const std::vector<Json> replacements = {
      nullptr, true, 0, -1, 7, 2.5, "x", "aten.add.Tensor", Json::array(), Json::array({1, 2}), Json::object(),
      Json{{"ref", "x_1"}}, Json{{"ref", "x_1"}, {"output", 5}}, Json{{"sym", "s0"}}, Json{{"dtype", "int8"}},
      Json{{"float", "nan"}}, Json::array({Json{{"ref", "x_1"}}, nullptr}), 9223372036854775807ULL,
      18446744073709551615ULL};
  Json saved = node;
  for (const Json& r : replacements) {
    node = r;
    expect_clean_outcome(doc.dump(), "replacement " + std::to_string(count++) + ": " + doc.dump().substr(0, 0));
  }
  node = saved;
  if (node.is_array() || node.is_object()) {
    for (auto& child : node) mutate_everywhere(doc, child, count);
  }
}

TEST(GraphJsonFuzz, WrongTypesInEveryField) {
  for (const char* name : {"layernorm_gelu_residual.json", "softmax.json"}) {
    Json doc = Json::parse(slurp(kExamples + "/" + name));
    int count = 0;
    mutate_everywhere(doc, doc, count);
    EXPECT_GT(count, 100);
  }
}

}  // namespace
}  // namespace hi
