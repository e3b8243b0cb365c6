#include "runtime/device.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

namespace hi {

namespace {

// "sm_90a" -> {9, 0, true}; "sm_100" -> {10, 0, false}. parse_target already checked the form.
struct ComputeCapability {
  int major = 0, minor = 0;
  bool arch_specific = false;
};

ComputeCapability compute_capability(const std::string& arch) {
  std::string digits = arch.substr(3);
  ComputeCapability cc;
  if (!digits.empty() && digits.back() == 'a') {
    cc.arch_specific = true;
    digits.pop_back();
  }
  if (digits.size() < 2) return cc;
  cc.major = std::stoi(digits.substr(0, digits.size() - 1));
  cc.minor = digits.back() - '0';
  return cc;
}

}  // namespace

bool code_runs_on(const Target& code, const Target& device) {
  if (code.kind != device.kind) return false;
  switch (code.kind) {
    case TargetKind::Cpu:
      return code.warp_size == device.warp_size;
    case TargetKind::Nvidia: {
      ComputeCapability c = compute_capability(code.arch), d = compute_capability(device.arch);
      if (c.major != d.major) return false;
      return c.arch_specific ? c.minor == d.minor : c.minor <= d.minor;
    }
    case TargetKind::Amd:
      if (code.arch != device.arch) return false;
      return std::all_of(code.features.begin(), code.features.end(), [&](const std::string& feature) {
        return std::find(device.features.begin(), device.features.end(), feature) != device.features.end();
      });
  }
  return false;
}

std::unique_ptr<Module> Device::load_for_target(const Target& compiled_for, const std::vector<char>& binary,
                                                const std::vector<KernelInfo>& kernels) {
  Target device_target = target();
  if (!code_runs_on(compiled_for, device_target))
    throw std::runtime_error("code object compiled for " + compiled_for.id() + " cannot run on " + name() +
                             " (target " + device_target.id() + "); compile for " + device_target.id());
  return load(binary, kernels);
}

double Device::time_ms(const std::function<void()>& enqueue, void* stream) {
  synchronize(stream);
  auto start = std::chrono::steady_clock::now();
  enqueue();
  synchronize(stream);
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace hi
