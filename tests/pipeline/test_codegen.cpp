// Properties of emitted source that the cpu device cannot expose (its fibers run a block's threads in order).
#include <gtest/gtest.h>

#include <regex>

#include "tests/common/graph_builder.h"
#include "pipeline/compile_graph.h"

namespace hi {
namespace {

using test::A;
using test::B;
using test::L;

CompileOptions targeting(const std::string& arch) {
  CompileOptions o;
  o.target = parse_target(arch);
  return o;
}

TEST(Codegen, RowKernelReadsItsOwnRowResultsFromRegistersEvenWhenStored) {
  // s is a graph output (stored by thread 0) and feeds the epilogue of the same kernel: the epilogue must take it
  // from the register every thread holds, never read back what thread 0 may not have written yet.
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {16, 64});
  ValueRef s = g.call("aten.sum.dim_IntList", {A(x), L({Index(-1)}), B(true)}, DType::Float32, {16, 1});
  ValueRef y = g.call("aten.div.Tensor", {A(x), A(s)}, DType::Float32, {16, 64});
  g.output(y);
  g.output(s);
  CompileOptions o = targeting("sm_90");
  CompiledGraph c = generate(g.graph(), o);
  ASSERT_EQ(c.module.kernels.size(), 1u);
  std::string text = kernels_text(c.module);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(text, m, std::regex(R"(if \((threadIdx\.x|lane) == 0[^)]*\) (out_ptr\d+)\[)")))
      << text;
  std::string out_param = m[2].str();
  size_t after_store = text.find('\n', static_cast<size_t>(m.position(0)));
  EXPECT_EQ(text.find(out_param + "[row]", after_store), std::string::npos) << "reads back " << out_param << "\n" << text;
  EXPECT_NE(text.find("v_out"), std::string::npos) << text;
}

TEST(Codegen, ConcatenationOperandsAreVectorLoadedFromTheSelectedSide) {
  // rotate-half's cat reads x at clamped indices (min(c, 63) + 64 and max(c - 64, 0)): gathers per lane as written.
  // The cat's condition (c < 64) holds for all 8 lanes of a group or for none, so each group loads the taken side
  // with one 16-byte load from the address the condition selects, into one array both branches read.
  CompileOptions o = targeting("sm_90");
  CompiledGraph c = generate(test::rope_graph(64, 128, 64, DType::BFloat16), o);
  ASSERT_EQ(c.module.kernels.size(), 1u);
  std::string text = kernels_text(c.module);
  size_t vector_loads = 0;
  for (size_t at = text.find("hi_load_vec<8>"); at != std::string::npos; at = text.find("hi_load_vec<8>", at + 1))
    ++vector_loads;
  EXPECT_EQ(vector_loads, 4u) << "x, cos, sin and the cat's selected side\n" << text;
  EXPECT_NE(text.find(") < 64) ? in_ptr0 + ("), std::string::npos) << text;
  EXPECT_EQ(text.find("hi_imin", text.find("for (int q = 0;")), std::string::npos)
      << "clamped per-lane loads left in the element loop\n" << text;
  // A seam inside vector groups (59 of 96) leaves the per-lane loads.
  std::string straddling = kernels_text(generate(test::rope_graph(64, 96, 59, DType::BFloat16), o).module);
  EXPECT_EQ(straddling.find(") ? in_ptr0 + ("), std::string::npos) << straddling;
}

