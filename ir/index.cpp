#include "ir/index.h"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

namespace hi {

// The only place that creates nodes. Hashes are computed once here so that `==` can reject mismatches cheaply.
struct IndexFactory {
  static Index make(IndexOp op, int64_t value, std::string name, std::vector<Index> args) {
    auto node = std::make_shared<IndexNode>();
    node->op = op;
    node->value = value;
    node->name = std::move(name);
    node->args = std::move(args);
    node->hash = structural_hash(*node);
    return Index(std::shared_ptr<const IndexNode>(std::move(node)));
  }

 private:
  static size_t mix(size_t seed, size_t v) { return seed ^ (v + 0x9e3779b97f4a7c15ULL + (seed << 12) + (seed >> 4)); }

  static size_t structural_hash(const IndexNode& n) {
    size_t h = mix(static_cast<size_t>(n.op), std::hash<int64_t>{}(n.value));
    h = mix(h, std::hash<std::string>{}(n.name));
    for (const Index& a : n.args) h = mix(h, a.hash());
    return h;
  }
};

namespace {

Index make_node(IndexOp op, std::vector<Index> args) { return IndexFactory::make(op, 0, {}, std::move(args)); }

// ---------------------------------------------------------------------------------------------------------------
// Integer helpers. Folding must match Python's floor semantics even though printed code uses C's truncation.

int64_t add_or_throw(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) throw std::overflow_error("index expression: int64 overflow in a sum");
  return r;
}
int64_t mul_or_throw(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) throw std::overflow_error("index expression: int64 overflow in a product");
  return r;
}
int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t floor_mod(int64_t a, int64_t b) { return a - floor_div(a, b) * b; }

void require_nonzero_divisor(const Index& b) {
  if (b.is_const(0)) throw std::domain_error("index expression: division by constant zero");
}

std::optional<int64_t> positive_const(const Index& e) {
  if (auto c = e.as_const(); c && *c > 0) return c;
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------------------------
// Structural order. It decides the printed term order, so it depends only on structure, never on hashes or
// addresses: the same expression prints the same way in every run.

// Natural order ("x2" before "x10") so that sums list loop variables the way people number them; the plain string
// comparison breaks ties so that the order stays total ("x01" vs "x1").
int compare_names(std::string_view a, std::string_view b) {
  size_t i = 0;
  size_t j = 0;
  auto digit = [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)) != 0; };
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      size_t ie = i;
      size_t je = j;
      while (ie < a.size() && digit(a[ie])) ++ie;
      while (je < b.size() && digit(b[je])) ++je;
      std::string_view na = a.substr(i, ie - i);
      std::string_view nb = b.substr(j, je - j);
      na.remove_prefix(std::min(na.find_first_not_of('0'), na.size()));
      nb.remove_prefix(std::min(nb.find_first_not_of('0'), nb.size()));
      if (na.size() != nb.size()) return na.size() < nb.size() ? -1 : 1;
      if (int c = na.compare(nb); c != 0) return c < 0 ? -1 : 1;
      i = ie;
      j = je;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j] ? -1 : 1;
    ++i;
    ++j;
  }
  if ((i < a.size()) != (j < b.size())) return i < a.size() ? 1 : -1;
  int c = a.compare(b);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

