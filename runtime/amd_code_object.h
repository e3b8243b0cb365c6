// Facts about AMD code objects (what HIPRTC returns), read through comgr (loaded with dlopen: libamd_comgr.so.3,
// .so.2, .so): per-kernel register, LDS, scratch and spill counts from the code object's metadata
// (amdhsa.kernels), the occupancy those registers allow, and the ISA disassembly. Used by compile-only tests and
// tools to catch spills and register blow-ups without a GPU.
#pragma once

#include <string>
#include <vector>

#include "codegen/target.h"

namespace hi {

/// One kernel's entry in the code object metadata (names as in the AMDGPU code object v3+ metadata).
struct AmdKernelFacts {
  std::string name;                  ///< .name (the symbol is name + ".kd")
  int vgpr_count = 0;                ///< .vgpr_count; on gfx90a/gfx94x/gfx950 the unified total incl. AGPRs
  int sgpr_count = 0;                ///< .sgpr_count
  int agpr_count = 0;                ///< .agpr_count (0 when the metadata has none: pre-gfx908 targets)
  int lds_bytes = 0;                 ///< .group_segment_fixed_size: static __shared__ memory
  int scratch_bytes = 0;             ///< .private_segment_fixed_size: per-thread stack/spill memory
  int vgpr_spill_count = 0;          ///< .vgpr_spill_count
  int sgpr_spill_count = 0;          ///< .sgpr_spill_count
  int wavefront_size = 0;            ///< .wavefront_size
  int max_flat_workgroup_size = 0;   ///< .max_flat_workgroup_size (the kernel's launch bound)
  int waves_per_simd = 0;            ///< occupancy limit from VGPRs alone (amd_waves_per_simd)
};

/// The amdgcn ELF for `target` inside `code_object`: the input itself when it already is an ELF, else the matching
/// entry of a clang offload bundle ("__CLANG_OFFLOAD_BUNDLE__"; entry id "hip[v4]-amdgcn-amd-amdhsa--<target id>").
/// Throws std::runtime_error naming the entries present when none matches, or for compressed bundles.
std::vector<char> extract_amdgcn_elf(const std::vector<char>& code_object, const Target& target);

/// Metadata of every kernel in the code object (bundle or ELF, or a units container: each part's in part order), in
/// metadata order.
/// Throws std::runtime_error when comgr is missing (naming the libraries tried) or rejects the code object.
std::vector<AmdKernelFacts> read_amd_kernel_facts(const std::vector<char>& code_object, const Target& target);

/// Waves per SIMD that `vgpr_count` VGPRs allow on `arch` (other limits—LDS, SGPRs, launch bounds—not included).
/// Mirrors LLVM's AMDGPU::IsaInfo tables (getTotalNumVGPRs, getVGPRAllocGranule, getMaxWavesPerEU):
///   gfx90a, gfx94x, gfx950: 512 VGPRs per lane (unified VGPR+AGPR file; the metadata's vgpr_count is already the
///                           total: arch VGPRs rounded up to 4, plus AGPRs), granule 8, at most 8 waves;
///   other gfx9 (gfx908: AGPRs in a separate file) and gfx6-8: 256, granule 4, at most 10 waves;
///   gfx10.1: 1024 (wave32) / 512 (wave64), granule 8 / 4, at most 20;
///   gfx10.3: same budget, granule 16 / 8, at most 16;
///   gfx11 (gfx1100, gfx1101, gfx1151: 1.5x file) and gfx12 (gfx1200, gfx1201): 1536 / 768, granule 24 / 12;
///   other gfx11: as gfx10.3; all gfx11/12 at most 16.
/// waves = min(max_waves, budget / roundup(max(vgpr_count, 1), granule)), and at least 1.
int amd_waves_per_simd(const std::string& arch, int vgpr_count, int wavefront_size);

/// ISA disassembly of the code object's amdgcn ELF (comgr AMD_COMGR_ACTION_DISASSEMBLE_EXECUTABLE_TO_SOURCE); of a
/// units container, each part's in turn under a "; code object unit P of N" line.
std::string disassemble_amd_code_object(const std::vector<char>& code_object, const Target& target);

}  // namespace hi
