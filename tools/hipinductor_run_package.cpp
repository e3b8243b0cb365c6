// hipinductor-run-package PACKAGE --input x.bin ... --output y.bin ... [--device cpu|cuda|hip] [--runs N]
//
// The example program of the C++ package API (pipeline/package.h): loads an ahead-of-time package without Python,
// libtorch or a compiler, reads each user input's bytes from a file (the tensor's storage as the package lays it out:
// Package::Tensor::bytes of them), runs the package and writes each output's bytes to a file. Prints the target it
// loaded and the load and run times. Exit status: 0 done, 2 bad usage or a package that cannot run here (one line on
// stderr naming the file), 1 anything else.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>

#include "codegen/target.h"
#include "pipeline/package.h"
#include "runtime/cpu_device.h"
#include "runtime/gpu_devices.h"

namespace hi {
namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

std::vector<char> read_input(const std::string& path, const Package::Tensor& t) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument(path + ": cannot be read");
  std::vector<char> data(std::istreambuf_iterator<char>(in), {});
  if (data.size() != t.bytes)
    throw std::invalid_argument(path + ": " + std::to_string(data.size()) + " bytes, input '" + t.name + "' needs " +
                                std::to_string(t.bytes));
  return data;
}

int run(const std::string& package_path, const std::string& device_name, const std::vector<std::string>& input_files,
        const std::vector<std::string>& output_files, int runs) {
  std::unique_ptr<Device> device = device_name == "cpu" ? std::make_unique<CpuDevice>(parse_target("cpu"))
                                                        : open_gpu_device(gpu_kind_from_name(device_name), 0);
  auto start = std::chrono::steady_clock::now();
  Package package(package_path, *device);
  double load_ms = ms_since(start);
  if (input_files.size() != package.inputs().size() || output_files.size() != package.outputs().size())
    throw std::invalid_argument(package_path + " takes " + std::to_string(package.inputs().size()) + " --input and " +
                                std::to_string(package.outputs().size()) + " --output file(s)");
  std::vector<void*> inputs, outputs;
  for (size_t i = 0; i < input_files.size(); ++i) {
    const Package::Tensor& t = package.inputs()[i];
    std::vector<char> data = read_input(input_files[i], t);
    inputs.push_back(device->alloc(std::max<size_t>(t.bytes, 1)));
    device->copy_to_device(inputs.back(), data.data(), data.size());
  }
  for (const Package::Tensor& t : package.outputs()) outputs.push_back(device->alloc(std::max<size_t>(t.bytes, 1)));
  start = std::chrono::steady_clock::now();
  package.run(inputs, outputs);
  device->synchronize(nullptr);
  double first_ms = ms_since(start);
  start = std::chrono::steady_clock::now();
  for (int r = 1; r < runs; ++r) package.run(inputs, outputs);
  device->synchronize(nullptr);
  double later_ms = runs > 1 ? ms_since(start) / (runs - 1) : 0.0;
  for (size_t i = 0; i < output_files.size(); ++i) {
    const Package::Tensor& t = package.outputs()[i];
    std::vector<char> data(t.bytes);
    device->copy_to_host(data.data(), outputs[i], t.bytes);
    std::ofstream out(output_files[i], std::ios::binary | std::ios::trunc);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    if (!out) throw std::runtime_error(output_files[i] + ": cannot be written");
  }
  for (void* p : inputs) device->free(p);
  for (void* p : outputs) device->free(p);
  std::cout << "target " << package.target() << ": load " << load_ms << " ms, first run " << first_ms << " ms";
  if (runs > 1) std::cout << ", later runs " << later_ms << " ms";
  std::cout << "\n";
  return 0;
}

}  // namespace
}  // namespace hi

int main(int argc, char** argv) {
  CLI::App app{"hipinductor-run-package: run an ahead-of-time package from C++ (kernels-only packages)"};
  std::string package;
  std::string device = "cpu";
  std::vector<std::string> inputs, outputs;
  int runs = 1;
  app.add_option("package", package, "package directory (hipinductor-aot -o ...)")->required();
  app.add_option("--input", inputs, "a file per user input, in order: the tensor's bytes");
  app.add_option("--output", outputs, "a file per output, in order, to write the tensor's bytes to");
  app.add_option("--device", device, "cpu, cuda or hip (GPU 0)");
  app.add_option("--runs", runs, "runs to time (the first one's time is printed apart)")->check(CLI::PositiveNumber);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "hipinductor-run-package: " << e.what() << " (see --help)\n";
    return 2;
  }
  try {
    return hi::run(package, device, inputs, outputs, runs);
  } catch (const hi::PackageError& e) {
    std::cerr << "hipinductor-run-package: " << e.what() << "\n";
    return 2;
  } catch (const std::invalid_argument& e) {
    std::cerr << "hipinductor-run-package: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "hipinductor-run-package: " << e.what() << "\n";
    return 1;
  }
}
