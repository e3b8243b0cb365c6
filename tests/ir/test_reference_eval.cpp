#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "testing/reference_eval.h"

namespace hi {
namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

TensorMeta meta(DType t, std::vector<Index> sizes) { return TensorMeta::contiguous(t, std::move(sizes)); }

/// Builds graphs with explicit output metas (the evaluator trusts them, so tests state them).
struct Builder {
  Graph g;

  ValueRef input(const std::string& name, TensorMeta m) {
    Node n;
    n.name = name;
    n.kind = NodeKind::Placeholder;
    n.outputs.push_back(std::move(m));
    g.nodes.push_back(std::move(n));
    return {static_cast<int>(g.nodes.size()) - 1, 0};
  }
  ValueRef call(const std::string& name, const std::string& op, std::vector<Arg> args, std::vector<TensorMeta> outs,
                std::vector<std::pair<std::string, Arg>> kwargs = {}) {
    Node n;
    n.name = name;
    n.target = op;
    n.args = std::move(args);
    n.kwargs = std::move(kwargs);
    n.outputs = std::move(outs);
    g.nodes.push_back(std::move(n));
    return {static_cast<int>(g.nodes.size()) - 1, 0};
  }
  std::vector<HostTensor> run(std::vector<ValueRef> outputs, const std::vector<HostTensor>& inputs) {
    g.outputs = std::move(outputs);
    return evaluate_graph(g, inputs);
  }
};

ValueRef out(ValueRef r, int i) { return {r.node, i}; }
Arg A(ValueRef r) { return Arg::of(r); }
Arg I(int64_t v) { return Arg::of(v); }
Arg F(double v) { return Arg::of(v); }
Arg L(std::vector<Index> v) { return Arg::of(std::move(v)); }

void expect_values(const HostTensor& t, const std::vector<double>& want, double tol = 0) {
  std::vector<double> got = t.values();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "element " << i << ": " << got[i];
      continue;
    }
    EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
  }
}

// ---- pointwise ---------------------------------------------------------------------------------------------------

TEST(ReferenceEval, AddBroadcastsAndScalesByAlpha) {
  Builder b;
  ValueRef x = b.input("x", meta(DType::Float32, {2, 3}));
  ValueRef y = b.input("y", meta(DType::Float32, {3}));
  ValueRef add = b.call("add", "aten.add.Tensor", {A(x), A(y)}, {meta(DType::Float32, {2, 3})}, {{"alpha", I(2)}});
  ValueRef sub = b.call("sub", "aten.sub.Tensor", {A(x), F(0.5)}, {meta(DType::Float32, {2, 3})});
  auto r = b.run({add, sub}, {HostTensor::from_values(DType::Float32, {2, 3}, {1, 2, 3, 4, 5, 6}),
                              HostTensor::from_values(DType::Float32, {3}, {10, 20, 30})});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].sizes, (std::vector<int64_t>{2, 3}));
  expect_values(r[0], {21, 42, 63, 24, 45, 66});
  expect_values(r[1], {0.5, 1.5, 2.5, 3.5, 4.5, 5.5});
}

