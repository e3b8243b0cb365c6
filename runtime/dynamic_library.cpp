#include "runtime/dynamic_library.h"

#include <dlfcn.h>
#include <link.h>

#include <climits>
#include <cstdlib>
#include <stdexcept>

namespace hi {

DynamicLibrary DynamicLibrary::open_first(const std::string& what, const std::vector<std::string>& candidates) {
  std::string reasons;
  for (const std::string& name : candidates) {
    // RTLD_NODELETE: a vendor library keeps process-long state (its own allocators' pools, threads, exit-time
    // destructors) that is not safe to unmap before the process ends, and a leak checker can only attribute (and
    // suppress, tests/sanitizers/lsan.supp) what it allocated while it is still mapped.
    if (void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE)) return DynamicLibrary(handle, name);
    const char* error = dlerror();
    reasons += "\n  " + name + ": " + (error ? error : "unknown error");
  }
  throw std::runtime_error(what + " is not available: none of its libraries could be loaded:" + reasons);
}

DynamicLibrary DynamicLibrary::open(const std::string& what, const std::string& path) {
  if (void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) return DynamicLibrary(handle, path);
  const char* error = dlerror();
  throw std::runtime_error("cannot load " + what + " from " + path + ": " + (error ? error : "unknown error"));
}

DynamicLibrary::DynamicLibrary(DynamicLibrary&& other) noexcept
    : handle_(other.handle_), opened_name_(std::move(other.opened_name_)) {
  other.handle_ = nullptr;
}

DynamicLibrary& DynamicLibrary::operator=(DynamicLibrary&& other) noexcept {
  if (this == &other) return *this;
  if (handle_) dlclose(handle_);
  handle_ = other.handle_;
  opened_name_ = std::move(other.opened_name_);
  other.handle_ = nullptr;
  return *this;
}

DynamicLibrary::~DynamicLibrary() {
  if (handle_) dlclose(handle_);
}

void* DynamicLibrary::find_symbol(const std::string& symbol) const {
  dlerror();
  return dlsym(handle_, symbol.c_str());
}

void* DynamicLibrary::symbol(const std::string& symbol) const {
  if (void* address = find_symbol(symbol)) return address;
  throw std::runtime_error("symbol '" + symbol + "' not found in " + opened_name_ +
                           " (is the library too old or not the one expected?)");
}

std::string DynamicLibrary::resolved_path() const {
  link_map* map = nullptr;
  if (dlinfo(handle_, RTLD_DI_LINKMAP, &map) != 0 || !map || !map->l_name || !*map->l_name) return opened_name_;
  char resolved[PATH_MAX];
  if (!realpath(map->l_name, resolved)) return map->l_name;
  return resolved;
}

}  // namespace hi
