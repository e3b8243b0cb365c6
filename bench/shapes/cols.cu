// Column-sum variants for x[16384,4096].sum(0), timed as do_bench does (256 MB memset before each call).
// A harness for choosing kernel shapes (not a test): hand-written forms of candidate kernels, each timed with CUDA
// events after a 256 MB memset, as triton.testing.do_bench times a case; rounds interleave the variants; medians,
// 10th percentiles and minima in ms. On a CUDA machine:
//     nvcc -O3 -arch=sm_90 -std=c++17 bench/shapes/cols.cu -o /tmp/cols && /tmp/cols
#include <cstdio>
#include <vector>
#include <algorithm>
#include <string>
#include <cmath>
#include <cuda_runtime.h>

#include "timing.h"
#include "col_stage2.h"

constexpr int R = 16384, C = 4096;

__device__ __forceinline__ unsigned long long pol_first() {
  unsigned long long pol;
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  return pol;
}
template <int H> __device__ __forceinline__ float4 ld4(const float* p) {
  if (H == 0) return *(const float4*)p;
  uint4 r;
  if (H == 1)
    asm volatile("ld.global.L1::evict_first.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p), "l"(pol_first()));
  else
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
  return *(float4*)&r;
}

// Stage 1: S splits, 256 threads, float4 per thread per row, thread g: column group g % 1024, split g / 1024.
template <int S, int U, int H, int B>
__global__ void __launch_bounds__(B) stage1(const float* __restrict__ x, float* __restrict__ part) {
  constexpr int chunk = R / S;
  int g = blockIdx.x * B + threadIdx.x;
  int c = g % 1024, s = g / 1024;
  float4 a = {0, 0, 0, 0};
  const float* p = x + (size_t)s * chunk * C + c * 4;
#pragma unroll U
  for (int r = 0; r < chunk; ++r) {
    float4 v = ld4<H>(p + (size_t)r * C);
    a.x += v.x; a.y += v.y; a.z += v.z; a.w += v.w;
  }
  *(float4*)(part + (size_t)s * C + c * 4) = a;
}

// Row slice ty of partial s over the 4 columns at c: rows s*chunk + ty, + TY, ...
template <int S, int TY, int U, int H>
__device__ __forceinline__ float4 slice_sum(const float* __restrict__ x, int s, int ty, int c) {
  constexpr int chunk = R / S;
  float4 a = {0, 0, 0, 0};
  const float* p = x + (size_t)s * chunk * C + c * 4;
#pragma unroll U
  for (int r = ty; r < chunk; r += TY) {
    float4 v = ld4<H>(p + (size_t)r * C);
    a.x += v.x; a.y += v.y; a.z += v.z; a.w += v.w;
  }
  return a;
}

// Stage 1 with TY row slices in a block of 64 x TY threads (256 columns per block), combined in shared memory.
template <int S, int TY, int U, int H>
__global__ void __launch_bounds__(64 * TY) stage1_slices(const float* __restrict__ x, float* __restrict__ part) {
  int tx = threadIdx.x % 64, ty = threadIdx.x / 64;
  int strip = blockIdx.x % 16, s = blockIdx.x / 16;
  int c = strip * 64 + tx;
  float4 a = slice_sum<S, TY, U, H>(x, s, ty, c);
  __shared__ float4 sm[TY][64];
  sm[ty][tx] = a;
  __syncthreads();
  if (ty == 0) {
    for (int y = 1; y < TY; ++y) { float4 b = sm[y][tx]; a.x += b.x; a.y += b.y; a.z += b.z; a.w += b.w; }
    *(float4*)(part + (size_t)s * C + c * 4) = a;
  }
}

// Stage 2 as emitted: 32 outputs x 8 slices per block over S partials.
template <int S>
__global__ void __launch_bounds__(256) stage2(const float* __restrict__ part, float* __restrict__ out) {
  int tx = threadIdx.x % 32, ty = threadIdx.x / 32;
  int i = blockIdx.x * 32 + tx;
  float a = 0;
#pragma unroll 4
  for (int r = ty; r < S; r += 8) a += part[i + r * C];
  __shared__ float sm[8][32];
  sm[ty][tx] = a;
  __syncthreads();
  if (ty == 0) {
    for (int y = 1; y < 8; ++y) a += sm[y][tx];
    out[i] = a;
  }
}

// Stage 2 as emitted (emit_column_vector_slices): 16 groups of 4 outputs x 4 slices of the S partials
// per 64-thread block, met in shared memory.
template <int S>
__global__ void __launch_bounds__(64) stage2v(const float* __restrict__ part, float* __restrict__ out) {
  int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  int c = blockIdx.x * 16 + tx;
  float4 a = {0, 0, 0, 0};
#pragma unroll 4
  for (int r = ty; r < S; r += 4) {
    float4 v = *(const float4*)(part + (size_t)r * C + c * 4);
    a.x += v.x; a.y += v.y; a.z += v.z; a.w += v.w;
  }
  __shared__ float4 sm[4][16];
  sm[ty][tx] = a;
  __syncthreads();
  if (ty == 0) {
    for (int y = 1; y < 4; ++y) { float4 b = sm[y][tx]; a.x += b.x; a.y += b.y; a.z += b.z; a.w += b.w; }
    *(float4*)(out + c * 4) = a;
  }
}

// The single-kernel form's end: the block's row slices meet in shared memory, slice 0 writes the block's partial, and
// the last block of a 256-column strip to finish (a counter per strip, reset by it) sums the strip's S partials in
// partial order and stores the outputs.
template <int S, int TY>
__device__ __forceinline__ void finish_strip(float4 a, float* __restrict__ part, unsigned* counters,
                                             float* __restrict__ out, int strip, int s, int tx, int ty, int c) {
  __shared__ float4 sm[TY][64];
  __shared__ bool last;
  sm[ty][tx] = a;
  __syncthreads();
  if (ty == 0) {
    for (int y = 1; y < TY; ++y) { float4 b = sm[y][tx]; a.x += b.x; a.y += b.y; a.z += b.z; a.w += b.w; }
    *(float4*)(part + (size_t)s * C + c * 4) = a;
    __threadfence();
  }
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(&counters[strip], 1u) == S - 1;
  __syncthreads();
  if (!last) return;
  __threadfence();
  // 256 columns of this strip, TY*64 threads: each thread one column, slices over S.
  constexpr int T = 64 * TY, SL = T / 256;
  int col = threadIdx.x % 256, sl = threadIdx.x / 256;
  float b = 0;
  for (int r = sl; r < S; r += SL) b += __ldcg(part + (size_t)r * C + strip * 256 + col);
  __shared__ float sm2[SL][256];
  sm2[sl][col] = b;
  __syncthreads();
  if (sl == 0) {
    for (int y = 1; y < SL; ++y) b += sm2[y][col];
    out[strip * 256 + col] = b;
  }
  if (threadIdx.x == 0) counters[strip] = 0;
}

// Single kernel: stage 1 with row slices, then the last block of each 256-column strip sums its partials.
template <int S, int TY, int U>
__global__ void __launch_bounds__(64 * TY) onepass(const float* __restrict__ x, float* __restrict__ part,
                                                   unsigned* counters, float* __restrict__ out) {
  int tx = threadIdx.x % 64, ty = threadIdx.x / 64;
  int strip = blockIdx.x % 16, s = blockIdx.x / 16;
  int c = strip * 64 + tx;
  float4 a = slice_sum<S, TY, U, 1>(x, s, ty, c);
  finish_strip<S, TY>(a, part, counters, out, strip, s, tx, ty, c);
}


// Reference: our sum-rows kernel shape (512 threads per row, 2 float4 per thread, evict-first), whole grid.
__global__ void __launch_bounds__(512) rowsum(const float* __restrict__ x, float* __restrict__ out) {
  const float* p = x + (size_t)blockIdx.x * C;
  float4 u = ld4<1>(p + threadIdx.x * 4), v = ld4<1>(p + (threadIdx.x + 512) * 4);
  float a = u.x + u.y + u.z + u.w + v.x + v.y + v.z + v.w;
  for (int m = 16; m; m /= 2) a += __shfl_xor_sync(~0u, a, m);
  __shared__ float sm[16];
  if (threadIdx.x % 32 == 0) sm[threadIdx.x / 32] = a;
  __syncthreads();
  if (threadIdx.x < 32) {
    a = threadIdx.x < 16 ? sm[threadIdx.x] : 0.f;
    for (int m = 16; m; m /= 2) a += __shfl_xor_sync(~0u, a, m);
    if (threadIdx.x == 0) out[blockIdx.x] = a;
  }
}
// Full rows per block: B threads x W float4 (columns t*4 + w*B*4), K consecutive rows; partial per block.
template <int B, int W, int K, int U>
__global__ void __launch_bounds__(B) fullrow(const float* __restrict__ x, float* __restrict__ part) {
  float4 a[W];
#pragma unroll
  for (int w = 0; w < W; ++w) a[w] = {0, 0, 0, 0};
  const float* p = x + (size_t)blockIdx.x * K * C + threadIdx.x * 4;
#pragma unroll U
  for (int r = 0; r < K; ++r) {
    float4 v[W];
#pragma unroll
    for (int w = 0; w < W; ++w) v[w] = ld4<1>(p + (size_t)r * C + w * B * 4);
#pragma unroll
    for (int w = 0; w < W; ++w) { a[w].x += v[w].x; a[w].y += v[w].y; a[w].z += v[w].z; a[w].w += v[w].w; }
  }
#pragma unroll
  for (int w = 0; w < W; ++w) *(float4*)(part + (size_t)blockIdx.x * C + threadIdx.x * 4 + w * B * 4) = a[w];
}

// Software-pipelined row loop: the next U rows' loads are issued before the current U are added.
template <int U, class F>
__device__ __forceinline__ float4 piped(const float* p, int n, F ld) {
  float4 a = {0, 0, 0, 0}, cur[U];
#pragma unroll
  for (int u = 0; u < U; ++u) cur[u] = ld(p, u);
  for (int r = U; r < n; r += U) {
    float4 nxt[U];
#pragma unroll
    for (int u = 0; u < U; ++u) nxt[u] = ld(p, r + u);
#pragma unroll
    for (int u = 0; u < U; ++u) { a.x += cur[u].x; a.y += cur[u].y; a.z += cur[u].z; a.w += cur[u].w; cur[u] = nxt[u]; }
  }
#pragma unroll
  for (int u = 0; u < U; ++u) { a.x += cur[u].x; a.y += cur[u].y; a.z += cur[u].z; a.w += cur[u].w; }
  return a;
}
template <int S, int U>
__global__ void __launch_bounds__(256) stage1p(const float* __restrict__ x, float* __restrict__ part) {
  constexpr int chunk = R / S;
  int g = blockIdx.x * 256 + threadIdx.x;
  int c = g % 1024, s = g / 1024;
  const float* p = x + (size_t)s * chunk * C + c * 4;
  float4 a = piped<U>(p, chunk, [](const float* q, int r) { return ld4<1>(q + (size_t)r * C); });
  *(float4*)(part + (size_t)s * C + c * 4) = a;
}
template <int K, int U>
__global__ void __launch_bounds__(1024) fullrowp(const float* __restrict__ x, float* __restrict__ part) {
  const float* p = x + (size_t)blockIdx.x * K * C + threadIdx.x * 4;
  float4 a = piped<U>(p, K, [](const float* q, int r) { return ld4<1>(q + (size_t)r * C); });
  *(float4*)(part + (size_t)blockIdx.x * C + threadIdx.x * 4) = a;
}
template <int S, int TY, int U>
__global__ void __launch_bounds__(64 * TY) onepassp(const float* __restrict__ x, float* __restrict__ part,
                                                    unsigned* counters, float* __restrict__ out) {
  constexpr int chunk = R / S;
  int tx = threadIdx.x % 64, ty = threadIdx.x / 64;
  int strip = blockIdx.x % 16, s = blockIdx.x / 16;
  int c = strip * 64 + tx;
  const float* p = x + ((size_t)s * chunk + ty) * C + c * 4;
  float4 a = piped<U>(p, chunk / TY, [](const float* q, int r) { return ld4<1>(q + (size_t)r * TY * C); });
  finish_strip<S, TY>(a, part, counters, out, strip, s, tx, ty, c);
}

// Row-interleaved: block b of G handles rows b, b+G, ... so all blocks sweep memory together, as row kernels do.
template <int G, int U>
__global__ void __launch_bounds__(256) stage1i(const float* __restrict__ x, float* __restrict__ part) {
  int strip = blockIdx.x % 4, b = blockIdx.x / 4;
  int c = strip * 256 + threadIdx.x;
  const float* p = x + (size_t)b * C + c * 4;
  float4 a = piped<U>(p, R / G, [](const float* q, int r) { return ld4<1>(q + (size_t)r * G * C); });
  *(float4*)(part + (size_t)b * C + c * 4) = a;
}
template <int G, int U>
__global__ void __launch_bounds__(1024) fullrowi(const float* __restrict__ x, float* __restrict__ part) {
  const float* p = x + (size_t)blockIdx.x * C + threadIdx.x * 4;
  float4 a = piped<U>(p, R / G, [](const float* q, int r) { return ld4<1>(q + (size_t)r * G * C); });
  *(float4*)(part + (size_t)blockIdx.x * C + threadIdx.x * 4) = a;
}
template <int S, int TY, int U>
__global__ void __launch_bounds__(64 * TY) onepassi(const float* __restrict__ x, float* __restrict__ part,
                                                    unsigned* counters, float* __restrict__ out) {
  int tx = threadIdx.x % 64, ty = threadIdx.x / 64;
  int strip = blockIdx.x % 16, s = blockIdx.x / 16;
  int c = strip * 64 + tx;
  const float* p = x + ((size_t)s * TY + ty) * C + c * 4;
  float4 a = piped<U>(p, R / (S * TY), [](const float* q, int r) { return ld4<1>(q + (size_t)r * S * TY * C); });
  finish_strip<S, TY>(a, part, counters, out, strip, s, tx, ty, c);
}

// Whole grid, as the row kernels run: block (g, strip) sums K consecutive rows of a strip of B * 4 columns (one
// float4 per thread per row) into partial g; strips vary fastest, so resident blocks sweep memory together.
template <int B, int K, int U>
__global__ void __launch_bounds__(B) wgrid(const float* __restrict__ x, float* __restrict__ part) {
  constexpr int strips = C / (B * 4);
  int strip = blockIdx.x % strips, g = blockIdx.x / strips;
  int c = strip * B + threadIdx.x;
  const float* p = x + (size_t)g * K * C + c * 4;
  float4 a = piped<U>(p, K, [](const float* q, int r) { return ld4<1>(q + (size_t)r * C); });
  *(float4*)(part + (size_t)g * C + c * 4) = a;
}

// Persistent full-row tiles: NB blocks of 512 threads (2 float4 per thread: a whole 16 KB row); block b sums tiles
// b, b + NB, ... of K consecutive rows, each tile's 2K loads issued at once, into partial b.
template <int NB, int K>
__global__ void __launch_bounds__(512) ptiles(const float* __restrict__ x, float* __restrict__ part) {
  float4 a0 = {0, 0, 0, 0}, a1 = {0, 0, 0, 0};
  for (int t = blockIdx.x; t < R / K; t += NB) {
    const float* p = x + (size_t)t * K * C + threadIdx.x * 4;
    float4 v[2 * K];
#pragma unroll
    for (int r = 0; r < K; ++r) { v[2 * r] = ld4<1>(p + (size_t)r * C); v[2 * r + 1] = ld4<1>(p + (size_t)r * C + 2048); }
#pragma unroll
    for (int r = 0; r < K; ++r) {
      a0.x += v[2 * r].x; a0.y += v[2 * r].y; a0.z += v[2 * r].z; a0.w += v[2 * r].w;
      a1.x += v[2 * r + 1].x; a1.y += v[2 * r + 1].y; a1.z += v[2 * r + 1].z; a1.w += v[2 * r + 1].w;
    }
  }
  *(float4*)(part + (size_t)blockIdx.x * C + threadIdx.x * 4) = a0;
  *(float4*)(part + (size_t)blockIdx.x * C + threadIdx.x * 4 + 2048) = a1;
}

// Row-sum-shaped tiles over the whole grid, deterministic: a block takes the next tile number (launch order, so
// every lower tile has started), sums its K rows (2K loads at once, as the row sums read), stores the tile's partial
// in a ring slot (waiting for the slot's previous group to have been summed), and the last tile of each group of G
// sums the group's partials in order into the group's partial; the last group sums those in order into out.
constexpr int kTilesMax = 4096;
__device__ unsigned ring_tile, ring_final, ring_group[kTilesMax], ring_gen[kTilesMax];
template <int K, int G, int SLOTS>
__global__ void __launch_bounds__(512) ring(const float* __restrict__ x, float* __restrict__ slots,
                                             float* __restrict__ gpart, float* __restrict__ out) {
  constexpr int tiles = R / K, groups = tiles / G;
  __shared__ unsigned tile_s;
  __shared__ bool last;
  if (threadIdx.x == 0) tile_s = atomicAdd(&ring_tile, 1u);
  __syncthreads();
  const unsigned t = tile_s;
  const float* p = x + (size_t)t * K * C + threadIdx.x * 4;
  float4 v[2 * K];
#pragma unroll
  for (int r = 0; r < K; ++r) { v[2 * r] = ld4<1>(p + (size_t)r * C); v[2 * r + 1] = ld4<1>(p + (size_t)r * C + 2048); }
  float4 a0 = v[0], a1 = v[1];
#pragma unroll
  for (int r = 1; r < K; ++r) {
    a0.x += v[2 * r].x; a0.y += v[2 * r].y; a0.z += v[2 * r].z; a0.w += v[2 * r].w;
    a1.x += v[2 * r + 1].x; a1.y += v[2 * r + 1].y; a1.z += v[2 * r + 1].z; a1.w += v[2 * r + 1].w;
  }
  const unsigned slot = t % SLOTS, gen = t / SLOTS;
  if (threadIdx.x == 0 && gen > 0)
    while (*(volatile unsigned*)&ring_gen[slot] < gen) __nanosleep(100);
  __syncthreads();
  float* sp = slots + (size_t)slot * C + threadIdx.x * 4;
  __stcg((float4*)sp, a0);
  __stcg((float4*)(sp + 2048), a1);
  __threadfence();
  __syncthreads();
  const unsigned g = t / G;
  if (threadIdx.x == 0) last = atomicAdd(&ring_group[g], 1u) == G - 1;
  __syncthreads();
  if (!last) return;
  __threadfence();
  float4 s0 = {0, 0, 0, 0}, s1 = {0, 0, 0, 0};
  for (int j = 0; j < G; ++j) {
    const float* q = slots + (size_t)((g * G + j) % SLOTS) * C + threadIdx.x * 4;
    float4 u0 = __ldcg((const float4*)q), u1 = __ldcg((const float4*)(q + 2048));
    s0.x += u0.x; s0.y += u0.y; s0.z += u0.z; s0.w += u0.w;
    s1.x += u1.x; s1.y += u1.y; s1.z += u1.z; s1.w += u1.w;
  }
  float* gp = gpart + (size_t)g * C + threadIdx.x * 4;
  __stcg((float4*)gp, s0);
  __stcg((float4*)(gp + 2048), s1);
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) {
    ring_group[g] = 0;
    for (int j = 0; j < G; ++j) atomicAdd(&ring_gen[(g * G + j) % SLOTS], 1u);
    last = atomicAdd(&ring_final, 1u) == groups - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  s0 = {0, 0, 0, 0}; s1 = {0, 0, 0, 0};
  for (int j = 0; j < groups; ++j) {
    const float* q = gpart + (size_t)j * C + threadIdx.x * 4;
    float4 u0 = __ldcg((const float4*)q), u1 = __ldcg((const float4*)(q + 2048));
    s0.x += u0.x; s0.y += u0.y; s0.z += u0.z; s0.w += u0.w;
    s1.x += u1.x; s1.y += u1.y; s1.z += u1.z; s1.w += u1.w;
  }
  *(float4*)(out + threadIdx.x * 4) = s0;
  *(float4*)(out + threadIdx.x * 4 + 2048) = s1;
  __syncthreads();
  if (threadIdx.x == 0) { ring_tile = 0; ring_final = 0; }
  for (int j = threadIdx.x; j < SLOTS; j += 512) ring_gen[j] = 0;
}

__global__ void copyk(const float4* __restrict__ a, float4* __restrict__ b, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) b[i] = a[i];
}