TEST(ReferenceEval, IntAndFloatPromoteAsTheMetaSays) {
  Builder b;
  ValueRef i = b.input("i", meta(DType::Int32, {3}));
  ValueRef f = b.input("f", meta(DType::Float32, {3}));
  ValueRef s = b.input("s", meta(DType::Int8, {2}));
  ValueRef add = b.call("add", "aten.add.Tensor", {A(i), A(f)}, {meta(DType::Float32, {3})});
  ValueRef mul = b.call("mul", "aten.mul.Tensor", {A(i), F(2.5)}, {meta(DType::Float32, {3})});
  ValueRef div = b.call("div", "aten.div.Tensor", {A(i), I(2)}, {meta(DType::Float32, {3})});
  ValueRef wrap = b.call("wrap", "aten.add.Tensor", {A(s), I(100)}, {meta(DType::Int8, {2})});
  ValueRef lt = b.call("lt", "aten.lt.Tensor", {A(i), F(1.5)}, {meta(DType::Bool, {3})});
  auto r = b.run({add, mul, div, wrap, lt}, {HostTensor::from_values(DType::Int32, {3}, {3, -7, 1}),
                                             HostTensor::from_values(DType::Float32, {3}, {0.5, 0.25, -1}),
                                             HostTensor::from_values(DType::Int8, {2}, {100, -100})});
  EXPECT_EQ(r[0].dtype, DType::Float32);
  expect_values(r[0], {3.5, -6.75, 0});
  expect_values(r[1], {7.5, -17.5, 2.5});  // torch: int32 tensor * 2.5 -> float32
  expect_values(r[2], {1.5, -3.5, 0.5});   // true division
  expect_values(r[3], {-56, 0});           // 200 wraps in int8
  expect_values(r[4], {0, 1, 1});
}

TEST(ReferenceEval, RoundsEveryResultToItsDtype) {
  Builder b;
  ValueRef x = b.input("x", meta(DType::BFloat16, {2}));
  ValueRef add = b.call("add", "aten.add.Tensor", {A(x), F(std::ldexp(1.0, -9))}, {meta(DType::BFloat16, {2})});
  ValueRef add3 = b.call("add3", "aten.add.Tensor", {A(x), F(3 * std::ldexp(1.0, -9))}, {meta(DType::BFloat16, {2})});
  ValueRef third = b.call("third", "aten.div.Tensor", {A(x), I(3)}, {meta(DType::BFloat16, {2})});
  ValueRef e = b.call("e", "aten.exp.default", {A(x)}, {meta(DType::BFloat16, {2})});
  // float32 intermediate: (1 + 1e-8) rounds to 1 before the subtraction.
  ValueRef f = b.input("f", meta(DType::Float32, {1}));
  ValueRef f1 = b.call("f1", "aten.add.Tensor", {A(f), F(1e-8)}, {meta(DType::Float32, {1})});
  ValueRef f2 = b.call("f2", "aten.sub.Tensor", {A(f1), A(f)}, {meta(DType::Float32, {1})});
  auto r = b.run({add, add3, third, e, f2}, {HostTensor::from_values(DType::BFloat16, {2}, {1, 3}),
                                             HostTensor::from_values(DType::Float32, {1}, {1})});
  expect_values(r[0], {1, 3});
  expect_values(r[1], {1.0078125, 3});
  expect_values(r[2], {0.333984375, 1});  // torch's answers
  expect_values(r[3], {2.71875, 20.125});
  expect_values(r[4], {0});
}

TEST(ReferenceEval, HalfArithmeticMatchesTorch) {
  Builder b;
  ValueRef h = b.input("h", meta(DType::Float16, {3}));
  ValueRef mul = b.call("mul", "aten.mul.Tensor", {A(h), I(3)}, {meta(DType::Float16, {3})});
  ValueRef sig = b.call("sig", "aten.sigmoid.default", {A(h)}, {meta(DType::Float16, {3})});
  ValueRef add = b.call("add", "aten.add.Tensor", {A(h), F(0.1)}, {meta(DType::Float16, {3})});
  auto r = b.run({mul, sig, add}, {HostTensor::from_values(DType::Float16, {3}, {0.1, 0.3, 1000})});
  expect_values(r[0], {0.2998046875, 0.900390625, 3000});
  expect_values(r[1], {0.52490234375, 0.57421875, 1});
  expect_values(r[2], {0.199951171875, 0.39990234375, 1000});
}

