// Kernels whose GPU forms differ from the cpu device's, compiled for real: scatter kernels' atomic adds for every
// element type (native adds, the 16-bit PTX adds of sm_70/sm_90, CAS loops on the enclosing word), erfinv through
// the device library's erfinvf, zeta in float, and shifts, with HIPRTC for gfx90a / gfx942 and NVRTC for sm_90 (a
// cubin: ptxas checks inline PTX, which NVRTC's own pass only copies). Skipped where the compiler cannot be loaded;
// their numbers are checked on the cpu device (test_ops_core_numerics.cpp, test_ops_views_norms_pooling.cpp).
#include <gtest/gtest.h>

#include "pipeline/compile_graph.h"
#include "runtime/compiler.h"
#include "tests/common/graph_builder.h"

namespace hi {
namespace {

using test::A;
using test::I;

Graph special_kernels() {
  test::GraphBuilder g;
  ValueRef idx = g.input("idx", DType::Int64, {64, 16});
  for (DType d : {DType::Float32, DType::Float64, DType::BFloat16, DType::Float16, DType::Int32, DType::Int64,
                  DType::Int16, DType::Int8, DType::UInt8}) {
    ValueRef x = g.input(std::string("x_") + std::string(dtype_name(d)), d, {64, 32});
    ValueRef src = g.input(std::string("src_") + std::string(dtype_name(d)), d, {64, 16});
    g.output(g.call("aten.scatter_add.default", {A(x), I(1), A(idx), A(src)}, d, {64, 32}));
  }
  ValueRef y = g.input("y", DType::Float32, {4096});
  ValueRef q = g.input("q", DType::Float32, {4096});
  g.output(g.call("aten.erfinv.default", {A(y)}, DType::Float32, {4096}));
  g.output(g.call("aten.special_zeta.default", {A(y), A(q)}, DType::Float32, {4096}));
  ValueRef n = g.input("n", DType::Int32, {4096});
  g.output(g.call("aten.__rshift__.Tensor", {A(n), A(n)}, DType::Int32, {4096}));
  g.output(g.call("aten.__lshift__.Scalar", {A(n), I(3)}, DType::Int32, {4096}));
  return g.graph();
}

class GpuSpecialKernels : public ::testing::TestWithParam<const char*> {};

TEST_P(GpuSpecialKernels, Compile) {
  CompileOptions o;
  o.target = parse_target(GetParam());
  o.graph_name = "special_kernels";
  try {
    compiler_for(o.target);
  } catch (const std::runtime_error& e) {
    GTEST_SKIP() << "no compiler for " << GetParam() << ": " << e.what();
  }
  CodeObjectCache cache;
  o.cache = &cache;
  CompiledGraph g = compile_graph(special_kernels(), o);
  ASSERT_GE(g.code.binary.size(), 4u);
  EXPECT_EQ(std::string(g.code.binary.data() + 1, 3), "ELF");
  const std::string& src = g.module.source;
  for (const char* wanted : {"hi_atomic_add(", "hi_erfinv(", "hi_zeta(", "hi_shift_right<int>(", "hi_shift_left<int>("})
    EXPECT_NE(src.find(wanted), std::string::npos) << wanted;
  int scatters = 0;
  for (const EmittedKernel& k : g.module.kernels) scatters += k.kind == KernelKind::Scatter;
  EXPECT_EQ(scatters, 9);
}

INSTANTIATE_TEST_SUITE_P(Targets, GpuSpecialKernels, ::testing::Values("gfx90a", "gfx942:sramecc+:xnack-", "sm_90"),
                         [](const auto& info) {
                           std::string s = info.param;
                           return s.substr(0, s.find(':'));
                         });

}  // namespace
}  // namespace hi
