#include "pipeline/compiled_graph_json.h"

#include <optional>
#include <stdexcept>

#include "frontend/index_text.h"

namespace hi {
namespace {

using nlohmann::json;

// An index as the payload holds it: an integer, or {"sym": TEXT} (frontend/index_text.h) when it names symbols.
json index_json(const Index& i) {
  if (std::optional<int64_t> value = i.as_const()) return *value;
  return json{{"sym", format_index_text(i)}};
}

Index parse_index_json(const json& j) {
  if (j.is_object()) return parse_index_text(j.at("sym").get<std::string>());
  return Index(j.get<int64_t>());
}

BufferKind parse_buffer_kind(const std::string& name) {
  for (BufferKind k : {BufferKind::Input, BufferKind::Output, BufferKind::Intermediate})
    if (buffer_kind_name(k) == name) return k;
  throw std::invalid_argument("unknown buffer kind '" + name + "'");
}

KernelKind parse_kernel_kind(const std::string& name) {
  for (KernelKind k : {KernelKind::Pointwise, KernelKind::RowReduction, KernelKind::ColumnReduction, KernelKind::Scan,
                       KernelKind::Scatter})
    if (kernel_kind_name(k) == name) return k;
  throw std::invalid_argument("unknown kernel kind '" + name + "'");
}

std::vector<Index> indices(const json& values) {
  std::vector<Index> out;
  for (const json& v : values) out.push_back(parse_index_json(v));
  return out;
}

}  // namespace

json compiled_graph_to_json(const CompiledGraph& g) {
  const LoopProgram& p = g.program;
  json buffers = json::array();
  for (size_t b = 0; b < p.buffers.size(); ++b) {
    const Buffer& buffer = p.buffers[b];
    json sizes = json::array(), strides = json::array();
    for (const Index& s : buffer.sizes) sizes.push_back(index_json(s));
    for (const Index& s : buffer.strides) strides.push_back(index_json(s));
    buffers.push_back({{"name", buffer.name},
                       {"dtype", std::string(dtype_name(buffer.dtype))},
                       {"kind", std::string(buffer_kind_name(buffer.kind))},
                       {"sizes", sizes},
                       {"strides", strides},
                       {"offset", index_json(buffer.offset)},
                       {"io_position", buffer.io_position},
                       {"workspace_offset", p.in_workspace(static_cast<int>(b)) ? index_json(p.workspace_offsets[b])
                                                                               : json(-1)}});
  }
  json symbols = json::object(), quotients = json::object();
  for (const auto& [name, range] : p.size_ranges)
    symbols[name] = {range.lo ? json(*range.lo) : json(nullptr), range.hi ? json(*range.hi) : json(nullptr)};
  for (const auto& [name, q] : p.quotients) quotients[name] = {q.of, q.divisor};
  json kernels = json::array();
  for (const EmittedKernel& k : g.module.kernels) {
    json params = json::array();
    for (const KernelParam& param : k.params) {
      if (param.kind == KernelParam::Kind::Size) {
        params.push_back({{"symbol", param.symbol}, {"name", param.name}});
        continue;
      }
      params.push_back({{"buffer", param.buffer}, {"name", param.name}, {"read_only", param.read_only}});
    }
    kernels.push_back({{"name", k.name},
                       {"kind", std::string(kernel_kind_name(k.kind))},
                       {"grid", index_json(k.grid)},
                       {"block", k.block},
                       {"needs_sync", k.needs_sync},
                       {"whole_grid", k.whole_grid},
                       {"params", params}});
  }
  return {{"buffers", buffers},
          {"inputs", p.inputs},
          {"outputs", p.outputs},
          {"workspace_bytes", index_json(p.workspace_bytes)},
          {"symbols", symbols},
          {"quotients", quotients},
          {"align", p.align},
          {"index32", p.index32},
          {"kernels", kernels}};
}

CompiledGraph compiled_graph_from_json(const json& j, const Target& target) {
  CompiledGraph g;
  LoopProgram& p = g.program;
  for (const json& jb : j.at("buffers")) {
    Buffer b;
    b.name = jb.at("name").get<std::string>();
    std::optional<DType> dtype = parse_dtype(jb.at("dtype").get<std::string>());
    if (!dtype) throw std::invalid_argument("unknown dtype of buffer " + b.name);
    b.dtype = *dtype;
    b.kind = parse_buffer_kind(jb.at("kind").get<std::string>());
    b.sizes = indices(jb.at("sizes"));
    b.strides = indices(jb.at("strides"));
    b.offset = parse_index_json(jb.at("offset"));
    b.io_position = jb.at("io_position").get<int>();
    p.buffers.push_back(std::move(b));
    const json& offset = jb.at("workspace_offset");
    const bool none = offset.is_number() && offset.get<int64_t>() < 0;
    p.workspace_offsets.push_back(none ? Index() : parse_index_json(offset));
  }
  for (const auto& [name, range] : j.at("symbols").items()) {
    Range r;
    if (!range.at(0).is_null()) r.lo = range.at(0).get<int64_t>();
    if (!range.at(1).is_null()) r.hi = range.at(1).get<int64_t>();
    p.size_ranges[name] = r;
  }
  for (const auto& [name, q] : j.at("quotients").items()) {
    if (!p.size_ranges.count(name)) throw std::invalid_argument("quotient " + name + " is not a size symbol");
    p.quotients[name] = {q.at(0).get<std::string>(), q.at(1).get<int64_t>()};
    if (p.quotients[name].divisor < 1) throw std::invalid_argument("quotient " + name + " has a bad divisor");
  }
  auto buffer_ids = [&](const json& ids) {
    std::vector<int> out = ids.get<std::vector<int>>();
    for (int id : out)
      if (id < 0 || static_cast<size_t>(id) >= p.buffers.size()) throw std::invalid_argument("bad buffer id");
    return out;
  };
  p.inputs = buffer_ids(j.at("inputs"));
  p.outputs = buffer_ids(j.at("outputs"));
  p.workspace_bytes = parse_index_json(j.at("workspace_bytes"));
  p.align = j.value("align", int64_t{0});
  p.index32 = j.value("index32", false);

  g.module.target = target;
  for (const json& jk : j.at("kernels")) {
    EmittedKernel k;
    k.name = jk.at("name").get<std::string>();
    k.kind = parse_kernel_kind(jk.at("kind").get<std::string>());
    k.grid = parse_index_json(jk.at("grid"));
    k.block = jk.at("block").get<int>();
    k.needs_sync = jk.at("needs_sync").get<bool>();
    k.whole_grid = jk.at("whole_grid").get<bool>();
    for (const json& jp : jk.at("params")) {
      KernelParam param;
      if (jp.contains("symbol")) {
        param.kind = KernelParam::Kind::Size;
        param.symbol = jp.at("symbol").get<std::string>();
        if (!p.size_ranges.count(param.symbol))
          throw std::invalid_argument("kernel " + k.name + " takes an unknown size symbol " + param.symbol);
        param.name = jp.at("name").get<std::string>();
        k.params.push_back(std::move(param));
        continue;
      }
      param.kind = KernelParam::Kind::Buffer;
      param.buffer = jp.at("buffer").get<int>();
      if (param.buffer < 0 || static_cast<size_t>(param.buffer) >= p.buffers.size())
        throw std::invalid_argument("bad buffer id in kernel " + k.name);
      param.name = jp.at("name").get<std::string>();
      param.read_only = jp.at("read_only").get<bool>();
      k.params.push_back(std::move(param));
    }
    g.module.kernels.push_back(std::move(k));
  }
  return g;
}

}  // namespace hi