int compare(const Index& a, const Index& b) {
  if (a.node() == b.node()) return 0;
  if (!a.defined() || !b.defined()) return a.defined() ? 1 : -1;
  if (a.op() != b.op()) return a.op() < b.op() ? -1 : 1;
  if (a.op() == IndexOp::Const) return a.value() == b.value() ? 0 : (a.value() < b.value() ? -1 : 1);
  if (a.op() == IndexOp::Var) return compare_names(a.name(), b.name());
  if (a.args().size() != b.args().size()) return a.args().size() < b.args().size() ? -1 : 1;
  for (size_t i = 0; i < a.args().size(); ++i) {
    if (int c = compare(a.args()[i], b.args()[i]); c != 0) return c;
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------------------------
// Terms: every summand is `coeff * monomial`, where the monomial is a non-constant product of atoms (or null for
// the constant term). Sums are kept as a map monomial -> coefficient, which is what makes like terms combine.

struct Term {
  int64_t coeff;
  Index monomial;  // null for the constant term
};

Term split_term(const Index& t) {
  if (t.is_const()) return {t.value(), Index()};
  if (t.op() != IndexOp::Mul || !t.args().front().is_const()) return {1, t};
  std::vector<Index> rest(t.args().begin() + 1, t.args().end());
  return {t.args().front().value(), rest.size() == 1 ? rest.front() : make_node(IndexOp::Mul, std::move(rest))};
}

Index make_term(int64_t coeff, const Index& monomial) {
  if (!monomial.defined()) return Index(coeff);
  if (coeff == 0) return Index(0);
  if (coeff == 1) return monomial;
  std::vector<Index> factors{Index(coeff)};
  if (monomial.op() == IndexOp::Mul) {
    factors.insert(factors.end(), monomial.args().begin(), monomial.args().end());
  } else {
    factors.push_back(monomial);
  }
  return make_node(IndexOp::Mul, std::move(factors));
}

const std::vector<Index>& terms_of(const Index& e, std::vector<Index>& storage) {
  if (e.op() == IndexOp::Add) return e.args();
  storage = {e};
  return storage;
}

void collect_terms(const Index& t, std::map<Index, int64_t>& coeffs, int64_t& constant) {
  if (t.op() == IndexOp::Add) {
    for (const Index& a : t.args()) collect_terms(a, coeffs, constant);
    return;
  }
  Term term = split_term(t);
  if (!term.monomial.defined()) {
    constant = add_or_throw(constant, term.coeff);
    return;
  }
  int64_t& c = coeffs[term.monomial];
  c = add_or_throw(c, term.coeff);
}

Index build_sum(const std::map<Index, int64_t>& coeffs, int64_t constant) {
  std::vector<Index> terms;
  for (const auto& [monomial, coeff] : coeffs) {
    if (coeff != 0) terms.push_back(make_term(coeff, monomial));
  }
  if (constant != 0) terms.push_back(Index(constant));
  if (terms.empty()) return Index(0);
  if (terms.size() == 1) return terms.front();
  return make_node(IndexOp::Add, std::move(terms));
}

void collect_factors(const Index& f, int64_t& coeff, std::vector<Index>& atoms, std::vector<Index>& sums) {
  switch (f.op()) {
    case IndexOp::Mul:
      for (const Index& a : f.args()) collect_factors(a, coeff, atoms, sums);
      return;
    case IndexOp::Const:
      coeff = mul_or_throw(coeff, f.value());
      return;
    case IndexOp::Add:
      sums.push_back(f);
      return;
    default:
      atoms.push_back(f);
  }
}

// Products distribute over sums so that the canonical form is a polynomial over atoms: `(x + 1)*4` and `x*4 + 4`
// must be the same expression for "same index?" questions to be answered structurally.
Index distribute(const Index& monomial, const std::vector<Index>& sums) {
  std::vector<Index> expanded{monomial};
  for (const Index& s : sums) {
    std::vector<Index> next;
    for (const Index& t : expanded) {
      for (const Index& u : s.args()) next.push_back(t * u);
    }
    expanded = std::move(next);
  }
  return sum(expanded);
}

Index make_minmax(IndexOp op, const Index& a, const Index& b) {
  if (a.is_const() && b.is_const()) {
    return op == IndexOp::Min ? std::min(a.value(), b.value()) : std::max(a.value(), b.value());
  }
  if (a == b) return a;
  // Commutative: order the operands so that min(a, b) == min(b, a) structurally; a constant goes last, the way
  // clamps are written (`min(x0, 5)`).
  bool swap = a.is_const() || (!b.is_const() && compare(b, a) < 0);
  return swap ? make_node(op, {b, a}) : make_node(op, {a, b});
}

// Rebuild a node of kind `op` from (possibly new) operands through the canonicalising factories.
Index rebuild(const Index& e, std::vector<Index> args) {
  bool same = std::equal(args.begin(), args.end(), e.args().begin(), e.args().end(),
                         [](const Index& x, const Index& y) { return x.node() == y.node(); });
  if (same) return e;
  switch (e.op()) {
    case IndexOp::Add: return sum(args);
    case IndexOp::Mul: return product(args);
    case IndexOp::FloorDiv: return floordiv(args[0], args[1]);
    case IndexOp::Mod: return mod(args[0], args[1]);
    case IndexOp::Min: return min(args[0], args[1]);
    case IndexOp::Max: return max(args[0], args[1]);
    default: return e;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Printing. Precedence is C's; floordiv/mod operands that are themselves divisions get parentheses although C would
// not need them, because `x / 3 % 7` reads ambiguously to people.

enum class Slot { Factor, Dividend, Divisor };

std::string print(const Index& e);

bool needs_parens(const Index& e, Slot slot) {
  switch (e.op()) {
    case IndexOp::Const: return e.value() < 0;
    case IndexOp::Mul: return slot == Slot::Divisor;
    case IndexOp::Add:
    case IndexOp::FloorDiv:
    case IndexOp::Mod: return true;
    default: return false;
  }
}

std::string print_operand(const Index& e, Slot slot) {
  return needs_parens(e, slot) ? "(" + print(e) + ")" : print(e);
}

std::string print_sum(const Index& e) {
  std::string out = print(e.args().front());
  for (size_t i = 1; i < e.args().size(); ++i) {
    const Index& t = e.args()[i];
    out += split_term(t).coeff < 0 ? " - " + print(-t) : " + " + print(t);
  }
  return out;
}

// The coefficient prints last (`x0*4096`, the way strides read) and its sign first (`-x0*3`).
std::string print_product(const Index& e) {
  Term term = split_term(e);
  const Index& m = term.monomial;
  std::string body;
  for (const Index& f : m.op() == IndexOp::Mul ? m.args() : std::vector<Index>{m}) {
    body += (body.empty() ? "" : "*") + print_operand(f, Slot::Factor);
  }
  std::string sign = term.coeff < 0 ? "-" : "";
  uint64_t magnitude = term.coeff < 0 ? 0 - static_cast<uint64_t>(term.coeff) : static_cast<uint64_t>(term.coeff);
  return sign + body + (magnitude == 1 ? "" : "*" + std::to_string(magnitude));
}

std::string print(const Index& e) {
  const std::vector<Index>& a = e.args();
  switch (e.op()) {
    case IndexOp::Const: return std::to_string(e.value());
    case IndexOp::Var: return e.name();
    case IndexOp::Add: return print_sum(e);
    case IndexOp::Mul: return print_product(e);
    case IndexOp::FloorDiv: return print_operand(a[0], Slot::Dividend) + " / " + print_operand(a[1], Slot::Divisor);
    case IndexOp::Mod: return print_operand(a[0], Slot::Dividend) + " % " + print_operand(a[1], Slot::Divisor);
    case IndexOp::Min: return "min(" + print(a[0]) + ", " + print(a[1]) + ")";
    case IndexOp::Max: return "max(" + print(a[0]) + ", " + print(a[1]) + ")";
  }
  return {};
}

// ---------------------------------------------------------------------------------------------------------------
// Interval arithmetic. A missing bound means unbounded; overflow also degrades to unbounded, which stays sound.

using Bound = std::optional<int64_t>;

Bound add_bound(Bound a, Bound b) {
  int64_t r = 0;
  if (!a || !b || __builtin_add_overflow(*a, *b, &r)) return std::nullopt;
  return r;
}
Bound mul_bound(Bound a, Bound b) {
  int64_t r = 0;
  if (!a || !b || __builtin_mul_overflow(*a, *b, &r)) return std::nullopt;
  return r;
}

bool bounded(const Range& r) { return r.lo && r.hi; }
bool non_negative(const Range& r) { return r.lo && *r.lo >= 0; }

Range mul_ranges(const Range& a, const Range& b) {
  if (bounded(a) && bounded(b)) {
    Bound p[] = {mul_bound(a.lo, b.lo), mul_bound(a.lo, b.hi), mul_bound(a.hi, b.lo), mul_bound(a.hi, b.hi)};
    if (std::any_of(std::begin(p), std::end(p), [](Bound x) { return !x; })) return {};
    auto [lo, hi] = std::minmax({*p[0], *p[1], *p[2], *p[3]});
    return {lo, hi};
  }
  // One side exact: scaling by a constant flips the interval when the constant is negative.
  if (b.lo && b.lo == b.hi) return mul_ranges(b, a);
  if (a.lo && a.lo == a.hi) {
    if (*a.lo >= 0) return {mul_bound(a.lo, b.lo), mul_bound(a.lo, b.hi)};
    return {mul_bound(a.lo, b.hi), mul_bound(a.lo, b.lo)};
  }
  if (non_negative(a) && non_negative(b)) return {mul_bound(a.lo, b.lo), mul_bound(a.hi, b.hi)};
  return {};
}

Range floordiv_range(const Range& a, const Range& b) {
  auto div = [](Bound x, int64_t c) -> Bound { return x ? Bound(floor_div(*x, c)) : std::nullopt; };
  if (b.lo && b.lo == b.hi && *b.lo != 0) {
    int64_t c = *b.lo;
    return c > 0 ? Range{div(a.lo, c), div(a.hi, c)} : Range{div(a.hi, c), div(a.lo, c)};
  }
  if (!non_negative(a) || !b.lo || *b.lo < 1) return {};
  return {b.hi ? div(a.lo, *b.hi) : Bound(0), div(a.hi, *b.lo)};
}

Range mod_range(const Range& a, const Range& b) {
  if (b.lo && b.lo == b.hi && *b.lo != 0) {
    int64_t c = *b.lo;
    // Within one period the remainder is exact; otherwise it spans the whole period (for any sign of the dividend).
    if (bounded(a) && floor_div(*a.lo, c) == floor_div(*a.hi, c)) return {floor_mod(*a.lo, c), floor_mod(*a.hi, c)};
    return c > 0 ? Range{0, c - 1} : Range{c + 1, 0};
  }
  if (!b.lo || *b.lo < 1) return {};
  Bound hi = b.hi ? Bound(*b.hi - 1) : std::nullopt;
  if (non_negative(a) && a.hi) hi = hi ? std::min(*hi, *a.hi) : *a.hi;
  return {0, hi};
}

Range minmax_range(IndexOp op, const Range& a, const Range& b) {
  // For min, the lower bound needs both sides while either upper bound caps the result; max is the mirror image.
  auto both = [&](Bound x, Bound y) -> Bound {
    if (!x || !y) return std::nullopt;
    return op == IndexOp::Min ? std::min(*x, *y) : std::max(*x, *y);
  };
  auto either = [&](Bound x, Bound y) -> Bound {
    if (!x || !y) return x ? x : y;
    return op == IndexOp::Min ? std::min(*x, *y) : std::max(*x, *y);
  };
  if (op == IndexOp::Min) return {both(a.lo, b.lo), either(a.hi, b.hi)};
  return {either(a.lo, b.lo), both(a.hi, b.hi)};
}

// ---------------------------------------------------------------------------------------------------------------
// Simplifier: a table of local rewrite rules, applied bottom-up until none fires. Every rule either removes a node
// or moves work towards leaves, so the fixpoint exists; results are memoised per call.

class Simplifier;
using RuleFn = std::optional<Index> (*)(const Index& e, Simplifier& s);

class Simplifier {
 public:
  explicit Simplifier(const VarRanges& ranges) : ranges_(ranges) {}

  Index run(const Index& e) {
    if (e.args().empty()) return e;
    if (auto it = memo_.find(e); it != memo_.end()) return it->second;
    std::vector<Index> args;
    for (const Index& a : e.args()) args.push_back(run(a));
    Index result = rewrite(rebuild(e, std::move(args)));
    memo_.emplace(e, result);
    return result;
  }

  Range range(const Index& e) const { return bounds(e, ranges_); }

 private:
  Index rewrite(const Index& e);

  const VarRanges& ranges_;
  std::unordered_map<Index, Index> memo_;
};

// The quotient of `a / b` when the dividend stays inside one period of the divisor.
std::optional<int64_t> fixed_quotient(const Index& a, const Index& b, const Simplifier& s) {
  Range ra = s.range(a);
  if (!bounded(ra)) return std::nullopt;
  if (auto c = positive_const(b)) {
    int64_t q = floor_div(*ra.lo, *c);
    if (q == floor_div(*ra.hi, *c)) return q;
    return std::nullopt;
  }
  Range rb = s.range(b);
  if (*ra.lo >= 0 && rb.lo && *ra.hi < *rb.lo) return 0;
  return std::nullopt;
}

// Splits `a` into c*quotient + rest: terms whose coefficient is a multiple of `c`, plus the multiple of c below the
// constant term, go to the quotient. Leaving a constant in [0, c) behind also makes the printed C `/` and `%` agree
// with floor semantics more often: `(x - 1) % 4` becomes `(x + 3) % 4`, which C evaluates correctly at x = 0.
struct Split {
  std::vector<Index> quotient;
  std::vector<Index> rest;
};
Split split_multiples(const Index& a, int64_t c) {
  Split out;
  std::vector<Index> storage;
  for (const Index& t : terms_of(a, storage)) {
    Term term = split_term(t);
    if (!term.monomial.defined()) {
      if (int64_t q = floor_div(term.coeff, c); q != 0) out.quotient.push_back(Index(q));
      if (int64_t r = floor_mod(term.coeff, c); r != 0) out.rest.push_back(Index(r));
    } else if (term.coeff % c == 0) {
      out.quotient.push_back(make_term(term.coeff / c, term.monomial));
    } else {
      out.rest.push_back(t);
    }
  }
  return out;
}

// Whether a split's rest may be negative: floor((q*c + r) / c) == q + floor(r / c) for every integer r, but the
// kernels print floordiv and mod as C's truncating `/` and `%`, right only for the non-negative dividends the compiler
// builds, so a split must keep the rest non-negative. (s0*33 - 1 - x) floordiv 33, the row of a flipped reshape of an
// expanded tensor, would read s0 + (-1 - x) / 33: row s0 - 1 for every x below 33 where C truncates. The rest is
// non-negative where its range says so, or where every term is a positive multiple of variables (loop counters and
// sizes, non-negative, whether or not their ranges are given) and the constant is not negative: (x - 1) % 4 reads
// (x + 3) % 4, also right at x = 0.
bool split_may_turn_negative(const Split& split, Simplifier& s) {
  const Index rest = sum(split.rest);
  if (const Range r = s.range(rest); r.lo && *r.lo >= 0) return false;
  std::vector<Index> storage;
  for (const Index& t : terms_of(rest, storage)) {
    const Term term = split_term(t);
    if (term.coeff < 0) return true;
    if (!term.monomial.defined()) continue;
    for (const Index& f : term.monomial.op() == IndexOp::Mul ? term.monomial.args() : std::vector<Index>{term.monomial})
      if (f.op() != IndexOp::Var) return true;
  }
  return false;
}

// (q*c + r) floordiv c == q + r floordiv c.
std::optional<Index> div_pull_multiples(const Index& e, Simplifier& s) {
  auto c = positive_const(e.args()[1]);
  if (!c) return std::nullopt;
  Split split = split_multiples(e.args()[0], *c);
  if (split.quotient.empty() || split_may_turn_negative(split, s)) return std::nullopt;
  return sum(split.quotient) + floordiv(sum(split.rest), *c);
}

// (q*c + r) mod c == r mod c.
std::optional<Index> mod_drop_multiples(const Index& e, Simplifier& s) {
  auto c = positive_const(e.args()[1]);
  if (!c) return std::nullopt;
  Split split = split_multiples(e.args()[0], *c);
  if (split.quotient.empty() || split_may_turn_negative(split, s)) return std::nullopt;
  return mod(sum(split.rest), *c);
}

std::optional<Index> div_fixed_quotient(const Index& e, Simplifier& s) {
  if (auto q = fixed_quotient(e.args()[0], e.args()[1], s)) return Index(*q);
  return std::nullopt;
}

std::optional<Index> mod_fixed_quotient(const Index& e, Simplifier& s) {
  if (auto q = fixed_quotient(e.args()[0], e.args()[1], s)) return e.args()[0] - e.args()[1] * *q;
  return std::nullopt;
}

// When a = g*P + r with g | c and 0 <= r < g, the low part r cannot carry into the quotient:
//   a floordiv c == P floordiv (c/g),   a mod c == g*(P mod (c/g)) + r.
// This is what vectorised and tiled indices (`x*4 + v`, v < 4) need. Returns the g that works, with P and r.
struct Factored {
  int64_t g;
  Index p;
  Index r;
};
std::optional<Factored> factor_small_remainder(const Index& a, int64_t c, const Simplifier& s) {
  std::set<int64_t, std::greater<>> candidates;
  std::vector<Index> storage;
  for (const Index& t : terms_of(a, storage)) {
    if (int64_t g = std::gcd(c, split_term(t).coeff); g > 1) candidates.insert(g);
  }
  for (int64_t g : candidates) {
    Split split = split_multiples(a, g);
    Index r = sum(split.rest);
    Range rr = s.range(r);
    if (rr.lo && *rr.lo >= 0 && rr.hi && *rr.hi < g) return Factored{g, sum(split.quotient), r};
  }
  return std::nullopt;
}

std::optional<Index> div_drop_small_remainder(const Index& e, Simplifier& s) {
  auto c = positive_const(e.args()[1]);
  if (!c) return std::nullopt;
  auto f = factor_small_remainder(e.args()[0], *c, s);
  if (!f) return std::nullopt;
  return floordiv(f->p, *c / f->g);
}

std::optional<Index> mod_factor_small_remainder(const Index& e, Simplifier& s) {
  auto c = positive_const(e.args()[1]);
  if (!c) return std::nullopt;
  auto f = factor_small_remainder(e.args()[0], *c, s);
  if (!f) return std::nullopt;
  return mod(f->p, *c / f->g) * f->g + f->r;
}

// (x floordiv a) floordiv b == x floordiv (a*b) for positive a, b.
std::optional<Index> div_of_div(const Index& e, Simplifier&) {
  const Index& inner = e.args()[0];
  auto b = positive_const(e.args()[1]);
  if (!b || inner.op() != IndexOp::FloorDiv) return std::nullopt;
  auto a = positive_const(inner.args()[1]);
  if (!a) return std::nullopt;
  return floordiv(inner.args()[0], mul_or_throw(*a, *b));
}

// (x mod (a*b)) floordiv a == (x floordiv a) mod b for positive a, b.
std::optional<Index> div_of_mod(const Index& e, Simplifier&) {
  const Index& inner = e.args()[0];
  auto a = positive_const(e.args()[1]);
  if (!a || inner.op() != IndexOp::Mod) return std::nullopt;
  auto m = positive_const(inner.args()[1]);
  if (!m || *m % *a != 0) return std::nullopt;
  return mod(floordiv(inner.args()[0], *a), *m / *a);
}

// (x mod (k*c)) mod c == x mod c, which includes (x mod c) mod c.
std::optional<Index> mod_of_mod(const Index& e, Simplifier&) {
  const Index& inner = e.args()[0];
  auto c = positive_const(e.args()[1]);
  if (!c || inner.op() != IndexOp::Mod) return std::nullopt;
  auto m = positive_const(inner.args()[1]);
  if (!m || *m % *c != 0) return std::nullopt;
  return mod(inner.args()[0], *c);
}

std::optional<Index> minmax_by_bounds(const Index& e, Simplifier& s) {
  const Index& a = e.args()[0];
  const Index& b = e.args()[1];
  Range ra = s.range(a);
  Range rb = s.range(b);
  bool is_min = e.op() == IndexOp::Min;
  if (ra.hi && rb.lo && *ra.hi <= *rb.lo) return is_min ? a : b;
  if (rb.hi && ra.lo && *rb.hi <= *ra.lo) return is_min ? b : a;
  return std::nullopt;
}

// m*c*(x floordiv c) + m*(x mod c) == m*x: undoes the flat-index -> coordinates split that views and reshapes
// produce. The quotient term is looked up in its simplified form, so ((x / 7) / 6) already reads x / 42.
std::optional<Index> recombine_div_mod(const Index& e, Simplifier& s) {
  std::map<Index, int64_t> coeffs;
  int64_t constant = 0;
  collect_terms(e, coeffs, constant);
  for (const auto& [monomial, m] : coeffs) {
    if (monomial.op() != IndexOp::Mod) continue;
    auto c = positive_const(monomial.args()[1]);
    if (!c) continue;
    const Index& x = monomial.args()[0];
    Index q = s.run(floordiv(x, *c));
    Term qt = split_term(q);
    if (!qt.monomial.defined()) continue;
    auto it = coeffs.find(qt.monomial);
    if (it == coeffs.end() || it->second != mul_or_throw(mul_or_throw(m, *c), qt.coeff)) continue;
    return e - make_term(m, monomial) - q * mul_or_throw(m, *c) + x * m;
  }
  return std::nullopt;
}

// (x floordiv a) floordiv b == x floordiv (a*b) for positive a, b that are not both constants (div_of_div takes
// those): size symbols and their products, positive by their ranges. Nested divisions by symbolic strides then meet
// the single division that an outer coordinate uses (unflatten over [s0, s1, s2]).
std::optional<Index> div_of_div_positive(const Index& e, Simplifier& s) {
  const Index& inner = e.args()[0];
  if (inner.op() != IndexOp::FloorDiv) return std::nullopt;
  const Index& a = inner.args()[1];
  const Index& b = e.args()[1];
  if (a.is_const() && b.is_const()) return std::nullopt;
  const Range ra = s.range(a), rb = s.range(b);
  if (!ra.lo || *ra.lo < 1 || !rb.lo || *rb.lo < 1) return std::nullopt;
  return floordiv(inner.args()[0], a * b);
}

// m*R*d*(x floordiv d) + m*R*(x mod d) == m*R*x for a divisor d that is not a constant (recombine_div_mod takes
// those) and any factors R: the coordinates that unflatten gives a flat index over symbolic sizes, recombined, so a
// contiguous tensor's load over [s0, s1] reads `i` and vector groups over it are contiguous.
std::optional<Index> recombine_symbolic_div_mod(const Index& e, Simplifier& s) {
  std::map<Index, int64_t> coeffs;
  int64_t constant = 0;
  collect_terms(e, coeffs, constant);
  for (const auto& [monomial, m] : coeffs) {
    const std::vector<Index> factors =
        monomial.op() == IndexOp::Mul ? monomial.args() : std::vector<Index>{monomial};
    for (size_t f = 0; f < factors.size(); ++f) {
      const Index& factor = factors[f];
      if (factor.op() != IndexOp::Mod || factor.args()[1].is_const()) continue;
      const Index& x = factor.args()[0];
      const Index& d = factor.args()[1];
      std::vector<Index> rest;
      for (size_t o = 0; o < factors.size(); ++o)
        if (o != f) rest.push_back(factors[o]);
      const Index r = product(rest);
      const Index whole = s.run(floordiv(x, d)) * d * r;
      const Term wt = split_term(whole);
      if (!wt.monomial.defined()) continue;
      auto it = coeffs.find(wt.monomial);
      if (it == coeffs.end() || it->second != mul_or_throw(m, wt.coeff)) continue;
      return e - make_term(m, monomial) - whole * m + x * r * m;
    }
  }
  return std::nullopt;
}

struct Rule {
  IndexOp op;
  RuleFn apply;
};

// Order matters only for speed and for which of two equivalent results is reached first; cheap structural rules
// come before range-dependent ones.
constexpr Rule kRules[] = {
    {IndexOp::FloorDiv, div_pull_multiples},
    {IndexOp::FloorDiv, div_of_div},
    {IndexOp::FloorDiv, div_of_mod},
    {IndexOp::FloorDiv, div_fixed_quotient},
    {IndexOp::FloorDiv, div_drop_small_remainder},
    {IndexOp::Mod, mod_drop_multiples},
    {IndexOp::Mod, mod_of_mod},
    {IndexOp::Mod, mod_fixed_quotient},
    {IndexOp::Mod, mod_factor_small_remainder},
    {IndexOp::Min, minmax_by_bounds},
    {IndexOp::Max, minmax_by_bounds},
    {IndexOp::FloorDiv, div_of_div_positive},
    {IndexOp::Add, recombine_div_mod},
    {IndexOp::Add, recombine_symbolic_div_mod},
};

Index Simplifier::rewrite(const Index& e) {
  for (const Rule& rule : kRules) {
    if (rule.op != e.op()) continue;
    std::optional<Index> r = rule.apply(e, *this);
    if (r && *r != e) return run(*r);
  }
  return e;
}

void collect_vars(const Index& e, std::set<std::string>& out) {
  if (e.is_var()) out.insert(e.name());
  for (const Index& a : e.args()) collect_vars(a, out);
}

bool mentions(const Index& e, const std::string& var) {
  if (e.is_var()) return e.name() == var;
  return std::any_of(e.args().begin(), e.args().end(), [&](const Index& a) { return mentions(a, var); });
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// Handle

Index::Index(int64_t value) : Index(IndexFactory::make(IndexOp::Const, value, {}, {})) {}

Index Index::var(std::string name) { return IndexFactory::make(IndexOp::Var, 0, std::move(name), {}); }

IndexOp Index::op() const { return node_->op; }
int64_t Index::value() const { return node_->value; }
const std::string& Index::name() const { return node_->name; }
const std::vector<Index>& Index::args() const { return node_->args; }

std::optional<int64_t> Index::as_const() const {
  if (!is_const()) return std::nullopt;
  return value();
}

size_t Index::hash() const { return node_ ? node_->hash : 0; }

bool Index::operator==(const Index& other) const {
  if (node_ == other.node_) return true;
  if (!node_ || !other.node_ || node_->hash != other.node_->hash) return false;
  return compare(*this, other) == 0;
}

bool Index::operator<(const Index& other) const { return compare(*this, other) < 0; }

std::string Index::str() const { return node_ ? print(*this) : "<undefined>"; }

// ---------------------------------------------------------------------------------------------------------------
// Factories

Index sum(const std::vector<Index>& terms) {
  std::map<Index, int64_t> coeffs;
  int64_t constant = 0;
  for (const Index& t : terms) collect_terms(t, coeffs, constant);
  return build_sum(coeffs, constant);
}

Index product(const std::vector<Index>& factors) {
  int64_t coeff = 1;
  std::vector<Index> atoms;
  std::vector<Index> sums;
  for (const Index& f : factors) collect_factors(f, coeff, atoms, sums);
  if (coeff == 0) return Index(0);
  std::sort(atoms.begin(), atoms.end());
  Index monomial = atoms.empty() ? Index(coeff)
                                 : make_term(coeff, atoms.size() == 1 ? atoms.front() : make_node(IndexOp::Mul, atoms));
  return sums.empty() ? monomial : distribute(monomial, sums);
}

Index operator+(const Index& a, const Index& b) { return sum({a, b}); }
Index operator-(const Index& a, const Index& b) { return sum({a, -b}); }
Index operator*(const Index& a, const Index& b) { return product({a, b}); }
Index operator-(const Index& a) { return product({Index(-1), a}); }

Index floordiv(const Index& a, const Index& b) {
  require_nonzero_divisor(b);
  if (a.is_const() && b.is_const()) return floor_div(a.value(), b.value());
  if (b.is_const(1) || a.is_const(0)) return a;
  if (b.is_const(-1)) return -a;
  return make_node(IndexOp::FloorDiv, {a, b});
}

Index mod(const Index& a, const Index& b) {
  require_nonzero_divisor(b);
  if (a.is_const() && b.is_const()) return floor_mod(a.value(), b.value());
  if (b.is_const(1) || b.is_const(-1) || a.is_const(0) || a == b) return Index(0);
  return make_node(IndexOp::Mod, {a, b});
}

Index min(const Index& a, const Index& b) { return make_minmax(IndexOp::Min, a, b); }
Index max(const Index& a, const Index& b) { return make_minmax(IndexOp::Max, a, b); }

// ---------------------------------------------------------------------------------------------------------------
// Analyses

Range bounds(const Index& e, const VarRanges& ranges) {
  const std::vector<Index>& a = e.args();
  switch (e.op()) {
    case IndexOp::Const: return Range::exact(e.value());
    case IndexOp::Var: {
      auto it = ranges.find(e.name());
      return it == ranges.end() ? Range{} : it->second;
    }
    case IndexOp::Add: {
      Range r = Range::exact(0);
      for (const Index& t : a) {
        Range rt = bounds(t, ranges);
        r = {add_bound(r.lo, rt.lo), add_bound(r.hi, rt.hi)};
      }
      return r;
    }
    case IndexOp::Mul: {
      Range r = Range::exact(1);
      for (const Index& f : a) r = mul_ranges(r, bounds(f, ranges));
      return r;
    }
    case IndexOp::FloorDiv: return floordiv_range(bounds(a[0], ranges), bounds(a[1], ranges));
    case IndexOp::Mod: return mod_range(bounds(a[0], ranges), bounds(a[1], ranges));
    case IndexOp::Min:
    case IndexOp::Max: return minmax_range(e.op(), bounds(a[0], ranges), bounds(a[1], ranges));
  }
  return {};
}

Index simplify(const Index& e, const VarRanges& ranges) {
  Simplifier simplifier(ranges);
  return simplifier.run(e);
}

Index substitute(const Index& e, const std::map<std::string, Index>& replacements) {
  if (e.is_var()) {
    auto it = replacements.find(e.name());
    return it == replacements.end() ? e : it->second;
  }
  std::vector<Index> args;
  for (const Index& a : e.args()) args.push_back(substitute(a, replacements));
  return rebuild(e, std::move(args));
}

std::optional<int64_t> evaluate(const Index& e, const std::map<std::string, int64_t>& values) {
  switch (e.op()) {
    case IndexOp::Const: return e.value();
    case IndexOp::Var: {
      auto it = values.find(e.name());
      if (it == values.end()) return std::nullopt;
      return it->second;
    }
    default: break;
  }
  const std::vector<Index>& a = e.args();
  std::optional<int64_t> acc = evaluate(a[0], values);
  if (!acc) return std::nullopt;
  for (size_t i = 1; i < a.size(); ++i) {
    std::optional<int64_t> v = evaluate(a[i], values);
    if (!v) return std::nullopt;
    switch (e.op()) {
      case IndexOp::Add: *acc += *v; break;
      case IndexOp::Mul: *acc *= *v; break;
      case IndexOp::FloorDiv: {
        if (*v == 0) return std::nullopt;
        int64_t q = *acc / *v;
        if ((*acc % *v != 0) && ((*acc < 0) != (*v < 0))) --q;
        *acc = q;
        break;
      }
      case IndexOp::Mod: {
        if (*v == 0) return std::nullopt;
        int64_t r = *acc % *v;
        if (r != 0 && ((r < 0) != (*v < 0))) r += *v;
        *acc = r;
        break;
      }
      case IndexOp::Min: *acc = std::min(*acc, *v); break;
      case IndexOp::Max: *acc = std::max(*acc, *v); break;
      default: return std::nullopt;
    }
  }
  return acc;
}

std::vector<std::string> free_vars(const Index& e) {
  std::set<std::string> vars;
  collect_vars(e, vars);
  return {vars.begin(), vars.end()};
}

// Canonical sums are polynomials over atoms, so `e` is affine in `var` exactly when every term mentioning it is
// `coeff * var * (factors free of var)`.
std::optional<Index> affine_coefficient(const Index& e, const std::string& var) {
  std::vector<Index> coefficient;
  std::vector<Index> storage;
  for (const Index& t : terms_of(e, storage)) {
    if (!mentions(t, var)) continue;
    std::vector<Index> others;
    int occurrences = 0;
    for (const Index& f : t.op() == IndexOp::Mul ? t.args() : std::vector<Index>{t}) {
      if (f.is_var() && f.name() == var) {
        ++occurrences;
      } else if (mentions(f, var)) {
        return std::nullopt;
      } else {
        others.push_back(f);
      }
    }
    if (occurrences != 1) return std::nullopt;
    coefficient.push_back(product(others));
  }
  return sum(coefficient);
}

}  // namespace hi
