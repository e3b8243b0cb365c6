// hipinductor common prelude: included after the target prelude (amd.h, nvidia.h or cpu.h) in every module.
// Provides fixed-width types, fp16/bf16 storage types with float math, the math the code generator calls
// (hi_* functions, overloaded for float and double), reduction operators and warp/block reductions.
// The code generator defines HI_WARP_SIZE and one of HI_TARGET_AMD / HI_TARGET_NVIDIA / HI_TARGET_CPU before it.
#ifndef HI_COMMON_PRELUDE
#define HI_COMMON_PRELUDE

typedef long long hi_i64;
typedef unsigned long long hi_u64;
typedef int hi_i32;
typedef short hi_i16;
typedef signed char hi_i8;
typedef unsigned char hi_u8;

#define HI_FN __device__ __forceinline__

#if defined(HI_TARGET_CPU)
#include <math.h>  // the host's libm in the global namespace, as device code sees its math functions
HI_FN float hi_bits_to_float(unsigned u) { float f; __builtin_memcpy(&f, &u, 4); return f; }
HI_FN unsigned hi_float_to_bits(float f) { unsigned u; __builtin_memcpy(&u, &f, 4); return u; }
HI_FN float rsqrtf(float x) { return 1.0f / sqrtf(x); }
HI_FN double rsqrt(double x) { return 1.0 / sqrt(x); }
#else
HI_FN float hi_bits_to_float(unsigned u) { return __uint_as_float(u); }
HI_FN unsigned hi_float_to_bits(float f) { return __float_as_uint(f); }
#endif

/// min / max of index expressions (the code generator prints Index min/max with these).
HI_FN hi_i64 hi_imin(hi_i64 a, hi_i64 b) { return a < b ? a : b; }
HI_FN hi_i64 hi_imax(hi_i64 a, hi_i64 b) { return a > b ? a : b; }

HI_FN float hi_inf_f() { return hi_bits_to_float(0x7f800000u); }
HI_FN float hi_nan_f() { return hi_bits_to_float(0x7fc00000u); }
HI_FN double hi_inf_d() { return (double)hi_inf_f(); }
HI_FN double hi_nan_d() { return (double)hi_nan_f(); }

// ---- 16-bit floating-point storage: values live in float registers, memory holds the 16-bit pattern. ----
struct hi_bfloat16 { unsigned short bits; };
struct hi_half { unsigned short bits; };

HI_FN float hi_to_float(hi_bfloat16 v) { return hi_bits_to_float((unsigned)v.bits << 16); }
#if defined(HI_TARGET_NVIDIA) && __CUDA_ARCH__ >= 800
/// One instruction on sm_80+: round to nearest even, NaN stays NaN.
HI_FN unsigned short hi_bf16_bits(float f) {
  unsigned short h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}
#else
HI_FN unsigned short hi_bf16_bits(float f) {
  unsigned u = hi_float_to_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u);  // NaN stays quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);                                                  // round to nearest even
  return (unsigned short)(u >> 16);
}
#endif
HI_FN hi_bfloat16 hi_make_bf16(float f) { hi_bfloat16 r; r.bits = hi_bf16_bits(f); return r; }
/// f rounded to bfloat16 precision, kept as float.
HI_FN float hi_round_bf16(float f) { return hi_bits_to_float((unsigned)hi_bf16_bits(f) << 16); }

