// Compilers and AMD code-object facts, run for real: HIPRTC and comgr (ROCm 5.7 in the dev environment), NVRTC when
// its library is present, the host C++ compiler.
#include <gtest/gtest.h>

#include <cstring>
#include <regex>

#include "codegen/target.h"
#include "runtime/amd_code_object.h"
#include "runtime/compiler.h"
#include "runtime/dynamic_library.h"

namespace hi {
namespace {

// Self-contained kernel (HIPRTC and NVRTC predefine the HIP/CUDA keywords): a block sum with warp shuffles and a
// 1 KiB __shared__ array, the shape the code generator's inner reductions take.
std::string block_sum_source(const std::string& shuffle_xor) {
  return "#define HI_SHFL_XOR(v, m) " + shuffle_xor + R"(
extern "C" __global__ void __launch_bounds__(256) block_sum(const float* __restrict__ in, float* __restrict__ out,
                                                            int n) {
  __shared__ float partial[256];
  unsigned tid = threadIdx.x;
  unsigned i = blockIdx.x * blockDim.x + tid;
  float v = i < (unsigned)n ? in[i] : 0.0f;
  for (int m = HI_WARP_SIZE / 2; m > 0; m /= 2) v += HI_SHFL_XOR(v, m);
  partial[tid] = v;
  __syncthreads();
  if (tid == 0) {
    float sum = 0.0f;
    for (unsigned w = 0; w < blockDim.x; w += HI_WARP_SIZE) sum += partial[w];
    out[blockIdx.x] = sum;
  }
}
)";
}

std::string amd_block_sum_source() { return "#define HI_WARP_SIZE 64\n" + block_sum_source("__shfl_xor(v, m)"); }

class HiprtcTest : public ::testing::TestWithParam<std::string> {};

TEST_P(HiprtcTest, CompilesAndCodeObjectFactsAreSane) {
  Target target = parse_target(GetParam());
  std::unique_ptr<Compiler> compiler = compiler_for(target);
  EXPECT_EQ(compiler->name(), "hiprtc");
  EXPECT_TRUE(std::regex_match(compiler->version(), std::regex(R"(hiprtc [0-9]+\.[0-9]+(\.[0-9]+)*)")))
      << compiler->version();
  CompiledCode code = compiler->compile(amd_block_sum_source(), "block_sum", target, {});
  ASSERT_FALSE(code.binary.empty());
  EXPECT_GT(code.compile_ms, 0.0);
  std::cout << "[ info ] " << compiler->version() << " compiled block_sum for " << target.id() << " in "
            << code.compile_ms << " ms (" << code.binary.size() << " bytes, "
            << (std::memcmp(code.binary.data(), "\x7f" "ELF", 4) == 0 ? "raw ELF" : "offload bundle") << ")\n";

  std::vector<char> elf = extract_amdgcn_elf(code.binary, target);
  ASSERT_GE(elf.size(), 4u);
  EXPECT_EQ(std::memcmp(elf.data(), "\x7f" "ELF", 4), 0);

  std::vector<AmdKernelFacts> facts = read_amd_kernel_facts(code.binary, target);
  ASSERT_EQ(facts.size(), 1u);
  const AmdKernelFacts& kernel = facts[0];
  EXPECT_EQ(kernel.name, "block_sum");
  EXPECT_GT(kernel.vgpr_count, 0);
  EXPECT_LT(kernel.vgpr_count, 64);
  EXPECT_GT(kernel.sgpr_count, 0);
  EXPECT_EQ(kernel.vgpr_spill_count, 0);
  EXPECT_EQ(kernel.sgpr_spill_count, 0);
  EXPECT_EQ(kernel.scratch_bytes, 0);
  EXPECT_EQ(kernel.wavefront_size, 64);
  EXPECT_EQ(kernel.lds_bytes, 256 * 4);
  EXPECT_EQ(kernel.max_flat_workgroup_size, 256);
  EXPECT_EQ(kernel.waves_per_simd, amd_waves_per_simd(target.arch, kernel.vgpr_count, 64));
  EXPECT_EQ(kernel.waves_per_simd, 8) << "a small kernel is not VGPR-limited";
  std::cout << "[ info ] vgpr " << kernel.vgpr_count << " sgpr " << kernel.sgpr_count << " agpr "
            << kernel.agpr_count << " lds " << kernel.lds_bytes << " waves/SIMD " << kernel.waves_per_simd << "\n";
}

TEST_P(HiprtcTest, DisassemblesTheCodeObject) {
  Target target = parse_target(GetParam());
  CompiledCode code = compiler_for(target)->compile(amd_block_sum_source(), "block_sum", target, {});
  std::string isa = disassemble_amd_code_object(code.binary, target);
  EXPECT_NE(isa.find("block_sum"), std::string::npos);
  EXPECT_NE(isa.find("s_endpgm"), std::string::npos);
  EXPECT_NE(isa.find("ds_"), std::string::npos) << "LDS or cross-lane instructions expected";
}

// gfx90a and gfx94x share one register file between arch VGPRs and AGPRs: the metadata's vgpr_count is then the
// total (arch VGPRs rounded up to 4, plus AGPRs), and occupancy is computed from it; gfx908 has separate files.
TEST(Hiprtc, VgprCountIncludesAgprsOnTheUnifiedRegisterFile) {
  std::string source = R"(extern "C" __global__ void uses_agprs(float* o) {
  float x = o[threadIdx.x];
  asm volatile("v_accvgpr_write_b32 a9, 0" ::: "a9");
  o[threadIdx.x] = x * 2.0f;
})";
  for (const char* name : {"gfx90a", "gfx942", "gfx908"}) {
    Target target = parse_target(name);
    std::vector<AmdKernelFacts> facts =
        read_amd_kernel_facts(compiler_for(target)->compile(source, "uses_agprs", target, {}).binary, target);
    ASSERT_EQ(facts.size(), 1u);
    EXPECT_EQ(facts[0].agpr_count, 10) << name;
    if (target.arch == "gfx908")
      EXPECT_EQ(facts[0].vgpr_count, 10) << "gfx908: max(arch VGPRs, AGPRs)";
    else
      EXPECT_GE(facts[0].vgpr_count, 4 + 10) << name << ": arch VGPRs (rounded to 4) + AGPRs";
  }
}

