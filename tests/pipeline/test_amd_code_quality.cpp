// AMD code quality without an AMD GPU: representative graphs are compiled through the real HIPRTC for gfx90a and
// gfx942 (CDNA, wave 64) and gfx1100 (RDNA3, the Radeon target, wave 32), and each kernel's code object is checked
// (comgr metadata and ISA disassembly):
//   - no scratch and no VGPR/SGPR spills;
//   - VGPR use that allows at least 4 waves per SIMD (amd_waves_per_simd: VGPRs alone);
//   - the target's wave size (64 on gfx9, 32 on gfx11: the warp width the kernels were printed for);
//   - 16-byte memory instructions (global_load_dwordx4 / buffer_load_dwordx4, global_store_dwordx4 /
//     buffer_store_dwordx4; RDNA3 spells them global_load_b128 / global_store_b128) where a kernel reads or writes
//     contiguous f32/bf16 data: pointwise kernels, row kernels over contiguous rows, scans along contiguous lines.
// Each graph is compiled once per target (the fixture cache below) and shared by every assertion. Skipped only when
// HIPRTC cannot be loaded (comgr comes with it).
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <tuple>

#include "runtime/amd_code_object.h"
#include "runtime/compiler.h"
#include "tests/common/graph_builder.h"
#include "pipeline/compile_graph.h"

namespace hi {
namespace {

using test::A;
using test::B;
using test::F;
using test::I;
using test::L;
using test::S;

// ---- graphs ----------------------------------------------------------------------------------------------------

/// masked_fill: a bool mask beside f32 data (4-byte mask and 16-byte f32 accesses per group).
Graph masked_fill_f32(int64_t rows, int64_t cols) {
  test::GraphBuilder g;
  std::vector<Index> s{rows, cols};
  ValueRef x = g.input("x", DType::Float32, s);
  ValueRef m = g.input("m", DType::Bool, s);
  ValueRef zero = g.call("aten.mul.Scalar", {A(x), F(0.0)}, DType::Float32, s);
  g.output(g.call("aten.where.self", {A(m), A(zero), A(x)}, DType::Float32, s));
  return g.graph();
}

/// interpolate(x, scale_factor=2, mode="nearest") as the decomposition writes it: each output's source row and
/// column from arange(2h) * 0.5 converted to int64, then index.Tensor (gathered loads, vector stores).
Graph upsample_nearest_bf16(int64_t n, int64_t c, int64_t h) {
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::BFloat16, {n, c, h, h});
  ValueRef a = g.call("aten.arange.default", {I(2 * h)}, DType::Float32, {2 * h}, {{"dtype", Arg::of(DType::Float32)}});
  ValueRef half = g.call("aten.mul.Scalar", {A(a), F(0.5)}, DType::Float32, {2 * h});
  ValueRef col = g.call("prims.convert_element_type.default", {A(half), Arg::of(DType::Int64)}, DType::Int64, {2 * h});
  ValueRef row = g.call("aten.unsqueeze.default", {A(col), I(-1)}, DType::Int64, {2 * h, 1});
  std::vector<std::optional<ValueRef>> at{std::nullopt, std::nullopt, row, col};
  g.output(g.call("aten.index.Tensor", {A(x), Arg{at}}, DType::BFloat16, {n, c, 2 * h, 2 * h}));
  return g.graph();
}

Graph add_relu_f32() {
  test::GraphBuilder g;
  std::vector<Index> s{1 << 20};
  ValueRef x = g.input("x", DType::Float32, s);
  ValueRef y = g.input("y", DType::Float32, s);
  ValueRef a = g.call("aten.add.Tensor", {A(x), A(y)}, DType::Float32, s);
  ValueRef r = g.call("aten.relu.default", {A(a)}, DType::Float32, s);
  g.output(r);
  return g.graph();
}

/// x.transpose(1, 2) * 2, contiguous: the pointwise kernel reads x transposed, through shared-memory tiles.
Graph transpose_bf16(int64_t b, int64_t m, int64_t n) {
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::BFloat16, {b, m, n});
  ValueRef t = g.call("aten.transpose.int", {A(x), I(1), I(2)}, DType::BFloat16, {b, n, m});
  ValueRef y = g.call("aten.mul.Tensor", {A(t), F(2.0)}, DType::BFloat16, {b, n, m});
  g.output(y);
  return g.graph();
}

