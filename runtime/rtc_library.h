// The compile flow that HIPRTC and NVRTC share, for hiprtc_compiler.cpp and nvrtc_compiler.cpp only. HIPRTC copies
// NVRTC's C API: the same calls under another prefix (hiprtcCreateProgram / nvrtcCreateProgram), int results with 0
// for success, an opaque program handle. They differ only in the getter for the compiled code: hiprtcGetCode(Size)
// gives a code object, nvrtcGetCUBIN(Size) a cubin. The entry points are declared here rather than taken from
// <hip/hiprtc.h> or <nvrtc.h>, so the build needs neither ROCm nor CUDA (HIPRTC's C ABI has been stable since
// ROCm 4).
#pragma once

#include <string>
#include <vector>

#include "runtime/compiler.h"
#include "runtime/dynamic_library.h"

namespace hi {

struct RtcProgramOpaque;

/// One runtime-compiler library (HIPRTC or NVRTC) opened with dlopen and its entry points looked up. Immutable after
/// construction, so one instance may serve several threads (each compile creates its own program).
class RtcLibrary {
 public:
  using Result = int;                 ///< hiprtcResult / nvrtcResult: a C enum, 0 for success
  using Program = RtcProgramOpaque*;  ///< hiprtcProgram / nvrtcProgram
  /// The version text for cache keys ("hiprtc 5.7.31921"), from <prefix>Version's major.minor and the file the
  /// library resolved to (whose name often carries the full release).
  using VersionText = std::string (*)(int major, int minor, const std::string& resolved_path);

  /// Looks up <prefix>GetErrorString, Version, CreateProgram, CompileProgram, GetProgramLogSize, GetProgramLog,
  /// DestroyProgram, and the getters <prefix>Get<code_name>Size and <prefix>Get<code_name> ("hiprtc" with "Code",
  /// "nvrtc" with "CUBIN"). Throws std::runtime_error naming the first missing symbol and the library.
  RtcLibrary(DynamicLibrary library, std::string prefix, const std::string& code_name, VersionText version_text);

  const std::string& version_text() const { return version_text_; }
  /// <prefix>Version as major * 100 + minor (1204 for 12.4).
  int version_number() const { return version_number_; }

  /// Compiles `source` as the program `program_name` with `options`, timing the whole call. Throws
  /// CompileError(<prefix>, name_hint, target_id, log) when the source is rejected (the log is the error string
  /// when the compiler wrote none) and std::runtime_error naming the call and the library when a call fails.
  CompiledCode compile(const std::string& source, const std::string& program_name,
                       const std::vector<std::string>& options, const std::string& name_hint,
                       const std::string& target_id) const;

 private:
  void check(Result result, const std::string& call) const;
  std::string program_log(Program program) const;

  DynamicLibrary library_;
  std::string prefix_;
  std::string code_name_;  ///< "Code" or "CUBIN"
  const char* (*get_error_string_)(Result);
  Result (*create_program_)(Program*, const char*, const char*, int, const char* const*, const char* const*);
  Result (*compile_program_)(Program, int, const char* const*);
  Result (*get_program_log_size_)(Program, size_t*);
  Result (*get_program_log_)(Program, char*);
  Result (*get_code_size_)(Program, size_t*);
  Result (*get_code_)(Program, char*);
  Result (*destroy_program_)(Program*);
  std::string version_text_;
  int version_number_ = 0;
};

}  // namespace hi
