// Normalizations: softmax and log_softmax over a dim, layer norm, group norm, batch norm (inference, training with
// running statistics, training without). Statistics accumulate in float32 (float64 for double input), two-pass.
#include <cmath>

#include "lowering/lowering_context.h"
#include "lowering/op_registry.h"

namespace hi {
namespace {

using lowering::compute_type;
using lowering::count_value;
using lowering::GraphLowering;
using lowering::Moments;
using lowering::moments;
using lowering::squeeze_dims;
using lowering::TensorValue;

/// The three batch norm overloads: _native_batch_norm_legit_no_training (running statistics normalise),
/// _native_batch_norm_legit_functional (running statistics given, and returned updated when training) and
/// _native_batch_norm_legit.no_stats (always training, no running statistics).
enum class BatchNormVariant { NoTraining, Functional, NoStats };

Metas softmax(const MetaInference& m) {
  TensorMeta in = m.tensor("self");
  m.wrap_dim("dim", m.int_arg("dim"), in.rank());
  m.require_floating("self", in.dtype, "softmax");
  DType t = in.dtype;
  if (m.arg("half_to_float").boolean()) {
    if (t != DType::Float16 && t != DType::BFloat16) {
      m.fail("half_to_float", "is only supported for float16/bfloat16 input, got " + std::string(dtype_name(t)));
    }
    t = DType::Float32;
  }
  return one(t, in.sizes);
}

Metas native_layer_norm(const MetaInference& m) {
  TensorMeta in = m.tensor("input");
  const std::vector<Index>& normalized = m.arg("normalized_shape").ints();
  int64_t axis = in.rank() - static_cast<int64_t>(normalized.size());
  bool fits = !normalized.empty() && axis >= 0;
  for (size_t i = 0; fits && i < normalized.size(); ++i)
    fits = in.sizes[static_cast<size_t>(axis) + i] == normalized[i];
  if (!fits) {
    m.fail("normalized_shape",
           sizes_str(normalized) + " is not a non-empty suffix of the input's sizes " + sizes_str(in.sizes));
  }
  m.require_floating("input", in.dtype, "native_layer_norm");
  for (std::string_view affine : {"weight", "bias"}) {
    if (m.given(affine) && m.tensor(affine).sizes != normalized) {
      m.fail(affine,
             "sizes " + sizes_str(m.tensor(affine).sizes) + " differ from normalized_shape " + sizes_str(normalized));
    }
  }
  std::vector<Index> stat_sizes(in.sizes.begin(), in.sizes.begin() + axis);
  stat_sizes.resize(in.sizes.size(), Index(1));
  // GPU (and meta-device) semantics: statistics of half/bfloat16 input are kept in float32.
  DType stat_type = (in.dtype == DType::Float16 || in.dtype == DType::BFloat16) ? DType::Float32 : in.dtype;
  return {TensorMeta::contiguous(in.dtype, in.sizes), TensorMeta::contiguous(stat_type, stat_sizes),
          TensorMeta::contiguous(stat_type, stat_sizes)};
}

void require_channel_vector(const MetaInference& m, std::string_view name, const Index& channels) {
  if (m.given(name) && m.tensor(name).sizes != std::vector<Index>{channels}) {
    m.fail(name, "expected sizes [" + channels.str() + "], got " + sizes_str(m.tensor(name).sizes));
  }
}

Metas native_group_norm(const MetaInference& m) {
  TensorMeta in = m.tensor("input");
  m.require_floating("input", in.dtype, "native_group_norm");
  if (in.rank() < 2) m.fail("input", "expected a tensor of rank >= 2, got " + sizes_str(in.sizes));
  Index n = m.arg("N").integer(), c = m.arg("C").integer(), hxw = m.arg("HxW").integer();
  int64_t group = m.int_arg("group");
  if (in.sizes[0] != n) m.fail("N", n.str() + " differs from the input's batch size " + in.sizes[0].str());
  if (in.sizes[1] != c) m.fail("C", c.str() + " differs from the input's channels " + in.sizes[1].str());
  std::vector<Index> spatial(in.sizes.begin() + 2, in.sizes.end());
  if (product(spatial) != hxw)
    m.fail("HxW", hxw.str() + " differs from the input's spatial size " + product(spatial).str());
  if (group <= 0 || !c.is_const() || c.value() % group != 0) {
    m.fail("group", std::to_string(group) + " groups do not divide " + c.str() + " channels");
  }
  require_channel_vector(m, "weight", c);
  require_channel_vector(m, "bias", c);
  return {TensorMeta::contiguous(in.dtype, in.sizes), TensorMeta::contiguous(in.dtype, {n, Index(group)}),
          TensorMeta::contiguous(in.dtype, {n, Index(group)})};
}

/// _native_batch_norm_legit_no_training, _native_batch_norm_legit_functional and _native_batch_norm_legit.no_stats,
/// with the metas FakeTensor gives on the cpu device (PyTorch's decomposition): save_mean / save_rstd in the input's
/// dtype, and of size [0] when not training; running statistics out in the computation type (float32 for half
/// types). On GPUs save_mean / save_rstd are float32 [C] when not training; the lowering follows the node's metas.
Metas batch_norm(const MetaInference& m, BatchNormVariant variant) {
  TensorMeta in = m.tensor("input");
  m.require_floating("input", in.dtype, "batch_norm");
  if (in.rank() < 2) m.fail("input", "expected a tensor of rank >= 2, got " + sizes_str(in.sizes));
  const Index& c = in.sizes[1];
  for (std::string_view name : {"weight", "bias"}) require_channel_vector(m, name, c);
  bool training =
      variant == BatchNormVariant::NoStats || (variant == BatchNormVariant::Functional && m.arg("training").boolean());
  DType compute = (in.dtype == DType::Float16 || in.dtype == DType::BFloat16) ? DType::Float32 : in.dtype;
  if (variant != BatchNormVariant::NoStats) {
    for (std::string_view name : {"running_mean", "running_var"}) {
      if (m.tensor(name).sizes != std::vector<Index>{c}) {
        m.fail(name, "expected sizes [" + c.str() + "], got " + sizes_str(m.tensor(name).sizes));
      }
    }
  }
  TensorMeta save = TensorMeta::contiguous(in.dtype, {training ? c : Index(0)});
  Metas out{TensorMeta::contiguous(in.dtype, in.sizes), save, save};
  if (variant == BatchNormVariant::Functional) {
    DType running = training ? promote_types(compute, m.tensor("running_mean").dtype) : compute;
    out.push_back(TensorMeta::contiguous(running, {c}));
    out.push_back(
        TensorMeta::contiguous(training ? promote_types(compute, m.tensor("running_var").dtype) : compute, {c}));
  }
  return out;
}

std::vector<TensorValue> lower_softmax(GraphLowering& L, const BoundArgs& args, bool log) {
  const TensorMeta& m = L.out_meta();
  TensorValue self = L.tensor("self");
  int64_t dim = L.wrap_dim(args.get_int("dim"), self.rank());
  DType acc = compute_type(m.dtype) == DType::Float64 ? DType::Float64 : DType::Float32;
  TensorValue mx = L.reduce(self, {dim}, true, ReduceOp::Max, compute_type(self.dtype));
  auto shifted = [&](const std::vector<Index>& c) {
    Expr v = Expr::cast(L.at(self, c), acc);
    Expr peak = Expr::cast(L.at(mx, L.broadcast_coords(mx, self.sizes, c)), acc);
    // A row of -inf has max -inf; eager yields nan there, and so does (-inf) - (-inf).
    return Expr::binary(BinaryOp::Sub, v, peak, acc);
  };
  // exp(x - max) as exp2((x - max) * log2(e)) in float32: exp2 is the hardware's instruction (NVIDIA ex2, AMD
  // v_exp_f32) where exp needs a range reduction around it. The argument is <= 0, so the product's rounding moves
  // a result p = e^(x-max) by at most p * |x-max| * 2^-23, below 3e-8 absolutely; float64 keeps exp.
  auto exp_shifted = [&](const std::vector<Index>& c) {
    if (acc == DType::Float64) return Expr::unary(UnaryOp::Exp, shifted(c));
    return Expr::unary(UnaryOp::Exp2,
                       Expr::binary(BinaryOp::Mul, shifted(c), Expr::constant(1.4426950408889634, acc), acc));
  };
  TensorValue e = L.make(acc, self.sizes, {&self}, exp_shifted);
  TensorValue total = L.reduce(e, {dim}, true, ReduceOp::Sum, acc);
  return {L.make(m.dtype, m.sizes, {&self}, [&](const std::vector<Index>& c) {
    Expr s = L.at(total, L.broadcast_coords(total, self.sizes, c));
    Expr r = log ? Expr::binary(BinaryOp::Sub, shifted(c), Expr::unary(UnaryOp::Log, s), acc)
                 : Expr::binary(BinaryOp::Div, exp_shifted(c), s, acc);
    return Expr::cast(r, m.dtype);
  })};
}

std::vector<TensorValue> lower_layer_norm(GraphLowering& L, const BoundArgs& args) {
  TensorValue x = L.tensor("input");
  const std::vector<Index>& shape = args.get("normalized_shape").ints();
  std::optional<TensorValue> w = L.optional_tensor("weight");
  std::optional<TensorValue> b = L.optional_tensor("bias");
  double eps = args.get_float("eps");
  std::vector<int64_t> dims;
  for (size_t i = 0; i < shape.size(); ++i) dims.push_back(x.rank() - static_cast<int64_t>(shape.size()) + i);
  Moments mo = moments(L, x, dims, 0.0);
  DType acc = mo.mean.dtype;
  TensorValue rstd = L.make(acc, mo.variance.sizes, {&mo.variance}, [&](const std::vector<Index>& c) {
    return Expr::unary(UnaryOp::Rsqrt,
                       Expr::binary(BinaryOp::Add, L.at(mo.variance, c), Expr::constant(eps, acc), acc));
  });
  const TensorMeta& m = L.out_meta(0);
  std::vector<const TensorValue*> ts{&x, &rstd};
  if (w) ts.push_back(&*w);
  if (b) ts.push_back(&*b);
  std::vector<TensorValue> out;
  out.push_back(L.make(m.dtype, m.sizes, ts, [&](const std::vector<Index>& c) {
    Expr mean = L.at(mo.mean, L.broadcast_coords(mo.mean, x.sizes, c));
    Expr r = L.at(rstd, L.broadcast_coords(rstd, x.sizes, c));
    Expr v = Expr::binary(BinaryOp::Mul, Expr::binary(BinaryOp::Sub, Expr::cast(L.at(x, c), acc), mean, acc), r, acc);
    if (w) v = Expr::binary(BinaryOp::Mul, v, Expr::cast(L.at(*w, L.broadcast_coords(*w, x.sizes, c)), acc), acc);
    if (b) v = Expr::binary(BinaryOp::Add, v, Expr::cast(L.at(*b, L.broadcast_coords(*b, x.sizes, c)), acc), acc);
    return Expr::cast(v, m.dtype);
  }));
  for (int i = 1; i <= 2; ++i) {
    const TensorMeta& mm = L.out_meta(i);
    const TensorValue& src = i == 1 ? mo.mean : rstd;
    TensorValue s = squeeze_dims(L, src, mm.sizes, dims);
    out.push_back(L.make(mm.dtype, mm.sizes, {&s},
                         [&](const std::vector<Index>& c) { return Expr::cast(L.at(s, c), mm.dtype); }));
  }
  return out;
}

/// `v` with one value per channel (sizes [C]) broadcast over dim 1 of a tensor read at `c`.
Expr per_channel(GraphLowering& L, const TensorValue& v, const std::vector<Index>& c, DType t) {
  return Expr::cast(L.at(v, {c[1]}), t);
}

/// native_group_norm: statistics over (channels of a group, spatial dims) per (sample, group).
std::vector<TensorValue> lower_group_norm(GraphLowering& L, const BoundArgs& args) {
  TensorValue x = L.tensor("input");
  std::optional<TensorValue> w = L.optional_tensor("weight");
  std::optional<TensorValue> b = L.optional_tensor("bias");
  int64_t groups = args.get_int("group");
  double eps = args.get_float("eps");
  if (x.rank() < 2) L.fail("input must have rank >= 2");
  auto channels = x.sizes[1].as_const();
  if (!channels || groups <= 0 || *channels % groups != 0) L.fail("group must divide a constant channel count");
  int64_t per_group = *channels / groups;
  DType acc = compute_type(x.dtype) == DType::Float64 ? DType::Float64 : DType::Float32;
  std::vector<Index> stat_sizes{x.sizes[0], Index(groups)};
  std::vector<Index> reduce_sizes{Index(per_group)};
  reduce_sizes.insert(reduce_sizes.end(), x.sizes.begin() + 2, x.sizes.end());
  int64_t count = 1;
  for (const Index& s : reduce_sizes) {
    if (!s.is_const()) L.fail("group norm over symbolic sizes is not supported yet");
    count *= s.value();
  }
  auto x_at = [&](const std::vector<Index>& xv, const std::vector<Index>& r) {
    std::vector<Index> in{xv[0], xv[1] * Index(per_group) + r[0]};
    in.insert(in.end(), r.begin() + 1, r.end());
    return Expr::cast(L.at(x, in), acc);
  };
  TensorValue total = L.reduction(stat_sizes, reduce_sizes, {&x}, [&](const auto& xv, const auto& r) {
    return Expr::reduce(ReduceOp::Sum, x_at(xv, r));
  });
  TensorValue mean = L.make(acc, stat_sizes, {&total}, [&](const std::vector<Index>& c) {
    return Expr::binary(BinaryOp::Div, L.at(total, c), Expr::constant(static_cast<double>(count), acc), acc);
  });
  TensorValue sq = L.reduction(stat_sizes, reduce_sizes, {&x, &mean}, [&](const auto& xv, const auto& r) {
    Expr d = Expr::binary(BinaryOp::Sub, x_at(xv, r), L.at(mean, xv), acc);
    return Expr::reduce(ReduceOp::Sum, Expr::binary(BinaryOp::Mul, d, d, acc));
  });
  TensorValue rstd = L.make(acc, stat_sizes, {&sq}, [&](const std::vector<Index>& c) {
    Expr var = Expr::binary(BinaryOp::Div, L.at(sq, c), Expr::constant(static_cast<double>(count), acc), acc);
    return Expr::unary(UnaryOp::Rsqrt, Expr::binary(BinaryOp::Add, var, Expr::constant(eps, acc), acc));
  });
  const TensorMeta& m = L.out_meta(0);
  std::vector<const TensorValue*> ts{&x, &mean, &rstd};
  if (w) ts.push_back(&*w);
  if (b) ts.push_back(&*b);
  std::vector<TensorValue> out;
  out.push_back(L.make(m.dtype, m.sizes, ts, [&](const std::vector<Index>& c) {
    std::vector<Index> g{c[0], floordiv(c[1], Index(per_group))};
    Expr v = Expr::binary(BinaryOp::Sub, Expr::cast(L.at(x, c), acc), L.at(mean, g), acc);
    v = Expr::binary(BinaryOp::Mul, v, L.at(rstd, g), acc);
    if (w) v = Expr::binary(BinaryOp::Mul, v, per_channel(L, *w, c, acc), acc);
    if (b) v = Expr::binary(BinaryOp::Add, v, per_channel(L, *b, c, acc), acc);
    return Expr::cast(v, m.dtype);
  }));
  for (int i = 1; i <= 2; ++i) {
    const TensorMeta& mm = L.out_meta(i);
    const TensorValue& src = i == 1 ? mean : rstd;
    out.push_back(L.make(mm.dtype, mm.sizes, {&src},
                         [&](const std::vector<Index>& c) { return Expr::cast(L.at(src, c), mm.dtype); }));
  }
  return out;
}

/// _native_batch_norm_legit_no_training, _native_batch_norm_legit_functional, _native_batch_norm_legit.no_stats.
/// Channels are dim 1. Training normalises with the batch's biased variance and updates the running
/// statistics with the unbiased one; otherwise the running statistics normalise. save_mean / save_rstd follow the
/// node's metas: empty ([0], the cpu device when not training) or the statistics used.
std::vector<TensorValue> lower_batch_norm(GraphLowering& L, const BoundArgs& args, BatchNormVariant variant) {
  TensorValue x = L.tensor("input");
  std::optional<TensorValue> w = L.optional_tensor("weight");
  std::optional<TensorValue> b = L.optional_tensor("bias");
  if (x.rank() < 2) L.fail("input must have rank >= 2");
  std::optional<TensorValue> rm, rv;
  if (variant != BatchNormVariant::NoStats) {
    rm = L.tensor("running_mean");
    rv = L.tensor("running_var");
  }
  const bool training = variant != BatchNormVariant::NoTraining && args.get_bool("training");
  const double momentum = args.get_float("momentum"), eps = args.get_float("eps");
  if (!training && !rm) L.fail("batch norm without running statistics must be training");
  DType acc = compute_type(x.dtype) == DType::Float64 ? DType::Float64 : DType::Float32;
  std::vector<Index> c_sizes{x.sizes[1]};
  TensorValue mean, var;
  Index n = Index(1);
  if (training) {
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < x.rank(); ++d)
      if (d != 1) dims.push_back(d);
    Moments mo = moments(L, x, dims, 0.0);
    n = mo.count;
    mean = squeeze_dims(L, mo.mean, c_sizes, dims);
    var = squeeze_dims(L, mo.variance, c_sizes, dims);
  } else {
    mean = L.make(acc, c_sizes, {&*rm}, [&](const std::vector<Index>& c) { return Expr::cast(L.at(*rm, c), acc); });
    var = L.make(acc, c_sizes, {&*rv}, [&](const std::vector<Index>& c) { return Expr::cast(L.at(*rv, c), acc); });
  }
  TensorValue invstd = L.make(acc, c_sizes, {&var}, [&](const std::vector<Index>& c) {
    return Expr::unary(UnaryOp::Rsqrt, Expr::binary(BinaryOp::Add, L.at(var, c), Expr::constant(eps, acc), acc));
  });
  const TensorMeta& m = L.out_meta(0);
  // CPU eager with 16-bit parameters (its saved statistics then 16-bit, per the node's metas; CUDA saves float32)
  // rounds the batch's mean and invstd to that type and normalises with the rounded values, as x * alpha + beta
  // (alpha = invstd * weight, beta = bias - mean * alpha): done so here too, else outputs near zero differ from
  // eager's by the statistics' rounding (0.02 on OpInfo's bf16 samples).
  // Mixed parameters (float32 with 16-bit input) keep float32 statistics in eager, though PyTorch's meta function
  // says 16-bit for them too.
  const TensorMeta& saved = L.out_meta(1);
  bool mixed = false;
  for (const auto* p : {&w, &b, &rm, &rv})
    if (*p && (*p)->dtype != x.dtype) mixed = true;
  const bool rounded_stats = training && !mixed && is_floating(saved.dtype) &&
                             compute_type(saved.dtype) != saved.dtype && saved.sizes == c_sizes;
  auto rounded = [&](const TensorValue& v, DType t) {
    return L.make(acc, c_sizes, {&v},
                  [&](const std::vector<Index>& c) { return Expr::cast(Expr::cast(L.at(v, c), t), acc); });
  };
  TensorValue mean_used = rounded_stats ? rounded(mean, saved.dtype) : mean;
  TensorValue invstd_used = rounded_stats ? rounded(invstd, L.out_meta(2).dtype) : invstd;
  std::vector<const TensorValue*> ts{&x, &mean_used, &invstd_used};
  if (w) ts.push_back(&*w);
  if (b) ts.push_back(&*b);
  std::vector<TensorValue> out;
  out.push_back(L.make(m.dtype, m.sizes, ts, [&](const std::vector<Index>& c) {
    Expr xv = Expr::cast(L.at(x, c), acc);
    Expr mu = per_channel(L, mean_used, c, acc), is = per_channel(L, invstd_used, c, acc);
    if (rounded_stats) {
      Expr alpha = w ? Expr::binary(BinaryOp::Mul, is, per_channel(L, *w, c, acc), acc) : is;
      Expr beta = Expr::binary(BinaryOp::Sub, b ? per_channel(L, *b, c, acc) : Expr::constant(0, acc),
                               Expr::binary(BinaryOp::Mul, mu, alpha, acc), acc);
      return Expr::cast(Expr::binary(BinaryOp::Add, Expr::binary(BinaryOp::Mul, xv, alpha, acc), beta, acc), m.dtype);
    }
    Expr v = Expr::binary(BinaryOp::Mul, Expr::binary(BinaryOp::Sub, xv, mu, acc), is, acc);
    if (w) v = Expr::binary(BinaryOp::Mul, v, per_channel(L, *w, c, acc), acc);
    if (b) v = Expr::binary(BinaryOp::Add, v, per_channel(L, *b, c, acc), acc);
    return Expr::cast(v, m.dtype);
  }));
  auto copy_of = [&](const TensorValue& src, const TensorMeta& mm) {
    if (mm.sizes.size() == 1 && mm.sizes[0].is_const(0))
      return L.make(mm.dtype, mm.sizes, {}, [&](const std::vector<Index>&) { return Expr::constant(0, mm.dtype); });
    if (mm.sizes != c_sizes) L.fail("batch norm statistics must have sizes [C] or [0]");
    return L.make(mm.dtype, mm.sizes, {&src},
                  [&](const std::vector<Index>& c) { return Expr::cast(L.at(src, c), mm.dtype); });
  };
  out.push_back(copy_of(mean, L.out_meta(1)));
  out.push_back(copy_of(invstd, L.out_meta(2)));
  if (variant != BatchNormVariant::Functional) return out;
  for (int i = 0; i < 2; ++i) {
    const TensorMeta& mm = L.out_meta(3 + i);
    const TensorValue& running = i == 0 ? *rm : *rv;
    if (!training) {
      out.push_back(copy_of(running, mm));
      continue;
    }
    DType t = compute_type(mm.dtype);
    const TensorValue& stat = i == 0 ? mean : var;
    // The running variance is unbiased: times N / (N - 1).
    std::optional<int64_t> count = n.as_const();
    Expr scale = count ? Expr::constant(static_cast<double>(*count) / static_cast<double>(*count - 1), t)
                       : Expr::binary(BinaryOp::Div, count_value(n, t), count_value(n - Index(1), t), t);
    out.push_back(L.make(mm.dtype, mm.sizes, {&stat, &running}, [&](const std::vector<Index>& c) {
      Expr s = Expr::cast(L.at(stat, c), t);
      if (i == 1) s = Expr::binary(BinaryOp::Mul, s, scale, t);
      Expr v = Expr::binary(
          BinaryOp::Add, Expr::binary(BinaryOp::Mul, Expr::constant(momentum, t), s, t),
          Expr::binary(BinaryOp::Mul, Expr::constant(1.0 - momentum, t), Expr::cast(L.at(running, c), t), t), t);
      return Expr::cast(v, mm.dtype);
    }));
  }
  return out;
}

}  // namespace

