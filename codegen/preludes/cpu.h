// cpu prelude: makes emitted HIP source compile with the host C++ compiler (C++17) into a shared object that the
// cpu device (runtime/cpu_device.h) loads and runs with HIP semantics.
//
// Two parts, so that the runtime and the kernels read ONE definition of the hooks ABI:
//   1. The hooks ABI (plain C structs), always. runtime/cpu_device.cpp includes this file with HI_CPU_HOOKS_ONLY
//      defined and gets only this part.
//   2. The kernel side (HIP keywords, threadIdx & co, __syncthreads, hi_shfl_xor, hi_cpu_bind), unless
//      HI_CPU_HOOKS_ONLY is defined. The code generator #defines HI_WARP_SIZE (32 or 64, the target's warp width)
//      before this prelude.
//
// Contract with the runtime: after dlopen, the runtime reads `hi_cpu_prelude_abi` ({HI_CPU_HOOKS_VERSION,
// HI_WARP_SIZE}) and calls `hi_cpu_bind(&hooks)` once, before any kernel runs. Kernels reach the runtime only through
// that table, so the .so has no undefined symbols into the runtime (the host compiler links with --no-undefined).
// For each kernel K the code generator emits `extern "C" void K__hi_cpu(void** args)`, which unpacks the HIP-style
// argument array (args[i] points at argument i) and calls K; the runtime calls it once per HIP thread, with
// hooks->current() describing that thread.
//
// Semantics on the cpu device: each block runs on one OS thread; with a barrier, every HIP thread is a fiber and
// __syncthreads()/__syncwarp()/hi_shfl_xor() switch fibers. __shared__ is `static thread_local`: storage per OS
// thread, hence per running block (not zeroed between blocks, as on GPUs). Dynamic shared memory (the launch's
// shared_bytes) is reached with HI_DYNAMIC_SHARED(type) instead of `extern __shared__ type name[]`.
#ifndef HI_CPU_HOOKS_ABI_DEFINED
#define HI_CPU_HOOKS_ABI_DEFINED

/// Bumped whenever hi_cpu_thread_context or hi_cpu_hooks change layout or meaning.
#define HI_CPU_HOOKS_VERSION 1

extern "C" {

typedef struct hi_cpu_dim3 {
  unsigned x, y, z;
} hi_cpu_dim3;

/// One HIP thread as the kernel sees it. Owned by the runtime; valid while the thread runs.
typedef struct hi_cpu_thread_context {
  hi_cpu_dim3 thread_idx;
  hi_cpu_dim3 block_idx;
  hi_cpu_dim3 block_dim;
  hi_cpu_dim3 grid_dim;
  unsigned lane;         ///< linear thread index in the block % warp size
  unsigned reserved;
  void* dynamic_shared;  ///< the block's dynamic shared memory (launch shared_bytes, 16-byte aligned), or null
} hi_cpu_thread_context;

/// The runtime's services, handed to hi_cpu_bind. The runtime keeps the table alive while the module is loaded.
typedef struct hi_cpu_hooks {
  unsigned version;    ///< HI_CPU_HOOKS_VERSION of the runtime
  unsigned size;       ///< sizeof(hi_cpu_hooks) in the runtime
  unsigned warp_size;  ///< the device's warp width; must equal the kernel's HI_WARP_SIZE
  unsigned reserved;
  /// The HIP thread running on the calling OS thread.
  const hi_cpu_thread_context* (*current)(void);
  /// Block-wide barrier. Every thread of the block must reach it (the runtime reports a deadlock otherwise).
  void (*syncthreads)(void);
  /// Warp-wide barrier over the lanes of the caller's warp.
  void (*syncwarp)(void);
  /// Warp exchange: every lane of the warp passes its value's bits and a source lane (in the warp); each gets the
  /// bits that the source lane passed, or its own bits when the source lane is outside the warp or the block.
  /// Implies a warp barrier.
  unsigned long long (*warp_shuffle)(unsigned long long bits, int source_lane);
} hi_cpu_hooks;

}  // extern "C"

#endif  // HI_CPU_HOOKS_ABI_DEFINED

#if !defined(HI_CPU_HOOKS_ONLY) && !defined(HI_CPU_KERNEL_SIDE_DEFINED)
#define HI_CPU_KERNEL_SIDE_DEFINED

#include <cstdint>
#include <cstring>

