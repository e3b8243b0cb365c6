// Column-reduction kernels: one thread per output (group of V neighbouring outputs), looping down the column.
#include "codegen/kernel_printer.h"

namespace hi::codegen_detail {

/// Fewest threads a column kernel keeps when it widens its vector groups.
constexpr int64_t kMinColumnThreads = 32768;

void KernelPrinter::emit_column_reduction() {
  const std::string I = index_type_, blk = std::to_string(block_);
  std::string numel = index(k_.numel), len = index(k_.row_length);
  auto n = simplify(k_.numel, p_.size_ranges).as_const();
  // Vector width only while enough threads remain to fill a GPU (one thread per output group and no other
  // parallelism here: short outputs are split into two reductions before this, see split_reductions).
  int v = n ? vector_width("i", *n, true) : 1;
  while (v > 1 && *n / v < kMinColumnThreads) v /= 2;
  grid_ = floordiv(k_.numel + (v * block_ - 1), Index(v * block_));
  if (v == 1) {
    open("for (" + I + " i = (" + I + ")blockIdx.x * " + blk + " + threadIdx.x; i < " + numel + "; i += (" + I +
         ")gridDim.x * " + blk + ")");
    for (int ci : k_.computations) {
      const Computation& c = p_.computations[ci];
      Expr body = kernel_body(c);
      const std::string functor = reduce_functor(body->reduce_op()), acc = "acc_" + p_.buffers[c.buffer].name;
      Accumulation a = accumulation(body);
      line(a.type + " " + acc + " = " + functor + "::identity<" + a.type + ">();");
      open("for (" + I + " r = 0; r < " + len + "; ++r)");
      line(acc + " = " + functor + "::combine(" + acc + ", " + accumulated_element(body) + ");");
      close();
      store(c, acc + a.result_suffix, a.result_dtype, kernel_store_index(c));
    }
    close();
    return;
  }
  // V neighbouring outputs per thread: each reduced step reads V consecutive elements with one vector load.
  const int64_t groups = *n / v;
  ranges_["g"] = Range::loop(groups);
  ranges_["j"] = Range::loop(v);
  const std::map<std::string, Index> lanes{{"i", Index::var("g") * v + Index::var("j")}};
  const std::string vs = std::to_string(v);
  line("// " + vs + " outputs per thread");
  open("for (" + I + " g = (" + I + ")blockIdx.x * " + blk + " + threadIdx.x; g < " + std::to_string(groups) +
       "; g += (" + I + ")gridDim.x * " + blk + ")");
  for (int ci : k_.computations) {
    const Computation& c = p_.computations[ci];
    const Buffer& b = p_.buffers[c.buffer];
    Expr body = substitute_vars(kernel_body(c), lanes, ranges_);
    Index where = simplify(substitute(kernel_store_index(c), lanes), ranges_);
    const std::string functor = reduce_functor(body->reduce_op()), acc = "acc_" + b.name;
    Accumulation a = accumulation(body);
    line(a.type + " " + acc + "[" + vs + "];");
    line("#pragma unroll");
    line("for (int j = 0; j < " + vs + "; ++j) " + acc + "[j] = " + functor + "::identity<" + a.type + ">();");
    line("#pragma unroll 4");
    open("for (" + I + " r = 0; r < " + len + "; ++r)");
    for (const Expr& load : external_loads({body})) {
      if (!contiguous_lanes(load->index)) continue;
      Index base = lane0(load->index);
      std::string name = vector_array(load, v, "j");
      line("hi_load_vec<" + vs + ">(" + param_name(load->buffer) + " + (" + index(base) + "), " + name + ");");
    }
    line("#pragma unroll");
    open("for (int j = 0; j < " + vs + "; ++j)");
    line(acc + "[j] = " + functor + "::combine(" + acc + "[j], " + accumulated_element(body) + ");");
    close();
    close();
    const bool contiguous = !is_local(c.buffer) && contiguous_lanes(where);
    std::string st = "st" + std::to_string(next_array_++);
    if (contiguous) line(storage_type(b.dtype) + " " + st + "[" + vs + "];");
    line("#pragma unroll");
    open("for (int j = 0; j < " + vs + "; ++j)");
    std::string value = convert(acc + "[j]" + a.result_suffix, a.result_dtype, b.dtype);
    if (contiguous) line(st + "[j] = " + store_value(value, b.dtype) + ";");
    else store(c, acc + "[j]" + a.result_suffix, a.result_dtype, where);
    close();
    if (contiguous) {
      Index base = lane0(where);
      line("hi_store_vec<" + vs + ">(" + param_name(c.buffer) + " + (" + index(base) + "), " + st + ");");
    }
  }
  close();
  local_value_.clear();
}

}  // namespace hi::codegen_detail
