#include "runtime/rtc_library.h"

#include <chrono>

namespace hi {

RtcLibrary::RtcLibrary(DynamicLibrary library, std::string prefix, const std::string& code_name,
                       VersionText version_text)
    : library_(std::move(library)), prefix_(std::move(prefix)), code_name_(code_name) {
  auto lookup = [&]<typename FunctionPointer>(FunctionPointer& f, const std::string& name) {
    f = library_.function<FunctionPointer>(prefix_ + name);
  };
  lookup(get_error_string_, "GetErrorString");
  Result (*version)(int*, int*) = nullptr;
  lookup(version, "Version");
  lookup(create_program_, "CreateProgram");
  lookup(compile_program_, "CompileProgram");
  lookup(get_program_log_size_, "GetProgramLogSize");
  lookup(get_program_log_, "GetProgramLog");
  lookup(get_code_size_, "Get" + code_name_ + "Size");
  lookup(get_code_, "Get" + code_name_);
  lookup(destroy_program_, "DestroyProgram");

  int major = 0, minor = 0;
  version(&major, &minor);
  version_text_ = version_text(major, minor, library_.resolved_path());
  version_number_ = major * 100 + minor;
}

CompiledCode RtcLibrary::compile(const std::string& source, const std::string& program_name,
                                 const std::vector<std::string>& options, const std::string& name_hint,
                                 const std::string& target_id) const {
  std::vector<const char*> option_pointers;
  for (const std::string& option : options) option_pointers.push_back(option.c_str());

  auto start = std::chrono::steady_clock::now();
  Program program = nullptr;
  check(create_program_(&program, source.c_str(), program_name.c_str(), 0, nullptr, nullptr), "CreateProgram");
  struct Destroy {
    const RtcLibrary& rtc;
    Program& program;
    ~Destroy() { rtc.destroy_program_(&program); }
  } destroy{*this, program};

  Result result = compile_program_(program, static_cast<int>(option_pointers.size()), option_pointers.data());
  CompiledCode compiled;
  compiled.log = program_log(program);
  if (result != 0) {
    std::string log = compiled.log.empty() ? std::string(get_error_string_(result)) : compiled.log;
    throw CompileError(prefix_, name_hint, target_id, log);
  }
  size_t size = 0;
  check(get_code_size_(program, &size), "Get" + code_name_ + "Size");
  compiled.binary.resize(size);
  check(get_code_(program, compiled.binary.data()), "Get" + code_name_);
  compiled.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return compiled;
}

void RtcLibrary::check(Result result, const std::string& call) const {
  if (result != 0)
    throw std::runtime_error(prefix_ + ": " + prefix_ + call + " failed: " + get_error_string_(result) + " (" +
                             library_.opened_name() + ")");
}

std::string RtcLibrary::program_log(Program program) const {
  size_t size = 0;
  if (get_program_log_size_(program, &size) != 0 || size == 0) return {};
  std::string log(size, '\0');
  if (get_program_log_(program, log.data()) != 0) return {};
  // The log ends in a NUL that the size counts, and usually a newline.
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

}  // namespace hi
