#include "tools/debug/runner_check.h"

#include <memory>

#include "compare/comparator.h"
#include "compare/data_loader.h"
#include "core/logger.h"
#include "runners/registry.h"

namespace parity::tools::debug {

namespace {

// Raises the log threshold to critical for its lifetime unless verbose output was asked for.
class QuietLogger {
 public:
  QuietLogger() : saved_(logger().severity()) {
    if (saved_ > Severity::kVerbose) logger().set_severity(Severity::kCritical);
  }
  ~QuietLogger() { logger().set_severity(saved_); }
  QuietLogger(const QuietLogger&) = delete;
  QuietLogger& operator=(const QuietLogger&) = delete;

 private:
  Severity saved_;
};

}  // namespace

bool runner_check_fails(const RunnerCheck& check, const std::string& model_path, const std::vector<TensorMap>& feeds,
                        std::string* why) {
  try {
    std::vector<std::unique_ptr<runners::Runner>> owned;
    std::vector<runners::Runner*> raw;
    for (const auto& name : check.runners) {
      const runners::RunnerInfo* info = runners::RunnerRegistry::instance().find(name);
      PARITY_CHECK(info, kNotFound, "no runner named '", name, "'");
      owned.push_back(info->create(runners::RunnerConfig{model_path, check.runner_options}));
      raw.push_back(owned.back().get());
    }
    compare::FeedList source(feeds);
    // The candidates' own runs and comparisons would drown the reduction's progress lines; -v
    // shows them.
    QuietLogger quiet;
    const RunResults results = compare::Comparator::run(raw, source);
    bool passed = true;
    if (check.compare.validate) passed &= compare::Comparator::validate(results, true, true);
    if (results.size() >= 2) passed &= static_cast<bool>(compare::Comparator::compare_accuracy(results, check.compare.compare_func()));
    if (!passed && why) *why = "outputs differ";
    return !passed;
  } catch (const Error& e) {
    if (why) *why = e.what();
    return true;
  }
}

Status runs_on(const std::string& runner, const runners::RunnerOptions& runner_options, const std::string& model_path, const TensorMap& feed) {
  try {
    const runners::RunnerInfo* info = runners::RunnerRegistry::instance().find(runner);
    PARITY_CHECK(info, kNotFound, "no runner named '", runner, "'");
    QuietLogger quiet;
    std::unique_ptr<runners::Runner> instance = info->create(runners::RunnerConfig{model_path, runner_options});
    runners::ActiveRunner active(*instance);
    active->infer(feed);
    return Status::ok();
  } catch (const Error& e) {
    return e;
  } catch (const std::exception& e) {
    return Error(ErrorCode::kRuntime, e.what());
  }
}

}  // namespace parity::tools::debug
