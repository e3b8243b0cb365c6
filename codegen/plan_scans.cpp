// Plans of scan kernels (cumsum, cumprod, cummax / cummin, logcumsumexp): which way the threads walk the lines.
#include <algorithm>

#include "codegen/kernel_lanes.h"
#include "codegen/plan_shapes.h"

namespace hi::codegen_detail {

namespace {

/// Threads per block of scan kernels: a line's threads (or several lines' when a line needs fewer) share one.
constexpr int kScanBlock = 256;
/// Threads below which strided lines are cut into chunks (about a quarter of an H200's resident threads), the most
/// chunks per line, and the fewest elements a chunk keeps.
constexpr int64_t kMinScanThreads = 65536;
constexpr int kMaxChunks = 32;
constexpr int64_t kMinChunk = 16;
/// Elements a thread of a contiguous line scans per step (G vector groups of V) when the combine is a transcendental
/// one (logcumsumexp's log(exp(a) + exp(b))): each step also scans the T threads' totals across the line (2
/// log2(min(T, warp)) combines per thread in butterflies, and one or two per warp of the line through shared memory)
/// whatever a thread took, so with one vector group per thread most of the combines went there: logcumsumexp over
/// f32 rows of 4096 took 9 combines per element and 0.271 ms on the H200 (0.89x Inductor), with 16 elements per
/// thread 0.105 ms (bf16 0.168 -> 0.109). Arithmetic combines are bound by memory and keep one group per thread:
/// with 16, cumsum over f32 rows of 4096 went 0.040 -> 0.055 ms, bf16 0.021 -> 0.026, and cummax (a value and an
/// index per element) 0.117 -> 0.252 (tools/perf_sweep.py, one case at a time, G forced).
constexpr int64_t kScanElementsPerThread = 16;

/// How many of the kernel's accesses step by one element along `var` (the other kernel variable fixed).
int unit_stride_accesses(const std::vector<std::pair<Index, DType>>& accesses, const std::string& var) {
  int n = 0;
  for (const auto& a : accesses)
    if (auto c = affine_coefficient(a.first, var); c && c->is_const(1)) ++n;
  return n;
}

}  // namespace

void plan_scan(const LoopProgram& p, const Kernel& k, const Target& /*target*/, KernelPlan& plan) {
  ScanPlan scan;
  plan.block = kScanBlock;
  plan.whole_grid = true;
  plan.grid_reason = "every block runs its lines to the end: the whole grid";
  const VarRanges ranges = kernel_var_ranges(p, k);
  const std::vector<std::pair<Index, DType>> accesses = kernel_accesses(p, k, ranges);
  const int along_line = unit_stride_accesses(accesses, "s"), across_lines = unit_stride_accesses(accesses, "line");
  auto length = simplify(k.row_length, p.size_ranges).as_const();
  auto lines = simplify(k.numel, p.size_ranges).as_const();
  // Lines are strided when no access steps by one element along them, or more step by one across lines.
  const bool strided = along_line == 0 || across_lines > along_line;
  if (strided && lines && length && *lines < kMinScanThreads && *length >= 2 * kMinChunk) {
    // Too few lines to fill the GPU with a thread each, walking long lines: cut each line into chunks, scanned in
    // two reads (its total, then the scan from the totals before it). 1.5 passes of traffic instead of 1, for up
    // to 32 times the threads.
    int64_t ty = std::min<int64_t>({int64_t{pow2_at_least((kMinScanThreads + *lines - 1) / *lines)},
                                    int64_t{kMaxChunks}, int64_t{kScanBlock / 8}});
    while (ty > 2 && *length / ty < kMinChunk) ty /= 2;
    scan.form = ScanPlan::Form::LineChunks;
    scan.chunks = static_cast<int>(ty);
    scan.lines_per_block = kScanBlock / scan.chunks;
    scan.form_reason = std::to_string(*lines) + " strided lines, too few for a thread each: " +
                       std::to_string(ty) + " chunks per line, their totals met in shared memory";
    plan.block_reason = std::to_string(scan.lines_per_block) + " neighbouring lines x " + std::to_string(ty) +
                        " chunks";
    plan.grid = Index((*lines + scan.lines_per_block - 1) / scan.lines_per_block);
    plan.needs_sync = true;
    plan.shape = std::move(scan);
    return;
  }
  if (strided) {
    // Elements of a line lie apart (a scan over an outer dim); neighbouring lines are neighbours in memory, so a
    // thread per line reads coalesced at every step, and each element is read and written once.
    scan.form = ScanPlan::Form::LinesPerThread;
    scan.form_reason = "lines strided in memory, neighbouring lines contiguous: a thread per line walks it";
    plan.block_reason = "256 threads, one line each";
    plan.grid = floordiv(k.numel + Index(kScanBlock - 1), Index(kScanBlock));
    plan.shape = std::move(scan);
    return;
  }
  // Contiguous lines: threads of a line take consecutive vector groups, so each step reads the line coalesced.
  scan.form = ScanPlan::Form::ThreadsPerLine;
  scan.form_reason = "lines contiguous in memory: threads of a line take consecutive vector groups per step";
  scan.width = length ? vector_width(p, k, ranges, "s", *length, true) : 1;
  scan.width_reason = length ? vector_width_reason(scan.width, "s") : "line length unknown at compile time";
  // G: kScanElementsPerThread / V consecutive groups per thread for a costly combine (fewer when the line has fewer),
  // else 1; a line of unknown length keeps 1 (it may be short, and a step of 16 per thread would span 4096 elements).
  // T: enough threads to cover a line's groups in one step, up to the block; a line shorter than a warp's share
  // leaves the rest of the warp to other lines (no lane idles through a short line).
  const int64_t groups = length ? *length / scan.width : kScanBlock;
  const bool costly_combine = p.computations[k.computations.at(0)].body->reduce_op() == ReduceOp::LogAddExp;
  scan.groups_per_thread =
      length && costly_combine
          ? static_cast<int>(std::max<int64_t>(1, std::min(kScanElementsPerThread / scan.width, groups)))
          : 1;
  scan.threads = static_cast<int>(
      pow2_at_least(std::clamp<int64_t>(ceil_div(groups, scan.groups_per_thread), 1, kScanBlock)));
  scan.lines_per_block = kScanBlock / scan.threads;
  scan.threads_reason = (length ? std::to_string(groups) + " vector group(s) per line"
                                : "a block per line, its length unknown at compile time") +
                        ", " + std::to_string(scan.groups_per_thread) + " per thread and step";
  plan.block_reason = std::to_string(scan.lines_per_block) + " line(s) x " + std::to_string(scan.threads) +
                      " threads";
  plan.grid = floordiv(k.numel + Index(scan.lines_per_block - 1), Index(scan.lines_per_block));
  plan.needs_sync = true;
  plan.shape = std::move(scan);
}

}  // namespace hi::codegen_detail
