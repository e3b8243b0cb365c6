// Index expressions as text, for the "sym" fields of the graph format: `s0`, `s0*64`, `s0 + 1`, `s0 // 2`,
// `(s0 + 1) % 4`, `min(s0, 8)`.
//
// The syntax is Python's (and sympy's, as FX prints symbolic sizes): `+ - * // %`, unary minus, parentheses,
// `min(a, b)`, `max(a, b)`, decimal integers, identifiers. `/` is read as `//` too, since Index::str() prints floor
// division as C's `/` (index expressions are non-negative, where the two agree).
#pragma once

#include <string>
#include <string_view>

#include "ir/index.h"

namespace hi {

/// Text that parse_index_text reads back to an equal expression.
std::string format_index_text(const Index& e);
/// Parses an expression; throws std::invalid_argument saying what was expected and at which character offset.
Index parse_index_text(std::string_view text);

}  // namespace hi
