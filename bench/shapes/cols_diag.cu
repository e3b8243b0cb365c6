// Why column-sum stage 1 trails the row sum over the same bytes (x[16384,4096] f32), and single-kernel column sums.
// A harness (not a test), timed as do_bench times a case (timing.h: 256 MB memset before each call).
//   - rowsumK<K>: the emitted row-sum shape with K rows per block (K = 1 is the reference): does more work per
//     block, with more loads in flight, slow a read stream down?
//   - rowsum_persist<G>: G resident blocks, block b summing rows b, b + G, ...: does a persistent grid?
//   - fullrow<K, SH>: whole grid, a block of 512 threads sums K consecutive whole rows (2 float4 per thread per row,
//     all 2K loads at once) into a 16 KB partial, stored plainly (SH 0) or with an L2 evict-last hint (SH 1) so the
//     partials stay in L2 for stage 2 while the input streams through with evict-first.
//   - onegrid<NB, K>: one persistent kernel of NB resident blocks: tiles of K whole rows into NB partials, a grid
//     barrier (all blocks resident), then each block sums its 4096 / NB columns over the NB partials in partial
//     order (deterministic).
//     nvcc -O3 -arch=sm_90 -std=c++17 bench/shapes/cols_diag.cu -o /tmp/cd && /tmp/cd
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "timing.h"
#include "col_stage2.h"

constexpr int R = 16384, C = 4096;

__device__ __forceinline__ unsigned long long policy_first() {
  unsigned long long pol;
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  return pol;
}
__device__ __forceinline__ unsigned long long policy_last() {
  unsigned long long pol;
  asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
  return pol;
}
__device__ __forceinline__ float4 load_first(const float* p) {
  float4 r;
  asm volatile("ld.global.L1::evict_first.L2::cache_hint.v4.f32 {%0, %1, %2, %3}, [%4], %5;"
               : "=f"(r.x), "=f"(r.y), "=f"(r.z), "=f"(r.w) : "l"(p), "l"(policy_first()));
  return r;
}
template <int SH> __device__ __forceinline__ void store4(float* p, float4 v) {
  if (SH == 0) {
    *(float4*)p = v;
  } else {
    asm volatile("st.global.L2::cache_hint.v4.f32 [%0], {%1, %2, %3, %4}, %5;" ::"l"(p), "f"(v.x), "f"(v.y),
                 "f"(v.z), "f"(v.w), "l"(policy_last()));
  }
}
__device__ __forceinline__ void add4(float4& a, float4 v) { a.x += v.x; a.y += v.y; a.z += v.z; a.w += v.w; }
__device__ __forceinline__ float hsum(float4 v) { return v.x + v.y + v.z + v.w; }

// The 2K float4 loads of K whole rows from p (512 threads: columns t * 4 and t * 4 + 2048), all issued at once.
template <int K> __device__ __forceinline__ void load_rows(const float* p, float4 (&v)[2 * K]) {
#pragma unroll
  for (int r = 0; r < K; ++r) {
    v[2 * r] = load_first(p + (size_t)r * C);
    v[2 * r + 1] = load_first(p + (size_t)r * C + 2048);
  }
}

// Sum of a across the 512 threads, valid in thread 0.
__device__ __forceinline__ float block_sum512(float a, float* sm) {
  for (int m = 16; m; m /= 2) a += __shfl_xor_sync(~0u, a, m);
  if (threadIdx.x % 32 == 0) sm[threadIdx.x / 32] = a;
  __syncthreads();
  if (threadIdx.x < 32) {
    a = threadIdx.x < 16 ? sm[threadIdx.x] : 0.f;
    for (int m = 16; m; m /= 2) a += __shfl_xor_sync(~0u, a, m);
  }
  __syncthreads();
  return a;
}