TEST(ReferenceEval, RoundToDtype) {
  EXPECT_EQ(round_to_dtype(DType::BFloat16, 1 + std::ldexp(1.0, -9)), 1.0);
  EXPECT_EQ(round_to_dtype(DType::BFloat16, 1 + 3 * std::ldexp(1.0, -8)), 1 + std::ldexp(1.0, -6));  // tie to even
  EXPECT_TRUE(std::isnan(round_to_dtype(DType::BFloat16, kNaN)));
  EXPECT_EQ(round_to_dtype(DType::Float16, 65519), 65504);
  EXPECT_EQ(round_to_dtype(DType::Float16, 65520), kInf);
  EXPECT_EQ(round_to_dtype(DType::Float16, std::ldexp(1.0, -25)), 0);              // tie to even: 0
  EXPECT_EQ(round_to_dtype(DType::Float16, std::ldexp(3.0, -26)), std::ldexp(1.0, -24));
  EXPECT_EQ(round_to_dtype(DType::Float32, 0.1), static_cast<double>(0.1f));
  EXPECT_EQ(round_to_dtype(DType::UInt8, -1.7), 255);
  EXPECT_EQ(round_to_dtype(DType::UInt8, 300.7), 44);
  EXPECT_EQ(round_to_dtype(DType::Int32, -2.9), -2);
  EXPECT_EQ(round_to_dtype(DType::Bool, kNaN), 1);
  EXPECT_EQ(round_to_dtype(DType::Bool, 0.0), 0);
}

TEST(ReferenceEval, UnaryOpsAndGelu) {
  Builder b;
  ValueRef x = b.input("x", meta(DType::Float32, {5}));
  ValueRef erf = b.call("g", "aten.gelu.default", {A(x)}, {meta(DType::Float32, {5})});
  ValueRef tanh = b.call("gt", "aten.gelu.default", {A(x)}, {meta(DType::Float32, {5})},
                         {{"approximate", Arg::of(std::string("tanh"))}});
  ValueRef sign = b.call("sign", "aten.sign.default", {A(x)}, {meta(DType::Float32, {5})});
  ValueRef relu = b.call("relu", "aten.relu.default", {A(x)}, {meta(DType::Float32, {5})});
  ValueRef neg = b.call("nan", "aten.isnan.default", {A(x)}, {meta(DType::Bool, {5})});
  auto r = b.run({erf, tanh}, {HostTensor::from_values(DType::Float32, {5}, {-1.5, -0.25, 0, 1, 2.5})});
  expect_values(r[0], {-0.10021086037158966, -0.10032343119382858, 0.0, 0.8413447141647339, 2.48447585105896}, 1e-7);
  expect_values(r[1], {-0.10042843222618103, -0.10032464563846588, 0.0, 0.8411920070648193, 2.4849157333374023},
                1e-7);
  auto s = b.run({sign, relu, neg}, {HostTensor::from_values(DType::Float32, {5}, {kNaN, -1.5, 0, 2, -kInf})});
  expect_values(s[0], {0, -1, 0, 1, -1});  // eager: sign(nan) = 0
  expect_values(s[1], {kNaN, 0, 0, 2, 0});
  expect_values(s[2], {1, 0, 0, 0, 0});
}

TEST(ReferenceEval, WhereClampAndNanPropagatingMaximum) {
  Builder b;
  ValueRef x = b.input("x", meta(DType::Float32, {4}));
  ValueRef y = b.input("y", meta(DType::Float32, {4}));
  ValueRef gt = b.call("gt", "aten.gt.Tensor", {A(x), A(y)}, {meta(DType::Bool, {4})});
  ValueRef w = b.call("w", "aten.where.self", {A(gt), A(x), F(-1.0)}, {meta(DType::Float32, {4})});
  ValueRef c = b.call("c", "aten.clamp.default", {A(x), F(0.0), F(2.0)}, {meta(DType::Float32, {4})});
  ValueRef cmin = b.call("cmin", "aten.clamp_min.default", {A(x), F(1.5)}, {meta(DType::Float32, {4})});
  ValueRef mx = b.call("mx", "aten.maximum.default", {A(x), A(y)}, {meta(DType::Float32, {4})});
  auto r = b.run({w, c, cmin, mx}, {HostTensor::from_values(DType::Float32, {4}, {3, -1, kNaN, 1}),
                                    HostTensor::from_values(DType::Float32, {4}, {1, 0, 0, kNaN})});
  expect_values(r[0], {3, -1, -1, -1});
  expect_values(r[1], {2, 0, kNaN, 1});
  expect_values(r[2], {3, 1.5, kNaN, 1.5});
  expect_values(r[3], {3, 0, kNaN, kNaN});
}

