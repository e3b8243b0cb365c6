// Index expressions: the small integer algebra that loop IR uses for sizes, strides and load/store addresses.
//
// An `Index` is an immutable, cheap-to-copy handle to a node: a constant, a variable, an n-ary sum or product, or a
// binary floordiv / mod / min / max. Variables name loop counters (`x0`, `r0`, `row`) or size symbols (`s0`); concrete
// sizes are constants, and nothing else in the compiler assumes sizes are concrete.
//
// Invariants:
//  - Nodes are built only through the factory functions below, which keep expressions in canonical form: sums and
//    products are flattened, constants folded and collected into one term, terms ordered deterministically, `x*1`,
//    `x+0`, `x*0` removed. Two expressions that are equal after canonicalisation compare equal with `==` and have the
//    same `hash()` (structural equality, no pointer identity).
//  - `floordiv` and `mod` are Python's (floor) semantics; all index expressions the compiler builds are
//    non-negative, where floor and truncating division agree, so `c_str()` prints them as C `/` and `%`.
//  - Range-dependent rewrites (`(x*c + y) floordiv c -> x + y floordiv c` when `0 <= y < c`, `y mod c -> y` when
//    `0 <= y < c`, ...) need variable ranges and live in `simplify`, not in the factories.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hi {

enum class IndexOp : uint8_t { Const, Var, Add, Mul, FloorDiv, Mod, Min, Max };

struct IndexNode;

/// Handle to an immutable index expression node; default-constructed handles are null.
class Index {
 public:
  Index() = default;
  /// A constant (implicit, so `x * 4 + 1` reads naturally).
  Index(int64_t value);  // NOLINT(google-explicit-constructor)
  Index(int value) : Index(static_cast<int64_t>(value)) {}  // NOLINT(google-explicit-constructor)

  static Index var(std::string name);
  static Index constant(int64_t value) { return Index(value); }

  bool defined() const { return node_ != nullptr; }
  explicit operator bool() const { return defined(); }

  IndexOp op() const;
  /// Constant value; only for IndexOp::Const.
  int64_t value() const;
  /// Variable name; only for IndexOp::Var.
  const std::string& name() const;
  /// Operands: n >= 2 for Add/Mul, exactly 2 for FloorDiv/Mod/Min/Max, none for leaves.
  const std::vector<Index>& args() const;

  bool is_const() const { return defined() && op() == IndexOp::Const; }
  bool is_const(int64_t v) const { return is_const() && value() == v; }
  std::optional<int64_t> as_const() const;
  bool is_var() const { return defined() && op() == IndexOp::Var; }

  size_t hash() const;
  /// Structural equality.
  bool operator==(const Index& other) const;
  bool operator!=(const Index& other) const { return !(*this == other); }
  /// Strict weak order used for canonical term ordering and for std::map keys.
  bool operator<(const Index& other) const;

  /// Human- and C-readable text, e.g. `x0*4096 + x1`, `(x0 / 3) % 7`, `min(x0, 5)`.
  std::string str() const;

  const IndexNode* node() const { return node_.get(); }

 private:
  explicit Index(std::shared_ptr<const IndexNode> n) : node_(std::move(n)) {}
  std::shared_ptr<const IndexNode> node_;
  friend struct IndexFactory;
};

/// One node; built only by the factories, which fill `hash`.
struct IndexNode {
  IndexOp op;
  int64_t value = 0;       ///< Const
  std::string name;        ///< Var
  std::vector<Index> args; ///< Add/Mul/FloorDiv/Mod/Min/Max
  size_t hash = 0;
};

// Canonicalising factories (see the invariants above).
Index operator+(const Index& a, const Index& b);
Index operator-(const Index& a, const Index& b);
Index operator*(const Index& a, const Index& b);
Index operator-(const Index& a);
Index floordiv(const Index& a, const Index& b);
Index mod(const Index& a, const Index& b);
Index min(const Index& a, const Index& b);
Index max(const Index& a, const Index& b);
/// Sum / product of a list (0 / 1 for an empty list).
Index sum(const std::vector<Index>& terms);
Index product(const std::vector<Index>& factors);

/// Inclusive bounds of a value; nullopt on a side means unbounded.
struct Range {
  std::optional<int64_t> lo;
  std::optional<int64_t> hi;
  static Range exact(int64_t v) { return {v, v}; }
  /// A loop counter over [0, extent): [0, extent-1].
  static Range loop(int64_t extent) { return {0, extent - 1}; }
};
/// Known ranges of variables. Variables not in the map are unbounded (size symbols are >= 1 by convention of their
/// creator, who should add them).
using VarRanges = std::map<std::string, Range>;

/// Bounds of `e` given `ranges` (interval arithmetic; floordiv/mod by positive constants handled exactly).
Range bounds(const Index& e, const VarRanges& ranges);

/// Rule-driven simplification using variable ranges; idempotent. Rules include:
///   (x*c + y) floordiv c -> x + y floordiv c     when c > 0
///   y floordiv c -> 0, y mod c -> y              when 0 <= y < c
///   (x*c + y) mod c -> y mod c                   when c > 0
///   (x floordiv a) floordiv b -> x floordiv (a*b) for positive constants
///   (x mod (a*b)) floordiv a -> (x floordiv a) mod b, and the like; min/max folded when bounds decide them.
Index simplify(const Index& e, const VarRanges& ranges = {});

/// Replace variables by expressions (result canonicalised, not range-simplified).
Index substitute(const Index& e, const std::map<std::string, Index>& replacements);

/// The value of `e` with every variable taken from `values` (floor division and modulo as Python's); nullopt when a
/// variable has no value or a division or modulo is by zero. Cheap: one walk of the tree, no rebuilding (GraphRunner
/// evaluates grids and workspace offsets with it on every new binding of size symbols).
std::optional<int64_t> evaluate(const Index& e, const std::map<std::string, int64_t>& values);

/// Names of the variables that occur in `e`, sorted.
std::vector<std::string> free_vars(const Index& e);

/// Coefficient of variable `var` if `e` is affine in it (e == coeff*var + rest, rest free of var), else nullopt.
std::optional<Index> affine_coefficient(const Index& e, const std::string& var);

}  // namespace hi

template <>
struct std::hash<hi::Index> {
  size_t operator()(const hi::Index& e) const { return e.hash(); }
};
