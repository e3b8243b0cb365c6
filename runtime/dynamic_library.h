// A shared library opened at run time with dlopen, for vendor libraries (HIPRTC, NVRTC, comgr) that the build must
// not link against: hipinductor builds and runs on machines without ROCm or CUDA, and only fails, with a message
// naming the libraries tried, when a feature that needs one is used.
#pragma once

#include <string>
#include <vector>

namespace hi {

class DynamicLibrary {
 public:
  /// Opens the first of `candidates` (sonames, most preferred first) that dlopen accepts, RTLD_NOW | RTLD_LOCAL |
  /// RTLD_NODELETE (vendor libraries stay mapped until the process ends).
  /// Throws std::runtime_error naming `what`, every candidate tried and dlerror's reason for each.
  static DynamicLibrary open_first(const std::string& what, const std::vector<std::string>& candidates);
  /// Opens exactly `path`; throws std::runtime_error naming `what` and the path on failure.
  static DynamicLibrary open(const std::string& what, const std::string& path);

  DynamicLibrary(DynamicLibrary&& other) noexcept;
  DynamicLibrary& operator=(DynamicLibrary&& other) noexcept;
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;
  ~DynamicLibrary();

  /// Address of `symbol`; throws std::runtime_error naming the symbol and the library when it is missing.
  void* symbol(const std::string& symbol) const;
  /// Address of `symbol` or nullptr (for functions that only newer versions of a library export).
  void* find_symbol(const std::string& symbol) const;
  /// Typed symbol lookup: `auto create = lib.function<int (*)(void**)>("create")`.
  template <typename FunctionPointer>
  FunctionPointer function(const std::string& name) const {
    return reinterpret_cast<FunctionPointer>(symbol(name));
  }

  /// The name it was opened by ("libhiprtc.so.6") and the file it resolved to ("/opt/rocm/lib/libhiprtc.so.6.2.1";
  /// the file name often carries the full version that the library's own version call truncates).
  const std::string& opened_name() const { return opened_name_; }
  std::string resolved_path() const;

 private:
  DynamicLibrary(void* handle, std::string opened_name) : handle_(handle), opened_name_(std::move(opened_name)) {}
  void* handle_ = nullptr;
  std::string opened_name_;
};

}  // namespace hi