Graph gelu_bf16() {
  test::GraphBuilder g;
  std::vector<Index> s{1024, 1024};
  ValueRef x = g.input("x", DType::BFloat16, s);
  ValueRef y = g.call("aten.gelu.default", {A(x)}, DType::BFloat16, s, {{"approximate", S("tanh")}});
  g.output(y);
  return g.graph();
}

/// x * rsqrt(mean(x^2, -1) + eps) * w, computed in float as RMSNorm modules do (x.float() ... .to(bf16) * w).
/// A long math function over a large tensor (lgamma, digamma: branches and loops per element), at most 8 elements per
/// thread.
Graph long_math(const char* op, DType dtype) {
  test::GraphBuilder g;
  ValueRef x = g.input("x", dtype, {4096, 4096});
  g.output(g.call(op, {A(x)}, dtype, {4096, 4096}));
  return g.graph();
}

Graph rms_norm_bf16(int64_t rows, int64_t cols) {
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::BFloat16, {rows, cols});
  ValueRef w = g.input("w", DType::BFloat16, {cols});
  ValueRef xf = g.call("prims.convert_element_type.default", {A(x), Arg::of(DType::Float32)}, DType::Float32,
                       {rows, cols});
  ValueRef sq = g.call("aten.mul.Tensor", {A(xf), A(xf)}, DType::Float32, {rows, cols});
  ValueRef ms = g.call("aten.mean.dim", {A(sq), L({-1}), B(true)}, DType::Float32, {rows, 1});
  ValueRef eps = g.call("aten.add.Scalar", {A(ms), F(1e-6)}, DType::Float32, {rows, 1});
  ValueRef rs = g.call("aten.rsqrt.default", {A(eps)}, DType::Float32, {rows, 1});
  ValueRef n = g.call("aten.mul.Tensor", {A(xf), A(rs)}, DType::Float32, {rows, cols});
  ValueRef nb = g.call("prims.convert_element_type.default", {A(n), Arg::of(DType::BFloat16)}, DType::BFloat16,
                       {rows, cols});
  ValueRef y = g.call("aten.mul.Tensor", {A(nb), A(w)}, DType::BFloat16, {rows, cols});
  g.output(y);
  return g.graph();
}

Graph row_sum_f32(int64_t rows, int64_t cols) {
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {rows, cols});
  ValueRef s = g.call("aten.sum.dim_IntList", {A(x), L({-1})}, DType::Float32, {rows});
  g.output(s);
  return g.graph();
}

Graph column_sum_f32(int64_t rows, int64_t cols) {
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {rows, cols});
  ValueRef s = g.call("aten.sum.dim_IntList", {A(x), L({0})}, DType::Float32, {cols});
  g.output(s);
  return g.graph();
}

/// aten.var_mean (correction 0, keepdim) of an f32 tensor over `dims`, `strides` its layout (contiguous if empty).
Graph var_mean_f32(std::vector<Index> sizes, std::vector<Index> dims, std::vector<Index> strides = {}) {
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, std::move(sizes), std::move(strides));
  ValueRef vm = g.call_inferred("vm", "aten.var_mean.correction", {A(x), L(std::move(dims))},
                                {{"correction", F(0.0)}, {"keepdim", B(true)}});
  g.output(vm);
  g.output(ValueRef{vm.node, 1});
  return g.graph();
}

/// aten.var (correction 1) of a `dtype` tensor over `dims`.
Graph var_of(DType dtype, std::vector<Index> sizes, std::vector<Index> dims) {
  test::GraphBuilder g;
  ValueRef x = g.input("x", dtype, std::move(sizes));
  g.output(g.call_inferred("v", "aten.var.correction", {A(x), L(std::move(dims))}, {{"correction", F(1.0)}}));
  return g.graph();
}

