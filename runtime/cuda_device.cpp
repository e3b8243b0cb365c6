// The CUDA driver API is declared here, not taken from <cuda.h>, so that the build needs no CUDA toolkit. Only what
// this file calls is declared, with the types of cuda.h on 64-bit Linux (CUdevice is an int, CUdeviceptr an unsigned
// long long, handles are pointers to opaque structs, CUresult is a C enum passed as int). Entry points that cuda.h
// maps to a versioned symbol (#define cuMemAlloc cuMemAlloc_v2) are looked up by that symbol: the driver keeps every
// versioned symbol exported for binaries built against older toolkits, so plain dlsym is enough and cuGetProcAddress
// (whose signature changed between CUDA 11, 12 and 13) is not needed.
//
// Why push/pop rather than cuCtxSetCurrent: the calling thread may be one of PyTorch's, with PyTorch's current
// context for another GPU; every call leaves the thread's current context as it found it. When the primary context is
// already current (the usual case under PyTorch), no context call is made besides cuCtxGetCurrent.
#include "runtime/cuda_device.h"

#include <cstring>
#include <initializer_list>
#include <mutex>
#include <new>
#include <stdexcept>

#include "runtime/dynamic_library.h"

namespace hi {

namespace {

using CUresult = int;
using CUdevice = int;
using CUcontext = void*;
using CUmodule = void*;
using CUfunction = void*;
using CUstream = void*;
using CUdeviceptr = unsigned long long;
using CUevent = void*;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;

// CUdevice_attribute values (cuda.h).
constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;

// CUfunction_attribute values (cuda.h).
constexpr int CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0;
constexpr int CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1;
constexpr int CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3;
constexpr int CU_FUNC_ATTRIBUTE_NUM_REGS = 4;

// ELF e_machine values: what a code object was built for.
constexpr unsigned kElfMachineCuda = 190;    // EM_CUDA
constexpr unsigned kElfMachineAmdgpu = 224;  // EM_AMDGPU
constexpr unsigned kElfMachineX86_64 = 62;   // EM_X86_64

}  // namespace

struct CudaDriver {
  DynamicLibrary library;
  CUresult (*cuInit)(unsigned flags);
  CUresult (*cuDriverGetVersion)(int* version);
  CUresult (*cuDeviceGetCount)(int* count);
  CUresult (*cuDeviceGet)(CUdevice* device, int ordinal);
  CUresult (*cuDeviceGetAttribute)(int* value, int attribute, CUdevice device);
  CUresult (*cuDeviceGetName)(char* name, int length, CUdevice device);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext* context, CUdevice device);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice device);  // cuDevicePrimaryCtxRelease_v2
  CUresult (*cuCtxGetCurrent)(CUcontext* context);
  CUresult (*cuCtxPushCurrent)(CUcontext context);  // cuCtxPushCurrent_v2
  CUresult (*cuCtxPopCurrent)(CUcontext* context);  // cuCtxPopCurrent_v2
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuModuleLoadData)(CUmodule* module, const void* image);
  CUresult (*cuModuleGetFunction)(CUfunction* function, CUmodule module, const char* name);
  CUresult (*cuModuleUnload)(CUmodule module);
  CUresult (*cuFuncGetAttribute)(int* value, int attribute, CUfunction function);
  CUresult (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int* blocks, CUfunction function, int block_size,
                                                         size_t dynamic_shared_bytes);
  CUresult (*cuLaunchKernel)(CUfunction function, unsigned grid_x, unsigned grid_y, unsigned grid_z, unsigned block_x,
                             unsigned block_y, unsigned block_z, unsigned shared_bytes, CUstream stream,
                             void** kernel_params, void** extra);
  CUresult (*cuMemAlloc)(CUdeviceptr* pointer, size_t bytes);                // cuMemAlloc_v2
  CUresult (*cuMemFree)(CUdeviceptr pointer);                                // cuMemFree_v2
  CUresult (*cuMemcpyHtoD)(CUdeviceptr dst, const void* src, size_t bytes);  // cuMemcpyHtoD_v2
  CUresult (*cuMemcpyDtoH)(void* dst, CUdeviceptr src, size_t bytes);        // cuMemcpyDtoH_v2
  CUresult (*cuStreamSynchronize)(CUstream stream);
  CUresult (*cuMemsetD8Async)(CUdeviceptr pointer, unsigned char value, size_t count, CUstream stream);
  CUresult (*cuEventCreate)(CUevent* event, unsigned flags);
  CUresult (*cuEventRecord)(CUevent event, CUstream stream);
  CUresult (*cuEventSynchronize)(CUevent event);
  CUresult (*cuEventElapsedTime)(float* milliseconds, CUevent start, CUevent end);
  CUresult (*cuEventDestroy)(CUevent event);  // cuEventDestroy_v2
  CUresult (*cuGetErrorName)(CUresult result, const char** name);
  CUresult (*cuGetErrorString)(CUresult result, const char** text);

  explicit CudaDriver(DynamicLibrary lib) : library(std::move(lib)) {
    bind(cuInit, "cuInit");
    bind(cuDriverGetVersion, "cuDriverGetVersion");
    bind(cuDeviceGetCount, "cuDeviceGetCount");
    bind(cuDeviceGet, "cuDeviceGet");
    bind(cuDeviceGetAttribute, "cuDeviceGetAttribute");
    bind(cuDeviceGetName, "cuDeviceGetName");
    bind(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    bind(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
    bind(cuCtxGetCurrent, "cuCtxGetCurrent");
    bind(cuCtxPushCurrent, "cuCtxPushCurrent_v2");
    bind(cuCtxPopCurrent, "cuCtxPopCurrent_v2");
    bind(cuCtxSynchronize, "cuCtxSynchronize");
    bind(cuModuleLoadData, "cuModuleLoadData");
    bind(cuModuleGetFunction, "cuModuleGetFunction");
    bind(cuModuleUnload, "cuModuleUnload");
    bind(cuFuncGetAttribute, "cuFuncGetAttribute");
    bind(cuOccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor");
    bind(cuLaunchKernel, "cuLaunchKernel");
    bind(cuMemAlloc, "cuMemAlloc_v2");
    bind(cuMemFree, "cuMemFree_v2");
    bind(cuMemcpyHtoD, "cuMemcpyHtoD_v2");
    bind(cuMemcpyDtoH, "cuMemcpyDtoH_v2");
    bind(cuStreamSynchronize, "cuStreamSynchronize");
    // Only autotuning uses these: looked up without failing, and checked where used.
    bind_optional(cuMemsetD8Async, {"cuMemsetD8Async"});
    bind_optional(cuEventCreate, {"cuEventCreate"});
    bind_optional(cuEventRecord, {"cuEventRecord"});
    bind_optional(cuEventSynchronize, {"cuEventSynchronize"});
    bind_optional(cuEventElapsedTime, {"cuEventElapsedTime_v2", "cuEventElapsedTime"});
    bind_optional(cuEventDestroy, {"cuEventDestroy_v2", "cuEventDestroy"});
    bind(cuGetErrorName, "cuGetErrorName");
    bind(cuGetErrorString, "cuGetErrorString");
  }

  /// "CUDA_ERROR_INVALID_IMAGE (device kernel image is invalid)".
  std::string describe(CUresult result) const {
    const char* name = nullptr;
    const char* text = nullptr;
    if (cuGetErrorName(result, &name) != CUDA_SUCCESS || !name) return "CUresult " + std::to_string(result);
    std::string out = name;
    if (cuGetErrorString(result, &text) == CUDA_SUCCESS && text) out += std::string(" (") + text + ")";
    return out;
  }

  /// Throws "<call> failed[ for kernel 'K']: <name> (<text>)" unless `result` is CUDA_SUCCESS.
  void check(CUresult result, const char* call, const std::string* kernel = nullptr) const {
    if (result == CUDA_SUCCESS) return;
    std::string where = kernel ? " for kernel '" + *kernel + "'" : "";
    throw std::runtime_error(std::string(call) + " failed" + where + ": " + describe(result));
  }

  /// Whether the event and memset entry points autotuning needs were all found.
  bool can_time() const {
    return cuMemsetD8Async && cuEventCreate && cuEventRecord && cuEventSynchronize && cuEventElapsedTime &&
           cuEventDestroy;
  }

 private:
  template <typename FunctionPointer>
  void bind(FunctionPointer& slot, const char* symbol) {
    slot = library.function<FunctionPointer>(symbol);
  }
  template <typename FunctionPointer>
  void bind_optional(FunctionPointer& slot, std::initializer_list<const char*> symbols) {
    slot = nullptr;
    for (const char* symbol : symbols)
      if (void* address = library.find_symbol(symbol)) {
        slot = reinterpret_cast<FunctionPointer>(address);
        return;
      }
  }
};

namespace {

/// Makes `context` current on this thread for the guard's lifetime (see the top of the file).
class ContextScope {
 public:
  ContextScope(const CudaDriver& driver, CUcontext context) : driver_(driver) {
    CUcontext current = nullptr;
    driver.check(driver.cuCtxGetCurrent(&current), "cuCtxGetCurrent");
    if (current == context) return;
    driver.check(driver.cuCtxPushCurrent(context), "cuCtxPushCurrent");
    pushed_ = true;
  }
  ~ContextScope() {
    CUcontext popped = nullptr;
    if (pushed_) driver_.cuCtxPopCurrent(&popped);
  }
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;

 private:
  const CudaDriver& driver_;
  bool pushed_ = false;
};

std::shared_ptr<const CudaDriver> load_cuda_driver() {
  // One per process; a failed load is retried by the next CudaDevice (a driver may appear, e.g. in tests).
  static std::mutex mutex;
  static std::shared_ptr<const CudaDriver> driver;
  std::lock_guard lock(mutex);
  if (!driver)
    driver = std::make_shared<const CudaDriver>(
        DynamicLibrary::open_first("the CUDA driver (libcuda)", {"libcuda.so.1", "libcuda.so"}));
  return driver;
}

/// Why `binary` is not a cubin, or "" when it is one.
std::string not_a_cubin(const std::vector<char>& binary) {
  static const char kBundleMagic[] = "__CLANG_OFFLOAD_BUNDLE__";
  if (binary.size() >= sizeof(kBundleMagic) - 1 &&
      std::memcmp(binary.data(), kBundleMagic, sizeof(kBundleMagic) - 1) == 0)
    return "it is a clang offload bundle (an AMD code object from HIPRTC)";
  if (binary.size() < 64 || std::memcmp(binary.data(),
                                        "\x7f"
                                        "ELF",
                                        4) != 0)
    return "it is not an ELF file (" + std::to_string(binary.size()) + " bytes)";
  unsigned machine = static_cast<unsigned char>(binary[18]) | (static_cast<unsigned char>(binary[19]) << 8);
  if (machine == kElfMachineCuda) return "";
  if (machine == kElfMachineAmdgpu) return "it is an AMD GPU ELF (EM_AMDGPU)";
  if (machine == kElfMachineX86_64) return "it is a host x86-64 ELF (a cpu device module?)";
  return "its ELF machine is " + std::to_string(machine) + ", not EM_CUDA (190)";
}

}  // namespace

CudaModule::CudaModule(std::shared_ptr<const CudaDriver> driver, void* context, void* module,
                       std::vector<KernelInfo> kernels)
    : driver_(std::move(driver)), context_(context), module_(module), kernels_(std::move(kernels)) {
  ContextScope scope(*driver_, context_);
  for (const KernelInfo& info : kernels_) {
    CUfunction f = nullptr;
    driver_->check(driver_->cuModuleGetFunction(&f, module_, info.name.c_str()), "cuModuleGetFunction", &info.name);
    functions_[info.name] = f;
  }
}

CudaModule::~CudaModule() {
  // Errors are ignored: at process exit the driver may already be shut down (CUDA_ERROR_DEINITIALIZED).
  CUcontext current = nullptr;
  if (driver_->cuCtxGetCurrent(&current) != CUDA_SUCCESS) return;
  bool pushed = current != context_ && driver_->cuCtxPushCurrent(context_) == CUDA_SUCCESS;
  driver_->cuModuleUnload(module_);
  CUcontext popped = nullptr;
  if (pushed) driver_->cuCtxPopCurrent(&popped);
}

void* CudaModule::function(const std::string& kernel) {
  // Launches from several threads may race with the lookup of a kernel not listed at load.
  std::lock_guard lock(functions_mutex_);
  auto found = functions_.find(kernel);
  if (found != functions_.end()) return found->second;
  ContextScope scope(*driver_, context_);
  CUfunction f = nullptr;
  driver_->check(driver_->cuModuleGetFunction(&f, module_, kernel.c_str()), "cuModuleGetFunction", &kernel);
  return functions_[kernel] = f;
}

void CudaModule::launch(const std::string& kernel, Dim3 grid, Dim3 block, unsigned shared_bytes, void** args,
                        void* stream) {
  CUfunction f = function(kernel);
  ContextScope scope(*driver_, context_);
  driver_->check(driver_->cuLaunchKernel(f, grid.x, grid.y, grid.z, block.x, block.y, block.z, shared_bytes, stream,
                                         args, nullptr),
                 "cuLaunchKernel", &kernel);
}

int CudaModule::resident_blocks(const std::string& kernel, int block_threads, unsigned shared_bytes) {
  CUfunction f = function(kernel);
  ContextScope scope(*driver_, context_);
  int blocks = 0;
  driver_->check(driver_->cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, block_threads, shared_bytes),
                 "cuOccupancyMaxActiveBlocksPerMultiprocessor", &kernel);
  return blocks;
}

std::vector<GpuKernelFacts> CudaModule::kernel_facts() const {
  ContextScope scope(*driver_, context_);
  std::vector<GpuKernelFacts> facts;
  for (const KernelInfo& info : kernels_) {
    CUfunction f = nullptr;
    {
      std::lock_guard lock(functions_mutex_);
      f = functions_.at(info.name);
    }
    GpuKernelFacts k;
    k.name = info.name;
    auto attribute = [&](int which, int& value) {
      driver_->check(driver_->cuFuncGetAttribute(&value, which, f), "cuFuncGetAttribute", &info.name);
    };
    attribute(CU_FUNC_ATTRIBUTE_NUM_REGS, k.registers);
    attribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, k.static_shared_bytes);
    attribute(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, k.local_bytes);
    attribute(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, k.max_threads_per_block);
    facts.push_back(std::move(k));
  }
  return facts;
}

