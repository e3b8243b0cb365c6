// Copy ceilings at the benchmark's case sizes, timed as do_bench does (256 MB memset before each call): what any
// kernel that reads and writes a case's bytes can reach under that method. bf16 softmax 32768x1024 moves 64 MiB each
// way, LayerNorm/RMSNorm 16384x4096 bf16 128 MiB; copy_GBps comes from a 1 GiB copy. Prints each size's best
// variant as a percentage of the 1 GiB copy. A harness (not a test). On a CUDA machine:
//     nvcc -O3 -arch=sm_90 -std=c++17 bench/shapes/copy.cu -o /tmp/copy && /tmp/copy
#include <cstdio>
#include <vector>

#include <cuda_runtime.h>

#include "timing.h"

static float4 *src, *dst;
static long n;  // float4s per copy
static int sms;

/// One float4 per thread over a full grid, as PyTorch's copy kernel launches.
__global__ void copy_full(const float4* __restrict__ a, float4* __restrict__ b, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) b[i] = a[i];
}

/// A grid of `per_sm` 256-thread blocks per SM striding over the buffer, as hipinductor's pointwise kernels do.
__global__ void copy_strided(const float4* __restrict__ a, float4* __restrict__ b, long n) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) b[i] = a[i];
}

static void run_full() { copy_full<<<(n + 255) / 256, 256>>>(src, dst, n); }
static void run_strided() { copy_strided<<<sms * 8, 256>>>(src, dst, n); }
static void run_memcpy() { cudaMemcpyAsync(dst, src, n * 16, cudaMemcpyDeviceToDevice); }

int main() {
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  sms = prop.multiProcessorCount;
  printf("%s, %d SMs, L2 %d MB\n", prop.name, sms, prop.l2CacheSize >> 20);
  cudaMalloc(&src, 1L << 30);
  cudaMalloc(&dst, 1L << 30);
  cudaMemset(src, 0, 1L << 30);
  double big_gbps = 0;
  for (long mib : {1024L, 128L, 64L}) {
    n = (mib << 20) / 16;
    std::vector<Variant> vs = {{"copy, full grid", run_full}, {"copy, strided grid", run_strided},
                               {"cudaMemcpyAsync", run_memcpy}};
    printf("-- %ld MiB each way\n", mib);
    time_variants(vs);
    float best = 1e9;
    for (auto& v : vs) best = std::min(best, v.ms[v.ms.size() / 2]);
    const double gbps = 2.0 * (mib << 20) / (best * 1e-3) / 1e9;
    if (mib == 1024) big_gbps = gbps;
    printf("best median %.4f ms: %.0f GB/s, %.1f %% of the 1 GiB copy\n", best, gbps, 100 * gbps / big_gbps);
  }
  return 0;
}
