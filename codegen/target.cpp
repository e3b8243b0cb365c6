// Target names are parsed strictly (lowercase, no spaces): a typo in a target must fail here, with the accepted
// forms in the message, not later as an opaque HIPRTC/NVRTC error or, worse, a cache key that silently differs.
#include "codegen/target.h"

#include <algorithm>
#include <iterator>
#include <regex>
#include <stdexcept>

namespace hi {

namespace {

[[noreturn]] void reject(const std::string& name, const std::string& why) {
  throw std::invalid_argument("invalid target '" + name + "' (" + why +
                              "); accepted forms: gfx<arch>[:<feature>(+|-)]... (e.g. gfx90a, "
                              "gfx942:sramecc+:xnack-, gfx1100), sm_<NN>[a] (e.g. sm_80, sm_90, sm_90a), cpu, cpu-w64");
}

std::vector<std::string> split_on_colon(const std::string& text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t colon = text.find(':', start);
    parts.push_back(text.substr(start, colon - start));
    if (colon == std::string::npos) return parts;
    start = colon + 1;
  }
}

/// A processor the HIPRTC in use (ROCm 5.7, LLVM 17's AMDGPU backend) knows and the target-ID features (AMDGPUUsage,
/// "Target ID") it takes: a name outside this table reaches HIPRTC only to abort or crash inside it (gfx1201 does in
/// LLVM 17, which predates gfx12), so it is refused here, by name. A newer HIPRTC adds rows.
struct AmdProcessor {
  const char* name;
  bool sramecc;
  bool xnack;
};
constexpr AmdProcessor kAmdProcessors[] = {
    {"gfx600", false, false},  {"gfx601", false, false}, {"gfx602", false, false}, {"gfx700", false, false},
    {"gfx701", false, false},  {"gfx702", false, false}, {"gfx703", false, false}, {"gfx704", false, false},
    {"gfx705", false, false},  {"gfx801", false, true},  {"gfx802", false, false}, {"gfx803", false, false},
    {"gfx805", false, false},  {"gfx810", false, true},  {"gfx900", false, true},  {"gfx902", false, true},
    {"gfx904", false, true},   {"gfx906", true, true},   {"gfx908", true, true},   {"gfx909", false, true},
    {"gfx90a", true, true},    {"gfx90c", false, true},  {"gfx940", true, true},   {"gfx941", true, true},
    {"gfx942", true, true},    {"gfx1010", false, true}, {"gfx1011", false, true}, {"gfx1012", false, true},
    {"gfx1013", false, true},  {"gfx1030", false, false}, {"gfx1031", false, false}, {"gfx1032", false, false},
    {"gfx1033", false, false}, {"gfx1034", false, false}, {"gfx1035", false, false}, {"gfx1036", false, false},
    {"gfx1100", false, false}, {"gfx1101", false, false}, {"gfx1102", false, false}, {"gfx1103", false, false},
    {"gfx1150", false, false}, {"gfx1151", false, false},
};

Target parse_amd(const std::string& name, const std::vector<std::string>& parts) {
  const AmdProcessor* processor = nullptr;
  for (const AmdProcessor& p : kAmdProcessors)
    if (parts[0] == p.name) processor = &p;
  if (!processor) reject(name, "unknown AMD processor '" + parts[0] + "'");

  static const std::regex feature(R"([a-z][a-z0-9_]*[+-])");
  Target target;
  target.kind = TargetKind::Amd;
  target.arch = parts[0];
  for (size_t i = 1; i < parts.size(); ++i) {
    if (!std::regex_match(parts[i], feature))
      reject(name, "feature '" + parts[i] + "' must be a name followed by + or -, e.g. xnack-");
    std::string feature_name = parts[i].substr(0, parts[i].size() - 1);
    for (const std::string& seen : target.features)
      if (seen.substr(0, seen.size() - 1) == feature_name) reject(name, "feature '" + feature_name + "' given twice");
    const bool known = (feature_name == "sramecc" && processor->sramecc) || (feature_name == "xnack" && processor->xnack);
    if (!known) {
      std::string supported = processor->sramecc ? (processor->xnack ? "sramecc and xnack" : "sramecc")
                                                 : (processor->xnack ? "xnack" : "none");
      reject(name, "unknown feature '" + feature_name + "' for " + parts[0] + " (its target features: " + supported +
                       ")");
    }
    target.features.push_back(parts[i]);
  }
  // GCN/CDNA (gfx6-gfx9) run 64-wide wavefronts; RDNA (gfx10+) kernels are compiled for wave32 by default.
  target.warp_size = parts[0].size() >= 7 ? 32 : 64;
  return target;
}

}  // namespace

std::string Target::id() const {
  switch (kind) {
    case TargetKind::Cpu:
      return warp_size == 64 ? "cpu-w64" : "cpu";
    case TargetKind::Nvidia:
      return arch;
    case TargetKind::Amd: {
      std::string id = arch;
      for (const std::string& feature : features) id += ":" + feature;
      return id;
    }
  }
  return arch;
}

std::string Target::file_tag() const {
  std::string tag = id();
  for (char& c : tag)
    if (c == ':') c = '_';
  return tag;
}

Target parse_target(const std::string& name) {
  if (name == "cpu" || name == "cpu-w64") {
    Target target;
    target.kind = TargetKind::Cpu;
    target.arch = "cpu";
    target.warp_size = name == "cpu-w64" ? 64 : 32;
    return target;
  }
  if (name.starts_with("sm_")) {
    static const std::regex sm(R"(sm_[1-9][0-9]{1,2}a?)");
    if (!std::regex_match(name, sm)) reject(name, "NVIDIA targets are sm_ followed by the compute capability");
    // Any well-formed compute capability is taken: a GPU newer than this table reports its own (the CUDA device
    // parses it), and NVRTC refuses one it cannot compile for with an error of its own, where HIPRTC crashes on an
    // AMD processor it does not know (hence the AMD table).
    Target target;
    target.kind = TargetKind::Nvidia;
    target.arch = name;
    target.warp_size = 32;
    return target;
  }
  if (name.starts_with("gfx")) return parse_amd(name, split_on_colon(name));
  reject(name, "not an AMD, NVIDIA or cpu target");
}

}  // namespace hi
