// hipinductor AMD prelude (HIPRTC). HIPRTC pre-includes the HIP device runtime (threadIdx, __syncthreads,
// __shfl_xor, math functions), so this header only adapts names; it must need no include paths.
#ifndef HI_TARGET_PRELUDE
#define HI_TARGET_PRELUDE

/// Butterfly shuffle within a wavefront of HI_WARP_SIZE lanes.
template <class T> __device__ __forceinline__ T hi_shfl_xor(T v, int lane_mask) {
  return __shfl_xor(v, lane_mask, HI_WARP_SIZE);
}
__device__ __forceinline__ bool hi_shfl_xor(bool v, int lane_mask) {
  return __shfl_xor((int)v, lane_mask, HI_WARP_SIZE) != 0;
}

#endif  // HI_TARGET_PRELUDE
