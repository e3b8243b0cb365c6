#include "pipeline/package.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "pipeline/compiled_graph_json.h"
#include "runtime/sha256.h"

namespace hi {

using nlohmann::json;

namespace {

constexpr const char* kFormat = "hipinductor-package";

std::vector<char> read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw PackageError(path.string() + ": cannot be read");
  return std::vector<char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Bytes a tensor of this layout spans from element 0 of its storage (0 when it has no elements).
size_t span_bytes(DType dtype, const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
                  int64_t offset) {
  int64_t last = offset;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 0) return 0;
    last += (sizes[d] - 1) * strides[d];
  }
  return static_cast<size_t>(last + 1) * dtype_bytes(dtype);
}

Package::Tensor tensor_from(const json& j, const std::string& name) {
  Package::Tensor t;
  t.name = name;
  std::optional<DType> dtype = parse_dtype(j.at("dtype").get<std::string>());
  if (!dtype) throw std::invalid_argument("unknown dtype '" + j.at("dtype").get<std::string>() + "' of " + name);
  t.dtype = *dtype;
  t.sizes = j.at("sizes").get<std::vector<int64_t>>();
  t.strides = j.at("strides").get<std::vector<int64_t>>();
  t.offset = j.value("offset", int64_t{0});
  if (t.sizes.size() != t.strides.size()) throw std::invalid_argument("sizes and strides of " + name + " differ in rank");
  t.bytes = span_bytes(t.dtype, t.sizes, t.strides, t.offset);
  return t;
}

}  // namespace

/// Where a value comes from on each run: a user input, a user output, or memory the package owns.
struct StepValue {
  enum class Kind { Input, Output, Owned } kind;
  size_t index = 0;
  void* pointer = nullptr;
};

struct Package::Step {
  std::unique_ptr<GraphRunner> runner;
  std::vector<StepValue> inputs, outputs;
};

