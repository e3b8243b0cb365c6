// The HIP runtime API is declared here, not taken from <hip/hip_runtime_api.h>, so that the build needs no ROCm.
// hipError_t is a C enum passed as int, handles are pointers, hipMemcpyKind is an int (HostToDevice 1, DeviceToHost 2).
//
// Reading gcnArchName. hipDeviceProp_t changed its layout in HIP 6: HIP 5 exports hipGetDeviceProperties filling the
// old struct (hipDeviceProp_tR0000 in HIP 6's hip_deprecated.h); HIP 6 exports hipGetDevicePropertiesR0600 filling the
// new one (its header #defines hipGetDeviceProperties to it). The call is made into a zeroed buffer several times
// larger than either struct, so a layout that grew cannot write past it, and the fields are read at these offsets
// (x86-64 Linux):
//
//                 symbol                          gcnArchName  warpSize  sizeof
//   R0000 (HIP 5) hipGetDeviceProperties          396          276       792
//   R0600 (HIP 6+) hipGetDevicePropertiesR0600    1160         308       1472
//
// R0000: offsetof() over Debian's /usr/include/hip/hip_runtime_api.h (HIP 5.7.31921, libamdhip64-dev), compiled with
// g++ at development time. R0600: offsetof() over a field-by-field copy of `struct hipDeviceProp_t` under
// HIP_FORCE_API_VERSION >= 600 in ROCm's hip_runtime_api.h (ROCm/rocm-systems projects/hip/include/hip/, the HIP 7
// header, where hipDeviceProp_tR0600 is still the latest layout), compiled the same way; gcnArchName follows
// `int reserved[63]; int hipReserved[32];`. Which layout applies is decided by the symbol present
// (hipGetDevicePropertiesR0600 first), falling back to hipGetDeviceProperties only when hipRuntimeGetVersion says
// HIP 5. The result is checked before use: warpSize must be 32 or 64 and gcnArchName a NUL-terminated "gfx..." that
// parse_target accepts; otherwise the constructor throws ("cannot determine the GPU's gcnArchName") instead of
// guessing an architecture from the compute-capability attributes (gfx90a and gfx942 both report 9.x).
//
// hipDeviceAttribute_t values used (identical in HIP 5.7 and HIP 6/7: the enum only grew after them):
// hipDeviceAttributeMultiprocessorCount = 63.
#include "runtime/hip_device.h"

#include <cstring>
#include <new>
#include <stdexcept>

#include "runtime/dynamic_library.h"

namespace hi {

namespace {

using hipError_t = int;
using hipModule_t = void*;
using hipFunction_t = void*;
using hipStream_t = void*;
using hipEvent_t = void*;

constexpr hipError_t hipSuccess = 0;
constexpr hipError_t hipErrorOutOfMemory = 2;
constexpr int hipMemcpyHostToDevice = 1;
constexpr int hipMemcpyDeviceToHost = 2;
constexpr int hipDeviceAttributeMultiprocessorCount = 63;

// hipFunction_attribute values (hip/driver_types.h; the same numbers as CUfunction_attribute).
constexpr int HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0;
constexpr int HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1;
constexpr int HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3;
constexpr int HIP_FUNC_ATTRIBUTE_NUM_REGS = 4;

/// One hipDeviceProp_t ABI layout: where the fields read here are (see the table at the top of the file).
struct DevicePropLayout {
  const char* name;
  size_t gcn_arch_name;
  size_t warp_size;
};
constexpr DevicePropLayout kLayoutR0000{"hipDeviceProp_tR0000 (HIP 5)", 396, 276};
constexpr DevicePropLayout kLayoutR0600{"hipDeviceProp_tR0600 (HIP 6+)", 1160, 308};
constexpr size_t kDevicePropBufferBytes = 16384;  // > 10x either layout

constexpr unsigned kElfMachineAmdgpu = 224;  // EM_AMDGPU
constexpr unsigned kElfMachineCuda = 190;    // EM_CUDA

}  // namespace

struct HipRuntime {
  DynamicLibrary library;
  hipError_t (*hipInit)(unsigned flags);
  hipError_t (*hipRuntimeGetVersion)(int* version);
  hipError_t (*hipGetDeviceCount)(int* count);
  hipError_t (*hipGetDevice)(int* device);
  hipError_t (*hipSetDevice)(int device);
  hipError_t (*hipDeviceGetAttribute)(int* value, int attribute, int device);
  hipError_t (*hipModuleLoadData)(hipModule_t* module, const void* image);
  hipError_t (*hipModuleGetFunction)(hipFunction_t* function, hipModule_t module, const char* name);
  hipError_t (*hipModuleUnload)(hipModule_t module);
  hipError_t (*hipModuleLaunchKernel)(hipFunction_t function, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                                      unsigned block_x, unsigned block_y, unsigned block_z, unsigned shared_bytes,
                                      hipStream_t stream, void** kernel_params, void** extra);
  hipError_t (*hipMalloc)(void** pointer, size_t bytes);
  hipError_t (*hipFree)(void* pointer);
  hipError_t (*hipMemcpy)(void* dst, const void* src, size_t bytes, int kind);
  hipError_t (*hipStreamSynchronize)(hipStream_t stream);
  hipError_t (*hipMemsetAsync)(void* pointer, int value, size_t bytes, hipStream_t stream);
  hipError_t (*hipEventCreate)(hipEvent_t* event);
  hipError_t (*hipEventRecord)(hipEvent_t event, hipStream_t stream);
  hipError_t (*hipEventSynchronize)(hipEvent_t event);
  hipError_t (*hipEventElapsedTime)(float* milliseconds, hipEvent_t start, hipEvent_t end);
  hipError_t (*hipEventDestroy)(hipEvent_t event);
  hipError_t (*hipDeviceSynchronize)();
  const char* (*hipGetErrorName)(hipError_t error);
  const char* (*hipGetErrorString)(hipError_t error);
  // Optional.
  hipError_t (*hipFuncGetAttribute)(int* value, int attribute, hipFunction_t function) = nullptr;
  hipError_t (*hipModuleOccupancyMaxActiveBlocksPerMultiprocessor)(int* blocks, hipFunction_t function,
                                                                   int block_size, size_t dynamic_shared_bytes) = nullptr;

