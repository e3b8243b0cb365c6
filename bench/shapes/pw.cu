// Pointwise variants: relu(a + b) over 64M f32 and tanh-gelu over 64M bf16, timed as do_bench does.
// A harness for choosing kernel shapes (not a test): hand-written forms of candidate kernels, each timed with CUDA
// events after a 256 MB memset, as triton.testing.do_bench times a case; rounds interleave the variants; medians,
// 10th percentiles and minima in ms. On a CUDA machine:
//     nvcc -O3 -arch=sm_90 -std=c++17 bench/shapes/pw.cu -o /tmp/pw && /tmp/pw
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>

#include "timing.h"
#include <cuda_bf16.h>

constexpr int N = 1 << 26;
float *a, *b, *o;
__nv_bfloat16 *ga, *go;

template <int ST> __device__ __forceinline__ void st4(float* p, float4 v) {
  if (ST == 0) *(float4*)p = v;
  else __stcs((float4*)p, v);
}
__device__ __forceinline__ float4 relu_add(float4 x, float4 y) {
  return {fmaxf(x.x + y.x, 0.f), fmaxf(x.y + y.y, 0.f), fmaxf(x.z + y.z, 0.f), fmaxf(x.w + y.w, 0.f)};
}
// E float4 groups per thread, B threads, grid-stride loop (LOOP) or exactly one pass.
template <int B, int E, int ST, int LOOP>
__global__ void __launch_bounds__(B) addrelu(const float* __restrict__ x, const float* __restrict__ y, float* __restrict__ z) {
  const int groups = N / 4;
  for (int g0 = blockIdx.x * (B * E) + threadIdx.x; g0 < groups; g0 += gridDim.x * (B * E)) {
    float4 u[E], v[E];
#pragma unroll
    for (int e = 0; e < E; ++e) { u[e] = __ldg((const float4*)x + g0 + e * B); v[e] = __ldg((const float4*)y + g0 + e * B); }
#pragma unroll
    for (int e = 0; e < E; ++e) st4<ST>(z + 4 * (g0 + e * B), relu_add(u[e], v[e]));
    if (!LOOP) break;
  }
}
__device__ __forceinline__ float gelu(float x) {
  float inner = 0.7978845608028654f * (x + 0.044715f * x * x * x);
  return 0.5f * x * (1.f + tanhf(inner));
}
template <int B, int E>
__global__ void __launch_bounds__(B) gelu_k(const uint4* __restrict__ x, uint4* __restrict__ z) {
  const int groups = N / 8;
  for (int g0 = blockIdx.x * (B * E) + threadIdx.x; g0 < groups; g0 += gridDim.x * (B * E)) {
    uint4 u[E];
#pragma unroll
    for (int e = 0; e < E; ++e) u[e] = __ldg(x + g0 + e * B);
#pragma unroll
    for (int e = 0; e < E; ++e) {
      __nv_bfloat162* h = (__nv_bfloat162*)&u[e];
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        float2 f = __bfloat1622float2(h[k]);
        h[k] = __floats2bfloat162_rn(gelu(f.x), gelu(f.y));
      }
      z[g0 + e * B] = u[e];
    }
  }
}
__global__ void copyk(const float4* __restrict__ p, float4* __restrict__ q, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) q[i] = p[i];
}

template <int B, int E, int ST, int LOOP> void run_ar() { addrelu<B, E, ST, LOOP><<<N / 4 / (B * E), B>>>(a, b, o); }
template <int B, int E> void run_gelu() { gelu_k<B, E><<<N / 8 / (B * E), B>>>((const uint4*)ga, (uint4*)go); }
void copy_ar() { cudaMemcpyAsync(o, a, (size_t)N * 4 * 3 / 2, cudaMemcpyDeviceToDevice); }
void copy_gelu() { cudaMemcpyAsync(go, ga, (size_t)N * 2, cudaMemcpyDeviceToDevice); }

int main() {
  cudaMalloc(&a, (size_t)N * 4 * 2); cudaMalloc(&b, (size_t)N * 4); cudaMalloc(&o, (size_t)N * 4 * 2);
  cudaMalloc(&ga, (size_t)N * 2); cudaMalloc(&go, (size_t)N * 2);
  cudaMemset(a, 0, (size_t)N * 8); cudaMemset(b, 0, (size_t)N * 4); cudaMemset(ga, 0, (size_t)N * 2);
  std::vector<Variant> vs = {
      {"ar copy same bytes", copy_ar},
      {"ar B256 E2 loop (earlier form)", run_ar<256, 2, 0, 1>},
      {"ar B128 E2 once", run_ar<128, 2, 0, 0>},
      {"ar B256 E2 once", run_ar<256, 2, 0, 0>},
      {"ar B512 E2 once", run_ar<512, 2, 0, 0>},
      {"ar B128 E4 once", run_ar<128, 4, 0, 0>},
      {"ar B256 E1 once", run_ar<256, 1, 0, 0>},
      {"ar B256 E2 cs", run_ar<256, 2, 1, 0>},
      {"ar B128 E2 cs", run_ar<128, 2, 1, 0>},
      {"gelu copy same bytes", copy_gelu},
      {"gelu B256 E2 (earlier form)", run_gelu<256, 2>},
      {"gelu B128 E2", run_gelu<128, 2>},
      {"gelu B256 E4", run_gelu<256, 4>},
      {"gelu B128 E4", run_gelu<128, 4>},
      {"gelu B256 E1", run_gelu<256, 1>},
      {"gelu B512 E2", run_gelu<512, 2>},
  };
  time_variants(vs);
}
