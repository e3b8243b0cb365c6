#include "pipeline/compiled_graph_json.h"

#include <optional>
#include <stdexcept>

namespace hi {
namespace {

using nlohmann::json;

int64_t constant(const Index& i, const std::string& what) {
  std::optional<int64_t> value = i.as_const();
  if (!value) throw std::invalid_argument(what + " is symbolic (" + i.str() + ")");
  return *value;
}

BufferKind parse_buffer_kind(const std::string& name) {
  for (BufferKind k : {BufferKind::Input, BufferKind::Output, BufferKind::Intermediate})
    if (buffer_kind_name(k) == name) return k;
  throw std::invalid_argument("unknown buffer kind '" + name + "'");
}

KernelKind parse_kernel_kind(const std::string& name) {
  for (KernelKind k : {KernelKind::Pointwise, KernelKind::RowReduction, KernelKind::ColumnReduction})
    if (kernel_kind_name(k) == name) return k;
  throw std::invalid_argument("unknown kernel kind '" + name + "'");
}

std::vector<Index> indices(const json& values) {
  std::vector<Index> out;
  for (const json& v : values) out.push_back(Index(v.get<int64_t>()));
  return out;
}

}  // namespace

json compiled_graph_to_json(const CompiledGraph& g) {
  const LoopProgram& p = g.program;
  if (!p.size_ranges.empty()) throw std::invalid_argument("the graph has size symbols");
  json buffers = json::array();
  for (size_t b = 0; b < p.buffers.size(); ++b) {
    const Buffer& buffer = p.buffers[b];
    json sizes = json::array(), strides = json::array();
    for (const Index& s : buffer.sizes) sizes.push_back(constant(s, "size of " + buffer.name));
    for (const Index& s : buffer.strides) strides.push_back(constant(s, "stride of " + buffer.name));
    buffers.push_back({{"name", buffer.name},
                       {"dtype", std::string(dtype_name(buffer.dtype))},
                       {"kind", std::string(buffer_kind_name(buffer.kind))},
                       {"sizes", sizes},
                       {"strides", strides},
                       {"offset", constant(buffer.offset, "offset of " + buffer.name)},
                       {"io_position", buffer.io_position},
                       {"workspace_offset", p.workspace_offsets.at(b)}});
  }
  json kernels = json::array();
  for (const EmittedKernel& k : g.module.kernels) {
    json params = json::array();
    for (const KernelParam& param : k.params) {
      if (param.kind == KernelParam::Kind::Size) throw std::invalid_argument("kernel " + k.name + " takes a size");
      params.push_back({{"buffer", param.buffer}, {"name", param.name}, {"read_only", param.read_only}});
    }
    kernels.push_back({{"name", k.name},
                       {"kind", std::string(kernel_kind_name(k.kind))},
                       {"grid", constant(k.grid, "grid of " + k.name)},
                       {"block", k.block},
                       {"needs_sync", k.needs_sync},
                       {"whole_grid", k.whole_grid},
                       {"params", params}});
  }
  return {{"buffers", buffers},
          {"inputs", p.inputs},
          {"outputs", p.outputs},
          {"workspace_bytes", p.workspace_bytes},
          {"align", p.align},
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
    b.offset = Index(jb.at("offset").get<int64_t>());
    b.io_position = jb.at("io_position").get<int>();
    p.buffers.push_back(std::move(b));
    p.workspace_offsets.push_back(jb.at("workspace_offset").get<int64_t>());
  }
  auto buffer_ids = [&](const json& ids) {
    std::vector<int> out = ids.get<std::vector<int>>();
    for (int id : out)
      if (id < 0 || static_cast<size_t>(id) >= p.buffers.size()) throw std::invalid_argument("bad buffer id");
    return out;
  };
  p.inputs = buffer_ids(j.at("inputs"));
  p.outputs = buffer_ids(j.at("outputs"));
  p.workspace_bytes = j.at("workspace_bytes").get<int64_t>();
  p.align = j.value("align", int64_t{0});

  g.module.target = target;
  for (const json& jk : j.at("kernels")) {
    EmittedKernel k;
    k.name = jk.at("name").get<std::string>();
    k.kind = parse_kernel_kind(jk.at("kind").get<std::string>());
    k.grid = Index(jk.at("grid").get<int64_t>());
    k.block = jk.at("block").get<int>();
    k.needs_sync = jk.at("needs_sync").get<bool>();
    k.whole_grid = jk.at("whole_grid").get<bool>();
    for (const json& jp : jk.at("params")) {
      KernelParam param;
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
