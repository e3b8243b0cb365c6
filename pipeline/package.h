// Package: runs an ahead-of-time package (written by hipinductor.aot_compile / hipinductor-aot from a torch.export
// program; docs/package-format.md) from C++, without Python, libtorch or any compiler: the code objects of the
// device's target are loaded as they are, the weights come from the package's safetensors file.
//
// It runs packages whose steps are all hipinductor kernels. A package with eager steps (matrix products,
// convolutions, attention, ops without a lowering: ATen calls) needs PyTorch (hipinductor.load_package); so does one
// whose weights were written with torch.save, or whose outputs are inputs or weights themselves. The constructor says
// which of these applies.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "pipeline/graph_runner.h"
#include "runtime/device.h"

namespace hi {

/// A package that cannot be read or run here; what() names the file (or package) and what is wrong.
class PackageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The package format version this build reads (the manifest's "version").
constexpr int kPackageFormatVersion = 1;

class Package {
 public:
  /// A user input or output: its name (the exported program's), dtype and layout (element 0 of the caller's
  /// allocation is element 0 of the storage; `bytes` is how much of it the tensor spans).
  struct Tensor {
    std::string name;
    DType dtype;
    std::vector<int64_t> sizes, strides;
    int64_t offset = 0;
    size_t bytes = 0;
  };

  /// Loads the package directory `directory` for `device`: picks the first of its targets whose code runs there
  /// (code_runs_on), checks every file it reads against the manifest's sizes and SHA-256, copies the weights to the
  /// device and loads the code objects. Throws PackageError naming the file for a missing, corrupt or truncated
  /// file or another format version; naming the device's target and the package's targets when none runs there;
  /// and naming the first step that is not kernels (see the file comment). `device` must outlive the package.
  Package(const std::filesystem::path& directory, Device& device);
  ~Package();
  Package(const Package&) = delete;
  Package& operator=(const Package&) = delete;

  /// The target whose code objects were loaded ("cpu", "sm_90", "gfx942").
  const std::string& target() const { return target_; }
  const std::vector<Tensor>& inputs() const { return inputs_; }
  const std::vector<Tensor>& outputs() const { return outputs_; }

  /// Runs every step on `stream` (null: the default stream). `inputs` / `outputs`: device pointers to each user input
  /// and output, laid out as inputs() / outputs() say, at least 16-byte aligned; the caller owns them. On GPUs returns
  /// before the kernels finish. One run at a time.
  void run(const std::vector<void*>& inputs, const std::vector<void*>& outputs, void* stream = nullptr);

 private:
  struct Step;

  std::filesystem::path directory_;
  Device& device_;
  std::string target_;
  std::vector<Tensor> inputs_, outputs_;
  std::vector<Step> steps_;
  std::vector<void*> owned_;  ///< weights and intermediates, freed through the device
};

}  // namespace hi