TEST(Codegen, VectorAccessesProvenAlignedSkipTheRunTimeCheck) {
  // With the graph's promise that inputs' first elements and outputs are 16-byte aligned, groups of 4 floats a
  // multiple of 4 elements from the first are aligned (whatever the storage offset); rows 33 floats apart are not.
  auto kernels = [](int64_t align, int64_t row_stride) {
    test::GraphBuilder g;
    ValueRef x = g.input("x", DType::Float32, {64, 32}, {row_stride, 1}, 3);
    ValueRef y = g.input("y", DType::Float32, {64, 32});
    g.output(g.call("aten.add.Tensor", {A(x), A(y)}, DType::Float32, {64, 32}));
    Graph graph = g.graph();
    graph.align = align;
    CompileOptions o = targeting("sm_90");
    return kernels_text(generate(graph, o).module);
  };
  std::string aligned = kernels(16, 32);
  EXPECT_NE(aligned.find("hi_load_vec_aligned<4>(in_ptr0"), std::string::npos) << aligned;
  EXPECT_NE(aligned.find("hi_store_vec_aligned<4>(out_ptr"), std::string::npos) << aligned;
  std::string unknown = kernels(0, 32);
  EXPECT_EQ(unknown.find("_aligned<"), std::string::npos) << unknown;
  std::string shifted = kernels(16, 33);
  EXPECT_NE(shifted.find("hi_load_vec_aligned<4>(in_ptr1"), std::string::npos) << shifted;
  EXPECT_EQ(shifted.find("hi_load_vec_aligned<4>(in_ptr0"), std::string::npos) << shifted;
}

TEST(Codegen, LoadsCarryInductorsEvictionHints) {
  // Weights that every row reads stay in L2 (evict last); rows held in registers and pointwise operands carry no
  // hint; what a column reduction reads once goes first.
  CompileOptions o = targeting("sm_90");
  Graph ln = test::layer_norm_graph(64, 256, false);
  ln.align = 16;
  std::string rows = kernels_text(generate(ln, o).module);
  EXPECT_NE(rows.find("hi_load_vec_aligned<4, HI_EVICT_LAST>(in_ptr1"), std::string::npos) << rows;
  EXPECT_NE(rows.find("hi_load_vec_aligned<4, HI_EVICT_LAST>(in_ptr2"), std::string::npos) << rows;
  EXPECT_NE(rows.find("hi_load_vec_aligned<4>(in_ptr0"), std::string::npos) << rows;

  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {32, 131072});
  g.output(g.call("aten.sum.dim_IntList", {A(x), L({0})}, DType::Float32, {131072}));
  g.output(g.call("aten.relu.default", {A(x)}, DType::Float32, {32, 131072}));
  std::string mixed = kernels_text(generate(g.graph(), o).module);
  EXPECT_NE(mixed.find("hi_load_vec<4, HI_EVICT_FIRST>(in_ptr0"), std::string::npos) << mixed;
  EXPECT_NE(mixed.find("hi_load_vec<4>(in_ptr0"), std::string::npos) << "the relu kernel's load\n" << mixed;
}

TEST(Codegen, RowsOfAWarpShareSmallBlocksWhereWarpsAre32Wide) {
  // Rows of 1024 bf16 (128 groups of 8) take a warp each: two rows per 64-thread block on sm_90, four rows per
  // 256-thread block (a wave each) on gfx942 and gfx90a.
  struct Case {
    const char* arch;
    int block, lanes;
    int64_t grid;
  };
  for (const Case& want : {Case{"sm_90", 64, 32, 48}, Case{"gfx942", 256, 64, 24}, Case{"gfx90a", 256, 64, 24}}) {
    CompiledGraph c = generate(test::softmax_graph(96, 1024, DType::BFloat16), targeting(want.arch));
    ASSERT_EQ(c.module.kernels.size(), 1u) << want.arch;
    const EmittedKernel& k = c.module.kernels[0];
    std::string text = kernels_text(c.module);
    EXPECT_EQ(k.block, want.block) << want.arch << "\n" << text;
    EXPECT_EQ(k.grid.as_const(), std::optional<int64_t>(want.grid)) << want.arch << "\n" << text;
    EXPECT_NE(text.find("persistent rows: " + std::to_string(want.lanes) + " threads per row"), std::string::npos)
        << want.arch << "\n" << text;
    EXPECT_NE(text.find("row_ok"), std::string::npos) << want.arch << "\n" << text;
  }
}

