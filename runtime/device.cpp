#include "runtime/device.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <stdexcept>

#include "runtime/code_object_units.h"

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

/// The modules of a units container's parts (code_object_units.h), as one: each launch goes to the part that defines
/// the kernel.
class UnitsModule final : public Module {
 public:
  UnitsModule(std::vector<std::unique_ptr<Module>> parts, std::map<std::string, size_t> part_of,
              std::vector<KernelInfo> kernels)
      : parts_(std::move(parts)), part_of_(std::move(part_of)), kernels_(std::move(kernels)) {}

  std::vector<GpuKernelFacts> kernel_facts() const override {
    std::map<std::string, GpuKernelFacts> by_name;
    for (const auto& part : parts_)
      for (GpuKernelFacts& f : part->kernel_facts()) by_name[f.name] = std::move(f);
    std::vector<GpuKernelFacts> facts;  // in the order of the KernelInfo list, as Module::kernel_facts says
    for (const KernelInfo& k : kernels_)
      if (auto found = by_name.find(k.name); found != by_name.end()) facts.push_back(found->second);
    return facts;
  }
  void launch(const std::string& kernel, Dim3 grid, Dim3 block, unsigned shared_bytes, void** args,
              void* stream) override {
    part(kernel).launch(kernel, grid, block, shared_bytes, args, stream);
  }
  int resident_blocks(const std::string& kernel, int block_threads, unsigned shared_bytes) override {
    return part(kernel).resident_blocks(kernel, block_threads, shared_bytes);
  }

 private:
  Module& part(const std::string& kernel) {
    auto found = part_of_.find(kernel);
    if (found == part_of_.end())
      throw std::runtime_error("kernel '" + kernel + "' is in no part of the loaded code object units");
    return *parts_[found->second];
  }
  std::vector<std::unique_ptr<Module>> parts_;
  std::map<std::string, size_t> part_of_;
  std::vector<KernelInfo> kernels_;
};

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
  if (!is_code_object_units(binary)) return load(binary, kernels);
  std::vector<CodeObjectUnit> units = unpack_code_object_units(binary);
  std::vector<std::unique_ptr<Module>> parts;
  std::map<std::string, size_t> part_of;
  for (size_t p = 0; p < units.size(); ++p) {
    std::vector<KernelInfo> infos;  // the caller's facts about this part's kernels
    for (const std::string& kernel : units[p].kernels) {
      part_of[kernel] = p;
      for (const KernelInfo& k : kernels)
        if (k.name == kernel) infos.push_back(k);
    }
    parts.push_back(load(units[p].binary, infos));
  }
  for (const KernelInfo& k : kernels)
    if (!part_of.count(k.name))
      throw std::runtime_error("kernel '" + k.name + "' is in no part of the code object units loaded on " + name());
  return std::make_unique<UnitsModule>(std::move(parts), std::move(part_of), kernels);
}

double Device::time_ms(const std::function<void()>& enqueue, void* stream) {
  synchronize(stream);
  auto start = std::chrono::steady_clock::now();
  enqueue();
  synchronize(stream);
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace hi
