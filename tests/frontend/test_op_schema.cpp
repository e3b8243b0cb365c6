#include <gtest/gtest.h>

#include "ir/op_schema.h"
#include "lowering/op_registry.h"
#include "tests/common/graph_builder.h"

namespace hi {
namespace {

using test::A;
using test::B;
using test::F;
using test::GraphBuilder;
using test::I;
using test::L;
using test::S;
using test::sizes;

template <typename Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const SchemaError& e) {
    return e.what();
  }
  return "(no SchemaError)";
}

// --- schema table ------------------------------------------------------------------------------------------------

TEST(OpSchema, ParsesArgumentsDefaultsAndKwargOnly) {
  const OpSchema* s = find_op_schema("aten.add.Tensor");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->qualified_name, "aten.add.Tensor");
  ASSERT_EQ(s->args.size(), 3u);
  EXPECT_EQ(s->args[0].name, "self");
  EXPECT_EQ(s->args[0].type, ArgType::Tensor);
  EXPECT_FALSE(s->args[1].kwarg_only);
  EXPECT_EQ(s->args[2].name, "alpha");
  EXPECT_EQ(s->args[2].type, ArgType::Scalar);
  EXPECT_TRUE(s->args[2].kwarg_only);
  ASSERT_TRUE(s->args[2].default_value.has_value());
  EXPECT_EQ(s->args[2].default_value->integer(), Index(1));
  EXPECT_EQ(s->num_outputs, 1);
  EXPECT_FALSE(s->is_view);
}

TEST(OpSchema, ParsesOptionalsListsAndReturns) {
  const OpSchema* sum = find_op_schema("aten.sum.dim_IntList");
  ASSERT_NE(sum, nullptr);
  EXPECT_EQ(sum->args[1].type, ArgType::IntList);
  EXPECT_TRUE(sum->args[1].optional);
  EXPECT_EQ(sum->args[1].list_size, 1);
  EXPECT_FALSE(sum->args[1].default_value.has_value());  // `int[1]? dim` has no default: required
  EXPECT_EQ(sum->args[3].type, ArgType::ScalarType);

  const OpSchema* vm = find_op_schema("aten.var_mean.correction");
  ASSERT_NE(vm, nullptr);
  EXPECT_EQ(vm->num_outputs, 2);
  EXPECT_TRUE(vm->args[1].default_value->is_none());

  EXPECT_EQ(find_op_schema("aten.native_layer_norm.default")->num_outputs, 3);
  EXPECT_TRUE(find_op_schema("aten.view.default")->is_view);
  EXPECT_FALSE(find_op_schema("aten._unsafe_view.default")->is_view);

  const OpSchema* gelu = find_op_schema("aten.gelu.default");
  EXPECT_EQ(gelu->args[1].default_value->str(), "none");
  const OpSchema* to_copy = find_op_schema("aten._to_copy.default");
  EXPECT_EQ(to_copy->args[2].type, ArgType::Opaque);
  EXPECT_TRUE(to_copy->args[2].optional);
  const OpSchema* amax = find_op_schema("aten.amax.default");
  EXPECT_TRUE(amax->args[1].default_value->ints().empty());
  const OpSchema* ln = find_op_schema("aten.native_layer_norm.default");
  EXPECT_EQ(ln->args[4].type, ArgType::Float);
  EXPECT_EQ(find_op_schema("prims.convert_element_type.default")->args[1].type, ArgType::ScalarType);
}

TEST(OpSchema, ParseWithoutNamespaceMeansAten) {
  OpSchema s = parse_op_schema("frob.Tensor(Tensor self, Tensor?[] indices, float eps=1e-05) -> (Tensor a, Tensor b)");
  EXPECT_EQ(s.qualified_name, "aten.frob.Tensor");
  EXPECT_EQ(s.args[1].type, ArgType::OptionalTensorList);
  EXPECT_DOUBLE_EQ(s.args[2].default_value->number(), 1e-05);
  EXPECT_EQ(s.num_outputs, 2);
  EXPECT_THROW(parse_op_schema("frob(Tensor self) Tensor"), std::invalid_argument);
  EXPECT_THROW(parse_op_schema("frob(Generator g) -> Tensor"), std::invalid_argument);
}