  explicit HipRuntime(DynamicLibrary lib) : library(std::move(lib)) {
    bind(hipInit, "hipInit");
    bind(hipRuntimeGetVersion, "hipRuntimeGetVersion");
    bind(hipGetDeviceCount, "hipGetDeviceCount");
    bind(hipGetDevice, "hipGetDevice");
    bind(hipSetDevice, "hipSetDevice");
    bind(hipDeviceGetAttribute, "hipDeviceGetAttribute");
    bind(hipModuleLoadData, "hipModuleLoadData");
    bind(hipModuleGetFunction, "hipModuleGetFunction");
    bind(hipModuleUnload, "hipModuleUnload");
    bind(hipModuleLaunchKernel, "hipModuleLaunchKernel");
    bind(hipMalloc, "hipMalloc");
    bind(hipFree, "hipFree");
    bind(hipMemcpy, "hipMemcpy");
    bind(hipStreamSynchronize, "hipStreamSynchronize");
    bind(hipMemsetAsync, "hipMemsetAsync");
    bind(hipEventCreate, "hipEventCreate");
    bind(hipEventRecord, "hipEventRecord");
    bind(hipEventSynchronize, "hipEventSynchronize");
    bind(hipEventElapsedTime, "hipEventElapsedTime");
    bind(hipEventDestroy, "hipEventDestroy");
    bind(hipDeviceSynchronize, "hipDeviceSynchronize");
    bind(hipGetErrorName, "hipGetErrorName");
    bind(hipGetErrorString, "hipGetErrorString");
    hipFuncGetAttribute = reinterpret_cast<decltype(hipFuncGetAttribute)>(library.find_symbol("hipFuncGetAttribute"));
    hipModuleOccupancyMaxActiveBlocksPerMultiprocessor =
        reinterpret_cast<decltype(hipModuleOccupancyMaxActiveBlocksPerMultiprocessor)>(
            library.find_symbol("hipModuleOccupancyMaxActiveBlocksPerMultiprocessor"));
  }

  /// "hipErrorNoDevice (no ROCm-capable device is detected)".
  std::string describe(hipError_t error) const {
    const char* name = hipGetErrorName(error);
    const char* text = hipGetErrorString(error);
    std::string out = name ? name : "hipError_t " + std::to_string(error);
    if (text && *text) out += std::string(" (") + text + ")";
    return out;
  }

  /// Throws "<call> failed[ for kernel 'K']: <name> (<text>)" unless `error` is hipSuccess.
  void check(hipError_t error, const char* call, const std::string* kernel = nullptr) const {
    if (error == hipSuccess) return;
    std::string where = kernel ? " for kernel '" + *kernel + "'" : "";
    throw std::runtime_error(std::string(call) + " failed" + where + ": " + describe(error));
  }