/// aten.mean of a `dtype` tensor over `dims`: a sum, then its division and cast as the column kernel's epilogue.
Graph mean_of(DType dtype, std::vector<Index> sizes, std::vector<Index> dims) {
  test::GraphBuilder g;
  ValueRef x = g.input("x", dtype, std::move(sizes));
  g.output(g.call_inferred("m", "aten.mean.dim", {A(x), L(std::move(dims))}));
  return g.graph();
}

/// any over `dim` of an f32 tensor: f32 loads, bool stores.
Graph any_f32(std::vector<Index> sizes, int64_t dim) {
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, std::move(sizes));
  g.output(g.call_inferred("a", "aten.any.dim", {A(x), I(dim)}));
  return g.graph();
}

/// argmax (`is_max`) or argmin of a rows x cols tensor over `dim`.
Graph arg_reduction_f32(int64_t rows, int64_t cols, int64_t dim, bool is_max) {
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {rows, cols});
  g.output(g.call(is_max ? "aten.argmax.default" : "aten.argmin.default", {A(x), I(dim)}, DType::Int64,
                  {dim == 0 ? cols : rows}));
  return g.graph();
}

/// torch.max(x, -1): values and indices, one {value, position} reduction per row.
Graph max_with_indices(int64_t rows, int64_t cols, DType dtype) {
  test::GraphBuilder g;
  ValueRef x = g.input("x", dtype, {rows, cols});
  ValueRef m = g.call_multi("aten.max.dim", {A(x), I(-1)}, {{dtype, {rows}}, {DType::Int64, {rows}}});
  g.output(m);
  g.output(ValueRef{m.node, 1});
  return g.graph();
}

/// A scan (`op`: cumsum, logcumsumexp) along `dim` of a rows x cols tensor.
Graph scan(const char* op, int64_t rows, int64_t cols, int64_t dim, DType dtype) {
  test::GraphBuilder g;
  ValueRef x = g.input("x", dtype, {rows, cols});
  g.output(g.call(op, {A(x), I(dim)}, dtype, {rows, cols}));
  return g.graph();
}

/// cummax along the rows: a values scan, then an index scan reading the input and the values.
Graph cummax_rows_f32(int64_t rows, int64_t cols) {
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {rows, cols});
  ValueRef m = g.call_multi("aten.cummax.default", {A(x), I(1)},
                            {{DType::Float32, {rows, cols}}, {DType::Int64, {rows, cols}}});
  g.output(m);
  g.output(ValueRef{m.node, 1});
  return g.graph();
}

Graph group_norm_f32(int64_t n, int64_t c, int64_t hw, int64_t groups) {
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {n, c, hw, hw});
  ValueRef w = g.input("w", DType::Float32, {c});
  ValueRef b = g.input("b", DType::Float32, {c});
  g.output(g.call_inferred("gn", "aten.native_group_norm.default",
                           {test::A(x), test::A(w), test::A(b), test::I(n), test::I(c), test::I(hw * hw),
                            test::I(groups), test::F(1e-5)}));
  return g.graph();
}

Graph log_softmax_f32(int64_t rows, int64_t cols) {
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {rows, cols});
  g.output(g.call("aten._log_softmax.default", {test::A(x), test::I(-1), test::B(false)}, DType::Float32,
                  {rows, cols}));
  return g.graph();
}

/// Cross entropy's mean over the rows of -log_softmax(x)[row, target[row]]: the row kernel takes the max and the
/// sum of exp in one pass (rows of GPT-2's vocabulary, peeled), the loss kernel gathers x at the targets.
Graph cross_entropy_f32(int64_t rows, int64_t cols) {
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {rows, cols});
  ValueRef target = g.input("target", DType::Int64, {rows});
  ValueRef lsm = g.call("aten._log_softmax.default", {test::A(x), test::I(-1), test::B(false)}, DType::Float32,
                        {rows, cols});
  ValueRef index = g.call("aten.unsqueeze.default", {test::A(target), test::I(1)}, DType::Int64, {rows, 1});
  ValueRef picked = g.call("aten.gather.default", {test::A(lsm), test::I(1), test::A(index)}, DType::Float32, {rows, 1});
  g.output(g.call("aten.mean.default", {test::A(g.call("aten.neg.default", {test::A(picked)}, DType::Float32,
                                                       {rows, 1}))},
                  DType::Float32, {}));
  return g.graph();
}

