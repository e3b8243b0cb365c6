#include "testing/reference_eval.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

#include "lowering/op_registry.h"
#include "testing/reference/families.h"
#include "testing/reference_context.h"

namespace hi {
namespace reference {
namespace {

// ---- element conversions -----------------------------------------------------------------------------------------

/// `v` rounded to a binary float format with `mant_bits` fraction bits and minimum normal exponent `emin`
/// (round-to-nearest-even, subnormals kept, overflow to inf). Done straight from double so there is one rounding.
double round_float_format(double v, int mant_bits, int emin, double max_finite) {
  if (!std::isfinite(v) || v == 0) return v;
  double a = std::fabs(v);
  int e = 0;
  std::frexp(a, &e);  // a = f * 2^e with f in [0.5, 1): the unbiased exponent is e - 1
  int quantum = std::max(e - 1, emin) - mant_bits;
  double r = std::ldexp(std::nearbyint(std::ldexp(a, -quantum)), quantum);  // nearbyint: ties to even by default
  if (r > max_finite) r = std::numeric_limits<double>::infinity();
  return std::copysign(r, v);
}

/// Truncation toward zero to int64 the way x86 does it: out-of-range and NaN give INT64_MIN (C++ leaves it undefined).

uint16_t half_bits(double v) {
  v = round_to_dtype(DType::Float16, v);
  uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  if (std::isnan(v)) return sign | 0x7E00;
  double a = std::fabs(v);
  if (std::isinf(a)) return sign | 0x7C00;
  if (a == 0) return sign;
  int e = 0;
  std::frexp(a, &e);
  int ex = e - 1;
  if (ex < -14) return sign | static_cast<uint16_t>(std::ldexp(a, 24));
  auto mant = static_cast<uint16_t>(std::ldexp(a, 10 - ex) - 1024);
  return sign | static_cast<uint16_t>((ex + 15) << 10) | mant;
}

double half_value(uint16_t h) {
  double sign = (h & 0x8000) ? -1.0 : 1.0;
  int ex = (h >> 10) & 0x1F;
  int mant = h & 0x3FF;
  if (ex == 0) return sign * std::ldexp(mant, -24);
  if (ex == 31) return mant ? std::numeric_limits<double>::quiet_NaN() : sign * std::numeric_limits<double>::infinity();
  return sign * std::ldexp(1024 + mant, ex - 25);
}

uint16_t bfloat16_bits(double v) {
  // A bfloat16 value is exactly a float32 whose low 16 bits are zero.
  auto f = static_cast<float>(round_to_dtype(DType::BFloat16, v));
  uint32_t bits = 0;
  std::memcpy(&bits, &f, 4);
  if (std::isnan(f)) return static_cast<uint16_t>((bits >> 16) | 0x7FC0);
  return static_cast<uint16_t>(bits >> 16);
}

double bfloat16_value(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f = 0;
  std::memcpy(&f, &bits, 4);
  return f;
}


// ---- shapes --------------------------------------------------------------------------------------------------------

std::vector<int64_t> row_major_strides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size());
  int64_t s = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = s;
    s *= std::max<int64_t>(sizes[i], 1);
  }
  return strides;
}

std::string value_str(double v) {
  std::ostringstream os;
  os.precision(9);
  os << v;
  return os.str();
}

// ---- operands and promotion ----------------------------------------------------------------------------------------

/// torch.result_type of the operands (ir/op_schema.h's ResultType: the compiler's one promotion rule).
DType result_type(const std::vector<const Operand*>& operands) {
  ResultType rt;
  for (const Operand* o : operands) {
    if (!o->tensor) {
      rt.add(o->number_type == DType::Float64 ? DType::Float32 : o->number_type, ResultType::Priority::WrappedNumber);
    } else {
      rt.add_tensor(o->tensor->dtype, o->tensor->rank());
    }
  }
  return rt.result().value_or(DType::Float32);
}

}  // namespace

double nan_max(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  return std::max(a, b);
}
double nan_min(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  return std::min(a, b);
}

namespace {

/// Eager's div_floor_floating: floor of the quotient computed from fmod, so it is exact where floor(a / b) rounds.
double floor_divide(double a, double b) {
  if (b == 0) return a / b;
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= 1;
  if (div == 0) return std::copysign(0.0, a / b);
  double f = std::floor(div);
  if (div - f > 0.5) f += 1;
  return f;
}

}  // namespace

