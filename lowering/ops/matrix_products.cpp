// Matrix products: schemas and meta rules only. They stay eager: vendor BLAS (hipBLASLt, cuBLAS) beats any kernel
// this compiler would emit, and graphs hand them to it as extern calls between compiled segments.
#include "lowering/op_registry.h"

namespace hi {
namespace {

constexpr const char* kVendorBlas = "matrix products run in the vendor BLAS library (hipBLASLt / cuBLAS)";

Metas matmul(const MetaInference& m, std::string_view a_name, std::string_view b_name, int64_t rank) {
  TensorMeta a = m.tensor(a_name), b = m.tensor(b_name);
  if (a.rank() != rank) m.fail(a_name, "expected rank " + std::to_string(rank) + ", got " + sizes_str(a.sizes));
  if (b.rank() != rank) m.fail(b_name, "expected rank " + std::to_string(rank) + ", got " + sizes_str(b.sizes));
  if (a.dtype != b.dtype) {
    m.fail(b_name, "dtype " + std::string(dtype_name(b.dtype)) + " differs from " + std::string(a_name) + "'s " +
                       std::string(dtype_name(a.dtype)));
  }
  size_t k = static_cast<size_t>(rank - 1);
  if (a.sizes[k] != b.sizes[k - 1] || (rank == 3 && a.sizes[0] != b.sizes[0])) {
    m.fail(b_name,
           "sizes " + sizes_str(b.sizes) + " cannot multiply " + std::string(a_name) + "'s " + sizes_str(a.sizes));
  }
  std::vector<Index> sizes(a.sizes.begin(), a.sizes.end() - 1);
  sizes.push_back(b.sizes[k]);
  return one(a.dtype, sizes);
}

Metas addmm(const MetaInference& m) {
  Metas out = matmul(m, "mat1", "mat2", 2);
  TensorMeta self = m.tensor("self");
  if (self.dtype != out[0].dtype) {
    m.fail("self", "dtype " + std::string(dtype_name(self.dtype)) + " differs from mat1's " +
                       std::string(dtype_name(out[0].dtype)));
  }
  std::vector<Index> target = out[0].sizes;
  for (size_t i = 0; i < self.sizes.size() && i < 2; ++i) {
    const Index& s = self.sizes[self.sizes.size() - 1 - i];
    const Index& want = target[1 - i];
    if (!(s == want || s.is_const(1))) {
      m.fail("self", "sizes " + sizes_str(self.sizes) + " do not broadcast to the product's " + sizes_str(target));
    }
  }
  if (self.rank() > 2) m.fail("self", "expected rank <= 2, got " + sizes_str(self.sizes));
  return out;
}

}  // namespace

void register_matrix_product_ops(OpTable& t) {
  t.eager(
      "aten::mm(Tensor self, Tensor mat2) -> Tensor",
      [](const MetaInference& m) { return matmul(m, "self", "mat2", 2); }, kVendorBlas);
  t.eager(
      "aten::bmm(Tensor self, Tensor mat2) -> Tensor",
      [](const MetaInference& m) { return matmul(m, "self", "mat2", 3); }, kVendorBlas);
  t.eager("aten::addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor", addmm,
          kVendorBlas);
}

}  // namespace hi
