// Graph IR: an FX-like, ATen-level dataflow graph, the compiler's input.
//
// Nodes come in graph order: placeholders (the inputs), calls of ATen overloads named as FX prints them
// (`aten.add.Tensor`, `aten.sum.dim_IntList`), and the graph's outputs are a list of value references. Every value
// carries a TensorMeta whose sizes, strides and storage offset are index expressions (symbols allowed).
//
// Invariants (checked by `verify_graph`): arguments reference only earlier nodes' existing outputs; placeholders have
// no arguments and exactly one output; names are unique and non-empty.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "ir/dtype.h"
#include "ir/index.h"

namespace hi {

/// Layout and type of one tensor value.
struct TensorMeta {
  DType dtype = DType::Float32;
  std::vector<Index> sizes;
  std::vector<Index> strides;
  Index offset = Index(0);

  int64_t rank() const { return static_cast<int64_t>(sizes.size()); }
  /// Product of sizes (canonical index expression).
  Index numel() const;
  /// Row-major contiguous strides for `sizes`.
  static std::vector<Index> contiguous_strides(const std::vector<Index>& sizes);
  static TensorMeta contiguous(DType dtype, std::vector<Index> sizes);
  /// Strides equal the contiguous ones (dims of size 1 ignored) and offset is 0.
  bool is_contiguous() const;
};

/// Reference to output `output` of node `node` (an index into Graph::nodes).
struct ValueRef {
  int node = -1;
  int output = 0;
  bool valid() const { return node >= 0; }
  bool operator==(const ValueRef& o) const { return node == o.node && output == o.output; }
};

/// An argument of a call, as FX would pass it. Int-like arguments are Index so SymInts fit.
struct Arg {
  enum class Kind { None, Tensor, TensorList, Bool, Int, IntList, Float, Str, DType };
  using Value = std::variant<std::monostate, ValueRef, std::vector<std::optional<ValueRef>>, bool, Index,
                             std::vector<Index>, double, std::string, DType>;
  Value value;

  Kind kind() const { return static_cast<Kind>(value.index()); }
  bool is_none() const { return kind() == Kind::None; }
  bool is_tensor() const { return kind() == Kind::Tensor; }
  const ValueRef& tensor() const { return std::get<ValueRef>(value); }
  const std::vector<std::optional<ValueRef>>& tensors() const {
    return std::get<std::vector<std::optional<ValueRef>>>(value);
  }
  bool boolean() const { return std::get<bool>(value); }
  const Index& integer() const { return std::get<Index>(value); }
  const std::vector<Index>& ints() const { return std::get<std::vector<Index>>(value); }
  double number() const { return std::get<double>(value); }
  const std::string& str() const { return std::get<std::string>(value); }
  DType dtype() const { return std::get<DType>(value); }

  static Arg none() { return {}; }
  static Arg of(ValueRef v) { return {v}; }
  static Arg of(bool b) { return {b}; }
  static Arg of(int64_t i) { return {Index(i)}; }
  static Arg of(Index i) { return {std::move(i)}; }
  static Arg of(std::vector<Index> v) { return {std::move(v)}; }
  static Arg of(double d) { return {d}; }
  static Arg of(std::string s) { return {std::move(s)}; }
  static Arg of(DType t) { return {t}; }
};
std::string_view arg_kind_name(Arg::Kind k);

enum class NodeKind { Placeholder, Call };

struct Node {
  std::string name;    ///< unique, as in FX (`add_1`)
  NodeKind kind = NodeKind::Call;
  std::string target;  ///< ATen overload for calls (`aten.add.Tensor`); empty for placeholders
  std::vector<Arg> args;
  std::vector<std::pair<std::string, Arg>> kwargs;
  std::vector<TensorMeta> outputs;  ///< one entry per tensor the node produces

  /// Keyword argument by name, or nullptr.
  const Arg* kwarg(std::string_view key) const;
};

struct Graph {
  std::vector<Node> nodes;
  std::vector<ValueRef> outputs;
  /// Bytes that every graph input's first element and every graph output's storage are aligned to (a power of two;
  /// 0: nothing known). Vector accesses that this proves aligned need no run-time check; GraphRunner verifies the
  /// pointers it is given.
  int64_t align = 0;
  /// Divisibility the caller promises for size symbols: symbol -> divisor (>= 2). The compiler plans with it (a
  /// symbol s divisible by d is compiled as d * q, so vector widths and alignment that need it are proven); a run
  /// whose value breaks the promise is refused (LoopProgram::bind_symbols).
  std::map<std::string, int64_t> divisible;
  /// The caller promises that every run's sizes keep every extent of the graph (each buffer's storage, each kernel's
  /// iteration space) below kIndex32Limit (ir/loop.h): kernels then index in 32 bits even where sizes are symbolic; a
  /// run whose sizes break the promise is refused (LoopProgram::bind_symbols).
  bool index32 = false;

  const TensorMeta& meta(ValueRef v) const { return nodes.at(v.node).outputs.at(v.output); }
  /// Index of the node called `name`, or -1.
  int find(std::string_view name) const;
  std::vector<int> placeholders() const;
};

/// `g` with size symbols replaced by expressions in every meta and int argument (and `divisible` left as it is).
Graph substitute_symbols(const Graph& g, const std::map<std::string, Index>& replacements);

/// Structural checks (see the invariants above); returns one message per problem, empty when the graph is sound.
std::vector<std::string> verify_graph(const Graph& g);

}  // namespace hi
