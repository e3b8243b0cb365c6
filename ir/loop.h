// Loop IR: what Inductor calls Pointwise / Reduction / ComputedBuffer, as explicit trees.
//
// A LoopProgram holds buffers (graph inputs, graph outputs, intermediates), computations that each fill one buffer,
// and — after scheduling — kernels that group computations. A Computation iterates over a domain: output sizes
// (loop variables x0, x1, ...) and, for reductions, reduction sizes (r0, r1, ...). Its body is an expression tree of
// loads, constants, ops, casts and `where`, with at most one `Reduce` at the root. Loads address buffers by an index
// expression over the loop variables (in elements, storage offset included), so views never copy: permute, expand,
// slice and view of a contiguous buffer are rewritten into the indices of the loads that read through them.
//
// Exprs are immutable handles with structural equality and hashing, like Index.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "ir/index.h"

namespace hi {

enum class UnaryOp : uint8_t {
  Neg, Abs, Exp, Exp2, Expm1, Log, Log2, Log10, Log1p, Sqrt, Rsqrt, Reciprocal, Sin, Cos, Tan, Asin, Acos, Atan,
  Sinh, Cosh, Tanh, Asinh, Acosh, Atanh, Sigmoid, Relu, Erf, Erfc, GeluErf, GeluTanh, Silu, Floor, Ceil, Round, Trunc,
  Sign, LogicalNot, BitwiseNot, IsNan, IsInf,
  Lgamma, Digamma, Erfinv,
};
enum class BinaryOp : uint8_t {
  Add,
  Sub,
  Mul,
  Div,
  FloorDiv,
  TruncDiv,
  Remainder,
  Fmod,
  Pow,
  Maximum,
  Minimum,
  Atan2,
  Hypot,
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  LogicalAnd,
  LogicalOr,
  LogicalXor,
  BitwiseAnd,
  BitwiseOr,
  BitwiseXor,
  Fmax,
  Fmin,  ///< NaN-ignoring maximum / minimum (NaN only when both are NaN)
  Copysign,
  Nextafter,
  Zeta,  ///< Hurwitz zeta(x, q) = sum over k >= 0 of (k + q)^-x
  /// Integer shifts as PyTorch's: a shift by a negative amount or by the bit width or more gives 0 (left) or the
  /// sign fill (right, arithmetic for signed types); a left shift wraps.
  ShiftLeft,
  ShiftRight,
};
/// ArgMax/ArgMin: a Reduce with two args, (value, position): position is the element's flat (row-major) index over
/// the reduction domain as an Int64 IndexValue; the result (Int64) is the position of the first extreme element, NaN
/// counting as the largest (PyTorch's argmax/argmin). LogAddExp: log(exp(a) + exp(b)) of the pair, an infinity of
/// one sign on both sides its own result, NaN propagating (eager's logcumsumexp step).
enum class ReduceOp : uint8_t { Sum, Prod, Max, Min, Any, All, ArgMax, ArgMin, LogAddExp };

std::string_view unary_op_name(UnaryOp op);
std::string_view binary_op_name(BinaryOp op);
std::string_view reduce_op_name(ReduceOp op);

enum class ExprOp : uint8_t {
  Load,        ///< buffer[index]; an indirect load (gather) also has args, see Expr::indirect_load
  Constant,    ///< a literal of `dtype`
  IndexValue,  ///< an index expression used as a value (iota, argmax positions)
  Unary,
  Binary,
  Where,       ///< args: condition (bool), if-true, if-false
  Cast,        ///< args: value; converts to `dtype`
  Reduce,      ///< args: value reduced over the computation's reduction domain; only at a body's root
};

struct ExprNode;

/// Handle to an immutable expression node.
class Expr {
 public:
  Expr() = default;
  bool defined() const { return node_ != nullptr; }
  const ExprNode& operator*() const { return *node_; }
  const ExprNode* operator->() const { return node_.get(); }
  size_t hash() const;
  bool operator==(const Expr& other) const;
  bool operator!=(const Expr& other) const { return !(*this == other); }
  /// One-line text for dumps and tests: `exp(load(buf0, x0*64 + x1) - load(buf2, x0))`.
  std::string str() const;