void register_norm_ops(OpTable& t) {
  t.lowered("aten::_softmax(Tensor self, int dim, bool half_to_float) -> Tensor", softmax,
            [](GraphLowering& L, const BoundArgs& a) { return lower_softmax(L, a, false); });
  t.lowered("aten::_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor", softmax,
            [](GraphLowering& L, const BoundArgs& a) { return lower_softmax(L, a, true); });
  t.lowered(
       "aten::native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, "
       "float eps) -> (Tensor, Tensor, Tensor)",
       native_layer_norm, lower_layer_norm)
      .schema.device_statistics = true;
  t.lowered(
       "aten::native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, SymInt HxW, "
       "int group, float eps) -> (Tensor, Tensor, Tensor)",
       native_group_norm, lower_group_norm)
      .schema.device_statistics = true;
  auto batch_norm_def = [&](const char* schema, BatchNormVariant v) {
    t.lowered(
         schema, [v](const MetaInference& m) { return batch_norm(m, v); },
         [v](GraphLowering& L, const BoundArgs& a) { return lower_batch_norm(L, a, v); })
        .schema.device_statistics = true;
  };
  batch_norm_def(
      "aten::_native_batch_norm_legit_no_training(Tensor input, Tensor? weight, Tensor? bias, "
      "Tensor running_mean, Tensor running_var, float momentum, float eps) -> (Tensor, Tensor, Tensor)",
      BatchNormVariant::NoTraining);
  batch_norm_def(
      "aten::_native_batch_norm_legit_functional(Tensor input, Tensor? weight, Tensor? bias, "
      "Tensor running_mean, Tensor running_var, bool training, float momentum, float eps) -> (Tensor, "
      "Tensor, Tensor, Tensor running_mean_out, Tensor running_var_out)",
      BatchNormVariant::Functional);
  batch_norm_def(
      "aten::_native_batch_norm_legit.no_stats(Tensor input, Tensor? weight, Tensor? bias, bool training, "
      "float momentum, float eps) -> (Tensor, Tensor, Tensor)",
      BatchNormVariant::NoStats);
}

}  // namespace hi
