// Column-reduction kernels as their plans say: one thread per output (group of V neighbouring outputs), looping down
// the column, or, for few outputs, a block's threads sharing outputs across row slices.
#include "codegen/kernel_printer.h"

namespace hi::codegen_detail {

KernelPrinter::ColumnAccumulator KernelPrinter::column_accumulator(size_t n,
                                                                   const std::function<Expr(size_t)>& body) {
  ColumnAccumulator out;
  const std::optional<size_t> arg = paired_arg(n);
  out.named = arg ? *arg : n;
  out.body = body(out.named);
  out.functor = reduce_functor(out.body->reduce_op());
  out.accumulation = accumulation(out.body);
  if (arg) {
    Accumulation value = accumulation(body(n));
    value.result_suffix = ".v";
    out.results.push_back({n, value});
  }
  if (auto pair = plan_.welford_pairs.find(n); pair != plan_.welford_pairs.end()) {
    const Computation& sum = p_.computations[k_.computations[n]];
    out.welford = welford_step(out.body, sum.buffer, body(pair->second), simplify(k_.row_length, p_.size_ranges).as_const());
    if (!out.welford) throw std::logic_error(k_.name + ": the planned Welford pair is not one in this kernel form");
    const DType t = out.welford->value->dtype;
    out.functor = "hi_welford_op";
    out.accumulation = {"hi_welford_t<" + value_type(t) + ">", ".sum()", t};
    out.results.push_back({n, out.accumulation});
    Accumulation m2 = out.accumulation;
    m2.result_suffix = ".m2";
    out.results.push_back({pair->second, m2});
    return out;
  }
  out.results.push_back({out.named, out.accumulation});
  return out;
}

std::string KernelPrinter::column_element(const ColumnAccumulator& a) {
  if (!a.welford) return accumulated_element(a.body);
  const WelfordStep& w = *a.welford;
  const DType t = w.value->dtype;
  const std::string vt = value_type(t), x = "(" + vt + ")(" + expr(w.value) + ")";
  if (!w.m2.defined()) return x;
  // A piece of c elements: {c, its sum / c, its squared deviations}.
  const std::string c = literal(w.count, t);
  return "hi_make_welford(" + c + ", hi_div(" + x + ", " + c + "), (" + vt + ")(" + expr(w.m2) + "))";
}

std::string KernelPrinter::column_welford_step(const ColumnAccumulator& a, const std::string& acc,
                                              const std::string& weight) {
  const WelfordStep& w = *a.welford;
  const DType t = w.value->dtype;
  const std::string vt = value_type(t), x = "(" + vt + ")(" + expr(w.value) + ")";
  if (!w.m2.defined()) return "hi_welford_op::add(" + acc + ", " + weight + ", " + x + ")";
  const std::string c = literal(w.count, t);
  return "hi_welford_op::add(" + acc + ", " + weight + ", " + c + ", hi_div(" + x + ", " + c + "), (" + vt + ")(" +
         expr(w.m2) + "))";
}

void KernelPrinter::emit_column_reduction(const ColumnPlan& plan) {
  const std::string I = index_type_, blk = std::to_string(plan_.block);
  std::string numel = index(k_.numel), len = index(k_.row_length);
  const int v = plan.width;
  if (plan.form == ColumnPlan::Form::VectorRowSlices) {
    emit_column_vector_slices(simplify(floordiv(k_.numel, Index(v)), p_.size_ranges), v, plan.slices_x,
                              plan.slices_y, plan.unroll);
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
      if (accumulated_with_other(n)) continue;
      if (column_epilogue(n)) {  // after the reductions it reads (in registers, or stored by this thread)
        const Computation& c = p_.computations[k_.computations[n]];
        store(c, kernel_body(c), kernel_store_index(c));
        continue;
      }
      const ColumnAccumulator ca =
          column_accumulator(n, [&](size_t m) { return kernel_body(p_.computations[k_.computations[m]]); });
      const std::string acc = "acc_" + p_.buffers[p_.computations[k_.computations[ca.named]].buffer].name;
      const Accumulation& a = ca.accumulation;
      line(a.type + " " + acc + " = " + ca.functor + "::identity<" + a.type + ">();");
      open("for (" + I + " r = 0; r < " + len + "; ++r)");
      line(acc + " = " + ca.functor + "::combine(" + acc + ", " + column_element(ca) + ");");
      close();
      for (const auto& [m, result] : ca.results) {
        const Computation& c = p_.computations[k_.computations[m]];
        store(c, acc + result.result_suffix, result.result_dtype, kernel_store_index(c));
      }
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
  const bool epilogues = has_column_epilogues();
  std::vector<GroupResult> results;
  for (size_t n = 0; n < k_.computations.size(); ++n) {
    if (accumulated_with_other(n) || column_epilogue(n)) continue;
    const ColumnAccumulator ca = column_accumulator(n, [&](size_t m) { return bodies[m]; });
    const std::string acc = "acc_" + p_.buffers[p_.computations[k_.computations[ca.named]].buffer].name;
    accumulate_group(ca, acc, v, plan.unroll, "for (" + I + " r = 0; r < " + len + "; ++r)");
    for (const auto& [m, result] : ca.results) {
      if (epilogues) results.push_back({m, acc, result});
      else store_group(m, acc, result, stores[m], v);
    }
  }
  if (epilogues) store_groups(results, bodies, stores, v);
  close();
  local_value_.clear();
}

void KernelPrinter::accumulate_group(const ColumnAccumulator& ca, const std::string& acc, int v, int unroll,
                                     const std::string& loop) {
  const std::string vs = std::to_string(v), functor = ca.functor;
  const Accumulation& a = ca.accumulation;
  line(a.type + " " + acc + "[" + vs + "];");
  line("#pragma unroll");
  line("for (int j = 0; j < " + vs + "; ++j) " + acc + "[j] = " + functor + "::identity<" + a.type + ">();");
  line("#pragma unroll " + std::to_string(unroll));
  open(loop);
  load_group(ca.welford ? ca.welford->value : ca.body, v);
  if (ca.welford && ca.welford->m2.defined()) load_group(ca.welford->m2, v);
  std::string weight;
  if (ca.welford) {
    // The group's columns have seen the same rows: their Welford steps share one count and one weight, and no
    // column divides (a division per element made variance over bf16 columns compute-bound).
    const DType t = ca.welford->value->dtype;
    weight = "w_" + acc.substr(acc.find('_') + 1);
    line("const hi_welford_weight<" + value_type(t) + "> " + weight + " = hi_welford_op::weight(" + acc + "[0].n, " +
         literal(ca.welford->count, t) + ");");
  }
  line("#pragma unroll");
  open("for (int j = 0; j < " + vs + "; ++j)");
  line(acc + "[j] = " +
       (ca.welford ? column_welford_step(ca, acc + "[j]", weight)
                   : functor + "::combine(" + acc + "[j], " + column_element(ca) + ")") +
       ";");
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

void KernelPrinter::store_groups(const std::vector<GroupResult>& results, const std::vector<Expr>& bodies,
                                const std::vector<Index>& stores, int v) {
  const std::string vs = std::to_string(v);
  std::vector<size_t> epilogues;
  for (size_t n = 0; n < k_.computations.size(); ++n)
    if (column_epilogue(n)) epilogues.push_back(n);
  // One array per vector-stored computation, filled lane by lane and stored after the loop.
  std::map<size_t, std::string> arrays;
  auto declare = [&](size_t n) {
    if (!vector_store(n, stores[n])) return;
    arrays[n] = "st" + std::to_string(next_array_++);
    line(storage_type(p_.buffers[p_.computations[k_.computations[n]].buffer].dtype) + " " + arrays[n] + "[" + vs +
         "];");
  };
  for (const GroupResult& r : results) declare(r.n);
  for (size_t n : epilogues) declare(n);
  auto put = [&](size_t n, const std::string& value, DType value_dtype) {
    const Computation& c = p_.computations[k_.computations[n]];
    if (auto a = arrays.find(n); a != arrays.end())
      line(a->second + "[j] = " + stored(value, value_dtype, p_.buffers[c.buffer].dtype) + ";");
    else
      store(c, value, value_dtype, stores[n]);
  };
  // Every result and epilogue value in a register first, where later epilogues read it: a vector store comes only
  // after the loop, so a read of memory would see what was there before.
  auto hold = [&](size_t n, const std::string& value, DType value_dtype) {
    const Computation& c = p_.computations[k_.computations[n]];
    const DType t = p_.buffers[c.buffer].dtype;
    const std::string name = "v_" + p_.buffers[c.buffer].name;
    line("const " + value_type(t) + " " + name + " = " + convert(value, value_dtype, t) + ";");
    local_value_[c.buffer] = name;
    if (!is_local(c.buffer)) put(n, name, t);
  };
  line("#pragma unroll");
  open("for (int j = 0; j < " + vs + "; ++j)");
  for (const GroupResult& r : results) hold(r.n, r.acc + "[j]" + r.a.result_suffix, r.a.result_dtype);
  for (size_t n : epilogues) {
    const Expr& source = store_source(bodies[n], p_.buffers[p_.computations[k_.computations[n]].buffer].dtype);
    hold(n, expr(source), source->dtype);
  }
  close();
  for (const auto& [n, array] : arrays)
    line(vector_call("store", p_.computations[k_.computations[n]].buffer, lane0(stores[n]), v, array));
  // The lanes' registers went out of scope with the loop.
  for (const GroupResult& r : results) local_value_.erase(p_.computations[k_.computations[r.n]].buffer);
  for (size_t n : epilogues) local_value_.erase(p_.computations[k_.computations[n]].buffer);
}

void KernelPrinter::emit_column_vector_slices(const Index& groups, int v, int tx_count, int ty_count, int unroll) {
  // Thread (tx, ty) accumulates V neighbouring outputs over rows ty, ty + TY, ... with one vector load per row; the
  // slices meet in shared memory, where slice 0 combines them in slice order and stores. The kernel's one reduction
  // is its first computation, the argmax a max computes with (KernelPlan::extreme_pairs), or a variance's sums
  // (KernelPlan::welford_pairs).
  std::vector<Expr> bodies;
  std::vector<Index> stores;
  column_lane_views(groups, v, bodies, stores);
  const ColumnAccumulator ca = column_accumulator(0, [&](size_t m) { return bodies[m]; });
  const Buffer& b = p_.buffers[p_.computations[k_.computations[ca.named]].buffer];
  const std::string I = index_type_, tx = std::to_string(tx_count), ty = std::to_string(ty_count),
                    vs = std::to_string(v), gs = index(groups), len = index(k_.row_length);
  const std::string functor = ca.functor, acc = "acc_" + b.name, smem = "smem_" + b.name;
  const Accumulation& a = ca.accumulation;
  const bool ragged = !groups.is_const() || groups.value() % tx_count != 0;
  line("// " + vs + " outputs per thread, " + tx + " threads x " + ty + " row slices per block");
  line("const int tx = threadIdx.x % " + tx + ", ty = threadIdx.x / " + tx + ";");
  open("for (" + I + " g0 = (" + I + ")blockIdx.x * " + tx + "; g0 < " + gs + "; g0 += (" + I + ")gridDim.x * " + tx +
       ")");
  // Spare lanes of a ragged last block reduce the last group again (their loads stay in bounds) and store nothing.
  line("const " + I + " g = " +
       (ragged ? "(" + I + ")hi_imin(g0 + tx, " + index(groups - Index(1)) + ")" : std::string("g0 + tx")) + ";");
  accumulate_group(ca, acc, v, unroll, "for (" + I + " r = ty; r < " + len + "; r += " + ty + ")");
  // Lane-major in shared memory ([TY][V][TX]): neighbouring threads touch neighbouring words.
  line("__shared__ " + a.type + " " + smem + "[" + ty + "][" + vs + "][" + tx + "];");
  line("#pragma unroll");
  line("for (int j = 0; j < " + vs + "; ++j) " + smem + "[ty][j][tx] = " + acc + "[j];");
  line("__syncthreads();");
  open("if (ty == 0" + (ragged ? " && g0 + tx < " + gs : std::string()) + ")");
  if (ca.welford) {
    // Every slice's columns share a count too: one weight per slice. The slices are merged one at a time: unrolled,
    // gfx90a/gfx942 read every slice's accumulators into registers first (204 VGPRs for bf16 column variance).
    const std::string weight = "w_" + b.name;
    line("#pragma unroll 1");
    open("for (int y = 1; y < " + ty + "; ++y)");
    line("const hi_welford_weight<" + value_type(ca.welford->value->dtype) + "> " + weight +
         " = hi_welford_op::weight(" + acc + "[0].n, " + smem + "[y][0][tx].n);");
    line("#pragma unroll");
    line("for (int j = 0; j < " + vs + "; ++j) " + acc + "[j] = hi_welford_op::merge(" + acc + "[j], " + weight +
         ", " + smem + "[y][j][tx]);");
    close();
  } else {
    // Slice by slice, each slice's V accumulators at a time (each column still combines in slice order): with the
    // lanes outermost, gfx90a read the slices of all lanes into registers first (bf16 column sums over [512, 65536]:
    // 137 VGPRs spilled).
    line("#pragma unroll 1");
    open("for (int y = 1; y < " + ty + "; ++y)");
    line("#pragma unroll");
    line("for (int j = 0; j < " + vs + "; ++j) " + acc + "[j] = " + functor + "::combine(" + acc + "[j], " + smem +
         "[y][j][tx]);");
    close();
  }
  if (has_column_epilogues()) {
    std::vector<GroupResult> results;
    for (const auto& [m, result] : ca.results) results.push_back({m, acc, result});
    store_groups(results, bodies, stores, v);
  } else {
    for (const auto& [m, result] : ca.results) store_group(m, acc, result, stores[m], v);
  }
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
    if (accumulated_with_other(n) || column_epilogue(n)) continue;
    const ColumnAccumulator ca =
        column_accumulator(n, [&](size_t m) { return kernel_body(p_.computations[k_.computations[m]]); });
    const Buffer& b = p_.buffers[p_.computations[k_.computations[ca.named]].buffer];
    const std::string functor = ca.functor, acc = "acc_" + b.name, smem = "smem_" + b.name;
    const Accumulation& a = ca.accumulation;
    line(a.type + " " + acc + " = " + functor + "::identity<" + a.type + ">();");
    line("#pragma unroll 4");
    open("for (" + I + " r = ty; r < " + len + "; r += " + ty + ")");
    line(acc + " = " + functor + "::combine(" + acc + ", " + column_element(ca) + ");");
    close();
    line("__shared__ " + a.type + " " + smem + "[" + ty + "][" + tx + "];");
    line(smem + "[ty][tx] = " + acc + ";");
    line("__syncthreads();");
    line(acc + " = " + smem + "[0][tx];");
    line("for (int y = 1; y < " + ty + "; ++y) " + acc + " = " + functor + "::combine(" + acc + ", " + smem +
         "[y][tx]);");
    for (const auto& [m, result] : ca.results)
      keep(p_.computations[k_.computations[m]], acc + result.result_suffix, result.result_dtype);
  }
  // Epilogues from the results every thread holds, computed and stored by slice 0.
  if (has_column_epilogues()) {
    open("if (" + std::string(ragged ? "ty == 0 && i0 + tx < " + ns : "ty == 0") + ")");
    for (size_t n = 0; n < k_.computations.size(); ++n)
      if (column_epilogue(n)) {
        const Computation& c = p_.computations[k_.computations[n]];
        store(c, kernel_body(c), kernel_store_index(c));
      }
    close();
  }
  // The next outputs' slices reuse shared memory only after every thread has read these.
  line("__syncthreads();");
  close();
  local_value_.clear();
}

}  // namespace hi::codegen_detail