// ---- reductions --------------------------------------------------------------------------------------------------

TEST(ReferenceEval, SoftmaxRowsSumToOne) {
  Builder b;
  ValueRef x = b.input("x", meta(DType::Float32, {4, 7}));
  ValueRef sm = b.call("sm", "aten._softmax.default", {A(x), I(-1), Arg::of(false)}, {meta(DType::Float32, {4, 7})});
  ValueRef lsm =
      b.call("lsm", "aten._log_softmax.default", {A(x), I(1), Arg::of(false)}, {meta(DType::Float32, {4, 7})});
  ValueRef sum = b.call("sum", "aten.sum.dim_IntList", {A(sm), L({1})}, {meta(DType::Float32, {4})});
  auto r = b.run({sm, lsm, sum}, {random_tensor(DType::Float32, {4, 7}, 1)});
  expect_values(r[2], {1, 1, 1, 1}, 1e-6);
  for (int64_t i = 0; i < 4; ++i) {
    double total = 0;
    for (int64_t j = 0; j < 7; ++j) {
      total += std::exp(r[1].at({i, j}));
      EXPECT_NEAR(std::log(r[0].at({i, j})), r[1].at({i, j}), 1e-5);
      EXPECT_GT(r[0].at({i, j}), 0);
    }
    EXPECT_NEAR(total, 1, 1e-5);
  }
}

TEST(ReferenceEval, LayerNormNormalizesRows) {
  Builder b;
  ValueRef x = b.input("x", meta(DType::Float32, {3, 16}));
  ValueRef ln = b.call("ln", "aten.native_layer_norm.default", {A(x), L({16}), Arg::none(), Arg::none(), F(1e-5)},
                       {meta(DType::Float32, {3, 16}), meta(DType::Float32, {3, 1}), meta(DType::Float32, {3, 1})});
  HostTensor in = random_tensor(DType::Float32, {3, 16}, 7);
  auto r = b.run({out(ln, 0), out(ln, 1), out(ln, 2)}, {in});
  ASSERT_EQ(r[1].sizes, (std::vector<int64_t>{3, 1}));
  for (int64_t i = 0; i < 3; ++i) {
    double mean = 0, var = 0, in_mean = 0;
    for (int64_t j = 0; j < 16; ++j) {
      mean += r[0].at({i, j}) / 16;
      in_mean += in.at({i, j}) / 16;
    }
    for (int64_t j = 0; j < 16; ++j) var += (r[0].at({i, j}) - mean) * (r[0].at({i, j}) - mean) / 16;
    EXPECT_NEAR(mean, 0, 1e-6);
    EXPECT_NEAR(var, 1, 1e-3);
    EXPECT_NEAR(r[1].at({i, 0}), in_mean, 1e-6);
    EXPECT_GT(r[2].at({i, 0}), 0);
  }
}

