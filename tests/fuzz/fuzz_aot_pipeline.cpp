// libFuzzer harness for the ahead-of-time pipeline up to the emitted HIP source: read -> lower -> split -> fuse ->
// plan memory -> emit (pipeline/compile_graph.h generate()), with the loop IR verified after every pass.
//
// The contract checked, for any graph the reader accepts (inputs it rejects are the reader harness's concern):
//   - generate() either emits a module or throws what hipinductor-aot reports as bad input, exit status 2
//     (tools/cli_errors.h: LoweringError, std::invalid_argument); any other exception would reach a user as exit 1,
//     "a compiler failure", and is a finding. So is a LoweringError from the pass verifier ("internal: ...").
//   - the planned program emits for each code shape: AMD wave 64 (gfx942, the generate() target), NVIDIA and the
//     cpu device (wave 32), each module with as many kernels as the program and a non-empty source.
// No HIPRTC/NVRTC call (far too slow per input). With HIPINDUCTOR_FUZZ_COMPILE_EVERY=N, every Nth module that emits
// is also compiled for the cpu device with the host compiler, and a source it rejects is a finding: a slow mode for
// long campaigns.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "codegen/emit_hip.h"
#include "codegen/target.h"
#include "codegen/kernel_plan.h"
#include "frontend/graph_json.h"
#include "lowering/lower_graph.h"
#include "pipeline/compile_graph.h"
#include "runtime/compiler.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

long compile_every = 0;   // 0: never compile
long emitted_count = 0;

void check_module(const hi::EmittedModule& m, const hi::LoopProgram& p, const std::string& target) {
  if (m.source.empty()) hi::fuzz::fuzz_fail("emit_hip for " + target + " gave an empty source");
  // One kernel per plan: a kernel whose best shape depends on a symbolic size's magnitude has several (variants).
  size_t planned = 0;
  for (const hi::Kernel& k : p.kernels) planned += hi::plan_kernels(p, k, m.target).size();
  if (m.kernels.size() != planned) {
    hi::fuzz::fuzz_fail("emit_hip for " + target + " gave " + std::to_string(m.kernels.size()) + " kernels for " +
                        std::to_string(planned) + " planned for the program's " + std::to_string(p.kernels.size()));
  }
}

void compile_for_cpu(const hi::EmittedModule& m) {
  static std::unique_ptr<hi::Compiler> compiler = hi::make_host_compiler();
  try {
    compiler->compile(m.source, "fuzz", m.target, {});
  } catch (const hi::CompileError& e) {
    hi::fuzz::fuzz_fail("the host compiler rejected the emitted cpu source: " + std::string(e.what()) + "\n" + m.source);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // generate() dumps every stage under $HIPINDUCTOR_DEBUG_DIR: never per fuzz input.
  unsetenv("HIPINDUCTOR_DEBUG_DIR");
  if (const char* every = std::getenv("HIPINDUCTOR_FUZZ_COMPILE_EVERY")) compile_every = std::strtol(every, nullptr, 10);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hi::Graph graph;
  try {
    graph = hi::read_graph_json(std::string(reinterpret_cast<const char*>(data), size), "fuzz.json");
  } catch (const hi::GraphFormatError&) {
    return 0;
  }

  hi::CompileOptions options;
  options.target = hi::parse_target("gfx942");
  options.graph_name = "fuzz";
  options.verify_passes = true;
  hi::CompiledGraph compiled;
  try {
    compiled = hi::generate(graph, options);
  } catch (const hi::LoweringError& e) {
    if (std::string(e.what()).rfind("internal:", 0) == 0) hi::fuzz::fuzz_fail(e.what());
    return 0;
  } catch (const std::invalid_argument&) {
    return 0;
  } catch (const std::exception& e) {
    hi::fuzz::fuzz_fail("generate threw " + hi::fuzz::describe_exception(e) + " (hipinductor-aot: exit 1)");
  }
  check_module(compiled.module, compiled.program, "gfx942");

  hi::EmittedModule cpu;
  for (const char* name : {"sm_90", "cpu"}) {
    hi::Target target = hi::parse_target(name);
    hi::EmittedModule m;
    try {
      m = hi::emit_hip(compiled.program, target);
    } catch (const std::exception& e) {
      hi::fuzz::fuzz_fail(std::string("emit_hip for ") + name + " threw " + hi::fuzz::describe_exception(e) +
                          " where gfx942 emitted");
    }
    check_module(m, compiled.program, name);
    if (target.kind == hi::TargetKind::Cpu) cpu = std::move(m);
  }
  if (compile_every > 0 && ++emitted_count % compile_every == 0) compile_for_cpu(cpu);
  return 0;
}
