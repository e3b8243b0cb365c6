#include "pipeline/graph_runner.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

#include "pipeline/graph_cache.h"

namespace hi {
namespace {

/// Threads a multiprocessor keeps resident at best (2048 on NVIDIA sm_80/sm_90; AMD CDNA CUs hold 2560 at most).
constexpr int kResidentThreadsPerMultiprocessor = 2048;
/// Waves of resident blocks a kernel's grid is capped at (see GraphRunner's constructor).
constexpr int kGridWaves = 16;

}  // namespace

GraphRunner::GraphRunner(std::shared_ptr<const CompiledGraph> graph, Device& device)
    : graph_(std::move(graph)), device_(device) {
  std::vector<KernelInfo> infos;
  for (const EmittedKernel& k : graph_->module.kernels) infos.push_back({k.name, k.needs_sync});
  module_ = device_.load_for_target(graph_->module.target, graph_->code.binary, infos);
  record_loader_facts(*graph_, *module_);  // into the cache entry's metadata, once (graph_cache.h)

  const LoopProgram& p = graph_->program;
  symbols_ = p.symbols();
  // Which run-time pointer each buffer gets; a later rule wins, as graph outputs may also be inputs and the plan
  // places only intermediates in the workspace.
  std::vector<std::optional<PointerSource>> source(p.buffers.size());
  for (size_t i = 0; i < p.inputs.size(); ++i) source[p.inputs[i]] = PointerSource{PointerSource::Kind::Input, i, 0, 0};
  for (size_t i = 0; i < p.outputs.size(); ++i)
    source[p.outputs[i]] = PointerSource{PointerSource::Kind::Output, i, 0, 0};
  for (size_t b = 0; b < p.buffers.size(); ++b)
    if (p.in_workspace(static_cast<int>(b))) {
      source[b] = PointerSource{PointerSource::Kind::Workspace, workspace_offset_exprs_.size(), 0, 0};
      workspace_offset_exprs_.push_back(p.workspace_offsets[b]);
    }

  if (p.align > 1) {
    auto first_byte = [&](int buffer) {
      const Buffer& b = p.buffers[buffer];
      return simplify(b.offset * Index(dtype_bytes(b.dtype)), p.size_ranges);
    };
    for (size_t i = 0; i < p.inputs.size(); ++i) aligned_.push_back({true, i, first_byte(p.inputs[i])});
    for (size_t i = 0; i < p.outputs.size(); ++i) aligned_.push_back({false, i, first_byte(p.outputs[i])});
  }

  for (const EmittedKernel& k : graph_->module.kernels) {
    Launch launch{&k.name, simplify(k.grid, p.size_ranges), 0, Dim3{0, 1, 1}, Dim3{static_cast<unsigned>(k.block), 1, 1},
                  std::vector<void*>(k.params.size(), nullptr), {}, std::vector<void*>(k.params.size(), nullptr), {},
                  {}};
    // Every kernel loops over its work (grid-stride), so its grid may be smaller than its work. Kernels whose blocks
    // hold much work per row or column (norms, softmax, column reductions) are capped at kGridWaves waves of the
    // blocks that stay resident at once (the driver's occupancy figure). On the H200, under do_bench, 16 waves beat 8:
    // LayerNorm over 16k x 4k bf16 took 0.0712-0.0715 ms against 0.0722-0.0728 (the whole grid: 0.0717-0.0725),
    // RMSNorm 0.0706-0.0714 against 0.0713-0.0720, softmax over 8k x 8k f32 0.1343-0.1345 against 0.1355-0.1364;
    // one wave was slower than several. Kernels marked whole_grid (pointwise, plain row reductions) launch every
    // block, as Inductor's do: the block scheduler then evens out the multiprocessors, which do_bench's dirty L2 (its
    // 256 MB memset before each call) slows unevenly. On the H200 add+relu over 64M f32 took 0.1903 ms against 0.1946
    // when capped at 8 waves, gelu over 8k x 8k bf16 0.0708 against 0.0720. HIPINDUCTOR_BLOCKS_PER_SM overrides the
    // cap's blocks per SM (0: no cap), for tuning.
    // HIP's launch limit: grid x block threads below 2^32 (CUDA's grid.x limit, 2^31 - 1, is looser).
    const int64_t limit = (int64_t{1} << 31) / k.block;
    int resident = 0;
    const int sms = device_.multiprocessor_count();
    if (sms > 0) {
      resident = module_->resident_blocks(k.name, k.block, 0);
      if (resident <= 0) resident = std::max(1, kResidentThreadsPerMultiprocessor / k.block);
      int64_t per_sm = k.whole_grid ? 0 : int64_t{resident} * kGridWaves;
      if (const char* forced = std::getenv("HIPINDUCTOR_BLOCKS_PER_SM")) per_sm = std::atoi(forced);
      if (per_sm > 0) launch.cap = int64_t{sms} * per_sm;
    }
    // Autotune's candidates, for a grid known now (a symbolic grid is not tuned).
    if (auto grid = launch.grid_blocks.as_const(); grid && *grid > 0) {
      const int64_t whole = std::min<int64_t>(*grid, limit);
      std::set<unsigned> candidates{static_cast<unsigned>(whole)};
      if (sms > 0) {
        for (int waves = 1; waves <= kGridWaves; waves *= 2)
          candidates.insert(static_cast<unsigned>(std::min<int64_t>(whole, int64_t{sms} * resident * waves)));
      } else {
        candidates.insert(static_cast<unsigned>(std::max<int64_t>(1, whole / 4)));
      }
      candidates.insert(static_cast<unsigned>(launch.cap > 0 ? std::min(whole, launch.cap) : whole));
      launch.grids.assign(candidates.begin(), candidates.end());
    }
    for (size_t i = 0; i < k.params.size(); ++i) {
      const KernelParam& kp = k.params[i];
      if (kp.kind == KernelParam::Kind::Size) {
        if (!p.size_ranges.count(kp.symbol))
          throw std::invalid_argument("GraphRunner: kernel " + k.name + " takes size '" + kp.symbol +
                                      "', which is not a size symbol of the graph");
        launch.size_params.emplace_back(launch.sizes.size(), kp.symbol);
        launch.sizes.push_back(0);
        continue;
      }
      // A buffer with no source (neither input, output nor planned) keeps a null pointer, as before.
      if (!source[kp.buffer]) continue;
      PointerSource s = *source[kp.buffer];
      s.launch = launches_.size();
      s.param = i;
      sources_.push_back(s);
    }
    // Argument pointers into the launch's own vectors: moving the vectors below keeps their buffers.
    for (size_t i = 0, size = 0; i < k.params.size(); ++i)
      launch.args[i] = k.params[i].kind == KernelParam::Kind::Size ? static_cast<void*>(&launch.sizes[size++])
                                                                   : static_cast<void*>(&launch.values[i]);
    launches_.push_back(std::move(launch));
  }
  if (symbols_.empty()) bind_sizes({});
}

GraphRunner::~GraphRunner() {
  if (own_workspace_) device_.free(own_workspace_);
}

std::map<std::string, int64_t> GraphRunner::symbol_values(const std::vector<int64_t>& sizes) const {
  try {
    return graph_->program.bind_symbols(sizes);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("GraphRunner::run: ") + e.what());
  }
}