float *x, *part, *out, *ref, *cpy;
unsigned* counters;

template <int S, int U, int H> void run_split() {
  stage1<S, U, H, 256><<<S * 4, 256>>>(x, part);
  stage2<S><<<C / 32, 256>>>(part, out);
}
template <int S, int U, int H> void run_stage1_only() { stage1<S, U, H, 256><<<S * 4, 256>>>(x, part); }
template <int S, int TY, int U, int H> void run_slices_v() {
  stage1_slices<S, TY, U, H><<<S * 16, 64 * TY>>>(x, part);
  stage2v<S><<<C / 64, 64>>>(part, out);
}
template <int S, int TY, int U, int H> void run_slices() {
  stage1_slices<S, TY, U, H><<<S * 16, 64 * TY>>>(x, part);
  stage2<S><<<C / 32, 256>>>(part, out);
}
template <int S, int TY, int U> void run_onepass() { onepass<S, TY, U><<<S * 16, 64 * TY>>>(x, part, counters, out); }
float* rowout;
void run_rowsum() { rowsum<<<R, 512>>>(x, rowout); }
template <int B, int W, int K, int U> void run_fullrow_only() { fullrow<B, W, K, U><<<R / K, B>>>(x, part); }
template <int B, int W, int K, int U> void run_fullrow() {
  fullrow<B, W, K, U><<<R / K, B>>>(x, part);
  stage2<R / K><<<C / 32, 256>>>(part, out);
}
template <int S, int U> void run_stage1p_only() { stage1p<S, U><<<S * 4, 256>>>(x, part); }
template <int S, int U> void run_splitp() { stage1p<S, U><<<S * 4, 256>>>(x, part); stage2<S><<<C / 32, 256>>>(part, out); }
template <int K, int U> void run_fullrowp_only() { fullrowp<K, U><<<R / K, 1024>>>(x, part); }
template <int S, int TY, int U> void run_onepassp() { onepassp<S, TY, U><<<S * 16, 64 * TY>>>(x, part, counters, out); }
template <int G, int U> void run_stage1i_only() { stage1i<G, U><<<G * 4, 256>>>(x, part); }
template <int G, int U> void run_spliti() { stage1i<G, U><<<G * 4, 256>>>(x, part); stage2<G><<<C / 32, 256>>>(part, out); }
template <int G, int U> void run_fullrowi_only() { fullrowi<G, U><<<G, 1024>>>(x, part); }
template <int S, int TY, int U> void run_onepassi() { onepassi<S, TY, U><<<S * 16, 64 * TY>>>(x, part, counters, out); }
template <int B, int K, int U>
void run_wgrid_only() {
  wgrid<B, K, U><<<(R / K) * (C / (B * 4)), B>>>(x, part);
}
template <int B, int K, int U, int TY>
void run_wgrid() {
  wgrid<B, K, U><<<(R / K) * (C / (B * 4)), B>>>(x, part);
  stage2w<C, R / K, TY><<<C / 64, 16 * TY>>>(part, out);
}
template <int NB, int K> void run_ptiles_only() { ptiles<NB, K><<<NB, 512>>>(x, part); }
template <int NB, int K> void run_ptiles() {
  ptiles<NB, K><<<NB, 512>>>(x, part);
  stage2w<C, NB, 16><<<C / 64, 256>>>(part, out);
}
float *slots, *gpart;
template <int K, int G, int SLOTS> void run_ring() { ring<K, G, SLOTS><<<R / K, 512>>>(x, slots, gpart, out); }
void run_copy() { copyk<<<132 * 16, 256>>>((const float4*)x, (float4*)cpy, (size_t)R * C / 8); }

