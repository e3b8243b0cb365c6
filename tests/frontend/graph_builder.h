// Builds small graphs for tests: placeholders with given metas, calls whose metas come from infer_meta.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "ir/op_schema.h"

namespace hi::test {

struct GraphBuilder {
  Graph g;

  ValueRef input(const std::string& name, DType dtype, std::vector<Index> sizes, std::vector<Index> strides = {},
                 Index offset = Index(0)) {
    Node n;
    n.name = name;
    n.kind = NodeKind::Placeholder;
    TensorMeta m = TensorMeta::contiguous(dtype, std::move(sizes));
    if (!strides.empty()) m.strides = std::move(strides);
    m.offset = offset;
    n.outputs.push_back(std::move(m));
    g.nodes.push_back(std::move(n));
    return {static_cast<int>(g.nodes.size()) - 1, 0};
  }

  /// The node a call would be, without adding it (for bind/infer tests that expect errors).
  Node node(const std::string& name, const std::string& op, std::vector<Arg> args,
            std::vector<std::pair<std::string, Arg>> kwargs = {}) const {
    Node n;
    n.name = name;
    n.target = op;
    n.args = std::move(args);
    n.kwargs = std::move(kwargs);
    return n;
  }

  std::vector<TensorMeta> infer(const std::string& name, const std::string& op, std::vector<Arg> args,
                                std::vector<std::pair<std::string, Arg>> kwargs = {}) const {
    return infer_meta(g, node(name, op, std::move(args), std::move(kwargs)));
  }

  /// Adds the call with inferred metas; returns its first output.
  ValueRef call(const std::string& name, const std::string& op, std::vector<Arg> args,
                std::vector<std::pair<std::string, Arg>> kwargs = {}) {
    Node n = node(name, op, std::move(args), std::move(kwargs));
    n.outputs = infer_meta(g, n);
    g.nodes.push_back(std::move(n));
    return {static_cast<int>(g.nodes.size()) - 1, 0};
  }
};

inline Arg A(ValueRef r) { return Arg::of(r); }
inline Arg I(int64_t v) { return Arg::of(v); }
inline Arg F(double v) { return Arg::of(v); }
inline Arg B(bool v) { return Arg::of(v); }
inline Arg S(const char* v) { return Arg::of(std::string(v)); }
inline Arg L(std::vector<Index> v) { return Arg::of(std::move(v)); }

inline std::vector<Index> sizes(std::initializer_list<int64_t> v) { return {v.begin(), v.end()}; }

}  // namespace hi::test