#if defined(HI_TARGET_NVIDIA)
HI_FN float hi_half_bits_to_float(unsigned short h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
HI_FN unsigned short hi_half_bits(float f) { unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
#else
HI_FN float hi_half_bits_to_float(unsigned short h) { return (float)__builtin_bit_cast(_Float16, h); }
HI_FN unsigned short hi_half_bits(float f) { return __builtin_bit_cast(unsigned short, (_Float16)f); }
#endif
HI_FN float hi_to_float(hi_half v) { return hi_half_bits_to_float(v.bits); }
HI_FN hi_half hi_make_half(float f) { hi_half r; r.bits = hi_half_bits(f); return r; }
HI_FN float hi_round_half(float f) { return hi_half_bits_to_float(hi_half_bits(f)); }

// ---- math, overloaded for float and double (integers where PyTorch defines the op for them) ----
HI_FN float hi_exp(float x) { return expf(x); }
HI_FN double hi_exp(double x) { return exp(x); }
HI_FN float hi_exp2(float x) { return exp2f(x); }
HI_FN double hi_exp2(double x) { return exp2(x); }
HI_FN float hi_expm1(float x) { return expm1f(x); }
HI_FN double hi_expm1(double x) { return expm1(x); }
HI_FN float hi_log(float x) { return logf(x); }
HI_FN double hi_log(double x) { return log(x); }
HI_FN float hi_log2(float x) { return log2f(x); }
HI_FN double hi_log2(double x) { return log2(x); }
HI_FN float hi_log10(float x) { return log10f(x); }
HI_FN double hi_log10(double x) { return log10(x); }
HI_FN float hi_log1p(float x) { return log1pf(x); }
HI_FN double hi_log1p(double x) { return log1p(x); }
HI_FN float hi_sqrt(float x) { return sqrtf(x); }
HI_FN double hi_sqrt(double x) { return sqrt(x); }
HI_FN float hi_rsqrt(float x) { return rsqrtf(x); }
HI_FN double hi_rsqrt(double x) { return rsqrt(x); }
HI_FN float hi_sin(float x) { return sinf(x); }
HI_FN double hi_sin(double x) { return sin(x); }
HI_FN float hi_cos(float x) { return cosf(x); }
HI_FN double hi_cos(double x) { return cos(x); }
HI_FN float hi_tan(float x) { return tanf(x); }
HI_FN double hi_tan(double x) { return tan(x); }
HI_FN float hi_tanh(float x) { return tanhf(x); }
HI_FN double hi_tanh(double x) { return tanh(x); }
HI_FN float hi_erf(float x) { return erff(x); }
HI_FN double hi_erf(double x) { return erf(x); }
HI_FN float hi_floor(float x) { return floorf(x); }
HI_FN double hi_floor(double x) { return floor(x); }
HI_FN float hi_ceil(float x) { return ceilf(x); }
HI_FN double hi_ceil(double x) { return ceil(x); }
HI_FN float hi_trunc(float x) { return truncf(x); }
HI_FN double hi_trunc(double x) { return trunc(x); }
HI_FN float hi_round(float x) { return rintf(x); }  // half to even, like torch.round
HI_FN double hi_round(double x) { return rint(x); }
HI_FN float hi_pow(float a, float b) { return powf(a, b); }
HI_FN double hi_pow(double a, double b) { return pow(a, b); }
/// Integer powers as PyTorch's powi: by squaring, wrapping on overflow (in 64-bit unsigned arithmetic, whose low bits
/// are the narrower type's wrapped product, and without signed overflow); a negative exponent gives 1 for base 1,
/// -1 or 1 for base -1 (odd or even exponent), else 0.
template <class T>
HI_FN T hi_ipow(T a, T b) {
  if (b < T(0)) return a == T(1) ? T(1) : a == T(-1) ? (b % T(2) ? T(-1) : T(1)) : T(0);
  unsigned long long r = 1, x = (unsigned long long)(long long)a;
  for (unsigned long long e = (unsigned long long)(long long)b; e; e >>= 1) {
    if (e & 1) r *= x;
    x *= x;
  }
  return (T)r;
}
/// float division: on NVIDIA the full-range approximate division (at most 2 ulp, as Triton's default `/`), a
/// fraction of IEEE division's instructions; elsewhere IEEE division.
#if defined(HI_TARGET_NVIDIA)
HI_FN float hi_div(float a, float b) {
  float r;
  asm("div.full.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}
#else
HI_FN float hi_div(float a, float b) { return a / b; }
#endif
HI_FN double hi_div(double a, double b) { return a / b; }
HI_FN float hi_fmod(float a, float b) { return fmodf(a, b); }
HI_FN double hi_fmod(double a, double b) { return fmod(a, b); }
HI_FN float hi_copysign(float a, float b) { return copysignf(a, b); }
HI_FN double hi_copysign(double a, double b) { return copysign(a, b); }
HI_FN float hi_abs(float x) { return fabsf(x); }
HI_FN double hi_abs(double x) { return fabs(x); }
template <class T> HI_FN T hi_abs(T x) { return x < 0 ? -x : x; }
/// e^x from the hardware's base-2 exponential (ex2.approx / v_exp_f32) of x*log2(e), as Triton's float exp: a few
/// instructions instead of expf's range reduction. The rounding of x*log2(e) costs |x| * 2^-24 relative, which
/// sigmoid and silu damp by 1 - sigmoid(x) (below 1e-6 relative for |x| <= 16; beyond, the term is negligible).
#if defined(HI_TARGET_NVIDIA) || defined(HI_TARGET_AMD)
HI_FN float hi_exp_fast(float x) { return __expf(x); }
#else
HI_FN float hi_exp_fast(float x) { return expf(x); }
#endif
// float sigmoid and silu: the fast exponential and hi_div (the approximate division on NVIDIA, as Triton's).
HI_FN float hi_sigmoid(float x) { return hi_div(1.0f, 1.0f + hi_exp_fast(-x)); }
HI_FN double hi_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
HI_FN float hi_silu(float x) { return hi_div(x, 1.0f + hi_exp_fast(-x)); }
HI_FN double hi_silu(double x) { return x / (1.0 + exp(-x)); }
HI_FN float hi_gelu(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }
HI_FN double hi_gelu(double x) { return 0.5 * x * (1.0 + erf(x * 0.70710678118654752)); }
/// float tanh-approximated gelu, 0.5 x (1 + tanh(u)), as x * sigmoid(2u), the same function: the fast exponential
/// and hi_div instead of tanhf take half the instructions of this otherwise compute-bound kernel, and avoid the
/// cancellation in 1 + tanh(u) for negative x.
HI_FN float hi_gelu_tanh(float x) {
  const float two_k = 1.5957691216057308f;  // 2 sqrt(2/pi)
  return hi_div(x, 1.0f + hi_exp_fast(-two_k * (x + 0.044715f * x * x * x)));
}
HI_FN double hi_gelu_tanh(double x) {
  const double k = 0.79788456080286536;
  return 0.5 * x * (1.0 + tanh(k * (x + 0.044715 * x * x * x)));
}
/// Ties of +0 and -0 keep the first operand (relu and clamp the input), as eager's CPU kernels do (std::max(x, 0),
/// std::min(std::max(x, lo), hi)): 1 / relu(-0.0) is -inf. NaN passes through.
template <class T> HI_FN T hi_relu(T x) { return x < T(0) ? T(0) : x; }
/// sign(NaN) is 0, as eager's CPU and CUDA kernels compute it ((0 < x) - (x < 0)), and sign(-0.0) is +0.
template <class T> HI_FN T hi_sign(T x) { return T((T(0) < x) - (x < T(0))); }
template <class T> HI_FN bool hi_isnan(T x) { return x != x; }
template <class T> HI_FN bool hi_isinf(T x) { return x == T(hi_inf_d()) || x == T(-hi_inf_d()); }
/// maximum/minimum propagate NaN, as torch.maximum and amax do; on a tie (+0 and -0) the generic forms keep `a`, as
/// relu and clamp do (eager's scalar path; its vector path keeps `b`, so eager itself differs by position).
template <class T> HI_FN T hi_maximum(T a, T b) { return a != a ? a : (b != b ? b : (a < b ? b : a)); }
template <class T> HI_FN T hi_minimum(T a, T b) { return a != a ? a : (b != b ? b : (b < a ? b : a)); }
#if defined(HI_TARGET_NVIDIA) && __CUDA_ARCH__ >= 800
/// One instruction on sm_80+ (max.NaN / min.NaN) instead of two compares and two selects: max-pooling windows and
/// max reductions chain one per element. A NaN comes out as the canonical NaN, and a tie of +0 and -0 may take
/// either zero (they compare equal).
HI_FN float hi_maximum(float a, float b) {
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}
HI_FN float hi_minimum(float a, float b) {
  float r;
  asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}
#endif
/// Python-style floor division and remainder (sign of the divisor).
template <class T> HI_FN T hi_floordiv(T a, T b) {
  T q = a / b;
  return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
}
/// Floating floor division as eager computes it (from fmod, so it is exact where floor(a / b) would round).
template <class T> HI_FN T hi_floordiv_fp(T a, T b) {
  if (b == T(0)) return a / b;
  const T m = hi_fmod(a, b);
  T d = (a - m) / b;
  if (m != T(0) && ((b < T(0)) != (m < T(0)))) d -= T(1);
  if (d == T(0)) return hi_copysign(T(0), a / b);
  T f = hi_floor(d);
  if (d - f > T(0.5)) f += T(1);
  return f;
}
HI_FN float hi_floordiv(float a, float b) { return hi_floordiv_fp(a, b); }
HI_FN double hi_floordiv(double a, double b) { return hi_floordiv_fp(a, b); }
template <class T> HI_FN T hi_remainder(T a, T b) {
  T r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
HI_FN float hi_remainder(float a, float b) { float r = fmodf(a, b); return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }
HI_FN double hi_remainder(double a, double b) { double r = fmod(a, b); return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }

/// Integer shifts as PyTorch's kernels: an amount below 0 or at least the bit width shifts everything out (0 for a
/// left shift, the sign fill for a right shift: arithmetic for signed types); a left shift wraps, done unsigned.
template <class T> struct hi_unsigned_of { typedef T type; };
template <> struct hi_unsigned_of<hi_i8> { typedef hi_u8 type; };
template <> struct hi_unsigned_of<hi_i16> { typedef unsigned short type; };
template <> struct hi_unsigned_of<hi_i32> { typedef unsigned type; };
template <> struct hi_unsigned_of<hi_i64> { typedef hi_u64 type; };
template <class T> HI_FN T hi_shift_left(T a, T b) {
  if ((hi_i64)b < 0 || (hi_i64)b >= (hi_i64)(8 * sizeof(T))) return T(0);
  return (T)((typename hi_unsigned_of<T>::type)a << b);
}
template <class T> HI_FN T hi_shift_right(T a, T b) {
  const int max_shift = 8 * (int)sizeof(T) - (T(-1) < T(0) ? 1 : 0);
  if ((hi_i64)b < 0 || (hi_i64)b >= max_shift) return (T)(a >> max_shift);
  return (T)(a >> b);
}

/// fmax/fmin ignore NaN: the other operand wins, NaN only when both are NaN (torch.fmax / torch.fmin).
template <class T> HI_FN T hi_fmax(T a, T b) { return a != a ? b : (b != b ? a : (a < b ? b : a)); }
template <class T> HI_FN T hi_fmin(T a, T b) { return a != a ? b : (b != b ? a : (b < a ? b : a)); }

/// digamma as PyTorch's calc_digamma: reflection for negative x, recurrence up to 10, then the asymptotic series.
template <class T> HI_FN T hi_digamma_impl(T x) {
  const T psi_10 = T(2.25175258906672110764);
  if (x == T(0)) return x != x ? x : (hi_float_to_bits((float)x) >> 31 ? T(hi_inf_d()) : T(-hi_inf_d()));
  if (x != x) return x;
  T result = T(0);
  if (x < T(0)) {
    if (x == hi_trunc(x)) return T(hi_nan_d());
    // digamma(x) = digamma(1 - x) - pi / tan(pi * x), with tan's argument reduced to the fraction (in double).
    const double r = (double)x - trunc((double)x);
    result = -(T)(3.14159265358979323846 / tan(3.14159265358979323846 * r));
    x = T(1) - x;
  }
  if (x == hi_inf_d()) return x;
  while (x < T(10)) {
    result -= T(1) / x;
    x += T(1);
  }
  if (x == T(10)) return result + psi_10;
  T y = T(0);
  if (x < T(1.0e17)) {
    const T z = T(1) / (x * x);
    T p = T(8.33333333333333333333E-2);
    p = p * z + T(-2.10927960927960927961E-2);
    p = p * z + T(7.57575757575757575758E-3);
    p = p * z + T(-4.16666666666666666667E-3);
    p = p * z + T(3.96825396825396825397E-3);
    p = p * z + T(-8.33333333333333333333E-3);
    p = p * z + T(8.33333333333333333333E-2);
    y = z * p;
  }
  return result + hi_log(x) - (T(0.5) / x) - y;
}
HI_FN float hi_digamma(float x) { return hi_digamma_impl(x); }
HI_FN double hi_digamma(double x) { return hi_digamma_impl(x); }

/// Hurwitz zeta(x, q) = sum over k >= 0 of (k + q)^-x, as PyTorch's zeta (Cephes): direct terms until the base
/// passes 9, then the Euler-Maclaurin tail, whose coefficients are (2j)! / B_2j (B: Bernoulli numbers). T is the
/// accumulation type: PyTorch's CPU kernel accumulates float inputs in double, its CUDA kernel in float.
template <class T> HI_FN T hi_zeta_impl(T x, T q) {
  const T machep = T(1.11022302462515654042e-16);
  const T A[] = {T(2.0 / (1.0 / 6)),
                 T(24.0 / (-1.0 / 30)),
                 T(720.0 / (1.0 / 42)),
                 T(40320.0 / (-1.0 / 30)),
                 T(3628800.0 / (5.0 / 66)),
                 T(479001600.0 / (-691.0 / 2730)),
                 T(87178291200.0 / (7.0 / 6)),
                 T(20922789888000.0 / (-3617.0 / 510)),
                 T(6402373705728000.0 / (43867.0 / 798)),
                 T(2432902008176640000.0 / (-174611.0 / 330)),
                 T(1.1240007277776077e21 / (854513.0 / 138)),
                 T(6.2044840173323941e23 / (-236364091.0 / 2730))};
  if (x == T(1)) return T(hi_inf_d());
  if (x < T(1)) return T(hi_nan_d());
  if (q <= T(0)) {
    if (q == hi_floor(q)) return T(hi_inf_d());
    if (x != hi_floor(x)) return T(hi_nan_d());
  }
  T s = hi_pow(q, -x), a = q, b = T(0);
  int i = 0;
  while (i < 9 || a <= T(9)) {
    i += 1;
    a += T(1);
    b = hi_pow(a, -x);
    s += b;
    if (-machep * s < b && b < machep * s) return s;
  }
  const T w = a;
  s += b * w / (x - T(1));
  s -= T(0.5) * b;
  a = T(1);
  T k = T(0);
  for (int j = 0; j < 12; ++j) {
    a *= x + k;
    b /= w;
    T t = a * b / A[j];
    s = s + t;
    if (hi_abs(t / s) < machep) return s;
    k += T(1);
    a *= x + k;
    b /= w;
    k += T(1);
  }
  return s;
}
HI_FN double hi_zeta(double x, double q) { return hi_zeta_impl(x, q); }
#if defined(HI_TARGET_CPU)
HI_FN float hi_zeta(float x, float q) { return (float)hi_zeta_impl((double)x, (double)q); }
#else
HI_FN float hi_zeta(float x, float q) { return hi_zeta_impl(x, q); }
#endif

/// erfinv on the cpu device, for PyTorch CPU's results (calc_erfinv, exact to double's rounding): Giles'
/// single-precision approximation ("Approximating the erfinv function", 2010), refined by Newton steps in double on
/// erf (|y| <= 0.5) or erfc (larger |y|, where erf(x) - y would cancel).
HI_FN double hi_erfinv_refine(double x, double y) {
  const double a = fabs(y), s = y < 0 ? -1.0 : 1.0;
  double v = fabs(x);
  if (!(v < 4.0)) v = 4.0;  // |y| within 2^-24 of 1 in double: start in the tail, erfc's Newton steps walk out
  const double deriv_scale = 1.12837916709551257390;  // 2 / sqrt(pi)
  for (int k = 0; k < (v >= 3.5 ? 6 : 2); ++k) {
    const double d = deriv_scale * exp(-v * v);
    if (!(d > 0)) break;
    const double r = a <= 0.5 ? erf(v) - a : (1.0 - a) - erfc(v);
    v -= r / d;
  }
  return s * v;
}
HI_FN float hi_erfinv_approx(float x) {
  float w = -logf((1.0f - x) * (1.0f + x)), p;
  if (w < 5.0f) {
    w = w - 2.5f;
    p = 2.81022636e-08f;
    p = 3.43273939e-07f + p * w;
    p = -3.5233877e-06f + p * w;
    p = -4.39150654e-06f + p * w;
    p = 0.00021858087f + p * w;
    p = -0.00125372503f + p * w;
    p = -0.00417768164f + p * w;
    p = 0.246640727f + p * w;
    p = 1.50140941f + p * w;
  } else {
    w = sqrtf(w) - 3.0f;
    p = -0.000200214257f;
    p = 0.000100950558f + p * w;
    p = 0.00134934322f + p * w;
    p = -0.00367342844f + p * w;
    p = 0.00573950773f + p * w;
    p = -0.0076224613f + p * w;
    p = 0.00943887047f + p * w;
    p = 1.00167406f + p * w;
    p = 2.83297682f + p * w;
  }
  return p * x;
}
HI_FN double hi_erfinv_cpu(double y) {
  if (y != y || y < -1.0 || y > 1.0) return hi_nan_d();
  if (y == 1.0 || y == -1.0) return y * hi_inf_d();
  if (y == 0.0) return y;
  return hi_erfinv_refine((double)hi_erfinv_approx((float)y), y);
}
#if defined(HI_TARGET_CPU)
HI_FN double hi_erfinv(double y) { return hi_erfinv_cpu(y); }
HI_FN float hi_erfinv(float y) { return (float)hi_erfinv_cpu((double)y); }
#else
/// GPU targets call the device math library's erfinvf / erfinv, as PyTorch's CUDA and ROCm kernels do: the same
/// results as eager there, in float for float (the double refinement above costs 30 times as much).
HI_FN double hi_erfinv(double y) { return erfinv(y); }
HI_FN float hi_erfinv(float y) { return erfinvf(y); }
#endif

// ---- out-of-line math: what kernels with many library math calls call (KernelPlan::outline_math) ----
/// The device math libraries' sin, pow, fmod, ... carry slow paths (argument reduction for large inputs, special
/// cases) that NVRTC and HIPRTC inline at every call: a kernel's compile time then grows faster than its number of
/// calls (a chain of 500 sins took minutes in NVRTC). Called through one non-inlined function per math function, each
/// body is compiled once per module. Templates: only those a module calls are instantiated.
#define HI_OUTLINED_1(f) template <class T> __device__ __noinline__ T f##_ool(T x) { return f(x); }
#define HI_OUTLINED_2(f) template <class T> __device__ __noinline__ T f##_ool(T a, T b) { return f(a, b); }
HI_OUTLINED_1(hi_exp) HI_OUTLINED_1(hi_exp2) HI_OUTLINED_1(hi_expm1) HI_OUTLINED_1(hi_log) HI_OUTLINED_1(hi_log2)
HI_OUTLINED_1(hi_log10) HI_OUTLINED_1(hi_log1p) HI_OUTLINED_1(hi_sin) HI_OUTLINED_1(hi_cos) HI_OUTLINED_1(hi_tan)
HI_OUTLINED_1(hi_tanh) HI_OUTLINED_1(hi_sigmoid) HI_OUTLINED_1(hi_erf) HI_OUTLINED_1(hi_gelu)
HI_OUTLINED_1(hi_gelu_tanh) HI_OUTLINED_1(hi_silu) HI_OUTLINED_1(hi_digamma) HI_OUTLINED_1(hi_erfinv)
HI_OUTLINED_1(asinf) HI_OUTLINED_1(acosf) HI_OUTLINED_1(atanf) HI_OUTLINED_1(sinhf) HI_OUTLINED_1(coshf)
HI_OUTLINED_1(asinhf) HI_OUTLINED_1(acoshf) HI_OUTLINED_1(atanhf) HI_OUTLINED_1(erfcf) HI_OUTLINED_1(lgammaf)
HI_OUTLINED_1(asin) HI_OUTLINED_1(acos) HI_OUTLINED_1(atan) HI_OUTLINED_1(sinh) HI_OUTLINED_1(cosh)
HI_OUTLINED_1(asinh) HI_OUTLINED_1(acosh) HI_OUTLINED_1(atanh) HI_OUTLINED_1(erfc) HI_OUTLINED_1(lgamma)
HI_OUTLINED_2(hi_pow) HI_OUTLINED_2(hi_fmod) HI_OUTLINED_2(hi_remainder) HI_OUTLINED_2(hi_zeta)
HI_OUTLINED_2(atan2f) HI_OUTLINED_2(hypotf) HI_OUTLINED_2(atan2) HI_OUTLINED_2(hypot)
#undef HI_OUTLINED_1
#undef HI_OUTLINED_2

// ---- atomic adds (scatter kernels): `v` added to *p; concurrent adds to one element all land, in any order ----
/// Compare-and-swap of a 32-bit word: the word's value before (the swap happened when that equals `expected`).
HI_FN unsigned hi_atomic_cas32(unsigned* w, unsigned expected, unsigned desired) {
#if defined(HI_TARGET_CPU)
  __atomic_compare_exchange_n(w, &expected, desired, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  return expected;
#else
  return atomicCAS(w, expected, desired);
#endif
}
HI_FN hi_bfloat16 hi_from_bits(hi_bfloat16, unsigned b) { hi_bfloat16 r; r.bits = (unsigned short)b; return r; }
HI_FN hi_half hi_from_bits(hi_half, unsigned b) { hi_half r; r.bits = (unsigned short)b; return r; }
template <class S> HI_FN S hi_from_bits(S, unsigned b) { return (S)b; }
HI_FN unsigned hi_to_bits(hi_bfloat16 v) { return v.bits; }
HI_FN unsigned hi_to_bits(hi_half v) { return v.bits; }
template <class S> HI_FN unsigned hi_to_bits(S v) { return (unsigned)v; }
HI_FN hi_bfloat16 hi_add_narrow(hi_bfloat16 a, float v) { return hi_make_bf16(hi_to_float(a) + v); }
HI_FN hi_half hi_add_narrow(hi_half a, float v) { return hi_make_half(hi_to_float(a) + v); }
template <class S, class V> HI_FN S hi_add_narrow(S a, V v) { return (S)(a + v); }
/// A 1- or 2-byte element: a CAS loop on the aligned 32-bit word that holds it (every target has that CAS); the sum
/// rounds to the element's type once per addition, as a native 16-bit atomic add does.
template <class S, class V> HI_FN void hi_atomic_add_narrow(S* p, V v) {
  unsigned* w = (unsigned*)((hi_u64)p & ~(hi_u64)3);
  const int shift = (int)((hi_u64)p & 3) * 8;
  const unsigned mask = (sizeof(S) == 1 ? 0xffu : 0xffffu) << shift;
  unsigned old = *(volatile unsigned*)w, assumed;
  do {
    assumed = old;
    const S cur = hi_from_bits(S(), (assumed & mask) >> shift);
    const unsigned sum = (hi_to_bits(hi_add_narrow(cur, v)) << shift) & mask;
    old = hi_atomic_cas32(w, assumed, (assumed & ~mask) | sum);
  } while (old != assumed);
}
#if defined(HI_TARGET_CPU)
template <class T> HI_FN void hi_atomic_add(T* p, T v) { __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
template <class T, class U> HI_FN void hi_atomic_add_float(T* p, T v) {
  U old = __atomic_load_n((U*)p, __ATOMIC_RELAXED), sum;
  do {
    T cur;
    __builtin_memcpy(&cur, &old, sizeof(T));
    cur += v;
    __builtin_memcpy(&sum, &cur, sizeof(T));
  } while (!__atomic_compare_exchange_n((U*)p, &old, sum, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
}
HI_FN void hi_atomic_add(float* p, float v) { hi_atomic_add_float<float, unsigned>(p, v); }
HI_FN void hi_atomic_add(double* p, double v) { hi_atomic_add_float<double, hi_u64>(p, v); }
#else
HI_FN void hi_atomic_add(float* p, float v) { atomicAdd(p, v); }
HI_FN void hi_atomic_add(double* p, double v) { atomicAdd(p, v); }
HI_FN void hi_atomic_add(int* p, int v) { atomicAdd(p, v); }
/// Two's complement: the unsigned 64-bit add is the signed one.
HI_FN void hi_atomic_add(hi_i64* p, hi_i64 v) { atomicAdd((hi_u64*)p, (hi_u64)v); }
HI_FN void hi_atomic_add(hi_i16* p, hi_i16 v) { hi_atomic_add_narrow(p, v); }
HI_FN void hi_atomic_add(hi_i8* p, hi_i8 v) { hi_atomic_add_narrow(p, v); }
HI_FN void hi_atomic_add(hi_u8* p, hi_u8 v) { hi_atomic_add_narrow(p, v); }
#endif
#if defined(HI_TARGET_NVIDIA) && __CUDA_ARCH__ >= 900
/// sm_90 adds bf16 in memory (what PyTorch's atomicAdd on __nv_bfloat16 compiles to there).
HI_FN void hi_atomic_add(hi_bfloat16* p, float v) {
  asm volatile("red.global.add.noftz.bf16 [%0], %1;" ::"l"(p), "h"(hi_bf16_bits(v)) : "memory");
}
#else
HI_FN void hi_atomic_add(hi_bfloat16* p, float v) { hi_atomic_add_narrow(p, v); }
#endif
#if defined(HI_TARGET_NVIDIA) && __CUDA_ARCH__ >= 700
HI_FN void hi_atomic_add(hi_half* p, float v) {
  asm volatile("red.global.add.noftz.f16 [%0], %1;" ::"l"(p), "h"(hi_half_bits(v)) : "memory");
}
#else
HI_FN void hi_atomic_add(hi_half* p, float v) { hi_atomic_add_narrow(p, v); }
#endif

// ---- reductions ----
template <class T> HI_FN T hi_lowest();
template <> HI_FN float hi_lowest<float>() { return -hi_inf_f(); }
template <> HI_FN double hi_lowest<double>() { return -hi_inf_d(); }
template <> HI_FN int hi_lowest<int>() { return -2147483647 - 1; }
template <> HI_FN hi_i64 hi_lowest<hi_i64>() { return -9223372036854775807LL - 1; }
template <class T> HI_FN T hi_highest();
template <> HI_FN float hi_highest<float>() { return hi_inf_f(); }
template <> HI_FN double hi_highest<double>() { return hi_inf_d(); }
template <> HI_FN int hi_highest<int>() { return 2147483647; }
template <> HI_FN hi_i64 hi_highest<hi_i64>() { return 9223372036854775807LL; }

struct hi_sum_op {
  template <class T> HI_FN static T identity() { return T(0); }
  template <class T> HI_FN static T combine(T a, T b) { return a + b; }
};
struct hi_prod_op {
  template <class T> HI_FN static T identity() { return T(1); }
  template <class T> HI_FN static T combine(T a, T b) { return a * b; }
};
struct hi_max_op {
  template <class T> HI_FN static T identity() { return hi_lowest<T>(); }
  template <class T> HI_FN static T combine(T a, T b) { return hi_maximum(a, b); }
};
struct hi_min_op {
  template <class T> HI_FN static T identity() { return hi_highest<T>(); }
  template <class T> HI_FN static T combine(T a, T b) { return hi_minimum(a, b); }
};
struct hi_any_op {
  template <class T> HI_FN static T identity() { return T(0); }
  template <class T> HI_FN static T combine(T a, T b) { return (a || b) ? T(1) : T(0); }
};
struct hi_all_op {
  template <class T> HI_FN static T identity() { return T(1); }
  template <class T> HI_FN static T combine(T a, T b) { return (a && b) ? T(1) : T(0); }
};

/// log(exp(a) + exp(b)) as eager's logcumsumexp step computes it: an infinity of one sign on both sides is the
/// result itself (inf - inf would be NaN), a NaN propagates.
struct hi_logaddexp_op {
  template <class T> HI_FN static T identity() { return hi_lowest<T>(); }
  template <class T> HI_FN static T combine(T a, T b) {
    const T lo = b != b ? b : (a < b ? a : b), hi = b != b ? b : (a < b ? b : a);
    if (lo != hi || (lo - lo) == T(0)) return hi + hi_log1p(hi_exp(lo - hi));
    return a;
  }
};

/// argmax/argmin accumulator: the extreme value so far and its flat position in the reduction domain, held in `I`
/// (int where the kernel plan proves every position fits: one shuffle and one compare fewer per step than int64).
template <class T, class I = hi_i64> struct hi_arg_acc {
  T v;
  I i;
};
template <class T, class I> HI_FN hi_arg_acc<T, I> hi_make_arg(T v, I i) {
  hi_arg_acc<T, I> r;
  r.v = v;
  r.i = i;
  return r;
}
template <class T, class I> HI_FN hi_arg_acc<T, I> hi_shfl_xor(hi_arg_acc<T, I> a, int lane_mask) {
  return hi_make_arg(hi_shfl_xor(a.v, lane_mask), hi_shfl_xor(a.i, lane_mask));
}
/// b where `take_b`, else a, selected member by member: a select of whole structs (`take_b ? b : a`) leaves them in
/// scratch memory on AMD GPUs.
template <class T, class I> HI_FN hi_arg_acc<T, I> hi_arg_select(bool take_b, hi_arg_acc<T, I> a, hi_arg_acc<T, I> b) {
  return hi_make_arg(take_b ? b.v : a.v, take_b ? b.i : a.i);
}
/// First position of the largest value, NaN counting as larger than everything (torch.argmax). The combine is a
/// selection by a total order (NaN first, then larger values, then lower positions), so partial results combine in
/// any grouping and order: across vector lanes, row slices, warps and split stages alike. +0 and -0 compare equal
/// (the lower position wins), as in eager.
struct hi_argmax_op {
  template <class A> HI_FN static A identity() {
    return hi_make_arg(hi_lowest<decltype(A().v)>(), hi_highest<decltype(A().i)>());
  }
  template <class T, class I> HI_FN static hi_arg_acc<T, I> combine(hi_arg_acc<T, I> a, hi_arg_acc<T, I> b) {
    const bool an = a.v != a.v, bn = b.v != b.v;
    const bool tie = (an && bn) || a.v == b.v;
    return hi_arg_select(tie ? b.i < a.i : (bn || b.v > a.v), a, b);
  }
};
/// First position of the smallest value, NaN counting as smaller than everything (torch.argmin).
struct hi_argmin_op {
  template <class A> HI_FN static A identity() {
    return hi_make_arg(hi_highest<decltype(A().v)>(), hi_highest<decltype(A().i)>());
  }
  template <class T, class I> HI_FN static hi_arg_acc<T, I> combine(hi_arg_acc<T, I> a, hi_arg_acc<T, I> b) {
    const bool an = a.v != a.v, bn = b.v != b.v;
    const bool tie = (an && bn) || a.v == b.v;
    return hi_arg_select(tie ? b.i < a.i : (bn || b.v < a.v), a, b);
  }
};

/// Online softmax (Milakov & Gimelshein): a row's running maximum m and the sum s of exp(x - m) over what it has
/// seen, in one pass; two partial results combine by rescaling both sums to the larger maximum, and an element costs
/// one exponential (two when it raises the maximum). Base2: the terms are exp2((x - m) * log2(e)), as the softmax
/// lowering writes exp. While everything seen is -inf, s stays 0 (exp(x - max) would be NaN there), and finish()
/// makes the row's sum NaN, as eager's is.
struct hi_softmax_acc {
  float m, s;
};
HI_FN hi_softmax_acc hi_make_softmax_acc(float m, float s) {
  hi_softmax_acc r;
  r.m = m;
  r.s = s;
  return r;
}
HI_FN hi_softmax_acc hi_shfl_xor(hi_softmax_acc a, int lane_mask) {
  return hi_make_softmax_acc(hi_shfl_xor(a.m, lane_mask), hi_shfl_xor(a.s, lane_mask));
}
template <int Base2> struct hi_online_softmax_op {
  HI_FN static float term(float d) { return Base2 ? hi_exp2(d * 1.44269504f) : hi_exp(d); }
  template <class A> HI_FN static A identity() { return hi_make_softmax_acc(hi_lowest<float>(), 0.0f); }
  /// One element: a new maximum (or NaN, which then stays) rescales the sum; -inf adds nothing.
  HI_FN static hi_softmax_acc add(hi_softmax_acc a, float x) {
    if (x > a.m || x != x) {
      a.s = a.s * term(a.m - x) + 1.0f;
      a.m = x;
    } else if (x != hi_lowest<float>()) {
      a.s += term(x - a.m);
    }
    return a;
  }
  HI_FN static hi_softmax_acc combine(hi_softmax_acc a, hi_softmax_acc b) {
    const float m = hi_maximum(a.m, b.m);
    if (m == hi_lowest<float>()) return hi_make_softmax_acc(m, 0.0f);
    return hi_make_softmax_acc(m, a.s * term(a.m - m) + b.s * term(b.m - m));
  }
  /// The row's result: a row of only -inf has the sum eager computes, exp(-inf - -inf) summed: NaN.
  HI_FN static hi_softmax_acc finish(hi_softmax_acc a) {
    if (a.m == hi_lowest<float>()) a.s = hi_nan_f();
    return a;
  }
};

/// Welford: the element count n, mean and sum of squared deviations m2 of what a row or column has seen, in one
/// pass; partial results combine as Chan et al. (the sum of squares about the mean, without a second pass over the
/// data). T is float or double.
template <class T> struct hi_welford_t {
  T n, mean, m2;
  /// The sum of what it has seen.
  HI_FN T sum() const { return n * mean; }
};
typedef hi_welford_t<float> hi_welford_acc;
template <class T> HI_FN hi_welford_t<T> hi_make_welford(T n, T mean, T m2) {
  hi_welford_t<T> r;
  r.n = n;
  r.mean = mean;
  r.m2 = m2;
  return r;
}
HI_FN hi_welford_acc hi_make_welford_acc(float n, float mean, float m2) { return hi_make_welford(n, mean, m2); }
template <class T> HI_FN hi_welford_t<T> hi_shfl_xor(hi_welford_t<T> a, int lane_mask) {
  return hi_make_welford(hi_shfl_xor(a.n, lane_mask), hi_shfl_xor(a.mean, lane_mask), hi_shfl_xor(a.m2, lane_mask));
}
/// A step that several accumulators take at the same count: n after it, and the weight w = c / n of the c elements
/// it adds (1 exactly for the first, which copies its piece). A column kernel's V neighbouring columns read the
/// same rows, so one weight serves them all and their steps divide nothing.
template <class T> struct hi_welford_weight {
  T n, w;
};
struct hi_welford_op {
  /// The weight of c more elements after n. The quotient is computed on both sides of the select: a branch around
  /// it would end the loop body's block there and keep the compiler from issuing the next rows' loads first.
  template <class T> HI_FN static hi_welford_weight<T> weight(T n, T c) {
    hi_welford_weight<T> s;
    s.n = n + c;
    const T w = hi_div(c, s.n);
    s.w = n == (T)0 ? (T)1 : w;
    return s;
  }
  /// One element x at the shared step s: add(a, x), the division done once in s.
  template <class T> HI_FN static hi_welford_t<T> add(hi_welford_t<T> a, hi_welford_weight<T> s, T x) {
    const T delta = x - a.mean;
    a.n = s.n;
    a.mean += delta * s.w;
    a.m2 += delta * (x - a.mean);
    return a;
  }
  /// A piece of c elements of mean mb whose squared deviations sum to m2b, at the shared step s: combine(a, piece)
  /// (c * delta * (mb - new mean) is Chan's delta^2 * n_a * c / n).
  template <class T> HI_FN static hi_welford_t<T> add(hi_welford_t<T> a, hi_welford_weight<T> s, T c, T mb, T m2b) {
    const T delta = mb - a.mean;
    a.n = s.n;
    a.mean += delta * s.w;
    a.m2 += m2b + c * delta * (mb - a.mean);
    return a;
  }
  /// combine(a, b) at the shared step s = weight(a.n, b.n); an empty b leaves a.
  template <class T> HI_FN static hi_welford_t<T> merge(hi_welford_t<T> a, hi_welford_weight<T> s, hi_welford_t<T> b) {
    if (b.n == (T)0) return a;
    return add(a, s, b.n, b.mean, b.m2);
  }
  template <class A> HI_FN static A identity() { return hi_make_welford<decltype(A::n)>(0, 0, 0); }
  template <class T> HI_FN static hi_welford_t<T> add(hi_welford_t<T> a, T x) {
    a.n += (T)1;
    const T delta = x - a.mean;
    a.mean += hi_div(delta, a.n);
    a.m2 += delta * (x - a.mean);
    return a;
  }
  /// One element x: add(a, x), so that column kernels accumulate elements and partials alike.
  template <class T> HI_FN static hi_welford_t<T> combine(hi_welford_t<T> a, T x) { return add(a, x); }
  template <class T> HI_FN static hi_welford_t<T> combine(hi_welford_t<T> a, hi_welford_t<T> b) {
    if (b.n == (T)0) return a;
    if (a.n == (T)0) return b;
    const T n = a.n + b.n, delta = b.mean - a.mean, wb = hi_div(b.n, n);
    return hi_make_welford(n, a.mean + delta * wb, a.m2 + b.m2 + delta * delta * a.n * wb);
  }
};

/// The sums of a row's deviations d = x - m from a first estimate m of its mean: sum(d * d) and sum(d). The mean is
/// then m + sum(d) / N and the squared deviations about it sum(d * d) - sum(d)^2 / N (the corrected two-pass
/// algorithm): exact for a row of equal values, and no cancellation when m is close.
struct hi_deviation_sums {
  float sq, d;
};
HI_FN hi_deviation_sums hi_make_deviation_sums(float sq, float d) {
  hi_deviation_sums r;
  r.sq = sq;
  r.d = d;
  return r;
}
HI_FN hi_deviation_sums hi_shfl_xor(hi_deviation_sums a, int lane_mask) {
  return hi_make_deviation_sums(hi_shfl_xor(a.sq, lane_mask), hi_shfl_xor(a.d, lane_mask));
}
struct hi_deviation_sums_op {
  template <class A> HI_FN static A identity() { return hi_make_deviation_sums(0.0f, 0.0f); }
  HI_FN static hi_deviation_sums combine(hi_deviation_sums a, hi_deviation_sums b) {
    return hi_make_deviation_sums(a.sq + b.sq, a.d + b.d);
  }
};
/// The squared deviations about the corrected mean, never below 0 (rounding could take them there); NaN stays NaN.
HI_FN float hi_corrected_m2(hi_deviation_sums a, float n) {
  const float m2 = a.sq - a.d * hi_div(a.d, n);
  return m2 < 0.0f ? 0.0f : m2;
}

/// Butterfly reduction across the warp; every lane ends with the result.
template <class Op, class T> HI_FN T hi_warp_reduce(T v) {
  for (int offset = HI_WARP_SIZE / 2; offset > 0; offset >>= 1) v = Op::combine(v, hi_shfl_xor(v, offset));
  return v;
}

/// Reduction across the block (blockDim.x a multiple of HI_WARP_SIZE, at most HI_WARP_SIZE warps); every thread
/// ends with the result. `smem` holds one T per warp, and no thread may still be reading it from an earlier
/// reduction: every thread has passed a barrier since (hi_block_reduce provides one).
template <class Op, class T> HI_FN T hi_block_reduce_free(T v, T* smem) {
  v = hi_warp_reduce<Op>(v);
  const int warps = (int)blockDim.x / HI_WARP_SIZE;
  if (warps <= 1) return v;
  const int lane = (int)threadIdx.x % HI_WARP_SIZE;
  const int warp = (int)threadIdx.x / HI_WARP_SIZE;
  if (lane == 0) smem[warp] = v;
  __syncthreads();
  v = lane < warps ? smem[lane] : Op::template identity<T>();
  return hi_warp_reduce<Op>(v);
}
/// hi_block_reduce_free after a barrier: `smem` may still be read by a previous reduction.
template <class Op, class T> HI_FN T hi_block_reduce(T v, T* smem) {
  if ((int)blockDim.x > HI_WARP_SIZE) __syncthreads();
  return hi_block_reduce_free<Op>(v, smem);
}

/// Reduction across aligned groups of `width` lanes of a warp (width a power of two, at most HI_WARP_SIZE); every
/// lane ends with its group's result. Used when several rows share a warp.
template <class Op, class T> HI_FN T hi_group_reduce(T v, int width) {
  for (int offset = width / 2; offset > 0; offset >>= 1) v = Op::combine(v, hi_shfl_xor(v, offset));
  return v;
}

// ---- Vector memory access: N consecutive elements moved with the widest loads the alignment allows. ----
template <int Bytes> struct hi_chunk;
template <> struct hi_chunk<16> { typedef hi_v16 type; };
template <> struct hi_chunk<8> { typedef unsigned long long type; };
template <> struct hi_chunk<4> { typedef unsigned int type; };
template <> struct hi_chunk<2> { typedef unsigned short type; };
template <> struct hi_chunk<1> { typedef unsigned char type; };

/// N elements of T (N * sizeof(T) a power of two) as `count` chunks of at most 16 bytes.
template <int N, class T> struct hi_vec_layout {
  static constexpr int bytes = N * (int)sizeof(T);
  static constexpr int chunk = bytes >= 16 ? 16 : bytes;
  static constexpr int count = bytes / chunk;
  typedef typename hi_chunk<chunk>::type type;
  union pack {
    type c[count];
    T e[N];
  };
};

HI_FN bool hi_aligned(const void* p, int bytes) { return ((hi_u64)p & (hi_u64)(bytes - 1)) == 0; }

/// Cache hints for loads (H of hi_load_vec / hi_load_vec_aligned), as Triton's eviction_policy: HI_EVICT_FIRST for
/// data this kernel reads once (its lines go first, so what the cache holds for others stays), HI_EVICT_LAST for data
/// that many blocks read (weights broadcast over rows). Targets with hints define HI_LOAD_HINTED and
/// hi_load_hinted<H>(chunk pointer); elsewhere hints change nothing.
#define HI_EVICT_NORMAL 0
#define HI_EVICT_FIRST 1
#define HI_EVICT_LAST 2

/// out[0..N) = p[0..N) for a pointer known to be aligned to the chunk size (Graph::align, workspace offsets): no
/// run-time check. Where the target copies unaligned chunks as wide accesses (HI_UNALIGNED_VECTOR_ACCESS, see the
/// target prelude) any pointer will do.
template <int N, int H = HI_EVICT_NORMAL, class T> HI_FN void hi_load_vec_aligned(const T* p, T* out) {
  typedef hi_vec_layout<N, T> L;
  typename L::pack u;
#if defined(HI_UNALIGNED_VECTOR_ACCESS)
  __builtin_memcpy(&u, p, L::bytes);
#elif defined(HI_LOAD_HINTED)
#pragma unroll
  for (int k = 0; k < L::count; ++k) u.c[k] = hi_load_hinted<H>((const typename L::type*)p + k);
#else
#pragma unroll
  for (int k = 0; k < L::count; ++k) u.c[k] = ((const typename L::type*)p)[k];
#endif
#pragma unroll
  for (int j = 0; j < N; ++j) out[j] = u.e[j];
}

/// p[0..N) = v[0..N), as hi_load_vec_aligned.
template <int N, class T> HI_FN void hi_store_vec_aligned(T* p, const T* v) {
  typedef hi_vec_layout<N, T> L;
  typename L::pack u;
#pragma unroll
  for (int j = 0; j < N; ++j) u.e[j] = v[j];
#if defined(HI_UNALIGNED_VECTOR_ACCESS)
  __builtin_memcpy(p, &u, L::bytes);
#else
#pragma unroll
  for (int k = 0; k < L::count; ++k) ((typename L::type*)p)[k] = u.c[k];
#endif
}

/// out[0..N) = p[0..N): vector loads when p is aligned to the chunk size (checked here, at run time), else scalar.
template <int N, int H = HI_EVICT_NORMAL, class T> HI_FN void hi_load_vec(const T* p, T* out) {
#if !defined(HI_UNALIGNED_VECTOR_ACCESS)
  if (!hi_aligned(p, hi_vec_layout<N, T>::chunk)) {
#pragma unroll
    for (int j = 0; j < N; ++j) out[j] = p[j];
    return;
  }
#endif
  hi_load_vec_aligned<N, H>(p, out);
}

/// p[0..N) = v[0..N), as hi_load_vec.
template <int N, class T> HI_FN void hi_store_vec(T* p, const T* v) {
#if !defined(HI_UNALIGNED_VECTOR_ACCESS)
  if (!hi_aligned(p, hi_vec_layout<N, T>::chunk)) {
#pragma unroll
    for (int j = 0; j < N; ++j) p[j] = v[j];
    return;
  }
#endif
  hi_store_vec_aligned<N>(p, v);
}

#endif  // HI_COMMON_PRELUDE
