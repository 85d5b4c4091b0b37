// A test-only extension module whose runners fail the way third-party runtimes do (a segfault, an
// abort, a hang), to test `run --use-subprocess`. Tests load it with PARITY_EXTENSION_PATH (or
// --extension); libparity itself holds no such runners.
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "runners/extension.h"

namespace {

using namespace parity;

enum class Failure { kSegfault, kAbort, kHang };

class FailingRunner final : public runners::Runner {
 public:
  FailingRunner(Failure failure, const std::string& prefix)
      : Runner(runners::make_runner_name(prefix)), failure_(failure) {}

 protected:
  // Fails at activation: before any output, as a runtime that crashes loading a model does.
  void activate_impl() override {
    switch (failure_) {
      case Failure::kSegfault:
        // With the default disposition: a sanitizer's (or a runtime's) SEGV handler would turn
        // the signal into an exit status, and the tests expect what a plain crash gives.
        ::signal(SIGSEGV, SIG_DFL);
        ::raise(SIGSEGV);
        break;
      case Failure::kAbort: std::abort();
      case Failure::kHang:
        for (;;) ::pause();
    }
  }
  TensorMetadata input_metadata_impl() override { return {}; }
  TensorMap infer_impl(const TensorMap&) override { return {}; }

 private:
  Failure failure_;
};

runners::RunnerInfo failing_runner(const char* name, Failure failure, bool isolate_by_default = false) {
  return {.name = name,
          .create = [failure, name](const runners::RunnerConfig&) {
            return std::make_unique<FailingRunner>(failure, name);
          },
          .isolate_by_default = isolate_by_default};
}

int init(runners::ExtensionHost* host) {
  host->add_runner(failing_runner("segfault", Failure::kSegfault));
  host->add_runner(failing_runner("abort", Failure::kAbort));
  host->add_runner(failing_runner("hang", Failure::kHang));
  host->add_runner(failing_runner("crash-prone", Failure::kSegfault, /*isolate_by_default=*/true));
  return 0;
}

const ParityExtensionRunnerDecl kRunners[] = {
    {"segfault", "--test-segfault", "test-only runner that dies of SIGSEGV when activated"},
    {"abort", "--test-abort", "test-only runner that calls abort() when activated"},
    {"hang", "--test-hang", "test-only runner that never returns from activation"},
    {"crash-prone", "--test-crash-prone",
     "test-only runner that dies of SIGSEGV when activated and, like opencv, runs in a subprocess by default"},
};

}  // namespace

PARITY_EXTENSION("failing_runners", "0.1.0", kRunners, init)