CudaDevice::CudaDevice(int ordinal) : driver_(load_cuda_driver()), ordinal_(ordinal) {
  const CudaDriver& d = *driver_;
  d.check(d.cuInit(0), "cuInit");
  int count = 0;
  d.check(d.cuDeviceGetCount(&count), "cuDeviceGetCount");
  if (ordinal < 0 || ordinal >= count)
    throw std::runtime_error("no CUDA GPU " + std::to_string(ordinal) + ": the driver (" + d.library.opened_name() +
                             ") sees " + std::to_string(count) + " GPU(s)");
  d.check(d.cuDeviceGet(&device_, ordinal), "cuDeviceGet");
  int major = 0, minor = 0;
  d.check(d.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device_),
          "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR)");
  d.check(d.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device_),
          "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MINOR)");
  d.check(d.cuDeviceGetAttribute(&multiprocessors_, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device_),
          "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)");
  char gpu_name[256] = {};
  d.check(d.cuDeviceGetName(gpu_name, sizeof(gpu_name) - 1, device_), "cuDeviceGetName");
  gpu_name_ = gpu_name;
  int version = 0;
  d.check(d.cuDriverGetVersion(&version), "cuDriverGetVersion");
  driver_version_ = std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
  target_ = parse_target("sm_" + std::to_string(major) + std::to_string(minor));
  d.check(d.cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
}