/// Hurwitz zeta(x, q) by direct summation of (k + q)^-x for k < 10 or until the base passes 9, then the integral
/// and Euler-Maclaurin correction terms (Bernoulli numbers B_2j / (2j)!), in long double.
double hurwitz_zeta(double x, double q) {
  if (std::isnan(x) || std::isnan(q)) return std::nan("");
  if (x == 1) return INFINITY;
  if (x < 1) return std::nan("");
  if (q <= 0) {
    if (q == std::floor(q)) return INFINITY;
    if (x != std::floor(x)) return std::nan("");
  }
  long double s = 0, a = q;
  int k = 0;
  for (; k < 10 || a <= 9; ++k, a += 1) s += std::pow(a, -static_cast<long double>(x));
  // Tail from a: a^(1-x)/(x-1) + a^-x/2 + sum_j B_2j/(2j)! * (x)(x+1)...(x+2j-2) * a^(-x-2j+1).
  const long double bernoulli[] = {1.0L / 6,       -1.0L / 30, 1.0L / 42,      -1.0L / 30,     5.0L / 66,
                                   -691.0L / 2730, 7.0L / 6,   -3617.0L / 510, 43867.0L / 798, -174611.0L / 330};
  long double tail =
      std::pow(a, 1 - static_cast<long double>(x)) / (x - 1) + std::pow(a, -static_cast<long double>(x)) / 2;
  long double rising = x, fact = 2;  // x (x+1) ... (x+2j-2), (2j)!
  for (int j = 1; j <= 10; ++j) {
    tail += bernoulli[j - 1] / fact * rising * std::pow(a, -static_cast<long double>(x) - 2 * j + 1);
    rising *= (x + 2 * j - 1) * (x + 2 * j);
    fact *= (2 * j + 1) * (2 * j + 2);
  }
  return static_cast<double>(s + tail);
}

namespace {

/// Python's remainder: the sign of the divisor.
double remainder(double a, double b) {
  double r = std::fmod(a, b);
  return (r != 0 && (r < 0) != (b < 0)) ? r + b : r;
}

bool is_comparison(Binary op) { return op >= Binary::Eq; }

}  // namespace

/// digamma in double as PyTorch's calc_digamma: reflection, recurrence up to 10, asymptotic series.
double digamma(double x) {
  if (x == 0) return std::copysign(INFINITY, -x);
  if (std::isnan(x)) return x;
  if (x < 0) {
    if (x == std::trunc(x)) return std::numeric_limits<double>::quiet_NaN();
    double q = 0;
    double r = std::modf(x, &q);
    return digamma(1 - x) - M_PI / std::tan(M_PI * r);
  }
  if (std::isinf(x)) return x;
  double result = 0;
  while (x < 10) {
    result -= 1 / x;
    x += 1;
  }
  if (x == 10) return result + 2.25175258906672110764;
  static const double A[] = {8.33333333333333333333E-2,  -2.10927960927960927961E-2, 7.57575757575757575758E-3,
                             -4.16666666666666666667E-3, 3.96825396825396825397E-3,  -8.33333333333333333333E-3,
                             8.33333333333333333333E-2};
  double y = 0;
  if (x < 1.0e17) {
    double z = 1.0 / (x * x);
    double p = 0;
    for (double a : A) p = p * z + a;
    y = z * p;
  }
  return result + std::log(x) - 0.5 / x - y;
}