#ifndef HI_WARP_SIZE
#error "the cpu prelude needs HI_WARP_SIZE (32 or 64) defined before it"
#endif
static_assert(HI_WARP_SIZE == 32 || HI_WARP_SIZE == 64, "HI_WARP_SIZE must be 32 or 64");

namespace hi_cpu {

inline const hi_cpu_hooks* hooks = nullptr;

inline const hi_cpu_thread_context& context() { return *hooks->current(); }

template <typename T>
inline T shuffle(T value, int source_lane) {
  static_assert(sizeof(T) <= sizeof(unsigned long long), "hi_shfl_*: values of at most 8 bytes");
  unsigned long long bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  bits = hooks->warp_shuffle(bits, source_lane);
  T result;
  std::memcpy(&result, &bits, sizeof(T));
  return result;
}

template <typename T>
inline T shuffle_xor(T value, int lane_mask) {
  return shuffle(value, static_cast<int>(context().lane ^ static_cast<unsigned>(lane_mask)));
}

}  // namespace hi_cpu

// A module compiled as several translation units linked into one shared object (split_module) defines these once,
// in its first unit; the others define HI_CPU_LATER_UNIT. hi_cpu::hooks is an inline variable, shared by all.
#ifndef HI_CPU_LATER_UNIT
/// {HI_CPU_HOOKS_VERSION, HI_WARP_SIZE}: read by the runtime before binding, to explain a mismatch.
extern "C" __attribute__((visibility("default"))) const unsigned hi_cpu_prelude_abi[2] = {HI_CPU_HOOKS_VERSION,
                                                                                        HI_WARP_SIZE};

// Defined here, not just declared: the prelude is prepended to the translation unit(s) of a module.
/// Accepts the runtime's hooks table; returns 1, or 0 (and keeps nothing) when its version, size or warp width
/// differs from this prelude's.
extern "C" __attribute__((visibility("default"))) int hi_cpu_bind(const void* hooks) {
  const hi_cpu_hooks* table = static_cast<const hi_cpu_hooks*>(hooks);
  if (!table || table->version != HI_CPU_HOOKS_VERSION || table->size != sizeof(hi_cpu_hooks) ||
      table->warp_size != HI_WARP_SIZE)
    return 0;
  hi_cpu::hooks = table;
  return 1;
}
#endif  // HI_CPU_LATER_UNIT

// HIP keywords. Kernels are ordinary functions; launch bounds only matter to GPU register allocation.
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __shared__ static thread_local
#define HI_DYNAMIC_SHARED(type) (reinterpret_cast<type*>(::hi_cpu::context().dynamic_shared))

#define threadIdx (::hi_cpu::context().thread_idx)
#define blockIdx (::hi_cpu::context().block_idx)
#define blockDim (::hi_cpu::context().block_dim)
#define gridDim (::hi_cpu::context().grid_dim)
#define warpSize HI_WARP_SIZE

#define __syncthreads() (::hi_cpu::hooks->syncthreads())
#define __syncwarp(...) (::hi_cpu::hooks->syncwarp())

inline unsigned hi_lane_id() { return ::hi_cpu::context().lane; }

/// Butterfly exchange within a warp of HI_WARP_SIZE lanes: returns `value` of lane (lane ^ lane_mask).
inline float hi_shfl_xor(float value, int lane_mask) { return ::hi_cpu::shuffle_xor(value, lane_mask); }
inline double hi_shfl_xor(double value, int lane_mask) { return ::hi_cpu::shuffle_xor(value, lane_mask); }
inline int hi_shfl_xor(int value, int lane_mask) { return ::hi_cpu::shuffle_xor(value, lane_mask); }
inline unsigned hi_shfl_xor(unsigned value, int lane_mask) { return ::hi_cpu::shuffle_xor(value, lane_mask); }
inline long long hi_shfl_xor(long long value, int lane_mask) { return ::hi_cpu::shuffle_xor(value, lane_mask); }
inline unsigned long long hi_shfl_xor(unsigned long long value, int lane_mask) {
  return ::hi_cpu::shuffle_xor(value, lane_mask);
}

/// 16 bytes, as the GPU preludes' vector load type.
struct alignas(16) hi_v16 { unsigned int x, y, z, w; };
/// x86 loads and stores any alignment: hi_load_vec / hi_store_vec copy with memcpy (movdqu), no run-time check. With
/// the check, GCC 13 merged the aligned and the scalar path into one aligned movdqa and faulted on odd offsets.
#define HI_UNALIGNED_VECTOR_ACCESS 1

#endif  // !HI_CPU_HOOKS_ONLY