TEST(ReferenceEval, VarianceHonoursCorrection) {
  Builder b;
  ValueRef x = b.input("x", meta(DType::Float32, {2, 4}));
  ValueRef v0 = b.call("v0", "aten.var.correction", {A(x), L({1})}, {meta(DType::Float32, {2})},
                       {{"correction", I(0)}});
  ValueRef v1 = b.call("v1", "aten.var.correction", {A(x), L({1})}, {meta(DType::Float32, {2})});
  ValueRef vm = b.call("vm", "aten.var_mean.correction", {A(x), L({-1})},
                       {meta(DType::Float32, {2, 1}), meta(DType::Float32, {2, 1})},
                       {{"correction", I(1)}, {"keepdim", Arg::of(true)}});
  ValueRef all = b.call("all", "aten.var.correction", {A(x)}, {meta(DType::Float32, {})}, {{"correction", I(0)}});
  ValueRef mean = b.call("mean", "aten.mean.dim", {A(x), L({0})}, {meta(DType::Float32, {4})});
  auto r = b.run({v0, v1, out(vm, 0), out(vm, 1), all, mean},
                 {HostTensor::from_values(DType::Float32, {2, 4}, {1, 2, 3, 4, 2, 2, 2, 2})});
  expect_values(r[0], {1.25, 0});
  expect_values(r[1], {static_cast<float>(5.0 / 3), 0});
  EXPECT_EQ(r[2].sizes, (std::vector<int64_t>{2, 1}));
  expect_values(r[2], {static_cast<float>(5.0 / 3), 0});
  expect_values(r[3], {2.5, 2});
  expect_values(r[4], {0.6875});  // values 1,2,3,4,2,2,2,2: mean 2.25, sum of squares 5.5, / 8
  expect_values(r[5], {1.5, 2, 2.5, 3});
}

TEST(ReferenceEval, AmaxPropagatesNan) {
  Builder b;
  ValueRef x = b.input("x", meta(DType::Float32, {2, 3}));
  ValueRef mx = b.call("mx", "aten.amax.default", {A(x), L({1})}, {meta(DType::Float32, {2})});
  ValueRef mn = b.call("mn", "aten.amin.default", {A(x), L({0}), Arg::of(true)}, {meta(DType::Float32, {1, 3})});
  ValueRef all = b.call("all", "aten.amax.default", {A(x)}, {meta(DType::Float32, {})});
  auto r = b.run({mx, mn, all}, {HostTensor::from_values(DType::Float32, {2, 3}, {1, kNaN, 3, -4, 5, -6})});
  expect_values(r[0], {kNaN, 5});
  expect_values(r[1], {-4, kNaN, -6});
  expect_values(r[2], {kNaN});
}

TEST(ReferenceEval, IntegerSumIsInt64) {
  Builder b;
  ValueRef x = b.input("x", meta(DType::Bool, {2, 3}));
  ValueRef s = b.call("s", "aten.sum.default", {A(x)}, {meta(DType::Int64, {})});
  auto r = b.run({s}, {HostTensor::from_values(DType::Bool, {2, 3}, {1, 0, 1, 1, 1, 0})});
  EXPECT_EQ(r[0].dtype, DType::Int64);
  expect_values(r[0], {4});
}

// ---- views -------------------------------------------------------------------------------------------------------

TEST(ReferenceEval, ViewsOfANonContiguousInput) {
  // x is the transpose of a row-major [2, 3] tensor holding 0..5: x[i][j] = 3 * j + i.
  Builder b;
  TensorMeta xm = meta(DType::Float32, {3, 2});
  xm.strides = {1, 3};
  ValueRef x = b.input("x", xm);
  ValueRef p = b.call("p", "aten.permute.default", {A(x), L({1, 0})}, {meta(DType::Float32, {2, 3})});
  ValueRef flat = b.call("flat", "aten.view.default", {A(p), L({6})}, {meta(DType::Float32, {6})});
  ValueRef rx = b.call("rx", "aten.reshape.default", {A(x), L({-1})}, {meta(DType::Float32, {6})});
  ValueRef back = b.call("back", "aten.view.default", {A(flat), L({3, 2})}, {meta(DType::Float32, {3, 2})});
  ValueRef tr = b.call("tr", "aten.transpose.int", {A(back), I(0), I(-1)}, {meta(DType::Float32, {2, 3})});
  ValueRef t = b.call("t", "aten.t.default", {A(tr)}, {meta(DType::Float32, {3, 2})});
  ValueRef u = b.call("u", "aten.unsqueeze.default", {A(t), I(1)}, {meta(DType::Float32, {3, 1, 2})});
  ValueRef e = b.call("e", "aten.expand.default", {A(u), L({3, 2, 2})}, {meta(DType::Float32, {3, 2, 2})});
  HostTensor in;
  in.dtype = DType::Float32;
  in.sizes = {3, 2};
  in.strides = {1, 3};
  in.storage = {0, 1, 2, 3, 4, 5};
  auto r = b.run({p, flat, rx, tr, e}, {in});
  expect_values(r[0], {0, 1, 2, 3, 4, 5});
  expect_values(r[1], {0, 1, 2, 3, 4, 5});
  expect_values(r[2], {0, 3, 1, 4, 2, 5});
  expect_values(r[3], {0, 2, 4, 1, 3, 5});
  expect_values(r[4], {0, 1, 0, 1, 2, 3, 2, 3, 4, 5, 4, 5});
  EXPECT_EQ(r[4].strides, (std::vector<int64_t>{4, 2, 1}));  // outputs are row-major
}