  static Expr load(int buffer, Index index, DType dtype);
  /// A load whose address depends on loaded values (index.Tensor, gather, embedding): `index` may use the variables
  /// indirect_var(k) ("ind0", "ind1", ...), each bound to `index_args[k]` (an Int64 expression, e.g. a load of an
  /// index tensor, already wrapped to be non-negative). The binding is local to this node: the printer evaluates the
  /// args first and substitutes them into the index, so Index stays a pure algebra of named variables.
  static Expr indirect_load(int buffer, Index index, DType dtype, std::vector<Expr> index_args);
  static Expr constant(double value, DType dtype);
  static Expr index_value(Index index, DType dtype);
  /// Result dtype: the operand's, except IsNan/IsInf/LogicalNot which give bool.
  static Expr unary(UnaryOp op, Expr x);
  /// `dtype` is the result type (comparisons and logical ops: Bool); operands must already share a compute type.
  static Expr binary(BinaryOp op, Expr a, Expr b, DType dtype);
  static Expr where(Expr cond, Expr a, Expr b);
  /// Same handle when x already has `dtype`.
  static Expr cast(Expr x, DType dtype);
  static Expr reduce(ReduceOp op, Expr x);
  /// ArgMax/ArgMin: `position` is the flat Int64 position of `x` in the reduction domain; the result is Int64.
  static Expr arg_reduce(ReduceOp op, Expr x, Expr position);

 private:
  explicit Expr(std::shared_ptr<const ExprNode> n) : node_(std::move(n)) {}
  std::shared_ptr<const ExprNode> node_;
  friend struct ExprFactory;
};

struct ExprNode {
  ExprOp op;
  DType dtype;
  uint8_t sub = 0;        ///< UnaryOp / BinaryOp / ReduceOp
  int buffer = -1;        ///< Load
  Index index;            ///< Load, IndexValue
  double value = 0;       ///< Constant (integers up to 2^53 exact; ±inf and NaN allowed)
  std::vector<Expr> args;
  size_t hash = 0;

  UnaryOp unary_op() const { return static_cast<UnaryOp>(sub); }
  BinaryOp binary_op() const { return static_cast<BinaryOp>(sub); }
  ReduceOp reduce_op() const { return static_cast<ReduceOp>(sub); }
};

/// Rewrites every Index in `e` (load addresses, index values) through `f`; same handle when nothing changed.
Expr map_indices(const Expr& e, const std::function<Index(const Index&)>& f);
/// Substitutes loop variables in every index of `e`, then simplifies each index with `ranges`.
Expr substitute_vars(const Expr& e, const std::map<std::string, Index>& repl, const VarRanges& ranges = {});
/// Bottom-up rewrite: `f` sees each node after its children were rewritten and returns a replacement or nullopt.
Expr rewrite(const Expr& e, const std::function<std::optional<Expr>(const Expr&)>& f);
/// Calls `f` on every node once per occurrence, children first.
void visit(const Expr& e, const std::function<void(const Expr&)>& f);
/// Number of non-leaf operations, the recomputation cost used by fusion decisions.
int op_count(const Expr& e);
/// Whether `e` evaluates a transcendental function (exp, log, sin, tanh, erf, pow, ...): tens of instructions each,
/// against the one load that reading a stored copy costs.
bool has_transcendental(const Expr& e);

enum class BufferKind : uint8_t { Input, Output, Intermediate };
std::string_view buffer_kind_name(BufferKind k);

/// Memory a computation writes or a load reads. Sizes/strides describe the logical tensor stored there.
struct Buffer {
  std::string name;       ///< "in0", "out0", "buf3"
  DType dtype = DType::Float32;
  BufferKind kind = BufferKind::Intermediate;
  std::vector<Index> sizes;
  std::vector<Index> strides;
  Index offset = Index(0);
  int io_position = -1;   ///< position among graph inputs / outputs
  /// Elements the storage must hold: offset + 1 + sum((size-1)*stride); 0 for empty tensors.
  Index storage_elements() const;
};

/// Fills one buffer. Pointwise when reduce_sizes is empty; otherwise body's root is a Reduce.
struct Computation {
  std::string name;                  ///< equals the name of the buffer it fills
  int buffer = -1;
  std::vector<Index> sizes;          ///< output domain: variables x0..x{n-1}
  std::vector<Index> reduce_sizes;   ///< reduction domain: variables r0..r{m-1}
  Expr body;
  std::vector<std::string> origins;  ///< graph nodes whose work this is (for comments and names)
  std::vector<std::string> op_names; ///< short ATen op names, in graph order ("native_layer_norm", "gelu")
  /// A scan (cumsum, cummax, logcumsumexp) along dim `scan_dim` of `sizes`, or -1. A scan is a reduction with
  /// reduce_sizes {sizes[scan_dim]} whose body reads the element at r0 (not at x[scan_dim]); output element x holds
  /// the body's Reduce combined over r0 = 0, 1, ..., x[scan_dim] in that order (an inclusive prefix). Only Scan
  /// kernels hold scans.
  int scan_dim = -1;
  /// A scatter-add (scatter_add, index_put with accumulate, index_add): an indirect load of `buffer` (see
  /// Expr::indirect_load) at the element that the body's value at x is added to, atomically. The buffer already holds
  /// its starting values: an earlier computation filled it, and this one only adds, so elements may receive any
  /// number of values (duplicate indices) in any order. Undefined for every other computation. Only Scatter kernels
  /// hold scatters.
  Expr scatter_target;