INSTANTIATE_TEST_SUITE_P(Amd, HiprtcTest, ::testing::Values("gfx90a", "gfx942:sramecc+:xnack-"),
                         [](const auto& info) { return parse_target(info.param).arch; });

TEST(Hiprtc, SyntaxErrorIsACompileErrorWithKernelTargetAndLog) {
  Target target = parse_target("gfx942:sramecc+:xnack-");
  std::unique_ptr<Compiler> compiler = compiler_for(target);
  std::string source = "extern \"C\" __global__ void broken_kernel(float* out) { out[0] = 1.0f +; }\n";
  try {
    compiler->compile(source, "broken_kernel", target, {});
    FAIL() << "compiled a syntax error";
  } catch (const CompileError& error) {
    std::string message = error.what();
    EXPECT_NE(message.find("broken_kernel"), std::string::npos) << message;
    EXPECT_NE(message.find("gfx942:sramecc+:xnack-"), std::string::npos) << message;
    EXPECT_NE(message.find("error"), std::string::npos) << message;
    EXPECT_NE(error.log().find("expected expression"), std::string::npos) << error.log();
    EXPECT_EQ(error.name_hint(), "broken_kernel");
  }
}

TEST(Hiprtc, ExtraOptionsReachTheCompiler) {
  Target target = parse_target("gfx90a");
  std::string source = "extern \"C\" __global__ void k(float* out) { out[0] = HI_VALUE; }\n";
  EXPECT_THROW(compiler_for(target)->compile(source, "k", target, {}), CompileError);
  EXPECT_NO_THROW(compiler_for(target)->compile(source, "k", target, {"-DHI_VALUE=2.0f"}));
}

