// How the command-line tools (hipinductor-aot, hipinductor-demo) turn an exception into one line on stderr and an
// exit status, so that scripts can tell bad input from a broken toolchain.
#pragma once

#include <exception>
#include <iostream>
#include <stdexcept>
#include <string>
#include <string_view>

#include "frontend/graph_json.h"
#include "lowering/lower_graph.h"
#include "tools/error_line.h"

namespace hi {

/// Writes "<tool>: <what>" to stderr, one line of at most kMaxErrorLine characters (a LoweringError, which names a
/// node, and an int64 overflow also name `graph_path`), and returns the exit status: 2 for bad input
/// (GraphFormatError, LoweringError, std::invalid_argument: a malformed graph, an unsupported op, an unknown target,
/// an output path that is a file; std::overflow_error: sizes whose index arithmetic overflows int64), 1 for anything
/// else (a compiler that rejected the source or is missing, an I/O failure). Call from a catch block with
/// std::current_exception().
inline int report_error(std::string_view tool, std::string_view graph_path, std::exception_ptr error) {
  std::string message;
  int status = 1;
  try {
    std::rethrow_exception(error);
  } catch (const GraphFormatError& e) {
    message = e.what();
    status = 2;
  } catch (const LoweringError& e) {
    message = std::string(graph_path) + ": " + e.what();
    status = 2;
  } catch (const std::invalid_argument& e) {
    message = e.what();
    status = 2;
  } catch (const std::overflow_error& e) {
    message = std::string(graph_path) + ": " + e.what();
    status = 2;
  } catch (const std::exception& e) {
    message = e.what();
  } catch (...) {
    message = "unknown error";
  }
  std::cerr << error_line(std::string(tool) + ": " + message) << "\n";
  return status;
}

}  // namespace hi