size_t GraphRunner::workspace_bytes() const {
  if (!symbols_.empty())
    throw std::invalid_argument("GraphRunner::workspace_bytes: the graph has size symbols; its workspace depends on "
                                "their values (workspace_bytes(sizes))");
  return workspace_bytes_;
}

size_t GraphRunner::workspace_bytes(const std::vector<int64_t>& sizes) const {
  std::optional<int64_t> bytes = evaluate(graph_->program.workspace_bytes, symbol_values(sizes));
  if (!bytes || *bytes < 0)
    throw std::invalid_argument("GraphRunner: the workspace size " + graph_->program.workspace_bytes.str() +
                                " cannot be evaluated for these sizes");
  return static_cast<size_t>(*bytes);
}

void GraphRunner::bind_sizes(const std::vector<int64_t>& sizes) {
  if (bound_ && sizes == bound_sizes_) return;
  const std::map<std::string, int64_t> values = symbol_values(sizes);
  auto eval = [&](const Index& e, const std::string& what) {
    std::optional<int64_t> v = evaluate(e, values);
    if (!v || *v < 0)
      throw std::invalid_argument("GraphRunner::run: " + what + " " + e.str() + " cannot be evaluated for these sizes");
    return *v;
  };
  for (Launch& l : launches_) {
    const int64_t blocks = eval(l.grid_blocks, "the grid of kernel " + *l.kernel);
    const int64_t whole = std::min<int64_t>(blocks, (int64_t{1} << 31) / l.block.x);
    l.grid.x = static_cast<unsigned>(l.cap > 0 ? std::min(whole, l.cap) : whole);
    for (const auto& [slot, symbol] : l.size_params) l.sizes[slot] = values.at(symbol);
  }
  workspace_offsets_.resize(workspace_offset_exprs_.size());
  for (size_t i = 0; i < workspace_offset_exprs_.size(); ++i)
    workspace_offsets_[i] = static_cast<size_t>(eval(workspace_offset_exprs_[i], "a workspace offset"));
  workspace_bytes_ = static_cast<size_t>(eval(graph_->program.workspace_bytes, "the workspace size"));
  for (AlignedPointer& a : aligned_) a.first_byte = static_cast<uintptr_t>(eval(a.first_byte_expr, "a storage offset"));
  bound_sizes_ = sizes;
  bound_ = true;
}

