#include "runtime/gpu_devices.h"

#include <stdexcept>

#include "runtime/cuda_device.h"
#include "runtime/hip_device.h"

namespace hi {

std::unique_ptr<Device> open_gpu_device(TargetKind kind, int ordinal) {
  switch (kind) {
    case TargetKind::Nvidia:
      return std::make_unique<CudaDevice>(ordinal);
    case TargetKind::Amd:
      return std::make_unique<HipDevice>(ordinal);
    case TargetKind::Cpu:
      break;
  }
  throw std::invalid_argument("open_gpu_device: the cpu device is not a GPU; create a CpuDevice for cpu targets");
}

TargetKind gpu_kind_from_name(const std::string& name) {
  if (name == "cuda" || name == "nvidia") return TargetKind::Nvidia;
  if (name == "hip" || name == "rocm" || name == "amd") return TargetKind::Amd;
  throw std::invalid_argument("unknown GPU kind '" + name +
                              "'; expected \"cuda\" (or \"nvidia\") or \"hip\" (or "
                              "\"rocm\", \"amd\")");
}

}  // namespace hi
