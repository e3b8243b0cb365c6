// The cpu device: runs kernels compiled by the host C++ compiler (target `cpu` / `cpu-w64`, source = emitted HIP +
// codegen/preludes/cpu.h) on the host, with HIP semantics, so that the numerical tests run without a GPU.
//
// Execution model:
//   - Blocks are spread over a pool of worker OS threads (std::thread; hardware_concurrency by default) and the
//     launching thread, which takes blocks too (a grid of one block wakes no worker). A block runs entirely on one
//     thread, so `__shared__` (static thread_local in the prelude) is per block.
//   - A kernel launched with needs_sync runs each HIP thread of a block as a fiber (ucontext, 64 KiB stacks reused
//     across blocks): __syncthreads() and warp shuffles are real barriers that switch fibers. Warps are linear thread
//     ids / warp size, warp size from the target (32 for `cpu`, 64 for `cpu-w64`).
//   - Without needs_sync the threads of a block run one after another as plain calls; a barrier or shuffle among
//     more than one thread is then an error naming the kernel.
//   - A barrier that can never complete (threads exited or wait at a different barrier, e.g. __syncthreads() under
//     `if (threadIdx.x == 0)`) is reported as an error naming the kernel and block, not a hang.
//   - launch() is synchronous: it returns when the grid has finished; streams are ignored.
// The runtime ↔ kernel ABI (hooks table, hi_cpu_bind, K__hi_cpu trampolines) is defined in codegen/preludes/cpu.h.
#pragma once

#include <map>
#include <cstring>
#include <memory>
#include <mutex>

#include "runtime/device.h"
#include "runtime/dynamic_library.h"

namespace hi {

class CpuWorkerPool;

class CpuModule final : public Module {
 public:
  /// Uses the KernelInfo given at load for needs_sync (true for kernels not listed).
  void launch(const std::string& kernel, Dim3 grid, Dim3 block, unsigned shared_bytes, void** args,
              void* stream) override;
  /// The cpu device's own entry point, with needs_sync explicit.
  void launch(const std::string& kernel, Dim3 grid, Dim3 block, void** args, bool needs_sync,
              unsigned shared_bytes = 0);

  CpuModule(std::shared_ptr<CpuWorkerPool> pool, DynamicLibrary library, std::vector<KernelInfo> kernels,
            unsigned warp_size);

 private:
  using Trampoline = void (*)(void**);
  Trampoline trampoline(const std::string& kernel);

  std::shared_ptr<CpuWorkerPool> pool_;
  DynamicLibrary library_;
  std::vector<KernelInfo> kernels_;
  unsigned warp_size_;
  std::mutex trampolines_mutex_;
  std::map<std::string, Trampoline> trampolines_;
};

class CpuDevice final : public Device {
 public:
  /// `target` must be a cpu target; `worker_threads` 0 means std::thread::hardware_concurrency().
  explicit CpuDevice(const Target& target, unsigned worker_threads = 0);
  ~CpuDevice() override;

  std::string name() const override;
  Target target() const override { return target_; }
  /// Writes the shared object to a private temp file, dlopens it, checks its prelude ABI and warp width against this
  /// device and binds the hooks. Throws std::runtime_error explaining a mismatch.
  std::unique_ptr<Module> load(const std::vector<char>& binary, const std::vector<KernelInfo>& kernels) override;
  /// The cpu device's load, returning the concrete module (for the needs_sync launch).
  std::unique_ptr<CpuModule> load_cpu_module(const std::vector<char>& binary, const std::vector<KernelInfo>& kernels);
  void* alloc(size_t bytes) override;
  void free(void* pointer) override;
  void copy_to_device(void* device_destination, const void* host_source, size_t bytes) override;
  void copy_to_host(void* host_destination, const void* device_source, size_t bytes) override;
  void synchronize(void*) override {}
  void fill(void* pointer, int value, size_t bytes, void*) override { std::memset(pointer, value, bytes); }

 private:
  Target target_;
  std::shared_ptr<CpuWorkerPool> pool_;
};

}  // namespace hi
