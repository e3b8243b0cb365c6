// The CUDA driver device: runs cubins (what NVRTC makes for sm_XY) on an NVIDIA GPU through the CUDA driver API,
// libcuda loaded with dlopen ("libcuda.so.1", then "libcuda.so"), so the build needs no CUDA toolkit and a machine
// without a driver fails only when a CudaDevice is created, with a message naming the libraries tried.
//
// Contract:
//   - The device works in the GPU's PRIMARY context, the one the CUDA runtime (and so PyTorch) uses: streams
//     (PyTorch's torch.cuda.current_stream().cuda_stream) and device pointers (tensor.data_ptr()) from PyTorch are
//     valid here. Every call makes that context current on the calling thread for its duration (and restores the
//     previous one), so any thread may call.
//   - launch() enqueues with cuLaunchKernel on the given CUstream (null: the legacy default stream) and returns; use
//     synchronize(stream). copy_to_device/copy_to_host are synchronous (cuMemcpyHtoD/DtoH).
//   - Errors are std::runtime_error naming the driver call, the CUresult name and text, and the kernel where there is
//     one: "cuModuleLoadData failed: CUDA_ERROR_INVALID_IMAGE (device kernel image is invalid)". alloc() throws
//     std::bad_alloc on CUDA_ERROR_OUT_OF_MEMORY.
//   - load() accepts only a cubin (ELF for EM_CUDA); Device::load_for_target also checks the sm it was built for.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/device.h"

namespace hi {

struct CudaDriver;  // the dlopened library and its entry points (cuda_device.cpp)

class CudaModule final : public Module {
 public:
  /// Kernels listed at load are looked up then; others on first launch.
  void launch(const std::string& kernel, Dim3 grid, Dim3 block, unsigned shared_bytes, void** args,
              void* stream) override;
  /// cuFuncGetAttribute for every kernel listed at load.
  std::vector<GpuKernelFacts> kernel_facts() const override;
  /// cuOccupancyMaxActiveBlocksPerMultiprocessor.
  int resident_blocks(const std::string& kernel, int block_threads, unsigned shared_bytes) override;

  CudaModule(std::shared_ptr<const CudaDriver> driver, void* context, void* module, std::vector<KernelInfo> kernels);
  ~CudaModule() override;
  CudaModule(const CudaModule&) = delete;
  CudaModule& operator=(const CudaModule&) = delete;

 private:
  void* function(const std::string& kernel);

  std::shared_ptr<const CudaDriver> driver_;
  void* context_;  ///< CUcontext: the primary context of the device that loaded it
  void* module_;   ///< CUmodule
  std::vector<KernelInfo> kernels_;
  mutable std::mutex functions_mutex_;
  std::unordered_map<std::string, void*> functions_;  ///< CUfunction by kernel name
};

class CudaDevice final : public Device {
 public:
  /// Opens libcuda, cuInit, and retains GPU `ordinal`'s primary context. Throws std::runtime_error when libcuda is
  /// missing (naming the names tried), the driver fails to initialize, or there is no GPU `ordinal`.
  explicit CudaDevice(int ordinal = 0);
  ~CudaDevice() override;  ///< releases the primary context (the context lives on while PyTorch holds it too)
  CudaDevice(const CudaDevice&) = delete;
  CudaDevice& operator=(const CudaDevice&) = delete;

  /// "NVIDIA H200 (cuda:0, sm_90, 132 SMs, driver 13.0)".
  std::string name() const override;
  /// sm_<major><minor> from the compute capability: sm_90 on H100/H200.
  Target target() const override { return target_; }
  int multiprocessor_count() const override { return multiprocessors_; }
  int ordinal() const { return ordinal_; }
  /// cuDriverGetVersion as "13.0".
  const std::string& driver_version() const { return driver_version_; }

  /// cuModuleLoadData of a cubin; throws when `binary` is not a CUDA ELF (naming what it looks like instead) or the
  /// driver rejects it.
  std::unique_ptr<Module> load(const std::vector<char>& binary, const std::vector<KernelInfo>& kernels) override;
  void* alloc(size_t bytes) override;
  void free(void* pointer) override;
  void copy_to_device(void* device_destination, const void* host_source, size_t bytes) override;
  void copy_to_host(void* host_destination, const void* device_source, size_t bytes) override;
  /// cuStreamSynchronize(stream); for a null stream cuCtxSynchronize (everything on the device).
  void synchronize(void* stream) override;
  void fill(void* pointer, int value, size_t bytes, void* stream) override;
  double time_ms(const std::function<void()>& enqueue, void* stream) override;

 private:
  std::shared_ptr<const CudaDriver> driver_;
  int ordinal_;
  int device_ = 0;           ///< CUdevice
  void* context_ = nullptr;  ///< CUcontext (primary)
  Target target_;
  int multiprocessors_ = 0;
  std::string gpu_name_;
  std::string driver_version_;
};

}  // namespace hi
