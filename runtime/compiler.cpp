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

void warm_up_compiler(const Target& target) {
  // Only NVRTC has a start worth taking ahead. The host compiler is a process per compile. HIPRTC (5.7, dev env) starts
  // in ~0.2 s but then spends ~0.4 s on even a trivial kernel (its runtime header), and a real compile running beside
  // that ended later than without it.
  if (target.kind != TargetKind::Nvidia) return;
  compiler_for(target)->compile("extern \"C\" __global__ void hi_warm_up(float* p) { p[0] = 1.0f; }\n", "hi_warm_up",
                                target, {});
}

}  // namespace hi
