// Column-reduction kernels as their plans say: one thread per output (group of V neighbouring outputs), looping down
// the column, or, for few outputs, a block's threads sharing outputs across row slices.
#include "codegen/kernel_printer.h"

namespace hi::codegen_detail {

void KernelPrinter::emit_column_reduction(const ColumnPlan& plan) {
  const std::string I = index_type_, blk = std::to_string(plan_.block);
  std::string numel = index(k_.numel), len = index(k_.row_length);
  const int v = plan.width;
  if (plan.form == ColumnPlan::Form::VectorRowSlices) {
    emit_column_vector_slices(simplify(floordiv(k_.numel, Index(v)), p_.size_ranges), v, plan.slices_x,
                              plan.slices_y);
    return;
  }
  if (plan.form == ColumnPlan::Form::RowSlices) {
    emit_column_slices(simplify(k_.numel, p_.size_ranges), plan.slices_x, plan.slices_y);
    return;
  }
  if (v == 1) {
    open("for (" + I + " i = (" + I + ")blockIdx.x * " + blk + " + threadIdx.x; i < " + numel + "; i += (" + I +
         ")gridDim.x * " + blk + ")");
    for (size_t n = 0; n < k_.computations.size(); ++n) {
      if (computed_with_extreme(n)) continue;
      const Computation& c = p_.computations[k_.computations[n]];
      // A max with its argmax accumulates the argmax's {value, position} pairs (KernelPlan::extreme_pairs).
      const std::optional<size_t> arg = paired_arg(n);
      const Computation& rc = arg ? p_.computations[k_.computations[*arg]] : c;
      Expr body = kernel_body(rc);
      const std::string functor = reduce_functor(body->reduce_op()), acc = "acc_" + p_.buffers[rc.buffer].name;
      Accumulation a = accumulation(body);
      line(a.type + " " + acc + " = " + functor + "::identity<" + a.type + ">();");
      open("for (" + I + " r = 0; r < " + len + "; ++r)");
      line(acc + " = " + functor + "::combine(" + acc + ", " + accumulated_element(body) + ");");
      close();
      if (arg) store(c, acc + ".v", accumulation(kernel_body(c)).result_dtype, kernel_store_index(c));
      store(rc, acc + a.result_suffix, a.result_dtype, kernel_store_index(rc));
    }
    close();
    return;
  }
  // V neighbouring outputs per thread: each reduced step reads V consecutive elements with one vector load.
  const Index groups = simplify(floordiv(k_.numel, Index(v)), p_.size_ranges);
  std::vector<Expr> bodies;
  std::vector<Index> stores;
  column_lane_views(groups, v, bodies, stores);
  const std::string vs = std::to_string(v);
  line("// " + vs + " outputs per thread");
  open("for (" + I + " g = (" + I + ")blockIdx.x * " + blk + " + threadIdx.x; g < " + index(groups) + "; g += (" + I +
       ")gridDim.x * " + blk + ")");
  for (size_t n_c = 0; n_c < k_.computations.size(); ++n_c) {
    if (computed_with_extreme(n_c)) continue;
    // A max with its argmax accumulates the argmax's {value, position} pairs (KernelPlan::extreme_pairs).
    const std::optional<size_t> arg = paired_arg(n_c);
    const size_t r = arg ? *arg : n_c;
    const std::string acc = "acc_" + p_.buffers[p_.computations[k_.computations[r]].buffer].name;
    accumulate_group(bodies[r], acc, v, "for (" + I + " r = 0; r < " + len + "; ++r)");
    if (arg) {
      Accumulation value = accumulation(bodies[n_c]);
      value.result_suffix = ".v";
      store_group(n_c, acc, value, stores[n_c], v);
    }
    store_group(r, acc, accumulation(bodies[r]), stores[r], v);
  }
  close();
  local_value_.clear();
}

void KernelPrinter::accumulate_group(const Expr& body, const std::string& acc, int v, const std::string& loop) {
  const std::string vs = std::to_string(v), functor = reduce_functor(body->reduce_op());
  const Accumulation a = accumulation(body);
  line(a.type + " " + acc + "[" + vs + "];");
  line("#pragma unroll");
  line("for (int j = 0; j < " + vs + "; ++j) " + acc + "[j] = " + functor + "::identity<" + a.type + ">();");
  line("#pragma unroll 4");
  open(loop);
  load_group(body, v);
  line("#pragma unroll");
  open("for (int j = 0; j < " + vs + "; ++j)");
  line(acc + "[j] = " + functor + "::combine(" + acc + "[j], " + accumulated_element(body) + ");");
  close();
  close();
}

void KernelPrinter::store_group(size_t n, const std::string& acc, const Accumulation& a, const Index& where, int v) {
  const Computation& c = p_.computations[k_.computations[n]];
  const Buffer& b = p_.buffers[c.buffer];
  const std::string vs = std::to_string(v);
  const bool contiguous = vector_store(n, where);
  const std::string st = "st" + std::to_string(next_array_++);
  if (contiguous) line(storage_type(b.dtype) + " " + st + "[" + vs + "];");
  line("#pragma unroll");
  open("for (int j = 0; j < " + vs + "; ++j)");
  if (contiguous) line(st + "[j] = " + stored(acc + "[j]" + a.result_suffix, a.result_dtype, b.dtype) + ";");
  else store(c, acc + "[j]" + a.result_suffix, a.result_dtype, where);
  close();
  if (contiguous) line(vector_call("store", c.buffer, lane0(where), v, st));
}

void KernelPrinter::emit_column_vector_slices(const Index& groups, int v, int tx_count, int ty_count) {
  // Thread (tx, ty) accumulates V neighbouring outputs over rows ty, ty + TY, ... with one vector load per row; the
  // slices meet in shared memory, where slice 0 combines them in slice order and stores. The kernel's one reduction
  // is its first computation, or the argmax a max computes with (KernelPlan::extreme_pairs).
  const std::optional<size_t> arg = paired_arg(0);
  const size_t r = arg ? *arg : 0;
  const Buffer& b = p_.buffers[p_.computations[k_.computations[r]].buffer];
  const std::string I = index_type_, tx = std::to_string(tx_count), ty = std::to_string(ty_count),
                    vs = std::to_string(v), gs = index(groups), len = index(k_.row_length);
  std::vector<Expr> bodies;
  std::vector<Index> stores;
  column_lane_views(groups, v, bodies, stores);
  const Expr& body = bodies[r];
  const std::string functor = reduce_functor(body->reduce_op()), acc = "acc_" + b.name, smem = "smem_" + b.name;
  Accumulation a = accumulation(body);
  const bool ragged = !groups.is_const() || groups.value() % tx_count != 0;
  line("// " + vs + " outputs per thread, " + tx + " threads x " + ty + " row slices per block");
  line("const int tx = threadIdx.x % " + tx + ", ty = threadIdx.x / " + tx + ";");
  open("for (" + I + " g0 = (" + I + ")blockIdx.x * " + tx + "; g0 < " + gs + "; g0 += (" + I + ")gridDim.x * " + tx +
       ")");
  // Spare lanes of a ragged last block reduce the last group again (their loads stay in bounds) and store nothing.
  line("const " + I + " g = " +
       (ragged ? "(" + I + ")hi_imin(g0 + tx, " + index(groups - Index(1)) + ")" : std::string("g0 + tx")) + ";");
  accumulate_group(body, acc, v, "for (" + I + " r = ty; r < " + len + "; r += " + ty + ")");
  // Lane-major in shared memory ([TY][V][TX]): neighbouring threads touch neighbouring words.
  line("__shared__ " + a.type + " " + smem + "[" + ty + "][" + vs + "][" + tx + "];");
  line("#pragma unroll");
  line("for (int j = 0; j < " + vs + "; ++j) " + smem + "[ty][j][tx] = " + acc + "[j];");
  line("__syncthreads();");
  open("if (ty == 0" + (ragged ? " && g0 + tx < " + gs : std::string()) + ")");
  line("#pragma unroll");
  open("for (int j = 0; j < " + vs + "; ++j)");
  line("for (int y = 1; y < " + ty + "; ++y) " + acc + "[j] = " + functor + "::combine(" + acc + "[j], " + smem +
       "[y][j][tx]);");
  close();
  if (arg) {
    Accumulation value = accumulation(bodies[0]);
    value.result_suffix = ".v";
    store_group(0, acc, value, stores[0], v);
  }
  store_group(r, acc, a, stores[r], v);
  close();
  // The next groups' slices reuse shared memory only after slice 0 has read these.
  line("__syncthreads();");
  close();
}

void KernelPrinter::emit_column_slices(const Index& outputs, int tx_count, int ty_count) {
  // Too few outputs to give every thread its own: a block holds TX consecutive outputs (so loads coalesce) times TY
  // row slices. Thread (tx, ty) accumulates rows ty, ty+TY, ...; the slices meet in shared memory, every thread of
  // the column combines them in the same order (so the kernel's later computations read the result from a
  // register), and slice 0 stores it.
  const std::string I = index_type_, tx = std::to_string(tx_count), ty = std::to_string(ty_count),
                    ns = index(outputs), len = index(k_.row_length);
  line("// " + tx + " outputs x " + ty + " row slices per block");
  line("const int tx = threadIdx.x % " + tx + ", ty = threadIdx.x / " + tx + ";");
  const bool ragged = !outputs.is_const() || outputs.value() % tx_count != 0;
  open("for (" + I + " i0 = (" + I + ")blockIdx.x * " + tx + "; i0 < " + ns + "; i0 += (" + I + ")gridDim.x * " + tx +
       ")");
  // Spare lanes of a ragged last block recompute the last output (their loads stay in bounds) and store nothing.
  line("const " + I + " i = " +
       (ragged ? "(" + I + ")hi_imin(i0 + tx, " + index(outputs - Index(1)) + ")" : std::string("i0 + tx")) + ";");
  // Every thread holds the result: later computations of the kernel read it from here, never from memory (slice
  // 0's store is not ordered with their reads).
  auto keep = [&](const Computation& c, const std::string& value, DType value_dtype) {
    const Buffer& b = p_.buffers[c.buffer];
    const std::string name = "v_" + b.name;
    line("const " + value_type(b.dtype) + " " + name + " = " + convert(value, value_dtype, b.dtype) + ";");
    local_value_[c.buffer] = name;
    if (!is_local(c.buffer))
      line("if (" + std::string(ragged ? "ty == 0 && i0 + tx < " + ns : "ty == 0") + ") " + param_name(c.buffer) + "[" +
           index(kernel_store_index(c)) + "] = " + stored(value, value_dtype, b.dtype) + ";");
  };
  for (size_t n = 0; n < k_.computations.size(); ++n) {
    if (computed_with_extreme(n)) continue;
    // A max with its argmax accumulates the argmax's {value, position} pairs (KernelPlan::extreme_pairs).
    const std::optional<size_t> arg = paired_arg(n);
    const Computation& c = p_.computations[k_.computations[arg ? *arg : n]];
    const Buffer& b = p_.buffers[c.buffer];
    Expr body = kernel_body(c);
    const std::string functor = reduce_functor(body->reduce_op()), acc = "acc_" + b.name, smem = "smem_" + b.name;
    Accumulation a = accumulation(body);
    line(a.type + " " + acc + " = " + functor + "::identity<" + a.type + ">();");
    line("#pragma unroll 4");
    open("for (" + I + " r = ty; r < " + len + "; r += " + ty + ")");
    line(acc + " = " + functor + "::combine(" + acc + ", " + accumulated_element(body) + ");");
    close();
    line("__shared__ " + a.type + " " + smem + "[" + ty + "][" + tx + "];");
    line(smem + "[ty][tx] = " + acc + ";");
    line("__syncthreads();");
    line(acc + " = " + smem + "[0][tx];");
    line("for (int y = 1; y < " + ty + "; ++y) " + acc + " = " + functor + "::combine(" + acc + ", " + smem +
         "[y][tx]);");
    if (arg) {
      const Computation& extreme = p_.computations[k_.computations[n]];
      keep(extreme, acc + ".v", accumulation(kernel_body(extreme)).result_dtype);
    }
    keep(c, acc + a.result_suffix, a.result_dtype);
  }
  // The next outputs' slices reuse shared memory only after every thread has read these.
  line("__syncthreads();");
  close();
  local_value_.clear();
}

}  // namespace hi::codegen_detail