TEST(Codegen, BlockRowReductionsStoreTheirPartialsWithoutABarrierFirst) {
  // LayerNorm's two reductions per row keep one shared array each; RMSNorm's one reduction alternates the halves of
  // a doubled array from row to row. Neither puts a barrier before storing the warps' partials.
  CompileOptions o = targeting("sm_90");
  std::string ln = kernels_text(generate(test::layer_norm_graph(64, 4096, false), o).module);
  EXPECT_EQ(ln.find("hi_block_reduce<"), std::string::npos) << ln;
  EXPECT_NE(ln.find("hi_block_reduce_free<hi_deviation_sums_op>(acc_buf1, smem_buf1)"), std::string::npos) << ln;
  EXPECT_EQ(ln.find("smem_half"), std::string::npos) << ln;

  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {64, 4096});
  ValueRef sq = g.call("aten.mul.Tensor", {A(x), A(x)}, DType::Float32, {64, 4096});
  ValueRef ms = g.call("aten.mean.dim", {A(sq), L({-1}), B(true)}, DType::Float32, {64, 1});
  ValueRef r = g.call("aten.rsqrt.default", {A(ms)}, DType::Float32, {64, 1});
  g.output(g.call("aten.mul.Tensor", {A(x), A(r)}, DType::Float32, {64, 4096}));
  std::string rms = kernels_text(generate(g.graph(), o).module);
  EXPECT_NE(rms.find("[2 * 8];"), std::string::npos) << rms;
  EXPECT_NE(rms.find("+ smem_half * 8)"), std::string::npos) << rms;
  size_t toggle = rms.find("smem_half ^= 1;");
  ASSERT_NE(toggle, std::string::npos) << rms;
  EXPECT_GT(toggle, rms.find("hi_store_vec")) << "toggled at the end of the row\n" << rms;
}

TEST(Codegen, RowsOfSixteenBitValuesHoldFourVectorsPerThread) {
  // LayerNorm over 4096 bf16 keeps 32 values per thread in registers (128 threads per row; 256 were measured slower
  // on the H200); over 4096 f32, 16 values (256 threads); over 2048 bf16 too, 16 (128 threads rather than 64).
  for (const char* arch : {"sm_90", "gfx942"}) {
    CompiledGraph c = generate(test::layer_norm_graph(64, 4096, false, DType::BFloat16), targeting(arch));
    ASSERT_EQ(c.module.kernels.size(), 1u) << arch;
    std::string text = kernels_text(c.module);
    EXPECT_EQ(c.module.kernels[0].block, 128) << arch << "\n" << text;
    EXPECT_NE(text.find("128 threads per row, 32 values per thread"), std::string::npos) << arch << "\n" << text;
    c = generate(test::layer_norm_graph(64, 4096, false), targeting(arch));
    text = kernels_text(c.module);
    EXPECT_NE(text.find("256 threads per row, 16 values per thread"), std::string::npos) << arch << "\n" << text;
    if (parse_target(arch).warp_size != 32) continue;  // wave64: 2048 bf16 is a wave's row (64 threads, 32 values)
    c = generate(test::layer_norm_graph(64, 2048, false, DType::BFloat16), targeting(arch));
    text = kernels_text(c.module);
    EXPECT_NE(text.find("128 threads per row, 16 values per thread"), std::string::npos) << arch << "\n" << text;
  }
}

