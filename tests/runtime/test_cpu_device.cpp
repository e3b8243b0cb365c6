// The cpu device, through the real path: source = "#define HI_WARP_SIZE N" + the embedded cpu prelude + kernel +
// the trampoline the code generator would emit, compiled by the host compiler, loaded and launched.
#include <gtest/gtest.h>

#include <map>
#include <numeric>
#include <string_view>

#include "runtime/compiler.h"
#include "runtime/cpu_device.h"

namespace hi {
std::string_view embedded_prelude(std::string_view name);
}

namespace hi {
namespace {

constexpr const char* kKernels = R"(
// Sum of in[0..n) per block (grid-stride), shuffles within warps, then across warps through __shared__.
extern "C" __global__ void __launch_bounds__(1024) block_sum(const float* __restrict__ in, float* __restrict__ out,
                                                             int n) {
  __shared__ float warp_sums[1024 / HI_WARP_SIZE];
  unsigned threads = blockDim.x * blockDim.y * blockDim.z;
  unsigned tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  float v = 0.0f;
  for (unsigned i = blockIdx.x * threads + tid; i < (unsigned)n; i += gridDim.x * threads) v += in[i];
  for (int m = HI_WARP_SIZE / 2; m > 0; m /= 2) v += hi_shfl_xor(v, m);
  unsigned warp = tid / HI_WARP_SIZE, lane = tid % HI_WARP_SIZE;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    unsigned warps = (threads + HI_WARP_SIZE - 1) / HI_WARP_SIZE;
    float s = lane < warps ? warp_sums[lane] : 0.0f;
    for (int m = HI_WARP_SIZE / 2; m > 0; m /= 2) s += hi_shfl_xor(s, m);
    if (lane == 0) out[blockIdx.x] = s;
  }
}

// Butterfly of every supported shuffle type: out[tid] = value of lane (lane ^ mask) for each type.
extern "C" __global__ void shuffle_types(long long* out, int mask) {
  unsigned tid = threadIdx.x;
  out[6 * tid + 0] = (long long)hi_shfl_xor((float)tid, mask);
  out[6 * tid + 1] = (long long)hi_shfl_xor((double)tid, mask);
  out[6 * tid + 2] = hi_shfl_xor((int)tid, mask);
  out[6 * tid + 3] = hi_shfl_xor((unsigned)tid, mask);
  out[6 * tid + 4] = hi_shfl_xor((long long)tid - 1000000000000LL, mask) + 1000000000000LL;
  out[6 * tid + 5] = (long long)hi_shfl_xor((unsigned long long)tid, mask);
}

// Pointwise, no barrier: out = 2 * a + b over a 3-D launch, and where each element was computed.
extern "C" __global__ void axpy_where(const float* __restrict__ a, const float* __restrict__ b,
                                      float* __restrict__ out, unsigned* __restrict__ where, int n) {
  unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  unsigned thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  unsigned i = block * (blockDim.x * blockDim.y * blockDim.z) + thread;
  if (i >= (unsigned)n) return;
  out[i] = 2.0f * a[i] + b[i];
  where[i] = (blockIdx.z << 24) | (blockIdx.y << 20) | (blockIdx.x << 16) | (threadIdx.z << 12) |
             (threadIdx.y << 8) | threadIdx.x;
}

// Thread 0 waits at a barrier the others never reach: a deadlock on any GPU.
extern "C" __global__ void divergent_barrier(float* out) {
  if (threadIdx.x == 0) __syncthreads();
  out[threadIdx.x] = 1.0f;
}

// Uses dynamic shared memory: reverses each block's slice through it.
extern "C" __global__ void reverse_in_block(const int* in, int* out) {
  int* staging = HI_DYNAMIC_SHARED(int);
  unsigned base = blockIdx.x * blockDim.x;
  staging[threadIdx.x] = in[base + threadIdx.x];
  __syncthreads();
  out[base + threadIdx.x] = staging[blockDim.x - 1 - threadIdx.x];
}

extern "C" void block_sum__hi_cpu(void** args) {
  block_sum(*static_cast<const float* const*>(args[0]), *static_cast<float* const*>(args[1]),
            *static_cast<const int*>(args[2]));
}
extern "C" void shuffle_types__hi_cpu(void** args) {
  shuffle_types(*static_cast<long long* const*>(args[0]), *static_cast<const int*>(args[1]));
}
extern "C" void axpy_where__hi_cpu(void** args) {
  axpy_where(*static_cast<const float* const*>(args[0]), *static_cast<const float* const*>(args[1]),
             *static_cast<float* const*>(args[2]), *static_cast<unsigned* const*>(args[3]),
             *static_cast<const int*>(args[4]));
}
extern "C" void divergent_barrier__hi_cpu(void** args) { divergent_barrier(*static_cast<float* const*>(args[0])); }
extern "C" void reverse_in_block__hi_cpu(void** args) {
  reverse_in_block(*static_cast<const int* const*>(args[0]), *static_cast<int* const*>(args[1]));
}
)";

