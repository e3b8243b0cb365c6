// Kernel plans: how one fused kernel runs, decided before anything is printed (docs/architecture.md, "Kernel
// shapes").
//
// plan_kernel is the one place where a kernel's shape and launch are chosen: its vector width V, vector groups per
// thread E, threads per row, persistent or looped rows, column slices, the loads a concatenation selects, the
// operands read through transposed tiles, cache hints, index width, block and grid. Each choice carries a short
// reason. emit_hip plans every kernel and the printer only prints the plan; the plans are dumped as plans.txt under
// HIPINDUCTOR_DEBUG_DIR. Autotuning would vary plans, and symbolic sizes would parametrise them.
//
// Indices and expressions in a plan are over the kernel's flat variables (kernel_var_map) with the lane variables
// of the form the plan names: i = g*V + j (pointwise vector groups), col = cg*V + j (rows), col = head + cg*V + j
// (peeled rows), i = (xo*P + xp)*Q + xq (transposed tiles).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "codegen/target.h"
#include "ir/loop.h"

namespace hi {

/// A concatenation's `where(anchor < C, a, b)` in a pointwise kernel whose condition is uniform over each vector
/// group and whose branches each read one gather (only there) that is contiguous once the branch's index clamps are
/// folded: one vector load from the address the condition selects serves both.
struct SelectedLoad {
  Index anchor;            ///< lane 0's value of the condition's left side (over g)
  std::string comparison;  ///< "<", "<=", ">" or ">="
  int64_t bound = 0;       ///< the condition's constant right side
  Expr if_true;            ///< the gather the true branch reads, and its lane-0 index once its clamps are folded
  Index true_base;
  Expr if_false;
  Index false_base;
};

/// Pointwise kernels.
struct PointwisePlan {
  enum class Form : uint8_t {
    Elements,         ///< one element per iteration of a grid-stride loop
    VectorGroups,     ///< E groups of V consecutive elements per thread, all loads first; a scalar loop does the rest
    TransposedTiles,  ///< square tiles of transposed operands through shared memory
  };
  Form form = Form::Elements;
  std::string form_reason;
  int width = 1;  ///< V
  std::string width_reason;
  int groups_per_thread = 1;  ///< E
  std::string groups_reason;
  Index groups;  ///< VectorGroups: numel / V (floor), over the size symbols where numel is
  std::vector<SelectedLoad> selected_loads;
  /// TransposedTiles: tiles of tile x tile elements, read by blocks of tile x tile_rows threads, over the flat index
  /// i = (xo * P + xp) * Q + xq (xo < tile_o, ...); `tiled_loads` (in that view) go through shared memory.
  int tile = 0, tile_rows = 0;
  int64_t tile_o = 0, tile_p = 0, tile_q = 0;
  std::vector<Expr> tiled_loads;
};

/// Row-reduction kernels.
struct RowPlan {
  enum class Form : uint8_t {
    Persistent,  ///< each row read once into registers (E*V values per thread), reduced and written from there
    Looped,      ///< threads stride over the row in each phase, re-reading it (caches)
  };
  Form form = Form::Looped;
  std::string form_reason;
  int width = 1;  ///< V: consecutive columns per vector access
  std::string width_reason;
  int threads = 1;  ///< T: threads per row (a power of two when persistent; the whole block when looped)
  std::string threads_reason;
  int groups_per_thread = 1;  ///< Persistent: E vector groups per thread
  int rows_per_block = 1;     ///< Persistent: rows sharing a block (T <= warp), else 1
  std::string rows_reason;
  /// Persistent: the row length the plan is made for: the known one, or the bound of a variant for a symbolic one
  /// (plan_kernels); the row count may be symbolic (Kernel::numel).
  int64_t length = 0;
  /// Persistent: the row's vector groups, length / V over the symbols (V divides the length for every value, or the
  /// row is peeled, and has at most this many whole groups); below length / V in a variant, the lanes of groups past
  /// it are idle.
  Index groups;
  bool reads_only = false;       ///< no output has a row's elements (a plain reduction)
  /// Persistent: the contiguous operands, read with vector loads from lane-0 index `base` (over row and cg): once per
  /// row into registers when several of the kernel's computations use one (the row itself), else at the start of
  /// the one computation that does (weights), so that it holds no registers elsewhere.
  struct RowLoad {
    Expr load;
    Index base;
    std::vector<size_t> users;  ///< positions in the kernel's computations
  };
  std::vector<RowLoad> row_loads;
  /// Persistent: expensive per-element values that several computations compute (softmax's exp(x - max) in the sum
  /// and in the output), computed once by computation `first` (a position) and kept in a register array.
  struct CachedValue {
    Expr value;
    size_t first = 0;
  };
  std::vector<CachedValue> cached_values;
  /// For a row length no vector width divides: each row's columns before its first V-aligned one (`head`) and after
  /// its last whole group go one per lane (Persistent: in extra register slots after the groups', at col = head +
  /// cg*V + j with cg = -1 before the head and cg = the row's group count after it, persistent_column), the rest in
  /// vector groups from the head. `row_start` is the index of a contiguous access at the row's first column (over
  /// row), from which the printed kernel finds each row's head.
  bool peeled = false;
  Index row_start;
  /// Persistent, peeled: operands indexed by the column alone (LayerNorm's weight and bias), out of phase with the
  /// peeled rows. Each block copies them once into shared memory (`length` elements each, element `col` at `at`
  /// over col) before its first row, and every row reads them there at its own columns, so the rows' global accesses
  /// stay vector groups from the head.
  struct StagedOperand {
    int buffer = 0;
    Index at;  ///< the element read for column col, over col
  };
  std::vector<StagedOperand> staged;
  /// Looped: two consecutive reductions of the kernel computed in one pass over the row instead of two: softmax's
  /// max(x) and sum(exp(x - max)) (online softmax; `base2` for the exp2((x - max) * log2(e)) form), or LayerNorm's
  /// sum(x) and sum((x - sum / N)^2) (Welford, the plain sum kept beside it). `first` is the first reduction's
  /// position in the kernel's computations; x is its value.
  struct OnePass {
    size_t first = 0;
    bool online_softmax = false;  ///< else Welford
    bool base2 = false;
  };
  std::vector<OnePass> one_pass;
};

/// Column-reduction kernels.
struct ColumnPlan {
  enum class Form : uint8_t {
    OutputsPerThread,  ///< one thread per output (V = 1) or per group of V neighbouring outputs, down the column
    RowSlices,         ///< a block's slices_x consecutive outputs x slices_y row slices, met in shared memory
    VectorRowSlices,   ///< slices_x groups of V outputs x slices_y row slices (a single reduction)
  };
  Form form = Form::OutputsPerThread;
  std::string form_reason;
  int width = 1;  ///< V
  std::string width_reason;
  int slices_x = 1, slices_y = 1;  ///< TX x TY of the slice forms
  /// Reduced steps (rows) a thread's vector-group loop unrolls, so that their loads are in flight together.
  int unroll = 4;
  std::string unroll_reason;
};

/// Scan kernels: each of the kernel's `numel` lines an inclusive scan over its `row_length` positions (s), one pass
/// over the data.
struct ScanPlan {
  enum class Form : uint8_t {
    /// A thread per line walks it in order: lines whose elements lie apart in memory (a scan over an outer dim),
    /// neighbouring threads on neighbouring lines, so each step's loads coalesce.
    LinesPerThread,
    /// Strided lines too few to give the GPU a thread each: a block takes TX neighbouring lines x TY chunks of them;
    /// each thread reads its chunk once for its total, the totals of the chunks before it (shared memory) are its
    /// carry, and it reads the chunk again, scanning from the carry, and stores.
    LineChunks,
    /// Contiguous lines: T threads per line take G x V consecutive elements each per step (G vector loads), scan them
    /// in registers, then across the T threads (warp butterflies, shared memory between warps); a carry runs from
    /// step to step. Several lines share a block when T is below it.
    ThreadsPerLine,
  };
  Form form = Form::LinesPerThread;
  std::string form_reason;
  int width = 1;  ///< ThreadsPerLine: V
  std::string width_reason;
  int threads = 1;            ///< ThreadsPerLine: T (a power of two)
  int groups_per_thread = 1;  ///< ThreadsPerLine: G consecutive vector groups per thread and step
  int lines_per_block = 1;    ///< ThreadsPerLine: block / T; LineChunks: TX
  int chunks = 1;           ///< LineChunks: TY
  std::string threads_reason;
};

/// Cache hints of a read-only buffer's vector loads (the HI_EVICT_* spelling; empty: none).
struct EvictionHint {
  std::string row_indexed;  ///< loads whose index depends on the row
  std::string other;        ///< loads whose index does not (weights every row reads; any load outside row kernels)
  std::string reason;
};

struct KernelPlan {
  std::string kernel;
  KernelKind kind = KernelKind::Pointwise;
  int block = 256;  ///< threads per block
  std::string block_reason;
  Index grid;  ///< blocks; may contain size symbols
  /// Launch every block of `grid` rather than capping it at a few waves of resident blocks (GraphRunner).
  bool whole_grid = false;
  std::string grid_reason;
  bool needs_sync = false;  ///< uses __syncthreads or warp shuffles
  bool index32 = false;     ///< 32-bit index arithmetic
  std::string index_reason;
  /// Arg reductions (argmax/argmin) hold their positions in int rather than int64: each position is an index the
  /// reduction domain bounds below 2^31 (not a value loaded from memory, as split stages' are).
  bool positions32 = false;
  std::string positions_reason;
  /// Row and column kernels: a max (min) computed with a later argmax (argmin) of the same values, as torch.max(x,
  /// dim) lowers: one {value, position} accumulator serves both, its value the max (the value at the position, as
  /// eager's), and the pair is reduced once. Positions in the kernel's computations: the max's -> the argmax's.
  std::map<size_t, size_t> extreme_pairs;
  /// Column kernels: a variance's sum and its sum of squared deviations (ir/moments.h: over elements, or merging a
  /// split's partials), which fuse_kernels keeps side by side: one Welford accumulator {n, mean, m2} takes both in one
  /// pass over the data, the sum stored as n * mean, and is sliced and combined as one reduction. Positions in the
  /// kernel's computations: the sum's -> the other's.
  std::map<size_t, size_t> welford_pairs;
  std::map<int, EvictionHint> hints;  ///< by buffer, for the read-only buffers that get hints
  /// Row kernels: softmax denominators computed here (sum(exp(x - max(x))), at least 1). A division by one, held in
  /// a register, is printed as a multiply by its IEEE reciprocal (one per row, hoisted by the compiler), within 1 ulp
  /// of the quotient. Not for other divisors: the reciprocal of one below 2^-126 overflows, of one above 2^126 loses
  /// bits.
  std::set<int> reciprocal_divisors;
  /// Library math calls (is_library_math_call) go through the prelude's out-of-line functions (hi_sin_ool, ...)
  /// instead of being inlined: set when the kernel prints more than kMaxInlinedMathCalls of them.
  bool outline_math = false;
  std::string outline_reason;
  std::variant<PointwisePlan, RowPlan, ColumnPlan, ScanPlan> shape;  ///< the one of `kind`
};

/// Whether `e` is printed as a call of a device math library function with a large body (sin, pow, fmod, ..., every
/// double one; the prelude's hi_* wrappers of them included), one KernelPlan::outline_math calls out of line.
bool is_library_math_call(const Expr& e);

/// The plan of kernel `k` of `p` (after plan_memory) for `target`.
KernelPlan plan_kernel(const LoopProgram& p, const Kernel& k, const Target& target);
/// The plans of the kernels compiled for `k`: plan_kernel's alone, or, where the best shape depends on the magnitude
/// of a symbolic size (a symbolic row length: persistent rows up to a bound; a symbolic output count of a column
/// reduction: row slices for few outputs), one plan per variant, named `k.name` plus a suffix, whose grids are 0
/// except for the sizes each serves, so that exactly one of them runs at any binding of the symbols.
std::vector<KernelPlan> plan_kernels(const LoopProgram& p, const Kernel& k, const Target& target);

/// Several lines: the plan's choices with their reasons.
std::string to_string(const KernelPlan& plan);

}  // namespace hi