namespace {

/// erfinv in double: Winitzki's approximation, then Newton steps on erf (|y| <= 0.5) or erfc until they stop moving.
double erfinv(double y) {
  if (std::isnan(y) || y < -1 || y > 1) return std::numeric_limits<double>::quiet_NaN();
  if (y == 1 || y == -1) return y * INFINITY;
  if (y == 0) return y;
  double a = std::fabs(y);
  const double k = 0.147;
  double ln = std::log((1 - a) * (1 + a));
  double t = 2 / (M_PI * k) + ln / 2;
  double x = std::sqrt(std::sqrt(t * t - ln / k) - t);
  for (int i = 0; i < 100; ++i) {
    double d = 2 / std::sqrt(M_PI) * std::exp(-x * x);
    if (!(d > 0)) break;
    double r = a <= 0.5 ? std::erf(x) - a : (1 - a) - std::erfc(x);
    double step = r / d;
    x -= step;
    if (std::fabs(step) <= 1e-17 * x) break;
  }
  return std::copysign(x, y);
}

double apply_unary(Unary op, double v) {
  constexpr double kSqrt2OverPi = 0.79788456080286535588;
  switch (op) {
    case Unary::Neg: return -v;
    case Unary::Abs: return std::fabs(v);
    case Unary::Exp: return std::exp(v);
    case Unary::Log: return std::log(v);
    case Unary::Sqrt: return std::sqrt(v);
    case Unary::Rsqrt: return 1.0 / std::sqrt(v);
    case Unary::Tanh: return std::tanh(v);
    case Unary::Sigmoid: return 1.0 / (1.0 + std::exp(-v));
    case Unary::Relu: return v < 0 ? 0.0 : v;  // -0.0 and NaN pass through, as eager's std::max(x, 0)
    case Unary::Erf: return std::erf(v);
    case Unary::Sin: return std::sin(v);
    case Unary::Cos: return std::cos(v);
    case Unary::Reciprocal: return 1.0 / v;
    case Unary::Log1p: return std::log1p(v);
    case Unary::Expm1: return std::expm1(v);
    case Unary::Floor: return std::floor(v);
    case Unary::Ceil: return std::ceil(v);
    case Unary::LogicalNot: return v == 0 ? 1.0 : 0.0;
    case Unary::Silu: return v / (1.0 + std::exp(-v));
    case Unary::Exp2: return std::exp2(v);
    case Unary::Log2: return std::log2(v);
    case Unary::Trunc: return std::trunc(v);
    case Unary::Sign: return v > 0 ? 1.0 : (v < 0 ? -1.0 : 0.0);  // eager gives 0 for NaN
    case Unary::IsNan: return std::isnan(v) ? 1.0 : 0.0;
    case Unary::GeluErf: return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    case Unary::GeluTanh: return 0.5 * v * (1.0 + std::tanh(kSqrt2OverPi * (v + 0.044715 * v * v * v)));
    case Unary::Tan: return std::tan(v);
    case Unary::Atan: return std::atan(v);
    case Unary::Asin: return std::asin(v);
    case Unary::Acos: return std::acos(v);
    case Unary::Sinh: return std::sinh(v);
    case Unary::Cosh: return std::cosh(v);
    case Unary::Asinh: return std::asinh(v);
    case Unary::Acosh: return std::acosh(v);
    case Unary::Atanh: return std::atanh(v);
    case Unary::Erfc: return std::erfc(v);
    case Unary::Log10: return std::log10(v);
    case Unary::Round: return std::nearbyint(v);  // half to even
    case Unary::IsInf: return std::isinf(v) ? 1.0 : 0.0;
    case Unary::Lgamma: return std::lgamma(v);
    case Unary::Digamma: return digamma(v);
    case Unary::Erfinv: return erfinv(v);
  }
  return v;
}

// ---- the evaluator -------------------------------------------------------------------------------------------------


}  // namespace

Groups group_elements(const std::vector<int64_t>& sizes, const std::vector<bool>& reduced) {
  Groups g;
  std::vector<int64_t> kept_strides(sizes.size(), 0);
  for (size_t d = sizes.size(); d-- > 0;) {
    if (reduced[d]) {
      g.size *= sizes[d];
      continue;
    }
    kept_strides[d] = g.count;
    g.count *= sizes[d];
  }
  g.group.resize(static_cast<size_t>(numel_of(sizes)));
  for_each_index(sizes, [&](const std::vector<int64_t>& idx, int64_t flat) {
    int64_t k = 0;
    for (size_t d = 0; d < idx.size(); ++d) k += idx[d] * kept_strides[d];
    g.group[flat] = k;
  });
  return g;
}

