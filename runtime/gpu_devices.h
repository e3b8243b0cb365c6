// Opening the GPU device of a kind: the one place that maps TargetKind to CudaDevice / HipDevice, for the pipeline
// tools and the Python extension.
#pragma once

#include <memory>
#include <string>

#include "codegen/target.h"
#include "runtime/device.h"

namespace hi {

/// A new device for GPU `ordinal` of `kind`: TargetKind::Nvidia → CudaDevice (CUDA driver), TargetKind::Amd →
/// HipDevice (HIP runtime). Throws std::invalid_argument for TargetKind::Cpu (use CpuDevice) and the device's
/// std::runtime_error when it cannot be opened (no driver library, no GPU, ordinal out of range).
std::unique_ptr<Device> open_gpu_device(TargetKind kind, int ordinal = 0);

/// The GPU kind a user names: "cuda" / "nvidia" → Nvidia, "hip" / "rocm" / "amd" → Amd. Throws
/// std::invalid_argument naming the accepted names.
TargetKind gpu_kind_from_name(const std::string& name);

}  // namespace hi