TEST(Codegen, PlainRowReductionsStreamRowsOverTheWholeGrid) {
  // A row reduction that writes one value per row (sum over 4096 f32) is shaped as Triton's: 8 values per thread
  // (512 threads per row), evict-first loads, every block launched. A kernel that writes rows too (softmax) keeps
  // 16 values per thread, plain loads and the capped grid; pointwise kernels launch their whole grid.
  CompileOptions o = targeting("sm_90");
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {64, 4096});
  g.output(g.call("aten.sum.dim_IntList", {A(x), L({Index(-1)})}, DType::Float32, {64}));
  Graph sum = g.graph();
  sum.align = 16;
  CompiledGraph c = generate(sum, o);
  ASSERT_EQ(c.module.kernels.size(), 1u);
  const EmittedKernel& k = c.module.kernels[0];
  std::string text = kernels_text(c.module);
  EXPECT_TRUE(k.whole_grid) << text;
  EXPECT_EQ(k.block, 512) << text;
  EXPECT_NE(text.find("hi_load_vec_aligned<4, HI_EVICT_FIRST>(in_ptr0"), std::string::npos) << text;

  Graph softmax = test::softmax_graph(64, 4096);
  softmax.align = 16;
  c = generate(softmax, o);
  ASSERT_EQ(c.module.kernels.size(), 1u);
  text = kernels_text(c.module);
  EXPECT_FALSE(c.module.kernels[0].whole_grid) << text;
  EXPECT_EQ(c.module.kernels[0].block, 256) << text;
  EXPECT_EQ(text.find("HI_EVICT_FIRST>(in_ptr0"), std::string::npos) << text;

  test::GraphBuilder r;
  ValueRef z = r.input("z", DType::Float32, {64, 4096});
  r.output(r.call("aten.relu.default", {A(z)}, DType::Float32, {64, 4096}));
  c = generate(r.graph(), o);
  ASSERT_EQ(c.module.kernels.size(), 1u);
  EXPECT_TRUE(c.module.kernels[0].whole_grid);
}

TEST(Codegen, IndicesAre64BitWhereTheGridStrideStepCouldPass2To31) {
  // Over the whole grid a loop index below n steps by about n once more before the loop test ends it: 32-bit
  // indices only while 2n stays below 2^31 (2^30 + 5 elements once took int and wrapped negative past 2^31).
  CompileOptions o = targeting("sm_90");
  for (int64_t n : {int64_t{1} << 29, (int64_t{1} << 30) + 5}) {
    test::GraphBuilder g;
    ValueRef x = g.input("x", DType::Float32, {n});
    g.output(g.call("aten.relu.default", {A(x)}, DType::Float32, {n}));
    std::string text = kernels_text(generate(g.graph(), o).module);
    const bool wide = n > (int64_t{1} << 29);
    EXPECT_EQ(text.find("for (hi_i64 ") != std::string::npos, wide) << n << "\n" << text;
    EXPECT_EQ(text.find("for (int ") != std::string::npos && text.find("gridDim") != std::string::npos &&
                  text.find("for (hi_i64 ") == std::string::npos,
              !wide) << n << "\n" << text;
  }
}

TEST(Codegen, PointwiseKernelsWalkTransposedOutputsInMemoryOrder) {
  // q viewed (b, h, t, d) over (b, t, h, d) memory: the flat index follows memory, so x and the output are read and
  // written at 4 * g (one vector access, no div/mod), and only cos / sin need the coordinates.
  CompileOptions o = targeting("sm_90");
  CompiledGraph c = generate(test::transposed_rope_graph(2, 64, 4, 128), o);
  ASSERT_EQ(c.program.kernels.size(), 1u);
  EXPECT_EQ(c.program.kernels[0].loop_order, (std::vector<int>{0, 2, 1, 3}));
  std::string text = kernels_text(c.module);
  EXPECT_NE(text.find("hi_load_vec<4>(in_ptr0 + (g*4)"), std::string::npos) << text;
  EXPECT_NE(text.find("hi_store_vec<4>(out_ptr3 + (g*4)"), std::string::npos) << text;
}