std::vector<HostTensor> GraphEvaluator::binary(Binary op, bool has_alpha, bool reversed) {
  // The operands are the schema's first two arguments: self and other, or exponent (pow).
  const std::vector<ArgSchema>& params = args().schema->args;
  Operand a = operand(params.at(0).name);
  Operand b = operand(params.at(1).name);
  if (reversed) std::swap(a, b);  // rsub: other - alpha * self
  HostTensor out = output();
  // Arithmetic computes in the result dtype (the meta's); comparisons in the operands' promoted dtype.
  DType compute = is_comparison(op) ? result_type({&a, &b}) : out.dtype;
  if (op == Binary::Div && !is_floating(compute)) compute = DType::Float32;
  // CPU eager converts a Python-number operand to the computation dtype (0.1 becomes half 0.1 for a half tensor);
  // CUDA eager and Inductor keep it in float32, which can differ by one ulp of the result.
  DType number_type = compute;
  bool integral = !is_floating(compute);
  std::vector<double> x = broadcast(a, out.sizes, compute, number_type);
  std::vector<double> y = broadcast(b, out.sizes, compute, number_type);
  double alpha = 1;
  if (has_alpha && args().given("alpha")) {
    Operand al = operand("alpha");
    if (al.tensor) fail("argument 'alpha' must be a number");
    alpha = round_to_dtype(opmath_type(compute), al.number);  // eager keeps alpha in opmath precision
  }
  for (size_t i = 0; i < x.size(); ++i) {
    double u = x[i], v = y[i], r = 0;
    if (integral && (op == Binary::FloorDiv || op == Binary::TruncDiv || op == Binary::Remainder ||
                     op == Binary::Fmod || op == Binary::BitwiseAnd || op == Binary::BitwiseOr ||
                     op == Binary::BitwiseXor)) {
      int64_t p = to_int64(u), q = to_int64(v);
      if (q == 0 && op != Binary::BitwiseAnd && op != Binary::BitwiseOr && op != Binary::BitwiseXor)
        fail("integer division by zero");
      int64_t k = 0;
      switch (op) {
        case Binary::TruncDiv: k = p / q; break;
        case Binary::FloorDiv: k = p / q - ((p % q != 0 && ((p < 0) != (q < 0))) ? 1 : 0); break;
        case Binary::Fmod: k = p % q; break;
        case Binary::Remainder: k = p % q; if (k != 0 && ((k < 0) != (q < 0))) k += q; break;
        case Binary::BitwiseAnd: k = p & q; break;
        case Binary::BitwiseOr: k = p | q; break;
        default: k = p ^ q; break;
      }
      out.storage[i] = round_to_dtype(out.dtype, static_cast<double>(k));
      continue;
    }
    if (op == Binary::ShiftLeft || op == Binary::ShiftRight) {
      // PyTorch's shifts: amounts outside [0, bits) shift everything out (a right shift keeps the sign fill, one bit
      // short of the width for signed types); a left shift wraps.
      if (!integral || compute == DType::Bool) fail("shifts need integer operands");
      const int64_t p = to_int64(u), q = to_int64(v), bits = 8 * dtype_bytes(compute);
      int64_t k = 0;
      if (op == Binary::ShiftLeft) {
        k = q < 0 || q >= bits ? 0 : static_cast<int64_t>(static_cast<uint64_t>(p) << q);
      } else {
        const int64_t max_shift = bits - (compute == DType::UInt8 ? 0 : 1);
        k = p >> (q < 0 || q >= max_shift ? max_shift : q);
      }
      out.storage[i] = round_to_dtype(out.dtype, static_cast<double>(k));
      continue;
    }
    if (integral && op == Binary::Pow) {
      // PyTorch's powi: a Python-number exponent below zero is an error, a tensor one gives 1, +-1 or 0; otherwise
      // by squaring, wrapping.
      int64_t p = to_int64(u), q = to_int64(v);
      if (q < 0 && !b.tensor) fail("integers to negative integer powers are not allowed");
      uint64_t k = 1;
      if (q < 0) {
        k = p == 1 ? 1 : p == -1 ? static_cast<uint64_t>(q % 2 ? -1 : 1) : 0;
      } else {
        for (uint64_t x = static_cast<uint64_t>(p), e = static_cast<uint64_t>(q); e; e >>= 1, x *= x)
          if (e & 1) k *= x;
      }
      // The narrower types' values are the low bits, exact in a double once cut to 32.
      const int64_t w = wrapping(k);
      out.storage[i] =
          round_to_dtype(out.dtype, out.dtype == DType::Int64 ? static_cast<double>(w) : static_cast<int32_t>(w));
      continue;
    }
    if (integral && (op == Binary::Add || op == Binary::Sub || op == Binary::Mul)) {
      // Integer arithmetic wraps; do it in int64 so products beyond 2^53 still wrap like eager.
      auto p = static_cast<uint64_t>(to_int64(u)), q = static_cast<uint64_t>(to_int64(v));
      auto k = static_cast<uint64_t>(to_int64(alpha));
      if (op == Binary::Add) r = static_cast<double>(wrapping(p + k * q));
      if (op == Binary::Sub) r = static_cast<double>(wrapping(p - k * q));
      if (op == Binary::Mul) r = static_cast<double>(wrapping(p * q));
      out.storage[i] = round_to_dtype(out.dtype, r);
      continue;
    }
    switch (op) {
      case Binary::Add: r = u + alpha * v; break;
      case Binary::Sub: r = u - alpha * v; break;
      case Binary::Mul: r = u * v; break;
      case Binary::Div: r = u / v; break;
      case Binary::Pow:
        r = std::pow(u, v);
        break;
      case Binary::Maximum: r = nan_max(u, v); break;
      case Binary::Minimum: r = nan_min(u, v); break;
      case Binary::Eq: r = u == v; break;
      case Binary::Ne: r = u != v; break;
      case Binary::Lt: r = u < v; break;
      case Binary::Le: r = u <= v; break;
      case Binary::Gt: r = u > v; break;
      case Binary::Ge: r = u >= v; break;
      case Binary::LogicalAnd: r = (u != 0) && (v != 0); break;
      case Binary::LogicalOr: r = (u != 0) || (v != 0); break;
      case Binary::LogicalXor: r = (u != 0) != (v != 0); break;
      case Binary::FloorDiv: r = floor_divide(u, v); break;
      case Binary::TruncDiv:  // eager rounds a quotient of two tensors to their type, not one by a Python number
        r = std::trunc(b.tensor ? round_to_dtype(compute, u / v) : u / v);
        break;
      case Binary::Remainder: r = remainder(u, v); break;
      case Binary::Fmod: r = std::fmod(u, v); break;
      case Binary::Atan2: r = std::atan2(u, v); break;
      case Binary::Hypot: r = std::hypot(u, v); break;
      case Binary::Fmax: r = std::isnan(u) ? v : (std::isnan(v) ? u : std::max(u, v)); break;
      case Binary::Fmin: r = std::isnan(u) ? v : (std::isnan(v) ? u : std::min(u, v)); break;
      case Binary::Copysign: r = std::copysign(u, v); break;
      case Binary::Zeta:
        r = hurwitz_zeta(u, v);
        break;
      case Binary::Nextafter:
        if (out.dtype == DType::Float64) r = std::nextafter(u, v);
        else if (out.dtype == DType::Float32) r = std::nextafterf(static_cast<float>(u), static_cast<float>(v));
        else fail("nextafter is only supported for float32 and float64");
        break;
      case Binary::BitwiseAnd: case Binary::BitwiseOr: case Binary::BitwiseXor:
        fail("bitwise ops need integer or bool operands");
      case Binary::ShiftLeft: case Binary::ShiftRight: break;  // handled above
    }
    out.storage[i] = round_to_dtype(out.dtype, r);
  }
  return {out};
}