// One compile per warp width for the whole test program.
const std::vector<char>& module_binary(int warp_size) {
  static std::map<int, std::vector<char>> binaries;
  auto found = binaries.find(warp_size);
  if (found != binaries.end()) return found->second;
  std::string_view prelude = embedded_prelude("cpu.h");
  EXPECT_FALSE(prelude.empty()) << "cpu.h is not embedded";
  std::string source = "#define HI_WARP_SIZE " + std::to_string(warp_size) + "\n" + std::string(prelude) + kKernels;
  Target target = parse_target(warp_size == 64 ? "cpu-w64" : "cpu");
  CompiledCode code = compiler_for(target)->compile(source, "cpu_device_test_kernels", target, {});
  std::cout << "[ info ] cpu test module (warp " << warp_size << ") compiled in " << code.compile_ms << " ms\n";
  return binaries[warp_size] = std::move(code.binary);
}

class CpuDeviceTest : public ::testing::TestWithParam<int> {
 protected:
  // Four workers even on a two-core machine, so blocks really run concurrently on different OS threads.
  CpuDevice device{parse_target(GetParam() == 64 ? "cpu-w64" : "cpu"), 4};
  std::unique_ptr<CpuModule> module =
      device.load_cpu_module(module_binary(GetParam()), {{"block_sum", true}, {"axpy_where", false}});
};

TEST_P(CpuDeviceTest, BlockReductionWithSharedMemoryBarriersAndShuffles) {
  const int n = 10007;
  std::vector<float> in(n);
  for (int i = 0; i < n; ++i) in[i] = float(i % 97);  // small integers: float sums are exact
  for (Dim3 block : {Dim3{64}, Dim3{128}, Dim3{256}, Dim3{1024}, Dim3{64, 4}, Dim3{32, 2, 2}}) {
    for (unsigned grid : {1u, 7u}) {
      std::vector<float> out(grid, -1.0f);
      const float* in_pointer = in.data();
      float* out_pointer = out.data();
      int count = n;
      void* args[] = {&in_pointer, &out_pointer, &count};
      module->launch("block_sum", Dim3{grid}, block, args, /*needs_sync=*/true);
      // Reference with the same grid-stride partition.
      unsigned threads = block.x * block.y * block.z;
      for (unsigned b = 0; b < grid; ++b) {
        double expected = 0;
        for (unsigned start = b * threads; start < unsigned(n); start += grid * threads)
          for (unsigned i = start; i < std::min<unsigned>(start + threads, n); ++i) expected += in[i];
        EXPECT_EQ(out[b], float(expected)) << "block " << b << " of " << grid << ", block shape " << block.x << "x"
                                           << block.y << "x" << block.z;
      }
    }
  }
}

TEST_P(CpuDeviceTest, ShuffleXorExchangesEveryType) {
  const unsigned threads = 128;
  for (int mask : {1, 2, GetParam() / 2, GetParam() - 1}) {
    std::vector<long long> out(6 * threads, -1);
    long long* out_pointer = out.data();
    void* args[] = {&out_pointer, &mask};
    module->launch("shuffle_types", Dim3{}, Dim3{threads}, 0, args, nullptr);  // unlisted: needs_sync by default
    for (unsigned tid = 0; tid < threads; ++tid) {
      unsigned warp_base = tid / GetParam() * GetParam();
      long long expected = warp_base + ((tid - warp_base) ^ unsigned(mask));
      for (int type = 0; type < 6; ++type)
        EXPECT_EQ(out[6 * tid + type], expected) << "thread " << tid << " type " << type << " mask " << mask;
    }
  }
}

TEST_P(CpuDeviceTest, PointwiseWithoutSyncCoversA3dLaunch) {
  Dim3 grid{3, 2, 2}, block{8, 4, 2};
  const int n = 3 * 2 * 2 * 8 * 4 * 2 - 5;  // last block partly idle
  std::vector<float> a(n), b(n), out(n, -1.0f);
  std::vector<unsigned> where(n, ~0u);
  std::iota(a.begin(), a.end(), 0.0f);
  std::iota(b.begin(), b.end(), 100.0f);
  const float* a_pointer = a.data();
  const float* b_pointer = b.data();
  float* out_pointer = out.data();
  unsigned* where_pointer = where.data();
  int count = n;
  void* args[] = {&a_pointer, &b_pointer, &out_pointer, &where_pointer, &count};
  module->launch("axpy_where", grid, block, 0, args, nullptr);  // listed with needs_sync = false: plain calls
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(out[i], 2.0f * a[i] + b[i]) << i;
    unsigned block_linear = unsigned(i) / 64, thread_linear = unsigned(i) % 64;
    unsigned expected = (block_linear / 6) << 24 | (block_linear / 3 % 2) << 20 | (block_linear % 3) << 16 |
                        (thread_linear / 32) << 12 | (thread_linear / 8 % 4) << 8 | (thread_linear % 8);
    ASSERT_EQ(where[i], expected) << i;
  }
}