template <int K>
__global__ void __launch_bounds__(512) rowsumK(const float* __restrict__ x, float* __restrict__ out) {
  __shared__ float sm[16];
  const float* p = x + (size_t)blockIdx.x * K * C + threadIdx.x * 4;
  float4 v[2 * K];
  load_rows<K>(p, v);
#pragma unroll
  for (int r = 0; r < K; ++r) {
    float a = block_sum512(hsum(v[2 * r]) + hsum(v[2 * r + 1]), sm);
    if (threadIdx.x == 0) out[blockIdx.x * K + r] = a;
  }
}

template <int G>
__global__ void __launch_bounds__(512) rowsum_persist(const float* __restrict__ x, float* __restrict__ out) {
  __shared__ float sm[16];
  for (int r = blockIdx.x; r < R; r += G) {
    const float* p = x + (size_t)r * C + threadIdx.x * 4;
    float4 u = load_first(p), w = load_first(p + 2048);
    float a = block_sum512(hsum(u) + hsum(w), sm);
    if (threadIdx.x == 0) out[r] = a;
  }
}

template <int K, int SH>
__global__ void __launch_bounds__(512) fullrow(const float* __restrict__ x, float* __restrict__ part) {
  const float* p = x + (size_t)blockIdx.x * K * C + threadIdx.x * 4;
  float4 v[2 * K];
  load_rows<K>(p, v);
  float4 a0 = {0, 0, 0, 0}, a1 = {0, 0, 0, 0};
#pragma unroll
  for (int r = 0; r < K; ++r) {
    add4(a0, v[2 * r]);
    add4(a1, v[2 * r + 1]);
  }
  store4<SH>(part + (size_t)blockIdx.x * C + threadIdx.x * 4, a0);
  store4<SH>(part + (size_t)blockIdx.x * C + threadIdx.x * 4 + 2048, a1);
}


// One persistent kernel: NB blocks (all resident), tiles of K whole rows, a grid barrier, then the final sums.
template <int NB, int K>
__global__ void __launch_bounds__(512) onegrid(const float* __restrict__ x, float* __restrict__ part,
                                               unsigned* barrier, unsigned epoch, float* __restrict__ out) {
  float4 a0 = {0, 0, 0, 0}, a1 = {0, 0, 0, 0};
  for (int t = blockIdx.x; t < R / K; t += NB) {
    const float* p = x + (size_t)t * K * C + threadIdx.x * 4;
    float4 v[2 * K];
    load_rows<K>(p, v);
#pragma unroll
    for (int r = 0; r < K; ++r) {
      add4(a0, v[2 * r]);
      add4(a1, v[2 * r + 1]);
    }
  }
  store4<1>(part + (size_t)blockIdx.x * C + threadIdx.x * 4, a0);
  store4<1>(part + (size_t)blockIdx.x * C + threadIdx.x * 4 + 2048, a1);
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) {
    atomicAdd(barrier, 1u);
    while (*(volatile unsigned*)barrier < epoch * NB) __nanosleep(32);
  }
  __syncthreads();
  __threadfence();
  // Block b: columns b * CW .. + CW (CW / 4 float4 groups) x (512 / (CW / 4)) slices over the NB partials.
  constexpr int CW = C / NB, G = CW / 4, SL = 512 / G;
  int g = threadIdx.x % G, sl = threadIdx.x / G;
  int c = blockIdx.x * CW + g * 4;
  float4 a = {0, 0, 0, 0};
#pragma unroll 4
  for (int r = sl; r < NB; r += SL) add4(a, __ldcg((const float4*)(part + (size_t)r * C + c)));
  __shared__ float4 sm[SL][G];
  sm[sl][g] = a;
  __syncthreads();
  if (sl == 0) {
    for (int y = 1; y < SL; ++y) add4(a, sm[y][g]);
    *(float4*)(out + c) = a;
  }
}

