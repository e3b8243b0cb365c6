#include "testing/check_numerics.h"

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

}  // namespace

NumericsCheck run_against_reference(const Graph& graph, const CompileOptions& options, uint64_t seed) {
  if (options.target.kind != TargetKind::Cpu)
    throw std::invalid_argument("run_against_reference needs a cpu target, got " + options.target.id());
  NumericsCheck r;
  r.compiled = std::make_shared<const CompiledGraph>(compile_graph(graph, options));

  std::vector<HostTensor> inputs;
  for (int idx : graph.placeholders()) {
    const TensorMeta& m = graph.nodes[idx].outputs.at(0);
    Layout l = concrete(m, "input '" + graph.nodes[idx].name + "'");
    inputs.push_back(random_tensor(m.dtype, l.sizes, l.strides, l.offset, seed++));
  }
  r.expected = evaluate_graph(graph, inputs);

  CpuDevice device(options.target);
  GraphRunner runner(r.compiled, device);
  std::vector<std::vector<char>> in_bytes, out_bytes;
  std::vector<void*> in_ptrs, out_ptrs;
  for (const HostTensor& t : inputs) in_bytes.push_back(to_bytes(t));
  for (auto& b : in_bytes) in_ptrs.push_back(b.data());
  for (size_t o = 0; o < graph.outputs.size(); ++o) {
    const TensorMeta& m = graph.meta(graph.outputs[o]);
    Layout l = concrete(m, "output " + std::to_string(o));
    int64_t elements = HostTensor::storage_size(l.sizes, l.strides, l.offset);
    // Poison the storage so an element the kernels fail to write shows up as a mismatch.
    out_bytes.emplace_back(static_cast<size_t>(elements) * dtype_bytes(m.dtype) + 1, char(0x7f));
    r.actual.push_back(HostTensor{m.dtype, l.sizes, l.strides, l.offset, {}});
  }
  for (auto& b : out_bytes) out_ptrs.push_back(b.data());
  runner.run(in_ptrs, out_ptrs);
  for (size_t o = 0; o < r.actual.size(); ++o) {
    HostTensor& a = r.actual[o];
    a = from_bytes(a.dtype, a.sizes, a.strides, a.offset, out_bytes[o].data(),
                   HostTensor::storage_size(a.sizes, a.strides, a.offset));
  }
  return r;
}

}  // namespace hi
