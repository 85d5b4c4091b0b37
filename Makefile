# Thin wrapper around CMake. `make` installs and builds only what the demo needs (libparity with its
# ref and ONNX Runtime runners, the CLI) and runs it; `make test` installs the rest (peer runtimes,
# test tools and fixtures), builds everything and runs all tests;
# `make package` builds the Debian packages (CPack: parity and its peer runner modules);
# `make bench` times ref, ort and opencv on the benchmark models (bench/run.sh, writes bench/results.md);
# `make bench-load` times loading a 531 MB model to its first result, ref against ort (bench/load_time.sh).
# `make bench-precision` times fp32/fp16/bf16/int8 plans side by side (bench/precision.sh, docs/int8.md).
# `make test-sanitize` builds everything with ASan+UBSan+LSan (clang, build-asan) and runs every test;
# `make fuzz` builds the libFuzzer targets in that same tree, `make fuzz-smoke` runs each briefly.
# `make docs` writes the Doxygen reference of the public C++ API (include/parity) to build/docs/html.
# `make test-tsan` builds libparity and the concurrency tests with ThreadSanitizer (clang, build-tsan)
# and runs them (docs/concurrency.md).
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

ASAN_DIR ?= build-asan
FUZZ_SECONDS ?= 60
FUZZ_RUNS ?= 4000
# Reports fail the test (halt_on_error), LSan checks every exit; suppressions name third-party leaks.
SANITIZER_ENV = ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=0:detect_odr_violation=0 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  LSAN_OPTIONS=suppressions=$(CURDIR)/scripts/sanitizers/lsan.supp:print_suppressions=0 \
  PARITY_MAX_TENSOR_BYTES=4294967296

TSAN_DIR ?= build-tsan
# A report fails its test at once; suppressions name uninstrumented third-party code only.
TSAN_ENV = TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$(CURDIR)/scripts/sanitizers/tsan.supp:print_suppressions=0

.PHONY: all setup setup-demo configure configure-demo build build-demo build-install demo test bench bench-load bench-precision clean install package configure-asan test-sanitize fuzz fuzz-smoke \
  configure-tsan test-tsan docs

all: demo

setup:
	@scripts/setup.sh all

setup-demo:
	@scripts/setup.sh demo

configure: setup
	@cmake -S . -B $(BUILD_DIR) -G Ninja $(CMAKE_FLAGS) > /dev/null

# The same tree as `configure`; peer runner modules join it once `make test` installed their runtimes.
configure-demo: setup-demo
	@cmake -S . -B $(BUILD_DIR) -G Ninja $(CMAKE_FLAGS) > /dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# The CLI and libparity (ref and ORT runners; the peer modules whose runtimes are installed), the man
# pages and completion: what the demo, `make install` and `make package` need.
DEMO_TARGETS = parity parity_manual
build-demo: configure-demo
	@cmake --build $(BUILD_DIR) -j $(JOBS) --target $(DEMO_TARGETS)

# What `make install` and `make package` install: the demo's targets and, in a tree configured after
# `make test`'s set-up (pybind11), the Python package (CMake's parity_installable target).
build-install: configure-demo
	@cmake --build $(BUILD_DIR) -j $(JOBS) --target parity_installable

demo: build-demo
	@scripts/demo.sh $(BUILD_DIR)

test: build
	@cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

configure-asan: setup
	@cmake -S . -B $(ASAN_DIR) -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DPARITY_SANITIZE=ON -DPARITY_FUZZ=ON \
	  -DPARITY_WITH_TORCH=OFF $(CMAKE_FLAGS) > /dev/null

