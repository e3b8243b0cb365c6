// Pointwise kernels as their plans say: vector groups, several per thread, loads first; transposed tiles; or one
// element per iteration (docs/architecture.md, "Kernel shapes").
#include "codegen/kernel_printer.h"
#include "codegen/plan_shapes.h"

namespace hi::codegen_detail {

void KernelPrinter::emit_pointwise_elements() {
  for (int ci : k_.computations) {
    const Computation& c = p_.computations[ci];
    Expr body = kernel_body(c);
    store(c, body, kernel_store_index(c));
  }
}

void KernelPrinter::emit_transposed_tiles(const PointwisePlan& plan) {
  const int64_t O = plan.tile_o, P = plan.tile_p, Q = plan.tile_q;
  const int tile = plan.tile;
  const std::vector<Expr>& tiled = plan.tiled_loads;
  ranges_["xo"] = Range::loop(O);
  ranges_["xp"] = Range::loop(P);
  ranges_["xq"] = Range::loop(Q);
  std::vector<Expr> bodies;
  std::vector<Index> stores;
  lane_views({{"i", (Index::var("xo") * P + Index::var("xp")) * Q + Index::var("xq")}}, bodies, stores);
  const std::string I = index_type_, t = std::to_string(tile), rows = std::to_string(plan.tile_rows);
  const int64_t ptiles = P / tile, qtiles = Q / tile, tiles = O * ptiles * qtiles;
  line("// " + t + " x " + t + " tiles of " + std::to_string(tiled.size()) +
       " transposed operand(s) through shared memory: read with lanes along the walk's dim of " + std::to_string(P) +
       ", computed and stored with lanes along its innermost (" + std::to_string(Q) + ")");
  std::vector<std::string> names;
  for (size_t k = 0; k < tiled.size(); ++k) {
    names.push_back("tile" + std::to_string(k));
    line("__shared__ " + value_type(tiled[k]->dtype) + " " + names[k] + "[" + t + "][" + std::to_string(tile + 1) +
         "];");
  }
  line("const int tx = threadIdx.x % " + t + ", ty = threadIdx.x / " + t + ";");
  open("for (" + I + " tile = blockIdx.x; tile < " + std::to_string(tiles) + "; tile += gridDim.x)");
  line("const " + I + " xo = tile / " + std::to_string(ptiles * qtiles) + ";");
  line("const " + I + " tp = (tile / " + std::to_string(qtiles) + ") % " + std::to_string(ptiles) + " * " + t +
       ", tq = tile % " + std::to_string(qtiles) + " * " + t + ";");
  line("#pragma unroll");
  open("for (int r = 0; r < " + t + "; r += " + rows + ")");
  line("const " + I + " xp = tp + tx, xq = tq + ty + r;");
  for (size_t k = 0; k < tiled.size(); ++k) line(names[k] + "[ty + r][tx] = " + expr(tiled[k]) + ";");
  close();
  line("__syncthreads();");
  line("#pragma unroll");
  open("for (int r = 0; r < " + t + "; r += " + rows + ")");
  line("const " + I + " xp = tp + ty + r, xq = tq + tx;");
  for (size_t k = 0; k < tiled.size(); ++k)
    cse_.back()[tiled[k].hash()].emplace_back(tiled[k], names[k] + "[tx][ty + r]");
  for (size_t c = 0; c < bodies.size(); ++c) store(p_.computations[k_.computations[c]], bodies[c], stores[c]);
  close();
  line("__syncthreads();");
  close();
  local_value_.clear();
}

void KernelPrinter::emit_pointwise(const PointwisePlan& plan) {
  const std::string I = index_type_, blk = std::to_string(plan_.block);
  const int v = plan.width;
  if (plan.form == PointwisePlan::Form::Elements) {
    // E elements a block apart per thread and iteration (coalesced as one element per thread is), unrolled so that
    // the E elements' loads are in flight together; a guard only where the count is not a multiple of the span.
    const int e_count = plan.groups_per_thread;
    const std::string numel = index(k_.numel);
    int scopes = 1;
    if (e_count == 1) {
      open("for (" + I + " i = (" + I + ")blockIdx.x * " + blk + " + threadIdx.x; i < " + numel + "; i += (" + I +
           ")gridDim.x * " + blk + ")");
    } else {
      const int64_t span = int64_t{plan_.block} * e_count;
      const std::optional<int64_t> n = simplify(k_.numel, p_.size_ranges).as_const();
      line("// " + std::to_string(e_count) + " elements per thread, " + blk + " apart");
      open("for (" + I + " i0 = (" + I + ")blockIdx.x * " + std::to_string(span) + " + threadIdx.x; i0 < " + numel +
           "; i0 += (" + I + ")gridDim.x * " + std::to_string(span) + ")");
      line("#pragma unroll");
      open("for (int e = 0; e < " + std::to_string(e_count) + "; ++e)");
      line("const " + I + " i = i0 + e * " + blk + ";");
      scopes = 2;
      if (!n || *n % span != 0) {
        open("if (i < " + numel + ")");
        scopes = 3;
      }
    }
    emit_pointwise_elements();
    for (int s = 0; s < scopes; ++s) close();
    return;
  }
  // Vector groups: elements i = g*V + j, j < V. A thread takes E groups a block apart per iteration (all loads
  // first, so E*V*bytes are in flight), moving contiguous operands with vector loads and stores; the last
  // numel % V elements take the scalar loop.
  const Index numel = simplify(k_.numel, p_.size_ranges);
  const std::optional<int64_t> known_groups = plan.groups.as_const();
  ranges_["g"] = group_range(numel, v, p_.size_ranges);
  ranges_["j"] = Range::loop(v);
  const std::map<std::string, Index> lanes{{"i", Index::var("g") * v + Index::var("j")}};
  std::vector<Expr> bodies;
  std::vector<Index> stores;
  lane_views(lanes, bodies, stores);
  std::vector<Expr> loads = external_loads(bodies);
  // Concatenations: the group loads the taken operand with one vector load from the address the plan's condition
  // selects, into one array both operands read from.
  const std::vector<SelectedLoad>& selects = plan.selected_loads;
  const int e_count = plan.groups_per_thread;
  const int64_t span = int64_t{plan_.block} * e_count;
  const std::string vs = std::to_string(v), es = std::to_string(e_count), per_thread = std::to_string(e_count * v);
  const std::string gs = known_groups ? std::to_string(*known_groups) : "(" + index(plan.groups) + ")";
  const bool ragged = !known_groups || *known_groups % span != 0;
  line("// " + vs + " elements per vector group, " + es + " groups per thread");
  open("for (" + I + " g0 = (" + I + ")blockIdx.x * " + std::to_string(span) + " + threadIdx.x; g0 < " + gs +
       "; g0 += (" + I + ")gridDim.x * " + std::to_string(span) + ")");
  auto open_groups = [&] {
    line("#pragma unroll");
    open("for (int e = 0; e < " + es + "; ++e)");
    line("const " + I + " g = g0 + e * " + blk + ";");
  };
  auto guard = ragged ? "if (g < " + gs + ") " : std::string();
  std::vector<std::pair<std::string, const Expr*>> vector_loads;
  for (const Expr& load : loads)
    if (contiguous_lanes(load->index))
      vector_loads.emplace_back(vector_array(load, e_count * v, "q"), &load);
  std::vector<std::string> select_arrays;
  for (const SelectedLoad& sl : selects) {
    select_arrays.push_back(vector_array(sl.if_true, e_count * v, "q"));
    alias_vector_array(sl.if_false, select_arrays.back(), "q");
  }
  if (!vector_loads.empty() || !selects.empty()) {
    open_groups();
    for (const auto& [name, load] : vector_loads) {
      Index base = lane0((*load)->index);
      line(guard + vector_call("load", (*load)->buffer, base, v, "&" + name + "[e * " + vs + "]"));
    }
    for (size_t n_s = 0; n_s < selects.size(); ++n_s) {
      const SelectedLoad& sl = selects[n_s];
      const std::string t_fn = vector_fn("load", sl.if_true->buffer, sl.true_base, v);
      const std::string fn = t_fn == vector_fn("load", sl.if_false->buffer, sl.false_base, v)
                                 ? t_fn
                                 : "hi_load_vec<" + vs + ">";
      const std::string condition =
          "(" + index_c(sl.anchor.str()) + ") " + sl.comparison + " " + std::to_string(sl.bound);
      line(guard + fn + "((" + condition + ") ? " + param_name(sl.if_true->buffer) + " + (" +
           index(sl.true_base) + ") : " + param_name(sl.if_false->buffer) + " + (" + index(sl.false_base) + "), &" +
           select_arrays[n_s] + "[e * " + vs + "]);");
    }
    close();
  }
  std::vector<std::string> store_arrays(k_.computations.size());
  for (size_t n_c = 0; n_c < k_.computations.size(); ++n_c) {
    if (!vector_store(n_c, stores[n_c])) continue;
    store_arrays[n_c] = "st" + std::to_string(next_array_++);
    line(storage_type(p_.buffers[p_.computations[k_.computations[n_c]].buffer].dtype) + " " + store_arrays[n_c] + "[" +
         per_thread + "];");
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
      line(store_arrays[n_c] + "[q] = " + stored(bodies[n_c], b.dtype) + ";");
    else
      line(param_name(c.buffer) + "[" + index(stores[n_c]) + "] = " + stored(bodies[n_c], b.dtype) + ";");
  }
  if (ragged) close();
  close();
  if (std::any_of(store_arrays.begin(), store_arrays.end(), [](const std::string& a) { return !a.empty(); })) {
    open_groups();
    for (size_t n_c = 0; n_c < k_.computations.size(); ++n_c) {
      if (store_arrays[n_c].empty()) continue;
      int b = p_.computations[k_.computations[n_c]].buffer;
      Index base = lane0(stores[n_c]);
      line(guard + vector_call("store", b, base, v, "&" + store_arrays[n_c] + "[e * " + vs + "]"));
    }
    close();
  }
  close();
  local_value_.clear();
  const Index tail_start = simplify(plan.groups * Index(v), p_.size_ranges);
  if (simplify(numel - tail_start, p_.size_ranges) == Index(0)) return;
  open("for (" + I + " i = " + index(tail_start) + " + (" + I + ")blockIdx.x * " + blk + " + threadIdx.x; i < " +
       index(numel) + "; i += (" + I + ")gridDim.x * " + blk + ")");
  emit_pointwise_elements();
  close();
}

}  // namespace hi::codegen_detail
