# make build | make test | make demo — each runs inside the dev environment (./devenv) unless it already is in one
# or NATIVE=1 is given (a machine with its own toolchain, PyTorch and ROCm/CUDA).
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
ifeq ($(HIPINDUCTOR_IN_DEVENV)$(NATIVE),)
  RUN := ./devenv
else
  RUN :=
endif

.PHONY: build test demo configure clean golden

configure:
	$(RUN) cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo

build: configure
	$(RUN) cmake --build $(BUILD_DIR) -j $(JOBS)

test: build
	$(RUN) bash scripts/run-tests.sh $(BUILD_DIR)

demo: build
	$(RUN) $(BUILD_DIR)/tools/hipinductor-demo examples/layernorm_gelu_residual.json

golden: build
	$(RUN) bash scripts/update-golden.sh $(BUILD_DIR)

clean:
	rm -rf $(BUILD_DIR)