TEST(Nvrtc, CompilesACubinForARealArch) {
  std::unique_ptr<Compiler> compiler;
  try {
    compiler = make_nvrtc_compiler();
  } catch (const std::runtime_error& error) {
    GTEST_SKIP() << "NVRTC is not installed here: " << error.what();
  }
  for (const char* arch : {"sm_90", "sm_80"}) {
    Target target = parse_target(arch);
    std::string source = "#define HI_WARP_SIZE 32\n" + block_sum_source("__shfl_xor_sync(0xffffffffu, v, m)");
    CompiledCode code = compiler->compile(source, "block_sum", target, {});
    ASSERT_GE(code.binary.size(), 4u);
    EXPECT_EQ(std::memcmp(code.binary.data(), "\x7f" "ELF", 4), 0) << "a cubin is an ELF file";
    std::cout << "[ info ] " << compiler->version() << " compiled block_sum for " << arch << " in " << code.compile_ms
              << " ms\n";
  }
  EXPECT_TRUE(std::regex_match(compiler->version(), std::regex(R"(nvrtc [0-9]+\.[0-9]+(\.[0-9]+)*)")))
      << compiler->version();
  Target sm90 = parse_target("sm_90");
  try {
    compiler->compile("extern \"C\" __global__ void bad_nv(float* o) { o[0] = ; }", "bad_nv", sm90, {});
    FAIL() << "compiled a syntax error";
  } catch (const CompileError& error) {
    EXPECT_NE(std::string(error.what()).find("bad_nv"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("sm_90"), std::string::npos) << error.what();
    EXPECT_FALSE(error.log().empty());
  }
}

TEST(HostCompiler, CompilesASharedObjectAndReportsErrors) {
  Target cpu = parse_target("cpu");
  std::unique_ptr<Compiler> compiler = compiler_for(cpu);
  EXPECT_EQ(compiler->name(), "host-c++");
  EXPECT_FALSE(compiler->version().empty());
  CompiledCode code = compiler->compile("extern \"C\" int answer() { return 42; }\n", "answer", cpu, {});
  ASSERT_GE(code.binary.size(), 4u);
  EXPECT_EQ(std::memcmp(code.binary.data(), "\x7f" "ELF", 4), 0);
  std::cout << "[ info ] " << compiler->version() << ": " << code.compile_ms << " ms for a trivial .so\n";
  try {
    compiler->compile("extern \"C\" int answer() { return ; }\nint x = ;\n", "host_broken", cpu, {});
    FAIL() << "compiled a syntax error";
  } catch (const CompileError& error) {
    EXPECT_NE(std::string(error.what()).find("host_broken"), std::string::npos) << error.what();
    EXPECT_NE(error.log().find("error"), std::string::npos) << error.log();
    EXPECT_NE(error.log().find("host_broken.hip"), std::string::npos) << error.log();
  }
  // --no-undefined: a module may not reach into the runtime except through the hooks table.
  EXPECT_THROW(compiler->compile("extern \"C\" void runtime_only(); extern \"C\" void f() { runtime_only(); }\n",
                                 "undefined_symbol", cpu, {}),
               CompileError);
}

TEST(Compilers, RejectATargetOfTheWrongKind) {
  EXPECT_THROW(make_host_compiler()->compile("", "k", parse_target("gfx90a"), {}), std::invalid_argument);
  EXPECT_THROW(make_hiprtc_compiler()->compile("", "k", parse_target("cpu"), {}), std::invalid_argument);
}

TEST(DynamicLibrary, MissingLibraryNamesEveryCandidate) {
  try {
    DynamicLibrary::open_first("Frobnicator", {"libhi_missing_one.so.3", "libhi_missing_two.so"});
    FAIL() << "opened a library that does not exist";
  } catch (const std::runtime_error& error) {
    std::string message = error.what();
    EXPECT_NE(message.find("Frobnicator"), std::string::npos) << message;
    EXPECT_NE(message.find("libhi_missing_one.so.3"), std::string::npos) << message;
    EXPECT_NE(message.find("libhi_missing_two.so"), std::string::npos) << message;
  }
}

TEST(AmdOccupancy, FollowsTheRegisterFileOfEachGeneration) {
  // gfx90a/gfx942: 512 unified registers per lane, granule 8, at most 8 waves.
  EXPECT_EQ(amd_waves_per_simd("gfx90a", 1, 64), 8);
  EXPECT_EQ(amd_waves_per_simd("gfx942", 64, 64), 8);
  EXPECT_EQ(amd_waves_per_simd("gfx942", 65, 64), 7);  // 72 allocated
  EXPECT_EQ(amd_waves_per_simd("gfx942", 128, 64), 4);
  EXPECT_EQ(amd_waves_per_simd("gfx90a", 256, 64), 2);
  EXPECT_EQ(amd_waves_per_simd("gfx90a", 512, 64), 1);
  // gfx908 and older gfx9: 256 registers, granule 4, at most 10 waves.
  EXPECT_EQ(amd_waves_per_simd("gfx908", 24, 64), 10);
  EXPECT_EQ(amd_waves_per_simd("gfx908", 64, 64), 4);
  EXPECT_EQ(amd_waves_per_simd("gfx906", 84, 64), 3);
  // gfx1100 wave32: 1536 registers, granule 24, at most 16 waves; gfx1030: 1024, granule 16.
  EXPECT_EQ(amd_waves_per_simd("gfx1100", 96, 32), 16);
  EXPECT_EQ(amd_waves_per_simd("gfx1100", 128, 32), 10);  // 144 allocated
  EXPECT_EQ(amd_waves_per_simd("gfx1030", 128, 32), 8);
  EXPECT_THROW(amd_waves_per_simd("sm_90", 32, 32), std::invalid_argument);
}

std::vector<char> make_bundle(const std::vector<std::pair<std::string, std::string>>& entries) {
  std::string header = "__CLANG_OFFLOAD_BUNDLE__";
  auto put_u64 = [](std::string& out, uint64_t value) { out.append(reinterpret_cast<const char*>(&value), 8); };
  size_t header_size = header.size() + 8;
  for (const auto& [id, body] : entries) header_size += 24 + id.size();
  std::string bundle = header;
  put_u64(bundle, entries.size());
  size_t offset = header_size;
  for (const auto& [id, body] : entries) {
    put_u64(bundle, body.empty() ? 0 : offset);
    put_u64(bundle, body.size());
    put_u64(bundle, id.size());
    bundle += id;
    offset += body.size();
  }
  for (const auto& [id, body] : entries) bundle += body;
  return std::vector<char>(bundle.begin(), bundle.end());
}

TEST(AmdCodeObject, ExtractsTheTargetsElfFromAnOffloadBundle) {
  Target gfx942 = parse_target("gfx942:sramecc+:xnack-");
  std::string elf_942 = std::string("\x7f" "ELF", 4) + "gfx942 code";
  std::string elf_90a = std::string("\x7f" "ELF", 4) + "gfx90a code";
  std::vector<char> bundle = make_bundle({{"host-x86_64-unknown-linux", ""},
                                          {"hipv4-amdgcn-amd-amdhsa--gfx90a", elf_90a},
                                          {"hipv4-amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-", elf_942}});
  std::vector<char> extracted = extract_amdgcn_elf(bundle, gfx942);
  EXPECT_EQ(std::string(extracted.begin(), extracted.end()), elf_942);
  try {
    extract_amdgcn_elf(bundle, parse_target("gfx1100"));
    FAIL() << "found a gfx1100 entry that is not there";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("hipv4-amdgcn-amd-amdhsa--gfx90a"), std::string::npos) << error.what();
  }
  std::vector<char> truncated(bundle.begin(), bundle.begin() + 40);
  EXPECT_THROW(extract_amdgcn_elf(truncated, gfx942), std::runtime_error);
  std::vector<char> garbage = {'n', 'o', 'p', 'e', '!'};
  EXPECT_THROW(extract_amdgcn_elf(garbage, gfx942), std::runtime_error);
}

}  // namespace
}  // namespace hi