TEST(Codegen, FewColumnOutputsShareABlockAcrossRowSlices) {
  // 99 columns: rows 396 bytes apart, so no vector groups.
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {4096, 99});
  g.output(g.call("aten.sum.dim_IntList", {A(x), L({0})}, DType::Float32, {99}));
  CompileOptions o = targeting("sm_90");
  o.split.enabled = false;
  CompiledGraph c = generate(g.graph(), o);
  ASSERT_EQ(c.module.kernels.size(), 1u);
  std::string text = kernels_text(c.module);
  EXPECT_NE(text.find("32 outputs x 8 row slices per block"), std::string::npos) << text;
  EXPECT_TRUE(c.module.kernels[0].needs_sync) << "shared-memory slices need __syncthreads";
  EXPECT_EQ(c.module.kernels[0].block, 256);
}

TEST(Codegen, SplitColumnSumSlicesRowsAcrossBlocksWithVectorLoads) {
  // x[16384,4096].sum(0): stage 1 (16 partials of 1024 rows) keeps 4 outputs per thread, one 16-byte load per row,
  // and 16 row slices per 1024-thread block (64k threads otherwise); stage 2 (16 partials) slices 4 rows each, in
  // blocks of 16 groups so that 64 blocks run.
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {16384, 4096});
  g.output(g.call("aten.sum.dim_IntList", {A(x), L({0})}, DType::Float32, {4096}));
  CompileOptions o = targeting("sm_90");
  CompiledGraph c = generate(g.graph(), o);
  ASSERT_EQ(c.module.kernels.size(), 2u);
  std::string text = kernels_text(c.module);
  EXPECT_NE(text.find("4 outputs per thread, 64 threads x 16 row slices per block"), std::string::npos) << text;
  EXPECT_NE(text.find("hi_load_vec_aligned<4, HI_EVICT_FIRST>"), std::string::npos) << text;
  EXPECT_NE(text.find("4 outputs per thread, 16 threads x 4 row slices per block"), std::string::npos) << text;
  EXPECT_EQ(c.module.kernels[0].block, 1024);
  EXPECT_EQ(c.module.kernels[1].block, 64);
  EXPECT_EQ(c.module.kernels[1].grid, Index(64));
  EXPECT_TRUE(c.module.kernels[0].needs_sync);
  EXPECT_EQ(c.program.workspace_bytes, 16 * 4096 * 4);
}

TEST(Codegen, ColumnVectorSlicesKeepEnoughBlocks) {
  // x[2048,4096].sum(0) is not split (2048 rows): its 1024 groups of 4 outputs take 8 groups x 128 row slices per
  // block, so 128 blocks run (64 groups per block would leave 16). On a wave-64 target too.
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {2048, 4096});
  g.output(g.call("aten.sum.dim_IntList", {A(x), L({0})}, DType::Float32, {4096}));
  for (const char* arch : {"sm_90", "gfx942"}) {
    CompileOptions o = targeting(arch);
    CompiledGraph c = generate(g.graph(), o);
    ASSERT_EQ(c.module.kernels.size(), 1u) << arch;
    EXPECT_NE(kernels_text(c.module).find("4 outputs per thread, 8 threads x 128 row slices"), std::string::npos)
        << arch << "\n" << kernels_text(c.module);
    EXPECT_EQ(c.module.kernels[0].grid, Index(128)) << arch;
    EXPECT_EQ(c.module.kernels[0].block, 1024) << arch;
  }
}

