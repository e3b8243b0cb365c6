// Pointwise kernels: vector groups, several per thread, loads first (docs/architecture.md, "Kernel shapes").
#include "codegen/kernel_printer.h"

namespace hi::codegen_detail {

void KernelPrinter::emit_pointwise_elements() {
  for (int ci : k_.computations) {
    const Computation& c = p_.computations[ci];
    Expr body = kernel_body(c);
    store(c, expr(body), body->dtype, kernel_store_index(c));
  }
}

void KernelPrinter::emit_pointwise() {
  const std::string I = index_type_, blk = std::to_string(block_);
  auto n = simplify(k_.numel, p_.size_ranges).as_const();
  const int v = n ? vector_width("i", *n, false) : 1;
  if (v == 1) {
    open("for (" + I + " i = (" + I + ")blockIdx.x * " + blk + " + threadIdx.x; i < " + index(k_.numel) +
         "; i += (" + I + ")gridDim.x * " + blk + ")");
    emit_pointwise_elements();
    close();
    grid_ = floordiv(k_.numel + (block_ - 1), Index(block_));
    return;
  }
  // Vector groups: elements i = g*V + j, j < V. A thread takes E groups a block apart per iteration (all loads
  // first, so E*V*bytes are in flight), moving contiguous operands with vector loads and stores; the last
  // numel % V elements take the scalar loop.
  const int64_t groups = *n / v;
  const int e_count = static_cast<int>(
      std::max<int64_t>(1, std::min<int64_t>(32 / (v * narrowest_bytes(accesses())), ceil_div(groups, block_))));
  const int64_t span = int64_t{block_} * e_count;
  grid_ = Index(ceil_div(groups, span));
  ranges_["g"] = Range::loop(groups);
  ranges_["j"] = Range::loop(v);
  const std::map<std::string, Index> lanes{{"i", Index::var("g") * v + Index::var("j")}};
  const std::string vs = std::to_string(v), es = std::to_string(e_count), per_thread = std::to_string(e_count * v);
  const std::string gs = std::to_string(groups);
  const bool ragged = groups % span != 0;
  line("// " + vs + " elements per vector group, " + es + " groups per thread");
  open("for (" + I + " g0 = (" + I + ")blockIdx.x * " + std::to_string(span) + " + threadIdx.x; g0 < " + gs +
       "; g0 += (" + I + ")gridDim.x * " + std::to_string(span) + ")");
  std::vector<Expr> bodies;
  std::vector<Index> stores;
  lane_views(lanes, bodies, stores);
  auto open_groups = [&] {
    line("#pragma unroll");
    open("for (int e = 0; e < " + es + "; ++e)");
    line("const " + I + " g = g0 + e * " + blk + ";");
  };
  auto guard = ragged ? "if (g < " + gs + ") " : std::string();
  std::vector<std::pair<std::string, const Expr*>> vector_loads;
  std::vector<Expr> loads = external_loads(bodies);
  for (const Expr& load : loads)
    if (contiguous_lanes(load->index))
      vector_loads.emplace_back(vector_array(load, e_count * v, "q"), &load);
  if (!vector_loads.empty()) {
    open_groups();
    for (const auto& [name, load] : vector_loads) {
      Index base = lane0((*load)->index);
      line(guard + "hi_load_vec<" + vs + ">(" + param_name((*load)->buffer) + " + (" + index(base) + "), &" + name +
           "[e * " + vs + "]);");
    }
    close();
  }
  std::vector<std::string> store_arrays(k_.computations.size());
  for (size_t n_c = 0; n_c < k_.computations.size(); ++n_c) {
    const Computation& c = p_.computations[k_.computations[n_c]];
    if (is_local(c.buffer) || !contiguous_lanes(stores[n_c])) continue;
    store_arrays[n_c] = "st" + std::to_string(next_array_++);
    line(storage_type(p_.buffers[c.buffer].dtype) + " " + store_arrays[n_c] + "[" + per_thread + "];");
  }
  line("#pragma unroll");
  open("for (int q = 0; q < " + per_thread + "; ++q)");
  line("const " + I + " g = g0 + (q / " + vs + ") * " + blk + ";");
  line("const int j = q % " + vs + ";");
  if (ragged) open("if (g < " + gs + ")");
  for (size_t n_c = 0; n_c < k_.computations.size(); ++n_c) {
    const Computation& c = p_.computations[k_.computations[n_c]];
    const Buffer& b = p_.buffers[c.buffer];
    // Later computations of the group read this value from the register, never from memory.
    std::string name = "v_" + b.name;
    line("const " + value_type(b.dtype) + " " + name + " = " +
         convert(expr(bodies[n_c]), bodies[n_c]->dtype, b.dtype) + ";");
    local_value_[c.buffer] = name;
    if (is_local(c.buffer)) continue;
    if (!store_arrays[n_c].empty())
      line(store_arrays[n_c] + "[q] = " + store_value(name, b.dtype) + ";");
    else
      line(param_name(c.buffer) + "[" + index(stores[n_c]) + "] = " + store_value(name, b.dtype) + ";");
  }
  if (ragged) close();
  close();
  if (std::any_of(store_arrays.begin(), store_arrays.end(), [](const std::string& a) { return !a.empty(); })) {
    open_groups();
    for (size_t n_c = 0; n_c < k_.computations.size(); ++n_c) {
      if (store_arrays[n_c].empty()) continue;
      int b = p_.computations[k_.computations[n_c]].buffer;
      Index base = lane0(stores[n_c]);
      line(guard + "hi_store_vec<" + vs + ">(" + param_name(b) + " + (" + index(base) + "), &" + store_arrays[n_c] +
           "[e * " + vs + "]);");
    }
    close();
  }
  close();
  local_value_.clear();
  if (*n % v == 0) return;
  open("for (" + I + " i = " + std::to_string(groups * v) + " + (" + I + ")blockIdx.x * " + blk +
       " + threadIdx.x; i < " + std::to_string(*n) + "; i += (" + I + ")gridDim.x * " + blk + ")");
  emit_pointwise_elements();
  close();
}

}  // namespace hi::codegen_detail