TEST(OpSchema, TableCoversTheOverloadsTheCompilerNeeds) {
  for (const char* op :
       {"aten.add.Tensor", "aten.add.Scalar", "aten.sub.Tensor", "aten.sub.Scalar", "aten.mul.Tensor",
        "aten.mul.Scalar", "aten.div.Tensor", "aten.div.Scalar", "aten.div.Tensor_mode", "aten.neg.default",
        "aten.abs.default", "aten.exp.default", "aten.log.default", "aten.sqrt.default", "aten.rsqrt.default",
        "aten.tanh.default", "aten.sigmoid.default", "aten.relu.default", "aten.gelu.default", "aten.maximum.default",
        "aten.minimum.default", "aten.where.self", "aten.clamp.default", "aten.clamp.Tensor", "aten.clamp_min.default",
        "aten.clamp_max.default", "aten.pow.Tensor_Scalar", "aten.pow.Tensor_Tensor", "aten.reciprocal.default",
        "aten.erf.default", "aten.sin.default", "aten.cos.default", "aten.log1p.default", "aten.expm1.default",
        "aten.floor.default", "aten.ceil.default", "aten.eq.Tensor", "aten.eq.Scalar", "aten.ne.Tensor",
        "aten.ne.Scalar", "aten.lt.Tensor", "aten.lt.Scalar", "aten.le.Tensor", "aten.le.Scalar", "aten.gt.Tensor",
        "aten.gt.Scalar", "aten.ge.Tensor", "aten.ge.Scalar", "aten.logical_not.default", "aten.logical_and.default",
        "aten.logical_or.default", "aten.bitwise_and.Tensor", "aten.bitwise_or.Tensor", "aten.bitwise_not.default",
        "aten._to_copy.default", "prims.convert_element_type.default", "aten.clone.default", "aten.view.default",
        "aten.reshape.default", "aten._unsafe_view.default", "aten.permute.default", "aten.t.default",
        "aten.transpose.int", "aten.expand.default", "aten.unsqueeze.default", "aten.squeeze.dim",
        "aten.squeeze.dims", "aten.squeeze.default", "aten.sum.dim_IntList", "aten.sum.default", "aten.mean.dim",
        "aten.mean.default", "aten.amax.default", "aten.amin.default", "aten.var.correction",
        "aten.var_mean.correction", "aten._softmax.default", "aten._log_softmax.default",
        "aten.native_layer_norm.default", "aten.full.default", "aten.scalar_tensor.default"}) {
    EXPECT_NE(find_op_schema(op), nullptr) << op;
  }
  EXPECT_EQ(find_op_schema("aten.add"), nullptr);
  EXPECT_EQ(find_op_schema("aten.frobnicate.default"), nullptr);
  EXPECT_GE(all_op_schemas().size(), 100u);
}

// --- bind_args -----------------------------------------------------------------------------------------------------

TEST(BindArgs, PositionalKeywordAndDefaults) {
  GraphBuilder b;
  ValueRef x = b.input("x", DType::Float32, sizes({4}));
  BoundArgs args = bind_args(b.node("add", "aten.add.Tensor", {A(x), A(x)}));
  EXPECT_EQ(args.get("other").tensor(), x);
  EXPECT_EQ(args.get("alpha").integer(), Index(1));  // default

  args = bind_args(b.node("add", "aten.add.Tensor", {A(x)}, {{"other", F(2.5)}, {"alpha", I(3)}}));
  EXPECT_DOUBLE_EQ(args.get("other").number(), 2.5);  // a Python number in a Tensor position
  EXPECT_EQ(args.get("alpha").integer(), Index(3));

  args = bind_args(b.node("sum", "aten.sum.dim_IntList", {A(x), I(-1)}));  // int[1] given an int
  ASSERT_EQ(args.get("dim").kind(), Arg::Kind::IntList);
  EXPECT_EQ(args.get("dim").ints(), sizes({-1}));
  EXPECT_FALSE(args.get("keepdim").boolean());
  EXPECT_TRUE(args.get("dtype").is_none());

  args = bind_args(b.node("ln", "aten.native_layer_norm.default", {A(x), L(sizes({4})), Arg::none(), Arg::none(), I(0)}));
  EXPECT_EQ(args.get("eps").kind(), Arg::Kind::Float);  // int constant for a float

  args = bind_args(b.node("cp", "aten._to_copy.default", {A(x)},
                          {{"dtype", Arg::of(DType::BFloat16)}, {"device", S("cuda:0")}, {"layout", Arg::none()}}));
  EXPECT_EQ(args.get("dtype").dtype(), DType::BFloat16);
  EXPECT_THROW(args.get("nonexistent"), std::out_of_range);
}

