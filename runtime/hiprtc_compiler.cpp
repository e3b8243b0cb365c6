// HIPRTC through dlopen; the compile flow it shares with NVRTC is in rtc_library.h.
#include <mutex>
#include <regex>

#include "runtime/compiler.h"
#include "runtime/rtc_library.h"

namespace hi {

namespace {

// hiprtcVersion is not the ROCm release (ROCm 5.7's reports 9.0) and has no patch level, while code generation
// changes between ROCm patch releases; the library's file name (libamdhip64.so.5.7.31921) carries the release, so
// prefer it, and fall back to hiprtcVersion for an unversioned file.
std::string hiprtc_version_text(int major, int minor, const std::string& resolved_path) {
  static const std::regex so_version(R"(\.so\.([0-9]+\.[0-9]+(\.[0-9]+)*)$)");
  std::smatch match;
  if (std::regex_search(resolved_path, match, so_version)) return "hiprtc " + match[1].str();
  return "hiprtc " + std::to_string(major) + "." + std::to_string(minor);
}

std::shared_ptr<const RtcLibrary> load_hiprtc() {
  // Loaded once per process; a failed load is retried on the next call (the library may be installed later).
  static std::mutex mutex;
  static std::shared_ptr<const RtcLibrary> library;
  std::lock_guard lock(mutex);
  if (!library)
    library = std::make_shared<RtcLibrary>(
        DynamicLibrary::open_first("HIPRTC (AMD runtime compiler)",
                                   {"libhiprtc.so.6", "libhiprtc.so.5", "libhiprtc.so", "libamdhip64.so.6",
                                    "libamdhip64.so.5", "libamdhip64.so"}),
        "hiprtc", "Code", hiprtc_version_text);
  return library;
}

class HiprtcCompiler final : public Compiler {
 public:
  HiprtcCompiler() : hiprtc_(load_hiprtc()) {}

  std::string name() const override { return "hiprtc"; }
  std::string version() const override { return hiprtc_->version_text(); }

  // --offload-arch takes the full target id: features (sramecc, xnack) change the code object's ABI and must
  // match the device. -O3 is clang's default for HIP device code anyway; stated so the cache key says it.
  std::vector<std::string> base_options(const Target& target) const override {
    return {"--offload-arch=" + target.id(), "-O3", "-std=c++17"};
  }

  CompiledCode compile(const std::string& source, const std::string& name_hint, const Target& target,
                       const std::vector<std::string>& extra_options) override {
    if (target.kind != TargetKind::Amd)
      throw std::invalid_argument("hiprtc cannot compile kernel '" + name_hint + "' for non-AMD target " + target.id());
    std::vector<std::string> options = base_options(target);
    options.insert(options.end(), extra_options.begin(), extra_options.end());
    return hiprtc_->compile(source, name_hint + ".hip", options, name_hint, target.id());
  }

 private:
  std::shared_ptr<const RtcLibrary> hiprtc_;
};

}  // namespace

std::unique_ptr<Compiler> make_hiprtc_compiler() { return std::make_unique<HiprtcCompiler>(); }

}  // namespace hi