// Row sums with another block width: T threads, C / (4 T) float4 loads per thread, one row per block, whole grid.
template <int T>
__global__ void __launch_bounds__(T) rowsumT(const float* __restrict__ x, float* __restrict__ out) {
  constexpr int L = C / (4 * T);
  __shared__ float sm[32];
  const float* p = x + (size_t)blockIdx.x * C + threadIdx.x * 4;
  float4 v[L];
#pragma unroll
  for (int l = 0; l < L; ++l) v[l] = load_first(p + l * T * 4);
  float a = 0;
#pragma unroll
  for (int l = 0; l < L; ++l) a += hsum(v[l]);
  for (int m = 16; m; m /= 2) a += __shfl_xor_sync(~0u, a, m);
  if (threadIdx.x % 32 == 0) sm[threadIdx.x / 32] = a;
  __syncthreads();
  if (threadIdx.x < 32) {
    a = threadIdx.x < T / 32 ? sm[threadIdx.x] : 0.f;
    for (int m = 16; m; m /= 2) a += __shfl_xor_sync(~0u, a, m);
    if (threadIdx.x == 0) out[blockIdx.x] = a;
  }
}

// Persistent column partials with few loads in flight: G blocks of T threads (W = C / (4 T) float4 per thread per
// row), block b summing whole rows b, b + G, ...; D = 1 loads a row and adds it, D = 2 issues the next row's loads
// before adding the current one. Partial b per block.
template <int G, int T, int D>
__global__ void __launch_bounds__(T) colpersist(const float* __restrict__ x, float* __restrict__ part) {
  constexpr int W = C / (4 * T);
  float4 a[W], cur[W];
#pragma unroll
  for (int w = 0; w < W; ++w) a[w] = {0, 0, 0, 0};
  const float* p = x + threadIdx.x * 4;
  int r = blockIdx.x;
  if (D == 1) {
    for (; r < R; r += G) {
#pragma unroll
      for (int w = 0; w < W; ++w) cur[w] = load_first(p + (size_t)r * C + w * T * 4);
#pragma unroll
      for (int w = 0; w < W; ++w) add4(a[w], cur[w]);
    }
  } else {
#pragma unroll
    for (int w = 0; w < W; ++w) cur[w] = load_first(p + (size_t)r * C + w * T * 4);
    for (r += G; r < R; r += G) {
      float4 nxt[W];
#pragma unroll
      for (int w = 0; w < W; ++w) nxt[w] = load_first(p + (size_t)r * C + w * T * 4);
#pragma unroll
      for (int w = 0; w < W; ++w) {
        add4(a[w], cur[w]);
        cur[w] = nxt[w];
      }
    }
#pragma unroll
    for (int w = 0; w < W; ++w) add4(a[w], cur[w]);
  }
#pragma unroll
  for (int w = 0; w < W; ++w) store4<1>(part + (size_t)blockIdx.x * C + threadIdx.x * 4 + w * T * 4, a[w]);
}

__global__ void copyk(const float4* __restrict__ a, float4* __restrict__ b, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) b[i] = a[i];
}

float *x, *part, *out, *rowout, *cpy;
unsigned* barrier;
unsigned epoch = 0;

template <int K> void run_rowsumK() { rowsumK<K><<<R / K, 512>>>(x, rowout); }
template <int G> void run_rowsum_persist() { rowsum_persist<G><<<G, 512>>>(x, rowout); }
template <int K, int SH> void run_fullrow_only() { fullrow<K, SH><<<R / K, 512>>>(x, part); }
template <int K, int SH, int TY> void run_fullrow() {
  fullrow<K, SH><<<R / K, 512>>>(x, part);
  stage2w<C, R / K, TY><<<C / 64, 16 * TY>>>(part, out);
}
template <int NB, int K> void run_onegrid() { onegrid<NB, K><<<NB, 512>>>(x, part, barrier, ++epoch, out); }
template <int T> void run_rowsumT() { rowsumT<T><<<R, T>>>(x, rowout); }
template <int G, int T, int D> void run_colpersist_only() { colpersist<G, T, D><<<G, T>>>(x, part); }
template <int G, int T, int D, int TY> void run_colpersist() {
  colpersist<G, T, D><<<G, T>>>(x, part);
  stage2w<C, G, TY><<<C / 64, 16 * TY>>>(part, out);
}
void run_copy() { copyk<<<132 * 16, 256>>>((const float4*)x, (float4*)cpy, (size_t)R * C / 8); }