TEST(BindArgs, ErrorsNameNodeOpArgumentAndExpectation) {
  GraphBuilder b;
  ValueRef x = b.input("x", DType::Float32, sizes({4}));
  EXPECT_EQ(error_of([&] { bind_args(b.node("add_1", "aten.add.Tensor", {A(x), S("y")})); }),
            "node 'add_1' (aten.add.Tensor): argument 'other': expected Tensor, got str");
  EXPECT_EQ(error_of([&] { bind_args(b.node("add_1", "aten.add.Tensor", {A(x), A(x), I(1)})); }),
            "node 'add_1' (aten.add.Tensor): 3 positional arguments given, at most 2 accepted (self, other)");
  EXPECT_EQ(error_of([&] { bind_args(b.node("add_1", "aten.add.Tensor", {A(x)})); }),
            "node 'add_1' (aten.add.Tensor): argument 'other': missing (required, Tensor, no default)");
  EXPECT_EQ(error_of([&] { bind_args(b.node("add_1", "aten.add.Tensor", {A(x), A(x)}, {{"alpah", I(2)}})); }),
            "node 'add_1' (aten.add.Tensor): unknown keyword argument 'alpah' (accepted: self, other, alpha)");
  EXPECT_EQ(error_of([&] { bind_args(b.node("add_1", "aten.add.Tensor", {A(x), A(x)}, {{"other", A(x)}})); }),
            "node 'add_1' (aten.add.Tensor): argument 'other': given both positionally and by keyword");
  EXPECT_EQ(error_of([&] { bind_args(b.node("f", "aten.frobnicate.default", {A(x)})); }),
            "node 'f': unknown op 'aten.frobnicate.default'");
  EXPECT_EQ(error_of([&] { bind_args(b.node("s", "aten.sum.dim_IntList", {A(x), S("all")})); }),
            "node 's' (aten.sum.dim_IntList): argument 'dim': expected int[1]?, got str");
  EXPECT_EQ(error_of([&] { bind_args(b.node("g", "aten.gelu.default", {A(x)}, {{"approximate", Arg::none()}})); }),
            "node 'g' (aten.gelu.default): argument 'approximate': expected str, got None");
  // div.Tensor_mode's rounding_mode is keyword-only and has no default: None must be passed explicitly.
  EXPECT_EQ(error_of([&] { bind_args(b.node("d", "aten.div.Tensor_mode", {A(x), A(x), S("floor")})); }),
            "node 'd' (aten.div.Tensor_mode): 3 positional arguments given, at most 2 accepted (self, other)");
  EXPECT_NO_THROW(bind_args(b.node("d", "aten.div.Tensor_mode", {A(x), A(x)}, {{"rounding_mode", Arg::none()}})));

  try {
    bind_args(b.node("add_1", "aten.add.Tensor", {A(x)}, {{"other", S("y")}}));
    FAIL();
  } catch (const SchemaError& e) {
    EXPECT_EQ(e.field(), "kwargs.other");
    EXPECT_EQ(e.argument(), "other");
    ASSERT_NE(e.expected, nullptr);
    EXPECT_EQ(e.expected->type, ArgType::Tensor);
    EXPECT_EQ(e.got, Arg::Kind::Str);
  }
}

// --- infer_meta: broadcasting and promotion ---------------------------------------------------------------------

TEST(InferMeta, Broadcasting) {
  GraphBuilder b;
  ValueRef a = b.input("a", DType::Float32, sizes({8, 1, 5}));
  ValueRef c = b.input("c", DType::Float32, sizes({3, 1}));
  ValueRef s = b.input("s", DType::Float32, {Index::var("s0"), Index(1), Index(5)});
  ValueRef bad = b.input("bad", DType::Float32, sizes({4}));
  std::vector<TensorMeta> out = b.infer("add", "aten.add.Tensor", {A(a), A(c)});
  EXPECT_EQ(out[0].sizes, sizes({8, 3, 5}));
  EXPECT_EQ(out[0].strides, sizes({15, 5, 1}));
  out = b.infer("mul", "aten.mul.Tensor", {A(s), A(c)});
  EXPECT_EQ(out[0].sizes, (std::vector<Index>{Index::var("s0"), Index(3), Index(5)}));
  out = b.infer("mul", "aten.mul.Tensor", {A(s), F(2.0)});
  EXPECT_EQ(out[0].sizes, b.graph().meta(s).sizes);
  out = b.infer("w", "aten.where.self", {A(b.input("m", DType::Bool, sizes({7, 1, 1, 1}))), A(a), A(c)});
  EXPECT_EQ(out[0].sizes, sizes({7, 8, 3, 5}));
  EXPECT_EQ(error_of([&] { b.infer("add", "aten.add.Tensor", {A(a), A(bad)}); }),
            "node 'add' (aten.add.Tensor): argument 'other': sizes [4] do not broadcast with self's [8, 1, 5] (dim 2: "
            "4 vs 5)");
  EXPECT_EQ(error_of([&] { b.infer("w", "aten.where.self", {A(a), A(a), A(a)}); }),
            "node 'w' (aten.where.self): argument 'condition': expected a bool tensor, got float32");
}

