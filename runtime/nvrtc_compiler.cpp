// NVRTC through dlopen with our own declarations (nvrtcResult is a C enum, nvrtcProgram an opaque pointer), so the
// build needs no CUDA headers. A real architecture (-arch=sm_90, not compute_90) makes NVRTC emit a cubin that the
// CUDA driver loads without a JIT step.
#include <chrono>
#include <mutex>
#include <regex>

#include "runtime/compiler.h"
#include "runtime/dynamic_library.h"

namespace hi {

namespace {

using nvrtcResult = int;  // NVRTC_SUCCESS == 0
using nvrtcProgram = struct NvrtcProgramOpaque*;

struct NvrtcApi {
  DynamicLibrary library;
  const char* (*get_error_string)(nvrtcResult);
  nvrtcResult (*version)(int*, int*);
  nvrtcResult (*create_program)(nvrtcProgram*, const char*, const char*, int, const char* const*, const char* const*);
  nvrtcResult (*compile_program)(nvrtcProgram, int, const char* const*);
  nvrtcResult (*get_program_log_size)(nvrtcProgram, size_t*);
  nvrtcResult (*get_program_log)(nvrtcProgram, char*);
  nvrtcResult (*get_cubin_size)(nvrtcProgram, size_t*);
  nvrtcResult (*get_cubin)(nvrtcProgram, char*);
  nvrtcResult (*destroy_program)(nvrtcProgram*);
  std::string version_text;

  explicit NvrtcApi(DynamicLibrary lib) : library(std::move(lib)) {
    get_error_string = library.function<decltype(get_error_string)>("nvrtcGetErrorString");
    version = library.function<decltype(version)>("nvrtcVersion");
    create_program = library.function<decltype(create_program)>("nvrtcCreateProgram");
    compile_program = library.function<decltype(compile_program)>("nvrtcCompileProgram");
    get_program_log_size = library.function<decltype(get_program_log_size)>("nvrtcGetProgramLogSize");
    get_program_log = library.function<decltype(get_program_log)>("nvrtcGetProgramLog");
    get_cubin_size = library.function<decltype(get_cubin_size)>("nvrtcGetCUBINSize");
    get_cubin = library.function<decltype(get_cubin)>("nvrtcGetCUBIN");
    destroy_program = library.function<decltype(destroy_program)>("nvrtcDestroyProgram");

    // nvrtcVersion gives major.minor; the library file (libnvrtc.so.12.4.127) also names the patch release.
    int major = 0, minor = 0;
    version(&major, &minor);
    std::string short_version = std::to_string(major) + "." + std::to_string(minor);
    version_text = "nvrtc " + short_version;
    std::smatch match;
    std::string path = library.resolved_path();
    static const std::regex so_version(R"(\.so\.([0-9]+(\.[0-9]+)*)$)");
    if (std::regex_search(path, match, so_version) && match[1].str().starts_with(short_version + "."))
      version_text = "nvrtc " + match[1].str();
  }

  void check(nvrtcResult result, const char* call) const {
    if (result != 0)
      throw std::runtime_error(std::string("nvrtc: ") + call + " failed: " + get_error_string(result) + " (" +
                               library.opened_name() + ")");
  }
};

std::shared_ptr<const NvrtcApi> load_nvrtc() {
  static std::mutex mutex;
  static std::shared_ptr<const NvrtcApi> api;
  std::lock_guard lock(mutex);
  if (!api)
    api = std::make_shared<NvrtcApi>(DynamicLibrary::open_first(
        "NVRTC (NVIDIA runtime compiler)", {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}));
  return api;
}

class NvrtcCompiler final : public Compiler {
 public:
  NvrtcCompiler() : api_(load_nvrtc()) {}

  std::string name() const override { return "nvrtc"; }
  std::string version() const override { return api_->version_text; }

  std::vector<std::string> base_options(const Target& target) const override {
    return {"-arch=" + target.arch, "-std=c++17"};
  }

  CompiledCode compile(const std::string& source, const std::string& name_hint, const Target& target,
                       const std::vector<std::string>& extra_options) override {
    if (target.kind != TargetKind::Nvidia)
      throw std::invalid_argument("nvrtc cannot compile kernel '" + name_hint + "' for non-NVIDIA target " +
                                  target.id());
    std::vector<std::string> options = base_options(target);
    options.insert(options.end(), extra_options.begin(), extra_options.end());
    std::vector<const char*> option_pointers;
    for (const std::string& option : options) option_pointers.push_back(option.c_str());

    auto start = std::chrono::steady_clock::now();
    nvrtcProgram program = nullptr;
    std::string program_name = name_hint + ".cu";
    api_->check(api_->create_program(&program, source.c_str(), program_name.c_str(), 0, nullptr, nullptr),
                "nvrtcCreateProgram");
    struct Destroy {
      const NvrtcApi& api;
      nvrtcProgram& program;
      ~Destroy() { api.destroy_program(&program); }
    } destroy{*api_, program};

    nvrtcResult result =
        api_->compile_program(program, static_cast<int>(option_pointers.size()), option_pointers.data());
    CompiledCode compiled;
    compiled.log = program_log(program);
    if (result != 0) {
      std::string log = compiled.log.empty() ? std::string(api_->get_error_string(result)) : compiled.log;
      throw CompileError("nvrtc", name_hint, target.id(), log);
    }
    size_t size = 0;
    api_->check(api_->get_cubin_size(program, &size), "nvrtcGetCUBINSize");
    compiled.binary.resize(size);
    api_->check(api_->get_cubin(program, compiled.binary.data()), "nvrtcGetCUBIN");
    compiled.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return compiled;
  }

 private:
  std::string program_log(nvrtcProgram program) const {
    size_t size = 0;
    if (api_->get_program_log_size(program, &size) != 0 || size == 0) return {};
    std::string log(size, '\0');
    if (api_->get_program_log(program, log.data()) != 0) return {};
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    return log;
  }

  std::shared_ptr<const NvrtcApi> api_;
};

}  // namespace

std::unique_ptr<Compiler> make_nvrtc_compiler() { return std::make_unique<NvrtcCompiler>(); }

}  // namespace hi
