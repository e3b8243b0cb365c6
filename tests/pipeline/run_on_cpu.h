// Test helper: compile a graph for the cpu device, run it on random inputs, compare with the reference interpreter.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>

#include "codegen/target.h"
#include "ir/reference_eval.h"
#include "runtime/cpu_device.h"
#include "tools/pipeline/compile_graph.h"

namespace hi::test {

struct CpuRun {
  std::vector<HostTensor> expected;
  std::vector<HostTensor> actual;
  std::shared_ptr<const CompiledGraph> compiled;
};

/// Inputs are random with the placeholders' own layouts; outputs are read back with the graph's output layouts.
inline CpuRun run_on_cpu(const Graph& g, const std::string& target_name, uint64_t seed = 1) {
  CompileOptions options;
  options.target = parse_target(target_name);
  options.graph_name = "test";
  CpuRun r;
  r.compiled = std::make_shared<const CompiledGraph>(compile_graph(g, options));
  std::vector<HostTensor> inputs;
  for (int idx : g.placeholders()) {
    const TensorMeta& m = g.nodes[idx].outputs[0];
    std::vector<int64_t> sizes, strides;
    for (const Index& s : m.sizes) sizes.push_back(s.value());
    for (const Index& s : m.strides) strides.push_back(s.value());
    inputs.push_back(random_tensor(m.dtype, sizes, strides, m.offset.value(), seed++));
  }
  r.expected = evaluate_graph(g, inputs);

  CpuDevice device(options.target);
  GraphRunner runner(r.compiled, device);
  std::vector<std::vector<char>> in_bytes, out_bytes;
  std::vector<void*> in_ptrs, out_ptrs;
  for (const HostTensor& t : inputs) in_bytes.push_back(to_bytes(t));
  for (auto& b : in_bytes) in_ptrs.push_back(b.data());
  for (size_t o = 0; o < g.outputs.size(); ++o) {
    const TensorMeta& m = g.meta(g.outputs[o]);
    std::vector<int64_t> sizes, strides;
    for (const Index& s : m.sizes) sizes.push_back(s.value());
    for (const Index& s : m.strides) strides.push_back(s.value());
    int64_t elements = HostTensor::storage_size(sizes, strides, m.offset.value());
    out_bytes.emplace_back(static_cast<size_t>(elements) * dtype_bytes(m.dtype) + 1, char(0x7f));
    r.actual.push_back(HostTensor{m.dtype, sizes, strides, m.offset.value(), {}});
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

inline void expect_matches(const CpuRun& r, double rtol, double atol) {
  ASSERT_EQ(r.actual.size(), r.expected.size());
  for (size_t o = 0; o < r.actual.size(); ++o) {
    std::string why;
    EXPECT_TRUE(all_close(r.actual[o], r.expected[o], rtol, atol, &why))
        << "output " << o << ": " << why << "\n" << kernels_text(r.compiled->module);
  }
}

}  // namespace hi::test