struct PromotionCase {
  DType tensor;
  Arg other;           // a Python number, or a tensor dtype (below)
  std::optional<DType> other_tensor;
  bool other_zero_dim = false;
  DType expected;
};

// Every expected value was checked against torch 2.6: (torch.ones(2, dtype=A) + B).dtype.
TEST(InferMeta, TypePromotionMatchesTorch) {
  const std::vector<PromotionCase> cases = {
      // tensor + Python scalar: a scalar only promotes to a higher category.
      {DType::Bool, B(true), {}, false, DType::Bool},
      {DType::Bool, I(2), {}, false, DType::Int64},
      {DType::Bool, F(2.5), {}, false, DType::Float32},
      {DType::UInt8, B(true), {}, false, DType::UInt8},
      {DType::UInt8, I(2), {}, false, DType::UInt8},
      {DType::UInt8, F(2.5), {}, false, DType::Float32},
      {DType::Int32, I(2), {}, false, DType::Int32},
      {DType::Int32, F(2.5), {}, false, DType::Float32},
      {DType::Int64, F(2.5), {}, false, DType::Float32},
      {DType::Float16, I(2), {}, false, DType::Float16},
      {DType::Float16, F(2.0), {}, false, DType::Float16},
      {DType::BFloat16, F(2.5), {}, false, DType::BFloat16},
      {DType::Float32, B(true), {}, false, DType::Float32},
      // tensor + tensor.
      {DType::Int32, {}, DType::Int64, false, DType::Int64},
      {DType::UInt8, {}, DType::Int8, false, DType::Int16},
      {DType::Bool, {}, DType::Float16, false, DType::Float16},
      {DType::BFloat16, {}, DType::Float16, false, DType::Float32},
      {DType::Int64, {}, DType::BFloat16, false, DType::BFloat16},
      {DType::Float16, {}, DType::Float32, false, DType::Float32},
      {DType::Int32, {}, DType::Float16, false, DType::Float16},
      {DType::UInt8, {}, DType::Bool, false, DType::UInt8},
      {DType::Bool, {}, DType::Bool, false, DType::Bool},
      {DType::Float64, {}, DType::BFloat16, false, DType::Float64},
      // tensor + 0-d tensor: like a scalar of that dtype.
      {DType::Float16, {}, DType::Float64, true, DType::Float16},
      {DType::Int32, {}, DType::Float32, true, DType::Float32},
      {DType::UInt8, {}, DType::Int64, true, DType::UInt8},
      {DType::Bool, {}, DType::Int64, true, DType::Int64},
      {DType::Int32, {}, DType::Bool, true, DType::Int32},
      {DType::BFloat16, {}, DType::Int64, true, DType::BFloat16},
  };
  for (const PromotionCase& c : cases) {
    GraphBuilder b;
    ValueRef x = b.input("x", c.tensor, sizes({2}));
    Arg other = c.other;
    if (c.other_tensor) other = A(b.input("y", *c.other_tensor, c.other_zero_dim ? sizes({}) : sizes({2})));
    std::string what = std::string(dtype_name(c.tensor)) + " + " +
                       (c.other_tensor ? std::string(dtype_name(*c.other_tensor)) + (c.other_zero_dim ? " (0-d)" : "")
                                       : std::string(arg_kind_schema_name(c.other.kind())));
    EXPECT_EQ(b.infer("add", "aten.add.Tensor", {A(x), other})[0].dtype, c.expected) << what;
    if (!c.other_tensor) {
      EXPECT_EQ(b.infer("add", "aten.add.Scalar", {A(x), other})[0].dtype, c.expected) << what << " (add.Scalar)";
    }
  }
}