std::vector<HostTensor> GraphEvaluator::unary(Unary op) {
  const HostTensor& self = tensor("self");
  HostTensor out = output();
  // Integer input to a floating op (exp of an int tensor) is converted to the float result type first.
  DType compute = is_floating(out.dtype) ? out.dtype : self.dtype;
  if (op == Unary::IsNan || op == Unary::IsInf || op == Unary::LogicalNot) compute = self.dtype;
  std::vector<double> v = self.values();
  if (static_cast<int64_t>(v.size()) != out.numel()) fail("output meta size differs from the input's");
  for (size_t i = 0; i < v.size(); ++i)
    out.storage[i] = round_to_dtype(out.dtype, apply_unary(op, round_to_dtype(compute, v[i])));
  return {out};
}

std::vector<HostTensor> GraphEvaluator::clamp() {
  Operand self = operand("self");
  // The bounds the overload has (clamp_min: min, clamp_max: max), unless None.
  auto bound = [&](const char* name) -> std::optional<Operand> {
    if (args().schema->arg_index(name) < 0 || !args().given(name)) return std::nullopt;
    return operand(name);
  };
  std::optional<Operand> lo = bound("min"), hi = bound("max");
  HostTensor out = output();
  std::vector<double> v = broadcast(self, out.sizes, out.dtype, out.dtype);
  if (lo) {
    std::vector<double> l = broadcast(*lo, out.sizes, out.dtype, out.dtype);
    for (size_t i = 0; i < v.size(); ++i) v[i] = nan_max(v[i], l[i]);
  }
  if (hi) {
    std::vector<double> h = broadcast(*hi, out.sizes, out.dtype, out.dtype);
    for (size_t i = 0; i < v.size(); ++i) v[i] = nan_min(v[i], h[i]);
  }
  return {output_from_values(0, v)};
}

std::vector<HostTensor> GraphEvaluator::where() {
  Operand cond = operand("condition");
  Operand self = operand("self");
  Operand other = operand("other");
  HostTensor out = output();
  std::vector<double> k = broadcast(cond, out.sizes, DType::Bool, DType::Bool);
  std::vector<double> x = broadcast(self, out.sizes, out.dtype, out.dtype);
  std::vector<double> y = broadcast(other, out.sizes, out.dtype, out.dtype);
  for (size_t i = 0; i < k.size(); ++i) out.storage[i] = k[i] != 0 ? x[i] : y[i];
  return {out};
}

std::vector<HostTensor> GraphEvaluator::convert() {
  // The input is the schema's first argument: self, or a (prims.convert_element_type).
  const HostTensor& self = tensor(args().schema->args.at(0).name);
  HostTensor out = output();
  if (out.sizes != self.sizes) fail("output meta shape " + shape_str(out.sizes) + " differs from the input's " +
                                    shape_str(self.sizes));
  return {output_from_values(0, self.values())};
}

/// Two-pass mean and variance per group; variance divides by max(0, N - correction) as eager does.
void moments(const std::vector<double>& v, const Groups& g, double correction, std::vector<double>& mean,
             std::vector<double>& variance) {
  mean.assign(static_cast<size_t>(g.count), 0.0);
  variance.assign(static_cast<size_t>(g.count), 0.0);
  for (size_t i = 0; i < v.size(); ++i) mean[g.group[i]] += v[i];
  for (double& m : mean) m /= static_cast<double>(g.size);
  for (size_t i = 0; i < v.size(); ++i) {
    double d = v[i] - mean[g.group[i]];
    variance[g.group[i]] += d * d;
  }
  double denom = std::max(0.0, static_cast<double>(g.size) - correction);
  for (double& s : variance) s /= denom;
}

// ---- pointwise ops with their own element loops --------------------------------------------------------------------