CudaDevice::~CudaDevice() {
  driver_->cuDevicePrimaryCtxRelease(device_);
}

std::string CudaDevice::name() const {
  return gpu_name_ + " (cuda:" + std::to_string(ordinal_) + ", " + target_.id() + ", " +
         std::to_string(multiprocessors_) + " SMs, driver " + driver_version_ + ")";
}

std::unique_ptr<Module> CudaDevice::load(const std::vector<char>& binary, const std::vector<KernelInfo>& kernels) {
  std::string problem = not_a_cubin(binary);
  if (!problem.empty())
    throw std::runtime_error("cannot load a code object on " + name() + ": it must be a cubin for " + target_.id() +
                             " (NVRTC output), but " + problem);
  ContextScope scope(*driver_, context_);
  CUmodule module = nullptr;
  driver_->check(driver_->cuModuleLoadData(&module, binary.data()), "cuModuleLoadData");
  try {
    return std::make_unique<CudaModule>(driver_, context_, module, kernels);
  } catch (...) {
    driver_->cuModuleUnload(module);
    throw;
  }
}

void* CudaDevice::alloc(size_t bytes) {
  ContextScope scope(*driver_, context_);
  CUdeviceptr pointer = 0;
  CUresult result = driver_->cuMemAlloc(&pointer, bytes == 0 ? 1 : bytes);
  if (result == CUDA_ERROR_OUT_OF_MEMORY) throw std::bad_alloc();
  driver_->check(result, "cuMemAlloc");
  return reinterpret_cast<void*>(pointer);
}