TEST(InferMeta, OpSpecificResultTypes) {
  GraphBuilder b;
  ValueRef i32 = b.input("i", DType::Int32, sizes({2}));
  ValueRef i64 = b.input("l", DType::Int64, sizes({2}));
  ValueRef f16 = b.input("h", DType::Float16, sizes({2}));
  ValueRef bf16 = b.input("bf", DType::BFloat16, sizes({2}));
  ValueRef bl = b.input("b", DType::Bool, sizes({2}));
  ValueRef f16_0d = b.input("h0", DType::Float16, sizes({}));
  ValueRef f64_0d = b.input("d0", DType::Float64, sizes({}));
  auto dtype = [&](const char* op, std::vector<Arg> args, std::vector<std::pair<std::string, Arg>> kw = {}) {
    return b.infer("n", op, std::move(args), std::move(kw))[0].dtype;
  };
  // torch: 0-d with 0-d promotes normally.
  EXPECT_EQ(dtype("aten.add.Tensor", {A(f16_0d), A(f64_0d)}), DType::Float64);
  EXPECT_EQ(dtype("aten.div.Tensor", {A(i32), A(i32)}), DType::Float32);
  EXPECT_EQ(dtype("aten.div.Scalar", {A(i64), I(2)}), DType::Float32);
  EXPECT_EQ(dtype("aten.div.Tensor", {A(f16), I(2)}), DType::Float16);
  EXPECT_EQ(dtype("aten.div.Tensor_mode", {A(i32), A(i32)}, {{"rounding_mode", S("floor")}}), DType::Int32);
  EXPECT_EQ(dtype("aten.div.Tensor_mode", {A(i32), A(i32)}, {{"rounding_mode", Arg::none()}}), DType::Float32);
  EXPECT_EQ(dtype("aten.lt.Scalar", {A(i32), F(2.5)}), DType::Bool);
  EXPECT_EQ(dtype("aten.eq.Tensor", {A(f16), A(i64)}), DType::Bool);
  EXPECT_EQ(dtype("aten.logical_and.default", {A(f16), A(i32)}), DType::Bool);
  EXPECT_EQ(dtype("aten.bitwise_and.Tensor", {A(bl), A(i32)}), DType::Int32);
  EXPECT_EQ(dtype("aten.exp.default", {A(i64)}), DType::Float32);
  EXPECT_EQ(dtype("aten.sqrt.default", {A(bl)}), DType::Float32);
  EXPECT_EQ(dtype("aten.reciprocal.default", {A(i32)}), DType::Float32);
  EXPECT_EQ(dtype("aten.sigmoid.default", {A(bf16)}), DType::BFloat16);
  EXPECT_EQ(dtype("aten.floor.default", {A(i32)}), DType::Int32);
  EXPECT_EQ(dtype("aten.relu.default", {A(i32)}), DType::Int32);
  EXPECT_EQ(dtype("aten.clamp.default", {A(i32)}, {{"min", F(0.5)}}), DType::Float32);
  EXPECT_EQ(dtype("aten.clamp.default", {A(f16), F(0.5)}), DType::Float16);
  EXPECT_EQ(dtype("aten.clamp_min.default", {A(i32), F(0.5)}), DType::Float32);
  EXPECT_EQ(dtype("aten.pow.Tensor_Scalar", {A(i32), F(2.5)}), DType::Float32);
  EXPECT_EQ(dtype("aten.pow.Tensor_Scalar", {A(i32), I(2)}), DType::Int32);
  EXPECT_EQ(dtype("aten.pow.Tensor_Scalar", {A(f16), I(2)}), DType::Float16);
  EXPECT_EQ(dtype("aten.where.self", {A(bl), A(i32), A(f16)}), DType::Float16);
  EXPECT_EQ(dtype("aten.where.ScalarOther", {A(bl), A(f16), F(0.0)}), DType::Float16);
  EXPECT_EQ(dtype("aten.where.ScalarOther", {A(bl), A(i32), F(0.5)}), DType::Float32);
  EXPECT_EQ(dtype("aten.mul.Tensor", {A(i32), B(true)}), DType::Int32);
  EXPECT_EQ(dtype("aten._to_copy.default", {A(i32)}, {{"dtype", Arg::of(DType::BFloat16)}}), DType::BFloat16);
  EXPECT_EQ(dtype("aten._to_copy.default", {A(i32)}), DType::Int32);
  EXPECT_EQ(dtype("prims.convert_element_type.default", {A(f16), Arg::of(DType::Float32)}), DType::Float32);
  EXPECT_EQ(dtype("aten.full.default", {L(sizes({2})), I(1)}), DType::Int64);
  EXPECT_EQ(dtype("aten.full.default", {L(sizes({2})), B(true)}), DType::Bool);
  EXPECT_EQ(dtype("aten.full.default", {L(sizes({2})), F(1.5)}), DType::Float32);
  EXPECT_EQ(dtype("aten.scalar_tensor.default", {I(1)}), DType::Float32);

  EXPECT_EQ(error_of([&] { dtype("aten.sub.Tensor", {A(bl), A(bl)}); }),
            "node 'n' (aten.sub.Tensor): argument 'other': subtraction of two bool tensors is not supported (use "
            "logical_xor)");
  EXPECT_EQ(error_of([&] { dtype("aten.neg.default", {A(bl)}); }),
            "node 'n' (aten.neg.default): argument 'self': negation of a bool tensor is not supported (use "
            "logical_not)");
  EXPECT_EQ(error_of([&] { dtype("aten.gelu.default", {A(i32)}); }),
            "node 'n' (aten.gelu.default): argument 'self': gelu needs a floating-point tensor, got int32");
  EXPECT_EQ(error_of([&] { dtype("aten.gelu.default", {A(f16)}, {{"approximate", S("fast")}}); }),
            "node 'n' (aten.gelu.default): argument 'approximate': expected 'none' or 'tanh', got 'fast'");
  EXPECT_EQ(error_of([&] { dtype("aten.add.Tensor", {A(i32), A(i32)}, {{"alpha", F(0.5)}}); }),
            "node 'n' (aten.add.Tensor): argument 'alpha': must not be a floating-point number for integral inputs "
            "(result int32)");
  EXPECT_EQ(error_of([&] { dtype("aten.clamp.default", {A(f16)}); }),
            "node 'n' (aten.clamp.default): argument 'min': at least one of 'min' and 'max' must not be None");
}

