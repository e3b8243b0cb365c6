// Test helper: builds graph IR the way an ATen FX graph reads. Placeholders take explicit metas; a call either states
// its output metas (call, call_multi: for pipeline tests, which should not depend on meta inference) or has them
// inferred from the op schema (call_inferred, infer, node: for tests of inference and argument binding).
// Sizes, strides and offsets are Index, so they may be symbols (Index::var("s0")); plain integers convert.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "ir/op_schema.h"
#include "lowering/op_registry.h"

namespace hi::test {

class GraphBuilder {
 public:
  using Kwargs = std::vector<std::pair<std::string, Arg>>;

  /// A placeholder; contiguous unless `strides` are given.
  ValueRef input(const std::string& name, DType dtype, std::vector<Index> sizes, std::vector<Index> strides = {},
                 Index offset = Index(0)) {
    Node n;
    n.name = name;
    n.kind = NodeKind::Placeholder;
    TensorMeta m = TensorMeta::contiguous(dtype, std::move(sizes));
    if (!strides.empty()) m.strides = std::move(strides);
    m.offset = std::move(offset);
    n.outputs.push_back(std::move(m));
    return add(std::move(n));
  }

  /// A call named after its op ("sum", "sum_1", ...) with one contiguous output of the given dtype and sizes.
  ValueRef call(const std::string& target, std::vector<Arg> args, DType dtype, std::vector<Index> sizes,
                Kwargs kwargs = {}) {
    return call_multi(target, std::move(args), {{dtype, std::move(sizes)}}, std::move(kwargs));
  }
  /// As call, with one contiguous output per entry of `outs`; returns the first.
  ValueRef call_multi(const std::string& target, std::vector<Arg> args,
                      std::vector<std::pair<DType, std::vector<Index>>> outs, Kwargs kwargs = {}) {
    Node n = node(unique(target), target, std::move(args), std::move(kwargs));
    for (auto& [dtype, sizes] : outs) n.outputs.push_back(TensorMeta::contiguous(dtype, std::move(sizes)));
    return add(std::move(n));
  }
  /// A call named `name` whose output metas come from infer_meta; returns its first output.
  ValueRef call_inferred(const std::string& name, const std::string& target, std::vector<Arg> args,
                         Kwargs kwargs = {}) {
    Node n = node(name, target, std::move(args), std::move(kwargs));
    n.outputs = infer_meta(g_, n);
    return add(std::move(n));
  }

  /// The node a call would be, without outputs and without adding it (for bind/infer tests that expect errors).
  Node node(const std::string& name, const std::string& target, std::vector<Arg> args, Kwargs kwargs = {}) const {
    Node n;
    n.name = name;
    n.target = target;
    n.args = std::move(args);
    n.kwargs = std::move(kwargs);
    return n;
  }
  /// The metas infer_meta gives such a call, without adding it.
  std::vector<TensorMeta> infer(const std::string& name, const std::string& target, std::vector<Arg> args,
                                Kwargs kwargs = {}) const {
    return infer_meta(g_, node(name, target, std::move(args), std::move(kwargs)));
  }

  void output(ValueRef v) { g_.outputs.push_back(v); }
  const Graph& graph() const { return g_; }

 private:
  ValueRef add(Node n) {
    g_.nodes.push_back(std::move(n));
    return ValueRef{static_cast<int>(g_.nodes.size()) - 1, 0};
  }
  // FX's naming: the op's overload packet ("aten.sum.dim_IntList" -> "sum"), numbered from the second use.
  std::string unique(const std::string& target) {
    size_t a = target.find('.'), b = target.rfind('.');
    std::string base = a == std::string::npos ? target : target.substr(a + 1, b - a - 1);
    int n = counts_[base]++;
    return n == 0 ? base : base + "_" + std::to_string(n);
  }

