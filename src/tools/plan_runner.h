// The in-line engine runner (`run M.onnx --plan [--fp16|--int8 ...]`), registered in plan_runner.cpp.
#pragma once

#include <cstdint>

#include "options/data_loader_args.h"

namespace parity::tools {

/// The inputs a command's data loader makes, which calibrate an int8 plan the engine runner builds
/// (Polygraphy calibrates on the data it runs): a command with a data loader stores them in the
/// runners' options (runners::RunnerOptions); without them calibration uses the loader's defaults.
struct PlanRunnerFeeds {
  options::DataLoaderOptions data;  ///< --input-shapes, --seed, --val-range, ...
  int64_t iterations = 1;           ///< --iterations: calibration batches.
};

}  // namespace parity::tools