/// kl_div(log_softmax(a), log_softmax(b), log_target=True, reduction="batchmean"): both rows' statistics and the
/// row's share of the total in one row kernel (split_reductions' one piece per row), then the partials' sum.
Graph kl_div_f32(int64_t rows, int64_t cols) {
  test::GraphBuilder g;
  ValueRef a = g.input("a", DType::Float32, {rows, cols});
  ValueRef b = g.input("b", DType::Float32, {rows, cols});
  auto lsm = [&](ValueRef x) {
    return g.call("aten._log_softmax.default", {test::A(x), test::I(-1), test::B(false)}, DType::Float32,
                  {rows, cols});
  };
  ValueRef la = lsm(a), lb = lsm(b);
  ValueRef d = g.call("aten.sub.Tensor", {test::A(lb), test::A(la)}, DType::Float32, {rows, cols});
  ValueRef t = g.call("aten.mul.Tensor", {test::A(g.call("aten.exp.default", {test::A(lb)}, DType::Float32,
                                                         {rows, cols})),
                                          test::A(d)},
                      DType::Float32, {rows, cols});
  ValueRef total = g.call("aten.sum.default", {test::A(t)}, DType::Float32, {});
  g.output(g.call("aten.div.Tensor", {test::A(total), test::F(static_cast<double>(rows))}, DType::Float32, {}));
  return g.graph();
}

/// max_pool2d_with_indices(x, 3, 2, 1) of NCHW f32, values and int64 positions: window taps gathered lane by lane.
Graph max_pool_f32(int64_t n, int64_t c, int64_t hw) {
  test::GraphBuilder g;
  ValueRef x = g.input("x", DType::Float32, {n, c, hw, hw});
  const int64_t o = (hw + 2 - 3) / 2 + 1;
  ValueRef m = g.call_multi("aten.max_pool2d_with_indices.default", {A(x), L({3, 3}), L({2, 2}), L({1, 1})},
                            {{DType::Float32, {n, c, o, o}}, {DType::Int64, {n, c, o, o}}});
  g.output(m);
  g.output(ValueRef{m.node, 1});
  return g.graph();
}

struct QualityCase {
  std::string name;
  Graph graph;
  /// Kernels of this kind must use 16-byte loads / stores (contiguous f32/bf16 data, one kernel kind per graph).
  bool wide_loads = false;
  bool wide_stores = false;
};