  Graph g_;
  std::map<std::string, int> counts_;
};

// Arguments, one letter each so that calls read like the FX graph: A(tensor), I(int), F(float), B(bool), S(string),
// L(int list).
inline Arg A(ValueRef r) { return Arg::of(r); }
inline Arg I(int64_t v) { return Arg::of(v); }
inline Arg F(double v) { return Arg::of(v); }
inline Arg B(bool v) { return Arg::of(v); }
inline Arg S(const std::string& v) { return Arg::of(v); }
inline Arg L(std::vector<Index> v) { return Arg::of(std::move(v)); }

inline std::vector<Index> sizes(std::initializer_list<int64_t> v) { return {v.begin(), v.end()}; }

/// Sizes may be symbols (Index::var("s0")) in the graphs below.

/// Softmax over the last dim as AOTAutograd decomposes it: amax, sub, exp, sum, div.
inline Graph softmax_graph(Index rows, Index cols, DType dt = DType::Float32) {
  GraphBuilder g;
  ValueRef x = g.input("x", dt, {rows, cols});
  ValueRef mx = g.call("aten.amax.default", {A(x), L({-1}), B(true)}, dt, {rows, 1});
  ValueRef sub = g.call("aten.sub.Tensor", {A(x), A(mx)}, dt, {rows, cols});
  ValueRef ex = g.call("aten.exp.default", {A(sub)}, dt, {rows, cols});
  ValueRef sm = g.call("aten.sum.dim_IntList", {A(ex), L({-1}), B(true)}, dt, {rows, 1});
  ValueRef dv = g.call("aten.div.Tensor", {A(ex), A(sm)}, dt, {rows, cols});
  g.output(dv);
  return g.graph();
}

/// native_layer_norm over the last dim with weight and bias, returning (out, mean, rstd) like the forward graph of
/// training does when `all_outputs`, else only out.
inline Graph layer_norm_graph(Index rows, Index cols, bool all_outputs, DType dt = DType::Float32) {
  GraphBuilder g;
  ValueRef x = g.input("x", dt, {rows, cols});
  ValueRef w = g.input("w", dt, {cols});
  ValueRef b = g.input("b", dt, {cols});
  ValueRef ln = g.call_multi("aten.native_layer_norm.default", {A(x), L({cols}), A(w), A(b), F(1e-5)},
                             {{dt, {rows, cols}}, {DType::Float32, {rows, 1}}, {DType::Float32, {rows, 1}}});
  g.output(ln);
  if (all_outputs) {
    g.output(ValueRef{ln.node, 1});
    g.output(ValueRef{ln.node, 2});
  }
  return g.graph();
}

/// Rotary embedding's rotate-half as models write it: x * cos + cat(-x[..., half:], x[..., :half]) * sin, over
/// rows of `cols` (the cat's seam at cols - half).
inline Graph rope_graph(int64_t rows, int64_t cols, int64_t half, DType dt = DType::Float32) {
  GraphBuilder g;
  std::vector<Index> s{rows, cols};
  ValueRef x = g.input("x", dt, s);
  ValueRef cos = g.input("cos", dt, s);
  ValueRef sin = g.input("sin", dt, s);
  ValueRef x1 = g.call("aten.slice.Tensor", {A(x), I(1), I(0), I(half)}, dt, {rows, half});
  ValueRef x2 = g.call("aten.slice.Tensor", {A(x), I(1), I(half), I(cols)}, dt, {rows, cols - half});
  ValueRef n = g.call("aten.neg.default", {A(x2)}, dt, {rows, cols - half});
  ValueRef c = g.call("aten.cat.default", {Arg{std::vector<std::optional<ValueRef>>{n, x1}}, I(1)}, dt, s);
  ValueRef a = g.call("aten.mul.Tensor", {A(x), A(cos)}, dt, s);
  ValueRef b = g.call("aten.mul.Tensor", {A(c), A(sin)}, dt, s);
  g.output(g.call("aten.add.Tensor", {A(a), A(b)}, dt, s));
  return g.graph();
}

/// Rotary embedding as LLaMA applies it after a projection: x is (b, t, h, d) in memory, viewed (b, h, t, d) by a
/// transpose; cos and sin are (t, d). The outputs keep the view's memory order, (b, t, h, d), as eager's do.
inline Graph transposed_rope_graph(int64_t b, int64_t t, int64_t h, int64_t d, DType dt = DType::Float32) {
  GraphBuilder g;
  ValueRef x = g.input("x", dt, {b, t, h, d});
  ValueRef cos = g.input("cos", dt, {t, d});
  ValueRef sin = g.input("sin", dt, {t, d});
  std::vector<Index> s{b, h, t, d};
  std::vector<Index> view_strides{t * h * d, d, h * d, 1};
  ValueRef xt = g.call("aten.transpose.int", {A(x), I(1), I(2)}, dt, s);
  ValueRef x1 = g.call("aten.slice.Tensor", {A(xt), I(3), I(0), I(d / 2)}, dt, {b, h, t, d / 2});
  ValueRef x2 = g.call("aten.slice.Tensor", {A(xt), I(3), I(d / 2), I(d)}, dt, {b, h, t, d / 2});
  ValueRef n = g.call("aten.neg.default", {A(x2)}, dt, {b, h, t, d / 2});
  ValueRef c = g.call("aten.cat.default", {Arg{std::vector<std::optional<ValueRef>>{n, x1}}, I(-1)}, dt, s);
  ValueRef a = g.call("aten.mul.Tensor", {A(xt), A(cos)}, dt, s);
  ValueRef m = g.call("aten.mul.Tensor", {A(c), A(sin)}, dt, s);
  ValueRef y = g.call("aten.add.Tensor", {A(a), A(m)}, dt, s);
  g.output(y);
  Graph graph = g.graph();
  for (ValueRef v : {xt, x1, x2, n, a, m, y}) {  // views and eager results in the transposed memory order
    TensorMeta& meta = graph.nodes[v.node].outputs[v.output];
    meta.strides = view_strides;
    if (v.node == x2.node) meta.offset = d / 2;
  }
  return graph;
}

/// Ten pointwise ops on one tensor.
inline Graph pointwise_chain_graph(Index rows, Index cols, DType dt = DType::Float32) {
  GraphBuilder g;
  std::vector<Index> s{rows, cols};
  ValueRef x = g.input("x", dt, s);
  ValueRef y = g.input("y", dt, s);
  ValueRef v = g.call("aten.add.Tensor", {A(x), A(y)}, dt, s);
  v = g.call("aten.mul.Scalar", {A(v), F(0.5)}, dt, s);
  v = g.call("aten.tanh.default", {A(v)}, dt, s);
  v = g.call("aten.sub.Tensor", {A(v), A(x)}, dt, s);
  v = g.call("aten.abs.default", {A(v)}, dt, s);
  v = g.call("aten.sqrt.default", {A(v)}, dt, s);
  v = g.call("aten.sigmoid.default", {A(v)}, dt, s);
  v = g.call("aten.relu.default", {A(v)}, dt, s);
  v = g.call("aten.neg.default", {A(v)}, dt, s);
  v = g.call("aten.exp.default", {A(v)}, dt, s);
  g.output(v);
  return g.graph();
}

}  // namespace hi::test
