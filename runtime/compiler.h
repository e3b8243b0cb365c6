// Compilers turn one self-contained HIP source (preludes already prepended; no include paths) into a code object:
//   AMD    → HIPRTC   → .hsaco  (amdgcn ELF, or a clang offload bundle holding one; see amd_code_object.h)
//   NVIDIA → NVRTC    → .cubin  (ELF for the real sm_ arch)
//   cpu    → host C++ → .so     (the cpu device dlopens it; see cpu_device.h)
// Vendor libraries are loaded with dlopen on first use, so the build needs neither ROCm nor CUDA headers; a missing
// library is reported when a compiler is created, naming every library file tried.
// Compilers are stateless apart from the loaded library and may be used from several threads at once.
// Callers normally go through compile_cached (code_object_cache.h), which keys on name() and version().
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "codegen/target.h"

namespace hi {

struct CompiledCode {
  std::vector<char> binary;  ///< the code object, ready for Device::load
  std::string log;           ///< compiler diagnostics (warnings); empty when there were none
  double compile_ms = 0;     ///< wall time of the compile call; 0 when the code object came from the cache
};

/// A compile that the compiler rejected. what() names the kernel, the target and the compiler, then the full log.
class CompileError : public std::runtime_error {
 public:
  CompileError(const std::string& compiler, const std::string& name_hint, const std::string& target_id,
               const std::string& log);
  const std::string& name_hint() const { return name_hint_; }
  const std::string& log() const { return log_; }

 private:
  std::string name_hint_;
  std::string log_;
};

class Compiler {
 public:
  virtual ~Compiler() = default;
  /// "hiprtc", "nvrtc" or "host-c++".
  virtual std::string name() const = 0;
  /// Identifies the exact compiler build for cache keys: "hiprtc 5.7.31921", "nvrtc 12.4",
  /// "c++ (Debian 14.2.0-19) 14.2.0".
  virtual std::string version() const = 0;
  /// The options every compile passes before `extra_options` (documented per compiler in compiler.cpp files).
  virtual std::vector<std::string> base_options(const Target& target) const = 0;
  /// Compiles `source` for `target` (whose kind must match the compiler). `name_hint` names the kernel (or kernel
  /// set) in errors and in the program name the compiler sees. Throws CompileError when the source is rejected,
  /// std::invalid_argument for a target of the wrong kind, std::runtime_error when the compiler itself fails.
  virtual CompiledCode compile(const std::string& source, const std::string& name_hint, const Target& target,
                               const std::vector<std::string>& extra_options) = 0;
};

/// HIPRTC, tried as libhiprtc.so.6, .so.5, .so, then libamdhip64.so.6, .so.5, .so (older ROCm ships it inside).
std::unique_ptr<Compiler> make_hiprtc_compiler();
/// NVRTC, tried as libnvrtc.so.13, .so.12, .so.
std::unique_ptr<Compiler> make_nvrtc_compiler();
/// The host C++ compiler named by $CXX (split on whitespace), default `c++`.
std::unique_ptr<Compiler> make_host_compiler();
/// Links objects of the host compiler (its compile() with the extra option "-c") into one shared object, as compile()
/// makes of a whole source: how the units of a large cpu module (split_module) become one code object. Throws
/// CompileError naming `name_hint` when the link fails (a symbol defined twice or missing).
CompiledCode link_host_objects(const std::vector<std::vector<char>>& objects, const std::string& name_hint);
/// The compiler for target.kind (one of the three above). Throws std::runtime_error when its library is missing.
std::unique_ptr<Compiler> compiler_for(const Target& target);
/// Compiles a trivial kernel for an NVIDIA `target`, so that NVRTC's once-per-process start (loading it and its
/// builtins: 0.05-0.35 s measured) is over before the first real compile. Nothing for other targets (see the
/// definition). Throws as compiler_for and Compiler::compile do.
void warm_up_compiler(const Target& target);

}  // namespace hi
