# make build | make test | make demo — each runs inside the dev environment (./devenv) unless it already is in one
# or NATIVE=1 is given (a machine with its own toolchain, PyTorch and ROCm/CUDA).
#
# make test SANITIZE=1 (or make sanitize): the C++ tests built with clang under AddressSanitizer and
# UndefinedBehaviorSanitizer in build-asan, with the libFuzzer harnesses, run through ctest; no Python extension
# there (libasan inside a python process needs LD_PRELOAD). make fuzz: each harness for FUZZ_SECONDS on the seed
# corpus (docs/fuzzing.md; scripts/fuzz-campaign.sh runs long campaigns).
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
FUZZ_SECONDS ?= 60
# FUZZ_SEED: libFuzzer's seed for make fuzz (empty: a new one each run; CI fixes it).
FUZZ_SEED ?=
# TEST_LABELS: a ctest label regex (ctest -L) limiting make test's C++ tests to some folders, e.g. 'frontend|ir|fuzz'.
TEST_LABELS ?=
CONFIGURE_FLAGS ?=
ifeq ($(SANITIZE),1)
  BUILD_DIR := build-asan
  CONFIGURE_FLAGS += -DCMAKE_CXX_COMPILER=clang++ -DHIPINDUCTOR_FUZZ=ON -DHIPINDUCTOR_BUILD_PYTHON=OFF
endif
ifeq ($(HIPINDUCTOR_IN_DEVENV)$(NATIVE),)
  RUN := ./devenv
else
  RUN :=
endif

.PHONY: build test demo configure clean golden sanitize fuzz

configure:
	$(RUN) cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CONFIGURE_FLAGS)

build: configure
	$(RUN) cmake --build $(BUILD_DIR) -j $(JOBS)

test: build
	$(RUN) env TEST_LABELS='$(TEST_LABELS)' bash scripts/run-tests.sh $(BUILD_DIR)

sanitize:
	$(MAKE) test SANITIZE=1

fuzz:
	$(MAKE) build SANITIZE=1
	$(RUN) bash scripts/fuzz-campaign.sh --seconds $(FUZZ_SECONDS) $(if $(FUZZ_SEED),--seed $(FUZZ_SEED)) build-asan

demo: build
	$(RUN) $(BUILD_DIR)/tools/hipinductor-demo examples/layernorm_gelu_residual.json

golden: build
	$(RUN) bash scripts/update-golden.sh $(BUILD_DIR)

clean:
	rm -rf $(BUILD_DIR)
