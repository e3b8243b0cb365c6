// The column-sum harnesses' second stage (cols.cu, cols_diag.cu): W columns of float32 partials, S rows of them,
// summed per column in partial order.
#pragma once

#include <cuda_runtime.h>

/// Stage 2 over S partial rows of W floats: 16 groups of 4 outputs x TY row slices per block, the slices met in
/// shared memory in slice order. Grid: W / 64 blocks of 16 * TY threads.
template <int W, int S, int TY>
__global__ void __launch_bounds__(16 * TY) stage2w(const float* __restrict__ part, float* __restrict__ out) {
  int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  int c = blockIdx.x * 16 + tx;
  float4 a = {0, 0, 0, 0};
#pragma unroll 4
  for (int r = ty; r < S; r += TY) {
    float4 v = __ldcg((const float4*)(part + (size_t)r * W + c * 4));
    a.x += v.x; a.y += v.y; a.z += v.z; a.w += v.w;
  }
  __shared__ float4 sm[TY][16];
  sm[ty][tx] = a;
  __syncthreads();
  if (ty == 0) {
    for (int y = 1; y < TY; ++y) {
      float4 b = sm[y][tx];
      a.x += b.x; a.y += b.y; a.z += b.z; a.w += b.w;
    }
    *(float4*)(out + c * 4) = a;
  }
}
