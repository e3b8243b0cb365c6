// Target names are parsed strictly (lowercase, no spaces): a typo in a target must fail here, with the accepted
// forms in the message, not later as an opaque HIPRTC/NVRTC error or, worse, a cache key that silently differs.
#include "codegen/target.h"

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

Target parse_amd(const std::string& name, const std::vector<std::string>& parts) {
  // gfx<major><minor><stepping>: major is 1-2 decimal digits, minor and stepping one hex digit each
  // (gfx803, gfx90a, gfx942, gfx1030, gfx1100, gfx1201).
  static const std::regex processor(R"(gfx([0-9]{1,2})([0-9a-f])([0-9a-f]))");
  std::smatch match;
  if (!std::regex_match(parts[0], match, processor)) reject(name, "unknown AMD processor '" + parts[0] + "'");
  int major = std::stoi(match[1].str());
  if (major < 6 || major > 12) reject(name, "unknown AMD processor generation " + match[1].str());

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
    target.features.push_back(parts[i]);
  }
  // GCN/CDNA (gfx6-gfx9) run 64-wide wavefronts; RDNA (gfx10+) kernels are compiled for wave32 by default.
  target.warp_size = major >= 10 ? 32 : 64;
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
