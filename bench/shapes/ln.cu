// LayerNorm bf16 16384x4096 variants: two block reductions (as emitted) vs one, timed as do_bench does.
// A harness for choosing kernel shapes (not a test): hand-written forms of candidate kernels, each timed with CUDA
// events after a 256 MB memset, as triton.testing.do_bench times a case; rounds interleave the variants; medians,
// 10th percentiles and minima in ms. On a CUDA machine:
//     nvcc -O3 -arch=sm_90 -std=c++17 bench/shapes/ln.cu -o /tmp/ln && /tmp/ln
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>

#include "timing.h"
#include <cuda_bf16.h>

constexpr int R = 16384, C = 4096;
__nv_bfloat16 *x, *w, *b, *y;

template <int T, class F> __device__ __forceinline__ float block_sum(float v, float* sm, F) {
  for (int m = 16; m; m /= 2) v += __shfl_xor_sync(~0u, v, m);
  if (threadIdx.x % 32 == 0) sm[threadIdx.x / 32] = v;
  __syncthreads();
  v = 0;
#pragma unroll
  for (int i = 0; i < T / 32; ++i) v += sm[i];
  return v;
}
struct P2 { float s, q; };
template <int T> __device__ __forceinline__ P2 block_sum2(P2 v, float2* sm) {
  for (int m = 16; m; m /= 2) { v.s += __shfl_xor_sync(~0u, v.s, m); v.q += __shfl_xor_sync(~0u, v.q, m); }
  if (threadIdx.x % 32 == 0) sm[threadIdx.x / 32] = make_float2(v.s, v.q);
  __syncthreads();
  P2 r{0, 0};
#pragma unroll
  for (int i = 0; i < T / 32; ++i) { r.s += sm[i].x; r.q += sm[i].y; }
  return r;
}
__device__ __forceinline__ unsigned long long pol_first() {
  unsigned long long pol;
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  return pol;
}
// HINT 1: x read evict-first (as the row-sum kernels read), y stored streaming (st.global.cs).
template <int HINT = 0>
__device__ __forceinline__ void load8(const __nv_bfloat16* p, float* f) {
  uint4 u;
  if (HINT)
    asm volatile("ld.global.L1::evict_first.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                 : "=r"(u.x), "=r"(u.y), "=r"(u.z), "=r"(u.w)
                 : "l"(p), "l"(pol_first()));
  else
    u = *(const uint4*)p;
  __nv_bfloat162* h = (__nv_bfloat162*)&u;
#pragma unroll
  for (int k = 0; k < 4; ++k) { float2 t = __bfloat1622float2(h[k]); f[2 * k] = t.x; f[2 * k + 1] = t.y; }
}
template <int HINT = 0>
__device__ __forceinline__ void store8(__nv_bfloat16* p, const float* f) {
  uint4 u;
  __nv_bfloat162* h = (__nv_bfloat162*)&u;
#pragma unroll
  for (int k = 0; k < 4; ++k) h[k] = __floats2bfloat162_rn(f[2 * k], f[2 * k + 1]);
  if (HINT)
    __stcs((uint4*)p, u);
  else
    *(uint4*)p = u;
}
// MODE 0: two reductions (mean, then centred squares); 1: one reduction of (sum, sum of squares);
// 2: one reduction of (sum, M2 about the thread's own mean) combined by Chan's formula (equal counts).
template <int T, int MODE, int HINT = 0>
__global__ void __launch_bounds__(T) ln(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w,
                                        const __nv_bfloat16* __restrict__ b, __nv_bfloat16* __restrict__ y) {
  constexpr int V = C / T, G = V / 8;
  __shared__ float sm0[T / 32], sm1[T / 32];
  __shared__ float2 sm2[T / 32];
  for (int row = blockIdx.x; row < R; row += gridDim.x) {
    float v[V];
#pragma unroll
    for (int e = 0; e < G; ++e) load8<HINT>(x + (size_t)row * C + (e * T + threadIdx.x) * 8, v + 8 * e);
    float mean, rstd;
    if (MODE == 0) {
      float s = 0;
#pragma unroll
      for (int q = 0; q < V; ++q) s += v[q];
      mean = block_sum<T>(s, sm0, 0) / C;
      float s2 = 0;
#pragma unroll
      for (int q = 0; q < V; ++q) { v[q] -= mean; s2 += v[q] * v[q]; }
      rstd = rsqrtf(block_sum<T>(s2, sm1, 0) / C + 1e-5f);
    } else if (MODE == 1) {
      P2 p{0, 0};
#pragma unroll
      for (int q = 0; q < V; ++q) { p.s += v[q]; p.q += v[q] * v[q]; }
      p = block_sum2<T>(p, sm2);
      mean = p.s / C;
      rstd = rsqrtf(fmaxf(p.q / C - mean * mean, 0.f) + 1e-5f);
#pragma unroll
      for (int q = 0; q < V; ++q) v[q] -= mean;
    } else {
      float s = 0;
#pragma unroll
      for (int q = 0; q < V; ++q) s += v[q];
      float m = s / V, m2 = 0;
#pragma unroll
      for (int q = 0; q < V; ++q) { float d = v[q] - m; m2 += d * d; }
      // Butterfly with equal counts n: mean' = (ma + mb)/2, M2' = M2a + M2b + (mb - ma)^2 * n/2.
      float n = V;
      for (int k = 1; k < 32; k *= 2) {
        float mo = __shfl_xor_sync(~0u, m, k), m2o = __shfl_xor_sync(~0u, m2, k);
        float d = mo - m;
        m2 = m2 + m2o + d * d * (n * 0.5f);
        m = 0.5f * (m + mo);
        n *= 2;
      }
      if (threadIdx.x % 32 == 0) sm2[threadIdx.x / 32] = make_float2(m, m2);
      __syncthreads();
      float M = sm2[0].x, M2 = sm2[0].y;
      n = V * 32;
#pragma unroll
      for (int i = 1; i < T / 32; ++i) {
        float d = sm2[i].x - M;
        M2 = M2 + sm2[i].y + d * d * (n * i / (i + 1));  // n*i items with mean M, n with mean sm2[i].x
        M = M + d / (i + 1);
      }
      mean = M;
      rstd = rsqrtf(M2 / C + 1e-5f);
#pragma unroll
      for (int q = 0; q < V; ++q) v[q] -= mean;
    }
#pragma unroll
    for (int e = 0; e < G; ++e) {
      float wf[8], bf[8], o[8];
      load8(w + (e * T + threadIdx.x) * 8, wf);
      load8(b + (e * T + threadIdx.x) * 8, bf);
#pragma unroll
      for (int k = 0; k < 8; ++k) o[k] = v[8 * e + k] * rstd * wf[k] + bf[k];
      store8<HINT>(y + (size_t)row * C + (e * T + threadIdx.x) * 8, o);
    }
    __syncthreads();
  }
}