void CudaDevice::free(void* pointer) {
  if (!pointer) return;
  // Errors are ignored: free runs from destructors, also at exit after the driver shut down. A sticky error (an
  // illegal address in an earlier kernel) is reported by the next call that checks.
  CUcontext current = nullptr;
  if (driver_->cuCtxGetCurrent(&current) != CUDA_SUCCESS) return;
  bool pushed = current != context_ && driver_->cuCtxPushCurrent(context_) == CUDA_SUCCESS;
  driver_->cuMemFree(reinterpret_cast<CUdeviceptr>(pointer));
  CUcontext popped = nullptr;
  if (pushed) driver_->cuCtxPopCurrent(&popped);
}

void CudaDevice::copy_to_device(void* device_destination, const void* host_source, size_t bytes) {
  ContextScope scope(*driver_, context_);
  driver_->check(driver_->cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(device_destination), host_source, bytes),
                 "cuMemcpyHtoD");
}

void CudaDevice::copy_to_host(void* host_destination, const void* device_source, size_t bytes) {
  ContextScope scope(*driver_, context_);
  driver_->check(driver_->cuMemcpyDtoH(host_destination, reinterpret_cast<CUdeviceptr>(device_source), bytes),
                 "cuMemcpyDtoH");
}

void CudaDevice::synchronize(void* stream) {
  ContextScope scope(*driver_, context_);
  if (stream)
    driver_->check(driver_->cuStreamSynchronize(stream), "cuStreamSynchronize");
  else
    driver_->check(driver_->cuCtxSynchronize(), "cuCtxSynchronize");
}

