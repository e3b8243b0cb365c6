// hipinductor NVIDIA prelude (NVRTC): the same HIP-flavoured kernel source compiles as CUDA C++. NVRTC knows
// threadIdx, __syncthreads, the math functions and the *_sync shuffles without headers.
#ifndef HI_TARGET_PRELUDE
#define HI_TARGET_PRELUDE

/// Butterfly shuffle within a warp of HI_WARP_SIZE (32) lanes.
template <class T> __device__ __forceinline__ T hi_shfl_xor(T v, int lane_mask) {
  return __shfl_xor_sync(0xffffffffu, v, lane_mask, HI_WARP_SIZE);
}
__device__ __forceinline__ bool hi_shfl_xor(bool v, int lane_mask) {
  return __shfl_xor_sync(0xffffffffu, (int)v, lane_mask, HI_WARP_SIZE) != 0;
}

/// 16 bytes moved by one ld.global.v4 / st.global.v4 (NVRTC knows uint4 without headers).
typedef uint4 hi_v16;

#endif  // HI_TARGET_PRELUDE
