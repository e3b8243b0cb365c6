// The device-neutral launch interface: a Device loads code objects into Modules and owns memory; a Module launches
// its kernels. Implemented by the cpu device (cpu_device.h), the CUDA driver device (cuda_device.h) and the HIP
// runtime device (hip_device.h); open_gpu_device (gpu_devices.h) opens the GPU ones.
//
// Kernel arguments follow the HIP/CUDA convention: `args[i]` points at the value of argument i (for a pointer
// argument, at a variable holding the device pointer). Streams are opaque (hipStream_t / CUstream); null is the
// default stream. Errors are thrown as std::runtime_error naming the kernel or the module.
#pragma once

#include <cstddef>
#include <functional>
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

/// What the device's loader reports about one loaded kernel (cuFuncGetAttribute / hipFuncGetAttribute).
struct GpuKernelFacts {
  std::string name;
  int registers = 0;              ///< registers per thread (NUM_REGS)
  int static_shared_bytes = 0;    ///< statically allocated __shared__ memory (SHARED_SIZE_BYTES)
  int local_bytes = 0;            ///< per-thread local memory: stack and spills (LOCAL_SIZE_BYTES)
  int max_threads_per_block = 0;  ///< the most threads a block of this kernel may have (MAX_THREADS_PER_BLOCK)
};

class Module {
 public:
  virtual ~Module() = default;
  /// Loader facts for every kernel named in the KernelInfo list given at load, in that order. Empty for devices
  /// that have none (the cpu device).
  virtual std::vector<GpuKernelFacts> kernel_facts() const { return {}; }
  /// Launches `kernel` on `stream` with `shared_bytes` of dynamic shared memory. May return before the kernel
  /// finishes (GPUs); see Device::synchronize. Throws naming the kernel when it is not in the module or the
  /// launch configuration is invalid.
  virtual void launch(const std::string& kernel, Dim3 grid, Dim3 block, unsigned shared_bytes, void** args,
                      void* stream) = 0;
  /// Blocks of `block_threads` threads (and `shared_bytes` of dynamic shared memory) of `kernel` that one
  /// multiprocessor keeps resident at once, from the driver's occupancy calculator (registers, shared memory and
  /// block limits included); 0 when the device cannot say.
  virtual int resident_blocks(const std::string& kernel, int block_threads, unsigned shared_bytes) {
    (void)kernel, (void)block_threads, (void)shared_bytes;
    return 0;
  }
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
  /// load() of a code object compiled for `compiled_for`, after checking code_runs_on(compiled_for, target()):
  /// throws std::runtime_error naming both targets when it does not, before the device sees the binary. A units
  /// container (code_object_units.h: a module compiled as several units) loads each part with load() and its own
  /// kernels' KernelInfo, as one Module that launches each kernel from its part; a kernel of `kernels` that no part
  /// defines is an error.
  std::unique_ptr<Module> load_for_target(const Target& compiled_for, const std::vector<char>& binary,
                                          const std::vector<KernelInfo>& kernels);
  /// Streaming multiprocessors (NVIDIA) or compute units (AMD); 0 when the device does not say (the cpu device).
  virtual int multiprocessor_count() const { return 0; }
  /// Device memory (on the cpu device: host memory, 64-byte aligned). Throws std::bad_alloc when exhausted.
  virtual void* alloc(size_t bytes) = 0;
  virtual void free(void* pointer) = 0;
  virtual void copy_to_device(void* device_destination, const void* host_source, size_t bytes) = 0;
  virtual void copy_to_host(void* host_destination, const void* device_source, size_t bytes) = 0;
  /// Waits until all work launched on `stream` has finished.
  virtual void synchronize(void* stream) = 0;
  /// Sets `bytes` bytes of device memory at `pointer` to `value`, in `stream`'s order.
  virtual void fill(void* pointer, int value, size_t bytes, void* stream) = 0;
  /// Milliseconds the device spends on the work `enqueue` puts on `stream`. GPUs: between two events recorded around
  /// it (the kernels' time, not the launch calls'). Here (the cpu device, which runs launches as they are made): the
  /// call's wall time, between synchronizations.
  virtual double time_ms(const std::function<void()>& enqueue, void* stream);
};

/// Whether a code object compiled for `code` runs on a device whose target is `device`:
///   NVIDIA: a cubin for sm_XY runs on compute capability X.Z with Z >= Y (same major); sm_XYa only on exactly X.Y.
///   AMD:    same processor, and every feature the code states (xnack-, sramecc+) is the device's; a feature the
///           code leaves out means "any" (the device's target always states them all).
///   cpu:    same warp size.
/// Different kinds never match.
bool code_runs_on(const Target& code, const Target& device);

}  // namespace hi
