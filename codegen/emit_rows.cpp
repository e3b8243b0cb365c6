// Row-reduction kernels as their plans say: persistent rows held in registers, and the row loop for rows too long
// for them.
#include <algorithm>
#include <functional>

#include "codegen/kernel_printer.h"
#include "codegen/plan_shapes.h"

namespace hi::codegen_detail {

void KernelPrinter::emit_row_persistent(const RowPlan& plan) {
  const int v = plan.width, t = plan.threads, e_count = plan.groups_per_thread, rpb = plan.rows_per_block;
  const bool peeled = plan.peeled;
  const int64_t groups = plan.length / v;
  // A peeled row's columns outside its whole groups (fewer than 2V) take `edges` slots per lane after the groups'.
  const int edges = peeled ? static_cast<int>(ceil_div(2 * (v - 1), t)) : 0;
  const std::string I = index_type_, vs = std::to_string(v), ts = std::to_string(t), rows = index(k_.numel);
  const std::string group_values = std::to_string(e_count * v), per_thread = std::to_string(e_count * v + edges);
  ranges_["cg"] = peeled ? Range{-1, groups} : Range::loop(groups);
  ranges_["j"] = Range::loop(v);
  if (peeled) ranges_["head"] = Range::loop(v);
  const std::map<std::string, Index> lanes{{"col", persistent_column(plan)}};
  line("// persistent rows: " + ts + " threads per row, " + per_thread + " values per thread in registers, " + vs +
       " per vector access");
  // Block-wide reductions (rows longer than a warp) store their warps' partials without a barrier first: each
  // reduction of a row has its own shared array, and every thread reads a row's partials before the barrier of the
  // row's next reduction, which a thread passes before storing into that array again. A kernel with one reduction per
  // row alternates two arrays, the halves of one, instead (smem_half). On the H200, LayerNorm over 16k x 4k bf16
  // spanned 69.2 us against 71.5 with the barrier, RMSNorm 66.3 against 68.2.
  auto reduction = [&](int ci) { return p_.computations[ci].is_reduction(); };
  // A max and its argmax (KernelPlan::extreme_pairs) are one reduction.
  const auto block_reductions =
      t > target_.warp_size ? std::count_if(k_.computations.begin(), k_.computations.end(), reduction) -
                                  static_cast<std::ptrdiff_t>(plan_.extreme_pairs.size())
                            : 0;
  if (block_reductions == 1) line("int smem_half = 0;");
  if (!plan.staged.empty()) {
    // Operands indexed by the column alone, copied once per block for all the rows it streams (RowPlan::staged).
    // The lanes of a warp read columns V apart, 16 bytes: 4 words, so 8 lanes would cover the 32 banks and every
    // eighth lane meet the same bank. A word of padding after each 128 bytes moves each run of 8 lanes to the next
    // bank, and a warp's reads fall in distinct banks (two-way at a row's head, which shifts them).
    for (const RowPlan::StagedOperand& s : plan.staged) {
      const Buffer& b = p_.buffers[s.buffer];
      const int item = dtype_bytes(b.dtype);
      const std::string name = "stg_" + b.name;
      const int64_t slots = plan.length + (plan.length / (128 / item) + 1) * std::max(1, 4 / item);
      line("__shared__ " + storage_type(b.dtype) + " " + name + "[" + std::to_string(slots) + "];");
      staged_[s.buffer] = {name, item};
    }
    open("for (int c = threadIdx.x; c < " + index(k_.row_length) + "; c += " + std::to_string(plan_.block) + ")");
    for (const RowPlan::StagedOperand& s : plan.staged)
      line(staged_slot(s.buffer, "c") + " = " + param_name(s.buffer) + "[" +
           index(substitute(s.at, {{"col", Index::var("c")}})) + "];");
    close();
    line("__syncthreads();");
    staged_column_ = index(persistent_column(plan));
  }
  if (rpb == 1) {
    open("for (" + I + " row = blockIdx.x; row < " + rows + "; row += gridDim.x)");
    line("const int lane = threadIdx.x;");
  } else {
    // Several rows per block; the last block's spare row slots recompute the last row and store nothing, so every
    // lane reaches the shuffles and every load stays in bounds.
    const std::string rp = std::to_string(rpb);
    open("for (" + I + " row0 = (" + I + ")blockIdx.x * " + rp + "; row0 < " + rows + "; row0 += (" + I +
         ")gridDim.x * " + rp + ")");
    line("const int lane = threadIdx.x % " + ts + ";");
    line("const bool row_ok = row0 + (" + I + ")(threadIdx.x / " + ts + ") < " + rows + ";");
    line("const " + I + " row = row_ok ? row0 + (" + I + ")(threadIdx.x / " + ts + ") : " +
         index(k_.numel - Index(1)) + ";");
    row_store_guard_ = "lane == 0 && row_ok";
  }
  const std::string len = index(k_.row_length);
  if (peeled) {
    head_aligns_ = plan.row_start;
    // The row's columns before its first aligned one (head), its whole groups from there, and its edge columns: the
    // head's and those after the last whole group.
    line("const int head = (int)hi_imin((" + vs + " - (" + index(plan.row_start) + ") % " + vs + ") % " + vs + ", " +
         len + ");");
    line("const int ngroups = (int)((" + len + " - head) / " + vs + ");");
    line("const int nedge = (int)(" + len + " - (" + I + ")ngroups * " + vs + ");");
  }
  // Lanes past the row's groups are idle: where the plan's threads x E exceed them, where the group count is
  // symbolic (a variant planned for rows up to plan.length), or per row (peeled).
  const bool ragged = peeled || int64_t{e_count} * t > groups || !plan.groups.is_const();
  // A peeled row of a known length has at least groups - 1 whole groups: the lanes of the groups below that are
  // known valid when the kernel is compiled.
  const std::string valid = peeled ? plan.groups.is_const() && groups > 1
                                         ? "(cg < " + std::to_string(groups - 1) + " || cg < ngroups)"
                                         : std::string("cg < ngroups")
                            : !ragged                ? ""
                            : plan.groups.is_const() ? "cg < " + std::to_string(groups)
                                                     : "cg < " + index(plan.groups);
  // A ragged row of whole groups (not peeled) keeps its lanes' loads and computations free of branches: a lane past
  // the row's groups reads and computes group 0's values instead (in bounds, as every row has a group), only its
  // reductions' combines (a select) and stores leave them out. Branches around each group's loads and values made
  // NVRTC hold both sides' registers: a symbolic softmax over bf16 rows took 96 registers against 56 (the static
  // kernel, rows of a known width: 50), RMSNorm 128 against 66, halving the blocks that stay resident.
  const bool clamped = ragged && !peeled;
  auto in_row = [&](const std::string& group) {
    return "(" + group + ") < " + (plan.groups.is_const() ? std::to_string(groups) : index(plan.groups));
  };
  auto guarded = [&](const std::string& extra, const std::string& statement) {
    std::string cond = valid;
    if (!extra.empty()) cond = cond.empty() ? extra : cond + " && " + extra;
    line(cond.empty() ? statement : "if (" + cond + ") " + statement);
  };
  // A peeled row's edge column ei (of nedge) in the view's terms: before the head in group -1, after the last whole
  // group in group ngroups.
  auto edge_position = [&](const std::string& ei, const std::string& in_groups) {
    const std::string before = ei + " < head";
    line("const int cg = " + (in_groups.empty() ? "" : in_groups + " ? (q / " + vs + ") * " + ts + " + lane : ") +
         before + " ? -1 : ngroups;");
    line("const int j = " + (in_groups.empty() ? "" : in_groups + " ? q % " + vs + " : ") + before + " ? " + ei +
         " - head + " + vs + " : " + ei + " - head;");
  };
  // Opens slot es of this lane's edge columns, where the row has it (and `extra` holds).
  auto open_edges = [&](const std::string& extra) {
    line("#pragma unroll");
    open("for (int es = 0; es < " + std::to_string(edges) + "; ++es)");
    line("const int ei = es * " + ts + " + lane;");
    open("if (ei < nedge" + (extra.empty() ? std::string() : " && " + extra) + ")");
    edge_position("ei", "");
  };
  const std::string store_ok = rpb == 1 ? "" : "row_ok";
  // "if (a && b) " of the conditions that are not empty, or nothing.
  auto guard_of = [](std::initializer_list<std::string> conditions) {
    std::string cond;
    for (const std::string& c : conditions)
      if (!c.empty()) cond += (cond.empty() ? "" : " && ") + c;
    return cond.empty() ? cond : "if (" + cond + ") ";
  };

  std::vector<Expr> bodies;
  std::vector<Index> stores;
  lane_views(lanes, bodies, stores);
  // Contiguous operands are read with vector loads, at the places the plan says (RowPlan::row_loads).
  using RowLoad = RowPlan::RowLoad;
  const std::vector<RowLoad>& row_loads = plan.row_loads;
  // `loads`: a clamped row's lanes past its groups read group 0 (see clamped).
  auto open_groups = [&](bool loads) {
    line("#pragma unroll");
    open("for (int e = 0; e < " + std::to_string(e_count) + "; ++e)");
    const std::string group = "e * " + ts + " + lane";
    line("const int cg = " + (loads && clamped ? in_row(group) + " ? " + group + " : 0" : group) + ";");
  };
  auto open_values = [&] {
    line("#pragma unroll");
    open("for (int q = 0; q < " + per_thread + "; ++q)");
    if (!peeled) {
      const std::string group = "(q / " + vs + ") * " + ts + " + lane";
      if (clamped) {
        line("const bool in_row = " + in_row(group) + ";");
        line("const int cg = in_row ? " + group + " : 0;");
      } else {
        line("const int cg = " + group + ";");
      }
      line("const int j = q % " + vs + ";");
      if (ragged && !clamped) open("if (" + valid + ")");
      return;
    }
    const std::string in_groups = "q < " + group_values;
    line("const int ei = (q - " + group_values + ") * " + ts + " + lane;");
    edge_position("ei", in_groups);
    open("if (" + in_groups + " ? " + valid + " : ei < nedge)");
  };
  auto close_values = [&] {
    if (ragged && !clamped) close();
    close();
  };
  // Declares and fills the arrays of the loads that `shared` (used by several phases) selects, or that phase
  // `phase` alone uses.
  auto load_rows = [&](bool shared, size_t phase) {
    std::vector<std::pair<std::string, const RowLoad*>> arrays;
    for (const RowLoad& l : row_loads) {
      bool mine = shared ? l.users.size() > 1 : (l.users.size() == 1 && l.users[0] == phase);
      if (mine) arrays.emplace_back(vector_array(l.load, e_count * v + edges, "q"), &l);
    }
    if (arrays.empty()) return;
    open_groups(true);
    for (const auto& [name, l] : arrays) {
      const std::string load = vector_call("load", l->load->buffer, l->base, v, "&" + name + "[e * " + vs + "]");
      if (clamped) line(load);
      else guarded("", load);
    }
    close();
    if (!peeled) return;
    open_edges("");
    for (const auto& [name, l] : arrays)
      line(name + "[" + group_values + " + es] = " + param_name(l->load->buffer) + "[(" + index(l->base) + ") + j];");
    close();
    close();
  };
  load_rows(true, 0);

  // Expensive per-element values that several phases compute are computed once and kept in a register array by the
  // first phase that needs them (RowPlan::cached_values).
  const std::vector<RowPlan::CachedValue>& cached = plan.cached_values;
  std::vector<std::string> cache_arrays;
  for (const RowPlan::CachedValue& c : cached) {
    cache_arrays.push_back("cv" + std::to_string(next_array_++));
    line(value_type(c.value->dtype) + " " + cache_arrays.back() + "[" + per_thread + "];");
  }
  // Inside phase `n_c`'s value loop: save the values it is first to compute; after the loop: reuse them.
  auto save_cached = [&](size_t n_c) {
    for (size_t k = 0; k < cached.size(); ++k)
      if (cached[k].first == n_c) line(cache_arrays[k] + "[q] = " + expr(cached[k].value) + ";");
  };
  // Values that read a mean the phase corrected (keep_deviations) are computed again from it instead.
  auto reuse_cached = [&](size_t n_c, const Expr& corrected_mean = Expr()) {
    for (size_t k = 0; k < cached.size(); ++k) {
      if (cached[k].first != n_c) continue;
      bool stale = false;
      if (corrected_mean.defined())
        visit(cached[k].value, [&](const Expr& e) { stale = stale || e == corrected_mean; });
      if (!stale) cse_.back()[cached[k].value.hash()].emplace_back(cached[k].value, cache_arrays[k] + "[q]");
    }
  };

  // Which per-element values later computations of the kernel read (kept in register arrays across phases).
  std::set<int> read_later;
  for (size_t n_c = 0; n_c < bodies.size(); ++n_c)
    visit(bodies[n_c], [&](const Expr& e) {
      if (e->op == ExprOp::Load && produced_here(e->buffer)) read_later.insert(e->buffer);
    });

  for (size_t n_c = 0; n_c < k_.computations.size(); ++n_c) {
    const Computation& c = p_.computations[k_.computations[n_c]];
    const Expr& body = bodies[n_c];
    const Buffer& b = p_.buffers[c.buffer];
    if (emit_row_epilogue(c, body)) continue;
    if (!c.is_reduction()) {
      line("// " + c.name + ": epilogue");
      const bool contiguous = !is_local(c.buffer) && contiguous_lanes(stores[n_c]);
      std::string st, kept;
      if (contiguous) {
        st = "st" + std::to_string(next_array_++);
        line(storage_type(b.dtype) + " " + st + "[" + per_thread + "];");
      }
      if (read_later.count(c.buffer)) {
        kept = "pw_" + b.name;
        line(value_type(b.dtype) + " " + kept + "[" + per_thread + "];");
      }
      open("");
      load_rows(false, n_c);
      open_values();
      std::string value = expr(body);
      std::string name = "v_" + b.name;
      line("const " + value_type(b.dtype) + " " + name + " = " + convert(value, body->dtype, b.dtype) + ";");
      if (!kept.empty()) line(kept + "[q] = " + name + ";");
      if (contiguous) line(st + "[q] = " + stored(body, b.dtype) + ";");
      else if (!is_local(c.buffer))
        line(guard_of({clamped ? "in_row" : "", store_ok}) + param_name(c.buffer) + "[" + index(stores[n_c]) +
             "] = " + stored(body, b.dtype) + ";");
      save_cached(n_c);
      close_values();
      close();
      reuse_cached(n_c);
      if (contiguous) {
        Index base = lane0(stores[n_c]);
        open_groups(false);
        guarded(store_ok, vector_call("store", c.buffer, base, v, "&" + st + "[e * " + vs + "]"));
        close();
        if (peeled) {
          open_edges(store_ok);
          line(param_name(c.buffer) + "[(" + index(base) + ") + j] = " + st + "[" + group_values + " + es];");
          close();
          close();
        }
      }
      if (!kept.empty()) local_value_[c.buffer] = kept + "[q]";
      continue;
    }
    if (computed_with_extreme(n_c)) continue;
    // A max with its argmax accumulates the argmax's {value, position} pairs (KernelPlan::extreme_pairs).
    const std::optional<size_t> arg = paired_arg(n_c);
    const Computation& rc = arg ? p_.computations[k_.computations[*arg]] : c;
    const Expr& rbody = arg ? bodies[*arg] : body;
    const Expr mean = arg ? Expr() : deviations_mean(p_, k_, bodies, n_c);
    const auto [functor, acc, a] = begin_row_reduction(rc, rbody, mean);
    open("");
    load_rows(false, n_c);
    open_values();
    const std::string combined = functor + "::combine(" + acc + ", " + row_element(rbody, mean.defined()) + ")";
    line(acc + " = " + (clamped ? "in_row ? " + combined + " : " + acc : combined) + ";");
    save_cached(n_c);
    close_values();
    close();
    reuse_cached(n_c, mean);
    if (t <= target_.warp_size) {
      line(acc + " = hi_group_reduce<" + functor + ">(" + acc + ", " + ts + ");");
    } else {  // no barrier first: see block_reductions
      const std::string warps = std::to_string(t / target_.warp_size), smem = "smem_" + p_.buffers[rc.buffer].name;
      if (block_reductions >= 2) {
        line("__shared__ " + a.type + " " + smem + "[" + warps + "];");
        line(acc + " = hi_block_reduce_free<" + functor + ">(" + acc + ", " + smem + ");");
      } else {
        line("__shared__ " + a.type + " " + smem + "[2 * " + warps + "];");
        line(acc + " = hi_block_reduce_free<" + functor + ">(" + acc + ", " + smem + " + smem_half * " + warps + ");");
      }
    }
    if (mean.defined()) {
      keep_deviations(c, mean, acc);
      continue;
    }
    keep_reduced(c, body, arg ? &rc : nullptr, acc, a);
  }
  if (block_reductions == 1) line("smem_half ^= 1;");
  close();
  local_value_.clear();
  head_aligns_.reset();
  staged_.clear();
}

void KernelPrinter::emit_row_loop(const RowPlan& plan) {
  // One block per row (grid-stride over rows); threads stride over the row's columns, in vector groups of V
  // consecutive columns when the row length allows, after the columns a peeled row takes one per thread.
  std::string rows = index(k_.numel), len = index(k_.row_length), blk = std::to_string(plan_.block);
  const std::string I = index_type_;
  const Index length = simplify(k_.row_length, p_.size_ranges);
  const int v = plan.width;
  std::vector<Expr> bodies, scalar_bodies;
  std::vector<Index> stores, scalar_stores;
  const bool peel = plan.peeled;
  if (peel) {
    ranges_["head"] = Range::loop(v);
    ranges_["cg"] = group_range(length, v, p_.size_ranges);
    ranges_["j"] = Range::loop(v);
    lane_views({{"col", Index::var("head") + Index::var("cg") * v + Index::var("j")}}, bodies, stores);
    lane_views({}, scalar_bodies, scalar_stores);
  }
  const std::string vs = std::to_string(v);
  if (!peel) {
    std::map<std::string, Index> lanes;
    if (v > 1) {
      ranges_["cg"] = group_range(length, v, p_.size_ranges);
      ranges_["j"] = Range::loop(v);
      lanes["col"] = Index::var("cg") * v + Index::var("j");
    }
    lane_views(lanes, bodies, stores);
  }
  open("for (" + I + " row = blockIdx.x; row < " + rows + "; row += gridDim.x)");
  if (peel) {
    line("const int head = (int)((" + vs + " - (" + index(plan.row_start) + ") % " + vs + ") % " + vs + ");");
    line("const " + I + " ngroups = (" + len + " - head) / " + vs + ";");
  }
  // Prints emit(scalar, st) for each of this thread's columns of phase `n`: one column at a time (v == 1), else in
  // vector groups with lanes j (st: the group's store array of `stored`, or empty), after the peeled row's scalar
  // head and tail. `scalar` selects the views the statement reads: scalar_bodies/stores or bodies/stores.
  auto columns = [&](size_t n, const Computation* stored, const std::function<void(bool, const std::string&)>& emit) {
    if (v == 1) {
      open("for (" + I + " col = threadIdx.x; col < " + len + "; col += " + blk + ")");
      emit(false, "");
      close();
      return;
    }
    if (peel) {
      open("if (threadIdx.x < " + len + " - ngroups * " + vs + ")");
      line("const " + I + " col = threadIdx.x < head ? (" + I + ")threadIdx.x : (" + I + ")threadIdx.x + ngroups * " +
           vs + ";");
      emit(true, "");
      close();
    }
    const Index groups = simplify(floordiv(length, Index(v)), p_.size_ranges);
    const std::string count = peel                ? std::string("ngroups")
                              : groups.is_const() ? std::to_string(groups.value())
                                                  : "(" + index(groups) + ")";
    open("for (" + I + " cg = threadIdx.x; cg < " + count + "; cg += " + blk + ")");
    load_group(bodies[n], v);
    std::string st;
    if (stored && !is_local(stored->buffer) && contiguous_lanes(stores[n])) {
      st = "st" + std::to_string(next_array_++);
      line(storage_type(p_.buffers[stored->buffer].dtype) + " " + st + "[" + vs + "];");
    }
    line("#pragma unroll");
    open("for (int j = 0; j < " + vs + "; ++j)");
    emit(false, st);
    close();
    if (!st.empty()) line(vector_call("store", stored->buffer, lane0(stores[n]), v, st));
    close();
  };
  for (size_t n = 0; n < k_.computations.size(); ++n) {
    const Computation& c = p_.computations[k_.computations[n]];
    const Expr& body = bodies[n];
    const Buffer& b = p_.buffers[c.buffer];
    auto view = [&](bool scalar, size_t m) -> const Expr& { return scalar ? scalar_bodies[m] : bodies[m]; };
    // Two statistics of the row in one pass instead of two (RowPlan::one_pass): online softmax, or Welford with the
    // plain sum kept beside it. Their common x is the first reduction's value.
    auto pass = std::find_if(plan.one_pass.begin(), plan.one_pass.end(),
                             [&](const RowPlan::OnePass& o) { return o.first == n; });
    if (pass != plan.one_pass.end()) {
      const Computation& next = p_.computations[k_.computations[n + 1]];
      const bool softmax = pass->online_softmax, base2 = pass->base2;
      const std::string acc = "acc_" + b.name, sum = "sum_" + b.name;
      const std::string type = softmax ? "hi_softmax_acc" : "hi_welford_acc";
      const std::string op = softmax ? std::string("hi_online_softmax_op<") + (base2 ? "1" : "0") + ">" : "hi_welford_op";
      const std::string warps = std::to_string(std::max(1, plan_.block / target_.warp_size));
      line("// " + c.name + ", " + next.name + ": " +
           (softmax ? "max and sum of exp(x - max)" : "sum and sum of squared deviations") + " over the row in one pass");
      line(type + " " + acc + " = " + op + "::identity<" + type + ">();");
      if (!softmax) line("float " + sum + " = 0.0f;");
      columns(n, nullptr, [&](bool scalar, const std::string&) {
        const std::string value = "(float)(" + expr(view(scalar, n)->args[0]) + ")";
        line(acc + " = " + op + "::add(" + acc + ", " + value + ");");
        if (!softmax) line(sum + " += " + value + ";");
      });
      line("__shared__ " + type + " smem_" + b.name + "[" + warps + "];");
      std::string reduced = "hi_block_reduce<" + op + ">(" + acc + ", smem_" + b.name + ")";
      line(acc + " = " + (softmax ? op + "::finish(" + reduced + ")" : reduced) + ";");
      if (!softmax) {
        line("__shared__ float smem_" + sum + "[" + warps + "];");
        line(sum + " = hi_block_reduce<hi_sum_op>(" + sum + ", smem_" + sum + ");");
      }
      keep_row_value(c, convert(softmax ? acc + ".m" : sum, DType::Float32, b.dtype));
      keep_row_value(next, convert(acc + (softmax ? ".s" : ".m2"), DType::Float32, p_.buffers[next.buffer].dtype));
      // Welford's own mean, exact for a row of equal values, for every later read of sum / N (deviations_mean).
      if (!softmax) take_mean(deviations_mean(p_, k_, bodies, n + 1), acc + ".mean");
      ++n;
      continue;
    }
    if (emit_row_epilogue(c, body)) continue;
    if (!c.is_reduction()) {
      line("// " + c.name + ": epilogue");
      columns(n, &c, [&](bool scalar, const std::string& st) {
        const Expr& e = view(scalar, n);
        if (st.empty()) {
          store(c, e, scalar ? scalar_stores[n] : stores[n]);
        } else {
          line(st + "[j] = " + stored(e, b.dtype) + ";");
        }
      });
      continue;
    }
    if (computed_with_extreme(n)) continue;
    // A max with its argmax accumulates the argmax's {value, position} pairs (KernelPlan::extreme_pairs).
    const std::optional<size_t> arg = paired_arg(n);
    const size_t r = arg ? *arg : n;
    const Computation& rc = p_.computations[k_.computations[r]];
    const std::string smem = "smem_" + p_.buffers[rc.buffer].name;
    const Expr mean = arg ? Expr() : deviations_mean(p_, k_, bodies, n);
    const auto [functor, acc, a] = begin_row_reduction(rc, bodies[r], mean);
    columns(r, nullptr, [&](bool scalar, const std::string&) {
      const Expr& viewed = view(scalar, r);
      line(acc + " = " + functor + "::combine(" + acc + ", " + row_element(viewed, mean.defined()) + ");");
    });
    line("__shared__ " + a.type + " " + smem + "[" + std::to_string(std::max(1, plan_.block / target_.warp_size)) + "];");
    line(acc + " = hi_block_reduce<" + functor + ">(" + acc + ", " + smem + ");");
    if (mean.defined()) {
      keep_deviations(c, mean, acc);
      continue;
    }
    keep_reduced(c, body, arg ? &rc : nullptr, acc, a);
  }
  close();
}

bool KernelPrinter::emit_row_epilogue(const Computation& c, const Expr& body) {
  if (!is_row_epilogue(c, k_)) return false;
  // One value per row: every thread computes it (it may feed later phases), thread 0 stores it.
  line("// " + c.name + ": row epilogue");
  keep_row_value(c, convert(expr(body), body->dtype, p_.buffers[c.buffer].dtype));
  return true;
}

KernelPrinter::RowReduction KernelPrinter::begin_row_reduction(const Computation& c, const Expr& body,
                                                               const Expr& mean) {
  const ReduceOp op = body->reduce_op();
  RowReduction r{reduce_functor(op), "acc_" + p_.buffers[c.buffer].name, accumulation(body)};
  if (mean.defined()) {
    r.functor = "hi_deviation_sums_op";
    r.accumulation.type = "hi_deviation_sums";
    line("// " + c.name + ": sums of the deviations from the row's first mean, and of their squares");
    line(r.accumulation.type + " " + r.acc + " = " + r.functor + "::identity<" + r.accumulation.type + ">();");
    return r;
  }
  line("// " + c.name + ": " + std::string(reduce_op_name(op)) + " over the row");
  line(r.accumulation.type + " " + r.acc + " = " + r.functor + "::identity<" + r.accumulation.type + ">();");
  return r;
}

void KernelPrinter::keep_reduced(const Computation& c, const Expr& body, const Computation* arg,
                                 const std::string& acc, const Accumulation& a) {
  if (!arg) {
    keep_row_value(c, convert(acc + a.result_suffix, a.result_dtype, p_.buffers[c.buffer].dtype));
    return;
  }
  // The pair's value is the max itself, in the max's accumulator type.
  keep_row_value(c, convert(acc + ".v", accumulation(body).result_dtype, p_.buffers[c.buffer].dtype));
  keep_row_value(*arg, convert(acc + a.result_suffix, a.result_dtype, p_.buffers[arg->buffer].dtype));
}

void KernelPrinter::keep_deviations(const Computation& c, const Expr& mean, const std::string& acc) {
  const std::string count = expr(mean->args[1]);
  const std::string corrected = "mean_" + p_.buffers[c.buffer].name;
  line("const float " + corrected + " = " + expr(mean) + " + hi_div(" + acc + ".d, " + count + ");");
  keep_row_value(c, convert("hi_corrected_m2(" + acc + ", " + count + ")", DType::Float32, p_.buffers[c.buffer].dtype));
  take_mean(mean, corrected);
}

void KernelPrinter::take_mean(const Expr& mean, const std::string& value) {
  // Every scope's entry for `mean` goes: the innermost would otherwise answer first with the uncorrected value.
  for (auto& scope : cse_) {
    auto found = scope.find(mean.hash());
    if (found == scope.end()) continue;
    auto& entries = found->second;
    entries.erase(std::remove_if(entries.begin(), entries.end(), [&](const auto& kv) { return kv.first == mean; }),
                  entries.end());
  }
  cse_.back()[mean.hash()].emplace_back(mean, value);
}

void KernelPrinter::keep_row_value(const Computation& c, const std::string& value) {
  // Every thread holds the row's value in a register, and later phases of this kernel read it from there even when
  // it also goes to memory: reading it back from memory would race with the thread that stores it.
  const Buffer& b = p_.buffers[c.buffer];
  std::string name = "v_" + b.name;
  line("const " + value_type(b.dtype) + " " + name + " = " + value + ";");
  local_value_[c.buffer] = name;
  row_values_.insert(c.buffer);
  if (!is_local(c.buffer))
    line("if (" + row_store_guard_ + ") " + param_name(c.buffer) + "[" + index(kernel_store_index(c)) +
         "] = " + store_value(name, b.dtype) + ";");
}

}  // namespace hi::codegen_detail
