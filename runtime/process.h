// Running a host program (the C++ compiler of the cpu device) without a shell: argv is passed as given, so no text
// in a path, option or environment variable is ever interpreted by /bin/sh.
#pragma once

#include <string>
#include <vector>

namespace hi {

struct ProcessResult {
  int exit_code = -1;  ///< exit status, or 128 + signal number when the program was killed by a signal
  std::string output;  ///< stdout and stderr interleaved, as a terminal would show them
};

/// Runs argv[0] (looked up in PATH when it has no '/') with argv, waits for it and returns its combined output.
/// Throws std::runtime_error naming the program when it cannot be started at all.
ProcessResult run_process(const std::vector<std::string>& argv);

/// Splits a command variable like $CXX ("ccache g++ -m64") on whitespace into argv words (no quoting rules).
std::vector<std::string> split_command_words(const std::string& command);

}  // namespace hi
