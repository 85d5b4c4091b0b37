// The plan build options as one option group, shared by `convert -o X.plan` and the in-line engine
// runner of `run --plan`, so a plan is built the same way from either: --fp16/--bf16/--int8 with
// calibration, --layer-precisions, --precision-constraints, tactic timing and replay, and
// optimization profiles (--profile or Polygraphy's --trt-min/opt/max-shapes).
#pragma once

#include <onnx/onnx_pb.h>

#include <vector>

#include "options/args.h"
#include "options/data_loader_args.h"
#include "runtime/session.h"
#include "tools/plan_build.h"

namespace parity::tools {

class PlanBuildArgs {
 public:
  /// Adds the build options to the parser's current help group.
  void add_to(options::ArgParser& parser) const;
  /// True when any build option is given (a plan is asked for).
  bool any_given(const options::Args& args) const;
  /// The build the options describe (without calibration feeds: the caller knows its data).
  /// `fixed` are the --input-shapes the plan is built at: an input may not also have a profile.
  /// Bad values throw kInvalidArgument naming the option.
  PlanBuildOptions parse(const options::Args& args, const std::vector<options::InputShape>& fixed) const;
  /// After a build: writes --save-tactics and --save-timing-cache, and logs the tactic timing.
  void save_build_files(const options::Args& args, const runtime::Session& session) const;
};

/// --input-shapes fix the plan's input shapes (a static plan: kernels pack for them); a shape that
/// names no input or contradicts the model's is kInvalidArgument.
void fix_input_shapes(onnx::ModelProto& model, const std::vector<options::InputShape>& shapes);

}  // namespace parity::tools
