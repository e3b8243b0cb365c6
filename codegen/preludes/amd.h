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

/// 16 bytes moved by one global_load_dwordx4 / global_store_dwordx4.
typedef unsigned int hi_v16 __attribute__((ext_vector_type(4)));

/// hi_load_vec / hi_store_vec move their chunks without a run-time alignment check: on amdhsa LLVM enables
/// unaligned-access-mode for gfx9+ (the runtime sets SH_MEM_CONFIG accordingly), so a chunk only aligned to its element
/// is still one global_load_dwordx4 / global_store_dwordx4. With the check both paths compiled to the same dwordx4,
/// behind two branches and exec-mask updates per access.
#define HI_UNALIGNED_VECTOR_ACCESS 1

#endif  // HI_TARGET_PRELUDE