  bool is_reduction() const { return !reduce_sizes.empty(); }
  bool is_scan() const { return scan_dim >= 0; }
  bool is_scatter() const { return scatter_target.defined(); }
  /// Address of output element (x0..) in `buffer`'s storage: sum(x_i * stride_i) + offset.
  static Index store_index(const Buffer& b);
  Index numel() const;
  Index reduce_numel() const;
};

/// Calls `f` on every node of `c`'s expressions once per occurrence, children first: its body and a scatter's target
/// (whose load of the scattered buffer stands for the dependence on the values it adds to).
void visit_computation(const Computation& c, const std::function<void(const Expr&)>& f);

/// Name of the i-th output / reduction loop variable ("x0", "r0").
std::string out_var(size_t i);
std::string reduce_var(size_t i);
/// Name of the k-th variable of an indirect load's index ("ind0"), bound to that load's k-th arg.
std::string indirect_var(size_t k);

enum class KernelKind : uint8_t {
  Pointwise,       ///< flat loop over numel
  RowReduction,    ///< one block per row of the (rows, row_length) view; reductions and epilogues per row
  ColumnReduction, ///< one thread per output element, serial loop over the reduced dims (non-innermost reductions)
  Scan,            ///< one scan computation over `numel` independent lines of `row_length` elements each
  Scatter,         ///< one scatter-add computation over `numel` elements, added atomically where its target says
};
std::string_view kernel_kind_name(KernelKind k);

/// A group of computations emitted as one kernel. Computations run in order; for RowReduction every computation's
/// domain is viewed as (rows, row_length): reductions reduce a row, pointwise epilogues write a row.
struct Kernel {
  std::string name;                 ///< says what was fused: "fused_native_layer_norm_gelu_add_0"
  KernelKind kind = KernelKind::Pointwise;
  Index numel;                      ///< Pointwise: elements; reductions: rows (= output elements)
  Index row_length = Index(1);      ///< reductions: reduced elements per row
  std::vector<int> computations;
  /// Buffers written by this kernel that no one else reads: kept in registers, never stored.
  std::vector<int> local_buffers;
  /// Pointwise kernels whose computations share one shape: the order in which the flat index `i` walks its dims,
  /// outermost first (the stored buffers' memory order, so stores and like-laid-out loads are contiguous in `i`).
  /// Empty: row-major over the shape.
  std::vector<int> loop_order;
};

/// Kernels index in 32 bits when every extent they touch (a buffer's storage elements, the kernel's iteration space)
/// stays below this, with room for the grid-stride step: a loop index below n takes one more step of up to n + block
/// (the whole grid) before the test ends it.
constexpr int64_t kIndex32Limit = (int64_t{1} << 30) - 4096;

/// Alignment of every workspace offset (plan_memory) and of the workspace itself (GraphRunner checks it): enough for
/// 128-bit vector access.
constexpr int64_t kWorkspaceAlignment = 256;

struct LoopProgram {
  std::vector<Buffer> buffers;
  std::vector<Computation> computations;
  std::vector<Kernel> kernels;
  std::vector<int> inputs;   ///< buffer per graph input, in placeholder order
  std::vector<int> outputs;  ///< buffer per graph output
  VarRanges size_ranges;     ///< ranges of size symbols (each >= 1)
  /// Symbols of the program that stand for a graph symbol divided by its promised divisor (Graph::divisible): the
  /// graph's s0 divisible by 16 is lowered as 16 * q, q named here with {"s0", 16}. Other program symbols are graph
  /// symbols themselves.
  struct Quotient {
    std::string of;
    int64_t divisor = 1;
  };
  std::map<std::string, Quotient> quotients;
  /// Execution plan (see plan_memory): byte offset in the workspace per buffer, a null Index for buffers not in it
  /// (inputs, outputs, register-only values); and the workspace size in bytes. Both may name size symbols (a graph
  /// with symbolic sizes): GraphRunner evaluates them for each binding of the symbols.
  std::vector<Index> workspace_offsets;
  Index workspace_bytes = Index(0);
  /// Graph::align: bytes every input's first element and every output's storage are aligned to (0: unknown).
  int64_t align = 0;
  /// Graph::index32: every binding keeps every buffer's storage elements and every kernel's iteration space below
  /// kIndex32Limit, so kernels index in 32 bits where the sizes are symbolic too. bind_symbols refuses a binding
  /// that breaks it.
  bool index32 = false;

