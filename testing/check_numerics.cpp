#include "testing/check_numerics.h"

#include <algorithm>
#include <stdexcept>

#include "runtime/cpu_device.h"

namespace hi {
namespace {

struct Layout {
  std::vector<int64_t> sizes, strides;
  int64_t offset = 0;
};

Layout concrete(const TensorMeta& m, const std::string& what) {
  Layout l;
  auto value = [&](const Index& i) {
    auto c = i.as_const();
    if (!c) throw std::invalid_argument(what + " has symbolic layout " + i.str() + "; numerics need concrete sizes");
    return *c;
  };
  for (const Index& s : m.sizes) l.sizes.push_back(value(s));
  for (const Index& s : m.strides) l.strides.push_back(value(s));
  l.offset = value(m.offset);
  return l;
}

/// Random inputs with the placeholders' layouts, and poisoned output storage with the outputs' layouts: one run's
/// host data.
struct HostRun {
  std::vector<HostTensor> inputs;
  std::vector<std::vector<char>> in_bytes, out_bytes;
  std::vector<void*> in_ptrs, out_ptrs;
};

HostRun prepare_run(const Graph& graph, NumericsCheck& r, uint64_t seed) {
  HostRun h;
  for (int idx : graph.placeholders()) {
    const TensorMeta& m = graph.nodes[idx].outputs.at(0);
    Layout l = concrete(m, "input '" + graph.nodes[idx].name + "'");
    h.inputs.push_back(random_tensor(m.dtype, l.sizes, l.strides, l.offset, seed++));
  }
  for (const HostTensor& t : h.inputs) h.in_bytes.push_back(to_bytes(t));
  for (auto& b : h.in_bytes) h.in_ptrs.push_back(b.data());
  for (size_t o = 0; o < graph.outputs.size(); ++o) {
    const TensorMeta& m = graph.meta(graph.outputs[o]);
    Layout l = concrete(m, "output " + std::to_string(o));
    int64_t elements = HostTensor::storage_size(l.sizes, l.strides, l.offset);
    // Poison the storage so an element the kernels fail to write shows up as a mismatch.
    h.out_bytes.emplace_back(static_cast<size_t>(elements) * dtype_bytes(m.dtype) + 1, char(0x7f));
    r.actual.push_back(HostTensor{m.dtype, l.sizes, l.strides, l.offset, {}});
  }
  for (auto& b : h.out_bytes) h.out_ptrs.push_back(b.data());
  return h;
}

void read_back(const HostRun& h, NumericsCheck& r) {
  for (size_t o = 0; o < r.actual.size(); ++o) {
    HostTensor& a = r.actual[o];
    a = from_bytes(a.dtype, a.sizes, a.strides, a.offset, h.out_bytes[o].data(),
                   HostTensor::storage_size(a.sizes, a.strides, a.offset));
  }
}

}  // namespace

Graph bind_symbols(const Graph& graph, const std::map<std::string, int64_t>& values) {
  std::map<std::string, Index> v;
  for (const auto& [name, value] : values) v[name] = Index(value);
  Graph out = substitute_symbols(graph, v);
  out.divisible.clear();
  for (const Node& n : out.nodes)
    for (const TensorMeta& m : n.outputs) concrete(m, "node '" + n.name + "'");  // throws for a symbol left
  return out;
}

NumericsCheck run_against_reference(const Graph& graph, const CompileOptions& options, uint64_t seed) {
  if (options.target.kind != TargetKind::Cpu)
    throw std::invalid_argument("run_against_reference needs a cpu target, got " + options.target.id());
  NumericsCheck r;
  r.compiled = std::make_shared<const CompiledGraph>(compile_graph(graph, options));
  HostRun h = prepare_run(graph, r, seed);
  r.expected = evaluate_graph(graph, h.inputs);
  CpuDevice device(options.target);
  GraphRunner runner(r.compiled, device);
  runner.run(h.in_ptrs, h.out_ptrs);
  read_back(h, r);
  return r;
}

NumericsCheck run_bound_against_reference(const Graph& graph, GraphRunner& runner,
                                          const std::map<std::string, int64_t>& values, uint64_t seed) {
  NumericsCheck r;
  r.compiled = std::shared_ptr<const CompiledGraph>(&runner.graph(), [](const CompiledGraph*) {});
  const Graph bound = bind_symbols(graph, values);
  HostRun h = prepare_run(bound, r, seed);
  r.expected = evaluate_graph(bound, h.inputs);
  std::vector<int64_t> sizes;
  for (const std::string& s : runner.symbols()) {
    auto it = values.find(s);
    if (it == values.end()) throw std::invalid_argument("run_bound_against_reference: no value for symbol " + s);
    sizes.push_back(it->second);
  }
  runner.run(h.in_ptrs, h.out_ptrs, sizes, nullptr, nullptr);
  read_back(h, r);
  return r;
}

NumericsCheck run_on_inputs_against_reference(const Graph& graph, const CompileOptions& options,
                                              const std::vector<HostTensor>& inputs) {
  NumericsCheck r;
  r.compiled = std::make_shared<const CompiledGraph>(compile_graph(graph, options));
  r.expected = evaluate_graph(graph, inputs);
  CpuDevice device(options.target);
  GraphRunner runner(r.compiled, device);
  std::vector<std::vector<char>> in_bytes, out_bytes;
  std::vector<void*> in_ptrs, out_ptrs;
  for (const HostTensor& t : inputs) in_bytes.push_back(to_bytes(t));
  for (auto& b : in_bytes) in_ptrs.push_back(b.data());
  for (const HostTensor& e : r.expected) {
    // Filled with a pattern no result has by chance, so an output the kernels never wrote shows.
    out_bytes.emplace_back(static_cast<size_t>(std::max<int64_t>(1, e.numel())) * dtype_bytes(e.dtype), char(0x7f));
    out_ptrs.push_back(out_bytes.back().data());
  }
  runner.run(in_ptrs, out_ptrs);
  for (size_t o = 0; o < r.expected.size(); ++o) {
    const HostTensor& e = r.expected[o];
    HostTensor c = HostTensor::contiguous(e.dtype, e.sizes);
    r.actual.push_back(from_bytes(e.dtype, c.sizes, c.strides, 0, out_bytes[o].data(), e.numel()));
  }
  return r;
}

}  // namespace hi
