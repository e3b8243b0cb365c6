// A graph's code object when its module was compiled as several units (split_module, compile_graph): one file that
// holds each unit's own code object (a cubin for NVIDIA, an hsaco for AMD) and the names of the kernels it defines,
// so that a loader loads each part as a module and finds each kernel in the part that holds it. A module compiled
// whole is its plain code object, never a container; everything that reads a graph's GPU code object accepts both
// (Device::load_for_target, read_amd_kernel_facts, the cache's verify and disasm, packages).
//
// Layout, little-endian:
//   magic "HIUNITS1" (8 bytes), u32 part count (at least 1), then per part:
//     u32 kernel count, per kernel u32 name length and the name's bytes, u64 code object size and its bytes;
//   nothing after the last part. No code object starts with the magic (ELF "\x7fELF", clang bundles
//   "__CLANG_OFFLOAD_BUNDLE__", "CCOB"), so the first eight bytes tell a container from a plain one.
#pragma once

#include <string>
#include <vector>

namespace hi {

struct CodeObjectUnit {
  std::vector<std::string> kernels;  ///< the kernels this part defines, each in exactly one part of a container
  std::vector<char> binary;          ///< the part's code object, as its compiler returned it
};

/// Whether `bytes` is a units container (starts with its magic); says nothing about whether it is well formed.
bool is_code_object_units(const std::vector<char>& bytes);

/// The container holding `units`, in order. Throws std::invalid_argument when there are none.
std::vector<char> pack_code_object_units(const std::vector<CodeObjectUnit>& units);

/// The parts of a container. Throws std::runtime_error saying what is wrong when `bytes` is not a well-formed one:
/// wrong magic, no parts, truncated, bytes after the last part, an empty code object, or a kernel named twice.
std::vector<CodeObjectUnit> unpack_code_object_units(const std::vector<char>& bytes);

}  // namespace hi