// ---- errors ------------------------------------------------------------------------------------------------------

TEST(ReferenceEval, UnknownOpNamesTheNode) {
  Builder b;
  ValueRef x = b.input("x", meta(DType::Float32, {2}));
  ValueRef y = b.call("mystery_1", "aten.frobnicate.default", {A(x)}, {meta(DType::Float32, {2})});
  try {
    b.run({y}, {random_tensor(DType::Float32, {2}, 3)});
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("mystery_1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("aten.frobnicate.default"), std::string::npos) << e.what();
  }
}

TEST(ReferenceEval, RejectsMismatchedAndSymbolicInputs) {
  Builder b;
  ValueRef x = b.input("x", meta(DType::Float32, {2}));
  b.g.outputs = {x};
  EXPECT_THROW(evaluate_graph(b.g, {random_tensor(DType::Float16, {2}, 1)}), std::runtime_error);
  EXPECT_THROW(evaluate_graph(b.g, {random_tensor(DType::Float32, {3}, 1)}), std::runtime_error);
  EXPECT_THROW(evaluate_graph(b.g, {}), std::runtime_error);
  Builder s;
  s.input("x", meta(DType::Float32, {Index::var("s0")}));
  s.g.outputs = {{0, 0}};
  EXPECT_THROW(evaluate_graph(s.g, {random_tensor(DType::Float32, {2}, 1)}), std::runtime_error);
}

// ---- bytes, random tensors, comparisons ---------------------------------------------------------------------------

TEST(ReferenceEval, BytesRoundTripForEveryDtype) {
  for (DType t : {DType::Bool, DType::UInt8, DType::Int8, DType::Int16, DType::Int32, DType::Int64, DType::Float16,
                  DType::BFloat16, DType::Float32, DType::Float64}) {
    HostTensor a = random_tensor(t, {3, 4}, {1, 5}, 2, 42);
    EXPECT_EQ(a.storage.size(), 2u + 2 + 15 + 1) << dtype_name(t);
    std::vector<char> bytes = to_bytes(a);
    ASSERT_EQ(bytes.size(), a.storage.size() * dtype_bytes(t)) << dtype_name(t);
    HostTensor back = from_bytes(t, a.sizes, a.strides, a.offset, bytes.data(), a.storage.size());
    EXPECT_EQ(back.storage, a.storage) << dtype_name(t);
    EXPECT_EQ(max_abs_error(back, a), 0) << dtype_name(t);
    EXPECT_EQ(to_bytes(back), bytes) << dtype_name(t);
  }
}

uint16_t bits16(DType t, double v) {
  HostTensor h = HostTensor::from_values(t, {1}, {v});
  std::vector<char> b = to_bytes(h);
  uint16_t r = 0;
  std::memcpy(&r, b.data(), 2);
  return r;
}

TEST(ReferenceEval, HalfAndBFloat16Bits) {
  EXPECT_EQ(bits16(DType::Float16, 1.0), 0x3C00);
  EXPECT_EQ(bits16(DType::Float16, -2.0), 0xC000);
  EXPECT_EQ(bits16(DType::Float16, 65504), 0x7BFF);
  EXPECT_EQ(bits16(DType::Float16, std::ldexp(1.0, -24)), 0x0001);
  EXPECT_EQ(bits16(DType::Float16, kInf), 0x7C00);
  EXPECT_EQ(bits16(DType::BFloat16, 1.0), 0x3F80);
  EXPECT_EQ(bits16(DType::BFloat16, -kInf), 0xFF80);
  EXPECT_EQ(bits16(DType::BFloat16, kNaN) & 0x7FC0, 0x7FC0);
  // Every 16-bit pattern decodes and re-encodes to itself (NaNs stay NaN).
  for (DType t : {DType::Float16, DType::BFloat16}) {
    for (uint32_t b = 0; b < 0x10000; ++b) {
      auto bits = static_cast<uint16_t>(b);
      HostTensor h = from_bytes(t, {1}, {1}, 0, &bits, 1);
      if (std::isnan(h.storage[0])) {
        uint16_t again = bits16(t, h.storage[0]);
        EXPECT_TRUE(t == DType::Float16 ? (again & 0x7C00) == 0x7C00 && (again & 0x3FF)
                                        : (again & 0x7F80) == 0x7F80 && (again & 0x7F));
        continue;
      }
      ASSERT_EQ(round_to_dtype(t, h.storage[0]), h.storage[0]) << dtype_name(t) << " " << b;
      ASSERT_EQ(bits16(t, h.storage[0]), bits) << dtype_name(t) << " " << b;
    }
  }
  uint8_t two = 2;  // any non-zero byte is true
  EXPECT_EQ(from_bytes(DType::Bool, {1}, {1}, 0, &two, 1).storage[0], 1);
  EXPECT_THROW(from_bytes(DType::Bool, {2}, {1}, 0, &two, 1), std::invalid_argument);
}

TEST(ReferenceEval, RandomTensorsAreDeterministicAndInRange) {
  HostTensor a = random_tensor(DType::BFloat16, {64}, 5);
  EXPECT_EQ(a.storage, random_tensor(DType::BFloat16, {64}, 5).storage);
  EXPECT_NE(a.storage, random_tensor(DType::BFloat16, {64}, 6).storage);
  for (double v : a.storage) {
    EXPECT_LE(std::fabs(v), 2);
    EXPECT_EQ(round_to_dtype(DType::BFloat16, v), v);
  }
  for (double v : random_tensor(DType::Int8, {64}, 5).storage) EXPECT_LE(std::fabs(v), 8);
  for (double v : random_tensor(DType::Bool, {64}, 5).storage) EXPECT_TRUE(v == 0 || v == 1);
}

TEST(ReferenceEval, AllCloseTreatsNanAndInfAsEqualToThemselves) {
  HostTensor a = HostTensor::from_values(DType::Float32, {4}, {1, kNaN, kInf, -kInf});
  HostTensor b = HostTensor::from_values(DType::Float32, {4}, {1.0001, kNaN, kInf, -kInf});
  std::string why;
  EXPECT_TRUE(all_close(a, b, 1e-3, 0, &why)) << why;
  EXPECT_FALSE(all_close(a, b, 1e-6, 1e-6, &why));
  EXPECT_NE(why.find("[0]"), std::string::npos) << why;
  HostTensor c = HostTensor::from_values(DType::Float32, {4}, {1, 0, kInf, kInf});
  EXPECT_FALSE(all_close(c, a, 1, 1, &why));
  EXPECT_EQ(max_abs_error(c, a), kInf);
  EXPECT_FALSE(all_close(HostTensor::contiguous(DType::Float32, {2, 2}), a, 1, 1, &why));
  EXPECT_NE(why.find("shape"), std::string::npos) << why;
  EXPECT_THROW(max_abs_error(HostTensor::contiguous(DType::Float32, {2, 2}), a), std::invalid_argument);
}

}  // namespace
}  // namespace hi