// --- infer_meta: reductions ---------------------------------------------------------------------------------------

TEST(InferMeta, Reductions) {
  GraphBuilder b;
  ValueRef x = b.input("x", DType::Float16, sizes({4, 6, 8}));
  ValueRef xi = b.input("xi", DType::Int32, sizes({4, 6}));
  auto meta = [&](const char* op, std::vector<Arg> args, std::vector<std::pair<std::string, Arg>> kw = {}) {
    return b.infer("r", op, std::move(args), std::move(kw));
  };
  EXPECT_EQ(meta("aten.sum.dim_IntList", {A(x), L(sizes({-1}))})[0].sizes, sizes({4, 6}));
  EXPECT_EQ(meta("aten.sum.dim_IntList", {A(x), L(sizes({-1, 0})), B(true)})[0].sizes, sizes({1, 6, 1}));
  EXPECT_EQ(meta("aten.sum.dim_IntList", {A(x), Arg::none(), B(true)})[0].sizes, sizes({1, 1, 1}));
  EXPECT_EQ(meta("aten.sum.dim_IntList", {A(x), L({})})[0].sizes, sizes({}));
  EXPECT_EQ(meta("aten.sum.dim_IntList", {A(x), I(1)})[0].sizes, sizes({4, 8}));
  EXPECT_EQ(meta("aten.sum.dim_IntList", {A(x), L(sizes({1}))})[0].dtype, DType::Float16);
  EXPECT_EQ(meta("aten.sum.dim_IntList", {A(xi), L(sizes({1}))})[0].dtype, DType::Int64);
  EXPECT_EQ(meta("aten.sum.default", {A(xi)}, {{"dtype", Arg::of(DType::Float32)}})[0].dtype, DType::Float32);
  EXPECT_EQ(meta("aten.sum.default", {A(x)})[0].sizes, sizes({}));
  EXPECT_EQ(meta("aten.mean.dim", {A(x), L(sizes({-2})), B(true)})[0].sizes, sizes({4, 1, 8}));
  EXPECT_EQ(meta("aten.mean.dim", {A(xi), L(sizes({0}))}, {{"dtype", Arg::of(DType::Float32)}})[0].dtype,
            DType::Float32);
  EXPECT_EQ(meta("aten.amax.default", {A(x), L(sizes({-1})), B(true)})[0].sizes, sizes({4, 6, 1}));
  EXPECT_EQ(meta("aten.amin.default", {A(x)})[0].sizes, sizes({}));  // dim=[] reduces everything
  std::vector<TensorMeta> vm = meta("aten.var_mean.correction", {A(x), L(sizes({1}))},
                                    {{"correction", I(0)}, {"keepdim", B(true)}});
  ASSERT_EQ(vm.size(), 2u);
  EXPECT_EQ(vm[0].sizes, sizes({4, 1, 8}));
  EXPECT_EQ(vm[1].sizes, sizes({4, 1, 8}));
  EXPECT_EQ(vm[1].dtype, DType::Float16);
  EXPECT_EQ(meta("aten.var.correction", {A(x)})[0].sizes, sizes({}));
  std::vector<TensorMeta> mx = meta("aten.max.dim", {A(x), I(-1)});
  EXPECT_EQ(mx[1].dtype, DType::Int64);
  EXPECT_EQ(mx[0].sizes, sizes({4, 6}));
  EXPECT_EQ(meta("aten.argmax.default", {A(x)}, {{"keepdim", B(true)}})[0].sizes, sizes({1, 1, 1}));

  EXPECT_EQ(error_of([&] { meta("aten.mean.dim", {A(xi), L(sizes({0}))}); }),
            "node 'r' (aten.mean.dim): argument 'self': mean needs a floating-point result dtype, got int32 (pass "
            "dtype= for integer input)");
  EXPECT_EQ(error_of([&] { meta("aten.sum.dim_IntList", {A(x), L(sizes({3}))}); }),
            "node 'r' (aten.sum.dim_IntList): argument 'dim': dim 3 out of range for a tensor of rank 3 (expected "
            "[-3, 2])");
  EXPECT_EQ(error_of([&] { meta("aten.sum.dim_IntList", {A(x), L(sizes({1, -2}))}); }),
            "node 'r' (aten.sum.dim_IntList): argument 'dim': dim 1 appears more than once in the list");
  EXPECT_EQ(error_of([&] { meta("aten.var.correction", {A(xi)}); }),
            "node 'r' (aten.var.correction): argument 'self': var needs a floating-point tensor, got int32");
}

