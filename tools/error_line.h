// One line of at most kMaxErrorLine characters for a command-line tool's error message: messages can echo input
// (a node name, a key, a command word), and input can be megabytes.
#pragma once

#include <cstddef>
#include <string>

namespace hi {

inline constexpr size_t kMaxErrorLine = 500;

/// `text` on one line, cut to kMaxErrorLine characters with "..." where it was cut.
inline std::string error_line(std::string text) {
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  if (text.size() > kMaxErrorLine) text = text.substr(0, kMaxErrorLine - 3) + "...";
  return text;
}

}  // namespace hi