int main() {
  cudaMalloc(&x, (size_t)R * C * 4);
  cudaMalloc(&part, 1024 * C * 4);
  cudaMalloc(&out, C * 4);
  cudaMalloc(&rowout, R * 4);
  cudaMalloc(&cpy, (size_t)R * C * 2);
  cudaMalloc(&counters, 64 * 4);
  cudaMalloc(&slots, (size_t)4096 * C * 4);
  cudaMalloc(&gpart, (size_t)1024 * C * 4);
  cudaMemset(counters, 0, 64 * 4);
  {
    std::vector<float> h((size_t)R * C);
    for (size_t i = 0; i < h.size(); ++i) h[i] = (float)((i * 2654435761u) % 1000) / 1000.0f - 0.5f;
    cudaMemcpy(x, h.data(), h.size() * 4, cudaMemcpyHostToDevice);
  }
  std::vector<Variant> vs = {
      {"rowsum reference", run_rowsum},
      {"slices S16 TY16 + stage2v (emitted)", run_slices_v<16, 16, 4, 1>},
      {"stage1i only G128 U8", run_stage1i_only<128, 8>},
      {"ptiles only NB512 K8", run_ptiles_only<512, 8>},
      {"ptiles only NB512 K4", run_ptiles_only<512, 4>},
      {"ptiles only NB256 K8", run_ptiles_only<256, 8>},
      {"ptiles NB512 K8", run_ptiles<512, 8>},
      {"ptiles NB256 K8", run_ptiles<256, 8>},
      {"ptiles NB512 K4", run_ptiles<512, 4>},
      {"ring K8 G16 S1024", run_ring<8, 16, 1024>},
      {"ring K8 G16 S2048 (no reuse)", run_ring<8, 16, 2048>},
      {"ring K4 G16 S2048", run_ring<4, 16, 2048>},
      {"ring K8 G32 S1024", run_ring<8, 32, 1024>},
      {"ring K16 G8 S1024", run_ring<16, 8, 1024>},
  };
  // Check each variant's result against the first split variant.
  std::vector<float> want(C), got(C);
  run_split<128, 4, 1>();
  cudaMemcpy(want.data(), out, C * 4, cudaMemcpyDeviceToHost);
  for (size_t k = 1; k < vs.size(); ++k) {
    const std::string name = vs[k].name;
    if (name.find("only") != std::string::npos || name.find("rowsum") != std::string::npos) continue;
    cudaMemset(out, 0, C * 4);
    vs[k].run();
    vs[k].run();
    cudaMemcpy(got.data(), out, C * 4, cudaMemcpyDeviceToHost);
    double err = 0;
    for (int i = 0; i < C; ++i) err = std::max(err, (double)std::abs(got[i] - want[i]));
    printf("check %-22s max err %.3g\n", vs[k].name, err);
  }
  time_variants(vs);
}