TEST(InferMeta, SoftmaxAndLayerNorm) {
  GraphBuilder b;
  ValueRef x = b.input("x", DType::BFloat16, sizes({4, 6, 8}));
  ValueRef w = b.input("w", DType::BFloat16, sizes({6, 8}));
  EXPECT_EQ(b.infer("s", "aten._softmax.default", {A(x), I(-1), B(false)})[0].dtype, DType::BFloat16);
  EXPECT_EQ(b.infer("s", "aten._log_softmax.default", {A(x), I(1), B(true)})[0].dtype, DType::Float32);
  std::vector<TensorMeta> ln =
      b.infer("ln", "aten.native_layer_norm.default", {A(x), L(sizes({6, 8})), A(w), Arg::none(), F(1e-5)});
  ASSERT_EQ(ln.size(), 3u);
  EXPECT_EQ(ln[0].sizes, sizes({4, 6, 8}));
  EXPECT_EQ(ln[0].dtype, DType::BFloat16);
  EXPECT_EQ(ln[1].sizes, sizes({4, 1, 1}));
  EXPECT_EQ(ln[2].sizes, sizes({4, 1, 1}));
  EXPECT_EQ(ln[1].dtype, DType::Float32);  // GPU / meta-device semantics
  EXPECT_EQ(error_of([&] {
              b.infer("ln", "aten.native_layer_norm.default", {A(x), L(sizes({8})), A(w), Arg::none(), F(1e-5)});
            }),
            "node 'ln' (aten.native_layer_norm.default): argument 'weight': sizes [6, 8] differ from normalized_shape "
            "[8]");
  EXPECT_EQ(error_of([&] {
              b.infer("ln", "aten.native_layer_norm.default", {A(x), L(sizes({4})), Arg::none(), Arg::none(), F(1e-5)});
            }),
            "node 'ln' (aten.native_layer_norm.default): argument 'normalized_shape': [4] is not a non-empty suffix of "
            "the input's sizes [4, 6, 8]");
}

// --- infer_meta: views ----------------------------------------------------------------------------------------------

