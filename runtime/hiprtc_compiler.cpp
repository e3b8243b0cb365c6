// HIPRTC through dlopen, with our own declarations of the few entry points used: the C ABI of these functions has
// been stable since ROCm 4 (hiprtcResult is a C enum, hiprtcProgram an opaque pointer), and not including
// <hip/hiprtc.h> keeps the build free of ROCm.
#include <chrono>
#include <mutex>
#include <regex>

#include "runtime/compiler.h"
#include "runtime/dynamic_library.h"

namespace hi {

namespace {

using hiprtcResult = int;  // HIPRTC_SUCCESS == 0
using hiprtcProgram = struct HiprtcProgramOpaque*;

struct HiprtcApi {
  DynamicLibrary library;
  const char* (*get_error_string)(hiprtcResult);
  hiprtcResult (*version)(int*, int*);
  hiprtcResult (*create_program)(hiprtcProgram*, const char*, const char*, int, const char* const*,
                                 const char* const*);
  hiprtcResult (*compile_program)(hiprtcProgram, int, const char* const*);
  hiprtcResult (*get_program_log_size)(hiprtcProgram, size_t*);
  hiprtcResult (*get_program_log)(hiprtcProgram, char*);
  hiprtcResult (*get_code_size)(hiprtcProgram, size_t*);
  hiprtcResult (*get_code)(hiprtcProgram, char*);
  hiprtcResult (*destroy_program)(hiprtcProgram*);
  std::string version_text;

  explicit HiprtcApi(DynamicLibrary lib) : library(std::move(lib)) {
    get_error_string = library.function<decltype(get_error_string)>("hiprtcGetErrorString");
    version = library.function<decltype(version)>("hiprtcVersion");
    create_program = library.function<decltype(create_program)>("hiprtcCreateProgram");
    compile_program = library.function<decltype(compile_program)>("hiprtcCompileProgram");
    get_program_log_size = library.function<decltype(get_program_log_size)>("hiprtcGetProgramLogSize");
    get_program_log = library.function<decltype(get_program_log)>("hiprtcGetProgramLog");
    get_code_size = library.function<decltype(get_code_size)>("hiprtcGetCodeSize");
    get_code = library.function<decltype(get_code)>("hiprtcGetCode");
    destroy_program = library.function<decltype(destroy_program)>("hiprtcDestroyProgram");

    // hiprtcVersion is not the ROCm release (ROCm 5.7's reports 9.0) and has no patch level, while code generation
    // changes between ROCm patch releases; the library's file name (libamdhip64.so.5.7.31921) carries the release,
    // so prefer it, and fall back to hiprtcVersion for an unversioned file.
    int major = 0, minor = 0;
    version(&major, &minor);
    version_text = "hiprtc " + std::to_string(major) + "." + std::to_string(minor);
    std::smatch match;
    std::string path = library.resolved_path();
    static const std::regex so_version(R"(\.so\.([0-9]+\.[0-9]+(\.[0-9]+)*)$)");
    if (std::regex_search(path, match, so_version)) version_text = "hiprtc " + match[1].str();
  }

  void check(hiprtcResult result, const char* call) const {
    if (result != 0)
      throw std::runtime_error(std::string("hiprtc: ") + call + " failed: " + get_error_string(result) + " (" +
                               library.opened_name() + ")");
  }
};

std::shared_ptr<const HiprtcApi> load_hiprtc() {
  // Loaded once per process; a failed load is retried on the next call (the library may be installed later).
  static std::mutex mutex;
  static std::shared_ptr<const HiprtcApi> api;
  std::lock_guard lock(mutex);
  if (!api)
    api = std::make_shared<HiprtcApi>(DynamicLibrary::open_first(
        "HIPRTC (AMD runtime compiler)", {"libhiprtc.so.6", "libhiprtc.so.5", "libhiprtc.so", "libamdhip64.so.6",
                                          "libamdhip64.so.5", "libamdhip64.so"}));
  return api;
}

class HiprtcCompiler final : public Compiler {
 public:
  HiprtcCompiler() : api_(load_hiprtc()) {}

  std::string name() const override { return "hiprtc"; }
  std::string version() const override { return api_->version_text; }

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
    std::vector<const char*> option_pointers;
    for (const std::string& option : options) option_pointers.push_back(option.c_str());

    auto start = std::chrono::steady_clock::now();
    hiprtcProgram program = nullptr;
    std::string program_name = name_hint + ".hip";
    api_->check(api_->create_program(&program, source.c_str(), program_name.c_str(), 0, nullptr, nullptr),
                "hiprtcCreateProgram");
    struct Destroy {
      const HiprtcApi& api;
      hiprtcProgram& program;
      ~Destroy() { api.destroy_program(&program); }
    } destroy{*api_, program};

    hiprtcResult result =
        api_->compile_program(program, static_cast<int>(option_pointers.size()), option_pointers.data());
    CompiledCode compiled;
    compiled.log = program_log(program);
    if (result != 0) {
      std::string log = compiled.log.empty() ? std::string(api_->get_error_string(result)) : compiled.log;
      throw CompileError("hiprtc", name_hint, target.id(), log);
    }
    size_t size = 0;
    api_->check(api_->get_code_size(program, &size), "hiprtcGetCodeSize");
    compiled.binary.resize(size);
    api_->check(api_->get_code(program, compiled.binary.data()), "hiprtcGetCode");
    compiled.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return compiled;
  }

 private:
  std::string program_log(hiprtcProgram program) const {
    size_t size = 0;
    if (api_->get_program_log_size(program, &size) != 0 || size == 0) return {};
    std::string log(size, '\0');
    if (api_->get_program_log(program, log.data()) != 0) return {};
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    return log;
  }

  std::shared_ptr<const HiprtcApi> api_;
};

}  // namespace

std::unique_ptr<Compiler> make_hiprtc_compiler() { return std::make_unique<HiprtcCompiler>(); }

}  // namespace hi