 private:
  template <typename FunctionPointer>
  void bind(FunctionPointer& slot, const char* symbol) {
    slot = library.function<FunctionPointer>(symbol);
  }
};

namespace {

/// Makes `device` the calling thread's current HIP device for the guard's lifetime.
class DeviceScope {
 public:
  DeviceScope(const HipRuntime& runtime, int device) : runtime_(runtime) {
    int current = -1;
    runtime.check(runtime.hipGetDevice(&current), "hipGetDevice");
    if (current == device) return;
    runtime.check(runtime.hipSetDevice(device), "hipSetDevice");
    previous_ = current;
  }
  ~DeviceScope() {
    if (previous_ >= 0) runtime_.hipSetDevice(previous_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  const HipRuntime& runtime_;
  int previous_ = -1;
};

std::shared_ptr<const HipRuntime> load_hip_runtime() {
  static std::mutex mutex;
  static std::shared_ptr<const HipRuntime> runtime;
  std::lock_guard lock(mutex);
  if (!runtime)
    runtime = std::make_shared<const HipRuntime>(DynamicLibrary::open_first(
        "the HIP runtime (libamdhip64)", {"libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"}));
  return runtime;
}

/// "6.2.41133" from hipRuntimeGetVersion's HIP_VERSION (major * 10^7 + minor * 10^5 + patch).
std::string version_text(int version) {
  return std::to_string(version / 10000000) + "." + std::to_string(version / 100000 % 100) + "." +
         std::to_string(version % 100000);
}

/// Why `binary` is not an AMD code object, or "" when it is one.
std::string not_an_amd_code_object(const std::vector<char>& binary) {
  static const char kBundleMagic[] = "__CLANG_OFFLOAD_BUNDLE__";
  if (binary.size() >= sizeof(kBundleMagic) - 1 &&
      std::memcmp(binary.data(), kBundleMagic, sizeof(kBundleMagic) - 1) == 0)
    return "";
  if (binary.size() < 64 || std::memcmp(binary.data(),
                                        "\x7f"
                                        "ELF",
                                        4) != 0)
    return "it is neither an ELF file nor a clang offload bundle (" + std::to_string(binary.size()) + " bytes)";
  unsigned machine = static_cast<unsigned char>(binary[18]) | (static_cast<unsigned char>(binary[19]) << 8);
  if (machine == kElfMachineAmdgpu) return "";
  if (machine == kElfMachineCuda) return "it is a cubin (EM_CUDA, NVRTC output)";
  return "its ELF machine is " + std::to_string(machine) + ", not EM_AMDGPU (224)";
}

}  // namespace

HipModule::HipModule(std::shared_ptr<const HipRuntime> runtime, int device, void* module,
                     std::vector<KernelInfo> kernels)
    : runtime_(std::move(runtime)), device_(device), module_(module), kernels_(std::move(kernels)) {
  DeviceScope scope(*runtime_, device_);
  for (const KernelInfo& info : kernels_) {
    hipFunction_t f = nullptr;
    runtime_->check(runtime_->hipModuleGetFunction(&f, module_, info.name.c_str()), "hipModuleGetFunction", &info.name);
    functions_[info.name] = f;
  }
}

HipModule::~HipModule() {
  // Errors are ignored: at process exit the runtime may already be torn down.
  int current = -1;
  if (runtime_->hipGetDevice(&current) != hipSuccess) return;
  bool switched = current != device_ && runtime_->hipSetDevice(device_) == hipSuccess;
  runtime_->hipModuleUnload(module_);
  if (switched) runtime_->hipSetDevice(current);
}

void* HipModule::function(const std::string& kernel) {
  std::lock_guard lock(functions_mutex_);
  auto found = functions_.find(kernel);
  if (found != functions_.end()) return found->second;
  DeviceScope scope(*runtime_, device_);
  hipFunction_t f = nullptr;
  runtime_->check(runtime_->hipModuleGetFunction(&f, module_, kernel.c_str()), "hipModuleGetFunction", &kernel);
  return functions_[kernel] = f;
}

void HipModule::launch(const std::string& kernel, Dim3 grid, Dim3 block, unsigned shared_bytes, void** args,
                       void* stream) {
  hipFunction_t f = function(kernel);
  DeviceScope scope(*runtime_, device_);
  runtime_->check(runtime_->hipModuleLaunchKernel(f, grid.x, grid.y, grid.z, block.x, block.y, block.z, shared_bytes,
                                                  stream, args, nullptr),
                  "hipModuleLaunchKernel", &kernel);
}

int HipModule::resident_blocks(const std::string& kernel, int block_threads, unsigned shared_bytes) {
  if (!runtime_->hipModuleOccupancyMaxActiveBlocksPerMultiprocessor) return 0;
  hipFunction_t f = function(kernel);
  DeviceScope scope(*runtime_, device_);
  int blocks = 0;
  runtime_->check(runtime_->hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, block_threads, shared_bytes),
                  "hipModuleOccupancyMaxActiveBlocksPerMultiprocessor", &kernel);
  return blocks;
}

std::vector<GpuKernelFacts> HipModule::kernel_facts() const {
  if (!runtime_->hipFuncGetAttribute) return {};
  DeviceScope scope(*runtime_, device_);
  std::vector<GpuKernelFacts> facts;
  for (const KernelInfo& info : kernels_) {
    hipFunction_t f = nullptr;
    {
      std::lock_guard lock(functions_mutex_);
      f = functions_.at(info.name);
    }
    GpuKernelFacts k;
    k.name = info.name;
    auto attribute = [&](int which, int& value) {
      runtime_->check(runtime_->hipFuncGetAttribute(&value, which, f), "hipFuncGetAttribute", &info.name);
    };
    attribute(HIP_FUNC_ATTRIBUTE_NUM_REGS, k.registers);
    attribute(HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, k.static_shared_bytes);
    attribute(HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, k.local_bytes);
    attribute(HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, k.max_threads_per_block);
    facts.push_back(std::move(k));
  }
  return facts;
}

HipDevice::HipDevice(int ordinal) : runtime_(load_hip_runtime()), ordinal_(ordinal) {
  const HipRuntime& r = *runtime_;
  std::string library = r.library.opened_name() + " = " + r.library.resolved_path();
  int version = 0;
  r.check(r.hipRuntimeGetVersion(&version), "hipRuntimeGetVersion");
  runtime_version_ = version_text(version);

  // Without a GPU (or without /dev/kfd access) hipInit and hipGetDeviceCount report hipErrorNoDevice.
  hipError_t init = r.hipInit(0);
  int count = 0;
  hipError_t counted = init == hipSuccess ? r.hipGetDeviceCount(&count) : init;
  if (counted != hipSuccess || count == 0)
    throw std::runtime_error("no AMD GPU: " + std::string(init == hipSuccess ? "hipGetDeviceCount" : "hipInit") +
                             " returned " + (counted == hipSuccess ? "0 devices" : r.describe(counted)) +
                             " (HIP runtime " + runtime_version_ + ", " + library + ")");
  if (ordinal < 0 || ordinal >= count)
    throw std::runtime_error("no AMD GPU " + std::to_string(ordinal) + ": the HIP runtime sees " +
                             std::to_string(count) + " GPU(s)");

  DeviceScope scope(r, ordinal_);
  r.check(r.hipDeviceGetAttribute(&compute_units_, hipDeviceAttributeMultiprocessorCount, ordinal_),
          "hipDeviceGetAttribute(hipDeviceAttributeMultiprocessorCount)");

  // The properties call and layout that match this library (see the top of the file).
  using GetProperties = hipError_t (*)(void* properties, int device);
  const DevicePropLayout* layout = &kLayoutR0600;
  const char* symbol = "hipGetDevicePropertiesR0600";
  auto get_properties = reinterpret_cast<GetProperties>(r.library.find_symbol(symbol));
  if (!get_properties) {
    if (version / 10000000 >= 6)
      throw std::runtime_error("cannot determine the GPU's gcnArchName on HIP " + runtime_version_ + ": " + library +
                               " does not export hipGetDevicePropertiesR0600, and the layout of its "
                               "hipGetDeviceProperties struct is not known for HIP 6+");
    layout = &kLayoutR0000;
    symbol = "hipGetDeviceProperties";
    get_properties = r.library.function<GetProperties>(symbol);
  }
  std::vector<char> properties(kDevicePropBufferBytes, 0);
  r.check(get_properties(properties.data(), ordinal_), symbol);
  int warp_size = 0;
  std::memcpy(&warp_size, properties.data() + layout->warp_size, sizeof(warp_size));
  const char* arch = properties.data() + layout->gcn_arch_name;
  size_t arch_length = strnlen(arch, 256);
  std::string arch_name(arch, arch_length);
  std::string why;
  if (warp_size != 32 && warp_size != 64)
    why = "warpSize reads " + std::to_string(warp_size);
  else if (arch_length == 256 || !arch_name.starts_with("gfx"))
    why = "gcnArchName reads '" + arch_name.substr(0, 64) + "'";
  else {
    try {
      target_ = parse_target(arch_name);
    } catch (const std::invalid_argument& e) {
      why = e.what();
    }
  }
  if (!why.empty())
    throw std::runtime_error("cannot determine the GPU's gcnArchName on HIP " + runtime_version_ + ": " + symbol +
                             " read as " + layout->name + " gives implausible values (" + why + "); " + library);
  gpu_name_ = std::string(properties.data(), strnlen(properties.data(), 256));  // `name` is at offset 0 in both
}

std::string HipDevice::name() const {
  return gpu_name_ + " (hip:" + std::to_string(ordinal_) + ", " + target_.id() + ", " + std::to_string(compute_units_) +
         " CUs, HIP " + runtime_version_ + ")";
}

std::unique_ptr<Module> HipDevice::load(const std::vector<char>& binary, const std::vector<KernelInfo>& kernels) {
  std::string problem = not_an_amd_code_object(binary);
  if (!problem.empty())
    throw std::runtime_error("cannot load a code object on " + name() + ": it must be an AMD code object for " +
                             target_.id() + " (HIPRTC output), but " + problem);
  DeviceScope scope(*runtime_, ordinal_);
  hipModule_t module = nullptr;
  runtime_->check(runtime_->hipModuleLoadData(&module, binary.data()), "hipModuleLoadData");
  try {
    return std::make_unique<HipModule>(runtime_, ordinal_, module, kernels);
  } catch (...) {
    runtime_->hipModuleUnload(module);
    throw;
  }
}

void* HipDevice::alloc(size_t bytes) {
  DeviceScope scope(*runtime_, ordinal_);
  void* pointer = nullptr;
  hipError_t error = runtime_->hipMalloc(&pointer, bytes == 0 ? 1 : bytes);
  if (error == hipErrorOutOfMemory) throw std::bad_alloc();
  runtime_->check(error, "hipMalloc");
  return pointer;
}

void HipDevice::free(void* pointer) {
  if (!pointer) return;
  // Errors are ignored: free runs from destructors, also at exit.
  int current = -1;
  if (runtime_->hipGetDevice(&current) != hipSuccess) return;
  bool switched = current != ordinal_ && runtime_->hipSetDevice(ordinal_) == hipSuccess;
  runtime_->hipFree(pointer);
  if (switched) runtime_->hipSetDevice(current);
}

void HipDevice::copy_to_device(void* device_destination, const void* host_source, size_t bytes) {
  DeviceScope scope(*runtime_, ordinal_);
  runtime_->check(runtime_->hipMemcpy(device_destination, host_source, bytes, hipMemcpyHostToDevice), "hipMemcpy");
}

void HipDevice::copy_to_host(void* host_destination, const void* device_source, size_t bytes) {
  DeviceScope scope(*runtime_, ordinal_);
  runtime_->check(runtime_->hipMemcpy(host_destination, device_source, bytes, hipMemcpyDeviceToHost), "hipMemcpy");
}

void HipDevice::synchronize(void* stream) {
  DeviceScope scope(*runtime_, ordinal_);
  if (stream)
    runtime_->check(runtime_->hipStreamSynchronize(stream), "hipStreamSynchronize");
  else
    runtime_->check(runtime_->hipDeviceSynchronize(), "hipDeviceSynchronize");
}

void HipDevice::fill(void* pointer, int value, size_t bytes, void* stream) {
  DeviceScope scope(*runtime_, ordinal_);
  runtime_->check(runtime_->hipMemsetAsync(pointer, value, bytes, stream), "hipMemsetAsync");
}

double HipDevice::time_ms(const std::function<void()>& enqueue, void* stream) {
  DeviceScope scope(*runtime_, ordinal_);
  hipEvent_t events[2] = {nullptr, nullptr};
  struct Destroy {
    const HipRuntime& r;
    hipEvent_t* e;
    ~Destroy() {
      for (int i = 0; i < 2; ++i)
        if (e[i]) r.hipEventDestroy(e[i]);
    }
  } destroy{*runtime_, events};
  for (hipEvent_t& e : events) runtime_->check(runtime_->hipEventCreate(&e), "hipEventCreate");
  runtime_->check(runtime_->hipEventRecord(events[0], stream), "hipEventRecord");
  enqueue();
  runtime_->check(runtime_->hipEventRecord(events[1], stream), "hipEventRecord");
  runtime_->check(runtime_->hipEventSynchronize(events[1]), "hipEventSynchronize");
  float ms = 0;
  runtime_->check(runtime_->hipEventElapsedTime(&ms, events[0], events[1]), "hipEventElapsedTime");
  return ms;
}

}  // namespace hi