Package::Package(const std::filesystem::path& directory, Device& device) : directory_(directory), device_(device) {
  const std::filesystem::path manifest_path = directory / "manifest.json";
  if (!std::filesystem::is_directory(directory))
    throw PackageError(directory.string() + ": not a hipinductor package (packages are directories)");
  json manifest;
  try {
    std::vector<char> text = read_bytes(manifest_path);
    manifest = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    throw PackageError(manifest_path.string() + ": corrupt or truncated package manifest (" + e.what() + ")");
  }
  if (!manifest.is_object() || !manifest.contains("format") || manifest["format"] != kFormat)
    throw PackageError(manifest_path.string() + ": not a hipinductor package manifest");
  if (!manifest.contains("version") || manifest["version"] != kPackageFormatVersion)
    throw PackageError(manifest_path.string() + ": package format version " + manifest.value("version", json()).dump() +
                       ", but this build reads version " + std::to_string(kPackageFormatVersion));
  try {
    const json& files = manifest.at("files");
    auto checked = [&](const std::string& relative) {
      const std::filesystem::path path = directory / relative;
      if (!files.contains(relative)) throw PackageError(path.string() + ": not listed in the package manifest");
      std::vector<char> data = read_bytes(path);
      const json& expected = files.at(relative);
      if (data.size() != expected.at("size").get<size_t>())
        throw PackageError(path.string() + ": truncated or corrupt: " + std::to_string(data.size()) +
                           " bytes, the manifest says " + expected.at("size").dump());
      if (sha256_hex(std::string_view(data.data(), data.size())) != expected.at("sha256").get<std::string>())
        throw PackageError(path.string() + ": corrupt: its SHA-256 differs from the manifest's");
      return data;
    };

    // Only kernels: the first other step says what the package needs instead.
    const json& steps = manifest.at("steps");
    for (size_t k = 0; k < steps.size(); ++k)
      if (steps[k].at("kind") != "kernels")
        throw PackageError(directory.string() + ": step " + std::to_string(k) + " runs " +
                           steps[k].value("op", steps[k].at("kind").get<std::string>()) +
                           " in PyTorch; hi::Package runs packages whose steps are all hipinductor kernels (load "
                           "this one with hipinductor.load_package)");

    // The target: the first whose code runs on the device.
    const Target device_target = device.target();
    const json* chosen = nullptr;
    std::string targets;
    for (const json& t : manifest.at("targets")) {
      std::string id = t.at("target").get<std::string>();
      targets += (targets.empty() ? "" : ", ") + id;
      if (!chosen && code_runs_on(parse_target(id), device_target)) chosen = &t;
    }
    if (!chosen)
      throw PackageError(directory.string() + ": no code for this device: it is " + device_target.id() +
                         ", the package has " + targets);
    target_ = chosen->at("target").get<std::string>();
    const Target target = parse_target(target_);

    std::map<std::string, StepValue> values;
    for (const json& i : manifest.at("inputs")) {
      std::string name = i.at("name").get<std::string>();
      values[name] = StepValue{StepValue::Kind::Input, inputs_.size(), nullptr};
      inputs_.push_back(tensor_from(i, name));
    }

    // Weights: safetensors is an 8-byte little-endian header size, a JSON header (name -> dtype, shape,
    // data_offsets into the data that follows), then the data.
    const json& weights = manifest.at("weights");
    if (weights.at("format") != "safetensors" && !weights.at("tensors").empty())
      throw PackageError(directory.string() + ": its weights were written with torch.save, which only PyTorch reads");
    if (weights.at("format") == "safetensors") {
      const std::string file = weights.at("file").get<std::string>();
      std::vector<char> data = checked(file);
      uint64_t header_size = 0;
      if (data.size() < 8) throw PackageError((directory / file).string() + ": truncated safetensors file");
      std::memcpy(&header_size, data.data(), 8);
      if (header_size > data.size() - 8) throw PackageError((directory / file).string() + ": truncated header");
      json header = json::parse(data.begin() + 8, data.begin() + 8 + static_cast<std::ptrdiff_t>(header_size));
      const size_t base = 8 + header_size;
      for (const json& w : weights.at("tensors")) {
        std::string name = w.at("name").get<std::string>();
        Tensor t = tensor_from(w, name);
        const json& entry = header.at(name);
        auto range = entry.at("data_offsets").get<std::vector<size_t>>();
        if (range.size() != 2 || range[1] < range[0] || base + range[1] > data.size() ||
            range[1] - range[0] != t.bytes)
          throw PackageError((directory / file).string() + ": tensor " + name + " has bad data offsets");
        void* pointer = device_.alloc(std::max<size_t>(t.bytes, 1));
        owned_.push_back(pointer);
        if (t.bytes) device_.copy_to_device(pointer, data.data() + base + range[0], t.bytes);
        values[name] = StepValue{StepValue::Kind::Owned, 0, pointer};
      }
    }

    // Outputs: values a kernels step writes straight into the caller's memory.
    for (const json& o : manifest.at("outputs")) {
      if (!o.is_object() || !o.contains("value"))
        throw PackageError(directory.string() + ": output " + o.dump() + " is not a tensor the kernels compute");
      std::string name = o.at("value").get<std::string>();
      if (values.count(name))
        throw PackageError(directory.string() + ": output '" + name +
                           "' is an input or a weight; hi::Package runs only outputs the kernels compute");
      values[name] = StepValue{StepValue::Kind::Output, outputs_.size(), nullptr};
      outputs_.push_back(Tensor{name, DType{}, {}, {}, 0, 0});
    }

    std::vector<bool> computed(outputs_.size(), false);
    std::map<std::string, std::vector<char>> code_objects;
    for (const json& s : steps) {
      const json& segment = chosen->at("segments").at(s.at("segment").get<size_t>());
      const std::string code_file = segment.at("code_object").get<std::string>();
      if (!code_objects.count(code_file)) code_objects[code_file] = checked(code_file);
      auto graph = std::make_shared<CompiledGraph>(compiled_graph_from_json(segment.at("graph"), target));
      graph->code.binary = code_objects[code_file];
      Step step;
      const auto& in_names = s.at("inputs");
      const auto& out_names = s.at("outputs");
      for (const json& n : in_names) {
        auto found = values.find(n.get<std::string>());
        if (found == values.end())
          throw PackageError(directory.string() + ": a step reads '" + n.get<std::string>() + "' before it is made");
        step.inputs.push_back(found->second);
      }
      for (size_t k = 0; k < out_names.size(); ++k) {
        std::string name = out_names[k].get<std::string>();
        Tensor t = tensor_from(s.at("output_layouts").at(k), name);
        auto found = values.find(name);
        if (found != values.end() && found->second.kind == StepValue::Kind::Output) {
          outputs_[found->second.index] = t;
          computed[found->second.index] = true;
        } else {  // an intermediate between steps: memory of the package's own
          void* pointer = device_.alloc(std::max<size_t>(t.bytes, 1));
          owned_.push_back(pointer);
          values[name] = StepValue{StepValue::Kind::Owned, 0, pointer};
        }
        step.outputs.push_back(values[name]);
      }
      step.runner = std::make_unique<GraphRunner>(std::move(graph), device_);
      steps_.push_back(std::move(step));
    }
    for (size_t k = 0; k < outputs_.size(); ++k)
      if (!computed[k]) throw PackageError(directory.string() + ": no step computes output '" + outputs_[k].name + "'");
  } catch (const json::exception& e) {
    throw PackageError(manifest_path.string() + ": malformed package manifest (" + e.what() + ")");
  } catch (const std::invalid_argument& e) {
    throw PackageError(manifest_path.string() + ": malformed package manifest (" + e.what() + ")");
  }
}

Package::~Package() {
  steps_.clear();
  for (void* pointer : owned_) device_.free(pointer);
}

void Package::run(const std::vector<void*>& inputs, const std::vector<void*>& outputs, void* stream) {
  if (inputs.size() != inputs_.size() || outputs.size() != outputs_.size())
    throw std::invalid_argument("Package::run: " + directory_.string() + " takes " + std::to_string(inputs_.size()) +
                                " input(s) and " + std::to_string(outputs_.size()) + " output(s), got " +
                                std::to_string(inputs.size()) + " and " + std::to_string(outputs.size()));
  auto pointer = [&](const StepValue& v) {
    switch (v.kind) {
      case StepValue::Kind::Input: return inputs[v.index];
      case StepValue::Kind::Output: return outputs[v.index];
      case StepValue::Kind::Owned: break;
    }
    return v.pointer;
  };
  std::vector<void*> in, out;
  for (Step& step : steps_) {
    in.clear();
    out.clear();
    for (const StepValue& v : step.inputs) in.push_back(pointer(v));
    for (const StepValue& v : step.outputs) out.push_back(pointer(v));
    step.runner->run(in, out, stream);
  }
}

}  // namespace hi
