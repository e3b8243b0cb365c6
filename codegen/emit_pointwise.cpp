// Pointwise kernels: vector groups, several per thread, loads first (docs/architecture.md, "Kernel shapes").
#include "codegen/kernel_printer.h"

namespace hi::codegen_detail {

namespace {

/// `e` with the min/max nodes decided by `anchor` lying in [lo, hi] folded away: min(anchor + k, c) is anchor + k
/// when hi + k <= c and c when lo + k >= c (max alike); everything else is rebuilt from folded operands. Used under
/// one branch of `where(anchor < C, ...)`, where the clamps a concatenation puts into its loads' indices (to keep
/// the other branch's lanes in bounds) are decided.
Index fold_clamps(const Index& e, const Index& anchor, int64_t lo, int64_t hi, const VarRanges& ranges) {
  if (e.is_const() || e.is_var()) return e;
  std::vector<Index> a;
  for (const Index& x : e.args()) a.push_back(fold_clamps(x, anchor, lo, hi, ranges));
  switch (e.op()) {
    case IndexOp::Add: return sum(a);
    case IndexOp::Mul: return product(a);
    case IndexOp::FloorDiv: return floordiv(a[0], a[1]);
    case IndexOp::Mod: return mod(a[0], a[1]);
    case IndexOp::Min:
    case IndexOp::Max: {
      const bool is_min = e.op() == IndexOp::Min;
      for (int side = 0; side < 2; ++side) {
        const Index& v = a[side];
        const Index& c = a[1 - side];
        auto k = simplify(v - anchor, ranges).as_const();
        if (!c.is_const() || !k) continue;
        const int64_t vlo = lo + *k, vhi = hi + *k, cv = c.value();
        if (is_min ? vhi <= cv : vlo >= cv) return v;
        if (is_min ? vlo >= cv : vhi <= cv) return c;
      }
      return is_min ? min(a[0], a[1]) : max(a[0], a[1]);
    }
    default: return e;
  }
}

/// Transposed reads' tiles: kTile x kTile elements per block of kTile x kRows threads (kTile / kRows rows each).
constexpr int kTile = 32, kRows = 8;

int count_in(const Expr& root, const Expr& load) {
  int n = 0;
  visit(root, [&](const Expr& e) { n += e == load; });
  return n;
}

}  // namespace

std::vector<KernelPrinter::SelectedLoad> KernelPrinter::selected_loads(const std::vector<Expr>& bodies,
                                                                        const std::vector<Expr>& loads, int v) const {
  std::vector<Expr> gathers;  // read directly (no indirect index), not contiguous as written
  for (const Expr& load : loads)
    if (load->args.empty() && !contiguous_lanes(load->index)) gathers.push_back(load);
  std::vector<SelectedLoad> out;
  if (gathers.empty()) return out;
  std::vector<Expr> seen;
  for (const Expr& body : bodies)
    visit(body, [&](const Expr& w) {
      if (w->op != ExprOp::Where || std::find(seen.begin(), seen.end(), w) != seen.end()) return;
      seen.push_back(w);
      const Expr& cond = w->args[0];
      if (cond->op != ExprOp::Binary || cond->args[0]->op != ExprOp::IndexValue ||
          cond->args[1]->op != ExprOp::IndexValue)
        return;
      const BinaryOp op = cond->binary_op();
      if (op != BinaryOp::Lt && op != BinaryOp::Le && op != BinaryOp::Gt && op != BinaryOp::Ge) return;
      std::optional<int64_t> c = simplify(cond->args[1]->index, ranges_).as_const();
      if (!c) return;
      // The condition must hold for all lanes of a group or for none: the anchor walks the lanes in order from a
      // multiple of V, and the first value of the upper part is a multiple of V too.
      const Index anchor = simplify(cond->args[0]->index, ranges_);
      if (!contiguous_lanes(anchor)) return;
      const int64_t split = (op == BinaryOp::Lt || op == BinaryOp::Ge) ? *c : *c + 1;
      if (split % v != 0 || simplify(mod(lane0(anchor), Index(v)), ranges_) != Index(0)) return;
      const Range r = bounds(anchor, ranges_);
      if (!r.lo || !r.hi) return;
      const bool upper = op == BinaryOp::Lt || op == BinaryOp::Le;  // if-true branch: anchor below the split
      const int64_t lo[2] = {upper ? *r.lo : split, upper ? split : *r.lo};
      const int64_t hi[2] = {upper ? split - 1 : *r.hi, upper ? *r.hi : split - 1};
      if (lo[0] > hi[0] || lo[1] > hi[1]) return;
      // One gather per branch, read nowhere else, contiguous once the branch's clamps are folded.
      std::optional<std::pair<Expr, Index>> side[2];
      for (int s = 0; s < 2; ++s) {
        for (const Expr& load : gathers) {
          const int here = count_in(w->args[1 + s], load);
          if (here == 0) continue;
          int total = 0;
          for (const Expr& b : bodies) total += count_in(b, load);
          if (total != here || side[s]) return;
          Index folded = simplify(fold_clamps(load->index, anchor, lo[s], hi[s], ranges_), ranges_);
          if (!contiguous_lanes(folded)) return;
          side[s] = std::make_pair(load, lane0(folded));
        }
      }
      if (!side[0] || !side[1]) return;
      if (p_.buffers[side[0]->first->buffer].dtype != p_.buffers[side[1]->first->buffer].dtype) return;
      std::string sign = op == BinaryOp::Lt ? " < " : op == BinaryOp::Le ? " <= " : op == BinaryOp::Gt ? " > " : " >= ";
      out.push_back({"(" + index_c(simplify(lane0(anchor), ranges_).str()) + ")" + sign + std::to_string(*c), side[0]->first, side[0]->second,
                     side[1]->first, side[1]->second});
    });
  return out;
}

void KernelPrinter::emit_pointwise_elements() {
  for (int ci : k_.computations) {
    const Computation& c = p_.computations[ci];
    Expr body = kernel_body(c);
    store(c, body, kernel_store_index(c));
  }
}

bool KernelPrinter::emit_pointwise_transposed() {
  auto n = simplify(k_.numel, p_.size_ranges).as_const();
  if (!n) return false;
  // The flat index i = (xo * P + xp) * Q + xq, for P x Q the two innermost dims one computation walks (its
  // outputs' memory order): the kernel's computations share i, not always their shapes (q, k^T and v of attention).
  std::vector<std::pair<int64_t, int64_t>> splits;
  for (int ci : k_.computations) {
    const Computation& c = p_.computations[ci];
    std::vector<Index> walked = c.sizes;
    if (!k_.loop_order.empty()) {
      walked.clear();
      for (int d : k_.loop_order) walked.push_back(c.sizes[d]);
    }
    if (walked.size() < 2) continue;
    auto pc = simplify(walked[walked.size() - 2], p_.size_ranges).as_const();
    auto qc = simplify(walked.back(), p_.size_ranges).as_const();
    if (pc && qc && *pc % kTile == 0 && *qc % kTile == 0 && *n % (*pc * *qc) == 0 &&
        std::find(splits.begin(), splits.end(), std::make_pair(*pc, *qc)) == splits.end())
      splits.emplace_back(*pc, *qc);
  }
  const VarRanges saved = ranges_;
  for (const auto& [P, Q] : splits) {
    const int64_t O = *n / (P * Q);
    ranges_ = saved;
    ranges_["xo"] = Range::loop(O);
    ranges_["xp"] = Range::loop(P);
    ranges_["xq"] = Range::loop(Q);
    std::vector<Expr> bodies;
    std::vector<Index> stores;
    lane_views({{"i", (Index::var("xo") * P + Index::var("xp")) * Q + Index::var("xq")}}, bodies, stores);
    auto along = [&](const Index& f, const char* var) { return classify_lanes(f, var, ranges_); };
    bool stores_coalesce = true;
    for (size_t c = 0; c < stores.size(); ++c)
      if (!is_local(p_.computations[k_.computations[c]].buffer) && along(stores[c], "xq") != LaneAccess::Contiguous)
        stores_coalesce = false;
    std::vector<Expr> tiled;
    for (const Expr& load : external_loads(bodies))
      if (load->args.empty() && along(load->index, "xq") == LaneAccess::Gather &&
          along(load->index, "xp") == LaneAccess::Contiguous)
        tiled.push_back(load);
    if (!stores_coalesce || tiled.empty() || tiled.size() > 4) continue;
    emit_transposed_tiles(O, P, Q, bodies, stores, tiled);
    ranges_ = saved;
    return true;
  }
  ranges_ = saved;
  return false;
}

void KernelPrinter::emit_transposed_tiles(int64_t O, int64_t P, int64_t Q, const std::vector<Expr>& bodies,
                                          const std::vector<Index>& stores, const std::vector<Expr>& tiled) {
  const std::string I = index_type_, t = std::to_string(kTile), rows = std::to_string(kRows);
  const int64_t ptiles = P / kTile, qtiles = Q / kTile, tiles = O * ptiles * qtiles;
  block_ = kTile * kRows;
  grid_ = Index(tiles);
  transposed_tiles_used_ = true;
  line("// " + t + " x " + t + " tiles of " + std::to_string(tiled.size()) +
       " transposed operand(s) through shared memory: read with lanes along the walk's dim of " + std::to_string(P) +
       ", computed and stored with lanes along its innermost (" + std::to_string(Q) + ")");
  std::vector<std::string> names;
  for (size_t k = 0; k < tiled.size(); ++k) {
    names.push_back("tile" + std::to_string(k));
    line("__shared__ " + value_type(tiled[k]->dtype) + " " + names[k] + "[" + t + "][" + std::to_string(kTile + 1) +
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

void KernelPrinter::emit_pointwise() {
  if (emit_pointwise_transposed()) return;
  const std::string I = index_type_, blk = std::to_string(block_);
  auto n = simplify(k_.numel, p_.size_ranges).as_const();
  int v = n ? vector_width("i", *n, false) : 1;
  // Transcendentals over few elements are bound by their instructions, not by memory: narrower vector groups (and,
  // below, fewer groups per thread) until 64k threads share them. RoPE's cos/sin of [1024, 128] bf16 ran 32 blocks
  // of 128 threads, each evaluating 64 sinf/cosf: 16 us on the H200, where Inductor's kernel took 1.
  const bool transcendental = std::any_of(k_.computations.begin(), k_.computations.end(),
                                          [&](int c) { return has_transcendental(p_.computations[c].body); });
  constexpr int64_t kComputeThreads = 65536;
  if (transcendental)
    while (v > 1 && *n / v < kComputeThreads) v /= 2;
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
  ranges_["g"] = Range::loop(groups);
  ranges_["j"] = Range::loop(v);
  const std::map<std::string, Index> lanes{{"i", Index::var("g") * v + Index::var("j")}};
  std::vector<Expr> bodies;
  std::vector<Index> stores;
  lane_views(lanes, bodies, stores);
  std::vector<Expr> loads = external_loads(bodies);
  // Concatenations: where the cat's condition holds for a whole vector group or for none of it, the group loads
  // the taken operand with one vector load from a selected address, into one array both operands read from.
  std::vector<SelectedLoad> selects = selected_loads(bodies, loads, v);
  const int64_t arrays = static_cast<int64_t>(selects.size()) +
                         std::count_if(loads.begin(), loads.end(), [&](const Expr& l) { return contiguous_lanes(l->index); });
  int64_t store_arrays_count = 0;
  for (size_t n_c = 0; n_c < k_.computations.size(); ++n_c) store_arrays_count += vector_store(n_c, stores[n_c]);
  // E, a power of two: up to 64 bytes per operand in flight per thread, at most 4 groups' load arrays and 10 groups'
  // load and store arrays per thread: registers bound occupancy (LLaMA's rotate-half, six operands: 2 groups each
  // took 66 registers; 1 group, far fewer; one input and four outputs with 4 groups, 144 VGPRs on gfx942 against 76
  // with 2). So a one-operand kernel loads 4 vectors per thread, a two-operand one 2 each (H200: tanh-gelu over bf16
  // with 4 took 0.0733 ms against 2's 0.0757; relu(a + b) with 4 each 0.1905 against 2's 0.1897).
  int e_count = pow2_at_most(std::min({int64_t{64} / (v * narrowest_bytes(accesses())),
                                      ceil_div(groups, block_), int64_t{4} / std::max<int64_t>(1, arrays),
                                      int64_t{10} / std::max<int64_t>(1, arrays + store_arrays_count)}));
  if (transcendental)
    while (e_count > 1 && groups / e_count < kComputeThreads) e_count /= 2;
  const int64_t span = int64_t{block_} * e_count;
  grid_ = Index(ceil_div(groups, span));
  const std::string vs = std::to_string(v), es = std::to_string(e_count), per_thread = std::to_string(e_count * v);
  const std::string gs = std::to_string(groups);
  const bool ragged = groups % span != 0;
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
      line(guard + fn + "((" + sl.condition + ") ? " + param_name(sl.if_true->buffer) + " + (" +
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
  if (*n % v == 0) return;
  open("for (" + I + " i = " + std::to_string(groups * v) + " + (" + I + ")blockIdx.x * " + blk +
       " + threadIdx.x; i < " + std::to_string(*n) + "; i += (" + I + ")gridDim.x * " + blk + ")");
  emit_pointwise_elements();
  close();
}

}  // namespace hi::codegen_detail
