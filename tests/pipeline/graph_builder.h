// Test helper: builds graph IR the way an ATen FX graph reads, with metas from explicit sizes.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace hi::test {

class GraphBuilder {
 public:
  ValueRef input(const std::string& name, DType dtype, std::vector<int64_t> sizes,
                 std::vector<int64_t> strides = {}, int64_t offset = 0) {
    Node n;
    n.name = name;
    n.kind = NodeKind::Placeholder;
    TensorMeta m = TensorMeta::contiguous(dtype, to_index(sizes));
    if (!strides.empty()) m.strides = to_index(strides);
    m.offset = Index(offset);
    n.outputs.push_back(m);
    return add(std::move(n));
  }
  /// A call whose (single or several) outputs are contiguous tensors of the given dtypes and sizes.
  ValueRef call(const std::string& target, std::vector<Arg> args, DType dtype, std::vector<int64_t> sizes,
                std::vector<std::pair<std::string, Arg>> kwargs = {}) {
    return call_multi(target, std::move(args), {{dtype, sizes}}, std::move(kwargs));
  }
  ValueRef call_multi(const std::string& target, std::vector<Arg> args,
                      std::vector<std::pair<DType, std::vector<int64_t>>> outs,
                      std::vector<std::pair<std::string, Arg>> kwargs = {}) {
    Node n;
    n.name = unique(target);
    n.target = target;
    n.args = std::move(args);
    n.kwargs = std::move(kwargs);
    for (auto& [dt, s] : outs) n.outputs.push_back(TensorMeta::contiguous(dt, to_index(s)));
    return add(std::move(n));
  }
  void output(ValueRef v) { g_.outputs.push_back(v); }
  const Graph& graph() const { return g_; }

  static Arg t(ValueRef v) { return Arg::of(v); }
  static Arg i(int64_t v) { return Arg::of(v); }
  static Arg f(double v) { return Arg::of(v); }
  static Arg b(bool v) { return Arg::of(v); }
  static Arg ints(std::vector<int64_t> v) { return Arg::of(to_index(v)); }
  static Arg s(const std::string& v) { return Arg::of(v); }

  static std::vector<Index> to_index(const std::vector<int64_t>& v) {
    std::vector<Index> r;
    for (int64_t x : v) r.push_back(Index(x));
    return r;
  }

 private:
  ValueRef add(Node n) {
    g_.nodes.push_back(std::move(n));
    return ValueRef{static_cast<int>(g_.nodes.size()) - 1, 0};
  }
  std::string unique(const std::string& target) {
    size_t a = target.find('.'), b = target.rfind('.');
    std::string base = a == std::string::npos ? target : target.substr(a + 1, b - a - 1);
    int n = counts_[base]++;
    return n == 0 ? base : base + "_" + std::to_string(n);
  }
  Graph g_;
  std::map<std::string, int> counts_;
};

/// Softmax over the last dim as AOTAutograd decomposes it: amax, sub, exp, sum, div.
inline Graph softmax_graph(int64_t rows, int64_t cols, DType dt = DType::Float32) {
  GraphBuilder g;
  using B = GraphBuilder;
  ValueRef x = g.input("x", dt, {rows, cols});
  ValueRef mx = g.call("aten.amax.default", {B::t(x), B::ints({-1}), B::b(true)}, dt, {rows, 1});
  ValueRef sub = g.call("aten.sub.Tensor", {B::t(x), B::t(mx)}, dt, {rows, cols});
  ValueRef ex = g.call("aten.exp.default", {B::t(sub)}, dt, {rows, cols});
  ValueRef sm = g.call("aten.sum.dim_IntList", {B::t(ex), B::ints({-1}), B::b(true)}, dt, {rows, 1});
  ValueRef dv = g.call("aten.div.Tensor", {B::t(ex), B::t(sm)}, dt, {rows, cols});
  g.output(dv);
  return g.graph();
}

/// native_layer_norm over the last dim with weight and bias, returning (out, mean, rstd) like the forward graph of
/// training does when `all_outputs`, else only out.
inline Graph layer_norm_graph(int64_t rows, int64_t cols, bool all_outputs, DType dt = DType::Float32) {
  GraphBuilder g;
  using B = GraphBuilder;
  ValueRef x = g.input("x", dt, {rows, cols});
  ValueRef w = g.input("w", dt, {cols});
  ValueRef b = g.input("b", dt, {cols});
  ValueRef ln = g.call_multi("aten.native_layer_norm.default",
                             {B::t(x), B::ints({cols}), B::t(w), B::t(b), B::f(1e-5)},
                             {{dt, {rows, cols}}, {DType::Float32, {rows, 1}}, {DType::Float32, {rows, 1}}});
  g.output(ln);
  if (all_outputs) {
    g.output(ValueRef{ln.node, 1});
    g.output(ValueRef{ln.node, 2});
  }
  return g.graph();
}

/// Ten pointwise ops on one tensor.
inline Graph pointwise_chain_graph(int64_t rows, int64_t cols, DType dt = DType::Float32) {
  GraphBuilder g;
  using B = GraphBuilder;
  std::vector<int64_t> s{rows, cols};
  ValueRef x = g.input("x", dt, s);
  ValueRef y = g.input("y", dt, s);
  ValueRef v = g.call("aten.add.Tensor", {B::t(x), B::t(y)}, dt, s);
  v = g.call("aten.mul.Scalar", {B::t(v), B::f(0.5)}, dt, s);
  v = g.call("aten.tanh.default", {B::t(v)}, dt, s);
  v = g.call("aten.sub.Tensor", {B::t(v), B::t(x)}, dt, s);
  v = g.call("aten.abs.default", {B::t(v)}, dt, s);
  v = g.call("aten.sqrt.default", {B::t(v)}, dt, s);
  v = g.call("aten.sigmoid.default", {B::t(v)}, dt, s);
  v = g.call("aten.relu.default", {B::t(v)}, dt, s);
  v = g.call("aten.neg.default", {B::t(v)}, dt, s);
  v = g.call("aten.exp.default", {B::t(v)}, dt, s);
  g.output(v);
  return g.graph();
}

}  // namespace hi::test
