// The device-neutral launch interface: a Device loads code objects into Modules and owns memory; a Module launches
// its kernels. Implemented by the cpu device (cpu_device.h) now, by HIP-runtime and CUDA-driver devices later.
//
// Kernel arguments follow the HIP/CUDA convention: `args[i]` points at the value of argument i (for a pointer
// argument, at a variable holding the device pointer). Streams are opaque (hipStream_t / CUstream); null is the
// default stream. Errors are thrown as std::runtime_error naming the kernel or the module.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "codegen/target.h"

namespace hi {

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

/// What the code generator knows about one kernel of a code object that a device may need to launch it.
struct KernelInfo {
  std::string name;
  /// The kernel uses __syncthreads, __syncwarp or warp shuffles. GPUs ignore it; the cpu device runs threads as
  /// fibers only when it is set (a kernel not listed counts as needing sync).
  bool needs_sync = true;
};

class Module {
 public:
  virtual ~Module() = default;
  /// Launches `kernel` on `stream` with `shared_bytes` of dynamic shared memory. May return before the kernel
  /// finishes (GPUs); see Device::synchronize. Throws naming the kernel when it is not in the module or the
  /// launch configuration is invalid.
  virtual void launch(const std::string& kernel, Dim3 grid, Dim3 block, unsigned shared_bytes, void** args,
                      void* stream) = 0;
};

class Device {
 public:
  virtual ~Device() = default;
  /// Human-readable: "cpu (warp 32, 16 worker threads)".
  virtual std::string name() const = 0;
  /// The target code objects for this device must be compiled for.
  virtual Target target() const = 0;
  /// Loads a code object produced by compiler_for(target()). `kernels` describes its kernels (may be empty).
  virtual std::unique_ptr<Module> load(const std::vector<char>& binary, const std::vector<KernelInfo>& kernels) = 0;
  /// Device memory (on the cpu device: host memory, 64-byte aligned). Throws std::bad_alloc when exhausted.
  virtual void* alloc(size_t bytes) = 0;
  virtual void free(void* pointer) = 0;
  virtual void copy_to_device(void* device_destination, const void* host_source, size_t bytes) = 0;
  virtual void copy_to_host(void* host_destination, const void* device_source, size_t bytes) = 0;
  /// Waits until all work launched on `stream` has finished.
  virtual void synchronize(void* stream) = 0;
};

}  // namespace hi