const std::vector<QualityCase>& quality_cases() {
  static const std::vector<QualityCase> cases = {
      {"add_relu_f32", add_relu_f32(), true, true},
      {"gelu_bf16", gelu_bf16(), true, true},
      {"softmax_f32_8192", test::softmax_graph(1024, 8192, DType::Float32), true, true},
      {"softmax_bf16_1024", test::softmax_graph(4096, 1024, DType::BFloat16), true, true},
      {"layer_norm_bf16_4096", test::layer_norm_graph(2048, 4096, false, DType::BFloat16), true, true},
      {"rms_norm_bf16_4096", rms_norm_bf16(2048, 4096), true, true},
      {"row_sum_f32", row_sum_f32(4096, 4096), true, false},  // one value per row: no contiguous store
      // Rows no vector width divides, held in registers: peeled to vector groups from each row's aligned column.
      {"softmax_bf16_4099", test::softmax_graph(4093, 4099, DType::BFloat16), true, true},
      {"row_sum_odd_f32", row_sum_f32(4093, 4099), true, false},
      // LayerNorm rows no vector width divides: the weights, staged in LDS once per block, are read there in the
      // rows' phase, and the rows peeled to vector groups.
      {"layer_norm_odd_f32_1027", test::layer_norm_graph(4093, 1027, false), true, true},
      {"column_sum_f32", column_sum_f32(16384, 4096), false, false},
      {"rope_cat_bf16", test::rope_graph(8192, 128, 64, DType::BFloat16), true, true},  // x, cos, sin: 16 bytes
      // Tiles through LDS: 2-byte loads along the input's rows, 2-byte stores along the output's.
      {"transpose_bf16", transpose_bf16(64, 256, 512), false, false},
      // Scans: contiguous lines move in vector groups; lines down the columns (chunks) read a line per thread.
      {"cumsum_rows_f32", scan("aten.cumsum.default", 4096, 4096, 1, DType::Float32), true, true},
      {"cumsum_rows_bf16", scan("aten.cumsum.default", 4096, 4096, 1, DType::BFloat16), true, true},
      {"logcumsumexp_rows_f32", scan("aten.logcumsumexp.default", 4096, 1000, 1, DType::Float32), true, true},
      {"cumsum_columns_f32", scan("aten.cumsum.default", 4096, 4096, 0, DType::Float32), false, false},
      {"cummax_rows_f32", cummax_rows_f32(4096, 4096), true, false},  // int64 indices: reported only
      // Arg reductions read in vector groups: rows, and columns (split: each piece's max and position, then theirs;
      // unsplit: vector row slices). Odd rows (no vector width divides 4099) reported only; int64 indices likewise.
      {"argmax_rows_f32", arg_reduction_f32(4096, 4096, 1, true), true, false},
      {"argmin_rows_odd_f32", arg_reduction_f32(4093, 4099, 1, false), false, false},
      {"argmax_columns_f32", arg_reduction_f32(4096, 4096, 0, true), true, false},
      {"argmin_columns_sliced_f32", arg_reduction_f32(2048, 512, 0, false), true, false},
      {"max_with_indices_f32", max_with_indices(4096, 4096, DType::Float32), true, false},
      {"max_with_indices_bf16", max_with_indices(4096, 4096, DType::BFloat16), true, false},
      // Rows too wide to hold in registers stream in row loops: group norm's groups (Welford, weights by channel),
      // log_softmax over 32000 columns (online softmax), cross entropy (the loss kernel reads one element per row:
      // reported only).
      {"group_norm_f32_25088", group_norm_f32(32, 256, 56, 32), true, true},
      {"log_softmax_f32_32000", log_softmax_f32(524, 32000), true, true},
      {"cross_entropy_f32_50257", cross_entropy_f32(333, 50257), false, false},
      {"kl_div_batchmean_f32", kl_div_f32(4096, 4096), true, false},
      // Variance statistics over non-innermost dims take both sums in one Welford pass: split columns (pieces,
      // then their merge), unsplit columns (vector groups of outputs), batch-norm statistics of channels-last NHWC.
      {"var_mean_columns_split_f32", var_mean_f32({4096, 4096}, {0}), true, false},
      {"var_mean_columns_f32", var_mean_f32({512, 65536}, {0}), true, false},
      // 16-bit columns: a group's Welford steps share one weight, and rows unrolled further where shared memory
      // leaves fewer slices. f32 columns reduced to bool: loads of 16 bytes, whatever the stores.
      {"var_columns_split_bf16", var_of(DType::BFloat16, {4096, 4096}, {0}), true, false},
      {"any_columns_f32", any_f32({512, 65536}, 0), true, false},
      // Pointwise epilogues (mean's division, the cast to bf16) in the column kernel of the sum, split over dim 1 of
      // [64, 4096, 64] (stage 2 takes them) and unsplit over dim 0 of [512, 65536].
      {"mean_mid_dim_split_bf16", mean_of(DType::BFloat16, {64, 4096, 64}, {1}), true, false},
      {"mean_columns_bf16", mean_of(DType::BFloat16, {512, 65536}, {0}), true, false},
      {"batch_norm_stats_channels_last_f32",
       var_mean_f32({32, 64, 56, 56}, {0, 2, 3}, {Index(200704), Index(1), Index(3584), Index(64)}), false, false},
      // Pooling windows: taps gathered with one element per thread (fewest cache lines), reported only.
      {"max_pool2d_f32", max_pool_f32(8, 64, 112), false, false},
      // Pointwise streams of mixed widths (a bool mask beside f32), and gathers through computed int64 coordinates
      // (computed in int): 16-byte stores of the upsampled output, its gathered loads reported only.
      {"masked_fill_f32", masked_fill_f32(4096, 4096), true, true},
      // Long math functions, instruction-bound: 8 elements per thread keep their inlined bodies within the registers.
      {"lgamma_bf16", long_math("aten.lgamma.default", DType::BFloat16), true, true},
      {"digamma_f32", long_math("aten.digamma.default", DType::Float32), true, true},
      {"upsample_nearest_bf16", upsample_nearest_bf16(8, 64, 56), false, true},
  };
  return cases;
}