std::vector<HostTensor> GraphEvaluator::elementwise(const std::function<double(double)>& fn) {
  const HostTensor& self = tensor("self");
  HostTensor out = output();
  DType compute = opmath_type(is_floating(out.dtype) ? out.dtype : self.dtype);
  std::vector<double> v = self.values();
  for (double& x : v) x = fn(round_to_dtype(compute, x));
  return {output_from_values(0, v)};
}

/// Reduction of `self` over `dims` (all when empty / None) with `fn(acc, value, position)`; `init` starts each group.
/// Positions are row-major over the reduced dims.
std::vector<double> GraphEvaluator::fold(const HostTensor& self, const std::optional<std::vector<int64_t>>& dims,
                                         double init,
                                         const std::function<double(double, double, int64_t, int64_t&)>& fn,
                                         std::vector<int64_t>* positions) const {
  std::vector<bool> reduced = reduced_dims(dims, self.rank());
  Groups g = group_elements(self.sizes, reduced);
  std::vector<double> acc(static_cast<size_t>(g.count), init);
  std::vector<int64_t> pos(static_cast<size_t>(g.count), -1), seen(static_cast<size_t>(g.count), 0);
  std::vector<double> v = self.values();
  for (size_t i = 0; i < v.size(); ++i) {
    int64_t k = g.group[i];
    acc[k] = fn(acc[k], v[i], seen[k]++, pos[k]);
  }
  if (positions) *positions = pos;
  return acc;
}

/// An index value checked against `size` and wrapped when negative.
int64_t GraphEvaluator::checked_index(double v, int64_t size) const {
  auto i = to_int64(v);
  if (i < -size || i >= size) fail("index " + std::to_string(i) + " out of range for size " + std::to_string(size));
  return i < 0 ? i + size : i;
}

std::vector<HostTensor> GraphEvaluator::run() {
  std::vector<std::string> problems = verify_graph(g_);
  if (!problems.empty()) throw std::runtime_error("reference_eval: invalid graph: " + problems.front());
  std::vector<int> placeholders = g_.placeholders();
  if (placeholders.size() != inputs_.size())
    throw std::runtime_error("reference_eval: the graph has " + std::to_string(placeholders.size()) +
                             " placeholders, got " + std::to_string(inputs_.size()) + " inputs");
  values_.resize(g_.nodes.size());
  size_t next_input = 0;
  for (const Node& n : g_.nodes) {
    node_ = &n;
    auto& slot = values_[&n - g_.nodes.data()];
    if (n.kind == NodeKind::Placeholder) {
      const HostTensor& in = inputs_[next_input++];
      const TensorMeta& m = out_meta();
      if (in.dtype != m.dtype)
        fail("input has dtype " + std::string(dtype_name(in.dtype)) + ", the placeholder expects " +
             std::string(dtype_name(m.dtype)));
      if (in.sizes != concrete(m.sizes, "placeholder"))
        fail("input has shape " + shape_str(in.sizes) + ", the placeholder expects " +
             shape_str(concrete(m.sizes, "placeholder")));
      if (in.strides.size() != in.sizes.size() ||
          HostTensor::storage_size(in.sizes, in.strides, in.offset) > static_cast<int64_t>(in.storage.size()))
        fail("input's strides/offset reach past its storage");
      input_of_node_[static_cast<int>(&n - g_.nodes.data())] = next_input - 1;
      slot.push_back(HostTensor::from_values(in.dtype, in.sizes, in.values()));
      continue;
    }
    const ReferenceFn* fn = reference_table().find(n.target);
    if (!fn) fail("the reference interpreter does not know this op");
    BoundArgs bound = bind_args(n);
    args_ = &bound;
    slot = (*fn)(*this, bound);
    args_ = nullptr;
  }
  node_ = nullptr;
  std::vector<HostTensor> outputs;
  for (const ValueRef& r : g_.outputs) outputs.push_back(value(r));
  return outputs;
}

std::string shape_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

void ReferenceTable::add(const std::string& qualified_name, ReferenceFn fn) {
  if (!fns_.emplace(qualified_name, std::move(fn)).second) {
    throw std::logic_error("reference table: " + qualified_name + " is registered twice");
  }
}

const ReferenceFn* ReferenceTable::find(std::string_view qualified_name) const {
  auto it = fns_.find(qualified_name);
  return it == fns_.end() ? nullptr : &it->second;
}

std::vector<std::string> ReferenceTable::names() const {
  std::vector<std::string> out;
  for (const auto& [name, fn] : fns_) out.push_back(name);
  return out;
}

const ReferenceTable& reference_table() {
  static const ReferenceTable table = [] {
    ReferenceTable t;
    register_all_reference_families(t);
    return t;
  }();
  return table;
}

}  // namespace reference

std::vector<std::string> reference_ops() { return reference::reference_table().names(); }

using reference::bfloat16_bits;
using reference::bfloat16_value;
using reference::for_each_index;
using reference::GraphEvaluator;
using reference::half_bits;
using reference::half_value;
using reference::numel_of;
using reference::round_float_format;
using reference::row_major_strides;
using reference::shape_str;
using reference::to_int64;
using reference::value_str;

