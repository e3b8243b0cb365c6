// A kernel's computations seen from inside it (see kernel_lanes.h).
#include "codegen/kernel_lanes.h"

namespace hi::codegen_detail {

bool reads_buffer(const Expr& e, int buffer) {
  bool reads = false;
  visit(e, [&](const Expr& x) { reads |= x->op == ExprOp::Load && x->buffer == buffer; });
  return reads;
}

bool is_local(const Kernel& k, int buffer) {
  return std::find(k.local_buffers.begin(), k.local_buffers.end(), buffer) != k.local_buffers.end();
}

bool produced_here(const LoopProgram& p, const Kernel& k, int buffer) {
  for (int c : k.computations)
    if (p.computations[c].buffer == buffer) return true;
  return false;
}

Expr kernel_body(const LoopProgram& p, const Kernel& k, const Computation& c, const VarRanges& ranges) {
  return substitute_vars(c.body, kernel_var_map(c, k), ranges);
}

Index kernel_store_index(const LoopProgram& p, const Kernel& k, const Computation& c, const VarRanges& ranges) {
  return simplify(substitute(Computation::store_index(p.buffers[c.buffer]), kernel_var_map(c, k)), ranges);
}

void lane_views(const LoopProgram& p, const Kernel& k, const std::map<std::string, Index>& lanes,
                const VarRanges& ranges, std::vector<Expr>& bodies, std::vector<Index>& stores) {
  for (int ci : k.computations) {
    const Computation& c = p.computations[ci];
    bodies.push_back(substitute_vars(kernel_body(p, k, c, ranges), lanes, ranges));
    stores.push_back(simplify(substitute(kernel_store_index(p, k, c, ranges), lanes), ranges));
  }
}

std::vector<Expr> external_loads(const LoopProgram& p, const Kernel& k, const std::vector<Expr>& bodies) {
  std::vector<Expr> out;
  for (const Expr& body : bodies)
    visit(body, [&](const Expr& e) {
      if (e->op != ExprOp::Load || !e->args.empty() || produced_here(p, k, e->buffer)) return;
      if (std::find(out.begin(), out.end(), e) == out.end()) out.push_back(e);
    });
  return out;
}

std::vector<std::pair<Index, DType>> kernel_accesses(const LoopProgram& p, const Kernel& k, const VarRanges& ranges,
                                                     bool stores) {
  std::vector<std::pair<Index, DType>> out;
  for (int ci : k.computations) {
    const Computation& c = p.computations[ci];
    Expr body = kernel_body(p, k, c, ranges);
    for (const Expr& load : external_loads(p, k, {body})) out.emplace_back(load->index, p.buffers[load->buffer].dtype);
    if (stores && !is_local(k, c.buffer))
      out.emplace_back(kernel_store_index(p, k, c, ranges), p.buffers[c.buffer].dtype);
  }
  return out;
}

int narrowest_bytes(const std::vector<std::pair<Index, DType>>& accesses) {
  int bytes = 8;
  for (const auto& a : accesses) bytes = std::min(bytes, static_cast<int>(dtype_bytes(a.second)));
  return std::max(1, bytes);
}

bool writes_rows(const LoopProgram& p, const Kernel& k) {
  return std::any_of(k.computations.begin(), k.computations.end(), [&](int ci) {
    const Computation& c = p.computations[ci];
    return !c.is_reduction() && !is_row_epilogue(c, k) && !is_local(k, c.buffer);
  });
}

KernelOperands kernel_operands(const LoopProgram& p, const Kernel& k) {
  KernelOperands o;
  auto note_index = [&](const Index& i) {
    for (const std::string& v : free_vars(i))
      if (p.size_ranges.count(v)) o.symbols.insert(v);
  };
  for (int c : k.computations) {
    const Computation& comp = p.computations[c];
    visit_computation(comp, [&](const Expr& e) {
      if (e->index.defined()) note_index(e->index);
      if (e->op == ExprOp::Load && !is_local(k, e->buffer)) o.read.insert(e->buffer);
    });
    if (!is_local(k, comp.buffer)) o.written.insert(comp.buffer);
    for (const Index& s : comp.sizes) note_index(s);
    for (const Index& s : comp.reduce_sizes) note_index(s);
  }
  return o;
}

}  // namespace hi::codegen_detail
