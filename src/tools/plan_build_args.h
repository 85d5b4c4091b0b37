// The plan build options as one option group, shared by `convert -o X.plan` and the in-line engine
// runner of `run --plan`, so a plan is built the same way from either: --fp16/--bf16/--int8 with
// calibration, --layer-precisions, --precision-constraints, tactic timing and replay, and
// optimization profiles (--profile or Polygraphy's --trt-min/opt/max-shapes).
#pragma once

#include <onnx/onnx_pb.h>

#include <optional>
#include <string>
#include <vector>

#include "options/data_loader_args.h"
#include "options/group.h"
#include "runtime/session.h"
#include "tools/plan_build.h"

namespace parity::tools {

/// What the build options say, as given; plan_build_options() reads the files they name and
/// checks what needs the model's inputs.
struct PlanBuildSettings {
  std::optional<std::string> isa;  // --isa
  bool fp16 = false;
  bool bf16 = false;
  bool int8 = false;
  std::string calibration_cache;
  std::string calibration_algorithm = "minmax";
  std::vector<std::string> layer_precisions;  // NAME:PRECISION items
  std::string precision_constraints = "prefer";
  bool time_tactics = false;
  std::string load_timing_cache;
  std::optional<std::string> save_timing_cache;
  std::optional<std::string> save_tactics;
  std::optional<std::string> load_tactics;
  std::optional<std::vector<std::string>> tactic_sources;
  std::vector<std::string> profiles;  // --profile items
  std::vector<std::string> trt_min_shapes, trt_opt_shapes, trt_max_shapes;
  /// Whether any build option (all but --isa) is given: a plan is asked for.
  bool requested = false;
};

/// The option group; add_to() puts the options in the parser's current help group.
class PlanBuildArgs : public options::Group<PlanBuildSettings> {
 public:
  PlanBuildArgs();
};

/// The build the options describe (without calibration feeds: the caller knows its data).
/// `fixed` are the --input-shapes the plan is built at: an input may not also have a profile.
/// Bad values throw kInvalidArgument naming the option.
PlanBuildOptions plan_build_options(const PlanBuildSettings& settings, const std::vector<options::InputShape>& fixed);

/// After a build: writes --save-tactics and --save-timing-cache, and logs the tactic timing.
void save_build_files(const PlanBuildSettings& settings, const runtime::Session& session);

/// --input-shapes fix the plan's input shapes (a static plan: kernels pack for them); a shape that
/// names no input or contradicts the model's is kInvalidArgument.
void fix_input_shapes(onnx::ModelProto& model, const std::vector<options::InputShape>& shapes);

}  // namespace parity::tools
