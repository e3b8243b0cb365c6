// What the libFuzzer harnesses share: how a finding is reported. A harness calls fuzz_fail for a broken contract
// (an exception the caller is not promised, output that does not round-trip); abort() makes libFuzzer save the input
// as crash-<sha1> and makes the replay driver (fuzz_replay_main.cpp) exit non-zero.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <typeinfo>

namespace hi::fuzz {

[[noreturn]] inline void fuzz_fail(const std::string& what) {
  std::fprintf(stderr, "fuzz finding: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

/// "std::overflow_error: index expression: int64 overflow in a sum", for findings that are unexpected exceptions.
inline std::string describe_exception(const std::exception& e) {
  return std::string(typeid(e).name()) + ": " + e.what();
}

}  // namespace hi::fuzz