// ---- HostTensor ------------------------------------------------------------------------------------------------------

int64_t HostTensor::numel() const { return numel_of(sizes); }

int64_t HostTensor::storage_index(const std::vector<int64_t>& idx) const {
  int64_t k = offset;
  for (size_t d = 0; d < sizes.size(); ++d) k += idx[d] * strides[d];
  return k;
}

std::vector<double> HostTensor::values() const {
  std::vector<double> out(static_cast<size_t>(numel()));
  for_each_index(sizes, [&](const std::vector<int64_t>& idx, int64_t flat) { out[flat] = at(idx); });
  return out;
}

int64_t HostTensor::storage_size(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
                                 int64_t offset) {
  if (numel_of(sizes) == 0) return offset;
  int64_t last = offset;
  for (size_t d = 0; d < sizes.size(); ++d) last += (sizes[d] - 1) * strides.at(d);
  return last + 1;
}

HostTensor HostTensor::contiguous(DType dtype, std::vector<int64_t> sizes) {
  HostTensor t;
  t.dtype = dtype;
  t.strides = row_major_strides(sizes);
  t.storage.assign(static_cast<size_t>(numel_of(sizes)), 0.0);
  t.sizes = std::move(sizes);
  return t;
}

HostTensor HostTensor::from_values(DType dtype, std::vector<int64_t> sizes, const std::vector<double>& values) {
  HostTensor t = contiguous(dtype, std::move(sizes));
  if (values.size() != t.storage.size())
    throw std::invalid_argument("HostTensor::from_values: " + std::to_string(values.size()) +
                                " values for shape " + shape_str(t.sizes));
  for (size_t i = 0; i < values.size(); ++i) t.storage[i] = round_to_dtype(dtype, values[i]);
  return t;
}

double round_to_dtype(DType dtype, double v) {
  switch (dtype) {
    case DType::Float64: return v;
    case DType::Float32: return static_cast<double>(static_cast<float>(v));
    case DType::Float16: return round_float_format(v, 10, -14, 65504.0);
    case DType::BFloat16: return round_float_format(v, 7, -126, std::ldexp(255.0, 120));
    case DType::Bool: return v != 0 ? 1.0 : 0.0;  // NaN != 0: true, as bool(nan) in PyTorch
    case DType::Int64: return static_cast<double>(to_int64(v));
    case DType::Int32: return static_cast<int32_t>(to_int64(v));
    case DType::Int16: return static_cast<int16_t>(to_int64(v));
    case DType::Int8: return static_cast<int8_t>(to_int64(v));
    case DType::UInt8: return static_cast<uint8_t>(to_int64(v));
  }
  return v;
}

std::vector<HostTensor> evaluate_graph(const Graph& g, const std::vector<HostTensor>& inputs) {
  return GraphEvaluator(g, inputs).run();
}

// ---- raw bytes -------------------------------------------------------------------------------------------------------

