// Reference interpreter of the graph IR: the slow, obviously-correct answer that numerical tests compare compiled
// kernels against.
//
// Values are host tensors laid out as PyTorch lays them out (element storage + sizes, strides, storage offset), with
// every element held as a double. Each node is evaluated per eager PyTorch's semantics, in double, and its result is
// rounded to the node's output dtype straight away, as eager does after every op: float32 results to float32,
// float16 / bfloat16 to their precision (round-to-nearest-even, overflow to inf), integers truncated toward zero and
// wrapped to their width, bool to 0/1 (NaN counts as true). The node's output metas are authoritative for dtype and
// sizes; the evaluator never re-infers them. Operands of pointwise ops are first converted to the op's computation
// type (the output dtype for arithmetic; torch.result_type of the operands for comparisons), Python-number operands
// included, as CPU eager does (CUDA eager and Inductor keep a number in float32 for half types: up to one ulp apart).
//
// Limits: sizes must be concrete (a symbolic size or scalar throws); integer values are exact only up to 2^53.
// Unknown ops throw std::runtime_error naming the node and the op.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "ir/graph.h"

namespace hi {

/// A host tensor: `storage` holds element values (already rounded to `dtype`); element `idx` lives at
/// `storage[offset + sum(idx[d] * strides[d])]`. Tensors the evaluator produces are row-major contiguous.
struct HostTensor {
  DType dtype = DType::Float32;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  int64_t offset = 0;
  std::vector<double> storage;

  int64_t rank() const { return static_cast<int64_t>(sizes.size()); }
  int64_t numel() const;
  /// Position in `storage` of the element at `idx` (one coordinate per dim, unchecked beyond rank).
  int64_t storage_index(const std::vector<int64_t>& idx) const;
  double at(const std::vector<int64_t>& idx) const { return storage.at(storage_index(idx)); }
  double& at(const std::vector<int64_t>& idx) { return storage.at(storage_index(idx)); }
  /// The elements in row-major order of the logical shape.
  std::vector<double> values() const;
  /// Storage elements the layout needs: offset + the largest reachable index + 1 (offset when numel is 0).
  static int64_t storage_size(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, int64_t offset);

  /// A zero-filled row-major tensor.
  static HostTensor contiguous(DType dtype, std::vector<int64_t> sizes);
  /// A row-major tensor holding `values` (rounded to `dtype`); throws when the count does not match the sizes.
  static HostTensor from_values(DType dtype, std::vector<int64_t> sizes, const std::vector<double>& values);
};

/// `v` converted to `dtype` as a PyTorch cast would (see the top of this file).
double round_to_dtype(DType dtype, double v);

/// Every overload the reference interpreter evaluates, sorted (tests/pipeline/test_op_registry.cpp checks every
/// lowered op is among them).
std::vector<std::string> reference_ops();

/// Evaluates `g`. `inputs` are given in placeholder order and must match the placeholders' dtypes and sizes (their
/// strides and offsets are free). Returns one row-major tensor per graph output.
std::vector<HostTensor> evaluate_graph(const Graph& g, const std::vector<HostTensor>& inputs);

/// The raw in-memory representation of all of `t.storage` (float16/bfloat16 as IEEE bits, bool as one byte, ...),
/// dtype_bytes(t.dtype) bytes per element: what a kernel reads.
std::vector<char> to_bytes(const HostTensor& t);
/// A host tensor over `storage_elements` raw elements of `dtype` at `data` (what a kernel wrote). Throws when the
/// layout reaches past the storage.
HostTensor from_bytes(DType dtype, std::vector<int64_t> sizes, std::vector<int64_t> strides, int64_t offset,
                      const void* data, size_t storage_elements);

/// Deterministic pseudo-random tensor whose storage covers the layout (elements outside the view are filled too).
/// Floats are uniform in [-2, 2] rounded to the dtype; signed ints in [-8, 8], uint8 in [0, 16], bool 0/1.
HostTensor random_tensor(DType dtype, std::vector<int64_t> sizes, std::vector<int64_t> strides, int64_t offset,
                         uint64_t seed);
/// Row-major version of the above.
HostTensor random_tensor(DType dtype, std::vector<int64_t> sizes, uint64_t seed);

/// Largest |a - b| over elements; NaN vs NaN and equal infinities count 0, any other NaN/inf mismatch is infinity.
/// Throws std::invalid_argument when the shapes differ.
double max_abs_error(const HostTensor& a, const HostTensor& b);
/// Every element satisfies |actual - expected| <= atol + rtol * |expected| (NaN equals NaN, inf equals the same-sign
/// inf) and the shapes match. When false and `why` is given, it receives the shape difference or the first
/// mismatching coordinates with both values, plus the mismatch count and max error.
bool all_close(const HostTensor& actual, const HostTensor& expected, double rtol, double atol,
               std::string* why = nullptr);

}  // namespace hi