int main() {
  cudaMalloc(&x, (size_t)R * C * 4);
  cudaMalloc(&part, (size_t)2048 * C * 4);
  cudaMalloc(&out, C * 4);
  cudaMalloc(&rowout, R * 4);
  cudaMalloc(&cpy, (size_t)R * C * 2);
  cudaMalloc(&barrier, 4);
  cudaMemset(barrier, 0, 4);
  int sms = 0, per_sm = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, onegrid<256, 8>, 512, 0);
  printf("SMs %d, onegrid<256,8> blocks per SM %d (needs %d resident)\n", sms, per_sm, 256);
  if (sms * per_sm < 256) return 1;
  std::vector<float> h((size_t)R * C);
  for (size_t i = 0; i < h.size(); ++i) h[i] = (float)((i * 2654435761u) % 1000) / 1000.0f - 0.5f;
  cudaMemcpy(x, h.data(), h.size() * 4, cudaMemcpyHostToDevice);
  std::vector<double> want(C, 0.0), want_rows(R, 0.0);
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) {
      want[c] += h[(size_t)r * C + c];
      want_rows[r] += h[(size_t)r * C + c];
    }
  std::vector<Variant> vs = {
      {"rowsum reference (K1)", run_rowsumK<1>},
      {"rowsumT 1024 (1 load)", run_rowsumT<1024>},
      {"rowsumT 256 (4 loads)", run_rowsumT<256>},
      {"rowsumK 2", run_rowsumK<2>},
      {"copy same bytes", run_copy},
      {"colpersist only G264 T1024 D1", run_colpersist_only<264, 1024, 1>},
      {"colpersist only G264 T1024 D2", run_colpersist_only<264, 1024, 2>},
      {"colpersist only G528 T512 D1", run_colpersist_only<528, 512, 1>},
      {"colpersist only G528 T512 D2", run_colpersist_only<528, 512, 2>},
      {"colpersist only G1056 T256 D1", run_colpersist_only<1056, 256, 1>},
      {"colpersist only G132 T1024 D2", run_colpersist_only<132, 1024, 2>},
      {"colpersist G264 T1024 D2 +s2", run_colpersist<264, 1024, 2, 16>},
      {"colpersist G528 T512 D1 +s2", run_colpersist<528, 512, 1, 16>},
      {"colpersist G132 T1024 D2 +s2", run_colpersist<132, 1024, 2, 8>},
      {"onegrid NB256 K8", run_onegrid<256, 8>},
      {"onegrid NB256 K1", run_onegrid<256, 1>},
      {"onegrid NB256 K2", run_onegrid<256, 2>},
  };
  std::vector<float> got(C), got_rows(R);
  for (auto& v : vs) {
    const std::string name = v.name;
    if (name.find("copy") != std::string::npos || name.find("only") != std::string::npos) continue;
    bool rows = name.find("rowsum") != std::string::npos;
    cudaMemset(rows ? rowout : out, 0, (rows ? R : C) * 4);
    v.run();
    v.run();
    cudaMemcpy(rows ? got_rows.data() : got.data(), rows ? rowout : out, (rows ? R : C) * 4, cudaMemcpyDeviceToHost);
    double err = 0;
    for (int i = 0; i < (rows ? R : C); ++i)
      err = std::max(err, std::abs((rows ? got_rows[i] : got[i]) - (rows ? want_rows[i] : want[i])));
    printf("check %-26s max err %.3g\n", v.name, err);
  }
  time_variants(vs);
}