  /// The graph's size symbols in the one order that runners and callers bind them in: sorted by name (those of
  /// size_ranges, with each quotient's graph symbol in place of the quotient).
  std::vector<std::string> symbols() const;
  /// The value of every program symbol (size_ranges' keys) for `values`, one per symbols() entry. Throws
  /// std::invalid_argument naming the symbol for a wrong count, a value outside its range, or one its promised
  /// divisor does not divide; and, where the program promised index32, for an extent (largest_extent) at or past
  /// kIndex32Limit.
  std::map<std::string, int64_t> bind_symbols(const std::vector<int64_t>& values) const;
  /// The largest buffer storage (in elements) and kernel iteration space at the program symbols' values `values`:
  /// what decides 32-bit indexing. Throws std::invalid_argument where one cannot be evaluated.
  int64_t largest_extent(const std::map<std::string, int64_t>& values) const;
  /// Whether `buffer` lives in the workspace (has a workspace offset).
  bool in_workspace(int buffer) const {
    return buffer >= 0 && static_cast<size_t>(buffer) < workspace_offsets.size() && workspace_offsets[buffer].defined();
  }

  /// Index of the computation that fills `buffer`, or -1 (inputs).
  int producer(int buffer) const;
  /// Multi-line dump: buffers, computations with bodies, kernels.
  std::string str() const;
};

/// The loop-variable substitution that views computation `c` inside kernel `k` with flat loop variables:
/// `i` (Pointwise: element), `row`/`col` (RowReduction), `i`/`r` (ColumnReduction: output element, reduced element),
/// `line`/`s` (Scan: the line, the position along it; the scan's x[scan_dim] and r0 are both `s`).
/// In a row kernel, a pointwise computation of one element per row (see is_row_epilogue) uses `row` alone.
std::map<std::string, Index> kernel_var_map(const Computation& c, const Kernel& k);
/// Ranges of those flat variables for a kernel.
VarRanges kernel_var_ranges(const LoopProgram& p, const Kernel& k);
/// A pointwise computation in a row kernel that produces one value per row (mean and rstd outputs of a LayerNorm).
bool is_row_epilogue(const Computation& c, const Kernel& k);

/// Coordinates of a row-major index `flat` over `sizes`: c_i = (flat floordiv stride_i) mod size_i (0 for dims of
/// size 1, and for every dim of an empty domain).
std::vector<Index> unflatten(const Index& flat, const std::vector<Index>& sizes);

/// The smallest n such that no buffer of `p` is named "buf<m>" with m >= n: new intermediates take "buf<n>" on.
int first_free_buffer_number(const LoopProgram& p);

/// Structural checks: loads reference existing buffers, computations fill non-input buffers exactly once, Reduce only
/// at the root of reductions, loop variables in indices belong to the computation's domain, kernels cover every
/// computation once and respect producer-before-consumer order. One message per problem; empty when sound.
std::vector<std::string> verify_loop_program(const LoopProgram& p);

}  // namespace hi
