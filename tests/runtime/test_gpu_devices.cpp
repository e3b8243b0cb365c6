// The GPU devices, meaningful on both kinds of machine:
//   - without a GPU (the dev chroot: Debian's libamdhip64.so.5, no libcuda) creating either device must fail with a
//     message that says why (naming the libraries tried, or "no AMD GPU"), never crash;
//   - on an NVIDIA machine (libcuda present) the CUDA device is opened, an NVRTC-compiled kernel is launched on it and
//     its results are copied back and checked, and the device's refusals (foreign code objects, unknown kernels,
//     invalid launches) are checked;
//   - on an AMD machine the HIP device's target must be a gfx target id.
// Each test prints "[ BRANCH   ]" saying which of these it ran.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <iostream>
#include <numeric>

#include "runtime/compiler.h"
#include "runtime/cuda_device.h"
#include "runtime/gpu_devices.h"
#include "runtime/hip_device.h"

namespace hi {
namespace {

void branch(const std::string& what) {
  std::cout << "[ BRANCH   ] " << what << std::endl;
}

/// Whether dlopen accepts `soname`. The handle is kept open on purpose: unloading libamdhip64 unloads comgr while
/// libLLVM (NODELETE) stays, and loading it again then aborts on LLVM's "Option registered more than once" check.
bool library_loads(const char* soname) {
  return dlopen(soname, RTLD_NOW | RTLD_LOCAL) != nullptr;
}

/// The message of what `make` throws, or "" when it does not throw.
template <typename Make>
std::string error_of(Make make) {
  try {
    make();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(CodeRunsOn, NvidiaFollowsCubinCompatibility) {
  auto runs = [](const char* code, const char* device) {
    return code_runs_on(parse_target(code), parse_target(device));
  };
  EXPECT_TRUE(runs("sm_90", "sm_90"));
  EXPECT_TRUE(runs("sm_80", "sm_86"));   // same major, higher minor
  EXPECT_FALSE(runs("sm_86", "sm_80"));  // newer minor than the device
  EXPECT_FALSE(runs("sm_80", "sm_90"));  // another major
  EXPECT_FALSE(runs("sm_90", "sm_100"));
  EXPECT_TRUE(runs("sm_90a", "sm_90"));  // arch-specific: exactly that GPU
  EXPECT_FALSE(runs("sm_90a", "sm_91"));
  EXPECT_TRUE(runs("sm_100", "sm_103"));
}

TEST(CodeRunsOn, AmdNeedsSameProcessorAndStatedFeatures) {
  auto runs = [](const char* code, const char* device) {
    return code_runs_on(parse_target(code), parse_target(device));
  };
  EXPECT_TRUE(runs("gfx942:sramecc+:xnack-", "gfx942:sramecc+:xnack-"));
  EXPECT_TRUE(runs("gfx942", "gfx942:sramecc+:xnack-"));  // no feature stated: any
  EXPECT_TRUE(runs("gfx942:xnack-", "gfx942:sramecc+:xnack-"));
  EXPECT_FALSE(runs("gfx942:xnack+", "gfx942:sramecc+:xnack-"));
  EXPECT_FALSE(runs("gfx90a", "gfx942:sramecc+:xnack-"));
}

TEST(CodeRunsOn, KindsAndCpuWarpWidthsDoNotMix) {
  auto runs = [](const char* code, const char* device) {
    return code_runs_on(parse_target(code), parse_target(device));
  };
  EXPECT_TRUE(runs("cpu", "cpu"));
  EXPECT_FALSE(runs("cpu", "cpu-w64"));
  EXPECT_FALSE(runs("sm_90", "gfx942"));
  EXPECT_FALSE(runs("gfx942", "cpu-w64"));
}

TEST(OpenGpuDevice, RefusesTheCpuAndUnknownKinds) {
  EXPECT_THROW(open_gpu_device(TargetKind::Cpu, 0), std::invalid_argument);
  EXPECT_EQ(gpu_kind_from_name("cuda"), TargetKind::Nvidia);
  EXPECT_EQ(gpu_kind_from_name("hip"), TargetKind::Amd);
  EXPECT_EQ(gpu_kind_from_name("rocm"), TargetKind::Amd);
  std::string message = error_of([] { gpu_kind_from_name("metal"); });
  EXPECT_NE(message.find("'metal'"), std::string::npos) << message;
}

TEST(HipDevice, FailsClearlyWithoutAnAmdGpuOrOpensOne) {
  bool have_library =
      library_loads("libamdhip64.so.6") || library_loads("libamdhip64.so.5") || library_loads("libamdhip64.so");
  std::unique_ptr<Device> device;
  std::string message = error_of([&] { device = open_gpu_device(TargetKind::Amd, 0); });
  if (device) {
    branch("AMD GPU present: " + device->name());
    Target target = device->target();
    EXPECT_EQ(target.kind, TargetKind::Amd);
    EXPECT_TRUE(target.arch.starts_with("gfx")) << target.id();
    EXPECT_GT(device->multiprocessor_count(), 0);
    EXPECT_NE(device->name().find(target.id()), std::string::npos) << device->name();
    return;
  }
  if (!have_library) {
    branch("no libamdhip64: the message must name the library and every name tried");
    for (const char* name : {"libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"})
      EXPECT_NE(message.find(name), std::string::npos) << message;
    return;
  }
  branch("libamdhip64 without an AMD GPU: the message must say there is none");
  EXPECT_TRUE(message.starts_with("no AMD GPU: ")) << message;
  EXPECT_NE(message.find("libamdhip64"), std::string::npos) << message;
  // Asking again must fail the same way (nothing half-initialized left behind).
  EXPECT_EQ(error_of([] { HipDevice again(0); }), message);
}

constexpr const char* kCudaKernels = R"(
extern "C" __global__ void axpy(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out,
                                int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2.0f * a[i] + b[i];
}
extern "C" __global__ void block_sum(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float partial[256];
  partial[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
}
)";

/// Device memory that frees itself.
struct DeviceBuffer {
  Device& device;
  void* pointer;
  DeviceBuffer(Device& d, size_t bytes) : device(d), pointer(d.alloc(bytes)) {}
  ~DeviceBuffer() { device.free(pointer); }
};

TEST(CudaDevice, FailsClearlyWithoutLibcudaOrRunsAKernel) {
  bool have_libcuda = library_loads("libcuda.so.1") || library_loads("libcuda.so");
  std::unique_ptr<Device> device;
  std::string message = error_of([&] { device = open_gpu_device(TargetKind::Nvidia, 0); });
  if (!have_libcuda) {
    branch("no libcuda: the message must name the CUDA driver and every name tried");
    ASSERT_FALSE(device);
    EXPECT_NE(message.find("libcuda"), std::string::npos) << message;
    EXPECT_NE(message.find("libcuda.so.1"), std::string::npos) << message;
    EXPECT_NE(message.find("libcuda.so:"), std::string::npos) << message;
    return;
  }
  if (!device && message.find("CUDA_ERROR_NO_DEVICE") != std::string::npos)
    GTEST_SKIP() << "libcuda present but no NVIDIA GPU: " << message;
  ASSERT_TRUE(device) << message;
  branch("NVIDIA GPU present: " + device->name() + "; launching an NVRTC-compiled kernel");

  Target target = device->target();
  ASSERT_EQ(target.kind, TargetKind::Nvidia);
  EXPECT_TRUE(target.arch.starts_with("sm_")) << target.id();
  EXPECT_NE(device->name().find(target.id()), std::string::npos) << device->name();
  EXPECT_GT(device->multiprocessor_count(), 0);

  std::unique_ptr<Compiler> nvrtc = make_nvrtc_compiler();
  CompiledCode code = nvrtc->compile(kCudaKernels, "gpu_device_test", target, {});
  std::unique_ptr<Module> module = device->load_for_target(target, code.binary, {{"axpy", false}, {"block_sum", true}});

  // axpy over n elements, a grid that does not divide n.
  const int n = 1000;
  std::vector<float> a(n), b(n), out(n, -1.0f);
  std::iota(a.begin(), a.end(), 0.0f);
  for (int i = 0; i < n; ++i) b[i] = 0.5f * float(i % 7);
  DeviceBuffer da(*device, n * sizeof(float)), db(*device, n * sizeof(float)), dout(*device, n * sizeof(float));
  device->copy_to_device(da.pointer, a.data(), n * sizeof(float));
  device->copy_to_device(db.pointer, b.data(), n * sizeof(float));
  int count = n;
  void* args[] = {&da.pointer, &db.pointer, &dout.pointer, &count};
  module->launch("axpy", Dim3{(n + 127) / 128, 1, 1}, Dim3{128, 1, 1}, 0, args, nullptr);
  device->synchronize(nullptr);
  device->copy_to_host(out.data(), dout.pointer, n * sizeof(float));
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], 2.0f * a[i] + b[i]) << "element " << i;

  // block_sum: __shared__ and __syncthreads; 4 blocks of 256 ones and twos.
  std::vector<float> ones(1024);
  for (int i = 0; i < 1024; ++i) ones[i] = float(1 + i / 256);
  DeviceBuffer din(*device, 1024 * sizeof(float)), dsum(*device, 4 * sizeof(float));
  device->copy_to_device(din.pointer, ones.data(), 1024 * sizeof(float));
  void* sum_args[] = {&din.pointer, &dsum.pointer};
  module->launch("block_sum", Dim3{4, 1, 1}, Dim3{256, 1, 1}, 0, sum_args, nullptr);
  device->synchronize(nullptr);
  std::vector<float> sums(4);
  device->copy_to_host(sums.data(), dsum.pointer, 4 * sizeof(float));
  EXPECT_EQ(sums, (std::vector<float>{256, 512, 768, 1024}));

  // The driver's facts about the loaded kernels.
  std::vector<GpuKernelFacts> facts = module->kernel_facts();
  ASSERT_EQ(facts.size(), 2u);
  EXPECT_EQ(facts[0].name, "axpy");
  EXPECT_GT(facts[0].registers, 0);
  EXPECT_GE(facts[0].max_threads_per_block, 256);
  EXPECT_EQ(facts[1].name, "block_sum");
  EXPECT_EQ(facts[1].static_shared_bytes, 256 * int(sizeof(float)));

  // Refusals, each naming what is wrong.
  std::string unknown = error_of([&] { module->launch("no_such_kernel", Dim3{}, Dim3{}, 0, args, nullptr); });
  EXPECT_NE(unknown.find("cuModuleGetFunction failed for kernel 'no_such_kernel': CUDA_ERROR_NOT_FOUND"),
            std::string::npos)
      << unknown;
  std::string too_big = error_of([&] { module->launch("axpy", Dim3{1, 1, 1}, Dim3{4096, 1, 1}, 0, args, nullptr); });
  EXPECT_NE(too_big.find("cuLaunchKernel failed for kernel 'axpy': CUDA_ERROR_INVALID_VALUE"), std::string::npos)
      << too_big;
  Target other = parse_target(target.arch == "sm_80" ? "sm_90" : "sm_80");
  std::string wrong_sm = error_of([&] { device->load_for_target(other, code.binary, {}); });
  EXPECT_NE(wrong_sm.find("compiled for " + other.id() + " cannot run on"), std::string::npos) << wrong_sm;
  std::vector<char> not_cubin = {'h', 'e', 'l', 'l', 'o'};
  std::string garbage = error_of([&] { device->load(not_cubin, {}); });
  EXPECT_NE(garbage.find("must be a cubin"), std::string::npos) << garbage;
  // The device still works after the refusals (no sticky error).
  module->launch("axpy", Dim3{(n + 127) / 128, 1, 1}, Dim3{128, 1, 1}, 0, args, nullptr);
  device->synchronize(nullptr);
}

}  // namespace
}  // namespace hi