void* GraphRunner::workspace_or_own(void* workspace) {
  if (workspace) {
    check_workspace(workspace);
    return workspace;
  }
  if (workspace_bytes_ > own_workspace_bytes_) {
    if (own_workspace_) device_.free(own_workspace_);  // runs on one runner are ordered: the last one is done with it
    own_workspace_ = nullptr;
    own_workspace_ = device_.alloc(workspace_bytes_);
    own_workspace_bytes_ = workspace_bytes_;
  }
  return own_workspace_;
}

void GraphRunner::run(const std::vector<void*>& inputs, const std::vector<void*>& outputs, void* workspace,
                      void* stream) {
  bind_sizes({});
  check_workspace(workspace);
  launch_all(inputs, outputs, workspace, stream);
}

void GraphRunner::run(const std::vector<void*>& inputs, const std::vector<void*>& outputs,
                      const std::vector<int64_t>& sizes, void* workspace, void* stream) {
  bind_sizes(sizes);
  launch_all(inputs, outputs, workspace_or_own(workspace), stream);
}

void GraphRunner::check_workspace(void* workspace) const {
  if (workspace_bytes_ == 0) return;
  if (!workspace)
    throw std::invalid_argument("GraphRunner::run: the graph needs a workspace of " +
                                std::to_string(workspace_bytes_) + " bytes, got a null pointer");
  if (reinterpret_cast<uintptr_t>(workspace) % static_cast<uintptr_t>(kWorkspaceAlignment) != 0)
    throw std::invalid_argument("GraphRunner::run: the workspace must be " + std::to_string(kWorkspaceAlignment) +
                                "-byte aligned");
}

std::vector<std::pair<std::string, unsigned>> GraphRunner::grids() const {
  std::vector<std::pair<std::string, unsigned>> out;
  if (!bound_) return out;
  for (const Launch& l : launches_)
    if (l.grid.x > 0) out.emplace_back(*l.kernel, l.grid.x);
  return out;
}

