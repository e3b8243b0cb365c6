// Compilation targets: which GPU (or the cpu device) a kernel's HIP source is emitted and compiled for.
//
// A target is named as users and tools name it: `gfx90a`, `gfx942:sramecc+:xnack-`, `gfx1100`, `sm_90`, `sm_90a`,
// `cpu` (the cpu device, warp width 32) or `cpu-w64` (the cpu device with 64-wide warps, to run the AMD code shape).
// The wavefront / warp size is a property of the target: 64 on gfx9 (CDNA, GCN), 32 on gfx10+ (RDNA) and NVIDIA.
#pragma once

#include <string>
#include <vector>

namespace hi {

enum class TargetKind { Amd, Nvidia, Cpu };

struct Target {
  TargetKind kind = TargetKind::Cpu;
  std::string arch;                   ///< processor without features: "gfx942", "sm_90a", "cpu"
  std::vector<std::string> features;  ///< AMD target features as given, e.g. {"sramecc+", "xnack-"}
  int warp_size = 32;

  /// Full name, round-trips through parse_target: "gfx942:sramecc+:xnack-", "sm_90", "cpu-w64".
  std::string id() const;
  /// Short name used in file names and cache keys: id() with ':' replaced by '_' (no '+'/'-' loss).
  std::string file_tag() const;
};

/// Parses a target name (see above). Throws std::invalid_argument naming the text and the accepted forms.
Target parse_target(const std::string& name);

}  // namespace hi