# Left out under the sanitizers (they run in `make test`):
# - the install and package tests (install.*, package.*): their downstream projects (find_package consumer, the
#   reshape_destroyer example, --gen-script programs) are built by the plain compiler without the
#   sanitizer runtime, so they cannot link against the instrumented libparity;
# - the LibTorch runner's tests: the sanitizer tree is built without the torch runner
#   (PARITY_WITH_TORCH=OFF above) because LibTorch 1.13's headers do not compile with clang 14 in
#   C++20 (std::vector<c10::IValue> is destroyed where IValue is still incomplete), and the two
#   `optimize` runs whose source is a TorchScript model;
# - the two PP-OCRv4 end-to-end runs, which take minutes even unsanitized (their code paths run in the
#   smaller run tests), and the two peak-memory checks, which would measure ASan's shadow memory,
#   redzones and quarantine;
# - the docs tests (docs.*): they run the documentation's commands, code paths the suite's own CLI
#   tests already cover under the sanitizers, and check text;
# - validate's MPI runs that exit cleanly (3 ranks, and the resumed run after a killed rank): Open
#   MPI's components leak and are dlclosed in MPI_Finalize, so LeakSanitizer reports leaks it can
#   neither attribute nor suppress (the same validation runs sanitized in the shard and
#   single-process tests).
SANITIZE_EXCLUDE ?= ^install\.|^package\.|^docs\.|ValidateCli.ThreeMpiRanksGiveTheSummaryOfOneProcess|ValidateCli.ARankThatDiesFailsTheRunNamingIt|TorchRunner\.|TorchRunCli\.|TorchOnnxPairs\.|Optimize.TorchScriptFixtureFromRandomData|Optimize.TorchScriptCopyOfAnOnnxSourceIsCheckedAgainstItsOutputs|Optimize.FailedExportIsRecordedAndTheSourceFormatStillRuns|RunCommand.PPOCRv4DetectionEndToEnd|RunCommand.MarkAllPeakMemoryIsFarBelowAllTensors|RunGolden.PeakMemoryStaysBelowTheGoldenFilesSize
test-sanitize: configure-asan
	@cmake --build $(ASAN_DIR) -j $(JOBS)
	@cd $(ASAN_DIR) && $(SANITIZER_ENV) ctest --output-on-failure -j $(JOBS) -E '$(SANITIZE_EXCLUDE)'

configure-tsan: setup
	@cmake -S . -B $(TSAN_DIR) -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DPARITY_TSAN=ON -DPARITY_WITH_TORCH=OFF \
	  -DPARITY_BUILD_EXAMPLES=OFF $(CMAKE_FLAGS) > /dev/null

# Only libparity, the concurrency tests (tests/**/*_concurrency_test.cpp), the test extension they
# load and the racy canary that shows the sanitizer reports races: the rest runs in `make test`.
test-tsan: configure-tsan
	@cmake --build $(TSAN_DIR) -j $(JOBS) --target parity_concurrency_tests parity_tsan_canary
	@cd $(TSAN_DIR) && $(TSAN_ENV) ctest --output-on-failure -j $(JOBS) -L concurrency

# The fuzz targets (fuzz/), built in the sanitizer tree against its libparity.
fuzz: configure-asan
	@cmake --build $(ASAN_DIR) -j $(JOBS) --target fuzz_targets

fuzz-smoke: fuzz
	@$(SANITIZER_ENV) fuzz/smoke.sh $(ASAN_DIR) $(FUZZ_SECONDS) $(FUZZ_RUNS)

bench:
	@BUILD_DIR=$(BUILD_DIR) JOBS=$(JOBS) CMAKE_FLAGS="$(CMAKE_FLAGS)" bench/run.sh

bench-load: build
	@BUILD_DIR=$(BUILD_DIR) bench/load_time.sh

bench-precision: build
	@BUILD_DIR=$(BUILD_DIR) bench/precision.sh

# `make package`: Debian packages (CPack) in $(BUILD_DIR)/packages: parity_<version>_<arch>.deb and
# one parity-runner-<name> package per peer runner module (docs/packaging.md).
package: build-install
	@cd $(BUILD_DIR) && cpack --config CPackConfig.cmake -B packages

install: build-install
	@cmake --install $(BUILD_DIR) --prefix $(or $(PREFIX),/usr/local)

# Warnings fail it (docs/Doxyfile); doxygen comes with `scripts/setup.sh all`.
docs:
	@mkdir -p $(BUILD_DIR)/docs && PARITY_DOCS_DIR=$(BUILD_DIR)/docs doxygen docs/Doxyfile && echo "$(BUILD_DIR)/docs/html/index.html"

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR) $(TSAN_DIR)
