#include "runtime/compiler.h"

namespace hi {

CompileError::CompileError(const std::string& compiler, const std::string& name_hint, const std::string& target_id,
                           const std::string& log)
    : std::runtime_error(compiler + " failed to compile kernel '" + name_hint + "' for " + target_id +
                         (log.empty() ? std::string(" (the compiler gave no log)") : ":\n" + log)),
      name_hint_(name_hint),
      log_(log) {}

std::unique_ptr<Compiler> compiler_for(const Target& target) {
  switch (target.kind) {
    case TargetKind::Amd:
      return make_hiprtc_compiler();
    case TargetKind::Nvidia:
      return make_nvrtc_compiler();
    case TargetKind::Cpu:
      return make_host_compiler();
  }
  throw std::invalid_argument("no compiler for target " + target.id());
}

}  // namespace hi
