#include "frontend/index_text.h"

#include <cctype>
#include <charconv>
#include <stdexcept>

namespace hi {
namespace {

// Binding strength of each printed form; an operand binding weaker than its context gets parentheses.
constexpr int kSum = 1;
constexpr int kProduct = 2;
constexpr int kAtom = 3;

void print(const Index& e, int context, std::string& out) {
  auto wrap = [&](int self, auto&& body) {
    bool parens = self < context;
    if (parens) out += '(';
    body();
    if (parens) out += ')';
  };
  switch (e.op()) {
    case IndexOp::Const:
      // A negative constant is unary minus, which binds tighter than any binary operator.
      out += std::to_string(e.value());
      return;
    case IndexOp::Var:
      out += e.name();
      return;
    case IndexOp::Add:
      wrap(kSum, [&] {
        for (size_t i = 0; i < e.args().size(); ++i) {
          if (i) out += " + ";
          print(e.args()[i], kSum, out);
        }
      });
      return;
    case IndexOp::Mul:
      wrap(kProduct, [&] {
        for (size_t i = 0; i < e.args().size(); ++i) {
          if (i) out += '*';
          print(e.args()[i], kProduct, out);
        }
      });
      return;
    case IndexOp::FloorDiv:
    case IndexOp::Mod:
      // Left-associative: the right operand needs parentheses if it is itself a product.
      wrap(kProduct, [&] {
        print(e.args()[0], kProduct, out);
        out += e.op() == IndexOp::FloorDiv ? " // " : " % ";
        print(e.args()[1], kAtom, out);
      });
      return;
    case IndexOp::Min:
    case IndexOp::Max:
      out += e.op() == IndexOp::Min ? "min(" : "max(";
      print(e.args()[0], kSum, out);
      out += ", ";
      print(e.args()[1], kSum, out);
      out += ')';
      return;
  }
}

/// Recursive descent over the grammar in the header; depth-limited so hostile input cannot overflow the stack.
class IndexParser {
 public:
  explicit IndexParser(std::string_view text) : text_(text) {}

  Index parse() {
    Index e = sum();
    skip_space();
    if (pos_ != text_.size()) fail("expected an operator or the end");
    return e;
  }

 private:
  static constexpr int kMaxDepth = 64;

  [[noreturn]] void fail(const std::string& what) const {
    throw std::invalid_argument(what + " at offset " + std::to_string(pos_) + " of '" + std::string(text_) + "'");
  }
  void skip_space() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }
  bool accept(std::string_view token) {
    skip_space();
    if (text_.substr(pos_, token.size()) != token) return false;
    pos_ += token.size();
    return true;
  }

  Index sum() {
    Index e = product_term();
    for (;;) {
      if (accept("+")) {
        e = e + product_term();
      } else if (accept("-")) {
        e = e - product_term();
      } else {
        return e;
      }
    }
  }

  Index product_term() {
    Index e = unary();
    for (;;) {
      if (accept("*")) {
        e = e * unary();
      } else if (accept("//") || accept("/")) {
        e = floordiv(e, divisor());
      } else if (accept("%")) {
        e = mod(e, divisor());
      } else {
        return e;
      }
    }
  }

  Index divisor() {
    size_t at = pos_;
    Index d = unary();
    if (d.is_const(0)) {
      pos_ = at;
      fail("division by zero");
    }
    return d;
  }

  Index unary() {
    if (++depth_ > kMaxDepth) fail("expression nested too deeply");
    Index e = accept("-") ? -unary() : atom();
    --depth_;
    return e;
  }

  Index atom() {
    skip_space();
    if (pos_ >= text_.size()) fail("expected a number, symbol or '('");
    char c = text_[pos_];
    if (accept("(")) {
      Index e = sum();
      if (!accept(")")) fail("expected ')'");
      return e;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      int64_t v = 0;
      auto [end, ec] = std::from_chars(text_.data() + pos_, text_.data() + text_.size(), v);
      if (ec != std::errc()) fail("integer out of range");
      pos_ = static_cast<size_t>(end - text_.data());
      return Index(v);
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = pos_;
      while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
        ++pos_;
      }
      std::string name(text_.substr(start, pos_ - start));
      if ((name == "min" || name == "max") && accept("(")) {
        Index a = sum();
        if (!accept(",")) fail("expected ','");
        Index b = sum();
        if (!accept(")")) fail("expected ')'");
        return name == "min" ? min(a, b) : max(a, b);
      }
      return Index::var(name);
    }
    fail("expected a number, symbol or '('");
  }

  std::string_view text_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

std::string format_index_text(const Index& e) {
  std::string out;
  print(e, kSum, out);
  return out;
}

Index parse_index_text(std::string_view text) { return IndexParser(text).parse(); }

}  // namespace hi
