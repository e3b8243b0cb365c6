// The graph IR as versioned JSON: the AOT command's input, debug dumps, and test fixtures.
//
// The format, field by field, is in docs/graph-format.md. In short:
//   {"format": "hipinductor-graph", "version": 1,
//    "nodes": [{"name": "x", "op": "placeholder", "meta": {"dtype": "float32", "sizes": [8, 64]}},
//              {"name": "add", "op": "aten.add.Tensor", "args": [{"ref": "x"}, {"ref": "x"}], "meta": {...}}],
//    "outputs": [{"ref": "add"}]}
//
// Reading validates everything a later stage would otherwise trip over: the JSON shape of every field, that each
// call names an overload in the schema table (ir/op_schema.h) and that its arguments bind to it, that references
// point to earlier nodes, and that each call's meta dtype and sizes equal what infer_meta derives (strides and
// offset as given are trusted: the compiler's inputs may be non-contiguous). A call node without "meta" gets the
// inferred one. Bad input never crashes or asserts: every problem is a GraphFormatError.
#pragma once

#include <stdexcept>
#include <string>

#include "ir/graph.h"

namespace hi {

/// The `"format"` value and the newest `"version"` this code reads and writes. Version 2 added the optional top-level
/// `"align"`, version 3 the optional `"divisible"`, version 4 the optional `"index32"`; files are written as the
/// oldest version holding what they use, so files without any of them are version 1, which every reader since the first understands.
inline constexpr const char* kGraphFormatName = "hipinductor-graph";
inline constexpr int kGraphFormatVersion = 4;

/// A graph file that cannot be read. what() is one line naming the file, the node and the field at fault:
///   `model.json: node 'add' (aten.add.Tensor): field 'args[1]': expected a tensor reference, got string`
class GraphFormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Parses and validates `text`; `source_name` (a file name, or e.g. "<python>") starts every error message.
Graph read_graph_json(const std::string& text, const std::string& source_name);
/// The largest graph file load_graph_file reads by default: larger input (or an endless one, such as /dev/zero) is a
/// GraphFormatError once that many bytes are read, not a process that reads until it is killed.
inline constexpr size_t kMaxGraphFileBytes = size_t{1} << 30;

/// Reads the file at `path` (at most `max_bytes`) and parses it (errors name `path`).
Graph load_graph_file(const std::string& path, size_t max_bytes = kMaxGraphFileBytes);

/// Serialises `g`, one node per line; read_graph_json(write_graph_json(g)) reproduces `g` exactly. Throws
/// std::invalid_argument for a graph whose references are out of range (verify_graph would report it).
std::string write_graph_json(const Graph& g);
/// write_graph_json to a file; throws std::runtime_error naming `path` when it cannot be written.
void save_graph_file(const Graph& g, const std::string& path);

}  // namespace hi