void CudaDevice::fill(void* pointer, int value, size_t bytes, void* stream) {
  if (!driver_->cuMemsetD8Async)
    throw std::runtime_error("the CUDA driver (" + driver_->library.opened_name() + ") has no cuMemsetD8Async");
  ContextScope scope(*driver_, context_);
  driver_->check(driver_->cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(pointer), static_cast<unsigned char>(value),
                                          bytes, stream),
                 "cuMemsetD8Async");
}

double CudaDevice::time_ms(const std::function<void()>& enqueue, void* stream) {
  if (!driver_->can_time()) return Device::time_ms(enqueue, stream);  // wall time, without events
  ContextScope scope(*driver_, context_);
  CUevent events[2] = {nullptr, nullptr};
  struct Destroy {
    const CudaDriver& d;
    CUevent* e;
    ~Destroy() {
      for (int i = 0; i < 2; ++i)
        if (e[i]) d.cuEventDestroy(e[i]);
    }
  } destroy{*driver_, events};
  for (CUevent& e : events) driver_->check(driver_->cuEventCreate(&e, 0), "cuEventCreate");
  driver_->check(driver_->cuEventRecord(events[0], stream), "cuEventRecord");
  enqueue();
  driver_->check(driver_->cuEventRecord(events[1], stream), "cuEventRecord");
  driver_->check(driver_->cuEventSynchronize(events[1]), "cuEventSynchronize");
  float ms = 0;
  driver_->check(driver_->cuEventElapsedTime(&ms, events[0], events[1]), "cuEventElapsedTime");
  return ms;
}

}  // namespace hi
