// The cpu device's compiler: the host C++ compiler builds the emitted HIP source (with the cpu prelude) into a
// shared object. It runs as a child process without a shell; its input and output live in a private temp dir.
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>

#include "runtime/compiler.h"
#include "runtime/process.h"
#include "runtime/temp_directory.h"

namespace hi {

namespace {

/// Runs the compiler command `argv`, whose success writes `output`: the output's bytes, the compiler's log and the
/// milliseconds since `start`. CompileError (with the log) where the command fails.
CompiledCode run_to_file(const std::vector<std::string>& argv, const std::filesystem::path& output,
                         const std::string& name_hint, const std::string& target_id,
                         std::chrono::steady_clock::time_point start) {
  ProcessResult result = run_process(argv);
  std::string log = result.output;
  while (!log.empty() && log.back() == '\n') log.pop_back();
  if (result.exit_code != 0) throw CompileError(argv[0], name_hint, target_id, log);
  CompiledCode compiled;
  compiled.log = log;
  std::ifstream in(output, std::ios::binary);
  if (!in)
    throw std::runtime_error(argv[0] + " reported success for '" + name_hint + "' but wrote no " + output.string());
  compiled.binary.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  compiled.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return compiled;
}

std::vector<std::string> host_compiler_command() {
  const char* cxx = std::getenv("CXX");
  std::vector<std::string> words = split_command_words(cxx ? cxx : "");
  if (words.empty()) words = {"c++"};
  return words;
}

std::string file_name_for(const std::string& name_hint) {
  std::string name;
  for (char c : name_hint.substr(0, 100)) name += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  return name.empty() ? "kernel" : name;
}

class HostCompiler final : public Compiler {
 public:
  HostCompiler() : command_(host_compiler_command()), version_(version_of(command_)) {}

  // `--version` costs a process start (milliseconds, as much as a whole warm start through the cache), so it is
  // asked once per process and command; a failure is not remembered.
  static std::string version_of(const std::vector<std::string>& command) {
    static std::mutex mutex;
    static auto* versions = new std::map<std::vector<std::string>, std::string>();
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (auto found = versions->find(command); found != versions->end()) return found->second;
    }
    std::vector<std::string> argv = command;
    argv.push_back("--version");
    ProcessResult result = run_process(argv);
    if (result.exit_code != 0)
      throw std::runtime_error("host C++ compiler '" + command[0] + "' (from $CXX or the default c++) failed on "
                               "--version:\n" + result.output);
    std::string version = result.output.substr(0, result.output.find('\n'));
    std::lock_guard<std::mutex> lock(mutex);
    return (*versions)[command] = version;
  }

  std::string name() const override { return "host-c++"; }
  std::string version() const override { return version_; }

  // -shared -fPIC: the cpu device dlopens the result. --no-undefined: the object must be self-contained (the
  // prelude reaches the runtime only through the hooks table handed to hi_cpu_bind), so a stray reference to a
  // runtime symbol fails here, at compile time, rather than at dlopen.
  std::vector<std::string> base_options(const Target&) const override {
    return {"-O2", "-std=c++17", "-shared", "-fPIC", "-Wl,--no-undefined"};
  }

  CompiledCode compile(const std::string& source, const std::string& name_hint, const Target& target,
                       const std::vector<std::string>& extra_options) override {
    if (target.kind != TargetKind::Cpu)
      throw std::invalid_argument("the host compiler cannot compile kernel '" + name_hint + "' for target " +
                                  target.id());
    auto start = std::chrono::steady_clock::now();
    TempDirectory work("hipinductor-cc-");
    // The source file is named after the kernel so that the compiler's diagnostics name it too.
    std::filesystem::path source_path = work.path() / (file_name_for(name_hint) + ".hip");
    std::filesystem::path output_path = work.path() / "kernel.so";
    write_file_synced(source_path, source.data(), source.size());

    std::vector<std::string> argv = command_;
    for (const std::string& option : base_options(target)) argv.push_back(option);
    for (const std::string& option : extra_options) argv.push_back(option);
    for (std::string arg : {"-x", "c++"}) argv.push_back(arg);
    argv.push_back(source_path.string());
    argv.push_back("-o");
    argv.push_back(output_path.string());

    return run_to_file(argv, output_path, name_hint, target.id(), start);
  }

 private:
  std::vector<std::string> command_;
  std::string version_;
};

}  // namespace

std::unique_ptr<Compiler> make_host_compiler() { return std::make_unique<HostCompiler>(); }

CompiledCode link_host_objects(const std::vector<std::vector<char>>& objects, const std::string& name_hint) {
  auto start = std::chrono::steady_clock::now();
  const std::vector<std::string> command = host_compiler_command();
  TempDirectory work("hipinductor-ld-");
  std::vector<std::string> argv = command;
  // The link half of HostCompiler::base_options (the compile half went into the objects).
  for (std::string option : {"-shared", "-fPIC", "-Wl,--no-undefined"}) argv.push_back(option);
  for (size_t i = 0; i < objects.size(); ++i) {
    std::filesystem::path path = work.path() / ("unit" + std::to_string(i) + ".o");
    write_file_synced(path, objects[i].data(), objects[i].size());
    argv.push_back(path.string());
  }
  std::filesystem::path output_path = work.path() / "kernel.so";
  argv.push_back("-o");
  argv.push_back(output_path.string());
  return run_to_file(argv, output_path, name_hint, "cpu", start);
}

}  // namespace hi