namespace {

template <class T>
void put(char* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}
template <class T>
T get(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

}  // namespace

std::vector<char> to_bytes(const HostTensor& t) {
  const int w = dtype_bytes(t.dtype);
  std::vector<char> out(t.storage.size() * w);
  for (size_t i = 0; i < t.storage.size(); ++i) {
    char* p = out.data() + i * w;
    double v = round_to_dtype(t.dtype, t.storage[i]);
    switch (t.dtype) {
      case DType::Float64: put<double>(p, v); break;
      case DType::Float32: put<float>(p, static_cast<float>(v)); break;
      case DType::Float16: put<uint16_t>(p, half_bits(v)); break;
      case DType::BFloat16: put<uint16_t>(p, bfloat16_bits(v)); break;
      case DType::Int64: put<int64_t>(p, to_int64(v)); break;
      case DType::Int32: put<int32_t>(p, static_cast<int32_t>(v)); break;
      case DType::Int16: put<int16_t>(p, static_cast<int16_t>(v)); break;
      case DType::Int8: put<int8_t>(p, static_cast<int8_t>(v)); break;
      case DType::UInt8: put<uint8_t>(p, static_cast<uint8_t>(v)); break;
      case DType::Bool: put<uint8_t>(p, v != 0 ? 1 : 0); break;
    }
  }
  return out;
}

HostTensor from_bytes(DType dtype, std::vector<int64_t> sizes, std::vector<int64_t> strides, int64_t offset,
                      const void* data, size_t storage_elements) {
  if (strides.size() != sizes.size())
    throw std::invalid_argument("from_bytes: " + std::to_string(strides.size()) + " strides for shape " +
                                shape_str(sizes));
  if (HostTensor::storage_size(sizes, strides, offset) > static_cast<int64_t>(storage_elements))
    throw std::invalid_argument("from_bytes: layout " + shape_str(sizes) + " strides " + shape_str(strides) +
                                " offset " + std::to_string(offset) + " reaches past " +
                                std::to_string(storage_elements) + " storage elements");
  HostTensor t;
  t.dtype = dtype;
  t.sizes = std::move(sizes);
  t.strides = std::move(strides);
  t.offset = offset;
  t.storage.resize(storage_elements);
  const int w = dtype_bytes(dtype);
  const char* base = static_cast<const char*>(data);
  for (size_t i = 0; i < storage_elements; ++i) {
    const char* p = base + i * w;
    double& v = t.storage[i];
    switch (dtype) {
      case DType::Float64: v = get<double>(p); break;
      case DType::Float32: v = get<float>(p); break;
      case DType::Float16: v = half_value(get<uint16_t>(p)); break;
      case DType::BFloat16: v = bfloat16_value(get<uint16_t>(p)); break;
      case DType::Int64: v = static_cast<double>(get<int64_t>(p)); break;
      case DType::Int32: v = get<int32_t>(p); break;
      case DType::Int16: v = get<int16_t>(p); break;
      case DType::Int8: v = get<int8_t>(p); break;
      case DType::UInt8: v = get<uint8_t>(p); break;
      case DType::Bool: v = get<uint8_t>(p) != 0 ? 1.0 : 0.0; break;
    }
  }
  return t;
}

// ---- random inputs ---------------------------------------------------------------------------------------------------

HostTensor random_tensor(DType dtype, std::vector<int64_t> sizes, std::vector<int64_t> strides, int64_t offset,
                         uint64_t seed) {
  if (strides.size() != sizes.size())
    throw std::invalid_argument("random_tensor: " + std::to_string(strides.size()) + " strides for shape " +
                                shape_str(sizes));
  HostTensor t;
  t.dtype = dtype;
  t.storage.resize(static_cast<size_t>(HostTensor::storage_size(sizes, strides, offset)));
  t.sizes = std::move(sizes);
  t.strides = std::move(strides);
  t.offset = offset;
  uint64_t state = seed;
  auto next = [&state] {  // splitmix64
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  for (double& v : t.storage) {
    uint64_t r = next();
    if (is_floating(dtype)) v = round_to_dtype(dtype, -2.0 + 4.0 * std::ldexp(static_cast<double>(r >> 11), -53));
    else if (dtype == DType::Bool) v = static_cast<double>(r & 1);
    else if (dtype == DType::UInt8) v = static_cast<double>(r % 17);
    else v = static_cast<double>(r % 17) - 8.0;
  }
  return t;
}

HostTensor random_tensor(DType dtype, std::vector<int64_t> sizes, uint64_t seed) {
  std::vector<int64_t> strides = row_major_strides(sizes);
  return random_tensor(dtype, std::move(sizes), std::move(strides), 0, seed);
}

// ---- comparisons -----------------------------------------------------------------------------------------------------

namespace {

/// |a - b| with NaN == NaN and equal infinities at 0, other non-finite differences at infinity.
double element_error(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0.0 : INFINITY;
  if (std::isinf(a) || std::isinf(b)) return a == b ? 0.0 : INFINITY;
  return std::fabs(a - b);
}

}  // namespace

double max_abs_error(const HostTensor& a, const HostTensor& b) {
  if (a.sizes != b.sizes)
    throw std::invalid_argument("max_abs_error: shapes " + shape_str(a.sizes) + " and " + shape_str(b.sizes) +
                                " differ");
  double worst = 0;
  for_each_index(a.sizes, [&](const std::vector<int64_t>& idx, int64_t) {
    worst = std::max(worst, element_error(a.at(idx), b.at(idx)));
  });
  return worst;
}

bool all_close(const HostTensor& actual, const HostTensor& expected, double rtol, double atol, std::string* why) {
  if (actual.sizes != expected.sizes) {
    if (why) *why = "shape " + shape_str(actual.sizes) + ", expected " + shape_str(expected.sizes);
    return false;
  }
  int64_t bad = 0;
  double worst = 0;
  std::string first;
  for_each_index(actual.sizes, [&](const std::vector<int64_t>& idx, int64_t) {
    double a = actual.at(idx), e = expected.at(idx);
    double err = element_error(a, e);
    worst = std::max(worst, err);
    bool ok = std::isfinite(err) && (err == 0 || err <= atol + rtol * std::fabs(e));
    if (ok) return;
    if (bad++ == 0) first = "at " + shape_str(idx) + ": actual " + value_str(a) + ", expected " + value_str(e);
  });
  if (bad == 0) return true;
  if (why)
    *why = first + " (" + std::to_string(bad) + " of " + std::to_string(actual.numel()) +
           " elements differ, max abs error " + value_str(worst) + ")";
  return false;
}

}  // namespace hi