TEST_P(CpuDeviceTest, DivergentBarrierIsAnErrorNotAHang) {
  std::vector<float> out(64, 0.0f);
  float* out_pointer = out.data();
  void* args[] = {&out_pointer};
  for (int attempt = 0; attempt < 2; ++attempt) {  // the device stays usable after the error
    try {
      module->launch("divergent_barrier", Dim3{2}, Dim3{64}, args, /*needs_sync=*/true);
      FAIL() << "a deadlocking kernel completed";
    } catch (const std::runtime_error& error) {
      std::string message = error.what();
      EXPECT_NE(message.find("divergent_barrier"), std::string::npos) << message;
      EXPECT_NE(message.find("deadlock"), std::string::npos) << message;
      EXPECT_NE(message.find("1 wait at __syncthreads()"), std::string::npos) << message;
    }
  }
  // Launched without needs_sync, the barrier itself is the error.
  try {
    module->launch("divergent_barrier", Dim3{1}, Dim3{64}, args, /*needs_sync=*/false);
    FAIL() << "a barrier ran without fibers";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("needs_sync"), std::string::npos) << error.what();
  }
  // Fibers abandoned mid-kernel are re-made: a correct kernel still runs on the same workers.
  std::vector<float> in(256, 1.0f), sums(1, 0.0f);
  const float* in_pointer = in.data();
  float* sums_pointer = sums.data();
  int count = 256;
  void* sum_args[] = {&in_pointer, &sums_pointer, &count};
  module->launch("block_sum", Dim3{1}, Dim3{256}, sum_args, /*needs_sync=*/true);
  EXPECT_EQ(sums[0], 256.0f);
}

TEST_P(CpuDeviceTest, DynamicSharedMemoryIsPerBlock) {
  const unsigned threads = 96, blocks = 9;
  std::vector<int> in(threads * blocks), out(threads * blocks, -1);
  std::iota(in.begin(), in.end(), 0);
  const int* in_pointer = in.data();
  int* out_pointer = out.data();
  void* args[] = {&in_pointer, &out_pointer};
  module->launch("reverse_in_block", Dim3{blocks}, Dim3{threads}, threads * sizeof(int), args, nullptr);
  for (unsigned b = 0; b < blocks; ++b)
    for (unsigned t = 0; t < threads; ++t) ASSERT_EQ(out[b * threads + t], int(b * threads + threads - 1 - t));
}

TEST_P(CpuDeviceTest, LaunchErrorsNameTheKernel) {
  void* args[] = {nullptr};
  EXPECT_THROW(module->launch("no_such_kernel", Dim3{}, Dim3{}, args, true), std::runtime_error);
  EXPECT_THROW(module->launch("block_sum", Dim3{0}, Dim3{32}, args, true), std::invalid_argument);
  EXPECT_THROW(module->launch("block_sum", Dim3{1}, Dim3{2048}, args, true), std::invalid_argument);
}

INSTANTIATE_TEST_SUITE_P(Warp, CpuDeviceTest, ::testing::Values(32, 64),
                         [](const auto& info) { return "w" + std::to_string(info.param); });

TEST(CpuDevice, RejectsAModuleCompiledForAnotherWarpWidth) {
  CpuDevice device(parse_target("cpu-w64"), 1);
  try {
    device.load(module_binary(32), {});
    FAIL() << "loaded a warp-32 module on a warp-64 device";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("HI_WARP_SIZE 32"), std::string::npos) << error.what();
  }
  std::vector<char> not_a_module = compiler_for(parse_target("cpu"))
                                       ->compile("extern \"C\" int f() { return 1; }", "plain", parse_target("cpu"), {})
                                       .binary;
  EXPECT_THROW(device.load(not_a_module, {}), std::runtime_error);
  EXPECT_THROW(CpuDevice(parse_target("gfx90a")), std::invalid_argument);
}

TEST(CpuDevice, MemoryAndName) {
  CpuDevice device(parse_target("cpu"), 2);
  EXPECT_EQ(device.name(), "cpu (warp 32, 2 worker threads)");
  EXPECT_EQ(device.target().id(), "cpu");
  float host[4] = {1, 2, 3, 4}, back[4] = {};
  void* memory = device.alloc(sizeof host);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(memory) % 64, 0u);
  device.copy_to_device(memory, host, sizeof host);
  device.copy_to_host(back, memory, sizeof back);
  EXPECT_EQ(std::vector<float>(back, back + 4), std::vector<float>(host, host + 4));
  device.free(memory);
}

}  // namespace
}  // namespace hi