void GraphRunner::autotune(const std::vector<void*>& inputs, const std::vector<void*>& outputs,
                           const std::vector<int64_t>& sizes, void* workspace, void* stream) {
  bind_sizes(sizes);
  workspace = workspace_or_own(workspace);
  // An explicit grid cap (HIPINDUCTOR_BLOCKS_PER_SM) is the user's choice: nothing to tune then.
  if (tuned_ || std::getenv("HIPINDUCTOR_BLOCKS_PER_SM")) {
    launch_all(inputs, outputs, workspace, stream);
    return;
  }
  // What an earlier tuning on this device chose, recorded next to the code object (a code object several segments
  // share holds their kernels' records side by side).
  std::map<std::string, unsigned> recorded;
  if (!graph_->cache_key.empty() && !graph_->cache_dir.empty())
    recorded = CodeObjectCache(graph_->cache_dir).tuned_grids(graph_->cache_key, device_.name());
  bind(inputs, outputs, workspace);
  // Each candidate is timed by the device's events around one launch, with the caches flushed before it (256 MB
  // overwritten, as Triton's do_bench does): a kernel rerun on what its last run left in L2 favours grids that the
  // program's own, cold, first touch does not (timed that way, softmax over 32k x 1k bf16 was tuned to a grid that
  // took 0.051 ms in the benchmark against the default's 0.038 on the H200). Rounds visit the candidates in turn; a
  // candidate's time is its median.
  const bool gpu = device_.multiprocessor_count() > 0;
  const int rounds = gpu ? 5 : 2;
  constexpr size_t kFlushBytes = size_t{256} << 20;
  struct Flush {
    Device& device;
    void* pointer;
    ~Flush() {
      if (pointer) device.free(pointer);
    }
  } flush{device_, gpu ? device_.alloc(kFlushBytes) : nullptr};
  std::vector<CodeObjectCache::KernelTuning> record;
  for (Launch& l : launches_) {
    if (l.grid.x == 0) continue;
    auto launch = [&] { module_->launch(*l.kernel, l.grid, l.block, 0, l.args.data(), stream); };
    auto found = recorded.find(*l.kernel);
    if (found != recorded.end() && std::count(l.grids.begin(), l.grids.end(), found->second)) l.grid.x = found->second;
    if (l.grids.size() < 2 || found != recorded.end()) {
      launch();
      continue;
    }
    const unsigned fallback = l.grid.x;
    std::vector<std::vector<double>> times(l.grids.size());
    for (int round = 0; round < rounds; ++round)
      for (size_t c = 0; c < l.grids.size(); ++c) {
        l.grid.x = l.grids[c];
        if (flush.pointer) device_.fill(flush.pointer, round, kFlushBytes, stream);
        times[c].push_back(device_.time_ms(launch, stream));
      }
    CodeObjectCache::KernelTuning t{*l.kernel, fallback, {}};
    double base = 0;
    for (size_t c = 0; c < l.grids.size(); ++c) {
      std::nth_element(times[c].begin(), times[c].begin() + rounds / 2, times[c].end());
      t.ms.emplace_back(l.grids[c], times[c][rounds / 2]);
      if (l.grids[c] == fallback) base = t.ms.back().second;
    }
    double best = base;
    for (const auto& [blocks, ms] : t.ms)
      if (ms < 0.97 * base && ms < best) {  // the default stays unless another grid is clearly faster
        best = ms;
        t.grid = blocks;
      }
    l.grid.x = t.grid;
    launch();  // the run's own launch
    record.push_back(std::move(t));
  }
  tuned_ = true;
  if (!record.empty() && !graph_->cache_key.empty() && !graph_->cache_dir.empty())
    CodeObjectCache(graph_->cache_dir).record_tuning(graph_->cache_key, device_.name(), record);
}

void GraphRunner::bind(const std::vector<void*>& inputs, const std::vector<void*>& outputs, void* workspace) {
  const LoopProgram& p = graph_->program;
  if (inputs.size() != p.inputs.size() || outputs.size() != p.outputs.size())
    throw std::invalid_argument("GraphRunner::run: graph takes " + std::to_string(p.inputs.size()) + " inputs and " +
                                std::to_string(p.outputs.size()) + " outputs, got " + std::to_string(inputs.size()) +
                                " and " + std::to_string(outputs.size()));
  // The kernels' vector accesses were proven aligned from the graph's promise (Graph::align), so a pointer that
  // breaks it is refused here rather than faulting on the device.
  for (const AlignedPointer& a : aligned_) {
    const void* storage = a.input ? inputs[a.position] : outputs[a.position];
    if ((reinterpret_cast<uintptr_t>(storage) + a.first_byte) % static_cast<uintptr_t>(p.align) != 0) {
      const Buffer& b = p.buffers[a.input ? p.inputs[a.position] : p.outputs[a.position]];
      throw std::invalid_argument("GraphRunner::run: " + std::string(a.input ? "input " : "output ") +
                                  std::to_string(a.position) + " ('" + b.name + "') is not " +
                                  std::to_string(p.align) + "-byte aligned, as the graph was compiled for (its 'align')");
    }
  }
  for (const PointerSource& s : sources_) {
    void* pointer = nullptr;
    switch (s.kind) {
      case PointerSource::Kind::Input:
        pointer = inputs[s.index];
        break;
      case PointerSource::Kind::Output:
        pointer = outputs[s.index];
        break;
      case PointerSource::Kind::Workspace:
        pointer = static_cast<char*>(workspace) + workspace_offsets_[s.index];
        break;
    }
    launches_[s.launch].values[s.param] = pointer;
  }
}

void GraphRunner::launch_all(const std::vector<void*>& inputs, const std::vector<void*>& outputs, void* workspace,
                             void* stream) {
  bind(inputs, outputs, workspace);
  for (Launch& launch : launches_)
    if (launch.grid.x > 0) module_->launch(*launch.kernel, launch.grid, launch.block, 0, launch.args.data(), stream);
}

}  // namespace hi
