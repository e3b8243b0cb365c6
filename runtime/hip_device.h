// The HIP runtime device: runs AMD code objects (what HIPRTC makes for gfx targets) on an AMD GPU through the HIP
// runtime's module API, libamdhip64 loaded with dlopen ("libamdhip64.so.6", ".so.5", ".so"), so the build needs no
// ROCm and a machine without an AMD GPU fails only when a HipDevice is created, with a message saying why.
//
// Contract:
//   - The HIP runtime has one context per GPU, shared with PyTorch's ROCm build: hipStream_t values
//     (torch.cuda.current_stream().cuda_stream under ROCm) and device pointers from PyTorch are valid here. Every call
//     makes the device current on the calling thread (hipSetDevice) for its duration and restores the previous one.
//   - The target is the GPU's gcnArchName, parsed as a target id ("gfx942:sramecc+:xnack-"), read from
//     hipDeviceProp_t; see hip_device.cpp for how the two ABI layouts of that struct (HIP 5, HIP 6+) are told apart.
//     When it cannot be read reliably the constructor throws rather than guess.
//   - launch() enqueues with hipModuleLaunchKernel on the given hipStream_t (null: the default stream) and returns.
//     copy_to_device/copy_to_host are synchronous hipMemcpy.
//   - Errors are std::runtime_error naming the HIP call, the hipError_t name and text, and the kernel where there is
//     one. alloc() throws std::bad_alloc on hipErrorOutOfMemory.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/device.h"

namespace hi {

struct HipRuntime;  // the dlopened library and its entry points (hip_device.cpp)

class HipModule final : public Module {
 public:
  void launch(const std::string& kernel, Dim3 grid, Dim3 block, unsigned shared_bytes, void** args,
              void* stream) override;
  /// hipFuncGetAttribute for every kernel listed at load; empty when the runtime does not export it.
  std::vector<GpuKernelFacts> kernel_facts() const override;
  /// hipModuleOccupancyMaxActiveBlocksPerMultiprocessor; 0 when the runtime does not export it.
  int resident_blocks(const std::string& kernel, int block_threads, unsigned shared_bytes) override;

  HipModule(std::shared_ptr<const HipRuntime> runtime, int device, void* module, std::vector<KernelInfo> kernels);
  ~HipModule() override;
  HipModule(const HipModule&) = delete;
  HipModule& operator=(const HipModule&) = delete;

 private:
  void* function(const std::string& kernel);

  std::shared_ptr<const HipRuntime> runtime_;
  int device_;
  void* module_;  ///< hipModule_t
  std::vector<KernelInfo> kernels_;
  mutable std::mutex functions_mutex_;
  std::unordered_map<std::string, void*> functions_;  ///< hipFunction_t by kernel name
};

class HipDevice final : public Device {
 public:
  /// Opens libamdhip64, hipInit, and reads GPU `ordinal`'s properties. Throws std::runtime_error when the library is
  /// missing (naming the names tried), when there is no AMD GPU ("no AMD GPU: hipGetDeviceCount returned ..."), or
  /// when the GPU's gcnArchName cannot be determined.
  explicit HipDevice(int ordinal = 0);
  ~HipDevice() override = default;
  HipDevice(const HipDevice&) = delete;
  HipDevice& operator=(const HipDevice&) = delete;

  /// "AMD Instinct MI300X (hip:0, gfx942:sramecc+:xnack-, 304 CUs, HIP 6.2.41133)".
  std::string name() const override;
  Target target() const override { return target_; }
  int multiprocessor_count() const override { return compute_units_; }
  int ordinal() const { return ordinal_; }

  /// hipModuleLoadData of an amdgcn ELF or a clang offload bundle; throws for anything else (a cubin, a host .so).
  std::unique_ptr<Module> load(const std::vector<char>& binary, const std::vector<KernelInfo>& kernels) override;
  void* alloc(size_t bytes) override;
  void free(void* pointer) override;
  void copy_to_device(void* device_destination, const void* host_source, size_t bytes) override;
  void copy_to_host(void* host_destination, const void* device_source, size_t bytes) override;
  /// hipStreamSynchronize(stream); for a null stream hipDeviceSynchronize.
  void synchronize(void* stream) override;
  void fill(void* pointer, int value, size_t bytes, void* stream) override;
  double time_ms(const std::function<void()>& enqueue, void* stream) override;

 private:
  std::shared_ptr<const HipRuntime> runtime_;
  int ordinal_;
  Target target_;
  int compute_units_ = 0;
  std::string gpu_name_;
  std::string runtime_version_;
};

}  // namespace hi
