// Runners that fail the way third-party runtimes do (a segfault, an abort, a hang), to test
// `run --use-subprocess`. Registered only when PARITY_TEST_RUNNERS=1 is set, so they never appear
// in a user's `parity runners` or --help.
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "runners/registry.h"

namespace parity::runners {
namespace {

enum class Failure { kSegfault, kAbort, kHang };

class FailingRunner final : public Runner {
 public:
  explicit FailingRunner(Failure failure, const std::string& prefix)
      : Runner(make_runner_name(prefix)), failure_(failure) {}

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

bool enabled() {
  const char* env = std::getenv("PARITY_TEST_RUNNERS");
  return env && std::strcmp(env, "1") == 0;
}

void register_failing(const char* name, const char* flag, Failure failure, const char* what,
                      bool isolate_by_default = false) {
  RunnerRegistry::instance().add({
      .name = name,
      .flag = flag,
      .description = std::string("test-only runner that ") + what + " (PARITY_TEST_RUNNERS=1)",
      .create = [failure, name](const RunnerConfig&) { return std::make_unique<FailingRunner>(failure, name); },
      .isolate_by_default = isolate_by_default,
  });
}

const bool registered = [] {
  if (!enabled()) return false;
  register_failing("segfault", "--test-segfault", Failure::kSegfault, "dies of SIGSEGV when activated");
  register_failing("abort", "--test-abort", Failure::kAbort, "calls abort() when activated");
  register_failing("hang", "--test-hang", Failure::kHang, "never returns from activation");
  register_failing("crash-prone", "--test-crash-prone", Failure::kSegfault,
                   "dies of SIGSEGV when activated and, like opencv, runs in a subprocess by default", true);
  return true;
}();

}  // namespace
}  // namespace parity::runners
