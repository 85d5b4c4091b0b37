// The external check of the plan debug tools (`debug precision`, `debug build`): each candidate plan
// is saved to the iteration artifact and a command judges it, as `debug reduce --check` judges
// subgraphs (tools/debug/check_command.h): {plan} is the candidate plan, {model} the ONNX model it
// was built from; --fail-code, --ignore-fail-code and --fail-regex decide what counts as failing.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "options/group.h"
#include "runtime/session.h"
#include "tools/debug/check_command.h"

namespace parity::tools::debug {

/// Decides whether a built plan passes (true) or fails the check.
using PlanJudge = std::function<bool(const runtime::Session& plan)>;

/// What the external-check options say.
struct PlanCheckSettings {
  std::optional<CheckCommand> check;  // validated; nullopt without --check
  std::string iter_artifact;          // where each candidate plan is written
  bool show_output = false;
};

/// --check CMD... (last on the line), --iter-artifact (default `default_artifact`), --fail-code,
/// --ignore-fail-code, --fail-regex and --show-output. The qualifiers without --check are
/// kInvalidArgument.
class PlanCheckArgs : public options::Group<PlanCheckSettings> {
 public:
  explicit PlanCheckArgs(const std::string& default_artifact);
};

/// A judge that saves each plan to `artifact` and runs `check` on it. `log` sees one line per check
/// (and the command's output when `show_output`).
PlanJudge plan_check_judge(CheckCommand check, std::string artifact, std::string model_path, bool show_output,
                           std::function<void(const std::string&)> log);

}  // namespace parity::tools::debug