const char* const kTargets[] = {"gfx90a", "gfx942:sramecc+:xnack-", "gfx1100"};

// ---- compiled once per (graph, target) -------------------------------------------------------------------------

struct CompiledCase {
  std::string skip;  ///< non-empty: HIPRTC is unavailable, why
  std::shared_ptr<CompiledGraph> graph;
  std::vector<AmdKernelFacts> facts;
  std::string isa;
};

const CompiledCase& compiled(size_t case_index, const std::string& target_id) {
  static std::mutex mutex;
  static std::map<std::pair<size_t, std::string>, CompiledCase> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto key = std::make_pair(case_index, target_id);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  CompiledCase& c = cache[key];
  Target target = parse_target(target_id);
  try {
    compiler_for(target);
  } catch (const std::runtime_error& e) {
    c.skip = std::string("HIPRTC cannot be loaded: ") + e.what();
    return c;
  }
  const QualityCase& q = quality_cases().at(case_index);
  CompileOptions o;
  o.target = target;
  o.graph_name = q.name;
  c.graph = std::make_shared<CompiledGraph>(compile_graph(q.graph, o));
  c.facts = read_amd_kernel_facts(c.graph->code.binary, target);
  c.isa = disassemble_amd_code_object(c.graph->code.binary, target);
  return c;
}

std::string describe(const AmdKernelFacts& f) {
  std::ostringstream s;
  s << f.name << ": " << f.vgpr_count << " VGPRs (" << f.agpr_count << " AGPRs), " << f.sgpr_count << " SGPRs, "
    << f.lds_bytes << " B LDS, " << f.scratch_bytes << " B scratch, spills " << f.vgpr_spill_count << " VGPR / "
    << f.sgpr_spill_count << " SGPR, wave" << f.wavefront_size << ", " << f.waves_per_simd << " waves/SIMD";
  return s.str();
}

/// The disassembly of one kernel: from its symbol's label line ("<name>:" or "name:") to the next label of a
/// kernel symbol (a line ending in ">:" or a non-indented "x:" line that is not a local label).
std::string kernel_isa(const std::string& isa, const std::string& name) {
  std::istringstream in(isa);
  std::string line, out;
  bool inside = false;
  while (std::getline(in, line)) {
    bool label = !line.empty() && line.back() == ':' && line[0] != ' ' && line[0] != '\t' && line[0] != ';';
    if (label) {
      std::string sym = line.substr(0, line.size() - 1);
      size_t lt = sym.find('<');
      if (lt != std::string::npos) sym = sym.substr(lt + 1, sym.size() - lt - 2);
      bool local = sym.rfind(".L", 0) == 0 || sym.rfind("BB", 0) == 0 || sym.rfind("_L", 0) == 0;
      if (sym == name) {
        inside = true;
      } else if (inside && !local) {
        break;
      }
    }
    if (inside) out += line + "\n";
  }
  return out;
}

bool contains_any(const std::string& text, std::initializer_list<const char*> needles) {
  for (const char* n : needles)
    if (text.find(n) != std::string::npos) return true;
  return false;
}

/// Up to `before`/`after` lines around the first line containing one of `what` (else the first lines), for failures.
std::string lines_around(const std::string& text, std::initializer_list<const char*> what, int before = 8,
                         int after = 24) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  int hit = 0;
  for (size_t i = 0; i < lines.size() && hit == 0; ++i)
    if (contains_any(lines[i], what)) hit = static_cast<int>(i);
  std::string out;
  for (int i = std::max(0, hit - before); i < std::min<int>(static_cast<int>(lines.size()), hit + after); ++i)
    out += lines[i] + "\n";
  return out;
}

