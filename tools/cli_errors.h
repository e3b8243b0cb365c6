// How the command-line tools (hipinductor-aot, hipinductor-demo) turn an exception into one line on stderr and an
// exit status, so that scripts can tell bad input from a broken toolchain.
#pragma once

#include <exception>
#include <iostream>
#include <stdexcept>
#include <string_view>

#include "frontend/graph_json.h"
#include "lowering/lower_graph.h"

namespace hi {

/// Writes "<tool>: <what>" to stderr (a LoweringError, which names a node, also names `graph_path`) and returns the
/// exit status: 2 for bad input (GraphFormatError, LoweringError, std::invalid_argument: a malformed graph, an
/// unsupported op, an unknown target), 1 for anything else (a compiler that rejected the source or is missing, an
/// I/O failure). Call from a catch block with std::current_exception().
inline int report_error(std::string_view tool, std::string_view graph_path, std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const GraphFormatError& e) {
    std::cerr << tool << ": " << e.what() << "\n";
    return 2;
  } catch (const LoweringError& e) {
    std::cerr << tool << ": " << graph_path << ": " << e.what() << "\n";
    return 2;
  } catch (const std::invalid_argument& e) {
    std::cerr << tool << ": " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << tool << ": " << e.what() << "\n";
    return 1;
  } catch (...) {
    std::cerr << tool << ": unknown error\n";
    return 1;
  }
}

}  // namespace hi