template <int T, int MODE, int GRID, int HINT = 0>
void run_ln() {
  ln<T, MODE, HINT><<<GRID, T>>>(x, w, b, y);
}
void copy_ln() { cudaMemcpyAsync(y, x, (size_t)R * C * 2, cudaMemcpyDeviceToDevice); }

int main() {
  cudaMalloc(&x, (size_t)R * C * 2); cudaMalloc(&y, (size_t)R * C * 2);
  cudaMalloc(&w, C * 2); cudaMalloc(&b, C * 2);
  {
    std::vector<__nv_bfloat16> h((size_t)R * C);
    for (size_t i = 0; i < h.size(); ++i) h[i] = __float2bfloat16((float)((i * 2654435761u) % 1000) / 250.0f + 3.0f);
    cudaMemcpy(x, h.data(), h.size() * 2, cudaMemcpyHostToDevice);
    std::vector<__nv_bfloat16> hw(C);
    for (int i = 0; i < C; ++i) hw[i] = __float2bfloat16(1.0f + i % 7 * 0.1f);
    cudaMemcpy(w, hw.data(), C * 2, cudaMemcpyHostToDevice);
    cudaMemcpy(b, hw.data(), C * 2, cudaMemcpyHostToDevice);
  }
  std::vector<Variant> vs = {
      {"copy same bytes", copy_ln},
      {"emitted T256 2red g6336", run_ln<256, 0, 6336>},
      {"T256 2red whole grid", run_ln<256, 0, R>},
      {"T256 2red g6336 ef+cs", run_ln<256, 0, 6336, 1>},
      {"T256 2red whole ef+cs", run_ln<256, 0, R, 1>},
      {"T512 2red whole ef+cs", run_ln<512, 0, R, 1>},
      {"T256 sumsq g6336", run_ln<256, 1, 6336>},
      {"T256 chan g6336", run_ln<256, 2, 6336>},
      {"T256 chan whole", run_ln<256, 2, R>},
      {"T512 2red g3168", run_ln<512, 0, 3168>},
      {"T512 chan g3168", run_ln<512, 2, 3168>},
      {"T128 2red g12672", run_ln<128, 0, 12672>},
      {"T128 chan g12672", run_ln<128, 2, 12672>},
  };
  // Agreement of the single-reduction forms with the two-reduction one.
  std::vector<__nv_bfloat16> want((size_t)R * C), got((size_t)R * C);
  run_ln<256, 0, 6336>();
  cudaMemcpy(want.data(), y, want.size() * 2, cudaMemcpyDeviceToHost);
  for (size_t k = 2; k < vs.size(); ++k) {
    vs[k].run();
    cudaMemcpy(got.data(), y, got.size() * 2, cudaMemcpyDeviceToHost);
    double err = 0;
    for (size_t i = 0; i < got.size(); i += 97) err = std::max(err, (double)fabsf(__bfloat162float(got[i]) - __bfloat162float(want[i])));
    printf("check %-22s max diff %.3g\n", vs[k].name, err);
  }
  time_variants(vs);
}
