// The external check of the plan debug tools (`debug precision`, `debug build`): each candidate plan
// is saved to the iteration artifact and a command judges it, as `debug reduce --check` judges
// subgraphs (tools/debug/check_command.h): {plan} is the candidate plan, {model} the ONNX model it
// was built from; --fail-code, --ignore-fail-code and --fail-regex decide what counts as failing.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "options/args.h"
#include "runtime/session.h"
#include "tools/debug/check_command.h"

namespace parity::tools::debug {

/// Decides whether a built plan passes (true) or fails the check.
using PlanJudge = std::function<bool(const runtime::Session& plan)>;

/// Adds --check CMD... (last on the line), --iter-artifact (default `default_artifact`), --fail-code,
/// --ignore-fail-code, --fail-regex and --show-output.
void add_plan_check_options(options::ArgParser& parser, const std::string& default_artifact);

/// The command of --check, validated (nullopt without --check).
std::optional<CheckCommand> parse_plan_check(const options::Args& args);

/// A judge that saves each plan to `artifact` and runs `check` on it. `log` sees one line per check
/// (and the command's output when `show_output`).
PlanJudge plan_check_judge(CheckCommand check, std::string artifact, std::string model_path, bool show_output,
                           std::function<void(const std::string&)> log);

}  // namespace parity::tools::debug
