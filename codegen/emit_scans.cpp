// Scan kernels as their plans say (ScanPlan): a thread walking each line, or T threads per contiguous line taking V
// consecutive elements each per step. Either way every element is read once and written once.
#include "codegen/kernel_printer.h"

namespace hi::codegen_detail {

void KernelPrinter::emit_scan(const ScanPlan& plan) {
  const Computation& c = p_.computations[k_.computations.at(0)];
  const std::string I = index_type_, blk = std::to_string(plan_.block), lines = index(k_.numel),
                    len = index(k_.row_length);
  if (plan.form == ScanPlan::Form::LinesPerThread) {
    Expr body = kernel_body(c);
    const std::string functor = reduce_functor(body->reduce_op());
    const Accumulation a = accumulation(body);
    line("// a thread per line, walking it in order");
    open("for (" + I + " line = (" + I + ")blockIdx.x * " + blk + " + threadIdx.x; line < " + lines +
         "; line += (" + I + ")gridDim.x * " + blk + ")");
    line(a.type + " acc = " + functor + "::identity<" + a.type + ">();");
    line("#pragma unroll 4");
    open("for (" + I + " s = 0; s < " + len + "; ++s)");
    line("acc = " + functor + "::combine(acc, " + accumulated_element(body) + ");");
    store(c, "acc", a.result_dtype, kernel_store_index(c));
    close();
    close();
    return;
  }
  if (plan.form == ScanPlan::Form::LineChunks) {
    emit_scan_chunks(plan, c);
    return;
  }
  // ThreadsPerLine: step over the line's vector groups g (s = g*V + j), T threads per step each taking G consecutive
  // groups (G*V consecutive elements).
  const int v = plan.width, t = plan.threads, lpb = plan.lines_per_block, gpt = plan.groups_per_thread;
  const Index groups = simplify(floordiv(k_.row_length, Index(v)), p_.size_ranges);
  ranges_["g"] = groups.as_const() ? Range::loop(std::max<int64_t>(*groups.as_const(), 1)) : Range{0, std::nullopt};
  ranges_["j"] = Range::loop(v);
  std::vector<Expr> bodies;
  std::vector<Index> stores;
  lane_views({{"s", Index::var("g") * v + Index::var("j")}}, bodies, stores);
  const Expr& body = bodies[0];
  const std::string functor = reduce_functor(body->reduce_op());
  const Accumulation a = accumulation(body);
  const std::string vs = std::to_string(v), ts = std::to_string(t), ls = std::to_string(lpb), gs = index(groups),
                    es = std::to_string(v * gpt), gz = std::to_string(gpt);
  const std::string identity = functor + "::identity<" + a.type + ">()";
  auto combine = [&](const std::string& x, const std::string& y) { return functor + "::combine(" + x + ", " + y + ")"; };
  const bool ragged_lines = lpb > 1 && !(simplify(k_.numel, p_.size_ranges).as_const() &&
                                         *simplify(k_.numel, p_.size_ranges).as_const() % lpb == 0);
  const bool ragged_groups = !(groups.as_const() && *groups.as_const() % (int64_t{t} * gpt) == 0);
  line("// " + ls + " line(s) x " + ts + " threads per block, " + es + " consecutive elements per thread and step");
  line("const int t = threadIdx.x % " + ts + ";");
  // The block's lines move together (every lane of a warp reaches its shuffles); a spare lane past the last line
  // scans the last line again and stores nothing.
  open("for (" + I + " l0 = (" + I + ")blockIdx.x * " + ls + "; l0 < " + lines + "; l0 += (" + I + ")gridDim.x * " +
       ls + ")");
  if (lpb > 1) {
    line("const " + I + " own = l0 + threadIdx.x / " + ts + ";");
    if (ragged_lines) line("const " + I + " line = own < " + lines + " ? own : " + lines + " - 1;");
    else line("const " + I + " line = own;");
  } else {
    line("const " + I + " line = l0;");
  }
  line(a.type + " carry = " + identity + ";");
  open("for (" + I + " g0 = 0; g0 < " + gs + "; g0 += " + std::to_string(int64_t{t} * gpt) + ")");
  line(a.type + " acc[" + es + "];");
  // The thread's groups one after another: each group's first element continues from the last of the one before.
  auto each_group = [&]() {
    line("#pragma unroll");
    open("for (int q = 0; q < " + gz + "; ++q)");
    line("const " + I + " g = g0 + t * " + gz + " + q;");
  };
  each_group();
  open(ragged_groups ? "if (g < " + gs + ")" : "");
  if (v > 1) load_group(body, v);
  line("#pragma unroll");
  open("for (int j = 0; j < " + vs + "; ++j)");
  line("const " + a.type + " x = " + accumulated_element(body) + ";");
  line("const int e = q * " + vs + " + j;");
  line("acc[e] = e == 0 ? x : " + combine("acc[e > 0 ? e - 1 : 0]", "x") + ";");
  close();
  close();
  if (ragged_groups) {
    open("else");
    line("#pragma unroll");
    line("for (int j = 0; j < " + vs + "; ++j) acc[q * " + vs + " + j] = " + identity + ";");
    close();
  }
  close();
  line(a.type + " tot = acc[" + std::to_string(v * gpt - 1) + "], pre = " + identity + ";");
  emit_scan_across_threads(plan, functor, a.type);
  line("pre = " + combine("carry", "pre") + ";");
  line("carry = " + combine("carry", "tot") + ";");
  line("#pragma unroll");
  line("for (int e = 0; e < " + es + "; ++e) acc[e] = " + combine("pre", "acc[e]") + ";");
  std::string guard;
  if (ragged_groups) guard = "g < " + gs;
  if (ragged_lines) guard += std::string(guard.empty() ? "" : " && ") + "own < " + lines;
  each_group();
  open(guard.empty() ? "" : "if (" + guard + ")");
  line(a.type + "* const group = acc + q * " + vs + ";");
  store_group(0, "group", a, stores[0], v);
  close();
  close();
  close();
  close();
  local_value_.clear();
}

void KernelPrinter::emit_scan_chunks(const ScanPlan& plan, const Computation& c) {
  Expr body = kernel_body(c);
  const std::string I = index_type_, functor = reduce_functor(body->reduce_op());
  const Accumulation a = accumulation(body);
  const int64_t lines = *simplify(k_.numel, p_.size_ranges).as_const();
  const int64_t length = *simplify(k_.row_length, p_.size_ranges).as_const();
  const int64_t chunk = (length + plan.chunks - 1) / plan.chunks;
  const std::string tx = std::to_string(plan.lines_per_block), ty = std::to_string(plan.chunks),
                    ls = std::to_string(lines), len = std::to_string(length), cs = std::to_string(chunk);
  const std::string identity = functor + "::identity<" + a.type + ">()";
  const bool ragged = lines % plan.lines_per_block != 0;
  line("// " + tx + " neighbouring lines x " + ty + " chunks of " + cs + " per block");
  line("const int tx = threadIdx.x % " + tx + ", ty = threadIdx.x / " + tx + ";");
  line("__shared__ " + a.type + " scan_totals[" + ty + "][" + tx + "];");
  open("for (" + I + " l0 = (" + I + ")blockIdx.x * " + tx + "; l0 < " + ls + "; l0 += (" + I + ")gridDim.x * " +
       tx + ")");
  // A spare lane past the last line scans the last line again (its loads stay in bounds) and stores nothing.
  line("const " + I + " own = l0 + tx;");
  line("const " + I + " line = " + (ragged ? "own < " + ls + " ? own : " + ls + " - 1;" : std::string("own;")));
  line("const " + I + " s0 = (" + I + ")ty * " + cs + ", s1 = hi_imin(s0 + " + cs + ", (" + I + ")" + len + ");");
  line(a.type + " acc = " + identity + ";");
  open("for (" + I + " s = s0; s < s1; ++s)");
  line("acc = " + functor + "::combine(acc, " + accumulated_element(body) + ");");
  close();
  line("scan_totals[ty][tx] = acc;");
  line("__syncthreads();");
  line("acc = " + identity + ";");
  line("for (int y = 0; y < ty; ++y) acc = " + functor + "::combine(acc, scan_totals[y][tx]);");
  // The next lines' totals reuse the array only after every thread has read these.
  line("__syncthreads();");
  open("for (" + I + " s = s0; s < s1; ++s)");
  line("acc = " + functor + "::combine(acc, " + accumulated_element(body) + ");");
  if (ragged) {
    open("if (own < " + ls + ")");
    store(c, "acc", a.result_dtype, kernel_store_index(c));
    close();
  } else {
    store(c, "acc", a.result_dtype, kernel_store_index(c));
  }
  close();
  close();
}

void KernelPrinter::emit_scan_across_threads(const ScanPlan& plan, const std::string& functor,
                                             const std::string& type) {
  auto combine = [&](const std::string& x, const std::string& y) { return functor + "::combine(" + x + ", " + y + ")"; };
  const int warp = target_.warp_size, within = std::min(plan.threads, warp);
  // A butterfly over xor partners: after the step with partner t ^ o, `tot` is the total of t's aligned group of
  // 2o threads and `pre` that of the threads of the group before t. Only xor shuffles, which every target has.
  for (int o = 1; o < within; o *= 2) {
    const std::string os = std::to_string(o);
    open("");
    line("const " + type + " other = hi_shfl_xor(tot, " + os + ");");
    line("if (t & " + os + ") { pre = " + combine("other", "pre") + "; tot = " + combine("other", "tot") +
         "; } else { tot = " + combine("tot", "other") + "; }");
    close();
  }
  if (plan.threads <= warp) return;
  // The warps of a line meet in shared memory (a row of totals per line of the block): each adds the totals of the
  // warps before it, in order, and all take the line's total.
  const int warps = plan.threads / warp;
  const std::string ws = std::to_string(warps), wz = std::to_string(warp), ts = std::to_string(plan.threads),
                    ls = std::to_string(plan.lines_per_block);
  line("__shared__ " + type + " scan_totals[" + ls + "][" + ws + "];");
  const std::string row = "scan_totals[threadIdx.x / " + ts + "]";
  line("if (threadIdx.x % " + wz + " == 0) " + row + "[t / " + wz + "] = tot;");
  line("__syncthreads();");
  open("");
  line(type + " before = " + functor + "::identity<" + type + ">();");
  line("tot = " + functor + "::identity<" + type + ">();");
  open("for (int w = 0; w < " + ws + "; ++w)");
  line("if (w < t / " + wz + ") before = " + combine("before", row + "[w]") + ";");
  line("tot = " + combine("tot", row + "[w]") + ";");
  close();
  line("pre = " + combine("before", "pre") + ";");
  close();
  // The next step's totals reuse the array only after every thread has read these.
  line("__syncthreads();");
}

}  // namespace hi::codegen_detail
