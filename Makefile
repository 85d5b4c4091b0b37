# Thin wrapper around CMake. `make` sets up, builds and runs the demo; `make test` runs all tests;
# `make bench` times ref, ort and opencv on the benchmark models (bench/run.sh, writes bench/results.md).
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all setup configure build demo test bench clean install

all: demo

setup:
	@scripts/setup.sh

configure: setup
	@cmake -S . -B $(BUILD_DIR) -G Ninja $(CMAKE_FLAGS) > /dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

demo: build
	@scripts/demo.sh $(BUILD_DIR)

test: build
	@cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

bench:
	@BUILD_DIR=$(BUILD_DIR) JOBS=$(JOBS) CMAKE_FLAGS="$(CMAKE_FLAGS)" bench/run.sh

install: build
	@cmake --install $(BUILD_DIR) --prefix $(or $(PREFIX),/usr/local)

clean:
	rm -rf $(BUILD_DIR)