TEST(Codegen, PointwiseGroupsPerThreadCountLoadAndStoreArrays) {
  // One bf16 operand: 2 vector groups per thread (32 bytes); the same operand feeding six outputs: 1 (ten arrays of
  // groups at most); two f32 operands: 2 each; four: 1 (four load arrays at most).
  auto groups_per_thread = [](const Graph& graph) {
    CompileOptions o = targeting("sm_90");
    const std::string text = kernels_text(generate(graph, o).module);
    std::smatch m;
    return std::regex_search(text, m, std::regex("(\\d+) groups per thread")) ? m[1].str() : text;
  };
  test::GraphBuilder one;
  ValueRef a = one.input("a", DType::BFloat16, {4096, 1024});
  one.output(one.call_inferred("r", "aten.relu.default", {A(a)}));
  EXPECT_EQ(groups_per_thread(one.graph()), "2");
  test::GraphBuilder six;
  ValueRef b = six.input("b", DType::BFloat16, {4096, 1024});
  for (const char* op : {"relu", "sigmoid", "tanh", "exp", "neg", "abs"})
    six.output(six.call_inferred(op, std::string("aten.") + op + ".default", {A(b)}));
  EXPECT_EQ(groups_per_thread(six.graph()), "1");
  test::GraphBuilder two;
  ValueRef x = two.input("x", DType::Float32, {1 << 20});
  ValueRef y = two.input("y", DType::Float32, {1 << 20});
  two.output(two.call_inferred("s", "aten.add.Tensor", {A(x), A(y)}));
  EXPECT_EQ(groups_per_thread(two.graph()), "2");
  test::GraphBuilder four;
  std::vector<ValueRef> in;
  for (const char* name : {"p", "q", "r", "s"}) in.push_back(four.input(name, DType::Float32, {1 << 20}));
  ValueRef pq = four.call_inferred("pq", "aten.add.Tensor", {A(in[0]), A(in[1])});
  ValueRef rs = four.call_inferred("rs", "aten.mul.Tensor", {A(in[2]), A(in[3])});
  four.output(four.call_inferred("o", "aten.sub.Tensor", {A(pq), A(rs)}));
  EXPECT_EQ(groups_per_thread(four.graph()), "1");
}

TEST(Codegen, TranscendentalsOverFewElementsSpreadOverMoreThreads) {
  // RoPE's cos/sin of [1024, 128] bf16: 8-wide groups, 4 per thread, made 32 blocks whose threads each evaluated 64
  // sinf/cosf (16 us on the H200); two elements per thread now, 64k threads. The same size of relu (memory only)
  // keeps its 8-wide groups, and a large cos keeps them too.
  auto kernel_text = [](const Graph& graph) { return kernels_text(generate(graph, targeting("sm_90")).module); };
  test::GraphBuilder rope;
  ValueRef a = rope.input("a", DType::BFloat16, {1024, 128});
  rope.output(rope.call_inferred("c", "aten.cos.default", {A(a)}));
  rope.output(rope.call_inferred("s", "aten.sin.default", {A(a)}));
  const std::string small = kernel_text(rope.graph());
  EXPECT_NE(small.find("2 elements per vector group, 1 groups per thread"), std::string::npos) << small;
  test::GraphBuilder relu;
  ValueRef r = relu.input("r", DType::BFloat16, {1024, 128});
  relu.output(relu.call_inferred("y", "aten.relu.default", {A(r)}));
  const std::string memory = kernel_text(relu.graph());
  EXPECT_NE(memory.find("8 elements per vector group, 2 groups per thread"), std::string::npos) << memory;
  test::GraphBuilder big;
  ValueRef b = big.input("b", DType::BFloat16, {8192, 1024});
  big.output(big.call_inferred("c", "aten.cos.default", {A(b)}));
  const std::string large = kernel_text(big.graph());
  EXPECT_NE(large.find("8 elements per vector group, 2 groups per thread"), std::string::npos) << large;
}

TEST(Codegen, DivisionByOneIsNoDivision) {
  // LayerNorm over rows of one element: its mean sum / 1 must be the element itself, which NVIDIA's approximate
  // division (hi_div) need not give; x / 1 is printed as x.
  CompileOptions o = targeting("sm_90");
  std::string ln = kernels_text(generate(test::layer_norm_graph(8, 1, false), o).module);
  EXPECT_EQ(ln.find("hi_div(v_"), std::string::npos) << ln;  // the row sum divided by its count, 1
  EXPECT_NE(ln.find("hi_rsqrt"), std::string::npos) << ln;
}

}  // namespace
}  // namespace hi