// Expected strides/offsets checked against torch 2.6 on a contiguous torch.empty(2, 3, 4).
TEST(InferMeta, Views) {
  GraphBuilder b;
  ValueRef x = b.input("x", DType::Float32, sizes({2, 3, 4}));
  auto meta = [&](const char* op, std::vector<Arg> args) { return b.infer("v", op, std::move(args))[0]; };
  TensorMeta m = meta("aten.permute.default", {A(x), L(sizes({2, 0, 1}))});
  EXPECT_EQ(m.sizes, sizes({4, 2, 3}));
  EXPECT_EQ(m.strides, sizes({1, 12, 4}));
  m = meta("aten.transpose.int", {A(x), I(0), I(-1)});
  EXPECT_EQ(m.sizes, sizes({4, 3, 2}));
  EXPECT_EQ(m.strides, sizes({1, 4, 12}));
  m = meta("aten.view.default", {A(x), L(sizes({6, -1}))});
  EXPECT_EQ(m.sizes, sizes({6, 4}));
  EXPECT_EQ(m.strides, sizes({4, 1}));
  m = meta("aten.unsqueeze.default", {A(x), I(1)});
  EXPECT_EQ(m.sizes, sizes({2, 1, 3, 4}));
  EXPECT_EQ(m.strides, sizes({12, 12, 4, 1}));
  m = meta("aten.unsqueeze.default", {A(x), I(-1)});
  EXPECT_EQ(m.strides, sizes({12, 4, 1, 1}));
  m = meta("aten.slice.Tensor", {A(x), I(1), I(1), I(3)});
  EXPECT_EQ(m.sizes, sizes({2, 2, 4}));
  EXPECT_EQ(m.offset, Index(4));
  m = meta("aten.select.int", {A(x), I(1), I(-1)});
  EXPECT_EQ(m.sizes, sizes({2, 4}));
  EXPECT_EQ(m.offset, Index(8));

  // A permuted input: reshape copies (contiguous strides), view of a transposed 2-d tensor keeps its layout.
  ValueRef p = b.call_inferred("p", "aten.permute.default", {A(x), L(sizes({1, 0, 2}))});
  m = meta("aten.reshape.default", {A(p), L(sizes({3, 8}))});
  EXPECT_EQ(m.strides, sizes({8, 1}));
  EXPECT_EQ(error_of([&] { meta("aten.view.default", {A(p), L(sizes({3, 8}))}); }),
            "node 'v' (aten.view.default): argument 'size': view as [3, 8] is not compatible with the input's sizes "
            "[3, 2, 4] and strides [4, 12, 1] (use reshape)");
  ValueRef y = b.input("y", DType::Float32, sizes({4, 6}));
  ValueRef yt = b.call_inferred("yt", "aten.t.default", {A(y)});
  m = meta("aten.view.default", {A(yt), L(sizes({6, 2, 2}))});
  EXPECT_EQ(m.strides, sizes({1, 12, 6}));  // torch: empty(4, 6).t().view(6, 2, 2).stride()

  ValueRef z = b.input("z", DType::Float32, sizes({4, 1, 6}));
  m = meta("aten.expand.default", {A(z), L(sizes({2, 4, 5, -1}))});
  EXPECT_EQ(m.sizes, sizes({2, 4, 5, 6}));
  EXPECT_EQ(m.strides, sizes({0, 6, 0, 1}));
  ValueRef q = b.input("q", DType::Float32, sizes({1, 3, 1}));
  EXPECT_EQ(meta("aten.squeeze.dims", {A(q), L(sizes({0, 1}))}).sizes, sizes({3, 1}));
  EXPECT_EQ(meta("aten.squeeze.dim", {A(q), I(-1)}).sizes, sizes({1, 3}));
  EXPECT_EQ(meta("aten.squeeze.default", {A(q)}).sizes, sizes({3}));

  EXPECT_EQ(error_of([&] { meta("aten.view.default", {A(x), L(sizes({-1, -1}))}); }),
            "node 'v' (aten.view.default): argument 'size': only one dimension can be -1, got [-1, -1]");
  EXPECT_EQ(error_of([&] { meta("aten.view.default", {A(x), L(sizes({5, 5}))}); }),
            "node 'v' (aten.view.default): argument 'size': shape [5, 5] (25 elements) does not match the input's "
            "[2, 3, 4] (24 elements)");
  EXPECT_EQ(error_of([&] { meta("aten.permute.default", {A(x), L(sizes({0, 0, 1}))}); }),
            "node 'v' (aten.permute.default): argument 'dims': dim 0 appears more than once in [0, 0, 1]");
  EXPECT_EQ(error_of([&] { meta("aten.expand.default", {A(x), L(sizes({3, 3, 4}))}); }),
            "node 'v' (aten.expand.default): argument 'size': cannot expand dim 0 of size 2 to 3 (input sizes "
            "[2, 3, 4], target [3, 3, 4])");
}

TEST(InferMeta, SymbolicViews) {
  GraphBuilder b;
  Index s0 = Index::var("s0");
  ValueRef x = b.input("x", DType::Float32, {s0, Index(64)});
  TensorMeta m = b.infer("v", "aten.view.default", {A(x), L(sizes({-1}))})[0];
  EXPECT_EQ(m.sizes, std::vector<Index>{s0 * Index(64)});
  m = b.infer("v", "aten.view.default", {A(x), L({s0, Index(8), Index(-1)})})[0];
  EXPECT_EQ(m.sizes, (std::vector<Index>{s0, Index(8), Index(8)}));
  EXPECT_EQ(m.strides, sizes({64, 8, 1}));
  m = b.infer("v", "aten.reshape.default", {A(x), L({Index(-1), Index(32)})})[0];
  EXPECT_EQ(m.sizes, (std::vector<Index>{s0 * Index(2), Index(32)}));
  m = b.infer("s", "aten.sum.dim_IntList", {A(x), L(sizes({0})), B(true)})[0];
  EXPECT_EQ(m.sizes, sizes({1, 64}));
}

}  // namespace
}  // namespace hi
