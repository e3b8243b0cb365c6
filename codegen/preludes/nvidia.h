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

/// Loads with a cache eviction hint (common.h's HI_EVICT_FIRST = 1, HI_EVICT_LAST = 2), as Triton emits them: an L1
/// eviction priority and an L2 policy from createpolicy (sm_80+). Other chunk sizes and older GPUs load plainly.
#define HI_LOAD_HINTED 1
template <int H, class C> __device__ __forceinline__ C hi_load_hinted(const C* p) { return *p; }
#if __CUDA_ARCH__ >= 800
template <int H> __device__ __forceinline__ unsigned long long hi_l2_policy() {
  unsigned long long pol;
  if (H == 1) asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  else asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
  return pol;
}
/// One hinted load: PTX `ld.global.L1::<priority>.L2::cache_hint<SHAPE>` with H's policy; the operands follow.
#define HI_LD_HINTED(H, SHAPE, ...)                                                                         \
  if (H == 1)                                                                                              \
    asm volatile("ld.global.L1::evict_first.L2::cache_hint" SHAPE : __VA_ARGS__, "l"(hi_l2_policy<H>())); \
  else                                                                                                     \
    asm volatile("ld.global.L1::evict_last.L2::cache_hint" SHAPE : __VA_ARGS__, "l"(hi_l2_policy<H>()))
template <int H> __device__ __forceinline__ uint4 hi_load_hinted(const uint4* p) {
  if (H == 0) return *p;
  uint4 r;
  HI_LD_HINTED(H, ".v4.u32 {%0, %1, %2, %3}, [%4], %5;", "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
  return r;
}
template <int H> __device__ __forceinline__ unsigned long long hi_load_hinted(const unsigned long long* p) {
  if (H == 0) return *p;
  unsigned long long r;
  HI_LD_HINTED(H, ".u64 %0, [%1], %2;", "=l"(r) : "l"(p));
  return r;
}
template <int H> __device__ __forceinline__ unsigned int hi_load_hinted(const unsigned int* p) {
  if (H == 0) return *p;
  unsigned int r;
  HI_LD_HINTED(H, ".u32 %0, [%1], %2;", "=r"(r) : "l"(p));
  return r;
}
#endif

#endif  // HI_TARGET_PRELUDE
