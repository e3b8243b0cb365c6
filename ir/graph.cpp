#include "ir/graph.h"

#include <unordered_map>

namespace hi {

Index TensorMeta::numel() const { return product(sizes); }

std::vector<Index> TensorMeta::contiguous_strides(const std::vector<Index>& sizes) {
  std::vector<Index> strides(sizes.size());
  Index stride = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = stride;
    stride = stride * sizes[i];
  }
  return strides;
}

TensorMeta TensorMeta::contiguous(DType dtype, std::vector<Index> sizes) {
  std::vector<Index> strides = contiguous_strides(sizes);
  return {dtype, std::move(sizes), std::move(strides), Index(0)};
}

// A dimension of size 1 is never stepped over, so its stride is irrelevant (PyTorch agrees: unsqueeze may leave any
// stride there).
bool TensorMeta::is_contiguous() const {
  if (strides.size() != sizes.size() || offset != Index(0)) return false;
  std::vector<Index> expected = contiguous_strides(sizes);
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (!sizes[i].is_const(1) && strides[i] != expected[i]) return false;
  }
  return true;
}

// ATen schema spellings, so that messages read like the operator signatures users know.
std::string_view arg_kind_name(Arg::Kind k) {
  switch (k) {
    case Arg::Kind::None: return "None";
    case Arg::Kind::Tensor: return "Tensor";
    case Arg::Kind::TensorList: return "Tensor?[]";
    case Arg::Kind::Bool: return "bool";
    case Arg::Kind::Int: return "SymInt";
    case Arg::Kind::IntList: return "SymInt[]";
    case Arg::Kind::Float: return "float";
    case Arg::Kind::Str: return "str";
    case Arg::Kind::DType: return "ScalarType";
  }
  return "?";
}

const Arg* Node::kwarg(std::string_view key) const {
  for (const auto& [name, arg] : kwargs) {
    if (name == key) return &arg;
  }
  return nullptr;
}

int Graph::find(std::string_view name) const {
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

std::vector<int> Graph::placeholders() const {
  std::vector<int> out;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].kind == NodeKind::Placeholder) out.push_back(static_cast<int>(i));
  }
  return out;
}

namespace {

class GraphVerifier {
 public:
  explicit GraphVerifier(const Graph& g) : g_(g) {}

  std::vector<std::string> run() {
    std::unordered_map<std::string, size_t> first_with_name;
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      check_name(n, i, first_with_name);
      check_shape(n, label(n, i));
      check_args(n, static_cast<int>(i), label(n, i));
    }
    for (size_t i = 0; i < g_.outputs.size(); ++i) {
      check_ref(g_.outputs[i], static_cast<int>(g_.nodes.size()), "graph output " + std::to_string(i));
    }
    return std::move(problems_);
  }

 private:
  static std::string label(const Node& n, size_t i) {
    return n.name.empty() ? "node #" + std::to_string(i) : "node '" + n.name + "'";
  }

  void check_name(const Node& n, size_t i, std::unordered_map<std::string, size_t>& first_with_name) {
    if (n.name.empty()) {
      problems_.push_back(label(n, i) + ": empty name");
      return;
    }
    auto [it, inserted] = first_with_name.emplace(n.name, i);
    if (!inserted) {
      problems_.push_back(label(n, i) + " (#" + std::to_string(i) + "): name already used by node #" +
                          std::to_string(it->second));
    }
  }

  void check_shape(const Node& n, const std::string& who) {
    if (n.kind == NodeKind::Placeholder) {
      if (!n.args.empty() || !n.kwargs.empty()) problems_.push_back(who + ": placeholder with arguments");
      if (n.outputs.size() != 1) {
        problems_.push_back(who + ": placeholder with " + std::to_string(n.outputs.size()) + " outputs, expected 1");
      }
    } else if (n.target.empty()) {
      problems_.push_back(who + ": call without a target");
    }
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      const TensorMeta& m = n.outputs[i];
      if (m.sizes.size() != m.strides.size()) {
        problems_.push_back(who + ": output " + std::to_string(i) + " has " +
                            std::to_string(m.sizes.size()) + " sizes but " + std::to_string(m.strides.size()) +
                            " strides");
      }
    }
  }

  void check_args(const Node& n, int index, const std::string& who) {
    for (size_t i = 0; i < n.args.size(); ++i) check_arg(n.args[i], index, who + ": argument " + std::to_string(i));
    for (const auto& [key, arg] : n.kwargs) check_arg(arg, index, who + ": kwarg '" + key + "'");
  }

  void check_arg(const Arg& a, int user, const std::string& where) {
    if (a.kind() == Arg::Kind::Tensor) check_ref(a.tensor(), user, where);
    if (a.kind() != Arg::Kind::TensorList) return;
    for (size_t j = 0; j < a.tensors().size(); ++j) {
      if (a.tensors()[j]) check_ref(*a.tensors()[j], user, where + " element " + std::to_string(j));
    }
  }

  // `user` is the index of the referring node; refs must point strictly before it (graph outputs pass the node
  // count, so any existing node qualifies).
  void check_ref(const ValueRef& v, int user, const std::string& where) {
    if (v.node < 0 || v.node >= static_cast<int>(g_.nodes.size())) {
      problems_.push_back(where + " references node #" + std::to_string(v.node) + ", which does not exist (" +
                          std::to_string(g_.nodes.size()) + " nodes)");
      return;
    }
    const Node& target = g_.nodes[v.node];
    if (v.node >= user) {
      problems_.push_back(where + " references '" + target.name + "' (#" + std::to_string(v.node) +
                          "), which does not come earlier");
      return;
    }
    if (v.output < 0 || v.output >= static_cast<int>(target.outputs.size())) {
      problems_.push_back(where + " references output " + std::to_string(v.output) + " of '" + target.name +
                          "', which has " + std::to_string(target.outputs.size()) + " outputs");
    }
  }

  const Graph& g_;
  std::vector<std::string> problems_;
};

}  // namespace

std::vector<std::string> verify_graph(const Graph& g) { return GraphVerifier(g).run(); }

}  // namespace hi

namespace hi {

Graph substitute_symbols(const Graph& g, const std::map<std::string, Index>& replacements) {
  Graph out = g;
  auto arg = [&](Arg& a) {
    if (a.kind() == Arg::Kind::Int) a = Arg::of(substitute(a.integer(), replacements));
    if (a.kind() == Arg::Kind::IntList) {
      std::vector<Index> ints;
      for (const Index& i : a.ints()) ints.push_back(substitute(i, replacements));
      a = Arg::of(std::move(ints));
    }
  };
  for (Node& n : out.nodes) {
    for (Arg& a : n.args) arg(a);
    for (auto& [key, a] : n.kwargs) arg(a);
    for (TensorMeta& m : n.outputs) {
      for (Index& s : m.sizes) s = substitute(s, replacements);
      for (Index& s : m.strides) s = substitute(s, replacements);
      m.offset = substitute(m.offset, replacements);
    }
  }
  return out;
}

}  // namespace hi
