// libFuzzer harness for the graph JSON reader and its validation (frontend/graph_json.h).
//
// The contract checked, for any byte string:
//   - read_graph_json returns a graph or throws GraphFormatError whose message is one line starting with the source
//     name; no other exception, crash, sanitizer report or hang;
//   - a graph it returns is written back (write_graph_json) to text that reads again, and writing that graph gives
//     the same text: the writer's round-trip promise, checked on every graph the mutations reach.
#include <cstddef>
#include <cstdint>
#include <string>

#include "frontend/graph_json.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

constexpr const char* kSource = "fuzz.json";

void check_message(const hi::GraphFormatError& e, const std::string& source) {
  std::string msg = e.what();
  if (msg.rfind(source + ": ", 0) != 0) hi::fuzz::fuzz_fail("error message does not start with the source name: " + msg);
  if (msg.find('\n') != std::string::npos) hi::fuzz::fuzz_fail("error message spans several lines: " + msg);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  hi::Graph graph;
  try {
    graph = hi::read_graph_json(text, kSource);
  } catch (const hi::GraphFormatError& e) {
    check_message(e, kSource);
    return 0;
  } catch (const std::exception& e) {
    hi::fuzz::fuzz_fail("read_graph_json threw " + hi::fuzz::describe_exception(e));
  }

  std::string written;
  try {
    written = hi::write_graph_json(graph);
  } catch (const std::exception& e) {
    hi::fuzz::fuzz_fail("write_graph_json of a graph that read threw " + hi::fuzz::describe_exception(e));
  }
  try {
    hi::Graph again = hi::read_graph_json(written, "written.json");
    std::string rewritten = hi::write_graph_json(again);
    if (rewritten != written) {
      hi::fuzz::fuzz_fail("round trip changed the graph:\n--- written\n" + written + "--- read and written again\n" +
                          rewritten);
    }
  } catch (const std::exception& e) {
    hi::fuzz::fuzz_fail("the written graph does not read back: " + hi::fuzz::describe_exception(e) + "\n" + written);
  }
  return 0;
}
