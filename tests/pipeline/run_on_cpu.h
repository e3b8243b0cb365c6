// Test helper over run_against_reference: compile for a cpu target and compare with the reference interpreter.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "testing/check_numerics.h"

namespace hi::test {

inline NumericsCheck run_on_cpu(const Graph& g, const std::string& target_name, uint64_t seed = 1) {
  CompileOptions options;
  options.target = parse_target(target_name);
  options.graph_name = "test";
  return run_against_reference(g, options, seed);
}

inline void expect_matches(const NumericsCheck& r, double rtol, double atol) {
  ASSERT_EQ(r.actual.size(), r.expected.size());
  for (size_t o = 0; o < r.actual.size(); ++o) {
    std::string why;
    EXPECT_TRUE(all_close(r.actual[o], r.expected[o], rtol, atol, &why))
        << "output " << o << ": " << why << "\n" << kernels_text(r.compiled->module);
  }
}

}  // namespace hi::test