std::string memory_ops(const std::string& text, const char* prefix_global, const char* prefix_buffer) {
  std::map<std::string, int> counts;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    for (const char* p : {prefix_global, prefix_buffer}) {
      size_t at = l.find(p);
      if (at == std::string::npos) continue;
      size_t end = l.find_first_of(" \t", at);
      counts[l.substr(at, end == std::string::npos ? std::string::npos : end - at)]++;
    }
  }
  std::string out;
  for (auto& [op, n] : counts) out += (out.empty() ? "" : ", ") + op + " x" + std::to_string(n);
  return out.empty() ? "none" : out;
}

// ---- tests -----------------------------------------------------------------------------------------------------

class AmdCodeQuality : public ::testing::TestWithParam<std::tuple<size_t, const char*>> {
 protected:
  void SetUp() override {
    c_ = &compiled(std::get<0>(GetParam()), std::get<1>(GetParam()));
    if (!c_->skip.empty()) GTEST_SKIP() << c_->skip;
    ASSERT_EQ(c_->facts.size(), c_->graph->module.kernels.size()) << "kernels in the code object vs. emitted";
  }
  const QualityCase& q() const { return quality_cases().at(std::get<0>(GetParam())); }
  std::string target() const { return std::get<1>(GetParam()); }
  const CompiledCase* c_ = nullptr;
};

TEST_P(AmdCodeQuality, NoScratchNoSpills) {
  for (const AmdKernelFacts& f : c_->facts) {
    std::cout << "[ facts    ] " << q().name << " " << target() << " " << describe(f) << "\n";
    EXPECT_EQ(f.scratch_bytes, 0) << target() << " " << describe(f);
    EXPECT_EQ(f.vgpr_spill_count, 0) << target() << " " << describe(f);
    EXPECT_EQ(f.sgpr_spill_count, 0) << target() << " " << describe(f);
  }
}

TEST_P(AmdCodeQuality, AtLeastFourWavesPerSimd) {
  for (const AmdKernelFacts& f : c_->facts) {
    EXPECT_EQ(f.wavefront_size, parse_target(target()).warp_size) << target() << " " << describe(f);
    EXPECT_GE(f.waves_per_simd, 4) << target() << " " << describe(f);
  }
}

TEST_P(AmdCodeQuality, SixteenByteLoadsAndStoresForContiguousData) {
  for (const AmdKernelFacts& f : c_->facts) {
    std::string isa = kernel_isa(c_->isa, f.name);
    ASSERT_FALSE(isa.empty()) << "no disassembly for " << f.name << " in:\n" << c_->isa.substr(0, 4000);
    std::string loads = memory_ops(isa, "global_load", "buffer_load");
    std::string stores = memory_ops(isa, "global_store", "buffer_store");
    std::cout << "[ memory   ] " << q().name << " " << target() << " " << f.name << ": loads " << loads
              << "; stores " << stores << "\n";
    if (!q().wide_loads && !q().wide_stores) continue;  // reported only (column sums: strided in the reduced dim)
    if (q().wide_loads) {
      EXPECT_TRUE(contains_any(isa, {"global_load_dwordx4", "buffer_load_dwordx4", "global_load_b128",
                                     "buffer_load_b128"}))
          << target() << " " << describe(f) << "\nloads: " << loads << "\nISA around the first load:\n"
          << lines_around(isa, {"global_load", "buffer_load"});
    }
    if (q().wide_stores) {
      EXPECT_TRUE(contains_any(isa, {"global_store_dwordx4", "buffer_store_dwordx4", "global_store_b128",
                                     "buffer_store_b128"}))
          << target() << " " << describe(f) << "\nstores: " << stores << "\nISA around the first store:\n"
          << lines_around(isa, {"global_store", "buffer_store"});
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Graphs, AmdCodeQuality,
                         ::testing::Combine(::testing::Range<size_t>(0, quality_cases().size()),
                                            ::testing::ValuesIn(kTargets)),
                         [](const auto& info) {
                           std::string t = std::get<1>(info.param);
                           t = t.substr(0, t.find(':'));
                           return quality_cases().at(std::get<0>(info.param)).name + "_" + t;
                         });

}  // namespace
}  // namespace hi
