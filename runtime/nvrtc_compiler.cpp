// NVRTC through dlopen; the compile flow it shares with HIPRTC is in rtc_library.h. A real architecture
// (-arch=sm_90, not compute_90) makes NVRTC emit a cubin that the CUDA driver loads without a JIT step.
#include <mutex>
#include <regex>

#include "runtime/compiler.h"
#include "runtime/rtc_library.h"

namespace hi {

namespace {

// nvrtcVersion gives major.minor; the library file (libnvrtc.so.12.4.127) also names the patch release.
std::string nvrtc_version_text(int major, int minor, const std::string& resolved_path) {
  std::string short_version = std::to_string(major) + "." + std::to_string(minor);
  static const std::regex so_version(R"(\.so\.([0-9]+(\.[0-9]+)*)$)");
  std::smatch match;
  if (std::regex_search(resolved_path, match, so_version) && match[1].str().starts_with(short_version + "."))
    return "nvrtc " + match[1].str();
  return "nvrtc " + short_version;
}

std::shared_ptr<const RtcLibrary> load_nvrtc() {
  static std::mutex mutex;
  static std::shared_ptr<const RtcLibrary> library;
  std::lock_guard lock(mutex);
  if (!library)
    library =
        std::make_shared<RtcLibrary>(DynamicLibrary::open_first("NVRTC (NVIDIA runtime compiler)",
                                                                {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}),
                                     "nvrtc", "CUBIN", nvrtc_version_text);
  return library;
}

class NvrtcCompiler final : public Compiler {
 public:
  NvrtcCompiler() : nvrtc_(load_nvrtc()) {}

  std::string name() const override { return "nvrtc"; }
  std::string version() const override { return nvrtc_->version_text(); }

  std::vector<std::string> base_options(const Target& target) const override {
    std::vector<std::string> options{"-arch=" + target.arch, "-std=c++17"};
    // NVRTC 12.4+ can leave out the texture, surface and device-runtime declarations it otherwise parses into every
    // program: the kernels use none of them, and each compile is ~20 ms shorter (a third of a small one's time).
    if (nvrtc_->version_number() >= 1204) options.push_back("-minimal");
    return options;
  }

  CompiledCode compile(const std::string& source, const std::string& name_hint, const Target& target,
                       const std::vector<std::string>& extra_options) override {
    if (target.kind != TargetKind::Nvidia)
      throw std::invalid_argument("nvrtc cannot compile kernel '" + name_hint + "' for non-NVIDIA target " +
                                  target.id());
    std::vector<std::string> options = base_options(target);
    options.insert(options.end(), extra_options.begin(), extra_options.end());
    // -split-compile=0: NVRTC optimizes and generates the unit's kernels in parallel threads, one per core. Fresh
    // units of a GPT block's segments took 467 ms without it and 238 ms with it on the 16-core H200 host (NVRTC 13.0);
    // the cubins differ only in the note that records the options, so it stays out of base_options (and the cache
    // key). NVRTC 12.4 accepts the option but passes it to a code generator that ignores it (a warning in every
    // log), hence the version floor: 13.0, the first release it was measured to work with here.
    if (nvrtc_->version_number() >= 1300) options.push_back("-split-compile=0");
    return nvrtc_->compile(source, name_hint + ".cu", options, name_hint, target.id());
  }

 private:
  std::shared_ptr<const RtcLibrary> nvrtc_;
};

}  // namespace

std::unique_ptr<Compiler> make_nvrtc_compiler() { return std::make_unique<NvrtcCompiler>(); }

}  // namespace hi
